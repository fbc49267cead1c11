//! What several rules share: the finding of a pairwise rule (one per node group and cause, covering
//! all its pairs, with where and how surely each meets, and acceptances applied pair by pair; the
//! pairs are counted by [`super::tally`]), and the phrases for certainty and trust.

pub use super::tally::{
    certainty_index, in_share, pair_meeting, tally as tally_of, trust_index, Relevant, Share,
    Tally, CERTAINTIES, TRUSTS,
};
use crate::acceptance::{Annotations, Granted};
use crate::colocation::{Level, Member};
use crate::context::Context;
use crate::registry::RuleMeta;
use crate::sink::{
    DraftPair, DraftPairs, DraftShare, ExplainedPair, OneSided, Sink, OPEN_PAIRS_LISTED,
};
use crate::text;
use gpu_trust_model::fleet::{ConfigSource, GpuNode, WorkloadId};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, Severity, Trust};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

/// "share" / "may share" / "may be placed to share", by certainty.
pub fn verb(certainty: Certainty) -> &'static str {
    match certainty {
        Certainty::Observed => "share",
        Certainty::Possible => "may share",
        Certainty::Permitted => "are permitted to share",
    }
}

/// The same verb for one subject: "shares" / "may share" / "is permitted to share".
pub fn verb_singular(certainty: Certainty) -> &'static str {
    match certainty {
        Certainty::Observed => "shares",
        Certainty::Possible => "may share",
        Certainty::Permitted => "is permitted to share",
    }
}

/// `acme and globex (trust none)`.
pub fn pair_phrase(ctx: &Context<'_>, a: TenantId, b: TenantId) -> String {
    format!(
        "{} and {} (trust {})",
        ctx.tenant_name(a),
        ctx.tenant_name(b),
        ctx.trust(a, b)
    )
}

/// `acme: cust-acme/infer-0; globex: cust-globex/train-1`, for the first [`text::MAX_NAMES`] tenants,
/// then how many more.
pub fn who(ctx: &Context<'_>, workloads: &BTreeSet<WorkloadId>, tenants: &[TenantId]) -> String {
    let mut by_tenant: BTreeMap<TenantId, Vec<WorkloadId>> = BTreeMap::new();
    for w in workloads {
        if let Some(t) = ctx.tenant(*w) {
            by_tenant.entry(t).or_default().push(*w);
        }
    }
    let shown: Vec<&TenantId> = tenants
        .iter()
        .filter(|t| by_tenant.contains_key(t))
        .collect();
    let mut parts: Vec<String> = shown
        .iter()
        .take(text::MAX_NAMES)
        .map(|t| {
            let ws = by_tenant.get(t).cloned().unwrap_or_default();
            format!("{}: {}", ctx.tenant_name(**t), text::workloads(ctx, ws))
        })
        .collect();
    if shown.len() > text::MAX_NAMES {
        parts.push(format!(
            "and {} more",
            text::plural((shown.len() - text::MAX_NAMES) as u64, "tenant")
        ));
    }
    parts.join("; ")
}

/// Trust below `full`: what separate memory and fault domains are owed to.
pub const BELOW_FULL: &[Trust] = &[Trust::None, Trust::Limited];
/// Trust `none` only.
pub const NONE: &[Trust] = &[Trust::None];
/// Trust `full` only.
pub const FULL: &[Trust] = &[Trust::Full];
/// Any trust.
pub const ANY: &[Trust] = &[Trust::None, Trust::Limited, Trust::Full];

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

/// What a pairwise finding says, built by the rule from the tally.
pub struct Wording {
    pub message: String,
    pub remediation: String,
}

