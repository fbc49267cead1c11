//! Nodes: labels, taints, and the GPU side resolved the way the GPU Operator resolves it.
//!
//! Device plugin sharing: the ClusterPolicy's `spec.devicePlugin.config.name` names a ConfigMap in
//! the operator's namespace; the node label `nvidia.com/device-plugin.config` picks one of its keys,
//! else `spec.devicePlugin.config.default` does; with neither, the plugin runs its defaults (no
//! sharing). A ConfigMap or key that is named but absent, or a config the plugin would reject, is
//! recorded as unresolved (GT002) and the GPU Feature Discovery labels (`nvidia.com/gpu.sharing-strategy`,
//! `nvidia.com/gpu.replicas`, the `-SHARED` product suffix) stand in as evidence.
//!
//! MIG: the node label `nvidia.com/mig.config` names a config in the mig-parted ConfigMap
//! (`spec.migManager.config.name`, default `default-mig-parted-config`, key `config.yaml`; since
//! operator v26.3.0 also a per-node `<node>-mig-config`). Its entries apply, by `device-filter` (the
//! PCI id of the node's GPU model) and `devices`, to each GPU; the catalogue's geometry places the
//! instances. The mixed-strategy labels `nvidia.com/mig-<profile>.count` are evidence, and the
//! fallback when the config is not in the input.

use crate::cluster::{
    self, Operands, CDI_DEVICE_LIST_STRATEGY, DEFAULT_MIG_CONFIGMAP, MIG_CONFIG_KEY,
};
use crate::crd;
use crate::device_plugin::{self, parse_mig_strategy, DevicePluginConfig, Strictness};
use crate::mig_parted::{self, MigPartedConfig};
use crate::util::{quantity_u64, uuids};
use gpu_trust_model::catalogue::{self, GpuModel};
use gpu_trust_model::fleet::{
    ClusterPolicyInfo, ConfigSource, GpuNode, MigRequest, MigSlot, MigStrategy, NodeId,
    PhysicalGpu, SharingConfig, SharingStrategy, Taint, TaintEffect, Unresolved, UnresolvedKind,
};
use gpu_trust_model::geometry;
use gpu_trust_model::{Diagnostic, Location, ObjectRef, Version};
use std::collections::BTreeMap;

pub(crate) const LABEL_PRODUCT: &str = "nvidia.com/gpu.product";
const LABEL_COUNT: &str = "nvidia.com/gpu.count";
const LABEL_MEMORY: &str = "nvidia.com/gpu.memory";
const LABEL_PRESENT: &str = "nvidia.com/gpu.present";
const LABEL_REPLICAS: &str = "nvidia.com/gpu.replicas";
const LABEL_SHARING: &str = "nvidia.com/gpu.sharing-strategy";
const LABEL_MIG_STRATEGY: &str = "nvidia.com/mig.strategy";
pub(crate) const LABEL_MIG_CONFIG: &str = "nvidia.com/mig.config";
const LABEL_MIG_STATE: &str = "nvidia.com/mig.config.state";
pub(crate) const LABEL_DP_CONFIG: &str = "nvidia.com/device-plugin.config";
const LABEL_CC_STATE: &str = "nvidia.com/cc.mode.state";
const LABEL_CC_MODE: &str = "nvidia.com/cc.mode";
const LABEL_NFD_NVIDIA: &str = "feature.node.kubernetes.io/pci-10de.present";
/// Driver version labels of GPU Feature Discovery, and the deprecated ones it still writes.
const DRIVER_FULL: &str = "nvidia.com/cuda.driver-version.full";
const DRIVER_PARTS: [&str; 3] = [
    "nvidia.com/cuda.driver-version.major",
    "nvidia.com/cuda.driver-version.minor",
    "nvidia.com/cuda.driver-version.revision",
];
const DRIVER_DEPRECATED: [&str; 3] = [
    "nvidia.com/cuda.driver.major",
    "nvidia.com/cuda.driver.minor",
    "nvidia.com/cuda.driver.rev",
];
/// HAMi's node annotation listing the node's devices.
pub(crate) const HAMI_REGISTER: &str = "hami.io/node-nvidia-register";

/// A node as read, before the GPU side is resolved.
#[derive(Debug, Clone)]
pub(crate) struct NodeDraft {
    pub object: ObjectRef,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub hami_register: Option<String>,
    pub taints: Vec<Taint>,
    /// `status.allocatable` (or `capacity`) extended resources; `None` when the node has no status.
    pub extended: Option<BTreeMap<String, u64>>,
}

