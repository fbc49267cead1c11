//! A report as some tenants may see it: `gpu-trust serve`'s tenant view. What concerns the visible
//! tenants stays (their findings, the groups and matrix pairs they are in, their blast radius, the
//! GPU nodes they are on); every other tenant becomes [`OTHER_TENANT`], and its name, namespaces and
//! workloads are replaced by that label wherever they appear, so a tenant learns what it shares and
//! how badly, but not with whom.
//!
//! A view is made from an audit focused on the visible tenants ([`view`]), whose findings count
//! only their pairs in the places they reach; scoping a report of every tenant would keep, inside a
//! visible tenant's finding, the places and pairs of others it names alone.
//!
//! Two layers. [`scope`] rebuilds each part of the report it knows (filters, relabels, merges what
//! the label makes equal); then every text of the result goes through the [`Redactor`], which
//! replaces each hidden name where it stands as a whole word. A field added to the report later
//! that holds a hidden name is caught by the second layer when the caller also runs the rendered
//! view through [`Redactor::text`] (as `gpu-trust serve` does), and by the tests, which look for
//! every hidden name in the serialised view.
//!
//! Pure: no I/O, the same report and tenants give the same view.

use crate::audit::Prepared;
use crate::layout::{NodeLayout, Occupant, TenantPresence};
use crate::report::{
    AcceptanceSource, AcceptedEntry, AuditReport, Finding, FindingObject, GroupEntry, Matrix,
    MatrixPair, SeverityCounts, Summary,
};
use crate::{AuditInput, AuditOptions};
use gpu_trust_model::fleet::Fleet;
use gpu_trust_model::Certainty;
use gpu_trust_policy::Tenancy;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// What every tenant outside the view is called in it. Not a namespace name (spaces and
/// parentheses), so it can never be mistaken for a real tenant's.
pub const OTHER_TENANT: &str = "(other tenant)";

/// Replaces hidden names in text, each where it stands as a whole word: not preceded or followed by
/// a letter, digit, `-` or `_` (so hiding `ml` leaves `html` and `ml-serving` alone, and hiding
/// `team-b` hides it in `api/v1/namespaces/team-b/pods/x.json` and in `team-b.svc`).
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Hidden names made only of word characters: found by splitting the text into words.
    words: HashSet<String>,
    /// Other hidden names (with dots, spaces...), longest first: searched for one by one.
    phrases: Vec<String>,
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

impl Redactor {
    /// A redactor hiding `hidden` except what is in `shown` (a visible tenant's own names stay even
    /// when another tenant uses the same word, e.g. a workload `trainer` in both).
    pub fn new<'a>(
        hidden: impl IntoIterator<Item = &'a str>,
        shown: impl IntoIterator<Item = &'a str>,
    ) -> Redactor {
        let shown: HashSet<&str> = shown.into_iter().collect();
        let mut r = Redactor::default();
        for h in hidden {
            if h.is_empty() || h == OTHER_TENANT || shown.contains(h) {
                continue;
            }
            if h.chars().all(word_char) {
                r.words.insert(h.to_string());
            } else if !r.phrases.iter().any(|p| p == h) {
                r.phrases.push(h.to_string());
            }
        }
        r.phrases
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        r
    }

    /// Whether `name` is hidden (exactly).
    pub fn hides(&self, name: &str) -> bool {
        self.words.contains(name) || self.phrases.iter().any(|p| p == name)
    }

    /// The hidden names, sorted (for tests and for checking a rendered view).
    pub fn hidden(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .words
            .iter()
            .map(String::as_str)
            .chain(self.phrases.iter().map(String::as_str))
            .collect();
        all.sort_unstable();
        all
    }

    /// `text` with every hidden name replaced by [`OTHER_TENANT`].
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out: Cow<'t, str> = Cow::Borrowed(text);
        for phrase in &self.phrases {
            if out.contains(phrase.as_str()) {
                out = Cow::Owned(replace_bounded(&out, phrase));
            }
        }
        if self.words.is_empty() {
            return out;
        }
        // One pass over the words of the text.
        let s: &str = &out;
        let mut result = String::new();
        let mut last = 0;
        let mut start: Option<usize> = None;
        let mut changed = false;
        for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
            if i < s.len() && word_char(c) {
                start.get_or_insert(i);
                continue;
            }
            if let Some(b) = start.take() {
                if self.words.contains(&s[b..i]) {
                    result.push_str(&s[last..b]);
                    result.push_str(OTHER_TENANT);
                    last = i;
                    changed = true;
                }
            }
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

    /// Whether `text` still holds a hidden name as a whole word.
    pub fn leaks(&self, text: &str) -> bool {
        matches!(self.text(text), Cow::Owned(_))
    }
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

