//! `gpu-trust plan FILE`: trust-aware placement, MIG geometry and GPU Operator configs.

use crate::input::{self, PolicyError};
use crate::output::{self, Format, OutputArgs, Target};
use anyhow::Context;
use gpu_trust_model::fleet::Ingested;
use gpu_trust_model::stack::Component;
use gpu_trust_model::Code;
use gpu_trust_model::Diagnostic;
use gpu_trust_model::Severity;
use gpu_trust_planner::file::{self, PolicySource, MAX_PLAN_BYTES};
use gpu_trust_planner::migrate::{migrate, DriverRisk, RiskAdvisory};
use gpu_trust_planner::patch::Objects;
use gpu_trust_planner::snapshot::dra_snapshot;
use gpu_trust_planner::{emit, snapshot, solve_with, PlanInput, SolveOptions};
use gpu_trust_policy::{Date, Policy};
use gpu_trust_report::migration::{self, TargetAudit};
use gpu_trust_report::plan::{json, table, unplaced_lines};
use gpu_trust_report::plural;
use gpu_trust_rules::advisories::{Advisories, Effect};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

/// Plan trust-aware placements on the fewest GPUs.
///
/// Plan a fleet: the sharing mechanism per workload, the MIG geometry per GPU and the node pools,
/// with the fewest GPUs (then nodes), never crossing a trust boundary of the policy.
///
/// The plan file names the tenancy policy (inline under `policy:` or by `policyFile:`), the
/// inventory (pools of nodes of one GPU model) and the workloads. The plan reports the GPUs it uses
/// and a lower bound: no plan of the same file places the same replicas, in whichever pools they may
/// run, on fewer GPUs; the plan is at most the difference above the fewest possible.
///
/// Pod patches (--emit) are strategic merge patches that replace the workload's GPU request; with
/// --current they name the containers of the workloads that run now, otherwise the container name is
/// assumed and a check (a JSON patch of `test` operations) comes with the patch.
///
/// --dra plans for clusters that allocate GPUs with NVIDIA's DRA driver: --emit writes DeviceClasses,
/// ResourceClaimTemplates and ResourceClaims (resource.k8s.io/v1) with the driver's opaque config, and
/// pod patches that name the claims.
///
/// --current reads the cluster as it runs now (PATH..., or without PATH the live cluster). With --emit
/// the pod patches name the containers of its workloads; without, the command prints the migration
/// from it to the plan: per node whether its MIG layout or device plugin config changes, and whether
/// MIG mode changes (a GPU reset; the MIG manager may stop the kubelet); the steps, one node per pool
/// at a time, with the capacity each pool keeps; where each workload moves; a warning before
/// repartitioning a node whose driver the advisory data names for MIG reconfiguration, or whose
/// driver is unknown; a warning for a node whose config label names a config the plan redefines
/// (an earlier plan's name), which the script refuses to apply; and whether the planned state audits
/// clean. `--format script` writes it as a bash script that prints its commands unless run with
/// --apply.
///
/// Exit codes: 0 every replica placed (and, for a migration, the planned state audits clean); 1 some
/// replicas could not be placed (each is listed with the reason, the rest are placed), or the planned
/// state of a migration has findings at or above high, or a current config name clashes; 2 the plan or policy file is invalid
/// (FILE:LINE:COLUMN: error: ...), or the current cluster cannot be read or lacks the nodes the plan
/// needs.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct Args {
    /// The plan file (`-` reads standard input).
    pub file: PathBuf,
    /// Write the GPU Operator artifacts into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub emit: Option<PathBuf>,
    /// Write the planned cluster as Kubernetes objects (one List) to FILE, for `gpu-trust audit`.
    #[arg(long, value_name = "FILE")]
    pub emit_snapshot: Option<PathBuf>,
    /// Judge policy acceptances (which distrusting tenants may share a node) on this day instead of
    /// today (UTC).
    #[arg(long, value_parser = Date::parse, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Plan for NVIDIA's DRA driver: --emit writes DeviceClasses, ResourceClaimTemplates and
    /// ResourceClaims, and pod patches that name the claims.
    #[arg(long)]
    pub dra: bool,
    /// The cluster as it runs now: files or directories (`-` reads standard input), or without PATH
    /// the live cluster. The pod patches of --emit name the containers of its workloads; without
    /// --emit, the migration from it to the plan is printed.
    #[arg(long, value_name = "PATH", num_args = 0..)]
    pub current: Option<Vec<PathBuf>>,
    #[command(flatten)]
    pub cluster: crate::live::ClusterArgs,
}

/// The plan as tables (nodes, GPUs, workloads and what could not be placed) or as JSON
/// (`gpu-trust/plan/v1`); with --current, the migration (`gpu-trust/migration/v1`), also as a bash
/// script (a dry run unless given --apply).
const FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Script];

fn input_error(diagnostics: &[Diagnostic], what: &str) -> anyhow::Error {
    output::eprint_diagnostics(diagnostics);
    output::eprint_line(&format!(
        "gpu-trust: {} in {what}",
        plural(diagnostics.len(), "error", "errors")
    ));
    output::stopped()
}

