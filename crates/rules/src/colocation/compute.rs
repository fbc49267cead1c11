//! Building the co-location analysis: [`Colocation::compute`] groups the fleet's scheduled workloads by
//! node, device unit and tenant, and its unscheduled ones by permitted node set, then lists the sites;
//! the queries the rules and the report ask of it. The sites and how two members meet are the parent
//! module's.

use super::*;

impl Colocation {
    /// Analyses `fleet`; `tenant_of[w]` is the tenant of workload `w` (`None` for platform workloads,
    /// which the analysis ignores).
    pub(crate) fn compute(fleet: &Fleet, tenant_of: &[Option<TenantId>]) -> Colocation {
        #[cfg(test)]
        tests::COMPUTED.with(|n| n.set(n.get() + 1));
        let mut c = Colocation::default();
        c.classify_nodes(fleet);
        let daemon_pods = daemonset_pods(fleet);
        // The fleet's node sets, restricted to GPU nodes and interned here.
        let mut interned: BTreeMap<NodeSetId, Option<usize>> = BTreeMap::new();

        // Scheduled workloads, by node; DaemonSet templates run on every node they select.
        for (wid, w) in fleet.workloads.iter().enumerate() {
            let Some(tenant) = tenant_of.get(wid).copied().flatten() else {
                continue;
            };
            let gpu_nodes = |ids: &[NodeId]| -> Vec<NodeId> {
                ids.iter()
                    .copied()
                    .filter(|n| fleet.nodes.get(*n).is_some_and(|n| n.gpu.is_some()))
                    .collect()
            };
            let nodes: Vec<NodeId> = match w.placement.node {
                Some(n) => gpu_nodes(&[n]),
                None if w.kind == WorkloadKind::DaemonSet => {
                    if daemon_pods.contains(&(w.namespace.as_str(), w.object.name.as_str())) {
                        continue;
                    }
                    gpu_nodes(fleet.permitted_nodes(w))
                }
                None => {
                    let set = match interned.get(&w.placement.permitted) {
                        Some(set) => *set,
                        None => {
                            let nodes = gpu_nodes(fleet.permitted_nodes(w));
                            let set = if nodes.is_empty() {
                                None
                            } else {
                                Some(c.intern(nodes))
                            };
                            interned.insert(w.placement.permitted, set);
                            set
                        }
                    };
                    if let Some(set) = set {
                        c.workload_set.insert(wid, set);
                        c.set_tenants[set].entry(tenant).or_default().push(wid);
                    }
                    continue;
                }
            };
            for n in &nodes {
                c.placed
                    .entry(*n)
                    .or_default()
                    .entry(tenant)
                    .or_default()
                    .push(wid);
            }
            if !nodes.is_empty() {
                c.workload_nodes.insert(wid, nodes);
            }
        }
        for (set, nodes) in c.sets.iter().enumerate() {
            for n in nodes.iter() {
                c.sets_of_node.entry(*n).or_default().push(set);
            }
        }
        for (node, tenants) in &c.placed {
            let Some(gpu) = fleet.nodes.get(*node).and_then(|n| n.gpu.as_ref()) else {
                continue;
            };
            for wid in tenants.values().flatten() {
                if let Some(u) = fleet.workloads.get(*wid).and_then(|w| device_use(w, gpu)) {
                    c.uses.insert((*node, *wid), u);
                }
            }
        }

        c.scheduled_sites(fleet);
        let groups = c.groups(fleet);
        c.permitted_sites(fleet, &groups);
        c.sites.retain(|s| {
            s.members.len() >= 2 && (!s.permitted || s.members.values().any(|m| m.may))
        });
        // Each member's workloads sorted, so the rules can look one up.
        for site in &mut c.sites {
            for m in site.members.values_mut() {
                m.workloads.sort_unstable();
                m.workloads.dedup();
            }
        }
        for (i, site) in c.sites.iter().enumerate() {
            for t in site.members.keys() {
                c.sites_of.entry(*t).or_default().push(i);
            }
        }
        c
    }

