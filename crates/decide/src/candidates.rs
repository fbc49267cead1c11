//! The changes worth auditing: ways to close a finding that gpu-trust can write out whole, found in
//! the model and the report without judging anything (the audit of the changed input judges).
//!
//! - **Move a workload** named by an open finding to another group of GPU nodes: a strategic merge
//!   patch of its pod template as `gpu-trust plan` writes them (the planner's `pod_patch`), selecting
//!   the group by the labels that single it out and tolerating its taints. Only Deployments and
//!   StatefulSets: a change of their pod template makes Kubernetes replace their pods
//!   (<https://kubernetes.io/docs/concepts/workloads/controllers/deployment/>, "a Deployment's rollout
//!   is triggered if and only if the Deployment's Pod template is changed"; a StatefulSet's default
//!   `updateStrategy` is `RollingUpdate`, which deletes and recreates each pod:
//!   <https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#update-strategies>); a
//!   Job's pod template cannot be changed once created. The changed input has the patched template
//!   and not the pods (nor the ReplicaSet) the rollout replaces.
//! - **Upgrade a driver** the advisory data names to the highest fixed version of its advisories,
//!   through the ClusterPolicy's `spec.driver.version` when the GPU Operator manages the driver (NVIDIA
//!   GPU Operator documentation, "GPU Driver Upgrades": the upgrade controller rolls the new driver
//!   out node by node). Its effect comes from controllers: the driver is installed on each node and
//!   GPU Feature Discovery labels its version; the changed input carries those labels, assumed.

use crate::documents::{Edit, Target};
use gpu_trust_model::fleet::{Fleet, Node, TaintEffect, Workload, WorkloadKind};
use gpu_trust_model::report::{ActionKind, AuditReport, FindingObject};
use gpu_trust_model::{catalogue, labels, resource, Version};
use gpu_trust_planner::patch::{pod_patch, Objects, Request};
use gpu_trust_planner::plan::{PlanWorkload, Toleration};
use gpu_trust_rules::advisories::{Advisories, Component, RuntimeSetup};
use gpu_trust_rules::owner::Owners;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The label the kubelet gives a node with its host name
/// (<https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetesiohostname>): a
/// selector of one node, the last one chosen.
const HOSTNAME: &str = "kubernetes.io/hostname";

/// Label domains that say nothing about a group of nodes a workload may be sent to: what the
/// kubelet, Node Feature Discovery and NVIDIA's components label every node with (the NVIDIA labels
/// that do say it are chosen first, [`FACTS`]).
const NOT_GROUPS: [&str; 6] = [
    "kubernetes.io/",
    "beta.kubernetes.io/",
    "node.kubernetes.io/",
    "node-role.kubernetes.io/",
    "feature.node.kubernetes.io/",
    "nvidia.com/",
];

/// NVIDIA's labels that say how a node shares and protects its GPUs, in the order a selector takes
/// them when the cluster's own workloads select on none of its labels.
const FACTS: [&str; 4] = [
    labels::CC_MODE_STATE,
    labels::DEVICE_PLUGIN_CONFIG,
    labels::MIG_CONFIG,
    labels::PRODUCT,
];

/// One change to try.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub kind: ActionKind,
    pub summary: String,
    pub object: String,
    pub commands: Vec<String>,
    pub patch: Option<Value>,
    /// What the change does to the input's objects, with what controllers then do.
    pub edits: Vec<Edit>,
    pub verified: bool,
    pub notes: Vec<String>,
    /// Two candidates of one subject are never taken together.
    pub subject: String,
    /// A moved workload, which must still have nodes to run on once changed.
    pub moved: Option<Target>,
}

/// Every candidate, moves first, in a fixed order.
pub fn all(
    fleet: &Fleet,
    report: &AuditReport,
    goal: &BTreeSet<String>,
    advisories: &Advisories,
) -> Vec<Candidate> {
    let mut out = moves(fleet, report, goal);
    out.extend(unshare(fleet));
    out.extend(upgrades(fleet, advisories));
    out
}

