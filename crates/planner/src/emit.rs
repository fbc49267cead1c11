//! The artifacts the NVIDIA GPU Operator consumes, written from a plan in their real formats:
//!
//! - a mig-parted ConfigMap (`version: v1`, `mig-configs`, one named config per distinct GPU layout set,
//!   `devices` as lists of GPU indices, `device-filter` the model's PCI ids), plus `all-disabled`;
//! - the device plugin ConfigMap, one key per sharing config (`version: v1`, `sharing.timeSlicing` or
//!   `sharing.mps`), plus `exclusive` for nodes that share nothing;
//! - a merge patch for the ClusterPolicy that names both ConfigMaps;
//! - a script that labels each node (`nvidia.com/mig.config`, `nvidia.com/device-plugin.config`) and
//!   taints it for its tenant node pool;
//! - one pod-template patch per workload (resource, nodeSelector, tolerations; see [`crate::patch`]).
//!
//! The formats: mig-parted `api/spec/v1` (unknown keys are rejected, so only its keys are written) and
//! the k8s-device-plugin `api/config/v1`, as the GPU Operator documentation configures them.
//!
//! How the GPU Operator turns them into running operands decides three things here:
//!
//! - **MIG strategy per node.** The operator gives the device plugin, GPU Feature Discovery and the MPS
//!   daemon `MIG_STRATEGY` from `spec.mig.strategy` of the ClusterPolicy when it is set, and leaves it
//!   unset otherwise "to let plugin decide this per node" (NVIDIA/gpu-operator
//!   `controllers/object_controls.go`, `applyMIGConfiguration`, lines 2787-2797); the plugin takes the
//!   environment over its config file (NVIDIA/k8s-device-plugin `api/config/v1/config.go` lines 42-56,
//!   `flags.go` lines 31-51), and refuses MPS with `mixed` (`cmd/nvidia-device-plugin/main.go` lines
//!   227-229). A plan with MIG on some nodes and MPS on others is therefore one ClusterPolicy without
//!   `spec.mig.strategy` (the merge patch removes it; the Helm chart leaves it out when
//!   `mig.strategy` is empty, `deployments/gpu-operator/templates/clusterpolicy.yaml` lines 139-142),
//!   and each node's config says `mixed` or, on MPS nodes, `none`.
//! - **Device list strategy.** The operator sets `DEVICE_LIST_STRATEGY` on the device plugin container
//!   (`envvar` in `assets/state-device-plugin/0500_daemonset.yaml` lines 77-78, `cdi-annotations,cdi-cri`
//!   with CDI on, `object_controls.go` line 1529), which beats the file's `deviceListStrategy`; the
//!   ClusterPolicy's `devicePlugin.env` is applied after both (`object_controls.go` lines 1599-1624), so
//!   `volume-mounts` is set there, paired with the toolkit's refusal of `NVIDIA_VISIBLE_DEVICES` from
//!   unprivileged containers.
//! - **Images.** The operator builds `repository/image:version` and refuses a version without the other
//!   two (`api/nvidia/v1/clusterpolicy_types.go` lines 2054-2073); NVIDIA publishes the device plugin and
//!   toolkit with `v`-prefixed tags (`deployments/gpu-operator/values.yaml` lines 229-245).

