//! The arithmetic of the pairwise rules: one finding per node group and cause, covering all its
//! pairs, with where and how surely each meets, and acceptances applied pair by pair (the pairs are
//! counted by [`super::tally`]). A pairwise rule is a declaration over the model's admission table
//! ([`gpu_trust_model::isolation::admission`]): its rows there say which sites and trusts it judges,
//! its `declare_rule!` its severity; [`declared`] runs it. Its words are in [`super::wording`].

pub use super::tally::{
    certainty_index, in_share, pair_meeting, tally as tally_of, trust_index, Relevant, Share,
    Tally, CERTAINTIES, TRUSTS,
};
pub use super::wording::Wording;
use crate::acceptance::{Annotations, Granted};
use crate::colocation::{Level, Member, Site};
use crate::context::Context;
use crate::sink::{
    DraftPair, DraftPairs, DraftShare, ExplainedPair, OneSided, Sink, OPEN_PAIRS_LISTED,
};
pub use gpu_trust_model::isolation::admission::BELOW_FULL;
use gpu_trust_model::isolation::{Admission, Mechanism};
use gpu_trust_model::{Certainty, Severity, Trust};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

/// The severity of pairs of trust `t` as observed, `None` when the rule does not report them.
pub type BaseSeverity<'b> = &'b dyn Fn(Trust) -> Option<Severity>;

fn worst(counts: &[[usize; 3]; 3], base: BaseSeverity<'_>) -> Option<Severity> {
    let mut out: Option<Severity> = None;
    for (t, row) in counts.iter().enumerate() {
        for (c, n) in row.iter().enumerate() {
            if *n == 0 {
                continue;
            }
            if let Some(s) = base(TRUSTS[t]) {
                let s = CERTAINTIES[c].adjust(s);
                out = Some(out.map_or(s, |o| o.max(s)));
            }
        }
    }
    out
}

/// One pairwise finding to push: the sites whose pairs it covers, which of their pairs it reports,
/// its stable key, the mechanisms it names, and its words, asked once for the whole tally and once
/// more for the pair an explanation asks about.
pub struct PairFinding<'a, W: Fn(&Tally) -> Wording> {
    pub sites: &'a [usize],
    pub relevant: &'a Relevant<'a>,
    pub key: String,
    pub mechanisms: BTreeSet<Mechanism>,
    pub words: W,
}

