//! Generated fleets for the benchmark and the property tests: tenants with random trust, workloads of
//! every kind with peaks drawn from ranges that real inference, notebook and training jobs have, on
//! one pool of a chosen GPU model. Deterministic: the same parameters give the same fleet.

use crate::file::{OperatorSettings, PlanInput, Pool, TenantInfo, Workload};
use gpu_trust_model::catalogue::{self, GpuModel, MigProfile, ProfileVariant};
use gpu_trust_model::fleet::WorkloadClass;
use gpu_trust_model::{Location, Trust};
use gpu_trust_policy::{Contract, Latency, DEFAULT_MAX_REPLICAS};

/// A small deterministic generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct FleetSpec {
    /// Replicas in total (approximately: the last workload is cut to fit).
    pub replicas: usize,
    pub seed: u64,
    /// Catalogue id of the pool's GPU model.
    pub model: String,
    pub gpus_per_node: u32,
    /// Replicas per tenant, on average.
    pub replicas_per_tenant: usize,
    /// Fraction of replicas that are training replicas.
    pub training: f64,
    /// Probability that a `none` pair is accepted to share nodes (GT207).
    pub node_acceptance: f64,
    /// Fraction of tenants that are confidential, and of those promised isolation.
    pub confidential: f64,
    pub isolation: f64,
}

impl FleetSpec {
    /// The benchmark's fleet: H100 SXM nodes of 8 GPUs, 40 replicas per tenant, 5% training.
    pub fn benchmark(replicas: usize, seed: u64) -> FleetSpec {
        FleetSpec {
            replicas,
            seed,
            model: "H100-SXM5-80GB".to_string(),
            gpus_per_node: 8,
            replicas_per_tenant: 40,
            training: 0.05,
            node_acceptance: 0.0,
            confidential: 0.0,
            isolation: 0.0,
        }
    }
}

fn mib(gib: u64) -> u64 {
    gib * 1024
}

/// Builds the fleet. Trust between tenants: one in three pairs `full`, one in three `limited`, the rest
/// `none`; workloads: inference (a third latency-critical), notebooks, batch and training.
pub fn fleet(spec: &FleetSpec) -> PlanInput {
    let mut rng = Rng::new(spec.seed);
    let model: &'static GpuModel = catalogue::lookup(&spec.model)
        .or_else(|| catalogue::all().first())
        .unwrap_or(&catalogue::MODELS[0]);
    let tenant_count = (spec.replicas / spec.replicas_per_tenant.max(1)).max(2);
    let tenants: Vec<TenantInfo> = (0..tenant_count)
        .map(|i| TenantInfo {
            name: format!("tenant-{i:04}"),
            latency: Latency::Standard,
            confidential: rng.chance(spec.confidential),
            contract: if rng.chance(spec.isolation) {
                Contract::Isolation
            } else {
                Contract::ProportionalCompute
            },
            label: None,
        })
        .collect();
    let n = tenants.len();
    let mut trust = vec![vec![Trust::Full; n]; n];
    let mut node_ok = vec![vec![true; n]; n];
    // Trust within teams of four tenants is high, across teams mostly none.
    for a in 0..n {
        for b in a + 1..n {
            let same_team = a / 4 == b / 4;
            let t = if same_team {
                match rng.range(0, 2) {
                    0 => Trust::Full,
                    1 => Trust::Limited,
                    _ => Trust::None,
                }
            } else if rng.chance(0.02) {
                Trust::Limited
            } else {
                Trust::None
            };
            trust[a][b] = t;
            trust[b][a] = t;
            let ok = t != Trust::None || rng.chance(spec.node_acceptance);
            node_ok[a][b] = ok;
            node_ok[b][a] = ok;
        }
    }
    let mut workloads = Vec::new();
    let mut left = spec.replicas;
    let mut i = 0usize;
    let max_gang = spec.gpus_per_node.max(1);
    while left > 0 {
        let tenant = (i / 3) % n;
        let roll = rng.next_u64() % 1000;
        let training_cut = (spec.training * 1000.0) as u64;
        let (kind, replicas, peak, gpus, latency) = if roll < training_cut {
            let g = [1u32, 2, 4, 8][rng.range(0, 3) as usize].min(max_gang);
            (
                WorkloadClass::Training,
                rng.range(1, 4),
                None,
                g,
                Latency::Standard,
            )
        } else if roll < training_cut + 150 {
            (
                WorkloadClass::Notebook,
                rng.range(1, 12),
                Some(mib(rng.range(2, 16))),
                1,
                Latency::Standard,
            )
        } else if roll < training_cut + 250 {
            (
                WorkloadClass::Batch,
                rng.range(1, 10),
                Some(mib(rng.range(4, 40))),
                1,
                Latency::Tolerant,
            )
        } else {
            let critical = rng.chance(0.33);
            // Peaks of served models: mostly small, some that need half or all of a GPU.
            let peak = match rng.range(0, 9) {
                0..=4 => rng.range(3, 9),
                5..=6 => rng.range(10, 19),
                7 => rng.range(20, 38),
                8 => rng.range(40, 70),
                _ => rng.range(4, 30),
            };
            (
                WorkloadClass::Inference,
                rng.range(1, 16),
                Some(mib(peak)),
                1,
                if critical {
                    Latency::Critical
                } else {
                    Latency::Standard
                },
            )
        };
        let replicas = (replicas as usize).min(left).max(1) as u32;
        left -= replicas as usize;
        workloads.push(Workload {
            name: format!("w{i:05}"),
            tenant,
            namespace: tenants[tenant].name.clone(),
            kind,
            replicas,
            peak_memory_mib: peak,
            compute: None,
            latency,
            gpus,
            image: None,
            container: "main".to_string(),
            pool: None,
            location: Location::default(),
        });
        i += 1;
    }
    let nodes = u32::try_from(spec.replicas.max(1)).unwrap_or(u32::MAX);
    one_pool(
        model,
        (spec.gpus_per_node, nodes),
        workloads,
        (tenants, trust, node_ok),
    )
}