use crate::dra;
use crate::file::PlanInput;
use crate::patch::{self, Objects, PodPatch, Request};
use crate::plan::{DeviceSharing, Plan, PlanNode, POOL_LABEL, TENANTS_TAINT};
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::{GpuWorkload, MigStrategy, SharingStrategy};
use gpu_trust_model::labels;
use gpu_trust_model::resource;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The mig-parted config that disables MIG on every GPU (the GPU Operator's default name for it).
pub const ALL_DISABLED: &str = "all-disabled";
/// The device plugin config key for nodes that share nothing.
pub const EXCLUSIVE_CONFIG: &str = "exclusive";
/// Names of the emitted ConfigMaps, and the key mig-parted reads.
pub const MIG_CONFIGMAP: &str = "gpu-trust-mig-parted-config";
pub const MIG_CONFIG_KEY: &str = "config.yaml";
pub const DEVICE_PLUGIN_CONFIGMAP: &str = "gpu-trust-device-plugin-config";
/// The ClusterPolicy's `sandboxWorkloads.mode` of confidential containers.
pub const SANDBOX_MODE: &str = "kata";
/// The ClusterPolicy the GPU Operator's Helm chart creates.
pub const CLUSTER_POLICY: &str = "cluster-policy";

/// MIG strategies the emitted device plugin configs use: `mixed` everywhere but on MPS nodes.
pub const MIG_STRATEGY_MIXED: &str = MigStrategy::Mixed.as_str();
pub const MIG_STRATEGY_NONE: &str = MigStrategy::None.as_str();
/// How the device plugin passes devices to the runtime: as volume mounts only, so that no container
/// gets a GPU by setting `NVIDIA_VISIBLE_DEVICES` (k8s-device-plugin README, `deviceListStrategy`).
pub const DEVICE_LIST_STRATEGY: &str = "volume-mounts";
/// The device plugin's environment variable for it (NVIDIA/k8s-device-plugin
/// `cmd/nvidia-device-plugin/main.go`, flag `device-list-strategy`, `EnvVars: DEVICE_LIST_STRATEGY`).
pub const DEVICE_LIST_STRATEGY_ENV: &str = "DEVICE_LIST_STRATEGY";
/// The images the GPU Operator's Helm chart deploys for the device plugin and the container
/// toolkit (NVIDIA/gpu-operator `deployments/gpu-operator/values.yaml` lines 229-245), as
/// (repository, image).
pub const DEVICE_PLUGIN_IMAGE: (&str, &str) = ("nvcr.io/nvidia", "k8s-device-plugin");
pub const TOOLKIT_IMAGE: (&str, &str) = ("nvcr.io/nvidia/k8s", "container-toolkit");

/// GPU Feature Discovery's value of `<resource>.sharing-strategy` for a way of handing devices out.
/// Pod patches select on `<resource>.sharing-strategy` and `<resource>.replicas`, so that a pod only
/// lands where the device plugin hands its resource out the way the plan does.
pub fn gfd_strategy(sharing: DeviceSharing) -> &'static str {
    // GFD labels the strategy as the device plugin spells it (`labels::SHARING_*`).
    sharing.strategy().as_str()
}

/// The node selector that admits only nodes where `resource` is handed out as `sharing`, each device
/// advertised `replicas` times (1 when not shared), as GPU Feature Discovery labels the node.
pub fn mechanism_selector(
    resource: &str,
    sharing: DeviceSharing,
    replicas: u32,
) -> BTreeMap<String, String> {
    let replicas = if sharing == DeviceSharing::Exclusive {
        1
    } else {
        replicas
    };
    BTreeMap::from([
        (
            labels::of_resource(resource, labels::RESOURCE_SHARING),
            gfd_strategy(sharing).to_string(),
        ),
        (
            labels::of_resource(resource, labels::RESOURCE_REPLICAS),
            replicas.to_string(),
        ),
    ])
}

/// The device plugin MIG strategy of a planned node's config: `none` on MPS nodes, else `mixed`.
pub fn node_mig_strategy(node: &PlanNode) -> &'static str {
    if node.sharing.strategy == SharingStrategy::Mps {
        MIG_STRATEGY_NONE
    } else {
        MIG_STRATEGY_MIXED
    }
}

