//! The integration tests of `rules`, one module per former test binary, linked once.

mod common;

mod coverage;
mod csaf;
mod invariants;
mod platforms;
mod records;
mod registry;
mod scope;
mod suppressions;
