//! Where the commands' input comes from: every file through the source crate's one bounded reader
//! (`gpu_trust_source::read_file`: special files refused, size bounded, UTF-16 and UTF-32 named), the
//! policy file, probe evidence, and the cluster (files or the live API server) with the diagnostics of
//! reading it.

use crate::output;
use gpu_trust_model::evidence::ProbeEvidence;
use gpu_trust_model::fleet::Ingested;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_policy::{Policy, MAX_POLICY_BYTES};
use gpu_trust_report::plural;
use std::path::{Path, PathBuf};

/// Reads a file of at most `limit` bytes (standard input for `-`) through the source crate's reader,
/// as the cluster input is read: policy, plan, evidence, advisory and configuration files alike.
pub fn read(path: &Path, limit: usize) -> Result<String, Diagnostic> {
    gpu_trust_source::read_file(path, &mut std::io::stdin().lock(), limit)
}

/// Why a policy file could not be used.
pub enum PolicyError {
    /// The file could not be read (missing, too large, not UTF-8...).
    Unreadable(Diagnostic),
    /// The file was read; these are its errors, each located.
    Invalid(Vec<Diagnostic>),
}

/// Reads and parses a policy file (`-`: standard input): the one way the commands read a policy.
pub fn load_policy(path: &Path) -> Result<Policy, PolicyError> {
    let name = path.display().to_string();
    let text = read(path, MAX_POLICY_BYTES).map_err(PolicyError::Unreadable)?;
    parse_policy(&text, &name).map_err(PolicyError::Invalid)
}

/// Parses a policy's text (a file's, or one inline in a plan file) and refuses `accept:` entries
/// that name no rule of the catalogue.
pub fn parse_policy(text: &str, name: &str) -> Result<Policy, Vec<Diagnostic>> {
    let policy = gpu_trust_policy::parse(text, name)?;
    let unknown = gpu_trust_rules::acceptance::unknown_policy_rules(&policy);
    if unknown.is_empty() {
        Ok(policy)
    } else {
        Err(unknown)
    }
}

/// Reads and validates the policy; on failure prints every error, and says why it stops.
pub fn read_policy(path: &Path) -> anyhow::Result<Policy> {
    let name = path.display().to_string();
    load_policy(path).map_err(|e| match e {
        PolicyError::Unreadable(d) => unreadable_policy(&name, &d),
        PolicyError::Invalid(errors) => {
            output::eprint_diagnostics(&errors);
            anyhow::anyhow!(
                "{name}: {} in the policy",
                plural(errors.len(), "error", "errors")
            )
        }
    })
}

/// Prints why the policy `name` could not be read, and returns the error that stops the run.
pub fn unreadable_policy(name: &str, diagnostic: &Diagnostic) -> anyhow::Error {
    output::eprint_diagnostics([diagnostic]);
    anyhow::anyhow!("{name}: the policy could not be read")
}

/// The policy of `--policy`, or the default policy (every namespace its own tenant) without one.
pub fn policy_or_default(path: Option<&Path>) -> anyhow::Result<Policy> {
    match path {
        Some(path) => read_policy(path),
        None => Ok(Policy::default()),
    }
}

/// Whether standard input is named both for the policy and for the cluster (it can hold only one).
pub fn stdin_twice(policy: Option<&Path>, paths: &[PathBuf]) -> bool {
    policy == Some(Path::new("-")) && paths.iter().any(|p| p == Path::new("-"))
}

/// Probe evidence (`gpu-trust/probe/v1` JSON); an error names the file, line and column.
pub fn read_evidence(path: &Path) -> Result<ProbeEvidence, Diagnostic> {
    let name = path.display().to_string();
    let text = read(path, MAX_POLICY_BYTES)?;
    let evidence: ProbeEvidence = gpu_trust_source::parse_json(&text, &name).map_err(|mut d| {
        d.message = format!("not probe evidence: {}", d.message);
        d
    })?;
    if !evidence.schema_supported() {
        return Err(Diagnostic::error(
            Code::UnsupportedEvidence,
            Location::new(&name, 1, 1),
            format!(
                "probe evidence of schema `{}` is not supported (expected `{}`)",
                evidence.schema,
                gpu_trust_model::evidence::PROBE_SCHEMA
            ),
        ));
    }
    Ok(evidence)
}

