use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::stack::{MANAGEMENT_ALL_GPUS, NRI_MANAGEMENT_NAMESPACES_ENV};
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// The GPU Operator's NRI plugin is on (ClusterPolicy `spec.cdi.nriPluginEnabled: true`) and the
    /// toolkit's `NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES` (ClusterPolicy `spec.toolkit.env`) lets pods of
    /// namespaces other than the operator's request management CDI devices. Namespaces that belong to
    /// tenants are named.
    ///
    /// ## Why it matters
    ///
    /// A management CDI device is a GPU management container's way to every GPU of the node: a pod
    /// annotated `nvidia.cdi.k8s.io/container.<name>: management.nvidia.com/gpu=all` gets them all,
    /// without requesting a GPU, so the scheduler and device plugin never see it. By default only the
    /// operator's own namespace may do this; each namespace added to the list can reach every tenant's
    /// GPUs on every node.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: ClusterPolicy
    /// spec:
    ///   cdi: {enabled: true, nriPluginEnabled: true}
    ///   toolkit:
    ///     env: [{name: NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES, value: "monitoring,team-a"}]
    /// ```
    ///
    /// ## Remediation
    ///
    /// Remove the variable, or list only platform namespaces that tenants cannot create pods in. A
    /// tenant's monitoring or debugging tool should request GPUs through resources like any workload.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator 26.7.0 release notes and `gpu-operator/cdi.rst` ("Requesting CDI Devices
    ///   with the NRI Plugin"): by default only pods in the operator's namespace may request management
    ///   CDI devices; the variable is a comma-separated list.
    /// - NVIDIA Container Toolkit `cmd/nvidia-ctk-installer`: `--nri-management-cdi-device-namespaces`.
    pub struct NriManagementNamespacesWidened {
        code: "GT209",
        name: "nri-management-namespaces-widened",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "the NRI plugin lets namespaces other than the GPU Operator's request every GPU of a node as a management CDI device",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let Some(cp) = ctx.fleet.cluster_policy.as_ref() else {
        return;
    };
    if cp.nri_plugin_enabled != Some(true) {
        return;
    }
    let allowed = cp.nri_management_namespaces();
    let Some((operator_ns, widened)) = allowed.split_first() else {
        return;
    };
    let widened: BTreeSet<&str> = widened.iter().copied().collect();
    if widened.is_empty() {
        return;
    }
    let tenants: BTreeSet<_> = widened
        .iter()
        .filter_map(|n| ctx.tenancy.tenant_of(n))
        .collect();
    // The NRI plugin runs with the toolkit, on the nodes for containers.
    let nodes: BTreeSet<usize> = ctx
        .fleet
        .gpu_nodes()
        .map(|(id, _)| id)
        .filter(|id| super::runs_containers(ctx, *id))
        .collect();
    let names: Vec<String> = widened.iter().map(|n| n.to_string()).collect();
    let whose = if tenants.is_empty() {
        "no tenant's namespace is among them, but whoever can create pods there can".to_string()
    } else {
        format!(
            "namespaces of {} {} are among them",
            if tenants.len() == 1 {
                "tenant"
            } else {
                "tenants"
            },
            text::tenants(ctx, tenants.iter().copied())
        )
    };
    let certainty = if tenants.is_empty() {
        Certainty::Possible
    } else {
        Certainty::Observed
    };
    let mut draft = sink
        .draft(Severity::High, certainty)
        .key(format!("nri/{}", names.join(",")))
        .tenants(tenants.iter().copied())
        .nodes(nodes.iter().copied())
        .message(format!(
            "the NRI plugin lets pods of {} {} (beyond the GPU Operator's namespace {operator_ns}) request `{MANAGEMENT_ALL_GPUS}`, every GPU of their node, without a GPU request; {whose}",
            if names.len() == 1 { "namespace" } else { "namespaces" },
            text::list(&names)
        ))
        .remediation(format!(
            "Remove {} from ClusterPolicy `spec.toolkit.env` `{NRI_MANAGEMENT_NAMESPACES_ENV}`, or keep only platform namespaces tenants cannot create pods in",
            text::list(&names)
        ));
    if let Some(o) = cp.object.clone() {
        draft = draft.object(o);
    }
    sink.push(draft);
}
