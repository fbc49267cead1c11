//! `gpu-trust inventory PATH...`: the fleet as gpu-trust reads it, so users can check what the audit
//! will judge. Reading and resolution live in `gpu-trust-ingest` (including the inventory view);
//! this module only reads files, applies the policy's tenants and hands the view to its renderers
//! (`gpu_trust_report::inventory`).

use crate::input;
use crate::output::{self, Format, OutputArgs};
use gpu_trust_ingest::inventory::inventory;
use gpu_trust_model::Diagnostic;
use gpu_trust_report::inventory::{json, table, yaml};
use std::path::PathBuf;
use std::process::ExitCode;

/// Show the fleet as gpu-trust reads it, node by node.
///
/// Show the fleet as gpu-trust reads it: per node, per GPU or MIG instance, the sharing mechanism in
/// force and the tenants' pods on it, the workloads not yet scheduled with the nodes they may land on,
/// and everything that could not be resolved (a missing device plugin or mig-parted config, an
/// unknown GPU model, pods on nodes that are not in the input).
///
/// Without PATH, the cluster of the current kubeconfig context is read through its API server
/// (--kubeconfig, --context, -n/--namespace choose another), as `gpu-trust audit` reads it.
/// PATH is a file or directory of YAML or JSON (multi-document streams and `kubectl get -o yaml`
/// List dumps), or `-` for standard input. Tenants come from --policy; without one every namespace
/// is its own tenant (or the tenant its tenant label names).
///
/// A pod is `observed` on a device when the evidence pins it there (HAMi's allocation annotation, a
/// single GPU on the node, the only instance of the profile it asked for) and `possible` when it is
/// one of several devices the device plugin may have given it.
///
/// Exit status: 0, or 2 for a usage error or unusable input. A malformed document is reported as
/// file:line:column and exits 2 unless --skip-invalid is given; then the inventory lists it under
/// "Skipped".
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, mut_arg("format", output::offer(FORMATS)))]
pub struct Args {
    /// Files or directories to read; `-` reads standard input. None: the live cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cluster: crate::live::ClusterArgs,
    /// The tenancy policy, for tenant names.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Show the documents that can be read and list the others under "Skipped", instead of exiting 2.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Follow symbolic links that lead out of an input directory (by default they are reported as
    /// unread input).
    #[arg(long)]
    pub follow_symlinks: bool,
}

/// One table per node, then unscheduled workloads, unresolved references and skipped documents;
/// or the inventory as `gpu-trust/inventory/v1` JSON, or the same document as YAML.
const FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Yaml];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let targets = args.output.targets(FORMATS)?;
    if !args.paths.is_empty() && args.cluster.any() {
        anyhow::bail!(crate::live::WITH_PATHS);
    }
    if input::stdin_twice(args.policy.as_deref(), &args.paths) {
        anyhow::bail!("standard input can hold the cluster or the policy, not both");
    }
    let policy = input::policy_or_default(args.policy.as_deref())?;
    let ingested = input::cluster(&args.paths, &args.cluster, args.follow_symlinks)?;
    let errors = input::print_cluster_diagnostics(&ingested.diagnostics);
    if errors > 0 && !args.skip_invalid {
        return Err(input::refuse_unusable(errors, "see the rest"));
    }
    let fleet = ingested.fleet;
    let tenancy = policy.resolve(&fleet.namespaces);
    output::eprint_diagnostics(tenancy.diagnostics());
    if tenancy.diagnostics().iter().any(Diagnostic::is_error) {
        anyhow::bail!("the policy does not fit the cluster's namespaces");
    }
    let tenant_of = |ns: &str| tenancy.tenant_of(ns).map(|t| tenancy.name(t).to_string());
    let overrides =
        |w: &gpu_trust_model::fleet::Workload| tenancy.workload_overrides(&w.namespace, &w.labels);
    let inv = inventory(
        &fleet,
        &ingested.diagnostics,
        &tenant_of,
        &overrides,
        tenancy.tenants().len(),
    );
    output::write_targets(&targets, output::CLEAN, |t| {
        Ok(match t.format {
            Format::Json => json::render(&inv)?,
            Format::Yaml => yaml::render(&inv)?,
            _ => table::render(&inv, t.width()),
        })
    })
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust inventory
  gpu-trust inventory --context prod -o json
  gpu-trust inventory cluster.yaml
  kubectl get nodes,pods,namespaces,configmaps,clusterpolicies -A -o yaml | gpu-trust inventory -
  gpu-trust inventory manifests/ --policy tenancy.yaml --format json | jq '.nodes[].devices[]'
  gpu-trust inventory dumps/ --skip-invalid";
