//! MIG on a node: the layout of each GPU from the mig-parted config the node's label selects (by
//! device-filter and devices, placed by the catalogue's geometry), else from the mixed-strategy
//! labels, else from the platform's partition size.

use super::{fallback_location, ConfigMapDraft, Context, NodeDraft, Resolved};
use crate::mig_parted::{self, MigPartedConfig};
use crate::platforms::gpu_operator::MIG_CONFIG_KEY;
use crate::platforms::{self, gfd};
use gpu_trust_model::catalogue::GpuModel;
use gpu_trust_model::fleet::{
    ConfigSource, MigRequest, MigSlot, MigStrategy, NodeId, PhysicalGpu, Unresolved, UnresolvedKind,
};
use gpu_trust_model::geometry;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, ObjectRef};
use std::collections::BTreeMap;

impl Context<'_> {
    /// Fills the GPUs' MIG layouts; returns where they came from.
    pub(super) fn mig_layout(
        &mut self,
        d: &NodeDraft,
        id: NodeId,
        model: Option<&'static GpuModel>,
        strategy: MigStrategy,
        gpus: &mut Vec<PhysicalGpu>,
        out: &mut Resolved,
    ) -> Option<ConfigSource> {
        let label_counts = gfd::mig_counts(&d.labels);
        let config_name = d
            .labels
            .get(gfd::MIG_CONFIG)
            .filter(|v| !v.is_empty())
            .cloned();
        if let Some(name) = &config_name {
            if let Some(state) = d.labels.get(gfd::MIG_CONFIG_STATE) {
                if state != "success" {
                    out.diagnostics.push(Diagnostic::warning(Code::MigConfigPending,
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
                        out.diagnostics.push(Diagnostic::warning(Code::LabelsDisagree,
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
            .then(|| gfd::single_mig_profile(&d.labels))
            .flatten();
        let counts = if !label_counts.is_empty() {
            label_counts
        } else if let Some(profile) = single_profile {
            // Single strategy: every GPU carries one profile; the count label counts instances.
            let n = d
                .labels
                .get(gfd::COUNT)
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
        out.diagnostics.push(Diagnostic::warning(Code::MigLayoutFromLabels,
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
        let candidates = platforms::gpu_operator::mig_configmaps(self.info, &d.name);
        let named = candidates[1].clone();
        let found = candidates.iter().find_map(|c| {
            self.config_maps
                .get(&(ns.clone(), c.clone()))
                .map(|cm| (c.clone(), cm.clone()))
        });
        let mut unresolved = |what: UnresolvedKind, message: String| {
            out.unresolved.push(Unresolved {
                object: d.object.clone(),
                node: Some(d.name.clone()),
                what,
                message,
            });
        };
        let Some((cm_name, cm)) = found else {
            if let Some(why) = self.unread_config_maps(&ns) {
                // Unknown, not missing: the unread list is the coverage gap.
                unresolved(
                    UnresolvedKind::Other,
                    format!(
                        "the node asks for MIG config `{name}`, whose mig-parted ConfigMap {ns}/{named} could not be read from the cluster ({why}): its MIG layout is unknown"
                    ),
                );
                return None;
            }
            unresolved(UnresolvedKind::MigConfig, format!(
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
                                    e.code,
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
            unresolved(
                UnresolvedKind::MigConfig,
                format!("the mig-parted ConfigMap {ns}/{cm_name} has no valid `{MIG_CONFIG_KEY}`"),
            );
            return None;
        };
        if !config.mig_configs.contains_key(name) {
            unresolved(
                UnresolvedKind::MigConfig,
                format!(
                "MIG config `{name}` (label {}) is not in the mig-parted ConfigMap {ns}/{cm_name}",
                gfd::MIG_CONFIG
            ),
            );
            return None;
        }
        Some((cm_name, cm, config))
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
        out.diagnostics.push(Diagnostic::warning(Code::DeviceFilterUnmatched,
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
            .devices()
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
            mig_devices: entry.devices().clone(),
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

/// Every GPU cut into `per_gpu` instances of the platform's partition profile (GKE's
/// `gke-gpu-partition-size`: the device plugin lists the partitions as its devices).
pub(super) fn platform_partitions(
    d: &NodeDraft,
    model: Option<&'static GpuModel>,
    profile: &str,
    per_gpu: u32,
    gpus: &mut [PhysicalGpu],
    out: &mut Resolved,
) -> Option<ConfigSource> {
    let known = model.and_then(|m| m.profile(profile));
    let name = known.map_or_else(|| profile.to_string(), |p| p.name.to_string());
    if model.is_some() && known.is_none() {
        out.warn(
            d,
            Code::UnknownPartition,
            format!(
                "node {}: the platform partitions its GPUs into `{profile}`, a profile the {} does not have",
                d.name,
                model.map_or("GPU", |m| m.display_name)
            ),
        );
    }
    let counts = [(name.as_str(), per_gpu)];
    let (slots, _) = layout_slots(model.filter(|_| known.is_some()), &counts);
    for g in gpus.iter_mut() {
        g.mig_enabled = true;
        g.mig = slots.clone();
    }
    Some(ConfigSource::NodeLabels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::catalogue;

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
