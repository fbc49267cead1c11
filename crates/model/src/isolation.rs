//! The isolation model: for two workloads on the same physical GPU under a given mechanism, what each
//! property of the device keeps separate, shares, or only limits in software; which co-located workloads
//! each incident reaches; and what every workload on a node or in a cluster shares above the device.
//!
//! Every fact is written once, here, with its source. `gpu-trust mechanisms` prints this table, the
//! audit's messages and blast radius read it, and the planner picks mechanisms by it.

use crate::fleet::{
    DraStrategy, FractionScheduler, GpuNode, MigStrategy, SharingStrategy, Workload,
};
use crate::resource::{self, DeviceResource};
use crate::vocab::{Incident, Layer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How two workloads get onto one physical GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// A whole GPU for one workload (`nvidia.com/gpu` without sharing).
    Exclusive,
    /// Device plugin time-slicing: several replicas advertised for one GPU.
    TimeSlicing,
    /// Device plugin MPS: clients of one MPS server per GPU.
    Mps,
    /// MPS v3 with memory partitioning: clients of one MPS server whose device memory the kernel
    /// limits per cgroup (driver r615+, cgroup v2). No Kubernetes installer sets it up yet: the
    /// audit never infers it, `gpu-trust mechanisms` lists it with its requirements.
    MpsMemoryPartitioned,
    /// Each workload on its own MIG GPU instance.
    MigInstance,
    /// Time-slicing inside one MIG instance (`nvidia.com/mig-*` with replicas).
    MigTimeSlicing,
    /// MPS inside one MIG instance (DRA `MigDeviceConfig` with MPS sharing).
    MigMps,
    /// HAMi vGPU (hami-core mode): a whole GPU split by an in-container interception library.
    HamiVgpu,
    /// KAI Scheduler `gpu-fraction` / `gpu-memory`.
    KaiFraction,
    /// KAI Scheduler fractions whose pods are clients of an MPS server on the node (KAI's
    /// `docs/gpu-sharing/mps`: the pod mounts the server's `CUDA_MPS_PIPE_DIRECTORY`).
    KaiMps,
    /// Run:ai `gpu-fraction` / `gpu-memory`.
    RunaiFraction,
}

