//! The artifacts the NVIDIA GPU Operator consumes, written from a plan in their real formats:
//!
//! - a mig-parted ConfigMap (`version: v1`, `mig-configs`, one named config per distinct GPU layout set,
//!   `devices` as lists of GPU indices, `device-filter` the model's PCI ids), plus `all-disabled`;
//! - the device plugin ConfigMap, one key per sharing config (`version: v1`, `sharing.timeSlicing` or
//!   `sharing.mps`), plus `exclusive` for nodes that share nothing;
//! - a merge patch for the ClusterPolicy that names both ConfigMaps;
//! - a script that labels each node (`nvidia.com/mig.config`, `nvidia.com/device-plugin.config`) and
//!   taints it for its tenant node pool;
//! - one pod-template patch per workload (resource, nodeSelector, tolerations).
//!
//! The formats: mig-parted `api/spec/v1` (unknown keys are rejected, so only its keys are written) and
//! the k8s-device-plugin `api/config/v1`, as the GPU Operator documentation configures them.

use crate::file::PlanInput;
use crate::plan::{DeviceSharing, Plan, PlanNode, PlanWorkload, POOL_LABEL, TENANTS_TAINT};
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::SharingStrategy;
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
/// The ClusterPolicy the GPU Operator's Helm chart creates.
pub const CLUSTER_POLICY: &str = "cluster-policy";
/// Node labels the GPU Operator reads (NVIDIA GPU Operator docs: MIG manager and device plugin
/// per-node configuration).
pub const MIG_CONFIG_LABEL: &str = "nvidia.com/mig.config";
pub const DEVICE_PLUGIN_CONFIG_LABEL: &str = "nvidia.com/device-plugin.config";
/// The CC manager's node label (NVIDIA GPU Operator confidential computing docs).
pub const CC_MODE_LABEL: &str = "nvidia.com/cc.mode";

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
            mig_strategy: "mixed".to_string(),
            fail_on_init_error: true,
            plugin: PluginSettings {
                device_list_strategy: "volume-mounts".to_string(),
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

/// The `spec` of the ClusterPolicy that uses the emitted configs (as a merge patch, and in the
/// snapshot): mixed MIG strategy, both ConfigMaps with their defaults, and the toolkit's hardened
/// device-list settings (no GPU by `NVIDIA_VISIBLE_DEVICES` for unprivileged containers).
pub fn cluster_policy_spec(input: &PlanInput) -> Value {
    let mut spec = json!({
        "mig": {"strategy": "mixed"},
        "devicePlugin": {"config": {"name": DEVICE_PLUGIN_CONFIGMAP, "default": EXCLUSIVE_CONFIG}},
        "migManager": {"config": {"name": MIG_CONFIGMAP, "default": ALL_DISABLED}},
        "toolkit": {"env": [
            {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", "value": "false"},
            {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS", "value": "true"},
        ]},
    });
    if let Some(v) = &input.operator.toolkit_version {
        spec["toolkit"]["version"] = json!(v.text);
    }
    if let Some(v) = &input.operator.device_plugin_version {
        spec["devicePlugin"]["version"] = json!(v.text);
    }
    spec
}

/// The node labels a node gets.
pub fn node_labels(node: &PlanNode) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    if let Some(c) = &node.mig_config {
        labels.insert(MIG_CONFIG_LABEL.to_string(), c.clone());
    }
    labels.insert(
        DEVICE_PLUGIN_CONFIG_LABEL.to_string(),
        node.device_plugin_config.clone(),
    );
    labels.insert(POOL_LABEL.to_string(), node.pool.clone());
    if node.confidential {
        labels.insert(CC_MODE_LABEL.to_string(), "on".to_string());
    }
    labels
}

/// A shell script of `kubectl label` and `kubectl taint` commands, one pair per planned node.
pub fn node_script(plan: &Plan) -> String {
    let mut s = String::from(
        "#!/bin/sh\n# Node labels and taints of the plan. The node names are the plan's: replace each with the\n# name of the node of that pool you give the role to. The MIG manager re-partitions a node when\n# its nvidia.com/mig.config label changes, and stops the GPU pods on it while it does.\nset -eu\n",
    );
    for node in &plan.nodes {
        let labels: Vec<String> = node_labels(node)
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

/// The pod-template patch of a workload (strategic merge patch of `spec.template.spec`).
pub fn pod_patch(w: &PlanWorkload, container: &str) -> Option<Value> {
    let resource = w.resource.as_ref()?;
    Some(json!({
        "spec": {"template": {"spec": {
            "nodeSelector": w.node_selector,
            "tolerations": w.tolerations,
            "containers": [{
                "name": container,
                "resources": {"limits": {resource.clone(): w.count}},
            }],
        }}}
    }))
}

/// Every artifact of `--emit`, paths relative to the folder.
pub fn artifacts(plan: &Plan, input: &PlanInput) -> Vec<Artifact> {
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
                "# kubectl patch clusterpolicies.nvidia.com {CLUSTER_POLICY} --type merge --patch-file cluster-policy-patch.yaml\n{}",
                yaml(&json!({"spec": cluster_policy_spec(input)}))
            ),
        },
        Artifact {
            path: "nodes.sh".to_string(),
            content: node_script(plan),
        },
    ];
    for w in &plan.workloads {
        let container = input
            .workloads
            .iter()
            .find(|x| x.name == w.name)
            .map(|x| x.container.as_str())
            .unwrap_or(w.name.as_str());
        if w.placed == 0 {
            continue;
        }
        if let Some(patch) = pod_patch(w, container) {
            out.push(Artifact {
                path: format!("pod-patches/{}.{}.yaml", w.namespace, w.name),
                content: format!(
                    "# kubectl -n {} patch <deployment|statefulset|job> {} --type strategic --patch-file {}.{}.yaml\n{}",
                    w.namespace,
                    w.name,
                    w.namespace,
                    w.name,
                    yaml(&patch)
                ),
            });
        }
    }
    out
}

/// Resources a node advertises, as the device plugin would: whole GPUs with MIG disabled (times their
/// replicas) and MIG instances per profile (times theirs).
pub fn node_resources(node: &PlanNode) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    let whole_replicas = u64::from(
        node.sharing
            .resources
            .get("nvidia.com/gpu")
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
                            None => format!("nvidia.com/mig-{}", m.profile.replace('+', ".")),
                        };
                    *out.entry(name).or_default() += u64::from(m.replicas.max(1));
                }
            }
            Some(g) if g.sharing != DeviceSharing::Exclusive => {
                *out.entry("nvidia.com/gpu".to_string()).or_default() +=
                    u64::from(g.replicas.max(1));
            }
            _ => *out.entry("nvidia.com/gpu".to_string()).or_default() += whole_replicas,
        }
    }
    out
}
