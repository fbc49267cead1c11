//! The rule registry: every rule's code, name, layer, severity and documentation, in one list.
//!
//! Each rule lives in one file under `src/rules/<layer>/` and is declared with [`declare_rule!`], whose
//! doc comment *is* the rule's documentation: `gpu-trust explain`, the SARIF `help` and the HTML
//! report read it from here, at run time. Nothing else holds rule text.

use crate::context::Context;
use crate::sink::Sink;
use gpu_trust_model::{Layer, Severity, Trust};
use std::fmt;
use std::sync::OnceLock;

/// The sections every rule's documentation has, in order (each a `## ` heading).
pub const DOC_SECTIONS: [&str; 5] = [
    "What it detects",
    "Why it matters",
    "Example",
    "Remediation",
    "References",
];

/// How a rule's severity is decided, as the catalogue states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeverityRule {
    /// One severity.
    Fixed(Severity),
    /// By the trust between the two tenants involved (`none→critical, limited→high`); tenants with
    /// full trust get no finding.
    ByTrust { none: Severity, limited: Severity },
    /// Higher when tenants with trust below `full` share the node concerned.
    ByNodeSharing {
        shared: Severity,
        otherwise: Severity,
    },
}

impl SeverityRule {
    /// The rule's highest severity: the one it has between tenants that do not trust each other.
    pub fn highest(self) -> Severity {
        match self {
            SeverityRule::Fixed(s) => s,
            SeverityRule::ByTrust { none, limited } => none.max(limited),
            SeverityRule::ByNodeSharing { shared, otherwise } => shared.max(otherwise),
        }
    }

    /// Every severity a finding of the rule can have, most severe first: each of its severities, and
    /// each one step lower (a `permitted` finding).
    pub fn possible(self) -> Vec<Severity> {
        let base = match self {
            SeverityRule::Fixed(s) => vec![s],
            SeverityRule::ByTrust { none, limited } => vec![none, limited],
            SeverityRule::ByNodeSharing { shared, otherwise } => vec![shared, otherwise],
        };
        let mut all: Vec<Severity> = base.iter().flat_map(|s| [*s, s.lowered()]).collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        all.dedup();
        all
    }

    /// The severity between two tenants of `trust` (`None` when full trust makes it no finding).
    pub fn for_trust(self, trust: Trust) -> Option<Severity> {
        match (self, trust) {
            (SeverityRule::ByTrust { none, .. }, Trust::None) => Some(none),
            (SeverityRule::ByTrust { limited, .. }, Trust::Limited) => Some(limited),
            (SeverityRule::ByTrust { .. }, Trust::Full) => None,
            (rule, _) => Some(rule.highest()),
        }
    }
}

impl fmt::Display for SeverityRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeverityRule::Fixed(s) => write!(f, "{s}"),
            SeverityRule::ByTrust { none, limited } => write!(f, "none→{none}, limited→{limited}"),
            SeverityRule::ByNodeSharing { shared, otherwise } => write!(
                f,
                "{shared} if tenants with trust below full share the node, else {otherwise}"
            ),
        }
    }
}

/// What a rule answers for besides its own detection, declared in its `declare_rule!`
/// (`reports: [...]`): coverage and the policy check find the rule here ([`reporting`]) instead of
/// naming it, so adding or renumbering a rule touches its file only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reports {
    /// Facts the input hides about GPU nodes in this layer: its findings report them, so coverage
    /// lists it in the `hidden-facts` gap of the layer (`reportedBy`).
    HiddenFacts(Layer),
    /// A device plugin or mig-parted config a node or the ClusterPolicy selects that the input lacks
    /// (coverage's `unresolved-config` gap).
    UnresolvedConfig,
    /// What tenants' subjects may do through RBAC: without a RoleBinding or ClusterRoleBinding in the
    /// input it judges nothing, and coverage's `no-rbac` gap names it.
    Rbac,
    /// A policy acceptance past its `until` date (the policy check names it).
    ExpiredAcceptance,
    /// A policy acceptance without a reason (the policy check names it).
    AcceptanceWithoutReason,
    /// More replicas per shared GPU without a memory limit than the policy's limit (the policy check
    /// names it beside the limit).
    ReplicasOverLimit,
}

