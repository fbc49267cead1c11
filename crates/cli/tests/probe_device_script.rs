//! `tools/probe-device.sh`, the prepared run on a GPU machine, exercised here so that it is not first run
//! on the GPU: with stub `nvidia-smi` and `nvidia-cuda-mps-control` on PATH and the probe's fake device
//! behind a wrapper (time-slicing, or MPS when the stub daemon's socket is in the pipe directory), with
//! nothing NVIDIA at all, and with a probe that hangs.

use gpu_trust_model::evidence::{MeasuredMechanism, ProbeEvidence};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/probe-device.sh")
}

fn write_executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// nvidia-smi that logs its arguments and answers the queries the script makes.
const NVIDIA_SMI: &str = r#"#!/bin/sh
echo "nvidia-smi $*" >> "$STUB_LOG"
case "$*" in
  -q) echo "Driver Version : 0.0 (stub)" ;;
  -L) echo "GPU 0: Stub GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  *mig.mode.current*noheader*) echo "Disabled" ;;
  --query-gpu=*) echo "index, compute_mode"; echo "0, Default" ;;
  --query-compute-apps=*) echo "pid, process_name, used_memory" ;;
  *) echo "stub nvidia-smi: unexpected arguments: $*" >&2; exit 9 ;;
esac
"#;

/// The MPS control daemon: `-d` creates the control socket's path, `quit` on stdin removes it.
const MPS_CONTROL: &str = r#"#!/bin/sh
if [ "$1" = "-d" ]; then
  echo "mps-control -d $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY" >> "$STUB_LOG"
  : > "$CUDA_MPS_PIPE_DIRECTORY/control"
  echo "control daemon started (stub)" > "$CUDA_MPS_LOG_DIRECTORY/control.log"
  exit 0
fi
read -r cmd
echo "mps-control $cmd $CUDA_MPS_PIPE_DIRECTORY" >> "$STUB_LOG"
if [ "$cmd" = quit ]; then rm -f "$CUDA_MPS_PIPE_DIRECTORY/control"; fi
"#;

/// gpu-trust with `probe` on the fake device: MPS when the stub daemon's socket is in the pipe directory.
const FAKE_GPU_TRUST: &str = r#"#!/bin/sh
if [ "$1" = probe ]; then
  shift
  profile=time-slicing
  if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ]; then
    profile=mps
  fi
  mkdir -p "$STUB_STATE/$profile"
  exec "$REAL_GPU_TRUST" probe --fake "$profile" --fake-dir "$STUB_STATE/$profile" "$@"
fi
exec "$REAL_GPU_TRUST" "$@"
"#;

/// A probe that never finishes, with a child of its own.
const HUNG_GPU_TRUST: &str = r#"#!/bin/sh
if [ "$1" = --version ]; then echo "gpu-trust (hanging stub)"; exit 0; fi
sleep 1000 &
echo $! > "$STUB_STATE/child.pid"
wait
"#;

struct Stubs {
    dir: tempfile::TempDir,
}

impl Stubs {
    fn new(gpu_trust: Option<&str>, nvidia_tools: bool) -> Stubs {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        if nvidia_tools {
            write_executable(&dir.path().join("bin/nvidia-smi"), NVIDIA_SMI);
            write_executable(&dir.path().join("bin/nvidia-cuda-mps-control"), MPS_CONTROL);
        }
        if let Some(text) = gpu_trust {
            write_executable(&dir.path().join("bin/gpu-trust"), text);
        }
        Stubs { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn out(&self) -> PathBuf {
        self.path("out")
    }

    fn run(&self, gpu_trust: &Path, env: &[(&str, &str)]) -> (Output, Duration) {
        let path = format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let started = Instant::now();
        let mut cmd = Command::new("bash");
        cmd.arg(script())
            .arg(self.out())
            .env("PATH", path)
            .env("GPU_TRUST", gpu_trust)
            .env("REAL_GPU_TRUST", assert_cmd::cargo::cargo_bin("gpu-trust"))
            .env("STUB_LOG", self.path("stub.log"))
            .env("STUB_STATE", self.path("state"))
            .env_remove("OUT")
            .env_remove("CUDA_MPS_PIPE_DIRECTORY")
            .env_remove("CUDA_MPS_LOG_DIRECTORY");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let output = cmd.output().unwrap();
        (output, started.elapsed())
    }

    fn summary(&self) -> Value {
        let text = std::fs::read_to_string(self.out().join("summary.json")).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("summary.json: {e}\n{text}"))
    }

    fn stub_log(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("stub.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn run_named<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run"] == name)
        .unwrap_or_else(|| panic!("no run `{name}` in {summary}"))
}

fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Every nvidia-smi call only reads: no -mig, -c, -pm, -ac, -rac, -lgc, -r or anything else that sets.
fn assert_nvidia_smi_only_queried(log: &[String]) {
    let calls: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("nvidia-smi "))
        .collect();
    assert!(!calls.is_empty(), "nvidia-smi was never called");
    for call in calls {
        let args: Vec<&str> = call.split_whitespace().skip(1).collect();
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            let read_only = matches!(a, "-q" | "-L")
                || a.starts_with("--query-gpu=")
                || a.starts_with("--query-compute-apps=")
                || a.starts_with("--format=");
            if a == "-i" {
                i += 2;
                continue;
            }
            assert!(read_only, "`{call}`: `{a}` is not a read-only query");
            i += 1;
        }
    }
}

