//! The NVIDIA device plugin installed by its Helm chart or its static manifests (no GPU Operator):
//! its config is found through its DaemonSet.
//!
//! Sources (NVIDIA/k8s-device-plugin):
//! - `cmd/nvidia-device-plugin/main.go`: the flags `--config-file` (`CONFIG_FILE`), `--mig-strategy`
//!   (`MIG_STRATEGY`), `--device-list-strategy` (`DEVICE_LIST_STRATEGY`); flags and environment beat
//!   the config file (`api/config/v1/config.go`).
//! - `cmd/config-manager/main.go`: the config-manager init and sidecar containers copy one file of
//!   `CONFIG_FILE_SRCDIR` (a ConfigMap of named configs) to `CONFIG_FILE_DST`, picked by the node label
//!   `NODE_LABEL` (default `nvidia.com/device-plugin.config`), else `DEFAULT_CONFIG`, else the
//!   `FALLBACK_STRATEGIES` in order (`named`: the config `default`; `single`: the only config;
//!   `empty`: no config).
//! - `deployments/helm/nvidia-device-plugin/templates/daemonset-device-plugin.yml`: the chart's
//!   DaemonSet wires exactly that (`config.name` or `config.map`, `config.default`,
//!   `config.fallbackStrategies`, default `["named", "single"]`), with the plugin at
//!   `command: ["nvidia-device-plugin"]`; `deployments/static/nvidia-device-plugin.yml` runs the image's
//!   default entrypoint without a config.
//!
//! A DaemonSet owned by a ClusterPolicy is the GPU Operator's and is read through the ClusterPolicy
//! ([`super::gpu_operator`]).

use super::{gfd, gpu_operator, Fallback, PluginConfig, PluginEnv, PluginSelection};
use crate::device_plugin::parse_mig_strategy;
use crate::placement::Constraints;
use crate::util::image_name;
use gpu_trust_model::fleet::Platform;
use gpu_trust_model::ObjectRef;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;

/// The device plugin's image (`nvcr.io/nvidia/k8s-device-plugin`), whose default entrypoint is the
/// plugin.
const PLUGIN_IMAGE: &str = "k8s-device-plugin";
const PLUGIN_BINARY: &str = "nvidia-device-plugin";
const CONFIG_MANAGER_BINARY: &str = "config-manager";
/// Other programs of the same image: not the plugin.
const OTHER_BINARIES: &[&str] = &[
    "gpu-feature-discovery",
    "config-manager",
    "mps-control-daemon",
];
const CONFIG_FILE_ENV: &str = "CONFIG_FILE";
const CONFIG_FILE_FLAG: &str = "--config-file";
const MIG_STRATEGY_ENV: &str = "MIG_STRATEGY";
const MIG_STRATEGY_FLAG: &str = "--mig-strategy";
const DEVICE_LIST_FLAG: &str = "--device-list-strategy";
const SRCDIR_ENV: &str = "CONFIG_FILE_SRCDIR";
const DST_ENV: &str = "CONFIG_FILE_DST";
const NODE_LABEL_ENV: &str = "NODE_LABEL";
const DEFAULT_CONFIG_ENV: &str = "DEFAULT_CONFIG";
const FALLBACK_ENV: &str = "FALLBACK_STRATEGIES";
/// The owner kind of the GPU Operator's own DaemonSets.
const OPERATOR_OWNER: &str = "ClusterPolicy";

/// A device plugin DaemonSet: how it finds its config, and where it runs.
#[derive(Debug, Clone)]
pub(crate) struct PluginDaemonSet {
    pub selection: PluginSelection,
    pub constraints: Constraints,
}

/// The device plugin DaemonSet in `ds`, or `None` when it runs no device plugin (or is the GPU
/// Operator's).
pub(crate) fn read(ds: &apps::DaemonSet, object: ObjectRef) -> Option<PluginDaemonSet> {
    let owned_by_operator = ds
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == OPERATOR_OWNER);
    if owned_by_operator {
        return None;
    }
    let spec = ds.spec.as_ref()?.template.spec.as_ref()?;
    let plugin = spec.containers.iter().find(|c| is_plugin(c))?;
    let namespace = object
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_string());
    let config = match setting(plugin, CONFIG_FILE_ENV, CONFIG_FILE_FLAG) {
        None => PluginConfig::None,
        Some(path) => config_source(spec, plugin, &path, &object),
    };
    let env = PluginEnv {
        mig_strategy: setting(plugin, MIG_STRATEGY_ENV, MIG_STRATEGY_FLAG)
            .as_deref()
            .and_then(parse_mig_strategy),
        device_list_strategy: setting(
            plugin,
            gpu_operator::DEVICE_LIST_STRATEGY_ENV,
            DEVICE_LIST_FLAG,
        )
        .map(|v| gpu_operator::split_list(&v)),
        default_device_list_strategy: None,
    };
    let mut constraints = Constraints::from_spec(spec, Vec::new());
    constraints.add_daemonset_tolerations(spec.host_network.unwrap_or(false));
    Some(PluginDaemonSet {
        selection: PluginSelection {
            platform: Platform::DevicePlugin,
            owner: object,
            namespace,
            config,
            env,
        },
        constraints,
    })
}

