//! `plan FILE --current CLUSTER`: the change from the cluster as it runs now to the plan, node by node.
//!
//! Each planned node (`h100-0`) is given to a node of the current cluster with the pool's GPU model and
//! GPU count, the one whose configuration changes least (nothing, then the device plugin config only,
//! then the MIG layout, then the MIG mode). Per node the migration says what changes and what that
//! costs, from how NVIDIA's MIG manager applies a new `nvidia.com/mig.config` label:
//!
//! - **MIG mode** (MIG turned on or off on a GPU) needs a GPU reset, and with
//!   `WITH_SHUTDOWN_HOST_GPU_CLIENTS` the MIG manager stops the kubelet for it (NVIDIA/mig-parted
//!   issue 19, maintainer's answer of 2026-03-02: only for a mode change, not for a config change).
//! - **MIG layout** with the mode unchanged: no reset, but mig-parted destroys and recreates the GPU
//!   instances of every GPU whose layout differs, and the MIG manager pauses the device plugin, GPU
//!   Feature Discovery and DCGM on the node while it does (`nvidia.com/gpu.deploy.*` set to
//!   `paused-for-mig-change`, NVIDIA/mig-parted `deployments/container/reconfigure-mig.sh`; since
//!   mig-parted v0.15.0, shipped with GPU Operator 26.7.0, also the third-party GPU clients that select
//!   nodes by `nvidia.com/gpu.deploy.client`). It sets `nvidia.com/mig.config.state` to `success` or
//!   `failed` when done.
//! - NVIDIA's advice before any MIG config change is to cordon the node, let its GPU jobs finish, set
//!   the label, wait for the change, and uncordon (NVIDIA/gpu-operator issue 262): the migration cordons
//!   and drains every node whose MIG layout or device plugin sharing changes, or that runs GPU pods of
//!   workloads the plan puts elsewhere, one node per pool at a time, and says what capacity each pool
//!   keeps meanwhile.
//!
//! Whether a node's driver is affected by a vulnerability of MIG reconfiguration is the advisory data's
//! to say: the caller passes a [`DriverRisk`] per node (this crate does not read the data), and a node
//! whose driver version is unknown is [`DriverRisk::Unknown`], never assumed safe.

use crate::emit;
use crate::file::{PlanInput, Pool};
use crate::patch::Objects;
use crate::plan::{Plan, PlanNode, TENANTS_TAINT};
use gpu_trust_model::fleet::{
    ConfigSource, Fleet, GpuNode, Node, NodeFact, SharingStrategy, WorkloadKind,
};
use gpu_trust_model::labels;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

pub const SCHEMA: &str = "gpu-trust/migration/v1";

/// What the advisory data says of a node's driver when its MIG partitions are reconfigured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum DriverRisk {
    /// No advisory about MIG reconfiguration affects the node's driver.
    Clear { driver: String },
    /// Advisories about MIG reconfiguration affect the node's driver.
    Affected {
        driver: String,
        advisories: Vec<RiskAdvisory>,
    },
    /// The input does not say which driver the node runs.
    Unknown,
}

impl DriverRisk {
    /// Whether repartitioning the node needs a warning (affected, or not known to be safe).
    pub fn warns(&self) -> bool {
        !matches!(self, DriverRisk::Clear { .. })
    }
}

/// One advisory that affects a driver, with the version that fixes it on the driver's branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RiskAdvisory {
    pub id: String,
    pub summary: String,
    pub fix: Option<String>,
}

/// How a node's MIG configuration changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MigChange {
    Unchanged,
    /// Some GPU's instances change, with MIG on before and after: no reset.
    Layout,
    /// MIG is turned on or off on some GPU: a GPU reset, the kubelet may be stopped.
    Mode,
    /// The input does not say how the node's GPUs are partitioned now: treated as a mode change.
    Unknown,
}

/// How a node's device plugin sharing changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SharingChange {
    Unchanged,
    Changed,
    /// The input does not say how the node's devices are shared now.
    Unknown,
}

/// A label's value now and in the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelChange {
    pub from: Option<String>,
    pub to: Option<String>,
}

/// One node of the plan on the node of the current cluster it is given to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeChange {
    /// The node of the current cluster.
    pub node: String,
    /// The planned node it becomes (`h100-0`).
    pub role: String,
    pub pool: String,
    pub mig: MigChange,
    /// GPUs whose MIG layout or mode changes (every GPU when the current layout is unknown).
    pub changed_gpus: Vec<u32>,
    pub sharing: SharingChange,
    pub mig_config: LabelChange,
    pub device_plugin_config: LabelChange,
    /// The tenant node pool the node is tainted for.
    pub tenant_pool: String,
    /// GPU pods on the node now (`namespace/name`) that must leave it: all of them when the node is
    /// drained.
    pub pods_to_move: Vec<String>,
    /// Every pod the drain evicts, GPU or not, whoever's (empty when the node is not drained).
    pub evicts: Vec<EvictedPod>,
    /// Whether the node is cordoned and drained (else only labelled and tainted).
    pub drain: bool,
    /// Why the node is drained, one sentence each.
    pub reasons: Vec<String>,
    pub driver: DriverRisk,
}

