//! Workloads: a pod or a pod template with what it requests of GPUs (device resources, a HAMi vGPU,
//! a KAI or Run:ai fraction, DRA claims, or a GPU no mechanism of the model maps), its containers,
//! what reaches the host, where it runs or may run (with the devices a scheduler recorded for it),
//! and what the policy's `workloads` entries say about it.

use super::{DraClaimUse, InferenceServer, NodeId, NodeSetId};
use crate::location::ObjectRef;
use crate::resource;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What kind of object a workload came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WorkloadKind {
    Pod,
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    Job,
    CronJob,
    PyTorchJob,
    TFJob,
    MPIJob,
    JobSet,
    VolcanoJob,
    /// Any other object that carries pod templates: a controller of ingest's controllers table
    /// (LeaderWorkerSet, KubeRay, Kubeflow Trainer, KServe, Knative, Argo...) or a kind found to hold
    /// pod templates by their shape. Its kind is `object.kind`.
    Custom,
}

impl WorkloadKind {
    /// Training kinds (Kubeflow, JobSet, Volcano).
    pub fn is_training_kind(self) -> bool {
        matches!(
            self,
            WorkloadKind::PyTorchJob
                | WorkloadKind::TFJob
                | WorkloadKind::MPIJob
                | WorkloadKind::JobSet
                | WorkloadKind::VolcanoJob
        )
    }
}

/// What a workload does, which changes what the rules ask of its placement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadClass {
    Training,
    Inference,
    Notebook,
    Batch,
    #[default]
    Unknown,
}

impl WorkloadClass {
    pub fn parse(s: &str) -> Option<WorkloadClass> {
        Some(match s {
            "training" => WorkloadClass::Training,
            "inference" => WorkloadClass::Inference,
            "notebook" => WorkloadClass::Notebook,
            "batch" => WorkloadClass::Batch,
            _ => return None,
        })
    }

    /// The kebab-case name, as serialised and as the policy file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadClass::Training => "training",
            WorkloadClass::Inference => "inference",
            WorkloadClass::Notebook => "notebook",
            WorkloadClass::Batch => "batch",
            WorkloadClass::Unknown => "unknown",
        }
    }
}

/// What the tenancy policy's `workloads` entries say about one workload; each field is taken from the
/// first entry (in file order) that selects the workload and sets it. The policy computes it
/// (`Tenancy::workload_overrides`); what it sets wins over what ingest read from the objects, here and
/// nowhere else, for every command that reads it (the audit, the inventory).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkloadOverrides {
    pub kind: Option<WorkloadClass>,
    pub peak_memory_mib: Option<u64>,
    pub latency: Option<crate::Latency>,
}

impl WorkloadOverrides {
    /// What `workload` does: the policy's kind, else what ingest classified.
    pub fn class(&self, workload: &Workload) -> WorkloadClass {
        self.kind.unwrap_or(workload.class)
    }

    /// Peak device memory of `workload` in MiB: the policy's, else the one ingest read.
    pub fn peak_memory_mib(&self, workload: &Workload) -> Option<u64> {
        self.peak_memory_mib.or(workload.peak_memory_mib)
    }
}

/// A pod, or the pod template of a workload (one entry per template; `replicas` says how many pods).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    pub object: ObjectRef,
    pub namespace: String,
    pub kind: WorkloadKind,
    /// For a training kind, the replica type (`Worker`, `Master`); else `None`.
    pub role: Option<String>,
    pub replicas: u32,
    pub class: WorkloadClass,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub scheduler_name: Option<String>,
    pub service_account: Option<String>,
    pub gpu: GpuRequest,
    pub containers: Vec<ContainerInfo>,
    pub pod_security: PodSecurity,
    pub inference: Option<InferenceServer>,
    /// Peak device memory in MiB, when known (policy `workloads` or HAMi `nvidia.com/gpumem`).
    pub peak_memory_mib: Option<u64>,
    pub placement: Placement,
    /// For a pod: the owning controller as `Kind/name` (so the audit can group a ReplicaSet's pods).
    pub owner: Option<String>,
}

impl Workload {
    /// Whether the workload asks for any GPU resource (device plugin, HAMi, fraction or DRA).
    pub fn requests_gpu(&self) -> bool {
        self.gpu.requests_gpu()
    }

