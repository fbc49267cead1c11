//! Counting the pairs of tenants a pairwise rule reports in some sites (the shared things of the
//! co-location analysis), and saying where each meets and how surely.
//!
//! A tally covers a node group's sites for one cause. Its pairs are counted once each, with the
//! strongest certainty they meet with; its *shares* say where they meet: one per site and certainty
//! (and reason), each with the tenants of its pairs, the nodes that host them and how many, so that
//! a finding never puts a tenant on a node it cannot reach nor claims for one pair the certainty of
//! another. When the pairs are few ([`LISTED_PAIRS`]) they are listed one by one.
//!
//! Counting never builds a value per pair when one site holds many and everyone there meets alike:
//! its pairs are counted from its size and the policy's explicit trust relations. Otherwise the
//! tenants are grouped by their class in each site ([`Site::classes`]) and every two groups are
//! judged once; only the pairs the policy's relations set apart, and the pairs of a finding that
//! lists them (at most [`LISTED_PAIRS`]), are taken one by one. A rule that leaves out single
//! pairs (`except`, GT104) is still judged pair by pair.

use crate::colocation::{Class, Grouped, Judged, Member, Site};
use crate::context::Context;
use gpu_trust_model::fleet::{NodeId, WorkloadId};
use gpu_trust_model::{Certainty, Trust};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

/// The trust levels in index order (`none`, `limited`, `full`).
pub const TRUSTS: [Trust; 3] = [Trust::None, Trust::Limited, Trust::Full];
/// The certainties in index order, strongest first.
pub const CERTAINTIES: [Certainty; 3] = [
    Certainty::Observed,
    Certainty::Possible,
    Certainty::Permitted,
];

/// A finding lists its pairs one by one when it covers at most this many.
pub const LISTED_PAIRS: usize = 200;

pub fn trust_index(t: Trust) -> usize {
    TRUSTS.iter().position(|x| *x == t).unwrap_or(0)
}

pub fn certainty_index(c: Certainty) -> usize {
    CERTAINTIES.iter().position(|x| *x == c).unwrap_or(2)
}

/// Which pairs of a site a rule reports.
pub struct Relevant<'r> {
    /// The trust levels the rule reports at a site.
    pub trusts: &'r dyn Fn(&Site) -> &'static [Trust],
    /// Only pairs with at least one of these tenants, when set.
    pub involving: Option<&'r BTreeSet<TenantId>>,
    /// Only pairs with at least one of these tenants too: the tenants a focused audit is for
    /// ([`Context::focus`]), set by the tally from the context, never by a rule.
    pub focus: Option<&'r BTreeSet<TenantId>>,
    /// Pairs a site (by index) does not count for the rule, because a stronger sharing of the same
    /// GPU reports them (see [`crate::rules::device`]).
    pub except: Option<&'r dyn Fn(usize, TenantId, TenantId) -> bool>,
    /// Only this pair (lower id first), when set: what one pair's own finding says.
    pub only: Option<(TenantId, TenantId)>,
}

