//! RBAC: every RoleBinding and ClusterRoleBinding with the rules of the role it grants, aggregated
//! ClusterRoles resolved (`aggregationRule.clusterRoleSelectors` gather the rules of every ClusterRole
//! whose labels match, as the aggregation controller does).
//!
//! Bindings to the default user-facing ClusterRoles (`cluster-admin`, `admin`, `edit`, `view`) resolve
//! even when a manifest set does not include those roles: their rules come from the Kubernetes
//! bootstrap policy (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`), reduced to the
//! groups and resources the audit asks about. Roles in the input win.

use gpu_trust_model::fleet::{Binding, PolicyRule, Rbac, Subject};
use gpu_trust_model::ObjectRef;
use k8s_openapi::api::rbac::v1 as rbac;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
pub(crate) struct RoleDraft {
    pub namespace: Option<String>,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub rules: Vec<PolicyRule>,
    pub aggregation: Vec<LabelSelector>,
}

#[derive(Debug, Clone)]
pub(crate) struct BindingDraft {
    pub object: ObjectRef,
    pub namespace: Option<String>,
    pub role_kind: String,
    pub role: String,
    pub subjects: Vec<Subject>,
}

pub(crate) fn rules(rs: Option<&Vec<rbac::PolicyRule>>) -> Vec<PolicyRule> {
    rs.into_iter()
        .flatten()
        .map(|r| PolicyRule {
            api_groups: r.api_groups.clone().unwrap_or_default(),
            resources: r.resources.clone().unwrap_or_default(),
            verbs: r.verbs.clone(),
            resource_names: r.resource_names.clone().unwrap_or_default(),
        })
        .collect()
}

