//! What must hold across fleets: blast radius and pairs follow the isolation model, certainty follows
//! the evidence, acceptances suppress only what they match, evidence attaches where it was measured,
//! and the same input gives the same bytes.

use crate::common;

use common::*;
use gpu_trust_model::evidence::{
    Comparison, DeviceEvidence, DriverEvidence, MeasuredMechanism, MechanismEvidence,
    MechanismSettings, PhaseEvidence, ProbeEvidence, RunEvidence, Scenario, ScenarioEvidence,
    Verdict, PROBE_SCHEMA,
};
use gpu_trust_model::fleet::WorkloadKind;
use gpu_trust_model::report::{AuditReport, GroupEntry, GroupLevel};
use gpu_trust_model::{Certainty, Incident, Severity};
use gpu_trust_rules::{Advisories, AuditOptions};
use std::collections::BTreeSet;

/// Who `tenant`'s incident reaches: the matrix's pairs, checked against the blast radius's count.
fn reaches(report: &AuditReport, tenant: &str, incident: Incident) -> BTreeSet<String> {
    let named: BTreeSet<String> = report
        .matrix
        .pairs
        .iter()
        .filter(|p| p.incidents.contains_key(&incident))
        .filter_map(|p| match &p.tenants {
            [a, b] if a == tenant => Some(b.clone()),
            [a, b] if b == tenant => Some(a.clone()),
            _ => None,
        })
        .collect();
    let counted = report
        .blast_radius
        .iter()
        .find(|e| e.tenant == tenant && e.incident == incident)
        .map_or(0, |e| e.reaches);
    assert_eq!(
        counted,
        named.len(),
        "{tenant} {incident}: the matrix names everyone reached"
    );
    named
}

/// The groups (shared things) of a report at a level, as `(level, mechanism, tenants)`.
fn groups_at(report: &AuditReport, level: GroupLevel) -> Vec<&GroupEntry> {
    report.groups.iter().filter(|g| g.level == level).collect()
}

fn members(g: &GroupEntry) -> Vec<&str> {
    g.tenants.iter().map(String::as_str).collect()
}

fn three_tenants() -> String {
    "tenants:\n  - {name: acme, namespaces: [cust-acme]}\n  - {name: globex, namespaces: [cust-globex]}\n  - {name: initech, namespaces: [cust-initech]}\n".to_string()
}

/// acme scheduled on gpu-1; globex and initech as templates permitted there.
fn shared_node(replicas: u32, with_initech: bool) -> FleetSpec {
    let mut node = NodeSpec::new("gpu-1", 1);
    if replicas > 1 {
        node = node.time_sliced(replicas);
    }
    let mut spec = FleetSpec::default()
        .node(node)
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(
            W::template(WorkloadKind::Deployment, "cust-globex", "chat")
                .permitted(&["gpu-1"])
                .gpu(1),
        );
    if with_initech {
        spec = spec.workload(W::pod("cust-initech", "batch-0").on("gpu-1").gpu(1));
    }
    spec
}

#[test]
fn time_slicing_replicas_grow_the_blast_radius() {
    let policy = three_tenants();
    let mut previous: Option<BTreeSet<String>> = None;
    for replicas in 1..=8 {
        let report = run(&shared_node(replicas, false), &policy);
        let reached = reaches(&report, "acme", Incident::MemoryExhaustion);
        if replicas == 1 {
            assert!(
                reached.is_empty(),
                "an unshared GPU reaches no one: {reached:?}"
            );
        } else {
            assert!(
                reached.contains("globex"),
                "{replicas} replicas: {reached:?}"
            );
        }
        if let Some(p) = &previous {
            assert!(
                reached.is_superset(p),
                "{replicas} replicas shrank the blast radius"
            );
        }
        previous = Some(reached);
    }
}

#[test]
fn more_tenants_on_a_gpu_grow_the_blast_radius() {
    let policy = three_tenants();
    let two = run(&shared_node(4, false), &policy);
    let three = run(&shared_node(4, true), &policy);
    for incident in [
        Incident::MemoryExhaustion,
        Incident::DeviceFault,
        Incident::ComputeContention,
    ] {
        let before = reaches(&two, "acme", incident);
        let after = reaches(&three, "acme", incident);
        assert!(
            after.is_superset(&before) && after.len() > before.len(),
            "{incident}"
        );
        assert!(after.contains("initech"));
    }
    assert!(reaches(&three, "initech", Incident::DeviceFault).contains("acme"));
}

#[test]
fn own_mig_instance_leaves_device_reach_but_not_host_reach() {
    let policy = two_tenants("limited");
    let shared = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).time_sliced(2))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1));
    let mig = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).mig(&["4g.40gb", "3g.40gb"]))
        .workload(
            W::pod("cust-acme", "infer-0")
                .on("gpu-1")
                .resource("nvidia.com/mig-4g.40gb", 1),
        )
        .workload(
            W::pod("cust-globex", "train-0")
                .on("gpu-1")
                .resource("nvidia.com/mig-3g.40gb", 1),
        );
    let before = run(&shared, &policy);
    let after = run(&mig, &policy);
    for (t, other) in [("acme", "globex"), ("globex", "acme")] {
        for i in [Incident::MemoryExhaustion, Incident::DeviceFault] {
            assert!(reaches(&before, t, i).contains(other), "{t} {i} before");
        }
        assert!(
            reaches(&after, t, Incident::MemoryExhaustion).is_empty(),
            "{t} after: MIG separates memory"
        );
        assert!(
            reaches(&after, t, Incident::DeviceFault).contains(other),
            "{t} after: errors that need a GPU reset hit every instance"
        );
        assert!(
            reaches(&after, t, Incident::HostEscape).contains(other),
            "host stays shared"
        );
        assert!(reaches(&after, t, Incident::ControlPlane).contains(other));
    }
    assert!(of_rule(&after, "GT101").is_empty());
    assert!(groups_at(&after, GroupLevel::Device).is_empty());
    let mig = groups_at(&after, GroupLevel::MigGpu);
    assert_eq!(mig.len(), 1, "{:?}", after.groups);
    assert!(mig[0].separated_by.contains(&"mig-instance".to_string()));
    assert!(mig[0].separated_by.contains(&"memory-pool".to_string()));
    assert!(!mig[0].shares.contains(&"memory-pool".to_string()));
    assert_eq!(groups_at(&after, GroupLevel::Node)[0].shares, ["host"]);
}

