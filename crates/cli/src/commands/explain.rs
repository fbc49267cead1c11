//! `gpu-trust explain CODE`: one rule's documentation, from the registry; `gpu-trust explain terms`:
//! the glossary of the words the reports use. Both are written by `gpu_trust_report::explain`; this
//! module finds the rule, or suggests close ones.

use crate::output::{write_output, INPUT_ERROR};
use gpu_trust_report::explain;
use gpu_trust_rules::{registry, rule};
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
        write_output(args.output.as_deref(), &explain::terms())?;
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
    write_output(args.output.as_deref(), &explain::rule(meta))?;
    Ok(ExitCode::SUCCESS)
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
    fn edit_distance() {
        assert_eq!(distance("gt101", "gt101"), 0);
        assert_eq!(distance("gt10", "gt101"), 1);
        assert_eq!(distance("gt110", "gt101"), 2);
        assert_eq!(distance("", "abc"), 3);
    }
}
