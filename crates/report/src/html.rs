//! The HTML report: one self-contained file (inline CSS, SVG and script; no request to any network, which
//! its Content-Security-Policy forbids), readable from a `file://` address and printable.
//!
//! Sections, in order:
//!
//! 1. A summary band: tenants, nodes, GPUs, findings by severity, and one sentence with what matters
//!    most, computed from the report's pairs and findings.
//! 2. The blast radius as a tenant x tenant matrix, one per incident, with a switch; cells coloured (and
//!    marked with a symbol) by certainty.
//! 3. The pairs of tenants: trust, what they share, what separates them.
//! 4. Per GPU node, one drawing per physical GPU from the [`NodeLayout`]: MIG instances as slices at
//!    their placement in memory slices (compute slices noted), time-sliced and MPS GPUs as one shared
//!    block with the replica count, tenants coloured and named.
//! 5. The findings, grouped by layer, with filters by tenant, layer and severity.
//! 6. The documentation of every rule that fired, from the registry (the text `gpu-trust explain` prints).
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

mod markdown;

use crate::{AuditReport, RuleDoc};
use gpu_trust_model::{Certainty, Incident, Layer, Severity};
use gpu_trust_rules::layout::{GpuLayout, MigInstanceLayout, NodeLayout, Occupant, Sharing};
use gpu_trust_rules::report::{BlastRadiusEntry, Finding, PairEntry, SeverityCounts, Summary};
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

/// Nodes drawn GPU by GPU; a larger fleet draws the nodes with the most tenants (in node order) and
/// lists the others in a table, so that the page stays a size a browser opens quickly.
pub const MAX_DRAWN_NODES: usize = 200;

/// Findings shown per rule (open ones first, in the report's order); the others are counted, and the
/// JSON report has them all.
pub const MAX_FINDINGS_PER_RULE: usize = 100;

/// Objects listed per finding; the others are counted.
pub const MAX_OBJECTS: usize = 12;

/// Tenants and nodes named per finding; the others are counted.
pub const MAX_NAMES: usize = 20;

/// Pairs of tenants listed: those that share a device first (memory pool, then GPU), then by
/// certainty, then in the report's order.
pub const MAX_PAIRS: usize = 500;

/// Tenants on the axes of the blast-radius matrix: beyond it, those whose incidents reach the most
/// tenants (ties by the report's order).
pub const MAX_MATRIX_TENANTS: usize = 60;

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

/// HTML-escapes text for element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON made safe to sit inside a `<script>` element: `<`, `>` and `&` (and the two line separators
/// JavaScript once treated as line ends) as `\u` escapes, which JSON reads back unchanged.
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            _ => out.push(c),
        }
    }
    out
}

/// What the page embeds for its script: the report's schema, summary and tenants, what the page should
/// show (computed from the report and the layout, not from the markup, so that the script's self-check
/// compares two independent counts), and the incidents of the matrix switch.
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
    incidents: &'a [Incident],
}

/// Counts of what the page shows; the script counts the same elements in the DOM.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Expect {
    pub findings: usize,
    pub accepted: usize,
    /// Findings shown that are not accepted, by severity.
    pub by_severity: SeverityCounts,
    pub matrices: usize,
    pub matrix_cells: usize,
    pub nodes: usize,
    pub gpus: usize,
    pub mig_slices: usize,
    pub pairs: usize,
}

/// What the page shows of a report and a layout.
pub struct Plan<'a> {
    /// Findings shown, in the report's order.
    pub findings: Vec<&'a Finding>,
    /// Findings not shown, per rule.
    pub hidden: BTreeMap<&'a str, usize>,
    /// Tenants on the matrix axes (names), in the page's tenant order.
    pub matrix_tenants: Vec<String>,
    pub drawn: Vec<&'a NodeLayout>,
    pub listed: Vec<&'a NodeLayout>,
    /// Pairs listed (at most [`MAX_PAIRS`]), in the report's order.
    pub pairs: Vec<&'a PairEntry>,
}

impl<'a> Plan<'a> {
    pub fn new(report: &'a AuditReport, layout: &'a [NodeLayout]) -> Plan<'a> {
        let tenants = TenantIndex::new(report, layout);
        Plan::with_tenants(report, layout, &tenants)
    }

    fn with_tenants(
        report: &'a AuditReport,
        layout: &'a [NodeLayout],
        tenants: &TenantIndex,
    ) -> Plan<'a> {
        // Per rule: open findings first, then accepted ones, up to the cap; shown in report order.
        let mut per_rule: BTreeMap<&str, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
        for (i, f) in report.findings.iter().enumerate() {
            let e = per_rule.entry(f.rule.as_str()).or_default();
            if f.accepted.is_none() {
                e.0.push(i);
            } else {
                e.1.push(i);
            }
        }
        let mut shown: BTreeSet<usize> = BTreeSet::new();
        let mut hidden: BTreeMap<&str, usize> = BTreeMap::new();
        for (rule, (open, accepted)) in per_rule {
            let all: Vec<usize> = open.into_iter().chain(accepted).collect();
            if all.len() > MAX_FINDINGS_PER_RULE {
                hidden.insert(rule, all.len() - MAX_FINDINGS_PER_RULE);
            }
            shown.extend(all.into_iter().take(MAX_FINDINGS_PER_RULE));
        }
        let findings = shown.into_iter().map(|i| &report.findings[i]).collect();

        let matrix_tenants = if tenants.names.len() <= MAX_MATRIX_TENANTS {
            tenants.names.clone()
        } else {
            let mut reach: BTreeMap<&str, usize> = BTreeMap::new();
            for b in &report.blast_radius {
                *reach.entry(b.tenant.as_str()).or_default() += b.reaches.len();
            }
            let mut order: Vec<usize> = (0..tenants.names.len()).collect();
            order.sort_by_key(|i| {
                (
                    std::cmp::Reverse(reach.get(tenants.names[*i].as_str()).copied().unwrap_or(0)),
                    *i,
                )
            });
            let mut chosen: Vec<usize> = order.into_iter().take(MAX_MATRIX_TENANTS).collect();
            chosen.sort_unstable();
            chosen
                .into_iter()
                .map(|i| tenants.names[i].clone())
                .collect()
        };
        let (drawn, listed) = drawn_nodes(layout);
        let pairs = if report.pairs.len() <= MAX_PAIRS {
            report.pairs.iter().collect()
        } else {
            let rank = |p: &PairEntry| {
                let has = |s: &str| p.shares.iter().any(|x| x == s);
                (
                    !has("memory-pool"),
                    !has("gpu"),
                    p.certainty.unwrap_or(Certainty::Permitted),
                    p.certainty.is_none(),
                )
            };
            let mut order: Vec<usize> = (0..report.pairs.len()).collect();
            order.sort_by_key(|i| (rank(&report.pairs[*i]), *i));
            let mut chosen: Vec<usize> = order.into_iter().take(MAX_PAIRS).collect();
            chosen.sort_unstable();
            chosen.into_iter().map(|i| &report.pairs[i]).collect()
        };
        Plan {
            findings,
            hidden,
            matrix_tenants,
            drawn,
            listed,
            pairs,
        }
    }

    /// The counts the page's self-check expects.
    pub fn expect(&self) -> Expect {
        let mut by_severity = SeverityCounts::default();
        for f in self.findings.iter().filter(|f| f.accepted.is_none()) {
            by_severity.add(f.severity);
        }
        let n = self.matrix_tenants.len();
        Expect {
            findings: self.findings.len(),
            accepted: self
                .findings
                .iter()
                .filter(|f| f.accepted.is_some())
                .count(),
            by_severity,
            matrices: Incident::ALL.len(),
            matrix_cells: Incident::ALL.len() * n * n,
            nodes: self.drawn.len(),
            gpus: self.drawn.iter().map(|n| n.gpus.len()).sum(),
            mig_slices: self
                .drawn
                .iter()
                .flat_map(|n| &n.gpus)
                .map(|g| g.instances.len())
                .sum(),
            pairs: self.pairs.len(),
        }
    }
}

