//! The components of NVIDIA's GPU software stack that advisories name, and where a cluster shows which
//! version of each it runs: container images of operand pods, DaemonSets and Deployments, the
//! ClusterPolicy and GPUCluster specs, and Helm's labels. Also the DCGM exporter's settings that decide
//! whether tenants' use of a shared GPU can be told apart and who may read its endpoints.
//!
//! Every name here is a fact with its source; the advisory data (`crates/rules/data`) says which
//! versions are affected by what.

use crate::fleet::{Fleet, NodeId, Workload, WorkloadKind};
use crate::location::ObjectRef;
use crate::version::Version;
use crate::vocab::Layer;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A component of the NVIDIA stack an advisory can affect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Component {
    ContainerToolkit,
    GpuOperator,
    DevicePlugin,
    MigManager,
    Driver,
    DraDriver,
    DcgmExporter,
    KaiScheduler,
}

impl Component {
    pub const ALL: [Component; 8] = [
        Component::ContainerToolkit,
        Component::GpuOperator,
        Component::DevicePlugin,
        Component::MigManager,
        Component::Driver,
        Component::DraDriver,
        Component::DcgmExporter,
        Component::KaiScheduler,
    ];

    /// The kebab-case name the advisory data and the JSON outputs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Component::ContainerToolkit => "container-toolkit",
            Component::GpuOperator => "gpu-operator",
            Component::DevicePlugin => "device-plugin",
            Component::MigManager => "mig-manager",
            Component::Driver => "driver",
            Component::DraDriver => "dra-driver",
            Component::DcgmExporter => "dcgm-exporter",
            Component::KaiScheduler => "kai-scheduler",
        }
    }

    pub fn parse(s: &str) -> Option<Component> {
        Component::ALL.into_iter().find(|c| c.as_str() == s)
    }

    pub fn title(self) -> &'static str {
        match self {
            Component::ContainerToolkit => "NVIDIA Container Toolkit",
            Component::GpuOperator => "NVIDIA GPU Operator",
            Component::DevicePlugin => "NVIDIA device plugin",
            Component::MigManager => "NVIDIA MIG manager",
            Component::Driver => "NVIDIA GPU driver",
            Component::DraDriver => "NVIDIA DRA driver",
            Component::DcgmExporter => "NVIDIA DCGM exporter",
            Component::KaiScheduler => "KAI Scheduler",
        }
    }

    /// The layer a flaw of the component opens: the node's stack reaches every tenant on the node;
    /// a scheduler reaches every tenant of the cluster through the control plane.
    pub fn layer(self) -> Layer {
        match self {
            Component::KaiScheduler => Layer::ControlPlane,
            _ => Layer::Host,
        }
    }

    /// Whether one installation serves the whole cluster (the operator, which configures every GPU
    /// node from wherever its pod runs; a scheduler), rather than each node running its own.
    pub fn cluster_wide(self) -> bool {
        matches!(self, Component::GpuOperator | Component::KaiScheduler)
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

/// How an image tag carries the component's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagVersion {
    /// The tag is the version (`v1.17.4-ubuntu20.04`).
    Leading,
    /// The tag is `<DCGM version>-<exporter version>[-<os>]` (`4.5.3-4.8.2-ubuntu22.04`): the second.
    Second,
}

/// An image that runs a component: its repository name (the last path segment), and a path segment
/// that must precede it when the name alone is too common.
#[derive(Debug, Clone, Copy)]
pub struct ComponentImage {
    pub component: Component,
    pub name: &'static str,
    pub under: Option<&'static str>,
    pub tag: TagVersion,
    pub source: &'static str,
}

/// The namespace the GPU Operator is installed into when nothing in the input says otherwise: its
/// install guide's `helm install ... -n gpu-operator --create-namespace` (NVIDIA GPU Operator
/// "Installing the NVIDIA GPU Operator"). OpenShift's is the platform adapter's.
pub const GPU_OPERATOR_NAMESPACE: &str = "gpu-operator";

