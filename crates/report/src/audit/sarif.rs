//! SARIF 2.1.0, in the subset GitHub code scanning reads (its "SARIF support for code scanning" page,
//! <https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning>):
//!
//! - One run whose driver lists every rule of the registry once (`GT107`), with help from the rule
//!   documentation, tags, and `helpUri` pointing at the rule's page in the repository
//!   (`docs/rules/GT107.md` at the tool's version). GitHub matches results across runs by rule id and
//!   fingerprint, so the rule id never carries a severity: a finding whose severity changes (a
//!   permitted pair now scheduled together) updates its alert instead of closing it and opening one.
//! - One result per finding, with its own severity: `level` (which GitHub documents as overriding
//!   the rule's default level) and `properties.security-severity`. GitHub's documentation reads the
//!   security severity only from the rule (`reportingDescriptor.properties.security-severity`), so a
//!   rule's descriptor carries its highest severity: an alert is never ranked below what the rule
//!   can mean, and the result's level and properties say what this finding is.
//! - Locations at the first object's line, with a URI relative to the repository root (`%SRCROOT%`,
//!   given in `originalUriBaseIds`; `--sarif-root`, else the root of the git repository the command
//!   runs in), never an absolute path: a file outside the root is reached with `..` from it. A
//!   partial fingerprint hashes the rule and what the finding is about (the finding's `key`: the
//!   owning workload, not a pod of one ReplicaSet; the node group, not its nodes), so a rollout or a
//!   moved line keeps the alert.
//! - Within GitHub's limits (the same page and its "SARIF results exceed one or more limits"
//!   troubleshooting page): at most [`MAX_RESULTS`] results a run and [`MAX_LOCATIONS`] locations a
//!   result, and at most [`MAX_GZIPPED_BYTES`] once gzipped. What does not fit is left out, the least
//!   severe first, and a notification says how much and why.
//! - Accepted findings carry one suppression per acceptance, with its reason and location (`inSource`
//!   for an annotation in the audited manifests, `external` for a policy entry); skipped input
//!   documents and coverage gaps become notifications of the invocation, and a run that exits 2 (a
//!   partial audit not accepted) has `executionSuccessful: false`.

use crate::paths::{encode_path, normalise};
use crate::text::markdown_to_plain;
use crate::{AuditReport, RuleDoc};
use gpu_trust_model::report::{AcceptedEntry, Finding, FindingObject};
use gpu_trust_model::Severity;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::PathBuf;

const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const SARIF_VERSION: &str = "2.1.0";

/// Results GitHub code scanning accepts in one run ("Results per run: 25,000"); a run with more is
/// rejected whole.
pub const MAX_RESULTS: usize = 25_000;

/// Locations of one result (its location and related locations) that GitHub shows ("Location per
/// result: 1,000 ... Only 100 locations will be included").
pub const MAX_LOCATIONS: usize = 100;

/// The largest SARIF file GitHub accepts, gzipped ("For each gzip-compressed SARIF file, SARIF upload
/// supports a maximum size of 10 MB"): 10 MB read as 10,000,000 bytes, the smaller reading.
pub const MAX_GZIPPED_BYTES: usize = 10_000_000;

/// Where the SARIF's URIs are relative to, and how the tool names itself.
#[derive(Debug, Clone)]
pub struct SarifOptions {
    pub tool_name: String,
    pub tool_version: String,
    pub information_uri: String,
    /// The start of every rule page's URL (`helpUri` is this followed by `GT101.md`).
    pub help_base: String,
    /// The directory the input paths of the report are relative to (the current directory), absolute.
    pub working_dir: PathBuf,
    /// The repository root the URIs are made relative to, absolute (`--sarif-root`; the CLI's default
    /// is the root of the git repository of the working directory, else the working directory).
    pub root: PathBuf,
    /// Where to point a finding that names no object (the policy file, say); without it such a
    /// finding has no location.
    pub fallback_file: Option<String>,
    /// The path standard input stands for (`--stdin-filename`); without it, `stdin`.
    pub stdin_name: Option<String>,
    /// The most bytes the log may take gzipped ([`MAX_GZIPPED_BYTES`]; lower only in tests).
    pub max_gzipped_bytes: usize,
}

/// The id of the root the URIs are relative to (`originalUriBaseIds`).
pub const SRCROOT: &str = "%SRCROOT%";

