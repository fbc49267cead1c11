//! MIG geometry: which sets of GPU instances fit on one GPU, and where.
//!
//! A GPU instance of a profile occupies `memory_slices` consecutive memory slices from one of the
//! profile's allowed starts (NVML `nvmlGpuInstancePlacement_t`). A set of instances is a valid
//! [`Layout`] when every start is allowed, no two instances share a memory slice, no profile exceeds
//! its maximum count, the compute slices add up to at most the GPU's, and at most one instance carries
//! the media extensions (each `+me` profile takes the GPU's single OFA; MIG User Guide profile tables).
//!
//! Every valid layout of a geometry is enumerated once, on first use, and kept for the life of the
//! process, so the queries below are lookups or linear filters over a few thousand precomputed
//! layouts:
//!
//! - [`validate_placement`]: an explicit `profile@start` list.
//! - [`place_counts`]: a multiset of profile counts (mig-parted `mig-devices`); returns the first
//!   placement in enumeration order (lowest starts first), the same one every time.
//! - [`layouts`], [`maximal_layouts`]: every valid layout, and those to which no further instance
//!   can be added; [`ProfileSet`] restricts both to some profiles.
//! - [`Layout::stranded_slices`]: memory slices no instance can use any more.

use crate::catalogue::{self, GpuModel, MigGeometry, MigProfile, ProfileVariant};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};

/// One GPU instance: a profile at a start slice.
#[derive(Clone, Copy)]
pub struct Instance {
    profile: &'static MigProfile,
    index: u8,
    start: u8,
}

impl Instance {
    pub fn profile(&self) -> &'static MigProfile {
        self.profile
    }

    /// First memory slice.
    pub fn start(&self) -> u8 {
        self.start
    }

    /// One past the last memory slice.
    pub fn end(&self) -> u8 {
        self.start.saturating_add(self.profile.memory_slices)
    }

    fn mask(&self) -> u32 {
        slice_mask(self.start, self.profile.memory_slices)
    }
}

impl PartialEq for Instance {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.profile, other.profile) && self.start == other.start
    }
}

impl Eq for Instance {}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.profile.name, self.start)
    }
}

impl fmt::Display for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.profile.name, self.start)
    }
}

impl Serialize for Instance {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Instance", 2)?;
        st.serialize_field("profile", self.profile.name)?;
        st.serialize_field("start", &self.start)?;
        st.end()
    }
}

/// A valid set of GPU instances on one GPU, ordered by start slice.
#[derive(Clone)]
pub struct Layout {
    geometry: &'static MigGeometry,
    instances: Vec<Instance>,
    /// Bit `i` set: memory slice `i` is used.
    used: u32,
    /// Instances per profile, indexed like `MigGeometry::profiles`.
    counts: Vec<u8>,
    compute: u32,
}

impl Layout {
    fn empty(geometry: &'static MigGeometry) -> Self {
        Layout {
            geometry,
            instances: Vec::new(),
            used: 0,
            counts: vec![0; geometry.profiles.len()],
            compute: 0,
        }
    }