    fn classify_nodes(&mut self, fleet: &Fleet) {
        let mut classes: BTreeMap<ConfigKey, usize> = BTreeMap::new();
        for (id, node) in fleet.gpu_nodes() {
            let Some(gpu) = &node.gpu else { continue };
            let next = classes.len();
            let class = *classes.entry(ConfigKey::of(gpu)).or_insert(next);
            if class == self.class_rep.len() {
                self.class_rep.push(id);
            }
            self.node_class.insert(id, class);
        }
    }

    /// The node group of a GPU node: nodes of one GPU model and one sharing configuration.
    pub fn group_of(&self, node: NodeId) -> Option<usize> {
        self.node_class.get(&node).copied()
    }

    /// Adds a site the fleet alone cannot see (the API server, from the tenancy), indexed like the
    /// others.
    pub fn add_site(&mut self, site: Site) {
        if site.members.len() < 2 {
            return;
        }
        let i = self.sites.len();
        for t in site.members.keys() {
            self.sites_of.entry(*t).or_default().push(i);
        }
        self.sites.push(site);
    }

    /// The first node of a node group (its configuration speaks for the group).
    pub fn group_rep(&self, group: usize) -> Option<NodeId> {
        self.class_rep.get(group).copied()
    }

    fn intern(&mut self, nodes: Vec<NodeId>) -> usize {
        // Permitted node lists are sorted by ingest; sort again so equal sets intern once.
        let mut nodes = nodes;
        nodes.sort_unstable();
        nodes.dedup();
        let nodes: Arc<[NodeId]> = nodes.into();
        if let Some(i) = self.set_index.get(&nodes) {
            return *i;
        }
        self.sets.push(nodes.clone());
        self.set_tenants.push(BTreeMap::new());
        self.set_index.insert(nodes, self.sets.len() - 1);
        self.sets.len() - 1
    }

