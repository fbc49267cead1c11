//! The integration tests of `ingest`, one module per former test binary, linked once.

mod dra_extended;
mod fixtures;
mod pieces;
