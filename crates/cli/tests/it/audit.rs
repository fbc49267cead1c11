//! The contract of `gpu-trust audit` as CI uses it: exit codes 0, 1 and 2, `--fail-on`, `--skip-invalid`,
//! standard input, `--output`, acceptances, and errors that name file, line and column.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn data(name: &str) -> String {
    format!("{}/tests/data/audit/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn gpu_trust() -> Command {
    let mut cmd = Command::cargo_bin("gpu-trust").unwrap();
    cmd.env("NO_COLOR", "1").env_remove("COLUMNS").arg("audit");
    cmd
}

/// The table wraps at COLUMNS (else the terminal's width, else 100), between words.
#[test]
fn the_table_uses_the_width_it_is_given() {
    let table = |columns: Option<&str>| {
        let mut cmd = gpu_trust();
        if let Some(c) = columns {
            cmd.env("COLUMNS", c);
        }
        let out = cmd
            .args([
                &data("two-tenants-time-sliced.yaml"),
                "--today",
                "2026-11-15",
            ])
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    let widest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    // Only a word longer than the width may pass it (a file's path here), or a command of a fix,
    // which stands whole on its own line under the fix, to be copied.
    let command = |line: &str| line.starts_with("           ") && !line.trim().contains("  ");
    let fits = |text: &str, width: usize| {
        for line in text.lines() {
            assert!(
                line.chars().count() <= width
                    || line.split_whitespace().count() <= 1
                    || command(line),
                "{width}: {line:?}"
            );
        }
    };
    let default = table(None);
    fits(&default, 100);
    let narrow = table(Some("60"));
    fits(&narrow, 60);
    assert!(narrow.lines().count() > default.lines().count());
    let wide = table(Some("160"));
    assert!(widest(&wide) > 100, "a wide terminal is used");
    // The same words in the same order, whatever the width.
    let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(words(&narrow), words(&default));
    assert_eq!(words(&wide), words(&default));
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn rules_of(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn clean_input_exits_0() {
    let out = gpu_trust()
        .args([&data("one-tenant-exclusive.yaml"), "--today", "2026-11-15"])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    // Below the threshold is still reported.
    assert!(text.contains("GT206"), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("1 tenant, 1 node, 1 GPU"),
        "{text}"
    );
}

#[test]
fn findings_at_the_threshold_exit_1() {
    let out = gpu_trust()
        .args([
            &data("two-tenants-time-sliced.yaml"),
            "--format",
            "json",
            "--today",
            "2026-11-15",
        ])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let report = json_of(&out);
    let gt101 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT101")
        .expect("two distrusting tenants on one time-sliced GPU are GT101");
    assert_eq!(gt101["severity"], "critical");
    assert_eq!(gt101["tenants"], serde_json::json!(["team-a", "team-b"]));
    assert_eq!(gt101["nodes"], serde_json::json!(["gpu-1"]));
}

#[test]
fn fail_on_critical_ignores_lower_findings() {
    // Only a medium finding: the default threshold (high) passes, and so does critical.
    gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            "--fail-on",
            "critical",
            "--today",
            "2026-11-15",
        ])
        .assert()
        .code(0);
    // A critical finding fails --fail-on critical.
    gpu_trust()
        .args([
            &data("two-tenants-time-sliced.yaml"),
            "--fail-on",
            "critical",
            "--today",
            "2026-11-15",
        ])
        .assert()
        .code(1);
}

#[test]
fn fail_on_info_fails_on_any_finding() {
    gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            "--fail-on",
            "info",
            "--today",
            "2026-11-15",
        ])
        .assert()
        .code(1);
    gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            "--fail-on",
            "INFO",
            "--today",
            "2026-11-15",
        ])
        .assert()
        .code(1);
}

/// A run that stops says why once, last, and exits 2: the located errors, then one line (the
/// reason an error names, or what to do about documents already reported), never a second line
/// for the same stop.
#[test]
fn a_stopped_run_ends_with_its_one_reason() {
    let stderr = |args: &[&str]| {
        let out = gpu_trust().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8(out.stderr).unwrap()
    };
    let cluster = data("one-tenant-exclusive.yaml");
    let malformed = data("malformed.yaml");
    let unusable = stderr(&[&cluster, &malformed, "--today", "2026-11-15"]);
    let policy = stderr(&[&cluster, "--policy", &malformed]);
    let usage = stderr(&[&cluster, "--pair", "acme", "acme"]);
    let last = |text: &str| text.lines().last().unwrap_or_default().to_string();
    let skip = "gpu-trust: 1 input document could not be used; fix it or pass --skip-invalid to audit the rest";
    assert_eq!(last(&unusable), skip);
    assert!(!unusable.contains("gpu-trust: error"), "{unusable}");
    let invalid = format!("gpu-trust: error: {malformed}: 1 error in the policy");
    assert_eq!(last(&policy), invalid);
    assert_eq!(policy.matches("gpu-trust: error").count(), 1, "{policy}");
    assert_eq!(
        usage,
        "gpu-trust: error: --pair needs two different tenants\n"
    );
}

