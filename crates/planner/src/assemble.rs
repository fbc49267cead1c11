//! The plan from the solver's results: the nodes with their GPUs, MIG instances at their placements
//! and the names of the configs they use, the bounds, where every workload went and why, and the
//! replicas that were not placed.

use crate::bound;
use crate::file::{PlanInput, Pool, Workload};
use crate::plan::*;
use crate::spec::MigSpec;
use crate::unit::{Miss, Mode, Need, NodeFill, Payload, PoolResult, Rep, Share, UnitKind};
use gpu_trust_model::fleet::{SharingStrategy, WorkloadClass};
use gpu_trust_model::isolation::{Mechanism, Property};
use gpu_trust_model::resource;
use gpu_trust_model::Trust;
use gpu_trust_policy::{Contract, Latency};
use std::collections::{BTreeMap, BTreeSet};

const MIB_PER_GIB: f64 = 1024.0;

/// A pool of the inventory and its MIG spec (`None` without MIG).
#[derive(Clone, Copy)]
pub(crate) struct PoolView<'a> {
    pub(crate) pool: &'a Pool,
    pub(crate) spec: Option<&'a MigSpec>,
}

/// A node's MIG layouts: GPU index to (profile, start) list.
type LayoutSet = Vec<(u32, Vec<(String, u8)>)>;

pub(crate) fn gib(mib: u64) -> String {
    let g = mib as f64 / MIB_PER_GIB;
    if (g - g.round()).abs() < 0.005 {
        format!("{}GiB", g.round() as u64)
    } else {
        format!("{g:.2}GiB")
    }
}

/// Label values: up to 63 of `[A-Za-z0-9-_.]`, alphanumeric at both ends.
fn is_label_value(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.as_bytes().last().is_some_and(u8::is_ascii_alphanumeric)
}

