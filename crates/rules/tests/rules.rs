//! Rules against fleets built in code (the model, not YAML): cases a YAML fixture cannot state as
//! directly (a finding's certainty, an unresolved fact, a MIG request the reader checked), and a
//! violating and a clean fleet for the rules written before the fixture folders. A rule's required
//! fixtures are its folder under `tests/fixtures/` (see `fixtures.rs`); a case here is optional.

mod common;

use common::*;
use gpu_trust_model::fleet::{
    ClusterPolicyInfo, PolicyRule, Subject, Unresolved, UnresolvedKind, WorkloadKind,
};
use gpu_trust_model::{Location, ObjectRef, Version};

/// A violating and a clean case of one rule: fleet and policy each.
struct Case {
    violating: (FleetSpec, String),
    clean: (FleetSpec, String),
}

fn check(code: &str, case: Case) {
    let report = run(&case.violating.0, &case.violating.1);
    let found = of_rule(&report, code);
    assert!(
        !found.is_empty(),
        "{code}: the violating case has no finding"
    );
    insta::assert_snapshot!(format!("{code}_violating"), json(&found));
    let report = run(&case.clean.0, &case.clean.1);
    let found = of_rule(&report, code);
    assert!(
        found.is_empty(),
        "{code}: the clean case has findings: {}",
        json(&found)
    );
}

fn ts_node() -> NodeSpec {
    NodeSpec::new("gpu-1", 1).time_sliced(4)
}

fn pair_on(node: NodeSpec, acme: W, globex: W) -> FleetSpec {
    FleetSpec::default()
        .node(node)
        .workload(acme)
        .workload(globex)
}

fn acme() -> W {
    W::pod("cust-acme", "infer-0").on("gpu-1")
}

fn globex() -> W {
    W::pod("cust-globex", "train-0").on("gpu-1")
}

#[test]
fn gt001_unknown_gpu_model() {
    let spec = |product: &str, model: Option<&str>| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1).product(product, model))
            .workload(acme().gpu(1))
    };
    check(
        "GT001",
        Case {
            violating: (spec("NVIDIA-Future-GPU-200GB", None), String::new()),
            clean: (
                spec("NVIDIA-H100-80GB-HBM3", Some("H100-SXM5-80GB")),
                String::new(),
            ),
        },
    );
}

#[test]
fn gt002_missing_sharing_config() {
    let base = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1))
        .workload(acme().gpu(1));
    let mut violating = base.clone();
    violating.unresolved.push(Unresolved {
        object: ObjectRef {
            kind: "Node".into(),
            namespace: None,
            name: "gpu-1".into(),
            location: Location::new(FILE, 10, 1),
        },
        node: Some("gpu-1".into()),
        what: UnresolvedKind::DevicePluginConfig,
        message: "label nvidia.com/device-plugin.config names key `a100-shared`, which ConfigMap gpu-operator/device-plugin-config does not have".into(),
    });
    check(
        "GT002",
        Case {
            violating: (violating, String::new()),
            clean: (base, String::new()),
        },
    );
}

#[test]
fn gt003_expired_acceptance() {
    let spec = pair_on(ts_node(), acme().gpu(1), globex().gpu(1));
    let policy = |until: &str| {
        format!(
            "{}accept:\n  - rule: GT401\n    tenants: [acme, globex]\n    reason: one cluster by design\n    until: {until}\n",
            two_tenants("none")
        )
    };
    check(
        "GT003",
        Case {
            violating: (spec.clone(), policy("2026-01-31")),
            clean: (spec, policy("2027-06-30")),
        },
    );
}

#[test]
fn gt004_acceptance_without_reason() {
    let spec = pair_on(ts_node(), acme().gpu(1), globex().gpu(1));
    let policy = |reason: &str| {
        format!(
            "{}accept:\n  - rule: GT401\n    tenants: [acme, globex]\n{reason}",
            two_tenants("none")
        )
    };
    check(
        "GT004",
        Case {
            violating: (spec.clone(), policy("")),
            clean: (spec, policy("    reason: one cluster by design\n")),
        },
    );
}

#[test]
fn gt101_untrusted_share_time_sliced_gpu() {
    check(
        "GT101",
        Case {
            violating: (
                pair_on(ts_node(), acme().gpu(1), globex().gpu(1)),
                two_tenants("none"),
            ),
            // Two pods of one tenant on one time-sliced GPU are not a trust finding.
            clean: (
                pair_on(
                    ts_node(),
                    acme().gpu(1),
                    W::pod("cust-acme", "infer-1").on("gpu-1").gpu(1),
                ),
                two_tenants("none"),
            ),
        },
    );
}