#[test]
fn malformed_document_exits_2_naming_file_line_column() {
    gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            &data("malformed.yaml"),
            "--today",
            "2026-11-15",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::is_match(r"malformed\.yaml:\d+:\d+: error\[invalid-value\]: ").unwrap(),
        )
        .stderr(predicate::str::contains("--skip-invalid"));
}

#[test]
fn skip_invalid_audits_the_rest_and_lists_what_was_skipped() {
    let out = gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            &data("malformed.yaml"),
            "--skip-invalid",
        ])
        .args(["--format", "json", "--today", "2026-11-15"])
        .assert()
        .code(0)
        .stderr(
            predicate::str::is_match(r"malformed\.yaml:\d+:\d+: error\[invalid-value\]: ").unwrap(),
        )
        .get_output()
        .clone();
    let report = json_of(&out);
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("malformed.yaml"));
    assert!(skipped[0]["line"].as_u64().unwrap() > 0);
    assert_eq!(skipped[0]["code"], "invalid-value");
    assert!(rules_of(&report).contains(&"GT206".to_string()));

    // The table says the input was partial, in its summary line.
    let out = gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            &data("malformed.yaml"),
            "--skip-invalid",
        ])
        .args(["--today", "2026-11-15"])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("SKIPPED INPUT"), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .ends_with("1 document skipped: partial input"),
        "{text}"
    );
}

#[test]
fn skip_invalid_still_fails_on_findings() {
    gpu_trust()
        .args([
            &data("two-tenants-time-sliced.yaml"),
            &data("malformed.yaml"),
            "--skip-invalid",
        ])
        .args(["--today", "2026-11-15"])
        .assert()
        .code(1);
}

#[test]
fn standard_input_is_read_for_dash() {
    let text = std::fs::read_to_string(data("two-tenants-time-sliced.yaml")).unwrap();
    let out = gpu_trust()
        .args(["-", "--format", "json", "--today", "2026-11-15"])
        .write_stdin(text.clone())
        .assert()
        .code(1)
        .get_output()
        .clone();
    let report = json_of(&out);
    assert!(rules_of(&report).contains(&"GT101".to_string()));
    let objects = report["findings"][0]["objects"].as_array().unwrap();
    assert!(objects.iter().all(|o| o["file"] == "stdin"), "{objects:?}");

    // Named: the objects, and the SARIF URIs, point where the input came from.
    let dir = tempfile::tempdir().unwrap();
    let out = gpu_trust()
        .current_dir(dir.path())
        .args(["-", "--format", "sarif", "--today", "2026-11-15"])
        .args(["--stdin-filename", "chart/rendered.yaml"])
        .write_stdin(text)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let sarif = json_of(&out);
    let location = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "chart/rendered.yaml");
    assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
}

#[test]
fn malformed_standard_input_exits_2() {
    gpu_trust()
        .args(["-", "--today", "2026-11-15"])
        .write_stdin("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: 3\n")
        .assert()
        .code(2)
        .stderr(predicate::str::is_match(r"(^|\n)-:\d+:\d+: error\[[a-z-]+\]: ").unwrap());
}

#[test]
fn empty_input_is_not_a_clean_audit() {
    gpu_trust()
        .args(["-", "--today", "2026-11-15"])
        .write_stdin("# nothing here\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to audit"));
}

#[test]
fn accepted_findings_do_not_fail_the_run() {
    let out = gpu_trust()
        .args([
            &data("two-tenants-time-sliced.yaml"),
            "--policy",
            &data("accept-time-slicing.yaml"),
        ])
        .args([
            "--format",
            "json",
            "--today",
            "2026-11-15",
            "--fail-on",
            "critical",
        ])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let report = json_of(&out);
    let gt101 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT101")
        .unwrap();
    assert_eq!(gt101["accepted"]["until"], "2027-01-31");
    assert!(report["summary"]["accepted"].as_u64().unwrap() >= 1);
}

