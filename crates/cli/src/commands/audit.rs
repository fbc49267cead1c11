//! `gpu-trust audit PATH... --policy FILE`: judge a cluster against a tenancy policy.
//!
//! This module only reads files, hands them to ingest, the policy and the rules, and renders the report:
//! every judgement is in `gpu-trust-rules`, every format in `gpu-trust-report`.

use crate::audit_flags::{
    fail_at, fail_on_parser, parse_code, parse_severity, relaxed, FailOn, FORMATS,
};
use crate::input;
use crate::output::{self, colour_enabled, stream_output, Format, OutputArgs, OutputTarget};
use anyhow::Context as _;
use gpu_trust_model::report::Provenance;
use gpu_trust_model::{Diagnostic, Severity};
use gpu_trust_policy::Date;
use gpu_trust_report::audit::{render, Format as ReportFormat, Options as RenderOptions, Place};
use gpu_trust_report::{plural, registry_docs};
use gpu_trust_rules::{audit, AuditInput, AuditOptions, Prepared};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

/// Judge a cluster against a tenancy policy, layer by layer.
///
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
/// A rule about pairs of tenants reports each node group (GPU model and sharing configuration) or the
/// API server once, with its tenants and the number of pairs; an acceptance naming two tenants
/// accepts that pair.
///
/// Exit status: 0 when no finding that is not accepted is at or above --fail-on, 1 when one is, 2 for
/// a usage error, unusable input or a partial audit. A malformed document is reported as
/// file:line:column and exits 2 unless --skip-invalid is given (then it is listed under "skipped" in
/// the report): an audit over a partial input must never look clean.
///
/// Coverage: every report says, per layer (device, host, confidentiality, control plane, contract),
/// whether the input puts it in play and whether it was evaluated, partly evaluated or not evaluated,
/// and why. GPU nodes, or workloads that request GPUs, put the device, host and contract layers in
/// play; tenant namespaces put the control plane in play; a confidential tenant or a GPU with CC mode
/// on puts confidentiality in play. A layer in play is partial when the input lacks what its checks
/// need: no Node objects (manifests only), pods bound to nodes absent from the input, no RoleBinding
/// or ClusterRoleBinding. Such a run writes its report and exits 2, naming each gap on standard error,
/// unless --accept-partial is given; then the report says at the top that it is partial. Facts a
/// platform hides (GKE's driver version) and configs absent from the input are listed too, but do not
/// make the run partial: rules GT001, GT002, GT208 and GT301 report them as findings.
///
/// Manifests alone (`helm template`) still get the checks that need no node: a privileged container
/// requesting a GPU, NVIDIA_VISIBLE_DEVICES without a GPU request, training or a greedy inference
/// server on a shared resource name (`nvidia.com/gpu.shared`, a fraction). --nodes FILE adds the
/// cluster's nodes and their GPU configuration so that co-location is judged as well.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
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
    #[command(flatten)]
    pub output: OutputArgs,
    /// Read defaults from FILE instead of the `.gpu-trust.yaml` of the working directory or of
    /// the repository root.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Read no configuration file.
    #[arg(long, conflicts_with = "config")]
    pub no_config: bool,
    /// Never read the live cluster: without PATH, stop with an error instead. For hooks and CI
    /// jobs, where an empty list of files must not mean the cluster of whoever runs them.
    #[arg(long)]
    pub no_live: bool,
    /// Exit 1 when a finding that is not accepted has this severity or a higher one; `never` keeps
    /// the exit status 0 whatever is found (default: high).
    #[arg(long, value_parser = fail_on_parser(), ignore_case = true, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
    /// Print only findings of this severity or a higher one (table and Markdown; the JSON, SARIF,
    /// JUnit and HTML reports keep every finding; default: low, so info findings are counted, not
    /// printed). The summary still counts them all.
    #[arg(long, value_parser = parse_severity, value_name = "SEVERITY")]
    pub min_severity: Option<Severity>,
    /// Print accepted findings too (table and Markdown). By default they are left out and counted;
    /// the JSON and SARIF reports always keep them, marked accepted.
    #[arg(long)]
    pub show_accepted: bool,
    /// Audit the documents that can be read and list the others under "skipped", instead of exiting 2.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Do not print warnings of this diagnostic code (docs/diagnostics.md lists them); repeatable.
    /// Errors are never silenced: an unusable document still exits 2.
    #[arg(long, value_name = "CODE", value_parser = parse_code)]
    pub silence: Vec<gpu_trust_model::Code>,
    /// Advisory data: CSAF 2.0 documents (vendor security bulletins, JSON), added to the built-in
    /// data, or a file of the built-in advisories.yaml format, which replaces it; a folder is read
    /// for its .json, .yaml and .yml files. Repeatable. `gpu-trust advisories` shows what is in use.
    #[arg(long, value_name = "PATH")]
    pub advisories: Vec<PathBuf>,
    /// The date acceptances expire against and patch windows count to (default: today).
    #[arg(long, value_parser = Date::parse, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    /// Probe results (`gpu-trust probe --format json`) to attach to the findings they measured; repeatable.
    #[arg(long, value_name = "FILE")]
    pub evidence: Vec<PathBuf>,
    /// The repository root: SARIF URIs and the Markdown summary's links are relative to it
    /// (default: the root of the git repository of the current directory, else the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub sarif_root: Option<PathBuf>,
    /// Put URL before each file link of the Markdown summary, which is otherwise relative to the
    /// repository root (e.g. https://github.com/OWNER/REPO/blob/COMMIT/ for a pull-request comment).
    #[arg(long, value_name = "URL")]
    pub link_base: Option<String>,
    /// The path standard input stands for in the report (`helm template chart | gpu-trust audit -`):
    /// its objects are located there, and SARIF points at it (default: `stdin`).
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<String>,
    /// Follow symbolic links that lead out of an input directory (by default they are reported as
    /// unread input).
    #[arg(long)]
    pub follow_symlinks: bool,
    /// The cluster's nodes and their GPU configuration (`kubectl get nodes -o yaml`, plus the
    /// ClusterPolicy, device plugin and mig-parted ConfigMaps), so that manifests are judged against
    /// the nodes they would run on; repeatable. It must hold a Node and no workload but DaemonSets.
    #[arg(long, value_name = "FILE")]
    pub nodes: Vec<PathBuf>,
    /// Accept a partial audit: a layer in play that the input does not let the audit evaluate (no
    /// Node objects, pods on nodes absent from the input, no RBAC bindings; `--help` says more) no
    /// longer makes the run exit 2; the report says at the top that it is partial.
    #[arg(long)]
    pub accept_partial: bool,
    /// Explain one pair of tenants (by name) instead of printing the report: every group they share
    /// with how surely, every finding that covers them with its certainty, severity, message and
    /// fix for that pair, and the findings about either alone (table or json). The exit status
    /// follows the pair's findings.
    #[arg(long, num_args = 2, value_names = ["NAME", "NAME"])]
    pub pair: Vec<String>,
    /// The report as these tenants (by name; repeat for several) may see it, as `gpu-trust serve`
    /// serves it to them: the audit made for them (each finding counts their pairs only, in the
    /// places they reach) with every other tenant, its namespaces and its workloads named
    /// `(other tenant)`. For handing a team its own report; every format; the exit status follows
    /// the view's findings.
    #[arg(long, value_name = "NAME", conflicts_with = "pair")]
    pub view: Vec<String>,
    /// Keep one OpenReports Report (openreports.io/v1alpha1) per tenant namespace of the live
    /// cluster with that tenant's findings, as `serve --write-reports` does (needs the role of
    /// deploy/reports/); a report that cannot be written exits 2.
    #[arg(long, conflicts_with_all = ["pair", "view"])]
    pub write_reports: bool,
    /// Write what to fix first to DIR: each action's patch (`a1.json`...) and, for file input, the
    /// input files the actions change with every action applied, under DIR/patched/ at the paths
    /// they were given by (they audit again without the findings the actions close).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["pair", "view"])]
    pub emit_fixes: Option<PathBuf>,
    /// An earlier JSON report of this audit (`--format json`): each finding is marked new or
    /// unchanged by its stable key, and the earlier findings that are gone are listed as fixed.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: exit 1 only for new findings at or above --fail-on (unchanged findings do
    /// not fail the run), as a pull request's check needs.
    #[arg(long, requires = "baseline")]
    pub fail_on_new: bool,
    /// A row per tenant (the worst of its open findings, how many, the first action that closes
    /// one, what it shares) and per GPU node pool instead of the findings, after the verdict and
    /// what to fix first (table and Markdown; the HTML page always has these rows, and the JSON
    /// report the pools with the rest).
    #[arg(long, conflicts_with = "pair")]
    pub summary: bool,
}

