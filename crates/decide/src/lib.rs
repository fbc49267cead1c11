//! From findings to decisions: the fewest changes that close every open finding at or above a
//! threshold, each proven the honest way, by applying it to the input's objects and auditing them
//! again from the same input (the same policy, options and advisory data).
//!
//! - [`candidates`]: the changes worth trying, found in the model and the report (moves of the
//!   workloads the findings name, driver upgrades the advisory data has fixes for); nothing here
//!   predicts what a change closes.
//! - [`documents`]: the input's objects with a change applied, written again.
//! - [`decide`]: each candidate audited alone (what it closes; one that opens a finding at or above
//!   the threshold is dropped), the fewest of them that close everything any closes (every set tried
//!   when the candidates are few, else a greedy choice, and the report says which), then audited
//!   together in that order, each kept only where it adds to what those before it close (two moves
//!   can undo each other), and what remains once all are applied.
//!
//! Each trial reads the whole input again, so the number of trials is bounded by the size of the
//! input ([`TRIAL_BYTES`], [`MAX_TRIALS`]); what was not tried is counted in the report.

pub mod candidates;
pub mod documents;

use candidates::Candidate;
use documents::{Edit, Target};
use gpu_trust_ingest::{Options as IngestOptions, SourceInput};
use gpu_trust_model::fleet::Fleet;
use gpu_trust_model::Severity;
use gpu_trust_policy::Policy;
use gpu_trust_rules::report::{
    Action, AuditReport, Blocked, FixFirst, Opened, Search, SeverityCounts,
};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use std::collections::{BTreeMap, BTreeSet};

/// Trials read the input again at most this many bytes in all: what to fix first costs at most
/// about the audit of this much more input.
pub const TRIAL_BYTES: usize = 32 << 20;
/// The most trials, whatever the input's size.
pub const MAX_TRIALS: usize = 64;
/// Up to this many useful candidates, every set of them is tried for the fewest (2^16 sets of
/// bit operations, no audit).
pub const EXACT_CANDIDATES: usize = 16;

/// What an audit's decisions are made from.
pub struct Input<'a> {
    /// The input's documents as read (their names as the report locates them); `None` when they
    /// were too large to keep.
    pub inputs: Option<&'a [SourceInput]>,
    pub ingest: &'a IngestOptions,
    pub policy: &'a Policy,
    /// The audit's options (the same day, advisory data, evidence, skipped documents).
    pub options: &'a AuditOptions,
    pub fleet: &'a Fleet,
    pub report: &'a AuditReport,
    /// Actions are chosen to close the open findings at or above this severity.
    pub threshold: Severity,
    /// Rules the configuration turned off: their findings are left out of every audit here too.
    pub disabled: &'a [&'a str],
}

/// The decisions, and the input with every action applied (for `--emit-fixes`).
pub struct Decided {
    pub fix_first: FixFirst,
    pub actions: Vec<Action>,
    /// The files the actions change, written again with all of them applied.
    pub patched: Vec<SourceInput>,
}

/// A candidate and the findings it closes.
type Closing<'c> = (&'c Candidate, BTreeSet<String>);

/// What an audit of a changed input says: its open findings by key.
type Open = BTreeMap<String, Seen>;

/// What a finding is about, to tell whether a change made it worse.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    rule: String,
    severity: Severity,
    tenants: BTreeSet<String>,
    pairs: usize,
}

impl Seen {
    /// Another rule's, more severe, or about a tenant or more pairs than `was`.
    fn worse_than(&self, was: &Seen) -> bool {
        self.rule != was.rule
            || self.severity > was.severity
            || self.pairs > was.pairs
            || !self.tenants.is_subset(&was.tenants)
    }
}

