//! The isolation model of gpu-trust: one source of truth that every command reads.
//!
//! - [`vocab`]: layers, severities, certainties, trust levels, latency sensitivity, incidents.
//! - [`location`]: file/line/column of every object, and input diagnostics.
//! - [`code`]: the stable code of every kind of diagnostic (`docs/diagnostics.md`).
//! - [`version`]: dotted versions with per-branch comparison.
//! - [`fleet`]: the fleet model ingest builds from Kubernetes objects.
//! - [`catalogue`]: GPU models, their memory, CC support and MIG profiles, looked up by label or PCI id.
//! - [`geometry`]: valid MIG layouts of a model: placement checks, count placement, enumeration.
//! - [`host`]: what a pod reaches of its node: sensitive host paths, capabilities that make a container
//!   privileged, the NVIDIA runtime handlers.
//! - [`isolation`]: mechanisms, what each keeps separate or shares, and how far incidents reach.
//! - [`labels`]: the node labels GPU Feature Discovery and the GPU Operator write (`nvidia.com/gpu.product`...).
//! - [`resource`]: the NVIDIA extended resource names (`nvidia.com/gpu`, `nvidia.com/mig-<profile>`).
//! - [`date`]: the calendar date acceptances expire on (`YYYY-MM-DD`).
//! - [`occupancy`]: the per-GPU occupancy view of a node: its GPUs and MIG instances as seats, and how
//!   the device plugin hands each out (read by the inventory and the audit's GPU layout).
//! - [`stack`]: the components of NVIDIA's stack advisories name, and where the input shows their
//!   versions (images, Helm labels, operator specs); the DCGM exporter's settings.
//! - [`report`]: the audit's result as every renderer prints it, the `gpu-trust/audit/v2` wire format
//!   (with the coverage it carries and the GPU layout the HTML report draws).
//! - [`terminal`]: input text made safe to print on a terminal (control characters escaped).
//!
//! This crate does no I/O: it is data and pure functions over data.

pub mod catalogue;
pub mod code;
pub mod date;
pub mod evidence;
pub mod fleet;
pub mod geometry;
pub mod host;
pub mod isolation;
pub mod labels;
pub mod location;
pub mod occupancy;
pub mod report;
pub mod resource;
pub mod stack;
pub mod terminal;
pub mod version;
pub mod vocab;

pub use code::Code;
pub use location::{Diagnostic, DiagnosticLevel, Location, ObjectRef};
pub use version::Version;
pub use vocab::{Certainty, Incident, Latency, Layer, Severity, Trust};
