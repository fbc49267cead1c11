use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Enforcement, Mechanism, Property};
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// An inference server that reserves most of the device's memory when it starts, on a GPU shared
    /// without memory partitioning (time-slicing, time-slicing inside a MIG instance, a KAI fraction, or
    /// HAMi with its limits switched off): vLLM (`--gpu-memory-utilization`, default 0.9), SGLang
    /// (`--mem-fraction-static`, chosen automatically by default) or TGI (`--cuda-memory-fraction`, default
    /// 1.0), with a fraction of 0.5 or more or the default; also when a server that wraps the engine
    /// with its defaults runs it (KServe's Hugging Face runtime, read through the ServingRuntime or
    /// ClusterServingRuntime an InferenceService's `model` runs in). On manifests alone (no GPU node in the
    /// input), a request that names such a share is enough: `nvidia.com/gpu.shared` (time-sliced
    /// replicas, when the device plugin time-slices), a KAI or Run:ai fraction.
    ///
    /// ## Why it matters
    ///
    /// These engines size their KV cache from the device's total memory, not from the share they were
    /// scheduled on. On a shared memory pool the first replica to start takes most of the GPU and every
    /// later neighbour fails to allocate, or the engine itself fails to start when a neighbour was first.
    /// The failure looks like a model bug, not like the neighbour it is.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// containers:
    ///   - image: vllm/vllm-openai:v0.8.4
    ///     args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]   # default --gpu-memory-utilization 0.9
    ///     resources: {limits: {nvidia.com/gpu: 1}}                 # on a node time-sliced 4 ways
    /// ```
    ///
    /// ## Remediation
    ///
    /// Give the server a GPU or MIG instance of its own, sized for its peak; or set the reservation flag to
    /// its share of the device (for 4 replicas, at most 0.25), knowing that the share is still not enforced.
    ///
    /// ## References
    ///
    /// - vLLM engine arguments: `--gpu-memory-utilization`, the fraction of GPU memory for the model
    ///   executor, default 0.9.
    /// - SGLang server arguments: `--mem-fraction-static`, the fraction for static allocation (weights and
    ///   KV cache pool), chosen automatically when unset.
    /// - Hugging Face text-generation-inference launcher: `--cuda-memory-fraction`, default 1.0.
    /// - KServe Hugging Face serving runtime (`kserve/huggingfaceserver`): vLLM is the default backend
    ///   for models vLLM supports, with vLLM's engine arguments; `--backend=huggingface` turns it off.
    /// - gpu-trust isolation model: memory capacity under each mechanism.
    pub struct GreedyReservationOnSharedGpu {
        code: "GT107",
        name: "greedy-reservation-on-shared-gpu",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "an inference server reserves most of the device up front on a GPU shared without memory partitioning",
    }
}

/// A reservation at or above this fraction of the device leaves too little for any neighbour
/// (gpu-trust rule catalogue, GT107).
const GREEDY_FRACTION: f64 = 0.5;

/// Whether memory between workloads under `m` is one pool nothing partitions.
fn unpartitioned(m: Mechanism, control_disabled: bool) -> bool {
    match m.property(Property::MemoryCapacity).enforcement {
        Enforcement::Shared | Enforcement::NotEnforced => true,
        // A vGPU's limits are HAMi-core's, which `CUDA_DISABLE_CONTROL=true` switches off.
        Enforcement::LimitedInSoftware => m.row().request.vgpu.is_some() && control_disabled,
        Enforcement::Separate | Enforcement::LimitedByKernel => false,
    }
}

/// What a greedy server reserves and where, for the message.
struct Found {
    /// The engine, with the server that runs it when one wraps it.
    engine: String,
    flag: &'static str,
    container: String,
    reservation: String,
    /// The requests that name a share, for an input without GPU nodes.
    requests: Vec<String>,
    /// The fraction of a GPU a KAI Scheduler or Run:ai request asks for (`gpu-fraction`): its share
    /// of the device, where the node's replica count says nothing.
    fraction: Option<f64>,
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    owned::per_owner(
        ctx,
        sink,
        Severity::High,
        |wid, _, w| judge(ctx, wid, w),
        |o| words(ctx, o),
    );
}

