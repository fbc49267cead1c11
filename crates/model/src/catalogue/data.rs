//! The catalogue's data: one entry per GPU model and one profile table per MIG geometry.
//!
//! Sources, cited per entry below:
//! - [DRV] NVIDIA Linux driver README "Supported NVIDIA GPU products" (open-gpu-kernel-modules), and the
//!   nvidia-installer device list for Volta/Turing parts: product names and PCI device ids.
//! - [SMI] `nvidia-smi` total memory of the product (ECC on, R535 and later drivers; ECC off shows more,
//!   e.g. L40 49140 MiB), as printed in public logs of real machines.
//! - [MIG] NVIDIA MIG User Guide: supported GPUs (compute capability) and "Supported MIG Profiles"
//!   (profile names, fraction of memory and SMs, instance counts).
//! - [LGIPP] Real `nvidia-smi mig -lgipp` listings on A100-40GB, H100 80GB and H100 NVL
//!   (`{0..6}:1`, `{0,2,4,6}:2`, `{0,2,4}:2`, `{0,4}:4`, `{0}:4`, `{0}:8`) and on A30 (`{0..3}:1`,
//!   `{0,2}:2`, `{0}:4`); the MIG User Guide documents the same placement diagrams for the other parts.
//! - [PARTED] NVIDIA mig-parted default config (`deployments/systemd/config-default.yaml`): profile names
//!   per `device-filter`, including B300 and GB300.
//! - [CC] NVIDIA Confidential Containers "Supported Platforms": H100/H200 single GPU (multi-GPU only as
//!   protected PCIe), B200 and HGX B300 single and multi GPU, RTX Pro 6000 BSE single GPU.

use super::{
    Architecture, CcSupport, ComputeCapability, GpuModel, MemoryBasis, MigGeometry, MigProfile,
    PciDeviceId, ProfileVariant, UnmodelledMig,
};

// Total memory per product, MiB [SMI]. Each figure is used by the model entry and, for MIG parts
// without a real profile listing, by the derived profile memory.
const A100_40GB_MIB: u64 = 40960;
const A100_80GB_MIB: u64 = 81920;
const A30_MIB: u64 = 24576;
const H100_80GB_MIB: u64 = 81559;
const H100_NVL_MIB: u64 = 95830;
/// GH200 480GB/120GB and H20 print 97871 MiB; the H100 96GB board (0x233D) is assumed to match.
const GH100_96GB_MIB: u64 = 97871;
/// CUDA-reported total (153008209920 bytes); no nvidia-smi figure was found, which is never lower.
const GH200_144GB_MIB: u64 = 145920;
const H200_MIB: u64 = 143771;
const B200_MIB: u64 = 183359;
const GB200_MIB: u64 = 189471;
const B300_MIB: u64 = 275040;
const GB300_MIB: u64 = 284208;
/// RTX PRO 6000 Blackwell Server Edition: 97887 MiB in public `nvidia-smi` logs (drivers 575 to 595).
const RTX_PRO_6000_MIB: u64 = 97887;

/// Memory of an instance by memory slices occupied (of 8): 1, 2, 4, 8.
#[derive(Clone, Copy)]
struct SliceMemory {
    mib: [u64; 4],
    basis: MemoryBasis,
}

/// Figures read from a real listing: nvidia-smi prints GiB with two decimals (9.62 is 9.625 GiB).
const fn measured(one: u64, two: u64, four: u64, eight: u64) -> SliceMemory {
    SliceMemory {
        mib: [one, two, four, eight],
        basis: MemoryBasis::Measured,
    }
}

/// The conservative rule of the module documentation, per mille: 900, 910, 960, 970.
const fn derived(total_mib: u64) -> SliceMemory {
    SliceMemory {
        mib: [
            derived_mib(total_mib, 1, 8),
            derived_mib(total_mib, 2, 8),
            derived_mib(total_mib, 4, 8),
            derived_mib(total_mib, 8, 8),
        ],
        basis: MemoryBasis::Derived,
    }
}

/// `floor(total * slices / slices_per_gpu * f)`, `f` by the instance's share of the GPU in eighths.
pub(crate) const fn derived_mib(total_mib: u64, slices: u8, slices_per_gpu: u8) -> u64 {
    let eighths = slices as u64 * 8 / slices_per_gpu as u64;
    let per_mille = match eighths {
        0 | 1 => 900,
        2 | 3 => 910,
        4..=7 => 960,
        _ => 970,
    };
    total_mib * slices as u64 * per_mille / (slices_per_gpu as u64 * 1000)
}

// Placements [LGIPP].
const STARTS_0_TO_6: &[u8] = &[0, 1, 2, 3, 4, 5, 6];
const STARTS_EVEN: &[u8] = &[0, 2, 4, 6];
const STARTS_0_2_4: &[u8] = &[0, 2, 4];
const STARTS_0_4: &[u8] = &[0, 4];
const STARTS_0: &[u8] = &[0];
const STARTS_0_TO_3: &[u8] = &[0, 1, 2, 3];
const STARTS_0_2: &[u8] = &[0, 2];

/// nvidia-smi profile ids of the 8-slice parts, in table order, where listings were found.
const EIGHT_SLICE_IDS: [u16; 7] = [19, 20, 15, 14, 9, 5, 0];

