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
//! share a GPU), an integer `x[L][S]`: GPUs with layout `L` used by tenants of `S`, a maximal set of
//! tenants that all trust each other above `none`; and an integer `a[L][S][c][p]`: replicas of class `c`
//! (one tenant of `S`, one set of profiles that hold its peak and compute) given an instance of `p` on
//! those GPUs, at most `L[p] x[L][S]` per profile. Every replica of a class is placed; minimise the
//! GPUs. Grouping GPUs by (layout, tenant set) loses nothing: within a group every instance slot may go
//! to any tenant of `S`. Every replica may use any profile that holds it, not only the smallest, so no
//! sizing choice of the planner is assumed. Solved with good_lp's microlp backend; the answer counts
//! only when microlp proves it optimal.

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
    /// The fleet has a replica that is not an exclusive MIG instance.
    NotExclusiveMig(String),
    /// microlp did not prove optimality within the time limit.
    TimeLimit,
    /// microlp failed.
    Solver(String),
}

fn fraction(profiles: &[MigProfile], p: &MigProfile, compute_slices: u8) -> f64 {
    let whole = profiles
        .iter()
        .filter(|q| q.compute_slices == compute_slices)
        .find_map(|q| q.sms);
    match (p.sms, whole) {
        (Some(s), Some(w)) if w > 0 => f64::from(s) / f64::from(w),
        _ => f64::from(p.compute_slices) / f64::from(compute_slices.max(1)),
    }
}

