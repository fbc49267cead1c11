//! Judgements the audit once got wrong on real clusters, each on a small cluster of its own
//! (`tests/data/judgements/`): templates pinned by `nodeName`, the namespaces schedulers and
//! workload operators install into, and a vCluster host namespace.

use assert_cmd::Command;
use serde_json::Value;

fn audit(name: &str) -> Value {
    let path = format!(
        "{}/tests/data/judgements/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .env("NO_COLOR", "1")
        .args(["audit", &path, "--format", "json", "--today", "2026-11-15"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{name}: {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn findings<'r>(report: &'r Value, rule: &str) -> Vec<&'r Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

fn tenants(report: &Value) -> Vec<&str> {
    report["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[test]
fn templates_pinned_by_node_name_are_on_that_node() {
    // nodeName puts every pod of the template on gpu-1: the two tenants are together there as soon
    // as the pods exist, not merely permitted to be.
    let report = audit("node-name-templates.yaml");
    let gt101 = findings(&report, "GT101");
    assert_eq!(gt101.len(), 1, "{report:#}");
    assert_ne!(gt101[0]["certainty"], "permitted", "{:#}", gt101[0]);
    assert_eq!(gt101[0]["severity"], "critical");
    assert_eq!(gt101[0]["nodes"], serde_json::json!(["gpu-1"]));
}

#[test]
fn scheduler_and_operator_namespaces_are_not_tenants() {
    // volcano-system, kai-scheduler, hami-system, lws-system and the KubeRay operator's ray-system
    // are infrastructure: HAMi's privileged device plugin is not a tenant's privileged pod.
    let report = audit("operator-namespaces.yaml");
    assert_eq!(tenants(&report), ["team-a"], "{report:#}");
    assert!(findings(&report, "GT202").is_empty(), "{report:#}");
}

#[test]
fn a_vcluster_host_namespace_is_a_virtual_cluster() {
    // The host namespace holds the vCluster's own control plane beside the pods it synced: the
    // tenant still has an API server of its own, so it does not share one with team-b.
    let report = audit("vcluster.yaml");
    assert_eq!(tenants(&report), ["team-b", "vc-team-a"]);
    assert!(findings(&report, "GT401").is_empty(), "{report:#}");
    // The report says why: the tenant runs in a virtual cluster, and no control-plane group holds it.
    let vc = report["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "vc-team-a")
        .unwrap();
    assert_eq!(vc["virtualCluster"], true, "{vc:#}");
    let groups = report["groups"].as_array().unwrap();
    assert!(
        !groups.iter().any(|g| g["level"] == "control-plane"
            && g["tenants"]
                .as_array()
                .unwrap()
                .contains(&"vc-team-a".into())),
        "{report:#}"
    );
    // The nodes and the GPU are still shared.
    assert_eq!(findings(&report, "GT101").len(), 1, "{report:#}");
    let gpu = groups
        .iter()
        .find(|g| g["level"] == "device")
        .expect("a device group");
    assert_eq!(gpu["tenants"], serde_json::json!(["team-b", "vc-team-a"]));
}
