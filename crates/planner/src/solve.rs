//! The solver: from a [`PlanInput`] to a [`Plan`].
//!
//! 1. **Pool.** Each workload starts in the pool of the inventory where one replica costs the smallest
//!    share of a GPU (or the pool it pins); when a pool runs out of nodes, its workloads with
//!    unplaced replicas move to their next pool. The choice is then searched with the packing, each
//!    choice judged by planning every pool (steps 2-5), until the GPUs reach the lower bound
//!    (`solve/choice.rs`).
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
//! The plan is then written from each pool's result, with the bound of [`crate::bound`] over every
//! pool (`assemble.rs`).

mod choice;
mod consolidate;
mod groups;
mod items;
mod need;
mod place;
mod pool;

use crate::assemble::{assemble, PoolView};
use crate::bound::{plan_bounds, Demand, PoolSlots};
use crate::file::PlanInput;
use crate::plan::*;
use crate::spec::MigSpec;
use crate::unit::{Mode, Need, PoolResult};
use consolidate::consolidate;
use groups::TrustGroups;
use pool::PoolCtx;
use std::collections::{BTreeMap, BTreeSet};

pub use need::MPS_MAX_REPLICAS;
pub use pool::Method;

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

impl PoolCtx<'_> {
    /// Plans the pool both with and without moving conflicting time-sliced bundles to other
    /// profiles (when it has time-sliced MIG instances), and keeps the better: fewer unplaced
    /// replicas, then fewer GPUs, then fewer nodes.
    fn plan(&self, workloads: &[usize]) -> PoolResult {
        let mut best = self.plan_once(workloads, false, false);
        let mut variants: Vec<(bool, bool)> = Vec::new();
        let shared_mig = workloads.iter().any(|&w| {
            matches!(
                self.decide(&self.input.workloads[w]),
                Ok(Need::Instance(_, Mode::TimeSliced(_) | Mode::Mps(_)))
            )
        });
        let mig = shared_mig && self.method != Method::FirstFitDecreasing;
        if mig {
            variants.push((true, false));
        }
        if self.method != Method::FirstFitDecreasing && self.uneven_shares(workloads) {
            variants.push((false, true));
            if mig {
                variants.push((true, true));
            }
        }
        let score = |r: &PoolResult| (r.misses.len(), r.gpus(), r.nodes.len());
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
            crate::improve::improve(input, spec, &mut units, self.effort);
        }

        let nodes = self.place(&units, &tenants, &mut misses);
        PoolResult {
            units,
            nodes,
            misses,
            needs,
        }
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
            effort: 1,
        })
        .collect();
    // What one replica of each workload needs in each pool where it may run, the cheapest first.
    let mut options: Vec<Vec<(usize, Need)>> = Vec::with_capacity(input.workloads.len());
    let mut no_pool: BTreeMap<usize, String> = BTreeMap::new();
    for (w, wl) in input.workloads.iter().enumerate() {
        let mut c: Vec<(f64, usize, Need)> = Vec::new();
        let mut first_reason: Option<String> = None;
        for (pi, ctx) in ctxs.iter().enumerate() {
            if wl.pool.is_some_and(|p| p != pi) {
                continue;
            }
            match ctx.decide(wl) {
                Ok(need) => c.push((ctx.cost(need), pi, need)),
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
        options.push(c.into_iter().map(|(_, p, n)| (p, n)).collect());
    }
    let candidates: Vec<Vec<usize>> = options
        .iter()
        .map(|o| o.iter().map(|&(p, _)| p).collect())
        .collect();
    // The lower bound on every plan that places every replica, where some workload has a choice of
    // pools: the search over pools stops there.
    let slots: Vec<PoolSlots> = ctxs
        .iter()
        .map(|c| PoolSlots::new(c.spec, c.pool.gpus_per_node))
        .collect();
    let demands: Vec<Demand> = input
        .workloads
        .iter()
        .zip(&options)
        .map(|(wl, o)| Demand {
            tenant: wl.tenant,
            replicas: wl.replicas,
            needs: o.clone(),
        })
        .collect();
    let lower_bound = candidates
        .iter()
        .any(|c| c.len() > 1)
        .then(|| plan_bounds(input, &slots, &demands, &[]).1);
    let (choice, results) = choice::choose(&ctxs, &candidates, lower_bound);
    let views: Vec<PoolView> = ctxs
        .iter()
        .map(|c| PoolView {
            pool: c.pool,
            spec: c.spec,
        })
        .collect();
    assemble(input, &views, &results, &options, &choice, &no_pool)
}