impl<'r> Relevant<'r> {
    /// The pairs of the given trust levels, at every site.
    pub fn trusts(trusts: &'r dyn Fn(&Site) -> &'static [Trust]) -> Relevant<'r> {
        Relevant {
            trusts,
            involving: None,
            focus: None,
            except: None,
            only: None,
        }
    }

    /// The same pairs, of which a focused audit reports only those with one of its tenants.
    fn focused<'s>(&'s self, ctx: &'s Context<'_>) -> Relevant<'s> {
        Relevant {
            trusts: self.trusts,
            involving: self.involving,
            focus: self.focus.or(ctx.focus),
            except: self.except,
            only: self.only,
        }
    }

    /// Whether a pair of these two tenants may be reported: each set it must meet holds one of them.
    fn involves(&self, a: TenantId, b: TenantId) -> bool {
        pair_involved(self.involved(a), self.involved(b))
    }

    /// For one tenant: whether it is one of `involving`, and one of the focus (each `true` when
    /// unset).
    fn involved(&self, t: TenantId) -> (bool, bool) {
        (
            self.involving.is_none_or(|set| set.contains(&t)),
            self.focus.is_none_or(|set| set.contains(&t)),
        )
    }

    pub(crate) fn pass(
        &self,
        id: usize,
        site: &Site,
        a: TenantId,
        b: TenantId,
        trust: Trust,
    ) -> bool {
        (self.trusts)(site).contains(&trust)
            && self.involves(a, b)
            && self
                .only
                .is_none_or(|(x, y)| (a.min(b), a.max(b)) == (x.min(y), x.max(y)))
            && self.except.is_none_or(|e| !e(id, a, b))
    }

    /// The same pairs, restricted to one pair.
    pub(crate) fn only(&self, a: TenantId, b: TenantId) -> Relevant<'_> {
        Relevant {
            trusts: self.trusts,
            involving: self.involving,
            focus: self.focus,
            except: self.except,
            only: Some((a.min(b), a.max(b))),
        }
    }

    /// Whether every pair of a site a uniform count would give is reported alike.
    fn counts_whole_sites(&self) -> bool {
        self.involving.is_none()
            && self.focus.is_none()
            && self.except.is_none()
            && self.only.is_none()
    }
}

/// Whether a pair whose tenants are `x` and `y` ([`Relevant::involved`]) has one of `involving`
/// and one of the focus.
fn pair_involved(x: (bool, bool), y: (bool, bool)) -> bool {
    (x.0 || y.0) && (x.1 || y.1)
}

/// Where some pairs of a tally meet: one site, at one certainty for one reason.
#[derive(Debug, Clone)]
pub struct Share {
    /// The site (an index into the context's sites).
    pub site: usize,
    pub certainty: Certainty,
    pub reason: &'static str,
    /// Its pairs by trust (`none`, `limited`, `full`).
    pub counts: [usize; 3],
    /// The tenants of its pairs, sorted.
    pub tenants: Vec<TenantId>,
    /// The nodes that host at least one of its pairs.
    pub nodes: BTreeSet<NodeId>,
    /// The workloads of its tenants there.
    pub workloads: BTreeSet<WorkloadId>,
    /// Every two of `tenants` whose trust is one of the share's (in a permitted site, one of them at
    /// least one that may be placed there) is a pair of the share.
    pub every_pair: bool,
}

impl Share {
    pub fn pairs(&self) -> usize {
        self.counts.iter().sum()
    }

    /// The trust levels of its pairs.
    pub fn trusts(&self) -> Vec<Trust> {
        TRUSTS
            .iter()
            .zip(self.counts)
            .filter(|(_, n)| *n > 0)
            .map(|(t, _)| *t)
            .collect()
    }

    /// The one pair, when there is exactly one.
    pub fn single_pair(&self) -> Option<(TenantId, TenantId)> {
        match (self.pairs(), self.tenants.as_slice()) {
            (1, [a, b]) => Some((*a, *b)),
            _ => None,
        }
    }
}

/// One pair of a tally, when they are few enough to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoveredPair {
    /// Lower id first.
    pub tenants: (TenantId, TenantId),
    pub trust: Trust,
    /// The strongest certainty it meets with.
    pub certainty: Certainty,
    /// The sites where it meets.
    pub sites: Vec<usize>,
}

/// The pairs of tenants that meet in some sites, as a rule reports them: each pair once, with the
/// strongest certainty it meets with, and where they meet.
#[derive(Debug, Clone)]
pub struct Tally {
    /// Pairs by trust (`none`, `limited`, `full`) and certainty (observed, possible, permitted).
    pub counts: [[usize; 3]; 3],
    /// Tenants in at least one of the pairs, sorted.
    pub tenants: Vec<TenantId>,
    /// The sites with at least one of the pairs.
    pub sites: Vec<usize>,
    /// The strongest certainty of the pairs, and why.
    pub certainty: Certainty,
    pub reason: &'static str,
    /// Where the pairs meet, the strongest certainty first, then in site order.
    pub shares: Vec<Share>,
    /// Every node of the shares.
    pub nodes: BTreeSet<NodeId>,
    /// The workloads of the shares.
    pub workloads: BTreeSet<WorkloadId>,
    /// The pairs one by one, when there are at most [`LISTED_PAIRS`]; sorted by tenant id.
    pub listed: Option<Vec<CoveredPair>>,
}