#[test]
fn gt102_untrusted_share_mps() {
    let spec = pair_on(
        NodeSpec::new("gpu-1", 1).mps(4),
        acme().gpu(1),
        globex().gpu(1),
    );
    check(
        "GT102",
        Case {
            violating: (spec.clone(), two_tenants("limited")),
            clean: (spec, two_tenants("full")),
        },
    );
}

#[test]
fn gt103_untrusted_share_mig_instance() {
    let node = || {
        NodeSpec::new("gpu-1", 1)
            .mig(&["4g.40gb", "3g.40gb"])
            .mig_time_sliced("3g.40gb", 2)
    };
    check(
        "GT103",
        Case {
            violating: (
                pair_on(
                    node(),
                    acme().resource("nvidia.com/mig-3g.40gb", 1),
                    globex().resource("nvidia.com/mig-3g.40gb", 1),
                ),
                two_tenants("limited"),
            ),
            clean: (
                pair_on(
                    NodeSpec::new("gpu-1", 1).mig(&["4g.40gb", "3g.40gb"]),
                    acme().resource("nvidia.com/mig-3g.40gb", 1),
                    globex().resource("nvidia.com/mig-4g.40gb", 1),
                ),
                two_tenants("limited"),
            ),
        },
    );
}

#[test]
fn gt104_distrusting_share_mig_gpu() {
    let spec = pair_on(
        NodeSpec::new("gpu-1", 1).mig(&["4g.40gb", "3g.40gb"]),
        acme().resource("nvidia.com/mig-3g.40gb", 1),
        globex().resource("nvidia.com/mig-4g.40gb", 1),
    );
    check(
        "GT104",
        Case {
            violating: (spec.clone(), two_tenants("none")),
            clean: (spec, two_tenants("limited")),
        },
    );
}

#[test]
fn gt105_fraction_is_accounting() {
    let spec = pair_on(
        NodeSpec::new("gpu-1", 1),
        acme().kai(0.5),
        globex().kai(0.5),
    );
    let hami = pair_on(
        NodeSpec::new("gpu-1", 2).hami(),
        acme()
            .hami(20_000, &["GPU-gpu-1-0"])
            .hami_control_disabled(),
        globex().hami(20_000, &["GPU-gpu-1-0"]),
    );
    let report = run(&hami, &two_tenants("limited"));
    let found = of_rule(&report, "GT105");
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].certainty,
        gpu_trust_model::Certainty::Observed,
        "same UUID"
    );
    assert!(
        found[0].message.contains("CUDA_DISABLE_CONTROL=true"),
        "{}",
        found[0].message
    );
    insta::assert_snapshot!("GT105_hami", json(&found));
    check(
        "GT105",
        Case {
            violating: (spec.clone(), two_tenants("none")),
            clean: (spec, two_tenants("full")),
        },
    );
}

#[test]
fn gt106_training_on_shared_gpu() {
    let job = |node: NodeSpec| {
        FleetSpec::default().node(node).workload(
            W::template(WorkloadKind::PyTorchJob, "cust-acme", "pretrain")
                .permitted(&["gpu-1"])
                .gpu(1),
        )
    };
    check(
        "GT106",
        Case {
            violating: (job(ts_node()), String::new()),
            clean: (job(NodeSpec::new("gpu-1", 8)), String::new()),
        },
    );
}

#[test]
fn gt107_greedy_reservation_on_shared_gpu() {
    let spec = |fraction: Option<f64>| {
        FleetSpec::default()
            .node(ts_node())
            .workload(acme().gpu(1).vllm(fraction))
    };
    check(
        "GT107",
        Case {
            violating: (spec(None), String::new()),
            clean: (spec(Some(0.2)), String::new()),
        },
    );
}

#[test]
fn gt108_invalid_mig_geometry() {
    let spec = |layout: &[&'static str]| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1).mig(layout))
            .workload(acme().resource("nvidia.com/mig-3g.40gb", 1))
    };
    check(
        "GT108",
        Case {
            violating: (spec(&["4g.40gb", "4g.40gb"]), String::new()),
            clean: (spec(&["4g.40gb", "3g.40gb"]), String::new()),
        },
    );
}