impl SarifOptions {
    /// Options for `gpu-trust` at `version`, with URIs relative to `working_dir`.
    pub fn new(version: &str, working_dir: PathBuf) -> Self {
        SarifOptions {
            tool_name: "gpu-trust".to_string(),
            tool_version: version.to_string(),
            information_uri: env!("CARGO_PKG_REPOSITORY").to_string(),
            help_base: crate::rule_pages_url(version),
            root: working_dir.clone(),
            working_dir,
            fallback_file: None,
            stdin_name: None,
            max_gzipped_bytes: MAX_GZIPPED_BYTES,
        }
    }
}

/// The SARIF `security-severity` of a severity, on GitHub's scale (9.0+ critical, 7.0+ high, 4.0+ medium,
/// 0.1+ low).
pub fn security_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "9.5",
        Severity::High => "8.0",
        Severity::Medium => "5.5",
        Severity::Low => "3.0",
        Severity::Info => "0.5",
    }
}

/// The SARIF result level of a severity.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// The report as a SARIF 2.1.0 log, pretty-printed, ending in a newline.
pub fn render(
    report: &AuditReport,
    rules: &[RuleDoc<'_>],
    options: &SarifOptions,
) -> Result<String, serde_json::Error> {
    let mut sorted_rules: Vec<&RuleDoc<'_>> = rules.iter().collect();
    sorted_rules.sort_by(|a, b| a.code.cmp(b.code));
    let descriptors: Vec<Descriptor<'_>> = sorted_rules
        .iter()
        .map(|r| descriptor(r, options))
        .collect();
    let index: HashMap<&str, usize> = sorted_rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.code, i))
        .collect();

    let mut seen: HashMap<String, u32> = HashMap::new();
    let all: Vec<SarifResult<'_>> = report
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let hash = fingerprint(f);
            let occurrence = seen.entry(hash.clone()).or_insert(0);
            *occurrence += 1;
            let rule_index = index.get(f.rule.as_str()).copied();
            let mut r = result(f, rule_index, format!("{hash}:{occurrence}"), options);
            r.finding = i;
            r
        })
        .collect();

    let mut notifications: Vec<serde_json::Value> = report
        .skipped
        .iter()
        .map(|s| Notification {
            level: "error",
            descriptor: Some(DescriptorRef {
                id: s.code.as_str(),
            }),
            message: Message {
                text: format!("input document skipped, not audited: {}", s.error),
            },
            locations: vec![Location {
                physical_location: physical(&s.file, s.line, Some(s.column), options),
                message: None,
            }],
        })
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    notifications.extend(crate::audit::coverage::sarif_notifications(
        &report.coverage,
    ));
    if report.advisory_data.stale {
        notifications.push(serde_json::json!({
            "level": "warning",
            "message": {"text": crate::text::advisory_line(&report.advisory_data)},
        }));
    }

    let mut base_ids = BTreeMap::new();
    base_ids.insert(
        SRCROOT,
        BaseUri {
            uri: root_uri(options),
            description: Message {
                text:
                    "The root the artifact URIs are relative to (the repository root; --sarif-root)"
                        .to_string(),
            },
        },
    );
    let mut log = Log {
        schema: SARIF_SCHEMA,
        version: SARIF_VERSION,
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: &options.tool_name,
                    version: &options.tool_version,
                    semantic_version: &options.tool_version,
                    information_uri: &options.information_uri,
                    rules: descriptors,
                },
            },
            invocations: vec![Invocation {
                execution_successful: !crate::audit::coverage::exits_partial(&report.coverage),
                tool_execution_notifications: notifications,
            }],
            original_uri_base_ids: base_ids,
            column_kind: "unicodeCodePoints",
            results: Vec::new(),
            properties: run_properties(report),
        }],
    };

    // The results, within GitHub's limits: the count first, then the gzipped size.
    let order = keep_order(&report.findings);
    let total = all.len();
    let mut keep = total.min(MAX_RESULTS);
    let mut results: Vec<Option<SarifResult<'_>>> = all.into_iter().map(Some).collect();
    let mut text = render_kept(&mut log, &mut results, &order, keep, None)?;
    if text.len() > options.max_gzipped_bytes && gzipped_len(&text) > options.max_gzipped_bytes {
        // The most results that fit, by bisection (each try compresses the whole log once).
        let (mut fits, mut over) = (0usize, keep);
        while over - fits > 1 {
            let mid = fits + (over - fits) / 2;
            let t = render_kept(&mut log, &mut results, &order, mid, Some(total))?;
            if gzipped_len(&t) <= options.max_gzipped_bytes {
                fits = mid;
            } else {
                over = mid;
            }
        }
        keep = fits;
    }
    if keep < total {
        text = render_kept(&mut log, &mut results, &order, keep, Some(total))?;
    }
    Ok(text)
}