#[test]
fn an_expired_acceptance_stops_suppressing_and_is_reported() {
    let out = gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            "--policy",
            &data("expired-acceptance.yaml"),
        ])
        .args([
            "--format",
            "json",
            "--today",
            "2026-11-15",
            "--fail-on",
            "medium",
        ])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let report = json_of(&out);
    let rules = rules_of(&report);
    assert!(rules.contains(&"GT003".to_string()), "{rules:?}");
    let gt206 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT206")
        .unwrap();
    assert!(gt206["accepted"].is_null());
}

#[test]
fn a_policy_with_a_typo_exits_2_naming_the_line() {
    gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            "--policy",
            &data("typo.yaml"),
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::is_match(r"typo\.yaml:5:\d+: error\[invalid-value\]: .*namespace")
                .unwrap(),
        );
}

#[test]
fn usage_errors_exit_2() {
    gpu_trust().assert().code(2);
    gpu_trust()
        .args([&data("one-tenant-exclusive.yaml"), "--fail-on", "severe"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "[possible values: critical, high, medium, low, info, never]",
        ));
    gpu_trust()
        .args([&data("one-tenant-exclusive.yaml"), "--today", "2026-13-40"])
        .assert()
        .code(2);
    gpu_trust()
        .args([&data("one-tenant-exclusive.yaml"), "--format", "yaml"])
        .assert()
        .code(2);
    gpu_trust().args(["no/such/file.yaml"]).assert().code(2);
}

#[test]
fn output_file_gets_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    gpu_trust()
        .args([
            &data("two-tenants-time-sliced.yaml"),
            "--format",
            "json",
            "--today",
            "2026-11-15",
            "--output",
        ])
        .arg(&path)
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty());
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(report["schema"], "gpu-trust/audit/v2");
}

/// The same input gives the same bytes; the report's time is an input too (`SOURCE_DATE_EPOCH`),
/// else two runs a second apart differ in `provenance.generatedAt`.
#[test]
fn json_is_byte_identical_across_runs() {
    let run = || {
        gpu_trust()
            .env("SOURCE_DATE_EPOCH", "1765000000")
            .args([
                &data("two-tenants-time-sliced.yaml"),
                "--format",
                "json",
                "--today",
                "2026-11-15",
            ])
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(run(), run());
}

#[test]
fn sarif_points_at_the_pods() {
    let out = gpu_trust()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tests/data/audit/two-tenants-time-sliced.yaml",
            "--format",
            "sarif",
            "--today",
            "2026-11-15",
        ])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let log = json_of(&out);
    assert_eq!(log["version"], "2.1.0");
    let result = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "GT101")
        .unwrap();
    let location = &result["locations"][0]["physicalLocation"];
    // Relative to the root of the git repository the current directory is in.
    assert_eq!(
        location["artifactLocation"]["uri"],
        "crates/cli/tests/data/audit/two-tenants-time-sliced.yaml"
    );
    assert!(location["region"]["startLine"].as_u64().unwrap() > 1);

    // With --sarif-root the URI is relative to that directory.
    let out = gpu_trust()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tests/data/audit/two-tenants-time-sliced.yaml",
            "--format",
            "sarif",
            "--today",
            "2026-11-15",
        ])
        .args(["--sarif-root", "tests"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let log = json_of(&out);
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .collect();
    assert!(
        uris.contains(&"data/audit/two-tenants-time-sliced.yaml"),
        "{uris:?}"
    );
}

#[test]
fn colour_is_off_when_piped() {
    // Standard output is a pipe here: no escape codes even without NO_COLOR.
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .env_remove("NO_COLOR")
        .args([
            "audit",
            &data("two-tenants-time-sliced.yaml"),
            "--today",
            "2026-11-15",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stdout.contains(&0x1b));
}

#[test]
fn probe_evidence_is_attached_to_the_findings_it_measured() {
    let dir = tempfile::tempdir().unwrap();
    let evidence = dir.path().join("probe.json");
    let probe = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["probe", "--fake", "time-slicing", "--fake-dir"])
        .arg(dir.path())
        .args([
            "--scenario",
            "memory-exhaustion",
            "--format",
            "json",
            "--node",
            "gpu-1",
        ])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    std::fs::write(&evidence, &probe.stdout).unwrap();
    let out = gpu_trust()
        .args([
            &data("two-tenants-time-sliced.yaml"),
            "--format",
            "json",
            "--today",
            "2026-11-15",
            "--evidence",
        ])
        .arg(&evidence)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let report = json_of(&out);
    let gt101 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT101")
        .unwrap();
    let attached = gt101["evidence"]
        .as_array()
        .expect("GT101 carries the measurement");
    assert!(
        attached[0].as_str().unwrap().contains("gpu-1"),
        "{attached:?}"
    );
}

#[test]
fn unusable_evidence_exits_2_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let evidence = dir.path().join("probe.json");
    std::fs::write(
        &evidence,
        "{\n  \"schema\": \"gpu-trust/probe/v1\",\n  \"toolVersion\": 7\n}\n",
    )
    .unwrap();
    gpu_trust()
        .args([&data("two-tenants-time-sliced.yaml"), "--evidence"])
        .arg(&evidence)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::is_match(
                r"probe\.json:3:\d+: error\[invalid-value\]: not probe evidence",
            )
            .unwrap(),
        );
}

