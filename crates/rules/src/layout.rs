//! The GPU layout view: per GPU node, per physical GPU, how the GPU is shared and which tenants are (or
//! may be) on it, with MIG instances at their placement in memory slices. The HTML report draws it.
//!
//! Nothing here decides isolation: the mechanism each workload gets, the unit it draws from and how many
//! replicas it holds come from [`crate::colocation::device_use`]; which tenants are on a node, and
//! whether they are scheduled there or only permitted, from [`Colocation`]. This module only spreads
//! those workloads over the GPUs and instances they can be on:
//!
//! - GPUs a scheduler's records name (`Placement::recorded`) hold the workload for certain
//!   (`observed`), and each tenant's records are listed with it.
//! - A GPU of a node where a workload asks for a GPU no mechanism maps is shared in a way not known
//!   ([`Sharing::Unknown`]), never exclusive.
//! - Otherwise every GPU (or MIG instance of a profile the workload may get) that could hold it is a
//!   candidate. When the workload needs as many GPUs or instances as there are candidates, it is on all
//!   of them (`observed`); else on each one `possible`. A workload not scheduled on the node but permitted
//!   there is `permitted` on every candidate.
//!
//! Profile sizes are the catalogue's. A MIG instance whose start slice the input does not give is put
//! where the first valid layout of the model ([`gpu_trust_model::geometry`]) with the same profiles puts it.

use crate::analysis::Analysis;
use crate::colocation::{device_use, Colocation, DeviceUse, Unit};
use crate::owner::Owners;
use gpu_trust_model::catalogue::{self, GpuModel};
use gpu_trust_model::fleet::{Fleet, GpuNode, MigSlot, NodeId, Workload, WorkloadKind};
use gpu_trust_model::geometry;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::occupancy::{Devices, Seat};
use gpu_trust_model::report::layout::{
    sort_by_certainty, AllocationLayout, GpuLayout, MigInstanceLayout, NodeLayout, Occupant,
    Sharing, TenantPresence, MAX_LISTED_WORKLOADS,
};
use gpu_trust_model::Certainty;
use gpu_trust_policy::Tenancy;
use std::collections::{BTreeMap, BTreeSet};

/// The layout of every GPU node of the fleet, in node order, read from the audit's analysis (the
/// audit builds it when [`crate::AuditOptions::layout`] asks: [`gpu_trust_model::report::AuditReport::layout`]).
pub(crate) fn build(
    fleet: &Fleet,
    tenancy: &Tenancy,
    analysis: &Analysis,
    owners: &Owners,
) -> Vec<NodeLayout> {
    let colo = &analysis.colo;
    let unmapped = fleet.unmapped_nodes();
    fleet
        .gpu_nodes()
        .filter_map(|(id, node)| {
            let gpu = node.gpu.as_ref()?;
            let mut layout = node_layout(fleet, tenancy, colo, owners, id, gpu);
            if unmapped.contains(&id) {
                for g in &mut layout.gpus {
                    if g.sharing == Sharing::Exclusive {
                        g.sharing = Sharing::Unknown;
                    }
                }
            }
            Some(layout)
        })
        .collect()
}

/// What accumulates for one tenant on one seat.
#[derive(Debug, Default)]
struct Tally {
    certainty: Option<Certainty>,
    mechanisms: BTreeSet<Mechanism>,
    /// Each owning workload (its key), with its order of arrival and how many of its pods are there.
    owners: BTreeMap<String, (usize, usize)>,
    recorded: BTreeSet<String>,
}

impl Tally {
    fn add(
        &mut self,
        certainty: Certainty,
        mechanism: Mechanism,
        workload: &Workload,
        owner: &str,
    ) {
        self.certainty = Some(self.certainty.map_or(certainty, |c| c.min(certainty)));
        self.mechanisms.insert(mechanism);
        self.recorded
            .extend(workload.placement.recorded.iter().map(|r| r.describe()));
        let next = self.owners.len();
        let entry = self.owners.entry(owner.to_string()).or_insert((next, 0));
        entry.1 += usize::from(workload.kind == WorkloadKind::Pod);
    }

