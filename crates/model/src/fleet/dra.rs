//! DRA: how a claim shares its device, a pod's use of a claim, and the ResourceClaims and
//! ResourceClaimTemplates of the input.

use crate::location::ObjectRef;
use serde::{Deserialize, Serialize};

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
}
