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
        "2026-10-04",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["schema"], "gpu-trust/advisories/v1");
    assert_eq!(doc["newestBulletin"], "2026-09-30");
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
        "2027-02-01",
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
    let line = "advisory data of 2026-09-30, newest bulletin NVIDIA security bulletin 5861 \
                (built-in); warning: 124 days old, over 90 days: run `gpu-trust advisories update` \
                (or give newer bulletins with --advisories)";
    // Words as the formats wrap them.
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    // Standard output keeps the run's format (a table) besides the files.
    assert!(words(&table).contains(line), "{table}");
    // Without what each format marks code and escapes with.
    let plain = |t: &str| {
        words(t)
            .replace(['\\', '`'], "")
            .replace("<code>", "")
            .replace("</code>", "")
    };
    for f in ["r.txt", "r.html", "r.md"] {
        let text = std::fs::read_to_string(path(f)).unwrap();
        assert!(plain(&text).contains(&plain(line)), "{f}: {text}");
    }
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(path("r.sarif")).unwrap()).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(
        run["properties"]["gpu-trust/advisoryData"]["newestBulletin"],
        "2026-09-30"
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
                .contains("124 days old")));
    // Within 90 days no warning is given.
    let (_, report, _) = audit_json("2026-10-04", &[]);
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

/// Per path, the answer a test server gives: status, extra headers, body.
type Answers = std::collections::BTreeMap<String, (u16, String, Vec<u8>)>;

/// A local HTTP server with the layout of NVIDIA's product-security repository: each path's answer
/// (status, headers, body), and how many times each path was asked for.
struct Repository {
    address: String,
    answers: std::sync::Arc<std::sync::Mutex<Answers>>,
    asked: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, usize>>>,
}

