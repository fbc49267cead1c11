//! KubeVirt: virtual machines that get whole GPUs passed through. A VirtualMachineInstance runs in one
//! virt-launcher pod, which requests one of the VMI's `deviceName`s for every GPU and host device it
//! lists; a VirtualMachine runs one VMI from its template while it is meant to run. The pod they
//! build is read like any other, so a VM's GPU is a GPU workload of its namespace's tenant.
//!
//! The KubeVirt CR says which host devices VMs may get (`permittedHostDevices`): an NVIDIA device
//! there under a name that is not the sandbox device plugin's (see
//! [`gpu_trust_model::resource::is_passthrough`]), or an NVIDIA vGPU (a mediated device, one GPU
//! time-shared between VMs), is a GPU gpu-trust cannot judge: a workload requesting one is an error.
//!
//! Sources (kubevirt/kubevirt):
//! - `staging/src/kubevirt.io/api/core/v1/types.go`: `VirtualMachineInstanceSpec` (`domain.devices.gpus`
//!   and `hostDevices`, each `{name, deviceName}`; `nodeSelector`, `affinity`, `tolerations`,
//!   `schedulerName`, `priorityClassName`), `VirtualMachineSpec` (`running`, `runStrategy`: `Halted`
//!   runs nothing; `template`), `VirtualMachineInstanceStatus.nodeName`, `PermittedHostDevices`
//!   (`pciHostDevices[{pciVendorSelector, resourceName, externalResourceProvider}]`,
//!   `mediatedDevices[{mdevNameSelector, resourceName}]`).
//! - `pkg/virt-controller/services/resourcerenderer.go`, `WithGPUs` and `WithHostDevices`: the
//!   launcher pod requests one of each device's `deviceName`.
//! - A VMI a VirtualMachine created carries the VM as its controller owner: the VM stands for it
//!   when the input holds that VM, running, with the VMI's GPUs; else the VMI is read (an owner
//!   reference alone proves nothing: anyone who may create a VMI may write one).
//! - KubeVirt user guide, "Host Devices Assignment": NVIDIA GPUs are permitted with
//!   `pciVendorSelector: "10DE:<device>"` and served by NVIDIA's device plugin
//!   (`externalResourceProvider: true`).

