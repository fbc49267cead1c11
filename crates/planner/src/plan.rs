//! The plan: the `gpu-trust/plan/v1` wire format. Field names serialise in camelCase; every list is in
//! a fixed order (nodes by pool then number, GPUs by index, workloads by name), so the same input gives
//! byte-identical JSON.

use gpu_trust_model::fleet::{SharingStrategy, WorkloadClass};
use gpu_trust_model::isolation::Mechanism;
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: &str = "gpu-trust/plan/v1";

/// Label every planned node carries with its inventory pool; pod patches select on it.
pub const POOL_LABEL: &str = "gpu-trust.io/pool";
/// Taint key of tenant node pools; its value names the pool of tenants a node is dedicated to.
pub const TENANTS_TAINT: &str = "gpu-trust.io/tenants";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub schema: &'static str,
    /// GPUs with at least one assignment.
    pub gpus_used: u32,
    pub nodes_used: u32,
    /// A lower bound on the GPUs of every plan of the same input that places the replicas this plan
    /// places, in whichever pools they may run: the sum of `bounds` (see [`crate::bound`] for the
    /// proof). `gpusUsed - lowerBound` is the most GPUs this plan may use beyond the fewest possible;
    /// when they are equal, no plan uses fewer.
    pub lower_bound: u32,
    /// `(gpusUsed - lowerBound) / lowerBound`, in percent, two decimals; 0 when nothing is placed.
    pub gap_percent: f64,
    /// A lower bound on nodes for the same replicas, given which tenants may share a node.
    pub nodes_lower_bound: u32,
    /// The bound per trust component (tenants connected by trust that allows sharing a GPU).
    pub bounds: Vec<Bound>,
    pub nodes: Vec<PlanNode>,
    pub workloads: Vec<PlanWorkload>,
    pub unplaced: Vec<Unplaced>,
}

impl Plan {
    /// Whether every replica was placed.
    pub fn complete(&self) -> bool {
        self.unplaced.is_empty()
    }
}

/// The lower bound of one trust component: two components never share a GPU, so their bounds add up.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bound {
    pub tenants: Vec<String>,
    /// The pools where the component's placed replicas may run.
    pub pools: Vec<String>,
    /// The configuration LP over every pool's MIG layouts and whole GPUs, each replica at its
    /// cheapest pool (its value, before rounding up).
    pub by_layout_lp: f64,
    /// Tenants of the component that pairwise may not share a GPU use GPUs of their own: the sum of
    /// their own bounds (0 when the component has no two such tenants).
    pub by_tenants_apart: u32,
    /// The bound: the LP rounded up, or the tenants apart, whichever is larger.
    pub gpus: u32,
    /// GPUs the plan uses for the component.
    pub used: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanNode {
    pub name: String,
    pub pool: String,
    /// Catalogue id of the GPU model.
    pub model: String,
    /// Tenants with replicas on the node, sorted.
    pub tenants: Vec<String>,
    /// The device plugin sharing config of the node (it applies to every GPU of the node).
    pub sharing: NodeSharing,
    /// Confidential computing on: whole GPUs of one confidential tenant only.
    pub confidential: bool,
    /// The taint value of the tenant node pool the node belongs to.
    pub tenant_pool: String,
    /// The mig-parted config the node is labelled with (`None` for models without MIG).
    pub mig_config: Option<String>,
    /// The key of the device plugin ConfigMap the node is labelled with.
    pub device_plugin_config: String,
    /// GPUs with assignments; the node's other GPUs stay idle with MIG disabled.
    pub gpus: Vec<PlanGpu>,
    /// GPUs the node has.
    pub gpu_count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSharing {
    pub strategy: SharingStrategy,
    /// Resource name to replicas advertised per device, for the shared resources only.
    pub resources: BTreeMap<String, u32>,
}

/// How one GPU or MIG instance is handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceSharing {
    Exclusive,
    TimeSlicing,
    Mps,
}

impl DeviceSharing {
    /// The device plugin's sharing strategy that hands a device out this way.
    pub const fn strategy(self) -> gpu_trust_model::fleet::SharingStrategy {
        use gpu_trust_model::fleet::SharingStrategy;
        match self {
            DeviceSharing::Exclusive => SharingStrategy::None,
            DeviceSharing::TimeSlicing => SharingStrategy::TimeSlicing,
            DeviceSharing::Mps => SharingStrategy::Mps,
        }
    }

    /// The plan's spelling (serde's): the strategy's, except `exclusive` for a device handed out
    /// whole, which the device plugin calls `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceSharing::Exclusive => "exclusive",
            shared => shared.strategy().as_str(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanGpu {
    pub index: u32,
    /// MIG instances, by start; empty when MIG is disabled on the GPU.
    pub mig: Vec<MigInstance>,
    /// `time-slicing` when the whole GPU or any of its instances is time-sliced.
    pub sharing: DeviceSharing,
    /// Replicas the device plugin advertises for the whole GPU (1 when not shared or when MIG is on).
    pub replicas: u32,
    pub assignments: Vec<Assignment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigInstance {
    pub profile: String,
    pub start: u8,
    pub sharing: DeviceSharing,
    /// Replicas the device plugin advertises for the instance.
    pub replicas: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    pub workload: String,
    pub replica: u32,
    pub tenant: String,
    /// The MIG instance (`None` for a whole GPU).
    pub profile: Option<String>,
    pub start: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    pub key: String,
    pub operator: String,
    pub value: String,
    pub effect: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanWorkload {
    pub name: String,
    pub tenant: String,
    pub namespace: String,
    pub kind: WorkloadClass,
    pub replicas: u32,
    /// Replicas placed.
    pub placed: u32,
    pub pool: Option<String>,
    pub mechanism: Option<Mechanism>,
    /// The extended resource each pod requests, and how many.
    pub resource: Option<String>,
    pub count: u32,
    /// The pods' `runtimeClassName`: a confidential tenant's TEE-aware Kata class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<String>,
    /// The MIG profile, for MIG mechanisms.
    pub profile: Option<String>,
    /// For shared mechanisms: replicas per device.
    pub share_replicas: Option<u32>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    /// Why this mechanism, in the terms of the isolation model.
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unplaced {
    pub workload: String,
    pub replica: u32,
    pub reason: String,
}