#[test]
fn gt108_reads_the_checked_mig_requests() {
    let mut spec = FleetSpec::default().node(NodeSpec::new("gpu-1", 2));
    spec.mig_requests.push(gpu_trust_model::fleet::MigRequest {
        node: 0,
        gpus: vec![0, 1],
        config: "two-halves".into(),
        object: ObjectRef {
            kind: "ConfigMap".into(),
            namespace: Some("gpu-operator".into()),
            name: "custom-mig-config".into(),
            location: Location::new(FILE, 40, 7),
        },
        mig_enabled: true,
        mig_devices: [("4g.40gb".to_string(), 2)].into(),
        error: Some("2 instances of 4g.40gb requested; one GPU holds at most 1".into()),
    });
    let report = run(&spec, "");
    let found = of_rule(&report, "GT108");
    assert_eq!(found.len(), 1);
    assert!(
        found[0].message.contains("two-halves"),
        "{}",
        found[0].message
    );
    assert!(found[0]
        .objects
        .iter()
        .any(|o| o.name == "custom-mig-config" && o.line == 40));
}

#[test]
fn gt109_slice_below_peak() {
    let spec = |peak: u64| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1).mig(&["1g.10gb", "1g.10gb", "3g.40gb"]))
            .workload(acme().resource("nvidia.com/mig-1g.10gb", 1).peak(peak))
    };
    check(
        "GT109",
        Case {
            violating: (spec(24 * 1024), String::new()),
            clean: (spec(8 * 1024), String::new()),
        },
    );
}

#[test]
fn gt110_wide_blast_radius() {
    let spec = |replicas: u32| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1).time_sliced(replicas))
            .workload(acme().gpu(1))
    };
    check(
        "GT110",
        Case {
            violating: (spec(10), String::new()),
            clean: (spec(4), String::new()),
        },
    );
}

#[test]
fn gt111_latency_critical_on_shared_compute() {
    let policy =
        "tenants:\n  - {name: acme, namespaces: [cust-acme], latency: critical}\n".to_string();
    let spec = |node: NodeSpec| FleetSpec::default().node(node).workload(acme().gpu(1));
    check(
        "GT111",
        Case {
            violating: (spec(ts_node()), policy.clone()),
            clean: (spec(NodeSpec::new("gpu-1", 1)), policy),
        },
    );
}

#[test]
fn gt112_mps_client_fault_domain() {
    check(
        "GT112",
        Case {
            violating: (
                pair_on(
                    NodeSpec::new("gpu-1", 1).mps(2),
                    acme().gpu(1),
                    globex().gpu(1),
                ),
                two_tenants("full"),
            ),
            clean: (
                pair_on(NodeSpec::new("gpu-1", 2), acme().gpu(1), globex().gpu(1)),
                two_tenants("full"),
            ),
        },
    );
}

fn cluster_policy(toolkit: &str) -> ClusterPolicyInfo {
    ClusterPolicyInfo {
        object: Some(ObjectRef {
            kind: "ClusterPolicy".into(),
            namespace: None,
            name: "cluster-policy".into(),
            location: Location::new(FILE, 600, 1),
        }),
        operator_namespace: Some("gpu-operator".into()),
        toolkit_version: Version::parse(toolkit),
        ..ClusterPolicyInfo::default()
    }
}

#[test]
fn gt201_vulnerable_container_toolkit() {
    let spec = |toolkit: &str| {
        pair_on(NodeSpec::new("gpu-1", 2), acme().gpu(1), globex().gpu(1))
            .cluster_policy(cluster_policy(toolkit))
    };
    check(
        "GT201",
        Case {
            violating: (spec("v1.16.1-ubuntu20.04"), two_tenants("none")),
            clean: (spec("v1.19.1"), two_tenants("none")),
        },
    );
    // Full trust on the node: high, not critical.
    let report = run(&spec("v1.17.4"), &two_tenants("full"));
    let found = of_rule(&report, "GT201");
    assert_eq!(found[0].severity, gpu_trust_model::Severity::High);
}

