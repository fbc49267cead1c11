//! `gpu-trust policy check FILE`: validate a tenancy policy and show how it resolves.

use crate::output::{self, write_output};
use anyhow::Context;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpu_trust_policy::{CheckReport, Date, Diagnostic, Tenant, MAX_POLICY_BYTES};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

/// Work with tenancy policy files (who the tenants are, who trusts whom, what is accepted).
#[derive(Debug, clap::Args)]
#[command(after_help = POLICY_EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    pub command: PolicyCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum PolicyCommand {
    Check(CheckArgs),
}

/// Validate a tenancy policy file and show what it declares.
///
/// Every problem is printed as FILE:LINE:COLUMN: error: MESSAGE and the command exits 2; unknown
/// fields are errors, so a typo cannot pass silently. A valid policy exits 0 and prints its tenants
/// (namespaces and attributes), the default trust between tenants and every relation that sets
/// another (with its line), the platform namespaces, and each acceptance with its state today.
#[derive(Debug, clap::Args)]
#[command(after_help = CHECK_EXAMPLES)]
pub struct CheckArgs {
    /// The policy file (`-` reads standard input).
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Judge acceptance expiry on this day (YYYY-MM-DD) instead of today (UTC).
    #[arg(long, value_parser = parse_date, value_name = "DATE")]
    pub today: Option<Date>,
    /// Write to FILE instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

fn parse_date(s: &str) -> Result<Date, String> {
    Date::parse(s).map_err(|e| e.to_string())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        PolicyCommand::Check(a) => check(a),
    }
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let name = args.file.display().to_string();
    let text = match read_input(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("gpu-trust: error: {name}: {e:#}");
            return Ok(output::exit(output::INPUT_ERROR));
        }
    };
    let policy = match gpu_trust_policy::parse(&text, &name) {
        Ok(p) => p,
        Err(errors) => {
            print_diagnostics(&errors);
            eprintln!(
                "gpu-trust: {name}: {} error{} in the policy",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            );
            return Ok(output::exit(output::INPUT_ERROR));
        }
    };
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    let tenancy = policy.resolve(&[]);
    print_diagnostics(tenancy.diagnostics());
    if tenancy.diagnostics().iter().any(Diagnostic::is_error) {
        return Ok(output::exit(output::INPUT_ERROR));
    }
    let report = CheckReport::new(&policy, &tenancy, today);
    for a in tenancy.expired_acceptances(today) {
        let until = a.until.map(|d| d.to_string()).unwrap_or_default();
        eprintln!(
            "{}",
            Diagnostic::warning(
                a.location.clone(),
                format!(
                    "acceptance of {} expired on {until}: it no longer suppresses findings (the audit reports GT003)",
                    a.rule
                ),
            )
        );
    }
    let text = match args.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&report)?),
        Format::Table => render_table(&report, output::stdout_is_terminal(args.output.as_deref())),
    };
    write_output(args.output.as_deref(), &text)?;
    Ok(output::exit(output::CLEAN))
}

