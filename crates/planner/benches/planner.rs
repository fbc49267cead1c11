//! The planner's benchmark, in sections (all by default, or the ones named on the command line):
//!
//! - `small`: random small fleets of latency-critical inference on H100 MIG (2-5 tenants with random
//!   trust, 2-7 workloads of 1-4 replicas; [`mig_fleet`]), each planned and compared with the exact
//!   optimum of an integer program written apart from the planner (`support/independent.rs`), and with
//!   the plan's own lower bound. `medium` does the same with 2-12 workloads of 1-8 replicas, `crowded`
//!   with 4-8 tenants of mixed trust and 4-12 workloads of small peaks ([`crowded_mig_fleet`]). Their
//!   seeds start at [`FIRST_SEED`] (`from=N` to start elsewhere).
//! - `large`: generated fleets of 100 to 50,000 replicas on H100 nodes (three seeds each): GPUs used,
//!   the lower bound the plan reports, GPUs with first-fit decreasing packing instead, the exact
//!   pattern ILP per trust component (microlp, 10 s each, up to 1,000 replicas), nodes, solve CPU time.
//!
//! ```text
//! cargo bench -p gpu-trust-planner --bench planner                          # every section
//! cargo bench -p gpu-trust-planner --bench planner -- 1000 small medium crowded
//! cargo bench -p gpu-trust-planner --bench planner -- large
//! cargo bench -p gpu-trust-planner --bench planner -- crowded show=100017   # one fleet, its plan
//! ```

#[path = "support/independent.rs"]
mod independent;

use gpu_trust_planner::exact::exact_pack;
use gpu_trust_planner::generate::{
    crowded_mig_fleet, fleet, medium_mig_fleet, mig_fleet, FleetSpec,
};
use gpu_trust_planner::spec::MigSpec;
use gpu_trust_planner::{check, solve, solve_with, Method, Plan, PlanInput, SolveOptions};
use std::collections::BTreeMap;
use std::time::Instant;

/// The GPU model of the small-fleet sections.
const MODEL: &str = "H100-SXM5-80GB";
/// The first seed of the small-fleet sections: seeds from here on were never looked at while the
/// planner was written (its tests and tuning use seeds below 2,000).
const FIRST_SEED: u64 = 100_001;

/// The exact optimum of packing each trust component's instances (as the plan sized them) into valid
/// layouts, plus its whole GPUs: the pattern ILP per component, 10 s each. No plan with this sizing
/// can use fewer GPUs (trust inside a component can only add constraints), and it is reached when
/// every component may share GPUs freely.
fn pattern_optimum(input: &PlanInput, plan: &Plan) -> Option<u32> {
    let mut total = 0u32;
    for b in &plan.bounds {
        // The component's GPUs: whole ones count as they are, MIG instances by pool and profile.
        let mut instances: BTreeMap<&str, BTreeMap<&str, u32>> = BTreeMap::new();
        for node in &plan.nodes {
            for g in &node.gpus {
                let mine = g.assignments.iter().any(|a| b.tenants.contains(&a.tenant));
                if !mine {
                    continue;
                }
                if g.mig.is_empty() {
                    total += 1;
                }
                for m in &g.mig {
                    *instances
                        .entry(node.pool.as_str())
                        .or_default()
                        .entry(m.profile.as_str())
                        .or_default() += 1;
                }
            }
        }
        for (pool, counts) in instances {
            let pool = input.pools.iter().find(|p| p.name == pool)?;
            let spec = MigSpec::new(pool.model)?;
            let mut demand = vec![0u32; spec.profiles.len()];
            for (name, c) in counts {
                demand[spec.profile_index(name)?] = c;
            }
            total += exact_pack(&spec, &demand, 10.0)?.len() as u32;
        }
    }
    Some(total)
}

/// CPU time this thread has run, in seconds (the kernel's `schedstat`): what a solve costs on a machine
/// whose other load stretches wall time.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

/// Plans `count` random MIG fleets (seeds `first..first + count`) and compares each with the
/// independent exact optimum.
fn mig_fleets(name: &str, first: u64, count: u64, limit: f64, make: &dyn Fn(u64) -> PlanInput) {
    let mut optimal = 0u64;
    let mut at_bound = 0u64;
    let mut unproven = 0u64;
    let mut bound_over = 0u64;
    let mut over: Vec<String> = Vec::new();
    let mut gpus = 0u64;
    let mut worst_ms = 0f64;
    let mut total_ms = 0f64;
    let mut worst_proof = 0f64;
    for seed in first..first + count {
        let input = make(seed);
        let start = cpu_seconds();
        let plan = solve(&input);
        let ms = (cpu_seconds() - start) * 1000.0;
        worst_ms = worst_ms.max(ms);
        total_ms += ms;
        let violations = check(&input, &plan);
        assert!(violations.is_empty(), "seed {seed}: {violations:?}");
        assert!(plan.complete(), "seed {seed}: {:?}", plan.unplaced);
        gpus += u64::from(plan.gpus_used);
        if plan.gpus_used == plan.lower_bound {
            at_bound += 1;
        }
        let start = Instant::now();
        let optimum = independent::optimum(&input, limit);
        worst_proof = worst_proof.max(start.elapsed().as_secs_f64());
        match optimum {
            Ok(o) => {
                assert!(
                    o.gpus <= plan.gpus_used,
                    "seed {seed}: the exact optimum {} is above a valid plan's {}",
                    o.gpus,
                    plan.gpus_used
                );
                if o.gpus < plan.lower_bound {
                    bound_over += 1;
                    over.push(format!(
                        "seed {seed}: the lower bound {} is above the optimum {}",
                        plan.lower_bound, o.gpus
                    ));
                }
                if o.gpus == plan.gpus_used {
                    optimal += 1;
                } else {
                    over.push(format!(
                        "seed {seed}: {} GPUs, optimum {}, bound {}",
                        plan.gpus_used, o.gpus, plan.lower_bound
                    ));
                    eprintln!("{name}: {}", over[over.len() - 1]);
                }
            }
            Err(e) => {
                unproven += 1;
                over.push(format!("seed {seed}: no proven optimum ({e:?})"));
                eprintln!("{name}: {}", over[over.len() - 1]);
            }
        }
    }
    println!(
        "| {name} | {first}-{} | {gpus} | {optimal} | {at_bound} | {bound_over} | {unproven} | {:.2} ms | {worst_ms:.1} ms | {worst_proof:.2} s |",
        first + count.saturating_sub(1),
        total_ms / count.max(1) as f64
    );
    for o in over {
        println!("  {o}");
    }
}

