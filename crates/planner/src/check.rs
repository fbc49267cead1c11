//! An independent checker of plans: it reads only the plan as written (nodes, GPUs, instances,
//! assignments, sharing configs) and the input, never the solver's internals, and lists every
//! constraint of the plan specification the plan breaks. The property tests run every plan through it.
//!
//! Shared devices are judged the way the device plugin hands them out: a pod gets *some* device of
//! the resource it requests on its node, not the one the plan names, so trust between users of a
//! shared resource is checked per node and resource, not per device.

use crate::file::PlanInput;
use crate::plan::{DeviceSharing, Plan, PlanGpu, PlanNode};
use gpu_trust_model::catalogue::{self, GpuModel};
use gpu_trust_model::fleet::{SharingStrategy, WorkloadClass};
use gpu_trust_model::geometry;
use gpu_trust_model::isolation::{Mechanism, Seat, SeatRow, Traits};
use gpu_trust_model::{labels, resource};
use gpu_trust_policy::Latency;
use std::collections::{BTreeMap, BTreeSet};

/// A broken constraint, in words.
pub type Violation = String;

/// Users of each device of a GPU (the whole GPU, or a MIG instance by profile and start): workload,
/// tenant and replica.
type DeviceUsers = BTreeMap<Option<(String, u8)>, Vec<(usize, usize, u32)>>;
/// Where each replica is: node, GPU index, MIG profile, and how its device is handed out (sharing and
/// replicas advertised).
type Placements<'a> =
    BTreeMap<(&'a str, u32), Vec<(&'a str, u32, Option<&'a str>, (DeviceSharing, u32))>>;

struct Ctx<'a> {
    input: &'a PlanInput,
    tenant_index: BTreeMap<&'a str, usize>,
    workload_index: BTreeMap<&'a str, usize>,
    out: Vec<Violation>,
}

/// Memory and compute fraction of one device (whole GPU or instance), before sharing.
fn device_capacity(model: &GpuModel, profile: Option<&str>) -> Option<(u64, f64)> {
    match profile {
        None => Some((model.memory_mib, 1.0)),
        Some(name) => {
            let mig = model.mig?;
            let p = mig.profile(name)?;
            let full_sms = mig
                .profiles
                .iter()
                .filter(|q| q.compute_slices == mig.compute_slices)
                .find_map(|q| q.sms);
            let frac = match (p.sms, full_sms) {
                (Some(s), Some(f)) if f > 0 => f64::from(s) / f64::from(f),
                _ => f64::from(p.compute_slices) / f64::from(mig.compute_slices.max(1)),
            };
            Some((p.memory_mib, frac))
        }
    }
}

fn resource_of(model: &GpuModel, profile: Option<&str>) -> String {
    match profile {
        None => resource::GPU.to_string(),
        Some(name) => model
            .profile(name)
            .map(|p| p.resource_name())
            .unwrap_or_else(|| catalogue::mig_resource(name)),
    }
}

