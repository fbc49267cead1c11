//! The isolation model: for two workloads on the same physical GPU under a given mechanism, what each
//! property of the device keeps separate, shares, or only limits in software; which co-located workloads
//! each incident reaches; and what every workload on a node or in a cluster shares above the device.
//!
//! Every fact is written once, here, with its source. `gpu-trust mechanisms` prints this table, the
//! audit's messages and blast radius read it, and the planner picks mechanisms by it.

pub mod admission;
mod facts;
mod request;

pub use admission::{Admission, Level, Plan, Seat, SeatRow, Traits, ADMISSION, SEATS};
pub use facts::{Enforcement, Facts, Property, PropertyFact};

use crate::fleet::{DraStrategy, SharingStrategy};
use crate::vocab::{Incident, Layer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Defines [`Mechanism`] and [`Mechanism::ALL`] from one list of variants and their rows, so that no
/// variant can lack a row or be left out of `ALL`.
macro_rules! mechanisms {
    ($( $(#[doc = $doc:literal])* $variant:ident => $row:ident, )+) => {
        /// How two workloads get onto one physical GPU.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum Mechanism {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl Mechanism {
            /// Every mechanism, in the table's order.
            pub const ALL: [Mechanism; [$(Mechanism::$variant),+].len()] = [$(Mechanism::$variant),+];

            /// The mechanism's row of the table: everything the model knows of it.
            pub fn row(self) -> &'static Row {
                match self {
                    $( Mechanism::$variant => &rows::$row, )+
                }
            }
        }
    };
}

mechanisms! {
    /// A whole GPU for one workload (`nvidia.com/gpu` without sharing).
    Exclusive => EXCLUSIVE,
    /// Device plugin time-slicing: several replicas advertised for one GPU.
    TimeSlicing => TIME_SLICING,
    /// Device plugin MPS: clients of one MPS server per GPU.
    Mps => MPS,
    /// MPS v3 with memory partitioning: clients of one MPS server whose device memory the kernel
    /// limits per cgroup (driver r615+, cgroup v2). No Kubernetes installer sets it up yet: the
    /// audit never infers it, `gpu-trust mechanisms` lists it with its requirements.
    MpsMemoryPartitioned => MPS_MEMORY_PARTITIONED,
    /// Each workload on its own MIG GPU instance.
    MigInstance => MIG_INSTANCE,
    /// Time-slicing inside one MIG instance (`nvidia.com/mig-*` with replicas).
    MigTimeSlicing => MIG_TIME_SLICING,
    /// MPS inside one MIG instance (DRA `MigDeviceConfig` with MPS sharing).
    MigMps => MIG_MPS,
    /// HAMi vGPU (hami-core mode): a whole GPU split by an in-container interception library.
    HamiVgpu => HAMI_VGPU,
    /// Volcano's vGPU (the volcano-vgpu-device-plugin, hami-core mode): HAMi-core's vGPUs handed out
    /// by the Volcano scheduler under resource names of its own.
    VolcanoVgpu => VOLCANO_VGPU,
    /// KAI Scheduler `gpu-fraction` / `gpu-memory`.
    KaiFraction => KAI_FRACTION,
    /// KAI Scheduler fractions whose pods are clients of an MPS server on the node (KAI's
    /// `docs/gpu-sharing/mps`: the pod mounts the server's `CUDA_MPS_PIPE_DIRECTORY`).
    KaiMps => KAI_MPS,
    /// Run:ai `gpu-fraction` / `gpu-memory`.
    RunaiFraction => RUNAI_FRACTION,
}

/// Everything the model knows of one mechanism: one row of the isolation table.
#[derive(Debug)]
pub struct Row {
    /// Its spelling in the policy, the JSON output and `gpu-trust mechanisms`.
    pub name: &'static str,
    /// A short human name for messages.
    pub title: &'static str,
    /// What enforces each property between two workloads under it (`Property::ALL` order).
    pub facts: Facts,
    /// For a fractional scheduler, the device mechanism it inherits: it only accounts, the silicon
    /// does the rest.
    pub inherits: Option<Mechanism>,
    /// What two workloads under it hold in common on one GPU.
    pub sharing: Sharing,
    /// Whether it partitions the GPU into MIG instances.
    pub mig: bool,
    /// Whether its workloads are clients of one MPS server.
    pub mps: bool,
    /// What it needs of the node beyond what Kubernetes shows, when it needs more.
    pub requires: Option<&'static str>,
    /// How much device memory one workload's slice holds.
    pub slice: Slice,
    /// How a request names it.
    pub request: Request,
}

/// What two workloads under one mechanism hold in common on one GPU: the sharing [`Level`] it
/// creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Nothing on the device (a GPU each): they meet on the node.
    Nothing,
    /// Different MIG instances of one GPU.
    Instances,
    /// One device (a GPU or a MIG instance): its memory pool, fault domain or compute.
    Device,
}

