//! A short Markdown summary for a pull-request comment or a CI job summary: the verdict, a table of
//! the findings (most severe first, at most [`MAX_ROWS`]), and the rules they come from, each row
//! linking to its rule's entry.
//!
//! Text from the input is escaped so that it stays text: no HTML, link, emphasis or extra table
//! cell can come from an object's name.

use crate::table::{hidden_line, summary_line, Hidden};
use crate::{AuditReport, RuleDoc};
use gpu_trust_model::Severity;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Rows of the findings table at most; the rest are counted.
pub const MAX_ROWS: usize = 50;

/// How to render the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// Findings at or above this severity that are not accepted fail the run; `None`: never.
    pub fail_at: Option<Severity>,
    /// Findings the caller left out of the report it hands over.
    pub hidden: Hidden,
}

/// The report as Markdown, ending in a newline.
pub fn render(report: &AuditReport, rules: &[RuleDoc<'_>], options: &MarkdownOptions) -> String {
    let mut out = String::from("### gpu-trust audit\n\n");
    let failing = report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none())
        .filter(|f| options.fail_at.is_some_and(|floor| f.severity >= floor))
        .count();
    let verdict = match options.fail_at {
        Some(floor) if failing > 0 => format!(
            "**Fails**: {failing} finding{} at or above {} that {} not accepted.",
            if failing == 1 { "" } else { "s" },
            floor.as_str(),
            if failing == 1 { "is" } else { "are" }
        ),
        Some(floor) => format!("**Passes**: no finding at or above {}.", floor.as_str()),
        None => "**Reports only** (--fail-on never).".to_string(),
    };
    let _ = writeln!(out, "{verdict}\n");
    let _ = writeln!(
        out,
        "{}\n",
        inline(&summary_line(&report.summary, report.skipped.len()))
    );
    let _ = writeln!(out, "_{}_\n", inline(&report.advisory_data.line()));
    if !report.skipped.is_empty() {
        let _ = writeln!(
            out,
            "**Partial input**: {} document{} could not be used and {} left out of the audit.\n",
            report.skipped.len(),
            if report.skipped.len() == 1 { "" } else { "s" },
            if report.skipped.len() == 1 {
                "was"
            } else {
                "were"
            }
        );
    }

    if !report.findings.is_empty() {
        out.push_str("| severity | rule | tenants | nodes | finding |\n");
        out.push_str("| --- | --- | --- | --- | --- |\n");
        for f in report.findings.iter().take(MAX_ROWS) {
            let severity = if f.accepted.is_some() {
                format!("{} (accepted)", f.severity.as_str())
            } else {
                f.severity.as_str().to_string()
            };
            let _ = writeln!(
                out,
                "| {severity} | [{}](#{}) {} | {} | {} | {} |",
                f.rule,
                f.rule.to_ascii_lowercase(),
                inline(&f.name),
                inline(&listed(&f.tenants)),
                inline(&listed(&f.nodes)),
                inline(&f.message)
            );
        }
        if report.findings.len() > MAX_ROWS {
            let _ = writeln!(
                out,
                "\n{} more findings are in the full report (JSON or SARIF).",
                report.findings.len() - MAX_ROWS
            );
        }
        out.push('\n');
    }
    if let Some(line) = hidden_line(&options.hidden) {
        let _ = writeln!(out, "_{}_\n", inline(&line));
    }

    let used: BTreeSet<&str> = report
        .findings
        .iter()
        .take(MAX_ROWS)
        .map(|f| f.rule.as_str())
        .collect();
    if !used.is_empty() {
        out.push_str("#### Rules\n\n");
        for rule in rules.iter().filter(|r| used.contains(r.code)) {
            let _ = writeln!(
                out,
                "##### {}\n\n**{}** ({} layer; severity {}): {}{} `gpu-trust explain {}` says what \
                 it detects, why it matters and how to fix it.\n",
                rule.code,
                rule.name,
                rule.layer.as_str(),
                inline(&rule.severity_rule),
                inline(rule.summary.trim_end()),
                if rule.summary.trim_end().ends_with('.') {
                    ""
                } else {
                    "."
                },
                rule.code
            );
        }
    }
    out
}

/// At most five names, then how many more.
fn listed(items: &[String]) -> String {
    const MAX: usize = 5;
    let mut s = items
        .iter()
        .take(MAX)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > MAX {
        let _ = write!(s, " and {} more", items.len() - MAX);
    }
    s
}

/// `text` as inline Markdown that renders as itself: the marks that open emphasis, code, links,
/// strikethrough or a table cell are backslash-escaped, and `:` too (no autolink); `<`, `>` and
/// `&` become entities (no HTML); line breaks and control characters become spaces, so a table row
/// stays one row.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | ':' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
