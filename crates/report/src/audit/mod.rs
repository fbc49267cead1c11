//! The audit report (`gpu-trust/audit/v2`) in each of its output formats, one module per format, and
//! [`render`], the one place a format is chosen: every caller (`gpu-trust audit`, each `--output`
//! of it) hands over the report, the registry's [`RuleDoc`]s and one [`Options`], the settings
//! resolved once, and gets the format's bytes.
//!
//! - [`table`]: the terminal report, its findings worst first across the layers (each naming its
//!   layer), with what tenants share, the blast radius and a summary line, wrapped at the terminal's
//!   width with the commands of fixes whole on their own lines; ANSI colour only when asked for.
//! - [`html`]: one self-contained HTML page: summary, who-can-hurt-whom matrix, findings, pairs,
//!   shared things, GPU drawings.
//! - [`json`]: the report's serde shape, pretty-printed; the same report gives byte-identical text.
//! - [`sarif`]: SARIF 2.1.0 as GitHub code scanning reads it (one descriptor per rule, the severity
//!   on each result, stable fingerprints, URIs relative to the repository root, within GitHub's
//!   limits).
//! - [`markdown`]: a pull-request summary: verdict, findings worst first with their fixes, links to
//!   files and rule pages, within a comment's size.
//! - [`junit`]: a test case per rule and shared thing, failures at or above the threshold.
//! - [`prometheus`]: the metrics `gpu-trust serve` exposes (not a `--format`: it needs the serving
//!   process's own counters).
//! - [`coverage`]: the coverage section of each format and the partial-audit message.
//! - [`summary`]: `--summary`'s rows, per tenant and per GPU node pool.
//! - [`fix_first`]: what to fix first in words, which the table, Markdown and HTML open with after
//!   the verdict, and the files `--emit-fixes` writes.

pub mod coverage;
pub mod fix_first;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod prometheus;
pub mod sarif;
pub mod summary;
pub mod table;

use crate::{AuditReport, RuleDoc};
use gpu_trust_model::Severity;
use markdown::{FileLinks, MarkdownOptions};
use sarif::SarifOptions;
use std::io;
use std::path::PathBuf;
use table::{Hidden, TableOptions};

/// The formats the audit report is written in (`--format`, `--output FORMAT=FILE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    Table,
    Json,
    Sarif,
    Junit,
    Markdown,
    Html,
}

impl Format {
    /// Whether the format places the report's objects in the repository (file URIs, links), so the
    /// caller must give [`Options::place`].
    pub fn needs_place(self) -> bool {
        matches!(self, Format::Sarif | Format::Markdown)
    }

    /// Whether the format shows what to fix first (the report's `actions`).
    pub fn shows_actions(self) -> bool {
        matches!(
            self,
            Format::Table | Format::Json | Format::Markdown | Format::Html
        )
    }

    /// Whether the format draws the GPUs, from the audit's layout (`AuditOptions::layout`).
    pub fn draws_gpus(self) -> bool {
        self == Format::Html
    }
}

/// What the formats read besides the report and the registry, resolved once by the caller.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Findings at or above this severity that are not accepted fail the run; `None`: never
    /// (JUnit failures, the Markdown verdict).
    pub fail_at: Option<Severity>,
    /// Findings below this severity are left out of the table and the Markdown summary, and counted.
    pub min_severity: Option<Severity>,
    /// Accepted findings are shown in the table and the Markdown summary (else counted).
    pub show_accepted: bool,
    /// Rules the configuration disables, with the reason (JUnit skips their test cases).
    pub disabled: Vec<(String, String)>,
    /// Findings of the disabled rules, left out of the report (counted by the table and Markdown).
    pub disabled_findings: usize,
    /// ANSI colour in the table.
    pub colour: bool,
    /// The columns the table's prose wraps at.
    pub width: usize,
    /// Where the report's files are, for SARIF URIs and Markdown links.
    pub place: Option<Place>,
    /// The table and the Markdown summary give a row per tenant and per node pool instead of the
    /// findings (`--summary`).
    pub summary: bool,
}