/// The program a container runs: the first of `command`, else of `args`, as a file name.
fn program(c: &core::Container) -> Option<&str> {
    c.command
        .iter()
        .flatten()
        .next()
        .or_else(|| c.args.iter().flatten().next())
        .map(|p| p.rsplit('/').next().unwrap_or(p))
}

fn is_plugin(c: &core::Container) -> bool {
    if program(c) == Some(PLUGIN_BINARY) {
        return true;
    }
    let image = c.image.as_deref().map(image_name);
    image == Some(PLUGIN_IMAGE)
        && c.command.as_ref().is_none_or(|v| v.is_empty())
        && !program(c).is_some_and(|p| OTHER_BINARIES.contains(&p))
}

/// A setting given in the container's environment or as a flag (`--flag=value` or `--flag value`);
/// a value from a reference (`valueFrom`) is not in the manifest and counts as absent.
fn setting(c: &core::Container, env: &str, flag: &str) -> Option<String> {
    let argv: Vec<&String> = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .collect();
    for (i, a) in argv.iter().enumerate() {
        if let Some(v) = a.strip_prefix(flag) {
            if let Some(v) = v.strip_prefix('=') {
                return Some(v.to_string());
            }
            if v.is_empty() {
                if let Some(next) = argv.get(i + 1) {
                    return Some((*next).clone());
                }
            }
        }
    }
    env_value(c, env)
}

fn env_value(c: &core::Container, name: &str) -> Option<String> {
    c.env
        .iter()
        .flatten()
        .find(|e| e.name == name)
        .and_then(|e| e.value.clone())
        .filter(|v| !v.is_empty())
}

/// The volume a container mounts at the deepest mount path holding `path`, with the path relative
/// to the mount and the mount's `subPath`.
fn mounted<'s>(
    spec: &'s core::PodSpec,
    c: &core::Container,
    path: &str,
) -> Option<(&'s core::Volume, String, Option<String>)> {
    let mount = c
        .volume_mounts
        .iter()
        .flatten()
        .filter(|m| {
            let dir = m.mount_path.trim_end_matches('/');
            path == dir || path.starts_with(&format!("{dir}/"))
        })
        .max_by_key(|m| m.mount_path.len())?;
    let dir = mount.mount_path.trim_end_matches('/');
    let relative = path[dir.len()..].trim_start_matches('/').to_string();
    let volume = spec
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == mount.name)?;
    Some((
        volume,
        relative,
        mount.sub_path.clone().filter(|s| !s.is_empty()),
    ))
}