/// The API group of the GPU Operator's custom resources: ClusterPolicy (`nvidia.com/v1`) and
/// GPUCluster (`nvidia.com/v1alpha1`) (NVIDIA/gpu-operator `api/nvidia/`).
pub const NVIDIA_API_GROUP: &str = "nvidia.com";

/// The images the GPU Operator, the projects' Helm charts and their static manifests run.
pub const IMAGES: &[ComponentImage] = &[
    ComponentImage {
        component: Component::ContainerToolkit,
        name: "container-toolkit",
        under: Some("nvidia"),
        tag: TagVersion::Leading,
        source: "NVIDIA GPU Operator values.yaml: toolkit nvcr.io/nvidia/k8s/container-toolkit",
    },
    ComponentImage {
        component: Component::GpuOperator,
        name: "gpu-operator",
        under: Some("nvidia"),
        tag: TagVersion::Leading,
        source: "NVIDIA GPU Operator values.yaml: operator and validator nvcr.io/nvidia/gpu-operator",
    },
    ComponentImage {
        component: Component::DevicePlugin,
        name: "k8s-device-plugin",
        under: Some("nvidia"),
        tag: TagVersion::Leading,
        source: "NVIDIA GPU Operator values.yaml and k8s-device-plugin chart: nvcr.io/nvidia/k8s-device-plugin",
    },
    ComponentImage {
        component: Component::MigManager,
        name: "k8s-mig-manager",
        under: Some("nvidia"),
        tag: TagVersion::Leading,
        source: "NVIDIA GPU Operator values.yaml: nvcr.io/nvidia/cloud-native/k8s-mig-manager",
    },
    ComponentImage {
        component: Component::DcgmExporter,
        name: "dcgm-exporter",
        under: Some("nvidia"),
        tag: TagVersion::Second,
        source: "NVIDIA GPU Operator values.yaml (4.6.0-4.8.3-distroless) and dcgm-exporter tags <DCGM>-<exporter>",
    },
    ComponentImage {
        component: Component::DraDriver,
        name: "dra-driver-nvidia-gpu",
        under: None,
        tag: TagVersion::Leading,
        source: "NVIDIA GPU Operator GPUCluster sample: registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu",
    },
    ComponentImage {
        component: Component::DraDriver,
        name: "k8s-dra-driver-gpu",
        under: Some("nvidia"),
        tag: TagVersion::Leading,
        source: "NVIDIA/k8s-dra-driver-gpu releases: nvcr.io/nvidia/k8s-dra-driver-gpu (before the move to kubernetes-sigs)",
    },
    ComponentImage {
        component: Component::KaiScheduler,
        name: "scheduler",
        under: Some("kai-scheduler"),
        tag: TagVersion::Leading,
        source: "KAI Scheduler chart values.yaml: ghcr.io/nvidia/kai-scheduler/<component>",
    },
    ComponentImage {
        component: Component::KaiScheduler,
        name: "binder",
        under: Some("kai-scheduler"),
        tag: TagVersion::Leading,
        source: "KAI Scheduler chart values.yaml: ghcr.io/nvidia/kai-scheduler/<component>",
    },
    ComponentImage {
        component: Component::KaiScheduler,
        name: "operator",
        under: Some("kai-scheduler"),
        tag: TagVersion::Leading,
        source: "KAI Scheduler chart values.yaml: ghcr.io/nvidia/kai-scheduler/<component>",
    },
    ComponentImage {
        component: Component::KaiScheduler,
        name: "podgrouper",
        under: Some("kai-scheduler"),
        tag: TagVersion::Leading,
        source: "KAI Scheduler chart values.yaml: ghcr.io/nvidia/kai-scheduler/<component>",
    },
    ComponentImage {
        component: Component::KaiScheduler,
        name: "admission",
        under: Some("kai-scheduler"),
        tag: TagVersion::Leading,
        source: "KAI Scheduler chart values.yaml: ghcr.io/nvidia/kai-scheduler/<component>",
    },
];

