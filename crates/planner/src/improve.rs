//! Packing MIG instances across the trust groups of one trust component.
//!
//! The packer fills GPUs clique by clique (groups of tenants that may all share a GPU), and
//! consolidation then empties GPUs whose instances fit elsewhere as they are. Neither moves an
//! instance off a full GPU to make room for another. When the tenants of a component do not all trust
//! each other, the fewest GPUs may need such a move: a GPU that holds a `3g.40gb` of one tenant on one
//! half and the `1g` instances of another tenant, which trusts the first, on the other half, while the
//! packer paired that `3g.40gb` with one of a third tenant. This step looks for those rearrangements:
//!
//! - on a small component (up to [`EXACT_ITEMS`] instances), an exact search: do its instances fit in
//!   one GPU fewer, and fewer again, down to the component's lower bound;
//! - on a larger one, a local search that repacks two or three part-filled GPUs, whose instances fit
//!   the slices of one GPU fewer, into one GPU fewer; or, when trust keeps their instances apart, the
//!   same GPUs and one more whose tenants trust theirs (often a full one, whose instances make room).
//!
//! Both search over assignments of instances to GPUs under the packer's rules: each GPU's counts a
//! valid layout of the model, one way of handing each profile out per GPU (a profile is never both
//! exclusive and time-sliced on one GPU), and every two tenants on one GPU trusting each other above
//! `none`. The searches count the nodes they visit and stop at fixed limits, so the step is
//! deterministic and bounded, and it only ever replaces GPUs by fewer GPUs.

use crate::bound;
use crate::complete;
use crate::file::PlanInput;
use crate::spec::MigSpec;
use crate::unit::{Payload, Rep, Res, Share, Unit, UnitKind};
use std::collections::{BTreeMap, BTreeSet};

/// Components with at most this many instances are searched exactly.
pub(crate) const EXACT_ITEMS: usize = 40;
/// Components with at most this many instances get the exact search after the local search.
pub(crate) const SEARCH_ITEMS: usize = 128;
/// Search nodes the exact search may visit per GPU count it tries.
const EXACT_NODES: u64 = 150_000;
/// States and GPUs the search GPU by GPU may visit per GPU count it tries.
const COMPLETE_NODES: u64 = 50_000;
/// And per pool, in all: on a pool of at most [`SEARCH_ITEMS`] MIG instances, and on a larger one
/// (where the local search does most of the work and the time should grow with the fleet only).
const COMPLETE_BUDGET: u64 = 400_000;
const COMPLETE_BUDGET_LARGE: u64 = 20_000;
/// Search nodes one repack of three GPUs into two may visit.
const LOCAL_NODES: u64 = 4_000;
/// Search nodes the local search may visit per GPU of the component, in all.
const LOCAL_NODES_PER_GPU: u64 = 1_500;
/// And per component, at most.
const LOCAL_BUDGET: u64 = 300_000;
/// Part-filled GPUs near a GPU the local search combines it with, sets of them it tries, and helper
/// GPUs per set.
const OPEN: usize = 12;
/// Part-filled GPUs two steps away the local search adds to those.
const FAR: usize = 6;
const SETS: usize = 32;
const HELPERS: usize = 12;
/// Helpers whose pairs the local search tries with a pair of part-filled GPUs.
const PAIR_HELPERS: usize = 6;

/// One MIG instance to place, with the tenants it serves.
#[derive(Debug, Clone)]
struct Item {
    profile: usize,
    share: Share,
    members: Vec<Rep>,
    /// Sorted and without repeats.
    tenants: Vec<usize>,
    clique: usize,
    memory: u64,
    compute: u64,
}

impl Item {
    /// Items that are interchangeable for a search (same profile, sharing and tenants).
    fn same_kind(&self, other: &Item) -> bool {
        self.profile == other.profile && self.share == other.share && self.tenants == other.tenants
    }
}

/// The state of one GPU during a search.
#[derive(Debug, Clone)]
struct Bin {
    counts: Vec<u32>,
    key: u64,
    shares: Vec<Option<Share>>,
    tenants: Vec<usize>,
    memory: u64,
    compute: u64,
}

