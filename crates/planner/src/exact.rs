//! The exact pattern ILP, through good_lp's pure-Rust microlp backend: one integer variable per
//! maximal layout (how many GPUs use it), minimise their sum subject to covering each profile's demand.
//!
//! microlp's branch and bound is young, so the solve runs under a time limit and its answer is
//! checked: a solution that does not cover the demand, or no solution in time, gives `None` and the
//! caller falls back to the heuristic packing.

use crate::pack::{first_fit_decreasing, realise, Packing};
use crate::spec::MigSpec;
use good_lp::solvers::microlp::microlp;
use good_lp::{variable, variables, Expression, Solution, SolverModel, Variable, WithTimeLimit};

/// The optimal packing of `demand`, or `None` when the solver fails or runs out of time.
pub fn exact_pack(spec: &MigSpec, demand: &[u32], time_limit_secs: f64) -> Option<Packing> {
    if demand.iter().all(|&d| d == 0) {
        return Some(Vec::new());
    }
    // No pattern is used more often than first-fit decreasing needs GPUs in all.
    let upper = first_fit_decreasing(spec, demand).len() as f64;
    let mut vars = variables!();
    let xs: Vec<Variable> = spec
        .patterns
        .iter()
        .map(|_| vars.add(variable().integer().min(0.0).max(upper)))
        .collect();
    let objective: Expression = xs.iter().copied().sum();
    let mut model = vars
        .minimise(objective)
        .using(microlp)
        .with_time_limit(time_limit_secs.max(0.01));
    for (p, &d) in demand.iter().enumerate() {
        if d == 0 {
            continue;
        }
        let covered: Expression = spec
            .patterns
            .iter()
            .zip(&xs)
            .filter(|(pat, _)| pat[p] > 0)
            .map(|(pat, x)| f64::from(pat[p]) * *x)
            .sum();
        model = model.with(covered.geq(f64::from(d)));
    }
    let solution = model.solve().ok()?;
    let mut counts: Vec<u64> = Vec::with_capacity(xs.len());
    for x in &xs {
        let v = solution.value(*x);
        if !v.is_finite() || v < -0.5 {
            return None;
        }
        counts.push(v.round() as u64);
    }
    // Realise: each chosen pattern takes what is still outstanding.
    let chosen: Vec<usize> = counts
        .iter()
        .enumerate()
        .flat_map(|(k, &n)| std::iter::repeat_n(k, n as usize))
        .collect();
    let out = realise(spec, &chosen, demand);
    let placed = |p: usize| out.iter().map(|g| g[p]).sum::<u32>();
    if (0..demand.len()).any(|p| placed(p) < demand[p]) || !out.iter().all(|g| spec.is_valid(g)) {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{lp_cover, pack};
    use gpu_trust_model::catalogue;

    #[test]
    fn exact_agrees_with_the_heuristic_on_small_demands() {
        let spec = MigSpec::new(catalogue::lookup("H100-SXM5-80GB").unwrap()).unwrap();
        let mut d = vec![0; spec.profiles.len()];
        d[spec.profile_index("1g.10gb").unwrap()] = 9;
        d[spec.profile_index("2g.20gb").unwrap()] = 4;
        d[spec.profile_index("3g.40gb").unwrap()] = 3;
        let exact = exact_pack(&spec, &d, 10.0).unwrap();
        let heuristic = pack(&spec, &d);
        let (lp, _) = lp_cover(&spec.patterns, &d);
        assert!(exact.len() as f64 >= lp - 1e-6);
        assert!(heuristic.len() >= exact.len());
        assert_eq!(heuristic.len(), exact.len());
    }
}