/// A pod a node's drain evicts. The migration drains with `kubectl drain --ignore-daemonsets
/// --delete-emptydir-data`, which evicts every pod of the node except DaemonSet pods and mirror
/// pods, and deletes the data of their emptyDir volumes (Kubernetes documentation, `kubectl
/// drain`: "evicts or deletes all pods except mirror pods", "regardless it will not delete any
/// daemon set-managed pods", `--delete-emptydir-data`: "local data that will be deleted when the
/// node is drained").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictedPod {
    /// `namespace/name`.
    pub pod: String,
    /// Whether it requests a GPU.
    pub gpu: bool,
    /// Its emptyDir volumes, whose data the drain deletes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub empty_dir: Vec<String>,
}

/// The annotation the kubelet gives the API server's copy of a static pod, which a drain cannot
/// delete (k8s.io/api `core/v1`, `MirrorPodAnnotationKey`).
const MIRROR_POD: &str = "kubernetes.io/config.mirror";

/// The pods of each node that a drain evicts ([`EvictedPod`]), sorted.
fn evictable(fleet: &Fleet) -> BTreeMap<&str, Vec<EvictedPod>> {
    let mut out: BTreeMap<&str, Vec<EvictedPod>> = BTreeMap::new();
    for w in &fleet.workloads {
        let daemon = w
            .owner
            .as_deref()
            .is_some_and(|o| o.starts_with("DaemonSet/"));
        if w.kind != WorkloadKind::Pod || daemon || w.annotations.contains_key(MIRROR_POD) {
            continue;
        }
        let Some(node) = w.placement.node.and_then(|n| fleet.nodes.get(n)) else {
            continue;
        };
        out.entry(node.name.as_str()).or_default().push(EvictedPod {
            pod: format!("{}/{}", w.namespace, w.object.name),
            gpu: w.requests_gpu(),
            empty_dir: w.pod_security.empty_dirs.clone(),
        });
    }
    for pods in out.values_mut() {
        pods.sort_by(|a, b| a.pod.cmp(&b.pod));
    }
    out
}

/// A node of the current cluster whose configuration label names a config that the migration's
/// ConfigMaps define again with other contents. The ConfigMaps and the ClusterPolicy patch are applied
/// before the first step, for the whole cluster: the MIG manager or the device plugin could then give
/// the node the new contents under its old label before it is cordoned and drained, if at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigClash {
    pub node: String,
    /// The label: `nvidia.com/mig.config` or `nvidia.com/device-plugin.config`.
    pub label: String,
    /// The config it names now, which the plan defines with other contents for this node.
    pub config: String,
}

/// A node of the current cluster with the GPUs of a pool that the plan does not use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleasedNode {
    pub node: String,
    pub pool: String,
}

/// A pool whose planned nodes the current cluster cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shortfall {
    pub pool: String,
    pub model: String,
    pub gpus_per_node: u32,
    pub planned: u32,
    /// Nodes of the current cluster with the pool's GPU model and count.
    pub found: u32,
}

/// What a pool offers: nodes schedulable, whole GPUs and MIG instances by profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolCapacity {
    pub pool: String,
    pub nodes: u32,
    pub whole_gpus: u32,
    pub instances: BTreeMap<String, u32>,
}

/// One step: at most one node of each pool is cordoned, drained, given its labels and uncordoned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub number: u32,
    pub nodes: Vec<String>,
    /// What each pool keeps while the step's nodes are out (nodes done before it in their planned
    /// state, the others as they run now).
    pub capacity: Vec<PoolCapacity>,
}

/// Where a workload runs now and where the plan puts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadMove {
    pub workload: String,
    pub namespace: String,
    /// The kind of its object in the current cluster; `None` when the cluster does not hold it.
    pub kind: Option<String>,
    /// GPU resources its pods request now.
    pub from_resources: Vec<String>,
    pub to_resource: Option<String>,
    /// Nodes its GPU pods run on now.
    pub from_nodes: Vec<String>,
    /// Nodes of the current cluster the plan puts its replicas on.
    pub to_nodes: Vec<String>,
}

/// A pod patch as the script applies it: compact JSON, with the check to run first when the
/// container name is assumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchCommand {
    pub namespace: String,
    pub workload: String,
    pub kind: String,
    pub patch: String,
    pub check: Option<String>,
}

/// What the script applies besides node labels: the configs and the pod patches.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScriptParts {
    /// The ConfigMaps, as YAML documents.
    pub config_maps: Vec<String>,
    pub operator_namespace: String,
    /// The ClusterPolicy merge patch, compact JSON.
    pub cluster_policy_patch: String,
    pub patches: Vec<PatchCommand>,
    /// Planned labels per current node.
    pub labels: BTreeMap<String, BTreeMap<String, String>>,
}

/// The migration from the current cluster to a plan: the `gpu-trust/migration/v1` wire format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Migration {
    pub schema: &'static str,
    /// Planned nodes by pool and role.
    pub nodes: Vec<NodeChange>,
    pub released: Vec<ReleasedNode>,
    pub shortfalls: Vec<Shortfall>,
    pub steps: Vec<Step>,
    pub capacity_now: Vec<PoolCapacity>,
    pub capacity_planned: Vec<PoolCapacity>,
    pub workloads: Vec<WorkloadMove>,
    /// Nodes whose config label the migration's ConfigMaps would redefine under them.
    pub config_clashes: Vec<ConfigClash>,
    /// Not part of the wire format: what the script applies.
    #[serde(skip)]
    pub script: ScriptParts,
}

