//! Step 2, the mechanism: what one replica of a workload needs in a pool (a gang, a whole GPU, a MIG
//! instance, each exclusive, time-sliced or MPS), or why it cannot run there, and what share of a GPU
//! that costs.

use super::pool::PoolCtx;
use crate::assemble::gib;
use crate::file::Workload;
use crate::unit::{Miss, Mode, Need, Rep};
use gpu_trust_model::fleet::WorkloadClass;
use gpu_trust_policy::Latency;
use std::collections::BTreeMap;

/// The most MPS clients per GPU the device plugin's MPS sharing supports (NVIDIA k8s-device-plugin
/// README, MPS sharing: at most 48 replicas, as the MPS server allows on Volta and later).
pub const MPS_MAX_REPLICAS: u32 = 48;

/// The most replicas the planner advertises for one time-sliced device, whatever the policy allows.
const MAX_SHARE_REPLICAS: u32 = 64;

impl PoolCtx<'_> {
    /// What one replica of `w` needs here, or why it cannot run here.
    pub(super) fn decide(&self, w: &Workload) -> Result<Need, String> {
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
            (Some(spec), _) => match spec.smallest_holding(peak, compute) {
                Some(p) => Ok(Need::Instance(p, Mode::Exclusive)),
                None => Ok(Need::Whole(Mode::Exclusive)),
            },
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
    pub(super) fn cost(&self, need: Need) -> f64 {
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

    /// What one replica of each workload needs here; the replicas of those that cannot run here are
    /// misses.
    pub(super) fn needs(&self, workloads: &[usize]) -> (BTreeMap<usize, Need>, Vec<(Rep, Miss)>) {
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
}
