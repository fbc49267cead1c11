//! The migration as tables: what changes per node, the warnings, the steps with the capacity each
//! pool keeps, and where each workload moves. Every text from the input is escaped for the terminal.

use super::{clash_warning, driver_warning, evictions, TargetAudit};
use crate::text::{e, joined, plural, prose_line, table};
use gpu_trust_planner::migrate::{MigChange, Migration, PoolCapacity, SharingChange};

fn capacity(c: &PoolCapacity) -> String {
    let mut parts = vec![
        plural(c.nodes as usize, "node", "nodes"),
        plural(c.whole_gpus as usize, "whole GPU", "whole GPUs"),
    ];
    parts.extend(c.instances.iter().map(|(p, n)| format!("{n} x {}", e(p))));
    format!("{}: {}", e(&c.pool), parts.join(", "))
}

/// The migration for reading, in `width` columns.
pub fn render(migration: &Migration, audit: &TargetAudit, width: usize) -> String {
    let mut out = String::new();
    for s in &migration.shortfalls {
        out.push_str(&prose_line(
            &format!(
                "Cannot migrate: pool {} plans {} but the current cluster has {} of {} with {} GPUs each.",
                e(&s.pool),
                plural(s.planned as usize, "node", "nodes"),
                s.found,
                e(&s.model),
                s.gpus_per_node
            ),
            width,
            "",
        ));
    }
    let count = |f: &dyn Fn(&&gpu_trust_planner::migrate::NodeChange) -> bool| {
        migration.nodes.iter().filter(f).count()
    };
    let drained = count(&|n| n.drain);
    out.push_str(&prose_line(
        &format!(
            "Migration: {} of {} drained ({} MIG mode or unknown, {} MIG layout only), {} relabelled only, {} released; {}.",
            drained,
            plural(migration.nodes.len(), "node", "nodes"),
            count(&|n| matches!(n.mig, MigChange::Mode | MigChange::Unknown)),
            count(&|n| n.mig == MigChange::Layout),
            count(&|n| !n.drain),
            migration.released.len(),
            plural(migration.steps.len(), "step", "steps"),
        ),
        width,
        "",
    ));
    out.push_str(&prose_line(
        &if audit.clean {
            format!(
                "The planned state audits clean: no finding at or above {}.",
                audit.fail_on.as_str()
            )
        } else {
            format!(
                "The planned state does NOT audit clean: {} at or above {}.",
                plural(
                    audit.summary.findings.at_or_above(audit.fail_on),
                    "finding",
                    "findings"
                ),
                audit.fail_on.as_str()
            )
        },
        width,
        "",
    ));
    let warnings: Vec<String> = migration
        .config_clashes
        .iter()
        .map(clash_warning)
        .chain(migration.nodes.iter().filter_map(driver_warning))
        .collect();
    if !warnings.is_empty() {
        out.push_str("\nWarnings\n");
        for w in &warnings {
            out.push_str(&prose_line(&format!("- {}", e(w)), width, "  "));
        }
    }
    if !migration.nodes.is_empty() {
        out.push_str("\nNodes\n");
        let mut t = table(width, ["node", "becomes", "MIG", "device plugin", "drain"]);
        for n in &migration.nodes {
            let mig = match n.mig {
                MigChange::Unchanged => "unchanged".to_string(),
                MigChange::Layout => format!("layout only: {}", joined_numbers(&n.changed_gpus)),
                MigChange::Mode => format!("MODE (GPU reset): {}", joined_numbers(&n.changed_gpus)),
                MigChange::Unknown => "unknown now".to_string(),
            };
            let label = |l: &gpu_trust_planner::migrate::LabelChange| {
                format!(
                    "{} -> {}",
                    e(l.from.as_deref().unwrap_or("-")),
                    e(l.to.as_deref().unwrap_or("-"))
                )
            };
            let plugin = match n.sharing {
                SharingChange::Unchanged => "same sharing",
                SharingChange::Changed => "sharing changes",
                SharingChange::Unknown => "sharing unknown now",
            };
            t.add_row(vec![
                e(&n.node),
                format!(
                    "{} ({})\ntaint {}",
                    e(&n.role),
                    e(&n.pool),
                    e(&n.tenant_pool)
                ),
                format!("{mig}\n{}", label(&n.mig_config)),
                format!("{plugin}\n{}", label(&n.device_plugin_config)),
                if n.drain {
                    format!("yes: {}\n{}", joined(&n.reasons, "\n"), e(&evictions(n)))
                } else {
                    "no".to_string()
                },
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if !migration.steps.is_empty() {
        out.push_str("\nSteps (one node per pool at a time)\n");
        let mut t = table(width, ["step", "nodes out", "capacity left"]);
        let now: Vec<String> = migration.capacity_now.iter().map(capacity).collect();
        t.add_row(vec!["now".to_string(), "-".to_string(), now.join("\n")]);
        for s in &migration.steps {
            let left: Vec<String> = s.capacity.iter().map(capacity).collect();
            t.add_row(vec![
                s.number.to_string(),
                joined(&s.nodes, "\n"),
                left.join("\n"),
            ]);
        }
        let planned: Vec<String> = migration.capacity_planned.iter().map(capacity).collect();
        t.add_row(vec![
            "planned".to_string(),
            "-".to_string(),
            planned.join("\n"),
        ]);
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if !migration.workloads.is_empty() {
        out.push_str("\nWorkloads\n");
        let mut t = table(width, ["workload", "now", "planned"]);
        for w in &migration.workloads {
            let now = match &w.kind {
                None => "not in the current cluster".to_string(),
                Some(k) => format!(
                    "{} requesting {}\non {}",
                    e(k),
                    if w.from_resources.is_empty() {
                        "no GPU".to_string()
                    } else {
                        joined(&w.from_resources, ", ")
                    },
                    if w.from_nodes.is_empty() {
                        "no scheduled pod in the input".to_string()
                    } else {
                        joined(&w.from_nodes, ", ")
                    }
                ),
            };
            t.add_row(vec![
                format!("{}/{}", e(&w.namespace), e(&w.workload)),
                now,
                format!(
                    "{}\non {}",
                    e(w.to_resource.as_deref().unwrap_or("-")),
                    joined(&w.to_nodes, ", ")
                ),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if !migration.released.is_empty() {
        let names: Vec<String> = migration
            .released
            .iter()
            .map(|r| format!("{} ({})", e(&r.node), e(&r.pool)))
            .collect();
        out.push('\n');
        out.push_str(&prose_line(
            &format!(
                "Not used by the plan, left as they are: {}.",
                names.join(", ")
            ),
            width,
            "",
        ));
    }
    out
}

fn joined_numbers(gpus: &[u32]) -> String {
    let list: Vec<String> = gpus.iter().map(u32::to_string).collect();
    format!("GPU {}", list.join(", "))
}