impl Tally {
    /// How many pairs.
    pub fn pairs(&self) -> usize {
        self.counts.iter().flatten().sum()
    }

    /// How many pairs have trust `t`.
    pub fn of_trust(&self, t: Trust) -> usize {
        self.counts[trust_index(t)].iter().sum()
    }

    /// The one pair, when there is exactly one.
    pub fn single_pair(&self) -> Option<(TenantId, TenantId)> {
        match (self.pairs(), self.tenants.as_slice()) {
            (1, [a, b]) => Some((*a, *b)),
            _ => None,
        }
    }
}

/// What one site contributes at one certainty and reason, while counting.
#[derive(Default)]
struct Building {
    counts: [usize; 3],
    tenants: BTreeSet<TenantId>,
    /// In a permitted site: a pair of two members that may both be placed there (they meet on
    /// every node of the site).
    both_may: bool,
    /// In a permitted site: the members only scheduled there, met by one that may be placed there
    /// (they meet on the nodes those run on).
    scheduled: BTreeSet<TenantId>,
}

/// The pairs of `sites` (indices into the context's sites) that `relevant` reports, `None` when there
/// are none.
pub fn tally(ctx: &Context<'_>, sites: &[usize], relevant: &Relevant<'_>) -> Option<Tally> {
    let relevant = &relevant.focused(ctx);
    let mut counts = [[0usize; 3]; 3];
    let mut shares: Vec<Share> = Vec::new();
    let uniform = match sites {
        [one] if relevant.counts_whole_sites() => ctx
            .site(*one)
            .and_then(|s| s.uniform().map(|c| (*one, s, c))),
        _ => None,
    };
    let listed = match uniform {
        Some((id, site, c)) => {
            let mut whole = [[0usize; 3]; 3];
            let share = count_uniform(ctx, id, site, c, relevant, &mut whole)?;
            if whole.iter().flatten().sum::<usize>() > LISTED_PAIRS {
                counts = whole;
                shares.push(share);
                None
            } else {
                // Few enough to list: judge them one by one instead.
                enumerate(ctx, sites, relevant, &mut counts, &mut shares)
            }
        }
        None => enumerate(ctx, sites, relevant, &mut counts, &mut shares),
    };
    if shares.is_empty() {
        return None;
    }
    shares.sort_by_key(|s| (s.certainty, s.site, s.reason));
    let first = &shares[0];
    let (certainty, reason) = (first.certainty, first.reason);
    let mut tenants: BTreeSet<TenantId> = BTreeSet::new();
    let mut nodes = BTreeSet::new();
    let mut workloads = BTreeSet::new();
    let mut site_ids = BTreeSet::new();
    for s in &shares {
        tenants.extend(s.tenants.iter().copied());
        nodes.extend(s.nodes.iter().copied());
        workloads.extend(s.workloads.iter().copied());
        site_ids.insert(s.site);
    }
    Some(Tally {
        counts,
        tenants: tenants.into_iter().collect(),
        sites: site_ids.into_iter().collect(),
        certainty,
        reason,
        shares,
        nodes,
        workloads,
        listed,
    })
}

/// The workloads of `tenants` at a site.
fn workloads_of(site: &Site, tenants: &BTreeSet<TenantId>) -> BTreeSet<WorkloadId> {
    tenants
        .iter()
        .filter_map(|t| site.members.get(t))
        .flat_map(|m| m.workloads.iter().copied())
        .collect()
}

/// The nodes of a site that host a pair: all of them, except in a permitted site where no two
/// members that may be placed there meet: then those where the scheduled members run.
fn nodes_of(
    ctx: &Context<'_>,
    site: &Site,
    both_may: bool,
    scheduled: &BTreeSet<TenantId>,
) -> BTreeSet<NodeId> {
    if !site.permitted || both_may {
        return site.nodes.iter().copied().collect();
    }
    let mut out = BTreeSet::new();
    for m in scheduled.iter().filter_map(|t| site.members.get(t)) {
        for w in &m.workloads {
            let (_, nodes) = ctx.colo().reach_of(*w);
            out.extend(nodes.into_iter().filter(|n| site.nodes.contains(n)));
        }
    }
    out
}

