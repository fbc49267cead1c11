use crate::colocation::{Class, Grouped, Level, Site};
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

/// Neighbours of a tenant that bring it the same incidents through the same mechanisms, as surely:
/// one statement.
#[derive(Debug, PartialEq, Eq)]
struct Statement {
    accepts: Accepts,
    certainty: Certainty,
    /// The neighbour of the lowest id (the statements are ordered by its name).
    first: TenantId,
    /// The first names, sorted (at most one more than a list shows), and how many neighbours.
    names: Vec<String>,
    count: usize,
}

/// What one tenant accepts: its statements, the nodes where it meets its neighbours, and the
/// strongest certainty.
type Accepted = (Vec<Statement>, BTreeSet<NodeId>, Certainty);

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let neighbours = Neighbours::new(ctx);
    for tenant in ctx.colo().sites_of.keys() {
        // A tenant's contract is its own: a focused audit judges its tenants' only.
        if ctx.tenancy.tenant(*tenant).contract != Contract::ProportionalCompute
            || !ctx.in_focus(*tenant)
        {
            continue;
        }
        #[cfg(test)]
        let accepted = if crate::colocation::tests::pairwise() {
            pair_by_pair(ctx, *tenant)
        } else {
            neighbours.of(ctx, *tenant)
        };
        #[cfg(not(test))]
        let accepted = neighbours.of(ctx, *tenant);
        let Some((statements, nodes, best)) = accepted else {
            continue;
        };
        // With neighbours met with different certainties, each statement says its own.
        let mixed = statements
            .iter()
            .map(|s| s.certainty)
            .collect::<BTreeSet<_>>()
            .len()
            > 1;
        let mut lines: Vec<(TenantId, String)> = statements
            .into_iter()
            .map(|s| {
                let a = s.accepts;
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
                    how.push_str(&format!(", {}", s.certainty));
                }
                let names: Vec<&str> = s.names.iter().map(String::as_str).collect();
                (
                    s.first,
                    format!(
                        "from {} ({how}): {}",
                        text::list_of(&names, s.count),
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

/// What a co-location at a site carries to a tenant: the incidents (those of the cluster aside)
/// and, below the node, the mechanism.
fn carried(site: &Site) -> Accepts {
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
    here
}

/// The sites below the control plane in classes ([`Site::classes`]), and the tenants grouped by
/// their class in each of their sites: a tenant meets every tenant of a group alike, so what it
/// accepts is judged group by group, never neighbour by neighbour.
struct Neighbours<'c> {
    /// Per site (by index; `None` for the control plane): its classes.
    classes: Vec<Option<Vec<Class<'c>>>>,
    /// The tenants by their classes in the sites.
    grouped: Grouped,
    /// Per group, its tenants' names, sorted.
    names: Vec<Vec<&'c str>>,
}

impl<'c> Neighbours<'c> {
    fn new(ctx: &Context<'c>) -> Neighbours<'c> {
        let colo = ctx.colo();
        let classes: Vec<Option<Vec<Class<'c>>>> = colo
            .sites
            .iter()
            .map(|s| (s.level != Level::ControlPlane).then(|| s.classes(ctx.fleet, |_| ())))
            .collect();
        let grouped = Grouped::new(
            classes
                .iter()
                .map(|cs| cs.iter().flatten().map(|c| c.tenants.as_slice())),
        );
        let names = grouped
            .groups
            .iter()
            .map(|(_, tenants)| {
                let mut names: Vec<&'c str> = tenants.iter().map(|t| ctx.tenant_name(*t)).collect();
                names.sort_unstable();
                names
            })
            .collect();
        Neighbours {
            classes,
            grouped,
            names,
        }
    }

    /// What `tenant` accepts from its neighbours; `None` when it meets none.
    fn of(&self, ctx: &Context<'_>, tenant: TenantId) -> Option<Accepted> {
        let g = *self.grouped.of.get(&tenant)?;
        let mine = &self.grouped.groups[g].0;
        let mut met_sites: BTreeSet<usize> = BTreeSet::new();
        let mut statements: BTreeMap<(Accepts, Certainty), Vec<usize>> = BTreeMap::new();
        for h in self.grouped.neighbours(g) {
            let (theirs, tenants) = &self.grouped.groups[h];
            if tenants.len() <= usize::from(h == g) {
                continue;
            }
            let mut accepts = Accepts::default();
            let mut certainty: Option<Certainty> = None;
            for (i, cm, ch) in common(mine, theirs) {
                let (Some(site), Some(Some(classes))) = (ctx.site(i), self.classes.get(i)) else {
                    continue;
                };
                let Some((c, _)) = site.meet(ctx.fleet, classes[cm].rep, classes[ch].rep) else {
                    continue;
                };
                met_sites.insert(i);
                let here = carried(site);
                accepts.incidents |= here.incidents;
                accepts.mechanisms |= here.mechanisms;
                certainty = Some(certainty.map_or(c, |x| x.min(c)));
            }
            if let Some(c) = certainty {
                statements.entry((accepts, c)).or_default().push(h);
            }
        }
        if statements.is_empty() {
            return None;
        }
        let mut nodes = BTreeSet::new();
        for i in &met_sites {
            if let Some(site) = ctx.site(*i) {
                nodes.extend(site.nodes.iter().copied());
            }
        }
        let me = ctx.tenant_name(tenant);
        let best = statements
            .keys()
            .map(|(_, c)| *c)
            .min()
            .unwrap_or(Certainty::Permitted);
        let statements = statements
            .into_iter()
            .filter_map(|((accepts, certainty), hs)| {
                // Each group's tenants are sorted by id: its first other than `tenant` is among
                // its first two.
                let first = hs
                    .iter()
                    .filter_map(|h| {
                        self.grouped.groups[*h]
                            .1
                            .iter()
                            .take(2)
                            .find(|t| **t != tenant)
                    })
                    .min()
                    .copied()?;
                let count = hs
                    .iter()
                    .map(|h| self.grouped.groups[*h].1.len() - usize::from(*h == g))
                    .sum();
                let mut names: Vec<&str> = hs
                    .iter()
                    .flat_map(|h| {
                        self.names[*h]
                            .iter()
                            .filter(|n| **n != me)
                            .take(text::MAX_NAMES + 1)
                    })
                    .copied()
                    .collect();
                names.sort_unstable();
                names.truncate(text::MAX_NAMES + 1);
                Some(Statement {
                    accepts,
                    certainty,
                    first,
                    names: names.into_iter().map(str::to_string).collect(),
                    count,
                })
            })
            .collect();
        Some((statements, nodes, best))
    }
}

/// The sites two groups share, each with the class of either there (both lists in site order).
fn common<'k>(
    a: &'k [(usize, usize)],
    b: &'k [(usize, usize)],
) -> impl Iterator<Item = (usize, usize, usize)> + 'k {
    let mut j = 0;
    a.iter().filter_map(move |(i, ca)| {
        while b.get(j).is_some_and(|(k, _)| k < i) {
            j += 1;
        }
        match b.get(j) {
            Some((k, cb)) if k == i => Some((*i, *ca, *cb)),
            _ => None,
        }
    })
}

/// What `tenant` accepts, judged neighbour by neighbour (the reference the tests compare
/// [`Neighbours::of`] with).
#[cfg(test)]
fn pair_by_pair(ctx: &Context<'_>, tenant: TenantId) -> Option<Accepted> {
    let mut accepts: BTreeMap<TenantId, (Accepts, Certainty)> = BTreeMap::new();
    let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
    for site in ctx
        .colo()
        .sites_of
        .get(&tenant)?
        .iter()
        .filter_map(|i| ctx.site(*i))
    {
        if site.level == Level::ControlPlane {
            continue;
        }
        let Some(me) = site.members.get(&tenant) else {
            continue;
        };
        let here = carried(site);
        let mut met = false;
        for (other, them) in &site.members {
            if *other == tenant {
                continue;
            }
            let Some((c, _)) = site.meet(ctx.fleet, me, them) else {
                continue;
            };
            met = true;
            let e = accepts.entry(*other).or_insert((Accepts::default(), c));
            e.0.incidents |= here.incidents;
            e.0.mechanisms |= here.mechanisms;
            e.1 = e.1.min(c);
        }
        if met {
            nodes.extend(site.nodes.iter().copied());
        }
    }
    let mut by: BTreeMap<(Accepts, Certainty), Vec<TenantId>> = BTreeMap::new();
    for (other, key) in accepts {
        by.entry(key).or_default().push(other);
    }
    let best = by.keys().map(|(_, c)| *c).min()?;
    let statements = by
        .into_iter()
        .map(|((accepts, certainty), others)| {
            let mut names: Vec<&str> = others.iter().map(|t| ctx.tenant_name(*t)).collect();
            names.sort_unstable();
            names.truncate(text::MAX_NAMES + 1);
            Statement {
                accepts,
                certainty,
                first: others[0],
                names: names.into_iter().map(str::to_string).collect(),
                count: others.len(),
            }
        })
        .collect();
    Some((statements, nodes, best))
}

/// The bit of a mechanism in [`Accepts::mechanisms`].
fn mechanism_bit(m: Mechanism) -> usize {
    Mechanism::ALL.iter().position(|x| *x == m).unwrap_or(31)
}