/// How much device memory one workload's slice under a mechanism holds (rule GT109 compares it with
/// the workload's peak).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    /// A whole GPU per unit requested.
    WholeGpus,
    /// The units requested of a device the node advertises as replicas: that part of the GPU.
    Replicas,
    /// Its MIG instance, divided among the instance's replicas when it is shared.
    MigInstance,
    /// The vGPU's memory request (MiB, or a percentage of the GPU).
    Vgpu,
    /// The fraction's memory request, or its fraction of the GPU.
    Fraction,
    /// Set on the node (per cgroup), which Kubernetes does not show.
    Unknown,
}

/// How a pod's request names a mechanism: the resource names, annotation keys, scheduler names and
/// labels that mark it (any one marks it), and for a vGPU how its size is spelled.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub resources: &'static [&'static str],
    pub annotations: &'static [&'static str],
    pub schedulers: &'static [&'static str],
    pub labels: &'static [&'static str],
    /// For a vGPU: the names of its count, memory, cores and mode.
    pub vgpu: Option<VgpuNames>,
    /// For a fractional scheduler: the annotations of its fractions. The row is the scheduler:
    /// ingest reads every row's keys, and the fraction a pod carries names its row.
    pub fraction: Option<FractionNames>,
    /// The request in words, for a message about a workload without a node (`HAMi vGPU resources`).
    pub words: &'static str,
}

/// How a vGPU request spells its parts.
#[derive(Debug, Clone, Copy)]
pub struct VgpuNames {
    /// The resource counting vGPUs.
    pub count: &'static str,
    /// Device memory per vGPU, MiB.
    pub memory: &'static str,
    /// Device memory per vGPU, percent of the GPU.
    pub memory_percentage: Option<&'static str>,
    /// Share of the GPU's cores, percent.
    pub cores: &'static str,
    /// The annotation choosing the vGPU's mode, and the mechanism each mode other than the default
    /// gives.
    pub mode: &'static str,
    pub modes: &'static [(&'static str, Mechanism)],
    /// Resources its scheduler accounts and no node advertises.
    pub accounted: &'static [&'static str],
    /// The annotation in which its scheduler records the GPUs a pod got (HAMi's encoding:
    /// `UUID,type,memory,cores:` per device, `;` between containers).
    pub allocated: &'static str,
}

/// How a fractional scheduler's annotations spell a fraction.
#[derive(Debug, Clone, Copy)]
pub struct FractionNames {
    /// The share of one GPU (`0.5`).
    pub fraction: Key,
    /// The device memory requested, in order of preference, each with what its value is divided
    /// by to give MiB (1: MiB; `1 << 20`: a quantity of bytes).
    pub memory: &'static [(Key, u64)],
    /// How many GPUs the fraction spans.
    pub devices: Key,
    /// The annotations, with the value (any case), that make its pods clients of an MPS server, and
    /// the mechanism they then get.
    pub mps: &'static [(Key, &'static str)],
    pub on_mps: Option<Mechanism>,
    /// Where its binder records the GPUs a pod got, in `NVIDIA_VISIBLE_DEVICES`'s syntax (UUIDs,
    /// CDI names or indices). Empty: it records none a pod shows.
    pub recorded: &'static [Key],
}

