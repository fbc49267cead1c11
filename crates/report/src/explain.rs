//! `gpu-trust explain`: one rule's documentation as text, from the registry, and the glossary of
//! the words the reports use (`terms.md`, its list of mechanisms from the isolation model).

use crate::RuleDoc;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_rules::{RuleMeta, SeverityRule};

/// One rule's documentation: code and name, layer and severity (in words), the documentation,
/// and where the glossary is.
pub fn rule(meta: &RuleMeta) -> String {
    let doc = RuleDoc::from(meta);
    format!(
        "{} {}\nlayer: {} · severity: {}\n{}\n\n{}\n\n{}\n",
        doc.code,
        doc.name,
        doc.layer,
        doc.severity_rule,
        severity_words(&meta.severity),
        doc.documentation.trim_end(),
        "Terms (trust levels, severities, certainties such as [permitted], mechanisms, \
         \"separated by\", contract kinds): gpu-trust explain terms"
    )
}

/// The severity line in words: how the trust between the tenants decides a finding's severity.
fn severity_words(rule: &SeverityRule) -> String {
    match rule {
        SeverityRule::Fixed(s) => format!("({s} whatever the trust between the tenants)"),
        SeverityRule::ByTrust { none, limited } => format!(
            "(by the trust level between the tenants involved: {none} between tenants that do not \
             trust each other, {limited} between tenants of limited trust, no finding between \
             tenants of full trust)"
        ),
        SeverityRule::ByNodeSharing { shared, otherwise } => format!(
            "({shared} when tenants of less than full trust share the node, {otherwise} otherwise)"
        ),
    }
}

/// The glossary (`gpu-trust explain terms`), its list of mechanisms from the isolation model.
pub fn terms() -> String {
    let width = Mechanism::ALL
        .iter()
        .map(|m| m.as_str().len())
        .max()
        .unwrap_or(0);
    let mechanisms: Vec<String> = Mechanism::ALL
        .iter()
        .map(|m| format!("  {:<width$}   {}", m.as_str(), m.title()))
        .collect();
    include_str!("terms.md").replace("{mechanisms}", &mechanisms.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glossary_names_every_word_of_the_vocabulary() {
        use gpu_trust_model::isolation::{Enforcement, Property};
        use gpu_trust_model::{Certainty, Layer, Severity, Trust};
        let text = terms();
        let mut words: Vec<&str> = Vec::new();
        words.extend([Trust::None, Trust::Limited, Trust::Full].map(Trust::as_str));
        words.extend(
            [
                Certainty::Observed,
                Certainty::Possible,
                Certainty::Permitted,
            ]
            .map(Certainty::as_str),
        );
        words.extend(Severity::ALL.map(Severity::as_str));
        words.extend(Layer::ALL.map(Layer::as_str));
        words.extend(Mechanism::ALL.map(Mechanism::as_str));
        words.extend(Property::ALL.map(Property::as_str));
        words.extend(
            [
                Enforcement::Separate,
                Enforcement::LimitedByKernel,
                Enforcement::LimitedInSoftware,
                Enforcement::Shared,
                Enforcement::NotEnforced,
            ]
            .map(Enforcement::as_str),
        );
        words.extend(gpu_trust_policy::Contract::ALL.map(gpu_trust_policy::Contract::as_str));
        for word in words {
            assert!(
                text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .any(|w| w == word),
                "the glossary does not explain `{word}`"
            );
        }
        assert!(!text.contains("{mechanisms}"));
        assert!(text.contains("separated by"));
    }
}