/// Every workload of the fleet as (namespace, name), with the name of its owning controller too:
/// the names [`scope`] hides when they are in another tenant's namespace, even where the report
/// does not list them as objects (a message naming a workload).
pub fn fleet_names(fleet: &Fleet) -> impl Iterator<Item = (&str, &str)> {
    fleet.workloads.iter().flat_map(|w| {
        let owner = w
            .owner
            .as_deref()
            .map(|o| o.rsplit('/').next().unwrap_or(o));
        std::iter::once(w.object.name.as_str())
            .chain(owner)
            .map(move |name| (w.namespace.as_str(), name))
    })
}

/// The view for the tenants `visible` of the audit of `fleet` and `tenancy` with `options`, and the
/// redactor it was made with: the audit focused on them ([`crate::AuditOptions::focus`]), so that
/// no finding counts a pair, names a place or judges a contract without one of them, then
/// [`scope`]d, so that every other tenant's names are hidden. This is what a tenant is served.
/// `prepared` is that audit's ([`Prepared::new`]), made once for all its views.
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
    scope(&report, visible, fleet_names(fleet))
}

/// The view of `report` for the tenants `visible`, and the redactor it was made with. `more` are
/// names of workloads by namespace ([`fleet_names`]): those in another tenant's namespace are
/// hidden too.
pub fn scope<'a>(
    report: &AuditReport,
    visible: &BTreeSet<String>,
    more: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> (AuditReport, Redactor) {
    let hidden_tenants: BTreeSet<&str> = report
        .tenants
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| !visible.contains(*t))
        .collect();
    let hidden_namespaces: BTreeSet<&str> = report
        .tenants
        .iter()
        .filter(|t| !visible.contains(&t.name))
        .flat_map(|t| t.namespaces.iter().map(String::as_str))
        .collect();
    let shown: Vec<&str> = report
        .tenants
        .iter()
        .filter(|t| visible.contains(&t.name))
        .flat_map(|t| {
            std::iter::once(t.name.as_str()).chain(t.namespaces.iter().map(String::as_str))
        })
        .collect();
    // Workloads of hidden namespaces named by the report.
    let mut hidden: Vec<&str> = hidden_tenants.iter().copied().collect();
    hidden.extend(hidden_namespaces.iter().copied());
    for f in &report.findings {
        for o in &f.objects {
            if o.namespace
                .as_deref()
                .is_some_and(|n| hidden_namespaces.contains(n))
            {
                hidden.push(&o.name);
            }
        }
    }
    for node in &report.layout {
        for gpu in &node.gpus {
            for o in gpu
                .tenants
                .iter()
                .chain(gpu.instances.iter().flat_map(|i| &i.tenants))
            {
                if !hidden_tenants.contains(o.tenant.as_str()) {
                    continue;
                }
                // `Pod ns/name`
                for w in &o.workloads {
                    let name = w.rsplit('/').next().unwrap_or(w);
                    hidden.push(name);
                }
            }
        }
    }
    hidden.extend(
        more.into_iter()
            .filter(|(ns, _)| hidden_namespaces.contains(ns))
            .map(|(_, name)| name),
    );
    let r = Redactor::new(hidden, shown.iter().copied());
    let relabel = |t: &str| -> String {
        if visible.contains(t) || !hidden_tenants.contains(t) {
            r.text(t).into_owned()
        } else {
            OTHER_TENANT.to_string()
        }
    };
    let sees = |tenants: &[String]| tenants.iter().any(|t| visible.contains(t));

    let groups: Vec<GroupEntry> = report
        .groups
        .iter()
        .filter(|g| sees(&g.tenants) || sees(&g.permitted_tenants))
        .map(|g| {
            let mut g = g.clone();
            g.tenants = relabel_all(&g.tenants, &relabel);
            g.permitted_tenants = relabel_all(&g.permitted_tenants, &relabel);
            for s in g
                .shares
                .iter_mut()
                .chain(g.separated_by.iter_mut())
                .chain(g.nodes.iter_mut())
            {
                r.own(s);
            }
            g
        })
        .collect();
    let kept_groups: BTreeSet<&str> = groups.iter().map(|g| g.id.as_str()).collect();

    let findings: Vec<Finding> = report
        .findings
        .iter()
        .filter(|f| sees(&f.tenants))
        .map(|f| {
            let mut f = f.clone();
            f.tenants = relabel_all(&f.tenants, &relabel);
            let mut objects: Vec<FindingObject> = Vec::new();
            for o in &f.objects {
                let o = if o
                    .namespace
                    .as_deref()
                    .is_some_and(|n| hidden_namespaces.contains(n))
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
                    let mut o = o.clone();
                    if let Some(n) = &mut o.namespace {
                        r.own(n);
                    }
                    r.own(&mut o.name);
                    r.own(&mut o.file);
                    if let Some(owner) = &mut o.owner {
                        r.own(owner);
                    }
                    o
                };
                if !objects.contains(&o) {
                    objects.push(o);
                }
            }
            f.objects = objects;
            for s in [&mut f.message, &mut f.remediation, &mut f.key] {
                r.own(s);
            }
            for s in f.nodes.iter_mut().chain(f.evidence.iter_mut()) {
                r.own(s);
            }
            if let Some(a) = &mut f.accepted {
                redact_accepted(&r, a);
            }
            // A focused report's accepted pairs are its tenants' already; where the list is whole,
            // what is left of it is counted.
            let whole = f.accepted_pair_count() == f.accepted_pairs.len();
            f.accepted_pairs.retain(|p| sees(&p.tenants));
            if whole {
                f.accepted_pair_count =
                    (!f.accepted_pairs.is_empty()).then_some(f.accepted_pairs.len());
            }
            for p in &mut f.accepted_pairs {
                p.tenants = pair(&p.tenants, &relabel);
                r.own(&mut p.reason);
                for s in &mut p.sources {
                    redact_source(&r, s);
                }
            }
            let mut open: Vec<[String; 2]> = f
                .open_pairs
                .iter()
                .filter(|p| sees(p.as_slice()))
                .map(|p| pair(p, &relabel))
                .collect();
            open.dedup();
            f.open_pairs = open;
            f.groups.retain(|g| kept_groups.contains(g.as_str()));
            // Where the visible tenants meet: only the places that hold one of their pairs, and
            // the nodes of those places.
            f.by_group.retain(|e| sees(&e.tenants));
            for e in &mut f.by_group {
                e.tenants = relabel_all(&e.tenants, &relabel);
                for n in &mut e.nodes {
                    r.own(n);
                }
                r.own(&mut e.reason);
            }
            if !f.by_group.is_empty() {
                let reached: BTreeSet<&String> = f.by_group.iter().flat_map(|e| &e.nodes).collect();
                f.nodes.retain(|n| reached.contains(n));
            }
            f.covered_pairs.retain(|p| sees(p.tenants.as_slice()));
            for p in &mut f.covered_pairs {
                p.tenants = pair(&p.tenants, &relabel);
                p.groups.retain(|g| kept_groups.contains(g.as_str()));
            }
            // Another tenant's annotations are its own business.
            f.one_sided_acceptances
                .retain(|a| visible.contains(&a.tenant));
            for a in &mut f.one_sided_acceptances {
                a.missing_tenants = relabel_all(&a.missing_tenants, &relabel);
                for src in &mut a.sources {
                    redact_source(&r, src);
                }
                for w in &mut a.uncovered_workloads {
                    r.own(w);
                }
                r.own(&mut a.message);
            }
            // A pair's explanation is never part of a served view.
            f.explained = None;
            f
        })
        .collect();

    let mut summary = Summary {
        tenants: visible
            .iter()
            .filter(|v| report.tenants.iter().any(|t| &t.name == *v))
            .count(),
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
        r.own(&mut l.in_play);
        for g in &mut l.gaps {
            r.own(&mut g.message);
            for n in &mut g.nodes {
                r.own(n);
            }
        }
    }

    let mut skipped = report.skipped.clone();
    for s in &mut skipped {
        r.own(&mut s.file);
        r.own(&mut s.error);
    }
    let mut disabled_rules = report.disabled_rules.clone();
    for d in &mut disabled_rules {
        r.own(&mut d.reason);
        r.own(&mut d.source);
    }

    let view = AuditReport {
        schema: report.schema,
        summary,
        coverage,
        tenants: report
            .tenants
            .iter()
            .filter(|t| visible.contains(&t.name))
            .cloned()
            .collect(),
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
            .map(|p| crate::report::PoolEntry {
                tenants: relabel_all(&p.tenants, &relabel),
                ..p.clone()
            })
            .collect(),
        layout: report
            .layout
            .iter()
            .filter(|n| n.tenants.iter().any(|t| visible.contains(&t.tenant)))
            .map(|n| node(n, &relabel, &r))
            .collect(),
        // What to fix first is decided for the whole cluster, never for a view.
        fix_first: None,
        actions: None,
        baseline: None,
        provenance: None,
        verdict: None,
    };
    (view, r)
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

