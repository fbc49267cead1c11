//! The parent: runs each scenario's baseline and contended phases through worker links, bounded in time,
//! and assembles the evidence.
//!
//! Sequences (each phase starts fresh worker processes, so that nothing carries over between phases):
//!
//! - baseline: victim `prepare`, `measure`.
//! - contended, most scenarios: victim `prepare`; aggressor `start` until `ready`; victim `measure`;
//!   aggressor `stop`.
//! - compute hog and bandwidth, both phases at once: victim `prepare`, then `rounds` rounds of a
//!   baseline block (victim `measure` while the aggressor's process idles) and a contended block
//!   (aggressor `start`, victim `measure`, aggressor `stop`), in the order B C, C B, B C, ... so that a
//!   drift falls on both phases alike; the blocks of each phase are pooled.
//! - contended residual data: aggressor `start` (fill, free), `stop`, exit and reaped; then a new victim
//!   allocates and scans.
//! - contended device fault with a busy victim: the victim's `measure` (work kernels for a while)
//!   first, then the aggressor's `start` (the fault) inside that window.
//! - utilisation: both processes `prepare` and `measure` at once, while the parent samples utilisation.
//!
//! After each scenario the evidence so far (marked partial) goes to the caller, so that a run that is
//! killed leaves what it measured.

use crate::detect::{classify, HostFacts, RoleIdentity};
use crate::device::{Backend, Detection, DeviceSpec, Role, WorkerDevice};
use crate::error::ProbeError;
use crate::protocol::{Reply, Request};
use crate::stats::round3;
use crate::thresholds::{Thresholds, Workload};
use crate::transport::{Launcher, LinkError, SendError, WorkerLink};
use crate::verdict::judge;
use crate::worker::latency;
use gpu_trust_model::date::Date;
use gpu_trust_model::evidence::{
    AggressorReport, BandwidthMeasurement, Measurement, MechanismSettings, PhaseEvidence,
    ProbeEvidence, RunEvidence, Scenario, ScenarioEvidence, PROBE_SCHEMA,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// Everything a probe run needs besides the backend and the launcher.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    pub victim: DeviceSpec,
    pub aggressor: DeviceSpec,
    /// Run in [`Scenario::ALL`] order whatever the order given; duplicates are dropped.
    pub scenarios: Vec<Scenario>,
    /// Bound of each scenario, baseline and contended together.
    pub timeout: Duration,
    pub workload: Workload,
    pub thresholds: Thresholds,
    pub node: Option<String>,
    /// Set when the aggressor runs elsewhere (another pod): its device is learnt from its hello.
    pub remote_aggressor: Option<String>,
    /// What the caller knows of the run: its name, the binary's commit and SHA-256, the command line.
    /// The probe adds when it started and whether it is partial.
    pub run: RunEvidence,
    /// The mechanism's settings as the caller declares them (a client cannot see its MPS daemon's).
    pub settings: MechanismSettings,
}