/// Helm charts by name, as the `helm.sh/chart: <name>-<version>` label writes them.
pub const CHARTS: &[(&str, Component, &str)] = &[
    (
        "gpu-operator",
        Component::GpuOperator,
        "NVIDIA/gpu-operator deployments/gpu-operator/Chart.yaml",
    ),
    (
        "nvidia-device-plugin",
        Component::DevicePlugin,
        "NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/Chart.yaml",
    ),
    (
        "dcgm-exporter",
        Component::DcgmExporter,
        "NVIDIA/dcgm-exporter deployment/Chart.yaml",
    ),
    (
        "kai-scheduler",
        Component::KaiScheduler,
        "kai-scheduler/KAI-Scheduler deployments/kai-scheduler/Chart.yaml",
    ),
    (
        "dra-driver-nvidia-gpu",
        Component::DraDriver,
        "kubernetes-sigs/dra-driver-nvidia-gpu deployments/helm/dra-driver-nvidia-gpu/Chart.yaml",
    ),
    (
        "nvidia-dra-driver-gpu",
        Component::DraDriver,
        "NVIDIA/k8s-dra-driver-gpu deployments/helm/nvidia-dra-driver-gpu/Chart.yaml",
    ),
];

/// Helm's chart label (`<chart>-<version>`), set by every chart above on what it installs.
pub const HELM_CHART_LABEL: &str = "helm.sh/chart";

/// The component an image runs and the version its tag names.
pub fn component_of_image(image: &str) -> Option<(Component, Version)> {
    let without_digest = image.split('@').next().unwrap_or(image);
    let mut segments: Vec<&str> = without_digest.split('/').collect();
    let last = segments.pop()?;
    let (name, tag) = last.split_once(':')?;
    let lower: Vec<String> = segments.iter().map(|s| s.to_ascii_lowercase()).collect();
    let name = name.to_ascii_lowercase();
    let known = IMAGES.iter().find(|i| {
        i.name == name
            && i.under
                .is_none_or(|u| lower.iter().any(|s| s == u || s.starts_with(u)))
    })?;
    let version = match known.tag {
        TagVersion::Leading => Version::parse(tag)?,
        TagVersion::Second => second_version(tag)?,
    };
    Some((known.component, version))
}

/// The second version of a `<DCGM>-<exporter>[-<os>]` tag, written without the rest of the tag.
fn second_version(tag: &str) -> Option<Version> {
    let (_, rest) = tag.split_once('-')?;
    Version::parse(rest.split('-').next()?)
}

/// The component and version a `helm.sh/chart` label names (`kai-scheduler-v0.13.0`).
pub fn component_of_chart(label: &str) -> Option<(Component, Version)> {
    CHARTS.iter().find_map(|(chart, component, _)| {
        let rest = label.strip_prefix(chart)?.strip_prefix('-')?;
        Some((*component, Version::parse(rest)?))
    })
}

/// Where the input shows a component's version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentVersion {
    pub component: Component,
    pub version: Version,
    /// In words: `image nvcr.io/nvidia/k8s/container-toolkit:v1.17.4`, `ClusterPolicy spec.toolkit.version`.
    pub source: String,
    /// The object it was read from.
    pub object: Option<ObjectRef>,
    /// The GPU nodes it applies to; empty for the whole cluster (a control-plane component, a spec
    /// that configures every node).
    pub nodes: Vec<NodeId>,
}