impl Mechanism {
    pub const ALL: [Mechanism; 11] = [
        Mechanism::Exclusive,
        Mechanism::TimeSlicing,
        Mechanism::Mps,
        Mechanism::MpsMemoryPartitioned,
        Mechanism::MigInstance,
        Mechanism::MigTimeSlicing,
        Mechanism::MigMps,
        Mechanism::HamiVgpu,
        Mechanism::KaiFraction,
        Mechanism::KaiMps,
        Mechanism::RunaiFraction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Exclusive => "exclusive",
            Mechanism::TimeSlicing => "time-slicing",
            Mechanism::Mps => "mps",
            Mechanism::MpsMemoryPartitioned => "mps-memory-partitioned",
            Mechanism::MigInstance => "mig-instance",
            Mechanism::MigTimeSlicing => "mig-time-slicing",
            Mechanism::MigMps => "mig-mps",
            Mechanism::HamiVgpu => "hami-vgpu",
            Mechanism::KaiFraction => "kai-fraction",
            Mechanism::KaiMps => "kai-mps",
            Mechanism::RunaiFraction => "runai-fraction",
        }
    }

    pub fn parse(s: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// A short human name for messages.
    pub fn title(self) -> &'static str {
        match self {
            Mechanism::Exclusive => "exclusive GPU",
            Mechanism::TimeSlicing => "time-slicing",
            Mechanism::Mps => "MPS",
            Mechanism::MpsMemoryPartitioned => {
                "MPS with kernel-enforced memory partitions (MPS v3)"
            }
            Mechanism::MigInstance => "MIG instance",
            Mechanism::MigTimeSlicing => "time-slicing inside a MIG instance",
            Mechanism::MigMps => "MPS inside a MIG instance",
            Mechanism::HamiVgpu => "HAMi vGPU",
            Mechanism::KaiFraction => "KAI Scheduler fraction",
            Mechanism::KaiMps => "KAI Scheduler fraction on MPS",
            Mechanism::RunaiFraction => "Run:ai fraction",
        }
    }

    /// The mechanism a DRA claim gets from its sharing strategy (the claim itself adds no isolation).
    pub fn for_dra(strategy: DraStrategy) -> Mechanism {
        match strategy {
            DraStrategy::Exclusive => Mechanism::Exclusive,
            DraStrategy::TimeSlicing => Mechanism::TimeSlicing,
            DraStrategy::Mps => Mechanism::Mps,
            DraStrategy::Mig => Mechanism::MigInstance,
            DraStrategy::MigTimeSlicing => Mechanism::MigTimeSlicing,
            DraStrategy::MigMps => Mechanism::MigMps,
        }
    }

    /// The mechanism of one device the device plugin (or a platform's plugin) advertises: its sharing
    /// strategy, the replicas advertised per device, and whether the device is a MIG instance. Fewer
    /// than two replicas is no sharing, whatever the strategy says (the plugin rejects `replicas: 1`).
    pub fn from_sharing(strategy: SharingStrategy, replicas: u32, mig: bool) -> Mechanism {
        match (mig, strategy, replicas > 1) {
            (true, SharingStrategy::TimeSlicing, true) => Mechanism::MigTimeSlicing,
            (true, SharingStrategy::Mps, true) => Mechanism::MigMps,
            (true, _, _) => Mechanism::MigInstance,
            (false, SharingStrategy::TimeSlicing, true) => Mechanism::TimeSlicing,
            (false, SharingStrategy::Mps, true) => Mechanism::Mps,
            (false, _, _) => Mechanism::Exclusive,
        }
    }

    /// The device mechanism a fractional scheduler inherits: it only accounts, the silicon does the rest.
    pub fn inherits(self) -> Mechanism {
        match self {
            Mechanism::HamiVgpu | Mechanism::KaiFraction | Mechanism::RunaiFraction => {
                Mechanism::TimeSlicing
            }
            Mechanism::KaiMps => Mechanism::Mps,
            m => m,
        }
    }

    /// Whether two workloads under this mechanism draw on one memory pool, fault domain and compute:
    /// the "shares a memory pool" of rules GT101-GT105 and GT501.
    pub fn shares_device(self) -> bool {
        !matches!(self, Mechanism::Exclusive | Mechanism::MigInstance)
    }

    /// Whether the mechanism partitions the GPU into MIG instances.
    pub fn is_mig(self) -> bool {
        matches!(
            self,
            Mechanism::MigInstance | Mechanism::MigTimeSlicing | Mechanism::MigMps
        )
    }

    /// Whether a fractional scheduler's accounting sits on top of the device mechanism.
    pub fn is_fraction(self) -> bool {
        matches!(
            self,
            Mechanism::HamiVgpu
                | Mechanism::KaiFraction
                | Mechanism::KaiMps
                | Mechanism::RunaiFraction
        )
    }

    /// Whether the workloads are clients of one MPS server.
    pub fn is_mps(self) -> bool {
        matches!(
            self,
            Mechanism::Mps
                | Mechanism::MpsMemoryPartitioned
                | Mechanism::MigMps
                | Mechanism::KaiMps
        )
    }

    /// What the mechanism needs of the node beyond what Kubernetes shows, when it needs more.
    pub fn requires(self) -> Option<&'static str> {
        match self {
            Mechanism::MpsMemoryPartitioned => Some(
                "NVIDIA driver r615 or later (CUDA 13.4), cgroup v2 at /sys/fs/cgroup, a GPU not in MIG mode, \
                 root to set the limits (nvidia-smi memory-limits, or the MPS v3 configuration file); the \
                 kernel's dmem cgroup controller (kernel 6.14 or later) enforces them, older kernels the \
                 driver's own backend; managed and UVM memory are limited",
            ),
            _ => None,
        }
    }

    /// The fact for one property.
    pub fn property(self, property: Property) -> &'static PropertyFact {
        &facts(self)[property as usize]
    }

    /// Which co-located workloads an incident started by one of them reaches.
    pub fn reach(self, incident: Incident) -> Scope {
        match incident {
            // Every workload on the node shares kernel, driver, toolkit and runtime.
            Incident::HostEscape => Scope::Node,
            // Every tenant in the cluster shares the API server (virtual clusters aside).
            Incident::ControlPlane => Scope::Cluster,
            Incident::MemoryExhaustion | Incident::DeviceFault | Incident::ComputeContention => {
                let p = match incident {
                    Incident::MemoryExhaustion => Property::MemoryCapacity,
                    Incident::DeviceFault => Property::FaultDomain,
                    _ => Property::Compute,
                };
                if matches!(
                    self.property(p).enforcement,
                    Enforcement::Separate | Enforcement::LimitedByKernel
                ) {
                    Scope::Nothing
                } else if self.is_mig() {
                    Scope::Instance
                } else {
                    Scope::Gpu
                }
            }
        }
    }

    /// The mechanism under which `workload` gets its GPU on `node`, from what it requests and the node's
    /// configuration. `None` when the workload requests no GPU.
    pub fn of_workload(workload: &Workload, node: &GpuNode) -> Option<Mechanism> {
        let gpu = &workload.gpu;
        if let Some(claim) = gpu.dra.first() {
            return Some(Mechanism::for_dra(claim.strategy));
        }
        if let Some(f) = &gpu.fraction {
            return Some(match f.scheduler {
                FractionScheduler::Kai if f.mps || workload.uses_mps_pipe() => Mechanism::KaiMps,
                FractionScheduler::Kai => Mechanism::KaiFraction,
                FractionScheduler::RunAi => Mechanism::RunaiFraction,
            });
        }
        if let Some(h) = &gpu.hami {
            return Some(match h.mode.as_deref() {
                Some("mig") => Mechanism::MigInstance,
                Some("mps") => Mechanism::Mps,
                _ => Mechanism::HamiVgpu,
            });
        }
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
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How far an incident reaches among co-located workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// No one else.
    Nothing,
    /// Workloads in the same MIG instance.
    Instance,
    /// Workloads on the same physical GPU.
    Gpu,
    /// Workloads on the same node.
    Node,
    /// Every tenant of the cluster.
    Cluster,
}

