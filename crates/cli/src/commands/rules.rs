//! `gpu-trust rules`: the rule catalogue, from the registry.

use crate::output::{self, Format, OutputArgs};
use gpu_trust_report::audit::table::TableOptions;
use gpu_trust_report::{registry_docs, rules};
use std::process::ExitCode;

/// List the audit's rules.
///
/// List every audit rule: code, name, layer, highest severity and what it detects.
///
/// Codes are stable: GT0xx input and policy, GT1xx device, GT2xx host, GT3xx confidentiality,
/// GT4xx control plane, GT5xx contract. `gpu-trust explain CODE` prints one rule's documentation.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct Args {
    #[command(flatten)]
    pub output: OutputArgs,
}

/// One line per rule (code, layer, severity, summary), or the catalogue of rules as JSON.
const FORMATS: &[Format] = &[Format::Table, Format::Json];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let targets = args.output.targets(FORMATS)?;
    let docs = registry_docs();
    output::write_targets(&targets, output::CLEAN, |t| {
        Ok(match t.format {
            Format::Json => rules::render_json(&docs)?,
            _ => rules::render_table(
                &docs,
                &TableOptions {
                    colour: t.colour(),
                    width: t.width(),
                    ..TableOptions::default()
                },
            ),
        })
    })
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust rules
  gpu-trust rules --format json | jq -r '.rules[] | select(.layer==\"host\") | .code'";