pub(crate) fn draft(n: &crate::kinds::NodeObject, object: ObjectRef) -> NodeDraft {
    let name = n.metadata.name.clone().unwrap_or_default();
    let labels = n.metadata.labels.clone().unwrap_or_default();
    let hami_register = n
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(HAMI_REGISTER))
        .cloned();
    let spec = n.spec.as_ref();
    let mut taints: Vec<Taint> = spec
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(Taint {
                key: t.key.clone(),
                value: t.value.clone().filter(|v| !v.is_empty()),
                effect: match t.effect.as_str() {
                    "NoSchedule" => TaintEffect::NoSchedule,
                    "PreferNoSchedule" => TaintEffect::PreferNoSchedule,
                    "NoExecute" => TaintEffect::NoExecute,
                    _ => return None,
                },
            })
        })
        .collect();
    // A cordoned node carries this taint once the node lifecycle controller sees it; add it for
    // manifests written without it.
    if spec.and_then(|s| s.unschedulable) == Some(true)
        && !taints
            .iter()
            .any(|t| t.key == "node.kubernetes.io/unschedulable")
    {
        taints.push(Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            value: None,
            effect: TaintEffect::NoSchedule,
        });
    }
    taints.sort();
    let extended = n.status.as_ref().and_then(|s| {
        let m = s.allocatable.as_ref().or(s.capacity.as_ref())?;
        Some(
            m.iter()
                .filter(|(k, _)| k.contains('/'))
                .filter_map(|(k, q)| quantity_u64(&q.0).map(|v| (k.clone(), v)))
                .collect(),
        )
    });
    NodeDraft {
        object,
        name,
        labels,
        hami_register,
        taints,
        extended,
    }
}

/// A ConfigMap as read: its data, and for each key the line its value starts on (for locations of
/// errors inside an embedded config; 0 when unknown).
#[derive(Debug, Clone)]
pub(crate) struct ConfigMapDraft {
    pub object: ObjectRef,
    pub data: BTreeMap<String, String>,
    pub key_lines: BTreeMap<String, u32>,
}

/// Everything node resolution reads besides the node.
pub(crate) struct Context<'c> {
    pub policy: Option<&'c crd::ClusterPolicy>,
    pub info: Option<&'c ClusterPolicyInfo>,
    pub operator_namespace: &'c str,
    pub config_maps: &'c BTreeMap<(String, String), ConfigMapDraft>,
    pub operands: &'c BTreeMap<String, Operands>,
    pub operator_version: Option<Version>,
    pub dp_cache: BTreeMap<(String, String, String), Option<DevicePluginConfig>>,
    pub mig_cache: BTreeMap<(String, String), Option<MigPartedConfig>>,
}

/// What resolving one node produced.
#[derive(Default)]
pub(crate) struct Resolved {
    pub gpu: Option<GpuNode>,
    pub unresolved: Vec<Unresolved>,
    pub diagnostics: Vec<Diagnostic>,
    pub mig_requests: Vec<MigRequest>,
}

pub(crate) fn is_gpu_node(d: &NodeDraft) -> bool {
    let l = &d.labels;
    l.get(LABEL_PRESENT).is_some_and(|v| v == "true")
        || l.contains_key(LABEL_PRODUCT)
        || l.contains_key(LABEL_COUNT)
        || l.contains_key(LABEL_MIG_CONFIG)
        || l.contains_key(LABEL_DP_CONFIG)
        || l.get(LABEL_NFD_NVIDIA).is_some_and(|v| v == "true")
        || d.hami_register.is_some()
        || d.extended.as_ref().is_some_and(|e| {
            e.iter().any(|(k, v)| {
                *v > 0 && (k.starts_with("nvidia.com/gpu") || k.starts_with("nvidia.com/mig-"))
            })
        })
}

