//! Nodes: their taints and GPU side (model, count, versions, the sharing in force, each GPU's MIG
//! instances), the platforms the facts came from and the facts the input leaves unknown, and what
//! the mig-parted configuration in force asks of them.

use super::{ConfigSource, MigStrategy, NodeId, SharingConfig, SharingStrategy};
use crate::isolation::Mechanism;
use crate::location::ObjectRef;
use crate::resource::{self, DeviceResource};
use crate::version::Version;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    pub object: ObjectRef,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    /// `None` for nodes without NVIDIA GPUs.
    pub gpu: Option<GpuNode>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: TaintEffect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

/// The GPU side of a node, resolved the way the GPU Operator resolves it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuNode {
    /// `nvidia.com/gpu.product` as labelled (suffixes such as `-SHARED` kept).
    pub product: Option<String>,
    /// Catalogue id of the matched GPU model, when the product label matched one.
    pub model: Option<String>,
    /// Physical GPUs on the node.
    pub count: u32,
    pub memory_mib: Option<u64>,
    pub driver_version: Option<Version>,
    pub toolkit_version: Option<Version>,
    pub operator_version: Option<Version>,
    /// `nvidia.com/cc.mode.state` (or `cc.mode` when no state): `on`, `off`, `ppcie`.
    pub cc_mode: Option<String>,
    pub mig_strategy: MigStrategy,
    /// The device plugin sharing configuration in force on this node.
    pub sharing: SharingConfig,
    /// One entry per physical GPU index, with its MIG layout when MIG is enabled.
    pub gpus: Vec<PhysicalGpu>,
    /// The node is registered with HAMi (`hami.io/node-nvidia-register`).
    pub hami: bool,
    /// Where the MIG layout came from.
    pub mig_source: Option<ConfigSource>,
    /// The extended resources the node's status advertises (`status.allocatable`, else `capacity`);
    /// `None` for a node written without status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertised: Option<BTreeMap<String, u64>>,
    /// The installers and platforms whose labels and configs gave these facts, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platforms: Vec<Platform>,
    /// Facts about the node the input does not give, and why (a platform that hides the driver
    /// version, a product label the catalogue does not know), sorted by fact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<UnknownFact>,
    /// What the GPU Operator runs the node's GPUs for: containers, or VMs.
    #[serde(default, skip_serializing_if = "GpuWorkload::is_container")]
    pub workload: GpuWorkload,
}

/// What the GPU Operator deploys on a GPU node, by the node's `nvidia.com/gpu.workload.config` when
/// the ClusterPolicy enables sandbox workloads (NVIDIA/gpu-operator `controllers/state_manager.go`,
/// `gpuStateLabels`): for `container` the driver, GPU Feature Discovery, the container toolkit, the
/// device plugin, DCGM and its exporter; for `vm-passthrough` the VFIO manager, the sandbox device
/// plugin and validator (and the Kata and CC managers); for `vm-vgpu` the vGPU manager, the vGPU
/// device manager, the sandbox device plugin and validator (and the CC manager). A VM node runs no
/// container driver, toolkit, device plugin or DCGM exporter.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum GpuWorkload {
    #[default]
    Container,
    VmPassthrough,
    VmVgpu,
}

impl GpuWorkload {
    /// The label's value (`container`, `vm-passthrough`, `vm-vgpu`); `None` for any other.
    pub fn parse(s: &str) -> Option<GpuWorkload> {
        match s {
            "container" => Some(GpuWorkload::Container),
            "vm-passthrough" => Some(GpuWorkload::VmPassthrough),
            "vm-vgpu" => Some(GpuWorkload::VmVgpu),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GpuWorkload::Container => "container",
            GpuWorkload::VmPassthrough => "vm-passthrough",
            GpuWorkload::VmVgpu => "vm-vgpu",
        }
    }