/// `2026-12-04T11:37:42Z`.
pub fn utc_timestamp(t: SystemTime) -> String {
    let s = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
        % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        Date::from_system_time(t),
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// The scenarios to run, in run order.
pub fn ordered(scenarios: &[Scenario]) -> Vec<Scenario> {
    if scenarios.is_empty() {
        return Scenario::ALL.to_vec();
    }
    Scenario::ALL
        .into_iter()
        .filter(|s| scenarios.contains(s))
        .collect()
}

/// Runs the probe. Fails only when the devices cannot be detected; a scenario that fails is reported as
/// inconclusive, with the reason. `partial` gets the evidence after each scenario but the last.
pub fn run_probe(
    backend: &dyn Backend,
    launcher: &dyn Launcher,
    opts: &ProbeOptions,
    progress: &mut dyn FnMut(&str),
    partial: &mut dyn FnMut(&ProbeEvidence),
) -> Result<ProbeEvidence, ProbeError> {
    let aggressor_spec = if opts.remote_aggressor.is_some() {
        &opts.victim
    } else {
        &opts.aggressor
    };
    let mut run = opts.run.clone();
    run.started_at = Some(utc_timestamp(SystemTime::now()));
    let mut detection = backend.detect(&opts.victim, aggressor_spec)?;
    if let Some(addr) = &opts.remote_aggressor {
        detection.aggressor = gpu_trust_model::evidence::DeviceEvidence {
            spec: format!("remote {addr}"),
            ..Default::default()
        };
    }
    detection.mechanism.settings = Some(opts.settings.clone());
    let mut runner = Runner {
        backend,
        launcher,
        opts,
        hellos: BTreeMap::new(),
    };
    let evidence =
        |detection: &Detection, run: RunEvidence, scenarios: Vec<ScenarioEvidence>| ProbeEvidence {
            schema: PROBE_SCHEMA.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            node: opts.node.clone(),
            run,
            victim: detection.victim.clone(),
            aggressor: detection.aggressor.clone(),
            driver: detection.driver.clone(),
            mechanism: detection.mechanism.clone(),
            scenarios,
        };
    let order = ordered(&opts.scenarios);
    let mut scenarios = Vec::new();
    for (i, &scenario) in order.iter().enumerate() {
        let deadline = Instant::now() + opts.timeout;
        progress(&format!("{scenario}: baseline"));
        let (baseline, contended) = match scenario {
            Scenario::ComputeHog | Scenario::Bandwidth => {
                progress(&format!("{scenario}: contended, in alternating blocks"));
                runner.interleaved(scenario, deadline)
            }
            _ => {
                let baseline = runner.phase(scenario, deadline, false);
                progress(&format!("{scenario}: contended"));
                (baseline, runner.phase(scenario, deadline, true))
            }
        };
        let j = judge(scenario, &baseline, &contended, &opts.thresholds);
        progress(&format!("{scenario}: {}", j.verdict));
        scenarios.push(ScenarioEvidence {
            scenario,
            verdict: j.verdict,
            summary: j.summary,
            threshold: opts.thresholds.describe(scenario),
            baseline,
            contended,
            comparison: j.comparison,
        });
        if i + 1 < order.len() {
            let mut so_far = detection.clone();
            refine(&mut so_far, &runner.hellos);
            let run = RunEvidence {
                partial: true,
                ..run.clone()
            };
            partial(&evidence(&so_far, run, scenarios.clone()));
        }
    }
    refine(&mut detection, &runner.hellos);
    Ok(evidence(&detection, run, scenarios))
}

/// One phase's blocks as one measurement: the samples in the order taken, the percentiles and the
/// bandwidth over all of them.
fn pool(blocks: Vec<Measurement>) -> Option<Measurement> {
    let n = u32::try_from(blocks.len()).unwrap_or(u32::MAX);
    let mut out = Measurement::default();
    let (mut gpu, mut host) = (Vec::new(), Vec::new());
    let mut bandwidth: Option<BandwidthMeasurement> = None;
    for m in blocks {
        if let Some(l) = m.latency {
            gpu.extend(l.gpu_us);
            host.extend(l.host_us);
        }
        if let Some(b) = m.bandwidth {
            let all = bandwidth.get_or_insert_with(|| BandwidthMeasurement {
                buffer_mib: b.buffer_mib,
                blocks: n,
                ..BandwidthMeasurement::default()
            });
            all.passes += b.passes;
            all.pass_gpu_us.extend(b.pass_gpu_us);
            all.pass_host_us.extend(b.pass_host_us);
        }
    }
    if !host.is_empty() {
        out.latency = Some(latency(gpu, host, n));
    }
    if let Some(mut b) = bandwidth {
        let seconds = b.pass_host_us.iter().sum::<f64>() / 1e6;
        let bytes = 2.0 * b.buffer_mib as f64 * 1024.0 * 1024.0 * f64::from(b.passes);
        b.gb_per_s = if seconds > 0.0 {
            round3(bytes / seconds / 1e9)
        } else {
            0.0
        };
        out.bandwidth = Some(b);
    }
    (out != Measurement::default()).then_some(out)
}

/// Which phase a failure of the interleaved sequence belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Baseline,
    Contended,
}

