//! The audit's result: what every renderer (table, JSON, SARIF, HTML) prints. This is the
//! `gpu-trust/audit/v1` wire format; field names serialise in camelCase and every list is sorted, so the
//! same input gives byte-identical JSON.

pub use crate::coverage::Coverage;
use gpu_trust_model::{Certainty, Incident, Layer, Severity, Trust};
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: &str = "gpu-trust/audit/v1";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    pub schema: &'static str,
    pub summary: Summary,
    /// Per layer: in play or not, evaluated whole, in part or not at all, and why.
    pub coverage: Coverage,
    pub tenants: Vec<TenantEntry>,
    /// Sorted: severity (most severe first), rule code, tenants, nodes, first object.
    pub findings: Vec<Finding>,
    pub blast_radius: Vec<BlastRadiusEntry>,
    pub pairs: Vec<PairEntry>,
    /// Input documents that could not be used (only with `--skip-invalid`; otherwise the run exits 2).
    pub skipped: Vec<SkippedEntry>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub tenants: usize,
    pub nodes: usize,
    pub gpus: usize,
    /// Counts of findings not accepted, by severity.
    pub findings: SeverityCounts,
    /// Findings suppressed by a policy acceptance.
    pub accepted: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeverityCounts {
    pub critical: usize,
    pub high: usize,
    pub medium: usize,
    pub low: usize,
    pub info: usize,
}

impl SeverityCounts {
    pub fn add(&mut self, s: Severity) {
        match s {
            Severity::Critical => self.critical += 1,
            Severity::High => self.high += 1,
            Severity::Medium => self.medium += 1,
            Severity::Low => self.low += 1,
            Severity::Info => self.info += 1,
        }
    }

    pub fn get(&self, s: Severity) -> usize {
        match s {
            Severity::Critical => self.critical,
            Severity::High => self.high,
            Severity::Medium => self.medium,
            Severity::Low => self.low,
            Severity::Info => self.info,
        }
    }

    /// Findings at or above `threshold`.
    pub fn at_or_above(&self, threshold: Severity) -> usize {
        Severity::ALL
            .into_iter()
            .filter(|s| *s >= threshold)
            .map(|s| self.get(s))
            .sum()
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantEntry {
    pub name: String,
    pub namespaces: Vec<String>,
    /// A namespace no tenant claims: a tenant of its own with the default trust.
    pub unassigned: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Rule code, e.g. `GT101`.
    pub rule: String,
    /// Rule name, e.g. `untrusted-share-time-sliced-gpu`.
    pub name: String,
    pub layer: Layer,
    pub severity: Severity,
    pub certainty: Certainty,
    /// Sorted tenant names.
    pub tenants: Vec<String>,
    /// Sorted node names.
    pub nodes: Vec<String>,
    /// The objects involved: the finding's own (nodes, bindings, policy entries) sorted, then its
    /// workloads by namespace, kind and name; at most 50 (the message says how many workloads).
    pub objects: Vec<FindingObject>,
    pub message: String,
    pub remediation: String,
    pub accepted: Option<AcceptedEntry>,
    /// Probe measurements attached with `--evidence` (device-layer findings of the measured mechanism).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FindingObject {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub file: String,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptedEntry {
    pub reason: String,
    pub until: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlastRadiusEntry {
    /// Every tenant whose workloads run or may run on GPU nodes has one entry per incident, sorted by
    /// tenant then incident; `reaches` is empty when the incident reaches no one.
    pub tenant: String,
    pub incident: Incident,
    /// Sorted names of the tenants reached.
    pub reaches: Vec<String>,
    /// The strongest certainty with which each reached tenant is reached.
    pub certainty: BTreeMap<String, Certainty>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairEntry {
    /// The two tenants, sorted.
    pub tenants: [String; 2],
    pub trust: Trust,
    /// What they share: layers (`host`, `control-plane`) and device resources (`memory-pool`, `gpu`...).
    pub shares: Vec<String>,
    /// What separates them (`mig-instance`, `gpu`, `node`, `virtual-cluster`).
    pub separated_by: Vec<String>,
    /// The strongest certainty of any co-location behind `shares` (a GPU, a MIG GPU or a node);
    /// `None` when they share only the control plane.
    pub certainty: Option<Certainty>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedEntry {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub error: String,
}
