//! The integration tests of `policy`, one module per former test binary, linked once.

mod report;
mod resolve;
mod validation;