impl Context<'_> {
    pub(crate) fn resolve(&mut self, d: &NodeDraft, id: NodeId) -> Resolved {
        let mut out = Resolved::default();
        if !is_gpu_node(d) {
            return out;
        }
        let labels = &d.labels;
        let product = labels.get(LABEL_PRODUCT).cloned();
        let model = product.as_deref().and_then(catalogue::lookup);
        match (&product, model) {
            (Some(p), None) => out.unresolved.push(Unresolved {
                object: d.object.clone(),
                node: Some(d.name.clone()),
                what: UnresolvedKind::GpuModel,
                message: format!("GPU product `{p}` is not in the GPU catalogue: MIG geometry and CC support unknown"),
            }),
            (None, _) => out.unresolved.push(Unresolved {
                object: d.object.clone(),
                node: Some(d.name.clone()),
                what: UnresolvedKind::GpuModel,
                message: format!("no `{LABEL_PRODUCT}` label: the GPU model is unknown"),
            }),
            _ => {}
        }

        let (sharing, dp_config) = self.sharing(d, &mut out);
        let mig_strategy = self.mig_strategy(d, dp_config.as_ref(), &mut out);

        let hami_uuids = d.hami_register.as_deref().map(uuids).unwrap_or_default();
        let count = gpu_count(d, &sharing, hami_uuids.len());
        let mut gpus: Vec<PhysicalGpu> = (0..count)
            .map(|i| PhysicalGpu {
                index: i,
                uuid: hami_uuids.get(i as usize).cloned(),
                mig_enabled: false,
                mig: Vec::new(),
            })
            .collect();
        let mig_source = self.mig_layout(d, id, model, mig_strategy, &mut gpus, &mut out);

        let memory_mib = labels
            .get(LABEL_MEMORY)
            .and_then(|m| m.parse::<u64>().ok())
            .or(model.map(|m| m.memory_mib));
        let operands = self.operands.get(&d.name);
        let driver_version = driver_label(labels)
            .or_else(|| operands.and_then(|o| o.driver.clone()))
            .or_else(|| self.info.and_then(|i| i.driver_version.clone()));
        let toolkit_version = operands
            .and_then(|o| o.toolkit.clone())
            .or_else(|| self.info.and_then(|i| i.toolkit_version.clone()));
        let cc_mode = labels
            .get(LABEL_CC_STATE)
            .or_else(|| labels.get(LABEL_CC_MODE))
            .cloned();
        out.gpu = Some(GpuNode {
            product,
            model: model.map(|m| m.id.to_string()),
            count,
            memory_mib,
            driver_version,
            toolkit_version,
            operator_version: self.operator_version.clone(),
            cc_mode,
            mig_strategy,
            sharing,
            gpus,
            hami: d.hami_register.is_some(),
            mig_source,
        });
        out
    }

    /// The device plugin sharing config in force, and the parsed config when one was found.
    fn sharing(
        &mut self,
        d: &NodeDraft,
        out: &mut Resolved,
    ) -> (SharingConfig, Option<DevicePluginConfig>) {
        let label = d.labels.get(LABEL_DP_CONFIG).filter(|v| !v.is_empty());
        let named = self.info.and_then(|i| i.device_plugin_config.clone());
        let mut unresolved = |message: String| {
            out.unresolved.push(Unresolved {
                object: d.object.clone(),
                node: Some(d.name.clone()),
                what: UnresolvedKind::DevicePluginConfig,
                message,
            });
        };
        let mut resolved: Option<(SharingConfig, DevicePluginConfig)> = None;
        match (named, label) {
            (Some((cm_name, default)), label) => {
                let key = label.cloned().or(default.clone());
                if let Some(key) = key {
                    let ns = self.operator_namespace.to_string();
                    match self.config_maps.get(&(ns.clone(), cm_name.clone())) {
                        None => unresolved(format!(
                            "the ClusterPolicy names device plugin ConfigMap {ns}/{cm_name}, which is not in the input"
                        )),
                        Some(cm) if !cm.data.contains_key(&key) => unresolved(format!(
                            "device plugin ConfigMap {ns}/{cm_name} has no key `{key}` (selected by {})",
                            if label.is_some() {
                                format!("the node label {LABEL_DP_CONFIG}")
                            } else {
                                "the ClusterPolicy default".to_string()
                            }
                        )),
                        Some(cm) => match self.device_plugin_config(cm, &ns, &cm_name, &key, &mut out.diagnostics) {
                            Some(config) => {
                                let source = ConfigSource::ConfigMap {
                                    namespace: ns.clone(),
                                    name: cm_name.clone(),
                                    key: key.clone(),
                                    config: None,
                                };
                                resolved = Some((config.sharing_config(source), config));
                            }
                            None => unresolved(format!(
                                "device plugin config {ns}/{cm_name} key `{key}` is invalid: the plugin would not start with it"
                            )),
                        },
                    }
                }
            }
            (None, Some(label)) => unresolved(format!(
                "the node selects device plugin config `{label}`, but no ClusterPolicy in the input names its ConfigMap"
            )),
            (None, None) => {}
        }
        let from_labels = sharing_from_labels(d);
        let had_unresolved = out
            .unresolved
            .iter()
            .any(|u| u.what == UnresolvedKind::DevicePluginConfig);
        let (mut sharing, config) = match resolved {
            Some((s, c)) => {
                if let Some(l) = &from_labels {
                    if l.strategy != s.strategy
                        || l.replicas_for("nvidia.com/gpu") != s.replicas_for("nvidia.com/gpu")
                    {
                        out.diagnostics.push(Diagnostic::warning(
                            d.object.location.clone(),
                            format!(
                                "node {}: its GPU Feature Discovery labels say {} x{}, the config in force says {} x{}; the labels may predate a config change",
                                d.name,
                                strategy_name(l.strategy),
                                l.replicas_for("nvidia.com/gpu"),
                                strategy_name(s.strategy),
                                s.replicas_for("nvidia.com/gpu")
                            ),
                        ));
                    }
                }
                (s, Some(c))
            }
            None => match from_labels {
                Some(mut s) => {
                    if s.strategy != SharingStrategy::None && s.replicas.is_empty() {
                        // The plugin never shares with fewer than 2 replicas.
                        s.replicas.insert("nvidia.com/gpu".to_string(), 2);
                        out.diagnostics.push(Diagnostic::warning(
                            d.object.location.clone(),
                            format!(
                                "node {}: its labels say the GPUs are shared but not how many ways; taken as at least 2",
                                d.name
                            ),
                        ));
                    }
                    (s, None)
                }
                None if had_unresolved => (
                    SharingConfig {
                        source: ConfigSource::Unknown,
                        ..SharingConfig::default()
                    },
                    None,
                ),
                None => (SharingConfig::default(), None),
            },
        };
        if let Some(env) = self.policy.and_then(cluster::device_list_env) {
            sharing.device_list_strategy = env;
        } else if config
            .as_ref()
            .and_then(|c| c.flags.plugin.as_ref())
            .and_then(|p| p.device_list_strategy.as_ref())
            .is_none()
            && self.info.and_then(|i| i.cdi_enabled) == Some(true)
        {
            sharing.device_list_strategy = CDI_DEVICE_LIST_STRATEGY
                .iter()
                .map(|s| s.to_string())
                .collect();
        }
        if let Some(ext) = &d.extended {
            if ext.get("nvidia.com/gpu.shared").is_some_and(|v| *v > 0) {
                sharing.rename_by_default = true;
            }
        }
        (sharing, config)
    }

    fn device_plugin_config(
        &mut self,
        cm: &ConfigMapDraft,
        ns: &str,
        name: &str,
        key: &str,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<DevicePluginConfig> {
        let cache_key = (ns.to_string(), name.to_string(), key.to_string());
        if let Some(c) = self.dp_cache.get(&cache_key) {
            return c.clone();
        }
        let text = cm.data.get(key).map(String::as_str).unwrap_or("");
        let offset = cm.key_lines.get(key).copied().unwrap_or(0);
        let file = cm.object.location.file.as_str();
        let parsed = match device_plugin::parse(text, file, offset, Strictness::Plugin) {
            Ok((config, warnings)) => {
                diagnostics.extend(warnings);
                Some(config)
            }
            Err(e) => {
                diagnostics.push(Diagnostic::warning(
                    fallback_location(&e.location, &cm.object.location, offset),
                    format!(
                        "device plugin config {ns}/{name} key `{key}`: {}",
                        e.message
                    ),
                ));
                None
            }
        };
        self.dp_cache.insert(cache_key, parsed.clone());
        parsed
    }

    fn mig_strategy(
        &self,
        d: &NodeDraft,
        config: Option<&DevicePluginConfig>,
        out: &mut Resolved,
    ) -> MigStrategy {
        let label = d
            .labels
            .get(LABEL_MIG_STRATEGY)
            .and_then(|s| parse_mig_strategy(s));
        let chosen = self
            .info
            .and_then(|i| i.mig_strategy)
            .or_else(|| config.and_then(DevicePluginConfig::mig_strategy))
            .or(label)
            .or_else(|| (!mig_count_labels(&d.labels).is_empty()).then_some(MigStrategy::Mixed))
            .unwrap_or_default();
        if let Some(l) = label {
            if l != chosen {
                out.diagnostics.push(Diagnostic::warning(
                    d.object.location.clone(),
                    format!(
                        "node {}: label {LABEL_MIG_STRATEGY} says {}, the configuration says {}",
                        d.name,
                        mig_strategy_name(l),
                        mig_strategy_name(chosen)
                    ),
                ));
            }
        }
        chosen
    }

    /// Fills the GPUs' MIG layouts; returns where they came from.
    fn mig_layout(
        &mut self,
        d: &NodeDraft,
        id: NodeId,
        model: Option<&'static GpuModel>,
        strategy: MigStrategy,
        gpus: &mut Vec<PhysicalGpu>,
        out: &mut Resolved,
    ) -> Option<ConfigSource> {
        let label_counts = mig_count_labels(&d.labels);
        let config_name = d
            .labels
            .get(LABEL_MIG_CONFIG)
            .filter(|v| !v.is_empty())
            .cloned();
        if let Some(name) = &config_name {
            if let Some(state) = d.labels.get(LABEL_MIG_STATE) {
                if state != "success" {
                    out.diagnostics.push(Diagnostic::warning(
                        d.object.location.clone(),
                        format!(
                            "node {}: MIG config `{name}` is in state `{state}`: the layout in force may differ from the config",
                            d.name
                        ),
                    ));
                }
            }
            match self.mig_config(d, name, out) {
                Some((cm_name, cm, config)) => {
                    let source = ConfigSource::ConfigMap {
                        namespace: self.operator_namespace.to_string(),
                        name: cm_name,
                        key: MIG_CONFIG_KEY.to_string(),
                        config: Some(name.clone()),
                    };
                    apply_mig_config(d, id, model, name, &config, &cm, gpus, out);
                    let from_config = total_counts(gpus);
                    if !label_counts.is_empty() && from_config != label_counts {
                        out.diagnostics.push(Diagnostic::warning(
                            d.object.location.clone(),
                            format!(
                                "node {}: the mixed-strategy labels count {} MIG instances, the mig-parted config `{name}` gives {}",
                                d.name,
                                describe(&label_counts),
                                describe(&from_config)
                            ),
                        ));
                    }
                    return Some(source);
                }
                None => {
                    // Unresolved recorded; fall through to the labels.
                }
            }
        }
        let single_profile = (strategy == MigStrategy::Single)
            .then(|| d.labels.get(LABEL_PRODUCT))
            .flatten()
            .and_then(|p| p.split_once("-MIG-").map(|(_, prof)| prof.to_string()));
        let counts = if !label_counts.is_empty() {
            label_counts
        } else if let Some(profile) = single_profile {
            // Single strategy: every GPU carries one profile; the count label counts instances.
            let n = d
                .labels
                .get(LABEL_COUNT)
                .and_then(|c| c.parse::<u32>().ok())
                .unwrap_or(0);
            let per_gpu = model
                .and_then(|m| m.profile(&profile))
                .map_or(1, |p| u32::from(p.max_count.max(1)));
            let physical = n.div_ceil(per_gpu).max(1);
            if gpus.len() as u32 != physical {
                *gpus = (0..physical)
                    .map(|i| PhysicalGpu {
                        index: i,
                        uuid: None,
                        mig_enabled: false,
                        mig: Vec::new(),
                    })
                    .collect();
            }
            BTreeMap::from([(profile, n)])
        } else {
            return None;
        };
        if gpus.is_empty() {
            gpus.push(PhysicalGpu {
                index: 0,
                uuid: None,
                mig_enabled: false,
                mig: Vec::new(),
            });
        }
        distribute(model, &counts, gpus);
        out.diagnostics.push(Diagnostic::warning(
            d.object.location.clone(),
            format!(
                "node {}: MIG layout per GPU inferred from node labels ({}); the mig-parted config is not in the input",
                d.name,
                describe(&counts)
            ),
        ));
        Some(ConfigSource::NodeLabels)
    }

    /// The mig-parted config holding `name` for this node: the per-node ConfigMap first, then the
    /// one the ClusterPolicy names (or the operator's default).
    fn mig_config(
        &mut self,
        d: &NodeDraft,
        name: &str,
        out: &mut Resolved,
    ) -> Option<(String, ConfigMapDraft, MigPartedConfig)> {
        let ns = self.operator_namespace.to_string();
        let per_node = format!("{}-mig-config", d.name);
        let named = self
            .info
            .and_then(|i| i.mig_manager_config.as_ref())
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| DEFAULT_MIG_CONFIGMAP.to_string());
        let candidates = [per_node, named.clone()];
        let found = candidates.iter().find_map(|c| {
            self.config_maps
                .get(&(ns.clone(), c.clone()))
                .map(|cm| (c.clone(), cm.clone()))
        });
        let mut unresolved = |message: String| {
            out.unresolved.push(Unresolved {
                object: d.object.clone(),
                node: Some(d.name.clone()),
                what: UnresolvedKind::MigConfig,
                message,
            });
        };
        let Some((cm_name, cm)) = found else {
            unresolved(format!(
                "the node asks for MIG config `{name}`, but the mig-parted ConfigMap {ns}/{named} is not in the input"
            ));
            return None;
        };
        let key = (ns.clone(), cm_name.clone());
        let parsed = match self.mig_cache.get(&key) {
            Some(p) => p.clone(),
            None => {
                let p = match cm.data.get(MIG_CONFIG_KEY) {
                    None => None,
                    Some(text) => {
                        let offset = cm.key_lines.get(MIG_CONFIG_KEY).copied().unwrap_or(0);
                        match mig_parted::parse(text, &cm.object.location.file, offset) {
                            Ok(c) => Some(c),
                            Err(e) => {
                                out.diagnostics.push(Diagnostic::warning(
                                    fallback_location(&e.location, &cm.object.location, offset),
                                    format!("mig-parted config {ns}/{cm_name}: {}", e.message),
                                ));
                                None
                            }
                        }
                    }
                };
                self.mig_cache.insert(key, p.clone());
                p
            }
        };
        let Some(config) = parsed else {
            unresolved(format!(
                "the mig-parted ConfigMap {ns}/{cm_name} has no valid `{MIG_CONFIG_KEY}`"
            ));
            return None;
        };
        if !config.mig_configs.contains_key(name) {
            unresolved(format!(
                "MIG config `{name}` (label {LABEL_MIG_CONFIG}) is not in the mig-parted ConfigMap {ns}/{cm_name}"
            ));
            return None;
        }
        Some((cm_name, cm, config))
    }
}