    /// Scheduled workloads, node by node: the node, each shared device unit (split by the devices the
    /// objects pin workloads to) and each MIG GPU.
    fn scheduled_sites(&mut self, fleet: &Fleet) {
        for (node_id, tenants) in &self.placed {
            let Some(gpu) = fleet.nodes.get(*node_id).and_then(|n| n.gpu.as_ref()) else {
                continue;
            };
            let group = self.node_class.get(node_id).copied();
            let one: Arc<[NodeId]> = Arc::from(vec![*node_id]);
            let site = |level: Level, judge: Judge, members: BTreeMap<TenantId, Member>| Site {
                level,
                group,
                nodes: one.clone(),
                permitted: false,
                members,
                unit: match &judge {
                    Judge::Device { unit, .. } => Some(unit.clone()),
                    _ => None,
                },
                judge,
            };
            if tenants.len() >= 2 {
                let members = tenants
                    .iter()
                    .map(|(t, ws)| {
                        (
                            *t,
                            Member {
                                workloads: ws.clone(),
                                ..Member::default()
                            },
                        )
                    })
                    .collect();
                self.sites.push(site(Level::Node, Judge::SameNode, members));
            }
            // Device units and MIG GPUs.
            let mut units: BTreeMap<(Unit, Mechanism), BTreeMap<TenantId, Members>> =
                BTreeMap::new();
            let mut mig: BTreeMap<TenantId, Members> = BTreeMap::new();
            for (tenant, workloads) in tenants {
                for wid in workloads {
                    let Some(w) = fleet.workloads.get(*wid) else {
                        continue;
                    };
                    let Some(u) = self.uses.get(&(*node_id, *wid)) else {
                        continue;
                    };
                    if u.mechanism.is_mig() {
                        let m = mig.entry(*tenant).or_default();
                        m.add(*wid, w);
                        merge_profiles(&mut m.mig_profiles, &u.mig_profiles, m.workloads.len());
                    }
                    if !u.unit.is_shared() {
                        continue;
                    }
                    let m = units
                        .entry((u.unit.clone(), u.mechanism))
                        .or_default()
                        .entry(*tenant)
                        .or_default();
                    m.add(*wid, w);
                    m.demand = m.demand.saturating_add(u.demand);
                }
            }
            let mut seen: BTreeSet<(Level, Vec<(TenantId, bool)>)> = BTreeSet::new();
            for ((unit, mechanism), members) in units {
                if members.len() < 2 {
                    continue;
                }
                // A KAI group names one GPU only where the device plugin gives the group's
                // reservation pod a whole GPU, not a replica of one.
                let groups_named = members.values().any(|m| {
                    m.records
                        .iter()
                        .any(|d| matches!(d, PhysicalDevice::KaiGroup(_)))
                });
                let whole = gpu.sharing.replicas_for(resource::GPU) <= 1;
                let pins = unit_pins(&members, unit.recorded() && (whole || !groups_named));
                let all: BTreeSet<&Pin> = pins.values().flatten().flatten().collect();
                let keys: Vec<Option<Pin>> = if all.is_empty() {
                    vec![None]
                } else {
                    all.into_iter().cloned().map(Some).collect()
                };
                for key in keys {
                    let chosen: BTreeMap<TenantId, Member> = members
                        .iter()
                        .filter(|(t, _)| match (&key, &pins[*t]) {
                            (Some(k), Some(p)) => p.contains(k),
                            _ => true,
                        })
                        .map(|(t, m)| {
                            let pinned = match (&key, &pins[t]) {
                                (Some(k), Some(p)) => p.contains(k) && m.observed_at(k),
                                _ => false,
                            };
                            (
                                *t,
                                Member {
                                    workloads: m.workloads.clone(),
                                    demand: m.demand,
                                    pinned,
                                    ..Member::default()
                                },
                            )
                        })
                        .collect();
                    let level = Level::Device(mechanism);
                    let signature = (level, chosen.iter().map(|(t, m)| (*t, m.pinned)).collect());
                    if chosen.len() < 2 || !seen.insert(signature) {
                        continue;
                    }
                    let judge = Judge::Device {
                        unit: unit.clone(),
                        pin: key,
                    };
                    self.sites.push(site(level, judge, chosen));
                }
            }
            let record_kinds: BTreeSet<u8> = mig
                .values()
                .flat_map(|m| m.records.iter().map(record_kind))
                .collect();
            if mig.len() >= 2 && record_kinds.len() == 1 && mig.values().all(|m| m.recorded()) {
                // A scheduler that cuts MIG instances on demand (Volcano's and HAMi's dynamic MIG)
                // records the GPU each one is on, which the node's labels may not list: tenants
                // whose records name one GPU share it at the MIG level, and records naming
                // different GPUs keep them apart.
                let gpus: BTreeSet<&PhysicalDevice> =
                    mig.values().flat_map(|m| &m.records).collect();
                for g in gpus {
                    let chosen: BTreeMap<TenantId, Member> = mig
                        .iter()
                        .filter(|(_, m)| m.records.contains(g))
                        .map(|(t, m)| {
                            (
                                *t,
                                Member {
                                    workloads: m.workloads.clone(),
                                    pinned: true,
                                    mig_gpus: m.records.len(),
                                    ..Member::default()
                                },
                            )
                        })
                        .collect();
                    let signature = (
                        Level::MigGpu,
                        chosen.iter().map(|(t, m)| (*t, m.pinned)).collect(),
                    );
                    if chosen.len() < 2 || !seen.insert(signature) {
                        continue;
                    }
                    self.sites.push(site(Level::MigGpu, Judge::MigGpu, chosen));
                }
            } else if mig.len() >= 2 {
                let counts: BTreeMap<TenantId, usize> = mig
                    .iter()
                    .map(|(t, m)| {
                        let n = (0..gpu.gpus.len())
                            .filter(|g| m.on_mig_gpu(gpu, *g))
                            .count();
                        (*t, n)
                    })
                    .collect();
                for (g, physical) in gpu.gpus.iter().enumerate() {
                    if physical.mig.len() < 2 {
                        continue;
                    }
                    let chosen: BTreeMap<TenantId, Member> = mig
                        .iter()
                        .filter(|(_, m)| m.on_mig_gpu(gpu, g))
                        .map(|(t, m)| {
                            (
                                *t,
                                Member {
                                    workloads: m.workloads.clone(),
                                    pinned: m.observed_on_gpu(gpu, g),
                                    mig_gpus: counts[t],
                                    ..Member::default()
                                },
                            )
                        })
                        .collect();
                    let signature = (
                        Level::MigGpu,
                        chosen.iter().map(|(t, m)| (*t, m.pinned)).collect(),
                    );
                    if chosen.len() < 2 || !seen.insert(signature) {
                        continue;
                    }
                    self.sites.push(site(Level::MigGpu, Judge::MigGpu, chosen));
                }
            }
        }
    }