fn redact_source(r: &Redactor, s: &mut AcceptanceSource) {
    r.own(&mut s.file);
    for t in [&mut s.object, &mut s.annotation].into_iter().flatten() {
        r.own(t);
    }
}

fn redact_accepted(r: &Redactor, a: &mut AcceptedEntry) {
    r.own(&mut a.reason);
    for s in &mut a.sources {
        redact_source(r, s);
    }
}

/// The matrix's pairs of visible tenants as they are; the pairs of a visible tenant with others
/// become one pair with [`OTHER_TENANT`] (the lowest trust, the worst severity, every incident at
/// its strongest certainty); pairs of two others are left out.
fn matrix(
    m: &Matrix,
    visible: &BTreeSet<String>,
    tenants: &[crate::report::TenantEntry],
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
fn node(n: &NodeLayout, relabel: &impl Fn(&str) -> String, r: &Redactor) -> NodeLayout {
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
    for gpu in &mut n.gpus {
        gpu.tenants = occupants(&gpu.tenants, relabel, r);
        for i in &mut gpu.instances {
            i.tenants = occupants(&i.tenants, relabel, r);
        }
        if let Some(u) = &mut gpu.uuid {
            r.own(u);
        }
    }
    r.own(&mut n.file);
    n
}

fn occupants(list: &[Occupant], relabel: &impl Fn(&str) -> String, r: &Redactor) -> Vec<Occupant> {
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
                }),
            }
        } else {
            let mut o = o.clone();
            o.tenant = tenant;
            for w in &mut o.workloads {
                r.own(w);
            }
            out.push(o);
        }
    }
    out.sort_by(|a, b| a.tenant.cmp(&b.tenant));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_hidden_as_whole_words_only() {
        let r = Redactor::new(["ml", "team-b", "vllm.server", "Team B"], ["team-a"]);
        assert_eq!(
            r.text("html ml-serving ml"),
            "html ml-serving (other tenant)"
        );
        assert_eq!(
            r.text("api/v1/namespaces/team-b/pods/x.json team-b.svc team-bb"),
            "api/v1/namespaces/(other tenant)/pods/x.json (other tenant).svc team-bb"
        );
        assert_eq!(
            r.text("on vllm.server2 and vllm.server."),
            "on vllm.server2 and (other tenant)."
        );
        assert_eq!(r.text("Team B and Team Bee"), "(other tenant) and Team Bee");
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        assert!(r.leaks("x ml y") && !r.leaks("xml"));
    }

    #[test]
    fn a_visible_name_is_never_hidden() {
        let r = Redactor::new(["trainer", "team-b"], ["trainer"]);
        assert_eq!(r.text("trainer team-b"), "trainer (other tenant)");
        assert!(!r.hides("trainer") && r.hides("team-b"));
    }
}
