//! The rule registry: every rule's code, name, layer, severity and documentation, in one list.
//!
//! Each rule lives in one file under `src/rules/<layer>/` and is declared with [`declare_rule!`], whose
//! doc comment *is* the rule's documentation: `gpu-trust explain`, the SARIF `help` and the HTML
//! report read it from here, at run time. Nothing else holds rule text.
//!
//! A rule's metadata ([`RuleMeta`], [`SeverityRule`], [`Reports`]) is declared in `sink.rs`, beside
//! the sink its check writes to, and re-exported here.

pub use crate::sink::{Reports, RuleMeta, SeverityRule};

use std::sync::OnceLock;

/// The sections every rule's documentation has, in order (each a `## ` heading).
pub const DOC_SECTIONS: [&str; 5] = [
    "What it detects",
    "Why it matters",
    "Example",
    "Remediation",
    "References",
];

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

/// A rule's documentation, read from its doc comment.
impl RuleMeta {
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
    use gpu_trust_model::{Layer, Severity, Trust};

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
            Reports::SecretEnvironment,
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
