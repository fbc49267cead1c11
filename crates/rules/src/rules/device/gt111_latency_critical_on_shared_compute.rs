use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::Property;
use gpu_trust_model::{Certainty, Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// A workload of a tenant marked `latency: critical` (or a policy `workloads` entry marked so) that
    /// runs, or may run, on compute shared without a guaranteed quantum: time-slicing, MPS, a MIG
    /// instance shared inside, or a fraction.
    ///
    /// ## Why it matters
    ///
    /// Time-slicing interleaves contexts with no execution quantum guarantee; MPS's active thread
    /// percentage is a soft cap that reserves nothing; fractions throttle in software at best. A
    /// neighbour's long kernels land directly in the critical workload's tail latency.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// tenants:
    ///   - name: ads
    ///     namespaces: ["ads-*"]
    ///     latency: critical
    /// # ads-serving pods request nvidia.com/gpu on a time-sliced node
    /// ```
    ///
    /// ## Remediation
    ///
    /// Give latency-critical workloads an instance of their own: a whole GPU or a MIG instance (its own
    /// SMs), selected by a nodeSelector on a pool without time-slicing or MPS.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes".
    /// - NVIDIA MPS documentation: `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` is a limit, not a reservation.
    /// - gpu-trust isolation model: compute under each mechanism.
    pub struct LatencyCriticalOnSharedCompute {
        code: "GT111",
        name: "latency-critical-on-shared-compute",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a latency-critical tenant or workload runs on time-slicing, MPS or a fraction (no guaranteed execution quantum)",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // Which workloads and seats: the rule's row about one workload in the model's table.
    let code = sink.rule().code;
    owned::per_owner(
        ctx,
        sink,
        Severity::Medium,
        |wid, tenant, w| owned::refused(ctx, code, wid, tenant, w),
        |o| {
            let facts: Vec<String> = o
                .mechanisms
                .iter()
                .map(|m| text::enforcement(*m, &[Property::Compute]))
                .collect();
            owned::Words {
                message: format!(
                    "{} of latency-critical tenant {} {} shared compute on {}: {}",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    if o.certainty == Certainty::Observed {
                        "runs on"
                    } else {
                        "may be scheduled onto"
                    },
                    text::nodes(ctx, o.nodes.iter().copied()),
                    facts.join(". ")
                ),
                remediation: format!(
                    "Give {} a GPU or MIG instance of its own (request `nvidia.com/gpu` on a pool without time-slicing or MPS, or `nvidia.com/mig-<profile>` without replicas), selected by a nodeSelector",
                    o.owner
                ),
            }
        },
    );
}
