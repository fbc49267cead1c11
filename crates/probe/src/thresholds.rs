//! The numbers the probe works with, in one place: verdict thresholds and the size of each workload.

use serde::{Deserialize, Serialize};

/// Where a measurement starts to count as harm.
///
/// Source: the probe design's "isolated means" column (victim allocation succeeds; p99 slowdown under
/// 1.2x; bandwidth over 0.9x of baseline; the victim's context survives; no marker found). A ratio is
/// judged by its confidence interval against these ([`crate::stats::decide`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Harm when contended latency / baseline latency (of the quantile judged) is above this.
    pub p99_slowdown_max: f64,
    /// Harm when contended bandwidth / baseline bandwidth is below this.
    pub bandwidth_ratio_min: f64,
    /// Harm when the victim finds more than this many marker words in fresh memory.
    pub marker_words_max: u64,
    /// No marker counts as no measurable effect only when the scan covered at least this share of the
    /// memory the neighbour freed (what it scanned, less the free memory it left unscanned).
    pub residue_coverage_min: f64,
}

pub const THRESHOLDS: Thresholds = Thresholds {
    p99_slowdown_max: 1.2,
    bandwidth_ratio_min: 0.9,
    marker_words_max: 0,
    residue_coverage_min: 0.99,
};

/// The size of every workload. Sent to the workers with each request, so that both roles of a run use
/// the same numbers and tests can shrink them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    /// The victim's working set (memory exhaustion, device fault).
    pub working_set_mib: u64,
    /// Short-kernel launches per phase (baseline or contended) of the compute hog: 10,000, so that a
    /// p99 can be reported ([`crate::stats::enough_for`]).
    pub latency_samples: u32,
    /// Blocks each phase of the compute hog and bandwidth scenarios is measured in, the two phases'
    /// blocks alternating (baseline, contended, contended, baseline, ...) so that drift falls on both.
    pub rounds: u32,
    /// The longest one block measures, in milliseconds: a phase whose samples are slow (a victim that
    /// waits for the neighbour) takes fewer samples, and reports the quantile they allow.
    pub block_ms: u64,
    /// Multiply-add iterations per thread of the short kernel.
    pub short_kernel_iters: u32,
    /// Length of one hog kernel.
    pub hog_kernel_ms: u64,
    /// Each of the two buffers of the victim's copy kernel.
    pub bandwidth_buffer_mib: u64,
    /// Copy passes per phase of the bandwidth scenario, each timed on its own.
    pub bandwidth_passes: u32,
    /// Each of the two buffers of the aggressor's copy kernel (fewer when memory is short).
    pub aggressor_copy_buffer_mib: u64,
    /// The most memory the aggressor fills with the marker, and the victim scans, in residual data: by
    /// default no bound, so that the victim scans all the memory it can get, which holds all the
    /// aggressor freed.
    pub residual_max_mib: u64,
    /// Largest single allocation when grabbing memory; halved on each failure down to 1 MiB.
    pub grab_chunk_mib: u64,
    /// How long each process counts useful work in the utilisation scenario.
    pub utilisation_ms: u64,
    /// Multiply-add iterations per thread of the utilisation work kernel.
    pub work_kernel_iters: u32,
    /// How long the victim runs work kernels around the neighbour's fault (device-fault-busy).
    pub fault_busy_ms: u64,
}

pub const DEFAULT_WORKLOAD: Workload = Workload {
    working_set_mib: 256,
    latency_samples: 10_000,
    rounds: 4,
    block_ms: 1_250,
    short_kernel_iters: 256,
    hog_kernel_ms: 20,
    bandwidth_buffer_mib: 256,
    bandwidth_passes: 1_000,
    aggressor_copy_buffer_mib: 1024,
    residual_max_mib: u64::MAX,
    grab_chunk_mib: 1024,
    utilisation_ms: 2000,
    work_kernel_iters: 4096,
    fault_busy_ms: 1_000,
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
            Scenario::ComputeHog => Some(format!(
                "latency (p99 from 10,000 samples a phase, else the median) within {:.2}x baseline, \
                 GPU-timed and host-timed, by its 95% interval",
                self.p99_slowdown_max
            )),
            Scenario::Bandwidth => Some(format!(
                "median bandwidth of a pass above {:.2}x baseline, GPU-timed and host-timed, by its \
                 95% interval",
                self.bandwidth_ratio_min
            )),
            Scenario::DeviceFault | Scenario::DeviceFaultBusy => {
                Some("victim context survives".into())
            }
            Scenario::ResidualData => Some(format!(
                "at most {} marker words in fresh memory covering at least {:.0}% of what the \
                 neighbour freed",
                self.marker_words_max,
                self.residue_coverage_min * 100.0
            )),
            Scenario::Utilisation => None,
        }
    }
}
