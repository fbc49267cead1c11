//! `gpu-trust plan FILE`: trust-aware placement, MIG geometry and GPU Operator configs.

use crate::output::{self, write_output};
use anyhow::Context;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpu_trust_model::Diagnostic;
use gpu_trust_planner::file::{self, PolicySource, MAX_PLAN_BYTES};
use gpu_trust_planner::plan::{DeviceSharing, Plan};
use gpu_trust_planner::{emit, snapshot, solve, PlanInput};
use gpu_trust_policy::{Date, Policy, MAX_POLICY_BYTES};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

/// Plan a fleet: the sharing mechanism per workload, the MIG geometry per GPU and the node pools,
/// with the fewest GPUs (then nodes), never crossing a trust boundary of the policy.
///
/// The plan file names the tenancy policy (inline under `policy:` or by `policyFile:`), the
/// inventory (pools of nodes of one GPU model) and the workloads. The plan reports the GPUs it uses
/// and a lower bound on what any plan needs, with the gap between them.
///
/// Exit codes: 0 every replica placed; 1 some replicas could not be placed (each is listed with the
/// reason, the rest are placed); 2 the plan or policy file is invalid (FILE:LINE:COLUMN: error: ...).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The plan file (`-` reads standard input).
    pub file: PathBuf,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the GPU Operator artifacts into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub emit: Option<PathBuf>,
    /// Write the planned cluster as Kubernetes objects (one List) to FILE, for `gpu-trust audit`.
    #[arg(long, value_name = "FILE")]
    pub emit_snapshot: Option<PathBuf>,
    /// Judge policy acceptances (which distrusting tenants may share a node) on this day instead of
    /// today (UTC).
    #[arg(long, value_parser = parse_date, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    /// Write the plan to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The plan as tables: nodes, GPUs, workloads and what could not be placed.
    Table,
    /// The plan as JSON (`gpu-trust/plan/v1`).
    Json,
}

fn parse_date(s: &str) -> Result<Date, String> {
    Date::parse(s).map_err(|e| e.to_string())
}

fn input_error(diagnostics: &[Diagnostic], what: &str) -> ExitCode {
    output::eprint_diagnostics(diagnostics);
    output::eprint_line(&format!(
        "gpu-trust: {} error{} in {what}",
        diagnostics.len(),
        if diagnostics.len() == 1 { "" } else { "s" }
    ));
    output::exit(output::INPUT_ERROR)
}

/// Text from the plan, escaped for a terminal.
fn e(text: &str) -> String {
    output::escaped(text).into_owned()
}

/// Unplaced replicas of one workload for one reason, as one line.
struct UnplacedGroup<'p> {
    workload: &'p str,
    first: u32,
    last: u32,
    count: usize,
    reason: &'p str,
}

impl std::fmt::Display for UnplacedGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.count == 1 {
            write!(f, "{}#{}", e(self.workload), self.first)
        } else {
            write!(
                f,
                "{}#{}-#{} ({} replicas)",
                e(self.workload),
                self.first,
                self.last,
                self.count
            )
        }
    }
}

/// Unplaced replicas grouped by workload and reason, in plan order: 100,000 replicas that fail
/// for one reason are one line, not 100,000.
fn unplaced_groups(plan: &Plan) -> Vec<UnplacedGroup<'_>> {
    let mut groups: Vec<UnplacedGroup<'_>> = Vec::new();
    for u in &plan.unplaced {
        match groups.last_mut() {
            Some(g) if g.workload == u.workload && g.reason == u.reason => {
                g.first = g.first.min(u.replica);
                g.last = g.last.max(u.replica);
                g.count += 1;
            }
            _ => groups.push(UnplacedGroup {
                workload: &u.workload,
                first: u.replica,
                last: u.replica,
                count: 1,
                reason: &u.reason,
            }),
        }
    }
    groups
}

/// Lines of unplaced replicas shown at most; JSON lists every replica.
const MAX_UNPLACED_LINES: usize = 50;

fn unplaced_lines(plan: &Plan, prefix: &str) -> Vec<String> {
    let groups = unplaced_groups(plan);
    let mut lines: Vec<String> = groups
        .iter()
        .take(MAX_UNPLACED_LINES)
        .map(|g| format!("{prefix}{g} not placed: {}", e(g.reason)))
        .collect();
    if groups.len() > MAX_UNPLACED_LINES {
        lines.push(format!(
            "{prefix}... and {} more (`--format json` lists every replica)",
            groups.len() - MAX_UNPLACED_LINES
        ));
    }
    lines
}

