//! `gpu-trust plan`: exit codes, output, emitted artifacts and snapshot.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/plan/plan.yaml")
}

fn plan(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .arg("plan")
        .args(args)
        .args(["--today", "2026-03-01"])
        .output()
        .unwrap()
}

const SMALL: &str = "apiVersion: gpu-trust/v1
kind: Plan
policy:
  tenants:
    - {name: search, namespaces: [search]}
    - {name: ads, namespaces: [ads]}
inventory:
  - {pool: h100, model: NVIDIA-H100-80GB-HBM3, gpusPerNode: 8, nodes: 2}
workloads:
  - {name: chat, tenant: search, kind: inference, replicas: 3, peakMemory: 18GiB}
  - {name: rank, tenant: ads, kind: inference, replicas: 2, peakMemory: 9GiB}
";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_example_places_everything_and_exits_zero() {
    let out = plan(&[example().to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "gpu-trust/plan/v1");
    assert!(doc["unplaced"].as_array().unwrap().is_empty());
    let used = doc["gpusUsed"].as_u64().unwrap();
    let bound = doc["lowerBound"].as_u64().unwrap();
    assert!(bound <= used && used > 0);
    // Every workload says what to request and why.
    for w in doc["workloads"].as_array().unwrap() {
        assert!(
            w["resource"].as_str().unwrap().starts_with("nvidia.com/"),
            "{w}"
        );
        assert!(!w["why"].as_str().unwrap().is_empty());
    }
    // The same input gives the same bytes.
    let again = plan(&[example().to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.stdout, again.stdout);
}

#[test]
fn distrusting_tenants_get_separate_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "plan.yaml", SMALL);
    let out = plan(&[file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for node in doc["nodes"].as_array().unwrap() {
        assert_eq!(node["tenants"].as_array().unwrap().len(), 1, "{node}");
    }
    assert_eq!(doc["nodesUsed"], 2);
}

#[test]
fn unplaceable_replicas_are_reported_and_exit_one() {
    let dir = tempfile::tempdir().unwrap();
    let text = SMALL.replace(
        "  - {name: rank",
        "  - {name: big, tenant: search, kind: inference, replicas: 1, peakMemory: 90GiB}\n  - {name: rank",
    );
    let file = write(dir.path(), "plan.yaml", &text);
    let out = plan(&[file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let unplaced = doc["unplaced"].as_array().unwrap();
    assert_eq!(unplaced.len(), 1);
    assert_eq!(unplaced[0]["workload"], "big");
    assert!(
        unplaced[0]["reason"]
            .as_str()
            .unwrap()
            .contains("needs 90GiB"),
        "{unplaced:?}"
    );
    // The rest is still placed.
    let placed: u64 = doc["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["placed"].as_u64().unwrap())
        .sum();
    assert_eq!(placed, 5);
    assert!(String::from_utf8_lossy(&out.stderr).contains("big#0 not placed"));
}

#[test]
fn a_bad_plan_file_names_the_line_and_exits_two() {
    let dir = tempfile::tempdir().unwrap();
    let text = SMALL.replace("replicas: 3, peakMemory", "replica: 3, peakMemory");
    let file = write(dir.path(), "plan.yaml", &text);
    let out = plan(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plan.yaml:10:"), "{err}");
    assert!(err.contains("replica"), "{err}");
    // A policy error inside the plan file is located in the plan file too.
    let text = SMALL.replace("namespaces: [ads]}", "namespaces: [ads], latency: urgent}");
    let file = write(dir.path(), "plan.yaml", &text);
    let out = plan(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plan.yaml:6:"), "{err}");
    // A missing policy file names the line that points at it.
    let text = SMALL.replace("policy:\n  tenants:\n    - {name: search, namespaces: [search]}\n    - {name: ads, namespaces: [ads]}\n", "policyFile: nowhere.yaml\n");
    let file = write(dir.path(), "plan.yaml", &text);
    let out = plan(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plan.yaml:3:") && err.contains("nowhere.yaml"),
        "{err}"
    );
}

#[test]
fn emit_writes_the_operator_artifacts_and_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let snapshot = dir.path().join("planned.yaml");
    let out = plan(&[
        example().to_str().unwrap(),
        "--emit",
        out_dir.to_str().unwrap(),
        "--emit-snapshot",
        snapshot.to_str().unwrap(),
        "--output",
        dir.path().join("plan.txt").to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mig = std::fs::read_to_string(out_dir.join("mig-parted-config.yaml")).unwrap();
    assert!(
        mig.contains("kind: ConfigMap") && mig.contains("mig-configs"),
        "{mig}"
    );
    let dp = std::fs::read_to_string(out_dir.join("device-plugin-config.yaml")).unwrap();
    assert!(dp.contains("mps") && dp.contains("exclusive"), "{dp}");
    let nodes = std::fs::read_to_string(out_dir.join("nodes.sh")).unwrap();
    assert!(
        nodes.contains("nvidia.com/mig.config=")
            && nodes.contains("nvidia.com/device-plugin.config=")
    );
    assert!(nodes.contains("kubectl taint node"));
    let patch =
        std::fs::read_to_string(out_dir.join("pod-patches/ads-prod.ads-rank.yaml")).unwrap();
    assert!(
        patch.contains("nvidia.com/mig-1g.10gb") && patch.contains("tolerations"),
        "{patch}"
    );
    let snap = std::fs::read_to_string(&snapshot).unwrap();
    assert!(snap.contains("kind: ClusterPolicy") && snap.contains("nodeName:"));
    let table = std::fs::read_to_string(dir.path().join("plan.txt")).unwrap();
    assert!(table.starts_with("Plan: "), "{table}");
}

/// A confidential tenant on a pool that names its CPU TEE runs as NVIDIA's confidential containers:
/// the TEE's Kata runtime class and `nvidia.com/pgpu` in its pod patch, its node labelled for VM
/// passthrough with CC on (no device plugin config), Kata sandbox workloads in the ClusterPolicy.
/// Without a TEE its workload is unplaced with what to add; an unknown TEE is an error at its line.
#[test]
fn confidential_tenants_run_in_confidential_containers() {
    let dir = tempfile::tempdir().unwrap();
    let text = SMALL
        .replace(
            "{name: ads, namespaces: [ads]}",
            "{name: ads, namespaces: [ads], confidential: true}",
        )
        .replace("nodes: 2}", "nodes: 2, tee: tdx}");
    let file = write(dir.path(), "plan.yaml", &text);
    let out_dir = dir.path().join("out");
    let out = plan(&[file.to_str().unwrap(), "--emit", out_dir.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("plugin: sandbox") && table.contains("cc: on"),
        "{table}"
    );
    let patch = std::fs::read_to_string(out_dir.join("pod-patches/ads.rank.yaml")).unwrap();
    assert!(
        patch.contains("runtimeClassName: kata-qemu-nvidia-gpu-tdx")
            && patch.contains("nvidia.com/pgpu: 1")
            && patch.contains("nvidia.com/gpu: null"),
        "{patch}"
    );
    let search = std::fs::read_to_string(out_dir.join("pod-patches/search.chat.yaml")).unwrap();
    assert!(!search.contains("runtimeClassName"), "{search}");
    let nodes = std::fs::read_to_string(out_dir.join("nodes.sh")).unwrap();
    let cc: Vec<&str> = nodes
        .lines()
        .filter(|l| l.contains("nvidia.com/cc.mode=on"))
        .collect();
    assert_eq!(cc.len(), 1, "{nodes}");
    assert!(
        cc[0].contains("nvidia.com/gpu.workload.config=vm-passthrough")
            && !cc[0].contains("nvidia.com/device-plugin.config"),
        "{nodes}"
    );
    let policy = std::fs::read_to_string(out_dir.join("cluster-policy-patch.yaml")).unwrap();
    assert!(
        policy.contains("sandboxWorkloads:\n    enabled: true\n    mode: kata"),
        "{policy}"
    );

    let file = write(dir.path(), "plan.yaml", &text.replace(", tee: tdx", ""));
    let out = plan(&[file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reason = doc["unplaced"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("to pool h100"), "{reason}");

    let file = write(
        dir.path(),
        "plan.yaml",
        &text.replace("tee: tdx", "tee: sgx"),
    );
    let out = plan(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plan.yaml:8:") && err.contains("`sgx`"),
        "{err}"
    );
}

/// An --emit folder whose files or subfolders are symbolic links (a checked-out repository can hold
/// any): nothing is written through them, anywhere, and the run says which link and exits 2.
#[test]
fn emit_never_writes_through_a_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    let away = tempfile::tempdir().unwrap();
    let victim = away.path().join("victim.yaml");
    std::fs::write(&victim, "mine\n").unwrap();
    for (link, target) in [
        ("mig-parted-config.yaml", victim.clone()),
        ("pod-patches", away.path().to_path_buf()),
    ] {
        let out_dir = dir.path().join(link.replace('.', "-"));
        std::fs::create_dir(&out_dir).unwrap();
        std::os::unix::fs::symlink(&target, out_dir.join(link)).unwrap();
        let out = plan(&[
            example().to_str().unwrap(),
            "--emit",
            out_dir.to_str().unwrap(),
            "--output",
            dir.path().join("plan.txt").to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{link}: {err}");
        assert!(err.contains("symbolic link") && err.contains(link), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        let written: Vec<_> = std::fs::read_dir(away.path()).unwrap().collect();
        assert_eq!(written.len(), 1, "{link}: written through the link");
        // Nothing else was written into the folder either: it is refused before any file.
        assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 1, "{link}");
    }
}

#[test]
fn current_names_the_gpu_containers_in_the_pod_patches() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let current = example().with_file_name("current.yaml");
    let out = plan(&[
        example().to_str().unwrap(),
        "--current",
        current.to_str().unwrap(),
        "--emit",
        out_dir.to_str().unwrap(),
        "--output",
        dir.path().join("plan.txt").to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let patches = out_dir.join("pod-patches");
    // Given: the GPU container, the kind, no check; the old GPU request removed, the toleration kept.
    let rank = std::fs::read_to_string(patches.join("ads-prod.ads-rank.yaml")).unwrap();
    assert!(
        rank.contains("# Deployment ads-prod/ads-rank: container `ranker`")
            && rank.contains("kubectl -n ads-prod patch deployment ads-rank --type strategic")
            && rank.contains("nvidia.com/gpu: null")
            && rank.contains("nvidia.com/mig-1g.10gb: 1")
            && !rank.contains("name: envoy")
            && rank.contains("key: nvidia.com/gpu"),
        "{rank}"
    );
    assert!(!patches.join("ads-prod.ads-rank.check.yaml").exists());
    let chat = std::fs::read_to_string(patches.join("search-prod.chat-api.yaml")).unwrap();
    assert!(chat.contains("name: server"), "{chat}");
    // Not given: the name is assumed, and a check comes with the patch.
    let lab = std::fs::read_to_string(patches.join("research.lab.yaml")).unwrap();
    assert!(lab.contains("(assumed)"), "{lab}");
    assert!(patches.join("research.lab.check.yaml").exists());
    // Without --emit, the migration: this dump of Deployments has no Nodes to migrate.
    let out = plan(&[
        example().to_str().unwrap(),
        "--current",
        current.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lacks nodes the plan needs"));
}

#[test]
fn dra_emits_the_example_objects() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = plan(&[
        example().to_str().unwrap(),
        "--dra",
        "--emit",
        out_dir.to_str().unwrap(),
        "--output",
        dir.path().join("plan.txt").to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // examples/plan/dra/ is this output, file for file.
    let example_dir = example().with_file_name("dra");
    let files = |root: &Path| -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    let rel = p.strip_prefix(root).unwrap().display().to_string();
                    out.push((rel, std::fs::read_to_string(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    };
    let emitted = files(&out_dir);
    assert!(emitted.iter().any(|(p, _)| p == "dra/claims.yaml"));
    let classes = &emitted
        .iter()
        .find(|(p, _)| p == "dra/device-classes.yaml")
        .unwrap()
        .1;
    assert!(
        classes.contains("apiVersion: resource.k8s.io/v1") && classes.contains("kind: DeviceClass")
    );
    let mut example_files = files(&example_dir);
    example_files.retain(|(p, _)| p != "README.md");
    assert!(
        emitted == example_files,
        "examples/plan/dra differs from `gpu-trust plan examples/plan/plan.yaml --dra --emit examples/plan/dra`"
    );
}
