//! `gpu-trust serve` against a recorded cluster on loopback (our own test server, not a
//! kube-apiserver: see `support/apiserver.rs`): it lists and watches, a pod added to the cluster
//! makes a new finding, and `/metrics` is parsed with Prometheus's own Python text parser.

use crate::apiserver;

use apiserver::{ApiServer, Behaviour};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// Kills the server process when the test ends, whatever happens.
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(port: u16, path: &str) -> Option<(u16, String)> {
    get_as(port, path, None)
}

fn get_as(port: u16, path: &str, token: Option<&str>) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_string()))
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("timed out waiting for {what}");
}

/// A Python with `prometheus_client`: $GPU_TRUST_PYTHON, else `python3`.
fn prometheus_python() -> Option<String> {
    let python = std::env::var("GPU_TRUST_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&python)
        .args(["-c", "import prometheus_client.parser"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok.then_some(python)
}

/// The samples of a metrics text as Prometheus's Python parser reads it: (name, labels, value).
fn parse_with_prometheus_client(python: &str, text: &str) -> Vec<(String, serde_json::Value, f64)> {
    let script = [
        "import sys, json",
        "from prometheus_client.parser import text_string_to_metric_families",
        "out = []",
        "for family in text_string_to_metric_families(sys.stdin.read()):",
        "    for s in family.samples:",
        "        out.append([s.name, s.labels, s.value])",
        "print(json.dumps(out))",
    ]
    .join("\n");
    let mut child = Command::new(python)
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write metrics");
    let out = child.wait_with_output().expect("python");
    assert!(
        out.status.success(),
        "prometheus_client refused the metrics: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples: Vec<(String, serde_json::Value, f64)> =
        serde_json::from_slice(&out.stdout).expect("parser output");
    samples
}

/// Starts `gpu-trust serve` on a free loopback port against `server`, with the ml-platform policy;
/// returns the port, the process guard and the folder holding the kubeconfig.
fn start_serve(server: &ApiServer) -> (u16, Serving, tempfile::TempDir) {
    start_serve_with(server, &["--auth", "none"], Stdio::null())
}

fn start_serve_with(
    server: &ApiServer,
    extra: &[&str],
    stderr: Stdio,
) -> (u16, Serving, tempfile::TempDir) {
    start_serve_at(&server.kubeconfig(), extra, stderr)
}

/// A free port on loopback.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
    l.local_addr().expect("addr").port()
}

/// Starts `gpu-trust serve` with `kubeconfig`; `extra` may replace the ml-platform policy, the
/// short --debounce and --max-delay the tests use by default.
fn start_serve_at(
    kubeconfig_text: &str,
    extra: &[&str],
    stderr: Stdio,
) -> (u16, Serving, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_text).expect("kubeconfig");
    let port = free_port();
    let policy = example("ml-platform").join("policy.yaml");
    let policy = policy.to_str().expect("path");
    let mut defaults = Vec::new();
    for (flag, value) in [
        ("--policy", policy),
        ("--debounce", "0.3"),
        ("--max-delay", "2"),
    ] {
        if !extra.contains(&flag) {
            defaults.extend([flag, value]);
        }
    }
    let child = Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"))
        .args(["serve", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(defaults)
        .args(extra)
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("start gpu-trust serve");
    (port, Serving(child), dir)
}

#[test]
fn serve_reports_a_new_finding_after_a_pod_appears() {
    let python = prometheus_python();
    if python.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "prometheus_client is missing: .ci/run installs it (GPU_TRUST_PYTHON)"
        );
        let _ = writeln!(std::io::stderr(), "NOTE: prometheus_client is not installed; /metrics is checked without Prometheus's parser");
    }
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(
        objects,
        Behaviour {
            page: 3,
            forbidden: vec![],
            expire_once: vec![],
            ..Behaviour::default()
        },
    );
    let (port, _serving, _dir) = start_serve(&server);

    wait_for("/healthz", Duration::from_secs(30), || {
        get(port, "/healthz").is_some_and(|(c, _)| c == 200)
    });
    wait_for("the first audit (/readyz)", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    let (code, metrics) = get(port, "/metrics").expect("/metrics");
    assert_eq!(code, 200);
    assert!(
        metrics.contains("gpu_trust_findings{rule=\"GT402\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("gpu_trust_coverage_kinds{state=\"unreadable\"} 0"),
        "{metrics}"
    );
    assert!(!metrics.contains("intruder-lab"));
    let (code, report) = get(port, "/report.json").expect("/report.json");
    assert_eq!(code, 200);
    let report: serde_json::Value = serde_json::from_str(&report).expect("report json");
    assert!(report["findings"].as_array().is_some_and(|f| !f.is_empty()));
    let (code, html) = get(port, "/report.html").expect("/report.html");
    assert_eq!(code, 200);
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"));

    // A pod of a namespace no tenant owns lands on a time-sliced GPU that tenants use.
    let added = Instant::now();
    server.add(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "crypto-miner", "namespace": "intruder-lab", "uid": "0d1f0000-0000-4000-8000-000000000001"},
        "spec": {
            "nodeName": "a100-ts-01",
            "containers": [{
                "name": "miner",
                "image": "registry.example.com/miner:1",
                "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}},
            }],
        },
        "status": {"phase": "Running"},
    }));
    let mut metrics = String::new();
    wait_for(
        "the new pod's finding in /metrics",
        Duration::from_secs(30),
        || {
            metrics = get(port, "/metrics").map(|(_, m)| m).unwrap_or_default();
            metrics.contains("tenant=\"intruder-lab\"")
        },
    );
    eprintln!(
        "the new finding was served {:.1}s after the pod was added",
        added.elapsed().as_secs_f64()
    );
    let (_, report) = get(port, "/report.json").expect("/report.json");
    assert!(
        report.contains("crypto-miner"),
        "the report names the new pod"
    );
    assert!(
        server.log().iter().any(|l| l.contains("watch=")),
        "it watched"
    );

    if let Some(python) = python {
        let samples = parse_with_prometheus_client(&python, &metrics);
        let finding = samples
            .iter()
            .find(|(name, labels, value)| {
                name == "gpu_trust_findings" && labels["tenant"] == "intruder-lab" && *value >= 1.0
            })
            .expect("a finding for the new tenant");
        assert_eq!(
            finding.1["rule"].as_str().map(|r| r.starts_with("GT1")),
            Some(true),
            "{finding:?}"
        );
        // The new tenant is in a group whose tenants share a memory pool, and that group counts pairs.
        assert!(
            samples
                .iter()
                .any(|(name, labels, v)| name == "gpu_trust_tenant_pooled_groups"
                    && labels["tenant"] == "intruder-lab"
                    && *v >= 1.0),
            "intruder-lab shares a memory pool or fault domain"
        );
        assert!(samples
            .iter()
            .any(|(name, labels, v)| name == "gpu_trust_shared_tenant_pairs"
                && labels["shares"] == "memory-pool"
                && *v >= 1.0));
        assert!(samples
            .iter()
            .any(|(name, labels, v)| name == "gpu_trust_coverage_kinds"
                && labels["state"] == "read"
                && *v > 5.0));
    }
}

/// A custom kind with pod templates that the live reader does not list: serve keeps serving, and
/// says in its report and metrics that the kind was not read, so the continuous audit never looks
/// complete while a GPU workload may hide there (the report is partial, /readyz waits).
#[test]
fn serve_says_when_a_custom_kind_with_pod_templates_is_not_read() {
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(objects, Behaviour::default());
    server.add(apiserver::crd(
        "gpus.example.com",
        "TrainingRun",
        "trainingruns",
        apiserver::pod_template_schema(),
    ));
    let (port, _serving, _dir) = start_serve(&server);
    first_audit(port);
    assert_eq!(get(port, "/readyz").map(|(c, _)| c), Some(503));
    let (_, report) = get(port, "/report.json").expect("/report.json");
    assert!(
        report.contains("customresourcedefinitions/trainingruns.gpus.example.com"),
        "the report lists the kind it did not read: {report}"
    );
    let parsed: serde_json::Value = serde_json::from_str(&report).expect("json");
    assert_eq!(parsed["coverage"]["complete"], false);
    let (_, metrics) = get(port, "/metrics").expect("/metrics");
    assert!(
        metrics.contains("gpu_trust_coverage_kinds{state=\"unreadable\"} 1"),
        "{metrics}"
    );
}

/// The ml-platform recording with its tokens: a monitoring ServiceAccount allowed `get` on the
/// paths, a member of the research team allowed to list pods in ml-research, a user with no rights.
fn with_users(extra: Behaviour) -> ApiServer {
    use apiserver::Grant;
    let mut objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    // The training team names GPU pods beside the research team's notebooks after words of the
    // report and after the research team's own node and workload.
    for name in HOSTILE_NAMES {
        objects.push(apiserver::Object::from_value(serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml-training"},
            "spec": {
                "nodeName": "l40s-ts-01",
                "containers": [{
                    "name": "main",
                    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                    "resources": {"limits": {"nvidia.com/gpu": 1}},
                }],
            },
        })));
    }
    ApiServer::start(
        objects,
        Behaviour {
            users: vec![
                (
                    "prometheus-token",
                    "system:serviceaccount:monitoring:prometheus",
                    vec!["system:serviceaccounts"],
                ),
                ("research-token", "alice", vec!["ml-research"]),
                ("nobody-token", "mallory", vec![]),
            ],
            grants: vec![
                (
                    "system:serviceaccount:monitoring:prometheus",
                    Grant::Path("/metrics"),
                ),
                (
                    "system:serviceaccount:monitoring:prometheus",
                    Grant::Path("/report.json"),
                ),
                ("alice", Grant::ListPods("ml-research")),
                // Alice may list pods in one namespace of nobody's tenant: not a whole tenant of
                // hers, so it shows nothing more.
                ("alice", Grant::ListPods("kube-system")),
            ],
            ..extra
        },
    )
}

