//! Packing MIG instances into GPUs: given how many instances of each profile one trust group needs,
//! choose GPU layouts that hold them all on the fewest GPUs.
//!
//! Two methods run and the better result is kept, so the answer is never worse than first-fit
//! decreasing:
//!
//! - [`first_fit_decreasing`]: instances largest first, each on the first GPU whose layout can still
//!   take it (feasibility is a lookup in the set of every valid layout of the model).
//! - [`pattern_pack`]: the configuration LP over the model's maximal layouts (a few dozen columns),
//!   solved exactly by [`lp_cover`]; its solution rounded down gives most GPUs, and the small
//!   remainder is covered exactly by a bounded branch and bound (first-fit decreasing when the bound
//!   on search nodes is reached).

use crate::spec::MigSpec;

/// Numerical tolerance of the simplex.
const EPS: f64 = 1e-9;
/// Search nodes the branch and bound on the remainder may visit.
const BRANCH_LIMIT: u64 = 200_000;

/// The GPUs of a packing, each as counts indexed like [`MigSpec::profiles`]; every entry is a valid
/// layout and the sum covers the demand exactly.
pub type Packing = Vec<Vec<u32>>;

/// First-fit decreasing: instances by memory slices, then compute slices, largest first.
pub fn first_fit_decreasing(spec: &MigSpec, demand: &[u32]) -> Packing {
    let mut order: Vec<usize> = (0..spec.profiles.len()).collect();
    order.sort_by_key(|&p| {
        let q = spec.profiles[p];
        (
            std::cmp::Reverse(q.memory_slices),
            std::cmp::Reverse(q.compute_slices),
            p,
        )
    });
    let mut gpus: Packing = Vec::new();
    for p in order {
        let mut left = demand.get(p).copied().unwrap_or(0);
        if left == 0 {
            continue;
        }
        // Identical instances: first fit puts each on the first GPU that still takes one, so filling
        // GPUs in order is the same thing, in one pass.
        for g in gpus.iter_mut() {
            while left > 0 && spec.can_add(g, p) {
                g[p] += 1;
                left -= 1;
            }
            if left == 0 {
                break;
            }
        }
        while left > 0 {
            let mut g = vec![0u32; spec.profiles.len()];
            if !spec.can_add(&g, p) {
                // A profile that fits no empty GPU cannot come from the catalogue; stop rather than loop.
                break;
            }
            while left > 0 && spec.can_add(&g, p) {
                g[p] += 1;
                left -= 1;
            }
            gpus.push(g);
        }
    }
    gpus
}

/// The LP relaxation of covering `demand` with `patterns`: min sum x subject to A x >= d, x >= 0.
/// Returns the optimal value and x. Solved as its dual (max d.y subject to A^T y <= 1, y >= 0), whose
/// slack basis is feasible from the start, by the tableau simplex with Bland's rule (no cycling).
pub fn lp_cover(patterns: &[Vec<u32>], demand: &[u32]) -> (f64, Vec<f64>) {
    let m = demand.len();
    let n = patterns.len();
    if n == 0 || demand.iter().all(|&d| d == 0) {
        return (0.0, vec![0.0; n]);
    }
    // Columns: y_0..y_{m-1}, s_0..s_{n-1}; rows: one per pattern; last entry of each row is the rhs.
    let width = m + n + 1;
    let mut rows: Vec<Vec<f64>> = patterns
        .iter()
        .enumerate()
        .map(|(k, pat)| {
            let mut r = vec![0.0; width];
            for (p, v) in r.iter_mut().take(m).enumerate() {
                *v = f64::from(pat.get(p).copied().unwrap_or(0));
            }
            r[m + k] = 1.0;
            r[width - 1] = 1.0;
            r
        })
        .collect();
    let mut obj = vec![0.0; width];
    for p in 0..m {
        obj[p] = -f64::from(demand[p]);
    }
    let mut basis: Vec<usize> = (0..n).map(|k| m + k).collect();
    // Bland's rule terminates; the bound only guards against numerical trouble.
    for _ in 0..10_000 {
        let Some(enter) = (0..width - 1).find(|&j| obj[j] < -EPS) else {
            break;
        };
        let mut leave: Option<(usize, f64)> = None;
        for (i, r) in rows.iter().enumerate() {
            if r[enter] > EPS {
                let ratio = r[width - 1] / r[enter];
                leave = match leave {
                    None => Some((i, ratio)),
                    Some((li, lr)) => {
                        if ratio < lr - EPS || (ratio <= lr + EPS && basis[i] < basis[li]) {
                            Some((i, ratio))
                        } else {
                            Some((li, lr))
                        }
                    }
                };
            }
        }
        // The dual is bounded (every y is capped by some pattern containing its profile); a column
        // without a positive entry means a profile no pattern holds: leave it at zero.
        let Some((li, _)) = leave else {
            obj[enter] = 0.0;
            continue;
        };
        let pivot = rows[li][enter];
        for v in rows[li].iter_mut() {
            *v /= pivot;
        }
        let pivot_row = rows[li].clone();
        for (i, r) in rows.iter_mut().enumerate() {
            if i != li && r[enter].abs() > EPS {
                let f = r[enter];
                for (v, pv) in r.iter_mut().zip(&pivot_row) {
                    *v -= f * pv;
                }
            }
        }
        let f = obj[enter];
        for (v, pv) in obj.iter_mut().zip(&pivot_row) {
            *v -= f * pv;
        }
        basis[li] = enter;
    }
    let x: Vec<f64> = (0..n).map(|k| obj[m + k].max(0.0)).collect();
    (obj[width - 1], x)
}

