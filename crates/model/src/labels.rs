//! The node labels NVIDIA's components write on GPU nodes and read back, written once: ingest reads
//! them from real nodes, the planner writes them on the nodes of its snapshot and selects on them in
//! its pod patches.
//!
//! Sources:
//! - NVIDIA/k8s-device-plugin `internal/lm/resource.go` (GPU Feature Discovery): per advertised
//!   resource (`nvidia.com/gpu` and each `nvidia.com/mig-<profile>`) the labels `<resource>.product`,
//!   `.count`, `.replicas`, `.sharing-strategy` and `.memory`; a product shared without a rename gets
//!   `-SHARED` appended.
//! - NVIDIA/k8s-device-plugin `internal/lm/mig-strategy.go`: `nvidia.com/mig.strategy`; under the
//!   single strategy the product reads `<model>-MIG-<profile>`.
//! - NVIDIA/k8s-device-plugin `internal/lm/nvml.go`: `nvidia.com/cuda.driver-version.{major,minor,
//!   revision,full}` and the deprecated `nvidia.com/cuda.driver.{major,minor,rev}`;
//!   `nvidia.com/mig.capable`.
//! - NVIDIA/k8s-device-plugin README (shared access to GPUs, MPS): `nvidia.com/mps.capable`, the node
//!   selector of the MPS control daemon.
//! - NVIDIA/gpu-operator: `nvidia.com/gpu.present` (`internal/consts`), `nvidia.com/mig.config` and
//!   `nvidia.com/mig.config.state` (MIG manager), `nvidia.com/device-plugin.config` (the device
//!   plugin's config manager), `nvidia.com/cc.mode` and `nvidia.com/cc.mode.state` (CC manager).
//! - Node Feature Discovery: `feature.node.kubernetes.io/pci-10de.present` (PCI vendor 0x10DE).
//! - Kubernetes `k8s.io/api` resource types, `DRAAdminNamespaceLabelKey`: the Namespace label that lets
//!   ResourceClaims in the namespace ask for admin access to devices (KEP-5018; stable in 1.36).

/// The node label choosing what the GPU Operator deploys on a node when sandbox workloads are
/// enabled (NVIDIA/gpu-operator `controllers/state_manager.go`, `gpuWorkloadConfigLabelKey`):
/// `container`, `vm-passthrough` or `vm-vgpu`.
pub const WORKLOAD_CONFIG: &str = "nvidia.com/gpu.workload.config";

/// The GPU model's product name, as GFD spells it (`NVIDIA-A100-SXM4-80GB`).
pub const PRODUCT: &str = "nvidia.com/gpu.product";
/// The number of GPUs on the node.
pub const COUNT: &str = "nvidia.com/gpu.count";
/// The most GPUs a node's count (label, platform or advertised resources) may plausibly say: NVIDIA's
/// largest systems hold 16 GPUs under one operating system (DGX-2 and HGX-2: 16 V100, NVIDIA DGX-2
/// datasheet), PCIe servers a few more single-slot cards; 64 leaves room for what comes.
/// A larger count is an error, not a fleet of GPUs to model.
pub const MAX_GPUS_PER_NODE: u32 = 64;
/// Memory per GPU, MiB.
pub const MEMORY: &str = "nvidia.com/gpu.memory";
/// The GPU Operator's mark of a node with NVIDIA GPUs.
pub const PRESENT: &str = "nvidia.com/gpu.present";
/// How many times each whole GPU is advertised.
pub const REPLICAS: &str = "nvidia.com/gpu.replicas";
/// How whole GPUs are shared: `none`, `time-slicing` or `mps`.
pub const SHARING: &str = "nvidia.com/gpu.sharing-strategy";
/// The device plugin's MIG strategy on the node: `none`, `single` or `mixed`.
pub const MIG_STRATEGY: &str = "nvidia.com/mig.strategy";
/// Whether the node's GPUs support MIG.
pub const MIG_CAPABLE: &str = "nvidia.com/mig.capable";
/// Whether the node may run the device plugin's MPS control daemon.
pub const MPS_CAPABLE: &str = "nvidia.com/mps.capable";
/// The mig-parted layout the MIG manager applies to the node.
pub const MIG_CONFIG: &str = "nvidia.com/mig.config";
/// The MIG manager's state for that layout (`success`, `pending`, `failed`, `rebooting`).
pub const MIG_CONFIG_STATE: &str = "nvidia.com/mig.config.state";
/// The device plugin config (a key of its ConfigMap) the node uses.
pub const DEVICE_PLUGIN_CONFIG: &str = "nvidia.com/device-plugin.config";
/// The confidential-computing mode the CC manager applies, and the mode in force.
pub const CC_MODE: &str = "nvidia.com/cc.mode";
pub const CC_MODE_STATE: &str = "nvidia.com/cc.mode.state";
/// Node Feature Discovery's mark of an NVIDIA PCI device.
pub const NFD_NVIDIA_PCI: &str = "feature.node.kubernetes.io/pci-10de.present";

