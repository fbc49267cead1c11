//! The co-location analysis: for every GPU node, which tenants' workloads are or may be on the same
//! GPU, the same MIG instance, the same MPS server, or the same node, and how sure the audit is of it.
//!
//! The result is a list of [`Site`]s, the shared things: per GPU node, the node, each shared device
//! unit (split by the devices the objects pin workloads to) and each MIG GPU with the tenants scheduled
//! there; and per *atom* (GPU nodes of one node group admitted by the same permitted node sets) the
//! tenants whose templates or pending pods may be placed there, with those scheduled there. A site
//! holds its tenants, never their pairs: [`Site::meet`] judges two of them. Computed once per audit;
//! the rules, the groups section, the blast radius and the matrix read it.
//!
//! Certainty (product spec, "Certainty of a finding"):
//!
//! - `observed`: the objects prove the co-location: a scheduler's records name the same GPU for both
//!   (HAMi's and Volcano's allocation annotations, KAI Scheduler's GPU group and the GPUs it gives a
//!   fraction: `RecordedDevice`, compared in one place, [`unit_pins`] and the MIG GPUs of
//!   `Colocation::scheduled_sites`), while records naming different GPUs keep two tenants apart; the
//!   cluster recorded one device, or partitions of one GPU, as allocated to both (DRA claims'
//!   allocations, `recorded.rs`); the node has one GPU; a shared MIG profile has one instance on the
//!   node; or, more
//!   generally, the replicas the two tenants hold cannot be packed onto disjoint GPUs (instances) of the
//!   node (pigeonhole). Two pods scheduled on one node are observed to share that node.
//! - `possible`: both are scheduled on the node and its sharing configuration lets the device plugin put
//!   them on the same GPU or instance.
//! - `permitted`: at least one of them is not scheduled there (a pod template, a pending pod), but its
//!   scheduling constraints allow the node.
//!
//! **Architecture invariant:** nothing here is quadratic in pods or tenants. Scheduled workloads are
//! grouped by node, device unit and tenant; unscheduled ones by tenant, permitted node set and request,
//! and nodes split into atoms by the sets that admit them, never compared per pair of pods or of
//! tenants. Two workloads of one tenant are never a pair.

use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{
    AllocationPolicy, DeviceId, DeviceSlot, DraStrategy, Fleet, GpuNode, MigStrategy, NodeId,
    NodeSetId, PhysicalDevice, PhysicalGpu, SharingStrategy, Workload, WorkloadId, WorkloadKind,
};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::resource;
use gpu_trust_model::Certainty;
use gpu_trust_model::ObjectRef;
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::Arc;

mod compute;
mod recorded;

/// What two workloads on one node may share on the device.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// GPUs the device plugin advertises as several replicas of one resource (time-slicing, MPS).
    SharedGpu { resource: String },
    /// Instances of one MIG profile advertised as several replicas (time-slicing or MPS inside MIG).
    SharedMigInstance { profile: String },
    /// GPUs HAMi splits into vGPUs.
    Hami,
    /// GPUs a fractional scheduler (its row of the isolation table) hands out in fractions.
    Fraction(Mechanism),
    /// The device of one DRA ResourceClaim (`namespace/name`), whoever references it.
    Claim(String),
    /// Devices a DRA driver publishes for several claims at once (`allowMultipleAllocations`,
    /// consumable capacity): GPUs, or MIG devices (`mig`).
    Consumable { mig: bool },
    /// Nothing shared on the device: a whole GPU or a MIG instance of its own.
    Own,
}

impl Unit {
    /// Whether two workloads on this unit may run on one GPU or instance.
    pub fn is_shared(&self) -> bool {
        !matches!(self, Unit::Own)
    }

