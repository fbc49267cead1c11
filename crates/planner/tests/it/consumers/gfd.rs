//! GPU Feature Discovery (NVIDIA/k8s-device-plugin `internal/lm`): the per-resource labels of a node,
//! and the resources the device plugin advertises next to them.

use super::device_plugin::{Config, Flags, Strategy};
use std::collections::BTreeMap;

/// A node's GPUs as the MIG manager leaves them: per GPU, the MIG profiles of its instances (empty
/// when MIG is disabled).
pub type Gpus = Vec<Vec<String>>;

fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::None => "none",
        Strategy::TimeSlicing => "time-slicing",
        Strategy::Mps => "mps",
    }
}

/// `baseLabeler` (`internal/lm/resource.go` lines 159-178): replicas are 0 without a config (the
/// labeler of MIG-enabled GPUs, lines 32-36 and 217-221), else the config's replicas for the resource
/// (1 when it is not listed, lines 208-215); the sharing strategy is the config's when the resource is
/// replicated more than once, else `none`.
fn put(
    labels: &mut BTreeMap<String, String>,
    resource: &str,
    config: Option<&Config>,
    count: usize,
) {
    let replicas = match config {
        None => 0,
        Some(c) => c
            .section()
            .and_then(|s| s.resources.iter().find(|r| r.name == resource))
            .map(|r| r.replicas)
            .unwrap_or(1),
    };
    let strategy = match config {
        Some(c) if replicas > 1 => strategy_name(c.strategy()),
        _ => "none",
    };
    labels.insert(format!("{resource}.count"), count.to_string());
    labels.insert(format!("{resource}.replicas"), replicas.to_string());
    labels.insert(format!("{resource}.sharing-strategy"), strategy.to_string());
}

/// The labels of a node (`NewResourceLabeler`, `internal/lm/mig-strategy.go` lines 46-78): full-GPU
/// labels from the MIG-enabled GPUs without sharing, overridden by those of the GPUs with MIG disabled
/// with the config's sharing (lines 114-179); under a MIG strategy other than `none`,
/// `nvidia.com/mig.strategy` (lines 105-108), and under `mixed` the labels of each MIG profile as
/// `nvidia.com/mig-<profile>` (lines 266-297).
pub fn labels(config: &Config, flags: &Flags, gpus: &Gpus) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if gpus.is_empty() {
        return out;
    }
    let enabled = gpus.iter().filter(|g| !g.is_empty()).count();
    let total = gpus.len();
    if enabled > 0 {
        put(&mut out, "nvidia.com/gpu", None, total);
    }
    if enabled < total {
        put(&mut out, "nvidia.com/gpu", Some(config), total);
    }
    if flags.mig_strategy == "none" {
        return out;
    }
    out.insert(
        "nvidia.com/mig.strategy".to_string(),
        flags.mig_strategy.clone(),
    );
    if flags.mig_strategy == "mixed" {
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for p in gpus.iter().flatten() {
            *per.entry(format!("nvidia.com/mig-{p}")).or_default() += 1;
        }
        for (resource, count) in per {
            put(&mut out, &resource, Some(config), count);
        }
    }
    out
}

/// The resources the device plugin advertises: whole GPUs (MIG disabled) as `nvidia.com/gpu`, under
/// `mixed` each MIG instance as `nvidia.com/mig-<profile>`, each device times its replicas.
pub fn resources(config: &Config, flags: &Flags, gpus: &Gpus) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for g in gpus {
        if g.is_empty() {
            *out.entry("nvidia.com/gpu".to_string()).or_default() +=
                u64::from(config.replicas("nvidia.com/gpu"));
        } else if flags.mig_strategy == "mixed" {
            for p in g {
                let resource = format!("nvidia.com/mig-{p}");
                let r = u64::from(config.replicas(&resource));
                *out.entry(resource).or_default() += r;
            }
        }
    }
    out
}
