//! NVIDIA GPU Feature Discovery (GFD) and the GPU Operator's node labels: the `nvidia.com/*` labels
//! both the GPU Operator and the device plugin's Helm chart put on GPU nodes.
//!
//! Sources:
//! - k8s-device-plugin `internal/lm/resource.go`: `<resource>.product`, `.count`, `.replicas`,
//!   `.sharing-strategy`, `.memory` for `nvidia.com/gpu` and each `nvidia.com/mig-<profile>`; the
//!   product gets `-SHARED` when shared without a rename. MIG-enabled GPUs are labelled without
//!   sharing (`NewGPUResourceLabelerWithoutSharing`: `nvidia.com/gpu.replicas=0`,
//!   `sharing-strategy=none`), so those two labels say nothing about sharing on such a node.
//! - k8s-device-plugin `internal/lm/mig-strategy.go`: `nvidia.com/mig.strategy`, and under the mixed
//!   strategy one set of `nvidia.com/mig-<profile>.*` labels per profile present.
//! - k8s-device-plugin `internal/lm/nvml.go`: `nvidia.com/cuda.driver-version.{major,minor,revision,full}`
//!   and the deprecated `nvidia.com/cuda.driver.{major,minor,rev}`.
//! - NVIDIA/gpu-operator: `nvidia.com/gpu.present` (`internal/consts`), `nvidia.com/mig.config` and
//!   `nvidia.com/mig.config.state` (mig-manager), `nvidia.com/device-plugin.config` (config-manager),
//!   `nvidia.com/cc.mode` and `nvidia.com/cc.mode.state` (cc-manager).
//! - Node Feature Discovery: `feature.node.kubernetes.io/pci-10de.present` (PCI vendor 0x10DE).

use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::SharingStrategy;
use gpu_trust_model::resource::{self, MIG_PREFIX};
use gpu_trust_model::Version;
use std::collections::BTreeMap;

pub(crate) const PRODUCT: &str = "nvidia.com/gpu.product";
pub(crate) const COUNT: &str = "nvidia.com/gpu.count";
pub(crate) const MEMORY: &str = "nvidia.com/gpu.memory";
pub(crate) const PRESENT: &str = "nvidia.com/gpu.present";
pub(crate) const REPLICAS: &str = "nvidia.com/gpu.replicas";
pub(crate) const SHARING: &str = "nvidia.com/gpu.sharing-strategy";
pub(crate) const MIG_STRATEGY: &str = "nvidia.com/mig.strategy";
pub(crate) const MIG_CONFIG: &str = "nvidia.com/mig.config";
pub(crate) const MIG_CONFIG_STATE: &str = "nvidia.com/mig.config.state";
pub(crate) const DEVICE_PLUGIN_CONFIG: &str = "nvidia.com/device-plugin.config";
pub(crate) const CC_MODE_STATE: &str = "nvidia.com/cc.mode.state";
pub(crate) const CC_MODE: &str = "nvidia.com/cc.mode";
pub(crate) const NFD_NVIDIA_PCI: &str = "feature.node.kubernetes.io/pci-10de.present";
/// The suffix GFD appends to a product shared without a rename.
pub(crate) const SHARED_PRODUCT_SUFFIX: &str = "-SHARED";
/// The infix of the single MIG strategy's product (`NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`).
pub(crate) const SINGLE_MIG_PRODUCT_INFIX: &str = "-MIG-";
const DRIVER_FULL: &str = "nvidia.com/cuda.driver-version.full";
const DRIVER_PARTS: [&str; 3] = [
    "nvidia.com/cuda.driver-version.major",
    "nvidia.com/cuda.driver-version.minor",
    "nvidia.com/cuda.driver-version.revision",
];
const DRIVER_DEPRECATED: [&str; 3] = [
    "nvidia.com/cuda.driver.major",
    "nvidia.com/cuda.driver.minor",
    "nvidia.com/cuda.driver.rev",
];

/// Whether GFD or the operator labelled the node as having NVIDIA GPUs.
pub(crate) fn says_gpu(labels: &BTreeMap<String, String>) -> bool {
    labels.get(PRESENT).is_some_and(|v| v == "true")
        || labels.contains_key(PRODUCT)
        || labels.contains_key(COUNT)
        || labels.contains_key(MIG_CONFIG)
        || labels.contains_key(DEVICE_PLUGIN_CONFIG)
        || labels.get(NFD_NVIDIA_PCI).is_some_and(|v| v == "true")
}

/// Whether GFD itself labelled the node (a product or count label).
pub(crate) fn labelled(labels: &BTreeMap<String, String>) -> bool {
    labels.contains_key(PRODUCT) || labels.contains_key(COUNT)
}

/// The driver version GFD labels.
pub(crate) fn driver_version(labels: &BTreeMap<String, String>) -> Option<Version> {
    if let Some(v) = labels.get(DRIVER_FULL).and_then(|v| Version::parse(v)) {
        return Some(v);
    }
    for keys in [DRIVER_PARTS, DRIVER_DEPRECATED] {
        let parts: Option<Vec<&String>> = keys.iter().map(|k| labels.get(*k)).collect();
        if let Some(p) = parts {
            if let Some(v) = Version::parse(&format!("{}.{}.{}", p[0], p[1], p[2])) {
                return Some(v);
            }
        }
    }
    None
}

/// `nvidia.com/cc.mode.state`, else `nvidia.com/cc.mode`.
pub(crate) fn cc_mode(labels: &BTreeMap<String, String>) -> Option<String> {
    labels
        .get(CC_MODE_STATE)
        .or_else(|| labels.get(CC_MODE))
        .cloned()
}