/// Pushes one finding covering the pairs of `f.sites` that `f.relevant` reports (nothing when there
/// are none): its tenants, nodes and workloads where the pairs meet, where and how surely each meets
/// (its shares, and its pairs one by one when they are few), the severity of its worst open pair,
/// the pairs accepted one by one, and the severity of each pair of the matrix's tenants. The
/// severity of a pair is the rule's (its `declare_rule!`) for the pair's trust, for the trusts
/// `f.relevant` reports.
pub fn pair_finding<W: Fn(&Tally) -> Wording>(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    f: PairFinding<'_, W>,
) {
    let PairFinding {
        sites,
        relevant,
        key,
        mechanisms,
        words,
    } = f;
    let rule = sink.rule();
    let severity_of = |t: Trust| rule.severity.for_trust(t);
    let base: BaseSeverity<'_> = &severity_of;
    let Some(tally) = tally_of(ctx, sites, relevant) else {
        return;
    };
    // Acceptances naming exactly two tenants accept that pair.
    let mut accepted = AcceptedPairs::default();
    let mut open = tally.counts;
    let mut accept = |pair: (TenantId, TenantId), granted: Granted, open: &mut [[usize; 3]; 3]| {
        if let Some((c, _)) = pair_meeting(ctx, &tally.sites, pair.0, pair.1, relevant) {
            let t = trust_index(ctx.trust(pair.0, pair.1));
            let cell = &mut open[t][certainty_index(c)];
            *cell = cell.saturating_sub(1);
            accepted.push(pair, granted);
        }
    };
    let mut named: BTreeSet<(TenantId, TenantId)> = BTreeSet::new();
    for a in ctx.tenancy.acceptances() {
        if a.rule != rule.code || a.is_expired(ctx.today) || !a.has_reason() || a.is_scoped() {
            continue;
        }
        let Some(names) = &a.tenants else { continue };
        let ids: Vec<TenantId> = names
            .iter()
            .filter_map(|n| ctx.tenancy.tenant_by_name(n))
            .collect();
        let [x, y] = ids.as_slice() else { continue };
        let pair = ((*x).min(*y), (*x).max(*y));
        if pair.0 == pair.1 || !named.insert(pair) {
            continue;
        }
        if tally.tenants.binary_search(&pair.0).is_err()
            || tally.tenants.binary_search(&pair.1).is_err()
        {
            continue;
        }
        accept(pair, Granted::policy(a), &mut open);
    }
    // Annotations accept a pair only when both tenants accept it: every workload of each in the
    // finding's shared things is covered. A tenant whose annotations accept none of its pairs is
    // told why (the other tenant's annotation is missing, or some of its own workloads lack one).
    let annotations = Annotations::new(ctx, rule.code);
    let mut one_sided = Vec::new();
    if !annotations.is_empty() {
        let sides: Vec<(TenantId, crate::acceptance::Side<'_>)> = tally
            .tenants
            .iter()
            .filter_map(|t| annotations.side_of(ctx, *t, &tally.sites).map(|s| (*t, s)))
            .collect();
        let full: Vec<(TenantId, Granted)> = sides
            .iter()
            .filter(|(_, s)| s.uncovered.is_empty())
            .map(|(t, s)| (*t, Granted::annotations(s.covering.iter().copied())))
            .collect();
        for (i, (a, ga)) in full.iter().enumerate() {
            for (b, gb) in &full[i + 1..] {
                let pair = ((*a).min(*b), (*a).max(*b));
                if named.insert(pair) {
                    accept(pair, Granted::merge([ga.clone(), gb.clone()]), &mut open);
                }
            }
        }
        for (t, side) in &sides {
            if let Some(o) = one_sided_note(ctx, &tally, relevant, *t, side, &accepted) {
                one_sided.push(o);
            }
        }
    }
    let all_accepted = !accepted.list.is_empty() && accepted.list.len() == tally.pairs();
    let severity = if all_accepted {
        worst(&tally.counts, base)
    } else {
        worst(&open, base)
    };
    let Some(severity) = severity else { return };
    let open_listed = if accepted.list.is_empty() || all_accepted {
        Vec::new()
    } else {
        open_pairs(ctx, &tally, relevant, &accepted)
    };
    let matrix = matrix_severities(ctx, &tally, relevant, base, &accepted);
    let shares = draft_shares(ctx, &tally, relevant, base, &accepted);
    let listed = tally.listed.as_ref().map(|pairs| {
        pairs
            .iter()
            .filter_map(|p| {
                let severity = p.certainty.adjust(base(p.trust)?);
                Some(DraftPair {
                    tenants: p.tenants,
                    trust: p.trust,
                    certainty: p.certainty,
                    severity,
                    sites: p.sites.clone(),
                    accepted: accepted.contains(p.tenants),
                })
            })
            .collect()
    });
    let explained = explain(ctx, &tally, relevant, base, &accepted, &words);
    let Wording {
        message,
        remediation,
    } = words(&tally);
    let mut draft = sink
        .draft(severity, Certainty::Observed)
        .tenants(tally.tenants.iter().copied())
        .nodes(tally.nodes.iter().copied())
        .workloads(tally.workloads.iter().copied())
        .mechanisms_from(mechanisms.iter().copied())
        .message(message)
        .remediation(remediation)
        .key(key);
    // What the cluster recorded as allocated is the evidence: its records are the objects.
    for site in tally.sites.iter().filter_map(|id| ctx.site(*id)) {
        for record in site.records(ctx.fleet) {
            draft = draft.object(record);
        }
    }
    draft.certainty = tally.certainty;
    draft.sites = tally.sites.clone();
    draft.matrix = matrix;
    draft.pairs = Some(DraftPairs {
        count: tally.pairs(),
        accepted: accepted.list,
        all_accepted,
        open: open_listed,
        shares,
        listed,
        one_sided,
        explained,
    });
    sink.push(draft);
}

/// The pairs of a finding accepted one by one, in the order they were accepted, with an index: a
/// pair is looked up without going through them all (K tenants whose annotations accept each other
/// make K(K-1)/2 of them).
#[derive(Default)]
struct AcceptedPairs {
    list: Vec<((TenantId, TenantId), Granted)>,
    index: BTreeMap<(TenantId, TenantId), usize>,
}

impl AcceptedPairs {
    fn push(&mut self, pair: (TenantId, TenantId), granted: Granted) {
        self.index.insert(pair, self.list.len());
        self.list.push((pair, granted));
    }

    fn contains(&self, pair: (TenantId, TenantId)) -> bool {
        self.index.contains_key(&pair)
    }

    fn get(&self, pair: (TenantId, TenantId)) -> Option<&Granted> {
        self.index
            .get(&pair)
            .and_then(|i| self.list.get(*i))
            .map(|(_, g)| g)
    }
}

/// The finding's shares with their severity (of their open pairs) and accepted pairs.
fn draft_shares(
    ctx: &Context<'_>,
    tally: &Tally,
    relevant: &Relevant<'_>,
    base: BaseSeverity<'_>,
    accepted: &AcceptedPairs,
) -> Vec<DraftShare> {
    tally
        .shares
        .iter()
        .filter_map(|s| {
            let mut open = s.counts;
            let mut taken = 0usize;
            for ((a, b), _) in &accepted.list {
                if in_share(ctx, s, relevant, *a, *b) {
                    let cell = &mut open[trust_index(ctx.trust(*a, *b))];
                    *cell = cell.saturating_sub(1);
                    taken += 1;
                }
            }
            let counted = if open.iter().sum::<usize>() == 0 {
                s.counts
            } else {
                open
            };
            let severity = TRUSTS
                .iter()
                .zip(counted)
                .filter(|(_, n)| *n > 0)
                .filter_map(|(t, _)| base(*t))
                .max()
                .map(|x| s.certainty.adjust(x))?;
            Some(DraftShare {
                site: s.site,
                certainty: s.certainty,
                reason: s.reason,
                severity,
                tenants: s.tenants.clone(),
                nodes: s.nodes.clone(),
                pairs: s.pairs(),
                accepted: taken,
                trusts: s.trusts(),
                every_pair: s.every_pair,
            })
        })
        .collect()
}

/// What the finding says about the pair an explanation asks about, when it covers it: the same
/// words, for that pair alone.
fn explain(
    ctx: &Context<'_>,
    tally: &Tally,
    relevant: &Relevant<'_>,
    base: BaseSeverity<'_>,
    accepted: &AcceptedPairs,
    words: &impl Fn(&Tally) -> Wording,
) -> Option<ExplainedPair> {
    let (a, b) = ctx.explain?;
    let pair = (a.min(b), a.max(b));
    if tally.tenants.binary_search(&pair.0).is_err()
        || tally.tenants.binary_search(&pair.1).is_err()
    {
        return None;
    }
    let only = relevant.only(pair.0, pair.1);
    let one = tally_of(ctx, &tally.sites, &only)?;
    let severity = one.certainty.adjust(base(ctx.trust(pair.0, pair.1))?);
    let Wording {
        message,
        remediation,
    } = words(&one);
    Some(ExplainedPair {
        certainty: one.certainty,
        reason: one.reason,
        severity,
        sites: one.sites.clone(),
        nodes: one.nodes.clone(),
        message,
        remediation,
        accepted: accepted.get(pair).cloned(),
    })
}

/// Why a tenant's annotations accept none of its pairs in a finding, when they do not.
fn one_sided_note(
    ctx: &Context<'_>,
    tally: &Tally,
    relevant: &Relevant<'_>,
    tenant: TenantId,
    side: &crate::acceptance::Side<'_>,
    accepted: &AcceptedPairs,
) -> Option<OneSided> {
    let sources = side
        .covering
        .iter()
        .map(|a| crate::acceptance::annotation_source(a))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut missing = Vec::new();
    let mut missing_count = 0usize;
    if side.uncovered.is_empty() {
        for other in tally.tenants.iter().copied().filter(|o| *o != tenant) {
            let pair = (tenant.min(other), tenant.max(other));
            if accepted.contains(pair)
                || pair_meeting(ctx, &tally.sites, pair.0, pair.1, relevant).is_none()
            {
                continue;
            }
            missing_count += 1;
            if missing.len() < OPEN_PAIRS_LISTED {
                missing.push(other);
            }
        }
        if missing_count == 0 {
            return None;
        }
    }
    // With some of its own workloads uncovered, no pair of it is accepted by annotations: those
    // workloads are what is missing.
    Some(OneSided {
        tenant,
        sources,
        missing,
        missing_count,
        uncovered: side
            .uncovered
            .iter()
            .copied()
            .take(OPEN_PAIRS_LISTED)
            .collect(),
        uncovered_count: side.uncovered.len(),
    })
}

/// The first open pairs of a partly accepted finding, by tenant name: pairs of the tally's tenants
/// that meet in its sites and that no acceptance names. The search stops after a bounded number of
/// pairs tried, so a group of many tenants whose pairs are few costs no more than the matrix.
fn open_pairs(
    ctx: &Context<'_>,
    tally: &Tally,
    relevant: &Relevant<'_>,
    accepted: &AcceptedPairs,
) -> Vec<(TenantId, TenantId)> {
    const TRIES: usize = 100_000;
    let mut by_name: Vec<TenantId> = tally.tenants.clone();
    by_name.sort_by(|a, b| ctx.tenant_name(*a).cmp(ctx.tenant_name(*b)));
    let mut out = Vec::new();
    let mut tries = 0usize;
    for (i, a) in by_name.iter().enumerate() {
        for b in &by_name[i + 1..] {
            if out.len() == OPEN_PAIRS_LISTED || tries == TRIES {
                return out;
            }
            tries += 1;
            let pair = ((*a).min(*b), (*a).max(*b));
            if accepted.contains(pair) {
                continue;
            }
            if pair_meeting(ctx, &tally.sites, *a, *b, relevant).is_some() {
                out.push((*a, *b));
            }
        }
    }
    out
}

/// The severity of every open pair of the matrix's tenants among the tally's pairs.
fn matrix_severities(
    ctx: &Context<'_>,
    tally: &Tally,
    relevant: &Relevant<'_>,
    base: BaseSeverity<'_>,
    accepted: &AcceptedPairs,
) -> Vec<((TenantId, TenantId), Severity)> {
    if ctx.matrix.is_empty() {
        return Vec::new();
    }
    let mut out: BTreeMap<(TenantId, TenantId), Severity> = BTreeMap::new();
    for id in &tally.sites {
        let Some(site) = ctx.site(*id) else { continue };
        let members: Vec<(&TenantId, &Member)> = site
            .members
            .iter()
            .filter(|(t, _)| ctx.matrix.contains(t))
            .collect();
        for (i, (a, ma)) in members.iter().enumerate() {
            for (b, mb) in &members[i + 1..] {
                let pair = (**a, **b);
                if accepted.contains(pair) {
                    continue;
                }
                let Some((c, _)) = site.meet(ctx.fleet, ma, mb) else {
                    continue;
                };
                let trust = ctx.trust(pair.0, pair.1);
                if !relevant.pass(*id, site, pair.0, pair.1, trust) {
                    continue;
                }
                if let Some(s) = base(trust) {
                    let s = c.adjust(s);
                    let e = out.entry(pair).or_insert(s);
                    *e = (*e).max(s);
                }
            }
        }
    }
    out.into_iter().collect()
}

/// A stable key for a finding about a node group at a level: the group's GPU model and sharing
/// configuration, never its node names (nodes come and go) or tenants (they join and leave).
pub fn group_key(ctx: &Context<'_>, group: Option<usize>, level: Level) -> String {
    let level = match level {
        Level::Device(m) => format!("device/{m}"),
        Level::MigGpu => "mig-gpu".to_string(),
        Level::Node => "node".to_string(),
        Level::ControlPlane => return "api-server".to_string(),
    };
    let gpu = group
        .and_then(|g| ctx.colo().group_rep(g))
        .and_then(|n| ctx.gpu(n));
    match gpu {
        Some(g) => format!("{level}@{}", crate::colocation::group_signature(g)),
        None => level,
    }
}

/// How a declared pairwise rule groups its sites into findings.
pub enum Grouping {
    /// One finding per node group and level (for devices, per mechanism), keyed by them.
    ByLevel,
    /// One finding per node group over every level the rule judges, keyed `<prefix>/` and the node
    /// group.
    ByGroup(&'static str),
}

/// A pairwise rule, declared: which sites and trusts it judges are its rows of the admission table;
/// what is left to say here is how it groups its findings and which pairs it leaves to others.
pub struct PairRule<'a> {
    pub grouping: Grouping,
    /// Only sites with one of these tenants, and pairs with one of them (the tenants a contract
    /// promised isolation).
    pub involving: Option<&'a BTreeSet<TenantId>>,
    /// Pairs a site (by index) does not count, because a stronger sharing reports them.
    pub except: Option<&'a dyn Fn(usize, TenantId, TenantId) -> bool>,
}

impl PairRule<'_> {
    /// One finding per node group and level, of every pair the rule's rows cover.
    pub const BY_LEVEL: PairRule<'static> = PairRule {
        grouping: Grouping::ByLevel,
        involving: None,
        except: None,
    };
}

