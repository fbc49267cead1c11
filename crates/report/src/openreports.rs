//! The audit as OpenReports `Report` objects (`openreports.io/v1alpha1`), one per namespace of a
//! tenant that has findings, for `gpu-trust serve --write-reports`: `kubectl get reports -n team-a`
//! shows a tenant its own findings. Each report is made from the tenant's view
//! ([`gpu_trust_rules::scope::view`]), so it names no other tenant and says nothing of the pairs
//! and places of other tenants alone.
//!
//! Fields as the API defines them (https://github.com/openreports/reports-api,
//! `apis/openreports.io/v1alpha1/report_types.go`): `source`, `scope` (an ObjectReference, here the
//! Namespace), `summary` (`pass`, `fail`, `warn`, `error`, `skip`), `results` (`policy` required;
//! `rule`, `category`, `severity` one of critical/high/medium/low/info, `result` one of
//! pass/fail/warn/error/skip, `scored`, `resources` as ObjectReferences, `message`,
//! `properties` a map of strings).

use crate::AuditReport;
use gpu_trust_rules::scope::OTHER_TENANT;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The name of gpu-trust's report in each namespace.
pub const NAME: &str = "gpu-trust";
/// What `source` says.
pub const SOURCE: &str = "gpu-trust";
/// Results in one report at most (an object stays far below etcd's size limit); the summary
/// counts them all.
pub const MAX_RESULTS: usize = 500;

/// The reports: for each tenant of `report`, for each of its namespaces, the tenant's findings that
/// name an object there or no object in any of the tenant's namespaces. Namespaces without findings
/// get no report. `view` makes the report one set of tenants may see
/// ([`gpu_trust_rules::scope::view`]).
pub fn render(report: &AuditReport, view: impl Fn(&BTreeSet<String>) -> AuditReport) -> Vec<Value> {
    let mut out = Vec::new();
    for tenant in &report.tenants {
        let visible: BTreeSet<String> = [tenant.name.clone()].into();
        let view = view(&visible);
        let own: BTreeSet<&str> = tenant.namespaces.iter().map(String::as_str).collect();
        for ns in &tenant.namespaces {
            let mut results = Vec::new();
            let (mut fail, mut warn) = (0, 0);
            for f in &view.findings {
                let here = f.objects.iter().any(|o| o.namespace.as_deref() == Some(ns));
                let elsewhere = f
                    .objects
                    .iter()
                    .any(|o| o.namespace.as_deref().is_some_and(|n| own.contains(n)));
                if !here && elsewhere {
                    continue;
                }
                let (result, scored) = if f.accepted.is_some() {
                    warn += 1;
                    ("warn", false)
                } else {
                    fail += 1;
                    ("fail", true)
                };
                if results.len() >= MAX_RESULTS {
                    continue;
                }
                let resources: Vec<Value> = f
                    .objects
                    .iter()
                    .filter(|o| o.namespace.as_deref() == Some(ns) && o.name != OTHER_TENANT)
                    .map(|o| json!({"kind": o.kind, "namespace": ns, "name": o.name}))
                    .collect();
                let mut properties: BTreeMap<&str, String> = BTreeMap::new();
                properties.insert("layer", f.layer.as_str().to_string());
                properties.insert("certainty", f.certainty.as_str().to_string());
                properties.insert("key", f.key.clone());
                properties.insert("tenants", f.tenants.join(", "));
                if let Some(a) = &f.accepted {
                    properties.insert("accepted", a.reason.clone());
                }
                properties.insert("remediation", f.remediation.clone());
                let mut r = json!({
                    "source": SOURCE,
                    "policy": f.rule,
                    "rule": f.name,
                    "category": f.layer.as_str(),
                    "severity": f.severity.as_str(),
                    "result": result,
                    "scored": scored,
                    "message": f.message,
                    "properties": properties,
                });
                if !resources.is_empty() {
                    r["resources"] = Value::from(resources);
                }
                results.push(r);
            }
            if results.is_empty() {
                continue;
            }
            out.push(json!({
                "apiVersion": "openreports.io/v1alpha1",
                "kind": "Report",
                "metadata": {"name": NAME, "namespace": ns},
                "source": SOURCE,
                "scope": {"apiVersion": "v1", "kind": "Namespace", "name": ns},
                "summary": {"pass": 0, "fail": fail, "warn": warn, "error": 0, "skip": 0},
                "results": results,
            }));
        }
    }
    out
}