/// The per-resource labels GPU Feature Discovery writes on a planned node for the resources its
/// pods request, from the node's device plugin config: for whole GPUs (`nvidia.com/gpu`, on nodes
/// with whole GPUs in use) and, under the mixed strategy, for each MIG profile of the node,
/// `<resource>.replicas` and `<resource>.sharing-strategy` (`none` unless the resource is advertised
/// more than once per device), and `<resource>.count` for the profiles; `internal/lm/resource.go` lines 159-178,
/// `internal/lm/mig-strategy.go` lines 266-297). Idle GPUs, which GPU Feature Discovery labels too,
/// are left out: no planned pod selects them; so are a confidential node's passed-through GPUs.
pub fn gfd_resource_labels(node: &PlanNode) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let strategy = |replicas: u32| -> &'static str {
        if replicas > 1 {
            node.sharing.strategy.as_str()
        } else {
            SharingStrategy::None.as_str()
        }
    };
    let mut put = |resource: &str, count: Option<usize>, replicas: u32| {
        if let Some(count) = count {
            out.insert(
                labels::of_resource(resource, labels::RESOURCE_COUNT),
                count.to_string(),
            );
        }
        out.insert(
            labels::of_resource(resource, labels::RESOURCE_REPLICAS),
            replicas.to_string(),
        );
        out.insert(
            labels::of_resource(resource, labels::RESOURCE_SHARING),
            strategy(replicas).to_string(),
        );
    };
    let whole = node
        .gpus
        .iter()
        .filter(|g| g.mig.is_empty() && !g.assignments.is_empty())
        .count();
    if whole > 0 && !node.confidential {
        // `nvidia.com/gpu.count` counts every GPU of the model, MIG or not (the snapshot writes it).
        let resource = resource::GPU;
        let replicas = node.sharing.resources.get(resource).copied().unwrap_or(1);
        put(resource, None, replicas);
    }
    if node_mig_strategy(node) == MIG_STRATEGY_MIXED {
        let mut per_profile: BTreeMap<String, usize> = BTreeMap::new();
        for m in node.gpus.iter().flat_map(|g| &g.mig) {
            let resource = match catalogue::lookup(&node.model).and_then(|x| x.profile(&m.profile))
            {
                Some(p) => p.resource_name(),
                None => catalogue::mig_resource(&m.profile),
            };
            *per_profile.entry(resource).or_default() += 1;
        }
        for (resource, count) in per_profile {
            let replicas = node.sharing.resources.get(&resource).copied().unwrap_or(1);
            put(&resource, Some(count), replicas);
        }
    }
    out
}

/// The tag NVIDIA publishes for a version: `v` and the version as written, without a leading `v` of
/// its own (`0.18.1` and `v0.18.1` both give `v0.18.1`; a suffix such as `-ubi9` stays).
pub fn image_tag(version: &str) -> String {
    let v = version.trim();
    format!("v{}", v.strip_prefix(['v', 'V']).unwrap_or(v))
}

/// A mig-parted config file (`api/spec/v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigPartedConfig {
    pub version: String,
    #[serde(rename = "mig-configs")]
    pub mig_configs: BTreeMap<String, Vec<MigDeviceSpec>>,
}

/// One entry of a named mig-parted config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigDeviceSpec {
    #[serde(
        rename = "device-filter",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub device_filter: Option<Vec<String>>,
    pub devices: Devices,
    #[serde(rename = "mig-enabled")]
    pub mig_enabled: bool,
    #[serde(rename = "mig-devices", default)]
    pub mig_devices: BTreeMap<String, u32>,
}

/// `devices: all` or a list of GPU indices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Devices {
    List(Vec<u32>),
    All(String),
}

