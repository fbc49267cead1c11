//! The fleet model: what ingest reads out of Kubernetes objects, in the terms the rules, the inventory
//! and the reports use. Built by `gpu-trust-ingest`, read by everything after it; it holds no behaviour
//! beyond small lookups, and no I/O.
//!
//! Indices (`NodeId`, `WorkloadId`) are positions in `Fleet::nodes` / `Fleet::workloads`; ingest sorts
//! both by name so that the same input always gives the same indices. The nodes a workload is
//! permitted on are a shared, deduplicated set (`Fleet::node_sets`, `Placement::permitted`): a
//! large cluster has few distinct scheduling constraints, and a list per workload would grow with
//! pods x nodes.

use crate::isolation::Mechanism;
use crate::location::{Diagnostic, Location, ObjectRef};
use crate::resource::{self, DeviceResource};
use crate::version::Version;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Position of a node in `Fleet::nodes`.
pub type NodeId = usize;
/// Position of a workload in `Fleet::workloads`.
pub type WorkloadId = usize;
/// Position of a node set in `Fleet::node_sets`.
pub type NodeSetId = usize;

/// Everything ingest learnt from the input.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fleet {
    /// Sorted by name.
    pub nodes: Vec<Node>,
    /// Pods and pod-owning workloads, sorted by (namespace, kind, name).
    pub workloads: Vec<Workload>,
    /// Every namespace named by a Namespace object or by a namespaced object, sorted by name.
    pub namespaces: Vec<NamespaceInfo>,
    pub runtime_classes: Vec<RuntimeClassInfo>,
    pub cluster_policy: Option<ClusterPolicyInfo>,
    pub rbac: Rbac,
    pub resource_claims: Vec<ResourceClaimInfo>,
    /// What could not be resolved (a referenced ConfigMap that is absent, a label naming a missing key...).
    pub unresolved: Vec<Unresolved>,
    /// Distinct sets of nodes, each sorted; `Placement::permitted` indexes them. Set 0 is the empty
    /// set whenever ingest built the fleet.
    #[serde(default)]
    pub node_sets: Vec<Vec<NodeId>>,
    /// The mig-parted configuration each MIG node asks for, per group of GPUs, with the geometry
    /// check of the GPU model (GT108 reads these), sorted by node.
    #[serde(default)]
    pub mig_requests: Vec<MigRequest>,
    /// Acceptances written on workloads and Namespaces as `accept.gpu-trust.io/<RULE>` annotations,
    /// sorted by object, then rule. Only objects ingest read carry them.
    #[serde(default)]
    pub acceptances: Vec<AnnotatedAcceptance>,
    /// The GPU Operator's `GPUCluster`, when the input has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_cluster: Option<GpuClusterInfo>,
}

impl Fleet {
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .binary_search_by(|n| n.name.as_str().cmp(name))
            .ok()
    }

    /// The nodes of a node set (empty for an unknown id).
    pub fn node_set(&self, id: NodeSetId) -> &[NodeId] {
        self.node_sets.get(id).map_or(&[], Vec::as_slice)
    }

    /// The nodes a workload's scheduling constraints permit, sorted.
    pub fn permitted_nodes(&self, workload: &Workload) -> &[NodeId] {
        self.node_set(workload.placement.permitted)
    }

    pub fn gpu_nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.gpu.is_some())
    }
}

/// The annotation prefix of an acceptance written on an object: `accept.gpu-trust.io/GT202` holds
/// the reason, `accept.gpu-trust.io/GT202.until` the last day it holds (docs/suppressions.md).
pub const ACCEPT_ANNOTATION_PREFIX: &str = "accept.gpu-trust.io/";
/// The suffix of the annotation that holds an acceptance's last day.
pub const ACCEPT_UNTIL_SUFFIX: &str = ".until";

/// What an annotated acceptance is written on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AnnotatedSubject {
    /// A workload object (a controller such as a Deployment or a Job, or a bare Pod): it covers the
    /// workloads read from that object.
    Workload,
    /// A Namespace: it covers every workload in the namespace.
    Namespace,
}

/// An acceptance written on an object: `accept.gpu-trust.io/<rule>: <reason>`, with
/// `accept.gpu-trust.io/<rule>.until: <YYYY-MM-DD>` when it ends.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnotatedAcceptance {
    pub subject: AnnotatedSubject,
    /// The annotated object (for a Namespace, its name is the namespace).
    pub object: ObjectRef,
    /// A rule code of the form `GTnnn`.
    pub rule: String,
    /// The reason; `None` when the reason annotation is absent or blank (such an acceptance accepts
    /// nothing and is itself a finding).
    pub reason: Option<String>,
    /// The last day it holds.
    pub until: Option<crate::date::Date>,
    /// The annotation key of the reason (or of the `until` when the reason is absent).
    pub annotation: String,
    /// Where that annotation is (the object's position when the input gives none, as for JSON).
    pub location: Location,
}