/// The matrix says what the findings say: a pair GT104 reports on one MIG GPU has the fault that
/// hits every instance of the GPU in its cell, at the certainty they meet there.
#[test]
fn a_pair_on_one_mig_gpu_has_the_gpu_wide_fault_in_its_matrix_cell() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).mig(&["4g.40gb", "3g.40gb"]))
        .workload(
            W::pod("cust-acme", "infer-0")
                .on("gpu-1")
                .resource("nvidia.com/mig-4g.40gb", 1),
        )
        .workload(
            W::pod("cust-globex", "train-0")
                .on("gpu-1")
                .resource("nvidia.com/mig-3g.40gb", 1),
        );
    let report = run(&spec, &two_tenants("none"));
    let gt104 = of_rule(&report, "GT104");
    assert_eq!(gt104.len(), 1, "{:?}", report.findings);
    assert!(
        gt104[0].message.contains("GPU-wide errors"),
        "{}",
        gt104[0].message
    );
    let p = &report.matrix.pairs[0];
    assert_eq!(p.tenants, ["acme".to_string(), "globex".to_string()]);
    assert_eq!(
        p.incidents.get(&Incident::DeviceFault),
        Some(&gt104[0].certainty),
        "{:?}",
        p.incidents
    );
    assert!(!p.incidents.contains_key(&Incident::MemoryExhaustion));
}

#[test]
fn pairs_say_what_time_slicing_shares() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).time_sliced(4))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1));
    let report = run(&spec, &two_tenants("none"));
    let device = groups_at(&report, GroupLevel::Device);
    assert_eq!(device.len(), 1);
    let g = device[0];
    assert_eq!(members(g), ["acme", "globex"]);
    assert_eq!(g.pairs, 1);
    for s in ["gpu", "memory-pool", "fault-domain", "compute"] {
        assert!(g.shares.contains(&s.to_string()), "{s} in {:?}", g.shares);
    }
    // The node is its own group.
    let node = groups_at(&report, GroupLevel::Node);
    assert_eq!(node[0].shares, ["host"]);
    assert_eq!(members(node[0]), ["acme", "globex"]);
    assert_eq!(g.separated_by, ["address-space"]);
    assert_eq!(g.certainty, Certainty::Observed, "one GPU");
    assert_eq!(
        groups_at(&report, GroupLevel::ControlPlane)[0].shares,
        ["control-plane"]
    );
    // The pair as the matrix spells it out.
    assert_eq!(report.matrix.pairs.len(), 1);
    let p = &report.matrix.pairs[0];
    assert_eq!(p.tenants, ["acme".to_string(), "globex".to_string()]);
    assert_eq!(p.severity, Some(Severity::Critical));
    assert_eq!(p.incidents.len(), Incident::ALL.len());
    assert_eq!(
        p.incidents[&Incident::MemoryExhaustion],
        Certainty::Observed
    );
}

#[test]
fn separate_nodes_share_only_the_control_plane() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1))
        .node(NodeSpec::new("gpu-2", 1))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-2").gpu(1));
    let report = run(&spec, &two_tenants("none"));
    assert_eq!(report.groups.len(), 1, "{:?}", report.groups);
    assert_eq!(report.groups[0].level, GroupLevel::ControlPlane);
    let p = &report.matrix.pairs[0];
    assert_eq!(
        p.incidents.keys().copied().collect::<Vec<_>>(),
        [Incident::ControlPlane]
    );
    assert!(reaches(&report, "acme", Incident::HostEscape).is_empty());
}

/// Every tenant with a namespace in the cluster shares its API server, whether or not it runs a GPU
/// workload: GT401 and the control-plane blast radius count them all.
#[test]
fn every_tenant_of_the_cluster_shares_the_api_server() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1))
        .node(NodeSpec::cpu("cpu-1"))
        .namespace("cust-initech", &[])
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "web-0").on("cpu-1"));
    let report = run(&spec, &three_tenants());
    let f = of_rule(&report, "GT401");
    assert_eq!(f.len(), 1, "one finding for the API server");
    assert_eq!(
        f[0].tenants,
        ["acme", "globex", "initech"],
        "globex runs no GPU workload and initech none at all: they still share the API server"
    );
    assert_eq!(f[0].pairs, Some(3));
    assert_eq!(
        reaches(&report, "globex", Incident::ControlPlane),
        BTreeSet::from(["acme".to_string(), "initech".to_string()])
    );
    assert_eq!(
        reaches(&report, "acme", Incident::ControlPlane),
        BTreeSet::from(["globex".to_string(), "initech".to_string()])
    );
    assert!(reaches(&report, "globex", Incident::HostEscape).is_empty());
    assert_eq!(report.tenants.len(), 3);
}

#[test]
fn one_tenant_on_a_time_sliced_gpu_is_no_trust_finding() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).time_sliced(4))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-acme", "infer-1").on("gpu-1").gpu(1))
        .workload(
            W::template(WorkloadKind::Deployment, "cust-acme", "chat")
                .permitted(&["gpu-1"])
                .gpu(1),
        );
    let report = run(&spec, &two_tenants("none"));
    for f in &report.findings {
        assert!(
            f.tenants.len() < 2,
            "{} names two tenants for one tenant's pods",
            f.rule
        );
        assert!(
            !["GT101", "GT102", "GT103", "GT104", "GT105", "GT112", "GT207", "GT501", "GT502"]
                .contains(&f.rule.as_str()),
            "{}: {}",
            f.rule,
            f.message
        );
    }
    assert!(report.groups.is_empty(), "{:?}", report.groups);
}

#[test]
fn platform_daemonsets_are_not_tenant_findings() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).time_sliced(4))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(
            W::template(
                WorkloadKind::DaemonSet,
                "gpu-operator",
                "nvidia-device-plugin-daemonset",
            )
            .permitted(&["gpu-1"])
            .privileged()
            .host_path("/var/lib/kubelet/device-plugins")
            .host_path("/run/nvidia/mps")
            .host_ipc(),
        )
        .workload(
            W::pod("gpu-operator", "nvidia-dcgm-exporter-abc")
                .on("gpu-1")
                .privileged()
                .owner("DaemonSet/nvidia-dcgm-exporter"),
        )
        .workload(
            W::pod("kube-system", "nvidia-driver-installer-xyz")
                .on("gpu-1")
                .privileged()
                .host_path("/dev"),
        );
    let report = run(&spec, "");
    for f in &report.findings {
        for o in &f.objects {
            assert!(
                !matches!(o.namespace.as_deref(), Some("gpu-operator" | "kube-system")),
                "{} names platform object {}",
                f.rule,
                o.name
            );
        }
        assert!(!f
            .tenants
            .iter()
            .any(|t| t == "gpu-operator" || t == "kube-system"));
    }
    assert!(report.tenants.iter().all(|t| t.name == "cust-acme"));
}

#[test]
fn a_template_permitted_beside_a_pod_is_one_step_lower() {
    let report = run(&shared_node(4, false), &two_tenants("none"));
    let f = of_rule(&report, "GT101");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].certainty, Certainty::Permitted);
    assert_eq!(f[0].severity, Severity::High, "critical, one step lower");
    assert!(f[0].objects.iter().any(|o| o.kind == "Deployment"));
}

