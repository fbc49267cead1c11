//! The report as Prometheus metrics (text exposition format 0.0.4,
//! https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format), for
//! `gpu-trust serve`'s `/metrics`: findings by rule, severity, layer and tenant, what tenants share
//! per group (pairs counted, never listed), and what part of the cluster the audit covered.

use crate::AuditReport;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What the audit read, for the coverage metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Kinds read whole.
    pub kinds_read: usize,
    /// The API paths of kinds that could not be read (forbidden, failed).
    pub kinds_unreadable: Vec<String>,
    /// Kinds gpu-trust reads that the server does not serve.
    pub kinds_absent: usize,
    /// Objects read.
    pub objects: usize,
}

/// How the audit was run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    /// Audits done since the start.
    pub audits: u64,
    /// When the last audit ended, in seconds since the Unix epoch.
    pub timestamp_seconds: f64,
    /// How long it took (read to report), in seconds.
    pub duration_seconds: f64,
}

fn group_level(level: gpu_trust_rules::report::GroupLevel) -> &'static str {
    use gpu_trust_rules::report::GroupLevel;
    match level {
        GroupLevel::Device => "device",
        GroupLevel::MigGpu => "mig-gpu",
        GroupLevel::Node => "node",
        GroupLevel::ControlPlane => "control-plane",
    }
}

/// A label value as the format writes it: backslash, double quote and line feed escaped.
fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn family(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
}