impl Repository {
    fn start() -> Repository {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let answers = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
        let asked = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
        let (a, k) = (answers.clone(), asked.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    continue;
                }
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
                *k.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
                let (status, headers, body) = a.lock().unwrap().get(&path).cloned().unwrap_or((
                    404,
                    String::new(),
                    Vec::new(),
                ));
                let headers = if headers.is_empty() {
                    format!("Content-Length: {}\r\n", body.len())
                } else {
                    headers
                };
                let mut stream = reader.into_inner();
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\n{headers}Connection: close\r\n\r\n"
                );
                let _ = stream.write_all(&body);
            }
        });
        Repository {
            address,
            answers,
            asked,
        }
    }

    fn serve(&self, path: &str, body: &[u8]) {
        self.answers
            .lock()
            .unwrap()
            .insert(path.to_string(), (200, String::new(), body.to_vec()));
    }

    fn answer(&self, path: &str, status: u16, headers: &str, body: &[u8]) {
        self.answers.lock().unwrap().insert(
            path.to_string(),
            (status, headers.to_string(), body.to_vec()),
        );
    }

    fn asked(&self, path: &str) -> usize {
        self.asked.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The 2026 index as NVIDIA writes it (header and columns of `2026/CVE_index.csv`), listing the test
/// bulletin 9001 for the NVIDIA Container Toolkit, bulletin 5861 (in the built-in data) and one of
/// another product (BlueField), which is not read.
const INDEX: &str = "CVE;CVSS;Severity;Vector;CWE;Bulletin;Affected Product;Affected Version;Fixed In
CVE-2099-0001;9.1;CRITICAL;CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:C/C:H/I:H/A:H;CWE-367;9001;NVIDIA Container Toolkit;All versions up to and including 1.20.0;1.20.1
CVE-2026-47559;7.8;HIGH;CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H;CWE-284;5861;Tesla;All driver versions prior to 580.178.04;580.178.04
CVE-2025-23350;9.0;CRITICAL;CVSS:3.1/AV:A/AC:L/PR:L/UI:N/S:C/C:H/I:H/A:H;CWE-787;5699;BlueField GA;All versions prior to 46.3008;46.3008 or newer
";

fn update(from: &str, cache: &std::path::Path) -> (i32, String, String) {
    run(&[
        "advisories",
        "update",
        "--from",
        from,
        "--cache-dir",
        &cache.display().to_string(),
        "--today",
        "2026-12-04",
    ])
}

/// `gpu-trust advisories update` against a local server of the repository's layout: a new
/// bulletin is kept and an audit then reports its CVE with no server at all; nothing new downloads
/// nothing; a broken or unreadable file, an unreachable server and an oversized answer each exit 2
/// naming the bulletin or file, and keep the last good data.
#[test]
fn an_update_reads_new_bulletins_and_never_replaces_good_data_with_bad() {
    let repo = Repository::start();
    let bulletin = std::fs::read(data("new-toolkit-cve.json")).unwrap();
    repo.serve("/2026/CVE_index.csv", INDEX.as_bytes());
    repo.serve("/2026/9001/9001.json", &bulletin);
    repo.serve(
        "/2026/9001/9001.json.sha256",
        format!("{}\n", sha256_hex(&bulletin)).as_bytes(),
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache_arg = cache.display().to_string();

    // A new bulletin.
    let (code, stdout, stderr) = update(&repo.address, &cache);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("New: 1 bulletin (9001)."), "{stdout}");
    assert!(
        stdout.contains("In the built-in data already: 1 bulletin (5861)."),
        "{stdout}"
    );
    assert_eq!(
        repo.asked("/2026/5699/5699.json"),
        0,
        "another product's bulletin"
    );
    assert_eq!(
        repo.asked("/2026/5861/5861.json"),
        0,
        "a bulletin the built-in data holds"
    );
    let kept = std::fs::read(cache.join("advisories/9001.json")).unwrap();
    assert_eq!(kept, bulletin);

    // Nothing new: the digest says the kept copy is current, and the bulletin is not downloaded.
    let (code, stdout, stderr) = update(&repo.address, &cache);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("New: 0 bulletins.") && stdout.contains("Unchanged: 1 bulletin."),
        "{stdout}"
    );
    assert_eq!(repo.asked("/2026/9001/9001.json"), 1);

    // A revision whose download is broken: its digest is not the published one.
    let revised = String::from_utf8(bulletin.clone())
        .unwrap()
        .replace("\"1.0.0\"", "\"1.0.1\"");
    repo.serve(
        "/2026/9001/9001.json.sha256",
        sha256_hex(revised.as_bytes()).as_bytes(),
    );
    repo.serve(
        "/2026/9001/9001.json",
        &revised.as_bytes()[..revised.len() / 2],
    );
    let (code, stdout, stderr) = update(&repo.address, &cache);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}/2026/9001/9001.json: error[bulletin-not-fetched]: bulletin 9001: its SHA-256 digest is"
        , repo.address)) && stderr.contains("a broken or partial download"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(cache.join("advisories/9001.json")).unwrap(),
        bulletin,
        "the last good copy stays"
    );

    // A revision that does not read as CSAF (its digest matches).
    let unreadable = b"{\"document\": 1}".to_vec();
    repo.serve("/2026/9001/9001.json", &unreadable);
    repo.serve(
        "/2026/9001/9001.json.sha256",
        sha256_hex(&unreadable).as_bytes(),
    );
    let (code, _, stderr) = update(&repo.address, &cache);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("bulletin 9001 does not read as CSAF"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(cache.join("advisories/9001.json")).unwrap(),
        bulletin
    );

    // An oversized answer is refused before it is read.
    repo.answer(
        "/2026/9001/9001.json",
        200,
        "Content-Length: 999999999\r\n",
        b"{}",
    );
    let (code, _, stderr) = update(&repo.address, &cache);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("bulletin 9001: the answer is over the bound of 16777216 bytes"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(cache.join("advisories/9001.json")).unwrap(),
        bulletin
    );

    // An unreachable server: the index cannot be read.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (code, _, stderr) = update(&closed, &cache);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("{closed}/2026/CVE_index.csv: error[bulletin-not-fetched]: the index of 2026: cannot reach it")),
        "{stderr}"
    );

    // Every command reads the cache offline: the server is gone, and the audit reports the CVE
    // only the update brought, naming where the data came from.
    drop(repo);
    let (code, report, stderr) = audit_json("2026-12-04", &["--cache-dir", &cache_arg]);
    assert_eq!(code, 0, "{stderr}");
    let found = gt201(&report);
    assert!(
        found.iter().any(|m| m.contains("CVE-2099-0001")),
        "{found:#?}"
    );
    let update = &report["advisoryData"]["update"];
    assert_eq!(update["bulletins"], 1);
    assert_eq!(update["checked"], "2026-12-04");
    assert!(
        report["advisoryData"]["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().ends_with("/2026/9001/9001.json")),
        "{report:#}"
    );
    // Without the cache, the built-in data does not know it.
    let empty = dir.path().join("empty");
    let (_, report, _) = audit_json("2026-12-04", &["--cache-dir", &empty.display().to_string()]);
    assert!(gt201(&report).iter().all(|m| !m.contains("CVE-2099-0001")));
}

/// An air-gapped site mirrors the repository as a folder and updates from it with file://.
#[test]
fn an_update_reads_a_file_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("product-security");
    std::fs::create_dir_all(mirror.join("2026/9001")).unwrap();
    std::fs::write(mirror.join("2026/CVE_index.csv"), INDEX).unwrap();
    let bulletin = std::fs::read(data("new-toolkit-cve.json")).unwrap();
    std::fs::write(mirror.join("2026/9001/9001.json"), &bulletin).unwrap();
    std::fs::write(
        mirror.join("2026/9001/9001.json.sha256"),
        sha256_hex(&bulletin),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let from = format!("file://{}", mirror.display());
    let (code, stdout, stderr) = update(&from, &cache);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("New: 1 bulletin (9001)."), "{stdout}");
    let (code, stdout, stderr) = run(&[
        "advisories",
        "--cache-dir",
        &cache.display().to_string(),
        "--today",
        "2026-12-04",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["update"]["from"], from.as_str());
    assert!(doc["sources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["kind"] == "update" && s["tracking_id"].is_null() && s["trackingId"] == "9001"));
}
