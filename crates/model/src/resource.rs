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
//! - Whole GPUs passed through to a VM (Kata Containers, KubeVirt), see [`PASSTHROUGH_ALIAS`] and
//!   [`passthrough_model`]: NVIDIA's sandbox device plugin (NVIDIA/kubevirt-gpu-device-plugin
//!   `pkg/device_plugin/device_plugin.go`, `getDeviceName`, and `generic_device_plugin.go`:
//!   `nvidia.com/<name>`, the name the pci.ids database gives the GPU's device id, upper-cased, with
//!   `/`, `.` and blanks turned into `_` and other characters dropped; releases before the upper-casing
//!   kept the case, `nvidia.com/TU104GL_Tesla_T4` in its README). The GPU Operator's Kata mode gives
//!   every GPU the one name `nvidia.com/pgpu` unless `P_GPU_ALIAS` is set empty (NVIDIA
//!   cloud-native-docs, confidential-containers "Configuring the Sandbox Device Plugin to Use GPU or
//!   NVSwitch Specific Resource Types": `nvidia.com/pgpu`, or model names such as
//!   `nvidia.com/GH100_H100L_94GB`; NVSwitches are `nvidia.com/nvswitch`).

/// The domain of NVIDIA's extended resources (every name below starts with it).
pub const DOMAIN: &str = "nvidia.com/";
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

/// The one resource name the NVIDIA sandbox device plugin gives passed-through GPUs in the GPU
/// Operator's Kata mode (`P_GPU_ALIAS`).
pub const PASSTHROUGH_ALIAS: &str = "nvidia.com/pgpu";

/// The chip codes pci.ids names NVIDIA data-center GPUs with (`GA100`, `GH100`, `GB100`, `GV100GL`,
/// `TU104GL`, `AD102GL`...): the start of every name the sandbox device plugin gives a GPU.
const CHIP_PREFIXES: [&str; 9] = ["GA", "GB", "GH", "GV", "GP", "GK", "GM", "TU", "AD"];

/// Sandbox device plugin names of the catalogue's GPUs (the pci.ids database vendored by
/// NVIDIA/kubevirt-gpu-device-plugin `utils/pci.ids`, spelled by its `getDeviceName`; the
/// confidential-containers docs' `GH100_H200_141GB` is an older pci.ids name of the H200 SXM) and the
/// catalogue model each names. Names compare without regard to case.
const PASSTHROUGH_MODELS: &[(&str, &str)] = &[
    ("GA100_A100_SXM4_40GB", "A100-SXM4-40GB"),
    ("GA100_A800_SXM4_40GB", "A100-SXM4-40GB"),
    ("GA100_A100_PCIE_40GB", "A100-PCIE-40GB"),
    ("GA100_A800_40GB_PCIE", "A100-PCIE-40GB"),
    ("GA100_A100_SXM4_80GB", "A100-SXM4-80GB"),
    ("GA100_A800SXM480GB", "A100-SXM4-80GB"),
    ("GA100_A100_PCIE_80GB", "A100-PCIE-80GB"),
    ("GA100_A800_80GB_PCIE", "A100-PCIE-80GB"),
    ("GA100GL_A30_PCIE", "A30"),
    ("GH100_H100_SXM5_80GB", "H100-SXM5-80GB"),
    ("GH100_H800", "H100-SXM5-80GB"),
    ("GH100_H100_PCIE", "H100-PCIE-80GB"),
    ("GH100_H800_PCIE", "H100-PCIE-80GB"),
    ("GH100_H100L_94GB", "H100-NVL-94GB"),
    ("GH100_H800L_94GB", "H100-NVL-94GB"),
    ("GH100_H100_96GB", "H100-96GB"),
    ("GH100_GH200_120GB___480GB", "GH200-96GB"),
    ("GH100_H20", "H20"),
    ("GH100_GH200_144G_HBM3E", "GH200-144GB"),
    ("GH100_H200_SXM_141GB", "H200-SXM-141GB"),
    ("GH100_H200_141GB", "H200-SXM-141GB"),
    ("GH100_H200_NVL", "H200-NVL-141GB"),
    ("GB100_B200", "B200"),
    ("GB100_HGX_GB200", "GB200"),
    ("GV100GL_TESLA_V100_SXM2_16GB", "V100-SXM2-16GB"),
    ("GV100GL_TESLA_V100_SXM2_32GB", "V100-SXM2-32GB"),
    ("GV100GL_TESLA_V100_PCIE_16GB", "V100-PCIE-16GB"),
    ("GV100GL_TESLA_V100_PCIE_32GB", "V100-PCIE-32GB"),
    ("GV100GL_TESLA_V100S_PCIE_32GB", "V100S-PCIE-32GB"),
    ("TU104GL_TESLA_T4", "T4"),
    ("GA102GL_A10", "A10"),
    ("GA102GL_A10G", "A10G"),
    ("GA102GL_A40", "A40"),
    ("AD104GL_L4", "L4"),
    ("AD102GL_L40", "L40"),
    ("AD102GL_L40S", "L40S"),
    ("AD102GL_RTX_6000_ADA_GENERATION", "RTX-6000-ADA"),
];

