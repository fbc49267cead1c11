use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::fleet::ACCEPT_ANNOTATION_PREFIX;
use gpu_trust_model::{Certainty, Layer, ObjectRef, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// An acceptance that gives no reason: an `accept:` entry of the tenancy policy without a
    /// `reason` (or with a blank one), or an `accept.gpu-trust.io/<RULE>` annotation on a workload or
    /// Namespace whose value is blank, or that only has its `.until` annotation.
    ///
    /// ## Why it matters
    ///
    /// An acceptance records that someone knowingly took a risk. Without a reason nobody can later
    /// tell whether it still holds, so gpu-trust does not apply it: the findings it meant to accept
    /// stay open, and this finding says why.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata:
    ///   name: nccl-tests
    ///   namespace: ml-research
    ///   annotations:
    ///     accept.gpu-trust.io/GT204: ""              # no reason
    ///     accept.gpu-trust.io/GT202.until: "2027-01-31"   # an end, but no reason
    /// ```
    ///
    /// ## Remediation
    ///
    /// Write why the risk is accepted (`accept.gpu-trust.io/GT204: "RDMA benchmark, host network
    /// needed for NCCL"`, or `reason:` in the policy entry), or remove the acceptance.
    ///
    /// ## References
    ///
    /// - gpu-trust suppressions (docs/suppressions.md): an acceptance needs a rule and a reason.
    /// - kube-linter, checkov and Polaris let a manifest's owner skip a check on the object itself;
    ///   checkov's `checkov.io/skip1: CKV_...=reason` carries the reason in the value, as these do.
    pub struct AcceptanceWithoutReason {
        code: "GT004",
        name: "acceptance-without-reason",
        layer: Layer::Contract,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a policy acceptance or an annotated acceptance gives no reason, so it accepts nothing",
        reports: [Reports::AcceptanceWithoutReason],
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for a in ctx.tenancy.acceptances().iter().filter(|a| !a.has_reason()) {
        let names: Vec<String> = a.tenants.iter().flatten().cloned().collect();
        let ids = names.iter().filter_map(|n| ctx.tenancy.tenant_by_name(n));
        let draft = sink
            .draft(Severity::Medium, Certainty::Observed)
            .key(format!(
                "acceptance/{}/{}/{}:{}",
                a.rule,
                names.join(","),
                a.location.file,
                a.location.line
            ))
            .tenants(ids)
            .object(ObjectRef {
                kind: "Acceptance".to_string(),
                namespace: None,
                name: a.rule.clone(),
                location: a.location.clone(),
            })
            .message(format!(
                "the policy acceptance of {} at {}:{} gives no reason: it accepts nothing",
                a.rule, a.location.file, a.location.line
            ))
            .remediation(format!(
                "Say in its `reason` why the findings of {} are accepted, or remove the entry",
                a.rule
            ));
        sink.push(draft);
    }
    for a in ctx.fleet.acceptances.iter().filter(|a| a.reason.is_none()) {
        let draft = super::annotated_acceptance_draft(ctx, sink, a)
            .message(format!(
                "the acceptance of {} annotated on {} (`{}`) gives no reason: it accepts nothing",
                a.rule, a.object, a.annotation
            ))
            .remediation(format!(
                "Write why the findings of {} are accepted as the value of `{ACCEPT_ANNOTATION_PREFIX}{}`, or remove the annotations",
                a.rule, a.rule
            ));
        sink.push(draft);
    }
}