    /// The instances, by start slice.
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    pub fn geometry(&self) -> &'static MigGeometry {
        self.geometry
    }

    /// Instances per profile name (profiles with none left out).
    pub fn counts(&self) -> BTreeMap<&'static str, u32> {
        let mut out = BTreeMap::new();
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                if let Some(p) = self.geometry.profiles.get(i) {
                    out.insert(p.name, u32::from(c));
                }
            }
        }
        out
    }

    /// Instances of one profile (any accepted name form; 0 for names the geometry lacks).
    pub fn count(&self, profile: &str) -> u32 {
        self.geometry
            .profile_index(profile)
            .and_then(|i| self.counts.get(i))
            .map_or(0, |&c| u32::from(c))
    }

    /// Compute slices the instances take.
    pub fn compute_slices(&self) -> u32 {
        self.compute
    }

    /// Memory of all instances together.
    pub fn memory_mib(&self) -> u64 {
        self.instances.iter().map(|i| i.profile.memory_mib).sum()
    }

    /// Memory slices no instance occupies.
    pub fn free_slices(&self) -> Vec<u8> {
        (0..self.geometry.memory_slices)
            .filter(|&s| self.used & (1 << s) == 0)
            .collect()
    }

    /// Free memory slices that no instance of any profile of the GPU could be added over, given the
    /// instances already there: memory this layout wastes. In a maximal layout every free slice is
    /// stranded; seven `1g.10gb` on H100 strand slice 7.
    pub fn stranded_slices(&self) -> Vec<u8> {
        let mut reachable = 0u32;
        for c in candidates(self.geometry) {
            if fits(self, &c) {
                reachable |= c.mask;
            }
        }
        self.free_slices()
            .into_iter()
            .filter(|&s| reachable & (1 << s) == 0)
            .collect()
    }

    /// Whether an instance of `profile` (any accepted name form) can be added at `start`.
    pub fn can_add(&self, profile: &str, start: u8) -> bool {
        match self.geometry.profile_index(profile) {
            Some(i) => candidates(self.geometry)
                .iter()
                .any(|c| usize::from(c.profile) == i && c.start == start && fits(self, c)),
            None => false,
        }
    }

    /// Whether no instance of any profile of the GPU can be added.
    pub fn is_maximal(&self) -> bool {
        addable_profiles(self) == 0
    }

    fn push(&mut self, c: &Candidate) {
        let index = usize::from(c.profile);
        let Some(profile) = self.geometry.profiles.get(index) else {
            return;
        };
        self.instances.push(Instance {
            profile,
            index: c.profile,
            start: c.start,
        });
        self.used |= c.mask;
        if let Some(n) = self.counts.get_mut(index) {
            *n = n.saturating_add(1);
        }
        self.compute += u32::from(profile.compute_slices);
    }

    fn pop(&mut self) {
        if let Some(i) = self.instances.pop() {
            self.used &= !i.mask();
            if let Some(n) = self.counts.get_mut(usize::from(i.index)) {
                *n = n.saturating_sub(1);
            }
            self.compute = self
                .compute
                .saturating_sub(u32::from(i.profile.compute_slices));
        }
    }

    fn media_extended(&self) -> bool {
        self.instances.iter().any(|i| i.profile.media_extensions())
    }

    fn profile_mask(&self) -> u64 {
        self.instances
            .iter()
            .fold(0, |m, i| m | profile_bit(usize::from(i.index)))
    }
}

impl PartialEq for Layout {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.geometry, other.geometry) && self.instances == other.instances
    }
}

impl Eq for Layout {}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layout({self})")
    }
}

/// `4g.40gb@0 + 3g.40gb@4`; `(empty)` without instances.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.instances.is_empty() {
            return f.write_str("(empty)");
        }
        for (n, i) in self.instances.iter().enumerate() {
            if n > 0 {
                f.write_str(" + ")?;
            }
            write!(f, "{i}")?;
        }
        Ok(())
    }
}

/// `{"instances": [{"profile", "start"}], "computeSlices", "memoryMib", "freeSlices", "strandedSlices"}`.
impl Serialize for Layout {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("instances", &self.instances)?;
        m.serialize_entry("computeSlices", &self.compute)?;
        m.serialize_entry("memoryMib", &self.memory_mib())?;
        m.serialize_entry("freeSlices", &self.free_slices())?;
        m.serialize_entry("strandedSlices", &self.stranded_slices())?;
        m.end()
    }
}

/// Some of a geometry's profiles, to restrict layout enumeration to.
#[derive(Clone, Copy)]
pub struct ProfileSet {
    geometry: &'static MigGeometry,
    mask: u64,
}

impl ProfileSet {
    /// Every profile of the model.
    pub fn all(model: &GpuModel) -> Result<Self, GeometryError> {
        let geometry = mig(model)?;
        let mask = (0..geometry.profiles.len()).fold(0, |m, i| m | profile_bit(i));
        Ok(ProfileSet { geometry, mask })
    }

    /// The model's standard profiles: no `+me` variants, no one-compute-slice profiles on two memory
    /// slices. On H100 80GB: `1g.10gb`, `2g.20gb`, `3g.40gb`, `4g.40gb`, `7g.80gb`.
    pub fn standard(model: &GpuModel) -> Result<Self, GeometryError> {
        let geometry = mig(model)?;
        let mask = geometry
            .profiles
            .iter()
            .enumerate()
            .filter(|(_, p)| p.variant == ProfileVariant::Standard)
            .fold(0, |m, (i, _)| m | profile_bit(i));
        Ok(ProfileSet { geometry, mask })
    }