/// Reads the plan file and its policy into a plan input, or the error that stops the run.
fn load(args: &Args) -> anyhow::Result<(PlanInput, Policy)> {
    let name = args.file.display().to_string();
    let text = input::read(&args.file, MAX_PLAN_BYTES).map_err(|d| {
        output::eprint_diagnostics([&d]);
        anyhow::anyhow!("{name}: the plan file could not be read")
    })?;
    let plan_file = file::parse(&text, &name).map_err(|d| input_error(&d, "the plan file"))?;
    let policy = match &plan_file.policy {
        PolicySource::Default => Policy::default(),
        PolicySource::Inline { text } => {
            input::parse_policy(text, &name).map_err(|d| input_error(&d, "the inline policy"))?
        }
        PolicySource::File { path, location } => {
            let base = args.file.parent().unwrap_or(Path::new("."));
            let full = if Path::new(path).is_absolute() || args.file == Path::new("-") {
                PathBuf::from(path)
            } else {
                base.join(path)
            };
            let policy_name = full.display().to_string();
            match input::load_policy(&full) {
                Ok(p) => p,
                Err(PolicyError::Unreadable(d)) => {
                    output::eprint_diagnostics([
                        &d,
                        &Diagnostic::error(
                            Code::UnreadableInput,
                            location.clone(),
                            format!("policyFile {policy_name} could not be read"),
                        ),
                    ]);
                    return Err(output::stopped());
                }
                Err(PolicyError::Invalid(d)) => return Err(input_error(&d, "the policy")),
            }
        }
    };
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    let input = plan_file
        .resolve(&policy, today)
        .map_err(|d| input_error(&d, "the plan file"))?;
    Ok((input, policy))
}

/// The cluster as it runs now (`--current`), or the error that stops the run when it cannot be
/// used: a plan that moves workloads must not rest on a cluster read in part.
fn current(args: &Args, paths: &[PathBuf]) -> anyhow::Result<Ingested> {
    if !paths.is_empty() && args.cluster.any() {
        anyhow::bail!(crate::live::WITH_PATHS);
    }
    let ingested = input::cluster(paths, &args.cluster, false)?;
    let errors = input::print_cluster_diagnostics(&ingested.diagnostics);
    if errors > 0 {
        output::eprint_line(&format!(
            "gpu-trust: {} in the current cluster: a plan that moves workloads needs all of it",
            plural(errors, "error", "errors")
        ));
        return Err(output::stopped());
    }
    Ok(ingested)
}

/// The first step of `path` inside `dir` that is a symbolic link, or not a plain name: --emit
/// writes only into the folder itself, never where a link in it points (a checked-out repository
/// may hold any link).
fn link_inside(dir: &Path, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    if !relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return Some(dir.join(relative));
    }
    let mut steps: Vec<&Path> = relative
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    steps.reverse();
    steps.into_iter().map(|a| dir.join(a)).find(|p| {
        p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    })
}

fn write_file(dir: &Path, path: &str, content: &str) -> anyhow::Result<()> {
    let path = dir.join(path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("{}: cannot create", parent.display()))?;
    }
    std::fs::write(&path, content).with_context(|| format!("{}: cannot write", path.display()))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.current.is_none() && args.cluster.any() {
        anyhow::bail!("--kubeconfig, --context and --namespace name the cluster of --current");
    }
    let migrating = args.current.is_some() && args.emit.is_none();
    let targets = args.output.targets(FORMATS)?;
    if targets.iter().any(|t| t.format == Format::Script) && !migrating {
        anyhow::bail!("--format script writes the migration: it needs --current (and no --emit)");
    }
    if migrating && args.dra {
        anyhow::bail!("the migration (--current without --emit) reconfigures the device plugin and the MIG manager; it is not written for --dra");
    }
    let (input, policy) = load(&args)?;
    let current = match &args.current {
        None => None,
        Some(paths) => Some(current(&args, paths)?),
    };
    let objects = current
        .as_ref()
        .map(|c| Objects::from_fleet(&c.fleet))
        .unwrap_or_default();
    let plan = solve_with(
        &input,
        &SolveOptions {
            dra: args.dra,
            ..SolveOptions::default()
        },
    );
    if let (true, Some(current)) = (migrating, &current) {
        return migration(&args, &targets, &plan, &input, &policy, current);
    }
    if let Some(dir) = &args.emit {
        let artifacts = if args.dra {
            emit::dra_artifacts(&plan, &input, &objects)
        } else {
            emit::artifacts(&plan, &input, &objects)
        };
        // Every file is checked before the first is written: a refused folder is left as it was.
        if let Some(link) = artifacts.iter().find_map(|a| link_inside(dir, &a.path)) {
            anyhow::bail!(
                "{}: is a symbolic link (or leaves the folder); --emit does not write through links: remove it, or emit into another folder",
                link.display()
            );
        }
        for a in &artifacts {
            write_file(dir, &a.path, &a.content)?;
        }
    }
    if let Some(path) = &args.emit_snapshot {
        let planned_cluster = if args.dra {
            dra_snapshot(&plan, &input)
        } else {
            snapshot(&plan, &input)
        };
        std::fs::write(path, planned_cluster)
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    let code = if plan.complete() {
        output::CLEAN
    } else {
        output::FINDINGS
    };
    let written = output::write_targets(&targets, code, |t| {
        Ok(match t.format {
            Format::Json => json::render(&plan)?,
            _ => table::render(&plan, t.width()),
        })
    });
    for line in unplaced_lines(&plan, "gpu-trust: ") {
        output::eprint_line(&line);
    }
    written
}