/// Variant, compute slices, memory slices, index into `SliceMemory::mib`, max count, starts.
type Shape = (ProfileVariant, u8, u8, usize, u8, &'static [u8]);

/// The seven profiles of an 8-memory-slice, 7-compute-slice part, in the order
/// `1g`, `1g+me`, `1g` on two slices, `2g`, `3g`, `4g`, `7g`, with the maximum counts 7/1/4/3/2/1/1
/// and placements every such part shares [MIG] [LGIPP].
const fn eight_slice(
    names: [&'static str; 7],
    memory: SliceMemory,
    sms: Option<[u16; 7]>,
    with_ids: bool,
) -> [MigProfile; 7] {
    let shape: [Shape; 7] = [
        (ProfileVariant::Standard, 1, 1, 0, 7, STARTS_0_TO_6),
        (ProfileVariant::MediaExtensions, 1, 1, 0, 1, STARTS_0_TO_6),
        (ProfileVariant::ExtraMemory, 1, 2, 1, 4, STARTS_EVEN),
        (ProfileVariant::Standard, 2, 2, 1, 3, STARTS_0_2_4),
        (ProfileVariant::Standard, 3, 4, 2, 2, STARTS_0_4),
        (ProfileVariant::Standard, 4, 4, 2, 1, STARTS_0),
        (ProfileVariant::Standard, 7, 8, 3, 1, STARTS_0),
    ];
    let mut out = [const { empty_profile() }; 7];
    let mut i = 0;
    while i < 7 {
        let (variant, compute_slices, memory_slices, mem, max_count, starts) = shape[i];
        out[i] = MigProfile {
            name: names[i],
            profile_id: if with_ids {
                Some(EIGHT_SLICE_IDS[i])
            } else {
                None
            },
            variant,
            compute_slices,
            memory_slices,
            memory_mib: memory.mib[mem],
            memory_basis: memory.basis,
            sms: match sms {
                Some(s) => Some(s[i]),
                None => None,
            },
            max_count,
            starts,
        };
        i += 1;
    }
    out
}

const fn empty_profile() -> MigProfile {
    MigProfile {
        name: "",
        profile_id: None,
        variant: ProfileVariant::Standard,
        compute_slices: 0,
        memory_slices: 0,
        memory_mib: 0,
        memory_basis: MemoryBasis::Derived,
        sms: None,
        max_count: 0,
        starts: &[],
    }
}

const fn geometry(profiles: &'static [MigProfile], source: &'static str) -> MigGeometry {
    MigGeometry {
        memory_slices: 8,
        compute_slices: 7,
        profiles,
        source,
    }
}

/// SMs per profile on A100 (both memory sizes): MIG User Guide listings, 14 per compute slice, 98 in all.
const A100_SMS: [u16; 7] = [14, 14, 14, 28, 42, 56, 98];
/// SMs per profile on GH100 parts with 132 SMs (H100 80GB, H100 NVL, GH200 96GB listings).
const GH100_SMS: [u16; 7] = [16, 16, 26, 32, 60, 64, 132];

// A100-40GB: MIG User Guide `nvidia-smi mig -lgip` on A100-SXM4-40GB: 4.75 / 9.62 / 19.50 / 39.25 GiB.
static A100_40GB_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.5gb",
        "1g.5gb+me",
        "1g.10gb",
        "2g.10gb",
        "3g.20gb",
        "4g.20gb",
        "7g.40gb",
    ],
    measured(4864, 9856, 19968, 40192),
    Some(A100_SMS),
    true,
);
static A100_40GB_MIG: MigGeometry = geometry(
    &A100_40GB_PROFILES,
    "MIG User Guide A100 profiles and -lgip listing (A100-SXM4-40GB); -lgipp placements",
);

// A100-80GB: k8s-device-plugin README on A100 80GB PCIe, GFD labels `mig-1g.10gb.memory=9728`,
// `mig-2g.20gb.memory=19968`, `mig-3g.40gb.memory=40192`, and -lgip `7g.80gb` 79.00 GiB; `1g.20gb`
// occupies the same two slices as `2g.20gb`.
static A100_80GB_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.10gb",
        "1g.10gb+me",
        "1g.20gb",
        "2g.20gb",
        "3g.40gb",
        "4g.40gb",
        "7g.80gb",
    ],
    measured(9728, 19968, 40192, 80896),
    Some(A100_SMS),
    true,
);
static A100_80GB_MIG: MigGeometry = geometry(
    &A100_80GB_PROFILES,
    "MIG User Guide A100 profiles; k8s-device-plugin README MIG labels (A100 80GB PCIe); -lgipp placements",
);

// H100 80GB: real -lgip on H100 80GB HBM3: 9.75 / 19.62 / 39.50 / 79.25 GiB.
static H100_80GB_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.10gb",
        "1g.10gb+me",
        "1g.20gb",
        "2g.20gb",
        "3g.40gb",
        "4g.40gb",
        "7g.80gb",
    ],
    measured(9984, 20096, 40448, 81152),
    Some(GH100_SMS),
    true,
);
static H100_80GB_MIG: MigGeometry = geometry(
    &H100_80GB_PROFILES,
    "nvidia-smi mig -lgip / -lgipp on H100 80GB HBM3; MIG User Guide H100 profiles",
);