/// Tenants, the trust of each pair, and which pairs may share a node.
type Tenants = (Vec<TenantInfo>, Vec<Vec<Trust>>, Vec<Vec<bool>>);

/// `n` latency-critical tenants, each pair trusting `full`, `limited` or `none` at random (a third
/// each), and which pairs may share a node (all but `none`).
fn critical_tenants(rng: &mut Rng, n: usize) -> Tenants {
    let tenants: Vec<TenantInfo> = (0..n)
        .map(|i| TenantInfo {
            name: format!("tenant-{i}"),
            latency: Latency::Critical,
            confidential: false,
            contract: Contract::ProportionalCompute,
            label: None,
        })
        .collect();
    let mut trust = vec![vec![Trust::Full; n]; n];
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect();
    for (a, b) in pairs {
        let t = match rng.range(0, 2) {
            0 => Trust::Full,
            1 => Trust::Limited,
            _ => Trust::None,
        };
        trust[a][b] = t;
        trust[b][a] = t;
    }
    let node_ok: Vec<Vec<bool>> = trust
        .iter()
        .map(|row| row.iter().map(|&t| t != Trust::None).collect())
        .collect();
    (tenants, trust, node_ok)
}

/// Workload `i`: latency-critical inference of `tenant`.
fn critical_inference(
    i: usize,
    tenant: usize,
    tenants: &[TenantInfo],
    replicas: u32,
    peak: u64,
    compute: Option<f64>,
) -> Workload {
    Workload {
        name: format!("w{i:02}"),
        tenant,
        namespace: tenants[tenant].name.clone(),
        kind: WorkloadClass::Inference,
        replicas,
        peak_memory_mib: Some(peak.max(1)),
        compute,
        latency: Latency::Critical,
        gpus: 1,
        image: None,
        container: "main".to_string(),
        pool: None,
        location: Location::default(),
    }
}

/// The MIG model `model` names, or H100-SXM5-80GB.
fn mig_model(model: &str) -> &'static GpuModel {
    catalogue::lookup(model)
        .filter(|m| m.supports_mig())
        .or_else(|| catalogue::lookup("H100-SXM5-80GB"))
        .unwrap_or(&catalogue::MODELS[0])
}

/// The plan input of `workloads` on one pool of `model`, (GPUs per node, nodes).
fn one_pool(
    model: &'static GpuModel,
    (gpus_per_node, nodes): (u32, u32),
    workloads: Vec<Workload>,
    tenants: Tenants,
) -> PlanInput {
    let (tenants, trust, node_ok) = tenants;
    // Confidential containers need the nodes' CPU TEE: a CC-capable pool of a fleet with
    // confidential tenants states one.
    let tee = (model.cc_capable() && tenants.iter().any(|t| t.confidential))
        .then_some(&gpu_trust_model::fleet::TEES[0]);
    PlanInput {
        file: "generated".to_string(),
        pools: vec![Pool {
            name: "gpu".to_string(),
            model,
            gpus_per_node,
            nodes,
            driver_version: None,
            tee,
            location: Location::default(),
        }],
        workloads,
        tenants,
        trust,
        node_ok,
        max_replicas: DEFAULT_MAX_REPLICAS,
        operator: OperatorSettings::default(),
    }
}