/// The nodes to draw (at most [`MAX_DRAWN_NODES`]: those with the most tenants, ties by node order)
/// and the others, both in node order.
pub fn drawn_nodes(layout: &[NodeLayout]) -> (Vec<&NodeLayout>, Vec<&NodeLayout>) {
    if layout.len() <= MAX_DRAWN_NODES {
        return (layout.iter().collect(), Vec::new());
    }
    let mut order: Vec<usize> = (0..layout.len()).collect();
    order.sort_by_key(|i| (std::cmp::Reverse(layout[*i].tenants.len()), *i));
    let chosen: BTreeSet<usize> = order.into_iter().take(MAX_DRAWN_NODES).collect();
    let mut drawn = Vec::with_capacity(MAX_DRAWN_NODES);
    let mut listed = Vec::with_capacity(layout.len() - MAX_DRAWN_NODES);
    for (i, node) in layout.iter().enumerate() {
        if chosen.contains(&i) {
            drawn.push(node);
        } else {
            listed.push(node);
        }
    }
    (drawn, listed)
}

/// The report as one HTML document.
///
/// `rules` is the registry (every rule's documentation); only the rules that fired are documented on
/// the page.
pub fn render(report: &AuditReport, layout: &[NodeLayout], rules: &[RuleDoc<'_>]) -> String {
    let tenants = TenantIndex::new(report, layout);
    let plan = Plan::with_tenants(report, layout, &tenants);
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
        .filter(|n| n.gpus.iter().any(|g| g.sharing == Sharing::Mig))
        .map(|n| slice_count(n))
        .collect();
    out.push_str(&svg_defs(&slice_counts));

    summary_band(&mut out, report);
    out.push_str(&crate::coverage::html_banner(&report.coverage));
    out.push_str(
        "<nav class=\"toc\" aria-label=\"Sections\"><a href=\"#blast-radius\">Blast radius</a>\
         <a href=\"#pairs\">Tenant pairs</a><a href=\"#gpus\">GPU layouts</a>\
         <a href=\"#findings\">Findings</a><a href=\"#rules\">Rules</a></nav>\n",
    );
    out.push_str("<main>\n");
    blast_radius(&mut out, report, &tenants, &plan.matrix_tenants);
    pairs(&mut out, report, &plan, &tenants);
    gpu_layouts(&mut out, &plan.drawn, &plan.listed, &tenants);
    findings(&mut out, report, &plan, &tenants, rules);
    rule_docs(&mut out, report, rules);
    skipped(&mut out, report);
    out.push_str(&crate::coverage::html_section(&report.coverage));
    out.push_str("</main>\n");
    let _ = writeln!(
        out,
        "<footer>Written by gpu-trust; data format <code>{}</code>. This page loads nothing from any \
         network.</footer>",
        escape(report.schema)
    );
    out.push_str("<pre id=\"self-check\" hidden data-ok=\"pending\"></pre>\n");
    let data = PageData {
        schema: report.schema,
        summary: &report.summary,
        tenants: &tenants.names,
        expect: plan.expect(),
        hidden_findings: plan.hidden.values().sum(),
        listed_nodes: plan.listed.len(),
        incidents: &Incident::ALL,
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

/// Every tenant the page names, in the report's order, then any other name in sorted order; each gets
/// an id (`t0`, `t1`...) for the filters and a colour.
struct TenantIndex {
    names: Vec<String>,
    ids: BTreeMap<String, usize>,
}

impl TenantIndex {
    fn new(report: &AuditReport, layout: &[NodeLayout]) -> TenantIndex {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut names: Vec<String> = Vec::new();
        for t in &report.tenants {
            if seen.insert(&t.name) {
                names.push(t.name.clone());
            }
        }
        let mut extra: BTreeSet<&str> = BTreeSet::new();
        for b in &report.blast_radius {
            extra.insert(&b.tenant);
            extra.extend(b.reaches.iter().map(String::as_str));
        }
        for p in &report.pairs {
            extra.extend(p.tenants.iter().map(String::as_str));
        }
        for f in &report.findings {
            extra.extend(f.tenants.iter().map(String::as_str));
        }
        for node in layout {
            extra.extend(node.tenants.iter().map(|t| t.tenant.as_str()));
            for g in &node.gpus {
                extra.extend(g.tenants.iter().map(|o| o.tenant.as_str()));
                for i in &g.instances {
                    extra.extend(i.tenants.iter().map(|o| o.tenant.as_str()));
                }
            }
        }
        for n in extra {
            if seen.insert(n) {
                names.push(n.to_string());
            }
        }
        let ids = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        TenantIndex { names, ids }
    }

    fn id(&self, name: &str) -> String {
        match self.ids.get(name) {
            Some(i) => format!("t{i}"),
            None => String::new(),
        }
    }

    fn colour(&self, name: &str) -> &'static str {
        let i = self.ids.get(name).copied().unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    }

    fn ids_of<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> String {
        let set: BTreeSet<usize> = names
            .into_iter()
            .filter_map(|n| self.ids.get(n).copied())
            .collect();
        set.iter()
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `3 more tenants`, `1 more tenant`.
fn more(n: usize, one: &str, many: &str) -> String {
    format!("{n} more {}", if n == 1 { one } else { many })
}

/// The first [`MAX_NAMES`] names, joined, and how many more there are.
fn names_text(names: &[String], one: &str, many: &str) -> String {
    let mut s = names
        .iter()
        .take(MAX_NAMES)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > MAX_NAMES {
        let _ = write!(s, " and {}", more(names.len() - MAX_NAMES, one, many));
    }
    s
}

fn findings_phrase(report: &AuditReport) -> String {
    let open = report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none())
        .count();
    let mut s = plural(open, "finding", "findings");
    if report.summary.accepted > 0 {
        let _ = write!(s, ", {} accepted", report.summary.accepted);
    }
    s
}

/// How a pair's `shares` word reads in a sentence (`memory-pool` -> `a memory pool`).
fn share_phrase(share: &str) -> String {
    match share {
        "gpu" => "a GPU".to_string(),
        "host" => "a node".to_string(),
        "control-plane" => "the API server".to_string(),
        "mig-gpu" => "a MIG-partitioned GPU".to_string(),
        other => {
            let words = other.replace('-', " ");
            let article = if words.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {words}")
        }
    }
}

/// The sentence that matters: how many pairs of tenants share a memory pool (or, when none does, the
/// closest thing they share), and which contracts the findings say are not kept.
pub fn headline(report: &AuditReport) -> String {
    let mut parts: Vec<String> = Vec::new();
    let count = |share: &str| {
        report
            .pairs
            .iter()
            .filter(|p| p.shares.iter().any(|s| s == share))
            .count()
    };
    let pool = count("memory-pool");
    if pool > 0 {
        parts.push(pairs_share(pool, "memory-pool"));
    } else {
        let mut said = false;
        for share in ["gpu", "host"] {
            let n = count(share);
            if n > 0 {
                parts.push(format!(
                    "no tenant pair shares a memory pool, but {}",
                    pairs_share(n, share)
                ));
                said = true;
                break;
            }
        }
        if !said {
            parts.push("no tenant pair shares a memory pool or a node".to_string());
        }
    }
    // Broken contracts: open findings of the contract layer at high or above, per rule (a finding
    // names the tenants involved, not which of them holds the contract, so findings are counted).
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for f in report.findings.iter().filter(|f| {
        f.layer == Layer::Contract && f.severity >= Severity::High && f.accepted.is_none()
    }) {
        *by_rule.entry(f.name.as_str()).or_default() += 1;
    }
    if !by_rule.is_empty() {
        let rules: Vec<String> = by_rule
            .iter()
            .map(|(name, n)| {
                format!(
                    "{} ({})",
                    name.replace('-', " "),
                    plural(*n, "finding", "findings")
                )
            })
            .collect();
        parts.push(format!("contracts not kept: {}", rules.join(", ")));
    }
    if !report.skipped.is_empty() {
        parts.push(format!(
            "{} not audited, so this covers part of the input only",
            plural(
                report.skipped.len(),
                "input document was",
                "input documents were"
            )
        ));
    }
    let mut s = parts.join("; ");
    if let Some(first) = s.get(..1) {
        let upper = first.to_ascii_uppercase();
        s.replace_range(..1, &upper);
    }
    s.push('.');
    s
}

fn pairs_share(n: usize, share: &str) -> String {
    format!(
        "{} {}",
        plural(n, "tenant pair", "tenant pairs"),
        if n == 1 {
            format!("shares {}", share_phrase(share))
        } else {
            format!("share {}", share_phrase(share))
        }
    )
}

fn summary_band(out: &mut String, report: &AuditReport) {
    let s = &report.summary;
    out.push_str("<header class=\"band\" id=\"summary\">\n<h1>GPU tenant isolation audit</h1>\n");
    let _ = writeln!(
        out,
        "<p class=\"sentence\" id=\"headline\">{}</p>",
        escape(&headline(report))
    );
    if !report.skipped.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"partial\"><a href=\"#skipped\">{} skipped</a>: partial input.</p>",
            plural(report.skipped.len(), "document", "documents")
        );
    }
    out.push_str("<dl class=\"stats\">\n");
    let stat = |out: &mut String, class: &str, label: &str, value: usize| {
        let _ = writeln!(
            out,
            "<div class=\"{}\" data-stat=\"{}\"><dt>{}</dt><dd>{value}</dd></div>",
            format!("stat {class}").trim_end(),
            escape(label),
            escape(label)
        );
    };
    stat(out, "", "Tenants", s.tenants);
    stat(out, "", "Nodes", s.nodes);
    stat(out, "", "GPUs", s.gpus);
    for sev in Severity::ALL {
        stat(
            out,
            &format!("sev-{sev}"),
            sev.as_str(),
            s.findings.get(sev),
        );
    }
    stat(out, "accepted", "accepted", s.accepted);
    out.push_str("</dl>\n</header>\n");
}

fn certainty_symbol(c: Certainty) -> &'static str {
    match c {
        Certainty::Observed => "●",
        Certainty::Possible => "◐",
        Certainty::Permitted => "○",
    }
}