impl Migration {
    /// Whether the current cluster holds every planned node.
    pub fn feasible(&self) -> bool {
        self.shortfalls.is_empty()
    }

    /// Whether applying the configs leaves every node's current config as it is until its step.
    pub fn safe_to_apply(&self) -> bool {
        self.config_clashes.is_empty()
    }

    /// Nodes repartitioned while their driver is affected or unknown.
    pub fn warned(&self) -> impl Iterator<Item = &NodeChange> {
        self.nodes
            .iter()
            .filter(|n| n.mig != MigChange::Unchanged && n.driver.warns())
    }
}

/// MIG profile counts of one GPU; `None` for MIG disabled.
type Layout = Option<BTreeMap<String, u32>>;

fn planned_layout(node: &PlanNode, index: u32) -> Layout {
    let g = node.gpus.iter().find(|g| g.index == index)?;
    if g.mig.is_empty() {
        return None;
    }
    let mut counts = BTreeMap::new();
    for m in &g.mig {
        *counts.entry(m.profile.clone()).or_insert(0) += 1;
    }
    Some(counts)
}

/// The current layout of each GPU index, or `None` when the input does not say.
fn current_layouts(gpu: &GpuNode, count: u32) -> Option<Vec<Layout>> {
    if gpu.is_unknown(NodeFact::MigLayout) || gpu.mig_source == Some(ConfigSource::Unknown) {
        return None;
    }
    (0..count)
        .map(|i| {
            let g = gpu.gpus.iter().find(|g| g.index == i)?;
            Some(g.mig_enabled.then(|| {
                let mut counts = BTreeMap::new();
                for s in &g.mig {
                    *counts.entry(s.profile.clone()).or_insert(0) += 1;
                }
                counts
            }))
        })
        .collect()
}

fn mig_change(current: &GpuNode, planned: &PlanNode) -> (MigChange, Vec<u32>) {
    let all: Vec<u32> = (0..planned.gpu_count).collect();
    let Some(now) = current_layouts(current, planned.gpu_count) else {
        return (MigChange::Unknown, all);
    };
    let mut change = MigChange::Unchanged;
    let mut gpus = Vec::new();
    for (i, before) in (0..planned.gpu_count).zip(now) {
        let after = planned_layout(planned, i);
        if before == after {
            continue;
        }
        gpus.push(i);
        change = change.max(if before.is_some() == after.is_some() {
            MigChange::Layout
        } else {
            MigChange::Mode
        });
    }
    (change, gpus)
}

fn sharing_change(current: &GpuNode, planned: &PlanNode) -> SharingChange {
    if current.is_unknown(NodeFact::SharingConfig)
        || current.sharing.source == ConfigSource::Unknown
    {
        return SharingChange::Unknown;
    }
    let shared: BTreeMap<String, u32> = current
        .sharing
        .replicas
        .iter()
        .filter(|(_, r)| **r > 1)
        .map(|(k, r)| (k.clone(), *r))
        .collect();
    let strategy = current.mig_strategy.as_str();
    let same_sharing = (current.sharing.strategy == planned.sharing.strategy
        && shared == planned.sharing.resources)
        || (current.sharing.strategy == SharingStrategy::None
            && shared.is_empty()
            && planned.sharing.resources.is_empty());
    // The MIG strategy matters only where MIG is on: with it off, `none` and `mixed` advertise alike.
    let mig_on = current.mig_enabled() || planned.gpus.iter().any(|g| !g.mig.is_empty());
    if same_sharing && (!mig_on || strategy == emit::node_mig_strategy(planned)) {
        SharingChange::Unchanged
    } else {
        SharingChange::Changed
    }
}

fn capacity_of(layouts: &[Layout]) -> (u32, BTreeMap<String, u32>) {
    let mut whole = 0;
    let mut instances = BTreeMap::new();
    for l in layouts {
        match l {
            None => whole += 1,
            Some(c) => {
                for (p, n) in c {
                    *instances.entry(p.clone()).or_insert(0) += n;
                }
            }
        }
    }
    (whole, instances)
}

/// The scheduled GPU pods of the current cluster, by node: `(namespace, pod name, owner name)`.
fn gpu_pods(fleet: &Fleet) -> PodsByNode {
    let mut out: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for w in &fleet.workloads {
        if w.kind != WorkloadKind::Pod || !w.requests_gpu() {
            continue;
        }
        let Some(node) = w.placement.node.and_then(|n| fleet.nodes.get(n)) else {
            continue;
        };
        let owner = w
            .owner
            .as_deref()
            .map(|o| o.split_once('/').map_or(o, |(_, n)| n).to_string());
        out.entry(node.name.clone()).or_default().push((
            w.namespace.clone(),
            w.object.name.clone(),
            owner,
        ));
    }
    for pods in out.values_mut() {
        pods.sort();
    }
    out
}

/// Whether a pod belongs to the workload `name`: its owner (a ReplicaSet `name-<hash>`, a
/// StatefulSet or Job `name`) or, without an owner, its own name says so.
fn pod_of(pod: &str, owner: Option<&str>, name: &str) -> bool {
    let of = |n: &str| n == name || n.strip_prefix(name).is_some_and(|r| r.starts_with('-'));
    match owner {
        Some(o) => of(o),
        None => of(pod),
    }
}

