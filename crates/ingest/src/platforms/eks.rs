//! Amazon EKS: EKS Auto Mode and Karpenter's AWS provider label each node with the GPU of its EC2
//! instance type. The device plugin is either EKS-managed (Auto Mode) or installed by the cluster's
//! operator (the NVIDIA device plugin chart or the GPU Operator, read by their own adapters).
//!
//! Sources:
//! - aws/karpenter-provider-aws `pkg/apis/v1/labels.go` and `pkg/providers/instancetype/types.go`:
//!   `karpenter.k8s.aws/instance-gpu-name` (EC2's GPU name in lower kebab case), `-manufacturer`,
//!   `-count`, `-memory` (MiB per GPU, EC2 `GpuInfo.MemoryInfo.SizeInMiB`).
//! - EKS User Guide, "Create a Node Pool for EKS Auto Mode" (supported labels):
//!   `eks.amazonaws.com/instance-gpu-name`, `-manufacturer`, `-count`, `-memory`, same values.
//! - aws/karpenter-provider-aws `website/content/en/docs/reference/instance-types.md`: the name and
//!   memory each GPU instance type gets (p4d `a100`/40960, p4de `a100`/81920, p5 `h100`/81920, p5e
//!   and p5en `h200`/144384, p6-b200 `b200`/183359, p6-b300 `b300`/275040, g5 `a10g`/22888, g6
//!   `l4`/22888, g6e `l40s`/45776, g4dn `t4`/16384, p3dn `v100`/32768; the g6f fractional L4 sizes
//!   and `t4g` are not whole catalogue GPUs).
//! - The EKS accelerated AMIs ship the NVIDIA driver; neither EKS nor Karpenter labels its version.

use super::{LabelAdapter, LabelFacts};
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{NodeFact, Platform};
use std::collections::BTreeMap;

/// Label prefixes of Karpenter's AWS provider and of EKS Auto Mode; the suffixes are the same.
const PREFIXES: [&str; 2] = [
    "karpenter.k8s.aws/instance-gpu-",
    "eks.amazonaws.com/instance-gpu-",
];
const NAME: &str = "name";
const MANUFACTURER: &str = "manufacturer";
const COUNT: &str = "count";
const MEMORY: &str = "memory";
const NVIDIA: &str = "nvidia";

/// (GPU name, MiB per GPU) of EC2 GPU instance types and the catalogue model they are.
pub(crate) const GPUS: &[(&str, u64, &str)] = &[
    ("a100", 40960, "A100-SXM4-40GB"),
    ("a100", 81920, "A100-SXM4-80GB"),
    ("h100", 81920, "H100-SXM5-80GB"),
    ("h200", 144384, "H200-SXM-141GB"),
    ("b200", 183359, "B200"),
    ("b300", 275040, "B300"),
    ("a10g", 22888, "A10G"),
    ("l4", 22888, "L4"),
    ("l40s", 45776, "L40S"),
    ("t4", 16384, "T4"),
    ("v100", 32768, "V100-SXM2-32GB"),
];

const DRIVER_HIDDEN: &str =
    "the EKS accelerated AMI installs the GPU driver; neither EKS nor Karpenter labels its version";

pub(crate) struct Eks;

impl LabelAdapter for Eks {
    fn read(&self, labels: &BTreeMap<String, String>) -> Option<LabelFacts> {
        let get = |suffix: &str| {
            PREFIXES
                .iter()
                .find_map(|p| labels.get(&format!("{p}{suffix}")))
        };
        let name = get(NAME)?;
        if get(MANUFACTURER).is_some_and(|m| m != NVIDIA) {
            return None;
        }
        let mut f = LabelFacts::new(Platform::Eks);
        f.has_gpu = true;
        f.count = get(COUNT).and_then(|c| c.trim().parse().ok());
        f.memory_mib = get(MEMORY).and_then(|m| m.trim().parse().ok());
        f.model = f.memory_mib.and_then(|mem| {
            GPUS.iter()
                .find(|(n, m, _)| n == name && *m == mem)
                .and_then(|(_, _, id)| catalogue::lookup(id))
        });
        f.product = Some(match f.memory_mib {
            Some(m) => format!("{name} ({m} MiB)"),
            None => name.clone(),
        });
        f.hides(NodeFact::DriverVersion, DRIVER_HIDDEN);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::labels;

    #[test]
    fn instance_gpus_name_catalogue_models() {
        for (n, m, id) in GPUS {
            assert!(catalogue::lookup(id).is_some(), "{n} {m} -> {id}");
        }
        let a100 = labels(&[
            ("karpenter.k8s.aws/instance-gpu-name", "a100"),
            ("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
            ("karpenter.k8s.aws/instance-gpu-count", "8"),
            ("karpenter.k8s.aws/instance-gpu-memory", "81920"),
        ]);
        let f = Eks.read(&a100).expect("an EKS GPU node");
        assert_eq!(f.model.map(|m| m.id), Some("A100-SXM4-80GB"));
        assert_eq!(f.count, Some(8));
        let amd = labels(&[
            ("eks.amazonaws.com/instance-gpu-name", "radeon-pro-v520"),
            ("eks.amazonaws.com/instance-gpu-manufacturer", "amd"),
        ]);
        assert!(Eks.read(&amd).is_none());
    }
}