/// Whether `name` is a whole GPU NVIDIA's sandbox device plugin passes through to a VM: the Kata
/// alias `nvidia.com/pgpu`, or `nvidia.com/` and a pci.ids GPU name (a chip code, then letters,
/// digits and `_`), which an NVSwitch's name is not.
pub fn is_passthrough(name: &str) -> bool {
    if name == PASSTHROUGH_ALIAS {
        return true;
    }
    let Some(device) = name.strip_prefix("nvidia.com/") else {
        return false;
    };
    let chip = CHIP_PREFIXES.iter().any(|p| {
        device
            .strip_prefix(p)
            .is_some_and(|rest| rest.len() >= 3 && rest[..3].bytes().all(|b| b.is_ascii_digit()))
    });
    chip && device
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !device.to_ascii_uppercase().contains("NVSWITCH")
}

/// The catalogue id of the GPU a passthrough resource names (`nvidia.com/GH100_H100_SXM5_80GB` is the
/// `H100-SXM5-80GB`); `None` for the alias and for names the table does not hold.
pub fn passthrough_model(name: &str) -> Option<&'static str> {
    let device = name.strip_prefix("nvidia.com/")?;
    PASSTHROUGH_MODELS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(device))
        .map(|(_, id)| *id)
}

/// A device resource of the device plugin, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceResource<'a> {
    /// `nvidia.com/gpu`, or `nvidia.com/gpu.shared` when renamed.
    Gpu { shared: bool },
    /// `nvidia.com/mig-<profile>`, profile in the plugin's spelling (`1g.10gb.me`).
    Mig { profile: &'a str, shared: bool },
    /// A whole GPU the sandbox device plugin passes through to a VM ([`is_passthrough`]).
    Passthrough,
}

impl<'a> DeviceResource<'a> {
    /// Reads a resource name; `None` for anything that is not a device of the device plugin.
    pub fn parse(name: &'a str) -> Option<Self> {
        if is_passthrough(name) {
            return Some(DeviceResource::Passthrough);
        }
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

/// Whether a resource is a device an NVIDIA device plugin hands out: `nvidia.com/gpu`,
/// `nvidia.com/gpu.shared` or `nvidia.com/mig-<profile>` (with `.shared` when renamed), or a GPU the
/// sandbox device plugin passes through.
pub fn is_gpu_resource(name: &str) -> bool {
    DeviceResource::parse(name).is_some()
}

/// Whether an extended resource's name says it is a GPU, or a share of one: `gpu` in its name
/// (`amd.com/gpu` in the Kubernetes documentation's "Schedule GPUs"; `aliyun.com/gpu-mem`,
/// AliyunContainerService/gpushare-scheduler-extender `pkg/utils/const.go`), `vcuda`
/// (tkestack/gpu-manager's `tencent.com/vcuda-core`), or a `mig-` device of any vendor. Whether
/// gpu-trust knows how the device is shared is another question
/// (`crate::isolation::Mechanism::maps_resource`).
pub fn names_gpu(name: &str) -> bool {
    let Some((domain, local)) = name.split_once('/') else {
        return false;
    };
    let (domain, local) = (domain.to_ascii_lowercase(), local.to_ascii_lowercase());
    domain.contains("gpu")
        || local.contains("gpu")
        || local.contains("vcuda")
        || local.starts_with("mig-")
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
        DeviceResource::Gpu { .. } | DeviceResource::Passthrough => None,
    }
}

/// A compute-instance profile in a mixed-strategy resource: `nvidia.com/mig-1c.3g.40gb` is one
/// compute instance (`1c`, its compute slices) of a `3g.40gb` GPU instance. Returns the compute
/// slices and the GPU instance's profile in the plugin's spelling; `None` for a GPU-instance profile
/// (`3g.40gb`, or `3c.3g.40gb`, whose one compute instance spans it).
///
/// Compute instances of one GPU instance share its memory and engines; only their
/// streaming multiprocessors are separate (NVIDIA Multi-Instance GPU User Guide, "Terminology":
/// "GPU Instance", "Compute Instance"). NVIDIA's device plugin advertises no such profile by default:
/// under the mixed strategy it names only profiles whose compute slices equal the GPU instance's
/// (k8s-device-plugin `internal/rm/rm.go`, `AddDefaultResourcesToConfig`: `info.C != info.G` is
/// skipped), and a MIG device no resource pattern matches stops it (`internal/rm/device_map.go`,
/// `buildMigDeviceMap`: "does not match any resource patterns"); mig-parted creates them
/// (`pkg/mig/config/known_configs.go`, `1c.3g.20gb`...), and a plugin config's `resources.mig`
/// can name them.
pub fn compute_instance(name: &str) -> Option<(u32, String)> {
    let profile = mig_profile(name)?;
    let (c, rest) = profile.split_once("c.")?;
    let c: u32 = c.parse().ok()?;
    let (g, _) = rest.split_once("g.")?;
    let g: u32 = g.parse().ok()?;
    (c < g).then(|| (c, rest.to_string()))
}

/// Whether a node advertising `name` has NVIDIA GPUs behind it (device resources and HAMi's).
pub fn is_nvidia_gpu_resource(name: &str) -> bool {
    is_gpu_resource(name) || HAMI_RESOURCES.contains(&name)
}

#[cfg(test)]
mod tests {

