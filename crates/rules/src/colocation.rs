//! The co-location analysis: for every GPU node, which tenants' workloads are or may be on the same
//! GPU, the same MIG instance, the same MPS server, or the same node, and how sure the audit is of it.
//!
//! Computed once per audit; the rules, the pairs section and the blast radius all read it.
//!
//! Certainty (product spec, "Certainty of a finding"):
//!
//! - `observed`: the objects prove the co-location: HAMi's `hami.io/vgpu-devices-allocated` names the
//!   same GPU UUID; the node has one GPU; a shared MIG profile has one instance on the node; or, more
//!   generally, the replicas the two tenants hold cannot be packed onto disjoint GPUs (instances) of the
//!   node (pigeonhole). Two pods scheduled on one node are observed to share that node.
//! - `possible`: both are scheduled on the node and its sharing configuration lets the device plugin put
//!   them on the same GPU or instance.
//! - `permitted`: at least one of them is not scheduled there (a pod template, a pending pod), but its
//!   scheduling constraints allow the node.
//!
//! **Architecture invariant:** nothing here is quadratic in pods. Scheduled workloads are grouped by
//! node, device unit and tenant; unscheduled ones by tenant, permitted node set and request, and node sets
//! are intersected per pair of sets and node configuration, never per pair of pods. Pairs exist only for
//! tenants that actually meet. Two workloads of one tenant are never a pair.

use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{
    DeviceSlot, DraStrategy, Fleet, FractionScheduler, GpuNode, MigStrategy, NodeId, NodeSetId,
    PhysicalGpu, SharingStrategy, Workload, WorkloadId, WorkloadKind,
};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::resource;
use gpu_trust_model::Certainty;
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What two workloads on one node may share on the device.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// GPUs the device plugin advertises as several replicas of one resource (time-slicing, MPS).
    SharedGpu { resource: String },
    /// Instances of one MIG profile advertised as several replicas (time-slicing or MPS inside MIG).
    SharedMigInstance { profile: String },
    /// GPUs HAMi splits into vGPUs.
    Hami,
    /// GPUs a fractional scheduler hands out in fractions.
    Fraction(FractionScheduler),
    /// The device of one DRA ResourceClaim (`namespace/name`), whoever references it.
    Claim(String),
    /// Nothing shared on the device: a whole GPU or a MIG instance of its own.
    Own,
}

impl Unit {
    /// Whether two workloads on this unit may run on one GPU or instance.
    pub fn is_shared(&self) -> bool {
        !matches!(self, Unit::Own)
    }
}

/// Where one workload gets its GPU on one node: the mechanism and the unit it draws from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceUse {
    pub mechanism: Mechanism,
    pub unit: Unit,
    /// Replicas of the unit the workload holds (its resource quantity).
    pub demand: u64,
    /// MIG profiles (as the device plugin writes them: `1g.10gb.me`) it may get; `None` when any
    /// profile of the node may be handed out (single strategy, HAMi or DRA MIG).
    pub mig_profiles: Option<BTreeSet<String>>,
}

/// How `workload` gets its GPU on `node`; `None` when it requests no GPU.
pub fn device_use(workload: &Workload, node: &GpuNode) -> Option<DeviceUse> {
    let mechanism = Mechanism::of_workload(workload, node)?;
    let gpu = &workload.gpu;
    let mut mig_profiles = None;
    let mut demand = 1;
    let unit = if let Some(claim) = gpu.dra.first() {
        if claim.strategy == DraStrategy::Mig {
            mig_profiles = None;
        }
        match &claim.claim {
            Some(name) => Unit::Claim(name.clone()),
            None => Unit::Own,
        }
    } else if let Some(f) = &gpu.fraction {
        Unit::Fraction(f.scheduler)
    } else if gpu.hami.is_some() {
        demand = gpu.hami.as_ref().map_or(1, |h| h.gpus.max(1));
        if mechanism.is_mig() {
            Unit::Own
        } else {
            Unit::Hami
        }
    } else {
        let (resource, quantity) = gpu.device_resource()?;
        demand = quantity.max(1);
        let profile = resource::mig_profile(resource).map(str::to_string);
        if let Some(p) = &profile {
            mig_profiles = Some(BTreeSet::from([p.clone()]));
        }
        match mechanism {
            Mechanism::TimeSlicing | Mechanism::Mps => Unit::SharedGpu {
                resource: resource::base(resource).to_string(),
            },
            Mechanism::MigTimeSlicing | Mechanism::MigMps => Unit::SharedMigInstance {
                profile: profile
                    .clone()
                    .or_else(|| single_strategy_profile(node))
                    .unwrap_or_default(),
            },
            _ => Unit::Own,
        }
    };
    if mechanism.is_mig() && mig_profiles.is_none() {
        if let Unit::SharedMigInstance { profile } = &unit {
            if !profile.is_empty() {
                mig_profiles = Some(BTreeSet::from([profile.clone()]));
            }
        }
    }
    Some(DeviceUse {
        mechanism,
        unit,
        demand,
        mig_profiles,
    })
}

/// The one MIG profile of a node under the single strategy (every GPU carries the same layout).
fn single_strategy_profile(node: &GpuNode) -> Option<String> {
    if node.mig_strategy != MigStrategy::Single {
        return None;
    }
    node.gpus
        .iter()
        .flat_map(|g| g.mig.iter())
        .map(|s| catalogue::plugin_profile(&s.profile))
        .next()
}

