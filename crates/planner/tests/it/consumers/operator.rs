//! The NVIDIA GPU Operator (NVIDIA/gpu-operator): the ClusterPolicy, and what it makes of it for the
//! device plugin and the container toolkit.

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The parts of the ClusterPolicy `spec` that the Helm chart renders by default and that the plan's
/// patch touches: `mig.strategy: single` (`deployments/gpu-operator/values.yaml` lines 134-135), CDI on
/// (lines 15-16), the toolkit and device plugin images (lines 229-245), no config named.
pub fn helm_default_spec() -> Value {
    json!({
        "mig": {"strategy": "single"},
        "cdi": {"enabled": true},
        "toolkit": {
            "enabled": true,
            "repository": "nvcr.io/nvidia/k8s",
            "image": "container-toolkit",
            "version": "v1.20.0",
            "env": [],
        },
        "devicePlugin": {
            "enabled": true,
            "repository": "nvcr.io/nvidia",
            "image": "k8s-device-plugin",
            "version": "v0.20.0",
        },
        "migManager": {"enabled": true},
    })
}

/// A JSON merge patch (RFC 7386), as `kubectl patch --type merge` applies it to a custom resource:
/// objects merge key by key, `null` removes a key, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = json!({});
            }
            if let Value::Object(t) = target {
                for (k, v) in p {
                    if v.is_null() {
                        t.remove(k);
                    } else {
                        merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

/// The CRD's schema for `spec.mig.strategy`: `none`, `single` or `mixed`, or absent
/// (`deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml`, `mig.strategy` enum;
/// `api/nvidia/v1/clusterpolicy_types.go` lines 495-499).
pub fn validate(spec: &Value) -> Result<(), String> {
    match spec.pointer("/mig/strategy") {
        None => {}
        Some(Value::String(s)) if ["none", "single", "mixed"].contains(&s.as_str()) => {}
        Some(other) => return Err(format!("spec.mig.strategy: {other} is not in the enum")),
    }
    Ok(())
}

/// The image an operand runs (`imagePath`, `api/nvidia/v1/clusterpolicy_types.go` lines 2054-2086):
/// `repository/image:version` (or `@version` for a digest) when repository or version is set, and then
/// all three must be; the image alone when only it is set; else the operator's environment (not
/// modelled: `None`).
pub fn image_path(component: &Value) -> Result<Option<String>, String> {
    let s = |k: &str| component.get(k).and_then(Value::as_str).unwrap_or("");
    let (repository, image, version) = (s("repository"), s("image"), s("version"));
    if repository.is_empty() && version.is_empty() {
        return Ok((!image.is_empty()).then(|| image.to_string()));
    }
    if repository.is_empty() || image.is_empty() || version.is_empty() {
        return Err(format!(
            "invalid image specification: repository, image and version must all be set (repository={repository}, image={image}, version={version})"
        ));
    }
    Ok(Some(if version.starts_with("sha256:") {
        format!("{repository}/{image}@{version}")
    } else {
        format!("{repository}/{image}:{version}")
    }))
}

/// Whether NVIDIA publishes a tag of this form for the device plugin and the toolkit: their tags are
/// `v` and the version (`values.yaml` lines 233 and 245: `v1.20.0`, `v0.20.0`), or a digest.
pub fn published_tag_form(image: &str) -> bool {
    match image.rsplit_once(':') {
        Some((_, tag)) if !image.contains('@') => {
            tag.starts_with('v') && tag[1..].starts_with(|c: char| c.is_ascii_digit())
        }
        _ => image.contains("@sha256:"),
    }
}

fn set(env: &mut BTreeMap<String, String>, k: &str, v: &str) {
    env.insert(k.to_string(), v.to_string());
}

/// The environment of the device plugin container after `TransformDevicePlugin`
/// (`controllers/object_controls.go` lines 1538-1629): the DaemonSet's own variables
/// (`assets/state-device-plugin/0500_daemonset.yaml` lines 72-86), `CONFIG_FILE` when a config map is
/// named (`handleDevicePluginConfig`, lines 2818-2851), `MIG_STRATEGY` only when the ClusterPolicy
/// sets one (`applyMIGConfiguration`, lines 2787-2797), the CDI variables when CDI is on
/// (`transformDevicePluginCtrForCDI`, lines 1527-1535), then `spec.devicePlugin.env` over all of them
/// (lines 1620-1624).
pub fn device_plugin_env(spec: &Value) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    set(&mut env, "PASS_DEVICE_SPECS", "true");
    set(&mut env, "FAIL_ON_INIT_ERROR", "true");
    set(&mut env, "DEVICE_LIST_STRATEGY", "envvar");
    set(&mut env, "DEVICE_ID_STRATEGY", "uuid");
    set(&mut env, "NVIDIA_VISIBLE_DEVICES", "all");
    set(&mut env, "NVIDIA_DRIVER_CAPABILITIES", "all");
    set(&mut env, "MPS_ROOT", "/run/nvidia/mps");
    if spec
        .pointer("/devicePlugin/config/name")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty())
    {
        set(&mut env, "CONFIG_FILE", "/config/config.yaml");
    }
    match spec.pointer("/mig/strategy").and_then(Value::as_str) {
        None | Some("") => set(&mut env, "NVIDIA_MIG_MONITOR_DEVICES", "all"),
        Some(s) => {
            set(&mut env, "MIG_STRATEGY", s);
            if s != "none" {
                set(&mut env, "NVIDIA_MIG_MONITOR_DEVICES", "all");
            }
        }
    }
    if spec.pointer("/cdi/enabled").and_then(Value::as_bool) == Some(true) {
        set(&mut env, "CDI_ENABLED", "true");
        set(&mut env, "DEVICE_LIST_STRATEGY", "cdi-annotations,cdi-cri");
        set(&mut env, "CDI_ANNOTATION_PREFIX", "cdi.k8s.io/");
    }
    for e in spec
        .pointer("/devicePlugin/env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = e.get("name").and_then(Value::as_str) {
            set(
                &mut env,
                name,
                e.get("value").and_then(Value::as_str).unwrap_or(""),
            );
        }
    }
    env
}

/// The toolkit's settings from `spec.toolkit.env`, by variable.
pub fn toolkit_env(spec: &Value) -> BTreeMap<String, String> {
    spec.pointer("/toolkit/env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some((
                e.get("name")?.as_str()?.to_string(),
                e.get("value")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ))
        })
        .collect()
}

/// The device plugin config key a node runs with: its `nvidia.com/device-plugin.config` label, else
/// the ClusterPolicy's default; the config manager refuses a key its ConfigMap lacks
/// (NVIDIA/k8s-device-plugin `cmd/config-manager/main.go` lines 349-366).
pub fn node_config_key(
    spec: &Value,
    labels: &BTreeMap<String, String>,
    keys: &[String],
) -> Result<String, String> {
    let key = labels
        .get("nvidia.com/device-plugin.config")
        .cloned()
        .or_else(|| {
            spec.pointer("/devicePlugin/config/default")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .ok_or("no config was set and no default was provided")?;
    if !keys.contains(&key) {
        return Err(format!("specified config {key} does not exist"));
    }
    Ok(key)
}