impl AnnotatedAcceptance {
    /// Whether it covers a workload: written on the workload's own object, or on its namespace.
    pub fn covers(&self, workload: &Workload) -> bool {
        match self.subject {
            AnnotatedSubject::Workload => {
                self.object.kind == workload.object.kind
                    && self.object.name == workload.object.name
                    && self.object.namespace.as_deref() == Some(workload.namespace.as_str())
            }
            AnnotatedSubject::Namespace => self.object.name == workload.namespace,
        }
    }

    /// Whether it holds on `today` (through its `until` day).
    pub fn is_expired(&self, today: crate::date::Date) -> bool {
        self.until.is_some_and(|u| u < today)
    }
}

/// Something ingest could not pin down; shown by `inventory` and turned into GT002 by the audit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unresolved {
    /// The object that holds the reference (a Node, the ClusterPolicy).
    pub object: ObjectRef,
    pub node: Option<String>,
    pub what: UnresolvedKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnresolvedKind {
    /// A device plugin sharing config (ConfigMap or key) that is not in the input.
    DevicePluginConfig,
    /// A mig-parted config (ConfigMap or named config) that is not in the input.
    MigConfig,
    /// A GPU product label the catalogue does not know.
    GpuModel,
    /// A node that pods are bound to (`spec.nodeName`) but that is not in the input.
    MissingNode,
    /// An extended resource a pod requests that DRA may serve with GPUs, whose DeviceClass is not in
    /// the input (`deviceclass.resource.kubernetes.io/<class>`, a GPU-shaped name no class or node
    /// explains).
    ExtendedResource,
    /// A container's environment taken from a Secret (`envFrom`, `valueFrom`), which gpu-trust does
    /// not read, or from a ConfigMap that is not in the input, where it may set a variable the
    /// audit reads (`NVIDIA_VISIBLE_DEVICES`, `CUDA_*`...).
    EnvFrom,
    /// A pod's `runtimeClassName` whose RuntimeClass is not in the input (and is none the GPU
    /// Operator creates): whether it is the NVIDIA runtime is not known.
    RuntimeClass,
    /// Anything else.
    Other,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceInfo {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// The Namespace object, when the input has one.
    pub object: Option<ObjectRef>,
}

impl NamespaceInfo {
    /// The Pod Security admission level enforced on the namespace, if any.
    pub fn pod_security_enforce(&self) -> Option<&str> {
        self.labels
            .get("pod-security.kubernetes.io/enforce")
            .map(String::as_str)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    pub object: ObjectRef,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    /// `None` for nodes without NVIDIA GPUs.
    pub gpu: Option<GpuNode>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: TaintEffect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

/// The GPU side of a node, resolved the way the GPU Operator resolves it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuNode {
    /// `nvidia.com/gpu.product` as labelled (suffixes such as `-SHARED` kept).
    pub product: Option<String>,
    /// Catalogue id of the matched GPU model, when the product label matched one.
    pub model: Option<String>,
    /// Physical GPUs on the node.
    pub count: u32,
    pub memory_mib: Option<u64>,
    pub driver_version: Option<Version>,
    pub toolkit_version: Option<Version>,
    pub operator_version: Option<Version>,
    /// `nvidia.com/cc.mode.state` (or `cc.mode` when no state): `on`, `off`, `ppcie`.
    pub cc_mode: Option<String>,
    pub mig_strategy: MigStrategy,
    /// The device plugin sharing configuration in force on this node.
    pub sharing: SharingConfig,
    /// One entry per physical GPU index, with its MIG layout when MIG is enabled.
    pub gpus: Vec<PhysicalGpu>,
    /// The node is registered with HAMi (`hami.io/node-nvidia-register`).
    pub hami: bool,
    /// Where the MIG layout came from.
    pub mig_source: Option<ConfigSource>,
    /// The extended resources the node's status advertises (`status.allocatable`, else `capacity`);
    /// `None` for a node written without status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertised: Option<BTreeMap<String, u64>>,
    /// The installers and platforms whose labels and configs gave these facts, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platforms: Vec<Platform>,
    /// Facts about the node the input does not give, and why (a platform that hides the driver
    /// version, a product label the catalogue does not know), sorted by fact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<UnknownFact>,
}

impl GpuNode {
    /// Whether any GPU on the node has MIG enabled.
    pub fn mig_enabled(&self) -> bool {
        self.gpus.iter().any(|g| g.mig_enabled)
    }

    /// Whether every GPU of the node is MIG-enabled (and there is at least one).
    pub fn all_mig(&self) -> bool {
        !self.gpus.is_empty() && self.gpus.iter().all(|g| g.mig_enabled)
    }

    /// Whether the node offers `resource` (an NVIDIA resource) to the scheduler: what its status
    /// advertises; for a node written without status, what its configuration makes the device plugin
    /// advertise (`nvidia.com/gpu` unless the mixed strategy turned every GPU into MIG instances, a
    /// MIG resource only under the mixed strategy for a profile the node has, `.shared` only when
    /// renamed, HAMi's resources on HAMi nodes).
    pub fn advertises(&self, name: &str) -> bool {
        if let Some(ext) = &self.advertised {
            return ext.get(name).is_some_and(|v| *v > 0);
        }
        // `renameByDefault` renames the resources the sharing config shares, and only those.
        let renamed = |base: &str| {
            self.sharing.rename_by_default
                && self.sharing.strategy != SharingStrategy::None
                && self.sharing.replicas.get(base).is_some_and(|r| *r > 1)
        };
        match DeviceResource::parse(name) {
            Some(DeviceResource::Gpu { shared }) => {
                !(self.mig_strategy == MigStrategy::Mixed && self.all_mig())
                    && renamed(resource::GPU) == shared
            }
            Some(DeviceResource::Mig { profile, shared }) => {
                self.mig_strategy == MigStrategy::Mixed
                    && renamed(resource::base(name)) == shared
                    && self
                        .gpus
                        .iter()
                        .flat_map(|p| &p.mig)
                        .any(|s| crate::catalogue::is_plugin_spelling(&s.profile, profile))
            }
            // Passed-through GPUs are advertised by the sandbox device plugin, not configured here.
            Some(DeviceResource::Passthrough) => true,
            None if resource::HAMI_RESOURCES.contains(&name) => self.hami,
            None => true,
        }
    }

    /// Whether the node advertises a resource of the sharing config (`nvidia.com/gpu`) under its own
    /// name or renamed with `.shared`.
    pub fn advertises_shared(&self, config_name: &str) -> bool {
        self.advertises(config_name)
            || self.advertises(&format!("{config_name}{}", resource::SHARED_SUFFIX))
    }

    /// The mechanism the node's configuration puts on one device of `name` (`nvidia.com/gpu`,
    /// `nvidia.com/mig-1g.10gb`): a MIG resource, or `nvidia.com/gpu` on a node whose single strategy
    /// advertises MIG instances, is a MIG instance.
    pub fn mechanism_for(&self, name: &str) -> Mechanism {
        let mig = resource::is_mig_resource(name)
            || (self.mig_strategy == MigStrategy::Single && self.mig_enabled());
        Mechanism::from_sharing(self.sharing.strategy, self.sharing.replicas_for(name), mig)
    }

    /// Whether the input left `fact` unknown for this node.
    pub fn is_unknown(&self, fact: NodeFact) -> bool {
        self.unknown.iter().any(|u| u.fact == fact)
    }
}

/// Declares [`Platform`] from one table, each variant beside its spelling, so that
/// [`Platform::ALL`] (which the tests enumerate) holds every variant by construction.
macro_rules! platforms {
    ($(#[$meta:meta])* pub enum Platform { $($(#[$doc:meta])* $variant:ident => $name:literal,)* }) => {
        $(#[$meta])*
        pub enum Platform {
            $($(#[$doc])* $variant,)*
        }

        impl Platform {
            /// Every platform, in declaration order.
            pub const ALL: &'static [Platform] = &[$(Platform::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Platform::$variant => $name,)*
                }
            }
        }
    };
}

platforms! {
    /// The installers and managed platforms a node's GPU facts are read from; each is one adapter of
    /// ingest (`crates/ingest/src/platforms/`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Platform {
        /// The NVIDIA GPU Operator: its ClusterPolicy names the device plugin and mig-parted configs.
        GpuOperator => "gpu-operator",
        /// The NVIDIA k8s-device-plugin installed by its Helm chart or static manifests: its config
        /// is found through its DaemonSet.
        DevicePlugin => "device-plugin",
        /// NVIDIA GPU Feature Discovery labels (`nvidia.com/gpu.*`), whichever installer runs it.
        GpuFeatureDiscovery => "gpu-feature-discovery",
        /// Google Kubernetes Engine's managed GPU node pools (`cloud.google.com/gke-*` labels).
        Gke => "gke",
        /// Amazon EKS (Auto Mode labels) and Karpenter's AWS provider.
        Eks => "eks",
        /// Azure Kubernetes Service and Karpenter's Azure provider.
        Aks => "aks",
        /// Red Hat OpenShift (Node Feature Discovery and the certified GPU Operator).
        OpenShift => "openshift",
    }
}

/// A fact about a GPU node that the audit needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeFact {
    GpuModel,
    GpuCount,
    DriverVersion,
    ToolkitVersion,
    SharingConfig,
    MigLayout,
    CcMode,
}

impl NodeFact {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeFact::GpuModel => "gpu-model",
            NodeFact::GpuCount => "gpu-count",
            NodeFact::DriverVersion => "driver-version",
            NodeFact::ToolkitVersion => "toolkit-version",
            NodeFact::SharingConfig => "sharing-config",
            NodeFact::MigLayout => "mig-layout",
            NodeFact::CcMode => "cc-mode",
        }
    }
}

