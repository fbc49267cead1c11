//! The blast radius: for each tenant and incident, how many other tenants it reaches and how sure that
//! is (who they are is in the groups, and pair by pair in the matrix).
//!
//! Read from the isolation model's [`Mechanism::reach`]: a co-location at some level (one MIG instance,
//! one GPU, one node, the cluster) carries an incident when the mechanism's reach for that incident is
//! at least that level. Host escapes reach the node and control-plane incidents the cluster under every
//! mechanism.
//!
//! Nothing here is quadratic in the tenants of one site: each site's members are judged class by
//! class ([`Site::classes`]), and tenants whose classes are the same in the same sites reach the
//! same tenants (themselves aside), so who they reach is counted once for all of them.

use crate::colocation::Site;
use crate::context::Context;
use gpu_trust_model::isolation::{Mechanism, Scope};
use gpu_trust_model::report::BlastRadiusEntry;
use gpu_trust_model::{Certainty, Incident};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

/// Whether a co-location at `level` under `mechanism` carries `incident`.
pub fn carries(mechanism: Mechanism, level: Scope, incident: Incident) -> bool {
    let reach = mechanism.reach(incident);
    reach != Scope::Nothing && level <= reach
}

/// The id of a site in the report's `groups`.
pub fn group_id(site: usize) -> String {
    format!("g{}", site + 1)
}

/// The classes of one site ([`Site::classes`]), computed once for every tenant: each member's
/// class, each class's tenants, and per class the classes whose members it meets (another member
/// than itself) with the strongest certainty of those meetings.
struct SiteClasses {
    of: BTreeMap<TenantId, usize>,
    tenants: Vec<Vec<TenantId>>,
    meets: Vec<(Vec<usize>, Option<Certainty>)>,
}

impl SiteClasses {
    fn of(ctx: &Context<'_>, site: &Site) -> SiteClasses {
        let classes = site.classes(ctx.fleet, |_| ());
        let mut of = BTreeMap::new();
        for (i, c) in classes.iter().enumerate() {
            for t in &c.tenants {
                of.insert(*t, i);
            }
        }
        let meets = classes
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut met = Vec::new();
                let mut strongest: Option<Certainty> = None;
                for (j, b) in classes.iter().enumerate() {
                    if a.pairs_with(b, i == j) == 0 {
                        continue;
                    }
                    if let Some((c, _)) = site.meet(ctx.fleet, a.rep, b.rep) {
                        met.push(j);
                        strongest = Some(strongest.map_or(c, |x| x.min(c)));
                    }
                }
                (met, strongest)
            })
            .collect();
        SiteClasses {
            of,
            tenants: classes.into_iter().map(|c| c.tenants).collect(),
            meets,
        }
    }
}

/// What one tenant reaches through some sites: the sites with its class in each (tenants of one
/// key reach the same tenants, themselves aside), the strongest certainty, and whether it is one of
/// the tenants reached (its own class meets itself somewhere).
struct Reached {
    key: Vec<(usize, usize)>,
    strongest: Option<Certainty>,
    counts_itself: bool,
}

