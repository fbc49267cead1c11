//! Counting pairs by classes ([`crate::colocation::Site::classes`]) gives what judging every pair on
//! its own gives: the whole report, byte for byte, on generated fleets of several tenants per node,
//! with demands, pinned devices, templates, relations of every trust level and both contracts.

#[path = "../tests/it/common/mod.rs"]
mod common;

use crate::colocation::tests::PAIRWISE;
use crate::AuditOptions;
use common::*;
use gpu_trust_model::fleet::WorkloadKind;
use gpu_trust_model::report::AuditReport;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// One audit at a time switches between the two ways of counting.
static SWITCH: Mutex<()> = Mutex::new(());

const TENANTS: usize = 7;

/// A node: its configuration and GPUs.
fn node(i: usize, config: u8, gpus: u32) -> NodeSpec {
    let n = NodeSpec::new(&format!("gpu-{i}"), gpus);
    match config % 5 {
        0 => n.time_sliced(4),
        1 => n.mps(2),
        2 => n.mig(&["3g.40gb", "3g.40gb"]),
        3 => n.hami(),
        _ => n,
    }
}

/// A workload: tenant, placement (a pod on a node, a template permitted on some, a DaemonSet),
/// the nodes (a mask), the request, its quantity, and the devices it is pinned to (a mask of GPUs,
/// observed or not).
type Spec = (usize, u8, u8, u8, u64, u8, bool);

fn fleet(nodes: &[(u8, u32)], workloads: &[Spec]) -> FleetSpec {
    let mut spec = FleetSpec::default();
    let names: Vec<String> = (0..nodes.len()).map(|i| format!("gpu-{i}")).collect();
    for (i, (config, gpus)) in nodes.iter().enumerate() {
        spec = spec.node(node(i, *config, *gpus));
    }
    for (i, (t, place, mask, request, quantity, pins, observed)) in workloads.iter().enumerate() {
        let ns = format!("ns-{t}");
        let chosen: Vec<&str> = names
            .iter()
            .enumerate()
            .filter(|(k, _)| mask & (1 << k) != 0)
            .map(|(_, n)| n.as_str())
            .collect();
        let first = names[usize::from(*mask) % names.len()].as_str();
        let mut w = match place % 3 {
            0 => {
                let slots: Vec<(u32, Option<u32>)> = (0..2u32)
                    .filter(|g| pins & (1 << g) != 0)
                    .map(|g| (g, None))
                    .collect();
                W::pod(&ns, &format!("p{i}"))
                    .on(first)
                    .devices(&slots, *observed)
            }
            1 => W::template(WorkloadKind::Deployment, &ns, &format!("d{i}")).permitted(&chosen),
            _ => W::template(WorkloadKind::DaemonSet, &ns, &format!("ds{i}")).permitted(&chosen),
        };
        w = match request % 5 {
            0 | 4 => w.gpu(*quantity),
            1 => w.resource("nvidia.com/mig-3g.40gb", 1),
            2 => w.kai(0.5),
            _ => w.hami(1024, &[&format!("GPU-{first}-{}", pins % 2)]),
        };
        spec = spec.workload(w);
    }
    spec
}

/// Tenants `t0`... with contracts, a default trust and relations.
fn policy(default: u8, isolated: u8, relations: &[(usize, usize, u8)]) -> String {
    let level = |l: u8| ["none", "limited", "full"][usize::from(l % 3)];
    let mut text = String::from("tenants:\n");
    for t in 0..TENANTS {
        let contract = if isolated & (1 << t) != 0 {
            "isolation"
        } else {
            "proportional-compute"
        };
        text.push_str(&format!(
            "  - {{name: t{t}, namespaces: [ns-{t}], contract: {contract}}}\n"
        ));
    }
    text.push_str(&format!("trust:\n  default: {}\n", level(default)));
    let mut seen = std::collections::BTreeSet::new();
    let mut lines = String::new();
    for (a, b, l) in relations {
        let (a, b) = ((*a).min(*b), (*a).max(*b));
        if a == b || !seen.insert((a, b)) {
            continue;
        }
        lines.push_str(&format!(
            "    - {{tenants: [t{a}, t{b}], level: {}}}\n",
            level(*l)
        ));
    }
    if !lines.is_empty() {
        text.push_str("  relations:\n");
        text.push_str(&lines);
    }
    text
}

/// The report, counted one way or the other, focused on some tenants or not.
fn report(
    spec: &FleetSpec,
    policy: &str,
    pairwise: bool,
    focus: Option<&BTreeSet<String>>,
) -> AuditReport {
    let mut options = AuditOptions::new(today());
    options.focus = focus.cloned();
    PAIRWISE.store(pairwise, Ordering::SeqCst);
    let report = run_with(spec, policy, options);
    PAIRWISE.store(false, Ordering::SeqCst);
    report
}

/// The report as JSON, counted one way or the other.
fn audited(spec: &FleetSpec, policy: &str, pairwise: bool) -> String {
    serde_json::to_string_pretty(&report(spec, policy, pairwise, None))
        .expect("a report serialises")
}

/// Per finding of a pairwise rule (rule and key), its pairs: tenants, trust, certainty, severity.
type Pairs = BTreeMap<(String, String), BTreeSet<([String; 2], String)>>;

