use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{NodeId, Workload};
use gpu_trust_model::isolation::{Mechanism, Slice};
use gpu_trust_model::resource;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A workload whose known peak device memory (a policy `workloads` entry's `peakMemory`, or HAMi's
    /// `nvidia.com/gpumem` request when it runs on another mechanism) is larger than the memory it gets:
    /// the memory of its MIG profile, its share of a time-sliced or MPS GPU (the GPU's memory divided by
    /// the replicas), its HAMi `gpumem`, its KAI/Run:ai `gpu-memory` or fraction, or the whole GPU.
    ///
    /// ## Why it matters
    ///
    /// A slice is sized for the peak, never the average. A workload that outgrows a MIG instance fails
    /// with out-of-memory; on a shared pool it takes the memory from its neighbours instead, which is
    /// the interference the slice was meant to prevent.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// # policy
    /// workloads:
    ///   - selector: {namespace: search-prod, labels: {app: ranker}}
    ///     peakMemory: 24GiB
    /// # the ranker requests nvidia.com/mig-1g.10gb (9.75 GiB on an H100 80GB)
    /// ```
    ///
    /// ## Remediation
    ///
    /// Request a profile whose memory covers the peak (`gpu-trust catalogue MODEL` lists the memory of
    /// each profile), or fewer replicas per GPU, or measure the peak again if it changed.
    ///
    /// ## References
    ///
    /// - NVIDIA MIG User Guide: memory per GPU instance profile (`nvidia-smi mig -lgip`).
    /// - NVIDIA k8s-device-plugin: MPS replicas get an equal share of memory (pinned limit
    ///   total/replicas).
    /// - gpu-trust GPU catalogue: real instance memory per profile.
    pub struct SliceBelowPeak {
        code: "GT109",
        name: "slice-below-peak",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a workload's known peak memory exceeds the memory of the MIG profile or share it gets",
    }
}

/// The memory a workload gets on a node under a mechanism, and how it is described.
fn share_of(ctx: &Context<'_>, w: &Workload, m: Mechanism, node: NodeId) -> Option<(u64, String)> {
    let gpu = ctx.gpu(node)?;
    let whole = super::gpu_memory_mib(ctx, node);
    // The mechanism's row says what its slice is.
    match m.slice() {
        Slice::MigInstance => {
            let profile = super::requested_profile(ctx, w, node)?;
            let mem = super::profile_memory_mib(ctx, node, &profile)?;
            let replicas = u64::from(gpu.sharing.replicas_for(&catalogue::mig_resource(&profile)));
            if !m.shares_device() || replicas <= 1 {
                Some((
                    mem,
                    format!("a MIG instance {profile} ({})", text::mib(mem)),
                ))
            } else {
                Some((
                    mem / replicas,
                    format!(
                        "1/{replicas} of a MIG instance {profile} ({})",
                        text::mib(mem / replicas)
                    ),
                ))
            }
        }
        Slice::Replicas => {
            let resource = w
                .gpu
                .resources
                .keys()
                .find(|k| resource::base(k) == resource::GPU)?;
            let replicas = u64::from(gpu.sharing.replicas_for(resource));
            let quantity = w.gpu.resources.get(resource).copied().unwrap_or(1).max(1);
            let whole = whole?;
            let mem = whole.saturating_mul(quantity) / replicas.max(1);
            Some((
                mem,
                format!(
                    "{quantity} of {replicas} replicas of a {} GPU ({})",
                    text::mib(whole),
                    text::mib(mem)
                ),
            ))
        }
        Slice::Vgpu => {
            let h = w.gpu.hami.as_ref()?;
            let mem = h
                .memory_mib
                .or_else(|| Some(whole? * h.memory_percentage? / 100))?;
            Some((mem, format!("a {} of {}", m.title(), text::mib(mem))))
        }
        Slice::Fraction => {
            let f = w.gpu.fraction.as_ref()?;
            let mem = match (f.memory_mib, f.fraction) {
                (Some(m), _) => m,
                (None, Some(frac)) if frac > 0.0 && frac <= 1.0 => (whole? as f64 * frac) as u64,
                _ => return None,
            };
            Some((mem, format!("a {} of {}", m.title(), text::mib(mem))))
        }
        // Its limits are set per cgroup on the node, which Kubernetes does not show.
        Slice::Unknown => None,
        Slice::WholeGpus => {
            let quantity = w
                .gpu
                .resources
                .get(resource::GPU)
                .copied()
                .unwrap_or(1)
                .max(1);
            let whole = whole?;
            Some((
                whole,
                format!(
                    "{} of {} each",
                    text::plural(quantity, "whole GPU"),
                    text::mib(whole)
                ),
            ))
        }
    }
}

