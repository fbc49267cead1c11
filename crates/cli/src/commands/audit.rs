//! `gpu-trust audit PATH... --policy FILE`: judge a cluster against a tenancy policy.
//!
//! This module only reads files, hands them to ingest, the policy and the rules, and renders the report:
//! every judgement is in `gpu-trust-rules`, every format in `gpu-trust-report`.

use crate::output::{self, colour_enabled, stream_output};
use anyhow::Context as _;
use gpu_trust_model::evidence::ProbeEvidence;
use gpu_trust_model::{Diagnostic, Location, Severity};
use gpu_trust_policy::{Date, Policy, MAX_POLICY_BYTES};
use gpu_trust_report::sarif::SarifOptions;
use gpu_trust_report::table::TableOptions;
use gpu_trust_report::{html, json, registry_docs, sarif, table};
use gpu_trust_rules::{audit, Advisories, AuditInput, AuditOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

/// Audit a cluster against a tenancy policy: where tenants share a memory pool, a fault domain, a
/// host or a control plane, which of those break the declared trust, and each tenant's blast radius.
///
/// Without PATH, the cluster of the current kubeconfig context is read through its API server
/// (--kubeconfig, --context, -n/--namespace choose another; inside a pod, its ServiceAccount): every
/// kind gpu-trust reads that the server serves, with list permission only (--print-rbac prints the
/// role). A kind it may not list (403) or that fails to list is reported like an unreadable file.
/// PATH is a file or directory of YAML or JSON (multi-document streams and `kubectl get -o yaml`
/// List dumps), or `-` for standard input. Without --policy every namespace is its own tenant and
/// different tenants do not trust each other.
///
/// Exit status: 0 when no finding that is not accepted is at or above --fail-on, 1 when one is, 2 for
/// a usage error or unusable input. A malformed document is reported as file:line:column and exits 2
/// unless --skip-invalid is given (then it is listed under "skipped" in the report): an audit over a
/// partial input must never look clean.
///
/// Examples:
///   gpu-trust audit --policy tenancy.yaml
///   gpu-trust audit --context prod -n team-a -o json
///   gpu-trust audit cluster.yaml --policy tenancy.yaml
///   gpu-trust audit manifests/ dumps/ --policy tenancy.yaml --fail-on critical
///   kubectl get nodes,pods,namespaces,configmaps -A -o yaml | gpu-trust audit - --policy t.yaml
///   gpu-trust audit cluster.yaml --format sarif --output gpu-trust.sarif --sarif-root .
///   gpu-trust audit cluster.yaml -o json | jq '.findings[] | select(.layer=="device")'
///   gpu-trust audit cluster.yaml --policy tenancy.yaml --format html --output report.html
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Files or directories to read; `-` reads standard input. None: the live cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cluster: crate::live::ClusterArgs,
    /// Print the read-only ServiceAccount, ClusterRole and ClusterRoleBinding a live audit needs,
    /// and exit.
    #[arg(long)]
    pub print_rbac: bool,
    /// The tenancy policy (tenants, trust, contracts, acceptances).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 when a finding that is not accepted has this severity or a higher one.
    #[arg(long, value_parser = parse_severity, default_value = "high", value_name = "SEVERITY")]
    pub fail_on: Severity,
    /// Audit the documents that can be read and list the others under "skipped", instead of exiting 2.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Advisory data to use instead of the built-in data (the format of the built-in advisories.yaml).
    #[arg(long, value_name = "FILE")]
    pub advisories: Option<PathBuf>,
    /// The date acceptances expire against and patch windows count to (default: today).
    #[arg(long, value_parser = parse_date, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    /// Probe results (`gpu-trust probe --format json`) to attach to the findings they measured; repeatable.
    #[arg(long, value_name = "FILE")]
    pub evidence: Vec<PathBuf>,
    /// The directory SARIF URIs are relative to (the repository root; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub sarif_root: Option<PathBuf>,
    /// Follow symbolic links that lead out of an input directory (by default they are reported as
    /// unread input).
    #[arg(long)]
    pub follow_symlinks: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Findings grouped by layer, pairs, blast radius and a summary line.
    Table,
    /// The report as `gpu-trust/audit/v1` JSON.
    Json,
    /// SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// One self-contained HTML page (no network access): blast-radius matrix, GPU layouts, findings.
    Html,
}