    /// Whether the scheduler that hands this unit out records which device each workload got
    /// (HAMi's and Volcano's vGPUs, a fraction whose row names where its scheduler records them):
    /// then its records decide who shares a device.
    pub fn recorded(&self) -> bool {
        let records = |m: &Mechanism| {
            m.row()
                .request
                .fraction
                .is_some_and(|f| !f.recorded.is_empty())
        };
        matches!(self, Unit::Hami) || matches!(self, Unit::Fraction(m) if records(m))
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
        match &claim.claim {
            _ if claim.shareable => Unit::Consumable {
                mig: claim.strategy.is_mig(),
            },
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

/// What makes a node group: the GPU model, the sharing strategy and replicas, the MIG strategy and
/// layout, HAMi; as one line, for stable keys (`H100-SXM5-80GB time-slicing nvidia.com/gpu=4`).
pub fn group_signature(node: &GpuNode) -> String {
    let mut out = node
        .model
        .clone()
        .or_else(|| node.product.clone())
        .unwrap_or_else(|| "unknown-gpu".to_string());
    let strategy = match node.sharing.strategy {
        SharingStrategy::None => "exclusive",
        s => s.as_str(),
    };
    let _ = write!(out, " {strategy}");
    for (resource, replicas) in &node.sharing.replicas {
        let _ = write!(out, " {resource}={replicas}");
    }
    let layouts: BTreeSet<Vec<&str>> = node
        .gpus
        .iter()
        .filter(|g| !g.mig.is_empty())
        .map(|g| {
            let mut p: Vec<&str> = g.mig.iter().map(|s| s.profile.as_str()).collect();
            p.sort_unstable();
            p
        })
        .collect();
    for layout in layouts {
        let _ = write!(out, " mig[{}]", layout.join(","));
    }
    if node.hami {
        out.push_str(" hami");
    }
    out
}

/// Physical GPUs on a node (the label count, else the GPUs listed).
pub fn gpu_count(node: &GpuNode) -> u64 {
    u64::from(
        node.count
            .max(u32::try_from(node.gpus.len()).unwrap_or(u32::MAX)),
    )
}

/// A certainty with the reason for it.
pub type Judged = (Certainty, &'static str);

/// Why a co-location is `possible`.
pub const POSSIBLE: &str =
    "they run there and the sharing configuration lets the device plugin put them together";
/// Why a co-location is `possible` where the device plugin packs replicas (`sharedDevicesAllocationPolicy:
/// packed`, device plugin v0.20.0): it hands out the replicas of the GPU with the most already
/// allocated first, so pods on one node pile onto one GPU until it is full.
const POSSIBLE_PACKED: &str =
    "they run there and the device plugin packs replicas onto the GPU that already has the most (allocation policy packed)";
/// Why a co-location is `possible` where the device plugin spreads replicas (policy `distributed`,
/// its default): the GPU with the fewest allocated first, which keeps pods apart only while every
/// GPU has a free replica of its own and no pod has come and gone.
const POSSIBLE_DISTRIBUTED: &str =
    "they run there; the device plugin spreads replicas over the GPUs (allocation policy distributed), which keeps pods apart only until every GPU holds one";
/// Why a co-location is `permitted`.
pub const PERMITTED: &str =
    "not together now, but no node selector, required affinity or taint keeps them apart";
const ONE_GPU: &str = "the node has one GPU";
const PINNED: &str = "they are pinned to the same device";
const PINNED_GPU: &str = "they are pinned to instances of the same GPU";
const PIGEONHOLE: &str = "their replicas cannot fit on separate GPUs of the node";
const ONE_INSTANCE: &str = "the node has one instance of that profile";
const PIGEONHOLE_MIG: &str = "their replicas cannot fit on separate instances of the profile";
const SAME_NODE: &str = "they are scheduled there";
const SAME_CLUSTER: &str = "their namespaces are in one cluster";
const RECORDED_SAME_GPU: &str = "the scheduler's records name the same GPU for both";
const ONE_MIG_GPU: &str = "one GPU of the node carries the instances both can get";
const RECORDED_DEVICE: &str = "the cluster recorded the same device as allocated to both";
const RECORDED_GPU: &str = "the cluster recorded instances of the same GPU as allocated to both";

/// What the members of a [`Site`] share: the model's sharing level.
pub use gpu_trust_model::isolation::Level;

/// One tenant at a site.
#[derive(Debug, Clone, Default)]
pub struct Member {
    /// It may be placed on any node of the site (a template or pending pod the site's nodes
    /// admit). A member that is only scheduled there (`may` false) meets the members that may be
    /// placed there; two scheduled members meet where they are scheduled together (a scheduled site).
    pub may: bool,
    /// Its workloads at the site, in fleet order.
    pub workloads: Vec<WorkloadId>,
    /// Replicas of the device unit it holds (scheduled device sites).
    demand: u64,
    /// The objects pin it to the site's device (a scheduled device or MIG GPU site split by device).
    pinned: bool,
    /// GPUs of the node that carry an instance it may get (scheduled MIG GPU sites).
    mig_gpus: usize,
}

/// How two members of a site are judged.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Judge {
    /// A permitted site: two members meet when one of them may be placed there.
    Permitted,
    /// Scheduled on one node: they meet there.
    SameNode,
    /// Scheduled on one node and drawing from one device unit (or one pinned device of it).
    Device { unit: Unit, pin: Option<Pin> },
    /// Scheduled on one node, on instances of one physical GPU.
    MigGpu,
    /// Recorded by the cluster as allocated one device (a device site) or partitions of one GPU (a
    /// MIG GPU site), named here.
    Recorded(DeviceId),
    /// One API server: every two members share it.
    Cluster,
}

/// A device the objects pin workloads to: a slot ingest resolved, or the physical device a
/// scheduler recorded.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Pin {
    Slot(DeviceSlot),
    Recorded(PhysicalDevice),
}

impl Pin {
    /// Pins of one kind can be compared: two of them name one device when they are equal.
    fn kind(&self) -> u8 {
        match self {
            Pin::Slot(_) => 0,
            Pin::Recorded(d) => record_kind(d),
        }
    }
}

/// Records of one kind can be compared: two of them name one device when they are equal.
fn record_kind(device: &PhysicalDevice) -> u8 {
    match device {
        PhysicalDevice::Gpu(_) => 1,
        PhysicalDevice::GpuIndex(_) => 2,
        PhysicalDevice::KaiGroup(_) => 3,
    }
}

/// A shared thing: tenants that share one GPU (or instance), the instances of one GPU, one node, a set
/// of nodes they may all be placed on, or the API server. Every two members meet there, except that in
/// a permitted site two members that are only scheduled there do not (they meet in the scheduled site
/// of a node they share).
#[derive(Debug, Clone)]
pub struct Site {
    pub level: Level,
    /// The node group (GPU model and sharing configuration) of its nodes; `None` for the API server.
    pub group: Option<usize>,
    /// Its nodes, sorted: one for a scheduled site, the admitting nodes of a permitted site, none for
    /// the API server.
    pub nodes: Arc<[NodeId]>,
    /// Whether it is a permitted site: nodes that templates or pending pods may be placed on, where
    /// two members that are only scheduled there do not meet.
    pub permitted: bool,
    pub members: BTreeMap<TenantId, Member>,
    judge: Judge,
    /// The device unit the members draw from (device sites).
    unit: Option<Unit>,
}

impl Site {
    /// The API server shared by `tenants` (a control-plane site).
    pub fn control_plane(tenants: impl IntoIterator<Item = TenantId>) -> Site {
        Site {
            level: Level::ControlPlane,
            group: None,
            nodes: Arc::from(Vec::new()),
            permitted: false,
            members: tenants
                .into_iter()
                .map(|t| {
                    (
                        t,
                        Member {
                            may: true,
                            ..Member::default()
                        },
                    )
                })
                .collect(),
            judge: Judge::Cluster,
            unit: None,
        }
    }

    /// Whether two members meet here, and how sure that is; `None` when they do not.
    pub fn meet(&self, fleet: &Fleet, a: &Member, b: &Member) -> Option<Judged> {
        match &self.judge {
            Judge::Permitted => (a.may || b.may).then_some((Certainty::Permitted, PERMITTED)),
            Judge::SameNode => Some((Certainty::Observed, SAME_NODE)),
            Judge::Cluster => Some((Certainty::Observed, SAME_CLUSTER)),
            Judge::Recorded(_) => Some((Certainty::Observed, self.uniform_reason())),
            Judge::Device { unit, pin } => {
                if a.pinned && b.pinned {
                    let reason = match pin {
                        Some(Pin::Recorded(_)) => RECORDED_SAME_GPU,
                        _ => PINNED,
                    };
                    return Some((Certainty::Observed, reason));
                }
                let node = self.node_gpu(fleet)?;
                Some(unit_certainty(unit, node, a.demand, b.demand))
            }
            Judge::MigGpu => {
                if a.pinned && b.pinned {
                    return Some((Certainty::Observed, PINNED_GPU));
                }
                if a.mig_gpus == 1 && b.mig_gpus == 1 {
                    return Some((Certainty::Observed, ONE_MIG_GPU));
                }
                Some((Certainty::Possible, POSSIBLE))
            }
        }
    }

    /// The members in classes that [`Site::meet`] judges alike: two members of one class meet
    /// every member of the site in the same way, so pairs are counted class by class, never member
    /// by member. A class holds the members of one key (what `meet` reads of a member: whether it
    /// may be placed there, is pinned, how many units its demand needs, whether one MIG GPU carries
    /// its instances) and one `extra` value (what the caller tells apart besides), in key order,
    /// its tenants in member order. The demand counts in units of the device up to the units of the
    /// node (more cannot make the pigeonhole surer), so the classes of a node are few, whatever its
    /// tenants.
    pub fn classes<K: Ord>(&self, fleet: &Fleet, extra: impl Fn(TenantId) -> K) -> Vec<Class<'_>> {
        let units = self.demand_units(fleet);
        let mut by_key: BTreeMap<(MeetKey, K), Class<'_>> = BTreeMap::new();
        for (t, m) in &self.members {
            let key = match &self.judge {
                Judge::Permitted => MeetKey {
                    may: m.may,
                    ..MeetKey::default()
                },
                Judge::SameNode | Judge::Cluster | Judge::Recorded(_) => MeetKey::default(),
                Judge::Device { .. } => MeetKey {
                    pinned: m.pinned,
                    units: units.map_or(0, |(per, n)| m.demand.max(1).div_ceil(per).min(n)),
                    ..MeetKey::default()
                },
                Judge::MigGpu => MeetKey {
                    pinned: m.pinned,
                    one_mig_gpu: m.mig_gpus == 1,
                    ..MeetKey::default()
                },
            };
            by_key
                .entry((key, extra(*t)))
                .or_insert_with(|| Class {
                    rep: m,
                    tenants: Vec::new(),
                })
                .tenants
                .push(*t);
        }
        by_key.into_values().collect()
    }

    /// For a device site whose certainty depends on the members' demand (replicated GPUs or MIG
    /// instances): the replicas per unit and the units of the node; `None` where demand decides
    /// nothing (no units known, or a unit whose certainty does not read it).
    fn demand_units(&self, fleet: &Fleet) -> Option<(u64, u64)> {
        let Judge::Device { unit, .. } = &self.judge else {
            return None;
        };
        let node = self.node_gpu(fleet)?;
        let (per, units) = match unit {
            Unit::SharedGpu { resource } => (node.sharing.replicas_for(resource), gpu_count(node)),
            Unit::SharedMigInstance { profile } => (
                node.sharing.replicas_for(&catalogue::mig_resource(profile)),
                instances_of(node, profile),
            ),
            _ => return None,
        };
        // `pigeonhole` with no units known judges every demand alike.
        (units > 0).then_some((u64::from(per).max(1), units))
    }

    /// The strongest certainty any two members can meet with here (without judging them all):
    /// `observed` for a node or the API server, `permitted` for a permitted site, else `None` (judge
    /// the pairs).
    pub fn uniform(&self) -> Option<Certainty> {
        match self.judge {
            Judge::Permitted => Some(Certainty::Permitted),
            Judge::SameNode | Judge::Cluster | Judge::Recorded(_) => Some(Certainty::Observed),
            Judge::Device { .. } | Judge::MigGpu => None,
        }
    }

    /// Why two members meet as [`Site::meet`] says, when the site judges every pair alike.
    pub fn uniform_reason(&self) -> &'static str {
        match self.judge {
            Judge::SameNode => SAME_NODE,
            Judge::Cluster => SAME_CLUSTER,
            Judge::Recorded(_) if self.level == Level::MigGpu => RECORDED_GPU,
            Judge::Recorded(_) => RECORDED_DEVICE,
            _ => PERMITTED,
        }
    }

