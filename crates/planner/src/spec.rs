//! What the planner needs to know about one GPU model, read from the catalogue and its MIG geometry:
//! the profiles it plans with, every valid layout as a count vector (for feasibility checks), and the
//! maximal layouts (the patterns the packer chooses from).

use gpu_trust_model::catalogue::{GpuModel, MigProfile, ProfileVariant};
use gpu_trust_model::geometry::{self, ProfileSet};
use std::collections::HashSet;

/// The MIG side of a model, restricted to the profiles the planner uses: every profile except the
/// media-extension variants (`+me`), which exist once per GPU for video work and are never the
/// smallest fit for a memory or compute need.
#[derive(Debug, Clone)]
pub struct MigSpec {
    pub model: &'static GpuModel,
    /// Usable profiles, smallest first: by memory slices, then compute slices, then memory.
    pub profiles: Vec<&'static MigProfile>,
    pub memory_slices: u8,
    pub compute_slices: u8,
    /// Maximal layouts over [`MigSpec::profiles`], as counts indexed like `profiles`.
    pub patterns: Vec<Vec<u32>>,
    /// Every valid layout's counts, packed by [`MigSpec::key`].
    valid: HashSet<u64>,
}

/// Bits per profile count in a packed key (a count never exceeds 8 on any geometry).
const KEY_BITS: u32 = 4;

impl MigSpec {
    /// The spec of a MIG-capable model; `None` without MIG (or when its geometry has no usable
    /// profile, which the catalogue's tests rule out).
    pub fn new(model: &'static GpuModel) -> Option<MigSpec> {
        let mig = model.mig?;
        let mut profiles: Vec<&'static MigProfile> = mig
            .profiles
            .iter()
            .filter(|p| {
                !matches!(
                    p.variant,
                    ProfileVariant::MediaExtensions | ProfileVariant::Attribute
                )
            })
            .collect();
        if profiles.is_empty() || profiles.len() > (64 / KEY_BITS) as usize {
            return None;
        }
        profiles.sort_by_key(|p| (p.memory_slices, p.compute_slices, p.memory_mib));
        let names: Vec<&str> = profiles.iter().map(|p| p.name).collect();
        let set = ProfileSet::from_names(model, &names).ok()?;
        let index_of = |p: &MigProfile| profiles.iter().position(|q| q.name == p.name);
        let to_counts = |l: &geometry::Layout| -> Option<Vec<u32>> {
            let mut c = vec![0u32; profiles.len()];
            for i in l.instances() {
                c[index_of(i.profile())?] += 1;
            }
            Some(c)
        };
        let mut spec = MigSpec {
            model,
            profiles: profiles.clone(),
            memory_slices: mig.memory_slices,
            compute_slices: mig.compute_slices,
            patterns: Vec::new(),
            valid: HashSet::new(),
        };
        for l in geometry::layouts_in(&set) {
            let c = to_counts(l)?;
            spec.valid.insert(spec.key(&c));
        }
        let mut patterns: Vec<Vec<u32>> = geometry::maximal_layouts_in(&set)
            .into_iter()
            .filter_map(to_counts)
            .collect();
        patterns.sort();
        patterns.dedup();
        spec.patterns = patterns;
        Some(spec)
    }

    /// Packs a count vector into one integer.
    pub fn key(&self, counts: &[u32]) -> u64 {
        counts.iter().enumerate().fold(0u64, |k, (i, &c)| {
            k | (u64::from(c.min((1 << KEY_BITS) - 1)) << (KEY_BITS * i as u32))
        })
    }

    /// Whether these counts fit on one GPU together.
    pub fn is_valid(&self, counts: &[u32]) -> bool {
        counts.iter().all(|&c| c < (1 << KEY_BITS)) && self.valid.contains(&self.key(counts))
    }

