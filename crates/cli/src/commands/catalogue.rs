//! `gpu-trust catalogue`: the GPU catalogue, and one model's MIG profiles and layouts.

use crate::output::{self, Format, OutputArgs};
use anyhow::bail;
use gpu_trust_model::catalogue::{self, GpuModel};
use gpu_trust_model::geometry::ProfileSet;
use gpu_trust_report::catalogue::{json, table, Layouts};
use std::process::ExitCode;

/// Show the GPU models, their MIG profiles and layouts.
///
/// Show the GPU catalogue: every known model with its memory, MIG and confidential-computing support
/// and product labels; or, for one model, its MIG profiles (memory, SMs, maximum count, placements)
/// and the maximal MIG layouts, those to which no further instance can be added.
///
/// MODEL may be a catalogue id (H100-SXM5-80GB), an nvidia.com/gpu.product label
/// (NVIDIA-H100-80GB-HBM3, also with -SHARED or -MIG-<profile>), or a PCI id (0x233010DE).
/// Layouts are counted over the standard profiles unless --profile or --all-profiles says otherwise.
/// Profile memory marked ~ is derived from the GPU's total, not read from hardware.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct Args {
    /// A GPU model: catalogue id, product label or PCI id.
    pub model: Option<String>,
    /// Count layouts over these profiles only (repeatable).
    #[arg(
        long = "profile",
        value_name = "PROFILE",
        requires = "model",
        conflicts_with = "all_profiles"
    )]
    pub profiles: Vec<String>,
    /// Count layouts over every profile, including +me and extra-memory variants.
    #[arg(long, requires = "model")]
    pub all_profiles: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

const FORMATS: &[Format] = &[Format::Table, Format::Json];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let targets = args.output.targets(FORMATS)?;
    let model = match &args.model {
        None => None,
        Some(name) => {
            let model = find(name)?;
            let layouts = match model.mig {
                Some(_) => Some(Layouts::over(&profile_set(model, &args)?)),
                None if !args.profiles.is_empty() || args.all_profiles => {
                    bail!(
                        "{} does not support MIG: it has no profiles to count layouts over",
                        model.id
                    )
                }
                None => None,
            };
            Some((model, layouts))
        }
    };
    output::write_targets(&targets, output::CLEAN, |t| {
        Ok(match (&model, t.format) {
            (None, Format::Json) => json::catalogue()?,
            (None, _) => table::catalogue(t.width()),
            (Some((model, layouts)), Format::Json) => json::model(model, layouts.as_ref())?,
            (Some((model, layouts)), _) => table::model(model, layouts.as_ref(), t.width()),
        })
    })
}

fn find(name: &str) -> anyhow::Result<&'static GpuModel> {
    if let Some(m) = catalogue::lookup(name) {
        return Ok(m);
    }
    let close = catalogue::suggest(name);
    if close.is_empty() {
        bail!("unknown GPU model `{name}`; `gpu-trust catalogue` lists the known models")
    }
    bail!(
        "unknown GPU model `{name}`; close names: {}",
        close.join(", ")
    )
}

/// The profiles `--profile` or `--all-profiles` name, or the standard ones.
fn profile_set(model: &GpuModel, args: &Args) -> anyhow::Result<ProfileSet> {
    if args.all_profiles {
        ProfileSet::all(model)
    } else if args.profiles.is_empty() {
        ProfileSet::standard(model)
    } else {
        ProfileSet::from_names(model, &args.profiles)
    }
    .map_err(|e| anyhow::anyhow!("{e}"))
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust catalogue
  gpu-trust catalogue NVIDIA-H100-80GB-HBM3
  gpu-trust catalogue H100-SXM5-80GB --profile 1g.10gb --profile 3g.40gb
  gpu-trust catalogue A30 --all-profiles --format json | jq '.layouts.maximalCount'";
