use super::super::common::{self, PairRule, Wording};
use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::isolation::LAYERS;
use gpu_trust_model::{Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// Tenants with trust `none` between them that share one API server: they are separated by
    /// namespaces, not by clusters or virtual clusters. Every tenant with a namespace in the input
    /// counts, whether or not it runs GPU workloads; tenants whose workloads all run in a virtual
    /// cluster have an API server of their own. One finding covers the API server, with the tenants and
    /// the number of pairs; an acceptance of the rule for two tenants accepts that pair.
    ///
    /// ## Why it matters
    ///
    /// Namespaces share the API server, etcd, RBAC, CRDs, admission and every controller. A mistake in a
    /// ClusterRole, a vulnerable controller or an operator with cluster-wide rights reaches across all of
    /// them, and cluster-scoped objects (nodes, DeviceClasses, the ClusterPolicy) are visible to all.
    /// Tenants that distrust each other usually want their own control plane; a virtual cluster gives one
    /// while still sharing nodes and drivers.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// tenants:
    ///   - {name: acme, namespaces: [cust-acme]}
    ///   - {name: globex, namespaces: [cust-globex]}
    /// # trust.default: none, one cluster
    /// ```
    ///
    /// ## Remediation
    ///
    /// Give tenants of trust `none` separate clusters, or virtual clusters (vCluster) for the API server;
    /// or accept the shared control plane in the policy when it is a decision
    /// (`accept: [{rule: GT401, tenants: [a, b], reason: ...}]`).
    ///
    /// ## References
    ///
    /// - Kubernetes documentation, "Multi-tenancy": namespaces share the control plane; virtual control
    ///   planes give each tenant its own API server while worker nodes stay shared.
    /// - vCluster documentation: shared nodes and private nodes.
    pub struct DistrustingShareApiServer {
        code: "GT401",
        name: "distrusting-share-api-server",
        layer: Layer::ControlPlane,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "two tenants with trust none share one API server (namespaces, not virtual clusters)",
    }
}

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`).
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let cp = LAYERS.iter().find(|l| l.layer == Layer::ControlPlane);
    common::declared(ctx, sink, PairRule::BY_LEVEL, |_, tally| {
        Wording {
        message: format!(
            "{} share one API server, separated by namespaces only: they share {}",
            wording::tally_phrase(ctx, tally),
            cp.map_or("the control plane", |l| l.shared)
        ),
        remediation: format!(
            "{} separate clusters or virtual clusters (vCluster) for the API server; or accept it in the policy: {}",
            wording::give(ctx, tally),
            wording::accept_advice(ctx, RULE.code, tally)
        ),
    }
    });
}