/// For the nodes whose device plugin config (a key of a ConfigMap, chosen by the node's
/// `nvidia.com/device-plugin.config` label) shares GPUs: the label set to a key of the same
/// ConfigMap that other nodes of the same MIG strategy use without sharing. The device plugin's
/// config manager watches that label and restarts the plugin with the config it names
/// (NVIDIA/gpu-operator `assets/state-device-plugin/0500_daemonset.yaml`, the `config-manager`
/// container's `NODE_LABEL`); pods already running keep the devices they hold until they are
/// recreated, so the effect is not verified.
fn unshare(fleet: &Fleet) -> Vec<Candidate> {
    use gpu_trust_model::fleet::{ConfigSource, SharingStrategy};
    let source = |n: &Node| match n.gpu.as_ref().map(|g| &g.sharing.source) {
        Some(ConfigSource::ConfigMap {
            namespace,
            name,
            key,
            ..
        }) => Some((namespace.clone(), name.clone(), key.clone())),
        _ => None,
    };
    let mut shared: BTreeMap<(String, String, String), Vec<&Node>> = BTreeMap::new();
    for (_, n) in fleet.gpu_nodes() {
        let Some(g) = &n.gpu else { continue };
        if g.sharing.strategy != SharingStrategy::None
            && n.labels.contains_key(labels::DEVICE_PLUGIN_CONFIG)
        {
            if let Some(s) = source(n) {
                shared.entry(s).or_default().push(n);
            }
        }
    }
    let mut out = Vec::new();
    for ((namespace, name, key), nodes) in shared {
        let strategy = nodes[0].gpu.as_ref().map(|g| g.mig_strategy);
        let exclusive: BTreeSet<String> = fleet
            .gpu_nodes()
            .filter(|(_, n)| {
                n.gpu.as_ref().is_some_and(|g| {
                    g.sharing.strategy == SharingStrategy::None && Some(g.mig_strategy) == strategy
                })
            })
            .filter_map(|(_, n)| source(n))
            .filter(|(ns, cm, k)| *ns == namespace && *cm == name && *k != key)
            .map(|(_, _, k)| k)
            .collect();
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        // Without sharing each GPU is one device: the pods there must fit the GPUs.
        let gpus: u64 = nodes
            .iter()
            .filter_map(|n| n.gpu.as_ref())
            .map(|g| u64::from(g.count))
            .sum();
        let requested: u64 = fleet
            .workloads
            .iter()
            .filter(|p| {
                p.placement
                    .node
                    .and_then(|n| fleet.nodes.get(n))
                    .is_some_and(|n| names.contains(&n.name.as_str()))
            })
            .flat_map(|p| p.containers.iter().filter(|c| !c.is_init))
            .flat_map(|c| &c.resources)
            .filter(|(r, _)| resource::is_nvidia_gpu_resource(r))
            .map(|(_, n)| *n)
            .sum();
        if requested > gpus {
            continue;
        }
        for to in exclusive {
            let patch = json!({"metadata": {"labels": {labels::DEVICE_PLUGIN_CONFIG: to}}});
            out.push(Candidate {
                kind: ActionKind::StopSharing,
                summary: format!(
                    "Stop sharing the GPUs of node{} {}: the device plugin config `{to}` of ConfigMap {namespace}/{name} instead of `{key}`",
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ),
                object: format!("ConfigMap/{namespace}/{name}"),
                commands: names
                    .iter()
                    .map(|n| {
                        format!(
                            "kubectl label node {n} {}={to} --overwrite",
                            labels::DEVICE_PLUGIN_CONFIG
                        )
                    })
                    .collect(),
                patch: Some(patch.clone()),
                edits: nodes
                    .iter()
                    .map(|n| {
                        Edit::Patch(
                            Target {
                                kind: "Node".into(),
                                namespace: None,
                                name: n.name.clone(),
                            },
                            patch.clone(),
                        )
                    })
                    .collect(),
                verified: false,
                notes: vec![
                    "the effect comes from a controller: the device plugin's config manager restarts the plugin with the config the label names; pods already running keep the GPUs they hold until they are recreated (roll their workloads out)".to_string(),
                    format!("the pods there request {requested} GPUs of the {gpus} the nodes have"),
                ],
                subject: format!("sharing/{}", names.join(",")),
                moved: None,
            });
        }
    }
    out
}

/// A group of GPU nodes alike in what a workload gets there: GPU model, sharing, MIG layout, CC mode
/// and taints.
struct Pool<'f> {
    nodes: Vec<&'f Node>,
    selector: BTreeMap<String, String>,
}