#[test]
fn the_script_parses() {
    let out = Command::new("bash")
        .arg("-n")
        .arg(script())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
}

#[test]
fn a_dry_run_records_time_slicing_and_mps_evidence_and_stops_its_daemon() {
    let stubs = Stubs::new(Some(FAKE_GPU_TRUST), true);
    let (output, elapsed) = stubs.run(&stubs.path("bin/gpu-trust"), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(elapsed < Duration::from_secs(280), "{elapsed:?}");

    let summary = stubs.summary();
    assert_eq!(summary["script"], "tools/probe-device.sh");
    assert_eq!(summary["settingsUnchanged"], true);
    let names: Vec<&str> = summary["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["time-slicing", "mps", "mig"]);
    for (name, kind) in [
        ("time-slicing", MeasuredMechanism::TimeSlicing),
        ("mps", MeasuredMechanism::Mps),
    ] {
        let run = run_named(&summary, name);
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["mechanismDetected"], kind.as_str(), "{run}");
        let file = stubs.out().join(run["evidence"].as_str().unwrap());
        let evidence: ProbeEvidence =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(evidence.schema_supported());
        assert_eq!(evidence.mechanism.kind, kind);
        assert_eq!(evidence.scenarios.len(), 6, "the full battery");
        for s in &evidence.scenarios {
            assert_eq!(
                run["verdicts"][s.scenario.as_str()],
                s.verdict.as_str(),
                "{run}"
            );
        }
    }
    let mig = run_named(&summary, "mig");
    assert_eq!(mig["status"], "not-measured");
    let reason = mig["reason"].as_str().unwrap();
    assert!(reason.contains("MIG mode of GPU 0 is Disabled"), "{reason}");
    assert!(reason.contains("never changes MIG mode"), "{reason}");

    for fact in [
        "facts/nvidia-smi-q.txt",
        "facts/nvidia-smi-L.txt",
        "facts/settings-before.csv",
        "facts/settings-after.csv",
        "facts/host.txt",
        "steps.log",
        "mps/control.log",
    ] {
        assert!(stubs.out().join(fact).exists(), "{fact} missing");
    }

    let log = stubs.stub_log();
    assert_nvidia_smi_only_queried(&log);
    let starts: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("mps-control -d "))
        .collect();
    assert_eq!(starts.len(), 1, "{log:?}");
    let dirs: Vec<&str> = starts[0].split_whitespace().skip(2).collect();
    let (pipe, logs) = (dirs[0], dirs[1]);
    assert!(pipe.starts_with("/tmp/gpu-trust-mps-pipe."), "{pipe}");
    assert!(logs.starts_with("/tmp/gpu-trust-mps-log."), "{logs}");
    assert!(
        log.contains(&format!("mps-control quit {pipe}")),
        "the daemon was not told to quit: {log:?}"
    );
    assert!(
        !Path::new(pipe).exists() && !Path::new(logs).exists(),
        "the script left its MPS directories behind"
    );
}

#[test]
fn without_a_gpu_every_failure_is_recorded_and_nothing_passes_for_evidence() {
    if gpu_trust_probe::real::driver_present().is_ok()
        || Command::new("nvidia-smi").arg("-L").output().is_ok()
    {
        eprintln!("this machine has an NVIDIA driver: the no-GPU run cannot be checked");
        return;
    }
    let stubs = Stubs::new(None, false);
    let (output, _) = stubs.run(&assert_cmd::cargo::cargo_bin("gpu-trust"), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let summary = stubs.summary();
    let ts = run_named(&summary, "time-slicing");
    assert_eq!(ts["status"], "failed");
    assert_eq!(ts["exitCode"], 2);
    let reason = ts["reason"].as_str().unwrap();
    assert!(reason.contains("no NVIDIA driver found"), "{reason}");
    assert!(ts.get("evidence").is_none());
    assert!(!stubs.out().join("time-slicing.json").exists());
    assert_eq!(run_named(&summary, "mps")["status"], "not-measured");
    assert_eq!(run_named(&summary, "mig")["status"], "not-measured");
    assert_eq!(summary["settingsUnchanged"], Value::Null);
}

#[test]
fn a_hung_probe_is_killed_at_its_bound_with_its_children() {
    let stubs = Stubs::new(Some(HUNG_GPU_TRUST), true);
    let (output, elapsed) = stubs.run(
        &stubs.path("bin/gpu-trust"),
        &[("PROBE_DEVICE_BUDGET_SECS", "75")],
    );
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(elapsed < Duration::from_secs(75), "{elapsed:?}");
    let summary = stubs.summary();
    let ts = run_named(&summary, "time-slicing");
    assert_eq!(ts["status"], "failed", "{ts}");
    assert!(
        ts["reason"].as_str().unwrap().contains("timed out after"),
        "{ts}"
    );
    // No time left for MPS: not started, and said so.
    let mps = run_named(&summary, "mps");
    assert_eq!(mps["status"], "failed", "{mps}");
    assert!(
        mps["reason"].as_str().unwrap().contains("time budget"),
        "{mps}"
    );
    assert!(
        !stubs
            .stub_log()
            .iter()
            .any(|l| l.starts_with("mps-control")),
        "an MPS daemon was started without time to use it"
    );
    let pid = std::fs::read_to_string(stubs.path("state/child.pid")).unwrap();
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    let alive = std::fs::read_to_string(&stat)
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false);
    assert!(!alive, "the hung probe's child {} survived", pid.trim());
}
