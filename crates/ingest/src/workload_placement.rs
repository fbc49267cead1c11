//! Placing the workloads read on the fleet's nodes, the last step of ingestion: each workload gets
//! the DRA claims it uses, the set of nodes its constraints permit, the devices schedulers recorded
//! for it, and, when it is scheduled, its node and the devices of that node it may be using. Pods
//! scheduled on a node the input does not hold are counted per node and reported as unresolved, as
//! are extended resources (KEP-5004) that nothing in the input explains and, on GPU nodes, GPUs
//! asked for in a way no mechanism of the model maps.

use crate::dra::{self, ClaimDraft};
use crate::env;
use crate::nodes::{self, NodeDraft};
use crate::placement::{Constraints, NodeSets};
use crate::records::{self, Records};
use gpu_trust_model::fleet::{
    Allocation, DeviceId, DeviceSlot, DraClaimUse, GpuNode, MigStrategy, Node, NodeId,
    PhysicalDevice, RecordedDevice, ResourceClaimInfo, Unresolved, UnresolvedKind, Workload,
    WorkloadKind,
};
use gpu_trust_model::isolation::{self as iso, Mechanism};
use gpu_trust_model::ObjectRef;
use std::collections::{BTreeMap, BTreeSet};

/// A workload read from a Pod or a template, before nodes are known.
pub(crate) struct WorkloadDraft {
    pub workload: Workload,
    pub node_name: Option<String>,
    pub constraints: Constraints,
    pub claims: Vec<(String, Option<String>, Option<String>)>,
    /// What schedulers recorded on the pod.
    pub records: Records,
    /// A pod's `status.extendedResourceClaimStatus`.
    pub extended: Option<dra::ExtendedStatus>,
    /// The ResourceClaims made for a pod from its templates (`status.resourceClaimStatuses`).
    pub generated: Vec<String>,
    /// What its containers' environments take from ConfigMaps and Secrets, by container index.
    pub env_refs: Vec<(usize, env::Refs)>,
    /// A VirtualMachineInstance's VirtualMachine (its name, in the same namespace), which stands
    /// for it when the input holds it (`kubevirt.rs`).
    pub run_by: Option<String>,
}

/// A pod's entry in `resourceClaims`: its name, and the ResourceClaim or ResourceClaimTemplate it
/// names.
type ClaimUse = (String, Option<String>, Option<String>);

/// The workloads placed, the node sets their `placement.permitted` indexes, and what could not be
/// resolved (extended resources nothing in the input explains, pods on nodes not in the input).
pub(crate) struct Placed {
    pub workloads: Vec<Workload>,
    pub node_sets: Vec<Vec<NodeId>>,
    pub unresolved: Vec<Unresolved>,
}

/// What placing needs to know about the fleet's nodes and DRA claims, looked up once for every
/// workload.
struct Fleet<'f> {
    /// The nodes as read (what they offer) and as resolved (their GPUs), in the same order.
    drafts: &'f [NodeDraft],
    nodes: &'f [Node],
    by_name: BTreeMap<&'f str, NodeId>,
    /// The NVIDIA GPU claims, and each one's index by (namespace, name, from a template).
    claims: &'f [ResourceClaimInfo],
    claim_index: BTreeMap<(String, String, bool), usize>,
    /// The devices each allocated ResourceClaim was given, by (namespace, name).
    allocations: BTreeMap<(String, String), Vec<Allocation>>,
    /// The ResourceClaims reserved for each pod (`status.reservedFor`), by (namespace, pod name).
    reserved: BTreeMap<(String, String), Vec<String>>,
}

