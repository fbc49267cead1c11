//! The terminal report: tenants, then findings grouped by layer (device, host, confidentiality,
//! control-plane, contract), most severe first, then the pairs of tenants and the blast radius, the
//! skipped input, and a summary line.
//!
//! Colour (ANSI, through `anstyle`) is added only when [`TableOptions::colour`] is set; the caller decides
//! from the terminal and `NO_COLOR`. Without colour the text is plain and stable, fit for snapshots.

use crate::text::wrap;
use crate::AuditReport;
use anstyle::{AnsiColor, Effects, Style};
use gpu_trust_model::{Layer, Severity};
use gpu_trust_rules::report::{BlastRadiusEntry, Finding, PairEntry, SeverityCounts, Summary};
use std::fmt::Write as _;

/// How to render the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableOptions {
    /// Emit ANSI colour and bold.
    pub colour: bool,
    /// Wrap prose at this many columns.
    pub width: usize,
    /// Findings the caller left out of the report it hands over, counted in a line after the
    /// summary so that nothing is hidden silently.
    pub hidden: Hidden,
}

/// Findings left out of a rendered report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hidden {
    /// Accepted findings left out.
    pub accepted: usize,
    /// Findings left out for a severity below `min_severity`.
    pub below: usize,
    /// The lowest severity shown.
    pub min_severity: Option<Severity>,
    /// Findings of rules the configuration disables, left out of the report.
    pub disabled: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            colour: false,
            width: 100,
            hidden: Hidden::default(),
        }
    }
}

/// Styles in use; all plain when colour is off.
struct Palette {
    colour: bool,
}

