//! Every plan satisfies every constraint: generated fleets of every shape through the solver and the
//! independent checker, plus the emitted MIG geometry against the catalogue.

use gpu_trust_model::catalogue;
use gpu_trust_model::geometry;
use gpu_trust_planner::emit::{self, Devices};
use gpu_trust_planner::generate::{fleet, FleetSpec};
use gpu_trust_planner::{check, solve, solve_with, Method, SolveOptions};
use proptest::prelude::*;

const MODELS: &[&str] = &[
    "H100-SXM5-80GB",
    "A100-SXM4-40GB",
    "A30",
    "H200-SXM-141GB",
    "L40S",
    "L4",
];

fn spec_strategy() -> impl Strategy<Value = FleetSpec> {
    (
        1usize..120,
        any::<u64>(),
        0..MODELS.len(),
        prop_oneof![Just(1u32), Just(2), Just(4), Just(8)],
        2usize..30,
        0.0f64..0.3,
        0.0f64..1.0,
        0.0f64..0.3,
        0.0f64..0.3,
    )
        .prop_map(
            |(replicas, seed, m, gpus_per_node, per_tenant, training, accept, conf, iso)| {
                FleetSpec {
                    replicas,
                    seed,
                    model: MODELS[m].to_string(),
                    gpus_per_node,
                    replicas_per_tenant: per_tenant,
                    training,
                    node_acceptance: accept,
                    confidential: conf,
                    isolation: iso,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_plan_satisfies_every_constraint(spec in spec_strategy()) {
        let input = fleet(&spec);
        let plan = solve(&input);
        let violations = check(&input, &plan);
        prop_assert!(violations.is_empty(), "{:#?}", violations);
        prop_assert!(plan.lower_bound <= plan.gpus_used);
        // Never worse than first-fit decreasing.
        let ffd = solve_with(&input, &SolveOptions { method: Method::FirstFitDecreasing, ..SolveOptions::default() });
        prop_assert!(check(&input, &ffd).is_empty());
        prop_assert!(plan.unplaced.len() <= ffd.unplaced.len(), "{} unplaced, first-fit {}", plan.unplaced.len(), ffd.unplaced.len());
        if plan.unplaced.len() == ffd.unplaced.len() {
            prop_assert!(plan.gpus_used <= ffd.gpus_used, "{} > {}", plan.gpus_used, ffd.gpus_used);
        }
    }

    #[test]
    fn plans_are_deterministic(spec in spec_strategy()) {
        let input = fleet(&spec);
        let a = serde_json::to_string(&solve(&input)).unwrap();
        let b = serde_json::to_string(&solve(&input)).unwrap();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn emitted_mig_geometry_is_valid(spec in spec_strategy()) {
        let input = fleet(&spec);
        let plan = solve(&input);
        let config = emit::mig_parted_config(&plan);
        for node in &plan.nodes {
            let Some(name) = &node.mig_config else { continue };
            if name == emit::ALL_DISABLED {
                prop_assert!(node.gpus.iter().all(|g| g.mig.is_empty()));
                continue;
            }
            let model = catalogue::lookup(&node.model).unwrap();
            let entries = &config.mig_configs[name];
            let mut covered = Vec::new();
            for e in entries {
                let Devices::List(devices) = &e.devices else { panic!("per-node configs list devices") };
                covered.extend(devices.iter().copied());
                if e.mig_enabled {
                    let counts: Vec<(&str, u32)> = e.mig_devices.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                    prop_assert!(geometry::place_counts(model, &counts).is_ok(), "{:?}", counts);
                } else {
                    prop_assert!(e.mig_devices.is_empty());
                }
            }
            covered.sort();
            prop_assert_eq!(covered, (0..node.gpu_count).collect::<Vec<_>>());
        }
    }
}

#[test]
fn the_benchmark_fleets_are_within_one_and_a_half_percent_of_the_bound() {
    for seed in 1..=3 {
        let input = fleet(&FleetSpec::benchmark(1_000, seed));
        let plan = solve(&input);
        assert!(plan.complete());
        assert!(check(&input, &plan).is_empty());
        assert!(
            plan.gap_percent <= 1.5,
            "seed {seed}: {}%",
            plan.gap_percent
        );
    }
}

#[path = "../../benches/support/independent.rs"]
mod independent;

#[test]
fn small_mig_fleets_get_the_exact_optimum() {
    // Random latency-critical fleets on H100 MIG with tenants of every trust: the plan uses the fewest
    // GPUs any plan can, as an integer program written apart from the planner proves.
    for seed in 1..=60 {
        let input = gpu_trust_planner::generate::small_mig_fleet(seed, "H100-SXM5-80GB");
        let plan = solve(&input);
        assert!(check(&input, &plan).is_empty());
        let optimum = independent::optimum(&input, 60.0).unwrap();
        assert_eq!(
            plan.gpus_used, optimum.gpus,
            "seed {seed}: bound {}",
            plan.lower_bound
        );
    }
}

#[test]
fn crowded_mig_fleets_get_the_exact_optimum() {
    // Four to eight tenants of mixed trust with small latency-critical peaks, the first 30 of the
    // benchmark's `crowded` fleets (its seeds start at 100,001) and the two of its 1,000 where the
    // search by instance alone used one GPU more: which tenants may fill the rest of a GPU decide the
    // count, and the plan uses the fewest GPUs.
    for seed in (100_001..100_031).chain([100_176, 100_735]) {
        let input = gpu_trust_planner::generate::crowded_mig_fleet(seed, "H100-SXM5-80GB");
        let plan = solve(&input);
        assert!(check(&input, &plan).is_empty());
        assert!(plan.complete(), "seed {seed}: {:?}", plan.unplaced);
        let optimum = independent::optimum(&input, 60.0).unwrap();
        assert_eq!(
            plan.gpus_used, optimum.gpus,
            "seed {seed}: bound {}",
            plan.lower_bound
        );
    }
}

/// A one-tenant L4 pool: 60 replicas of 256 MiB and one of 2 GiB, all MPS.
fn mps_pool(gpus_per_node: u32, nodes: u32) -> gpu_trust_planner::PlanInput {
    let text = format!(
        "apiVersion: gpu-trust/v1\nkind: Plan\npolicy:\n  tenants:\n    - {{name: a, namespaces: [a]}}\n\
         inventory:\n  - {{pool: l4, model: L4, gpusPerNode: {gpus_per_node}, nodes: {nodes}}}\n\
         workloads:\n  - {{name: big, tenant: a, kind: batch, replicas: 1, peakMemory: 2GiB}}\n\
         \x20 - {{name: tiny, tenant: a, kind: batch, replicas: 60, peakMemory: 256MiB}}\n"
    );
    let plan_file = gpu_trust_planner::file::parse(&text, "plan.yaml").unwrap();
    let gpu_trust_planner::file::PolicySource::Inline { text: policy } = &plan_file.policy else {
        panic!("inline policy")
    };
    let policy = gpu_trust_policy::parse(policy, "plan.yaml").unwrap();
    let today = gpu_trust_policy::Date::parse("2026-03-01").unwrap();
    plan_file.resolve(&policy, today).unwrap()
}

#[test]
fn one_replica_with_a_larger_mps_share_does_not_shrink_everyone_elses() {
    // One node of four GPUs: a node has one MPS replica count, so the 2 GiB replica (at most 11 per
    // GPU) and the small ones (48 per GPU) cannot all run there; the small ones take two GPUs and
    // only the large one is left over, instead of 17 replicas at 11 per GPU.
    let input = mps_pool(4, 1);
    let plan = solve(&input);
    assert!(check(&input, &plan).is_empty());
    assert_eq!(plan.gpus_used, 2);
    let left: Vec<&str> = plan.unplaced.iter().map(|u| u.workload.as_str()).collect();
    assert_eq!(left, ["big"]);
    // Two nodes of two: the large one gets a node of its own, everything is placed on three GPUs.
    let input = mps_pool(2, 2);
    let plan = solve(&input);
    assert!(check(&input, &plan).is_empty());
    assert!(plan.complete(), "{:?}", plan.unplaced);
    assert_eq!(plan.gpus_used, 3);
    let tiny = plan.workloads.iter().find(|w| w.name == "tiny").unwrap();
    assert_eq!(tiny.share_replicas, Some(48));
}

/// A tiny fleet of latency-critical MIG inference (2-3 workloads of 1-2 replicas, 2-5 tenants of
/// random trust) on H100-SXM5-80GB; with `two_pools`, an A100-SXM4-80GB pool too, and with `pin` the
/// first workload pinned to it.
fn tiny_fleet(seed: u64, two_pools: bool, pin: bool) -> gpu_trust_planner::PlanInput {
    let mut input = gpu_trust_planner::generate::mig_fleet(seed, "H100-SXM5-80GB", 3, 2);
    if two_pools {
        let mut a100 = input.pools[0].clone();
        a100.name = "a100".to_string();
        a100.model = catalogue::lookup("A100-SXM4-80GB").unwrap();
        input.pools.push(a100);
        if pin {
            input.workloads[0].pool = Some(1);
        }
    }
    input
}

/// The fewest GPUs of any plan that places every replica of `input` (each an exclusive MIG instance of
/// any profile that holds it, in any pool it may run in, with only tenants that may share a GPU on
/// one GPU), by trying every assignment of replicas to GPUs: no node limits, so it is at most the
/// fewest of the plans that respect them. `None` for a replica no pool holds.
fn fewest_gpus(input: &gpu_trust_planner::PlanInput) -> Option<usize> {
    // Per replica: its tenant and, per pool, the profiles that hold it.
    let mut replicas: Vec<(usize, Vec<Vec<&'static str>>)> = Vec::new();
    for w in &input.workloads {
        let fits: Vec<Vec<&'static str>> = input
            .pools
            .iter()
            .enumerate()
            .map(|(p, pool)| {
                let Some(mig) = pool.model.mig else {
                    return Vec::new();
                };
                if w.pool.is_some_and(|q| q != p) {
                    return Vec::new();
                }
                mig.profiles
                    .iter()
                    .filter(|q| {
                        q.memory_mib >= w.peak_memory_mib.unwrap_or(0)
                            && independent::fraction(mig.profiles, q, mig.compute_slices) + 1e-9
                                >= w.compute.unwrap_or(0.0)
                    })
                    .map(|q| q.name)
                    .collect()
            })
            .collect();
        if fits.iter().all(Vec::is_empty) {
            return None;
        }
        for _ in 0..w.replicas {
            replicas.push((w.tenant, fits.clone()));
        }
    }
    // A GPU: its pool, its tenants, its instances.
    struct Gpu {
        pool: usize,
        tenants: Vec<usize>,
        instances: Vec<&'static str>,
    }
    fn fits(input: &gpu_trust_planner::PlanInput, g: &Gpu) -> bool {
        let mut counts: std::collections::BTreeMap<&str, u32> = Default::default();
        for i in &g.instances {
            *counts.entry(i).or_default() += 1;
        }
        let counts: Vec<(&str, u32)> = counts.into_iter().collect();
        geometry::place_counts(input.pools[g.pool].model, &counts).is_ok()
    }
    fn go(
        input: &gpu_trust_planner::PlanInput,
        replicas: &[(usize, Vec<Vec<&'static str>>)],
        gpus: &mut Vec<Gpu>,
        best: &mut usize,
    ) {
        let Some(((tenant, by_pool), rest)) = replicas.split_first() else {
            *best = (*best).min(gpus.len());
            return;
        };
        for g in 0..gpus.len() {
            if !gpus[g]
                .tenants
                .iter()
                .all(|&t| input.may_share_gpu(t, *tenant))
            {
                continue;
            }
            for &profile in &by_pool[gpus[g].pool] {
                gpus[g].instances.push(profile);
                gpus[g].tenants.push(*tenant);
                if fits(input, &gpus[g]) {
                    go(input, rest, gpus, best);
                }
                gpus[g].instances.pop();
                gpus[g].tenants.pop();
            }
        }
        if gpus.len() + 1 < *best {
            for (pool, profiles) in by_pool.iter().enumerate() {
                for &profile in profiles {
                    gpus.push(Gpu {
                        pool,
                        tenants: vec![*tenant],
                        instances: vec![profile],
                    });
                    if fits(input, &gpus[gpus.len() - 1]) {
                        go(input, rest, gpus, best);
                    }
                    gpus.pop();
                }
            }
        }
    }
    let mut best = replicas.len() + 1;
    go(input, &replicas, &mut Vec::new(), &mut best);
    Some(best)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_lower_bound_never_exceeds_the_fewest_gpus_of_any_plan(
        seed in any::<u64>(),
        two_pools in any::<bool>(),
        pin in any::<bool>(),
    ) {
        // Tiny fleets on one or two pools: the bound is at most the fewest GPUs of every plan, which
        // a search through every assignment finds, and the plan reaches it.
        let input = tiny_fleet(seed, two_pools, pin);
        let plan = solve(&input);
        prop_assert!(check(&input, &plan).is_empty());
        prop_assert!(plan.complete(), "{:?}", plan.unplaced);
        let fewest = fewest_gpus(&input).unwrap();
        prop_assert!(plan.lower_bound as usize <= fewest, "bound {} above {fewest}", plan.lower_bound);
        prop_assert_eq!(plan.gpus_used as usize, fewest);
    }
}

#[test]
fn medium_mig_fleets_get_the_exact_optimum_on_one_and_two_pools() {
    // 5-8 tenants, 40-120 replicas: on one H100 pool, and on an H100 pool of 1-3 nodes with an A100
    // pool for the rest, where which workloads go to which pool decides the count. Wherever the
    // integer program proves its optimum, the plan uses that many GPUs and its bound is no higher.
    // Two-pool seeds 6 and 23 used one GPU more with a pool choice made before the packing; the
    // benchmark's 100002 and 100025 one more, and 100028 two, with a search that only started from
    // the greedy choice and moved one workload at a time (the optimum puts most workloads in the
    // A100 pool, which the greedy choice fills last).
    let fleets = (1..=6)
        .map(|s| (s, false))
        .chain([5, 6, 8, 10, 23, 100_002, 100_025, 100_028].map(|s| (s, true)));
    for (seed, two_pools) in fleets {
        let input = gpu_trust_planner::generate::medium_mig_fleet(seed, two_pools);
        let plan = solve(&input);
        assert!(check(&input, &plan).is_empty());
        assert!(plan.complete(), "seed {seed}: {:?}", plan.unplaced);
        let optimum = independent::optimum(&input, 60.0).unwrap();
        assert!(
            plan.lower_bound <= optimum.gpus,
            "seed {seed} ({two_pools}): bound {} above {}",
            plan.lower_bound,
            optimum.gpus
        );
        assert_eq!(
            plan.gpus_used, optimum.gpus,
            "seed {seed} ({two_pools}): bound {}",
            plan.lower_bound
        );
    }
}

/// A plan's `why` gives the reason its profile was chosen: on an H100, a replica of 18 GiB fits a
/// 1g.20gb by memory, but a quarter of the GPU's compute needs a 3g.40gb (a 2g.20gb has 32 of 132
/// SMs): the reason says compute decided, not "the smallest that holds its peak". A replica whose
/// memory decides keeps that reason.
#[test]
fn why_says_when_compute_not_memory_decides_the_profile() {
    let text = "apiVersion: gpu-trust/v1\nkind: Plan\npolicy:\n  tenants:\n    - {name: a, namespaces: [a]}\n\
                inventory:\n  - {pool: h100, model: H100-SXM5-80GB, gpusPerNode: 8, nodes: 1}\n\
                workloads:\n  - {name: chat, tenant: a, kind: inference, replicas: 1, peakMemory: 18GiB, compute: 0.25}\n\
                \x20 - {name: embed, tenant: a, kind: inference, replicas: 1, peakMemory: 30GiB}\n";
    let plan_file = gpu_trust_planner::file::parse(text, "plan.yaml").unwrap();
    let gpu_trust_planner::file::PolicySource::Inline { text: policy } = &plan_file.policy else {
        panic!("inline policy")
    };
    let policy = gpu_trust_policy::parse(policy, "plan.yaml").unwrap();
    let today = gpu_trust_policy::Date::parse("2026-03-01").unwrap();
    let input = plan_file.resolve(&policy, today).unwrap();
    let plan = solve(&input);
    let why = |name: &str| {
        plan.workloads
            .iter()
            .find(|w| w.name == name)
            .unwrap()
            .why
            .clone()
    };
    let chat = why("chat");
    assert!(chat.contains("own MIG instance 3g.40gb"), "{chat}");
    assert!(!chat.contains("the smallest that holds its peak"), "{chat}");
    assert!(
        chat.contains("the smallest with the compute it needs (25% of a GPU; 3g.40gb has 45%): its peak alone fits 1g.20gb"),
        "{chat}"
    );
    let embed = why("embed");
    assert!(
        embed.contains("own MIG instance 3g.40gb (39.50GiB), the smallest that holds its peak"),
        "{embed}"
    );
}
