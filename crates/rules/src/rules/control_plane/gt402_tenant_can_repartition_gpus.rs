use super::{Grant, Scope, EDIT, WRITE};
use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{labels, Certainty, Layer, Severity};
use std::sync::LazyLock;

declare_rule! {
    /// ## What it detects
    ///
    /// RBAC that lets a tenant's subjects (the ServiceAccounts of its namespaces and the users and groups
    /// the policy lists under `subjects`) change how everyone's GPUs are cut and shared: patch nodes, edit
    /// the ClusterPolicy, edit ConfigMaps in the GPU Operator namespace, write DeviceClasses or
    /// ResourceSlices, or write DeviceTaintRules (cluster-scoped, so only a ClusterRoleBinding grants
    /// them).
    ///
    /// ## Why it matters
    ///
    /// GPU sharing is configuration. A node label `nvidia.com/mig.config` makes the MIG manager kill
    /// every GPU pod of the node and re-partition it; `nvidia.com/device-plugin.config` switches the
    /// node to time-slicing; `nvidia.com/cc.mode` resets the GPUs. The ClusterPolicy and the operator's
    /// ConfigMaps hold the time-slicing and MIG configs of every node. A tenant that can write them can
    /// put itself on another tenant's GPU, or take the GPU away. A DeviceTaintRule taints every device
    /// its selector matches, cluster-wide; with the `NoExecute` effect the device taint eviction
    /// controller deletes every pod using those devices whose claim does not tolerate the taint: one
    /// object evicts every tenant's GPU workloads.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: ClusterRoleBinding
    /// roleRef: {kind: ClusterRole, name: node-labeler}    # patch nodes
    /// subjects: [{kind: ServiceAccount, name: ci, namespace: team-a}]
    /// ```
    ///
    /// ## Remediation
    ///
    /// Remove the binding, or narrow the role: tenants never need write access to nodes,
    /// clusterpolicies.nvidia.com, the GPU Operator namespace's ConfigMaps, DeviceClasses,
    /// ResourceSlices or DeviceTaintRules. Node labelling and device taints belong to the platform's
    /// own automation.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator: the MIG manager acts on `nvidia.com/mig.config` (stopping GPU clients), the
    ///   device plugin on `nvidia.com/device-plugin.config`, the CC manager on `nvidia.com/cc.mode`;
    ///   ClusterPolicy `mig.strategy`, `devicePlugin.config`, `ccManager`, `toolkit.env`.
    /// - Kubernetes documentation, "Using RBAC Authorization".
    /// - Kubernetes documentation, "Device Taints and Tolerations" (stable since v1.37): `NoExecute`
    ///   evicts the pods already using a tainted device; a DeviceTaintRule (`resource.k8s.io/v1`,
    ///   cluster-scoped) taints every device its selector matches.
    pub struct TenantCanRepartitionGpus {
        code: "GT402",
        name: "tenant-can-repartition-gpus",
        layer: Layer::ControlPlane,
        severity: SeverityRule::Fixed(Severity::Critical),
        summary: "a tenant's subjects may patch nodes, edit the ClusterPolicy or GPU Operator ConfigMaps, or write DeviceClasses, ResourceSlices or DeviceTaintRules",
        reports: [Reports::Rbac],
    }
}

/// What write access to nodes lets a tenant do: set the node labels the GPU Operator's MIG manager,
/// device plugin and CC manager act on (sources in the doc comment above).
static PATCH_NODES: LazyLock<String> = LazyLock::new(|| {
    format!(
        "patch nodes ({}, {}, {} labels)",
        labels::MIG_CONFIG,
        labels::DEVICE_PLUGIN_CONFIG,
        labels::CC_MODE
    )
});

/// Permissions that re-partition or re-share GPUs (sources in the doc comment above).
pub(crate) static GRANTS: LazyLock<[Grant; 6]> = LazyLock::new(|| {
    [
        Grant {
            group: "",
            resource: "nodes",
            verbs: EDIT,
            scope: Scope::Cluster,
            what: PATCH_NODES.as_str(),
        },
        Grant {
            group: gpu_trust_model::stack::NVIDIA_API_GROUP,
            resource: "clusterpolicies",
            verbs: WRITE,
            scope: Scope::Cluster,
            what: "edit the ClusterPolicy (MIG strategy, device plugin config, CC manager, toolkit settings)",
        },
        Grant {
            group: "",
            resource: "configmaps",
            verbs: WRITE,
            scope: Scope::OperatorNamespace,
            what: "write ConfigMaps in the GPU Operator namespace (time-slicing and mig-parted configs)",
        },
        Grant {
            group: "resource.k8s.io",
            resource: "deviceclasses",
            verbs: WRITE,
            scope: Scope::Cluster,
            what: "write DeviceClasses",
        },
        Grant {
            group: "resource.k8s.io",
            resource: "resourceslices",
            verbs: WRITE,
            scope: Scope::Cluster,
            what: "write ResourceSlices",
        },
        Grant {
            group: "resource.k8s.io",
            resource: "devicetaintrules",
            verbs: WRITE,
            scope: Scope::Cluster,
            what: "write DeviceTaintRules (a NoExecute taint evicts every pod on the devices it selects)",
        },
    ]
});

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for (tenant, held) in super::holdings(ctx, &GRANTS[..]) {
        let lines = super::describe(&held);
        let mut draft = sink
            .draft(Severity::Critical, Certainty::Observed)
            .tenants([tenant])
            .message(format!(
                "subjects of tenant {} can re-partition, re-share or take away every tenant's GPUs: {}",
                ctx.tenant_name(tenant),
                lines.join("; ")
            ))
            .remediation(format!(
                "Remove these bindings for {}'s subjects or narrow their roles: tenants need no write access to nodes, clusterpolicies.nvidia.com, the GPU Operator namespace's ConfigMaps, DeviceClasses, ResourceSlices or DeviceTaintRules ({})",
                ctx.tenant_name(tenant),
                text::list(&held.iter().map(|(b, _)| b.object.to_string()).collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>())
            ));
        for (b, _) in &held {
            draft = draft.object(b.object.clone());
        }
        sink.push(draft);
    }
}