    fn node_gpu<'f>(&self, fleet: &'f Fleet) -> Option<&'f GpuNode> {
        self.nodes
            .first()
            .and_then(|n| fleet.nodes.get(*n))
            .and_then(|n| n.gpu.as_ref())
    }

    /// The device unit the members draw from (device sites).
    pub fn unit(&self) -> Option<&Unit> {
        self.unit.as_ref()
    }

    /// The objects that record what a site of recorded allocations shares: the ResourceClaims whose
    /// allocations name its device (or a partition of its GPU), sorted; empty for other sites.
    pub fn records(&self, fleet: &Fleet) -> BTreeSet<ObjectRef> {
        let Judge::Recorded(id) = &self.judge else {
            return BTreeSet::new();
        };
        self.members
            .values()
            .flat_map(|m| &m.workloads)
            .filter_map(|w| fleet.workloads.get(*w))
            .flat_map(|w| &w.placement.allocations)
            .filter(|a| match self.level {
                Level::MigGpu => a.parent.as_ref() == Some(id),
                _ => &a.device == id,
            })
            .map(|a| a.record.clone())
            .collect()
    }

    /// Every two members of a permitted site meet unless both are only scheduled there: the number
    /// of pairs that meet, without judging them.
    pub fn permitted_pairs(&self) -> usize {
        let k = self.members.len();
        let scheduled = self.members.values().filter(|m| !m.may).count();
        k * k.saturating_sub(1) / 2 - scheduled * scheduled.saturating_sub(1) / 2
    }
}

