//! `gpu-trust probe`: measured evidence of what a neighbour suffers on a shared GPU, and the hidden
//! `probe-worker` the probe re-executes itself as. Parsing and printing only; the work is in
//! `gpu-trust-probe`.

use crate::output::{self, Format, OutputArgs};
use anyhow::Context;
use gpu_trust_model::evidence::{MechanismSettings, RunEvidence};
use gpu_trust_probe::fake::FakeBackend;
use gpu_trust_probe::job::{parse_selector, render_job, JobOptions, DEFAULT_PORT};
use gpu_trust_probe::real::RealBackend;
use gpu_trust_probe::serve::{request_shutdown, serve_remote, ServeOptions};
use gpu_trust_probe::thresholds::{DEFAULT_TIMEOUT_SECS, DEFAULT_WORKLOAD, THRESHOLDS};
use gpu_trust_probe::transport::{Launcher, ProcessLauncher, RemoteLauncher};
use gpu_trust_probe::{
    default_node_name, run_probe, Backend, DeviceSpec, ProbeError, ProbeOptions, Role, Scenario,
    Verdict,
};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// The hidden subcommand a worker process runs.
const WORKER_SUBCOMMAND: &str = "probe-worker";

/// A table of scenarios and verdicts, or the evidence as JSON (`gpu-trust/probe/v2`) that
/// `gpu-trust audit --evidence` attaches to the findings it measured.
const FORMATS: &[Format] = &[Format::Table, Format::Json];

fn parse_scenario(s: &str) -> Result<Scenario, String> {
    Scenario::parse(s).ok_or_else(|| {
        let names: Vec<&str> = Scenario::ALL.iter().map(|s| s.as_str()).collect();
        format!("unknown scenario `{s}` (one of {})", names.join(", "))
    })
}

fn parse_device(s: &str) -> Result<DeviceSpec, String> {
    DeviceSpec::parse(s).map_err(|e| e.to_string())
}

fn parse_setting(s: &str) -> Result<String, String> {
    MechanismSettings::default().set(s).map(|()| s.to_string())
}

/// The commit the binary was built from, when the build set it:
/// `GPU_TRUST_COMMIT=$(git rev-parse HEAD) cargo build ...` (cargo rebuilds when it changes).
const COMMIT: Option<&str> = option_env!("GPU_TRUST_COMMIT");

/// What the evidence records of the run: its name, the commit, the binary's SHA-256 and the command
/// line (the binary's path left out).
fn run_evidence(name: Option<String>, exe: &Path) -> RunEvidence {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let binary_sha256 = std::fs::read(exe).ok().map(|bytes| {
        ring::digest::digest(&ring::digest::SHA256, &bytes)
            .as_ref()
            .iter()
            .flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]])
            .map(char::from)
            .collect()
    });
    RunEvidence {
        name,
        commit: COMMIT.map(str::to_string),
        binary_sha256,
        args: std::env::args().skip(1).collect(),
        ..RunEvidence::default()
    }
}