/// How a DCGM exporter is set up: from its container's environment and arguments, or from an
/// operator spec. The names are the exporter's flags and their variables
/// (NVIDIA/dcgm-exporter `pkg/cmd/app.go`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExporterSettings {
    pub version: Option<Version>,
    /// `--kubernetes` / `DCGM_EXPORTER_KUBERNETES`: metrics carry the pod, namespace and container
    /// of the GPU they are about (the flag's default is false; the GPU Operator's DaemonSet and the
    /// exporter's chart set it).
    pub kubernetes: bool,
    /// `--kubernetes-virtual-gpus` / `KUBERNETES_VIRTUAL_GPUS`: metrics of a GPU shared by
    /// time-slicing or MPS are given per pod.
    pub virtual_gpus: bool,
    /// `--kubernetes-enable-pod-labels` / `DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS`, or the
    /// operator's `enablePodLabels`: the pod's labels become metric labels.
    pub pod_labels: bool,
    /// `--web-config-file` / `DCGM_EXPORTER_WEB_CONFIG_FILE`: TLS and basic authentication
    /// (exporter-toolkit web configuration; without it the endpoints answer anyone).
    pub authenticated: bool,
    /// `--enable-pprof` / `DCGM_EXPORTER_ENABLE_PPROF`: `/debug/pprof/` is served (opt-in since
    /// exporter 4.8.2; 4.8.0 and 4.8.1 served it unconditionally, see the advisory data).
    pub pprof: bool,
    /// The exporter listens on the node's network (`hostNetwork`).
    pub host_network: bool,
}

/// The first DCGM exporter version that splits a shared GPU's metrics between the pods using it, by
/// process (utilisation and framebuffer per pod, under `KUBERNETES_VIRTUAL_GPUS`): NVIDIA/dcgm-exporter
/// pull request 594, "Add per-process GPU metrics for time-sharing and MIG" (commit fb5e3dc, first in
/// tag 4.5.3-4.8.2). Before it, the virtual-GPU mode gave each pod of a shared GPU the whole GPU's
/// metrics (dcgm-exporter issues 587 and 307: duplicated or attached to one pod).
pub const PER_POD_METRICS_SINCE: &str = "4.8.2";

/// The port the exporter listens on (`DCGM_EXPORTER_LISTEN=":9400"` in the GPU Operator's DaemonSet
/// and the exporter's chart).
pub const EXPORTER_PORT: u16 = 9400;

/// The toolkit variable (ClusterPolicy `spec.toolkit.env`) listing the namespaces whose pods the NRI
/// plugin lets request management CDI devices (`management.nvidia.com/gpu=all`: every GPU of the
/// node); by default only the GPU Operator's namespace may (GPU Operator 26.7.0 release notes and
/// `gpu-operator/cdi.rst`, "Requesting CDI Devices with the NRI Plugin"; a comma-separated list,
/// read by `nvidia-ctk-installer` as `--nri-management-cdi-device-namespaces`).
pub const NRI_MANAGEMENT_NAMESPACES_ENV: &str = "NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES";
/// The management CDI device that names every GPU of a node (same sources).
pub const MANAGEMENT_ALL_GPUS: &str = "management.nvidia.com/gpu=all";
/// The annotation domain the toolkit's NRI plugin reads CDI device names from
/// (`nvidia.cdi.k8s.io/container.<name>`, `/pod`), and the device kind it gives only to pods of the
/// namespaces it allows, skipping the whole annotation of a pod elsewhere (NVIDIA Container Toolkit
/// `cmd/nvidia-ctk-installer/container/runtime/nri/plugin.go`, `parseCDIDevices`).
pub const NRI_CDI_ANNOTATION_DOMAIN: &str = "nvidia.cdi.k8s.io";
pub const MANAGEMENT_DEVICE_KIND: &str = "management.nvidia.com/gpu";

/// The `schedulerName` of pods KAI Scheduler schedules (KAI Scheduler `docs/quickstart/pods/gpu-pod.yaml`).
pub const KAI_SCHEDULER_NAME: &str = "kai-scheduler";

/// The exporter variables gpu-trust reads (ingest keeps a container's variables with these prefixes).
pub const EXPORTER_ENV_PREFIXES: &[&str] = &["DCGM_EXPORTER_", "KUBERNETES_VIRTUAL_GPUS"];

const ENV_KUBERNETES: &str = "DCGM_EXPORTER_KUBERNETES";
const ENV_VIRTUAL_GPUS: &str = "KUBERNETES_VIRTUAL_GPUS";
const ENV_POD_LABELS: &str = "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS";
const ENV_WEB_CONFIG: &str = "DCGM_EXPORTER_WEB_CONFIG_FILE";
const ENV_PPROF: &str = "DCGM_EXPORTER_ENABLE_PPROF";
const FLAG_KUBERNETES: &str = "kubernetes";
const FLAG_VIRTUAL_GPUS: &str = "kubernetes-virtual-gpus";
const FLAG_POD_LABELS: &str = "kubernetes-enable-pod-labels";
const FLAG_WEB_CONFIG: &str = "web-config-file";
const FLAG_PPROF: &str = "enable-pprof";