#[test]
fn gt202_privileged_tenant_pod_on_gpu_node() {
    let operator_ds = W::template(
        WorkloadKind::DaemonSet,
        "gpu-operator",
        "nvidia-device-plugin-daemonset",
    )
    .permitted(&["gpu-1"])
    .privileged()
    .host_path("/var/lib/kubelet/device-plugins")
    .host_path("/run/nvidia");
    check(
        "GT202",
        Case {
            violating: (
                FleetSpec::default()
                    .node(NodeSpec::new("gpu-1", 1))
                    .workload(acme().gpu(1).privileged().host_path("/dev")),
                String::new(),
            ),
            // Platform DaemonSets are privileged by design: never a tenant finding.
            clean: (
                FleetSpec::default()
                    .node(NodeSpec::new("gpu-1", 1))
                    .workload(acme().gpu(1))
                    .workload(operator_ds),
                String::new(),
            ),
        },
    );
}

#[test]
fn gt203_visible_devices_without_request() {
    let spec = |value: &str| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 4))
            .workload(acme().visible_devices(value))
    };
    check(
        "GT203",
        Case {
            violating: (spec("all"), String::new()),
            clean: (spec("void"), String::new()),
        },
    );
}

#[test]
fn gt204_host_namespaces_on_gpu_node() {
    let spec = |ipc: bool| {
        let w = acme().gpu(1);
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1))
            .workload(if ipc { w.host_ipc() } else { w })
    };
    check(
        "GT204",
        Case {
            violating: (spec(true), String::new()),
            clean: (spec(false), String::new()),
        },
    );
}

#[test]
fn gt205_driver_outside_patch_window() {
    let spec = |driver: &'static str| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1).driver(Some(driver)))
            .workload(acme().gpu(1))
    };
    check(
        "GT205",
        Case {
            violating: (spec("550.54.15"), String::new()),
            clean: (spec("580.95.05"), String::new()),
        },
    );
}

#[test]
fn gt206_tenant_namespace_without_pod_security() {
    let spec = |labels: &[(&str, &str)]| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1))
            .workload(acme().gpu(1))
            .namespace("cust-acme", labels)
    };
    check(
        "GT206",
        Case {
            violating: (
                spec(&[("pod-security.kubernetes.io/enforce", "privileged")]),
                String::new(),
            ),
            clean: (
                spec(&[("pod-security.kubernetes.io/enforce", "baseline")]),
                String::new(),
            ),
        },
    );
}

#[test]
fn gt207_distrusting_share_node() {
    check(
        "GT207",
        Case {
            violating: (
                pair_on(NodeSpec::new("gpu-1", 8), acme().gpu(1), globex().gpu(1)),
                two_tenants("none"),
            ),
            clean: (
                FleetSpec::default()
                    .node(NodeSpec::new("gpu-1", 8))
                    .node(NodeSpec::new("gpu-2", 8))
                    .workload(acme().gpu(1))
                    .workload(W::pod("cust-globex", "train-0").on("gpu-2").gpu(1)),
                two_tenants("none"),
            ),
        },
    );
}

#[test]
fn gt208_unknown_host_versions() {
    let spec = |driver: Option<&'static str>, toolkit: Option<&str>| {
        let mut s = pair_on(
            NodeSpec::new("gpu-1", 2).driver(driver),
            acme().gpu(1),
            globex().gpu(1),
        );
        if let Some(t) = toolkit {
            s = s.cluster_policy(cluster_policy(t));
        }
        s
    };
    check(
        "GT208",
        Case {
            violating: (spec(None, None), two_tenants("limited")),
            clean: (
                spec(Some("580.95.05"), Some("1.19.1")),
                two_tenants("limited"),
            ),
        },
    );
}

const CONFIDENTIAL: &str =
    "tenants:\n  - {name: acme, namespaces: [cust-acme], confidential: true}\n";

#[test]
fn gt301_confidential_tenant_without_cc() {
    let spec = |cc: &'static str| {
        FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1).cc(cc))
            .workload(acme().gpu(1))
    };
    check(
        "GT301",
        Case {
            violating: (spec("off"), CONFIDENTIAL.to_string()),
            clean: (spec("on"), CONFIDENTIAL.to_string()),
        },
    );
}

#[test]
fn gt302_cc_with_partial_allocation() {
    let spec = |node: NodeSpec| FleetSpec::default().node(node).workload(acme().gpu(1));
    check(
        "GT302",
        Case {
            violating: (spec(ts_node().cc("on")), String::new()),
            clean: (spec(NodeSpec::new("gpu-1", 1).cc("on")), String::new()),
        },
    );
}