/// Examples, shown after the options (lines clap keeps as written).
const EXAMPLES: &str = "\
Examples:
  gpu-trust audit --policy tenancy.yaml
  gpu-trust audit --context prod -n team-a -o json
  gpu-trust audit cluster.yaml --policy tenancy.yaml
  gpu-trust audit manifests/ dumps/ --policy tenancy.yaml --fail-on critical
  kubectl get nodes,pods,namespaces,configmaps -A -o yaml | gpu-trust audit - --policy t.yaml
  helm template app ./chart | gpu-trust audit - --stdin-filename chart/rendered.yaml --format sarif
  helm template app ./chart | gpu-trust audit - --nodes nodes.yaml --policy tenancy.yaml
  gpu-trust audit cluster.yaml --format sarif --output gpu-trust.sarif --sarif-root .
  gpu-trust audit deploy/ --output sarif=gpu-trust.sarif --output junit=junit.xml --fail-on never
  gpu-trust audit cluster.yaml -o json | jq '.findings[] | select(.layer==\"device\")'
  gpu-trust audit cluster.yaml --policy tenancy.yaml --format html --output report.html
  gpu-trust audit cluster.yaml --policy tenancy.yaml --pair acme globex
  gpu-trust audit cluster.yaml --policy tenancy.yaml --view acme --format html --output acme.html
  gpu-trust audit cluster.yaml --policy tenancy.yaml --emit-fixes fixes/
  gpu-trust audit deploy/ --policy tenancy.yaml --baseline main.json --fail-on-new
  gpu-trust audit --policy tenancy.yaml --summary";

