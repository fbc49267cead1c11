//! The audit: rules over the fleet model and the tenancy policy, pairs, blast radius, acceptances.
//!
//! - [`audit`]: the entry point, `audit(&AuditInput) -> AuditReport`.
//! - [`registry()`] / [`rule`]: every rule with its code, name, layer, severity and documentation (the
//!   rule file's doc comment), for `gpu-trust rules`, `gpu-trust explain` and SARIF.
//! - [`colocation`]: the shared things (sites): which tenants are or may be on one GPU, MIG instance,
//!   MPS server or node, computed once and read by the rules, the groups and the blast radius.
//! - [`advisories`]: known toolkit, operator and driver vulnerabilities with fixes per branch.
//! - [`coverage`]: per layer, whether the input puts it in play and whether it was evaluated whole.
//!
//! The audit's result, the `gpu-trust/audit/v2` wire format, is the model's (`gpu_trust_model::report`):
//! the assembly (`audit`, `scope`, `groups`, `blast`) builds it; no rule names a type of it.
//!
//! Rules are pure functions over a [`Context`](context::Context) that push findings into a
//! [`Sink`](sink::Sink); nothing here does I/O or reads the clock.

pub mod acceptance;
pub mod advisories;
pub mod analysis;
mod audit;
pub mod blast;
pub mod colocation;
pub mod context;
pub mod coverage;
mod granted;
pub mod groups;
pub mod layout;
pub mod owner;
#[cfg(test)]
mod pairwise_tests;
mod parallel;
pub mod registry;
mod rules;
pub mod scope;
pub mod sink;
mod text;

// The tests' fleet builder names the crate as the integration tests do.
#[cfg(test)]
extern crate self as gpu_trust_rules;

pub use advisories::Advisories;
pub use audit::{audit, AuditInput, AuditOptions, Prepared};
pub use registry::{registry, rule, RuleMeta, SeverityRule, DOC_SECTIONS};
