//! The GPU catalogue: every NVIDIA GPU model gpu-trust knows, as static data, and lookups by the names
//! a cluster uses for it.
//!
//! A model is found by its canonical id (`H100-SXM5-80GB`), by the `nvidia.com/gpu.product` label GPU
//! Feature Discovery writes (`NVIDIA-H100-80GB-HBM3`, also with the `-SHARED` suffix of time-slicing
//! without rename and the `-MIG-<profile>` suffix of the single MIG strategy), by the nvidia-smi product
//! name (`NVIDIA H100 80GB HBM3`), or by the PCI device id mig-parted's `device-filter` uses
//! (`0x233010DE`). All name lookups ignore case.
//!
//! For MIG-capable models, [`MigGeometry`] lists the GPU instance profiles with their memory, SMs,
//! maximum count and allowed placements; [`crate::geometry`] validates and enumerates layouts over them.
//!
//! # Profile memory
//!
//! [`MigProfile::memory_mib`] is the memory an instance really gets, not the number in its name
//! (`1g.10gb` on H100 80GB is 9.75 GiB). Where a real `nvidia-smi mig -lgip` listing or GPU Feature
//! Discovery label was found, the figure is that capture ([`MemoryBasis::Measured`]). Otherwise it is
//! derived ([`MemoryBasis::Derived`]) from the GPU's total memory by a conservative rule:
//!
//! ```text
//! memory_mib = floor(total_mib * memory_slices / slices_per_gpu * f)
//! f = 0.90 for 1/8 of the GPU, 0.91 for 2/8, 0.96 for 4/8, 0.97 for the whole GPU
//! ```
//!
//! The factors are the smallest ratio of instance memory to the GPU's share seen in any capture
//! (H100 NVL for small instances, GH200 96GB for the whole GPU), so a derived figure never exceeds
//! what the hardware gives; a test checks every measured figure against the rule. Figures also move
//! by up to about 1.5% between driver branches (A100-40GB `1g.10gb` lists 9.62 or 9.75 GiB), so a
//! planner should keep headroom either way.

mod data;

use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

pub use data::{MODELS, UNMODELLED_MIG};

/// One GPU model.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuModel {
    /// Canonical id, e.g. `H100-SXM5-80GB`; the name plan files and reports use.
    pub id: &'static str,
    /// The product as NVIDIA names it.
    pub display_name: &'static str,
    /// Total memory as nvidia-smi reports it (ECC on, recent drivers).
    pub memory_mib: u64,
    pub architecture: Architecture,
    pub compute_capability: ComputeCapability,
    /// PCI device ids in mig-parted `device-filter` form (device id << 16 | vendor id 0x10DE).
    pub pci_device_ids: &'static [PciDeviceId],
    /// `nvidia.com/gpu.product` values GPU Feature Discovery writes for this model: the nvidia-smi
    /// product name with spaces turned into `-`. Variants sold under another name (H800) are listed too.
    pub product_labels: &'static [&'static str],
    /// Whether NVIDIA supports confidential computing on this model, and how.
    pub confidential_computing: CcSupport,
    /// MIG geometry; `None` for models without MIG.
    pub mig: Option<&'static MigGeometry>,
    /// Where the identity, memory and capability facts come from.
    pub source: &'static str,
}

impl GpuModel {
    pub fn supports_mig(&self) -> bool {
        self.mig.is_some()
    }

    /// Whether NVIDIA lists the model as confidential-computing capable.
    pub fn cc_capable(&self) -> bool {
        self.confidential_computing != CcSupport::Unsupported
    }

    /// A MIG profile of this model by name (see [`MigGeometry::profile`]); `None` without MIG.
    pub fn profile(&self, name: &str) -> Option<&'static MigProfile> {
        self.mig.and_then(|g| g.profile(name))
    }
}

/// A MIG-capable product NVIDIA documents that the catalogue does not model: known by name, with
/// what NVIDIA says of it and why its profiles are not modelled.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnmodelledMig {
    /// The product as NVIDIA names it.
    pub name: &'static str,
    /// Its memory as the MIG User Guide gives it, in GB.
    pub memory_gb: Option<u16>,
    /// The most GPU instances the guide gives it.
    pub max_instances: Option<u8>,
    /// The first driver with MIG on it, per the guide.
    pub min_driver: &'static str,
    /// Why the catalogue has no model of it.
    pub reason: &'static str,
}

