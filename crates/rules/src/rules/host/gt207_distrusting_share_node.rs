use super::super::common::{self, PairRule, Wording};
use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// Two tenants with trust `none` share a GPU node, even when they use separate GPUs.
    ///
    /// ## Why it matters
    ///
    /// Everything on a node shares the kernel and the container runtime; on a node for containers
    /// also the GPU driver and the NVIDIA Container Toolkit, on one the GPU Operator gives VMs the
    /// VFIO driver or the NVIDIA vGPU Manager, and where MPS shares the GPUs the MPS control daemon.
    /// The finding names what its nodes run. A container escape (the toolkit's CVEs), a driver
    /// privilege escalation or a privileged pod reaches every tenant on the node; separate GPUs do not
    /// help.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// # node gpu-1, 8 GPUs, no sharing
    /// # acme's pod gets GPU 0, globex's pod gets GPU 1 (trust none)
    /// ```
    ///
    /// ## Remediation
    ///
    /// Give tenants that distrust each other separate node pools: taint each pool
    /// (`kubectl taint nodes NODE gpu-trust/tenant=NAME:NoSchedule`) and give each tenant's workloads the
    /// toleration and a nodeSelector. If sharing the host is a decision, record it in the policy
    /// (`accept: [{rule: GT207, tenants: [a, b], reason: ...}]`).
    ///
    /// ## References
    ///
    /// - NVIDIA product-security bulletins 5582, 5616, 5659: container-escape vulnerabilities in the
    ///   toolkit reach the host.
    /// - gpu-trust isolation model, host layer (`gpu-trust mechanisms`).
    /// - NVIDIA GPU Operator `controllers/state_manager.go`: the operands each
    ///   `nvidia.com/gpu.workload.config` runs; the device plugin's MPS control daemon runs only on
    ///   nodes labelled `nvidia.com/mps.capable=true`.
    pub struct DistrustingShareNode {
        code: "GT207",
        name: "distrusting-share-node",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "two tenants with trust none share a node (kernel, driver, toolkit, runtime), even on separate GPUs",
    }
}

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`).
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    common::declared(ctx, sink, PairRule::BY_LEVEL, |_, tally| Wording {
        message: format!(
            "{}: they share {}",
            wording::placed(ctx, tally, |s, _| text::nodes(ctx, s.nodes.iter().copied())),
            super::shared_components(ctx, tally.nodes.iter().copied())
        ),
        remediation: format!(
            "{} separate node pools: {}; or record the shared host as accepted ({})",
            wording::give(ctx, tally),
            wording::pool_advice(ctx, tally),
            wording::accept_advice(ctx, RULE.code, tally)
        ),
    });
}