    /// The named profiles (any accepted name form).
    pub fn from_names<S: AsRef<str>>(model: &GpuModel, names: &[S]) -> Result<Self, GeometryError> {
        let geometry = mig(model)?;
        let mut mask = 0;
        for name in names {
            let i = resolve(model, geometry, name.as_ref())?;
            mask |= profile_bit(i);
        }
        Ok(ProfileSet { geometry, mask })
    }

    pub fn contains(&self, profile: &MigProfile) -> bool {
        self.geometry
            .profiles
            .iter()
            .position(|p| std::ptr::eq(p, profile))
            .is_some_and(|i| self.mask & profile_bit(i) != 0)
    }

    /// The profiles of the set, in table order.
    pub fn profiles(&self) -> impl Iterator<Item = &'static MigProfile> + '_ {
        self.geometry
            .profiles
            .iter()
            .enumerate()
            .filter(|(i, _)| self.mask & profile_bit(*i) != 0)
            .map(|(_, p)| p)
    }
}

impl PartialEq for ProfileSet {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.geometry, other.geometry) && self.mask == other.mask
    }
}

impl Eq for ProfileSet {}

impl fmt::Debug for ProfileSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.profiles().map(|p| p.name))
            .finish()
    }
}

/// Why a placement or a set of counts is not a valid layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GeometryError {
    /// The model has no MIG.
    NoMig { model: &'static str },
    /// The model has no profile of that name.
    UnknownProfile {
        model: &'static str,
        profile: String,
        known: Vec<&'static str>,
    },
    /// The profile may not start at that memory slice.
    StartNotAllowed {
        profile: &'static str,
        start: u8,
        placements: String,
    },
    /// Two instances share memory slices.
    Overlap {
        first: (&'static str, u8),
        second: (&'static str, u8),
    },
    /// More instances of a profile than one GPU allows.
    TooMany {
        profile: &'static str,
        count: u32,
        max: u8,
    },
    /// The instances need more compute slices than the GPU has.
    ComputeExceeded {
        model: &'static str,
        needed: u32,
        available: u8,
    },
    /// More than one instance with media extensions.
    MediaExtensions { count: u32 },
    /// Each count is allowed but no arrangement of them fits on one GPU.
    NoPlacement {
        model: &'static str,
        request: String,
    },
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeometryError::NoMig { model } => write!(f, "{model} does not support MIG"),
            GeometryError::UnknownProfile {
                model,
                profile,
                known,
            } => write!(
                f,
                "{model} has no MIG profile `{profile}`; its profiles: {}",
                known.join(", ")
            ),
            GeometryError::StartNotAllowed {
                profile,
                start,
                placements,
            } => write!(
                f,
                "{profile} cannot start at memory slice {start}; its placements are {placements}"
            ),
            GeometryError::Overlap { first, second } => write!(
                f,
                "{}@{} overlaps {}@{}: they share memory slices",
                second.0, second.1, first.0, first.1
            ),
            GeometryError::TooMany {
                profile,
                count,
                max,
            } => write!(
                f,
                "{count} instances of {profile} requested; one GPU holds at most {max}"
            ),
            GeometryError::ComputeExceeded {
                model,
                needed,
                available,
            } => write!(
                f,
                "the instances need {needed} compute slices; {model} has {available}"
            ),
            GeometryError::MediaExtensions { count } => write!(
                f,
                "{count} instances with media extensions (+me) requested; a GPU has one set"
            ),
            GeometryError::NoPlacement { model, request } => write!(
                f,
                "{request} cannot be placed together on one {model}: no arrangement of these instances fits its memory slices"
            ),
        }
    }
}

impl std::error::Error for GeometryError {}

/// Every valid layout of the model, the empty one first, in enumeration order (each layout's
/// instances by start; layouts ordered by their first instance's start, then profile, and so on).
pub fn layouts(model: &GpuModel) -> Result<&'static [Layout], GeometryError> {
    Ok(&cache(mig(model)?).layouts)
}

/// Every valid layout that uses only profiles of the set.
pub fn layouts_in(set: &ProfileSet) -> Vec<&'static Layout> {
    let c = cache(set.geometry);
    c.layouts
        .iter()
        .zip(&c.used_profiles)
        .filter(|(_, &used)| used & !set.mask == 0)
        .map(|(l, _)| l)
        .collect()
}

