//! Fail closed on coverage: an audit whose input puts a layer in play but does not let it be
//! evaluated (manifests without nodes, pods on nodes absent from the input, no RBAC) never ends
//! clean: it writes its report marked partial and exits 2, naming each gap, unless the user accepts a
//! partial audit with `--accept-partial`. Checks that need no node still run on manifests alone, and
//! `--nodes FILE` lets a manifest-only run judge co-location.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .timeout(Duration::from_secs(120))
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/coverage")
        .join(name)
        .display()
        .to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

/// The rule codes of the report's findings.
fn rules(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

fn layer<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["coverage"]["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["layer"] == name)
        .unwrap()
}

fn reasons(v: &Value, name: &str) -> Vec<String> {
    layer(v, name)["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["reason"].as_str().unwrap().to_string())
        .collect()
}

/// Exit 2, the report written, and standard error naming the gap and how to accept.
fn partial(r: &Run, words: &[&str]) {
    assert_eq!(r.code, Some(2), "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(
        r.stderr.contains("gpu-trust: error: the audit is partial"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--accept-partial"), "{}", r.stderr);
    for w in words {
        assert!(r.stderr.contains(w), "want `{w}` in:\n{}", r.stderr);
    }
    assert!(!r.stdout.is_empty(), "the report is written");
}

const RBAC: &str = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: admins}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: platform-admins}]\n";

/// A Deployment of `ns` as `helm template` writes it, with `container` as its one container.
fn deployment(ns: &str, name: &str, container: &str) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n{container}"
    )
}

// --- Manifests without nodes --------------------------------------------------------------------

#[test]
fn manifests_without_nodes_are_a_partial_audit() {
    let r = run(&[
        "audit",
        &data("manifests.yaml"),
        &data("rbac.yaml"),
        "--today",
        "2026-11-15",
    ]);
    partial(
        &r,
        &[
            "device (partial)",
            "host (partial)",
            "no-nodes",
            "--nodes FILE",
        ],
    );
    // The table says so on its first line.
    assert!(
        r.stdout
            .starts_with("PARTIAL AUDIT: not evaluated in full: device, host, contract."),
        "{}",
        r.stdout
    );

    // Accepted: the findings decide (none here), and the report says the audit is partial.
    let r = run(&[
        "audit",
        &data("manifests.yaml"),
        &data("rbac.yaml"),
        "--today",
        "2026-11-15",
        "--accept-partial",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("partial audit accepted"), "{}", r.stderr);
    let v = json(&r);
    assert_eq!(v["coverage"]["complete"], false);
    assert_eq!(v["coverage"]["acceptedPartial"], true);
    assert_eq!(layer(&v, "device")["status"], "partial");
    assert_eq!(layer(&v, "contract")["status"], "not-evaluated");
    assert_eq!(layer(&v, "control-plane")["status"], "evaluated");
    assert_eq!(layer(&v, "confidentiality")["status"], "not-in-play");
    assert_eq!(reasons(&v, "device"), ["no-nodes"]);
}

#[test]
fn a_privileged_gpu_container_is_found_in_manifests_alone() {
    let dir = tempfile::tempdir().unwrap();
    let text = deployment(
        "team-a",
        "tool",
        "        - name: main\n          image: cuda\n          securityContext: {privileged: true}\n          resources: {limits: {nvidia.com/gpu: 1}}\n",
    ) + RBAC;
    let file = write(dir.path(), "chart.yaml", &text);
    let r = run(&["audit", s(&file), "--format", "json"]);
    partial(&r, &["no-nodes"]);
    assert!(
        rules(&json(&r)).contains(&"GT202".to_string()),
        "{}",
        r.stdout
    );
    let r = run(&["audit", s(&file), "--format", "json", "--accept-partial"]);
    assert_eq!(
        r.code,
        Some(1),
        "a critical finding fails the run: {}",
        r.stderr
    );
    let v = json(&r);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT202")
        .unwrap();
    assert_eq!(f["severity"], "critical");
    assert_eq!(f["certainty"], "possible");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("container main is privileged"),
        "{f}"
    );
}