fn fallback_location(inner: &Location, object: &Location, offset: u32) -> Location {
    if inner.line > offset && offset > 0 {
        inner.clone()
    } else {
        object.clone()
    }
}

#[allow(clippy::too_many_arguments)]
fn apply_mig_config(
    d: &NodeDraft,
    id: NodeId,
    model: Option<&'static GpuModel>,
    name: &str,
    config: &MigPartedConfig,
    cm: &ConfigMapDraft,
    gpus: &mut [PhysicalGpu],
    out: &mut Resolved,
) {
    let Some(entries) = config.mig_configs.get(name) else {
        return;
    };
    let line = config
        .lines
        .get(name)
        .copied()
        .unwrap_or(cm.object.location.line);
    let object = ObjectRef {
        location: Location::new(cm.object.location.file.clone(), line, 0),
        ..cm.object.clone()
    };
    // Which entry applies to each GPU: the last one whose filter and devices admit it.
    let mut chosen: Vec<Option<usize>> = vec![None; gpus.len()];
    let mut undecidable = false;
    for (e_idx, entry) in entries.iter().enumerate() {
        match entry.matches_model(model) {
            Some(true) => {}
            Some(false) => continue,
            None => {
                undecidable = true;
                continue;
            }
        }
        for (g, slot) in gpus.iter().zip(chosen.iter_mut()) {
            if entry.devices.includes(g.index) {
                *slot = Some(e_idx);
            }
        }
    }
    if undecidable {
        out.diagnostics.push(Diagnostic::warning(
            d.object.location.clone(),
            format!(
                "node {}: MIG config `{name}` has entries with a device-filter, which cannot be matched without a known GPU model",
                d.name
            ),
        ));
    }
    for (e_idx, entry) in entries.iter().enumerate() {
        let indices: Vec<u32> = gpus
            .iter()
            .zip(&chosen)
            .filter(|(_, c)| **c == Some(e_idx))
            .map(|(g, _)| g.index)
            .collect();
        if indices.is_empty() {
            continue;
        }
        let counts: Vec<(&str, u32)> = entry
            .mig_devices
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(p, n)| (p.as_str(), *n))
            .collect();
        let (slots, error) = if !entry.mig_enabled {
            (Vec::new(), None)
        } else {
            layout_slots(model, &counts)
        };
        out.mig_requests.push(MigRequest {
            node: id,
            gpus: indices.clone(),
            config: name.to_string(),
            object: object.clone(),
            mig_enabled: entry.mig_enabled,
            mig_devices: entry.mig_devices.clone(),
            error,
        });
        for g in gpus.iter_mut().filter(|g| indices.contains(&g.index)) {
            g.mig_enabled = entry.mig_enabled;
            g.mig = slots.clone();
        }
    }
}