impl Ctx<'_> {
    fn bad(&mut self, v: impl Into<String>) {
        self.out.push(v.into());
    }

    fn tenant(&self, name: &str) -> Option<usize> {
        self.tenant_index.get(name).copied()
    }

    fn pair_check(
        &mut self,
        tenants: &BTreeSet<usize>,
        ok: impl Fn(&PlanInput, usize, usize) -> bool,
        what: &str,
    ) {
        let list: Vec<usize> = tenants.iter().copied().collect();
        for (i, &a) in list.iter().enumerate() {
            for &b in &list[i + 1..] {
                if !ok(self.input, a, b) {
                    let (na, nb) = (
                        self.input.tenants[a].name.clone(),
                        self.input.tenants[b].name.clone(),
                    );
                    let t = self.input.trust[a][b];
                    self.bad(format!("{what}: tenants {na} and {nb} (trust {t})"));
                }
            }
        }
    }

    fn gpu(&mut self, node: &PlanNode, model: &GpuModel, gpu: &PlanGpu) {
        let input = self.input;
        let at = format!("{} GPU {}", node.name, gpu.index);
        if gpu.index >= node.gpu_count {
            self.bad(format!(
                "{at}: index beyond the node's {} GPUs",
                node.gpu_count
            ));
        }
        if !gpu.mig.is_empty() {
            if !model.supports_mig() {
                self.bad(format!("{at}: MIG on {}, which has no MIG", model.id));
            }
            let placement: Vec<(&str, u8)> = gpu
                .mig
                .iter()
                .map(|m| (m.profile.as_str(), m.start))
                .collect();
            if let Err(e) = geometry::validate_placement(model, &placement) {
                self.bad(format!("{at}: invalid MIG layout: {e}"));
            }
        }
        // Devices of this GPU: the whole GPU (None) or each instance (profile, start).
        let mut by_device: DeviceUsers = BTreeMap::new();
        let mut gpu_tenants = BTreeSet::new();
        for a in &gpu.assignments {
            let Some(t) = self.tenant(&a.tenant) else {
                self.bad(format!("{at}: unknown tenant {}", a.tenant));
                continue;
            };
            let Some(&w) = self.workload_index.get(a.workload.as_str()) else {
                self.bad(format!("{at}: unknown workload {}", a.workload));
                continue;
            };
            if input.workloads[w].tenant != t {
                self.bad(format!("{at}: {} is not tenant {}'s", a.workload, a.tenant));
            }
            gpu_tenants.insert(t);
            let device = match (&a.profile, a.start) {
                (Some(p), Some(s)) => {
                    if !gpu.mig.iter().any(|m| &m.profile == p && m.start == s) {
                        self.bad(format!(
                            "{at}: {}#{} is assigned {p}@{s}, which the layout lacks",
                            a.workload, a.replica
                        ));
                    }
                    Some((p.clone(), s))
                }
                (None, None) => {
                    if !gpu.mig.is_empty() {
                        self.bad(format!(
                            "{at}: {}#{} is given the whole GPU, which has MIG on",
                            a.workload, a.replica
                        ));
                    }
                    None
                }
                _ => {
                    self.bad(format!(
                        "{at}: {}#{} has a profile without a start",
                        a.workload, a.replica
                    ));
                    None
                }
            };
            by_device.entry(device).or_default().push((w, t, a.replica));
        }
        self.pair_check(
            &gpu_tenants,
            |i, a, b| i.may_share_gpu(a, b),
            &format!("{at}: one physical GPU for tenants without trust"),
        );
        for (device, users) in &by_device {
            let (profile, sharing, replicas) = match device {
                None => (None, gpu.sharing, gpu.replicas),
                Some((p, s)) => match gpu.mig.iter().find(|m| &m.profile == p && m.start == *s) {
                    Some(m) => (Some(p.as_str()), m.sharing, m.replicas),
                    None => continue,
                },
            };
            let Some((mem, frac)) = device_capacity(model, profile) else {
                self.bad(format!("{at}: profile {profile:?} unknown on {}", model.id));
                continue;
            };
            let replicas = replicas.max(1);
            let mechanism = match (profile.is_some(), sharing) {
                (false, DeviceSharing::Exclusive) => Mechanism::Exclusive,
                (false, DeviceSharing::TimeSlicing) => Mechanism::TimeSlicing,
                (false, DeviceSharing::Mps) => Mechanism::Mps,
                (true, DeviceSharing::Exclusive) => Mechanism::MigInstance,
                (true, DeviceSharing::TimeSlicing) => Mechanism::MigTimeSlicing,
                (true, DeviceSharing::Mps) => Mechanism::MigMps,
            };
            let seat = Seat {
                mechanism,
                partial: profile.is_some_and(|p| model.is_partial(p)),
                cc: node.confidential,
            };
            if users.len() as u32 > replicas {
                self.bad(format!(
                    "{at}: {} replicas on a device advertised {replicas} times",
                    users.len()
                ));
            }
            if sharing == DeviceSharing::Exclusive && replicas != 1 {
                self.bad(format!(
                    "{at}: exclusive device advertised {replicas} times"
                ));
            }
            let tenants: BTreeSet<usize> = users.iter().map(|u| u.1).collect();
            if users.len() > 1 {
                self.pair_check(
                    &tenants,
                    |i, a, b| i.may_share_device(a, b),
                    &format!("{at}: one shared device for tenants that may not share one"),
                );
            }
            for &(w, _, r) in users {
                let wl = &input.workloads[w];
                let who = format!("{at}: {}#{r}", wl.name);
                if let Some(peak) = wl.peak_memory_mib {
                    let share = mem / u64::from(replicas);
                    if peak > share {
                        self.bad(format!("{who}: peak {peak} MiB over its share {share} MiB"));
                    }
                }
                if let Some(c) = wl.compute {
                    if c > frac / f64::from(replicas) + 1e-9 {
                        self.bad(format!("{who}: compute {c} over its share"));
                    }
                }
                // The model's rows about one workload, which the solver and the audit read too.
                let traits = Traits {
                    training: wl.kind == WorkloadClass::Training,
                    latency_critical: wl.latency == Latency::Critical,
                    confidential: input.tenants[wl.tenant].confidential,
                };
                for row in SeatRow::refusing(traits, seat) {
                    self.bad(format!("{who}: a seat {} refuses it ({seat:?})", row.rule));
                }
                // The node's device plugin config must say what the device is.
                let res = resource_of(model, profile);
                let advertised = node.sharing.resources.get(&res).copied();
                match sharing {
                    DeviceSharing::Exclusive => {
                        if advertised.is_some() {
                            self.bad(format!("{who}: exclusive {res}, but the node shares {res}"));
                        }
                    }
                    DeviceSharing::TimeSlicing => {
                        if node.sharing.strategy != SharingStrategy::TimeSlicing
                            || advertised != Some(replicas)
                        {
                            self.bad(format!("{who}: time-sliced {res} not in the node's config"));
                        }
                    }
                    DeviceSharing::Mps => {
                        if node.sharing.strategy != SharingStrategy::Mps
                            || advertised != Some(replicas)
                            || profile.is_some()
                        {
                            self.bad(format!("{who}: MPS {res} not in the node's config"));
                        }
                    }
                }
            }
        }
    }

    fn node(&mut self, node: &PlanNode) {
        let input = self.input;
        let Some(pool) = input.pools.iter().find(|p| p.name == node.pool) else {
            self.bad(format!("{}: unknown pool {}", node.name, node.pool));
            return;
        };
        if node.gpu_count != pool.gpus_per_node {
            self.bad(format!(
                "{}: {} GPUs, pool has {}",
                node.name, node.gpu_count, pool.gpus_per_node
            ));
        }
        let Some(model) = catalogue::lookup(&node.model) else {
            self.bad(format!("{}: unknown model {}", node.name, node.model));
            return;
        };
        if node.confidential && (pool.tee.is_none() || !model.cc_capable()) {
            self.bad(format!(
                "{}: CC on in pool {}, which is not CC-capable or states no CPU TEE",
                node.name, pool.name
            ));
        }
        if model.id != pool.model.id {
            self.bad(format!(
                "{}: model {} in a pool of {}",
                node.name, model.id, pool.model.id
            ));
        }
        let mut seen = BTreeSet::new();
        for g in &node.gpus {
            if !seen.insert(g.index) {
                self.bad(format!("{}: GPU index {} twice", node.name, g.index));
            }
            self.gpu(node, model, g);
        }
        let has_mig = node.gpus.iter().any(|g| !g.mig.is_empty());
        if node.sharing.strategy == SharingStrategy::Mps && has_mig {
            self.bad(format!("{}: MPS sharing on a node with MIG", node.name));
        }
        if node.sharing.strategy == SharingStrategy::None && !node.sharing.resources.is_empty() {
            self.bad(format!(
                "{}: shared resources without a sharing strategy",
                node.name
            ));
        }
        // Tenants per node and per shared resource.
        let mut node_tenants = BTreeSet::new();
        let mut by_resource: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
        // MIG profiles used per tenant on this node.
        let mut profiles_of: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for g in &node.gpus {
            for a in &g.assignments {
                let Some(t) = self.tenant(&a.tenant) else {
                    continue;
                };
                node_tenants.insert(t);
                by_resource
                    .entry(resource_of(model, a.profile.as_deref()))
                    .or_default()
                    .insert(t);
                if let Some(p) = &a.profile {
                    profiles_of.entry(t).or_default().insert(p.clone());
                }
            }
        }
        let listed: BTreeSet<String> = node_tenants
            .iter()
            .map(|&t| input.tenants[t].name.clone())
            .collect();
        if listed != node.tenants.iter().cloned().collect() {
            self.bad(format!(
                "{}: tenants listed {:?}, placed {:?}",
                node.name, node.tenants, listed
            ));
        }
        self.pair_check(
            &node_tenants,
            |i, a, b| i.may_share_node(a, b),
            &format!(
                "{}: one node for tenants without trust and no acceptance",
                node.name
            ),
        );
        for (res, tenants) in &by_resource {
            if node.sharing.resources.contains_key(res) {
                self.pair_check(
                    tenants,
                    |i, a, b| i.may_share_device(a, b),
                    &format!(
                        "{}: shared {res} requested by tenants that may not share a device",
                        node.name
                    ),
                );
            }
        }
        // Tenants that may not use instances of one GPU but meet on a node (accepted) must not
        // request one MIG profile: the device plugin could give them instances on one GPU.
        let ids: Vec<usize> = node_tenants.iter().copied().collect();
        for (i, &a) in ids.iter().enumerate() {
            for &b in &ids[i + 1..] {
                if input.may_share_gpu(a, b) {
                    continue;
                }
                if let (Some(pa), Some(pb)) = (profiles_of.get(&a), profiles_of.get(&b)) {
                    if let Some(p) = pa.intersection(pb).next() {
                        self.bad(format!(
                            "{}: tenants {} and {} (trust none) both request MIG profile {p}",
                            node.name, input.tenants[a].name, input.tenants[b].name
                        ));
                    }
                }
            }
        }
        if node.confidential
            && (node_tenants.len() > 1 || has_mig || node.sharing.strategy != SharingStrategy::None)
        {
            self.bad(format!(
                "{}: CC node shared, partitioned or with more than one tenant",
                node.name
            ));
        }
    }
}

