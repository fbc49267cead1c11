//! An exact search for the fewest MIG GPUs of one trust component that fills one GPU at a time (bin
//! completion), for the components where the search by instance ([`crate::improve`]) stops at its node
//! limit above the optimum.
//!
//! Instances that are interchangeable (one profile, handed out one way, serving the same tenants) form
//! a kind, and the state of the search is how many of each kind are left. Each new GPU takes one
//! instance of the largest kind left and then a maximal set of others that fit next to it: its counts
//! a valid layout of the model, one way of handing each profile out, and every two tenants on it
//! trusting each other above `none`. Both restrictions lose no packing: GPUs can be numbered so that
//! each holds the largest instance not on an earlier one, and an instance that fits on a GPU may move
//! there from a later one (a part of a valid layout is valid, and fewer tenants trust each other no
//! less). A state that did not fit in some number of GPUs is remembered, so that the many orders that
//! reach it are searched once; a state is dropped when a lower bound (slices, most per GPU, half-GPU
//! instances, and tenants that may not share a GPU, each needing its own) exceeds the GPUs left.
//!
//! The search counts the states and GPUs it visits and stops at a fixed limit, so it is deterministic
//! and bounded.

use crate::file::PlanInput;
use crate::spec::MigSpec;
use crate::unit::Share;
use std::collections::HashMap;

/// Instances that are interchangeable for the search.
#[derive(Debug, Clone)]
pub(crate) struct Kind {
    pub(crate) profile: usize,
    pub(crate) share: Share,
    /// Sorted and without repeats.
    pub(crate) tenants: Vec<usize>,
    pub(crate) count: u32,
}

/// The most kinds the search takes (which kinds may share a GPU is a 128-bit mask).
pub(crate) const MAX_KINDS: usize = 128;

struct Search<'a> {
    spec: &'a MigSpec,
    /// Kinds, largest first.
    kinds: Vec<Kind>,
    /// Per kind, the kinds that may share a GPU with it (itself included).
    compat: Vec<u128>,
    memory: Vec<u64>,
    compute: Vec<u64>,
    /// Per tenant of the component, the kinds that serve it.
    kinds_of: Vec<Vec<usize>>,
    /// Per tenant, the tenants (by position in `tenants`) it may share a GPU with.
    near: Vec<Vec<bool>>,
    /// Per state left, the most GPUs it is known not to fit in.
    failed: HashMap<Vec<u32>, usize>,
    /// The GPUs of the placement found, as counts per kind (the last GPU first).
    found: Vec<Vec<u32>>,
    nodes: u64,
    limit: u64,
}