/// The log with the first `keep` findings of `order` as results (in report order), and, when some are
/// left out, a notification that says how many of `total`; pretty-printed, ending in a newline.
fn render_kept<'a>(
    log: &mut Log<'a>,
    results: &mut [Option<SarifResult<'a>>],
    order: &[usize],
    keep: usize,
    total: Option<usize>,
) -> Result<String, serde_json::Error> {
    let run = &mut log.runs[0];
    // Hand back the results of the last try, then take the ones kept now.
    for r in run.results.drain(..) {
        if let Some(slot) = results.get_mut(r.finding) {
            *slot = Some(r);
        }
    }
    let mut kept: Vec<usize> = order.iter().take(keep).copied().collect();
    kept.sort_unstable();
    run.results = kept
        .into_iter()
        .filter_map(|i| results.get_mut(i).and_then(Option::take))
        .collect();
    let notes = &mut run.invocations[0].tool_execution_notifications;
    notes.retain(|n| n["descriptor"]["id"] != CUT_ID);
    if let Some(total) = total.filter(|t| keep < *t) {
        notes.push(serde_json::json!({
            "descriptor": { "id": CUT_ID },
            "level": "error",
            "message": {
                "text": format!(
                    "{} of {total} findings are not in this SARIF log: GitHub code scanning accepts at most {MAX_RESULTS} results a run and {MAX_GZIPPED_BYTES} bytes gzipped; the least severe were left out (the JSON report has every finding)",
                    total - keep
                )
            }
        }));
    }
    let mut text = serde_json::to_string_pretty(&*log)?;
    text.push('\n');
    Ok(text)
}

/// The run's properties: the coverage, and the advisory data the audit used with its date.
fn run_properties(report: &AuditReport) -> serde_json::Value {
    let mut properties = crate::audit::coverage::sarif_properties(&report.coverage);
    if let Some(map) = properties.as_object_mut() {
        map.insert(
            "gpu-trust/advisoryData".to_string(),
            serde_json::to_value(&report.advisory_data).unwrap_or_default(),
        );
    }
    properties
}

/// The notification of results left out for GitHub's limits.
const CUT_ID: &str = "sarif/results-cut";

/// The findings' indexes in the order they are kept when not all fit: not accepted before accepted,
/// most severe first, then in report order.
fn keep_order(findings: &[Finding]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by_key(|i| {
        let f = &findings[*i];
        (f.accepted.is_some(), std::cmp::Reverse(f.severity), *i)
    });
    order
}

/// The size of `text` gzipped (at the default level, as an upload compresses it).
fn gzipped_len(text: &str) -> usize {
    let mut encoder =
        flate2::write::GzEncoder::new(ByteCount::default(), flate2::Compression::default());
    // A writer that only counts cannot fail.
    let _ = encoder.write_all(text.as_bytes());
    encoder.finish().map(|c| c.0).unwrap_or(usize::MAX)
}

/// A writer that counts what it is given.
#[derive(Default)]
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn descriptor<'a>(r: &'a RuleDoc<'a>, options: &SarifOptions) -> Descriptor<'a> {
    let full = r
        .section("What it detects")
        .map(markdown_to_plain)
        .unwrap_or_else(|| r.summary.to_string());
    Descriptor {
        id: r.code,
        name: r.name,
        short_description: Message {
            text: r.summary.to_string(),
        },
        full_description: Message { text: full },
        help_uri: format!("{}{}.md", options.help_base, r.code),
        help: Help {
            text: markdown_to_plain(r.documentation),
            markdown: r.documentation,
        },
        default_configuration: Configuration {
            level: level(r.severity),
        },
        properties: DescriptorProperties {
            security_severity: security_severity(r.severity),
            precision: "high",
            problem_severity: match level(r.severity) {
                "error" => "error",
                "warning" => "warning",
                _ => "recommendation",
            },
            tags: vec![
                "security".to_string(),
                "gpu".to_string(),
                "multi-tenancy".to_string(),
                r.layer.as_str().to_string(),
            ],
        },
    }
}