/// An earlier JSON audit report, for `--baseline`: its findings' keys, and what the gone ones said.
pub fn read_baseline(path: &Path) -> Result<gpu_trust_model::report::BaselineReport, Diagnostic> {
    let name = path.display().to_string();
    let text = read(path, gpu_trust_source::Limits::default().max_file_bytes)?;
    let old: gpu_trust_model::report::BaselineReport = gpu_trust_source::parse_json(&text, &name)
        .map_err(|mut d| {
        d.message = format!("not a gpu-trust JSON audit report: {}", d.message);
        d
    })?;
    if old.schema != gpu_trust_model::report::SCHEMA {
        return Err(Diagnostic::error(
            Code::InvalidValue,
            Location::new(&name, 1, 1),
            format!(
                "a baseline of schema `{}` is not supported (expected `{}`)",
                old.schema,
                gpu_trust_model::report::SCHEMA
            ),
        ));
    }
    Ok(old)
}

/// The cluster: the files and folders of `paths` (`-` is standard input), or, without any, the live
/// cluster `cluster` names; an error when no cluster could be read at all.
pub fn cluster(
    paths: &[PathBuf],
    cluster: &crate::live::ClusterArgs,
    follow_symlinks: bool,
) -> anyhow::Result<Ingested> {
    cluster_read(paths, cluster, follow_symlinks).map(|(ingested, _)| ingested)
}

/// The documents a cluster was read from: the report's provenance, and what an audit of the input
/// with changes applied reads (`gpu_trust_decide`).
pub struct Documents {
    /// The texts in the order read; `None` when they were too large to keep (a file read in pieces,
    /// or more than the decisions would read again).
    pub inputs: Option<Vec<gpu_trust_source::Input>>,
    pub options: gpu_trust_ingest::Options,
    /// The SHA-256 of each input's name, a NUL, its bytes and a NUL, in order.
    pub digest: Vec<u8>,
    /// For a live cluster: its API server and kubeconfig context.
    pub server: Option<String>,
    pub context: Option<String>,
}

/// Texts kept for the decisions at most: half of what they read again in all.
const KEPT_BYTES: usize = gpu_trust_decide::TRIAL_BYTES / 2;

/// [`cluster`], with the documents it was read from.
pub fn cluster_read(
    paths: &[PathBuf],
    cluster: &crate::live::ClusterArgs,
    follow_symlinks: bool,
) -> anyhow::Result<(Ingested, Documents)> {
    if !paths.is_empty() {
        return Ok(load_cluster_documents(paths, follow_symlinks));
    }
    let snapshot = crate::live::read(cluster)?;
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    for i in &snapshot.inputs {
        add(&mut digest, &i.name, i.text.as_bytes());
    }
    let size: usize = snapshot.inputs.iter().map(|i| i.text.len()).sum();
    let documents = Documents {
        inputs: (size <= KEPT_BYTES).then(|| snapshot.inputs.clone()),
        options: crate::live::options(&snapshot),
        digest: hex(digest),
        server: snapshot.server.clone(),
        context: snapshot.context.clone(),
    };
    Ok((crate::live::ingest(snapshot), documents))
}

/// One input into a digest: its name, a NUL, its bytes and a NUL.
fn add(digest: &mut ring::digest::Context, name: &str, bytes: &[u8]) {
    digest.update(name.as_bytes());
    digest.update(&[0]);
    digest.update(bytes);
    digest.update(&[0]);
}

fn hex(digest: ring::digest::Context) -> Vec<u8> {
    digest.finish().as_ref().to_vec()
}

/// Reads every path (`-` is standard input) and builds the fleet model; every problem comes back as a
/// diagnostic, what the reader left out of a directory included.
pub fn load_cluster(paths: &[PathBuf], follow_symlinks: bool) -> Ingested {
    load_cluster_documents(paths, follow_symlinks).0
}

