//! Dynamic Resource Allocation: which claims are NVIDIA GPU claims, and how each shares its device.
//!
//! NVIDIA's DRA driver (NVIDIA/k8s-dra-driver-gpu, now kubernetes-sigs/dra-driver-nvidia-gpu) publishes
//! the DeviceClasses `gpu.nvidia.com`, `mig.nvidia.com` and `vfio.gpu.nvidia.com`; a claim's or
//! DeviceClass's opaque config for driver `gpu.nvidia.com` carries parameters of group
//! `resource.nvidia.com/v1beta1` (`api/nvidia.com/resource/v1beta1/api.go`): `GpuConfig` (a whole
//! GPU) or `MigDeviceConfig` (one MIG instance), each with `sharing.strategy` `TimeSlicing` or `MPS`
//! (`sharing.go`), and `VfioDeviceConfig` (a GPU passed through to a VM, `vfiodeviceconfig.go`). The
//! move to kubernetes-sigs kept the driver name, the group, the kinds and the DeviceClasses; its
//! `gpu.nvidia.com` DeviceClass also maps the extended resource `nvidia.com/gpu` under
//! `resource.k8s.io/v1` (`deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml`).
//! Sharing inside a MIG instance is MIG time-slicing or MIG MPS, never whole-GPU sharing. Without a
//! config, the pods that share one ResourceClaim share its device (time-slicing); a claim made from a
//! template belongs to one pod.

use crate::crd;
use gpu_trust_model::fleet::{DraStrategy, ResourceClaimInfo};
use gpu_trust_model::ObjectRef;
use std::collections::BTreeMap;

pub(crate) const NVIDIA_DRIVER: &str = "gpu.nvidia.com";
const MIG_CLASS: &str = "mig.nvidia.com";
const MIG_CONFIG_KIND: &str = "MigDeviceConfig";
const TIME_SLICING: &str = "TimeSlicing";
const MPS: &str = "MPS";
const NVIDIA_CLASSES: &[&str] = &["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"];