/// One rendering of the report: its format and where it goes (`None`: standard output).
type Target = (ReportFormat, Option<PathBuf>);

/// The audit's settings, resolved once from the command line and the configuration file (the
/// command line beats the file), and where each rendering goes: what every later step reads.
struct Settings {
    /// The cluster's files (none: the live cluster `cluster` names) and `--nodes`.
    paths: Vec<PathBuf>,
    nodes: Vec<PathBuf>,
    cluster: crate::live::ClusterArgs,
    policy: Option<PathBuf>,
    advisories: Vec<PathBuf>,
    evidence: Vec<PathBuf>,
    follow_symlinks: bool,
    skip_invalid: bool,
    accept_partial: bool,
    /// Codes whose warnings are not printed.
    silence: Vec<gpu_trust_model::Code>,
    today: Date,
    fail_on: FailOn,
    /// `--fail-on-new`: only new findings (against `baseline`) fail the run.
    fail_on_new: bool,
    /// `--baseline`: an earlier JSON report to compare with.
    baseline: Option<PathBuf>,
    /// `--emit-fixes`: the folder what to fix first is written to.
    emit_fixes: Option<PathBuf>,
    /// `--write-reports`: each tenant namespace's OpenReports Report kept in the cluster read.
    write_reports: bool,
    /// `--pair`: two different tenants' names (checked against the tenants once they are read).
    pair: Option<(String, String)>,
    /// `--view`: the tenants' names (empty: the whole report).
    view: Vec<String>,
    /// What standard input is called in the report (`--stdin-filename`, else `stdin`).
    stdin_name: String,
    /// Each rendering's format and destination (`None`: standard output), in order.
    targets: Vec<Target>,
    /// What every format reads: the threshold, what is printed (`--min-severity`,
    /// `--show-accepted`, `--summary`), the disabled rules and, when a format needs it, where the
    /// report's paths are relative to.
    render: RenderOptions,
    /// Rules the configuration file disables.
    disabled: Vec<crate::config::DisabledRule>,
}

impl Settings {
    /// Checks the command line, merges the configuration file into it and decides the outputs;
    /// prints why when the run cannot go on.
    fn resolve(args: Args) -> anyhow::Result<Settings> {
        refuse_conflicts(&args)?;
        let config = configuration(&args)?;
        let targets = report_targets(&args.output, &config)?;
        let policy = args.policy.or(config.policy);
        let pair = pair(&args.pair, &targets)?;
        if input::stdin_twice(policy.as_deref(), &args.paths) {
            anyhow::bail!("standard input can hold the cluster or the policy, not both");
        }
        // A report never replaces what it judges: the cluster's files, the policy, the configuration.
        let read: Vec<&Path> = (args.paths.iter().chain(&args.nodes).chain(&args.evidence))
            .chain(policy.iter().chain(&args.advisories))
            .chain((!config.file.as_os_str().is_empty()).then_some(&config.file))
            .map(PathBuf::as_path)
            .collect();
        refuse_overwrite(&targets, &read)?;
        let mut silence = args.silence;
        silence.extend(config.silence);
        let fail_on = args.fail_on.or(config.fail_on).unwrap_or(FailOn::DEFAULT);
        let stdin_name = args
            .stdin_filename
            .unwrap_or_else(|| STDIN_NAME.to_string());
        let place = if targets.iter().any(|(f, _)| f.needs_place()) {
            let fallback = policy.as_ref().or(args.paths.first());
            let link_base = args.link_base.unwrap_or_default();
            Some(place(
                args.sarif_root.as_deref(),
                link_base,
                &stdin_name,
                fallback,
            )?)
        } else {
            None
        };
        let render = RenderOptions {
            fail_at: fail_at(fail_on),
            min_severity: Some(
                args.min_severity
                    .or(config.min_severity)
                    .unwrap_or(Severity::Low),
            ),
            summary: args.summary,
            show_accepted: args.show_accepted || config.show_accepted.unwrap_or(false),
            disabled: (config.disabled_rules.iter())
                .map(|d| (d.code.to_string(), d.reason.clone()))
                .collect(),
            place,
            ..RenderOptions::default()
        };
        Ok(Settings {
            paths: args.paths,
            nodes: args.nodes,
            cluster: args.cluster,
            policy,
            advisories: args.advisories,
            evidence: args.evidence,
            follow_symlinks: args.follow_symlinks,
            skip_invalid: args.skip_invalid,
            accept_partial: args.accept_partial,
            silence,
            today: (args.today).unwrap_or_else(|| Date::from_system_time(SystemTime::now())),
            fail_on,
            fail_on_new: args.fail_on_new,
            baseline: args.baseline,
            emit_fixes: args.emit_fixes,
            write_reports: args.write_reports,
            pair,
            view: args.view,
            stdin_name,
            targets,
            render,
            disabled: config.disabled_rules,
        })
    }