/// Fills what detection could not know from the workers' own view of their devices, and re-decides the
/// mechanism from it when the two differ (a remote aggressor, or a device the parent resolved differently).
fn refine(detection: &mut Detection, hellos: &BTreeMap<Role, WorkerDevice>) {
    for (role, hello) in hellos {
        let dev = match role {
            Role::Victim => &mut detection.victim,
            Role::Aggressor => &mut detection.aggressor,
        };
        dev.name.get_or_insert_with(|| hello.name.clone());
        dev.uuid.get_or_insert_with(|| hello.uuid.clone());
        if dev.parent_uuid.is_none() {
            dev.parent_uuid = hello.parent_uuid.clone();
        }
        dev.memory_mib.get_or_insert(hello.memory_mib);
        dev.compute_capability
            .get_or_insert_with(|| hello.compute_capability.clone());
    }
    let (Some(v), Some(a)) = (hellos.get(&Role::Victim), hellos.get(&Role::Aggressor)) else {
        return;
    };
    fn ident(w: &WorkerDevice) -> RoleIdentity<'_> {
        RoleIdentity {
            uuid: Some(w.uuid.as_str()),
            parent_uuid: w.parent_uuid.as_deref(),
            is_mig: w.mig,
        }
    }
    let m = &detection.mechanism;
    let host = HostFacts {
        mps: m.mps,
        compute_mode: m.compute_mode.as_deref(),
        mig_mode: m.mig_mode,
    };
    let (kind, notes) = classify(ident(v), ident(a), host);
    if kind != detection.mechanism.kind {
        detection.mechanism.notes.push(format!(
            "the workers' own devices show {kind}, not {}: {}",
            detection.mechanism.kind,
            notes.join("; ")
        ));
        detection.mechanism.kind = kind;
    }
}

struct Runner<'a> {
    backend: &'a dyn Backend,
    launcher: &'a dyn Launcher,
    opts: &'a ProbeOptions,
    /// The first hello of each role.
    hellos: BTreeMap<Role, WorkerDevice>,
}

/// A started worker: killed (if still running) and reclaimed when dropped.
struct Handle<'a> {
    link: Box<dyn WorkerLink>,
    role: Role,
    backend: &'a dyn Backend,
    timeout: Duration,
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        self.link.kill();
        self.backend.reclaim(self.role);
    }
}

/// Why a phase of a scenario did not complete; its text becomes the phase's `error` in the evidence.
#[derive(Debug, Error)]
pub enum PhaseError {
    /// The worker could not be started.
    #[error("{role}: {source}")]
    Launch {
        role: Role,
        #[source]
        source: ProbeError,
    },
    /// A request did not reach the worker.
    #[error("{role}: {source}")]
    Send {
        role: Role,
        #[source]
        source: SendError,
    },
    /// The worker opened no device session (its first reply was `failed`).
    #[error("the {role} could not open its device: {message}")]
    NoSession { role: Role, message: String },
    /// The worker answered a request with `failed`.
    #[error("{role}: {message}")]
    Failed { role: Role, message: String },
    /// The worker answered with another reply than the one the request calls for.
    #[error("{role}: `{got}` instead of `{expected}`")]
    OutOfTurn {
        role: Role,
        got: &'static str,
        expected: &'static str,
    },
    /// No reply before the scenario's deadline.
    #[error(
        "timed out after {}s waiting for the {role}'s `{waiting_for}` reply",
        .timeout.as_secs()
    )]
    Timeout {
        role: Role,
        timeout: Duration,
        waiting_for: &'static str,
    },
    /// The worker's output ended or was not a reply; `stderr` is the last line it wrote there, if any.
    #[error(
        "the {role} ended before its `{waiting_for}` reply: {cause}{}",
        .stderr.as_deref().map(|l| format!(" (stderr: {l})")).unwrap_or_default()
    )]
    Ended {
        role: Role,
        waiting_for: &'static str,
        #[source]
        cause: LinkError,
        stderr: Option<String>,
    },
}

fn describe(
    role: Role,
    e: LinkError,
    timeout: Duration,
    diag: &str,
    waiting_for: &'static str,
) -> PhaseError {
    match e {
        LinkError::Timeout => PhaseError::Timeout {
            role,
            timeout,
            waiting_for,
        },
        cause => PhaseError::Ended {
            role,
            waiting_for,
            cause,
            stderr: (!diag.is_empty()).then(|| diag.lines().last().unwrap_or("").to_string()),
        },
    }
}

