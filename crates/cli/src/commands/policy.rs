//! `gpu-trust policy check FILE`: validate a tenancy policy and show how it resolves.

use crate::input::{self, PolicyError};
use crate::output::{self, Format, OutputArgs};
use gpu_trust_model::Code;
use gpu_trust_policy::{CheckReport, Date, Diagnostic};
use gpu_trust_report::plural;
use gpu_trust_report::policy::{json, table};
use gpu_trust_rules::registry::{codes_reporting, Reports};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

/// Check a tenancy policy and show how it resolves.
///
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
#[command(after_help = CHECK_EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct CheckArgs {
    /// The policy file (`-` reads standard input).
    pub file: PathBuf,
    /// Judge acceptance expiry on this day instead of today (UTC).
    #[arg(long, value_parser = Date::parse, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A summary of tenants, pairs and acceptances, or the check as JSON.
const FORMATS: &[Format] = &[Format::Table, Format::Json];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        PolicyCommand::Check(a) => check(a),
    }
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let name = args.file.display().to_string();
    let targets = match args.output.targets(FORMATS) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    for out in targets.iter().filter_map(|t| t.path()) {
        if output::overwritten_input(out, &[args.file.as_path()]).is_some() {
            output::eprint_error(format!(
                "--output {} is the policy being checked; write the report elsewhere",
                output::escaped(&out.display().to_string())
            ));
            return Ok(output::exit(output::INPUT_ERROR));
        }
    }
    let policy = match input::load_policy(&args.file) {
        Ok(p) => p,
        Err(PolicyError::Unreadable(d)) => return Ok(input::unreadable_policy(&name, &d)),
        Err(PolicyError::Invalid(errors)) => {
            output::eprint_diagnostics(&errors);
            return Ok(invalid(&name, errors.len()));
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
        return Ok(invalid(&name, errors));
    }
    let report = CheckReport::new(&policy, &tenancy, today);
    for a in tenancy.expired_acceptances(today) {
        let until = a.until.map(|d| d.to_string()).unwrap_or_default();
        output::eprint_diagnostics([&Diagnostic::warning(Code::AcceptanceExpired,
            a.location.clone(),
            format!(
                "acceptance of {} expired on {until}: it no longer suppresses findings (the audit reports {})",
                a.rule,
                codes_reporting(Reports::ExpiredAcceptance)
            ),
        )]);
    }
    for a in tenancy.acceptances().iter().filter(|a| !a.has_reason()) {
        output::eprint_diagnostics([&Diagnostic::warning(
            Code::AcceptanceWithoutReason,
            a.location.clone(),
            format!(
                "acceptance of {} gives no reason: it accepts nothing (the audit reports {})",
                a.rule,
                codes_reporting(Reports::AcceptanceWithoutReason)
            ),
        )]);
    }
    output::write_targets(&targets, output::CLEAN, |t| {
        Ok(match t.format {
            Format::Json => json::render(&report)?,
            _ => table::render(&report, t.width()),
        })
    })
}

/// `errors` errors in the policy `name`: the line that ends the check, and its exit code.
fn invalid(name: &str, errors: usize) -> ExitCode {
    output::eprint_line(&format!(
        "gpu-trust: {name}: {} in the policy",
        plural(errors, "error", "errors")
    ));
    output::exit(output::INPUT_ERROR)
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
