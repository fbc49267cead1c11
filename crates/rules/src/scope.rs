//! A report as some tenants may see it: `gpu-trust serve`'s tenant view, `audit --view` and the
//! OpenReports. What concerns the visible tenants stays (their findings, the groups and matrix
//! pairs they are in, their blast radius, the GPU nodes they are on); every other tenant becomes
//! [`OTHER_TENANT`], so a tenant learns what it shares and how badly, but not with whom.
//!
//! A view is made from an audit focused on the visible tenants ([`view`]), whose findings count
//! only their pairs in the places they reach; scoping a report of every tenant would keep, inside a
//! visible tenant's finding, the places and pairs of others it names alone.
//!
//! The view is built field by field from that report ([`scope`]), never by rewriting rendered
//! text: what has structure (severities, certainties, counts, rule codes, group ids, the kinds of
//! shares) is copied as it is; lists of tenants are relabelled; an object in another tenant's
//! namespace becomes an anonymous object; another tenant's acceptances (their reasons are its own
//! free text) and the documents that could not be read whose path names it (a live read's API
//! path names the namespace) are left out. Only the
//! sentences the audit wrote (messages, fixes, reasons) go through the [`Redactor`], which hides
//! another tenant's name, its namespaces, and whatever a path names inside them (`team-b/web`,
//! `api/v1/namespaces/team-b/pods/x.json`): names a tenant chooses for its own objects are hidden
//! with their namespace, so no neighbour's pod name can hide a word of the viewer's report, and
//! none of the viewer's own names (its tenant, namespaces, workloads, the nodes) is ever hidden.
//!
//! Pure: no I/O, the same report and tenants give the same view.