impl Palette {
    fn paint(&self, style: Style, text: &str) -> String {
        if self.colour {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }

    fn heading(&self, text: &str) -> String {
        self.paint(
            Style::new().effects(Effects::BOLD | Effects::UNDERLINE),
            text,
        )
    }

    fn bold(&self, text: &str) -> String {
        self.paint(Style::new().effects(Effects::BOLD), text)
    }

    fn dim(&self, text: &str) -> String {
        self.paint(Style::new().effects(Effects::DIMMED), text)
    }

    fn severity(&self, severity: Severity, text: &str) -> String {
        let style = match severity {
            Severity::Critical => Style::new()
                .fg_color(Some(AnsiColor::BrightRed.into()))
                .effects(Effects::BOLD),
            Severity::High => Style::new().fg_color(Some(AnsiColor::Red.into())),
            Severity::Medium => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Severity::Low => Style::new().fg_color(Some(AnsiColor::Cyan.into())),
            Severity::Info => Style::new().effects(Effects::DIMMED),
        };
        self.paint(style, text)
    }

    fn accepted(&self, text: &str) -> String {
        self.paint(Style::new().fg_color(Some(AnsiColor::Green.into())), text)
    }
}

/// The report as terminal text, ending in a newline.
pub fn render(report: &AuditReport, options: &TableOptions) -> String {
    let p = Palette {
        colour: options.colour,
    };
    let width = options.width;
    let mut out = String::new();

    render_tenants(&mut out, report, &p, width);
    render_findings(&mut out, report, &p, width);
    render_pairs(&mut out, &report.pairs, &p, width);
    render_blast_radius(&mut out, &report.blast_radius, &p, width);
    render_skipped(&mut out, report, &p, width);
    out.push_str(&p.bold(&summary_line(&report.summary, report.skipped.len())));
    out.push('\n');
    if let Some(line) = hidden_line(&options.hidden) {
        let _ = writeln!(out, "{}", p.dim(&line));
    }
    out
}

/// What the table leaves out, as one line (`None` when nothing is left out).
pub fn hidden_line(hidden: &Hidden) -> Option<String> {
    let mut parts = Vec::new();
    if hidden.accepted > 0 {
        parts.push(format!(
            "{} not shown (--show-accepted shows {})",
            count_phrase(hidden.accepted, "accepted finding"),
            if hidden.accepted == 1 { "it" } else { "them" }
        ));
    }
    if hidden.below > 0 {
        let floor = hidden.min_severity.map_or("info", Severity::as_str);
        parts.push(format!(
            "{} below {floor} not shown",
            count_phrase(hidden.below, "finding")
        ));
    }
    if hidden.disabled > 0 {
        parts.push(format!(
            "{} of disabled rules not reported",
            count_phrase(hidden.disabled, "finding")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn render_tenants(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    if report.tenants.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", p.heading("TENANTS"));
    for t in &report.tenants {
        let mut line = format!("{}: {}", t.name, t.namespaces.join(", "));
        if t.unassigned {
            line.push_str(" (unassigned: a tenant of its own, default trust)");
        }
        let _ = writeln!(out, "  {}", wrap(&line, width.saturating_sub(2), "      "));
    }
    out.push('\n');
}

fn render_findings(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    for layer in Layer::ALL {
        let mut in_layer: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.layer == layer)
            .collect();
        if in_layer.is_empty() {
            continue;
        }
        // The report is sorted most severe first; keep that order, unaccepted before accepted.
        in_layer.sort_by_key(|f| (f.accepted.is_some(), std::cmp::Reverse(f.severity)));
        let _ = writeln!(
            out,
            "{} {}",
            p.heading(&layer.as_str().to_ascii_uppercase()),
            p.dim(&format!("({})", count_phrase(in_layer.len(), "finding")))
        );
        for f in in_layer {
            render_finding(out, f, p, width);
        }
    }
    if report.findings.is_empty() {
        let _ = writeln!(out, "{}", p.heading("FINDINGS"));
        let _ = writeln!(out, "  none\n");
    }
}

fn render_finding(out: &mut String, f: &Finding, p: &Palette, width: usize) {
    let label = format!("{:<8}", f.severity.as_str().to_ascii_uppercase());
    let mut head = format!(
        "  {} {} {} {}",
        p.severity(f.severity, &label),
        p.bold(&f.rule),
        f.name,
        p.dim(&format!("[{}]", f.certainty))
    );
    if f.accepted.is_some() {
        head.push(' ');
        head.push_str(&p.accepted("ACCEPTED"));
    }
    let _ = writeln!(out, "{head}");
    let indent = "    ";
    let field_indent = "             ";
    if !f.tenants.is_empty() {
        let _ = writeln!(out, "{indent}tenants  {}", f.tenants.join(", "));
    }
    if !f.nodes.is_empty() {
        let nodes = wrap(
            &f.nodes.join(", "),
            width.saturating_sub(field_indent.len()),
            field_indent,
        );
        let _ = writeln!(out, "{indent}nodes    {nodes}");
    }
    for (i, o) in f.objects.iter().enumerate() {
        let label = if i == 0 { "objects  " } else { "         " };
        let name = match &o.namespace {
            Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
            None => format!("{} {}", o.kind, o.name),
        };
        let place = if o.line > 0 {
            format!("{}:{}", o.file, o.line)
        } else {
            o.file.clone()
        };
        let _ = writeln!(out, "{indent}{label}{name}  {}", p.dim(&place));
    }
    let _ = writeln!(
        out,
        "{indent}{}",
        wrap(&f.message, width.saturating_sub(indent.len()), indent)
    );
    let fix = format!("fix: {}", f.remediation);
    let _ = writeln!(
        out,
        "{indent}{}",
        wrap(&fix, width.saturating_sub(indent.len()), "         ")
    );
    for e in &f.evidence {
        let line = format!("evidence: {e}");
        let _ = writeln!(
            out,
            "{indent}{}",
            wrap(&line, width.saturating_sub(indent.len()), "              ")
        );
    }
    if let Some(a) = &f.accepted {
        let until = a
            .until
            .as_deref()
            .map(|u| format!(" (until {u})"))
            .unwrap_or_default();
        let line = format!("accepted: {}{until}", a.reason);
        let _ = writeln!(
            out,
            "{indent}{}",
            p.accepted(&wrap(
                &line,
                width.saturating_sub(indent.len()),
                "              "
            ))
        );
    }
    out.push('\n');
}

fn render_pairs(out: &mut String, pairs: &[PairEntry], p: &Palette, width: usize) {
    if pairs.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{} {}",
        p.heading("PAIRS"),
        p.dim("(tenants that share anything, and what separates them)")
    );
    let rows: Vec<[String; 5]> = pairs
        .iter()
        .map(|pair| {
            [
                format!("{} <-> {}", pair.tenants[0], pair.tenants[1]),
                pair.trust.as_str().to_string(),
                pair.certainty
                    .map(|c| c.as_str().to_string())
                    .unwrap_or_else(|| "-".to_string()),
                join_or(&pair.separated_by, "nothing"),
                join_or(&pair.shares, "nothing"),
            ]
        })
        .collect();
    let header = ["tenants", "trust", "certainty", "separated by", "shares"];
    write_columns(out, &header, &rows, p, width);
    out.push('\n');
}

fn render_blast_radius(out: &mut String, entries: &[BlastRadiusEntry], p: &Palette, width: usize) {
    if entries.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{} {}",
        p.heading("BLAST RADIUS"),
        p.dim("(who an incident started by a tenant reaches)")
    );
    let rows: Vec<[String; 3]> = entries
        .iter()
        .map(|e| {
            let reaches = if e.reaches.is_empty() {
                "no other tenant".to_string()
            } else {
                e.reaches
                    .iter()
                    .map(|t| match e.certainty.get(t) {
                        Some(c) => format!("{t} ({c})"),
                        None => t.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            [e.tenant.clone(), e.incident.as_str().to_string(), reaches]
        })
        .collect();
    write_columns(out, &["tenant", "incident", "reaches"], &rows, p, width);
    out.push('\n');
}

fn render_skipped(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    if report.skipped.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{} {}",
        p.heading("SKIPPED INPUT"),
        p.severity(
            Severity::High,
            "(not audited: the findings above cover only part of the input)"
        )
    );
    for s in &report.skipped {
        let line = format!("{}:{}:{}: {}", s.file, s.line, s.column, s.error);
        let _ = writeln!(out, "  {}", wrap(&line, width.saturating_sub(2), "    "));
    }
    out.push('\n');
}

/// Left-aligned columns separated by two spaces, the header bold; the last column wraps at `width`
/// (continuation lines indented to it). Widths count characters.
fn write_columns<const N: usize>(
    out: &mut String,
    header: &[&str; N],
    rows: &[[String; N]],
    p: &Palette,
    width: usize,
) {
    let mut widths = [0usize; N];
    for (i, h) in header.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let lead: usize = 2 + widths
        .iter()
        .take(N.saturating_sub(1))
        .map(|w| w + 2)
        .sum::<usize>();
    let indent = " ".repeat(lead);
    let line = |cells: &[String]| -> String {
        let mut s = String::from("  ");
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                s.push_str(&wrap(cell, width.saturating_sub(lead), &indent));
            } else {
                let pad = widths[i].saturating_sub(cell.chars().count());
                s.push_str(cell);
                s.extend(std::iter::repeat_n(' ', pad + 2));
            }
        }
        s.trim_end().to_string()
    };
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let _ = writeln!(out, "{}", p.bold(&line(&head)));
    for row in rows {
        let _ = writeln!(out, "{}", line(row));
    }
}

fn join_or(items: &[String], empty: &str) -> String {
    if items.is_empty() {
        empty.to_string()
    } else {
        items.join(", ")
    }
}

fn count_phrase(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// "12 findings: 2 critical, 5 high, 4 medium, 1 info; 1 accepted; 4 tenants, 6 nodes, 32 GPUs".
/// Counts are of findings not accepted; severities with no finding are left out.
pub fn summary_line(summary: &Summary, skipped: usize) -> String {
    let counts: &SeverityCounts = &summary.findings;
    let total: usize = Severity::ALL.iter().map(|s| counts.get(*s)).sum();
    let mut line = count_phrase(total, "finding");
    let parts: Vec<String> = Severity::ALL
        .iter()
        .filter(|s| counts.get(**s) > 0)
        .map(|s| format!("{} {}", counts.get(*s), s.as_str()))
        .collect();
    if !parts.is_empty() {
        line.push_str(": ");
        line.push_str(&parts.join(", "));
    }
    if summary.accepted > 0 {
        let _ = write!(line, "; {} accepted", summary.accepted);
    }
    let _ = write!(
        line,
        "; {}, {}, {}",
        count_phrase(summary.tenants, "tenant"),
        count_phrase(summary.nodes, "node"),
        count_phrase(summary.gpus, "GPU")
    );
    if skipped > 0 {
        let _ = write!(
            line,
            "; {} skipped: partial input",
            count_phrase(skipped, "document")
        );
    }
    line
}
