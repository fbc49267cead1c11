use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::fleet::{ACCEPT_ANNOTATION_PREFIX, ACCEPT_UNTIL_SUFFIX};
use gpu_trust_model::{Certainty, Layer, ObjectRef, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// An `accept:` entry of the tenancy policy, or an acceptance annotated on a workload or
    /// Namespace (`accept.gpu-trust.io/<RULE>` with `accept.gpu-trust.io/<RULE>.until`), whose
    /// `until` date has passed.
    ///
    /// ## Why it matters
    ///
    /// An acceptance records that someone knowingly took a risk, for a time. Once its date passes it no
    /// longer suppresses anything: the findings it covered count again towards `--fail-on`, and this
    /// finding says why they came back.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// accept:
    ///   - rule: GT401
    ///     tenants: [search, ads]
    ///     reason: "internal teams, one cluster by design"
    ///     until: 2025-06-30        # today is later
    /// ```
    ///
    /// ```yaml
    /// apiVersion: apps/v1
    /// kind: Deployment
    /// metadata:
    ///   name: mig-tuner
    ///   namespace: ml-ops
    ///   annotations:
    ///     accept.gpu-trust.io/GT202: "reconfigures MIG; replaced by the operator's MIG manager"
    ///     accept.gpu-trust.io/GT202.until: "2025-06-30"   # today is later
    /// ```
    ///
    /// ## Remediation
    ///
    /// Review the accepted risk: fix what the rule reports, or renew the acceptance (the policy entry
    /// or the annotation) with a new `until` and a reason that still holds.
    ///
    /// ## References
    ///
    /// - gpu-trust tenancy policy format: `accept` entries need `rule` and `reason`; an acceptance past
    ///   its date is void, and the tool says so.
    /// - gpu-trust suppressions (docs/suppressions.md): annotated acceptances expire the same way.
    pub struct ExpiredAcceptance {
        code: "GT003",
        name: "expired-acceptance",
        layer: Layer::Contract,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a policy acceptance's or an annotated acceptance's `until` date has passed",
        reports: [Reports::ExpiredAcceptance],
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for a in ctx.tenancy.expired_acceptances(ctx.today) {
        let until = a.until.map(|d| d.to_string()).unwrap_or_default();
        let names: Vec<String> = a.tenants.iter().flatten().cloned().collect();
        let scope = if names.is_empty() {
            "all tenants".to_string()
        } else {
            format!("tenants {}", crate::text::list(&names))
        };
        let ids = names.iter().filter_map(|n| ctx.tenancy.tenant_by_name(n));
        let draft = sink
            .draft(Severity::Medium, Certainty::Observed)
            .key(format!("acceptance/{}/{}", a.rule, names.join(",")))
            .tenants(ids)
            .object(ObjectRef {
                kind: "Acceptance".to_string(),
                namespace: None,
                name: a.rule.clone(),
                location: a.location.clone(),
            })
            .message(format!(
                "the acceptance of {} for {scope} (\"{}\") expired on {until}; it no longer suppresses those findings (today is {})",
                a.rule, a.reason, ctx.today
            ))
            .remediation(format!(
                "Fix what {} reports, or renew the acceptance in the policy with a new `until` date and a reason that still holds",
                a.rule
            ));
        sink.push(draft);
    }
    for a in ctx
        .fleet
        .acceptances
        .iter()
        .filter(|a| a.is_expired(ctx.today))
    {
        let until = a.until.map(|d| d.to_string()).unwrap_or_default();
        let reason = a.reason.as_deref().unwrap_or("no reason given");
        let draft = super::annotated_acceptance_draft(ctx, sink, a)
            .message(format!(
                "the acceptance of {} annotated on {} (`{}`, \"{reason}\") expired on {until}; it no longer suppresses those findings (today is {})",
                a.rule, a.object, a.annotation, ctx.today
            ))
            .remediation(format!(
                "Fix what {} reports, or renew the acceptance with a new `{}{}{}` date and a reason that still holds",
                a.rule, ACCEPT_ANNOTATION_PREFIX, a.rule, ACCEPT_UNTIL_SUFFIX
            ));
        sink.push(draft);
    }
}