    /// Whether the node runs the container stack: the GPU driver, the NVIDIA Container Toolkit, the
    /// device plugin and the DCGM exporter.
    pub fn is_container(&self) -> bool {
        *self == GpuWorkload::Container
    }
}

impl GpuNode {
    /// Whether any GPU on the node has MIG enabled.
    pub fn mig_enabled(&self) -> bool {
        self.gpus.iter().any(|g| g.mig_enabled)
    }

    /// Whether every GPU of the node is MIG-enabled (and there is at least one).
    pub fn all_mig(&self) -> bool {
        !self.gpus.is_empty() && self.gpus.iter().all(|g| g.mig_enabled)
    }

    /// Whether the node offers `resource` (an NVIDIA resource) to the scheduler: what its status
    /// advertises; for a node written without status, what its configuration makes the device plugin
    /// advertise (`nvidia.com/gpu` unless the mixed strategy turned every GPU into MIG instances, a
    /// MIG resource only under the mixed strategy for a profile the node has, `.shared` only when
    /// renamed, HAMi's resources on HAMi nodes).
    pub fn advertises(&self, name: &str) -> bool {
        if let Some(ext) = &self.advertised {
            return ext.get(name).is_some_and(|v| *v > 0);
        }
        // `renameByDefault` renames the resources the sharing config shares, and only those.
        let renamed = |base: &str| {
            self.sharing.rename_by_default
                && self.sharing.strategy != SharingStrategy::None
                && self.sharing.replicas.get(base).is_some_and(|r| *r > 1)
        };
        match DeviceResource::parse(name) {
            Some(DeviceResource::Gpu { shared }) => {
                !(self.mig_strategy == MigStrategy::Mixed && self.all_mig())
                    && renamed(resource::GPU) == shared
            }
            Some(DeviceResource::Mig { profile, shared }) => {
                self.mig_strategy == MigStrategy::Mixed
                    && renamed(resource::base(name)) == shared
                    && self
                        .gpus
                        .iter()
                        .flat_map(|p| &p.mig)
                        .any(|s| crate::catalogue::is_plugin_spelling(&s.profile, profile))
            }
            // Passed-through GPUs are advertised by the sandbox device plugin, not configured here.
            Some(DeviceResource::Passthrough) => true,
            None if resource::HAMI_RESOURCES.contains(&name) => self.hami,
            None => true,
        }
    }

    /// Whether the device plugin refuses a container that requests more than one device of `name`:
    /// a shared resource (more than one replica per device) under a config that sets
    /// `failRequestsGreaterThanOne`, whose `Allocate` then fails and the kubelet rejects the pod
    /// (`UnexpectedAdmissionError`; NVIDIA/k8s-device-plugin README, "Shared Access to GPUs"). The
    /// pod does not run on the node, and its controller's next pod fails the same way.
    pub fn refuses_more_than_one(&self, name: &str) -> bool {
        self.sharing.fail_requests_greater_than_one
            && self.sharing.strategy != SharingStrategy::None
            && self.sharing.replicas_for(name) > 1
    }

    /// Whether the node advertises a resource of the sharing config (`nvidia.com/gpu`) under its own
    /// name or renamed with `.shared`.
    pub fn advertises_shared(&self, config_name: &str) -> bool {
        self.advertises(config_name)
            || self.advertises(&format!("{config_name}{}", resource::SHARED_SUFFIX))
    }

    /// The mechanism the node's configuration puts on one device of `name` (`nvidia.com/gpu`,
    /// `nvidia.com/mig-1g.10gb`): a MIG resource, or `nvidia.com/gpu` on a node whose single strategy
    /// advertises MIG instances, is a MIG instance.
    pub fn mechanism_for(&self, name: &str) -> Mechanism {
        let mig = resource::is_mig_resource(name)
            || (self.mig_strategy == MigStrategy::Single && self.mig_enabled());
        Mechanism::from_sharing(self.sharing.strategy, self.sharing.replicas_for(name), mig)
    }