/// Every constraint the plan breaks; empty for a valid plan.
pub fn check(input: &PlanInput, plan: &Plan) -> Vec<Violation> {
    let mut c = Ctx {
        input,
        tenant_index: input
            .tenants
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect(),
        workload_index: input
            .workloads
            .iter()
            .enumerate()
            .map(|(i, w)| (w.name.as_str(), i))
            .collect(),
        out: Vec::new(),
    };
    // Nodes per pool within the inventory.
    let mut per_pool: BTreeMap<&str, u32> = BTreeMap::new();
    let mut names = BTreeSet::new();
    for n in &plan.nodes {
        *per_pool.entry(n.pool.as_str()).or_default() += 1;
        if !names.insert(n.name.as_str()) {
            c.bad(format!("node {} twice", n.name));
        }
        c.node(n);
    }
    for (pool, count) in per_pool {
        if let Some(p) = input.pools.iter().find(|p| p.name == pool) {
            if count > p.nodes {
                c.bad(format!(
                    "pool {pool}: {count} nodes planned, {} available",
                    p.nodes
                ));
            }
        }
    }
    // Every replica exactly once: placed (a gang on its GPUs, all on one node) or unplaced.
    let mut placed: Placements = BTreeMap::new();
    for n in &plan.nodes {
        for g in &n.gpus {
            for a in &g.assignments {
                let device = match (&a.profile, a.start) {
                    (Some(p), Some(s)) => g
                        .mig
                        .iter()
                        .find(|m| &m.profile == p && m.start == s)
                        .map(|m| (m.sharing, m.replicas))
                        .unwrap_or((g.sharing, g.replicas)),
                    _ => (g.sharing, g.replicas),
                };
                placed
                    .entry((a.workload.as_str(), a.replica))
                    .or_default()
                    .push((n.name.as_str(), g.index, a.profile.as_deref(), device));
            }
        }
    }
    let mut unplaced: BTreeMap<(&str, u32), usize> = BTreeMap::new();
    for u in &plan.unplaced {
        *unplaced
            .entry((u.workload.as_str(), u.replica))
            .or_default() += 1;
    }
    for w in &input.workloads {
        let pw = plan.workloads.iter().find(|x| x.name == w.name);
        let mut resources = BTreeSet::new();
        let mut devices: BTreeSet<(DeviceSharing, u32)> = BTreeSet::new();
        for i in 0..w.replicas {
            let key = (w.name.as_str(), i);
            let on = placed.get(&key);
            let miss = unplaced.get(&key).copied().unwrap_or(0);
            match (on, miss) {
                (None, 1) => {}
                (None, 0) => c.bad(format!(
                    "{}#{i}: neither placed nor reported unplaced",
                    w.name
                )),
                (Some(_), m) if m > 0 => {
                    c.bad(format!("{}#{i}: placed and reported unplaced", w.name))
                }
                (None, _) => c.bad(format!("{}#{i}: reported unplaced twice", w.name)),
                (Some(list), _) => {
                    let want = if w.kind == WorkloadClass::Training {
                        w.gpus
                    } else {
                        1
                    };
                    if list.len() as u32 != want {
                        c.bad(format!(
                            "{}#{i}: on {} devices, needs {want}",
                            w.name,
                            list.len()
                        ));
                    }
                    let nodes: BTreeSet<&str> = list.iter().map(|x| x.0).collect();
                    if nodes.len() != 1 {
                        c.bad(format!("{}#{i}: spread over nodes {nodes:?}", w.name));
                    }
                    let gpus: BTreeSet<(&str, u32)> = list.iter().map(|x| (x.0, x.1)).collect();
                    if gpus.len() != list.len() {
                        c.bad(format!("{}#{i}: twice on one GPU", w.name));
                    }
                    for x in list {
                        resources.insert(x.2.map(str::to_string));
                        let (sharing, replicas) = x.3;
                        let replicas = if sharing == DeviceSharing::Exclusive {
                            1
                        } else {
                            replicas
                        };
                        devices.insert((sharing, replicas));
                    }
                }
            }
        }
        if resources.len() > 1 {
            c.bad(format!(
                "{}: replicas use different resources {resources:?}",
                w.name
            ));
        }
        // One pod spec serves every replica, so its node selector can name one way of handing the
        // resource out: every replica's device must be handed out that way.
        if devices.len() > 1 {
            c.bad(format!(
                "{}: replicas on devices handed out differently {devices:?}",
                w.name
            ));
        }
        // A confidential tenant's pods are confidential containers: the pool's TEE-aware runtime
        // class and the GPU passed through (no GPU Feature Discovery labels to select on there).
        let pool = pw
            .and_then(|p| p.pool.as_deref())
            .and_then(|p| input.pools.iter().find(|x| x.name == p));
        let tee = pool
            .and_then(|p| p.tee)
            .filter(|_| input.tenants[w.tenant].confidential);
        if let Some(pw) = pw.filter(|p| p.placed > 0) {
            if pw.runtime_class_name.as_deref() != tee.map(|t| t.runtime_class) {
                c.bad(format!(
                    "{}: runtime class {:?}, the pool's confidential containers need {:?}",
                    w.name,
                    pw.runtime_class_name,
                    tee.map(|t| t.runtime_class)
                ));
            }
        }
        if let (Some(pw), Some(&(sharing, replicas)), Some(resource), None) = (
            pw,
            devices.iter().next(),
            pw.and_then(|p| p.resource.as_ref()),
            tee,
        ) {
            let strategy = labels::of_resource(resource, labels::RESOURCE_SHARING);
            let count = labels::of_resource(resource, labels::RESOURCE_REPLICAS);
            if pw.node_selector.get(&strategy).map(String::as_str)
                != Some(crate::emit::gfd_strategy(sharing))
                || pw.node_selector.get(&count) != Some(&replicas.to_string())
            {
                c.bad(format!(
                    "{}: node selector {:?} does not name {resource} {} x{replicas}",
                    w.name,
                    pw.node_selector,
                    crate::emit::gfd_strategy(sharing)
                ));
            }
        }
        if let (Some(pw), Some(res)) = (pw, resources.iter().next()) {
            let expected = match (res, pool, tee) {
                (_, _, Some(_)) => resource::PASSTHROUGH_ALIAS.to_string(),
                (Some(profile), Some(pool), None) => resource_of(pool.model, Some(profile)),
                _ => resource::GPU.to_string(),
            };
            if pw.resource.as_deref() != Some(expected.as_str()) {
                c.bad(format!(
                    "{}: requests {:?}, placed on {expected}",
                    w.name, pw.resource
                ));
            }
        }
    }
    for k in unplaced.keys() {
        if !input
            .workloads
            .iter()
            .any(|w| w.name == k.0 && k.1 < w.replicas)
        {
            c.bad(format!(
                "unplaced {}#{} is no replica of the input",
                k.0, k.1
            ));
        }
    }
    let used: u32 = plan
        .nodes
        .iter()
        .map(|n| n.gpus.iter().filter(|g| !g.assignments.is_empty()).count() as u32)
        .sum();
    if used != plan.gpus_used {
        c.bad(format!(
            "gpusUsed {} but {used} GPUs have assignments",
            plan.gpus_used
        ));
    }
    if plan.lower_bound > plan.gpus_used {
        c.bad(format!(
            "lower bound {} above the GPUs used {}",
            plan.lower_bound, plan.gpus_used
        ));
    }
    c.out
}
