//! Platform adapters: where a node's GPU facts come from, one file per installer or platform.
//!
//! The facts about a GPU node (model, count, MIG geometry, sharing strategy and replicas, driver
//! version, CC mode) are written by whichever installer the cluster uses, each with its own labels and
//! configuration objects:
//!
//! - [`gfd`]: NVIDIA GPU Feature Discovery's `nvidia.com/*` labels, which the GPU Operator and the
//!   device plugin's Helm chart both deploy.
//! - [`gpu_operator`]: the GPU Operator's ClusterPolicy, which names the device plugin and mig-parted
//!   ConfigMaps.
//! - [`plugin_daemonset`]: the device plugin installed by its Helm chart or static manifests, whose
//!   config is found through its DaemonSet (`--config-file`, the config-manager sidecar).
//! - Managed platforms, read from the labels the platform puts on its nodes: [`gke`], [`eks`] (with
//!   Karpenter's AWS provider), [`aks`] (with Karpenter's Azure provider), [`openshift`].
//!
//! Adding a managed platform takes:
//! - one file here: a [`LabelAdapter`] with its label names, each with its source;
//! - its `mod` line and its entry in [`ADAPTERS`] in this file;
//! - its [`Platform`] variant and spelling in `crates/model/src/fleet/node.rs` (the `platforms!` table);
//! - a fixture built from the platform's public manifests or documentation under
//!   `crates/rules/tests/fixtures/platforms/`, in which ingest finds a node of the platform, and a
//!   row naming the platform's spelling in README.md's "Platforms read" table
//!   (`crates/rules/tests/it/platforms.rs` enumerates [`Platform::ALL`] and fails until both exist).
//!
//! What a platform hides (GKE does not label the driver version) is an [`UnknownFact`] with its
//! reason, never a guessed value.

pub(crate) mod aks;
pub(crate) mod eks;
pub(crate) mod gfd;
pub(crate) mod gke;
pub(crate) mod gpu_operator;
pub(crate) mod openshift;
pub(crate) mod plugin_daemonset;

use gpu_trust_model::catalogue::GpuModel;
use gpu_trust_model::fleet::{MigStrategy, NodeFact, Platform, SharingStrategy, UnknownFact};
use gpu_trust_model::ObjectRef;
use std::collections::BTreeMap;

/// What one platform's node labels say about the node's GPUs. Every field is `None` when the
/// platform's labels do not say it.
#[derive(Debug, Clone)]
pub(crate) struct LabelFacts {
    pub platform: Platform,
    /// Whether the labels say the node has NVIDIA GPUs at all.
    pub has_gpu: bool,
    /// The label value naming the GPU (`nvidia-tesla-t4`), shown when GPU Feature Discovery's product
    /// label is absent.
    pub product: Option<String>,
    /// The catalogue model that value names, when it names exactly one.
    pub model: Option<&'static GpuModel>,
    /// Physical GPUs on the node.
    pub count: Option<u32>,
    /// Memory of one GPU, MiB.
    pub memory_mib: Option<u64>,
    /// Sharing the platform's own device plugin applies to every device: strategy and replicas.
    pub sharing: Option<(SharingStrategy, u32)>,
    /// One MIG profile the platform cuts every GPU into (catalogue spelling), and the MIG strategy
    /// its device plugin advertises the instances under.
    pub mig: Option<(String, MigStrategy)>,
    /// Facts the platform does not label, and why (used when no other source gives them).
    pub hidden: Vec<UnknownFact>,
}

impl LabelFacts {
    pub(crate) fn new(platform: Platform) -> Self {
        LabelFacts {
            platform,
            has_gpu: false,
            product: None,
            model: None,
            count: None,
            memory_mib: None,
            sharing: None,
            mig: None,
            hidden: Vec::new(),
        }
    }

    pub(crate) fn hides(&mut self, fact: NodeFact, reason: &str) {
        self.hidden.push(UnknownFact {
            fact,
            reason: reason.to_string(),
        });
    }
}

/// One managed platform, read from the labels it puts on its nodes.
pub(crate) trait LabelAdapter: Sync {
    /// The facts the node's labels give, or `None` when the node is not on this platform.
    fn read(&self, labels: &BTreeMap<String, String>) -> Option<LabelFacts>;

