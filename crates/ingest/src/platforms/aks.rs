//! Azure Kubernetes Service: AKS labels its GPU nodes with the accelerator vendor, and Karpenter's
//! Azure provider (AKS node auto-provisioning) with the GPU of the VM size. The device plugin is
//! AKS's or the cluster operator's (the NVIDIA device plugin chart or the GPU Operator, read by their
//! own adapters).
//!
//! Sources:
//! - AKS docs "Use labels in an AKS cluster" (reserved system labels): `kubernetes.azure.com/accelerator`
//!   with value `nvidia` on GPU nodes; the VM size is `node.kubernetes.io/instance-type`.
//! - Azure/karpenter-provider-azure `pkg/apis/v1beta1/labels.go` and its docs:
//!   `karpenter.azure.com/sku-gpu-name` (e.g. `A100`, `T4`, `V100`), `sku-gpu-manufacturer`
//!   (`nvidia`), `sku-gpu-count`. The name carries neither memory nor form factor, so an `A100` may
//!   be any of four catalogue models: the model is left unknown rather than guessed.
//! - The GPUs of a VM size: Microsoft Learn, "GPU accelerated VM sizes" and each series' page
//!   (`learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/<series>`), with the counts and
//!   memory per VM that KAITO's Azure SKU table repeats (kaito-project/kaito `pkg/sku/azure_sku_handler.go`):
//!   - NCasT4_v3 (`ncast4v3-series`): NC4as, NC8as, NC16as with one Tesla T4, NC64as with four.
//!   - NC A100 v4 (`nca100v4-series`): NC24ads, NC48ads, NC96ads with 1, 2, 4 A100 80GB PCIe.
//!   - ND A100 v4 (`ndasra100v4-series`): ND96asr_v4 with eight A100 40GB on NVLink 3.0 (SXM4).
//!   - NDm A100 v4 (`ndma100v4-series`): ND96amsr_A100_v4 with eight A100 80GB on NVLink (SXM4).
//!   - NC H100 v5 (`ncadsh100v5-series`): NC40ads, NC80adis with 1, 2 H100 NVL (94 GB each); the
//!     confidential NCC H100 v5 (`nccadsh100v5-series`) NCC40ads with one.
//!   - ND H100 v5 (`ndh100v5-series`): ND96isr_H100_v5 with eight H100 80GB on NVLink 4.0 (SXM5).
//!   - ND H200 v5 (`nd-h200-v5-series`): ND96isr_H200_v5 with eight H200 (141 GB each).
//!   - NVadsA10 v5 (`nvadsa10v5-series`): NV36ads, NV72ads with 1, 2 whole A10; NV6ads, NV12ads and
//!     NV18ads have 1/6, 1/3 and 1/2 of one A10 through NVIDIA vGPU, not a whole GPU.
//! - AKS installs the NVIDIA driver on GPU node pools and labels no driver version.

use super::{LabelAdapter, LabelFacts};
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{NodeFact, Platform};
use std::collections::BTreeMap;

pub(crate) const ACCELERATOR: &str = "kubernetes.azure.com/accelerator";
pub(crate) const SKU_GPU_NAME: &str = "karpenter.azure.com/sku-gpu-name";
pub(crate) const SKU_GPU_MANUFACTURER: &str = "karpenter.azure.com/sku-gpu-manufacturer";
pub(crate) const SKU_GPU_COUNT: &str = "karpenter.azure.com/sku-gpu-count";
const NVIDIA: &str = "nvidia";
/// The VM size (Kubernetes' well-known label, which AKS sets to the size's name).
pub(crate) const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";

/// Azure VM sizes with whole NVIDIA GPUs: (size, GPUs per VM, catalogue model). Size names compare
/// without regard to case.
pub(crate) const VM_SIZES: &[(&str, u32, &str)] = &[
    ("Standard_NC4as_T4_v3", 1, "T4"),
    ("Standard_NC8as_T4_v3", 1, "T4"),
    ("Standard_NC16as_T4_v3", 1, "T4"),
    ("Standard_NC64as_T4_v3", 4, "T4"),
    ("Standard_NC24ads_A100_v4", 1, "A100-PCIE-80GB"),
    ("Standard_NC48ads_A100_v4", 2, "A100-PCIE-80GB"),
    ("Standard_NC96ads_A100_v4", 4, "A100-PCIE-80GB"),
    ("Standard_ND96asr_v4", 8, "A100-SXM4-40GB"),
    ("Standard_ND96amsr_A100_v4", 8, "A100-SXM4-80GB"),
    ("Standard_NC40ads_H100_v5", 1, "H100-NVL-94GB"),
    ("Standard_NC80adis_H100_v5", 2, "H100-NVL-94GB"),
    ("Standard_NCC40ads_H100_v5", 1, "H100-NVL-94GB"),
    ("Standard_ND96isr_H100_v5", 8, "H100-SXM5-80GB"),
    ("Standard_ND96isr_H200_v5", 8, "H200-SXM-141GB"),
    ("Standard_NV36ads_A10_v5", 1, "A10"),
    ("Standard_NV72ads_A10_v5", 2, "A10"),
];

/// Azure VM sizes with a fraction of one NVIDIA GPU (NVIDIA vGPU): no whole catalogue GPU.
pub(crate) const FRACTIONAL_VM_SIZES: &[&str] = &[
    "Standard_NV6ads_A10_v5",
    "Standard_NV12ads_A10_v5",
    "Standard_NV18ads_A10_v5",
];

