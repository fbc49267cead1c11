//! What planning one pool works with: the input, the pool, its MIG geometry, and how MIG instances are
//! packed.

use crate::file::{PlanInput, Pool};
use crate::spec::MigSpec;

/// How MIG instances are packed into GPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// The configuration LP with an exact remainder, or first-fit decreasing where that is better.
    Best,
    /// First-fit decreasing only (the baseline the benchmark compares with).
    FirstFitDecreasing,
    /// The exact pattern ILP under a time limit per trust group, falling back to [`Method::Best`].
    Exact { time_limit_secs: f64 },
}

#[derive(Clone, Copy)]
pub(super) struct PoolCtx<'a> {
    pub(super) input: &'a PlanInput,
    pub(super) pool: &'a Pool,
    pub(super) spec: Option<&'a MigSpec>,
    pub(super) method: Method,
    pub(super) dra: bool,
    /// What the exact searches' limits are divided by: 1 for a plan, more for the plans that only
    /// judge a choice of pools.
    pub(super) effort: u64,
}
