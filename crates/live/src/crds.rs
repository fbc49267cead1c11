//! Custom kinds a live audit does not read but that may carry GPU workloads.
//!
//! A file audit searches every kind for pod templates; a live audit lists only the kinds of
//! [`gpu_trust_ingest::api`]. So that a workload carried by another custom resource never leaves a
//! live audit looking clean, the cluster's CustomResourceDefinitions are read and every kind whose
//! schema describes pod templates (ingest decides that: [`describes_pod_templates`]) and that is not
//! on the list becomes an error located at its definition: the audit fails closed on it unless the
//! user accepts a partial audit, as for a kind it may not list.

use crate::{describe, list_kind, Served};
use gpu_trust_ingest::api::{describes_pod_templates, read_kinds, ApiKind};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use kube::Client;
use serde_json::Value;
use std::time::Duration;

/// CustomResourceDefinitions, read to find the custom kinds that carry pod templates.
pub const CRD: ApiKind = ApiKind {
    group: "apiextensions.k8s.io",
    kind: "CustomResourceDefinition",
    resource: "customresourcedefinitions",
    namespaced: false,
    versions: &["v1"],
};

/// Where the definitions are listed.
pub const COLLECTION: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn served() -> Served {
    Served {
        kind: CRD,
        api_version: "apiextensions.k8s.io/v1".to_string(),
        path: COLLECTION.to_string(),
        namespaced: false,
    }
}

/// An error per custom kind that carries pod templates and that a live audit does not read; an error
/// for the definitions themselves when they cannot be listed (then no custom kind can be checked).
/// A server that serves no CustomResourceDefinitions (404) has no custom kinds.
pub async fn unread_workload_kinds(client: &Client, timeout: Duration) -> Vec<Diagnostic> {
    let served = served();
    let request = kube::core::Request::new(&served.path)
        .list(&kube::core::params::ListParams::default().limit(1));
    // A 404 on the collection: the server serves no custom resources at all.
    if let Ok(request) = request {
        if let Err(kube::Error::Api(status)) = crate::request_text(client, request, timeout).await {
            if status.code == 404 {
                return Vec::new();
            }
            return vec![Diagnostic::error(
                Code::ClusterUnread,
                Location::new(served.path.trim_start_matches('/'), 0, 0),
                format!(
                    "CustomResourceDefinitions could not be read from the cluster ({}): custom \
                     kinds that may carry GPU workloads cannot be checked",
                    describe(&kube::Error::Api(status))
                ),
            )];
        }
    }
    let inputs = match list_kind(client, &served, None, timeout).await {
        Ok((inputs, _)) => inputs,
        Err(d) => return vec![d],
    };
    let known = read_kinds();
    let mut out = Vec::new();
    for input in inputs {
        let Ok(crd) = serde_json::from_str::<Value>(&input.text) else {
            continue;
        };
        if let Some(d) = unread(&crd, &known, &input.name) {
            out.push(d);
        }
    }
    out
}

/// The error for one definition, when its kind carries pod templates and is not read.
pub fn unread(crd: &Value, known: &[ApiKind], location: &str) -> Option<Diagnostic> {
    let spec = crd.get("spec")?;
    let group = spec.get("group")?.as_str()?;
    let names = spec.get("names")?;
    let kind = names.get("kind")?.as_str()?;
    let plural = names.get("plural")?.as_str()?;
    if known.iter().any(|k| k.group == group && k.kind == kind) {
        return None;
    }
    let carries = spec
        .get("versions")?
        .as_array()?
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
        .filter_map(|v| v.pointer("/schema/openAPIV3Schema"))
        .any(describes_pod_templates);
    carries.then(|| {
        Diagnostic::error(Code::CustomKindUnread,
            Location::new(location, 0, 0),
            format!(
                "custom kind {kind} ({group}) describes pod templates (`containers` in its schema) \
                 and a live audit does not read it: a GPU workload in it would not be judged; audit \
                 a dump of it with the rest of the cluster (`kubectl get {plural}.{group} -A -o \
                 yaml`), or pass --skip-invalid to accept a partial audit"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(group: &str, kind: &str, schema: Value) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{}s.{group}", kind.to_lowercase())},
            "spec": {
                "group": group,
                "names": {"kind": kind, "plural": format!("{}s", kind.to_lowercase())},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                              "schema": {"openAPIV3Schema": schema}}],
            }
        })
    }

    fn pod_template_schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "workers": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                "template": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "containers": {"type": "array", "items": {"type": "object"}}}}}}}}}}}}})
    }

    #[test]
    fn a_custom_kind_with_pod_templates_that_is_not_read_is_an_error() {
        let d = unread(
            &crd("gpus.example.com", "TrainingRun", pod_template_schema()),
            &read_kinds(),
            "apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainingruns.gpus.example.com.json",
        )
        .expect("an error");
        assert!(d.is_error());
        assert_eq!(d.code, Code::CustomKindUnread, "{d}");
        assert!(d.message.contains("TrainingRun (gpus.example.com)"), "{d}");
        assert!(
            d.message
                .contains("kubectl get trainingruns.gpus.example.com"),
            "{d}"
        );
    }

    #[test]
    fn kinds_without_pod_templates_and_kinds_that_are_read_are_not() {
        let plain = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "containers": {"type": "integer"}, "issuer": {"type": "string"}}}}});
        assert!(unread(
            &crd("cert-manager.io", "Certificate", plain),
            &read_kinds(),
            "x"
        )
        .is_none());
        // A kind of the controllers table is read live: no error for its definition.
        assert!(unread(
            &crd("kubeflow.org", "PyTorchJob", pod_template_schema()),
            &read_kinds(),
            "x"
        )
        .is_none());
    }
}