#[test]
fn templates_that_may_meet_are_permitted_pairs() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 2).time_sliced(2))
        .node(NodeSpec::new("gpu-2", 2).time_sliced(2))
        .node(NodeSpec::new("gpu-3", 2))
        .workload(
            W::template(WorkloadKind::Deployment, "cust-acme", "chat")
                .permitted(&["gpu-1", "gpu-2", "gpu-3"])
                .gpu(1),
        )
        .workload(
            W::template(WorkloadKind::Deployment, "cust-globex", "batch")
                .permitted(&["gpu-2", "gpu-3"])
                .gpu(1),
        );
    let report = run(&spec, &two_tenants("limited"));
    let f = of_rule(&report, "GT101");
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].nodes,
        ["gpu-2"],
        "only where both may go and the GPU is time-sliced"
    );
    assert_eq!(
        f[0].severity,
        Severity::Medium,
        "limited: high, one step lower"
    );
    let host = of_rule(&report, "GT207");
    assert!(host.is_empty(), "GT207 is for trust none");
    let device = groups_at(&report, GroupLevel::Device);
    assert_eq!(device.len(), 1);
    assert_eq!(device[0].certainty, Certainty::Permitted);
    assert!(device[0].permitted);
    assert_eq!(device[0].nodes, ["gpu-2"]);
}

#[test]
fn pigeonhole_makes_a_multi_gpu_share_observed() {
    let spec = |acme_pods: usize| {
        let mut s = FleetSpec::default().node(NodeSpec::new("gpu-1", 2).time_sliced(2));
        for i in 0..acme_pods {
            s = s.workload(
                W::pod("cust-acme", &format!("infer-{i}"))
                    .on("gpu-1")
                    .gpu(1),
            );
        }
        s.workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1))
    };
    let two = run(&spec(2), &two_tenants("none"));
    assert_eq!(of_rule(&two, "GT101")[0].certainty, Certainty::Possible);
    let three = run(&spec(3), &two_tenants("none"));
    let f = of_rule(&three, "GT101");
    assert_eq!(f[0].certainty, Certainty::Observed);
    assert!(
        f[0].message.contains("cannot fit on separate GPUs"),
        "{}",
        f[0].message
    );
}

#[test]
fn resolved_devices_decide_the_gpu() {
    let spec = |globex_gpu: u32, observed: bool| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 2).time_sliced(4))
            .workload(
                W::pod("cust-acme", "infer-0")
                    .on("gpu-1")
                    .gpu(1)
                    .devices(&[(0, None)], observed),
            )
            .workload(
                W::pod("cust-globex", "train-0")
                    .on("gpu-1")
                    .gpu(1)
                    .devices(&[(globex_gpu, None)], observed),
            )
    };
    let same = run(&spec(0, true), &two_tenants("none"));
    assert_eq!(of_rule(&same, "GT101")[0].certainty, Certainty::Observed);
    let apart = run(&spec(1, true), &two_tenants("none"));
    assert!(
        of_rule(&apart, "GT101").is_empty(),
        "pinned to different GPUs"
    );
    assert_eq!(of_rule(&apart, "GT207").len(), 1, "still one node");
}

#[test]
fn acceptances_suppress_exactly_what_they_match() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 8))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-initech", "batch-0").on("gpu-1").gpu(1));
    let policy = format!(
        "{}accept:\n  - rule: GT207\n    tenants: [globex, acme]\n    reason: shared inference pool\n    until: 2026-12-31\n",
        three_tenants()
    );
    let report = run(&spec, &policy);
    let host = of_rule(&report, "GT207");
    assert_eq!(host.len(), 1, "one finding for the node, three pairs");
    assert_eq!(host[0].pairs, Some(3));
    assert!(host[0].accepted.is_none(), "two pairs stay open");
    assert_eq!(host[0].accepted_pairs.len(), 1);
    let a = &host[0].accepted_pairs[0];
    assert_eq!(a.tenants, ["acme".to_string(), "globex".to_string()]);
    assert_eq!(a.reason, "shared inference pool");
    assert_eq!(a.until.as_deref(), Some("2026-12-31"));
    assert_eq!(
        host[0].open_pairs,
        [
            ["acme".to_string(), "initech".to_string()],
            ["globex".to_string(), "initech".to_string()]
        ],
        "the pairs that stay open are named"
    );
    assert_eq!(report.summary.accepted, 0);
    let counted: usize = report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none())
        .count();
    assert_eq!(
        Severity::ALL
            .iter()
            .map(|s| report.summary.findings.get(*s))
            .sum::<usize>(),
        counted
    );
    assert!(of_rule(&report, "GT003").is_empty());

    // Expired: GT003, and the pair counts again.
    let expired = policy.replace("2026-12-31", "2026-05-31");
    let report = run(&spec, &expired);
    let host = of_rule(&report, "GT207");
    assert!(host[0].accepted.is_none() && host[0].accepted_pairs.is_empty());
    assert_eq!(of_rule(&report, "GT003").len(), 1);
    assert_eq!(report.summary.accepted, 0);

    // Every pair accepted, one by one: the finding is accepted.
    let all = format!(
        "{}accept:\n  - {{rule: GT207, tenants: [acme, globex], reason: one}}\n  - {{rule: GT207, tenants: [acme, initech], reason: two}}\n  - {{rule: GT207, tenants: [globex, initech], reason: one}}\n",
        three_tenants()
    );
    let report = run(&spec, &all);
    let host = of_rule(&report, "GT207");
    let a = host[0].accepted.as_ref().expect("every pair is accepted");
    assert_eq!(a.reason, "one; two");
    assert!(host[0].accepted_pairs.is_empty());
    assert_eq!(report.summary.accepted, 1);

    // An acceptance of the rule without tenants accepts it whole.
    let any = format!(
        "{}accept:\n  - {{rule: GT207, reason: one pool by design}}\n",
        three_tenants()
    );
    let report = run(&spec, &any);
    assert_eq!(
        of_rule(&report, "GT207")[0]
            .accepted
            .as_ref()
            .map(|a| a.reason.as_str()),
        Some("one pool by design")
    );
}

/// A finding's severity is that of its worst open pair: accepting the distrusting pair leaves the
/// pairs of limited trust, one step lower.
#[test]
fn the_severity_is_that_of_the_open_pairs() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).time_sliced(4))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-initech", "batch-0").on("gpu-1").gpu(1));
    let trust = "trust:\n  default: none\n  relations:\n    - {tenants: [acme, initech], level: limited}\n    - {tenants: [globex, initech], level: limited}\n";
    let policy = format!("{}{trust}", three_tenants());
    let report = run(&spec, &policy);
    let f = of_rule(&report, "GT101");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].pairs, Some(3));
    assert_eq!(f[0].severity, Severity::Critical);
    assert!(
        f[0].message.contains("3 pairs: 1 of trust none, 2 limited"),
        "{}",
        f[0].message
    );
    let accepted = format!(
        "{policy}accept:\n  - {{rule: GT101, tenants: [acme, globex], reason: bench pair}}\n"
    );
    let report = run(&spec, &accepted);
    let f = of_rule(&report, "GT101");
    assert_eq!(f[0].severity, Severity::High, "the limited pairs are high");
    assert_eq!(f[0].accepted_pairs.len(), 1);
    assert_eq!(report.summary.findings.critical, 0);
    let pair = report
        .matrix
        .pairs
        .iter()
        .find(|p| p.tenants == ["acme".to_string(), "globex".to_string()])
        .unwrap();
    assert_eq!(
        pair.severity,
        Some(Severity::High),
        "GT207 still covers them"
    );
}