/// The rules that declare `what`, in code order.
pub fn reporting(what: Reports) -> impl Iterator<Item = &'static RuleMeta> {
    registry().iter().filter(move |r| r.reports.contains(&what))
}

/// The codes of the rules that declare `what`, in code order, joined with `, `.
pub fn codes_reporting(what: Reports) -> String {
    reporting(what)
        .map(|r| r.code)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A rule: its metadata, its documentation, and the check that runs it.
#[derive(Clone, Copy)]
pub struct RuleMeta {
    /// Stable code, e.g. `GT101`.
    pub code: &'static str,
    /// Kebab-case name, e.g. `untrusted-share-time-sliced-gpu`.
    pub name: &'static str,
    pub layer: Layer,
    pub severity: SeverityRule,
    /// One line: what the rule detects.
    pub summary: &'static str,
    /// The doc comment as written (every line keeps the space after `///`).
    pub raw_doc: &'static str,
    /// Whether the rule's risk falls on the tenant's neighbours rather than on the tenant whose
    /// workload it names (a privileged pod sees every GPU of its node): then a tenant's own annotation
    /// cannot accept a finding, only the policy can (`acceptance.rs`, docs/suppressions.md).
    pub neighbour_risk: bool,
    /// What it answers for besides its own detection ([`Reports`]).
    pub reports: &'static [Reports],
    /// The module the rule is declared in (`gpu_trust_rules::rules::device::gt101_...`): the tests check
    /// that each rule's file is named after its code and name.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) module: &'static str,
    pub(crate) check: fn(&Context<'_>, &mut Sink<'_>),
}

impl fmt::Debug for RuleMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuleMeta")
            .field("code", &self.code)
            .field("name", &self.name)
            .field("layer", &self.layer)
            .field("severity", &self.severity)
            .finish_non_exhaustive()
    }
}

impl RuleMeta {
    /// The highest severity the rule reports (between tenants that do not trust each other).
    pub fn default_severity(&self) -> Severity {
        self.severity.highest()
    }

    /// The rule's documentation in Markdown, with the sections of [`DOC_SECTIONS`].
    pub fn documentation(&self) -> &'static str {
        static DOCS: OnceLock<Vec<String>> = OnceLock::new();
        let docs = DOCS.get_or_init(|| registry().iter().map(|r| dedent(r.raw_doc)).collect());
        registry()
            .iter()
            .position(|r| r.code == self.code)
            .and_then(|i| docs.get(i))
            .map(String::as_str)
            .unwrap_or("")
    }

    /// The text of one `## ` section of the documentation, trimmed; `None` when absent.
    pub fn section(&self, heading: &str) -> Option<&'static str> {
        section(self.documentation(), heading)
    }
}

/// Removes the one space rustdoc keeps after `///` on every line, and surrounding blank lines.
fn dedent(raw: &str) -> String {
    let lines: Vec<&str> = raw
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    lines.join("\n").trim().to_string() + "\n"
}

fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let mut start = None;
    let mut offset = 0;
    for line in doc.split_inclusive('\n') {
        let text = line.trim_end();
        if let Some(h) = text.strip_prefix("## ") {
            if let Some(s) = start {
                return Some(doc[s..offset].trim());
            }
            if h.trim().eq_ignore_ascii_case(heading) {
                start = Some(offset + line.len());
            }
        }
        offset += line.len();
    }
    start.map(|s| doc[s..].trim())
}