/// A property of the device that two co-located workloads either keep apart or share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    MemoryCapacity,
    AddressSpace,
    FaultDomain,
    Compute,
    Bandwidth,
    SideChannels,
}

impl Property {
    pub const ALL: [Property; 6] = [
        Property::MemoryCapacity,
        Property::AddressSpace,
        Property::FaultDomain,
        Property::Compute,
        Property::Bandwidth,
        Property::SideChannels,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Property::MemoryCapacity => "memory-capacity",
            Property::AddressSpace => "address-space",
            Property::FaultDomain => "fault-domain",
            Property::Compute => "compute",
            Property::Bandwidth => "bandwidth",
            Property::SideChannels => "side-channels",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Property::MemoryCapacity => "memory capacity",
            Property::AddressSpace => "address space",
            Property::FaultDomain => "fault domain",
            Property::Compute => "compute",
            Property::Bandwidth => "memory bandwidth / L2",
            Property::SideChannels => "side channels",
        }
    }
}

/// What enforces a property between two co-located workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    /// The hardware (or a separate GPU) keeps them apart.
    Separate,
    /// The kernel limits each workload's share of one pool (a cgroup controller): an allocation past
    /// the limit fails, and the tenant's process cannot lift it.
    LimitedByKernel,
    /// A library or daemon limits it; a tenant may bypass it, or it is one pool with quotas.
    LimitedInSoftware,
    /// Nothing keeps them apart.
    Shared,
    /// Nothing enforces what the scheduler accounts (the fraction is bookkeeping only).
    NotEnforced,
}