pub(crate) fn subjects(ss: Option<&Vec<rbac::Subject>>, namespace: Option<&str>) -> Vec<Subject> {
    let mut out: Vec<Subject> = ss
        .into_iter()
        .flatten()
        .map(|s| Subject {
            kind: s.kind.clone(),
            name: s.name.clone(),
            namespace: s.namespace.clone().filter(|n| !n.is_empty()).or_else(|| {
                (s.kind == "ServiceAccount")
                    .then(|| namespace.map(str::to_string))
                    .flatten()
            }),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The bootstrap rules of the default ClusterRoles, for the resources the audit judges.
fn builtin(name: &str) -> Option<Vec<PolicyRule>> {
    let rule = |groups: &[&str], resources: &[&str], verbs: &[&str]| PolicyRule {
        api_groups: groups.iter().map(|s| s.to_string()).collect(),
        resources: resources.iter().map(|s| s.to_string()).collect(),
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        resource_names: Vec::new(),
    };
    const READ: &[&str] = &["get", "list", "watch"];
    const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
    const CORE: &[&str] = &[
        "pods",
        "pods/attach",
        "pods/exec",
        "pods/portforward",
        "pods/proxy",
        "configmaps",
        "endpoints",
        "persistentvolumeclaims",
        "replicationcontrollers",
        "services",
        "serviceaccounts",
        "secrets",
    ];
    const APPS: &[&str] = &["daemonsets", "deployments", "replicasets", "statefulsets"];
    const BATCH: &[&str] = &["cronjobs", "jobs"];
    Some(match name {
        "cluster-admin" => vec![rule(&["*"], &["*"], &["*"])],
        "view" => vec![
            rule(
                &[""],
                &[
                    "pods",
                    "configmaps",
                    "endpoints",
                    "persistentvolumeclaims",
                    "services",
                    "namespaces",
                ],
                READ,
            ),
            rule(&["apps"], APPS, READ),
            rule(&["batch"], BATCH, READ),
        ],
        "edit" | "admin" => {
            let mut r = vec![
                rule(&[""], CORE, READ),
                rule(&[""], CORE, WRITE),
                rule(&[""], &["namespaces"], READ),
                rule(&["apps"], APPS, READ),
                rule(&["apps"], APPS, WRITE),
                rule(&["batch"], BATCH, READ),
                rule(&["batch"], BATCH, WRITE),
            ];
            if name == "admin" {
                r.push(rule(
                    &["rbac.authorization.k8s.io"],
                    &["roles", "rolebindings"],
                    READ,
                ));
                r.push(rule(
                    &["rbac.authorization.k8s.io"],
                    &["roles", "rolebindings"],
                    WRITE,
                ));
            }
            r
        }
        _ => return None,
    })
}

fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_ok = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let exprs_ok = selector.match_expressions.iter().flatten().all(|e| {
        let value = labels.get(&e.key);
        let values = e.values.clone().unwrap_or_default();
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    labels_ok && exprs_ok
}

/// Resolves every binding.
pub(crate) fn resolve(roles: &[RoleDraft], bindings: Vec<BindingDraft>) -> Rbac {
    let cluster_roles: BTreeMap<&str, &RoleDraft> = roles
        .iter()
        .filter(|r| r.namespace.is_none())
        .map(|r| (r.name.as_str(), r))
        .collect();
    let ns_roles: BTreeMap<(&str, &str), &RoleDraft> = roles
        .iter()
        .filter_map(|r| r.namespace.as_deref().map(|ns| ((ns, r.name.as_str()), r)))
        .collect();
    let mut resolved_cluster: BTreeMap<String, Vec<PolicyRule>> = BTreeMap::new();
    let mut out: Vec<Binding> = bindings
        .into_iter()
        .map(|b| {
            let (rules, missing) = if b.role_kind == "Role" {
                match b
                    .namespace
                    .as_deref()
                    .and_then(|ns| ns_roles.get(&(ns, b.role.as_str())))
                {
                    Some(r) => (r.rules.clone(), false),
                    None => (Vec::new(), true),
                }
            } else if let Some(r) = resolved_cluster.get(&b.role) {
                (r.clone(), false)
            } else if cluster_roles.contains_key(b.role.as_str()) {
                let mut seen = BTreeSet::new();
                let r = aggregate(&b.role, &cluster_roles, &mut seen);
                resolved_cluster.insert(b.role.clone(), r.clone());
                (r, false)
            } else {
                match builtin(&b.role) {
                    Some(r) => (r, false),
                    None => (Vec::new(), true),
                }
            };
            Binding {
                object: b.object,
                namespace: b.namespace,
                role: format!("{}/{}", b.role_kind, b.role),
                subjects: b.subjects,
                rules,
                role_missing: missing,
            }
        })
        .collect();
    out.sort_by(|a, b| a.object.cmp(&b.object));
    Rbac { bindings: out }
}

/// A ClusterRole's own rules plus, through its aggregation rule, those of the roles it selects.
fn aggregate(
    name: &str,
    roles: &BTreeMap<&str, &RoleDraft>,
    seen: &mut BTreeSet<String>,
) -> Vec<PolicyRule> {
    if !seen.insert(name.to_string()) {
        return Vec::new();
    }
    let Some(role) = roles.get(name) else {
        return builtin(name).unwrap_or_default();
    };
    let mut rules = role.rules.clone();
    if !role.aggregation.is_empty() {
        for other in roles.values() {
            if other.name != role.name && role.aggregation.iter().any(|s| selects(s, &other.labels))
            {
                for r in aggregate(&other.name, roles, seen) {
                    if !rules.contains(&r) {
                        rules.push(r);
                    }
                }
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::Location;

    fn role(
        name: &str,
        labels: &[(&str, &str)],
        rules: Vec<PolicyRule>,
        agg: Option<&str>,
    ) -> RoleDraft {
        RoleDraft {
            namespace: None,
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            rules,
            aggregation: agg
                .map(|l| {
                    vec![LabelSelector {
                        match_labels: Some([(l.to_string(), "true".to_string())].into()),
                        ..Default::default()
                    }]
                })
                .unwrap_or_default(),
        }
    }

    fn patch_nodes() -> PolicyRule {
        PolicyRule {
            api_groups: vec!["".into()],
            resources: vec!["nodes".into()],
            verbs: vec!["patch".into()],
            resource_names: vec![],
        }
    }

    fn binding(role: &str) -> BindingDraft {
        BindingDraft {
            object: ObjectRef {
                kind: "ClusterRoleBinding".into(),
                namespace: None,
                name: format!("to-{role}"),
                location: Location::default(),
            },
            namespace: None,
            role_kind: "ClusterRole".into(),
            role: role.into(),
            subjects: vec![],
        }
    }

    #[test]
    fn aggregated_roles_collect_selected_rules() {
        let roles = vec![
            role(
                "gpu-admin",
                &[],
                vec![],
                Some("example.com/aggregate-to-gpu-admin"),
            ),
            role(
                "node-patcher",
                &[("example.com/aggregate-to-gpu-admin", "true")],
                vec![patch_nodes()],
                None,
            ),
        ];
        let rbac = resolve(
            &roles,
            vec![
                binding("gpu-admin"),
                binding("cluster-admin"),
                binding("nope"),
            ],
        );
        let by_name = |n: &str| rbac.bindings.iter().find(|b| b.object.name == n).unwrap();
        assert!(by_name("to-gpu-admin")
            .rules
            .iter()
            .any(|r| r.allows("", "nodes", "patch")));
        assert!(by_name("to-cluster-admin").rules.iter().any(|r| r.allows(
            "nvidia.com",
            "clusterpolicies",
            "update"
        )));
        assert!(by_name("to-nope").role_missing);
    }
}