    /// Whether a diagnostic is printed: an error always (it decides the exit status), a warning
    /// unless `--silence` names its code.
    fn shown(&self, d: &Diagnostic) -> bool {
        d.is_error() || !self.silence.contains(&d.code)
    }
}

/// Refuses what the command line asks that cannot be done together: files and the live cluster's
/// flags, no file with `--no-live`, files with `--write-reports`, `--nodes` without files.
fn refuse_conflicts(args: &Args) -> anyhow::Result<()> {
    if !args.paths.is_empty() && args.cluster.any() {
        anyhow::bail!(crate::live::WITH_PATHS);
    }
    if args.paths.is_empty() && args.no_live {
        anyhow::bail!(
            "no PATH to audit, and --no-live refuses to read the live cluster instead: name the manifests to audit (in a pre-commit hook, `args: [deploy/, --policy, tenancy.yaml]`)"
        );
    }
    if args.write_reports && !args.paths.is_empty() {
        anyhow::bail!(
            "--write-reports keeps the reports in the cluster the audit reads: give no PATH, and the cluster with --kubeconfig or --context"
        );
    }
    if args.paths.is_empty() && !args.nodes.is_empty() {
        anyhow::bail!(
            "--nodes completes manifests given as PATH; a live audit reads the cluster's own nodes"
        );
    }
    Ok(())
}

/// The configuration file (`--config`, else the one found; none with `--no-config`): its errors
/// stop the run before anything else is read. A threshold below the default and each disabled rule
/// are said out loud, so that a reviewer of a CI log sees why a finding did not fail the job.
fn configuration(args: &Args) -> anyhow::Result<crate::config::Config> {
    let found = if args.no_config {
        None
    } else {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        crate::config::find(args.config.as_deref(), &cwd)
    };
    let config = match found.map(|p| crate::config::load(&p)) {
        None => crate::config::Config::default(),
        Some(Ok(c)) => c,
        Some(Err(errors)) => {
            output::eprint_diagnostics(&errors);
            anyhow::bail!(
                "{} in the configuration file",
                plural(errors.len(), "error", "errors")
            );
        }
    };
    if let (None, Some(fail_on), Some(at)) =
        (args.fail_on, config.fail_on, &config.fail_on_location)
    {
        if let Some(what) = relaxed(fail_on) {
            output::eprint_line(&format!(
                "gpu-trust: {at}: the configuration file sets failOn to {what}, below the default (high): findings below it do not fail this run; --fail-on overrides it"
            ));
        }
    }
    for d in &config.disabled_rules {
        output::eprint_line(&format!(
            "gpu-trust: {} is disabled by {} ({}): its findings are not reported",
            d.code, d.location, d.reason
        ));
    }
    Ok(config)
}

/// Each rendering's report format and destination: `-o` and `--output`, else the configuration
/// file's `outputs` and `format`.
fn report_targets(
    args: &OutputArgs,
    config: &crate::config::Config,
) -> anyhow::Result<Vec<Target>> {
    let configured: Vec<OutputTarget>;
    let outputs = if args.output.is_empty() {
        configured = (config.outputs.iter())
            .map(|(format, path, _)| OutputTarget {
                format: Some(*format),
                path: path.clone(),
            })
            .collect();
        &configured
    } else {
        &args.output
    };
    let default = config.format.unwrap_or(Format::Table);
    let targets = output::targets(args.format, outputs, FORMATS, default);
    Ok((targets.map_err(anyhow::Error::msg)?.into_iter())
        .filter_map(|t| Some((t.format.report()?, t.path)))
        .collect())
}

/// `--pair`'s two tenants (`None` without it), which must differ, for a table or JSON only.
fn pair(names: &[String], targets: &[Target]) -> anyhow::Result<Option<(String, String)>> {
    let pair = match names {
        [] => return Ok(None),
        [a, b] if a == b => anyhow::bail!("--pair needs two different tenants"),
        [a, b] => (a.clone(), b.clone()),
        _ => anyhow::bail!("--pair takes two tenants"),
    };
    let table_or_json = |f: &ReportFormat| matches!(f, ReportFormat::Table | ReportFormat::Json);
    if !targets.iter().all(|(f, _)| table_or_json(f)) {
        anyhow::bail!("--pair prints a table or JSON (--format table or json)");
    }
    Ok(Some(pair))
}

/// Refuses a report that would overwrite a file the run reads (`read`): it would destroy what it
/// judged.
fn refuse_overwrite(targets: &[Target], read: &[&Path]) -> anyhow::Result<()> {
    for path in targets.iter().filter_map(|(_, p)| p.as_deref()) {
        if let Some(input) = output::overwritten_input(path, read) {
            anyhow::bail!(
                "--output {} would overwrite {}, which this run reads; write the report elsewhere",
                output::escaped(&path.display().to_string()),
                output::escaped(&input.display().to_string())
            );
        }
    }
    Ok(())
}