/// A crowded small fleet of latency-critical inference on one pool of MIG GPUs: 4 to 8 tenants, each
/// pair `full`, `limited` or `none` at random (a third each), and 4 to 12 workloads of 1 to 4 replicas
/// whose peaks are small: mostly under a quarter of the GPU's memory, spread over the smaller profiles
/// (on H100 80GB: 1g.10gb, 1g.20gb, 2g.20gb, some 3g.40gb), a third of them with a compute need that
/// the one-compute-slice profiles cannot meet. Several profiles hold most replicas (a 9 GiB replica fits
/// 1g.10gb, 1g.20gb and 2g.20gb), and which tenants may fill the rest of a GPU differs from tenant to
/// tenant: the choice of profile per replica and of the tenants next to it decide the GPU count. A
/// seed gives the same fleet every time; its numbers are drawn apart from [`mig_fleet`]'s.
pub fn crowded_mig_fleet(seed: u64, model: &str) -> PlanInput {
    let mut rng = Rng::new(seed ^ 0xC0DE_D00D_F1EE_7000);
    let model = mig_model(model);
    let n = rng.range(4, 8) as usize;
    let people = critical_tenants(&mut rng, n);
    // Memory in units of the smallest slice: the 1-slice profile's memory is the unit a peak is drawn
    // against, so that the same shape holds on every model.
    let unit = model
        .mig
        .and_then(|g| {
            g.standard_profiles()
                .filter(|p| p.memory_slices == 1)
                .map(|p| p.memory_mib)
                .min()
        })
        .unwrap_or(model.memory_mib / 8);
    let one_slice = model
        .mig
        .and_then(|g| {
            let whole = g
                .profiles
                .iter()
                .filter(|p| p.compute_slices == g.compute_slices)
                .find_map(|p| p.sms)?;
            let one = g
                .standard_profiles()
                .filter(|p| p.compute_slices == 1)
                .find_map(|p| p.sms)?;
            Some(f64::from(one) / f64::from(whole.max(1)))
        })
        .unwrap_or(1.0 / 7.0);
    let workload_count = rng.range(4, 12) as usize;
    let mut workloads = Vec::with_capacity(workload_count);
    for i in 0..workload_count {
        let tenant = rng.range(0, n as u64 - 1) as usize;
        // Peaks: half under one slice's memory, a third under two, the rest under four.
        let slices = match rng.range(0, 5) {
            0..=2 => 1,
            3..=4 => 2,
            _ => 4,
        };
        let peak = rng.range(unit * (slices - 1) / 2 + 512, unit * slices - 256);
        let compute = rng
            .chance(0.33)
            .then(|| ((one_slice + rng.range(5, 140) as f64 / 1000.0) * 1000.0).round() / 1000.0);
        let replicas = rng.range(1, 4) as u32;
        workloads.push(critical_inference(
            i, tenant, &people.0, replicas, peak, compute,
        ));
    }
    one_pool(model, (8, 8), workloads, people)
}

/// A small fleet of latency-critical inference on one pool of MIG GPUs: 2-5 tenants with random
/// trust (`full`, `limited` or `none` for each pair, a third each), 2-7 workloads of 1-4 replicas whose
/// peaks and compute needs fall on every profile of the model, from a whole-GPU instance down to the
/// smallest. Every replica needs an instance of its own, so the fleet is a packing of MIG instances
/// into GPU layouts under trust: the case the benchmark compares with an exact solver.
pub fn small_mig_fleet(seed: u64, model: &str) -> PlanInput {
    mig_fleet(seed, model, 7, 4)
}

/// Peaks and compute needs that land on each profile of a MIG model: per profile, its memory less a
/// little, and for a profile that shares its memory with a smaller one (2g next to 1g with two memory
/// slices, 4g next to 3g), a compute need the smaller one cannot meet.
struct Landing {
    /// The model's standard and extra-memory profiles, smallest first.
    by_size: Vec<&'static MigProfile>,
    /// Each profile's share of the GPU's compute (its SMs over the whole GPU's).
    fraction: Vec<f64>,
}

impl Landing {
    fn of(model: &'static GpuModel) -> Landing {
        let mig = model.mig;
        let mut by_size: Vec<&'static MigProfile> = mig
            .map(|g| {
                g.standard_profiles()
                    .chain(
                        g.profiles
                            .iter()
                            .filter(|p| p.variant == ProfileVariant::ExtraMemory),
                    )
                    .collect()
            })
            .unwrap_or_default();
        by_size.sort_by_key(|p| (p.memory_slices, p.compute_slices, p.memory_mib));
        let slices = mig.map(|g| g.compute_slices).unwrap_or(1).max(1);
        let whole_sms = by_size
            .iter()
            .filter(|p| p.compute_slices == slices)
            .find_map(|p| p.sms);
        let fraction = by_size
            .iter()
            .map(|p| match (p.sms, whole_sms) {
                (Some(s), Some(w)) if w > 0 => f64::from(s) / f64::from(w),
                _ => f64::from(p.compute_slices) / f64::from(slices),
            })
            .collect();
        Landing { by_size, fraction }
    }

