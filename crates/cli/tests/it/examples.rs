//! The bundled examples, audited by the built binary: snapshots of the table and the JSON (read and
//! checked by a person: findings a GPU platform engineer agrees with, nothing spurious), the JSON
//! against the shipped JSON Schema, the SARIF against the SARIF 2.1.0 schema, and the invariants every
//! example must keep (platform DaemonSets are never tenant findings; one tenant is never a trust pair).

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const EXAMPLES: [&str; 6] = [
    "inference-platform",
    "ml-platform",
    "hami-kai",
    "gke",
    "helm-device-plugin",
    "measured-h200",
];
/// The examples audited with probe evidence (`--evidence`), as their READMEs run them.
const EVIDENCE: [(&str, &[&str]); 1] = [(
    "measured-h200",
    &[
        "docs/evidence/2026-12-04-h200/v2/run-1/time-slicing.json",
        "docs/evidence/2026-12-04-h200/v2/run-1/mps.json",
        "docs/evidence/2026-12-04-h200/v2/run-1/mps-limited.json",
        "docs/evidence/2026-12-04-h200/v2/run-2a/time-slicing.json",
        "docs/evidence/2026-12-04-h200/v2/run-2a/mps.json",
        "docs/evidence/2026-12-04-h200/v2/run-2a/mps-replicas.json",
        "docs/evidence/2026-12-04-h200/v2/run-2b/time-slicing.json",
        "docs/evidence/2026-12-04-h200/v2/run-2b/mps.json",
        "docs/evidence/2026-12-04-h200/v2/run-2b/mps-replicas.json",
        "docs/evidence/2026-12-04-h200/v2/run-2c/time-slicing.json",
        "docs/evidence/2026-12-04-h200/v2/run-2c/mps.json",
        "docs/evidence/2026-12-04-h200/v2/run-2c/mps-replicas.json",
    ],
)];
/// The examples whose dumps hold no RBAC objects (their headers name the kinds they were read
/// from): their control plane is not evaluated, so they exit 2 unless the partial audit is accepted.
const PARTIAL: [&str; 2] = ["gke", "helm-device-plugin"];
/// A fixed date, so that acceptances and patch windows give the same answer every day.
const TODAY: &str = "2026-11-15";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn audit(example: &str, format: &str) -> (i32, String) {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        // The report's time, pinned so that the same input gives the same bytes.
        .env("SOURCE_DATE_EPOCH", "1794700800")
        .env_remove("COLUMNS")
        .args(["audit", &format!("examples/{example}/cluster.yaml")])
        .args(["--policy", &format!("examples/{example}/policy.yaml")])
        .args(["--format", format, "--today", TODAY])
        .args(PARTIAL.contains(&example).then_some("--accept-partial"))
        .args(
            EVIDENCE
                .iter()
                .filter(|(e, _)| *e == example)
                .flat_map(|(_, files)| files.iter().flat_map(|f| ["--evidence", f])),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("error"),
        "{example}: the example must read without errors:\n{stderr}"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn load_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn schema_errors(schema: &Value, doc: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("schema compiles");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// The published SARIF schema, with its two `language` patterns repaired in memory (see the report
/// crate's tests/data/SOURCES.md).
fn sarif_schema() -> Value {
    let text = std::fs::read_to_string(
        workspace().join("crates/report/tests/data/sarif-schema-2.1.0.json"),
    )
    .unwrap()
    .replace(
        r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#,
        r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#,
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn tables() {
    for example in EXAMPLES {
        let (code, text) = audit(example, "table");
        assert_eq!(
            code, 1,
            "{example}: every example has findings at or above high"
        );
        // Within a severity, observed findings come before possible ones, and those before
        // permitted ones, whatever their layer.
        let heads: Vec<(&str, usize)> = text
            .lines()
            .filter(|l| l.starts_with("  ") && l.contains(" GT") && l.contains(" ["))
            .filter(|l| !l.trim_end().ends_with("accepted"))
            .filter_map(|l| {
                let severity = l.split_whitespace().next()?;
                let certainty = ["[observed]", "[possible]", "[permitted]"]
                    .iter()
                    .position(|c| l.contains(c))?;
                Some((severity, certainty))
            })
            .collect();
        for w in heads.windows(2) {
            assert!(w[0].0 != w[1].0 || w[0].1 <= w[1].1, "{example}: {w:?}");
        }
        insta::assert_snapshot!(format!("{example}-table"), text);
    }
}

#[test]
fn json_reports() {
    let schema = load_json(&workspace().join("docs/schema/audit-v2.schema.json"));
    for example in EXAMPLES {
        let (_, text) = audit(example, "json");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let errors = schema_errors(&schema, &doc);
        assert!(errors.is_empty(), "{example}: {errors:#?}");
        let (_, again) = audit(example, "json");
        assert_eq!(
            text, again,
            "{example}: the same input gives byte-identical JSON"
        );
        insta::assert_snapshot!(format!("{example}-json"), text);
    }
}

#[test]
fn sarif_reports_validate() {
    let schema = sarif_schema();
    for example in EXAMPLES {
        let (_, text) = audit(example, "sarif");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let errors = schema_errors(&schema, &doc);
        assert!(errors.is_empty(), "{example}: {errors:#?}");
        for result in doc["runs"][0]["results"].as_array().unwrap() {
            let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap_or_default();
            assert!(
                uri.starts_with(&format!("examples/{example}/")),
                "{example}: {uri}"
            );
        }
    }
}

/// What must hold of every example, whatever the rules find.
#[test]
fn nothing_spurious() {
    let platform = [
        "gpu-operator",
        "kube-system",
        "hami-system",
        "kai-scheduler",
        "kai-resource-reservation",
        "kubeflow",
    ];
    let pair_rules = [
        "GT101", "GT102", "GT103", "GT104", "GT105", "GT207", "GT401",
    ];
    for example in EXAMPLES {
        let (_, text) = audit(example, "json");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        let mut keys = std::collections::BTreeSet::new();
        let tenants: Vec<&str> = doc["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        // Within a severity, what the objects prove comes first, then what is possible, then what
        // is only permitted.
        let certainty = |f: &Value| match f["certainty"].as_str() {
            Some("observed") => 0,
            Some("possible") => 1,
            _ => 2,
        };
        for w in doc["findings"].as_array().unwrap().windows(2) {
            assert!(
                w[0]["severity"] != w[1]["severity"] || certainty(&w[0]) <= certainty(&w[1]),
                "{example}: {} {} [{}] before {} [{}]",
                w[0]["severity"],
                w[0]["rule"],
                w[0]["certainty"],
                w[1]["rule"],
                w[1]["certainty"]
            );
        }
        for f in doc["findings"].as_array().unwrap() {
            let rule = f["rule"].as_str().unwrap();
            // The same finding twice (one workload read as two, say) is noise a user has to dedupe.
            let key = (
                rule.to_string(),
                f["tenants"].to_string(),
                f["nodes"].to_string(),
                f["objects"].to_string(),
                f["message"].to_string(),
            );
            assert!(
                seen.insert(key),
                "{example}: {rule} reported twice: {}",
                f["message"]
            );
            // One finding per owning workload: two findings of a rule never share a key, so the
            // JUnit test cases (named by rule and key) are unique too.
            assert!(
                keys.insert((rule.to_string(), f["key"].to_string())),
                "{example}: two {rule} findings about {}",
                f["key"]
            );
            // Rules about the platform's own components point at them: GT209 (the operator's NRI
            // settings), GT210 and GT503 (the DCGM exporter), GT404 (the GPU scheduler).
            let about_platform = ["GT209", "GT210", "GT404", "GT503"].contains(&rule);
            for o in f["objects"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|_| !about_platform)
            {
                let ns = o["namespace"].as_str().unwrap_or_default();
                assert!(
                    !platform.contains(&ns),
                    "{example}: {rule} points at platform object {} {ns}/{}",
                    o["kind"],
                    o["name"]
                );
            }
            let ft: Vec<&str> = f["tenants"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            for t in &ft {
                assert!(
                    tenants.contains(t),
                    "{example}: {rule} names unknown tenant {t}"
                );
                assert!(
                    !platform.contains(t),
                    "{example}: {rule} treats platform namespace {t} as a tenant"
                );
            }
            if pair_rules.contains(&rule) {
                // One finding per shared thing: its tenants, how many pairs of them, the groups.
                let pairs = f["pairs"].as_u64().unwrap_or(0) as usize;
                assert!(
                    ft.len() >= 2 && pairs >= 1 && pairs <= ft.len() * (ft.len() - 1) / 2,
                    "{example}: {rule} covers pairs of different tenants: {ft:?}, {pairs} pairs"
                );
                assert!(
                    !f["groups"].as_array().unwrap().is_empty(),
                    "{example}: {rule} names no group"
                );
            }
        }
    }
}

/// The examples without RBAC objects are partial audits: without `--accept-partial` they exit 2 and
/// say why; the others are complete.
#[test]
fn examples_without_rbac_are_partial() {
    for example in EXAMPLES {
        let out = Command::cargo_bin("gpu-trust")
            .unwrap()
            .current_dir(workspace())
            .env("NO_COLOR", "1")
            .args(["audit", &format!("examples/{example}/cluster.yaml")])
            .args(["--policy", &format!("examples/{example}/policy.yaml")])
            .args(["--format", "json", "--today", TODAY])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if PARTIAL.contains(&example) {
            assert_eq!(out.status.code(), Some(2), "{example}: {stderr}");
            assert!(
                stderr.contains("control-plane (partial): no-rbac"),
                "{stderr}"
            );
            assert_eq!(doc["coverage"]["complete"], false, "{example}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{example}: {stderr}");
            assert_eq!(doc["coverage"]["complete"], true, "{example}");
        }
    }
}

/// An example audited with evidence cites it on its device findings, and says where it was measured.
#[test]
fn evidence_examples_cite_their_measurements() {
    for (example, _) in EVIDENCE {
        let (_, text) = audit(example, "json");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let device: Vec<&Value> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["layer"] == "device")
            .collect();
        assert!(!device.is_empty(), "{example}: no device finding");
        for f in device {
            let evidence = f["evidence"].as_array().cloned().unwrap_or_default();
            assert!(
                !evidence.is_empty(),
                "{example}: {} cites no evidence",
                f["rule"]
            );
            for e in evidence {
                let e = e.as_str().unwrap();
                // The place, the GPU and driver, a named run, the date and the mechanism's settings,
                // and that another GPU or driver may differ; nothing of it unrecorded.
                for part in [
                    "(NVIDIA H200, driver 580.159.04, not a node of this cluster)",
                    "2026-12-04-h200/run-",
                    " on 2026-12-04;",
                    "another GPU or driver may behave differently",
                ] {
                    assert!(e.contains(part), "{example}: `{part}` not in {e}");
                }
                for unknown in ["settings not recorded", "unnamed run", "unrecorded date"] {
                    assert!(!e.contains(unknown), "{example}: `{unknown}` in {e}");
                }
            }
        }
    }
}

/// The JUnit report's test cases are unique by class and name in every example.
#[test]
fn junit_test_names_are_unique() {
    for example in EXAMPLES {
        let (_, text) = audit(example, "junit");
        let mut names = std::collections::BTreeSet::new();
        for line in text.lines().filter(|l| l.contains("<testcase ")) {
            let head: String = line.chars().take_while(|c| *c != '>').collect();
            assert!(names.insert(head.clone()), "{example}: {head} twice");
        }
        assert!(!names.is_empty(), "{example}");
    }
}

/// `--pair A B`: two tenants of an example and everything they share, from the same audit; the JSON
/// against its schema (whose definitions copied from the audit's schema must stay the same).
#[test]
fn a_pair_explained() {
    let run = |format: &str| {
        let out = Command::cargo_bin("gpu-trust")
            .unwrap()
            .current_dir(workspace())
            .env("NO_COLOR", "1")
            .env_remove("COLUMNS")
            .args(["audit", "examples/ml-platform/cluster.yaml"])
            .args(["--policy", "examples/ml-platform/policy.yaml"])
            .args(["--format", format, "--today", TODAY])
            .args(["--pair", "serving", "data-sandbox"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, table, stderr) = run("table");
    assert_eq!(code, Some(1), "{stderr}");
    insta::assert_snapshot!("ml-platform-pair", table);
    let (_, text, _) = run("json");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let schema = load_json(&workspace().join("docs/schema/pair-v1.schema.json"));
    let errors = schema_errors(&schema, &doc);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(
        doc["tenants"],
        serde_json::json!(["serving", "data-sandbox"])
    );
    // Every finding of the pair is one of the report's, with the pair's own severity.
    let (_, report) = audit("ml-platform", "json");
    let report: Value = serde_json::from_str(&report).unwrap();
    for f in doc["findings"].as_array().unwrap() {
        let of_report = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == f["rule"] && r["key"] == f["key"])
            .expect("a finding of the report");
        let pair = of_report["coveredPairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["tenants"] == serde_json::json!(["data-sandbox", "serving"]))
            .expect("the finding covers the pair");
        assert_eq!(pair["severity"], f["severity"]);
        assert_eq!(pair["certainty"], f["certainty"]);
    }
    // Every other finding that names either tenant is listed with the two it names: findings about
    // the nodes they run on (the driver, the DCGM exporter) and about their contracts name several
    // tenants.
    let names_either = |f: &&Value| {
        f["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "serving" || t == "data-sandbox")
    };
    let key = |f: &Value| (f["rule"].to_string(), f["key"].to_string());
    let mut about: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["pairs"].is_null())
        .filter(names_either)
        .map(key)
        .collect();
    about.sort();
    let mut listed: Vec<(String, String)> = doc["tenantFindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(key)
        .collect();
    listed.sort();
    assert_eq!(listed, about);
    for rule in ["GT205", "GT210", "GT503"] {
        assert!(
            listed.iter().any(|(r, _)| r == &format!("\"{rule}\"")),
            "{rule} in {listed:?}"
        );
    }
    let audit_schema = load_json(&workspace().join("docs/schema/audit-v2.schema.json"));
    for (name, def) in schema["$defs"].as_object().unwrap() {
        if let Some(same) = audit_schema["$defs"].get(name) {
            assert_eq!(def, same, "pair-v1 $defs/{name} is a copy of audit-v2's");
        }
    }
    // An unknown tenant is a usage error.
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(workspace())
        .args(["audit", "examples/ml-platform/cluster.yaml"])
        .args([
            "--policy",
            "examples/ml-platform/policy.yaml",
            "--today",
            TODAY,
        ])
        .args(["--pair", "serving", "nobody"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tenant `nobody`"));
}
