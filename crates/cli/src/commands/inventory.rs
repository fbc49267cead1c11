//! `gpu-trust inventory PATH...`: the fleet as gpu-trust reads it, so users can check what the audit
//! will judge. Reading and resolution live in `gpu-trust-ingest` (including the inventory view);
//! this module only reads files, applies the policy's tenants and renders.

use crate::output::{self, write_output};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpu_trust_ingest::inventory::{inventory, Inventory, NodeView};
use gpu_trust_model::Diagnostic;
use gpu_trust_policy::Policy;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Text from the input, escaped for a terminal.
fn e(text: &str) -> String {
    output::escaped(text).into_owned()
}

fn joined(items: &[String], sep: &str) -> String {
    items.iter().map(|s| e(s)).collect::<Vec<_>>().join(sep)
}

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
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Files or directories to read; `-` reads standard input. None: the live cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cluster: crate::live::ClusterArgs,
    /// The tenancy policy, for tenant names.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Show the documents that can be read and list the others under "Skipped", instead of exiting 2.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Follow symbolic links that lead out of an input directory (by default they are reported as
    /// unread input).
    #[arg(long)]
    pub follow_symlinks: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One table per node, then unscheduled workloads, unresolved references and skipped documents.
    Table,
    /// The inventory as `gpu-trust/inventory/v1` JSON.
    Json,
    /// The same document as YAML (as `kubectl get -o yaml` users read it).
    Yaml,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.paths.is_empty() && args.cluster.any() {
        output::eprint_error(crate::live::WITH_PATHS);
        return Ok(output::exit(output::INPUT_ERROR));
    }
    if args.policy.as_deref() == Some(Path::new("-"))
        && args.paths.iter().any(|p| p == Path::new("-"))
    {
        output::eprint_error("standard input can hold the cluster or the policy, not both");
        return Ok(output::exit(output::INPUT_ERROR));
    }
    let policy = match &args.policy {
        Some(path) => match super::audit::read_policy(path) {
            Ok(p) => p,
            Err(code) => return Ok(code),
        },
        None => Policy::default(),
    };
    let ingested = if args.paths.is_empty() {
        match crate::live::load(&args.cluster) {
            Some(i) => i,
            None => return Ok(output::exit(output::INPUT_ERROR)),
        }
    } else {
        super::audit::load_cluster(&args.paths, args.follow_symlinks)
    };
    let (errors, warnings): (Vec<&Diagnostic>, Vec<&Diagnostic>) =
        ingested.diagnostics.iter().partition(|d| d.is_error());
    output::eprint_diagnostics(warnings);
    if !errors.is_empty() {
        output::eprint_diagnostics(errors.iter().copied());
        if !args.skip_invalid {
            output::eprint_line(&format!(
                "gpu-trust: {} input document{} could not be used; fix {} or pass --skip-invalid to see the rest",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" },
                if errors.len() == 1 { "it" } else { "them" },
            ));
            return Ok(output::exit(output::INPUT_ERROR));
        }
    }
    let fleet = ingested.fleet;
    let tenancy = policy.resolve(&fleet.namespaces);
    output::eprint_diagnostics(tenancy.diagnostics());
    if tenancy.diagnostics().iter().any(Diagnostic::is_error) {
        output::eprint_error("the policy does not fit the cluster's namespaces");
        return Ok(output::exit(output::INPUT_ERROR));
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
    let text = match args.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&inv)?),
        Format::Yaml => serde_saphyr::to_string(&inv)?,
        Format::Table => render(&inv, output::stdout_is_terminal(args.output.as_deref())),
    };
    output::verdict(write_output(args.output.as_deref(), &text), output::CLEAN)
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

