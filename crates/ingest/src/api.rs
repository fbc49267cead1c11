//! The kinds ingest reads, as the API server serves them: one list for every reader of a live
//! cluster (which resources to discover and list) and for the read-only RBAC role that reading
//! needs, so the two cannot drift apart from what ingest understands.
//!
//! The list is built from the tables ingest dispatches on: the built-in kinds of `kinds.rs`, the GPU
//! Operator's ClusterPolicy and GPUCluster, and every row of the controllers table
//! (`controllers.rs`), whose rows carry their resource name and scope. For the others, what
//! `kinds.rs` does not say (the resource name and whether objects live in a namespace) is written
//! here once per kind; a test fails when a built-in kind is added without a line here.

use crate::{controllers, kinds};
use gpu_trust_model::stack::NVIDIA_API_GROUP;
use serde_json::Value;

/// One kind ingest reads, with what a client needs to list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ApiKind {
    /// The API group (`""` for the core group).
    pub group: &'static str,
    pub kind: &'static str,
    /// The resource name in API paths and RBAC rules.
    pub resource: &'static str,
    /// Whether objects of the kind live in a namespace.
    pub namespaced: bool,
    /// The versions ingest reads, most preferred first; empty: any version the server serves
    /// (custom resources keep their paths across the versions ingest reads).
    pub versions: &'static [&'static str],
}

/// Resource names and scopes of the kinds that are not rows of the controllers table (whose rows
/// carry their own): the built-in kinds of `kinds.rs` (the Kubernetes API reference,
/// https://kubernetes.io/docs/reference/kubernetes-api/) and the GPU Operator's kinds
/// (NVIDIA/gpu-operator `deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml`,
/// `api/nvidia/v1alpha1`).
const RESOURCES: &[(&str, &str, &str, bool)] = &[
    ("", "Node", "nodes", false),
    ("", "Pod", "pods", true),
    ("", "Namespace", "namespaces", false),
    ("", "ConfigMap", "configmaps", true),
    ("apps", "Deployment", "deployments", true),
    ("apps", "StatefulSet", "statefulsets", true),
    ("apps", "DaemonSet", "daemonsets", true),
    ("apps", "ReplicaSet", "replicasets", true),
    ("batch", "Job", "jobs", true),
    ("batch", "CronJob", "cronjobs", true),
    ("node.k8s.io", "RuntimeClass", "runtimeclasses", false),
    ("rbac.authorization.k8s.io", "Role", "roles", true),
    (
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "clusterroles",
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        "rolebindings",
        true,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    ),
    ("resource.k8s.io", "ResourceClaim", "resourceclaims", true),
    (
        "resource.k8s.io",
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        true,
    ),
    ("resource.k8s.io", "DeviceClass", "deviceclasses", false),
    ("resource.k8s.io", "ResourceSlice", "resourceslices", false),
    (NVIDIA_API_GROUP, "ClusterPolicy", "clusterpolicies", false),
    (NVIDIA_API_GROUP, "GPUCluster", "gpuclusters", false),
];

/// The namespaced kinds whose objects decide how the GPUs of every node are shared, wherever they
/// are: the device plugin's and mig-parted's ConfigMaps (in the GPU Operator's namespace or the
/// device plugin chart's) and the device plugin's DaemonSet, whose config they name
/// (`platforms/gpu_operator.rs`, `platforms/plugin_daemonset.rs`). An audit scoped to one
/// namespace still reads them in every namespace: without them the sharing configuration in force
/// on a node is unknown.
const CONFIGURES_GPUS: &[(&str, &str)] = &[("", "ConfigMap"), ("apps", "DaemonSet")];

impl ApiKind {
    /// Whether objects of the kind decide how GPUs are shared cluster-wide, so that a reader scoped
    /// to one namespace lists them in every namespace.
    pub fn configures_gpus(&self) -> bool {
        CONFIGURES_GPUS.contains(&(self.group, self.kind))
    }
}

/// A collection a reader could not list (forbidden, or failed): objects of `kind`, in `namespace`
/// (`None`: in every namespace, or a cluster-scoped kind). What ingest would have read there is
/// unknown, so nothing is concluded from its absence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unread {
    pub kind: ApiKind,
    pub namespace: Option<String>,
    /// Why, in a few words (`403 forbidden`).
    pub reason: String,
}

impl Unread {
    /// Whether objects of `group`/`kind` in `namespace` were in what could not be read.
    pub fn covers(&self, group: &str, kind: &str, namespace: &str) -> bool {
        self.kind.group == group
            && self.kind.kind == kind
            && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }
}

/// The versions of the custom resources ingest types itself (the others: any version).
const CLUSTER_POLICY_VERSIONS: &[&str] = &["v1"];
/// GPU Operator 26.7.0 serves GPUCluster at `nvidia.com/v1alpha1` (`api/nvidia/v1alpha1`).
const GPU_CLUSTER_VERSIONS: &[&str] = &["v1alpha1"];