impl ExporterSettings {
    /// The settings a container's environment and arguments give (a flag beats its variable, as
    /// urfave/cli reads them).
    pub fn read(
        version: Option<Version>,
        env: &BTreeMap<String, String>,
        argv: &[String],
        host_network: bool,
    ) -> ExporterSettings {
        let truthy = |v: &str| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "true" | "1" | "t" | "yes"
            )
        };
        let flag = |name: &str| -> Option<Option<&str>> {
            argv.iter().find_map(|a| {
                let rest = a.strip_prefix("--").or_else(|| a.strip_prefix('-'))?;
                match rest.split_once('=') {
                    Some((n, v)) if n == name => Some(Some(v)),
                    None if rest == name => Some(None),
                    _ => None,
                }
            })
        };
        let boolean = |name: &str, var: &str| match flag(name) {
            Some(Some(v)) => truthy(v),
            Some(None) => true,
            None => env.get(var).is_some_and(|v| truthy(v)),
        };
        let text = |name: &str, var: &str| match flag(name) {
            Some(Some(v)) => !v.trim().is_empty(),
            Some(None) => true,
            None => env.get(var).is_some_and(|v| !v.trim().is_empty()),
        };
        ExporterSettings {
            version,
            kubernetes: boolean(FLAG_KUBERNETES, ENV_KUBERNETES),
            virtual_gpus: boolean(FLAG_VIRTUAL_GPUS, ENV_VIRTUAL_GPUS),
            pod_labels: boolean(FLAG_POD_LABELS, ENV_POD_LABELS),
            authenticated: text(FLAG_WEB_CONFIG, ENV_WEB_CONFIG),
            pprof: boolean(FLAG_PPROF, ENV_PPROF),
            host_network,
        }
    }

    /// The settings of the exporter an operator spec deploys: the operator's DaemonSet sets
    /// `DCGM_EXPORTER_KUBERNETES=true` (GPU Operator `assets/state-dcgm-exporter/0800_daemonset.yaml`)
    /// and `enablePodLabels` sets the pod-label variable; `env` and `args` are added to the container.
    pub fn of_spec(spec: &crate::fleet::ExporterSpec) -> ExporterSettings {
        let mut env = spec.env.clone();
        env.entry(ENV_KUBERNETES.to_string())
            .or_insert_with(|| "true".to_string());
        if spec.pod_labels == Some(true) {
            env.insert(ENV_POD_LABELS.to_string(), "true".to_string());
        }
        let version = spec.tag.as_deref().and_then(second_version);
        ExporterSettings::read(version, &env, &spec.args, spec.host_network == Some(true))
    }
}

/// A DCGM exporter the input shows: its settings, where they were read, and the GPU nodes it runs on
/// (empty: every GPU node, as an operator spec deploys it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exporter {
    pub settings: ExporterSettings,
    pub object: Option<ObjectRef>,
    pub namespace: Option<String>,
    pub nodes: Vec<NodeId>,
}

/// The GPU nodes a workload runs on: its node when scheduled, else the GPU nodes it may be placed on.
fn workload_nodes(fleet: &Fleet, w: &Workload) -> Vec<NodeId> {
    match w.placement.node {
        Some(n) => vec![n],
        None => fleet
            .permitted_nodes(w)
            .iter()
            .copied()
            .filter(|n| fleet.nodes.get(*n).is_some_and(|n| n.gpu.is_some()))
            .collect(),
    }
}

