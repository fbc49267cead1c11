//! A fake device for tests: it behaves like a GPU shared under a given mechanism, without one.
//!
//! The fake keeps its state in a directory that every fake session of a run shares, so that two worker
//! processes (or threads) see each other as two tenants of one GPU would: a victim's allocation fails when
//! the aggressor holds a shared pool; its kernels slow down while the aggressor is active; a fault spreads
//! to it when the profile propagates faults; freed marker memory reappears in its fresh allocations when
//! the profile does not scrub. Durations are simulated (deterministic), not measured.
//!
//! Nothing here is a measurement: evidence from the fake says so in its mechanism notes.

use crate::device::{
    Backend, BufferId, Detection, DeviceSpec, GpuSession, Pattern, Role, Timing, WorkerDevice,
};
use crate::error::{DeviceError, ProbeError};
use crate::thresholds::MARKER;
use gpu_trust_model::evidence::{
    DeviceEvidence, DriverEvidence, MeasuredMechanism, MechanismEvidence,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MIB: u64 = 1024 * 1024;

/// How the fake divides device memory between the two roles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FakeMemory {
    /// One pool for both (time-slicing, MPS without a limit).
    SharedPool,
    /// Each role has half of the device to itself (MIG instances).
    Partitioned,
    /// One pool, each client capped at this many MiB (MPS pinned device memory limit).
    Capped(u64),
}

/// Where an illegal memory access in one role is felt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FakeFault {
    /// Only in the faulting context.
    Contained,
    /// In every context on the device (MPS server FAULT).
    Propagates,
}

/// The behaviour of one simulated mechanism.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeProfile {
    pub name: &'static str,
    pub mechanism: MeasuredMechanism,
    pub total_mib: u64,
    pub memory: FakeMemory,
    pub fault: FakeFault,
    /// Factor on the victim's kernel latency while the other role is active.
    pub compute_slowdown: f64,
    /// Whether that slowdown shows on the GPU's clock too (both run at once, as under MPS), or only on
    /// the host's (the victim waits for the other's time slice, then runs at full speed).
    pub contention_on_gpu: bool,
    /// Share of its bandwidth the victim keeps while the other role is active.
    pub bandwidth_share: f64,
    /// Share of its throughput each process keeps while the other is active.
    pub throughput_share: f64,
    pub bandwidth_gb_per_s: f64,
    /// Freed memory is cleared before another context gets it.
    pub scrub_on_free: bool,
    /// What the parent's utilisation sampler reports (`None`: the driver reports none, as for MIG).
    pub nvml_utilisation: Option<f64>,
    /// The aggressor blocks this long in its first device call after the hello.
    pub aggressor_hang_ms: Option<u64>,
    /// The aggressor cannot open a context.
    pub aggressor_open_error: Option<&'static str>,
}

