//! Two tenants and everything they share (`gpu-trust audit --pair A B`): the groups where they meet
//! and how surely, every finding that covers the pair with what it says of the pair alone (its own
//! certainty, severity, message and fix), and every other finding that names either tenant. Read from an
//! audit run with [`gpu_trust_rules::AuditOptions::pair`]; as text or as `gpu-trust/pair/v1` JSON.

use crate::text::{e, pretty_json, wrap};
use crate::AuditReport;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::report::{AcceptedEntry, Coverage, Finding, GroupEntry, GroupLevel};
use gpu_trust_model::{Certainty, Layer, Severity, Trust};
use serde::Serialize;
use std::fmt::Write as _;

pub const SCHEMA: &str = "gpu-trust/pair/v1";

/// The pair view as JSON (`gpu-trust/pair/v1`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairView<'r> {
    pub schema: &'static str,
    /// The two tenants, in the order asked.
    pub tenants: [&'r str; 2],
    pub trust: Trust,
    /// Whether the audit evaluated every layer the input puts in play (`coverage` of the audit).
    pub coverage: &'r Coverage,
    /// Where they meet: each group both are in and meet in.
    pub groups: Vec<PairGroupView<'r>>,
    /// The findings of pairwise rules that cover the pair, most severe (for the pair) first.
    pub findings: Vec<PairFindingView<'r>>,
    /// Every finding of a rule that is not about pairs and names one or both of them: about one of
    /// them alone (a privileged pod, a namespace without Pod Security), about the nodes they run on
    /// (a driver, an exporter) or about their contracts.
    pub tenant_findings: Vec<TenantFindingView<'r>>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairGroupView<'r> {
    pub id: &'r str,
    pub level: GroupLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<Mechanism>,
    /// The group's nodes (for a permitted group, where a template may be placed).
    pub nodes: &'r [String],
    /// How surely these two meet there, and why.
    pub certainty: Certainty,
    pub reason: &'r str,
    pub shares: &'r [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub separated_by: &'r [String],
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairFindingView<'r> {
    pub rule: &'r str,
    pub name: &'r str,
    pub layer: Layer,
    /// The severity and certainty of this pair (the finding's own may be those of another pair).
    pub severity: Severity,
    pub certainty: Certainty,
    pub reason: &'r str,
    pub groups: &'r [String],
    pub nodes: &'r [String],
    /// What the finding says of this pair alone, and its fix.
    pub message: &'r str,
    pub remediation: &'r str,
    pub accepted: Option<&'r AcceptedEntry>,
    /// The finding's key in the audit report.
    pub key: &'r str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantFindingView<'r> {
    /// The first of the two the finding names, in the order asked.
    pub tenant: &'r str,
    /// Each of the two the finding names (one or both), in the order asked.
    pub tenants: Vec<&'r str>,
    pub rule: &'r str,
    pub name: &'r str,
    pub layer: Layer,
    pub severity: Severity,
    pub certainty: Certainty,
    pub nodes: &'r [String],
    pub message: &'r str,
    pub remediation: &'r str,
    pub accepted: Option<&'r AcceptedEntry>,
    pub key: &'r str,
}

/// The pair view of a report audited with a pair to explain; `None` without one.
pub fn view(report: &AuditReport) -> Option<PairView<'_>> {
    let pair = report.pair.as_ref()?;
    let groups = pair
        .groups
        .iter()
        .filter_map(|g| {
            let entry: &GroupEntry = report.groups.iter().find(|x| x.id == g.id)?;
            Some(PairGroupView {
                id: &entry.id,
                level: entry.level,
                mechanism: entry.mechanism,
                nodes: &entry.nodes,
                certainty: g.certainty,
                reason: &g.reason,
                shares: &entry.shares,
                separated_by: &entry.separated_by,
            })
        })
        .collect();
    let mut findings: Vec<PairFindingView<'_>> = report
        .findings
        .iter()
        .filter_map(|f| {
            let x = f.explained.as_ref()?;
            Some(PairFindingView {
                rule: &f.rule,
                name: &f.name,
                layer: f.layer,
                severity: x.severity,
                certainty: x.certainty,
                reason: &x.reason,
                groups: &x.groups,
                nodes: &x.nodes,
                message: &x.message,
                remediation: &x.remediation,
                accepted: x.accepted.as_ref(),
                key: &f.key,
            })
        })
        .collect();
    findings.sort_by(|a, b| {
        (
            a.accepted.is_some(),
            std::cmp::Reverse(a.severity),
            a.certainty,
            a.rule,
        )
            .cmp(&(
                b.accepted.is_some(),
                std::cmp::Reverse(b.severity),
                b.certainty,
                b.rule,
            ))
    });
    let tenant_findings = report
        .findings
        .iter()
        .filter(|f| f.pairs.is_none())
        .filter_map(|f: &Finding| {
            let tenants: Vec<&str> = pair
                .tenants
                .iter()
                .filter(|t| f.tenants.contains(t))
                .map(String::as_str)
                .collect();
            Some(TenantFindingView {
                tenant: tenants.first()?,
                tenants,
                rule: &f.rule,
                name: &f.name,
                layer: f.layer,
                severity: f.severity,
                certainty: f.certainty,
                nodes: &f.nodes,
                message: &f.message,
                remediation: &f.remediation,
                accepted: f.accepted.as_ref(),
                key: &f.key,
            })
        })
        .collect();
    Some(PairView {
        schema: SCHEMA,
        tenants: [&pair.tenants[0], &pair.tenants[1]],
        trust: pair.trust,
        coverage: &report.coverage,
        groups,
        findings,
        tenant_findings,
    })
}

/// The pair view as pretty JSON ending in a newline.
pub fn json(view: &PairView<'_>) -> Result<String, serde_json::Error> {
    pretty_json(view)
}

/// The pair view as terminal text, wrapped at `width`, ending in a newline.
pub fn table(view: &PairView<'_>, width: usize) -> String {
    let mut out = String::new();
    let [a, b] = view.tenants;
    let _ = writeln!(out, "PAIR {} and {} (trust {})", e(a), e(b), view.trust);
    if !view.coverage.complete {
        let _ = writeln!(
            out,
            "  {}",
            wrap(
                "partial audit: some layer in play could not be evaluated (the audit report's coverage says which); what follows may be incomplete",
                width.saturating_sub(2),
                "  "
            )
        );
    }
    out.push('\n');
    let _ = writeln!(out, "SHARED ({})", view.groups.len());
    if view.groups.is_empty() {
        let _ = writeln!(out, "  nothing: they meet on no GPU, node or API server");
    }
    for g in &view.groups {
        let what = match (g.level, g.mechanism) {
            (GroupLevel::Device, Some(m)) if m.is_mig() => format!("one {m} MIG instance"),
            (GroupLevel::Device, Some(m)) => format!("a {m} GPU"),
            (GroupLevel::Device, None) => "a GPU".to_string(),
            (GroupLevel::MigGpu, _) => "different MIG instances of one GPU".to_string(),
            (GroupLevel::Node, _) => "a node".to_string(),
            (GroupLevel::ControlPlane, _) => "the API server".to_string(),
        };
        let on = if g.nodes.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = g.nodes.iter().take(5).map(|n| e(n)).collect();
            let more = g.nodes.len().saturating_sub(5);
            if more > 0 {
                format!(" on {} and {more} more", names.join(", "))
            } else {
                format!(" on {}", names.join(", "))
            }
        };
        let line = format!(
            "{}  {what}{on}: {} ({}); shares {}",
            e(g.id),
            g.certainty,
            g.reason,
            g.shares.join(", ")
        );
        let _ = writeln!(out, "  {}", wrap(&line, width.saturating_sub(2), "      "));
    }
    out.push('\n');
    heading(&mut out, "FINDINGS FOR THE PAIR", view.findings.len());
    for f in &view.findings {
        let accepted = if f.accepted.is_some() {
            " ACCEPTED"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:<8} {} {} [{}]{accepted}",
            f.severity.as_str().to_ascii_uppercase(),
            f.rule,
            f.name,
            f.certainty
        );
        body(&mut out, f.message, f.remediation, f.accepted, width);
    }
    out.push('\n');
    heading(
        &mut out,
        "FINDINGS ABOUT EITHER OF THEM",
        view.tenant_findings.len(),
    );
    for f in &view.tenant_findings {
        let accepted = if f.accepted.is_some() {
            " ACCEPTED"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:<8} {} {} [{}] {}{accepted}",
            f.severity.as_str().to_ascii_uppercase(),
            f.rule,
            f.name,
            f.certainty,
            e(&f.tenants.join(", "))
        );
        body(&mut out, f.message, f.remediation, f.accepted, width);
    }
    out
}