/// The plan from each pool's result: the nodes with their GPUs and the names of the configs they use,
/// the bounds, where every workload went and the replicas that were not placed.
pub(crate) fn assemble(
    input: &PlanInput,
    ctxs: &[PoolView],
    results: &[PoolResult],
    options: &[Vec<(usize, Need)>],
    choice: &[Option<usize>],
    no_pool: &BTreeMap<usize, String>,
) -> Plan {
    let mut nodes_out: Vec<PlanNode> = Vec::new();
    let mut out = Outcome::default();
    let mut names = Names::default();
    let mut workload_needs: BTreeMap<usize, (usize, Need)> = BTreeMap::new();

    for (w, reason) in no_pool {
        for i in 0..input.workloads[*w].replicas {
            out.unplaced.push(Unplaced {
                workload: input.workloads[*w].name.clone(),
                replica: i,
                reason: reason.clone(),
            });
        }
    }
    for (pi, res) in results.iter().enumerate() {
        let ctx = &ctxs[pi];
        let pool = ctx.pool;
        for (w, need) in &res.needs {
            workload_needs.insert(*w, (pi, *need));
        }
        for (rep, miss) in &res.misses {
            // A replica that moved on to another pool is reported there.
            if choice[rep.w] != Some(pi) {
                continue;
            }
            let reason = match miss {
                Miss::Fit(r) | Miss::Capacity(r) => r.clone(),
            };
            out.unplaced.push(Unplaced {
                workload: input.workloads[rep.w].name.clone(),
                replica: rep.i,
                reason,
            });
        }
        for (ni, fill) in res.nodes.iter().enumerate() {
            let name = format!("{}-{ni}", pool.name);
            let (gpus, sharing) = node_gpus(input, ctx, res, fill, nodes_out.len(), &mut out);
            let tenants: Vec<String> = fill
                .tenants
                .iter()
                .map(|&t| input.tenants[t].name.clone())
                .collect();
            let mig_config = names.mig_config(pool, &gpus);
            let device_plugin_config = names.device_plugin_config(&sharing);
            let tenant_pool = names.tenant_pool(input, fill, &tenants, &name);
            nodes_out.push(PlanNode {
                name,
                pool: pool.name.clone(),
                model: pool.model.id.to_string(),
                tenants,
                sharing,
                confidential: fill.cc == Some(true),
                tenant_pool,
                mig_config,
                device_plugin_config,
                gpus,
                gpu_count: pool.gpus_per_node,
            });
        }
    }
    let Outcome {
        placed_on,
        mut unplaced,
    } = out;
    unplaced.sort();
    unplaced.dedup();
    // Remove from the placement any replica that a failed MIG placement reported.
    let unplaced_set: BTreeSet<(String, u32)> = unplaced
        .iter()
        .map(|u| (u.workload.clone(), u.replica))
        .collect();

    let workloads = input
        .workloads
        .iter()
        .enumerate()
        .map(|(w, wl)| {
            workload_entry(
                input,
                ctxs,
                w,
                wl,
                workload_needs.get(&w).copied(),
                &placed_on,
                &nodes_out,
                &unplaced_set,
            )
        })
        .collect();
    // The bound over the replicas placed, in every pool where each may run.
    let mut left_out: BTreeMap<&str, u32> = BTreeMap::new();
    for u in &unplaced {
        *left_out.entry(u.workload.as_str()).or_default() += 1;
    }
    let demands: Vec<bound::Demand> = input
        .workloads
        .iter()
        .enumerate()
        .map(|(w, wl)| bound::Demand {
            tenant: wl.tenant,
            replicas: wl
                .replicas
                .saturating_sub(left_out.get(wl.name.as_str()).copied().unwrap_or(0)),
            needs: options[w].clone(),
        })
        .collect();
    let slots: Vec<bound::PoolSlots> = ctxs
        .iter()
        .map(|c| bound::PoolSlots::new(c.spec, c.pool.gpus_per_node))
        .collect();
    let tenant_index: BTreeMap<&str, usize> = input
        .tenants
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let used: Vec<BTreeSet<usize>> = nodes_out
        .iter()
        .flat_map(|n| n.gpus.iter())
        .filter(|g| !g.assignments.is_empty())
        .map(|g| {
            g.assignments
                .iter()
                .filter_map(|a| tenant_index.get(a.tenant.as_str()).copied())
                .collect()
        })
        .collect();
    let (bounds, lower_bound, nodes_lower_bound) =
        bound::plan_bounds(input, &slots, &demands, &used);
    let gpus_used: u32 = nodes_out
        .iter()
        .map(|n| n.gpus.iter().filter(|g| !g.assignments.is_empty()).count() as u32)
        .sum();
    let nodes_used = nodes_out.iter().filter(|n| !n.gpus.is_empty()).count() as u32;
    let gap_percent = if lower_bound == 0 {
        0.0
    } else {
        let g = (f64::from(gpus_used) - f64::from(lower_bound)) / f64::from(lower_bound) * 100.0;
        (g * 100.0).round() / 100.0
    };
    Plan {
        schema: SCHEMA,
        gpus_used,
        nodes_used,
        lower_bound,
        gap_percent,
        nodes_lower_bound,
        bounds,
        nodes: nodes_out,
        workloads,
        unplaced,
    }
}

/// Where each replica went (node index in the plan's nodes, GPU index), and the replicas not placed,
/// as the plan's nodes are written.
#[derive(Default)]
struct Outcome {
    placed_on: BTreeMap<Rep, (usize, u32)>,
    unplaced: Vec<Unplaced>,
}

