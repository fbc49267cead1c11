//! The planner's benchmark: generated fleets of 100, 1,000 and 10,000 replicas on H100 nodes.
//!
//! For each fleet: GPUs the planner uses, the lower bound it reports, GPUs with first-fit decreasing
//! packing instead, GPUs with the exact pattern ILP (microlp, 10 s per trust group, on the fleets small
//! enough), and the solve time. Run with:
//!
//! ```text
//! cargo bench -p gpu-trust-planner --bench planner
//! ```

use gpu_trust_planner::generate::{fleet, FleetSpec};
use gpu_trust_planner::{check, solve_with, Method, SolveOptions};

use gpu_trust_planner::exact::exact_pack;
use gpu_trust_planner::spec::MigSpec;
use gpu_trust_planner::Plan;
use std::time::Instant;

/// The exact optimum of packing each trust component's instances (as the plan sized them) into valid
/// layouts, plus its whole GPUs: the pattern ILP per component, 10 s each. No plan with this sizing
/// can use fewer GPUs (trust inside a component can only add constraints), and it is reached when
/// every component may share GPUs freely.
fn exact_optimum(input: &gpu_trust_planner::PlanInput, plan: &Plan) -> Option<u32> {
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

fn main() {
    let seeds = [1u64, 2, 3];
    println!(
        "| replicas | seed | GPUs | lower bound | gap | exact optimum | first-fit decreasing | nodes | nodes lower bound | solve time |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &replicas in &[100usize, 1_000, 10_000] {
        for &seed in &seeds {
            let input = fleet(&FleetSpec::benchmark(replicas, seed));
            let start = Instant::now();
            let plan = solve_with(
                &input,
                &SolveOptions {
                    method: Method::Best,
                },
            );
            let elapsed = start.elapsed();
            let violations = check(&input, &plan);
            assert!(violations.is_empty(), "{violations:?}");
            let ffd = solve_with(
                &input,
                &SolveOptions {
                    method: Method::FirstFitDecreasing,
                },
            );
            let exact = if replicas <= 1_000 {
                exact_optimum(&input, &plan)
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
