//! The k8s-device-plugin (NVIDIA/k8s-device-plugin): its config file, its flags and their validation.

use super::{unknown_keys, yaml};
use serde_json::Value;
use std::collections::BTreeMap;

/// MIG strategies (`api/config/v1/consts.go` lines 30-35).
pub const MIG_STRATEGIES: [&str; 3] = ["none", "single", "mixed"];
/// Device list strategies (`api/config/v1/consts.go` lines 37-43; `strategy.go` lines 29-44 refuses
/// any other).
pub const DEVICE_LIST_STRATEGIES: [&str; 4] =
    ["envvar", "volume-mounts", "cdi-annotations", "cdi-cri"];

/// One replicated (time-sliced or MPS) resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replicated {
    pub name: String,
    pub replicas: u32,
}

/// A sharing section (`sharing.timeSlicing` or `sharing.mps`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Section {
    pub rename_by_default: bool,
    pub fail_requests_greater_than_one: Option<bool>,
    pub resources: Vec<Replicated>,
}

impl Section {
    /// `isReplicated` (`api/config/v1/replicas.go` lines 68-78): some resource has more than one
    /// replica.
    fn replicated(&self) -> bool {
        self.resources.iter().any(|r| r.replicas > 1)
    }
}

/// How the plugin shares devices (`api/config/v1/sharing.go` lines 27-45).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    None,
    TimeSlicing,
    Mps,
}

/// A config file as the plugin reads it: the flags it sets (absent ones left to the command line,
/// the environment or the defaults) and its sharing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    pub mig_strategy: Option<String>,
    pub fail_on_init_error: Option<bool>,
    pub mps_root: Option<String>,
    pub device_list_strategy: Option<Vec<String>>,
    pub device_id_strategy: Option<String>,
    pub time_slicing: Option<Section>,
    pub mps: Option<Section>,
}

impl Config {
    /// `SharingStrategy` (`api/config/v1/sharing.go` lines 36-45): MPS when the MPS section replicates
    /// a resource, else time-slicing when that section does, else none.
    pub fn strategy(&self) -> Strategy {
        if self.mps.as_ref().is_some_and(Section::replicated) {
            Strategy::Mps
        } else if self.time_slicing.as_ref().is_some_and(Section::replicated) {
            Strategy::TimeSlicing
        } else {
            Strategy::None
        }
    }

    /// The active sharing section (`ReplicatedResources`, `sharing.go` lines 47-53: MPS when present).
    pub fn section(&self) -> Option<&Section> {
        self.mps.as_ref().or(self.time_slicing.as_ref())
    }

    /// Replicas per device of a resource: the active section's, or 1 when it does not list it.
    pub fn replicas(&self, resource: &str) -> u32 {
        if self.strategy() == Strategy::None {
            return 1;
        }
        self.section()
            .and_then(|s| s.resources.iter().find(|r| r.name == resource))
            .map(|r| r.replicas)
            .unwrap_or(1)
    }

    /// `failRequestsGreaterThanOne`, with MPS defaulting to true (`api/config/v1/config.go` lines 72-76).
    pub fn fails_requests_greater_than_one(&self) -> bool {
        match self.strategy() {
            Strategy::Mps => self
                .mps
                .as_ref()
                .and_then(|s| s.fail_requests_greater_than_one)
                .unwrap_or(true),
            Strategy::TimeSlicing => self
                .time_slicing
                .as_ref()
                .and_then(|s| s.fail_requests_greater_than_one)
                .unwrap_or(false),
            Strategy::None => false,
        }
    }
}

/// A resource name as `NewResourceName` accepts it (`api/config/v1/resources.go` lines 46-64): the
/// `nvidia.com/` prefix added when missing, at most 63 characters in all
/// (`consts.go` line 27), the part after the prefix a DNS subdomain (lower-case alphanumerics, `-`
/// and `.`, alphanumeric at both ends).
pub fn resource_name(raw: &str) -> Result<String, String> {
    let full = if raw.starts_with("nvidia.com/") {
        raw.to_string()
    } else {
        format!("nvidia.com/{raw}")
    };
    if full.len() > 63 {
        return Err(format!("resource name {full} is longer than 63 characters"));
    }
    let name = full.split_once('/').map(|(_, n)| n).unwrap_or("");
    let subdomain = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
    if !subdomain {
        return Err(format!(
            "resource name {full}: `{name}` is not a DNS subdomain"
        ));
    }
    Ok(full)
}