/// The profiles tests and `--fake NAME` choose from. The numbers are illustrative, chosen to sit clearly on
/// one side of each threshold; they are not measurements of any GPU.
pub const PROFILES: &[FakeProfile] = &[
    FakeProfile {
        name: "time-slicing",
        mechanism: MeasuredMechanism::TimeSlicing,
        total_mib: 16_384,
        memory: FakeMemory::SharedPool,
        fault: FakeFault::Contained,
        compute_slowdown: 4.0,
        contention_on_gpu: false,
        bandwidth_share: 0.5,
        throughput_share: 0.5,
        bandwidth_gb_per_s: 2000.0,
        scrub_on_free: true,
        nvml_utilisation: Some(100.0),
        aggressor_hang_ms: None,
        aggressor_open_error: None,
    },
    FakeProfile {
        name: "mps",
        mechanism: MeasuredMechanism::Mps,
        total_mib: 16_384,
        memory: FakeMemory::Capped(8192),
        fault: FakeFault::Propagates,
        compute_slowdown: 1.6,
        contention_on_gpu: true,
        bandwidth_share: 0.55,
        throughput_share: 0.6,
        bandwidth_gb_per_s: 2000.0,
        scrub_on_free: true,
        nvml_utilisation: Some(100.0),
        aggressor_hang_ms: None,
        aggressor_open_error: None,
    },
    FakeProfile {
        name: "mig",
        mechanism: MeasuredMechanism::Mig,
        total_mib: 16_384,
        memory: FakeMemory::Partitioned,
        fault: FakeFault::Contained,
        compute_slowdown: 1.0,
        contention_on_gpu: true,
        bandwidth_share: 1.0,
        throughput_share: 1.0,
        bandwidth_gb_per_s: 1000.0,
        scrub_on_free: true,
        nvml_utilisation: None,
        aggressor_hang_ms: None,
        aggressor_open_error: None,
    },
    FakeProfile {
        name: "no-scrub",
        mechanism: MeasuredMechanism::TimeSlicing,
        total_mib: 16_384,
        memory: FakeMemory::SharedPool,
        fault: FakeFault::Contained,
        compute_slowdown: 4.0,
        contention_on_gpu: false,
        bandwidth_share: 0.5,
        throughput_share: 0.5,
        bandwidth_gb_per_s: 2000.0,
        scrub_on_free: false,
        nvml_utilisation: Some(100.0),
        aggressor_hang_ms: None,
        aggressor_open_error: None,
    },
    FakeProfile {
        name: "hang",
        mechanism: MeasuredMechanism::TimeSlicing,
        total_mib: 16_384,
        memory: FakeMemory::SharedPool,
        fault: FakeFault::Contained,
        compute_slowdown: 4.0,
        contention_on_gpu: false,
        bandwidth_share: 0.5,
        throughput_share: 0.5,
        bandwidth_gb_per_s: 2000.0,
        scrub_on_free: true,
        nvml_utilisation: Some(100.0),
        aggressor_hang_ms: Some(5_000),
        aggressor_open_error: None,
    },
    FakeProfile {
        name: "exclusive-process",
        mechanism: MeasuredMechanism::ExclusiveProcess,
        total_mib: 16_384,
        memory: FakeMemory::SharedPool,
        fault: FakeFault::Contained,
        compute_slowdown: 1.0,
        contention_on_gpu: true,
        bandwidth_share: 1.0,
        throughput_share: 1.0,
        bandwidth_gb_per_s: 2000.0,
        scrub_on_free: true,
        nvml_utilisation: Some(100.0),
        aggressor_hang_ms: None,
        aggressor_open_error: Some(
            "CUDA_ERROR_DEVICES_UNAVAILABLE: the device is in EXCLUSIVE_PROCESS compute mode and another process holds it",
        ),
    },
];

pub fn profile(name: &str) -> Option<&'static FakeProfile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// How long an active role counts as active after its last kernel.
const ACTIVE_GRACE_MS: u64 = 500;

