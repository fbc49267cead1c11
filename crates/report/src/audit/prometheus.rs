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

/// Tenants with findings series of their own, at most (the first by name); the others count under
/// [`MORE_TENANTS`]. With the rules, this bounds `gpu_trust_findings` to rules x (this + 2) series.
pub const MAX_TENANT_SERIES: usize = 200;
/// The tenant label of the tenants past [`MAX_TENANT_SERIES`].
pub const MORE_TENANTS: &str = "(more tenants)";

/// The upper bounds of the audit duration histogram's buckets, in seconds.
pub const DURATION_BUCKETS: &[f64] =
    &[0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];

/// What `gpu-trust serve` counts from its start, served before the first audit too.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Process {
    /// The binary's version.
    pub version: String,
    /// Audits done.
    pub audits: u64,
    /// Discovery requests, lists and watches that failed.
    pub watch_errors: u64,
    /// Per bucket of [`DURATION_BUCKETS`], audits that took at most that long (not cumulative).
    pub duration_counts: Vec<u64>,
    /// Audits longer than the last bucket.
    pub duration_over: u64,
    /// All audit durations added up, seconds.
    pub duration_sum: f64,
    /// When the last complete audit ended, seconds since the Unix epoch (0 before the first): a
    /// partial audit (a kind that cannot be read) is not a success.
    pub last_success_seconds: f64,
    /// Report objects written, and writes that failed (with `--write-reports`).
    pub report_writes: u64,
    pub report_write_errors: u64,
}

impl Process {
    /// Counts one audit that took `seconds`, ended at `ended`, complete or partial.
    pub fn audited(&mut self, seconds: f64, ended: f64, complete: bool) {
        self.audits += 1;
        self.duration_sum += seconds;
        if complete {
            self.last_success_seconds = ended;
        }
        if self.duration_counts.len() != DURATION_BUCKETS.len() {
            self.duration_counts = vec![0; DURATION_BUCKETS.len()];
        }
        match DURATION_BUCKETS.iter().position(|b| seconds <= *b) {
            Some(i) => self.duration_counts[i] += 1,
            None => self.duration_over += 1,
        }
    }
}

fn typed(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The process's metrics: build, audits (a counter and a duration histogram), failed lists and
/// watches, the time of the last successful audit, report writes.
pub fn render_process(p: &Process) -> String {
    let mut out = String::new();
    typed(
        &mut out,
        "gpu_trust_build_info",
        "gauge",
        "1, with the version of gpu-trust as a label.",
    );
    let _ = writeln!(
        out,
        "gpu_trust_build_info{{version=\"{}\"}} 1",
        label(&p.version)
    );
    typed(
        &mut out,
        "gpu_trust_audits_total",
        "counter",
        "Audits done since gpu-trust started.",
    );
    let _ = writeln!(out, "gpu_trust_audits_total {}", p.audits);
    typed(
        &mut out,
        "gpu_trust_audit_duration_seconds",
        "histogram",
        "How long audits took, from the snapshot of the cluster to the rendered report.",
    );
    let mut cumulative = 0;
    for (i, le) in DURATION_BUCKETS.iter().enumerate() {
        cumulative += p.duration_counts.get(i).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "gpu_trust_audit_duration_seconds_bucket{{le=\"{le}\"}} {cumulative}"
        );
    }
    cumulative += p.duration_over;
    let _ = writeln!(
        out,
        "gpu_trust_audit_duration_seconds_bucket{{le=\"+Inf\"}} {cumulative}"
    );
    let _ = writeln!(
        out,
        "gpu_trust_audit_duration_seconds_sum {}",
        p.duration_sum
    );
    let _ = writeln!(out, "gpu_trust_audit_duration_seconds_count {cumulative}");
    typed(
        &mut out,
        "gpu_trust_watch_errors_total",
        "counter",
        "Discovery requests, lists and watches of the API server that failed (each waits a backoff delay before the next try).",
    );
    let _ = writeln!(out, "gpu_trust_watch_errors_total {}", p.watch_errors);
    typed(
        &mut out,
        "gpu_trust_last_successful_audit_timestamp_seconds",
        "gauge",
        "When the last complete audit ended, in seconds since the Unix epoch (0 before the first; a partial audit does not count).",
    );
    let _ = writeln!(
        out,
        "gpu_trust_last_successful_audit_timestamp_seconds {:.3}",
        p.last_success_seconds
    );
    typed(
        &mut out,
        "gpu_trust_report_writes_total",
        "counter",
        "Report objects created, replaced or deleted in the cluster (--write-reports).",
    );
    let _ = writeln!(out, "gpu_trust_report_writes_total {}", p.report_writes);
    typed(
        &mut out,
        "gpu_trust_report_write_errors_total",
        "counter",
        "Syncs of the report objects that failed (--write-reports).",
    );
    let _ = writeln!(
        out,
        "gpu_trust_report_write_errors_total {}",
        p.report_write_errors
    );
    out
}

