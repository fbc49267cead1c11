//! What the cluster recorded as allocated to a workload: the devices an allocator wrote down for it,
//! each named as its record names it. A record is a fact, not a guess from configuration: two
//! tenants recorded on one device share it, and two recorded on partitions of one GPU share that
//! GPU, whatever made the allocation.

use crate::location::ObjectRef;
use serde::{Deserialize, Serialize};

/// A device as an allocation record names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DeviceId {
    /// A GPU or MIG device by the UUID NVML gives it (`GPU-…`, `MIG-…`): how a fractional
    /// scheduler's records name it, and the `uuid` attribute NVIDIA's DRA driver publishes.
    Uuid(String),
    /// A device of a DRA driver: its driver, pool and name, the unique identifier of a device
    /// (Kubernetes API reference, ResourceSlice: "The unique identifier for a device is the tuple
    /// <driver name>, <pool name>, <device name>").
    Dra {
        driver: String,
        pool: String,
        device: String,
    },
}

impl std::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceId::Uuid(u) => f.write_str(u),
            DeviceId::Dra {
                driver,
                pool,
                device,
            } => write!(f, "{driver}/{pool}/{device}"),
        }
    }
}

/// One device the cluster recorded as allocated to a workload.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Allocation {
    /// The device allocated.
    pub device: DeviceId,
    /// The physical GPU the device is part of, when it is a partition of one (a MIG device): two
    /// workloads on different partitions of one GPU share that GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<DeviceId>,
    /// The device is published for several allocations at once (DRA `allowMultipleAllocations`,
    /// consumable capacity): other claims may be given it too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shareable: bool,
    /// The object whose status holds the record: the ResourceClaim a DRA allocation is written in.
    pub record: ObjectRef,
}
