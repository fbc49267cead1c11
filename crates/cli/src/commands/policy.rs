//! `gpu-trust policy check FILE`: validate a tenancy policy and show how it resolves.

use crate::output::{self, write_output};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpu_trust_policy::{CheckReport, Date, Diagnostic, Tenant, MAX_POLICY_BYTES};
use std::path::PathBuf;
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
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Judge acceptance expiry on this day instead of today (UTC).
    #[arg(long, value_parser = parse_date, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A summary of tenants, pairs and acceptances.
    Table,
    /// The check as JSON.
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
    let text = match output::read_text(&args.file, MAX_POLICY_BYTES) {
        Ok(t) => t,
        Err(d) => {
            output::eprint_diagnostics([&d]);
            output::eprint_error(format!("{name}: the policy could not be read"));
            return Ok(output::exit(output::INPUT_ERROR));
        }
    };
    let policy = match gpu_trust_policy::parse(&text, &name) {
        Ok(p) => p,
        Err(errors) => {
            output::eprint_diagnostics(&errors);
            output::eprint_line(&format!(
                "gpu-trust: {name}: {} error{} in the policy",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            ));
            return Ok(output::exit(output::INPUT_ERROR));
        }
    };
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    let tenancy = policy.resolve(&[]);
    // Resolution over no namespaces, and what the policy would do to any cluster: equally
    // specific globs of two tenants that share a namespace are refused by the audit, so they are
    // errors here too; platform namespaces a tenant takes are warnings.
    let mut diagnostics: Vec<Diagnostic> = tenancy.diagnostics().to_vec();
    diagnostics.extend(policy.static_diagnostics());
    diagnostics.sort();
    diagnostics.dedup();
    output::eprint_diagnostics(&diagnostics);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        output::eprint_line(&format!(
            "gpu-trust: {name}: {errors} error{} in the policy",
            if errors == 1 { "" } else { "s" }
        ));
        return Ok(output::exit(output::INPUT_ERROR));
    }
    let report = CheckReport::new(&policy, &tenancy, today);
    for a in tenancy.expired_acceptances(today) {
        let until = a.until.map(|d| d.to_string()).unwrap_or_default();
        output::eprint_diagnostics([&Diagnostic::warning(
            a.location.clone(),
            format!(
                "acceptance of {} expired on {until}: it no longer suppresses findings (the audit reports GT003)",
                a.rule
            ),
        )]);
    }
    for a in tenancy.acceptances().iter().filter(|a| !a.has_reason()) {
        output::eprint_diagnostics([&Diagnostic::warning(
            a.location.clone(),
            format!(
                "acceptance of {} gives no reason: it accepts nothing (the audit reports GT004)",
                a.rule
            ),
        )]);
    }
    let text = match args.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&report)?),
        Format::Table => render_table(&report, output::stdout_is_terminal(args.output.as_deref())),
    };
    output::verdict(write_output(args.output.as_deref(), &text), output::CLEAN)
}

/// Text from the policy, escaped for a terminal.
fn e(text: &str) -> String {
    output::escaped(text).into_owned()
}

fn joined(items: &[String], sep: &str) -> String {
    items.iter().map(|s| e(s)).collect::<Vec<_>>().join(sep)
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
        e(r.file.as_deref().unwrap_or("(default)")),
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
                    Some(ns) => format!("{} {}/{}", e(&s.kind), e(ns), e(&s.name)),
                    None => format!("{} {}", e(&s.kind), e(&s.name)),
                })
                .collect();
            t.add_row(vec![
                e(&tenant.name),
                e(&namespaces_of(tenant)),
                tenant.latency.to_string(),
                if tenant.confidential { "yes" } else { "no" }.to_string(),
                tenant.contract.to_string(),
                subjects.join(", "),
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
                format!("{} / {}", e(&p.tenants[0]), e(&p.tenants[1])),
                p.trust.to_string(),
                from,
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    let platform: Vec<String> = r
        .platform_namespaces
        .iter()
        .filter(|p| !r.platform_claimed.contains_key(*p))
        .map(|p| e(p))
        .collect();
    out.push_str(&format!(
        "\nPlatform namespaces (infrastructure, never tenants unless a tenant names them): {}\n",
        platform.join(", ")
    ));
    if !r.platform_claimed.is_empty() {
        let claimed: Vec<String> = r
            .platform_claimed
            .iter()
            .map(|(ns, t)| format!("{} (tenant {})", e(ns), e(t)))
            .collect();
        out.push_str(&format!(
            "Platform namespaces a tenant names, so the tenant's: {}\n",
            claimed.join(", ")
        ));
    }
    out.push_str(&format!(
        "Tenant label (adds tenants for unclaimed namespaces): {}\n",
        if r.tenant_labels.is_empty() {
            "none".to_string()
        } else {
            joined(&r.tenant_labels, ", ")
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
            let labels: Vec<String> = w
                .labels
                .iter()
                .map(|(k, v)| format!("{}={}", e(k), e(v)))
                .collect();
            t.add_row(vec![
                w.namespace
                    .as_ref()
                    .map_or("any".to_string(), |p| e(&p.pattern)),
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
            &["rule", "scope", "reason", "until", "state", "line"],
        );
        for a in &r.acceptances {
            t.add_row(vec![
                e(&a.rule),
                e(&a.scope()),
                if a.reason.is_empty() {
                    "(none: accepts nothing, GT004)".to_string()
                } else {
                    e(&a.reason)
                },
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
