//! What several rules share: walking the tenant pairs of the co-location analysis, and the phrases
//! for certainty and trust.

use crate::colocation::Share;
use crate::context::Context;
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::{ConfigSource, GpuNode, WorkloadId};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, Trust};
use gpu_trust_policy::TenantId;
use std::collections::BTreeSet;

/// "share" / "may share" / "may be placed to share", by certainty.
pub fn verb(certainty: Certainty) -> &'static str {
    match certainty {
        Certainty::Observed => "share",
        Certainty::Possible => "may share",
        Certainty::Permitted => "are permitted to share",
    }
}

/// The same verb for one subject: "shares" / "may share" / "is permitted to share".
pub fn verb_singular(certainty: Certainty) -> &'static str {
    match certainty {
        Certainty::Observed => "shares",
        Certainty::Possible => "may share",
        Certainty::Permitted => "is permitted to share",
    }
}

/// Why the audit is as sure of a share as it is.
pub fn why(share: &Share) -> &'static str {
    share.reason()
}

/// `acme and globex (trust none)`.
pub fn pair_phrase(ctx: &Context<'_>, a: TenantId, b: TenantId) -> String {
    format!(
        "{} and {} (trust {})",
        ctx.tenant_name(a),
        ctx.tenant_name(b),
        ctx.trust(a, b)
    )
}

/// `acme: cust-acme/infer-0; globex: cust-globex/train-1`.
pub fn who(ctx: &Context<'_>, workloads: &BTreeSet<WorkloadId>, tenants: &[TenantId]) -> String {
    tenants
        .iter()
        .map(|t| {
            let ws = workloads
                .iter()
                .copied()
                .filter(|w| ctx.tenant(*w) == Some(*t));
            format!("{}: {}", ctx.tenant_name(*t), text::workloads(ctx, ws))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A device share between two tenants under one mechanism.
pub struct DeviceMeeting<'c> {
    pub a: TenantId,
    pub b: TenantId,
    pub trust: Trust,
    pub mechanism: Mechanism,
    pub share: &'c Share,
}

/// Every device share of two different tenants whose mechanism passes `filter`.
pub fn device_meetings<'c>(
    ctx: &'c Context<'_>,
    filter: impl Fn(Mechanism) -> bool,
) -> Vec<DeviceMeeting<'c>> {
    let mut out = Vec::new();
    for ((a, b), pair) in &ctx.colo.pairs {
        for (m, share) in &pair.device {
            if filter(*m) && !share.is_empty() {
                out.push(DeviceMeeting {
                    a: *a,
                    b: *b,
                    trust: ctx.trust(*a, *b),
                    mechanism: *m,
                    share,
                });
            }
        }
    }
    out
}

/// Pushes one finding per device meeting below full trust, with the severity the rule gives the
/// pair's trust, a message built by `message` and a remediation by `remediation`.
pub fn untrusted_device_findings(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    filter: impl Fn(Mechanism) -> bool,
    message: impl Fn(&DeviceMeeting<'_>, Certainty) -> String,
    remediation: impl Fn(&DeviceMeeting<'_>) -> String,
) {
    for m in device_meetings(ctx, filter) {
        let Some(severity) = sink.rule().severity.for_trust(m.trust) else {
            continue;
        };
        let certainty = m.share.certainty();
        let draft = sink
            .draft(severity, certainty)
            .tenants([m.a, m.b])
            .nodes(m.share.nodes())
            .workloads(m.share.workloads())
            .mechanism(m.mechanism)
            .message(message(&m, certainty))
            .remediation(remediation(&m));
        sink.push(draft);
    }
}

/// The standard opening of a device-sharing message: who, where, how sure.
pub fn meeting_opening(
    ctx: &Context<'_>,
    m: &DeviceMeeting<'_>,
    certainty: Certainty,
    what: &str,
) -> String {
    let workloads = m.share.workloads();
    format!(
        "{} {} {what} on {} ({}; {})",
        pair_phrase(ctx, m.a, m.b),
        verb(certainty),
        text::nodes(ctx, m.share.nodes()),
        who(ctx, &workloads, &[m.a, m.b]),
        why(m.share)
    )
}

/// Where a node's sharing configuration comes from, for remediations.
pub fn config_source(node: &GpuNode) -> String {
    match &node.sharing.source {
        ConfigSource::ConfigMap {
            namespace,
            name,
            key,
            ..
        } => format!("key `{key}` of ConfigMap {namespace}/{name}"),
        ConfigSource::NodeLabels => {
            "the device plugin config behind the node's `nvidia.com/device-plugin.config` label"
                .to_string()
        }
        ConfigSource::Default | ConfigSource::Unknown => {
            "the device plugin config (ClusterPolicy `spec.devicePlugin.config`)".to_string()
        }
    }
}

/// A taint and toleration that keep other tenants off a tenant's node pool.
pub fn node_pool_advice(tenant: &str) -> String {
    format!(
        "taint the pool's nodes (`kubectl taint nodes NODE gpu-trust/tenant={tenant}:NoSchedule`) and give {tenant}'s workloads the matching toleration and a nodeSelector for the pool"
    )
}
