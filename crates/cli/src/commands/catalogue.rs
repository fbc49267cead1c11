//! `gpu-trust catalogue`: the GPU catalogue, and one model's MIG profiles and layouts.

use crate::output::write_output;
use anyhow::{bail, Context};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpu_trust_model::catalogue::{self, CcSupport, GpuModel, MemoryBasis, MigProfile};
use gpu_trust_model::geometry::{self, Layout, ProfileSet};
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

/// Show the GPU catalogue: every known model with its memory, MIG and confidential-computing support
/// and product labels; or, for one model, its MIG profiles (memory, SMs, maximum count, placements)
/// and the maximal MIG layouts, those to which no further instance can be added.
///
/// MODEL may be a catalogue id (H100-SXM5-80GB), an nvidia.com/gpu.product label
/// (NVIDIA-H100-80GB-HBM3, also with -SHARED or -MIG-<profile>), or a PCI id (0x233010DE).
/// Layouts are counted over the standard profiles unless --profile or --all-profiles says otherwise.
/// Profile memory marked ~ is derived from the GPU's total, not read from hardware.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// A GPU model: catalogue id, product label or PCI id.
    pub model: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub format: Format,
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
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for reading.
    Table,
    /// The catalogue as JSON.
    Json,
}

const SCHEMA: &str = "gpu-trust/catalogue/v1";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CatalogueJson {
    schema: &'static str,
    models: Vec<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelJson {
    schema: &'static str,
    model: Value,
    /// `None` for models without MIG.
    layouts: Option<LayoutsJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LayoutsJson {
    /// The profiles the layouts are counted over.
    profiles: Vec<&'static str>,
    valid_count: usize,
    maximal_count: usize,
    maximal: Vec<&'static Layout>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let text = match &args.model {
        None => match args.format {
            Format::Json => to_json(&CatalogueJson {
                schema: SCHEMA,
                models: catalogue::all()
                    .iter()
                    .map(model_value)
                    .collect::<anyhow::Result<_>>()?,
            })?,
            Format::Table => catalogue_table(),
        },
        Some(name) => {
            let model = find(name)?;
            let layouts = match model.mig {
                Some(_) => Some(layouts_for(model, &args)?),
                None if !args.profiles.is_empty() || args.all_profiles => {
                    bail!(
                        "{} does not support MIG: it has no profiles to count layouts over",
                        model.id
                    )
                }
                None => None,
            };
            match args.format {
                Format::Json => to_json(&ModelJson {
                    schema: SCHEMA,
                    model: model_value(model)?,
                    layouts,
                })?,
                Format::Table => model_table(model, layouts.as_ref()),
            }
        }
    };
    write_output(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
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

fn layouts_for(model: &GpuModel, args: &Args) -> anyhow::Result<LayoutsJson> {
    let set = if args.all_profiles {
        ProfileSet::all(model)
    } else if args.profiles.is_empty() {
        ProfileSet::standard(model)
    } else {
        ProfileSet::from_names(model, &args.profiles)
    }
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let maximal = geometry::maximal_layouts_in(&set);
    Ok(LayoutsJson {
        profiles: set.profiles().map(|p| p.name).collect(),
        valid_count: geometry::layouts_in(&set).len(),
        maximal_count: maximal.len(),
        maximal,
    })
}

/// The model as the catalogue serialises it, each profile with its placements in nvidia-smi notation.
fn model_value(model: &GpuModel) -> anyhow::Result<Value> {
    let mut v = serde_json::to_value(model).context("serialising the catalogue")?;
    if let (Some(g), Some(profiles)) = (
        model.mig,
        v.pointer_mut("/mig/profiles").and_then(Value::as_array_mut),
    ) {
        for (p, json) in g.profiles.iter().zip(profiles.iter_mut()) {
            if let Some(obj) = json.as_object_mut() {
                obj.insert("placements".into(), Value::String(p.placements()));
            }
        }
    }
    Ok(v)
}

fn to_json<T: Serialize>(doc: &T) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(doc)?;
    s.push('\n');
    Ok(s)
}

fn new_table(header: Vec<&str>) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(160)
        .set_header(header);
    t
}

fn catalogue_table() -> String {
    let mut t = new_table(vec![
        "id",
        "memory",
        "arch",
        "compute",
        "MIG",
        "CC",
        "product labels",
    ]);
    for m in catalogue::all() {
        t.add_row(vec![
            m.id.to_string(),
            format!("{} MiB", m.memory_mib),
            m.architecture.to_string(),
            m.compute_capability.to_string(),
            match m.mig {
                Some(g) => format!("yes ({} slices)", g.memory_slices),
                None => "no".to_string(),
            },
            cc_short(m.confidential_computing).to_string(),
            if m.product_labels.is_empty() {
                "(none known; matched by PCI id)".to_string()
            } else {
                m.product_labels.join(", ")
            },
        ]);
    }
    let mut out = t.to_string();
    out.push_str(&format!(
        "\n{} models. `gpu-trust catalogue MODEL` shows one model's MIG profiles and layouts.\n",
        catalogue::all().len()
    ));
    out
}

fn cc_short(cc: CcSupport) -> &'static str {
    match cc {
        CcSupport::Unsupported => "no",
        CcSupport::SingleGpuOrProtectedPcie => "1 GPU (more: ppcie)",
        CcSupport::SingleAndMultiGpu => "1 or more GPUs",
    }
}