// H100 NVL: real -lgip listings 10.62 / 21.50 / 46.12 / 92.62 GiB (another driver prints 10.75 /
// 21.62: the lower figures are kept).
static H100_NVL_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.12gb",
        "1g.12gb+me",
        "1g.24gb",
        "2g.24gb",
        "3g.47gb",
        "4g.47gb",
        "7g.94gb",
    ],
    measured(10880, 22016, 47232, 94848),
    Some(GH100_SMS),
    true,
);
static H100_NVL_MIG: MigGeometry = geometry(
    &H100_NVL_PROFILES,
    "nvidia-smi mig -lgip / -lgipp on H100 NVL; mig-parted config (H100 NVL, H800 NVL)",
);

// GH200 96GB: real -lgip on GH200 480GB: 11.00 / 23.00 / 46.50 / 93.00 GiB, ids 19/20/15/14/9/5/0.
static GH100_96GB_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.12gb",
        "1g.12gb+me",
        "1g.24gb",
        "2g.24gb",
        "3g.48gb",
        "4g.48gb",
        "7g.96gb",
    ],
    measured(11264, 23552, 47616, 95232),
    Some(GH100_SMS),
    true,
);
static GH100_96GB_MIG: MigGeometry = geometry(
    &GH100_96GB_PROFILES,
    "nvidia-smi mig -lgip on GH200 480GB; mig-parted config (GH200)",
);

// H100 96GB and H20: the GH200 96GB profile names [PARTED] (one device-filter group), but no listing
// of their own was found: memory derived, SMs unknown (H20 has fewer SMs than H100).
static GH100_96GB_DERIVED_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.12gb",
        "1g.12gb+me",
        "1g.24gb",
        "2g.24gb",
        "3g.48gb",
        "4g.48gb",
        "7g.96gb",
    ],
    derived(GH100_96GB_MIB),
    None,
    false,
);
static GH100_96GB_DERIVED_MIG: MigGeometry = geometry(
    &GH100_96GB_DERIVED_PROFILES,
    "mig-parted config (H100-96GB, PG506-96GB, GH200, H20 share one device-filter)",
);

// The remaining parts: profile names and counts [MIG] [PARTED], memory derived, ids and SMs not
// found in a real listing.
static GH200_144GB_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.18gb",
        "1g.18gb+me",
        "1g.36gb",
        "2g.36gb",
        "3g.72gb",
        "4g.72gb",
        "7g.144gb",
    ],
    derived(GH200_144GB_MIB),
    None,
    false,
);
static GH200_144GB_MIG: MigGeometry = geometry(
    &GH200_144GB_PROFILES,
    "mig-parted config (GH200 144G HBM3e); MIG User Guide placements",
);

static H200_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.18gb",
        "1g.18gb+me",
        "1g.35gb",
        "2g.35gb",
        "3g.71gb",
        "4g.71gb",
        "7g.141gb",
    ],
    derived(H200_MIB),
    None,
    false,
);
static H200_MIG: MigGeometry = geometry(
    &H200_PROFILES,
    "MIG User Guide H200 141GB profiles; mig-parted config (H200 141GB, H200 NVL)",
);

static B200_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.23gb",
        "1g.23gb+me",
        "1g.45gb",
        "2g.45gb",
        "3g.90gb",
        "4g.90gb",
        "7g.180gb",
    ],
    derived(B200_MIB),
    None,
    false,
);
static B200_MIG: MigGeometry = geometry(
    &B200_PROFILES,
    "MIG User Guide B200 180GB profiles; mig-parted config (B200)",
);

static GB200_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.23gb",
        "1g.23gb+me",
        "1g.47gb",
        "2g.47gb",
        "3g.93gb",
        "4g.93gb",
        "7g.186gb",
    ],
    derived(GB200_MIB),
    None,
    false,
);
static GB200_MIG: MigGeometry = geometry(
    &GB200_PROFILES,
    "mig-parted config (GB200 HGX; 1g.23gb and its +me variant shared with B200)",
);

static B300_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.34gb",
        "1g.34gb+me",
        "1g.67gb",
        "2g.67gb",
        "3g.135gb",
        "4g.135gb",
        "7g.269gb",
    ],
    derived(B300_MIB),
    None,
    false,
);
static B300_MIG: MigGeometry = geometry(
    &B300_PROFILES,
    "mig-parted config (B300, device-filter 0x318210DE)",
);

static GB300_PROFILES: [MigProfile; 7] = eight_slice(
    [
        "1g.35gb",
        "1g.35gb+me",
        "1g.70gb",
        "2g.70gb",
        "3g.139gb",
        "4g.139gb",
        "7g.278gb",
    ],
    derived(GB300_MIB),
    None,
    false,
);
static GB300_MIG: MigGeometry = geometry(
    &GB300_PROFILES,
    "mig-parted config (GB300, device-filter 0x31C210DE)",
);