pub(crate) fn blast_radius(ctx: &Context<'_>) -> Vec<BlastRadiusEntry> {
    #[cfg(test)]
    if crate::colocation::tests::pairwise() {
        return pair_by_pair(ctx);
    }
    let tenants: Vec<TenantId> = ctx.blast_tenants().iter().copied().collect();
    let slots = ctx.tenancy.tenants().len();
    let sites: Vec<usize> = (0..ctx.colo().sites.len()).collect();
    let classes: Vec<Option<SiteClasses>> =
        crate::parallel::each(&sites, |i| ctx.site(*i).map(|s| SiteClasses::of(ctx, s)));
    // Per tenant, what each incident reaches (incidents carried by the same sites share it).
    let mut reached: Vec<Reached> = Vec::new();
    let per_tenant: Vec<Vec<(Incident, usize)>> = tenants
        .iter()
        .map(|t| {
            let mut counted: Vec<(Vec<usize>, usize)> = Vec::new();
            carrying(ctx, *t)
                .into_iter()
                .map(|(incident, sites)| {
                    let i = match counted.iter().find(|(c, _)| *c == sites) {
                        Some((_, i)) => *i,
                        None => {
                            reached.push(reach_of(&classes, *t, &sites));
                            counted.push((sites, reached.len() - 1));
                            reached.len() - 1
                        }
                    };
                    (incident, i)
                })
                .collect()
        })
        .collect();
    // The tenants each key reaches, counted once per key: tenants of one key share the count.
    let keys: Vec<&Vec<(usize, usize)>> = reached
        .iter()
        .map(|r| &r.key)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let chunks: Vec<&[&Vec<(usize, usize)>]> = keys.chunks(32).collect();
    let counted: BTreeMap<&Vec<(usize, usize)>, usize> = crate::parallel::each(&chunks, |chunk| {
        let mut seen: Vec<bool> = vec![false; slots];
        chunk
            .iter()
            .map(|k| (*k, union_size(&classes, k, &mut seen)))
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    let mut out = Vec::new();
    for (t, incidents) in tenants.iter().zip(&per_tenant) {
        for (incident, i) in incidents {
            let Some(r) = reached.get(*i) else { continue };
            let all = counted.get(&r.key).copied().unwrap_or(0);
            let reaches = all - usize::from(r.counts_itself && all > 0);
            let Some(certainty) = r.strongest.filter(|_| reaches > 0) else {
                continue;
            };
            out.push(BlastRadiusEntry {
                tenant: ctx.tenant_name(*t).to_string(),
                incident: *incident,
                reaches,
                certainty,
            });
        }
    }
    out.sort_by(|x, y| (&x.tenant, x.incident).cmp(&(&y.tenant, y.incident)));
    out
}

/// Per incident, the sites of the tenant that carry it.
fn carrying(ctx: &Context<'_>, t: TenantId) -> Vec<(Incident, Vec<usize>)> {
    let sites = ctx.colo().sites_of.get(&t).map_or(&[][..], Vec::as_slice);
    Incident::ALL
        .into_iter()
        .map(|incident| {
            let on: Vec<usize> = sites
                .iter()
                .copied()
                .filter(|i| {
                    ctx.site(*i).is_some_and(|s| {
                        let (m, level) = s.level.reach();
                        carries(m, level, incident)
                    })
                })
                .collect();
            (incident, on)
        })
        .collect()
}

/// What `t` reaches through `sites` (site indices), class by class.
fn reach_of(classes: &[Option<SiteClasses>], t: TenantId, sites: &[usize]) -> Reached {
    let mut key = Vec::with_capacity(sites.len());
    let mut strongest: Option<Certainty> = None;
    let mut counts_itself = false;
    for i in sites {
        let Some(sc) = classes.get(*i).and_then(Option::as_ref) else {
            continue;
        };
        let Some(class) = sc.of.get(&t).copied() else {
            continue;
        };
        let (met, c) = &sc.meets[class];
        if met.is_empty() {
            continue;
        }
        key.push((*i, class));
        counts_itself |= met.contains(&class);
        if let Some(c) = c {
            strongest = Some(strongest.map_or(*c, |x| x.min(*c)));
        }
    }
    Reached {
        key,
        strongest,
        counts_itself,
    }
}

/// How many tenants the classes of `key` meet, all sites together. `seen` (all false, one slot per
/// tenant) is left all false.
fn union_size(classes: &[Option<SiteClasses>], key: &[(usize, usize)], seen: &mut [bool]) -> usize {
    let mut touched: Vec<TenantId> = Vec::new();
    for (i, class) in key {
        let Some(sc) = classes.get(*i).and_then(Option::as_ref) else {
            continue;
        };
        for other in &sc.meets[*class].0 {
            for o in &sc.tenants[*other] {
                if let Some(slot) = seen.get_mut(o.index()) {
                    if !*slot {
                        *slot = true;
                        touched.push(*o);
                    }
                }
            }
        }
    }
    for o in &touched {
        seen[o.index()] = false;
    }
    touched.len()
}

/// [`blast_radius`] judging every pair on its own (the reference the tests compare it with).
#[cfg(test)]
fn pair_by_pair(ctx: &Context<'_>) -> Vec<BlastRadiusEntry> {
    let mut out = Vec::new();
    for t in ctx.blast_tenants() {
        for (incident, sites) in carrying(ctx, *t) {
            let mut met: BTreeSet<TenantId> = BTreeSet::new();
            let mut strongest: Option<Certainty> = None;
            for site in sites.iter().filter_map(|i| ctx.site(*i)) {
                let Some(me) = site.members.get(t) else {
                    continue;
                };
                for (other, them) in &site.members {
                    if other == t {
                        continue;
                    }
                    if let Some((c, _)) = site.meet(ctx.fleet, me, them) {
                        met.insert(*other);
                        strongest = Some(strongest.map_or(c, |x| x.min(c)));
                    }
                }
            }
            if let (false, Some(certainty)) = (met.is_empty(), strongest) {
                out.push(BlastRadiusEntry {
                    tenant: ctx.tenant_name(*t).to_string(),
                    incident,
                    reaches: met.len(),
                    certainty,
                });
            }
        }
    }
    out.sort_by(|x, y| (&x.tenant, x.incident).cmp(&(&y.tenant, y.incident)));
    out
}