/// A workload's peak and the smallest share it gets, for the message.
struct Found {
    peak: u64,
    mem: u64,
    what: String,
    source: &'static str,
    nodes: BTreeSet<NodeId>,
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    owned::per_owner(
        ctx,
        sink,
        Severity::Medium,
        |wid, _, w| judge(ctx, wid, w),
        |o| {
            // The smallest share against the largest peak among the owner's workloads.
            let worst = o
                .details
                .iter()
                .min_by_key(|f| (f.mem, std::cmp::Reverse(f.peak)));
            let peak = o.details.iter().map(|f| f.peak).max().unwrap_or_default();
            let (mem, what, source) =
                worst.map_or((0, "", ""), |f| (f.mem, f.what.as_str(), f.source));
            // Where it gets that share; elsewhere its share is larger, but still short.
            let at: BTreeSet<NodeId> = o
                .details
                .iter()
                .filter(|f| f.mem == mem)
                .flat_map(|f| f.nodes.iter().copied())
                .collect();
            let rest: BTreeSet<NodeId> = o.nodes.difference(&at).copied().collect();
            let elsewhere = if rest.is_empty() {
                String::new()
            } else {
                format!(", and less than its peak on {} too", text::nodes(ctx, rest))
            };
            owned::Words {
                message: format!(
                    "{} of tenant {} peaks at {} ({source}) but gets {what} on {}{elsewhere}: it runs out of memory, or takes it from its neighbours where nothing partitions the pool",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    text::mib(peak),
                    text::nodes(ctx, at)
                ),
                remediation: format!(
                    "Give {} at least {} of its own: a larger MIG profile (`gpu-trust catalogue` lists the memory of each), fewer replicas per GPU, or a whole GPU; the slice is {} short",
                    o.owner,
                    text::mib(peak),
                    text::mib(peak.saturating_sub(mem))
                ),
            }
        },
    );
}

fn judge(
    ctx: &Context<'_>,
    wid: gpu_trust_model::fleet::WorkloadId,
    w: &Workload,
) -> Option<owned::Verdict<Found>> {
    // HAMi's gpumem is both the peak ingest records and the share HAMi grants: only a policy
    // peak can be compared with it.
    let policy_peak = ctx.overrides().get(wid).and_then(|o| o.peak_memory_mib);
    let peak = ctx.peak_memory_mib(wid)?;
    let mut worst: Option<(u64, String, Mechanism, Certainty, Vec<NodeId>)> = None;
    for seat in ctx.colo().seats(ctx.fleet, wid) {
        if seat.mechanism.slice() == Slice::Vgpu && policy_peak.is_none() {
            continue;
        }
        for n in &seat.nodes {
            let Some((mem, what)) = share_of(ctx, w, seat.mechanism, *n) else {
                continue;
            };
            if mem >= peak {
                continue;
            }
            match &mut worst {
                Some((m, _, _, _, nodes)) if *m == mem => nodes.push(*n),
                Some((m, ..)) if *m < mem => {}
                _ => worst = Some((mem, what, seat.mechanism, seat.certainty, vec![*n])),
            }
        }
    }
    let (mem, what, mechanism, certainty, nodes) = worst?;
    let source = if policy_peak.is_some() {
        "the policy's workloads entry"
    } else if w.gpu.hami.is_some() {
        "its nvidia.com/gpumem request"
    } else {
        "its recorded peak"
    };
    let nodes: BTreeSet<NodeId> = nodes.into_iter().collect();
    Some(owned::Verdict {
        certainty,
        nodes: nodes.clone(),
        mechanisms: BTreeSet::from([mechanism]),
        detail: Found {
            peak,
            mem,
            what,
            source,
            nodes,
        },
    })
}