    /// A replica's peak and compute need: small instances more often than large ones, as served
    /// models are.
    fn draw(&self, rng: &mut Rng) -> (u64, Option<f64>) {
        let pick = match rng.range(0, 9) {
            0..=3 => 0,
            4..=5 => 1,
            6 => 2,
            7 => 3,
            8 => 4,
            _ => 5,
        };
        let i = pick.min(self.by_size.len().saturating_sub(1));
        let p = self.by_size[i];
        let peak = p.memory_mib.saturating_sub(rng.range(256, 2048));
        // A compute need just above the next smaller profile of the same memory, so that the profile
        // itself is the smallest fit.
        let compute = (0..self.by_size.len())
            .filter(|&q| {
                self.by_size[q].memory_mib == p.memory_mib
                    && self.by_size[q].compute_slices < p.compute_slices
            })
            .map(|q| self.fraction[q])
            .fold(None, |m: Option<f64>, f| Some(m.map_or(f, |m| m.max(f))))
            .map(|f| ((f + self.fraction[i]) / 2.0 * 1000.0).round() / 1000.0);
        (peak, compute)
    }
}

/// Like [`small_mig_fleet`], with 2 to `max_workloads` workloads of 1 to `max_replicas` replicas.
pub fn mig_fleet(seed: u64, model: &str, max_workloads: u64, max_replicas: u64) -> PlanInput {
    let mut rng = Rng::new(seed ^ 0x5A5A_0F0F_1234_5678);
    let model = mig_model(model);
    let n = rng.range(2, 5) as usize;
    let people = critical_tenants(&mut rng, n);
    let landing = Landing::of(model);
    let workload_count = rng.range(2, max_workloads.max(2)) as usize;
    let mut workloads = Vec::with_capacity(workload_count);
    for i in 0..workload_count {
        let tenant = rng.range(0, n as u64 - 1) as usize;
        let (peak, compute) = landing.draw(&mut rng);
        let replicas = rng.range(1, max_replicas.max(1)) as u32;
        workloads.push(critical_inference(
            i, tenant, &people.0, replicas, peak, compute,
        ));
    }
    one_pool(model, (8, 8), workloads, people)
}

/// A medium fleet of latency-critical inference on MIG GPUs: 5 to 8 tenants of random trust (as
/// [`mig_fleet`]'s), 40 to 120 replicas in workloads of 1 to 12. Two in three workloads have peaks and
/// compute needs that land on each profile of H100-SXM5-80GB (as [`mig_fleet`]'s); the others a small
/// peak with a compute need above one compute slice's share, which A100 and H100 meet with different
/// profiles (A100's one slice is 14 of 98 SMs, H100's 16 of 132).
///
/// With `two_pools` false, one pool of H100-SXM5-80GB nodes with room for everything. With
/// `two_pools`, that pool has 1 to 3 nodes of 8 GPUs, listed first, and a pool of A100-SXM4-80GB nodes
/// has room for the rest: which workloads go to which pool decides the GPU count.
pub fn medium_mig_fleet(seed: u64, two_pools: bool) -> PlanInput {
    let mut rng = Rng::new(seed ^ 0x3D3D_71E1_0FEE_7A11);
    let h100 = mig_model("H100-SXM5-80GB");
    let n = rng.range(5, 8) as usize;
    let people = critical_tenants(&mut rng, n);
    let landing = Landing::of(h100);
    let one_slice = landing.fraction.first().copied().unwrap_or(1.0 / 7.0);
    let small = landing
        .by_size
        .first()
        .map_or(h100.memory_mib / 8, |p| p.memory_mib);
    let mut left = rng.range(40, 120);
    let replicas = u32::try_from(left).unwrap_or(u32::MAX);
    let mut workloads = Vec::new();
    while left > 0 {
        let i = workloads.len();
        let tenant = rng.range(0, n as u64 - 1) as usize;
        let (peak, compute) = if rng.chance(2.0 / 3.0) {
            landing.draw(&mut rng)
        } else {
            let peak = rng.range(512, small.saturating_sub(256));
            let compute = one_slice + rng.range(5, 140) as f64 / 1000.0;
            (peak, Some((compute * 1000.0).round() / 1000.0))
        };
        let count = rng.range(1, 12).min(left);
        left -= count;
        workloads.push(critical_inference(
            i,
            tenant,
            &people.0,
            count as u32,
            peak,
            compute,
        ));
    }
    let mut input = one_pool(h100, (8, replicas), workloads, people);
    if two_pools {
        input.pools[0].name = "h100".to_string();
        input.pools[0].nodes = rng.range(1, 3) as u32;
        let mut a100 = input.pools[0].clone();
        a100.name = "a100".to_string();
        a100.model = mig_model("A100-SXM4-80GB");
        a100.nodes = replicas;
        input.pools.push(a100);
    }
    input
}
