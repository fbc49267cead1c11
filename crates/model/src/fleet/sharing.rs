//! How a node's GPUs are configured to be shared: the MIG strategy, and the device plugin's sharing
//! configuration with where it came from.

use crate::resource;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MigStrategy {
    #[default]
    None,
    Single,
    Mixed,
}

impl MigStrategy {
    /// The device plugin's spelling (`flags.migStrategy`, the ClusterPolicy's `mig.strategy`), and
    /// serde's.
    pub const fn as_str(self) -> &'static str {
        match self {
            MigStrategy::None => "none",
            MigStrategy::Single => "single",
            MigStrategy::Mixed => "mixed",
        }
    }

    pub fn parse(s: &str) -> Option<MigStrategy> {
        [MigStrategy::None, MigStrategy::Single, MigStrategy::Mixed]
            .into_iter()
            .find(|m| m.as_str() == s)
    }
}

/// Which device plugin sharing mode a node runs (the config applies to every GPU of the node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SharingStrategy {
    #[default]
    None,
    TimeSlicing,
    Mps,
}

impl SharingStrategy {
    /// GFD's value of the `<resource>.sharing-strategy` label (`internal/lm/resource.go`), and serde's.
    pub const fn as_str(self) -> &'static str {
        match self {
            SharingStrategy::None => "none",
            SharingStrategy::TimeSlicing => "time-slicing",
            SharingStrategy::Mps => "mps",
        }
    }
}

/// Where a piece of node configuration came from, so the inventory can say why it believes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum ConfigSource {
    /// A key of a ConfigMap (device plugin config or mig-parted config).
    ConfigMap {
        namespace: String,
        name: String,
        key: String,
        /// The mig-parted config name inside the key, for MIG.
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<String>,
    },
    /// GPU Feature Discovery labels on the node (used when the config objects are absent).
    NodeLabels,
    /// Nothing configured: the device plugin default (no sharing, MIG disabled).
    Default,
    /// The configuration could not be determined.
    Unknown,
}

/// A resolved `sharing:` section of a k8s-device-plugin config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharingConfig {
    pub source: ConfigSource,
    pub strategy: SharingStrategy,
    pub rename_by_default: bool,
    pub fail_requests_greater_than_one: bool,
    /// Resource name (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`) to replicas advertised per device.
    pub replicas: BTreeMap<String, u32>,
    /// `flags.plugin.deviceListStrategy` (default `envvar`).
    pub device_list_strategy: Vec<String>,
    /// `flags.plugin.sharedDevicesAllocationPolicy` (device plugin v0.20.0): how replicas and MIG
    /// instances are picked; `None` when the config does not say (the plugin's default, distributed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_policy: Option<AllocationPolicy>,
}

/// How the device plugin picks the replicas of shared GPUs and MIG instances for a request
/// (NVIDIA/k8s-device-plugin v0.20.0, pull request 1621, `internal/rm/allocate.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocationPolicy {
    /// The GPU with the fewest replicas allocated first: pods spread over the GPUs (the default).
    Distributed,
    /// The GPU with the most replicas allocated first, while it has one free: pods pile onto one GPU.
    Packed,
}

impl AllocationPolicy {
    pub fn parse(s: &str) -> Option<AllocationPolicy> {
        match s {
            "distributed" => Some(AllocationPolicy::Distributed),
            "packed" => Some(AllocationPolicy::Packed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AllocationPolicy::Distributed => "distributed",
            AllocationPolicy::Packed => "packed",
        }
    }
}

impl Default for SharingConfig {
    fn default() -> Self {
        SharingConfig {
            source: ConfigSource::Default,
            strategy: SharingStrategy::None,
            rename_by_default: false,
            fail_requests_greater_than_one: false,
            replicas: BTreeMap::new(),
            device_list_strategy: vec!["envvar".to_string()],
            allocation_policy: None,
        }
    }
}

impl SharingConfig {
    /// Replicas advertised per device for a resource (1 when the resource is not shared).
    pub fn replicas_for(&self, name: &str) -> u32 {
        self.replicas
            .get(resource::base(name))
            .copied()
            .unwrap_or(1)
            .max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_resource_replicas() {
        let mut s = SharingConfig::default();
        s.replicas.insert("nvidia.com/gpu".into(), 4);
        assert_eq!(s.replicas_for("nvidia.com/gpu.shared"), 4);
        assert_eq!(s.replicas_for("nvidia.com/mig-1g.10gb"), 1);
    }
}
