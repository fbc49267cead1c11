//! The vendor's bulletin feed: `gpu-trust advisories update` reads NVIDIA's product-security
//! repository (or a mirror of its layout) and keeps the new bulletins in a cache that every other
//! command reads offline.
//!
//! The layout (NVIDIA/product-security, the repository NVIDIA PSIRT publishes its bulletins in,
//! and since 2026-10-01 only there, its README says): `<year>/CVE_index.csv` lists each year's
//! CVEs, one row per CVE and product (`CVE;CVSS;Severity;Vector;CWE;Bulletin;Affected
//! Product;Affected Version;Fixed In`), and `<year>/<id>/<id>.json` is bulletin `<id>` as a CSAF
//! 2.0 document, with its SHA-256 digest beside it in `<id>.json.sha256`. A bulletin is read when
//! one of its rows names a product the caller lists (the component table's names) and the caller
//! does not already hold it (the built-in data's bulletins); its digest file says whether the copy
//! in the cache is still current, so only what is new or revised is downloaded.
//!
//! Every answer is bounded in size ([`Options::max_bytes`]) and time ([`Options::request_timeout`],
//! the whole update [`Options::total_timeout`]). A bulletin is kept only when its digest is the one
//! published beside it and the caller's check (the CSAF reader) accepts it; it is written to a
//! temporary file and renamed over the old copy, and the cache's state file last, so a broken,
//! partial or unreadable download never replaces the last good data. Each failure is a diagnostic
//! located at the address it came from and naming the bulletin. `checked`, the day every bulletin
//! the indexes list was read, advances only when nothing failed.
//!
//! `http://`, `https://` (rustls with the platform's verifier, as the cluster client) and
//! `file://` addresses are read: a site without access to GitHub mirrors the repository and gives
//! its address or folder.

use gpu_trust_model::{Code, Diagnostic, Location};
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// NVIDIA's repository, as raw files.
pub const DEFAULT_FROM: &str = "https://raw.githubusercontent.com/NVIDIA/product-security/main";
/// The largest index or bulletin read, in bytes (the CSAF reader's bound: NVIDIA's largest bulletin
/// of 2026, 5861, is 1.5 MB).
pub const MAX_BYTES: usize = 16 << 20;
/// How long one request may take, to the last byte.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a whole update may take.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(600);
/// The cache's state file, in the cache's folder.
pub const STATE_FILE: &str = "state.json";

/// What an update reads and where it keeps it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository or mirror: `https://...`, `http://...` or `file:///...`, without the year.
    pub from: String,
    /// The cache's folder (`<cache>/advisories`).
    pub cache: PathBuf,
    /// The years whose indexes are read, oldest first; a missing index of the last one is no error
    /// (the vendor makes a year's folder with its first bulletin).
    pub years: Vec<u16>,
    /// Product names (compared without letter case) that make a bulletin worth reading.
    pub products: Vec<String>,
    /// Bulletin ids the caller already holds: not read.
    pub known: BTreeSet<String>,
    /// The day recorded as `checked` when every listed bulletin was read (`YYYY-MM-DD`).
    pub today: String,
    pub max_bytes: usize,
    pub request_timeout: Duration,
    pub total_timeout: Duration,
}

/// The cache's state: where the bulletins came from, the last day nothing newer was missed, and
/// each bulletin kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub version: u32,
    pub from: String,
    /// `YYYY-MM-DD`; absent until an update read every bulletin it listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    pub bulletins: Vec<Kept>,
}

/// One bulletin in the cache: `<id>.json` in the cache's folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kept {
    pub id: String,
    pub year: u16,
    /// Where it was read from.
    pub url: String,
    /// Its SHA-256 digest, in hex.
    pub sha256: String,
}

impl State {
    /// Reads a state file; a bulletin id that is not all digits is refused (ids name files).
    pub fn parse(text: &str) -> Result<State, String> {
        let state: State = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if state.version != 1 {
            return Err(format!(
                "version {} is not supported (expected 1)",
                state.version
            ));
        }
        if let Some(k) = state.bulletins.iter().find(|k| !is_id(&k.id)) {
            return Err(format!("bulletin id `{}` is not a number", k.id));
        }
        Ok(state)
    }

