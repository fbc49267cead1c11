//! The NVIDIA k8s-device-plugin configuration file (`version: v1`), read as the plugin reads it.
//!
//! Format and rules from k8s-device-plugin `api/config/v1` (config.go, flags.go, sharing.go,
//! replicas.go): `version` must be `v1` (empty means `v1`); `flags.migStrategy` is `none`, `single`
//! or `mixed`; `flags.plugin.deviceListStrategy` is one strategy or a list of `envvar`,
//! `volume-mounts`, `cdi-annotations`, `cdi-cri`; `flags.plugin.sharedDevicesAllocationPolicy` (v0.20.0)
//! is `distributed` (the default) or `packed`, and the plugin refuses to start with another value
//! (`cmd/nvidia-device-plugin/main.go`); `sharing.timeSlicing` and `sharing.mps` take
//! `renameByDefault`, `failRequestsGreaterThanOne` and a non-empty `resources` list of `{name,
//! rename, devices, replicas}` with `replicas >= 2` and `devices` either `all`, a positive count or a
//! list of GPU indices, MIG indices (`0:1`) or UUIDs; time-slicing and MPS exclude each other; for
//! MPS, `failRequestsGreaterThanOne` defaults to true.
//!
//! The plugin itself ignores keys it does not know. [`parse`] reports them: as errors in
//! [`Strictness::Strict`] (for files gpu-trust writes or checks), as warnings in
//! [`Strictness::Plugin`] (for a cluster's own config, which the plugin would load).

use gpu_trust_model::fleet::{
    AllocationPolicy, ConfigSource, MigStrategy, SharingConfig, SharingStrategy,
};
use gpu_trust_model::resource::{self, DeviceResource};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_source::tree::{Node, Value};
use gpu_trust_source::{read_all, Entry, Format, Limits, ReadOptions};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How unknown keys are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// Unknown keys are errors.
    Strict,
    /// Unknown keys are warnings, as the plugin ignores them.
    Plugin,
}

