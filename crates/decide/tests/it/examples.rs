//! The bundled examples: the actions close every finding they claim (the patched copies of the
//! input, read and audited again, no longer have it open), what remains is what those copies have
//! open, and no smaller set of the candidates, audited together, closes as much at the threshold.

use gpu_trust_decide::{candidates, closes, decide, Decided, Input};
use gpu_trust_ingest::SourceInput;
use gpu_trust_model::report::{AuditReport, SeverityCounts};
use gpu_trust_model::Severity;
use gpu_trust_policy::{Date, Policy};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use std::collections::BTreeSet;
use std::path::Path;

const EXAMPLES: [&str; 6] = [
    "inference-platform",
    "ml-platform",
    "hami-kai",
    "gke",
    "helm-device-plugin",
    "measured-h200",
];

struct Example {
    inputs: Vec<SourceInput>,
    policy: Policy,
    options: AuditOptions,
    ingest: gpu_trust_ingest::Options,
}

fn example(name: &str) -> Example {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    let file = format!("examples/{name}/cluster.yaml");
    let text = std::fs::read_to_string(root.join("cluster.yaml")).unwrap();
    let policy_text = std::fs::read_to_string(root.join("policy.yaml")).unwrap();
    Example {
        inputs: vec![SourceInput { name: file, text }],
        policy: gpu_trust_policy::parse(&policy_text, "policy.yaml").unwrap(),
        options: AuditOptions::new(Date::parse("2026-11-15").unwrap()),
        ingest: gpu_trust_ingest::Options::default(),
    }
}

fn audited(e: &Example, inputs: &[SourceInput]) -> (gpu_trust_model::fleet::Fleet, AuditReport) {
    let fleet = gpu_trust_ingest::ingest(inputs, &e.ingest).fleet;
    let tenancy = e.policy.resolve(&fleet.namespaces);
    let report = audit(&AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &e.options,
    });
    (fleet, report)
}

fn open(report: &AuditReport) -> BTreeSet<String> {
    report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none())
        .map(|f| f.id())
        .collect()
}

/// The open findings at or above the threshold, by key: what the actions are chosen to close.
fn goal(input: &Input<'_>) -> BTreeSet<String> {
    input
        .report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none() && f.severity >= input.threshold)
        .map(|f| f.id())
        .collect()
}

/// Runs `check` with each example's decision input.
fn each(mut check: impl FnMut(&str, &Example, &Input<'_>, &Decided)) {
    for name in EXAMPLES {
        let e = example(name);
        let (fleet, report) = audited(&e, &e.inputs);
        let input = Input {
            inputs: Some(&e.inputs),
            ingest: &e.ingest,
            policy: &e.policy,
            options: &e.options,
            fleet: &fleet,
            report: &report,
            threshold: Severity::High,
            disabled: &[],
        };
        let decided = decide(&input);
        check(name, &e, &input, &decided);
    }
}

#[test]
fn the_patched_copies_no_longer_have_what_the_actions_close() {
    let mut with_actions = 0;
    each(|name, e, _, decided| {
        if decided.actions.is_empty() {
            assert!(decided.patched.is_empty(), "{name}");
            return;
        }
        with_actions += 1;
        let inputs: Vec<SourceInput> = e
            .inputs
            .iter()
            .map(|i| {
                decided
                    .patched
                    .iter()
                    .find(|p| p.name == i.name)
                    .unwrap_or(i)
                    .clone()
            })
            .collect();
        let (_, after) = audited(e, &inputs);
        let still = open(&after);
        for a in &decided.actions {
            assert!(!a.closes.is_empty(), "{name} {}", a.id);
            for k in &a.closes {
                assert!(
                    !still.contains(k),
                    "{name}: {} claims {k}, still open",
                    a.id
                );
            }
        }
        let mut left = SeverityCounts::default();
        for f in after.findings.iter().filter(|f| f.accepted.is_none()) {
            left.add(f.severity);
        }
        assert_eq!(left, decided.fix_first.remaining, "{name}");
    });
    assert!(with_actions >= 1, "no example has an action");
}

#[test]
fn no_smaller_set_of_the_candidates_closes_as_much() {
    each(|name, _, input, decided| {
        let goal = goal(input);
        let closed: BTreeSet<&String> = decided
            .actions
            .iter()
            .flat_map(|a| &a.closes)
            .filter(|k| goal.contains(*k))
            .collect();
        let all = candidates::all(input.fleet, input.report, &goal, &input.options.advisories);
        // Every set smaller than the one chosen, audited together.
        let n = all.len();
        assert!(n <= 16, "{name}: {n} candidates");
        for mask in 1u32..(1 << n) {
            if mask.count_ones() as usize >= decided.actions.len() {
                continue;
            }
            let set: Vec<&candidates::Candidate> = (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| &all[i])
                .collect();
            if let Some(c) = closes(input, &set) {
                assert!(
                    !closed.iter().all(|k| c.contains(*k)),
                    "{name}: {} changes close what the {} actions close",
                    set.len(),
                    decided.actions.len()
                );
            }
        }
    });
}

/// What the report says of a change that would close an unclosed finding is so: the input audited
/// again with that change alone no longer has the finding, and has each finding it is said to open
/// (at its severity, about its tenants).
#[test]
fn a_blocked_change_closes_and_opens_what_it_is_said_to() {
    let mut blocked = 0;
    each(|name, _, input, decided| {
        let goal = goal(input);
        let all = candidates::all(input.fleet, input.report, &goal, &input.options.advisories);
        for b in &decided.fix_first.blocked {
            blocked += 1;
            let c = all
                .iter()
                .find(|c| c.summary == b.summary)
                .unwrap_or_else(|| panic!("{name}: no candidate {}", b.summary));
            assert!(
                closes(input, &[c]).is_none(),
                "{name}: {} is useful",
                b.summary
            );
            let after = gpu_trust_decide::trial(input, &[c]).expect("the change applies");
            let still = open(&after);
            for k in &b.closes {
                assert!(decided.fix_first.unclosed.contains(k), "{name}: {k}");
                assert!(!still.contains(k), "{name}: {} leaves {k} open", b.summary);
            }
            assert!(!b.opens.is_empty(), "{name}");
            for o in &b.opens {
                let f = after
                    .findings
                    .iter()
                    .find(|f| f.id() == o.key && f.accepted.is_none())
                    .unwrap_or_else(|| panic!("{name}: {} does not open {}", b.summary, o.key));
                assert_eq!((f.severity, &f.tenants), (o.severity, &o.tenants), "{name}");
            }
        }
    });
    assert!(blocked >= 1, "no example has a blocked change");
}
