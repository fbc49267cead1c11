//! The coverage of an audit: per layer, in play or not, evaluated whole, in part or not at all, and
//! which gaps make the run partial.

use crate::common;

use common::*;
use gpu_trust_model::fleet::{
    NodeFact, Subject, UnknownFact, Unresolved, UnresolvedKind, WorkloadClass,
};
use gpu_trust_model::report::coverage::{Coverage, CoverageStatus, GapReason};
use gpu_trust_model::{Layer, Location, ObjectRef};
use gpu_trust_rules::coverage::{coverage, CoverageInput};
use gpu_trust_rules::AuditOptions;

fn cover(spec: &FleetSpec, policy: &str, input: CoverageInput) -> Coverage {
    let fleet = spec.build();
    coverage(&fleet, &tenancy(&fleet, policy), input)
}

fn status(c: &Coverage, layer: Layer) -> CoverageStatus {
    c.layer(layer).unwrap().status
}

fn reasons(c: &Coverage, layer: Layer) -> Vec<GapReason> {
    c.layer(layer)
        .unwrap()
        .gaps
        .iter()
        .map(|g| g.reason)
        .collect()
}

/// A ClusterRoleBinding for the platform's admins: the input has RBAC.
fn with_rbac(spec: FleetSpec) -> FleetSpec {
    spec.binding(
        None,
        "cluster-admin",
        vec![Subject {
            kind: "Group".into(),
            name: "platform-admins".into(),
            namespace: None,
        }],
        vec![],
    )
}

#[test]
fn a_complete_dump_is_evaluated() {
    let spec = with_rbac(
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1))
            .workload(W::pod("cust-acme", "a").gpu(1).on("gpu-1")),
    );
    let c = cover(&spec, &two_tenants("none"), CoverageInput::default());
    assert!(c.complete);
    for layer in [
        Layer::Device,
        Layer::Host,
        Layer::ControlPlane,
        Layer::Contract,
    ] {
        assert_eq!(status(&c, layer), CoverageStatus::Evaluated, "{layer}");
    }
    assert_eq!(
        status(&c, Layer::Confidentiality),
        CoverageStatus::NotInPlay
    );
    assert!(c.blocking().next().is_none());
}

#[test]
fn manifests_without_nodes_leave_co_location_unjudged() {
    let spec = with_rbac(
        FleetSpec::default()
            .workload(W::pod("cust-acme", "a").gpu(1))
            .workload(W::pod("cust-globex", "b").gpu(1)),
    );
    let c = cover(&spec, &two_tenants("none"), CoverageInput::default());
    assert!(!c.complete);
    assert_eq!(status(&c, Layer::Device), CoverageStatus::Partial);
    assert_eq!(status(&c, Layer::Host), CoverageStatus::Partial);
    assert_eq!(status(&c, Layer::Contract), CoverageStatus::NotEvaluated);
    assert_eq!(status(&c, Layer::ControlPlane), CoverageStatus::Evaluated);
    assert_eq!(reasons(&c, Layer::Device), [GapReason::NoNodes]);
    let blocking: Vec<Layer> = c.blocking().map(|(l, _)| l).collect();
    assert_eq!(blocking, [Layer::Device, Layer::Host, Layer::Contract]);
    insta::assert_snapshot!(
        "manifests_without_nodes",
        serde_json::to_string_pretty(&c).unwrap()
    );
}

#[test]
fn cpu_nodes_only_are_no_gpu_nodes() {
    let spec = with_rbac(
        FleetSpec::default()
            .node(NodeSpec::cpu("cpu-1"))
            .workload(W::pod("cust-acme", "a").gpu(1)),
    );
    let c = cover(&spec, &two_tenants("none"), CoverageInput::default());
    assert!(!c.complete);
    assert_eq!(reasons(&c, Layer::Device), [GapReason::NoGpuNodes]);
}

#[test]
fn visible_devices_alone_put_the_gpu_layers_in_play() {
    let spec =
        with_rbac(FleetSpec::default().workload(W::pod("cust-acme", "a").visible_devices("all")));
    let c = cover(&spec, &two_tenants("none"), CoverageInput::default());
    assert_eq!(status(&c, Layer::Host), CoverageStatus::Partial);
    assert!(!c.complete);
}

#[test]
fn no_gpu_anywhere_is_not_in_play() {
    let spec = with_rbac(
        FleetSpec::default()
            .node(NodeSpec::cpu("cpu-1"))
            .workload(W::pod("cust-acme", "web").on("cpu-1")),
    );
    let c = cover(&spec, &two_tenants("none"), CoverageInput::default());
    assert!(c.complete);
    for layer in [Layer::Device, Layer::Host, Layer::Contract] {
        assert_eq!(status(&c, layer), CoverageStatus::NotInPlay, "{layer}");
        assert!(c.layer(layer).unwrap().gaps.is_empty());
    }
}

#[test]
fn no_rbac_leaves_the_control_plane_partial() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1))
        .workload(W::pod("cust-acme", "a").gpu(1).on("gpu-1"));
    let c = cover(&spec, &two_tenants("none"), CoverageInput::default());
    assert!(!c.complete);
    assert_eq!(status(&c, Layer::ControlPlane), CoverageStatus::Partial);
    assert_eq!(reasons(&c, Layer::ControlPlane), [GapReason::NoRbac]);
    assert_eq!(status(&c, Layer::Device), CoverageStatus::Evaluated);
}