/// What [`Site::meet`] reads of a member, in [`Site::classes`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct MeetKey {
    may: bool,
    pinned: bool,
    /// Units of the device its demand needs, up to the units of the node (device sites).
    units: u64,
    one_mig_gpu: bool,
}

/// A tenant's class in each of some sites: (site, class) in site order. Tenants with the same
/// signature meet every other tenant alike in those sites.
pub type Signature = Vec<(usize, usize)>;

/// Tenants grouped by their [`Signature`] over some sites' classes: two tenants of one group, or
/// of two groups, meet alike in those sites (save for the trust between them).
#[derive(Debug, Clone, Default)]
pub struct Grouped {
    /// Per group: its signature and its tenants, sorted.
    pub groups: Vec<(Signature, Vec<TenantId>)>,
    /// The group of each tenant.
    pub of: BTreeMap<TenantId, usize>,
    /// Per site, the groups there.
    pub present: Vec<Vec<usize>>,
}

impl Grouped {
    /// Groups the tenants of `sites`: per site, the tenants of each class, in class order.
    pub fn new<'t, S, C>(sites: S) -> Grouped
    where
        S: IntoIterator<Item = C>,
        C: IntoIterator<Item = &'t [TenantId]>,
    {
        let mut signature: BTreeMap<TenantId, Signature> = BTreeMap::new();
        let mut count = 0;
        for (i, classes) in sites.into_iter().enumerate() {
            count = i + 1;
            for (c, tenants) in classes.into_iter().enumerate() {
                for t in tenants {
                    signature.entry(*t).or_default().push((i, c));
                }
            }
        }
        let mut by_signature: BTreeMap<Signature, Vec<TenantId>> = BTreeMap::new();
        for (t, key) in signature {
            by_signature.entry(key).or_default().push(t);
        }
        let mut out = Grouped {
            present: vec![Vec::new(); count],
            ..Grouped::default()
        };
        for (g, (key, tenants)) in by_signature.into_iter().enumerate() {
            for (i, _) in &key {
                out.present[*i].push(g);
            }
            for t in &tenants {
                out.of.insert(*t, g);
            }
            out.groups.push((key, tenants));
        }
        out
    }