fn judge(
    ctx: &Context<'_>,
    wid: gpu_trust_model::fleet::WorkloadId,
    w: &gpu_trust_model::fleet::Workload,
) -> Option<owned::Verdict<Found>> {
    let server = w.inference.as_ref()?;
    if server
        .reserved_fraction
        .is_some_and(|f| f < GREEDY_FRACTION)
    {
        return None;
    }
    let control_disabled = w.gpu.hami.as_ref().is_some_and(|h| h.control_disabled);
    let seats = ctx.colo().seats(ctx.fleet, wid);
    let mut nodes = BTreeSet::new();
    let mut mechanisms = BTreeSet::new();
    let mut certainty = Certainty::Permitted;
    let mut requests: BTreeSet<String> = BTreeSet::new();
    for seat in &seats {
        if unpartitioned(seat.mechanism, control_disabled) {
            nodes.extend(seat.nodes.iter().copied());
            mechanisms.insert(seat.mechanism);
            certainty = certainty.min(seat.certainty);
        }
    }
    if seats.is_empty() && super::no_gpu_nodes(ctx) {
        for (m, request) in gpu_trust_model::isolation::Mechanism::requested_sharing(w) {
            if unpartitioned(m, control_disabled) {
                mechanisms.insert(m);
                requests.insert(request);
                // The request names a share the sharing configuration may leave unpartitioned.
                certainty = Certainty::Possible;
            }
        }
    }
    if mechanisms.is_empty() {
        return None;
    }
    let (engine_name, flag) = (server.engine.title(), server.engine.fraction_flag());
    let name = match &server.via {
        Some(via) => format!("{engine_name} run by {via}"),
        None => engine_name.to_string(),
    };
    let reservation = match (server.reserved_fraction, &server.flag) {
        (Some(f), Some(flag)) => format!("{:.0}% of device memory ({flag} {f})", f * 100.0),
        (Some(f), None) => {
            format!("{:.0}% of device memory (the default of {flag})", f * 100.0)
        }
        (None, _) => format!("most of device memory (the automatic default of {flag})"),
    };
    Some(owned::Verdict {
        certainty,
        nodes,
        mechanisms,
        detail: Found {
            engine: name,
            flag,
            container: server.container.clone(),
            reservation,
            requests: requests.into_iter().collect(),
            fraction: w
                .gpu
                .fraction
                .as_ref()
                .and_then(|f| f.fraction)
                .filter(|f| *f > 0.0 && *f < 1.0),
        },
    })
}

fn words(ctx: &Context<'_>, o: &owned::Owned<'_, Found>) -> owned::Words {
    let (Some(found), Some(&first)) = (o.details.first(), o.mechanisms.iter().next()) else {
        return owned::Words {
            message: String::new(),
            remediation: String::new(),
        };
    };
    let containers = o.all(|f| vec![f.container.clone()]);
    let share = o
        .nodes
        .iter()
        .filter_map(|n| ctx.gpu(*n))
        .map(|g| g.sharing.replicas.values().copied().max().unwrap_or(1))
        .max()
        .unwrap_or(1)
        .max(1);
    let place = if o.nodes.is_empty() {
        let requests = o.all(|f| f.requests.clone());
        format!(
            "as it requests {} (the input has no GPU node)",
            text::list(&requests)
        )
    } else {
        format!("on {}", text::nodes(ctx, o.nodes.iter().copied()))
    };
    let flag = found.flag;
    owned::Words {
        message: format!(
            "{} ({} {}) in {} of tenant {} reserves {} at start, on a GPU shared by {} {place}: {}; the first replica to start takes the memory of every other",
            found.engine,
            if containers.len() == 1 { "container" } else { "containers" },
            text::list(&containers),
            o.subject,
            ctx.tenant_name(o.tenant),
            found.reservation,
            first.title(),
            text::enforcement(first, &[Property::MemoryCapacity])
        ),
        remediation: if let Some(fraction) = found.fraction {
            format!(
                "Give {} a GPU or MIG instance of its own sized for its peak; or set `{flag}` to at most {fraction:.2}, the fraction of the GPU it requests (`gpu-fraction`), knowing the share is still not enforced",
                o.owner
            )
        } else if o.nodes.is_empty() {
            format!(
                "Give {} a GPU or MIG instance of its own sized for its peak; or set `{flag}` to its share of the device (1 / the replicas per GPU of the pool it runs on), knowing the share is still not enforced",
                o.owner
            )
        } else {
            format!(
                "Give {} a GPU or MIG instance of its own sized for its peak; or set `{flag}` to its share of the device (at most {:.2} with {share} replicas per GPU), knowing the share is still not enforced",
                o.owner,
                1.0 / f64::from(share)
            )
        },
    }
}