/// Places `workloads` (unique and sorted) on `nodes` (with the `drafts` they were resolved from),
/// with the resolved NVIDIA GPU `claims` and every ResourceClaim read (`claim_drafts`, for their
/// allocations, read against the devices the ResourceSlices `published`).
#[allow(clippy::vec_box)] // See `Collector::workloads`.
pub(crate) fn place_workloads(
    workloads: Vec<Box<WorkloadDraft>>,
    drafts: &[NodeDraft],
    nodes: &[Node],
    claims: &[ResourceClaimInfo],
    claim_drafts: &[ClaimDraft],
    extended: &dra::Extended<'_>,
    published: &dra::Published,
) -> Placed {
    let fleet = Fleet::new(drafts, nodes, claims, claim_drafts, published);
    let kai_groups = kai_groups(&workloads);
    let mut unresolved = Vec::new();
    let mut sets = NodeSets::new();
    let mut missing: BTreeMap<String, (ObjectRef, usize)> = BTreeMap::new();
    let mut placed: Vec<Workload> = Vec::with_capacity(workloads.len());
    // Workloads in a row often have equal constraints (the pods of one controller): the last ones
    // and their node set, to skip hashing them again.
    let mut last: Option<(Constraints, usize)> = None;
    for d in workloads {
        let mut d = *d;
        // Extended resources served by DRA (KEP-5004): GPU requests through the pod's own claim.
        let ext = extended.uses(
            &d.workload.gpu.resources,
            d.extended.as_ref(),
            &d.workload.namespace,
        );
        d.constraints.resources.retain(|r| !ext.served.contains(r));
        for (resource, why) in &ext.unresolved {
            unresolved.push(Unresolved {
                object: d.workload.object.clone(),
                node: d.node_name.clone(),
                what: UnresolvedKind::ExtendedResource,
                message: format!("{} requests {resource}: {why}", d.workload.object),
            });
        }
        let mut w = d.workload;
        let unmapped = unmapped(&w, &d.records, &ext);
        w.gpu.dra.extend(fleet.claim_uses(&w.namespace, &d.claims));
        w.gpu.dra.extend(ext.uses);
        // The scheduler's claim names the devices allocated, as a pod's own claims do.
        d.generated.extend(ext.claim);
        let set = match &last {
            Some((c, set)) if *c == d.constraints => *set,
            _ => sets.permitted(&d.constraints, fleet.nodes, &fleet.by_name, &fleet.offers()),
        };
        permit(&mut w, set, &sets);
        w.placement.tolerations = d.constraints.pod_tolerations();
        w.placement.node_selector = d.constraints.node_selector.iter().cloned().collect();
        w.placement.recorded = recorded(&w, &d.records, &kai_groups);
        let on_gpu_node = match &d.node_name {
            Some(n) => fleet
                .by_name
                .get(n.as_str())
                .is_some_and(|id| fleet.nodes[*id].gpu.is_some()),
            None => sets.sets[set].iter().any(|n| fleet.nodes[*n].gpu.is_some()),
        };
        if on_gpu_node && !unmapped.is_empty() {
            unresolved.push(Unresolved {
                object: w.object.clone(),
                node: d.node_name.clone(),
                what: UnresolvedKind::UnmappedGpu,
                message: format!(
                    "{} asks for a GPU in a way no mechanism gpu-trust knows maps ({}): how it shares its GPU is not known",
                    w.object,
                    unmapped.join("; ")
                ),
            });
            w.gpu.unmapped = unmapped;
        }
        if let Some(node_name) = &d.node_name {
            match fleet.by_name.get(node_name.as_str()) {
                Some(&id) => {
                    w.placement.allocations = fleet.allocations(&w, &d.claims, &d.generated);
                    schedule(&mut w, node_name, id, &fleet);
                }
                None => {
                    let e = missing
                        .entry(node_name.clone())
                        .or_insert_with(|| (w.object.clone(), 0));
                    e.1 += 1;
                }
            }
        }
        placed.push(w);
        last = Some((d.constraints, set));
    }
    unresolved.extend(missing_nodes(missing));
    Placed {
        workloads: placed,
        node_sets: sets.sets,
        unresolved,
    }
}

