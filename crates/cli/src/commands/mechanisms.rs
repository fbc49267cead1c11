//! `gpu-trust mechanisms`: the isolation model as a table.

use crate::output::{self, Format, OutputArgs};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_report::mechanisms::{json, table};
use std::process::ExitCode;

/// Show what each sharing mechanism isolates and what it shares.
///
/// Show the isolation model: per mechanism, what each device property keeps separate, shares, or only
/// limits in software, how far each incident reaches, and what every tenant shares above the device.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct Args {
    /// Show only these mechanisms (repeatable).
    #[arg(long = "mechanism", value_parser = parse_mechanism, value_name = "MECHANISM")]
    pub mechanisms: Vec<Mechanism>,
    /// Print the source of every fact under the table.
    #[arg(long)]
    pub sources: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

const FORMATS: &[Format] = &[Format::Table, Format::Json];

fn parse_mechanism(s: &str) -> Result<Mechanism, String> {
    Mechanism::parse(s).ok_or_else(|| {
        let names: Vec<_> = Mechanism::ALL.iter().map(|m| m.as_str()).collect();
        format!("unknown mechanism `{s}`; known: {}", names.join(", "))
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let targets = args.output.targets(FORMATS)?;
    let selected: Vec<Mechanism> = if args.mechanisms.is_empty() {
        Mechanism::ALL.to_vec()
    } else {
        args.mechanisms.clone()
    };
    output::write_targets(&targets, output::CLEAN, |t| {
        Ok(match t.format {
            Format::Json => json::render(&selected)?,
            _ => table::render(&selected, args.sources, t.width()),
        })
    })
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust mechanisms
  gpu-trust mechanisms --mechanism time-slicing --sources
  gpu-trust mechanisms --format json | jq '.mechanisms[] | select(.name==\"kai-fraction\")'";