/// An annotation key: one per pod, or one per container (`<prefix><container><suffix>`).
#[derive(Debug, Clone, Copy)]
pub enum Key {
    Pod(&'static str),
    Container(&'static str, &'static str),
}

impl Key {
    /// Whether an annotation's key is this one.
    pub fn matches(self, key: &str) -> bool {
        match self {
            Key::Pod(k) => key == k,
            Key::Container(prefix, suffix) => {
                key.len() > prefix.len() + suffix.len()
                    && key.starts_with(prefix)
                    && key.ends_with(suffix)
            }
        }
    }
}

const NOT_NAMED: Request = Request {
    resources: &[],
    annotations: &[],
    schedulers: &[],
    labels: &[],
    vgpu: None,
    fraction: None,
    words: "",
};

impl Request {
    /// Whether a pod with these resources, annotations, scheduler and labels is marked by it.
    pub fn marks(
        &self,
        resources: &BTreeMap<String, u64>,
        annotations: &BTreeMap<String, String>,
        scheduler: Option<&str>,
        labels: &BTreeMap<String, String>,
    ) -> bool {
        self.resources.iter().any(|r| resources.contains_key(*r))
            || self
                .annotations
                .iter()
                .any(|a| annotations.contains_key(*a))
            || scheduler.is_some_and(|s| self.schedulers.contains(&s))
            || self.labels.iter().any(|l| labels.contains_key(*l))
    }
}

/// HAMi's annotation choosing a vGPU's mode (Project-HAMi/HAMi `docs/config.md`).
pub const HAMI_VGPU_MODE: &str = "nvidia.com/vgpu-mode";
/// Written by HAMi's scheduler: the devices a pod got, `UUID,type,memory,cores:` per device and `;`
/// between containers (Project-HAMi/HAMi `pkg/device/nvidia/device.go`, `InitNvidiaDevice`;
/// `pkg/device/devices.go`, `EncodePodSingleDevice`). HAMi's dynamic MIG wrote the slot it got as
/// `UUID[template-slot]` before it recorded MIG placements apart (`ExtractMigTemplatesFromUUID`,
/// deprecated).
pub const HAMI_ALLOCATED: &str = "hami.io/vgpu-devices-allocated";
/// Written by Volcano's scheduler for its vGPUs, in HAMi's encoding (volcano-sh/volcano
/// `pkg/scheduler/api/devices/nvidia/vgpu/type.go`, `AssignedIDsAnnotations`; `utils.go`,
/// `encodePodDevices`); in dynamic-MIG mode (`volcano.sh/vgpu-mode: mig`) each UUID carries the
/// slot of the MIG geometry it got, `UUID[group-position]` (`mig.go`, `encodeMIGID`).
pub const VOLCANO_ALLOCATED: &str = "volcano.sh/vgpu-ids-new";
/// KAI Scheduler's GPU group, the label its binder puts on a fractional pod and on the reservation
/// pod that holds the group's GPU, with one more label `runai-gpu-group/<group>` per group of a
/// fraction of several GPUs (NVIDIA/KAI-Scheduler `pkg/common/constants/constants.go`, `GPUGroup`,
/// `MultiGpuGroupLabelPrefix`; `pkg/binder/binding/resourcereservation/resource_reservation.go`).
pub const KAI_GPU_GROUP: &str = "runai-gpu-group";
/// The UUID of the GPU a KAI reservation pod holds, which the pod reads from NVML and writes on
/// itself (`pkg/resourcereservation/discovery/discovery.go`, `patcher/pod_patcher.go`).
pub const KAI_RESERVED_GPU: &str = "run.ai/reserve_for_gpu_index";
/// The namespaces of KAI's reservation pods: `kai-resource-reservation` since v0.6.0,
/// `runai-reservation` before (`docs/migrationguides/v0.6.0/README.md`).
pub const KAI_RESERVATION_NAMESPACES: [&str; 2] = ["kai-resource-reservation", "runai-reservation"];
/// The prefix of KAI Scheduler v0.18's NvFractions annotations, one per container
/// (kai-scheduler/KAI-Scheduler `pkg/common/constants/constants.go`, `NvFractionsAnnotationPrefix`).
pub const KAI_NV_FRACTIONS_PREFIX: &str = "nvidia.com/container.";
/// Annotation keys (or prefixes, ending in `/` or `.`) whose GPU UUIDs gpu-trust reads as records,
/// or knows to be no record of an allocation: the schedulers above, HAMi's choice of GPUs by UUID
/// (`nvidia.com/use-gpuuuid`), CDI device requests and kubectl's copy of the object as applied. A
/// pod annotation naming a GPU under any other key is an allocation record of a scheduler
/// gpu-trust does not know.
pub const KNOWN_GPU_ANNOTATIONS: &[&str] = &[
    "hami.io/",
    "volcano.sh/",
    KAI_RESERVED_GPU,
    "kai.scheduler/",
    KAI_NV_FRACTIONS_PREFIX,
    "nvidia.com/use-gpuuuid",
    "nvidia.com/nouse-gpuuuid",
    "cdi.k8s.io/",
    "nvidia.cdi.k8s.io/",
    "kubectl.kubernetes.io/last-applied-configuration",
];

/// Whether gpu-trust knows what the GPUs an annotation of this key names are
/// ([`KNOWN_GPU_ANNOTATIONS`], or a key some row says its scheduler records devices under).
pub fn known_gpu_annotation(key: &str) -> bool {
    KNOWN_GPU_ANNOTATIONS
        .iter()
        .any(|k| key == *k || ((k.ends_with('/') || k.ends_with('.')) && key.starts_with(k)))
        || Mechanism::ALL.iter().any(|m| {
            let r = m.row().request;
            r.vgpu.is_some_and(|v| v.allocated == key)
                || r.fraction
                    .is_some_and(|f| f.recorded.iter().any(|k| k.matches(key)))
        })
}

/// The rows, in the order of [`Mechanism::ALL`].
mod rows {
    use super::facts;
    use super::{
        FractionNames, Key, Mechanism, Request, Row, Sharing, Slice, VgpuNames, NOT_NAMED,
    };
    use crate::resource;

