//! The worker: what one probe process does with its session, request by request.
//!
//! The same code serves a worker process (requests from standard input, replies to standard output) and
//! an in-process worker thread in tests; only the channel ends differ.

use crate::device::{BufferId, GpuSession, Pattern};
use crate::error::DeviceError;
use crate::protocol::{LineError, Reply, Request};
use crate::stats::{quantile, round3};
use crate::thresholds::{Workload, MARKER, VICTIM_SEED};
use gpu_trust_model::evidence::{
    AggressorReport, BandwidthMeasurement, FaultMeasurement, LatencyMeasurement, Measurement,
    MemoryMeasurement, ResidueMeasurement, Scenario, ThroughputMeasurement,
};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const MIB: u64 = 1024 * 1024;
/// Hog kernels launched per batch between two looks at the request channel.
const HOG_BATCH: u32 = 4;
/// Copy passes per batch of the aggressor's copy loop.
const COPY_BATCH: u32 = 4;
/// Work kernels per batch of the utilisation loop.
const WORK_BATCH: u32 = 8;

/// What arrives from the parent: a request, or a line that was not one.
pub type Incoming = Result<Request, LineError>;

/// Serves requests until `exit`, a closed channel or a closed reply sink. `opened` is the session the
/// worker could (or could not) open; a worker without a session says `failed` and ends.
pub fn serve(
    opened: Result<Box<dyn GpuSession>, DeviceError>,
    requests: &Receiver<Incoming>,
    reply: &mut dyn FnMut(&Reply) -> bool,
) {
    let mut session = match opened {
        Ok(s) => s,
        Err(e) => {
            reply(&Reply::Failed {
                message: e.to_string(),
            });
            return;
        }
    };
    let hello = Reply::Hello {
        pid: std::process::id(),
        device: session.identity(),
    };
    if !reply(&hello) {
        return;
    }
    let mut worker = Worker {
        session: session.as_mut(),
        held: Vec::new(),
    };
    while let Ok(incoming) = requests.recv() {
        let request = match incoming {
            Ok(r) => r,
            Err(e) => {
                reply(&Reply::Failed {
                    message: e.to_string(),
                });
                break;
            }
        };
        let answer = match request {
            Request::Exit => break,
            Request::Stop => Reply::Failed {
                message: "stop without start".into(),
            },
            Request::Prepare { scenario, workload } => match worker.prepare(scenario, &workload) {
                Ok(()) => Reply::Prepared,
                Err(e) => Reply::Failed {
                    message: format!("prepare {scenario}: {e}"),
                },
            },
            Request::Measure { scenario, workload } => match worker.measure(scenario, &workload) {
                Ok(measurement) => Reply::Measured {
                    measurement: Box::new(measurement),
                },
                Err(e) => Reply::Failed {
                    message: format!("measure {scenario}: {e}"),
                },
            },
            Request::Start { scenario, workload } => {
                match worker.aggress(scenario, &workload, requests, reply) {
                    Ok(Some(report)) => Reply::Stopped { report },
                    // The parent went away or asked the worker to exit mid-aggression.
                    Ok(None) => break,
                    Err(e) => Reply::Failed {
                        message: format!("aggressor {scenario}: {e}"),
                    },
                }
            }
        };
        if !reply(&answer) {
            break;
        }
    }
    worker.release();
}

struct Worker<'a> {
    session: &'a mut dyn GpuSession,
    /// Buffers a victim holds between `prepare` and `measure`.
    held: Vec<(BufferId, u64)>,
}

/// Whether the aggressor should keep going.
enum Poll {
    Continue,
    Stop,
    /// Exit requested or the parent is gone.
    Gone,
    Protocol(String),
}

fn poll(requests: &Receiver<Incoming>) -> Poll {
    match requests.try_recv() {
        Ok(Ok(Request::Stop)) => Poll::Stop,
        Ok(Ok(Request::Exit)) | Err(TryRecvError::Disconnected) => Poll::Gone,
        Ok(Ok(other)) => Poll::Protocol(format!("unexpected {other:?} while the aggressor runs")),
        Ok(Err(e)) => Poll::Protocol(e.to_string()),
        Err(TryRecvError::Empty) => Poll::Continue,
    }
}

