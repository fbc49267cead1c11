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
