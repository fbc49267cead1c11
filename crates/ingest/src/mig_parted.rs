//! The mig-parted configuration file (`version: v1`, `mig-configs`), read as mig-parted reads it.
//!
//! Format and rules from NVIDIA/mig-parted `api/spec/v1/spec.go`: `version` is required and only `v1`;
//! `mig-configs` maps a config name to a non-empty list of entries; an entry has an optional
//! `device-filter` (one PCI id or a list, `device << 16 | vendor` as in `0x233010DE`), a required
//! `devices` (`all` or a list of GPU indices), a required `mig-enabled`, and `mig-devices` (profile to
//! count). With MIG enabled `mig-devices` must be present, but may be empty (`{}`: MIG mode on, no
//! instances, as the GPU Operator's stock `all-enabled` config has it); with MIG disabled it must be
//! absent or empty. A non-empty `mig-devices` whose counts are all 0 is rejected
//! (`pkg/types/mig_config.go`, `AssertValidFormat`). Unknown keys are rejected.

use gpu_trust_model::catalogue::{GpuModel, PciDeviceId};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_source::tree::{Node, Pos, Value};
use gpu_trust_source::{read_all, Entry, Format, Limits, ReadOptions};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A parsed mig-parted configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigPartedConfig {
    pub version: String,
    #[serde(rename = "mig-configs")]
    pub mig_configs: BTreeMap<String, Vec<MigConfigEntry>>,
    /// Line of each config name in the parsed text (after the line offset), for locations.
    #[serde(skip)]
    pub lines: BTreeMap<String, u32>,
}

/// One entry of a named config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigConfigEntry {
    #[serde(rename = "device-filter", default, deserialize_with = "filter")]
    pub device_filter: Vec<String>,
    pub devices: Devices,
    #[serde(rename = "mig-enabled")]
    pub mig_enabled: bool,
    /// `None` when absent (or `null`); `Some` of an empty map for `{}`.
    #[serde(rename = "mig-devices", default)]
    pub mig_devices: Option<BTreeMap<String, u32>>,
}

impl MigConfigEntry {
    /// The instances asked for (none when MIG is disabled or `mig-devices` is empty).
    pub fn devices(&self) -> &BTreeMap<String, u32> {
        static EMPTY: BTreeMap<String, u32> = BTreeMap::new();
        self.mig_devices.as_ref().unwrap_or(&EMPTY)
    }
}

/// `devices: all` or a list of GPU indices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Devices {
    All,
    Indices(Vec<u32>),
}

impl<'de> Deserialize<'de> for Devices {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            List(Vec<u32>),
        }
        match Raw::deserialize(d)? {
            Raw::Word(w) if w == "all" => Ok(Devices::All),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "devices must be `all` or a list of GPU indices, not `{w}`"
            ))),
            Raw::List(l) => Ok(Devices::Indices(l)),
        }
    }
}

impl Devices {
    pub fn includes(&self, index: u32) -> bool {
        match self {
            Devices::All => true,
            Devices::Indices(l) => l.contains(&index),
        }
    }
}