impl Search<'_> {
    /// The fewest GPUs the counts `c` (per profile) need alone: slices, most per GPU, and the
    /// instances that take half a GPU or more (at most two per GPU) or all of it.
    fn bound_counts(&self, c: &[u64]) -> u64 {
        let memory_slices = u64::from(self.spec.memory_slices.max(1));
        let compute_slices = u64::from(self.spec.compute_slices.max(1));
        let (mut full, mut half, mut most) = (0u64, 0u64, 0u64);
        let (mut memory, mut compute) = (0u64, 0u64);
        for (p, &n) in c.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let prof = self.spec.profiles[p];
            let (m, k) = (
                u64::from(prof.memory_slices),
                u64::from(prof.compute_slices),
            );
            if m >= memory_slices || k >= compute_slices {
                full += n;
                continue;
            }
            if 2 * m >= memory_slices {
                half += n;
            }
            most = most.max(n.div_ceil(u64::from(prof.max_count.max(1))));
            memory += n * m;
            compute += n * k;
        }
        full + most
            .max(half.div_ceil(2))
            .max(memory.div_ceil(memory_slices))
            .max(compute.div_ceil(compute_slices))
    }

    /// A lower bound on the GPUs that `rest` needs: the counts' own bound, and the sum over tenants
    /// that pairwise may not share a GPU (chosen greedily, the most loaded first) of each one's bound.
    fn bound(&self, rest: &[u32]) -> u64 {
        let profiles = self.spec.profiles.len();
        let mut all = vec![0u64; profiles];
        for (k, &n) in rest.iter().enumerate() {
            all[self.kinds[k].profile] += u64::from(n);
        }
        let whole = self.bound_counts(&all);
        let mut per: Vec<(u64, usize)> = Vec::new();
        for (x, ks) in self.kinds_of.iter().enumerate() {
            let mut c = vec![0u64; profiles];
            let mut any = false;
            for &k in ks {
                if rest[k] > 0 {
                    c[self.kinds[k].profile] += u64::from(rest[k]);
                    any = true;
                }
            }
            if any {
                per.push((self.bound_counts(&c), x));
            }
        }
        per.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut chosen: Vec<usize> = Vec::new();
        let mut apart = 0u64;
        for &(b, x) in &per {
            if chosen.iter().all(|&y| !self.near[x][y]) {
                chosen.push(x);
                apart += b;
            }
        }
        whole.max(apart)
    }

    /// Places `rest` on at most `left` GPUs; `None` when the limit stops the search.
    fn fill(&mut self, rest: &mut Vec<u32>, left: usize) -> Option<bool> {
        let Some(first) = rest.iter().position(|&n| n > 0) else {
            return Some(true);
        };
        self.nodes += 1;
        if self.nodes > self.limit {
            return None;
        }
        if left == 0 || self.bound(rest) > left as u64 {
            return Some(false);
        }
        if self.failed.get(rest.as_slice()).is_some_and(|&f| f >= left) {
            return Some(false);
        }
        let mut gpus: Vec<Vec<u32>> = Vec::new();
        let mut chosen = vec![0u32; rest.len()];
        self.gpus(first, first, 0, u128::MAX, rest, &mut chosen, &mut gpus);
        if self.nodes > self.limit {
            return None;
        }
        for gpu in gpus {
            for (r, &c) in rest.iter_mut().zip(&gpu) {
                *r -= c;
            }
            let r = self.fill(rest, left - 1);
            for (r, &c) in rest.iter_mut().zip(&gpu) {
                *r += c;
            }
            match r {
                Some(true) => {
                    self.found.push(gpu);
                    return Some(true);
                }
                Some(false) => {}
                None => return None,
            }
        }
        let f = self.failed.entry(rest.clone()).or_insert(0);
        *f = (*f).max(left);
        Some(false)
    }

    /// The maximal GPUs over kinds `j..` that hold one instance of `first`, given the layout `key`
    /// and the kinds `allowed` next to those chosen so far.
    #[allow(clippy::too_many_arguments)]
    fn gpus(
        &mut self,
        first: usize,
        j: usize,
        key: u64,
        allowed: u128,
        rest: &[u32],
        chosen: &mut Vec<u32>,
        out: &mut Vec<Vec<u32>>,
    ) {
        if self.nodes > self.limit {
            return;
        }
        if j == self.kinds.len() {
            // Only GPUs that no instance left fits next to.
            let open = (0..self.kinds.len()).any(|k| {
                rest[k] > chosen[k]
                    && allowed & (1u128 << k) != 0
                    && self
                        .spec
                        .is_valid_key(key + self.spec.unit_key(self.kinds[k].profile))
            });
            if !open {
                self.nodes += 1;
                out.push(chosen.clone());
            }
            return;
        }
        if rest[j] == 0 || allowed & (1u128 << j) == 0 {
            self.gpus(first, j + 1, key, allowed, rest, chosen, out);
            return;
        }
        let unit = self.spec.unit_key(self.kinds[j].profile);
        let mut most = 0u32;
        while most < rest[j] && self.spec.is_valid_key(key + u64::from(most + 1) * unit) {
            most += 1;
        }
        let least = u32::from(j == first);
        for c in (least..=most).rev() {
            chosen[j] = c;
            let next = if c > 0 {
                allowed & self.compat[j]
            } else {
                allowed
            };
            self.gpus(
                first,
                j + 1,
                key + u64::from(c) * unit,
                next,
                rest,
                chosen,
                out,
            );
        }
        chosen[j] = 0;
    }
}

