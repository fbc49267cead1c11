//! The line protocol between the parent and a worker: one JSON object per line, requests on the worker's
//! standard input, replies on its standard output.
//!
//! A worker says `hello` (or `failed`) as soon as its session is open, then answers each request:
//!
//! | request | reply | used by |
//! | --- | --- | --- |
//! | `prepare` | `prepared` | victim: hold its working set, warm up |
//! | `measure` | `measured` | victim (and the second victim of the utilisation scenario) |
//! | `start` | `ready`, later `stopped` after `stop` | aggressor: the aggression is in force once `ready` |
//! | `exit` | (the worker exits) | both |
//!
//! Any request may be answered with `failed` instead.
//!
//! A connection to a remote aggressor host ([`crate::serve`]) starts with one line of its own before
//! any of these: [`SESSION_LINE`] or [`SHUTDOWN_LINE`].

use crate::device::WorkerDevice;
use crate::thresholds::Workload;
use gpu_trust_model::evidence::{AggressorReport, Measurement, Scenario};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The first line of a connection to a remote aggressor host: start a worker and relay until either
/// side closes.
pub const SESSION_LINE: &str = "gpu-trust-probe session";
/// The first line of a connection to a remote aggressor host: the probe is done, the host exits.
pub const SHUTDOWN_LINE: &str = "gpu-trust-probe shutdown";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Request {
    Prepare {
        scenario: Scenario,
        workload: Workload,
    },
    Measure {
        scenario: Scenario,
        workload: Workload,
    },
    Start {
        scenario: Scenario,
        workload: Workload,
    },
    Stop,
    Exit,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Reply {
    Hello { pid: u32, device: WorkerDevice },
    Prepared,
    // Boxed: by far the largest reply, it would size every other.
    Measured { measurement: Box<Measurement> },
    Ready { report: AggressorReport },
    Stopped { report: AggressorReport },
    Failed { message: String },
}

impl Reply {
    pub fn name(&self) -> &'static str {
        match self {
            Reply::Hello { .. } => "hello",
            Reply::Prepared => "prepared",
            Reply::Measured { .. } => "measured",
            Reply::Ready { .. } => "ready",
            Reply::Stopped { .. } => "stopped",
            Reply::Failed { .. } => "failed",
        }
    }
}

/// Longest line either side accepts; anything longer is a protocol error, not an allocation.
pub const MAX_LINE: usize = 1 << 20;

/// One message as a line (with the trailing newline).
pub fn encode<T: Serialize>(message: &T) -> String {
    // Serialising these plain structs cannot fail (no maps with non-string keys, no custom impls).
    let mut line = serde_json::to_string(message).unwrap_or_else(|e| {
        serde_json::json!({"event": "failed", "message": format!("encoding: {e}")}).to_string()
    });
    line.push('\n');
    line
}

/// Why a line from the other side is not a message.
#[derive(Debug, Error)]
pub enum LineError {
    /// A line longer than [`MAX_LINE`], cut off while it was read.
    #[error("line longer than {MAX_LINE} bytes")]
    Overlong,
    /// A line longer than [`MAX_LINE`] given to [`decode`].
    #[error("line of {0} bytes exceeds {MAX_LINE}")]
    TooLong(usize),
    /// Not JSON, or not one of the messages; `excerpt` is the line's first 120 characters.
    #[error("protocol line 1, column {column}: {source}: {excerpt}")]
    Syntax {
        column: usize,
        #[source]
        source: serde_json::Error,
        excerpt: String,
    },
    /// Reading the stream failed.
    #[error("read: {0}")]
    Read(#[source] std::io::Error),
}

/// Parses one line; the error names the column, as serde_json reports it.
pub fn decode<T: for<'de> Deserialize<'de>>(line: &str) -> Result<T, LineError> {
    if line.len() > MAX_LINE {
        return Err(LineError::TooLong(line.len()));
    }
    serde_json::from_str(line.trim_end()).map_err(|e| LineError::Syntax {
        column: e.column(),
        source: e,
        excerpt: line.chars().take(120).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thresholds::DEFAULT_WORKLOAD;

    #[test]
    fn requests_round_trip_as_single_lines() {
        let reqs = [
            Request::Prepare {
                scenario: Scenario::ComputeHog,
                workload: DEFAULT_WORKLOAD,
            },
            Request::Stop,
            Request::Exit,
        ];
        for r in reqs {
            let line = encode(&r);
            assert!(line.ends_with('\n'));
            assert_eq!(line.matches('\n').count(), 1);
            assert_eq!(decode::<Request>(&line).unwrap(), r);
        }
        assert!(encode(&Request::Stop).starts_with("{\"op\":\"stop\""));
    }

    #[test]
    fn bad_lines_are_errors_with_a_column() {
        let e = decode::<Reply>("{\"event\":\"nope\"}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("column"), "{e}");
        assert!(decode::<Reply>("not json").is_err());
    }
}