impl<'f> Fleet<'f> {
    fn new(
        drafts: &'f [NodeDraft],
        nodes: &'f [Node],
        claims: &'f [ResourceClaimInfo],
        claim_drafts: &[ClaimDraft],
        published: &dra::Published,
    ) -> Self {
        let by_name = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        let claim_index = claims
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    (
                        c.object.namespace.clone().unwrap_or_default(),
                        c.object.name.clone(),
                        c.template,
                    ),
                    i,
                )
            })
            .collect();
        // Only the NVIDIA GPU claims: what the claims of other drivers allocate is not a GPU.
        let nvidia: std::collections::BTreeSet<&ObjectRef> =
            claims.iter().map(|c| &c.object).collect();
        let mut allocations = BTreeMap::new();
        let mut reserved: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        for c in claim_drafts
            .iter()
            .filter(|c| !c.template && nvidia.contains(&c.object))
        {
            let given: Vec<Allocation> = c
                .allocated
                .iter()
                .map(|a| published.allocation(&c.object, a))
                .collect();
            allocations.insert((c.namespace.clone(), c.name.clone()), given);
            for pod in &c.reserved_for {
                reserved
                    .entry((c.namespace.clone(), pod.clone()))
                    .or_default()
                    .push(c.name.clone());
            }
        }
        Fleet {
            drafts,
            nodes,
            by_name,
            claims,
            claim_index,
            allocations,
            reserved,
        }
    }

    /// The NVIDIA GPU claims a pod in `namespace` uses, in the order its `resourceClaims` name
    /// them: a shared ResourceClaim by name, or a per-pod claim from a ResourceClaimTemplate.
    /// Claims that are not NVIDIA GPU claims (or not in the input) are left out.
    fn claim_uses(&self, namespace: &str, uses: &[ClaimUse]) -> Vec<DraClaimUse> {
        let mut out = Vec::new();
        for (_, claim, template) in uses {
            let (name, is_template) = match (claim, template) {
                (Some(c), _) => (c.clone(), false),
                (None, Some(t)) => (t.clone(), true),
                (None, None) => continue,
            };
            if let Some(&i) =
                self.claim_index
                    .get(&(namespace.to_string(), name.clone(), is_template))
            {
                let c = &self.claims[i];
                out.push(DraClaimUse {
                    claim: (!is_template).then(|| format!("{namespace}/{name}")),
                    template: is_template.then(|| name.clone()),
                    device_class: c.device_class.clone(),
                    strategy: c.strategy,
                    shareable: c.shareable,
                });
            }
        }
        out
    }

    /// Whether a node offers an extended resource (to a container that requests more than one).
    fn offers(&self) -> impl Fn(NodeId, &str, bool) -> bool + 'f {
        let (drafts, nodes) = (self.drafts, self.nodes);
        move |node, resource, many| {
            nodes::offers(&drafts[node], nodes[node].gpu.as_ref(), resource)
                && !(many
                    && nodes[node]
                        .gpu
                        .as_ref()
                        .is_some_and(|g| g.refuses_more_than_one(resource)))
        }
    }

    /// The devices the cluster recorded as allocated to a pod: those of the ResourceClaims it names,
    /// those made for it (from its templates or for its extended resources) and those reserved for
    /// it, sorted.
    fn allocations(
        &self,
        w: &Workload,
        uses: &[ClaimUse],
        generated: &[String],
    ) -> Vec<Allocation> {
        let namespace = &w.namespace;
        let reserved = self
            .reserved
            .get(&(namespace.clone(), w.object.name.clone()));
        let names: std::collections::BTreeSet<&String> = uses
            .iter()
            .filter_map(|(_, c, _)| c.as_ref())
            .chain(generated)
            .chain(reserved.into_iter().flatten())
            .collect();
        let mut out: Vec<Allocation> = names
            .into_iter()
            .filter_map(|c| self.allocations.get(&(namespace.clone(), c.clone())))
            .flatten()
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// The GPU each KAI group's reservation pod records that it holds, by group: the reservation pods
/// of the input (in KAI's reservation namespaces, with the group label and the GPU's UUID).
#[allow(clippy::vec_box)] // See `Collector::workloads`.
fn kai_groups(workloads: &[Box<WorkloadDraft>]) -> BTreeMap<String, String> {
    workloads
        .iter()
        .map(|d| &d.workload)
        .filter(|w| iso::KAI_RESERVATION_NAMESPACES.contains(&w.namespace.as_str()))
        .filter_map(|w| {
            let group = w.labels.get(iso::KAI_GPU_GROUP)?;
            let uuid = w.annotations.get(iso::KAI_RESERVED_GPU)?;
            let Some(PhysicalDevice::Gpu(uuid)) = records::visible(uuid).next() else {
                return None;
            };
            Some((group.clone(), uuid))
        })
        .collect()
}

/// The devices schedulers recorded for a workload: its records, with each KAI group the input's
/// reservation pod resolves named by its GPU's UUID; for a KAI fraction, the GPUs its containers'
/// `NVIDIA_VISIBLE_DEVICES` name (KAI's binder writes them into the pod's ConfigMap, which the
/// containers read: NVIDIA/KAI-Scheduler `pkg/binder/common/gpu_access.go`), which name the group's
/// GPU better than the group does.
fn recorded(
    w: &Workload,
    records: &Records,
    kai_groups: &BTreeMap<String, String>,
) -> Vec<RecordedDevice> {
    let mut out: Vec<RecordedDevice> = records
        .devices
        .iter()
        .map(|r| match &r.device {
            PhysicalDevice::KaiGroup(g) => kai_groups.get(g).map_or_else(
                || r.clone(),
                |uuid| records::kai(PhysicalDevice::Gpu(uuid.clone())),
            ),
            _ => r.clone(),
        })
        .collect();
    if w.gpu
        .fraction
        .as_ref()
        .is_some_and(|f| f.scheduler == Mechanism::KaiFraction)
    {
        let visible = w
            .containers
            .iter()
            .filter_map(|c| c.nvidia_visible_devices.as_deref())
            .flat_map(records::visible);
        out.extend(visible.map(records::kai));
    }
    if out
        .iter()
        .any(|r| !matches!(r.device, PhysicalDevice::KaiGroup(_)))
    {
        out.retain(|r| !matches!(r.device, PhysicalDevice::KaiGroup(_)));
    }
    out.sort();
    out.dedup();
    out
}

/// What a workload asks of a GPU that no mechanism maps, in words: a resource whose name says GPU
/// that no row of the isolation table, no device plugin and no DeviceClass names (and that DRA
/// does not leave unresolved already), and annotations naming GPUs for a scheduler gpu-trust does
/// not know.
fn unmapped(w: &Workload, records: &Records, ext: &dra::ExtendedUses) -> Vec<String> {
    let mut out: Vec<String> = w
        .gpu
        .resources
        .keys()
        .filter(|r| {
            gpu_trust_model::resource::names_gpu(r)
                && !Mechanism::maps_resource(r)
                && !ext.served.contains(r)
                && !ext.unresolved.iter().any(|(u, _)| u == *r)
        })
        .map(|r| format!("requests {r}"))
        .collect();
    out.extend(records.unknown.iter().cloned());
    out.sort();
    out
}

/// The workload's permitted node set (`set`, of `sets`); a DaemonSet has one replica on each of its
/// nodes.
fn permit(w: &mut Workload, set: usize, sets: &NodeSets) {
    w.placement.permitted = set;
    if w.kind == WorkloadKind::DaemonSet {
        w.replicas = u32::try_from(sets.sets[set].len()).unwrap_or(u32::MAX);
    }
}

/// A pod scheduled on node `id` (named `node_name`), with the devices the cluster recorded as
/// allocated to it: its node, and on a GPU node the devices it may be using and whether the
/// evidence pins it to exactly those.
fn schedule(w: &mut Workload, node_name: &str, id: NodeId, fleet: &Fleet<'_>) {
    w.placement.node = Some(id);
    if let Some(g) = &fleet.nodes[id].gpu {
        let dra_devices: Vec<String> = w
            .placement
            .allocations
            .iter()
            .filter_map(|a| match &a.device {
                DeviceId::Dra { pool, device, .. } if pool == node_name => Some(device.clone()),
                _ => None,
            })
            .collect();
        let (devices, observed) = devices(w, g, &dra_devices);
        w.placement.devices = devices;
        w.placement.observed = observed;
    }
}

/// One unresolved entry per node that scheduled pods name but the input does not hold, with the
/// first such pod and how many there are.
fn missing_nodes(missing: BTreeMap<String, (ObjectRef, usize)>) -> Vec<Unresolved> {
    missing
        .into_iter()
        .map(|(node, (object, count))| Unresolved {
            object,
            node: Some(node.clone()),
            what: UnresolvedKind::MissingNode,
            message: format!(
                "{count} pod(s) are scheduled on node {node}, which is not in the input: their devices and neighbours are unknown"
            ),
        })
        .collect()
}

/// The devices of its node a scheduled pod may be on, and whether the evidence pins it to exactly
/// those.
fn devices(w: &Workload, g: &GpuNode, dra_devices: &[String]) -> (Vec<DeviceSlot>, bool) {
    if !w.requests_gpu() || g.gpus.is_empty() {
        return (Vec::new(), false);
    }
    let gpu = |i: u32| DeviceSlot {
        gpu: i,
        instance: None,
    };
    // A scheduler's records name the GPUs.
    if !w.placement.recorded.is_empty() {
        let pinned: Vec<DeviceSlot> = g
            .gpus
            .iter()
            .filter(|p| w.placement.recorded.iter().any(|r| r.names(p)))
            .map(|p| gpu(p.index))
            .collect();
        let named: BTreeSet<&PhysicalDevice> =
            w.placement.recorded.iter().map(|r| &r.device).collect();
        if !pinned.is_empty() && pinned.len() == named.len() {
            return (pinned, true);
        }
    }
    // An allocated DRA claim names its devices (`gpu-<index>`).
    if !dra_devices.is_empty() {
        let pinned: Vec<DeviceSlot> = dra_devices
            .iter()
            .filter_map(|d| d.strip_prefix("gpu-").and_then(|i| i.parse::<u32>().ok()))
            .filter(|i| g.gpus.iter().any(|p| p.index == *i))
            .map(gpu)
            .collect();
        if pinned.len() == dra_devices.len() {
            let mut pinned = pinned;
            pinned.sort();
            pinned.dedup();
            return (pinned, true);
        }
    }
    let mig_slots = |filter: &dyn Fn(&str) -> bool| -> Vec<DeviceSlot> {
        g.gpus
            .iter()
            .filter(|p| p.mig_enabled)
            .flat_map(|p| {
                p.mig
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| filter(&s.profile))
                    .map(move |(i, _)| DeviceSlot {
                        gpu: p.index,
                        instance: Some(u32::try_from(i).unwrap_or(u32::MAX)),
                    })
            })
            .collect()
    };
    let requested_mig: Vec<(String, u64)> = w
        .gpu
        .mig_profiles()
        .map(|(p, n)| (p.to_string(), n))
        .collect();
    let (candidates, wanted) = if !requested_mig.is_empty() {
        let names: Vec<&str> = requested_mig.iter().map(|(p, _)| p.as_str()).collect();
        let wanted: u64 = requested_mig.iter().map(|(_, n)| *n).sum();
        (
            mig_slots(&|profile| {
                names
                    .iter()
                    .any(|n| gpu_trust_model::catalogue::is_plugin_spelling(profile, n))
            }),
            wanted,
        )
    } else {
        let wanted = w
            .gpu
            .resources
            .get(gpu_trust_model::resource::GPU)
            .or_else(|| w.gpu.resources.get(gpu_trust_model::resource::GPU_SHARED))
            .copied()
            .unwrap_or(1)
            .max(1);
        if g.mig_strategy == MigStrategy::Single && g.mig_enabled() {
            (mig_slots(&|_| true), wanted)
        } else {
            let whole: Vec<DeviceSlot> = g
                .gpus
                .iter()
                .filter(|p| !(p.mig_enabled && g.mig_strategy == MigStrategy::Mixed))
                .map(|p| gpu(p.index))
                .collect();
            // A fractional or HAMi request gets one GPU per requested device.
            (whole, wanted)
        }
    };
    let observed = !candidates.is_empty() && (candidates.len() as u64) <= wanted;
    (candidates, observed)
}