impl Handle<'_> {
    fn recv(&mut self, deadline: Instant, waiting_for: &'static str) -> Result<Reply, PhaseError> {
        match self.link.recv(deadline) {
            Ok(Reply::Failed { message }) => Err(PhaseError::Failed {
                role: self.role,
                message,
            }),
            Ok(r) => Ok(r),
            Err(e) => Err(describe(
                self.role,
                e,
                self.timeout,
                &self.link.diagnostics(),
                waiting_for,
            )),
        }
    }

    fn send(&mut self, request: &Request) -> Result<(), PhaseError> {
        self.link.send(request).map_err(|source| PhaseError::Send {
            role: self.role,
            source,
        })
    }

    fn prepare(
        &mut self,
        scenario: Scenario,
        workload: Workload,
        deadline: Instant,
    ) -> Result<(), PhaseError> {
        self.send(&Request::Prepare { scenario, workload })?;
        match self.recv(deadline, "prepared")? {
            Reply::Prepared => Ok(()),
            other => Err(PhaseError::OutOfTurn {
                role: self.role,
                got: other.name(),
                expected: "prepared",
            }),
        }
    }

    fn measure(
        &mut self,
        scenario: Scenario,
        workload: Workload,
        deadline: Instant,
    ) -> Result<Measurement, PhaseError> {
        self.send(&Request::Measure { scenario, workload })?;
        self.measured(deadline)
    }

    /// The reply to a `measure` already sent.
    fn measured(&mut self, deadline: Instant) -> Result<Measurement, PhaseError> {
        match self.recv(deadline, "measured")? {
            Reply::Measured { measurement } => Ok(*measurement),
            other => Err(PhaseError::OutOfTurn {
                role: self.role,
                got: other.name(),
                expected: "measured",
            }),
        }
    }

    fn start(
        &mut self,
        scenario: Scenario,
        workload: Workload,
        deadline: Instant,
    ) -> Result<AggressorReport, PhaseError> {
        self.send(&Request::Start { scenario, workload })?;
        match self.recv(deadline, "ready")? {
            Reply::Ready { report } => Ok(report),
            other => Err(PhaseError::OutOfTurn {
                role: self.role,
                got: other.name(),
                expected: "ready",
            }),
        }
    }

    fn stop(&mut self, deadline: Instant) -> Result<AggressorReport, PhaseError> {
        self.send(&Request::Stop)?;
        match self.recv(deadline, "stopped")? {
            Reply::Stopped { report } => Ok(report),
            other => Err(PhaseError::OutOfTurn {
                role: self.role,
                got: other.name(),
                expected: "stopped",
            }),
        }
    }

    fn finish(mut self, deadline: Instant) {
        self.link.finish(deadline);
    }
}

impl<'a> Runner<'a> {
    fn device(&self, role: Role) -> &DeviceSpec {
        match role {
            Role::Victim => &self.opts.victim,
            Role::Aggressor => &self.opts.aggressor,
        }
    }