impl Enforcement {
    pub fn as_str(self) -> &'static str {
        match self {
            Enforcement::Separate => "separate",
            Enforcement::LimitedByKernel => "limited-by-kernel",
            Enforcement::LimitedInSoftware => "limited-in-software",
            Enforcement::Shared => "shared",
            Enforcement::NotEnforced => "not-enforced",
        }
    }
}

/// One cell of the isolation table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertyFact {
    pub enforcement: Enforcement,
    /// What exactly is separate or shared, in a few words.
    pub note: &'static str,
    /// Where the fact comes from.
    pub source: &'static str,
}

const fn fact(enforcement: Enforcement, note: &'static str, source: &'static str) -> PropertyFact {
    PropertyFact {
        enforcement,
        note,
        source,
    }
}

use Enforcement::{
    LimitedByKernel as Kernel, LimitedInSoftware as Soft, NotEnforced, Separate, Shared,
};

// Sources, named once.
const SRC_TS_OPERATOR: &str =
    "NVIDIA GPU Operator docs, time-slicing: no memory or fault isolation between replicas";
const SRC_TS_PLUGIN: &str =
    "NVIDIA k8s-device-plugin README: time-sliced workloads run in one fault domain";
const SRC_MPS_DOC: &str = "NVIDIA MPS documentation, sections 2.3.3-2.3.7 (Volta+ semantics)";
const SRC_MPS_PLUGIN: &str =
    "NVIDIA k8s-device-plugin MPS daemon: pinned memory limit total/replicas, thread % 100/replicas";
const SRC_MPS_V3: &str =
    "NVIDIA MPS documentation releases 615 (2026-09-09) and 620, MPS v3 Memory Partitioning: hard limit dmem.max, soft limit dmem.min; NVML nvmlDeviceSetMemoryLimits_v1 (per cgroup, root, no MIG handles)";
const SRC_MIG_GUIDE: &str =
    "NVIDIA MIG User Guide: separate crossbar ports, L2 banks, memory controllers, DRAM paths, SMs";
const SRC_MIG_SIDE: &str =
    "Behind Bars (USENIX Security 2026); TunneLs for Bootlegging (ACM CCS 2023)";
const SRC_HAMI: &str =
    "HAMi-core: libvgpu.so preload; void with CUDA_DISABLE_CONTROL=true or direct driver calls";
const SRC_KAI: &str =
    "KAI Scheduler docs: does not enforce memory allocation limit or memory isolation";
const SRC_KAI_MPS: &str =
    "KAI Scheduler docs/gpu-sharing/mps: pods connect to an MPS server the node runs; KAI sets no MPS limits";
const SRC_RUNAI: &str =
    "Run:ai docs: fractions enforced inside the container by Run:ai's software, not by the GPU";
const SRC_CUDA_CTX: &str = "CUDA programming model: each context has its own virtual address space";