/// Chooses the actions and audits them together. Pure: the input is given, nothing is read.
pub fn decide(input: &Input<'_>) -> Decided {
    let before = open(input, input.report);
    let goal: BTreeSet<String> = before
        .iter()
        .filter(|(_, s)| s.severity >= input.threshold)
        .map(|(k, _)| k.clone())
        .collect();
    let mut fix_first = FixFirst {
        threshold: input.threshold,
        open: goal.len(),
        search: Search::Exact,
        tried: 0,
        untried: 0,
        remaining: counts(&before),
        unclosed: Vec::new(),
        blocked: Vec::new(),
        not_tried: None,
    };
    let nothing = |fix_first| Decided {
        fix_first,
        actions: Vec::new(),
        patched: Vec::new(),
    };
    if goal.is_empty() {
        return nothing(fix_first);
    }
    let candidates = candidates::all(input.fleet, input.report, &goal, &input.options.advisories);
    let Some(inputs) = input.inputs else {
        fix_first.unclosed = ordered(input.report, &goal);
        fix_first.untried = candidates.len();
        fix_first.not_tried = Some(format!(
            "the input is too large to keep for auditing it again (over {} MiB, or a file read in pieces)",
            TRIAL_BYTES >> 21
        ));
        return nothing(fix_first);
    };
    let bytes: usize = inputs.iter().map(|i| i.text.len()).sum();
    // One trial is kept for all the actions together.
    let trials = (TRIAL_BYTES / bytes.max(1))
        .min(MAX_TRIALS)
        .saturating_sub(1);
    if trials == 0 {
        fix_first.unclosed = ordered(input.report, &goal);
        fix_first.untried = candidates.len();
        fix_first.not_tried = Some(format!(
            "the input is {} MiB: auditing it again for each change would read over {} MiB",
            bytes >> 20,
            TRIAL_BYTES >> 20
        ));
        return nothing(fix_first);
    }
    // A quarter of the trials is kept for auditing the chosen actions together.
    fix_first.tried = candidates.len().min(trials - trials / 4);
    fix_first.untried = candidates.len() - fix_first.tried;
    // Each candidate alone: what it closes and opens; useful where it closes something at the
    // threshold and opens nothing there.
    let alone: Vec<(&Candidate, Outcome)> = candidates
        .iter()
        .take(fix_first.tried)
        .filter_map(|c| Some((c, outcome(input, &trial(input, &[c])?))))
        .filter(|(_, o)| o.closes.iter().any(|k| goal.contains(k)))
        .collect();
    let useful: Vec<Closing> = alone
        .iter()
        .filter(|(_, o)| o.opens.is_empty())
        .map(|(c, o)| (*c, o.closes.clone()))
        .collect();
    let (order, search) = choose(&useful, &goal);
    let budget = trials.saturating_sub(fix_first.tried);
    let (chosen, together, audited) = together(input, &useful, &order, &goal, budget);
    fix_first.search = if together { search } else { Search::Greedy };
    let closed: BTreeSet<&String> = chosen.iter().flat_map(|(_, c)| c).collect();
    fix_first.unclosed = ordered(input.report, &goal)
        .into_iter()
        .filter(|k| !closed.contains(k))
        .collect();
    fix_first.blocked = alone
        .iter()
        .filter(|(_, o)| !o.opens.is_empty())
        .filter_map(|(c, o)| {
            let closes: BTreeSet<String> = o
                .closes
                .iter()
                .filter(|k| fix_first.unclosed.contains(k))
                .cloned()
                .collect();
            (!closes.is_empty()).then(|| Blocked {
                summary: c.summary.clone(),
                closes: ordered(input.report, &closes),
                opens: o.opens.clone(),
            })
        })
        .collect();
    let all: Vec<&Candidate> = chosen.iter().map(|(c, _)| *c).collect();
    if let Some(after) = audited.or_else(|| trial(input, &all)) {
        fix_first.remaining = counts(&open(input, &after));
    }
    let ids: Vec<String> = (1..=chosen.len()).map(|i| format!("a{i}")).collect();
    let patched = changed(input, &all, &ids).unwrap_or_default();
    let actions = chosen
        .iter()
        .zip(ids)
        .map(|((c, closes), id)| Action {
            id,
            kind: c.kind,
            summary: c.summary.clone(),
            object: c.object.clone(),
            commands: c.commands.clone(),
            patch: c.patch.clone(),
            closes: ordered(input.report, closes),
            verified: c.verified,
            notes: c.notes.clone(),
        })
        .collect();
    Decided {
        fix_first,
        actions,
        patched,
    }
}

/// The open findings the input audited again with `changes` applied no longer has; `None` when the
/// changes cannot be made, or open a finding at or above the threshold or make one worse (more
/// severe, or about a tenant or more pairs than it was). A new key that only names again what a
/// closed finding was about (a node group's finding once its configuration changed) is that
/// finding: neither closed nor opened.
pub fn closes(input: &Input<'_>, changes: &[&Candidate]) -> Option<BTreeSet<String>> {
    closed_in(input, &trial(input, changes)?)
}

/// [`closes`], from the audit of the changed input.
fn closed_in(input: &Input<'_>, changed: &AuditReport) -> Option<BTreeSet<String>> {
    let o = outcome(input, changed);
    o.opens.is_empty().then_some(o.closes)
}

/// What a changed input's audit has against the input's: the open findings it no longer has, and
/// those at or above the threshold it has new or worse.
struct Outcome {
    closes: BTreeSet<String>,
    /// Worst first.
    opens: Vec<Opened>,
}

