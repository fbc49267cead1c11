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
    Init(InitArgs),
}

/// Write a tenancy policy to start from, drafted from the cluster's namespaces.
///
/// Namespaces are grouped into tenants by the labels multi-tenancy tools set: Capsule's tenant
/// label, HNC's tree labels (a tree is a tenant, named by its root), the host namespace of a
/// vCluster (named by the virtual cluster), Kubeflow profiles, and the `team` or `tenant` labels in
/// common use (a guess). Any other namespace is a tenant of its own (a guess); namespaces named
/// `*-system` are proposed as platform namespaces (a guess); the built-in platform namespaces are
/// named in a comment. Trust between tenants stays none. Every guess is marked in a comment. The
/// policy passes `gpu-trust policy check`; read it before using it.
///
/// Without PATH, the namespaces of the live cluster are read, as `gpu-trust audit` reads them.
#[derive(Debug, clap::Args)]
#[command(after_help = INIT_EXAMPLES, mut_arg("format", output::offer(INIT_FORMATS)))]
pub struct InitArgs {
    /// Files or directories to read; `-` reads standard input. None: the live cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cluster: crate::live::ClusterArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Follow symbolic links that lead out of an input directory.
    #[arg(long)]
    pub follow_symlinks: bool,
}

/// The draft policy, as YAML with its comments.
const INIT_FORMATS: &[Format] = &[Format::Yaml];

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
        PolicyCommand::Init(a) => init(a),
    }
}

fn init(args: InitArgs) -> anyhow::Result<ExitCode> {
    if !args.paths.is_empty() && args.cluster.any() {
        anyhow::bail!(crate::live::WITH_PATHS);
    }
    let targets = args.output.targets(INIT_FORMATS)?;
    for out in targets.iter().filter_map(output::Target::path) {
        let read: Vec<&std::path::Path> = args.paths.iter().map(PathBuf::as_path).collect();
        if let Some(input) = output::overwritten_input(out, &read) {
            anyhow::bail!(
                "--output {} would overwrite {}, which this run reads; write the policy elsewhere",
                output::escaped(&out.display().to_string()),
                output::escaped(&input.display().to_string())
            );
        }
    }
    let (ingested, documents) =
        input::cluster_read(&args.paths, &args.cluster, args.follow_symlinks)?;
    // The namespaces of documents that cannot be read are not known: nothing is drafted from a
    // part of the cluster.
    let errors = input::print_cluster_diagnostics(&ingested.diagnostics);
    if errors > 0 {
        return Err(input::refuse_unusable(errors, "draft a policy"));
    }
    let from = match (&documents.context, args.paths.as_slice()) {
        (Some(context), _) => format!("the cluster of context {context}"),
        (None, []) => "the cluster".to_string(),
        (None, paths) => paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    let draft = gpu_trust_policy::init::draft(&ingested.fleet);
    let text = gpu_trust_report::policy::init::yaml(&draft, &from);
    output::write_targets(&targets, output::CLEAN, |_| Ok(text.clone()))
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let name = args.file.display().to_string();
    let targets = args.output.targets(FORMATS)?;
    for out in targets.iter().filter_map(|t| t.path()) {
        if output::overwritten_input(out, &[args.file.as_path()]).is_some() {
            anyhow::bail!(
                "--output {} is the policy being checked; write the report elsewhere",
                output::escaped(&out.display().to_string())
            );
        }
    }
    let policy = match input::load_policy(&args.file) {
        Ok(p) => p,
        Err(PolicyError::Unreadable(d)) => return Err(input::unreadable_policy(&name, &d)),
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
  gpu-trust policy init cluster.yaml --output policy.yaml
  gpu-trust policy check policy.yaml
  gpu-trust policy check policy.yaml --format json";

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const INIT_EXAMPLES: &str = "\
Examples:
  gpu-trust policy init --output tenancy.yaml
  gpu-trust policy init cluster.yaml > tenancy.yaml
  gpu-trust policy init --context prod -n team-a";

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const CHECK_EXAMPLES: &str = "\
Examples:
  gpu-trust policy check policy.yaml
  gpu-trust policy check policy.yaml --format json | jq '.pairs[] | select(.trust != \"none\")'
  gpu-trust policy check policy.yaml --today 2027-07-01   # which acceptances will have expired
  cat policy.yaml | gpu-trust policy check -";