    /// Unscheduled workloads grouped by set, tenant and request.
    fn groups(&self, fleet: &Fleet) -> Vec<Vec<Group>> {
        let mut out = Vec::with_capacity(self.sets.len());
        for tenants in &self.set_tenants {
            let mut by_key: BTreeMap<(TenantId, RequestKey), Vec<WorkloadId>> = BTreeMap::new();
            for (tenant, workloads) in tenants {
                for wid in workloads {
                    if let Some(w) = fleet.workloads.get(*wid) {
                        by_key
                            .entry((*tenant, RequestKey::of(w)))
                            .or_default()
                            .push(*wid);
                    }
                }
            }
            out.push(
                by_key
                    .into_iter()
                    .map(|((tenant, _), workloads)| Group {
                        tenant,
                        rep: workloads[0],
                        workloads: workloads.into(),
                    })
                    .collect(),
            );
        }
        out
    }

    /// Permitted sites: the GPU nodes split into atoms (one node group, the same permitted sets), and
    /// per atom the tenants that may be placed there (`may`) with those scheduled on its nodes. Node
    /// sets are intersected once per atom, never per pair of tenants.
    fn permitted_sites(&mut self, fleet: &Fleet, groups: &[Vec<Group>]) {
        let mut atoms: BTreeMap<(usize, &[usize]), Vec<NodeId>> = BTreeMap::new();
        for (node, sets) in &self.sets_of_node {
            if let Some(class) = self.node_class.get(node) {
                atoms
                    .entry((*class, sets.as_slice()))
                    .or_default()
                    .push(*node);
            }
        }
        let mut sites = Vec::new();
        for ((class, sets), nodes) in atoms {
            let Some(rep) = self
                .class_rep
                .get(class)
                .and_then(|n| fleet.nodes.get(*n))
                .and_then(|n| n.gpu.as_ref())
            else {
                continue;
            };
            let nodes: Arc<[NodeId]> = nodes.into();
            let mut host: BTreeMap<TenantId, Member> = BTreeMap::new();
            let mut units: BTreeMap<(Unit, Mechanism), BTreeMap<TenantId, Member>> =
                BTreeMap::new();
            // Per MIG GPU index of the group's layout: who may get an instance there.
            let mut mig: Vec<BTreeMap<TenantId, Member>> = vec![BTreeMap::new(); rep.gpus.len()];
            let add = |into: &mut BTreeMap<TenantId, Member>,
                       t: TenantId,
                       may: bool,
                       ws: &[WorkloadId]| {
                let m = into.entry(t).or_default();
                m.may |= may;
                m.workloads.extend_from_slice(ws);
            };
            for set in sets {
                for g in &groups[*set] {
                    add(&mut host, g.tenant, true, &g.workloads);
                    let Some(u) = fleet.workloads.get(g.rep).and_then(|w| device_use(w, rep))
                    else {
                        continue;
                    };
                    if u.unit.is_shared() {
                        let into = units.entry((u.unit.clone(), u.mechanism)).or_default();
                        add(into, g.tenant, true, &g.workloads);
                    }
                    if u.mechanism.is_mig() {
                        for (i, physical) in rep.gpus.iter().enumerate() {
                            if physical.mig.len() >= 2 && offers(&u.mig_profiles, physical) {
                                add(&mut mig[i], g.tenant, true, &g.workloads);
                            }
                        }
                    }
                }
            }
            for node in nodes.iter() {
                let (Some(placed), Some(gpu)) = (
                    self.placed.get(node),
                    fleet.nodes.get(*node).and_then(|n| n.gpu.as_ref()),
                ) else {
                    continue;
                };
                for (t, ws) in placed {
                    add(&mut host, *t, false, ws);
                    for wid in ws {
                        let Some(w) = fleet.workloads.get(*wid) else {
                            continue;
                        };
                        let Some(u) = self.uses.get(&(*node, *wid)) else {
                            continue;
                        };
                        if u.unit.is_shared() {
                            let into = units.entry((u.unit.clone(), u.mechanism)).or_default();
                            add(into, *t, false, &[*wid]);
                        }
                        if u.mechanism.is_mig() {
                            for (i, physical) in gpu.gpus.iter().enumerate() {
                                let slots = &w.placement.devices;
                                let here = if slots.is_empty() {
                                    offers(&u.mig_profiles, physical)
                                } else {
                                    slots.iter().any(|s| s.gpu == physical.index)
                                };
                                if physical.mig.len() >= 2 && here && i < mig.len() {
                                    add(&mut mig[i], *t, false, &[*wid]);
                                }
                            }
                        }
                    }
                }
            }
            let site =
                |level: Level, unit: Option<Unit>, members: BTreeMap<TenantId, Member>| Site {
                    level,
                    group: Some(class),
                    nodes: nodes.clone(),
                    permitted: true,
                    members,
                    judge: Judge::Permitted,
                    unit,
                };
            sites.push(site(Level::Node, None, host));
            for ((unit, mechanism), members) in units {
                sites.push(site(Level::Device(mechanism), Some(unit), members));
            }
            let mut seen: BTreeSet<Vec<(TenantId, bool)>> = BTreeSet::new();
            for members in mig {
                if seen.insert(members.iter().map(|(t, m)| (*t, m.may)).collect()) {
                    sites.push(site(Level::MigGpu, None, members));
                }
            }
        }
        for site in &mut sites {
            for m in site.members.values_mut() {
                m.workloads.sort_unstable();
                m.workloads.dedup();
            }
        }
        // A permitted site of one node whose tenants all meet in a scheduled site of that node already
        // (the same level and device unit) adds no pair: it is left out.
        let mut scheduled: BTreeMap<(Level, NodeId, Option<&Unit>), Vec<&Site>> = BTreeMap::new();
        for s in &self.sites {
            if let [node] = *s.nodes {
                scheduled
                    .entry((s.level, node, s.unit.as_ref()))
                    .or_default()
                    .push(s);
            }
        }
        let redundant: Vec<bool> = sites
            .iter()
            .map(|p| {
                let [node] = *p.nodes else { return false };
                // Every two members of a scheduled site meet there.
                scheduled
                    .get(&(p.level, node, p.unit.as_ref()))
                    .is_some_and(|ss| {
                        ss.iter().any(|s| {
                            !s.permitted && p.members.keys().all(|t| s.members.contains_key(t))
                        })
                    })
            })
            .collect();
        self.sites.extend(
            sites
                .into_iter()
                .zip(redundant)
                .filter(|(_, r)| !r)
                .map(|(s, _)| s),
        );
    }