/// [`load_cluster`], with the documents read.
fn load_cluster_documents(paths: &[PathBuf], follow_symlinks: bool) -> (Ingested, Documents) {
    let options = gpu_trust_ingest::Options::default();
    let (inputs, gathered) = gpu_trust_source::gather_large(
        paths,
        &mut std::io::stdin().lock(),
        &gpu_trust_source::GatherOptions {
            limits: options.limits,
            follow_symlinks,
        },
        gpu_trust_ingest::LARGE_INPUT_BYTES,
    );
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    let mut kept: Option<Vec<gpu_trust_source::Input>> = Some(Vec::new());
    let mut size = 0usize;
    for g in &inputs {
        match g {
            gpu_trust_source::Gathered::Text(i) => {
                add(&mut digest, &i.name, i.text.as_bytes());
                size += i.text.len();
                if let Some(k) = kept.as_mut() {
                    k.push(i.clone());
                }
            }
            gpu_trust_source::Gathered::Large(f) => {
                // Read in pieces by ingest, and hashed in pieces: never whole in memory.
                digest.update(f.name.as_bytes());
                digest.update(&[0]);
                if let Ok(mut file) = f.open(&options.limits) {
                    let mut buffer = vec![0u8; 1 << 20];
                    while let Ok(n @ 1..) = std::io::Read::read(&mut file, &mut buffer) {
                        digest.update(&buffer[..n]);
                    }
                }
                digest.update(&[0]);
                kept = None;
            }
        }
    }
    if size > KEPT_BYTES {
        kept = None;
    }
    // Large files are read in pieces, and each text is released once it is read.
    let mut ingested = gpu_trust_ingest::ingest_gathered(inputs, &options);
    ingested.diagnostics.extend(gathered);
    ingested.diagnostics.sort();
    ingested.diagnostics.dedup();
    let documents = Documents {
        inputs: kept,
        options,
        digest: hex(digest),
        server: None,
        context: None,
    };
    (ingested, documents)
}

/// Prints the diagnostics of reading and ingesting the cluster on standard error, the warnings
/// first, then the errors; returns how many are errors.
pub fn print_cluster_diagnostics(diagnostics: &[Diagnostic]) -> usize {
    let (errors, warnings): (Vec<&Diagnostic>, Vec<&Diagnostic>) =
        diagnostics.iter().partition(|d| d.is_error());
    output::eprint_diagnostics(warnings);
    output::eprint_diagnostics(errors.iter().copied());
    errors.len()
}

/// Prints the cluster's diagnostics ([`print_cluster_diagnostics`]) and keeps its errors: the
/// documents an audit lists as skipped.
pub fn cluster_errors(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    print_cluster_diagnostics(&diagnostics);
    diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect()
}

/// Stops a run over `errors` unusable documents without `--skip-invalid`: says so, and how to go on
/// to `rest` ("audit the rest"), and returns the error that stops the run (exit 2).
pub fn refuse_unusable(errors: usize, rest: &str) -> anyhow::Error {
    output::eprint_line(&format!(
        "gpu-trust: {} could not be used; fix {} or pass --skip-invalid to {rest}",
        plural(errors, "input document", "input documents"),
        if errors == 1 { "it" } else { "them" },
    ));
    output::stopped()
}

/// The folder `gpu-trust advisories update` keeps bulletins in, for this run.
static CACHE_DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();

