//! The cluster's GPU stack as its objects configure it: the GPU Operator's ClusterPolicy or
//! GPUCluster, the DCGM exporter, and the RuntimeClasses.

use super::MigStrategy;
use crate::location::ObjectRef;
use crate::version::Version;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClassInfo {
    pub object: ObjectRef,
    pub name: String,
    pub handler: String,
}

impl RuntimeClassInfo {
    /// Whether its handler is a confidential one ([`is_confidential_handler`]).
    pub fn is_confidential(&self) -> bool {
        is_confidential_handler(&self.handler)
    }
}

/// A CPU's trusted execution environment, as a plan file's pool names it (`tee:`), and the runtime
/// class a confidential container with an NVIDIA GPU sets there. The kata-deploy chart installs each
/// class with a handler of the same name; `kata-qemu-nvidia-gpu`, without a TEE, does not start the
/// GPU in CC mode and is no confidential container (NVIDIA Confidential Containers, "Configuring
/// Confidential Container Workloads", Select a Container Runtime Class,
/// <https://docs.nvidia.com/confidential-computing/containers/configure-workloads>; GPU Operator
/// "Deploy with Kata Containers", the runtime classes kata-deploy installs).
#[derive(Debug, PartialEq, Eq)]
pub struct Tee {
    pub name: &'static str,
    pub runtime_class: &'static str,
}

/// AMD SEV-SNP and Intel TDX.
pub static TEES: [Tee; 2] = [
    Tee {
        name: "snp",
        runtime_class: "kata-qemu-nvidia-gpu-snp",
    },
    Tee {
        name: "tdx",
        runtime_class: "kata-qemu-nvidia-gpu-tdx",
    },
];

/// The TEE named `name` (`snp`, `tdx`).
pub fn tee(name: &str) -> Option<&'static Tee> {
    TEES.iter().find(|t| t.name == name)
}

/// Whether a runtime handler starts pods in a confidential VM: a Kata handler named for a CPU TEE.
/// A Kata VM alone is not one: NVIDIA's `kata-qemu-nvidia-gpu` "does not start the GPU in CC mode"
/// (NVIDIA Confidential Containers, "Configuring Confidential Container Workloads"), and the
/// Confidential Containers chart's `kata-qemu-coco-dev` runs "without hardware support" (its
/// "Running a workload" guide). The TEE handlers: `kata-qemu-snp`, `kata-qemu-tdx`,
/// `kata-qemu-nvidia-gpu-snp`, `kata-qemu-nvidia-gpu-tdx`, IBM Secure Execution's `kata-qemu-se`
/// (and `-runtime-rs` variants), Arm CCA's `kata-qemu-cca`, and AKS's confidential containers
/// handler `kata-cc` (runtime class `kata-cc-isolation`, on AMD SEV-SNP). Other runtimes that name
/// their TEE the same way (Contrast's `contrast-cc-...-snp-...` handlers) count too.
pub fn is_confidential_handler(handler: &str) -> bool {
    let h = handler.to_ascii_lowercase();
    let tee = h
        .split(['-', '_', '.'])
        .any(|t| matches!(t, "snp" | "tdx" | "sev" | "se" | "cca"));
    tee || h.starts_with("kata-cc")
}

/// What the ClusterPolicy (nvidia.com/v1) says.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicyInfo {
    pub object: Option<ObjectRef>,
    /// Namespace the GPU Operator runs in (from the ConfigMaps' namespace or `gpu-operator`).
    pub operator_namespace: Option<String>,
    pub toolkit_version: Option<Version>,
    pub device_plugin_version: Option<Version>,
    pub driver_version: Option<Version>,
    pub mig_strategy: Option<MigStrategy>,
    /// `spec.devicePlugin.config.{name,default}`.
    pub device_plugin_config: Option<(String, Option<String>)>,
    /// `spec.migManager.config.{name,default}`.
    pub mig_manager_config: Option<(String, Option<String>)>,
    pub cdi_enabled: Option<bool>,
    /// `spec.toolkit.env` as a map.
    pub toolkit_env: BTreeMap<String, String>,
    pub cc_manager_enabled: Option<bool>,
    pub low_level_runtime: Option<String>,
    /// `spec.cdi.default`: before GPU Operator 25.10.0, `cdi.enabled` only made CDI available and
    /// this made it the runtime's default (`api/nvidia/v1/clusterpolicy_types.go` at v25.3.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdi_default: Option<bool>,
    /// `spec.cdi.nriPluginEnabled`: the NRI plugin injects CDI devices (GPU Operator 26.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nri_plugin_enabled: Option<bool>,
    /// `spec.migManager.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_manager_version: Option<Version>,
    /// `spec.dcgmExporter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcgm_exporter: Option<ExporterSpec>,
    /// `spec.vgpuManager.version` when the manager is not disabled: the NVIDIA vGPU Manager version
    /// (`--set vgpuManager.version=<driver version>`, GPU Operator "GPU Operator with KubeVirt").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vgpu_manager_version: Option<Version>,
}