// A30: 4 memory and 4 compute slices. Real -lgip / -lgipp: 1g.6gb (id 14) and 1g.6gb+me (21)
// 5.81 GiB {0,1,2,3}:1, 2g.12gb (5) and 2g.12gb+me (6) 11.69 GiB {0,2}:2, 4g.24gb (0) 23.44 GiB {0}:4
// (another listing prints 23.50); SMs 14/14/28/28/56.
static A30_PROFILES: [MigProfile; 5] = [
    MigProfile {
        name: "1g.6gb",
        profile_id: Some(14),
        variant: ProfileVariant::Standard,
        compute_slices: 1,
        memory_slices: 1,
        memory_mib: 5952,
        memory_basis: MemoryBasis::Measured,
        sms: Some(14),
        max_count: 4,
        starts: STARTS_0_TO_3,
    },
    MigProfile {
        name: "1g.6gb+me",
        profile_id: Some(21),
        variant: ProfileVariant::MediaExtensions,
        compute_slices: 1,
        memory_slices: 1,
        memory_mib: 5952,
        memory_basis: MemoryBasis::Measured,
        sms: Some(14),
        max_count: 1,
        starts: STARTS_0_TO_3,
    },
    MigProfile {
        name: "2g.12gb",
        profile_id: Some(5),
        variant: ProfileVariant::Standard,
        compute_slices: 2,
        memory_slices: 2,
        memory_mib: 11968,
        memory_basis: MemoryBasis::Measured,
        sms: Some(28),
        max_count: 2,
        starts: STARTS_0_2,
    },
    MigProfile {
        name: "2g.12gb+me",
        profile_id: Some(6),
        variant: ProfileVariant::MediaExtensions,
        compute_slices: 2,
        memory_slices: 2,
        memory_mib: 11968,
        memory_basis: MemoryBasis::Measured,
        sms: Some(28),
        max_count: 1,
        starts: STARTS_0_2,
    },
    MigProfile {
        name: "4g.24gb",
        profile_id: Some(0),
        variant: ProfileVariant::Standard,
        compute_slices: 4,
        memory_slices: 4,
        memory_mib: 24000,
        memory_basis: MemoryBasis::Measured,
        sms: Some(56),
        max_count: 1,
        starts: STARTS_0,
    },
];
// RTX PRO 6000 Blackwell: 4 memory and 4 compute slices; the profiles of [PARTED]'s `device-filter`
// 0x2BB510DE and its `all-*` configs (1g.24gb, 2g.48gb, 4g.96gb and their `+gfx`, `-me` and `+me.all`
// variants, counts 4/2/1, `+me.all` once per GPU); the MIG User Guide's "Supported GPUs" lists 96 GB and
// at most 4 instances. No `-lgip` listing was found: memory derived, ids and SMs unknown, placements
// those of the other 4-slice part (A30: {0..3}:1, {0,2}:2, {0}:4).
const fn rtx_pro_6000(
    name: &'static str,
    variant: ProfileVariant,
    slices: u8,
    max_count: u8,
    starts: &'static [u8],
) -> MigProfile {
    MigProfile {
        name,
        profile_id: None,
        variant,
        compute_slices: slices,
        memory_slices: slices,
        memory_mib: derived_mib(RTX_PRO_6000_MIB, slices, 4),
        memory_basis: MemoryBasis::Derived,
        sms: None,
        max_count,
        starts,
    }
}
static RTX_PRO_6000_PROFILES: [MigProfile; 10] = [
    rtx_pro_6000("1g.24gb", ProfileVariant::Standard, 1, 4, STARTS_0_TO_3),
    rtx_pro_6000(
        "1g.24gb+gfx",
        ProfileVariant::Attribute,
        1,
        4,
        STARTS_0_TO_3,
    ),
    rtx_pro_6000("1g.24gb-me", ProfileVariant::Attribute, 1, 4, STARTS_0_TO_3),
    rtx_pro_6000(
        "1g.24gb+me.all",
        ProfileVariant::MediaExtensions,
        1,
        1,
        STARTS_0_TO_3,
    ),
    rtx_pro_6000("2g.48gb", ProfileVariant::Standard, 2, 2, STARTS_0_2),
    rtx_pro_6000("2g.48gb+gfx", ProfileVariant::Attribute, 2, 2, STARTS_0_2),
    rtx_pro_6000("2g.48gb-me", ProfileVariant::Attribute, 2, 2, STARTS_0_2),
    rtx_pro_6000(
        "2g.48gb+me.all",
        ProfileVariant::MediaExtensions,
        2,
        1,
        STARTS_0_2,
    ),
    rtx_pro_6000("4g.96gb", ProfileVariant::Standard, 4, 1, STARTS_0),
    rtx_pro_6000("4g.96gb+gfx", ProfileVariant::Attribute, 4, 1, STARTS_0),
];
static RTX_PRO_6000_MIG: MigGeometry = MigGeometry {
    memory_slices: 4,
    compute_slices: 4,
    profiles: &RTX_PRO_6000_PROFILES,
    source: "mig-parted config (RTX PRO 6000 Blackwell, device-filter 0x2BB510DE); MIG User Guide supported GPUs (96 GB, 4 instances)",
};
static A30_MIG: MigGeometry = MigGeometry {
    memory_slices: 4,
    compute_slices: 4,
    profiles: &A30_PROFILES,
    source: "nvidia-smi mig -lgip / -lgipp on A30; MIG User Guide A30-24GB profiles",
};

