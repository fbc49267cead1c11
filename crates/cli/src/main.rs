//! The `gpu-trust` binary: parses the command line and hands each command to its module.
//! All behaviour lives in the library crates; this layer only reads files, calls them, and prints.

mod audit_flags;
mod commands;
mod config;
mod coverage;
mod input;
mod live;
mod output;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

mod alloc;
#[cfg(test)]
mod cli_contract;

// Reading a large cluster and auditing it allocate and free millions of small strings, maps and
// vectors; mimalloc does that in about half the instructions of the system allocator
// (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What each tenant can do to another on shared NVIDIA GPUs.
///
/// A fractional GPU describes how capacity is sold and scheduled; it says nothing about isolation.
/// gpu-trust audits a cluster against a tenancy policy across five layers (device, host,
/// confidentiality, control plane, contract), plans trust-aware placements, and probes a real GPU.
#[derive(Debug, Parser)]
#[command(
    name = "gpu-trust",
    version,
    propagate_version = true,
    max_term_width = 100
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb),
    /// always or never.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    color: output::ColourChoice,
    /// The folder `gpu-trust advisories update` keeps the vendor's bulletins in, which every
    /// command reads offline with the built-in advisory data (default: $XDG_CACHE_HOME/gpu-trust,
    /// else ~/.cache/gpu-trust).
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    Audit(commands::audit::Args),
    Inventory(commands::inventory::Args),
    Serve(commands::serve::Args),
    Plan(commands::plan::Args),
    Probe(commands::probe::Args),
    Mechanisms(commands::mechanisms::Args),
    Catalogue(commands::catalogue::Args),
    Advisories(commands::advisories::Args),
    Policy(commands::policy::Args),
    Rules(commands::rules::Args),
    Explain(commands::explain::Args),
    Completions(commands::completions::Args),
    #[command(hide = true)]
    ProbeWorker(commands::probe::WorkerArgs),
    #[command(hide = true)]
    ProbeJobPod(commands::probe::JobPodArgs),
    #[command(hide = true)]
    Manpages(commands::manpages::Args),
}

fn main() -> ExitCode {
    alloc::configure();
    // As the kubectl plugin (`kubectl-gpu_trust`), usage and examples read `kubectl gpu-trust`.
    let parsed = if live::invoked_as_plugin() {
        live::as_plugin(Cli::command())
            .try_get_matches()
            .and_then(|m| Cli::from_arg_matches(&m))
    } else {
        Cli::try_parse()
    };
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version with exit 0 and usage errors with exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    output::set_colour(cli.color);
    input::set_cache_dir(cli.cache_dir);
    let result = match cli.command {
        Command::Audit(a) => commands::audit::run(a),
        Command::Inventory(a) => commands::inventory::run(a),
        Command::Serve(a) => commands::serve::run(a),
        Command::Plan(a) => commands::plan::run(a),
        Command::Probe(a) => commands::probe::run(a),
        Command::ProbeWorker(a) => commands::probe::run_worker(a),
        Command::ProbeJobPod(a) => commands::probe::run_job_pod(a),
        Command::Mechanisms(a) => commands::mechanisms::run(a),
        Command::Catalogue(a) => commands::catalogue::run(a),
        Command::Advisories(a) => commands::advisories::run(a),
        Command::Policy(a) => commands::policy::run(a),
        Command::Rules(a) => commands::rules::run(a),
        Command::Explain(a) => commands::explain::run(a),
        Command::Manpages(a) => {
            commands::manpages::run(a, <Cli as clap::CommandFactory>::command())
        }
        Command::Completions(a) => {
            commands::completions::run(a, <Cli as clap::CommandFactory>::command())
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Commands with a verdict (audit, plan, probe) return it even when the reader went
            // away; what reaches here is informational output (rules, catalogue, explain), whose
            // verdict is 0.
            if output::is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            if let Some(output::Stopped(code)) = e.downcast_ref() {
                return *code;
            }
            output::eprint_error(format!("{e:#}"));
            ExitCode::from(2)
        }
    }
}