    /// The file of each bulletin kept, with the address it was read from.
    pub fn files(&self, cache: &Path) -> Vec<(PathBuf, String)> {
        self.bulletins
            .iter()
            .map(|k| (cache.join(format!("{}.json", k.id)), k.url.clone()))
            .collect()
    }
}

/// What one update did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The repository or mirror read.
    pub from: String,
    /// Bulletins read for the first time, and revised ones, by id.
    pub added: Vec<String>,
    pub revised: Vec<String>,
    /// Bulletins listed whose kept copy is current.
    pub unchanged: Vec<String>,
    /// Bulletins listed that the caller already holds.
    pub known: Vec<String>,
    /// The indexes read, by year.
    pub years: Vec<u16>,
    /// What could not be used (each located at its address), and what the check said of the
    /// bulletins it accepted.
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    pub state: State,
}

/// Why an update could not run at all (the cache cannot be written).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot write the advisory cache {0}: {1}")]
    Cache(PathBuf, #[source] std::io::Error),
    #[error("cannot start the update's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("`{0}` is not an http://, https:// or file:// address")]
    Address(String),
}

/// A bulletin's check: its warnings when the caller can use it, its errors when not.
pub type Check<'a> = &'a dyn Fn(&str, &str) -> Result<Vec<Diagnostic>, Vec<Diagnostic>>;

/// Reads the indexes and the bulletins that are new or revised, and keeps those `check` accepts.
pub fn update(options: &Options, check: Check<'_>) -> Result<Outcome, Error> {
    let from = options.from.trim_end_matches('/').to_string();
    if !["http://", "https://", "file://"]
        .iter()
        .any(|s| from.starts_with(s))
    {
        return Err(Error::Address(options.from.clone()));
    }
    std::fs::create_dir_all(&options.cache).map_err(|e| Error::Cache(options.cache.clone(), e))?;
    let state_path = options.cache.join(STATE_FILE);
    let mut state = std::fs::read_to_string(&state_path)
        .ok()
        .and_then(|t| State::parse(&t).ok())
        .unwrap_or_default();
    state.version = 1;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let mut out = Outcome {
        from: from.clone(),
        ..Outcome::default()
    };
    let fetch = Fetch::new(options)?;
    runtime.block_on(async {
        let started = Instant::now();
        let mut listed: Vec<(u16, String)> = Vec::new();
        for (i, year) in options.years.iter().enumerate() {
            let url = format!("{from}/{year}/CVE_index.csv");
            match fetch.get(&url, started).await {
                Ok(Some(text)) => {
                    out.years.push(*year);
                    let text = String::from_utf8_lossy(&text);
                    for id in relevant(&text, &options.products) {
                        if !listed.iter().any(|(_, l)| *l == id) {
                            listed.push((*year, id));
                        }
                    }
                }
                Ok(None) if i + 1 == options.years.len() && i > 0 => {}
                Ok(None) => out.errors.push(failed(&url, format!("the index of {year} is not there (404)"))),
                Err(e) => out.errors.push(failed(&url, format!("the index of {year}: {e}"))),
            }
        }
        for (year, id) in listed {
            if options.known.contains(&id) {
                out.known.push(id);
                continue;
            }
            let url = format!("{from}/{year}/{id}/{id}.json");
            let kept = state.bulletins.iter().position(|k| k.id == id);
            match fetch_bulletin(&fetch, &url, kept.map(|k| &state.bulletins[k]), started).await {
                Err(e) => out.errors.push(failed(&url, format!("bulletin {id}: {e}"))),
                Ok(None) => out.unchanged.push(id),
                Ok(Some((text, sha256))) => match check(&url, &text) {
                    Err(errors) => {
                        out.errors.push(failed(
                            &url,
                            format!(
                                "bulletin {id} does not read as CSAF ({}): the last good data is kept",
                                errors.len()
                            ),
                        ));
                        out.errors.extend(errors);
                    }
                    Ok(warnings) => {
                        let file = options.cache.join(format!("{id}.json"));
                        if let Err(e) = write_atomic(&file, text.as_bytes()) {
                            out.errors.push(failed(&url, format!("bulletin {id}: cannot keep it in {}: {e}", file.display())));
                            continue;
                        }
                        out.warnings.extend(warnings);
                        let entry = Kept { id: id.clone(), year, url: url.clone(), sha256 };
                        match kept {
                            Some(k) => {
                                state.bulletins[k] = entry;
                                out.revised.push(id);
                            }
                            None => {
                                state.bulletins.push(entry);
                                out.added.push(id);
                            }
                        }
                    }
                },
            }
        }
    });
    // `from` and `checked` say together where and when every listed bulletin was last read.
    if out.errors.is_empty() {
        state.from = from;
        state.checked = Some(options.today.clone());
    } else if state.from.is_empty() {
        state.from = from;
    }
    state
        .bulletins
        .sort_by(|a, b| (a.year, &a.id).cmp(&(b.year, &b.id)));
    let text = serde_json::to_string_pretty(&state).unwrap_or_default();
    write_atomic(&state_path, text.as_bytes()).map_err(|e| Error::Cache(state_path, e))?;
    out.state = state;
    Ok(out)
}

