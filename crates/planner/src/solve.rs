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
//!
//! The plan is then written from each pool's result (`assemble.rs`).

use crate::assemble::{assemble, gib, PoolView};
use crate::exact;
use crate::file::{PlanInput, Pool, Workload};
use crate::pack;
use crate::plan::*;
use crate::spec::MigSpec;
use crate::unit::{
    Miss, Mode, Need, NodeFill, Payload, PoolResult, Rep, Res, Share, Unit, UnitKind,
};
use gpu_trust_model::fleet::WorkloadClass;
use gpu_trust_policy::Latency;
use std::collections::{BTreeMap, BTreeSet};

/// The most MPS clients per GPU the device plugin's MPS sharing supports (NVIDIA k8s-device-plugin
/// README, MPS sharing: at most 48 replicas, as the MPS server allows on Volta and later).
pub const MPS_MAX_REPLICAS: u32 = 48;

/// The most replicas the planner advertises for one time-sliced device, whatever the policy allows.
const MAX_SHARE_REPLICAS: u32 = 64;

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

/// A tentative state of a GPU during consolidation: counts, resource keys, tenants.
type Trial = (Vec<u32>, BTreeMap<Res, Share>, BTreeSet<usize>);

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
    let views: Vec<PoolView> = ctxs
        .iter()
        .map(|c| PoolView {
            pool: c.pool,
            spec: c.spec,
        })
        .collect();
    assemble(input, &views, &results, &candidates, &choice, &no_pool)
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