/// The mechanisms a finding about sites at `level` names.
fn mechanisms_at(level: Level) -> BTreeSet<Mechanism> {
    match level {
        Level::Device(m) => BTreeSet::from([m]),
        Level::MigGpu => BTreeSet::from([Mechanism::MigInstance]),
        Level::Node | Level::ControlPlane => BTreeSet::new(),
    }
}

/// Runs a declared pairwise rule: its findings over the sites its rows of the admission table
/// cover, with the trusts those rows give, worded by `words(level, tally)` (the level of a finding
/// grouped by node group is [`Level::Node`]).
pub fn declared(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    rule: PairRule<'_>,
    words: impl Fn(Level, &Tally) -> Wording,
) {
    let code = sink.rule().code;
    let rows: Vec<&Admission> = Admission::of_rule(code).collect();
    let row_at = |level: Level| rows.iter().find(|r| r.at.covers(level));
    let trusts = |site: &Site| row_at(site.level).map_or(&[][..], |r| r.trusts);
    let mut groups: BTreeMap<(Option<usize>, Option<Level>), Vec<usize>> = BTreeMap::new();
    for (i, site) in ctx.colo().sites.iter().enumerate() {
        // A site without a tenant of a focused audit holds none of its pairs.
        if row_at(site.level).is_none() || !site.members.keys().any(|t| ctx.in_focus(*t)) {
            continue;
        }
        if let Some(set) = rule.involving {
            if !site.members.keys().any(|t| set.contains(t)) {
                continue;
            }
        }
        let level = match rule.grouping {
            Grouping::ByLevel => Some(site.level),
            Grouping::ByGroup(_) => None,
        };
        groups.entry((site.group, level)).or_default().push(i);
    }
    for ((group, level), sites) in groups {
        let relevant = Relevant {
            involving: rule.involving,
            except: rule.except,
            ..Relevant::trusts(&trusts)
        };
        let (key, mechanisms, level) = match (level, &rule.grouping) {
            (Some(level), _) => (group_key(ctx, group, level), mechanisms_at(level), level),
            (None, Grouping::ByGroup(prefix)) => (
                format!("{prefix}/{}", group_key(ctx, group, Level::Node)),
                sites
                    .iter()
                    .filter_map(|i| ctx.site(*i))
                    .flat_map(|s| mechanisms_at(s.level))
                    .collect(),
                Level::Node,
            ),
            (None, Grouping::ByLevel) => continue,
        };
        pair_finding(
            ctx,
            sink,
            PairFinding {
                sites: &sites,
                relevant: &relevant,
                key,
                mechanisms,
                words: |t: &Tally| words(level, t),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use gpu_trust_model::isolation::{ADMISSION, SEATS};

    /// The model's admission table names the rule of each row by its code (the planner asks the
    /// policy for acceptances of it): every code is a registered rule, and a rule about one
    /// workload has one row.
    #[test]
    fn every_admission_row_names_a_registered_rule() {
        for rule in ADMISSION
            .iter()
            .map(|r| r.rule)
            .chain(SEATS.iter().map(|r| r.rule))
        {
            assert!(crate::registry::rule(rule).is_some(), "{rule}");
        }
        for (i, row) in SEATS.iter().enumerate() {
            assert!(
                SEATS[..i].iter().all(|r| r.rule != row.rule),
                "{}",
                row.rule
            );
        }
    }
}