fn pools(fleet: &Fleet) -> Vec<Pool<'_>> {
    let mut groups: BTreeMap<Vec<String>, Vec<&Node>> = BTreeMap::new();
    for (_, n) in fleet.gpu_nodes() {
        let g = n.gpu.as_ref();
        let mut key = vec![
            g.and_then(|g| g.model.clone()).unwrap_or_default(),
            g.and_then(|g| g.cc_mode.clone()).unwrap_or_default(),
        ];
        for k in [labels::DEVICE_PLUGIN_CONFIG, labels::MIG_CONFIG] {
            key.push(n.labels.get(k).cloned().unwrap_or_default());
        }
        let mut taints: Vec<String> = n
            .taints
            .iter()
            .map(|t| {
                format!(
                    "{}={}:{:?}",
                    t.key,
                    t.value.as_deref().unwrap_or(""),
                    t.effect
                )
            })
            .collect();
        taints.sort();
        key.extend(taints);
        groups.entry(key).or_default().push(n);
    }
    // The label keys the cluster's workloads already select nodes by come first.
    let used: BTreeSet<&str> = fleet
        .workloads
        .iter()
        .flat_map(|w| w.placement.node_selector.keys())
        .map(String::as_str)
        .collect();
    groups
        .into_values()
        .filter_map(|nodes| {
            let selector = selector(fleet, &nodes, &used)?;
            Some(Pool { nodes, selector })
        })
        .collect()
}

/// The fewest labels, taken in order of preference, that every node of the group has and that no
/// other node of the fleet has all of; `None` when no labels single the group out.
fn selector(
    fleet: &Fleet,
    group: &[&Node],
    used: &BTreeSet<&str>,
) -> Option<BTreeMap<String, String>> {
    let first = group.first()?;
    let rank = |k: &str| {
        if used.contains(k) && k != HOSTNAME {
            0
        } else if FACTS.contains(&k) {
            1
        } else if k == HOSTNAME {
            3
        } else if NOT_GROUPS.iter().any(|d| k.starts_with(d)) {
            4
        } else {
            2
        }
    };
    let mut common: Vec<(&String, &String)> = first
        .labels
        .iter()
        .filter(|(k, v)| rank(k) < 4 && group.iter().all(|n| n.labels.get(*k) == Some(v)))
        .collect();
    common.sort_by_key(|(k, _)| (rank(k), FACTS.iter().position(|f| f == k), *k));
    let mut outsiders: Vec<&Node> = fleet
        .nodes
        .iter()
        .filter(|n| !group.iter().any(|g| g.name == n.name))
        .collect();
    let mut chosen = BTreeMap::new();
    for (k, v) in common {
        if outsiders.is_empty() {
            break;
        }
        if outsiders.iter().any(|n| n.labels.get(k) != Some(v)) {
            outsiders.retain(|n| n.labels.get(k) == Some(v));
            chosen.insert(k.clone(), v.clone());
        }
    }
    outsiders.is_empty().then_some(chosen)
}

/// The workload objects the open findings at or above the threshold name, by kind, namespace and
/// name.
fn named(report: &AuditReport, goal: &BTreeSet<String>) -> BTreeSet<(String, String, String)> {
    report
        .findings
        .iter()
        .filter(|f| goal.contains(&f.id()))
        .flat_map(|f| &f.objects)
        .filter_map(|o: &FindingObject| {
            Some((o.kind.clone(), o.namespace.clone()?, o.name.clone()))
        })
        .filter(|(k, _, _)| k == "Deployment" || k == "StatefulSet")
        .collect()
}