const DRIVER_HIDDEN: &str =
    "AKS installs the GPU driver on GPU node pools and labels no driver version";
const MODEL_HIDDEN: &str =
    "AKS labels only the accelerator vendor and the VM size, and the node has no VM size label";

pub(crate) struct Aks;

impl LabelAdapter for Aks {
    fn read(&self, labels: &BTreeMap<String, String>) -> Option<LabelFacts> {
        let vendor = labels
            .get(ACCELERATOR)
            .or_else(|| labels.get(SKU_GPU_MANUFACTURER))?;
        if !vendor.eq_ignore_ascii_case(NVIDIA) {
            return None;
        }
        let mut f = LabelFacts::new(Platform::Aks);
        f.has_gpu = true;
        f.count = labels
            .get(SKU_GPU_COUNT)
            .and_then(|c| c.trim().parse().ok());
        let size = labels.get(INSTANCE_TYPE).map(|s| s.trim());
        let known = size.and_then(|size| {
            VM_SIZES
                .iter()
                .find(|(name, _, _)| name.eq_ignore_ascii_case(size))
        });
        match (known, size) {
            (Some((name, count, id)), _) => {
                f.model = catalogue::lookup(id);
                f.count = f.count.or(Some(*count));
                f.product = Some((*name).to_string());
            }
            (None, Some(size)) => {
                let reason = if FRACTIONAL_VM_SIZES
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(size))
                {
                    format!("the VM size `{size}` has a fraction of one GPU (NVIDIA vGPU), not a whole GPU of the catalogue")
                } else {
                    match labels.get(SKU_GPU_NAME) {
                        Some(name) => format!("the VM size `{size}` is not one gpu-trust maps, and Karpenter's Azure provider names the GPU `{name}` without its memory or form factor"),
                        None => format!("the VM size `{size}` is not one gpu-trust maps to a GPU model"),
                    }
                };
                f.hides(NodeFact::GpuModel, &reason);
            }
            (None, None) => match labels.get(SKU_GPU_NAME) {
                Some(name) => f.hides(
                    NodeFact::GpuModel,
                    &format!("Karpenter's Azure provider names the GPU `{name}` without its memory or form factor"),
                ),
                None => f.hides(NodeFact::GpuModel, MODEL_HIDDEN),
            },
        }
        f.hides(NodeFact::DriverVersion, DRIVER_HIDDEN);
        Some(f)
    }

    #[cfg(test)]
    fn mapped(&self) -> Vec<(BTreeMap<String, String>, &'static str)> {
        VM_SIZES
            .iter()
            .map(|(size, _, id)| {
                let labels = [(ACCELERATOR, NVIDIA), (INSTANCE_TYPE, *size)]
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                (labels, *id)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::labels;

    #[test]
    fn every_vm_size_names_a_catalogue_model() {
        for (size, count, id) in VM_SIZES {
            let model = catalogue::lookup(id).unwrap_or_else(|| panic!("{size} -> {id}"));
            let f = Aks
                .read(&labels(&[(ACCELERATOR, "nvidia"), (INSTANCE_TYPE, size)]))
                .expect("an AKS GPU node");
            assert_eq!(f.model.map(|m| m.id), Some(model.id), "{size}");
            assert_eq!(f.count, Some(*count), "{size}");
            assert!(f.hidden.iter().all(|h| h.fact != NodeFact::GpuModel));
        }
    }

    #[test]
    fn the_vm_size_gives_model_and_count_in_any_case() {
        let f = Aks
            .read(&labels(&[
                (ACCELERATOR, "nvidia"),
                (INSTANCE_TYPE, "standard_nc24ads_a100_v4"),
            ]))
            .expect("an AKS GPU node");
        assert_eq!(f.model.map(|m| m.id), Some("A100-PCIE-80GB"));
        assert_eq!(f.count, Some(1));
        assert_eq!(f.product.as_deref(), Some("Standard_NC24ads_A100_v4"));
    }

    #[test]
    fn a_fraction_of_a_gpu_or_an_unmapped_size_leaves_the_model_unknown_and_says_why() {
        let f = Aks
            .read(&labels(&[
                (ACCELERATOR, "nvidia"),
                (INSTANCE_TYPE, "Standard_NV6ads_A10_v5"),
            ]))
            .expect("an AKS GPU node");
        assert!(f.model.is_none());
        assert!(f
            .hidden
            .iter()
            .any(|h| h.fact == NodeFact::GpuModel && h.reason.contains("fraction of one GPU")));
        let f = Aks
            .read(&labels(&[
                (ACCELERATOR, "nvidia"),
                (INSTANCE_TYPE, "Standard_ND128isr_NDR_GB200_v6"),
            ]))
            .expect("an AKS GPU node");
        assert!(f.model.is_none());
        assert!(f
            .hidden
            .iter()
            .any(|h| h.fact == NodeFact::GpuModel
                && h.reason.contains("Standard_ND128isr_NDR_GB200_v6")));
    }

    #[test]
    fn accelerator_label_marks_a_gpu_node_without_a_model() {
        let labels = labels(&[
            (ACCELERATOR, "nvidia"),
            (SKU_GPU_NAME, "A100"),
            (SKU_GPU_COUNT, "2"),
        ]);
        let f = Aks.read(&labels).expect("an AKS GPU node");
        assert!(f.model.is_none());
        assert_eq!(f.count, Some(2));
        assert!(f
            .hidden
            .iter()
            .any(|h| h.fact == NodeFact::GpuModel && h.reason.contains("A100")));
    }
}
