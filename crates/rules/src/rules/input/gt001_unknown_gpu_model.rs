use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::fleet::{NodeFact, UnresolvedKind};
use gpu_trust_model::labels;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A GPU node whose `nvidia.com/gpu.product` label matches no model of gpu-trust's GPU catalogue,
    /// or whose managed platform names a GPU that is no whole catalogue model (an instance type with a
    /// fraction of one GPU, a size gpu-trust does not map), with the platform's reason.
    ///
    /// ## Why it matters
    ///
    /// The catalogue is where the audit learns a GPU's memory, its MIG profiles and placements, and
    /// whether it supports confidential computing. For an unknown model the audit cannot check a MIG
    /// layout (GT108), size a slice against a workload's peak (GT109) or judge CC mode, so those checks
    /// stay silent for the node: a blind spot, not a clean bill.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Node
    /// metadata:
    ///   name: gpu-7
    ///   labels:
    ///     nvidia.com/gpu.product: NVIDIA-Future-GPU-200GB
    /// ```
    ///
    /// ## Remediation
    ///
    /// Check the label GPU Feature Discovery wrote (`kubectl get node NODE -L nvidia.com/gpu.product`).
    /// If the model is real and new, run `gpu-trust catalogue` to see the known names and report the
    /// model so it can be added; if the label was set by hand, correct it.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Feature Discovery: the `nvidia.com/gpu.product` label is the nvidia-smi product name
    ///   with spaces turned into dashes.
    /// - gpu-trust GPU catalogue (`gpu-trust catalogue`), with the source of each model's facts.
    pub struct UnknownGpuModel {
        code: "GT001",
        name: "unknown-gpu-model",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::Low),
        summary: "a GPU node's product label matches no entry of the GPU catalogue: its MIG geometry and CC support are unknown",
        reports: [Reports::HiddenFacts(Layer::Device)],
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let mut nodes: BTreeSet<usize> = BTreeSet::new();
    for (id, node) in ctx.fleet.gpu_nodes() {
        if let Some(gpu) = &node.gpu {
            if gpu.product.is_some() && gpu.model.is_none() {
                nodes.insert(id);
            }
        }
    }
    for u in &ctx.fleet.unresolved {
        if u.what == UnresolvedKind::GpuModel {
            if let Some(id) = u.node.as_deref().and_then(|n| ctx.fleet.node_by_name(n)) {
                nodes.insert(id);
            }
        }
    }
    for id in nodes {
        let Some(node) = ctx.fleet.nodes.get(id) else {
            continue;
        };
        let gpu = node.gpu.as_ref();
        let product = gpu.and_then(|g| g.product.as_deref());
        // Without a product name, the reason the platform left the model unknown says the most.
        let why = gpu.and_then(|g| {
            g.unknown
                .iter()
                .find(|u| u.fact == NodeFact::GpuModel)
                .map(|u| u.reason.as_str())
        });
        // A platform's name for the GPU (an instance type's GPU) comes with the platform's reason
        // when it is no whole catalogue model; GPU Feature Discovery's product label does not.
        let from_gfd = node.labels.contains_key(labels::PRODUCT);
        let what = match (product, why) {
            (Some(product), Some(why)) if !from_gfd => format!(
                "node {}: the platform names its GPU `{product}`; {why}",
                node.name
            ),
            (Some(product), _) => format!(
                "node {} reports GPU product `{product}`, which the GPU catalogue does not know",
                node.name
            ),
            (None, Some(why)) => format!("node {}: the GPU model is unknown ({why})", node.name),
            (None, None) => format!("node {} reports GPU product `(none)`", node.name),
        };
        let tenants = ctx.colo().tenants_on(id);
        let draft = sink
            .draft(Severity::Low, Certainty::Observed)
            .nodes([id])
            .tenants(tenants.keys().copied())
            .with_node_objects(ctx)
            .message(format!(
                "{what}: its MIG geometry, memory and confidential-computing support are unknown, so MIG layout, slice size and CC checks cannot judge this node"
            ))
            .remediation(format!(
                "Check `kubectl get node {} -L {}` against the names `gpu-trust catalogue` lists; correct a hand-set label, or report the model so the catalogue can add it",
                node.name,
                gpu_trust_model::labels::PRODUCT
            ));
        sink.push(draft);
    }
}
