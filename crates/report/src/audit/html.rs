//! The HTML report: one self-contained file (inline CSS, SVG and script; no request to any network, which
//! its Content-Security-Policy forbids), readable from a `file://` address and printable.
//!
//! Sections, in order, so that what matters comes before the drawings:
//!
//! 1. A summary band: tenants, nodes, GPUs, findings by severity, and one sentence with what matters
//!    most, computed from the report's groups and findings; then the verdict and what to fix first,
//!    when the report has them.
//! 2. Who can hurt whom: one tenant x tenant matrix (the report's [`Matrix`]), each cell coloured by the
//!    worst severity of the open findings that cover the pair, with the incidents as its detail.
//! 3. The findings, grouped by layer, with filters by tenant, layer and severity; accepted findings
//!    hidden until asked for.
//! 4. The pairs of the matrix, riskiest first: trust, worst severity, incidents.
//! 5. What tenants share: the report's groups, those with the most pairs first.
//! 6. Per GPU node, the physical GPUs drawn from the [`NodeLayout`] (identical GPUs of a node drawn
//!    once, nodes with the same layout and tenants drawn once): MIG instances as slices at their
//!    placement in memory slices (compute slices noted), time-sliced and MPS GPUs as one shared block
//!    with the replica count, tenants coloured and named.
//! 7. The documentation of every rule that fired, from the registry (the text `gpu-trust explain` prints).
//!
//! Code spans of messages and remediations (`` `kubectl taint ...` ``) are set as code, never shown
//! with their backticks. The page reads at a phone's width (390 px): every wide table scrolls in its
//! own box.
//!
//! Every text of the input is escaped. The page embeds, as JSON (with `<`, `>` and `&` written as
//! `\u003c`, `\u003e`, `\u0026`, so no `</script>` or `<!--` can occur in it), the report's summary and
//! tenants and the counts of what it should show, computed from the report and the layout; its script
//! counts what was drawn against them and writes the result into the hidden `#self-check` element,
//! with every script error and blocked request it saw. The same inputs give the same bytes.
//!
//! A large fleet stays a page a browser opens quickly: past fixed limits (the `MAX_*` constants) the
//! page shows the most telling part (the busiest nodes, the pairs that share a device, the tenants
//! with the widest blast radius, the first findings of each rule) and says how much more the JSON
//! report holds.

mod drawings;
mod findings;
mod fix_first;
mod markdown;
mod matrix;
mod plan;
mod summary;
mod text;

pub use plan::{drawn_nodes, gpu_runs, DrawnNode, Plan};
pub use summary::headline;
pub use text::{code_spans, escape, script_json};

use drawings::{gpu_layouts, slice_count, svg_defs};
use findings::{findings, rule_docs, skipped};
use matrix::{groups, matrix, pairs};
use plan::TenantIndex;
use summary::{findings_phrase, glance, summary_band};
use text::{more, names_text, plural, truncate};