/// A fact the input does not give for a node, and why; never filled in with a guess.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFact {
    pub fact: NodeFact,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MigStrategy {
    #[default]
    None,
    Single,
    Mixed,
}

impl MigStrategy {
    /// The device plugin's spelling (`flags.migStrategy`, the ClusterPolicy's `mig.strategy`), and
    /// serde's.
    pub const fn as_str(self) -> &'static str {
        match self {
            MigStrategy::None => "none",
            MigStrategy::Single => "single",
            MigStrategy::Mixed => "mixed",
        }
    }

    pub fn parse(s: &str) -> Option<MigStrategy> {
        [MigStrategy::None, MigStrategy::Single, MigStrategy::Mixed]
            .into_iter()
            .find(|m| m.as_str() == s)
    }
}

/// Which device plugin sharing mode a node runs (the config applies to every GPU of the node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SharingStrategy {
    #[default]
    None,
    TimeSlicing,
    Mps,
}

impl SharingStrategy {
    /// GFD's value of the `<resource>.sharing-strategy` label (`internal/lm/resource.go`), and serde's.
    pub const fn as_str(self) -> &'static str {
        match self {
            SharingStrategy::None => "none",
            SharingStrategy::TimeSlicing => "time-slicing",
            SharingStrategy::Mps => "mps",
        }
    }
}

