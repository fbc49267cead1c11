//! The lower bound every plan reports, so that its quality is measured, not claimed: no plan of the
//! same input needs fewer GPUs for the replicas this plan places, whichever pools they run in.
//!
//! **What a replica takes.** A replica may run in every pool where the planner can give it something
//! (and that the plan file does not rule out by pinning it elsewhere); there it takes an amount `a` of
//! one *slot* of the pool's GPUs: a MIG profile, or the whole GPU. An exclusive MIG instance takes 1
//! of the smallest profile that holds it, a whole GPU 1 of the whole slot, a gang of `g` GPUs `g`, a
//! share of a time-sliced or MPS instance or GPU `1/r` of it, where `r` is the most replicas of it a
//! device may hold. The smallest profile stands in for any larger one that holds the replica: in
//! every valid layout the larger one may be swapped for it (`smallest_profiles_stand_in_for_larger`
//! checks this on every MIG model of the catalogue), so a plan that gives a replica a larger
//! exclusive instance has a plan with the same GPUs that gives it the smallest. The bound holds for
//! every plan that gives each replica an exclusive instance that holds it, or the kind of device the
//! planner gives it in that pool (a whole GPU, a gang, a share of one device).
//!
//! **What a GPU holds.** Write a pool's *patterns* as its maximal MIG layouts (counts per profile)
//! and the whole GPU (one of the whole slot). Whatever one GPU of the pool holds in any plan, its
//! amounts per slot are at most one pattern's: a MIG layout is part of a maximal one, a whole GPU
//! holds one whole-GPU replica, gang member or shared device, and a shared device holds at most as
//! many replicas as the smallest `r` among them, so their `1/r` add up to at most 1.
//!
//! **The bound.** Take for each pool `p` weights `v[p][s] >= 0` with `sum_s P[s] v[p][s] <= 1` for
//! every pattern `P` of `p`. By the above, each GPU of pool `p` holds amounts `h` with
//! `sum_s h[s] v[p][s] <= 1`, so the GPUs of any plan are at least the sum over its replicas of
//! `a v[p][s]` where each runs, which is at least `D(v) = sum_w n_w min_(p, s, a) a v[p][s]`: each
//! workload's `n_w` placed replicas at their cheapest pool. Two trust components (tenants connected by
//! trust that allows sharing a GPU) never share a GPU, so this holds per component, and GPUs come
//! whole: a component needs at least `ceil(D_c(v))`. Inside a component, tenants that pairwise may not
//! share a GPU use disjoint GPUs: the component needs at least the sum of their own
//! `ceil(D_t(v))` too (the tenants chosen greedily, the largest bound first). The bound is the sum
//! over components of the larger of the two. `v` is the optimum of the dual of the configuration LP
//! over every pool's patterns (`max D(v)` subject to the pattern constraints, solved by microlp), which
//! makes `D(v)` that LP's value; whatever the solver returns is scaled down, pool by pool, until every
//! pattern constraint holds, so the number is a bound even where the solver is inexact.
//!
//! **Nodes.** Tenants in different groups of tenants joined by node sharing never share a node, and a
//! node holds at most the most GPUs per node of the pools; so each group needs its components' GPU
//! bounds over that many nodes, and at least one node per gang larger than half a node of every pool
//! where it may run.

use crate::file::PlanInput;
use crate::pack::lp_cover;
use crate::plan::Bound;
use crate::spec::MigSpec;
use crate::unit::{Mode, Need};
use good_lp::solvers::microlp::microlp;
use good_lp::{variable, variables, Expression, Solution, SolverModel, Variable};
use std::collections::{BTreeMap, BTreeSet};

/// The replicas of one workload that a plan places, for the bound.
#[derive(Debug, Clone)]
pub(crate) struct Demand {
    pub(crate) tenant: usize,
    pub(crate) replicas: u32,
    /// What one replica needs in each pool where it may run: (pool, need).
    pub(crate) needs: Vec<(usize, Need)>,
}

