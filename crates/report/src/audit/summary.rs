//! `gpu-trust audit --summary`: one row per tenant (the worst severity of its open findings, how
//! many, what it shares, the first action that concerns it) and one per GPU node pool, as
//! `trivy k8s --report summary` prints one row per resource; for a reader who decides, not one who
//! fixes a finding.

use crate::AuditReport;
use gpu_trust_model::report::{Finding, GroupEntry, GroupLevel, PoolEntry};
use gpu_trust_model::Severity;
use std::collections::BTreeSet;

/// What a group is, in a few words: `time-slicing GPU`, `MIG GPU`, `node`, `API server`.
pub(crate) fn group_what(g: &GroupEntry) -> String {
    let what = match (g.level, g.mechanism) {
        (GroupLevel::Device, Some(m)) if m.is_mig() => format!("{m} MIG instance"),
        (GroupLevel::Device, Some(m)) => format!("{m} GPU"),
        (GroupLevel::Device, None) => "GPU".to_string(),
        (GroupLevel::MigGpu, _) => "MIG GPU".to_string(),
        (GroupLevel::Node, _) => "node".to_string(),
        (GroupLevel::ControlPlane, _) => "API server".to_string(),
    };
    if g.permitted {
        format!("{what} (permitted)")
    } else {
        what
    }
}

/// One tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantRow {
    pub tenant: String,
    /// The worst severity of its open findings; `None` when it has none.
    pub worst: Option<Severity>,
    pub open: usize,
    /// The first action (`a1`) that closes one of its findings.
    pub action: Option<String>,
    /// What it shares with another tenant: `time-slicing GPU`, `node`, `API server`...
    pub shares: Vec<String>,
}

/// One GPU node pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolRow {
    /// Its nodes: the first and how many more.
    pub nodes: String,
    /// `8 H100-SXM5-80GB`.
    pub gpus: String,
    /// How a whole GPU is shared there: `time-slicing x4`, `exclusive, MIG`.
    pub sharing: String,
    pub worst: Option<Severity>,
    pub open: usize,
    pub tenants: Vec<String>,
}

fn open(report: &AuditReport) -> impl Iterator<Item = &Finding> {
    report.findings.iter().filter(|f| f.accepted.is_none())
}

/// A row per tenant of the report, in its order.
pub fn tenants(report: &AuditReport) -> Vec<TenantRow> {
    report
        .tenants
        .iter()
        .map(|t| {
            let mine: Vec<&Finding> = open(report)
                .filter(|f| f.tenants.contains(&t.name))
                .collect();
            let ids: BTreeSet<String> = mine.iter().map(|f| f.id()).collect();
            let action = report
                .actions
                .iter()
                .flatten()
                .find(|a| a.closes.iter().any(|k| ids.contains(k)))
                .map(|a| a.id.clone());
            let mut shares: Vec<String> = Vec::new();
            for g in report.groups.iter().filter(|g| g.tenants.contains(&t.name)) {
                let what = group_what(g);
                if !shares.contains(&what) {
                    shares.push(what);
                }
            }
            TenantRow {
                tenant: t.name.clone(),
                worst: mine.iter().map(|f| f.severity).max(),
                open: mine.len(),
                action,
                shares,
            }
        })
        .collect()
}

/// A row per GPU node pool of the report.
pub fn pools(report: &AuditReport) -> Vec<PoolRow> {
    report
        .pools
        .iter()
        .map(|p| {
            let mine: Vec<&Finding> = open(report)
                .filter(|f| f.nodes.iter().any(|n| p.nodes.contains(n)))
                .collect();
            PoolRow {
                nodes: nodes(p),
                gpus: format!("{} {}", p.gpus, p.gpu),
                sharing: sharing(p),
                worst: mine.iter().map(|f| f.severity).max(),
                open: mine.len(),
                tenants: p.tenants.clone(),
            }
        })
        .collect()
}

fn nodes(p: &PoolEntry) -> String {
    match p.nodes.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} +{}", rest.len()),
    }
}

fn sharing(p: &PoolEntry) -> String {
    let mut s = p.mechanism.to_string();
    if let Some(r) = p.replicas {
        s.push_str(&format!(" x{r}"));
    }
    if p.mig && !p.mechanism.is_mig() {
        s.push_str(", MIG");
    }
    s
}