/// The kinds on each of at most `gpus` GPUs (an index into `kinds` per instance), or `None` when no
/// placement exists or the search visits `limit` states and GPUs first. `spent` grows by those
/// visited.
pub(crate) fn place(
    input: &PlanInput,
    spec: &MigSpec,
    kinds: &[Kind],
    gpus: usize,
    limit: u64,
    spent: &mut u64,
) -> Option<Vec<Vec<usize>>> {
    if kinds.is_empty() || kinds.len() > MAX_KINDS {
        return None;
    }
    let size = |k: &Kind| {
        let p = spec.profiles[k.profile];
        (p.memory_slices, p.compute_slices)
    };
    let mut order: Vec<usize> = (0..kinds.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&kinds[a], &kinds[b]);
        size(y)
            .cmp(&size(x))
            .then(x.profile.cmp(&y.profile))
            .then(x.share.cmp(&y.share))
            .then(x.tenants.cmp(&y.tenants))
    });
    let sorted: Vec<Kind> = order.iter().map(|&k| kinds[k].clone()).collect();
    let trusting = |a: &[usize], b: &[usize]| {
        a.iter()
            .all(|&x| b.iter().all(|&y| input.may_share_gpu(x, y)))
    };
    let compat: Vec<u128> = sorted
        .iter()
        .enumerate()
        .map(|(a, x)| {
            sorted.iter().enumerate().fold(0u128, |m, (b, y)| {
                let together = a == b
                    || ((x.profile != y.profile || x.share == y.share)
                        && trusting(&x.tenants, &y.tenants));
                if together {
                    m | (1u128 << b)
                } else {
                    m
                }
            })
        })
        .collect();
    let mut tenants: Vec<usize> = sorted
        .iter()
        .flat_map(|k| k.tenants.iter().copied())
        .collect();
    tenants.sort_unstable();
    tenants.dedup();
    let kinds_of: Vec<Vec<usize>> = tenants
        .iter()
        .map(|t| {
            (0..sorted.len())
                .filter(|&k| sorted[k].tenants.contains(t))
                .collect()
        })
        .collect();
    let near: Vec<Vec<bool>> = tenants
        .iter()
        .map(|&a| tenants.iter().map(|&b| input.may_share_gpu(a, b)).collect())
        .collect();
    let mut s = Search {
        spec,
        memory: sorted
            .iter()
            .map(|k| u64::from(spec.profiles[k.profile].memory_slices))
            .collect(),
        compute: sorted
            .iter()
            .map(|k| u64::from(spec.profiles[k.profile].compute_slices))
            .collect(),
        kinds: sorted,
        compat,
        kinds_of,
        near,
        failed: HashMap::new(),
        found: Vec::new(),
        nodes: 0,
        limit,
    };
    let mut rest: Vec<u32> = s.kinds.iter().map(|k| k.count).collect();
    let memory: u64 = rest
        .iter()
        .zip(&s.memory)
        .map(|(&n, &m)| u64::from(n) * m)
        .sum();
    let compute: u64 = rest
        .iter()
        .zip(&s.compute)
        .map(|(&n, &c)| u64::from(n) * c)
        .sum();
    if memory > gpus as u64 * u64::from(spec.memory_slices)
        || compute > gpus as u64 * u64::from(spec.compute_slices)
    {
        return None;
    }
    let r = s.fill(&mut rest, gpus);
    *spent += s.nodes;
    if r != Some(true) {
        return None;
    }
    Some(
        s.found
            .iter()
            .rev()
            .map(|gpu| {
                gpu.iter()
                    .enumerate()
                    .flat_map(|(k, &c)| std::iter::repeat_n(order[k], c as usize))
                    .collect()
            })
            .collect(),
    )
}