    const fn row(name: &'static str, title: &'static str, facts: super::Facts) -> Row {
        Row {
            name,
            title,
            facts,
            inherits: None,
            sharing: Sharing::Device,
            mig: false,
            mps: false,
            requires: None,
            slice: Slice::Replicas,
            request: NOT_NAMED,
        }
    }

    pub(super) static EXCLUSIVE: Row = Row {
        sharing: Sharing::Nothing,
        slice: Slice::WholeGpus,
        ..row("exclusive", "exclusive GPU", facts::EXCLUSIVE)
    };
    pub(super) static TIME_SLICING: Row = row("time-slicing", "time-slicing", facts::TIME_SLICING);
    pub(super) static MPS: Row = Row {
        mps: true,
        ..row("mps", "MPS", facts::MPS)
    };
    pub(super) static MPS_MEMORY_PARTITIONED: Row = Row {
        mps: true,
        slice: Slice::Unknown,
        requires: Some(
            "NVIDIA driver r615 or later (CUDA 13.4), cgroup v2 at /sys/fs/cgroup, a GPU not in MIG mode, \
             root to set the limits (nvidia-smi memory-limits, or the MPS v3 configuration file); the \
             kernel's dmem cgroup controller (kernel 6.14 or later) enforces them, older kernels the \
             driver's own backend; managed and UVM memory are limited",
        ),
        ..row(
            "mps-memory-partitioned",
            "MPS with kernel-enforced memory partitions (MPS v3)",
            facts::MPS_V3,
        )
    };
    pub(super) static MIG_INSTANCE: Row = Row {
        sharing: Sharing::Instances,
        mig: true,
        slice: Slice::MigInstance,
        ..row("mig-instance", "MIG instance", facts::MIG)
    };
    pub(super) static MIG_TIME_SLICING: Row = Row {
        mig: true,
        slice: Slice::MigInstance,
        ..row(
            "mig-time-slicing",
            "time-slicing inside a MIG instance",
            facts::MIG_TIME_SLICING,
        )
    };
    pub(super) static MIG_MPS: Row = Row {
        mig: true,
        mps: true,
        slice: Slice::MigInstance,
        ..row("mig-mps", "MPS inside a MIG instance", facts::MIG_MPS)
    };
    /// Project-HAMi/HAMi `docs/config.md`: the resources, the `nvidia.com/vgpu-mode` annotation
    /// (`hami-core`, `mig`, `mps`), the GPU pinning annotations and the `hami-scheduler`.
    pub(super) static HAMI_VGPU: Row = Row {
        inherits: Some(Mechanism::TimeSlicing),
        slice: Slice::Vgpu,
        request: Request {
            resources: &resource::HAMI_RESOURCES,
            annotations: &[
                "nvidia.com/use-gpuuuid",
                "nvidia.com/nouse-gpuuuid",
                "nvidia.com/use-gputype",
                "nvidia.com/nouse-gputype",
                super::HAMI_VGPU_MODE,
                super::HAMI_ALLOCATED,
            ],
            schedulers: &["hami-scheduler"],
            labels: &[],
            fraction: None,
            vgpu: Some(VgpuNames {
                count: resource::GPU,
                memory: resource::HAMI_MEMORY,
                memory_percentage: Some(resource::HAMI_MEMORY_PERCENTAGE),
                cores: resource::HAMI_CORES,
                mode: super::HAMI_VGPU_MODE,
                modes: &[("mig", Mechanism::MigInstance), ("mps", Mechanism::Mps)],
                accounted: &resource::HAMI_RESOURCES,
                allocated: super::HAMI_ALLOCATED,
            }),
            words: "HAMi vGPU resources",
        },
        ..row("hami-vgpu", "HAMi vGPU", facts::HAMI_CORE)
    };
    /// Project-HAMi/volcano-vgpu-device-plugin `README.md` ("Running VGPU Jobs"): pods request
    /// `volcano.sh/vgpu-number`, `volcano.sh/vgpu-memory` (MiB per vGPU) and `volcano.sh/vgpu-cores`
    /// (percent per vGPU) with `schedulerName: volcano`, and may choose the mode with the annotation
    /// `volcano.sh/vgpu-mode` (`hami-core` or `mig`); the plugin enforces the limits with HAMi-core.
    /// volcano-sh/volcano `pkg/scheduler/plugins/vgpupredicates/vgpuutil/config.go` spells the
    /// number and memory resources the same. The scheduler name alone marks nothing: every Volcano
    /// job uses it.
    pub(super) static VOLCANO_VGPU: Row = Row {
        inherits: Some(Mechanism::TimeSlicing),
        slice: Slice::Vgpu,
        request: Request {
            resources: &[VOLCANO_VGPU_NUMBER, VOLCANO_VGPU_MEMORY, VOLCANO_VGPU_CORES],
            vgpu: Some(VgpuNames {
                count: VOLCANO_VGPU_NUMBER,
                memory: VOLCANO_VGPU_MEMORY,
                memory_percentage: None,
                cores: VOLCANO_VGPU_CORES,
                mode: "volcano.sh/vgpu-mode",
                modes: &[("mig", Mechanism::MigInstance)],
                accounted: &[],
                allocated: super::VOLCANO_ALLOCATED,
            }),
            words: "Volcano vGPU resources",
            ..NOT_NAMED
        },
        ..row("volcano-vgpu", "Volcano vGPU", facts::HAMI_CORE)
    };
    const VOLCANO_VGPU_NUMBER: &str = "volcano.sh/vgpu-number";
    const VOLCANO_VGPU_MEMORY: &str = "volcano.sh/vgpu-memory";
    const VOLCANO_VGPU_CORES: &str = "volcano.sh/vgpu-cores";
    /// KAI Scheduler's fractions: `gpu-fraction`, `gpu-memory` in MiB, `gpu-fraction-num-devices`
    /// (NVIDIA/KAI-Scheduler `docs/gpu-sharing`), on MPS with `mps: "true"` (`docs/gpu-sharing/mps`).
    /// v0.18's NvFractions, per container: the memory request in bytes, the devices the binder gave
    /// the container (`0`, `1,2`; only the binder may write them) and its compute mode
    /// (`pkg/common/constants/constants.go`: `NvFractionsMemoryRequestSuffix`,
    /// `NvFractionsVisibleDevicesSuffix`, `GpuComputeSharingModeSuffix`); the memory limit
    /// (`.gpu-memory.limit`) lets a workload use spare memory above its request and caps nothing, so
    /// it is not read. The pod's compute-sharing mode is `time-slicing` (the default) or
    /// `sm-sharing`, which "Requires MPS" (PR #2052, `docs/gpu-sharing/nv-fraction/README.md`).
    const KAI: FractionNames = FractionNames {
        fraction: Key::Pod("gpu-fraction"),
        memory: &[
            (Key::Pod("gpu-memory"), 1),
            (Key::Container(NV, ".gpu-memory.request"), 1 << 20),
        ],
        devices: Key::Pod("gpu-fraction-num-devices"),
        mps: &[
            (Key::Pod("mps"), "true"),
            (
                Key::Pod("kai.scheduler/gpu-compute-sharing-mode"),
                "sm-sharing",
            ),
            (Key::Container(NV, ".gpu-compute.mode"), "sm-sharing"),
        ],
        on_mps: Some(Mechanism::KaiMps),
        recorded: &[Key::Container(NV, ".gpus.devices")],
    };
    const NV: &str = super::KAI_NV_FRACTIONS_PREFIX;
    /// A fraction whose scheduler no other row's names mark is KAI's.
    pub(super) static KAI_FRACTION: Row = Row {
        inherits: Some(Mechanism::TimeSlicing),
        slice: Slice::Fraction,
        request: Request {
            fraction: Some(KAI),
            words: "a GPU fraction",
            ..NOT_NAMED
        },
        ..row("kai-fraction", "KAI Scheduler fraction", facts::KAI)
    };
    /// NVIDIA/KAI-Scheduler `docs/gpu-sharing/mps`: the pods of a KAI fraction whose `mps` names
    /// mark them (`FractionNames::on_mps`), or that mount the server's pipe directory
    /// ([`crate::fleet::Workload::uses_mps_pipe`]).
    pub(super) static KAI_MPS: Row = Row {
        inherits: Some(Mechanism::Mps),
        mps: true,
        slice: Slice::Fraction,
        request: Request {
            words: "a GPU fraction",
            ..NOT_NAMED
        },
        ..row("kai-mps", "KAI Scheduler fraction on MPS", facts::KAI_MPS)
    };
    /// Run:ai's scheduler name and queue label (Run:ai docs, "Setting the Default Scheduler":
    /// `schedulerName: runai-scheduler` with the `gpu-fraction` annotation), with the fraction
    /// annotations it shares with KAI Scheduler (its open-source successor).
    pub(super) static RUNAI_FRACTION: Row = Row {
        inherits: Some(Mechanism::TimeSlicing),
        slice: Slice::Fraction,
        request: Request {
            schedulers: &["runai-scheduler"],
            labels: &["runai/queue"],
            fraction: Some(FractionNames {
                memory: &[(Key::Pod("gpu-memory"), 1)],
                mps: &[],
                on_mps: None,
                recorded: &[],
                ..KAI
            }),
            words: "a GPU fraction",
            ..NOT_NAMED
        },
        ..row("runai-fraction", "Run:ai fraction", facts::RUNAI)
    };
}

impl Mechanism {
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    pub fn parse(s: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// A short human name for messages.
    pub fn title(self) -> &'static str {
        self.row().title
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
        self.row().inherits.unwrap_or(self)
    }

