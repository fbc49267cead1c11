//! The solver: from a [`PlanInput`] to a [`Plan`].
//!
//! 1. **Pool.** Each workload goes to the pool of the inventory where one replica costs the smallest
//!    share of a GPU (or the pool it pins); when a pool runs out of nodes, its workloads with
//!    unplaced replicas move to their next pool and both are planned again.
//! 2. **Mechanism.** Per workload: training gets gangs of whole dedicated GPUs on one node; a
//!    confidential tenant gets whole GPUs on nodes with CC on; inference and batch get the smallest MIG
//!    instance that holds the peak memory and compute (on models without MIG: latency-critical a whole
//!    GPU, the others an MPS share with a pinned memory limit); notebooks get a time-sliced instance or
//!    GPU, sized so that each replica's share of memory holds its peak.
//! 3. **Trust groups.** Tenants that may share a device (trust `full`, no isolation contract) form
//!    sharing groups; groups that may share a GPU (trust above `none` between every two tenants) form
//!    cliques. Time-sliced and MPS devices are filled by one sharing group; MIG GPUs by one clique.
//! 4. **GPUs.** Per clique, the MIG instances are packed into GPU layouts by [`crate::pack`] (the
//!    configuration LP plus exact remainder, never worse than first-fit decreasing). Instances whose
//!    device plugin config would clash on one node (a profile time-sliced for one group and handed out
//!    whole to another) are packed apart.
//! 5. **Nodes.** GPUs and gangs go onto nodes best-fit decreasing, where a node's tenants may share a
//!    node, its sharing config stays one config (per resource one mode and replica count; MPS never
//!    next to MIG), and tenants without trust never have instances of one profile on one node.

use crate::bound;
use crate::exact;
use crate::file::{PlanInput, Pool, Workload};
use crate::pack;
use crate::plan::*;
use crate::spec::MigSpec;
use gpu_trust_model::fleet::{SharingStrategy, WorkloadClass};
use gpu_trust_model::isolation::{Mechanism, Property};
use gpu_trust_model::resource;
use gpu_trust_model::Trust;
use gpu_trust_policy::{Contract, Latency};
use std::collections::{BTreeMap, BTreeSet};

/// The most MPS clients per GPU the device plugin's MPS sharing supports (NVIDIA k8s-device-plugin
/// README, MPS sharing: at most 48 replicas, as the MPS server allows on Volta and later).
pub const MPS_MAX_REPLICAS: u32 = 48;

/// The most replicas the planner advertises for one time-sliced device, whatever the policy allows.
const MAX_SHARE_REPLICAS: u32 = 64;

const MIB_PER_GIB: f64 = 1024.0;

/// How MIG instances are packed into GPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// The configuration LP with an exact remainder, or first-fit decreasing where that is better.
    Best,
    /// First-fit decreasing only (the baseline the benchmark compares with).
    FirstFitDecreasing,
    /// The exact pattern ILP under a time limit per trust group, falling back to [`Method::Best`].
    Exact { time_limit_secs: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolveOptions {
    pub method: Method,
    /// Plan for DRA (`plan --dra`): a time-sliced or MPS device is shared by the pods of one
    /// ResourceClaim, and a pod can only name a claim of its own namespace, so each shared device holds
    /// the replicas of one namespace.
    pub dra: bool,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            method: Method::Best,
            dra: false,
        }
    }
}

/// Plans with the default method.
pub fn solve(input: &PlanInput) -> Plan {
    solve_with(input, &SolveOptions::default())
}

/// A replica: workload index and replica number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Rep {
    pub w: usize,
    pub i: u32,
}

/// How a device (whole GPU or MIG instance) is handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Share {
    Exclusive,
    TimeSliced { group: usize, replicas: u32 },
    Mps { group: usize, replicas: u32 },
}

impl Share {
    fn device_sharing(self) -> DeviceSharing {
        match self {
            Share::Exclusive => DeviceSharing::Exclusive,
            Share::TimeSliced { .. } => DeviceSharing::TimeSlicing,
            Share::Mps { .. } => DeviceSharing::Mps,
        }
    }

    fn replicas(self) -> u32 {
        match self {
            Share::Exclusive => 1,
            Share::TimeSliced { replicas, .. } | Share::Mps { replicas, .. } => replicas,
        }
    }
}

/// A device plugin resource of a node: whole GPUs, or one MIG profile (index into the spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Res {
    Gpu,
    Mig(usize),
}

/// The sharing a workload asks for, before replicas are bundled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    Exclusive,
    TimeSliced(u32),
    Mps(u32),
}

/// What one replica of a workload needs in a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Whole dedicated GPUs on one node.
    Gang(u32),
    Whole(Mode),
    Instance(usize, Mode),
}

/// Why a replica is not placed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Miss {
    /// It cannot fit this pool's GPUs at all.
    Fit(String),
    /// The pool ran out of nodes.
    Capacity(String),
}

/// A MIG instance to place: profile (index into the spec), how it is handed out, and its replicas.
pub(crate) type Payload = (usize, Share, Vec<Rep>);
/// A tentative state of a GPU during consolidation: counts, resource keys, tenants.
type Trial = (Vec<u32>, BTreeMap<Res, Share>, BTreeSet<usize>);
/// A node's MIG layouts: GPU index to (profile, start) list.
type LayoutSet = Vec<(u32, Vec<(String, u8)>)>;

/// One GPU-sized (or gang-sized) unit for node packing.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub(crate) gpus: u32,
    pub(crate) clique: usize,
    pub(crate) tenants: BTreeSet<usize>,
    pub(crate) keys: BTreeMap<Res, Share>,
    pub(crate) cc: bool,
    pub(crate) kind: UnitKind,
}

#[derive(Debug, Clone)]
pub(crate) enum UnitKind {
    /// Whole GPUs (a gang, an exclusive GPU, or a shared GPU's replicas).
    Whole { share: Share, members: Vec<Rep> },
    /// One MIG GPU: instance counts and the instances' payloads.
    Mig {
        counts: Vec<u32>,
        instances: Vec<Payload>,
    },
}

impl Unit {
    fn members(&self) -> Vec<Rep> {
        match &self.kind {
            UnitKind::Whole { members, .. } => members.clone(),
            UnitKind::Mig { instances, .. } => {
                instances.iter().flat_map(|(_, _, m)| m.clone()).collect()
            }
        }
    }

    fn has_mig(&self) -> bool {
        matches!(self.kind, UnitKind::Mig { .. })
    }

    fn has_mps(&self) -> bool {
        self.keys.values().any(|s| matches!(s, Share::Mps { .. }))
    }
}

/// A node being filled.
#[derive(Debug, Clone, Default)]
struct NodeFill {
    units: Vec<usize>,
    used: u32,
    tenants: BTreeSet<usize>,
    keys: BTreeMap<Res, Share>,
    /// Tenants using each MIG profile on the node.
    mig_tenants: BTreeMap<usize, BTreeSet<usize>>,
    cliques: BTreeSet<usize>,
    has_mig: bool,
    has_mps: bool,
    cc: Option<bool>,
}

/// What planning one pool gives.
struct PoolResult {
    units: Vec<Unit>,
    nodes: Vec<NodeFill>,
    misses: Vec<(Rep, Miss)>,
    needs: BTreeMap<usize, Need>,
}

struct PoolCtx<'a> {
    input: &'a PlanInput,
    pool: &'a Pool,
    spec: Option<&'a MigSpec>,
    method: Method,
    dra: bool,
}

/// Replicas shared on one device kind, by (group, namespace under DRA, resource, is_mps), each with
/// its own replica bound.
type Bundles<'a> = BTreeMap<(usize, &'a str, Res, bool), Vec<(Rep, u32)>>;

/// MIG instances to place, per clique.
type MigItems = BTreeMap<usize, Vec<Payload>>;

/// Tenants that may share a device (trust `full`, no isolation contract) form sharing groups; groups
/// that may share a GPU (trust above `none` between every two tenants) form cliques.
struct TrustGroups {
    groups: Vec<Vec<usize>>,
    group_of: BTreeMap<usize, usize>,
    clique_of_group: Vec<usize>,
}

