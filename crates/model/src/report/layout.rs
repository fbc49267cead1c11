//! The GPU layout view the HTML report draws: per GPU node, per physical GPU, how the GPU is shared
//! and which tenants are (or may be) on it, with MIG instances at their placement. Not part of the
//! wire format (`AuditReport::layout` is not serialized); the rules crate builds it
//! (`gpu_trust_rules::layout`).

use crate::fleet::SharingStrategy;
use crate::isolation::Mechanism;
use crate::occupancy::{Devices, Seat};
use crate::Certainty;
use serde::Serialize;

/// Workload names kept per tenant and GPU (the count is kept in full).
pub const MAX_LISTED_WORKLOADS: usize = 8;

/// One GPU node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeLayout {
    pub name: String,
    /// Where the Node object was read.
    pub file: String,
    pub line: u32,
    /// `nvidia.com/gpu.product` as labelled.
    pub product: Option<String>,
    /// Catalogue id of the GPU model.
    pub model: Option<String>,
    /// The model's display name from the catalogue.
    pub model_name: Option<String>,
    /// Memory of one GPU, MiB (the catalogue's figure, else the node's label).
    pub memory_mib: Option<u64>,
    /// Memory and compute slices of the model's MIG geometry (`None` without MIG or an unknown model).
    pub memory_slices: Option<u8>,
    pub compute_slices: Option<u8>,
    /// The device plugin sharing strategy configured for the node.
    pub sharing_strategy: SharingStrategy,
    /// The node is registered with HAMi.
    pub hami: bool,
    pub gpus: Vec<GpuLayout>,
    /// Every tenant on the node, with the strongest certainty (also those on no GPU, e.g. CPU pods of a
    /// DaemonSet, which still share the host), the surest first ([`sort_by_certainty`]).
    pub tenants: Vec<TenantPresence>,
    /// What the cluster recorded as allocated to the tenants' pods on the node, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<AllocationLayout>,
}

/// One device the cluster recorded as allocated to one tenant's pod.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationLayout {
    pub tenant: String,
    /// The device (`driver/pool/device`, or a UUID).
    pub device: String,
    /// The GPU it is a partition of, when it is one.
    pub gpu: Option<String>,
    /// `namespace/name` of the pod.
    pub workload: String,
    /// The object holding the record (`ResourceClaim namespace/name`).
    pub record: String,
}

/// A tenant on a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantPresence {
    pub tenant: String,
    pub certainty: Certainty,
}

/// One physical GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuLayout {
    pub index: u32,
    pub uuid: Option<String>,
    pub sharing: Sharing,
    /// Mechanisms of the workloads on the GPU (or its instances), sorted.
    pub mechanisms: Vec<Mechanism>,
    /// Tenants on the whole GPU (empty for a MIG GPU: its tenants are on the instances), the surest
    /// first.
    pub tenants: Vec<Occupant>,
    /// MIG instances, sorted by start slice (instances without a known start last, by profile).
    pub instances: Vec<MigInstanceLayout>,
}

/// How a GPU (or a MIG instance) is handed out, as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Sharing {
    /// One workload per device.
    Exclusive,
    /// Device plugin time-slicing: `replicas` per device.
    TimeSlicing { replicas: u32 },
    /// Device plugin MPS: `replicas` clients per device.
    Mps { replicas: u32 },
    /// The GPU is partitioned into MIG instances.
    Mig,
    /// Not known: a workload on the node asks for a GPU in a way no mechanism gpu-trust knows maps
    /// (a coverage gap), so the GPU may be handed out to several of them.
    Unknown,
}

impl Sharing {
    /// How the device plugin shares the device of `seat`.
    pub fn of(devices: &Devices<'_>, seat: Seat) -> Sharing {
        let replicas = devices.replicas(seat);
        match Mechanism::from_sharing(devices.node.sharing.strategy, replicas, false) {
            Mechanism::TimeSlicing => Sharing::TimeSlicing { replicas },
            Mechanism::Mps => Sharing::Mps { replicas },
            _ => Sharing::Exclusive,
        }
    }

    /// Replicas advertised per device (1 when not shared, 0 for a MIG GPU).
    pub fn replicas(self) -> u32 {
        match self {
            Sharing::Exclusive => 1,
            Sharing::TimeSlicing { replicas } | Sharing::Mps { replicas } => replicas,
            Sharing::Mig => 0,
            Sharing::Unknown => 1,
        }
    }
}

/// One MIG GPU instance at its placement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigInstanceLayout {
    /// Profile name as in the catalogue (`1g.10gb+me`), or as the input wrote it when unknown.
    pub profile: String,
    /// First memory slice; `None` when neither the input nor the catalogue's placements give one.
    pub start: Option<u8>,
    /// Memory slices occupied from `start`.
    pub memory_slices: Option<u8>,
    pub compute_slices: Option<u8>,
    pub memory_mib: Option<u64>,
    /// How the device plugin shares this instance (time-slicing or MPS replicas inside it).
    pub sharing: Sharing,
    pub tenants: Vec<Occupant>,
}

/// A tenant on a GPU or MIG instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Occupant {
    pub tenant: String,
    /// The strongest certainty of any of its workloads being there.
    pub certainty: Certainty,
    /// Mechanisms its workloads get there, sorted.
    pub mechanisms: Vec<Mechanism>,
    /// The first workloads, each named once by its owner with the pods of it there (`Deployment
    /// ns/web (2 pods)`, `Pod ns/name` for a pod of its own), at most [`MAX_LISTED_WORKLOADS`].
    pub workloads: Vec<String>,
    /// How many workloads in all (an owner and its pods are one).
    pub workload_count: usize,
    /// The devices schedulers recorded for its workloads there, in words, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recorded: Vec<String>,
}

/// Lists tenants in the order they are drawn and named wherever a list is cut: those surely there
/// first (running before only permitted), then by name.
pub fn sort_by_certainty<T>(list: &mut [T], key: impl Fn(&T) -> (Certainty, &str)) {
    list.sort_by(|a, b| key(a).cmp(&key(b)));
}

/// Whether a device shared as `sharing` by `occupants` holds one workload at a time: the device
/// plugin hands it out whole and no fractional scheduler shares it. Its occupants are then the
/// candidates for it, of which one holds it, never several together.
pub fn holds_one(sharing: Sharing, occupants: &[Occupant]) -> bool {
    sharing == Sharing::Exclusive
        && !occupants
            .iter()
            .flat_map(|o| &o.mechanisms)
            .any(|m| m.shares_device())
}