/// Counts the pairs of a site whose members all meet alike (every pair, or for a permitted site every
/// pair with a member that may be placed there) from its size and the explicit trust relations.
fn count_uniform(
    ctx: &Context<'_>,
    id: usize,
    site: &Site,
    certainty: Certainty,
    relevant: &Relevant<'_>,
    counts: &mut [[usize; 3]; 3],
) -> Option<Share> {
    let all_meet = certainty != Certainty::Permitted;
    let meets = |a: &Member, b: &Member| all_meet || a.may || b.may;
    let k = site.members.len();
    let may = site.members.values().filter(|m| all_meet || m.may).count();
    let total = if all_meet {
        k * k.saturating_sub(1) / 2
    } else {
        site.permitted_pairs()
    };
    let trusts = (relevant.trusts)(site);
    let default = ctx.tenancy.default_trust();
    // Relation pairs inside the site that meet, by level; per member, its meeting partners whose
    // trust the rule does not report (default reported) or does (default not reported).
    let mut by_level = [0usize; 3];
    let mut odd_partners: BTreeMap<TenantId, usize> = BTreeMap::new();
    for ([a, b], level, _) in ctx.tenancy.relations() {
        let (Some(ma), Some(mb)) = (site.members.get(&a), site.members.get(&b)) else {
            continue;
        };
        if !meets(ma, mb) {
            continue;
        }
        by_level[trust_index(level)] += 1;
        if trusts.contains(&level) != trusts.contains(&default) {
            *odd_partners.entry(a).or_default() += 1;
            *odd_partners.entry(b).or_default() += 1;
        }
    }
    let c = certainty_index(certainty);
    let mut share_counts = [0usize; 3];
    for t in TRUSTS {
        let n = if t == default {
            total - by_level.iter().sum::<usize>() + by_level[trust_index(t)]
        } else {
            by_level[trust_index(t)]
        };
        if trusts.contains(&t) {
            counts[trust_index(t)][c] += n;
            share_counts[trust_index(t)] += n;
        }
    }
    let tenants: BTreeSet<TenantId> = site
        .members
        .iter()
        .filter(|(t, m)| {
            let partners = if all_meet || m.may { k - 1 } else { may };
            let odd = odd_partners.get(t).copied().unwrap_or(0);
            if trusts.contains(&default) {
                partners > odd
            } else {
                odd > 0
            }
        })
        .map(|(t, _)| *t)
        .collect();
    if tenants.is_empty() {
        return None;
    }
    let may_here: BTreeSet<TenantId> = tenants
        .iter()
        .copied()
        .filter(|t| site.members.get(t).is_some_and(|m| m.may))
        .collect();
    let scheduled: BTreeSet<TenantId> = tenants.difference(&may_here).copied().collect();
    Some(Share {
        site: id,
        certainty,
        reason: site.uniform_reason(),
        counts: share_counts,
        nodes: nodes_of(ctx, site, may_here.len() >= 2, &scheduled),
        workloads: workloads_of(site, &tenants),
        tenants: tenants.into_iter().collect(),
        every_pair: true,
    })
}

/// Counts the pairs of `sites`: each pair once with its strongest certainty, a share per site,
/// certainty and reason, and the pairs listed when they are few. Counted class by class
/// ([`by_classes`]), except for a rule that leaves out pairs one by one (`except`) and for one
/// pair (`only`), which are judged pair by pair.
fn enumerate(
    ctx: &Context<'_>,
    sites: &[usize],
    relevant: &Relevant<'_>,
    counts: &mut [[usize; 3]; 3],
    shares: &mut Vec<Share>,
) -> Option<Vec<CoveredPair>> {
    #[cfg(test)]
    if crate::colocation::tests::pairwise() {
        return pair_by_pair(ctx, sites, relevant, counts, shares);
    }
    if relevant.except.is_some() || relevant.only.is_some() {
        return pair_by_pair(ctx, sites, relevant, counts, shares);
    }
    by_classes(ctx, sites, relevant, counts, shares)
}

