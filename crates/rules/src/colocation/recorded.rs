//! What the cluster recorded: the one place where allocation records become shared things. Per GPU
//! node, the tenants whose scheduled workloads the cluster recorded on one device share it (a device
//! site), and those recorded on different partitions of one GPU share that GPU (a MIG GPU site),
//! both `observed`, whatever allocated them. A workload with records is placed by them alone: the
//! scheduled device units and MIG GPUs (`compute.rs`) leave it out, so that where records show no
//! common device, none is inferred from the configuration.

use super::*;

/// Tenants' workloads by the device (or GPU) their records name.
type ByDevice<'f> = BTreeMap<&'f DeviceId, BTreeMap<TenantId, Vec<WorkloadId>>>;

impl Colocation {
    /// Adds the sites of recorded allocations, node by node.
    pub(super) fn recorded_sites(&mut self, fleet: &Fleet) {
        let mut sites = Vec::new();
        for (node, tenants) in &self.placed {
            let mut devices: ByDevice<'_> = BTreeMap::new();
            let mut gpus: ByDevice<'_> = BTreeMap::new();
            let mut mechanisms: BTreeMap<&DeviceId, BTreeSet<Mechanism>> = BTreeMap::new();
            for (tenant, workloads) in tenants {
                for wid in workloads {
                    let Some(w) = fleet.workloads.get(*wid) else {
                        continue;
                    };
                    for a in &w.placement.allocations {
                        devices
                            .entry(&a.device)
                            .or_default()
                            .entry(*tenant)
                            .or_default()
                            .push(*wid);
                        if let Some(u) = self.uses.get(&(*node, *wid)) {
                            mechanisms.entry(&a.device).or_default().insert(u.mechanism);
                        }
                        if let Some(parent) = &a.parent {
                            gpus.entry(parent)
                                .or_default()
                                .entry(*tenant)
                                .or_default()
                                .push(*wid);
                        }
                    }
                }
            }
            let site =
                |level: Level, id: &DeviceId, members: BTreeMap<TenantId, Vec<WorkloadId>>| Site {
                    level,
                    group: self.node_class.get(node).copied(),
                    nodes: Arc::from(vec![*node]),
                    permitted: false,
                    members: members
                        .into_iter()
                        .map(|(t, workloads)| {
                            let member = Member {
                                workloads,
                                pinned: true,
                                ..Member::default()
                            };
                            (t, member)
                        })
                        .collect(),
                    judge: Judge::Recorded(id.clone()),
                    unit: None,
                };
            for (id, members) in devices {
                if members.len() < 2 {
                    continue;
                }
                let partition = gpus_of(fleet, &members, id);
                sites.push(site(
                    Level::Device(shared_mechanism(mechanisms.get(id), partition)),
                    id,
                    members,
                ));
            }
            for (id, members) in gpus {
                if members.len() >= 2 {
                    sites.push(site(Level::MigGpu, id, members));
                }
            }
        }
        self.sites.extend(sites);
    }
}

/// Whether the records of `members` name `device` as a partition of a GPU.
fn gpus_of(
    fleet: &Fleet,
    members: &BTreeMap<TenantId, Vec<WorkloadId>>,
    device: &DeviceId,
) -> bool {
    members
        .values()
        .flatten()
        .filter_map(|w| fleet.workloads.get(*w))
        .flat_map(|w| &w.placement.allocations)
        .any(|a| &a.device == device && a.parent.is_some())
}

/// The mechanism under which the tenants recorded on one device share it: theirs when one that
/// shares a device is among them, else time-slicing (of the device, or inside the MIG device): with
/// neither MPS nor a vGPU between them, processes of several containers on one GPU take turns on
/// it (NVIDIA device plugin README, "Shared Access to GPUs": "CUDA time-slicing is used to allow
/// workloads sharing a GPU to interleave with each other").
fn shared_mechanism(seen: Option<&BTreeSet<Mechanism>>, partition: bool) -> Mechanism {
    seen.into_iter()
        .flatten()
        .copied()
        .find(|m| m.shares_device())
        .unwrap_or(Mechanism::from_sharing(
            SharingStrategy::TimeSlicing,
            2,
            partition,
        ))
}
