//! The planner's benchmark, in three sections (all by default, or the ones named on the command line):
//!
//! - `small`: random small fleets of latency-critical inference on H100 MIG (2-5 tenants with random
//!   trust, 2-7 workloads of 1-4 replicas; [`mig_fleet`]), each planned and compared with the exact
//!   optimum of an integer program written apart from the planner (`support/independent.rs`), and with
//!   the plan's own lower bound. `medium` does the same with 2-12 workloads of 1-8 replicas.
//! - `large`: generated fleets of 100 to 50,000 replicas on H100 nodes (three seeds each): GPUs used,
//!   the lower bound the plan reports, GPUs with first-fit decreasing packing instead, the exact
//!   pattern ILP per trust component (microlp, 10 s each, up to 1,000 replicas), nodes, solve time.
//!
//! ```text
//! cargo bench -p gpu-trust-planner --bench planner                 # every section
//! cargo bench -p gpu-trust-planner --bench planner -- small 500    # 500 small fleets
//! cargo bench -p gpu-trust-planner --bench planner -- large
//! ```

#[path = "support/independent.rs"]
mod independent;

use gpu_trust_planner::exact::exact_pack;
use gpu_trust_planner::generate::{fleet, mig_fleet, FleetSpec};
use gpu_trust_planner::spec::MigSpec;
use gpu_trust_planner::{check, solve, solve_with, Method, Plan, PlanInput, SolveOptions};
use std::time::Instant;

/// The exact optimum of packing each trust component's instances (as the plan sized them) into valid
/// layouts, plus its whole GPUs: the pattern ILP per component, 10 s each. No plan with this sizing
/// can use fewer GPUs (trust inside a component can only add constraints), and it is reached when
/// every component may share GPUs freely.
fn pattern_optimum(input: &PlanInput, plan: &Plan) -> Option<u32> {
    let mut total = 0u32;
    for b in &plan.bounds {
        let pool = input.pools.iter().find(|p| p.name == b.pool)?;
        total += b.whole_gpus;
        if b.instances.is_empty() {
            continue;
        }
        let spec = MigSpec::new(pool.model)?;
        let mut demand = vec![0u32; spec.profiles.len()];
        for (name, &c) in &b.instances {
            demand[spec.profile_index(name)?] = c;
        }
        total += exact_pack(&spec, &demand, 10.0)?.len() as u32;
    }
    Some(total)
}

/// Plans `count` random MIG fleets and compares each with the independent exact optimum.
fn mig_fleets(name: &str, count: u64, max_workloads: u64, max_replicas: u64) {
    let model = "H100-SXM5-80GB";
    let mut optimal = 0u64;
    let mut at_bound = 0u64;
    let mut unproven = 0u64;
    let mut over: Vec<String> = Vec::new();
    let mut gpus = 0u64;
    let mut worst_ms = 0f64;
    let mut total_ms = 0f64;
    for seed in 1..=count {
        let input = mig_fleet(seed, model, max_workloads, max_replicas);
        let start = Instant::now();
        let plan = solve(&input);
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        worst_ms = worst_ms.max(ms);
        total_ms += ms;
        let violations = check(&input, &plan);
        assert!(violations.is_empty(), "seed {seed}: {violations:?}");
        assert!(plan.complete(), "seed {seed}: {:?}", plan.unplaced);
        gpus += u64::from(plan.gpus_used);
        if plan.gpus_used == plan.lower_bound {
            at_bound += 1;
        }
        match independent::optimum(&input, 60.0) {
            Ok(o) => {
                assert!(
                    o.gpus <= plan.gpus_used,
                    "seed {seed}: the exact optimum {} is above a valid plan's {}",
                    o.gpus,
                    plan.gpus_used
                );
                assert!(
                    o.gpus >= plan.lower_bound,
                    "seed {seed}: the exact optimum {} is below the plan's lower bound {}",
                    o.gpus,
                    plan.lower_bound
                );
                if o.gpus == plan.gpus_used {
                    optimal += 1;
                } else {
                    over.push(format!(
                        "seed {seed}: {} GPUs, optimum {}, bound {}",
                        plan.gpus_used, o.gpus, plan.lower_bound
                    ));
                }
            }
            Err(e) => {
                unproven += 1;
                over.push(format!("seed {seed}: no proven optimum ({e:?})"));
            }
        }
    }
    println!(
        "| {name} | {count} | {gpus} | {optimal} | {at_bound} | {unproven} | {:.2} ms | {worst_ms:.1} ms |",
        total_ms / count.max(1) as f64
    );
    for o in over {
        println!("  {o}");
    }
}

fn large() {
    let seeds = [1u64, 2, 3];
    println!(
        "| replicas | seed | GPUs | lower bound | gap | exact optimum | first-fit decreasing | nodes | nodes lower bound | solve time |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &replicas in &[100usize, 1_000, 10_000, 50_000] {
        for &seed in &seeds {
            let input = fleet(&FleetSpec::benchmark(replicas, seed));
            let start = Instant::now();
            let plan = solve_with(
                &input,
                &SolveOptions {
                    method: Method::Best,
                    ..SolveOptions::default()
                },
            );
            let elapsed = start.elapsed();
            let violations = check(&input, &plan);
            assert!(violations.is_empty(), "{violations:?}");
            let ffd = solve_with(
                &input,
                &SolveOptions {
                    method: Method::FirstFitDecreasing,
                    ..SolveOptions::default()
                },
            );
            let exact = if replicas <= 1_000 {
                pattern_optimum(&input, &plan)
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "timeout".to_string())
            } else {
                "-".to_string()
            };
            println!(
                "| {replicas} | {seed} | {} | {} | {:.2}% | {exact} | {} | {} | {} | {:.1} ms |",
                plan.gpus_used,
                plan.lower_bound,
                plan.gap_percent,
                ffd.gpus_used,
                plan.nodes_used,
                plan.nodes_lower_bound,
                elapsed.as_secs_f64() * 1000.0
            );
            assert!(
                plan.gpus_used <= ffd.gpus_used,
                "worse than first-fit decreasing"
            );
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; the rest names sections, and a number the fleets per section.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let count: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(200);
    let wanted =
        |s: &str| args.iter().all(|a| a.parse::<u64>().is_ok()) || args.iter().any(|a| a == s);
    if wanted("small") || wanted("medium") {
        println!("| fleets | count | GPUs in all | exact optimum | at the plan's lower bound | no proven optimum | mean solve time | slowest solve |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|");
        if wanted("small") {
            mig_fleets("small (2-7 workloads of 1-4 replicas)", count, 7, 4);
        }
        if wanted("medium") {
            mig_fleets("medium (2-12 workloads of 1-8 replicas)", count, 12, 8);
        }
    }
    if wanted("large") {
        large();
    }
}
