//! `gpu-trust serve`: follow the cluster from inside it and keep its audit current, for Prometheus
//! and for people. Reading and following are in `gpu-trust-live` (`watch.rs`), judgement in the
//! rules, formats in the report crate; this module debounces changes, runs the audit and serves
//! what it made.

use crate::live::ClusterArgs;
use crate::output;
use gpu_trust_model::Diagnostic;
use gpu_trust_policy::Date;
use gpu_trust_report::prometheus::{self, Coverage, Run};
use gpu_trust_report::{html, json, registry_docs};
use gpu_trust_rules::{audit, Advisories, AuditInput, AuditOptions};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Follow the cluster and keep auditing it: list and watch every kind gpu-trust reads, audit again
/// when objects change (after --debounce of quiet, at most --max-delay after the first change), and
/// serve the last audit over HTTP:
///
///   /metrics       Prometheus text: findings by rule, severity, layer and tenant; the pairs of
///                  tenants and what they share (memory pool, fault domain, GPU, host...); coverage
///                  (kinds read, unreadable, absent; skipped documents)
///   /report.json   the audit report, as `gpu-trust audit -o json` writes it
///   /report.html   the HTML report
///   /healthz       200 while the process runs
///   /readyz        200 once the first audit is done
///
/// It needs list and watch on the kinds it reads (`gpu-trust audit --print-rbac`); deploy/ holds the
/// manifests. A kind it may not list is audited as a partial input: the report lists it under
/// skipped and gpu_trust_coverage_unreadable names it.
///
/// Examples:
///   gpu-trust serve --policy tenancy.yaml
///   gpu-trust serve --context prod --listen 127.0.0.1:9400 --debounce 10
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The tenancy policy (tenants, trust, contracts, acceptances).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The address to serve on.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8080")]
    pub listen: String,
    /// Seconds without a change before auditing again.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub debounce: f64,
    /// Seconds after the first change by which the audit runs even if changes go on.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub max_delay: f64,
}

/// What the HTTP side serves: the last audit's renderings.
#[derive(Default)]
struct Published {
    json: Option<String>,
    html: Option<String>,
    metrics: Option<String>,
}