/// A bulletin that is new or revised: its text and digest; `None` when the kept copy is current.
async fn fetch_bulletin(
    fetch: &Fetch,
    url: &str,
    kept: Option<&Kept>,
    started: Instant,
) -> Result<Option<(String, String)>, String> {
    let published = match fetch.get(&format!("{url}.sha256"), started).await? {
        Some(b) => {
            let text = String::from_utf8_lossy(&b);
            let digest = text
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if digest.len() != 64 || !digest.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("{url}.sha256 holds no SHA-256 digest"));
            }
            Some(digest)
        }
        None => None,
    };
    if let (Some(p), Some(k)) = (&published, kept) {
        if *p == k.sha256 {
            return Ok(None);
        }
    }
    let Some(body) = fetch.get(url, started).await? else {
        return Err("the index lists it, but the repository has no such file (404)".to_string());
    };
    let digest = hex(ring::digest::digest(&ring::digest::SHA256, &body).as_ref());
    if let Some(p) = &published {
        if *p != digest {
            return Err(format!(
                "its SHA-256 digest is {digest}, not the published {p}: a broken or partial download"
            ));
        }
    }
    if kept.is_some_and(|k| k.sha256 == digest) {
        return Ok(None);
    }
    let text = String::from_utf8(body).map_err(|_| "it is not UTF-8 text".to_string())?;
    Ok(Some((text, digest)))
}

/// The bulletin ids of an index whose rows name one of `products`, in the index's order.
fn relevant(index: &str, products: &[String]) -> Vec<String> {
    let mut lines = index.lines();
    let header = split(lines.next().unwrap_or(""));
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h.trim().eq_ignore_ascii_case(name))
    };
    let (Some(bulletin), Some(product)) = (column("Bulletin"), column("Affected Product")) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        let fields = split(line);
        let (Some(id), Some(name)) = (fields.get(bulletin), fields.get(product)) else {
            continue;
        };
        let id = id.trim();
        if is_id(id)
            && products.iter().any(|p| p.eq_ignore_ascii_case(name.trim()))
            && !out.iter().any(|o| o == id)
        {
            out.push(id.to_string());
        }
    }
    out
}

/// The fields of one `;`-separated line; a field in double quotes may hold `;` and `""`.
fn split(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                if let Some(f) = out.last_mut() {
                    f.push('"');
                }
            }
            '"' => quoted = !quoted,
            ';' if !quoted => out.push(String::new()),
            _ => {
                if let Some(f) = out.last_mut() {
                    f.push(c);
                }
            }
        }
    }
    out
}

/// A bulletin id: digits only (it names a folder and a file).
fn is_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 12 && id.bytes().all(|b| b.is_ascii_digit())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn failed(url: &str, message: String) -> Diagnostic {
    Diagnostic::error(Code::BulletinNotFetched, Location::new(url, 0, 0), message)
}

