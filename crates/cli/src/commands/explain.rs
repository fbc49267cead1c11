//! `gpu-trust explain CODE`: one rule's documentation, from the registry; `gpu-trust explain terms`:
//! the glossary of the words the reports use. Both are written by `gpu_trust_report::explain`; this
//! module finds the rule, or suggests close ones.

use crate::output::{self, Format, OutputArgs};
use gpu_trust_report::explain;
use gpu_trust_rules::{registry, rule};
use std::process::ExitCode;

/// Print a rule's documentation, or the glossary (`terms`).
///
/// Print a rule's documentation: what it detects, why it matters, an example, the remediation and
/// the references behind it; or, for `terms`, the glossary of trust levels, severities,
/// certainties, layers, mechanisms, device properties and contract kinds.
///
/// CODE is a rule code (GT101, case-insensitive), a rule name (untrusted-share-mps) or `terms`. An
/// unknown code exits 2 and suggests close ones.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", |a| output::offer(FORMATS)(a).hide(true)))]
pub struct Args {
    /// The rule's code or name, or `terms` for the glossary.
    #[arg(value_name = "CODE")]
    pub code: String,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The documentation as text: one format, so `-o` is not offered.
const FORMATS: &[Format] = &[Format::Table];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let targets = args.output.targets(FORMATS)?;
    let wanted = args.code.trim();
    if wanted.eq_ignore_ascii_case("terms") {
        return output::write_targets(&targets, output::CLEAN, |_| Ok(explain::terms()));
    }
    let found = rule(wanted).or_else(|| {
        registry()
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(wanted))
    });
    let Some(meta) = found else {
        let close = suggestions(wanted);
        if close.is_empty() {
            anyhow::bail!("no rule `{wanted}`; `gpu-trust rules` lists them");
        }
        anyhow::bail!("no rule `{wanted}`; did you mean {}?", close.join(", "));
    };
    output::write_targets(&targets, output::CLEAN, |_| Ok(explain::rule(meta)))
}

/// The codes of the rules whose code or name is close to `wanted` ([`closest`]).
fn suggestions(wanted: &str) -> Vec<String> {
    let names = registry().iter().flat_map(|r| [r.code, r.name]);
    let mut codes: Vec<String> = Vec::new();
    for close in closest(wanted, names) {
        if let Some(r) = registry()
            .iter()
            .find(|r| r.code == close || r.name == close)
        {
            if !codes.iter().any(|c| c == r.code) {
                codes.push(r.code.to_string());
            }
        }
    }
    codes
}

/// Up to five of `names` within a small edit distance of `wanted` (a third of its length, 1 to 3),
/// or starting with it, closest first, letter case aside: what a "did you mean" offers, here and
/// for a tenant's name (`audit --pair`, `--view`).
pub(crate) fn closest<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let w = wanted.to_lowercase();
    let limit = (w.chars().count() / 3).clamp(1, 3);
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let prefix = w.chars().count() >= 3 && lower.starts_with(&w);
            let d = distance(&w, &lower);
            (d <= limit || prefix).then_some((if prefix { 0 } else { d }, name))
        })
        .collect();
    scored.sort();
    scored.dedup();
    scored.into_iter().take(5).map(|(_, n)| n).collect()
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
    fn close_names_come_first_and_far_ones_not_at_all() {
        let tenants = ["acme", "globex", "initech", "umbrella"];
        assert_eq!(closest("globx", tenants), ["globex"]);
        assert_eq!(closest("ACME", tenants), ["acme"]);
        assert_eq!(closest("umb", tenants), ["umbrella"]);
        assert!(closest("zzzzzz", tenants).is_empty());
        assert!(suggestions("gt1O1").contains(&"GT101".to_string()));
    }

    #[test]
    fn edit_distance() {
        assert_eq!(distance("gt101", "gt101"), 0);
        assert_eq!(distance("gt10", "gt101"), 1);
        assert_eq!(distance("gt110", "gt101"), 2);
        assert_eq!(distance("", "abc"), 3);
    }
}