use crate::audit::Prepared;
use crate::{AuditInput, AuditOptions};
use gpu_trust_model::fleet::Fleet;
use gpu_trust_model::report::layout::{sort_by_certainty, NodeLayout, Occupant, TenantPresence};
use gpu_trust_model::report::{
    AcceptanceSource, AuditReport, Finding, FindingObject, GroupEntry, Matrix, MatrixPair,
    PoolEntry, SeverityCounts, Summary, TenantEntry,
};
use gpu_trust_model::Certainty;
use gpu_trust_policy::Tenancy;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What every tenant outside the view is called in it. Not a namespace name (spaces and
/// parentheses), so it can never be mistaken for a real tenant's.
pub const OTHER_TENANT: &str = "(other tenant)";

/// What a view says of an acceptance whose every source is another tenant's annotation (its
/// reason is that tenant's own text).
pub const OTHER_REASON: &str = "(accepted by another tenant; its reason is not shown)";

/// Hides other tenants' names in the sentences of a view. A hidden tenant name or namespace is
/// hidden where it stands as a whole word (not preceded or followed by a letter, digit, `-` or
/// `_`: hiding `ml` leaves `html` and `ml-serving` alone); a hidden namespace takes the path that
/// follows it along (`team-b/web`, `team-b/pods/x.json`), so the names a tenant gives its objects
/// go with it; and a name that follows a shown namespace (`ml/team-b`, the viewer's object) is
/// left whole.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Other tenants' names made only of word characters.
    words: HashSet<String>,
    /// Other tenants' namespaces, each with whether it is hidden where it stands alone too (not
    /// when the view may show the same word: a node or a workload of the viewer's so named).
    namespaces: HashMap<String, bool>,
    /// Other tenants' names with other characters (dots, spaces...), longest first.
    phrases: Vec<String>,
    /// Namespaces whose objects the view may name: a name after `ns/` is one of them.
    shown_namespaces: HashSet<String>,
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

/// Characters of an object's name in a path (`vllm.server-0`).
fn name_char(c: char) -> bool {
    word_char(c) || c == '.'
}

impl Redactor {
    /// A redactor hiding the tenant names `tenants` and the namespaces `namespaces`, except what is
    /// in `shown` (a visible tenant's own names stay even when another tenant uses the same word: a
    /// namespace so named is then hidden only with the path it leads); `shown_namespaces` are the
    /// namespaces whose objects the view names.
    pub fn new<'a>(
        tenants: impl IntoIterator<Item = &'a str>,
        namespaces: impl IntoIterator<Item = &'a str>,
        shown: impl IntoIterator<Item = &'a str>,
        shown_namespaces: impl IntoIterator<Item = &'a str>,
    ) -> Redactor {
        let shown: HashSet<&str> = shown.into_iter().collect();
        let mut r = Redactor {
            shown_namespaces: shown_namespaces.into_iter().map(str::to_string).collect(),
            ..Redactor::default()
        };
        let keep = |h: &str| !h.is_empty() && h != OTHER_TENANT && !shown.contains(h);
        for n in namespaces {
            if !n.is_empty() && !r.shown_namespaces.contains(n) {
                r.namespaces.insert(n.to_string(), keep(n));
            }
        }
        for t in tenants.into_iter().filter(|t| keep(t)) {
            if t.chars().all(word_char) {
                r.words.insert(t.to_string());
            } else if !r.phrases.iter().any(|p| p == t) {
                r.phrases.push(t.to_string());
            }
        }
        r.phrases
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        r
    }

    /// Whether `name` is hidden (exactly).
    pub fn hides(&self, name: &str) -> bool {
        self.words.contains(name)
            || self.namespaces.get(name) == Some(&true)
            || self.phrases.iter().any(|p| p == name)
    }

    /// `text` with every hidden name replaced by [`OTHER_TENANT`].
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out: Cow<'t, str> = Cow::Borrowed(text);
        for phrase in &self.phrases {
            if out.contains(phrase.as_str()) {
                out = Cow::Owned(replace_bounded(&out, phrase));
            }
        }
        if self.words.is_empty() && self.namespaces.is_empty() {
            return out;
        }
        let s: &str = &out;
        let mut result = String::new();
        let mut last = 0;
        let mut changed = false;
        // The word before the current one, when a `/` joins them.
        let mut previous: Option<(usize, usize)> = None;
        let mut i = 0;
        while i < s.len() {
            let Some(c) = s[i..].chars().next() else {
                break;
            };
            if !word_char(c) {
                if c != '/' {
                    previous = None;
                }
                i += c.len_utf8();
                continue;
            }
            let start = i;
            let mut end = start + run(&s[start..], word_char);
            let after_slash = start > 0 && s[..start].ends_with('/');
            let parent = previous
                .filter(|(_, e)| after_slash && *e + 1 == start)
                .map(|(b, e)| &s[b..e]);
            if parent.is_some_and(|p| self.shown_namespaces.contains(p)) {
                // A shown object's name, dots included: left whole.
                end = start + run(&s[start..], name_char);
            } else if let Some(bare) = self.namespaces.get(&s[start..end]) {
                // The namespace and the path it leads.
                let path = s[end..].starts_with('/') && s[end + 1..].starts_with(name_char);
                while s[end..].starts_with('/') && s[end + 1..].starts_with(name_char) {
                    end += 1 + run(&s[end + 1..], name_char);
                }
                while s[..end].ends_with('.') {
                    end -= 1;
                }
                if path || *bare {
                    result.push_str(&s[last..start]);
                    result.push_str(OTHER_TENANT);
                    last = end;
                    changed = true;
                }
            } else if self.words.contains(&s[start..end]) {
                result.push_str(&s[last..start]);
                result.push_str(OTHER_TENANT);
                last = end;
                changed = true;
            }
            previous = Some((start, end));
            i = end;
        }
        if !changed {
            return out;
        }
        result.push_str(&s[last..]);
        Cow::Owned(result)
    }

    fn own(&self, text: &mut String) {
        if let Cow::Owned(t) = self.text(text) {
            *text = t;
        }
    }

    /// Whether `text` holds a hidden name.
    pub fn leaks(&self, text: &str) -> bool {
        matches!(self.text(text), Cow::Owned(_))
    }
}