    /// The first owners to arrive, by name, with the pods of each that are there.
    fn names(&self) -> Vec<String> {
        let mut first: Vec<(&usize, &String, &usize)> = self
            .owners
            .iter()
            .map(|(key, (arrival, pods))| (arrival, key, pods))
            .collect();
        first.sort_unstable();
        first
            .into_iter()
            .take(MAX_LISTED_WORKLOADS)
            .map(|(_, key, pods)| match (key.starts_with("Pod/"), pods) {
                (true, _) | (false, 0) => crate::text::owner_name(key),
                (false, n) => format!(
                    "{} ({})",
                    crate::text::owner_name(key),
                    crate::text::plural(*n as u64, "pod")
                ),
            })
            .collect()
    }
}

fn node_layout(
    fleet: &Fleet,
    tenancy: &Tenancy,
    colo: &Colocation,
    owners: &Owners,
    id: NodeId,
    gpu: &GpuNode,
) -> NodeLayout {
    let node = &fleet.nodes[id];
    let model = gpu.model.as_deref().and_then(catalogue::lookup);
    let mig = model.and_then(|m| m.mig);
    // The node's per-GPU occupancy view (GPUs the input does not list drawn from the count).
    let devices = Devices::counted(gpu);
    let gpus = &devices.gpus;

    // Tenant -> seat -> tally.
    let mut seats: BTreeMap<Seat, BTreeMap<String, Tally>> = BTreeMap::new();
    let mut tenants = Vec::new();
    let mut allocations = Vec::new();
    for (tenant, certainty) in colo.tenants_on(id) {
        let name = tenancy.name(tenant).to_string();
        tenants.push(TenantPresence {
            tenant: name.clone(),
            certainty,
        });
        for wid in colo.workloads_on(id, tenant) {
            let Some(w) = fleet.workloads.get(wid) else {
                continue;
            };
            allocations.extend(w.placement.allocations.iter().map(|a| AllocationLayout {
                tenant: name.clone(),
                device: a.device.to_string(),
                gpu: a.parent.as_ref().map(ToString::to_string),
                workload: format!("{}/{}", w.namespace, w.object.name),
                record: a.record.to_string(),
            }));
            // Scheduled here: the analysis's; only permitted here: how it would get a GPU here.
            let permitted_use;
            let du: &DeviceUse = match colo.device_use_on(id, wid) {
                Some(du) => du,
                None if w.placement.node == Some(id) => continue,
                None => match device_use(w, gpu) {
                    Some(du) => {
                        permitted_use = du;
                        &permitted_use
                    }
                    None => continue,
                },
            };
            let (reach, _) = colo.reach_of(wid);
            let (candidates, certainty) = match seats_from_ingest(w, id, &devices) {
                Some(found) => found,
                None => candidate_seats(w, du, &devices, reach),
            };
            let owner = owners.of(w);
            for seat in candidates {
                seats
                    .entry(seat)
                    .or_default()
                    .entry(name.clone())
                    .or_default()
                    .add(certainty, du.mechanism, w, &owner);
            }
        }
    }

    let mut layouts = Vec::with_capacity(gpus.len());
    for (g, pg) in gpus.iter().enumerate() {
        let mut mechanisms: BTreeSet<Mechanism> = BTreeSet::new();
        let mut take = |seat: Seat, mechanisms: &mut BTreeSet<Mechanism>| -> Vec<Occupant> {
            let mut occupants: Vec<Occupant> = seats
                .remove(&seat)
                .unwrap_or_default()
                .into_iter()
                .map(|(tenant, t)| {
                    mechanisms.extend(t.mechanisms.iter().copied());
                    Occupant {
                        tenant,
                        certainty: t.certainty.unwrap_or(Certainty::Permitted),
                        workloads: t.names(),
                        workload_count: t.owners.len(),
                        mechanisms: t.mechanisms.into_iter().collect(),
                        recorded: t.recorded.into_iter().collect(),
                    }
                })
                .collect();
            sort_by_certainty(&mut occupants, |o| (o.certainty, &o.tenant));
            occupants
        };
        if gpu_trust_model::occupancy::is_mig(pg) {
            let starts = place(&pg.mig, model);
            let mut instances: Vec<MigInstanceLayout> = pg
                .mig
                .iter()
                .enumerate()
                .map(|(i, slot)| {
                    let profile = mig.and_then(|geo| geo.profile(&slot.profile));
                    MigInstanceLayout {
                        profile: profile
                            .map_or_else(|| slot.profile.clone(), |p| p.name.to_string()),
                        start: starts.get(i).copied().flatten(),
                        memory_slices: profile.map(|p| p.memory_slices),
                        compute_slices: profile.map(|p| p.compute_slices),
                        memory_mib: profile.map(|p| p.memory_mib),
                        sharing: Sharing::of(&devices, Seat::Instance(g, i)),
                        tenants: take(Seat::Instance(g, i), &mut mechanisms),
                    }
                })
                .collect();
            instances.sort_by(|a, b| {
                (a.start.is_none(), a.start, &a.profile).cmp(&(
                    b.start.is_none(),
                    b.start,
                    &b.profile,
                ))
            });
            layouts.push(GpuLayout {
                index: pg.index,
                uuid: pg.uuid.clone(),
                sharing: Sharing::Mig,
                mechanisms: mechanisms.into_iter().collect(),
                tenants: Vec::new(),
                instances,
            });
        } else {
            let tenants = take(Seat::Gpu(g), &mut mechanisms);
            layouts.push(GpuLayout {
                index: pg.index,
                uuid: pg.uuid.clone(),
                sharing: Sharing::of(&devices, Seat::Gpu(g)),
                mechanisms: mechanisms.into_iter().collect(),
                tenants,
                instances: Vec::new(),
            });
        }
    }

    sort_by_certainty(&mut tenants, |t| (t.certainty, &t.tenant));
    NodeLayout {
        name: node.name.clone(),
        file: node.object.location.file.clone(),
        line: node.object.location.line,
        product: gpu.product.clone(),
        model: model
            .map(|m| m.id.to_string())
            .or_else(|| gpu.model.clone()),
        model_name: model.map(|m| m.display_name.to_string()),
        memory_mib: model.map(|m| m.memory_mib).or(gpu.memory_mib),
        memory_slices: mig.map(|g| g.memory_slices),
        compute_slices: mig.map(|g| g.compute_slices),
        sharing_strategy: gpu.sharing.strategy,
        hami: gpu.hami,
        gpus: layouts,
        tenants,
        allocations: {
            allocations.sort();
            allocations.dedup();
            allocations
        },
    }
}