impl TrustGroups {
    fn of(input: &PlanInput, tenants: &BTreeSet<usize>) -> TrustGroups {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of: BTreeMap<usize, usize> = BTreeMap::new();
        for &t in tenants {
            let conf = input.tenants[t].confidential;
            let found = groups.iter().position(|g| {
                !conf
                    && g.iter()
                        .all(|&o| !input.tenants[o].confidential && input.may_share_device(t, o))
            });
            let gi = match found {
                Some(gi) => gi,
                None => {
                    groups.push(Vec::new());
                    groups.len() - 1
                }
            };
            groups[gi].push(t);
            group_of.insert(t, gi);
        }
        let mut cliques: Vec<Vec<usize>> = Vec::new();
        let mut clique_of_group: Vec<usize> = vec![0; groups.len()];
        for (gi, g) in groups.iter().enumerate() {
            let conf = g.iter().any(|&t| input.tenants[t].confidential);
            let found = cliques.iter().position(|c| {
                !conf
                    && c.iter().all(|&og| {
                        groups[og].iter().all(|&o| {
                            !input.tenants[o].confidential
                                && g.iter().all(|&t| input.may_share_gpu(t, o))
                        })
                    })
            });
            let ci = match found {
                Some(ci) => ci,
                None => {
                    cliques.push(Vec::new());
                    cliques.len() - 1
                }
            };
            cliques[ci].push(gi);
            clique_of_group[gi] = ci;
        }
        TrustGroups {
            groups,
            group_of,
            clique_of_group,
        }
    }

    /// A unit of whole GPUs for `members`, in the clique of tenant `t`.
    fn whole_unit(
        &self,
        input: &PlanInput,
        gpus: u32,
        share: Share,
        members: Vec<Rep>,
        t: usize,
    ) -> Unit {
        let clique = self.clique_of_group[self.group_of[&t]];
        let tenants_set: BTreeSet<usize> = members
            .iter()
            .map(|r| input.workloads[r.w].tenant)
            .collect();
        Unit {
            gpus,
            clique,
            tenants: tenants_set,
            keys: BTreeMap::from([(Res::Gpu, share)]),
            cc: input.tenants[t].confidential,
            kind: UnitKind::Whole { share, members },
        }
    }
}

fn gib(mib: u64) -> String {
    let g = mib as f64 / MIB_PER_GIB;
    if (g - g.round()).abs() < 0.005 {
        format!("{}GiB", g.round() as u64)
    } else {
        format!("{g:.2}GiB")
    }
}