fn parse_severity(s: &str) -> Result<Severity, String> {
    Severity::parse(&s.to_ascii_lowercase())
        .ok_or_else(|| format!("unknown severity `{s}`; one of critical, high, medium, low, info"))
}

fn parse_date(s: &str) -> Result<Date, String> {
    Date::parse(s).map_err(|e| e.to_string())
}

/// Prints diagnostics to standard error, one per line, as `file:line:column: level: message`.
fn print_diagnostics<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) {
    output::eprint_diagnostics(diagnostics);
}

fn input_error(message: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    output::eprint_error(message);
    Ok(output::exit(output::INPUT_ERROR))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.print_rbac {
        return output::verdict(
            output::write_output(args.output.as_deref(), &gpu_trust_live::rbac::manifests()),
            output::CLEAN,
        );
    }
    if !args.paths.is_empty() && args.cluster.any() {
        return input_error(crate::live::WITH_PATHS);
    }
    if args.policy.as_deref() == Some(Path::new("-"))
        && args.paths.iter().any(|p| p == Path::new("-"))
    {
        return input_error("standard input can hold the cluster or the policy, not both");
    }

    // The policy: its errors stop the run before anything else is read.
    let policy = match &args.policy {
        Some(path) => match read_policy(path) {
            Ok(p) => p,
            Err(code) => return Ok(code),
        },
        None => Policy::default(),
    };

    let advisories = match &args.advisories {
        Some(path) => {
            let name = path.display().to_string();
            let text = match output::read_text(path, MAX_POLICY_BYTES) {
                Ok(t) => t,
                Err(d) => {
                    print_diagnostics([&d]);
                    return input_error(format!("{name}: the advisory data could not be read"));
                }
            };
            match Advisories::parse(&text, &name) {
                Ok(a) => a,
                Err(errors) => {
                    print_diagnostics(&errors);
                    return input_error(format!("{name}: the advisory data is not usable"));
                }
            }
        }
        None => Advisories::builtin().clone(),
    };

    let mut evidence = Vec::new();
    for path in &args.evidence {
        match read_evidence(path) {
            Ok(e) => evidence.push(e),
            Err(d) => {
                print_diagnostics([&d]);
                return Ok(output::exit(output::INPUT_ERROR));
            }
        }
    }

    // The cluster: every problem is reported before deciding whether the run can go on.
    let ingested = if args.paths.is_empty() {
        match crate::live::load(&args.cluster) {
            Some(i) => i,
            None => return Ok(output::exit(output::INPUT_ERROR)),
        }
    } else {
        load_cluster(&args.paths, args.follow_symlinks)
    };
    let (errors, warnings): (Vec<Diagnostic>, Vec<Diagnostic>) = ingested
        .diagnostics
        .into_iter()
        .partition(Diagnostic::is_error);
    print_diagnostics(&warnings);
    if !errors.is_empty() {
        print_diagnostics(&errors);
        if !args.skip_invalid {
            output::eprint_line(&format!(
                "gpu-trust: {} input document{} could not be used; fix {} or pass --skip-invalid to audit the rest",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" },
                if errors.len() == 1 { "it" } else { "them" },
            ));
            return Ok(output::exit(output::INPUT_ERROR));
        }
        output::eprint_line(&format!(
            "gpu-trust: warning: skipping {} unusable input document{}: the report covers only part of the input",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ));
    }
    let fleet = ingested.fleet;
    if fleet.nodes.is_empty() && fleet.workloads.is_empty() && fleet.namespaces.is_empty() {
        return input_error(
            "the input holds no Node, Namespace, Pod or workload object: nothing to audit \
             (an empty audit must not pass for a clean one)",
        );
    }

    let tenancy = policy.resolve(&fleet.namespaces);
    print_diagnostics(tenancy.diagnostics());
    if tenancy.diagnostics().iter().any(Diagnostic::is_error) {
        return input_error("the policy does not fit the cluster's namespaces");
    }

    let options = AuditOptions {
        today: args
            .today
            .unwrap_or_else(|| Date::from_system_time(SystemTime::now())),
        advisories,
        evidence,
        skipped: errors,
    };
    let report = audit(&AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &options,
    });

    // What the HTML page draws comes from the fleet; the other formats need only the report.
    let layout = if args.format == Format::Html {
        gpu_trust_rules::layout::build(&fleet, &tenancy)
    } else {
        Vec::new()
    };

    // The verdict is known before a byte is written: a reader that goes away cannot change it.
    let failing = report.summary.findings.at_or_above(args.fail_on);
    let code = if failing > 0 {
        output::FINDINGS
    } else {
        output::CLEAN
    };
    let path = args.output.as_deref();
    let written = stream_output(path, |w| {
        match args.format {
            Format::Table => {
                let options = TableOptions {
                    colour: colour_enabled(path),
                    ..TableOptions::default()
                };
                w.write_all(table::render(&report, &options).as_bytes())?
            }
            Format::Json => json::write(&report, w)?,
            Format::Sarif => {
                let cwd = std::env::current_dir().context("cannot read the current directory")?;
                let mut options = SarifOptions::new(env!("CARGO_PKG_VERSION"), cwd.clone());
                if let Some(root) = &args.sarif_root {
                    options.root = if root.is_absolute() {
                        root.clone()
                    } else {
                        cwd.join(root)
                    };
                }
                options.fallback_file = args
                    .policy
                    .as_ref()
                    .or_else(|| args.paths.first())
                    .map(|p| p.display().to_string());
                w.write_all(sarif::render(&report, &registry_docs(), &options)?.as_bytes())?
            }
            Format::Html => {
                w.write_all(html::render(&report, &layout, &registry_docs()).as_bytes())?
            }
        }
        Ok(())
    });

    // The process ends here: freeing a large fleet and report object by object would only cost time
    // (about 4% of the instructions of a 60,000-pod audit); the system takes the memory back at exit.
    std::mem::forget(report);
    std::mem::forget(fleet);
    output::verdict(written, code)
}