    fn spawn(&mut self, role: Role, deadline: Instant) -> Result<Handle<'a>, PhaseError> {
        let link = self
            .launcher
            .launch(role, self.device(role))
            .map_err(|source| PhaseError::Launch { role, source })?;
        let mut handle = Handle {
            link,
            role,
            backend: self.backend,
            timeout: self.opts.timeout,
        };
        match handle.link.recv(deadline) {
            Ok(Reply::Hello { device, .. }) => {
                self.hellos.entry(role).or_insert(device);
                Ok(handle)
            }
            Ok(Reply::Failed { message }) => Err(PhaseError::NoSession { role, message }),
            Ok(other) => Err(PhaseError::OutOfTurn {
                role,
                got: other.name(),
                expected: "hello",
            }),
            Err(e) => Err(describe(
                role,
                e,
                self.opts.timeout,
                &handle.link.diagnostics(),
                "hello",
            )),
        }
    }

    fn phase(&mut self, scenario: Scenario, deadline: Instant, contended: bool) -> PhaseEvidence {
        let mut phase = PhaseEvidence::default();
        let result = if contended {
            self.contended(scenario, deadline, &mut phase)
        } else {
            self.baseline(scenario, deadline, &mut phase)
        };
        if let Err(e) = result {
            phase.error = Some(e.to_string());
        }
        phase
    }

    fn baseline(
        &mut self,
        s: Scenario,
        deadline: Instant,
        phase: &mut PhaseEvidence,
    ) -> Result<(), PhaseError> {
        let w = self.opts.workload;
        let mut v = self.spawn(Role::Victim, deadline)?;
        v.prepare(s, w, deadline)?;
        if s == Scenario::Utilisation {
            let (mut ms, util) = self.measure_sampled(&mut [&mut v], s, deadline)?;
            phase.victim = ms.pop();
            phase.nvml_gpu_utilisation_percent = util;
        } else {
            phase.victim = Some(v.measure(s, w, deadline)?);
        }
        v.finish(deadline);
        Ok(())
    }

    /// Both phases of a scenario measured in alternating blocks by one victim and one aggressor.
    fn interleaved(&mut self, s: Scenario, deadline: Instant) -> (PhaseEvidence, PhaseEvidence) {
        let (mut baseline, mut contended) = (PhaseEvidence::default(), PhaseEvidence::default());
        let (mut b, mut c) = (Vec::new(), Vec::new());
        let mut report: Option<AggressorReport> = None;
        if let Err((side, e)) = self.blocks(s, deadline, &mut b, &mut c, &mut report) {
            let phase = match side {
                Side::Baseline => &mut baseline,
                Side::Contended => &mut contended,
            };
            phase.error = Some(e.to_string());
        }
        baseline.victim = pool(b);
        contended.victim = pool(c);
        contended.aggressor = report;
        (baseline, contended)
    }

    fn blocks(
        &mut self,
        s: Scenario,
        deadline: Instant,
        b: &mut Vec<Measurement>,
        c: &mut Vec<Measurement>,
        report: &mut Option<AggressorReport>,
    ) -> Result<(), (Side, PhaseError)> {
        let w = self.opts.workload;
        let on = |side| move |e| (side, e);
        let mut v = self
            .spawn(Role::Victim, deadline)
            .map_err(on(Side::Baseline))?;
        v.prepare(s, w, deadline).map_err(on(Side::Baseline))?;
        let mut a = self
            .spawn(Role::Aggressor, deadline)
            .map_err(on(Side::Contended))?;
        for round in 0..w.rounds.max(1) {
            let order = if round % 2 == 0 {
                [Side::Baseline, Side::Contended]
            } else {
                [Side::Contended, Side::Baseline]
            };
            for side in order {
                if side == Side::Baseline {
                    b.push(v.measure(s, w, deadline).map_err(on(side))?);
                    continue;
                }
                a.start(s, w, deadline).map_err(on(side))?;
                c.push(v.measure(s, w, deadline).map_err(on(side))?);
                let stopped = a.stop(deadline).map_err(on(side))?;
                let all = report.get_or_insert_with(AggressorReport::default);
                all.kernels_completed = Some(
                    all.kernels_completed.unwrap_or(0) + stopped.kernels_completed.unwrap_or(0),
                );
                all.bandwidth_gb_per_s = stopped.bandwidth_gb_per_s.or(all.bandwidth_gb_per_s);
            }
        }
        a.finish(deadline);
        v.finish(deadline);
        Ok(())
    }

    fn contended(
        &mut self,
        s: Scenario,
        deadline: Instant,
        phase: &mut PhaseEvidence,
    ) -> Result<(), PhaseError> {
        let w = self.opts.workload;
        match s {
            Scenario::DeviceFaultBusy => {
                let mut v = self.spawn(Role::Victim, deadline)?;
                v.prepare(s, w, deadline)?;
                let mut a = self.spawn(Role::Aggressor, deadline)?;
                // The victim's busy window opens when it reads `measure`; the fault comes a quarter of
                // the way into it.
                v.send(&Request::Measure {
                    scenario: s,
                    workload: w,
                })?;
                std::thread::sleep(
                    Duration::from_millis(w.fault_busy_ms / 4)
                        .min(deadline.saturating_duration_since(Instant::now())),
                );
                phase.aggressor = Some(a.start(s, w, deadline)?);
                phase.victim = Some(v.measured(deadline)?);
                phase.aggressor = Some(a.stop(deadline)?);
                a.finish(deadline);
                v.finish(deadline);
            }
            Scenario::ResidualData => {
                let mut a = self.spawn(Role::Aggressor, deadline)?;
                phase.aggressor = Some(a.start(s, w, deadline)?);
                phase.aggressor = Some(a.stop(deadline)?);
                // The aggressor exits and is reaped before the victim allocates.
                a.finish(deadline);
                let mut v = self.spawn(Role::Victim, deadline)?;
                v.prepare(s, w, deadline)?;
                phase.victim = Some(v.measure(s, w, deadline)?);
                v.finish(deadline);
            }
            Scenario::Utilisation => {
                let mut v = self.spawn(Role::Victim, deadline)?;
                let mut a = self.spawn(Role::Aggressor, deadline)?;
                v.prepare(s, w, deadline)?;
                a.prepare(s, w, deadline)?;
                let (ms, util) = self.measure_sampled(&mut [&mut v, &mut a], s, deadline)?;
                let mut ms = ms.into_iter();
                phase.victim = ms.next();
                phase.peer = ms.next();
                phase.nvml_gpu_utilisation_percent = util;
                v.finish(deadline);
                a.finish(deadline);
            }
            _ => {
                let mut v = self.spawn(Role::Victim, deadline)?;
                v.prepare(s, w, deadline)?;
                let mut a = self.spawn(Role::Aggressor, deadline)?;
                phase.aggressor = Some(a.start(s, w, deadline)?);
                phase.victim = Some(v.measure(s, w, deadline)?);
                phase.aggressor = Some(a.stop(deadline)?);
                a.finish(deadline);
                v.finish(deadline);
            }
        }
        Ok(())
    }

    /// Sends `measure` to every handle, waits for all of them, and samples utilisation meanwhile (after
    /// the first quarter of the measuring window, so that start-up does not count).
    fn measure_sampled(
        &self,
        handles: &mut [&mut Handle<'a>],
        s: Scenario,
        deadline: Instant,
    ) -> Result<(Vec<Measurement>, Option<f64>), PhaseError> {
        let w = self.opts.workload;
        for h in handles.iter_mut() {
            h.send(&Request::Measure {
                scenario: s,
                workload: w,
            })?;
        }
        let started = Instant::now();
        let settle = Duration::from_millis(w.utilisation_ms / 4);
        let poll = Duration::from_millis((w.utilisation_ms / 10).clamp(5, 100));
        let mut results: Vec<Option<Measurement>> = vec![None; handles.len()];
        let mut samples = Vec::new();
        while results.iter().any(Option::is_none) {
            for (i, h) in handles.iter_mut().enumerate() {
                if results[i].is_some() {
                    continue;
                }
                let poll_until = Instant::now() + poll;
                match h.link.recv(deadline.min(poll_until)) {
                    Ok(Reply::Measured { measurement }) => results[i] = Some(*measurement),
                    Ok(Reply::Failed { message }) => {
                        return Err(PhaseError::Failed {
                            role: h.role,
                            message,
                        })
                    }
                    Ok(other) => {
                        return Err(PhaseError::OutOfTurn {
                            role: h.role,
                            got: other.name(),
                            expected: "measured",
                        })
                    }
                    Err(LinkError::Timeout) if Instant::now() < deadline => {}
                    Err(e) => {
                        return Err(describe(
                            h.role,
                            e,
                            h.timeout,
                            &h.link.diagnostics(),
                            "measured",
                        ))
                    }
                }
            }
            if started.elapsed() >= settle {
                if let Some(u) = self.backend.sample_utilisation(&self.opts.victim) {
                    samples.push(u);
                }
            }
        }
        let mean = (!samples.is_empty())
            .then(|| round3(samples.iter().sum::<f64>() / samples.len() as f64));
        Ok((results.into_iter().flatten().collect(), mean))
    }
}