impl PoolCtx<'_> {
    /// What one replica of `w` needs here, or why it cannot run here.
    fn decide(&self, w: &Workload) -> Result<Need, String> {
        let input = self.input;
        let model = self.pool.model;
        let tenant = &input.tenants[w.tenant];
        let whole_mem = model.memory_mib;
        let peak = w.peak_memory_mib.unwrap_or(0);
        let compute = w.compute.unwrap_or(0.0);
        let too_big = || {
            format!(
                "needs {} per replica; one whole {} has {}",
                gib(peak),
                model.id,
                gib(whole_mem)
            )
        };
        if peak > whole_mem {
            return Err(too_big());
        }
        if tenant.confidential && !model.cc_capable() {
            return Err(format!(
                "tenant {} is confidential and {} does not support confidential computing",
                tenant.name, model.id
            ));
        }
        if w.kind == WorkloadClass::Training {
            if w.gpus > self.pool.gpus_per_node {
                return Err(format!(
                    "training needs {} GPUs on one node; pool {} has {} per node",
                    w.gpus, self.pool.name, self.pool.gpus_per_node
                ));
            }
            return Ok(Need::Gang(w.gpus));
        }
        if tenant.confidential {
            return Ok(Need::Whole(Mode::Exclusive));
        }
        let max_ts = input.max_replicas.max(1);
        let fits = |mem: u64, frac: f64, r: u32| -> bool {
            let r64 = u64::from(r);
            peak.saturating_mul(r64) <= mem && compute * f64::from(r) <= frac + 1e-9
        };
        let most = |mem: u64, frac: f64, cap: u32| -> u32 {
            // More replicas than this per device serve no plan (and bound the loop).
            let cap = cap.min(MAX_SHARE_REPLICAS);
            let mut r = 0;
            while r < cap && fits(mem, frac, r + 1) {
                r += 1;
            }
            r
        };
        match (self.spec, w.kind) {
            (Some(spec), WorkloadClass::Notebook) => {
                // The profile and replica count that give each replica the fewest memory slices.
                let mut best: Option<(f64, usize, u32)> = None;
                for (p, prof) in spec.profiles.iter().enumerate() {
                    let r = most(prof.memory_mib, spec.compute_fraction(p), max_ts);
                    if r == 0 {
                        continue;
                    }
                    let cost = f64::from(prof.memory_slices) / f64::from(r);
                    if best.is_none_or(|(c, _, _)| cost < c - 1e-12) {
                        best = Some((cost, p, r));
                    }
                }
                match best {
                    Some((_, p, r)) if r >= 2 => Ok(Need::Instance(p, Mode::TimeSliced(r))),
                    Some((_, p, _)) => Ok(Need::Instance(p, Mode::Exclusive)),
                    None => Ok(Need::Whole(Mode::Exclusive)),
                }
            }
            (Some(spec), _) => {
                let p = (0..spec.profiles.len()).find(|&p| {
                    spec.profiles[p].memory_mib >= peak
                        && spec.compute_fraction(p) + 1e-9 >= compute
                });
                match p {
                    Some(p) => Ok(Need::Instance(p, Mode::Exclusive)),
                    None => Ok(Need::Whole(Mode::Exclusive)),
                }
            }
            (None, WorkloadClass::Notebook) => {
                let r = most(whole_mem, 1.0, max_ts);
                if r >= 2 {
                    Ok(Need::Whole(Mode::TimeSliced(r)))
                } else {
                    Ok(Need::Whole(Mode::Exclusive))
                }
            }
            (None, _) => {
                if w.latency == Latency::Critical {
                    return Ok(Need::Whole(Mode::Exclusive));
                }
                let r = most(whole_mem, 1.0, MPS_MAX_REPLICAS);
                if r >= 2 && peak > 0 {
                    Ok(Need::Whole(Mode::Mps(r)))
                } else {
                    Ok(Need::Whole(Mode::Exclusive))
                }
            }
        }
    }

    /// The fraction of one GPU a replica takes here (for choosing pools).
    fn cost(&self, need: Need) -> f64 {
        match need {
            Need::Gang(g) => f64::from(g),
            Need::Whole(Mode::Exclusive) => 1.0,
            Need::Whole(Mode::TimeSliced(r)) | Need::Whole(Mode::Mps(r)) => 1.0 / f64::from(r),
            Need::Instance(p, mode) => {
                let Some(spec) = self.spec else { return 1.0 };
                let prof = spec.profiles[p];
                let share = (f64::from(prof.memory_slices) / f64::from(spec.memory_slices))
                    .max(f64::from(prof.compute_slices) / f64::from(spec.compute_slices));
                match mode {
                    Mode::TimeSliced(r) | Mode::Mps(r) => share / f64::from(r),
                    Mode::Exclusive => share,
                }
            }
        }
    }

    /// Plans the pool both with and without moving conflicting time-sliced bundles to other
    /// profiles, and keeps the better: fewer unplaced replicas, then fewer GPUs, then fewer nodes.
    fn plan(&self, workloads: &[usize]) -> PoolResult {
        let mut best = self.plan_once(workloads, false, false);
        let mut variants: Vec<(bool, bool)> = Vec::new();
        let mig = self.spec.is_some() && self.method != Method::FirstFitDecreasing;
        if mig {
            variants.push((true, false));
        }
        if self.method != Method::FirstFitDecreasing && self.uneven_shares(workloads) {
            variants.push((false, true));
            if mig {
                variants.push((true, true));
            }
        }
        let score = |r: &PoolResult| {
            let gpus: u32 = r
                .nodes
                .iter()
                .flat_map(|n| n.units.iter())
                .map(|&u| r.units[u].gpus)
                .sum();
            (r.misses.len(), gpus, r.nodes.len())
        };
        for (remap, split) in variants {
            let other = self.plan_once(workloads, remap, split);
            if score(&other) < score(&best) {
                best = other;
            }
        }
        best
    }

    /// Whether two workloads ask for whole GPUs shared the same way (time-sliced, or MPS) with
    /// different replicas per GPU: then bundling them all at the smaller count is not the only plan
    /// worth trying.
    fn uneven_shares(&self, workloads: &[usize]) -> bool {
        let mut seen: BTreeMap<bool, u32> = BTreeMap::new();
        for &w in workloads {
            let (mps, r) = match self.decide(&self.input.workloads[w]) {
                Ok(Need::Whole(Mode::TimeSliced(r))) => (false, r),
                Ok(Need::Whole(Mode::Mps(r))) => (true, r),
                _ => continue,
            };
            if *seen.entry(mps).or_insert(r) != r {
                return true;
            }
        }
        false
    }

    /// One plan of the pool. `remap` moves time-sliced bundles off profiles another use claims;
    /// `split` bundles the replicas of shared whole GPUs by their own replicas per GPU instead of all at
    /// the smallest, so that one replica that needs a larger share does not shrink everyone's.
    fn plan_once(&self, workloads: &[usize], remap: bool, split: bool) -> PoolResult {
        let input = self.input;
        let (mut needs, mut misses) = self.needs(workloads);
        // Sharing groups, then cliques of groups.
        let tenants: BTreeSet<usize> = needs.keys().map(|&w| input.workloads[w].tenant).collect();
        let tg = TrustGroups::of(input, &tenants);
        let (mut units, mut mig_items) = self.items(&needs, &tg, split);
        if let (Some(spec), true) = (self.spec, remap) {
            self.remap_shared_profiles(spec, &tg, &mut mig_items, &mut needs);
        }
        if let Some(spec) = self.spec {
            self.mig_units(spec, mig_items, &mut units);
        }

        // GPUs that packing per clique and partition left part-empty: empty whole GPUs by moving their
        // instances onto others where trust and the layout allow (never adds a GPU).
        if let (Some(spec), Method::Best | Method::Exact { .. }) = (self.spec, self.method) {
            consolidate(input, spec, &mut units);
            // Then rearrangements across the cliques of each trust component.
            crate::improve::improve(input, spec, &mut units);
        }

        let nodes = self.place(&units, &tenants, &mut misses);
        PoolResult {
            units,
            nodes,
            misses,
            needs,
        }
    }

    /// What one replica of each workload needs here; the replicas of those that cannot run here are
    /// misses.
    fn needs(&self, workloads: &[usize]) -> (BTreeMap<usize, Need>, Vec<(Rep, Miss)>) {
        let input = self.input;
        let mut misses: Vec<(Rep, Miss)> = Vec::new();
        let mut needs: BTreeMap<usize, Need> = BTreeMap::new();
        for &w in workloads {
            let wl = &input.workloads[w];
            match self.decide(wl) {
                Ok(n) => {
                    needs.insert(w, n);
                }
                Err(reason) => {
                    for i in 0..wl.replicas {
                        misses.push((Rep { w, i }, Miss::Fit(reason.clone())));
                    }
                }
            }
        }
        (needs, misses)
    }

    /// The items to pack: whole units directly, MIG instances per clique; the replicas of shared
    /// devices bundled per sharing group (when `split`, whole GPUs by each workload's own replicas per
    /// GPU).
    fn items(
        &self,
        needs: &BTreeMap<usize, Need>,
        tg: &TrustGroups,
        split: bool,
    ) -> (Vec<Unit>, MigItems) {
        let input = self.input;
        let mut units: Vec<Unit> = Vec::new();
        let mut mig_items: MigItems = BTreeMap::new();
        // (group, namespace under DRA, resource, is_mps) -> replicas with their own replica bound.
        let mut bundles: Bundles = BTreeMap::new();
        for (&w, &need) in needs {
            let wl = &input.workloads[w];
            let t = wl.tenant;
            let group = tg.group_of[&t];
            let clique = tg.clique_of_group[group];
            let ns = if self.dra { wl.namespace.as_str() } else { "" };
            for i in 0..wl.replicas {
                let rep = Rep { w, i };
                match need {
                    Need::Gang(g) => {
                        units.push(tg.whole_unit(input, g, Share::Exclusive, vec![rep], t))
                    }
                    Need::Whole(Mode::Exclusive) => {
                        units.push(tg.whole_unit(input, 1, Share::Exclusive, vec![rep], t))
                    }
                    Need::Whole(Mode::TimeSliced(r)) => bundles
                        .entry((group, ns, Res::Gpu, false))
                        .or_default()
                        .push((rep, r)),
                    Need::Whole(Mode::Mps(r)) => bundles
                        .entry((group, ns, Res::Gpu, true))
                        .or_default()
                        .push((rep, r)),
                    Need::Instance(p, Mode::Exclusive) => mig_items
                        .entry(clique)
                        .or_default()
                        .push((p, Share::Exclusive, vec![rep])),
                    Need::Instance(p, Mode::TimeSliced(r)) | Need::Instance(p, Mode::Mps(r)) => {
                        bundles
                            .entry((group, ns, Res::Mig(p), false))
                            .or_default()
                            .push((rep, r))
                    }
                }
            }
        }
        for ((group, _, res, mps), mut reps) in bundles {
            reps.sort();
            // Classes of replicas per GPU: one at the smallest of the bundle, or (whole GPUs, when
            // `split`) one per count the workloads ask for, each workload in its own class.
            let mut classes: BTreeMap<u32, Vec<Rep>> = BTreeMap::new();
            let least = reps.iter().map(|(_, r)| *r).min().unwrap_or(1).max(1);
            for (rep, r) in &reps {
                let class = if split && res == Res::Gpu {
                    (*r).max(1)
                } else {
                    least
                };
                classes.entry(class).or_default().push(*rep);
            }
            let t = tg.groups[group].first().copied().unwrap_or(0);
            for (r, members) in classes {
                let share = if r < 2 {
                    Share::Exclusive
                } else if mps {
                    Share::Mps { group, replicas: r }
                } else {
                    Share::TimeSliced { group, replicas: r }
                };
                for chunk in members.chunks(r as usize) {
                    let members: Vec<Rep> = chunk.to_vec();
                    match res {
                        Res::Gpu => units.push(tg.whole_unit(input, 1, share, members, t)),
                        Res::Mig(p) => mig_items
                            .entry(tg.clique_of_group[group])
                            .or_default()
                            .push((p, share, members)),
                    }
                }
            }
        }
        (units, mig_items)
    }

    /// A time-sliced profile that the clique also hands out whole (or time-slices for another group)
    /// cannot share a node with those instances; moves such bundles to another profile with as much
    /// memory and compute that no other use claims, when there is one.
    fn remap_shared_profiles(
        &self,
        spec: &MigSpec,
        tg: &TrustGroups,
        mig_items: &mut MigItems,
        needs: &mut BTreeMap<usize, Need>,
    ) {
        let input = self.input;
        for items in mig_items.values_mut() {
            let mut uses: BTreeMap<usize, BTreeSet<Share>> = BTreeMap::new();
            for (p, s, _) in items.iter() {
                uses.entry(*p).or_default().insert(*s);
            }
            let shared: BTreeSet<(usize, Share)> = items
                .iter()
                .filter(|(_, s, _)| *s != Share::Exclusive)
                .map(|(p, s, _)| (*p, *s))
                .collect();
            for (p, s) in shared {
                if uses.get(&p).is_none_or(|u| u.len() < 2) {
                    continue;
                }
                let (mem, frac) = (spec.profiles[p].memory_mib, spec.compute_fraction(p));
                let alternative = (0..spec.profiles.len())
                    .filter(|&q| {
                        q != p
                            && spec.profiles[q].memory_mib >= mem
                            && spec.compute_fraction(q) + 1e-9 >= frac
                            && uses.get(&q).is_none_or(|u| u.iter().all(|k| *k == s))
                    })
                    .min_by_key(|&q| {
                        let x = spec.profiles[q];
                        (x.memory_slices, x.compute_slices, x.memory_mib, q)
                    });
                let Some(q) = alternative else { continue };
                for item in items.iter_mut() {
                    if item.0 == p && item.1 == s {
                        item.0 = q;
                    }
                }
                if let Some(u) = uses.get_mut(&p) {
                    u.remove(&s);
                }
                uses.entry(q).or_default().insert(s);
                let Share::TimeSliced { group, .. } = s else {
                    continue;
                };
                for (w, need) in needs.iter_mut() {
                    if tg.group_of.get(&input.workloads[*w].tenant) == Some(&group) {
                        if let Need::Instance(np, mode @ Mode::TimeSliced(_)) = *need {
                            if np == p {
                                *need = Need::Instance(q, mode);
                            }
                        }
                    }
                }
            }
        }
    }

    /// MIG GPUs per clique: the clique's instances split into partitions whose device plugin configs
    /// do not clash, each packed into GPU layouts.
    fn mig_units(&self, spec: &MigSpec, mig_items: MigItems, units: &mut Vec<Unit>) {
        let input = self.input;
        for (clique, items) in mig_items {
            let mut partitions: Vec<BTreeMap<usize, Share>> = vec![BTreeMap::new()];
            for (p, share, _) in &items {
                if *share == Share::Exclusive {
                    partitions[0].insert(*p, Share::Exclusive);
                }
            }
            let mut part_of: BTreeMap<(usize, Share), usize> = BTreeMap::new();
            let keys: BTreeSet<(usize, Share)> = items.iter().map(|(p, s, _)| (*p, *s)).collect();
            for (p, s) in keys {
                let at = partitions
                    .iter()
                    .position(|part| part.get(&p).is_none_or(|have| *have == s));
                let at = match at {
                    Some(at) => at,
                    None => {
                        partitions.push(BTreeMap::new());
                        partitions.len() - 1
                    }
                };
                partitions[at].insert(p, s);
                part_of.insert((p, s), at);
            }
            let mut by_part: BTreeMap<usize, Vec<(usize, Share, Vec<Rep>)>> = BTreeMap::new();
            for item in items {
                let at = part_of.get(&(item.0, item.1)).copied().unwrap_or(0);
                by_part.entry(at).or_default().push(item);
            }
            for (_, mut part_items) in by_part {
                part_items.sort_by(|a, b| a.2.cmp(&b.2));
                let mut demand = vec![0u32; spec.profiles.len()];
                for (p, _, _) in &part_items {
                    demand[*p] += 1;
                }
                let packing = match self.method {
                    Method::Best => pack::pack(spec, &demand),
                    Method::FirstFitDecreasing => pack::first_fit_decreasing(spec, &demand),
                    Method::Exact { time_limit_secs } => {
                        exact::exact_pack(spec, &demand, time_limit_secs)
                            .unwrap_or_else(|| pack::pack(spec, &demand))
                    }
                };
                // Hand the instances out to the GPUs, profile by profile, in order.
                let mut queues: Vec<std::collections::VecDeque<(Share, Vec<Rep>)>> =
                    vec![std::collections::VecDeque::new(); spec.profiles.len()];
                for (p, s, m) in part_items {
                    queues[p].push_back((s, m));
                }
                for counts in packing {
                    let mut instances = Vec::new();
                    let mut keys = BTreeMap::new();
                    let mut tenants_set = BTreeSet::new();
                    for (p, &c) in counts.iter().enumerate() {
                        for _ in 0..c {
                            if let Some((s, m)) = queues[p].pop_front() {
                                keys.insert(Res::Mig(p), s);
                                for r in &m {
                                    tenants_set.insert(input.workloads[r.w].tenant);
                                }
                                instances.push((p, s, m));
                            }
                        }
                    }
                    let mut real = vec![0u32; spec.profiles.len()];
                    for (p, _, _) in &instances {
                        real[*p] += 1;
                    }
                    if instances.is_empty() {
                        continue;
                    }
                    units.push(Unit {
                        gpus: 1,
                        clique,
                        tenants: tenants_set,
                        keys,
                        cc: false,
                        kind: UnitKind::Mig {
                            counts: real,
                            instances,
                        },
                    });
                }
            }
        }
    }

    /// Nodes, best-fit decreasing: the node of each unit, in the order the nodes were opened; the
    /// replicas of units no node has room for are misses.
    fn place(
        &self,
        units: &[Unit],
        tenants: &BTreeSet<usize>,
        misses: &mut Vec<(Rep, Miss)>,
    ) -> Vec<NodeFill> {
        let input = self.input;
        let members_of: Vec<Vec<Rep>> = units.iter().map(Unit::members).collect();
        let mut order: Vec<usize> = (0..units.len()).collect();
        // Larger units first; within a clique, those that carry more replicas (when nodes run out,
        // the replicas left over are the fewest).
        order.sort_by(|&a, &b| {
            let (ua, ub) = (&units[a], &units[b]);
            ub.gpus
                .cmp(&ua.gpus)
                .then(ua.clique.cmp(&ub.clique))
                .then(members_of[b].len().cmp(&members_of[a].len()))
                .then(members_of[a].cmp(&members_of[b]))
        });
        let cap = self.pool.gpus_per_node;
        let mut nodes: Vec<NodeFill> = Vec::new();
        // Nodes with a free GPU (a full node takes nothing more), by the tenants on them: a unit only
        // ever joins a node whose tenants all may share a node with its own, so the candidates are the
        // open nodes of those tenants, visited in the order the nodes were opened.
        let mut open_by_tenant: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        let mut allowed_for: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
        for u in order {
            let unit = &units[u];
            let allowed = allowed_for
                .entry(unit.tenants.iter().copied().collect())
                .or_insert_with(|| {
                    tenants
                        .iter()
                        .copied()
                        .filter(|&x| unit.tenants.iter().all(|&b| input.may_share_node(x, b)))
                        .collect()
                });
            let mut candidates: BTreeSet<usize> = BTreeSet::new();
            for x in allowed.iter() {
                if let Some(open) = open_by_tenant.get(x) {
                    candidates.extend(open.iter().copied());
                }
            }
            let mut best: Option<(u32, bool, usize)> = None;
            for &ni in &candidates {
                let n = &nodes[ni];
                if !self.compatible(n, unit, cap) {
                    continue;
                }
                let left = cap - n.used - unit.gpus;
                let same = n.cliques.contains(&unit.clique);
                let better = match best {
                    None => true,
                    Some((bl, bs, _)) => left < bl || (left == bl && same && !bs),
                };
                if better {
                    best = Some((left, same, ni));
                }
            }
            let target = match best {
                Some((_, _, ni)) => Some(ni),
                None if (nodes.len() as u32) < self.pool.nodes && unit.gpus <= cap => {
                    nodes.push(NodeFill::default());
                    Some(nodes.len() - 1)
                }
                None => None,
            };
            match target {
                Some(ni) => {
                    let n = &mut nodes[ni];
                    n.units.push(u);
                    n.used += unit.gpus;
                    n.tenants.extend(unit.tenants.iter().copied());
                    for (res, s) in &unit.keys {
                        n.keys.insert(*res, *s);
                        if let Res::Mig(p) = res {
                            n.mig_tenants
                                .entry(*p)
                                .or_default()
                                .extend(unit.tenants.iter().copied());
                        }
                    }
                    n.cliques.insert(unit.clique);
                    n.has_mig |= unit.has_mig();
                    n.has_mps |= unit.has_mps();
                    n.cc = Some(unit.cc);
                    for t in &n.tenants {
                        let open = open_by_tenant.entry(*t).or_default();
                        if n.used >= cap {
                            open.remove(&ni);
                        } else {
                            open.insert(ni);
                        }
                    }
                }
                None => {
                    let reason = format!(
                        "pool {} has no room: its {} nodes are in use by replicas they cannot be mixed with",
                        self.pool.name, self.pool.nodes
                    );
                    for &r in &members_of[u] {
                        misses.push((r, Miss::Capacity(reason.clone())));
                    }
                }
            }
        }
        nodes
    }

    fn compatible(&self, n: &NodeFill, u: &Unit, cap: u32) -> bool {
        let input = self.input;
        if n.used + u.gpus > cap {
            return false;
        }
        match n.cc {
            Some(cc) if cc != u.cc => return false,
            Some(true) if n.tenants != u.tenants => return false,
            _ => {}
        }
        for (res, s) in &u.keys {
            if let Some(have) = n.keys.get(res) {
                if have != s {
                    return false;
                }
            }
        }
        if (u.has_mps() && n.has_mig) || (u.has_mig() && n.has_mps) {
            return false;
        }
        for &a in &n.tenants {
            for &b in &u.tenants {
                if !input.may_share_node(a, b) {
                    return false;
                }
            }
        }
        // Tenants without trust must not request one MIG profile on one node: the device plugin may
        // hand them instances of one GPU.
        for res in u.keys.keys() {
            if let Res::Mig(p) = res {
                if let Some(users) = n.mig_tenants.get(p) {
                    if users
                        .iter()
                        .any(|&a| u.tenants.iter().any(|&b| !input.may_share_gpu(a, b)))
                    {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// Plans with a chosen packing method.
pub fn solve_with(input: &PlanInput, options: &SolveOptions) -> Plan {
    let specs: Vec<Option<MigSpec>> = input.pools.iter().map(|p| MigSpec::new(p.model)).collect();
    let ctxs: Vec<PoolCtx> = input
        .pools
        .iter()
        .zip(&specs)
        .map(|(pool, spec)| PoolCtx {
            input,
            pool,
            spec: spec.as_ref(),
            method: options.method,
            dra: options.dra,
        })
        .collect();
    // Candidate pools per workload, cheapest first.
    let mut candidates: Vec<Vec<usize>> = Vec::with_capacity(input.workloads.len());
    let mut no_pool: BTreeMap<usize, String> = BTreeMap::new();
    for (w, wl) in input.workloads.iter().enumerate() {
        let mut c: Vec<(f64, usize)> = Vec::new();
        let mut first_reason: Option<String> = None;
        for (pi, ctx) in ctxs.iter().enumerate() {
            if wl.pool.is_some_and(|p| p != pi) {
                continue;
            }
            match ctx.decide(wl) {
                Ok(need) => c.push((ctx.cost(need), pi)),
                Err(reason) => {
                    if first_reason.is_none() {
                        first_reason = Some(reason);
                    }
                }
            }
        }
        c.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        if c.is_empty() {
            no_pool.insert(
                w,
                first_reason.unwrap_or_else(|| "the inventory has no pool".to_string()),
            );
        }
        candidates.push(c.into_iter().map(|(_, p)| p).collect());
    }
    let mut choice: Vec<usize> = vec![0; input.workloads.len()];
    let mut results: Vec<Option<PoolResult>> = Vec::new();
    let mut dirty: BTreeSet<usize> = (0..input.pools.len()).collect();
    for _round in 0..=input.pools.len() {
        results.resize_with(input.pools.len(), || None);
        for &pi in &dirty {
            let ws: Vec<usize> = (0..input.workloads.len())
                .filter(|&w| !no_pool.contains_key(&w) && candidates[w].get(choice[w]) == Some(&pi))
                .collect();
            results[pi] = Some(ctxs[pi].plan(&ws));
        }
        dirty.clear();
        let mut moved: BTreeSet<usize> = BTreeSet::new();
        for r in results.iter().flatten() {
            for (rep, miss) in &r.misses {
                if matches!(miss, Miss::Capacity(_)) && choice[rep.w] + 1 < candidates[rep.w].len()
                {
                    moved.insert(rep.w);
                }
            }
        }
        if moved.is_empty() {
            break;
        }
        for w in moved {
            if let Some(&from) = candidates[w].get(choice[w]) {
                dirty.insert(from);
            }
            choice[w] += 1;
            if let Some(&to) = candidates[w].get(choice[w]) {
                dirty.insert(to);
            }
        }
    }
    assemble(input, &ctxs, &results, &candidates, &choice, &no_pool)
}

/// Label values: up to 63 of `[A-Za-z0-9-_.]`, alphanumeric at both ends.
fn is_label_value(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.as_bytes().last().is_some_and(u8::is_ascii_alphanumeric)
}

/// The plan from each pool's result: the nodes with their GPUs and the names of the configs they use,
/// the bounds, where every workload went and the replicas that were not placed.
fn assemble(
    input: &PlanInput,
    ctxs: &[PoolCtx],
    results: &[Option<PoolResult>],
    candidates: &[Vec<usize>],
    choice: &[usize],
    no_pool: &BTreeMap<usize, String>,
) -> Plan {
    let mut nodes_out: Vec<PlanNode> = Vec::new();
    let mut out = Outcome::default();
    let mut bounds: Vec<Bound> = Vec::new();
    let mut lower_bound = 0u32;
    let mut nodes_lower_bound = 0u32;
    let mut names = Names::default();
    let mut workload_needs: BTreeMap<usize, (usize, Need)> = BTreeMap::new();

    for (w, reason) in no_pool {
        for i in 0..input.workloads[*w].replicas {
            out.unplaced.push(Unplaced {
                workload: input.workloads[*w].name.clone(),
                replica: i,
                reason: reason.clone(),
            });
        }
    }
    for (pi, res) in results.iter().enumerate() {
        let Some(res) = res else { continue };
        let ctx = &ctxs[pi];
        let pool = ctx.pool;
        for (w, need) in &res.needs {
            workload_needs.insert(*w, (pi, *need));
        }
        for (rep, miss) in &res.misses {
            // A replica that moved on to another pool is reported there.
            if candidates[rep.w].get(choice[rep.w]) != Some(&pi) {
                continue;
            }
            let reason = match miss {
                Miss::Fit(r) | Miss::Capacity(r) => r.clone(),
            };
            out.unplaced.push(Unplaced {
                workload: input.workloads[rep.w].name.clone(),
                replica: rep.i,
                reason,
            });
        }
        let (pool_bounds, pool_lb, pool_nodes_lb) = placed_bounds(input, ctx, res);
        bounds.extend(pool_bounds);
        lower_bound += pool_lb;
        nodes_lower_bound += pool_nodes_lb;

        for (ni, fill) in res.nodes.iter().enumerate() {
            let name = format!("{}-{ni}", pool.name);
            let (gpus, sharing) = node_gpus(input, ctx, res, fill, nodes_out.len(), &mut out);
            let tenants: Vec<String> = fill
                .tenants
                .iter()
                .map(|&t| input.tenants[t].name.clone())
                .collect();
            let mig_config = names.mig_config(pool, &gpus);
            let device_plugin_config = names.device_plugin_config(&sharing);
            let tenant_pool = names.tenant_pool(input, fill, &tenants, &name);
            nodes_out.push(PlanNode {
                name,
                pool: pool.name.clone(),
                model: pool.model.id.to_string(),
                tenants,
                sharing,
                confidential: fill.cc == Some(true),
                tenant_pool,
                mig_config,
                device_plugin_config,
                gpus,
                gpu_count: pool.gpus_per_node,
            });
        }
    }
    let Outcome {
        placed_on,
        mut unplaced,
    } = out;
    unplaced.sort();
    unplaced.dedup();
    // Remove from the placement any replica that a failed MIG placement reported.
    let unplaced_set: BTreeSet<(String, u32)> = unplaced
        .iter()
        .map(|u| (u.workload.clone(), u.replica))
        .collect();

    let workloads = input
        .workloads
        .iter()
        .enumerate()
        .map(|(w, wl)| {
            workload_entry(
                input,
                ctxs,
                w,
                wl,
                workload_needs.get(&w).copied(),
                &placed_on,
                &nodes_out,
                &unplaced_set,
            )
        })
        .collect();
    let gpus_used: u32 = nodes_out
        .iter()
        .map(|n| n.gpus.iter().filter(|g| !g.assignments.is_empty()).count() as u32)
        .sum();
    let nodes_used = nodes_out.iter().filter(|n| !n.gpus.is_empty()).count() as u32;
    let gap_percent = if lower_bound == 0 {
        0.0
    } else {
        let g = (f64::from(gpus_used) - f64::from(lower_bound)) / f64::from(lower_bound) * 100.0;
        (g * 100.0).round() / 100.0
    };
    Plan {
        schema: SCHEMA,
        gpus_used,
        nodes_used,
        lower_bound,
        gap_percent,
        nodes_lower_bound,
        bounds,
        nodes: nodes_out,
        workloads,
        unplaced,
    }
}

/// Where each replica went (node index in the plan's nodes, GPU index), and the replicas not placed,
/// as the plan's nodes are written.
#[derive(Default)]
struct Outcome {
    placed_on: BTreeMap<Rep, (usize, u32)>,
    unplaced: Vec<Unplaced>,
}

/// The bounds of a pool over the units placed on its nodes.
fn placed_bounds(input: &PlanInput, ctx: &PoolCtx, res: &PoolResult) -> (Vec<Bound>, u32, u32) {
    let placed_units: Vec<&Unit> = res
        .nodes
        .iter()
        .flat_map(|n| n.units.iter().map(|&u| &res.units[u]))
        .collect();
    bound::pool_bounds(
        input,
        ctx.pool,
        ctx.spec,
        &placed_units
            .iter()
            .map(|u| bound::UnitDemand {
                tenants: u.tenants.clone(),
                whole_gpus: match u.kind {
                    UnitKind::Whole { .. } => u.gpus,
                    UnitKind::Mig { .. } => 0,
                },
                gang: match &u.kind {
                    UnitKind::Whole { share, .. } if *share == Share::Exclusive => u.gpus,
                    _ => 0,
                },
                counts: match &u.kind {
                    UnitKind::Mig { counts, .. } => counts.clone(),
                    UnitKind::Whole { .. } => Vec::new(),
                },
            })
            .collect::<Vec<_>>(),
    )
}

/// The GPUs of one node (the `node_index`th of the plan): whole units first (largest first), then
/// MIG GPUs; and the node's device plugin sharing.
fn node_gpus(
    input: &PlanInput,
    ctx: &PoolCtx,
    res: &PoolResult,
    fill: &NodeFill,
    node_index: usize,
    out: &mut Outcome,
) -> (Vec<PlanGpu>, NodeSharing) {
    let mut unit_ids = fill.units.clone();
    unit_ids.sort_by(|&a, &b| {
        let (ua, ub) = (&res.units[a], &res.units[b]);
        ua.has_mig()
            .cmp(&ub.has_mig())
            .then(ub.gpus.cmp(&ua.gpus))
            .then(ua.members().cmp(&ub.members()))
    });
    let mut gpus: Vec<PlanGpu> = Vec::new();
    let mut next = 0u32;
    let mut sharing = NodeSharing::default();
    for &u in &unit_ids {
        let unit = &res.units[u];
        match &unit.kind {
            UnitKind::Whole { share, members } => {
                for g in 0..unit.gpus {
                    let index = next + g;
                    let assignments: Vec<Assignment> = members
                        .iter()
                        .map(|r| {
                            out.placed_on.insert(*r, (node_index, index));
                            Assignment {
                                workload: input.workloads[r.w].name.clone(),
                                replica: r.i,
                                tenant: input.tenants[input.workloads[r.w].tenant].name.clone(),
                                profile: None,
                                start: None,
                            }
                        })
                        .collect();
                    gpus.push(PlanGpu {
                        index,
                        mig: Vec::new(),
                        sharing: share.device_sharing(),
                        replicas: share.replicas(),
                        assignments,
                    });
                }
                if *share != Share::Exclusive {
                    sharing
                        .resources
                        .insert(resource::GPU.to_string(), share.replicas());
                    sharing.strategy = match share {
                        Share::Mps { .. } => SharingStrategy::Mps,
                        _ => SharingStrategy::TimeSlicing,
                    };
                }
                next += unit.gpus;
            }
            UnitKind::Mig { counts, instances } => {
                let index = next;
                next += 1;
                let Some(spec) = ctx.spec else { continue };
                let at = (node_index, index);
                gpus.extend(mig_gpu(
                    input,
                    ctx,
                    spec,
                    counts,
                    instances,
                    at,
                    &mut sharing,
                    out,
                ));
            }
        }
    }
    (gpus, sharing)
}

/// One MIG GPU (GPU `index` of the `node_index`th node) with its instances at their placement; `None`
/// when the geometry has no placement for the counts (its replicas are then not placed).
#[allow(clippy::too_many_arguments)]
fn mig_gpu(
    input: &PlanInput,
    ctx: &PoolCtx,
    spec: &MigSpec,
    counts: &[u32],
    instances: &[Payload],
    (node_index, index): (usize, u32),
    sharing: &mut NodeSharing,
    out: &mut Outcome,
) -> Option<PlanGpu> {
    let pool = ctx.pool;
    let named: Vec<(&str, u32)> = counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(p, &c)| (spec.profiles[p].name, c))
        .collect();
    let layout = match gpu_trust_model::geometry::place_counts(pool.model, &named) {
        Ok(l) => l,
        Err(e) => {
            for (_, _, m) in instances {
                for r in m {
                    out.unplaced.push(Unplaced {
                        workload: input.workloads[r.w].name.clone(),
                        replica: r.i,
                        reason: format!("no MIG placement on {}: {e}", pool.model.id),
                    });
                }
            }
            return None;
        }
    };
    // Instances of each profile by start, handed to the payloads in order.
    let mut slots: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    for inst in layout.instances() {
        if let Some(p) = spec.profile_index(inst.profile().name) {
            slots.entry(p).or_default().push(inst.start());
        }
    }
    let mut mig: Vec<MigInstance> = Vec::new();
    let mut assignments: Vec<Assignment> = Vec::new();
    let mut taken: BTreeMap<usize, usize> = BTreeMap::new();
    let mut any_ts = false;
    for (p, share, members) in instances {
        let k = taken.entry(*p).or_insert(0);
        let start = slots.get(p).and_then(|s| s.get(*k)).copied().unwrap_or(0);
        *k += 1;
        let prof = spec.profiles[*p];
        mig.push(MigInstance {
            profile: prof.name.to_string(),
            start,
            sharing: share.device_sharing(),
            replicas: share.replicas(),
        });
        if *share != Share::Exclusive {
            any_ts = true;
            sharing
                .resources
                .insert(prof.resource_name(), share.replicas());
            sharing.strategy = SharingStrategy::TimeSlicing;
        }
        for r in members {
            out.placed_on.insert(*r, (node_index, index));
            assignments.push(Assignment {
                workload: input.workloads[r.w].name.clone(),
                replica: r.i,
                tenant: input.tenants[input.workloads[r.w].tenant].name.clone(),
                profile: Some(prof.name.to_string()),
                start: Some(start),
            });
        }
    }
    mig.sort_by_key(|a| a.start);
    assignments.sort();
    Some(PlanGpu {
        index,
        mig,
        sharing: if any_ts {
            DeviceSharing::TimeSlicing
        } else {
            DeviceSharing::Exclusive
        },
        replicas: 1,
        assignments,
    })
}

/// The names of the configs and node pools the plan emits, each given on first use: a mig-parted
/// config per GPU model and layout set, a device plugin config per node sharing, a shared node pool
/// per set of tenants.
#[derive(Default)]
struct Names {
    mig_configs: BTreeMap<(String, LayoutSet), String>,
    device_plugin: BTreeMap<NodeSharing, String>,
    time_slicing: usize,
    mps: usize,
    shared_pools: BTreeMap<Vec<usize>, String>,
}

impl Names {
    /// The mig-parted config of a node with `gpus` (on a model with MIG): one per distinct model and
    /// GPU layout set.
    fn mig_config(&mut self, pool: &Pool, gpus: &[PlanGpu]) -> Option<String> {
        if !pool.model.supports_mig() {
            return None;
        }
        let layout_set: LayoutSet = gpus
            .iter()
            .filter(|g| !g.mig.is_empty())
            .map(|g| {
                (
                    g.index,
                    g.mig.iter().map(|m| (m.profile.clone(), m.start)).collect(),
                )
            })
            .collect();
        if layout_set.is_empty() {
            return Some(crate::emit::ALL_DISABLED.to_string());
        }
        let n = self.mig_configs.len() + 1;
        Some(
            self.mig_configs
                .entry((pool.model.id.to_string(), layout_set))
                .or_insert_with(|| format!("gpu-trust-mig-{n}"))
                .clone(),
        )
    }

    /// The device plugin config of a node with `sharing`.
    fn device_plugin_config(&mut self, sharing: &NodeSharing) -> String {
        let Names {
            device_plugin,
            time_slicing,
            mps,
            ..
        } = self;
        match sharing.strategy {
            SharingStrategy::None => crate::emit::EXCLUSIVE_CONFIG.to_string(),
            SharingStrategy::TimeSlicing => device_plugin
                .entry(sharing.clone())
                .or_insert_with(|| {
                    *time_slicing += 1;
                    format!("time-slicing-{time_slicing}")
                })
                .clone(),
            SharingStrategy::Mps => device_plugin
                .entry(sharing.clone())
                .or_insert_with(|| {
                    *mps += 1;
                    format!("mps-{mps}")
                })
                .clone(),
        }
    }

    /// The tenant node pool: one tenant, a set of tenants that may share everything on a node, or
    /// the node alone (`name`) where tenants without trust (or with an isolation contract) meet.
    fn tenant_pool(
        &mut self,
        input: &PlanInput,
        fill: &NodeFill,
        tenants: &[String],
        name: &str,
    ) -> String {
        let ids: Vec<usize> = fill.tenants.iter().copied().collect();
        let guarded = ids.iter().any(|&a| {
            ids.iter().any(|&b| {
                a != b
                    && (input.trust[a][b] == Trust::None
                        || input.tenants[a].contract == Contract::Isolation)
            })
        });
        if guarded {
            name.to_string()
        } else if ids.len() == 1 && is_label_value(&tenants[0]) {
            tenants[0].clone()
        } else {
            let n = self.shared_pools.len() + 1;
            self.shared_pools
                .entry(ids)
                .or_insert_with(|| format!("shared-{n}"))
                .clone()
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn workload_entry(
    input: &PlanInput,
    ctxs: &[PoolCtx],
    w: usize,
    wl: &Workload,
    need: Option<(usize, Need)>,
    placed_on: &BTreeMap<Rep, (usize, u32)>,
    nodes: &[PlanNode],
    unplaced: &BTreeSet<(String, u32)>,
) -> PlanWorkload {
    let tenant = &input.tenants[wl.tenant];
    let mut entry = PlanWorkload {
        name: wl.name.clone(),
        tenant: tenant.name.clone(),
        namespace: wl.namespace.clone(),
        kind: wl.kind,
        replicas: wl.replicas,
        placed: 0,
        pool: None,
        mechanism: None,
        resource: None,
        count: 0,
        profile: None,
        share_replicas: None,
        node_selector: BTreeMap::new(),
        tolerations: Vec::new(),
        why: String::new(),
    };
    let Some((pi, need)) = need else {
        entry.why = "not placed: no pool of the inventory can hold a replica".to_string();
        return entry;
    };
    let ctx = &ctxs[pi];
    let pool = ctx.pool;
    let mut node_set: BTreeSet<usize> = BTreeSet::new();
    let mut gpu_set: BTreeSet<(usize, u32)> = BTreeSet::new();
    let mut placed = 0;
    let mut share_replicas: Option<u32> = None;
    // How the device of the first placed replica is handed out, and how many times it is advertised.
    let mut device: Option<(DeviceSharing, u32)> = None;
    for i in 0..wl.replicas {
        if unplaced.contains(&(wl.name.clone(), i)) {
            continue;
        }
        if let Some(&(n, g)) = placed_on.get(&Rep { w, i }) {
            placed += 1;
            node_set.insert(n);
            gpu_set.insert((n, g));
            if device.is_none() {
                device = nodes[n].gpus.iter().find(|x| x.index == g).and_then(|x| {
                    if x.mig.is_empty() {
                        Some((x.sharing, x.replicas))
                    } else {
                        x.mig
                            .iter()
                            .find(|m| {
                                x.assignments.iter().any(|a| {
                                    a.workload == wl.name
                                        && a.replica == i
                                        && a.start == Some(m.start)
                                })
                            })
                            .map(|m| (m.sharing, m.replicas))
                    }
                });
                share_replicas = device.and_then(|(_, r)| (r > 1).then_some(r));
            }
        }
    }
    entry.placed = placed;
    entry.pool = Some(pool.name.clone());
    let (mechanism, resource, count, profile) = match need {
        Need::Gang(g) => (Mechanism::Exclusive, resource::GPU.to_string(), g, None),
        Need::Whole(Mode::Exclusive) => (Mechanism::Exclusive, resource::GPU.to_string(), 1, None),
        Need::Whole(Mode::TimeSliced(_)) => {
            (Mechanism::TimeSlicing, resource::GPU.to_string(), 1, None)
        }
        Need::Whole(Mode::Mps(_)) => (Mechanism::Mps, resource::GPU.to_string(), 1, None),
        Need::Instance(p, mode) => {
            let prof = ctx.spec.map(|s| s.profiles[p]);
            let name = prof.map(|p| p.name.to_string());
            let res = prof
                .map(|p| p.resource_name())
                .unwrap_or_else(|| resource::GPU.to_string());
            let mech = match (mode, share_replicas) {
                (Mode::Exclusive, _) | (_, None) => Mechanism::MigInstance,
                _ => Mechanism::MigTimeSlicing,
            };
            (mech, res, 1, name)
        }
    };
    // A shared mode whose bundle ended up with one member per device stays as planned: the node's
    // config advertises the replicas either way.
    let mechanism = match (mechanism, share_replicas) {
        (Mechanism::TimeSlicing, None) | (Mechanism::Mps, None) if placed > 0 => {
            Mechanism::Exclusive
        }
        (m, _) => m,
    };
    entry.mechanism = Some(mechanism);
    entry.resource = Some(resource);
    entry.count = count;
    entry.profile = profile.clone();
    entry.share_replicas = share_replicas;
    entry
        .node_selector
        .insert(POOL_LABEL.to_string(), pool.name.clone());
    // Only nodes where the device plugin hands the resource out the way the plan does: one pool may
    // offer `nvidia.com/gpu` whole on some nodes and time-sliced on others, a MIG profile whole on one
    // node and time-sliced four ways on the next.
    if let (Some((sharing, replicas)), Some(resource)) = (device, &entry.resource) {
        entry
            .node_selector
            .extend(crate::emit::mechanism_selector(resource, sharing, replicas));
    }
    let taints: BTreeSet<&str> = node_set
        .iter()
        .map(|&n| nodes[n].tenant_pool.as_str())
        .collect();
    entry.tolerations = taints
        .into_iter()
        .map(|v| Toleration {
            key: TENANTS_TAINT.to_string(),
            operator: "Equal".to_string(),
            value: v.to_string(),
            effect: "NoSchedule".to_string(),
        })
        .collect();
    entry.why = why(
        input,
        ctx,
        wl,
        need,
        mechanism,
        profile.as_deref(),
        share_replicas,
        &gpu_set,
        &node_set,
        nodes,
    );
    entry
}

#[allow(clippy::too_many_arguments)]
fn why(
    input: &PlanInput,
    ctx: &PoolCtx,
    wl: &Workload,
    need: Need,
    mechanism: Mechanism,
    profile: Option<&str>,
    share_replicas: Option<u32>,
    gpus: &BTreeSet<(usize, u32)>,
    nodes_set: &BTreeSet<usize>,
    nodes: &[PlanNode],
) -> String {
    let tenant = &input.tenants[wl.tenant];
    let mut head = String::new();
    if wl.latency == Latency::Critical && wl.kind != WorkloadClass::Training {
        head.push_str("latency-critical ");
    }
    head.push_str(wl.kind.as_str());
    if let Some(p) = wl.peak_memory_mib {
        head.push_str(&format!(" (peak {})", gib(p)));
    }
    let model = ctx.pool.model.id;
    let what = match need {
        Need::Gang(g) => format!(
            "{g} whole dedicated GPU{} of one {model} node per replica, never shared",
            if g == 1 { "" } else { "s" }
        ),
        Need::Whole(Mode::Exclusive) if tenant.confidential => {
            format!(
                "a whole {model} on a node with confidential computing on, used by {} alone",
                tenant.name
            )
        }
        Need::Whole(Mode::Exclusive) => match ctx.spec {
            Some(_) => format!("a whole {model} (more than the largest MIG instance holds)"),
            None => format!("a whole {model} of its own"),
        },
        Need::Whole(Mode::TimeSliced(_)) => format!(
            "a time-sliced {model} shared by {} replicas of one trust group, {} each",
            share_replicas.unwrap_or(1),
            gib(ctx.pool.model.memory_mib / u64::from(share_replicas.unwrap_or(1).max(1)))
        ),
        Need::Whole(Mode::Mps(_)) => format!(
            "an MPS share of a {model}, {} clients of one trust group, pinned memory limit {} each, \
             on nodes whose device plugin config sets migStrategy none (the plugin refuses MPS with \
             mixed; the ClusterPolicy leaves mig.strategy unset so that each node's config decides)",
            share_replicas.unwrap_or(1),
            gib(ctx.pool.model.memory_mib / u64::from(share_replicas.unwrap_or(1).max(1)))
        ),
        Need::Instance(p, Mode::Exclusive) => {
            let mem = ctx.spec.map(|s| s.profiles[p].memory_mib).unwrap_or(0);
            format!(
                "own MIG instance {} ({}), the smallest that holds its peak",
                profile.unwrap_or("?"),
                gib(mem)
            )
        }
        Need::Instance(p, _) => {
            let mem = ctx.spec.map(|s| s.profiles[p].memory_mib).unwrap_or(0);
            let r = share_replicas.unwrap_or(1).max(1);
            format!(
                "MIG instance {} time-sliced among {r} replicas of one trust group, {} each",
                profile.unwrap_or("?"),
                gib(mem / u64::from(r))
            )
        }
    };
    let memory = mechanism
        .property(Property::MemoryCapacity)
        .enforcement
        .as_str();
    let fault = mechanism
        .property(Property::FaultDomain)
        .enforcement
        .as_str();
    let mut text = format!("{head}: {what}; memory {memory}, fault domain {fault}");
    // Who it meets, and at which trust.
    let mut on_gpu: BTreeSet<String> = BTreeSet::new();
    for &(n, g) in gpus {
        if let Some(gpu) = nodes[n].gpus.iter().find(|x| x.index == g) {
            for a in &gpu.assignments {
                if a.tenant != tenant.name {
                    on_gpu.insert(a.tenant.clone());
                }
            }
        }
    }
    let mut on_node: BTreeSet<String> = BTreeSet::new();
    for &n in nodes_set {
        for t in &nodes[n].tenants {
            if *t != tenant.name && !on_gpu.contains(t) {
                on_node.insert(t.clone());
            }
        }
    }
    let trust_of = |name: &str| -> &'static str {
        input
            .tenants
            .iter()
            .position(|t| t.name == name)
            .map(|o| input.trust[wl.tenant][o].as_str())
            .unwrap_or("none")
    };
    let list = |set: &BTreeSet<String>| -> String {
        set.iter()
            .map(|t| format!("{t} (trust {})", trust_of(t)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !on_gpu.is_empty() {
        text.push_str(&format!("; shares GPUs with {}", list(&on_gpu)));
    }
    if !on_node.is_empty() {
        text.push_str(&format!("; shares nodes with {}", list(&on_node)));
    }
    if on_gpu.is_empty() && on_node.is_empty() && !nodes_set.is_empty() {
        text.push_str(&format!("; its nodes host {} only", tenant.name));
    }
    text
}

/// Local search over part-empty MIG GPUs: for each, smallest first, try to move every instance onto
/// another part-empty GPU whose tenants may share a GPU with the instance's, whose layout takes one
/// more instance of the profile, and which hands that profile out the same way; when all move, the GPU
/// is gone.
fn consolidate(input: &PlanInput, spec: &MigSpec, units: &mut Vec<Unit>) {
    let open = |u: &Unit| -> bool {
        match &u.kind {
            UnitKind::Mig { counts, .. } => {
                (0..spec.profiles.len()).any(|p| spec.can_add(counts, p))
            }
            UnitKind::Whole { .. } => false,
        }
    };
    let mut candidates: Vec<usize> = (0..units.len()).filter(|&u| open(&units[u])).collect();
    candidates.sort_by_key(|&u| match &units[u].kind {
        UnitKind::Mig { counts, .. } => (spec.memory_of(counts), spec.compute_of(counts), u),
        UnitKind::Whole { .. } => (u64::MAX, u64::MAX, u),
    });
    let mut removed: BTreeSet<usize> = BTreeSet::new();
    for &c in &candidates {
        if removed.contains(&c) {
            continue;
        }
        let UnitKind::Mig { instances, .. } = &units[c].kind else {
            continue;
        };
        let moving = instances.clone();
        // Tentative targets: (unit, counts, keys, tenants) copies.
        let mut trial: BTreeMap<usize, Trial> = BTreeMap::new();
        let mut moves: Vec<(usize, Payload)> = Vec::new();
        let mut ok = true;
        for inst in &moving {
            let (p, share, members) = inst;
            let inst_tenants: BTreeSet<usize> = members
                .iter()
                .map(|r| input.workloads[r.w].tenant)
                .collect();
            let mut placed = false;
            for &t in &candidates {
                if t == c || removed.contains(&t) {
                    continue;
                }
                let fits = {
                    let (counts, keys, tenants) = match trial.get(&t) {
                        Some((c, k, ts)) => (c, k, ts),
                        None => match &units[t].kind {
                            UnitKind::Mig { counts, .. } => {
                                (counts, &units[t].keys, &units[t].tenants)
                            }
                            UnitKind::Whole { .. } => continue,
                        },
                    };
                    spec.can_add(counts, *p)
                        && keys.get(&Res::Mig(*p)).is_none_or(|k| k == share)
                        && tenants
                            .iter()
                            .all(|&a| inst_tenants.iter().all(|&b| input.may_share_gpu(a, b)))
                };
                if !fits {
                    continue;
                }
                let (counts, keys, tenants) = match trial.remove(&t) {
                    Some(x) => x,
                    None => match &units[t].kind {
                        UnitKind::Mig { counts, .. } => (
                            counts.clone(),
                            units[t].keys.clone(),
                            units[t].tenants.clone(),
                        ),
                        UnitKind::Whole { .. } => continue,
                    },
                };
                let mut counts = counts;
                counts[*p] += 1;
                let mut keys = keys;
                keys.insert(Res::Mig(*p), *share);
                let mut tenants = tenants;
                tenants.extend(inst_tenants.iter().copied());
                trial.insert(t, (counts, keys, tenants));
                moves.push((t, (*p, *share, members.clone())));
                placed = true;
                break;
            }
            if !placed {
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        for (t, inst) in moves {
            if let UnitKind::Mig { instances, .. } = &mut units[t].kind {
                instances.push(inst);
            }
        }
        for (t, (counts, keys, tenants)) in trial {
            let u = &mut units[t];
            if let UnitKind::Mig { counts: c, .. } = &mut u.kind {
                *c = counts;
            }
            u.keys = keys;
            u.tenants = tenants;
        }
        removed.insert(c);
    }
    let mut i = 0;
    units.retain(|_| {
        let keep = !removed.contains(&i);
        i += 1;
        keep
    });
}
