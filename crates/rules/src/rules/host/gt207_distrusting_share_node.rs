use super::super::common::{self, Relevant, Wording};
use crate::colocation::Level;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::LAYERS;
use gpu_trust_model::{Layer, Severity, Trust};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// Two tenants with trust `none` share a GPU node, even when they use separate GPUs.
    ///
    /// ## Why it matters
    ///
    /// Everything on a node shares the kernel, the GPU driver, the NVIDIA Container Toolkit, the
    /// container runtime and the MPS control daemon. A container escape (the toolkit's CVEs), a driver
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
    pub struct DistrustingShareNode {
        code: "GT207",
        name: "distrusting-share-node",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "two tenants with trust none share a node (kernel, driver, toolkit, runtime), even on separate GPUs",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let host = LAYERS.iter().find(|l| l.layer == Layer::Host);
    let base = |t: Trust| (t == Trust::None).then_some(Severity::High);
    for ((group, level), sites) in common::sites_by_group(ctx, |l| l == Level::Node) {
        let relevant = Relevant::trusts(&|_| common::NONE);
        common::pair_finding(
            ctx,
            sink,
            &sites,
            &relevant,
            &base,
            common::group_key(ctx, group, level),
            &BTreeSet::new(),
            |tally| Wording {
                message: format!(
                    "{}: they share {}",
                    common::placed(ctx, tally, |s, _| text::nodes(ctx, s.nodes.iter().copied())),
                    host.map_or("the host", |h| h.shared)
                ),
                remediation: format!(
                    "{} separate node pools: {}; or record the shared host as accepted ({})",
                    common::give(ctx, tally),
                    common::pool_advice(ctx, tally),
                    common::accept_advice(ctx, "GT207", tally)
                ),
            },
        );
    }
}
