//! What `gpu-trust policy check` shows: the policy as resolved, in one serialisable value
//! (JSON schema `gpu-trust/policy-check/v2`, camelCase keys). The CLI renders it as a table or JSON.
//!
//! Trust is reported as the policy states it, the default and the explicit relations, never pair by
//! pair: a policy of 10,000 tenants has about 50 million pairs, almost all of them at the default.

use crate::acceptance::AcceptanceState;
use crate::tenancy::TenantOrigin;
use crate::{Date, Policy, Tenancy, Tenant};
use gpu_trust_model::{Diagnostic, Trust};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The JSON schema name of [`CheckReport`].
pub const CHECK_SCHEMA: &str = "gpu-trust/policy-check/v2";

/// A policy, resolved, as `policy check` reports it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    pub schema: &'static str,
    /// The policy file (`None` for the default policy).
    pub file: Option<String>,
    /// The day acceptance states are judged on.
    pub today: Date,
    pub tenants: Vec<Tenant>,
    /// Pairs of different tenants: `n * (n - 1) / 2`.
    pub pairs: usize,
    /// The trust of every pair no relation names.
    pub default_trust: Trust,
    /// The pairs `trust.relations` names, sorted by tenant names.
    pub relations: Vec<PairReport>,
    pub platform_namespaces: Vec<String>,
    /// Platform namespaces that a tenant names, so that they are the tenant's (namespace ->
    /// tenant); absent when there are none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub platform_claimed: BTreeMap<String, String>,
    pub tenant_labels: Vec<String>,
    pub workloads: Vec<crate::WorkloadRule>,
    pub patch_window_days: u32,
    pub max_replicas: u32,
    pub acceptances: Vec<AcceptanceReport>,
    /// Warnings and errors of resolution (see [`Tenancy::diagnostics`]) and of the checks that
    /// need no cluster (see [`Policy::static_diagnostics`]).
    pub diagnostics: Vec<DiagnosticReport>,
}

/// The trust between two tenants a relation sets, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairReport {
    /// Sorted tenant names.
    pub tenants: [String; 2],
    pub trust: Trust,
    /// `relation` or `default`.
    pub source: &'static str,
    /// Line of the relation in the policy file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// An acceptance and whether it holds today.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptanceReport {
    pub rule: String,
    /// Sorted; `None` when the acceptance covers any tenants.
    pub tenants: Option<BTreeSet<String>>,
    /// The namespaces, workloads and nodes it is narrowed to, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<crate::NamespacePattern>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workloads: Option<Vec<crate::WorkloadRef>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<BTreeSet<String>>,
    /// Empty when the entry gives none (it then accepts nothing; the audit reports GT004).
    pub reason: String,
    pub until: Option<Date>,
    pub state: AcceptanceState,
    pub line: u32,
}

impl AcceptanceReport {
    /// `any`, or the tenants, then the other scopes: `acme, globex; nodes gpu-1`.
    pub fn scope(&self) -> String {
        let mut parts = vec![self.tenants.as_ref().map_or("any".to_string(), |s| {
            s.iter().cloned().collect::<Vec<_>>().join(", ")
        })];
        if let Some(ns) = &self.namespaces {
            let list: Vec<&str> = ns.iter().map(|p| p.pattern.as_str()).collect();
            parts.push(format!("namespaces {}", list.join(", ")));
        }
        if let Some(ws) = &self.workloads {
            let list: Vec<String> = ws
                .iter()
                .map(|w| format!("{} {}/{}", w.kind, w.namespace, w.name))
                .collect();
            parts.push(format!("workloads {}", list.join(", ")));
        }
        if let Some(nodes) = &self.nodes {
            let list: Vec<&str> = nodes.iter().map(String::as_str).collect();
            parts.push(format!("nodes {}", list.join(", ")));
        }
        parts.join("; ")
    }
}

/// A diagnostic in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticReport {
    pub level: gpu_trust_model::DiagnosticLevel,
    /// The stable code of its kind (`docs/diagnostics.md`).
    pub code: gpu_trust_model::Code,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl From<&Diagnostic> for DiagnosticReport {
    fn from(d: &Diagnostic) -> DiagnosticReport {
        DiagnosticReport {
            level: d.level,
            code: d.code,
            line: d.location.line,
            column: d.location.column,
            message: d.message.clone(),
        }
    }
}

impl CheckReport {
    /// The report of `policy` resolved as `tenancy`, with acceptance states as of `today`.
    pub fn new(policy: &Policy, tenancy: &Tenancy, today: Date) -> CheckReport {
        let mut relations: Vec<PairReport> = tenancy
            .relations()
            .map(|([a, b], trust, location)| {
                let mut tenants = [tenancy.name(a).to_string(), tenancy.name(b).to_string()];
                tenants.sort();
                PairReport {
                    tenants,
                    trust,
                    source: "relation",
                    line: Some(location.line),
                }
            })
            .collect();
        relations.sort_by(|a, b| a.tenants.cmp(&b.tenants));
        let n = tenancy.tenants().len();
        let acceptances = tenancy
            .acceptances()
            .iter()
            .map(|a| AcceptanceReport {
                rule: a.rule.clone(),
                tenants: a.tenants.clone(),
                namespaces: a.namespaces.clone(),
                workloads: a.workloads.clone(),
                nodes: a.nodes.clone(),
                reason: a.reason.clone(),
                until: a.until,
                state: a.state(today),
                line: a.location.line,
            })
            .collect();
        CheckReport {
            schema: CHECK_SCHEMA,
            file: policy.file().map(str::to_string),
            today,
            tenants: tenancy.tenants().to_vec(),
            pairs: n * n.saturating_sub(1) / 2,
            default_trust: tenancy.default_trust(),
            relations,
            platform_namespaces: tenancy
                .platform_patterns()
                .iter()
                .map(|p| p.pattern.clone())
                .collect(),
            platform_claimed: policy
                .tenants
                .iter()
                .flat_map(|t| {
                    t.namespaces
                        .iter()
                        .filter(|n| !n.is_glob())
                        .filter(|n| policy.platform.iter().any(|p| p.matches(&n.pattern)))
                        .map(|n| (n.pattern.clone(), t.name.clone()))
                })
                .collect(),
            tenant_labels: tenancy.tenant_labels().to_vec(),
            workloads: tenancy.workload_rules().to_vec(),
            patch_window_days: tenancy.patch_window_days(),
            max_replicas: tenancy.max_replicas(),
            acceptances,
            diagnostics: {
                let mut all: Vec<Diagnostic> = tenancy.diagnostics().to_vec();
                all.extend(policy.static_diagnostics());
                all.sort();
                all.dedup();
                all.iter().map(Into::into).collect()
            },
        }
    }

    /// How many tenants are unassigned namespaces.
    pub fn unassigned(&self) -> usize {
        self.tenants
            .iter()
            .filter(|t| t.origin == TenantOrigin::Unassigned)
            .count()
    }

    /// How many acceptances have expired.
    pub fn expired(&self) -> usize {
        self.acceptances
            .iter()
            .filter(|a| a.state == AcceptanceState::Expired)
            .count()
    }
}
