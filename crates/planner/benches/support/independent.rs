//! An exact solver for fleets of exclusive MIG instances, written apart from the planner: it shares
//! no code with the solver, the packer or the bound, and reads only the plan input and the catalogue's
//! placement facts (profile sizes, allowed starts, most per GPU, media extensions).
//!
//! **Layouts.** Every set of instances one GPU can hold is enumerated here from the real placements
//! (NVML `nvmlGpuInstancePlacement_t`, `nvidia-smi mig -lgipp`): each instance at one of its profile's
//! allowed starts, no memory slice used twice, the compute slices within the GPU's, at most the
//! profile's count and one media-extension instance. Only the maximal ones are kept (every valid set
//! is part of one).
//!
//! **Integer program.** Per trust component (tenants joined by trust above `none`; two components never
//! share a GPU), an integer `x[P][L][S]`: GPUs of pool `P` with layout `L` used by tenants of `S`, a
//! maximal set of tenants that all trust each other above `none`; and an integer `a[P][L][S][c][p]`:
//! replicas of class `c` (one tenant of `S`, one set of profiles of `P` that hold its peak and compute)
//! given an instance of `p` on those GPUs, at most `L[p] x[P][L][S]` per profile. Every workload runs
//! in one pool (a 0/1 variable per pool it fits, their sum 1; a workload the plan file pins has one),
//! and every replica of a class is placed; minimise the GPUs. Grouping GPUs by (layout, tenant set)
//! loses nothing: within a group every instance slot may go to any tenant of `S`. Every replica may use
//! any profile that holds it, not only the smallest, so no sizing choice of the planner is assumed.
//!
//! **Nodes.** A pool whose GPUs could hold every replica that may run there never runs out of nodes
//! (one GPU per replica at most, on nodes of their own); on a pool with fewer, nodes are modelled and
//! every component is solved in one program: an integer `m[P][S]` of nodes whose tenants are part of
//! `S`, `sum_L x[P][L][S] <= GPUs per node * m[P][S]`, `sum_S m[P][S] <= nodes`. That is the planner's
//! node rule where the policy lets exactly the tenants that may share a GPU share a node (other
//! inputs are refused): a node's tenants then trust each other above `none`, so they are part of one
//! maximal set, and every GPU of the node may be counted in that set's group.
//!
//! Solved with good_lp's microlp backend; the answer counts only when microlp proves it optimal.

use good_lp::solvers::microlp::microlp;
use good_lp::{
    variable, variables, Expression, ProblemVariables, Solution, SolutionStatus, SolverModel,
    Variable, WithTimeLimit,
};
use gpu_trust_model::catalogue::{MigProfile, ProfileVariant};
use gpu_trust_model::fleet::WorkloadClass;
use gpu_trust_model::Trust;
use gpu_trust_planner::PlanInput;
use gpu_trust_policy::Latency;
use std::collections::{BTreeMap, BTreeSet};

/// The exact optimum of one fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Optimum {
    /// Fewest GPUs any plan needs.
    pub gpus: u32,
}

/// Why no optimum was proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoOptimum {
    /// The fleet is not what the program models: a replica that is not an exclusive MIG instance,
    /// a pool without MIG, nodes shared by tenants that may not share a GPU, too many tenants.
    Unsupported(String),
    /// microlp did not prove optimality within the time limit.
    TimeLimit,
    /// microlp failed.
    Solver(String),
}

/// The share of the GPU's compute a profile gives: its SMs over the whole GPU's, or its compute slices
/// where the catalogue has no SM counts.
pub fn fraction(profiles: &[MigProfile], p: &MigProfile, compute_slices: u8) -> f64 {
    let whole = profiles
        .iter()
        .filter(|q| q.compute_slices == compute_slices)
        .find_map(|q| q.sms);
    match (p.sms, whole) {
        (Some(s), Some(w)) if w > 0 => f64::from(s) / f64::from(w),
        _ => f64::from(p.compute_slices) / f64::from(compute_slices.max(1)),
    }
}

/// A class of replicas: (pool, tenant, the profiles of the pool that hold them).
type Class = (usize, usize, Vec<usize>);