/// Reads the plan file and its policy into a plan input, or the exit code of the input error.
fn load(args: &Args) -> Result<PlanInput, ExitCode> {
    let name = args.file.display().to_string();
    let text = match output::read_text(&args.file, MAX_PLAN_BYTES) {
        Ok(t) => t,
        Err(d) => {
            output::eprint_diagnostics([&d]);
            output::eprint_error(format!("{name}: the plan file could not be read"));
            return Err(output::exit(output::INPUT_ERROR));
        }
    };
    let plan_file = file::parse(&text, &name).map_err(|d| input_error(&d, "the plan file"))?;
    let policy = match &plan_file.policy {
        PolicySource::Default => Policy::default(),
        PolicySource::Inline { text } => gpu_trust_policy::parse(text, &name)
            .map_err(|d| input_error(&d, "the inline policy"))?,
        PolicySource::File { path, location } => {
            let base = args.file.parent().unwrap_or(Path::new("."));
            let full = if Path::new(path).is_absolute() || args.file == Path::new("-") {
                PathBuf::from(path)
            } else {
                base.join(path)
            };
            let policy_name = full.display().to_string();
            let policy_text = match output::read_text(&full, MAX_POLICY_BYTES) {
                Ok(t) => t,
                Err(d) => {
                    output::eprint_diagnostics([
                        &d,
                        &Diagnostic::error(
                            location.clone(),
                            format!("policyFile {policy_name} could not be read"),
                        ),
                    ]);
                    return Err(output::exit(output::INPUT_ERROR));
                }
            };
            gpu_trust_policy::parse(&policy_text, &policy_name)
                .map_err(|d| input_error(&d, "the policy"))?
        }
    };
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    plan_file
        .resolve(&policy, today)
        .map_err(|d| input_error(&d, "the plan file"))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let input = match load(&args) {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let plan = solve(&input);
    let text = match args.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&plan)?),
        Format::Table => render_table(&plan, output::stdout_is_terminal(args.output.as_deref())),
    };
    if let Some(dir) = &args.emit {
        for a in emit::artifacts(&plan, &input) {
            let path = dir.join(&a.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("{}: cannot create", parent.display()))?;
            }
            std::fs::write(&path, a.content)
                .with_context(|| format!("{}: cannot write", path.display()))?;
        }
    }
    if let Some(path) = &args.emit_snapshot {
        std::fs::write(path, snapshot(&plan, &input))
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    let code = if plan.complete() {
        output::CLEAN
    } else {
        output::FINDINGS
    };
    let written = write_output(args.output.as_deref(), &text);
    for line in unplaced_lines(&plan, "gpu-trust: ") {
        output::eprint_line(&line);
    }
    output::verdict(written, code)
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

fn render_table(plan: &Plan, terminal: bool) -> String {
    let mut out = format!(
        "Plan: {} GPUs on {} nodes; lower bound {} GPUs (gap {:.2}%), {} nodes\n\n",
        plan.gpus_used, plan.nodes_used, plan.lower_bound, plan.gap_percent, plan.nodes_lower_bound
    );
    if !plan.nodes.is_empty() {
        out.push_str("Nodes\n");
        let mut t = table(
            terminal,
            &["node", "tenants", "configs", "GPU", "layout", "replicas"],
        );
        for n in &plan.nodes {
            let configs = format!(
                "mig: {}\nplugin: {}\ntaint: {}{}",
                e(n.mig_config.as_deref().unwrap_or("-")),
                e(&n.device_plugin_config.to_string()),
                e(&n.tenant_pool.to_string()),
                if n.confidential { "\ncc: on" } else { "" }
            );
            for (i, g) in n.gpus.iter().enumerate() {
                let layout = if g.mig.is_empty() {
                    match g.sharing {
                        DeviceSharing::Exclusive => "whole".to_string(),
                        s => format!("whole, {} x{}", s.as_str(), g.replicas),
                    }
                } else {
                    g.mig
                        .iter()
                        .map(|m| match m.sharing {
                            DeviceSharing::Exclusive => format!("{}@{}", m.profile, m.start),
                            s => {
                                format!("{}@{} {} x{}", m.profile, m.start, s.as_str(), m.replicas)
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                let mut reps: Vec<String> = Vec::new();
                for a in &g.assignments {
                    let r = format!("{}#{}", e(&a.workload), a.replica);
                    if !reps.contains(&r) {
                        reps.push(r);
                    }
                }
                let first = i == 0;
                t.add_row(vec![
                    if first {
                        format!("{}\n({})", e(&n.name), e(&n.model.to_string()))
                    } else {
                        String::new()
                    },
                    if first {
                        n.tenants
                            .iter()
                            .map(|t| e(t))
                            .collect::<Vec<_>>()
                            .join(", ")
                    } else {
                        String::new()
                    },
                    if first {
                        configs.clone()
                    } else {
                        String::new()
                    },
                    g.index.to_string(),
                    layout,
                    reps.join(", "),
                ]);
            }
        }
        out.push_str(&t.to_string());
        out.push_str("\n\n");
    }
    if !plan.workloads.is_empty() {
        out.push_str("Workloads\n");
        let mut t = table(
            terminal,
            &[
                "workload",
                "tenant",
                "placed",
                "mechanism",
                "request",
                "why",
            ],
        );
        for w in &plan.workloads {
            t.add_row(vec![
                format!("{}/{}", e(&w.namespace), e(&w.name)),
                e(&w.tenant),
                format!("{}/{}", w.placed, w.replicas),
                w.mechanism
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_else(|| "-".into()),
                w.resource
                    .as_ref()
                    .map(|r| format!("{}: {}", e(&r.to_string()), w.count))
                    .unwrap_or_else(|| "-".into()),
                e(&w.why),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if !plan.unplaced.is_empty() {
        out.push_str(&format!("\nNot placed ({})\n", plan.unplaced.len()));
        for line in unplaced_lines(plan, "  ") {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust plan examples/plan/plan.yaml
  gpu-trust plan plan.yaml --format json | jq '.workloads[] | {name, resource, why}'
  gpu-trust plan plan.yaml --emit out/        # mig-parted and device plugin ConfigMaps, node labels, pod patches
  gpu-trust plan plan.yaml --emit-snapshot planned.yaml && gpu-trust audit planned.yaml --policy policy.yaml";