/// What the formats that point into the input need (`Place`): the current directory and the
/// repository root their paths are relative to (`--sarif-root`, relative to the current directory,
/// else the root of the git repository the current directory is in, else the current directory).
fn place(
    sarif_root: Option<&Path>,
    link_base: String,
    stdin_name: &str,
    fallback_file: Option<&PathBuf>,
) -> anyhow::Result<Place> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = match sarif_root {
        Some(root) if root.is_absolute() => root.to_path_buf(),
        Some(root) => cwd.join(root),
        None => (crate::config::repository_root(&cwd).unwrap_or(&cwd)).to_path_buf(),
    };
    Ok(Place {
        version: env!("CARGO_PKG_VERSION").to_string(),
        working_dir: cwd,
        root,
        link_base,
        stdin_name: Some(stdin_name.to_string()),
        fallback_file: fallback_file.map(|p| p.display().to_string()),
    })
}

/// What the audit reads besides the settings: the policy resolved on the cluster's namespaces, the
/// advisory data, probe evidence, and the cluster with the documents it could not use.
struct Inputs {
    policy: gpu_trust_policy::Policy,
    /// The documents the cluster was read from.
    documents: input::Documents,
    fleet: gpu_trust_model::fleet::Fleet,
    tenancy: gpu_trust_policy::Tenancy,
    advisories: gpu_trust_rules::Advisories,
    evidence: Vec<gpu_trust_model::evidence::ProbeEvidence>,
    /// Unusable documents skipped with `--skip-invalid`.
    skipped: Vec<Diagnostic>,
}

impl Inputs {
    /// Reads every input, reporting every problem before deciding whether the run can go on.
    fn read(settings: &Settings) -> anyhow::Result<Inputs> {
        // The policy: its errors stop the run before anything else is read.
        let policy = input::policy_or_default(settings.policy.as_deref())?;
        let stdin = |paths: &[PathBuf]| paths.iter().any(|p| p.as_os_str() == "-");
        if input::stdin_twice(settings.policy.as_deref(), &settings.advisories)
            || (stdin(&settings.advisories) && stdin(&settings.paths))
        {
            anyhow::bail!(
                "standard input can hold one input: the cluster, the policy or advisory data"
            );
        }
        let advisories = input::advisories(&settings.advisories, settings.follow_symlinks)?.data;
        let mut evidence = Vec::new();
        for path in &settings.evidence {
            match input::read_evidence(path) {
                Ok(e) => evidence.push(e),
                Err(d) => {
                    output::eprint_diagnostics([&d]);
                    return Err(output::stopped());
                }
            }
        }
        crate::coverage::check_nodes_files(&settings.nodes, settings.follow_symlinks)
            .map_err(anyhow::Error::msg)?;
        let (fleet, documents, skipped) = read_cluster(settings)?;
        let tenancy = policy.resolve(&fleet.namespaces);
        output::eprint_diagnostics(tenancy.diagnostics().iter().filter(|d| settings.shown(d)));
        if tenancy.diagnostics().iter().any(Diagnostic::is_error) {
            anyhow::bail!("the policy does not fit the cluster's namespaces");
        }
        Ok(Inputs {
            policy,
            documents,
            fleet,
            tenancy,
            advisories,
            evidence,
            skipped,
        })
    }
}