/// Where a piece of node configuration came from, so the inventory can say why it believes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum ConfigSource {
    /// A key of a ConfigMap (device plugin config or mig-parted config).
    ConfigMap {
        namespace: String,
        name: String,
        key: String,
        /// The mig-parted config name inside the key, for MIG.
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<String>,
    },
    /// GPU Feature Discovery labels on the node (used when the config objects are absent).
    NodeLabels,
    /// Nothing configured: the device plugin default (no sharing, MIG disabled).
    Default,
    /// The configuration could not be determined.
    Unknown,
}

/// A resolved `sharing:` section of a k8s-device-plugin config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharingConfig {
    pub source: ConfigSource,
    pub strategy: SharingStrategy,
    pub rename_by_default: bool,
    pub fail_requests_greater_than_one: bool,
    /// Resource name (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`) to replicas advertised per device.
    pub replicas: BTreeMap<String, u32>,
    /// `flags.plugin.deviceListStrategy` (default `envvar`).
    pub device_list_strategy: Vec<String>,
    /// `flags.plugin.sharedDevicesAllocationPolicy` (device plugin v0.20.0): how replicas and MIG
    /// instances are picked; `None` when the config does not say (the plugin's default, distributed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_policy: Option<AllocationPolicy>,
}

/// How the device plugin picks the replicas of shared GPUs and MIG instances for a request
/// (NVIDIA/k8s-device-plugin v0.20.0, pull request 1621, `internal/rm/allocate.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocationPolicy {
    /// The GPU with the fewest replicas allocated first: pods spread over the GPUs (the default).
    Distributed,
    /// The GPU with the most replicas allocated first, while it has one free: pods pile onto one GPU.
    Packed,
}

impl AllocationPolicy {
    pub fn parse(s: &str) -> Option<AllocationPolicy> {
        match s {
            "distributed" => Some(AllocationPolicy::Distributed),
            "packed" => Some(AllocationPolicy::Packed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AllocationPolicy::Distributed => "distributed",
            AllocationPolicy::Packed => "packed",
        }
    }
}

impl Default for SharingConfig {
    fn default() -> Self {
        SharingConfig {
            source: ConfigSource::Default,
            strategy: SharingStrategy::None,
            rename_by_default: false,
            fail_requests_greater_than_one: false,
            replicas: BTreeMap::new(),
            device_list_strategy: vec!["envvar".to_string()],
            allocation_policy: None,
        }
    }
}

impl SharingConfig {
    /// Replicas advertised per device for a resource (1 when the resource is not shared).
    pub fn replicas_for(&self, name: &str) -> u32 {
        self.replicas
            .get(resource::base(name))
            .copied()
            .unwrap_or(1)
            .max(1)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalGpu {
    pub index: u32,
    pub uuid: Option<String>,
    pub mig_enabled: bool,
    /// The MIG instances on this GPU (empty when MIG is disabled).
    pub mig: Vec<MigSlot>,
}

/// One MIG GPU instance on a physical GPU.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigSlot {
    /// Profile name as in the catalogue (`1g.10gb`, `1g.10gb+me`).
    pub profile: String,
    /// Start memory slice, when known (mig-parted does not encode placement; ingest derives one).
    pub start: Option<u8>,
}

/// What kind of object a workload came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WorkloadKind {
    Pod,
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    Job,
    CronJob,
    PyTorchJob,
    TFJob,
    MPIJob,
    JobSet,
    VolcanoJob,
    /// Any other object that carries pod templates: a controller of ingest's controllers table
    /// (LeaderWorkerSet, KubeRay, Kubeflow Trainer, KServe, Knative, Argo...) or a kind found to hold
    /// pod templates by their shape. Its kind is `object.kind`.
    Custom,
}

impl WorkloadKind {
    /// Training kinds (Kubeflow, JobSet, Volcano).
    pub fn is_training_kind(self) -> bool {
        matches!(
            self,
            WorkloadKind::PyTorchJob
                | WorkloadKind::TFJob
                | WorkloadKind::MPIJob
                | WorkloadKind::JobSet
                | WorkloadKind::VolcanoJob
        )
    }
}

/// What a workload does, which changes what the rules ask of its placement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadClass {
    Training,
    Inference,
    Notebook,
    Batch,
    #[default]
    Unknown,
}

