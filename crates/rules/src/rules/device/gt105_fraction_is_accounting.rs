use super::super::common::{self, PairRule, Tally, Wording};
use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Mechanism, Property};
use gpu_trust_model::{Layer, Severity, Trust};

declare_rule! {
    /// ## What it detects
    ///
    /// Two tenants whose trust is below `full` share a GPU through a fractional scheduler: HAMi vGPU
    /// (`nvidia.com/gpumem`, `nvidia.com/gpucores`), Volcano's vGPU, which runs HAMi-core
    /// (`volcano.sh/vgpu-memory`, `volcano.sh/vgpu-cores`), or KAI Scheduler / Run:ai fractions
    /// (`gpu-fraction`, `gpu-memory` annotations).
    ///
    /// ## Why it matters
    ///
    /// A fraction describes how a GPU is sold and scheduled. Underneath, the workloads share one GPU the
    /// way time-slicing does: one memory pool, one fault domain, interleaved compute. KAI does not enforce
    /// the memory it accounts at all (its documentation says so); HAMi limits allocations with a library
    /// preloaded into the container, which a container can switch off with `CUDA_DISABLE_CONTROL=true` or
    /// bypass by calling the driver directly. HAMi-core keeps a container's limits in a region its
    /// processes share, set by the first process that opens it: a process started without the limit
    /// variables (an SSH or `exec` session, a child that drops its environment) that gets there first
    /// leaves the whole container without a memory limit (HAMi #2125).
    ///
    /// ## Example
    ///
    /// ```yaml
    /// metadata:
    ///   annotations: {gpu-fraction: "0.5"}
    /// spec:
    ///   schedulerName: kai-scheduler
    /// # pods of acme and globex with gpu-fraction 0.5 on one single-GPU node
    /// ```
    ///
    /// ## Remediation
    ///
    /// Treat a fraction as accounting. Tenants of trust `none` need separate GPUs; tenants of trust
    /// `limited` need at least MIG instances (HAMi can allocate MIG instances with
    /// `nvidia.com/vgpu-mode: mig`; with KAI, request `nvidia.com/mig-<profile>` resources instead of a
    /// fraction).
    ///
    /// ## References
    ///
    /// - KAI Scheduler docs: GPU sharing "does not enforce memory allocation limit or performs memory
    ///   isolation".
    /// - HAMi-core: limits through libvgpu.so in /etc/ld.so.preload; not enforced with
    ///   `CUDA_DISABLE_CONTROL=true`, in nested containers, or for direct driver calls.
    /// - Project-HAMi/HAMi #2125 (open): the shared region's limits are the first writer's; one
    ///   started without `CUDA_DEVICE_MEMORY_LIMIT` leaves the container unlimited (reproduced on
    ///   HAMi-core 5496322, 2026-08-15).
    /// - Project-HAMi/volcano-vgpu-device-plugin README: Volcano's vGPU resources, enforced by
    ///   HAMi-core.
    /// - gpu-trust isolation model (`gpu-trust mechanisms`), rows hami-vgpu, volcano-vgpu,
    ///   kai-fraction, kai-mps and runai-fraction.
    pub struct FractionIsAccounting {
        code: "GT105",
        name: "fraction-is-accounting",
        layer: Layer::Device,
        severity: SeverityRule::ByTrust { none: Severity::Critical, limited: Severity::High },
        summary: "two tenants with trust below full share a GPU through a fractional scheduler, which only accounts for capacity",
    }
}

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`).
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    common::declared(ctx, sink, PairRule::BY_LEVEL, |level, t| {
        let m = level.reach().0;
        Wording {
            message: message(ctx, m, t),
            remediation: remediation(ctx, m, t),
        }
    });
}

fn message(ctx: &Context<'_>, m: Mechanism, tally: &Tally) -> String {
    let inherited = m.inherits();
    let what = format!("GPUs through {}", m.title());
    let mut out = format!(
        "{}. The fraction inherits {}: {}",
        wording::tally_opening(ctx, tally, &what, &what),
        inherited.title(),
        text::enforcement(
            m,
            &[
                Property::MemoryCapacity,
                Property::FaultDomain,
                Property::Compute
            ]
        )
    );
    let disabled: Vec<usize> = tally
        .workloads
        .iter()
        .copied()
        .filter(|w| {
            ctx.workload(*w)
                .and_then(|w| w.gpu.hami.as_ref())
                .is_some_and(|h| h.control_disabled)
        })
        .collect();
    if !disabled.is_empty() {
        out.push_str(&format!(
            "; {} sets CUDA_DISABLE_CONTROL=true, so HAMi-core limits nothing for it",
            text::workloads(ctx, disabled)
        ));
    }
    out
}

fn remediation(ctx: &Context<'_>, m: Mechanism, tally: &Tally) -> String {
    let names = wording::names(ctx, tally);
    if tally.of_trust(Trust::None) > 0 {
        return format!(
            "A fraction is not a boundary: give {names} different GPUs, on separate node pools ({}){}",
            wording::pool_advice(ctx, tally),
            wording::limited_too(ctx, tally)
        );
    }
    // A vGPU whose mode annotation can ask for a MIG instance (the mechanism's row says how).
    let mig_mode = m.row().request.vgpu.and_then(|v| {
        v.modes
            .iter()
            .find(|(_, to)| *to == Mechanism::MigInstance)
            .map(|(value, _)| (v.mode, *value))
    });
    match mig_mode {
        Some((key, value)) => format!(
            "Give {names} separate MIG instances: annotate their pods `{key}: {value}` on MIG-capable GPUs, or {}",
            super::mig_advice(ctx, &tally.nodes)
        ),
        None => format!(
            "Give {names} separate MIG instances instead of fractions: {}",
            super::mig_advice(ctx, &tally.nodes)
        ),
    }
}