struct Search<'a> {
    input: &'a PlanInput,
    spec: &'a MigSpec,
    items: &'a [Item],
    /// Item indices, largest first.
    order: Vec<usize>,
    /// Memory and compute slices of `order[i..]`.
    rest_memory: Vec<u64>,
    rest_compute: Vec<u64>,
    /// Instances of each profile in `order[i..]`, indexed `i * profiles + p`.
    rest_counts: Vec<u32>,
    gpus: usize,
    bins: Vec<Bin>,
    /// Bin of `order[i]`.
    placed: Vec<usize>,
    nodes: u64,
    limit: u64,
}

/// Whether every tenant of `a` may share a GPU with every tenant of `b`.
fn trusting(input: &PlanInput, a: &[usize], b: &[usize]) -> bool {
    a.iter()
        .all(|&x| b.iter().all(|&y| input.may_share_gpu(x, y)))
}

impl Search<'_> {
    fn fits(&self, bin: &Bin, item: &Item) -> bool {
        let p = item.profile;
        MigSpec::count_room(bin.counts[p])
            && bin.shares[p].is_none_or(|s| s == item.share)
            && self.spec.is_valid_key(bin.key + self.spec.unit_key(p))
            && trusting(self.input, &item.tenants, &bin.tenants)
    }

    /// Assigns `order[i..]`; `None` when the node limit stops the search.
    fn go(&mut self, i: usize) -> Option<bool> {
        if i == self.order.len() {
            return Some(true);
        }
        self.nodes += 1;
        if self.nodes > self.limit {
            return None;
        }
        let memory_slices = u64::from(self.spec.memory_slices);
        let compute_slices = u64::from(self.spec.compute_slices);
        let closed = (self.gpus - self.bins.len()) as u64;
        let free_memory: u64 = self
            .bins
            .iter()
            .map(|b| memory_slices.saturating_sub(b.memory))
            .sum::<u64>()
            + closed * memory_slices;
        let free_compute: u64 = self
            .bins
            .iter()
            .map(|b| compute_slices.saturating_sub(b.compute))
            .sum::<u64>()
            + closed * compute_slices;
        if self.rest_memory[i] > free_memory || self.rest_compute[i] > free_compute {
            return Some(false);
        }
        // No profile beyond the room its most-per-GPU count leaves.
        let profiles = self.spec.profiles.len();
        for p in 0..profiles {
            let rest = u64::from(self.rest_counts[i * profiles + p]);
            if rest == 0 {
                continue;
            }
            let most = u64::from(self.spec.profiles[p].max_count);
            let room: u64 = self
                .bins
                .iter()
                .map(|b| most.saturating_sub(u64::from(b.counts[p])))
                .sum::<u64>()
                + closed * most;
            if rest > room {
                return Some(false);
            }
        }
        let item = &self.items[self.order[i]];
        // Interchangeable items go to bins in order, so no arrangement is searched twice.
        let first = match i.checked_sub(1) {
            Some(j) if self.items[self.order[j]].same_kind(item) => self.placed[j],
            _ => 0,
        };
        for b in first..self.bins.len() {
            if !self.fits(&self.bins[b], item) {
                continue;
            }
            let undo = self.put(b, i);
            let r = self.go(i + 1);
            self.take(b, undo, i);
            match r {
                Some(false) => {}
                other => return other,
            }
        }
        if self.bins.len() < self.gpus && first <= self.bins.len() {
            self.bins.push(Bin {
                counts: vec![0; self.spec.profiles.len()],
                key: 0,
                shares: vec![None; self.spec.profiles.len()],
                tenants: Vec::new(),
                memory: 0,
                compute: 0,
            });
            let b = self.bins.len() - 1;
            let undo = self.put(b, i);
            let r = self.go(i + 1);
            self.take(b, undo, i);
            self.bins.pop();
            return r;
        }
        Some(false)
    }

    fn put(&mut self, b: usize, i: usize) -> (Option<Share>, usize) {
        let item = &self.items[self.order[i]];
        let bin = &mut self.bins[b];
        let undo = (bin.shares[item.profile], bin.tenants.len());
        bin.counts[item.profile] += 1;
        bin.key += self.spec.unit_key(item.profile);
        bin.shares[item.profile] = Some(item.share);
        for &t in &item.tenants {
            if !bin.tenants.contains(&t) {
                bin.tenants.push(t);
            }
        }
        bin.memory += item.memory;
        bin.compute += item.compute;
        self.placed[i] = b;
        undo
    }

    fn take(&mut self, b: usize, undo: (Option<Share>, usize), i: usize) {
        let item = &self.items[self.order[i]];
        let bin = &mut self.bins[b];
        bin.counts[item.profile] -= 1;
        bin.key -= self.spec.unit_key(item.profile);
        bin.shares[item.profile] = undo.0;
        bin.tenants.truncate(undo.1);
        bin.memory -= item.memory;
        bin.compute -= item.compute;
    }
}