/// The mixed strategy's `nvidia.com/mig-<profile>.count` labels, profiles in the catalogue spelling.
pub(crate) fn mig_counts(labels: &BTreeMap<String, String>) -> BTreeMap<String, u32> {
    labels
        .iter()
        .filter_map(|(k, v)| {
            let profile = k.strip_prefix(MIG_PREFIX)?.strip_suffix(".count")?;
            let n = v.parse::<u32>().ok().filter(|n| *n > 0)?;
            Some((catalogue::profile_from_plugin(profile), n))
        })
        .collect()
}

/// The single strategy's profile, from a product label such as `NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`.
pub(crate) fn single_mig_profile(labels: &BTreeMap<String, String>) -> Option<String> {
    labels
        .get(PRODUCT)
        .and_then(|p| p.split_once(SINGLE_MIG_PRODUCT_INFIX))
        .map(|(_, profile)| profile.to_string())
}

/// What GFD's labels say about the sharing of one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LabelledSharing {
    pub strategy: SharingStrategy,
    /// `None` when the labels name a sharing strategy but no replica count.
    pub replicas: Option<u32>,
}

/// Sharing per resource as GFD labels it (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`). Resources
/// whose labels carry no sharing information (`nvidia.com/gpu` on MIG-enabled GPUs, `replicas=0`)
/// are left out; an empty map means the labels say nothing.
pub(crate) fn sharing(labels: &BTreeMap<String, String>) -> BTreeMap<String, LabelledSharing> {
    let mut out = BTreeMap::new();
    let mut read = |name: String,
                    strategy: Option<&String>,
                    replicas: Option<&String>,
                    shared_suffix: bool| {
        let replicas = replicas.and_then(|r| r.trim().parse::<u32>().ok());
        if replicas == Some(0) {
            // Labelled without sharing: nothing is said either way.
            return;
        }
        let strategy = match strategy.map(|s| s.trim()) {
            Some("time-slicing") => SharingStrategy::TimeSlicing,
            Some("mps") => SharingStrategy::Mps,
            Some(_) => SharingStrategy::None,
            None if shared_suffix || replicas.is_some_and(|r| r > 1) => {
                SharingStrategy::TimeSlicing
            }
            None if replicas.is_some() => SharingStrategy::None,
            None => return,
        };
        out.insert(name, LabelledSharing { strategy, replicas });
    };
    let shared_suffix = labels
        .get(PRODUCT)
        .is_some_and(|p| p.ends_with(SHARED_PRODUCT_SUFFIX));
    read(
        resource::GPU.to_string(),
        labels.get(SHARING),
        labels.get(REPLICAS),
        shared_suffix,
    );
    let profiles: std::collections::BTreeSet<&str> = labels
        .keys()
        .filter_map(|k| {
            let rest = k.strip_prefix(MIG_PREFIX)?;
            rest.strip_suffix(".replicas")
                .or_else(|| rest.strip_suffix(".sharing-strategy"))
        })
        .collect();
    for p in profiles {
        let key = |suffix: &str| labels.get(&format!("{MIG_PREFIX}{p}.{suffix}"));
        let shared = key("product").is_some_and(|v| v.ends_with(SHARED_PRODUCT_SUFFIX));
        read(
            format!("{MIG_PREFIX}{p}"),
            key("sharing-strategy"),
            key("replicas"),
            shared,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn mig_enabled_gpus_carry_no_sharing_labels() {
        // As GFD labels a mixed-strategy node whose GPUs are all MIG-enabled.
        let l = labels(&[
            (REPLICAS, "0"),
            (SHARING, "none"),
            ("nvidia.com/mig-1g.10gb.replicas", "1"),
            ("nvidia.com/mig-1g.10gb.sharing-strategy", "none"),
            ("nvidia.com/mig-3g.40gb.replicas", "2"),
            ("nvidia.com/mig-3g.40gb.sharing-strategy", "time-slicing"),
        ]);
        let s = sharing(&l);
        assert!(!s.contains_key(resource::GPU));
        assert_eq!(
            s["nvidia.com/mig-3g.40gb"],
            LabelledSharing {
                strategy: SharingStrategy::TimeSlicing,
                replicas: Some(2)
            }
        );
        assert_eq!(s["nvidia.com/mig-1g.10gb"].strategy, SharingStrategy::None);
    }

    #[test]
    fn shared_suffix_alone_means_time_slicing() {
        let s = sharing(&labels(&[(PRODUCT, "NVIDIA-A100-SXM4-40GB-SHARED")]));
        assert_eq!(
            s[resource::GPU],
            LabelledSharing {
                strategy: SharingStrategy::TimeSlicing,
                replicas: None
            }
        );
        assert!(sharing(&labels(&[(PRODUCT, "NVIDIA-A100-SXM4-40GB")])).is_empty());
    }

    #[test]
    fn driver_version_from_full_or_parts() {
        let full = labels(&[(DRIVER_FULL, "550.54.15")]);
        assert_eq!(
            driver_version(&full).map(|v| v.text),
            Some("550.54.15".into())
        );
        let parts = labels(&[
            ("nvidia.com/cuda.driver.major", "535"),
            ("nvidia.com/cuda.driver.minor", "104"),
            ("nvidia.com/cuda.driver.rev", "05"),
        ]);
        assert!(driver_version(&parts).is_some());
        assert_eq!(
            mig_counts(&labels(&[("nvidia.com/mig-1g.10gb.me.count", "1")])),
            BTreeMap::from([("1g.10gb+me".to_string(), 1)])
        );
    }
}