/// Instances of a MIG profile (plugin spelling) on a node.
fn instances_of(node: &GpuNode, profile: &str) -> u64 {
    node.gpus
        .iter()
        .flat_map(|g| g.mig.iter())
        .filter(|s| catalogue::is_plugin_spelling(&s.profile, profile))
        .count() as u64
}

/// Physical GPUs on a node (the label count, else the GPUs listed).
pub fn gpu_count(node: &GpuNode) -> u64 {
    u64::from(
        node.count
            .max(u32::try_from(node.gpus.len()).unwrap_or(u32::MAX)),
    )
}

/// Nodes where two tenants may meet, and the workloads that may meet there (shared between pairs).
pub type Permitted = (Arc<[NodeId]>, Arc<[WorkloadId]>);

/// A certainty with the reason for it.
pub type Judged = (Certainty, &'static str);

/// Why a co-location is `possible`.
pub const POSSIBLE: &str =
    "both run there and the sharing configuration lets the device plugin put them together";
/// Why a co-location is `permitted`.
pub const PERMITTED: &str =
    "not together now, but no node selector, required affinity or taint keeps them apart";
const ONE_GPU: &str = "the node has one GPU";
const PINNED: &str = "both are pinned to the same device";
const PINNED_GPU: &str = "both are pinned to instances of the same GPU";
const PIGEONHOLE: &str = "their replicas cannot fit on separate GPUs of the node";
const ONE_INSTANCE: &str = "the node has one instance of that profile";
const PIGEONHOLE_MIG: &str = "their replicas cannot fit on separate instances of the profile";
const SAME_NODE: &str = "both are scheduled there";

/// Where two tenants meet, of one kind (a device unit, a MIG GPU, a node).
#[derive(Debug, Clone, Default)]
pub struct Share {
    /// Nodes where scheduled workloads of both meet, with the certainty on each.
    pub placed: BTreeMap<NodeId, Certainty>,
    /// The scheduled workloads behind `placed`, of both tenants, in the order they were met (may
    /// repeat; [`workloads`](Self::workloads) gives them as a set).
    pub placed_workloads: Vec<WorkloadId>,
    /// Why the meeting on each node of `placed` is as certain as it is.
    pub reasons: BTreeMap<NodeId, &'static str>,
    /// Nodes where they may meet (`permitted`), with the workloads that may, shared between pairs.
    pub permitted: Vec<Permitted>,
}

impl Share {
    /// The strongest certainty of the meeting.
    pub fn certainty(&self) -> Certainty {
        self.placed
            .values()
            .copied()
            .min()
            .unwrap_or(Certainty::Permitted)
    }

    pub fn is_empty(&self) -> bool {
        self.placed.is_empty() && self.permitted.iter().all(|(n, _)| n.is_empty())
    }

    /// Nodes at the share's strongest certainty (the nodes a finding names).
    pub fn nodes(&self) -> BTreeSet<NodeId> {
        let best = self.certainty();
        if best == Certainty::Permitted {
            return self.permitted_nodes();
        }
        self.placed
            .iter()
            .filter(|(_, c)| **c == best)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Every node of the share, at any certainty, with the strongest certainty on it.
    pub fn all_nodes(&self) -> BTreeMap<NodeId, Certainty> {
        let mut out = self.placed.clone();
        for (nodes, _) in &self.permitted {
            for n in nodes.iter() {
                out.entry(*n).or_insert(Certainty::Permitted);
            }
        }
        out
    }

    fn permitted_nodes(&self) -> BTreeSet<NodeId> {
        self.permitted
            .iter()
            .flat_map(|(n, _)| n.iter().copied())
            .collect()
    }

    /// The workloads behind the share at its strongest certainty.
    pub fn workloads(&self) -> BTreeSet<WorkloadId> {
        if self.certainty() == Certainty::Permitted {
            self.permitted
                .iter()
                .flat_map(|(_, w)| w.iter().copied())
                .collect()
        } else {
            self.placed_workloads.iter().copied().collect()
        }
    }

    fn place<'w>(
        &mut self,
        node: NodeId,
        (certainty, reason): Judged,
        workloads: impl Iterator<Item = &'w WorkloadId>,
    ) {
        let e = self.placed.entry(node).or_insert(certainty);
        if certainty <= *e {
            *e = certainty;
            self.reasons.insert(node, reason);
        }
        self.placed_workloads.extend(workloads.copied());
    }

    /// Why the audit is as sure as [`certainty`](Self::certainty) says.
    pub fn reason(&self) -> &'static str {
        let best = self.certainty();
        self.placed
            .iter()
            .find(|(_, c)| **c == best)
            .and_then(|(n, _)| self.reasons.get(n).copied())
            .unwrap_or(PERMITTED)
    }

    fn permit(&mut self, nodes: Arc<[NodeId]>, workloads: Arc<[WorkloadId]>) {
        if nodes.is_empty() {
            return;
        }
        if !self
            .permitted
            .iter()
            .any(|(n, w)| Arc::ptr_eq(n, &nodes) && Arc::ptr_eq(w, &workloads))
        {
            self.permitted.push((nodes, workloads));
        }
    }
}