fn evidence(node: Option<&str>) -> ProbeEvidence {
    ProbeEvidence {
        schema: PROBE_SCHEMA.into(),
        tool_version: "0.1.0".into(),
        node: node.map(str::to_string),
        run: RunEvidence {
            name: Some("run-7".into()),
            started_at: Some("2026-12-04T11:34:09Z".into()),
            ..RunEvidence::default()
        },
        victim: DeviceEvidence::default(),
        aggressor: DeviceEvidence::default(),
        driver: DriverEvidence::default(),
        mechanism: MechanismEvidence {
            kind: MeasuredMechanism::TimeSlicing,
            mig_mode: Some(false),
            mps: false,
            mps_pipe_directory: None,
            compute_mode: None,
            cc_mode: None,
            notes: vec![],
            settings: Some(MechanismSettings::default()),
        },
        scenarios: vec![ScenarioEvidence {
            scenario: Scenario::MemoryExhaustion,
            verdict: Verdict::Affected,
            summary: "victim allocation of 4096 MiB failed".into(),
            threshold: None,
            baseline: PhaseEvidence::default(),
            contended: PhaseEvidence::default(),
            comparison: Comparison::default(),
        }],
    }
}

#[test]
fn evidence_attaches_to_device_findings_of_its_node_and_mechanism() {
    // Two node groups (4 and 8 replicas): one finding each.
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).time_sliced(4))
        .node(NodeSpec::new("gpu-2", 1).time_sliced(8))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-acme", "infer-9").on("gpu-2").gpu(1))
        .workload(W::pod("cust-initech", "batch-0").on("gpu-2").gpu(1));
    let mut options = AuditOptions::new(today());
    let mut again = evidence(Some("gpu-1"));
    again.run.name = Some("run-8".into());
    options.evidence = vec![evidence(Some("gpu-1")), again];
    let report = run_with(&spec, &three_tenants(), options);
    for f in of_rule(&report, "GT101") {
        if f.nodes == ["gpu-1"] {
            // Two runs under the same conditions: one sentence that counts them.
            assert_eq!(
                f.evidence,
                ["memory-exhaustion: affected in 2 of 2 runs under time-slicing, time-slice interval \
                  not recorded (run-7, run-8: victim allocation of 4096 MiB failed). Measured on gpu-1 \
                  (GPU not named, driver not recorded) on 2026-12-04; another GPU or driver may behave \
                  differently."]
            );
        } else {
            assert!(f.evidence.is_empty(), "evidence of gpu-1 on {:?}", f.nodes);
        }
    }
    for f in of_rule(&report, "GT207") {
        assert!(
            f.evidence.is_empty(),
            "host findings carry no device evidence"
        );
    }
    // Evidence naming no node speaks for every node of the mechanism.
    let mut options = AuditOptions::new(today());
    options.evidence = vec![evidence(None)];
    let report = run_with(&spec, &three_tenants(), options);
    assert!(of_rule(&report, "GT101")
        .iter()
        .all(|f| !f.evidence.is_empty()));
}

#[test]
fn a_newer_advisory_file_is_used() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).toolkit("1.19.1"))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1));
    assert!(of_rule(&run(&spec, ""), "GT201").is_empty());
    let newer = "version: 1\nadvisories:\n  - id: CVE-2027-00001\n    summary: a future escape\n    bulletin: NVIDIA security bulletin 9999\n    published: 2027-01-15\n    cvss: 8.8\n    affects:\n      - {component: container-toolkit, fixed: [\"1.20.0\"]}\n";
    let mut options = AuditOptions::new(today());
    options.advisories = Advisories::parse(newer, "advisories.yaml").unwrap();
    let report = run_with(&spec, "", options);
    let f = of_rule(&report, "GT201");
    assert_eq!(f.len(), 1);
    assert!(f[0].message.contains("CVE-2027-00001"), "{}", f[0].message);
    assert_eq!(f[0].severity, Severity::High, "one tenant on the node");
}

#[test]
fn the_patch_window_counts_from_today() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).driver(Some("580.82.07")))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1));
    // CVE-2025-23280, bulletin of October 2025, fixed in 580.95.05.
    let at = |d: &str| {
        let mut o = AuditOptions::new(gpu_trust_policy::Date::parse(d).unwrap());
        o.advisories = Advisories::builtin().clone();
        of_rule(&run_with(&spec, "", o), "GT205").len()
    };
    assert_eq!(at("2025-11-15"), 0, "inside the 30-day window");
    assert_eq!(at("2025-12-15"), 1, "past it");
    let policy = "host:\n  patchWindowDays: 90\n";
    let mut o = AuditOptions::new(gpu_trust_policy::Date::parse("2025-12-15").unwrap());
    o.advisories = Advisories::builtin().clone();
    assert!(of_rule(&run_with(&spec, policy, o), "GT205").is_empty());
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 2).time_sliced(4))
        .node(NodeSpec::new("gpu-2", 1).mig(&["3g.40gb", "3g.40gb"]))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1).vllm(None))
        .workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1))
        .workload(
            W::template(WorkloadKind::Deployment, "cust-initech", "chat")
                .permitted(&["gpu-1", "gpu-2"])
                .resource("nvidia.com/mig-3g.40gb", 1),
        )
        .workload(
            W::pod("cust-acme", "embed-0")
                .on("gpu-2")
                .resource("nvidia.com/mig-3g.40gb", 1),
        );
    let a = serde_json::to_string_pretty(&run(&spec, &three_tenants())).unwrap();
    let b = serde_json::to_string_pretty(&run(&spec, &three_tenants())).unwrap();
    assert_eq!(a, b);
    let report = run(&spec, &three_tenants());
    // Sorted: most severe first; within a severity observed, then possible, then permitted; then
    // by code.
    for w in report.findings.windows(2) {
        let key = |f: &gpu_trust_model::report::Finding| {
            (std::cmp::Reverse(f.severity), f.certainty, f.rule.clone())
        };
        assert!(
            key(&w[0]) <= key(&w[1]),
            "{} {} [{}] before {} {} [{}]",
            w[0].rule,
            w[0].severity,
            w[0].certainty.as_str(),
            w[1].rule,
            w[1].severity,
            w[1].certainty.as_str()
        );
    }
    for f in &report.findings {
        let mut t = f.tenants.clone();
        t.sort();
        assert_eq!(t, f.tenants);
    }
}