/// Declares a rule: its doc comment (the documentation), its metadata, and the `check` function of the
/// module it is written in.
///
/// ```ignore
/// declare_rule! {
///     /// ## What it detects
///     /// ...
///     pub struct UnknownGpuModel {
///         code: "GT001",
///         name: "unknown-gpu-model",
///         layer: Layer::Device,
///         severity: SeverityRule::Fixed(Severity::Low),
///         summary: "a GPU node's product label matches no entry of the GPU catalogue",
///     }
/// }
/// ```
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        $vis:vis struct $ty:ident {
            code: $code:literal,
            name: $name:literal,
            layer: $layer:expr,
            severity: $severity:expr,
            summary: $summary:literal
            $(, neighbour_risk: $neighbour:literal)?
            $(, reports: [$($reports:expr),* $(,)?])? $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy)]
        $vis struct $ty;

        impl $ty {
            /// The doc comment above, as written.
            pub const DOC: &'static str = concat!($($doc, "\n"),*);
            /// The rule's registry entry.
            pub const META: $crate::registry::RuleMeta = $crate::registry::RuleMeta {
                code: $code,
                name: $name,
                layer: $layer,
                severity: $severity,
                summary: $summary,
                raw_doc: Self::DOC,
                neighbour_risk: false $(|| $neighbour)?,
                reports: &[$($($reports),*)?],
                module: module_path!(),
                check,
            };
        }

        /// This file's rule, as the registry lists it (the build script finds it by this name).
        pub const RULE: $crate::registry::RuleMeta = $ty::META;
    };
}
pub(crate) use declare_rule;

/// Every rule, in code order.
pub fn registry() -> &'static [RuleMeta] {
    crate::rules::ALL
}

/// The rule with this code (`GT101`), matched without case.
pub fn rule(code: &str) -> Option<&'static RuleMeta> {
    registry()
        .iter()
        .find(|r| r.code.eq_ignore_ascii_case(code.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedent_strips_the_doc_space() {
        assert_eq!(dedent(" ## A\n text\n\n more\n"), "## A\ntext\n\nmore\n");
    }

    #[test]
    fn sections_are_found_by_heading() {
        let doc = "## What it detects\nA thing.\n\n## Why it matters\nBecause.\n";
        assert_eq!(section(doc, "what it detects"), Some("A thing."));
        assert_eq!(section(doc, "Why it matters"), Some("Because."));
        assert_eq!(section(doc, "Example"), None);
    }

    /// The build script registers every rule file; each file holds the rule its name says, in the
    /// folder of its code's range.
    #[test]
    fn every_rule_sits_in_the_file_its_code_and_name_make() {
        assert!(!registry().is_empty());
        for r in registry() {
            let mut path = r.module.rsplit("::");
            let file = path.next().unwrap_or_default();
            let folder = path.next().unwrap_or_default();
            let want = format!("{}_{}", r.code.to_lowercase(), r.name.replace('-', "_"));
            assert_eq!(file, want, "{}: declared in {}", r.code, r.module);
            let range = match folder {
                "input" => '0',
                "device" => '1',
                "host" => '2',
                "confidentiality" => '3',
                "control_plane" => '4',
                "contract" => '5',
                other => panic!("{}: unknown layer folder {other}", r.code),
            };
            assert_eq!(r.code.chars().nth(2), Some(range), "{} in {folder}", r.code);
        }
    }

    /// Every kind of [`Reports`] is declared by a rule: the text that names the rules for it (the
    /// coverage gap, the policy check) never names none.
    #[test]
    fn every_kind_of_report_has_a_rule() {
        let all = [
            Reports::HiddenFacts(Layer::Device),
            Reports::HiddenFacts(Layer::Host),
            Reports::HiddenFacts(Layer::Confidentiality),
            Reports::UnresolvedConfig,
            Reports::Rbac,
            Reports::ExpiredAcceptance,
            Reports::AcceptanceWithoutReason,
            Reports::ReplicasOverLimit,
        ];
        for what in all {
            assert!(reporting(what).next().is_some(), "{what:?}");
        }
        for r in registry() {
            for what in r.reports {
                assert!(all.contains(what), "{}: {what:?}", r.code);
            }
        }
    }

    #[test]
    fn severity_by_trust() {
        let s = SeverityRule::ByTrust {
            none: Severity::Critical,
            limited: Severity::High,
        };
        assert_eq!(s.for_trust(Trust::None), Some(Severity::Critical));
        assert_eq!(s.for_trust(Trust::Limited), Some(Severity::High));
        assert_eq!(s.for_trust(Trust::Full), None);
        assert_eq!(s.highest(), Severity::Critical);
        assert_eq!(s.to_string(), "none→critical, limited→high");
    }
}