#[derive(Debug, Default, Serialize, Deserialize)]
struct RoleState {
    allocated: u64,
    active_until_ms: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct PoolState {
    /// Marker words freed without scrubbing, waiting for the next allocation.
    residue_words: u64,
    /// A fault that reached every context of the device.
    fault: Option<String>,
}

fn generation_path(dir: &Path, role: Role) -> PathBuf {
    dir.join(format!("{role}.generation"))
}

fn generation(dir: &Path, role: Role) -> u64 {
    std::fs::read_to_string(generation_path(dir, role))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn read_json<T: for<'de> Deserialize<'de> + Default>(path: &Path) -> T {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), DeviceError> {
    let text = serde_json::to_string(value).map_err(|e| DeviceError::Driver(e.to_string()))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| DeviceError::Driver(format!("fake state {}: {e}", path.display())))
}

struct FakeBuffer {
    bytes: u64,
    pattern: Option<Pattern>,
    residue_words: u64,
}

/// One role's context on the fake device.
pub struct FakeSession {
    profile: &'static FakeProfile,
    dir: PathBuf,
    role: Role,
    buffers: BTreeMap<u64, FakeBuffer>,
    next: u64,
    faulted: Option<String>,
    samples: u64,
    hung: bool,
    /// The role's generation when this session opened; the parent's `reclaim` moves it on, which ends
    /// this session as a kill ends a process (a thread cannot be killed, so it must notice).
    generation: u64,
}

impl FakeSession {
    pub fn open(
        profile: &'static FakeProfile,
        dir: &Path,
        role: Role,
    ) -> Result<FakeSession, DeviceError> {
        if role == Role::Aggressor {
            if let Some(e) = profile.aggressor_open_error {
                return Err(DeviceError::Driver(e.to_string()));
            }
        }
        let s = FakeSession {
            profile,
            dir: dir.to_path_buf(),
            role,
            buffers: BTreeMap::new(),
            next: 1,
            faulted: None,
            samples: 0,
            hung: false,
            generation: generation(dir, role),
        };
        s.write_role(0, 0)?;
        Ok(s)
    }

    fn role_path(&self, role: Role) -> PathBuf {
        self.dir.join(format!("{role}.json"))
    }

    fn pool_path(&self) -> PathBuf {
        self.dir.join("pool.json")
    }

    fn allocated(&self) -> u64 {
        self.buffers.values().map(|b| b.bytes).sum()
    }

    fn killed(&self) -> bool {
        generation(&self.dir, self.role) != self.generation
    }

    fn write_role(&self, allocated: u64, active_until_ms: u64) -> Result<(), DeviceError> {
        if self.killed() {
            return Err(DeviceError::Driver("the worker was killed".into()));
        }
        write_json(
            &self.role_path(self.role),
            &RoleState {
                allocated,
                active_until_ms,
            },
        )
    }

    fn mark_active(&self) -> Result<(), DeviceError> {
        self.write_role(self.allocated(), now_ms() + ACTIVE_GRACE_MS)
    }

    fn peer(&self) -> RoleState {
        read_json(&self.role_path(self.role.other()))
    }

    fn peer_active(&self) -> bool {
        self.peer().active_until_ms > now_ms()
    }