#[derive(Debug, Clone)]
pub(crate) struct ClaimDraft {
    pub object: ObjectRef,
    pub namespace: String,
    pub name: String,
    pub template: bool,
    pub device_class: Option<String>,
    pub config: Option<DraStrategy>,
    /// Allocated devices: (pool, device), e.g. (`gpu-node-1`, `gpu-0`).
    pub allocated: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub(crate) struct DeviceClassDraft {
    pub name: String,
    pub config: Option<DraStrategy>,
    pub nvidia: bool,
}

/// The strategy an NVIDIA opaque config names.
pub(crate) fn config_strategy(configs: &[crd::DeviceConfig]) -> Option<DraStrategy> {
    configs.iter().find_map(|c| {
        let o = c.opaque.as_ref()?;
        if o.driver.as_deref() != Some(NVIDIA_DRIVER) {
            return None;
        }
        let p = o.parameters.as_ref()?;
        let kind = p.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        let sharing = p
            .get("sharing")
            .and_then(|s| s.get("strategy"))
            .and_then(|s| s.as_str());
        Some(match (kind, sharing) {
            (MIG_CONFIG_KIND, Some(MPS)) => DraStrategy::MigMps,
            (MIG_CONFIG_KIND, Some(TIME_SLICING)) => DraStrategy::MigTimeSlicing,
            (MIG_CONFIG_KIND, _) => DraStrategy::Mig,
            (_, Some(MPS)) => DraStrategy::Mps,
            (_, Some(TIME_SLICING)) => DraStrategy::TimeSlicing,
            _ => DraStrategy::Exclusive,
        })
    })
}

pub(crate) fn claim_draft(
    object: ObjectRef,
    namespace: String,
    name: String,
    template: bool,
    spec: &crd::ClaimSpec,
    status: Option<&crd::ClaimStatus>,
) -> ClaimDraft {
    let device_class = spec
        .devices
        .requests
        .iter()
        .find_map(|r| r.device_class().map(str::to_string));
    let allocated = status
        .and_then(|s| s.allocation.as_ref())
        .and_then(|a| a.devices.as_ref())
        .map(|d| {
            d.results
                .iter()
                .filter(|r| r.driver.as_deref().is_none_or(|dr| dr == NVIDIA_DRIVER))
                .filter_map(|r| Some((r.pool.clone()?, r.device.clone()?)))
                .collect()
        })
        .unwrap_or_default();
    ClaimDraft {
        object,
        namespace,
        name,
        template,
        device_class,
        config: config_strategy(&spec.devices.config),
        allocated,
    }
}

/// The claims that are NVIDIA GPU claims, with their strategy.
pub(crate) fn resolve(
    claims: &[ClaimDraft],
    classes: &[DeviceClassDraft],
) -> Vec<ResourceClaimInfo> {
    let by_name: BTreeMap<&str, &DeviceClassDraft> =
        classes.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut out: Vec<ResourceClaimInfo> = claims
        .iter()
        .filter_map(|c| {
            let class = c
                .device_class
                .as_deref()
                .and_then(|n| by_name.get(n).copied());
            let nvidia = c.config.is_some()
                || class.is_some_and(|d| d.nvidia)
                || c.device_class
                    .as_deref()
                    .is_some_and(|n| NVIDIA_CLASSES.contains(&n));
            if !nvidia {
                return None;
            }
            let strategy = c.config.or(class.and_then(|d| d.config)).unwrap_or(
                if c.device_class.as_deref() == Some(MIG_CLASS) {
                    DraStrategy::Mig
                } else if c.template {
                    DraStrategy::Exclusive
                } else {
                    DraStrategy::TimeSlicing
                },
            );
            Some(ResourceClaimInfo {
                object: c.object.clone(),
                template: c.template,
                device_class: c.device_class.clone(),
                strategy,
            })
        })
        .collect();
    out.sort_by(|a, b| a.object.cmp(&b.object));
    out
}

pub(crate) fn class_draft(dc: &crd::DeviceClass) -> DeviceClassDraft {
    let name = dc.metadata.name.clone().unwrap_or_default();
    DeviceClassDraft {
        nvidia: NVIDIA_CLASSES.contains(&name.as_str())
            || dc.spec.config.iter().any(|c| {
                c.opaque.as_ref().and_then(|o| o.driver.as_deref()) == Some(NVIDIA_DRIVER)
            }),
        config: config_strategy(&dc.spec.config),
        name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(kind: &str, strategy: Option<&str>) -> Vec<crd::DeviceConfig> {
        let mut parameters =
            serde_json::json!({"apiVersion": "resource.nvidia.com/v1beta1", "kind": kind});
        if let Some(s) = strategy {
            parameters["sharing"] = serde_json::json!({"strategy": s});
        }
        let v =
            serde_json::json!([{"opaque": {"driver": "gpu.nvidia.com", "parameters": parameters}}]);
        serde_json::from_value(v).unwrap_or_default()
    }

    /// A `MigDeviceConfig` with a sharing strategy shares one MIG instance, not a whole GPU.
    #[test]
    fn sharing_inside_a_mig_instance_is_mig_sharing() {
        assert_eq!(
            config_strategy(&config("MigDeviceConfig", Some("TimeSlicing"))),
            Some(DraStrategy::MigTimeSlicing)
        );
        assert_eq!(
            config_strategy(&config("MigDeviceConfig", Some("MPS"))),
            Some(DraStrategy::MigMps)
        );
        assert_eq!(
            config_strategy(&config("MigDeviceConfig", None)),
            Some(DraStrategy::Mig)
        );
        assert_eq!(
            config_strategy(&config("GpuConfig", Some("TimeSlicing"))),
            Some(DraStrategy::TimeSlicing)
        );
        assert_eq!(
            config_strategy(&config("VfioDeviceConfig", None)),
            Some(DraStrategy::Exclusive)
        );
    }
}
