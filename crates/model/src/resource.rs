//! The names of the NVIDIA extended resources pods request and nodes advertise, written once.
//!
//! Sources:
//! - NVIDIA k8s-device-plugin `api/config/v1` (`resources.go`, `replicas.go`): the whole-GPU resource
//!   `nvidia.com/gpu`; the mixed MIG strategy's `nvidia.com/mig-<profile>` (profile with `+` written as
//!   `.`, see [`crate::catalogue::plugin_profile`]); `renameByDefault` appends `.shared` to a shared
//!   resource. Only `nvidia.com/gpu` and `nvidia.com/mig-<profile>` can be shared.
//! - Project-HAMi/HAMi `docs/config.md`: `nvidia.com/gpumem`, `nvidia.com/gpumem-percentage`,
//!   `nvidia.com/gpucores` (memory and core limits of a vGPU, next to `nvidia.com/gpu`).
//! - GKE's device plugin (GoogleCloudPlatform/container-engine-accelerators `pkg/gpu/nvidia`) also
//!   advertises `nvidia.com/gpu`, for whole GPUs, MIG partitions and time-shared replicas alike.

/// A whole GPU (or, under the single MIG strategy and on GKE partitions, a MIG instance).
pub const GPU: &str = "nvidia.com/gpu";
/// The suffix `renameByDefault` gives a shared resource.
pub const SHARED_SUFFIX: &str = ".shared";
/// `nvidia.com/gpu` renamed by `renameByDefault`.
pub const GPU_SHARED: &str = "nvidia.com/gpu.shared";
/// Prefix of the mixed MIG strategy's resources.
pub const MIG_PREFIX: &str = "nvidia.com/mig-";
/// HAMi: device memory of a vGPU, MiB.
pub const HAMI_MEMORY: &str = "nvidia.com/gpumem";
/// HAMi: device memory of a vGPU, percent of the GPU.
pub const HAMI_MEMORY_PERCENTAGE: &str = "nvidia.com/gpumem-percentage";
/// HAMi: share of the GPU's cores, percent.
pub const HAMI_CORES: &str = "nvidia.com/gpucores";
/// The HAMi resources that only exist on nodes HAMi registered.
pub const HAMI_RESOURCES: [&str; 3] = [HAMI_MEMORY, HAMI_MEMORY_PERCENTAGE, HAMI_CORES];

/// A device resource of the device plugin, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceResource<'a> {
    /// `nvidia.com/gpu`, or `nvidia.com/gpu.shared` when renamed.
    Gpu { shared: bool },
    /// `nvidia.com/mig-<profile>`, profile in the plugin's spelling (`1g.10gb.me`).
    Mig { profile: &'a str, shared: bool },
}

impl<'a> DeviceResource<'a> {
    /// Reads a resource name; `None` for anything that is not a device of the device plugin.
    pub fn parse(name: &'a str) -> Option<Self> {
        let (base, shared) = match name.strip_suffix(SHARED_SUFFIX) {
            Some(b) => (b, true),
            None => (name, false),
        };
        if base == GPU {
            return Some(DeviceResource::Gpu { shared });
        }
        base.strip_prefix(MIG_PREFIX)
            .map(|profile| DeviceResource::Mig { profile, shared })
    }

    pub fn is_mig(self) -> bool {
        matches!(self, DeviceResource::Mig { .. })
    }
}

/// Whether a resource is a device the NVIDIA device plugin hands out: `nvidia.com/gpu`,
/// `nvidia.com/gpu.shared` or `nvidia.com/mig-<profile>` (with `.shared` when renamed).
pub fn is_gpu_resource(name: &str) -> bool {
    DeviceResource::parse(name).is_some()
}

/// Whether a resource is a MIG instance of the mixed strategy.
pub fn is_mig_resource(name: &str) -> bool {
    DeviceResource::parse(name).is_some_and(DeviceResource::is_mig)
}

/// The resource a shared one was renamed from (`nvidia.com/gpu.shared` is `nvidia.com/gpu`): the name
/// the device plugin's sharing config lists.
pub fn base(name: &str) -> &str {
    name.strip_suffix(SHARED_SUFFIX).unwrap_or(name)
}

/// The MIG profile of a mixed-strategy resource, in the plugin's spelling, without `.shared`.
pub fn mig_profile(name: &str) -> Option<&str> {
    match DeviceResource::parse(name)? {
        DeviceResource::Mig { profile, .. } => Some(profile),
        DeviceResource::Gpu { .. } => None,
    }
}

/// Whether a node advertising `name` has NVIDIA GPUs behind it (device resources and HAMi's).
pub fn is_nvidia_gpu_resource(name: &str) -> bool {
    is_gpu_resource(name) || HAMI_RESOURCES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_resources_are_read_from_their_names() {
        assert_eq!(
            DeviceResource::parse("nvidia.com/gpu"),
            Some(DeviceResource::Gpu { shared: false })
        );
        assert_eq!(
            DeviceResource::parse("nvidia.com/gpu.shared"),
            Some(DeviceResource::Gpu { shared: true })
        );
        assert_eq!(
            DeviceResource::parse("nvidia.com/mig-1g.10gb.me.shared"),
            Some(DeviceResource::Mig {
                profile: "1g.10gb.me",
                shared: true
            })
        );
        for not in [
            "nvidia.com/gpumem",
            "nvidia.com/gpucores",
            "amd.com/gpu",
            "cpu",
        ] {
            assert!(!is_gpu_resource(not), "{not}");
        }
        assert!(is_nvidia_gpu_resource("nvidia.com/gpumem"));
        assert_eq!(base("nvidia.com/gpu.shared"), GPU);
        assert_eq!(
            mig_profile("nvidia.com/mig-3g.40gb.shared"),
            Some("3g.40gb")
        );
        assert!(is_mig_resource("nvidia.com/mig-3g.40gb"));
        assert!(!is_mig_resource(GPU_SHARED));
    }
}
