//! The planner of gpu-trust: given tenants, workloads and a GPU inventory, which mechanism per
//! workload, which MIG geometry per GPU and which node pools, with the fewest GPUs (then nodes), such
//! that no trust boundary of the policy is crossed; and the configs the NVIDIA GPU Operator consumes.
//!
//! - [`file`]: the plan file ([`file::parse`], then [`file::PlanFile::resolve`] with the policy).
//! - [`solve()`]: the solver (pools, mechanisms, trust groups, MIG packing, nodes).
//! - [`pack`], [`exact`]: packing MIG instances into GPU layouts (configuration LP with an exact
//!   remainder, first-fit decreasing, and the exact pattern ILP for comparison).
//! - [`bound`]: the lower bound every plan reports.
//! - [`check()`]: an independent checker of every constraint, for tests and for trust.
//! - [`emit`], [`snapshot()`]: the artifacts (`--emit`) and the cluster snapshot (`--emit-snapshot`);
//!   [`patch`]: the pod patches; [`dra`]: the plan as DRA objects (`--emit DIR --dra`).
//! - [`migrate()`](migrate::migrate): the change from the cluster that runs now to a plan
//!   (`--current`): per node what changes, in which steps, with what capacity left.
//! - [`generate`]: generated fleets for the benchmark and property tests.
//!
//! ```
//! use gpu_trust_planner::{check, file, solve};
//!
//! let text = "apiVersion: gpu-trust/v1\nkind: Plan\n\
//!     policy:\n  tenants:\n    - {name: search, namespaces: [search]}\n\
//!     inventory:\n  - {pool: h100, model: H100-SXM5-80GB, gpusPerNode: 8, nodes: 1}\n\
//!     workloads:\n  - {name: chat, tenant: search, kind: inference, replicas: 7, peakMemory: 9GiB}\n";
//! let plan_file = file::parse(text, "plan.yaml").unwrap();
//! let file::PolicySource::Inline { text: policy } = &plan_file.policy else { unreachable!() };
//! let policy = gpu_trust_policy::parse(policy, "plan.yaml").unwrap();
//! let today = gpu_trust_policy::Date::parse("2026-01-01").unwrap();
//! let input = plan_file.resolve(&policy, today).unwrap();
//! let plan = solve(&input);
//! assert_eq!(plan.gpus_used, 1); // seven 1g.10gb instances on one H100
//! assert_eq!(plan.lower_bound, 1);
//! assert!(check(&input, &plan).is_empty());
//! ```

mod assemble;
pub mod bound;
pub mod check;
mod complete;
pub mod dra;
pub mod emit;
pub mod exact;
pub mod file;
pub mod generate;
mod improve;
pub mod migrate;
pub mod pack;
pub mod patch;
pub mod plan;
pub mod snapshot;
pub mod solve;
pub mod spec;
mod unit;

pub use check::check;
pub use file::{PlanFile, PlanInput};
pub use plan::{Plan, SCHEMA};
pub use snapshot::snapshot;
pub use solve::{solve, solve_with, Method, SolveOptions};
