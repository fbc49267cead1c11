//! `gpu-trust mechanisms`: the isolation model as a table.

use crate::output::write_output;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpu_trust_model::fleet::DraStrategy;
use gpu_trust_model::isolation::{Mechanism, Property, LAYERS};
use gpu_trust_model::Incident;
use serde::Serialize;
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MechanismsJson {
    schema: &'static str,
    mechanisms: Vec<MechanismJson>,
    layers: &'static [gpu_trust_model::isolation::LayerFact],
    /// DRA claims take the mechanism their sharing strategy names.
    dra: Vec<DraJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DraJson {
    strategy: DraStrategy,
    mechanism: Mechanism,
}

const DRA_STRATEGIES: [DraStrategy; 6] = [
    DraStrategy::Exclusive,
    DraStrategy::TimeSlicing,
    DraStrategy::Mps,
    DraStrategy::Mig,
    DraStrategy::MigTimeSlicing,
    DraStrategy::MigMps,
];

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MechanismJson {
    name: &'static str,
    title: &'static str,
    properties: Vec<PropertyJson>,
    reach: Vec<ReachJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PropertyJson {
    property: &'static str,
    #[serde(flatten)]
    fact: &'static gpu_trust_model::isolation::PropertyFact,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReachJson {
    incident: Incident,
    scope: gpu_trust_model::isolation::Scope,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let selected: Vec<Mechanism> = if args.mechanisms.is_empty() {
        Mechanism::ALL.to_vec()
    } else {
        args.mechanisms.clone()
    };
    let text = match args.format {
        Format::Json => {
            let doc = MechanismsJson {
                schema: "gpu-trust/mechanisms/v1",
                mechanisms: selected.iter().map(|m| mechanism_json(*m)).collect(),
                layers: &LAYERS,
                dra: DRA_STRATEGIES
                    .iter()
                    .map(|s| DraJson {
                        strategy: *s,
                        mechanism: Mechanism::for_dra(*s),
                    })
                    .collect(),
            };
            let mut s = serde_json::to_string_pretty(&doc)?;
            s.push('\n');
            s
        }
        Format::Table => render_table(&selected, args.sources),
    };
    write_output(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

fn mechanism_json(m: Mechanism) -> MechanismJson {
    MechanismJson {
        name: m.as_str(),
        title: m.title(),
        properties: Property::ALL
            .iter()
            .map(|p| PropertyJson {
                property: p.as_str(),
                fact: m.property(*p),
            })
            .collect(),
        reach: Incident::ALL
            .iter()
            .map(|i| ReachJson {
                incident: *i,
                scope: m.reach(*i),
            })
            .collect(),
    }
}

fn render_table(selected: &[Mechanism], sources: bool) -> String {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(160);
    let mut header = vec!["property".to_string()];
    header.extend(selected.iter().map(|m| m.as_str().to_string()));
    table.set_header(header);
    for p in Property::ALL {
        let mut row = vec![p.title().to_string()];
        for m in selected {
            let f = m.property(p);
            row.push(format!("{}: {}", f.enforcement.as_str(), f.note));
        }
        table.add_row(row);
    }
    for i in Incident::ALL {
        let mut row = vec![format!("{i} reaches")];
        row.extend(selected.iter().map(|m| scope_text(m.reach(i)).to_string()));
        table.add_row(row);
    }
    let mut out = String::from("Device layer: two workloads on the same physical GPU\n");
    out.push_str(&table.to_string());
    out.push_str(
        "\nA DRA claim adds no isolation: it gets the mechanism its sharing strategy names (",
    );
    let dra: Vec<String> = DRA_STRATEGIES
        .iter()
        .map(|s| format!("{} -> {}", dra_name(*s), Mechanism::for_dra(*s)))
        .collect();
    out.push_str(&dra.join(", "));
    out.push_str(").\n\nAbove the device: what every workload shares\n");
    let mut layers = Table::new();
    layers
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(160)
        .set_header(vec!["layer", "shared by", "what is shared", "separated by"]);
    for l in &LAYERS {
        layers.add_row(vec![
            l.layer.as_str(),
            scope_text(l.scope),
            l.shared,
            l.separated_by,
        ]);
    }
    out.push_str(&layers.to_string());
    out.push('\n');
    if sources {
        out.push_str("\nSources\n");
        let mut seen = std::collections::BTreeSet::new();
        for m in selected {
            for p in Property::ALL {
                seen.insert(m.property(p).source);
            }
        }
        for l in &LAYERS {
            seen.insert(l.source);
        }
        for s in seen {
            out.push_str("  - ");
            out.push_str(s);
            out.push('\n');
        }
    }
    out
}

fn dra_name(s: DraStrategy) -> &'static str {
    match s {
        DraStrategy::Exclusive => "no sharing",
        DraStrategy::TimeSlicing => "TimeSlicing",
        DraStrategy::Mps => "MPS",
        DraStrategy::Mig => "MIG device",
        DraStrategy::MigTimeSlicing => "MIG device with TimeSlicing",
        DraStrategy::MigMps => "MIG device with MPS",
    }
}

fn scope_text(s: gpu_trust_model::isolation::Scope) -> &'static str {
    use gpu_trust_model::isolation::Scope;
    match s {
        Scope::Nothing => "no one else",
        Scope::Instance => "the MIG instance",
        Scope::Gpu => "the whole GPU",
        Scope::Node => "the whole node",
        Scope::Cluster => "the whole cluster",
    }
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust mechanisms
  gpu-trust mechanisms --mechanism time-slicing --sources
  gpu-trust mechanisms --format json | jq '.mechanisms[] | select(.name==\"kai-fraction\")'";
