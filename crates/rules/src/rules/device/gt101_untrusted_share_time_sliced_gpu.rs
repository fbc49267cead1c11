use super::super::common::{self, PairRule, Tally, Wording};
use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Layer, Severity, Trust};

declare_rule! {
    /// ## What it detects
    ///
    /// Two tenants whose trust is below `full` share one physical GPU that the device plugin (or a DRA
    /// claim's `TimeSlicing` strategy) time-slices: the plugin advertises several replicas of each GPU
    /// and MIG is off.
    ///
    /// ## Why it matters
    ///
    /// Time-slicing is scheduling, not isolation. The replicas draw on one memory pool, so one tenant can
    /// allocate the memory the other needs; a device-level fault (an Xid that needs a GPU reset) stops
    /// every context on the GPU; and kernels are interleaved with no guaranteed execution quantum. The
    /// replica count is how capacity is sold; it enforces nothing.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// # device plugin config on node gpu-1
    /// sharing:
    ///   timeSlicing:
    ///     resources: [{name: nvidia.com/gpu, replicas: 4}]
    /// # pods of tenants acme and globex (trust none) both request nvidia.com/gpu: 1 on gpu-1
    /// ```
    ///
    /// ## Remediation
    ///
    /// Tenants that distrust each other (`none`) need different physical GPUs, best on different node
    /// pools: taint each pool and give each tenant's workloads the toleration and a nodeSelector.
    /// Tenants of `limited` trust need at least separate MIG instances: enable MIG on the node
    /// (`nvidia.com/mig.config` label) and request `nvidia.com/mig-<profile>` instead of `nvidia.com/gpu`.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes": no memory or fault isolation
    ///   between replicas.
    /// - NVIDIA k8s-device-plugin README: time-sliced workloads run in one fault domain.
    /// - gpu-trust isolation model (`gpu-trust mechanisms`), row time-slicing.
    pub struct UntrustedShareTimeSlicedGpu {
        code: "GT101",
        name: "untrusted-share-time-sliced-gpu",
        layer: Layer::Device,
        severity: SeverityRule::ByTrust { none: Severity::Critical, limited: Severity::High },
        summary: "two tenants with trust below full share a time-sliced physical GPU",
    }
}

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`).
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    common::declared(ctx, sink, PairRule::BY_LEVEL, |level, t| Wording {
        message: message(ctx, level.reach().0, t),
        remediation: remediation(ctx, t),
    });
}

fn message(ctx: &Context<'_>, m: Mechanism, tally: &Tally) -> String {
    format!(
        "{}. {}; the replica count is accounting only",
        wording::tally_opening(ctx, tally, "a time-sliced GPU", "time-sliced GPUs"),
        text::enforcement(m, &text::INCIDENT_PROPERTIES)
    )
}

/// Separate GPUs (and pools) for distrusting pairs, MIG instances for pairs of limited trust.
pub(crate) fn remediation(ctx: &Context<'_>, tally: &Tally) -> String {
    if tally.of_trust(Trust::None) > 0 {
        let mut out = format!(
            "{} different physical GPUs, on separate node pools: {}; or set `replicas: 1` for {} in {}",
            wording::give(ctx, tally),
            wording::pool_advice(ctx, tally),
            wording::shared_resources(ctx, tally).unwrap_or_else(|| "the resource".to_string()),
            wording::first_gpu(ctx, tally)
                .map(wording::config_source)
                .unwrap_or_else(|| "the device plugin config".to_string())
        );
        out.push_str(&wording::limited_too(ctx, tally));
        out
    } else {
        format!(
            "Separate {} by MIG instances at least: {}",
            wording::names(ctx, tally),
            super::mig_advice(ctx, &tally.nodes)
        )
    }
}