use crate::{AuditReport, RuleDoc};
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_rules::layout::{
    holds_one, GpuLayout, MigInstanceLayout, NodeLayout, Occupant, Sharing,
};
use gpu_trust_rules::report::{
    Finding, GroupEntry, GroupLevel, Matrix, MatrixPair, SeverityCounts, Summary,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

const CSS: &str = include_str!("html/report.css");
const GUARD_JS: &str = include_str!("html/guard.js");
const REPORT_JS: &str = include_str!("html/report.js");

/// The page's Content-Security-Policy: nothing may be fetched; inline style and script only; images only
/// from `data:` addresses.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// Node sections drawn open; later ones start collapsed (a click, or printing, opens them).
const OPEN_NODES: usize = 24;

/// Node layouts drawn (nodes alike counted once); a larger fleet draws those with the most tenants (in
/// node order) and lists the others in a table, so that the page stays a size a browser opens quickly.
pub const MAX_DRAWN_NODES: usize = 200;

/// Findings shown per rule (open ones first, in the report's order); the others are counted, and the
/// JSON report has them all.
pub const MAX_FINDINGS_PER_RULE: usize = 100;

/// Objects listed per finding; the others are counted.
pub const MAX_OBJECTS: usize = 12;

/// Tenants and nodes named per finding; the others are counted.
pub const MAX_NAMES: usize = 20;

/// Pairs of tenants listed, riskiest first.
pub const MAX_PAIRS: usize = 500;

/// Groups (shared things) listed: the device groups first, then those with the most pairs.
pub const MAX_GROUPS: usize = 100;

/// Tenant bands drawn inside one GPU or instance; more are named in the caption only.
const MAX_BANDS: usize = 4;

/// Tenants named per GPU or instance in captions; the rest are counted.
const MAX_NAMED: usize = 8;

/// Tenant colours: light fills that keep dark text above 7:1 contrast.
const PALETTE: [&str; 12] = [
    "#93c5fd", "#fca5a5", "#86efac", "#fcd34d", "#c4b5fd", "#f9a8d4", "#5eead4", "#fdba74",
    "#a5b4fc", "#bef264", "#67e8f9", "#e9d5ff",
];

/// Width of one memory slice in the drawings, px.
const SLICE_W: u32 = 46;
const MARGIN: u32 = 8;

/// What the page embeds for its script: the report's schema, summary and tenants, and what the page
/// should show (computed from the report and the layout, not from the markup, so that the script's
/// self-check compares two independent counts).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageData<'a> {
    schema: &'a str,
    summary: &'a Summary,
    tenants: &'a [String],
    expect: Expect,
    /// Findings of the report the page does not show (beyond [`MAX_FINDINGS_PER_RULE`]).
    hidden_findings: usize,
    /// GPU nodes listed without a drawing (beyond [`MAX_DRAWN_NODES`]).
    listed_nodes: usize,
}

/// Counts of what the page shows; the script counts the same elements in the DOM.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Expect {
    pub findings: usize,
    pub accepted: usize,
    /// Findings shown that are not accepted, by severity.
    pub by_severity: SeverityCounts,
    pub matrix_cells: usize,
    /// Node sections drawn (one per layout; nodes alike share one).
    pub nodes: usize,
    /// GPU drawings (identical GPUs of a node share one).
    pub gpus: usize,
    pub mig_slices: usize,
    pub pairs: usize,
    pub groups: usize,
}