#[test]
fn visible_devices_without_a_request_is_found_in_manifests_alone() {
    let dir = tempfile::tempdir().unwrap();
    let text = deployment(
        "team-a",
        "sneak",
        "        - name: main\n          image: cuda\n          env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n",
    ) + RBAC;
    let file = write(dir.path(), "chart.yaml", &text);
    let r = run(&["audit", s(&file), "--format", "json"]);
    partial(&r, &["no-nodes"]);
    let r = run(&["audit", s(&file), "--format", "json", "--accept-partial"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        rules(&json(&r)).contains(&"GT203".to_string()),
        "{}",
        r.stdout
    );
}

#[test]
fn a_greedy_server_on_a_shared_resource_name_is_found_in_manifests_alone() {
    let dir = tempfile::tempdir().unwrap();
    let text = deployment(
        "team-a",
        "vllm",
        "        - name: server\n          image: vllm/vllm-openai:v0.8.4\n          args: [--model, meta-llama/Llama-3.1-8B-Instruct]\n          resources: {limits: {nvidia.com/gpu.shared: 1}}\n",
    ) + RBAC;
    let file = write(dir.path(), "chart.yaml", &text);
    let r = run(&["audit", s(&file), "--format", "json", "--accept-partial"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let v = json(&r);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT107")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("nvidia.com/gpu.shared"),
        "{f}"
    );
    // The same server on a whole GPU is no finding.
    let text = text.replace("nvidia.com/gpu.shared", "nvidia.com/gpu");
    let file = write(dir.path(), "whole.yaml", &text);
    let r = run(&["audit", s(&file), "--format", "json", "--accept-partial"]);
    assert!(
        !rules(&json(&r)).contains(&"GT107".to_string()),
        "{}",
        r.stdout
    );
}

#[test]
fn training_on_a_shared_resource_name_is_found_in_manifests_alone() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: train, namespace: team-a}\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n            - name: pytorch\n              image: nvcr.io/nvidia/pytorch:25.01-py3\n              resources: {limits: {nvidia.com/gpu.shared: 1}}\n".to_string()
        + RBAC;
    let file = write(dir.path(), "job.yaml", &text);
    let r = run(&["audit", s(&file), "--format", "json", "--accept-partial"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        rules(&json(&r)).contains(&"GT106".to_string()),
        "{}",
        r.stdout
    );
    let text = text.replace("nvidia.com/gpu.shared", "nvidia.com/gpu");
    let file = write(dir.path(), "whole.yaml", &text);
    let r = run(&["audit", s(&file), "--format", "json", "--accept-partial"]);
    assert!(
        !rules(&json(&r)).contains(&"GT106".to_string()),
        "{}",
        r.stdout
    );
}

// --- A declared node inventory ------------------------------------------------------------------

#[test]
fn a_node_inventory_lets_manifests_be_judged_for_co_location() {
    let r = run(&[
        "audit",
        &data("manifests.yaml"),
        &data("rbac.yaml"),
        "--nodes",
        &data("nodes.yaml"),
        "--today",
        "2026-11-15",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let v = json(&r);
    assert_eq!(v["coverage"]["complete"], true);
    assert_eq!(layer(&v, "device")["status"], "evaluated");
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT101")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(f["certainty"], "permitted");
    assert_eq!(f["nodes"][0], "gpu-1");
}

#[test]
fn a_node_inventory_must_hold_nodes_and_no_workload() {
    let r = run(&[
        "audit",
        &data("manifests.yaml"),
        "--nodes",
        &data("rbac.yaml"),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("--nodes holds no Node object"),
        "{}",
        r.stderr
    );
    let r = run(&[
        "audit",
        &data("rbac.yaml"),
        "--nodes",
        &data("manifests.yaml"),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("pass workloads as PATH"), "{}", r.stderr);
    let r = run(&["audit", &data("manifests.yaml"), "--nodes", "-"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

// --- Dumps that leave something out -------------------------------------------------------------

#[test]
fn pods_on_nodes_absent_from_the_input_are_a_partial_audit() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = std::fs::read_to_string(data("nodes.yaml")).unwrap();
    let pod = |ns: &str, node: &str| {
        format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec:\n  nodeName: {node}\n  containers:\n  - name: c\n    image: cuda\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")
    };
    let text = format!(
        "{nodes}{}{}{RBAC}",
        pod("team-a", "gpu-1"),
        pod("team-b", "gpu-9")
    );
    let file = write(dir.path(), "dump.yaml", &text);
    let r = run(&["audit", s(&file), "--today", "2026-11-15"]);
    partial(&r, &["missing-nodes", "gpu-9", "device (partial)"]);
    let r = run(&["audit", s(&file), "--format", "json", "--accept-partial"]);
    let v = json(&r);
    assert!(reasons(&v, "host").contains(&"missing-nodes".to_string()));
    assert_eq!(layer(&v, "host")["gaps"][0]["nodes"][0], "gpu-9");
}

#[test]
fn a_dump_without_rbac_does_not_evaluate_the_control_plane() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = std::fs::read_to_string(data("nodes.yaml")).unwrap();
    let text = format!(
        "{nodes}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: team-a}}\nspec:\n  nodeName: gpu-1\n  containers:\n  - name: c\n    image: cuda\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    );
    let file = write(dir.path(), "dump.yaml", &text);
    let r = run(&["audit", s(&file), "--today", "2026-11-15"]);
    partial(&r, &["control-plane (partial)", "no-rbac", "RoleBinding"]);
    // With the RBAC objects, the same dump is complete and clean.
    let file = write(dir.path(), "dump-rbac.yaml", &format!("{text}{RBAC}"));
    let r = run(&["audit", s(&file), "--today", "2026-11-15"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stderr, r.stdout);
    assert!(!r.stdout.contains("PARTIAL AUDIT"), "{}", r.stdout);
}

/// The closing hint of a partial audit names the input that is missing: the RBAC objects for a dump
/// without them, not the nodes it already has.
#[test]
fn the_partial_hint_names_the_missing_input() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = std::fs::read_to_string(data("nodes.yaml")).unwrap();
    let text = format!(
        "{nodes}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: team-a}}\nspec:\n  nodeName: gpu-1\n  containers:\n  - name: c\n    image: cuda\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    );
    let file = write(dir.path(), "dump.yaml", &text);
    let r = run(&["audit", s(&file), "--today", "2026-11-15"]);
    partial(&r, &["no-rbac"]);
    let last = r.stderr.lines().last().unwrap_or_default();
    assert!(last.contains("add the RBAC objects"), "{last}");
    assert!(!last.contains("--nodes"), "{last}");
    // Manifests without nodes: the hint names the nodes.
    let r = run(&[
        "audit",
        &data("manifests.yaml"),
        &data("rbac.yaml"),
        "--today",
        "2026-11-15",
    ]);
    let last = r.stderr.lines().last().unwrap_or_default();
    assert!(last.contains("the Node objects (--nodes FILE)"), "{last}");
    assert!(!last.contains("RBAC"), "{last}");
}

/// Serving pods take their tokens from a Secret with `envFrom` (Kubernetes documentation,
/// "Distribute Credentials Securely Using Secrets"). gpu-trust never reads Secrets: the one that
/// could give a pod without a GPU request the node's GPUs is a `possible` GT203 naming the Secret,
/// the rest is said in coverage, and the audit is complete (its exit code is the findings').
#[test]
fn secret_environments_do_not_make_the_audit_partial() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = std::fs::read_to_string(data("nodes.yaml")).unwrap();
    let pod = |name: &str, gpu: &str| {
        format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: team-a}}\nspec:\n  nodeName: gpu-1\n  containers:\n  - name: c\n    image: vllm/vllm-openai:v0.10.1\n    envFrom: [{{secretRef: {{name: hf-token}}}}]\n{gpu}")
    };
    let text = format!(
        "{nodes}{}{}{RBAC}",
        pod("vllm-0", "    resources: {limits: {nvidia.com/gpu: 1}}\n"),
        pod("router-0", "")
    );
    let file = write(dir.path(), "dump.yaml", &text);
    let r = run(&[
        "audit",
        s(&file),
        "--format",
        "json",
        "--today",
        "2026-11-15",
    ]);
    assert_ne!(r.code, Some(2), "{}", r.stderr);
    assert!(!r.stderr.contains("partial"), "{}", r.stderr);
    let v = json(&r);
    assert_eq!(v["coverage"]["complete"], true);
    let gap = layer(&v, "host")["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["reason"] == "unresolved-environment")
        .expect("the Secrets are stated in coverage");
    assert_eq!(gap["blocking"], false);
    assert_eq!(gap["reportedBy"][0], "GT203");
    let gt203: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "GT203")
        .collect();
    assert_eq!(gt203.len(), 1, "{gt203:#?}");
    assert_eq!(gt203[0]["certainty"], "possible");
    let message = gt203[0]["message"].as_str().unwrap();
    assert!(
        message.contains("router-0") && message.contains("Secret team-a/hf-token"),
        "{message}"
    );
}

#[test]
fn configmaps_alone_are_nothing_to_audit() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: gpu-operator}\ndata: {a: b}\n",
    );
    let r = run(&["audit", s(&file)]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("nothing to audit"), "{}", r.stderr);
}

// --- Every format says so -----------------------------------------------------------------------

#[test]
fn sarif_and_html_carry_the_coverage() {
    let args = [
        "audit",
        &data("manifests.yaml"),
        &data("rbac.yaml"),
        "--today",
        "2026-11-15",
    ];
    let r = run(&[&args[..], &["--format", "sarif"]].concat());
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let v = json(&r);
    let notes = v["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["descriptor"]["id"] == "coverage/no-nodes" && n["level"] == "error"),
        "{notes:#?}"
    );
    assert_eq!(
        v["runs"][0]["properties"]["gpu-trust/coverage"]["complete"],
        false
    );

    let r = run(&[&args[..], &["--format", "html", "--accept-partial"]].concat());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("id=\"partial-audit\""), "banner");
    assert!(
        r.stdout
            .contains("PARTIAL AUDIT (accepted with --accept-partial)"),
        "banner text"
    );
    assert!(r.stdout.contains("data-reason=\"no-nodes\""));
}