fn result<'a>(
    f: &'a Finding,
    rule_index: Option<usize>,
    fingerprint: String,
    options: &SarifOptions,
) -> SarifResult<'a> {
    let mut locations = Vec::new();
    let mut related = Vec::new();
    for (i, o) in f.objects.iter().take(MAX_LOCATIONS).enumerate() {
        let location = Location {
            physical_location: physical(&o.file, o.line, None, options),
            message: Some(Message {
                text: object_name(o),
            }),
        };
        if i == 0 {
            locations.push(location);
        } else {
            related.push(RelatedLocation { id: i, location });
        }
    }
    if locations.is_empty() {
        if let Some(file) = &options.fallback_file {
            locations.push(Location {
                physical_location: physical(file, 0, None, options),
                message: None,
            });
        }
    }
    let suppressions = f
        .accepted
        .as_ref()
        .map(|a| suppressions(a, options))
        .unwrap_or_default();
    let mut partial = BTreeMap::new();
    partial.insert("primaryLocationLineHash", fingerprint);
    let mut text = format!("{}\nFix: {}", f.message, f.remediation);
    if f.objects.len() > MAX_LOCATIONS {
        text.push_str(&format!(
            "\n{} more objects are not located here (the JSON report lists them all).",
            f.objects.len() - MAX_LOCATIONS
        ));
    }
    SarifResult {
        finding: 0,
        rule_id: &f.rule,
        rule_index,
        level: level(f.severity),
        message: Message { text },
        locations,
        related_locations: related,
        partial_fingerprints: partial,
        suppressions,
        properties: ResultProperties {
            severity: f.severity.as_str(),
            certainty: f.certainty.as_str(),
            security_severity: security_severity(f.severity),
            layer: f.layer.as_str(),
            key: &f.key,
            tenants: &f.tenants,
            pairs: f.pairs,
            nodes: &f.nodes,
            evidence: &f.evidence,
        },
    }
}

fn object_name(o: &FindingObject) -> String {
    match &o.namespace {
        Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
        None => format!("{} {}", o.kind, o.name),
    }
}

/// A stable 64-bit FNV-1a hash (hex) of the rule and the finding's key (what it is about: the owning
/// workload, the tenant, the node group, the API server), so that the same finding keeps its identity
/// across runs, rollouts and moved lines, whatever its severity or the tenants of its group.
pub fn fingerprint(f: &Finding) -> String {
    let mut h = Fnv::new();
    h.write(f.rule.as_bytes());
    h.write(&[0]);
    h.write(f.key.as_bytes());
    format!("{:016x}", h.0)
}

struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Fnv(Self::OFFSET)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

/// The suppressions of an accepted finding, one per place an acceptance is written: an annotation
/// on the audited manifest is `inSource`, a policy entry `external` (SARIF 2.1.0, 3.35.2), each with
/// its location. A finding accepted without a recorded place gets one `external` suppression.
fn suppressions(accepted: &AcceptedEntry, options: &SarifOptions) -> Vec<Suppression> {
    let justification = match &accepted.until {
        Some(until) => format!("{} (until {until})", accepted.reason),
        None => accepted.reason.clone(),
    };
    let suppression = |kind, location| Suppression {
        kind,
        status: "accepted",
        justification: justification.clone(),
        location,
    };
    if accepted.sources.is_empty() {
        return vec![suppression("external", None)];
    }
    accepted
        .sources
        .iter()
        .map(|source| {
            let kind = if source.from == "annotation" {
                "inSource"
            } else {
                "external"
            };
            let location = Location {
                physical_location: physical(
                    &source.file,
                    source.line,
                    Some(source.column),
                    options,
                ),
                message: None,
            };
            suppression(kind, Some(location))
        })
        .collect()
}

fn physical(
    file: &str,
    line: u32,
    column: Option<u32>,
    options: &SarifOptions,
) -> PhysicalLocation {
    let region = (line > 0).then(|| Region {
        start_line: line,
        start_column: column.filter(|c| *c > 0),
    });
    PhysicalLocation {
        artifact_location: ArtifactLocation {
            uri: artifact_uri(file, options),
            uri_base_id: SRCROOT,
        },
        region,
    }
}

/// The root's absolute `file://` URI, ending in `/` as a base URI must.
fn root_uri(options: &SarifOptions) -> String {
    let mut uri = format!("file://{}", encode_path(&normalise(&options.root)));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// The URI of an input file, relative to the root (`%SRCROOT%`): a file outside the root is reached
/// with `..` from it, so that no absolute path of the machine that ran the audit gets into the log.
/// Standard input (`-`) is the path `--stdin-filename` names, else `stdin`.
pub fn artifact_uri(file: &str, options: &SarifOptions) -> String {
    crate::paths::relative_uri(
        file,
        &options.working_dir,
        &options.root,
        options.stdin_name.as_deref(),
    )
}

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    invocations: Vec<Invocation>,
    original_uri_base_ids: BTreeMap<&'static str, BaseUri>,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
    properties: serde_json::Value,
}