/// The cluster (its files and `--nodes`, or the live cluster) with the documents it was read from
/// and the unusable ones, which stop the run unless `--skip-invalid` lets the rest be audited:
/// every problem is reported before deciding whether the run can go on, and an input with nothing
/// to audit stops it (an empty audit must not pass for a clean one).
fn read_cluster(
    settings: &Settings,
) -> anyhow::Result<(
    gpu_trust_model::fleet::Fleet,
    input::Documents,
    Vec<Diagnostic>,
)> {
    let paths: Vec<PathBuf> = settings
        .paths
        .iter()
        .chain(&settings.nodes)
        .cloned()
        .collect();
    let (mut ingested, documents) =
        input::cluster_read(&paths, &settings.cluster, settings.follow_symlinks)?;
    // Acceptances annotated with a code that names no rule (docs/suppressions.md).
    let unknown = gpu_trust_rules::acceptance::unknown_rules(&ingested.fleet);
    ingested.diagnostics.extend(unknown);
    // Silenced warnings are dropped; an error is kept whatever its code.
    ingested.diagnostics.retain(|d| settings.shown(d));
    let errors = input::cluster_errors(ingested.diagnostics);
    let fleet = ingested.fleet;
    // Namespaces count only when a Namespace object names them: ConfigMaps alone are nothing to audit.
    let nothing_read = fleet.nodes.is_empty()
        && fleet.workloads.is_empty()
        && fleet.namespaces.iter().all(|n| n.object.is_none());
    if !errors.is_empty() {
        if nothing_read {
            // --skip-invalid cannot help: without the unusable documents nothing is left to audit.
            output::eprint_line(&format!(
                "gpu-trust: {} could not be used and nothing else was read; fix {} to audit",
                plural(errors.len(), "input document", "input documents"),
                if errors.len() == 1 { "it" } else { "them" },
            ));
            return Err(output::stopped());
        }
        if !settings.skip_invalid {
            return Err(input::refuse_unusable(errors.len(), "audit the rest"));
        }
        output::eprint_line(&format!(
            "gpu-trust: warning: skipping {}: the report covers only part of the input",
            plural(
                errors.len(),
                "unusable input document",
                "unusable input documents"
            )
        ));
    }
    if nothing_read {
        anyhow::bail!(
            "the input holds no Node, Namespace, Pod or workload object: nothing to audit \
             (an empty audit must not pass for a clean one)"
        );
    }
    Ok((fleet, documents, errors))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.print_rbac {
        let path = args.output.one_file("--print-rbac")?;
        let rbac = gpu_trust_live::rbac::manifests();
        return output::verdict(output::write_output(path, &rbac), output::CLEAN);
    }
    let settings = Settings::resolve(args)?;
    let Inputs {
        policy,
        documents,
        fleet,
        tenancy,
        advisories,
        evidence,
        skipped,
    } = Inputs::read(&settings)?;
    check_tenants(&settings, &tenancy)?;
    let options = AuditOptions {
        today: settings.today,
        advisories,
        evidence,
        skipped,
        // Unusable documents reach the audit only with --skip-invalid (else the run stopped).
        skip_invalid: settings.skip_invalid,
        accept_partial: settings.accept_partial,
        // What the HTML page draws comes from the audit's own analysis; the other formats need only
        // the report.
        layout: settings.targets.iter().any(|(f, _)| f.draws_gpus()),
        pair: settings.pair.clone(),
        focus: None,
    };
    let input = AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &options,
    };
    let (mut report, disabled_findings) = judge(&settings, &input);
    if settings.pair.is_some() {
        return explain_pair(&report, &settings.targets, settings.fail_on);
    }
    if let Some(path) = &settings.baseline {
        let old = input::read_baseline(path).map_err(|d| {
            output::eprint_diagnostics([&d]);
            output::stopped()
        })?;
        gpu_trust_model::report::Baseline::compare(&mut report, old, &path.display().to_string());
    }
    // What to fix first, for the whole cluster (never for a view), when a format shows it.
    let shows_actions = settings.targets.iter().any(|(f, _)| f.shows_actions());
    let patched = if settings.view.is_empty() && (settings.emit_fixes.is_some() || shows_actions) {
        fix_first(&settings, &documents, &policy, &input, &mut report)
    } else {
        Vec::new()
    };
    let mut provenance =
        Provenance::new(env!("CARGO_PKG_VERSION"), report_time(), &documents.digest);
    provenance.context = documents.context.clone();
    provenance.server = documents.server.clone();
    report.provenance = Some(provenance);
    let code = verdict(&settings, &mut report);
    if let Some(dir) = &settings.emit_fixes {
        emit_fixes(&settings, dir, &report, patched)?;
    }
    // A failed write of the reports fails the run (exit 2) once the outputs are written.
    let code = if settings.write_reports && !write_reports(&settings, &input, &report) {
        output::INPUT_ERROR
    } else {
        code
    };
    let written = render_targets(&settings, &report, disabled_findings);
    // The process ends here: freeing a large fleet and report object by object would only cost time
    // (about 4% of the instructions of a 60,000-pod audit); the system takes the memory back at exit.
    std::mem::forget(report);
    std::mem::forget(fleet);
    output::verdict(written, code)
}

/// The audit, or with `--view` the audit made for those tenants (built from it field by field),
/// with standard input named and the findings of disabled rules taken out (how many); acceptances
/// that accept nothing (one tenant's annotation for a rule about pairs) are said on standard error.
fn judge(settings: &Settings, input: &AuditInput) -> (gpu_trust_report::AuditReport, usize) {
    let mut report = if settings.view.is_empty() {
        audit(input)
    } else {
        let tenants: BTreeSet<String> = settings.view.iter().cloned().collect();
        let prepared = Prepared::new(input);
        let (fleet, tenancy, options) = (input.fleet, input.tenancy, input.options);
        gpu_trust_rules::scope::view(fleet, tenancy, options, &prepared, &tenants).0
    };
    name_standard_input(&mut report, &settings.stdin_name);
    let disabled_findings = drop_disabled(&mut report, &settings.disabled);
    for line in gpu_trust_report::pair::one_sided_lines(&report) {
        output::eprint_line(&format!("gpu-trust: {line}"));
    }
    (report, disabled_findings)
}