fn wait_for_stop(requests: &Receiver<Incoming>) -> Poll {
    match requests.recv() {
        Ok(Ok(Request::Stop)) => Poll::Stop,
        Ok(Ok(Request::Exit)) | Err(_) => Poll::Gone,
        Ok(Ok(other)) => Poll::Protocol(format!("unexpected {other:?} while the aggressor holds")),
        Ok(Err(e)) => Poll::Protocol(e.to_string()),
    }
}

fn words(bytes: u64) -> u64 {
    bytes / 8
}

/// Wall-clock milliseconds since the Unix epoch: the one clock both roles' processes share.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// How many of `per_phase` one block takes: the phase is measured in `w.rounds` blocks.
fn per_block(per_phase: u32, w: &Workload) -> u32 {
    per_phase.max(1).div_ceil(w.rounds.max(1))
}

fn micros(d: Duration) -> f64 {
    round3(d.as_secs_f64() * 1e6)
}

impl Worker<'_> {
    fn release(&mut self) {
        for (b, _) in std::mem::take(&mut self.held) {
            let _ = self.session.free(b);
        }
    }

    fn prepare(&mut self, scenario: Scenario, w: &Workload) -> Result<(), DeviceError> {
        self.release();
        match scenario {
            Scenario::MemoryExhaustion | Scenario::DeviceFault | Scenario::DeviceFaultBusy => {
                let bytes = w.working_set_mib * MIB;
                let b = self.session.alloc(bytes)?;
                self.held.push((b, bytes));
                self.session.fill(b, Pattern::Sequence(VICTIM_SEED))?;
                self.session.short_kernel(w.short_kernel_iters)?;
            }
            Scenario::ComputeHog => {
                for _ in 0..10 {
                    self.session.short_kernel(w.short_kernel_iters)?;
                }
            }
            Scenario::Bandwidth => {
                let bytes = w.bandwidth_buffer_mib * MIB;
                let src = self.session.alloc(bytes)?;
                self.held.push((src, bytes));
                let dst = self.session.alloc(bytes)?;
                self.held.push((dst, bytes));
                self.session.fill(src, Pattern::Sequence(VICTIM_SEED))?;
                self.session.copy(src, dst, 1)?;
            }
            Scenario::ResidualData => {}
            Scenario::Utilisation => {
                self.session.work(w.work_kernel_iters, 1)?;
            }
        }
        Ok(())
    }

    fn held(&self, i: usize) -> Result<(BufferId, u64), DeviceError> {
        self.held
            .get(i)
            .copied()
            .ok_or_else(|| DeviceError::Driver("measure before prepare".into()))
    }

    fn measure(&mut self, scenario: Scenario, w: &Workload) -> Result<Measurement, DeviceError> {
        let mut m = Measurement::default();
        match scenario {
            Scenario::MemoryExhaustion => {
                let (held, held_bytes) = self.held(0)?;
                let free_mib = self.session.mem_info().ok().map(|(free, _)| free / MIB);
                let (allocation_ok, allocation_error) =
                    match self.session.alloc(w.working_set_mib * MIB) {
                        Ok(b) => {
                            let _ = self.session.free(b);
                            (true, None)
                        }
                        Err(e) => (false, Some(e.to_string())),
                    };
                let intact = self.session.count(held, Pattern::Sequence(VICTIM_SEED))?;
                m.memory = Some(MemoryMeasurement {
                    working_set_mib: w.working_set_mib,
                    allocation_ok,
                    allocation_error,
                    checksum_intact: intact == words(held_bytes),
                    free_mib,
                });
            }
            Scenario::ComputeHog => {
                // One block: up to its share of the phase's samples, for at most `block_ms`.
                let n = per_block(w.latency_samples, w);
                let until = Instant::now() + Duration::from_millis(w.block_ms.max(1));
                let (mut gpu_us, mut host_us) = (Vec::new(), Vec::new());
                while gpu_us.len() < n as usize && (gpu_us.is_empty() || Instant::now() < until) {
                    let t = self.session.short_kernel(w.short_kernel_iters)?;
                    gpu_us.push(micros(t.gpu));
                    host_us.push(micros(t.host));
                }
                m.latency = Some(latency(gpu_us, host_us, 1));
            }
            Scenario::Bandwidth => {
                let (src, bytes) = self.held(0)?;
                let (dst, _) = self.held(1)?;
                let n = per_block(w.bandwidth_passes, w);
                let until = Instant::now() + Duration::from_millis(w.block_ms.max(1));
                let (mut gpu_us, mut host_us) = (Vec::new(), Vec::new());
                let mut took = Duration::ZERO;
                while gpu_us.len() < n as usize && (gpu_us.is_empty() || Instant::now() < until) {
                    let t = self.session.copy(src, dst, 1)?;
                    took += t.host;
                    gpu_us.push(micros(t.gpu));
                    host_us.push(micros(t.host));
                }
                let passes = gpu_us.len() as u32;
                m.bandwidth = Some(BandwidthMeasurement {
                    gb_per_s: gb_per_s(2 * bytes * u64::from(passes), took),
                    buffer_mib: bytes / MIB,
                    passes,
                    pass_gpu_us: gpu_us,
                    pass_host_us: host_us,
                    blocks: 1,
                });
            }
            Scenario::DeviceFaultBusy => {
                // Work kernels back to back for `fault_busy_ms` while the neighbour faults, then the
                // same check as when idle.
                let (held, held_bytes) = self.held(0)?;
                let from = now_ms();
                let until = Instant::now() + Duration::from_millis(w.fault_busy_ms.max(1));
                let mut kernels = 0u64;
                let mut error = None;
                while Instant::now() < until {
                    match self.session.work(w.work_kernel_iters, WORK_BATCH) {
                        Ok(_) => kernels += u64::from(WORK_BATCH),
                        Err(e) => {
                            error = Some(e.to_string());
                            break;
                        }
                    }
                }
                let mut f = self.check_context(held, held_bytes, w, error);
                f.busy = true;
                f.busy_kernels = Some(kernels);
                f.busy_from_ms = Some(from);
                f.busy_until_ms = Some(now_ms());
                m.fault = Some(f);
            }
            Scenario::DeviceFault => {
                let (held, held_bytes) = self.held(0)?;
                m.fault = Some(self.check_context(held, held_bytes, w, None));
            }
            Scenario::ResidualData => {
                let free_mib = self.session.mem_info()?.0 / MIB;
                let buffers = grab(self.session, w.residual_max_mib, w.grab_chunk_mib)?;
                let mut marker_words = 0;
                let mut scanned = 0;
                let mut failure = None;
                for &(b, bytes) in &buffers {
                    match self.session.count(b, Pattern::Constant(MARKER)) {
                        Ok(n) => {
                            marker_words += n;
                            scanned += bytes;
                        }
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    }
                }
                for (b, _) in buffers {
                    let _ = self.session.free(b);
                }
                if let Some(e) = failure {
                    return Err(e);
                }
                m.residue = Some(ResidueMeasurement {
                    scanned_mib: scanned / MIB,
                    marker_words,
                    free_mib: Some(free_mib),
                });
            }
            Scenario::Utilisation => {
                let target = Duration::from_millis(w.utilisation_ms.max(1));
                let mut took = Duration::ZERO;
                let mut kernels: u64 = 0;
                while took < target {
                    took += self.session.work(w.work_kernel_iters, WORK_BATCH)?;
                    kernels += u64::from(WORK_BATCH);
                }
                let seconds = took.as_secs_f64();
                m.throughput = Some(ThroughputMeasurement {
                    kernels_per_s: if seconds > 0.0 {
                        round3(kernels as f64 / seconds)
                    } else {
                        0.0
                    },
                    seconds: round3(seconds),
                });
            }
        }
        Ok(m)
    }

    /// Whether the context still runs a kernel and the held buffer kept its pattern; `error` is one
    /// already met.
    fn check_context(
        &mut self,
        held: BufferId,
        held_bytes: u64,
        w: &Workload,
        mut error: Option<String>,
    ) -> FaultMeasurement {
        let next_kernel_ok = match self.session.short_kernel(w.short_kernel_iters) {
            Ok(_) => true,
            Err(e) => {
                error.get_or_insert(e.to_string());
                false
            }
        };
        let checksum_intact = match self.session.count(held, Pattern::Sequence(VICTIM_SEED)) {
            Ok(n) => n == words(held_bytes),
            Err(e) => {
                error.get_or_insert(e.to_string());
                false
            }
        };
        FaultMeasurement {
            context_survived: error.is_none() && next_kernel_ok && checksum_intact,
            next_kernel_ok,
            checksum_intact,
            error,
            ..FaultMeasurement::default()
        }
    }

    /// Runs the aggression of a scenario: `ready` once it is in force, then holds or loops until `stop`.
    /// `Ok(None)` when the parent asked to exit or went away.
    fn aggress(
        &mut self,
        scenario: Scenario,
        w: &Workload,
        requests: &Receiver<Incoming>,
        reply: &mut dyn FnMut(&Reply) -> bool,
    ) -> Result<Option<AggressorReport>, DeviceError> {
        let mut report = AggressorReport::default();
        let mut buffers: Vec<(BufferId, u64)> = Vec::new();
        let outcome = (|| -> Result<Poll, DeviceError> {
            match scenario {
                Scenario::MemoryExhaustion => {
                    let (_, total) = self.session.mem_info()?;
                    buffers = grab(self.session, total / MIB, w.grab_chunk_mib)?;
                    report.allocated_mib = Some(buffers.iter().map(|b| b.1).sum::<u64>() / MIB);
                    if !reply(&Reply::Ready {
                        report: report.clone(),
                    }) {
                        return Ok(Poll::Gone);
                    }
                    Ok(wait_for_stop(requests))
                }
                Scenario::ComputeHog => {
                    let ns = w.hog_kernel_ms.max(1) * 1_000_000;
                    let mut kernels: u64 = 0;
                    self.session.hog(ns, 1)?;
                    kernels += 1;
                    report.kernels_completed = Some(kernels);
                    if !reply(&Reply::Ready {
                        report: report.clone(),
                    }) {
                        return Ok(Poll::Gone);
                    }
                    loop {
                        self.session.hog(ns, HOG_BATCH)?;
                        kernels += u64::from(HOG_BATCH);
                        report.kernels_completed = Some(kernels);
                        match poll(requests) {
                            Poll::Continue => {}
                            other => return Ok(other),
                        }
                    }
                }
                Scenario::Bandwidth => {
                    let (free, _) = self.session.mem_info()?;
                    let bytes = (w.aggressor_copy_buffer_mib * MIB).min(free / 4).max(MIB);
                    let src = self.session.alloc(bytes)?;
                    buffers.push((src, bytes));
                    let dst = self.session.alloc(bytes)?;
                    buffers.push((dst, bytes));
                    self.session.fill(src, Pattern::Constant(0))?;
                    let mut took = self.session.copy(src, dst, 1)?.host;
                    let mut passes: u64 = 1;
                    report.kernels_completed = Some(passes);
                    report.bandwidth_gb_per_s = Some(gb_per_s(2 * bytes * passes, took));
                    if !reply(&Reply::Ready {
                        report: report.clone(),
                    }) {
                        return Ok(Poll::Gone);
                    }
                    loop {
                        took += self.session.copy(src, dst, COPY_BATCH)?.host;
                        passes += u64::from(COPY_BATCH);
                        report.kernels_completed = Some(passes);
                        report.bandwidth_gb_per_s = Some(gb_per_s(2 * bytes * passes, took));
                        match poll(requests) {
                            Poll::Continue => {}
                            other => return Ok(other),
                        }
                    }
                }
                Scenario::DeviceFault | Scenario::DeviceFaultBusy => {
                    report.fault_at_ms = Some(now_ms());
                    match self.session.fault() {
                        Ok(()) => report.fault_raised = Some(false),
                        Err(e) => {
                            report.fault_raised = Some(true);
                            report.fault_error = Some(e.to_string());
                        }
                    }
                    if !reply(&Reply::Ready {
                        report: report.clone(),
                    }) {
                        return Ok(Poll::Gone);
                    }
                    Ok(wait_for_stop(requests))
                }
                Scenario::ResidualData => {
                    let filled = grab(self.session, w.residual_max_mib, w.grab_chunk_mib)?;
                    buffers = filled;
                    for &(b, _) in &buffers {
                        self.session.fill(b, Pattern::Constant(MARKER))?;
                    }
                    report.allocated_mib = Some(buffers.iter().map(|b| b.1).sum::<u64>() / MIB);
                    for (b, _) in std::mem::take(&mut buffers) {
                        self.session.free(b)?;
                    }
                    if !reply(&Reply::Ready {
                        report: report.clone(),
                    }) {
                        return Ok(Poll::Gone);
                    }
                    Ok(wait_for_stop(requests))
                }
                Scenario::Utilisation => Err(DeviceError::Driver(
                    "utilisation has no aggressor: both processes measure".into(),
                )),
            }
        })();
        for (b, _) in buffers {
            let _ = self.session.free(b);
        }
        self.session.idle();
        match outcome? {
            Poll::Stop | Poll::Continue => Ok(Some(report)),
            Poll::Gone => Ok(None),
            Poll::Protocol(e) => Err(DeviceError::Driver(e)),
        }
    }
}

