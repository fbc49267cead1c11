//! Advisory data from the command line: `gpu-trust advisories`, `--advisories` with CSAF documents
//! and data files, the data's date in every report, and the exit code of a document that cannot be
//! read.

use assert_cmd::Command;
use serde_json::Value;

fn data(name: &str) -> String {
    format!(
        "{}/tests/data/advisories/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn nvidia_bulletins() -> String {
    format!(
        "{}/../rules/tests/data/csaf/nvidia",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn bin() -> Command {
    let mut cmd = Command::cargo_bin("gpu-trust").unwrap();
    cmd.env("NO_COLOR", "1").env_remove("COLUMNS");
    cmd
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The audit of the toolkit-1.20.0 cluster on `today` as JSON, with these extra arguments.
fn audit_json(today: &str, extra: &[&str]) -> (i32, Value, String) {
    let cluster = data("toolkit-1.20.0.yaml");
    let mut args = vec![
        "audit",
        cluster.as_str(),
        "--no-config",
        "--accept-partial",
        "--fail-on",
        "never",
        "--today",
        today,
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&args);
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (code, report, stderr)
}

fn gt201(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "GT201")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_csaf_document_naming_a_new_toolkit_cve_is_reported_with_its_title_and_address() {
    let (code, report, stderr) = audit_json("2026-12-04", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        gt201(&report).is_empty(),
        "toolkit 1.20.0 is clean built-in"
    );
    let doc = data("new-toolkit-cve.json");
    let (code, report, stderr) = audit_json("2026-12-04", &["--advisories", &doc]);
    assert_eq!(code, 0, "{stderr}");
    let found = gt201(&report);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains(
            "CVE-2099-0001 (CVSS 9.1, fixed in 1.20.1; Security Bulletin: NVIDIA Container Toolkit - December 2099 (test), https://example.com/security/bulletins/9001)"
        ),
        "{}",
        found[0]
    );
    assert_eq!(
        report["advisoryData"]["sources"],
        serde_json::json!(["built-in", doc])
    );
    assert_eq!(report["advisoryData"]["newestBulletin"], "2099-12-01");
}

#[test]
fn a_malformed_csaf_document_exits_2_with_its_location() {
    let bad = data("malformed-csaf.json");
    let (code, stdout, stderr) = run(&[
        "audit",
        &data("toolkit-1.20.0.yaml"),
        "--no-config",
        "--advisories",
        &bad,
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains(&format!("{bad}:17:58: error[invalid-value]: ")),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["advisories", "--advisories", &bad]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("{bad}:17:58: error[invalid-value]: ")),
        "{stderr}"
    );
}

#[test]
fn the_advisories_command_lists_the_data_in_use_offline() {
    let (code, stdout, stderr) = run(&["advisories", "--today", "2026-12-04"]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("advisories_builtin", stdout);
    let (code, stdout, stderr) = run(&[
        "advisories",
        "--advisories",
        &nvidia_bulletins(),
        "--today",
        "2026-08-01",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["schema"], "gpu-trust/advisories/v1");
    assert_eq!(doc["newestBulletin"], "2026-07-28");
    assert_eq!(doc["ageDays"], 4);
    assert_eq!(doc["stale"], false);
    let sources: Vec<&str> = doc["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        ["built-in", "csaf", "csaf", "csaf", "csaf", "csaf"]
    );
    let components: Vec<&str> = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["component"].as_str().unwrap())
        .collect();
    assert_eq!(
        components,
        [
            "container-toolkit",
            "gpu-operator",
            "device-plugin",
            "mig-manager",
            "driver",
            "dcgm-exporter",
            "kai-scheduler"
        ]
    );
    // What the documents say that cannot be used is listed, and printed on standard error.
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(warnings
        .iter()
        .any(|w| w.as_str().unwrap().contains("DCGM (All(4.5))")));
    assert!(stderr.contains("DCGM (All(4.5))"), "{stderr}");
}

#[test]
fn every_report_carries_the_data_date_and_warns_when_it_is_old() {
    let cluster = data("toolkit-1.20.0.yaml");
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).display().to_string();
    let (code, table, stderr) = run(&[
        "audit",
        &cluster,
        "--no-config",
        "--accept-partial",
        "--fail-on",
        "never",
        "--today",
        "2026-12-04",
        "--output",
        &format!("sarif={}", path("r.sarif")),
        "--output",
        &format!("html={}", path("r.html")),
        "--output",
        &format!("markdown={}", path("r.md")),
        "--output",
        &format!("table={}", path("r.txt")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let line = "advisory data of 2026-07-28 (built-in); warning: 129 days old, over 90 days";
    // Standard output keeps the run's format (a table) besides the files.
    assert!(table.contains(line), "{table}");
    for f in ["r.txt", "r.html", "r.md"] {
        let text = std::fs::read_to_string(path(f)).unwrap();
        // Markdown escapes the colons.
        let text = text.replace("\\:", ":");
        assert!(text.contains(line), "{f}: {text}");
    }
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(path("r.sarif")).unwrap()).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(
        run["properties"]["gpu-trust/advisoryData"]["newestBulletin"],
        "2026-07-28"
    );
    assert_eq!(run["properties"]["gpu-trust/advisoryData"]["stale"], true);
    assert!(run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["level"] == "warning"
            && n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("129 days old")));
    // Within 90 days no warning is given.
    let (_, report, _) = audit_json("2026-08-01", &[]);
    assert_eq!(report["advisoryData"]["stale"], false);
    assert_eq!(report["advisoryData"]["ageDays"], 4);
}

/// A data file of the built-in format in a folder of bulletins replaces the built-in data: that is
/// said on standard error and in the report, never done silently.
#[test]
fn a_data_file_in_a_folder_of_bulletins_is_announced_as_replacing_the_built_in_data() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("new-toolkit-cve.json"), dir.path().join("9001.json")).unwrap();
    let notes = dir.path().join("notes.yaml");
    std::fs::write(
        &notes,
        "version: 1\nadvisories:\n  - id: LOCAL-1\n    summary: a local note\n    bulletin: local\n    published: 2026-11-01\n    affects: [{component: driver, fixed: [\"999.1\"]}]\n",
    )
    .unwrap();
    let folder = dir.path().display().to_string();
    let (code, report, stderr) = audit_json("2026-12-04", &["--advisories", &folder]);
    assert_eq!(code, 0, "{stderr}");
    let notes = notes.display().to_string();
    assert!(
        stderr.contains(&format!(
            "warning[advisory-data-replaced]: advisory file {notes} replaces the built-in advisory data"
        )),
        "{stderr}"
    );
    assert_eq!(report["advisoryData"]["builtInReplacedBy"], notes.as_str());
    let (_, table, _) = run(&[
        "audit",
        &data("toolkit-1.20.0.yaml"),
        "--no-config",
        "--accept-partial",
        "--fail-on",
        "never",
        "--today",
        "2026-12-04",
        "--advisories",
        &folder,
    ]);
    let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!("({notes}, which replaces the built-in data;")),
        "{table}"
    );
}