/// The instances of `counts` on one GPU of `model`, placed by the catalogue's geometry; with an
/// unknown model, unplaced in name order. An impossible layout gives no instances and the reason.
fn layout_slots(
    model: Option<&'static GpuModel>,
    counts: &[(&str, u32)],
) -> (Vec<MigSlot>, Option<String>) {
    match model {
        Some(m) => match geometry::place_counts(m, counts) {
            Ok(layout) => (
                layout
                    .instances()
                    .iter()
                    .map(|i| MigSlot {
                        profile: i.profile().name.to_string(),
                        start: Some(i.start()),
                    })
                    .collect(),
                None,
            ),
            Err(e) => (Vec::new(), Some(e.to_string())),
        },
        None => {
            let mut slots = Vec::new();
            for (p, n) in counts {
                for _ in 0..(*n).min(64) {
                    slots.push(MigSlot {
                        profile: (*p).to_string(),
                        start: None,
                    });
                }
            }
            (slots, None)
        }
    }
}

/// Spreads profile counts over the GPUs: evenly when they divide, else GPU by GPU as the geometry
/// allows (first fit, largest profile first).
fn distribute(
    model: Option<&'static GpuModel>,
    counts: &BTreeMap<String, u32>,
    gpus: &mut [PhysicalGpu],
) {
    let n = gpus.len() as u32;
    if n == 0 {
        return;
    }
    let mut per_gpu: Vec<BTreeMap<String, u32>> = vec![BTreeMap::new(); gpus.len()];
    if counts.values().all(|c| c % n == 0) {
        for m in &mut per_gpu {
            for (p, c) in counts {
                if c / n > 0 {
                    m.insert(p.clone(), c / n);
                }
            }
        }
    } else {
        let mut order: Vec<(&String, u32)> = counts.iter().map(|(p, c)| (p, *c)).collect();
        let size = |p: &str| {
            model
                .and_then(|m| m.profile(p))
                .map_or(0, |pr| u32::from(pr.memory_slices))
        };
        order.sort_by_key(|(p, _)| std::cmp::Reverse(size(p)));
        let mut next = 0usize;
        for (p, c) in order {
            for _ in 0..c.min(1024) {
                let fits = |m: &BTreeMap<String, u32>| {
                    let Some(model) = model else { return true };
                    let mut trial: Vec<(&str, u32)> =
                        m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                    match trial.iter_mut().find(|(k, _)| *k == p.as_str()) {
                        Some(e) => e.1 += 1,
                        None => trial.push((p.as_str(), 1)),
                    }
                    geometry::place_counts(model, &trial).is_ok()
                };
                let target = if model.is_some() {
                    (0..per_gpu.len())
                        .find(|&i| fits(&per_gpu[i]))
                        .unwrap_or(next % per_gpu.len())
                } else {
                    next % per_gpu.len()
                };
                *per_gpu[target].entry(p.clone()).or_default() += 1;
                next += 1;
            }
        }
    }
    for (g, m) in gpus.iter_mut().zip(per_gpu) {
        let counts: Vec<(&str, u32)> = m.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let (slots, _) = layout_slots(model, &counts);
        // When the geometry cannot place the inferred counts, keep them unplaced.
        let slots = if slots.is_empty() && !counts.is_empty() {
            layout_slots(None, &counts).0
        } else {
            slots
        };
        g.mig_enabled = !slots.is_empty();
        g.mig = slots;
    }
}