fn render(inv: &Inventory, terminal: bool) -> String {
    let s = &inv.summary;
    let mut out = format!(
        "Fleet: {} ({} with GPUs: {}, {}), {} ({} on GPUs), {}\n",
        plural(s.nodes, "node", "nodes"),
        s.gpu_nodes,
        plural(s.gpus, "GPU", "GPUs"),
        plural(s.mig_instances, "MIG instance", "MIG instances"),
        plural(s.workloads, "workload", "workloads"),
        plural(s.gpu_pods, "pod", "pods"),
        plural(s.tenants, "tenant", "tenants"),
    );
    if s.unresolved > 0 || s.skipped > 0 {
        out.push_str(&format!(
            "Incomplete: {} unresolved, {} skipped (see below)\n",
            s.unresolved, s.skipped
        ));
    }
    for n in inv
        .nodes
        .iter()
        .filter(|n| n.product.is_some() || n.gpus > 0 || !n.devices.is_empty())
    {
        out.push('\n');
        out.push_str(&node_section(n, terminal));
    }
    let plain: Vec<&NodeView> = inv
        .nodes
        .iter()
        .filter(|n| n.product.is_none() && n.gpus == 0 && n.devices.is_empty())
        .collect();
    if !plain.is_empty() {
        let names: Vec<String> = plain
            .iter()
            .map(|n| {
                if n.tenants.is_empty() {
                    e(&n.name)
                } else {
                    format!("{} (tenants: {})", e(&n.name), joined(&n.tenants, ", "))
                }
            })
            .collect();
        out.push_str(&format!("\nNodes without GPUs: {}\n", names.join("; ")));
    }
    if !inv.unscheduled.is_empty() {
        out.push_str("\nNot running on a node (templates and pending pods), where they may run\n");
        let mut t = table(
            terminal,
            &[
                "workload",
                "tenant",
                "class",
                "replicas",
                "requests",
                "permitted GPU nodes",
            ],
        );
        for u in &inv.unscheduled {
            t.add_row(vec![
                format!(
                    "{}\n{}",
                    e(&u.workload.to_string()),
                    e(&u.location.to_string())
                ),
                u.tenant.as_deref().map_or_else(|| "(platform)".into(), e),
                u.class.as_str().to_string(),
                u.replicas.to_string(),
                joined(&u.requests, ", "),
                if u.permitted_gpu_nodes.is_empty() {
                    "none".to_string()
                } else {
                    joined(&u.permitted_gpu_nodes, ", ")
                },
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if !inv.unresolved.is_empty() {
        out.push_str("\nCould not be resolved\n");
        let mut t = table(terminal, &["object", "node", "what", "why"]);
        for u in &inv.unresolved {
            t.add_row(vec![
                format!(
                    "{}\n{}",
                    e(&u.object.to_string()),
                    e(&u.location.to_string())
                ),
                u.node.as_deref().map(e).unwrap_or_default(),
                serde_json::to_value(u.what)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                e(&u.message),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if !inv.skipped.is_empty() {
        out.push_str("\nSkipped (could not be read; the inventory above leaves them out)\n");
        for d in &inv.skipped {
            out.push_str(&format!(
                "  {}:{}:{}: {}\n",
                e(&d.file),
                d.line,
                d.column,
                e(&d.error)
            ));
        }
    }
    out
}

fn node_section(n: &NodeView, terminal: bool) -> String {
    let mut out = format!(
        "{}  {} x{}  ({})\n",
        e(&n.name),
        n.model
            .as_deref()
            .map(e)
            .or_else(|| n
                .product
                .as_deref()
                .map(|p| format!("unknown model `{}`", e(p))))
            .unwrap_or_else(|| "unknown model".to_string()),
        n.gpus,
        e(&n.location.to_string())
    );
    let mut facts = vec![format!(
        "driver {}",
        e(n.driver.as_deref().unwrap_or("unknown"))
    )];
    facts.push(format!(
        "toolkit {}",
        e(n.toolkit.as_deref().unwrap_or("unknown"))
    ));
    if let Some(m) = n.mig_strategy {
        facts.push(format!(
            "MIG strategy {}",
            serde_json::to_value(m)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ));
    }
    if let Some(cc) = &n.cc_mode {
        facts.push(format!("CC mode {}", e(&cc.to_string())));
    }
    if n.hami {
        facts.push("HAMi vGPU node".to_string());
    }
    out.push_str(&format!("  {}\n", facts.join(", ")));
    out.push_str(&format!(
        "  sharing: {} (from {})\n",
        e(n.sharing.as_deref().unwrap_or("none")),
        e(n.sharing_source.as_deref().unwrap_or("unknown"))
    ));
    if let Some(m) = &n.mig_source {
        out.push_str(&format!("  MIG layout from {}\n", e(&m.to_string())));
    }
    if !n.taints.is_empty() {
        out.push_str(&format!("  taints: {}\n", joined(&n.taints, ", ")));
    }
    out.push_str(&format!(
        "  tenants: {}{}\n",
        if n.tenants.is_empty() {
            "none".to_string()
        } else {
            joined(&n.tenants, ", ")
        },
        if n.other_pods > 0 {
            format!(" ({} without GPUs)", plural(n.other_pods, "pod", "pods"))
        } else {
            String::new()
        }
    ));
    if n.devices.is_empty() {
        return out;
    }
    let mut t = table(
        terminal,
        &[
            "device",
            "instance",
            "mechanism",
            "pods (tenant, certainty)",
        ],
    );
    for d in &n.devices {
        let occupants: Vec<String> = d
            .occupants
            .iter()
            .map(|o| {
                format!(
                    "{} ({}, {})",
                    e(&o.pod.to_string()),
                    e(o.tenant.as_deref().unwrap_or("platform")),
                    o.certainty
                )
            })
            .collect();
        let mechanism = if d.replicas > 1 {
            format!("{} x{}", d.mechanism, d.replicas)
        } else {
            d.mechanism.to_string()
        };
        t.add_row(vec![
            match &d.uuid {
                Some(u) => format!("{}\n{}", e(&d.id), e(u)),
                None => e(&d.id),
            },
            d.instance.as_deref().map_or_else(|| "whole GPU".into(), e),
            mechanism,
            if occupants.is_empty() {
                "-".to_string()
            } else {
                occupants.join("\n")
            },
        ]);
    }
    for line in t.to_string().lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
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
