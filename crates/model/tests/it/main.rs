//! The integration tests of `model`, one module per former test binary, linked once.

mod catalogue;
mod diagnostics;
mod geometry;
