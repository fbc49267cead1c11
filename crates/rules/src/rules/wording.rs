//! The words of the pairwise findings: who shares what, where and how surely ("acme and globex
//! (trust none) share a time-sliced GPU on node gpu-1"), and the advice the rules give (node pools,
//! acceptances, MIG). The arithmetic of the pairs is in [`super::common`].

use super::common::{Share, Tally, TRUSTS};
use crate::colocation::Unit;
use crate::context::Context;
use crate::text;
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{ConfigSource, GpuNode, WorkloadId};
use gpu_trust_model::{Certainty, Trust};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

/// What a pairwise finding says, built by the rule from the tally.
pub struct Wording {
    pub message: String,
    pub remediation: String,
}

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
/// none) share a time-sliced GPU on node gpu-1 (the node has one GPU)` (the finding lists the
/// objects); for several, the tally's tenants and then each share in that form with its workloads
/// (`acme: ...; globex: ...; the node has one GPU`), strongest first, so that no
/// sentence puts a tenant where it cannot go or claims for a pair the certainty of another.
/// `what(share, one)` says what a share's tenants share and where (`one`: a single pair).
pub fn placed(ctx: &Context<'_>, tally: &Tally, what: impl Fn(&Share, bool) -> String) -> String {
    // Each place names its own tenants, unless they are all of the tally's and its pairs all of
    // its pairs: then "they".
    let whole = |s: &Share| {
        tally.shares.len() > 1 && s.tenants == tally.tenants && s.pairs() == tally.pairs()
    };
    // A place names its workloads only among several: of one, the finding's objects are they.
    let clause = |s: &Share, among: bool| {
        let whose = if among {
            format!("{}; ", who(ctx, &s.workloads, &s.tenants))
        } else {
            String::new()
        };
        format!(
            "{} {} {} ({whose}{})",
            if whole(s) {
                "they".to_string()
            } else {
                group_phrase(ctx, &s.tenants, &s.counts)
            },
            verb(s.certainty),
            what(s, s.single_pair().is_some()),
            s.reason
        )
    };
    match tally.shares.as_slice() {
        [one] => clause(one, false),
        shares => {
            let mut parts: Vec<String> = shares
                .iter()
                .take(PLACES_SHOWN)
                .map(|s| clause(s, true))
                .collect();
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
            format!(
                "the device plugin config behind the node's `{}` label",
                gpu_trust_model::labels::DEVICE_PLUGIN_CONFIG
            )
        }
        ConfigSource::Default | ConfigSource::Unknown => {
            "the device plugin config (ClusterPolicy `spec.devicePlugin.config`)".to_string()
        }
    }
}

/// Where NVIDIA's DRA driver hands what a tally shares to several tenants (every workload of the
/// tally gets its GPU through DRA, some through a claim whose devices go to several claims): how to
/// stop it, in words that follow "or"; `None` where the sharing is another's.
pub fn dra_unshare(ctx: &Context<'_>, tally: &Tally) -> Option<String> {
    let dra = |w: &WorkloadId| ctx.fleet.workloads.get(*w).map(|w| &w.gpu.dra);
    let consumable = !tally.workloads.is_empty()
        && tally
            .workloads
            .iter()
            .all(|w| dra(w).is_some_and(|d| !d.is_empty()))
        && tally
            .workloads
            .iter()
            .any(|w| dra(w).is_some_and(|d| d.iter().any(|c| c.shareable)));
    consumable.then(|| {
        format!(
            "run NVIDIA's DRA driver with `{}=disabled`, so that it allocates each device to one claim",
            gpu_trust_model::fleet::CONSUMABLE_SHARES_FLAG
        )
    })
}

/// The node pool advice for a tally: a taint and toleration that keep other tenants off a
/// tenant's nodes, naming the second tenant of a single pair (else for every tenant) and the one
/// node the tally's pairs meet on (`kubectl taint` takes one node name; `NODE` where they meet on
/// several).
pub fn pool_advice(ctx: &Context<'_>, tally: &Tally) -> String {
    let node = match tally.nodes.iter().collect::<Vec<_>>().as_slice() {
        [one] => ctx.node_name(**one),
        _ => "NODE",
    };
    match two_names(ctx, tally) {
        Some((_, b)) => format!(
            "taint the pool's nodes (`kubectl taint nodes {node} gpu-trust/tenant={b}:NoSchedule`) and give {b}'s workloads the matching toleration and a nodeSelector for the pool"
        ),
        None => format!(
            "give each tenant nodes of its own: taint them (`kubectl taint nodes {node} gpu-trust/tenant=TENANT:NoSchedule`) and give the tenant's workloads the matching toleration and a nodeSelector for them"
        ),
    }
}

/// The resources the tally's pairs share replicas of (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`),
/// sorted, as code spans joined with "and"; `None` when no shared device unit names one.
pub fn shared_resources(ctx: &Context<'_>, tally: &Tally) -> Option<String> {
    let names: BTreeSet<String> = tally
        .sites
        .iter()
        .filter_map(|i| ctx.site(*i)?.unit())
        .filter_map(|u| match u {
            Unit::SharedGpu { resource } => Some(resource.clone()),
            Unit::SharedMigInstance { profile } if !profile.is_empty() => {
                Some(catalogue::mig_resource(profile))
            }
            _ => None,
        })
        .map(|r| format!("`{r}`"))
        .collect();
    (!names.is_empty()).then(|| text::list(&names.into_iter().collect::<Vec<_>>()))
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

/// `accept: [{rule: GT207, tenants: [a, b], reason: ...}]` for one pair, or the form for any pair:
/// valid YAML, each name a plain scalar or quoted ([`yaml_name`]). A focused audit (a tenant's
/// view) names only its own tenants: the other of the pair is the placeholder `TENANT`.
pub fn accept_advice(ctx: &Context<'_>, rule: &str, tally: &Tally) -> String {
    match tally.single_pair() {
        Some((a, b)) => {
            let name = |t: TenantId| {
                if ctx.in_focus(t) {
                    yaml_name(ctx.tenant_name(t))
                } else {
                    OTHER_PLACEHOLDER.to_string()
                }
            };
            let hidden = if ctx.in_focus(a) && ctx.in_focus(b) {
                String::new()
            } else {
                format!(" ({OTHER_PLACEHOLDER}: the other tenant of the pair)")
            };
            format!(
                "`accept: [{{rule: {rule}, tenants: [{}, {}], reason: ...}}]`{hidden}",
                name(a),
                name(b)
            )
        }
        None => format!(
            "`accept: [{{rule: {rule}, tenants: [A, B], reason: ...}}]` per pair, or without `tenants` for all"
        ),
    }
}

/// What an `accept:` snippet of a focused audit writes for a tenant outside the focus.
const OTHER_PLACEHOLDER: &str = "TENANT";

/// A tenant name as a YAML flow scalar: plain when it reads back as this string (lower-case
/// letters, digits and `-`, starting with a letter, not a YAML 1.1 boolean or null word), else
/// double-quoted with YAML's escapes.
pub fn yaml_name(name: &str) -> String {
    const WORDS: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    let plain = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !WORDS.contains(&name);
    if plain {
        return name.to_string();
    }
    let mut out = String::from('"');
    for c in name.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