fn seconds(s: f64) -> Duration {
    Duration::from_secs_f64(if s.is_finite() && s > 0.0 { s } else { 0.0 })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let policy = match crate::input::policy_or_default(args.policy.as_deref()) {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let listener = match TcpListener::bind(&args.listen) {
        Ok(l) => l,
        Err(e) => {
            output::eprint_error(format!("cannot listen on {}: {e}", args.listen));
            return Ok(output::exit(output::INPUT_ERROR));
        }
    };
    let published = Arc::new(RwLock::new(Published::default()));
    let serving = Arc::clone(&published);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            // One request at a time: scrapes are small, and memory stays bounded.
            let _ = respond(stream, &serving);
        }
    });

    let mirror = gpu_trust_live::watch::Mirror::start(args.cluster.options());
    let debounce = seconds(args.debounce);
    let max_delay = seconds(args.max_delay);
    let mut seen = 0;
    let mut audits = 0;
    loop {
        let generation = mirror.wait_past(seen, Duration::from_secs(3600));
        if let Some(fatal) = mirror.fatal() {
            output::eprint_error(fatal);
            return Ok(output::exit(output::INPUT_ERROR));
        }
        if generation == seen {
            continue;
        }
        // Debounce: wait for a quiet period, but not past max_delay.
        let first = Instant::now();
        let mut last = generation;
        loop {
            let next = mirror.wait_past(last, debounce);
            if next == last || first.elapsed() >= max_delay {
                break;
            }
            last = next;
        }
        let Some((generation, snapshot)) = mirror.snapshot() else {
            seen = last;
            continue;
        };
        seen = generation;
        let started = Instant::now();
        // Errors of the kinds listed; the others are custom kinds found unread in the cluster's
        // CustomResourceDefinitions (or those definitions themselves), which are not in `served`.
        let crd_path = gpu_trust_live::crds::COLLECTION.trim_start_matches('/');
        let listed_errors = snapshot
            .diagnostics
            .iter()
            .filter(|d| !d.location.file.starts_with(crd_path))
            .count();
        let coverage = Coverage {
            kinds_read: snapshot.served.len() - listed_errors.min(snapshot.served.len()),
            kinds_unreadable: snapshot
                .diagnostics
                .iter()
                .map(|d| d.location.file.clone())
                .collect(),
            kinds_absent: snapshot.absent.len(),
            objects: snapshot.inputs.len(),
        };
        let mut ingested = crate::live::ingest(snapshot);
        let unknown = gpu_trust_rules::acceptance::unknown_rules(&ingested.fleet);
        ingested.diagnostics.extend(unknown);
        crate::input::print_cluster_diagnostics(&ingested.diagnostics);
        let errors: Vec<Diagnostic> = ingested
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect();
        let fleet = ingested.fleet;
        let tenancy = policy.resolve(&fleet.namespaces);
        output::eprint_diagnostics(tenancy.diagnostics());
        if tenancy.diagnostics().iter().any(Diagnostic::is_error) {
            output::eprint_error(
                "the policy does not fit the cluster's namespaces; the last audit is kept",
            );
            continue;
        }
        let now = SystemTime::now();
        let options = AuditOptions {
            today: Date::from_system_time(now),
            advisories: Advisories::builtin().clone(),
            evidence: Vec::new(),
            skipped: errors,
            // There is no exit status to guard here: a partial audit is served marked partial, and
            // /metrics says which layers (gpu_trust_coverage_layer).
            accept_partial: false,
            // The page served at / draws the GPUs.
            layout: true,
            pair: None,
        };
        let report = audit(&AuditInput {
            fleet: &fleet,
            tenancy: &tenancy,
            options: &options,
        });
        audits += 1;
        let run = Run {
            audits,
            timestamp_seconds: now
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
            duration_seconds: started.elapsed().as_secs_f64(),
        };
        let rendered = Published {
            json: json::render(&report).ok(),
            html: Some(html::render(&report, &registry_docs())),
            metrics: Some(prometheus::render(&report, &coverage, &run)),
        };
        if let Ok(mut p) = published.write() {
            *p = rendered;
        }
    }
}

/// Answers one HTTP/1.1 request and closes the connection.
fn respond(stream: TcpStream, published: &RwLock<Published>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // The headers are read and ignored; a request has no body.
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim_end().is_empty() {
            break;
        }
        if header.len() > 8192 {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let path = parts.next().unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    let p = published
        .read()
        .map_err(|_| std::io::Error::other("poisoned"))?;
    let (status, content_type, body): (&str, &str, &str) = match (method, path) {
        ("GET" | "HEAD", "/healthz") => ("200 OK", "text/plain; charset=utf-8", "ok\n"),
        ("GET" | "HEAD", "/readyz") => match &p.metrics {
            Some(_) => ("200 OK", "text/plain; charset=utf-8", "ready\n"),
            None => (
                "503 Service Unavailable",
                "text/plain; charset=utf-8",
                "the first audit is not done\n",
            ),
        },
        ("GET" | "HEAD", "/metrics") => {
            available(&p.metrics, "text/plain; version=0.0.4; charset=utf-8")
        }
        ("GET" | "HEAD", "/report.json") => available(&p.json, "application/json"),
        ("GET" | "HEAD", "/report.html") => available(&p.html, "text/html; charset=utf-8"),
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain; charset=utf-8", "not found\n"),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET and HEAD\n",
        ),
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        out.write_all(body.as_bytes())?;
    }
    out.flush()
}

fn available<'a>(body: &'a Option<String>, content_type: &'a str) -> (&'a str, &'a str, &'a str) {
    match body {
        Some(b) => ("200 OK", content_type, b),
        None => (
            "503 Service Unavailable",
            "text/plain; charset=utf-8",
            "the first audit is not done\n",
        ),
    }
}