/// Reads and validates the policy; on failure prints every error and returns the exit code.
pub(crate) fn read_policy(path: &Path) -> Result<Policy, ExitCode> {
    let name = path.display().to_string();
    let text = match output::read_text(path, MAX_POLICY_BYTES) {
        Ok(t) => t,
        Err(d) => {
            print_diagnostics([&d]);
            output::eprint_error(format!("{name}: the policy could not be read"));
            return Err(output::exit(output::INPUT_ERROR));
        }
    };
    gpu_trust_policy::parse(&text, &name).map_err(|errors| {
        print_diagnostics(&errors);
        output::eprint_error(format!(
            "{name}: {} error{} in the policy",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ));
        output::exit(output::INPUT_ERROR)
    })
}

/// Probe evidence (`gpu-trust/probe/v1` JSON); an error names the file, line and column.
fn read_evidence(path: &Path) -> Result<ProbeEvidence, Diagnostic> {
    let name = path.display().to_string();
    let text = output::read_text(path, MAX_POLICY_BYTES)?;
    let evidence: ProbeEvidence = gpu_trust_source::parse_json(&text, &name).map_err(|mut d| {
        d.message = format!("not probe evidence: {}", d.message);
        d
    })?;
    if !evidence.schema_supported() {
        return Err(Diagnostic::error(
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

/// Reads every path (`-` is standard input) and builds the fleet model; every problem comes back as a
/// diagnostic, what the reader left out of a directory included.
pub(crate) fn load_cluster(
    paths: &[PathBuf],
    follow_symlinks: bool,
) -> gpu_trust_model::fleet::Ingested {
    let options = gpu_trust_ingest::Options::default();
    let (inputs, gathered) = gpu_trust_source::gather_with(
        paths,
        &mut std::io::stdin().lock(),
        &gpu_trust_source::GatherOptions {
            limits: options.limits,
            follow_symlinks,
        },
    );
    let mut ingested = gpu_trust_ingest::ingest(&inputs, &options);
    ingested.diagnostics.extend(gathered);
    ingested.diagnostics.sort();
    ingested.diagnostics.dedup();
    ingested
}