    /// Whether one more instance of `profile` fits next to `counts`.
    pub fn can_add(&self, counts: &[u32], profile: usize) -> bool {
        let limit = (1 << KEY_BITS) - 1;
        counts.get(profile).is_some_and(|&c| c < limit)
            && counts.iter().all(|&c| c <= limit)
            && self
                .valid
                .contains(&(self.key(counts) + self.unit_key(profile)))
    }

    /// The packed key of one instance of `profile` (keys of counts add up).
    pub fn unit_key(&self, profile: usize) -> u64 {
        1u64 << (KEY_BITS * profile as u32)
    }

    /// Whether the counts packed in `key` fit one GPU (every count below 16, as [`MigSpec::key`]
    /// keeps them when each addition is checked with [`MigSpec::count_room`]).
    pub fn is_valid_key(&self, key: u64) -> bool {
        self.valid.contains(&key)
    }

    /// Whether a count may grow by one without overflowing its packed field.
    pub fn count_room(count: u32) -> bool {
        count < (1 << KEY_BITS) - 1
    }

    /// The smallest profile (the first of [`MigSpec::profiles`]) whose memory holds `peak` MiB and
    /// whose share of the GPU's compute holds `compute`.
    pub fn smallest_holding(&self, peak: u64, compute: f64) -> Option<usize> {
        (0..self.profiles.len()).find(|&p| {
            self.profiles[p].memory_mib >= peak && self.compute_fraction(p) + 1e-9 >= compute
        })
    }

    pub fn profile_index(&self, name: &str) -> Option<usize> {
        self.profiles.iter().position(|p| p.name == name)
    }

    /// Memory slices of a count vector.
    pub fn memory_of(&self, counts: &[u32]) -> u64 {
        counts
            .iter()
            .zip(&self.profiles)
            .map(|(&c, p)| u64::from(c) * u64::from(p.memory_slices))
            .sum()
    }

    /// Compute slices of a count vector.
    pub fn compute_of(&self, counts: &[u32]) -> u64 {
        counts
            .iter()
            .zip(&self.profiles)
            .map(|(&c, p)| u64::from(c) * u64::from(p.compute_slices))
            .sum()
    }

    /// The profile's share of the GPU's compute: its SMs over the whole GPU instance's where the
    /// catalogue has both, else its compute slices over the GPU's.
    pub fn compute_fraction(&self, profile: usize) -> f64 {
        let p = self.profiles[profile];
        let whole = self
            .profiles
            .iter()
            .filter(|q| q.compute_slices == self.compute_slices)
            .find_map(|q| q.sms);
        match (p.sms, whole) {
            (Some(s), Some(w)) if w > 0 => f64::from(s) / f64::from(w),
            _ => f64::from(p.compute_slices) / f64::from(self.compute_slices.max(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::catalogue;

    #[test]
    fn h100_has_patterns_over_base_and_two_slice_profiles() {
        let model = catalogue::lookup("H100-SXM5-80GB").unwrap();
        let spec = MigSpec::new(model).unwrap();
        let names: Vec<&str> = spec.profiles.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
        );
        // More than the 19 maximal layouts of the base profiles: 1g.20gb adds fillings.
        assert!(spec.patterns.len() > 19, "{}", spec.patterns.len());
        let i = |n: &str| spec.profile_index(n).unwrap();
        let mut c = vec![0; spec.profiles.len()];
        c[i("4g.40gb")] = 1;
        c[i("3g.40gb")] = 1;
        assert!(spec.is_valid(&c));
        c[i("3g.40gb")] = 0;
        assert!(!spec.can_add(&c, i("4g.40gb")), "two 4g never fit");
        let mut seven = vec![0; spec.profiles.len()];
        seven[i("1g.10gb")] = 7;
        assert!(spec.is_valid(&seven));
        assert!(!spec.can_add(&seven, i("1g.10gb")));
    }

    #[test]
    fn models_without_mig_have_no_spec() {
        let model = catalogue::lookup("L40S").unwrap();
        assert!(MigSpec::new(model).is_none());
    }
}
