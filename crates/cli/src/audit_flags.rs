//! The values of the audit's flags that the configuration file (`config.rs`) sets too: the output
//! formats, the `--fail-on` threshold and the `--output [FORMAT=]FILE` targets. A leaf module, so the
//! command and the configuration reader both read it and neither imports the other.

use gpu_trust_model::Severity;
use gpu_trust_report::audit::Format as ReportFormat;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Findings grouped by layer, what tenants share, blast radius and a summary line.
    Table,
    /// The report as `gpu-trust/audit/v2` JSON.
    Json,
    /// SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// JUnit XML for CI test tabs: a test case per rule and shared thing, failures at or above
    /// --fail-on.
    Junit,
    /// A short Markdown summary for a pull-request comment or a job summary, linking rules.
    Markdown,
    /// One self-contained HTML page (no network access): who can hurt whom, findings, GPU layouts.
    Html,
}

impl Format {
    /// The report crate's format this value names.
    pub fn report(self) -> ReportFormat {
        match self {
            Format::Table => ReportFormat::Table,
            Format::Json => ReportFormat::Json,
            Format::Sarif => ReportFormat::Sarif,
            Format::Junit => ReportFormat::Junit,
            Format::Markdown => ReportFormat::Markdown,
            Format::Html => ReportFormat::Html,
        }
    }
}

/// Where one rendering of the report goes (`--output [FORMAT=]FILE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTarget {
    /// `None`: the run's --format.
    pub format: Option<Format>,
    pub path: PathBuf,
}

/// `FORMAT=FILE` when the part before the first `=` is a format's name, else `FILE`.
pub(crate) fn parse_output(s: &str) -> Result<OutputTarget, String> {
    use clap::ValueEnum as _;
    if let Some((name, file)) = s.split_once('=') {
        if let Ok(format) = Format::from_str(name, true) {
            if file.is_empty() {
                return Err(format!("`{s}` names no file after `=`"));
            }
            return Ok(OutputTarget {
                format: Some(format),
                path: PathBuf::from(file),
            });
        }
    }
    if s.is_empty() {
        return Err("an empty file name".into());
    }
    Ok(OutputTarget {
        format: None,
        path: PathBuf::from(s),
    })
}

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