fn outcome(input: &Input<'_>, changed: &AuditReport) -> Outcome {
    let before = open(input, input.report);
    let after = open(input, changed);
    let mut closes: BTreeSet<String> = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .cloned()
        .collect();
    let mut opens = Vec::new();
    for (k, now) in after.iter().filter(|(_, s)| s.severity >= input.threshold) {
        let worse = match before.get(k) {
            Some(was) => now.worse_than(was),
            None => match closes.iter().find(|c| !now.worse_than(&before[*c])) {
                Some(same) => {
                    let same = same.clone();
                    closes.remove(&same);
                    false
                }
                None => true,
            },
        };
        if worse {
            opens.push(Opened {
                rule: now.rule.clone(),
                key: k.clone(),
                severity: now.severity,
                tenants: now.tenants.iter().cloned().collect(),
            });
        }
    }
    opens.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.key.cmp(&b.key)));
    Outcome { closes, opens }
}

/// The open findings of `report` (rules turned off left out) by key.
fn open(input: &Input<'_>, report: &AuditReport) -> Open {
    report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none() && !input.disabled.contains(&f.rule.as_str()))
        .map(|f| {
            let seen = Seen {
                rule: f.rule.clone(),
                severity: f.severity,
                tenants: f.tenants.iter().cloned().collect(),
                pairs: f.pairs.unwrap_or(0),
            };
            (f.id(), seen)
        })
        .collect()
}

fn counts(open: &Open) -> SeverityCounts {
    let mut c = SeverityCounts::default();
    for s in open.values() {
        c.add(s.severity);
    }
    c
}

