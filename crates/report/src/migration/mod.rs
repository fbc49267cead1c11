//! `gpu-trust plan FILE --current CLUSTER`: the migration from the cluster that runs now to the plan
//! ([`gpu_trust_planner::migrate::Migration`]), with the audit of the planned state attached; one
//! module per format (table, JSON, the bash script).

pub mod json;
pub mod script;
pub mod table;

use gpu_trust_model::report::{AuditReport, Summary};
use gpu_trust_model::Severity;
use gpu_trust_planner::migrate::{ConfigClash, DriverRisk, NodeChange};
use serde::Serialize;

/// The audit of the planned state (the plan's snapshot, audited against the plan's policy).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetAudit {
    pub summary: Summary,
    /// The threshold `clean` is judged at (the audit's default `--fail-on`).
    pub fail_on: Severity,
    /// No finding at or above `failOn` that no acceptance covers.
    pub clean: bool,
}

impl TargetAudit {
    /// What an audit report of the planned state says, judged at `fail_on`.
    pub fn of(report: &AuditReport, fail_on: Severity) -> TargetAudit {
        TargetAudit {
            summary: report.summary.clone(),
            fail_on,
            clean: report.summary.findings.at_or_above(fail_on) == 0,
        }
    }
}

/// The warning before repartitioning a node whose driver the advisory data names, or whose driver
/// is unknown; `None` for a node whose MIG layout does not change or whose driver is clear.
pub fn driver_warning(n: &NodeChange) -> Option<String> {
    if n.mig == gpu_trust_planner::migrate::MigChange::Unchanged {
        return None;
    }
    match &n.driver {
        DriverRisk::Clear { .. } => None,
        DriverRisk::Unknown => Some(format!(
            "node {} is repartitioned, and its driver version is unknown: it may be affected by advisories about MIG reconfiguration; check it before going on",
            n.node
        )),
        DriverRisk::Affected { driver, advisories } => {
            let list: Vec<String> = advisories
                .iter()
                .map(|a| match &a.fix {
                    Some(f) => format!("{} ({}; fixed in {f})", a.id, a.summary),
                    None => format!("{} ({}; no fix on this branch)", a.id, a.summary),
                })
                .collect();
            Some(format!(
                "node {} is repartitioned on driver {driver}, affected by {}: upgrade its driver first",
                n.node,
                list.join(", ")
            ))
        }
    }
}

/// What a node's drain takes off it, every pod named: `evicts 2 pods: ads/rank-0 and ads/etl-0 (no
/// GPU); deletes the emptyDir data of ads/etl-0`.
pub fn evictions(n: &NodeChange) -> String {
    let pods: Vec<String> = n
        .evicts
        .iter()
        .map(|p| {
            if p.gpu {
                p.pod.clone()
            } else {
                format!("{} (no GPU)", p.pod)
            }
        })
        .collect();
    let mut s = format!(
        "evicts {}",
        crate::text::plural(n.evicts.len(), "pod", "pods")
    );
    if let Some((last, first)) = pods.split_last() {
        s.push_str(": ");
        if !first.is_empty() {
            s.push_str(&format!("{} and ", first.join(", ")));
        }
        s.push_str(last);
    }
    let data: Vec<&str> = n
        .evicts
        .iter()
        .filter(|p| !p.empty_dir.is_empty())
        .map(|p| p.pod.as_str())
        .collect();
    if !data.is_empty() {
        s.push_str(&format!(
            "; deletes the emptyDir data of {}",
            data.join(", ")
        ));
    }
    s
}

/// The warning for a node whose config label the migration's ConfigMaps would redefine under it.
pub fn clash_warning(c: &ConfigClash) -> String {
    format!(
        "node {} is labelled {}={}, a name this migration's ConfigMap gives other contents: applying the configs could reconfigure it before it is drained; rename the current config (and the label) first, then run the migration again",
        c.node, c.label, c.config
    )
}