/// Everything two different tenants share below the control plane.
#[derive(Debug, Clone, Default)]
pub struct PairColocation {
    /// One GPU or MIG instance, by the mechanism that shares it.
    pub device: BTreeMap<Mechanism, Share>,
    /// Different MIG instances of one physical GPU.
    pub mig_gpu: Share,
    /// One node (kernel, driver, toolkit, runtime), whatever the device.
    pub node: Share,
}

impl PairColocation {
    /// The strongest certainty of any meeting, `None` when they meet nowhere.
    pub fn certainty(&self) -> Option<Certainty> {
        self.device
            .values()
            .chain([&self.mig_gpu, &self.node])
            .filter(|s| !s.is_empty())
            .map(Share::certainty)
            .min()
    }
}

/// Where one workload gets its GPU, at one certainty, on some nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub mechanism: Mechanism,
    pub certainty: Certainty,
    pub nodes: Vec<NodeId>,
}

/// What makes a node's device configuration different from another's, as far as which unit and
/// mechanism a request gets and which MIG instances can meet.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ConfigKey {
    strategy: SharingStrategy,
    replicas: Vec<(String, u32)>,
    mig_strategy: MigStrategy,
    layout: Vec<Vec<String>>,
    hami: bool,
}

impl ConfigKey {
    fn of(node: &GpuNode) -> ConfigKey {
        ConfigKey {
            strategy: node.sharing.strategy,
            replicas: node
                .sharing
                .replicas
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
            mig_strategy: node.mig_strategy,
            layout: node
                .gpus
                .iter()
                .map(|g| {
                    let mut p: Vec<String> = g.mig.iter().map(|s| s.profile.clone()).collect();
                    p.sort();
                    p
                })
                .collect(),
            hami: node.hami,
        }
    }
}

/// What a workload asks for, as far as `Mechanism::of_workload` and [`device_use`] read it: workloads
/// with the same signature get the same unit on nodes of the same configuration.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RequestKey {
    dra: Option<(DraStrategy, Option<String>)>,
    fraction: Option<FractionScheduler>,
    hami: Option<Option<String>>,
    resource: Option<String>,
}

impl RequestKey {
    fn of(w: &Workload) -> RequestKey {
        let gpu = &w.gpu;
        RequestKey {
            dra: gpu.dra.first().map(|c| (c.strategy, c.claim.clone())),
            fraction: gpu.fraction.as_ref().map(|f| f.scheduler),
            hami: gpu.hami.as_ref().map(|h| h.mode.clone()),
            resource: gpu.device_resource().map(|(k, _)| k.to_string()),
        }
    }
}

/// Unscheduled workloads of one tenant with one request, permitted on one set of GPU nodes.
#[derive(Debug, Clone)]
struct Group {
    tenant: TenantId,
    workloads: Arc<[WorkloadId]>,
    /// A representative, for its request.
    rep: WorkloadId,
}

/// A scheduled tenant's presence on one node unit.
#[derive(Debug, Clone)]
struct Members {
    workloads: Vec<WorkloadId>,
    demand: u64,
    uuids: BTreeSet<String>,
    all_pinned: bool,
    mig_profiles: Option<BTreeSet<String>>,
    /// Devices the evidence pins the tenant's workloads to.
    observed_devices: BTreeSet<DeviceSlot>,
    /// Every device the tenant's workloads may be on; `None` when one of them may be on any.
    devices: Option<BTreeSet<DeviceSlot>>,
}

impl Default for Members {
    /// No workloads yet: pinned and device-known until a workload says otherwise.
    fn default() -> Members {
        Members {
            workloads: Vec::new(),
            demand: 0,
            uuids: BTreeSet::new(),
            all_pinned: true,
            mig_profiles: None,
            observed_devices: BTreeSet::new(),
            devices: Some(BTreeSet::new()),
        }
    }
}

impl Members {
    fn add(&mut self, wid: WorkloadId, w: &Workload) {
        self.workloads.push(wid);
        if w.placement.gpu_uuids.is_empty() {
            self.all_pinned = false;
        }
        self.uuids.extend(w.placement.gpu_uuids.iter().cloned());
        let slots = &w.placement.devices;
        if w.placement.observed {
            self.observed_devices.extend(slots.iter().copied());
        }
        match (&mut self.devices, slots.is_empty()) {
            (Some(_), true) => self.devices = None,
            (Some(d), false) => d.extend(slots.iter().copied()),
            (None, _) => {}
        }
    }

    /// The physical GPUs among `devices`.
    fn gpus(set: &BTreeSet<DeviceSlot>) -> BTreeSet<u32> {
        set.iter().map(|d| d.gpu).collect()
    }
}

/// What the device slots ingest resolved say about two tenants on one unit: `Some(Some(observed))`
/// when pinned workloads meet on a device, `Some(None)` when their possible devices are disjoint,
/// `None` when the slots do not decide.
fn slot_verdict(a: &Members, b: &Members, same_device: bool) -> Option<Option<Judged>> {
    let meet = |x: &BTreeSet<DeviceSlot>, y: &BTreeSet<DeviceSlot>| {
        if same_device {
            !x.is_disjoint(y)
        } else {
            // Different instances of one physical GPU.
            x.iter()
                .any(|d| y.iter().any(|e| d.gpu == e.gpu && d.instance != e.instance))
        }
    };
    if meet(&a.observed_devices, &b.observed_devices) {
        let reason = if same_device { PINNED } else { PINNED_GPU };
        return Some(Some((Certainty::Observed, reason)));
    }
    match (&a.devices, &b.devices) {
        (Some(x), Some(y)) if !x.is_empty() && !y.is_empty() => {
            let apart = if same_device {
                x.is_disjoint(y)
            } else {
                Members::gpus(x).is_disjoint(&Members::gpus(y)) || !meet(x, y)
            };
            apart.then_some(None)
        }
        _ => None,
    }
}