fn moves(fleet: &Fleet, report: &AuditReport, goal: &BTreeSet<String>) -> Vec<Candidate> {
    let objects = Objects::from_fleet(fleet);
    let owners = Owners::new(fleet);
    let pools = pools(fleet);
    let mut out = Vec::new();
    for (kind, ns, name) in named(report, goal) {
        let Some(w) = fleet.workloads.iter().find(|w| {
            w.owner.is_none() && w.object.kind == kind && w.namespace == ns && w.object.name == name
        }) else {
            continue;
        };
        let gpu = &w.gpu;
        if gpu.hami.is_some() || gpu.fraction.is_some() || !gpu.dra.is_empty() {
            continue;
        }
        // One container requests one NVIDIA resource.
        let requests: Vec<(&str, &str, u64)> = w
            .containers
            .iter()
            .filter(|c| !c.is_init)
            .flat_map(|c| {
                c.resources
                    .iter()
                    .filter(|(r, n)| resource::is_nvidia_gpu_resource(r) && **n > 0)
                    .map(|(r, n)| (c.name.as_str(), r.as_str(), *n))
            })
            .collect();
        let [(container, requested, count)] = requests.as_slice() else {
            continue;
        };
        let key = format!("{kind}/{ns}/{name}");
        let pods: Vec<&Workload> = fleet
            .workloads
            .iter()
            .filter(|p| p.kind == WorkloadKind::Pod && owners.of(p) == key)
            .collect();
        let now: BTreeSet<&str> = fleet
            .permitted_nodes(w)
            .iter()
            .chain(pods.iter().filter_map(|p| p.placement.node.as_ref()))
            .filter_map(|n| fleet.nodes.get(*n).map(|n| n.name.as_str()))
            .collect();
        for pool in &pools {
            if pool.nodes.iter().all(|n| now.contains(n.name.as_str())) {
                continue;
            }
            let offers = |r: &str| {
                pool.nodes
                    .iter()
                    .all(|n| n.gpu.as_ref().is_some_and(|g| g.advertises(r)))
            };
            // What the pods request there: what they request now, else a whole GPU, else a GPU
            // passed through to a VM, with the runtime class every pod there that has one uses.
            let mut runtime_class = None;
            let (planned, planned_count): (String, u64) = if offers(requested) {
                (requested.to_string(), *count)
            } else if offers(resource::GPU) {
                (resource::GPU.to_string(), 1)
            } else if let Some((r, class)) = passthrough(fleet, &pool.nodes) {
                runtime_class = Some(class);
                (r, 1)
            } else {
                continue;
            };
            let Some(model) = pool
                .nodes
                .first()
                .and_then(|n| n.gpu.as_ref()?.model.as_deref())
                .and_then(catalogue::lookup)
            else {
                continue;
            };
            let mut notes = Vec::new();
            match free(fleet, &pool.nodes, &planned, &key, &owners) {
                Some(free) if free < u64::from(w.replicas) * planned_count => continue,
                Some(_) => {}
                None => notes.push(format!(
                    "the input does not say how many {planned} the nodes advertise: check they have room for {} more",
                    u64::from(w.replicas) * planned_count
                )),
            }
            if planned != *requested {
                notes.push(format!(
                    "the nodes do not offer {requested}: each pod gets {planned_count} {planned} (a whole GPU) instead of {count} {requested}"
                ));
            }
            if let Some(class) = &runtime_class {
                notes.push(format!(
                    "the GPU is passed through to a VM: the pods run with runtimeClassName {class}, as the pods on these nodes do; check the workload's image runs in such a VM"
                ));
            }
            out.push(move_candidate(MoveOf {
                w,
                key: &key,
                container,
                pool,
                model,
                request: Request::Resource {
                    name: planned.clone(),
                    count: planned_count as u32,
                },
                objects: &objects,
                pods: &pods,
                runtime_class,
                notes,
            }));
        }
    }
    out
}

/// How many of `name` the nodes advertise and the pods scheduled there (other than `key`'s) do not
/// request; `None` when a node does not say what it advertises.
fn free(fleet: &Fleet, nodes: &[&Node], name: &str, key: &str, owners: &Owners) -> Option<u64> {
    let mut total = 0u64;
    for n in nodes {
        total += n
            .gpu
            .as_ref()?
            .advertised
            .as_ref()?
            .get(name)
            .copied()
            .unwrap_or(0);
    }
    let used: u64 = fleet
        .workloads
        .iter()
        .filter(|p| p.kind == WorkloadKind::Pod && owners.of(p) != key)
        .filter(|p| {
            p.placement
                .node
                .and_then(|n| fleet.nodes.get(n))
                .is_some_and(|n| nodes.iter().any(|x| x.name == n.name))
        })
        .flat_map(|p| p.containers.iter().filter(|c| !c.is_init))
        .filter_map(|c| c.resources.get(name))
        .sum();
    Some(total.saturating_sub(used))
}

struct MoveOf<'a> {
    w: &'a Workload,
    key: &'a str,
    container: &'a str,
    pool: &'a Pool<'a>,
    model: &'static catalogue::GpuModel,
    request: Request,
    objects: &'a Objects,
    pods: &'a [&'a Workload],
    /// The runtime class the pods need there (a VM's).
    runtime_class: Option<String>,
    notes: Vec<String>,
}