/// Refuses a `--pair` or `--view` tenant that the audit does not know, naming the closest names.
fn check_tenants(settings: &Settings, tenancy: &gpu_trust_policy::Tenancy) -> anyhow::Result<()> {
    let named = settings.pair.iter().flat_map(|(a, b)| [a, b]);
    let Some(unknown) = (named.chain(&settings.view)).find(|t| tenancy.tenant_by_name(t).is_none())
    else {
        return Ok(());
    };
    let flag = if settings.pair.is_some() {
        "--pair"
    } else {
        "--view"
    };
    let close = super::explain::closest(unknown, tenancy.ids().map(|t| tenancy.name(t)));
    let hint = if close.is_empty() {
        "`gpu-trust audit` lists the tenants".to_string()
    } else {
        format!("did you mean {}?", close.join(", "))
    };
    anyhow::bail!(
        "{flag}: no tenant `{}` in this audit; {}",
        output::escaped(unknown),
        output::escaped(&hint)
    )
}

/// What to fix first (`gpu_trust_decide::decide`) against the threshold, set on the report; returns
/// the input files the actions change, each with every action applied (name, text).
fn fix_first(
    settings: &Settings,
    documents: &input::Documents,
    policy: &gpu_trust_policy::Policy,
    input: &AuditInput,
    report: &mut gpu_trust_report::AuditReport,
) -> Vec<(String, String)> {
    let codes: Vec<&str> = settings.disabled.iter().map(|d| d.code).collect();
    let decided = gpu_trust_decide::decide(&gpu_trust_decide::Input {
        inputs: documents.inputs.as_deref(),
        ingest: &documents.options,
        policy,
        options: input.options,
        fleet: input.fleet,
        report,
        threshold: fail_at(settings.fail_on).unwrap_or(Severity::High),
        disabled: &codes,
    });
    report.fix_first = Some(decided.fix_first);
    report.actions = Some(decided.actions);
    (decided.patched.into_iter())
        .map(|i| (i.name, i.text))
        .collect()
}

/// The exit code, decided (and the verdict set on the report) before a byte is written, so that a
/// reader that goes away cannot change it: 2 for a partial audit not accepted, whatever the
/// threshold (`--fail-on never` does not make it pass), 1 when the verdict fails the run, else 0.
fn verdict(settings: &Settings, report: &mut gpu_trust_report::AuditReport) -> u8 {
    let verdict = report.verdict(fail_at(settings.fail_on), settings.fail_on_new);
    let code = if !crate::coverage::passes(&report.coverage) {
        output::INPUT_ERROR
    } else if verdict.exit_code == 1 {
        output::FINDINGS
    } else {
        output::CLEAN
    };
    report.verdict = Some(verdict);
    code
}

/// `--emit-fixes DIR`: each action's patch and, for file input, the patched copies of the input
/// files, never over a file the run reads.
fn emit_fixes(
    settings: &Settings,
    dir: &Path,
    report: &gpu_trust_report::AuditReport,
    patched: Vec<(String, String)>,
) -> anyhow::Result<()> {
    // Patched copies of files only: a live cluster's documents are no files to copy.
    let patched = if settings.paths.is_empty() {
        Vec::new()
    } else {
        patched
    };
    let read: Vec<&Path> = (settings.paths.iter().chain(&settings.nodes))
        .map(PathBuf::as_path)
        .collect();
    let emitted =
        gpu_trust_report::audit::fix_first::emitted(report, &patched, &settings.stdin_name);
    for (relative, text) in emitted {
        let path = dir.join(relative);
        if let Some(input) = output::overwritten_input(&path, &read) {
            anyhow::bail!(
                "--emit-fixes would overwrite {}, which this run reads; write the fixes elsewhere",
                output::escaped(&input.display().to_string())
            );
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| {
                format!(
                    "{}: cannot create",
                    output::escaped(&parent.display().to_string())
                )
            })?;
        }
        output::write_output(Some(&path), &text)?;
    }
    Ok(())
}

/// Streams each rendering through the report crate's one `render` (a format is chosen in one
/// place), fitted to where it goes; what the writes came to.
fn render_targets(
    settings: &Settings,
    report: &gpu_trust_report::AuditReport,
    disabled_findings: usize,
) -> anyhow::Result<()> {
    let mut options = RenderOptions {
        disabled_findings,
        ..settings.render.clone()
    };
    let docs = registry_docs();
    output::stream_each(&settings.targets, |(format, path)| {
        let path = path.as_deref();
        options.colour = colour_enabled(path);
        options.width = output::text_width(path);
        stream_output(path, |w| {
            render(*format, report, &docs, &options, w)?;
            Ok(())
        })
    })
}

