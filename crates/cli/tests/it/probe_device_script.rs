//! `tools/probe-device.sh`, the prepared run on a GPU machine, exercised here so that it is not first run
//! on the GPU: with stub `nvidia-smi` and `nvidia-cuda-mps-control` on PATH and the probe's fake device
//! behind a wrapper (time-slicing, or MPS when the stub daemon's socket is in the pipe directory), with
//! nothing NVIDIA at all, and with a probe that hangs.

use gpu_trust_model::evidence::{MeasuredMechanism, ProbeEvidence, Scenario};
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
  *memory.total*noheader*) echo "81559" ;;
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

/// tools/probe-limits.py on no GPU: logs the MPS pipe directory and the limit variable it runs with, and
/// its arguments, and reports what each process "took" (the fake device's numbers, not a measurement).
const FAKE_LIMITS: &str = r#"#!/bin/sh
echo "limits $* pipe=${CUDA_MPS_PIPE_DIRECTORY:-} hami=${CUDA_DEVICE_MEMORY_LIMIT:-}" >> "$STUB_LOG"
n=1
while [ $# -gt 0 ]; do
  case $1 in --processes) n=$2; shift ;; esac
  shift
done
printf '{"script": "tools/probe-limits.py", "processes": ['
i=1
while [ "$i" -le "$n" ]; do
  [ "$i" -gt 1 ] && printf ', '
  printf '{"wave": 1, "allocatedMiB": 40000}'
  i=$((i + 1))
done
printf '], "sumAllocatedMiB": %d}\n' $((n * 40000))
"#;

/// A probe that never finishes, with a child of its own.
const HUNG_GPU_TRUST: &str = r#"#!/bin/sh
if [ "$1" = --version ]; then echo "gpu-trust (hanging stub)"; exit 0; fi
sleep 1000 &
echo $! > "$STUB_STATE/child.pid"
wait
"#;

/// gpu-trust whose probe measures one scenario on the fake device and, as an MPS client, then hangs
/// as a probe does in the middle of a scenario: its JSON holds what it finished.
const HANGING_MPS_GPU_TRUST: &str = r#"#!/bin/sh
if [ "$1" = probe ]; then
  shift
  profile=time-slicing
  if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ]; then
    profile=mps
  fi
  mkdir -p "$STUB_STATE/$profile"
  "$REAL_GPU_TRUST" probe --fake "$profile" --fake-dir "$STUB_STATE/$profile" "$@" --scenario memory-exhaustion
  [ "$profile" = mps ] || exit $?
  sleep 1000 &
  echo $! > "$STUB_STATE/child.pid"
  : > "$STUB_STATE/hanging"
  wait
  exit 0
