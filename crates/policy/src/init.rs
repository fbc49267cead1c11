//! A tenancy policy to start from (`gpu-trust policy init`): the cluster's namespaces grouped into
//! tenants by the labels multi-tenancy tools set, the platform namespaces recognised, and where no
//! tool says, each namespace a tenant of its own, marked as a guess. Trust between tenants stays the
//! default, none. What each tool writes, with its source:
//!
//! - **Capsule** labels every namespace of a Tenant `capsule.clastix.io/tenant: <tenant>`
//!   ([`crate::DEFAULT_TENANT_LABELS`]).
//! - **HNC** (hierarchical namespaces) labels each namespace `<ancestor>.tree.hnc.x-k8s.io/depth:
//!   <n>` for itself (0) and every ancestor, which only HNC may set (kubernetes.io blog,
//!   "Introducing Hierarchical Namespaces", 2020-08-14): a tree is one tenant, named by its root,
//!   the ancestor at the greatest depth.
//! - **vCluster** syncs a virtual cluster's pods into its host namespace labelled
//!   `vcluster.loft.sh/managed-by: <virtual cluster>` (the model's `Workload::virtual_cluster`): the
//!   host namespace is that virtual cluster's tenant.
//! - **Kubeflow** profiles: the profile controller labels each profile's namespace, named after the
//!   profile, `app.kubernetes.io/part-of: kubeflow-profile` (kubeflow/kubeflow
//!   `components/profile-controller/controllers/profile_controller.go`,
//!   `defaultKubeflowNamespaceLabels`): a profile is a tenant.
//! - **Team labels**: no standard names them; `team` and `tenant` are the names in common use, so
//!   a tenant drawn from them is marked as a guess.
//! - **Platform namespaces**: the built-in ones ([`crate::DEFAULT_PLATFORM_NAMESPACES`]) are not
//!   written again; a namespace named `*-system` (the convention of `kube-system`) is proposed as
//!   one, as a guess.

use crate::Policy;
use gpu_trust_model::fleet::Fleet;
use std::collections::{BTreeMap, BTreeSet};

/// HNC's tree labels end so, after the ancestor's name.
const HNC_TREE_SUFFIX: &str = ".tree.hnc.x-k8s.io/depth";
/// The label Kubeflow's profile controller puts on a profile's namespace, and its value.
const KUBEFLOW_PROFILE: (&str, &str) = ("app.kubernetes.io/part-of", "kubeflow-profile");
/// Team labels in common use, which no standard defines.
const TEAM_LABELS: [&str; 2] = ["team", "tenant"];
/// The suffix of system namespaces by Kubernetes' convention (`kube-system`).
const SYSTEM_SUFFIX: &str = "-system";

/// Why a namespace went to its tenant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Capsule,
    /// An HNC tree, with its root.
    Hnc,
    VCluster,
    KubeflowProfile,
    /// A team label, with its key: a guess.
    TeamLabel(String),
    /// No label says: the namespace alone, a guess.
    Alone,
}

impl Source {
    /// Whether gpu-trust guessed the tenant (no multi-tenancy tool said).
    pub fn guessed(&self) -> bool {
        matches!(self, Source::TeamLabel(_) | Source::Alone)
    }
}

/// One proposed tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftTenant {
    pub name: String,
    pub namespaces: Vec<String>,
    /// Why its namespaces were put together, each reason once.
    pub sources: Vec<Source>,
}

/// The proposed policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Draft {
    pub tenants: Vec<DraftTenant>,
    /// Namespaces proposed as platform namespaces (guesses by name).
    pub platform: Vec<String>,
    /// Namespaces of the input that are built-in platform namespaces (not written again).
    pub builtin_platform: Vec<String>,
}