/// Every kind ingest reads, in a fixed order: built-in kinds, the ClusterPolicy, then the
/// controllers table.
pub fn read_kinds() -> Vec<ApiKind> {
    let mut out: Vec<ApiKind> = Vec::new();
    let mut push = |group: &'static str, kind: &'static str, versions: &'static [&'static str]| {
        let Some(&(_, _, resource, namespaced)) = RESOURCES
            .iter()
            .find(|(g, k, _, _)| *g == group && *k == kind)
        else {
            // Kept out of the list (and out of the role) until its line above is written; the
            // test below fails in the meantime.
            return;
        };
        if out.iter().any(|a| a.group == group && a.kind == kind) {
            return;
        }
        out.push(ApiKind {
            group,
            kind,
            resource,
            namespaced,
            versions,
        });
    };
    for &(group, kind, versions) in kinds::BUILT_IN {
        push(group, kind, versions);
    }
    push(NVIDIA_API_GROUP, "ClusterPolicy", CLUSTER_POLICY_VERSIONS);
    push(NVIDIA_API_GROUP, "GPUCluster", GPU_CLUSTER_VERSIONS);
    for c in controllers::CONTROLLERS {
        if !out.iter().any(|a| a.group == c.group && a.kind == c.kind) {
            out.push(ApiKind {
                group: c.group,
                kind: c.kind,
                resource: c.resource,
                namespaced: c.namespaced,
                versions: &[],
            });
        }
    }
    out
}

/// How deep a schema is searched for `containers` (PodSpec sits a few levels down in real CRDs:
/// `spec.template.spec.containers`, `spec.replicaSpecs.*.template.spec.containers`).
const MAX_SCHEMA_DEPTH: usize = 64;

/// Whether a custom kind's OpenAPI v3 schema (`openAPIV3Schema` of a CustomResourceDefinition
/// version) describes pod templates: a `containers` array of objects at any depth, as PodSpec has
/// (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#PodSpec). A live
/// reader that does not list such a kind cannot leave it unjudged.
pub fn describes_pod_templates(schema: &Value) -> bool {
    has_containers(schema, 0)
}

/// Whether a schema has, at any depth, a property `containers` that is an array of objects.
fn has_containers(schema: &Value, depth: usize) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return false;
    }
    let Some(obj) = schema.as_object() else {
        return false;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        if props.get("containers").is_some_and(|c| {
            c.get("type").and_then(Value::as_str) == Some("array")
                && c.pointer("/items/type").and_then(Value::as_str) == Some("object")
        }) {
            return true;
        }
        if props.values().any(|p| has_containers(p, depth + 1)) {
            return true;
        }
    }
    ["items", "additionalProperties"]
        .iter()
        .filter_map(|k| obj.get(*k))
        .any(|s| has_containers(s, depth + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_ingest_reads_has_a_resource_and_every_resource_a_kind() {
        let kinds = read_kinds();
        for &(group, kind, _) in kinds::BUILT_IN {
            assert!(
                kinds.iter().any(|a| a.group == group && a.kind == kind),
                "{group}/{kind} has no line in RESOURCES"
            );
        }
        for (group, kind, _, _) in RESOURCES {
            assert!(
                kinds.iter().any(|a| a.group == *group && a.kind == *kind),
                "{group}/{kind} is in RESOURCES but ingest does not read it"
            );
            assert!(
                controllers::lookup(group, kind).is_none(),
                "{group}/{kind} is a row of the controllers table, which says its resource"
            );
        }
        // Every row of the controllers table is listed, once, with the resource its row names.
        for c in controllers::CONTROLLERS {
            let listed: Vec<_> = kinds
                .iter()
                .filter(|a| a.group == c.group && a.kind == c.kind)
                .collect();
            assert_eq!(listed.len(), 1, "{}/{}", c.group, c.kind);
            assert_eq!(
                (listed[0].resource, listed[0].namespaced),
                (c.resource, c.namespaced)
            );
        }
        assert_eq!(
            kinds.len(),
            RESOURCES.len() + controllers::CONTROLLERS.len()
        );
        // Every kind classify() types is listed, at the versions it types.
        for a in &kinds {
            for v in a.versions {
                let api_version = if a.group.is_empty() {
                    v.to_string()
                } else {
                    format!("{}/{v}", a.group)
                };
                assert!(
                    kinds::classify(&api_version, a.kind).is_some(),
                    "{api_version} {}",
                    a.kind
                );
            }
        }
    }

    #[test]
    fn the_kinds_that_configure_gpus_are_namespaced_kinds_ingest_reads() {
        let kinds = read_kinds();
        for (group, kind) in CONFIGURES_GPUS {
            let k = kinds
                .iter()
                .find(|a| a.group == *group && a.kind == *kind)
                .unwrap_or_else(|| panic!("{group}/{kind} is not read"));
            assert!(k.namespaced && k.configures_gpus());
        }
        assert!(!kinds.iter().any(|a| a.kind == "Pod" && a.configures_gpus()));
    }

    #[test]
    fn resources_are_lower_case_and_unique_per_group() {
        let kinds = read_kinds();
        let mut seen = std::collections::BTreeSet::new();
        for a in &kinds {
            assert_eq!(a.resource, a.resource.to_ascii_lowercase());
            assert!(
                seen.insert((a.group, a.resource)),
                "{}/{}",
                a.group,
                a.resource
            );
        }
    }
}