/// Where the report's objects are in the repository, and the tool that wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The tool's version (SARIF's driver, the rule pages' tag).
    pub version: String,
    /// The directory the input paths of the report are relative to (the current directory), absolute.
    pub working_dir: PathBuf,
    /// The repository root URIs and links are made relative to, absolute.
    pub root: PathBuf,
    /// Put before each Markdown link's relative path (`--link-base`).
    pub link_base: String,
    /// The path standard input stands for (`--stdin-filename`).
    pub stdin_name: Option<String>,
    /// Where SARIF points a finding that names no object (the policy file, or the first input).
    pub fallback_file: Option<String>,
}

/// `report` with the findings a reader asked not to see left out (below `min_severity`, or accepted
/// unless `show_accepted`), and what was left out, for the formats that say so in a line.
pub fn shown(
    report: &AuditReport,
    min_severity: Option<Severity>,
    show_accepted: bool,
) -> (AuditReport, Hidden) {
    let mut hidden = Hidden {
        min_severity,
        ..Hidden::default()
    };
    let mut shown = AuditReport {
        schema: report.schema,
        summary: report.summary.clone(),
        coverage: report.coverage.clone(),
        tenants: report.tenants.clone(),
        findings: Vec::new(),
        groups: report.groups.clone(),
        blast_radius: report.blast_radius.clone(),
        matrix: report.matrix.clone(),
        skipped: report.skipped.clone(),
        disabled_rules: report.disabled_rules.clone(),
        pair: None,
        advisory_data: report.advisory_data.clone(),
        pools: report.pools.clone(),
        layout: Vec::new(),
        fix_first: report.fix_first.clone(),
        actions: report.actions.clone(),
        baseline: report.baseline.clone(),
        provenance: report.provenance.clone(),
        verdict: report.verdict.clone(),
    };
    for f in &report.findings {
        if min_severity.is_some_and(|floor| f.severity < floor) {
            hidden.below += 1;
        } else if f.accepted.is_some() && !show_accepted {
            hidden.accepted += 1;
        } else {
            shown.findings.push(f.clone());
        }
    }
    (shown, hidden)
}

/// Writes `report` in `format` to `out`. A format that places objects in the repository (SARIF,
/// Markdown) without [`Options::place`] is an `InvalidInput` error.
pub fn render(
    format: Format,
    report: &AuditReport,
    docs: &[RuleDoc<'_>],
    options: &Options,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let filtered = || {
        let (shown, mut hidden) = shown(report, options.min_severity, options.show_accepted);
        hidden.disabled = options.disabled_findings;
        (shown, hidden)
    };
    let place = || {
        options.place.as_ref().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "this format needs to know where the report's files are",
            )
        })
    };
    let text = match format {
        Format::Json => return Ok(json::write(report, out)?),
        Format::Table => {
            let (shown, hidden) = filtered();
            let options = TableOptions {
                colour: options.colour,
                width: options.width,
                hidden,
                summary: options.summary,
            };
            table::render(&shown, &options)
        }
        Format::Junit => {
            let options = junit::JunitOptions {
                fail_at: options.fail_at,
                disabled: options.disabled.clone(),
            };
            junit::render(report, docs, &options)
        }
        Format::Markdown => {
            let (shown, hidden) = filtered();
            let place = place()?;
            let options = MarkdownOptions {
                fail_at: options.fail_at,
                hidden,
                links: Some(FileLinks {
                    working_dir: place.working_dir.clone(),
                    root: place.root.clone(),
                    base: place.link_base.clone(),
                    stdin_name: place.stdin_name.clone(),
                }),
                rule_pages: Some(crate::rule_pages_url(&place.version)),
                summary: options.summary,
                ..MarkdownOptions::new()
            };
            markdown::render(&shown, docs, &options)
        }
        Format::Sarif => {
            let place = place()?;
            let mut options = SarifOptions::new(&place.version, place.working_dir.clone());
            options.root = place.root.clone();
            options.fallback_file = place.fallback_file.clone();
            options.stdin_name = place.stdin_name.clone();
            sarif::render(report, docs, &options)?
        }
        Format::Html => html::render(report, docs),
    };
    out.write_all(text.as_bytes())
}

/// [`render`] into a string (`gpu-trust serve` keeps its renderings in memory).
pub fn render_text(
    format: Format,
    report: &AuditReport,
    docs: &[RuleDoc<'_>],
    options: &Options,
) -> io::Result<String> {
    let mut bytes = Vec::new();
    render(format, report, docs, options, &mut bytes)?;
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
