//! What several rules share: counting the tenant pairs that meet in sites (the shared things of the
//! co-location analysis), the finding of a pairwise rule (one per node group and cause, covering all
//! its pairs, with acceptances applied pair by pair), and the phrases for certainty and trust.
//!
//! Counting never builds a value per pair when one site holds everyone: the pairs of a site whose
//! members all meet alike are counted from its size and the policy's explicit trust relations.

use crate::acceptance::{Annotations, Granted};
use crate::colocation::{Judged, Level, Member, Site};
use crate::context::Context;
use crate::registry::RuleMeta;
use crate::sink::{DraftPairs, Sink, OPEN_PAIRS_LISTED};
use crate::text;
use gpu_trust_model::fleet::{ConfigSource, GpuNode, NodeId, WorkloadId};
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

/// The trust levels in index order (`none`, `limited`, `full`).
const TRUSTS: [Trust; 3] = [Trust::None, Trust::Limited, Trust::Full];
/// The certainties in index order, strongest first.
const CERTAINTIES: [Certainty; 3] = [
    Certainty::Observed,
    Certainty::Possible,
    Certainty::Permitted,
];

fn trust_index(t: Trust) -> usize {
    TRUSTS.iter().position(|x| *x == t).unwrap_or(0)
}

fn certainty_index(c: Certainty) -> usize {
    CERTAINTIES.iter().position(|x| *x == c).unwrap_or(2)
}

/// Trust below `full`: what separate memory and fault domains are owed to.
pub const BELOW_FULL: &[Trust] = &[Trust::None, Trust::Limited];
/// Trust `none` only.
pub const NONE: &[Trust] = &[Trust::None];
/// Trust `full` only.
pub const FULL: &[Trust] = &[Trust::Full];
/// Any trust.
pub const ANY: &[Trust] = &[Trust::None, Trust::Limited, Trust::Full];

/// Which pairs of a site a rule reports.
pub struct Relevant<'r> {
    /// The trust levels the rule reports at a site.
    pub trusts: &'r dyn Fn(&Site) -> &'static [Trust],
    /// Only pairs with at least one of these tenants, when set.
    pub involving: Option<&'r BTreeSet<TenantId>>,
}

impl Relevant<'_> {
    fn pass(&self, site: &Site, a: TenantId, b: TenantId, trust: Trust) -> bool {
        (self.trusts)(site).contains(&trust)
            && self
                .involving
                .is_none_or(|set| set.contains(&a) || set.contains(&b))
    }
}

/// The pairs of tenants that meet in some sites, as a rule reports them: each pair once, with the
/// strongest certainty it meets with.
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
    /// Nodes of the sites where pairs meet with that certainty.
    pub nodes: BTreeSet<NodeId>,
    /// The workloads of those pairs' tenants there.
    pub workloads: BTreeSet<WorkloadId>,
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

/// What one site contributes to a tally.
struct SiteTally {
    best: Option<Judged>,
    tenants: BTreeSet<TenantId>,
}

/// The pairs of `sites` (indices into the context's sites) that `relevant` reports, `None` when there
/// are none.
pub fn tally(ctx: &Context<'_>, sites: &[usize], relevant: &Relevant<'_>) -> Option<Tally> {
    let mut counts = [[0usize; 3]; 3];
    let mut per_site: Vec<(usize, SiteTally)> = Vec::new();
    let mut involved: BTreeSet<TenantId> = BTreeSet::new();
    match sites {
        [one] if relevant.involving.is_none() => {
            let site = ctx.site(*one)?;
            if let Some(uniform) = site.uniform() {
                let t = count_uniform(ctx, site, uniform, relevant, &mut counts);
                involved.extend(t.tenants.iter().copied());
                per_site.push((*one, t));
            } else {
                enumerate(
                    ctx,
                    sites,
                    relevant,
                    &mut counts,
                    &mut per_site,
                    &mut involved,
                );
            }
        }
        _ => enumerate(
            ctx,
            sites,
            relevant,
            &mut counts,
            &mut per_site,
            &mut involved,
        ),
    }
    let best = per_site
        .iter()
        .filter_map(|(_, t)| t.best)
        .min_by_key(|(c, _)| *c)?;
    let mut nodes = BTreeSet::new();
    let mut workloads = BTreeSet::new();
    for (id, t) in &per_site {
        if t.best.map(|(c, _)| c) != Some(best.0) {
            continue;
        }
        let Some(site) = ctx.site(*id) else { continue };
        nodes.extend(site.nodes.iter().copied());
        for tenant in &t.tenants {
            if let Some(m) = site.members.get(tenant) {
                workloads.extend(m.workloads.iter().copied());
            }
        }
    }
    Some(Tally {
        counts,
        tenants: involved.into_iter().collect(),
        sites: per_site
            .iter()
            .filter(|(_, t)| t.best.is_some())
            .map(|(i, _)| *i)
            .collect(),
        certainty: best.0,
        reason: best.1,
        nodes,
        workloads,
    })
}

