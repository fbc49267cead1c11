//! Step 1, pools: which pool each workload runs in, decided with the packing.
//!
//! Each workload may run in the pools where it gets something (and that the plan file does not rule
//! out), the cheapest first (the share of a GPU one replica takes there). The choice starts greedy:
//! each workload in its cheapest pool; when a pool runs out of nodes, its workloads with unplaced
//! replicas move to their next pool and both are planned again. A choice is then judged by planning
//! every pool with the workloads it gets (each pool's plan of a set of workloads is kept, so a set is
//! planned once), by the replicas left unplaced, then GPUs, then nodes; and the search looks for a
//! better one among the choices of the workloads that have more than one pool:
//!
//! - with at most [`EVERY_CHOICE`] ways to choose, it tries them all;
//! - with more, a local search: from the greedy choice, move one workload to another pool, or swap
//!   two workloads between two pools, taking each change that leaves no more replicas unplaced and no
//!   more GPUs (a choice is tried once, so it walks on across choices of equal GPUs, whatever their
//!   nodes) and keeping the best choice it passes, until no move does, the plan's GPUs reach the
//!   lower bound (no plan uses fewer), or [`PLANS`] pool plans have been made; then the same from
//!   every workload in one pool, for each pool (the cheapest pool is not always the one where the
//!   fewest GPUs hold everything), with [`PLANS`] / 2 more plans each and, since those starts are
//!   far from where the walk ends, moves of every workload of one tenant tried first.
//!
//! The search judges a choice by plans whose exact searches get [`QUICK`] times smaller limits; the
//! best choice of each walk and the starts are then planned in full, and the best of them is kept
//! when its plan beats the greedy choice's (also planned in full), so the search only ever keeps a
//! better plan, and never a worse one than the walk from the greedy choice alone.

use super::pool::PoolCtx;
use crate::unit::{Miss, PoolResult};
use std::collections::{BTreeMap, BTreeSet};

/// Ways to choose pools that are all tried.
const EVERY_CHOICE: usize = 256;
/// Pool plans the search may make, in all.
const PLANS: usize = 1000;
/// What the search's plans divide the exact searches' limits by.
const QUICK: u64 = 8;

/// The pools' plans of the sets of workloads tried so far.
struct Plans<'b> {
    ctxs: Vec<PoolCtx<'b>>,
    /// Per pool, the plan of each set of workloads.
    done: Vec<BTreeMap<Vec<usize>, PoolResult>>,
    made: usize,
}