/// Pushes one finding covering the pairs of `sites` that `relevant` reports (nothing when there are
/// none): its tenants, nodes and workloads where the pairs meet, where and how surely each meets
/// (its shares, and its pairs one by one when they are few), the severity of its worst open pair,
/// the pairs accepted one by one, and the severity of each pair of the matrix's tenants. `words` is
/// asked once for the whole tally, and once more for the pair an explanation asks about.
#[allow(clippy::too_many_arguments)]
pub fn pair_finding(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    sites: &[usize],
    relevant: &Relevant<'_>,
    base: BaseSeverity<'_>,
    key: String,
    mechanisms: &BTreeSet<Mechanism>,
    words: impl Fn(&Tally) -> Wording,
) {
    let Some(tally) = tally_of(ctx, sites, relevant) else {
        return;
    };
    let rule = sink.rule();
    // Acceptances naming exactly two tenants accept that pair.
    let mut accepted: Vec<((TenantId, TenantId), Granted)> = Vec::new();
    let mut open = tally.counts;
    let mut accept = |pair: (TenantId, TenantId), granted: Granted, open: &mut [[usize; 3]; 3]| {
        if let Some((c, _)) = pair_meeting(ctx, &tally.sites, pair.0, pair.1, relevant) {
            let t = trust_index(ctx.trust(pair.0, pair.1));
            let cell = &mut open[t][certainty_index(c)];
            *cell = cell.saturating_sub(1);
            accepted.push((pair, granted));
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
    let all_accepted = !accepted.is_empty() && accepted.len() == tally.pairs();
    let severity = if all_accepted {
        worst(&tally.counts, base)
    } else {
        worst(&open, base)
    };
    let Some(severity) = severity else { return };
    let open_listed = if accepted.is_empty() || all_accepted {
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
                    accepted: accepted.iter().any(|(x, _)| *x == p.tenants),
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
    draft.certainty = tally.certainty;
    draft.sites = tally.sites.clone();
    draft.matrix = matrix;
    draft.pairs = Some(DraftPairs {
        count: tally.pairs(),
        accepted,
        all_accepted,
        open: open_listed,
        shares,
        listed,
        one_sided,
        explained,
    });
    sink.push(draft);
}

/// The finding's shares with their severity (of their open pairs) and accepted pairs.
fn draft_shares(
    ctx: &Context<'_>,
    tally: &Tally,
    relevant: &Relevant<'_>,
    base: BaseSeverity<'_>,
    accepted: &[((TenantId, TenantId), Granted)],
) -> Vec<DraftShare> {
    tally
        .shares
        .iter()
        .filter_map(|s| {
            let mut open = s.counts;
            let mut taken = 0usize;
            for ((a, b), _) in accepted {
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
    accepted: &[((TenantId, TenantId), Granted)],
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
        accepted: accepted
            .iter()
            .find(|(p, _)| *p == pair)
            .map(|(_, g)| g.clone()),
    })
}

/// Why a tenant's annotations accept none of its pairs in a finding, when they do not.
fn one_sided_note(
    ctx: &Context<'_>,
    tally: &Tally,
    relevant: &Relevant<'_>,
    tenant: TenantId,
    side: &crate::acceptance::Side<'_>,
    accepted: &[((TenantId, TenantId), Granted)],
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
            if accepted.iter().any(|(p, _)| *p == pair)
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
    accepted: &[((TenantId, TenantId), Granted)],
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
            if accepted.iter().any(|(p, _)| *p == pair) {
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
    accepted: &[((TenantId, TenantId), Granted)],
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
                if accepted.iter().any(|(p, _)| *p == pair) {
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

/// The sites of the context at `level` (any device mechanism passing `mechanism` for a device
/// level), grouped by node group and, for devices, mechanism: the shared things of one cause.
pub fn sites_by_group(
    ctx: &Context<'_>,
    level: impl Fn(Level) -> bool,
) -> BTreeMap<(Option<usize>, Level), Vec<usize>> {
    let mut out: BTreeMap<(Option<usize>, Level), Vec<usize>> = BTreeMap::new();
    for (i, site) in ctx.colo().sites.iter().enumerate() {
        if level(site.level) {
            out.entry((site.group, site.level)).or_default().push(i);
        }
    }
    out
}

/// The rule's severity for a pair of trust `t`, as observed.
pub fn by_trust(rule: &'static RuleMeta) -> impl Fn(Trust) -> Option<Severity> {
    move |t| rule.severity.for_trust(t)
}

/// `acme and globex (trust none)` for one pair; `5 tenants (acme, globex, initech, perf-eval and 1
/// more; 10 pairs, trust none)` for more.
pub fn tally_phrase(ctx: &Context<'_>, tally: &Tally) -> String {
    let by_trust: [usize; 3] = TRUSTS.map(|t| tally.of_trust(t));
    group_phrase(ctx, &tally.tenants, &by_trust)
}

/// The same phrase for some tenants whose pairs are `by_trust` (`none`, `limited`, `full`).
fn group_phrase(ctx: &Context<'_>, tenants: &[TenantId], by_trust: &[usize; 3]) -> String {
    if let ([a, b], 1) = (tenants, by_trust.iter().sum::<usize>()) {
        return pair_phrase(ctx, *a, *b);
    }
    format!(
        "{} ({}; {})",
        text::plural(tenants.len() as u64, "tenant"),
        text::tenants(ctx, tenants.iter().copied()),
        pairs_by_trust(by_trust)
    )
}

/// `10 pairs, trust none` / `10 pairs: 8 of trust none, 2 limited`.
fn pairs_by_trust(by_trust: &[usize; 3]) -> String {
    let parts: Vec<(Trust, usize)> = TRUSTS
        .iter()
        .zip(by_trust)
        .map(|(t, n)| (*t, *n))
        .filter(|(_, n)| *n > 0)
        .collect();
    let pairs = text::plural(by_trust.iter().sum::<usize>() as u64, "pair");
    match parts.as_slice() {
        [(t, _)] => format!("{pairs}, trust {t}"),
        _ => {
            let list: Vec<String> = parts
                .iter()
                .enumerate()
                .map(|(i, (t, n))| {
                    if i == 0 {
                        format!("{} of trust {t}", text::count(*n as u64))
                    } else {
                        format!("{} {t}", text::count(*n as u64))
                    }
                })
                .collect();
            format!("{pairs}: {}", list.join(", "))
        }
    }
}

/// How many places a message describes one by one before "and N more".
const PLACES_SHOWN: usize = 4;

/// Where and how surely a tally's pairs meet, in words: for one share, `acme and globex (trust
/// none) share a time-sliced GPU on node gpu-1 (acme: ...; globex: ...; the node has one GPU)`; for
/// several, the tally's tenants and then each share in that form, strongest first, so that no
/// sentence puts a tenant where it cannot go or claims for a pair the certainty of another.
/// `what(share, one)` says what a share's tenants share and where (`one`: a single pair).
pub fn placed(ctx: &Context<'_>, tally: &Tally, what: impl Fn(&Share, bool) -> String) -> String {
    // Each place names its own tenants, unless they are all of the tally's and its pairs all of
    // its pairs: then "they".
    let whole = |s: &Share| {
        tally.shares.len() > 1 && s.tenants == tally.tenants && s.pairs() == tally.pairs()
    };
    let clause = |s: &Share| {
        format!(
            "{} {} {} ({}; {})",
            if whole(s) {
                "they".to_string()
            } else {
                group_phrase(ctx, &s.tenants, &s.counts)
            },
            verb(s.certainty),
            what(s, s.single_pair().is_some()),
            who(ctx, &s.workloads, &s.tenants),
            s.reason
        )
    };
    match tally.shares.as_slice() {
        [one] => clause(one),
        shares => {
            let mut parts: Vec<String> = shares.iter().take(PLACES_SHOWN).map(clause).collect();
            if shares.len() > PLACES_SHOWN {
                parts.push(format!(
                    "and {} more (the finding's groups)",
                    text::plural((shares.len() - PLACES_SHOWN) as u64, "place")
                ));
            }
            format!(
                "{} meet in {} places: {}",
                tally_phrase(ctx, tally),
                text::count(shares.len() as u64),
                parts.join("; ")
            )
        }
    }
}

/// The standard opening of a pairwise message: who, what (`one` for a single pair, `many` for more),
/// where, how sure; place by place when they meet in several.
pub fn tally_opening(ctx: &Context<'_>, tally: &Tally, one: &str, many: &str) -> String {
    placed(ctx, tally, |s, single| {
        format!(
            "{} on {}",
            if single { one } else { many },
            text::nodes(ctx, s.nodes.iter().copied())
        )
    })
}

/// The names of a tally's tenants when they are two (for remediations that name both).
pub fn two_names<'c>(ctx: &Context<'c>, tally: &Tally) -> Option<(&'c str, &'c str)> {
    tally
        .single_pair()
        .map(|(a, b)| (ctx.tenant_name(a), ctx.tenant_name(b)))
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

/// Where a node's sharing configuration comes from, for remediations.
pub fn config_source(node: &GpuNode) -> String {
    match &node.sharing.source {
        ConfigSource::ConfigMap {
            namespace,
            name,
            key,
            ..
        } => format!("key `{key}` of ConfigMap {namespace}/{name}"),
        ConfigSource::NodeLabels => {
            "the device plugin config behind the node's `nvidia.com/device-plugin.config` label"
                .to_string()
        }
        ConfigSource::Default | ConfigSource::Unknown => {
            "the device plugin config (ClusterPolicy `spec.devicePlugin.config`)".to_string()
        }
    }
}

/// A taint and toleration that keep other tenants off a tenant's node pool.
pub fn node_pool_advice(tenant: &str) -> String {
    format!(
        "taint the pool's nodes (`kubectl taint nodes NODE gpu-trust/tenant={tenant}:NoSchedule`) and give {tenant}'s workloads the matching toleration and a nodeSelector for the pool"
    )
}

/// The same advice for a whole group of tenants.
pub fn node_pools_advice() -> &'static str {
    "give each tenant nodes of its own: taint them (`kubectl taint nodes NODE gpu-trust/tenant=TENANT:NoSchedule`) and give the tenant's workloads the matching toleration and a nodeSelector for them"
}

/// The node pool advice for a tally: naming the second tenant of a single pair, else for everyone.
pub fn pool_advice(ctx: &Context<'_>, tally: &Tally) -> String {
    match two_names(ctx, tally) {
        Some((_, b)) => node_pool_advice(b),
        None => node_pools_advice().to_string(),
    }
}

/// `acme and globex` / `these 5 tenants`.
pub fn names(ctx: &Context<'_>, tally: &Tally) -> String {
    match two_names(ctx, tally) {
        Some((a, b)) => format!("{a} and {b}"),
        None => format!(
            "these {}",
            text::plural(tally.tenants.len() as u64, "tenant")
        ),
    }
}

/// `Give acme and globex` / `Give these 5 tenants`.
pub fn give(ctx: &Context<'_>, tally: &Tally) -> String {
    match two_names(ctx, tally) {
        Some((a, b)) => format!("Give {a} and {b}"),
        None => format!(
            "Give these {}",
            text::plural(tally.tenants.len() as u64, "tenant")
        ),
    }
}

/// `accept: [{rule: GT207, tenants: [a, b], reason: ...}]` for one pair, or the form for any pair.
pub fn accept_advice(ctx: &Context<'_>, rule: &str, tally: &Tally) -> String {
    match two_names(ctx, tally) {
        Some((a, b)) => format!("`accept: [{{rule: {rule}, tenants: [{a}, {b}], reason: ...}}]`"),
        None => format!(
            "`accept: [{{rule: {rule}, tenants: [A, B], reason: ...}}]` per pair, or without `tenants` for all"
        ),
    }
}

/// For a tally that mixes trust levels, what its pairs of limited trust need at least (separate MIG
/// instances), after the advice for the distrusting ones: `; pairs of limited trust (1) need...`.
pub fn limited_too(ctx: &Context<'_>, tally: &Tally) -> String {
    let limited = tally.of_trust(Trust::Limited);
    if limited == 0 || tally.of_trust(Trust::None) == 0 {
        return String::new();
    }
    format!(
        "; the {} of limited trust need{} separate MIG instances at least: {}",
        text::plural(limited as u64, "pair"),
        if limited == 1 { "s" } else { "" },
        crate::rules::device::mig_advice(ctx, &tally.nodes)
    )
}

/// The node group's first node, for advice that names one node's configuration.
pub fn first_gpu<'c>(ctx: &Context<'c>, tally: &Tally) -> Option<&'c GpuNode> {
    tally.nodes.iter().next().and_then(|n| ctx.gpu(*n))
}

/// One finding per node group and mechanism over the device sites whose mechanism passes `filter`,
/// for pairs of the given trust levels.
pub fn device_findings(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    filter: impl Fn(Mechanism) -> bool,
    trusts: &'static [Trust],
    base: BaseSeverity<'_>,
    words: impl Fn(Mechanism, &Tally) -> Wording,
) {
    let groups = sites_by_group(ctx, |l| matches!(l, Level::Device(m) if filter(m)));
    for ((group, level), sites) in groups {
        let Level::Device(m) = level else { continue };
        let by_site = |_: &crate::colocation::Site| trusts;
        let relevant = Relevant::trusts(&by_site);
        pair_finding(
            ctx,
            sink,
            &sites,
            &relevant,
            base,
            group_key(ctx, group, level),
            &BTreeSet::from([m]),
            |t| words(m, t),
        );
    }
}