    /// Models the aggressor that stops answering, once.
    fn maybe_hang(&mut self) {
        if self.role == Role::Aggressor && !self.hung {
            if let Some(ms) = self.profile.aggressor_hang_ms {
                self.hung = true;
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
    }

    fn alive(&mut self) -> Result<(), DeviceError> {
        self.maybe_hang();
        if self.killed() {
            return Err(DeviceError::Driver("the worker was killed".into()));
        }
        if let Some(e) = &self.faulted {
            return Err(DeviceError::Driver(e.clone()));
        }
        if self.profile.fault == FakeFault::Propagates {
            let pool: PoolState = read_json(&self.pool_path());
            if let Some(e) = pool.fault {
                return Err(DeviceError::Driver(e));
            }
        }
        Ok(())
    }

    fn total_bytes(&self) -> u64 {
        let total = self.profile.total_mib * MIB;
        match self.profile.memory {
            FakeMemory::SharedPool => total,
            FakeMemory::Partitioned => total / 2,
            FakeMemory::Capped(cap) => (cap * MIB).min(total),
        }
    }

    fn free_bytes(&self) -> u64 {
        let total = self.profile.total_mib * MIB;
        let mine = self.allocated();
        let theirs = self.peer().allocated;
        match self.profile.memory {
            FakeMemory::SharedPool => total.saturating_sub(mine + theirs),
            FakeMemory::Partitioned => (total / 2).saturating_sub(mine),
            FakeMemory::Capped(cap) => (cap * MIB)
                .saturating_sub(mine)
                .min(total.saturating_sub(mine + theirs)),
        }
    }

    /// A fixed spread of +0..+9.9% around a base, so that quantiles differ.
    fn jitter(&mut self) -> f64 {
        self.samples += 1;
        1.0 + ((self.samples * 37) % 100) as f64 / 1000.0
    }

    /// What `gpu_us` of work takes on the GPU and on the host (`overhead_us` more), `slowdown` times
    /// longer while the other role is active: on both clocks when contention shows on the GPU's,
    /// else on the host's alone.
    fn contended(&self, gpu_us: f64, overhead_us: f64, slowdown: f64) -> Timing {
        let (mut gpu, mut host) = (gpu_us, gpu_us + overhead_us);
        if self.peer_active() {
            host *= slowdown;
            if self.profile.contention_on_gpu {
                gpu *= slowdown;
            }
        }
        let d = |us: f64| Duration::from_nanos((us * 1000.0).round() as u64);
        Timing {
            gpu: d(gpu),
            host: d(host),
        }
    }

    fn buffer(&self, b: BufferId) -> Result<&FakeBuffer, DeviceError> {
        self.buffers
            .get(&b.0)
            .ok_or_else(|| DeviceError::Driver("CUDA_ERROR_INVALID_VALUE: no such buffer".into()))
    }
}

impl Drop for FakeSession {
    fn drop(&mut self) {
        // Process exit: the driver takes back what the context held.
        let _ = self.write_role(0, 0);
    }
}

impl GpuSession for FakeSession {
    fn identity(&self) -> WorkerDevice {
        let uuid = match (self.profile.memory, self.role) {
            (FakeMemory::Partitioned, Role::Victim) => "00000000-0000-4000-8000-00000000f001",
            (FakeMemory::Partitioned, Role::Aggressor) => "00000000-0000-4000-8000-00000000f002",
            _ => "00000000-0000-4000-8000-00000000f000",
        };
        let mig = self.profile.memory == FakeMemory::Partitioned;
        WorkerDevice {
            name: format!("Fake GPU ({})", self.profile.name),
            uuid: uuid.into(),
            parent_uuid: mig.then(|| "GPU-00000000-0000-4000-8000-00000000f000".into()),
            mig,
            memory_mib: self.total_bytes() / MIB,
            compute_capability: "9.0".into(),
        }
    }

    fn mem_info(&mut self) -> Result<(u64, u64), DeviceError> {
        self.alive()?;
        Ok((self.free_bytes(), self.total_bytes()))
    }

    fn alloc(&mut self, bytes: u64) -> Result<BufferId, DeviceError> {
        self.alive()?;
        if bytes == 0 || bytes > self.free_bytes() {
            return Err(DeviceError::OutOfMemory(format!(
                "CUDA_ERROR_OUT_OF_MEMORY: {} MiB requested, {} MiB free",
                bytes / MIB,
                self.free_bytes() / MIB
            )));
        }
        let mut pool: PoolState = read_json(&self.pool_path());
        let residue_words = pool.residue_words.min(bytes / 8);
        if residue_words > 0 {
            pool.residue_words -= residue_words;
            write_json(&self.pool_path(), &pool)?;
        }
        let id = self.next;
        self.next += 1;
        self.buffers.insert(
            id,
            FakeBuffer {
                bytes,
                pattern: None,
                residue_words,
            },
        );
        self.write_role(self.allocated(), 0)?;
        Ok(BufferId(id))
    }

    fn free(&mut self, buffer: BufferId) -> Result<(), DeviceError> {
        if self.killed() {
            return Err(DeviceError::Driver("the worker was killed".into()));
        }
        let Some(b) = self.buffers.remove(&buffer.0) else {
            return Err(DeviceError::Driver(
                "CUDA_ERROR_INVALID_VALUE: no such buffer".into(),
            ));
        };
        if !self.profile.scrub_on_free && b.pattern == Some(Pattern::Constant(MARKER)) {
            let mut pool: PoolState = read_json(&self.pool_path());
            pool.residue_words += b.bytes / 8;
            write_json(&self.pool_path(), &pool)?;
        }
        self.write_role(self.allocated(), 0)
    }

    fn fill(&mut self, buffer: BufferId, pattern: Pattern) -> Result<(), DeviceError> {
        self.alive()?;
        let b = self.buffers.get_mut(&buffer.0).ok_or_else(|| {
            DeviceError::Driver("CUDA_ERROR_INVALID_VALUE: no such buffer".into())
        })?;
        b.pattern = Some(pattern);
        b.residue_words = 0;
        Ok(())
    }

    fn count(&mut self, buffer: BufferId, pattern: Pattern) -> Result<u64, DeviceError> {
        self.alive()?;
        let b = self.buffer(buffer)?;
        Ok(if b.pattern == Some(pattern) {
            b.bytes / 8
        } else if pattern == Pattern::Constant(MARKER) {
            b.residue_words
        } else {
            0
        })
    }

    fn short_kernel(&mut self, iters: u32) -> Result<Timing, DeviceError> {
        self.alive()?;
        let gpu_us = (6.0 + f64::from(iters) * 0.01) * self.jitter();
        Ok(self.contended(gpu_us, 2.0, self.profile.compute_slowdown))
    }

    fn work(&mut self, _iters: u32, kernels: u32) -> Result<Duration, DeviceError> {
        self.alive()?;
        self.mark_active()?;
        let mut ms = f64::from(kernels);
        if self.peer_active() {
            ms /= self.profile.throughput_share;
        }
        let took = Duration::from_micros((ms * 1000.0).round() as u64);
        std::thread::sleep(took);
        Ok(took)
    }

    fn hog(&mut self, _kernel_ns: u64, _kernels: u32) -> Result<(), DeviceError> {
        self.alive()?;
        self.mark_active()?;
        std::thread::sleep(Duration::from_millis(2));
        Ok(())
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, passes: u32) -> Result<Timing, DeviceError> {
        self.alive()?;
        let bytes = self.buffer(src)?.bytes.min(self.buffer(dst)?.bytes);
        let gpu_us = (2 * bytes * u64::from(passes)) as f64
            / (self.profile.bandwidth_gb_per_s * 1e3)
            * self.jitter();
        let t = self.contended(gpu_us, 2.0, 1.0 / self.profile.bandwidth_share);
        if self.role == Role::Aggressor {
            // The aggressor's loop: slow enough not to spin on the state files.
            self.mark_active()?;
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(t)
    }

    fn idle(&mut self) {
        let _ = self.write_role(self.allocated(), 0);
    }

    fn fault(&mut self) -> Result<(), DeviceError> {
        self.alive()?;
        let e = "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".to_string();
        self.faulted = Some(e.clone());
        if self.profile.fault == FakeFault::Propagates {
            let mut pool: PoolState = read_json(&self.pool_path());
            pool.fault = Some(e.clone());
            write_json(&self.pool_path(), &pool)?;
        }
        Err(DeviceError::Driver(e))
    }
}

/// The fake behind the [`Backend`] trait, for the parent and for worker processes.
pub struct FakeBackend {
    profile: &'static FakeProfile,
    dir: PathBuf,
    owns_dir: bool,
}

impl FakeBackend {
    /// A fake with a fresh state directory, removed when the backend is dropped.
    pub fn new(profile_name: &str) -> Result<FakeBackend, ProbeError> {
        let profile = lookup(profile_name)?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "gpu-trust-probe-fake-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| ProbeError::io(format!("{}", dir.display()), e))?;
        Ok(FakeBackend {
            profile,
            dir,
            owns_dir: true,
        })
    }

    /// A fake over an existing state directory (a worker process joins its parent's).
    pub fn with_dir(profile_name: &str, dir: &Path) -> Result<FakeBackend, ProbeError> {
        Ok(FakeBackend {
            profile: lookup(profile_name)?,
            dir: dir.to_path_buf(),
            owns_dir: false,
        })
    }

    pub fn profile(&self) -> &'static FakeProfile {
        self.profile
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn lookup(name: &str) -> Result<&'static FakeProfile, ProbeError> {
    profile(name).ok_or_else(|| {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        ProbeError::Usage(format!(
            "unknown fake profile `{name}` (one of {})",
            names.join(", ")
        ))
    })
}

impl Drop for FakeBackend {
    fn drop(&mut self) {
        if self.owns_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Backend for FakeBackend {
    fn detect(&self, victim: &DeviceSpec, aggressor: &DeviceSpec) -> Result<Detection, ProbeError> {
        let p = self.profile;
        let partitioned = p.memory == FakeMemory::Partitioned;
        let device = |spec: &DeviceSpec, role: Role| {
            let suffix = match (partitioned, role) {
                (true, Role::Victim) => "f001",
                (true, Role::Aggressor) => "f002",
                _ => "f000",
            };
            DeviceEvidence {
                spec: spec.to_string(),
                name: Some(format!("Fake GPU ({})", p.name)),
                uuid: Some(format!(
                    "{}-00000000-0000-4000-8000-00000000{suffix}",
                    if partitioned { "MIG" } else { "GPU" }
                )),
                parent_uuid: partitioned.then(|| "GPU-00000000-0000-4000-8000-00000000f000".into()),
                index: Some(0),
                memory_mib: Some(if partitioned {
                    p.total_mib / 2
                } else {
                    p.total_mib
                }),
                compute_capability: Some("9.0".into()),
            }
        };
        Ok(Detection {
            victim: device(victim, Role::Victim),
            aggressor: device(aggressor, Role::Aggressor),
            driver: DriverEvidence {
                version: Some("fake".into()),
                cuda_version: None,
            },
            mechanism: MechanismEvidence {
                kind: p.mechanism,
                mig_mode: Some(partitioned),
                mps: p.mechanism == MeasuredMechanism::Mps,
                mps_pipe_directory: None,
                compute_mode: Some(
                    if p.mechanism == MeasuredMechanism::ExclusiveProcess {
                        "exclusive-process"
                    } else {
                        "default"
                    }
                    .into(),
                ),
                cc_mode: Some("off".into()),
                notes: vec![format!(
                    "fake device (profile {}): simulated for tests, not a measurement",
                    p.name
                )],
                settings: None,
            },
        })
    }

    fn sample_utilisation(&self, _victim: &DeviceSpec) -> Option<f64> {
        self.profile.nvml_utilisation
    }

    fn open_session(
        &self,
        role: Role,
        _device: &DeviceSpec,
    ) -> Result<Box<dyn GpuSession>, DeviceError> {
        Ok(Box::new(FakeSession::open(self.profile, &self.dir, role)?))
    }

    fn worker_args(&self) -> Vec<String> {
        vec![
            "--fake".into(),
            self.profile.name.into(),
            "--fake-dir".into(),
            self.dir.display().to_string(),
        ]
    }

    fn reclaim(&self, role: Role) {
        let next = generation(&self.dir, role) + 1;
        let _ = std::fs::write(generation_path(&self.dir, role), next.to_string());
        let _ = std::fs::remove_file(self.dir.join(format!("{role}.json")));
        // Once no client is left, a faulted server recovers (as an MPS server leaves FAULT when the
        // clients it reported the fault to have exited).
        let none_left = [Role::Victim, Role::Aggressor]
            .iter()
            .all(|r| !self.dir.join(format!("{r}.json")).exists());
        let pool_path = self.dir.join("pool.json");
        if none_left {
            let mut pool: PoolState = read_json(&pool_path);
            if pool.fault.take().is_some() {
                let _ = write_json(&pool_path, &pool);
            }
        }
    }
}
