//! Device rules (GT1xx): what two tenants on one GPU can do to each other.

pub mod gt101_untrusted_share_time_sliced_gpu;
pub mod gt102_untrusted_share_mps;
pub mod gt103_untrusted_share_mig_instance;
pub mod gt104_distrusting_share_mig_gpu;
pub mod gt105_fraction_is_accounting;
pub mod gt106_training_on_shared_gpu;
pub mod gt107_greedy_reservation_on_shared_gpu;
pub mod gt108_invalid_mig_geometry;
pub mod gt109_slice_below_peak;
pub mod gt110_wide_blast_radius;
pub mod gt111_latency_critical_on_shared_compute;
pub mod gt112_mps_client_fault_domain;

use crate::context::Context;
use gpu_trust_model::catalogue::{self, GpuModel, MigProfile};
use gpu_trust_model::fleet::NodeId;
use std::collections::BTreeSet;

/// The catalogue model of a node's GPUs.
pub(crate) fn model_of(ctx: &Context<'_>, node: NodeId) -> Option<&'static GpuModel> {
    let gpu = ctx.gpu(node)?;
    gpu.model
        .as_deref()
        .and_then(catalogue::lookup)
        .or_else(|| gpu.product.as_deref().and_then(catalogue::lookup))
}

/// The profile that splits a GPU of `model` into the largest instances of which at least two fit:
/// the smallest step from a shared GPU to separate memory and fault domains.
pub(crate) fn separating_profile(model: &GpuModel) -> Option<&'static MigProfile> {
    model
        .mig?
        .standard_profiles()
        .filter(|p| p.max_count >= 2)
        .max_by_key(|p| p.memory_mib)
}

/// Concrete advice to move tenants on `nodes` onto separate MIG instances.
pub(crate) fn mig_advice(ctx: &Context<'_>, nodes: &BTreeSet<NodeId>) -> String {
    let Some(&node) = nodes.iter().next() else {
        return "enable MIG and give each tenant its own instance".to_string();
    };
    let name = ctx.node_name(node);
    match model_of(ctx, node) {
        Some(model) => match separating_profile(model) {
            Some(p) => format!(
                "enable MIG on {name} (label `nvidia.com/mig.config=all-{}`: {} instances of {} on the {}) and request `{}` instead of a shared GPU, one instance per workload",
                p.name,
                p.max_count,
                crate::text::mib(p.memory_mib),
                model.display_name,
                p.resource_name()
            ),
            None => format!(
                "the {} on {name} has no MIG, so give each tenant whole GPUs (`replicas: 1` in the device plugin config) or move one tenant to MIG-capable GPUs",
                model.display_name
            ),
        },
        None => format!(
            "enable MIG on {name} (an `nvidia.com/mig.config` layout of separate instances) and request `{}<profile>` instead of a shared GPU, one instance per workload",
            gpu_trust_model::resource::MIG_PREFIX
        ),
    }
}

/// The MIG profile (plugin spelling) a workload gets on a node: its `nvidia.com/mig-*` resource, or
/// the node's profile under the single strategy.
pub(crate) fn requested_profile(
    ctx: &Context<'_>,
    workload: &gpu_trust_model::fleet::Workload,
    node: NodeId,
) -> Option<String> {
    if let Some((p, _)) = workload.gpu.mig_profiles().next() {
        return Some(p.to_string());
    }
    let gpu = ctx.gpu(node)?;
    if gpu.mig_strategy == gpu_trust_model::fleet::MigStrategy::Single {
        return gpu
            .gpus
            .iter()
            .flat_map(|g| g.mig.iter())
            .map(|s| catalogue::plugin_profile(&s.profile))
            .next();
    }
    None
}

/// Whether a MIG profile is smaller than the whole GPU of the node's model (unknown models and
/// profiles count as smaller: a slice is the usual reason to run MIG).
pub(crate) fn is_partial_profile(ctx: &Context<'_>, node: NodeId, profile: &str) -> bool {
    let Some(model) = model_of(ctx, node) else {
        return true;
    };
    match (model.mig, model.profile(profile)) {
        (Some(geometry), Some(p)) => p.compute_slices < geometry.compute_slices,
        _ => true,
    }
}

