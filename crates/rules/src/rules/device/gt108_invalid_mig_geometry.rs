use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::catalogue::GpuModel;
use gpu_trust_model::fleet::{ConfigSource, MigRequest};
use gpu_trust_model::geometry;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeMap;

declare_rule! {
    /// ## What it detects
    ///
    /// A MIG layout in force on a node (from its mig-parted config and `nvidia.com/mig.config` label)
    /// that the GPU model cannot hold: a profile the model lacks, more instances of a profile than fit,
    /// a combination with no valid placement on the memory slices, or MIG enabled on a model without MIG.
    ///
    /// ## Why it matters
    ///
    /// The MIG manager refuses a layout it cannot create and the node stays in its old state (the
    /// `nvidia.com/mig.config.state` label goes to `failed`), so the isolation the config was written to
    /// give is not there, and the GPUs may still be whole or shared while the tenants believe they are
    /// partitioned.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// mig-configs:
    ///   two-halves:
    ///     - devices: all
    ///       mig-enabled: true
    ///       mig-devices: {"4g.40gb": 2}     # H100 80GB holds one 4g.40gb
    /// ```
    ///
    /// ## Remediation
    ///
    /// Pick a layout the model holds: `gpu-trust catalogue MODEL` lists its profiles, maximum counts,
    /// placements and every valid layout (for two halves of an H100 80GB: `3g.40gb: 2`, or
    /// `4g.40gb: 1` with `3g.40gb: 1`).
    ///
    /// ## References
    ///
    /// - NVIDIA MIG User Guide: GPU instance profiles and placements (`nvidia-smi mig -lgip`, `-lgipp`).
    /// - NVIDIA mig-parted: `mig-configs` format and the `nvidia.com/mig.config.state` label.
    /// - gpu-trust GPU catalogue and MIG geometry (`gpu-trust catalogue`).
    pub struct InvalidMigGeometry {
        code: "GT108",
        name: "invalid-mig-geometry",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a mig-parted config names a profile the GPU lacks, more instances than fit, a combination with no valid placement, or MIG on a GPU without MIG",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // What ingest checked against the catalogue: the mig-parted entries in force, per node.
    let mut checked: BTreeMap<usize, Vec<&MigRequest>> = BTreeMap::new();
    for r in &ctx.fleet.mig_requests {
        checked.entry(r.node).or_default().push(r);
    }
    for (node, requests) in &checked {
        let bad: Vec<&&MigRequest> = requests.iter().filter(|r| r.error.is_some()).collect();
        if bad.is_empty() {
            continue;
        }
        let Some(n) = ctx.fleet.nodes.get(*node) else {
            continue;
        };
        let model = super::model_of(ctx, *node);
        let details: Vec<String> = bad
            .iter()
            .map(|r| {
                let idx: Vec<String> = r.gpus.iter().map(u32::to_string).collect();
                let word = if r.gpus.len() == 1 { "GPU" } else { "GPUs" };
                format!(
                    "config `{}` for {word} {}: {}",
                    r.config,
                    text::list(&idx),
                    r.error.as_deref().unwrap_or_default()
                )
            })
            .collect();
        let tenants = ctx.colo().tenants_on(*node);
        let mut draft = sink
            .draft(Severity::High, Certainty::Observed)
            .nodes([*node])
            .tenants(tenants.keys().copied())
            .with_node_objects(ctx)
            .message(format!(
                "the mig-parted configuration for node {}{} is not a valid MIG layout: {}; the MIG manager cannot apply it, so the partitioning the tenants rely on is not there",
                n.name,
                model.map(|m| format!(" ({})", m.display_name)).unwrap_or_default(),
                details.join("; ")
            ))
            .remediation(advice(model, &n.name));
        for r in &bad {
            draft = draft.object(r.object.clone());
        }
        sink.push(draft);
    }
    for (id, node) in ctx.fleet.gpu_nodes() {
        if checked.contains_key(&id) {
            continue;
        }
        let Some(gpu) = &node.gpu else { continue };
        if !gpu.gpus.iter().any(|g| g.mig_enabled || !g.mig.is_empty()) {
            continue;
        }
        let Some(model) = super::model_of(ctx, id) else {
            // GT001 reports the unknown model; nothing to validate against.
            continue;
        };
        // Error text -> GPU indices it applies to.
        let mut problems: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for g in &gpu.gpus {
            if !g.mig_enabled && g.mig.is_empty() {
                continue;
            }
            let result = if g.mig.iter().all(|s| s.start.is_some()) && !g.mig.is_empty() {
                let placed: Vec<(&str, u8)> = g
                    .mig
                    .iter()
                    .map(|s| (s.profile.as_str(), s.start.unwrap_or(0)))
                    .collect();
                geometry::validate_placement(model, &placed).map(|_| ())
            } else {
                let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
                for s in &g.mig {
                    *counts.entry(s.profile.as_str()).or_default() += 1;
                }
                let counts: Vec<(&str, u32)> = counts.into_iter().collect();
                if model.mig.is_none() {
                    Err(geometry::GeometryError::NoMig { model: model.id })
                } else {
                    geometry::place_counts(model, &counts).map(|_| ())
                }
            };
            if let Err(e) = result {
                problems.entry(e.to_string()).or_default().push(g.index);
            }
        }
        if problems.is_empty() {
            continue;
        }
        let config = match &gpu.mig_source {
            Some(ConfigSource::ConfigMap {
                namespace,
                name,
                key,
                config,
            }) => format!(
                "mig-parted config `{}` (key `{key}` of ConfigMap {namespace}/{name})",
                config.as_deref().unwrap_or("?")
            ),
            _ => "the MIG layout".to_string(),
        };
        let details: Vec<String> = problems
            .iter()
            .map(|(e, gpus)| {
                let idx: Vec<String> = gpus.iter().map(u32::to_string).collect();
                let word = if gpus.len() == 1 { "GPU" } else { "GPUs" };
                format!("{word} {}: {e}", text::list(&idx))
            })
            .collect();
        let tenants = ctx.colo().tenants_on(id);
        let draft = sink
            .draft(Severity::High, Certainty::Observed)
            .nodes([id])
            .tenants(tenants.keys().copied())
            .with_node_objects(ctx)
            .message(format!(
                "{config} on node {} ({}) is not a valid MIG layout: {}; the MIG manager cannot apply it, so the partitioning the tenants rely on is not there",
                node.name,
                model.display_name,
                details.join("; ")
            ))
            .remediation(advice(Some(model), &node.name));
        sink.push(draft);
    }
}

fn advice(model: Option<&GpuModel>, node: &str) -> String {
    match model {
        Some(m) if m.mig.is_some() => format!(
            "Choose a layout the {} holds (`gpu-trust catalogue {}` lists its profiles, counts and valid layouts) and set it in the mig-parted config, or label {node} with one of the GPU Operator's built-in configs (`{}=all-<profile>`)",
            m.display_name, m.id, gpu_trust_model::labels::MIG_CONFIG
        ),
        Some(m) => format!(
            "The {} has no MIG: set `{}=all-disabled` on {node} and separate tenants by whole GPUs or nodes",
            m.display_name, gpu_trust_model::labels::MIG_CONFIG
        ),
        None => format!(
            "Choose a layout the GPU model of {node} holds (`gpu-trust catalogue` lists each model's valid layouts) and set it in the mig-parted config"
        ),
    }
}