/// `keys` in the order of the report's findings (worst first).
fn ordered(report: &AuditReport, keys: &BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &report.findings {
        let id = f.id();
        if keys.contains(&id) && !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// The fewest candidates (by index into `useful`) that close every finding of `goal` any of them
/// closes, no two of one subject, in the order to take them: the most closed at the threshold
/// first.
fn choose(useful: &[Closing], goal: &BTreeSet<String>) -> (Vec<usize>, Search) {
    let covers = |i: usize| useful[i].1.iter().filter(|k| goal.contains(*k)).count();
    let target: BTreeSet<&String> = useful
        .iter()
        .flat_map(|(_, c)| c.iter().filter(|k| goal.contains(*k)))
        .collect();
    let closed_by = |set: &[usize]| -> BTreeSet<&String> {
        set.iter()
            .flat_map(|i| useful[*i].1.iter().filter(|k| goal.contains(*k)))
            .collect()
    };
    let compatible = |set: &[usize]| {
        let subjects: BTreeSet<&str> = set.iter().map(|i| useful[*i].0.subject.as_str()).collect();
        subjects.len() == set.len()
    };
    let mut chosen: Vec<usize> = Vec::new();
    let search = if useful.len() <= EXACT_CANDIDATES {
        // Every set, smallest first; among the smallest, the one closing the most, then the first.
        let n = useful.len();
        let mut best: Option<(u32, usize, u32)> = None;
        for mask in 1u32..(1 << n) {
            let set: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            if !compatible(&set) || closed_by(&set).len() < target.len() {
                continue;
            }
            let all: usize = set.iter().map(|i| useful[*i].1.len()).sum();
            let better = match best {
                None => true,
                Some((size, most, _)) => {
                    mask.count_ones() < size || (mask.count_ones() == size && all > most)
                }
            };
            if better {
                best = Some((mask.count_ones(), all, mask));
            }
        }
        if let Some((_, _, mask)) = best {
            chosen = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        }
        Search::Exact
    } else {
        loop {
            let done = closed_by(&chosen);
            let next = (0..useful.len())
                .filter(|i| !chosen.contains(i))
                .filter(|i| {
                    let mut with = chosen.clone();
                    with.push(*i);
                    compatible(&with)
                })
                .map(|i| {
                    let new = useful[i]
                        .1
                        .iter()
                        .filter(|k| goal.contains(*k) && !done.contains(k))
                        .count();
                    (new, useful[i].1.len(), std::cmp::Reverse(i))
                })
                .filter(|(new, _, _)| *new > 0)
                .max();
            match next {
                Some((_, _, std::cmp::Reverse(i))) => chosen.push(i),
                None => break,
            }
        }
        Search::Greedy
    };
    chosen.sort_by_key(|i| (std::cmp::Reverse(covers(*i)), *i));
    (chosen, search)
}

/// The actions audited together, in the order chosen, then the other useful candidates while
/// something at the threshold is left open and `budget` trials remain: a candidate is kept where,
/// with those kept before it, it closes more at the threshold and reopens nothing; what it closes
/// is what it adds. Changes can undo each other (two workloads swapping nodes), so what each
/// closes alone is not what they close together. The flag is false where the chosen set did not
/// hold together as chosen. Also the audit of the input with every kept candidate applied, where
/// one was made (not when only the first is kept: its audit alone was not kept).
fn together<'c>(
    input: &Input<'_>,
    useful: &[Closing<'c>],
    order: &[usize],
    goal: &BTreeSet<String>,
    mut budget: usize,
) -> (Vec<Closing<'c>>, bool, Option<AuditReport>) {
    let reach: BTreeSet<&String> = useful
        .iter()
        .flat_map(|(_, c)| c.iter().filter(|k| goal.contains(*k)))
        .collect();
    let mut rest: Vec<usize> = (0..useful.len()).filter(|i| !order.contains(i)).collect();
    rest.sort_by_key(|i| {
        std::cmp::Reverse(useful[*i].1.iter().filter(|k| goal.contains(*k)).count())
    });
    let mut kept: Vec<Closing> = Vec::new();
    let mut closed: BTreeSet<String> = BTreeSet::new();
    let mut as_chosen = true;
    let mut last = None;
    for (n, &i) in order.iter().chain(&rest).enumerate() {
        if reach.iter().all(|k| closed.contains(*k)) {
            break;
        }
        let candidate = useful[i].0;
        if kept.iter().any(|(c, _)| c.subject == candidate.subject) {
            continue;
        }
        let mut with: Vec<&Candidate> = kept.iter().map(|(c, _)| *c).collect();
        with.push(candidate);
        let (now, audited) = if kept.is_empty() {
            (Some(useful[i].1.clone()), None)
        } else if budget == 0 {
            (None, None)
        } else {
            budget -= 1;
            let audited = trial(input, &with);
            (audited.as_ref().and_then(|r| closed_in(input, r)), audited)
        };
        let adds = now.filter(|now| {
            closed.is_subset(now) && now.iter().any(|k| goal.contains(k) && !closed.contains(k))
        });
        match adds {
            Some(now) => {
                kept.push((candidate, now.difference(&closed).cloned().collect()));
                closed = now;
                last = audited;
                as_chosen &= n < order.len();
            }
            None => as_chosen = false,
        }
    }
    (kept, as_chosen, last)
}

/// The audit of the input with `candidates` applied; `None` when they cannot be applied, the
/// changed input does not read as well as the original, or a moved workload has no node left.
pub fn trial(input: &Input<'_>, candidates: &[&Candidate]) -> Option<AuditReport> {
    let edits: Vec<Edit> = candidates.iter().flat_map(|c| c.edits.clone()).collect();
    let texts = documents::apply(input.inputs?, &edits, &input.ingest.limits, "").ok()?;
    let ingested = gpu_trust_ingest::ingest(&texts, input.ingest);
    let errors = ingested.diagnostics.iter().filter(|d| d.is_error()).count();
    if errors > input.options.skipped.len() {
        return None;
    }
    let fleet = ingested.fleet;
    for moved in candidates.iter().filter_map(|c| c.moved.as_ref()) {
        let w = fleet
            .workloads
            .iter()
            .find(|w| w.owner.is_none() && target_of(w) == *moved)?;
        if fleet.permitted_nodes(w).is_empty() {
            return None;
        }
    }
    let tenancy = input.policy.resolve(&fleet.namespaces);
    let options = AuditOptions {
        layout: false,
        pair: None,
        focus: None,
        ..input.options.clone()
    };
    Some(audit(&AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &options,
    }))
}

fn target_of(w: &gpu_trust_model::fleet::Workload) -> Target {
    Target {
        kind: w.object.kind.clone(),
        namespace: Some(w.namespace.clone()),
        name: w.object.name.clone(),
    }
}

/// The files the actions change, with all of them applied, each headed by what was applied.
fn changed(input: &Input<'_>, actions: &[&Candidate], ids: &[String]) -> Option<Vec<SourceInput>> {
    if actions.is_empty() {
        return Some(Vec::new());
    }
    let edits: Vec<Edit> = actions.iter().flat_map(|c| c.edits.clone()).collect();
    let mut header = format!(
        "Written by gpu-trust audit --emit-fixes: this input with actions {} applied.",
        ids.join(", ")
    );
    for (c, id) in actions.iter().zip(ids).filter(|(c, _)| !c.verified) {
        header.push_str(&format!(
            "\n{id} is not verified: its effect comes from controllers and is written here as assumed ({}).",
            c.summary
        ));
    }
    let inputs = input.inputs?;
    let texts = documents::apply(inputs, &edits, &input.ingest.limits, &header).ok()?;
    Some(
        texts
            .into_iter()
            .zip(inputs)
            .filter(|(after, before)| after.text != before.text)
            .map(|(after, _)| after)
            .collect(),
    )
}
