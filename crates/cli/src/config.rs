//! `.gpu-trust.yaml`: a repository's defaults for `gpu-trust audit` (policy, format, failure
//! threshold, disabled rules, report files), found in the working directory or at the root of the
//! repository it is in, or named with `--config FILE`.
//!
//! Read like the policy: through the source crate's bounded, located reader, unknown fields are
//! errors, and every error names file, line and column; all of them are collected before the run
//! stops. The command line beats the file.

use crate::audit_flags::{FailOn, FORMATS};
use crate::output::Format;
use clap::ValueEnum as _;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, Severity};
use gpu_trust_source::{parse_document, spanned_location, Limits};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// The file name looked for.
pub const FILE_NAME: &str = ".gpu-trust.yaml";
/// `apiVersion` of the file (optional).
pub const API_VERSION: &str = "gpu-trust/v1";
/// `kind` of the file (optional).
pub const KIND: &str = "Config";
/// The most a configuration file may hold.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

type S<T> = Spanned<T>;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConfig {
    api_version: Option<S<String>>,
    kind: Option<S<String>>,
    policy: Option<S<String>>,
    format: Option<S<String>>,
    fail_on: Option<S<String>>,
    min_severity: Option<S<String>>,
    show_accepted: Option<bool>,
    #[serde(default)]
    silence: Vec<S<String>>,
    #[serde(default)]
    disabled_rules: Vec<S<RawDisabled>>,
    #[serde(default)]
    outputs: Vec<S<RawOutput>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawDisabled {
    rule: Option<S<String>>,
    reason: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawOutput {
    format: Option<S<String>>,
    file: Option<S<String>>,
}

/// A rule the configuration turns off, with the reason it gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisabledRule {
    /// The rule's code (a name in the file is resolved to its code).
    pub code: &'static str,
    pub reason: String,
    pub location: Location,
}

/// A validated configuration. Paths in it are relative to the file's folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// Where it was read from.
    pub file: PathBuf,
    pub policy: Option<PathBuf>,
    pub format: Option<Format>,
    pub fail_on: Option<FailOn>,
    /// Where `failOn` is written (the run announces a threshold below the default).
    pub fail_on_location: Option<Location>,
    pub min_severity: Option<Severity>,
    pub show_accepted: Option<bool>,
    pub disabled_rules: Vec<DisabledRule>,
    /// Diagnostic codes whose warnings are not printed (errors never are silenced).
    pub silence: Vec<Code>,
    /// Report files, inside the repository the file is in (see [`load`]), with where each is written.
    pub outputs: Vec<(Format, PathBuf, Location)>,
}

/// The configuration file that applies: `explicit` (`--config`), else `.gpu-trust.yaml` in `cwd`,
/// else in the root of the git repository `cwd` is in (the nearest folder up holding `.git`).
pub fn find(explicit: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_path_buf());
    }
    let here = cwd.join(FILE_NAME);
    if here.is_file() {
        return Some(here);
    }
    let root = repository_root(cwd)?;
    let there = root.join(FILE_NAME);
    there.is_file().then_some(there)
}

/// The root of the git repository `cwd` is in, as git finds it without `GIT_DIR`: the nearest folder
/// up holding `.git` (a folder, or a file in a worktree or submodule).
pub fn repository_root(cwd: &Path) -> Option<&Path> {
    cwd.ancestors().find(|d| d.join(".git").exists())
}

/// Reads and validates the file at `path`; every error comes back, located. Its report files must
/// stay inside the repository it is in (the nearest folder up holding `.git`, else its own folder),
/// through no symbolic link: a repository's file must not make a run write elsewhere on the machine
/// (`--output` on the command line may).
pub fn load(path: &Path) -> Result<Config, Vec<Diagnostic>> {
    let name = path.display().to_string();
    let text = crate::input::read(path, MAX_CONFIG_BYTES).map_err(|d| vec![d])?;
    let base = path.parent().unwrap_or(Path::new(""));
    let config = parse(&text, &name, base)?;
    let errors = outputs_outside(base, &config.outputs);
    if errors.is_empty() {
        Ok(config)
    } else {
        Err(errors)
    }
}