/// The resource the nodes advertise for GPUs passed through to VMs, when every node advertises it,
/// and the runtime class of every pod on them that requests it, when they agree on one.
fn passthrough(fleet: &Fleet, nodes: &[&Node]) -> Option<(String, String)> {
    let advertised = nodes.first()?.gpu.as_ref()?.advertised.as_ref()?;
    let name = advertised.keys().find(|r| {
        resource::DeviceResource::parse(r) == Some(resource::DeviceResource::Passthrough)
    })?;
    if !nodes
        .iter()
        .all(|n| n.gpu.as_ref().is_some_and(|g| g.advertises(name)))
    {
        return None;
    }
    let classes: BTreeSet<Option<&String>> = fleet
        .workloads
        .iter()
        .filter(|p| {
            p.placement
                .node
                .and_then(|n| fleet.nodes.get(n))
                .is_some_and(|n| nodes.iter().any(|x| x.name == n.name))
        })
        .filter(|p| p.containers.iter().any(|c| c.resources.contains_key(name)))
        .map(|p| p.pod_security.runtime_class_name.as_ref())
        .collect();
    match classes.into_iter().collect::<Vec<_>>().as_slice() {
        [Some(class)] => Some((name.clone(), (*class).clone())),
        _ => None,
    }
}

fn move_candidate(m: MoveOf<'_>) -> Candidate {
    let w = m.w;
    let mut tolerations: Vec<Toleration> = Vec::new();
    for t in m.pool.nodes.iter().flat_map(|n| &n.taints) {
        let effect = match t.effect {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::NoExecute => "NoExecute",
            TaintEffect::PreferNoSchedule => continue,
        };
        // A taint the template tolerates already (the patch keeps its tolerations).
        let tolerated = w.placement.tolerations.iter().any(|o| {
            o.key.as_deref().is_none_or(|k| k == t.key)
                && (o.exists || o.value == t.value)
                && o.effect.as_deref().is_none_or(|e| e == effect)
        });
        if tolerated {
            continue;
        }
        let t = Toleration {
            key: t.key.clone(),
            operator: if t.value.is_some() { "Equal" } else { "Exists" }.to_string(),
            value: t.value.clone().unwrap_or_default(),
            effect: effect.to_string(),
        };
        if !tolerations.contains(&t) {
            tolerations.push(t);
        }
    }
    let planned = PlanWorkload {
        name: w.object.name.clone(),
        tenant: String::new(),
        namespace: w.namespace.clone(),
        kind: w.class,
        replicas: w.replicas,
        placed: w.replicas,
        pool: None,
        mechanism: None,
        resource: None,
        count: 0,
        runtime_class_name: m.runtime_class,
        profile: None,
        share_replicas: None,
        node_selector: m.pool.selector.clone(),
        tolerations,
        why: String::new(),
    };
    let patch = pod_patch(&planned, m.container, m.model, m.objects, &m.request);
    let target = Target {
        kind: w.object.kind.clone(),
        namespace: Some(w.namespace.clone()),
        name: w.object.name.clone(),
    };
    let mut edits = vec![Edit::Patch(target.clone(), patch.patch.clone())];
    let mut replaced: BTreeSet<Target> = BTreeSet::new();
    for p in m.pods {
        replaced.insert(Target {
            kind: "Pod".into(),
            namespace: Some(p.namespace.clone()),
            name: p.object.name.clone(),
        });
        if let Some(("ReplicaSet", rs)) = p.owner.as_deref().and_then(|o| o.split_once('/')) {
            replaced.insert(Target {
                kind: "ReplicaSet".into(),
                namespace: Some(p.namespace.clone()),
                name: rs.to_string(),
            });
        }
    }
    edits.extend(replaced.into_iter().map(Edit::Remove));
    let nodes: Vec<&str> = m.pool.nodes.iter().map(|n| n.name.as_str()).collect();
    let selector: Vec<String> = m
        .pool
        .selector
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let resource = w.object.kind.to_ascii_lowercase();
    let mut notes = m.notes;
    notes.extend(patch.notes);
    Candidate {
        kind: ActionKind::MoveWorkload,
        summary: format!(
            "Move {} {}/{} to node{} {} (nodeSelector {})",
            w.object.kind,
            w.namespace,
            w.object.name,
            if nodes.len() == 1 { "" } else { "s" },
            nodes.join(", "),
            selector.join(", ")
        ),
        object: m.key.to_string(),
        commands: vec![
            format!(
                "kubectl patch {resource} {} -n {} --type strategic -p '{}'",
                w.object.name, w.namespace, patch.patch
            ),
            format!(
                "kubectl rollout status {resource}/{} -n {}",
                w.object.name, w.namespace
            ),
        ],
        patch: Some(patch.patch),
        edits,
        verified: true,
        notes,
        subject: m.key.to_string(),
        moved: Some(target),
    }
}