fn group_level(level: gpu_trust_model::report::GroupLevel) -> &'static str {
    use gpu_trust_model::report::GroupLevel;
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
pub fn render(report: &AuditReport, coverage: &Coverage) -> String {
    let mut out = String::new();

    family(
        &mut out,
        "gpu_trust_findings",
        "Findings of the last audit that are not accepted, by rule, severity and tenant (a finding between two tenants counts for each; tenants past the first MAX_TENANT_SERIES by name count under tenant=\"(more tenants)\").",
    );
    // Tenants with series of their own: the first MAX_TENANT_SERIES by name, so the label's values
    // are names, never positions, and their number is bounded.
    let mut named: Vec<&str> = report
        .findings
        .iter()
        .flat_map(|f| f.tenants.iter().map(String::as_str))
        .collect();
    named.sort_unstable();
    named.dedup();
    named.truncate(MAX_TENANT_SERIES);
    let mut findings: BTreeMap<(String, &str, &str), u64> = BTreeMap::new();
    let mut accepted: BTreeMap<(String, &str), u64> = BTreeMap::new();
    let mut open: BTreeMap<&str, u64> = BTreeMap::new();
    for f in &report.findings {
        if f.accepted.is_some() {
            *accepted
                .entry((f.rule.clone(), f.severity.as_str()))
                .or_default() += 1;
            continue;
        }
        *open.entry(f.severity.as_str()).or_default() += 1;
        let mut tenants: Vec<&str> = f
            .tenants
            .iter()
            .map(|t| {
                if named.binary_search(&t.as_str()).is_ok() {
                    t.as_str()
                } else {
                    MORE_TENANTS
                }
            })
            .collect();
        tenants.dedup();
        if tenants.is_empty() {
            tenants.push("");
        }
        for t in tenants {
            *findings
                .entry((f.rule.clone(), f.severity.as_str(), t))
                .or_default() += 1;
        }
    }
    for ((rule, severity, tenant), n) in &findings {
        let _ = writeln!(
            out,
            "gpu_trust_findings{{rule=\"{}\",severity=\"{severity}\",tenant=\"{}\"}} {n}",
            label(rule),
            label(tenant)
        );
    }

    family(
        &mut out,
        "gpu_trust_findings_accepted",
        "Findings of the last audit that the policy accepts, by rule and severity.",
    );
    for ((rule, severity), n) in &accepted {
        let _ = writeln!(
            out,
            "gpu_trust_findings_accepted{{rule=\"{}\",severity=\"{severity}\"}} {n}",
            label(rule)
        );
    }

    family(
        &mut out,
        "gpu_trust_open_findings",
        "Findings of the last audit that are not accepted, by severity.",
    );
    for severity in ["critical", "high", "medium", "low", "info"] {
        let _ = writeln!(
            out,
            "gpu_trust_open_findings{{severity=\"{severity}\"}} {}",
            open.get(severity).copied().unwrap_or(0)
        );
    }

    // What tenants share, summed over the report's groups by level and what is shared: the group
    // ids are positions in one report and renumber between audits, so they are no label.
    family(
        &mut out,
        "gpu_trust_shared_tenant_pairs",
        "Pairs of tenants that share a thing (memory-pool, fault-domain, gpu, host, control-plane...), summed over the groups of the report at each level.",
    );
    let mut pairs: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut pooled: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &report.groups {
        let level = group_level(g.level);
        for s in &g.shares {
            *pairs.entry((level, s.as_str())).or_default() += g.pairs;
        }
        let pools = g
            .shares
            .iter()
            .any(|s| s == "memory-pool" || s == "fault-domain");
        if pools && g.pairs > 0 {
            for t in &g.tenants {
                let t = if named.binary_search(&t.as_str()).is_ok() {
                    t.as_str()
                } else {
                    MORE_TENANTS
                };
                *pooled.entry(t).or_default() += 1;
            }
        }
    }
    for ((level, shares), n) in &pairs {
        let _ = writeln!(
            out,
            "gpu_trust_shared_tenant_pairs{{level=\"{level}\",shares=\"{}\"}} {n}",
            label(shares)
        );
    }
    family(
        &mut out,
        "gpu_trust_tenant_pooled_groups",
        "Groups of the report in which a tenant shares a memory pool or a fault domain with another tenant.",
    );
    for (tenant, n) in &pooled {
        let _ = writeln!(
            out,
            "gpu_trust_tenant_pooled_groups{{tenant=\"{}\"}} {n}",
            label(tenant)
        );
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