/// The co-location analysis of one fleet under one tenancy.
#[derive(Debug, Clone, Default)]
pub struct Colocation {
    /// Every pair of different tenants that meet on a GPU node, keyed `(lower id, higher id)`.
    pub pairs: BTreeMap<(TenantId, TenantId), PairColocation>,
    /// Tenants with scheduled workloads on each GPU node (DaemonSets count on every node they select).
    placed: BTreeMap<NodeId, BTreeMap<TenantId, Vec<WorkloadId>>>,
    /// Interned permitted GPU-node sets of unscheduled workloads.
    sets: Vec<Arc<[NodeId]>>,
    set_index: BTreeMap<Arc<[NodeId]>, usize>,
    /// The sets that contain each GPU node.
    sets_of_node: BTreeMap<NodeId, Vec<usize>>,
    /// Tenants with unscheduled workloads permitted on each set.
    set_tenants: Vec<BTreeMap<TenantId, Vec<WorkloadId>>>,
    /// Configuration class of each GPU node.
    node_class: BTreeMap<NodeId, usize>,
    /// A representative node of each class.
    class_rep: Vec<NodeId>,
    /// Per workload: the set it is permitted on (unscheduled), or the nodes it runs on.
    workload_set: BTreeMap<WorkloadId, usize>,
    workload_nodes: BTreeMap<WorkloadId, Vec<NodeId>>,
}

impl Colocation {
    /// Analyses `fleet`; `tenant_of[w]` is the tenant of workload `w` (`None` for platform workloads,
    /// which the analysis ignores).
    pub fn compute(fleet: &Fleet, tenant_of: &[Option<TenantId>]) -> Colocation {
        let mut c = Colocation::default();
        c.classify_nodes(fleet);
        let daemon_pods = daemonset_pods(fleet);
        // The fleet's node sets, restricted to GPU nodes and interned here.
        let mut interned: BTreeMap<NodeSetId, Option<usize>> = BTreeMap::new();

        // Scheduled workloads, by node; DaemonSet templates run on every node they select.
        for (wid, w) in fleet.workloads.iter().enumerate() {
            let Some(tenant) = tenant_of.get(wid).copied().flatten() else {
                continue;
            };
            let gpu_nodes = |ids: &[NodeId]| -> Vec<NodeId> {
                ids.iter()
                    .copied()
                    .filter(|n| fleet.nodes.get(*n).is_some_and(|n| n.gpu.is_some()))
                    .collect()
            };
            let nodes: Vec<NodeId> = match w.placement.node {
                Some(n) => gpu_nodes(&[n]),
                None if w.kind == WorkloadKind::DaemonSet => {
                    if daemon_pods.contains(&(w.namespace.as_str(), w.object.name.as_str())) {
                        continue;
                    }
                    gpu_nodes(fleet.permitted_nodes(w))
                }
                None => {
                    let set = match interned.get(&w.placement.permitted) {
                        Some(set) => *set,
                        None => {
                            let nodes = gpu_nodes(fleet.permitted_nodes(w));
                            let set = if nodes.is_empty() {
                                None
                            } else {
                                Some(c.intern(nodes))
                            };
                            interned.insert(w.placement.permitted, set);
                            set
                        }
                    };
                    if let Some(set) = set {
                        c.workload_set.insert(wid, set);
                        c.set_tenants[set].entry(tenant).or_default().push(wid);
                    }
                    continue;
                }
            };
            for n in &nodes {
                c.placed
                    .entry(*n)
                    .or_default()
                    .entry(tenant)
                    .or_default()
                    .push(wid);
            }
            if !nodes.is_empty() {
                c.workload_nodes.insert(wid, nodes);
            }
        }
        for (set, nodes) in c.sets.iter().enumerate() {
            for n in nodes.iter() {
                c.sets_of_node.entry(*n).or_default().push(set);
            }
        }

        c.placed_pairs(fleet);
        let groups = c.groups(fleet);
        c.placed_permitted_pairs(fleet, &groups);
        c.permitted_pairs(fleet, &groups);
        c.pairs.retain(|_, p| p.certainty().is_some());
        c
    }

    fn classify_nodes(&mut self, fleet: &Fleet) {
        let mut classes: BTreeMap<ConfigKey, usize> = BTreeMap::new();
        for (id, node) in fleet.gpu_nodes() {
            let Some(gpu) = &node.gpu else { continue };
            let next = classes.len();
            let class = *classes.entry(ConfigKey::of(gpu)).or_insert(next);
            if class == self.class_rep.len() {
                self.class_rep.push(id);
            }
            self.node_class.insert(id, class);
        }
    }

