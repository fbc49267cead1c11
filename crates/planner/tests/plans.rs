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
        let ffd = solve_with(&input, &SolveOptions { method: Method::FirstFitDecreasing });
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
fn the_benchmark_fleets_are_within_three_percent_of_the_bound() {
    for seed in 1..=3 {
        let input = fleet(&FleetSpec::benchmark(1_000, seed));
        let plan = solve(&input);
        assert!(plan.complete());
        assert!(check(&input, &plan).is_empty());
        assert!(
            plan.gap_percent <= 3.0,
            "seed {seed}: {}%",
            plan.gap_percent
        );
    }
}