/// The fewest GPUs for the fleet, proven by the integer program, or why not.
pub fn optimum(input: &PlanInput, seconds: f64) -> Result<Optimum, NoOptimum> {
    let pool = match input.pools.as_slice() {
        [pool] => pool,
        _ => return Err(NoOptimum::NotExclusiveMig("more than one pool".into())),
    };
    let Some(mig) = pool.model.mig else {
        return Err(NoOptimum::NotExclusiveMig(format!(
            "{} has no MIG",
            pool.model.id
        )));
    };
    let profiles = mig.profiles;
    // Replica classes: (tenant, profiles that hold the replica) -> replicas.
    let mut classes: BTreeMap<(usize, Vec<usize>), u32> = BTreeMap::new();
    for w in &input.workloads {
        let exclusive = matches!(w.kind, WorkloadClass::Inference | WorkloadClass::Batch)
            && w.latency == Latency::Critical
            && !input.tenants[w.tenant].confidential;
        if !exclusive {
            return Err(NoOptimum::NotExclusiveMig(w.name.clone()));
        }
        let peak = w.peak_memory_mib.unwrap_or(0);
        let compute = w.compute.unwrap_or(0.0);
        let fits: Vec<usize> = profiles
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.memory_mib >= peak && fraction(profiles, p, mig.compute_slices) + 1e-9 >= compute
            })
            .map(|(i, _)| i)
            .collect();
        if fits.is_empty() {
            return Err(NoOptimum::NotExclusiveMig(format!(
                "{} fits no instance",
                w.name
            )));
        }
        *classes.entry((w.tenant, fits)).or_default() += w.replicas;
    }
    // Trust components over the tenants with replicas.
    let tenants: BTreeSet<usize> = classes.keys().map(|(t, _)| *t).collect();
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
    let maximal = maximal_layouts(mig.memory_slices, mig.compute_slices, profiles);
    // Each class keeps only the profiles no other profile that holds it can stand in for.
    let classes: BTreeMap<(usize, Vec<usize>), u32> = classes
        .into_iter()
        .map(|((t, fits), n)| ((t, undominated(&maximal, &fits)), n))
        .fold(BTreeMap::new(), |mut m, (k, n)| {
            *m.entry(k).or_default() += n;
            m
        });
    let used: BTreeSet<usize> = classes
        .keys()
        .flat_map(|(_, f)| f.iter().copied())
        .collect();
    let layouts = project(&maximal, &used);
    let mut total = 0u32;
    let roots: BTreeSet<usize> = component.values().copied().collect();
    for root in roots {
        let members: Vec<usize> = component
            .iter()
            .filter(|(_, &r)| r == root)
            .map(|(&t, _)| t)
            .collect();
        let comp: Vec<(usize, Vec<usize>, u32)> = classes
            .iter()
            .filter(|((t, _), _)| members.contains(t))
            .map(|((t, fits), &n)| (*t, fits.clone(), n))
            .collect();
        total += solve_component(input, &layouts, &members, &comp, seconds)?;
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
        return Err(NoOptimum::NotExclusiveMig(format!(
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

/// The integer program of one component: its model and the GPU-count variable of each (layout, tenant
/// set) group. With `integer` false, the LP relaxation. `at_least` is a lower bound on the GPUs added as
/// a constraint.
fn build(
    layouts: &[Vec<u32>],
    cliques: &[Vec<usize>],
    classes: &[(usize, Vec<usize>, u32)],
    integer: bool,
    at_least: f64,
    seconds: f64,
) -> (
    impl SolverModel<Solution = impl Solution, Error = good_lp::ResolutionError>,
    Vec<Variable>,
) {
    let mut vars: ProblemVariables = variables!();
    let mut groups: Vec<(usize, Variable)> = Vec::new();
    // (group, class, profile, replicas): continuous, since for whole GPU counts the replicas form a
    // transportation problem (classes to instance slots), whose constraint matrix is totally
    // unimodular: a fractional assignment means an integer one exists.
    let mut given: Vec<(usize, usize, usize, Variable)> = Vec::new();
    for (l, layout) in layouts.iter().enumerate() {
        for set in cliques {
            let useful = classes
                .iter()
                .any(|(t, fits, _)| set.contains(t) && fits.iter().any(|&p| layout[p] > 0));
            if !useful {
                continue;
            }
            let g = groups.len();
            let x = if integer {
                vars.add(variable().integer().min(0.0))
            } else {
                vars.add(variable().min(0.0))
            };
            groups.push((l, x));
            for (c, (t, fits, n)) in classes.iter().enumerate() {
                if !set.contains(t) {
                    continue;
                }
                for &p in fits {
                    if layout[p] > 0 {
                        given.push((g, c, p, vars.add(variable().min(0.0).max(f64::from(*n)))));
                    }
                }
            }
        }
    }
    let total: Expression = groups.iter().map(|(_, x)| *x).sum();
    let mut model = vars
        .minimise(total.clone())
        .using(microlp)
        .with_time_limit(seconds.max(0.01));
    if at_least > 0.0 {
        model = model.with(total.geq(at_least));
    }
    for (g, (l, x)) in groups.iter().enumerate() {
        for (p, &slots) in layouts[*l].iter().enumerate() {
            if slots == 0 {
                continue;
            }
            let on: Expression = given
                .iter()
                .filter(|(gg, _, pp, _)| *gg == g && *pp == p)
                .map(|(_, _, _, v)| *v)
                .sum();
            model = model.with(on.leq(f64::from(slots) * *x));
        }
    }
    for (c, (_, _, n)) in classes.iter().enumerate() {
        let placed: Expression = given
            .iter()
            .filter(|(_, cc, _, _)| *cc == c)
            .map(|(_, _, _, v)| *v)
            .sum();
        model = model.with(placed.eq(f64::from(*n)));
    }
    (model, groups.into_iter().map(|(_, x)| x).collect())
}

fn solve_component(
    input: &PlanInput,
    layouts: &[Vec<u32>],
    tenants: &[usize],
    classes: &[(usize, Vec<usize>, u32)],
    seconds: f64,
) -> Result<u32, NoOptimum> {
    if classes.is_empty() {
        return Ok(0);
    }
    let cliques = maximal_cliques(input, tenants)?;
    let failed = |e: good_lp::ResolutionError| match e {
        good_lp::ResolutionError::Other(_) => NoOptimum::TimeLimit,
        e => NoOptimum::Solver(e.to_string()),
    };
    // The LP relaxation first: its value rounded up bounds the integer optimum (GPUs come in whole
    // numbers), and as a constraint it lets the branch and bound stop at the first placement that
    // meets it.
    let (relaxed, xs) = build(layouts, &cliques, classes, false, 0.0, seconds);
    let lp = relaxed.solve().map_err(failed)?;
    let lp: f64 = xs.iter().map(|x| lp.value(*x)).sum();
    let (model, xs) = build(
        layouts,
        &cliques,
        classes,
        true,
        (lp - 1e-6).ceil(),
        seconds,
    );
    let solution = model.solve().map_err(failed)?;
    if !matches!(solution.status(), SolutionStatus::Optimal) {
        return Err(NoOptimum::TimeLimit);
    }
    Ok(xs.iter().map(|x| solution.value(*x)).sum::<f64>().round() as u32)
}
