//! From findings to decisions, as a user runs them: `--emit-fixes` writes patches and patched copies
//! that audit again without the findings the actions close; `--baseline` marks findings new,
//! unchanged or fixed by their stable key, and `--fail-on-new` makes the exit status follow the new
//! ones; every JSON report says which tool made it, when and from what input.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const TODAY: &str = "2026-11-15";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn audit(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .env("SOURCE_DATE_EPOCH", "1765000000")
        .env_remove("COLUMNS")
        .arg("audit")
        .args(args)
        .args(["--today", TODAY, "--accept-partial"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn json(args: &[&str]) -> (i32, Value) {
    let (code, out) = audit(&[args, &["--format", "json"]].concat());
    (code, serde_json::from_str(&out).unwrap())
}

fn open(report: &Value) -> BTreeSet<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["accepted"].is_null())
        .map(|f| {
            format!(
                "{}:{}",
                f["rule"].as_str().unwrap(),
                f["key"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn the_patched_copies_audit_again_without_what_the_actions_close() {
    let mut actions = 0;
    for example in [
        "inference-platform",
        "ml-platform",
        "hami-kai",
        "gke",
        "helm-device-plugin",
        "measured-h200",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cluster = format!("examples/{example}/cluster.yaml");
        let policy = format!("examples/{example}/policy.yaml");
        let fixes = dir.path().display().to_string();
        let (_, before) = json(&[&cluster, "--policy", &policy, "--emit-fixes", &fixes]);
        let listed = before["actions"].as_array().unwrap();
        if listed.is_empty() {
            continue;
        }
        actions += listed.len();
        let patched = dir.path().join("patched").join(&cluster);
        assert!(patched.is_file(), "{example}: {}", patched.display());
        let (_, after) = json(&[patched.to_str().unwrap(), "--policy", &policy]);
        let still = open(&after);
        for a in listed {
            let id = a["id"].as_str().unwrap();
            if a["patch"].is_object() {
                assert!(
                    dir.path().join(format!("{id}.json")).is_file(),
                    "{example} {id}"
                );
            }
            for k in a["closes"].as_array().unwrap() {
                let k = k.as_str().unwrap();
                assert!(!still.contains(k), "{example}: {id} claims {k}, still open");
            }
        }
        assert_eq!(
            after["summary"]["findings"], before["fixFirst"]["remaining"],
            "{example}"
        );
    }
    assert!(actions > 0);
}

#[test]
fn the_table_opens_with_the_verdict_and_what_to_fix_first() {
    let (code, table) = audit(&[
        "examples/inference-platform/cluster.yaml",
        "--policy",
        "examples/inference-platform/policy.yaml",
    ]);
    assert_eq!(code, 1);
    let first: Vec<&str> = table.lines().take(3).collect();
    assert!(
        first[0].starts_with("Fails (exit 1): 8 findings at or above high are not accepted"),
        "{first:?}"
    );
    assert!(
        first[2].starts_with("FIX FIRST (3 changes close 7 of the 8 open findings"),
        "{first:?}"
    );
    assert!(table.contains("After these 3 changes (audited together): 0 critical, 1 high"));
    assert!(table.contains("No change tried closes this one: GT207 (perf-eval, umbrella)."));
}

/// The README's example of what to fix first is what the audit prints: each line of it that
/// elides nothing (`...`) is a line of the table.
#[test]
fn the_readme_shows_what_the_audit_prints_first() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let section = readme
        .split("### What to fix first")
        .nth(1)
        .expect("the README's section");
    let block = section
        .split("```")
        .nth(1)
        .expect("its example")
        .trim_matches('\n');
    let (code, table) = audit(&[
        "examples/inference-platform/cluster.yaml",
        "--policy",
        "examples/inference-platform/policy.yaml",
    ]);
    assert_eq!(code, 1);
    let printed: BTreeSet<&str> = table.lines().collect();
    let mut compared = 0;
    for line in block.lines().filter(|l| !l.contains("...")) {
        assert!(
            printed.contains(line),
            "the README's line is not printed: {line:?}"
        );
        compared += 1;
    }
    assert!(compared > 20, "{compared}");
}

/// The finding no action closes says why: the one move that would close it (umbrella's
/// Deployment to the confidential-computing node, the only other node with whole GPUs for it)
/// puts umbrella beside initech, whose contract is isolation.
#[test]
fn what_no_change_closes_says_what_the_changes_that_would_open() {
    let (_, json) = audit(&[
        "examples/inference-platform/cluster.yaml",
        "--policy",
        "examples/inference-platform/policy.yaml",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ff = &report["fixFirst"];
    let unclosed = ff["unclosed"].as_array().unwrap();
    let blocked = ff["blocked"].as_array().unwrap();
    assert_eq!(blocked.len(), 1, "{blocked:?}");
    let b = &blocked[0];
    assert!(b["summary"]
        .as_str()
        .unwrap()
        .starts_with("Move Deployment cust-umbrella/llm-api to node gpu-h100-cc-01"));
    assert_eq!(b["closes"].as_array().unwrap(), unclosed);
    let opens = b["opens"].as_array().unwrap();
    assert!(opens.iter().any(|o| o["rule"] == "GT501"
        && o["tenants"] == serde_json::json!(["initech", "umbrella"])
        && o["severity"] == "high"));
    let (_, table) = audit(&[
        "examples/inference-platform/cluster.yaml",
        "--policy",
        "examples/inference-platform/policy.yaml",
    ]);
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "would close GT207 (perf-eval, umbrella) but opens GT501 (initech, umbrella)."
        ),
        "{flat}"
    );
}

#[test]
fn a_baseline_round_trips_and_a_removed_workload_is_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = "examples/inference-platform/cluster.yaml";
    let policy = "examples/inference-platform/policy.yaml";
    let (_, base) = audit(&[cluster, "--policy", policy, "--format", "json"]);
    let base_file = dir.path().join("base.json");
    std::fs::write(&base_file, &base).unwrap();
    let base_path = base_file.to_str().unwrap();

    // Against its own report: every finding unchanged, nothing fixed; --fail-on-new passes.
    let (code, same) = json(&[
        cluster,
        "--policy",
        policy,
        "--baseline",
        base_path,
        "--fail-on-new",
    ]);
    assert_eq!(code, 0, "{}", same["verdict"]);
    let findings = same["findings"].as_array().unwrap();
    assert!(findings.iter().all(|f| f["since"] == "unchanged"));
    assert_eq!(same["baseline"]["new"], 0);
    assert_eq!(same["baseline"]["unchanged"], findings.len());
    assert_eq!(same["baseline"]["fixed"], serde_json::json!([]));

    // Without umbrella's Deployment and its pods: its own finding is fixed.
    let text = std::fs::read_to_string(workspace().join(cluster)).unwrap();
    let docs: Vec<&str> = text
        .split("\n---\n")
        .filter(|d| !(d.contains("name: llm-api") && d.contains("namespace: cust-umbrella")))
        .collect();
    let docs = if docs.len() > 1 {
        docs.join("\n---\n")
    } else {
        let mut list: serde_json::Value =
            serde_saphyr::from_str::<serde_json::Value>(&text).unwrap();
        let items = list["items"].as_array_mut().unwrap();
        items.retain(|o| {
            let m = &o["metadata"];
            !(m["namespace"] == "cust-umbrella"
                && (m["name"] == "llm-api"
                    || m["name"].as_str().unwrap_or("").starts_with("llm-api-")))
        });
        serde_json::to_string(&list).unwrap()
    };
    let smaller = dir.path().join("cluster.yaml");
    std::fs::write(&smaller, docs).unwrap();
    let (code, less) = json(&[
        smaller.to_str().unwrap(),
        "--policy",
        policy,
        "--baseline",
        base_path,
        "--fail-on-new",
    ]);
    let fixed: Vec<String> = less["baseline"]["fixed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}:{}",
                f["rule"].as_str().unwrap(),
                f["key"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        fixed.contains(&"GT107:Deployment/cust-umbrella/llm-api".to_string()),
        "{fixed:?}"
    );
    // What stays is unchanged; nothing new fails the run.
    assert_eq!(less["baseline"]["new"], 0, "{}", less["baseline"]);
    assert_eq!(code, 0);
}

#[test]
fn a_new_finding_fails_the_run_under_fail_on_new() {
    let dir = tempfile::tempdir().unwrap();
    // A baseline without findings: every finding of the audit is new.
    let base = dir.path().join("base.json");
    std::fs::write(&base, r#"{"schema": "gpu-trust/audit/v2", "findings": []}"#).unwrap();
    let (code, report) = json(&[
        "examples/inference-platform/cluster.yaml",
        "--policy",
        "examples/inference-platform/policy.yaml",
        "--baseline",
        base.to_str().unwrap(),
        "--fail-on-new",
    ]);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"]["exitCode"], 1);
    assert!(report["verdict"]["reason"]
        .as_str()
        .unwrap()
        .starts_with("8 new findings at or above high"));
    // Another schema is not a baseline.
    std::fs::write(&base, r#"{"schema": "gpu-trust/plan/v1", "findings": []}"#).unwrap();
    let (code, _) = audit(&[
        "examples/gke/cluster.yaml",
        "--baseline",
        base.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
}

#[test]
fn a_json_report_says_which_tool_made_it_when_and_from_what() {
    let args = [
        "examples/gke/cluster.yaml",
        "--policy",
        "examples/gke/policy.yaml",
    ];
    let (_, a) = json(&args);
    let (_, b) = json(&args);
    let p = &a["provenance"];
    assert_eq!(p["tool"], "gpu-trust");
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    // SOURCE_DATE_EPOCH=1765000000.
    assert_eq!(p["generatedAt"], "2025-12-06T05:46:40Z");
    assert!(p["inputDigest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(a, b, "the same input and time give the same report");
    let (_, c) = json(&["examples/helm-device-plugin/cluster.yaml"]);
    assert_ne!(c["provenance"]["inputDigest"], p["inputDigest"]);
    assert!(a["advisoryData"]["newestBulletin"].is_string());
}

#[test]
fn the_summary_fits_80_columns_for_the_examples() {
    for example in [
        "inference-platform",
        "ml-platform",
        "hami-kai",
        "gke",
        "helm-device-plugin",
        "measured-h200",
    ] {
        let out = Command::cargo_bin("gpu-trust")
            .unwrap()
            .current_dir(workspace())
            .env("NO_COLOR", "1")
            .env("COLUMNS", "80")
            .args(["audit", &format!("examples/{example}/cluster.yaml")])
            .args(["--policy", &format!("examples/{example}/policy.yaml")])
            .args(["--today", TODAY, "--accept-partial", "--summary"])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("\nTENANTS ("), "{example}: {text}");
        assert!(!text.contains("\nFINDINGS"), "{example}");
        for line in text.lines().filter(|l| l.chars().count() > 80) {
            // Only a command, whole on its own line, may pass the width.
            assert!(line.starts_with("           kubectl "), "{example}: {line}");
        }
    }
}

/// `policy init` on every example and corpus scenario: the policy it writes passes `policy check`
/// and audits the same input without an error.
#[test]
fn a_drafted_policy_passes_the_check_and_audits_its_cluster() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut inputs: Vec<Vec<PathBuf>> = [
        "inference-platform",
        "ml-platform",
        "hami-kai",
        "gke",
        "helm-device-plugin",
        "measured-h200",
    ]
    .iter()
    .map(|e| vec![workspace().join(format!("examples/{e}/cluster.yaml"))])
    .collect();
    let scenarios = corpus.join("scenarios");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&scenarios)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let list = std::fs::read_to_string(dir.join("files.txt")).unwrap();
        inputs.push(
            list.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| match l.starts_with("nodes-") {
                    true => scenarios.join(l),
                    false => corpus.join("real-world").join(l),
                })
                .collect(),
        );
    }
    assert!(inputs.len() >= 16);
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("tenancy.yaml");
    let run = |args: &[&std::ffi::OsStr]| {
        Command::cargo_bin("gpu-trust")
            .unwrap()
            .env("NO_COLOR", "1")
            .args(args)
            .output()
            .unwrap()
    };
    for files in inputs {
        let mut init: Vec<&std::ffi::OsStr> = vec!["policy".as_ref(), "init".as_ref()];
        init.extend(files.iter().map(|f| f.as_os_str()));
        init.extend(["--output".as_ref(), policy.as_os_str()]);
        let out = run(&init);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{files:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&policy).unwrap();
        assert!(text.contains("trust:\n  default: none"), "{text}");
        let check = run(&["policy".as_ref(), "check".as_ref(), policy.as_os_str()]);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{files:?}:\n{text}\n{}",
            String::from_utf8_lossy(&check.stderr)
        );
        let mut audit: Vec<&std::ffi::OsStr> = vec!["audit".as_ref()];
        audit.extend(files.iter().map(|f| f.as_os_str()));
        audit.extend([
            "--policy".as_ref(),
            policy.as_os_str(),
            "--accept-partial".as_ref(),
            "--today".as_ref(),
            TODAY.as_ref(),
        ]);
        let out = run(&audit);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 1)) && !stderr.contains("error"),
            "{files:?}:\n{text}\n{stderr}"
        );
    }
}