fn section(v: &Value, at: &str) -> Result<Section, String> {
    let bad = unknown_keys(
        v,
        &["renameByDefault", "failRequestsGreaterThanOne", "resources"],
    );
    if !bad.is_empty() {
        return Err(format!("{at}: unknown keys {bad:?}"));
    }
    let mut s = Section {
        rename_by_default: match v.get("renameByDefault") {
            None => false,
            Some(b) => b
                .as_bool()
                .ok_or(format!("{at}.renameByDefault: not a bool"))?,
        },
        fail_requests_greater_than_one: match v.get("failRequestsGreaterThanOne") {
            None => None,
            Some(b) => Some(
                b.as_bool()
                    .ok_or(format!("{at}.failRequestsGreaterThanOne: not a bool"))?,
            ),
        },
        resources: Vec::new(),
    };
    // `ReplicatedResources.UnmarshalJSON` (`api/config/v1/replicas.go` lines 166-211): resources are
    // required and not empty.
    let resources = v
        .get("resources")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
        .ok_or(format!("{at}: no resources specified"))?;
    for (i, r) in resources.iter().enumerate() {
        let at = format!("{at}.resources[{i}]");
        let bad = unknown_keys(r, &["name", "rename", "devices", "replicas"]);
        if !bad.is_empty() {
            return Err(format!("{at}: unknown keys {bad:?}"));
        }
        // `ReplicatedResource.UnmarshalJSON` (lines 214-266): a name, devices `all` by default, and
        // replicas of at least 2.
        let name = r
            .get("name")
            .and_then(Value::as_str)
            .ok_or(format!("{at}: no resource name specified"))?;
        let name = resource_name(name)?;
        match r.get("devices") {
            None => {}
            Some(Value::String(s)) if s == "all" => {}
            Some(Value::Number(n)) if n.as_i64().is_some_and(|c| c > 0) => {}
            Some(Value::Array(_)) => {}
            Some(other) => return Err(format!("{at}.devices: invalid {other}")),
        }
        let replicas = r
            .get("replicas")
            .ok_or(format!("{at}: no replicas specified"))?
            .as_i64()
            .ok_or(format!("{at}.replicas: not an integer"))?;
        if replicas < 2 {
            return Err(format!("{at}: number of replicas must be >= 2"));
        }
        if let Some(rename) = r.get("rename") {
            resource_name(
                rename
                    .as_str()
                    .ok_or(format!("{at}.rename: not a string"))?,
            )?;
        }
        s.resources.push(Replicated {
            name,
            replicas: u32::try_from(replicas).map_err(|e| e.to_string())?,
        });
    }
    Ok(s)
}

/// Reads a config file (`parseConfigFrom`, `api/config/v1/config.go` lines 113-137, and the field
/// types of `flags.go` lines 53-106).
pub fn parse(text: &str) -> Result<Config, String> {
    let v = yaml(text)?;
    let bad = unknown_keys(&v, &["version", "flags", "resources", "sharing", "imex"]);
    if !bad.is_empty() {
        return Err(format!("unknown keys {bad:?}"));
    }
    match v.get("version").and_then(Value::as_str) {
        None | Some("") | Some("v1") => {}
        Some(other) => return Err(format!("unknown version: {other}")),
    }
    let mut c = Config::default();
    if let Some(flags) = v.get("flags") {
        let bad = unknown_keys(
            flags,
            &[
                "migStrategy",
                "failOnInitError",
                "mpsRoot",
                "nvidiaDriverRoot",
                "nvidiaDevRoot",
                "gdrcopyEnabled",
                "gdsEnabled",
                "mofedEnabled",
                "useNodeFeatureAPI",
                "deviceDiscoveryStrategy",
                "plugin",
                "gfd",
            ],
        );
        if !bad.is_empty() {
            return Err(format!("flags: unknown keys {bad:?}"));
        }
        c.mig_strategy = flags
            .get("migStrategy")
            .map(|s| {
                s.as_str()
                    .map(str::to_string)
                    .ok_or("flags.migStrategy: not a string")
            })
            .transpose()?;
        c.fail_on_init_error = flags
            .get("failOnInitError")
            .map(|b| b.as_bool().ok_or("flags.failOnInitError: not a bool"))
            .transpose()?;
        c.mps_root = flags
            .get("mpsRoot")
            .map(|s| {
                s.as_str()
                    .map(str::to_string)
                    .ok_or("flags.mpsRoot: not a string")
            })
            .transpose()?;
        if let Some(plugin) = flags.get("plugin") {
            let bad = unknown_keys(
                plugin,
                &[
                    "passDeviceSpecs",
                    "deviceListStrategy",
                    "deviceIDStrategy",
                    "cdiAnnotationPrefix",
                    "nvidiaCTKPath",
                    "containerDriverRoot",
                    "sharedDevicesAllocationPolicy",
                ],
            );
            if !bad.is_empty() {
                return Err(format!("flags.plugin: unknown keys {bad:?}"));
            }
            // A string or a list of strings (`flags.go` lines 85-106).
            c.device_list_strategy = match plugin.get("deviceListStrategy") {
                None => None,
                Some(Value::String(s)) => Some(vec![s.clone()]),
                Some(Value::Array(a)) => Some(
                    a.iter()
                        .map(|s| s.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or("flags.plugin.deviceListStrategy: not strings")?,
                ),
                Some(other) => {
                    return Err(format!("invalid deviceListStrategy: {other}"));
                }
            };
            c.device_id_strategy = plugin
                .get("deviceIDStrategy")
                .map(|s| {
                    s.as_str()
                        .map(str::to_string)
                        .ok_or("deviceIDStrategy: not a string")
                })
                .transpose()?;
        }
    }
    if let Some(sharing) = v.get("sharing") {
        let bad = unknown_keys(sharing, &["timeSlicing", "mps"]);
        if !bad.is_empty() {
            return Err(format!("sharing: unknown keys {bad:?}"));
        }
        if let Some(ts) = sharing.get("timeSlicing") {
            c.time_slicing = Some(section(ts, "sharing.timeSlicing")?);
        }
        if let Some(mps) = sharing.get("mps") {
            c.mps = Some(section(mps, "sharing.mps")?);
        }
    }
    Ok(c)
}

/// The flags the plugin runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct Flags {
    pub mig_strategy: String,
    pub device_list_strategy: Vec<String>,
    pub device_id_strategy: String,
    pub mps_root: Option<String>,
}

