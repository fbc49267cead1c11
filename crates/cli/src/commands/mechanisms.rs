//! `gpu-trust mechanisms`: the isolation model as a table.

use crate::output::write_output;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_report::mechanisms::{json, table};
use std::path::PathBuf;
use std::process::ExitCode;

/// Show the isolation model: per mechanism, what each device property keeps separate, shares, or only
/// limits in software, how far each incident reaches, and what every tenant shares above the device.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Show only these mechanisms (repeatable).
    #[arg(long = "mechanism", value_parser = parse_mechanism, value_name = "MECHANISM")]
    pub mechanisms: Vec<Mechanism>,
    /// Print the source of every fact under the table.
    #[arg(long)]
    pub sources: bool,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The isolation table per mechanism.
    Table,
    /// The isolation model as JSON.
    Json,
}

fn parse_mechanism(s: &str) -> Result<Mechanism, String> {
    Mechanism::parse(s).ok_or_else(|| {
        let names: Vec<_> = Mechanism::ALL.iter().map(|m| m.as_str()).collect();
        format!("unknown mechanism `{s}`; known: {}", names.join(", "))
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let selected: Vec<Mechanism> = if args.mechanisms.is_empty() {
        Mechanism::ALL.to_vec()
    } else {
        args.mechanisms.clone()
    };
    let text = match args.format {
        Format::Json => json::render(&selected)?,
        Format::Table => table::render(&selected, args.sources, crate::output::text_width(None)),
    };
    write_output(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust mechanisms
  gpu-trust mechanisms --mechanism time-slicing --sources
  gpu-trust mechanisms --format json | jq '.mechanisms[] | select(.name==\"kai-fraction\")'";
