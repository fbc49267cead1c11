//! Control-plane rules (GT4xx): the API server and RBAC tenants share.

pub mod gt401_distrusting_share_api_server;
pub mod gt402_tenant_can_repartition_gpus;
pub mod gt403_tenant_can_write_cluster_scope;

use crate::context::Context;
use gpu_trust_model::fleet::Binding;
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

/// Where a permission must be granted to matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// A cluster-scoped resource: only a ClusterRoleBinding grants it.
    Cluster,
    /// A namespaced resource in the GPU Operator's namespace.
    OperatorNamespace,
}

/// A permission worth reporting: API group, resource, the verbs that count, and what it lets a tenant do.
pub(crate) struct Grant {
    pub group: &'static str,
    pub resource: &'static str,
    pub verbs: &'static [&'static str],
    pub scope: Scope,
    pub what: &'static str,
}

/// Verbs that change an object.
pub(crate) const WRITE: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];
/// Verbs that change an existing object.
pub(crate) const EDIT: &[&str] = &["update", "patch"];

/// The GPU Operator's namespace when the input does not say (its install guide's default).
pub(crate) const DEFAULT_OPERATOR_NAMESPACE: &str = "gpu-operator";

/// Every (binding, grant) a tenant holds among `grants`, by tenant.
pub(crate) fn holdings<'c>(
    ctx: &'c Context<'_>,
    grants: &'c [Grant],
) -> BTreeMap<TenantId, Vec<(&'c Binding, &'c Grant)>> {
    let operator_ns = ctx
        .fleet
        .cluster_policy
        .as_ref()
        .and_then(|c| c.operator_namespace.as_deref())
        .unwrap_or(DEFAULT_OPERATOR_NAMESPACE);
    let mut out: BTreeMap<TenantId, Vec<(&Binding, &Grant)>> = BTreeMap::new();
    for binding in &ctx.fleet.rbac.bindings {
        let held: Vec<&Grant> = grants
            .iter()
            .filter(|g| match (g.scope, binding.namespace.as_deref()) {
                (Scope::Cluster, None) => true,
                (Scope::Cluster, Some(_)) => false,
                (Scope::OperatorNamespace, None) => true,
                (Scope::OperatorNamespace, Some(ns)) => ns == operator_ns,
            })
            .filter(|g| {
                binding
                    .rules
                    .iter()
                    .any(|r| g.verbs.iter().any(|v| r.allows(g.group, g.resource, v)))
            })
            .collect();
        if held.is_empty() {
            continue;
        }
        let tenants: BTreeSet<TenantId> = binding
            .subjects
            .iter()
            .flat_map(|s| ctx.tenancy.tenants_of_subject(s))
            .collect();
        for t in tenants {
            for g in &held {
                out.entry(t).or_default().push((binding, *g));
            }
        }
    }
    out
}

/// `ClusterRoleBinding x (ClusterRole y): patch nodes; ...`, one line per binding.
pub(crate) fn describe(holdings: &[(&Binding, &Grant)]) -> Vec<String> {
    let mut by_binding: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (b, g) in holdings {
        let name = format!("{} (role {})", b.object, b.role);
        by_binding.entry(name).or_default().insert(g.what);
    }
    by_binding
        .into_iter()
        .map(|(b, whats)| format!("{b}: {}", whats.into_iter().collect::<Vec<_>>().join(", ")))
        .collect()
}