/// The flags in force: a flag set on the command line or by its environment variable wins over the
/// config file, which wins over the default (`NewConfig`, `api/config/v1/config.go` lines 42-56;
/// `updateFromCLIFlag`, `flags.go` lines 31-51; the flags, their variables and defaults in
/// `cmd/nvidia-device-plugin/main.go` lines 62-106 and 140-144). A list flag read from the
/// environment splits at commas (urfave/cli's `StringSliceFlag`).
pub fn flags(config: &Config, env: &BTreeMap<String, String>) -> Flags {
    let env_str = |k: &str| env.get(k).cloned();
    Flags {
        mig_strategy: env_str("MIG_STRATEGY")
            .or_else(|| config.mig_strategy.clone())
            .unwrap_or_else(|| "none".to_string()),
        device_list_strategy: env_str("DEVICE_LIST_STRATEGY")
            .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
            .or_else(|| config.device_list_strategy.clone())
            .unwrap_or_else(|| vec!["envvar".to_string()]),
        device_id_strategy: env_str("DEVICE_ID_STRATEGY")
            .or_else(|| config.device_id_strategy.clone())
            .unwrap_or_else(|| "uuid".to_string()),
        mps_root: env_str("MPS_ROOT").or_else(|| config.mps_root.clone()),
    }
}

/// `validateFlags` (`cmd/nvidia-device-plugin/main.go` lines 203-257), run at start: the plugin exits
/// when it fails. NVML is taken to be present (the CDI strategies need it).
pub fn validate(config: &Config, flags: &Flags) -> Result<(), String> {
    for s in &flags.device_list_strategy {
        if !DEVICE_LIST_STRATEGIES.contains(&s.as_str()) {
            return Err(format!(
                "invalid --device-list-strategy option: invalid strategy: {s}"
            ));
        }
    }
    if flags.device_id_strategy != "uuid" && flags.device_id_strategy != "index" {
        return Err(format!(
            "invalid --device-id-strategy option: {}",
            flags.device_id_strategy
        ));
    }
    if config.strategy() == Strategy::Mps {
        if flags.mig_strategy == "mixed" {
            return Err("using --mig-strategy=mixed is not supported with MPS".to_string());
        }
        if flags.mps_root.as_deref().is_none_or(str::is_empty) {
            return Err("using MPS requires --mps-root to be specified".to_string());
        }
    }
    if !MIG_STRATEGIES.contains(&flags.mig_strategy.as_str()) {
        return Err(format!("unknown MIG strategy: {}", flags.mig_strategy));
    }
    Ok(())
}

/// Whether the plugin admits a request for `count` devices of `resource`: a shared resource is
/// refused for more than one device when `failRequestsGreaterThanOne` holds (`internal/rm/rm.go`
/// lines 91-104), which the kubelet reports as `UnexpectedAdmissionError`.
pub fn admits(config: &Config, resource: &str, count: u64) -> bool {
    !(config.replicas(resource) > 1 && count > 1 && config.fails_requests_greater_than_one())
}