/// The cost of giving a planned node to a current node: lower is less disruptive.
fn cost(current: &GpuNode, planned: &PlanNode) -> (MigChange, SharingChange) {
    (
        mig_change(current, planned).0,
        sharing_change(current, planned),
    )
}

/// The scheduled GPU pods of each current node: `(namespace, pod name, owner name)`.
type PodsByNode = BTreeMap<String, Vec<(String, String, Option<String>)>>;

/// Computes the migration from `current` to `plan`. `risks` says per current node (by name) what the
/// advisory data says of its driver; a node it leaves out is [`DriverRisk::Unknown`].
pub fn migrate(
    plan: &Plan,
    input: &PlanInput,
    current: &Fleet,
    risks: &BTreeMap<String, DriverRisk>,
) -> Migration {
    let pods = gpu_pods(current);
    let (given, released, shortfalls) = pair_nodes(plan, input, current);
    let mut evicted = evictable(current);
    let mut labels_by_node = BTreeMap::new();
    let mut nodes: Vec<NodeChange> = Vec::new();
    for planned in &plan.nodes {
        let Some(node) = given.get(&planned.name) else {
            continue;
        };
        let Some(gpu) = &node.gpu else { continue };
        let on_node = pods.get(&node.name).map(Vec::as_slice).unwrap_or(&[]);
        let mut change = node_change(input, planned, node, gpu, on_node);
        if change.drain {
            change.evicts = evicted.remove(node.name.as_str()).unwrap_or_default();
        }
        change.driver = risks
            .get(&node.name)
            .cloned()
            .unwrap_or(DriverRisk::Unknown);
        labels_by_node.insert(node.name.clone(), emit::node_labels(planned));
        nodes.push(change);
    }
    let (steps, capacity_now, capacity_planned) = steps(plan, input, &given, &nodes);
    let objects = Objects::from_fleet(current);
    Migration {
        schema: SCHEMA,
        released,
        shortfalls,
        steps,
        capacity_now,
        capacity_planned,
        workloads: workload_moves(plan, &objects, &pods, &given),
        config_clashes: clashes(plan, input, current),
        script: script(plan, input, &objects, labels_by_node),
        nodes,
    }
}

/// Step 1: each planned node (role) given to a current node of its pool, the least disruptive pairs
/// first; the current nodes of a pool left over are released, and a pool with too few is a
/// shortfall.
fn pair_nodes<'f>(
    plan: &Plan,
    input: &PlanInput,
    current: &'f Fleet,
) -> (
    BTreeMap<String, &'f Node>,
    Vec<ReleasedNode>,
    Vec<Shortfall>,
) {
    let mut released = Vec::new();
    let mut shortfalls = Vec::new();
    let mut given: BTreeMap<String, &Node> = BTreeMap::new();
    for pool in &input.pools {
        let roles: Vec<&PlanNode> = plan.nodes.iter().filter(|n| n.pool == pool.name).collect();
        let candidates: Vec<&Node> = current
            .nodes
            .iter()
            .filter(|n| n.gpu.as_ref().is_some_and(|g| in_pool(g, pool)))
            .collect();
        if candidates.len() < roles.len() {
            shortfalls.push(Shortfall {
                pool: pool.name.clone(),
                model: pool.model.id.to_string(),
                gpus_per_node: pool.gpus_per_node,
                planned: roles.len() as u32,
                found: candidates.len() as u32,
            });
            continue;
        }
        // Least disruptive pairs first; names break ties, so the result is the same on every run.
        let mut pairs = Vec::new();
        for r in &roles {
            for c in &candidates {
                if let Some(g) = &c.gpu {
                    pairs.push((cost(g, r), r.name.as_str(), c.name.as_str()));
                }
            }
        }
        pairs.sort();
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        for (_, role, node) in pairs {
            if given.contains_key(role) || taken.contains(node) {
                continue;
            }
            if let Some(n) = candidates.iter().find(|c| c.name == node) {
                given.insert(role.to_string(), n);
                taken.insert(node);
            }
        }
        for c in &candidates {
            if !taken.contains(c.name.as_str()) {
                released.push(ReleasedNode {
                    node: c.name.clone(),
                    pool: pool.name.clone(),
                });
            }
        }
    }
    (given, released, shortfalls)
}