/// A k8s-device-plugin config file (`api/config/v1`), the parts the planner writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevicePluginConfig {
    pub version: String,
    pub flags: PluginFlags,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sharing: Option<Sharing>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PluginFlags {
    /// `mixed` (MIG instances as `nvidia.com/mig-<profile>`), or `none` on MPS nodes, where the plugin
    /// refuses `mixed`.
    pub mig_strategy: String,
    pub fail_on_init_error: bool,
    pub plugin: PluginSettings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PluginSettings {
    /// `volume-mounts`: devices reach a container only through the device plugin's mounts, so an
    /// unprivileged container cannot ask for GPUs with `NVIDIA_VISIBLE_DEVICES` (the hardened
    /// combination with the toolkit settings of [`cluster_policy_patch`]).
    pub device_list_strategy: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Sharing {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub time_slicing: Option<ReplicatedResources>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mps: Option<ReplicatedResources>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplicatedResources {
    pub rename_by_default: bool,
    pub fail_requests_greater_than_one: bool,
    pub resources: Vec<ReplicatedResource>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicatedResource {
    pub name: String,
    pub replicas: u32,
}

/// One emitted file: its path under the `--emit` folder and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub path: String,
    pub content: String,
}

fn yaml<T: Serialize>(value: &T) -> String {
    // Serialising plain data (strings, numbers, maps) cannot fail; an empty text is the safe answer.
    serde_saphyr::to_string(value).unwrap_or_default()
}

/// The mig-parted config of the plan: one named config per distinct layout set, plus `all-disabled`.
pub fn mig_parted_config(plan: &Plan) -> MigPartedConfig {
    let mut configs: BTreeMap<String, Vec<MigDeviceSpec>> = BTreeMap::new();
    configs.insert(
        ALL_DISABLED.to_string(),
        vec![MigDeviceSpec {
            device_filter: None,
            devices: Devices::All("all".to_string()),
            mig_enabled: false,
            mig_devices: BTreeMap::new(),
        }],
    );
    for node in &plan.nodes {
        let Some(name) = &node.mig_config else {
            continue;
        };
        if configs.contains_key(name) {
            continue;
        }
        configs.insert(name.clone(), node_mig_entries(node));
    }
    MigPartedConfig {
        version: "v1".to_string(),
        mig_configs: configs,
    }
}

/// The entries of one node's mig-parted config: GPUs with the same layout share an entry; GPUs
/// without MIG (whole-GPU use, idle) are listed with MIG disabled.
fn node_mig_entries(node: &PlanNode) -> Vec<MigDeviceSpec> {
    let filter = catalogue::lookup(&node.model).map(|m| {
        m.pci_device_ids
            .iter()
            .map(|id| id.to_string())
            .collect::<Vec<_>>()
    });
    let mut by_layout: BTreeMap<BTreeMap<String, u32>, Vec<u32>> = BTreeMap::new();
    let mut disabled: Vec<u32> = Vec::new();
    for index in 0..node.gpu_count {
        match node.gpus.iter().find(|g| g.index == index) {
            Some(g) if !g.mig.is_empty() => {
                let mut counts: BTreeMap<String, u32> = BTreeMap::new();
                for m in &g.mig {
                    *counts.entry(m.profile.clone()).or_default() += 1;
                }
                by_layout.entry(counts).or_default().push(index);
            }
            _ => disabled.push(index),
        }
    }
    let mut entries: Vec<MigDeviceSpec> = Vec::new();
    if !disabled.is_empty() {
        entries.push(MigDeviceSpec {
            device_filter: filter.clone().filter(|f| !f.is_empty()),
            devices: Devices::List(disabled),
            mig_enabled: false,
            mig_devices: BTreeMap::new(),
        });
    }
    let mut enabled: Vec<(Vec<u32>, BTreeMap<String, u32>)> =
        by_layout.into_iter().map(|(c, d)| (d, c)).collect();
    enabled.sort();
    for (devices, counts) in enabled {
        entries.push(MigDeviceSpec {
            device_filter: filter.clone().filter(|f| !f.is_empty()),
            devices: Devices::List(devices),
            mig_enabled: true,
            mig_devices: counts,
        });
    }
    entries
}

/// The device plugin configs of the plan, by ConfigMap key.
pub fn device_plugin_configs(plan: &Plan) -> BTreeMap<String, DevicePluginConfig> {
    let base = |sharing: Option<Sharing>| DevicePluginConfig {
        version: "v1".to_string(),
        flags: PluginFlags {
            // The plugin refuses MPS with the mixed strategy; MPS nodes have no MIG (the solver keeps
            // MPS off nodes with MIG), so `none` loses nothing there.
            mig_strategy: if sharing.as_ref().is_some_and(|s| s.mps.is_some()) {
                MIG_STRATEGY_NONE
            } else {
                MIG_STRATEGY_MIXED
            }
            .to_string(),
            fail_on_init_error: true,
            plugin: PluginSettings {
                device_list_strategy: DEVICE_LIST_STRATEGY.to_string(),
            },
        },
        sharing,
    };
    let mut out = BTreeMap::new();
    out.insert(EXCLUSIVE_CONFIG.to_string(), base(None));
    for node in &plan.nodes {
        if out.contains_key(&node.device_plugin_config) {
            continue;
        }
        let resources = || ReplicatedResources {
            rename_by_default: false,
            fail_requests_greater_than_one: true,
            resources: node
                .sharing
                .resources
                .iter()
                .map(|(name, &replicas)| ReplicatedResource {
                    name: name.clone(),
                    replicas,
                })
                .collect(),
        };
        let sharing = match node.sharing.strategy {
            SharingStrategy::None => None,
            SharingStrategy::TimeSlicing => Some(Sharing {
                time_slicing: Some(resources()),
                mps: None,
            }),
            SharingStrategy::Mps => Some(Sharing {
                time_slicing: None,
                mps: Some(resources()),
            }),
        };
        out.insert(node.device_plugin_config.clone(), base(sharing));
    }
    out
}

fn config_map(name: &str, namespace: &str, data: BTreeMap<String, String>) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    })
}

