//! `gpu-trust serve`: follow the cluster from inside it and keep its audit current, for Prometheus
//! and for people. Reading and following are in `gpu-trust-live` (`watch.rs`), judgement in the
//! rules (the tenant view in `scope.rs`), formats in the report crate; this module debounces
//! changes, runs the audit, logs, and serves what it made (`serve/http.rs`) to whom the API server
//! says may see it (`serve/access.rs`).

mod access;
mod http;

use crate::live::ClusterArgs;
use crate::output;
use gpu_trust_live::service::Service;
use gpu_trust_live::watch::Mirror;
use gpu_trust_live::Snapshot;
use gpu_trust_model::fleet::Fleet;
use gpu_trust_model::report::AuditReport;
use gpu_trust_model::Diagnostic;
use gpu_trust_policy::{Date, Tenancy};
use gpu_trust_report::audit::prometheus::{self, Coverage, Process};
use gpu_trust_report::audit::{render_text, Format, Options as RenderOptions};
use gpu_trust_report::log::{self as logline, Format as LogFormat};
use gpu_trust_report::registry_docs;
use gpu_trust_rules::scope::Redactor;
use gpu_trust_rules::{Advisories, AuditInput, AuditOptions, Prepared};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Keep auditing the cluster from inside it, and serve the reports.
///
/// Follow the cluster and keep auditing it: list and watch every kind gpu-trust reads, audit again
/// when objects change (after --debounce of quiet, at most --max-delay after the first change), and
/// serve the last audit over HTTP (HTTPS with --tls-cert-file):
///
/// - /metrics: Prometheus text: the process (build, audits, audit durations, failed watches) from the
///   start; after the first audit, findings by rule, severity and tenant, what tenants share,
///   coverage
///
/// - /report.json: the audit report, as `gpu-trust audit -o json` writes it
///
/// - /report.html: the HTML report
///
/// - /healthz: 200 while the process runs (no authentication)
///
/// - /readyz: 200 once the first complete audit is done (no authentication)
///
/// Who may see what is the API server's answer (--auth kubernetes, the default): a request's bearer
/// token is checked with a TokenReview; a user allowed `get` on the path (a ClusterRole with
/// nonResourceURLs) sees everything; a user allowed to list pods in every namespace of some tenants
/// sees those tenants only, every other tenant named "(other tenant)"; anyone else gets 403.
///
/// It needs list and watch on the kinds it reads (`gpu-trust audit --print-rbac`) and the
/// ClusterRole system:auth-delegator; deploy/ holds the manifests (docs/live.md).
///
/// The advisory data is the built-in data and the bulletins `gpu-trust advisories update` kept
/// (--cache-dir), read at start; with --update-advisories-every, serve fetches new bulletins itself
/// on that interval, as `gpu-trust advisories update` does, and audits again when one came.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The tenancy policy (tenants, trust, contracts, acceptances).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The address to serve on.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8080")]
    pub listen: String,
    /// Seconds without a change before auditing again (0 to a day).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_seconds)]
    pub debounce: f64,
    /// Seconds after the first change by which the audit runs even if changes go on (0 to a day).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_seconds)]
    pub max_delay: f64,
    /// Who may read the reports and metrics: `kubernetes` (the API server reviews each request's
    /// bearer token and access) or `none` (anyone who can reach the port).
    #[arg(long, value_name = "MODE", default_value = "kubernetes")]
    pub auth: AuthMode,
    /// How log lines are written on standard error: `text` or `json` (one object per line).
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    pub log_format: LogFormatArg,
    /// Keep one OpenReports Report (openreports.io/v1alpha1) per tenant namespace with that
    /// tenant's findings (needs the role of deploy/reports/).
    #[arg(long)]
    pub write_reports: bool,
    /// Serve HTTPS with this certificate chain (PEM); read again when the file changes.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// The private key of --tls-cert-file (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// Fetch the vendor's new security bulletins every SECS seconds (at least 3600), as
    /// `gpu-trust advisories update` does, and audit again when one came; off unless given.
    #[arg(long, value_name = "SECS", value_parser = parse_interval)]
    pub update_advisories_every: Option<f64>,
    /// Where --update-advisories-every reads: the repository, or a mirror of its layout.
    #[arg(long, value_name = "URL", default_value = gpu_trust_live::feed::DEFAULT_FROM, requires = "update_advisories_every")]
    pub update_advisories_from: String,
}