/// The MIG-capable product named `name` (its name, or the `nvidia.com/gpu.product` form of it) that
/// the catalogue knows by name only.
pub fn unmodelled_mig(name: &str) -> Option<&'static UnmodelledMig> {
    let key = normalise(name.trim());
    let key = strip_label_suffixes(&key);
    UNMODELLED_MIG.iter().find(|u| normalise(u.name) == key)
}

/// GPU architecture (generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Architecture {
    Volta,
    Turing,
    Ampere,
    Ada,
    Hopper,
    Blackwell,
}

impl Architecture {
    pub fn as_str(self) -> &'static str {
        match self {
            Architecture::Volta => "volta",
            Architecture::Turing => "turing",
            Architecture::Ampere => "ampere",
            Architecture::Ada => "ada",
            Architecture::Hopper => "hopper",
            Architecture::Blackwell => "blackwell",
        }
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// CUDA compute capability; serialised as `"9.0"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    pub major: u8,
    pub minor: u8,
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for ComputeCapability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A PCI id as mig-parted writes it in `device-filter`: device id in the high 16 bits, vendor id
/// (0x10DE for NVIDIA) in the low 16; serialised as `"0x233010DE"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciDeviceId(pub u32);

impl PciDeviceId {
    /// NVIDIA's PCI vendor id.
    pub const NVIDIA_VENDOR: u16 = 0x10DE;

    pub const fn nvidia(device: u16) -> Self {
        PciDeviceId(((device as u32) << 16) | Self::NVIDIA_VENDOR as u32)
    }

    pub fn device(self) -> u16 {
        (self.0 >> 16) as u16
    }

    pub fn vendor(self) -> u16 {
        (self.0 & 0xFFFF) as u16
    }

    /// Parses `0x233010DE` (mig-parted form) or `0x2330` (device id alone, NVIDIA vendor assumed);
    /// the `0x` prefix is required, hex digits in either case.
    pub fn parse(s: &str) -> Option<Self> {
        let hex = s
            .trim()
            .strip_prefix("0x")
            .or_else(|| s.trim().strip_prefix("0X"))?;
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        match hex.len() {
            8 => u32::from_str_radix(hex, 16).ok().map(PciDeviceId),
            4 => u16::from_str_radix(hex, 16).ok().map(PciDeviceId::nvidia),
            _ => None,
        }
    }
}

impl fmt::Display for PciDeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

impl Serialize for PciDeviceId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Confidential computing support as NVIDIA's Confidential Containers "Supported Platforms" page lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcSupport {
    /// Not listed as CC-capable.
    Unsupported,
    /// One GPU per confidential VM; several GPUs per VM only in protected PCIe mode (`cc.mode=ppcie`),
    /// which takes every GPU and NVSwitch of the node (Hopper HGX).
    SingleGpuOrProtectedPcie,
    /// Single-GPU and multi-GPU passthrough (Blackwell: NVLink encryption, `cc.mode=on`).
    SingleAndMultiGpu,
    /// Single-GPU passthrough only (RTX PRO 6000 Blackwell Server Edition).
    SingleGpu,
}

impl CcSupport {
    pub fn as_str(self) -> &'static str {
        match self {
            CcSupport::Unsupported => "unsupported",
            CcSupport::SingleGpuOrProtectedPcie => "single-gpu-or-protected-pcie",
            CcSupport::SingleAndMultiGpu => "single-and-multi-gpu",
            CcSupport::SingleGpu => "single-gpu",
        }
    }
}

/// The MIG geometry of a model: its slices and GPU instance profiles. Only the catalogue writes one
/// (`non_exhaustive`), so each is a `static` of its data, which `crate::geometry` keeps the
/// enumerated layouts of.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MigGeometry {
    /// Memory slices a GPU instance is placed on (8; 4 on A30). Placements index these.
    pub memory_slices: u8,
    /// Compute slices shared out among instances (7; 4 on A30).
    pub compute_slices: u8,
    /// GPU instance profiles, smallest first.
    pub profiles: &'static [MigProfile],
    /// Where the profiles, counts and placements come from.
    pub source: &'static str,
}

impl fmt::Debug for MigGeometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MigGeometry")
            .field("memory_slices", &self.memory_slices)
            .field("compute_slices", &self.compute_slices)
            .field("profiles", &self.profiles)
            .finish_non_exhaustive()
    }
}