/// Where the config file at `path` comes from.
fn config_source(
    spec: &core::PodSpec,
    plugin: &core::Container,
    path: &str,
    owner: &ObjectRef,
) -> PluginConfig {
    let Some((volume, relative, sub_path)) = mounted(spec, plugin, path) else {
        return PluginConfig::Unreadable(format!(
            "{owner} reads its config file {path}, which no volume of its pod provides"
        ));
    };
    if let Some(cm) = &volume.config_map {
        let key = sub_path.unwrap_or(relative);
        let key = cm
            .items
            .iter()
            .flatten()
            .find(|i| i.path == key)
            .map_or(key, |i| i.key.clone());
        return PluginConfig::File {
            configmap: cm.name.clone(),
            key,
        };
    }
    // An emptyDir filled by config-manager.
    let managers = spec
        .init_containers
        .iter()
        .flatten()
        .chain(spec.containers.iter())
        .filter(|c| program(c) == Some(CONFIG_MANAGER_BINARY))
        .filter(|c| env_value(c, DST_ENV).as_deref() == Some(path));
    for m in managers {
        let Some(srcdir) = env_value(m, SRCDIR_ENV) else {
            continue;
        };
        let Some((source, _, _)) = mounted(spec, m, &srcdir) else {
            continue;
        };
        let Some(cm) = &source.config_map else {
            continue;
        };
        return PluginConfig::Named {
            configmap: cm.name.clone(),
            label: env_value(m, NODE_LABEL_ENV)
                .unwrap_or_else(|| gfd::DEVICE_PLUGIN_CONFIG.to_string()),
            default: env_value(m, DEFAULT_CONFIG_ENV),
            fallbacks: env_value(m, FALLBACK_ENV)
                .map(|v| v.split(',').filter_map(Fallback::parse).collect())
                .unwrap_or_default(),
        };
    }
    PluginConfig::Unreadable(format!(
        "{owner} reads its config file {path} from volume `{}`, which is not a ConfigMap and is not filled by config-manager from one",
        volume.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::Location;

    fn daemonset(yaml: &str) -> apps::DaemonSet {
        let value: serde_json::Value = serde_json::from_str(yaml).unwrap_or_default();
        serde_json::from_value(value).unwrap_or_default()
    }

    fn object() -> ObjectRef {
        ObjectRef {
            kind: "DaemonSet".into(),
            namespace: Some("nvidia".into()),
            name: "nvdp".into(),
            location: Location::default(),
        }
    }

    #[test]
    fn chart_config_manager_and_static_manifest() {
        // The shape of the chart's DaemonSet with `config.name=nvdp-configs`, `config.default` empty.
        let chart = daemonset(
            r#"{"spec":{"selector":{},"template":{"spec":{
              "initContainers":[{"name":"init","image":"nvcr.io/nvidia/k8s-device-plugin:v0.17.0","command":["config-manager"],
                "env":[{"name":"NODE_LABEL","value":"nvidia.com/device-plugin.config"},{"name":"CONFIG_FILE_SRCDIR","value":"/available-configs"},
                       {"name":"CONFIG_FILE_DST","value":"/config/config.yaml"},{"name":"DEFAULT_CONFIG"},{"name":"FALLBACK_STRATEGIES","value":"named,single"}],
                "volumeMounts":[{"name":"available-configs","mountPath":"/available-configs"},{"name":"config","mountPath":"/config"}]}],
              "containers":[{"name":"nvidia-device-plugin-ctr","image":"nvcr.io/nvidia/k8s-device-plugin:v0.17.0","command":["nvidia-device-plugin"],
                "env":[{"name":"MIG_STRATEGY","value":"mixed"},{"name":"CONFIG_FILE","value":"/config/config.yaml"}],
                "volumeMounts":[{"name":"available-configs","mountPath":"/available-configs"},{"name":"config","mountPath":"/config"}]}],
              "volumes":[{"name":"available-configs","configMap":{"name":"nvdp-configs"}},{"name":"config","emptyDir":{}}]}}}}"#,
        );
        let p = read(&chart, object()).expect("a device plugin");
        assert_eq!(
            p.selection.config,
            PluginConfig::Named {
                configmap: "nvdp-configs".into(),
                label: "nvidia.com/device-plugin.config".into(),
                default: None,
                fallbacks: vec![Fallback::Named, Fallback::Single],
            }
        );
        assert_eq!(
            p.selection.env.mig_strategy,
            Some(gpu_trust_model::fleet::MigStrategy::Mixed)
        );
        let plain = daemonset(
            r#"{"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"nvidia-device-plugin-ctr","image":"nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}]}}}}"#,
        );
        assert_eq!(
            read(&plain, object()).map(|p| p.selection.config),
            Some(PluginConfig::None)
        );
        let direct = daemonset(
            r#"{"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"p","image":"example/plugin:1","args":["nvidia-device-plugin","--config-file=/etc/nvdp/config.yaml"],
              "volumeMounts":[{"name":"cfg","mountPath":"/etc/nvdp"}]}],"volumes":[{"name":"cfg","configMap":{"name":"nvdp","items":[{"key":"ts","path":"config.yaml"}]}}]}}}}"#,
        );
        assert_eq!(
            read(&direct, object()).map(|p| p.selection.config),
            Some(PluginConfig::File {
                configmap: "nvdp".into(),
                key: "ts".into()
            })
        );
        let gfd = daemonset(
            r#"{"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"gfd","image":"nvcr.io/nvidia/k8s-device-plugin:v0.17.0","command":["gpu-feature-discovery"]}]}}}}"#,
        );
        assert!(read(&gfd, object()).is_none());
    }
}
