//! The blast radius: for each tenant and incident, how many other tenants it reaches and how sure that
//! is (who they are is in the groups, and pair by pair in the matrix).
//!
//! Read from the isolation model's [`Mechanism::reach`]: a co-location at some level (one MIG instance,
//! one GPU, one node, the cluster) carries an incident when the mechanism's reach for that incident is
//! at least that level. Host escapes reach the node and control-plane incidents the cluster under every
//! mechanism.
//!
//! Nothing here is quadratic in the tenants of one site: the largest site through which a tenant
//! reaches every other member alike (a node, the API server, a permitted site it may be placed on) is
//! counted from its size; only the other sites are walked member by member.

use crate::colocation::Site;
use crate::context::Context;
use crate::report::BlastRadiusEntry;
use gpu_trust_model::isolation::{Mechanism, Scope};
use gpu_trust_model::{Certainty, Incident};
use gpu_trust_policy::TenantId;

/// Whether a co-location at `level` under `mechanism` carries `incident`.
pub fn carries(mechanism: Mechanism, level: Scope, incident: Incident) -> bool {
    let reach = mechanism.reach(incident);
    reach != Scope::Nothing && level <= reach
}

/// The id of a site in the report's `groups`.
pub fn group_id(site: usize) -> String {
    format!("g{}", site + 1)
}

/// Whether `me` reaches every other member of `site` alike, and with what certainty.
fn reaches_all(site: &Site, me: TenantId) -> Option<Certainty> {
    let certainty = site.uniform()?;
    let all = certainty != Certainty::Permitted || site.members.get(&me).is_some_and(|m| m.may);
    all.then_some(certainty)
}

pub(crate) fn blast_radius(ctx: &Context<'_>) -> Vec<BlastRadiusEntry> {
    let tenants: Vec<TenantId> = ctx.blast_tenants().iter().copied().collect();
    let slots = ctx.tenancy.tenants().len();
    // Tenants in chunks on every core; each chunk reuses one array of marks.
    let chunks: Vec<&[TenantId]> = tenants.chunks(32).collect();
    let mut out: Vec<BlastRadiusEntry> = crate::parallel::each(&chunks, |chunk| {
        let mut seen: Vec<bool> = vec![false; slots];
        let mut out = Vec::with_capacity(chunk.len() * Incident::ALL.len());
        for t in *chunk {
            radius_of(ctx, *t, &mut seen, &mut out);
        }
        out
    })
    .into_iter()
    .flatten()
    .collect();
    out.sort_by(|x, y| (&x.tenant, x.incident).cmp(&(&y.tenant, y.incident)));
    out
}

/// How many other tenants an incident reaches and how surely; `None` when it reaches none.
type Reach = Option<(usize, Certainty)>;

/// The entries of one tenant. `seen` (all false, one slot per tenant) marks the tenants counted and
/// is left all false. Incidents carried by the same sites share one count.
fn radius_of(ctx: &Context<'_>, t: TenantId, seen: &mut [bool], out: &mut Vec<BlastRadiusEntry>) {
    let none: Vec<usize> = Vec::new();
    let sites = ctx.colo().sites_of.get(&t).unwrap_or(&none);
    let mut counted: Vec<(Vec<usize>, Reach)> = Vec::new();
    for incident in Incident::ALL {
        let carrying: Vec<usize> = sites
            .iter()
            .copied()
            .filter(|i| {
                ctx.site(*i).is_some_and(|s| {
                    let (m, level) = s.level.reach();
                    carries(m, level, incident)
                })
            })
            .collect();
        let reach = match counted.iter().find(|(c, _)| *c == carrying) {
            Some((_, r)) => *r,
            None => {
                let r = count(ctx, t, &carrying, seen);
                counted.push((carrying, r));
                r
            }
        };
        let Some((reaches, certainty)) = reach else {
            continue;
        };
        out.push(BlastRadiusEntry {
            tenant: ctx.tenant_name(t).to_string(),
            incident,
            reaches,
            certainty,
        });
    }
}

/// How many other tenants `t` meets in `carrying`, with the strongest certainty; `None` when none.
fn count(ctx: &Context<'_>, t: TenantId, carrying: &[usize], seen: &mut [bool]) -> Reach {
    let carrying: Vec<(usize, &Site)> = carrying
        .iter()
        .filter_map(|i| ctx.site(*i).map(|s| (*i, s)))
        .collect();
    // The largest site where it reaches everyone alike is counted, not walked.
    let whole = carrying
        .iter()
        .filter_map(|(i, s)| reaches_all(s, t).map(|c| (*i, *s, c)))
        .max_by_key(|(i, s, _)| (s.members.len(), std::cmp::Reverse(*i)));
    let mut touched: Vec<TenantId> = Vec::new();
    let mut strongest: Option<Certainty> = whole.map(|(_, _, c)| c);
    for (i, site) in &carrying {
        if whole.is_some_and(|(w, _, _)| w == *i) {
            continue;
        }
        let Some(me) = site.members.get(&t) else {
            continue;
        };
        for (other, them) in &site.members {
            if *other == t {
                continue;
            }
            let Some((c, _)) = site.meet(ctx.fleet, me, them) else {
                continue;
            };
            let slot = &mut seen[other.index()];
            if !*slot {
                *slot = true;
                touched.push(*other);
            }
            strongest = Some(strongest.map_or(c, |x| x.min(c)));
        }
    }
    let in_whole = |o: &TenantId| whole.is_some_and(|(_, s, _)| s.members.contains_key(o));
    let reaches = whole.map_or(0, |(_, s, _)| s.members.len() - 1)
        + touched.iter().filter(|o| !in_whole(o)).count();
    for o in touched {
        seen[o.index()] = false;
    }
    strongest.filter(|_| reaches > 0).map(|c| (reaches, c))
}
