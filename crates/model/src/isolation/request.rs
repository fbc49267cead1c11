//! How a workload's request names a mechanism, read against the rows of the table: the one
//! recognition of a request ([`Mechanism::named_by`]), the mechanism a workload gets on a node, and
//! the sharing a request names by itself.

use super::Mechanism;
use crate::fleet::{GpuNode, HamiRequest, MigStrategy, Workload};
use crate::resource::{self, DeviceResource};

impl Mechanism {
    /// The vGPU mechanism whose names a request used (`None`: HAMi's own).
    fn vgpu_of(h: &HamiRequest) -> Mechanism {
        h.via.unwrap_or(Mechanism::HamiVgpu)
    }

    /// Every mechanism a workload's request itself names, in the order that decides its own
    /// mechanism (DRA claims, then a fraction, then a vGPU), each with the request in words: the one
    /// recognition of a request, which [`Mechanism::of_workload`] and
    /// [`Mechanism::requested_sharing`] read.
    pub fn named_by(w: &Workload) -> Vec<(Mechanism, &'static str)> {
        let gpu = &w.gpu;
        let mut out: Vec<(Mechanism, &'static str)> = gpu
            .dra
            .iter()
            .map(|claim| {
                (
                    Mechanism::for_dra(claim.strategy),
                    "a DRA claim with a sharing strategy",
                )
            })
            .collect();
        if let Some(f) = &gpu.fraction {
            // Its pods as clients of an MPS server, when its row says what they then get.
            let on_mps = f.scheduler.row().request.fraction.and_then(|n| n.on_mps);
            let m = match on_mps {
                Some(mps) if f.mps || w.uses_mps_pipe() => mps,
                _ => f.scheduler,
            };
            out.push((m, m.row().request.words));
        }
        if let Some(h) = &gpu.hami {
            let row = Mechanism::vgpu_of(h);
            let mode = h.mode.as_deref();
            let m = row
                .row()
                .request
                .vgpu
                .and_then(|v| v.modes.iter().find(|(name, _)| Some(*name) == mode))
                .map_or(row, |(_, m)| *m);
            out.push((m, row.row().request.words));
        }
        out
    }

    /// The mechanism under which `workload` gets its GPU on `node`, from what it requests and the node's
    /// configuration. `None` when the workload requests no GPU.
    pub fn of_workload(workload: &Workload, node: &GpuNode) -> Option<Mechanism> {
        // A GPU asked for in a way no row maps: its mechanism is unknown, never a guess.
        if !workload.gpu.unmapped.is_empty() {
            return None;
        }
        if let Some((m, _)) = Mechanism::named_by(workload).first() {
            return Some(*m);
        }
        let gpu = &workload.gpu;
        let (name, _) = gpu
            .resources
            .iter()
            .find(|(k, _)| resource::is_gpu_resource(k))?;
        let parsed = DeviceResource::parse(name);
        // A GPU passed through to a VM is bound to VFIO, whole: never a MIG instance.
        let on_mig = parsed.is_some_and(DeviceResource::is_mig)
            || (parsed != Some(DeviceResource::Passthrough)
                && node.mig_strategy == MigStrategy::Single
                && node.mig_enabled());
        Some(Mechanism::from_sharing(
            node.sharing.strategy,
            node.sharing.replicas_for(name),
            on_mig,
        ))
    }

    /// Whether some row of the table, or the device plugin, names an extended resource: a device
    /// plugin device, or a resource of a vGPU or fraction row (its count, memory and cores).
    pub fn maps_resource(name: &str) -> bool {
        resource::is_gpu_resource(name)
            || Mechanism::ALL.iter().any(|m| {
                let r = m.row().request;
                r.resources.contains(&name)
                    || r.vgpu.is_some_and(|v| {
                        [v.count, v.memory, v.cores].contains(&name)
                            || v.memory_percentage == Some(name)
                    })
            })
    }

    /// For an input without GPU nodes (manifests alone): the mechanisms that a workload's request itself
    /// names as shared, with the request in words. A `.shared` resource exists only where the device
    /// plugin renames the replicas of time-slicing or MPS (`renameByDefault`); a KAI or Run:ai fraction,
    /// a vGPU's resources and a DRA claim with a sharing strategy name their mechanism. Empty for a
    /// request that names no sharing (a plain `nvidia.com/gpu`, a MIG instance of its own).
    pub fn requested_sharing(w: &Workload) -> Vec<(Mechanism, String)> {
        let mut out: Vec<(Mechanism, String)> = Mechanism::named_by(w)
            .into_iter()
            .filter(|(m, _)| m.shares_device())
            .map(|(m, words)| (m, words.to_string()))
            .collect();
        for name in w.gpu.resources.keys() {
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
}
