//! `gpu-trust explain CODE`: one rule's documentation, from the registry; `gpu-trust explain terms`:
//! the glossary of the words the reports use.

use crate::output::{write_output, INPUT_ERROR};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_report::RuleDoc;
use gpu_trust_rules::{registry, rule, SeverityRule};
use std::path::PathBuf;
use std::process::ExitCode;

/// Print a rule's documentation: what it detects, why it matters, an example, the remediation and
/// the references behind it; or, for `terms`, the glossary of trust levels, severities,
/// certainties, layers, mechanisms, device properties and contract kinds.
///
/// CODE is a rule code (GT101, case-insensitive), a rule name (untrusted-share-mps) or `terms`. An
/// unknown code exits 2 and suggests close ones.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The rule's code or name, or `terms` for the glossary.
    #[arg(value_name = "CODE")]
    pub code: String,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let wanted = args.code.trim();
    if wanted.eq_ignore_ascii_case("terms") {
        write_output(args.output.as_deref(), &terms())?;
        return Ok(ExitCode::SUCCESS);
    }
    let found = rule(wanted).or_else(|| {
        registry()
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(wanted))
    });
    let Some(meta) = found else {
        let close = suggestions(wanted);
        if close.is_empty() {
            crate::output::eprint_error(format!(
                "no rule `{wanted}`; `gpu-trust rules` lists them"
            ));
        } else {
            crate::output::eprint_error(format!(
                "no rule `{wanted}`; did you mean {}?",
                close.join(", ")
            ));
        }
        return Ok(ExitCode::from(INPUT_ERROR));
    };
    let doc = RuleDoc::from(meta);
    let text = format!(
        "{} {}\nlayer: {} · severity: {}\n{}\n\n{}\n\n{}\n",
        doc.code,
        doc.name,
        doc.layer,
        doc.severity_rule,
        severity_words(&meta.severity),
        doc.documentation.trim_end(),
        "Terms (trust levels, severities, certainties such as [permitted], mechanisms, \
         \"separated by\", contract kinds): gpu-trust explain terms"
    );
    write_output(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
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

/// Codes and names within a small edit distance of `wanted`, or sharing its prefix, best first.
fn suggestions(wanted: &str) -> Vec<String> {
    let w = wanted.to_ascii_lowercase();
    let mut scored: Vec<(usize, &str)> = registry()
        .iter()
        .filter_map(|r| {
            let code = r.code.to_ascii_lowercase();
            let by_code = distance(&w, &code);
            let by_name = distance(&w, r.name);
            let prefix = w.len() >= 3 && (code.starts_with(&w) || r.name.starts_with(w.as_str()));
            let best = by_code.min(by_name);
            let limit = (w.chars().count() / 3).clamp(1, 3);
            (best <= limit || prefix).then_some((if prefix { 0 } else { best }, r.code))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(5)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust explain terms
  gpu-trust explain GT101
  gpu-trust explain fraction-is-accounting
  gpu-trust rules --format json | jq -r '.rules[].code' | xargs -n1 gpu-trust explain";

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

    #[test]
    fn edit_distance() {
        assert_eq!(distance("gt101", "gt101"), 0);
        assert_eq!(distance("gt10", "gt101"), 1);
        assert_eq!(distance("gt110", "gt101"), 2);
        assert_eq!(distance("", "abc"), 3);
    }
}
