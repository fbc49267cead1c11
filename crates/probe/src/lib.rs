//! gpu-trust probe: measured evidence of what one tenant can do to another on a shared NVIDIA GPU.
//!
//! The probe runs a victim and an aggressor as two separate OS processes on the devices it is given (a
//! GPU index, a GPU UUID or a MIG UUID each), as two tenants would run, and for each scenario measures the
//! victim alone (baseline) and with the aggressor (contended), then judges the difference against
//! [`thresholds::THRESHOLDS`]. The result is a [`ProbeEvidence`] (`gpu-trust/probe/v2`) that the audit
//! can attach to its device-layer findings.
//!
//! Code map:
//!
//! - [`device`]: the [`device::GpuSession`] and [`device::Backend`] traits every device access goes
//!   through, and device names.
//! - [`real`]: the CUDA driver API and NVML, loaded at run time (cudarc, nvml-wrapper).
//! - [`fake`]: a simulated device whose profiles behave like time-slicing, MPS, MIG and failure cases.
//! - [`kernels`]: the kernels as PTX embedded in the binary (JIT-compiled by the driver), and their
//!   CUDA C source.
//! - [`protocol`], [`transport`]: the JSON-lines protocol and the links that carry it (child process,
//!   TCP to a remote aggressor, thread in tests), each bounded in time and reaped on drop.
//! - [`worker`]: what a worker process does per request.
//! - [`orchestrate`]: the parent's sequence per scenario.
//! - [`verdict`], [`detect`]: pure decisions (verdicts, mechanism).
//! - [`job`], [`serve`]: the Kubernetes Job, the remote aggressor host. The output formats of a run are
//!   the report crate's (`gpu_trust_report::probe`): they read only the evidence.
//!
//! Architecture invariant: nothing calls into libcuda before [`real::driver_present`] returned `Ok`, since
//! the dynamically loaded entry points panic without the library. The probe never changes MIG mode,
//! compute mode, clocks or persistence, and never resets a GPU.

pub mod detect;
pub mod device;
pub mod error;
pub mod fake;
pub mod job;
pub mod kernels;
pub mod orchestrate;
pub mod protocol;
pub mod real;
pub mod serve;
pub mod stats;
pub mod thresholds;
pub mod transport;
pub mod verdict;
pub mod worker;

pub use device::{Backend, DeviceSpec, GpuSession, Role};
pub use error::{DeviceError, ProbeError};
pub use gpu_trust_model::evidence::{ProbeEvidence, Scenario, Verdict};
pub use orchestrate::{run_probe, ProbeOptions};

/// The node name to record: `NODE_NAME` (set from the downward API in the emitted Job), then `HOSTNAME`,
/// then the kernel's host name.
pub fn default_node_name() -> Option<String> {
    ["NODE_NAME", "HOSTNAME"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .map(|v| v.trim().to_string())
        .find(|v| !v.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
}
