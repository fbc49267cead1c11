//! The plan as tables. Every text from the plan file is escaped for the terminal.

use super::unplaced_lines;
use crate::text::{e, table};
use gpu_trust_planner::plan::{DeviceSharing, Plan};

/// The plan for reading: GPUs used against the lower bound, the nodes with each GPU's layout and
/// replicas, the workloads with their mechanism and why, and the replicas not placed, in `width`
/// columns.
pub fn render(plan: &Plan, width: usize) -> String {
    // No plan of the same input places these replicas on fewer than `lower_bound` GPUs.
    let reach = match plan.gpus_used.saturating_sub(plan.lower_bound) {
        0 => "No plan places these replicas on fewer GPUs.".to_string(),
        n => format!(
            "The plan uses at most {} more than the fewest possible.",
            crate::text::plural(n as usize, "GPU", "GPUs")
        ),
    };
    let mut out = format!(
        "Plan: {} GPUs on {} nodes; lower bound {} GPUs (gap {:.2}%), {} nodes\n{reach}\n\n",
        plan.gpus_used, plan.nodes_used, plan.lower_bound, plan.gap_percent, plan.nodes_lower_bound
    );
    if !plan.nodes.is_empty() {
        out.push_str("Nodes\n");
        let mut t = table(
            width,
            ["node", "tenants", "configs", "GPU", "layout", "replicas"],
        );
        for n in &plan.nodes {
            let configs = format!(
                "mig: {}\nplugin: {}\ntaint: {}{}",
                e(n.mig_config.as_deref().unwrap_or("-")),
                // A CC node's GPUs are passed through by the sandbox device plugin.
                if n.confidential {
                    "sandbox (vm-passthrough)".to_string()
                } else {
                    e(&n.device_plugin_config.to_string())
                },
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
            width,
            [
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
