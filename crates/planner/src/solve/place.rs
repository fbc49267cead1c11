//! Step 5, nodes: units placed best-fit decreasing onto nodes whose tenants may share a node and whose
//! sharing config stays one config.

use super::pool::PoolCtx;
use crate::unit::{Miss, NodeFill, Rep, Res, Unit};
use std::collections::{BTreeMap, BTreeSet};

impl PoolCtx<'_> {
    /// Nodes, best-fit decreasing: the node of each unit, in the order the nodes were opened; the
    /// replicas of units no node has room for are misses.
    pub(super) fn place(
        &self,
        units: &[Unit],
        tenants: &BTreeSet<usize>,
        misses: &mut Vec<(Rep, Miss)>,
    ) -> Vec<NodeFill> {
        let input = self.input;
        let members_of: Vec<Vec<Rep>> = units.iter().map(Unit::members).collect();
        let mut order: Vec<usize> = (0..units.len()).collect();
        // Larger units first; within a clique, those that carry more replicas (when nodes run out,
        // the replicas left over are the fewest).
        order.sort_by(|&a, &b| {
            let (ua, ub) = (&units[a], &units[b]);
            ub.gpus
                .cmp(&ua.gpus)
                .then(ua.clique.cmp(&ub.clique))
                .then(members_of[b].len().cmp(&members_of[a].len()))
                .then(members_of[a].cmp(&members_of[b]))
        });
        let cap = self.pool.gpus_per_node;
        let mut nodes: Vec<NodeFill> = Vec::new();
        // Nodes with a free GPU (a full node takes nothing more), by the tenants on them: a unit only
        // ever joins a node whose tenants all may share a node with its own, so the candidates are the
        // open nodes of those tenants, visited in the order the nodes were opened.
        let mut open_by_tenant: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        let mut allowed_for: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
        for u in order {
            let unit = &units[u];
            let allowed = allowed_for
                .entry(unit.tenants.iter().copied().collect())
                .or_insert_with(|| {
                    tenants
                        .iter()
                        .copied()
                        .filter(|&x| unit.tenants.iter().all(|&b| input.may_share_node(x, b)))
                        .collect()
                });
            let mut candidates: BTreeSet<usize> = BTreeSet::new();
            for x in allowed.iter() {
                if let Some(open) = open_by_tenant.get(x) {
                    candidates.extend(open.iter().copied());
                }
            }
            let mut best: Option<(u32, bool, usize)> = None;
            for &ni in &candidates {
                let n = &nodes[ni];
                if !self.compatible(n, unit, cap) {
                    continue;
                }
                let left = cap - n.used - unit.gpus;
                let same = n.cliques.contains(&unit.clique);
                let better = match best {
                    None => true,
                    Some((bl, bs, _)) => left < bl || (left == bl && same && !bs),
                };
                if better {
                    best = Some((left, same, ni));
                }
            }
            let target = match best {
                Some((_, _, ni)) => Some(ni),
                None if (nodes.len() as u32) < self.pool.nodes && unit.gpus <= cap => {
                    nodes.push(NodeFill::default());
                    Some(nodes.len() - 1)
                }
                None => None,
            };
            match target {
                Some(ni) => {
                    let n = &mut nodes[ni];
                    n.units.push(u);
                    n.used += unit.gpus;
                    n.tenants.extend(unit.tenants.iter().copied());
                    for (res, s) in &unit.keys {
                        n.keys.insert(*res, *s);
                        if let Res::Mig(p) = res {
                            n.mig_tenants
                                .entry(*p)
                                .or_default()
                                .extend(unit.tenants.iter().copied());
                        }
                    }
                    n.cliques.insert(unit.clique);
                    n.has_mig |= unit.has_mig();
                    n.has_mps |= unit.has_mps();
                    n.cc = Some(unit.cc);
                    for t in &n.tenants {
                        let open = open_by_tenant.entry(*t).or_default();
                        if n.used >= cap {
                            open.remove(&ni);
                        } else {
                            open.insert(ni);
                        }
                    }
                }
                None => {
                    let reason = format!(
                        "pool {} has no room: its {} nodes are in use by replicas they cannot be mixed with",
                        self.pool.name, self.pool.nodes
                    );
                    for &r in &members_of[u] {
                        misses.push((r, Miss::Capacity(reason.clone())));
                    }
                }
            }
        }
        nodes
    }

    pub(super) fn compatible(&self, n: &NodeFill, u: &Unit, cap: u32) -> bool {
        let input = self.input;
        if n.used + u.gpus > cap {
            return false;
        }
        match n.cc {
            Some(cc) if cc != u.cc => return false,
            Some(true) if n.tenants != u.tenants => return false,
            _ => {}
        }
        for (res, s) in &u.keys {
            if let Some(have) = n.keys.get(res) {
                if have != s {
                    return false;
                }
            }
        }
        if (u.has_mps() && n.has_mig) || (u.has_mig() && n.has_mps) {
            return false;
        }
        for &a in &n.tenants {
            for &b in &u.tenants {
                if !input.may_share_node(a, b) {
                    return false;
                }
            }
        }
        // Tenants without trust must not request one MIG profile on one node: the device plugin may
        // hand them instances of one GPU.
        for res in u.keys.keys() {
            if let Res::Mig(p) = res {
                if let Some(users) = n.mig_tenants.get(p) {
                    if users
                        .iter()
                        .any(|&a| u.tenants.iter().any(|&b| !input.may_share_gpu(a, b)))
                    {
                        return false;
                    }
                }
            }
        }
        true
    }
}
