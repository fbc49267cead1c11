use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::{Workload, WorkloadId};
use gpu_trust_model::isolation::{Mechanism, Seat, SeatRow};
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_policy::TenantId;
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

/// How a training workload gets its shared GPU resource, for the message.
struct Found {
    /// Scheduled on those nodes (`runs on`), or a template that can only get a shared resource
    /// wherever it goes (`can only get`), or may get one (`may be scheduled onto`).
    verb: &'static str,
    /// The request, for an input without GPU nodes (`requests ...`).
    requests: Vec<String>,
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let manifests = super::no_gpu_nodes(ctx);
    // Which workloads and seats: the rule's row about one workload in the model's table.
    let Some(row) = SeatRow::of_rule(sink.rule().code) else {
        return;
    };
    owned::per_owner(
        ctx,
        sink,
        Severity::High,
        |wid, tenant, w| judge(ctx, row, wid, tenant, w, manifests),
        |o| {
            let how: Vec<&str> = o.mechanisms.iter().map(|m: &Mechanism| m.title()).collect();
            let message = if o.nodes.is_empty() {
                let what = o.all(|f| f.requests.clone());
                format!(
                    "training workload {} of tenant {} requests {}, a shared GPU resource ({}), whatever node it lands on (the input has no GPU node): it never gets a whole GPU of its own",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    text::list(&what),
                    text::list(&how),
                )
            } else {
                format!(
                    "training workload {} of tenant {} {} a shared GPU resource ({}) on {}: {}",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    o.details.first().map_or("runs on", |f| f.verb),
                    text::list(&how),
                    text::nodes(ctx, o.nodes.iter().copied()),
                    o.mechanisms
                        .iter()
                        .map(|m| text::enforcement(*m, &text::INCIDENT_PROPERTIES))
                        .collect::<Vec<_>>()
                        .join(". ")
                )
            };
            owned::Words {
                message,
                remediation: format!(
                    "Run {} on whole, dedicated GPUs: request `nvidia.com/gpu` on a node pool whose device plugin config has no `replicas` and no MIG slices (nodeSelector for the pool, a taint that keeps other work off it), all GPUs of one replica on one node",
                    o.owner
                ),
            }
        },
    );
}

fn judge(
    ctx: &Context<'_>,
    row: &SeatRow,
    wid: WorkloadId,
    tenant: TenantId,
    w: &Workload,
    manifests: bool,
) -> Option<owned::Verdict<Found>> {
    if ctx.colo().seats(ctx.fleet, wid).is_empty() {
        let covered = w.requests_gpu() && (row.who)(owned::traits(ctx, wid, tenant));
        return if manifests && covered {
            manifest_only(row, w)
        } else {
            None
        };
    }
    let v = owned::refused(ctx, row.rule, wid, tenant, w)?;
    let placed = v.certainty == Certainty::Observed;
    // Every node it may go to refuses it: wherever it lands, it gets a shared resource.
    let certainty = if placed || v.detail {
        Certainty::Observed
    } else {
        Certainty::Permitted
    };
    let verb = match (placed, certainty) {
        (true, _) => "runs on",
        (false, Certainty::Observed) => "can only get",
        _ => "may be scheduled onto",
    };
    Some(owned::Verdict {
        certainty,
        nodes: v.nodes,
        mechanisms: v.mechanisms,
        detail: Found {
            verb,
            requests: Vec::new(),
        },
    })
}

/// A training workload judged without GPU nodes in the input: its request names a resource the
/// row refuses (a MIG profile counts as a slice), wherever it runs.
fn manifest_only(row: &SeatRow, w: &Workload) -> Option<owned::Verdict<Found>> {
    let sharing: Vec<(Mechanism, String)> = Mechanism::requested_sharing(w)
        .into_iter()
        .filter(|(m, _)| (row.refuses)(Seat::of(*m, true)))
        .collect();
    if sharing.is_empty() {
        return None;
    }
    let what: BTreeSet<String> = sharing.iter().map(|(_, r)| r.clone()).collect();
    Some(owned::Verdict {
        certainty: Certainty::Observed,
        nodes: BTreeSet::new(),
        mechanisms: sharing.iter().map(|(m, _)| *m).collect(),
        detail: Found {
            verb: "requests",
            requests: what.into_iter().collect(),
        },
    })
}