/// The metrics of one audit. Series are sorted, so the same report gives the same text.
pub fn render(report: &AuditReport, coverage: &Coverage, run: &Run) -> String {
    let mut out = String::new();

    family(
        &mut out,
        "gpu_trust_findings",
        "Findings of the last audit that are not accepted, by rule, severity, layer and tenant (a finding between two tenants counts for each).",
    );
    let mut findings: BTreeMap<(String, String, &str, &str, String), u64> = BTreeMap::new();
    let mut accepted: BTreeMap<(String, &str, &str), u64> = BTreeMap::new();
    for f in &report.findings {
        if f.accepted.is_some() {
            *accepted
                .entry((f.rule.clone(), f.severity.as_str(), f.layer.as_str()))
                .or_default() += 1;
            continue;
        }
        let tenants: Vec<String> = if f.tenants.is_empty() {
            vec![String::new()]
        } else {
            f.tenants.clone()
        };
        for t in tenants {
            *findings
                .entry((
                    f.rule.clone(),
                    f.name.clone(),
                    f.severity.as_str(),
                    f.layer.as_str(),
                    t,
                ))
                .or_default() += 1;
        }
    }
    for ((rule, name, severity, layer, tenant), n) in &findings {
        let _ = writeln!(
            out,
            "gpu_trust_findings{{rule=\"{}\",name=\"{}\",severity=\"{severity}\",layer=\"{layer}\",tenant=\"{}\"}} {n}",
            label(rule),
            label(name),
            label(tenant)
        );
    }

    family(
        &mut out,
        "gpu_trust_findings_accepted",
        "Findings of the last audit that the policy accepts, by rule, severity and layer.",
    );
    for ((rule, severity, layer), n) in &accepted {
        let _ = writeln!(
            out,
            "gpu_trust_findings_accepted{{rule=\"{}\",severity=\"{severity}\",layer=\"{layer}\"}} {n}",
            label(rule)
        );
    }

    family(
        &mut out,
        "gpu_trust_findings_total",
        "Findings of the last audit that are not accepted, by severity.",
    );
    let c = &report.summary.findings;
    for (severity, n) in [
        ("critical", c.critical),
        ("high", c.high),
        ("medium", c.medium),
        ("low", c.low),
        ("info", c.info),
    ] {
        let _ = writeln!(
            out,
            "gpu_trust_findings_total{{severity=\"{severity}\"}} {n}"
        );
    }

    // What tenants share, per shared thing (a GPU or MIG instance group, a MIG GPU, a node group, the
    // API server): bounded by tenants plus groups, never by pairs of tenants.
    family(
        &mut out,
        "gpu_trust_shared_tenant_pairs",
        "Pairs of tenants that share a thing (memory-pool, fault-domain, gpu, host, control-plane...) in one group of the report.",
    );
    let mut lines: Vec<String> = Vec::new();
    for g in &report.groups {
        let level = group_level(g.level);
        for s in &g.shares {
            lines.push(format!(
                "gpu_trust_shared_tenant_pairs{{group=\"{}\",level=\"{level}\",shares=\"{}\"}} {}",
                label(&g.id),
                label(s),
                g.pairs
            ));
        }
    }
    lines.sort();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    family(
        &mut out,
        "gpu_trust_group_tenant",
        "1 for each tenant of a group whose tenants share a memory pool or a fault domain (the group's shares are in gpu_trust_shared_tenant_pairs).",
    );
    let mut lines: Vec<String> = Vec::new();
    for g in &report.groups {
        let pooled = g
            .shares
            .iter()
            .any(|s| s == "memory-pool" || s == "fault-domain");
        if !pooled || g.pairs == 0 {
            continue;
        }
        for t in &g.tenants {
            lines.push(format!(
                "gpu_trust_group_tenant{{group=\"{}\",level=\"{}\",tenant=\"{}\"}} 1",
                label(&g.id),
                group_level(g.level),
                label(t)
            ));
        }
    }
    lines.sort();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }

    family(
        &mut out,
        "gpu_trust_coverage_layer",
        "1 for each layer's coverage state in the last audit (evaluated, partial, not evaluated, not in play).",
    );
    for l in &report.coverage.layers {
        let _ = writeln!(
            out,
            "gpu_trust_coverage_layer{{layer=\"{}\",status=\"{}\"}} 1",
            l.layer.as_str(),
            l.status.as_str()
        );
    }

    family(
        &mut out,
        "gpu_trust_coverage_kinds",
        "Kinds gpu-trust reads, by state: read, unreadable (forbidden or failed: the audit is partial), absent (not served).",
    );
    let _ = writeln!(
        out,
        "gpu_trust_coverage_kinds{{state=\"read\"}} {}",
        coverage.kinds_read
    );
    let _ = writeln!(
        out,
        "gpu_trust_coverage_kinds{{state=\"unreadable\"}} {}",
        coverage.kinds_unreadable.len()
    );
    let _ = writeln!(
        out,
        "gpu_trust_coverage_kinds{{state=\"absent\"}} {}",
        coverage.kinds_absent
    );
    family(
        &mut out,
        "gpu_trust_coverage_unreadable",
        "1 for each kind that could not be read, by API path.",
    );
    let mut unreadable = coverage.kinds_unreadable.clone();
    unreadable.sort();
    for path in unreadable {
        let _ = writeln!(
            out,
            "gpu_trust_coverage_unreadable{{path=\"{}\"}} 1",
            label(&path)
        );
    }
    family(
        &mut out,
        "gpu_trust_coverage_skipped_documents",
        "Documents that could not be used (the report lists them under skipped).",
    );
    let _ = writeln!(
        out,
        "gpu_trust_coverage_skipped_documents {}",
        report.skipped.len()
    );
    family(
        &mut out,
        "gpu_trust_objects",
        "Objects read for the last audit.",
    );
    let _ = writeln!(out, "gpu_trust_objects {}", coverage.objects);

    family(
        &mut out,
        "gpu_trust_audits",
        "Audits done since gpu-trust started.",
    );
    let _ = writeln!(out, "gpu_trust_audits {}", run.audits);
    family(
        &mut out,
        "gpu_trust_last_audit_timestamp_seconds",
        "When the last audit ended, in seconds since the Unix epoch.",
    );
    let _ = writeln!(
        out,
        "gpu_trust_last_audit_timestamp_seconds {:.3}",
        run.timestamp_seconds
    );
    family(
        &mut out,
        "gpu_trust_last_audit_duration_seconds",
        "How long the last audit took, from its snapshot of the cluster to the report.",
    );
    let _ = writeln!(
        out,
        "gpu_trust_last_audit_duration_seconds {:.6}",
        run.duration_seconds
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
