//! SARIF 2.1.0, in the subset GitHub code scanning reads (its "SARIF support for code scanning" page):
//!
//! - One run whose driver lists every rule of the registry, with help from the rule documentation and
//!   tags, once per severity a finding of the rule can have. GitHub takes a result's security severity
//!   from its rule (`properties.security-severity` of the `reportingDescriptor`), not from the result,
//!   so a finding one step lower than the rule's top severity (`permitted`) refers to the rule's
//!   variant of that severity: `GT101` is critical, `GT101/high` the same rule at high. GitHub matches
//!   results across runs by rule id and fingerprint, so a finding whose severity changes (a permitted
//!   pair now scheduled together) closes its alert and opens one under the other descriptor.
//! - One result per finding, located at its first object's line with a URI relative to the stated
//!   root (`%SRCROOT%`, given in `originalUriBaseIds`; `--sarif-root`), and a partial fingerprint
//!   that hashes the rule and what the finding is about (the finding's `key`: the owning workload,
//!   not a pod of one ReplicaSet; the node group, not its nodes), so a rollout or a moved line keeps
//!   the alert. GitHub keeps at most 25,000 results a run; an audit reports per node group, not per
//!   pair of tenants, and stays far below.
//! - Accepted findings carry one suppression per acceptance, with its reason and location (`inSource`
//!   for an annotation in the audited manifests, `external` for a policy entry); skipped input
//!   documents become error notifications of the invocation.

use crate::text::markdown_to_plain;
use crate::{AuditReport, RuleDoc};
use gpu_trust_model::Severity;
use gpu_trust_rules::report::{AcceptedEntry, Finding, FindingObject};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const SARIF_VERSION: &str = "2.1.0";

