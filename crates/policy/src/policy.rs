//! The validated policy: its types, its defaults and what the audit reads of it (`validate.rs` builds
//! it from the file as written).

use crate::pattern::NamespacePattern;
use crate::Acceptance;
use gpu_trust_model::fleet::{Subject, WorkloadClass};
use gpu_trust_model::{Location, Trust};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// The `apiVersion` a policy file may give.
pub const API_VERSION: &str = "gpu-trust/v1";
/// The `kind` a policy file may give.
pub const KIND: &str = "TenancyPolicy";

/// Namespace labels that name a tenant when the policy does not set `tenantLabel`, consulted in
/// this order. Both tools let a tenant's owners create namespaces of the tenant.
///
/// - `capsule.clastix.io/tenant`: Capsule (projectcapsule/capsule) stamps it on every namespace of a
///   Tenant, with the Tenant's name as the value (its `GetTypeLabel` for a Tenant).
/// - `stakater.com/tenant`: Stakater's Multi Tenant Operator requires it on every namespace it
///   manages, with the name of the tenant the namespace belongs to; a tenant's owners may create
///   namespaces carrying it (Multi Tenant Operator documentation, stakater.github.io/mto-docs: the
///   Tenant reference's "Namespace" section and the IntegrationConfig reference).
pub const DEFAULT_TENANT_LABELS: &[&str] = &["capsule.clastix.io/tenant", "stakater.com/tenant"];

/// Infrastructure namespaces whatever the policy says (its `platformNamespaces` add to them, and a
/// tenant that names one takes it): the Kubernetes system namespaces (kube-system, kube-public,
/// kube-node-lease, created by every cluster) and the NVIDIA GPU
/// Operator's namespace as its install guide names it (`gpu-operator`), as vendors rename it
/// (`nvidia-gpu-operator` on OpenShift, `*-gpu-operator`), and NVIDIA's other components (`nvidia-*`).
///
/// Then the namespaces the schedulers and workload operators install into by default, which run
/// their controllers and device plugins, never a tenant's pods:
/// - `volcano-system`: volcano-sh/volcano `installer/volcano-development.yaml`;
/// - `kai-scheduler` and `kai-resource-reservation` (the reservation pods that hold the GPUs KAI
///   shares in fractions): NVIDIA/KAI-Scheduler `pkg/common/constants` (`DefaultKAINamespace`,
///   `DefaultResourceReservationName`);
/// - `hami-system`: Project-HAMi/HAMi `hack/deploy.sh` (`TARGET_NS`, default `hami-system`);
/// - `lws-system`: kubernetes-sigs/lws `config/default/kustomization.yaml`;
/// - `jobset-system`: kubernetes-sigs/jobset `config/default/kustomization.yaml`;
/// - `ray-system`: ray-project/kuberay `ray-operator/config/default/kustomization.yaml` (the KubeRay
///   operator's namespace).
pub const DEFAULT_PLATFORM_NAMESPACES: &[&str] = &[
    "kube-system",
    "kube-public",
    "kube-node-lease",
    gpu_trust_model::stack::GPU_OPERATOR_NAMESPACE,
    "nvidia-*",
    "*-gpu-operator",
    "volcano-system",
    "kai-scheduler",
    "kai-resource-reservation",
    "hami-system",
    "lws-system",
    "jobset-system",
    "ray-system",
];

/// The largest policy file read, in bytes (a policy is a few kilobytes; this bounds a wrong path).
pub const MAX_POLICY_BYTES: usize = 16 << 20;

/// Days a published driver fix may stay unapplied (`host.patchWindowDays`) when the policy is silent.
pub const DEFAULT_PATCH_WINDOW_DAYS: u32 = 30;
/// Replicas per time-sliced or MPS GPU without a memory limit (`sharing.maxReplicas`) before GT110.
pub const DEFAULT_MAX_REPLICAS: u32 = 4;

pub use gpu_trust_model::Latency;

/// What the hosting terms promise a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Contract {
    /// Isolation from other tenants: any shared memory pool, fault domain, compute, or a node shared
    /// with a distrusted tenant breaks it (GT501).
    Isolation,
    /// A share of compute, with the interference that comes with it (GT502 states which).
    #[default]
    ProportionalCompute,
}

impl Contract {
    pub const ALL: [Contract; 2] = [Contract::Isolation, Contract::ProportionalCompute];

