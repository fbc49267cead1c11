//! The real-world corpus (`tests/corpus/real-world/`, manifests and configs as public projects ship
//! them; see its README): every file is read without a false refusal. Files that are not Kubernetes
//! manifests (tool configs, Helm values, fragments of documentation) are refused with the message
//! `tests/corpus/refusals.tsv` names; every other file reads without an error.

use gpu_trust_ingest::{ingest_paths, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real-world")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.file_name().is_some_and(|n| n != "README.md") {
            out.push(p);
        }
    }
}

fn refusals() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/refusals.tsv");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (p, m) = l.split_once('\t').unwrap();
            (p.to_string(), m.to_string())
        })
        .collect()
}

#[test]
fn every_real_world_file_reads_or_is_refused_for_what_it_is() {
    let root = root();
    let mut all = Vec::new();
    files(&root, &mut all);
    assert!(all.len() >= 600, "the corpus went missing: {}", all.len());
    let mut expected = refusals();
    let mut wrong = Vec::new();
    for path in &all {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let ing = ingest_paths(
            std::slice::from_ref(path),
            &mut std::io::empty(),
            &Options::default(),
        );
        let errors: Vec<_> = ing.diagnostics.iter().filter(|d| d.is_error()).collect();
        match (expected.remove(&rel), errors.first()) {
            (None, None) => {}
            (None, Some(e)) => wrong.push(format!("{rel}: refused: {e}")),
            (Some(m), None) => wrong.push(format!("{rel}: read, but should be refused: {m}")),
            (Some(m), Some(e)) => {
                if e.message != m {
                    wrong.push(format!("{rel}: refused with {:?}, not {m:?}", e.message));
                }
                // A refusal names where: the file and a line.
                if e.location.line == 0 {
                    wrong.push(format!("{rel}: refusal without a line: {e}"));
                }
            }
        }
    }
    assert!(
        expected.is_empty(),
        "listed in refusals.tsv but absent: {expected:?}"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn fragments_of_documentation_say_so() {
    for (path, message) in refusals() {
        if path.contains("/_md/") && message.starts_with("invalid YAML") {
            assert!(
                message.contains("this is a fragment of a document, not a manifest"),
                "{path}: {message}"
            );
        }
    }
}

/// The scenarios (`tests/corpus/scenarios/<name>/files.txt`): real manifests of two or more
/// tenants from `real-world/`, on nodes written to match what they ask for (`nodes-*.yaml`), under
/// `scenarios/policy.yaml`. Their findings are snapshot-tested.
#[test]
fn scenarios_of_real_manifests() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let scenarios = base.join("scenarios");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&scenarios)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "{dirs:?}");
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let list = std::fs::read_to_string(dir.join("files.txt")).unwrap();
        let files: Vec<PathBuf> = list
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                if l.starts_with("nodes-") {
                    scenarios.join(l)
                } else {
                    base.join("real-world").join(l)
                }
            })
            .collect();
        let out = assert_cmd::Command::cargo_bin("gpu-trust")
            .unwrap()
            .env("NO_COLOR", "1")
            .arg("audit")
            .args(&files)
            .arg("--policy")
            .arg(scenarios.join("policy.yaml"))
            .args(["--format", "json", "--today", "2026-11-15"])
            // Public manifests carry no RBAC of the cluster: the control plane is a partial audit.
            .arg("--accept-partial")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr)
            .replace(&format!("{}/", base.join("real-world").display()), "")
            .replace(&format!("{}/", scenarios.display()), "");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{name}: exit {:?}\n{stderr}",
            out.status.code()
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut summary = String::new();
        let tenants: Vec<&str> = report["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        summary.push_str(&format!("tenants {tenants:?}\n"));
        for f in report["findings"].as_array().unwrap() {
            let objects: Vec<String> = f["objects"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    format!(
                        "{} {}/{}",
                        o["kind"].as_str().unwrap_or(""),
                        o["namespace"].as_str().unwrap_or("-"),
                        o["name"].as_str().unwrap_or("")
                    )
                })
                .collect();
            summary.push_str(&format!(
                "{} {} {} tenants={} nodes={} objects={objects:?}\n",
                f["rule"].as_str().unwrap(),
                f["severity"].as_str().unwrap(),
                f["certainty"].as_str().unwrap(),
                f["tenants"],
                f["nodes"],
            ));
        }
        for line in stderr.lines() {
            summary.push_str(&format!("stderr {line}\n"));
        }
        insta::assert_snapshot!(format!("scenario_{name}"), summary);
    }
}