/// Memory of one MIG profile on the node's model.
pub(crate) fn profile_memory_mib(ctx: &Context<'_>, node: NodeId, profile: &str) -> Option<u64> {
    model_of(ctx, node)?.profile(profile).map(|p| p.memory_mib)
}

/// Memory of one whole GPU of the node (its label, else the catalogue).
pub(crate) fn gpu_memory_mib(ctx: &Context<'_>, node: NodeId) -> Option<u64> {
    ctx.gpu(node)
        .and_then(|g| g.memory_mib)
        .or_else(|| model_of(ctx, node).map(|m| m.memory_mib))
}

/// Whether a workload's GPU under `mechanism` on `node` is shared or smaller than a whole GPU (the
/// "shared resource" of GT106).
pub(crate) fn is_shared_resource(
    ctx: &Context<'_>,
    workload: &gpu_trust_model::fleet::Workload,
    mechanism: gpu_trust_model::isolation::Mechanism,
    node: NodeId,
) -> bool {
    if mechanism.shares_device() {
        return true;
    }
    if mechanism.is_mig() {
        return match requested_profile(ctx, workload, node) {
            Some(p) => is_partial_profile(ctx, node, &p),
            None => true,
        };
    }
    false
}

/// For an input without GPU nodes (manifests alone): the mechanisms that a workload's request itself
/// names as shared, with the request in words. A `.shared` resource exists only where the device
/// plugin renames the replicas of time-slicing or MPS (`renameByDefault`); a KAI or Run:ai fraction,
/// HAMi's vGPU resources and a DRA claim with a sharing strategy name their mechanism. Empty for a
/// request that names no sharing (a plain `nvidia.com/gpu`, a MIG instance of its own).
pub(crate) fn requested_sharing(
    w: &gpu_trust_model::fleet::Workload,
) -> Vec<(gpu_trust_model::isolation::Mechanism, String)> {
    use gpu_trust_model::fleet::FractionScheduler;
    use gpu_trust_model::isolation::Mechanism;
    use gpu_trust_model::resource::DeviceResource;
    let gpu = &w.gpu;
    let mut out = Vec::new();
    for claim in &gpu.dra {
        let m = Mechanism::for_dra(claim.strategy);
        if m.shares_device() {
            out.push((m, "a DRA claim with a sharing strategy".to_string()));
        }
    }
    if let Some(f) = &gpu.fraction {
        let m = match f.scheduler {
            FractionScheduler::Kai if f.mps || w.uses_mps_pipe() => Mechanism::KaiMps,
            FractionScheduler::Kai => Mechanism::KaiFraction,
            FractionScheduler::RunAi => Mechanism::RunaiFraction,
        };
        out.push((m, "a GPU fraction".to_string()));
    }
    if let Some(h) = &gpu.hami {
        let m = match h.mode.as_deref() {
            Some("mps") => Mechanism::Mps,
            Some("mig") => Mechanism::MigInstance,
            _ => Mechanism::HamiVgpu,
        };
        if m.shares_device() {
            out.push((m, "HAMi vGPU resources".to_string()));
        }
    }
    for name in gpu.resources.keys() {
        match DeviceResource::parse(name) {
            Some(DeviceResource::Gpu { shared: true }) => {
                out.push((Mechanism::TimeSlicing, format!("`{name}`")));
                out.push((Mechanism::Mps, format!("`{name}`")));
            }
            Some(DeviceResource::Mig { shared: true, .. }) => {
                out.push((Mechanism::MigTimeSlicing, format!("`{name}`")));
            }
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether the input has no GPU node: the co-location rules have nothing to place workloads on, and
/// the workload-level rules judge requests by what they name alone.
pub(crate) fn no_gpu_nodes(ctx: &Context<'_>) -> bool {
    ctx.fleet.gpu_nodes().next().is_none()
}
