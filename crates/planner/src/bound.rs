//! Lower bounds on the GPUs (and nodes) a demand needs, reported with every plan so its quality is
//! measured, not claimed.
//!
//! For one trust component (tenants connected by trust that allows sharing a GPU; two components
//! never share a GPU, so their bounds add up):
//!
//! - whole GPUs: training gangs and whole-GPU replicas, each GPU counted once;
//! - MIG instances, the largest of: memory slices over the GPU's memory slices; compute slices over
//!   its compute slices; the half-GPU bound (instances of the whole GPU, plus the larger of each
//!   profile's "most per GPU" bound and half of the instances that take half a GPU or more, such as
//!   3g and 4g on 8-slice parts, since at most two fit one GPU); and the configuration LP over the
//!   model's maximal layouts, rounded up. The LP is usually the strongest, but not always: three 3g
//!   and two 4g give an LP of 3.5 GPUs (two 4g+3g pairs and half of a 3g+3g GPU) where the half-GPU
//!   bound says 3.
//!
//! The bound is over the instances the planner sized (the smallest profile that holds each replica's
//! peak; time-sliced instances as bundled). Nodes: tenants that may not share a node need separate
//! nodes, so per group of tenants that may, the GPUs over GPUs per node, and at least one node per gang
//! larger than half a node.

use crate::file::{PlanInput, Pool};
use crate::pack::lp_cover;
use crate::plan::Bound;
use crate::spec::MigSpec;
use std::collections::{BTreeMap, BTreeSet};

/// The demand of one placed unit (a MIG GPU or a whole-GPU unit).
#[derive(Debug, Clone)]
pub struct UnitDemand {
    pub tenants: BTreeSet<usize>,
    /// GPUs of a whole-GPU unit (0 for a MIG GPU).
    pub whole_gpus: u32,
    /// GPUs of an exclusive whole-GPU unit that must sit on one node (0 otherwise).
    pub gang: u32,
    /// MIG instance counts (indexed like the spec's profiles; empty for whole units).
    pub counts: Vec<u32>,
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

/// The bounds of one pool over its placed units: per trust component, the GPU bound in total, and the
/// node bound.
pub fn pool_bounds(
    input: &PlanInput,
    pool: &Pool,
    spec: Option<&MigSpec>,
    units: &[UnitDemand],
) -> (Vec<Bound>, u32, u32) {
    let tenants: BTreeSet<usize> = units
        .iter()
        .flat_map(|u| u.tenants.iter().copied())
        .collect();
    let gpu_comp = components(&tenants, |a, b| input.may_share_gpu(a, b));
    // Per component: whole GPUs, instance counts, GPUs used, gangs.
    #[derive(Default)]
    struct Acc {
        tenants: BTreeSet<usize>,
        whole: u32,
        counts: Vec<u32>,
        used: u32,
        gangs: Vec<u32>,
    }
    let mut acc: BTreeMap<usize, Acc> = BTreeMap::new();
    for u in units {
        let Some(&first) = u.tenants.iter().next() else {
            continue;
        };
        let root = gpu_comp.get(&first).copied().unwrap_or(first);
        let a = acc.entry(root).or_default();
        a.tenants.extend(u.tenants.iter().copied());
        a.whole += u.whole_gpus;
        if u.whole_gpus > 0 {
            a.used += u.whole_gpus;
        } else {
            a.used += 1;
        }
        if u.gang > 0 {
            a.gangs.push(u.gang);
        }
        if a.counts.len() < u.counts.len() {
            a.counts.resize(u.counts.len(), 0);
        }
        for (x, &c) in a.counts.iter_mut().zip(&u.counts) {
            *x += c;
        }
    }
    let mut bounds = Vec::new();
    let mut total = 0u32;
    let mut comp_bound: BTreeMap<usize, (u32, Vec<u32>)> = BTreeMap::new();
    for (root, a) in &acc {
        let mb = match spec {
            Some(s) if !a.counts.is_empty() => {
                let mut c = a.counts.clone();
                c.resize(s.profiles.len(), 0);
                mig_bound(s, &c)
            }
            _ => MigBound {
                by_memory: 0,
                by_compute: 0,
                by_half_gpu: 0,
                lp: 0.0,
                gpus: 0,
            },
        };
        let gpus = a.whole + u32::try_from(mb.gpus).unwrap_or(u32::MAX);
        total = total.saturating_add(gpus);
        comp_bound.insert(*root, (gpus, a.gangs.clone()));
        let instances: BTreeMap<String, u32> = match spec {
            Some(s) => a
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(p, &c)| (s.profiles[p].name.to_string(), c))
                .collect(),
            None => BTreeMap::new(),
        };
        bounds.push(Bound {
            pool: pool.name.clone(),
            tenants: a
                .tenants
                .iter()
                .map(|&t| input.tenants[t].name.clone())
                .collect(),
            whole_gpus: a.whole,
            instances,
            by_memory_slices: u32::try_from(mb.by_memory).unwrap_or(u32::MAX),
            by_compute_slices: u32::try_from(mb.by_compute).unwrap_or(u32::MAX),
            by_half_gpu: u32::try_from(mb.by_half_gpu).unwrap_or(u32::MAX),
            by_layout_lp: mb.lp,
            gpus,
            used: a.used,
        });
    }
    bounds.sort_by(|a, b| a.tenants.cmp(&b.tenants));
    // Nodes: components that may share nodes pooled together.
    let roots: BTreeSet<usize> = comp_bound.keys().copied().collect();
    let node_comp = components(&roots, |a, b| {
        let (ta, tb) = (&acc[&a].tenants, &acc[&b].tenants);
        ta.iter()
            .all(|&x| tb.iter().all(|&y| input.may_share_node(x, y)))
    });
    let cap = pool.gpus_per_node.max(1);
    let mut per_node_comp: BTreeMap<usize, (u32, u32)> = BTreeMap::new();
    for (root, (gpus, gangs)) in &comp_bound {
        let nr = node_comp.get(root).copied().unwrap_or(*root);
        let e = per_node_comp.entry(nr).or_default();
        e.0 += gpus;
        e.1 += gangs.iter().filter(|&&g| 2 * g > cap).count() as u32;
    }
    let nodes: u32 = per_node_comp
        .values()
        .map(|&(gpus, big)| gpus.div_ceil(cap).max(big))
        .sum();
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
