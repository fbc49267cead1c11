//! Renderers of every command's output. They do no I/O: each returns a `String` (or writes to the
//! writer it is given) that the binary puts where it wants.
//!
//! The audit report (`gpu-trust/audit/v2`): [`audit`], one module per output format (table, JSON,
//! SARIF, JUnit, Markdown, HTML, and the Prometheus metrics of `gpu-trust serve`) and the coverage
//! section of each, with [`audit::render`], the one place a format is chosen.
//!
//! - [`pair`]: two tenants and everything they share (`audit --pair`), as text or JSON, and the
//!   standard-error lines for acceptances that accept nothing.
//!
//! Every other command, one module named after it with one module per format:
//!
//! - [`advisories`]: `table`, `json` of the advisory data in use, its newest bulletin and per
//!   component what is known.
//! - [`inventory`]: `table`, `json`, `yaml` of the fleet as ingest reads it.
//! - [`catalogue`]: `table`, `json` of the GPU catalogue or one model and its MIG layouts.
//! - [`mechanisms`]: `table`, `json` of the isolation model.
//! - [`policy`]: `table`, `json` of a policy check.
//! - [`plan`]: `table`, `json` of a plan, and the lines naming unplaced replicas.
//! - [`probe`]: `table`, `json` of a probe run's evidence.
//! - [`rules`]: the rule catalogue as a table or JSON.
//! - [`explain`]: one rule's documentation and the glossary, as text (its only format).
//!
//! Renderers hold no rule text: every message, remediation and rule description comes from the
//! [`AuditReport`] or from the rule registry, handed over as [`RuleDoc`]s. Text from the input that a
//! terminal format prints is escaped (`gpu_trust_model::terminal::escape`).

pub mod advisories;
pub mod audit;
pub mod catalogue;
pub mod explain;
pub mod inventory;
pub mod log;
pub mod mechanisms;
pub mod migration;
pub mod openreports;
pub mod pair;
mod paths;
pub mod plan;
pub mod policy;
pub mod probe;
pub mod rules;
mod text;

pub use gpu_trust_model::report::AuditReport;
pub use text::plural;

use gpu_trust_model::{Layer, Severity};
use gpu_trust_rules::RuleMeta;

/// What a renderer needs to know about one rule of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDoc<'a> {
    /// Stable code, e.g. `GT101`.
    pub code: &'a str,
    /// Kebab-case name, e.g. `untrusted-share-time-sliced-gpu`.
    pub name: &'a str,
    pub layer: Layer,
    /// The rule's highest severity (the one it has between tenants that do not trust each other).
    pub severity: Severity,
    /// How the severity is decided, as the catalogue states it (`none→critical, limited→high`, `low`).
    pub severity_rule: String,
    /// Every severity a finding of the rule can have, most severe first (its severities and each one
    /// step lower, for `permitted` findings).
    pub severities: Vec<Severity>,
    /// One line: what the rule detects.
    pub summary: &'a str,
    /// The rule's documentation, in Markdown (sections What it detects, Why it matters, Example,
    /// Remediation, References).
    pub documentation: &'a str,
}

impl<'a> From<&'a RuleMeta> for RuleDoc<'a> {
    fn from(meta: &'a RuleMeta) -> Self {
        RuleDoc {
            code: meta.code,
            name: meta.name,
            layer: meta.layer,
            severity: meta.default_severity(),
            severity_rule: meta.severity.to_string(),
            severities: meta.severity.possible(),
            summary: meta.summary,
            documentation: meta.documentation(),
        }
    }
}

/// The folder of the rule pages (`docs/rules/`, one `GTxxx.md` per rule) in the repository, at the tag
/// of `version` (`v0.1.0`), as a URL ending in `/`: the SARIF's `helpUri` and the Markdown summary's
/// rule links append `GT101.md`.
pub fn rule_pages_url(version: &str) -> String {
    format!(
        "{}/blob/v{version}/docs/rules/",
        env!("CARGO_PKG_REPOSITORY")
    )
}

/// Every rule of the registry, in code order, as renderers take them.
pub fn registry_docs() -> Vec<RuleDoc<'static>> {
    gpu_trust_rules::registry()
        .iter()
        .map(RuleDoc::from)
        .collect()
}

impl RuleDoc<'_> {
    /// The text of one `#`-headed section of the documentation (heading matched without case), trimmed.
    pub fn section(&self, heading: &str) -> Option<&str> {
        text::markdown_section(self.documentation, heading)
    }
}
