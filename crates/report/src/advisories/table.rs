//! The advisory data as text: where it came from and how old it is, then per component what is known.

use crate::text::{e, plural, table};
use gpu_trust_model::Diagnostic;
use gpu_trust_policy::Date;
use gpu_trust_rules::advisories::{Advisories, STALE_AFTER_DAYS};
use std::fmt::Write as _;

/// The data in use on `today`, with the warnings of reading it.
/// The table is fitted to `width` columns (the terminal's, or `COLUMNS`).
pub fn render(data: &Advisories, today: Date, warnings: &[Diagnostic], width: usize) -> String {
    let mut out = String::new();
    let f = data.freshness(today);
    let _ = writeln!(
        out,
        "Advisory data: {} from {}.",
        plural(data.advisories.len(), "advisory", "advisories"),
        plural(data.sources.len(), "source", "sources")
    );
    for s in &data.sources {
        let mut line = format!("  {} ({})", e(&s.name), s.kind.as_str());
        if let Some(t) = &s.title {
            let _ = write!(line, ": {}", e(t));
        }
        if let Some(n) = s.newest {
            let _ = write!(line, ", newest {n}");
        }
        let _ = write!(line, ", {}", plural(s.advisories, "advisory", "advisories"));
        let _ = writeln!(out, "{line}");
    }
    if let Some(u) = &data.update {
        let _ = writeln!(
            out,
            "Updated from {}: {}.",
            e(&u.from),
            match u.checked {
                Some(day) => format!("every bulletin its indexes listed was read on {day}"),
                None =>
                    "the last update did not read every bulletin its indexes listed".to_string(),
            }
        );
    }
    match (f.newest, f.age_days) {
        (Some(n), Some(age)) => {
            let _ = writeln!(
                out,
                "Newest bulletin: {n}, {} before {today}.{}",
                plural(usize::try_from(age.max(0)).unwrap_or(0), "day", "days"),
                if f.stale {
                    format!(
                        " Warning: older than {STALE_AFTER_DAYS} days; newer bulletins were probably published: run `gpu-trust advisories update` (or give them with --advisories)."
                    )
                } else {
                    String::new()
                }
            );
        }
        _ => {
            let _ = writeln!(out, "Newest bulletin: none (the data has no dates).");
        }
    }
    out.push('\n');
    let mut t = table(
        width,
        [
            "component",
            "advisory",
            "CVSS",
            "versions",
            "bulletin",
            "published",
        ],
    );
    for (component, entries) in super::per_component(data) {
        for (a, r) in entries {
            t.add_row(vec![
                component.as_str().to_string(),
                e(&a.id),
                a.cvss
                    .map_or_else(|| "-".to_string(), |c| format!("{c:.1}")),
                e(&super::versions(r)),
                e(a.title.as_deref().unwrap_or(&a.bulletin)),
                a.published_text
                    .as_deref()
                    .map_or_else(|| "-".to_string(), e),
            ]);
        }
    }
    let _ = writeln!(out, "{t}");
    if !data.components.cdi_defaults.is_empty() {
        out.push_str("\nCDI injects the devices by default from:\n");
        for d in &data.components.cdi_defaults {
            let _ = writeln!(out, "  {} {}", d.component.title(), d.since);
        }
    }
    if !warnings.is_empty() {
        out.push_str("\nNot used:\n");
        for w in warnings {
            let _ = writeln!(out, "  {}", e(&w.to_string()));
        }
    }
    out
}