/// Step 2: what changes on `node` (whose GPUs are `gpu` and GPU pods `on_node`) to make it the planned
/// node, and why it is drained; the pods it evicts and its driver are the caller's to fill in.
fn node_change(
    input: &PlanInput,
    planned: &PlanNode,
    node: &Node,
    gpu: &GpuNode,
    on_node: &[(String, String, Option<String>)],
) -> NodeChange {
    let (mig, changed_gpus) = mig_change(gpu, planned);
    let sharing = sharing_change(gpu, planned);
    let here: BTreeSet<&str> = planned
        .gpus
        .iter()
        .flat_map(|g| &g.assignments)
        .map(|a| a.workload.as_str())
        .collect();
    let foreign = on_node
        .iter()
        .filter(|(ns, pod, owner)| {
            !input.workloads.iter().any(|w| {
                w.namespace == *ns
                    && here.contains(w.name.as_str())
                    && pod_of(pod, owner.as_deref(), &w.name)
            })
        })
        .count();
    let mut reasons = Vec::new();
    match mig {
        MigChange::Unchanged => {}
        MigChange::Layout => reasons.push(format!(
            "the MIG instances of {} are destroyed and recreated",
            gpu_list(&changed_gpus)
        )),
        MigChange::Mode => reasons.push(format!(
            "MIG is turned {} on {}: a GPU reset, and the MIG manager may stop the kubelet",
            mode_direction(gpu, planned, &changed_gpus),
            gpu_list(&changed_gpus)
        )),
        MigChange::Unknown => reasons.push(
            "the input does not say how its GPUs are partitioned now: a MIG mode change may be needed"
                .to_string(),
        ),
    }
    match sharing {
        SharingChange::Unchanged => {}
        SharingChange::Changed => reasons.push("its device plugin sharing changes".to_string()),
        SharingChange::Unknown => {
            reasons.push("the input does not say how its devices are shared now".to_string())
        }
    }
    if foreign > 0 {
        reasons.push(format!(
            "it runs GPU pods the plan puts elsewhere ({foreign})"
        ));
    }
    let drain = !reasons.is_empty();
    let pods_to_move = if drain {
        on_node
            .iter()
            .map(|(ns, pod, _)| format!("{ns}/{pod}"))
            .collect()
    } else {
        Vec::new()
    };
    NodeChange {
        node: node.name.clone(),
        role: planned.name.clone(),
        pool: planned.pool.clone(),
        mig,
        changed_gpus,
        sharing,
        mig_config: LabelChange {
            from: node.labels.get(labels::MIG_CONFIG).cloned(),
            to: planned.mig_config.clone(),
        },
        device_plugin_config: LabelChange {
            from: node.labels.get(labels::DEVICE_PLUGIN_CONFIG).cloned(),
            to: Some(planned.device_plugin_config.clone()),
        },
        tenant_pool: planned.tenant_pool.clone(),
        pods_to_move,
        evicts: Vec::new(),
        drain,
        reasons,
        driver: DriverRisk::Unknown,
    }
}

/// Step 3: the steps (the k-th drained node of every pool in step k, each with what its pools keep
/// meanwhile), and each pool's capacity now and once planned.
fn steps(
    plan: &Plan,
    input: &PlanInput,
    given: &BTreeMap<String, &Node>,
    nodes: &[NodeChange],
) -> (Vec<Step>, Vec<PoolCapacity>, Vec<PoolCapacity>) {
    let role_of: BTreeMap<&str, &PlanNode> =
        plan.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    // Layouts of each planned node's current node, now and planned, for the capacity.
    let layouts_now: BTreeMap<&str, Vec<Layout>> = nodes
        .iter()
        .filter_map(|c| {
            let planned = role_of.get(c.role.as_str())?;
            let gpu = given.get(&c.role)?.gpu.as_ref()?;
            let now = current_layouts(gpu, planned.gpu_count)
                // Unknown now: count nothing rather than guess.
                .unwrap_or_default();
            Some((c.node.as_str(), now))
        })
        .collect();
    let layouts_planned: BTreeMap<&str, Vec<Layout>> = nodes
        .iter()
        .filter_map(|c| {
            let planned = role_of.get(c.role.as_str())?;
            Some((
                c.node.as_str(),
                (0..planned.gpu_count)
                    .map(|i| planned_layout(planned, i))
                    .collect(),
            ))
        })
        .collect();
    let capacity = |done: &BTreeSet<&str>, out: &BTreeSet<&str>| -> Vec<PoolCapacity> {
        input
            .pools
            .iter()
            .filter(|p| nodes.iter().any(|n| n.pool == p.name))
            .map(|p| {
                let mut all: Vec<Layout> = Vec::new();
                let mut count = 0;
                for n in nodes
                    .iter()
                    .filter(|n| n.pool == p.name && !out.contains(n.node.as_str()))
                {
                    count += 1;
                    let src = if done.contains(n.node.as_str()) {
                        &layouts_planned
                    } else {
                        &layouts_now
                    };
                    all.extend(src.get(n.node.as_str()).cloned().unwrap_or_default());
                }
                let (whole_gpus, instances) = capacity_of(&all);
                PoolCapacity {
                    pool: p.name.clone(),
                    nodes: count,
                    whole_gpus,
                    instances,
                }
            })
            .collect()
    };
    let mut per_pool: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for n in nodes.iter().filter(|n| n.drain) {
        let pi = input
            .pools
            .iter()
            .position(|p| p.name == n.pool)
            .unwrap_or(0);
        per_pool.entry(pi).or_default().push(n.node.as_str());
    }
    let rounds = per_pool.values().map(Vec::len).max().unwrap_or(0);
    let mut done: BTreeSet<&str> = nodes
        .iter()
        .filter(|n| !n.drain)
        .map(|n| n.node.as_str())
        .collect();
    let mut steps = Vec::new();
    for k in 0..rounds {
        let out: BTreeSet<&str> = per_pool
            .values()
            .filter_map(|v| v.get(k).copied())
            .collect();
        steps.push(Step {
            number: k as u32 + 1,
            nodes: per_pool
                .values()
                .filter_map(|v| v.get(k).map(|s| s.to_string()))
                .collect(),
            capacity: capacity(&done, &out),
        });
        done.extend(out);
    }
    let none = BTreeSet::new();
    let all_done: BTreeSet<&str> = nodes.iter().map(|n| n.node.as_str()).collect();
    (steps, capacity(&none, &none), capacity(&all_done, &none))
}