/// The maximal layouts over all the model's profiles: no further instance of any profile fits.
pub fn maximal_layouts(model: &GpuModel) -> Result<&'static [Layout], GeometryError> {
    Ok(&cache(mig(model)?).maximal)
}

/// The layouts that use only profiles of the set and to which no instance of a profile of the set
/// can be added. On H100 80GB with the standard profiles there are 19.
pub fn maximal_layouts_in(set: &ProfileSet) -> Vec<&'static Layout> {
    let c = cache(set.geometry);
    c.layouts
        .iter()
        .zip(c.used_profiles.iter().zip(&c.addable))
        .filter(|(_, (&used, &addable))| used & !set.mask == 0 && addable & set.mask == 0)
        .map(|(l, _)| l)
        .collect()
}

/// Checks an explicit placement, `(profile, start)` pairs in any order; profile names in any form
/// [`MigGeometry::profile`] accepts. Returns the layout, instances ordered by start.
pub fn validate_placement(
    model: &GpuModel,
    instances: &[(&str, u8)],
) -> Result<Layout, GeometryError> {
    let geometry = mig(model)?;
    let mut resolved: Vec<Instance> = Vec::with_capacity(instances.len());
    for &(name, start) in instances {
        let index = resolve(model, geometry, name)?;
        let profile = &geometry.profiles[index];
        if !profile.starts.contains(&start)
            || u32::from(start) + u32::from(profile.memory_slices)
                > u32::from(geometry.memory_slices)
        {
            return Err(GeometryError::StartNotAllowed {
                profile: profile.name,
                start,
                placements: profile.placements(),
            });
        }
        let instance = Instance {
            profile,
            index: index as u8,
            start,
        };
        if let Some(other) = resolved.iter().find(|o| o.mask() & instance.mask() != 0) {
            return Err(GeometryError::Overlap {
                first: (other.profile.name, other.start),
                second: (profile.name, start),
            });
        }
        resolved.push(instance);
    }
    check_totals(model, geometry, resolved.iter().map(|i| i.index as usize))?;
    resolved.sort_by_key(|i| i.start);
    let mut layout = Layout::empty(geometry);
    for i in &resolved {
        layout.push(&Candidate {
            profile: i.index,
            start: i.start,
            mask: i.mask(),
            compute: i.profile.compute_slices,
        });
    }
    Ok(layout)
}

/// Finds a placement for profile counts, e.g. mig-parted `mig-devices: {"3g.40gb": 1, "1g.10gb": 2}`.
/// Names in any accepted form; a name given twice adds up; zero counts are ignored. The same counts
/// always give the same placement.
pub fn place_counts<S: AsRef<str>>(
    model: &GpuModel,
    counts: &[(S, u32)],
) -> Result<Layout, GeometryError> {
    let geometry = mig(model)?;
    let mut wanted = vec![0u32; geometry.profiles.len()];
    for (name, n) in counts {
        let i = resolve(model, geometry, name.as_ref())?;
        wanted[i] = wanted[i].saturating_add(*n);
    }
    let expanded = wanted
        .iter()
        .enumerate()
        .flat_map(|(i, &n)| std::iter::repeat_n(i, n.min(64) as usize));
    for (i, &n) in wanted.iter().enumerate() {
        let p = &geometry.profiles[i];
        if n > u32::from(p.max_count) {
            return Err(GeometryError::TooMany {
                profile: p.name,
                count: n,
                max: p.max_count,
            });
        }
    }
    check_totals(model, geometry, expanded)?;
    let key: Vec<u8> = wanted.iter().map(|&n| n as u8).collect();
    let c = cache(geometry);
    match c.by_counts.get(&key).and_then(|&i| c.layouts.get(i)) {
        Some(layout) => Ok(layout.clone()),
        None => Err(GeometryError::NoPlacement {
            model: model.id,
            request: describe_counts(geometry, &wanted),
        }),
    }
}

/// `2 x 3g.40gb + 1 x 1g.10gb`, largest profile first.
fn describe_counts(geometry: &MigGeometry, wanted: &[u32]) -> String {
    let parts: Vec<String> = wanted
        .iter()
        .zip(geometry.profiles)
        .rev()
        .filter(|(n, _)| **n > 0)
        .map(|(n, p)| format!("{n} x {}", p.name))
        .collect();
    parts.join(" + ")
}