/// A pool as the bound sees it: its patterns over its slots (the MIG profiles of its spec, then the
/// whole GPU), and its GPUs per node.
pub(crate) struct PoolSlots {
    pub(crate) patterns: Vec<Vec<u32>>,
    pub(crate) gpus_per_node: u32,
}

impl PoolSlots {
    pub(crate) fn new(spec: Option<&MigSpec>, gpus_per_node: u32) -> PoolSlots {
        let mig = spec.map_or(0, |s| s.profiles.len());
        let mut patterns: Vec<Vec<u32>> = spec
            .map(|s| {
                s.patterns
                    .iter()
                    .map(|p| [p.as_slice(), &[0]].concat())
                    .collect()
            })
            .unwrap_or_default();
        let mut whole = vec![0; mig + 1];
        whole[mig] = 1;
        patterns.push(whole);
        PoolSlots {
            patterns,
            gpus_per_node,
        }
    }

    /// The slot a need takes and how much of it one replica takes.
    fn take(&self, need: Need) -> (usize, f64) {
        let whole = self.patterns[0].len() - 1;
        let share = |mode: Mode| match mode {
            Mode::Exclusive => 1.0,
            Mode::TimeSliced(r) | Mode::Mps(r) => 1.0 / f64::from(r.max(1)),
        };
        match need {
            Need::Gang(g) => (whole, f64::from(g)),
            Need::Whole(mode) => (whole, share(mode)),
            Need::Instance(q, mode) => (q, share(mode)),
        }
    }
}

/// The most tenants of one trust component whose maximal cliques the bound enumerates, and the most
/// cliques it keeps; beyond either, the component counts as one clique (every GPU's tenants are part of
/// it, so the bound holds, only weaker).
const CLIQUE_TENANTS: usize = 24;
const MAX_CLIQUES: usize = 64;

/// The maximal sets of `tenants` (one trust component) that all may share a GPU, as bit masks over
/// `tenants`; the whole component as one set when there are too many.
pub(crate) fn cliques(input: &PlanInput, tenants: &[usize]) -> Vec<u32> {
    let n = tenants.len();
    let all = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    if n > CLIQUE_TENANTS {
        return vec![all];
    }
    let near: Vec<u32> = (0..n)
        .map(|i| {
            (0..n)
                .filter(|&j| j != i && input.may_share_gpu(tenants[i], tenants[j]))
                .fold(0u32, |m, j| m | (1 << j))
        })
        .collect();
    // Bron-Kerbosch with a pivot: `r` the set so far, `p` who may join it, `x` who may but was tried.
    fn grow(near: &[u32], r: u32, mut p: u32, mut x: u32, out: &mut Vec<u32>) -> bool {
        if p == 0 && x == 0 {
            out.push(r);
            return out.len() <= MAX_CLIQUES;
        }
        let pivot = (p | x).trailing_zeros() as usize;
        let mut todo = p & !near[pivot];
        while todo != 0 {
            let v = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            if !grow(near, r | (1 << v), p & near[v], x & near[v], out) {
                return false;
            }
            p &= !(1 << v);
            x |= 1 << v;
        }
        true
    }
    let mut out = Vec::new();
    if grow(&near, 0, all, 0, &mut out) {
        out
    } else {
        vec![all]
    }
}

/// What one replica takes in each pool where it may run: (pool, slot, amount).
type Takes = Vec<(usize, usize, f64)>;
/// [`Takes`] with each amount's bits, to compare and order them.
type Key = Vec<(usize, usize, u64)>;