/// Step 4: where each placed workload runs now (its pods' nodes and the GPU resources its template
/// asks for) and where the plan puts it.
fn workload_moves(
    plan: &Plan,
    objects: &Objects,
    pods: &PodsByNode,
    given: &BTreeMap<String, &Node>,
) -> Vec<WorkloadMove> {
    let mut workloads = Vec::new();
    for w in plan.workloads.iter().filter(|w| w.placed > 0) {
        let object = objects
            .templates
            .get(&(w.namespace.clone(), w.name.clone()));
        let from_resources: BTreeSet<String> = object
            .map(|o| {
                o.containers
                    .iter()
                    .flat_map(|(_, r)| r.iter().cloned())
                    .collect()
            })
            .unwrap_or_default();
        let from_nodes: BTreeSet<String> = pods
            .iter()
            .filter(|(_, ps)| {
                ps.iter().any(|(ns, pod, owner)| {
                    *ns == w.namespace && pod_of(pod, owner.as_deref(), &w.name)
                })
            })
            .map(|(n, _)| n.clone())
            .collect();
        let to_nodes: BTreeSet<String> = plan
            .nodes
            .iter()
            .filter(|n| {
                n.gpus
                    .iter()
                    .flat_map(|g| &g.assignments)
                    .any(|a| a.workload == w.name)
            })
            .filter_map(|n| given.get(&n.name).map(|n| n.name.clone()))
            .collect();
        workloads.push(WorkloadMove {
            workload: w.name.clone(),
            namespace: w.namespace.clone(),
            kind: object.map(|o| o.kind.clone()),
            from_resources: from_resources.into_iter().collect(),
            to_resource: w.resource.clone(),
            from_nodes: from_nodes.into_iter().collect(),
            to_nodes: to_nodes.into_iter().collect(),
        });
    }
    workloads
}

/// Step 5: what the script applies: the ConfigMaps, the ClusterPolicy patch, the workloads' patches
/// and each node's labels.
fn script(
    plan: &Plan,
    input: &PlanInput,
    objects: &Objects,
    labels: BTreeMap<String, BTreeMap<String, String>>,
) -> ScriptParts {
    let yaml = |v: &serde_json::Value| serde_saphyr::to_string(v).unwrap_or_default();
    let patches = emit::pod_patches(plan, input, objects)
        .into_iter()
        .filter_map(|p| {
            Some(PatchCommand {
                kind: p.kind.clone()?.to_ascii_lowercase(),
                namespace: p.namespace,
                workload: p.workload,
                patch: p.patch.to_string(),
                check: p.check.map(|c| c.to_string()),
            })
        })
        .collect();
    ScriptParts {
        config_maps: vec![
            yaml(&emit::mig_config_map(plan, input)),
            yaml(&emit::device_plugin_config_map(plan, input)),
        ],
        operator_namespace: input.operator.namespace.clone(),
        cluster_policy_patch: emit::cluster_policy_patch(input).to_string(),
        patches,
        labels,
    }
}

/// Current nodes whose `nvidia.com/mig.config` or `nvidia.com/device-plugin.config` label names a
/// config the plan defines (`gpu-trust-mig-1`, `time-slicing-2`: the names of an earlier plan) with
/// contents other than what the node has now. A name the plan defines with the node's current
/// contents (a planned node of the node's GPU model and count with that label, whose layout or
/// sharing equals the node's) is no clash; nor are `all-disabled` and `exclusive`, whose contents
/// never change. A node whose current contents are unknown clashes: they cannot be shown equal.
fn clashes(plan: &Plan, input: &PlanInput, current: &Fleet) -> Vec<ConfigClash> {
    let fixed = [emit::ALL_DISABLED, emit::EXCLUSIVE_CONFIG];
    // Per label: the config a planned node names with it, and whether a current node already has
    // that planned node's contents.
    type NameOf = fn(&PlanNode) -> Option<&str>;
    type Same = fn(&GpuNode, &PlanNode) -> bool;
    let checks: [(&str, NameOf, Same); 2] = [
        (
            labels::MIG_CONFIG,
            |p| p.mig_config.as_deref(),
            |g, p| mig_change(g, p).0 == MigChange::Unchanged,
        ),
        (
            labels::DEVICE_PLUGIN_CONFIG,
            |p| Some(p.device_plugin_config.as_str()),
            |g, p| sharing_change(g, p) == SharingChange::Unchanged,
        ),
    ];
    let mut out = Vec::new();
    for node in &current.nodes {
        let Some(gpu) = &node.gpu else { continue };
        for (label, name_of, same) in checks {
            let Some(config) = node.labels.get(label) else {
                continue;
            };
            if fixed.contains(&config.as_str()) {
                continue;
            }
            let mut defining = plan
                .nodes
                .iter()
                .filter(|p| name_of(p) == Some(config.as_str()))
                .peekable();
            if defining.peek().is_none() {
                continue;
            }
            let kept = defining.any(|p| {
                input
                    .pools
                    .iter()
                    .any(|pool| pool.name == p.pool && in_pool(gpu, pool))
                    && same(gpu, p)
            });
            if !kept {
                out.push(ConfigClash {
                    node: node.name.clone(),
                    label: label.to_string(),
                    config: config.clone(),
                });
            }
        }
    }
    out
}