/// The mig-parted ConfigMap object.
pub fn mig_config_map(plan: &Plan, input: &PlanInput) -> Value {
    config_map(
        MIG_CONFIGMAP,
        &input.operator.namespace,
        BTreeMap::from([(MIG_CONFIG_KEY.to_string(), yaml(&mig_parted_config(plan)))]),
    )
}

/// The device plugin ConfigMap object.
pub fn device_plugin_config_map(plan: &Plan, input: &PlanInput) -> Value {
    let data = device_plugin_configs(plan)
        .into_iter()
        .map(|(k, v)| (k, yaml(&v)))
        .collect();
    config_map(DEVICE_PLUGIN_CONFIGMAP, &input.operator.namespace, data)
}

/// The `spec` of the ClusterPolicy that uses the emitted configs (in the snapshot; the merge patch is
/// [`cluster_policy_patch`]): no `mig.strategy`, so that each node's device plugin config decides it
/// (`mixed`, or `none` on MPS nodes); both ConfigMaps with their defaults; the device plugin passing
/// devices as volume mounts only, and the toolkit refusing `NVIDIA_VISIBLE_DEVICES` from unprivileged
/// containers (the two settings work only as a pair); and, where the plan file gives them, the
/// toolkit and device plugin images with NVIDIA's `v`-prefixed tags.
pub fn cluster_policy_spec(input: &PlanInput) -> Value {
    let mut spec = json!({
        "devicePlugin": {
            "config": {"name": DEVICE_PLUGIN_CONFIGMAP, "default": EXCLUSIVE_CONFIG},
            "env": [{"name": DEVICE_LIST_STRATEGY_ENV, "value": DEVICE_LIST_STRATEGY}],
        },
        "migManager": {"config": {"name": MIG_CONFIGMAP, "default": ALL_DISABLED}},
        "toolkit": {"env": [
            {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", "value": "false"},
            {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS", "value": "true"},
        ]},
    });
    // Nodes of confidential containers are the operator's Kata sandbox nodes: sandbox workloads on,
    // in Kata mode (the default mode is KubeVirt's), and the nodes labelled `vm-passthrough` (NVIDIA
    // GPU Operator, "Deploy with Kata Containers": `--set sandboxWorkloads.enabled=true --set
    // sandboxWorkloads.mode=kata`; the labelled nodes get the CC manager, the sandbox device plugin
    // and the VFIO manager instead of the container stack).
    if input
        .pools
        .iter()
        .any(|p| p.tee.is_some() && p.model.cc_capable())
        && input.tenants.iter().any(|t| t.confidential)
    {
        spec["sandboxWorkloads"] = json!({"enabled": true, "mode": SANDBOX_MODE});
    }
    if let Some(v) = &input.operator.toolkit_version {
        spec["toolkit"]["repository"] = json!(TOOLKIT_IMAGE.0);
        spec["toolkit"]["image"] = json!(TOOLKIT_IMAGE.1);
        spec["toolkit"]["version"] = json!(image_tag(&v.text));
    }
    if let Some(v) = &input.operator.device_plugin_version {
        spec["devicePlugin"]["repository"] = json!(DEVICE_PLUGIN_IMAGE.0);
        spec["devicePlugin"]["image"] = json!(DEVICE_PLUGIN_IMAGE.1);
        spec["devicePlugin"]["version"] = json!(image_tag(&v.text));
    }
    spec
}

/// The merge patch of the ClusterPolicy: [`cluster_policy_spec`], with `mig.strategy` set to null,
/// which a JSON merge patch reads as "remove the field" (RFC 7386), so that a strategy the Helm chart
/// wrote (`mig.strategy: single` by default) no longer overrides the nodes' configs.
pub fn cluster_policy_patch(input: &PlanInput) -> Value {
    let mut spec = cluster_policy_spec(input);
    spec["mig"] = json!({"strategy": null});
    json!({"spec": spec})
}

/// The node labels a node gets: no device plugin config where the sandbox device plugin runs instead.
pub fn node_labels(node: &PlanNode) -> BTreeMap<String, String> {
    let mut labels = dra_node_labels(node);
    if !node.confidential {
        labels.insert(
            labels::DEVICE_PLUGIN_CONFIG.to_string(),
            node.device_plugin_config.clone(),
        );
    }
    labels
}

/// The node labels a node gets when DRA hands its GPUs out: no device plugin config.
pub fn dra_node_labels(node: &PlanNode) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    if let Some(c) = &node.mig_config {
        labels.insert(labels::MIG_CONFIG.to_string(), c.clone());
    }
    labels.insert(POOL_LABEL.to_string(), node.pool.clone());
    if node.confidential {
        labels.insert(labels::CC_MODE.to_string(), "on".to_string());
        labels.insert(
            labels::WORKLOAD_CONFIG.to_string(),
            GpuWorkload::VmPassthrough.as_str().to_string(),
        );
    }
    labels
}

/// A shell script of `kubectl label` and `kubectl taint` commands, one pair per planned node.
pub fn node_script(plan: &Plan) -> String {
    node_script_with(plan, node_labels)
}

fn node_script_with(plan: &Plan, labels_of: fn(&PlanNode) -> BTreeMap<String, String>) -> String {
    let mut s = String::from(
        "#!/bin/sh\n# Node labels and taints of the plan. The node names are the plan's: replace each with the\n# name of the node of that pool you give the role to. The MIG manager re-partitions a node when\n# its nvidia.com/mig.config label changes, and stops the GPU pods on it while it does.\nset -eu\n",
    );
    for node in &plan.nodes {
        let labels: Vec<String> = labels_of(node)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        s.push_str(&format!(
            "kubectl label node {} --overwrite {}\n",
            node.name,
            labels.join(" ")
        ));
        s.push_str(&format!(
            "kubectl taint node {} --overwrite {TENANTS_TAINT}={}:NoSchedule\n",
            node.name, node.tenant_pool
        ));
    }
    s
}

/// The pod patch of every placed workload, giving it the planned extended resource.
pub fn pod_patches(plan: &Plan, input: &PlanInput, objects: &Objects) -> Vec<PodPatch> {
    let mut out = Vec::new();
    for w in plan.workloads.iter().filter(|w| w.placed > 0) {
        let (Some(resource), Some(model)) = (&w.resource, patch::pool_model(input, w)) else {
            continue;
        };
        let request = Request::Resource {
            name: resource.clone(),
            count: w.count,
        };
        out.push(patch::pod_patch(
            w,
            patch::container_of(input, w),
            model,
            objects,
            &request,
        ));
    }
    out
}

/// The files of one pod patch: the strategic merge patch, with a header that says what it does and
/// how to apply it, and with assumed names the check to run first.
pub fn patch_artifacts(p: &PodPatch) -> Vec<Artifact> {
    patch_files(p, &format!("{}.{}", p.namespace, p.workload), "")
}

/// The kubectl commands that apply the pod patch of file stem `stem` (the check first, when names
/// are assumed); the kind is a placeholder when no object was given.
fn patch_commands(p: &PodPatch, stem: &str) -> Vec<String> {
    let kind = p
        .kind
        .as_deref()
        .map(str::to_ascii_lowercase)
        .unwrap_or_else(|| "<deployment|statefulset|job>".to_string());
    let command = |kind_type: &str, file: &str| {
        format!(
            "kubectl -n {} patch {kind} {} --type {kind_type} --patch-file {file}",
            p.namespace, p.workload
        )
    };
    let mut out = Vec::new();
    if p.check.is_some() {
        out.push(command("json", &format!("{stem}.check.yaml")));
    }
    out.push(command("strategic", &format!("{stem}.yaml")));
    out
}

/// The files of a pod patch named `stem` (under `pod-patches/`), `intro` leading its header.
fn patch_files(p: &PodPatch, stem: &str, intro: &str) -> Vec<Artifact> {
    let base = format!("pod-patches/{stem}");
    let file = format!("{stem}.yaml");
    let commands = patch_commands(p, stem);
    let mut header = intro.to_string();
    header.push_str(&match &p.kind {
        Some(k) => format!(
            "# {k} {}/{}: container `{}` gets the planned GPU request.\n",
            p.namespace, p.workload, p.container
        ),
        None => format!(
            "# Workload {}/{}: container `{}` (assumed) gets the planned GPU request.\n",
            p.namespace, p.workload, p.container
        ),
    });
    for n in &p.notes {
        header.push_str(&format!("# Note: {n}.\n"));
    }
    let mut out = Vec::new();
    match &p.check {
        Some(check) => {
            header.push_str(&format!(
                "# Run the check first: it fails, changing nothing, when the first container is not `{}`\n# (a strategic merge patch would add a container of that name).\n# {}\n",
                p.container,
                commands.join(" && \\\n#   ")
            ));
            out.push(Artifact {
                path: format!("{base}.check.yaml"),
                content: format!(
                    "# The assumption of {file}: the pod template's first container is `{}`.\n{}",
                    p.container,
                    yaml(check)
                ),
            });
        }
        None => header.push_str(&format!("# {}\n", commands.join("\n# "))),
    }
    out.insert(
        0,
        Artifact {
            path: format!("{base}.yaml"),
            content: format!("{header}{}", yaml(&p.patch)),
        },
    );
    out
}

/// Every artifact of `--emit`, paths relative to the folder; pod patches name the containers of
/// `objects` where they hold the workload.
pub fn artifacts(plan: &Plan, input: &PlanInput, objects: &Objects) -> Vec<Artifact> {
    let mut out = vec![
        Artifact {
            path: "mig-parted-config.yaml".to_string(),
            content: yaml(&mig_config_map(plan, input)),
        },
        Artifact {
            path: "device-plugin-config.yaml".to_string(),
            content: yaml(&device_plugin_config_map(plan, input)),
        },
        Artifact {
            path: "cluster-policy-patch.yaml".to_string(),
            content: format!(
                "# kubectl patch clusterpolicies.nvidia.com {CLUSTER_POLICY} --type merge --patch-file cluster-policy-patch.yaml\n\
                 # mig.strategy is removed so that each node's device plugin config sets it (MPS nodes need\n\
                 # `none`, MIG nodes `mixed`): install or upgrade the Helm chart with --set mig.strategy=\"\".\n\
                 # The images are NVIDIA's; replace the repository if you pull from a mirror.\n{}",
                yaml(&cluster_policy_patch(input))
            ),
        },
        Artifact {
            path: "nodes.sh".to_string(),
            content: node_script(plan),
        },
    ];
    for p in pod_patches(plan, input, objects) {
        out.extend(patch_artifacts(&p));
    }
    out
}

/// The file stem of a DRA pod patch: the workload's, with the claim when its replicas name several.
fn dra_patch_stem(d: &dra::DraPlan, u: &dra::ClaimUse, p: &PodPatch) -> String {
    let several = d.uses.iter().filter(|x| x.workload == u.workload).count() > 1;
    if several && !u.template {
        format!("{}.{}.{}", p.namespace, p.workload, u.claim)
    } else {
        format!("{}.{}", p.namespace, p.workload)
    }
}

/// Every artifact of `--emit DIR --dra` (a plan made with [`crate::SolveOptions::dra`]): the
/// DeviceClasses, ResourceClaimTemplates and ResourceClaims, the pod patches that name them, the
/// mig-parted config of the static MIG layouts, and the node labels and taints.
pub fn dra_artifacts(plan: &Plan, input: &PlanInput, objects: &Objects) -> Vec<Artifact> {
    let d = dra::dra_plan(plan, input);
    let list = |items: &[Value]| yaml(&json!({"apiVersion": "v1", "kind": "List", "items": items}));
    let gates: Vec<&str> = d.gates.iter().copied().collect();
    let gate_note = if gates.is_empty() {
        String::new()
    } else {
        format!(
            "# The shared claims need the DRA driver's feature gate{} {} (alpha, off by default).\n",
            if gates.len() > 1 { "s" } else { "" },
            gates.join(" and ")
        )
    };
    let mut claims: Vec<Value> = d.templates.clone();
    claims.extend(d.claims.iter().cloned());
    let mut out = vec![
        Artifact {
            path: "mig-parted-config.yaml".to_string(),
            content: format!(
                "# The MIG layouts the DRA driver hands out: mig-parted applies them (the MIG manager reads\n# each node's nvidia.com/mig.config label); the driver publishes the instances it finds.\n{}",
                yaml(&mig_config_map(plan, input))
            ),
        },
        Artifact {
            path: "nodes.sh".to_string(),
            content: node_script_with(plan, dra_node_labels),
        },
        Artifact {
            path: "dra/device-classes.yaml".to_string(),
            content: format!(
                "# kubectl apply -f device-classes.yaml\n# The devices of NVIDIA's DRA driver (gpu.nvidia.com) the plan hands out: whole GPUs and each MIG\n# profile. The device plugin must not serve GPUs on the same nodes.\n{}",
                list(&d.classes)
            ),
        },
        Artifact {
            path: "dra/claims.yaml".to_string(),
            content: format!(
                "# kubectl apply -f claims.yaml\n# One ResourceClaimTemplate per workload whose pods each get devices of their own; one\n# ResourceClaim per shared device, which the pods that name it share.\n{gate_note}{}",
                list(&claims)
            ),
        },
    ];
    for (u, p) in &dra::pod_patches(plan, input, &d, objects) {
        let stem = dra_patch_stem(&d, u, p);
        let reps: Vec<String> = u.replicas.iter().map(|(i, _)| format!("#{i}")).collect();
        let intro = if u.template {
            format!(
                "# Each pod gets its own claim from ResourceClaimTemplate {}.\n",
                u.claim
            )
        } else if stem.ends_with(&u.claim) {
            format!(
                "# Replicas {} of {} share ResourceClaim {}: run them as a workload of their own\n# ({} replicas) with this patch; the workload's other replicas name other claims.\n",
                reps.join(", "),
                p.workload,
                u.claim,
                u.replicas.len()
            )
        } else {
            format!("# The pods share ResourceClaim {}.\n", u.claim)
        };
        out.extend(patch_files(p, &stem, &intro));
    }
    out
}

/// Resources a node advertises, as the device plugin would: whole GPUs with MIG disabled (times their
/// replicas) and MIG instances per profile (times theirs).
pub fn node_resources(node: &PlanNode) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    // Passed through to VMs, every GPU is one `nvidia.com/pgpu` of the sandbox device plugin.
    if node.confidential {
        out.insert(
            resource::PASSTHROUGH_ALIAS.to_string(),
            u64::from(node.gpu_count),
        );
        return out;
    }
    let whole_replicas = u64::from(
        node.sharing
            .resources
            .get(resource::GPU)
            .copied()
            .unwrap_or(1),
    );
    for index in 0..node.gpu_count {
        match node.gpus.iter().find(|g| g.index == index) {
            Some(g) if !g.mig.is_empty() => {
                for m in &g.mig {
                    let name =
                        match catalogue::lookup(&node.model).and_then(|x| x.profile(&m.profile)) {
                            Some(p) => p.resource_name(),
                            None => catalogue::mig_resource(&m.profile),
                        };
                    *out.entry(name).or_default() += u64::from(m.replicas.max(1));
                }
            }
            Some(g) if g.sharing != DeviceSharing::Exclusive => {
                *out.entry(resource::GPU.to_string()).or_default() += u64::from(g.replicas.max(1));
            }
            _ => *out.entry(resource::GPU.to_string()).or_default() += whole_replicas,
        }
    }
    out
}
