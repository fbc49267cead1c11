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
//! - AKS installs the NVIDIA driver on GPU node pools and labels no driver version.

use super::{LabelAdapter, LabelFacts};
use gpu_trust_model::fleet::{NodeFact, Platform};
use std::collections::BTreeMap;

pub(crate) const ACCELERATOR: &str = "kubernetes.azure.com/accelerator";
pub(crate) const SKU_GPU_NAME: &str = "karpenter.azure.com/sku-gpu-name";
pub(crate) const SKU_GPU_MANUFACTURER: &str = "karpenter.azure.com/sku-gpu-manufacturer";
pub(crate) const SKU_GPU_COUNT: &str = "karpenter.azure.com/sku-gpu-count";
const NVIDIA: &str = "nvidia";

const DRIVER_HIDDEN: &str =
    "AKS installs the GPU driver on GPU node pools and labels no driver version";
const MODEL_HIDDEN: &str = "AKS labels only the accelerator vendor; the GPU model follows from the VM size, which gpu-trust does not map";

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
        match labels.get(SKU_GPU_NAME) {
            Some(name) => f.hides(
                NodeFact::GpuModel,
                &format!("Karpenter's Azure provider names the GPU `{name}` without its memory or form factor"),
            ),
            None => f.hides(NodeFact::GpuModel, MODEL_HIDDEN),
        }
        f.hides(NodeFact::DriverVersion, DRIVER_HIDDEN);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accelerator_label_marks_a_gpu_node_without_a_model() {
        let labels: BTreeMap<String, String> = [
            (ACCELERATOR, "nvidia"),
            (SKU_GPU_NAME, "A100"),
            (SKU_GPU_COUNT, "2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let f = Aks.read(&labels).expect("an AKS GPU node");
        assert!(f.model.is_none());
        assert_eq!(f.count, Some(2));
        assert!(f
            .hidden
            .iter()
            .any(|h| h.fact == NodeFact::GpuModel && h.reason.contains("A100")));
    }
}