/// --update-advisories-every: an hour to 30 days.
fn parse_interval(text: &str) -> Result<f64, String> {
    seconds_within(text, 3_600.0, 2_592_000.0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// TokenReview and SubjectAccessReview by the API server.
    Kubernetes,
    /// No authentication: anyone who can reach the port reads everything.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormatArg {
    /// `time level=... msg="..." key=value`
    Text,
    /// One JSON object per line.
    Json,
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust serve --policy tenancy.yaml
  gpu-trust serve --context prod --listen 127.0.0.1:9400 --debounce 10 --auth none
  gpu-trust serve --policy tenancy.yaml --update-advisories-every 86400";

/// Seconds as --debounce and --max-delay take them: a finite number from 0 to a day.
fn parse_seconds(text: &str) -> Result<f64, String> {
    seconds_within(text, 0.0, 86_400.0)
}

/// A number of seconds from `low` to `high`.
fn seconds_within(text: &str, low: f64, high: f64) -> Result<f64, String> {
    let v: f64 =
        (text.trim().parse()).map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !v.is_finite() || !(low..=high).contains(&v) {
        return Err(format!("`{text}`: seconds must be from {low} to {high}"));
    }
    Ok(v)
}

/// The log, on standard error.
#[derive(Clone, Copy)]
pub(crate) struct Log(LogFormat);

fn now_seconds() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Log {
    pub(crate) fn write(&self, level: &str, message: &str, fields: &[(&str, Value)]) {
        let line = logline::line(self.0, now_seconds(), level, message, fields);
        // Input text (names, messages) may hold anything: escaped like every line on stderr.
        output::eprint_line(&line);
    }
}

/// One audit's result, with its renderings for the full view and the tenant views made so far.
pub(crate) struct Audited {
    pub report: AuditReport,
    pub coverage: Coverage,
    /// What was audited, for the tenant views: each is an audit focused on its tenants.
    pub fleet: Fleet,
    pub tenancy: Tenancy,
    pub options: AuditOptions,
    pub prepared: Prepared,
    pub full: Arc<Rendered>,
    /// Tenant views by the set of visible tenants, made on demand (at most [`MAX_VIEWS`]).
    pub views: Mutex<BTreeMap<BTreeSet<String>, Arc<Rendered>>>,
}

/// Tenant views kept per audit.
const MAX_VIEWS: usize = 64;

/// What one view serves.
pub(crate) struct Rendered {
    pub json: String,
    pub html: String,
    /// The audit's metrics (the process's are added when served).
    pub metrics: String,
}

impl Audited {
    /// The report `tenants` may see ([`gpu_trust_rules::scope::view`]), unrendered, and the
    /// redactor of its sentences (for the API paths of the kinds that could not be listed).
    pub fn view_report(&self, tenants: &BTreeSet<String>) -> (AuditReport, Redactor) {
        gpu_trust_rules::scope::view(
            &self.fleet,
            &self.tenancy,
            &self.options,
            &self.prepared,
            tenants,
        )
    }

    /// The view of `tenants`, made once per audit.
    pub fn view(&self, tenants: &BTreeSet<String>) -> Arc<Rendered> {
        if let Ok(views) = self.views.lock() {
            if let Some(v) = views.get(tenants) {
                return Arc::clone(v);
            }
        }
        // Built from the report field by field (`scope.rs`): the rendered text is never rewritten.
        let (view, redactor) = self.view_report(tenants);
        let mut coverage = self.coverage.clone();
        for p in &mut coverage.kinds_unreadable {
            *p = redactor.text(p).into_owned();
        }
        let rendered = Arc::new(Rendered {
            json: served(Format::Json, &view),
            html: served(Format::Html, &view),
            metrics: prometheus::render(&view, &coverage),
        });
        if let Ok(mut views) = self.views.lock() {
            if views.len() >= MAX_VIEWS {
                views.clear();
            }
            views.insert(tenants.clone(), Arc::clone(&rendered));
        }
        rendered
    }
}

/// The report in one of the formats `serve` offers, chosen as `gpu-trust audit` chooses them.
fn served(format: Format, report: &gpu_trust_report::AuditReport) -> String {
    render_text(format, report, &registry_docs(), &RenderOptions::default()).unwrap_or_default()
}

/// What the HTTP side reads: the last audit, whether a complete one was done (/readyz), and the
/// process's counters.
#[derive(Default)]
pub(crate) struct Published {
    pub audit: Option<Arc<Audited>>,
    pub ready: bool,
    pub process: Process,
}

fn seconds(s: f64) -> Duration {
    // parse_seconds keeps it finite and within a day.
    Duration::from_secs_f64(s.clamp(0.0, 86_400.0))
}

fn is_loopback(listen: &str) -> bool {
    match listen.parse::<std::net::SocketAddr>() {
        Ok(a) => a.ip().is_loopback(),
        Err(_) => listen.starts_with("localhost:"),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let log = Log(match args.log_format {
        LogFormatArg::Text => LogFormat::Text,
        LogFormatArg::Json => LogFormat::Json,
    });
    let policy = crate::input::policy_or_default(args.policy.as_deref())?;
    let (listener, tls) = listen(&args, log)?;
    // The advisory data: read once here, and again after an update that brought bulletins.
    let advisories = Arc::new(RwLock::new(crate::input::advisories(&[], false)?.data));
    let refreshed = Arc::new(AtomicBool::new(false));
    if let Some(every) = args.update_advisories_every {
        refresh_advisories(
            args.update_advisories_from.clone(),
            Duration::from_secs_f64(every),
            Arc::clone(&advisories),
            Arc::clone(&refreshed),
            log,
        );
    }
    let published = Arc::new(RwLock::new(Published {
        audit: None,
        ready: false,
        process: Process {
            version: env!("CARGO_PKG_VERSION").to_string(),
            ..Process::default()
        },
    }));
    let options = args.cluster.options();
    let service = Service::start(options.clone());
    let access = match args.auth {
        AuthMode::Kubernetes => Some(Arc::new(access::Access::new(service.clone()))),
        AuthMode::None => None,
    };
    http::serve(listener, tls, Arc::clone(&published), access, log);
    let timeout = options.timeout();
    let mirror = follow(options, log);
    let timing = (seconds(args.debounce), seconds(args.max_delay));
    let mut seen = 0;
    loop {
        let snapshot = match next_snapshot(&mirror, &published, &refreshed, &mut seen, timing) {
            Ok(Some(snapshot)) => snapshot,
            Ok(None) => continue,
            Err(fatal) => {
                let error = [("error", Value::from(fatal.as_str()))];
                log.write("error", "cannot follow the cluster", &error);
                anyhow::bail!("{fatal}");
            }
        };
        let Some((audited, duration)) = audit_snapshot(snapshot, &policy, &advisories, log) else {
            continue;
        };
        let audited = Arc::new(audited);
        if let Ok(mut p) = published.write() {
            p.audit = Some(Arc::clone(&audited));
            let complete = audited.report.coverage.complete;
            p.ready |= complete;
            p.process.audited(duration, now_seconds(), complete);
            p.process.watch_errors = mirror.failures();
        }
        if args.write_reports {
            write_reports(&service, &audited, &published, timeout, log);
        }
    }
}

/// Loads the TLS certificate and binds the address to serve on, then logs the start with its
/// warnings: no authentication (`--auth none`), plain HTTP on an address other hosts reach.
fn listen(args: &Args, log: Log) -> anyhow::Result<(TcpListener, Option<http::Tls>)> {
    let tls = match (&args.tls_cert_file, &args.tls_private_key_file) {
        (Some(cert), Some(key)) => {
            Some(http::Tls::load(cert, key).map_err(|e| anyhow::anyhow!("{e}"))?)
        }
        _ => None,
    };
    let listener = TcpListener::bind(&args.listen)
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    let listen = ("listen", Value::from(args.listen.as_str()));
    log.write(
        "info",
        "starting",
        &[
            ("version", Value::from(env!("CARGO_PKG_VERSION"))),
            listen.clone(),
            (
                "scheme",
                Value::from(if tls.is_some() { "https" } else { "http" }),
            ),
            (
                "auth",
                Value::from(match args.auth {
                    AuthMode::Kubernetes => "kubernetes",
                    AuthMode::None => "none",
                }),
            ),
            ("write_reports", Value::from(args.write_reports)),
        ],
    );
    if args.auth == AuthMode::None {
        log.write(
            "warn",
            "authentication is off (--auth none): anyone who can reach the port reads every tenant's findings",
            &[],
        );
    }
    if tls.is_none() && !is_loopback(&args.listen) {
        log.write(
            "warn",
            "serving plain HTTP on a non-loopback address: tokens and reports cross the network unencrypted (--tls-cert-file, --tls-private-key-file)",
            &[listen],
        );
    }
    Ok((listener, tls))
}

/// Lists and watches the cluster, logging each request to the API server that failed.
fn follow(options: gpu_trust_live::Options, log: Log) -> Mirror {
    let on_failure: gpu_trust_live::watch::OnFailure = Arc::new(move |f| {
        log.write(
            "warn",
            "a request to the API server failed",
            &[
                ("request", Value::from(f.request)),
                ("path", Value::from(f.path.as_str())),
                ("error", Value::from(f.message.as_str())),
                ("retry_in_seconds", Value::from(f.retry_in.as_secs_f64())),
            ],
        )
    });
    Mirror::start(options, on_failure)
}

/// Waits for something to audit: a change of the cluster past generation `seen`, or new advisory
/// data; then for `debounce` of quiet, but not past `max_delay` after the change (the first audit
/// runs as soon as every kind has been listed once). The snapshot to audit (`None`: nothing yet),
/// or why the cluster cannot be followed.
fn next_snapshot(
    mirror: &Mirror,
    published: &RwLock<Published>,
    refreshed: &AtomicBool,
    seen: &mut u64,
    (debounce, max_delay): (Duration, Duration),
) -> Result<Option<Snapshot>, String> {
    let generation = mirror.wait_past(*seen, Duration::from_secs(60));
    if let Ok(mut p) = published.write() {
        p.process.watch_errors = mirror.failures();
    }
    if let Some(fatal) = mirror.fatal() {
        return Err(fatal);
    }
    let new_advisories = refreshed.swap(false, Ordering::SeqCst);
    if generation == *seen && !new_advisories {
        return Ok(None);
    }
    let first = Instant::now();
    let mut last = generation;
    let mut quiet = published.read().is_ok_and(|p| p.audit.is_none());
    while !quiet {
        let wait = debounce.min(max_delay.saturating_sub(first.elapsed()));
        let next = mirror.wait_past(last, wait);
        quiet = next == last || first.elapsed() >= max_delay;
        last = next;
    }
    let Some((generation, snapshot)) = mirror.snapshot() else {
        *seen = last;
        return Ok(None);
    };
    *seen = generation;
    Ok(Some(snapshot))
}

/// What the snapshot holds for /metrics: the kinds read, those that could not be (the API paths),
/// the kinds the cluster does not serve, and the objects.
fn coverage(snapshot: &Snapshot) -> Coverage {
    // Errors of the kinds listed; the others are custom kinds found unread in the cluster's
    // CustomResourceDefinitions (or those definitions themselves), which are not in `served`.
    let crd_path = gpu_trust_live::crds::COLLECTION.trim_start_matches('/');
    let listed_errors = (snapshot.diagnostics.iter())
        .filter(|d| !d.location.file.starts_with(crd_path))
        .count();
    Coverage {
        kinds_read: snapshot.served.len() - listed_errors.min(snapshot.served.len()),
        kinds_unreadable: (snapshot.diagnostics.iter())
            .map(|d| d.location.file.clone())
            .collect(),
        kinds_absent: snapshot.absent.len(),
        objects: snapshot.inputs.len(),
    }
}

/// Audits a snapshot with the advisory data in use and renders the full view, logged with its
/// counts; with how long it took. `None` when the policy does not fit the cluster's namespaces
/// (logged; the last audit is kept).
fn audit_snapshot(
    snapshot: Snapshot,
    policy: &gpu_trust_policy::Policy,
    advisories: &RwLock<Advisories>,
    log: Log,
) -> Option<(Audited, f64)> {
    let started = Instant::now();
    let coverage = coverage(&snapshot);
    let mut ingested = crate::live::ingest(snapshot);
    let unknown = gpu_trust_rules::acceptance::unknown_rules(&ingested.fleet);
    ingested.diagnostics.extend(unknown);
    let errors = crate::input::cluster_errors(ingested.diagnostics);
    let fleet = ingested.fleet;
    let tenancy = policy.resolve(&fleet.namespaces);
    output::eprint_diagnostics(tenancy.diagnostics());
    if tenancy.diagnostics().iter().any(Diagnostic::is_error) {
        let message = "the policy does not fit the cluster's namespaces; the last audit is kept";
        log.write("error", message, &[]);
        return None;
    }
    let options = AuditOptions {
        today: Date::from_system_time(SystemTime::now()),
        advisories: (advisories.read()).map_or_else(|p| p.into_inner().clone(), |a| a.clone()),
        evidence: Vec::new(),
        skipped: errors,
        // Nothing lets what could not be read go (no --skip-invalid): an unreadable kind makes
        // the audit partial, as it stops `gpu-trust audit`.
        skip_invalid: false,
        // There is no exit status to guard here: a partial audit is served marked partial, and
        // /metrics says which layers (gpu_trust_coverage_layer).
        accept_partial: false,
        // The page served at / draws the GPUs.
        layout: true,
        pair: None,
        focus: None,
    };
    let input = AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &options,
    };
    let prepared = Prepared::new(&input);
    let report = prepared.report(&input);
    let full = Arc::new(Rendered {
        json: served(Format::Json, &report),
        html: served(Format::Html, &report),
        metrics: prometheus::render(&report, &coverage),
    });
    let duration = started.elapsed().as_secs_f64();
    log_audit(log, &report, &coverage, duration);
    let audited = Audited {
        report,
        coverage,
        fleet,
        tenancy,
        options,
        prepared,
        full,
        views: Mutex::new(BTreeMap::new()),
    };
    Some((audited, duration))
}

/// The log line of an audit done: how long it took, the objects, the findings by severity and the
/// coverage.
fn log_audit(log: Log, report: &AuditReport, coverage: &Coverage, duration: f64) {
    let counts = &report.summary.findings;
    log.write(
        "info",
        "audit done",
        &[
            ("duration_seconds", Value::from(duration)),
            ("objects", Value::from(coverage.objects)),
            ("findings_critical", Value::from(counts.critical)),
            ("findings_high", Value::from(counts.high)),
            ("findings_medium", Value::from(counts.medium)),
            ("findings_low", Value::from(counts.low)),
            ("findings_info", Value::from(counts.info)),
            ("findings_accepted", Value::from(report.summary.accepted)),
            ("coverage_complete", Value::from(report.coverage.complete)),
            (
                "kinds_unreadable",
                Value::from(coverage.kinds_unreadable.len()),
            ),
        ],
    );
}

/// `--write-reports`, once the audit is served: each tenant namespace's OpenReports Report made
/// equal to that tenant's view (an audit focused on it each), counted in the process's metrics and
/// logged; a namespace that refuses does not stop the others.
fn write_reports(
    service: &Service,
    audited: &Audited,
    published: &RwLock<Published>,
    timeout: Duration,
    log: Log,
) {
    let wanted = gpu_trust_report::openreports::render(&audited.report, |tenants| {
        audited.view_report(tenants).0
    });
    let result = service.sync_reports(wanted, timeout);
    let mut p = published.write().ok();
    let done = match result {
        Ok(done) => done,
        Err(e) => {
            if let Some(p) = p.as_mut() {
                p.process.report_write_errors += 1;
            }
            let error = [("error", Value::from(e.to_string()))];
            log.write("error", "the reports could not be written", &error);
            return;
        }
    };
    if let Some(p) = p.as_mut() {
        p.process.report_writes += (done.created + done.replaced + done.deleted) as u64;
        p.process.report_write_errors += done.failed.len() as u64;
    }
    for (path, error) in &done.failed {
        log.write(
            "warn",
            "a report was not written",
            &[
                ("path", Value::from(path.as_str())),
                ("error", Value::from(error.as_str())),
            ],
        );
    }
    log.write(
        "info",
        "reports written",
        &[
            ("created", Value::from(done.created)),
            ("replaced", Value::from(done.replaced)),
            ("deleted", Value::from(done.deleted)),
            ("unchanged", Value::from(done.unchanged)),
            ("conflicts", Value::from(done.conflicts)),
            ("failed", Value::from(done.failed.len())),
        ],
    );
}

/// Every `every`, fetches the vendor's new bulletins into the cache; when some came and the cache
/// reads, they become the advisory data of the next audit, which `refreshed` asks for. A failed
/// update keeps the last good data and is logged.
fn refresh_advisories(
    from: String,
    every: Duration,
    advisories: Arc<RwLock<Advisories>>,
    refreshed: Arc<AtomicBool>,
    log: Log,
) {
    std::thread::spawn(move || loop {
        std::thread::sleep(every);
        let today = Date::from_system_time(SystemTime::now());
        let outcome = match super::advisories::update_cache(from.clone(), today) {
            Ok((o, _)) => o,
            Err(e) => {
                log.write(
                    "warn",
                    "cannot update the advisory data",
                    &[("error", Value::from(e))],
                );
                continue;
            }
        };
        for e in &outcome.errors {
            log.write(
                "warn",
                "a bulletin could not be fetched; the last good data is kept",
                &[("error", Value::from(e.to_string()))],
            );
        }
        log.write(
            "info",
            "advisory update",
            &[
                ("from", Value::from(from.as_str())),
                ("added", Value::from(outcome.added.join(","))),
                ("revised", Value::from(outcome.revised.join(","))),
                ("errors", Value::from(outcome.errors.len())),
            ],
        );
        if outcome.added.is_empty() && outcome.revised.is_empty() {
            continue;
        }
        if let Ok(loaded) = crate::input::advisories(&[], false) {
            if let Ok(mut a) = advisories.write() {
                *a = loaded.data;
            }
            refreshed.store(true, Ordering::SeqCst);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_finite_and_bounded() {
        assert_eq!(parse_seconds("0.3"), Ok(0.3));
        for bad in ["NaN", "inf", "-1", "1e300", "86401", "x"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(seconds(86_400.0), Duration::from_secs(86_400));
    }
}