/// `D(v)` of the module documentation at the weights the dual LP gives, scaled down until every
/// pattern constraint holds: a lower bound on the GPUs of `demands`, before rounding up. All demands
/// are of one trust component, whose tenants are `tenants` and whose GPUs each hold tenants of one set
/// of `cliques` (bit masks over `tenants`): the weights are per pool and set.
fn dual_bound(pools: &[PoolSlots], tenants: &[usize], cliques: &[u32], demands: &[&Demand]) -> f64 {
    // Demands alike for the bound (the sets that may hold them, what they take where) as one.
    let mut alike: BTreeMap<(u64, Key), (f64, Takes)> = BTreeMap::new();
    let bit_of: BTreeMap<usize, usize> = tenants.iter().enumerate().map(|(i, &t)| (t, i)).collect();
    for d in demands {
        let Some(&bit) = bit_of.get(&d.tenant) else {
            continue;
        };
        // (Only a set of every tenant is written as all ones, and only with more than 24 tenants.)
        let sets = cliques
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == u32::MAX || c & (1 << bit) != 0)
            .fold(0u64, |m, (k, _)| m | (1 << k));
        let takes: Vec<(usize, usize, f64)> = d
            .needs
            .iter()
            .map(|&(p, need)| {
                let (s, a) = pools[p].take(need);
                (p, s, a)
            })
            .collect();
        let key = takes.iter().map(|&(p, s, a)| (p, s, a.to_bits())).collect();
        alike.entry((sets, key)).or_insert((0.0, takes)).0 += f64::from(d.replicas);
    }
    let mut vars = variables!();
    // v[p][k][s]
    let v: Vec<Vec<Vec<Variable>>> = pools
        .iter()
        .map(|p| {
            cliques
                .iter()
                .map(|_| {
                    (0..p.patterns[0].len())
                        .map(|_| vars.add(variable().min(0.0)))
                        .collect()
                })
                .collect()
        })
        .collect();
    let u: Vec<Variable> = alike
        .values()
        .map(|_| vars.add(variable().min(0.0)))
        .collect();
    let objective: Expression = alike.values().zip(&u).map(|((n, _), &u)| *n * u).sum();
    let mut model = vars.maximise(objective).using(microlp);
    for (p, pool) in pools.iter().enumerate() {
        for vk in &v[p] {
            for pattern in &pool.patterns {
                let load: Expression = pattern
                    .iter()
                    .zip(vk)
                    .filter(|(&c, _)| c > 0)
                    .map(|(&c, &x)| f64::from(c) * x)
                    .sum();
                model = model.with(load.leq(1.0));
            }
        }
    }
    for (((sets, _), (_, takes)), &u) in alike.iter().zip(&u) {
        for k in (0..cliques.len()).filter(|k| sets & (1 << k) != 0) {
            for &(p, s, a) in takes {
                model = model.with((a * v[p][k][s] - u).geq(0.0));
            }
        }
    }
    let mut weights: Vec<Vec<Vec<f64>>> = match model.solve() {
        Ok(solution) => v
            .iter()
            .map(|vp| {
                vp.iter()
                    .map(|vk| vk.iter().map(|&x| solution.value(x).max(0.0)).collect())
                    .collect()
            })
            .collect(),
        Err(_) => pools
            .iter()
            .map(|p| vec![vec![0.0; p.patterns[0].len()]; cliques.len()])
            .collect(),
    };
    for (pool, wp) in pools.iter().zip(weights.iter_mut()) {
        for w in wp.iter_mut() {
            let most = pool
                .patterns
                .iter()
                .map(|pat| {
                    pat.iter()
                        .zip(w.iter())
                        .map(|(&c, x)| f64::from(c) * x)
                        .sum::<f64>()
                })
                .fold(0.0, f64::max);
            if most > 1.0 {
                w.iter_mut().for_each(|x| *x /= most);
            }
        }
    }
    alike
        .iter()
        .map(|((sets, _), (n, takes))| {
            let cheapest = (0..cliques.len())
                .filter(|k| sets & (1 << k) != 0)
                .flat_map(|k| takes.iter().map(move |&(p, s, a)| (k, p, s, a)))
                .map(|(k, p, s, a)| a * weights[p][k][s])
                .fold(f64::INFINITY, f64::min);
            if cheapest.is_finite() {
                n * cheapest
            } else {
                0.0
            }
        })
        .sum()
}