impl MigGeometry {
    /// A profile by name, ignoring case. Accepts the catalogue form (`1g.10gb+me`), the device plugin's
    /// resource form where `+` became `.` (`1g.10gb.me`, with or without `nvidia.com/mig-` or `mig-`),
    /// and the compute-instance form when it spans the whole instance (`2c.2g.20gb` is `2g.20gb`).
    pub fn profile(&self, name: &str) -> Option<&'static MigProfile> {
        self.profile_index(name).map(|i| &self.profiles[i])
    }

    /// Position of a profile in [`MigGeometry::profiles`], by any accepted name form.
    pub fn profile_index(&self, name: &str) -> Option<usize> {
        let wanted = ProfileName::parse(name)?;
        self.profiles
            .iter()
            .position(|p| ProfileName::parse(p.name).as_ref() == Some(&wanted))
    }

    /// The profiles without attribute variants (no media extensions, one memory slice per compute
    /// slice as the base instance sizes have): the set layouts are usually counted over.
    pub fn standard_profiles(&self) -> impl Iterator<Item = &'static MigProfile> {
        self.profiles
            .iter()
            .filter(|p| p.variant == ProfileVariant::Standard)
    }

    /// The largest instance's memory.
    pub fn largest_memory_mib(&self) -> u64 {
        self.profiles
            .iter()
            .map(|p| p.memory_mib)
            .max()
            .unwrap_or(0)
    }
}

/// One GPU instance profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigProfile {
    /// `1g.10gb`, `1g.10gb+me`.
    pub name: &'static str,
    /// nvidia-smi's GPU instance profile id (`-cgi 19`), where a real listing was found.
    pub profile_id: Option<u16>,
    pub variant: ProfileVariant,
    /// Compute slices (the `<G>g` of the name).
    pub compute_slices: u8,
    /// Memory slices the instance occupies from its start (`size` in `nvidia-smi mig -lgipp`).
    pub memory_slices: u8,
    /// Memory the instance gets; see the module documentation for how it was obtained.
    pub memory_mib: u64,
    pub memory_basis: MemoryBasis,
    /// Streaming multiprocessors of the instance, where a real listing was found.
    pub sms: Option<u16>,
    /// Most instances of this profile on one GPU.
    pub max_count: u8,
    /// Memory slices an instance may start at.
    pub starts: &'static [u8],
}

impl MigProfile {
    /// Whether the profile carries the media extensions (`+me`: the GPU's OFA and a JPEG decoder).
    pub fn media_extensions(&self) -> bool {
        self.variant == ProfileVariant::MediaExtensions
    }

    /// The placements in nvidia-smi's notation, e.g. `{0,2,4}:2`.
    pub fn placements(&self) -> String {
        let starts: Vec<String> = self.starts.iter().map(u8::to_string).collect();
        format!("{{{}}}:{}", starts.join(","), self.memory_slices)
    }

    /// The device plugin's resource name for the profile, e.g. `nvidia.com/mig-1g.10gb.me`.
    pub fn resource_name(&self) -> String {
        mig_resource(self.name)
    }
}

/// How a profile relates to the base instance sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileVariant {
    /// A base size (NVML `GPU_INSTANCE_PROFILE_<n>_SLICE`).
    Standard,
    /// `+me`: a base size plus media extensions; at most one such instance per GPU (NVML `_REV1`).
    MediaExtensions,
    /// One compute slice on two memory slices, e.g. H100 `1g.20gb` (NVML `1_SLICE_REV2`).
    ExtraMemory,
    /// A base size with another attribute and the base size's slices and counts: `+gfx` (graphics)
    /// and `-me` (no media engines) on RTX PRO Blackwell parts.
    Attribute,
}

/// Whether a profile's memory figure was read from hardware or derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryBasis {
    /// From a real `nvidia-smi mig -lgip` listing or GPU Feature Discovery label.
    Measured,
    /// From the GPU's total by the conservative rule in the module documentation.
    Derived,
}

/// A parsed profile name: compute slices, memory figure of the name, attribute suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ProfileName {
    compute: u32,
    gb: u32,
    attribute: String,
}