/// [`enumerate`] judging every pair of every site on its own (with `only`, the one pair).
fn pair_by_pair(
    ctx: &Context<'_>,
    sites: &[usize],
    relevant: &Relevant<'_>,
    counts: &mut [[usize; 3]; 3],
    shares: &mut Vec<Share>,
) -> Option<Vec<CoveredPair>> {
    // (pair, certainty index * 3 + trust index, site), sorted and grouped by pair below.
    let mut seen: Vec<(TenantId, TenantId, u8, usize)> = Vec::new();
    for id in sites {
        let Some(site) = ctx.site(*id) else { continue };
        let members: Vec<(&TenantId, &Member)> = site
            .members
            .iter()
            .filter(|(t, _)| relevant.only.is_none_or(|(x, y)| **t == x || **t == y))
            .collect();
        let mut building: BTreeMap<(usize, &'static str), Building> = BTreeMap::new();
        for (i, (a, ma)) in members.iter().enumerate() {
            for (b, mb) in &members[i + 1..] {
                let Some((c, reason)) = site.meet(ctx.fleet, ma, mb) else {
                    continue;
                };
                let trust = ctx.trust(**a, **b);
                if !relevant.pass(*id, site, **a, **b, trust) {
                    continue;
                }
                let code = (certainty_index(c) * 3 + trust_index(trust)) as u8;
                seen.push((**a, **b, code, *id));
                let share = building.entry((certainty_index(c), reason)).or_default();
                share.counts[trust_index(trust)] += 1;
                share.tenants.insert(**a);
                share.tenants.insert(**b);
                if site.permitted {
                    match (ma.may, mb.may) {
                        (true, true) => share.both_may = true,
                        (true, false) => {
                            share.scheduled.insert(**b);
                        }
                        (false, true) => {
                            share.scheduled.insert(**a);
                        }
                        (false, false) => {}
                    }
                }
            }
        }
        for ((c, reason), b) in building {
            let every_pair = every_pair(ctx, site, &b);
            shares.push(Share {
                site: *id,
                certainty: CERTAINTIES[c],
                reason,
                counts: b.counts,
                nodes: nodes_of(ctx, site, b.both_may, &b.scheduled),
                workloads: workloads_of(site, &b.tenants),
                tenants: b.tenants.into_iter().collect(),
                every_pair,
            });
        }
    }
    seen.sort_unstable();
    let mut listed: Vec<CoveredPair> = Vec::new();
    let mut distinct = 0usize;
    for run in seen.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        // Sorted by code within the pair: the first is its strongest certainty.
        let (a, b, code, _) = run[0];
        let (c, t) = (usize::from(code) / 3, usize::from(code) % 3);
        counts[t][c] += 1;
        distinct += 1;
        if distinct <= LISTED_PAIRS {
            let mut on: Vec<usize> = run.iter().map(|x| x.3).collect();
            on.sort_unstable();
            on.dedup();
            listed.push(CoveredPair {
                tenants: (a, b),
                trust: TRUSTS[t],
                certainty: CERTAINTIES[c],
                sites: on,
            });
        }
    }
    (distinct <= LISTED_PAIRS).then_some(listed)
}

/// One site of a tally in classes ([`Site::classes`]), split by whether the class's tenants are
/// of `involving` and of the focus ([`Relevant::involved`]).
struct Classed<'s> {
    id: usize,
    site: &'s Site,
    classes: Vec<Class<'s>>,
    involved: Vec<(bool, bool)>,
    trusts: &'static [Trust],
}

