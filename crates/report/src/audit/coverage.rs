//! The coverage section of every format: per layer, in play or not, evaluated whole, in part or not
//! at all, and why; and the partial-audit notice that heads a report whose coverage is incomplete.
//! The words of each gap come from the report (`gpu_trust_model::report::coverage`); this only
//! lays them out.

use crate::text::wrap;
use gpu_trust_model::report::coverage::{Coverage, CoverageStatus, Gap};
use gpu_trust_model::terminal::escape as terminal;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Whether the run exits 2 for its coverage: the audit is partial and `--accept-partial` did not
/// accept it (the CLI decides the same way, `crates/cli/src/coverage.rs`).
pub fn exits_partial(coverage: &Coverage) -> bool {
    !coverage.complete && !coverage.accepted_partial
}

/// The first line of a report whose audit is partial; `None` when the coverage is complete.
pub fn notice(coverage: &Coverage) -> Option<String> {
    if coverage.complete {
        return None;
    }
    let layers: Vec<&str> = coverage
        .layers
        .iter()
        .filter(|l| l.gaps.iter().any(|g| g.blocking))
        .map(|l| l.layer.as_str())
        .collect();
    Some(if coverage.accepted_partial {
        format!(
            "PARTIAL AUDIT (accepted with --accept-partial): not evaluated in full: {}. A clean result here does not cover them.",
            layers.join(", ")
        )
    } else {
        format!(
            "PARTIAL AUDIT: not evaluated in full: {}. The run exits 2 unless --accept-partial is given.",
            layers.join(", ")
        )
    })
}

/// What a run whose coverage is incomplete says on standard error, line by line: that the audit is
/// partial (an error, or a warning when `--accept-partial` accepted it), one line per blocking gap
/// with every layer it touches, and, when not accepted, how to complete or accept it. Nothing when
/// the coverage is complete.
pub fn partial_message(coverage: &Coverage) -> Vec<String> {
    if coverage.complete {
        return Vec::new();
    }
    let lines = blocking_lines(coverage)
        .into_iter()
        .map(|l| format!("  {l}"));
    if coverage.accepted_partial {
        let mut out = vec![
            "gpu-trust: warning: partial audit accepted (--accept-partial); not evaluated:"
                .to_string(),
        ];
        out.extend(lines);
        return out;
    }
    let mut out = vec![
        "gpu-trust: error: the audit is partial: the input puts these layers in play but does not let them be evaluated:".to_string(),
    ];
    out.extend(lines);
    // The input each blocking gap lacks, once each, in layer order.
    let mut missing: Vec<&str> = Vec::new();
    for (_, gap) in coverage.blocking() {
        if let Some(input) = gap.reason.completed_by() {
            if !missing.contains(&input) {
                missing.push(input);
            }
        }
    }
    let add = if missing.is_empty() {
        "add the missing input".to_string()
    } else {
        format!("add {}", missing.join(", "))
    };
    out.push(format!(
        "gpu-trust: {add}, or pass --accept-partial to accept a partial audit; the report is written and marked partial, and the run exits 2"
    ));
    out
}

/// One line per blocking gap, with every layer it touches and their status (a missing node list
/// touches several): `device (partial), host (partial): no-nodes: the input has ...`.
pub fn blocking_lines(coverage: &Coverage) -> Vec<String> {
    let mut gaps: Vec<(Vec<String>, &Gap)> = Vec::new();
    for (layer, gap) in coverage.blocking() {
        let status = coverage
            .layer(layer)
            .map_or("partial", |l| l.status.as_str());
        let named = format!("{layer} ({status})");
        match gaps.iter_mut().find(|(_, g)| *g == gap) {
            Some((layers, _)) => layers.push(named),
            None => gaps.push((vec![named], gap)),
        }
    }
    gaps.iter()
        .map(|(layers, gap)| {
            let nodes = if gap.nodes.is_empty() {
                String::new()
            } else {
                format!(" [nodes: {}]", gap.nodes.join(", "))
            };
            format!(
                "{}: {}: {}{nodes}",
                layers.join(", "),
                gap.reason.as_str(),
                gap.message
            )
        })
        .collect()
}

/// The partial-audit banner that opens the Markdown summary: the notice, then one item per blocking
/// gap with the layers it leaves unevaluated; nothing when the coverage is complete. Text goes
/// through `inline` (the Markdown summary's escaping).
pub fn markdown_banner(coverage: &Coverage, inline: impl Fn(&str) -> String) -> String {
    let Some(n) = notice(coverage) else {
        return String::new();
    };
    let mut out = format!("> [!CAUTION]\n> **{}**\n>\n", inline(&n));
    for line in blocking_lines(coverage) {
        let _ = writeln!(out, "> - {}", inline(&line));
    }
    out.push('\n');
    out
}