impl ProfileName {
    fn parse(name: &str) -> Option<Self> {
        let lower = name.trim().to_ascii_lowercase();
        let rest = lower
            .strip_prefix(crate::resource::DOMAIN)
            .unwrap_or(&lower);
        let rest = rest.strip_prefix("mig-").unwrap_or(rest);
        let (compute_instance, rest) = match rest.split_once('c') {
            Some((c, r)) if !c.is_empty() && c.chars().all(|ch| ch.is_ascii_digit()) => {
                (Some(c.parse::<u32>().ok()?), r.strip_prefix('.')?)
            }
            _ => (None, rest),
        };
        let (g, rest) = rest.split_once("g.")?;
        let compute = digits(g)?;
        let gb_end = rest.find("gb")?;
        let gb = digits(&rest[..gb_end])?;
        let suffix = &rest[gb_end + 2..];
        if let Some(c) = compute_instance {
            if c != compute {
                return None;
            }
        }
        let attribute = match suffix.strip_prefix('.') {
            // The device plugin writes `+` as `.`: `1g.10gb.me`, `1g.24gb.me.all`, `1g.24gb.gfx`.
            Some(a) => format!("+{a}"),
            None => suffix.to_string(),
        };
        if !(attribute.is_empty() || attribute.starts_with('+') || attribute.starts_with('-')) {
            return None;
        }
        Some(ProfileName {
            compute,
            gb,
            attribute,
        })
    }
}

/// A profile as the device plugin spells it in resource names and labels: `+` becomes `.`
/// (`1g.10gb+me` is `1g.10gb.me`); NVIDIA k8s-device-plugin `internal/rm/rm.go` replaces every `+`
/// with `.` when it builds the resource name `mig-<profile>`.
pub fn plugin_profile(profile: &str) -> String {
    profile.chars().map(plugin_char).collect()
}

/// Whether the catalogue (or mig-parted) profile `profile` is spelled `plugin` by the device plugin,
/// without building the spelling.
pub fn is_plugin_spelling(profile: &str, plugin: &str) -> bool {
    profile.chars().map(plugin_char).eq(plugin.chars())
}

fn plugin_char(c: char) -> char {
    if c == '+' {
        '.'
    } else {
        c
    }
}

/// A profile in the device plugin's spelling (`1g.10gb.me`, `1g.24gb.me.all`) in the catalogue's and
/// mig-parted's (`1g.10gb+me`, `1g.24gb+me.all`): the first `.` after the memory figure was a `+`.
pub fn profile_from_plugin(plugin: &str) -> String {
    match plugin.split_once("gb.") {
        Some((head, attribute)) => format!("{head}gb+{attribute}"),
        None => plugin.to_string(),
    }
}

/// The mixed strategy's resource for a profile in either spelling: `nvidia.com/mig-1g.10gb.me`.
pub fn mig_resource(profile: &str) -> String {
    format!("{}{}", crate::resource::MIG_PREFIX, plugin_profile(profile))
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Every model of the catalogue, in catalogue order.
pub fn all() -> &'static [GpuModel] {
    &MODELS
}

/// A model by canonical id, product label or nvidia-smi product name (case-insensitive), with the GPU
/// Feature Discovery suffixes `-SHARED` and `-MIG-<profile>` accepted, or by PCI device id
/// (`0x233010DE`, `0x2330`).
pub fn lookup(label_or_id: &str) -> Option<&'static GpuModel> {
    let trimmed = label_or_id.trim();
    if let Some(pci) = PciDeviceId::parse(trimmed) {
        return lookup_pci(pci);
    }
    let key = normalise(trimmed);
    let index = name_index();
    if let Some(&i) = index.get(&key) {
        return MODELS.get(i);
    }
    let stripped = strip_label_suffixes(&key);
    index.get(stripped).and_then(|&i| MODELS.get(i))
}

/// A model by PCI device id.
pub fn lookup_pci(id: PciDeviceId) -> Option<&'static GpuModel> {
    MODELS.iter().find(|m| m.pci_device_ids.contains(&id))
}

