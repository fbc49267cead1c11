//! The fleet model: what ingest reads out of Kubernetes objects, in the terms the rules, the inventory
//! and the reports use. Built by `gpu-trust-ingest`, read by everything after it; it holds no behaviour
//! beyond small lookups, and no I/O.
//!
//! Indices (`NodeId`, `WorkloadId`) are positions in `Fleet::nodes` / `Fleet::workloads`; ingest sorts
//! both by name so that the same input always gives the same indices. The nodes a workload is
//! permitted on are a shared, deduplicated set (`Fleet::node_sets`, `Placement::permitted`): a
//! large cluster has few distinct scheduling constraints, and a list per workload would grow with
//! pods x nodes.
//!
//! One concern per file, each re-exported here (`fleet::Workload`): `node.rs` (nodes and their GPU
//! side, platforms, unknown facts, MIG requests), `sharing.rs` (the MIG strategy and the device
//! plugin's sharing configuration), `workload.rs` (workloads, their GPU requests, containers,
//! placement, policy overrides), `dra.rs` (DRA claims), `inference.rs` (inference servers),
//! `cluster.rs` (the operator's ClusterPolicy and GPUCluster, the DCGM exporter, RuntimeClasses),
//! `rbac.rs` (bindings and their rules), `acceptance.rs` (acceptances written as annotations). This
//! file holds the fleet itself, namespaces, what ingest could not resolve, and `Ingested`.

mod acceptance;
mod cluster;
mod dra;
mod inference;
mod node;
mod rbac;
mod sharing;
mod workload;

pub use acceptance::*;
pub use cluster::*;
pub use dra::*;
pub use inference::*;
pub use node::*;
pub use rbac::*;
pub use sharing::*;
pub use workload::*;

use crate::location::{Diagnostic, ObjectRef};
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

    /// The GPU nodes where a workload asks for a GPU no mechanism maps (`GpuRequest::unmapped`),
    /// scheduled there or permitted there: how their GPUs are shared is not known, and none of
    /// them may be called exclusive.
    pub fn unmapped_nodes(&self) -> std::collections::BTreeSet<NodeId> {
        self.workloads
            .iter()
            .filter(|w| !w.gpu.unmapped.is_empty())
            .flat_map(|w| match w.placement.node {
                Some(n) => vec![n],
                None => self.permitted_nodes(w).to_vec(),
            })
            .filter(|n| self.nodes.get(*n).is_some_and(|n| n.gpu.is_some()))
            .collect()
    }

    pub fn gpu_nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.gpu.is_some())
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
    /// A container's environment taken from a ConfigMap that is not in the input, where it may set a
    /// variable the audit reads (`NVIDIA_VISIBLE_DEVICES`, `CUDA_*`...).
    EnvFrom,
    /// A container's environment taken from a Secret (`envFrom`, `valueFrom`), which gpu-trust never
    /// reads, where it may set a variable the audit reads.
    SecretEnv,
    /// A pod's `runtimeClassName` whose RuntimeClass is not in the input (and is none the GPU
    /// Operator creates, or the RuntimeClasses could not be read): whether it is the NVIDIA
    /// runtime is not known.
    RuntimeClass,
    /// A workload on a GPU node asks for a GPU that no mechanism of the isolation model maps
    /// (`GpuRequest::unmapped`): how that node's GPUs are shared is not known.
    UnmappedGpu,
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

/// What ingest hands on: the fleet plus every problem it found in the input.
#[derive(Debug, Clone, Default)]
pub struct Ingested {
    pub fleet: Fleet,
    pub diagnostics: Vec<Diagnostic>,
}