/// Reads the file (or standard input for `-`), refusing more than a policy may hold.
fn read_input(path: &Path) -> anyhow::Result<String> {
    let limit = u64::try_from(MAX_POLICY_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(path)
            .context("cannot open")?
            .take(limit)
            .read_to_end(&mut bytes)
            .context("cannot read")?;
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn print_diagnostics(diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        eprintln!("{d}");
    }
}

fn table(terminal: bool, header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    if terminal {
        t.set_content_arrangement(ContentArrangement::Dynamic);
    }
    t.set_header(header.iter().copied());
    t
}

/// Text from the policy file, escaped for the terminal.
fn esc(text: &str) -> String {
    gpu_trust_model::terminal::escape(text).into_owned()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn namespaces_of(t: &Tenant) -> String {
    let list = if t.declared_namespaces.is_empty() {
        &t.namespaces
    } else {
        &t.declared_namespaces
    };
    if list.is_empty() {
        "(none: filled by the tenant label)".to_string()
    } else {
        list.join(", ")
    }
}

fn render_table(r: &CheckReport, terminal: bool) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Policy {}: valid ({}, {}, {})\n\n",
        r.file.as_deref().unwrap_or("(default)"),
        plural(r.tenants.len(), "tenant", "tenants"),
        plural(r.pairs, "pair", "pairs"),
        plural(r.acceptances.len(), "acceptance", "acceptances"),
    ));

    out.push_str("Tenants\n");
    if r.tenants.is_empty() {
        out.push_str("  none declared: every namespace is a tenant of its own\n");
    } else {
        let mut t = table(
            terminal,
            &[
                "tenant",
                "namespaces",
                "latency",
                "confidential",
                "contract",
                "subjects",
            ],
        );
        for tenant in &r.tenants {
            let subjects: Vec<String> = tenant
                .subjects
                .iter()
                .map(|s| match &s.namespace {
                    Some(ns) => format!("{} {ns}/{}", s.kind, s.name),
                    None => format!("{} {}", s.kind, s.name),
                })
                .collect();
            t.add_row(vec![
                esc(&tenant.name),
                esc(&namespaces_of(tenant)),
                tenant.latency.to_string(),
                if tenant.confidential { "yes" } else { "no" }.to_string(),
                tenant.contract.to_string(),
                esc(&subjects.join(", ")),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    let defaulted = r.pairs.saturating_sub(r.relations.len());
    out.push_str(&format!(
        "\nTrust between tenants (default: {}, for {}; inside one tenant: full)\n",
        r.default_trust,
        plural(defaulted, "pair", "pairs")
    ));
    if r.pairs == 0 {
        out.push_str("  no pairs: fewer than two tenants declared\n");
    } else if r.relations.is_empty() {
        out.push_str("  no relations: every pair has the default\n");
    } else {
        let mut t = table(terminal, &["tenants", "trust", "from"]);
        for p in &r.relations {
            let from = match p.line {
                Some(line) => format!("relation (line {line})"),
                None => "default".to_string(),
            };
            t.add_row(vec![
                esc(&format!("{} / {}", p.tenants[0], p.tenants[1])),
                p.trust.to_string(),
                from,
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    out.push_str(&format!(
        "\nPlatform namespaces (infrastructure, never tenants): {}\n",
        r.platform_namespaces.join(", ")
    ));
    out.push_str(&format!(
        "Tenant label (adds tenants for unclaimed namespaces): {}\n",
        if r.tenant_labels.is_empty() {
            "none".to_string()
        } else {
            r.tenant_labels.join(", ")
        }
    ));
    out.push_str(
        "Any other namespace is a tenant of its own, unassigned, with the default trust.\n",
    );
    out.push_str(&format!(
        "Host patch window: {}\n",
        plural(r.patch_window_days as usize, "day", "days")
    ));
    out.push_str(&format!(
        "Replicas per shared GPU without a memory limit before GT110: {}\n",
        r.max_replicas
    ));

    if !r.workloads.is_empty() {
        out.push_str("\nWorkloads\n");
        let mut t = table(
            terminal,
            &["namespace", "labels", "kind", "peak memory", "latency"],
        );
        for w in &r.workloads {
            let labels: Vec<String> = w.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            t.add_row(vec![
                w.namespace
                    .as_ref()
                    .map_or("any".to_string(), |p| p.pattern.clone()),
                labels.join(", "),
                w.kind.map_or(String::new(), |k| k.as_str().to_string()),
                w.peak_memory_mib
                    .map_or(String::new(), |m| format!("{m} MiB")),
                w.latency.map_or(String::new(), |l| l.to_string()),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    out.push_str(&format!("\nAcceptances (as of {})\n", r.today));
    if r.acceptances.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut t = table(
            terminal,
            &["rule", "tenants", "reason", "until", "state", "line"],
        );
        for a in &r.acceptances {
            t.add_row(vec![
                a.rule.clone(),
                a.tenants.as_ref().map_or("any".to_string(), |s| {
                    esc(&s.iter().cloned().collect::<Vec<_>>().join(", "))
                }),
                esc(&a.reason),
                a.until.map_or("no end".to_string(), |d| d.to_string()),
                a.state.as_str().to_string(),
                a.line.to_string(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    out
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const POLICY_EXAMPLES: &str = "\
Examples:
  gpu-trust policy check policy.yaml
  gpu-trust policy check policy.yaml --format json";

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const CHECK_EXAMPLES: &str = "\
Examples:
  gpu-trust policy check policy.yaml
  gpu-trust policy check policy.yaml --format json | jq '.pairs[] | select(.trust != \"none\")'
  gpu-trust policy check policy.yaml --today 2027-07-01   # which acceptances will have expired
  cat policy.yaml | gpu-trust policy check -";
