//! The probe's kernels: PTX embedded in the binary, handed to the driver's module loader
//! (`cuModuleLoadDataEx`), which JIT-compiles it for the GPU it runs on. Nothing else is needed at run
//! time: no NVRTC, no CUDA toolkit, only the driver (libcuda) that a GPU node has.
//!
//! The PTX is generated from the CUDA C source beside it (`kernels/probe.cu`) by `kernels/regenerate.sh`,
//! which says why the target and ISA are what they are; `tests/it/kernels.rs` checks that the two agree.

use std::ffi::CStr;

/// The CUDA C source the PTX is generated from. Not compiled at run time: kept for the tests that check
/// [`PTX`] against it.
pub const SOURCE: &str = include_str!("../kernels/probe.cu");

/// The PTX text, as committed.
pub const PTX_TEXT: &str = include_str!("../kernels/probe.ptx");

/// [`PTX_TEXT`] NUL-terminated, as `cuModuleLoadDataEx` reads a PTX image.
pub const PTX: &CStr =
    match CStr::from_bytes_with_nul(concat!(include_str!("../kernels/probe.ptx"), "\0").as_bytes())
    {
        Ok(ptx) => ptx,
        Err(_) => panic!("kernels/probe.ptx holds a NUL byte"),
    };

/// The PTX ISA version the PTX declares (`.version`): the lowest with the [`PTX_TARGET`] target, so that
/// every driver able to run the oldest GPU of the catalogue can load it.
pub const PTX_ISA: &str = "6.0";
/// The target the PTX declares (`.target`): Volta, compute capability 7.0, the oldest in the catalogue. The
/// driver JIT-compiles it for that and every later compute capability.
pub const PTX_TARGET: &str = "sm_70";
/// [`PTX_TARGET`] as a compute capability (major, minor).
pub const PTX_TARGET_CAPABILITY: (u8, u8) = (7, 0);

pub const WORK: &str = "gt_work";
pub const SPIN: &str = "gt_spin";
pub const COPY: &str = "gt_copy";
pub const FAULT: &str = "gt_fault";
pub const FILL: &str = "gt_fill";
pub const COUNT: &str = "gt_count";

/// Every `extern "C" __global__` entry point of [`SOURCE`] (`.entry` of [`PTX`]), in the order the loader
/// resolves them.
pub const ENTRY_POINTS: [&str; 6] = [WORK, SPIN, COPY, FAULT, FILL, COUNT];

/// Threads per block of the grid-stride kernels.
pub const BLOCK: u32 = 256;
/// Threads per block of the hog: two such blocks fill an SM of every architecture since Volta.
pub const HOG_BLOCK: u32 = 1024;
