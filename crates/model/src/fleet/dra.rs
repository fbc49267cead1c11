//! DRA: how a claim shares its device, a pod's use of a claim, and the ResourceClaims and
//! ResourceClaimTemplates of the input.

use crate::location::ObjectRef;
use serde::{Deserialize, Serialize};

/// The flag of NVIDIA's DRA driver (its GPU kubelet plugin, v0.5.0) that publishes GPUs and dynamic
/// MIG devices for several claims at once, `disabled` by default (kubernetes-sigs/dra-driver-nvidia-gpu
/// pull request 1257, `demo/specs/consumable-shares/README.md`; the Helm chart sets it from
/// `CONSUMABLE_SHARES`).
pub const CONSUMABLE_SHARES_FLAG: &str = "--consumable-shares";

/// How a DRA claim shares its device: the `sharing.strategy` of a `GpuConfig` (a whole GPU) or a
/// `MigDeviceConfig` (one MIG instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DraStrategy {
    Exclusive,
    TimeSlicing,
    Mps,
    /// A MIG instance for the claim alone.
    Mig,
    /// Time-slicing among the pods sharing one claim's MIG instance.
    MigTimeSlicing,
    /// MPS among the pods sharing one claim's MIG instance.
    MigMps,
}

impl DraStrategy {
    pub fn is_mig(self) -> bool {
        matches!(
            self,
            DraStrategy::Mig | DraStrategy::MigTimeSlicing | DraStrategy::MigMps
        )
    }
}

/// A pod's use of a DRA ResourceClaim (directly or through a template).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraClaimUse {
    /// `namespace/name` of a shared ResourceClaim; `None` for a per-pod claim from a template.
    pub claim: Option<String>,
    pub template: Option<String>,
    pub device_class: Option<String>,
    pub strategy: DraStrategy,
    /// Its devices may be allocated to other claims too (see [`ResourceClaimInfo::shareable`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shareable: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimInfo {
    pub object: ObjectRef,
    /// `true` for a ResourceClaimTemplate (one claim per pod).
    pub template: bool,
    pub device_class: Option<String>,
    pub strategy: DraStrategy,
    /// A request sets `adminAccess: true` (KEP-5018): the claim gets devices whether or not other
    /// claims hold them, in a namespace labelled `resource.kubernetes.io/admin-access: "true"`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin_access: bool,
    /// Its devices may be allocated to other claims too, in any namespace: the driver publishes them
    /// with `allowMultipleAllocations` (consumable capacity, KEP-5075), and the claim was allocated
    /// such a device (or a share of one), or is not allocated yet and the input's ResourceSlices
    /// publish devices of its kind so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shareable: bool,
}