impl MigConfigEntry {
    /// Whether the entry's device filter admits the model (an empty filter admits every GPU). `None`
    /// when the filter cannot be judged because the model is unknown.
    pub fn matches_model(&self, model: Option<&GpuModel>) -> Option<bool> {
        if self.device_filter.is_empty() {
            return Some(true);
        }
        let model = model?;
        Some(
            self.device_filter.iter().any(|f| {
                PciDeviceId::parse(f).is_some_and(|id| model.pci_device_ids.contains(&id))
            }),
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    version: String,
    #[serde(rename = "mig-configs")]
    mig_configs: BTreeMap<String, Vec<MigConfigEntry>>,
}

/// Parses a mig-parted configuration; `line_offset` shifts reported lines (for text embedded in a
/// ConfigMap).
pub fn parse(text: &str, file: &str, line_offset: u32) -> Result<MigPartedConfig, Diagnostic> {
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
    let object = match read_all(text, file, &options).into_iter().next() {
        Some(Entry::Object(o)) | Some(Entry::Container { object: o, .. }) => o,
        Some(Entry::Invalid { diagnostic, .. }) => return Err(shift(diagnostic)),
        None => {
            return Err(Diagnostic::error(
                Code::NotOneDocument,
                Location::new(file, line_offset.saturating_add(1), 1),
                "the mig-parted config is empty",
            ))
        }
    };
    let raw: Raw = object.deserialize().map_err(shift)?;
    let pos_of = |path: &[&str]| -> Pos {
        let mut cur: Option<&Node<'_>> = object.node();
        for p in path {
            cur = cur.and_then(|n| match &n.value {
                Value::Seq(items) => p.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => n.get(p),
            });
        }
        cur.map_or(object.pos(), |n| n.pos)
    };
    let loc = |pos: Pos| Location::new(file, pos.line.saturating_add(line_offset), pos.column);
    if raw.version != "v1" {
        return Err(Diagnostic::error(
            Code::InvalidMigPartedConfig,
            loc(pos_of(&["version"])),
            format!(
                "unknown mig-parted config version `{}` (only v1)",
                raw.version
            ),
        ));
    }
    let mut lines = BTreeMap::new();
    for (name, entries) in &raw.mig_configs {
        let key_pos = object
            .node()
            .and_then(|n| n.get("mig-configs"))
            .and_then(|m| m.as_map())
            .and_then(|m| m.iter().find(|(k, _)| k.as_scalar_text() == Some(name)))
            .map_or(object.pos(), |(k, _)| k.pos);
        lines.insert(name.clone(), key_pos.line.saturating_add(line_offset));
        if entries.is_empty() {
            return Err(Diagnostic::error(
                Code::InvalidMigPartedConfig,
                loc(key_pos),
                format!("mig-parted config `{name}` has no entries"),
            ));
        }
        for (i, e) in entries.iter().enumerate() {
            let idx = i.to_string();
            match (&e.mig_devices, e.mig_enabled) {
                (None, true) => {
                    return Err(Diagnostic::error(
                        Code::InvalidMigPartedConfig,
                        loc(pos_of(&["mig-configs", name, &idx])),
                        format!("mig-parted config `{name}` enables MIG without mig-devices"),
                    ))
                }
                (Some(d), false) if !d.is_empty() => {
                    return Err(Diagnostic::error(
                        Code::InvalidMigPartedConfig,
                        loc(pos_of(&["mig-configs", name, &idx, "mig-devices"])),
                        format!("mig-parted config `{name}` lists mig-devices with MIG disabled"),
                    ))
                }
                (Some(d), true) if !d.is_empty() && d.values().all(|&n| n == 0) => {
                    return Err(Diagnostic::error(
                        Code::InvalidMigPartedConfig,
                        loc(pos_of(&["mig-configs", name, &idx, "mig-devices"])),
                        format!("mig-parted config `{name}`: all counts in mig-devices are 0"),
                    ))
                }
                _ => {}
            }
            if let Some(bad) = e
                .device_filter
                .iter()
                .find(|f| PciDeviceId::parse(f).is_none())
            {
                return Err(Diagnostic::error(
                    Code::InvalidMigPartedConfig,
                    loc(pos_of(&["mig-configs", name, &idx, "device-filter"])),
                    format!("device-filter `{bad}` is not a PCI device id such as 0x233010DE"),
                ));
            }
        }
    }
    Ok(MigPartedConfig {
        version: raw.version,
        mig_configs: raw.mig_configs,
        lines,
    })
}

fn filter<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "version: v1\nmig-configs:\n  all-disabled:\n    - devices: all\n      mig-enabled: false\n  tenant-split:\n    - device-filter: [\"0x233010DE\"]\n      devices: [0, 1]\n      mig-enabled: true\n      mig-devices: {\"3g.40gb\": 1, \"2g.20gb\": 1, \"1g.10gb\": 2}\n    - devices: [2, 3]\n      mig-enabled: false\n";

    #[test]
    fn parses_named_configs() {
        let c = parse(CONFIG, "cm.yaml", 0).unwrap();
        let split = &c.mig_configs["tenant-split"];
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].devices, Devices::Indices(vec![0, 1]));
        assert_eq!(split[0].devices()["1g.10gb"], 2);
        assert_eq!(c.lines["tenant-split"], 6);
        let h100 = gpu_trust_model::catalogue::lookup("0x233010DE");
        assert_eq!(split[0].matches_model(h100), Some(true));
        let a100 = gpu_trust_model::catalogue::lookup("0x20B010DE");
        assert_eq!(split[0].matches_model(a100), Some(false));
        assert_eq!(split[1].matches_model(None), Some(true));
    }

    /// The GPU Operator's stock `default-mig-parted-config` has `all-enabled` with `mig-devices: {}`,
    /// which mig-parted accepts: MIG mode on, no instances. It must not reject the whole config.
    #[test]
    fn mig_enabled_with_empty_devices_is_valid() {
        let stock = "version: v1\nmig-configs:\n  all-disabled:\n    - devices: all\n      mig-enabled: false\n\n  all-enabled:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {}\n\n  all-1g.10gb:\n    - devices: all\n      mig-enabled: true\n      mig-devices:\n        \"1g.10gb\": 7\n";
        let c = parse(stock, "cm.yaml", 0).expect("the stock config parses");
        let enabled = &c.mig_configs["all-enabled"][0];
        assert!(enabled.mig_enabled);
        assert_eq!(enabled.mig_devices, Some(BTreeMap::new()));
        assert!(enabled.devices().is_empty());
        assert_eq!(c.mig_configs["all-1g.10gb"][0].devices()["1g.10gb"], 7);
    }

    #[test]
    fn unknown_keys_and_missing_fields_are_errors() {
        let typo = "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabeld: true\n";
        let e = parse(typo, "cm.yaml", 20).unwrap_err();
        assert_eq!(e.location.line, 25, "{e}");
        let no_devices =
            "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: true\n";
        assert!(parse(no_devices, "cm.yaml", 0)
            .unwrap_err()
            .message
            .contains("without mig-devices"));
        let zeros = "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {\"1g.10gb\": 0}\n";
        assert!(parse(zeros, "cm.yaml", 0)
            .unwrap_err()
            .message
            .contains("are 0"));
        let disabled = "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: false\n      mig-devices: {\"1g.10gb\": 0}\n";
        assert!(parse(disabled, "cm.yaml", 0).is_err());
        let v2 = "version: v2\nmig-configs: {}\n";
        assert!(parse(v2, "cm.yaml", 0).is_err());
        let bad =
            "version: v1\nmig-configs:\n  x:\n    - devices: some\n      mig-enabled: false\n";
        assert!(parse(bad, "cm.yaml", 0).is_err());
    }
}