/// Count, compute and media-extension limits over a list of profile indices.
fn check_totals(
    model: &GpuModel,
    geometry: &MigGeometry,
    indices: impl Iterator<Item = usize>,
) -> Result<(), GeometryError> {
    let mut counts = vec![0u32; geometry.profiles.len()];
    let mut compute = 0u32;
    let mut media = 0u32;
    for i in indices {
        let p = &geometry.profiles[i];
        counts[i] += 1;
        compute += u32::from(p.compute_slices);
        if p.media_extensions() {
            media += 1;
        }
    }
    for (i, &n) in counts.iter().enumerate() {
        let p = &geometry.profiles[i];
        if n > u32::from(p.max_count) {
            return Err(GeometryError::TooMany {
                profile: p.name,
                count: n,
                max: p.max_count,
            });
        }
    }
    if compute > u32::from(geometry.compute_slices) {
        return Err(GeometryError::ComputeExceeded {
            model: model.id,
            needed: compute,
            available: geometry.compute_slices,
        });
    }
    if media > 1 {
        return Err(GeometryError::MediaExtensions { count: media });
    }
    Ok(())
}

fn mig(model: &GpuModel) -> Result<&'static MigGeometry, GeometryError> {
    model.mig.ok_or(GeometryError::NoMig { model: model.id })
}

fn resolve(model: &GpuModel, geometry: &MigGeometry, name: &str) -> Result<usize, GeometryError> {
    geometry
        .profile_index(name)
        .ok_or_else(|| GeometryError::UnknownProfile {
            model: model.id,
            profile: name.to_string(),
            known: geometry.profiles.iter().map(|p| p.name).collect(),
        })
}

fn profile_bit(i: usize) -> u64 {
    u32::try_from(i)
        .ok()
        .and_then(|i| 1u64.checked_shl(i))
        .unwrap_or(0)
}

fn slice_mask(start: u8, size: u8) -> u32 {
    let ones = 1u32
        .checked_shl(u32::from(size))
        .map_or(u32::MAX, |v| v - 1);
    ones.checked_shl(u32::from(start)).unwrap_or(0)
}

/// A profile at an allowed start.
struct Candidate {
    profile: u8,
    start: u8,
    mask: u32,
    compute: u8,
}

/// Every (profile, allowed start) of the geometry that lies within its memory slices, ordered by
/// start, then table order.
fn candidates(geometry: &MigGeometry) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, p) in geometry.profiles.iter().enumerate() {
        let Ok(profile) = u8::try_from(i) else {
            continue;
        };
        for &start in p.starts {
            if u32::from(start) + u32::from(p.memory_slices) <= u32::from(geometry.memory_slices)
                && p.memory_slices > 0
            {
                out.push(Candidate {
                    profile,
                    start,
                    mask: slice_mask(start, p.memory_slices),
                    compute: p.compute_slices,
                });
            }
        }
    }
    out.sort_by_key(|c| (c.start, c.profile));
    out
}

fn fits(layout: &Layout, c: &Candidate) -> bool {
    let geometry = layout.geometry;
    let Some(p) = geometry.profiles.get(usize::from(c.profile)) else {
        return false;
    };
    layout.used & c.mask == 0
        && layout
            .counts
            .get(usize::from(c.profile))
            .is_some_and(|&n| n < p.max_count)
        && layout.compute + u32::from(c.compute) <= u32::from(geometry.compute_slices)
        && !(p.media_extensions() && layout.media_extended())
}

/// Bit per profile index: an instance of it could be added somewhere.
fn addable_profiles(layout: &Layout) -> u64 {
    candidates(layout.geometry)
        .iter()
        .filter(|c| fits(layout, c))
        .fold(0, |m, c| m | profile_bit(usize::from(c.profile)))
}

/// Every valid layout of a geometry with what the queries need, built once per geometry.
struct LayoutCache {
    layouts: Vec<Layout>,
    /// Per layout: bit per profile it uses.
    used_profiles: Vec<u64>,
    /// Per layout: bit per profile that could still be added.
    addable: Vec<u64>,
    /// Maximal over every profile.
    maximal: Vec<Layout>,
    /// Instances per profile -> first layout with exactly those counts.
    by_counts: BTreeMap<Vec<u8>, usize>,
}