#[derive(Serialize)]
struct BaseUri {
    uri: String,
    description: Message,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'a str,
    version: &'a str,
    semantic_version: &'a str,
    information_uri: &'a str,
    rules: Vec<Descriptor<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor<'a> {
    id: &'a str,
    name: &'a str,
    short_description: Message,
    full_description: Message,
    help_uri: String,
    help: Help<'a>,
    default_configuration: Configuration,
    properties: DescriptorProperties,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

#[derive(Serialize)]
struct Help<'a> {
    text: String,
    markdown: &'a str,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct DescriptorProperties {
    #[serde(rename = "security-severity")]
    security_severity: &'static str,
    precision: &'static str,
    #[serde(rename = "problem.severity")]
    problem_severity: &'static str,
    tags: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<serde_json::Value>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    /// The diagnostic's code, as the notification's descriptor.
    #[serde(skip_serializing_if = "Option::is_none")]
    descriptor: Option<DescriptorRef>,
    message: Message,
    locations: Vec<Location>,
}

/// A reference to a notification descriptor by its id (SARIF 2.1.0 §3.52): a diagnostic's code.
#[derive(Serialize)]
struct DescriptorRef {
    id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    /// The finding's index in the report (not written).
    #[serde(skip)]
    finding: usize,
    rule_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
    level: &'static str,
    message: Message,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<RelatedLocation>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
    properties: ResultProperties<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
}

#[derive(Serialize)]
struct RelatedLocation {
    id: usize,
    #[serde(flatten)]
    location: Location,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<u32>,
}

#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    status: &'static str,
    justification: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<Location>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties<'a> {
    severity: &'static str,
    certainty: &'static str,
    #[serde(rename = "security-severity")]
    security_severity: &'static str,
    layer: &'static str,
    key: &'a str,
    tenants: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pairs: Option<usize>,
    nodes: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    evidence: &'a [String],
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(cwd: &str, root: &str) -> SarifOptions {
        let mut o = SarifOptions::new("0.1.0", PathBuf::from(cwd));
        o.root = PathBuf::from(root);
        o
    }

    fn rel(s: &str) -> String {
        s.to_string()
    }

    #[test]
    fn uris_are_relative_to_the_root() {
        let o = opts("/repo", "/repo");
        assert_eq!(
            artifact_uri("examples/a/cluster.yaml", &o),
            rel("examples/a/cluster.yaml")
        );
        assert_eq!(artifact_uri("./examples/../x.yaml", &o), rel("x.yaml"));
        assert_eq!(
            artifact_uri("/repo/deploy/my pods.yaml", &o),
            rel("deploy/my%20pods.yaml")
        );
        let sub = opts("/repo/deploy", "/repo");
        assert_eq!(artifact_uri("pods.yaml", &sub), rel("deploy/pods.yaml"));
        assert_eq!(root_uri(&o), "file:///repo/");
    }

    #[test]
    fn files_outside_the_root_are_reached_from_it() {
        let o = opts("/work/repo", "/work/repo");
        assert_eq!(
            artifact_uri("/tmp/dump.yaml", &o),
            rel("../../tmp/dump.yaml")
        );
        assert_eq!(artifact_uri("../other/x.yaml", &o), rel("../other/x.yaml"));
        assert_eq!(
            artifact_uri("/work/repo2/x.yaml", &o),
            rel("../repo2/x.yaml")
        );
    }

    #[test]
    fn standard_input_is_named() {
        let mut o = opts("/repo/charts", "/repo");
        assert_eq!(artifact_uri("-", &o), rel("charts/stdin"));
        o.stdin_name = Some("rendered/app.yaml".into());
        assert_eq!(artifact_uri("-", &o), rel("charts/rendered/app.yaml"));
    }

    #[test]
    fn severities_map_to_github_bands() {
        let bands: Vec<f64> = Severity::ALL
            .iter()
            .map(|s| security_severity(*s).parse().unwrap())
            .collect();
        assert!(bands[0] >= 9.0, "critical");
        assert!((7.0..9.0).contains(&bands[1]), "high");
        assert!((4.0..7.0).contains(&bands[2]), "medium");
        assert!((0.1..4.0).contains(&bands[3]), "low");
        assert!(bands[4] < bands[3], "info below low");
    }
}