#[test]
fn unusable_advisories_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("advisories.yaml");
    std::fs::write(
        &file,
        "version: 1\nadvisories:\n  - id: CVE-1\n    surprise: true\n",
    )
    .unwrap();
    gpu_trust()
        .args([&data("two-tenants-time-sliced.yaml"), "--advisories"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(
            predicate::str::is_match(r"advisories\.yaml:\d+:\d+: error\[invalid-value\]: ")
                .unwrap(),
        );
}

/// A cluster of two tenants on one time-sliced GPU, each running a Deployment whose pods carry the
/// names and labels the Deployment controller gives them (`<deployment>-<hash>-<suffix>`,
/// `pod-template-hash`), at template hash `hash`.
fn deployments_at(hash: &str, suffix: &str) -> String {
    let base = std::fs::read_to_string(data("two-tenants-time-sliced.yaml")).unwrap();
    // No Pod Security admission: team-a's trainer runs privileged (GT202, a finding about it alone).
    let nodes_and_namespaces = base[..base.find("apiVersion: v1\nkind: Pod").unwrap()].replace(
        "  labels:\n    pod-security.kubernetes.io/enforce: baseline\n",
        "",
    );
    let pod = |ns: &str, deployment: &str, privileged: bool| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {deployment}-{hash}-{suffix}\n  namespace: {ns}\n  \
             labels:\n    app: {deployment}\n    pod-template-hash: \"{hash}\"\n  ownerReferences:\n  - apiVersion: apps/v1\n    \
             kind: ReplicaSet\n    name: {deployment}-{hash}\n    uid: \"{ns}\"\n    controller: true\nspec:\n  nodeName: gpu-1\n  \
             containers:\n    - name: main\n      image: nvcr.io/nvidia/pytorch:25.01-py3\n      securityContext:\n        \
             privileged: {privileged}\n      resources:\n        limits:\n          nvidia.com/gpu: 1\n---\n"
        )
    };
    format!(
        "{nodes_and_namespaces}{}{}",
        pod("team-a", "train", true),
        pod("team-b", "infer", false)
    )
}

/// SARIF fingerprints are keyed on the owning workload: a rollout (new ReplicaSet, new pod names,
/// objects on other lines) keeps every alert, and a workload that is really new gets one of its own.
#[test]
fn sarif_fingerprints_survive_a_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let sarif_of = |text: String| -> Vec<(String, String)> {
        let path = dir.path().join("cluster.yaml");
        std::fs::write(&path, text).unwrap();
        let out = gpu_trust()
            .current_dir(dir.path())
            // The cluster holds no RBAC objects: a partial audit, accepted here since the test is
            // about fingerprints.
            .args([
                "cluster.yaml",
                "--format",
                "sarif",
                "--today",
                "2026-11-15",
                "--accept-partial",
            ])
            .assert()
            .code(1)
            .get_output()
            .clone();
        let log = json_of(&out);
        let mut ids: Vec<(String, String)> = log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    r["partialFingerprints"]["primaryLocationLineHash"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect();
        ids.sort();
        ids
    };
    let before = sarif_of(deployments_at("7cb557479", "x2k4p"));
    assert!(before.iter().any(|(rule, _)| rule == "GT101"), "{before:?}");
    let rolled = sarif_of(format!(
        "# rolled out: a new template hash\n\n{}",
        deployments_at("5f7c9d8b6", "q4mzn")
    ));
    assert_eq!(before, rolled);
    assert!(before.iter().any(|(rule, _)| rule == "GT202"), "{before:?}");
    // Another Deployment is another workload: its finding is a new alert, the others stay.
    let renamed = sarif_of(
        deployments_at("7cb557479", "x2k4p")
            .replace("name: train-7cb557479", "name: trainer-7cb557479"),
    );
    let changed: Vec<&(String, String)> = renamed.iter().filter(|r| !before.contains(r)).collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(changed[0].0, "GT202");
}

