//! `gpu-trust policy check`: the contract a user scripts against (exit codes, located errors, output).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const FIXTURES: &str = "../policy/tests/fixtures";

/// `policy check` wide enough (160 columns) that no cell is broken across lines: fitting narrower
/// terminals is tests/width.rs's.
fn check(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .env("COLUMNS", "160")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["policy", "check"])
        .args(args)
        .assert()
}

fn fixture(name: &str) -> String {
    format!("{FIXTURES}/{name}")
}

#[test]
fn typo_exits_2_naming_the_line() {
    let file = fixture("typo-field.yaml");
    check(&[&file])
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(format!(
            "{file}:7:5: error[invalid-value]: unknown field `namepsaces`"
        )));
}

#[test]
fn every_validation_error_is_printed() {
    let file = fixture("values.yaml");
    let out = check(&[&file]).code(2).get_output().stderr.clone();
    let stderr = String::from_utf8(out).unwrap();
    let located: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with(&format!("{file}:")) && l.contains(": error["))
        .collect();
    assert_eq!(located.len(), 15, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{file}:6:14: error[invalid-policy]: latency `urgent`"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{file}:25:16: error[invalid-policy]: sharing.maxReplicas"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("15 errors"), "{stderr}");
}

#[test]
fn valid_policy_prints_tenants_pairs_platform_and_acceptances() {
    check(&[&fixture("valid.yaml"), "--today", "2027-01-15"])
        .success()
        .stdout(
            predicate::str::contains("4 tenants, 6 pairs, 1 acceptance")
                .and(predicate::str::contains("search-prod, search-batch"))
                .and(predicate::str::contains("ads-*"))
                .and(predicate::str::contains("isolation"))
                .and(predicate::str::contains("Group ml-devs"))
                .and(
                    predicate::str::is_match(r"ads / search\s+┆ limited\s+┆ relation \(line 29\)")
                        .unwrap(),
                )
                .and(predicate::str::contains(
                    "Trust between tenants (default: none, for 4 pairs; inside one tenant: full)",
                ))
                .and(predicate::str::contains("acme / ads").not())
                .and(predicate::str::contains(
                    "Platform namespaces (infrastructure, never tenants unless a tenant names them): kube-system, kube-public, kube-node-lease, gpu-operator, nvidia-*",
                ))
                .and(predicate::str::contains(
                    "Added by the policy's platformNamespaces (to the built-in ones above): monitoring",
                ))
                .and(predicate::str::contains("61440 MiB"))
                .and(
                    predicate::str::is_match(r"GT401\s+┆ ads, search .*┆ 2027-06-30 ┆ active")
                        .unwrap(),
                ),
        )
        // The built-in platform globs stay beside the policy's own, so a tenant glob that could
        // take one of their namespaces is warned about (and nothing else is).
        .stderr(
            predicate::str::contains(
                "valid.yaml:14:18: warning[tenant-claims-platform]: tenant `ads` claims `ads-*`, which is also platform glob `*-gpu-operator`",
            )
            .and(predicate::function(|s: &str| s.lines().count() == 1)),
        );
}

#[test]
fn expired_acceptance_is_said_and_does_not_fail_the_check() {
    let file = fixture("valid.yaml");
    check(&[&file, "--today", "2027-07-01"])
        .success()
        .stdout(predicate::str::contains("expired"))
        .stderr(predicate::str::contains(format!(
            "{file}:46:5: warning[acceptance-expired]: acceptance of GT401 expired on 2027-06-30"
        )));
}

#[test]
fn json_output() {
    let out = check(&[
        &fixture("valid.yaml"),
        "--format",
        "json",
        "--today",
        "2027-01-15",
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["schema"], "gpu-trust/policy-check/v2");
    assert_eq!(doc["tenants"].as_array().unwrap().len(), 4);
    assert_eq!(doc["pairs"], 6);
    assert_eq!(doc["defaultTrust"], "none");
    let relations = doc["relations"].as_array().unwrap();
    assert_eq!(relations.len(), 2);
    let limited: Vec<&Value> = relations
        .iter()
        .filter(|p| p["trust"] == "limited")
        .collect();
    assert_eq!(limited.len(), 1);
    assert_eq!(limited[0]["tenants"], serde_json::json!(["ads", "search"]));
    assert_eq!(limited[0]["source"], "relation");
    assert_eq!(doc["acceptances"][0]["state"], "active");
    assert_eq!(doc["workloads"][0]["peakMemoryMib"], 61440);

    let again = check(&[
        &fixture("valid.yaml"),
        "--format",
        "json",
        "--today",
        "2027-01-15",
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    assert_eq!(out, again, "same input, byte-identical JSON");
}

#[test]
fn reads_standard_input() {
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["policy", "check", "-"])
        .write_stdin("tenants:\n  - name: a\n    namespaces: [a]\n    latncy: critical\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "-:4:5: error[invalid-value]: unknown field `latncy`",
        ));
}

#[test]
fn empty_policy_is_the_secure_default() {
    check(&[&fixture("empty.yaml")]).success().stdout(
        predicate::str::contains("every namespace is a tenant of its own")
            .and(predicate::str::contains("capsule.clastix.io/tenant"))
            .and(predicate::str::contains("kube-node-lease")),
    );
}

#[test]
fn missing_file_exits_2() {
    check(&["no-such-policy.yaml"])
        .code(2)
        .stderr(predicate::str::contains("no-such-policy.yaml"));
}

#[test]
fn bad_today_is_a_usage_error() {
    check(&[&fixture("valid.yaml"), "--today", "2027-02-30"])
        .code(2)
        .stderr(predicate::str::contains("does not exist"));
}

#[test]
fn help_has_examples() {
    check(&["--help"])
        .success()
        .stdout(predicate::str::contains("Examples:").and(predicate::str::contains("--today")));
}