/// Sets the cache folder: `--cache-dir`, else `$XDG_CACHE_HOME/gpu-trust` when that is an absolute
/// path, else `$HOME/.cache/gpu-trust` (the XDG Base Directory Specification's rule for
/// `$XDG_CACHE_HOME`: unset, empty or relative means `$HOME/.cache`).
pub fn set_cache_dir(flag: Option<PathBuf>) {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = flag.or_else(|| {
        env("XDG_CACHE_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| env("HOME").map(|h| h.join(".cache")))
            .map(|d| d.join("gpu-trust"))
    });
    let _ = CACHE_DIR.set(dir);
}

/// Where the advisory bulletins of updates are kept (`<cache>/advisories`); `None` when neither
/// `--cache-dir` nor the environment names a cache folder.
pub fn advisory_cache() -> Option<PathBuf> {
    CACHE_DIR
        .get()
        .cloned()
        .flatten()
        .map(|d| d.join("advisories"))
}

/// The bulletins `gpu-trust advisories update` kept, read offline through the bounded reader;
/// `None` when no update was made. A cache that cannot be read is an error (2): its bulletins would
/// otherwise be missed unseen.
fn read_cache() -> anyhow::Result<Option<gpu_trust_rules::advisories::Cache>> {
    use gpu_trust_live::feed::{State, STATE_FILE};
    use gpu_trust_rules::advisories::{csaf, Cache, Update};
    let Some(dir) = advisory_cache() else {
        return Ok(None);
    };
    let state_path = dir.join(STATE_FILE);
    if !state_path.exists() {
        return Ok(None);
    }
    let broken = |message: String| {
        anyhow::anyhow!(
            "the advisory cache {} cannot be read: {message}; run `gpu-trust advisories update` again (or remove the folder)",
            dir.display()
        )
    };
    let text = read(&state_path, 1 << 20).map_err(|d| broken(d.to_string()))?;
    let state =
        State::parse(&text).map_err(|e| broken(format!("{}: {e}", state_path.display())))?;
    let mut documents = Vec::new();
    for (file, url) in state.files(&dir) {
        let text = read(&file, csaf::MAX_DOCUMENT_BYTES).map_err(|d| broken(d.to_string()))?;
        documents.push((url, text));
    }
    let checked = match state.checked.as_deref().map(gpu_trust_policy::Date::parse) {
        Some(Ok(d)) => Some(d),
        Some(Err(e)) => return Err(broken(format!("{}: {e}", state_path.display()))),
        None => None,
    };
    Ok(Some(Cache {
        update: Update {
            from: state.from,
            checked,
        },
        documents,
    }))
}

/// Reads the advisory data: the built-in data, the bulletins `gpu-trust advisories update` kept
/// (offline), and what `--advisories` names (files or folders of the project's YAML format or of
/// CSAF 2.0 JSON documents; `-` for standard input). Every problem is printed, located; an
/// unreadable or malformed document stops the run (2). What the documents say that the audit
/// cannot use is printed as warnings and returned.
pub fn advisories(
    paths: &[PathBuf],
    follow_symlinks: bool,
) -> anyhow::Result<gpu_trust_rules::advisories::Loaded> {
    use gpu_trust_rules::advisories::{csaf, Advisories, Loaded};
    let cache = read_cache()?;
    if paths.is_empty() && cache.is_none() {
        return Ok(Loaded {
            data: Advisories::builtin().clone(),
            warnings: Vec::new(),
        });
    }
    let options = gpu_trust_source::GatherOptions {
        limits: gpu_trust_source::Limits {
            max_file_bytes: csaf::MAX_DOCUMENT_BYTES,
            ..gpu_trust_source::Limits::default()
        },
        follow_symlinks,
    };
    let (inputs, unread) =
        gpu_trust_source::gather_with(paths, &mut std::io::stdin().lock(), &options);
    if !unread.is_empty() {
        output::eprint_diagnostics(&unread);
        anyhow::bail!(
            "{} of the advisory data could not be read",
            plural(unread.len(), "file", "files")
        );
    }
    if inputs.is_empty() && !paths.is_empty() {
        anyhow::bail!("--advisories names no .yaml, .yml or .json file: no advisory data to read");
    }
    let texts: Vec<(String, String)> = inputs.into_iter().map(|i| (i.name, i.text)).collect();
    match Advisories::load_with(cache.as_ref(), &texts) {
        Ok(loaded) => {
            output::eprint_diagnostics(&loaded.warnings);
            Ok(loaded)
        }
        Err(errors) => {
            output::eprint_diagnostics(&errors);
            anyhow::bail!(
                "the advisory data is not usable: {}",
                plural(errors.len(), "error", "errors")
            )
        }
    }
}