/// The devices ingest found a pod scheduled on `node` may be using, with `observed` when the evidence
/// pins it to exactly those; `None` when ingest found none (a template, a pending pod, a node whose
/// GPUs the input does not list).
fn seats_from_ingest(
    w: &Workload,
    node: NodeId,
    devices: &Devices<'_>,
) -> Option<(Vec<Seat>, Certainty)> {
    if w.placement.node != Some(node) || w.placement.devices.is_empty() {
        return None;
    }
    let seats: Vec<Seat> = w
        .placement
        .devices
        .iter()
        .filter_map(|d| devices.seat_of(d))
        .collect();
    if seats.is_empty() {
        return None;
    }
    let certainty = if w.placement.observed {
        Certainty::Observed
    } else {
        Certainty::Possible
    };
    Some((seats, certainty))
}

/// Every GPU or MIG instance of the node that could hold the workload's request, and how sure it is
/// to be on each: `permitted` when it is not scheduled there, `observed` when HAMi pinned it or it needs
/// every candidate, else `possible`.
fn candidate_seats(
    w: &Workload,
    du: &DeviceUse,
    devices: &Devices<'_>,
    reach: Certainty,
) -> (Vec<Seat>, Certainty) {
    let gpus = &devices.gpus;
    let mut candidates: Vec<Seat> = if du.mechanism.is_mig() {
        gpus.iter()
            .enumerate()
            .flat_map(|(g, pg)| {
                pg.mig
                    .iter()
                    .enumerate()
                    .filter(|(_, slot)| {
                        du.mig_profiles
                            .as_ref()
                            .is_none_or(|p| p.contains(&catalogue::plugin_profile(&slot.profile)))
                    })
                    .map(move |(i, _)| Seat::Instance(g, i))
            })
            .collect()
    } else {
        gpus.iter()
            .enumerate()
            .filter(|(_, pg)| !gpu_trust_model::occupancy::is_mig(pg))
            .map(|(g, _)| Seat::Gpu(g))
            .collect()
    };
    // A scheduler that cuts MIG instances on demand leaves the node's GPUs whole in the input: its
    // workloads are on those GPUs.
    if du.mechanism.is_mig() && candidates.is_empty() {
        candidates = gpus
            .iter()
            .enumerate()
            .filter(|(_, pg)| !gpu_trust_model::occupancy::is_mig(pg))
            .map(|(g, _)| Seat::Gpu(g))
            .collect();
    }
    let mut pinned = false;
    if !w.placement.recorded.is_empty() {
        let on_pinned: Vec<Seat> = candidates
            .iter()
            .copied()
            .filter(|s| w.placement.recorded.iter().any(|r| r.names(&gpus[s.gpu()])))
            .collect();
        if !on_pinned.is_empty() {
            candidates = on_pinned;
            pinned = true;
        }
    }
    let needed = units_needed(&du.unit, du.demand, devices.node);
    let certainty = if reach == Certainty::Permitted {
        Certainty::Permitted
    } else if pinned || needed >= candidates.len() as u64 {
        Certainty::Observed
    } else {
        Certainty::Possible
    };
    (candidates, certainty)
}