/// Where two groups (or two tenants of them) meet at trust `trust`: (site position, certainty,
/// reason), in site order.
fn meet_groups(
    ctx: &Context<'_>,
    classed: &[Classed<'_>],
    groups: &Grouped,
    (g, h): (usize, usize),
    trust: Trust,
) -> Vec<(usize, Certainty, &'static str)> {
    let (a, b) = (&groups.groups[g].0, &groups.groups[h].0);
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some((pa, ca)), Some((pb, cb))) = (a.get(i), b.get(j)) {
        if pa < pb {
            i += 1;
            continue;
        }
        if pb < pa {
            j += 1;
            continue;
        }
        i += 1;
        j += 1;
        let s = &classed[*pa];
        if !s.trusts.contains(&trust) || !pair_involved(s.involved[*ca], s.involved[*cb]) {
            continue;
        }
        if let Some((c, reason)) = s
            .site
            .meet(ctx.fleet, s.classes[*ca].rep, s.classes[*cb].rep)
        {
            out.push((*pa, c, reason));
        }
    }
    out
}

/// A share while counting by classes: its pairs by trust, per group the partners each of its
/// tenants has there by the default trust, per tenant what the policy's relations change of that,
/// and (permitted sites) the pairs of two members that may both be placed there.
#[derive(Default)]
struct Counting {
    counts: [usize; 3],
    partners: BTreeMap<usize, usize>,
    delta: BTreeMap<TenantId, isize>,
    both_may: usize,
}