impl WorkloadClass {
    pub fn parse(s: &str) -> Option<WorkloadClass> {
        Some(match s {
            "training" => WorkloadClass::Training,
            "inference" => WorkloadClass::Inference,
            "notebook" => WorkloadClass::Notebook,
            "batch" => WorkloadClass::Batch,
            _ => return None,
        })
    }

    /// The kebab-case name, as serialised and as the policy file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadClass::Training => "training",
            WorkloadClass::Inference => "inference",
            WorkloadClass::Notebook => "notebook",
            WorkloadClass::Batch => "batch",
            WorkloadClass::Unknown => "unknown",
        }
    }
}

/// What the tenancy policy's `workloads` entries say about one workload; each field is taken from the
/// first entry (in file order) that selects the workload and sets it. The policy computes it
/// (`Tenancy::workload_overrides`); what it sets wins over what ingest read from the objects, here and
/// nowhere else, for every command that reads it (the audit, the inventory).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkloadOverrides {
    pub kind: Option<WorkloadClass>,
    pub peak_memory_mib: Option<u64>,
    pub latency: Option<crate::Latency>,
}

impl WorkloadOverrides {
    /// What `workload` does: the policy's kind, else what ingest classified.
    pub fn class(&self, workload: &Workload) -> WorkloadClass {
        self.kind.unwrap_or(workload.class)
    }

    /// Peak device memory of `workload` in MiB: the policy's, else the one ingest read.
    pub fn peak_memory_mib(&self, workload: &Workload) -> Option<u64> {
        self.peak_memory_mib.or(workload.peak_memory_mib)
    }
}

/// A pod, or the pod template of a workload (one entry per template; `replicas` says how many pods).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    pub object: ObjectRef,
    pub namespace: String,
    pub kind: WorkloadKind,
    /// For a training kind, the replica type (`Worker`, `Master`); else `None`.
    pub role: Option<String>,
    pub replicas: u32,
    pub class: WorkloadClass,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub scheduler_name: Option<String>,
    pub service_account: Option<String>,
    pub gpu: GpuRequest,
    pub containers: Vec<ContainerInfo>,
    pub pod_security: PodSecurity,
    pub inference: Option<InferenceServer>,
    /// Peak device memory in MiB, when known (policy `workloads` or HAMi `nvidia.com/gpumem`).
    pub peak_memory_mib: Option<u64>,
    pub placement: Placement,
    /// For a pod: the owning controller as `Kind/name` (so the audit can group a ReplicaSet's pods).
    pub owner: Option<String>,
}

impl Workload {
    /// Whether the workload asks for any GPU resource (device plugin, HAMi, fraction or DRA).
    pub fn requests_gpu(&self) -> bool {
        self.gpu.requests_gpu()
    }

    /// Whether the pod mounts an MPS server's pipe directory from the host, so it runs as a client of
    /// that server: a hostPath at KAI Scheduler's documented `CUDA_MPS_PIPE_DIRECTORY`, or at the
    /// directory one of its containers sets in `CUDA_MPS_PIPE_DIRECTORY`.
    pub fn uses_mps_pipe(&self) -> bool {
        let paths = &self.pod_security.host_paths;
        let trimmed = |p: &str| p.trim_end_matches('/').to_string();
        paths.iter().any(|p| trimmed(p) == KAI_MPS_PIPE_DIRECTORY)
            || self.containers.iter().any(|c| {
                c.env.get(MPS_PIPE_ENV).is_some_and(|dir| {
                    !dir.is_empty() && paths.iter().any(|p| trimmed(p) == trimmed(dir))
                })
            })
    }
}

/// The MPS pipe directory KAI Scheduler's MPS guide has the node's MPS server use and pods mount
/// (NVIDIA/KAI-Scheduler `docs/gpu-sharing/mps/README.md`).
pub const KAI_MPS_PIPE_DIRECTORY: &str = "/tmp/nvidia-mps";
/// The variable that points a CUDA client at its MPS server (NVIDIA MPS documentation, "Environment
/// variables").
pub const MPS_PIPE_ENV: &str = "CUDA_MPS_PIPE_DIRECTORY";