/// A lower bound on the GPUs that MIG instances of one trust component need in one pool, each given by
/// its profile and the tenants it serves: the larger of [`mig_bound`] and the LP over the component's
/// cliques, rounded up (an instance counted with its first tenant, which may only weaken the bound).
pub(crate) fn instances_bound(
    input: &PlanInput,
    spec: &MigSpec,
    instances: &[(usize, &[usize])],
) -> u64 {
    let mut counts = vec![0u32; spec.profiles.len()];
    for &(p, _) in instances {
        counts[p] += 1;
    }
    let plain = mig_bound(spec, &counts).gpus;
    let demands: Vec<Demand> = instances
        .iter()
        .filter_map(|&(p, tenants)| {
            Some(Demand {
                tenant: *tenants.first()?,
                replicas: 1,
                needs: vec![(0, Need::Instance(p, Mode::Exclusive))],
            })
        })
        .collect();
    let tenants: Vec<usize> = demands
        .iter()
        .map(|d| d.tenant)
        .collect::<BTreeSet<usize>>()
        .into_iter()
        .collect();
    if tenants.len() < 2 {
        return plain;
    }
    let pools = [PoolSlots::new(Some(spec), 1)];
    let refs: Vec<&Demand> = demands.iter().collect();
    let lp = dual_bound(&pools, &tenants, &cliques(input, &tenants), &refs);
    plain.max(u64::from(whole(lp)))
}

/// GPUs come whole: a bound before rounding up, rounded up (less a margin for floating point).
fn whole(bound: f64) -> u32 {
    let b = (bound - 1e-7).ceil().max(0.0);
    if b >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        b as u32
    }
}

/// The MIG part of a bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MigBound {
    pub by_memory: u64,
    pub by_compute: u64,
    pub by_half_gpu: u64,
    pub lp: f64,
    pub gpus: u64,
}

/// The MIG bound of instance counts.
pub fn mig_bound(spec: &MigSpec, counts: &[u32]) -> MigBound {
    if counts.iter().all(|&c| c == 0) {
        return MigBound {
            by_memory: 0,
            by_compute: 0,
            by_half_gpu: 0,
            lp: 0.0,
            gpus: 0,
        };
    }
    let mem_total = u64::from(spec.memory_slices.max(1));
    let compute_total = u64::from(spec.compute_slices.max(1));
    let by_memory = spec.memory_of(counts).div_ceil(mem_total);
    let by_compute = spec.compute_of(counts).div_ceil(compute_total);
    // Instances that take the whole GPU, and the rest.
    let mut full = 0u64;
    let mut half = 0u64;
    let mut per_profile = 0u64;
    let mut rest_mem = 0u64;
    let mut rest_compute = 0u64;
    for (p, &c) in counts.iter().enumerate() {
        let prof = spec.profiles[p];
        let c = u64::from(c);
        if u64::from(prof.memory_slices) >= mem_total
            || u64::from(prof.compute_slices) >= compute_total
        {
            full += c;
            continue;
        }
        if 2 * u64::from(prof.memory_slices) >= mem_total {
            half += c;
        }
        per_profile = per_profile.max(c.div_ceil(u64::from(prof.max_count.max(1))));
        rest_mem += c * u64::from(prof.memory_slices);
        rest_compute += c * u64::from(prof.compute_slices);
    }
    let by_half_gpu = full
        + per_profile
            .max(half.div_ceil(2))
            .max(rest_mem.div_ceil(mem_total))
            .max(rest_compute.div_ceil(compute_total));
    let (lp, _) = lp_cover(&spec.patterns, counts);
    let lp_bound = (lp - 1e-6).ceil().max(0.0) as u64;
    let gpus = by_memory.max(by_compute).max(by_half_gpu).max(lp_bound);
    MigBound {
        by_memory,
        by_compute,
        by_half_gpu,
        lp: (lp * 1000.0).round() / 1000.0,
        gpus,
    }
}