/// The layouts of `geometry`, enumerated on its first use and kept for the life of the process. Each
/// geometry of the catalogue has its slot, found by address; one from elsewhere (none is written
/// outside the catalogue) gets its own, built once.
fn cache(geometry: &'static MigGeometry) -> &'static LayoutCache {
    type Slots = Vec<(&'static MigGeometry, OnceLock<LayoutCache>)>;
    static CATALOGUE: OnceLock<Slots> = OnceLock::new();
    static OTHERS: Mutex<Vec<(&'static MigGeometry, &'static LayoutCache)>> =
        Mutex::new(Vec::new());
    let slots = CATALOGUE.get_or_init(|| {
        let mut slots: Slots = Vec::new();
        for g in catalogue::all().iter().filter_map(|m| m.mig) {
            if !slots.iter().any(|(s, _)| std::ptr::eq(*s, g)) {
                slots.push((g, OnceLock::new()));
            }
        }
        slots
    });
    if let Some((_, slot)) = slots.iter().find(|(s, _)| std::ptr::eq(*s, geometry)) {
        return slot.get_or_init(|| build(geometry));
    }
    let mut others = OTHERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, c)) = others.iter().find(|(s, _)| std::ptr::eq(*s, geometry)) {
        return c;
    }
    let built: &'static LayoutCache = Box::leak(Box::new(build(geometry)));
    others.push((geometry, built));
    built
}

fn build(geometry: &'static MigGeometry) -> LayoutCache {
    let cands = candidates(geometry);
    let mut layouts = Vec::new();
    let mut current = Layout::empty(geometry);
    enumerate(&cands, 0, &mut current, &mut layouts);
    let mut used_profiles = Vec::with_capacity(layouts.len());
    let mut addable = Vec::with_capacity(layouts.len());
    let mut by_counts = BTreeMap::new();
    let mut maximal = Vec::new();
    for (i, l) in layouts.iter().enumerate() {
        used_profiles.push(l.profile_mask());
        let a = cands
            .iter()
            .filter(|c| fits(l, c))
            .fold(0, |m, c| m | profile_bit(usize::from(c.profile)));
        addable.push(a);
        if a == 0 {
            maximal.push(l.clone());
        }
        by_counts.entry(l.counts.clone()).or_insert(i);
    }
    LayoutCache {
        layouts,
        used_profiles,
        addable,
        maximal,
        by_counts,
    }
}

/// Records `current`, then every extension by a candidate after `from` (so each set appears once).
fn enumerate(cands: &[Candidate], from: usize, current: &mut Layout, out: &mut Vec<Layout>) {
    out.push(current.clone());
    for (j, c) in cands.iter().enumerate().skip(from) {
        if fits(current, c) {
            current.push(c);
            enumerate(cands, j + 1, current, out);
            current.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_masks_cover_the_slices() {
        assert_eq!(slice_mask(0, 1), 0b1);
        assert_eq!(slice_mask(4, 4), 0b1111_0000);
        assert_eq!(slice_mask(0, 8), 0xFF);
        assert_eq!(slice_mask(0, 40), u32::MAX);
        assert_eq!(slice_mask(40, 1), 0);
        assert_eq!(profile_bit(3), 8);
        assert_eq!(profile_bit(64), 0);
    }

    /// A geometry written outside the catalogue gets its own layouts, built once, the same as the
    /// catalogue's geometry with the same slices and profiles.
    #[test]
    fn a_geometry_outside_the_catalogue_is_enumerated_once() {
        let a30 = catalogue::lookup("A30").and_then(|m| m.mig).unwrap();
        let copy: &'static MigGeometry = Box::leak(Box::new(MigGeometry {
            memory_slices: a30.memory_slices,
            compute_slices: a30.compute_slices,
            profiles: a30.profiles,
            source: "a copy for this test",
        }));
        assert!(!std::ptr::eq(copy, a30));
        assert_eq!(cache(copy).layouts.len(), cache(a30).layouts.len());
        assert!(std::ptr::eq(cache(copy), cache(copy)));
        assert!(std::ptr::eq(cache(a30), cache(a30)));
    }
}