/// The GPUs of one node (the `node_index`th of the plan): whole units first (largest first), then
/// MIG GPUs; and the node's device plugin sharing.
fn node_gpus(
    input: &PlanInput,
    ctx: &PoolView,
    res: &PoolResult,
    fill: &NodeFill,
    node_index: usize,
    out: &mut Outcome,
) -> (Vec<PlanGpu>, NodeSharing) {
    let mut unit_ids = fill.units.clone();
    unit_ids.sort_by(|&a, &b| {
        let (ua, ub) = (&res.units[a], &res.units[b]);
        ua.has_mig()
            .cmp(&ub.has_mig())
            .then(ub.gpus.cmp(&ua.gpus))
            .then(ua.members().cmp(&ub.members()))
    });
    let mut gpus: Vec<PlanGpu> = Vec::new();
    let mut next = 0u32;
    let mut sharing = NodeSharing::default();
    for &u in &unit_ids {
        let unit = &res.units[u];
        match &unit.kind {
            UnitKind::Whole { share, members } => {
                for g in 0..unit.gpus {
                    let index = next + g;
                    let assignments: Vec<Assignment> = members
                        .iter()
                        .map(|r| {
                            out.placed_on.insert(*r, (node_index, index));
                            Assignment {
                                workload: input.workloads[r.w].name.clone(),
                                replica: r.i,
                                tenant: input.tenants[input.workloads[r.w].tenant].name.clone(),
                                profile: None,
                                start: None,
                            }
                        })
                        .collect();
                    gpus.push(PlanGpu {
                        index,
                        mig: Vec::new(),
                        sharing: share.device_sharing(),
                        replicas: share.replicas(),
                        assignments,
                    });
                }
                if *share != Share::Exclusive {
                    sharing
                        .resources
                        .insert(resource::GPU.to_string(), share.replicas());
                    sharing.strategy = match share {
                        Share::Mps { .. } => SharingStrategy::Mps,
                        _ => SharingStrategy::TimeSlicing,
                    };
                }
                next += unit.gpus;
            }
            UnitKind::Mig { counts, instances } => {
                let index = next;
                next += 1;
                let Some(spec) = ctx.spec else { continue };
                let at = (node_index, index);
                gpus.extend(mig_gpu(
                    input,
                    ctx,
                    spec,
                    counts,
                    instances,
                    at,
                    &mut sharing,
                    out,
                ));
            }
        }
    }
    (gpus, sharing)
}

/// One MIG GPU (GPU `index` of the `node_index`th node) with its instances at their placement; `None`
/// when the geometry has no placement for the counts (its replicas are then not placed).
#[allow(clippy::too_many_arguments)]
fn mig_gpu(
    input: &PlanInput,
    ctx: &PoolView,
    spec: &MigSpec,
    counts: &[u32],
    instances: &[Payload],
    (node_index, index): (usize, u32),
    sharing: &mut NodeSharing,
    out: &mut Outcome,
) -> Option<PlanGpu> {
    let pool = ctx.pool;
    let named: Vec<(&str, u32)> = counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(p, &c)| (spec.profiles[p].name, c))
        .collect();
    let layout = match gpu_trust_model::geometry::place_counts(pool.model, &named) {
        Ok(l) => l,
        Err(e) => {
            for (_, _, m) in instances {
                for r in m {
                    out.unplaced.push(Unplaced {
                        workload: input.workloads[r.w].name.clone(),
                        replica: r.i,
                        reason: format!("no MIG placement on {}: {e}", pool.model.id),
                    });
                }
            }
            return None;
        }
    };
    // Instances of each profile by start, handed to the payloads in order.
    let mut slots: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    for inst in layout.instances() {
        if let Some(p) = spec.profile_index(inst.profile().name) {
            slots.entry(p).or_default().push(inst.start());
        }
    }
    let mut mig: Vec<MigInstance> = Vec::new();
    let mut assignments: Vec<Assignment> = Vec::new();
    let mut taken: BTreeMap<usize, usize> = BTreeMap::new();
    let mut any_ts = false;
    for (p, share, members) in instances {
        let k = taken.entry(*p).or_insert(0);
        let start = slots.get(p).and_then(|s| s.get(*k)).copied().unwrap_or(0);
        *k += 1;
        let prof = spec.profiles[*p];
        mig.push(MigInstance {
            profile: prof.name.to_string(),
            start,
            sharing: share.device_sharing(),
            replicas: share.replicas(),
        });
        if *share != Share::Exclusive {
            any_ts = true;
            sharing
                .resources
                .insert(prof.resource_name(), share.replicas());
            sharing.strategy = SharingStrategy::TimeSlicing;
        }
        for r in members {
            out.placed_on.insert(*r, (node_index, index));
            assignments.push(Assignment {
                workload: input.workloads[r.w].name.clone(),
                replica: r.i,
                tenant: input.tenants[input.workloads[r.w].tenant].name.clone(),
                profile: Some(prof.name.to_string()),
                start: Some(start),
            });
        }
    }
    mig.sort_by_key(|a| a.start);
    assignments.sort();
    Some(PlanGpu {
        index,
        mig,
        sharing: if any_ts {
            DeviceSharing::TimeSlicing
        } else {
            DeviceSharing::Exclusive
        },
        replicas: 1,
        assignments,
    })
}