/// Writes `file` whole or not at all: a temporary file beside it, synced, renamed over it.
fn write_atomic(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

type Https = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;

/// Bounded reads of http(s) and file addresses.
struct Fetch {
    client: Client<Https, Empty<Bytes>>,
    max_bytes: usize,
    request_timeout: Duration,
    total_timeout: Duration,
}

impl Fetch {
    fn new(options: &Options) -> Result<Fetch, Error> {
        use rustls_platform_verifier::BuilderVerifierExt;
        // The trust the cluster client uses (kube-client's default): the platform's verifier.
        let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_platform_verifier())
        .map(|b| b.with_no_client_auth())
        .map_err(|e| Error::Runtime(std::io::Error::other(e)))?;
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .build();
        Ok(Fetch {
            client: Client::builder(TokioExecutor::new()).build(https),
            max_bytes: options.max_bytes,
            request_timeout: options.request_timeout,
            total_timeout: options.total_timeout,
        })
    }

    /// The body at `url`, `None` when there is no such file (404, or a missing file).
    async fn get(&self, url: &str, started: Instant) -> Result<Option<Vec<u8>>, String> {
        let left = self.total_timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(format!(
                "the update took longer than {} s and stopped",
                self.total_timeout.as_secs()
            ));
        }
        if let Some(path) = url.strip_prefix("file://") {
            return read_file(Path::new(path), self.max_bytes);
        }
        let limit = self.request_timeout.min(left);
        match tokio::time::timeout(limit, self.get_http(url)).await {
            Ok(r) => r,
            Err(_) => Err(format!("no whole answer within {} s", limit.as_secs())),
        }
    }

    async fn get_http(&self, url: &str) -> Result<Option<Vec<u8>>, String> {
        let uri: hyper::Uri = url.parse().map_err(|e| format!("{e}"))?;
        let answer = self
            .client
            .get(uri)
            .await
            .map_err(|e| format!("cannot reach it: {}", chain(&e)))?;
        let status = answer.status();
        if status == hyper::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(format!("the server answered {status}"));
        }
        let declared = answer
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_bytes as u64) {
            return Err(format!(
                "the answer is over the bound of {} bytes",
                self.max_bytes
            ));
        }
        let body = Limited::new(answer.into_body(), self.max_bytes)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    format!("the answer is over the bound of {} bytes", self.max_bytes)
                } else {
                    format!("the answer broke off: {e}")
                }
            })?;
        Ok(Some(body.to_bytes().to_vec()))
    }
}

/// A file of a `file://` mirror, at most `max` bytes.
fn read_file(path: &Path, max: usize) -> Result<Option<Vec<u8>>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        return Err("not a regular file".to_string());
    }
    let mut body = Vec::new();
    file.take(max as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| e.to_string())?;
    if body.len() > max {
        return Err(format!("the file is over the bound of {max} bytes"));
    }
    Ok(Some(body))
}

/// An error with its causes, as one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        s.push_str(": ");
        s.push_str(&c.to_string());
        source = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_names_the_bulletins_of_the_products_asked_for() {
        let index = "CVE;CVSS;Severity;Vector;CWE;Bulletin;Affected Product;Affected Version;Fixed In\n\
CVE-2026-1;7.8;HIGH;V;CWE-1;5861;Tesla;All driver versions prior to 580.178.04;580.178.04\n\
CVE-2026-2;9.0;CRITICAL;V;CWE-2;5699;BlueField GA;All versions prior to 46.3008;\"46.3008; or newer\"\n\
CVE-2026-3;8.5;HIGH;V;CWE-3;5850;NVIDIA Container Toolkit;All versions up to and including 1.19.0;1.19.1\n\
CVE-2026-4;8.5;HIGH;V;CWE-3;../x;Tesla;a;b\n\
CVE-2026-5;7.8;HIGH;V;CWE-1;5861;Tesla;All driver versions prior to 595.91.07;595.91.07\n";
        let products = vec!["tesla".to_string(), "NVIDIA Container Toolkit".to_string()];
        assert_eq!(relevant(index, &products), ["5861", "5850"]);
        assert_eq!(
            split("a;\"b;c\";\"d\"\"e\""),
            ["a", "b;c", "d\"e"],
            "quoted fields keep their separators"
        );
    }

    #[test]
    fn a_state_file_names_bulletins_by_number_only() {
        let ok = r#"{"version": 1, "from": "file:///m", "checked": "2026-12-07",
            "bulletins": [{"id": "5861", "year": 2026, "url": "file:///m/2026/5861/5861.json", "sha256": "00"}]}"#;
        let state = State::parse(ok).unwrap();
        assert_eq!(
            state.files(Path::new("/c")),
            [(
                PathBuf::from("/c/5861.json"),
                "file:///m/2026/5861/5861.json".to_string()
            )]
        );
        assert!(State::parse(&ok.replace("\"5861\"", "\"../../etc/passwd\"")).is_err());
        assert!(State::parse(&ok.replace("\"version\": 1", "\"version\": 2")).is_err());
    }
}
