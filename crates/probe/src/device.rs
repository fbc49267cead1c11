//! What the probe needs of a device, behind traits: [`GpuSession`] (one worker process's context) and
//! [`Backend`] (detection, utilisation sampling and worker set-up in the parent). The real implementation
//! is in [`crate::real`], the fake one in [`crate::fake`].

use crate::error::{DeviceError, ProbeError};
use gpu_trust_model::evidence::{DeviceEvidence, DriverEvidence, MechanismEvidence};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// A device as the user names it: a GPU index, a GPU UUID or a MIG instance UUID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DeviceSpec {
    Index(u32),
    /// `GPU-xxxxxxxx-...`
    GpuUuid(String),
    /// `MIG-xxxxxxxx-...` (or the older `MIG-GPU-.../gi/ci` form)
    MigUuid(String),
}

impl DeviceSpec {
    pub fn parse(text: &str) -> Result<DeviceSpec, ProbeError> {
        let t = text.trim();
        if !t.is_empty() && t.len() <= 9 && t.bytes().all(|b| b.is_ascii_digit()) {
            return t
                .parse()
                .map(DeviceSpec::Index)
                .map_err(|_| ProbeError::Usage(format!("`{text}`: GPU index out of range")));
        }
        let valid = |rest: &str| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'/')
        };
        if let Some(rest) = t.strip_prefix("GPU-") {
            if valid(rest) {
                return Ok(DeviceSpec::GpuUuid(t.to_string()));
            }
        }
        if let Some(rest) = t.strip_prefix("MIG-") {
            if valid(rest) {
                return Ok(DeviceSpec::MigUuid(t.to_string()));
            }
        }
        Err(ProbeError::Usage(format!(
            "`{text}` is not a GPU index (0), a GPU UUID (GPU-...) or a MIG instance UUID (MIG-...)"
        )))
    }

    /// The device this spec names once an inherited `CUDA_VISIBLE_DEVICES` is taken into account: an index
    /// counts among the devices already visible to this process, as CUDA counts it.
    pub fn resolve_visible(&self, inherited: Option<&str>) -> Result<DeviceSpec, ProbeError> {
        let (DeviceSpec::Index(i), Some(list)) = (self, inherited) else {
            return Ok(self.clone());
        };
        let entries: Vec<&str> = list
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        match entries.get(*i as usize) {
            Some(entry) => DeviceSpec::parse(entry),
            None => Err(ProbeError::Device(format!(
                "device {i} is not among CUDA_VISIBLE_DEVICES={list} ({} visible)",
                entries.len()
            ))),
        }
    }

    /// The `CUDA_VISIBLE_DEVICES` value under which this device is a worker's device 0.
    pub fn cuda_visible_devices(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Index(i) => write!(f, "{i}"),
            DeviceSpec::GpuUuid(u) | DeviceSpec::MigUuid(u) => f.write_str(u),
        }
    }
}

/// The two processes of a scenario. In the utilisation scenario the aggressor is a second, equal victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Victim,
    Aggressor,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Victim => "victim",
            Role::Aggressor => "aggressor",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "victim" => Some(Role::Victim),
            "aggressor" => Some(Role::Aggressor),
            _ => None,
        }
    }

    pub fn other(self) -> Role {
        match self {
            Role::Victim => Role::Aggressor,
            Role::Aggressor => Role::Victim,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The device as a worker's own driver context sees it (sent in the worker's hello).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerDevice {
    pub name: String,
    /// `GPU-...` or `MIG-...` when NVML could name it; else the driver API's hex UUID without a prefix.
    pub uuid: String,
    /// For a MIG device, the physical GPU's UUID (from NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_uuid: Option<String>,
    /// Whether the device is a MIG instance, when NVML could tell.
    #[serde(default)]
    pub mig: bool,
    pub memory_mib: u64,
    pub compute_capability: String,
}

/// A buffer of device memory held by a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufferId(pub u64);

/// What a buffer's words are compared against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Every word equals the value (the aggressor's marker).
    Constant(u64),
    /// A position-dependent mix of the seed and the word index (the victim's checksum pattern).
    Sequence(u64),
}

/// How long one piece of work took, timed two ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    /// On the GPU: CUDA events recorded before and after it on its stream. An event is stamped when
    /// the GPU reaches it, so this leaves out any wait before the context runs (a time slice).
    pub gpu: Duration,
    /// From launch to completion on the calling host thread: what a request waits, host overhead
    /// included.
    pub host: Duration,
}