/// Places `items` on at most `gpus` GPUs; the item indices per GPU, or `None` when there is no such
/// placement or the search reached `limit` nodes first. `spent` grows by the nodes visited.
fn repack(
    input: &PlanInput,
    spec: &MigSpec,
    items: &[Item],
    gpus: usize,
    limit: u64,
    spent: &mut u64,
) -> Option<Vec<Vec<usize>>> {
    let memory: u64 = items.iter().map(|i| i.memory).sum();
    let compute: u64 = items.iter().map(|i| i.compute).sum();
    if memory > gpus as u64 * u64::from(spec.memory_slices)
        || compute > gpus as u64 * u64::from(spec.compute_slices)
    {
        return None;
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&items[a], &items[b]);
        y.memory
            .cmp(&x.memory)
            .then(y.compute.cmp(&x.compute))
            .then(x.profile.cmp(&y.profile))
            .then(x.share.cmp(&y.share))
            .then(x.tenants.cmp(&y.tenants))
            .then(x.members.cmp(&y.members))
    });
    let mut rest_memory = vec![0u64; order.len() + 1];
    let mut rest_compute = vec![0u64; order.len() + 1];
    let profiles = spec.profiles.len();
    let mut rest_counts = vec![0u32; (order.len() + 1) * profiles];
    for i in (0..order.len()).rev() {
        rest_memory[i] = rest_memory[i + 1] + items[order[i]].memory;
        rest_compute[i] = rest_compute[i + 1] + items[order[i]].compute;
        for p in 0..profiles {
            rest_counts[i * profiles + p] = rest_counts[(i + 1) * profiles + p];
        }
        rest_counts[i * profiles + items[order[i]].profile] += 1;
    }
    let mut s = Search {
        input,
        spec,
        items,
        placed: vec![0; order.len()],
        order,
        rest_memory,
        rest_compute,
        rest_counts,
        gpus,
        bins: Vec::new(),
        nodes: 0,
        limit,
    };
    let found = s.go(0);
    *spent += s.nodes;
    if found != Some(true) {
        return None;
    }
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); gpus];
    for (i, &b) in s.placed.iter().enumerate() {
        bins[b].push(s.order[i]);
    }
    bins.retain(|b| !b.is_empty());
    Some(bins)
}

fn items_of(spec: &MigSpec, input: &PlanInput, unit: &Unit) -> Vec<Item> {
    let UnitKind::Mig { instances, .. } = &unit.kind else {
        return Vec::new();
    };
    instances
        .iter()
        .map(|(p, share, members)| {
            let tenants: BTreeSet<usize> = members
                .iter()
                .map(|r| input.workloads[r.w].tenant)
                .collect();
            let prof = spec.profiles[*p];
            Item {
                profile: *p,
                share: *share,
                members: members.clone(),
                tenants: tenants.into_iter().collect(),
                clique: unit.clique,
                memory: u64::from(prof.memory_slices),
                compute: u64::from(prof.compute_slices),
            }
        })
        .collect()
}

