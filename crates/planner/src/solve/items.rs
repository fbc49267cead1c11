//! Step 4, GPUs: the items to pack (whole units, MIG instances per clique, replicas of shared devices
//! bundled per sharing group), time-sliced bundles moved off profiles another use claims, and each
//! clique's MIG instances packed into GPU layouts.

use super::groups::TrustGroups;
use super::pool::{Method, PoolCtx};
use crate::exact;
use crate::pack;
use crate::spec::MigSpec;
use crate::unit::{Mode, Need, Payload, Rep, Res, Share, Unit, UnitKind};
use std::collections::{BTreeMap, BTreeSet};

/// Replicas shared on one device kind, by (group, namespace under DRA, resource, is_mps), each with
/// its own replica bound.
type Bundles<'a> = BTreeMap<(usize, &'a str, Res, bool), Vec<(Rep, u32)>>;

/// MIG instances to place, per clique.
type MigItems = BTreeMap<usize, Vec<Payload>>;

impl PoolCtx<'_> {
    /// The items to pack: whole units directly, MIG instances per clique; the replicas of shared
    /// devices bundled per sharing group (when `split`, whole GPUs by each workload's own replicas per
    /// GPU).
    pub(super) fn items(
        &self,
        needs: &BTreeMap<usize, Need>,
        tg: &TrustGroups,
        split: bool,
    ) -> (Vec<Unit>, MigItems) {
        let input = self.input;
        let mut units: Vec<Unit> = Vec::new();
        let mut mig_items: MigItems = BTreeMap::new();
        // (group, namespace under DRA, resource, is_mps) -> replicas with their own replica bound.
        let mut bundles: Bundles = BTreeMap::new();
        for (&w, &need) in needs {
            let wl = &input.workloads[w];
            let t = wl.tenant;
            let group = tg.group_of[&t];
            let clique = tg.clique_of_group[group];
            let ns = if self.dra { wl.namespace.as_str() } else { "" };
            for i in 0..wl.replicas {
                let rep = Rep { w, i };
                match need {
                    Need::Gang(g) => {
                        units.push(tg.whole_unit(input, g, Share::Exclusive, vec![rep], t))
                    }
                    Need::Whole(Mode::Exclusive) => {
                        units.push(tg.whole_unit(input, 1, Share::Exclusive, vec![rep], t))
                    }
                    Need::Whole(Mode::TimeSliced(r)) => bundles
                        .entry((group, ns, Res::Gpu, false))
                        .or_default()
                        .push((rep, r)),
                    Need::Whole(Mode::Mps(r)) => bundles
                        .entry((group, ns, Res::Gpu, true))
                        .or_default()
                        .push((rep, r)),
                    Need::Instance(p, Mode::Exclusive) => mig_items
                        .entry(clique)
                        .or_default()
                        .push((p, Share::Exclusive, vec![rep])),
                    Need::Instance(p, Mode::TimeSliced(r)) | Need::Instance(p, Mode::Mps(r)) => {
                        bundles
                            .entry((group, ns, Res::Mig(p), false))
                            .or_default()
                            .push((rep, r))
                    }
                }
            }
        }
        for ((group, _, res, mps), mut reps) in bundles {
            reps.sort();
            // Classes of replicas per GPU: one at the smallest of the bundle, or (whole GPUs, when
            // `split`) one per count the workloads ask for, each workload in its own class.
            let mut classes: BTreeMap<u32, Vec<Rep>> = BTreeMap::new();
            let least = reps.iter().map(|(_, r)| *r).min().unwrap_or(1).max(1);
            for (rep, r) in &reps {
                let class = if split && res == Res::Gpu {
                    (*r).max(1)
                } else {
                    least
                };
                classes.entry(class).or_default().push(*rep);
            }
            let t = tg.groups[group].first().copied().unwrap_or(0);
            for (r, members) in classes {
                let share = if r < 2 {
                    Share::Exclusive
                } else if mps {
                    Share::Mps { group, replicas: r }
                } else {
                    Share::TimeSliced { group, replicas: r }
                };
                for chunk in members.chunks(r as usize) {
                    let members: Vec<Rep> = chunk.to_vec();
                    match res {
                        Res::Gpu => units.push(tg.whole_unit(input, 1, share, members, t)),
                        Res::Mig(p) => mig_items
                            .entry(tg.clique_of_group[group])
                            .or_default()
                            .push((p, share, members)),
                    }
                }
            }
        }
        (units, mig_items)
    }

    /// A time-sliced profile that the clique also hands out whole (or time-slices for another group)
    /// cannot share a node with those instances; moves such bundles to another profile with as much
    /// memory and compute that no other use claims, when there is one.
    pub(super) fn remap_shared_profiles(
        &self,
        spec: &MigSpec,
        tg: &TrustGroups,
        mig_items: &mut MigItems,
        needs: &mut BTreeMap<usize, Need>,
    ) {
        let input = self.input;
        for items in mig_items.values_mut() {
            let mut uses: BTreeMap<usize, BTreeSet<Share>> = BTreeMap::new();
            for (p, s, _) in items.iter() {
                uses.entry(*p).or_default().insert(*s);
            }
            let shared: BTreeSet<(usize, Share)> = items
                .iter()
                .filter(|(_, s, _)| *s != Share::Exclusive)
                .map(|(p, s, _)| (*p, *s))
                .collect();
            for (p, s) in shared {
                if uses.get(&p).is_none_or(|u| u.len() < 2) {
                    continue;
                }
                let (mem, frac) = (spec.profiles[p].memory_mib, spec.compute_fraction(p));
                let alternative = (0..spec.profiles.len())
                    .filter(|&q| {
                        q != p
                            && spec.profiles[q].memory_mib >= mem
                            && spec.compute_fraction(q) + 1e-9 >= frac
                            && uses.get(&q).is_none_or(|u| u.iter().all(|k| *k == s))
                    })
                    .min_by_key(|&q| {
                        let x = spec.profiles[q];
                        (x.memory_slices, x.compute_slices, x.memory_mib, q)
                    });
                let Some(q) = alternative else { continue };
                for item in items.iter_mut() {
                    if item.0 == p && item.1 == s {
                        item.0 = q;
                    }
                }
                if let Some(u) = uses.get_mut(&p) {
                    u.remove(&s);
                }
                uses.entry(q).or_default().insert(s);
                let Share::TimeSliced { group, .. } = s else {
                    continue;
                };
                for (w, need) in needs.iter_mut() {
                    if tg.group_of.get(&input.workloads[*w].tenant) == Some(&group) {
                        if let Need::Instance(np, mode @ Mode::TimeSliced(_)) = *need {
                            if np == p {
                                *need = Need::Instance(q, mode);
                            }
                        }
                    }
                }
            }
        }
    }

    /// MIG GPUs per clique: the clique's instances split into partitions whose device plugin configs
    /// do not clash, each packed into GPU layouts.
    pub(super) fn mig_units(&self, spec: &MigSpec, mig_items: MigItems, units: &mut Vec<Unit>) {
        let input = self.input;
        for (clique, items) in mig_items {
            let mut partitions: Vec<BTreeMap<usize, Share>> = vec![BTreeMap::new()];
            for (p, share, _) in &items {
                if *share == Share::Exclusive {
                    partitions[0].insert(*p, Share::Exclusive);
                }
            }
            let mut part_of: BTreeMap<(usize, Share), usize> = BTreeMap::new();
            let keys: BTreeSet<(usize, Share)> = items.iter().map(|(p, s, _)| (*p, *s)).collect();
            for (p, s) in keys {
                let at = partitions
                    .iter()
                    .position(|part| part.get(&p).is_none_or(|have| *have == s));
                let at = match at {
                    Some(at) => at,
                    None => {
                        partitions.push(BTreeMap::new());
                        partitions.len() - 1
                    }
                };
                partitions[at].insert(p, s);
                part_of.insert((p, s), at);
            }
            let mut by_part: BTreeMap<usize, Vec<(usize, Share, Vec<Rep>)>> = BTreeMap::new();
            for item in items {
                let at = part_of.get(&(item.0, item.1)).copied().unwrap_or(0);
                by_part.entry(at).or_default().push(item);
            }
            for (_, mut part_items) in by_part {
                part_items.sort_by(|a, b| a.2.cmp(&b.2));
                let mut demand = vec![0u32; spec.profiles.len()];
                for (p, _, _) in &part_items {
                    demand[*p] += 1;
                }
                let packing = match self.method {
                    Method::Best => pack::pack(spec, &demand),
                    Method::FirstFitDecreasing => pack::first_fit_decreasing(spec, &demand),
                    Method::Exact { time_limit_secs } => {
                        exact::exact_pack(spec, &demand, time_limit_secs)
                            .unwrap_or_else(|| pack::pack(spec, &demand))
                    }
                };
                // Hand the instances out to the GPUs, profile by profile, in order.
                let mut queues: Vec<std::collections::VecDeque<(Share, Vec<Rep>)>> =
                    vec![std::collections::VecDeque::new(); spec.profiles.len()];
                for (p, s, m) in part_items {
                    queues[p].push_back((s, m));
                }
                for counts in packing {
                    let mut instances = Vec::new();
                    let mut keys = BTreeMap::new();
                    let mut tenants_set = BTreeSet::new();
                    for (p, &c) in counts.iter().enumerate() {
                        for _ in 0..c {
                            if let Some((s, m)) = queues[p].pop_front() {
                                keys.insert(Res::Mig(p), s);
                                for r in &m {
                                    tenants_set.insert(input.workloads[r.w].tenant);
                                }
                                instances.push((p, s, m));
                            }
                        }
                    }
                    let mut real = vec![0u32; spec.profiles.len()];
                    for (p, _, _) in &instances {
                        real[*p] += 1;
                    }
                    if instances.is_empty() {
                        continue;
                    }
                    units.push(Unit {
                        gpus: 1,
                        clique,
                        tenants: tenants_set,
                        keys,
                        cc: false,
                        kind: UnitKind::Mig {
                            counts: real,
                            instances,
                        },
                    });
                }
            }
        }
    }
}