/// `nvidia.com/mig-<profile>.count` labels of the mixed strategy.
fn mig_count_labels(labels: &BTreeMap<String, String>) -> BTreeMap<String, u32> {
    labels
        .iter()
        .filter_map(|(k, v)| {
            let profile = k.strip_prefix("nvidia.com/mig-")?.strip_suffix(".count")?;
            let n = v.parse::<u32>().ok().filter(|n| *n > 0)?;
            Some((catalogue_name(profile), n))
        })
        .collect()
}

/// A profile as the device plugin writes it (`1g.10gb.me`) in the catalogue's form (`1g.10gb+me`).
fn catalogue_name(profile: &str) -> String {
    match profile.split_once("gb.") {
        Some((head, attr)) => format!("{head}gb+{attr}"),
        None => profile.to_string(),
    }
}

fn total_counts(gpus: &[PhysicalGpu]) -> BTreeMap<String, u32> {
    let mut m = BTreeMap::new();
    for g in gpus {
        for s in &g.mig {
            *m.entry(s.profile.clone()).or_default() += 1;
        }
    }
    m
}

fn describe(counts: &BTreeMap<String, u32>) -> String {
    let parts: Vec<String> = counts.iter().map(|(p, n)| format!("{n} x {p}")).collect();
    parts.join(", ")
}

