use super::super::common;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Mechanism, Property};
use gpu_trust_model::{Layer, Severity, Trust};

declare_rule! {
    /// ## What it detects
    ///
    /// Two tenants with trust `none` use different MIG instances of the same physical GPU.
    ///
    /// ## Why it matters
    ///
    /// MIG partitions memory, SMs, L2 and the memory controllers between instances, so memory
    /// exhaustion and ordinary faults stay inside an instance. But the instances still share the
    /// driver, the host, PCIe, power and thermals; errors that need a GPU reset hit every instance; and
    /// cross-instance side channels have been published (memory-barrier timing that fingerprints LLM
    /// inference, GPU TLB reverse engineering). Tenants that distrust each other need different GPUs.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// # node gpu-1: one H100 in layout all-balanced
    /// # acme requests nvidia.com/mig-3g.40gb, globex requests nvidia.com/mig-2g.20gb (trust none)
    /// ```
    ///
    /// ## Remediation
    ///
    /// Keep tenants of trust `none` on different physical GPUs, best on different node pools (taints and
    /// tolerations), or accept the shared GPU explicitly in the policy (`accept: [{rule: GT104, ...}]`)
    /// when the side channels are an accepted risk.
    ///
    /// ## References
    ///
    /// - NVIDIA MIG User Guide: separate paths through the memory system per instance; GPU-wide errors
    ///   and the driver are shared.
    /// - "Behind Bars" (USENIX Security 2026) and "TunneLs for Bootlegging" (ACM CCS 2023):
    ///   cross-instance side channels.
    /// - gpu-trust isolation model (`gpu-trust mechanisms`), row mig-instance.
    pub struct DistrustingShareMigGpu {
        code: "GT104",
        name: "distrusting-share-mig-gpu",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "two tenants with trust none use different MIG instances of the same physical GPU",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for ((a, b), pair) in &ctx.colo.pairs {
        let (a, b) = (*a, *b);
        if ctx.trust(a, b) != Trust::None || pair.mig_gpu.is_empty() {
            continue;
        }
        let share = &pair.mig_gpu;
        let certainty = share.certainty();
        let workloads = share.workloads();
        let m = Mechanism::MigInstance;
        let draft = sink
            .draft(Severity::High, certainty)
            .tenants([a, b])
            .nodes(share.nodes())
            .workloads(workloads.iter().copied())
            .mechanism(m)
            .message(format!(
                "{} {} a physical GPU through different MIG instances on {} ({}; {}). Memory is partitioned, but not the GPU: {}",
                common::pair_phrase(ctx, a, b),
                common::verb(certainty),
                text::nodes(ctx, share.nodes()),
                common::who(ctx, &workloads, &[a, b]),
                common::why(share),
                text::enforcement(m, &[Property::MemoryCapacity, Property::FaultDomain, Property::SideChannels])
            ))
            .remediation(format!(
                "Put {} and {} on different physical GPUs, best on separate node pools: {}; or accept GT104 for them in the policy if the shared driver, GPU-wide faults and side channels are an accepted risk",
                ctx.tenant_name(a),
                ctx.tenant_name(b),
                common::node_pool_advice(ctx.tenant_name(b))
            ));
        sink.push(draft);
    }
}