/// Union-find over tenant indices: each tenant mapped to the root tenant of its component.
pub(crate) fn components(
    tenants: &BTreeSet<usize>,
    joined: impl Fn(usize, usize) -> bool,
) -> BTreeMap<usize, usize> {
    let list: Vec<usize> = tenants.iter().copied().collect();
    let mut parent: Vec<usize> = (0..list.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for i in 0..list.len() {
        for j in i + 1..list.len() {
            if joined(list[i], list[j]) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    (0..list.len())
        .map(|i| (list[i], list[find(&mut parent, i)]))
        .collect()
}

/// The plan's bounds: one per trust component over every pool (tenants sorted), their sum, and the
/// bound on nodes. `used` gives the GPUs the plan uses per tenant set of a GPU.
pub(crate) fn plan_bounds(
    input: &PlanInput,
    pools: &[PoolSlots],
    demands: &[Demand],
    used: &[BTreeSet<usize>],
) -> (Vec<Bound>, u32, u32) {
    let demands: Vec<&Demand> = demands
        .iter()
        .filter(|d| d.replicas > 0 && !d.needs.is_empty())
        .collect();
    let tenants: BTreeSet<usize> = demands.iter().map(|d| d.tenant).collect();
    let root_of = components(&tenants, |a, b| input.may_share_gpu(a, b));
    let mut by_root: BTreeMap<usize, Vec<&Demand>> = BTreeMap::new();
    for d in &demands {
        by_root.entry(root_of[&d.tenant]).or_default().push(d);
    }
    let mut bounds: Vec<(usize, Bound)> = Vec::new();
    for (&root, comp) in &by_root {
        let members: Vec<usize> = comp
            .iter()
            .map(|d| d.tenant)
            .collect::<BTreeSet<usize>>()
            .into_iter()
            .collect();
        let lp = dual_bound(pools, &members, &cliques(input, &members), comp);
        // Per tenant, the bound of its own replicas; then tenants that pairwise may not share a GPU,
        // the largest bound first.
        let mut own: Vec<(u32, usize)> = Vec::new();
        if members.len() <= CLIQUE_TENANTS
            && members
                .iter()
                .any(|&a| members.iter().any(|&b| !input.may_share_gpu(a, b)))
        {
            for &t in &members {
                let mine: Vec<&Demand> = comp.iter().copied().filter(|d| d.tenant == t).collect();
                own.push((whole(dual_bound(pools, &[t], &[1], &mine)), t));
            }
        }
        own.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut apart: Vec<usize> = Vec::new();
        let mut by_tenants_apart = 0u32;
        for &(b, t) in &own {
            if apart.iter().all(|&o| !input.may_share_gpu(o, t)) {
                apart.push(t);
                by_tenants_apart = by_tenants_apart.saturating_add(b);
            }
        }
        if apart.len() < 2 {
            by_tenants_apart = 0;
        }
        let pool_set: BTreeSet<usize> = comp
            .iter()
            .flat_map(|d| d.needs.iter().map(|&(p, _)| p))
            .collect();
        bounds.push((
            root,
            Bound {
                tenants: members
                    .iter()
                    .map(|&t| input.tenants[t].name.clone())
                    .collect(),
                pools: pool_set
                    .iter()
                    .map(|&p| input.pools[p].name.clone())
                    .collect(),
                by_layout_lp: (lp * 1000.0).round() / 1000.0,
                by_tenants_apart,
                gpus: whole(lp).max(by_tenants_apart),
                used: used
                    .iter()
                    .filter(|g| g.iter().next().and_then(|t| root_of.get(t)) == Some(&root))
                    .count() as u32,
            },
        ));
    }
    let total = bounds
        .iter()
        .fold(0u32, |sum, (_, b)| sum.saturating_add(b.gpus));
    // Nodes: groups of components joined by any two tenants that may share a node.
    let roots: BTreeSet<usize> = by_root.keys().copied().collect();
    let group_of = components(&roots, |a, b| {
        let (ta, tb) = (&by_root[&a], &by_root[&b]);
        ta.iter()
            .any(|x| tb.iter().any(|y| input.may_share_node(x.tenant, y.tenant)))
    });
    let mut per_group: BTreeMap<usize, (u32, u32, u32)> = BTreeMap::new();
    for (root, b) in &bounds {
        let e = per_group.entry(group_of[root]).or_default();
        e.0 = e.0.saturating_add(b.gpus);
        for d in &by_root[root] {
            let cap = d
                .needs
                .iter()
                .map(|&(p, _)| pools[p].gpus_per_node)
                .max()
                .unwrap_or(1);
            e.1 = e.1.max(cap);
            let big = d.needs.iter().all(|&(p, need)| match need {
                Need::Gang(g) => 2 * g > pools[p].gpus_per_node,
                _ => false,
            });
            if big {
                e.2 = e.2.saturating_add(d.replicas);
            }
        }
    }
    let nodes = per_group
        .values()
        .map(|&(gpus, cap, big)| gpus.div_ceil(cap.max(1)).max(big))
        .fold(0u32, u32::saturating_add);
    let mut bounds: Vec<Bound> = bounds.into_iter().map(|(_, b)| b).collect();
    bounds.sort_by(|a, b| a.tenants.cmp(&b.tenants));
    (bounds, total, nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::catalogue;

    #[test]
    fn half_gpu_bound_counts_pairs_of_3g_and_4g() {
        let spec = MigSpec::new(catalogue::lookup("H100-SXM5-80GB").unwrap()).unwrap();
        let mut c = vec![0; spec.profiles.len()];
        c[spec.profile_index("3g.40gb").unwrap()] = 3;
        c[spec.profile_index("4g.40gb").unwrap()] = 2;
        c[spec.profile_index("7g.80gb").unwrap()] = 1;
        let b = mig_bound(&spec, &c);
        // 7g alone, then 5 half-GPU instances need 3 GPUs.
        assert_eq!(b.by_half_gpu, 4);
        assert_eq!(b.gpus, 4);
        // The LP pairs both 4g with a 3g and puts the third 3g on half a GPU: 3.5, rounded up to 4.
        assert!((b.lp - 3.5).abs() < 1e-3, "{}", b.lp);
        // Memory alone says 4 too (3*4 + 2*4 + 8 = 28 slices), compute 3*3+2*4+7 = 24 -> 4.
        assert_eq!(b.by_memory, 4);
        assert_eq!(b.by_compute, 4);
    }

    #[test]
    fn smallest_profiles_stand_in_for_larger() {
        // Wherever a replica's smallest fit is `q` and `r` holds it too, every maximal layout with an
        // `r` still fits with that `r` swapped for a `q`.
        for model in catalogue::all() {
            let Some(spec) = MigSpec::new(model) else {
                continue;
            };
            let n = spec.profiles.len();
            let holds = |p: usize, (mem, frac): (u64, f64)| {
                spec.profiles[p].memory_mib >= mem && spec.compute_fraction(p) + 1e-9 >= frac
            };
            for q in 0..n {
                for r in q + 1..n {
                    let corner = (
                        spec.profiles[q].memory_mib.min(spec.profiles[r].memory_mib),
                        spec.compute_fraction(q).min(spec.compute_fraction(r)),
                    );
                    if (0..q).any(|e| holds(e, corner)) {
                        continue;
                    }
                    for pattern in spec.patterns.iter().filter(|p| p[r] > 0) {
                        let mut swapped = pattern.clone();
                        swapped[r] -= 1;
                        swapped[q] += 1;
                        assert!(
                            spec.is_valid(&swapped),
                            "{}: {} for {} in {pattern:?}",
                            model.id,
                            spec.profiles[q].name,
                            spec.profiles[r].name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn lp_is_at_least_the_simple_bounds() {
        let spec = MigSpec::new(catalogue::lookup("A100-SXM4-40GB").unwrap()).unwrap();
        let mut c = vec![0; spec.profiles.len()];
        c[0] = 13;
        c[spec.profiles.len() - 2] = 3;
        let b = mig_bound(&spec, &c);
        assert!(b.lp + 1e-6 >= b.by_memory.max(b.by_compute) as f64 - 1.0);
        assert!(b.gpus >= b.by_half_gpu);
    }
}
