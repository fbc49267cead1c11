//! SARIF 2.1.0, in the subset GitHub code scanning reads: one run whose driver lists every rule of the
//! registry (with help from the rule documentation, `security-severity` and tags), and one result per
//! finding with a repo-relative location at the object's real line and a partial fingerprint that stays
//! the same when lines move. Accepted findings carry an external suppression with the policy's reason;
//! skipped input documents become error notifications of the invocation.

use crate::text::markdown_to_plain;
use crate::{AuditReport, RuleDoc};
use gpu_trust_model::Severity;
use gpu_trust_rules::report::{Finding, FindingObject};
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
}

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
    let index: HashMap<&str, usize> = sorted_rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.code, i))
        .collect();

    let mut seen: HashMap<String, u32> = HashMap::new();
    let results = report
        .findings
        .iter()
        .map(|f| {
            let hash = fingerprint(f);
            let occurrence = seen.entry(hash.clone()).or_insert(0);
            *occurrence += 1;
            result(
                f,
                index.get(f.rule.as_str()).copied(),
                format!("{hash}:{occurrence}"),
                options,
            )
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
                    rules: sorted_rules.iter().map(|r| descriptor(r)).collect(),
                },
            },
            invocations: vec![Invocation {
                execution_successful: true,
                tool_execution_notifications: notifications,
            }],
            column_kind: "unicodeCodePoints",
            results,
            properties: crate::coverage::sarif_properties(&report.coverage),
        }],
    };
    let mut text = serde_json::to_string_pretty(&log)?;
    text.push('\n');
    Ok(text)
}

fn descriptor<'a>(r: &'a RuleDoc<'a>) -> Descriptor<'a> {
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
        .map(|a| {
            vec![Suppression {
                kind: "external",
                status: "accepted",
                justification: match &a.until {
                    Some(until) => format!("{} (until {until})", a.reason),
                    None => a.reason.clone(),
                },
            }]
        })
        .unwrap_or_default();
    let mut partial = BTreeMap::new();
    partial.insert("primaryLocationLineHash", fingerprint);
    SarifResult {
        rule_id: &f.rule,
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
            tenants: &f.tenants,
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

/// A stable 64-bit FNV-1a hash (hex) of the rule, the tenants and the first object: what makes a
/// finding the same finding across runs, whatever line the object has moved to.
pub fn fingerprint(f: &Finding) -> String {
    let mut h = Fnv::new();
    h.write(f.rule.as_bytes());
    h.write(&[0]);
    for t in &f.tenants {
        h.write(t.as_bytes());
        h.write(&[0x1f]);
    }
    h.write(&[0]);
    if let Some(o) = f.objects.first() {
        h.write(o.kind.as_bytes());
        h.write(&[0]);
        h.write(o.namespace.as_deref().unwrap_or("").as_bytes());
        h.write(&[0]);
        h.write(o.name.as_bytes());
    } else {
        for n in &f.nodes {
            h.write(n.as_bytes());
            h.write(&[0x1f]);
        }
    }
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
        },
        region,
    }
}

/// The URI of an input file: relative to the root when the file lies under it, else an absolute
/// `file://` URI. Standard input (`-`) stays `-`.
pub fn artifact_uri(file: &str, options: &SarifOptions) -> String {
    if file == "-" {
        return "-".to_string();
    }
    let path = Path::new(file);
    let absolute = normalise(&if path.is_absolute() {
        path.to_path_buf()
    } else {
        options.working_dir.join(path)
    });
    let root = normalise(&options.root);
    match absolute.strip_prefix(&root) {
        Ok(rel) => encode_path(rel),
        Err(_) => format!("file://{}", encode_path(&absolute)),
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
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
    properties: serde_json::Value,
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
struct ArtifactLocation {
    uri: String,
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
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties<'a> {
    severity: &'static str,
    certainty: &'static str,
    #[serde(rename = "security-severity")]
    security_severity: &'static str,
    layer: &'static str,
    tenants: &'a [String],
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

    #[test]
    fn uris_are_relative_to_the_root() {
        let o = opts("/repo", "/repo");
        assert_eq!(
            artifact_uri("examples/a/cluster.yaml", &o),
            "examples/a/cluster.yaml"
        );
        assert_eq!(artifact_uri("./examples/../x.yaml", &o), "x.yaml");
        assert_eq!(
            artifact_uri("/repo/deploy/my pods.yaml", &o),
            "deploy/my%20pods.yaml"
        );
        let sub = opts("/repo/deploy", "/repo");
        assert_eq!(artifact_uri("pods.yaml", &sub), "deploy/pods.yaml");
    }

    #[test]
    fn files_outside_the_root_get_file_uris() {
        let o = opts("/repo", "/repo");
        assert_eq!(artifact_uri("/tmp/dump.yaml", &o), "file:///tmp/dump.yaml");
        assert_eq!(artifact_uri("../other/x.yaml", &o), "file:///other/x.yaml");
        assert_eq!(artifact_uri("-", &o), "-");
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