fi
exec "$REAL_GPU_TRUST" "$@"
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
        write_executable(&dir.path().join("bin/probe-limits"), FAKE_LIMITS);
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
        let started = Instant::now();
        let output = self.command(gpu_trust, env).output().unwrap();
        (output, started.elapsed())
    }

    fn command(&self, gpu_trust: &Path, env: &[(&str, &str)]) -> Command {
        let path = format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
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
        cmd
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
fn a_dry_run_records_time_slicing_and_mps_evidence_and_stops_its_daemons() {
    let stubs = Stubs::new(Some(FAKE_GPU_TRUST), true);
    let limits = stubs.path("bin/probe-limits");
    let (output, elapsed) = stubs.run(
        &stubs.path("bin/gpu-trust"),
        &[("PROBE_LIMITS", limits.to_str().unwrap())],
    );
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(elapsed < Duration::from_secs(360), "{elapsed:?}");

    let summary = stubs.summary();
    assert_eq!(summary["script"], "tools/probe-device.sh");
    assert_eq!(summary["settingsUnchanged"], true);
    let names: Vec<&str> = summary["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "time-slicing",
            "mps",
            "mps-replicas-one-pod-two-processes",
            "mps-replicas",
            "variable-only-limit",
            "mig"
        ]
    );
    for (name, kind) in [
        ("time-slicing", MeasuredMechanism::TimeSlicing),
        ("mps", MeasuredMechanism::Mps),
        ("mps-replicas", MeasuredMechanism::Mps),
    ] {
        let run = run_named(&summary, name);
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["mechanismDetected"], kind.as_str(), "{run}");
        let file = stubs.out().join(run["evidence"].as_str().unwrap());
        let evidence: ProbeEvidence =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(evidence.schema_supported());
        assert_eq!(evidence.mechanism.kind, kind);
        assert_eq!(
            evidence.scenarios.len(),
            Scenario::ALL.len(),
            "the full battery"
        );
        // Named after the output folder, with the limits the script set on its daemon declared.
        assert_eq!(evidence.run.name.as_deref(), Some(&*format!("out/{name}")));
        let declared = evidence.mechanism.settings.clone().unwrap_or_default();
        let expected = match name {
            "mps" => (None, Some("100"), Some("none")),
            "mps-replicas" => (Some(2), Some("50"), Some("40779M")),
            _ => (None, None, None),
        };
        assert_eq!(
            (
                declared.replicas,
                declared.mps_active_thread_percentage.as_deref(),
                declared.mps_pinned_memory_limit.as_deref()
            ),
            expected,
            "{name}"
        );
        for s in &evidence.scenarios {
            assert_eq!(
                run["verdicts"][s.scenario.as_str()],
                s.verdict.as_str(),
                "{run}"
            );
        }
    }
    for (name, processes) in [
        ("mps-replicas-one-pod-two-processes", 3),
        ("variable-only-limit", 1),
    ] {
        let run = run_named(&summary, name);
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["allocatedMiB"].as_array().unwrap().len(), processes);
        assert_eq!(run["sumAllocatedMiB"], processes * 40000);
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
        "mps-replicas/control.log",
        "mps-replicas/limit.txt",
    ] {
        assert!(stubs.out().join(fact).exists(), "{fact} missing");
    }

    let log = stubs.stub_log();
    assert_nvidia_smi_only_queried(&log);
    // Two daemons of our own, one after the other, each told to quit and its directories removed.
    let starts: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("mps-control -d "))
        .collect();
    assert_eq!(starts.len(), 2, "{log:?}");
    let mut pipes = Vec::new();
    for start in starts {
        let dirs: Vec<&str> = start.split_whitespace().skip(2).collect();
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
        pipes.push(pipe.to_string());
    }
    // The second daemon is configured as the device plugin configures two replicas: half the GPU's
    // memory (81559 MiB by the stub) and half its threads per client, before any client.
    let replicas = &pipes[1];
    let configured: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("mps-control set_default_"))
        .collect();
    assert_eq!(
        configured,
        [
            &format!("mps-control set_default_device_pinned_mem_limit 0 40779M {replicas}"),
            &format!("mps-control set_default_active_thread_percentage 50 {replicas}"),
        ],
        "{log:?}"
    );
    // Its limit run: three processes, two first, as its clients; the variable-only run with HAMi-core's
    // variable and no daemon.
    let runs: Vec<&String> = log.iter().filter(|l| l.starts_with("limits ")).collect();
    assert_eq!(runs.len(), 2, "{log:?}");
    assert!(runs[0].contains("--processes 3"), "{}", runs[0]);
    assert!(runs[0].contains("--first 2"), "{}", runs[0]);
    assert!(
        runs[0].contains(&format!("pipe={replicas} ")),
        "{}",
        runs[0]
    );
    assert!(runs[1].contains("--processes 1"), "{}", runs[1]);
    assert!(runs[1].ends_with("hami=8g"), "{}", runs[1]);
    assert!(!runs[1].contains(&pipes[0]) && !runs[1].contains(replicas));
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
    assert_eq!(
        run_named(&summary, "mps-replicas")["status"],
        "not-measured"
    );
    assert_eq!(run_named(&summary, "mig")["status"], "not-measured");
    // The limit run with the real tools/probe-limits.py: no driver, so no figure, and said why.
    let limit = run_named(&summary, "variable-only-limit");
    if Command::new("python3").arg("--version").output().is_ok() {
        assert_eq!(limit["status"], "failed", "{limit}");
        let reason = limit["reason"].as_str().unwrap();
        assert!(
            reason.contains("libcuda.so.1 could not be loaded"),
            "{reason}"
        );
        assert!(limit.get("sumAllocatedMiB").is_none(), "{limit}");
    } else {
        assert_eq!(limit["status"], "not-measured", "{limit}");
    }
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
    for name in ["mps-replicas", "variable-only-limit"] {
        let run = run_named(&summary, name);
        assert_eq!(run["status"], "failed", "{run}");
        assert!(
            run["reason"].as_str().unwrap().contains("time budget"),
            "{run}"
        );
    }
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

#[test]
fn a_term_stops_the_run_at_once_keeps_what_it_measured_and_stops_the_mps_daemon() {
    let stubs = Stubs::new(Some(HANGING_MPS_GPU_TRUST), true);
    let limits = stubs.path("bin/probe-limits");
    let mut child = stubs
        .command(
            &stubs.path("bin/gpu-trust"),
            &[("PROBE_LIMITS", limits.to_str().unwrap())],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !stubs.path("state/hanging").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "the MPS probe run never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    // The probe's bound is 141 s (7 scenarios of 18 s and 15 s of slack): it was not waited for.
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(130));

    let summary = stubs.summary();
    assert_eq!(
        run_named(&summary, "time-slicing")["status"],
        "completed",
        "{summary}"
    );
    let mps = run_named(&summary, "mps");
    assert_eq!(mps["status"], "partial", "{mps}");
    assert!(
        mps["reason"]
            .as_str()
            .unwrap()
            .contains("interrupted by TERM"),
        "{mps}"
    );
    let file = stubs.out().join(mps["evidence"].as_str().unwrap());
    let evidence: ProbeEvidence =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(evidence.mechanism.kind, MeasuredMechanism::Mps);
    assert_eq!(
        mps["verdicts"]["memory-exhaustion"],
        evidence.scenarios[0].verdict.as_str()
    );
    // The run is named and declares the limits of the daemon it ran under.
    assert!(evidence
        .run
        .name
        .as_deref()
        .is_some_and(|n| n.ends_with("/mps")));
    let settings = evidence.mechanism.settings.unwrap();
    assert_eq!(
        settings.mps_active_thread_percentage.as_deref(),
        Some("100")
    );
    assert_eq!(settings.mps_pinned_memory_limit.as_deref(), Some("none"));

    // The daemon was told to quit and its directories removed; the hung probe's child is gone.
    let log = stubs.stub_log();
    let start = log
        .iter()
        .find(|l| l.starts_with("mps-control -d "))
        .expect("an MPS daemon was started");
    let pipe = start.split_whitespace().nth(2).unwrap();
    assert!(
        log.contains(&format!("mps-control quit {pipe}")),
        "the daemon was not told to quit: {log:?}"
    );
    assert!(!Path::new(pipe).exists(), "the pipe directory was left");
    let pid = std::fs::read_to_string(stubs.path("state/child.pid")).unwrap();
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    let alive = std::fs::read_to_string(&stat)
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false);
    assert!(!alive, "the hung probe's child {} survived", pid.trim());
}