/// `--write-reports`: each tenant namespace's OpenReports Report in the cluster made equal to this
/// audit (one view per tenant, as `serve --write-reports` keeps them); what was written, and each
/// report that was not, on standard error. `false` when any was not.
fn write_reports(
    settings: &Settings,
    input: &AuditInput,
    report: &gpu_trust_report::AuditReport,
) -> bool {
    let prepared = Prepared::new(input);
    let wanted = gpu_trust_report::openreports::render(report, |tenants| {
        gpu_trust_rules::scope::view(
            input.fleet,
            input.tenancy,
            input.options,
            &prepared,
            tenants,
        )
        .0
    });
    let options = settings.cluster.options();
    let timeout = options.timeout();
    let service = gpu_trust_live::service::Service::start(options);
    match service.sync_reports(wanted, timeout) {
        Ok(done) => {
            for (path, error) in &done.failed {
                output::eprint_error(format!("the report {path} was not written: {error}"));
            }
            output::eprint_line(&format!(
                "gpu-trust: OpenReports reports: {} created, {} replaced, {} deleted, {} unchanged{}",
                done.created,
                done.replaced,
                done.deleted,
                done.unchanged,
                match done.failed.len() {
                    0 => String::new(),
                    n => format!(", {n} not written"),
                }
            ));
            done.failed.is_empty()
        }
        Err(e) => {
            output::eprint_error(format!("the reports could not be written: {e}"));
            false
        }
    }
}

/// `--pair`: the pair's view instead of the report; exit 2 for a partial audit not accepted, 1 when
/// a finding of the pair that is not accepted is at or above the threshold (its severity for the
/// pair), else 0.
fn explain_pair(
    report: &gpu_trust_report::AuditReport,
    targets: &[Target],
    fail_on: FailOn,
) -> anyhow::Result<ExitCode> {
    let Some(view) = gpu_trust_report::pair::view(report) else {
        anyhow::bail!("--pair: the audit explained no pair");
    };
    let failing = fail_at(fail_on).is_some_and(|floor| {
        let pair = view
            .findings
            .iter()
            .filter(|f| f.accepted.is_none())
            .map(|f| f.severity);
        let alone = view
            .tenant_findings
            .iter()
            .filter(|f| f.accepted.is_none())
            .map(|f| f.severity);
        pair.chain(alone).any(|s| s >= floor)
    });
    let code = if !crate::coverage::passes(&report.coverage) {
        output::INPUT_ERROR
    } else if failing {
        output::FINDINGS
    } else {
        output::CLEAN
    };
    let written = output::stream_each(targets, |(format, path)| {
        let text = match format {
            ReportFormat::Json => gpu_trust_report::pair::json(&view)?,
            _ => gpu_trust_report::pair::table(&view, output::text_width(path.as_deref())),
        };
        output::write_output(path.as_deref(), &text)
    });
    output::verdict(written, code)
}

/// Removes the findings of rules the configuration disables, and takes them out of the summary's
/// counts; returns how many were removed.
fn drop_disabled(
    report: &mut gpu_trust_report::AuditReport,
    disabled: &[crate::config::DisabledRule],
) -> usize {
    if disabled.is_empty() {
        return 0;
    }
    let before = report.findings.len();
    let summary = &mut report.summary;
    let mut dropped: Vec<&'static str> = Vec::new();
    report.findings.retain(|f| {
        let off = disabled.iter().find(|d| d.code == f.rule);
        if let Some(d) = off {
            dropped.push(d.code);
            if f.accepted.is_some() {
                summary.accepted = summary.accepted.saturating_sub(1);
            } else {
                let count = match f.severity {
                    Severity::Critical => &mut summary.findings.critical,
                    Severity::High => &mut summary.findings.high,
                    Severity::Medium => &mut summary.findings.medium,
                    Severity::Low => &mut summary.findings.low,
                    Severity::Info => &mut summary.findings.info,
                };
                *count = count.saturating_sub(1);
            }
        }
        off.is_none()
    });
    for d in disabled {
        report
            .disabled_rules
            .push(gpu_trust_model::report::DisabledRuleEntry {
                rule: d.code.to_string(),
                reason: d.reason.clone(),
                source: d.location.to_string(),
                findings: dropped.iter().filter(|c| **c == d.code).count(),
            });
    }
    before - report.findings.len()
}

/// When the report is made, in seconds since 1970-01-01 UTC: `SOURCE_DATE_EPOCH` when it is set (the
/// reproducible-builds.org convention, so that the same input gives the same bytes), else the clock.
fn report_time() -> i64 {
    if let Some(epoch) = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
    {
        return epoch;
    }
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// What standard input is called in the report without `--stdin-filename`.
const STDIN_NAME: &str = "stdin";

/// Gives the objects read from standard input (file `-`) the name it stands for.
fn name_standard_input(report: &mut gpu_trust_model::report::AuditReport, name: &str) {
    for f in &mut report.findings {
        for o in &mut f.objects {
            if o.file == "-" {
                o.file = name.to_string();
            }
        }
        let accepted = f.accepted.iter_mut().map(|a| &mut a.sources);
        let pairs = f.accepted_pairs.iter_mut().map(|p| &mut p.sources);
        let one_sided = f.one_sided_acceptances.iter_mut().map(|o| &mut o.sources);
        for s in accepted.chain(pairs).chain(one_sided).flatten() {
            if s.file == "-" {
                s.file = name.to_string();
            }
        }
    }
    for s in &mut report.skipped {
        if s.file == "-" {
            s.file = name.to_string();
        }
    }
}