/// The names of the configs and node pools the plan emits, each given on first use: a mig-parted
/// config per GPU model and layout set, a device plugin config per node sharing, a shared node pool
/// per set of tenants.
#[derive(Default)]
struct Names {
    mig_configs: BTreeMap<(String, LayoutSet), String>,
    device_plugin: BTreeMap<NodeSharing, String>,
    time_slicing: usize,
    mps: usize,
    shared_pools: BTreeMap<Vec<usize>, String>,
}

impl Names {
    /// The mig-parted config of a node with `gpus` (on a model with MIG): one per distinct model and
    /// GPU layout set.
    fn mig_config(&mut self, pool: &Pool, gpus: &[PlanGpu]) -> Option<String> {
        if !pool.model.supports_mig() {
            return None;
        }
        let layout_set: LayoutSet = gpus
            .iter()
            .filter(|g| !g.mig.is_empty())
            .map(|g| {
                (
                    g.index,
                    g.mig.iter().map(|m| (m.profile.clone(), m.start)).collect(),
                )
            })
            .collect();
        if layout_set.is_empty() {
            return Some(crate::emit::ALL_DISABLED.to_string());
        }
        let n = self.mig_configs.len() + 1;
        Some(
            self.mig_configs
                .entry((pool.model.id.to_string(), layout_set))
                .or_insert_with(|| format!("gpu-trust-mig-{n}"))
                .clone(),
        )
    }

    /// The device plugin config of a node with `sharing`.
    fn device_plugin_config(&mut self, sharing: &NodeSharing) -> String {
        let Names {
            device_plugin,
            time_slicing,
            mps,
            ..
        } = self;
        match sharing.strategy {
            SharingStrategy::None => crate::emit::EXCLUSIVE_CONFIG.to_string(),
            SharingStrategy::TimeSlicing => device_plugin
                .entry(sharing.clone())
                .or_insert_with(|| {
                    *time_slicing += 1;
                    format!("time-slicing-{time_slicing}")
                })
                .clone(),
            SharingStrategy::Mps => device_plugin
                .entry(sharing.clone())
                .or_insert_with(|| {
                    *mps += 1;
                    format!("mps-{mps}")
                })
                .clone(),
        }
    }

