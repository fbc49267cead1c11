//! What `gpu-trust policy check` shows: the policy as resolved, in one serialisable value
//! (JSON schema `gpu-trust/policy-check/v1`, camelCase keys). The CLI renders it as a table or JSON.

use crate::acceptance::AcceptanceState;
use crate::tenancy::{TenantOrigin, TrustSource};
use crate::{Date, Policy, Tenancy, Tenant};
use gpu_trust_model::{Diagnostic, Trust};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The JSON schema name of [`CheckReport`].
pub const CHECK_SCHEMA: &str = "gpu-trust/policy-check/v1";

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
    /// Every pair of different tenants.
    pub pairs: Vec<PairReport>,
    pub default_trust: Trust,
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

/// The trust between two tenants and where it comes from.
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
    pub reason: String,
    pub until: Option<Date>,
    pub state: AcceptanceState,
    pub line: u32,
}

/// A diagnostic in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticReport {
    pub level: gpu_trust_model::DiagnosticLevel,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl From<&Diagnostic> for DiagnosticReport {
    fn from(d: &Diagnostic) -> DiagnosticReport {
        DiagnosticReport {
            level: d.level,
            line: d.location.line,
            column: d.location.column,
            message: d.message.clone(),
        }
    }
}

impl CheckReport {
    /// The report of `policy` resolved as `tenancy`, with acceptance states as of `today`.
    pub fn new(policy: &Policy, tenancy: &Tenancy, today: Date) -> CheckReport {
        let pairs = tenancy
            .pairs()
            .into_iter()
            .map(|p| {
                let (source, line) = match &p.source {
                    TrustSource::Relation(loc) => ("relation", Some(loc.line)),
                    TrustSource::Default | TrustSource::SameTenant => ("default", None),
                };
                PairReport {
                    tenants: [
                        tenancy.name(p.tenants[0]).to_string(),
                        tenancy.name(p.tenants[1]).to_string(),
                    ],
                    trust: p.trust,
                    source,
                    line,
                }
            })
            .collect();
        let acceptances = tenancy
            .acceptances()
            .iter()
            .map(|a| AcceptanceReport {
                rule: a.rule.clone(),
                tenants: a.tenants.clone(),
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
            pairs,
            default_trust: tenancy.default_trust(),
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