/// What a workload requests of GPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuRequest {
    /// Extended resources summed over containers (limits, or requests when no limit): `nvidia.com/gpu`,
    /// `nvidia.com/gpu.shared`, `nvidia.com/mig-1g.10gb`, HAMi `nvidia.com/gpumem`...
    pub resources: BTreeMap<String, u64>,
    pub hami: Option<HamiRequest>,
    pub fraction: Option<FractionRequest>,
    pub dra: Vec<DraClaimUse>,
}

impl GpuRequest {
    pub fn requests_gpu(&self) -> bool {
        self.resources.keys().any(|k| resource::is_gpu_resource(k))
            || self.hami.is_some()
            || self.fraction.is_some()
            || !self.dra.is_empty()
    }

    /// The device plugin resource requested (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`...) with its
    /// quantity: the first in name order.
    pub fn device_resource(&self) -> Option<(&str, u64)> {
        self.resources
            .iter()
            .find(|(k, _)| resource::is_gpu_resource(k))
            .map(|(k, v)| (k.as_str(), *v))
    }

    /// MIG resources requested (`nvidia.com/mig-<profile>`), profile names with `.` as the plugin
    /// writes them, without a `.shared` suffix.
    pub fn mig_profiles(&self) -> impl Iterator<Item = (&str, u64)> {
        self.resources
            .iter()
            .filter_map(|(k, v)| resource::mig_profile(k).map(|p| (p, *v)))
    }
}

/// HAMi vGPU resources (`nvidia.com/gpumem`, `nvidia.com/gpucores`) and its annotations.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HamiRequest {
    pub gpus: u64,
    pub memory_mib: Option<u64>,
    pub memory_percentage: Option<u64>,
    pub cores_percent: Option<u64>,
    /// `nvidia.com/vgpu-mode`: `hami-core` (default), `mig` or `mps`.
    pub mode: Option<String>,
    /// A container sets `CUDA_DISABLE_CONTROL=true`: HAMi-core's limits do not apply to it.
    pub control_disabled: bool,
    /// The vGPU mechanism whose names the request used, when another than HAMi's own (Volcano's
    /// vGPU, built on HAMi-core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<crate::isolation::Mechanism>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FractionScheduler {
    Kai,
    RunAi,
}

/// A KAI Scheduler / Run:ai fraction (`gpu-fraction`, `gpu-memory` annotations).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FractionRequest {
    pub scheduler: FractionScheduler,
    pub fraction: Option<f64>,
    pub memory_mib: Option<u64>,
    pub num_devices: Option<u32>,
    pub mps: bool,
}

/// How a DRA claim shares its device: the `sharing.strategy` of a `GpuConfig` (a whole GPU) or a
/// `MigDeviceConfig` (one MIG instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DraStrategy {
    Exclusive,
    TimeSlicing,
    Mps,
    /// A MIG instance for the claim alone.
    Mig,
    /// Time-slicing among the pods sharing one claim's MIG instance.
    MigTimeSlicing,
    /// MPS among the pods sharing one claim's MIG instance.
    MigMps,
}

impl DraStrategy {
    pub fn is_mig(self) -> bool {
        matches!(
            self,
            DraStrategy::Mig | DraStrategy::MigTimeSlicing | DraStrategy::MigMps
        )
    }
}

/// A pod's use of a DRA ResourceClaim (directly or through a template).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraClaimUse {
    /// `namespace/name` of a shared ResourceClaim; `None` for a per-pod claim from a template.
    pub claim: Option<String>,
    pub template: Option<String>,
    pub device_class: Option<String>,
    pub strategy: DraStrategy,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerInfo {
    pub name: String,
    pub image: String,
    /// `command` followed by `args`.
    pub argv: Vec<String>,
    pub privileged: bool,
    pub added_capabilities: Vec<String>,
    /// The value of `NVIDIA_VISIBLE_DEVICES`, when set.
    pub nvidia_visible_devices: Option<String>,
    /// Environment variables that matter to isolation (CUDA_DISABLE_CONTROL, CUDA_MPS_*...).
    pub env: BTreeMap<String, String>,
    /// Extended resources of this container (limits, or requests when no limit).
    pub resources: BTreeMap<String, u64>,
    pub is_init: bool,
}

/// Pod-level settings that reach the host.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurity {
    pub host_pid: bool,
    pub host_ipc: bool,
    pub host_network: bool,
    pub runtime_class_name: Option<String>,
    /// The handler of the runtime class: its RuntimeClass's, or the name itself for a class the
    /// GPU Operator creates with handler and name equal (`crate::host::NVIDIA_RUNTIME_HANDLERS`);
    /// `None` without a runtime class, or when its RuntimeClass is not in the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_handler: Option<String>,
    /// hostPath volume paths, normalised (`crate::host::normalise_host_path`).
    pub host_paths: Vec<String>,
    /// `nvidia.cdi.k8s.io/*` annotations (CDI device injection).
    pub cdi_annotations: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InferenceEngine {
    Vllm,
    Sglang,
    Tgi,
}