    fn intern(&mut self, nodes: Vec<NodeId>) -> usize {
        // Permitted node lists are sorted by ingest; sort again so equal sets intern once.
        let mut nodes = nodes;
        nodes.sort_unstable();
        nodes.dedup();
        let nodes: Arc<[NodeId]> = nodes.into();
        if let Some(i) = self.set_index.get(&nodes) {
            return *i;
        }
        self.sets.push(nodes.clone());
        self.set_tenants.push(BTreeMap::new());
        self.set_index.insert(nodes, self.sets.len() - 1);
        self.sets.len() - 1
    }

    fn pair(&mut self, a: TenantId, b: TenantId) -> &mut PairColocation {
        self.pairs.entry((a.min(b), a.max(b))).or_default()
    }

    /// Scheduled against scheduled, node by node.
    fn placed_pairs(&mut self, fleet: &Fleet) {
        let placed = std::mem::take(&mut self.placed);
        for (node_id, tenants) in &placed {
            let Some(gpu) = fleet.nodes.get(*node_id).and_then(|n| n.gpu.as_ref()) else {
                continue;
            };
            // Host: every two tenants on the node.
            let ids: Vec<&TenantId> = tenants.keys().collect();
            for (i, a) in ids.iter().enumerate() {
                for b in &ids[i + 1..] {
                    let ws = tenants[*a].iter().chain(&tenants[*b]);
                    self.pair(**a, **b)
                        .node
                        .place(*node_id, (Certainty::Observed, SAME_NODE), ws);
                }
            }
            // Device units and MIG GPUs.
            let mut units: BTreeMap<(Unit, Mechanism), BTreeMap<TenantId, Members>> =
                BTreeMap::new();
            let mut mig: BTreeMap<TenantId, Members> = BTreeMap::new();
            for (tenant, workloads) in tenants {
                for wid in workloads {
                    let Some(w) = fleet.workloads.get(*wid) else {
                        continue;
                    };
                    let Some(u) = device_use(w, gpu) else {
                        continue;
                    };
                    if u.mechanism.is_mig() {
                        let m = mig.entry(*tenant).or_default();
                        m.add(*wid, w);
                        merge_profiles(&mut m.mig_profiles, &u.mig_profiles, m.workloads.len());
                    }
                    if !u.unit.is_shared() {
                        continue;
                    }
                    let m = units
                        .entry((u.unit.clone(), u.mechanism))
                        .or_default()
                        .entry(*tenant)
                        .or_default();
                    m.add(*wid, w);
                    m.demand = m.demand.saturating_add(u.demand);
                }
            }
            for ((unit, mechanism), members) in &units {
                let ids: Vec<&TenantId> = members.keys().collect();
                for (i, a) in ids.iter().enumerate() {
                    for b in &ids[i + 1..] {
                        let (ma, mb) = (&members[*a], &members[*b]);
                        let certainty = match slot_verdict(ma, mb, true) {
                            Some(verdict) => verdict,
                            None => unit_certainty(unit, gpu, ma, mb),
                        };
                        let Some(certainty) = certainty else {
                            continue;
                        };
                        let ws = ma.workloads.iter().chain(&mb.workloads);
                        self.pair(**a, **b)
                            .device
                            .entry(*mechanism)
                            .or_default()
                            .place(*node_id, certainty, ws);
                    }
                }
            }
            let ids: Vec<&TenantId> = mig.keys().collect();
            for (i, a) in ids.iter().enumerate() {
                for b in &ids[i + 1..] {
                    let (ma, mb) = (&mig[*a], &mig[*b]);
                    let certainty = match slot_verdict(ma, mb, false) {
                        Some(verdict) => verdict,
                        None => mig_gpu_certainty(gpu, &ma.mig_profiles, &mb.mig_profiles),
                    };
                    let Some(certainty) = certainty else {
                        continue;
                    };
                    let ws = ma.workloads.iter().chain(&mb.workloads);
                    self.pair(**a, **b).mig_gpu.place(*node_id, certainty, ws);
                }
            }
        }
        self.placed = placed;
    }

    /// Unscheduled workloads grouped by set, tenant and request.
    fn groups(&self, fleet: &Fleet) -> Vec<Vec<Group>> {
        let mut out = Vec::with_capacity(self.sets.len());
        for tenants in &self.set_tenants {
            let mut by_key: BTreeMap<(TenantId, RequestKey), Vec<WorkloadId>> = BTreeMap::new();
            for (tenant, workloads) in tenants {
                for wid in workloads {
                    if let Some(w) = fleet.workloads.get(*wid) {
                        by_key
                            .entry((*tenant, RequestKey::of(w)))
                            .or_default()
                            .push(*wid);
                    }
                }
            }
            out.push(
                by_key
                    .into_iter()
                    .map(|((tenant, _), workloads)| Group {
                        tenant,
                        rep: workloads[0],
                        workloads: workloads.into(),
                    })
                    .collect(),
            );
        }
        out
    }