/// The MIG GPU that holds `items` (in the order given).
fn unit_of(spec: &MigSpec, items: &[&Item]) -> Unit {
    let mut counts = vec![0u32; spec.profiles.len()];
    let mut keys = BTreeMap::new();
    let mut tenants = BTreeSet::new();
    let mut instances: Vec<Payload> = Vec::with_capacity(items.len());
    for item in items {
        counts[item.profile] += 1;
        keys.insert(Res::Mig(item.profile), item.share);
        tenants.extend(item.tenants.iter().copied());
        instances.push((item.profile, item.share, item.members.clone()));
    }
    Unit {
        gpus: 1,
        clique: items.first().map(|i| i.clique).unwrap_or(0),
        tenants,
        keys,
        cc: false,
        kind: UnitKind::Mig { counts, instances },
    }
}

/// Units grouped by trust component: tenants joined by trust above `none`, transitively.
fn components(input: &PlanInput, units: &[Unit], mig: &[usize]) -> Vec<Vec<usize>> {
    let tenants: BTreeSet<usize> = mig
        .iter()
        .flat_map(|&u| units[u].tenants.iter().copied())
        .collect();
    let root_of = crate::bound::components(&tenants, |a, b| input.may_share_gpu(a, b));
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &u in mig {
        if let Some(root) = units[u].tenants.iter().next().and_then(|t| root_of.get(t)) {
            groups.entry(*root).or_default().push(u);
        }
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().collect();
    out.sort();
    out
}

/// Rearranges the MIG GPUs of each trust component onto fewer GPUs where the searches find a way; the
/// exact searches' limits are divided by `effort` (1 for a plan, more for the plans that only judge a
/// choice of pools).
pub(crate) fn improve(input: &PlanInput, spec: &MigSpec, units: &mut Vec<Unit>, effort: u64) {
    let mig: Vec<usize> = (0..units.len())
        .filter(|&u| !units[u].cc && matches!(units[u].kind, UnitKind::Mig { .. }))
        .collect();
    let mut removed: BTreeSet<usize> = BTreeSet::new();
    let mut added: Vec<Unit> = Vec::new();
    let instances: usize = mig
        .iter()
        .map(|&u| match &units[u].kind {
            UnitKind::Mig { instances, .. } => instances.len(),
            UnitKind::Whole { .. } => 0,
        })
        .sum();
    let effort = effort.max(1);
    let budget = if instances <= SEARCH_ITEMS {
        COMPLETE_BUDGET
    } else {
        COMPLETE_BUDGET_LARGE
    } / effort;
    let mut complete_spent = 0u64;
    for comp in components(input, units, &mig) {
        let gpus: Vec<Vec<Item>> = comp
            .iter()
            .map(|&u| items_of(spec, input, &units[u]))
            .collect();
        let instances: Vec<(usize, &[usize])> = gpus
            .iter()
            .flatten()
            .map(|i| (i.profile, i.tenants.as_slice()))
            .collect();
        let lower =
            usize::try_from(bound::instances_bound(input, spec, &instances)).unwrap_or(usize::MAX);
        if gpus.len() <= lower {
            continue;
        }
        let item_count: usize = gpus.iter().map(Vec::len).sum();
        let start = (item_count <= SEARCH_ITEMS).then(|| gpus.clone());
        let mut better = if item_count <= EXACT_ITEMS {
            exact(input, spec, gpus, lower, effort)
        } else if item_count > SEARCH_ITEMS {
            local(input, spec, gpus, lower)
        } else {
            // The local search, then, on a component of moderate size still above its bound, the
            // exact search from the local search's count.
            let local_best = local(input, spec, gpus.clone(), lower);
            let now = local_best.as_ref().unwrap_or(&gpus);
            if now.len() > lower {
                exact(input, spec, now.clone(), lower, effort).or(local_best)
            } else {
                local_best
            }
        };
        // Still above the bound: the search GPU by GPU, from the best count so far.
        if let Some(start) = start {
            let now = better.as_ref().unwrap_or(&start);
            if now.len() > lower {
                let spent = (&mut complete_spent, budget);
                if let Some(fewer) = by_gpu(input, spec, now, lower, spent, effort) {
                    better = Some(fewer);
                }
            }
        }
        if let Some(better) = better {
            removed.extend(comp.iter().copied());
            for items in better {
                let refs: Vec<&Item> = items.iter().collect();
                added.push(unit_of(spec, &refs));
            }
        }
    }
    if removed.is_empty() {
        return;
    }
    let mut i = 0;
    units.retain(|_| {
        let keep = !removed.contains(&i);
        i += 1;
        keep
    });
    units.extend(added);
}

/// The exact search: the component's instances on one GPU fewer than now, then fewer again, down to
/// `lower`; the GPUs of the best placement found, or `None` when none beats the current one.
fn exact(
    input: &PlanInput,
    spec: &MigSpec,
    gpus: Vec<Vec<Item>>,
    lower: usize,
    effort: u64,
) -> Option<Vec<Vec<Item>>> {
    let mut k = gpus.len().saturating_sub(1);
    let items: Vec<Item> = gpus.into_iter().flatten().collect();
    let mut best: Option<Vec<Vec<usize>>> = None;
    let mut spent = 0;
    while k > 0 && k >= lower {
        match repack(input, spec, &items, k, EXACT_NODES / effort, &mut spent) {
            Some(bins) => {
                k = bins.len().saturating_sub(1);
                best = Some(bins);
            }
            None => break,
        }
    }
    best.map(|bins| {
        bins.into_iter()
            .map(|b| b.into_iter().map(|i| items[i].clone()).collect())
            .collect()
    })
}

/// The search GPU by GPU ([`crate::complete`]) over the component's instances: one GPU fewer than
/// `gpus`, then fewer again, down to `lower`, while `spent` is below `budget`; the GPUs of the best
/// placement found, or `None` when none beats `gpus`.
fn by_gpu(
    input: &PlanInput,
    spec: &MigSpec,
    gpus: &[Vec<Item>],
    lower: usize,
    (spent, budget): (&mut u64, u64),
    effort: u64,
) -> Option<Vec<Vec<Item>>> {
    // Interchangeable instances as one kind, each kind's instances in a queue.
    let mut kinds: Vec<complete::Kind> = Vec::new();
    let mut queues: Vec<Vec<&Item>> = Vec::new();
    for item in gpus.iter().flatten() {
        match queues.iter().position(|q| q[0].same_kind(item)) {
            Some(k) => {
                kinds[k].count += 1;
                queues[k].push(item);
            }
            None => {
                kinds.push(complete::Kind {
                    profile: item.profile,
                    share: item.share,
                    tenants: item.tenants.clone(),
                    count: 1,
                });
                queues.push(vec![item]);
            }
        }
    }
    let mut k = gpus.len().saturating_sub(1);
    let mut best: Option<Vec<Vec<usize>>> = None;
    while k > 0 && k >= lower && *spent < budget {
        let limit = (COMPLETE_NODES / effort).min(budget - *spent);
        match complete::place(input, spec, &kinds, k, limit, spent) {
            Some(found) => {
                k = found.len().saturating_sub(1);
                best = Some(found);
            }
            None => break,
        }
    }
    let best = best?;
    let mut next = vec![0usize; kinds.len()];
    Some(
        best.into_iter()
            .map(|gpu| {
                gpu.into_iter()
                    .map(|k| {
                        let item = queues[k][next[k]].clone();
                        next[k] += 1;
                        item
                    })
                    .collect()
            })
            .collect(),
    )
}

/// The local search, GPU by GPU, the lightest first: a set of the part-filled GPU and one or two
/// other part-filled GPUs near it (holding tenants that trust its tenants), whose instances fit the
/// slices of one GPU fewer, repacked into one GPU fewer; or, when trust keeps their instances apart,
/// the set and one more GPU near it (full or not, its instances make room) repacked into as many GPUs
/// as the set had. Passes repeat while they find repacks, within a budget of search nodes that grows
/// with the component.
fn local(
    input: &PlanInput,
    spec: &MigSpec,
    gpus: Vec<Vec<Item>>,
    lower: usize,
) -> Option<Vec<Vec<Item>>> {
    let memory_slices = u64::from(spec.memory_slices);
    let compute_slices = u64::from(spec.compute_slices);
    let start = gpus.len();
    let budget = (LOCAL_NODES_PER_GPU * start as u64).min(LOCAL_BUDGET);
    let mut spent = 0u64;
    let mut live = start;
    let mut slab: Vec<Option<Gpu>> = gpus.into_iter().map(|g| Some(Gpu::new(g))).collect();
    // The GPUs of each tenant, and the tenants each tenant may share a GPU with.
    let mut by_tenant: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (id, g) in slab.iter().enumerate() {
        for &t in g.as_ref().map(|g| g.tenants.as_slice()).unwrap_or(&[]) {
            by_tenant.entry(t).or_default().insert(id);
        }
    }
    let open = |g: &Gpu| g.memory < memory_slices || g.compute < compute_slices;
    // The part-filled GPUs of each tenant.
    let mut open_by_tenant: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (id, g) in slab.iter().enumerate() {
        if let Some(g) = g.as_ref().filter(|g| open(g)) {
            for &t in &g.tenants {
                open_by_tenant.entry(t).or_default().insert(id);
            }
        }
    }
    let tenants: Vec<usize> = by_tenant.keys().copied().collect();
    let trusted: BTreeMap<usize, Vec<usize>> = tenants
        .iter()
        .map(|&t| {
            let near: Vec<usize> = tenants
                .iter()
                .copied()
                .filter(|&u| input.may_share_gpu(t, u))
                .collect();
            (t, near)
        })
        .collect();
    let near = |slab: &[Option<Gpu>], by_tenant: &BTreeMap<usize, BTreeSet<usize>>, id: usize| {
        let mut out: BTreeSet<usize> = BTreeSet::new();
        if let Some(g) = &slab[id] {
            for t in &g.tenants {
                for u in trusted.get(t).map(Vec::as_slice).unwrap_or(&[]) {
                    if let Some(ids) = by_tenant.get(u) {
                        out.extend(ids.iter().copied());
                    }
                }
            }
        }
        out.remove(&id);
        out
    };
    'passes: loop {
        let mut changed = false;
        let mut order: Vec<(u64, u64, usize)> = slab
            .iter()
            .enumerate()
            .filter_map(|(id, g)| {
                g.as_ref()
                    .filter(|g| open(g))
                    .map(|g| (g.memory, g.compute, id))
            })
            .collect();
        order.sort();
        for &(_, _, a) in &order {
            if live <= lower || spent >= budget {
                break 'passes;
            }
            let Some(ga) = &slab[a] else { continue };
            let (ma, ca) = (ga.memory, ga.compute);
            // Part-filled GPUs near `a`, the lightest first; then those two steps away (tenants that
            // trust a tenant trusting one of `a`'s: two GPUs that trust keeps apart can still trade
            // places through a third).
            let near_a = near(&slab, &by_tenant, a);
            let mut reach: BTreeSet<usize> = BTreeSet::new();
            for t in &ga.tenants {
                for u in trusted.get(t).map(Vec::as_slice).unwrap_or(&[]) {
                    reach.extend(trusted.get(u).map(Vec::as_slice).unwrap_or(&[]));
                }
            }
            let mut close: Vec<(u64, u64, usize)> = Vec::new();
            let mut far: Vec<(u64, u64, usize)> = Vec::new();
            let mut seen: BTreeSet<usize> = BTreeSet::new();
            for t in &reach {
                for &b in open_by_tenant.get(t).into_iter().flatten() {
                    if b != a && seen.insert(b) {
                        if let Some(g) = &slab[b] {
                            let entry = (g.memory, g.compute, b);
                            if near_a.contains(&b) {
                                close.push(entry);
                            } else {
                                far.push(entry);
                            }
                        }
                    }
                }
            }
            spent += seen.len() as u64 + near_a.len() as u64;
            close.sort();
            close.truncate(OPEN);
            far.sort();
            far.truncate(FAR);
            if close.is_empty() && far.is_empty() {
                continue;
            }
            // Sets of `a` with one or two of them whose load fits one GPU fewer: those near `a`
            // first, each part lightest first.
            let sets_of = |partners: &[(u64, u64, usize)]| {
                let mut sets: Vec<(usize, u64, u64, Vec<usize>)> = Vec::new();
                for (x, &(mb, cb, b)) in partners.iter().enumerate() {
                    let (m, c) = (ma + mb, ca + cb);
                    if m <= memory_slices && c <= compute_slices {
                        sets.push((2, m, c, vec![a, b]));
                    }
                    for &(md, cd, d) in &partners[x + 1..] {
                        let (m, c) = (m + md, c + cd);
                        if m <= 2 * memory_slices && c <= 2 * compute_slices {
                            sets.push((3, m, c, vec![a, b, d]));
                        }
                    }
                }
                sets.sort();
                sets
            };
            let mut sets = sets_of(&close);
            let mut both: Vec<(u64, u64, usize)> = close.iter().chain(&far).copied().collect();
            both.sort();
            let known: BTreeSet<Vec<usize>> = sets.iter().map(|s| s.3.clone()).collect();
            sets.extend(sets_of(&both).into_iter().filter(|s| !known.contains(&s.3)));
            for (n, m, c, set) in sets.iter().take(SETS) {
                if spent >= budget {
                    break 'passes;
                }
                let items: Vec<Item> = set
                    .iter()
                    .filter_map(|&g| slab[g].as_ref())
                    .flat_map(|g| g.items.iter().cloned())
                    .collect();
                if let Some(bins) = repack(input, spec, &items, n - 1, LOCAL_NODES, &mut spent) {
                    replace(
                        &mut slab,
                        &mut by_tenant,
                        &mut open_by_tenant,
                        (memory_slices, compute_slices),
                        set,
                        &items,
                        bins,
                    );
                    live -= 1;
                    changed = true;
                    break;
                }
                // A helper GPU near the set that its slices leave room for, the fullest first (its
                // instances are the ones a part-filled GPU lacks).
                let n64 = *n as u64;
                let mut around: BTreeSet<usize> = BTreeSet::new();
                for &g in set {
                    around.extend(near(&slab, &by_tenant, g));
                }
                spent += around.len() as u64;
                let mut helpers: Vec<(std::cmp::Reverse<(u64, u64)>, usize)> = around
                    .iter()
                    .copied()
                    .filter(|h| !set.contains(h))
                    .filter_map(|h| {
                        let gh = slab[h].as_ref()?;
                        (m + gh.memory <= n64 * memory_slices
                            && c + gh.compute <= n64 * compute_slices)
                            .then_some((std::cmp::Reverse((gh.memory, gh.compute)), h))
                    })
                    .collect();
                helpers.sort();
                let helpers: Vec<usize> =
                    helpers.into_iter().map(|(_, h)| h).take(HELPERS).collect();
                let mut done = false;
                for &h in &helpers {
                    let Some(gh) = &slab[h] else { continue };
                    let mut more = items.clone();
                    more.extend(gh.items.iter().cloned());
                    if let Some(bins) = repack(input, spec, &more, *n, LOCAL_NODES, &mut spent) {
                        let mut old = set.clone();
                        old.push(h);
                        replace(
                            &mut slab,
                            &mut by_tenant,
                            &mut open_by_tenant,
                            (memory_slices, compute_slices),
                            &old,
                            &more,
                            bins,
                        );
                        live -= 1;
                        changed = true;
                        done = true;
                        break;
                    }
                }
                // Two part-filled GPUs that trust keeps apart may need two helpers: each takes one
                // side, and their instances make room for each other.
                if !done && *n == 2 {
                    let few = &helpers[..helpers.len().min(PAIR_HELPERS)];
                    'pairs: for (x, &h1) in few.iter().enumerate() {
                        for &h2 in &few[x + 1..] {
                            let (Some(g1), Some(g2)) = (&slab[h1], &slab[h2]) else {
                                continue;
                            };
                            if m + g1.memory + g2.memory > 3 * memory_slices
                                || c + g1.compute + g2.compute > 3 * compute_slices
                            {
                                continue;
                            }
                            let mut more = items.clone();
                            more.extend(g1.items.iter().cloned());
                            more.extend(g2.items.iter().cloned());
                            if let Some(bins) =
                                repack(input, spec, &more, 3, LOCAL_NODES, &mut spent)
                            {
                                let old = vec![set[0], set[1], h1, h2];
                                replace(
                                    &mut slab,
                                    &mut by_tenant,
                                    &mut open_by_tenant,
                                    (memory_slices, compute_slices),
                                    &old,
                                    &more,
                                    bins,
                                );
                                live -= 1;
                                changed = true;
                                done = true;
                                break 'pairs;
                            }
                        }
                    }
                }
                if done {
                    break;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (live < start).then(|| slab.into_iter().flatten().map(|g| g.items).collect())
}

/// A GPU of the local search: its instances, load and tenants.
#[derive(Debug, Clone)]
struct Gpu {
    items: Vec<Item>,
    memory: u64,
    compute: u64,
    tenants: Vec<usize>,
}

impl Gpu {
    fn new(items: Vec<Item>) -> Gpu {
        let tenants: BTreeSet<usize> = items
            .iter()
            .flat_map(|i| i.tenants.iter().copied())
            .collect();
        Gpu {
            memory: items.iter().map(|i| i.memory).sum(),
            compute: items.iter().map(|i| i.compute).sum(),
            tenants: tenants.into_iter().collect(),
            items,
        }
    }
}

/// Replaces the GPUs `old` of the slab by the repacked `bins` of `items`, keeping the tenant index.
fn replace(
    slab: &mut Vec<Option<Gpu>>,
    by_tenant: &mut BTreeMap<usize, BTreeSet<usize>>,
    open_by_tenant: &mut BTreeMap<usize, BTreeSet<usize>>,
    (memory_slices, compute_slices): (u64, u64),
    old: &[usize],
    items: &[Item],
    bins: Vec<Vec<usize>>,
) {
    for &id in old {
        if let Some(g) = slab[id].take() {
            for t in &g.tenants {
                if let Some(ids) = by_tenant.get_mut(t) {
                    ids.remove(&id);
                }
                if let Some(ids) = open_by_tenant.get_mut(t) {
                    ids.remove(&id);
                }
            }
        }
    }
    for b in bins {
        let g = Gpu::new(b.into_iter().map(|i| items[i].clone()).collect());
        let id = slab.len();
        let open = g.memory < memory_slices || g.compute < compute_slices;
        for &t in &g.tenants {
            by_tenant.entry(t).or_default().insert(id);
            if open {
                open_by_tenant.entry(t).or_default().insert(id);
            }
        }
        slab.push(Some(g));
    }
}

#[cfg(test)]
mod tests {
    use crate::generate::small_mig_fleet;
    use crate::solve;

    #[test]
    fn the_exact_search_pairs_a_3g_with_1g_instances_of_a_trusting_tenant() {
        // Seed 38: tenants 1 and 3 distrust each other; tenant 4 trusts both, tenant 0 trusts 3 and 4.
        // Four GPUs hold it only when tenant 4's 3g.40gb sits next to tenant 1's four 1g.10gb and
        // tenant 0's 3g.40gb next to tenant 3's second 1g.20gb.
        let input = small_mig_fleet(38, "H100-SXM5-80GB");
        let plan = solve(&input);
        assert!(crate::check(&input, &plan).is_empty());
        assert_eq!(plan.lower_bound, 4);
        assert_eq!(plan.gpus_used, 4);
    }
}