/// Measure what one tenant does to another on a real GPU.
///
/// Runs a victim and an aggressor as two separate processes on the given devices and, per scenario,
/// measures the victim alone and then with the aggressor:
///
/// - memory-exhaustion: the aggressor takes all free memory; does the victim's next allocation
///   succeed?
///
/// - compute-hog: back-to-back long kernels; the victim's short-kernel latency, timed on the GPU and
///   on the host, in blocks alternating with blocks alone (the p99 from 10,000 samples a phase).
///
/// - bandwidth: a memory-bound copy kernel; the victim's own bandwidth, pass by pass, alternating.
///
/// - residual-data: the aggressor leaves a marker in freed memory; does the victim find it?
///
/// - utilisation: two equal processes; NVML utilisation against each one's throughput (a report).
///
/// - device-fault: an illegal memory access while the victim is idle; does its context survive?
///
/// - device-fault-busy: the same while the victim runs kernels (the faults run last)
///
/// DEV is a GPU index, a GPU UUID (GPU-...) or a MIG instance UUID (MIG-...). Both roles default to
/// device 0: time-slicing, or MPS when CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) holds a
/// running control daemon's socket. The mechanism in force is detected through NVML and reported.
///
/// The probe needs only the NVIDIA driver: it loads libcuda and NVML at run time, and its kernels are PTX
/// inside the binary, compiled by the driver. Without a driver it says so and exits 2. It never changes
/// MIG mode, compute mode, clocks or persistence, and never resets a GPU.
///
/// Each ratio is judged by its 95% confidence interval: affected when it lies beyond the threshold,
/// no measurable effect when it lies within, inconclusive otherwise.
///
/// Exit status: 0 when no scenario is affected, 1 when one is, 2 when the probe cannot run.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct Args {
    /// The victim's device.
    #[arg(long, value_name = "DEV", default_value = "0", value_parser = parse_device)]
    pub victim: DeviceSpec,
    /// The aggressor's device.
    #[arg(long, value_name = "DEV", default_value = "0", value_parser = parse_device)]
    pub aggressor: DeviceSpec,
    /// Run only this scenario (repeatable); all of them by default.
    #[arg(long = "scenario", value_name = "NAME", value_parser = parse_scenario)]
    pub scenarios: Vec<Scenario>,
    /// Output format and files. A JSON file holds the scenarios measured so far after each one
    /// (marked partial), so that a run cut short leaves what it measured.
    #[command(flatten)]
    pub output: OutputArgs,
    /// A name for this run, recorded in the evidence and named wherever the audit cites it.
    #[arg(long, value_name = "NAME")]
    pub run: Option<String>,
    /// How the sharing mechanism was set up (repeatable), recorded in the evidence and named wherever
    /// the audit cites it: replicas=N, mps-active-thread-percentage=P (100: no limit),
    /// mps-pinned-memory-limit=LIMIT (71885M, none), time-slice=default|short|medium|long. An MPS
    /// client cannot see its daemon's limits: whoever set them declares them here.
    #[arg(long = "setting", value_name = "K=V", value_parser = parse_setting)]
    pub settings: Vec<String>,
    /// Bound of each scenario (baseline and contended run together), in seconds.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub timeout: u64,
    /// The node name to record in the evidence (default: NODE_NAME, then the host name).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// Run the aggressor in another pod: the `probe-worker --serve` at HOST:PORT (used by --emit-job).
    #[arg(long, value_name = "HOST:PORT")]
    pub aggressor_remote: Option<String>,
    /// Seconds to keep trying to reach --aggressor-remote while its pod starts.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub connect_timeout: u64,

    /// Print a Kubernetes Job that runs the probe's two roles as two pods, instead of probing here.
    #[arg(long)]
    pub emit_job: bool,
    /// With --emit-job: a node label the pods must match (repeatable).
    #[arg(long, value_name = "K=V", requires = "emit_job")]
    pub node_selector: Vec<String>,
    /// With --emit-job: the shared resource each pod requests one replica of.
    #[arg(long, value_name = "NAME", default_value = gpu_trust_model::resource::GPU)]
    pub resource: String,
    /// With --emit-job: the image holding the gpu-trust binary (no CUDA libraries needed: the node's
    /// container toolkit mounts the driver's).
    #[arg(long, value_name = "IMAGE", default_value = concat!("gpu-trust:", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// With --emit-job: the namespace of the Job.
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// With --emit-job: the name of the Job and its Service.
    #[arg(long, value_name = "NAME", default_value = "gpu-trust-probe")]
    pub job_name: String,

    /// A simulated device profile, for tests.
    #[arg(long, hide = true)]
    pub fake: Option<String>,
    /// The simulated device's state directory, for tests.
    #[arg(long, hide = true, requires = "fake")]
    pub fake_dir: Option<PathBuf>,
    /// Exit 0 when a scenario is not isolated: in a Job's pod that is a result, not a failure.
    #[arg(skip)]
    pub findings_exit_zero: bool,
}

/// A pod of the Job `probe --emit-job` writes (started by Kubernetes, not by hand): its
/// JOB_COMPLETION_INDEX says its role, as the image has no shell to decide it.
#[derive(Debug, clap::Args)]
pub struct JobPodArgs {
    /// The aggressor pod's HOST:PORT, for pod 0.
    #[arg(long, value_name = "HOST:PORT")]
    pub peer: String,
    /// The port pod 1 serves the aggressor on.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PORT)]
    pub port: u16,
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub timeout: u64,
    #[arg(long, value_name = "SECS", default_value_t = 7200)]
    pub serve_for: u64,
    #[arg(long = "scenario", value_name = "NAME", value_parser = parse_scenario)]
    pub scenarios: Vec<Scenario>,
}

/// Pod 0 probes with pod 1 as the aggressor and prints the JSON evidence; pod 1 serves the
/// aggressor. Any other index is an error: the subcommand belongs to the Job `--emit-job` writes.
pub fn run_job_pod(args: JobPodArgs) -> anyhow::Result<ExitCode> {
    let index = std::env::var("JOB_COMPLETION_INDEX").unwrap_or_default();
    match index.trim() {
        "0" => run(Args {
            victim: DeviceSpec::Index(0),
            aggressor: DeviceSpec::Index(0),
            scenarios: args.scenarios,
            output: OutputArgs {
                format: Some(Format::Json),
                output: Vec::new(),
            },
            run: None,
            settings: Vec::new(),
            timeout: args.timeout,
            node: None,
            aggressor_remote: Some(args.peer),
            connect_timeout: 300,
            emit_job: false,
            node_selector: Vec::new(),
            resource: String::new(),
            image: String::new(),
            namespace: None,
            job_name: String::new(),
            fake: None,
            fake_dir: None,
            findings_exit_zero: true,
        }),
        "1" => run_worker(WorkerArgs {
            role: Role::Victim,
            device: DeviceSpec::Index(0),
            serve: Some(format!("0.0.0.0:{}", args.port)),
            serve_for: args.serve_for,
            fake: None,
            fake_dir: None,
        }),
        other => anyhow::bail!(
            "JOB_COMPLETION_INDEX is `{other}`, not 0 or 1: probe-job-pod runs in the two pods of the indexed Job that `gpu-trust probe --emit-job` writes"
        ),
    }
}

