//! The property facts of the isolation table: for two workloads under one mechanism, what enforces
//! each property of the device between them, with its source. A mechanism that runs inside another
//! is composed from it (MPS inside a MIG instance is MPS, scoped to the instance; a KAI fraction on
//! MPS is MPS with KAI's accounting over memory and compute), not copied.

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertyFact {
    pub enforcement: Enforcement,
    /// What exactly is separate or shared, in a few words.
    pub note: &'static str,
    /// Where the fact comes from.
    pub source: &'static str,
}

/// The six facts of one mechanism, in `Property::ALL` order.
pub type Facts = [PropertyFact; 6];

pub(crate) const fn fact(
    enforcement: Enforcement,
    note: &'static str,
    source: &'static str,
) -> PropertyFact {
    PropertyFact {
        enforcement,
        note,
        source,
    }
}

/// `base` with some of its facts replaced: a mechanism layered over another, which changes only the
/// properties it names.
pub(crate) const fn overlay(base: Facts, over: [Option<PropertyFact>; 6]) -> Facts {
    let mut out = base;
    let mut i = 0;
    while i < 6 {
        if let Some(f) = over[i] {
            out[i] = f;
        }
        i += 1;
    }
    out
}

/// `inner` run inside one MIG instance: every property is enforced as `inner` enforces it, among the
/// workloads of the instance; `within` says what that is inside the instance (a note and source per
/// property, `None` where `inner`'s own words hold).
pub(crate) const fn inside_instance(
    inner: Facts,
    within: [Option<(&'static str, &'static str)>; 6],
) -> Facts {
    let mut out = inner;
    let mut i = 0;
    while i < 6 {
        if let Some((note, source)) = within[i] {
            out[i] = fact(inner[i].enforcement, note, source);
        }
        i += 1;
    }
    out
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
const SRC_HAMI_FIRST_WRITER: &str = "HAMi-core: libvgpu.so preload; void with CUDA_DISABLE_CONTROL=true or direct driver calls; Project-HAMi/HAMi #2125 (open; reproduced 2026-08-15 on HAMi-core 5496322): the container's shared region takes the limits of the first process that initialises it, so one started without the limit variables (an SSH or exec session) leaves the container without a memory limit";
const SRC_MPS_FAULT: &str = "NVIDIA MPS documentation, sections 2.3.3-2.3.7 (Volta+ semantics); kubernetes-sigs/dra-driver-nvidia-gpu v0.5.0, MPS multi-user mode (issue #1158, pull request #1153: the control daemon runs with -M, so containers of different UIDs share one claim's MPS server)";
const SRC_KAI: &str =
    "KAI Scheduler docs: does not enforce memory allocation limit or memory isolation";
const SRC_KAI_MPS: &str =
    "KAI Scheduler docs/gpu-sharing/mps: pods connect to an MPS server the node runs; KAI sets no MPS limits";
const SRC_RUNAI: &str =
    "Run:ai docs: fractions enforced inside the container by Run:ai's software, not by the GPU";
const SRC_CUDA_CTX: &str = "CUDA programming model: each context has its own virtual address space";

pub(crate) const EXCLUSIVE: Facts = [
    fact(Separate, "a whole GPU", "one workload per GPU"),
    fact(Separate, "a whole GPU", "one workload per GPU"),
    fact(Separate, "its own GPU", "one workload per GPU"),
    fact(Separate, "all SMs", "one workload per GPU"),
    fact(Separate, "all memory paths", "one workload per GPU"),
    fact(Separate, "none known on the device", "one workload per GPU"),
];

pub(crate) const TIME_SLICING: Facts = [
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

pub(crate) const MPS: Facts = [
    fact(
        Soft,
        "one pool; the MPS server pins a limit per client (total/replicas)",
        SRC_MPS_PLUGIN,
    ),
    fact(Separate, "isolated address spaces on Volta+", SRC_MPS_DOC),
    fact(
        Shared,
        "every client of the MPS server (the server enters FAULT)",
        SRC_MPS_FAULT,
    ),
    fact(
        Soft,
        "concurrent; active thread % is a soft cap",
        SRC_MPS_DOC,
    ),
    fact(Shared, "contended memory bandwidth and L2", SRC_MPS_DOC),
    fact(Shared, "same SMs, caches and memory", SRC_MPS_DOC),
];

/// MPS v3: MPS whose memory the kernel limits per client cgroup, and whose SM partitions the server
/// applies.
pub(crate) const MPS_V3: Facts = overlay(
    MPS,
    [
        Some(fact(
            Kernel,
            "one pool; the kernel limits each client's cgroup (allocations past the hard limit fail; past the soft limit, evictable under pressure)",
            SRC_MPS_V3,
        )),
        None,
        None,
        Some(fact(
            Soft,
            "concurrent; active thread % and SM partitions are caps the server applies",
            SRC_MPS_DOC,
        )),
        None,
        None,
    ],
);

pub(crate) const MIG: Facts = [
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

/// What every mechanism inside one MIG instance shares besides: the instance's SMs and caches, and
/// the channels between instances.
const INSTANCE_SIDE_CHANNELS: Option<(&str, &str)> = Some((
    "the instance's SMs and caches, plus cross-instance channels",
    SRC_MIG_SIDE,
));

pub(crate) const MIG_TIME_SLICING: Facts = inside_instance(
    TIME_SLICING,
    [
        Some(("one pool inside the instance", SRC_TS_OPERATOR)),
        None,
        Some(("the instance, for every workload in it", SRC_TS_PLUGIN)),
        Some(("interleaved inside the instance", SRC_TS_OPERATOR)),
        Some(("the instance's memory system", SRC_TS_OPERATOR)),
        INSTANCE_SIDE_CHANNELS,
    ],
);

pub(crate) const MIG_MPS: Facts = inside_instance(
    MPS,
    [
        Some((
            "one pool inside the instance, pinned limit per client",
            SRC_MPS_DOC,
        )),
        None,
        Some(("every client of the instance's MPS server", SRC_MPS_DOC)),
        Some((
            "concurrent inside the instance; soft thread cap",
            SRC_MPS_DOC,
        )),
        Some(("the instance's memory system", SRC_MPS_DOC)),
        INSTANCE_SIDE_CHANNELS,
    ],
);

/// HAMi-core (`libvgpu.so`), whichever scheduler hands out its vGPUs.
pub(crate) const HAMI_CORE: Facts = [
    fact(
        Soft,
        "one pool; HAMi-core limits allocations in the container (bypassable, and lost when a process without the limit variables starts first)",
        SRC_HAMI_FIRST_WRITER,
    ),
    fact(Separate, "separate CUDA contexts", SRC_CUDA_CTX),
    fact(Shared, "the whole GPU (no fault isolation)", SRC_HAMI),
    fact(Soft, "core limit blocks new launches only", SRC_HAMI),
    fact(Shared, "one memory system", SRC_HAMI),
    fact(Shared, "same SMs, caches and memory", SRC_HAMI),
];

pub(crate) const KAI: Facts = [
    fact(NotEnforced, "the fraction is accounting only", SRC_KAI),
    fact(Separate, "separate CUDA contexts", SRC_CUDA_CTX),
    fact(Shared, "the whole GPU", SRC_KAI),
    fact(NotEnforced, "not enforced", SRC_KAI),
    fact(Shared, "one memory system", SRC_KAI),
    fact(Shared, "same SMs, caches and memory", SRC_KAI),
];

/// KAI's fractions on an MPS server: MPS, with KAI's accounting (no limit at the server) over memory
/// and compute.
pub(crate) const KAI_MPS: Facts = overlay(
    MPS,
    [
        Some(fact(
            NotEnforced,
            "the fraction is accounting only; KAI pins no memory limit at the MPS server",
            SRC_KAI_MPS,
        )),
        None,
        None,
        Some(fact(
            NotEnforced,
            "concurrent; KAI sets no active thread percentage",
            SRC_KAI_MPS,
        )),
        None,
        None,
    ],
);

pub(crate) const RUNAI: Facts = [
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