/// The length of the longest prefix of `s` whose characters all satisfy `f`.
fn run(s: &str, f: fn(char) -> bool) -> usize {
    s.find(|c: char| !f(c)).unwrap_or(s.len())
}

fn replace_bounded(text: &str, needle: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in text.match_indices(needle) {
        if i < last {
            continue;
        }
        let before = text[..i].chars().next_back();
        let after = text[i + needle.len()..].chars().next();
        if before.is_some_and(word_char) || after.is_some_and(word_char) {
            continue;
        }
        out.push_str(&text[last..i]);
        out.push_str(OTHER_TENANT);
        last = i + needle.len();
    }
    out.push_str(&text[last..]);
    out
}

/// What a view may name besides its tenants and their namespaces, which no hidden name covers: the
/// viewer's workloads (and their owners), the nodes, and the namespaces of no tenant (platform
/// namespaces, whose objects a view names: the GPU Operator's ConfigMaps).
#[derive(Debug, Clone, Default)]
pub struct Shown<'a> {
    pub names: Vec<&'a str>,
    pub namespaces: Vec<&'a str>,
}

impl<'a> Shown<'a> {
    /// What the tenants `visible` may see named in the audit of `fleet` under `tenancy`.
    pub fn of(fleet: &'a Fleet, tenancy: &'a Tenancy, visible: &BTreeSet<String>) -> Shown<'a> {
        let theirs = |ns: &str| {
            tenancy
                .tenant_of(ns)
                .is_some_and(|t| visible.contains(tenancy.name(t)))
        };
        let mut shown = Shown::default();
        for w in fleet.workloads.iter().filter(|w| theirs(&w.namespace)) {
            shown.names.push(&w.object.name);
            if let Some(owner) = &w.owner {
                shown.names.push(owner.rsplit('/').next().unwrap_or(owner));
            }
        }
        shown
            .names
            .extend(fleet.nodes.iter().map(|n| n.name.as_str()));
        shown.namespaces.extend(
            fleet
                .namespaces
                .iter()
                .map(|n| n.name.as_str())
                .filter(|n| tenancy.tenant_of(n).is_none()),
        );
        shown
    }
}

/// The view for the tenants `visible` of the audit of `fleet` and `tenancy` with `options`, and the
/// redactor of its sentences: the audit focused on them ([`crate::AuditOptions::focus`]), so that
/// no finding counts a pair, names a place or judges a contract without one of them, then
/// [`scope`]d, so that no other tenant is named. This is what a tenant is served. `prepared` is
/// that audit's ([`Prepared::new`]), made once for all its views.
pub fn view(
    fleet: &Fleet,
    tenancy: &Tenancy,
    options: &AuditOptions,
    prepared: &Prepared,
    visible: &BTreeSet<String>,
) -> (AuditReport, Redactor) {
    let mut focused = options.clone();
    focused.focus = Some(visible.clone());
    focused.pair = None;
    let report = prepared.report(&AuditInput {
        fleet,
        tenancy,
        options: &focused,
    });
    scope(&report, visible, &Shown::of(fleet, tenancy, visible))
}

/// What a view of some tenants may show of a report: who is visible, their namespaces and the
/// hidden tenants', and the redactor of the audit's sentences.
struct Viewer<'a> {
    visible: &'a BTreeSet<String>,
    own_namespaces: BTreeSet<&'a str>,
    hidden_namespaces: BTreeSet<&'a str>,
    r: Redactor,
}