/// Sharing as GPU Feature Discovery labels report it; `None` when they say nothing.
fn sharing_from_labels(d: &NodeDraft) -> Option<SharingConfig> {
    let l = &d.labels;
    let strategy_label = l.get(LABEL_SHARING).map(String::as_str);
    let replicas = l.get(LABEL_REPLICAS).and_then(|r| r.parse::<u32>().ok());
    let shared_suffix = l.get(LABEL_PRODUCT).is_some_and(|p| p.ends_with("-SHARED"));
    let mut per_resource = BTreeMap::new();
    let mut mig_strategy_label = None;
    for (k, v) in l {
        let Some(rest) = k.strip_prefix("nvidia.com/mig-") else {
            continue;
        };
        if let Some(profile) = rest.strip_suffix(".replicas") {
            if let Ok(n) = v.parse::<u32>() {
                if n > 1 {
                    per_resource.insert(format!("nvidia.com/mig-{profile}"), n);
                }
            }
        } else if rest.ends_with(".sharing-strategy") {
            mig_strategy_label = Some(v.as_str());
        }
    }
    let strategy = match strategy_label.or(mig_strategy_label) {
        Some("time-slicing") => SharingStrategy::TimeSlicing,
        Some("mps") => SharingStrategy::Mps,
        Some(_) => SharingStrategy::None,
        None if shared_suffix || replicas.is_some_and(|r| r > 1) || !per_resource.is_empty() => {
            SharingStrategy::TimeSlicing
        }
        None => return None,
    };
    if strategy == SharingStrategy::None && replicas.is_none_or(|r| r <= 1) {
        return Some(SharingConfig {
            source: ConfigSource::NodeLabels,
            ..SharingConfig::default()
        });
    }
    if let Some(r) = replicas.filter(|r| *r > 1) {
        per_resource.insert("nvidia.com/gpu".to_string(), r);
    }
    Some(SharingConfig {
        source: ConfigSource::NodeLabels,
        strategy,
        rename_by_default: false,
        fail_requests_greater_than_one: strategy == SharingStrategy::Mps,
        replicas: per_resource,
        device_list_strategy: vec!["envvar".to_string()],
    })
}

