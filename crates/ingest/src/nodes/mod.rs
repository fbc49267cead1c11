//! Nodes: labels, taints, and the GPU side, read from whichever installer or platform configured it
//! (see [`crate::platforms`]).
//!
//! Device plugin sharing: the plugin that serves a node finds its config through its installer. The
//! GPU Operator's ClusterPolicy names a ConfigMap of named configs (`spec.devicePlugin.config`); a
//! device plugin installed by its Helm chart or static manifests names one in its DaemonSet (a
//! mounted ConfigMap, or config-manager's ConfigMap of named configs). Config-manager picks a key by
//! the node label `nvidia.com/device-plugin.config`, else the default, else its fallbacks. A
//! ConfigMap or key that is named but absent, or a config the plugin would reject, is recorded as
//! unresolved (GT002). Managed platforms state their own sharing in labels (GKE time-sharing); GPU
//! Feature Discovery labels (`nvidia.com/gpu.sharing-strategy`, `nvidia.com/gpu.replicas`, the
//! `-SHARED` product suffix) stand in as evidence when no config is in force.
//!
//! MIG: the node label `nvidia.com/mig.config` names a config in the mig-parted ConfigMap
//! (`spec.migManager.config.name`, default `default-mig-parted-config`, key `config.yaml`; since
//! operator v26.3.0 also a per-node `<node>-mig-config`). Its entries apply, by `device-filter` (the
//! PCI id of the node's GPU model) and `devices`, to each GPU; the catalogue's geometry places the
//! instances. The mixed-strategy labels `nvidia.com/mig-<profile>.count` are evidence, and the
//! fallback when the config is not in the input; a platform's partition size (GKE) cuts every GPU
//! into as many instances of one profile as fit.
//!
//! What the input does not say (a driver version GKE does not label) is recorded per node as an
//! unknown fact with its reason.

mod mig;

use crate::api::Unread;
use crate::cluster::Operands;
use crate::device_plugin::{self, parse_mig_strategy, DevicePluginConfig, Strictness};
use crate::mig_parted::MigPartedConfig;
use crate::placement::Constraints;
use crate::platforms::plugin_daemonset::PluginDaemonSet;
use crate::platforms::{self, gfd, Choice, LabelFacts, PluginSelection};
use crate::util::{quantity_u64, uuids};
use gpu_trust_model::catalogue::{self, GpuModel};
use gpu_trust_model::fleet::{
    ClusterPolicyInfo, ConfigSource, GpuNode, MigRequest, MigStrategy, Node, NodeFact, NodeId,
    PhysicalGpu, Platform, SharingConfig, SharingStrategy, Taint, TaintEffect, UnknownFact,
    Unresolved, UnresolvedKind,
};
use gpu_trust_model::resource;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, ObjectRef, Version};
use std::collections::BTreeMap;

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
    pub info: Option<&'c ClusterPolicyInfo>,
    /// How the GPU Operator's device plugin finds its config (from the ClusterPolicy).
    pub operator: Option<PluginSelection>,
    /// Device plugins installed without the operator.
    pub daemonsets: &'c [PluginDaemonSet],
    pub operator_namespace: &'c str,
    pub config_maps: &'c BTreeMap<(String, String), ConfigMapDraft>,
    pub operands: &'c BTreeMap<String, Operands>,
    pub operator_version: Option<Version>,
    pub dp_cache: BTreeMap<(String, String, String), Option<DevicePluginConfig>>,
    pub mig_cache: BTreeMap<(String, String), Option<MigPartedConfig>>,
    /// Collections the reader of a live cluster could not list.
    pub unread: &'c [Unread],
    /// The ClusterPolicy, for the workloads (containers or VMs) it gives each node.
    pub policy: Option<&'c crate::crd::ClusterPolicy>,
}

/// What resolving one node produced.
#[derive(Default)]
pub(crate) struct Resolved {
    pub gpu: Option<GpuNode>,
    pub unresolved: Vec<Unresolved>,
    pub diagnostics: Vec<Diagnostic>,
    pub mig_requests: Vec<MigRequest>,
}