fn gap_text(gap: &Gap) -> String {
    let mut s = format!("{}: {}", gap.reason.as_str(), gap.message);
    if !gap.nodes.is_empty() {
        let _ = write!(s, " [nodes: {}]", gap.nodes.join(", "));
    }
    if !gap.reported_by.is_empty() {
        let _ = write!(s, " (reported by {})", gap.reported_by.join(", "));
    }
    if !gap.blocking {
        s.push_str(" (does not make the audit partial)");
    }
    s
}

/// The partial-audit notice as the table's first lines (with a blank line after), or nothing.
pub fn table_notice(coverage: &Coverage, width: usize, paint: impl Fn(&str) -> String) -> String {
    match notice(coverage) {
        Some(n) => format!("{}\n\n", paint(&wrap(&n, width, "  "))),
        None => String::new(),
    }
}

/// The COVERAGE section of the table: one line per layer, its gaps under it. Text from the input
/// (node names) is escaped for the terminal.
pub fn table_section(
    coverage: &Coverage,
    width: usize,
    heading: impl Fn(&str) -> String,
) -> String {
    let mut out = format!("{}\n", heading("COVERAGE"));
    let name_width = coverage
        .layers
        .iter()
        .map(|l| l.layer.as_str().len())
        .max()
        .unwrap_or(0);
    let status_width = coverage
        .layers
        .iter()
        .map(|l| l.status.as_str().len())
        .max()
        .unwrap_or(0);
    let lead = 2 + name_width + 2 + status_width + 2;
    let indent = " ".repeat(lead);
    for l in &coverage.layers {
        let _ = writeln!(
            out,
            "  {:<name_width$}  {:<status_width$}  {}",
            l.layer.as_str(),
            l.status.as_str(),
            wrap(&terminal(&l.in_play), width.saturating_sub(lead), &indent)
        );
        for g in &l.gaps {
            let _ = writeln!(
                out,
                "{indent}- {}",
                wrap(
                    &terminal(&gap_text(g)),
                    width.saturating_sub(lead + 2),
                    &format!("{indent}  ")
                )
            );
        }
    }
    out.push('\n');
    out
}

/// The partial-audit banner at the top of the HTML page, or nothing.
pub fn html_banner(coverage: &Coverage) -> String {
    match notice(coverage) {
        Some(n) => format!(
            "<p class=\"partial\" id=\"partial-audit\" role=\"alert\"><a href=\"#coverage\">{}</a></p>\n",
            crate::text::html_code_spans(&n)
        ),
        None => String::new(),
    }
}

/// The coverage section of the HTML page: one item per layer, its gaps under it.
pub fn html_section(coverage: &Coverage) -> String {
    let esc = crate::text::html_escape;
    let mut out = String::from(
        "<section id=\"coverage\" aria-labelledby=\"h-coverage\">\n<h2 id=\"h-coverage\">Coverage</h2>\n\
         <ul class=\"coverage\">\n",
    );
    for l in &coverage.layers {
        let status = match l.status {
            CoverageStatus::Evaluated => "evaluated",
            CoverageStatus::Partial => "partial",
            CoverageStatus::NotEvaluated => "not-evaluated",
            CoverageStatus::NotInPlay => "not-in-play",
        };
        let _ = write!(
            out,
            "<li data-layer=\"{}\" data-status=\"{status}\"><strong>{}</strong>: {}; {}",
            esc(l.layer.as_str()),
            esc(l.layer.as_str()),
            esc(l.status.as_str()),
            crate::text::html_code_spans(&l.in_play)
        );
        if !l.gaps.is_empty() {
            out.push_str("<ul>");
            for g in &l.gaps {
                let _ = write!(
                    out,
                    "<li data-reason=\"{}\" data-blocking=\"{}\">{}</li>",
                    esc(g.reason.as_str()),
                    g.blocking,
                    crate::text::html_code_spans(&gap_text(g))
                );
            }
            out.push_str("</ul>");
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n</section>\n");
    out
}

/// The coverage as SARIF run-level notifications (`invocations[0].toolExecutionNotifications`, SARIF
/// 2.1.0 §3.20.21): one per gap, `error` for a gap that makes the audit partial when it is not
/// accepted, `warning` otherwise, with the layer in `properties`.
pub fn sarif_notifications(coverage: &Coverage) -> Vec<Value> {
    let mut out = Vec::new();
    for l in &coverage.layers {
        for g in &l.gaps {
            let level = if g.blocking && !coverage.accepted_partial {
                "error"
            } else {
                "warning"
            };
            out.push(json!({
                "descriptor": { "id": format!("coverage/{}", g.reason.as_str()) },
                "level": level,
                "message": {
                    "text": format!("{} layer {}: {}", l.layer.as_str(), l.status.as_str(), gap_text(g))
                },
                "properties": {
                    "layer": l.layer.as_str(),
                    "status": l.status,
                    "blocking": g.blocking,
                }
            }));
        }
    }
    out
}

/// The run's `properties` (SARIF 2.1.0 §3.8, a property bag): the whole coverage under
/// `gpu-trust/coverage`, so that a consumer can tell a partial run from the log alone.
pub fn sarif_properties(coverage: &Coverage) -> Value {
    json!({ "gpu-trust/coverage": coverage })
}