    /// Every name of the adapter's tables (an accelerator type, an instance GPU, a VM size) as the
    /// node labels that carry it, with the catalogue model it must resolve to.
    #[cfg(test)]
    fn mapped(&self) -> Vec<(BTreeMap<String, String>, &'static str)>;
}

/// Every label adapter, in the order their facts are preferred when two platforms label one node.
pub(crate) static ADAPTERS: &[&dyn LabelAdapter] =
    &[&gke::Gke, &eks::Eks, &aks::Aks, &openshift::OpenShift];

/// The facts of every platform whose labels the node carries.
pub(crate) fn read_labels(labels: &BTreeMap<String, String>) -> Vec<LabelFacts> {
    ADAPTERS.iter().filter_map(|a| a.read(labels)).collect()
}

/// How the device plugin that serves a node finds its config: what an installer configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PluginSelection {
    /// The installer: [`Platform::GpuOperator`] or [`Platform::DevicePlugin`].
    pub platform: Platform,
    /// The object that configures the plugin (the ClusterPolicy, the DaemonSet), for messages.
    pub owner: ObjectRef,
    /// Namespace of the ConfigMaps.
    pub namespace: String,
    pub config: PluginConfig,
    /// Settings passed on the command line or in the environment, which beat the config file.
    pub env: PluginEnv,
}

/// Where the plugin's config file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PluginConfig {
    /// No config file: the plugin's defaults (no sharing).
    None,
    /// One key of a ConfigMap mounted as the config file.
    File { configmap: String, key: String },
    /// NVIDIA's config-manager picks a key of a ConfigMap per node (k8s-device-plugin
    /// `cmd/config-manager`): the node label's value, else the default, else the fallback strategies
    /// in order.
    Named {
        configmap: String,
        label: String,
        default: Option<String>,
        fallbacks: Vec<Fallback>,
    },
    /// A config file whose origin the manifest does not show (a hostPath, an unknown volume).
    Unreadable(String),
}

/// config-manager's fallback strategies when no label and no default select a config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fallback {
    /// The config named `default`.
    Named,
    /// The only config, when there is exactly one.
    Single,
    /// No config at all: the plugin's defaults.
    Empty,
}

impl Fallback {
    /// config-manager's names (`FALLBACK_STRATEGIES`: `named`, `single`, `empty`).
    pub(crate) fn parse(s: &str) -> Option<Fallback> {
        match s.trim() {
            "named" => Some(Fallback::Named),
            "single" => Some(Fallback::Single),
            "empty" => Some(Fallback::Empty),
            _ => None,
        }
    }
}

/// The config-manager's fallback `named` looks for this key (`NamedConfigFallback`).
pub(crate) const NAMED_FALLBACK_KEY: &str = "default";

/// Device plugin settings given as flags or environment, which the plugin prefers to its config
/// file (k8s-device-plugin `api/config/v1/config.go`, `updateFromCLIFlag`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PluginEnv {
    pub mig_strategy: Option<MigStrategy>,
    pub device_list_strategy: Option<Vec<String>>,
    /// The device list strategy the installer gives the plugin when its config sets none.
    pub default_device_list_strategy: Option<Vec<String>>,
}

/// What a config selection gives for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    /// No config file: the plugin's defaults.
    Defaults,
    /// This key of the ConfigMap.
    Key { configmap: String, key: String },
    /// The plugin cannot load a config; the reason, for GT002.
    Missing(String),
}

impl PluginSelection {
    /// The config this selection gives a node with `labels`, given the keys of its ConfigMap (`None`
    /// when the ConfigMap is not in the input).
    pub(crate) fn choose(
        &self,
        labels: &BTreeMap<String, String>,
        keys: Option<&[&str]>,
    ) -> Choice {
        let ns = &self.namespace;
        match &self.config {
            PluginConfig::None => Choice::Defaults,
            PluginConfig::Unreadable(why) => Choice::Missing(why.clone()),
            PluginConfig::File { configmap, key } => match keys {
                None => Choice::Missing(format!(
                    "{} mounts its config from ConfigMap {ns}/{configmap}, which is not in the input",
                    self.owner
                )),
                Some(k) if !k.contains(&key.as_str()) => Choice::Missing(format!(
                    "{} reads key `{key}` of ConfigMap {ns}/{configmap}, which has no such key",
                    self.owner
                )),
                Some(_) => Choice::Key {
                    configmap: configmap.clone(),
                    key: key.clone(),
                },
            },
            PluginConfig::Named {
                configmap,
                label,
                default,
                fallbacks,
            } => {
                let selected = labels.get(label).filter(|v| !v.is_empty());
                let absent = || {
                    Choice::Missing(format!(
                        "{} names device plugin ConfigMap {ns}/{configmap}, which is not in the input",
                        self.owner
                    ))
                };
                let pick = |key: &str, by: String| match keys {
                    None => absent(),
                    Some(k) if k.contains(&key) => Choice::Key {
                        configmap: configmap.clone(),
                        key: key.to_string(),
                    },
                    Some(_) => Choice::Missing(format!(
                        "device plugin ConfigMap {ns}/{configmap} has no key `{key}` (selected by {by})"
                    )),
                };
                if let Some(key) = selected {
                    return pick(key, format!("the node label {label}"));
                }
                if let Some(key) = default {
                    return pick(key, format!("the default of {}", self.owner));
                }
                for f in fallbacks {
                    match (f, keys) {
                        // Nothing selected and an `empty` fallback: the plugin starts on its defaults.
                        (Fallback::Empty, _) => return Choice::Defaults,
                        (_, None) => return absent(),
                        (Fallback::Named, Some(k)) if k.contains(&NAMED_FALLBACK_KEY) => {
                            return pick(NAMED_FALLBACK_KEY, "config-manager's `named` fallback".into())
                        }
                        (Fallback::Single, Some(k)) if k.len() == 1 => {
                            return pick(k[0], "config-manager's `single` fallback".into())
                        }
                        _ => {}
                    }
                }
                Choice::Missing(format!(
                    "no device plugin config is selected for the node: no {label} label, no default in {}, and its fallbacks find none in ConfigMap {ns}/{configmap}",
                    self.owner
                ))
            }
        }
    }
}