impl ClusterPolicyInfo {
    /// The namespaces whose pods the NRI plugin gives management CDI devices: the toolkit's own,
    /// which is the operator's (first), and those `NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES` lists, a
    /// comma-separated list of exact names (`crate::stack::NRI_MANAGEMENT_NAMESPACES_ENV`; NVIDIA
    /// Container Toolkit `cmd/nvidia-ctk-installer/main.go`: `--nri-namespace` and
    /// `--nri-management-cdi-device-namespaces`).
    pub fn nri_management_namespaces(&self) -> Vec<&str> {
        let own = self
            .operator_namespace
            .as_deref()
            .unwrap_or(crate::stack::GPU_OPERATOR_NAMESPACE);
        let mut out = vec![own];
        let listed = self
            .toolkit_env
            .get(crate::stack::NRI_MANAGEMENT_NAMESPACES_ENV)
            .into_iter()
            .flat_map(|l| l.split(','))
            .map(str::trim);
        for n in listed {
            if !n.is_empty() && !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }
}

/// The DCGM exporter as an operator spec configures it (ClusterPolicy or GPUCluster
/// `spec.dcgmExporter`, `api/nvidia/v1/clusterpolicy_types.go` `DCGMExporterSpec`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExporterSpec {
    pub enabled: Option<bool>,
    /// `version`: the image tag (`4.5.3-4.8.2-ubuntu22.04`), as written.
    pub tag: Option<String>,
    /// `env`, as a map.
    pub env: BTreeMap<String, String>,
    pub args: Vec<String>,
    /// `enablePodLabels` (GPU Operator 26.3.2).
    pub pod_labels: Option<bool>,
    pub host_network: Option<bool>,
}

/// What the GPU Operator's `GPUCluster` (`nvidia.com/v1alpha1`, GPU Operator 26.7.0) says: the
/// DRA-based stack it deploys instead of a ClusterPolicy (`api/nvidia/v1alpha1/gpucluster_types.go`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuClusterInfo {
    pub object: Option<ObjectRef>,
    /// `spec.draDriver.version` (an image tag).
    pub dra_driver_version: Option<Version>,
    /// `spec.draDriver.featureGates`.
    pub dra_feature_gates: BTreeMap<String, bool>,
    /// `spec.dcgmExporter`.
    pub dcgm_exporter: Option<ExporterSpec>,
}

#[cfg(test)]
mod confidential_handler_tests {
    use super::is_confidential_handler;

    #[test]
    fn a_kata_vm_is_confidential_only_on_a_tee() {
        for h in [
            "kata-qemu-nvidia-gpu-snp",
            "kata-qemu-nvidia-gpu-tdx",
            "kata-qemu-snp",
            "kata-qemu-tdx",
            "kata-qemu-se-runtime-rs",
            "kata-cc",
            "KATA-QEMU-SNP",
        ] {
            assert!(is_confidential_handler(h), "{h}");
        }
        for h in [
            "kata",
            "kata-qemu",
            "kata-clh",
            "kata-qemu-nvidia-gpu",
            "kata-qemu-coco-dev",
            "kata-qemu-coco-dev-runtime-rs",
            "runc",
            "nvidia",
            "gvisor",
        ] {
            assert!(!is_confidential_handler(h), "{h}");
        }
    }
}
