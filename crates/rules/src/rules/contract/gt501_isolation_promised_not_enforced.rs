use super::super::common;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{Certainty, Layer, Severity, Trust};
use gpu_trust_policy::Contract;
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant whose contract is `isolation` shares a memory pool, a fault domain or compute with another
    /// tenant under the isolation model (time-slicing, MPS, one MIG instance, a fraction), whatever their
    /// trust; or shares a node with a tenant of trust `none`.
    ///
    /// ## Why it matters
    ///
    /// The hosting terms promised isolation, and the silicon does not give it: the tenant's memory can be
    /// taken, its kernels stopped by another's fault, its latency set by a neighbour. Trust settings do
    /// not change what was sold; this is the gap between the contract and the configuration.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// tenants:
    ///   - name: acme
    ///     namespaces: [cust-acme]
    ///     contract: isolation
    /// # acme's pods request nvidia.com/gpu on a time-sliced node shared with another tenant
    /// ```
    ///
    /// ## Remediation
    ///
    /// Give the tenant what the contract says: its own MIG instances or whole GPUs, on nodes it does not
    /// share with distrusted tenants; or change the contract to `proportional-compute` and state the
    /// interference it accepts (GT502).
    ///
    /// ## References
    ///
    /// - gpu-trust tenancy policy: `contract: isolation | proportional-compute`.
    /// - gpu-trust isolation model (`gpu-trust mechanisms`): which mechanisms share memory, faults and
    ///   compute.
    pub struct IsolationPromisedNotEnforced {
        code: "GT501",
        name: "isolation-promised-not-enforced",
        layer: Layer::Contract,
        severity: SeverityRule::Fixed(Severity::Critical),
        summary: "a tenant promised isolation shares a memory pool, fault domain or compute with another tenant, or a node with a distrusted tenant",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for ((a, b), pair) in &ctx.colo.pairs {
        let (a, b) = (*a, *b);
        let promised: Vec<_> = [a, b]
            .into_iter()
            .filter(|t| ctx.tenancy.tenant(*t).contract == Contract::Isolation)
            .collect();
        if promised.is_empty() {
            continue;
        }
        let mut breaks = Vec::new();
        let mut certainty = Certainty::Permitted;
        let mut nodes = BTreeSet::new();
        let mut workloads = BTreeSet::new();
        let mut mechanisms = BTreeSet::new();
        for (m, share) in &pair.device {
            if !m.shares_device() || share.is_empty() {
                continue;
            }
            breaks.push(text::enforcement(*m, &text::INCIDENT_PROPERTIES));
            certainty = certainty.min(share.certainty());
            nodes.extend(share.nodes());
            workloads.extend(share.workloads());
            mechanisms.insert(*m);
        }
        if ctx.trust(a, b) == Trust::None && !pair.node.is_empty() {
            breaks.push(format!(
                "a node shared with a tenant of trust none ({})",
                text::nodes(ctx, pair.node.nodes())
            ));
            certainty = certainty.min(pair.node.certainty());
            nodes.extend(pair.node.nodes());
            workloads.extend(pair.node.workloads());
        }
        if breaks.is_empty() {
            continue;
        }
        let names: Vec<&str> = promised.iter().map(|t| ctx.tenant_name(*t)).collect();
        let other = if promised.len() == 2 {
            None
        } else {
            [a, b].into_iter().find(|t| *t != promised[0])
        };
        let draft = sink
            .draft(Severity::Critical, certainty)
            .tenants([a, b])
            .nodes(nodes.iter().copied())
            .workloads(workloads.iter().copied())
            .mechanisms_from(mechanisms)
            .message(format!(
                "{} {} promised isolation, but {} {} with {} on {} ({}): {}",
                text::list(&names),
                if names.len() == 1 { "was" } else { "were" },
                if names.len() == 1 { "it" } else { "they" },
                if names.len() == 1 { common::verb_singular(certainty) } else { common::verb(certainty) },
                match other {
                    Some(o) => ctx.tenant_name(o).to_string(),
                    None => "each other".to_string(),
                },
                text::nodes(ctx, nodes.iter().copied()),
                common::who(ctx, &workloads, &[a, b]),
                breaks.join("; ")
            ))
            .remediation(format!(
                "Give {} what the contract says: MIG instances or whole GPUs of its own, on nodes not shared with distrusted tenants (a dedicated, tainted node pool); or change its contract to proportional-compute and state the interference it accepts",
                text::list(&names)
            ));
        sink.push(draft);
    }
}
