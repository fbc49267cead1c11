//! The tenancy policy of gpu-trust: who the tenants are, who trusts whom, what each tenant was
//! promised, and which interference the operator knowingly accepts.
//!
//! - [`parse`] reads and validates a policy file into a [`Policy`], collecting every validation
//!   error as a [`Diagnostic`] with file, line and column. Unknown fields are errors: a typo in a
//!   security policy must not pass silently.
//! - [`Policy::default`] is the policy without a file, the secure default: every namespace is its
//!   own tenant (or joins the tenant its Capsule label names), and different tenants do not trust
//!   each other.
//! - [`Policy::resolve`] applies the policy to a cluster's namespaces and gives the [`Tenancy`]: the
//!   tenants, who owns each namespace, [`Tenancy::trust`] between any two tenants, the RBAC subjects
//!   that act for a tenant, the `workloads` overrides, and the [`Acceptance`]s.
//! - Resolution warns about declared tenants that get no namespace of the input, and about namespace
//!   names that look alike (Unicode confusables) or have characters no namespace can have.
//! - [`Date`] is the calendar date acceptances expire on (and the audit's `--today`).
//!
//! ```
//! use gpu_trust_model::fleet::NamespaceInfo;
//! use gpu_trust_model::Trust;
//!
//! let policy = gpu_trust_policy::parse(
//!     "tenants:\n  - name: search\n    namespaces: [search-prod]\n  - name: ads\n    namespaces: [\"ads-*\"]\n\
//!      trust:\n  relations:\n    - {tenants: [search, ads], level: limited}\n",
//!     "policy.yaml",
//! )
//! .unwrap();
//! let ns = |name: &str| NamespaceInfo { name: name.into(), ..Default::default() };
//! let tenancy = policy.resolve(&[ns("search-prod"), ns("ads-eu"), ns("forgotten"), ns("kube-system")]);
//! let (search, ads) = (tenancy.tenant_of("search-prod").unwrap(), tenancy.tenant_of("ads-eu").unwrap());
//! assert_eq!(tenancy.trust(search, ads), Trust::Limited);
//! let forgotten = tenancy.tenant_of("forgotten").unwrap();
//! assert!(tenancy.tenant(forgotten).is_unassigned());
//! assert_eq!(tenancy.trust(search, forgotten), Trust::None);
//! assert_eq!(tenancy.tenant_of("kube-system"), None);
//! ```
//!
//! This crate does no I/O and never reads the clock: callers pass the text and the date.

mod acceptance;
pub mod init;
mod names;
mod pattern;
mod policy;
mod quantity;
mod raw;
mod report;
mod tenancy;
mod validate;

pub use acceptance::{Acceptance, AcceptanceState, WorkloadRef};
pub use gpu_trust_model::date::{Date, DateError};
pub use gpu_trust_model::Diagnostic;
pub use pattern::NamespacePattern;
pub use policy::{
    Contract, Latency, Policy, Relation, WorkloadRule, API_VERSION, DEFAULT_MAX_REPLICAS,
    DEFAULT_PATCH_WINDOW_DAYS, DEFAULT_PLATFORM_NAMESPACES, DEFAULT_TENANT_LABELS, KIND,
    MAX_POLICY_BYTES,
};
pub use quantity::{parse_memory_mib, MemoryError};
pub use report::{AcceptanceReport, CheckReport, DiagnosticReport, PairReport, CHECK_SCHEMA};
pub use tenancy::{
    NamespaceRole, Tenancy, Tenant, TenantId, TenantOrigin, TrustPair, TrustSource,
    WorkloadOverrides,
};
pub use validate::parse;