/// Whether a node's GPUs are those of `pool`: its model, as many per node.
fn in_pool(gpu: &GpuNode, pool: &Pool) -> bool {
    gpu.model.as_deref() == Some(pool.model.id) && gpu.count == pool.gpus_per_node
}

/// `on` or `off`, or `on and off` when GPUs go both ways.
fn mode_direction(current: &GpuNode, planned: &PlanNode, gpus: &[u32]) -> &'static str {
    let (mut on, mut off) = (false, false);
    for &i in gpus {
        let before = current
            .gpus
            .iter()
            .find(|g| g.index == i)
            .is_some_and(|g| g.mig_enabled);
        let after = planned_layout(planned, i).is_some();
        on |= !before && after;
        off |= before && !after;
    }
    match (on, off) {
        (true, true) => "on and off",
        (false, true) => "off",
        _ => "on",
    }
}

fn gpu_list(gpus: &[u32]) -> String {
    let list: Vec<String> = gpus.iter().map(u32::to_string).collect();
    format!(
        "GPU{} {}",
        if gpus.len() == 1 { "" } else { "s" },
        list.join(", ")
    )
}

/// The taint the plan gives a node of tenant pool `tenants`, as `kubectl taint` takes it.
pub fn taint_of(tenants: &str) -> String {
    format!("{TENANTS_TAINT}={tenants}:NoSchedule")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file;
    use crate::{snapshot, solve};
    use gpu_trust_policy::Date;

    const POLICY: &str = "policy:\n  tenants:\n    - {name: search, namespaces: [search]}\n    - {name: ads, namespaces: [ads]}\n  trust:\n    default: none\n";

    fn input(workloads: &str, nodes: u32) -> PlanInput {
        let text = format!(
            "apiVersion: gpu-trust/v1\nkind: Plan\n{POLICY}inventory:\n  - {{pool: h100, model: H100-SXM5-80GB, gpusPerNode: 2, nodes: {nodes}, driverVersion: 580.95.05}}\nworkloads:\n{workloads}"
        );
        let plan_file = file::parse(&text, "plan.yaml").unwrap();
        let file::PolicySource::Inline { text: policy } = &plan_file.policy else {
            unreachable!()
        };
        let policy = gpu_trust_policy::parse(policy, "plan.yaml").unwrap();
        plan_file
            .resolve(&policy, Date::parse("2026-12-01").unwrap())
            .unwrap()
    }

    /// The cluster a plan makes, read back by ingest as a current cluster.
    fn cluster_of(workloads: &str, nodes: u32) -> Fleet {
        let i = input(workloads, nodes);
        let plan = solve(&i);
        let ingested = gpu_trust_ingest::ingest_text(&snapshot(&plan, &i), "current.yaml");
        assert!(
            ingested.diagnostics.iter().all(|d| !d.is_error()),
            "{:?}",
            ingested.diagnostics
        );
        ingested.fleet
    }

    const SMALL: &str =
        "  - {name: chat, tenant: search, kind: inference, replicas: 7, peakMemory: 9GiB}\n";
    const LARGER: &str =
        "  - {name: chat, tenant: search, kind: inference, replicas: 2, peakMemory: 35GiB}\n";
    const MIXED: &str = "  - {name: chat, tenant: search, kind: inference, replicas: 7, peakMemory: 9GiB}\n  - {name: rank, tenant: ads, kind: inference, replicas: 2, peakMemory: 9GiB}\n";
    const TRAINING: &str = "  - {name: train, tenant: search, kind: training, replicas: 1, gpus: 2}\n  - {name: train2, tenant: ads, kind: training, replicas: 1, gpus: 2}\n";

    fn migration(from: &str, to: &str) -> Migration {
        let fleet = cluster_of(from, 2);
        let i = input(to, 2);
        let plan = solve(&i);
        migrate(&plan, &i, &fleet, &BTreeMap::new())
    }

    #[test]
    fn the_plan_itself_changes_nothing() {
        let m = migration(SMALL, SMALL);
        assert!(m.feasible());
        assert!(m.nodes.iter().all(|n| n.mig == MigChange::Unchanged
            && n.sharing == SharingChange::Unchanged
            && !n.drain));
        assert!(m.steps.is_empty());
        assert_eq!(m.capacity_now, m.capacity_planned);
        // The same names with the same contents: applying the configs changes no node.
        assert!(m.safe_to_apply(), "{:?}", m.config_clashes);
    }

    #[test]
    fn an_earlier_plans_config_name_with_other_contents_is_a_clash() {
        // Both plans name their one MIG layout `gpu-trust-mig-1`: 7 x 1g.10gb now, 2 x 3g.40gb
        // planned. Applying the new ConfigMap would give the node the new layout under its old
        // label before its step drains it.
        let m = migration(SMALL, LARGER);
        assert_eq!(m.nodes[0].mig_config.from, m.nodes[0].mig_config.to);
        assert!(!m.safe_to_apply());
        assert_eq!(
            m.config_clashes,
            vec![ConfigClash {
                node: m.nodes[0].node.clone(),
                label: labels::MIG_CONFIG.to_string(),
                config: m.nodes[0].mig_config.from.clone().unwrap_or_default(),
            }]
        );
    }

    #[test]
    fn another_layout_with_mig_on_is_a_layout_change() {
        let m = migration(SMALL, LARGER);
        let n = &m.nodes[0];
        assert_eq!(n.mig, MigChange::Layout, "{n:?}");
        assert_eq!(n.changed_gpus, vec![0]);
        assert!(n.drain);
        assert_eq!(m.steps.len(), 1);
        // The step takes the pool's one node out: nothing is left while it runs.
        assert_eq!(m.steps[0].capacity[0].nodes, 0);
        assert_eq!(m.capacity_planned[0].instances.get("3g.40gb"), Some(&2));
        assert_eq!(m.capacity_now[0].instances.get("1g.10gb"), Some(&7));
    }

    #[test]
    fn whole_gpus_to_mig_is_a_mode_change_and_one_node_at_a_time() {
        let m = migration(TRAINING, SMALL);
        // The two training nodes: one becomes the MIG node, the other is released.
        assert_eq!(m.nodes.len(), 1);
        assert_eq!(m.nodes[0].mig, MigChange::Mode);
        assert_eq!(m.released.len(), 1);
        assert!(
            m.nodes[0].reasons[0].contains("turned on"),
            "{:?}",
            m.nodes[0]
        );
        // The training pods on it run workloads the plan does not place there.
        assert!(!m.nodes[0].pods_to_move.is_empty());
        assert_eq!(m.steps.len(), 1);

        let back = migration(MIXED, TRAINING);
        assert_eq!(back.nodes.len(), 2);
        assert!(
            back.nodes.iter().all(|n| n.mig == MigChange::Mode),
            "{back:?}"
        );
        // One node per pool per step: the capacity of each step counts the other node.
        assert_eq!(back.steps.len(), 2);
        for s in &back.steps {
            assert_eq!(s.nodes.len(), 1);
            assert_eq!(s.capacity[0].nodes, 1);
        }
        // The second step sees the first node in its planned state: two whole GPUs, no instance.
        assert_eq!(back.steps[1].capacity[0].whole_gpus, 2);
        assert!(back.steps[1].capacity[0].instances.is_empty());
    }

    #[test]
    fn too_few_nodes_is_a_shortfall_and_unknown_drivers_stay_unknown() {
        let fleet = cluster_of(SMALL, 1);
        let i = input(TRAINING, 2);
        let plan = solve(&i);
        let m = migrate(&plan, &i, &fleet, &BTreeMap::new());
        assert!(!m.feasible());
        assert_eq!(m.shortfalls[0].found, 1);

        let m = migration(TRAINING, SMALL);
        assert_eq!(m.nodes[0].driver, DriverRisk::Unknown);
        assert_eq!(m.warned().count(), 1);
    }

    /// A drain evicts every pod of the node, not only the GPU pods the plan moves: another team's
    /// CPU pod is listed with the emptyDir data the drain deletes; DaemonSet pods and mirror pods,
    /// which a drain leaves, are not.
    #[test]
    fn a_drain_lists_every_pod_it_evicts() {
        let i = input(SMALL, 1);
        let plan = solve(&i);
        let text = snapshot(&plan, &i);
        let node = gpu_trust_ingest::ingest_text(&text, "current.yaml")
            .fleet
            .nodes[0]
            .name
            .clone();
        let pod = |ns: &str, name: &str, meta: &str, volumes: &str| {
            format!("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {ns}\n{meta}spec:\n  nodeName: {node}\n  containers:\n  - {{name: c, image: busybox}}\n{volumes}")
        };
        let mut text = text;
        text.push_str(&pod(
            "ads",
            "etl-0",
            "  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: etl, uid: u1, controller: true}]\n",
            "  volumes:\n  - {name: scratch, emptyDir: {}}\n",
        ));
        text.push_str(&pod(
            "kube-system",
            "node-exporter-x1",
            "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: node-exporter, uid: u2, controller: true}]\n",
            "",
        ));
        text.push_str(&pod(
            "kube-system",
            "etcd-static",
            "  annotations: {kubernetes.io/config.mirror: abc}\n",
            "",
        ));
        let fleet = gpu_trust_ingest::ingest_text(&text, "current.yaml").fleet;
        let to = input(LARGER, 1);
        let m = migrate(&solve(&to), &to, &fleet, &BTreeMap::new());
        let n = &m.nodes[0];
        assert!(n.drain, "{n:?}");
        let etl = n
            .evicts
            .iter()
            .find(|p| p.pod == "ads/etl-0")
            .expect("the CPU pod");
        assert!(!etl.gpu);
        assert_eq!(etl.empty_dir, ["scratch"]);
        assert!(n.evicts.iter().all(|p| !p.pod.starts_with("kube-system/")));
        for gpu in &n.pods_to_move {
            assert!(n.evicts.iter().any(|p| &p.pod == gpu && p.gpu), "{gpu}");
        }
        assert_eq!(n.evicts.len(), n.pods_to_move.len() + 1);
    }

    #[test]
    fn pods_belong_to_workloads_by_owner_or_name() {
        assert!(pod_of("chat-7d9f-abcde", Some("chat-7d9f"), "chat"));
        assert!(!pod_of("chatter-0", None, "chat"));
        assert!(pod_of("chat-0", None, "chat"));
    }
}