/// One fleet, its plan and its optimum, for reading.
fn show(input: &PlanInput, limit: f64) {
    for (a, t) in input.tenants.iter().enumerate() {
        let row: Vec<&str> = input.trust[a].iter().map(|t| t.as_str()).collect();
        println!("{} {:?}", t.name, row);
    }
    for w in &input.workloads {
        println!(
            "{} t{} x{} peak {} MiB compute {:?}",
            w.name,
            w.tenant,
            w.replicas,
            w.peak_memory_mib.unwrap_or(0),
            w.compute
        );
    }
    let start = Instant::now();
    let plan = solve(input);
    println!("solve {:.1} ms", start.elapsed().as_secs_f64() * 1000.0);
    for n in &plan.nodes {
        for g in &n.gpus {
            let items: Vec<String> = g
                .assignments
                .iter()
                .map(|a| {
                    format!(
                        "{}#{}:{}:{}",
                        a.workload,
                        a.replica,
                        a.tenant,
                        a.profile.clone().unwrap_or_default()
                    )
                })
                .collect();
            println!("{} gpu{}: {}", n.name, g.index, items.join(" "));
        }
    }
    let start = Instant::now();
    let o = independent::optimum(input, limit);
    println!(
        "plan {} bound {} optimum {:?} ({:.1} s)",
        plan.gpus_used,
        plan.lower_bound,
        o,
        start.elapsed().as_secs_f64()
    );
}

fn large() {
    let seeds = [1u64, 2, 3];
    println!(
        "| replicas | seed | GPUs | lower bound | gap | exact optimum | first-fit decreasing | nodes | nodes lower bound | solve CPU time |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &replicas in &[100usize, 1_000, 10_000, 50_000] {
        for &seed in &seeds {
            let input = fleet(&FleetSpec::benchmark(replicas, seed));
            let start = cpu_seconds();
            let plan = solve_with(
                &input,
                &SolveOptions {
                    method: Method::Best,
                    ..SolveOptions::default()
                },
            );
            let elapsed = cpu_seconds() - start;
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
                elapsed * 1000.0
            );
            assert!(
                plan.gpus_used <= ffd.gpus_used,
                "worse than first-fit decreasing"
            );
        }
    }
}

/// A section of random MIG fleets: its key, its name in the table, and the fleet of a seed.
type Shape<'a> = (&'a str, &'a str, &'a dyn Fn(u64) -> PlanInput);

fn main() {
    // `cargo bench` passes `--bench`; the rest names sections, a number the fleets per section,
    // `from=N` their first seed, `limit=S` the independent solver's seconds per trust component, and
    // `show=N` prints fleet N of the named sections (default `crowded`) with its plan and optimum.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let value = |key: &str| -> Option<f64> {
        args.iter()
            .find_map(|a| a.strip_prefix(key).and_then(|v| v.parse().ok()))
    };
    let count: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(200);
    let first = value("from=").map_or(FIRST_SEED, |v| v as u64);
    let limit = value("limit=").unwrap_or(60.0);
    let shows: Vec<u64> = args
        .iter()
        .filter_map(|a| a.strip_prefix("show=")?.parse().ok())
        .collect();
    let sections: Vec<&str> = args
        .iter()
        .filter(|a| a.parse::<u64>().is_err() && !a.contains('='))
        .map(String::as_str)
        .collect();
    let wanted = |s: &str| sections.contains(&s) || sections.is_empty();
    let shapes: [Shape; 5] = [
        ("small", "small (2-7 workloads of 1-4 replicas)", &|s| {
            mig_fleet(s, MODEL, 7, 4)
        }),
        ("medium", "medium (2-12 workloads of 1-8 replicas)", &|s| {
            mig_fleet(s, MODEL, 12, 8)
        }),
        (
            "crowded",
            "crowded (4-8 tenants, 4-12 workloads of small peaks)",
            &|s| crowded_mig_fleet(s, MODEL),
        ),
        ("pool", "one pool (5-8 tenants, 40-120 replicas)", &|s| {
            medium_mig_fleet(s, false)
        }),
        (
            "pools",
            "two pools (the same, H100 capped at 1-3 nodes, A100 for the rest)",
            &|s| medium_mig_fleet(s, true),
        ),
    ];
    if !shows.is_empty() {
        for (key, _, make) in &shapes {
            if sections.contains(key) || (sections.is_empty() && *key == "crowded") {
                for &seed in &shows {
                    show(&make(seed), limit);
                }
            }
        }
        return;
    }
    if shapes.iter().any(|(key, _, _)| wanted(key)) {
        println!("| fleets | seeds | GPUs in all | exact optimum | at the plan's lower bound | lower bound above the optimum | no proven optimum | mean solve CPU time | slowest solve | slowest exact proof |");
        println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (key, name, make) in &shapes {
            if wanted(key) {
                mig_fleets(name, first, count, limit, make);
            }
        }
    }
    if wanted("large") {
        large();
    }
}
