use super::super::common::{self, Grouping, PairRule, Tally, Wording};
use super::super::wording;
use crate::colocation::Level;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{Layer, Severity};
use gpu_trust_policy::{Contract, TenantId};
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

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`):
// per node group, the devices that share memory, faults or compute (any trust), and the node shared
// with a tenant of trust none, for pairs with a tenant promised isolation.
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let promised: BTreeSet<TenantId> = ctx
        .tenancy
        .ids()
        .filter(|t| ctx.tenancy.tenant(*t).contract == Contract::Isolation)
        .collect();
    if promised.is_empty() {
        return;
    }
    let rule = PairRule {
        grouping: Grouping::ByGroup("contract"),
        involving: Some(&promised),
        except: None,
    };
    common::declared(ctx, sink, rule, |_, tally| message(ctx, &promised, tally));
}

fn message(ctx: &Context<'_>, promised: &BTreeSet<TenantId>, tally: &Tally) -> Wording {
    let mut breaks = Vec::new();
    let mut node_sites = BTreeSet::new();
    let mut mechanisms = BTreeSet::new();
    for site in tally.sites.iter().filter_map(|i| ctx.site(*i)) {
        match site.level {
            Level::Device(m) => {
                mechanisms.insert(m);
            }
            Level::Node => node_sites.extend(site.nodes.iter().copied()),
            _ => {}
        }
    }
    for m in &mechanisms {
        breaks.push(text::enforcement(*m, &text::INCIDENT_PROPERTIES));
    }
    if !node_sites.is_empty() {
        let nodes: BTreeSet<_> = if mechanisms.is_empty() {
            tally.nodes.clone()
        } else {
            node_sites
        };
        breaks.push(format!(
            "a node shared with a tenant of trust none ({})",
            text::nodes(ctx, nodes)
        ));
    }
    let held: Vec<TenantId> = tally
        .tenants
        .iter()
        .copied()
        .filter(|t| promised.contains(t))
        .collect();
    let names: Vec<&str> = held.iter().map(|t| ctx.tenant_name(*t)).collect();
    let one = names.len() == 1;
    // Per place: the promised tenants there, whom they share with, where and how surely.
    let clause = |share: &common::Share| {
        let here: Vec<TenantId> = share
            .tenants
            .iter()
            .copied()
            .filter(|t| promised.contains(t))
            .collect();
        let others: Vec<TenantId> = share
            .tenants
            .iter()
            .copied()
            .filter(|t| !promised.contains(t))
            .collect();
        let with = if others.is_empty() {
            "each other".to_string()
        } else {
            text::tenants(ctx, others.iter().copied())
        };
        let verb = if here.len() == 1 {
            wording::verb_singular(share.certainty)
        } else {
            wording::verb(share.certainty)
        };
        (here, verb, with)
    };
    let place = match tally.shares.as_slice() {
        [share] => {
            let (_, verb, with) = clause(share);
            format!(
                "{} {verb} with {with} on {}",
                if one { "it" } else { "they" },
                text::nodes(ctx, share.nodes.iter().copied()),
            )
        }
        shares => {
            let parts: Vec<String> = shares
                .iter()
                .take(4)
                .map(|share| {
                    let (here, verb, with) = clause(share);
                    format!(
                        "{} {verb} with {with} on {} ({}; {})",
                        text::tenants(ctx, here.iter().copied()),
                        text::nodes(ctx, share.nodes.iter().copied()),
                        wording::who(ctx, &share.workloads, &share.tenants),
                        share.reason
                    )
                })
                .collect();
            let more = if shares.len() > 4 {
                format!(
                    "; and {} more (the finding's groups)",
                    text::plural((shares.len() - 4) as u64, "place")
                )
            } else {
                String::new()
            };
            format!(
                "{} share with other tenants in {} places: {}{more}",
                if one { "it" } else { "they" },
                text::count(shares.len() as u64),
                parts.join("; ")
            )
        }
    };
    let message = format!(
        "{} {} promised isolation, but {place}: {}",
        text::list(&names),
        if one { "was" } else { "were" },
        breaks.join("; ")
    );
    let remediation = format!(
        "Give {} what the contract says: MIG instances or whole GPUs of its own, on nodes not shared with distrusted tenants (a dedicated, tainted node pool); or change its contract to proportional-compute and state the interference it accepts",
        text::list(&names)
    );
    Wording {
        message,
        remediation,
    }
}