#[test]
fn gt303_confidential_tenant_without_attestation() {
    let mut clean = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1).cc("on"))
        .workload(acme().gpu(1).runtime_class("kata-qemu-nvidia-gpu-snp"));
    clean.runtime_classes.push((
        "kata-qemu-nvidia-gpu-snp".into(),
        "kata-qemu-nvidia-gpu-snp".into(),
    ));
    check(
        "GT303",
        Case {
            violating: (
                FleetSpec::default()
                    .node(NodeSpec::new("gpu-1", 1).cc("on"))
                    .workload(acme().gpu(1)),
                CONFIDENTIAL.to_string(),
            ),
            clean: (clean, CONFIDENTIAL.to_string()),
        },
    );
}

#[test]
fn gt401_distrusting_share_api_server() {
    let spec = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1))
        .node(NodeSpec::new("gpu-2", 1))
        .workload(acme().gpu(1))
        .workload(W::pod("cust-globex", "train-0").on("gpu-2").gpu(1));
    check(
        "GT401",
        Case {
            violating: (spec.clone(), two_tenants("none")),
            clean: (spec, two_tenants("limited")),
        },
    );
}

fn sa(ns: &str, name: &str) -> Subject {
    Subject {
        kind: "ServiceAccount".into(),
        name: name.into(),
        namespace: Some(ns.into()),
    }
}

fn rule(group: &str, resource: &str, verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: vec![group.into()],
        resources: vec![resource.into()],
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        resource_names: vec![],
    }
}

#[test]
fn gt402_tenant_can_repartition_gpus() {
    let base = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1))
        .workload(acme().gpu(1));
    check(
        "GT402",
        Case {
            violating: (
                base.clone().binding(
                    None,
                    "node-labeler",
                    vec![sa("cust-acme", "ci")],
                    vec![rule("", "nodes", &["get", "patch"])],
                ),
                String::new(),
            ),
            // ConfigMaps of its own namespace are the tenant's business.
            clean: (
                base.binding(
                    Some("cust-acme"),
                    "config-editor",
                    vec![sa("cust-acme", "ci")],
                    vec![rule("", "configmaps", &["*"])],
                ),
                String::new(),
            ),
        },
    );
}

#[test]
fn gt403_tenant_can_write_cluster_scope() {
    let policy = "tenants:\n  - name: acme\n    namespaces: [cust-acme]\n    subjects: [{kind: Group, name: acme-devs}]\n";
    let group = Subject {
        kind: "Group".into(),
        name: "acme-devs".into(),
        namespace: None,
    };
    let base = FleetSpec::default()
        .node(NodeSpec::new("gpu-1", 1))
        .workload(acme().gpu(1));
    check(
        "GT403",
        Case {
            violating: (
                base.clone().binding(
                    None,
                    "crd-installer",
                    vec![group.clone()],
                    vec![rule(
                        "apiextensions.k8s.io",
                        "customresourcedefinitions",
                        &["create"],
                    )],
                ),
                policy.to_string(),
            ),
            // Binding roles inside its own namespace reaches no other tenant.
            clean: (
                base.binding(
                    Some("cust-acme"),
                    "namespace-admin",
                    vec![group],
                    vec![rule(
                        "rbac.authorization.k8s.io",
                        "roles",
                        &["bind", "escalate"],
                    )],
                ),
                policy.to_string(),
            ),
        },
    );
}

#[test]
fn gt501_isolation_promised_not_enforced() {
    let policy = "tenants:\n  - {name: acme, namespaces: [cust-acme], contract: isolation}\n  - {name: globex, namespaces: [cust-globex]}\ntrust:\n  relations:\n    - {tenants: [acme, globex], level: limited}\n";
    check(
        "GT501",
        Case {
            violating: (
                pair_on(ts_node(), acme().gpu(1), globex().gpu(1)),
                policy.to_string(),
            ),
            clean: (
                pair_on(
                    NodeSpec::new("gpu-1", 1).mig(&["4g.40gb", "3g.40gb"]),
                    acme().resource("nvidia.com/mig-4g.40gb", 1),
                    globex().resource("nvidia.com/mig-3g.40gb", 1),
                ),
                policy.to_string(),
            ),
        },
    );
}

#[test]
fn gt502_shared_not_isolated() {
    check(
        "GT502",
        Case {
            violating: (
                pair_on(ts_node(), acme().gpu(1), globex().gpu(1)),
                two_tenants("full"),
            ),
            clean: (
                FleetSpec::default().node(ts_node()).workload(acme().gpu(1)),
                two_tenants("full"),
            ),
        },
    );
}