const fn cc(major: u8, minor: u8) -> ComputeCapability {
    ComputeCapability { major, minor }
}

const fn pci(device: u16) -> PciDeviceId {
    PciDeviceId::nvidia(device)
}

/// Number of catalogue entries.
pub const MODEL_COUNT: usize = 33;

/// The catalogue, data-centre MIG parts first (by generation), then parts without MIG.
pub static MODELS: [GpuModel; MODEL_COUNT] = [
    GpuModel {
        id: "A100-SXM4-40GB",
        display_name: "NVIDIA A100-SXM4-40GB",
        memory_mib: A100_40GB_MIB,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 0),
        // A800-SXM4-40GB (0x20BD) is the same part under another name; mig-parted filters it with A100-40GB.
        pci_device_ids: &[pci(0x20B0), pci(0x20BD)],
        // Older drivers (R450 in a captured `nvidia-smi -a`) name it without the `NVIDIA ` prefix.
        product_labels: &["NVIDIA-A100-SXM4-40GB", "A100-SXM4-40GB", "NVIDIA-A800-SXM4-40GB"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&A100_40GB_MIG),
        source: "[DRV] 0x20B0 NVIDIA A100-SXM4-40GB; [SMI] 40960 MiB; [MIG] cc 8.0",
    },
    GpuModel {
        id: "A100-PCIE-40GB",
        display_name: "NVIDIA A100-PCIE-40GB",
        memory_mib: A100_40GB_MIB,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 0),
        // A800 40GB Active (0x20F6) is filtered with A100-40GB by mig-parted, as is 0x20B1, which
        // the driver README of the open kernel modules' first release (May 2022) names "NVIDIA
        // A100-PCIE-40GB" (subsystem 10DE 145F, as 0x20F1); later READMEs no longer list it.
        pci_device_ids: &[pci(0x20F1), pci(0x20F6), pci(0x20B1)],
        product_labels: &["NVIDIA-A100-PCIE-40GB", "A100-PCIE-40GB", "NVIDIA-A800-40GB-Active"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&A100_40GB_MIG),
        source: "[DRV] 0x20F1 (and, in May 2022, 0x20B1) NVIDIA A100-PCIE-40GB; [PARTED] A100-40GB filter 0x20B0, 0x20B1, 0x20F1, 0x20F6; [SMI] 40960 MiB; [MIG] cc 8.0",
    },
    GpuModel {
        id: "A100-SXM4-80GB",
        display_name: "NVIDIA A100-SXM4-80GB",
        memory_mib: A100_80GB_MIB,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 0),
        pci_device_ids: &[pci(0x20B2), pci(0x20F3)],
        product_labels: &["NVIDIA-A100-SXM4-80GB", "NVIDIA-A800-SXM4-80GB"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&A100_80GB_MIG),
        source: "[DRV] 0x20B2 NVIDIA A100-SXM4-80GB, 0x20F3 A800-SXM4-80GB; [SMI] 81920 MiB; [MIG] cc 8.0",
    },
    GpuModel {
        id: "A100-PCIE-80GB",
        display_name: "NVIDIA A100 80GB PCIe",
        memory_mib: A100_80GB_MIB,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 0),
        pci_device_ids: &[pci(0x20B5), pci(0x20F5)],
        // GFD label as printed in the k8s-device-plugin README: `NVIDIA-A100-80GB-PCIe`.
        product_labels: &["NVIDIA-A100-80GB-PCIe", "NVIDIA-A800-80GB-PCIe"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&A100_80GB_MIG),
        source: "[DRV] 0x20B5 NVIDIA A100 80GB PCIe, 0x20F5 A800 80GB PCIe; k8s-device-plugin README labels",
    },
    GpuModel {
        id: "A30",
        display_name: "NVIDIA A30",
        memory_mib: A30_MIB,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 0),
        pci_device_ids: &[pci(0x20B7)],
        product_labels: &["NVIDIA-A30"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&A30_MIG),
        source: "[DRV] 0x20B7 NVIDIA A30; [SMI] 24576 MiB; [MIG] cc 8.0, 4 instances",
    },
    GpuModel {
        id: "H100-SXM5-80GB",
        display_name: "NVIDIA H100 80GB HBM3",
        memory_mib: H100_80GB_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        // H800 (0x2324) is the export variant; mig-parted configures it with H100-80GB.
        pci_device_ids: &[pci(0x2330), pci(0x2324)],
        product_labels: &["NVIDIA-H100-80GB-HBM3", "NVIDIA-H800"],
        confidential_computing: CcSupport::SingleGpuOrProtectedPcie,
        mig: Some(&H100_80GB_MIG),
        source: "[DRV] 0x2330 NVIDIA H100 80GB HBM3, 0x2324 NVIDIA H800; [SMI] 81559 MiB; [MIG] cc 9.0; [CC]",
    },
    GpuModel {
        id: "H100-PCIE-80GB",
        display_name: "NVIDIA H100 PCIe",
        memory_mib: H100_80GB_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x2331), pci(0x2322)],
        product_labels: &["NVIDIA-H100-PCIe", "NVIDIA-H800-PCIe"],
        confidential_computing: CcSupport::SingleGpuOrProtectedPcie,
        mig: Some(&H100_80GB_MIG),
        source: "[DRV] 0x2331 NVIDIA H100 PCIe, 0x2322 NVIDIA H800 PCIe; [SMI] 81559 MiB; [MIG] cc 9.0; [CC]",
    },
    GpuModel {
        id: "H100-NVL-94GB",
        display_name: "NVIDIA H100 NVL",
        memory_mib: H100_NVL_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x2321), pci(0x233A)],
        product_labels: &["NVIDIA-H100-NVL", "NVIDIA-H800-NVL"],
        confidential_computing: CcSupport::SingleGpuOrProtectedPcie,
        mig: Some(&H100_NVL_MIG),
        source: "[DRV] 0x2321 NVIDIA H100 NVL, 0x233A NVIDIA H800 NVL; [SMI] 95830 MiB; [MIG] cc 9.0; [CC]",
    },
    GpuModel {
        id: "H100-96GB",
        display_name: "H100 96GB",
        memory_mib: GH100_96GB_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x233D)],
        // No product name or GFD label for this board was found; it is matched by PCI id.
        product_labels: &[],
        confidential_computing: CcSupport::SingleGpuOrProtectedPcie,
        mig: Some(&GH100_96GB_DERIVED_MIG),
        source: "[PARTED] 0x233D10DE \"H100-96GB\"; memory assumed equal to GH200 96GB; [CC] as H100",
    },
    GpuModel {
        id: "PG506-96GB",
        display_name: "NVIDIA PG506-232",
        memory_mib: GH100_96GB_MIB,
        // 0x20B6 is in the GA100 device range, beside the A100 parts [DRV]: Ampere, cc 8.0.
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 0),
        pci_device_ids: &[pci(0x20B6)],
        product_labels: &["NVIDIA-PG506-232", "NVIDIA-PG506-230"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&GH100_96GB_DERIVED_MIG),
        source: "[DRV] 0x20B6 NVIDIA PG506-230 / PG506-232; [PARTED] 0x20B610DE \"PG506-96GB\", configured with H100-96GB, GH200 and H20 (1g.12gb, 2g.24gb, 3g.48gb); memory assumed equal to GH200 96GB, as for H100-96GB",
    },
    GpuModel {
        id: "GH200-96GB",
        display_name: "NVIDIA GH200 480GB",
        memory_mib: GH100_96GB_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x2342)],
        // 480GB and 120GB name the superchip's CPU memory; the GPU has 96GB HBM3 in both.
        product_labels: &["NVIDIA-GH200-480GB", "NVIDIA-GH200-120GB"],
        // [CC] does not list GH200.
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&GH100_96GB_MIG),
        source: "[DRV] 0x2342 NVIDIA GH200 480GB / 120GB; [SMI] 97871 MiB; [MIG] H100 on GH200, cc 9.0",
    },
    GpuModel {
        id: "H20",
        display_name: "NVIDIA H20",
        memory_mib: GH100_96GB_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x2329)],
        product_labels: &["NVIDIA-H20"],
        // [CC] does not list H20.
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&GH100_96GB_DERIVED_MIG),
        source: "[DRV] 0x2329 NVIDIA H20; [SMI] 97871 MiB; [MIG] H20 96GB cc 9.0",
    },
    GpuModel {
        id: "GH200-144GB",
        display_name: "NVIDIA GH200 144G HBM3e",
        memory_mib: GH200_144GB_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x2348)],
        product_labels: &["NVIDIA-GH200-144G-HBM3e"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&GH200_144GB_MIG),
        source: "[DRV] 0x2348 NVIDIA GH200 144G HBM3e; CUDA total 153008209920 bytes; cc 9.0",
    },
    GpuModel {
        id: "H200-SXM-141GB",
        display_name: "NVIDIA H200",
        memory_mib: H200_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x2335)],
        product_labels: &["NVIDIA-H200"],
        confidential_computing: CcSupport::SingleGpuOrProtectedPcie,
        mig: Some(&H200_MIG),
        source: "[DRV] 0x2335 NVIDIA H200; [SMI] 143771 MiB; [MIG] H200-SXM5 cc 9.0; [CC]",
    },
    GpuModel {
        id: "H200-NVL-141GB",
        display_name: "NVIDIA H200 NVL",
        memory_mib: H200_MIB,
        architecture: Architecture::Hopper,
        compute_capability: cc(9, 0),
        pci_device_ids: &[pci(0x233B)],
        product_labels: &["NVIDIA-H200-NVL"],
        confidential_computing: CcSupport::SingleGpuOrProtectedPcie,
        mig: Some(&H200_MIG),
        source: "[DRV] 0x233B NVIDIA H200 NVL; [SMI] 143771 MiB; [MIG] H200 NVL cc 9.0; [CC]",
    },
    GpuModel {
        id: "B200",
        display_name: "NVIDIA B200",
        memory_mib: B200_MIB,
        architecture: Architecture::Blackwell,
        compute_capability: cc(10, 0),
        pci_device_ids: &[pci(0x2901)],
        product_labels: &["NVIDIA-B200"],
        confidential_computing: CcSupport::SingleAndMultiGpu,
        mig: Some(&B200_MIG),
        source: "[DRV] 0x2901 NVIDIA B200; [SMI] 183359 MiB; [MIG] B200 cc 10.0; [CC]",
    },
    GpuModel {
        id: "GB200",
        display_name: "NVIDIA GB200",
        memory_mib: GB200_MIB,
        architecture: Architecture::Blackwell,
        compute_capability: cc(10, 0),
        pci_device_ids: &[pci(0x2941)],
        product_labels: &["NVIDIA-GB200"],
        // [CC] does not list GB200.
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&GB200_MIG),
        source: "[DRV] 0x2941 NVIDIA GB200; [SMI] 189471 MiB; [MIG] GB200 cc 10.0",
    },
    GpuModel {
        id: "B300",
        display_name: "NVIDIA B300 SXM6 AC",
        memory_mib: B300_MIB,
        architecture: Architecture::Blackwell,
        compute_capability: cc(10, 3),
        pci_device_ids: &[pci(0x3182)],
        product_labels: &["NVIDIA-B300-SXM6-AC"],
        confidential_computing: CcSupport::SingleAndMultiGpu,
        mig: Some(&B300_MIG),
        source: "[DRV] 0x3182 NVIDIA B300 SXM6 AC; [SMI] 275040 MiB; cc 10.3 (sm_103); [CC] HGX B300",
    },
    GpuModel {
        id: "GB300",
        display_name: "NVIDIA GB300",
        memory_mib: GB300_MIB,
        architecture: Architecture::Blackwell,
        compute_capability: cc(10, 3),
        pci_device_ids: &[pci(0x31C2), pci(0x31C3)],
        product_labels: &["NVIDIA-GB300"],
        confidential_computing: CcSupport::Unsupported,
        mig: Some(&GB300_MIG),
        source: "[DRV] 0x31C2, 0x31C3 NVIDIA GB300; [SMI] 284208 MiB; cc 10.3 (sm_103)",
    },
    // RTX PRO Blackwell with MIG [MIG]: the 6000 Server Edition, the one RTX PRO part [PARTED]'s
    // default config has profiles for. The other MIG products of the guide are in
    // `UNMODELLED_MIG`, known by name.
    GpuModel {
        id: "RTX-PRO-6000-BSE",
        display_name: "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        memory_mib: RTX_PRO_6000_MIB,
        architecture: Architecture::Blackwell,
        compute_capability: cc(12, 0),
        pci_device_ids: &[pci(0x2BB5)],
        // GFD's product label: the NVML name with dashes, as public node selectors write it.
        product_labels: &["NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"],
        confidential_computing: CcSupport::SingleGpu,
        mig: Some(&RTX_PRO_6000_MIG),
        source: "[PARTED] 0x2BB510DE RTX PRO 6000 Blackwell; [SMI] 97887 MiB, cc 12.0; [MIG] 96GB, 4 instances; [CC] RTX Pro 6000 BSE single GPU",
    },
    // Parts without MIG [MIG]: Volta, Turing, and the Ampere/Ada parts outside the GA100 family.
    GpuModel {
        id: "V100-SXM2-16GB",
        display_name: "Tesla V100-SXM2-16GB",
        memory_mib: 16384,
        architecture: Architecture::Volta,
        compute_capability: cc(7, 0),
        pci_device_ids: &[pci(0x1DB1)],
        product_labels: &["Tesla-V100-SXM2-16GB"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] nvidia-installer 0x1DB1 Tesla V100-SXM2-16GB; [SMI] 16384 MiB",
    },
    GpuModel {
        id: "V100-SXM2-32GB",
        display_name: "Tesla V100-SXM2-32GB",
        memory_mib: 32768,
        architecture: Architecture::Volta,
        compute_capability: cc(7, 0),
        pci_device_ids: &[pci(0x1DB5)],
        product_labels: &["Tesla-V100-SXM2-32GB"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] nvidia-installer 0x1DB5 Tesla V100-SXM2-32GB; [SMI] 32768 MiB",
    },
    GpuModel {
        id: "V100-PCIE-16GB",
        display_name: "Tesla V100-PCIE-16GB",
        memory_mib: 16384,
        architecture: Architecture::Volta,
        compute_capability: cc(7, 0),
        pci_device_ids: &[pci(0x1DB4)],
        product_labels: &["Tesla-V100-PCIE-16GB"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] nvidia-installer 0x1DB4 Tesla V100-PCIE-16GB; memory as V100-SXM2-16GB",
    },
    GpuModel {
        id: "V100-PCIE-32GB",
        display_name: "Tesla V100-PCIE-32GB",
        memory_mib: 32768,
        architecture: Architecture::Volta,
        compute_capability: cc(7, 0),
        pci_device_ids: &[pci(0x1DB6)],
        product_labels: &["Tesla-V100-PCIE-32GB"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] nvidia-installer 0x1DB6 Tesla V100-PCIE-32GB; [SMI] 32768 MiB",
    },
    GpuModel {
        id: "V100S-PCIE-32GB",
        display_name: "Tesla V100S-PCIE-32GB",
        memory_mib: 32768,
        architecture: Architecture::Volta,
        compute_capability: cc(7, 0),
        pci_device_ids: &[pci(0x1DF6)],
        product_labels: &["Tesla-V100S-PCIE-32GB"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] nvidia-installer 0x1DF6 Tesla V100S-PCIE-32GB; memory as V100-PCIE-32GB",
    },
    GpuModel {
        id: "T4",
        display_name: "Tesla T4",
        memory_mib: 15360,
        architecture: Architecture::Turing,
        compute_capability: cc(7, 5),
        pci_device_ids: &[pci(0x1EB8)],
        product_labels: &["Tesla-T4"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] nvidia-installer 0x1EB8 Tesla T4; [SMI] 15360 MiB",
    },
    GpuModel {
        id: "A10",
        display_name: "NVIDIA A10",
        memory_mib: 23028,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 6),
        pci_device_ids: &[pci(0x2236)],
        product_labels: &["NVIDIA-A10"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] 0x2236 NVIDIA A10; [SMI] 23028 MiB",
    },
    GpuModel {
        id: "A10G",
        display_name: "NVIDIA A10G",
        memory_mib: 23028,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 6),
        pci_device_ids: &[pci(0x2237)],
        product_labels: &["NVIDIA-A10G"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] 0x2237 NVIDIA A10G; [SMI] 23028 MiB",
    },
    GpuModel {
        id: "A40",
        display_name: "NVIDIA A40",
        memory_mib: 46068,
        architecture: Architecture::Ampere,
        compute_capability: cc(8, 6),
        pci_device_ids: &[pci(0x2235)],
        product_labels: &["NVIDIA-A40"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] 0x2235 NVIDIA A40; [SMI] 46068 MiB",
    },
    GpuModel {
        id: "L4",
        display_name: "NVIDIA L4",
        memory_mib: 23034,
        architecture: Architecture::Ada,
        compute_capability: cc(8, 9),
        pci_device_ids: &[pci(0x27B8)],
        product_labels: &["NVIDIA-L4"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] 0x27B8 NVIDIA L4; [SMI] 23034 MiB",
    },
    GpuModel {
        id: "L40",
        display_name: "NVIDIA L40",
        memory_mib: 46068,
        architecture: Architecture::Ada,
        compute_capability: cc(8, 9),
        pci_device_ids: &[pci(0x26B5)],
        product_labels: &["NVIDIA-L40"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] 0x26B5 NVIDIA L40; [SMI] 46068 MiB",
    },
    GpuModel {
        id: "L40S",
        display_name: "NVIDIA L40S",
        memory_mib: 46068,
        architecture: Architecture::Ada,
        compute_capability: cc(8, 9),
        pci_device_ids: &[pci(0x26B9)],
        product_labels: &["NVIDIA-L40S"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] 0x26B9 NVIDIA L40S; [SMI] 46068 MiB",
    },
    GpuModel {
        id: "RTX-6000-ADA",
        display_name: "NVIDIA RTX 6000 Ada Generation",
        memory_mib: 49140,
        architecture: Architecture::Ada,
        compute_capability: cc(8, 9),
        pci_device_ids: &[pci(0x26B1)],
        product_labels: &["NVIDIA-RTX-6000-Ada-Generation"],
        confidential_computing: CcSupport::Unsupported,
        mig: None,
        source: "[DRV] 0x26B1 NVIDIA RTX 6000 Ada Generation; [SMI] 49140 MiB (ECC off, the card's default)",
    },
];