    /// Whether the pod mounts an MPS server's pipe directory from the host, so it runs as a client of
    /// that server: a hostPath at KAI Scheduler's documented `CUDA_MPS_PIPE_DIRECTORY`, or at the
    /// directory one of its containers sets in `CUDA_MPS_PIPE_DIRECTORY`.
    pub fn uses_mps_pipe(&self) -> bool {
        let paths = &self.pod_security.host_paths;
        let trimmed = |p: &str| p.trim_end_matches('/').to_string();
        paths.iter().any(|p| trimmed(p) == KAI_MPS_PIPE_DIRECTORY)
            || self.containers.iter().any(|c| {
                c.env.get(MPS_PIPE_ENV).is_some_and(|dir| {
                    !dir.is_empty() && paths.iter().any(|p| trimmed(p) == trimmed(dir))
                })
            })
    }
}

impl Workload {
    /// The virtual cluster the workload belongs to, when it is one: a pod vCluster's syncer put in
    /// the host namespace (named by its `managed-by` label, else unnamed), or the virtual cluster's
    /// control plane there (named by its `release` label).
    pub fn virtual_cluster(&self) -> Option<&str> {
        if let Some(name) = self.labels.get(VCLUSTER_KEYS[0]) {
            return Some(name);
        }
        if VCLUSTER_KEYS
            .iter()
            .any(|k| self.labels.contains_key(*k) || self.annotations.contains_key(*k))
        {
            return Some("");
        }
        let control_plane = self
            .labels
            .get("app")
            .is_some_and(|a| VCLUSTER_CONTROL_PLANE.contains(&a.as_str()));
        control_plane
            .then(|| self.labels.get("release").map(String::as_str))
            .flatten()
    }
}

/// Labels and annotations vCluster's syncer puts on the pods it syncs into the host cluster, the
/// first naming the virtual cluster (vCluster docs, "Syncing": synced objects carry
/// `vcluster.loft.sh/*` metadata naming the virtual cluster and the object's virtual name and
/// namespace).
pub const VCLUSTER_KEYS: [&str; 3] = [
    "vcluster.loft.sh/managed-by",
    "vcluster.loft.sh/namespace",
    "vcluster.loft.sh/object-name",
];

/// The `app` label of vCluster's own control plane in its host namespace, with a `release` label
/// naming the virtual cluster: the syncer StatefulSet (or Deployment) and its pods are `vcluster`,
/// the optional external etcd is `vcluster-etcd` (loft-sh/vcluster `chart/templates/statefulset.yaml`,
/// `chart/templates/etcd-statefulset.yaml`).
pub const VCLUSTER_CONTROL_PLANE: [&str; 2] = ["vcluster", "vcluster-etcd"];

/// The MPS pipe directory KAI Scheduler's MPS guide has the node's MPS server use and pods mount
/// (NVIDIA/KAI-Scheduler `docs/gpu-sharing/mps/README.md`).
pub const KAI_MPS_PIPE_DIRECTORY: &str = "/tmp/nvidia-mps";
/// The variable that points a CUDA client at its MPS server (NVIDIA MPS documentation, "Environment
/// variables").
pub const MPS_PIPE_ENV: &str = "CUDA_MPS_PIPE_DIRECTORY";

/// What a workload requests of GPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuRequest {
    /// Extended resources summed over containers (limits, or requests when no limit): `nvidia.com/gpu`,
    /// `nvidia.com/gpu.shared`, `nvidia.com/mig-1g.10gb`, HAMi `nvidia.com/gpumem`...
    pub resources: BTreeMap<String, u64>,
    pub hami: Option<HamiRequest>,
    pub fraction: Option<FractionRequest>,
    pub dra: Vec<DraClaimUse>,
    /// On a GPU node (scheduled there, or permitted on one): what asks for a GPU that no mechanism
    /// of the isolation model maps, in words (a resource whose name says GPU that no row, device
    /// plugin or DeviceClass names; an annotation naming a GPU that no recorder gpu-trust knows
    /// wrote), sorted. How such a workload shares its GPU is unknown: it has no mechanism, never
    /// `exclusive`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmapped: Vec<String>,
}

impl GpuRequest {
    pub fn requests_gpu(&self) -> bool {
        self.resources.keys().any(|k| resource::is_gpu_resource(k))
            || self.hami.is_some()
            || self.fraction.is_some()
            || !self.dra.is_empty()
            || !self.unmapped.is_empty()
    }