/// A section's title with its count, and "none" under it when empty.
fn heading(out: &mut String, title: &str, count: usize) {
    let _ = writeln!(out, "{title} ({count})");
    if count == 0 {
        let _ = writeln!(out, "  none");
    }
}

fn body(
    out: &mut String,
    message: &str,
    remediation: &str,
    accepted: Option<&AcceptedEntry>,
    width: usize,
) {
    let indent = "    ";
    let _ = writeln!(
        out,
        "{indent}{}",
        wrap(&e(message), width.saturating_sub(indent.len()), indent)
    );
    let fix = format!("fix: {}", e(remediation));
    let _ = writeln!(
        out,
        "{indent}{}",
        wrap(&fix, width.saturating_sub(9), "         ")
    );
    if let Some(a) = accepted {
        let until = a
            .until
            .as_deref()
            .map(|u| format!(" (until {})", e(u)))
            .unwrap_or_default();
        let line = format!("accepted: {}{until}", e(&a.reason));
        let _ = writeln!(
            out,
            "{indent}{}",
            wrap(&line, width.saturating_sub(14), "              ")
        );
    }
    out.push('\n');
}

/// Lines for standard error: each tenant's acceptance annotations that accept nothing in a pairwise
/// finding, and why (the other tenant's annotation is missing, or some of its own workloads lack
/// one), located at the annotation.
pub fn one_sided_lines(report: &AuditReport) -> Vec<String> {
    let mut out = Vec::new();
    for f in &report.findings {
        for o in &f.one_sided_acceptances {
            let at = o
                .sources
                .first()
                .map(|s| format!("{}:{}:{}: ", s.file, s.line, s.column))
                .unwrap_or_default();
            out.push(format!("{at}warning: {}: {}", f.rule, o.message));
        }
    }
    out.sort();
    out.dedup();
    out
}