#[test]
fn pods_on_missing_nodes_are_named() {
    let mut spec = with_rbac(
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1))
            .workload(W::pod("cust-acme", "a").gpu(1).on("gpu-1")),
    );
    spec.unresolved.push(Unresolved {
        object: ObjectRef {
            kind: "Pod".into(),
            namespace: Some("cust-globex".into()),
            name: "b".into(),
            location: Location::new("cluster.yaml", 40, 1),
        },
        node: Some("gpu-9".into()),
        what: UnresolvedKind::MissingNode,
        message: "1 pod(s) are scheduled on node gpu-9, which is not in the input".into(),
    });
    let c = cover(&spec, &two_tenants("none"), CoverageInput::default());
    assert!(!c.complete);
    let gap = &c.layer(Layer::Host).unwrap().gaps[0];
    assert_eq!(gap.reason, GapReason::MissingNodes);
    assert!(gap.blocking);
    assert_eq!(gap.nodes, ["gpu-9"]);
}

#[test]
fn facts_a_platform_hides_are_listed_but_do_not_block() {
    let spec = with_rbac(
        FleetSpec::default()
            .node(NodeSpec::new("gke-1", 1).driver(None))
            .workload(W::pod("cust-acme", "a").gpu(1).on("gke-1")),
    );
    let mut fleet = spec.build();
    let gpu = fleet.nodes[0].gpu.as_mut().unwrap();
    gpu.unknown.push(UnknownFact {
        fact: NodeFact::DriverVersion,
        reason: "GKE labels the driver branch, not its version".into(),
    });
    let c = coverage(
        &fleet,
        &tenancy(&fleet, &two_tenants("none")),
        CoverageInput::default(),
    );
    assert!(c.complete, "{c:#?}");
    assert_eq!(status(&c, Layer::Host), CoverageStatus::Partial);
    let gap = &c.layer(Layer::Host).unwrap().gaps[0];
    assert_eq!(gap.reason, GapReason::HiddenFacts);
    assert!(!gap.blocking);
    assert_eq!(gap.reported_by, ["GT208"]);
    assert!(gap.message.contains("GKE labels the driver branch"));
}

#[test]
fn skipped_documents_make_every_layer_in_play_partial_without_blocking() {
    let spec = with_rbac(
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1))
            .workload(W::pod("cust-acme", "a").gpu(1).on("gpu-1")),
    );
    let c = cover(
        &spec,
        &two_tenants("none"),
        CoverageInput {
            skipped_documents: 2,
            skip_invalid: true,
            accept_partial: false,
        },
    );
    assert!(c.complete);
    assert_eq!(status(&c, Layer::Device), CoverageStatus::Partial);
    assert_eq!(reasons(&c, Layer::ControlPlane), [GapReason::SkippedInput]);
    // Documents no one let go (`serve` cannot be told --skip-invalid): the audit is partial.
    let c = cover(
        &spec,
        &two_tenants("none"),
        CoverageInput {
            skipped_documents: 2,
            skip_invalid: false,
            accept_partial: false,
        },
    );
    assert!(!c.complete);
    assert!(c.layer(Layer::Device).unwrap().gaps[0].blocking);
    assert_eq!(
        status(&c, Layer::Confidentiality),
        CoverageStatus::NotInPlay
    );
}

#[test]
fn a_confidential_tenant_puts_confidentiality_in_play() {
    let policy = "tenants:\n  - {name: acme, namespaces: [cust-acme], confidential: true}\n";
    let spec = with_rbac(
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1))
            .workload(W::pod("cust-acme", "a").gpu(1).on("gpu-1")),
    );
    let c = cover(&spec, policy, CoverageInput::default());
    assert_eq!(
        status(&c, Layer::Confidentiality),
        CoverageStatus::Evaluated
    );
}

/// The report carries the coverage, and the acceptance the options give.
#[test]
fn the_report_carries_the_coverage() {
    let spec = with_rbac(
        FleetSpec::default().workload(
            W::pod("cust-acme", "train")
                .resource("nvidia.com/gpu.shared", 1)
                .class(WorkloadClass::Training),
        ),
    );
    let mut options = AuditOptions::new(today());
    options.accept_partial = true;
    let report = run_with(&spec, &two_tenants("none"), options);
    assert!(!report.coverage.complete);
    assert!(report.coverage.accepted_partial);
    // Training on a shared resource name is found without a node.
    let found = of_rule(&report, "GT106");
    assert_eq!(found.len(), 1, "{}", json(&found));
    assert!(found[0].nodes.is_empty());
}

/// A confidential tenant's GPU pod whose runtime class the dump does not hold (GT303's fixture
/// `clean-unread-runtime-class.yaml`): whether it runs a confidential runtime is a gap of the
/// confidentiality layer, never a finding that it does not.
#[test]
fn an_unread_runtime_class_of_a_confidential_tenant_is_a_confidentiality_gap() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/GT303");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let ingested =
        gpu_trust_ingest::ingest_text(&read("clean-unread-runtime-class.yaml"), "t.yaml");
    let tenancy = tenancy(
        &ingested.fleet,
        &read("clean-unread-runtime-class.policy.yaml"),
    );
    let c = coverage(&ingested.fleet, &tenancy, CoverageInput::default());
    assert_eq!(status(&c, Layer::Confidentiality), CoverageStatus::Partial);
    assert_eq!(
        reasons(&c, Layer::Confidentiality),
        [GapReason::UnresolvedRuntimeClass]
    );
    assert!(!c.complete);
}