    /// Whether the input left `fact` unknown for this node.
    pub fn is_unknown(&self, fact: NodeFact) -> bool {
        self.unknown.iter().any(|u| u.fact == fact)
    }
}

/// Declares [`Platform`] from one table, each variant beside its spelling, so that
/// [`Platform::ALL`] (which the tests enumerate) holds every variant by construction.
macro_rules! platforms {
    ($(#[$meta:meta])* pub enum Platform { $($(#[$doc:meta])* $variant:ident => $name:literal,)* }) => {
        $(#[$meta])*
        pub enum Platform {
            $($(#[$doc])* $variant,)*
        }

        impl Platform {
            /// Every platform, in declaration order.
            pub const ALL: &'static [Platform] = &[$(Platform::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Platform::$variant => $name,)*
                }
            }
        }
    };
}

platforms! {
    /// The installers and managed platforms a node's GPU facts are read from; each is one adapter of
    /// ingest (`crates/ingest/src/platforms/`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Platform {
        /// The NVIDIA GPU Operator: its ClusterPolicy names the device plugin and mig-parted configs.
        GpuOperator => "gpu-operator",
        /// The NVIDIA k8s-device-plugin installed by its Helm chart or static manifests: its config
        /// is found through its DaemonSet.
        DevicePlugin => "device-plugin",
        /// NVIDIA GPU Feature Discovery labels (`nvidia.com/gpu.*`), whichever installer runs it.
        GpuFeatureDiscovery => "gpu-feature-discovery",
        /// Google Kubernetes Engine's managed GPU node pools (`cloud.google.com/gke-*` labels).
        Gke => "gke",
        /// Amazon EKS (Auto Mode labels) and Karpenter's AWS provider.
        Eks => "eks",
        /// Azure Kubernetes Service and Karpenter's Azure provider.
        Aks => "aks",
        /// Red Hat OpenShift (Node Feature Discovery and the certified GPU Operator).
        OpenShift => "openshift",
    }
}

/// A fact about a GPU node that the audit needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeFact {
    GpuModel,
    GpuCount,
    DriverVersion,
    ToolkitVersion,
    SharingConfig,
    MigLayout,
    CcMode,
}

impl NodeFact {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeFact::GpuModel => "gpu-model",
            NodeFact::GpuCount => "gpu-count",
            NodeFact::DriverVersion => "driver-version",
            NodeFact::ToolkitVersion => "toolkit-version",
            NodeFact::SharingConfig => "sharing-config",
            NodeFact::MigLayout => "mig-layout",
            NodeFact::CcMode => "cc-mode",
        }
    }
}

/// A fact the input does not give for a node, and why; never filled in with a guess.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFact {
    pub fact: NodeFact,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalGpu {
    pub index: u32,
    pub uuid: Option<String>,
    pub mig_enabled: bool,
    /// The MIG instances on this GPU (empty when MIG is disabled).
    pub mig: Vec<MigSlot>,
}

/// One MIG GPU instance on a physical GPU.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigSlot {
    /// Profile name as in the catalogue (`1g.10gb`, `1g.10gb+me`).
    pub profile: String,
    /// Start memory slice, when known (mig-parted does not encode placement; ingest derives one).
    pub start: Option<u8>,
}

/// What the mig-parted configuration in force asks of some GPUs of a node, and whether the GPU model
/// can do it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigRequest {
    pub node: NodeId,
    /// The GPU indices the entry applies to.
    pub gpus: Vec<u32>,
    /// The mig-parted config name (`nvidia.com/mig.config`).
    pub config: String,
    /// The ConfigMap holding it, located at the config's entry.
    pub object: ObjectRef,
    pub mig_enabled: bool,
    /// `mig-devices`, profile name as written to count.
    pub mig_devices: BTreeMap<String, u32>,
    /// Why the model cannot hold this layout (unknown profile, too many instances, no placement, no
    /// MIG on this model); `None` when it is valid or the GPU model is unknown.
    pub error: Option<String>,
}
