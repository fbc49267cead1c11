//! The worker: what one probe process does with its session, request by request.
//!
//! The same code serves a worker process (requests from standard input, replies to standard output) and
//! an in-process worker thread in tests; only the channel ends differ.

use crate::device::{BufferId, GpuSession, Pattern};
use crate::error::DeviceError;
use crate::protocol::{LineError, Reply, Request};
use crate::thresholds::{Workload, MARKER, VICTIM_SEED};
use crate::verdict::round3;
use gpu_trust_model::evidence::{
    AggressorReport, BandwidthMeasurement, FaultMeasurement, LatencyMeasurement, Measurement,
    MemoryMeasurement, ResidueMeasurement, Scenario, ThroughputMeasurement,
};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

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
                Ok(measurement) => Reply::Measured { measurement },
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

impl Worker<'_> {
    fn release(&mut self) {
        for (b, _) in std::mem::take(&mut self.held) {
            let _ = self.session.free(b);
        }
    }

    fn prepare(&mut self, scenario: Scenario, w: &Workload) -> Result<(), DeviceError> {
        self.release();
        match scenario {
            Scenario::MemoryExhaustion | Scenario::DeviceFault => {
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
                let n = w.latency_samples.max(1);
                let mut us = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    us.push(
                        self.session
                            .short_kernel(w.short_kernel_iters)?
                            .as_secs_f64()
                            * 1e6,
                    );
                }
                m.latency = Some(latency(&mut us));
            }
            Scenario::Bandwidth => {
                let (src, bytes) = self.held(0)?;
                let (dst, _) = self.held(1)?;
                let passes = w.bandwidth_passes.max(1);
                let took = self.session.copy(src, dst, passes)?;
                m.bandwidth = Some(BandwidthMeasurement {
                    gb_per_s: gb_per_s(2 * bytes * u64::from(passes), took),
                    buffer_mib: bytes / MIB,
                    passes,
                });
            }
            Scenario::DeviceFault => {
                let (held, held_bytes) = self.held(0)?;
                let mut error = None;
                let next_kernel_ok = match self.session.short_kernel(w.short_kernel_iters) {
                    Ok(_) => true,
                    Err(e) => {
                        error = Some(e.to_string());
                        false
                    }
                };
                let checksum_intact = match self.session.count(held, Pattern::Sequence(VICTIM_SEED))
                {
                    Ok(n) => n == words(held_bytes),
                    Err(e) => {
                        error.get_or_insert(e.to_string());
                        false
                    }
                };
                m.fault = Some(FaultMeasurement {
                    context_survived: next_kernel_ok && checksum_intact,
                    next_kernel_ok,
                    checksum_intact,
                    error,
                });
            }
            Scenario::ResidualData => {
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
                    let mut took = self.session.copy(src, dst, 1)?;
                    let mut passes: u64 = 1;
                    report.kernels_completed = Some(passes);
                    report.bandwidth_gb_per_s = Some(gb_per_s(2 * bytes * passes, took));
                    if !reply(&Reply::Ready {
                        report: report.clone(),
                    }) {
                        return Ok(Poll::Gone);
                    }
                    loop {
                        took += self.session.copy(src, dst, COPY_BATCH)?;
                        passes += u64::from(COPY_BATCH);
                        report.kernels_completed = Some(passes);
                        report.bandwidth_gb_per_s = Some(gb_per_s(2 * bytes * passes, took));
                        match poll(requests) {
                            Poll::Continue => {}
                            other => return Ok(other),
                        }
                    }
                }
                Scenario::DeviceFault => {
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

/// Nearest-rank percentiles of the samples (microseconds).
pub fn latency(us: &mut [f64]) -> LatencyMeasurement {
    us.sort_by(f64::total_cmp);
    let rank = |q: f64| -> f64 {
        if us.is_empty() {
            return 0.0;
        }
        let idx = ((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1;
        us[idx]
    };
    LatencyMeasurement {
        samples: us.len() as u32,
        p50_us: round3(rank(0.50)),
        p99_us: round3(rank(0.99)),
        max_us: round3(us.last().copied().unwrap_or(0.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        v.reverse();
        let l = latency(&mut v);
        assert_eq!(l.samples, 100);
        assert_eq!(l.p50_us, 50.0);
        assert_eq!(l.p99_us, 99.0);
        assert_eq!(l.max_us, 100.0);
        assert_eq!(latency(&mut []).p99_us, 0.0);
    }
}