    /// The device plugin resource requested (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`...) with its
    /// quantity: the first in name order.
    pub fn device_resource(&self) -> Option<(&str, u64)> {
        self.resources
            .iter()
            .find(|(k, _)| resource::is_gpu_resource(k))
            .map(|(k, v)| (k.as_str(), *v))
    }

    /// MIG resources requested (`nvidia.com/mig-<profile>`), profile names with `.` as the plugin
    /// writes them, without a `.shared` suffix.
    pub fn mig_profiles(&self) -> impl Iterator<Item = (&str, u64)> {
        self.resources
            .iter()
            .filter_map(|(k, v)| resource::mig_profile(k).map(|p| (p, *v)))
    }
}

/// HAMi vGPU resources (`nvidia.com/gpumem`, `nvidia.com/gpucores`) and its annotations.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HamiRequest {
    pub gpus: u64,
    pub memory_mib: Option<u64>,
    pub memory_percentage: Option<u64>,
    pub cores_percent: Option<u64>,
    /// `nvidia.com/vgpu-mode`: `hami-core` (default), `mig` or `mps`.
    pub mode: Option<String>,
    /// A container sets `CUDA_DISABLE_CONTROL=true`: HAMi-core's limits do not apply to it.
    pub control_disabled: bool,
    /// The vGPU mechanism whose names the request used, when another than HAMi's own (Volcano's
    /// vGPU, built on HAMi-core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<crate::isolation::Mechanism>,
}

/// A fractional scheduler's fraction, as its row's annotations spell it
/// (`crate::isolation::FractionNames`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FractionRequest {
    /// The row of the scheduler whose fraction it is.
    pub scheduler: crate::isolation::Mechanism,
    pub fraction: Option<f64>,
    /// The memory requested (never a limit: KAI lets a workload use spare memory above its
    /// request up to its limit, which caps nothing another tenant relies on).
    pub memory_mib: Option<u64>,
    pub num_devices: Option<u32>,
    /// Its pods are clients of an MPS server (`FractionNames::mps`: KAI's `mps` annotation, or the
    /// compute-sharing mode `sm-sharing`).
    pub mps: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerInfo {
    pub name: String,
    pub image: String,
    /// `command` followed by `args`.
    pub argv: Vec<String>,
    pub privileged: bool,
    pub added_capabilities: Vec<String>,
    /// The value of `NVIDIA_VISIBLE_DEVICES`, when set.
    pub nvidia_visible_devices: Option<String>,
    /// The Secrets (`namespace/name`) that may set `NVIDIA_VISIBLE_DEVICES` (gpu-trust never reads
    /// Secrets): an `envFrom` source whose prefix the name starts with, unless a later source or
    /// `env` sets it, or its `valueFrom.secretKeyRef` (with the key).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visible_devices_secrets: Vec<String>,
    /// Environment variables that matter to isolation (CUDA_DISABLE_CONTROL, CUDA_MPS_*...).
    pub env: BTreeMap<String, String>,
    /// Extended resources of this container (limits, or requests when no limit).
    pub resources: BTreeMap<String, u64>,
    pub is_init: bool,
}

/// Pod-level settings that reach the host.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurity {
    pub host_pid: bool,
    pub host_ipc: bool,
    pub host_network: bool,
    pub runtime_class_name: Option<String>,
    /// The handler of the runtime class: its RuntimeClass's, or the name itself for a class the
    /// GPU Operator creates with handler and name equal (`crate::host::NVIDIA_RUNTIME_HANDLERS`);
    /// `None` without a runtime class, or when its RuntimeClass is not in the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_handler: Option<String>,
    /// hostPath volume paths, normalised (`crate::host::normalise_host_path`).
    pub host_paths: Vec<String>,
    /// `nvidia.cdi.k8s.io/*` annotations (CDI device injection).
    pub cdi_annotations: Vec<String>,
    /// The names of its emptyDir volumes: storage on the node, deleted with the pod when it leaves
    /// the node (a drain deletes their data).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_dirs: Vec<String>,
}

