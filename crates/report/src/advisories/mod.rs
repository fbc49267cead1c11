//! `gpu-trust advisories`: the advisory data in use (built-in, the bulletins updates kept, what
//! `--advisories` gave), its newest bulletin and how old that is, and per component what is known;
//! one module per format, and `update` for what `gpu-trust advisories update` did.

pub mod json;
pub mod table;
pub mod update;

use gpu_trust_rules::advisories::{Advisories, Advisory, Affected};

/// The fixed versions, introduced version, last affected versions and branches of one entry, in
/// words (`fixed in 1.19.1; from 1.18.0`).
pub(crate) fn versions(a: &Affected) -> String {
    let list = |v: &[gpu_trust_model::Version]| {
        v.iter()
            .map(|v| v.text.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let branches = |b: &[u64]| {
        b.iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !a.fixed.is_empty() {
        parts.push(format!("fixed in {}", list(&a.fixed)));
    }
    if let Some(i) = &a.introduced {
        parts.push(format!("from {i}"));
    }
    if !a.last_affected.is_empty() {
        parts.push(format!("affected through {}", list(&a.last_affected)));
    }
    if !a.intervals.is_empty() {
        let each: Vec<String> = a.intervals.iter().map(ToString::to_string).collect();
        parts.push(format!("affected in {}", each.join(", ")));
    }
    if !a.affected_branches.is_empty() {
        parts.push(format!(
            "no fix for branch {}",
            branches(&a.affected_branches)
        ));
    }
    if !a.unaffected_branches.is_empty() {
        parts.push(format!(
            "branch {} not affected",
            branches(&a.unaffected_branches)
        ));
    }
    for p in a.preconditions.iter() {
        parts.push(p.describe().to_string());
    }
    parts.join("; ")
}

/// Per component, its entries in data order.
pub(crate) fn per_component(
    data: &Advisories,
) -> Vec<(
    gpu_trust_rules::advisories::Component,
    Vec<(&Advisory, &Affected)>,
)> {
    data.by_component().into_iter().collect()
}
