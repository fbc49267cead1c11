use super::super::common::{self, DeviceMeeting};
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, Layer, Severity, Trust};

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

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    common::untrusted_device_findings(
        ctx,
        sink,
        |m| m == Mechanism::MigTimeSlicing,
        |m, c| message(ctx, m, c),
        |m| remediation(ctx, m),
    );
}

fn message(ctx: &Context<'_>, m: &DeviceMeeting<'_>, certainty: Certainty) -> String {
    format!(
        "{}. {}",
        common::meeting_opening(ctx, m, certainty, "one time-sliced MIG instance"),
        text::enforcement(m.mechanism, &text::INCIDENT_PROPERTIES)
    )
}

fn remediation(ctx: &Context<'_>, m: &DeviceMeeting<'_>) -> String {
    let nodes = m.share.nodes();
    let source = nodes
        .iter()
        .next()
        .and_then(|n| ctx.gpu(*n))
        .map(common::config_source)
        .unwrap_or_else(|| "the device plugin config".to_string());
    let mut out = format!(
        "Remove the `replicas` of the MIG resource in {source} and give {} and {} an instance each: {}",
        ctx.tenant_name(m.a),
        ctx.tenant_name(m.b),
        super::mig_advice(ctx, &nodes)
    );
    if m.trust == Trust::None {
        out.push_str(&format!(
            "; as they do not trust each other at all, also separate their GPUs and nodes: {}",
            common::node_pool_advice(ctx.tenant_name(m.b))
        ));
    }
    out
}