/// `--no-live` (the pre-commit hook's): without PATH the run stops with the fix, and never reads
/// the cluster of the kubeconfig, here one whose server nothing answers.
#[test]
fn no_live_without_paths_is_an_error_not_a_live_audit() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:9\"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    )
    .unwrap();
    let out = gpu_trust()
        .args(["--no-live", "--no-config"])
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--no-live refuses to read the live cluster"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("127.0.0.1"),
        "the cluster was contacted: {stderr}"
    );
    // With a path, the flag changes nothing.
    let out = gpu_trust()
        .args(["--no-live", "--no-config", "--today", "2026-11-15"])
        .arg(data("one-tenant-exclusive.yaml"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every diagnostic shows its code beside its level; `--silence CODE` hides the warnings of that
/// code, never an error: an unusable document still exits 2 (docs/diagnostics.md).
#[test]
fn a_warning_code_can_be_silenced_but_never_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("chart.yaml");
    std::fs::write(
        &chart,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx:1.27}]\n",
    )
    .unwrap();
    let chart = chart.to_str().unwrap();
    let run = |extra: &[&str]| {
        let out = gpu_trust()
            .args([&data("one-tenant-exclusive.yaml"), chart])
            .args(["--today", "2026-11-15"])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, stderr) = run(&[]);
    assert!(
        stderr.contains("chart.yaml:1:1: warning[missing-namespace]: "),
        "{stderr}"
    );
    let (silenced, quiet) = run(&["--silence", "missing-namespace"]);
    assert_eq!(silenced, code, "{quiet}");
    assert!(!quiet.contains("missing-namespace"), "{quiet}");

    // The code of an error names it, and silencing it changes nothing: the run still exits 2.
    gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            &data("malformed.yaml"),
            "--today",
            "2026-11-15",
            "--silence",
            "invalid-value",
        ])
        .assert()
        .code(2)
        .stderr(
            predicate::str::is_match(r"malformed\.yaml:\d+:\d+: error\[invalid-value\]: ").unwrap(),
        );

    // A code that does not exist is a usage error.
    gpu_trust()
        .args([
            &data("one-tenant-exclusive.yaml"),
            "--silence",
            "no-such-code",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no diagnostic code `no-such-code`",
        ));
}

/// `--view TENANT`: the report a team may be handed, in every format: the audit made for it (its
/// own pairs, in the places it reaches), every other tenant named `(other tenant)`, the exit status
/// of the view's findings; an unknown tenant is an input error, and it is not combined with `--pair`.
#[test]
fn a_view_is_the_report_of_one_tenant() {
    let example = format!("{}/../../examples/ml-platform", env!("CARGO_MANIFEST_DIR"));
    let view = |extra: &[&str]| {
        let mut cmd = gpu_trust();
        cmd.args([
            &format!("{example}/cluster.yaml"),
            "--policy",
            &format!("{example}/policy.yaml"),
            "--today",
            "2026-12-01",
        ])
        .args(extra);
        cmd.output().unwrap()
    };
    let out = view(&["--view", "data-sandbox", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report = json_of(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for other in [
        "research",
        "training",
        "ml-research",
        "ml-training",
        "ml-serving",
    ] {
        assert!(!text.contains(other), "the view names {other}");
    }
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        let tenants = f["tenants"].as_array().unwrap();
        assert!(tenants.iter().any(|t| t == "data-sandbox"), "{f}");
        // Every place and pair of a grouped finding is the team's own.
        for e in f["byGroup"].as_array().into_iter().flatten() {
            assert!(e["tenants"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "data-sandbox"));
        }
        let message = f["message"].as_str().unwrap();
        assert!(
            !message.contains("(other tenant) and (other tenant) (trust"),
            "{message}"
        );
    }
    // The whole report counts a pair of two other teams (trust limited) in the same finding.
    let whole = json_of(&view(&["-o", "json"]));
    let gt101 = |r: &Value| -> Vec<u64> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "GT101" && f["tenants"].to_string().contains("data-sandbox"))
            .filter_map(|f| f["pairs"].as_u64())
            .collect()
    };
    assert_eq!(gt101(&whole), vec![3, 1]);
    assert_eq!(gt101(&report), vec![2, 1]);
    for format in ["table", "sarif", "html", "markdown", "junit"] {
        let out = view(&["--view", "data-sandbox", "-o", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("ml-training"), "{format} names another team");
    }
    let unknown = view(&["--view", "nobody"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("--view: no tenant `nobody`"));
    let both = view(&["--view", "data-sandbox", "--pair", "research", "training"]);
    assert_eq!(both.status.code(), Some(2));
}