/// Rows in `Property::ALL` order.
fn facts(m: Mechanism) -> &'static [PropertyFact; 6] {
    static EXCLUSIVE: [PropertyFact; 6] = [
        fact(Separate, "a whole GPU", "one workload per GPU"),
        fact(Separate, "a whole GPU", "one workload per GPU"),
        fact(Separate, "its own GPU", "one workload per GPU"),
        fact(Separate, "all SMs", "one workload per GPU"),
        fact(Separate, "all memory paths", "one workload per GPU"),
        fact(Separate, "none known on the device", "one workload per GPU"),
    ];
    static TIME_SLICING: [PropertyFact; 6] = [
        fact(Shared, "one memory pool", SRC_TS_OPERATOR),
        fact(Separate, "separate CUDA contexts", SRC_CUDA_CTX),
        fact(
            Shared,
            "the whole GPU for device-level faults (Xid needing reset)",
            SRC_TS_PLUGIN,
        ),
        fact(
            Shared,
            "interleaved, no execution quantum guarantee",
            SRC_TS_OPERATOR,
        ),
        fact(Shared, "one memory system", SRC_TS_OPERATOR),
        fact(Shared, "same SMs, caches and memory", SRC_TS_OPERATOR),
    ];
    static MPS: [PropertyFact; 6] = [
        fact(
            Soft,
            "one pool; the MPS server pins a limit per client (total/replicas)",
            SRC_MPS_PLUGIN,
        ),
        fact(Separate, "isolated address spaces on Volta+", SRC_MPS_DOC),
        fact(
            Shared,
            "every client of the MPS server (the server enters FAULT)",
            SRC_MPS_DOC,
        ),
        fact(
            Soft,
            "concurrent; active thread % is a soft cap",
            SRC_MPS_DOC,
        ),
        fact(Shared, "contended memory bandwidth and L2", SRC_MPS_DOC),
        fact(Shared, "same SMs, caches and memory", SRC_MPS_DOC),
    ];
    static MPS_V3: [PropertyFact; 6] = [
        fact(
            Kernel,
            "one pool; the kernel limits each client's cgroup (allocations past the hard limit fail; past the soft limit, evictable under pressure)",
            SRC_MPS_V3,
        ),
        fact(Separate, "isolated address spaces on Volta+", SRC_MPS_DOC),
        fact(
            Shared,
            "every client of the MPS server (the server enters FAULT)",
            SRC_MPS_DOC,
        ),
        fact(
            Soft,
            "concurrent; active thread % and SM partitions are caps the server applies",
            SRC_MPS_DOC,
        ),
        fact(Shared, "contended memory bandwidth and L2", SRC_MPS_DOC),
        fact(Shared, "same SMs, caches and memory", SRC_MPS_DOC),
    ];
    static MIG: [PropertyFact; 6] = [
        fact(Separate, "own DRAM paths and capacity", SRC_MIG_GUIDE),
        fact(Separate, "own instance", SRC_MIG_GUIDE),
        fact(
            Separate,
            "the instance (GPU-wide errors needing a reset still hit all)",
            SRC_MIG_GUIDE,
        ),
        fact(Separate, "own SMs", SRC_MIG_GUIDE),
        fact(
            Separate,
            "own L2 banks and memory controllers",
            SRC_MIG_GUIDE,
        ),
        fact(
            Shared,
            "published cross-instance channels (memory-barrier timing, TLB)",
            SRC_MIG_SIDE,
        ),
    ];
    static MIG_TS: [PropertyFact; 6] = [
        fact(Shared, "one pool inside the instance", SRC_TS_OPERATOR),
        fact(Separate, "separate CUDA contexts", SRC_CUDA_CTX),
        fact(
            Shared,
            "the instance, for every workload in it",
            SRC_TS_PLUGIN,
        ),
        fact(Shared, "interleaved inside the instance", SRC_TS_OPERATOR),
        fact(Shared, "the instance's memory system", SRC_TS_OPERATOR),
        fact(
            Shared,
            "the instance's SMs and caches, plus cross-instance channels",
            SRC_MIG_SIDE,
        ),
    ];
    static MIG_MPS: [PropertyFact; 6] = [
        fact(
            Soft,
            "one pool inside the instance, pinned limit per client",
            SRC_MPS_DOC,
        ),
        fact(Separate, "isolated address spaces on Volta+", SRC_MPS_DOC),
        fact(
            Shared,
            "every client of the instance's MPS server",
            SRC_MPS_DOC,
        ),
        fact(
            Soft,
            "concurrent inside the instance; soft thread cap",
            SRC_MPS_DOC,
        ),
        fact(Shared, "the instance's memory system", SRC_MPS_DOC),
        fact(
            Shared,
            "the instance's SMs and caches, plus cross-instance channels",
            SRC_MIG_SIDE,
        ),
    ];
    static HAMI: [PropertyFact; 6] = [
        fact(
            Soft,
            "one pool; HAMi-core limits allocations in the container (bypassable)",
            SRC_HAMI,
        ),
        fact(Separate, "separate CUDA contexts", SRC_CUDA_CTX),
        fact(Shared, "the whole GPU (no fault isolation)", SRC_HAMI),
        fact(Soft, "core limit blocks new launches only", SRC_HAMI),
        fact(Shared, "one memory system", SRC_HAMI),
        fact(Shared, "same SMs, caches and memory", SRC_HAMI),
    ];
    static KAI: [PropertyFact; 6] = [
        fact(NotEnforced, "the fraction is accounting only", SRC_KAI),
        fact(Separate, "separate CUDA contexts", SRC_CUDA_CTX),
        fact(Shared, "the whole GPU", SRC_KAI),
        fact(NotEnforced, "not enforced", SRC_KAI),
        fact(Shared, "one memory system", SRC_KAI),
        fact(Shared, "same SMs, caches and memory", SRC_KAI),
    ];
    static KAI_MPS: [PropertyFact; 6] = [
        fact(
            NotEnforced,
            "the fraction is accounting only; KAI pins no memory limit at the MPS server",
            SRC_KAI_MPS,
        ),
        fact(Separate, "isolated address spaces on Volta+", SRC_MPS_DOC),
        fact(
            Shared,
            "every client of the MPS server (the server enters FAULT)",
            SRC_MPS_DOC,
        ),
        fact(
            NotEnforced,
            "concurrent; KAI sets no active thread percentage",
            SRC_KAI_MPS,
        ),
        fact(Shared, "contended memory bandwidth and L2", SRC_MPS_DOC),
        fact(Shared, "same SMs, caches and memory", SRC_MPS_DOC),
    ];
    static RUNAI: [PropertyFact; 6] = [
        fact(
            Soft,
            "one pool; limited in the container by Run:ai's software",
            SRC_RUNAI,
        ),
        fact(Separate, "separate CUDA contexts", SRC_CUDA_CTX),
        fact(Shared, "the whole GPU", SRC_RUNAI),
        fact(Soft, "time-shared by Run:ai's software", SRC_RUNAI),
        fact(Shared, "one memory system", SRC_RUNAI),
        fact(Shared, "same SMs, caches and memory", SRC_RUNAI),
    ];
    match m {
        Mechanism::Exclusive => &EXCLUSIVE,
        Mechanism::TimeSlicing => &TIME_SLICING,
        Mechanism::Mps => &MPS,
        Mechanism::MpsMemoryPartitioned => &MPS_V3,
        Mechanism::MigInstance => &MIG,
        Mechanism::MigTimeSlicing => &MIG_TS,
        Mechanism::MigMps => &MIG_MPS,
        Mechanism::HamiVgpu => &HAMI,
        Mechanism::KaiFraction => &KAI,
        Mechanism::KaiMps => &KAI_MPS,
        Mechanism::RunaiFraction => &RUNAI,
    }
}