/// A node's labels from (key, value) pairs, for the adapters' tests.
#[cfg(test)]
pub(crate) fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::Location;

    fn selection(config: PluginConfig) -> PluginSelection {
        PluginSelection {
            platform: Platform::DevicePlugin,
            owner: ObjectRef {
                kind: "DaemonSet".into(),
                namespace: Some("nvdp".into()),
                name: "nvdp-nvidia-device-plugin".into(),
                location: Location::default(),
            },
            namespace: "nvdp".into(),
            config,
            env: PluginEnv::default(),
        }
    }

    fn named(default: Option<&str>, fallbacks: &[Fallback]) -> PluginSelection {
        selection(PluginConfig::Named {
            configmap: "nvdp-configs".into(),
            label: "nvidia.com/device-plugin.config".into(),
            default: default.map(str::to_string),
            fallbacks: fallbacks.to_vec(),
        })
    }

    fn key(k: &str) -> Choice {
        Choice::Key {
            configmap: "nvdp-configs".into(),
            key: k.into(),
        }
    }

    /// Every name any platform maps resolves, through the adapters, to the catalogue model its table
    /// says; and every product label GPU Feature Discovery writes for a catalogue model names it.
    #[test]
    fn every_mapped_name_resolves_to_its_catalogue_model() {
        let mut checked = 0;
        for adapter in ADAPTERS {
            for (labels, id) in adapter.mapped() {
                let model = gpu_trust_model::catalogue::lookup(id)
                    .unwrap_or_else(|| panic!("{labels:?} maps to `{id}`, not in the catalogue"));
                let read = read_labels(&labels);
                let found: Vec<_> = read.iter().filter_map(|f| f.model).collect();
                assert!(
                    !found.is_empty() && found.iter().all(|m| m.id == model.id),
                    "{labels:?} should resolve to {id}, gives {:?}",
                    found.iter().map(|m| m.id).collect::<Vec<_>>()
                );
                checked += 1;
            }
        }
        assert!(checked > 30, "{checked} names checked");
        for model in gpu_trust_model::catalogue::all() {
            for label in model.product_labels {
                assert_eq!(
                    gpu_trust_model::catalogue::lookup(label).map(|m| m.id),
                    Some(model.id),
                    "{label}"
                );
            }
        }
    }

    #[test]
    fn config_manager_order_label_default_fallbacks() {
        let labelled = BTreeMap::from([(
            "nvidia.com/device-plugin.config".to_string(),
            "a100".to_string(),
        )]);
        let none = BTreeMap::new();
        let chart = named(None, &[Fallback::Named, Fallback::Single]);
        assert_eq!(
            chart.choose(&labelled, Some(&["a100", "default"])),
            key("a100")
        );
        assert_eq!(
            chart.choose(&none, Some(&["a100", "default"])),
            key("default")
        );
        assert_eq!(chart.choose(&none, Some(&["only"])), key("only"));
        assert!(matches!(
            chart.choose(&none, Some(&["a", "b"])),
            Choice::Missing(_)
        ));
        assert!(matches!(
            chart.choose(&labelled, Some(&["default"])),
            Choice::Missing(_)
        ));
        let with_default = named(Some("b"), &[]);
        assert_eq!(with_default.choose(&none, Some(&["a", "b"])), key("b"));
        let operator = named(None, &[Fallback::Empty]);
        assert_eq!(operator.choose(&none, Some(&["a", "b"])), Choice::Defaults);
        // The operator's config-manager falls back to `empty`: no choice needs the ConfigMap.
        assert_eq!(operator.choose(&none, None), Choice::Defaults);
        assert!(matches!(
            operator.choose(&labelled, None),
            Choice::Missing(_)
        ));
    }
}
