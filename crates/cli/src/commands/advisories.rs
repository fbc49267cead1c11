//! `gpu-trust advisories`: the advisory data in use, its newest bulletin and what it knows per
//! component. Reads no network: the built-in data and the files given.

use crate::input;
use crate::output::{self, Format, OutputArgs};
use gpu_trust_policy::Date;
use gpu_trust_report::advisories::{json, table};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

/// Show the advisory data the audit uses and how old it is.
///
/// Show the advisory data the audit uses: where it comes from (the built-in data, or the CSAF
/// documents and data files given with --advisories), the date of its newest bulletin and how old
/// that is, and per component (container toolkit, GPU Operator, device plugin, MIG manager, driver,
/// DRA driver, DCGM exporter, KAI Scheduler) which advisories name it and which versions fix them.
///
/// Data whose newest bulletin is older than 90 days before --today is stale: every audit report says
/// so. Reading it needs no network: give newer vendor bulletins (CSAF JSON) with --advisories. A
/// document that cannot be read exits 2 with its file, line and column; what a document says that
/// the audit cannot use (a product that is no known component) is listed, never dropped silently.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct Args {
    /// Advisory data, as for `gpu-trust audit --advisories`: CSAF 2.0 documents added to the built-in
    /// data, or a data file of the built-in format replacing it; folders are read for their .json,
    /// .yaml and .yml files. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub advisories: Vec<PathBuf>,
    /// The day the data's age counts to (default: today).
    #[arg(long, value_parser = Date::parse, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    /// Follow symbolic links that lead out of a folder given with --advisories.
    #[arg(long)]
    pub follow_symlinks: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Sources, age and a table of the advisories per component, or the same as JSON
/// (`gpu-trust/advisories/v1`).
const FORMATS: &[Format] = &[Format::Table, Format::Json];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let targets = match args.output.targets(FORMATS) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let loaded = match input::advisories(&args.advisories, args.follow_symlinks) {
        Ok(l) => l,
        Err(code) => return Ok(code),
    };
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    output::write_targets(&targets, output::CLEAN, |t| {
        Ok(match t.format {
            Format::Json => json::render(&loaded.data, today, &loaded.warnings)?,
            _ => table::render(&loaded.data, today, &loaded.warnings, t.width()),
        })
    })
}

/// What `--help` shows after the options, as written.
const EXAMPLES: &str = "\
Examples:
  gpu-trust advisories
  gpu-trust advisories --advisories bulletins/ --today 2026-12-01
  gpu-trust advisories --advisories 5850.json --format json | jq '.components[].component'
  gpu-trust audit cluster.yaml --advisories bulletins/";