    /// The sharing level two workloads of different tenants under this mechanism on one GPU meet at.
    pub fn level(self) -> Level {
        match self.row().sharing {
            Sharing::Nothing => Level::Node,
            Sharing::Instances => Level::MigGpu,
            Sharing::Device => Level::Device(self),
        }
    }

    /// Whether two workloads under this mechanism draw on one memory pool, fault domain and compute:
    /// the "shares a memory pool" of rules GT101-GT105 and GT501.
    pub fn shares_device(self) -> bool {
        self.row().sharing == Sharing::Device
    }

    /// Whether the mechanism partitions the GPU into MIG instances.
    pub fn is_mig(self) -> bool {
        self.row().mig
    }

    /// Whether a fractional scheduler's accounting sits on top of the device mechanism.
    pub fn is_fraction(self) -> bool {
        self.row().inherits.is_some()
    }

    /// Whether the workloads are clients of one MPS server.
    pub fn is_mps(self) -> bool {
        self.row().mps
    }

    /// What the mechanism needs of the node beyond what Kubernetes shows, when it needs more.
    pub fn requires(self) -> Option<&'static str> {
        self.row().requires
    }

    /// How much device memory one workload's slice holds.
    pub fn slice(self) -> Slice {
        self.row().slice
    }

    /// The fact for one property.
    pub fn property(self, property: Property) -> &'static PropertyFact {
        &self.row().facts[property as usize]
    }

    /// Which co-located workloads an incident started by one of them reaches: derived from the row's
    /// facts (a property kept separate or limited by the kernel reaches no one) and whether it works
    /// inside a MIG instance.
    pub fn reach(self, incident: Incident) -> Scope {
        match incident {
            // Every workload on the node shares kernel, driver, toolkit and runtime.
            Incident::HostEscape => Scope::Node,
            // Every tenant in the cluster shares the API server (virtual clusters aside).
            Incident::ControlPlane => Scope::Cluster,
            // MIG keeps ordinary faults inside an instance, but the errors that need a GPU reset
            // hit every instance of the GPU (the fault-domain fact of the MIG rows, `facts::MIG`).
            Incident::DeviceFault if self.is_mig() => Scope::Gpu,
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
    use Enforcement::{LimitedInSoftware as Soft, NotEnforced, Separate, Shared};

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
        // Errors that need a GPU reset hit every instance of the GPU.
        assert_eq!(m.reach(Incident::DeviceFault), Scope::Gpu);
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
            Mechanism::MigMps.reach(Incident::MemoryExhaustion),
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

    /// The resources some row or the device plugin names are mapped; a GPU of another scheduler is
    /// not. Annotations of the recorders gpu-trust reads, and HAMi's choice of GPUs, are known.
    #[test]
    fn mapped_resources_and_known_gpu_annotations() {
        for yes in [
            "nvidia.com/gpu",
            "nvidia.com/mig-1g.10gb",
            "nvidia.com/gpumem",
            "volcano.sh/vgpu-number",
            "volcano.sh/vgpu-memory",
        ] {
            assert!(Mechanism::maps_resource(yes), "{yes}");
        }
        for no in [
            "aliyun.com/gpu-mem",
            "amd.com/gpu",
            "k8s.amazonaws.com/vgpu",
        ] {
            assert!(!Mechanism::maps_resource(no), "{no}");
        }
        for yes in [
            HAMI_ALLOCATED,
            VOLCANO_ALLOCATED,
            "nvidia.com/use-gpuuuid",
            "nvidia.com/container.main.gpus.devices",
            "kubectl.kubernetes.io/last-applied-configuration",
        ] {
            assert!(known_gpu_annotation(yes), "{yes}");
        }
        for no in [
            "mig.example.com/device",
            "nvidia.com/use-gpuuuids",
            "hami.io",
            "run.ai/mig-mapping",
        ] {
            assert!(!known_gpu_annotation(no), "{no}");
        }
    }

    #[test]
    fn names_round_trip() {
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::parse(m.as_str()), Some(m));
            // The row's spelling is serde's.
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.as_str())
            );
        }
    }

    #[test]
    fn composed_rows_keep_the_enforcement_of_what_they_run() {
        for p in Property::ALL {
            let e = |m: Mechanism| m.property(p).enforcement;
            assert_eq!(
                e(Mechanism::MigTimeSlicing),
                e(Mechanism::TimeSlicing),
                "{p:?}"
            );
            assert_eq!(e(Mechanism::MigMps), e(Mechanism::Mps), "{p:?}");
            assert_eq!(e(Mechanism::VolcanoVgpu), e(Mechanism::HamiVgpu), "{p:?}");
            if !matches!(p, Property::MemoryCapacity | Property::Compute) {
                assert_eq!(
                    Mechanism::KaiMps.property(p).note,
                    Mechanism::Mps.property(p).note
                );
            }
        }
    }

    #[test]
    fn every_row_says_how_a_vgpu_is_named_when_it_is_one() {
        for m in Mechanism::ALL {
            let row = m.row();
            assert_eq!(row.slice == Slice::Vgpu, row.request.vgpu.is_some(), "{m}");
            if row.request.vgpu.is_some() {
                assert!(!row.request.resources.is_empty() && !row.request.words.is_empty());
            }
        }
    }
}
