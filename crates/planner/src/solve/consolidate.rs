//! Emptying part-empty MIG GPUs by moving their instances onto others where trust and the layout allow.

use crate::file::PlanInput;
use crate::spec::MigSpec;
use crate::unit::{Payload, Res, Share, Unit, UnitKind};
use std::collections::{BTreeMap, BTreeSet};

/// A tentative state of a GPU during consolidation: counts, resource keys, tenants.
type Trial = (Vec<u32>, BTreeMap<Res, Share>, BTreeSet<usize>);

/// Local search over part-empty MIG GPUs: for each, smallest first, try to move every instance onto
/// another part-empty GPU whose tenants may share a GPU with the instance's, whose layout takes one
/// more instance of the profile, and which hands that profile out the same way; when all move, the GPU
/// is gone.
pub(super) fn consolidate(input: &PlanInput, spec: &MigSpec, units: &mut Vec<Unit>) {
    let open = |u: &Unit| -> bool {
        match &u.kind {
            UnitKind::Mig { counts, .. } => {
                (0..spec.profiles.len()).any(|p| spec.can_add(counts, p))
            }
            UnitKind::Whole { .. } => false,
        }
    };
    let mut candidates: Vec<usize> = (0..units.len()).filter(|&u| open(&units[u])).collect();
    candidates.sort_by_key(|&u| match &units[u].kind {
        UnitKind::Mig { counts, .. } => (spec.memory_of(counts), spec.compute_of(counts), u),
        UnitKind::Whole { .. } => (u64::MAX, u64::MAX, u),
    });
    let mut removed: BTreeSet<usize> = BTreeSet::new();
    for &c in &candidates {
        if removed.contains(&c) {
            continue;
        }
        let UnitKind::Mig { instances, .. } = &units[c].kind else {
            continue;
        };
        let moving = instances.clone();
        // Tentative targets: (unit, counts, keys, tenants) copies.
        let mut trial: BTreeMap<usize, Trial> = BTreeMap::new();
        let mut moves: Vec<(usize, Payload)> = Vec::new();
        let mut ok = true;
        for inst in &moving {
            let (p, share, members) = inst;
            let inst_tenants: BTreeSet<usize> = members
                .iter()
                .map(|r| input.workloads[r.w].tenant)
                .collect();
            let mut placed = false;
            for &t in &candidates {
                if t == c || removed.contains(&t) {
                    continue;
                }
                let fits = {
                    let (counts, keys, tenants) = match trial.get(&t) {
                        Some((c, k, ts)) => (c, k, ts),
                        None => match &units[t].kind {
                            UnitKind::Mig { counts, .. } => {
                                (counts, &units[t].keys, &units[t].tenants)
                            }
                            UnitKind::Whole { .. } => continue,
                        },
                    };
                    spec.can_add(counts, *p)
                        && keys.get(&Res::Mig(*p)).is_none_or(|k| k == share)
                        && tenants
                            .iter()
                            .all(|&a| inst_tenants.iter().all(|&b| input.may_share_gpu(a, b)))
                };
                if !fits {
                    continue;
                }
                let (counts, keys, tenants) = match trial.remove(&t) {
                    Some(x) => x,
                    None => match &units[t].kind {
                        UnitKind::Mig { counts, .. } => (
                            counts.clone(),
                            units[t].keys.clone(),
                            units[t].tenants.clone(),
                        ),
                        UnitKind::Whole { .. } => continue,
                    },
                };
                let mut counts = counts;
                counts[*p] += 1;
                let mut keys = keys;
                keys.insert(Res::Mig(*p), *share);
                let mut tenants = tenants;
                tenants.extend(inst_tenants.iter().copied());
                trial.insert(t, (counts, keys, tenants));
                moves.push((t, (*p, *share, members.clone())));
                placed = true;
                break;
            }
            if !placed {
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        for (t, inst) in moves {
            if let UnitKind::Mig { instances, .. } = &mut units[t].kind {
                instances.push(inst);
            }
        }
        for (t, (counts, keys, tenants)) in trial {
            let u = &mut units[t];
            if let UnitKind::Mig { counts: c, .. } = &mut u.kind {
                *c = counts;
            }
            u.keys = keys;
            u.tenants = tenants;
        }
        removed.insert(c);
    }
    let mut i = 0;
    units.retain(|_| {
        let keep = !removed.contains(&i);
        i += 1;
        keep
    });
}
