//! `gpu-trust inventory`: the fleet as the tool reads it, per node and device, with tenants,
//! unscheduled workloads, what could not be resolved, and the exit codes shared with `audit`.

use assert_cmd::Command;
use std::path::Path;
use std::time::Duration;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ingest/tests/fixtures");

fn inventory(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .arg("inventory")
        .args(args)
        .current_dir(FIXTURES)
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_gpu_operator_cluster_dump_as_a_table() {
    let (code, stdout, stderr) = inventory(&["cluster-dump.yaml"]);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!("cluster_dump_table", stdout);
}

#[test]
fn tenants_come_from_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "tenants:\n  - name: acme\n    namespaces: [cust-acme]\n  - name: research\n    namespaces: [team-a, team-b]\n",
    )
    .unwrap();
    let (code, stdout, stderr) = inventory(&[
        "cluster-dump.yaml",
        "--policy",
        policy.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let node = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "gpu-ts-1")
        .unwrap();
    assert_eq!(node["tenants"], serde_json::json!(["research"]));
    assert_eq!(v["summary"]["tenants"], 2);
}

#[test]
fn json_pins_hami_pods_to_one_gpu_and_is_deterministic() {
    let (code, first, stderr) = inventory(&["cluster-dump.yaml", "--format", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (_, second, _) = inventory(&["cluster-dump.yaml", "--format", "json"]);
    assert_eq!(first, second);
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["schema"], "gpu-trust/inventory/v1");
    let hami = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "gpu-hami-1")
        .unwrap();
    let gpu0 = &hami["devices"][0];
    assert_eq!(gpu0["mechanism"], "hami-vgpu");
    let occupants: Vec<(&str, &str)> = gpu0["occupants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["pod"].as_str().unwrap(), o["certainty"].as_str().unwrap()))
        .collect();
    assert_eq!(
        occupants,
        [("team-a/hami-a", "observed"), ("team-b/hami-b", "observed")]
    );
    let mig = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "gpu-mig-1")
        .unwrap();
    assert_eq!(mig["devices"].as_array().unwrap().len(), 8);
    assert_eq!(v["unresolved"].as_array().unwrap().len(), 2);
}

#[test]
fn yaml_and_json_dumps_give_the_same_inventory_apart_from_locations() {
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        fn walk(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    m.remove("location");
                    m.values_mut().for_each(walk);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        walk(&mut v);
        v
    };
    let (_, yaml, _) = inventory(&["cluster-dump.yaml", "--format", "json"]);
    let (_, json, _) = inventory(&["cluster-dump.json", "--format", "json"]);
    assert_eq!(strip(&yaml), strip(&json));
}

#[test]
fn standard_input_is_read() {
    let text = std::fs::read_to_string(Path::new(FIXTURES).join("labels-only.yaml")).unwrap();
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["inventory", "-"])
        .write_stdin(text)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ts-by-labels  H100-SXM5-80GB x4  (-:3:1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("from node labels (GPU Feature Discovery)"),
        "{stdout}"
    );
}

#[test]
fn a_malformed_document_exits_2_naming_its_position() {
    let (code, stdout, stderr) = inventory(&["broken"]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("broken/b-pods.yaml:19:5: error[invalid-yaml]: invalid YAML"),
        "{stderr}"
    );
    assert!(stderr.contains("--skip-invalid"), "{stderr}");
}

#[test]
fn skip_invalid_lists_the_skipped_document_and_shows_the_rest() {
    let (code, stdout, stderr) = inventory(&["broken", "--skip-invalid"]);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!("broken_skip_invalid_table", stdout);
    let (_, json, _) = inventory(&["broken", "--skip-invalid", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["skipped"][0]["file"], "broken/b-pods.yaml");
    assert_eq!(v["skipped"][0]["line"], 19);
    assert_eq!(v["summary"]["gpuPods"], 2);
}

#[test]
fn an_alias_bomb_is_refused_quickly() {
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..30 {
        let p = i - 1;
        text.push_str(&format!(
            "  a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    // Expanded, this is 9^30 nodes: the timeout only turns a regression into a failure instead of a
    // hung run; the refusal below is the behaviour.
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["inventory", "-"])
        .write_stdin(text)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("-:9:12: error[over-limit]:") && stderr.contains("max_alias_expansion"),
        "{stderr}"
    );
}

#[test]
fn a_missing_path_is_an_input_error() {
    let (code, _, stderr) = inventory(&["no-such-dir/cluster.yaml"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("no-such-dir/cluster.yaml: error[unreadable-input]: cannot read"),
        "{stderr}"
    );
}

#[test]
fn help_has_examples() {
    let (code, stdout, _) = inventory(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("Examples:"));
    assert!(stdout.contains("--skip-invalid"));
}

/// The GPU Operator's operands (driver, toolkit, device plugin, exporters in `gpu-operator`, a
/// platform namespace) are nobody's pods: a node's line counts the tenants' pods without GPUs apart
/// from the platform's. The README's example cluster runs seven operands on `gpu-h100-mig-01`
/// beside globex's and initech's GPU pods.
#[test]
fn operands_are_not_counted_as_the_tenants_pods() {
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/inference-platform"
    );
    let cluster = format!("{example}/cluster.yaml");
    let policy = format!("{example}/policy.yaml");
    let (code, stdout, stderr) = inventory(&[&cluster, "--policy", &policy, "--format", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let node = |name: &str| {
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap()
            .clone()
    };
    let mig = node("gpu-h100-mig-01");
    assert_eq!(mig["tenants"], serde_json::json!(["globex", "initech"]));
    assert_eq!(mig["otherPods"], 0);
    assert_eq!(mig["platformPods"], 7);
    // acme's API gateway runs without a GPU on a CPU node.
    assert_eq!(node("cpu-01")["otherPods"], 2);
    let (_, table, _) = inventory(&[&cluster, "--policy", &policy]);
    assert!(
        table.contains("  tenants: globex, initech; platform (7 pods without GPUs)\n"),
        "{table}"
    );
}
