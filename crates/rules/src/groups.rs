//! The groups section: every shared thing of the co-location analysis (and the API server) with its
//! tenants, how many pairs of them share it and how surely, what they share through it and what still
//! separates them there, read from the isolation model.

use crate::blast::group_id;
use crate::colocation::{Level, Site};
use crate::context::Context;
use gpu_trust_model::isolation::{Enforcement, Mechanism, Property};
use gpu_trust_model::report::{GroupEntry, GroupLevel};
use gpu_trust_model::Certainty;
use std::collections::BTreeSet;

/// What the groups section calls each device property a group shares or keeps separate.
pub fn property_name(p: Property) -> &'static str {
    match p {
        Property::MemoryCapacity => "memory-pool",
        Property::AddressSpace => "address-space",
        Property::FaultDomain => "fault-domain",
        Property::Compute => "compute",
        Property::Bandwidth => "memory-bandwidth",
        Property::SideChannels => "side-channels",
    }
}

/// What tenants share through a site at `level`, and what still separates them there. (A device
/// site's tenants share its node too: that is the node's group.)
pub fn shares(level: Level) -> (Vec<String>, Vec<String>) {
    let mut shares: Vec<&str> = Vec::new();
    let mut separated: Vec<&str> = Vec::new();
    let properties = |m: Mechanism, shares: &mut Vec<&str>, separated: &mut Vec<&str>| {
        for p in Property::ALL {
            if m.property(p).enforcement == Enforcement::Separate {
                separated.push(property_name(p));
            } else {
                shares.push(property_name(p));
            }
        }
    };
    match level {
        Level::Device(m) => {
            shares.push(if m.is_mig() { "mig-instance" } else { "gpu" });
            if m.is_mps() {
                shares.push("mps-server");
            }
            properties(m, &mut shares, &mut separated);
        }
        Level::MigGpu => {
            shares.push("gpu");
            separated.push("mig-instance");
            properties(Mechanism::MigInstance, &mut shares, &mut separated);
        }
        Level::Node => shares.push("host"),
        Level::ControlPlane => shares.push("control-plane"),
    }
    (
        shares.into_iter().map(str::to_string).collect(),
        separated.into_iter().map(str::to_string).collect(),
    )
}

/// How many pairs of a site meet, and the strongest certainty of them: counted class by class
/// ([`Site::classes`]), so a site of many tenants costs no more than its classes.
pub(crate) fn pairs_of(ctx: &Context<'_>, site: &Site) -> (usize, Certainty) {
    if let (Some(c), None) = (site.uniform(), ctx.focus) {
        let k = site.members.len();
        let n = if site.permitted {
            site.permitted_pairs()
        } else {
            k * k.saturating_sub(1) / 2
        };
        return (n, c);
    }
    #[cfg(test)]
    if crate::colocation::tests::pairwise() {
        return pair_by_pair(ctx, site);
    }
    // Class by class: every member of a class meets every member of another alike. A focused
    // audit counts the pairs with one of its tenants only.
    let classes = site.classes(ctx.fleet, |t| ctx.in_focus(t));
    let mut n = 0;
    let mut best = Certainty::Permitted;
    for (i, a) in classes.iter().enumerate() {
        for (j, b) in classes.iter().enumerate().skip(i) {
            let pairs = a.pairs_with(b, i == j);
            if pairs == 0 || !(ctx.in_focus(a.tenants[0]) || ctx.in_focus(b.tenants[0])) {
                continue;
            }
            if let Some((c, _)) = site.meet(ctx.fleet, a.rep, b.rep) {
                n += pairs;
                best = best.min(c);
            }
        }
    }
    (n, best)
}

/// [`pairs_of`] judging every pair on its own (the reference the tests compare it with).
#[cfg(test)]
fn pair_by_pair(ctx: &Context<'_>, site: &Site) -> (usize, Certainty) {
    let members: Vec<_> = site.members.iter().collect();
    let mut n = 0;
    let mut best = Certainty::Permitted;
    for (i, (x, a)) in members.iter().enumerate() {
        for (y, b) in &members[i + 1..] {
            if !(ctx.in_focus(**x) || ctx.in_focus(**y)) {
                continue;
            }
            if let Some((c, _)) = site.meet(ctx.fleet, a, b) {
                n += 1;
                best = best.min(c);
            }
        }
    }
    (n, best)
}

/// One entry per site, in site order (`g1`, `g2`...).
pub(crate) fn groups(ctx: &Context<'_>) -> Vec<GroupEntry> {
    ctx.colo()
        .sites
        .iter()
        .enumerate()
        // A focused audit: the sites of its tenants (the ids stay those of the whole audit).
        .filter(|(_, site)| site.members.keys().any(|t| ctx.in_focus(*t)))
        .map(|(i, site)| {
            let (pairs, certainty) = pairs_of(ctx, site);
            let (shares, separated_by) = shares(site.level);
            let (level, mechanism) = match site.level {
                Level::Device(m) => (GroupLevel::Device, Some(m)),
                Level::MigGpu => (GroupLevel::MigGpu, None),
                Level::Node => (GroupLevel::Node, None),
                Level::ControlPlane => (GroupLevel::ControlPlane, None),
            };
            let nodes: BTreeSet<&str> = site.nodes.iter().map(|n| ctx.node_name(*n)).collect();
            let names = |may_only: bool| -> Vec<String> {
                let set: BTreeSet<&str> = site
                    .members
                    .iter()
                    .filter(|(_, m)| !may_only || m.may)
                    .map(|(t, _)| ctx.tenant_name(*t))
                    .collect();
                set.into_iter().map(str::to_string).collect()
            };
            let tenants = names(false);
            let permitted_tenants = if site.permitted {
                names(true)
            } else {
                Vec::new()
            };
            GroupEntry {
                id: group_id(i),
                level,
                mechanism,
                permitted: site.permitted,
                nodes: nodes.into_iter().map(str::to_string).collect(),
                tenants,
                permitted_tenants,
                pairs,
                certainty,
                shares,
                separated_by,
            }
        })
        .collect()
}