/// The DCGM exporters of the input: every workload running the exporter's image (the pods of a
/// DaemonSet in the input stand for it), else the exporter the ClusterPolicy or GPUCluster spec deploys.
pub fn exporters(fleet: &Fleet) -> Vec<Exporter> {
    let mut out: Vec<Exporter> = Vec::new();
    let daemonset_pods: std::collections::BTreeSet<(&str, &str)> = fleet
        .workloads
        .iter()
        .filter(|w| w.kind == WorkloadKind::Pod)
        .filter_map(|w| {
            let name = w.owner.as_deref()?.strip_prefix("DaemonSet/")?;
            Some((w.namespace.as_str(), name))
        })
        .collect();
    for w in &fleet.workloads {
        if w.kind == WorkloadKind::DaemonSet
            && daemonset_pods.contains(&(w.namespace.as_str(), w.object.name.as_str()))
        {
            continue;
        }
        for c in w.containers.iter().filter(|c| !c.is_init) {
            let Some((Component::DcgmExporter, version)) = component_of_image(&c.image) else {
                continue;
            };
            out.push(Exporter {
                settings: ExporterSettings::read(
                    Some(version),
                    &c.env,
                    &c.argv,
                    w.pod_security.host_network,
                ),
                object: Some(w.object.clone()),
                namespace: Some(w.namespace.clone()),
                nodes: workload_nodes(fleet, w),
            });
        }
    }
    if out.is_empty() {
        let specs = [
            fleet.cluster_policy.as_ref().and_then(|c| {
                Some((
                    c.dcgm_exporter.as_ref()?,
                    c.object.clone(),
                    c.operator_namespace.clone(),
                ))
            }),
            fleet
                .gpu_cluster
                .as_ref()
                .and_then(|g| Some((g.dcgm_exporter.as_ref()?, g.object.clone(), None))),
        ];
        for (spec, object, namespace) in specs.into_iter().flatten() {
            if spec.enabled == Some(false) {
                continue;
            }
            out.push(Exporter {
                settings: ExporterSettings::of_spec(spec),
                object,
                namespace,
                nodes: Vec::new(),
            });
        }
    }
    out
}

/// Every version of a stack component the input shows, sorted: container images of pods and
/// workload templates (a DaemonSet's template stands for its nodes when its pods are not in the
/// input), Helm's chart labels, and the ClusterPolicy and GPUCluster specs. The per-node driver and
/// toolkit versions ingest resolved are on the nodes (`GpuNode`), not here.
pub fn versions(fleet: &Fleet) -> Vec<ComponentVersion> {
    let mut out: Vec<ComponentVersion> = Vec::new();
    for w in &fleet.workloads {
        for c in &w.containers {
            let Some((component, version)) = component_of_image(&c.image) else {
                continue;
            };
            if matches!(component, Component::ContainerToolkit | Component::Driver) {
                continue;
            }
            out.push(ComponentVersion {
                component,
                version,
                source: format!("image {}", c.image),
                object: Some(w.object.clone()),
                nodes: if component.cluster_wide() {
                    Vec::new()
                } else {
                    workload_nodes(fleet, w)
                },
            });
        }
        if let Some((component, version)) = w
            .labels
            .get(HELM_CHART_LABEL)
            .and_then(|l| component_of_chart(l))
        {
            out.push(ComponentVersion {
                component,
                version,
                source: format!("Helm label {HELM_CHART_LABEL}"),
                object: Some(w.object.clone()),
                nodes: Vec::new(),
            });
        }
    }
    if let Some(cp) = &fleet.cluster_policy {
        let specs = [
            (
                Component::DevicePlugin,
                cp.device_plugin_version.clone(),
                "ClusterPolicy spec.devicePlugin.version",
            ),
            (
                Component::MigManager,
                cp.mig_manager_version.clone(),
                "ClusterPolicy spec.migManager.version",
            ),
            (
                Component::DcgmExporter,
                cp.dcgm_exporter
                    .as_ref()
                    .and_then(|e| ExporterSettings::of_spec(e).version),
                "ClusterPolicy spec.dcgmExporter.version",
            ),
        ];
        push_specs(&mut out, specs, cp.object.as_ref());
    }
    if let Some(g) = &fleet.gpu_cluster {
        let specs = [
            (
                Component::DraDriver,
                g.dra_driver_version.clone(),
                "GPUCluster spec.draDriver.version",
            ),
            (
                Component::DcgmExporter,
                g.dcgm_exporter
                    .as_ref()
                    .and_then(|e| ExporterSettings::of_spec(e).version),
                "GPUCluster spec.dcgmExporter.version",
            ),
        ];
        push_specs(&mut out, specs, g.object.as_ref());
    }
    out.sort();
    out.dedup();
    out
}