fn pairs_of(report: &AuditReport, keep: impl Fn(&[String; 2]) -> bool) -> Pairs {
    let mut out = Pairs::new();
    for f in &report.findings {
        for p in f.covered_pairs.iter().filter(|p| keep(&p.tenants)) {
            out.entry((f.rule.clone(), f.key.clone()))
                .or_default()
                .insert((
                    p.tenants.clone(),
                    format!("{:?} {:?} {:?}", p.trust, p.certainty, p.severity),
                ));
        }
    }
    out
}

/// An audit focused on some tenants reports, of each pairwise finding, exactly the pairs of the
/// whole audit's that have one of them, with the same trust, certainty and severity; nothing in it
/// (a place, a pair) is without one of them; and counting by classes gives what pair by pair does.
fn focused(
    nodes: &[(u8, u32)],
    workloads: &[Spec],
    default: u8,
    relations: &[(usize, usize, u8)],
    mask: u8,
) -> Result<(), TestCaseError> {
    let spec = fleet(nodes, workloads);
    let policy = policy(default, 0, relations);
    let focus: BTreeSet<String> = (0..TENANTS)
        .filter(|t| mask & (1 << t) != 0)
        .map(|t| format!("t{t}"))
        .collect();
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let whole = report(&spec, &policy, false, None);
    let seen = report(&spec, &policy, false, Some(&focus));
    let has = |p: &[String; 2]| p.iter().any(|t| focus.contains(t));
    prop_assert_eq!(pairs_of(&seen, |_| true), pairs_of(&whole, has));
    for f in &seen.findings {
        prop_assert!(
            f.open_pairs.iter().all(has),
            "{}: {:?}",
            f.rule,
            f.open_pairs
        );
        for e in &f.by_group {
            prop_assert!(
                e.tenants.iter().any(|t| focus.contains(t)),
                "{} names a place without {focus:?}: {:?}",
                f.rule,
                e
            );
        }
    }
    let by_pairs = report(&spec, &policy, true, Some(&focus));
    prop_assert_eq!(
        serde_json::to_string(&seen).expect("json"),
        serde_json::to_string(&by_pairs).expect("json")
    );
    Ok(())
}

fn same(
    nodes: &[(u8, u32)],
    workloads: &[Spec],
    default: u8,
    isolated: u8,
    relations: &[(usize, usize, u8)],
) -> Result<(), TestCaseError> {
    let spec = fleet(nodes, workloads);
    let policy = policy(default, isolated, relations);
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let by_classes = audited(&spec, &policy, false);
    let by_pairs = audited(&spec, &policy, true);
    prop_assert!(by_classes == by_pairs, "{policy}\n{}", {
        let diff: Vec<String> = by_classes
            .lines()
            .zip(by_pairs.lines())
            .filter(|(a, b)| a != b)
            .take(10)
            .map(|(a, b)| format!("classes: {a}\npairs:   {b}"))
            .collect();
        diff.join("\n")
    });
    Ok(())
}

/// Up to three nodes, each a configuration and its GPUs.
fn nodes() -> impl Strategy<Value = Vec<(u8, u32)>> {
    proptest::collection::vec((0u8..5, 1u32..4), 1..4)
}

/// Two to fifteen workloads of the tenants ([`Spec`]).
fn workloads() -> impl Strategy<Value = Vec<Spec>> {
    proptest::collection::vec(
        (
            0usize..TENANTS,
            0u8..3,
            1u8..8,
            0u8..5,
            1u64..6,
            0u8..4,
            any::<bool>(),
        ),
        2..16,
    )
}

/// Up to five trust relations between two tenants.
fn relations() -> impl Strategy<Value = Vec<(usize, usize, u8)>> {
    proptest::collection::vec((0usize..TENANTS, 0usize..TENANTS, 0u8..3), 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn counting_by_classes_is_counting_pair_by_pair(
        nodes in nodes(),
        workloads in workloads(),
        default in 0u8..3,
        isolated in 0u8..128,
        relations in relations(),
    ) {
        same(&nodes, &workloads, default, isolated, &relations)?;
    }

    /// Many tenants on one node, alike but for their demand and pins: the classes are few and
    /// hold many tenants each.
    #[test]
    fn one_crowded_node_counts_alike(
        config in 0u8..5,
        gpus in 1u32..4,
        workloads in proptest::collection::vec((1u64..6, 0u8..4, any::<bool>(), 0u8..3), 4..24),
        default in 0u8..3,
        isolated in 0u8..128,
        relations in relations(),
    ) {
        let workloads: Vec<Spec> = workloads
            .iter()
            .enumerate()
            .map(|(i, (q, pins, observed, place))| {
                (i % TENANTS, if *place == 2 { 1 } else { 0 }, 1, 0, *q, *pins, *observed)
            })
            .collect();
        same(&[(config, gpus)], &workloads, default, isolated, &relations)?;
    }

    #[test]
    fn a_focused_audit_reports_the_pairs_of_its_tenants_only(
        nodes in nodes(),
        workloads in workloads(),
        default in 0u8..3,
        relations in relations(),
        mask in 1u8..128,
    ) {
        focused(&nodes, &workloads, default, &relations, mask)?;
    }
}
