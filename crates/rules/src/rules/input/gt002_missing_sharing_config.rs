use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::fleet::UnresolvedKind;
use gpu_trust_model::{Certainty, Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// A node label (`nvidia.com/device-plugin.config`, `nvidia.com/mig.config`) or the ClusterPolicy
    /// (`spec.devicePlugin.config`, `spec.migManager.config`) selects a device plugin or mig-parted
    /// configuration that is not in the input: the ConfigMap, its key, or the named MIG config is missing.
    ///
    /// ## Why it matters
    ///
    /// The sharing configuration decides whether a GPU is whole, time-sliced, shared through MPS or cut
    /// into MIG instances, and so whether two tenants share a memory pool and a fault domain. Without it
    /// the audit falls back on GPU Feature Discovery labels or the plugin's default, and may miss a
    /// time-sliced GPU shared across tenants.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Node
    /// metadata:
    ///   labels:
    ///     nvidia.com/device-plugin.config: a100-shared   # no such key in the ConfigMap
    /// ```
    ///
    /// ## Remediation
    ///
    /// Include the ConfigMaps of the GPU Operator namespace in the input
    /// (`kubectl get configmaps -n gpu-operator -o yaml`), or fix the label or ClusterPolicy field that
    /// names a config that does not exist (the device plugin then runs with its default, unshared).
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes": ClusterPolicy
    ///   `devicePlugin.config.{name,default}` names a ConfigMap; the node label
    ///   `nvidia.com/device-plugin.config` picks a key.
    /// - NVIDIA GPU Operator docs, "GPU Operator with MIG": `migManager.config` and the
    ///   `nvidia.com/mig.config` label.
    pub struct MissingSharingConfig {
        code: "GT002",
        name: "missing-sharing-config",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a node or the ClusterPolicy selects a device plugin or mig-parted config that is not in the input, so the sharing mode is unknown",
        reports: [Reports::HiddenFacts(Layer::Device), Reports::UnresolvedConfig],
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for u in &ctx.fleet.unresolved {
        let what = match u.what {
            UnresolvedKind::DevicePluginConfig => "device plugin sharing config",
            UnresolvedKind::MigConfig => "mig-parted config",
            UnresolvedKind::GpuModel
            | UnresolvedKind::MissingNode
            | UnresolvedKind::ExtendedResource
            | UnresolvedKind::EnvFrom
            | UnresolvedKind::SecretEnv
            | UnresolvedKind::RuntimeClass
            | UnresolvedKind::UnmappedGpu
            | UnresolvedKind::Other => continue,
        };
        let node = u.node.as_deref().and_then(|n| ctx.fleet.node_by_name(n));
        let tenants = node.map(|n| ctx.colo().tenants_on(n)).unwrap_or_default();
        let place = match &u.node {
            Some(n) => format!("node {n}"),
            None => u.object.to_string(),
        };
        let draft = sink
            .draft(Severity::Medium, Certainty::Observed)
            .nodes(node)
            .tenants(tenants.keys().copied())
            .object(u.object.clone())
            .message(format!(
                "{place}: the {what} it selects is not in the input ({}); the sharing mode of its GPUs is unknown, so tenants on them may share a memory pool and fault domain unseen",
                u.message
            ))
            .remediation(format!(
                "Add the ConfigMaps of the GPU Operator namespace to the input, or correct the reference on {}: a missing config leaves the device plugin on its default",
                u.object
            ));
        sink.push(draft);
    }
}
