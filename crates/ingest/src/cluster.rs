//! The GPU Operator's ClusterPolicy as the fleet model records it, and the operand versions found on
//! nodes (the toolkit, driver and operator images that run there).

use crate::crd;
use crate::device_plugin::parse_mig_strategy;
use crate::util::{image_name, image_version};
use gpu_trust_model::fleet::{ClusterPolicyInfo, ExporterSpec, GpuClusterInfo};
use gpu_trust_model::{ObjectRef, Version};
use std::collections::BTreeMap;

/// Container images of the GPU Operator's operands, by repository name.
pub(crate) const TOOLKIT_IMAGE: &str = "container-toolkit";
pub(crate) const DRIVER_IMAGES: &[&str] = &["driver", "vgpu-guest-driver"];
pub(crate) const OPERATOR_IMAGE: &str = "gpu-operator";

/// Versions found in operand images on one node.
#[derive(Debug, Clone, Default)]
pub(crate) struct Operands {
    pub toolkit: Option<Version>,
    pub driver: Option<Version>,
}

/// What a running pod's images say about operand versions.
pub(crate) enum Operand {
    Toolkit(Version),
    Driver(Version),
    Operator(Version),
}

/// Recognises an operand image (registry path `nvidia`).
pub(crate) fn operand(image: &str) -> Option<Operand> {
    let lower = image.to_ascii_lowercase();
    if !lower.contains("nvidia") {
        return None;
    }
    let name = image_name(&lower);
    let version = image_version(image)?;
    if name == TOOLKIT_IMAGE {
        Some(Operand::Toolkit(version))
    } else if DRIVER_IMAGES.contains(&name) {
        Some(Operand::Driver(version))
    } else if name == OPERATOR_IMAGE {
        Some(Operand::Operator(version))
    } else {
        None
    }
}

/// The ClusterPolicy in the model's terms.
pub(crate) fn info(
    cp: &crd::ClusterPolicy,
    object: ObjectRef,
    operator_namespace: String,
) -> ClusterPolicyInfo {
    let spec = &cp.spec;
    let named = |c: &Option<crd::NamedConfig>| {
        c.as_ref().and_then(|c| {
            c.name
                .clone()
                .filter(|n| !n.is_empty())
                .map(|n| (n, c.default.clone().filter(|d| !d.is_empty())))
        })
    };
    let toolkit = spec.toolkit.as_ref();
    ClusterPolicyInfo {
        object: Some(object),
        operator_namespace: Some(operator_namespace),
        toolkit_version: toolkit
            .filter(|t| t.enabled != Some(false))
            .and_then(|t| t.version.as_deref())
            .and_then(Version::parse),
        device_plugin_version: spec
            .device_plugin
            .as_ref()
            .and_then(|d| d.version.as_deref())
            .and_then(Version::parse),
        driver_version: spec
            .driver
            .as_ref()
            .filter(|d| d.enabled != Some(false))
            .and_then(|d| d.version.as_deref())
            .and_then(Version::parse),
        mig_strategy: spec
            .mig
            .as_ref()
            .and_then(|m| m.strategy.as_deref())
            .and_then(parse_mig_strategy),
        device_plugin_config: spec.device_plugin.as_ref().and_then(|d| named(&d.config)),
        mig_manager_config: spec.mig_manager.as_ref().and_then(|m| named(&m.config)),
        cdi_enabled: spec.cdi.as_ref().and_then(|c| c.enabled),
        toolkit_env: toolkit
            .map(|t| {
                t.env
                    .iter()
                    .map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
                    .collect::<BTreeMap<_, _>>()
            })
            .unwrap_or_default(),
        cc_manager_enabled: spec.cc_manager.as_ref().and_then(|c| c.enabled),
        low_level_runtime: spec
            .operator
            .as_ref()
            .and_then(|o| o.default_runtime.clone()),
        cdi_default: spec.cdi.as_ref().and_then(|c| c.default),
        nri_plugin_enabled: spec.cdi.as_ref().and_then(|c| c.nri_plugin_enabled),
        mig_manager_version: spec
            .mig_manager
            .as_ref()
            .and_then(|m| m.version.as_deref())
            .and_then(Version::parse),
        dcgm_exporter: spec.dcgm_exporter.as_ref().map(exporter_spec),
        vgpu_manager_version: spec
            .vgpu_manager
            .as_ref()
            .filter(|m| m.enabled != Some(false))
            .and_then(|m| m.version.as_deref())
            .and_then(Version::parse),
    }
}

/// An operator's `spec.dcgmExporter` in the model's terms.
pub(crate) fn exporter_spec(e: &crd::DcgmExporterSpec) -> ExporterSpec {
    ExporterSpec {
        enabled: e.enabled,
        tag: e.version.clone(),
        env: e
            .env
            .iter()
            .map(|v| (v.name.clone(), v.value.clone().unwrap_or_default()))
            .collect(),
        args: e.args.clone(),
        pod_labels: e.enable_pod_labels,
        host_network: e.host_network,
    }
}

/// The GPUCluster in the model's terms.
pub(crate) fn gpu_cluster(g: &crd::GpuCluster, object: ObjectRef) -> GpuClusterInfo {
    let dra = g.spec.dra_driver.as_ref();
    GpuClusterInfo {
        object: Some(object),
        dra_driver_version: dra
            .and_then(|d| d.version.as_deref())
            .and_then(Version::parse),
        dra_feature_gates: dra.map(|d| d.feature_gates.clone()).unwrap_or_default(),
        dcgm_exporter: g.spec.dcgm_exporter.as_ref().map(exporter_spec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operand_images() {
        assert!(matches!(
            operand("nvcr.io/nvidia/k8s/container-toolkit:v1.17.4-ubuntu20.04"),
            Some(Operand::Toolkit(v)) if v.parts == [1, 17, 4]
        ));
        assert!(matches!(
            operand("nvcr.io/nvidia/driver:550.127.05-ubuntu22.04"),
            Some(Operand::Driver(v)) if v.parts == [550, 127, 5]
        ));
        assert!(matches!(
            operand("nvcr.io/nvidia/gpu-operator:v24.9.2"),
            Some(Operand::Operator(_))
        ));
        assert!(operand("docker.io/library/driver:1.0").is_none());
    }
}
