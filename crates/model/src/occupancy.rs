//! The per-GPU occupancy view of one GPU node: its devices (each physical GPU whole, or the MIG
//! instances it is cut into), the seat a device slot ingest resolved names, and how the device plugin
//! hands each device out. `gpu-trust inventory` puts pods on these seats and the audit's GPU layout
//! (which the HTML report draws) puts tenants on them; neither enumerates a node's devices itself.

use crate::catalogue;
use crate::fleet::{DeviceSlot, GpuNode, MigStrategy, PhysicalGpu};
use crate::isolation::Mechanism;
use crate::resource;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// A device a workload can hold: a whole GPU, or one MIG instance of it; by position in
/// [`Devices::gpus`] (and in that GPU's `mig` list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Seat {
    Gpu(usize),
    Instance(usize, usize),
}

impl Seat {
    /// The position of the seat's GPU.
    pub fn gpu(self) -> usize {
        match self {
            Seat::Gpu(g) | Seat::Instance(g, _) => g,
        }
    }
}

/// Whether a GPU is in MIG mode (or the input gives it instances).
pub fn is_mig(gpu: &PhysicalGpu) -> bool {
    gpu.mig_enabled || !gpu.mig.is_empty()
}

/// The devices of one GPU node.
#[derive(Debug, Clone)]
pub struct Devices<'a> {
    pub node: &'a GpuNode,
    /// The node's GPUs.
    pub gpus: Cow<'a, [PhysicalGpu]>,
}

impl<'a> Devices<'a> {
    /// The GPUs the input lists, in its order.
    pub fn listed(node: &'a GpuNode) -> Devices<'a> {
        Devices {
            node,
            gpus: Cow::Borrowed(&node.gpus),
        }
    }

    /// The GPUs by index: those the input lists, plus one plain GPU for each index up to the node's
    /// count that it does not list.
    pub fn counted(node: &'a GpuNode) -> Devices<'a> {
        let mut gpus = node.gpus.clone();
        let listed: BTreeSet<u32> = gpus.iter().map(|g| g.index).collect();
        let mut next = 0u32;
        while gpus.len() < node.count as usize {
            if !listed.contains(&next) {
                gpus.push(PhysicalGpu {
                    index: next,
                    uuid: None,
                    mig_enabled: false,
                    mig: Vec::new(),
                });
            }
            match next.checked_add(1) {
                Some(n) => next = n,
                None => break,
            }
        }
        gpus.sort_by_key(|g| g.index);
        Devices {
            node,
            gpus: Cow::Owned(gpus),
        }
    }

    /// The seats of the `g`th GPU: its MIG instances (none for a MIG GPU without instances), else the
    /// whole GPU.
    pub fn seats_of(&self, g: usize) -> Vec<Seat> {
        match self.gpus.get(g) {
            Some(gpu) if is_mig(gpu) => (0..gpu.mig.len()).map(|i| Seat::Instance(g, i)).collect(),
            Some(_) => vec![Seat::Gpu(g)],
            None => Vec::new(),
        }
    }

    /// Every seat of the node, GPU by GPU.
    pub fn seats(&self) -> Vec<Seat> {
        (0..self.gpus.len())
            .flat_map(|g| self.seats_of(g))
            .collect()
    }

    /// The seat of a device slot ingest resolved (GPU index, instance of a MIG GPU); `None` when the
    /// node has no such device.
    pub fn seat_of(&self, slot: &DeviceSlot) -> Option<Seat> {
        let g = self.gpus.iter().position(|p| p.index == slot.gpu)?;
        let gpu = &self.gpus[g];
        match slot.instance {
            None => (!is_mig(gpu)).then_some(Seat::Gpu(g)),
            Some(i) => {
                let i = usize::try_from(i).ok()?;
                (is_mig(gpu) && i < gpu.mig.len()).then_some(Seat::Instance(g, i))
            }
        }
    }

    /// The extended resource the device plugin advertises the seat as: `nvidia.com/gpu` for a whole
    /// GPU and for the instances of the single MIG strategy, `nvidia.com/mig-<profile>` under the
    /// mixed one.
    pub fn resource(&self, seat: Seat) -> String {
        match seat {
            Seat::Instance(g, i) if self.node.mig_strategy != MigStrategy::Single => {
                self.gpus.get(g).and_then(|gpu| gpu.mig.get(i)).map_or_else(
                    || resource::GPU.to_string(),
                    |slot| catalogue::mig_resource(&slot.profile),
                )
            }
            _ => resource::GPU.to_string(),
        }
    }

    /// Replicas the device plugin advertises per device of the seat (1 when not shared).
    pub fn replicas(&self, seat: Seat) -> u32 {
        self.node.sharing.replicas_for(&self.resource(seat))
    }

    /// The mechanism the node's sharing configuration puts on the seat (HAMi's vGPU on a whole GPU of
    /// a HAMi node).
    pub fn mechanism(&self, seat: Seat) -> Mechanism {
        let replicas = self.replicas(seat);
        match seat {
            Seat::Instance(..) => {
                Mechanism::from_sharing(self.node.sharing.strategy, replicas, true)
            }
            Seat::Gpu(_) if self.node.hami => Mechanism::HamiVgpu,
            Seat::Gpu(_) => Mechanism::from_sharing(self.node.sharing.strategy, replicas, false),
        }
    }
}
