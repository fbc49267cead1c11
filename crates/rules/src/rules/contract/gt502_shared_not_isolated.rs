use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Mechanism, Scope};
use gpu_trust_model::{Certainty, Incident, Layer, Severity};
use gpu_trust_policy::{Contract, TenantId};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant whose contract is `proportional-compute` (the default) that shares GPUs or nodes with
    /// other tenants. The finding is a statement, per tenant, of exactly which interference it accepts:
    /// which incidents of which neighbours reach it, under which mechanism.
    ///
    /// ## Why it matters
    ///
    /// Proportional compute is an honest contract only when both sides know what it includes. "A
    /// quarter of a GPU" on a time-sliced node includes a neighbour's out-of-memory and faults; on MIG
    /// it does not. Writing it down turns surprise outages into terms.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// tenants:
    ///   - {name: notebooks, namespaces: [nb-*]}     # contract defaults to proportional-compute
    /// # notebooks share time-sliced GPUs with research
    /// ```
    ///
    /// ## Remediation
    ///
    /// Nothing to fix; put the statement in the tenant's terms. If an incident listed is not acceptable,
    /// move the tenant to a mechanism that contains it (MIG for memory and faults) or change its contract
    /// to `isolation`.
    ///
    /// ## References
    ///
    /// - gpu-trust tenancy policy: `contract`.
    /// - gpu-trust isolation model: incidents and the scope each reaches per mechanism.
    pub struct SharedNotIsolated {
        code: "GT502",
        name: "shared-not-isolated",
        layer: Layer::Contract,
        severity: SeverityRule::Fixed(Severity::Info),
        summary: "a tenant whose contract is proportional-compute shares GPUs or nodes: which interference it accepts",
    }
}

/// What one tenant accepts from one neighbour.
#[derive(Default)]
struct Accepts {
    incidents: BTreeSet<Incident>,
    mechanisms: BTreeSet<Mechanism>,
    certainty: Option<Certainty>,
    nodes: BTreeSet<usize>,
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let mut per_tenant: BTreeMap<TenantId, BTreeMap<TenantId, Accepts>> = BTreeMap::new();
    for ((a, b), pair) in &ctx.colo.pairs {
        for (me, other) in [(*a, *b), (*b, *a)] {
            if ctx.tenancy.tenant(me).contract != Contract::ProportionalCompute {
                continue;
            }
            let e = per_tenant.entry(me).or_default().entry(other).or_default();
            let mut record = |m: Mechanism, level: Scope, share: &crate::colocation::Share| {
                if share.is_empty() {
                    return;
                }
                for i in Incident::ALL {
                    let reach = m.reach(i);
                    if reach != Scope::Nothing && reach != Scope::Cluster && level <= reach {
                        e.incidents.insert(i);
                    }
                }
                if level < Scope::Node {
                    e.mechanisms.insert(m);
                }
                let c = share.certainty();
                e.certainty = Some(e.certainty.map_or(c, |x| x.min(c)));
                e.nodes.extend(share.nodes());
            };
            for (m, share) in &pair.device {
                let level = if m.is_mig() {
                    Scope::Instance
                } else {
                    Scope::Gpu
                };
                record(*m, level, share);
            }
            record(Mechanism::MigInstance, Scope::Gpu, &pair.mig_gpu);
            record(Mechanism::Exclusive, Scope::Node, &pair.node);
        }
    }
    for (tenant, neighbours) in per_tenant {
        let neighbours: BTreeMap<TenantId, Accepts> = neighbours
            .into_iter()
            .filter(|(_, a)| a.certainty.is_some())
            .collect();
        if neighbours.is_empty() {
            continue;
        }
        let certainty = neighbours
            .values()
            .filter_map(|a| a.certainty)
            .min()
            .unwrap_or(Certainty::Permitted);
        let statements: Vec<String> = neighbours
            .iter()
            .map(|(other, a)| {
                let incidents: Vec<&str> = a.incidents.iter().map(|i| i.as_str()).collect();
                let how = if a.mechanisms.is_empty() {
                    "the node".to_string()
                } else {
                    let m: Vec<&str> = a.mechanisms.iter().map(|m| m.title()).collect();
                    format!("GPUs by {} and the node", text::list(&m))
                };
                format!(
                    "from {} ({how}): {}",
                    ctx.tenant_name(*other),
                    text::list(&incidents)
                )
            })
            .collect();
        let nodes: BTreeSet<usize> = neighbours
            .values()
            .flat_map(|a| a.nodes.iter().copied())
            .collect();
        let mut draft = sink
            .draft(Severity::Info, certainty)
            .tenants([tenant])
            .nodes(nodes.iter().copied())
            .message(format!(
                "tenant {} (contract proportional-compute) shares with other tenants and so accepts these incidents {}",
                ctx.tenant_name(tenant),
                statements.join("; ")
            ))
            .remediation(format!(
                "Nothing to fix: state this interference in {}'s terms; if an incident listed is not acceptable, move it to a mechanism that contains it (MIG for memory and faults, own nodes for host escapes) or change its contract to isolation",
                ctx.tenant_name(tenant)
            ));
        // The statement is about the tenant: it points at the tenant's namespaces.
        for ns in &ctx.tenancy.tenant(tenant).namespaces {
            if let Some(o) = ctx.namespace(ns).and_then(|n| n.object.clone()) {
                draft = draft.object(o);
            }
        }
        sink.push(draft);
    }
}
