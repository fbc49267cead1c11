//! Typed errors of the probe.

use thiserror::Error;

/// Why a probe run could not start or could not finish.
#[derive(Debug, Error)]
pub enum ProbeError {
    /// No usable NVIDIA driver on this machine (libcuda or NVML missing, or NVML refused to start).
    #[error("no NVIDIA driver found: {0}; the probe needs a GPU node")]
    NoDriver(String),
    /// A `--victim` / `--aggressor` value that names no device.
    #[error("{0}")]
    Device(String),
    /// A command-line value the probe cannot use.
    #[error("{0}")]
    Usage(String),
    /// Starting or talking to a worker process failed.
    #[error("worker: {0}")]
    Worker(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl ProbeError {
    /// Whether the error means this machine cannot run the probe at all (exit 2 with the message).
    pub fn is_environment(&self) -> bool {
        matches!(self, ProbeError::NoDriver(_))
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ProbeError::Io {
            context: context.into(),
            source,
        }
    }
}

/// A failure reported by a device session (real or fake).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeviceError {
    /// The allocation did not fit (`CUDA_ERROR_OUT_OF_MEMORY`).
    #[error("{0}")]
    OutOfMemory(String),
    /// Any other driver error, named as the driver names it.
    #[error("{0}")]
    Driver(String),
    /// The device or a library it needs is not there.
    #[error("{0}")]
    Unavailable(String),
}

impl DeviceError {
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, DeviceError::OutOfMemory(_))
    }
}