/// The versions a custom resource's spec sets, each with the field it was read from.
fn push_specs(
    out: &mut Vec<ComponentVersion>,
    specs: impl IntoIterator<Item = (Component, Option<Version>, &'static str)>,
    object: Option<&ObjectRef>,
) {
    for (component, version, source) in specs {
        if let Some(version) = version {
            out.push(ComponentVersion {
                component,
                version,
                source: source.to_string(),
                object: object.cloned(),
                nodes: Vec::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn images_name_components_and_versions() {
        let cases = [
            (
                "nvcr.io/nvidia/k8s/container-toolkit:v1.17.4-ubuntu20.04",
                Component::ContainerToolkit,
                "1.17.4",
            ),
            (
                "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-ubuntu22.04",
                Component::DcgmExporter,
                "4.8.2",
            ),
            (
                "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless",
                Component::DcgmExporter,
                "4.8.3",
            ),
            (
                "ghcr.io/nvidia/kai-scheduler/scheduler:v0.12.6",
                Component::KaiScheduler,
                "0.12.6",
            ),
            (
                "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.1-ubuntu20.04",
                Component::MigManager,
                "0.12.1",
            ),
            (
                "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0",
                Component::DraDriver,
                "0.4.0",
            ),
        ];
        for (image, component, version) in cases {
            assert_eq!(
                component_of_image(image),
                Some((component, v(version))),
                "{image}"
            );
        }
        // A scheduler image outside KAI's registry path is not KAI's.
        assert_eq!(
            component_of_image("registry.k8s.io/kube-scheduler:v1.34.0"),
            None
        );
        assert_eq!(component_of_image("example.com/scheduler:v1"), None);
        assert_eq!(
            component_of_image("nvcr.io/nvidia/k8s/dcgm-exporter@sha256:abc"),
            None
        );
    }

    #[test]
    fn chart_labels_name_components() {
        assert_eq!(
            component_of_chart("kai-scheduler-v0.13.0"),
            Some((Component::KaiScheduler, v("0.13.0")))
        );
        assert_eq!(
            component_of_chart("gpu-operator-v26.3.1"),
            Some((Component::GpuOperator, v("26.3.1")))
        );
        assert_eq!(component_of_chart("gpu-operator"), None);
        assert_eq!(component_of_chart("other-1.0"), None);
    }

    #[test]
    fn exporter_flags_beat_variables() {
        let env: BTreeMap<String, String> = [
            ("DCGM_EXPORTER_KUBERNETES".to_string(), "true".to_string()),
            ("KUBERNETES_VIRTUAL_GPUS".to_string(), "true".to_string()),
            ("DCGM_EXPORTER_ENABLE_PPROF".to_string(), "true".to_string()),
        ]
        .into();
        let s = ExporterSettings::read(None, &env, &["--enable-pprof=false".into()], false);
        assert!(s.kubernetes && s.virtual_gpus && !s.pprof && !s.authenticated);
        let s = ExporterSettings::read(
            None,
            &BTreeMap::new(),
            &["--web-config-file=/etc/web.yaml".into()],
            true,
        );
        assert!(s.authenticated && s.host_network && !s.kubernetes);
        let spec = crate::fleet::ExporterSpec {
            tag: Some("4.5.3-4.8.2-ubuntu22.04".into()),
            pod_labels: Some(true),
            ..Default::default()
        };
        let s = ExporterSettings::of_spec(&spec);
        assert_eq!(s.version, Some(v("4.8.2")));
        assert!(s.kubernetes && s.pod_labels && !s.virtual_gpus);
    }
}