    /// The groups that share a site with `g` (`g` itself among them), sorted: the only ones its
    /// tenants can meet, found through the sites, never by trying every group.
    pub fn neighbours(&self, g: usize) -> BTreeSet<usize> {
        self.groups[g]
            .0
            .iter()
            .flat_map(|(i, _)| self.present[*i].iter().copied())
            .collect()
    }
}

/// Members of a site that [`Site::meet`] judges alike ([`Site::classes`]).
#[derive(Debug, Clone)]
pub struct Class<'s> {
    /// One of them: how it meets another class's is how each of them does.
    pub rep: &'s Member,
    /// Its tenants, sorted.
    pub tenants: Vec<TenantId>,
}

impl Class<'_> {
    /// The pairs of members of `self` and `other` (the same class: its pairs among themselves).
    pub fn pairs_with(&self, other: &Class<'_>, same: bool) -> usize {
        let n = self.tenants.len();
        if same {
            n * n.saturating_sub(1) / 2
        } else {
            n * other.tenants.len()
        }
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
    /// The GPU model (catalogue id, else the product label): one group holds one kind of GPU.
    model: Option<String>,
    strategy: SharingStrategy,
    replicas: Vec<(String, u32)>,
    mig_strategy: MigStrategy,
    layout: Vec<Vec<String>>,
    hami: bool,
}