/// [`enumerate`] class by class: the tenants of the sites are grouped by their class in each site,
/// every two groups are judged once (their pairs all meet alike at the default trust), and the
/// pairs the policy's relations give another trust are judged one by one. Costs the groups'
/// pairs, the relations and the size of the sites, never the pairs of tenants (the pairs are listed
/// only when they are few).
fn by_classes(
    ctx: &Context<'_>,
    sites: &[usize],
    relevant: &Relevant<'_>,
    counts: &mut [[usize; 3]; 3],
    shares: &mut Vec<Share>,
) -> Option<Vec<CoveredPair>> {
    let classed: Vec<Classed<'_>> = sites
        .iter()
        .filter_map(|id| {
            let site = ctx.site(*id)?;
            let involved = |t: TenantId| relevant.involved(t);
            let classes = site.classes(ctx.fleet, involved);
            Some(Classed {
                id: *id,
                site,
                involved: classes.iter().map(|c| involved(c.tenants[0])).collect(),
                classes,
                trusts: (relevant.trusts)(site),
            })
        })
        .collect();
    let groups = Grouped::new(
        classed
            .iter()
            .map(|s| s.classes.iter().map(|c| c.tenants.as_slice())),
    );
    let default = ctx.tenancy.default_trust();
    let d = trust_index(default);
    let may = |p: usize, g: usize| -> bool {
        let s = &classed[p];
        s.site.permitted
            && groups.groups[g]
                .0
                .iter()
                .find(|(q, _)| *q == p)
                .is_some_and(|(_, c)| s.classes[*c].rep.may)
    };
    let mut counting: BTreeMap<(usize, usize, &'static str), Counting> = BTreeMap::new();
    let n = groups.groups.len();
    for g in 0..n {
        for h in groups.neighbours(g).range(g..).copied() {
            let (a, b) = (&groups.groups[g].1, &groups.groups[h].1);
            let pairs = if g == h {
                a.len() * a.len().saturating_sub(1) / 2
            } else {
                a.len() * b.len()
            };
            if pairs == 0 {
                continue;
            }
            let met = meet_groups(ctx, &classed, &groups, (g, h), default);
            let Some(strongest) = met.iter().map(|m| m.1).min() else {
                continue;
            };
            counts[d][certainty_index(strongest)] += pairs;
            for (p, c, reason) in met {
                let share = counting.entry((p, certainty_index(c), reason)).or_default();
                share.counts[d] += pairs;
                *share.partners.entry(g).or_default() += b.len() - usize::from(g == h);
                if g != h {
                    *share.partners.entry(h).or_default() += a.len();
                }
                if may(p, g) && may(p, h) {
                    share.both_may += pairs;
                }
            }
        }
    }
    // The pairs whose trust a relation sets apart from the default: out of the default's counts,
    // into their own.
    let mut related: BTreeMap<(TenantId, TenantId), Trust> = BTreeMap::new();
    for ([a, b], level, _) in ctx.tenancy.relations() {
        if level == default {
            continue;
        }
        let (Some(ga), Some(gb)) = (groups.of.get(&a), groups.of.get(&b)) else {
            continue;
        };
        related.insert((a, b), level);
        for (trust, sign) in [(default, -1isize), (level, 1)] {
            let met = meet_groups(ctx, &classed, &groups, (*ga, *gb), trust);
            let Some(strongest) = met.iter().map(|m| m.1).min() else {
                continue;
            };
            let cell = &mut counts[trust_index(trust)][certainty_index(strongest)];
            *cell = cell.saturating_add_signed(sign);
            for (p, c, reason) in met {
                let share = counting.entry((p, certainty_index(c), reason)).or_default();
                let cell = &mut share.counts[trust_index(trust)];
                *cell = cell.saturating_add_signed(sign);
                *share.delta.entry(a).or_default() += sign;
                *share.delta.entry(b).or_default() += sign;
                if may(p, *ga) && may(p, *gb) {
                    share.both_may = share.both_may.saturating_add_signed(sign);
                }
            }
        }
    }
    for ((p, c, reason), share) in counting {
        if share.counts.iter().sum::<usize>() == 0 {
            continue;
        }
        let s = &classed[p];
        let mut tenants: BTreeSet<TenantId> = BTreeSet::new();
        for (g, partners) in &share.partners {
            for t in &groups.groups[*g].1 {
                let delta = share.delta.get(t).copied().unwrap_or(0);
                if partners.checked_add_signed(delta).is_some_and(|n| n > 0) {
                    tenants.insert(*t);
                }
            }
        }
        for (t, delta) in &share.delta {
            let grouped = groups
                .of
                .get(t)
                .is_some_and(|g| share.partners.contains_key(g));
            if !grouped && *delta > 0 {
                tenants.insert(*t);
            }
        }
        let scheduled: BTreeSet<TenantId> = if s.site.permitted {
            tenants
                .iter()
                .copied()
                .filter(|t| s.site.members.get(t).is_some_and(|m| !m.may))
                .collect()
        } else {
            BTreeSet::new()
        };
        let every_pair = every_pair_counted(ctx, s.site, &tenants, &share.counts, &related);
        shares.push(Share {
            site: s.id,
            certainty: CERTAINTIES[c],
            reason,
            counts: share.counts,
            nodes: nodes_of(ctx, s.site, share.both_may > 0, &scheduled),
            workloads: workloads_of(s.site, &tenants),
            tenants: tenants.into_iter().collect(),
            every_pair,
        });
    }
    if counts.iter().flatten().sum::<usize>() > LISTED_PAIRS {
        return None;
    }
    // Few enough to list: the pairs of every two groups that meet, one by one.
    let mut listed: Vec<CoveredPair> = Vec::new();
    let mut list = |a: TenantId, b: TenantId, trust: Trust, met: &[(usize, Certainty, &str)]| {
        let Some(certainty) = met.iter().map(|m| m.1).min() else {
            return;
        };
        let mut on: Vec<usize> = met.iter().map(|m| classed[m.0].id).collect();
        on.sort_unstable();
        on.dedup();
        listed.push(CoveredPair {
            tenants: (a.min(b), a.max(b)),
            trust,
            certainty,
            sites: on,
        });
    };
    for g in 0..n {
        for h in groups.neighbours(g).range(g..).copied() {
            let met = meet_groups(ctx, &classed, &groups, (g, h), default);
            if met.is_empty() {
                continue;
            }
            let (a, b) = (&groups.groups[g].1, &groups.groups[h].1);
            for (i, x) in a.iter().enumerate() {
                let others = if g == h { &a[i + 1..] } else { &b[..] };
                for y in others {
                    if !related.contains_key(&((*x).min(*y), (*x).max(*y))) {
                        list(*x, *y, default, &met);
                    }
                }
            }
        }
    }
    for ((a, b), trust) in &related {
        if let (Some(ga), Some(gb)) = (groups.of.get(a), groups.of.get(b)) {
            let met = meet_groups(ctx, &classed, &groups, (*ga, *gb), *trust);
            list(*a, *b, *trust, &met);
        }
    }
    listed.sort_by_key(|p| p.tenants);
    Some(listed)
}

/// [`every_pair`] from counts: the pairs of `tenants` (in a permitted site, with one that may be
/// placed there) whose trust is one of the share's, the default's from their number and the
/// relations' one by one.
fn every_pair_counted(
    ctx: &Context<'_>,
    site: &Site,
    tenants: &BTreeSet<TenantId>,
    counts: &[usize; 3],
    related: &BTreeMap<(TenantId, TenantId), Trust>,
) -> bool {
    let reported = |t: Trust| counts[trust_index(t)] > 0;
    let may = |t: &TenantId| site.members.get(t).is_some_and(|m| m.may);
    let n = tenants.len();
    let scheduled = if site.permitted {
        tenants.iter().filter(|t| !may(t)).count()
    } else {
        0
    };
    let positions = n * n.saturating_sub(1) / 2 - scheduled * scheduled.saturating_sub(1) / 2;
    let (mut apart, mut apart_reported) = (0usize, 0usize);
    for ((a, b), trust) in related {
        if !tenants.contains(a) || !tenants.contains(b) {
            continue;
        }
        if site.permitted && !may(a) && !may(b) {
            continue;
        }
        apart += 1;
        apart_reported += usize::from(reported(*trust));
    }
    let default = if reported(ctx.tenancy.default_trust()) {
        positions - apart
    } else {
        0
    };
    default + apart_reported == counts.iter().sum::<usize>()
}

/// Whether every two tenants of a share whose trust is one of its trust levels (and, in a
/// permitted site, of which one may be placed there) is one of its pairs.
fn every_pair(ctx: &Context<'_>, site: &Site, b: &Building) -> bool {
    let trusts: Vec<bool> = b.counts.iter().map(|n| *n > 0).collect();
    let tenants: Vec<(&TenantId, &Member)> = b
        .tenants
        .iter()
        .filter_map(|t| site.members.get_key_value(t))
        .collect();
    let mut candidates = 0usize;
    for (i, (x, mx)) in tenants.iter().enumerate() {
        for (y, my) in &tenants[i + 1..] {
            if site.permitted && !mx.may && !my.may {
                continue;
            }
            if trusts[trust_index(ctx.trust(**x, **y))] {
                candidates += 1;
            }
        }
    }
    candidates == b.counts.iter().sum::<usize>()
}

/// The strongest certainty with which two tenants meet in some of `sites` as `relevant` reports them,
/// and why.
pub fn pair_meeting(
    ctx: &Context<'_>,
    sites: &[usize],
    a: TenantId,
    b: TenantId,
    relevant: &Relevant<'_>,
) -> Option<Judged> {
    let relevant = &relevant.focused(ctx);
    let trust = ctx.trust(a, b);
    sites
        .iter()
        .filter_map(|id| ctx.site(*id).map(|s| (*id, s)))
        .filter(|(id, s)| relevant.pass(*id, s, a, b, trust))
        .filter_map(|(_, s)| {
            let (ma, mb) = (s.members.get(&a)?, s.members.get(&b)?);
            s.meet(ctx.fleet, ma, mb)
        })
        .min_by_key(|(c, _)| *c)
}

/// Whether a pair meets in a share's site with the share's certainty and reason.
pub fn in_share(
    ctx: &Context<'_>,
    share: &Share,
    relevant: &Relevant<'_>,
    a: TenantId,
    b: TenantId,
) -> bool {
    if share.tenants.binary_search(&a).is_err() || share.tenants.binary_search(&b).is_err() {
        return false;
    }
    let Some(site) = ctx.site(share.site) else {
        return false;
    };
    let (Some(ma), Some(mb)) = (site.members.get(&a), site.members.get(&b)) else {
        return false;
    };
    let relevant = &relevant.focused(ctx);
    let trust = ctx.trust(a, b);
    if share.counts[trust_index(trust)] == 0 || !relevant.pass(share.site, site, a, b, trust) {
        return false;
    }
    site.meet(ctx.fleet, ma, mb) == Some((share.certainty, share.reason))
}