#[test]
fn a_large_fleet_is_grouped_not_paired() {
    // 200 time-sliced nodes, 20 tenants, 4000 pods and a template per tenant permitted everywhere.
    let mut spec = FleetSpec::default();
    let nodes: Vec<String> = (0..200).map(|i| format!("gpu-{i:03}")).collect();
    for n in &nodes {
        spec = spec.node(NodeSpec::new(n, 8).time_sliced(4));
    }
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    for t in 0..20 {
        let ns = format!("team-{t:02}");
        for p in 0..200 {
            let node = &nodes[(t * 7 + p) % nodes.len()];
            spec = spec.workload(W::pod(&ns, &format!("pod-{p}")).on(node).gpu(1));
        }
        spec = spec.workload(
            W::template(WorkloadKind::Deployment, &ns, "serve")
                .permitted(&all)
                .gpu(1),
        );
    }
    let started = std::time::Instant::now();
    let report = run(&spec, "");
    let elapsed = started.elapsed();
    // 20 tenants, 190 pairs, one node group: one finding per rule.
    for rule in ["GT101", "GT207", "GT401"] {
        let f = of_rule(&report, rule);
        assert_eq!(f.len(), 1, "{rule}");
        assert_eq!(f[0].pairs, Some(190), "{rule}");
        assert_eq!(f[0].tenants.len(), 20, "{rule}");
    }
    assert_eq!(report.matrix.pairs.len(), 190);
    assert!(report.blast_radius.iter().all(|e| e.reaches == 19));
    eprintln!("audit of 200 nodes, 4020 workloads, 20 tenants: {elapsed:?}");
}

/// A pool open to many mutually distrusting tenants: each rule reports the pool once, and nothing in
/// the report grows with the square of the tenants.
#[test]
fn a_pool_open_to_many_tenants_is_one_finding_per_rule() {
    let mut spec = FleetSpec::default();
    let nodes: Vec<String> = (0..4).map(|i| format!("gpu-{i}")).collect();
    for n in &nodes {
        spec = spec.node(NodeSpec::new(n, 8).time_sliced(4));
    }
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    for t in 0..300 {
        spec = spec.workload(
            W::template(
                WorkloadKind::Deployment,
                &format!("team-{t:03}"),
                "notebook",
            )
            .permitted(&all)
            .gpu(1),
        );
    }
    let report = run(&spec, "");
    let pairs = 300 * 299 / 2;
    for (rule, severity) in [
        ("GT101", Severity::High),
        ("GT207", Severity::Medium),
        ("GT401", Severity::Medium),
    ] {
        let f = of_rule(&report, rule);
        assert_eq!(f.len(), 1, "{rule}");
        assert_eq!(f[0].pairs, Some(pairs), "{rule}");
        assert_eq!(f[0].tenants.len(), 300, "{rule}");
        assert_eq!(
            f[0].severity, severity,
            "{rule}: permitted is one step lower"
        );
        assert!(f[0].objects.len() <= 50);
        assert!(f[0].message.len() < 2000, "{rule}: {}", f[0].message);
    }
    // Two permitted groups (the device and the nodes) and the API server.
    assert_eq!(
        report.groups.len(),
        3,
        "{:?}",
        report.groups.iter().map(|g| g.level).collect::<Vec<_>>()
    );
    assert!(report.groups.iter().all(|g| g.pairs == pairs));
    assert_eq!(report.blast_radius.len(), 300 * Incident::ALL.len());
    for e in &report.blast_radius {
        assert_eq!(e.reaches, 299, "{} {}", e.tenant, e.incident);
    }
    let m = &report.matrix;
    assert_eq!(m.tenants.len(), gpu_trust_model::report::MAX_MATRIX_TENANTS);
    assert_eq!(m.omitted, 300 - m.tenants.len());
    assert_eq!(m.pairs.len(), 60 * 59 / 2);
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.len() < 2_000_000, "{} bytes", json.len());

    // One pair accepted: the finding stays open for the others and names the first 20 of them.
    let policy = "tenants:\n  - {name: team-000, namespaces: [team-000]}\n  - {name: team-001, namespaces: [team-001]}\naccept:\n  - {rule: GT207, tenants: [team-000, team-001], reason: pilot}\n";
    let report = run(&spec, policy);
    let f = of_rule(&report, "GT207");
    assert!(f[0].accepted.is_none());
    assert_eq!(f[0].accepted_pairs.len(), 1);
    assert_eq!(f[0].open_pairs.len(), 20);
    assert_eq!(
        f[0].open_pairs[0],
        ["team-000".to_string(), "team-002".to_string()]
    );
}

/// The benchmark shape of the product spec: 2,000 nodes and 60,000 pods (run with `--ignored --release`).
#[test]
#[ignore]
fn scale_2000_nodes_60000_pods() {
    let mut spec = FleetSpec::default();
    let nodes: Vec<String> = (0..2000).map(|i| format!("gpu-{i:04}")).collect();
    for (i, n) in nodes.iter().enumerate() {
        let node = NodeSpec::new(n, 8);
        spec = spec.node(if i % 2 == 0 {
            node.time_sliced(4)
        } else {
            node
        });
    }
    let pools: Vec<Vec<&str>> = (0..10)
        .map(|p| {
            nodes
                .iter()
                .skip(p * 200)
                .take(200)
                .map(String::as_str)
                .collect()
        })
        .collect();
    for t in 0..100 {
        let ns = format!("team-{t:03}");
        for p in 0..600 {
            let node = &nodes[(t * 13 + p * 7) % nodes.len()];
            spec = spec.workload(W::pod(&ns, &format!("pod-{p}")).on(node).gpu(1));
        }
        spec = spec.workload(
            W::template(WorkloadKind::Deployment, &ns, "serve")
                .permitted(&pools[t % 10])
                .gpu(1),
        );
    }
    let fleet = spec.build();
    let tenancy = tenancy(&fleet, "");
    let options = AuditOptions::new(today());
    let started = std::time::Instant::now();
    let report = gpu_trust_rules::audit(&gpu_trust_rules::AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &options,
    });
    eprintln!(
        "audit of {} nodes, {} workloads, 100 tenants: {:?}, {} findings, {} groups",
        fleet.nodes.len(),
        fleet.workloads.len(),
        started.elapsed(),
        report.findings.len(),
        report.groups.len()
    );
}

mod random {
    use super::common::*;
    use gpu_trust_model::fleet::WorkloadKind;
    use proptest::prelude::*;

    const PROFILES: [&str; 6] = [
        "1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "9g.99gb",
    ];

    fn node_strategy() -> impl Strategy<Value = (u32, u8, Vec<usize>, bool)> {
        (
            0u32..3,
            0u8..4,
            proptest::collection::vec(0usize..6, 0..3),
            any::<bool>(),
        )
    }

