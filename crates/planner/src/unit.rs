//! The solver's working state, shared by the solver ([`crate::solve`]), the search across cliques
//! (`improve`) and the assembly of the plan (`assemble`): replicas, how a device is handed out, what
//! one replica needs, the GPU-sized units that node packing places, and what planning one pool gives.

use crate::plan::DeviceSharing;
use std::collections::{BTreeMap, BTreeSet};

/// A replica: workload index and replica number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Rep {
    pub w: usize,
    pub i: u32,
}

/// How a device (whole GPU or MIG instance) is handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Share {
    Exclusive,
    TimeSliced { group: usize, replicas: u32 },
    Mps { group: usize, replicas: u32 },
}

impl Share {
    pub(crate) fn device_sharing(self) -> DeviceSharing {
        match self {
            Share::Exclusive => DeviceSharing::Exclusive,
            Share::TimeSliced { .. } => DeviceSharing::TimeSlicing,
            Share::Mps { .. } => DeviceSharing::Mps,
        }
    }

    pub(crate) fn replicas(self) -> u32 {
        match self {
            Share::Exclusive => 1,
            Share::TimeSliced { replicas, .. } | Share::Mps { replicas, .. } => replicas,
        }
    }
}

/// A device plugin resource of a node: whole GPUs, or one MIG profile (index into the spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Res {
    Gpu,
    Mig(usize),
}

/// The sharing a workload asks for, before replicas are bundled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mode {
    Exclusive,
    TimeSliced(u32),
    Mps(u32),
}

/// What one replica of a workload needs in a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// Whole dedicated GPUs on one node.
    Gang(u32),
    Whole(Mode),
    Instance(usize, Mode),
}

/// Why a replica is not placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Miss {
    /// It cannot fit this pool's GPUs at all.
    Fit(String),
    /// The pool ran out of nodes.
    Capacity(String),
}

/// A MIG instance to place: profile (index into the spec), how it is handed out, and its replicas.
pub(crate) type Payload = (usize, Share, Vec<Rep>);

/// One GPU-sized (or gang-sized) unit for node packing.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub(crate) gpus: u32,
    pub(crate) clique: usize,
    pub(crate) tenants: BTreeSet<usize>,
    pub(crate) keys: BTreeMap<Res, Share>,
    pub(crate) cc: bool,
    pub(crate) kind: UnitKind,
}

#[derive(Debug, Clone)]
pub(crate) enum UnitKind {
    /// Whole GPUs (a gang, an exclusive GPU, or a shared GPU's replicas).
    Whole { share: Share, members: Vec<Rep> },
    /// One MIG GPU: instance counts and the instances' payloads.
    Mig {
        counts: Vec<u32>,
        instances: Vec<Payload>,
    },
}

impl Unit {
    pub(crate) fn members(&self) -> Vec<Rep> {
        match &self.kind {
            UnitKind::Whole { members, .. } => members.clone(),
            UnitKind::Mig { instances, .. } => {
                instances.iter().flat_map(|(_, _, m)| m.clone()).collect()
            }
        }
    }

    pub(crate) fn has_mig(&self) -> bool {
        matches!(self.kind, UnitKind::Mig { .. })
    }

    pub(crate) fn has_mps(&self) -> bool {
        self.keys.values().any(|s| matches!(s, Share::Mps { .. }))
    }
}

/// A node being filled.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeFill {
    pub(crate) units: Vec<usize>,
    pub(crate) used: u32,
    pub(crate) tenants: BTreeSet<usize>,
    pub(crate) keys: BTreeMap<Res, Share>,
    /// Tenants using each MIG profile on the node.
    pub(crate) mig_tenants: BTreeMap<usize, BTreeSet<usize>>,
    pub(crate) cliques: BTreeSet<usize>,
    pub(crate) has_mig: bool,
    pub(crate) has_mps: bool,
    pub(crate) cc: Option<bool>,
}

/// What planning one pool gives.
pub(crate) struct PoolResult {
    pub(crate) units: Vec<Unit>,
    pub(crate) nodes: Vec<NodeFill>,
    pub(crate) misses: Vec<(Rep, Miss)>,
    pub(crate) needs: BTreeMap<usize, Need>,
}

impl PoolResult {
    /// GPUs of the units placed on nodes.
    pub(crate) fn gpus(&self) -> u32 {
        self.nodes
            .iter()
            .flat_map(|n| n.units.iter())
            .map(|&u| self.units[u].gpus)
            .sum()
    }
}