/// Allocates as much as it can, up to `max_mib`: chunks of `chunk_mib`, halved on each out-of-memory
/// down to 1 MiB.
fn grab(
    session: &mut dyn GpuSession,
    max_mib: u64,
    chunk_mib: u64,
) -> Result<Vec<(BufferId, u64)>, DeviceError> {
    let max = max_mib.saturating_mul(MIB);
    let mut chunk = chunk_mib.max(1).saturating_mul(MIB);
    let mut total = 0u64;
    let mut out = Vec::new();
    while total < max && chunk >= MIB {
        let size = chunk.min(max - total);
        match session.alloc(size) {
            Ok(b) => {
                out.push((b, size));
                total += size;
            }
            Err(e) if e.is_out_of_memory() => chunk /= 2,
            Err(e) => {
                for (b, _) in out {
                    let _ = session.free(b);
                }
                return Err(e);
            }
        }
    }
    Ok(out)
}

fn gb_per_s(bytes: u64, took: Duration) -> f64 {
    let s = took.as_secs_f64();
    if s > 0.0 {
        round3(bytes as f64 / s / 1e9)
    } else {
        0.0
    }
}

/// One block's latency samples (microseconds, in the order taken), with the host-timed percentiles.
pub fn latency(gpu_us: Vec<f64>, host_us: Vec<f64>, blocks: u32) -> LatencyMeasurement {
    let mut sorted = host_us.clone();
    sorted.sort_by(f64::total_cmp);
    let q = |q| quantile(&sorted, q).map(round3).unwrap_or(0.0);
    LatencyMeasurement {
        samples: u32::try_from(host_us.len()).unwrap_or(u32::MAX),
        p50_us: q(0.5),
        p99_us: q(0.99),
        max_us: q(1.0),
        gpu_us,
        host_us,
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_percentiles_keep_the_samples_in_order() {
        let host: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let l = latency(vec![1.0; 100], host.clone(), 1);
        assert_eq!(l.samples, 100);
        assert_eq!((l.p50_us, l.p99_us, l.max_us), (50.0, 99.0, 100.0));
        assert_eq!(l.host_us, host, "the samples stay in the order taken");
        assert_eq!(latency(Vec::new(), Vec::new(), 0).p99_us, 0.0);
    }

    #[test]
    fn a_phase_is_measured_in_blocks_of_its_share() {
        let w = crate::thresholds::DEFAULT_WORKLOAD;
        assert_eq!(per_block(10_000, &w), 2_500);
        assert_eq!(per_block(1_001, &w), 251);
        assert_eq!(per_block(0, &w), 1);
    }
}
