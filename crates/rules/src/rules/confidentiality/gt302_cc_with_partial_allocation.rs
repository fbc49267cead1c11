use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use gpu_trust_model::fleet::SharingStrategy;
use gpu_trust_model::isolation::{Mechanism, Seat, SeatRow, LAYERS};
use gpu_trust_model::{Certainty, Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// A node whose GPUs are in confidential-computing mode and are also partitioned or shared: MIG
    /// enabled, time-slicing or MPS replicas, HAMi vGPUs, or fractional workloads on them.
    ///
    /// ## Why it matters
    ///
    /// NVIDIA supports confidential computing only for whole GPUs passed through to a confidential VM on
    /// the generations in the catalogue; CC nodes run the CC manager, the sandbox device plugin and the
    /// VFIO manager, with no device plugin sharing and no MIG manager. A CC label on a shared or
    /// partitioned GPU promises an attested boundary the deployment cannot give.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Node
    /// metadata:
    ///   labels:
    ///     nvidia.com/cc.mode.state: "on"
    ///     nvidia.com/mig.config: all-1g.10gb
    /// ```
    ///
    /// ## Remediation
    ///
    /// Keep CC nodes whole: `nvidia.com/mig.config=all-disabled`, no sharing in the device plugin config,
    /// and `nvidia.com/gpu.workload.config=vm-passthrough`; put shared and partitioned GPUs on nodes with CC
    /// off.
    ///
    /// ## References
    ///
    /// - NVIDIA confidential computing deployment guides: CC only for whole-GPU passthrough; no supported
    ///   configuration with MIG, time-slicing or MPS.
    /// - NVIDIA GPU Operator: CC manager, sandbox device plugin, VFIO manager.
    pub struct CcWithPartialAllocation {
        code: "GT302",
        name: "cc-with-partial-allocation",
        layer: Layer::Confidentiality,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "CC mode is on for a GPU that is also partitioned or shared (MIG, time-slicing, MPS, fraction)",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // Which seats: the rule's row about one workload in the model's table, asked of what each node
    // with CC on hands out.
    let Some(row) = SeatRow::of_rule(sink.rule().code) else {
        return;
    };
    let refused = |mechanism: Mechanism| {
        (row.refuses)(Seat {
            mechanism,
            partial: true,
            cc: true,
        })
    };
    for (id, node) in ctx.fleet.gpu_nodes() {
        let Some(gpu) = &node.gpu else { continue };
        if !super::cc_on(gpu) {
            continue;
        }
        let mut how = Vec::new();
        if gpu.mig_enabled() && refused(Mechanism::MigInstance) {
            how.push("MIG is enabled".to_string());
        }
        let shared_replicas = gpu.sharing.replicas.values().any(|r| *r > 1);
        match gpu.sharing.strategy {
            SharingStrategy::TimeSlicing if shared_replicas && refused(Mechanism::TimeSlicing) => {
                how.push("the device plugin time-slices it".to_string())
            }
            SharingStrategy::Mps if shared_replicas && refused(Mechanism::Mps) => {
                how.push("the device plugin shares it through MPS".to_string())
            }
            _ => {}
        }
        if gpu.hami && refused(Mechanism::HamiVgpu) {
            how.push("HAMi splits it into vGPUs".to_string());
        }
        let tenants = ctx.colo().tenants_on(id);
        let fractional: Vec<usize> = tenants
            .keys()
            .flat_map(|t| ctx.colo().workloads_on(id, *t))
            .filter(|w| {
                ctx.workload(*w).is_some_and(|w| {
                    w.gpu.fraction.is_some() && Mechanism::of_workload(w, gpu).is_none_or(refused)
                })
            })
            .collect();
        if !fractional.is_empty() {
            how.push(format!(
                "fractional workloads run on it ({})",
                crate::text::workloads(ctx, fractional.iter().copied())
            ));
        }
        if how.is_empty() {
            continue;
        }
        let draft = sink
            .draft(Severity::High, Certainty::Observed)
            .key(format!("node/{}", node.name))
            .nodes([id])
            .tenants(tenants.keys().copied())
            .workloads(fractional)
            .with_node_objects(ctx)
            .message(format!(
                "node {} has CC mode {} but {}: confidential computing separates tenants only as {}, so this CC boundary is not one",
                node.name,
                gpu.cc_mode.as_deref().unwrap_or("on"),
                crate::text::list(&how),
                LAYERS
                    .iter()
                    .find(|l| l.layer == Layer::Confidentiality)
                    .map_or("CC mode on a whole GPU in passthrough", |l| l.separated_by)
            ))
            .remediation(format!(
                "Keep {} whole: label it `{}=all-disabled` and `{}=vm-passthrough`, remove sharing from its device plugin config, and move shared or partitioned work to nodes with CC off",
                node.name,
                gpu_trust_model::labels::MIG_CONFIG,
                gpu_trust_model::labels::WORKLOAD_CONFIG
            ));
        sink.push(draft);
    }
}