/// Devices of `unit` a workload holding `demand` replicas occupies.
fn units_needed(unit: &Unit, demand: u64, node: &GpuNode) -> u64 {
    let per_unit = match unit {
        Unit::SharedGpu { resource } => node.sharing.replicas_for(resource),
        Unit::SharedMigInstance { profile } => {
            node.sharing.replicas_for(&catalogue::mig_resource(profile))
        }
        Unit::Fraction(_) | Unit::Claim(_) | Unit::Consumable { .. } => return 1,
        Unit::Hami | Unit::Own => 1,
    };
    demand.max(1).div_ceil(u64::from(per_unit.max(1)))
}

/// The start slice of each instance: the input's where given; for the others, the first valid layout of
/// the model (in the catalogue's enumeration order, lowest starts first) with the same profile counts
/// that keeps every given start. `None` for an instance whose profile the catalogue does not know, or
/// when no valid layout matches.
fn place(slots: &[MigSlot], model: Option<&'static GpuModel>) -> Vec<Option<u8>> {
    let mut starts: Vec<Option<u8>> = slots.iter().map(|s| s.start).collect();
    if starts.iter().all(Option::is_some) {
        return starts;
    }
    let Some((model, geo)) = model.and_then(|m| m.mig.map(|g| (m, g))) else {
        return starts;
    };
    let Ok(layouts) = geometry::layouts(model) else {
        return starts;
    };
    let mut names: Vec<&'static str> = Vec::with_capacity(slots.len());
    for slot in slots {
        match geo.profile(&slot.profile) {
            Some(p) => names.push(p.name),
            None => return starts,
        }
    }
    let mut counts: BTreeMap<&'static str, u32> = BTreeMap::new();
    for n in &names {
        *counts.entry(n).or_default() += 1;
    }
    let fits = |layout: &geometry::Layout| {
        layout.counts() == counts
            && slots.iter().zip(&names).all(|(slot, name)| {
                slot.start.is_none_or(|s| {
                    layout
                        .instances()
                        .iter()
                        .any(|i| i.profile().name == *name && i.start() == s)
                })
            })
    };
    let Some(layout) = layouts.iter().find(|l| fits(l)) else {
        return starts;
    };
    let mut free: Vec<(&'static str, u8)> = layout
        .instances()
        .iter()
        .map(|i| (i.profile().name, i.start()))
        .filter(|(name, start)| {
            !slots
                .iter()
                .zip(&names)
                .any(|(slot, n)| n == name && slot.start == Some(*start))
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        if starts[i].is_some() {
            continue;
        }
        if let Some(k) = free.iter().position(|(n, _)| n == name) {
            starts[i] = Some(free.remove(k).1);
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::fleet::{
        DeviceSlot, GpuRequest, HamiRequest, MigStrategy, NamespaceInfo, Node, PhysicalDevice,
        PhysicalGpu, Placement, RecordedDevice, SharingConfig, SharingStrategy, Workload,
        WorkloadClass, WorkloadKind,
    };
    use gpu_trust_model::{Location, ObjectRef};
    use gpu_trust_policy::Policy;

    fn gpu_node(name: &str, model: &str, gpus: Vec<PhysicalGpu>, sharing: SharingConfig) -> Node {
        Node {
            object: ObjectRef {
                kind: "Node".into(),
                namespace: None,
                name: name.into(),
                location: Location::new("cluster.yaml", 3, 1),
            },
            name: name.into(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            gpu: Some(GpuNode {
                product: Some(model.into()),
                model: Some(model.into()),
                count: gpus.len() as u32,
                memory_mib: None,
                driver_version: None,
                toolkit_version: None,
                operator_version: None,
                cc_mode: None,
                mig_strategy: if gpus.iter().any(|g| g.mig_enabled) {
                    MigStrategy::Mixed
                } else {
                    MigStrategy::None
                },
                sharing,
                gpus,
                hami: false,
                mig_source: None,
                advertised: None,
                platforms: Vec::new(),
                unknown: Vec::new(),
                workload: Default::default(),
            }),
        }
    }

    fn plain_gpu(index: u32, uuid: &str) -> PhysicalGpu {
        PhysicalGpu {
            index,
            uuid: Some(uuid.into()),
            mig_enabled: false,
            mig: Vec::new(),
        }
    }

    fn mig_gpu(index: u32, slots: &[(&str, Option<u8>)]) -> PhysicalGpu {
        PhysicalGpu {
            index,
            uuid: None,
            mig_enabled: true,
            mig: slots
                .iter()
                .map(|(p, s)| MigSlot {
                    profile: (*p).into(),
                    start: *s,
                })
                .collect(),
        }
    }

    fn pod(ns: &str, name: &str, node: Option<NodeId>, resources: &[(&str, u64)]) -> Workload {
        Workload {
            object: ObjectRef {
                kind: "Pod".into(),
                namespace: Some(ns.into()),
                name: name.into(),
                location: Location::new("cluster.yaml", 40, 1),
            },
            namespace: ns.into(),
            kind: WorkloadKind::Pod,
            role: None,
            replicas: 1,
            class: WorkloadClass::Unknown,
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            scheduler_name: None,
            service_account: None,
            gpu: GpuRequest {
                resources: resources
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), *v))
                    .collect(),
                ..GpuRequest::default()
            },
            containers: Vec::new(),
            pod_security: Default::default(),
            inference: None,
            peak_memory_mib: None,
            // Node set 1 is `[0]` in every fleet of these tests.
            placement: Placement {
                node,
                recorded: Vec::new(),
                allocations: Vec::new(),
                devices: Vec::new(),
                observed: false,
                permitted: usize::from(node.is_some()),
                tolerations: Vec::new(),
                node_selector: Default::default(),
            },
            owner: None,
        }
    }

    fn fleet(nodes: Vec<Node>, workloads: Vec<Workload>) -> (Fleet, Tenancy) {
        let mut names: Vec<String> = workloads.iter().map(|w| w.namespace.clone()).collect();
        names.sort();
        names.dedup();
        let fleet = Fleet {
            nodes,
            workloads,
            namespaces: names
                .into_iter()
                .map(|name| NamespaceInfo {
                    name,
                    ..NamespaceInfo::default()
                })
                .collect(),
            node_sets: vec![Vec::new(), vec![0]],
            ..Fleet::default()
        };
        let tenancy = Policy::default().resolve(&fleet.namespaces);
        (fleet, tenancy)
    }

    /// The layout an audit that asks for it returns.
    fn layout_of(fleet: &Fleet, tenancy: &Tenancy) -> Vec<NodeLayout> {
        let mut options =
            crate::AuditOptions::new(gpu_trust_policy::Date::new(2026, 6, 1).unwrap());
        options.layout = true;
        crate::audit(&crate::AuditInput {
            fleet,
            tenancy,
            options: &options,
        })
        .layout
    }

    #[test]
    fn an_audit_with_the_layout_runs_one_analysis() {
        let node = gpu_node(
            "a100-2",
            "A100-SXM4-80GB",
            vec![plain_gpu(0, "GPU-a"), plain_gpu(1, "GPU-b")],
            time_sliced(4),
        );
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![
                pod("team-a", "a", Some(0), &[("nvidia.com/gpu", 1)]),
                pod("team-b", "b", Some(0), &[("nvidia.com/gpu", 1)]),
            ],
        );
        let computed = || crate::colocation::tests::COMPUTED.with(std::cell::Cell::get);
        let before = computed();
        let layout = layout_of(&fleet, &tenancy);
        assert_eq!(
            computed() - before,
            1,
            "the audit and its layout share one analysis"
        );
        assert_eq!(layout.len(), 1);
        assert_eq!(
            tenants(&layout[0].gpus[0].tenants),
            vec![
                ("team-a", Certainty::Possible),
                ("team-b", Certainty::Possible)
            ]
        );
    }

    fn time_sliced(replicas: u32) -> SharingConfig {
        let mut s = SharingConfig {
            strategy: SharingStrategy::TimeSlicing,
            ..SharingConfig::default()
        };
        s.replicas.insert("nvidia.com/gpu".into(), replicas);
        s
    }

    fn tenants(occupants: &[Occupant]) -> Vec<(&str, Certainty)> {
        occupants
            .iter()
            .map(|o| (o.tenant.as_str(), o.certainty))
            .collect()
    }

    #[test]
    fn mig_instances_sit_at_their_placement_with_their_tenants() {
        let node = gpu_node(
            "h100-1",
            "H100-SXM5-80GB",
            vec![mig_gpu(
                0,
                &[
                    ("3g.40gb", Some(0)),
                    ("1g.10gb", None),
                    ("2g.20gb", Some(4)),
                ],
            )],
            SharingConfig::default(),
        );
        let mut waiting = pod("team-c", "batch", None, &[("nvidia.com/mig-2g.20gb", 1)]);
        waiting.placement.permitted = 1;
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![
                pod("team-a", "embed", Some(0), &[("nvidia.com/mig-3g.40gb", 1)]),
                pod(
                    "team-b",
                    "rerank",
                    Some(0),
                    &[("nvidia.com/mig-1g.10gb", 1)],
                ),
                waiting,
            ],
        );
        let layout = layout_of(&fleet, &tenancy);
        assert_eq!(layout.len(), 1);
        let n = &layout[0];
        assert_eq!(n.memory_slices, Some(8));
        assert_eq!(n.compute_slices, Some(7));
        let gpu = &n.gpus[0];
        assert_eq!(gpu.sharing, Sharing::Mig);
        assert!(gpu.tenants.is_empty());
        type Placed<'a> = (&'a str, Option<u8>, Option<u8>, Option<u8>);
        let placed: Vec<Placed> = gpu
            .instances
            .iter()
            .map(|i| {
                (
                    i.profile.as_str(),
                    i.start,
                    i.memory_slices,
                    i.compute_slices,
                )
            })
            .collect();
        // The 1g.10gb had no start: the only slice left for it is 6 (or 7, which 1g cannot start at).
        assert_eq!(
            placed,
            vec![
                ("3g.40gb", Some(0), Some(4), Some(3)),
                ("2g.20gb", Some(4), Some(2), Some(2)),
                ("1g.10gb", Some(6), Some(1), Some(1)),
            ]
        );
        assert_eq!(
            tenants(&gpu.instances[0].tenants),
            vec![("team-a", Certainty::Observed)]
        );
        assert_eq!(
            tenants(&gpu.instances[1].tenants),
            vec![("team-c", Certainty::Permitted)]
        );
        assert_eq!(
            tenants(&gpu.instances[2].tenants),
            vec![("team-b", Certainty::Observed)]
        );
        assert_eq!(
            gpu.instances[0].tenants[0].workloads,
            vec!["Pod team-a/embed"]
        );
        assert_eq!(gpu.mechanisms, vec![Mechanism::MigInstance]);
        let on_node: Vec<(&str, Certainty)> = n
            .tenants
            .iter()
            .map(|t| (t.tenant.as_str(), t.certainty))
            .collect();
        assert_eq!(
            on_node,
            vec![
                ("team-a", Certainty::Observed),
                ("team-b", Certainty::Observed),
                ("team-c", Certainty::Permitted)
            ]
        );
    }

    #[test]
    fn instances_of_a_shared_profile_are_each_possible() {
        let node = gpu_node(
            "a100-1",
            "A100-SXM4-80GB",
            vec![mig_gpu(0, &[("1g.10gb", Some(0)), ("1g.10gb", Some(1))])],
            SharingConfig::default(),
        );
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![pod(
                "team-a",
                "a",
                Some(0),
                &[("nvidia.com/mig-1g.10gb", 1)],
            )],
        );
        let layout = layout_of(&fleet, &tenancy);
        for i in &layout[0].gpus[0].instances {
            assert_eq!(tenants(&i.tenants), vec![("team-a", Certainty::Possible)]);
        }
    }

    #[test]
    fn devices_ingest_found_decide_the_instance() {
        let node = gpu_node(
            "a100-1",
            "A100-SXM4-80GB",
            vec![mig_gpu(0, &[("1g.10gb", Some(0)), ("1g.10gb", Some(1))])],
            SharingConfig::default(),
        );
        let mut w = pod("team-a", "a", Some(0), &[("nvidia.com/mig-1g.10gb", 1)]);
        w.placement.devices = vec![DeviceSlot {
            gpu: 0,
            instance: Some(1),
        }];
        w.placement.observed = true;
        let (fleet, tenancy) = fleet(vec![node], vec![w]);
        let layout = layout_of(&fleet, &tenancy);
        let instances = &layout[0].gpus[0].instances;
        assert!(instances[0].tenants.is_empty());
        assert_eq!(
            tenants(&instances[1].tenants),
            vec![("team-a", Certainty::Observed)]
        );
    }

    #[test]
    fn time_sliced_gpus_carry_replicas_and_pigeonhole_certainty() {
        let node = gpu_node(
            "a100-2",
            "A100-SXM4-80GB",
            vec![plain_gpu(0, "GPU-a"), plain_gpu(1, "GPU-b")],
            time_sliced(4),
        );
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![
                pod("team-a", "small", Some(0), &[("nvidia.com/gpu", 1)]),
                // 8 replicas of 4 per GPU need both GPUs.
                pod("team-b", "wide", Some(0), &[("nvidia.com/gpu", 8)]),
            ],
        );
        let layout = layout_of(&fleet, &tenancy);
        let n = &layout[0];
        assert_eq!(n.gpus.len(), 2);
        for g in &n.gpus {
            assert_eq!(g.sharing, Sharing::TimeSlicing { replicas: 4 });
            assert_eq!(g.sharing.replicas(), 4);
            assert_eq!(g.mechanisms, vec![Mechanism::TimeSlicing]);
            // The surest first.
            assert_eq!(
                tenants(&g.tenants),
                vec![
                    ("team-b", Certainty::Observed),
                    ("team-a", Certainty::Possible)
                ]
            );
            assert!(g.instances.is_empty());
        }
    }

    #[test]
    fn hami_pinned_uuids_decide_the_gpu() {
        let mut node = gpu_node(
            "l40s-1",
            "L40S",
            vec![plain_gpu(0, "GPU-a"), plain_gpu(1, "GPU-b")],
            SharingConfig::default(),
        );
        if let Some(g) = node.gpu.as_mut() {
            g.hami = true;
        }
        let mut w = pod("team-a", "vgpu", Some(0), &[]);
        w.gpu.hami = Some(HamiRequest {
            gpus: 1,
            memory_mib: Some(8192),
            ..HamiRequest::default()
        });
        w.placement.recorded = vec![RecordedDevice {
            by: Mechanism::HamiVgpu,
            device: PhysicalDevice::Gpu("GPU-b".into()),
            part: None,
        }];
        let (fleet, tenancy) = fleet(vec![node], vec![w]);
        let layout = layout_of(&fleet, &tenancy);
        let n = &layout[0];
        assert!(n.hami);
        assert!(n.gpus[0].tenants.is_empty());
        assert_eq!(
            tenants(&n.gpus[1].tenants),
            vec![("team-a", Certainty::Observed)]
        );
        assert_eq!(n.gpus[1].mechanisms, vec![Mechanism::HamiVgpu]);
    }

    #[test]
    fn unlisted_gpus_are_drawn_from_the_count_and_cpu_pods_only_share_the_node() {
        let mut node = gpu_node("t4-1", "T4", Vec::new(), SharingConfig::default());
        if let Some(g) = node.gpu.as_mut() {
            g.count = 2;
        }
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![
                pod("team-a", "gpu", Some(0), &[("nvidia.com/gpu", 2)]),
                pod("team-b", "cpu", Some(0), &[]),
            ],
        );
        let layout = layout_of(&fleet, &tenancy);
        let n = &layout[0];
        let indices: Vec<u32> = n.gpus.iter().map(|g| g.index).collect();
        assert_eq!(indices, vec![0, 1]);
        for g in &n.gpus {
            assert_eq!(g.sharing, Sharing::Exclusive);
            assert_eq!(tenants(&g.tenants), vec![("team-a", Certainty::Observed)]);
        }
        assert!(n.tenants.iter().any(|t| t.tenant == "team-b"));
        assert_eq!(n.memory_slices, None);
    }

    #[test]
    fn placement_keeps_given_starts_and_fails_soft() {
        let model = catalogue::lookup("H100-SXM5-80GB");
        let slots = |s: &[(&str, Option<u8>)]| -> Vec<MigSlot> {
            s.iter()
                .map(|(p, st)| MigSlot {
                    profile: (*p).into(),
                    start: *st,
                })
                .collect()
        };
        // Two 3g.40gb without starts go to 0 and 4.
        assert_eq!(
            place(&slots(&[("3g.40gb", None), ("3g.40gb", None)]), model),
            vec![Some(0), Some(4)]
        );
        // Given starts are kept even when they are invalid (GT108 reports those).
        assert_eq!(place(&slots(&[("3g.40gb", Some(1))]), model), vec![Some(1)]);
        // An unknown profile, or more than fits, leaves the start unknown.
        assert_eq!(place(&slots(&[("5g.50gb", None)]), model), vec![None]);
        assert_eq!(
            place(&slots(&[("7g.80gb", None), ("7g.80gb", None)]), model),
            vec![None, None]
        );
        assert_eq!(place(&slots(&[("1g.10gb", None)]), None), vec![None]);
    }

    /// A Deployment in the input with its pod on the node is one workload of its tenant, named once
    /// by its owner with the pod (`kubectl get -o yaml` of a Deployment and of its ReplicaSet's pod:
    /// `ownerReferences` to the ReplicaSet, the `pod-template-hash` label).
    #[test]
    fn a_pod_and_its_owner_are_one_workload() {
        let node = gpu_node(
            "a100-1",
            "A100-SXM4-80GB",
            vec![plain_gpu(0, "GPU-a")],
            time_sliced(4),
        );
        let mut running = pod(
            "team-a",
            "web-7cb557479-x2fe7",
            Some(0),
            &[("nvidia.com/gpu", 1)],
        );
        running.owner = Some("ReplicaSet/web-7cb557479".into());
        running
            .labels
            .insert("pod-template-hash".into(), "7cb557479".into());
        let mut template = pod("team-a", "web", None, &[("nvidia.com/gpu", 1)]);
        template.kind = WorkloadKind::Deployment;
        template.object.kind = "Deployment".into();
        template.placement.permitted = 1;
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![
                running,
                template,
                pod("team-b", "solo", Some(0), &[("nvidia.com/gpu", 1)]),
            ],
        );
        let layout = layout_of(&fleet, &tenancy);
        let on_gpu = &layout[0].gpus[0].tenants;
        let a = on_gpu.iter().find(|o| o.tenant == "team-a").unwrap();
        assert_eq!(a.workload_count, 1, "{a:?}");
        assert_eq!(a.workloads, ["Deployment team-a/web (1 pod)"]);
        let b = on_gpu.iter().find(|o| o.tenant == "team-b").unwrap();
        assert_eq!(b.workloads, ["Pod team-b/solo"]);
    }

    /// Where a list of tenants is cut, those running there come before those only permitted
    /// there, whatever their names.
    #[test]
    fn running_tenants_come_before_permitted_ones() {
        let node = gpu_node(
            "a100-1",
            "A100-SXM4-80GB",
            vec![plain_gpu(0, "GPU-a")],
            time_sliced(4),
        );
        let mut waiting = pod("team-a", "batch", None, &[("nvidia.com/gpu", 1)]);
        waiting.placement.permitted = 1;
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![
                waiting,
                pod("team-z", "infer", Some(0), &[("nvidia.com/gpu", 1)]),
            ],
        );
        let layout = layout_of(&fleet, &tenancy);
        let n = &layout[0];
        assert_eq!(
            tenants(&n.gpus[0].tenants),
            vec![
                ("team-z", Certainty::Observed),
                ("team-a", Certainty::Permitted)
            ]
        );
        let on_node: Vec<&str> = n.tenants.iter().map(|t| t.tenant.as_str()).collect();
        assert_eq!(on_node, ["team-z", "team-a"]);
    }

    #[test]
    fn layout_is_deterministic_and_serialises() {
        let node = gpu_node(
            "a100-2",
            "A100-SXM4-80GB",
            vec![plain_gpu(0, "GPU-a")],
            time_sliced(2),
        );
        let (fleet, tenancy) = fleet(
            vec![node],
            vec![
                pod("team-b", "b", Some(0), &[("nvidia.com/gpu", 1)]),
                pod("team-a", "a", Some(0), &[("nvidia.com/gpu", 1)]),
            ],
        );
        let a = serde_json::to_string(&layout_of(&fleet, &tenancy)).unwrap();
        let b = serde_json::to_string(&layout_of(&fleet, &tenancy)).unwrap();
        assert_eq!(a, b);
        assert!(
            a.contains("\"sharing\":{\"kind\":\"time-slicing\",\"replicas\":2}"),
            "{a}"
        );
    }
}