/// Errors for report files of the configuration that leave its repository, at their entries.
fn outputs_outside(base: &Path, outputs: &[(Format, PathBuf, Location)]) -> Vec<Diagnostic> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let absolute = |p: &Path| lexical(&cwd.join(p));
    let base = absolute(base);
    let root = repository_root(&base).unwrap_or(&base).to_path_buf();
    let mut errors = Vec::new();
    for (_, path, location) in outputs {
        let full = absolute(path);
        // Each step of the path as written, as the system follows it: `link/..` is the folder
        // above where the link points, not the folder holding the link, so no step inside the
        // repository may be a link.
        let written = cwd.join(path);
        let why = if !full.starts_with(&root) {
            Some(format!("is outside the repository ({})", root.display()))
        } else {
            written
                .ancestors()
                .filter(|a| {
                    let inside = lexical(a);
                    inside.starts_with(&root) && inside != root
                })
                .find(|p| {
                    p.symlink_metadata()
                        .is_ok_and(|m| m.file_type().is_symlink())
                })
                .map(|link| format!("goes through the symbolic link {}", link.display()))
        };
        if let Some(why) = why {
            let shown = path.display().to_string();
            errors.push(Diagnostic::error(Code::InvalidConfigFile,
                location.clone(),
                format!(
                    "report file {shown} {why}: a configuration file writes reports only inside its repository; give such a path with --output"
                ),
            ));
        }
    }
    errors
}

/// `path` with `.` and `..` taken away lexically.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Parses and validates configuration `text` read from `file`; relative paths are taken from `base`.
pub fn parse(text: &str, file: &str, base: &Path) -> Result<Config, Vec<Diagnostic>> {
    let raw = read_raw(text, file)?;
    let mut check = Check {
        file,
        base,
        errors: Vec::new(),
    };
    check.header(&raw);
    let mut config = Config {
        file: PathBuf::from(file),
        show_accepted: raw.show_accepted,
        ..Config::default()
    };
    config.policy = raw.policy.as_ref().and_then(|p| check.policy(p));
    config.format = raw.format.as_ref().and_then(|f| check.format(f));
    if let Some((fail_on, location)) = raw.fail_on.as_ref().and_then(|f| check.fail_on(f)) {
        config.fail_on = Some(fail_on);
        config.fail_on_location = Some(location);
    }
    config.silence = check.silence(&raw.silence);
    config.min_severity = raw
        .min_severity
        .as_ref()
        .and_then(|m| check.min_severity(m));
    config.disabled_rules = check.disabled_rules(&raw.disabled_rules);
    config.outputs = check.outputs(&raw.outputs);
    check.finish(config)
}

/// The file as written: only blank lines and comments are the defaults; else it is read through the
/// source crate's bounded reader (a syntax error or an unknown field stops the reading).
fn read_raw(text: &str, file: &str) -> Result<RawConfig, Vec<Diagnostic>> {
    let blank = text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    });
    if blank {
        return Ok(RawConfig::default());
    }
    let limits = Limits {
        max_file_bytes: MAX_CONFIG_BYTES,
        ..Limits::default()
    };
    Ok(parse_document::<Option<RawConfig>>(text, file, &limits)
        .map_err(|d| vec![d])?
        .unwrap_or_default())
}

/// The checks of one file's values: where the file is, and every error found so far.
struct Check<'a> {
    file: &'a str,
    base: &'a Path,
    errors: Vec<Diagnostic>,
}