/// A simple bound on GPUs for a demand: memory slices, compute slices, and each profile's most
/// instances per GPU.
fn quick_bound(spec: &MigSpec, demand: &[u32]) -> u64 {
    let mem = spec
        .memory_of(demand)
        .div_ceil(u64::from(spec.memory_slices.max(1)));
    let compute = spec
        .compute_of(demand)
        .div_ceil(u64::from(spec.compute_slices.max(1)));
    let per_profile = demand
        .iter()
        .zip(&spec.profiles)
        .map(|(&d, p)| u64::from(d).div_ceil(u64::from(p.max_count.max(1))))
        .max()
        .unwrap_or(0);
    mem.max(compute).max(per_profile)
}

/// Covers `demand` exactly with the fewest patterns, by depth-first search over the pattern to use
/// for the largest outstanding profile. `None` when the node limit is hit before the search ends.
fn branch_and_bound(spec: &MigSpec, demand: &[u32], incumbent: usize) -> Option<Vec<usize>> {
    struct Search<'a> {
        spec: &'a MigSpec,
        order: Vec<usize>,
        best: usize,
        best_path: Option<Vec<usize>>,
        nodes: u64,
        aborted: bool,
    }
    impl Search<'_> {
        fn go(&mut self, demand: &mut [u32], path: &mut Vec<usize>) {
            self.nodes += 1;
            if self.nodes > BRANCH_LIMIT {
                self.aborted = true;
                return;
            }
            let Some(&p) = self.order.iter().find(|&&p| demand[p] > 0) else {
                if path.len() < self.best {
                    self.best = path.len();
                    self.best_path = Some(path.clone());
                }
                return;
            };
            if path.len() as u64 + quick_bound(self.spec, demand) >= self.best as u64 {
                return;
            }
            // Patterns holding profile p, the ones covering the most outstanding memory first.
            let mut candidates: Vec<(u64, usize)> = self
                .spec
                .patterns
                .iter()
                .enumerate()
                .filter(|(_, pat)| pat[p] > 0)
                .map(|(k, pat)| {
                    let covered: Vec<u32> = pat
                        .iter()
                        .zip(demand.iter())
                        .map(|(&a, &d)| a.min(d))
                        .collect();
                    (self.spec.memory_of(&covered), k)
                })
                .collect();
            candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut tried: Vec<Vec<u32>> = Vec::new();
            for (_, k) in candidates {
                let covered: Vec<u32> = self.spec.patterns[k]
                    .iter()
                    .zip(demand.iter())
                    .map(|(&a, &d)| a.min(d))
                    .collect();
                // Two patterns that cover the same outstanding instances lead to the same subproblem.
                if tried.contains(&covered) {
                    continue;
                }
                tried.push(covered.clone());
                for (d, c) in demand.iter_mut().zip(&covered) {
                    *d -= c;
                }
                path.push(k);
                self.go(demand, path);
                path.pop();
                for (d, c) in demand.iter_mut().zip(&covered) {
                    *d += c;
                }
                if self.aborted {
                    return;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..spec.profiles.len()).collect();
    order.sort_by_key(|&p| {
        (
            std::cmp::Reverse(spec.profiles[p].memory_slices),
            std::cmp::Reverse(spec.profiles[p].compute_slices),
            p,
        )
    });
    let mut s = Search {
        spec,
        order,
        best: incumbent,
        best_path: None,
        nodes: 0,
        aborted: false,
    };
    let mut d = demand.to_vec();
    s.go(&mut d, &mut Vec::new());
    if s.aborted {
        s.best_path.filter(|p| p.len() < incumbent)
    } else {
        s.best_path
    }
}

/// Turns chosen patterns into GPUs that hold exactly `demand` (instances a pattern has beyond the
/// demand are left out; a subset of a valid layout is valid).
pub(crate) fn realise(spec: &MigSpec, chosen: &[usize], demand: &[u32]) -> Packing {
    let mut left = demand.to_vec();
    let mut out = Vec::new();
    for &k in chosen {
        let pat = &spec.patterns[k];
        let g: Vec<u32> = pat
            .iter()
            .zip(left.iter_mut())
            .map(|(&a, l)| {
                let take = a.min(*l);
                *l -= take;
                take
            })
            .collect();
        if g.iter().any(|&c| c > 0) {
            out.push(g);
        }
    }
    out
}

/// The pattern method: LP, round down, exact remainder.
pub fn pattern_pack(spec: &MigSpec, demand: &[u32]) -> Packing {
    if demand.iter().all(|&d| d == 0) {
        return Vec::new();
    }
    let (_, x) = lp_cover(&spec.patterns, demand);
    let mut chosen: Vec<usize> = Vec::new();
    let mut covered = vec![0u32; demand.len()];
    for (k, &v) in x.iter().enumerate() {
        let copies = (v + EPS).floor() as u64;
        for _ in 0..copies {
            chosen.push(k);
            for (c, &a) in covered.iter_mut().zip(&spec.patterns[k]) {
                *c += a;
            }
        }
    }
    let residual: Vec<u32> = demand
        .iter()
        .zip(&covered)
        .map(|(&d, &c)| d.saturating_sub(c))
        .collect();
    let mut packing = realise(spec, &chosen, demand);
    // What the rounded-down patterns do not cover: exactly by search, else first-fit decreasing.
    let ffd = first_fit_decreasing(spec, &residual);
    match branch_and_bound(spec, &residual, ffd.len()) {
        Some(path) => {
            let rest = realise(spec, &path, &residual);
            packing.extend(rest);
        }
        None => packing.extend(ffd),
    }
    // Instances the rounded patterns held beyond the demand were dropped per pattern in order, so the
    // total is exact; compact GPUs left empty.
    packing.retain(|g| g.iter().any(|&c| c > 0));
    packing
}

/// The better of [`pattern_pack`] and [`first_fit_decreasing`] (fewer GPUs; the pattern result on a
/// tie), with GPUs ordered largest first.
pub fn pack(spec: &MigSpec, demand: &[u32]) -> Packing {
    let ffd = first_fit_decreasing(spec, demand);
    let pat = pattern_pack(spec, demand);
    let mut best = if pat.len() <= ffd.len() { pat } else { ffd };
    best.sort_by(|a, b| {
        spec.memory_of(b)
            .cmp(&spec.memory_of(a))
            .then_with(|| b.cmp(a))
    });
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::catalogue;

    fn h100() -> MigSpec {
        MigSpec::new(catalogue::lookup("H100-SXM5-80GB").unwrap()).unwrap()
    }

    fn demand(spec: &MigSpec, items: &[(&str, u32)]) -> Vec<u32> {
        let mut d = vec![0; spec.profiles.len()];
        for (n, c) in items {
            d[spec.profile_index(n).unwrap()] = *c;
        }
        d
    }

    fn total(p: &Packing, len: usize) -> Vec<u32> {
        let mut t = vec![0; len];
        for g in p {
            for (a, b) in t.iter_mut().zip(g) {
                *a += b;
            }
        }
        t
    }

    #[test]
    fn lp_matches_hand_computed_bound() {
        let spec = h100();
        // 4 x 3g.40gb: two per GPU, LP = 2.
        let d = demand(&spec, &[("3g.40gb", 4)]);
        let (v, _) = lp_cover(&spec.patterns, &d);
        assert!((v - 2.0).abs() < 1e-6, "{v}");
        // 7 x 1g.10gb and 1 x 7g.80gb: 2 GPUs.
        let d = demand(&spec, &[("1g.10gb", 7), ("7g.80gb", 1)]);
        let (v, _) = lp_cover(&spec.patterns, &d);
        assert!((v - 2.0).abs() < 1e-6, "{v}");
    }

    #[test]
    fn packing_reaches_the_bound_on_mixed_demands() {
        let spec = h100();
        // 4g + 3g fill a GPU's compute: three pairs and two 1g need four GPUs.
        let d = demand(&spec, &[("4g.40gb", 3), ("3g.40gb", 3), ("1g.10gb", 2)]);
        let best = pack(&spec, &d);
        assert_eq!(total(&best, d.len()), d);
        assert!(best.iter().all(|g| spec.is_valid(g)));
        assert_eq!(best.len(), 4);
        assert!(best.len() <= first_fit_decreasing(&spec, &d).len());
        // 21 memory slices and 18 compute slices: three GPUs.
        let d = demand(&spec, &[("3g.40gb", 3), ("2g.20gb", 3), ("1g.10gb", 3)]);
        let best = pack(&spec, &d);
        assert_eq!(total(&best, d.len()), d);
        assert_eq!(best.len(), 3);
        assert!(best.len() <= first_fit_decreasing(&spec, &d).len());
    }

    #[test]
    fn large_demands_are_covered_exactly_and_fast() {
        let spec = h100();
        let d = demand(
            &spec,
            &[
                ("1g.10gb", 1013),
                ("1g.20gb", 355),
                ("2g.20gb", 411),
                ("3g.40gb", 207),
                ("4g.40gb", 58),
                ("7g.80gb", 31),
            ],
        );
        let p = pack(&spec, &d);
        assert_eq!(total(&p, d.len()), d);
        assert!(p.iter().all(|g| spec.is_valid(g)));
        let (lp, _) = lp_cover(&spec.patterns, &d);
        assert!(p.len() as f64 <= lp.ceil() + 1.0, "{} vs {lp}", p.len());
    }
}