/// A worker process of `gpu-trust probe` (started by it, not by hand).
#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    #[arg(long, default_value = "victim", value_parser = parse_role)]
    pub role: Role,
    #[arg(long, default_value = "0", value_parser = parse_device)]
    pub device: DeviceSpec,
    /// Serve aggressor workers to a remote probe on ADDR (host:port) instead of being one.
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<String>,
    /// With --serve: how long to serve at most, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 7200)]
    pub serve_for: u64,
    #[arg(long)]
    pub fake: Option<String>,
    #[arg(long, requires = "fake")]
    pub fake_dir: Option<PathBuf>,
}

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| format!("unknown role `{s}` (victim or aggressor)"))
}

fn fake_backend(profile: &str, dir: Option<&Path>) -> Result<FakeBackend, ProbeError> {
    match dir {
        Some(d) => FakeBackend::with_dir(profile, d),
        None => FakeBackend::new(profile),
    }
}

/// The GPU probed: the simulated one of `--fake`, else the real one through the driver; a machine
/// where the probe cannot run (no driver, no GPU) stops the run, saying why.
fn backend(args: &Args) -> anyhow::Result<Arc<dyn Backend>> {
    match &args.fake {
        Some(profile) => Ok(Arc::new(fake_backend(profile, args.fake_dir.as_deref())?)),
        None => match RealBackend::new() {
            Ok(b) => Ok(Arc::new(b)),
            Err(e) if e.is_environment() => {
                output::eprint_line(&format!("gpu-trust: {e}"));
                Err(output::stopped())
            }
            Err(e) => Err(e.into()),
        },
    }
}

/// How the workers start: child processes of this binary, the aggressor in the remote pod of
/// `--aggressor-remote` when given.
fn launcher(args: &Args, exe: PathBuf, backend: Arc<dyn Backend>) -> Box<dyn Launcher> {
    let local = ProcessLauncher {
        exe,
        subcommand: vec![WORKER_SUBCOMMAND.to_string()],
        backend,
    };
    match &args.aggressor_remote {
        Some(addr) => Box::new(RemoteLauncher {
            address: addr.clone(),
            remote_role: Role::Aggressor,
            local: Box::new(local),
            connect_for: Duration::from_secs(args.connect_timeout),
        }),
        None => Box::new(local),
    }
}

/// What the probe measures, between whom, how long, and the mechanism's settings as given.
fn options(args: &Args, run: RunEvidence) -> ProbeOptions {
    let mut settings = MechanismSettings::default();
    for s in &args.settings {
        // Each was checked when the command line was read.
        let _ = settings.set(s);
    }
    ProbeOptions {
        victim: args.victim.clone(),
        aggressor: args.aggressor.clone(),
        scenarios: args.scenarios.clone(),
        timeout: Duration::from_secs(args.timeout),
        workload: DEFAULT_WORKLOAD,
        thresholds: THRESHOLDS,
        node: args.node.clone().or_else(default_node_name),
        remote_aggressor: args.aggressor_remote.clone(),
        run,
        settings,
    }
}

