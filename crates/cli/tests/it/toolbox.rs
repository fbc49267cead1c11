//! The command line as CI pipelines and people at a terminal use it next to other scanners:
//! `--fail-on never`, `--min-severity`, accepted findings left out unless asked, `--color`, what a
//! missing input file says, and the `explain terms` glossary the rule pages point to.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn data(name: &str) -> String {
    format!("{}/tests/data/audit/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn gpu_trust() -> Command {
    let mut cmd = Command::cargo_bin("gpu-trust").unwrap();
    cmd.env("NO_COLOR", "1").env_remove("TERM");
    cmd
}

fn audit(extra: &[&str]) -> std::process::Output {
    gpu_trust()
        .arg("audit")
        .arg(data("two-tenants-time-sliced.yaml"))
        .args(["--today", "2026-11-15"])
        .args(extra)
        .output()
        .unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn fail_on_never_reports_findings_and_exits_0() {
    let failing = audit(&["--format", "json"]);
    assert_eq!(failing.status.code(), Some(1));
    let never = audit(&["--format", "json", "--fail-on", "never"]);
    assert_eq!(never.status.code(), Some(0));
    // The same report, but for the verdict (and the time it was made).
    let [mut a, mut b] =
        [&failing.stdout, &never.stdout].map(|out| serde_json::from_slice::<Value>(out).unwrap());
    assert_eq!(a["verdict"]["exitCode"], 1);
    assert_eq!(b["verdict"]["outcome"], "reports-only");
    for r in [&mut a, &mut b] {
        r["verdict"].take();
        r["provenance"]["generatedAt"].take();
    }
    assert_eq!(a, b);
    let report: Value = serde_json::from_slice(&never.stdout).unwrap();
    assert!(!report["findings"].as_array().unwrap().is_empty());
    // Letter case does not matter, as for the severities.
    assert_eq!(audit(&["--fail-on", "NEVER"]).status.code(), Some(0));
}

#[test]
fn min_severity_leaves_lower_findings_out_of_the_table_and_counts_them() {
    let json: Value =
        serde_json::from_slice(&audit(&["--format", "json", "--fail-on", "never"]).stdout).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let below = findings
        .iter()
        .filter(|f| f["severity"] != "critical")
        .count();
    assert!(below > 0, "the fixture needs findings below critical");

    let table = stdout(&audit(&["--min-severity", "critical"]));
    for label in ["HIGH", "MEDIUM", "LOW", "INFO"] {
        assert!(
            !table.lines().any(|l| l.trim_start().starts_with(label)),
            "a {label} finding is printed:\n{table}"
        );
    }
    let noun = if below == 1 { "finding" } else { "findings" };
    assert!(
        table.contains(&format!("{below} {noun} below critical not shown")),
        "{table}"
    );
    // The summary still counts every finding, and the verdict is unchanged.
    assert_eq!(
        audit(&["--min-severity", "critical"]).status.code(),
        Some(1)
    );
}

#[test]
fn accepted_findings_are_left_out_unless_asked_and_json_keeps_them() {
    let with_policy = |extra: &[&str]| {
        gpu_trust()
            .arg("audit")
            .arg(data("two-tenants-time-sliced.yaml"))
            .args(["--policy", &data("accept-time-slicing.yaml")])
            .args(["--today", "2026-11-15", "--fail-on", "never"])
            .args(extra)
            .output()
            .unwrap()
    };
    let table = stdout(&with_policy(&[]));
    assert!(!table.contains("ACCEPTED"), "{table}");
    assert!(
        table.contains("not shown (--show-accepted shows"),
        "{table}"
    );
    let shown = stdout(&with_policy(&["--show-accepted"]));
    assert!(shown.contains("ACCEPTED"), "{shown}");
    assert!(!shown.contains("--show-accepted shows"), "{shown}");
    let json: Value = serde_json::from_slice(&with_policy(&["--format", "json"]).stdout).unwrap();
    assert!(json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["accepted"].is_object()));
}