    /// Scheduled against permitted, node by node (only nodes where someone is scheduled).
    fn placed_permitted_pairs(&mut self, fleet: &Fleet, groups: &[Vec<Group>]) {
        /// Nodes and workloads of one kind of meeting, gathered before they become one entry.
        #[derive(Default)]
        struct Pending {
            nodes: BTreeSet<NodeId>,
            workloads: BTreeSet<WorkloadId>,
        }
        impl Pending {
            fn add(
                &mut self,
                node: NodeId,
                a: &[WorkloadId],
                b: impl IntoIterator<Item = WorkloadId>,
            ) {
                self.nodes.insert(node);
                self.workloads.extend(a.iter().copied());
                self.workloads.extend(b);
            }
            fn into_permitted(self) -> Permitted {
                let nodes: Vec<NodeId> = self.nodes.into_iter().collect();
                let workloads: Vec<WorkloadId> = self.workloads.into_iter().collect();
                (nodes.into(), workloads.into())
            }
        }
        // (pair, kind) -> pending; kind: None for the node, Some(None) for a MIG GPU, Some(Some(m))
        // for a device shared under m.
        type Kind = Option<Option<Mechanism>>;
        let mut pending: BTreeMap<((TenantId, TenantId), Kind), Pending> = BTreeMap::new();
        for (node_id, tenants) in &self.placed {
            let Some(gpu) = fleet.nodes.get(*node_id).and_then(|n| n.gpu.as_ref()) else {
                continue;
            };
            let Some(sets) = self.sets_of_node.get(node_id) else {
                continue;
            };
            // How each scheduled workload of the node gets its GPU, once.
            let uses: Vec<(TenantId, WorkloadId, Option<DeviceUse>)> = tenants
                .iter()
                .flat_map(|(t, ws)| {
                    ws.iter().map(|w| {
                        (
                            *t,
                            *w,
                            fleet.workloads.get(*w).and_then(|x| device_use(x, gpu)),
                        )
                    })
                })
                .collect();
            for set in sets {
                for g in &groups[*set] {
                    let Some(rep) = fleet.workloads.get(g.rep) else {
                        continue;
                    };
                    let gu = device_use(rep, gpu);
                    for (tenant, workloads) in tenants {
                        if *tenant == g.tenant {
                            continue;
                        }
                        let key = ((*tenant).min(g.tenant), (*tenant).max(g.tenant));
                        pending.entry((key, None)).or_default().add(
                            *node_id,
                            &g.workloads,
                            workloads.iter().copied(),
                        );
                        let Some(gu) = &gu else { continue };
                        for (t, wid, pu) in &uses {
                            let Some(pu) = pu else { continue };
                            if t != tenant {
                                continue;
                            }
                            if gu.unit.is_shared()
                                && gu.unit == pu.unit
                                && gu.mechanism == pu.mechanism
                            {
                                pending
                                    .entry((key, Some(Some(gu.mechanism))))
                                    .or_default()
                                    .add(*node_id, &g.workloads, [*wid]);
                            }
                            if gu.mechanism.is_mig()
                                && pu.mechanism.is_mig()
                                && mig_gpu_certainty(gpu, &gu.mig_profiles, &pu.mig_profiles)
                                    .is_some()
                            {
                                pending.entry((key, Some(None))).or_default().add(
                                    *node_id,
                                    &g.workloads,
                                    [*wid],
                                );
                            }
                        }
                    }
                }
            }
        }
        for (((a, b), kind), p) in pending {
            let (nodes, workloads) = p.into_permitted();
            let pair = self.pair(a, b);
            let share = match kind {
                None => &mut pair.node,
                Some(None) => &mut pair.mig_gpu,
                Some(Some(m)) => pair.device.entry(m).or_default(),
            };
            share.permit(nodes, workloads);
        }
    }

