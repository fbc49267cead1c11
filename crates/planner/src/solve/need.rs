//! Step 2, the mechanism: what one replica of a workload needs in a pool (a gang, a whole GPU, a MIG
//! instance, each exclusive, time-sliced or MPS), or why it cannot run there, and what share of a GPU
//! that costs. Which seats a workload may have is the model's rows about one workload, read here and
//! by the plan checker.

use super::pool::PoolCtx;
use crate::assemble::gib;
use crate::file::Workload;
use crate::unit::{Miss, Mode, Need, Rep};
use gpu_trust_model::fleet::WorkloadClass;
use gpu_trust_model::isolation::{Mechanism, Seat, SeatRow, Traits};
use gpu_trust_policy::Latency;
use std::collections::BTreeMap;

/// The most MPS clients per GPU the device plugin's MPS sharing supports (NVIDIA k8s-device-plugin
/// README, MPS sharing: at most 48 replicas, as the MPS server allows on Volta and later).
pub const MPS_MAX_REPLICAS: u32 = 48;

/// The most replicas the planner advertises for one time-sliced device, whatever the policy allows.
const MAX_SHARE_REPLICAS: u32 = 64;

impl PoolCtx<'_> {
    /// What one replica of `w` needs here, or why it cannot run here: the cheapest seat that the
    /// model's rows about one workload (`isolation::SEATS`, which the audit's GT106, GT111, GT301 and
    /// GT302 judge by) allow it.
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
        let traits = Traits {
            training: w.kind == WorkloadClass::Training,
            latency_critical: w.latency == Latency::Critical,
            confidential: tenant.confidential,
        };
        // The planner turns CC on for the nodes of confidential tenants where the GPU supports it
        // and the pool says which CPU TEE runs the confidential containers.
        let cc = tenant.confidential && model.cc_capable() && self.pool.tee.is_some();
        let allows = |need: Need| {
            SeatRow::refusing(traits, self.seat(need, cc))
                .next()
                .is_none()
        };
        // A whole GPU of its own is the seat least shared: when the rows refuse it, they refuse all.
        if !allows(Need::Whole(Mode::Exclusive)) {
            return Err(if tenant.confidential && !model.cc_capable() {
                format!(
                    "tenant {} is confidential and {} does not support confidential computing: {}",
                    tenant.name,
                    model.id,
                    self.tee_hint()
                )
            } else if tenant.confidential && !cc {
                format!(
                    "tenant {} is confidential and pool {} does not say its nodes' CPU TEE: {}",
                    tenant.name,
                    self.pool.name,
                    self.tee_hint()
                )
            } else {
                let rules: Vec<&str> =
                    SeatRow::refusing(traits, self.seat(Need::Whole(Mode::Exclusive), cc))
                        .map(|r| r.rule)
                        .collect();
                format!(
                    "no seat on {} is allowed it ({})",
                    model.id,
                    rules.join(", ")
                )
            });
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
        // `r` replicas of a shared mode on one device where the rows allow it, else the device alone.
        let shared_or_alone = |r: u32, shared: Mode, on: &dyn Fn(Mode) -> Need| {
            if r >= 2 && allows(on(shared)) {
                on(shared)
            } else {
                on(Mode::Exclusive)
            }
        };
        let need = match (self.spec, w.kind) {
            (Some(spec), WorkloadClass::Notebook) => {
                // The profile and mode that give each replica the fewest memory slices.
                let mut best: Option<(f64, Need)> = None;
                for (p, prof) in spec.profiles.iter().enumerate() {
                    let r = most(prof.memory_mib, spec.compute_fraction(p), max_ts);
                    if r == 0 {
                        continue;
                    }
                    let need = shared_or_alone(r, Mode::TimeSliced(r), &|m| Need::Instance(p, m));
                    let per = match need {
                        Need::Instance(_, Mode::TimeSliced(r)) => r,
                        _ => 1,
                    };
                    let cost = f64::from(prof.memory_slices) / f64::from(per);
                    if allows(need) && best.is_none_or(|(c, _)| cost < c - 1e-12) {
                        best = Some((cost, need));
                    }
                }
                best.map(|(_, need)| need)
            }
            (Some(spec), _) => spec
                .smallest_holding(peak, compute)
                .map(|p| Need::Instance(p, Mode::Exclusive)),
            (None, WorkloadClass::Notebook) => {
                let r = most(whole_mem, 1.0, max_ts);
                Some(shared_or_alone(r, Mode::TimeSliced(r), &Need::Whole))
            }
            (None, _) if peak > 0 => {
                let r = most(whole_mem, 1.0, MPS_MAX_REPLICAS);
                Some(shared_or_alone(r, Mode::Mps(r), &Need::Whole))
            }
            (None, _) => None,
        };
        Ok(need
            .filter(|n| allows(*n))
            .unwrap_or(Need::Whole(Mode::Exclusive)))
    }

    /// What the inventory needs for a confidential tenant's workload: a TEE on its CC-capable
    /// pools, else such a pool.
    fn tee_hint(&self) -> String {
        let pools = &self.input.pools;
        let cc: Vec<&str> = pools
            .iter()
            .filter(|p| p.model.cc_capable())
            .map(|p| p.name.as_str())
            .collect();
        let without: Vec<&str> = pools
            .iter()
            .filter(|p| p.model.cc_capable() && p.tee.is_none())
            .map(|p| p.name.as_str())
            .collect();
        let tee = "`tee: snp` (AMD SEV-SNP) or `tee: tdx` (Intel TDX)";
        if !without.is_empty() {
            format!(
                "add {tee} to pool {}, which picks the Kata runtime class of its confidential containers",
                without.join(", ")
            )
        } else if cc.is_empty() {
            format!("add a pool of a CC-capable GPU model with {tee}")
        } else {
            format!("run it on pool {}", cc.join(", "))
        }
    }

    /// The seat a replica with `need` gets here, as the rows about one workload judge it (`cc`: on a
    /// node with CC mode on).
    fn seat(&self, need: Need, cc: bool) -> Seat {
        let (mechanism, partial) = match need {
            Need::Gang(_) | Need::Whole(Mode::Exclusive) => (Mechanism::Exclusive, false),
            Need::Whole(Mode::TimeSliced(_)) => (Mechanism::TimeSlicing, false),
            Need::Whole(Mode::Mps(_)) => (Mechanism::Mps, false),
            Need::Instance(p, mode) => {
                let partial = self.spec.is_none_or(|s| {
                    s.profiles
                        .get(p)
                        .is_none_or(|q| q.compute_slices < s.compute_slices)
                });
                let mechanism = match mode {
                    Mode::Exclusive => Mechanism::MigInstance,
                    Mode::TimeSliced(_) => Mechanism::MigTimeSlicing,
                    Mode::Mps(_) => Mechanism::MigMps,
                };
                (mechanism, partial)
            }
        };
        Seat {
            mechanism,
            partial,
            cc,
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
