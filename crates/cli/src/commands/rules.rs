//! `gpu-trust rules`: the rule catalogue, from the registry.

use crate::output::{colour_enabled, write_output};
use gpu_trust_report::audit::table::TableOptions;
use gpu_trust_report::{registry_docs, rules};
use std::path::PathBuf;
use std::process::ExitCode;

/// List every audit rule: code, name, layer, highest severity and what it detects.
///
/// Codes are stable: GT0xx input and policy, GT1xx device, GT2xx host, GT3xx confidentiality,
/// GT4xx control plane, GT5xx contract. `gpu-trust explain CODE` prints one rule's documentation.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per rule: code, layer, severity, summary.
    Table,
    /// The catalogue of rules as JSON.
    Json,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let docs = registry_docs();
    let text = match args.format {
        Format::Json => rules::render_json(&docs)?,
        Format::Table => rules::render_table(
            &docs,
            &TableOptions {
                colour: colour_enabled(args.output.as_deref()),
                width: crate::output::text_width(args.output.as_deref()),
                ..TableOptions::default()
            },
        ),
    };
    write_output(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust rules
  gpu-trust rules --format json | jq -r '.rules[] | select(.layer==\"host\") | .code'";
