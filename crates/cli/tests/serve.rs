//! `gpu-trust serve` against a recorded cluster on loopback (our own test server, not a
//! kube-apiserver: see `support/apiserver.rs`): it lists and watches, a pod added to the cluster
//! makes a new finding, and `/metrics` is parsed with Prometheus's own Python text parser.

#[path = "support/apiserver.rs"]
mod apiserver;

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
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
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
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).expect("kubeconfig");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
        l.local_addr().expect("addr").port()
    };
    let child = Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"))
        .args(["serve", "--kubeconfig"])
        .arg(&kubeconfig)
        .arg("--policy")
        .arg(example("ml-platform").join("policy.yaml"))
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--debounce",
            "0.3",
            "--max-delay",
            "2",
        ])
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
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
        eprintln!("NOTE: prometheus_client is not installed; /metrics is checked without Prometheus's parser");
    }
    let objects = apiserver::load(&example("ml-platform").join("cluster.yaml"));
    let server = ApiServer::start(
        objects,
        Behaviour {
            page: 3,
            forbidden: vec![],
            expire_once: vec![],
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
        assert_eq!(finding.1["layer"], "device", "{finding:?}");
        // The new tenant is in a group whose tenants share a memory pool, and that group counts pairs.
        let groups: Vec<&serde_json::Value> = samples
            .iter()
            .filter(|(name, labels, _)| {
                name == "gpu_trust_group_tenant" && labels["tenant"] == "intruder-lab"
            })
            .map(|(_, labels, _)| &labels["group"])
            .collect();
        assert!(
            !groups.is_empty(),
            "intruder-lab shares a memory pool or fault domain"
        );
        assert!(samples
            .iter()
            .any(|(name, labels, v)| name == "gpu_trust_shared_tenant_pairs"
                && groups.contains(&&labels["group"])
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
/// complete while a GPU workload may hide there.
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
    wait_for("the first audit (/readyz)", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    let (_, report) = get(port, "/report.json").expect("/report.json");
    assert!(
        report.contains("customresourcedefinitions/trainingruns.gpus.example.com"),
        "the report lists the kind it did not read: {report}"
    );
    let (_, metrics) = get(port, "/metrics").expect("/metrics");
    assert!(
        metrics.contains("gpu_trust_coverage_kinds{state=\"unreadable\"} 1"),
        "{metrics}"
    );
}