/// One pool as the integer program sees it.
struct PoolModel {
    /// The maximal layouts over the profiles that hold some workload here.
    layouts: Vec<Vec<u32>>,
    /// Per workload, the profiles that hold it here and that no other of them stands in for; empty
    /// when it cannot run here (or the plan file pins it to another pool).
    fits: Vec<Vec<usize>>,
    /// (GPUs per node, nodes) when the pool's GPUs are fewer than the replicas that may run there,
    /// so that its nodes may bind; `None` when they cannot.
    nodes: Option<(u32, u32)>,
}

/// The fewest GPUs for the fleet, proven by the integer program, or why not.
pub fn optimum(input: &PlanInput, seconds: f64) -> Result<Optimum, NoOptimum> {
    for w in &input.workloads {
        let exclusive = matches!(w.kind, WorkloadClass::Inference | WorkloadClass::Batch)
            && w.latency == Latency::Critical
            && !input.tenants[w.tenant].confidential;
        if !exclusive {
            return Err(NoOptimum::Unsupported(w.name.clone()));
        }
    }
    let mut pools: Vec<PoolModel> = Vec::new();
    for (pi, pool) in input.pools.iter().enumerate() {
        let Some(mig) = pool.model.mig else {
            return Err(NoOptimum::Unsupported(format!(
                "{} has no MIG",
                pool.model.id
            )));
        };
        let profiles = mig.profiles;
        let maximal = maximal_layouts(mig.memory_slices, mig.compute_slices, profiles);
        let fits: Vec<Vec<usize>> = input
            .workloads
            .iter()
            .map(|w| {
                if w.pool.is_some_and(|p| p != pi) {
                    return Vec::new();
                }
                let peak = w.peak_memory_mib.unwrap_or(0);
                let compute = w.compute.unwrap_or(0.0);
                let fits: Vec<usize> = profiles
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| {
                        p.memory_mib >= peak
                            && fraction(profiles, p, mig.compute_slices) + 1e-9 >= compute
                    })
                    .map(|(i, _)| i)
                    .collect();
                // Each workload keeps only the profiles no other profile that holds it can stand
                // in for.
                undominated(&maximal, &fits)
            })
            .collect();
        let used: BTreeSet<usize> = fits.iter().flatten().copied().collect();
        let eligible: u64 = input
            .workloads
            .iter()
            .zip(&fits)
            .filter(|(_, f)| !f.is_empty())
            .map(|(w, _)| u64::from(w.replicas))
            .sum();
        let gpus = u64::from(pool.gpus_per_node) * u64::from(pool.nodes);
        pools.push(PoolModel {
            layouts: project(&maximal, &used),
            fits,
            nodes: (gpus < eligible).then_some((pool.gpus_per_node, pool.nodes)),
        });
    }
    for (w, wl) in input.workloads.iter().enumerate() {
        if pools.iter().all(|p| p.fits[w].is_empty()) {
            return Err(NoOptimum::Unsupported(format!(
                "{} fits no instance",
                wl.name
            )));
        }
    }
    // Where nodes are modelled, a node holds tenants that all trust each other above `none`: that is
    // the planner's rule only when exactly those pairs may share a node.
    let n = input.tenants.len();
    let nodes_like_gpus = (0..n).all(|a| {
        (0..n).all(|b| a == b || input.node_ok[a][b] == (input.trust[a][b] != Trust::None))
    });
    if pools.iter().any(|p| p.nodes.is_some()) && !nodes_like_gpus {
        return Err(NoOptimum::Unsupported(
            "node sharing accepted between tenants that may not share a GPU".into(),
        ));
    }
    // Trust components over the tenants with replicas: they never share a GPU, and unless a pool's
    // nodes bind, each is solved alone.
    let tenants: BTreeSet<usize> = input.workloads.iter().map(|w| w.tenant).collect();
    let mut component: BTreeMap<usize, usize> = tenants.iter().map(|&t| (t, t)).collect();
    loop {
        let mut changed = false;
        for &a in &tenants {
            for &b in &tenants {
                if input.trust[a][b] != Trust::None && component[&a] < component[&b] {
                    let low = component[&a];
                    component.insert(b, low);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    if pools.iter().any(|p| p.nodes.is_some()) {
        component.values_mut().for_each(|r| *r = 0);
    }
    let mut total = 0u32;
    let roots: BTreeSet<usize> = component.values().copied().collect();
    for root in roots {
        let members: Vec<usize> = component
            .iter()
            .filter(|(_, &r)| r == root)
            .map(|(&t, _)| t)
            .collect();
        total += solve(input, &pools, &members, seconds)?;
    }
    Ok(Optimum { gpus: total })
}

/// The count vectors (indexed like the model's profiles) of every maximal set of instances one GPU
/// holds, from the placements.
fn maximal_layouts(
    memory_slices: u8,
    compute_slices: u8,
    profiles: &[MigProfile],
) -> Vec<Vec<u32>> {
    let placements: Vec<(usize, u32)> = profiles
        .iter()
        .enumerate()
        .flat_map(|(p, prof)| {
            prof.starts
                .iter()
                .filter(move |&&s| {
                    u32::from(s) + u32::from(prof.memory_slices) <= u32::from(memory_slices)
                })
                .map(move |&s| (p, ((1u32 << prof.memory_slices) - 1) << s))
        })
        .collect();
    struct State {
        mask: u32,
        compute: u32,
        media: u32,
        counts: Vec<u32>,
    }
    let fits = |st: &State, (p, mask): (usize, u32)| -> bool {
        let prof = &profiles[p];
        st.mask & mask == 0
            && st.compute + u32::from(prof.compute_slices) <= u32::from(compute_slices)
            && st.counts[p] < u32::from(prof.max_count)
            && (prof.variant != ProfileVariant::MediaExtensions || st.media == 0)
    };
    fn walk(
        from: usize,
        st: &mut State,
        placements: &[(usize, u32)],
        profiles: &[MigProfile],
        fits: &dyn Fn(&State, (usize, u32)) -> bool,
        out: &mut BTreeSet<Vec<u32>>,
    ) {
        if !placements.iter().any(|&pl| fits(st, pl)) {
            out.insert(st.counts.clone());
        }
        for i in from..placements.len() {
            let (p, mask) = placements[i];
            if !fits(st, (p, mask)) {
                continue;
            }
            let prof = &profiles[p];
            let me = u32::from(prof.variant == ProfileVariant::MediaExtensions);
            st.mask |= mask;
            st.compute += u32::from(prof.compute_slices);
            st.media += me;
            st.counts[p] += 1;
            walk(i + 1, st, placements, profiles, fits, out);
            st.counts[p] -= 1;
            st.media -= me;
            st.compute -= u32::from(prof.compute_slices);
            st.mask &= !mask;
        }
    }
    let mut st = State {
        mask: 0,
        compute: 0,
        media: 0,
        counts: vec![0; profiles.len()],
    };
    let mut out = BTreeSet::new();
    walk(0, &mut st, &placements, profiles, &fits, &mut out);
    out.into_iter().collect()
}

/// Whether the counts `v` fit one GPU: they are part of a maximal layout.
fn valid(maximal: &[Vec<u32>], v: &[u32]) -> bool {
    maximal
        .iter()
        .any(|m| m.iter().zip(v).all(|(&a, &b)| b <= a))
}

/// Whether an instance of `p` can stand in for one of `q` in every layout: each maximal layout with a
/// `q`, that `q` swapped for a `p`, still fits (and so does every part of it).
fn replaces(maximal: &[Vec<u32>], p: usize, q: usize) -> bool {
    maximal.iter().filter(|m| m[q] > 0).all(|m| {
        let mut v = m.clone();
        v[q] -= 1;
        v[p] += 1;
        valid(maximal, &v)
    })
}

/// The profiles of `fits` that no other profile of `fits` stands in for (of two that stand in for each
/// other, the first). A plan that gives a replica a profile that another stands in for keeps its GPUs
/// when the other is given instead, so an optimum exists over these alone.
fn undominated(maximal: &[Vec<u32>], fits: &[usize]) -> Vec<usize> {
    fits.iter()
        .copied()
        .filter(|&q| {
            !fits
                .iter()
                .any(|&p| p != q && replaces(maximal, p, q) && (!replaces(maximal, q, p) || p < q))
        })
        .collect()
}

/// The maximal layouts with every profile outside `used` dropped, without repeats, and without
/// layouts that are part of another.
fn project(maximal: &[Vec<u32>], used: &BTreeSet<usize>) -> Vec<Vec<u32>> {
    let cut: BTreeSet<Vec<u32>> = maximal
        .iter()
        .map(|m| {
            m.iter()
                .enumerate()
                .map(|(p, &c)| if used.contains(&p) { c } else { 0 })
                .collect()
        })
        .collect();
    let cut: Vec<Vec<u32>> = cut.into_iter().collect();
    cut.iter()
        .filter(|v| {
            !cut.iter()
                .any(|w| w != *v && v.iter().zip(w.iter()).all(|(a, b)| a <= b))
        })
        .cloned()
        .collect()
}

/// The maximal sets of tenants that all trust each other above `none`.
fn maximal_cliques(input: &PlanInput, tenants: &[usize]) -> Result<Vec<Vec<usize>>, NoOptimum> {
    if tenants.len() > 16 {
        return Err(NoOptimum::Unsupported(format!(
            "{} tenants in one trust component",
            tenants.len()
        )));
    }
    let n = tenants.len();
    let clique = |mask: u32| -> bool {
        (0..n).all(|i| {
            (0..n).all(|j| {
                i == j
                    || mask & (1 << i) == 0
                    || mask & (1 << j) == 0
                    || input.trust[tenants[i]][tenants[j]] != Trust::None
            })
        })
    };
    let all: Vec<u32> = (1u32..(1 << n)).filter(|&m| clique(m)).collect();
    Ok(all
        .iter()
        .filter(|&&m| !all.iter().any(|&o| o != m && o & m == m))
        .map(|&m| {
            (0..n)
                .filter(|i| m & (1 << i) != 0)
                .map(|i| tenants[i])
                .collect()
        })
        .collect())
}

/// The integer program of the workloads of `tenants`: its model and the GPU-count variable of each
/// (pool, layout, tenant set) group. With `integer` false, the LP relaxation. `at_least` is a lower
/// bound on the GPUs added as a constraint.
fn build(
    input: &PlanInput,
    pools: &[PoolModel],
    cliques: &[Vec<usize>],
    tenants: &[usize],
    (integer, at_least, seconds): (bool, f64, f64),
) -> (
    impl SolverModel<Solution = impl Solution, Error = good_lp::ResolutionError>,
    Vec<Variable>,
) {
    let mut vars: ProblemVariables = variables!();
    let number = |vars: &mut ProblemVariables, integer: bool| {
        if integer {
            vars.add(variable().integer().min(0.0))
        } else {
            vars.add(variable().min(0.0))
        }
    };
    // Which pool each workload runs in: a 0/1 variable per pool it may run in (none when it has one),
    // their sum 1. Replica classes per pool: (pool, tenant, profiles that hold it) with the replicas
    // of the workloads of the class that run there.
    let mut one_pool: Vec<Expression> = Vec::new();
    let mut classes: BTreeMap<Class, (Expression, f64)> = BTreeMap::new();
    for (w, wl) in input.workloads.iter().enumerate() {
        if !tenants.contains(&wl.tenant) {
            continue;
        }
        let here: Vec<usize> = (0..pools.len())
            .filter(|&p| !pools[p].fits[w].is_empty())
            .collect();
        let mut sum = Expression::from_other_affine(0.0);
        for &p in &here {
            let n = f64::from(wl.replicas);
            let class = classes
                .entry((p, wl.tenant, pools[p].fits[w].clone()))
                .or_insert_with(|| (Expression::from_other_affine(0.0), 0.0));
            class.1 += n;
            if here.len() == 1 {
                class.0.add_mul(n, 1.0);
            } else {
                let z = number(&mut vars, integer);
                sum.add_mul(1.0, z);
                class.0.add_mul(n, z);
            }
        }
        if here.len() > 1 {
            one_pool.push(sum);
        }
    }
    let classes: Vec<(Class, (Expression, f64))> = classes.into_iter().collect();
    let mut groups: Vec<(usize, usize, usize, Variable)> = Vec::new();
    // (group, class, profile, replicas): continuous, since for whole GPU counts the replicas form a
    // transportation problem (classes to instance slots), whose constraint matrix is totally
    // unimodular: a fractional assignment means an integer one exists.
    let mut given: Vec<(usize, usize, usize, Variable)> = Vec::new();
    for (p, pool) in pools.iter().enumerate() {
        for (l, layout) in pool.layouts.iter().enumerate() {
            for (s, set) in cliques.iter().enumerate() {
                let useful = classes.iter().any(|((cp, t, fits), _)| {
                    *cp == p && set.contains(t) && fits.iter().any(|&q| layout[q] > 0)
                });
                if !useful {
                    continue;
                }
                let g = groups.len();
                groups.push((p, l, s, number(&mut vars, integer)));
                for (c, ((cp, t, fits), (_, most))) in classes.iter().enumerate() {
                    if *cp != p || !set.contains(t) {
                        continue;
                    }
                    for &q in fits {
                        if layout[q] > 0 {
                            given.push((g, c, q, vars.add(variable().min(0.0).max(*most))));
                        }
                    }
                }
            }
        }
    }
    // Nodes where they may bind: each node holds GPUs of one tenant set (the tenants of a node all
    // trust each other above `none`, so they are part of a maximal set), at most its GPUs per node.
    let mut racks: Vec<(usize, usize, Variable, u32)> = Vec::new();
    for (p, pool) in pools.iter().enumerate() {
        if let Some((per_node, _)) = pool.nodes {
            for s in 0..cliques.len() {
                racks.push((p, s, number(&mut vars, integer), per_node));
            }
        }
    }
    let total: Expression = groups.iter().map(|g| g.3).sum();
    let mut model = vars
        .minimise(total.clone())
        .using(microlp)
        .with_time_limit(seconds.max(0.01));
    if at_least > 0.0 {
        model = model.with(total.geq(at_least));
    }
    for sum in one_pool {
        model = model.with(sum.eq(1.0));
    }
    for (g, &(p, l, _, x)) in groups.iter().enumerate() {
        for (q, &slots) in pools[p].layouts[l].iter().enumerate() {
            if slots == 0 {
                continue;
            }
            let on: Expression = given
                .iter()
                .filter(|(gg, _, qq, _)| *gg == g && *qq == q)
                .map(|(_, _, _, v)| *v)
                .sum();
            model = model.with(on.leq(f64::from(slots) * x));
        }
    }
    for (c, (_, (demand, _))) in classes.iter().enumerate() {
        let placed: Expression = given
            .iter()
            .filter(|(_, cc, _, _)| *cc == c)
            .map(|(_, _, _, v)| *v)
            .sum();
        model = model.with(placed.eq(demand.clone()));
    }
    for (p, pool) in pools.iter().enumerate() {
        let Some((_, nodes)) = pool.nodes else {
            continue;
        };
        let mut all = Expression::from_other_affine(0.0);
        for &(rp, s, m, per_node) in &racks {
            if rp != p {
                continue;
            }
            all.add_mul(1.0, m);
            let gpus: Expression = groups
                .iter()
                .filter(|g| g.0 == p && g.2 == s)
                .map(|g| g.3)
                .sum();
            model = model.with(gpus.leq(f64::from(per_node) * m));
        }
        model = model.with(all.leq(f64::from(nodes)));
    }
    (model, groups.into_iter().map(|g| g.3).collect())
}

fn solve(
    input: &PlanInput,
    pools: &[PoolModel],
    tenants: &[usize],
    seconds: f64,
) -> Result<u32, NoOptimum> {
    let cliques = maximal_cliques(input, tenants)?;
    let failed = |e: good_lp::ResolutionError| match e {
        good_lp::ResolutionError::Other(_) => NoOptimum::TimeLimit,
        e => NoOptimum::Solver(e.to_string()),
    };
    // The LP relaxation first: its value rounded up bounds the integer optimum (GPUs come in whole
    // numbers), and as a constraint it lets the branch and bound stop at the first placement that
    // meets it.
    let (relaxed, xs) = build(input, pools, &cliques, tenants, (false, 0.0, seconds));
    let lp = relaxed.solve().map_err(failed)?;
    let lp: f64 = xs.iter().map(|x| lp.value(*x)).sum();
    let (model, xs) = build(
        input,
        pools,
        &cliques,
        tenants,
        (true, (lp - 1e-6).ceil(), seconds),
    );
    let solution = model.solve().map_err(failed)?;
    if !matches!(solution.status(), SolutionStatus::Optimal) {
        return Err(NoOptimum::TimeLimit);
    }
    Ok(xs.iter().map(|x| solution.value(*x)).sum::<f64>().round() as u32)
}