/// The MIG products of the MIG User Guide ("Supported GPUs", 610 and current; "Deployment
/// Considerations", 620) that the catalogue does not model, with what the guide says of each. None
/// has a PCI device id, an `nvidia-smi` memory figure, a GPU Feature Discovery label or a per-part
/// profile table in the sources read ([PARTED]'s default config has no `device-filter` for them, and
/// the driver README read predates them), so their profiles and placements are not modelled.
pub static UNMODELLED_MIG: [UnmodelledMig; 5] = [
    UnmodelledMig {
        name: "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        memory_gb: Some(96),
        max_instances: Some(4),
        min_driver: "R575 575.51.03 (\"all editions\")",
        reason: "no PCI device id or memory figure found; mig-parted configures only the Server Edition (0x2BB5)",
    },
    UnmodelledMig {
        name: "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
        memory_gb: Some(96),
        max_instances: Some(4),
        min_driver: "R575 575.51.03",
        reason: "no PCI device id or memory figure found; mig-parted configures only the Server Edition (0x2BB5)",
    },
    UnmodelledMig {
        name: "NVIDIA RTX PRO 5000 Blackwell",
        memory_gb: Some(48),
        max_instances: Some(2),
        min_driver: "R575 575.57.08",
        reason: "no PCI device id, memory figure or profile table found (mig-parted has none)",
    },
    UnmodelledMig {
        name: "NVIDIA RTX PRO 4500 Blackwell",
        memory_gb: Some(32),
        max_instances: Some(2),
        min_driver: "R575 575.64",
        reason: "no PCI device id, memory figure or profile table found (mig-parted has none)",
    },
    UnmodelledMig {
        name: "NVIDIA GB300 (DGX Station)",
        memory_gb: None,
        max_instances: None,
        min_driver: "R595 595.58.03",
        reason: "the guide gives neither its memory nor its instance count, and no source ties it to the GB300 device ids mig-parted configures (0x31C2)",
    },
];