/// Where the SARIF's URIs are relative to, and how the tool names itself.
#[derive(Debug, Clone)]
pub struct SarifOptions {
    pub tool_name: String,
    pub tool_version: String,
    pub information_uri: String,
    /// The directory the input paths of the report are relative to (the current directory), absolute.
    pub working_dir: PathBuf,
    /// The repository root the URIs are made relative to, absolute (`--sarif-root`; default the
    /// working directory). Files outside it get absolute `file://` URIs.
    pub root: PathBuf,
    /// Where to point a finding that names no object (the policy file, say); without it such a
    /// finding has no location.
    pub fallback_file: Option<String>,
    /// The path standard input stands for (`--stdin-filename`); without it, `stdin`.
    pub stdin_name: Option<String>,
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
            root: working_dir.clone(),
            working_dir,
            fallback_file: None,
            stdin_name: None,
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

/// The id of the rule's descriptor for findings of `severity`: the code for the rule's top severity,
/// `CODE/severity` for another.
pub fn rule_id(rule: &RuleDoc<'_>, severity: Severity) -> String {
    if severity == rule.severity {
        rule.code.to_string()
    } else {
        format!("{}/{severity}", rule.code)
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
    // One descriptor per rule and severity, the rule's top severity first.
    let mut descriptors: Vec<Descriptor<'_>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for r in &sorted_rules {
        let mut severities = vec![r.severity];
        severities.extend(r.severities.iter().copied().filter(|s| *s != r.severity));
        for s in severities {
            let id = rule_id(r, s);
            index.insert(id.clone(), descriptors.len());
            descriptors.push(descriptor(r, id, s));
        }
    }
    let docs: HashMap<&str, &RuleDoc<'_>> = sorted_rules.iter().map(|r| (r.code, *r)).collect();

    let mut seen: HashMap<String, u32> = HashMap::new();
    let results = report
        .findings
        .iter()
        .map(|f| {
            let hash = fingerprint(f);
            let occurrence = seen.entry(hash.clone()).or_insert(0);
            *occurrence += 1;
            let id = match docs.get(f.rule.as_str()) {
                Some(doc) => rule_id(doc, f.severity),
                None => f.rule.clone(),
            };
            let rule_index = index.get(&id).copied();
            result(f, id, rule_index, format!("{hash}:{occurrence}"), options)
        })
        .collect();

    let mut notifications: Vec<serde_json::Value> = report
        .skipped
        .iter()
        .map(|s| Notification {
            level: "error",
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
    notifications.extend(crate::coverage::sarif_notifications(&report.coverage));
    if report.advisory_data.stale {
        notifications.push(serde_json::json!({
            "level": "warning",
            "message": {"text": report.advisory_data.line()},
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
    let log = Log {
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
                execution_successful: true,
                tool_execution_notifications: notifications,
            }],
            original_uri_base_ids: base_ids,
            column_kind: "unicodeCodePoints",
            results,
            properties: run_properties(report),
        }],
    };
    let mut text = serde_json::to_string_pretty(&log)?;
    text.push('\n');
    Ok(text)
}

/// The run's properties: the coverage, and the advisory data the audit used with its date.
fn run_properties(report: &AuditReport) -> serde_json::Value {
    let mut properties = crate::coverage::sarif_properties(&report.coverage);
    if let Some(map) = properties.as_object_mut() {
        map.insert(
            "gpu-trust/advisoryData".to_string(),
            serde_json::to_value(&report.advisory_data).unwrap_or_default(),
        );
    }
    properties
}

fn descriptor<'a>(r: &'a RuleDoc<'a>, id: String, severity: Severity) -> Descriptor<'a> {
    let full = r
        .section("What it detects")
        .map(markdown_to_plain)
        .unwrap_or_else(|| r.summary.to_string());
    let short = if severity == r.severity {
        r.summary.to_string()
    } else {
        format!("{} ({severity})", r.summary)
    };
    Descriptor {
        id,
        name: r.name,
        short_description: Message { text: short },
        full_description: Message { text: full },
        help: Help {
            text: markdown_to_plain(r.documentation),
            markdown: r.documentation,
        },
        default_configuration: Configuration {
            level: level(severity),
        },
        properties: DescriptorProperties {
            security_severity: security_severity(severity),
            precision: "high",
            problem_severity: match level(severity) {
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
    rule_id: String,
    rule_index: Option<usize>,
    fingerprint: String,
    options: &SarifOptions,
) -> SarifResult<'a> {
    let mut locations = Vec::new();
    let mut related = Vec::new();
    for (i, o) in f.objects.iter().enumerate() {
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
    SarifResult {
        rule_id,
        rule_index,
        level: level(f.severity),
        message: Message {
            text: format!("{}\nFix: {}", f.message, f.remediation),
        },
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
    let (uri, uri_base_id) = match artifact_uri(file, options) {
        Uri::Relative(uri) => (uri, Some(SRCROOT)),
        Uri::Absolute(uri) => (uri, None),
    };
    PhysicalLocation {
        artifact_location: ArtifactLocation { uri, uri_base_id },
        region,
    }
}

/// An artifact's URI: relative to the root, or absolute (outside the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uri {
    Relative(String),
    Absolute(String),
}

/// The root's absolute `file://` URI, ending in `/` as a base URI must.
fn root_uri(options: &SarifOptions) -> String {
    let mut uri = format!("file://{}", encode_path(&normalise(&options.root)));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// The URI of an input file: relative to the root when the file lies under it, else an absolute
/// `file://` URI. Standard input (`-`) is the path `--stdin-filename` names, else `stdin`.
pub fn artifact_uri(file: &str, options: &SarifOptions) -> Uri {
    let file = if file == "-" {
        options.stdin_name.as_deref().unwrap_or("stdin")
    } else {
        file
    };
    let path = Path::new(file);
    let absolute = normalise(&if path.is_absolute() {
        path.to_path_buf()
    } else {
        options.working_dir.join(path)
    });
    let root = normalise(&options.root);
    match absolute.strip_prefix(&root) {
        Ok(rel) => Uri::Relative(encode_path(rel)),
        Err(_) => Uri::Absolute(format!("file://{}", encode_path(&absolute))),
    }
}

/// `.` and `..` resolved without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Path components joined by `/`, each percent-encoded outside the URI's unreserved characters.
fn encode_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.components() {
        match c {
            Component::RootDir => out.push('/'),
            Component::Prefix(_) => {}
            other => {
                if !out.is_empty() && !out.ends_with('/') {
                    out.push('/');
                }
                for b in other.as_os_str().to_string_lossy().bytes() {
                    if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                        out.push(char::from(b));
                    } else {
                        out.push_str(&format!("%{b:02X}"));
                    }
                }
            }
        }
    }
    out
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
    id: String,
    name: &'a str,
    short_description: Message,
    full_description: Message,
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
    message: Message,
    locations: Vec<Location>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: String,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
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

    fn rel(s: &str) -> Uri {
        Uri::Relative(s.to_string())
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
    fn files_outside_the_root_get_file_uris() {
        let o = opts("/repo", "/repo");
        assert_eq!(
            artifact_uri("/tmp/dump.yaml", &o),
            Uri::Absolute("file:///tmp/dump.yaml".into())
        );
        assert_eq!(
            artifact_uri("../other/x.yaml", &o),
            Uri::Absolute("file:///other/x.yaml".into())
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
