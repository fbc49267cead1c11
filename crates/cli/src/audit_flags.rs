//! The values of the audit's flags that the configuration file (`config.rs`) sets too: the
//! `--fail-on` threshold, severities and diagnostic codes (the formats and `--output` targets are
//! every command's, in `output.rs`). A leaf module, so the command and the configuration reader both
//! read it and neither imports the other.

use crate::output::Format;
use gpu_trust_model::Severity;

/// The formats the audit writes (`-o`, the configuration file's `format` and `outputs`): those the
/// report crate renders ([`Format::report`]), table first, the default.
pub const FORMATS: &[Format] = &[
    Format::Table,
    Format::Json,
    Format::Sarif,
    Format::Junit,
    Format::Markdown,
    Format::Html,
];

/// The `--fail-on` threshold: a severity, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// Fail on a finding of this severity or a higher one.
    AtOrAbove(Severity),
    /// Never fail on findings (unusable input still exits 2).
    Never,
}

impl FailOn {
    /// The default threshold.
    pub const DEFAULT: FailOn = FailOn::AtOrAbove(Severity::High);

    /// Parses `critical`..`info` or `never` (any letter case).
    pub fn parse(s: &str) -> Option<FailOn> {
        let s = s.to_ascii_lowercase();
        if s == "never" {
            return Some(FailOn::Never);
        }
        Severity::parse(&s).map(FailOn::AtOrAbove)
    }
}

/// How a threshold from the configuration file is more lenient than the default, in words; `None`
/// when it is not.
pub(crate) fn relaxed(fail_on: FailOn) -> Option<String> {
    match fail_on {
        FailOn::Never => Some("never".to_string()),
        FailOn::AtOrAbove(s) if Some(s) > fail_at(FailOn::DEFAULT) => Some(s.to_string()),
        FailOn::AtOrAbove(_) => None,
    }
}

/// The lowest severity that fails the run, or `None` for `never`.
pub(crate) fn fail_at(fail_on: FailOn) -> Option<Severity> {
    match fail_on {
        FailOn::AtOrAbove(floor) => Some(floor),
        FailOn::Never => None,
    }
}

/// `--fail-on`'s values, listed in the help with what each does.
pub(crate) fn fail_on_parser() -> impl clap::builder::TypedValueParser<Value = FailOn> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new([
        PossibleValue::new("critical").help("fail on critical findings only"),
        PossibleValue::new("high").help("fail on high or critical findings (the default)"),
        PossibleValue::new("medium").help("fail on medium findings or worse"),
        PossibleValue::new("low").help("fail on low findings or worse"),
        PossibleValue::new("info").help("fail on any finding"),
        PossibleValue::new("never").help("report findings, never exit 1 for them"),
    ])
    .map(|s| FailOn::parse(&s).unwrap_or(FailOn::DEFAULT))
}

pub(crate) fn parse_severity(s: &str) -> Result<Severity, String> {
    Severity::parse(&s.to_ascii_lowercase())
        .ok_or_else(|| format!("unknown severity `{s}`; one of critical, high, medium, low, info"))
}

/// A diagnostic code for `--silence`: one of the documented codes.
pub fn parse_code(s: &str) -> Result<gpu_trust_model::Code, String> {
    gpu_trust_model::Code::parse(s).ok_or_else(|| {
        format!("no diagnostic code `{s}`; docs/diagnostics.md lists them (e.g. missing-namespace)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum as _;

    #[test]
    fn the_audit_writes_every_format_the_report_crate_renders() {
        let rendered: Vec<Format> = Format::value_variants()
            .iter()
            .copied()
            .filter(|f| f.report().is_some())
            .collect();
        assert_eq!(FORMATS, rendered.as_slice());
    }
}