/// Where a workload runs now, and where it may run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// `spec.nodeName` of a scheduled pod (`None` for templates and pending pods). Pods that have
    /// finished (Succeeded, Failed) hold no device and are not in the fleet.
    pub node: Option<NodeId>,
    /// The devices a scheduler recorded as allocated to the pod, sorted (HAMi's, Volcano's and KAI
    /// Scheduler's records).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recorded: Vec<RecordedDevice>,
    /// The devices the cluster recorded as allocated to it (the allocations of the DRA claims it
    /// uses), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<super::Allocation>,
    /// For a scheduled pod that requests GPUs: the devices (GPUs, or MIG instances) of its node it may
    /// be using, sorted. Empty when it requests none or its node has no GPU model in the input.
    pub devices: Vec<DeviceSlot>,
    /// The evidence pins the pod to exactly `devices` (a scheduler's record naming them, one GPU on
    /// the node, one instance of the requested profile): co-location on them is `observed`, not
    /// `possible`.
    pub observed: bool,
    /// The nodes the constraints allow (resources, nodeSelector, required node affinity, taints and
    /// tolerations): an index into `Fleet::node_sets`, shared by every workload with the same
    /// constraints. See `Fleet::permitted_nodes`.
    pub permitted: NodeSetId,
    /// The pod's tolerations, sorted (with those the DaemonSet controller adds to a daemon's pods), so
    /// that a patch of its template can keep them.
    #[serde(skip)]
    pub tolerations: Vec<PodToleration>,
    /// The pod's `nodeSelector`, so that a patch of its template can remove the keys it replaces (a
    /// strategic merge keeps a map's keys the patch does not set to `null`).
    #[serde(skip)]
    pub node_selector: BTreeMap<String, String>,
}

/// A toleration as the pod writes it: `Exists`, or `Equal` to `value`; `None` for a field left out.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodToleration {
    pub key: Option<String>,
    pub exists: bool,
    pub value: Option<String>,
    pub effect: Option<String>,
    pub seconds: Option<i64>,
}

/// One device a pod may be on: a physical GPU, or one MIG instance of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSlot {
    /// `PhysicalGpu::index`.
    pub gpu: u32,
    /// Position in that GPU's `PhysicalGpu::mig`, for a MIG instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<u32>,
}

/// A physical device the cluster recorded as allocated to a workload, as its recorder names it, and
/// the part of it the workload got when the record says. Two tenants' workloads recorded on one
/// physical device share it for certain; records of one kind naming different devices keep them
/// apart. The co-location analysis is the one reader that turns records into sharing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedDevice {
    /// The mechanism whose scheduler recorded it (its row names the key).
    pub by: crate::isolation::Mechanism,
    /// The physical device.
    pub device: PhysicalDevice,
    /// The part of the device the record gives the workload (the slot of a scheduler's MIG
    /// geometry, `group2-3`), when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
}

impl RecordedDevice {
    /// Whether the record names `gpu` of the pod's node (by UUID, or by index).
    pub fn names(&self, gpu: &super::PhysicalGpu) -> bool {
        match &self.device {
            PhysicalDevice::Gpu(uuid) => gpu.uuid.as_deref() == Some(uuid.as_str()),
            PhysicalDevice::GpuIndex(i) => gpu.index == *i,
            PhysicalDevice::KaiGroup(_) => false,
        }
    }

    /// The record in words: `GPU-5d1c… (HAMi)`, with the part when it names one.
    pub fn describe(&self) -> String {
        let device = match &self.device {
            PhysicalDevice::Gpu(uuid) => uuid.clone(),
            PhysicalDevice::GpuIndex(i) => format!("GPU index {i}"),
            PhysicalDevice::KaiGroup(g) => format!("GPU group {g}"),
        };
        match &self.part {
            Some(p) => format!("{device} [{p}] ({})", self.by.title()),
            None => format!("{device} ({})", self.by.title()),
        }
    }
}

/// The physical device a record names. Two records name one device when they are equal; records of
/// different kinds cannot be compared (a UUID and a group may or may not be one GPU).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PhysicalDevice {
    /// An NVIDIA GPU by the UUID NVML gives it (`GPU-…`).
    Gpu(String),
    /// A GPU of the pod's node by its index, as `NVIDIA_VISIBLE_DEVICES` names it.
    GpuIndex(u32),
    /// A KAI Scheduler GPU group (`runai-gpu-group`): one GPU of the node, held by the group's
    /// reservation pod, whose UUID the input does not give.
    KaiGroup(String),
}
