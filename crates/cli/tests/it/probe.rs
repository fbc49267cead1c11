//! `gpu-trust probe` end to end: real worker processes (the binary re-executing itself) over the fake
//! device, the no-GPU message, the remote aggressor over TCP, and `--emit-job`.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

fn gpu_trust() -> Command {
    Command::cargo_bin("gpu-trust").unwrap()
}

fn verdicts(json: &[u8]) -> Vec<(String, String)> {
    let v: Value = serde_json::from_slice(json).unwrap();
    assert_eq!(v["schema"], "gpu-trust/probe/v2");
    v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["scenario"].as_str().unwrap().to_string(),
                s["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Processes whose command line mentions `needle` (the test's own state directory).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(needle) {
                pids.push(pid);
            }
        }
    }
    pids
}

#[test]
fn without_a_gpu_it_says_so_and_exits_2() {
    if gpu_trust_probe::real::driver_present().is_ok() {
        eprintln!("libcuda is present here: the no-GPU message cannot be checked");
        return;
    }
    gpu_trust()
        .arg("probe")
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("no NVIDIA driver found: "))
        .stderr(predicate::str::contains("the probe needs a GPU node"));
}

#[test]
fn worker_processes_measure_a_time_sliced_fake_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpu_trust()
        .args(["probe", "--fake", "time-slicing", "--fake-dir"])
        .arg(dir.path())
        .args([
            "--scenario",
            "device-fault",
            "--scenario",
            "memory-exhaustion",
            "--scenario",
            "compute-hog",
            "--format",
            "json",
            "--node",
            "gpu-node-1",
        ])
        .timeout(Duration::from_secs(120))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    assert_eq!(
        verdicts(&out),
        vec![
            ("memory-exhaustion".to_string(), "affected".to_string()),
            ("compute-hog".to_string(), "affected".to_string()),
            (
                "device-fault".to_string(),
                "no-measurable-effect".to_string()
            ),
        ]
    );
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["node"], "gpu-node-1");
    assert_eq!(v["mechanism"]["kind"], "time-slicing");
    let needle = dir.path().to_string_lossy().to_string();
    assert!(
        processes_mentioning(&needle).is_empty(),
        "a worker outlived the probe"
    );
}

#[test]
fn a_hung_aggressor_is_killed_at_the_timeout_and_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = gpu_trust()
        .args(["probe", "--fake", "hang", "--fake-dir"])
        .arg(dir.path())
        .args([
            "--scenario",
            "compute-hog",
            "--timeout",
            "3",
            "--format",
            "json",
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        verdicts(&out),
        vec![("compute-hog".to_string(), "inconclusive".to_string())]
    );
    let v: Value = serde_json::from_slice(&out).unwrap();
    let err = v["scenarios"][0]["contended"]["error"].as_str().unwrap();
    assert!(err.contains("timed out after 3s"), "{err}");
    let needle = dir.path().to_string_lossy().to_string();
    assert!(
        processes_mentioning(&needle).is_empty(),
        "the hung worker was not reaped"
    );
}

#[test]
fn a_remote_aggressor_over_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"))
        .args([
            "probe-worker",
            "--serve",
            &addr,
            "--serve-for",
            "120",
            "--fake",
            "time-slicing",
            "--fake-dir",
        ])
        .arg(dir.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = gpu_trust()
        .args(["probe", "--fake", "time-slicing", "--fake-dir"])
        .arg(dir.path())
        .args(["--aggressor-remote", &addr, "--connect-timeout", "30"])
        .args(["--scenario", "memory-exhaustion", "--format", "json"])
        .timeout(Duration::from_secs(120))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    assert_eq!(
        verdicts(&out),
        vec![("memory-exhaustion".to_string(), "affected".to_string())]
    );
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["aggressor"]["spec"], format!("remote {addr}"));
    assert!(
        v["aggressor"]["uuid"].is_string(),
        "learnt from the remote worker's hello"
    );
    // The probe told the server to stop.
    let until = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = server.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > until {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.is_none() {
        let _ = server.kill();
        let _ = server.wait();
        panic!("the aggressor server did not stop");
    }
    assert!(status.unwrap().success());
}

#[test]
fn emit_job_prints_an_indexed_job() {
    gpu_trust()
        .args([
            "probe",
            "--emit-job",
            "--node-selector",
            "nvidia.com/gpu.product=NVIDIA-H200",
            "--resource",
            "nvidia.com/gpu",
            "--namespace",
            "gpu-audit",
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("kind: Job"))
        .stdout(predicate::str::contains("completionMode: Indexed"))
        .stdout(predicate::str::contains(
            "\"nvidia.com/gpu.product\": \"NVIDIA-H200\"",
        ))
        .stdout(predicate::str::contains("kubectl -n gpu-audit logs"));
}

#[test]
fn emit_job_without_a_node_selector_is_a_usage_error() {
    gpu_trust()
        .args(["probe", "--emit-job"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--node-selector"));
}

#[test]
fn bad_device_and_scenario_names_are_usage_errors() {
    gpu_trust()
        .args(["probe", "--victim", "gpu0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a GPU index"));
    gpu_trust()
        .args(["probe", "--scenario", "meltdown"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown scenario `meltdown`"));
}

#[test]
fn output_file_gets_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("probe.json");
    gpu_trust()
        .args([
            "probe",
            "--fake",
            "mig",
            "--scenario",
            "memory-exhaustion",
            "--format",
            "json",
            "--output",
        ])
        .arg(&file)
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0)
        .stdout(predicate::str::is_empty());
    assert!(Path::new(&file).exists());
    let text = std::fs::read(&file).unwrap();
    assert_eq!(
        verdicts(&text),
        vec![(
            "memory-exhaustion".to_string(),
            "no-measurable-effect".to_string()
        )]
    );
}

#[test]
fn the_binary_carries_its_kernels_and_needs_no_nvrtc() {
    // The kernels are PTX inside the binary, loaded by the driver: nothing in it names NVRTC, so nothing
    // in it can load libnvrtc, and the PTX entry points are there.
    let binary = std::fs::read(assert_cmd::cargo::cargo_bin("gpu-trust")).unwrap();
    assert!(
        !binary.windows(5).any(|w| w.eq_ignore_ascii_case(b"nvrtc")),
        "the binary names NVRTC"
    );
    for name in gpu_trust_probe::kernels::ENTRY_POINTS {
        let entry = format!(".visible .entry {name}(");
        assert!(
            binary.windows(entry.len()).any(|w| w == entry.as_bytes()),
            "the binary lacks the PTX entry point {name}"
        );
    }
}

/// The Job `--emit-job` writes runs the binary in exec form (the image has no shell): its command
/// line is one the binary accepts, and the pod's completion index picks the role; an index that is
/// not 0 or 1 is an error naming where the subcommand belongs.
#[test]
fn the_emitted_jobs_command_line_is_one_the_binary_runs() {
    let out = gpu_trust()
        .args([
            "probe",
            "--emit-job",
            "--node-selector",
            "nvidia.com/gpu.product=NVIDIA-H200",
            "--scenario",
            "device-fault",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&String::from_utf8(out.stdout).unwrap()).unwrap();
    let c = &docs[1]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"], serde_json::json!(["gpu-trust"]));
    let args: Vec<String> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    gpu_trust()
        .args(&args)
        .env("JOB_COMPLETION_INDEX", "7")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("JOB_COMPLETION_INDEX is `7`"));
    gpu_trust()
        .args(&args)
        .env_remove("JOB_COMPLETION_INDEX")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--emit-job"));
}