    pub fn as_str(self) -> &'static str {
        match self {
            Contract::Isolation => "isolation",
            Contract::ProportionalCompute => "proportional-compute",
        }
    }

    pub fn parse(s: &str) -> Option<Contract> {
        Contract::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tenant as the policy declares it (before namespaces are resolved).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TenantDecl {
    pub name: String,
    pub location: Location,
    pub namespaces: Vec<NamespacePattern>,
    pub latency: Latency,
    pub confidential: bool,
    pub contract: Contract,
    pub subjects: Vec<Subject>,
}

/// A `trust.relations` entry: the level between two declared tenants (symmetric).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Relation {
    /// The two tenant names, sorted.
    pub tenants: [String; 2],
    pub level: Trust,
    #[serde(skip)]
    pub location: Location,
}

/// A `workloads` entry: what the objects alone cannot say about matching workloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRule {
    /// The namespace (name or glob) a workload must be in; `None` for any namespace.
    pub namespace: Option<NamespacePattern>,
    /// Labels a workload must carry, all of them, with these values.
    pub labels: BTreeMap<String, String>,
    pub kind: Option<WorkloadClass>,
    pub peak_memory_mib: Option<u64>,
    pub latency: Option<Latency>,
    #[serde(skip)]
    pub location: Location,
}

impl WorkloadRule {
    /// Whether a workload in `namespace` with `labels` is selected by this entry.
    pub fn matches(&self, namespace: &str, labels: &BTreeMap<String, String>) -> bool {
        self.namespace.as_ref().is_none_or(|p| p.matches(namespace))
            && self
                .labels
                .iter()
                .all(|(k, v)| labels.get(k).is_some_and(|have| have == v))
    }
}

/// A tenancy policy, validated. Build one with [`crate::parse`] or take [`Policy::default`] (no policy
/// file: the secure default), then [`resolve`](Policy::resolve) it against the cluster's namespaces.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub(crate) file: Option<String>,
    pub(crate) tenant_labels: Vec<String>,
    pub(crate) platform: Vec<NamespacePattern>,
    pub(crate) tenants: Vec<TenantDecl>,
    pub(crate) default_trust: Trust,
    pub(crate) relations: Vec<Relation>,
    pub(crate) workloads: Vec<WorkloadRule>,
    pub(crate) patch_window_days: u32,
    pub(crate) max_replicas: u32,
    pub(crate) acceptances: Vec<Acceptance>,
}

impl Default for Policy {
    /// No policy file: every namespace is its own tenant (or joins the tenant its Capsule label
    /// names), platform namespaces are the defaults, and different tenants do not trust each other.
    fn default() -> Policy {
        Policy {
            file: None,
            tenant_labels: DEFAULT_TENANT_LABELS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            platform: DEFAULT_PLATFORM_NAMESPACES
                .iter()
                .map(|p| NamespacePattern::new(*p, Location::default()))
                .collect(),
            tenants: Vec::new(),
            default_trust: Trust::None,
            relations: Vec::new(),
            workloads: Vec::new(),
            patch_window_days: DEFAULT_PATCH_WINDOW_DAYS,
            max_replicas: DEFAULT_MAX_REPLICAS,
            acceptances: Vec::new(),
        }
    }
}

impl Policy {
    /// The file the policy was read from (`None` for the default policy).
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The namespace labels that name a tenant, in the order they are consulted.
    pub fn tenant_labels(&self) -> &[String] {
        &self.tenant_labels
    }

    /// Infrastructure namespaces (names and globs): the built-in ones, then those the policy adds.
    pub fn platform_namespaces(&self) -> &[NamespacePattern] {
        &self.platform
    }

    /// Trust between different tenants that no relation covers.
    pub fn default_trust(&self) -> Trust {
        self.default_trust
    }

    pub fn relations(&self) -> &[Relation] {
        &self.relations
    }

    pub fn workloads(&self) -> &[WorkloadRule] {
        &self.workloads
    }

    /// `host.patchWindowDays` (default 30).
    pub fn patch_window_days(&self) -> u32 {
        self.patch_window_days
    }

    /// `sharing.maxReplicas` (default 4).
    pub fn max_replicas(&self) -> u32 {
        self.max_replicas
    }

    pub fn acceptances(&self) -> &[Acceptance] {
        &self.acceptances
    }

    /// Names of the tenants the file declares, in file order.
    pub fn declared_tenants(&self) -> impl Iterator<Item = &str> {
        self.tenants.iter().map(|t| t.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in Latency::ALL {
            assert_eq!(Latency::parse(l.as_str()), Some(l));
        }
        for c in Contract::ALL {
            assert_eq!(Contract::parse(c.as_str()), Some(c));
        }
    }
}