/// Counts the pairs of a site whose members all meet alike (every pair, or for a permitted site every
/// pair with a member that may be placed there) from its size and the explicit trust relations.
fn count_uniform(
    ctx: &Context<'_>,
    site: &Site,
    certainty: Certainty,
    relevant: &Relevant<'_>,
    counts: &mut [[usize; 3]; 3],
) -> SiteTally {
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
    for t in TRUSTS {
        let n = if t == default {
            total - by_level.iter().sum::<usize>() + by_level[trust_index(t)]
        } else {
            by_level[trust_index(t)]
        };
        if trusts.contains(&t) {
            counts[trust_index(t)][c] += n;
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
    let best = (!tenants.is_empty()).then(|| (certainty, site.uniform_reason()));
    SiteTally { best, tenants }
}

/// Judges every pair of every site, each pair counted once with its strongest certainty.
fn enumerate(
    ctx: &Context<'_>,
    sites: &[usize],
    relevant: &Relevant<'_>,
    counts: &mut [[usize; 3]; 3],
    per_site: &mut Vec<(usize, SiteTally)>,
    involved: &mut BTreeSet<TenantId>,
) {
    // (pair, certainty index * 3 + trust index), sorted and deduplicated below.
    let mut seen: Vec<(u64, u8)> = Vec::new();
    for id in sites {
        let Some(site) = ctx.site(*id) else { continue };
        let members: Vec<(&TenantId, &Member)> = site.members.iter().collect();
        let mut st = SiteTally {
            best: None,
            tenants: BTreeSet::new(),
        };
        for (i, (a, ma)) in members.iter().enumerate() {
            for (b, mb) in &members[i + 1..] {
                let Some(judged) = site.meet(ctx.fleet, ma, mb) else {
                    continue;
                };
                let trust = ctx.trust(**a, **b);
                if !relevant.pass(site, **a, **b, trust) {
                    continue;
                }
                let key = ((a.index() as u64) << 32) | (b.index() as u64 & 0xffff_ffff);
                let code = (certainty_index(judged.0) * 3 + trust_index(trust)) as u8;
                seen.push((key, code));
                st.tenants.insert(**a);
                st.tenants.insert(**b);
                if st.best.is_none_or(|(c, _)| judged.0 < c) {
                    st.best = Some(judged);
                }
            }
        }
        involved.extend(st.tenants.iter().copied());
        per_site.push((*id, st));
    }
    seen.sort_unstable();
    seen.dedup_by_key(|(key, _)| *key);
    for (_, code) in seen {
        let (c, t) = (usize::from(code) / 3, usize::from(code) % 3);
        counts[t][c] += 1;
    }
}

/// The strongest certainty with which two tenants meet in some of `sites` as `relevant` reports them.
fn pair_certainty(
    ctx: &Context<'_>,
    sites: &[usize],
    a: TenantId,
    b: TenantId,
    relevant: &Relevant<'_>,
) -> Option<Certainty> {
    let trust = ctx.trust(a, b);
    sites
        .iter()
        .filter_map(|id| ctx.site(*id))
        .filter(|s| relevant.pass(s, a, b, trust))
        .filter_map(|s| {
            let (ma, mb) = (s.members.get(&a)?, s.members.get(&b)?);
            s.meet(ctx.fleet, ma, mb).map(|(c, _)| c)
        })
        .min()
}

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
/// none): its tenants, nodes and workloads where the pairs meet most surely, the severity of its
/// worst open pair, the pairs the policy accepts one by one, and the severity of each pair of the
/// matrix's tenants.
#[allow(clippy::too_many_arguments)]
pub fn pair_finding(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    sites: &[usize],
    relevant: &Relevant<'_>,
    base: BaseSeverity<'_>,
    key: String,
    mechanisms: &BTreeSet<Mechanism>,
    words: impl FnOnce(&Tally) -> Wording,
) {
    let Some(tally) = tally(ctx, sites, relevant) else {
        return;
    };
    let rule = sink.rule();
    // Acceptances naming exactly two tenants accept that pair.
    let mut accepted: Vec<((TenantId, TenantId), Granted)> = Vec::new();
    let mut open = tally.counts;
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
        if pair.0 == pair.1 || accepted.iter().any(|(p, _)| *p == pair) {
            continue;
        }
        if tally.tenants.binary_search(&pair.0).is_err()
            || tally.tenants.binary_search(&pair.1).is_err()
        {
            continue;
        }
        if let Some(c) = pair_certainty(ctx, &tally.sites, pair.0, pair.1, relevant) {
            let t = trust_index(ctx.trust(pair.0, pair.1));
            let cell = &mut open[t][certainty_index(c)];
            *cell = cell.saturating_sub(1);
            accepted.push((pair, Granted::policy(a)));
        }
    }
    // Annotations accept a pair only when both tenants accept it: every workload of each in the
    // finding's shared things is covered.
    let annotations = Annotations::new(ctx, rule.code);
    if !annotations.is_empty() {
        let sides: Vec<(TenantId, Granted)> = tally
            .tenants
            .iter()
            .filter_map(|t| {
                annotations
                    .side(ctx, *t, &tally.sites)
                    .map(|list| (*t, Granted::annotations(list)))
            })
            .collect();
        for (i, (a, ga)) in sides.iter().enumerate() {
            for (b, gb) in &sides[i + 1..] {
                let pair = ((*a).min(*b), (*a).max(*b));
                if accepted.iter().any(|(p, _)| *p == pair) {
                    continue;
                }
                if let Some(c) = pair_certainty(ctx, &tally.sites, pair.0, pair.1, relevant) {
                    let t = trust_index(ctx.trust(pair.0, pair.1));
                    let cell = &mut open[t][certainty_index(c)];
                    *cell = cell.saturating_sub(1);
                    accepted.push((pair, Granted::merge([ga.clone(), gb.clone()])));
                }
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
    let open = if accepted.is_empty() || all_accepted {
        Vec::new()
    } else {
        open_pairs(ctx, &tally, relevant, &accepted)
    };
    let matrix = matrix_severities(ctx, &tally, relevant, base, &accepted);
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
        open,
    });
    sink.push(draft);
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
            if pair_certainty(ctx, &tally.sites, *a, *b, relevant).is_some() {
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
                if !relevant.pass(site, pair.0, pair.1, trust) {
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
    if let Some((a, b)) = tally.single_pair() {
        return pair_phrase(ctx, a, b);
    }
    format!(
        "{} ({}; {})",
        text::plural(tally.tenants.len() as u64, "tenant"),
        text::tenants(ctx, tally.tenants.iter().copied()),
        trust_counts(tally)
    )
}

/// `10 pairs, trust none` / `10 pairs: 8 of trust none, 2 limited`.
pub fn trust_counts(tally: &Tally) -> String {
    let parts: Vec<(Trust, usize)> = TRUSTS
        .iter()
        .map(|t| (*t, tally.of_trust(*t)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let pairs = text::plural(tally.pairs() as u64, "pair");
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

/// The standard opening of a pairwise message: who, what (`one` for a single pair, `many` for more),
/// where, how sure.
pub fn tally_opening(ctx: &Context<'_>, tally: &Tally, one: &str, many: &str) -> String {
    let workloads = tally.workloads.clone();
    let what = if tally.single_pair().is_some() {
        one
    } else {
        many
    };
    format!(
        "{} {} {what} on {} ({}; {})",
        tally_phrase(ctx, tally),
        verb(tally.certainty),
        text::nodes(ctx, tally.nodes.iter().copied()),
        who(ctx, &workloads, &tally.tenants),
        tally.reason
    )
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
        let relevant = Relevant {
            trusts: &|_| trusts,
            involving: None,
        };
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