/// Physical GPUs: the count label; else what the node advertises divided by the replicas; else
/// HAMi's device list.
fn gpu_count(d: &NodeDraft, sharing: &SharingConfig, hami_devices: usize) -> u32 {
    if let Some(n) = d
        .labels
        .get(LABEL_COUNT)
        .and_then(|c| c.parse::<u32>().ok())
    {
        return n;
    }
    if let Some(ext) = &d.extended {
        let replicas = u64::from(sharing.replicas_for("nvidia.com/gpu"));
        let advertised = ext
            .get("nvidia.com/gpu")
            .or_else(|| ext.get("nvidia.com/gpu.shared"))
            .copied()
            .unwrap_or(0);
        if advertised > 0 {
            return u32::try_from(advertised.div_ceil(replicas.max(1))).unwrap_or(u32::MAX);
        }
    }
    u32::try_from(hami_devices).unwrap_or(u32::MAX)
}

fn driver_label(labels: &BTreeMap<String, String>) -> Option<Version> {
    if let Some(v) = labels.get(DRIVER_FULL).and_then(|v| Version::parse(v)) {
        return Some(v);
    }
    for keys in [DRIVER_PARTS, DRIVER_DEPRECATED] {
        let parts: Option<Vec<&String>> = keys.iter().map(|k| labels.get(*k)).collect();
        if let Some(p) = parts {
            let text = format!("{}.{}.{}", p[0], p[1], p[2]);
            if let Some(v) = Version::parse(&text) {
                return Some(v);
            }
        }
    }
    None
}

fn strategy_name(s: SharingStrategy) -> &'static str {
    match s {
        SharingStrategy::None => "no sharing",
        SharingStrategy::TimeSlicing => "time-slicing",
        SharingStrategy::Mps => "MPS",
    }
}

fn mig_strategy_name(s: MigStrategy) -> &'static str {
    match s {
        MigStrategy::None => "none",
        MigStrategy::Single => "single",
        MigStrategy::Mixed => "mixed",
    }
}

/// Whether a node offers a resource to the scheduler: what its status advertises; for a node written
/// without status, what its GPU configuration makes the device plugin advertise.
pub(crate) fn offers(d: &NodeDraft, gpu: Option<&GpuNode>, resource: &str) -> bool {
    if let Some(ext) = &d.extended {
        return ext.get(resource).is_some_and(|v| *v > 0);
    }
    if !resource.starts_with("nvidia.com/") {
        return true;
    }
    let Some(g) = gpu else { return false };
    match resource {
        "nvidia.com/gpu" | "nvidia.com/gpu.shared" => {
            let renamed =
                g.sharing.rename_by_default && g.sharing.strategy != SharingStrategy::None;
            let wants_shared = resource.ends_with(".shared");
            if g.mig_strategy == MigStrategy::Mixed
                && g.gpus.iter().all(|p| p.mig_enabled)
                && !g.gpus.is_empty()
            {
                return false;
            }
            renamed == wants_shared
        }
        r if r.starts_with("nvidia.com/mig-") => {
            let profile = r.trim_start_matches("nvidia.com/mig-");
            let profile = profile.strip_suffix(".shared").unwrap_or(profile);
            g.mig_strategy == MigStrategy::Mixed
                && g.gpus
                    .iter()
                    .flat_map(|p| &p.mig)
                    .any(|s| s.profile.replace('+', ".") == profile)
        }
        // HAMi's resources exist on HAMi nodes.
        "nvidia.com/gpumem" | "nvidia.com/gpumem-percentage" | "nvidia.com/gpucores" => g.hami,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_from_labels() {
        assert_eq!(catalogue_name("1g.10gb.me"), "1g.10gb+me");
        assert_eq!(catalogue_name("3g.40gb"), "3g.40gb");
    }

    #[test]
    fn uneven_label_counts_are_spread_within_the_geometry() {
        let model = catalogue::lookup("NVIDIA-H100-80GB-HBM3");
        assert!(model.is_some());
        let mut gpus: Vec<PhysicalGpu> = (0..2)
            .map(|i| PhysicalGpu {
                index: i,
                uuid: None,
                mig_enabled: false,
                mig: vec![],
            })
            .collect();
        let counts = BTreeMap::from([("3g.40gb".to_string(), 3), ("1g.10gb".to_string(), 2)]);
        distribute(model, &counts, &mut gpus);
        let total: usize = gpus.iter().map(|g| g.mig.len()).sum();
        assert_eq!(total, 5);
        assert!(gpus.iter().all(|g| g.mig.iter().all(|s| s.start.is_some())));
    }
}
