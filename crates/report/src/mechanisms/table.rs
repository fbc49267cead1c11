//! The isolation model as tables: device properties and incident reach per mechanism, the DRA
//! strategies, the layers above the device and, when asked, the source of every fact.

use super::DRA_STRATEGIES;
use crate::text::{prose_line, table};
use gpu_trust_model::fleet::DraStrategy;
use gpu_trust_model::isolation::{Mechanism, Property, LAYERS};
use gpu_trust_model::Incident;

/// The widest the reference tables are laid out, however wide the terminal.
const WIDEST: usize = 160;

/// The selected mechanisms side by side; `sources`: the source of every fact shown, under the tables.
pub fn render(selected: &[Mechanism], sources: bool, width: usize) -> String {
    let width = width.min(WIDEST);
    let mut header = vec!["property".to_string()];
    header.extend(selected.iter().map(|m| m.as_str().to_string()));
    let mut table = table(width, header);
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
    for m in selected {
        if let Some(r) = m.requires() {
            out.push('\n');
            out.push_str(prose_line(&format!("{m} needs: {r}."), width, "").trim_end_matches('\n'));
        }
    }
    let dra: Vec<String> = DRA_STRATEGIES
        .iter()
        .map(|s| format!("{} -> {}", dra_name(*s), Mechanism::for_dra(*s)))
        .collect();
    out.push('\n');
    out.push_str(&prose_line(
        &format!(
            "A DRA claim adds no isolation: it gets the mechanism its sharing strategy names ({}).",
            dra.join(", ")
        ),
        width,
        "",
    ));
    out.push_str("\nAbove the device: what every workload shares\n");
    let mut layers = crate::text::table(
        width,
        ["layer", "shared by", "what is shared", "separated by"],
    );
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
            out.push_str(&prose_line(&format!("- {s}"), width, "  "));
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