fn certainty_legend(out: &mut String) {
    out.push_str("<ul class=\"legend\" aria-label=\"Certainty\">\n");
    for c in [
        Certainty::Observed,
        Certainty::Possible,
        Certainty::Permitted,
    ] {
        let _ = writeln!(
            out,
            "<li><span class=\"swatch c-{c}\" aria-hidden=\"true\">{}</span>{c}</li>",
            certainty_symbol(c)
        );
    }
    out.push_str(
        "<li><span class=\"swatch c-none\" aria-hidden=\"true\">·</span>not reached</li>\n",
    );
    out.push_str("</ul>\n");
}

fn blast_radius(out: &mut String, report: &AuditReport, tenants: &TenantIndex, axis: &[String]) {
    out.push_str("<section id=\"blast-radius\" aria-labelledby=\"h-blast\">\n<h2 id=\"h-blast\">Blast radius</h2>\n");
    out.push_str(
        "<p>Row: the tenant that sets off the incident. Column: the tenant it reaches, coloured by how \
         sure the audit is of the co-location behind it.</p>\n",
    );
    let mut index: BTreeMap<(&str, Incident), &BlastRadiusEntry> = BTreeMap::new();
    for b in &report.blast_radius {
        index.insert((b.tenant.as_str(), b.incident), b);
    }
    let reached = |incident: Incident| -> usize {
        report
            .blast_radius
            .iter()
            .filter(|b| b.incident == incident)
            .map(|b| b.reaches.iter().filter(|r| **r != b.tenant).count())
            .sum()
    };
    out.push_str("<fieldset class=\"incident-switch\">\n<legend>Incident</legend>\n");
    for (i, incident) in Incident::ALL.into_iter().enumerate() {
        let _ = writeln!(
            out,
            "<label><input type=\"radio\" name=\"incident\" value=\"{incident}\"{}> {incident} \
             <span class=\"n\">({})</span></label>",
            if i == 0 { " checked" } else { "" },
            plural(reached(incident), "tenant reached", "tenants reached")
        );
    }
    out.push_str("</fieldset>\n");
    certainty_legend(out);
    if axis.len() < tenants.names.len() {
        let _ = writeln!(
            out,
            "<p>The {} tenants whose incidents reach the most others are shown; the JSON report has the \
             blast radius of all {}.</p>",
            axis.len(),
            tenants.names.len()
        );
    }
    out.push_str("<div class=\"matrix-wrap\">\n");
    for (i, incident) in Incident::ALL.into_iter().enumerate() {
        let _ = writeln!(
            out,
            "<table class=\"matrix\" data-incident=\"{incident}\"{}>",
            if i == 0 { "" } else { " hidden" }
        );
        let _ = writeln!(out, "<caption>{incident}</caption>");
        out.push_str(
            "<thead><tr><th scope=\"col\"><span class=\"visually-hidden\">from \\ to</span></th>",
        );
        for name in axis {
            let _ = write!(
                out,
                "<th scope=\"col\" data-col=\"{}\">{}</th>",
                tenants.id(name),
                escape(name)
            );
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for from in axis {
            let _ = write!(
                out,
                "<tr><th scope=\"row\" data-row=\"{}\">{}</th>",
                tenants.id(from),
                escape(from)
            );
            let entry = index.get(&(from.as_str(), incident));
            for to in axis {
                // The cell's name is the certainty in words; its title adds the two tenants.
                let (class, symbol, word) = if from == to {
                    ("c-self", "–", "same tenant")
                } else {
                    match entry.filter(|e| e.reaches.iter().any(|r| r == to)) {
                        Some(e) => match e.certainty.get(to.as_str()) {
                            Some(c) => (
                                match c {
                                    Certainty::Observed => "c-observed",
                                    Certainty::Possible => "c-possible",
                                    Certainty::Permitted => "c-permitted",
                                },
                                certainty_symbol(*c),
                                c.as_str(),
                            ),
                            None => ("c-observed", "●", "reached"),
                        },
                        None => ("c-none", "·", "not reached"),
                    }
                };
                let label = if from == to {
                    format!("{from}: the same tenant")
                } else {
                    format!("{from} → {to}: {word}")
                };
                let _ = write!(
                    out,
                    "<td class=\"cell {class}\" title=\"{}\" aria-label=\"{word}\">{symbol}</td>",
                    escape(&label)
                );
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</div>\n</section>\n");
}

fn pairs(out: &mut String, report: &AuditReport, plan: &Plan<'_>, tenants: &TenantIndex) {
    out.push_str("<section id=\"pairs\" aria-labelledby=\"h-pairs\">\n<h2 id=\"h-pairs\">Tenant pairs</h2>\n");
    if report.pairs.is_empty() {
        out.push_str("<p>No two tenants share anything the audit can see.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<table class=\"grid\"><thead><tr><th scope=\"col\">Tenants</th><th scope=\"col\">Trust</th>\
         <th scope=\"col\">Shares</th><th scope=\"col\">Separated by</th><th scope=\"col\">Certainty</th>\
         </tr></thead>\n<tbody>\n",
    );
    for p in &plan.pairs {
        let join = |items: &[String]| {
            if items.is_empty() {
                "nothing".to_string()
            } else {
                escape(&items.join(", "))
            }
        };
        let certainty = match p.certainty {
            Some(c) => format!("<span class=\"badge cert-{c}\">{c}</span>"),
            None => "–".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"pair\" data-tenants=\"{}\"><td>{} ↔ {}</td><td><span class=\"badge trust\">{}</span></td>\
             <td>{}</td><td>{}</td><td>{certainty}</td></tr>",
            tenants.ids_of(p.tenants.iter().map(String::as_str)),
            escape(&p.tenants[0]),
            escape(&p.tenants[1]),
            p.trust,
            join(&p.shares),
            join(&p.separated_by)
        );
    }
    out.push_str("</tbody></table>\n");
    if plan.pairs.len() < report.pairs.len() {
        let _ = writeln!(
            out,
            "<p>{} of {} pairs listed: those that share a device first; the JSON report has them all.</p>",
            plan.pairs.len(),
            report.pairs.len()
        );
    }
    out.push_str("</section>\n");
}

/// What every drawing shares, defined once: the hatch pattern free instances are filled with, and a
/// memory-slice ruler per slice count in use (`<use>` refers to them within the page).
fn svg_defs(slice_counts: &BTreeSet<u32>) -> String {
    let mut out = String::from(
        "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\" focusable=\"false\">\
         <defs><pattern id=\"gt-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f3f4f6\"/>\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9ca3af\" stroke-width=\"2\"/></pattern>",
    );
    for slices in slice_counts {
        let _ = write!(out, "<g id=\"gt-ruler-{slices}\">");
        for k in 0..*slices {
            let x = MARGIN + k * SLICE_W;
            let _ = write!(
                out,
                "<rect x=\"{x}\" y=\"4\" width=\"{SLICE_W}\" height=\"14\" fill=\"#e5e7eb\" stroke=\"#9ca3af\"/>\
                 <text x=\"{}\" y=\"14\" text-anchor=\"middle\" font-size=\"9\" fill=\"#4a4a4a\">{k}</text>",
                x + SLICE_W / 2
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</defs></svg>\n");
    out
}

/// Memory slices drawn for a GPU of `node` (8 when the model's geometry is unknown).
fn slice_count(node: &NodeLayout) -> u32 {
    u32::from(node.memory_slices.unwrap_or(8).max(1))
}

fn gib(mib: u64) -> String {
    let tenths = (mib * 10 + 512) / 1024;
    format!("{}.{} GiB", tenths / 10, tenths % 10)
}

fn sharing_text(sharing: Sharing) -> String {
    match sharing {
        Sharing::Exclusive => "exclusive".to_string(),
        Sharing::TimeSlicing { replicas } => format!("time-slicing, {replicas} replicas"),
        Sharing::Mps { replicas } => format!("MPS, {replicas} clients"),
        Sharing::Mig => "MIG".to_string(),
    }
}

fn node_summary(node: &NodeLayout) -> String {
    let model = node
        .model_name
        .as_deref()
        .or(node.model.as_deref())
        .or(node.product.as_deref())
        .unwrap_or("unknown GPU model");
    let mut s = format!("{} × {model}", node.gpus.len());
    let mut modes: BTreeSet<String> = BTreeSet::new();
    for g in &node.gpus {
        modes.insert(sharing_text(g.sharing));
    }
    if !modes.is_empty() {
        let _ = write!(s, " · {}", modes.into_iter().collect::<Vec<_>>().join(", "));
    }
    if node.hami {
        s.push_str(" · HAMi");
    }
    let _ = write!(s, " · {}", plural(node.tenants.len(), "tenant", "tenants"));
    s
}

fn gpu_layouts(
    out: &mut String,
    layout: &[&NodeLayout],
    listed: &[&NodeLayout],
    tenants: &TenantIndex,
) {
    out.push_str(
        "<section id=\"gpus\" aria-labelledby=\"h-gpus\">\n<h2 id=\"h-gpus\">GPU layouts</h2>\n",
    );
    if layout.is_empty() {
        out.push_str("<p>The input has no GPU node.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<p>Each GPU drawn across its memory slices. MIG instances sit at their placement; a time-sliced \
         or MPS GPU is one shared block. Tenants are coloured and named; a solid outline is observed, \
         dashed possible, dotted permitted.</p>\n",
    );
    if !listed.is_empty() {
        let _ = writeln!(
            out,
            "<p>The {} nodes with the most tenants are drawn; <a href=\"#listed-nodes\">the other {}</a> \
             are listed after them.</p>",
            layout.len(),
            listed.len()
        );
    }
    out.push_str("<ul class=\"tenants-legend\" aria-label=\"Tenant colours\">\n");
    for name in &tenants.names {
        let _ = writeln!(
            out,
            "<li data-tenant=\"{}\"><span class=\"tenant-key\" style=\"background:{}\" aria-hidden=\"true\"></span>{}</li>",
            tenants.id(name),
            tenants.colour(name),
            escape(name)
        );
    }
    out.push_str("</ul>\n");
    for (n, node) in layout.iter().enumerate() {
        let ids = tenants.ids_of(node.tenants.iter().map(|t| t.tenant.as_str()));
        let _ = writeln!(
            out,
            "<details class=\"node\" id=\"node-{n}\" data-node=\"{}\" data-tenants=\"{ids}\"{}>",
            escape(&node.name),
            if n < OPEN_NODES { " open" } else { "" }
        );
        let _ = writeln!(
            out,
            "<summary><h3>{}</h3><span class=\"meta\">{}</span></summary>",
            escape(&node.name),
            escape(&node_summary(node))
        );
        let place = if node.line > 0 {
            format!("{}:{}", node.file, node.line)
        } else {
            node.file.clone()
        };
        let _ = write!(
            out,
            "<p class=\"meta\">Node object <code>{}</code>",
            escape(&place)
        );
        if let Some(mib) = node.memory_mib {
            let _ = write!(out, "; {} per GPU", gib(mib));
        }
        out.push_str(".</p>\n<div class=\"gpus\">\n");
        // Consecutive GPUs with the same tenants get the list once.
        let mut listed_at: Option<&GpuLayout> = None;
        for (g, gpu) in node.gpus.iter().enumerate() {
            let same = listed_at.filter(|l| same_occupancy(l, gpu));
            gpu_figure(out, node, n, g, gpu, same.map(|l| l.index), tenants);
            if same.is_none() {
                listed_at = Some(gpu);
            }
        }
        out.push_str("</div>\n");
        if !node.tenants.is_empty() {
            let _ = writeln!(
                out,
                "<p>On this node (sharing its kernel, driver, toolkit and runtime): {}.</p>",
                escape(&presence_text(node))
            );
        }
        out.push_str("</details>\n");
    }
    if !listed.is_empty() {
        let _ = writeln!(
            out,
            "<h3 id=\"listed-nodes\">{} more, not drawn</h3>\n<table class=\"grid\"><thead><tr>\
             <th scope=\"col\">Node</th><th scope=\"col\">GPUs</th><th scope=\"col\">Tenants</th></tr></thead>\n<tbody>",
            plural(listed.len(), "GPU node", "GPU nodes")
        );
        for node in listed {
            let ids = tenants.ids_of(node.tenants.iter().map(|t| t.tenant.as_str()));
            let _ = writeln!(
                out,
                "<tr class=\"listed-node\" data-tenants=\"{ids}\"><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&node.name),
                escape(&node_summary(node)),
                escape(&presence_text(node))
            );
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("</section>\n");
}

/// The tenants on a node with their certainty, the first [`MAX_NAMED`] * 3 by name.
fn presence_text(node: &NodeLayout) -> String {
    let limit = MAX_NAMED * 3;
    let mut list: Vec<String> = node
        .tenants
        .iter()
        .take(limit)
        .map(|t| format!("{} ({})", t.tenant, t.certainty))
        .collect();
    if node.tenants.len() > limit {
        list.push(format!("and {} more", node.tenants.len() - limit));
    }
    list.join(", ")
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else if max <= 1 {
        "…".to_string()
    } else {
        let mut s: String = text.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// Tenant bands filling a box from `x`, `y`, `w` x `h`: one column per tenant, the first few only.
fn bands(
    out: &mut String,
    occupants: &[Occupant],
    x: u32,
    y: u32,
    w: u32,
    h: u32,
    tenants: &TenantIndex,
) {
    if occupants.is_empty() {
        let _ = write!(
            out,
            "<rect class=\"empty\" x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{h}\"/>",
            x + 1,
            w.saturating_sub(2)
        );
        if w >= 40 {
            let _ = write!(
                out,
                "<text class=\"band-text\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">free</text>",
                x + w / 2,
                y + h / 2 + 4
            );
        }
        return;
    }
    let shown = occupants.len().min(MAX_BANDS);
    let each = (w / shown as u32).max(1);
    for (k, o) in occupants.iter().take(shown).enumerate() {
        let bx = x + each * k as u32;
        let bw = if k + 1 == shown { x + w - bx } else { each };
        let _ = write!(
            out,
            "<g data-tenant=\"{}\"><rect class=\"band-rect cert-{}\" x=\"{bx}\" y=\"{y}\" width=\"{bw}\" height=\"{h}\" fill=\"{}\"><title>{}</title></rect>",
            tenants.id(&o.tenant),
            o.certainty,
            tenants.colour(&o.tenant),
            escape(&format!("{} ({})", o.tenant, o.certainty))
        );
        let chars = (bw.saturating_sub(4) / 6) as usize;
        if chars >= 2 {
            let _ = write!(
                out,
                "<text class=\"band-text\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                bx + bw / 2,
                y + h / 2 + 4,
                escape(&truncate(&o.tenant, chars))
            );
        }
        out.push_str("</g>");
    }
    if occupants.len() > shown {
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{}\" y=\"{}\" text-anchor=\"end\">+{}</text>",
            x + w - 3,
            y + h - 3,
            occupants.len() - shown
        );
    }
}

fn instance_title(i: &MigInstanceLayout, compute_total: Option<u8>) -> String {
    let mut s = instance_text(i, compute_total);
    if i.tenants.is_empty() {
        s.push_str(": no tenant workload");
    } else {
        let _ = write!(s, ": {}", occupants_text(&i.tenants));
    }
    s
}

/// Profile, placement, compute slices, memory and sharing of an instance, in words.
fn instance_text(i: &MigInstanceLayout, compute_total: Option<u8>) -> String {
    let mut s = i.profile.clone();
    match (i.start, i.memory_slices) {
        (Some(start), Some(1)) => {
            let _ = write!(s, " at memory slice {start}");
        }
        (Some(start), Some(size)) if size > 1 => {
            let _ = write!(
                s,
                " at memory slices {start}–{}",
                u32::from(start) + u32::from(size) - 1
            );
        }
        (Some(start), _) => {
            let _ = write!(s, " from memory slice {start}");
        }
        (None, _) => s.push_str(", placement unknown"),
    }
    if let Some(c) = i.compute_slices {
        match compute_total {
            Some(t) => {
                let _ = write!(s, ", {c} of {t} compute slices");
            }
            None => {
                let _ = write!(s, ", {c} compute slices");
            }
        }
    }
    if let Some(m) = i.memory_mib {
        let _ = write!(s, ", {}", gib(m));
    }
    if i.sharing != Sharing::Exclusive {
        let _ = write!(s, ", {}", sharing_text(i.sharing));
    }
    s
}

/// The first [`MAX_NAMED`] occupants as `tenant (certainty)`, and how many more there are.
fn occupants_text(occupants: &[Occupant]) -> String {
    let mut names: Vec<String> = occupants
        .iter()
        .take(MAX_NAMED)
        .map(|o| format!("{} ({})", o.tenant, o.certainty))
        .collect();
    if occupants.len() > MAX_NAMED {
        names.push(format!(
            "and {}",
            more(occupants.len() - MAX_NAMED, "tenant", "tenants")
        ));
    }
    names.join("; ")
}

/// Whether two GPUs are shared the same way by the same tenants (their captions would read alike).
fn same_occupancy(a: &GpuLayout, b: &GpuLayout) -> bool {
    a.sharing == b.sharing
        && a.mechanisms == b.mechanisms
        && a.tenants == b.tenants
        && a.instances == b.instances
}

/// One GPU: the drawing, and a caption with the tenants in words (or, when `same_as` names an earlier
/// GPU with the same tenants, a pointer to its caption).
fn gpu_figure(
    out: &mut String,
    node: &NodeLayout,
    n: usize,
    g: usize,
    gpu: &GpuLayout,
    same_as: Option<u32>,
    tenants: &TenantIndex,
) {
    let slices = slice_count(node);
    let width = MARGIN * 2 + slices * SLICE_W;
    let is_mig = gpu.sharing == Sharing::Mig;
    let unplaced: Vec<&MigInstanceLayout> = gpu
        .instances
        .iter()
        .filter(|i| i.start.is_none() || i.memory_slices.is_none())
        .collect();
    let block_y = 22;
    let block_h = 84;
    let mut height = block_y + block_h + 22;
    if !unplaced.is_empty() {
        height += block_h + 10;
    }
    let title_id = format!("gpu-{n}-{g}-t");
    let caption_id = format!("gpu-{n}-{g}-c");
    let mode = if is_mig {
        let used: u32 = gpu
            .instances
            .iter()
            .filter_map(|i| i.compute_slices)
            .map(u32::from)
            .sum();
        match node.compute_slices {
            Some(total) => format!(
                "MIG, {} instances, {used} of {total} compute slices",
                gpu.instances.len()
            ),
            None => format!(
                "MIG, {}",
                plural(gpu.instances.len(), "instance", "instances")
            ),
        }
    } else {
        // A fractional scheduler shares the GPU on top of what the device plugin advertises.
        let fractions: Vec<&str> = gpu
            .mechanisms
            .iter()
            .filter(|m| m.is_fraction())
            .map(|m| m.title())
            .collect();
        match (fractions.is_empty(), gpu.sharing) {
            (true, sharing) => sharing_text(sharing),
            (false, Sharing::Exclusive) => fractions.join(", "),
            (false, sharing) => format!("{} + {}", fractions.join(", "), sharing_text(sharing)),
        }
    };
    let heading = format!("GPU {}: {mode}", gpu.index);
    out.push_str("<figure class=\"gpu-fig\">\n");
    let _ = write!(
        out,
        "<svg class=\"gpu\" data-gpu=\"{}\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-labelledby=\"{title_id}\" aria-describedby=\"{caption_id}\">",
        gpu.index
    );
    let _ = write!(
        out,
        "<title id=\"{title_id}\">{}</title>",
        escape(&format!("{}, {heading}", node.name))
    );

    if is_mig {
        // Memory slice ruler, and the slices no instance occupies.
        let _ = write!(
            out,
            "<use class=\"ruler\" href=\"#gt-ruler-{slices}\" aria-hidden=\"true\"/>"
        );
        for k in unallocated(gpu, slices) {
            let _ = write!(
                out,
                "<rect class=\"unallocated\" x=\"{}\" y=\"{block_y}\" width=\"{}\" height=\"{block_h}\" rx=\"3\"><title>memory slice {k}: no instance</title></rect>",
                MARGIN + k * SLICE_W + 1,
                SLICE_W - 2
            );
        }
        for i in gpu
            .instances
            .iter()
            .filter(|i| !unplaced.iter().any(|u| std::ptr::eq(*u, *i)))
        {
            let (Some(start), Some(size)) = (i.start, i.memory_slices) else {
                continue;
            };
            let x = MARGIN + u32::from(start) * SLICE_W + 1;
            let w = (u32::from(size) * SLICE_W).saturating_sub(2).max(4);
            instance_box(
                out,
                i,
                x,
                block_y,
                w,
                block_h,
                false,
                node.compute_slices,
                tenants,
            );
        }
        let each = SLICE_W;
        for (k, i) in unplaced.iter().enumerate() {
            let x = MARGIN + (k as u32 % slices) * each + 1;
            let w = (u32::from(i.memory_slices.unwrap_or(1).max(1)) * each)
                .min(width - x - MARGIN)
                .saturating_sub(2)
                .max(4);
            instance_box(
                out,
                i,
                x,
                block_y + block_h + 10,
                w,
                block_h,
                true,
                node.compute_slices,
                tenants,
            );
        }
        let foot = block_y + block_h + if unplaced.is_empty() { 0 } else { block_h + 10 } + 15;
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{MARGIN}\" y=\"{foot}\">memory slices across; compute slices per instance as \"Nc\"</text>"
        );
    } else {
        let w = slices * SLICE_W;
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{MARGIN}\" y=\"15\">the whole GPU: not partitioned</text>"
        );
        let _ = write!(
            out,
            "<rect class=\"gpu-block\" data-sharing=\"{}\" x=\"{MARGIN}\" y=\"{block_y}\" width=\"{w}\" height=\"{block_h}\" rx=\"4\"/>",
            match gpu.sharing {
                Sharing::Exclusive => "exclusive",
                Sharing::TimeSlicing { .. } => "time-slicing",
                Sharing::Mps { .. } => "mps",
                Sharing::Mig => "mig",
            }
        );
        let _ = write!(
            out,
            "<text class=\"label\" x=\"{}\" y=\"{}\">{}</text>",
            MARGIN + 6,
            block_y + 15,
            escape(&truncate(&mode, (w / 7) as usize))
        );
        let replicas = gpu.sharing.replicas();
        if replicas > 1 {
            // One pip per replica the device plugin advertises (up to 32).
            for r in 0..replicas.min(32) {
                let _ = write!(
                    out,
                    "<circle class=\"pip\" cx=\"{}\" cy=\"{}\" r=\"3\"/>",
                    MARGIN + 9 + r * 10,
                    block_y + 26
                );
            }
        }
        bands(
            out,
            &gpu.tenants,
            MARGIN + 3,
            block_y + 34,
            w - 6,
            block_h - 38,
            tenants,
        );
        let foot = if gpu.sharing == Sharing::Exclusive
            && !gpu.mechanisms.iter().any(|m| m.shares_device())
        {
            "one workload at a time holds the whole GPU"
        } else {
            "one memory pool, one fault domain for every tenant on it"
        };
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{MARGIN}\" y=\"{}\">{foot}</text>",
            block_y + block_h + 15
        );
    }
    let _ = write!(out, "</svg>\n<figcaption id=\"{caption_id}\">");
    let _ = write!(out, "<strong>{}</strong>", escape(&heading));
    if let Some(uuid) = &gpu.uuid {
        let _ = write!(out, " <code>{}</code>", escape(uuid));
    }
    if let Some(first) = same_as {
        let _ = write!(
            out,
            "<p>The same tenants as GPU {first}.</p></figcaption>\n</figure>\n"
        );
        return;
    }
    out.push_str("<ul>");
    if is_mig {
        for i in &gpu.instances {
            let ids = tenants.ids_of(i.tenants.iter().map(|o| o.tenant.as_str()));
            let _ = write!(
                out,
                "<li data-tenants=\"{ids}\">{}",
                escape(&instance_text(i, node.compute_slices))
            );
            if i.tenants.is_empty() {
                out.push_str(": no tenant workload</li>");
            } else {
                out.push_str("<ul>");
                occupant_items(out, &i.tenants, tenants);
                out.push_str("</ul></li>");
            }
        }
    } else if gpu.tenants.is_empty() {
        out.push_str("<li>no tenant workload</li>");
    } else {
        occupant_items(out, &gpu.tenants, tenants);
    }
    out.push_str("</ul></figcaption>\n</figure>\n");
}

/// One list item per occupant (the first [`MAX_NAMED`]): tenant, certainty and mechanism, with its
/// workloads behind a disclosure (opened for printing).
fn occupant_items(out: &mut String, occupants: &[Occupant], tenants: &TenantIndex) {
    for o in occupants.iter().take(MAX_NAMED) {
        let mechanisms: Vec<&str> = o.mechanisms.iter().map(|m| m.title()).collect();
        let mut head = format!("{} ({}", o.tenant, o.certainty);
        if !mechanisms.is_empty() {
            let _ = write!(head, ", {}", mechanisms.join(", "));
        }
        head.push(')');
        let _ = write!(
            out,
            "<li data-tenant=\"{}\"><details><summary>{}: {}</summary>{}</details></li>",
            tenants.id(&o.tenant),
            escape(&head),
            plural(o.workload_count, "workload", "workloads"),
            escape(&workloads_text(o))
        );
    }
    if occupants.len() > MAX_NAMED {
        let _ = write!(
            out,
            "<li>and {}</li>",
            more(occupants.len() - MAX_NAMED, "tenant", "tenants")
        );
    }
}

/// The workloads of an occupant that the layout names, and how many more it holds.
fn workloads_text(o: &Occupant) -> String {
    let mut s = o.workloads.join(", ");
    if o.workload_count > o.workloads.len() {
        let _ = write!(s, " and {} more", o.workload_count - o.workloads.len());
    }
    s
}

/// Memory slices of a MIG GPU that no placed instance covers.
fn unallocated(gpu: &GpuLayout, slices: u32) -> Vec<u32> {
    (0..slices)
        .filter(|k| {
            !gpu.instances
                .iter()
                .any(|i| match (i.start, i.memory_slices) {
                    (Some(start), Some(size)) => {
                        let start = u32::from(start);
                        (start..start + u32::from(size)).contains(k)
                    }
                    _ => false,
                })
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn instance_box(
    out: &mut String,
    i: &MigInstanceLayout,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
    unknown_start: bool,
    compute_total: Option<u8>,
    tenants: &TenantIndex,
) {
    let _ = write!(
        out,
        "<g class=\"instance\"><rect class=\"mig-slice{}\" data-profile=\"{}\" data-start=\"{}\" data-size=\"{}\" data-compute=\"{}\" \
         x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"3\"><title>{}</title></rect>",
        if unknown_start { " unknown-start" } else { "" },
        escape(&i.profile),
        i.start.map_or_else(String::new, |s| s.to_string()),
        i.memory_slices.map_or_else(String::new, |s| s.to_string()),
        i.compute_slices.map_or_else(String::new, |s| s.to_string()),
        escape(&instance_title(i, compute_total))
    );
    let chars = (w.saturating_sub(6) / 6) as usize;
    let mut sub = String::new();
    if let Some(c) = i.compute_slices {
        let _ = write!(sub, "{c}c");
    }
    if let Some(m) = i.memory_mib {
        if !sub.is_empty() {
            sub.push(' ');
        }
        sub.push_str(&gib(m));
    }
    if i.sharing.replicas() > 1 {
        let _ = write!(sub, " ×{}", i.sharing.replicas());
    }
    let (line1, line2) = if i.profile.chars().count() <= chars {
        (i.profile.clone(), sub.trim().to_string())
    } else {
        // A narrow instance: the profile over two lines (`1g` / `10gb`), the rest in its title.
        match i.profile.split_once('.') {
            Some((g, rest)) => (g.to_string(), rest.to_string()),
            None => (i.profile.clone(), String::new()),
        }
    };
    let _ = write!(
        out,
        "<text class=\"label\" x=\"{}\" y=\"{}\">{}</text>",
        x + 4,
        y + 14,
        escape(&truncate(&line1, chars.max(1)))
    );
    if !line2.is_empty() {
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{}\" y=\"{}\">{}</text>",
            x + 4,
            y + 27,
            escape(&truncate(&line2, chars.max(1)))
        );
    }
    bands(
        out,
        &i.tenants,
        x + 2,
        y + 33,
        w.saturating_sub(4),
        h.saturating_sub(36),
        tenants,
    );
    out.push_str("</g>");
}

fn findings(
    out: &mut String,
    report: &AuditReport,
    plan: &Plan<'_>,
    tenants: &TenantIndex,
    rules: &[RuleDoc<'_>],
) {
    out.push_str("<section id=\"findings\" aria-labelledby=\"h-findings\">\n<h2 id=\"h-findings\">Findings</h2>\n");
    // Filters: real form controls with labels, usable from the keyboard.
    out.push_str("<form id=\"filters\" class=\"filters\" role=\"search\" aria-label=\"Filter the findings\">\n");
    out.push_str("<label for=\"filter-tenant\">Tenant<select id=\"filter-tenant\" name=\"tenant\">\n<option value=\"\">All tenants</option>\n");
    for name in &tenants.names {
        let _ = writeln!(
            out,
            "<option value=\"{}\">{}</option>",
            tenants.id(name),
            escape(name)
        );
    }
    out.push_str("</select></label>\n");
    out.push_str("<label for=\"filter-layer\">Layer<select id=\"filter-layer\" name=\"layer\">\n<option value=\"\">All layers</option>\n");
    for layer in Layer::ALL {
        let _ = writeln!(out, "<option value=\"{layer}\">{layer}</option>");
    }
    out.push_str("</select></label>\n");
    out.push_str("<label for=\"filter-severity\">Severity at least<select id=\"filter-severity\" name=\"severity\">\n");
    for sev in Severity::ALL.iter().rev() {
        let _ = writeln!(out, "<option value=\"{sev}\">{sev}</option>");
    }
    out.push_str("</select></label>\n");
    out.push_str(
        "<label class=\"inline\" for=\"filter-accepted\"><input type=\"checkbox\" id=\"filter-accepted\" \
         name=\"accepted\" checked> Show accepted</label>\n<button type=\"reset\">Clear filters</button>\n",
    );
    let _ = writeln!(
        out,
        "<p id=\"filter-status\" role=\"status\" aria-live=\"polite\">Showing {0} of {0} findings</p>",
        plan.findings.len()
    );
    out.push_str("</form>\n");
    if !plan.hidden.is_empty() {
        let parts: Vec<String> = plan
            .hidden
            .iter()
            .map(|(rule, n)| format!("{n} {}", escape(rule)))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"hidden-findings\">At most {MAX_FINDINGS_PER_RULE} findings of a rule are shown here \
             (open ones first); the JSON report lists the other {}: {}.</p>",
            plan.hidden.values().sum::<usize>(),
            parts.join(", ")
        );
    }
    if report.findings.is_empty() {
        out.push_str("<p>No findings.</p>\n</section>\n");
        return;
    }
    let documented: BTreeSet<&str> = rules.iter().map(|r| r.code).collect();
    let mut n = 0usize;
    for layer in Layer::ALL {
        let mut in_layer: Vec<&Finding> = plan
            .findings
            .iter()
            .copied()
            .filter(|f| f.layer == layer)
            .collect();
        if in_layer.is_empty() {
            continue;
        }
        // The report is sorted most severe first; keep that order, open findings before accepted ones.
        in_layer.sort_by_key(|f| (f.accepted.is_some(), std::cmp::Reverse(f.severity)));
        let _ = writeln!(
            out,
            "<section class=\"layer\" data-layer=\"{layer}\" aria-labelledby=\"h-layer-{layer}\">\n\
             <h3 id=\"h-layer-{layer}\">{} <span class=\"layer-count\">({})</span></h3>",
            layer_title(layer),
            in_layer.len()
        );
        for f in in_layer {
            n += 1;
            finding(out, f, n, tenants, documented.contains(f.rule.as_str()));
        }
        out.push_str("</section>\n");
    }
    out.push_str("</section>\n");
}

fn layer_title(layer: Layer) -> &'static str {
    match layer {
        Layer::Device => "Device",
        Layer::Host => "Host",
        Layer::Confidentiality => "Confidentiality",
        Layer::ControlPlane => "Control plane",
        Layer::Contract => "Contract",
    }
}

fn finding(out: &mut String, f: &Finding, n: usize, tenants: &TenantIndex, documented: bool) {
    let accepted = f.accepted.is_some();
    let _ = writeln!(
        out,
        "<article class=\"finding sev-{}{}\" id=\"finding-{n}\" data-rule=\"{}\" data-layer=\"{}\" data-severity=\"{}\" \
         data-certainty=\"{}\" data-accepted=\"{accepted}\" data-tenants=\"{}\" aria-labelledby=\"finding-{n}-h\">",
        f.severity,
        if accepted { " accepted" } else { "" },
        escape(&f.rule),
        f.layer,
        f.severity,
        f.certainty,
        tenants.ids_of(f.tenants.iter().map(String::as_str))
    );
    let _ = write!(
        out,
        "<h4 id=\"finding-{n}-h\"><span class=\"badge sev-{0}\">{0}</span><span class=\"badge cert-{1}\">{1}</span>\
         <code>{2}</code> {3}",
        f.severity,
        f.certainty,
        escape(&f.rule),
        escape(&f.name)
    );
    if accepted {
        out.push_str(" <span class=\"badge is-accepted\">accepted</span>");
    }
    out.push_str("</h4>\n");
    let _ = writeln!(out, "<p class=\"message\">{}</p>", escape(&f.message));
    out.push_str("<dl>\n");
    if !f.tenants.is_empty() {
        let _ = writeln!(
            out,
            "<dt>Tenants</dt><dd>{}</dd>",
            escape(&names_text(&f.tenants, "tenant", "tenants"))
        );
    }
    if !f.nodes.is_empty() {
        let _ = writeln!(
            out,
            "<dt>Nodes</dt><dd>{}</dd>",
            escape(&names_text(&f.nodes, "node", "nodes"))
        );
    }
    if !f.objects.is_empty() {
        out.push_str("<dt>Objects</dt><dd><ul class=\"objects\">");
        for o in f.objects.iter().take(MAX_OBJECTS) {
            let name = match &o.namespace {
                Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
                None => format!("{} {}", o.kind, o.name),
            };
            let place = if o.line > 0 {
                format!("{}:{}", o.file, o.line)
            } else {
                o.file.clone()
            };
            let _ = write!(
                out,
                "<li>{} <code class=\"at\">{}</code></li>",
                escape(&name),
                escape(&place)
            );
        }
        if f.objects.len() > MAX_OBJECTS {
            let _ = write!(
                out,
                "<li>and {} (in the JSON report)</li>",
                more(f.objects.len() - MAX_OBJECTS, "object", "objects")
            );
        }
        out.push_str("</ul></dd>\n");
    }
    let _ = writeln!(
        out,
        "<dt>Remediation</dt><dd>{}</dd>",
        escape(&f.remediation)
    );
    for e in &f.evidence {
        let _ = writeln!(out, "<dt>Evidence</dt><dd>{}</dd>", escape(e));
    }
    if let Some(a) = &f.accepted {
        let until = a
            .until
            .as_deref()
            .map(|u| format!(" (until {})", escape(u)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<dt>Accepted</dt><dd>{}{until}</dd>",
            escape(&a.reason)
        );
    }
    out.push_str("</dl>\n");
    if documented {
        let _ = writeln!(
            out,
            "<p><a href=\"#rule-{0}\">About {0}</a></p>",
            escape(&f.rule)
        );
    }
    out.push_str("</article>\n");
}

fn rule_docs(out: &mut String, report: &AuditReport, rules: &[RuleDoc<'_>]) {
    out.push_str(
        "<section id=\"rules\" aria-labelledby=\"h-rules\">\n<h2 id=\"h-rules\">Rules</h2>\n",
    );
    let fired: BTreeSet<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    let mut docs: Vec<&RuleDoc<'_>> = rules.iter().filter(|r| fired.contains(r.code)).collect();
    docs.sort_by(|a, b| a.code.cmp(b.code));
    docs.dedup_by(|a, b| a.code == b.code);
    if docs.is_empty() {
        out.push_str("<p>No rule fired.</p>\n</section>\n");
        return;
    }
    out.push_str("<p>The documentation of every rule with a finding above, as <code>gpu-trust explain</code> prints it.</p>\n");
    for r in docs {
        let _ = writeln!(
            out,
            "<details class=\"rule-doc\" id=\"rule-{}\" data-rule=\"{}\">\n<summary><code>{}</code> {}: {} \
             <span class=\"badge sev-{}\">{}</span> <span class=\"meta\">({})</span></summary>",
            escape(r.code),
            escape(r.code),
            escape(r.code),
            escape(r.name),
            escape(r.summary),
            r.severity,
            r.severity,
            r.layer
        );
        out.push_str(&markdown::to_html(r.documentation, 3));
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

fn skipped(out: &mut String, report: &AuditReport) {
    if report.skipped.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"skipped\" aria-labelledby=\"h-skipped\">\n<h2 id=\"h-skipped\">Skipped input</h2>\n\
         <p>These documents could not be read and were not audited: the findings above cover part of the \
         input only.</p>\n<ul>\n",
    );
    for s in &report.skipped {
        let _ = writeln!(
            out,
            "<li><code>{}</code>: {}</li>",
            escape(&format!("{}:{}:{}", s.file, s.line, s.column)),
            escape(&s.error)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

#[cfg(test)]
mod tests {
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