impl Resolved {
    fn unresolved(&mut self, d: &NodeDraft, what: UnresolvedKind, message: String) {
        self.unresolved.push(Unresolved {
            object: d.object.clone(),
            node: Some(d.name.clone()),
            what,
            message,
        });
    }

    fn warn(&mut self, d: &NodeDraft, code: Code, message: String) {
        self.diagnostics.push(Diagnostic::warning(
            code,
            d.object.location.clone(),
            message,
        ));
    }
}

pub(crate) fn is_gpu_node(d: &NodeDraft, platform_facts: &[LabelFacts]) -> bool {
    gfd::says_gpu(&d.labels)
        || d.hami_register.is_some()
        || platform_facts.iter().any(|p| p.has_gpu)
        || d.extended.as_ref().is_some_and(|e| {
            e.iter()
                .any(|(k, v)| *v > 0 && resource::is_nvidia_gpu_resource(k))
        })
}

/// The first resource of GPUs passed through to VMs the node advertises, by name.
fn passthrough_resource(d: &NodeDraft) -> Option<&str> {
    d.extended
        .as_ref()?
        .iter()
        .find(|(k, v)| **v > 0 && resource::is_passthrough(k))
        .map(|(k, _)| k.as_str())
}

/// The plugin config the node's installer selects: the GPU Operator's, else the one device plugin
/// DaemonSet that runs on the node. `Err` when several DaemonSets that disagree run there.
fn selection_for<'s>(
    operator: Option<&'s PluginSelection>,
    daemonsets: &'s [PluginDaemonSet],
    d: &NodeDraft,
) -> Result<Option<&'s PluginSelection>, String> {
    if let Some(op) = operator {
        return Ok(Some(op));
    }
    let node = Node {
        object: d.object.clone(),
        name: d.name.clone(),
        labels: d.labels.clone(),
        taints: d.taints.clone(),
        gpu: None,
    };
    let runs_here = |c: &Constraints| c.permits(&node, &|_| true);
    let found: Vec<&PluginSelection> = daemonsets
        .iter()
        .filter(|p| runs_here(&p.constraints))
        .map(|p| &p.selection)
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        [first, rest @ ..] if rest.iter().all(|s| s.config == first.config && s.env == first.env) => {
            Ok(Some(first))
        }
        many => Err(format!(
            "{} device plugin DaemonSets run on the node with different configs ({}): which one advertises its GPUs is unknown",
            many.len(),
            many.iter()
                .map(|s| s.owner.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

impl Context<'_> {
    /// Why the ConfigMaps of `namespace` are not in the input when the reader could not list them.
    fn unread_config_maps(&self, namespace: &str) -> Option<String> {
        self.unread
            .iter()
            .find(|u| u.covers("", "ConfigMap", namespace))
            .map(|u| u.reason.clone())
    }

    pub(crate) fn resolve(&mut self, d: &NodeDraft, id: NodeId) -> Resolved {
        let mut out = Resolved::default();
        let platform_facts = platforms::read_labels(&d.labels);
        if !is_gpu_node(d, &platform_facts) {
            return out;
        }
        let labels = &d.labels;
        let gfd_product = labels.get(gfd::PRODUCT).cloned();
        let platform_product = platform_facts.iter().find_map(|p| p.product.clone());
        // GPUs passed through to VMs, as the sandbox device plugin advertises them.
        let passthrough = passthrough_resource(d);
        let product = gfd_product.clone().or(platform_product).or_else(|| {
            passthrough
                .filter(|r| resource::passthrough_model(r).is_some())
                .map(|r| r.trim_start_matches(resource::DOMAIN).to_string())
        });
        let model = match &gfd_product {
            Some(p) => catalogue::lookup(p),
            None => platform_facts.iter().find_map(|p| p.model).or_else(|| {
                passthrough
                    .and_then(resource::passthrough_model)
                    .and_then(catalogue::lookup)
            }),
        };
        let hidden = |fact: NodeFact| {
            platform_facts
                .iter()
                .flat_map(|p| &p.hidden)
                .find(|h| h.fact == fact)
                .map(|h| h.reason.clone())
        };
        let mut unknown: Vec<UnknownFact> = Vec::new();
        let mut unknown_fact = |fact: NodeFact, reason: String| {
            unknown.push(UnknownFact { fact, reason });
        };
        match (&product, model) {
            (Some(p), None) => {
                let message = match (&gfd_product, hidden(NodeFact::GpuModel)) {
                    (Some(_), _) => format!("GPU product `{p}` is not in the GPU catalogue: MIG geometry and CC support unknown"),
                    // The platform says why its name is no catalogue model (a fraction of a GPU, an
                    // instance type it does not map).
                    (None, Some(reason)) => format!("{reason}: the GPU model is unknown"),
                    (None, None) => format!("the platform names the GPU `{p}`, which the GPU catalogue does not know: MIG geometry and CC support unknown"),
                };
                unknown_fact(NodeFact::GpuModel, message.clone());
                out.unresolved(d, UnresolvedKind::GpuModel, message);
            }
            (None, _) => {
                let message = match (hidden(NodeFact::GpuModel), passthrough) {
                    (Some(reason), _) => format!("{reason}: the GPU model is unknown"),
                    (None, Some(name)) => format!(
                        "the node passes its GPUs through to VMs as `{name}`, which names no GPU model, and has no `{}` label: the GPU model is unknown",
                        gfd::PRODUCT
                    ),
                    (None, None) => {
                        format!("no `{}` label: the GPU model is unknown", gfd::PRODUCT)
                    }
                };
                unknown_fact(NodeFact::GpuModel, message.clone());
                out.unresolved(d, UnresolvedKind::GpuModel, message);
            }
            _ => {}
        }

        // On a node the operator gives VMs, its device plugin does not run: the sandbox device
        // plugin passes whole GPUs through instead, and nothing shares them.
        let vm = platforms::gpu_operator::sandbox_workload(self.policy, labels);
        let operator = self.operator.as_ref().filter(|_| vm.is_none());
        let selection = match selection_for(operator, self.daemonsets, d) {
            Ok(s) => s.cloned(),
            Err(message) => {
                out.unresolved(d, UnresolvedKind::DevicePluginConfig, message);
                None
            }
        };
        let (sharing, dp_config) = self.sharing(d, selection.as_ref(), &platform_facts, &mut out);
        let mig_strategy = self.mig_strategy(
            d,
            selection.as_ref(),
            dp_config.as_ref(),
            &platform_facts,
            &mut out,
        );

        let hami_uuids = d.hami_register.as_deref().map(uuids).unwrap_or_default();
        let platform_mig = platform_facts.iter().find_map(|p| p.mig.clone());
        let instances_per_gpu = platform_mig
            .as_ref()
            .and_then(|(profile, _)| model?.profile(profile))
            .map_or(1, |p| u32::from(p.max_count.max(1)));
        let (mut count, counted_by) = match labels
            .get(gfd::COUNT)
            .and_then(|c| c.trim().parse::<u32>().ok())
        {
            Some(c) => (c, format!("label `{}`", gfd::COUNT)),
            None => match platform_facts.iter().find_map(|p| p.count) {
                Some(c) => (c, "the platform's GPU count label".to_string()),
                None => (
                    advertised_gpus(d, &sharing, instances_per_gpu, hami_uuids.len()),
                    "the GPU resources it advertises".to_string(),
                ),
            },
        };
        // A count no node has is an error, and the GPUs are not modelled one by one.
        let mut implausible = None;
        if count > gpu_trust_model::labels::MAX_GPUS_PER_NODE {
            let message = format!(
                "Node {}: {} says {count} GPUs, more than any node holds (at most {}): its GPUs are not judged",
                d.name,
                counted_by,
                gpu_trust_model::labels::MAX_GPUS_PER_NODE
            );
            out.diagnostics.push(Diagnostic::error(
                Code::ImplausibleGpuCount,
                d.object.location.clone(),
                message.clone(),
            ));
            implausible = Some(message);
            count = 0;
        }
        let mut gpus: Vec<PhysicalGpu> = (0..count)
            .map(|i| PhysicalGpu {
                index: i,
                uuid: hami_uuids.get(i as usize).cloned(),
                mig_enabled: false,
                mig: Vec::new(),
            })
            .collect();
        let mut mig_source = self.mig_layout(d, id, model, mig_strategy, &mut gpus, &mut out);
        if mig_source.is_none() {
            if let Some((profile, _)) = &platform_mig {
                mig_source = mig::platform_partitions(
                    d,
                    model,
                    profile,
                    instances_per_gpu,
                    &mut gpus,
                    &mut out,
                );
            }
        }
        if gpus.is_empty() {
            unknown_fact(
                NodeFact::GpuCount,
                implausible.unwrap_or_else(|| {
                    format!(
                        "no `{}` label, platform GPU count or advertised GPU resource in the input",
                        gfd::COUNT
                    )
                }),
            );
        }

        let memory_mib = labels
            .get(gfd::MEMORY)
            .and_then(|m| m.parse::<u64>().ok())
            .or_else(|| platform_facts.iter().find_map(|p| p.memory_mib))
            .or(model.map(|m| m.memory_mib));
        let operands = self.operands.get(&d.name);
        let driver_version = gfd::driver_version(labels)
            .or_else(|| operands.and_then(|o| o.driver.clone()))
            .or_else(|| self.info.and_then(|i| i.driver_version.clone()));
        if driver_version.is_none() {
            unknown_fact(
                NodeFact::DriverVersion,
                hidden(NodeFact::DriverVersion).unwrap_or_else(|| {
                    "no GPU Feature Discovery driver label, driver operand image or ClusterPolicy driver version in the input".to_string()
                }),
            );
        }
        let toolkit_version = operands
            .and_then(|o| o.toolkit.clone())
            .or_else(|| self.info.and_then(|i| i.toolkit_version.clone()));
        if toolkit_version.is_none() {
            unknown_fact(
                NodeFact::ToolkitVersion,
                hidden(NodeFact::ToolkitVersion).unwrap_or_else(|| {
                    "no container toolkit operand image or ClusterPolicy toolkit version in the input (no node label carries it)".to_string()
                }),
            );
        }
        let cc_mode = gfd::cc_mode(labels);
        if cc_mode.is_none() && model.is_some_and(GpuModel::cc_capable) {
            unknown_fact(
                NodeFact::CcMode,
                format!(
                    "the GPU supports confidential computing, but no `{}` label says its mode",
                    gfd::CC_MODE_STATE
                ),
            );
        }
        for u in &out.unresolved {
            match u.what {
                UnresolvedKind::DevicePluginConfig => {
                    unknown_fact(NodeFact::SharingConfig, u.message.clone())
                }
                UnresolvedKind::MigConfig => unknown_fact(NodeFact::MigLayout, u.message.clone()),
                UnresolvedKind::GpuModel
                | UnresolvedKind::MissingNode
                | UnresolvedKind::ExtendedResource
                | UnresolvedKind::EnvFrom
                | UnresolvedKind::SecretEnv
                | UnresolvedKind::RuntimeClass
                | UnresolvedKind::UnmappedGpu
                | UnresolvedKind::Other => {}
            }
        }
        unknown.sort();
        unknown.dedup_by(|a, b| a.fact == b.fact);

        let mut node_platforms: Vec<Platform> = platform_facts.iter().map(|p| p.platform).collect();
        if gfd::labelled(labels) {
            node_platforms.push(Platform::GpuFeatureDiscovery);
        }
        if let Some(s) = &selection {
            node_platforms.push(s.platform);
        } else if self.info.is_some() {
            node_platforms.push(Platform::GpuOperator);
        }
        node_platforms.sort();
        node_platforms.dedup();

        out.gpu = Some(GpuNode {
            product,
            model: model.map(|m| m.id.to_string()),
            count: u32::try_from(gpus.len()).unwrap_or(u32::MAX),
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
            advertised: d.extended.clone(),
            platforms: node_platforms,
            unknown,
            workload: vm.unwrap_or_default(),
        });
        out
    }

    /// The device plugin sharing config in force, and the parsed config when one was found.
    fn sharing(
        &mut self,
        d: &NodeDraft,
        selection: Option<&PluginSelection>,
        platform_facts: &[LabelFacts],
        out: &mut Resolved,
    ) -> (SharingConfig, Option<DevicePluginConfig>) {
        let mut resolved: Option<(SharingConfig, Option<DevicePluginConfig>)> = None;
        match selection {
            Some(sel) => {
                let keys: Option<Vec<&str>> = self
                    .config_maps
                    .get(&(sel.namespace.clone(), configmap_of(sel)))
                    .map(|cm| cm.data.keys().map(String::as_str).collect());
                match sel.choose(&d.labels, keys.as_deref()) {
                    Choice::Defaults => {
                        resolved = Some((SharingConfig::default(), None));
                    }
                    Choice::Key { configmap, key } => {
                        let ns = sel.namespace.clone();
                        let cm = self
                            .config_maps
                            .get(&(ns.clone(), configmap.clone()))
                            .cloned();
                        match cm.and_then(|cm| {
                            self.device_plugin_config(&cm, &ns, &configmap, &key, &mut out.diagnostics)
                        }) {
                            Some(config) => {
                                let source = ConfigSource::ConfigMap {
                                    namespace: ns,
                                    name: configmap,
                                    key,
                                    config: None,
                                };
                                resolved = Some((config.sharing_config(source), Some(config)));
                            }
                            None => out.unresolved(
                                d,
                                UnresolvedKind::DevicePluginConfig,
                                format!(
                                    "device plugin config {ns}/{configmap} key `{key}` is invalid: the plugin would not start with it"
                                ),
                            ),
                        }
                    }
                    Choice::Missing(message) => match keys
                        .is_none()
                        .then(|| self.unread_config_maps(&sel.namespace))
                        .flatten()
                    {
                        // The ConfigMap is not in the input because it could not be read: what it
                        // says is unknown, not missing (the unread list is the coverage gap).
                        Some(why) => out.unresolved(
                            d,
                            UnresolvedKind::Other,
                            format!(
                                "the device plugin config of {} is in ConfigMap {}/{}, which could not be read from the cluster ({why}): the sharing mode of the node is unknown",
                                sel.owner,
                                sel.namespace,
                                configmap_of(sel)
                            ),
                        ),
                        None => out.unresolved(d, UnresolvedKind::DevicePluginConfig, message),
                    },
                }
            }
            None => {
                if let Some(label) = d
                    .labels
                    .get(gfd::DEVICE_PLUGIN_CONFIG)
                    .filter(|v| !v.is_empty())
                {
                    out.unresolved(
                        d,
                        UnresolvedKind::DevicePluginConfig,
                        format!(
                            "the node selects device plugin config `{label}`, but no ClusterPolicy or device plugin DaemonSet in the input names its ConfigMap"
                        ),
                    );
                }
            }
        }
        let labelled = gfd::sharing(&d.labels);
        let had_unresolved = out
            .unresolved
            .iter()
            .any(|u| u.what == UnresolvedKind::DevicePluginConfig);
        let (mut sharing, config) = match resolved {
            Some((s, c)) => {
                self.compare_labels(d, &s, &labelled, out);
                (s, c)
            }
            None => {
                let platform = platform_facts.iter().find_map(|p| p.sharing);
                match (platform, from_labels(&labelled)) {
                    (Some((strategy, replicas)), _) => (platform_sharing(strategy, replicas), None),
                    (None, Some(mut s)) => {
                        if s.strategy != SharingStrategy::None && s.replicas.is_empty() {
                            // The plugin never shares with fewer than 2 replicas.
                            s.replicas.insert(resource::GPU.to_string(), 2);
                            out.warn(
                                d,
                                Code::SharedWithoutReplicas,
                                format!(
                                    "node {}: its labels say the GPUs are shared but not how many ways; taken as at least 2",
                                    d.name
                                ),
                            );
                        }
                        (s, None)
                    }
                    (None, None) if had_unresolved => (
                        SharingConfig {
                            source: ConfigSource::Unknown,
                            ..SharingConfig::default()
                        },
                        None,
                    ),
                    (None, None) => (SharingConfig::default(), None),
                }
            }
        };
        let configured = config
            .as_ref()
            .and_then(|c| c.flags.plugin.as_ref())
            .and_then(|p| p.device_list_strategy.clone());
        if let Some(env) = selection.and_then(|s| s.env.device_list_strategy.clone()) {
            sharing.device_list_strategy = env;
        } else if configured.is_none() {
            if let Some(default) =
                selection.and_then(|s| s.env.default_device_list_strategy.clone())
            {
                sharing.device_list_strategy = default;
            }
        }
        if let Some(ext) = &d.extended {
            if ext.get(resource::GPU_SHARED).is_some_and(|v| *v > 0) {
                sharing.rename_by_default = true;
            }
        }
        (sharing, config)
    }

    /// Warns when GPU Feature Discovery's labels describe another sharing than the config in force,
    /// resource by resource (labels that carry no sharing information are not compared).
    fn compare_labels(
        &self,
        d: &NodeDraft,
        config: &SharingConfig,
        labelled: &BTreeMap<String, gfd::LabelledSharing>,
        out: &mut Resolved,
    ) {
        for (name, l) in labelled {
            let replicas = config.replicas_for(name);
            let strategy = if replicas > 1 {
                config.strategy
            } else {
                SharingStrategy::None
            };
            let label_replicas = l.replicas.unwrap_or(1).max(1);
            let label_strategy = if label_replicas > 1 || l.replicas.is_none() {
                l.strategy
            } else {
                SharingStrategy::None
            };
            if label_strategy != strategy || (l.replicas.is_some() && label_replicas != replicas) {
                out.warn(
                    d,
                    Code::LabelsDisagree,
                    format!(
                        "node {}: its GPU Feature Discovery labels say {} x{} for {name}, the config in force says {} x{}; the labels may predate a config change",
                        d.name,
                        strategy_name(label_strategy),
                        label_replicas,
                        strategy_name(strategy),
                        replicas
                    ),
                );
            }
        }
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
                    e.code,
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
        selection: Option<&PluginSelection>,
        config: Option<&DevicePluginConfig>,
        platform_facts: &[LabelFacts],
        out: &mut Resolved,
    ) -> MigStrategy {
        let label = d
            .labels
            .get(gfd::MIG_STRATEGY)
            .and_then(|s| parse_mig_strategy(s));
        let chosen = selection
            .and_then(|s| s.env.mig_strategy)
            .or_else(|| config.and_then(DevicePluginConfig::mig_strategy))
            .or(label)
            .or_else(|| {
                platform_facts
                    .iter()
                    .find_map(|p| p.mig.as_ref().map(|m| m.1))
            })
            .or_else(|| (!gfd::mig_counts(&d.labels).is_empty()).then_some(MigStrategy::Mixed))
            .unwrap_or_default();
        if let Some(l) = label {
            if l != chosen {
                out.warn(
                    d,
                    Code::LabelsDisagree,
                    format!(
                        "node {}: label {} says {}, the configuration says {}",
                        d.name,
                        gfd::MIG_STRATEGY,
                        l.as_str(),
                        chosen.as_str()
                    ),
                );
            }
        }
        chosen
    }
}

fn fallback_location(inner: &Location, object: &Location, offset: u32) -> Location {
    if inner.line > offset && offset > 0 {
        inner.clone()
    } else {
        object.clone()
    }
}

/// Physical GPUs from what the node advertises: `nvidia.com/gpu` (or `.shared`) divided by the
/// replicas and the instances per GPU; else HAMi's device list.
fn advertised_gpus(
    d: &NodeDraft,
    sharing: &SharingConfig,
    per_gpu: u32,
    hami_devices: usize,
) -> u32 {
    if let Some(ext) = &d.extended {
        // GPUs passed through whole, one device each.
        let passed: u64 = ext
            .iter()
            .filter(|(k, _)| resource::is_passthrough(k))
            .map(|(_, v)| *v)
            .sum();
        if passed > 0 {
            return u32::try_from(passed).unwrap_or(u32::MAX);
        }
        let replicas = u64::from(sharing.replicas_for(resource::GPU));
        let advertised = ext
            .get(resource::GPU)
            .or_else(|| ext.get(resource::GPU_SHARED))
            .copied()
            .unwrap_or(0);
        if advertised > 0 {
            let per_physical = replicas.max(1).saturating_mul(u64::from(per_gpu.max(1)));
            return u32::try_from(advertised.div_ceil(per_physical)).unwrap_or(u32::MAX);
        }
    }
    u32::try_from(hami_devices).unwrap_or(u32::MAX)
}

/// Sharing as GPU Feature Discovery labels report it; `None` when they say nothing.
fn from_labels(labelled: &BTreeMap<String, gfd::LabelledSharing>) -> Option<SharingConfig> {
    if labelled.is_empty() {
        return None;
    }
    let strategy = labelled
        .values()
        .map(|l| l.strategy)
        .find(|s| *s != SharingStrategy::None)
        .unwrap_or(SharingStrategy::None);
    let replicas: BTreeMap<String, u32> = labelled
        .iter()
        .filter_map(|(name, l)| Some((name.clone(), l.replicas.filter(|r| *r > 1)?)))
        .collect();
    Some(SharingConfig {
        source: ConfigSource::NodeLabels,
        strategy,
        rename_by_default: false,
        fail_requests_greater_than_one: strategy == SharingStrategy::Mps,
        replicas,
        device_list_strategy: vec!["envvar".to_string()],
        allocation_policy: None,
    })
}

/// A managed platform's sharing of every device (GKE: each GPU or partition advertised `replicas`
/// times; its plugin refuses requests for more than one shared GPU).
fn platform_sharing(strategy: SharingStrategy, replicas: u32) -> SharingConfig {
    let shared = strategy != SharingStrategy::None && replicas > 1;
    SharingConfig {
        source: ConfigSource::NodeLabels,
        strategy: if shared {
            strategy
        } else {
            SharingStrategy::None
        },
        rename_by_default: false,
        fail_requests_greater_than_one: shared,
        replicas: if shared {
            BTreeMap::from([(resource::GPU.to_string(), replicas)])
        } else {
            BTreeMap::new()
        },
        device_list_strategy: vec!["envvar".to_string()],
        allocation_policy: None,
    }
}

/// The ConfigMap a selection reads (empty when none).
fn configmap_of(sel: &PluginSelection) -> String {
    match &sel.config {
        platforms::PluginConfig::File { configmap, .. }
        | platforms::PluginConfig::Named { configmap, .. } => configmap.clone(),
        platforms::PluginConfig::None | platforms::PluginConfig::Unreadable(_) => String::new(),
    }
}

fn strategy_name(s: SharingStrategy) -> &'static str {
    match s {
        SharingStrategy::None => "no sharing",
        SharingStrategy::TimeSlicing => "time-slicing",
        SharingStrategy::Mps => "MPS",
    }
}

/// Whether a node offers a resource to the scheduler: what its status advertises; for a node written
/// without status, what its GPU configuration makes the device plugin advertise.
pub(crate) fn offers(d: &NodeDraft, gpu: Option<&GpuNode>, name: &str) -> bool {
    match gpu {
        Some(g) => g.advertises(name),
        None => match &d.extended {
            Some(ext) => ext.get(name).is_some_and(|v| *v > 0),
            None => !name.starts_with(resource::DOMAIN),
        },
    }
}