    fn workload_strategy() -> impl Strategy<Value = (usize, usize, u8, u8, bool, u64)> {
        (0usize..3, 0usize..3, 0u8..6, 0u8..3, any::<bool>(), 0u64..3)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn any_fleet_audits_without_panic_and_sorted(
            nodes in proptest::collection::vec(node_strategy(), 1..4),
            workloads in proptest::collection::vec(workload_strategy(), 0..12),
            trust in 0usize..3,
        ) {
            let mut spec = FleetSpec::default();
            let names: Vec<String> = (0..nodes.len()).map(|i| format!("gpu-{i}")).collect();
            for (i, (count, mode, mig, cc)) in nodes.iter().enumerate() {
                let mut n = NodeSpec::new(&names[i], *count);
                n = match mode {
                    1 => n.time_sliced(4),
                    2 => n.mps(2),
                    3 if !mig.is_empty() => n.mig(&mig.iter().map(|p| PROFILES[*p]).collect::<Vec<_>>()),
                    _ => n,
                };
                if *cc {
                    n = n.cc("on");
                }
                spec = spec.node(n);
            }
            for (i, (tenant, node, request, place, privileged, quantity)) in workloads.iter().enumerate() {
                let ns = ["cust-acme", "cust-globex", "gpu-operator"][*tenant];
                let node = &names[*node % names.len()];
                let mut w = match place {
                    0 => W::pod(ns, &format!("p{i}")).on(node),
                    1 => W::template(WorkloadKind::Deployment, ns, &format!("d{i}")).permitted(&[node]),
                    _ => W::template(WorkloadKind::DaemonSet, ns, &format!("ds{i}")).permitted(&[node]),
                };
                w = match request {
                    0 => w.gpu(*quantity),
                    1 => w.resource(&format!("nvidia.com/mig-{}", PROFILES[i % 6]), 1),
                    2 => w.kai(0.5),
                    3 => w.hami(1024, &[]),
                    4 => w.gpu(1).vllm(None).peak(100_000),
                    _ => w.visible_devices("all"),
                };
                if *privileged {
                    w = w.privileged().host_ipc();
                }
                spec = spec.workload(w);
            }
            let policy = two_tenants(["none", "limited", "full"][trust]);
            let a = run(&spec, &policy);
            let b = run(&spec, &policy);
            prop_assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap()
            );
            for w in a.findings.windows(2) {
                prop_assert!(w[0].severity >= w[1].severity);
            }
            for f in &a.findings {
                prop_assert!(!f.message.is_empty() && !f.remediation.is_empty(), "{}", f.rule);
                prop_assert!(f.tenants.iter().all(|t| t != "gpu-operator"));
                prop_assert!(f.tenants.len() <= 2);
                // A pairwise finding covers at least one pair, and its accepted pairs are some of them.
                if let Some(pairs) = f.pairs {
                    prop_assert!(pairs >= 1 && f.accepted_pairs.len() < pairs.max(2));
                    // Open pairs are named when some are accepted, and none of them is.
                    prop_assert_eq!(
                        f.open_pairs.len(),
                        if f.accepted_pairs.is_empty() { 0 } else { (pairs - f.accepted_pairs.len()).min(20) }
                    );
                    prop_assert!(f.open_pairs.iter().all(|p| f.accepted_pairs.iter().all(|a| a.tenants != *p)));
                }
            }
            // Every pair a group counts is a pair of its tenants.
            for g in &a.groups {
                let k = g.tenants.len();
                prop_assert!(k >= 2 && g.pairs >= 1 && g.pairs <= k * (k - 1) / 2);
            }
        }
    }
}

/// Every finding of a pairwise rule is true of every pair it covers, on generated fleets of a few
/// nodes of one or two node groups, tenants scheduled, permitted on some nodes, or both, and random
/// trust: checked against the fleet as written, not against the analysis.
mod pairs_hold {
    use super::common::*;
    use gpu_trust_model::fleet::{DraStrategy, WorkloadKind};
    use gpu_trust_model::report::{AuditReport, Finding};
    use gpu_trust_model::{Certainty, Layer, Trust};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    const TENANTS: [&str; 4] = ["acme", "globex", "initech", "umbrella"];

    /// How each tenant reaches each node, from the spec: scheduled there (a pod, or a DaemonSet's
    /// template on each node it selects), or a template permitted there.
    #[derive(Default)]
    struct Reach {
        scheduled: BTreeSet<(usize, String)>,
        permitted: BTreeSet<(usize, String)>,
        /// Tenants with a workload.
        tenants: BTreeSet<usize>,
        /// Scheduled with `nvidia.com/gpu` on a node that time-slices or shares it through MPS.
        shared_gpu: BTreeSet<(usize, String)>,
    }

    impl Reach {
        fn any(&self, t: usize, n: &str) -> bool {
            let k = (t, n.to_string());
            self.scheduled.contains(&k) || self.permitted.contains(&k)
        }
        fn may(&self, t: usize, n: &str) -> bool {
            self.permitted.contains(&(t, n.to_string()))
        }
        fn placed(&self, t: usize, n: &str) -> bool {
            self.scheduled.contains(&(t, n.to_string()))
        }
    }

    fn tenant(name: &str) -> usize {
        TENANTS
            .iter()
            .position(|t| *t == name)
            .unwrap_or(usize::MAX)
    }

    fn fleet(configs: &[u8], workloads: &[(usize, u8, u8, u8, u64)]) -> (FleetSpec, Reach) {
        let mut spec = FleetSpec::default();
        let names: Vec<String> = (0..configs.len()).map(|i| format!("gpu-{i}")).collect();
        for (i, c) in configs.iter().enumerate() {
            // Nodes of one configuration make one node group over several nodes.
            let n = NodeSpec::new(&names[i], 2);
            spec = spec.node(match c % 4 {
                0 => n.time_sliced(4),
                1 => n.mps(2),
                2 => n.mig(&["3g.40gb", "3g.40gb"]),
                _ => n,
            });
        }
        let mut reach = Reach::default();
        for (i, (t, place, mask, request, quantity)) in workloads.iter().enumerate() {
            let ns = format!("ns-{}", TENANTS[*t]);
            let chosen: Vec<&str> = names
                .iter()
                .enumerate()
                .filter(|(k, _)| mask & (1 << k) != 0)
                .map(|(_, n)| n.as_str())
                .collect();
            let first = names[usize::from(*mask) % names.len()].as_str();
            let mut w = match place % 3 {
                0 => {
                    reach.scheduled.insert((*t, first.to_string()));
                    W::pod(&ns, &format!("p{i}")).on(first)
                }
                1 => {
                    for n in &chosen {
                        reach.permitted.insert((*t, n.to_string()));
                    }
                    W::template(WorkloadKind::Deployment, &ns, &format!("d{i}")).permitted(&chosen)
                }
                _ => {
                    for n in &chosen {
                        reach.scheduled.insert((*t, n.to_string()));
                    }
                    W::template(WorkloadKind::DaemonSet, &ns, &format!("ds{i}")).permitted(&chosen)
                }
            };
            w = match request % 6 {
                0 => w.gpu(*quantity),
                1 => w.resource("nvidia.com/mig-3g.40gb", 1),
                2 => w.kai(0.5),
                3 => w.dra(*quantity == 1, DraStrategy::TimeSlicing),
                4 => w.dra(false, DraStrategy::Exclusive),
                _ => w,
            };
            reach.tenants.insert(*t);
            if request % 6 == 0
                && place % 3 == 0
                && configs[usize::from(*mask) % names.len()] % 4 < 2
            {
                // A GPU of a time-sliced or MPS node, scheduled: the device it gets is shared.
                reach.shared_gpu.insert((*t, first.to_string()));
            }
            spec = spec.workload(w);
        }
        (spec, reach)
    }

    /// Pairwise rules a generated policy may accept for a pair.
    const ACCEPTABLE: [&str; 4] = ["GT101", "GT105", "GT207", "GT401"];