fn cc_long(cc: CcSupport) -> &'static str {
    match cc {
        CcSupport::Unsupported => "not supported",
        CcSupport::SingleGpuOrProtectedPcie => {
            "one GPU per confidential VM; several only in protected PCIe mode (cc.mode=ppcie)"
        }
        CcSupport::SingleAndMultiGpu => "single-GPU and multi-GPU passthrough",
    }
}

fn model_table(model: &GpuModel, layouts: Option<&LayoutsJson>) -> String {
    let pci: Vec<String> = model
        .pci_device_ids
        .iter()
        .map(ToString::to_string)
        .collect();
    let mut out = format!("{}: {}\n", model.id, model.display_name);
    out.push_str(&format!(
        "  {}, compute capability {}, {} MiB\n",
        model.architecture, model.compute_capability, model.memory_mib
    ));
    out.push_str(&format!("  PCI ids: {}\n", pci.join(", ")));
    out.push_str(&format!(
        "  product labels: {}\n",
        if model.product_labels.is_empty() {
            "none known".to_string()
        } else {
            model.product_labels.join(", ")
        }
    ));
    out.push_str(&format!(
        "  confidential computing: {}\n",
        cc_long(model.confidential_computing)
    ));
    out.push_str(&format!("  source: {}\n", model.source));
    let Some(g) = model.mig else {
        out.push_str("  MIG: not supported (whole GPUs, time-slicing or MPS only)\n");
        return out;
    };
    out.push_str(&format!(
        "  MIG: {} memory slices, {} compute slices ({})\n\n",
        g.memory_slices, g.compute_slices, g.source
    ));
    let mut t = new_table(vec![
        "profile",
        "id",
        "memory",
        "SMs",
        "max",
        "placements",
        "variant",
    ]);
    for p in g.profiles {
        t.add_row(vec![
            p.name.to_string(),
            p.profile_id.map_or("-".to_string(), |i| i.to_string()),
            memory_cell(p),
            p.sms.map_or("-".to_string(), |s| s.to_string()),
            p.max_count.to_string(),
            p.placements(),
            variant_text(p).to_string(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    if g.profiles
        .iter()
        .any(|p| p.memory_basis == MemoryBasis::Derived)
    {
        out.push_str(
            "~ derived from the GPU's total memory (conservative), not read from hardware\n",
        );
    }
    if let Some(l) = layouts {
        out.push_str(&format!(
            "\n{} maximal layouts over {} ({} valid layouts, maximal or not):\n",
            l.maximal_count,
            l.profiles.join(", "),
            l.valid_count
        ));
        let width = l.maximal_count.to_string().len();
        for (n, layout) in l.maximal.iter().enumerate() {
            let free = layout.free_slices();
            let unused = if free.is_empty() {
                String::new()
            } else {
                let s: Vec<String> = free.iter().map(u8::to_string).collect();
                format!("  (unused memory slices: {})", s.join(","))
            };
            out.push_str(&format!("  {:>width$}. {layout}{unused}\n", n + 1));
        }
    }
    out
}

fn memory_cell(p: &MigProfile) -> String {
    let gib = p.memory_mib as f64 / 1024.0;
    match p.memory_basis {
        MemoryBasis::Measured => format!("{} MiB ({gib:.2} GiB)", p.memory_mib),
        MemoryBasis::Derived => format!("~{} MiB ({gib:.2} GiB)", p.memory_mib),
    }
}

fn variant_text(p: &MigProfile) -> &'static str {
    use gpu_trust_model::catalogue::ProfileVariant;
    match p.variant {
        ProfileVariant::Standard => "standard",
        ProfileVariant::MediaExtensions => "+me: media extensions, one per GPU",
        ProfileVariant::ExtraMemory => "1 compute slice on 2 memory slices",
    }
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust catalogue
  gpu-trust catalogue NVIDIA-H100-80GB-HBM3
  gpu-trust catalogue H100-SXM5-80GB --profile 1g.10gb --profile 3g.40gb
  gpu-trust catalogue A30 --all-profiles --format json | jq '.layouts.maximalCount'";