/// Up to five known names (ids and product labels) closest to `name`, closest first, for "did you
/// mean" messages.
pub fn suggest(name: &str) -> Vec<&'static str> {
    let key = normalise(name);
    let key = strip_label_suffixes(&key).to_string();
    let mut scored: Vec<(usize, &'static str)> = MODELS
        .iter()
        .flat_map(|m| std::iter::once(m.id).chain(m.product_labels.iter().copied()))
        .map(|n| {
            let candidate = normalise(n);
            let distance = if candidate.contains(&key) || key.contains(&candidate) {
                0
            } else {
                edit_distance(&key, &candidate)
            };
            (distance, n)
        })
        .collect();
    scored.sort();
    let limit = (key.chars().count() / 2).max(3);
    let mut out: Vec<&'static str> = Vec::new();
    for (d, n) in scored {
        if d > limit || out.len() == 5 {
            break;
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Lower case, spaces as `-` (the way GPU Feature Discovery turns product names into labels).
fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| {
            if c == ' ' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Removes `-shared` and then `-mig-<profile>` from a normalised label.
fn strip_label_suffixes(key: &str) -> &str {
    let key = key.strip_suffix("-shared").unwrap_or(key);
    match key.rfind("-mig-") {
        Some(at) if ProfileName::parse(&key[at + 5..]).is_some() => &key[..at],
        _ => key,
    }
}

fn name_index() -> &'static BTreeMap<String, usize> {
    static INDEX: OnceLock<BTreeMap<String, usize>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = BTreeMap::new();
        for (i, m) in MODELS.iter().enumerate() {
            for name in std::iter::once(m.id)
                .chain(std::iter::once(m.display_name))
                .chain(m.product_labels.iter().copied())
            {
                index.entry(normalise(name)).or_insert(i);
            }
        }
        index
    })
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_parse_in_every_form() {
        let a = ProfileName::parse("1g.10gb+me");
        assert!(a.is_some());
        assert_eq!(a, ProfileName::parse("1g.10gb.me"));
        assert_eq!(a, ProfileName::parse("nvidia.com/mig-1g.10gb.me"));
        assert_eq!(a, ProfileName::parse("MIG-1G.10GB+ME"));
        assert_eq!(
            ProfileName::parse("2c.2g.20gb"),
            ProfileName::parse("2g.20gb")
        );
        assert_eq!(ProfileName::parse("1c.2g.20gb"), None);
        assert_eq!(
            ProfileName::parse("1g.24gb.me.all").map(|p| p.attribute),
            Some("+me.all".into())
        );
        assert_eq!(
            ProfileName::parse("1g.24gb-me").map(|p| p.attribute),
            Some("-me".into())
        );
        for bad in [
            "", "g.10gb", "1g.gb", "1g.10", "1g.10gbx", "x1g.10gb", "1g10gb", "ég.10gb",
        ] {
            assert_eq!(ProfileName::parse(bad), None, "{bad}");
        }
    }

    /// Derived figures follow the documented rule, and every measured figure is at least what the
    /// rule would give: the rule never promises more memory than real captures show.
    #[test]
    fn derived_memory_rule_is_conservative_against_every_capture() {
        let mut measured = 0;
        for m in all() {
            let Some(g) = m.mig else { continue };
            for p in g.profiles {
                let rule = data::derived_mib(m.memory_mib, p.memory_slices, g.memory_slices);
                match p.memory_basis {
                    MemoryBasis::Derived => assert_eq!(p.memory_mib, rule, "{} {}", m.id, p.name),
                    MemoryBasis::Measured => {
                        measured += 1;
                        assert!(
                            p.memory_mib >= rule,
                            "{} {}: {} < {rule}",
                            m.id,
                            p.name,
                            p.memory_mib
                        );
                    }
                }
            }
        }
        assert!(measured >= 30);
    }

    #[test]
    fn plugin_spelling_round_trips() {
        for (catalogue, plugin) in [
            ("1g.10gb+me", "1g.10gb.me"),
            ("1g.24gb+me.all", "1g.24gb.me.all"),
            ("1g.24gb-me", "1g.24gb-me"),
            ("3g.40gb", "3g.40gb"),
        ] {
            assert_eq!(plugin_profile(catalogue), plugin);
            assert_eq!(profile_from_plugin(plugin), catalogue);
            assert!(is_plugin_spelling(catalogue, plugin));
        }
        assert_eq!(mig_resource("1g.10gb+me"), "nvidia.com/mig-1g.10gb.me");
        assert!(!is_plugin_spelling("1g.10gb", "1g.10gb.me"));
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("l40s", "l40s"), 0);
        assert_eq!(edit_distance("l40", "l40s"), 1);
        assert_eq!(edit_distance("h100", "a100"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