/// A parsed device plugin configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevicePluginConfig {
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub flags: Flags,
    #[serde(default)]
    pub sharing: Sharing,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flags {
    pub mig_strategy: Option<String>,
    pub fail_on_init_error: Option<bool>,
    pub plugin: Option<PluginFlags>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginFlags {
    pub pass_device_specs: Option<bool>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub device_list_strategy: Option<Vec<String>>,
    #[serde(rename = "deviceIDStrategy")]
    pub device_id_strategy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_devices_allocation_policy: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sharing {
    pub time_slicing: Option<Replicated>,
    pub mps: Option<Replicated>,
}

/// A `timeSlicing` or `mps` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Replicated {
    #[serde(default)]
    pub rename_by_default: bool,
    pub fail_requests_greater_than_one: Option<bool>,
    #[serde(default)]
    pub resources: Vec<ReplicatedResource>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicatedResource {
    pub name: String,
    pub rename: Option<String>,
    pub devices: Option<serde_json::Value>,
    pub replicas: i64,
}

/// Keys the plugin knows at each level (`api/config/v1`); `*` marks a list whose items follow.
const KNOWN_KEYS: &[(&str, &[&str])] = &[
    ("", &["version", "flags", "resources", "sharing", "imex"]),
    (
        "flags",
        &[
            "migStrategy",
            "failOnInitError",
            "restartOnDeviceUnhealthy",
            "nvidiaDriverRoot",
            "nvidiaDevRoot",
            "gdsEnabled",
            "mofedEnabled",
            "useNodeFeatureAPI",
            "deviceDiscoveryStrategy",
            "mpsRoot",
            "plugin",
            "gfd",
        ],
    ),
    (
        "flags.plugin",
        &[
            "passDeviceSpecs",
            "deviceListStrategy",
            "deviceIDStrategy",
            "cdiAnnotationPrefix",
            "nvidiaCTKPath",
            "containerDriverRoot",
            "sharedDevicesAllocationPolicy",
        ],
    ),
    (
        "flags.gfd",
        &[
            "oneshot",
            "noTimestamp",
            "sleepInterval",
            "outputFile",
            "machineTypeFile",
        ],
    ),
    ("resources", &["gpus", "mig"]),
    ("resources.gpus.*", &["pattern", "name"]),
    ("resources.mig.*", &["pattern", "name"]),
    ("sharing", &["timeSlicing", "mps"]),
    (
        "sharing.timeSlicing",
        &["renameByDefault", "failRequestsGreaterThanOne", "resources"],
    ),
    (
        "sharing.mps",
        &["renameByDefault", "failRequestsGreaterThanOne", "resources"],
    ),
    (
        "sharing.timeSlicing.resources.*",
        &["name", "rename", "devices", "replicas"],
    ),
    (
        "sharing.mps.resources.*",
        &["name", "rename", "devices", "replicas"],
    ),
    ("imex", &["channelIDs", "required"]),
];

const DEVICE_LIST_STRATEGIES: &[&str] = &["envvar", "volume-mounts", "cdi-annotations", "cdi-cri"];

/// Parses a device plugin configuration. `line_offset` shifts reported lines (for text embedded in a
/// ConfigMap). Returns the configuration and its warnings, or the first error.
pub fn parse(
    text: &str,
    file: &str,
    line_offset: u32,
    strictness: Strictness,
) -> Result<(DevicePluginConfig, Vec<Diagnostic>), Diagnostic> {
    let options = ReadOptions {
        limits: Limits::default(),
        split_key: None,
        format: Format::Yaml,
    };
    let shift = |mut d: Diagnostic| {
        if d.location.line > 0 {
            d.location.line = d.location.line.saturating_add(line_offset);
        }
        d
    };
    let entries = read_all(text, file, &options);
    let object = match entries.into_iter().next() {
        Some(Entry::Object(o)) => o,
        Some(Entry::Invalid { diagnostic, .. }) => return Err(shift(diagnostic)),
        Some(Entry::Container { object, .. }) => object,
        None => {
            return Err(Diagnostic::error(
                Code::NotOneDocument,
                Location::new(file, line_offset.saturating_add(1), 1),
                "the device plugin config is empty",
            ))
        }
    };
    let mut warnings = Vec::new();
    if let Some(node) = object.node() {
        let mut unknown = Vec::new();
        unknown_keys(node, "", &mut unknown);
        for (pos, path) in unknown {
            let d = Diagnostic::warning(
                Code::UnknownConfigKey,
                Location::new(file, pos.line, pos.column),
                format!("unknown key `{path}` in the device plugin config (the plugin ignores it)"),
            );
            match strictness {
                Strictness::Strict => {
                    return Err(shift(Diagnostic::error(
                        Code::InvalidDevicePluginConfig,
                        d.location,
                        format!("unknown key `{path}` in the device plugin config"),
                    )))
                }
                Strictness::Plugin => warnings.push(shift(d)),
            }
        }
    }
    let config: DevicePluginConfig = object.deserialize().map_err(shift)?;
    let at = |path: &str| -> Location {
        let pos = object
            .node()
            .and_then(|n| find(n, path))
            .map(|n| n.pos)
            .unwrap_or(object.pos());
        Location::new(file, pos.line.saturating_add(line_offset), pos.column)
    };
    validate(&config, &at)?;
    Ok((config, warnings))
}

fn validate(config: &DevicePluginConfig, at: &dyn Fn(&str) -> Location) -> Result<(), Diagnostic> {
    if !(config.version.is_empty() || config.version == "v1") {
        return Err(Diagnostic::error(
            Code::InvalidDevicePluginConfig,
            at("version"),
            format!(
                "unknown device plugin config version `{}` (only v1)",
                config.version
            ),
        ));
    }
    if let Some(s) = &config.flags.mig_strategy {
        if parse_mig_strategy(s).is_none() {
            return Err(Diagnostic::error(
                Code::InvalidDevicePluginConfig,
                at("flags.migStrategy"),
                format!("unknown migStrategy `{s}` (none, single or mixed)"),
            ));
        }
    }
    if let Some(list) = config
        .flags
        .plugin
        .as_ref()
        .and_then(|p| p.device_list_strategy.as_ref())
    {
        if let Some(bad) = list
            .iter()
            .find(|s| !DEVICE_LIST_STRATEGIES.contains(&s.as_str()))
        {
            return Err(Diagnostic::error(
                Code::InvalidDevicePluginConfig,
                at("flags.plugin.deviceListStrategy"),
                format!(
                    "unknown deviceListStrategy `{bad}` ({})",
                    DEVICE_LIST_STRATEGIES.join(", ")
                ),
            ));
        }
    }
    if let Some(p) = config
        .flags
        .plugin
        .as_ref()
        .and_then(|p| p.shared_devices_allocation_policy.as_deref())
    {
        if AllocationPolicy::parse(p).is_none() {
            return Err(Diagnostic::error(Code::InvalidDevicePluginConfig,
                at("flags.plugin.sharedDevicesAllocationPolicy"),
                format!(
                    "unknown sharedDevicesAllocationPolicy `{p}` (distributed or packed): the device plugin refuses to start"
                ),
            ));
        }
    }
    let ts = config.sharing.time_slicing.as_ref();
    let mps = config.sharing.mps.as_ref();
    if ts.is_some_and(|t| !t.resources.is_empty()) && mps.is_some_and(|m| !m.resources.is_empty()) {
        return Err(Diagnostic::error(
            Code::InvalidDevicePluginConfig,
            at("sharing"),
            "sharing.timeSlicing and sharing.mps are mutually exclusive",
        ));
    }
    for (section, r) in [("timeSlicing", ts), ("mps", mps)] {
        let Some(r) = r else { continue };
        let path = format!("sharing.{section}");
        if r.resources.is_empty() {
            return Err(Diagnostic::error(
                Code::InvalidDevicePluginConfig,
                at(&path),
                format!("sharing.{section} specifies no resources"),
            ));
        }
        for (i, res) in r.resources.iter().enumerate() {
            let rpath = format!("{path}.resources.{i}");
            if !is_sharable_resource(&res.name) {
                return Err(Diagnostic::error(Code::InvalidDevicePluginConfig,
                    at(&format!("{rpath}.name")),
                    format!(
                        "resource `{}` cannot be shared: only nvidia.com/gpu and nvidia.com/mig-<profile>",
                        res.name
                    ),
                ));
            }
            if res.replicas < 2 {
                return Err(Diagnostic::error(
                    Code::InvalidDevicePluginConfig,
                    at(&format!("{rpath}.replicas")),
                    format!("number of replicas must be >= 2 (is {})", res.replicas),
                ));
            }
            if let Some(d) = &res.devices {
                check_devices(d).map_err(|m| {
                    Diagnostic::error(
                        Code::InvalidDevicePluginConfig,
                        at(&format!("{rpath}.devices")),
                        m,
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// Only `nvidia.com/gpu` and `nvidia.com/mig-<profile>` can be shared (`api/config/v1/replicas.go`).
fn is_sharable_resource(name: &str) -> bool {
    match DeviceResource::parse(name) {
        Some(DeviceResource::Gpu { shared: false }) => true,
        Some(DeviceResource::Mig {
            profile,
            shared: false,
        }) => !profile.is_empty(),
        _ => false,
    }
}

fn check_devices(devices: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value as J;
    match devices {
        J::String(s) if s == "all" => Ok(()),
        J::String(s) => Err(format!(
            "devices set as `{s}`, but the only valid string is `all`"
        )),
        J::Number(n) => match n.as_i64() {
            Some(c) if c > 0 => Ok(()),
            _ => Err(format!(
                "devices set as {n}, but a count of devices must be > 0"
            )),
        },
        J::Array(items) => {
            for item in items {
                let ok = match item {
                    J::Number(n) => n.as_u64().is_some(),
                    J::String(s) => is_device_ref(s),
                    _ => false,
                };
                if !ok {
                    return Err(format!("unsupported device in the devices list: {item}"));
                }
            }
            Ok(())
        }
        other => Err(format!("unrecognised devices value: {other}")),
    }
}

/// A GPU index (`0`), a MIG index (`0:1`) or a GPU/MIG UUID.
fn is_device_ref(s: &str) -> bool {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if digits(s) {
        return true;
    }
    if let Some((a, b)) = s.split_once(':') {
        return digits(a) && digits(b);
    }
    s.starts_with("GPU-") || s.starts_with("MIG-")
}

pub(crate) fn parse_mig_strategy(s: &str) -> Option<MigStrategy> {
    MigStrategy::parse(s)
}

impl DevicePluginConfig {
    /// The sharing this configuration puts in force, as the fleet model writes it.
    pub fn sharing_config(&self, source: ConfigSource) -> SharingConfig {
        let (strategy, section) = match (&self.sharing.time_slicing, &self.sharing.mps) {
            (_, Some(m)) if !m.resources.is_empty() => (SharingStrategy::Mps, Some(m)),
            (Some(t), _) if !t.resources.is_empty() => (SharingStrategy::TimeSlicing, Some(t)),
            _ => (SharingStrategy::None, None),
        };
        let mut replicas = BTreeMap::new();
        let mut rename_by_default = false;
        let mut fail_gt_one = false;
        if let Some(s) = section {
            rename_by_default = s.rename_by_default;
            // MPS keeps the plugin's historical behaviour: requests for more than one fail.
            fail_gt_one = s
                .fail_requests_greater_than_one
                .unwrap_or(strategy == SharingStrategy::Mps);
            for r in &s.resources {
                let n = u32::try_from(r.replicas).unwrap_or(u32::MAX);
                replicas.insert(r.name.clone(), n);
            }
        }
        let device_list_strategy = self
            .flags
            .plugin
            .as_ref()
            .and_then(|p| p.device_list_strategy.clone())
            .unwrap_or_else(|| vec!["envvar".to_string()]);
        SharingConfig {
            source,
            strategy,
            rename_by_default,
            fail_requests_greater_than_one: fail_gt_one,
            replicas,
            device_list_strategy,
            allocation_policy: self
                .flags
                .plugin
                .as_ref()
                .and_then(|p| p.shared_devices_allocation_policy.as_deref())
                .and_then(AllocationPolicy::parse),
        }
    }

    /// `flags.migStrategy`, when set.
    pub fn mig_strategy(&self) -> Option<MigStrategy> {
        self.flags
            .mig_strategy
            .as_deref()
            .and_then(parse_mig_strategy)
    }

    /// The resource names the plugin advertises for a shared resource (`.shared` with renaming).
    pub fn advertised_name(&self, resource: &str) -> String {
        let section = self
            .sharing
            .mps
            .as_ref()
            .filter(|m| !m.resources.is_empty())
            .or(self.sharing.time_slicing.as_ref());
        if let Some(s) = section {
            if let Some(r) = s.resources.iter().find(|r| r.name == resource) {
                if let Some(rename) = &r.rename {
                    return rename.clone();
                }
                if s.rename_by_default {
                    return format!("{resource}{}", resource::SHARED_SUFFIX);
                }
            }
        }
        resource.to_string()
    }
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => None,
        Some(OneOrMany::One(s)) => Some(s.split(',').map(|p| p.trim().to_string()).collect()),
        Some(OneOrMany::Many(v)) => Some(v),
    })
}

/// Keys of `node` not in [`KNOWN_KEYS`], with their positions and dotted paths.
fn unknown_keys(node: &Node<'_>, path: &str, out: &mut Vec<(gpu_trust_source::Pos, String)>) {
    match &node.value {
        Value::Map(entries) => {
            let known = KNOWN_KEYS.iter().find(|(p, _)| *p == path).map(|(_, k)| *k);
            for (k, v) in entries {
                let Some(key) = k.as_scalar_text() else {
                    continue;
                };
                let child = if path.is_empty() {
                    key.to_string()
                } else {
                    format!("{path}.{key}")
                };
                match known {
                    Some(list) if !list.contains(&key) => out.push((k.pos, child)),
                    Some(_) => unknown_keys(v, &child, out),
                    None => {}
                }
            }
        }
        Value::Seq(items) => {
            let child = format!("{path}.*");
            for item in items {
                unknown_keys(item, &child, out);
            }
        }
        Value::Scalar(_) => {}
    }
}

/// The node at a dotted path (`sharing.timeSlicing.resources.0.replicas`).
fn find<'n, 'a>(node: &'n Node<'a>, path: &str) -> Option<&'n Node<'a>> {
    let mut cur = node;
    for part in path.split('.') {
        cur = match &cur.value {
            Value::Map(_) => cur.get(part)?,
            Value::Seq(items) => items.get(part.parse::<usize>().ok()?)?,
            Value::Scalar(_) => return None,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_slicing_config_is_read() {
        let text = "version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n";
        let (c, w) = parse(text, "cm.yaml", 0, Strictness::Strict).unwrap();
        assert!(w.is_empty());
        let s = c.sharing_config(ConfigSource::Default);
        assert_eq!(s.strategy, SharingStrategy::TimeSlicing);
        assert_eq!(s.replicas["nvidia.com/gpu"], 4);
        assert!(s.rename_by_default);
        assert_eq!(c.advertised_name("nvidia.com/gpu"), "nvidia.com/gpu.shared");
        assert_eq!(s.device_list_strategy, ["envvar"]);
    }

    #[test]
    fn mps_defaults_to_failing_requests_above_one() {
        let text = "version: v1\nsharing:\n  mps:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 2}\n";
        let (c, _) = parse(text, "cm.yaml", 0, Strictness::Strict).unwrap();
        let s = c.sharing_config(ConfigSource::Default);
        assert_eq!(s.strategy, SharingStrategy::Mps);
        assert!(s.fail_requests_greater_than_one);
    }

    #[test]
    fn rules_the_plugin_enforces_are_errors_with_lines() {
        let one = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 1\n";
        let e = parse(one, "cm.yaml", 10, Strictness::Plugin).unwrap_err();
        assert_eq!(e.location.line, 16, "{e}");
        assert!(e.message.contains(">= 2"), "{e}");
        let both = "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n";
        assert!(parse(both, "cm.yaml", 0, Strictness::Plugin)
            .unwrap_err()
            .message
            .contains("mutually exclusive"));
        let v2 = "version: v2\n";
        assert_eq!(
            parse(v2, "cm.yaml", 0, Strictness::Plugin)
                .map(|_| ())
                .map_err(|e| e.code),
            Err(Code::InvalidDevicePluginConfig),
            "an unknown version"
        );
        let bad_devices = "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 2, devices: some}]\n";
        assert!(parse(bad_devices, "cm.yaml", 0, Strictness::Plugin).is_err());
        let bad_strategy =
            "version: v1\nflags:\n  plugin:\n    deviceListStrategy: [envvar, magic]\n";
        assert!(parse(bad_strategy, "cm.yaml", 0, Strictness::Plugin).is_err());
    }

    #[test]
    fn unknown_keys_depend_on_strictness() {
        let text = "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n  timeSlcing: {}\n";
        let e = parse(text, "cm.yaml", 0, Strictness::Strict).unwrap_err();
        assert_eq!(e.location.line, 5, "{e}");
        let (c, w) = parse(text, "cm.yaml", 0, Strictness::Plugin).unwrap();
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("sharing.timeSlcing"), "{}", w[0]);
        assert_eq!(c.sharing.time_slicing.map(|t| t.resources.len()), Some(1));
    }

    #[test]
    fn device_list_strategy_string_or_list() {
        let text = "version: v1\nflags:\n  plugin:\n    deviceListStrategy: volume-mounts\n";
        let (c, _) = parse(text, "cm.yaml", 0, Strictness::Strict).unwrap();
        assert_eq!(
            c.sharing_config(ConfigSource::Default).device_list_strategy,
            ["volume-mounts"]
        );
    }
}