    /// A name that says GPU, whoever advertises it; devices of other kinds do not.
    #[test]
    fn names_that_say_gpu() {
        for yes in [
            "amd.com/gpu",
            "aliyun.com/gpu-mem",
            "k8s.amazonaws.com/vgpu",
            "tencent.com/vcuda-core",
            "gpu.intel.com/i915",
            "example.com/mig-1g.5gb",
            "nvidia.com/gpu",
        ] {
            assert!(names_gpu(yes), "{yes}");
        }
        for no in [
            "rdma/rdma_shared_device_a",
            "nvidia.com/hostdev",
            "hugepages-2Mi",
            "xilinx.com/fpga",
        ] {
            assert!(!names_gpu(no), "{no}");
        }
    }

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

    #[test]
    fn compute_instance_profiles_name_their_gpu_instance() {
        assert_eq!(
            compute_instance("nvidia.com/mig-1c.3g.40gb"),
            Some((1, "3g.40gb".to_string()))
        );
        assert_eq!(
            compute_instance("nvidia.com/mig-2c.4g.20gb.shared"),
            Some((2, "4g.20gb".to_string()))
        );
        for not in [
            "nvidia.com/mig-3g.40gb",
            "nvidia.com/mig-3c.3g.40gb",
            "nvidia.com/mig-1g.10gb.me",
            GPU,
        ] {
            assert_eq!(compute_instance(not), None, "{not}");
        }
    }

    #[test]
    fn passed_through_gpus_are_read_from_the_sandbox_device_plugin_names() {
        for name in [
            "nvidia.com/pgpu",
            "nvidia.com/GH100_H100_SXM5_80GB",
            "nvidia.com/GH100_H100L_94GB",
            "nvidia.com/TU104GL_Tesla_T4",
            "nvidia.com/GP102GL_Tesla_P40",
        ] {
            assert_eq!(
                DeviceResource::parse(name),
                Some(DeviceResource::Passthrough),
                "{name}"
            );
            assert!(is_gpu_resource(name) && !is_mig_resource(name));
        }
        for not in [
            "nvidia.com/nvswitch",
            "nvidia.com/GH100_H100_NVSWITCH",
            "nvidia.com/GRID_T4-1Q",
            "nvidia.com/hostdev",
            "nvidia.com/GH100_H100.shared",
        ] {
            assert!(!is_passthrough(not), "{not}");
        }
        assert_eq!(
            passthrough_model("nvidia.com/GH100_H100_SXM5_80GB"),
            Some("H100-SXM5-80GB")
        );
        assert_eq!(passthrough_model("nvidia.com/TU104GL_Tesla_T4"), Some("T4"));
        assert_eq!(passthrough_model(PASSTHROUGH_ALIAS), None);
        for (name, id) in PASSTHROUGH_MODELS {
            assert!(crate::catalogue::lookup(id).is_some(), "{name} -> {id}");
            assert!(is_passthrough(&format!("nvidia.com/{name}")), "{name}");
        }
    }
}
