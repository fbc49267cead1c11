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
    /// Two tenants whose trust is below `full` share one MIG instance: the device plugin time-slices a
    /// MIG profile (`replicas` on `nvidia.com/mig-<profile>`), so both get replicas of the same instance.
    /// (MPS inside one instance is GT102: the tenants share the instance's MPS server.)
    ///
    /// ## Why it matters
    ///
    /// MIG separates instances from each other, not the workloads inside one instance. Inside the
    /// instance the replicas share its memory pool, its SMs and its fault domain exactly as on a
    /// time-sliced GPU; the MIG label on the resource makes the sharing easy to overlook.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// sharing:
    ///   timeSlicing:
    ///     resources: [{name: nvidia.com/mig-3g.40gb, replicas: 2}]
    /// # acme and globex both request nvidia.com/mig-3g.40gb on a node with one 3g.40gb instance
    /// ```
    ///
    /// ## Remediation
    ///
    /// Remove the replicas from the MIG resource and give each tenant its own instance (a layout with
    /// more, smaller instances if needed); tenants of trust `none` also need separate GPUs.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes": time-slicing applies to MIG
    ///   resources too, with no memory or fault isolation between replicas.
    /// - NVIDIA MIG User Guide: isolation is between instances.
    /// - gpu-trust isolation model (`gpu-trust mechanisms`), row mig-time-slicing.
    pub struct UntrustedShareMigInstance {
        code: "GT103",
        name: "untrusted-share-mig-instance",
        layer: Layer::Device,
        severity: SeverityRule::ByTrust { none: Severity::Critical, limited: Severity::High },
        summary: "two tenants with trust below full share one MIG instance (time-slicing or MPS inside MIG)",
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
        "{}. {}",
        wording::tally_opening(
            ctx,
            tally,
            "one time-sliced MIG instance",
            "time-sliced MIG instances"
        ),
        text::enforcement(m, &text::INCIDENT_PROPERTIES)
    )
}

fn remediation(ctx: &Context<'_>, tally: &Tally) -> String {
    let source = wording::first_gpu(ctx, tally)
        .map(wording::config_source)
        .unwrap_or_else(|| "the device plugin config".to_string());
    let mut out = format!(
        "Remove the `replicas` of {} in {source} and give {} an instance each: {}",
        wording::shared_resources(ctx, tally).unwrap_or_else(|| "the MIG resource".to_string()),
        wording::names(ctx, tally),
        super::mig_advice(ctx, &tally.nodes)
    );
    if tally.of_trust(Trust::None) > 0 {
        out.push_str(&format!(
            "; as they do not trust each other at all, also separate their GPUs and nodes: {}",
            wording::pool_advice(ctx, tally)
        ));
    }
    out
}
