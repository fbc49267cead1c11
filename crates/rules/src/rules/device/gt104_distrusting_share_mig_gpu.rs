use super::super::common::{self, Relevant, Wording};
use crate::colocation::Level;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Mechanism, Property};
use gpu_trust_model::{Layer, Severity, Trust};
use std::collections::BTreeSet;

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
    let base = |t: Trust| (t == Trust::None).then_some(Severity::High);
    let m = Mechanism::MigInstance;
    let subsumed = super::shares_one_instance(ctx);
    for ((group, level), sites) in common::sites_by_group(ctx, |l| l == Level::MigGpu) {
        let relevant = Relevant {
            except: Some(&subsumed),
            ..Relevant::trusts(&|_| common::NONE)
        };
        common::pair_finding(
            ctx,
            sink,
            &sites,
            &relevant,
            &base,
            common::group_key(ctx, group, level),
            &BTreeSet::from([m]),
            |tally| {
                Wording {
                message: format!(
                    "{}. Memory is partitioned, but not the GPU: {}",
                    common::tally_opening(
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
                    "Put {} on different physical GPUs, best on separate node pools: {}; or accept GT104 for them in the policy if the shared driver, GPU-wide faults and side channels are an accepted risk",
                    common::names(ctx, tally),
                    common::pool_advice(ctx, tally)
                ),
            }
            },
        );
    }
}
