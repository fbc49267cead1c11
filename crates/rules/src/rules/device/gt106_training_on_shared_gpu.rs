use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::WorkloadClass;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A training workload (Kubeflow PyTorchJob, TFJob or MPIJob, JobSet, Volcano gang job, or a policy
    /// `workloads` entry of kind `training`) that runs on, or requests, a shared GPU resource: a
    /// time-sliced or MPS GPU, a MIG slice smaller than the whole GPU, or a fraction. On manifests alone
    /// (no GPU node in the input), a request that names a shared resource (`nvidia.com/gpu.shared`, a
    /// fraction, HAMi vGPU resources, a DRA claim with a sharing strategy) is enough.
    ///
    /// ## Why it matters
    ///
    /// Training holds memory for hours, saturates compute and bandwidth, and its collective operations
    /// stall when one rank slows down. On a shared GPU it starves its neighbours and is itself slowed by
    /// them; a fault in a neighbour kills the step, often the whole gang. Training gets whole, dedicated
    /// GPUs.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: PyTorchJob
    /// spec:
    ///   pytorchReplicaSpecs:
    ///     Worker:
    ///       template:
    ///         spec:
    ///           containers:
    ///             - resources: {limits: {nvidia.com/gpu.shared: 1}}
    /// ```
    ///
    /// ## Remediation
    ///
    /// Run training on whole GPUs of a node pool without sharing (no `replicas` in its device plugin
    /// config, MIG disabled or the whole-GPU profile), selected by a nodeSelector and kept for training
    /// by a taint.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes": replicas do not get proportional
    ///   compute and share memory and faults.
    /// - gpu-trust planner constraints: training always gets whole, dedicated GPUs.
    pub struct TrainingOnSharedGpu {
        code: "GT106",
        name: "training-on-shared-gpu",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a training workload runs on, or requests, a shared GPU resource (time-sliced, MPS, MIG slice, fraction)",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    for (wid, tenant, w) in ctx.tenant_workloads() {
        if ctx.class(wid) != WorkloadClass::Training || !w.requests_gpu() {
            continue;
        }
        let seats = ctx.colo().seats(ctx.fleet, wid);
        if seats.is_empty() {
            if super::no_gpu_nodes(ctx) {
                manifest_only(ctx, sink, wid, tenant, w);
            }
            continue;
        }
        let mut shared_nodes = BTreeSet::new();
        let mut mechanisms = BTreeSet::new();
        let mut all_shared = true;
        for seat in &seats {
            let shared: Vec<usize> = seat
                .nodes
                .iter()
                .copied()
                .filter(|n| super::is_shared_resource(ctx, w, seat.mechanism, *n))
                .collect();
            if shared.len() < seat.nodes.len() {
                all_shared = false;
            }
            if !shared.is_empty() {
                mechanisms.insert(seat.mechanism);
                shared_nodes.extend(shared);
            }
        }
        if shared_nodes.is_empty() {
            continue;
        }
        let placed = seats[0].certainty == Certainty::Observed;
        let certainty = if placed || all_shared {
            Certainty::Observed
        } else {
            Certainty::Permitted
        };
        let how: Vec<&str> = mechanisms.iter().map(|m: &Mechanism| m.title()).collect();
        let verb = match (placed, certainty) {
            (true, _) => "runs on",
            (false, Certainty::Observed) => "can only get",
            _ => "may be scheduled onto",
        };
        let draft = sink
            .draft(Severity::High, certainty)
            .tenants([tenant])
            .workloads([wid])
            .nodes(shared_nodes.iter().copied())
            .mechanisms_from(mechanisms.iter().copied())
            .message(format!(
                "training workload {} of tenant {} {verb} a shared GPU resource ({}) on {}: {}",
                text::workload(ctx, wid),
                ctx.tenant_name(tenant),
                text::list(&how),
                text::nodes(ctx, shared_nodes.iter().copied()),
                mechanisms
                    .iter()
                    .map(|m| text::enforcement(*m, &text::INCIDENT_PROPERTIES))
                    .collect::<Vec<_>>()
                    .join(". ")
            ))
            .remediation(format!(
                "Run {} on whole, dedicated GPUs: request `nvidia.com/gpu` on a node pool whose device plugin config has no `replicas` and no MIG slices (nodeSelector for the pool, a taint that keeps other work off it), all GPUs of one replica on one node",
                text::workload(ctx, wid)
            ));
        sink.push(draft);
    }
}

/// A training workload judged without GPU nodes in the input: its request names a shared resource.
fn manifest_only(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    wid: gpu_trust_model::fleet::WorkloadId,
    tenant: gpu_trust_policy::TenantId,
    w: &gpu_trust_model::fleet::Workload,
) {
    let sharing = super::requested_sharing(w);
    if sharing.is_empty() {
        return;
    }
    let how: BTreeSet<&str> = sharing.iter().map(|(m, _)| m.title()).collect();
    let what: BTreeSet<&str> = sharing.iter().map(|(_, r)| r.as_str()).collect();
    let how: Vec<&str> = how.into_iter().collect();
    let what: Vec<&str> = what.into_iter().collect();
    let draft = sink
        // The request itself names a shared resource: wherever it runs, it can only get a share.
        .draft(Severity::High, Certainty::Observed)
        .tenants([tenant])
        .workloads([wid])
        .mechanisms_from(sharing.iter().map(|(m, _)| *m))
        .message(format!(
            "training workload {} of tenant {} requests {}, a shared GPU resource ({}), whatever node it lands on (the input has no GPU node): it never gets a whole GPU of its own",
            text::workload(ctx, wid),
            ctx.tenant_name(tenant),
            text::list(&what),
            text::list(&how),
        ))
        .remediation(format!(
            "Run {} on whole, dedicated GPUs: request `nvidia.com/gpu` on a node pool whose device plugin config has no `replicas` and no MIG slices (nodeSelector for the pool, a taint that keeps other work off it), all GPUs of one replica on one node",
            text::workload(ctx, wid)
        ));
    sink.push(draft);
}