/// What every workload shares above the device, per layer: the rows under the mechanisms table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerFact {
    pub layer: Layer,
    /// Who shares it.
    pub scope: Scope,
    pub shared: &'static str,
    pub separated_by: &'static str,
    pub source: &'static str,
}

/// The host, confidentiality, control-plane and contract layers.
pub const LAYERS: [LayerFact; 4] = [
    LayerFact {
        layer: Layer::Host,
        scope: Scope::Node,
        shared:
            "kernel, GPU driver, NVIDIA Container Toolkit, container runtime, MPS control daemon",
        separated_by: "different nodes (or VM passthrough)",
        source:
            "NVIDIA product-security bulletins 5582, 5616, 5659 (toolkit escapes reach the host)",
    },
    LayerFact {
        layer: Layer::Confidentiality,
        scope: Scope::Gpu,
        shared: "GPU memory state between tenants, unless CC mode and attestation verify it",
        separated_by: "CC mode on a whole GPU in passthrough, attested before launch",
        source:
            "NVIDIA confidential computing deployment guides (CC only for whole-GPU passthrough)",
    },
    LayerFact {
        layer: Layer::ControlPlane,
        scope: Scope::Cluster,
        shared:
            "API server, RBAC, CRDs, controllers (a virtual cluster still shares nodes and drivers)",
        separated_by: "separate clusters, or virtual clusters for the API server only",
        source: "Kubernetes multi-tenancy docs; vCluster docs (shared vs private nodes)",
    },
    LayerFact {
        layer: Layer::Contract,
        scope: Scope::Cluster,
        shared: "what the hosting terms promise: proportional compute is not isolation",
        separated_by: "a contract that names the mechanism and the interference accepted",
        source: "gpu-trust tenancy policy (`contract: isolation | proportional-compute`)",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_slicing_shares_memory_and_faults() {
        let m = Mechanism::TimeSlicing;
        assert_eq!(m.property(Property::MemoryCapacity).enforcement, Shared);
        assert_eq!(m.property(Property::FaultDomain).enforcement, Shared);
        assert_eq!(m.reach(Incident::MemoryExhaustion), Scope::Gpu);
        assert_eq!(m.reach(Incident::DeviceFault), Scope::Gpu);
    }

    #[test]
    fn mig_instances_separate_memory_and_faults_but_not_the_host() {
        let m = Mechanism::MigInstance;
        assert_eq!(m.property(Property::MemoryCapacity).enforcement, Separate);
        assert_eq!(m.property(Property::FaultDomain).enforcement, Separate);
        assert_eq!(m.property(Property::SideChannels).enforcement, Shared);
        assert_eq!(m.reach(Incident::MemoryExhaustion), Scope::Nothing);
        assert_eq!(m.reach(Incident::DeviceFault), Scope::Nothing);
        assert_eq!(m.reach(Incident::HostEscape), Scope::Node);
    }

    #[test]
    fn fractions_are_accounting() {
        assert_eq!(
            Mechanism::HamiVgpu
                .property(Property::MemoryCapacity)
                .enforcement,
            Soft
        );
        assert_eq!(
            Mechanism::KaiFraction
                .property(Property::MemoryCapacity)
                .enforcement,
            NotEnforced
        );
        assert_eq!(Mechanism::KaiFraction.inherits(), Mechanism::TimeSlicing);
        assert!(Mechanism::KaiFraction.shares_device());
    }

    #[test]
    fn mps_shares_one_fault_domain() {
        assert_eq!(Mechanism::Mps.reach(Incident::DeviceFault), Scope::Gpu);
        assert_eq!(
            Mechanism::MigMps.reach(Incident::DeviceFault),
            Scope::Instance
        );
        assert!(Mechanism::Mps.is_mps());
    }

    #[test]
    fn sharing_gives_the_mechanism_of_a_device() {
        use SharingStrategy as S;
        assert_eq!(
            Mechanism::from_sharing(S::TimeSlicing, 4, false),
            Mechanism::TimeSlicing
        );
        assert_eq!(
            Mechanism::from_sharing(S::TimeSlicing, 1, false),
            Mechanism::Exclusive
        );
        assert_eq!(Mechanism::from_sharing(S::Mps, 2, true), Mechanism::MigMps);
        assert_eq!(
            Mechanism::from_sharing(S::None, 8, true),
            Mechanism::MigInstance
        );
    }

    #[test]
    fn kai_on_mps_inherits_mps() {
        let m = Mechanism::KaiMps;
        assert!(m.is_fraction() && m.is_mps());
        assert_eq!(m.inherits(), Mechanism::Mps);
        assert_eq!(
            m.property(Property::MemoryCapacity).enforcement,
            NotEnforced
        );
        assert_eq!(m.reach(Incident::DeviceFault), Scope::Gpu);
        assert_eq!(
            Mechanism::for_dra(DraStrategy::MigTimeSlicing),
            Mechanism::MigTimeSlicing
        );
    }

    #[test]
    fn names_round_trip() {
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::parse(m.as_str()), Some(m));
        }
    }
}