impl<'a> Viewer<'a> {
    /// The names the view hides (the `hidden` tenants and their namespaces) and those it may show
    /// (the `seen` tenants', their namespaces and what `shown` holds).
    fn new(
        visible: &'a BTreeSet<String>,
        seen: &[&'a TenantEntry],
        hidden: &[&'a TenantEntry],
        shown: &Shown<'_>,
    ) -> Viewer<'a> {
        let namespaces = |list: &[&'a TenantEntry]| -> BTreeSet<&'a str> {
            list.iter()
                .flat_map(|t| t.namespaces.iter().map(String::as_str))
                .collect()
        };
        let (own_namespaces, hidden_namespaces) = (namespaces(seen), namespaces(hidden));
        let r = Redactor::new(
            hidden.iter().map(|t| t.name.as_str()),
            hidden_namespaces.iter().copied(),
            seen.iter()
                .map(|t| t.name.as_str())
                .chain(own_namespaces.iter().copied())
                .chain(shown.names.iter().copied()),
            own_namespaces
                .iter()
                .copied()
                .chain(shown.namespaces.iter().copied()),
        );
        Viewer {
            visible,
            own_namespaces,
            hidden_namespaces,
            r,
        }
    }

    /// A visible tenant by its name, any other as `(other tenant)`.
    fn relabel(&self, t: &str) -> String {
        if self.visible.contains(t) {
            t.to_string()
        } else {
            OTHER_TENANT.to_string()
        }
    }

    fn sees(&self, tenants: &[String]) -> bool {
        tenants.iter().any(|t| self.visible.contains(t))
    }

    /// An acceptance as the view shows it: only its sources the view may show (a policy entry, the
    /// platform's, or an annotation in a visible tenant's namespace), and their reasons redacted.
    fn accepted(&self, reason: &mut String, sources: &mut Vec<AcceptanceSource>) {
        sources.retain(|s| {
            s.namespace
                .as_deref()
                .is_none_or(|ns| self.own_namespaces.contains(ns))
        });
        let mut reasons: Vec<String> = sources
            .iter()
            .map(|s| self.r.text(&s.reason).into_owned())
            .collect();
        reasons.sort();
        reasons.dedup();
        *reason = if reasons.is_empty() {
            OTHER_REASON.to_string()
        } else {
            reasons.join("; ")
        };
    }

    /// A finding of a visible tenant as the view shows it: other tenants and their objects
    /// anonymous, its sentences redacted, only the pairs, groups and nodes where a visible tenant
    /// meets another, only the visible tenants' acceptances, and no pair's explanation.
    fn finding(&self, f: &Finding, kept_groups: &BTreeSet<&str>) -> Finding {
        let relabel = |t: &str| self.relabel(t);
        let mut f = f.clone();
        f.tenants = relabel_all(&f.tenants, &relabel);
        let mut objects: Vec<FindingObject> = Vec::new();
        for o in &f.objects {
            let o = if o
                .namespace
                .as_deref()
                .is_some_and(|n| self.hidden_namespaces.contains(n))
            {
                FindingObject {
                    kind: o.kind.clone(),
                    namespace: Some(OTHER_TENANT.to_string()),
                    name: OTHER_TENANT.to_string(),
                    file: OTHER_TENANT.to_string(),
                    line: 0,
                    pods: None,
                    owner: None,
                }
            } else {
                o.clone()
            };
            if !objects.contains(&o) {
                objects.push(o);
            }
        }
        f.objects = objects;
        for s in [&mut f.message, &mut f.remediation, &mut f.key] {
            self.r.own(s);
        }
        for s in &mut f.evidence {
            self.r.own(s);
        }
        if let Some(a) = &mut f.accepted {
            self.accepted(&mut a.reason, &mut a.sources);
        }
        // A focused report's accepted pairs are its tenants' already; where the list is whole,
        // what is left of it is counted.
        let whole = f.accepted_pair_count() == f.accepted_pairs.len();
        f.accepted_pairs.retain(|p| self.sees(&p.tenants));
        if whole {
            f.accepted_pair_count =
                (!f.accepted_pairs.is_empty()).then_some(f.accepted_pairs.len());
        }
        for p in &mut f.accepted_pairs {
            p.tenants = pair(&p.tenants, &relabel);
            self.accepted(&mut p.reason, &mut p.sources);
        }
        let mut open: Vec<[String; 2]> = f
            .open_pairs
            .iter()
            .filter(|p| self.sees(p.as_slice()))
            .map(|p| pair(p, &relabel))
            .collect();
        open.dedup();
        f.open_pairs = open;
        f.groups.retain(|g| kept_groups.contains(g.as_str()));
        // Where the visible tenants meet: only the places that hold one of their pairs, and
        // the nodes of those places.
        f.by_group.retain(|e| self.sees(&e.tenants));
        for e in &mut f.by_group {
            e.tenants = relabel_all(&e.tenants, &relabel);
            self.r.own(&mut e.reason);
        }
        if !f.by_group.is_empty() {
            let reached: BTreeSet<&String> = f.by_group.iter().flat_map(|e| &e.nodes).collect();
            f.nodes.retain(|n| reached.contains(n));
        }
        f.covered_pairs.retain(|p| self.sees(p.tenants.as_slice()));
        for p in &mut f.covered_pairs {
            p.tenants = pair(&p.tenants, &relabel);
            p.groups.retain(|g| kept_groups.contains(g.as_str()));
        }
        // Another tenant's annotations are its own business; a visible tenant's are its own.
        f.one_sided_acceptances
            .retain(|a| self.visible.contains(&a.tenant));
        for a in &mut f.one_sided_acceptances {
            a.missing_tenants = relabel_all(&a.missing_tenants, &relabel);
            self.r.own(&mut a.message);
        }
        // A pair's explanation is never part of a served view.
        f.explained = None;
        f
    }
}

/// The view of `report` for the tenants `visible`, built field by field, and the redactor of its
/// sentences. `shown` is what else the view may name ([`Shown::of`]).
pub fn scope(
    report: &AuditReport,
    visible: &BTreeSet<String>,
    shown: &Shown<'_>,
) -> (AuditReport, Redactor) {
    let (seen, hidden): (Vec<_>, Vec<_>) = report
        .tenants
        .iter()
        .partition(|t| visible.contains(&t.name));
    let v = Viewer::new(visible, &seen, &hidden, shown);
    let relabel = |t: &str| v.relabel(t);
    let groups: Vec<GroupEntry> = report
        .groups
        .iter()
        .filter(|g| v.sees(&g.tenants) || v.sees(&g.permitted_tenants))
        .map(|g| {
            let mut g = g.clone();
            g.tenants = relabel_all(&g.tenants, &relabel);
            g.permitted_tenants = relabel_all(&g.permitted_tenants, &relabel);
            g
        })
        .collect();
    let kept_groups: BTreeSet<&str> = groups.iter().map(|g| g.id.as_str()).collect();
    let findings: Vec<Finding> = report
        .findings
        .iter()
        .filter(|f| v.sees(&f.tenants))
        .map(|f| v.finding(f, &kept_groups))
        .collect();
    let mut summary = Summary {
        tenants: seen.len(),
        nodes: report.summary.nodes,
        gpus: report.summary.gpus,
        findings: SeverityCounts::default(),
        accepted: 0,
    };
    for f in &findings {
        if f.accepted.is_some() {
            summary.accepted += 1;
        } else {
            summary.findings.add(f.severity);
        }
    }

    let mut coverage = report.coverage.clone();
    for l in &mut coverage.layers {
        v.r.own(&mut l.in_play);
        for g in &mut l.gaps {
            v.r.own(&mut g.message);
        }
    }

    // A document of another tenant's namespace that could not be read is its own business (the
    // coverage still counts it).
    let mut skipped = report.skipped.clone();
    skipped.retain(|s| !v.r.leaks(&s.file));
    for s in &mut skipped {
        v.r.own(&mut s.error);
    }
    let mut disabled_rules = report.disabled_rules.clone();
    for d in &mut disabled_rules {
        v.r.own(&mut d.reason);
    }

    let view = AuditReport {
        schema: report.schema,
        summary,
        coverage,
        tenants: seen.into_iter().cloned().collect(),
        findings,
        groups,
        blast_radius: report
            .blast_radius
            .iter()
            .filter(|b| visible.contains(&b.tenant))
            .cloned()
            .collect(),
        matrix: matrix(&report.matrix, visible, &report.tenants),
        skipped,
        disabled_rules,
        pair: None,
        advisory_data: report.advisory_data.clone(),
        pools: report
            .pools
            .iter()
            .filter(|p| p.tenants.iter().any(|t| visible.contains(t)))
            .map(|p| PoolEntry {
                tenants: relabel_all(&p.tenants, &relabel),
                ..p.clone()
            })
            .collect(),
        layout: report
            .layout
            .iter()
            .filter(|n| n.tenants.iter().any(|t| visible.contains(&t.tenant)))
            .map(|n| node(n, &relabel))
            .collect(),
        // What to fix first is decided for the whole cluster, never for a view.
        fix_first: None,
        actions: None,
        baseline: None,
        provenance: None,
        verdict: None,
    };
    (view, v.r)
}

fn relabel_all(tenants: &[String], relabel: &impl Fn(&str) -> String) -> Vec<String> {
    let set: BTreeSet<String> = tenants.iter().map(|t| relabel(t)).collect();
    set.into_iter().collect()
}

fn pair(p: &[String; 2], relabel: &impl Fn(&str) -> String) -> [String; 2] {
    let mut out = [relabel(&p[0]), relabel(&p[1])];
    out.sort();
    out
}

/// The matrix's pairs of visible tenants as they are; the pairs of a visible tenant with others
/// become one pair with [`OTHER_TENANT`] (the lowest trust, the worst severity, every incident at
/// its strongest certainty); pairs of two others are left out.
fn matrix(
    m: &Matrix,
    visible: &BTreeSet<String>,
    tenants: &[gpu_trust_model::report::TenantEntry],
) -> Matrix {
    let mut pairs: BTreeMap<[String; 2], MatrixPair> = BTreeMap::new();
    for p in &m.pairs {
        let [a, b] = &p.tenants;
        let key = match (visible.contains(a), visible.contains(b)) {
            (true, true) => p.tenants.clone(),
            (true, false) => sorted([a.clone(), OTHER_TENANT.to_string()]),
            (false, true) => sorted([b.clone(), OTHER_TENANT.to_string()]),
            (false, false) => continue,
        };
        match pairs.get_mut(&key) {
            None => {
                let mut p = p.clone();
                p.tenants = key.clone();
                pairs.insert(key, p);
            }
            Some(merged) => {
                merged.trust = merged.trust.min(p.trust);
                merged.severity = merged.severity.max(p.severity);
                for (incident, c) in &p.incidents {
                    let e = merged.incidents.entry(*incident).or_insert(*c);
                    *e = (*e).min(*c);
                }
            }
        }
    }
    let mut names: Vec<String> = m
        .tenants
        .iter()
        .filter(|t| visible.contains(*t))
        .cloned()
        .collect();
    if pairs.keys().any(|k| k.iter().any(|t| t == OTHER_TENANT)) {
        names.push(OTHER_TENANT.to_string());
    }
    let omitted = tenants
        .iter()
        .filter(|t| visible.contains(&t.name) && !m.tenants.contains(&t.name))
        .count();
    Matrix {
        tenants: names,
        omitted,
        pairs: pairs.into_values().collect(),
    }
}

fn sorted(mut p: [String; 2]) -> [String; 2] {
    p.sort();
    p
}

/// A GPU node with the other tenants merged into one occupant of each GPU and instance, without
/// their workloads' names.
fn node(n: &NodeLayout, relabel: &impl Fn(&str) -> String) -> NodeLayout {
    let mut n = n.clone();
    let mut presence: BTreeMap<String, Certainty> = BTreeMap::new();
    for t in &n.tenants {
        let e = presence.entry(relabel(&t.tenant)).or_insert(t.certainty);
        *e = (*e).min(t.certainty);
    }
    n.tenants = presence
        .into_iter()
        .map(|(tenant, certainty)| TenantPresence { tenant, certainty })
        .collect();
    sort_by_certainty(&mut n.tenants, |t| (t.certainty, &t.tenant));
    for gpu in &mut n.gpus {
        gpu.tenants = occupants(&gpu.tenants, relabel);
        for i in &mut gpu.instances {
            i.tenants = occupants(&i.tenants, relabel);
        }
    }
    // What was allocated to the tenants in view; the others' allocations are not theirs to see.
    n.allocations.retain(|a| relabel(&a.tenant) != OTHER_TENANT);
    n
}

fn occupants(list: &[Occupant], relabel: &impl Fn(&str) -> String) -> Vec<Occupant> {
    let mut out: Vec<Occupant> = Vec::new();
    for o in list {
        let tenant = relabel(&o.tenant);
        if tenant == OTHER_TENANT {
            match out.iter_mut().find(|x| x.tenant == OTHER_TENANT) {
                Some(x) => {
                    x.certainty = x.certainty.min(o.certainty);
                    x.workload_count += o.workload_count;
                    for m in &o.mechanisms {
                        if !x.mechanisms.contains(m) {
                            x.mechanisms.push(*m);
                        }
                    }
                    x.mechanisms.sort();
                }
                None => out.push(Occupant {
                    tenant,
                    certainty: o.certainty,
                    mechanisms: o.mechanisms.clone(),
                    workloads: Vec::new(),
                    workload_count: o.workload_count,
                    recorded: Vec::new(),
                }),
            }
        } else {
            let mut o = o.clone();
            o.tenant = tenant;
            out.push(o);
        }
    }
    sort_by_certainty(&mut out, |o| (o.certainty, &o.tenant));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new(
            ["ml", "Team B", "trainer"],
            ["team-b", "gpu-1"],
            ["trainer", "gpu-1"],
            ["team-a", "gpu-operator"],
        )
    }

    #[test]
    fn names_are_hidden_as_whole_words_only() {
        let r = redactor();
        assert_eq!(
            r.text("html ml-serving ml"),
            "html ml-serving (other tenant)"
        );
        assert_eq!(r.text("Team B and Team Bee"), "(other tenant) and Team Bee");
        assert_eq!(
            r.text("team-b.svc team-bb team-b"),
            "(other tenant).svc team-bb (other tenant)"
        );
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        assert!(r.leaks("x ml y") && !r.leaks("xml"));
    }

    /// A hidden namespace takes the names its tenant gave its objects along: a neighbour's pod
    /// named `critical` hides nothing else of the sentence.
    #[test]
    fn a_hidden_namespace_takes_its_paths_along() {
        let r = redactor();
        assert_eq!(
            r.text("Pod team-b/critical (1 pod) is critical; see team-b/pods/x.json."),
            "Pod (other tenant) (1 pod) is critical; see (other tenant)."
        );
        assert_eq!(
            r.text("api/v1/namespaces/team-b/pods/vllm.server-0.json"),
            "api/v1/namespaces/(other tenant)"
        );
        assert_eq!(
            r.text("Deployment/team-b/web and Deployment/team-a/web"),
            "Deployment/(other tenant) and Deployment/team-a/web"
        );
    }

    #[test]
    fn a_visible_name_is_never_hidden() {
        let r = redactor();
        assert!(!r.hides("trainer") && r.hides("team-b") && r.hides("ml"));
        // The viewer's objects keep their names, whatever other tenants are called; a namespace
        // named like the viewer's node is hidden only with its objects.
        assert_eq!(
            r.text("trainer on gpu-1: team-a/team-b.ml and gpu-operator/ml, not gpu-1/x"),
            "trainer on gpu-1: team-a/team-b.ml and gpu-operator/ml, not (other tenant)"
        );
    }
}