/// Pod names of the training team that other text of the research team's view holds.
const HOSTILE_NAMES: [&str; 4] = ["critical", "true", "l40s-ts-01", "notebook-alice"];

fn words(text: &str) -> std::collections::BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .collect()
}

/// Every case of the delegated authentication and authorisation: no token, a bad token, a
/// monitoring subject, a tenant subject (its tenant only, no other tenant's name or workload
/// anywhere in what it gets), a subject with no rights; health endpoints need nothing. The API
/// server is the loopback one of the test suite (support/apiserver.rs), which answers TokenReview
/// and SubjectAccessReview from its table of tokens and grants as a real one answers from RBAC.
#[test]
fn who_sees_what_is_the_api_servers_answer() {
    let server = with_users(Behaviour::default());
    let (port, _serving, _dir) = start_serve_with(&server, &[], Stdio::null());
    wait_for("/healthz", Duration::from_secs(30), || {
        get(port, "/healthz").is_some_and(|(c, _)| c == 200)
    });
    wait_for("the first audit (/readyz)", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    for path in ["/metrics", "/report.json", "/report.html"] {
        let (code, body) = get(port, path).expect(path);
        assert_eq!(code, 401, "{path} without a token");
        assert!(!body.contains("ml-research"), "{body}");
        let (code, _) = get_as(port, path, Some("not-a-token")).expect(path);
        assert_eq!(code, 401, "{path} with a token the API server refuses");
        let (code, body) = get_as(port, path, Some("nobody-token")).expect(path);
        assert_eq!(code, 403, "{path} for a user with no rights");
        assert!(!body.contains("ml-"), "{body}");
    }

    // Monitoring: the full view where it is granted, and nothing more.
    let (code, metrics) = get_as(port, "/metrics", Some("prometheus-token")).expect("metrics");
    assert_eq!(code, 200);
    assert!(metrics.contains("tenant=\"training\""), "{metrics}");
    let (code, report) = get_as(port, "/report.json", Some("prometheus-token")).expect("json");
    assert_eq!(code, 200);
    assert!(report.contains("\"ml-serving\""));
    let (code, _) = get_as(port, "/report.html", Some("prometheus-token")).expect("html");
    assert_eq!(code, 403, "the role grants /metrics and /report.json only");

    // A tenant: its own view of every endpoint.
    let hidden = ["training", "serving", "ml-training", "ml-serving"];
    let workloads: Vec<String> = server
        .objects()
        .iter()
        .filter(|o| {
            o.namespace
                .as_deref()
                .is_some_and(|n| n == "ml-training" || n == "ml-serving")
        })
        .map(|o| o.name.clone())
        .filter(|n| !HOSTILE_NAMES.contains(&n.as_str()))
        .collect();
    assert!(!workloads.is_empty());
    for path in ["/metrics", "/report.json", "/report.html"] {
        let (code, body) = get_as(port, path, Some("research-token")).expect(path);
        assert_eq!(code, 200, "{path}");
        let seen = words(&body);
        for h in hidden
            .iter()
            .copied()
            .chain(workloads.iter().map(String::as_str))
        {
            assert!(!seen.contains(h), "{path} shows {h} to the research team");
        }
        assert!(body.contains("ml-research") || path == "/metrics", "{path}");
    }
    let (_, report) = get_as(port, "/report.json", Some("research-token")).expect("json");
    let report: serde_json::Value = serde_json::from_str(&report).expect("json");
    let tenants: Vec<&str> = report["tenants"]
        .as_array()
        .expect("tenants")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tenants, ["research"]);
    let findings = report["findings"].as_array().expect("findings");
    assert!(!findings.is_empty(), "the research team sees its findings");
    // The neighbours' names change no severity, and hide none of the team's own names.
    let severities = ["critical", "high", "medium", "low", "info"];
    assert!(findings
        .iter()
        .all(|f| severities.contains(&f["severity"].as_str().unwrap_or_default())));
    assert!(findings.iter().any(|f| f["severity"] == "critical"));
    assert!(findings.iter().any(|f| {
        f["nodes"]
            .as_array()
            .is_some_and(|n| n.iter().any(|n| n == "l40s-ts-01"))
            && f["message"].as_str().is_some_and(|m| {
                m.contains("ml-research/notebook-alice") && m.contains("l40s-ts-01")
            })
    }));
    assert!(findings.iter().all(|f| f["tenants"]
        .as_array()
        .is_some_and(|t| t.iter().any(|x| x == "research"))));
    assert!(
        findings.iter().any(|f| f["tenants"]
            .as_array()
            .is_some_and(|t| t.iter().any(|x| x == "(other tenant)"))),
        "it learns that it shares, not with whom"
    );
    // The view is the audit made for the research team: no finding says where two other teams
    // meet, nor counts their pair.
    let research = |v: &serde_json::Value| {
        v.as_array()
            .is_some_and(|t| t.iter().any(|x| x == "research"))
    };
    for f in findings {
        for e in f["byGroup"].as_array().into_iter().flatten() {
            assert!(research(&e["tenants"]), "{e}");
        }
        for p in f["coveredPairs"].as_array().into_iter().flatten() {
            assert!(research(&p["tenants"]), "{p}");
        }
        let message = f["message"].as_str().unwrap_or_default();
        assert!(
            !message.contains("(other tenant) and (other tenant) (trust"),
            "{message}"
        );
    }
    // No token ever reaches the log of requests as anything but the TokenReview's body.
    assert!(server.log().iter().any(|l| l == "tokenreview"));
}