impl Check<'_> {
    fn at<T>(&self, v: &S<T>) -> Location {
        spanned_location(self.file, v)
    }

    fn error(&mut self, location: Location, message: impl Into<String>) {
        self.errors.push(Diagnostic::error(
            Code::InvalidConfigFile,
            location,
            message,
        ));
    }

    /// `apiVersion` and `kind`, each optional, must name this file's format.
    fn header(&mut self, raw: &RawConfig) {
        if let Some(v) = &raw.api_version {
            if v.value != API_VERSION {
                self.error(
                    self.at(v),
                    format!("apiVersion must be `{API_VERSION}`, not `{}`", v.value),
                );
            }
        }
        if let Some(k) = &raw.kind {
            if k.value != KIND {
                self.error(
                    self.at(k),
                    format!("kind must be `{KIND}`, not `{}`", k.value),
                );
            }
        }
    }

    /// `policy`: a path, from the file's folder.
    fn policy(&mut self, p: &S<String>) -> Option<PathBuf> {
        if p.value.trim().is_empty() {
            self.error(self.at(p), "policy is an empty path");
            None
        } else {
            Some(relative(self.base, &p.value))
        }
    }

    /// A report format (`format`, and each output's).
    fn format(&mut self, f: &S<String>) -> Option<Format> {
        match Format::from_str(&f.value, true) {
            Ok(format) if FORMATS.contains(&format) => Some(format),
            _ => {
                self.error(
                    self.at(f),
                    format!(
                        "unknown format `{}`; one of {}",
                        f.value,
                        crate::output::format_names(FORMATS)
                    ),
                );
                None
            }
        }
    }

    /// `failOn`, with where it is written.
    fn fail_on(&mut self, f: &S<String>) -> Option<(FailOn, Location)> {
        match FailOn::parse(&f.value) {
            Some(v) => Some((v, self.at(f))),
            None => {
                self.error(
                    self.at(f),
                    format!(
                        "unknown failOn `{}`; one of critical, high, medium, low, info, never",
                        f.value
                    ),
                );
                None
            }
        }
    }

    /// `silence`: diagnostic codes.
    fn silence(&mut self, list: &[S<String>]) -> Vec<Code> {
        let mut out = Vec::new();
        for s in list {
            match Code::parse(&s.value) {
                Some(code) => out.push(code),
                None => self.error(
                    self.at(s),
                    format!(
                        "no diagnostic code `{}`; docs/diagnostics.md lists them",
                        s.value
                    ),
                ),
            }
        }
        out
    }

    /// `minSeverity`, in any case.
    fn min_severity(&mut self, m: &S<String>) -> Option<Severity> {
        let severity = Severity::parse(&m.value.to_ascii_lowercase());
        if severity.is_none() {
            self.error(
                self.at(m),
                format!(
                    "unknown minSeverity `{}`; one of critical, high, medium, low, info",
                    m.value
                ),
            );
        }
        severity
    }

    /// `disabledRules`: each a rule of the registry (by code or name) outside the input and policy
    /// rules, disabled once, with a reason.
    fn disabled_rules(&mut self, entries: &[S<RawDisabled>]) -> Vec<DisabledRule> {
        let mut out: Vec<DisabledRule> = Vec::new();
        for entry in entries {
            let here = self.at(entry);
            let Some(rule) = &entry.value.rule else {
                self.error(
                    here,
                    "a disabledRules entry needs `rule` (a code such as GT502 or a rule name)",
                );
                continue;
            };
            let reason = match &entry.value.reason {
                Some(r) if !r.value.trim().is_empty() => r.value.trim().to_string(),
                _ => {
                    self.error(
                        here,
                        format!(
                            "disabling {} needs a `reason`: the report says why the rule is off",
                            rule.value
                        ),
                    );
                    String::new()
                }
            };
            let wanted = rule.value.trim();
            let found = gpu_trust_rules::rule(wanted).or_else(|| {
                gpu_trust_rules::registry()
                    .iter()
                    .find(|r| r.name.eq_ignore_ascii_case(wanted))
            });
            match found {
                Some(meta) if meta.code.starts_with("GT0") => self.error(
                    self.at(rule),
                    format!(
                        "{} reports on the input and the policy themselves and cannot be disabled",
                        meta.code
                    ),
                ),
                Some(meta) => {
                    if out.iter().any(|d| d.code == meta.code) {
                        self.error(self.at(rule), format!("{} is disabled twice", meta.code));
                    }
                    out.push(DisabledRule {
                        code: meta.code,
                        reason,
                        location: self.at(rule),
                    });
                }
                None => self.error(
                    self.at(rule),
                    format!("no rule `{wanted}`; `gpu-trust rules` lists them"),
                ),
            }
        }
        out
    }

    /// `outputs`: each a report format and a file, from the file's folder.
    fn outputs(&mut self, entries: &[S<RawOutput>]) -> Vec<(Format, PathBuf, Location)> {
        let mut out = Vec::new();
        for entry in entries {
            let here = self.at(entry);
            let format = match &entry.value.format {
                Some(f) => self.format(f),
                None => {
                    self.error(here.clone(), "an outputs entry needs `format` and `file`");
                    None
                }
            };
            let path = match &entry.value.file {
                Some(p) if !p.value.trim().is_empty() => {
                    Some((relative(self.base, &p.value), self.at(p)))
                }
                _ => {
                    self.error(
                        here,
                        "an outputs entry needs `file` (where the report is written)",
                    );
                    None
                }
            };
            if let (Some(format), Some((path, location))) = (format, path) {
                out.push((format, path, location));
            }
        }
        out
    }

    /// The configuration, or every error found, in order of position and each once.
    fn finish(mut self, config: Config) -> Result<Config, Vec<Diagnostic>> {
        if self.errors.is_empty() {
            Ok(config)
        } else {
            self.errors.sort();
            self.errors.dedup();
            Err(self.errors)
        }
    }
}