impl ConfigKey {
    fn of(node: &GpuNode) -> ConfigKey {
        ConfigKey {
            model: node.model.clone().or_else(|| node.product.clone()),
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
    dra: Option<(DraStrategy, Option<String>, bool)>,
    fraction: Option<Mechanism>,
    hami: Option<Option<String>>,
    resource: Option<String>,
}

impl RequestKey {
    fn of(w: &Workload) -> RequestKey {
        let gpu = &w.gpu;
        RequestKey {
            dra: gpu
                .dra
                .first()
                .map(|c| (c.strategy, c.claim.clone(), c.shareable)),
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
    /// The physical devices schedulers recorded for its workloads.
    records: BTreeSet<PhysicalDevice>,
    /// Every one of its workloads has a record.
    all_recorded: bool,
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
            records: BTreeSet::new(),
            all_recorded: true,
            mig_profiles: None,
            observed_devices: BTreeSet::new(),
            devices: Some(BTreeSet::new()),
        }
    }
}

impl Members {
    fn add(&mut self, wid: WorkloadId, w: &Workload) {
        self.workloads.push(wid);
        if w.placement.recorded.is_empty() {
            self.all_recorded = false;
        }
        self.records
            .extend(w.placement.recorded.iter().map(|r| r.device.clone()));
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

    /// Whether a scheduler recorded a device for every one of its workloads.
    fn recorded(&self) -> bool {
        self.all_recorded && !self.records.is_empty()
    }

    /// The devices the objects restrict the tenant to: resolved slots, else (on a unit whose
    /// scheduler records allocations) the recorded devices when every workload has one; `None`
    /// when it may be on any device of the unit.
    fn pins(&self, recorded: bool) -> Option<BTreeSet<Pin>> {
        match &self.devices {
            Some(d) if !d.is_empty() => Some(d.iter().copied().map(Pin::Slot).collect()),
            _ if recorded && self.recorded() => {
                Some(self.records.iter().cloned().map(Pin::Recorded).collect())
            }
            _ => None,
        }
    }

    /// Whether the evidence puts the tenant on `pin` (a resolved slot observed there, or a
    /// scheduler's record, which is an observation).
    fn observed_at(&self, pin: &Pin) -> bool {
        match pin {
            Pin::Slot(slot) => self.observed_devices.contains(slot),
            Pin::Recorded(device) => self.records.contains(device),
        }
    }

    /// Whether the tenant may be on an instance of GPU `gpu` of `node`: its resolved slots name the
    /// GPU, or (without slots) the GPU carries an instance of a profile it may get.
    fn on_mig_gpu(&self, node: &GpuNode, gpu: usize) -> bool {
        let Some(g) = node.gpus.get(gpu) else {
            return false;
        };
        match &self.devices {
            Some(d) if !d.is_empty() => d.iter().any(|s| s.gpu as usize == g.index as usize),
            _ => offers(&self.mig_profiles, g),
        }
    }

    /// Whether the evidence puts the tenant on an instance of `gpu`.
    fn observed_on_gpu(&self, node: &GpuNode, gpu: usize) -> bool {
        node.gpus
            .get(gpu)
            .is_some_and(|g| self.observed_devices.iter().any(|s| s.gpu == g.index))
    }
}

/// Each member's pins on one device unit, comparable with one another: the one place where "the
/// same recorded device, two tenants" becomes observed sharing, and records naming different
/// devices keep tenants apart.
///
/// On a unit whose scheduler records allocations (`recorded`), where every member's workloads
/// have records and no device slot was observed, the records are the evidence and the slots only
/// candidates, so members pin by record. Pins of different kinds (a slot for one member, a UUID
/// for another, a UUID and a KAI group) cannot tell whether two members are on one GPU: then no
/// member is pinned, and every two meet.
fn unit_pins<T: Ord + Copy>(
    members: &BTreeMap<T, Members>,
    recorded: bool,
) -> BTreeMap<T, Option<BTreeSet<Pin>>> {
    let by_record = recorded
        && members
            .values()
            .all(|m| m.recorded() && m.observed_devices.is_empty());
    let mut pins: BTreeMap<T, Option<BTreeSet<Pin>>> = members
        .iter()
        .map(|(t, m)| {
            let pins = if by_record {
                Some(m.records.iter().cloned().map(Pin::Recorded).collect())
            } else {
                m.pins(recorded)
            };
            (*t, pins)
        })
        .collect();
    let kinds: BTreeSet<u8> = pins.values().flatten().flatten().map(Pin::kind).collect();
    if kinds.len() > 1 {
        pins.values_mut().for_each(|p| *p = None);
    }
    pins
}

/// Whether `profiles` (plugin spelling; `None` for any) may get an instance of `gpu`.
fn may_get(profiles: &Option<BTreeSet<String>>, instance: &str) -> bool {
    profiles.as_ref().is_none_or(|set| {
        set.iter()
            .any(|p| catalogue::is_plugin_spelling(instance, p))
    })
}

/// Whether a MIG GPU carries an instance of a profile in `profiles`.
fn offers(profiles: &Option<BTreeSet<String>>, g: &PhysicalGpu) -> bool {
    (g.mig_enabled || !g.mig.is_empty()) && g.mig.iter().any(|s| may_get(profiles, &s.profile))
}

/// The co-location analysis of one fleet under one tenancy.
#[derive(Debug, Clone, Default)]
pub struct Colocation {
    /// Every shared thing below the control plane where at least two tenants meet, in a fixed order:
    /// per GPU node (in node order) its node, device units and MIG GPUs, then the permitted sites.
    pub sites: Vec<Site>,
    /// The sites each tenant is a member of, in site order.
    pub sites_of: BTreeMap<TenantId, Vec<usize>>,
    /// Tenants with scheduled workloads on each GPU node (DaemonSets count on every node they select).
    placed: BTreeMap<NodeId, BTreeMap<TenantId, Vec<WorkloadId>>>,
    /// Interned permitted GPU-node sets of unscheduled workloads.
    sets: Vec<Arc<[NodeId]>>,
    set_index: BTreeMap<Arc<[NodeId]>, usize>,
    /// The sets that contain each GPU node.
    sets_of_node: BTreeMap<NodeId, Vec<usize>>,
    /// Tenants with unscheduled workloads permitted on each set.
    set_tenants: Vec<BTreeMap<TenantId, Vec<WorkloadId>>>,
    /// Node group (GPU model and sharing configuration) of each GPU node.
    node_class: BTreeMap<NodeId, usize>,
    /// A representative node of each group.
    class_rep: Vec<NodeId>,
    /// Per workload: the set it is permitted on (unscheduled), or the nodes it runs on.
    workload_set: BTreeMap<WorkloadId, usize>,
    workload_nodes: BTreeMap<WorkloadId, Vec<NodeId>>,
    /// How each scheduled workload gets its GPU on each GPU node it runs on (none for those that
    /// request no GPU), computed once.
    uses: BTreeMap<(NodeId, WorkloadId), DeviceUse>,
}

/// How sure it is that two scheduled tenants holding `a` and `b` replicas share one GPU or instance of
/// `unit` on `node` (the objects pin neither to a device that decides it).
fn unit_certainty(unit: &Unit, node: &GpuNode, a: u64, b: u64) -> Judged {
    let gpus = gpu_count(node);
    match unit {
        Unit::Claim(_) => (Certainty::Observed, "they reference one ResourceClaim"),
        // Two claims on a node of one GPU share it; MIG devices of one GPU are several.
        Unit::Consumable { mig: false } => judge(pigeonhole(1, 1, 1, gpus), ONE_GPU),
        Unit::Consumable { mig: true } => (Certainty::Possible, POSSIBLE),
        Unit::Hami | Unit::Fraction(_) => judge(pigeonhole(1, 1, 1, gpus), ONE_GPU),
        Unit::SharedGpu { resource } => {
            let replicas = u64::from(node.sharing.replicas_for(resource));
            let reason = if gpus == 1 { ONE_GPU } else { PIGEONHOLE };
            allocation(node, judge(pigeonhole(a, b, replicas, gpus), reason))
        }
        Unit::SharedMigInstance { profile } => {
            let replicas = u64::from(node.sharing.replicas_for(&catalogue::mig_resource(profile)));
            let instances = instances_of(node, profile);
            let reason = if instances == 1 {
                ONE_INSTANCE
            } else {
                PIGEONHOLE_MIG
            };
            allocation(node, judge(pigeonhole(a, b, replicas, instances), reason))
        }
        Unit::Own => (Certainty::Possible, POSSIBLE),
    }
}

/// A `possible` co-location on replicated GPUs or MIG instances, with the reason the node's device
/// plugin allocation policy gives, when its config names one (device plugin v0.20.0,
/// `flags.plugin.sharedDevicesAllocationPolicy`). The policy decides where the next replica goes,
/// not where pods that have come and gone left the others, so it never proves two pods apart or
/// together: the certainty stays.
fn allocation(node: &GpuNode, judged: Judged) -> Judged {
    match (judged.0, node.sharing.allocation_policy) {
        (Certainty::Possible, Some(AllocationPolicy::Packed)) => (judged.0, POSSIBLE_PACKED),
        (Certainty::Possible, Some(AllocationPolicy::Distributed)) => {
            (judged.0, POSSIBLE_DISTRIBUTED)
        }
        _ => judged,
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

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Co-location analyses computed on this thread (tests count them: one per audit).
        pub(crate) static COMPUTED: Cell<usize> = const { Cell::new(0) };
    }

    /// Set while a test audits with every pair judged on its own, the reference that counting by
    /// classes ([`super::Site::classes`]) is compared with (`crate::pairwise_tests`).
    pub(crate) static PAIRWISE: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Whether the audit judges pair by pair ([`PAIRWISE`]).
    pub(crate) fn pairwise() -> bool {
        PAIRWISE.load(std::sync::atomic::Ordering::SeqCst)
    }

    use super::{unit_pins, DeviceSlot, Members, PhysicalDevice, Pin};
    use std::collections::{BTreeMap, BTreeSet};

    fn slot(gpu: u32) -> DeviceSlot {
        DeviceSlot {
            gpu,
            instance: None,
        }
    }

    /// A tenant on a HAMi unit: its allocations' UUIDs, its candidate slots, the observed ones.
    fn member(uuids: &[&str], candidates: &[u32], observed: &[u32]) -> Members {
        Members {
            records: uuids
                .iter()
                .map(|u| PhysicalDevice::Gpu(u.to_string()))
                .collect(),
            all_recorded: !uuids.is_empty(),
            observed_devices: observed.iter().copied().map(slot).collect(),
            devices: Some(candidates.iter().copied().map(slot).collect()),
            ..Members::default()
        }
    }

    fn uuids(pins: &Option<BTreeSet<Pin>>) -> Vec<&str> {
        pins.iter()
            .flatten()
            .filter_map(|p| match p {
                Pin::Recorded(PhysicalDevice::Gpu(u)) => Some(u.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn hami_allocations_pin_by_uuid_over_candidate_slots() {
        // A node with two GPUs and no HAMi register: both tenants may be on either GPU, and their
        // allocations name the same one.
        let members = BTreeMap::from([
            (1, member(&["GPU-a"], &[0, 1], &[])),
            (2, member(&["GPU-a"], &[0, 1], &[])),
        ]);
        let pins = unit_pins(&members, true);
        assert_eq!(uuids(&pins[&1]), ["GPU-a"]);
        assert_eq!(uuids(&pins[&2]), ["GPU-a"]);
        // On a unit whose scheduler records nothing the UUIDs are not allocations: the slots stay.
        let pins = unit_pins(&members, false);
        assert!(uuids(&pins[&1]).is_empty() && pins[&1].is_some());
    }

    #[test]
    fn pins_of_different_kinds_pin_no_one() {
        // One tenant's pod has no allocation annotation: it may be anywhere, and the other's UUID
        // cannot be compared with its slots, so every two meet.
        let members = BTreeMap::from([
            (1, member(&["GPU-a"], &[], &[])),
            (2, member(&[], &[0, 1], &[])),
        ]);
        let pins = unit_pins(&members, true);
        assert!(pins.values().all(Option::is_none), "{pins:?}");
        // A UUID and a KAI group may or may not be one GPU.
        let mut group = member(&[], &[], &[]);
        group.records = BTreeSet::from([PhysicalDevice::KaiGroup("g".into())]);
        group.all_recorded = true;
        group.devices = None;
        let members = BTreeMap::from([(1, member(&["GPU-a"], &[], &[])), (2, group)]);
        let pins = unit_pins(&members, true);
        assert!(pins.values().all(Option::is_none), "{pins:?}");
        // Observed slots are evidence: they are kept when every member has them.
        let members = BTreeMap::from([
            (1, member(&["GPU-a"], &[0], &[0])),
            (2, member(&["GPU-a"], &[0], &[0])),
        ]);
        let pins = unit_pins(&members, true);
        assert!(pins
            .values()
            .all(|p| p.as_ref().is_some_and(|p| p.contains(&Pin::Slot(slot(0))))));
    }
}
