//! The fleet as `gpu-trust inventory` shows it: per node, per GPU or MIG instance, the mechanism in
//! force and who is on it (with how sure the tool is), the workloads not placed yet and where they
//! may go, and everything that could not be resolved. This is the `gpu-trust/inventory/v1` wire
//! format (camelCase keys, sorted lists, so the same input gives byte-identical JSON).

use gpu_trust_model::fleet::{
    ConfigSource, DeviceSlot, Fleet, GpuNode, MigStrategy, Platform, SharingStrategy, UnknownFact,
    Workload, WorkloadClass, WorkloadOverrides,
};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::occupancy::{Devices, Seat};
use gpu_trust_model::{resource, Certainty, Diagnostic};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

pub const INVENTORY_SCHEMA: &str = "gpu-trust/inventory/v1";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inventory {
    pub schema: &'static str,
    pub summary: Summary,
    pub nodes: Vec<NodeView>,
    /// GPU workloads not running on a node now (templates, pending pods), with where they may run.
    pub unscheduled: Vec<UnscheduledView>,
    pub unresolved: Vec<UnresolvedView>,
    /// Input documents that could not be used (listed when `--skip-invalid` lets the run go on).
    pub skipped: Vec<SkippedView>,
    pub warnings: Vec<SkippedView>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub nodes: usize,
    pub gpu_nodes: usize,
    pub gpus: usize,
    pub mig_instances: usize,
    pub workloads: usize,
    pub gpu_pods: usize,
    pub tenants: usize,
    pub unresolved: usize,
    pub skipped: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    pub name: String,
    /// `file:line` of the Node object.
    pub location: String,
    pub model: Option<String>,
    pub product: Option<String>,
    pub gpus: u32,
    pub driver: Option<String>,
    pub toolkit: Option<String>,
    pub cc_mode: Option<String>,
    pub mig_strategy: Option<MigStrategy>,
    /// `time-slicing x4`, `mps x4`, `none`.
    pub sharing: Option<String>,
    /// Where the sharing configuration came from.
    pub sharing_source: Option<String>,
    pub mig_source: Option<String>,
    pub hami: bool,
    /// The installers and platforms whose labels and configs gave the node's GPU facts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub platforms: Vec<Platform>,
    /// Facts the input does not give for the node, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<UnknownFact>,
    pub taints: Vec<String>,
    /// Tenants with pods on the node, sorted.
    pub tenants: Vec<String>,
    pub devices: Vec<DeviceView>,
    /// The tenants' pods on the node that use no GPU.
    pub other_pods: usize,
    /// Pods of platform namespaces on the node that use no GPU (the GPU Operator's operands, system
    /// daemons): no tenant's.
    pub platform_pods: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceView {
    /// `gpu0`, or `gpu0/mig3` for a MIG instance.
    pub id: String,
    pub uuid: Option<String>,
    /// MIG profile and start slice (`3g.40gb@4`).
    pub instance: Option<String>,
    /// The mechanism the node's configuration puts on this device, or its occupants' when a
    /// scheduler shares a device the configuration hands out whole; `None` (not known) on a node
    /// where a workload asks for a GPU no mechanism maps (the device may be handed out to several
    /// workloads, and is never called exclusive there) and where occupants share it in different
    /// ways.
    pub mechanism: Option<Mechanism>,
    /// Replicas the device plugin advertises for it (1 when not shared).
    pub replicas: u32,
    pub occupants: Vec<Occupant>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Occupant {
    /// `namespace/name`.
    pub pod: String,
    /// `None` for a platform namespace.
    pub tenant: Option<String>,
    /// `observed` when the evidence pins the pod to this device; `possible` when it is one of several
    /// the pod may be using.
    pub certainty: Certainty,
    /// How this pod gets the device (its request on this node's configuration); `None` when not
    /// known.
    pub mechanism: Option<Mechanism>,
    /// The devices schedulers recorded for the pod, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recorded: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnscheduledView {
    /// `Kind namespace/name` (with the replica type for training kinds).
    pub workload: String,
    pub location: String,
    pub tenant: Option<String>,
    pub class: WorkloadClass,
    pub replicas: u32,
    /// GPU resources requested, `name=count`.
    pub requests: Vec<String>,
    /// GPU nodes its constraints permit.
    pub permitted_gpu_nodes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnresolvedView {
    pub object: String,
    pub location: String,
    pub node: Option<String>,
    pub what: gpu_trust_model::fleet::UnresolvedKind,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedView {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub error: String,
}

impl From<&Diagnostic> for SkippedView {
    fn from(d: &Diagnostic) -> Self {
        SkippedView {
            file: d.location.file.clone(),
            line: d.location.line,
            column: d.location.column,
            error: d.message.clone(),
        }
    }
}

/// Builds the inventory. `tenant_of` names the tenant of a namespace (`None` for a platform
/// namespace); `overrides` says what the policy's `workloads` entries say about a workload;
/// `tenants` is how many tenants the policy resolved.
pub fn inventory(
    fleet: &Fleet,
    diagnostics: &[Diagnostic],
    tenant_of: &dyn Fn(&str) -> Option<String>,
    overrides: &dyn Fn(&Workload) -> WorkloadOverrides,
    tenants: usize,
) -> Inventory {
    let unmapped = fleet.unmapped_nodes();
    let mut nodes: Vec<NodeView> = fleet
        .nodes
        .iter()
        .enumerate()
        .map(|(id, n)| NodeView {
            name: n.name.clone(),
            location: n.object.location.to_string(),
            model: n.gpu.as_ref().and_then(|g| g.model.clone()),
            product: n.gpu.as_ref().and_then(|g| g.product.clone()),
            gpus: n.gpu.as_ref().map_or(0, |g| g.count),
            driver: n
                .gpu
                .as_ref()
                .and_then(|g| g.driver_version.as_ref())
                .map(|v| v.text.clone()),
            toolkit: n
                .gpu
                .as_ref()
                .and_then(|g| g.toolkit_version.as_ref())
                .map(|v| v.text.clone()),
            cc_mode: n.gpu.as_ref().and_then(|g| g.cc_mode.clone()),
            mig_strategy: n.gpu.as_ref().map(|g| g.mig_strategy),
            sharing: n.gpu.as_ref().map(sharing_text),
            sharing_source: n.gpu.as_ref().map(|g| source_text(&g.sharing.source)),
            mig_source: n
                .gpu
                .as_ref()
                .and_then(|g| g.mig_source.as_ref())
                .map(source_text),
            hami: n.gpu.as_ref().is_some_and(|g| g.hami),
            platforms: n
                .gpu
                .as_ref()
                .map(|g| g.platforms.clone())
                .unwrap_or_default(),
            unknown: n
                .gpu
                .as_ref()
                .map(|g| g.unknown.clone())
                .unwrap_or_default(),
            taints: n
                .taints
                .iter()
                .map(|t| match &t.value {
                    Some(v) => format!("{}={v}:{:?}", t.key, t.effect),
                    None => format!("{}:{:?}", t.key, t.effect),
                })
                .collect(),
            tenants: Vec::new(),
            devices: n
                .gpu
                .as_ref()
                .map(|g| device_views(g, unmapped.contains(&id)))
                .unwrap_or_default(),
            other_pods: 0,
            platform_pods: 0,
        })
        .collect();
    // Position of each device view by seat, per node.
    let seat_index: Vec<BTreeMap<Seat, usize>> = fleet
        .nodes
        .iter()
        .map(|n| {
            n.gpu
                .as_ref()
                .map(|g| {
                    Devices::listed(g)
                        .seats()
                        .into_iter()
                        .enumerate()
                        .map(|(i, seat)| (seat, i))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let mut unscheduled = Vec::new();
    let mut gpu_pods = 0;
    let mut node_tenants: Vec<BTreeSet<String>> = vec![BTreeSet::new(); nodes.len()];
    for w in &fleet.workloads {
        let tenant = tenant_of(&w.namespace);
        match w.placement.node {
            Some(id) => {
                let (Some(view), Some(node)) = (nodes.get_mut(id), fleet.nodes.get(id)) else {
                    continue;
                };
                if let (Some(t), Some(set)) = (&tenant, node_tenants.get_mut(id)) {
                    set.insert(t.clone());
                }
                if w.placement.devices.is_empty() {
                    match (w.requests_gpu(), &tenant) {
                        (true, _) => gpu_pods += 1,
                        (false, Some(_)) => view.other_pods += 1,
                        (false, None) => view.platform_pods += 1,
                    }
                    continue;
                }
                gpu_pods += 1;
                let mechanism = node.gpu.as_ref().and_then(|g| Mechanism::of_workload(w, g));
                let certainty = if w.placement.observed {
                    Certainty::Observed
                } else {
                    Certainty::Possible
                };
                let devices = node.gpu.as_ref().map(Devices::listed);
                for slot in &w.placement.devices {
                    let found = devices
                        .as_ref()
                        .and_then(|d| d.seat_of(slot))
                        .and_then(|seat| seat_index.get(id)?.get(&seat))
                        .copied();
                    if let Some(d) = found.and_then(|i| view.devices.get_mut(i)) {
                        d.occupants.push(Occupant {
                            pod: format!("{}/{}", w.namespace, w.object.name),
                            tenant: tenant.clone(),
                            certainty,
                            mechanism,
                            recorded: w.placement.recorded.iter().map(|r| r.describe()).collect(),
                        });
                    }
                }
            }
            None if w.requests_gpu() => {
                let permitted: Vec<String> = fleet
                    .permitted_nodes(w)
                    .iter()
                    .filter_map(|&i| fleet.nodes.get(i))
                    .filter(|n| n.gpu.is_some())
                    .map(|n| n.name.clone())
                    .collect();
                unscheduled.push(UnscheduledView {
                    workload: workload_name(w),
                    location: w.object.location.to_string(),
                    tenant,
                    class: overrides(w).class(w),
                    replicas: w.replicas,
                    requests: w
                        .gpu
                        .resources
                        .iter()
                        .filter(|(k, _)| k.starts_with(resource::DOMAIN))
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect(),
                    permitted_gpu_nodes: permitted,
                });
            }
            None => {}
        }
    }
    for (view, t) in nodes.iter_mut().zip(node_tenants) {
        view.tenants = t.into_iter().collect();
        for d in &mut view.devices {
            d.occupants.sort();
            // A device the configuration hands out whole that a scheduler shares (a fraction, a
            // vGPU, MIG instances cut on demand) has its occupants' mechanism, never `exclusive`.
            if d.mechanism == Some(Mechanism::Exclusive) {
                let shared: BTreeSet<Mechanism> = d
                    .occupants
                    .iter()
                    .filter_map(|o| o.mechanism)
                    .filter(|m| *m != Mechanism::Exclusive)
                    .collect();
                if !shared.is_empty() {
                    d.mechanism = shared.first().copied().filter(|_| shared.len() == 1);
                }
            }
        }
    }
    let unresolved: Vec<UnresolvedView> = fleet
        .unresolved
        .iter()
        .map(|u| UnresolvedView {
            object: u.object.to_string(),
            location: u.object.location.to_string(),
            node: u.node.clone(),
            what: u.what,
            message: u.message.clone(),
        })
        .collect();
    let skipped: Vec<SkippedView> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(SkippedView::from)
        .collect();
    let warnings: Vec<SkippedView> = diagnostics
        .iter()
        .filter(|d| !d.is_error())
        .map(SkippedView::from)
        .collect();
    let summary = Summary {
        nodes: fleet.nodes.len(),
        gpu_nodes: fleet.nodes.iter().filter(|n| n.gpu.is_some()).count(),
        gpus: fleet
            .nodes
            .iter()
            .filter_map(|n| n.gpu.as_ref())
            .map(|g| g.count as usize)
            .sum(),
        mig_instances: fleet
            .nodes
            .iter()
            .filter_map(|n| n.gpu.as_ref())
            .flat_map(|g| &g.gpus)
            .map(|p| p.mig.len())
            .sum(),
        workloads: fleet.workloads.len(),
        gpu_pods,
        tenants,
        unresolved: unresolved.len(),
        skipped: skipped.len(),
    };
    Inventory {
        schema: INVENTORY_SCHEMA,
        summary,
        nodes,
        unscheduled,
        unresolved,
        skipped,
        warnings,
    }
}

fn workload_name(w: &Workload) -> String {
    let base = format!("{} {}/{}", w.object.kind, w.namespace, w.object.name);
    match &w.role {
        Some(r) => format!("{base} [{r}]"),
        None => base,
    }
}

fn slot_id(slot: &DeviceSlot) -> String {
    match slot.instance {
        Some(i) => format!("gpu{}/mig{i}", slot.gpu),
        None => format!("gpu{}", slot.gpu),
    }
}

/// The node's devices as the occupancy view gives them: the instances of a MIG GPU, one entry for a MIG
/// GPU without instances, else the whole GPU; on a node where a GPU is asked for in a way no
/// mechanism maps (`unmapped`), a device the configuration would hand out whole has no mechanism.
fn device_views(g: &GpuNode, unmapped: bool) -> Vec<DeviceView> {
    let devices = Devices::listed(g);
    let mut out = Vec::new();
    for (k, p) in devices.gpus.iter().enumerate() {
        let seats = devices.seats_of(k);
        if seats.is_empty() {
            // MIG is on without instances: a config that creates none (`mig-devices: {}`), or one
            // the geometry cannot place.
            out.push(DeviceView {
                id: slot_id(&DeviceSlot {
                    gpu: p.index,
                    instance: None,
                }),
                uuid: p.uuid.clone(),
                instance: Some("MIG enabled, no instances".to_string()),
                mechanism: Some(Mechanism::MigInstance),
                replicas: 1,
                occupants: Vec::new(),
            });
            continue;
        }
        for seat in seats {
            let (instance, uuid, slot) = match seat {
                Seat::Instance(_, i) => {
                    let s = &p.mig[i];
                    let text = match s.start {
                        Some(st) => format!("{}@{st}", s.profile),
                        None => s.profile.clone(),
                    };
                    (Some(text), None, Some(u32::try_from(i).unwrap_or(u32::MAX)))
                }
                Seat::Gpu(_) => (None, p.uuid.clone(), None),
            };
            out.push(DeviceView {
                id: slot_id(&DeviceSlot {
                    gpu: p.index,
                    instance: slot,
                }),
                uuid,
                instance,
                mechanism: Some(devices.mechanism(seat))
                    .filter(|m| !(unmapped && *m == Mechanism::Exclusive)),
                replicas: devices.replicas(seat),
                occupants: Vec::new(),
            });
        }
    }
    out
}

fn sharing_text(g: &GpuNode) -> String {
    if g.sharing.strategy == SharingStrategy::None {
        return SharingStrategy::None.as_str().to_string();
    }
    let strategy = g.sharing.strategy.as_str();
    let replicas: BTreeMap<&String, &u32> = g.sharing.replicas.iter().collect();
    let parts: Vec<String> = replicas
        .iter()
        .map(|(r, n)| format!("{} x{n}", r.trim_start_matches(resource::DOMAIN)))
        .collect();
    if parts.is_empty() {
        strategy.to_string()
    } else {
        format!("{strategy} ({})", parts.join(", "))
    }
}

fn source_text(s: &ConfigSource) -> String {
    match s {
        ConfigSource::ConfigMap {
            namespace,
            name,
            key,
            config,
        } => match config {
            Some(c) => format!("ConfigMap {namespace}/{name} key {key} config {c}"),
            None => format!("ConfigMap {namespace}/{name} key {key}"),
        },
        ConfigSource::NodeLabels => "node labels (GPU Feature Discovery)".to_string(),
        ConfigSource::Default => "device plugin defaults".to_string(),
        ConfigSource::Unknown => "unknown".to_string(),
    }
}