fn relative(base: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() || path == "-" {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        parse(text, "c.yaml", Path::new("repo"))
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_full_configuration_reads_with_paths_from_its_folder() {
        let text = "\
apiVersion: gpu-trust/v1
kind: Config
policy: policy/tenancy.yaml
format: sarif
failOn: never
minSeverity: medium
showAccepted: true
disabledRules:
  - rule: GT502
    reason: contracts are reviewed by legal, not in CI
  - {rule: untrusted-share-mps, reason: no MPS in this fleet}
outputs:
  - {format: json, file: out/report.json}
";
        let c = parse(text, "repo/.gpu-trust.yaml", Path::new("repo")).unwrap();
        assert_eq!(c.policy, Some(PathBuf::from("repo/policy/tenancy.yaml")));
        assert_eq!(c.format, Some(Format::Sarif));
        assert_eq!(c.fail_on, Some(FailOn::Never));
        assert_eq!(c.min_severity, Some(Severity::Medium));
        assert_eq!(c.show_accepted, Some(true));
        let codes: Vec<&str> = c.disabled_rules.iter().map(|d| d.code).collect();
        assert_eq!(codes.len(), 2);
        assert_eq!(codes[0], "GT502");
        assert!(codes[1].starts_with("GT1"));
        assert_eq!(
            c.outputs,
            [(
                Format::Json,
                PathBuf::from("repo/out/report.json"),
                Location::new("repo/.gpu-trust.yaml", 13, 26)
            )]
        );
        assert_eq!(
            c.fail_on_location,
            Some(Location::new("repo/.gpu-trust.yaml", 5, 9))
        );
    }

    #[test]
    fn an_empty_file_is_the_defaults() {
        let c = parse("# nothing yet\n", "c.yaml", Path::new("")).unwrap();
        assert_eq!(c.policy, None);
        assert!(c.disabled_rules.is_empty());
    }

    #[test]
    fn unknown_fields_and_bad_values_are_errors_with_their_location() {
        let e = errors("polcy: tenancy.yaml\n");
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with("c.yaml:1:1: error[invalid-value]:"),
            "{e:?}"
        );
        assert!(e[0].contains("polcy"), "{e:?}");

        let e = errors("format: yaml\nfailOn: sometimes\ndisabledRules:\n  - rule: GT999\n    reason: x\n  - rule: GT101\n");
        assert_eq!(e.len(), 4, "{e:?}");
        assert!(
            e[0].starts_with("c.yaml:1:9: error[invalid-config-file]: unknown format `yaml`"),
            "{e:?}"
        );
        assert!(
            e[1].starts_with("c.yaml:2:9: error[invalid-config-file]: unknown failOn"),
            "{e:?}"
        );
        assert!(
            e[2].starts_with("c.yaml:4:11: error[invalid-config-file]: no rule `GT999`"),
            "{e:?}"
        );
        assert!(
            e[3].starts_with(
                "c.yaml:6:5: error[invalid-config-file]: disabling GT101 needs a `reason`"
            ),
            "{e:?}"
        );
    }

    #[test]
    fn input_and_policy_rules_cannot_be_disabled() {
        let e = errors("disabledRules: [{rule: GT003, reason: noisy}]\n");
        assert!(e[0].contains("cannot be disabled"), "{e:?}");
    }

    #[test]
    fn report_files_stay_inside_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::create_dir(root.join("ci")).unwrap();
        let write = |text: &str| {
            let path = root.join("ci").join(FILE_NAME);
            std::fs::write(&path, text).unwrap();
            load(&path)
        };
        assert!(write("outputs: [{format: json, file: ../reports/audit.json}]\n").is_ok());
        for outside in ["../../elsewhere.json", "/tmp/audit.json"] {
            let e = write(&format!("outputs: [{{format: json, file: {outside}}}]\n")).unwrap_err();
            assert_eq!(e.len(), 1, "{e:?}");
            assert!(e[0].message.contains("outside the repository"), "{e:?}");
            assert_eq!(e[0].location.line, 1);
        }
        std::os::unix::fs::symlink(std::env::temp_dir(), root.join("ci/out")).unwrap();
        let e = write("outputs:\n  - {format: sarif, file: out/x.sarif}\n").unwrap_err();
        assert!(e[0].message.contains("symbolic link"), "{e:?}");
        assert_eq!(e[0].location.line, 2);
        // A link followed by `..` is where the link points, then up: outside, though `link/..`
        // reads as the folder the link is in.
        let away = tempfile::tempdir().unwrap();
        std::fs::create_dir(away.path().join("deep")).unwrap();
        std::os::unix::fs::symlink(away.path().join("deep"), root.join("ci/up")).unwrap();
        let e = write("outputs: [{format: json, file: up/../audit.json}]\n").unwrap_err();
        assert!(e[0].message.contains("symbolic link"), "{e:?}");
    }

    #[test]
    fn found_in_the_working_directory_then_the_repository_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let deep = root.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(find(None, &deep), None);
        std::fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(find(None, &deep), None);
        std::fs::write(root.join(FILE_NAME), "").unwrap();
        assert_eq!(find(None, &deep), Some(root.join(FILE_NAME)));
        std::fs::write(deep.join(FILE_NAME), "").unwrap();
        assert_eq!(find(None, &deep), Some(deep.join(FILE_NAME)));
        let explicit = root.join("other.yaml");
        assert_eq!(find(Some(&explicit), &deep), Some(explicit));
    }
}