use crate::discover::{At, Found};
use gpu_trust_model::resource;
use gpu_trust_model::{Diagnostic, Location};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The API group of KubeVirt's kinds.
pub(crate) const GROUP: &str = "kubevirt.io";
/// The container of the virt-launcher pod that runs the VM.
const COMPUTE: &str = "compute";
/// The run strategy of a VirtualMachine that runs nothing.
const HALTED: &str = "Halted";
/// NVIDIA's PCI vendor id, as `pciVendorSelector` writes it.
const NVIDIA_VENDOR: &str = "10DE";

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VmiSpec {
    #[serde(default)]
    domain: Domain,
    node_selector: Option<BTreeMap<String, String>>,
    affinity: Option<core::Affinity>,
    tolerations: Option<Vec<core::Toleration>>,
    scheduler_name: Option<String>,
    priority_class_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Domain {
    #[serde(default)]
    devices: Devices,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Devices {
    #[serde(default)]
    gpus: Vec<Device>,
    #[serde(default)]
    host_devices: Vec<Device>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Device {
    #[serde(default)]
    device_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VmSpec {
    running: Option<bool>,
    run_strategy: Option<String>,
    template: Option<VmiTemplate>,
}

#[derive(Debug, Default, Deserialize)]
struct VmiTemplate {
    metadata: Option<Meta>,
    spec: Option<VmiSpec>,
}

#[derive(Debug, Default, Deserialize)]
struct Meta {
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
}

/// The VirtualMachine a VirtualMachineInstance names as its owner, if any.
pub(crate) fn owner_vm(root: At<'_, '_>) -> Option<String> {
    root.path("metadata.ownerReferences")
        .and_then(At::items)
        .into_iter()
        .flatten()
        .find(|o| o.get("kind").and_then(At::text).as_deref() == Some("VirtualMachine"))
        .and_then(|o| o.get("name").and_then(At::text))
}

/// The launcher pod of a VirtualMachine (`vm`) or a VirtualMachineInstance; none for a VM that is
/// halted.
pub(crate) fn read(
    kind: &str,
    root: At<'_, '_>,
    object: &Location,
) -> Result<Vec<Found>, Diagnostic> {
    let (spec, meta, replicas, path, node) = if kind == "VirtualMachine" {
        let vm: VmSpec = match root.get("spec") {
            Some(s) => s.typed(object, "spec")?,
            None => VmSpec::default(),
        };
        let halted = vm.running == Some(false) || vm.run_strategy.as_deref() == Some(HALTED);
        let template = vm.template.unwrap_or_default();
        (
            template.spec.unwrap_or_default(),
            template.metadata.unwrap_or_default(),
            i64::from(!halted),
            "spec.template.spec",
            None,
        )
    } else {
        let spec: VmiSpec = match root.get("spec") {
            Some(s) => s.typed(object, "spec")?,
            None => VmiSpec::default(),
        };
        let meta = Meta {
            labels: root
                .path("metadata.labels")
                .map(|l| l.typed(object, "metadata.labels"))
                .transpose()?,
            annotations: root
                .path("metadata.annotations")
                .map(|a| a.typed(object, "metadata.annotations"))
                .transpose()?,
        };
        let node = root.path("status.nodeName").and_then(At::text);
        (spec, meta, 1, "spec", node)
    };
    let mut limits: BTreeMap<String, Quantity> = BTreeMap::new();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for d in spec
        .domain
        .devices
        .gpus
        .iter()
        .chain(&spec.domain.devices.host_devices)
        .filter(|d| !d.device_name.is_empty())
    {
        *counts.entry(d.device_name.clone()).or_default() += 1;
    }
    for (name, n) in counts {
        limits.insert(name, Quantity(n.to_string()));
    }
    let container = core::Container {
        name: COMPUTE.to_string(),
        resources: Some(core::ResourceRequirements {
            limits: (!limits.is_empty()).then_some(limits),
            ..core::ResourceRequirements::default()
        }),
        ..core::Container::default()
    };
    Ok(vec![Found {
        role: None,
        replicas,
        template: core::PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: meta.labels,
                annotations: meta.annotations,
                ..ObjectMeta::default()
            }),
            spec: Some(core::PodSpec {
                containers: vec![container],
                node_selector: spec.node_selector,
                affinity: spec.affinity,
                tolerations: spec.tolerations,
                scheduler_name: spec.scheduler_name,
                priority_class_name: spec.priority_class_name,
                node_name: node,
                ..core::PodSpec::default()
            }),
        },
        path: path.to_string(),
        unknown_constraints: false,
    }])
}

/// The NVIDIA host devices a KubeVirt CR permits that gpu-trust does not read as whole GPUs: the
/// resource name and why.
pub(crate) fn unjudged_devices(
    root: At<'_, '_>,
    object: &Location,
) -> Result<Vec<(String, String)>, Diagnostic> {
    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Permitted {
        #[serde(default)]
        pci_host_devices: Vec<PciDevice>,
        #[serde(default)]
        mediated_devices: Vec<MediatedDevice>,
    }
    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct PciDevice {
        #[serde(default)]
        pci_vendor_selector: String,
        #[serde(default)]
        resource_name: String,
    }
    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct MediatedDevice {
        #[serde(default)]
        mdev_name_selector: String,
        #[serde(default)]
        resource_name: String,
    }
    const PATH: &str = "spec.configuration.permittedHostDevices";
    let permitted: Permitted = match root.path(PATH) {
        Some(p) => p.typed(object, PATH)?,
        None => return Ok(Vec::new()),
    };
    let mut out = Vec::new();
    for d in permitted.pci_host_devices {
        let nvidia = d
            .pci_vendor_selector
            .split(':')
            .next()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case(NVIDIA_VENDOR));
        if nvidia && !resource::is_passthrough(&d.resource_name) {
            out.push((
                d.resource_name,
                format!(
                    "KubeVirt passes NVIDIA device {} through to VMs under this name, which is not a name NVIDIA's sandbox device plugin gives a GPU",
                    d.pci_vendor_selector
                ),
            ));
        }
    }
    for d in permitted.mediated_devices {
        if d.resource_name.starts_with("nvidia.com/") {
            out.push((
                d.resource_name,
                format!(
                    "KubeVirt serves it as the mediated device `{}`, an NVIDIA vGPU that time-shares one GPU between VMs, which gpu-trust does not model",
                    d.mdev_name_selector
                ),
            ));
        }
    }
    Ok(out)
}
