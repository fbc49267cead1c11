//! The inventory as tables: per GPU node its facts and devices, then what is not scheduled, not
//! resolved or not read. Every text from the input is escaped for the terminal.

use crate::text::{e, joined, plural, prose_line, table};
use gpu_trust_ingest::inventory::{Inventory, NodeView};

/// The inventory for reading: a summary line, one section per GPU node (its facts, then a table of
/// its devices and the pods on each), the nodes without GPUs, then the workloads not running on a
/// node, what could not be resolved and the skipped documents. `width`: the columns the
/// tables fit in.
pub fn render(inv: &Inventory, width: usize) -> String {
    let s = &inv.summary;
    let fleet = format!(
        "Fleet: {} ({} with GPUs: {}, {}), {} ({} on GPUs), {}",
        plural(s.nodes, "node", "nodes"),
        s.gpu_nodes,
        plural(s.gpus, "GPU", "GPUs"),
        plural(s.mig_instances, "MIG instance", "MIG instances"),
        plural(s.workloads, "workload", "workloads"),
        plural(s.gpu_pods, "pod", "pods"),
        plural(s.tenants, "tenant", "tenants"),
    );
    let mut out = prose_line(&fleet, width, "");
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
        out.push_str(&node_section(n, width));
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
        out.push('\n');
        out.push_str(&prose_line(
            &format!("Nodes without GPUs: {}", names.join("; ")),
            width,
            "",
        ));
    }
    if !inv.unscheduled.is_empty() {
        out.push_str("\nNot running on a node (templates and pending pods), where they may run\n");
        let mut t = table(
            width,
            [
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
        let mut t = table(width, ["object", "node", "what", "why"]);
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

fn node_section(n: &NodeView, width: usize) -> String {
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
    out.push_str(&prose_line(&facts.join(", "), width, "  "));
    out.push_str(&prose_line(
        &format!(
            "sharing: {} (from {})",
            e(n.sharing.as_deref().unwrap_or("none")),
            e(n.sharing_source.as_deref().unwrap_or("unknown"))
        ),
        width,
        "  ",
    ));
    if let Some(m) = &n.mig_source {
        out.push_str(&prose_line(
            &format!("MIG layout from {}", e(&m.to_string())),
            width,
            "  ",
        ));
    }
    if !n.taints.is_empty() {
        out.push_str(&prose_line(
            &format!("taints: {}", joined(&n.taints, ", ")),
            width,
            "  ",
        ));
    }
    let without_gpus = |pods: usize| match pods {
        0 => String::new(),
        n => format!(" ({} without GPUs)", plural(n, "pod", "pods")),
    };
    let mut tenants = format!(
        "tenants: {}{}",
        if n.tenants.is_empty() {
            "none".to_string()
        } else {
            joined(&n.tenants, ", ")
        },
        without_gpus(n.other_pods)
    );
    if n.platform_pods > 0 {
        tenants.push_str(&format!("; platform{}", without_gpus(n.platform_pods)));
    }
    out.push_str(&prose_line(&tenants, width, "  "));
    if n.devices.is_empty() {
        return out;
    }
    // The table is indented two columns under the node.
    let mut t = table(
        width.saturating_sub(2),
        [
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
                let recorded = if o.recorded.is_empty() {
                    String::new()
                } else {
                    format!(", recorded {}", joined(&o.recorded, ", "))
                };
                format!(
                    "{} ({}, {}{recorded})",
                    e(&o.pod.to_string()),
                    e(o.tenant.as_deref().unwrap_or("platform")),
                    o.certainty
                )
            })
            .collect();
        let mechanism = match d.mechanism {
            None => "unknown".to_string(),
            Some(m) if d.replicas > 1 => format!("{m} x{}", d.replicas),
            Some(m) => m.to_string(),
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