/// The tenant of each namespace of `fleet`, by what multi-tenancy tools labelled.
pub fn draft(fleet: &Fleet) -> Draft {
    let builtin = Policy::default().resolve(&fleet.namespaces);
    // The virtual cluster each host namespace holds.
    let mut virtual_clusters: BTreeMap<&str, &str> = BTreeMap::new();
    for w in &fleet.workloads {
        if let Some(name) = w.virtual_cluster().filter(|n| !n.is_empty()) {
            virtual_clusters.entry(w.namespace.as_str()).or_insert(name);
        }
    }
    let mut out = Draft::default();
    let mut tenants: BTreeMap<String, (BTreeSet<String>, BTreeSet<Source>)> = BTreeMap::new();
    for ns in &fleet.namespaces {
        let name = ns.name.as_str();
        if builtin.is_platform(name) {
            out.builtin_platform.push(name.to_string());
            continue;
        }
        let labels = &ns.labels;
        let hnc_root = labels
            .iter()
            .filter_map(|(k, v)| Some((v.parse::<u32>().ok()?, k.strip_suffix(HNC_TREE_SUFFIX)?)))
            .max();
        let (tenant, source) = if let Some(t) = labels.get(crate::DEFAULT_TENANT_LABELS[0]) {
            (t.clone(), Source::Capsule)
        } else if let Some((_, root)) = hnc_root {
            (root.to_string(), Source::Hnc)
        } else if let Some(vc) = virtual_clusters.get(name) {
            ((*vc).to_string(), Source::VCluster)
        } else if labels.get(KUBEFLOW_PROFILE.0).map(String::as_str) == Some(KUBEFLOW_PROFILE.1) {
            (name.to_string(), Source::KubeflowProfile)
        } else if let Some((k, v)) = TEAM_LABELS
            .iter()
            .find_map(|k| labels.get(*k).filter(|v| !v.is_empty()).map(|v| (k, v)))
        {
            (v.clone(), Source::TeamLabel((*k).to_string()))
        } else if name.ends_with(SYSTEM_SUFFIX) {
            out.platform.push(name.to_string());
            continue;
        } else {
            (name.to_string(), Source::Alone)
        };
        let e = tenants.entry(tenant).or_default();
        e.0.insert(name.to_string());
        e.1.insert(source);
    }
    out.platform.sort();
    out.builtin_platform.sort();
    out.tenants = tenants
        .into_iter()
        .map(|(name, (namespaces, sources))| DraftTenant {
            name,
            namespaces: namespaces.into_iter().collect(),
            sources: sources.into_iter().collect(),
        })
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::fleet::{NamespaceInfo, Workload};

    fn ns(name: &str, labels: &[(&str, &str)]) -> NamespaceInfo {
        NamespaceInfo {
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            object: None,
        }
    }

    #[test]
    fn tenants_come_from_the_labels_each_tool_sets_and_a_guess_says_so() {
        let mut fleet = Fleet {
            namespaces: vec![
                ns("acme-dev", &[("capsule.clastix.io/tenant", "acme")]),
                ns("acme-prod", &[("capsule.clastix.io/tenant", "acme")]),
                ns("org", &[("org.tree.hnc.x-k8s.io/depth", "0")]),
                ns(
                    "org-svc",
                    &[
                        ("org.tree.hnc.x-k8s.io/depth", "1"),
                        ("org-svc.tree.hnc.x-k8s.io/depth", "0"),
                    ],
                ),
                ns("vc-host", &[]),
                ns(
                    "alice",
                    &[("app.kubernetes.io/part-of", "kubeflow-profile")],
                ),
                ns("ml-a", &[("team", "ml")]),
                ns("ml-b", &[("team", "ml")]),
                ns("default", &[]),
                ns("cert-system", &[]),
                ns("kube-system", &[]),
                ns("gpu-operator", &[]),
            ],
            ..Fleet::default()
        };
        let mut pod = Workload {
            object: gpu_trust_model::ObjectRef {
                kind: "Pod".into(),
                namespace: Some("vc-host".into()),
                name: "p-x-default-x-vc1".into(),
                location: gpu_trust_model::Location::new("c.yaml", 1, 1),
            },
            namespace: "vc-host".into(),
            kind: gpu_trust_model::fleet::WorkloadKind::Pod,
            role: None,
            replicas: 1,
            class: Default::default(),
            labels: Default::default(),
            annotations: Default::default(),
            scheduler_name: None,
            service_account: None,
            gpu: Default::default(),
            containers: Vec::new(),
            pod_security: Default::default(),
            inference: None,
            peak_memory_mib: None,
            placement: Default::default(),
            owner: None,
        };
        pod.labels
            .insert("vcluster.loft.sh/managed-by".into(), "vc1".into());
        fleet.workloads.push(pod);
        let d = draft(&fleet);
        let got: Vec<(&str, Vec<&str>, bool)> = d
            .tenants
            .iter()
            .map(|t| {
                (
                    t.name.as_str(),
                    t.namespaces.iter().map(String::as_str).collect(),
                    t.sources.iter().any(Source::guessed),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("acme", vec!["acme-dev", "acme-prod"], false),
                ("alice", vec!["alice"], false),
                ("default", vec!["default"], true),
                ("ml", vec!["ml-a", "ml-b"], true),
                ("org", vec!["org", "org-svc"], false),
                ("vc1", vec!["vc-host"], false),
            ]
        );
        assert_eq!(d.platform, ["cert-system"]);
        assert_eq!(d.builtin_platform, ["gpu-operator", "kube-system"]);
    }
}
