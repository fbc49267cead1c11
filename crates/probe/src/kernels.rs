//! The CUDA C source of the probe's kernels and the names the loader looks up in it.

/// Compiled at run time with NVRTC; it uses only built-ins, so no CUDA headers are needed.
pub const SOURCE: &str = include_str!("../kernels/probe.cu");

pub const WORK: &str = "gt_work";
pub const SPIN: &str = "gt_spin";
pub const COPY: &str = "gt_copy";
pub const FAULT: &str = "gt_fault";
pub const FILL: &str = "gt_fill";
pub const COUNT: &str = "gt_count";

/// Every `extern "C" __global__` entry point of [`SOURCE`], in the order the loader resolves them.
pub const ENTRY_POINTS: [&str; 6] = [WORK, SPIN, COPY, FAULT, FILL, COUNT];

/// Threads per block of the grid-stride kernels.
pub const BLOCK: u32 = 256;
/// Threads per block of the hog: two such blocks fill an SM of every architecture since Volta.
pub const HOG_BLOCK: u32 = 1024;