    /// The tenant node pool: one tenant, a set of tenants that may share everything on a node, or
    /// the node alone (`name`) where tenants without trust (or with an isolation contract) meet.
    fn tenant_pool(
        &mut self,
        input: &PlanInput,
        fill: &NodeFill,
        tenants: &[String],
        name: &str,
    ) -> String {
        let ids: Vec<usize> = fill.tenants.iter().copied().collect();
        let guarded = ids.iter().any(|&a| {
            ids.iter().any(|&b| {
                a != b
                    && (input.trust[a][b] == Trust::None
                        || input.tenants[a].contract == Contract::Isolation)
            })
        });
        if guarded {
            name.to_string()
        } else if ids.len() == 1 && is_label_value(&tenants[0]) {
            tenants[0].clone()
        } else {
            let n = self.shared_pools.len() + 1;
            self.shared_pools
                .entry(ids)
                .or_insert_with(|| format!("shared-{n}"))
                .clone()
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn workload_entry(
    input: &PlanInput,
    ctxs: &[PoolView],
    w: usize,
    wl: &Workload,
    need: Option<(usize, Need)>,
    placed_on: &BTreeMap<Rep, (usize, u32)>,
    nodes: &[PlanNode],
    unplaced: &BTreeSet<(String, u32)>,
) -> PlanWorkload {
    let tenant = &input.tenants[wl.tenant];
    let mut entry = PlanWorkload {
        name: wl.name.clone(),
        tenant: tenant.name.clone(),
        namespace: wl.namespace.clone(),
        kind: wl.kind,
        replicas: wl.replicas,
        placed: 0,
        pool: None,
        mechanism: None,
        resource: None,
        count: 0,
        runtime_class_name: None,
        profile: None,
        share_replicas: None,
        node_selector: BTreeMap::new(),
        tolerations: Vec::new(),
        why: String::new(),
    };
    let Some((pi, need)) = need else {
        entry.why = "not placed: no pool of the inventory can hold a replica".to_string();
        return entry;
    };
    let ctx = &ctxs[pi];
    let pool = ctx.pool;
    let mut node_set: BTreeSet<usize> = BTreeSet::new();
    let mut gpu_set: BTreeSet<(usize, u32)> = BTreeSet::new();
    let mut placed = 0;
    let mut share_replicas: Option<u32> = None;
    // How the device of the first placed replica is handed out, and how many times it is advertised.
    let mut device: Option<(DeviceSharing, u32)> = None;
    for i in 0..wl.replicas {
        if unplaced.contains(&(wl.name.clone(), i)) {
            continue;
        }
        if let Some(&(n, g)) = placed_on.get(&Rep { w, i }) {
            placed += 1;
            node_set.insert(n);
            gpu_set.insert((n, g));
            if device.is_none() {
                device = nodes[n].gpus.iter().find(|x| x.index == g).and_then(|x| {
                    if x.mig.is_empty() {
                        Some((x.sharing, x.replicas))
                    } else {
                        x.mig
                            .iter()
                            .find(|m| {
                                x.assignments.iter().any(|a| {
                                    a.workload == wl.name
                                        && a.replica == i
                                        && a.start == Some(m.start)
                                })
                            })
                            .map(|m| (m.sharing, m.replicas))
                    }
                });
                share_replicas = device.and_then(|(_, r)| (r > 1).then_some(r));
            }
        }
    }
    entry.placed = placed;
    entry.pool = Some(pool.name.clone());
    let (mechanism, resource, count, profile) = match need {
        Need::Gang(g) => (Mechanism::Exclusive, resource::GPU.to_string(), g, None),
        Need::Whole(Mode::Exclusive) => (Mechanism::Exclusive, resource::GPU.to_string(), 1, None),
        Need::Whole(Mode::TimeSliced(_)) => {
            (Mechanism::TimeSlicing, resource::GPU.to_string(), 1, None)
        }
        Need::Whole(Mode::Mps(_)) => (Mechanism::Mps, resource::GPU.to_string(), 1, None),
        Need::Instance(p, mode) => {
            let prof = ctx.spec.map(|s| s.profiles[p]);
            let name = prof.map(|p| p.name.to_string());
            let res = prof
                .map(|p| p.resource_name())
                .unwrap_or_else(|| resource::GPU.to_string());
            let mech = match (mode, share_replicas) {
                (Mode::Exclusive, _) | (_, None) => Mechanism::MigInstance,
                _ => Mechanism::MigTimeSlicing,
            };
            (mech, res, 1, name)
        }
    };
    // A shared mode whose bundle ended up with one member per device stays as planned: the node's
    // config advertises the replicas either way.
    let mechanism = match (mechanism, share_replicas) {
        (Mechanism::TimeSlicing, None) | (Mechanism::Mps, None) if placed > 0 => {
            Mechanism::Exclusive
        }
        (m, _) => m,
    };
    // A confidential tenant's pods run as confidential containers: the GPU passed through to a Kata
    // VM of the pool's TEE, requested through the sandbox device plugin (NVIDIA Confidential
    // Containers, "Configuring Confidential Container Workloads").
    let tee = pool.tee.filter(|_| tenant.confidential);
    let resource = match tee {
        Some(_) => resource::PASSTHROUGH_ALIAS.to_string(),
        None => resource,
    };
    entry.runtime_class_name = tee.map(|t| t.runtime_class.to_string());
    entry.mechanism = Some(mechanism);
    entry.resource = Some(resource);
    entry.count = count;
    entry.profile = profile.clone();
    entry.share_replicas = share_replicas;
    entry
        .node_selector
        .insert(POOL_LABEL.to_string(), pool.name.clone());
    // Only nodes where the device plugin hands the resource out the way the plan does: one pool may
    // offer `nvidia.com/gpu` whole on some nodes and time-sliced on others, a MIG profile whole on one
    // node and time-sliced four ways on the next.
    // (No GPU Feature Discovery labels where GPUs are passed through.)
    if let (Some((sharing, replicas)), Some(resource), None) = (device, &entry.resource, tee) {
        entry
            .node_selector
            .extend(crate::emit::mechanism_selector(resource, sharing, replicas));
    }
    let taints: BTreeSet<&str> = node_set
        .iter()
        .map(|&n| nodes[n].tenant_pool.as_str())
        .collect();
    entry.tolerations = taints
        .into_iter()
        .map(|v| Toleration {
            key: TENANTS_TAINT.to_string(),
            operator: "Equal".to_string(),
            value: v.to_string(),
            effect: "NoSchedule".to_string(),
        })
        .collect();
    entry.why = why(
        input,
        ctx,
        wl,
        need,
        mechanism,
        profile.as_deref(),
        share_replicas,
        &gpu_set,
        &node_set,
        nodes,
    );
    entry
}

#[allow(clippy::too_many_arguments)]
fn why(
    input: &PlanInput,
    ctx: &PoolView,
    wl: &Workload,
    need: Need,
    mechanism: Mechanism,
    profile: Option<&str>,
    share_replicas: Option<u32>,
    gpus: &BTreeSet<(usize, u32)>,
    nodes_set: &BTreeSet<usize>,
    nodes: &[PlanNode],
) -> String {
    let tenant = &input.tenants[wl.tenant];
    let mut head = String::new();
    if wl.latency == Latency::Critical && wl.kind != WorkloadClass::Training {
        head.push_str("latency-critical ");
    }
    head.push_str(wl.kind.as_str());
    if let Some(p) = wl.peak_memory_mib {
        head.push_str(&format!(" (peak {})", gib(p)));
    }
    let model = ctx.pool.model.id;
    let what = match need {
        Need::Gang(g) => format!(
            "{g} whole dedicated GPU{} of one {model} node per replica, never shared",
            if g == 1 { "" } else { "s" }
        ),
        Need::Whole(Mode::Exclusive) if tenant.confidential => {
            format!(
                "a whole {model} on a node with confidential computing on, used by {} alone, passed through to a confidential container (runtime class {})",
                tenant.name,
                ctx.pool.tee.map_or("?", |t| t.runtime_class)
            )
        }
        Need::Whole(Mode::Exclusive) => match ctx.spec {
            Some(_) => format!("a whole {model} (more than the largest MIG instance holds)"),
            None => format!("a whole {model} of its own"),
        },
        Need::Whole(Mode::TimeSliced(_)) => format!(
            "a time-sliced {model} shared by {} replicas of one trust group, {} each",
            share_replicas.unwrap_or(1),
            gib(ctx.pool.model.memory_mib / u64::from(share_replicas.unwrap_or(1).max(1)))
        ),
        Need::Whole(Mode::Mps(_)) => format!(
            "an MPS share of a {model}, {} clients of one trust group, pinned memory limit {} each, \
             on nodes whose device plugin config sets migStrategy none (the plugin refuses MPS with \
             mixed; the ClusterPolicy leaves mig.strategy unset so that each node's config decides)",
            share_replicas.unwrap_or(1),
            gib(ctx.pool.model.memory_mib / u64::from(share_replicas.unwrap_or(1).max(1)))
        ),
        Need::Instance(p, Mode::Exclusive) => {
            let mem = ctx.spec.map(|s| s.profiles[p].memory_mib).unwrap_or(0);
            // The smallest profile its peak alone fits: when it is smaller, compute decided.
            let by_memory = ctx
                .spec
                .and_then(|s| Some((s, s.smallest_holding(wl.peak_memory_mib.unwrap_or(0), 0.0)?)))
                .filter(|(_, q)| *q < p);
            match (by_memory, wl.compute) {
                (Some((spec, q)), Some(compute)) => format!(
                    "own MIG instance {} ({}), the smallest with the compute it needs ({:.0}% of a GPU; {} has {:.0}%): its peak alone fits {}",
                    profile.unwrap_or("?"),
                    gib(mem),
                    compute * 100.0,
                    profile.unwrap_or("?"),
                    spec.compute_fraction(p) * 100.0,
                    spec.profiles[q].name
                ),
                _ => format!(
                    "own MIG instance {} ({}), the smallest that holds its peak",
                    profile.unwrap_or("?"),
                    gib(mem)
                ),
            }
        }
        Need::Instance(p, _) => {
            let mem = ctx.spec.map(|s| s.profiles[p].memory_mib).unwrap_or(0);
            let r = share_replicas.unwrap_or(1).max(1);
            format!(
                "MIG instance {} time-sliced among {r} replicas of one trust group, {} each",
                profile.unwrap_or("?"),
                gib(mem / u64::from(r))
            )
        }
    };
    let memory = mechanism
        .property(Property::MemoryCapacity)
        .enforcement
        .as_str();
    let fault = mechanism
        .property(Property::FaultDomain)
        .enforcement
        .as_str();
    let mut text = format!("{head}: {what}; memory {memory}, fault domain {fault}");
    // Who it meets, and at which trust.
    let mut on_gpu: BTreeSet<String> = BTreeSet::new();
    for &(n, g) in gpus {
        if let Some(gpu) = nodes[n].gpus.iter().find(|x| x.index == g) {
            for a in &gpu.assignments {
                if a.tenant != tenant.name {
                    on_gpu.insert(a.tenant.clone());
                }
            }
        }
    }
    let mut on_node: BTreeSet<String> = BTreeSet::new();
    for &n in nodes_set {
        for t in &nodes[n].tenants {
            if *t != tenant.name && !on_gpu.contains(t) {
                on_node.insert(t.clone());
            }
        }
    }
    let trust_of = |name: &str| -> &'static str {
        input
            .tenants
            .iter()
            .position(|t| t.name == name)
            .map(|o| input.trust[wl.tenant][o].as_str())
            .unwrap_or("none")
    };
    let list = |set: &BTreeSet<String>| -> String {
        set.iter()
            .map(|t| format!("{t} (trust {})", trust_of(t)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !on_gpu.is_empty() {
        text.push_str(&format!("; shares GPUs with {}", list(&on_gpu)));
    }
    if !on_node.is_empty() {
        text.push_str(&format!("; shares nodes with {}", list(&on_node)));
    }
    if on_gpu.is_empty() && on_node.is_empty() && !nodes_set.is_empty() {
        text.push_str(&format!("; its nodes host {} only", tenant.name));
    }
    text
}
