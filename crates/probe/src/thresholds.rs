//! The numbers the probe works with, in one place: verdict thresholds and the size of each workload.

use serde::{Deserialize, Serialize};

/// Where a measurement stops counting as isolated.
///
/// Source: the probe design's "isolated means" column (victim allocation succeeds; p99 slowdown under
/// 1.2x; bandwidth over 0.9x of baseline; the victim's context survives; no marker found).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Isolated when contended p99 latency / baseline p99 latency is below this.
    pub p99_slowdown_max: f64,
    /// Isolated when contended bandwidth / baseline bandwidth is above this.
    pub bandwidth_ratio_min: f64,
    /// Isolated when the victim finds at most this many marker words in fresh memory.
    pub marker_words_max: u64,
}

pub const THRESHOLDS: Thresholds = Thresholds {
    p99_slowdown_max: 1.2,
    bandwidth_ratio_min: 0.9,
    marker_words_max: 0,
};

/// The size of every workload. Sent to the workers with each request, so that both roles of a run use
/// the same numbers and tests can shrink them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    /// The victim's working set (memory exhaustion, device fault).
    pub working_set_mib: u64,
    /// Short-kernel launches per latency measurement.
    pub latency_samples: u32,
    /// Multiply-add iterations per thread of the short kernel.
    pub short_kernel_iters: u32,
    /// Length of one hog kernel.
    pub hog_kernel_ms: u64,
    /// Each of the two buffers of the victim's copy kernel.
    pub bandwidth_buffer_mib: u64,
    /// Copy passes per bandwidth measurement.
    pub bandwidth_passes: u32,
    /// Each of the two buffers of the aggressor's copy kernel (fewer when memory is short).
    pub aggressor_copy_buffer_mib: u64,
    /// The most memory the aggressor fills with the marker, and the victim scans, in residual data.
    pub residual_max_mib: u64,
    /// Largest single allocation when grabbing memory; halved on each failure down to 1 MiB.
    pub grab_chunk_mib: u64,
    /// How long each process counts useful work in the utilisation scenario.
    pub utilisation_ms: u64,
    /// Multiply-add iterations per thread of the utilisation work kernel.
    pub work_kernel_iters: u32,
}

pub const DEFAULT_WORKLOAD: Workload = Workload {
    working_set_mib: 256,
    latency_samples: 400,
    short_kernel_iters: 256,
    hog_kernel_ms: 20,
    bandwidth_buffer_mib: 256,
    bandwidth_passes: 200,
    aggressor_copy_buffer_mib: 1024,
    residual_max_mib: 65_536,
    grab_chunk_mib: 1024,
    utilisation_ms: 2000,
    work_kernel_iters: 4096,
};

/// Default wall-clock bound of one scenario (baseline and contended run together), in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// The 64-bit marker the aggressor leaves behind in residual data (ASCII "gpu-trst", unlikely by chance).
pub const MARKER: u64 = 0x6770_752d_7472_7374;

/// The seed of the victim's checksum pattern.
pub const VICTIM_SEED: u64 = 0x7669_6374_696d_0001;

impl Thresholds {
    /// How the threshold of a scenario reads in reports.
    pub fn describe(&self, scenario: gpu_trust_model::evidence::Scenario) -> Option<String> {
        use gpu_trust_model::evidence::Scenario;
        match scenario {
            Scenario::MemoryExhaustion => {
                Some("victim allocation succeeds and its buffers keep their checksum".into())
            }
            Scenario::ComputeHog => Some(format!("p99 slowdown < {:.2}x", self.p99_slowdown_max)),
            Scenario::Bandwidth => Some(format!(
                "bandwidth > {:.2}x baseline",
                self.bandwidth_ratio_min
            )),
            Scenario::DeviceFault => Some("victim context survives".into()),
            Scenario::ResidualData => Some(format!(
                "at most {} marker words in fresh memory",
                self.marker_words_max
            )),
            Scenario::Utilisation => None,
        }
    }
}