/// The evidence so far, written over the JSON file of the run (if any) as each scenario ends, so
/// that a probe cut short leaves what it measured; a write that fails is a warning.
fn write_partial(path: Option<&Path>, evidence: &gpu_trust_probe::ProbeEvidence) {
    let Some(path) = path else {
        return;
    };
    let written = gpu_trust_report::probe::json::render(evidence)
        .map_err(anyhow::Error::from)
        .and_then(|text| output::replace_output(path, &text));
    if let Err(e) = written {
        output::eprint_line(&format!("gpu-trust: warning: partial evidence: {e:#}"));
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.emit_job {
        return emit_job(&args);
    }
    let targets = args.output.targets(FORMATS)?;
    if args.timeout == 0 {
        anyhow::bail!("--timeout must be at least 1 second");
    }
    let backend = backend(&args)?;
    let exe = std::env::current_exe().context("locating the gpu-trust binary to start workers")?;
    let opts = options(&args, run_evidence(args.run.clone(), &exe));
    let launcher = launcher(&args, exe, Arc::clone(&backend));
    let show_progress = std::io::stderr().is_terminal();
    let mut progress = |line: &str| {
        if show_progress {
            output::eprint_line(&format!("gpu-trust probe: {line}"));
        }
    };
    let partial_file = targets
        .iter()
        .find(|t| t.format == Format::Json)
        .and_then(|t| t.path());
    let mut partial = |ev: &gpu_trust_probe::ProbeEvidence| write_partial(partial_file, ev);
    let result = run_probe(
        backend.as_ref(),
        launcher.as_ref(),
        &opts,
        &mut progress,
        &mut partial,
    );
    if let Some(addr) = &args.aggressor_remote {
        // The aggressor pod waits for this to finish; it also ends at its own deadline.
        if let Err(e) = request_shutdown(addr) {
            output::eprint_line(&format!(
                "gpu-trust: warning: could not stop the remote aggressor at {addr}: {e}"
            ));
        }
    }
    let evidence = match result {
        Ok(ev) => ev,
        Err(e) if e.is_environment() => {
            output::eprint_line(&format!("gpu-trust: {e}"));
            return Err(output::stopped());
        }
        Err(ProbeError::Device(msg)) | Err(ProbeError::Usage(msg)) => {
            anyhow::bail!("{msg}");
        }
        Err(e) => return Err(e.into()),
    };
    let harmed = evidence
        .scenarios
        .iter()
        .any(|s| s.verdict == Verdict::Affected);
    let code = if harmed && !args.findings_exit_zero {
        output::FINDINGS
    } else {
        output::CLEAN
    };
    output::write_targets_with(
        &targets,
        code,
        |t| {
            Ok(match t.format {
                Format::Json => gpu_trust_report::probe::json::render(&evidence)?,
                _ => gpu_trust_report::probe::table::render(&evidence),
            })
        },
        // The file the partial evidence went to is replaced whole.
        |path, text| match path {
            Some(p) if Some(p) == partial_file => output::replace_output(p, text),
            _ => output::write_output(path, text),
        },
    )
}

fn emit_job(args: &Args) -> anyhow::Result<ExitCode> {
    let mut node_selector = Vec::new();
    for s in &args.node_selector {
        match parse_selector(s) {
            Ok(kv) => node_selector.push(kv),
            Err(e) => {
                anyhow::bail!("{e}");
            }
        }
    }
    let opts = JobOptions {
        name: args.job_name.clone(),
        namespace: args.namespace.clone(),
        image: args.image.clone(),
        node_selector,
        resource: args.resource.clone(),
        scenarios: args.scenarios.clone(),
        timeout_secs: args.timeout.max(1),
        port: DEFAULT_PORT,
        binary: "gpu-trust".into(),
    };
    let path = args.output.one_file("--emit-job")?;
    match render_job(&opts) {
        Ok(yaml) => output::verdict(output::write_output(path, &yaml), output::CLEAN),
        Err(e) => anyhow::bail!("{e}"),
    }
}

pub fn run_worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    if let Some(listen) = &args.serve {
        let exe =
            std::env::current_exe().context("locating the gpu-trust binary to start workers")?;
        let mut worker_args = vec![
            WORKER_SUBCOMMAND.to_string(),
            "--role".into(),
            Role::Aggressor.as_str().into(),
            "--device".into(),
            args.device.to_string(),
        ];
        if let Some(profile) = &args.fake {
            worker_args.extend(["--fake".to_string(), profile.clone()]);
            if let Some(dir) = &args.fake_dir {
                worker_args.extend(["--fake-dir".to_string(), dir.display().to_string()]);
            }
        }
        let opts = ServeOptions {
            listen: listen.clone(),
            lifetime: Duration::from_secs(args.serve_for),
            exe,
            worker_args,
        };
        serve_remote(&opts, &mut |line| {
            output::eprint_line(&format!("gpu-trust probe-worker: {line}"))
        })?;
        return Ok(output::exit(output::CLEAN));
    }
    let backend: Box<dyn Backend> = match &args.fake {
        Some(profile) => Box::new(fake_backend(profile, args.fake_dir.as_deref())?),
        None => Box::new(RealBackend::for_worker()),
    };
    gpu_trust_probe::transport::serve_stdio(backend.as_ref(), args.role, &args.device);
    Ok(output::exit(output::CLEAN))
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust probe
  gpu-trust probe --scenario memory-exhaustion --scenario device-fault --output probe.json
  gpu-trust probe --victim MIG-5c2d9e1a-7b3f-5d42-9c1e-2a6f8b0d4e31 \\
      --aggressor MIG-8e4f0a2b-1c3d-5e6f-a7b8-c9d0e1f2a3b4
  gpu-trust probe --emit-job --node-selector nvidia.com/gpu.product=NVIDIA-H200 \\
      --resource nvidia.com/gpu --image registry.example/gpu-trust:0.1.0 > probe-job.yaml";