/// The full driver version, and its parts (the current and the deprecated spelling).
pub const DRIVER_FULL: &str = "nvidia.com/cuda.driver-version.full";
pub const DRIVER_PARTS: [&str; 3] = [
    "nvidia.com/cuda.driver-version.major",
    "nvidia.com/cuda.driver-version.minor",
    "nvidia.com/cuda.driver-version.revision",
];
pub const DRIVER_DEPRECATED: [&str; 3] = [
    "nvidia.com/cuda.driver.major",
    "nvidia.com/cuda.driver.minor",
    "nvidia.com/cuda.driver.rev",
];

/// The suffix GFD appends to a product shared without a rename.
pub const SHARED_PRODUCT_SUFFIX: &str = "-SHARED";
/// The infix of the single MIG strategy's product (`NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`).
pub const SINGLE_MIG_PRODUCT_INFIX: &str = "-MIG-";

/// The per-resource labels GFD writes, as suffixes of the resource name.
pub const RESOURCE_COUNT: &str = ".count";
pub const RESOURCE_REPLICAS: &str = ".replicas";
pub const RESOURCE_SHARING: &str = ".sharing-strategy";
pub const RESOURCE_PRODUCT: &str = ".product";

/// The label GFD writes for `resource` with one of the `RESOURCE_*` suffixes
/// (`nvidia.com/mig-1g.10gb` and `.replicas` give `nvidia.com/mig-1g.10gb.replicas`).
pub fn of_resource(resource: &str, suffix: &str) -> String {
    format!("{resource}{suffix}")
}

/// GFD's value of `<resource>.sharing-strategy` for a way of sharing devices: `none`, `time-slicing`,
/// `mps` (`internal/lm/resource.go`).
pub const SHARING_NONE: &str = crate::fleet::SharingStrategy::None.as_str();
pub const SHARING_TIME_SLICING: &str = crate::fleet::SharingStrategy::TimeSlicing.as_str();
pub const SHARING_MPS: &str = crate::fleet::SharingStrategy::Mps.as_str();

/// A Namespace labelled with this key and the value `"true"` (case-sensitive) may hold ResourceClaims
/// and ResourceClaimTemplates with `adminAccess: true`: devices other claims hold are given to them
/// too. Whoever can label the Namespace can set it (kubernetes/kubernetes issue 141293, closed as
/// working as designed; kubernetes/website issue 56957).
pub const DRA_ADMIN_ACCESS: &str = "resource.kubernetes.io/admin-access";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_gpu_labels_are_the_resource_labels_of_nvidia_com_gpu() {
        assert_eq!(
            of_resource(crate::resource::GPU, RESOURCE_REPLICAS),
            REPLICAS
        );
        assert_eq!(of_resource(crate::resource::GPU, RESOURCE_SHARING), SHARING);
        assert_eq!(of_resource(crate::resource::GPU, RESOURCE_COUNT), COUNT);
        assert_eq!(of_resource(crate::resource::GPU, RESOURCE_PRODUCT), PRODUCT);
    }
}