    /// Permitted against permitted: per pair of sets and node class.
    fn permitted_pairs(&mut self, fleet: &Fleet, groups: &[Vec<Group>]) {
        // Nodes of each (set, class).
        let mut cells: Vec<BTreeMap<usize, Vec<NodeId>>> = vec![BTreeMap::new(); self.sets.len()];
        for (set, nodes) in self.sets.iter().enumerate() {
            for n in nodes.iter() {
                if let Some(class) = self.node_class.get(n) {
                    cells[set].entry(*class).or_default().push(*n);
                }
            }
        }
        // Device use of each group on each class it may meet.
        let mut uses: BTreeMap<(usize, usize, usize), Option<DeviceUse>> = BTreeMap::new();
        for (set, gs) in groups.iter().enumerate() {
            for (gi, g) in gs.iter().enumerate() {
                for class in cells[set].keys() {
                    let rep_node = self
                        .class_rep
                        .get(*class)
                        .and_then(|n| fleet.nodes.get(*n))
                        .and_then(|n| n.gpu.as_ref());
                    let u = match (rep_node, fleet.workloads.get(g.rep)) {
                        (Some(node), Some(w)) => device_use(w, node),
                        _ => None,
                    };
                    uses.insert((set, gi, *class), u);
                }
            }
        }
        for s1 in 0..self.sets.len() {
            for s2 in s1..self.sets.len() {
                let mut all_nodes: Vec<NodeId> = Vec::new();
                let mut per_class: Vec<(usize, Arc<[NodeId]>)> = Vec::new();
                for (class, n1) in &cells[s1] {
                    let Some(n2) = cells[s2].get(class) else {
                        continue;
                    };
                    let inter = intersect(n1, n2);
                    if inter.is_empty() {
                        continue;
                    }
                    all_nodes.extend(&inter);
                    per_class.push((*class, inter.into()));
                }
                if all_nodes.is_empty() {
                    continue;
                }
                all_nodes.sort_unstable();
                let all_nodes: Arc<[NodeId]> = all_nodes.into();
                for (i1, g1) in groups[s1].iter().enumerate() {
                    let start = if s1 == s2 { i1 + 1 } else { 0 };
                    for (i2, g2) in groups[s2].iter().enumerate().skip(start) {
                        if g1.tenant == g2.tenant {
                            continue;
                        }
                        let ws: Arc<[WorkloadId]> = {
                            let mut v = g1.workloads.to_vec();
                            v.extend(g2.workloads.iter());
                            v.into()
                        };
                        self.pair(g1.tenant, g2.tenant)
                            .node
                            .permit(all_nodes.clone(), ws.clone());
                        for (class, nodes) in &per_class {
                            let (Some(Some(u1)), Some(Some(u2))) =
                                (uses.get(&(s1, i1, *class)), uses.get(&(s2, i2, *class)))
                            else {
                                continue;
                            };
                            if u1.unit.is_shared()
                                && u1.unit == u2.unit
                                && u1.mechanism == u2.mechanism
                            {
                                self.pair(g1.tenant, g2.tenant)
                                    .device
                                    .entry(u1.mechanism)
                                    .or_default()
                                    .permit(nodes.clone(), ws.clone());
                            }
                            let rep = self
                                .class_rep
                                .get(*class)
                                .and_then(|n| fleet.nodes.get(*n))
                                .and_then(|n| n.gpu.as_ref());
                            if let Some(node) = rep {
                                if u1.mechanism.is_mig()
                                    && u2.mechanism.is_mig()
                                    && mig_gpu_certainty(node, &u1.mig_profiles, &u2.mig_profiles)
                                        .is_some()
                                {
                                    self.pair(g1.tenant, g2.tenant)
                                        .mig_gpu
                                        .permit(nodes.clone(), ws.clone());
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The pair of two different tenants, if they meet anywhere below the control plane.
    pub fn pair_of(&self, a: TenantId, b: TenantId) -> Option<&PairColocation> {
        self.pairs.get(&(a.min(b), a.max(b)))
    }

    /// Tenants on a GPU node: scheduled there (`observed`), or permitted there (`permitted`).
    pub fn tenants_on(&self, node: NodeId) -> BTreeMap<TenantId, Certainty> {
        let mut out: BTreeMap<TenantId, Certainty> = BTreeMap::new();
        if let Some(placed) = self.placed.get(&node) {
            for t in placed.keys() {
                out.insert(*t, Certainty::Observed);
            }
        }
        for set in self.sets_of_node.get(&node).into_iter().flatten() {
            for t in self.set_tenants[*set].keys() {
                out.entry(*t).or_insert(Certainty::Permitted);
            }
        }
        out
    }

    /// The workloads of `tenant` on a GPU node (scheduled there, or permitted there).
    pub fn workloads_on(&self, node: NodeId, tenant: TenantId) -> Vec<WorkloadId> {
        let mut out: Vec<WorkloadId> = self
            .placed
            .get(&node)
            .and_then(|p| p.get(&tenant))
            .cloned()
            .unwrap_or_default();
        for set in self.sets_of_node.get(&node).into_iter().flatten() {
            if let Some(ws) = self.set_tenants[*set].get(&tenant) {
                out.extend(ws);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether the workload runs or may run on some GPU node.
    pub fn reaches_gpu(&self, workload: WorkloadId) -> bool {
        self.workload_nodes.contains_key(&workload) || self.workload_set.contains_key(&workload)
    }

    /// GPU nodes the workload runs on (`observed`) or may run on (`permitted`); empty when it can reach
    /// no GPU node.
    pub fn reach_of(&self, workload: WorkloadId) -> (Certainty, Vec<NodeId>) {
        if let Some(nodes) = self.workload_nodes.get(&workload) {
            return (Certainty::Observed, nodes.clone());
        }
        match self.workload_set.get(&workload) {
            Some(set) => (Certainty::Permitted, self.sets[*set].to_vec()),
            None => (Certainty::Permitted, Vec::new()),
        }
    }

    /// Where a workload gets its GPU: one seat per mechanism, with the nodes and the certainty.
    pub fn seats(&self, fleet: &Fleet, workload: WorkloadId) -> Vec<Seat> {
        let Some(w) = fleet.workloads.get(workload) else {
            return Vec::new();
        };
        let (certainty, nodes) = self.reach_of(workload);
        let mut by_mechanism: BTreeMap<Mechanism, Vec<NodeId>> = BTreeMap::new();
        let mut class_mechanism: BTreeMap<usize, Option<Mechanism>> = BTreeMap::new();
        for n in nodes {
            let Some(gpu) = fleet.nodes.get(n).and_then(|n| n.gpu.as_ref()) else {
                continue;
            };
            let m = match self.node_class.get(&n) {
                Some(class) => *class_mechanism
                    .entry(*class)
                    .or_insert_with(|| Mechanism::of_workload(w, gpu)),
                None => Mechanism::of_workload(w, gpu),
            };
            if let Some(m) = m {
                by_mechanism.entry(m).or_default().push(n);
            }
        }
        by_mechanism
            .into_iter()
            .map(|(mechanism, nodes)| Seat {
                mechanism,
                certainty,
                nodes,
            })
            .collect()
    }
}

/// Names of DaemonSets whose pods are in the input (their pods stand for them).
fn daemonset_pods(fleet: &Fleet) -> BTreeSet<(&str, &str)> {
    fleet
        .workloads
        .iter()
        .filter(|w| w.kind == WorkloadKind::Pod)
        .filter_map(|w| {
            let owner = w.owner.as_deref()?;
            let name = owner.strip_prefix("DaemonSet/")?;
            Some((w.namespace.as_str(), name))
        })
        .collect()
}

fn merge_profiles(
    into: &mut Option<BTreeSet<String>>,
    from: &Option<BTreeSet<String>>,
    count: usize,
) {
    match (into.as_mut(), from) {
        // The first workload sets the profiles; any workload that may get any profile widens to all.
        (_, None) => *into = None,
        (Some(set), Some(p)) => set.extend(p.iter().cloned()),
        (None, Some(p)) if count == 1 => *into = Some(p.clone()),
        (None, Some(_)) => {}
    }
}

fn intersect(a: &[NodeId], b: &[NodeId]) -> Vec<NodeId> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// How sure it is that two scheduled tenants share one GPU or instance of `unit` on `node`; `None`
/// when the objects prove they do not (HAMi pinned them to different GPUs).
fn unit_certainty(unit: &Unit, node: &GpuNode, a: &Members, b: &Members) -> Option<Judged> {
    let gpus = gpu_count(node);
    match unit {
        Unit::Claim(_) => Some((Certainty::Observed, "they reference one ResourceClaim")),
        Unit::Hami => {
            if !a.uuids.is_disjoint(&b.uuids) {
                Some((
                    Certainty::Observed,
                    "HAMi's allocation names the same GPU for both",
                ))
            } else if a.all_pinned && b.all_pinned {
                None
            } else {
                Some(judge(pigeonhole(1, 1, 1, gpus), ONE_GPU))
            }
        }
        Unit::Fraction(_) => Some(judge(pigeonhole(1, 1, 1, gpus), ONE_GPU)),
        Unit::SharedGpu { resource } => {
            let replicas = u64::from(node.sharing.replicas_for(resource));
            let reason = if gpus == 1 { ONE_GPU } else { PIGEONHOLE };
            Some(judge(
                pigeonhole(a.demand, b.demand, replicas, gpus),
                reason,
            ))
        }
        Unit::SharedMigInstance { profile } => {
            let replicas = u64::from(node.sharing.replicas_for(&catalogue::mig_resource(profile)));
            let instances = instances_of(node, profile);
            let reason = if instances == 1 {
                ONE_INSTANCE
            } else {
                PIGEONHOLE_MIG
            };
            Some(judge(
                pigeonhole(a.demand, b.demand, replicas, instances),
                reason,
            ))
        }
        Unit::Own => None,
    }
}

/// A certainty with `reason` when observed, else the reason for `possible`.
fn judge(c: Certainty, reason: &'static str) -> Judged {
    match c {
        Certainty::Observed => (c, reason),
        Certainty::Possible => (c, POSSIBLE),
        Certainty::Permitted => (c, PERMITTED),
    }
}

/// `observed` when replicas `a` and `b` (of `per_unit` replicas per unit) cannot sit on disjoint units
/// among `units`; `possible` otherwise or when the unit count is unknown.
fn pigeonhole(a: u64, b: u64, per_unit: u64, units: u64) -> Certainty {
    let per_unit = per_unit.max(1);
    let need = a.max(1).div_ceil(per_unit) + b.max(1).div_ceil(per_unit);
    if units > 0 && need > units {
        Certainty::Observed
    } else {
        Certainty::Possible
    }
}

/// How sure it is that two MIG workloads sit on different instances of one physical GPU of `node`:
/// some GPU carries an instance each may get (two instances when it is the same profile). `observed`
/// when that GPU is the only one either may get; `None` when no GPU can hold both.
fn mig_gpu_certainty(
    node: &GpuNode,
    a: &Option<BTreeSet<String>>,
    b: &Option<BTreeSet<String>>,
) -> Option<Judged> {
    // Runs for every pair of MIG workloads on a node, so it allocates nothing.
    let may_get = |profiles: &Option<BTreeSet<String>>, instance: &str| {
        profiles.as_ref().is_none_or(|set| {
            set.iter()
                .any(|p| catalogue::is_plugin_spelling(instance, p))
        })
    };
    let offers = |profiles: &Option<BTreeSet<String>>, g: &PhysicalGpu| {
        (g.mig_enabled || !g.mig.is_empty()) && g.mig.iter().any(|s| may_get(profiles, &s.profile))
    };
    // A GPU holds both when it has two different instances, one each may get (of one profile when
    // the GPU has two of it).
    let holds_both = |gpu: &PhysicalGpu| {
        gpu.mig.iter().enumerate().any(|(i, x)| {
            may_get(a, &x.profile)
                && gpu
                    .mig
                    .iter()
                    .enumerate()
                    .any(|(j, y)| i != j && may_get(b, &y.profile))
        })
    };
    let count = |p| node.gpus.iter().filter(|g| offers(p, g)).count();
    let both = node
        .gpus
        .iter()
        .any(|g| offers(a, g) && offers(b, g) && holds_both(g));
    if !both {
        return None;
    }
    let (count_a, count_b) = (count(a), count(b));
    if count_a == 1 && count_b == 1 {
        Some((
            Certainty::Observed,
            "one GPU of the node carries the instances both can get",
        ))
    } else {
        Some((Certainty::Possible, POSSIBLE))
    }
}
