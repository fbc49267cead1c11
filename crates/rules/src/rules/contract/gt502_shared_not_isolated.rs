use crate::colocation::Level;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::NodeId;
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

/// What one tenant accepts from some neighbours: the incidents that reach it and the device
/// mechanisms they come through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Accepts {
    /// Bits of `Incident::ALL`.
    incidents: u8,
    /// Bits of the mechanisms (by their order in `Mechanism::ALL`).
    mechanisms: u32,
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let tenants = ctx.tenancy.tenants().len();
    // Per neighbour, reused for every tenant: what it accepts from it and how sure that is; `touched`
    // lists the neighbours set, so nothing here grows with the square of the tenants.
    let mut accepts: Vec<Accepts> = vec![Accepts::default(); tenants];
    let mut certainty: Vec<Option<Certainty>> = vec![None; tenants];
    for (tenant, sites) in &ctx.colo().sites_of {
        if ctx.tenancy.tenant(*tenant).contract != Contract::ProportionalCompute {
            continue;
        }
        let mut touched: Vec<TenantId> = Vec::new();
        let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
        for site in sites.iter().filter_map(|i| ctx.site(*i)) {
            if site.level == Level::ControlPlane {
                continue;
            }
            let Some(me) = site.members.get(tenant) else {
                continue;
            };
            let (m, level) = site.level.reach();
            let mut here = Accepts::default();
            for (i, incident) in Incident::ALL.into_iter().enumerate() {
                let reach = m.reach(incident);
                if reach != Scope::Nothing && reach != Scope::Cluster && level <= reach {
                    here.incidents |= 1 << i;
                }
            }
            if level < Scope::Node {
                here.mechanisms |= 1 << mechanism_bit(m);
            }
            let mut met = false;
            for (other, them) in &site.members {
                if other == tenant {
                    continue;
                }
                let Some((c, _)) = site.meet(ctx.fleet, me, them) else {
                    continue;
                };
                met = true;
                let o = other.index();
                if certainty[o].is_none() {
                    touched.push(*other);
                }
                certainty[o] = Some(certainty[o].map_or(c, |x| x.min(c)));
                accepts[o].incidents |= here.incidents;
                accepts[o].mechanisms |= here.mechanisms;
            }
            if met {
                nodes.extend(site.nodes.iter().copied());
            }
        }
        if touched.is_empty() {
            continue;
        }
        touched.sort_unstable();
        // Neighbours that bring the same incidents through the same mechanisms, as surely, share a
        // statement.
        let mut statements: BTreeMap<(Accepts, Certainty), Vec<TenantId>> = BTreeMap::new();
        let mut best = Certainty::Permitted;
        for other in &touched {
            let o = other.index();
            let c = certainty[o].unwrap_or(Certainty::Permitted);
            statements.entry((accepts[o], c)).or_default().push(*other);
            best = best.min(c);
            accepts[o] = Accepts::default();
            certainty[o] = None;
        }
        // With neighbours met with different certainties, each statement says its own.
        let mixed = statements
            .keys()
            .map(|(_, c)| *c)
            .collect::<BTreeSet<_>>()
            .len()
            > 1;
        let mut lines: Vec<(TenantId, String)> = statements
            .into_iter()
            .map(|((a, c), others)| {
                let incidents: Vec<&str> = Incident::ALL
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| a.incidents & (1 << i) != 0)
                    .map(|(_, i)| i.as_str())
                    .collect();
                let mechanisms: Vec<&str> = Mechanism::ALL
                    .iter()
                    .filter(|m| a.mechanisms & (1 << mechanism_bit(**m)) != 0)
                    .map(|m| m.title())
                    .collect();
                let mut how = if mechanisms.is_empty() {
                    "the node".to_string()
                } else {
                    format!("GPUs by {} and the node", text::list(&mechanisms))
                };
                if mixed {
                    how.push_str(&format!(", {c}"));
                }
                (
                    others[0],
                    format!(
                        "from {} ({how}): {}",
                        text::tenants(ctx, others.iter().copied()),
                        text::list(&incidents)
                    ),
                )
            })
            .collect();
        // In the order of the first neighbour of each statement, by name.
        lines.sort_by(|a, b| ctx.tenant_name(a.0).cmp(ctx.tenant_name(b.0)));
        let statements: Vec<String> = lines.into_iter().map(|(_, s)| s).collect();
        let mut draft = sink
            .draft(Severity::Info, best)
            .tenants([*tenant])
            .nodes(nodes.iter().copied())
            .key(format!("tenant/{}", ctx.tenant_name(*tenant)))
            .message(format!(
                "tenant {} (contract proportional-compute) shares with other tenants and so accepts these incidents {}",
                ctx.tenant_name(*tenant),
                statements.join("; ")
            ))
            .remediation(format!(
                "Nothing to fix: state this interference in {}'s terms; if an incident listed is not acceptable, move it to a mechanism that contains it (MIG for memory and faults, own nodes for host escapes) or change its contract to isolation",
                ctx.tenant_name(*tenant)
            ));
        // The statement is about the tenant: it points at the tenant's namespaces.
        for ns in &ctx.tenancy.tenant(*tenant).namespaces {
            if let Some(o) = ctx.namespace(ns).and_then(|n| n.object.clone()) {
                draft = draft.object(o);
            }
        }
        sink.push(draft);
    }
}

/// The bit of a mechanism in [`Accepts::mechanisms`].
fn mechanism_bit(m: Mechanism) -> usize {
    Mechanism::ALL.iter().position(|x| *x == m).unwrap_or(31)
}
