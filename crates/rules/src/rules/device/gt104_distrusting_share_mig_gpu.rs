use super::super::common::{self, PairRule, Wording};
use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Mechanism, Property};
use gpu_trust_model::{Layer, Severity};

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

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`);
// a pair that shares one instance of the GPU is GT103's or GT102's.
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let m = Mechanism::MigInstance;
    let subsumed = super::shares_one_instance(ctx);
    let rule = PairRule {
        except: Some(&subsumed),
        ..PairRule::BY_LEVEL
    };
    common::declared(ctx, sink, rule, |_, tally| {
        Wording {
        message: format!(
            "{}. Memory is partitioned, but not the GPU: {}",
            wording::tally_opening(
                ctx,
                tally,
                "a physical GPU through different MIG instances",
                "physical GPUs through different MIG instances"
            ),
            text::enforcement(
                m,
                &[
                    Property::MemoryCapacity,
                    Property::FaultDomain,
                    Property::SideChannels
                ]
            )
        ),
        remediation: format!(
            "Put {} on different physical GPUs, best on separate node pools: {}; or accept {} for them in the policy if the shared driver, GPU-wide faults and side channels are an accepted risk",
            wording::names(ctx, tally),
            wording::pool_advice(ctx, tally),
            RULE.code
        ),
    }
    });
}