impl InferenceEngine {
    /// Its name in messages.
    pub const fn title(self) -> &'static str {
        match self {
            InferenceEngine::Vllm => "vLLM",
            InferenceEngine::Sglang => "SGLang",
            InferenceEngine::Tgi => "TGI",
        }
    }

    /// The flag that sets the fraction of device memory it reserves at start: vLLM engine arguments
    /// (`--gpu-memory-utilization`), SGLang server arguments (`--mem-fraction-static`), Hugging Face
    /// TGI launcher (`--cuda-memory-fraction`).
    pub const fn fraction_flag(self) -> &'static str {
        match self {
            InferenceEngine::Vllm => "--gpu-memory-utilization",
            InferenceEngine::Sglang => "--mem-fraction-static",
            InferenceEngine::Tgi => "--cuda-memory-fraction",
        }
    }
}

/// An inference server found from image and arguments, with its up-front memory reservation.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InferenceServer {
    pub engine: InferenceEngine,
    pub container: String,
    /// Fraction of device memory reserved at start (explicit flag or the engine's default).
    pub reserved_fraction: Option<f64>,
    /// The flag that set it, or `None` when the default applies.
    pub flag: Option<String>,
    /// The server that runs the engine with the engine's own arguments and defaults (KServe's
    /// Hugging Face runtime), when the image is not the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// Where a workload runs now, and where it may run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// `spec.nodeName` of a scheduled pod (`None` for templates and pending pods). Pods that have
    /// finished (Succeeded, Failed) hold no device and are not in the fleet.
    pub node: Option<NodeId>,
    /// GPU UUIDs pinned by the evidence (HAMi `hami.io/vgpu-devices-allocated`).
    pub gpu_uuids: Vec<String>,
    /// For a scheduled pod that requests GPUs: the devices (GPUs, or MIG instances) of its node it may
    /// be using, sorted. Empty when it requests none or its node has no GPU model in the input.
    pub devices: Vec<DeviceSlot>,
    /// The evidence pins the pod to exactly `devices` (HAMi's allocation annotation, one GPU on the
    /// node, one instance of the requested profile): co-location on them is `observed`, not `possible`.
    pub observed: bool,
    /// The nodes the constraints allow (resources, nodeSelector, required node affinity, taints and
    /// tolerations): an index into `Fleet::node_sets`, shared by every workload with the same
    /// constraints. See `Fleet::permitted_nodes`.
    pub permitted: NodeSetId,
    /// The pod's tolerations, sorted (with those the DaemonSet controller adds to a daemon's pods), so
    /// that a patch of its template can keep them.
    #[serde(skip)]
    pub tolerations: Vec<PodToleration>,
}

/// A toleration as the pod writes it: `Exists`, or `Equal` to `value`; `None` for a field left out.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodToleration {
    pub key: Option<String>,
    pub exists: bool,
    pub value: Option<String>,
    pub effect: Option<String>,
    pub seconds: Option<i64>,
}

/// One device a pod may be on: a physical GPU, or one MIG instance of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSlot {
    /// `PhysicalGpu::index`.
    pub gpu: u32,
    /// Position in that GPU's `PhysicalGpu::mig`, for a MIG instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<u32>,
}

/// What the mig-parted configuration in force asks of some GPUs of a node, and whether the GPU model
/// can do it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigRequest {
    pub node: NodeId,
    /// The GPU indices the entry applies to.
    pub gpus: Vec<u32>,
    /// The mig-parted config name (`nvidia.com/mig.config`).
    pub config: String,
    /// The ConfigMap holding it, located at the config's entry.
    pub object: ObjectRef,
    pub mig_enabled: bool,
    /// `mig-devices`, profile name as written to count.
    pub mig_devices: BTreeMap<String, u32>,
    /// Why the model cannot hold this layout (unknown profile, too many instances, no placement, no
    /// MIG on this model); `None` when it is valid or the GPU model is unknown.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClassInfo {
    pub object: ObjectRef,
    pub name: String,
    pub handler: String,
}

impl RuntimeClassInfo {
    /// Kata / confidential-containers handlers (`kata`, `kata-qemu-nvidia-gpu-snp`, `kata-cc-*`...).
    pub fn is_confidential(&self) -> bool {
        let h = self.handler.to_ascii_lowercase();
        h.contains("kata") || h.contains("-cc") || h.contains("snp") || h.contains("tdx")
    }
}