/// promtool, Prometheus's own checker: $GPU_TRUST_PROMTOOL, else `promtool` on the PATH.
fn promtool() -> Option<String> {
    let promtool = std::env::var("GPU_TRUST_PROMTOOL").unwrap_or_else(|_| "promtool".to_string());
    let ok = Command::new(&promtool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok.then_some(promtool)
}

/// The metrics pass `promtool check metrics` (naming, units, counters, histograms), before the
/// first audit and after it; the process's metrics are there from the start.
#[test]
fn metrics_follow_the_prometheus_naming_rules() {
    let Some(promtool) = promtool() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "promtool is missing: .ci/run installs Debian's prometheus"
        );
        let _ = writeln!(
            std::io::stderr(),
            "NOTE: promtool is not installed; the metrics are not checked by it"
        );
        return;
    };
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(objects, Behaviour::default());
    let (port, _serving, _dir) = start_serve(&server);
    let mut early = String::new();
    wait_for("/metrics", Duration::from_secs(30), || {
        early = get(port, "/metrics").map(|(_, m)| m).unwrap_or_default();
        !early.is_empty()
    });
    assert!(early.contains("gpu_trust_build_info{version=\""), "{early}");
    wait_for("the first audit (/readyz)", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    let (_, metrics) = get(port, "/metrics").expect("metrics");
    assert!(metrics.contains("gpu_trust_audits_total 1"), "{metrics}");
    assert!(metrics.contains("gpu_trust_audit_duration_seconds_bucket{le=\"+Inf\"} 1"));
    for text in [&early, &metrics] {
        let mut child = Command::new(&promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("promtool");
        assert!(
            out.status.success(),
            "promtool check metrics: {}{}\n{text}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A server that fails every watch: the watches wait a backoff delay each (doubling, with jitter),
/// so the requests stay few, and serve still audits and answers.
#[test]
fn a_server_failing_every_watch_gets_a_bounded_rate_of_requests() {
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(
        objects,
        Behaviour {
            fail_watches: true,
            ..Behaviour::default()
        },
    );
    let (port, _serving, _dir) = start_serve(&server);
    wait_for("the first audit (/readyz)", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    let start = Instant::now();
    let before = server.log().iter().filter(|l| l.contains("watch=")).count();
    std::thread::sleep(Duration::from_secs(12));
    let watches = server.log().iter().filter(|l| l.contains("watch=")).count() - before;
    let kinds = server
        .log()
        .iter()
        .filter(|l| l.starts_with("listed "))
        .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let rate = watches as f64 / start.elapsed().as_secs_f64();
    eprintln!("{watches} watch requests in 12 s for {kinds} kinds ({rate:.1}/s)");
    // Without a backoff this was thousands a second; with it, each kind tries a few times.
    assert!(
        watches <= kinds * 6,
        "{watches} watch requests in 12 s for {kinds} kinds"
    );
    let (_, metrics) = get(port, "/metrics").expect("metrics");
    let errors: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("gpu_trust_watch_errors_total "))
        .and_then(|v| v.parse().ok())
        .expect("gpu_trust_watch_errors_total");
    assert!(errors >= 1.0, "{metrics}");
}

/// Slow clients hold a connection each; /healthz still answers at once, and a client that never
/// finishes its request is cut off. (They come from the address of the /healthz client, within
/// its share of the connections: `one_client_cannot_hold_every_connection` has more.)
#[test]
fn slow_clients_cannot_starve_healthz() {
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(objects, Behaviour::default());
    let (port, _serving, _dir) = start_serve(&server);
    wait_for("/healthz", Duration::from_secs(30), || {
        get(port, "/healthz").is_some_and(|(c, _)| c == 200)
    });
    let mut slow = Vec::new();
    for _ in 0..7 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let _ = s.write_all(b"GET /metr");
        slow.push(s);
    }
    let asked = Instant::now();
    let (code, _) = get(port, "/healthz").expect("/healthz");
    assert_eq!(code, 200);
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    // The server closes a connection whose request does not come within its time.
    let mut s = slow.pop().expect("a slow client");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut buf = Vec::new();
    let cut = Instant::now();
    let _ = s.read_to_end(&mut buf);
    assert!(
        cut.elapsed() < Duration::from_secs(25),
        "{:?}",
        cut.elapsed()
    );
}

#[test]
fn debounce_and_max_delay_refuse_what_is_not_a_time() {
    for bad in ["NaN", "inf", "-1", "1e300"] {
        for flag in ["--debounce", "--max-delay"] {
            let out = Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"))
                .arg("serve")
                .arg(format!("{flag}={bad}"))
                .output()
                .expect("run");
            assert_eq!(out.status.code(), Some(2), "{flag} {bad}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("seconds"));
        }
    }
}

/// `--write-reports`: one OpenReports Report per tenant namespace with findings, replaced when it
/// differs (through a conflict), deleted when its namespace has no findings any more; reports
/// without gpu-trust's label are left alone (the loopback API server of the test suite ignores the
/// label selector of the list, so gpu-trust's own check of the label is what keeps them).
#[test]
fn reports_are_kept_as_openreports_objects() {
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(
        objects,
        Behaviour {
            conflict_once: true,
            ..Behaviour::default()
        },
    );
    // A report of an earlier run in a namespace without findings now, and someone else's.
    let managed = serde_json::json!({"app.kubernetes.io/managed-by": "gpu-trust"});
    server.put_report(
        "old-team",
        "gpu-trust",
        serde_json::json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
            "metadata": {"name": "gpu-trust", "namespace": "old-team", "labels": managed}}),
    );
    server.put_report(
        "ml-research",
        "kyverno",
        serde_json::json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
            "metadata": {"name": "kyverno", "namespace": "ml-research"}}),
    );
    // A stale one of its own that must be replaced.
    server.put_report(
        "ml-research",
        "gpu-trust",
        serde_json::json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
            "metadata": {"name": "gpu-trust", "namespace": "ml-research", "labels": managed},
            "results": []}),
    );
    let (port, _serving, _dir) = start_serve_with(
        &server,
        &["--auth", "none", "--write-reports"],
        Stdio::null(),
    );
    wait_for("the reports", Duration::from_secs(60), || {
        let r = server.reports();
        !r.contains_key(&("old-team".to_string(), "gpu-trust".to_string()))
            && r.get(&("ml-research".to_string(), "gpu-trust".to_string()))
                .is_some_and(|v| v["results"].as_array().is_some_and(|a| !a.is_empty()))
    });
    let _ = port;
    let reports = server.reports();
    assert!(reports.contains_key(&("ml-research".to_string(), "kyverno".to_string())));
    let research = &reports[&("ml-research".to_string(), "gpu-trust".to_string())];
    assert_eq!(research["kind"], "Report");
    assert_eq!(research["scope"]["name"], "ml-research");
    let fail = research["summary"]["fail"].as_u64().expect("fail");
    assert!(fail >= 1);
    for r in research["results"].as_array().expect("results") {
        assert!(r["policy"].as_str().is_some_and(|p| p.starts_with("GT")));
        assert!(["critical", "high", "medium", "low", "info"]
            .contains(&r["severity"].as_str().unwrap_or("")));
        assert!(["fail", "warn"].contains(&r["result"].as_str().unwrap_or("")));
    }
    let text = research.to_string();
    for other in ["ml-training", "ml-serving", "\"training\"", "\"serving\""] {
        assert!(!text.contains(other), "the research report names {other}");
    }
    assert!(reports.contains_key(&("ml-training".to_string(), "gpu-trust".to_string())));
    assert!(
        server.log().iter().any(|l| l.starts_with("PUT ")),
        "the stale report was replaced"
    );
}

