//! `gpu-trust rules` and `gpu-trust explain`: the catalogue as users see it.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn gpu_trust() -> Command {
    let mut cmd = Command::cargo_bin("gpu-trust").unwrap();
    cmd.env_remove("COLUMNS");
    cmd.env("NO_COLOR", "1");
    cmd
}

#[test]
fn rules_lists_every_code_once_in_order() {
    let out = gpu_trust()
        .args(["rules", "--format", "json"])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "gpu-trust/rules/v1");
    let codes: Vec<&str> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    let mut sorted = codes.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(codes, sorted, "codes sorted and unique");
    for code in [
        "GT001", "GT101", "GT105", "GT201", "GT301", "GT402", "GT501",
    ] {
        assert!(codes.contains(&code), "{code} missing");
    }
    // What the command lists is the registry, whole and in its order: the rules crate's
    // `registry__codes` snapshot is the one reviewed list of codes, so a new rule changes nothing here.
    let listed: Vec<(&str, &str, &str, &str)> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["code"].as_str().unwrap(),
                r["name"].as_str().unwrap(),
                r["layer"].as_str().unwrap(),
                r["severityRule"].as_str().unwrap(),
            )
        })
        .collect();
    let severities: Vec<String> = gpu_trust_rules::registry()
        .iter()
        .map(|r| r.severity.to_string())
        .collect();
    let registry: Vec<(&str, &str, &str, &str)> = gpu_trust_rules::registry()
        .iter()
        .zip(&severities)
        .map(|(r, s)| (r.code, r.name, r.layer.as_str(), s.as_str()))
        .collect();
    assert_eq!(listed, registry);
}

#[test]
fn rules_table_groups_by_code_family() {
    let out = gpu_trust()
        .arg("rules")
        .assert()
        .code(0)
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let pos = |h: &str| {
        text.find(&format!("{h}\n"))
            .unwrap_or_else(|| panic!("{h} missing:\n{text}"))
    };
    assert!(pos("INPUT AND POLICY") < pos("DEVICE"));
    assert!(pos("DEVICE") < pos("HOST"));
    assert!(pos("HOST") < pos("CONFIDENTIALITY"));
    assert!(pos("CONFIDENTIALITY") < pos("CONTROL-PLANE"));
    assert!(pos("CONTROL-PLANE") < pos("CONTRACT"));
    assert!(text.contains("GT101  untrusted-share-time-sliced-gpu"));
    assert!(!text.contains('\x1b'));
}

#[test]
fn explain_prints_the_documentation() {
    gpu_trust()
        .args(["explain", "GT101"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "GT101 untrusted-share-time-sliced-gpu\n",
        ))
        .stdout(predicate::str::contains("## What it detects"))
        .stdout(predicate::str::contains("## Remediation"))
        .stdout(predicate::str::contains("## References"));
    // Lower case and names work too.
    gpu_trust()
        .args(["explain", "gt105"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("GT105 "));
    gpu_trust()
        .args(["explain", "fraction-is-accounting"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "GT105 fraction-is-accounting\n",
        ));
}

#[test]
fn explain_every_rule_of_the_registry() {
    let out = gpu_trust()
        .args(["rules", "--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in doc["rules"].as_array().unwrap() {
        let code = r["code"].as_str().unwrap();
        gpu_trust()
            .args(["explain", code])
            .assert()
            .code(0)
            .stdout(predicate::str::contains("## What it detects"));
    }
}

#[test]
fn explain_an_unknown_code_exits_2_with_suggestions() {
    gpu_trust()
        .args(["explain", "GT1011"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("no rule `GT1011`"))
        .stderr(predicate::str::contains("GT101"));
    gpu_trust()
        .args(["explain", "untrusted-share-mp"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("GT102"));
    gpu_trust()
        .args(["explain", "zzzzzzzzzzzz"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("gpu-trust rules"));
}
