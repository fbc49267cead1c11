//! The NVIDIA GPU Operator: its ClusterPolicy names the device plugin's ConfigMap of named configs
//! and the mig-parted ConfigMap, and the operator deploys GPU Feature Discovery ([`super::gfd`]).
//!
//! Sources (NVIDIA/gpu-operator):
//! - `controllers/object_controls.go`: the device plugin's config-manager gets `DEFAULT_CONFIG` from
//!   `spec.devicePlugin.config.default` and `FALLBACK_STRATEGIES=empty`, and reads the node label
//!   `nvidia.com/device-plugin.config`; `spec.devicePlugin.env` reaches the plugin's environment;
//!   `spec.mig.strategy` becomes its `MIG_STRATEGY`.
//! - `api/nvidia/v1/clusterpolicy_types.go`: `spec.devicePlugin.enabled`, `spec.cdi.enabled`.
//! - `assets/state-mig-manager/0400_configmap.yaml`: the stock mig-parted ConfigMap
//!   `default-mig-parted-config` with key `config.yaml`; since v26.3.0 the operator also writes a
//!   per-node `<node>-mig-config`.
//! - The Helm chart's documented namespace `gpu-operator`.

use super::{Fallback, PluginConfig, PluginEnv, PluginSelection};
use crate::crd;
use gpu_trust_model::fleet::{ClusterPolicyInfo, GpuWorkload, Platform};
use gpu_trust_model::ObjectRef;

/// The node label choosing what the operator deploys on a node when sandbox workloads are enabled
/// (`controllers/state_manager.go`, `gpuWorkloadConfigLabelKey`, read by `getWorkloadConfig`): its
/// value when valid, else the ClusterPolicy's `sandboxWorkloads.defaultWorkload` (when valid, else
/// `container`); with sandbox workloads disabled, always `container`. What each runs:
/// [`GpuWorkload`].
pub(crate) const WORKLOAD_CONFIG: &str = gpu_trust_model::labels::WORKLOAD_CONFIG;

/// What the operator configures a node with `labels` for; `None` unless the ClusterPolicy enables
/// sandbox workloads and the node is given VMs.
pub(crate) fn sandbox_workload(
    cp: Option<&crd::ClusterPolicy>,
    labels: &std::collections::BTreeMap<String, String>,
) -> Option<GpuWorkload> {
    let sandbox = cp?.spec.sandbox_workloads.as_ref()?;
    if sandbox.enabled != Some(true) {
        return None;
    }
    labels
        .get(WORKLOAD_CONFIG)
        .and_then(|w| GpuWorkload::parse(w))
        .or_else(|| {
            sandbox
                .default_workload
                .as_deref()
                .and_then(GpuWorkload::parse)
        })
        .filter(|w| !w.is_container())
}

/// The namespace the GPU Operator installs into when nothing in the input says otherwise.
pub(crate) const DEFAULT_NAMESPACE: &str = gpu_trust_model::stack::GPU_OPERATOR_NAMESPACE;
/// The mig-parted ConfigMap the operator ships (`MigPartedDefaultConfigMapName`) and its key.
pub(crate) const DEFAULT_MIG_CONFIGMAP: &str = "default-mig-parted-config";
pub(crate) const MIG_CONFIG_KEY: &str = "config.yaml";
/// The per-node mig-parted ConfigMap of operator v26.3.0 and later: `<node>-mig-config`.
pub(crate) const PER_NODE_MIG_CONFIGMAP_SUFFIX: &str = "-mig-config";
/// When `spec.cdi.enabled` is set and nothing else chooses, the operator passes the device plugin
/// `DEVICE_LIST_STRATEGY=envvar,cdi-annotations` (older releases; newer ones use
/// `cdi-annotations,cdi-cri`). Without the operator's release the older value is kept, so that the
/// `envvar` strategy is never assumed away on a guess.
pub(crate) const CDI_DEVICE_LIST_STRATEGY: &[&str] = &["envvar", "cdi-annotations"];
/// The variable the plugin reads its device list strategy from.
pub(crate) const DEVICE_LIST_STRATEGY_ENV: &str = "DEVICE_LIST_STRATEGY";

/// The operator's namespace when nothing else in the input says: OLM's when a node's labels say
/// OpenShift, else the Helm chart's.
pub(crate) fn default_namespace<'l>(
    mut node_labels: impl Iterator<Item = &'l std::collections::BTreeMap<String, String>>,
) -> &'static str {
    if node_labels.any(super::openshift::is_openshift) {
        super::openshift::OPERATOR_NAMESPACE
    } else {
        DEFAULT_NAMESPACE
    }
}

/// How the operator's device plugin finds its config; `None` when the ClusterPolicy disables the
/// device plugin.
pub(crate) fn plugin_selection(
    cp: &crd::ClusterPolicy,
    info: &ClusterPolicyInfo,
    owner: &ObjectRef,
    namespace: &str,
) -> Option<PluginSelection> {
    if cp.spec.device_plugin.as_ref().and_then(|d| d.enabled) == Some(false) {
        return None;
    }
    let config = match &info.device_plugin_config {
        Some((configmap, default)) => PluginConfig::Named {
            configmap: configmap.clone(),
            label: super::gfd::DEVICE_PLUGIN_CONFIG.to_string(),
            default: default.clone(),
            fallbacks: vec![Fallback::Empty],
        },
        None => PluginConfig::None,
    };
    Some(PluginSelection {
        platform: Platform::GpuOperator,
        owner: owner.clone(),
        namespace: namespace.to_string(),
        config,
        env: PluginEnv {
            mig_strategy: info.mig_strategy,
            device_list_strategy: device_list_env(cp),
            default_device_list_strategy: (info.cdi_enabled == Some(true)).then(|| {
                CDI_DEVICE_LIST_STRATEGY
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            }),
        },
    })
}

/// `DEVICE_LIST_STRATEGY` set on the device plugin through the ClusterPolicy (the environment beats
/// the config file in the plugin's order of precedence).
pub(crate) fn device_list_env(cp: &crd::ClusterPolicy) -> Option<Vec<String>> {
    cp.spec
        .device_plugin
        .as_ref()?
        .env
        .iter()
        .find(|e| e.name == DEVICE_LIST_STRATEGY_ENV)
        .and_then(|e| e.value.as_deref())
        .map(split_list)
}

/// A comma-separated list, trimmed, without empty items.
pub(crate) fn split_list(v: &str) -> Vec<String> {
    v.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The mig-parted ConfigMaps that may hold a node's MIG config, in the order the operator prefers
/// them: the per-node one, then the one the ClusterPolicy names (or the stock one).
pub(crate) fn mig_configmaps(info: Option<&ClusterPolicyInfo>, node: &str) -> [String; 2] {
    let named = info
        .and_then(|i| i.mig_manager_config.as_ref())
        .map(|(n, _)| n.clone())
        .unwrap_or_else(|| DEFAULT_MIG_CONFIGMAP.to_string());
    [format!("{node}{PER_NODE_MIG_CONFIGMAP_SUFFIX}"), named]
}