/// The report as one HTML document, GPU drawings included: the report's [`AuditReport::layout`], which
/// the audit builds from its own analysis when asked (`AuditOptions::layout`).
///
/// `rules` is the registry (every rule's documentation); only the rules that fired are documented on
/// the page.
pub fn render(report: &AuditReport, rules: &[RuleDoc<'_>]) -> String {
    let layout = report.layout.as_slice();
    let tenants = TenantIndex::new(report, layout);
    let plan = Plan::new(report);
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        escape(CONTENT_SECURITY_POLICY)
    );
    out.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<meta name=\"generator\" content=\"gpu-trust ({})\">",
        escape(report.schema)
    );
    let _ = writeln!(
        out,
        "<title>gpu-trust audit: {}</title>",
        escape(&findings_phrase(report))
    );
    let _ = writeln!(out, "<script>\n{GUARD_JS}</script>");
    let _ = writeln!(out, "<style>\n{CSS}</style>");
    out.push_str("</head>\n<body>\n");
    out.push_str("<a class=\"skip\" href=\"#findings\">Skip to the findings</a>\n");
    let slice_counts: BTreeSet<u32> = plan
        .drawn
        .iter()
        .map(|d| d.node)
        .filter(|n| n.gpus.iter().any(|g| g.sharing == Sharing::Mig))
        .map(slice_count)
        .collect();
    out.push_str(&svg_defs(&slice_counts));

    summary_band(&mut out, report);
    out.push_str(&crate::audit::coverage::html_banner(&report.coverage));
    fix_first::fix_first(&mut out, report);
    // Every section of the page, in its order, named as its heading is.
    out.push_str("<nav class=\"toc\" aria-label=\"Sections\">");
    if crate::audit::fix_first::block(report).is_some() {
        out.push_str("<a href=\"#fix-first\">Fix first</a>");
    }
    out.push_str(
        "<a href=\"#glance\">Tenants and node pools</a><a href=\"#matrix\">Who can hurt whom</a><a href=\"#findings\">Findings</a>\
         <a href=\"#pairs\">Tenant pairs</a><a href=\"#groups\">What tenants share</a>\
         <a href=\"#gpus\">GPU layouts</a><a href=\"#rules\">Rules</a>\
         <a href=\"#coverage\">Coverage</a></nav>\n",
    );
    out.push_str("<main>\n");
    glance(&mut out, report, &tenants);
    matrix(&mut out, &report.matrix, &plan, &tenants);
    findings(&mut out, report, &plan, &tenants, rules);
    pairs(&mut out, report, &plan, &tenants);
    groups(&mut out, report, &plan, &tenants);
    gpu_layouts(&mut out, &plan.drawn, &plan.listed, &tenants);
    rule_docs(&mut out, report, rules);
    skipped(&mut out, report);
    out.push_str(&crate::audit::coverage::html_section(&report.coverage));
    out.push_str("</main>\n");
    let _ = writeln!(
        out,
        "<footer>Written by gpu-trust; data format <code>{}</code>; {}. This page loads nothing from \
         any network.</footer>",
        escape(report.schema),
        crate::text::html_code_spans(&report.advisory_data.line())
    );
    out.push_str("<pre id=\"self-check\" hidden data-ok=\"pending\"></pre>\n");
    let data = PageData {
        schema: report.schema,
        summary: &report.summary,
        tenants: &tenants.names,
        expect: plan.expect(),
        hidden_findings: plan.hidden.values().sum(),
        listed_nodes: plan.listed.len(),
    };
    // Serialising these types cannot fail (string keys, integers only); were it to, the page's
    // self-check reports the missing data instead of the page failing to render.
    let json = serde_json::to_string(&data).unwrap_or_else(|_| "null".to_string());
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"gpu-trust-data\">{}</script>",
        script_json(&json)
    );
    let _ = writeln!(out, "<script>\n{REPORT_JS}</script>");
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::drawings::*;
    use super::summary::*;
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn script_json_cannot_close_the_script() {
        let json = serde_json::to_string(&"</script><!-- & \u{2028}").unwrap();
        let safe = script_json(&json);
        assert!(!safe.contains("</script"));
        assert!(!safe.contains("<!--"));
        let back: String = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, "</script><!-- & \u{2028}");
    }

    #[test]
    fn code_spans_lose_their_backticks() {
        assert_eq!(
            code_spans("run `kubectl taint` on <node>"),
            "run <code>kubectl taint</code> on &lt;node&gt;"
        );
        assert_eq!(code_spans("a `b` c `d"), "a <code>b</code> c `d");
        assert_eq!(code_spans("no code"), "no code");
        assert_eq!(code_spans("`<x>`"), "<code>&lt;x&gt;</code>");
    }

    #[test]
    fn share_phrases_read_as_english() {
        assert_eq!(share_phrase("memory-pool"), "a memory pool");
        assert_eq!(share_phrase("fault-domain"), "a fault domain");
        assert_eq!(share_phrase("gpu"), "a GPU");
        assert_eq!(share_phrase("host"), "a node");
    }

    /// WCAG 2 relative luminance of `#rrggbb`.
    fn luminance(hex: &str) -> f64 {
        let channel = |i: usize| {
            let v = f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
    }

    fn contrast(a: &str, b: &str) -> f64 {
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn tenant_colours_keep_text_readable() {
        for c in PALETTE {
            assert!(
                contrast(c, "#1a1a1a") >= 7.0,
                "{c}: {}",
                contrast(c, "#1a1a1a")
            );
        }
        // The certainty and severity fills of the style sheet, with the text colour used on each.
        for (fill, text) in [
            ("#9f1239", "#ffffff"),
            ("#f59e0b", "#1a1a1a"),
            ("#fde68a", "#1a1a1a"),
            ("#7f1d1d", "#ffffff"),
            ("#b42318", "#ffffff"),
            ("#fcd34d", "#1a1a1a"),
            ("#bfdbfe", "#1a1a1a"),
            ("#4a4a4a", "#ffffff"),
        ] {
            assert!(CSS.contains(fill), "{fill} is not in the style sheet");
            assert!(
                contrast(fill, text) >= 4.5,
                "{fill}/{text}: {}",
                contrast(fill, text)
            );
        }
    }

    #[test]
    fn gib_rounds_to_a_tenth() {
        assert_eq!(gib(9984), "9.8 GiB");
        assert_eq!(gib(81559), "79.6 GiB");
        assert_eq!(gib(0), "0.0 GiB");
    }
}
