//! The HTML report: one self-contained file (inline CSS, SVG and script; no request to any network, which
//! its Content-Security-Policy forbids), readable from a `file://` address and printable.
//!
//! Sections, in order, so that what matters comes before the drawings:
//!
//! 1. A summary band: tenants, nodes, GPUs, findings by severity, and one sentence with what matters
//!    most, computed from the report's groups and findings.
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

mod markdown;

use crate::{AuditReport, RuleDoc};
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_rules::layout::{GpuLayout, MigInstanceLayout, NodeLayout, Occupant, Sharing};
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

/// Text with Markdown code spans (`` `like this` ``) set as `<code>`, everything escaped: what the
/// rules write between backticks reads as code, and no backtick is left on the page. A backtick
/// without a partner stays as it is.
pub fn code_spans(text: &str) -> String {
    let pieces: Vec<&str> = text.split('`').collect();
    // An odd number of pieces means the backticks pair up; otherwise the last one has no partner.
    let paired = if pieces.len() % 2 == 1 {
        pieces.len()
    } else {
        pieces.len() - 1
    };
    let mut out = String::with_capacity(text.len() + 16);
    for (i, piece) in pieces.iter().enumerate() {
        if i >= paired {
            out.push('`');
            out.push_str(&escape(piece));
        } else if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(&escape(piece));
            out.push_str("</code>");
        } else {
            out.push_str(&escape(piece));
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

/// Nodes drawn as one: the first, and the others with the same layout and tenants.
pub struct DrawnNode<'a> {
    pub node: &'a NodeLayout,
    pub alike: Vec<&'a NodeLayout>,
}

impl DrawnNode<'_> {
    /// The runs of identical consecutive GPUs of the node: each is drawn once.
    pub fn runs(&self) -> Vec<&[GpuLayout]> {
        gpu_runs(&self.node.gpus)
    }
}

/// Consecutive GPUs shared the same way by the same tenants, as runs.
pub fn gpu_runs(gpus: &[GpuLayout]) -> Vec<&[GpuLayout]> {
    let mut runs: Vec<&[GpuLayout]> = Vec::new();
    let mut start = 0;
    for i in 1..=gpus.len() {
        if i == gpus.len() || !same_occupancy(&gpus[start], &gpus[i]) {
            runs.push(&gpus[start..i]);
            start = i;
        }
    }
    runs
}

/// What the page shows of a report and its layout.
pub struct Plan<'a> {
    /// Findings shown, in the report's order.
    pub findings: Vec<&'a Finding>,
    /// Findings not shown, per rule.
    pub hidden: BTreeMap<&'a str, usize>,
    /// Tenants on the matrix axes (names), in the report's order.
    pub matrix_tenants: Vec<String>,
    pub drawn: Vec<DrawnNode<'a>>,
    pub listed: Vec<&'a NodeLayout>,
    /// Pairs listed (at most [`MAX_PAIRS`]), riskiest first.
    pub pairs: Vec<&'a MatrixPair>,
    /// Groups listed (at most [`MAX_GROUPS`]), in the report's order.
    pub groups: Vec<&'a GroupEntry>,
}

/// How risky a pair is, for sorting (smaller first): worst open severity, then how surely it
/// meets, then how many incidents reach across.
fn pair_risk(
    p: &MatrixPair,
) -> (
    std::cmp::Reverse<Option<Severity>>,
    Certainty,
    std::cmp::Reverse<usize>,
) {
    let surest = p
        .incidents
        .values()
        .min()
        .copied()
        .unwrap_or(Certainty::Permitted);
    (
        std::cmp::Reverse(p.severity),
        surest,
        std::cmp::Reverse(p.incidents.len()),
    )
}

