//! RBAC: bindings resolved to the rules they grant.

use crate::location::ObjectRef;
use serde::{Deserialize, Serialize};

/// RBAC as resolved subjects -> permissions.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rbac {
    pub bindings: Vec<Binding>,
}

/// A RoleBinding or ClusterRoleBinding with its role's rules resolved (aggregation included).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub object: ObjectRef,
    /// `None` for a ClusterRoleBinding (cluster-wide).
    pub namespace: Option<String>,
    pub role: String,
    pub subjects: Vec<Subject>,
    pub rules: Vec<PolicyRule>,
    /// The role it references is not in the input.
    pub role_missing: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
    pub resource_names: Vec<String>,
}

impl PolicyRule {
    /// Whether the rule grants `verb` on `group`/`resource` (wildcards honoured).
    pub fn allows(&self, group: &str, resource: &str, verb: &str) -> bool {
        let any = |list: &[String], want: &str| list.iter().any(|x| x == "*" || x == want);
        any(&self.api_groups, group) && any(&self.resources, resource) && any(&self.verbs, verb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_rule_wildcards() {
        let r = PolicyRule {
            api_groups: vec!["".into()],
            resources: vec!["*".into()],
            verbs: vec!["patch".into()],
            resource_names: vec![],
        };
        assert!(r.allows("", "nodes", "patch"));
        assert!(!r.allows("", "nodes", "delete"));
        assert!(!r.allows("apps", "deployments", "patch"));
    }
}