#[test]
fn color_always_colours_a_pipe_and_never_does_not() {
    let always = audit(&["--color", "always"]);
    assert!(stdout(&always).contains("\x1b["));
    let never = audit(&["--color", "never"]);
    assert!(!stdout(&never).contains('\x1b'));
    // Auto into a pipe: plain, whatever TERM says.
    let auto = gpu_trust()
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color")
        .args(["audit", &data("two-tenants-time-sliced.yaml")])
        .output()
        .unwrap();
    assert!(!stdout(&auto).contains('\x1b'));
    // The option is global: it goes before or after the subcommand.
    gpu_trust()
        .args(["--color", "never", "rules"])
        .assert()
        .success();
    gpu_trust()
        .args(["rules", "--color", "sometimes"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("auto").and(predicate::str::contains("always")));
}

#[test]
fn a_missing_input_file_does_not_suggest_skip_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("cluster.yaml");
    gpu_trust()
        .arg("audit")
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cluster.yaml"))
        .stderr(predicate::str::contains("--skip-invalid").not());
    // Where other documents were read, skipping the unusable one is a way on: it is suggested.
    gpu_trust()
        .arg("audit")
        .arg(&missing)
        .arg(data("one-tenant-exclusive.yaml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--skip-invalid"));
}

#[test]
fn explain_terms_is_the_glossary_rule_pages_point_to() {
    let terms = gpu_trust()
        .args(["explain", "terms"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let terms = String::from_utf8(terms).unwrap();
    for word in [
        "TRUST LEVELS",
        "CERTAINTY",
        "permitted",
        "MECHANISMS",
        "time-slicing",
        "separated by",
        "proportional-compute",
        "none→critical",
    ] {
        assert!(terms.contains(word), "`{word}` missing:\n{terms}");
    }
    let page = gpu_trust()
        .args(["explain", "GT101"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("gpu-trust explain terms"), "{page}");
    assert!(
        page.contains("between tenants that do not trust each other"),
        "{page}"
    );
}

/// A folder holding `.gpu-trust.yaml` with `text`, as a repository (with `.git`) when `repo`.
fn configured(text: &str, repo: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if repo {
        std::fs::create_dir(dir.path().join(".git")).unwrap();
    }
    std::fs::write(dir.path().join(".gpu-trust.yaml"), text).unwrap();
    dir
}

#[test]
fn the_configuration_file_sets_policy_threshold_disabled_rules_and_outputs() {
    let config = format!(
        "policy: {}\nfailOn: never\ndisabledRules:\n  - rule: GT101\n    reason: time-slicing is reviewed by hand\noutputs:\n  - {{format: json, file: out.json}}\n",
        data("accept-time-slicing.yaml")
    );
    let dir = configured(&config, true);
    let deep = dir.path().join("deploy/prod");
    std::fs::create_dir_all(&deep).unwrap();
    // Found at the repository root from a folder below it.
    let out = gpu_trust()
        .current_dir(&deep)
        .args(["audit", &data("two-tenants-time-sliced.yaml")])
        .args(["--today", "2026-11-15"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("GT101 is disabled by")
            && stderr.contains(".gpu-trust.yaml:4:")
            && stderr.contains("time-slicing is reviewed by hand"),
        "{stderr}"
    );
    // A threshold below the default is announced, with where it is written.
    assert!(
        stderr.contains(".gpu-trust.yaml:2:9: the configuration file sets failOn to never"),
        "{stderr}"
    );
    // The configured output is written (paths relative to the file), standard output keeps the
    // table; neither holds the disabled rule's findings, and the table says they were left out.
    let table = stdout(&out);
    assert!(!table.contains("GT101"), "{table}");
    assert!(table.contains("of disabled rules not reported"), "{table}");
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out.json")).unwrap()).unwrap();
    assert!(json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["rule"] != "GT101"));
    // The JSON report says which rule is off, why, where, and how many findings it left out.
    let disabled = &json["disabledRules"][0];
    assert_eq!(disabled["rule"], "GT101");
    assert_eq!(disabled["reason"], "time-slicing is reviewed by hand");
    assert!(disabled["source"]
        .as_str()
        .unwrap()
        .contains(".gpu-trust.yaml:4:"));
    assert!(disabled["findings"].as_u64().unwrap() >= 1);
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs/schema/audit-v2.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    // The command line beats the file; --no-config ignores it.
    let strict = gpu_trust()
        .current_dir(&deep)
        .args(["audit", &data("two-tenants-time-sliced.yaml")])
        .args([
            "--today",
            "2026-11-15",
            "--fail-on",
            "info",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(1));
    let ignored = gpu_trust()
        .current_dir(&deep)
        .args([
            "audit",
            &data("two-tenants-time-sliced.yaml"),
            "--no-config",
        ])
        .args(["--today", "2026-11-15"])
        .output()
        .unwrap();
    assert_eq!(ignored.status.code(), Some(1));
    assert!(stdout(&ignored).contains("GT101"));
}

/// A report never overwrites what the run reads: a manifest, a file of an input folder, the policy.
/// A configuration file's report files stay inside its repository.
#[test]
fn reports_never_overwrite_inputs_and_configured_ones_stay_in_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = dir.path().join("cluster.yaml");
    std::fs::copy(data("two-tenants-time-sliced.yaml"), &cluster).unwrap();
    let before = std::fs::read(&cluster).unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::copy(data("accept-time-slicing.yaml"), &policy).unwrap();
    let c = cluster.to_str().unwrap();
    let p = policy.to_str().unwrap();
    for args in [
        vec!["audit", c, "--no-config", "--output", c],
        vec![
            "audit",
            c,
            "--no-config",
            "--policy",
            p,
            "--output",
            &format!("json={p}"),
        ],
        vec![
            "audit",
            dir.path().to_str().unwrap(),
            "--no-config",
            "--output",
            c,
        ],
    ] {
        let out = gpu_trust().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("which this run reads"), "{stderr}");
    }
    assert_eq!(std::fs::read(&cluster).unwrap(), before);
    let out = gpu_trust()
        .args(["policy", "check", p, "--output", p])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let repo = configured("outputs: [{format: json, file: ../escape.json}]\n", true);
    let out = gpu_trust()
        .current_dir(repo.path())
        .args(["audit", &data("two-tenants-time-sliced.yaml")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(".gpu-trust.yaml:1:"), "{stderr}");
    assert!(stderr.contains("is outside the repository"), "{stderr}");
    assert!(!repo.path().join("../escape.json").exists());
}

#[test]
fn a_configuration_error_names_file_line_and_column_and_exits_2() {
    let dir = configured(
        "format: table\nfailOn: high\ndisabledRule: [GT101]\n",
        false,
    );
    gpu_trust()
        .current_dir(dir.path())
        .args(["audit", &data("one-tenant-exclusive.yaml")])
        .assert()
        .code(2)
        .stderr(
            predicate::str::is_match(
                r"\.gpu-trust\.yaml:3:1: error\[invalid-value\]: .*disabledRule",
            )
            .unwrap(),
        )
        .stderr(predicate::str::contains(
            "1 error in the configuration file",
        ));
    // --config names another file; a missing one is an error, never the defaults.
    gpu_trust()
        .current_dir(dir.path())
        .args(["audit", &data("one-tenant-exclusive.yaml")])
        .args(["--config", "missing.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.yaml"));
}

#[test]
fn several_outputs_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let sarif = dir.path().join("report.sarif");
    let out = audit(&[
        "--output",
        &format!("json={}", json.display()),
        "--output",
        &format!("SARIF={}", sarif.display()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("findings"));
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        report["schema"]
            .as_str()
            .map(|s| s.starts_with("gpu-trust/audit/")),
        Some(true)
    );
    let log: Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    assert_eq!(log["version"], "2.1.0");

    // A plain --output FILE takes standard output's report; a file named twice is an error.
    let table = dir.path().join("report.txt");
    let out = audit(&[
        "--output",
        &table.display().to_string(),
        "--output",
        &format!("json={}", json.display()),
    ]);
    assert!(out.stdout.is_empty());
    assert!(std::fs::read_to_string(&table)
        .unwrap()
        .contains("findings"));
    gpu_trust()
        .args(["audit", &data("two-tenants-time-sliced.yaml")])
        .args(["--output", &format!("json={}", json.display())])
        .args(["--output", &format!("sarif={}", json.display())])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("named by two --output options"));
}