impl<'a> Plan<'a> {
    pub fn new(report: &'a AuditReport) -> Plan<'a> {
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
        let mut pairs: Vec<&MatrixPair> = report.matrix.pairs.iter().collect();
        pairs.sort_by(|a, b| {
            pair_risk(a)
                .cmp(&pair_risk(b))
                .then_with(|| a.tenants.cmp(&b.tenants))
        });
        pairs.truncate(MAX_PAIRS);
        let mut groups: Vec<&GroupEntry> = report.groups.iter().collect();
        if groups.len() > MAX_GROUPS {
            groups.sort_by_key(|g| (g.level, std::cmp::Reverse(g.pairs)));
            groups.truncate(MAX_GROUPS);
            groups.sort_by_key(|g| report.groups.iter().position(|x| x.id == g.id));
        }
        let (drawn, listed) = drawn_nodes(&report.layout);
        Plan {
            findings,
            hidden,
            matrix_tenants: report.matrix.tenants.clone(),
            drawn,
            listed,
            pairs,
            groups,
        }
    }

    /// The counts the page's self-check expects.
    pub fn expect(&self) -> Expect {
        let mut by_severity = SeverityCounts::default();
        for f in self.findings.iter().filter(|f| f.accepted.is_none()) {
            by_severity.add(f.severity);
        }
        let n = self.matrix_tenants.len();
        let runs: Vec<&[GpuLayout]> = self.drawn.iter().flat_map(|d| d.runs()).collect();
        Expect {
            findings: self.findings.len(),
            accepted: self
                .findings
                .iter()
                .filter(|f| f.accepted.is_some())
                .count(),
            by_severity,
            matrix_cells: n * n,
            nodes: self.drawn.len(),
            gpus: runs.len(),
            mig_slices: runs.iter().map(|r| r[0].instances.len()).sum(),
            pairs: self.pairs.len(),
            groups: self.groups.len(),
        }
    }
}

/// Whether two nodes would be drawn alike: the same GPUs, shared the same way by the same tenants.
fn same_node(a: &NodeLayout, b: &NodeLayout) -> bool {
    a.model == b.model
        && a.product == b.product
        && a.hami == b.hami
        && a.sharing_strategy == b.sharing_strategy
        && a.tenants == b.tenants
        && a.gpus.len() == b.gpus.len()
        && a.gpus
            .iter()
            .zip(&b.gpus)
            .all(|(x, y)| same_occupancy(x, y))
}

/// The node layouts to draw (nodes alike drawn once; at most [`MAX_DRAWN_NODES`] layouts: those with
/// the most tenants, ties by node order) and the nodes listed without a drawing, both in node order.
pub fn drawn_nodes(layout: &[NodeLayout]) -> (Vec<DrawnNode<'_>>, Vec<&NodeLayout>) {
    let mut drawn: Vec<DrawnNode<'_>> = Vec::new();
    for node in layout {
        // Nodes alike are mostly neighbours (a pool); compare with the last few layouts first.
        match drawn
            .iter_mut()
            .rev()
            .take(16)
            .find(|d| same_node(d.node, node))
        {
            Some(d) => d.alike.push(node),
            None => drawn.push(DrawnNode {
                node,
                alike: Vec::new(),
            }),
        }
    }
    if drawn.len() <= MAX_DRAWN_NODES {
        return (drawn, Vec::new());
    }
    let mut order: Vec<usize> = (0..drawn.len()).collect();
    order.sort_by_key(|i| (std::cmp::Reverse(drawn[*i].node.tenants.len()), *i));
    let chosen: BTreeSet<usize> = order.into_iter().take(MAX_DRAWN_NODES).collect();
    let mut kept = Vec::with_capacity(MAX_DRAWN_NODES);
    let mut listed = Vec::new();
    for (i, d) in drawn.into_iter().enumerate() {
        if chosen.contains(&i) {
            kept.push(d);
        } else {
            listed.push(d.node);
            listed.extend(d.alike);
        }
    }
    (kept, listed)
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
    out.push_str(&crate::coverage::html_banner(&report.coverage));
    out.push_str(
        "<nav class=\"toc\" aria-label=\"Sections\"><a href=\"#matrix\">Who can hurt whom</a>\
         <a href=\"#findings\">Findings</a><a href=\"#pairs\">Tenant pairs</a>\
         <a href=\"#groups\">Shared</a><a href=\"#gpus\">GPU layouts</a><a href=\"#rules\">Rules</a></nav>\n",
    );
    out.push_str("<main>\n");
    matrix(&mut out, &report.matrix, &tenants);
    findings(&mut out, report, &plan, &tenants, rules);
    pairs(&mut out, report, &plan, &tenants);
    groups(&mut out, report, &plan);
    gpu_layouts(&mut out, &plan.drawn, &plan.listed, &tenants);
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
        }
        for g in &report.groups {
            extra.extend(g.tenants.iter().map(String::as_str));
        }
        extra.extend(report.matrix.tenants.iter().map(String::as_str));
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

/// The sentence that matters: how many tenants share a memory pool with another (or, when none does,
/// the closest thing they share), and which contracts the findings say are not kept.
pub fn headline(report: &AuditReport) -> String {
    let mut parts: Vec<String> = Vec::new();
    let count = |share: &str| {
        report
            .groups
            .iter()
            .filter(|g| g.shares.iter().any(|s| s == share))
            .flat_map(|g| g.tenants.iter().map(String::as_str))
            .collect::<BTreeSet<&str>>()
            .len()
    };
    let pool = count("memory-pool");
    if pool > 0 {
        parts.push(tenants_share(pool, "memory-pool"));
    } else {
        let mut said = false;
        for share in ["gpu", "host"] {
            let n = count(share);
            if n > 0 {
                parts.push(format!(
                    "no tenant shares a memory pool, but {}",
                    tenants_share(n, share)
                ));
                said = true;
                break;
            }
        }
        if !said {
            parts.push("no tenant shares a memory pool or a node with another".to_string());
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

fn tenants_share(n: usize, share: &str) -> String {
    format!(
        "{} {} with another tenant",
        plural(n, "tenant", "tenants"),
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

/// The class and one-letter mark of a matrix cell's worst severity.
fn severity_mark(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "C",
        Severity::High => "H",
        Severity::Medium => "M",
        Severity::Low => "L",
        Severity::Info => "I",
    }
}

fn matrix_legend(out: &mut String) {
    out.push_str("<ul class=\"legend\" aria-label=\"Worst open severity\">\n");
    for s in Severity::ALL {
        let _ = writeln!(
            out,
            "<li><span class=\"swatch sev-{s}\" aria-hidden=\"true\">{}</span>{s}</li>",
            severity_mark(s)
        );
    }
    out.push_str(
        "<li><span class=\"swatch sev-open-none\" aria-hidden=\"true\">○</span>shares, nothing open</li>\n\
         <li><span class=\"swatch c-none\" aria-hidden=\"true\">·</span>shares nothing</li>\n</ul>\n",
    );
}

/// The incidents of a pair in words: `memory-exhaustion (possible), host-escape (observed)`.
fn incidents_text(p: &MatrixPair) -> String {
    p.incidents
        .iter()
        .map(|(i, c)| format!("{i} ({c})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who can hurt whom: one matrix of the report's matrix tenants, each cell the worst severity of the
/// open findings that cover the pair; the incidents are the cell's detail.
fn matrix(out: &mut String, m: &Matrix, tenants: &TenantIndex) {
    out.push_str("<section id=\"matrix\" aria-labelledby=\"h-matrix\">\n<h2 id=\"h-matrix\">Who can hurt whom</h2>\n");
    if m.tenants.is_empty() {
        out.push_str("<p>No tenant shares anything with another.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<p>Row and column: two tenants. A cell is coloured by the worst severity of the open findings \
         about the pair; its title lists the incidents either can set off on the other, and how sure \
         the audit is of each.</p>\n",
    );
    matrix_legend(out);
    if m.omitted > 0 {
        let _ = writeln!(
            out,
            "<p>The {} tenants whose incidents reach the most others are shown; {} more are in the \
             groups below and in the JSON report.</p>",
            m.tenants.len(),
            m.omitted
        );
    }
    let mut index: BTreeMap<(&str, &str), &MatrixPair> = BTreeMap::new();
    for p in &m.pairs {
        index.insert((p.tenants[0].as_str(), p.tenants[1].as_str()), p);
    }
    out.push_str("<div class=\"matrix-wrap\" tabindex=\"0\" role=\"region\" aria-label=\"Who can hurt whom\">\n<table class=\"matrix\">\n");
    out.push_str(
        "<thead><tr><th scope=\"col\"><span class=\"visually-hidden\">tenant \\ tenant</span></th>",
    );
    for name in &m.tenants {
        let _ = write!(
            out,
            "<th scope=\"col\" data-col=\"{}\">{}</th>",
            tenants.id(name),
            escape(name)
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for from in &m.tenants {
        let _ = write!(
            out,
            "<tr><th scope=\"row\" data-row=\"{}\">{}</th>",
            tenants.id(from),
            escape(from)
        );
        for to in &m.tenants {
            let key = if from <= to {
                (from.as_str(), to.as_str())
            } else {
                (to.as_str(), from.as_str())
            };
            let (class, mark, word, detail) = if from == to {
                (
                    "c-self".to_string(),
                    "–",
                    "same tenant".to_string(),
                    String::new(),
                )
            } else {
                match index.get(&key) {
                    Some(p) => match p.severity {
                        Some(s) => (
                            format!("sev-{s}"),
                            severity_mark(s),
                            s.as_str().to_string(),
                            incidents_text(p),
                        ),
                        None => (
                            "sev-open-none".to_string(),
                            "○",
                            "nothing open".to_string(),
                            incidents_text(p),
                        ),
                    },
                    None => (
                        "c-none".to_string(),
                        "·",
                        "shares nothing".to_string(),
                        String::new(),
                    ),
                }
            };
            let title = if from == to {
                format!("{from}: the same tenant")
            } else if detail.is_empty() {
                format!("{from} ↔ {to}: {word}")
            } else {
                format!("{from} ↔ {to}: {word}; {detail}")
            };
            let _ = write!(
                out,
                "<td class=\"cell {class}\" title=\"{}\" aria-label=\"{}\">{mark}</td>",
                escape(&title),
                escape(&word)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

fn pairs(out: &mut String, report: &AuditReport, plan: &Plan<'_>, tenants: &TenantIndex) {
    out.push_str("<section id=\"pairs\" aria-labelledby=\"h-pairs\">\n<h2 id=\"h-pairs\">Tenant pairs</h2>\n");
    if report.matrix.pairs.is_empty() {
        out.push_str("<p>No two tenants share anything the audit can see.</p>\n</section>\n");
        return;
    }
    out.push_str("<p>The pairs of the matrix, riskiest first.</p>\n");
    out.push_str(
        "<div class=\"table-wrap\"><table class=\"grid\"><thead><tr><th scope=\"col\">Tenants</th><th scope=\"col\">Trust</th>\
         <th scope=\"col\">Worst open</th><th scope=\"col\">Incidents</th></tr></thead>\n<tbody>\n",
    );
    for p in &plan.pairs {
        let severity = match p.severity {
            Some(s) => format!("<span class=\"badge sev-{s}\">{s}</span>"),
            None => "–".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"pair\" data-tenants=\"{}\"><td>{} ↔ {}</td><td><span class=\"badge trust\">{}</span></td>\
             <td>{severity}</td><td>{}</td></tr>",
            tenants.ids_of(p.tenants.iter().map(String::as_str)),
            escape(&p.tenants[0]),
            escape(&p.tenants[1]),
            p.trust,
            escape(&incidents_text(p))
        );
    }
    out.push_str("</tbody></table></div>\n");
    if plan.pairs.len() < report.matrix.pairs.len() {
        let _ = writeln!(
            out,
            "<p>{} of {} pairs listed, riskiest first; the JSON report has them all.</p>",
            plan.pairs.len(),
            report.matrix.pairs.len()
        );
    }
    out.push_str("</section>\n");
}

/// A group in a few words: `time-slicing GPU`, `MIG GPU`, `node`, `API server`.
fn group_what(g: &GroupEntry) -> String {
    let what = match (g.level, g.mechanism) {
        (GroupLevel::Device, Some(m)) if m.is_mig() => format!("{} MIG instance", m.title()),
        (GroupLevel::Device, Some(m)) => format!("{} GPU", m.title()),
        (GroupLevel::Device, None) => "GPU".to_string(),
        (GroupLevel::MigGpu, _) => "MIG GPU".to_string(),
        (GroupLevel::Node, _) => "node".to_string(),
        (GroupLevel::ControlPlane, _) => "API server".to_string(),
    };
    if g.permitted {
        format!("{what}, permitted")
    } else {
        what
    }
}

fn groups(out: &mut String, report: &AuditReport, plan: &Plan<'_>) {
    out.push_str("<section id=\"groups\" aria-labelledby=\"h-groups\">\n<h2 id=\"h-groups\">What tenants share</h2>\n");
    if report.groups.is_empty() {
        out.push_str("<p>No two tenants share anything the audit can see.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<p>One row per shared thing: a GPU or MIG instance, the instances of a MIG GPU, a node, the \
         nodes that templates may be placed on (permitted), the API server.</p>\n",
    );
    out.push_str(
        "<div class=\"table-wrap\"><table class=\"grid\"><thead><tr><th scope=\"col\">Group</th><th scope=\"col\">Shared</th>\
         <th scope=\"col\">Nodes</th><th scope=\"col\">Tenants</th><th scope=\"col\">Pairs</th>\
         <th scope=\"col\">Certainty</th></tr></thead>\n<tbody>\n",
    );
    for g in &plan.groups {
        let nodes = if g.nodes.is_empty() {
            "–".to_string()
        } else {
            escape(&names_text(&g.nodes, "node", "nodes"))
        };
        let _ = writeln!(
            out,
            "<tr class=\"group\" id=\"{0}\"><td><code>{0}</code></td><td>{1}</td><td>{nodes}</td><td>{2}</td><td>{3}</td>\
             <td><span class=\"badge cert-{4}\">{4}</span></td></tr>",
            escape(&g.id),
            escape(&group_what(g)),
            escape(&names_text(&g.tenants, "tenant", "tenants")),
            g.pairs,
            g.certainty
        );
    }
    out.push_str("</tbody></table></div>\n");
    if plan.groups.len() < report.groups.len() {
        let _ = writeln!(
            out,
            "<p>{} of {} groups listed (devices first, then by pairs); the JSON report has them all.</p>",
            plan.groups.len(),
            report.groups.len()
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
    layout: &[DrawnNode<'_>],
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
            "<p>The {} node layouts with the most tenants are drawn; <a href=\"#listed-nodes\">the other {}</a> \
             nodes are listed after them.</p>",
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
    for (n, drawn) in layout.iter().enumerate() {
        let node = drawn.node;
        let ids = tenants.ids_of(node.tenants.iter().map(|t| t.tenant.as_str()));
        let _ = writeln!(
            out,
            "<details class=\"node\" id=\"node-{n}\" data-node=\"{}\" data-tenants=\"{ids}\"{}>",
            escape(&node.name),
            if n < OPEN_NODES { " open" } else { "" }
        );
        let title = if drawn.alike.is_empty() {
            node.name.clone()
        } else {
            format!(
                "{} and {}",
                node.name,
                more(drawn.alike.len(), "node alike", "nodes alike")
            )
        };
        let _ = writeln!(
            out,
            "<summary><h3>{}</h3><span class=\"meta\">{}</span></summary>",
            escape(&title),
            escape(&node_summary(node))
        );
        if !drawn.alike.is_empty() {
            let names: Vec<String> = drawn.alike.iter().map(|n| n.name.clone()).collect();
            let _ = writeln!(
                out,
                "<p class=\"meta alike\">The same GPUs and tenants: {}.</p>",
                escape(&names_text(&names, "node", "nodes"))
            );
        }
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
        // Consecutive GPUs shared alike are drawn once.
        for (g, run) in drawn.runs().into_iter().enumerate() {
            gpu_figure(out, node, n, g, run, tenants);
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
            "<h3 id=\"listed-nodes\">{} more, not drawn</h3>\n<div class=\"table-wrap\"><table class=\"grid\"><thead><tr>\
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
        out.push_str("</tbody></table></div>\n");
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

/// One run of GPUs shared alike: the drawing of the first, and a caption with the tenants in words.
fn gpu_figure(
    out: &mut String,
    node: &NodeLayout,
    n: usize,
    g: usize,
    run: &[GpuLayout],
    tenants: &TenantIndex,
) {
    let Some(gpu) = run.first() else { return };
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
    let heading = match run {
        [_] => format!("GPU {}: {mode}", gpu.index),
        [first, .., last] => format!(
            "GPUs {}–{} ({} alike): {mode}",
            first.index,
            last.index,
            run.len()
        ),
        [] => mode.clone(),
    };
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
    if let (Some(uuid), [_]) = (&gpu.uuid, run) {
        let _ = write!(out, " <code>{}</code>", escape(uuid));
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
         name=\"accepted\"> Show accepted</label>\n<button type=\"reset\">Clear filters</button>\n",
    );
    let open = plan
        .findings
        .iter()
        .filter(|f| f.accepted.is_none())
        .count();
    let _ = writeln!(
        out,
        "<p id=\"filter-status\" role=\"status\" aria-live=\"polite\">Showing {open} of {} findings{}</p>",
        plan.findings.len(),
        if open < plan.findings.len() {
            " (accepted ones hidden)"
        } else {
            ""
        }
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
        let visible = in_layer.iter().filter(|f| f.accepted.is_none()).count();
        let _ = writeln!(
            out,
            "<section class=\"layer\" data-layer=\"{layer}\" aria-labelledby=\"h-layer-{layer}\"{}>\n\
             <h3 id=\"h-layer-{layer}\">{} <span class=\"layer-count\">({visible})</span></h3>",
            if visible == 0 { " hidden" } else { "" },
            layer_title(layer)
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
         data-certainty=\"{}\" data-accepted=\"{accepted}\" data-tenants=\"{}\" aria-labelledby=\"finding-{n}-h\"{}>",
        f.severity,
        if accepted { " accepted" } else { "" },
        escape(&f.rule),
        f.layer,
        f.severity,
        f.certainty,
        tenants.ids_of(f.tenants.iter().map(String::as_str)),
        if accepted { " hidden" } else { "" }
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
    let _ = writeln!(out, "<p class=\"message\">{}</p>", code_spans(&f.message));
    out.push_str("<dl>\n");
    if !f.tenants.is_empty() {
        let _ = writeln!(
            out,
            "<dt>Tenants</dt><dd>{}</dd>",
            escape(&names_text(&f.tenants, "tenant", "tenants"))
        );
    }
    if let Some(pairs) = f.pairs.filter(|n| *n > 1 || !f.accepted_pairs.is_empty()) {
        let mut text = plural(pairs, "pair", "pairs");
        if !f.accepted_pairs.is_empty() {
            let _ = write!(
                text,
                ", {} accepted, {} open",
                f.accepted_pairs.len(),
                pairs.saturating_sub(f.accepted_pairs.len())
            );
        }
        let _ = writeln!(out, "<dt>Pairs</dt><dd>{}</dd>", escape(&text));
        if !f.open_pairs.is_empty() {
            let _ = writeln!(
                out,
                "<dt>Open pairs</dt><dd>{}</dd>",
                escape(&crate::table::open_pairs_text(f, |s| s.to_string()))
            );
        }
    }
    if !f.nodes.is_empty() {
        let _ = writeln!(
            out,
            "<dt>Nodes</dt><dd>{}</dd>",
            escape(&names_text(&f.nodes, "node", "nodes"))
        );
    }
    if !f.groups.is_empty() {
        let links: Vec<String> = f
            .groups
            .iter()
            .take(MAX_NAMES)
            .map(|g| format!("<a href=\"#{0}\"><code>{0}</code></a>", escape(g)))
            .collect();
        let more_groups = if f.groups.len() > MAX_NAMES {
            format!(
                " and {}",
                more(f.groups.len() - MAX_NAMES, "group", "groups")
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<dt>Shared</dt><dd>{}{more_groups}</dd>",
            links.join(", ")
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
        code_spans(&f.remediation)
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
            code_spans(&a.reason)
        );
    }
    for a in f.accepted_pairs.iter().take(MAX_NAMES) {
        let until = a
            .until
            .as_deref()
            .map(|u| format!(" (until {})", escape(u)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<dt>Accepted pair</dt><dd>{} and {}: {}{until}</dd>",
            escape(&a.tenants[0]),
            escape(&a.tenants[1]),
            code_spans(&a.reason)
        );
    }
    if f.accepted_pairs.len() > MAX_NAMES {
        let _ = writeln!(
            out,
            "<dt>Accepted pairs</dt><dd>and {} (in the JSON report)</dd>",
            more(f.accepted_pairs.len() - MAX_NAMES, "pair", "pairs")
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
            code_spans(r.summary),
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