/// What the advisory data says of each current GPU node's driver when its MIG partitions are
/// reconfigured (the built-in data and the bulletins updates kept; an unknown version stays unknown).
fn driver_risks(
    fleet: &gpu_trust_model::fleet::Fleet,
    data: &Advisories,
) -> BTreeMap<String, DriverRisk> {
    fleet
        .gpu_nodes()
        .filter_map(|(_, n)| Some((n.name.clone(), n.gpu.as_ref()?)))
        .map(|(name, gpu)| {
            let risk = match &gpu.driver_version {
                None => DriverRisk::Unknown,
                Some(v) => {
                    let hits = data.with_effect(Component::Driver, v, Effect::MigReconfiguration);
                    if hits.is_empty() {
                        DriverRisk::Clear {
                            driver: v.text.clone(),
                        }
                    } else {
                        DriverRisk::Affected {
                            driver: v.text.clone(),
                            advisories: hits
                                .iter()
                                .map(|h| RiskAdvisory {
                                    id: h.advisory.id.clone(),
                                    summary: h.advisory.summary.clone(),
                                    fix: h.fix.as_ref().map(|f| f.text.clone()),
                                })
                                .collect(),
                        }
                    }
                }
            };
            (name, risk)
        })
        .collect()
}

/// `plan FILE --current CLUSTER` without --emit: the migration from the current cluster to the plan,
/// with the audit of the planned state.
fn migration(
    args: &Args,
    targets: &[Target],
    plan: &gpu_trust_planner::Plan,
    input: &PlanInput,
    policy: &Policy,
    current: &Ingested,
) -> anyhow::Result<ExitCode> {
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    let data = crate::input::advisories(&[], false)?.data;
    let m = migrate(
        plan,
        input,
        &current.fleet,
        &driver_risks(&current.fleet, &data),
    );
    let planned = gpu_trust_ingest::ingest_text(&snapshot(plan, input), "planned-state.yaml");
    let tenancy = policy.resolve(&planned.fleet.namespaces);
    let mut options = AuditOptions::new(today);
    options.advisories = data;
    let report = audit(&AuditInput {
        fleet: &planned.fleet,
        tenancy: &tenancy,
        options: &options,
    });
    let target = TargetAudit::of(&report, Severity::High);
    let render = |t: &Target| -> anyhow::Result<String> {
        Ok(match t.format {
            Format::Json => migration::json::render(&m, &target)?,
            Format::Script => {
                migration::script::render(&m, &target, &args.file.display().to_string())
            }
            _ => migration::table::render(&m, &target, t.width()),
        })
    };
    let code = if !m.feasible() {
        output::INPUT_ERROR
    } else if plan.complete()
        && target.clean
        && m.safe_to_apply()
        && planned.diagnostics.iter().all(|d| !d.is_error())
    {
        output::CLEAN
    } else {
        output::FINDINGS
    };
    let written = output::write_targets(targets, code, render);
    for line in unplaced_lines(plan, "gpu-trust: ") {
        output::eprint_line(&line);
    }
    for warning in m
        .config_clashes
        .iter()
        .map(migration::clash_warning)
        .chain(m.nodes.iter().filter_map(migration::driver_warning))
    {
        output::eprint_line(&format!("gpu-trust: warning: {warning}"));
    }
    if !m.feasible() {
        output::eprint_error(
            "the current cluster lacks nodes the plan needs (see the migration): nothing to migrate to",
        );
    }
    written
}

/// What `--help` shows after the options (clap wraps a line wider than 100 columns, so none is).
const EXAMPLES: &str = "\
Examples:
  gpu-trust plan examples/plan/plan.yaml
  gpu-trust plan plan.yaml --format json | jq '.workloads[] | {name, resource, why}'
  # mig-parted and device plugin ConfigMaps, node labels, pod patches:
  gpu-trust plan plan.yaml --emit out/
  gpu-trust plan plan.yaml --emit-snapshot planned.yaml && \\
      gpu-trust audit planned.yaml --policy policy.yaml
  # DeviceClasses, claim templates and claims for NVIDIA's DRA driver:
  gpu-trust plan plan.yaml --dra --emit out/
  # pod patches that name the workloads' containers:
  gpu-trust plan plan.yaml --current cluster.yaml --emit out/
  # the migration from the cluster to the plan, and the live cluster's as a script:
  gpu-trust plan plan.yaml --current cluster.yaml
  gpu-trust plan plan.yaml --current -o script > migrate.sh";
