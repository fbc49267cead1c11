//! Google Kubernetes Engine: GKE installs the driver and its own device plugin on GPU node pools and
//! describes them in node labels; there is no ClusterPolicy, no device plugin ConfigMap and no GPU
//! Feature Discovery.
//!
//! Sources:
//! - kubernetes/autoscaler `cluster-autoscaler/cloudprovider/gce` (GKE's label constants):
//!   `cloud.google.com/gke-accelerator` (the GPU type), `cloud.google.com/gke-accelerator-count`,
//!   `cloud.google.com/gke-gpu-partition-size`, `cloud.google.com/gke-max-shared-clients-per-gpu`,
//!   `cloud.google.com/gke-gpu-sharing-strategy` (`time-sharing` or `mps`),
//!   `cloud.google.com/gke-gpu-driver-version` (`default`, `latest`: a branch, not a version).
//! - GKE docs "About GPU time-sharing" (timesharing-gpus): every GPU of the pool is shared by up to
//!   `gke-max-shared-clients-per-gpu` containers; "Running multi-instance GPUs" (gpus-multi): every GPU
//!   is cut into partitions of `gke-gpu-partition-size`, each advertised as `nvidia.com/gpu`.
//! - GoogleCloudPlatform/container-engine-accelerators `pkg/gpu/nvidia/manager.go`: the plugin lists
//!   the MIG partitions as devices when a partition size is set and advertises each device (GPU or
//!   partition) `MaxSharedClientsPerGPU` times; under `mps` it pins each client's memory and active
//!   threads to 1/max of the device.
//! - Compute Engine docs "GPU machine types": the GPU model of each accelerator type (A2 standard
//!   `nvidia-tesla-a100`: A100 40GB; A2 ultra `nvidia-a100-80gb`; A3 High `nvidia-h100-80gb` and A3
//!   Mega `nvidia-h100-mega-80gb`: H100 SXM 80GB; A3 Ultra `nvidia-h200-141gb`: H200 SXM; A4
//!   `nvidia-b200`; A4X `nvidia-gb200`; A4X Max `nvidia-gb300`; G2 `nvidia-l4`; N1 `nvidia-tesla-t4`
//!   and `nvidia-tesla-v100` (16 GB)).

use super::{LabelAdapter, LabelFacts};
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{MigStrategy, NodeFact, Platform, SharingStrategy};
use std::collections::BTreeMap;

pub(crate) const ACCELERATOR: &str = "cloud.google.com/gke-accelerator";
pub(crate) const ACCELERATOR_COUNT: &str = "cloud.google.com/gke-accelerator-count";
pub(crate) const PARTITION_SIZE: &str = "cloud.google.com/gke-gpu-partition-size";
pub(crate) const MAX_SHARED_CLIENTS: &str = "cloud.google.com/gke-max-shared-clients-per-gpu";
pub(crate) const SHARING_STRATEGY: &str = "cloud.google.com/gke-gpu-sharing-strategy";
pub(crate) const DRIVER_VERSION: &str = "cloud.google.com/gke-gpu-driver-version";

/// GKE accelerator types and the catalogue model each names. Types not listed (P100, P4, K80, RTX
/// PRO 6000) are not in the catalogue.
pub(crate) const ACCELERATORS: &[(&str, &str)] = &[
    ("nvidia-tesla-t4", "T4"),
    ("nvidia-tesla-v100", "V100-SXM2-16GB"),
    ("nvidia-l4", "L4"),
    ("nvidia-tesla-a100", "A100-SXM4-40GB"),
    ("nvidia-a100-80gb", "A100-SXM4-80GB"),
    ("nvidia-h100-80gb", "H100-SXM5-80GB"),
    ("nvidia-h100-mega-80gb", "H100-SXM5-80GB"),
    ("nvidia-h200-141gb", "H200-SXM-141GB"),
    ("nvidia-b200", "B200"),
    ("nvidia-gb200", "GB200"),
    ("nvidia-gb300", "GB300"),
];

const TOOLKIT_HIDDEN: &str =
    "GKE runs its own device plugin and labels no container toolkit version";

pub(crate) struct Gke;

impl LabelAdapter for Gke {
    fn read(&self, labels: &BTreeMap<String, String>) -> Option<LabelFacts> {
        let accelerator = labels.get(ACCELERATOR)?;
        let mut f = LabelFacts::new(Platform::Gke);
        f.has_gpu = accelerator.starts_with("nvidia-");
        if !f.has_gpu {
            return None;
        }
        f.product = Some(accelerator.clone());
        f.model = ACCELERATORS
            .iter()
            .find(|(a, _)| a == accelerator)
            .and_then(|(_, id)| catalogue::lookup(id));
        f.count = labels
            .get(ACCELERATOR_COUNT)
            .and_then(|c| c.trim().parse().ok());
        let replicas = labels
            .get(MAX_SHARED_CLIENTS)
            .and_then(|c| c.trim().parse::<u32>().ok());
        let strategy = match labels.get(SHARING_STRATEGY).map(|s| s.trim()) {
            Some("time-sharing") => Some(SharingStrategy::TimeSlicing),
            Some("mps") => Some(SharingStrategy::Mps),
            // GKE's plugin refuses a client count without a strategy, and an unknown strategy.
            Some(_) => None,
            // Older node pools set only the count, which meant time-sharing
            // (`MaxTimeSharedClientsPerGPU`, kept by the plugin as time-sharing).
            None => replicas.map(|_| SharingStrategy::TimeSlicing),
        };
        f.sharing = match (strategy, replicas) {
            (Some(s), Some(r)) => Some((s, r)),
            _ => None,
        };
        f.mig = labels
            .get(PARTITION_SIZE)
            .filter(|p| !p.trim().is_empty())
            .map(|p| (p.trim().to_string(), MigStrategy::Single));
        let branch = labels
            .get(DRIVER_VERSION)
            .map_or(String::new(), |b| format!(": `{b}`"));
        f.hides(
            NodeFact::DriverVersion,
            &format!(
                "GKE installs the GPU driver itself and labels only the branch it installs ({DRIVER_VERSION}{branch}), not the driver version"
            ),
        );
        f.hides(NodeFact::ToolkitVersion, TOOLKIT_HIDDEN);
        Some(f)
    }

    #[cfg(test)]
    fn mapped(&self) -> Vec<(BTreeMap<String, String>, &'static str)> {
        ACCELERATORS
            .iter()
            .map(|(a, id)| {
                (
                    BTreeMap::from([(ACCELERATOR.to_string(), a.to_string())]),
                    *id,
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::labels;

    #[test]
    fn time_sharing_and_partitions_are_read() {
        let labels = labels(&[
            (ACCELERATOR, "nvidia-tesla-a100"),
            (PARTITION_SIZE, "1g.5gb"),
            (MAX_SHARED_CLIENTS, "3"),
            (SHARING_STRATEGY, "time-sharing"),
        ]);
        let f = Gke.read(&labels).expect("a GKE node");
        assert_eq!(f.model.map(|m| m.id), Some("A100-SXM4-40GB"));
        assert_eq!(f.sharing, Some((SharingStrategy::TimeSlicing, 3)));
        assert_eq!(f.mig, Some(("1g.5gb".to_string(), MigStrategy::Single)));
        assert!(f.hidden.iter().any(|h| h.fact == NodeFact::DriverVersion));
    }
}