    /// Whether a scheduled workload gets its GPU on `node` through an MPS server.
    pub fn runs_mps(&self, node: NodeId) -> bool {
        self.uses
            .range((node, 0)..=(node, WorkloadId::MAX))
            .any(|(_, u)| u.mechanism.is_mps())
    }

    /// Tenants on a GPU node: scheduled there (`observed`), or permitted there (`permitted`).
    pub fn tenants_on(&self, node: NodeId) -> BTreeMap<TenantId, Certainty> {
        let mut out: BTreeMap<TenantId, Certainty> = BTreeMap::new();
        if let Some(placed) = self.placed.get(&node) {
            for t in placed.keys() {
                out.insert(*t, Certainty::Observed);
            }
        }
        for set in self.sets_of_node.get(&node).into_iter().flatten() {
            for t in self.set_tenants[*set].keys() {
                out.entry(*t).or_insert(Certainty::Permitted);
            }
        }
        out
    }

    /// The workloads of `tenant` on a GPU node (scheduled there, or permitted there).
    pub fn workloads_on(&self, node: NodeId, tenant: TenantId) -> Vec<WorkloadId> {
        let mut out: Vec<WorkloadId> = self
            .placed
            .get(&node)
            .and_then(|p| p.get(&tenant))
            .cloned()
            .unwrap_or_default();
        for set in self.sets_of_node.get(&node).into_iter().flatten() {
            if let Some(ws) = self.set_tenants[*set].get(&tenant) {
                out.extend(ws);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How a workload scheduled on a GPU node (a DaemonSet's template on each node it selects) gets
    /// its GPU there; `None` when it requests none or is not scheduled there.
    pub fn device_use_on(&self, node: NodeId, workload: WorkloadId) -> Option<&DeviceUse> {
        self.uses.get(&(node, workload))
    }

    /// Whether the workload runs or may run on some GPU node.
    pub fn reaches_gpu(&self, workload: WorkloadId) -> bool {
        self.workload_nodes.contains_key(&workload) || self.workload_set.contains_key(&workload)
    }

    /// GPU nodes the workload runs on (`observed`) or may run on (`permitted`); empty when it can reach
    /// no GPU node.
    pub fn reach_of(&self, workload: WorkloadId) -> (Certainty, Vec<NodeId>) {
        if let Some(nodes) = self.workload_nodes.get(&workload) {
            return (Certainty::Observed, nodes.clone());
        }
        match self.workload_set.get(&workload) {
            Some(set) => (Certainty::Permitted, self.sets[*set].to_vec()),
            None => (Certainty::Permitted, Vec::new()),
        }
    }

    /// Where a workload gets its GPU: one seat per mechanism, with the nodes and the certainty.
    pub fn seats(&self, fleet: &Fleet, workload: WorkloadId) -> Vec<Seat> {
        let Some(w) = fleet.workloads.get(workload) else {
            return Vec::new();
        };
        let (certainty, nodes) = self.reach_of(workload);
        let mut by_mechanism: BTreeMap<Mechanism, Vec<NodeId>> = BTreeMap::new();
        let mut class_mechanism: BTreeMap<usize, Option<Mechanism>> = BTreeMap::new();
        for n in nodes {
            let Some(gpu) = fleet.nodes.get(n).and_then(|n| n.gpu.as_ref()) else {
                continue;
            };
            let m = match self.node_class.get(&n) {
                Some(class) => *class_mechanism
                    .entry(*class)
                    .or_insert_with(|| Mechanism::of_workload(w, gpu)),
                None => Mechanism::of_workload(w, gpu),
            };
            if let Some(m) = m {
                by_mechanism.entry(m).or_default().push(n);
            }
        }
        by_mechanism
            .into_iter()
            .map(|(mechanism, nodes)| Seat {
                mechanism,
                certainty,
                nodes,
            })
            .collect()
    }
}

/// Names of DaemonSets whose pods are in the input (their pods stand for them).
fn daemonset_pods(fleet: &Fleet) -> BTreeSet<(&str, &str)> {
    fleet
        .workloads
        .iter()
        .filter(|w| w.kind == WorkloadKind::Pod)
        .filter_map(|w| {
            let owner = w.owner.as_deref()?;
            let name = owner.strip_prefix("DaemonSet/")?;
            Some((w.namespace.as_str(), name))
        })
        .collect()
}

fn merge_profiles(
    into: &mut Option<BTreeSet<String>>,
    from: &Option<BTreeSet<String>>,
    count: usize,
) {
    match (into.as_mut(), from) {
        // The first workload sets the profiles; any workload that may get any profile widens to all.
        (_, None) => *into = None,
        (Some(set), Some(p)) => set.extend(p.iter().cloned()),
        (None, Some(p)) if count == 1 => *into = Some(p.clone()),
        (None, Some(_)) => {}
    }
}