impl<'b> Plans<'b> {
    fn new(ctxs: &[PoolCtx<'b>], effort: u64) -> Plans<'b> {
        Plans {
            ctxs: ctxs.iter().map(|&c| PoolCtx { effort, ..c }).collect(),
            done: (0..ctxs.len()).map(|_| BTreeMap::new()).collect(),
            made: 0,
        }
    }

    /// The workloads `choice` gives pool `p`.
    fn set(choice: &[Option<usize>], p: usize) -> Vec<usize> {
        (0..choice.len())
            .filter(|&w| choice[w] == Some(p))
            .collect()
    }

    fn plan(&mut self, p: usize, set: Vec<usize>) -> &PoolResult {
        let ctxs = &self.ctxs;
        let made = &mut self.made;
        self.done[p].entry(set).or_insert_with_key(|ws| {
            *made += 1;
            ctxs[p].plan(ws)
        })
    }

    /// Replicas left unplaced, GPUs and nodes of a choice.
    fn score(&mut self, choice: &[Option<usize>]) -> (usize, u32, usize) {
        let mut score = (0, 0, 0);
        for p in 0..self.ctxs.len() {
            let r = self.plan(p, Self::set(choice, p));
            score.0 += r.misses.len();
            score.1 += r.gpus();
            score.2 += r.nodes.len();
        }
        score
    }
}

/// The pool of each workload (`None` for those that can run nowhere) and each pool's plan, given the
/// pools each may run in, the cheapest first, and the lower bound on the GPUs of every plan that
/// places every replica (`None` when no workload has a choice: then the greedy choice is kept).
pub(super) fn choose(
    ctxs: &[PoolCtx],
    candidates: &[Vec<usize>],
    lower_bound: Option<u32>,
) -> (Vec<Option<usize>>, Vec<PoolResult>) {
    let tenant = |w: usize| ctxs.first().map_or(0, |c| c.input.workloads[w].tenant);
    let mut plans = Plans::new(ctxs, 1);
    // Greedy: the cheapest pool, then the next for workloads a full pool leaves unplaced.
    let mut at: Vec<usize> = vec![0; candidates.len()];
    let choice_of = |at: &[usize]| -> Vec<Option<usize>> {
        (0..at.len())
            .map(|w| candidates[w].get(at[w]).copied())
            .collect()
    };
    for _round in 0..=ctxs.len() {
        let choice = choice_of(&at);
        let mut moved: BTreeSet<usize> = BTreeSet::new();
        for p in 0..ctxs.len() {
            for (rep, miss) in &plans.plan(p, Plans::set(&choice, p)).misses {
                if matches!(miss, Miss::Capacity(_)) && at[rep.w] + 1 < candidates[rep.w].len() {
                    moved.insert(rep.w);
                }
            }
        }
        if moved.is_empty() {
            break;
        }
        for w in moved {
            at[w] += 1;
        }
    }
    let free: Vec<usize> = (0..candidates.len())
        .filter(|&w| candidates[w].len() > 1)
        .collect();
    let lower_bound = lower_bound.unwrap_or(u32::MAX);
    let done = |s: (usize, u32, usize)| s.0 == 0 && s.1 <= lower_bound;
    let greedy = choice_of(&at);
    let greedy_score = plans.score(&greedy);
    let mut best = greedy.clone();
    let mut starts = vec![greedy.clone()];
    let mut full = plans;
    let mut plans = Plans::new(ctxs, QUICK);
    let mut score = if done(greedy_score) || free.is_empty() {
        greedy_score
    } else {
        plans.score(&best)
    };
    let ways = free.iter().try_fold(1usize, |n, &w| {
        n.checked_mul(candidates[w].len())
            .filter(|&n| n <= EVERY_CHOICE)
    });
    if done(score) || free.is_empty() {
        // The greedy choice is as good as any.
    } else if let Some(ways) = ways {
        for mut k in 0..ways {
            let mut choice = best.clone();
            for &w in &free {
                let n = candidates[w].len();
                choice[w] = Some(candidates[w][k % n]);
                k /= n;
            }
            let s = plans.score(&choice);
            if s < score {
                score = s;
                best = choice;
                if done(score) {
                    break;
                }
            }
        }
    } else {
        // Starts: the greedy choice, then every workload in one pool, for each pool where it may
        // run (the cheapest pool is not always the one the fewest GPUs use).
        for p in 0..ctxs.len() {
            let mut start = best.clone();
            for &w in &free {
                if candidates[w].contains(&p) {
                    start[w] = Some(p);
                }
            }
            if !starts.contains(&start) {
                starts.push(start);
            }
        }
        let mut seen: BTreeSet<Vec<Option<usize>>> = BTreeSet::new();
        // From each start in turn, the search walks from choice to choice of no more unplaced
        // replicas and GPUs (nodes do not hold it back) and keeps the best it passes.
        let mut ends = Vec::new();
        'search: for (k, start) in starts.iter().enumerate() {
            let share = PLANS + k * PLANS / 2;
            seen.insert(start.clone());
            let mut at = start.clone();
            let mut here = plans.score(&at);
            let mut mine = (here, at.clone());
            loop {
                let mut changed = false;
                // From the starts in one pool, far from where the walk ends, moves of every
                // workload of one tenant first; then moves of one workload and swaps of two.
                let mut moves: Vec<Vec<(usize, usize)>> = Vec::new();
                let tenants: BTreeSet<usize> = free.iter().map(|&w| tenant(w)).collect();
                for t in tenants.into_iter().filter(|_| k > 0) {
                    for p in 0..ctxs.len() {
                        let m: Vec<(usize, usize)> = free
                            .iter()
                            .filter(|&&w| tenant(w) == t && at[w] != Some(p))
                            .filter(|&&w| candidates[w].contains(&p))
                            .map(|&w| (w, p))
                            .collect();
                        if m.len() > 1 {
                            moves.push(m);
                        }
                    }
                }
                for &w in &free {
                    for &p in &candidates[w] {
                        if at[w] != Some(p) {
                            moves.push(vec![(w, p)]);
                        }
                    }
                }
                for (i, &a) in free.iter().enumerate() {
                    for &b in &free[i + 1..] {
                        let (Some(pa), Some(pb)) = (at[a], at[b]) else {
                            continue;
                        };
                        if pa != pb && candidates[a].contains(&pb) && candidates[b].contains(&pa) {
                            moves.push(vec![(a, pb), (b, pa)]);
                        }
                    }
                }
                for m in moves {
                    if done(mine.0) || plans.made >= share {
                        break;
                    }
                    let mut choice = at.clone();
                    for &(w, p) in &m {
                        choice[w] = Some(p);
                    }
                    if !seen.insert(choice.clone()) {
                        continue;
                    }
                    let s = plans.score(&choice);
                    if (s.0, s.1) <= (here.0, here.1) {
                        if s < mine.0 {
                            mine = (s, choice.clone());
                        }
                        here = s;
                        at = choice;
                        changed = true;
                    }
                }
                if !changed || done(mine.0) || plans.made >= share {
                    break;
                }
            }
            let stop = done(mine.0);
            ends.push(mine.1);
            if stop {
                break 'search;
            }
        }
        starts.extend(ends);
    }
    // The best choice found from each start, and the starts, planned in full: the best of them, if
    // it beats the greedy choice.
    let mut kept = (greedy_score, greedy.clone());
    for choice in std::iter::once(&best).chain(&starts) {
        if *choice != greedy {
            let s = full.score(choice);
            if s < kept.0 {
                kept = (s, choice.clone());
            }
        }
    }
    let best = kept.1;
    let results = (0..ctxs.len())
        .map(|p| {
            let set = Plans::set(&best, p);
            full.done[p]
                .remove(&set)
                .unwrap_or_else(|| ctxs[p].plan(&set))
        })
        .collect();
    (best, results)
}
