use super::{Grant, Scope, WRITE};
use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::{Certainty, Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// A ClusterRoleBinding that lets a tenant's subjects create or modify CustomResourceDefinitions or
    /// other cluster-scoped objects (namespaces, RBAC, webhooks, storage and priority classes, runtime
    /// classes...), or hold the `escalate`, `bind` or `impersonate` verbs cluster-wide. The GPU-specific
    /// writes (nodes, ClusterPolicy, DeviceClasses, ResourceSlices, DeviceTaintRules) are GT402.
    ///
    /// ## Why it matters
    ///
    /// Cluster-scoped objects belong to every tenant at once. A tenant that can write a webhook sees and
    /// changes every tenant's pods; one that can write ClusterRoleBindings, or `bind`, `escalate` or
    /// `impersonate`, can give itself any right, including GT402's. Namespaces stop being a boundary.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: ClusterRoleBinding
    /// roleRef: {kind: ClusterRole, name: crd-installer}   # create customresourcedefinitions
    /// subjects: [{kind: Group, name: ml-devs}]            # a subject of tenant platform-ml
    /// ```
    ///
    /// ## Remediation
    ///
    /// Grant tenants Roles in their own namespaces only. Install CRDs, webhooks and cluster RBAC through
    /// the platform's pipeline, not with tenant credentials.
    ///
    /// ## References
    ///
    /// - Kubernetes documentation, "Using RBAC Authorization": privilege escalation prevention (`escalate`,
    ///   `bind`), user impersonation (`impersonate`), cluster-scoped resources need a ClusterRoleBinding.
    /// - Kubernetes API reference: cluster-scoped resources (`kubectl api-resources --namespaced=false`).
    pub struct TenantCanWriteClusterScope {
        code: "GT403",
        name: "tenant-can-write-cluster-scope",
        layer: Layer::ControlPlane,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a tenant's subjects may create or modify CRDs or other cluster-scoped objects, or hold escalate, bind or impersonate",
        reports: [Reports::Rbac],
    }
}

const fn write(group: &'static str, resource: &'static str, what: &'static str) -> Grant {
    Grant {
        group,
        resource,
        verbs: WRITE,
        scope: Scope::Cluster,
        what,
    }
}

/// Cluster-scoped resources of the Kubernetes API a tenant must not write, and the RBAC verbs that
/// grant further rights (Kubernetes API reference; RBAC documentation for escalate, bind, impersonate).
/// Nodes, ClusterPolicies, DeviceClasses, ResourceSlices and DeviceTaintRules are GT402's.
const GRANTS: &[Grant] = &[
    write(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "write CustomResourceDefinitions",
    ),
    write("", "namespaces", "write namespaces"),
    write("", "persistentvolumes", "write PersistentVolumes"),
    write(
        "rbac.authorization.k8s.io",
        "clusterroles",
        "write ClusterRoles",
    ),
    write(
        "rbac.authorization.k8s.io",
        "clusterrolebindings",
        "write ClusterRoleBindings",
    ),
    write(
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        "write mutating webhooks",
    ),
    write(
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        "write validating webhooks",
    ),
    write(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
        "write admission policies",
    ),
    write(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
        "write admission policy bindings",
    ),
    write("apiregistration.k8s.io", "apiservices", "write APIServices"),
    write("storage.k8s.io", "storageclasses", "write StorageClasses"),
    write("storage.k8s.io", "csidrivers", "write CSIDrivers"),
    write(
        "scheduling.k8s.io",
        "priorityclasses",
        "write PriorityClasses",
    ),
    write("node.k8s.io", "runtimeclasses", "write RuntimeClasses"),
    write(
        "networking.k8s.io",
        "ingressclasses",
        "write IngressClasses",
    ),
    write(
        "certificates.k8s.io",
        "certificatesigningrequests",
        "write CertificateSigningRequests",
    ),
    Grant {
        group: "rbac.authorization.k8s.io",
        resource: "clusterroles",
        verbs: &["escalate", "bind"],
        scope: Scope::Cluster,
        what: "escalate or bind roles",
    },
    Grant {
        group: "rbac.authorization.k8s.io",
        resource: "roles",
        verbs: &["escalate", "bind"],
        scope: Scope::Cluster,
        what: "escalate or bind roles",
    },
    Grant {
        group: "",
        resource: "users",
        verbs: &["impersonate"],
        scope: Scope::Cluster,
        what: "impersonate users",
    },
    Grant {
        group: "",
        resource: "groups",
        verbs: &["impersonate"],
        scope: Scope::Cluster,
        what: "impersonate groups",
    },
    Grant {
        group: "",
        resource: "serviceaccounts",
        verbs: &["impersonate"],
        scope: Scope::Cluster,
        what: "impersonate service accounts",
    },
];

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for (tenant, held) in super::holdings(ctx, GRANTS) {
        let lines = super::describe(&held);
        let mut draft = sink
            .draft(Severity::High, Certainty::Observed)
            .tenants([tenant])
            .message(format!(
                "subjects of tenant {} hold cluster-wide rights over objects every tenant shares: {}",
                ctx.tenant_name(tenant),
                lines.join("; ")
            ))
            .remediation(format!(
                "Replace these ClusterRoleBindings for {}'s subjects with Roles in its own namespaces; install CRDs, webhooks and cluster RBAC through the platform's pipeline",
                ctx.tenant_name(tenant)
            ));
        for (b, _) in &held {
            draft = draft.object(b.object.clone());
        }
        sink.push(draft);
    }
}