    /// The policy's text, its trust per pair, and the rules it accepts per pair.
    type Drawn = (
        String,
        BTreeMap<(usize, usize), Trust>,
        BTreeSet<(&'static str, usize, usize)>,
    );

    fn policy(relations: &[(usize, usize, u8)], accepts: &[(usize, usize, usize)]) -> Drawn {
        let mut text = String::from("tenants:\n");
        for t in TENANTS {
            text.push_str(&format!("  - {{name: {t}, namespaces: [ns-{t}]}}\n"));
        }
        text.push_str("trust:\n  default: none\n  relations:\n");
        let mut trust = BTreeMap::new();
        for (a, b, level) in relations {
            let (a, b) = ((*a).min(*b), (*a).max(*b));
            if a == b || trust.contains_key(&(a, b)) {
                continue;
            }
            let (word, t) = match level % 3 {
                0 => ("none", Trust::None),
                1 => ("limited", Trust::Limited),
                _ => ("full", Trust::Full),
            };
            trust.insert((a, b), t);
            text.push_str(&format!(
                "    - {{tenants: [{}, {}], level: {word}}}\n",
                TENANTS[a], TENANTS[b]
            ));
        }
        if trust.is_empty() {
            text = text.replace("  relations:\n", "");
        }
        let mut accepted = BTreeSet::new();
        for (a, b, rule) in accepts {
            let (a, b) = ((*a).min(*b), (*a).max(*b));
            let rule = ACCEPTABLE[rule % ACCEPTABLE.len()];
            if a != b && accepted.insert((rule, a, b)) {
                text.push_str(if accepted.len() == 1 { "accept:\n" } else { "" });
                text.push_str(&format!(
                    "  - {{rule: {rule}, tenants: [{}, {}], reason: drawn}}\n",
                    TENANTS[a], TENANTS[b]
                ));
            }
        }
        (text, trust, accepted)
    }

    /// Every untrusted pair that shares something is reported (accepted or open): the API server
    /// (every two tenants of the cluster, trust `none`), a node both are scheduled on (trust
    /// `none`), and a time-sliced or MPS node both have a GPU of (trust below `full`), by a finding
    /// of the layer that names the node.
    fn complete(
        report: &AuditReport,
        reach: &Reach,
        trust: &BTreeMap<(usize, usize), Trust>,
    ) -> Result<(), TestCaseError> {
        let reported = |a: usize, b: usize, layer: Layer, node: Option<&String>| {
            let pair = [TENANTS[a].to_string(), TENANTS[b].to_string()];
            report.findings.iter().any(|f| {
                f.layer == layer
                    && node.is_none_or(|n| f.nodes.contains(n))
                    && f.covered_pairs.iter().any(|p| p.tenants == pair)
            })
        };
        for &a in &reach.tenants {
            for &b in reach.tenants.range(a + 1..) {
                let t = trust.get(&(a, b)).copied().unwrap_or(Trust::None);
                if t == Trust::None {
                    prop_assert!(
                        reported(a, b, Layer::ControlPlane, None),
                        "{}-{}: the API server",
                        TENANTS[a],
                        TENANTS[b]
                    );
                }
                for (x, n) in &reach.scheduled {
                    if *x != a || !reach.placed(b, n) || t != Trust::None {
                        continue;
                    }
                    prop_assert!(
                        reported(a, b, Layer::Host, Some(n)),
                        "{}-{}: node {n}",
                        TENANTS[a],
                        TENANTS[b]
                    );
                }
                for (x, n) in &reach.shared_gpu {
                    let both = *x == a && reach.shared_gpu.contains(&(b, n.clone()));
                    if both && t != Trust::Full {
                        prop_assert!(
                            reported(a, b, Layer::Device, Some(n)),
                            "{}-{}: the GPUs of {n}",
                            TENANTS[a],
                            TENANTS[b]
                        );
                    }
                }
            }
        }
        Ok(())
    }

    fn check(
        report: &AuditReport,
        f: &Finding,
        reach: &Reach,
        (_, trust, accepted): &Drawn,
    ) -> Result<(), TestCaseError> {
        let Some(pairs) = f.pairs else { return Ok(()) };
        let rule = gpu_trust_rules::rule(&f.rule).expect("a rule of the registry");
        let group = |id: &str| report.groups.iter().find(|g| g.id == id);
        prop_assert_eq!(
            f.covered_pairs.len(),
            pairs,
            "{}: every pair listed",
            f.rule
        );
        prop_assert!(!f.by_group.is_empty());
        // The finding's certainty is the strongest of its pairs' (what it found shared), its
        // severity the worst of its open pairs' (of all its pairs when the policy accepts every one).
        let strongest = f.covered_pairs.iter().map(|p| p.certainty).min();
        prop_assert_eq!(Some(f.certainty), strongest, "{}", f.rule);
        let open: Vec<_> = f.covered_pairs.iter().filter(|p| !p.accepted).collect();
        let judged: Vec<_> = if open.is_empty() {
            f.covered_pairs.iter().collect()
        } else {
            open
        };
        let worst = judged.iter().map(|p| p.severity).max();
        prop_assert_eq!(Some(f.severity), worst, "{}", f.rule);
        for p in &f.covered_pairs {
            let (a, b) = (tenant(&p.tenants[0]), tenant(&p.tenants[1]));
            let t = trust
                .get(&(a.min(b), a.max(b)))
                .copied()
                .unwrap_or(Trust::None);
            prop_assert_eq!(p.trust, t);
            // Accepted exactly when the policy accepts the rule for the pair.
            prop_assert_eq!(
                p.accepted || f.accepted.is_some(),
                accepted.contains(&(f.rule.as_str(), a.min(b), a.max(b))),
                "{} {:?}: accepted",
                f.rule,
                p.tenants
            );
            // Its severity is the rule's for its trust, at its certainty.
            let base = rule.severity.for_trust(t);
            prop_assert_eq!(
                base.map(|s| p.certainty.adjust(s)),
                Some(p.severity),
                "{} {:?}",
                f.rule,
                p.tenants
            );
            prop_assert!(!p.groups.is_empty());
            for g in &p.groups {
                prop_assert!(
                    f.groups.contains(g),
                    "{}: {g} is one of the finding's groups",
                    f.rule
                );
                let entry = group(g).expect("the group exists");
                // Each covered pair reaches the group: both are in it, and in a permitted group
                // one of them may be placed there.
                prop_assert!(
                    entry.tenants.contains(&p.tenants[0]) && entry.tenants.contains(&p.tenants[1])
                );
                if entry.permitted {
                    prop_assert!(p
                        .tenants
                        .iter()
                        .any(|x| entry.permitted_tenants.contains(x)));
                }
                // ...and a place of the finding says so.
                prop_assert!(f.by_group.iter().any(|s| s.group == *g
                    && s.tenants.contains(&p.tenants[0])
                    && s.tenants.contains(&p.tenants[1])));
            }
            // The certainty holds for the pair, judged from the fleet as written.
            if f.nodes.is_empty() {
                continue; // the API server: every tenant of the cluster.
            }
            let nodes: BTreeSet<&String> = p
                .groups
                .iter()
                .filter_map(|g| group(g))
                .flat_map(|g| g.nodes.iter())
                .collect();
            match p.certainty {
                Certainty::Observed | Certainty::Possible => prop_assert!(
                    nodes
                        .iter()
                        .any(|n| reach.placed(a, n) && reach.placed(b, n)),
                    "{} {:?} {}: scheduled together somewhere",
                    f.rule,
                    p.tenants,
                    p.certainty
                ),
                Certainty::Permitted => prop_assert!(
                    nodes.iter().any(|n| reach.any(a, n)
                        && reach.any(b, n)
                        && (reach.may(a, n) || reach.may(b, n))),
                    "{} {:?}: one may be placed where the other is",
                    f.rule,
                    p.tenants
                ),
            }
        }
        // Each node named hosts at least one covered pair, and every node of the places is named.
        for n in &f.nodes {
            prop_assert!(
                f.covered_pairs
                    .iter()
                    .any(|p| reach.any(tenant(&p.tenants[0]), n)
                        && reach.any(tenant(&p.tenants[1]), n)),
                "{}: node {n} hosts none of its pairs",
                f.rule
            );
        }
        let placed: BTreeSet<&String> = f.by_group.iter().flat_map(|s| s.nodes.iter()).collect();
        prop_assert_eq!(placed, f.nodes.iter().collect::<BTreeSet<_>>());
        // Each place's claims hold for its pairs.
        for s in &f.by_group {
            prop_assert!(s.certainty >= f.certainty);
            // A place whose pairs are all accepted keeps their severity; the finding's is its open
            // pairs'.
            prop_assert!(
                s.severity <= f.severity || s.accepted == s.pairs,
                "{}",
                f.rule
            );
            let here: Vec<_> = f
                .covered_pairs
                .iter()
                .filter(|p| {
                    p.groups.contains(&s.group)
                        && s.tenants.contains(&p.tenants[0])
                        && s.tenants.contains(&p.tenants[1])
                })
                .collect();
            prop_assert!(
                here.len() >= s.pairs,
                "{}: {} pairs in {}",
                f.rule,
                s.pairs,
                s.group
            );
            for p in &here {
                prop_assert!(s.trusts.contains(&p.trust) || s.pairs < here.len());
            }
            for n in &s.nodes {
                prop_assert!(
                    here.iter().any(|p| reach.any(tenant(&p.tenants[0]), n)
                        && reach.any(tenant(&p.tenants[1]), n)),
                    "{}: {} names {n}, where none of its pairs is",
                    f.rule,
                    s.group
                );
            }
            if s.every_pair {
                let g = group(&s.group).expect("the group exists");
                for (i, x) in s.tenants.iter().enumerate() {
                    for y in &s.tenants[i + 1..] {
                        let t = trust
                            .get(&(tenant(x).min(tenant(y)), tenant(x).max(tenant(y))))
                            .copied()
                            .unwrap_or(Trust::None);
                        if !s.trusts.contains(&t)
                            || (g.permitted
                                && !g.permitted_tenants.contains(x)
                                && !g.permitted_tenants.contains(y))
                        {
                            continue;
                        }
                        prop_assert!(
                            f.covered_pairs
                                .iter()
                                .any(|p| p.tenants == [x.clone(), y.clone()]
                                    && p.groups.contains(&s.group)),
                            "{}: {} says every pair, and {x}-{y} is not one",
                            f.rule,
                            s.group
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Every finding of the audit of a generated fleet and policy is true of its pairs, and every
    /// untrusted pair that shares something is reported.
    fn holds(
        configs: &[u8],
        workloads: &[(usize, u8, u8, u8, u64)],
        relations: &[(usize, usize, u8)],
        accepts: &[(usize, usize, usize)],
    ) -> Result<(), TestCaseError> {
        let (spec, reach) = fleet(configs, workloads);
        let drawn = policy(relations, accepts);
        let report = run(&spec, &drawn.0);
        for f in &report.findings {
            check(&report, f, &reach, &drawn)?;
        }
        complete(&report, &reach, &drawn.1)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn every_pairwise_finding_is_true_of_its_pairs(
            configs in proptest::collection::vec(0u8..2, 2..5),
            workloads in proptest::collection::vec((0usize..4, 0u8..3, 1u8..16, 0u8..6, 1u64..3), 2..14),
            relations in proptest::collection::vec((0usize..4, 0usize..4, 0u8..3), 0..4),
            accepts in proptest::collection::vec((0usize..4, 0usize..4, 0usize..4), 0..3),
        ) {
            holds(&configs, &workloads, &relations, &accepts)?;
        }

        #[test]
        fn mig_and_device_findings_are_true_of_their_pairs(
            configs in proptest::collection::vec(0u8..4, 2..5),
            workloads in proptest::collection::vec((0usize..4, 0u8..3, 1u8..16, 0u8..6, 1u64..3), 2..12),
            relations in proptest::collection::vec((0usize..4, 0usize..4, 0u8..3), 0..4),
            accepts in proptest::collection::vec((0usize..4, 0usize..4, 0usize..4), 0..3),
        ) {
            holds(&configs, &workloads, &relations, &accepts)?;
        }
    }
}

/// A fix names what its finding already knows: the one node two tenants meet on (`kubectl taint`
/// takes one node name, so no `NODE` placeholder is left there) and the resource whose replicas to
/// set.
#[test]
fn a_fix_names_the_node_and_the_resource_of_its_finding() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).time_sliced(4))
        .workload(W::pod("cust-acme", "infer-0").on("gpu-1").gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-1").gpu(1));
    let report = run(&spec, &two_tenants("none"));
    for rule in ["GT101", "GT207"] {
        let f = of_rule(&report, rule);
        assert_eq!(f[0].nodes, ["gpu-1"], "{rule}");
        assert!(
            f[0].remediation
                .contains("`kubectl taint nodes gpu-1 gpu-trust/tenant=globex:NoSchedule`"),
            "{rule}: {}",
            f[0].remediation
        );
    }
    let fix = &of_rule(&report, "GT101")[0].remediation;
    assert!(
        fix.contains("set `replicas: 1` for `nvidia.com/gpu` in"),
        "{fix}"
    );
}

/// The DCGM exporter's fix names the DaemonSet that runs it, as its finding does (GT210's violating
/// fixture, built from the GPU Operator's exporter DaemonSet).
#[test]
fn the_exporter_fix_names_its_daemonset() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/GT210");
    let text = std::fs::read_to_string(dir.join("violating.yaml")).unwrap();
    let policy = std::fs::read_to_string(dir.join("violating.policy.yaml")).unwrap();
    let ingested = gpu_trust_ingest::ingest_text(&text, "violating.yaml");
    let tenancy = tenancy(&ingested.fleet, &policy);
    let report = gpu_trust_rules::audit(&gpu_trust_rules::AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &AuditOptions::new(today()),
    });
    let f = of_rule(&report, "GT210");
    assert!(
        f[0].remediation
            .contains("the DCGM exporter of DaemonSet gpu-operator/nvidia-dcgm-exporter"),
        "{}",
        f[0].remediation
    );
}
