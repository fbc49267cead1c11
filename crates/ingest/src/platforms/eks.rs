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
//!   `l4`/22888, g6e `l40s`/45776, g4dn `t4`/16384, p3dn `v100`/32768; p3 `v100`/16384 in the
//!   release of April 2025). The memory is what EC2 reports for the instance type, and EC2 has
//!   changed it: the same page listed g5 `a10g` with 24576 MiB until March 2025, so a node labelled
//!   then says 24576. The g6f and gr6f sizes carry a fraction of one L4 (`l4` with 2861, 5722 or
//!   11444 MiB: an eighth, a quarter, a half); g5g's `t4g`, g7's `rtx-pro-4500` and g7e's
//!   `rtx-pro-server-6000` are not catalogue GPUs.
//! - The EKS accelerated AMIs ship the NVIDIA driver; neither EKS nor Karpenter labels its version.

use super::{LabelAdapter, LabelFacts};
use gpu_trust_model::catalogue::{self, GpuModel};
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
    ("v100", 16384, "V100-SXM2-16GB"),
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
        f.product = Some(match f.memory_mib {
            Some(m) => format!("{name} ({m} MiB)"),
            None => name.clone(),
        });
        match model_of(name, f.memory_mib) {
            Ok(model) => f.model = Some(model),
            Err(reason) => f.hides(NodeFact::GpuModel, &reason),
        }
        f.hides(NodeFact::DriverVersion, DRIVER_HIDDEN);
        Some(f)
    }

    #[cfg(test)]
    fn mapped(&self) -> Vec<(BTreeMap<String, String>, &'static str)> {
        PREFIXES
            .iter()
            .flat_map(|p| {
                GPUS.iter().map(move |(name, mem, id)| {
                    let mem = mem.to_string();
                    let labels = [(NAME, *name), (MANUFACTURER, NVIDIA), (MEMORY, &mem)]
                        .iter()
                        .map(|(k, v)| (format!("{p}{k}"), v.to_string()))
                        .collect();
                    (labels, *id)
                })
            })
            .collect()
    }
}

/// The catalogue model of an instance GPU: the row of [`GPUS`] with its name, the one nearest its
/// memory when the name has several. The memory EC2 reports is not the catalogue's usable memory
/// and has changed over time (A10G: 24576, then 22888 MiB), so it only tells rows apart; half a
/// whole GPU's memory or less is a fraction of one (the g6f and gr6f sizes), no catalogue GPU. Why
/// not, otherwise.
fn model_of(name: &str, memory: Option<u64>) -> Result<&'static GpuModel, String> {
    let rows: Vec<_> = GPUS.iter().filter(|(n, _, _)| *n == name).collect();
    if rows.is_empty() {
        return Err(format!(
            "the instance GPU `{name}` is not one gpu-trust maps to a GPU model"
        ));
    }
    let row = match memory {
        Some(mem) => {
            if rows.iter().all(|(_, m, _)| mem.saturating_mul(2) <= *m) {
                return Err(format!(
                    "the instance type has a fraction of one `{name}` GPU ({mem} MiB), not a whole GPU of the catalogue"
                ));
            }
            rows.iter().min_by_key(|(_, m, _)| m.abs_diff(mem))
        }
        None if rows.len() == 1 => rows.first(),
        None => {
            return Err(format!(
                "the instance GPU `{name}` may be more than one GPU model, and the node has no memory label to tell which"
            ))
        }
    };
    row.and_then(|(_, _, id)| catalogue::lookup(id))
        .ok_or_else(|| {
            format!("the instance GPU `{name}` is not one gpu-trust maps to a GPU model")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::labels;

    #[test]
    fn instance_gpus_name_catalogue_models() {
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

    /// Karpenter's labels of a g5.xlarge (instance-types.md): the A10G, with or without the memory
    /// label; a fraction of an L4 or an unknown size is no model, and says why.
    #[test]
    fn a10g_and_the_sizes_that_are_no_whole_gpu() {
        let g5 = labels(&[
            ("karpenter.k8s.aws/instance-gpu-name", "a10g"),
            ("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
            ("karpenter.k8s.aws/instance-gpu-count", "1"),
            ("karpenter.k8s.aws/instance-gpu-memory", "22888"),
        ]);
        let f = Eks.read(&g5).expect("an EKS GPU node");
        assert_eq!(f.model.map(|m| m.id), Some("A10G"));
        let name_only = labels(&[("eks.amazonaws.com/instance-gpu-name", "a10g")]);
        let f = Eks.read(&name_only).expect("an EKS GPU node");
        assert_eq!(f.model.map(|m| m.id), Some("A10G"));
        let a100 = labels(&[("karpenter.k8s.aws/instance-gpu-name", "a100")]);
        let f = Eks.read(&a100).expect("an EKS GPU node");
        assert!(f.model.is_none());
        let g6f = labels(&[
            ("karpenter.k8s.aws/instance-gpu-name", "l4"),
            ("karpenter.k8s.aws/instance-gpu-memory", "2861"),
        ]);
        let f = Eks.read(&g6f).expect("an EKS GPU node");
        assert!(f.model.is_none());
        assert!(f
            .hidden
            .iter()
            .any(|h| h.fact == NodeFact::GpuModel && h.reason.contains("fraction of one `l4`")));
        // What EC2 reported for a g5 until March 2025: the same A10G.
        let older = labels(&[
            ("karpenter.k8s.aws/instance-gpu-name", "a10g"),
            ("karpenter.k8s.aws/instance-gpu-memory", "24576"),
        ]);
        let f = Eks.read(&older).expect("an EKS GPU node");
        assert_eq!(f.model.map(|m| m.id), Some("A10G"));
        assert!(f.hidden.iter().all(|h| h.fact != NodeFact::GpuModel));
    }

    /// A name with several models is told apart by the nearest memory, whatever EC2 reported; a
    /// name of one model resolves whatever its memory, unless it is a fraction.
    #[test]
    fn memory_tells_models_apart_and_never_unknowns_a_name() {
        for (mem, id) in [
            ("40960", "A100-SXM4-40GB"),
            ("40536", "A100-SXM4-40GB"),
            ("81920", "A100-SXM4-80GB"),
            ("16384", "V100-SXM2-16GB"),
        ] {
            let name = if id.starts_with("V100") {
                "v100"
            } else {
                "a100"
            };
            let l = labels(&[
                ("eks.amazonaws.com/instance-gpu-name", name),
                ("eks.amazonaws.com/instance-gpu-memory", mem),
            ]);
            let f = Eks.read(&l).expect("an EKS GPU node");
            assert_eq!(f.model.map(|m| m.id), Some(id), "{name} {mem}");
        }
        for mem in ["24576", "23028", "45776"] {
            let l = labels(&[
                ("karpenter.k8s.aws/instance-gpu-name", "l4"),
                ("karpenter.k8s.aws/instance-gpu-memory", mem),
            ]);
            let f = Eks.read(&l).expect("an EKS GPU node");
            assert_eq!(f.model.map(|m| m.id), Some("L4"), "{mem}");
        }
    }
}
