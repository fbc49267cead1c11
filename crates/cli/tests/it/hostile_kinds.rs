//! Objects whose `apiVersion` or `kind` is not what it seems: a list inside a list, which kubectl
//! flattens and so must the audit; a kind in the wrong letter case and a version of a core kind
//! the API server does not serve, which the API server refuses and so must the audit (exit 2,
//! with the file, line and column of the field), rather than drop a node without a word.

use assert_cmd::Command;
use serde_json::Value;

fn data(name: &str) -> String {
    format!("{}/tests/data/kinds/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run(command: &str, file: &str) -> std::process::Output {
    let mut cmd = Command::cargo_bin("gpu-trust").unwrap();
    cmd.env("NO_COLOR", "1").arg(command).arg(data(file));
    if command == "audit" {
        cmd.args(["--today", "2026-11-15"]);
    }
    cmd.output().unwrap()
}

#[test]
fn a_list_inside_a_list_is_read_whole() {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["inventory", &data("nested-list.yaml"), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inv: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The Node of the inner List, and the Pod of a PodList inside it (items without a kind take
    // the PodList's).
    assert_eq!(inv["summary"]["nodes"], 1, "{inv:#}");
    assert_eq!(inv["summary"]["workloads"], 1, "{inv:#}");
    assert_eq!(inv["summary"]["gpuPods"], 1, "{inv:#}");
    assert_eq!(inv["nodes"][0]["name"], "gpu-1");
}

/// Exit 2 from both commands that read a cluster, with an error at `line:column`.
fn refused(file: &str, line_column: &str, says: &str) {
    for command in ["inventory", "audit"] {
        let out = run(command, file);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command} {file}: {stderr}");
        assert!(out.stdout.is_empty(), "{command} {file}");
        let expected = format!("{file}:{line_column}: error[");
        let line = stderr
            .lines()
            .find(|l| l.contains(&expected))
            .unwrap_or_else(|| panic!("{command}: no error at {expected}\n{stderr}"));
        assert!(line.contains(says), "{line}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_kind_in_the_wrong_case_is_refused_at_the_kind() {
    refused(
        "lowercase-kind.yaml",
        "3:7",
        "kind \"node\" does not exist (kinds are case-sensitive)",
    );
    refused("lowercase-kind.yaml", "3:7", "did you mean \"Node\"");
}

#[test]
fn a_core_kind_at_a_version_not_served_is_refused_at_the_api_version() {
    refused(
        "node-v2.yaml",
        "2:13",
        "Node is served at apiVersion v1; the API server would refuse v2",
    );
}

#[test]
fn skip_invalid_reads_the_rest_and_says_what_was_skipped() {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args([
            "inventory",
            &data("node-v2.yaml"),
            &data("nested-list.yaml"),
            "--skip-invalid",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let inv: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(inv["summary"]["skipped"], 1, "{inv:#}");
    assert_eq!(inv["summary"]["nodes"], 1, "{inv:#}");
}
