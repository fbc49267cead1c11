//! Reading NVIDIA GPU Feature Discovery (GFD) and the GPU Operator's node labels: the `nvidia.com/*`
//! labels both the GPU Operator and the device plugin's Helm chart put on GPU nodes. The label names and
//! their sources are in `gpu_trust_model::labels`.
//!
//! How they are read (k8s-device-plugin `internal/lm/resource.go`, `internal/lm/mig-strategy.go`):
//! MIG-enabled GPUs are labelled without sharing (`NewGPUResourceLabelerWithoutSharing`:
//! `nvidia.com/gpu.replicas=0`, `sharing-strategy=none`), so those two labels say nothing about
//! sharing on such a node; under the mixed strategy there is one set of `nvidia.com/mig-<profile>.*`
//! labels per profile present.

use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::SharingStrategy;
use gpu_trust_model::labels::{
    self as names, RESOURCE_COUNT, RESOURCE_PRODUCT, RESOURCE_REPLICAS, RESOURCE_SHARING,
};
use gpu_trust_model::resource::{self, MIG_PREFIX};
use gpu_trust_model::Version;
use std::collections::BTreeMap;

pub(crate) use gpu_trust_model::labels::{
    CC_MODE, CC_MODE_STATE, COUNT, DEVICE_PLUGIN_CONFIG, DRIVER_DEPRECATED, DRIVER_FULL,
    DRIVER_PARTS, MEMORY, MIG_CONFIG, MIG_CONFIG_STATE, MIG_STRATEGY, NFD_NVIDIA_PCI, PRESENT,
    PRODUCT, REPLICAS, SHARED_PRODUCT_SUFFIX, SHARING, SINGLE_MIG_PRODUCT_INFIX,
};

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
            let profile = k.strip_prefix(MIG_PREFIX)?.strip_suffix(RESOURCE_COUNT)?;
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
            Some(names::SHARING_TIME_SLICING) => SharingStrategy::TimeSlicing,
            Some(names::SHARING_MPS) => SharingStrategy::Mps,
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
            rest.strip_suffix(RESOURCE_REPLICAS)
                .or_else(|| rest.strip_suffix(RESOURCE_SHARING))
        })
        .collect();
    for p in profiles {
        let key =
            |suffix: &str| labels.get(&names::of_resource(&format!("{MIG_PREFIX}{p}"), suffix));
        let shared = key(RESOURCE_PRODUCT).is_some_and(|v| v.ends_with(SHARED_PRODUCT_SUFFIX));
        read(
            format!("{MIG_PREFIX}{p}"),
            key(RESOURCE_SHARING),
            key(RESOURCE_REPLICAS),
            shared,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::labels;

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