/// `openssl` and `curl` present, or (outside CI) the test is skipped.
fn have_tls_tools() -> bool {
    let present = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
            || (tool == "openssl"
                && Command::new(tool)
                    .arg("version")
                    .stdout(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success()))
    };
    let ok = present("openssl") && present("curl");
    assert!(
        ok || std::env::var("CI").as_deref() != Ok("true"),
        "openssl or curl is missing: .ci/run installs them"
    );
    ok
}

/// A self-signed certificate for 127.0.0.1 and its key, made by openssl, as PEM files.
fn self_signed(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (cert, key) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "1", "-subj", &format!("/CN={name}")])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (cert, key)
}

/// What curl gets from `path` over HTTPS trusting only `ca`; None when the handshake fails.
fn curl_https(port: u16, path: &str, ca: &Path) -> Option<String> {
    let out = Command::new("curl")
        .args(["-sS", "--fail", "--max-time", "10", "--cacert"])
        .arg(ca)
        .arg(format!("https://127.0.0.1:{port}{path}"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// --tls-cert-file/--tls-private-key-file serve HTTPS (checked with curl trusting only that
/// certificate); plain HTTP gets no answer; a renewed certificate written over the files, as a
/// mounted Secret is, is served from then on without a restart.
#[test]
fn tls_is_served_and_a_renewed_certificate_is_read_again() {
    if !have_tls_tools() {
        let _ = writeln!(
            std::io::stderr(),
            "NOTE: openssl or curl is not installed; TLS is not checked"
        );
        return;
    }
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(objects, Behaviour::default());
    let certs = tempfile::tempdir().expect("tempdir");
    let (first, first_key) = self_signed(certs.path(), "first");
    let (cert, key) = (certs.path().join("tls.crt"), certs.path().join("tls.key"));
    std::fs::copy(&first, &cert).expect("cert");
    std::fs::copy(&first_key, &key).expect("key");
    let (port, _serving, _dir) = start_serve_with(
        &server,
        &[
            "--auth",
            "none",
            "--tls-cert-file",
            cert.to_str().expect("utf-8"),
            "--tls-private-key-file",
            key.to_str().expect("utf-8"),
        ],
        Stdio::null(),
    );
    wait_for("/healthz over HTTPS", Duration::from_secs(30), || {
        curl_https(port, "/healthz", &first).as_deref() == Some("ok\n")
    });
    assert!(
        get(port, "/healthz").is_none_or(|(code, _)| code != 200),
        "plain HTTP is not answered"
    );
    // The renewal: new files moved over the old ones, the key first.
    let (second, second_key) = self_signed(certs.path(), "second");
    std::fs::copy(&second_key, certs.path().join("next.key")).expect("key");
    std::fs::copy(&second, certs.path().join("next.crt")).expect("cert");
    std::fs::rename(certs.path().join("next.key"), &key).expect("key");
    std::fs::rename(certs.path().join("next.crt"), &cert).expect("cert");
    wait_for("the renewed certificate", Duration::from_secs(30), || {
        curl_https(port, "/healthz", &second).as_deref() == Some("ok\n")
    });
    assert_eq!(
        curl_https(port, "/healthz", &first),
        None,
        "the old one is gone"
    );
}

/// The value of the first sample of `name` in a metrics text.
fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// Waits until serve has made at least one audit (complete or not) and returns its metrics.
fn first_audit(port: u16) -> String {
    let mut metrics = String::new();
    wait_for("the first audit", Duration::from_secs(60), || {
        metrics = get(port, "/metrics").map(|(_, m)| m).unwrap_or_default();
        sample(&metrics, "gpu_trust_audits_total").is_some_and(|n| n >= 1.0)
    });
    metrics
}

/// Every list of pods and of ConfigMaps answers 500: serve judges coverage as the CLI does. Its
/// report is partial and names the unread kinds, the ConfigMaps it could not read are not
/// "configuration missing" (GT002), /readyz waits for a complete audit, and the last successful
/// audit's time does not move; `gpu-trust audit` on the same server exits 2.
#[test]
fn serve_fails_closed_when_a_kind_cannot_be_listed() {
    use apiserver::Hostile;
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(
        objects,
        Behaviour {
            hostile: vec![
                ("pods", Hostile::ServerError),
                ("configmaps", Hostile::ServerError),
            ],
            ..Behaviour::default()
        },
    );
    let (port, _serving, dir) = start_serve(&server);
    let metrics = first_audit(port);
    assert_eq!(
        sample(
            &metrics,
            "gpu_trust_last_successful_audit_timestamp_seconds"
        ),
        Some(0.0),
        "{metrics}"
    );
    let (code, _) = get(port, "/readyz").expect("/readyz");
    assert_eq!(code, 503);
    let (_, report) = get(port, "/report.json").expect("report");
    let report: serde_json::Value = serde_json::from_str(&report).expect("json");
    assert_eq!(
        report["coverage"]["complete"], false,
        "{}",
        report["coverage"]
    );
    let skipped: Vec<&str> = report["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .filter_map(|s| s["file"].as_str())
        .collect();
    assert!(
        skipped.contains(&"api/v1/pods") && skipped.contains(&"api/v1/configmaps"),
        "{skipped:?}"
    );
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(!rules.contains(&"GT002"), "{rules:?}");
    let cli = Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"))
        .args(["audit", "--kubeconfig"])
        .arg(dir.path().join("kubeconfig"))
        .env_remove("KUBECONFIG")
        .output()
        .expect("audit");
    assert_eq!(cli.status.code(), Some(2));
}

/// An API server that is not up when serve starts, then fails its first discovery requests: serve
/// keeps running (not ready), tries again with backoff, and is ready once the server answers.
#[test]
fn serve_waits_for_an_api_server_that_is_not_up_yet() {
    let api_port = free_port();
    let log = tempfile::NamedTempFile::new().expect("log file");
    let (port, mut serving, _dir) = start_serve_at(
        &apiserver::kubeconfig_for(&format!("http://127.0.0.1:{api_port}")),
        &["--auth", "none"],
        Stdio::from(log.reopen().expect("log")),
    );
    wait_for("/healthz", Duration::from_secs(30), || {
        get(port, "/healthz").is_some_and(|(c, _)| c == 200)
    });
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        serving.0.try_wait().expect("status").is_none(),
        "serve ended: {}",
        std::fs::read_to_string(log.path()).unwrap_or_default()
    );
    assert_eq!(get(port, "/readyz").map(|(c, _)| c), Some(503));
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let _server = ApiServer::start_on(
        api_port,
        objects,
        Behaviour {
            fail_discovery: 2,
            ..Behaviour::default()
        },
    );
    wait_for(
        "/readyz once the server is up",
        Duration::from_secs(90),
        || get(port, "/readyz").is_some_and(|(c, _)| c == 200),
    );
    let text = std::fs::read_to_string(log.path()).expect("log");
    assert!(text.contains("request=discovery"), "{text}");
}

/// The first audit runs as soon as every kind has been listed, not after --debounce (here a
/// minute of quiet that a busy cluster would never give).
#[test]
fn the_first_audit_runs_at_once_after_the_first_sync() {
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(objects, Behaviour::default());
    let (port, _serving, _dir) = start_serve_with(
        &server,
        &["--auth", "none", "--debounce", "60", "--max-delay", "120"],
        Stdio::null(),
    );
    wait_for("the first audit (/readyz)", Duration::from_secs(40), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
}

/// One client (from 127.0.0.2) opens a hundred connections and sends nothing: it holds its own
/// share of the connection slots, and another client's /healthz and /readyz answer at once.
#[test]
fn one_client_cannot_hold_every_connection() {
    use socket2::{Domain, Socket, Type};
    use std::net::SocketAddr;
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(objects, Behaviour::default());
    let (port, _serving, _dir) = start_serve(&server);
    wait_for("the first audit (/readyz)", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    let mut held = Vec::new();
    for _ in 0..100 {
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
        s.bind(&SocketAddr::from(([127, 0, 0, 2], 0)).into())
            .expect("bind 127.0.0.2");
        if s.connect(&SocketAddr::from(([127, 0, 0, 1], port)).into())
            .is_ok()
        {
            held.push(s);
        }
    }
    assert!(held.len() > 64, "{} connections held", held.len());
    std::thread::sleep(Duration::from_millis(500));
    for path in ["/healthz", "/readyz"] {
        let asked = Instant::now();
        let answer = get(port, path);
        assert_eq!(answer.map(|(c, _)| c), Some(200), "{path}");
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "{path}: {:?}",
            asked.elapsed()
        );
    }
}

/// A user with no rights in a cluster of 203 tenants asks again and again: each request causes at
/// most 64 access reviews, the answers are kept per user, so that over 12 s of requests the user
/// costs each tenant's review once (before: every tenant's at once, and all again every 10 s),
/// and ends with 403.
#[test]
fn a_user_with_no_rights_costs_a_bounded_number_of_access_reviews() {
    let mut objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let mut policy = String::from(
        "apiVersion: gpu-trust/v1\nkind: TenancyPolicy\nplatformNamespaces: [monitoring, kubeflow]\ntenants:\n  - {name: research, namespaces: [ml-research]}\n  - {name: training, namespaces: [ml-training]}\n  - {name: serving, namespaces: [ml-serving]}\n",
    );
    for i in 0..200 {
        let ns = format!("team-{i:03}");
        objects.push(apiserver::Object::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})));
        policy.push_str(&format!("  - {{name: {ns}, namespaces: [{ns}]}}\n"));
    }
    let server = ApiServer::start(
        objects,
        Behaviour {
            users: vec![("nobody-token", "mallory", vec![])],
            ..Behaviour::default()
        },
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let policy_file = dir.path().join("policy.yaml");
    std::fs::write(&policy_file, policy).expect("policy");
    let (port, _serving, _kube) = start_serve_with(
        &server,
        &["--policy", policy_file.to_str().expect("path")],
        Stdio::null(),
    );
    wait_for("the first audit (/readyz)", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    let reviews = || {
        server
            .log()
            .iter()
            .filter(|l| l.starts_with("subjectaccessreview mallory "))
            .count()
    };
    let started = Instant::now();
    let mut most = 0;
    let mut last = 0;
    while started.elapsed() < Duration::from_secs(12) {
        let before = reviews();
        last = get_as(port, "/metrics", Some("nobody-token"))
            .expect("/metrics")
            .0;
        most = most.max(reviews() - before);
        std::thread::sleep(Duration::from_millis(200));
    }
    let total = reviews();
    eprintln!("{total} access reviews in 12 s, at most {most} for one request");
    assert!(most <= 64, "{most} access reviews for one request");
    assert!(
        total <= 210,
        "{total} access reviews in 12 s for 203 tenants"
    );
    assert_eq!(last, 403);
}

/// `--write-reports` where a namespace refuses the writes and another holds a report of the same
/// name that gpu-trust did not write: that report is left as it is, the refusal does not stop the
/// others (the earlier run's report is still deleted), and both are counted and logged.
#[test]
fn a_report_of_someone_else_is_left_and_a_refusing_namespace_does_not_stop_the_others() {
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(
        objects,
        Behaviour {
            refused_reports: vec!["ml-research"],
            ..Behaviour::default()
        },
    );
    let managed = serde_json::json!({"app.kubernetes.io/managed-by": "gpu-trust"});
    server.put_report(
        "old-team",
        "gpu-trust",
        serde_json::json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
            "metadata": {"name": "gpu-trust", "namespace": "old-team", "labels": managed}}),
    );
    let theirs = serde_json::json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
        "metadata": {"name": "gpu-trust", "namespace": "ml-training"},
        "source": "another tool", "results": []});
    server.put_report("ml-training", "gpu-trust", theirs.clone());
    let log = tempfile::NamedTempFile::new().expect("log file");
    let (port, _serving, _dir) = start_serve_with(
        &server,
        &["--auth", "none", "--write-reports"],
        Stdio::from(log.reopen().expect("log")),
    );
    wait_for(
        "the earlier report deleted",
        Duration::from_secs(60),
        || {
            !server
                .reports()
                .contains_key(&("old-team".to_string(), "gpu-trust".to_string()))
        },
    );
    let kept = &server.reports()[&("ml-training".to_string(), "gpu-trust".to_string())];
    assert_eq!(kept["source"], "another tool");
    assert!(kept["metadata"].get("labels").is_none(), "{kept}");
    assert!(!server
        .log()
        .iter()
        .any(|l| l.starts_with("PUT ") && l.contains("/namespaces/ml-training/")));
    wait_for("the failed writes counted", Duration::from_secs(30), || {
        get(port, "/metrics").is_some_and(|(_, m)| {
            sample(&m, "gpu_trust_report_write_errors_total").is_some_and(|n| n >= 2.0)
        })
    });
    let text = std::fs::read_to_string(log.path()).expect("log");
    assert!(
        text.contains("namespaces/ml-research/reports") && text.contains("left alone"),
        "{text}"
    );
}