/// One candidate per driver version the advisory data has fixes for: the nodes running it upgraded
/// to the highest of those fixes.
fn upgrades(fleet: &Fleet, advisories: &Advisories) -> Vec<Candidate> {
    let mut by_version: BTreeMap<String, (Version, Vec<&Node>)> = BTreeMap::new();
    for (_, n) in fleet.gpu_nodes() {
        if let Some(v) = n.gpu.as_ref().and_then(|g| g.driver_version.clone()) {
            by_version
                .entry(v.text.clone())
                .or_insert_with(|| (v, Vec::new()))
                .1
                .push(n);
        }
    }
    let policy = fleet
        .cluster_policy
        .as_ref()
        .filter(|c| c.driver_version.is_some())
        .and_then(|c| c.object.as_ref());
    let mut out = Vec::new();
    for (text, (version, nodes)) in by_version {
        let Some(fix) = advisories
            .hits(Component::Driver, &version, RuntimeSetup::default())
            .into_iter()
            .filter_map(|h| h.fix)
            .max()
        else {
            continue;
        };
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        let mut edits = Vec::new();
        // What GPU Feature Discovery labels once the new driver runs: the full version, and the
        // parts the node is labelled with now.
        let parts: Vec<&str> = fix.text.split('.').collect();
        for n in &nodes {
            let mut set = serde_json::Map::new();
            set.insert(labels::DRIVER_FULL.to_string(), json!(fix.text));
            for keys in [labels::DRIVER_PARTS, labels::DRIVER_DEPRECATED] {
                for (k, part) in keys.iter().zip(&parts) {
                    if n.labels.contains_key(*k) {
                        set.insert((*k).to_string(), json!(part));
                    }
                }
            }
            edits.push(Edit::Patch(
                Target {
                    kind: "Node".into(),
                    namespace: None,
                    name: n.name.clone(),
                },
                json!({"metadata": {"labels": set}}),
            ));
        }
        let mut notes = vec![format!(
            "the effect comes from controllers: the new driver installed on each node, GPU Feature Discovery labelling {}={}; the audit of this change assumed those labels",
            labels::DRIVER_FULL,
            fix.text
        )];
        let (object, commands, patch) = match policy {
            Some(o) => {
                let patch = json!({"spec": {"driver": {"version": fix.text}}});
                edits.push(Edit::Patch(
                    Target {
                        kind: o.kind.clone(),
                        namespace: None,
                        name: o.name.clone(),
                    },
                    patch.clone(),
                ));
                notes.push(
                    "the GPU Operator's upgrade controller drains each node before its driver is replaced"
                        .to_string(),
                );
                (
                    format!("{}/{}", o.kind, o.name),
                    vec![format!(
                        "kubectl patch clusterpolicies.nvidia.com {} --type merge -p '{patch}'",
                        o.name
                    )],
                    Some(patch),
                )
            }
            None => {
                notes.push("no ClusterPolicy of the input manages the driver: upgrade it where it is installed (the node image or the host)".to_string());
                (format!("driver/{text}"), Vec::new(), None)
            }
        };
        out.push(Candidate {
            kind: ActionKind::UpgradeDriver,
            summary: format!(
                "Upgrade the GPU driver {text} on node{} {} to {}",
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                fix.text
            ),
            object,
            commands,
            patch,
            edits,
            verified: false,
            notes,
            // One ClusterPolicy gives every node it manages one driver version.
            subject: match policy {
                Some(o) => format!("{}/{}", o.kind, o.name),
                None => format!("driver/{text}"),
            },
            moved: None,
        });
    }
    out
}
