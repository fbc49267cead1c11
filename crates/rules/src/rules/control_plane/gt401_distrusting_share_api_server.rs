use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::isolation::LAYERS;
use gpu_trust_model::{Certainty, Layer, Severity, Trust};

declare_rule! {
    /// ## What it detects
    ///
    /// Two tenants with trust `none` that share one API server: they are separated by namespaces, not by
    /// clusters or virtual clusters. Tenants count when their workloads run or may run on GPU nodes
    /// (the fleet this audit is about); tenants in a virtual cluster have an API server of their own.
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

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let tenants: Vec<_> = ctx.gpu_tenants().into_iter().collect();
    let virtual_clusters = ctx.virtual_cluster_tenants();
    let cp = LAYERS.iter().find(|l| l.layer == Layer::ControlPlane);
    for (i, a) in tenants.iter().enumerate() {
        for b in &tenants[i + 1..] {
            if ctx.trust(*a, *b) != Trust::None
                || virtual_clusters.contains(a)
                || virtual_clusters.contains(b)
            {
                continue;
            }
            let (na, nb) = (ctx.tenant_name(*a), ctx.tenant_name(*b));
            let draft = sink
                .draft(Severity::Medium, Certainty::Observed)
                .tenants([*a, *b])
                .message(format!(
                    "{na} and {nb} (trust none) share one API server, separated by namespaces only: they share {}",
                    cp.map_or("the control plane", |l| l.shared)
                ))
                .remediation(format!(
                    "Give {na} and {nb} separate clusters or virtual clusters (vCluster) for the API server; or accept it in the policy: `accept: [{{rule: GT401, tenants: [{na}, {nb}], reason: ...}}]`"
                ));
            sink.push(draft);
        }
    }
}
