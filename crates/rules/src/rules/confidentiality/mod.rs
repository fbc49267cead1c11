//! Confidentiality rules (GT3xx): confidential computing and attestation.

pub mod gt301_confidential_tenant_without_cc;
pub mod gt302_cc_with_partial_allocation;
pub mod gt303_confidential_tenant_without_attestation;

use gpu_trust_model::fleet::GpuNode;

/// `nvidia.com/cc.mode.state` values under which the GPUs run in confidential-computing mode: `on`, and
/// `ppcie` (protected PCIe, multi-GPU CC on Hopper HGX). Source: NVIDIA GPU Operator confidential
/// computing docs (labels `nvidia.com/cc.mode`, `nvidia.com/cc.mode.state`).
const CC_ON: [&str; 2] = ["on", "ppcie"];

pub(crate) fn cc_on(node: &GpuNode) -> bool {
    node.cc_mode
        .as_deref()
        .is_some_and(|m| CC_ON.contains(&m.trim().to_ascii_lowercase().as_str()))
}
