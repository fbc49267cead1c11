//! mig-parted (NVIDIA/mig-parted): its config file and MIG profile names.

use super::{unknown_keys, yaml};
use serde_json::Value;
use std::collections::BTreeMap;

/// One entry of a named config.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub device_filter: Vec<String>,
    /// `None` for `all`.
    pub devices: Option<Vec<u64>>,
    pub mig_enabled: bool,
    pub mig_devices: BTreeMap<String, i64>,
}

/// A MIG profile name as go-nvlib parses it (`pkg/nvlib/device/mig_profile.go` lines 251-382, vendored
/// in mig-parted): `<C>c.<G>g.<GB>gb` or `<G>g.<GB>gb`, then optional attributes after `+` (or `-`, not
/// both): non-empty, unique, not starting with a digit or a dot, not ending with a dot, alphanumerics
/// and dots only.
pub fn profile_format(profile: &str) -> Result<(), String> {
    if profile.is_empty() {
        return Err("profile is the empty string".to_string());
    }
    let plus = profile.split_once('+');
    let minus = profile.split_once('-');
    if plus.is_some() && minus.is_some() {
        return Err(format!(
            "profile '{profile}' contains both '+/-' attributes"
        ));
    }
    let (fields, attributes) = match plus.or(minus) {
        Some((f, a)) => (f, Some(a)),
        None => (profile, None),
    };
    let field = |s: &str, suffix: &str| -> Result<u64, String> {
        if s.trim() != s {
            return Err(format!("leading or trailing spaces in '{s}'"));
        }
        s.strip_suffix(suffix)
            .ok_or(format!("missing '{suffix}' in '{s}'"))?
            .parse::<u64>()
            .map_err(|_| format!("malformed number in '{s}'"))
    };
    let parts: Vec<&str> = fields.splitn(3, '.').collect();
    match parts.as_slice() {
        [c, g, gb] => {
            field(c, "c")?;
            field(g, "g")?;
            field(gb, "gb")?;
        }
        [g, gb] => {
            field(g, "g")?;
            field(gb, "gb")?;
        }
        _ => return Err("parsed wrong number of fields, expected 2 or 3".to_string()),
    }
    if let Some(attributes) = attributes {
        let mut seen: Vec<&str> = Vec::new();
        for a in attributes.split(',') {
            if seen.contains(&a) {
                return Err("non unique attribute in list".to_string());
            }
            if a.is_empty() || a.trim() != a {
                return Err("empty attribute, or spaces around one".to_string());
            }
            if a.starts_with(|c: char| c.is_ascii_digit()) {
                return Err("attribute begins with a number".to_string());
            }
            if a.starts_with('.') || a.ends_with('.') {
                return Err("attribute begins/ends with a dot".to_string());
            }
            if !a.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
                return Err("non alpha-numeric character or digit in attribute".to_string());
            }
            seen.push(a);
        }
    }
    Ok(())
}

/// Reads a config file (`api/spec/v1/spec.go` lines 46-183): `version` required and `v1`; only
/// `version` and `mig-configs`; at least one config, each with at least one entry; per entry
/// `devices` (`all` or a list of indices) and `mig-enabled` required, `device-filter` a string or a
/// list, `mig-devices` required when enabled and empty when not, its profile names well formed
/// (`pkg/types/mig_config.go` lines 39-59: counts not negative, not all zero).
pub fn parse(text: &str) -> Result<BTreeMap<String, Vec<Entry>>, String> {
    let v = yaml(text)?;
    if v.get("version").is_none() {
        return Err("unable to parse with missing 'version' field".to_string());
    }
    if v.get("version").and_then(Value::as_str) != Some("v1") {
        return Err(format!("unknown version: {}", v["version"]));
    }
    let bad = unknown_keys(&v, &["version", "mig-configs"]);
    if !bad.is_empty() {
        return Err(format!("unexpected field: {bad:?}"));
    }
    let configs = v
        .get("mig-configs")
        .and_then(Value::as_object)
        .filter(|c| !c.is_empty())
        .ok_or("at least one entry in 'mig-configs' is required")?;
    let mut out = BTreeMap::new();
    for (name, entries) in configs {
        let entries = entries
            .as_array()
            .filter(|e| !e.is_empty())
            .ok_or(format!("at least one entry in '{name}' is required"))?;
        let mut parsed = Vec::new();
        for e in entries {
            let bad = unknown_keys(
                e,
                &["device-filter", "devices", "mig-enabled", "mig-devices"],
            );
            if !bad.is_empty() {
                return Err(format!("{name}: unexpected field: {bad:?}"));
            }
            let device_filter = match e.get("device-filter") {
                None => Vec::new(),
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|s| s.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or(format!("{name}: device-filter is not strings"))?,
                Some(other) => return Err(format!("{name}: device-filter {other}")),
            };
            let devices = match e.get("devices") {
                None => return Err(format!("{name}: missing required field: devices")),
                Some(Value::String(s)) if s == "all" => None,
                Some(Value::Array(a)) => Some(
                    a.iter()
                        .map(Value::as_u64)
                        .collect::<Option<Vec<_>>>()
                        .ok_or(format!("{name}: devices is not a list of indices"))?,
                ),
                Some(other) => return Err(format!("{name}: invalid devices {other}")),
            };
            let mig_enabled = e
                .get("mig-enabled")
                .ok_or(format!("{name}: missing required field: mig-enabled"))?
                .as_bool()
                .ok_or(format!("{name}: mig-enabled is not a bool"))?;
            let mig_devices: Option<BTreeMap<String, i64>> = match e.get("mig-devices") {
                None => None,
                Some(Value::Object(m)) => Some(
                    m.iter()
                        .map(|(k, v)| v.as_i64().map(|c| (k.clone(), c)))
                        .collect::<Option<BTreeMap<_, _>>>()
                        .ok_or(format!("{name}: mig-devices counts are not integers"))?,
                ),
                Some(other) => return Err(format!("{name}: mig-devices {other}")),
            };
            if let Some(m) = &mig_devices {
                if !m.is_empty() {
                    for (p, &c) in m {
                        profile_format(p).map_err(|e| format!("{name}: {p}: {e}"))?;
                        if c < 0 {
                            return Err(format!("{name}: invalid count for '{p}': {c}"));
                        }
                    }
                    if m.values().all(|&c| c == 0) {
                        return Err(format!("{name}: all counts for all MigProfiles are 0"));
                    }
                }
            }
            if mig_enabled && mig_devices.is_none() {
                return Err(format!(
                    "{name}: missing required field 'mig-devices' when 'mig-enabled' is true"
                ));
            }
            if !mig_enabled && mig_devices.as_ref().is_some_and(|m| !m.is_empty()) {
                return Err(format!(
                    "{name}: MIG devices included when 'mig-enabled' is false"
                ));
            }
            parsed.push(Entry {
                device_filter,
                devices,
                mig_enabled,
                mig_devices: mig_devices.unwrap_or_default(),
            });
        }
        out.insert(name.clone(), parsed);
    }
    Ok(out)
}