/// What the ClusterPolicy (nvidia.com/v1) says.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicyInfo {
    pub object: Option<ObjectRef>,
    /// Namespace the GPU Operator runs in (from the ConfigMaps' namespace or `gpu-operator`).
    pub operator_namespace: Option<String>,
    pub toolkit_version: Option<Version>,
    pub device_plugin_version: Option<Version>,
    pub driver_version: Option<Version>,
    pub mig_strategy: Option<MigStrategy>,
    /// `spec.devicePlugin.config.{name,default}`.
    pub device_plugin_config: Option<(String, Option<String>)>,
    /// `spec.migManager.config.{name,default}`.
    pub mig_manager_config: Option<(String, Option<String>)>,
    pub cdi_enabled: Option<bool>,
    /// `spec.toolkit.env` as a map.
    pub toolkit_env: BTreeMap<String, String>,
    pub cc_manager_enabled: Option<bool>,
    pub low_level_runtime: Option<String>,
    /// `spec.cdi.default`: before GPU Operator 25.10.0, `cdi.enabled` only made CDI available and
    /// this made it the runtime's default (`api/nvidia/v1/clusterpolicy_types.go` at v25.3.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdi_default: Option<bool>,
    /// `spec.cdi.nriPluginEnabled`: the NRI plugin injects CDI devices (GPU Operator 26.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nri_plugin_enabled: Option<bool>,
    /// `spec.migManager.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_manager_version: Option<Version>,
    /// `spec.dcgmExporter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcgm_exporter: Option<ExporterSpec>,
}

/// The DCGM exporter as an operator spec configures it (ClusterPolicy or GPUCluster
/// `spec.dcgmExporter`, `api/nvidia/v1/clusterpolicy_types.go` `DCGMExporterSpec`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExporterSpec {
    pub enabled: Option<bool>,
    /// `version`: the image tag (`4.5.3-4.8.2-ubuntu22.04`), as written.
    pub tag: Option<String>,
    /// `env`, as a map.
    pub env: BTreeMap<String, String>,
    pub args: Vec<String>,
    /// `enablePodLabels` (GPU Operator 26.3.2).
    pub pod_labels: Option<bool>,
    pub host_network: Option<bool>,
}

/// What the GPU Operator's `GPUCluster` (`nvidia.com/v1alpha1`, GPU Operator 26.7.0) says: the
/// DRA-based stack it deploys instead of a ClusterPolicy (`api/nvidia/v1alpha1/gpucluster_types.go`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuClusterInfo {
    pub object: Option<ObjectRef>,
    /// `spec.draDriver.version` (an image tag).
    pub dra_driver_version: Option<Version>,
    /// `spec.draDriver.featureGates`.
    pub dra_feature_gates: BTreeMap<String, bool>,
    /// `spec.dcgmExporter`.
    pub dcgm_exporter: Option<ExporterSpec>,
}

/// RBAC as resolved subjects -> permissions.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rbac {
    pub bindings: Vec<Binding>,
}

/// A RoleBinding or ClusterRoleBinding with its role's rules resolved (aggregation included).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub object: ObjectRef,
    /// `None` for a ClusterRoleBinding (cluster-wide).
    pub namespace: Option<String>,
    pub role: String,
    pub subjects: Vec<Subject>,
    pub rules: Vec<PolicyRule>,
    /// The role it references is not in the input.
    pub role_missing: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
    pub resource_names: Vec<String>,
}

impl PolicyRule {
    /// Whether the rule grants `verb` on `group`/`resource` (wildcards honoured).
    pub fn allows(&self, group: &str, resource: &str, verb: &str) -> bool {
        let any = |list: &[String], want: &str| list.iter().any(|x| x == "*" || x == want);
        any(&self.api_groups, group) && any(&self.resources, resource) && any(&self.verbs, verb)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimInfo {
    pub object: ObjectRef,
    /// `true` for a ResourceClaimTemplate (one claim per pod).
    pub template: bool,
    pub device_class: Option<String>,
    pub strategy: DraStrategy,
    /// A request sets `adminAccess: true` (KEP-5018): the claim gets devices whether or not other
    /// claims hold them, in a namespace labelled `resource.kubernetes.io/admin-access: "true"`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin_access: bool,
}

/// What ingest hands on: the fleet plus every problem it found in the input.
#[derive(Debug, Clone, Default)]
pub struct Ingested {
    pub fleet: Fleet,
    pub diagnostics: Vec<Diagnostic>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_rule_wildcards() {
        let r = PolicyRule {
            api_groups: vec!["".into()],
            resources: vec!["*".into()],
            verbs: vec!["patch".into()],
            resource_names: vec![],
        };
        assert!(r.allows("", "nodes", "patch"));
        assert!(!r.allows("", "nodes", "delete"));
        assert!(!r.allows("apps", "deployments", "patch"));
    }

    #[test]
    fn shared_resource_replicas() {
        let mut s = SharingConfig::default();
        s.replicas.insert("nvidia.com/gpu".into(), 4);
        assert_eq!(s.replicas_for("nvidia.com/gpu.shared"), 4);
        assert_eq!(s.replicas_for("nvidia.com/mig-1g.10gb"), 1);
    }
}