/// One worker process's context on its device. Every method is synchronous: when it returns, the work it
/// launched has finished (or failed).
pub trait GpuSession {
    fn identity(&self) -> WorkerDevice;
    /// `(free, total)` device memory in bytes, as the driver reports it to this context.
    fn mem_info(&mut self) -> Result<(u64, u64), DeviceError>;
    fn alloc(&mut self, bytes: u64) -> Result<BufferId, DeviceError>;
    fn free(&mut self, buffer: BufferId) -> Result<(), DeviceError>;
    fn fill(&mut self, buffer: BufferId, pattern: Pattern) -> Result<(), DeviceError>;
    /// How many 64-bit words of the buffer hold the pattern.
    fn count(&mut self, buffer: BufferId, pattern: Pattern) -> Result<u64, DeviceError>;
    /// One block of the fixed work kernel, timed on the GPU and on the host.
    fn short_kernel(&mut self, iters: u32) -> Result<Timing, DeviceError>;
    /// `kernels` full-grid launches of the fixed work kernel; the time they took.
    fn work(&mut self, iters: u32, kernels: u32) -> Result<Duration, DeviceError>;
    /// `kernels` back-to-back hog kernels of `kernel_ns` each, filling every SM.
    fn hog(&mut self, kernel_ns: u64, kernels: u32) -> Result<(), DeviceError>;
    /// `passes` copies of `src` into `dst`; the time they took together.
    fn copy(&mut self, src: BufferId, dst: BufferId, passes: u32) -> Result<Timing, DeviceError>;
    /// Launches a kernel that writes through an invalid pointer. `Err` is the expected outcome (the fault
    /// was raised in this context); `Ok` means the access went through unnoticed.
    fn fault(&mut self) -> Result<(), DeviceError>;
    /// Called when an aggression stops: nothing of this session runs on the device any more. The real
    /// device needs nothing (every call above waits for its work); the fake stops counting it active.
    fn idle(&mut self) {}
}

/// What the parent learns about the devices before it starts workers.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    pub victim: DeviceEvidence,
    pub aggressor: DeviceEvidence,
    pub driver: DriverEvidence,
    pub mechanism: MechanismEvidence,
}

/// The device behind the probe, from the parent's side (detection, utilisation) and the worker's
/// (opening a session).
pub trait Backend: Send + Sync {
    /// Checks that the driver is there and resolves both devices and the mechanism between them.
    fn detect(&self, victim: &DeviceSpec, aggressor: &DeviceSpec) -> Result<Detection, ProbeError>;
    /// One sample of the victim device's GPU utilisation in percent, when the driver reports one.
    fn sample_utilisation(&self, victim: &DeviceSpec) -> Option<f64>;
    /// Opens a worker's session on `device` (in the worker process, or thread for in-process tests).
    fn open_session(
        &self,
        role: Role,
        device: &DeviceSpec,
    ) -> Result<Box<dyn GpuSession>, DeviceError>;
    /// Extra arguments a worker process needs to select this backend.
    fn worker_args(&self) -> Vec<String> {
        Vec::new()
    }
    /// Environment of a worker process for `device`.
    fn worker_env(&self, _device: &DeviceSpec) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Called after a worker of `role` has been reaped: the driver frees what a dead process held, and
    /// the fake device models that here.
    fn reclaim(&self, _role: Role) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(DeviceSpec::parse("0").unwrap(), DeviceSpec::Index(0));
        assert_eq!(
            DeviceSpec::parse("GPU-5c3e7f1a-0b2d-4c1e-9f00-1234567890ab").unwrap(),
            DeviceSpec::GpuUuid("GPU-5c3e7f1a-0b2d-4c1e-9f00-1234567890ab".into())
        );
        assert!(matches!(
            DeviceSpec::parse("MIG-GPU-abc/1/0").unwrap(),
            DeviceSpec::MigUuid(_)
        ));
        for bad in ["", "gpu0", "GPU-", "-1", "MIG-a b", "99999999999"] {
            assert!(DeviceSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn index_counts_among_inherited_visible_devices() {
        let spec = DeviceSpec::Index(1);
        assert_eq!(
            spec.resolve_visible(Some("2,3")).unwrap(),
            DeviceSpec::Index(3)
        );
        assert_eq!(
            spec.resolve_visible(Some("GPU-a,MIG-b")).unwrap(),
            DeviceSpec::MigUuid("MIG-b".into())
        );
        assert!(spec.resolve_visible(Some("2")).is_err());
        assert_eq!(spec.resolve_visible(None).unwrap(), spec);
        let uuid = DeviceSpec::GpuUuid("GPU-a".into());
        assert_eq!(uuid.resolve_visible(Some("0")).unwrap(), uuid);
    }
}
