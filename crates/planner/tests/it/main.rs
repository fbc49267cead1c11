//! The integration tests of `planner`, one module per former test binary, linked once.

mod consumers;

mod artifacts;
mod audit;
mod plans;
