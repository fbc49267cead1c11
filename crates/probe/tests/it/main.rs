//! The integration tests of `probe`, one module per former test binary, linked once.

mod common;

mod fake_scenarios;
mod h200;
mod job;
mod kernels;
mod snapshots;
mod transport;
