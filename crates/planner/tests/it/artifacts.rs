//! Every emitted artifact through the rules of its real consumer (see `consumers/`), read back from the
//! text `--emit` writes: the ClusterPolicy patch applied to the ClusterPolicy the GPU Operator's Helm
//! chart renders, each node's device plugin config with the environment the operator gives the
//! plugin, mig-parted's config and each node's layout, the labels GPU Feature Discovery then writes,
//! and each pod patch against every node: a pod lands only where the device plugin hands its resource
//! out the way the plan does, and everywhere the plan put its replicas.

use crate::consumers;

use consumers::device_plugin::{self, Config, Flags, Strategy};
use consumers::scheduler::{self, Node};
use consumers::{gfd, kubectl, mig_parted, operator, toolkit, yaml};
use gpu_trust_model::catalogue;
use gpu_trust_model::geometry;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_planner::emit;
use gpu_trust_planner::file::{self, PlanInput, PolicySource};
use gpu_trust_planner::generate::{fleet, mig_fleet, FleetSpec};
use gpu_trust_planner::patch::{Objects, PodPatch};
use gpu_trust_planner::{check, solve, Plan};
use gpu_trust_policy::Date;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn today() -> Date {
    Date::parse("2026-03-01").unwrap()
}

fn input_of(text: &str) -> PlanInput {
    let plan_file = file::parse(text, "plan.yaml").unwrap();
    let PolicySource::Inline { text: policy } = &plan_file.policy else {
        panic!("inline policy")
    };
    let policy = gpu_trust_policy::parse(policy, "plan.yaml").unwrap();
    plan_file.resolve(&policy, today()).unwrap()
}

/// One tenant with everything at once, so that one tenant node pool offers the same resource in
/// several ways: on H100, `nvidia.com/mig-1g.10gb` whole for inference and time-sliced for
/// notebooks, whole GPUs for training; on L4, `nvidia.com/gpu` whole for latency-critical inference,
/// shared by MPS for batch and time-sliced for notebooks.
const MIXED: &str = "apiVersion: gpu-trust/v1
kind: Plan
policy:
  tenants:
    - {name: search, namespaces: [search]}
    - {name: ads, namespaces: [ads]}
  trust:
    default: none
    relations:
      - {tenants: [search, ads], level: limited}
gpuOperator:
  toolkitVersion: 1.17.8
  devicePluginVersion: 0.18.1
inventory:
  - {pool: h100, model: H100-SXM5-80GB, gpusPerNode: 4, nodes: 4}
  - {pool: l4, model: L4, gpusPerNode: 2, nodes: 8}
workloads:
  - {name: chat, tenant: search, kind: inference, replicas: 5, peakMemory: 9GiB, latency: critical, pool: h100}
  - {name: notebooks, tenant: search, kind: notebook, replicas: 6, peakMemory: 4GiB, pool: h100}
  - {name: pretrain, tenant: search, kind: training, replicas: 1, gpus: 2, pool: h100}
  - {name: rank, tenant: ads, kind: inference, replicas: 3, peakMemory: 30GiB, latency: critical, pool: h100}
  - {name: serve, tenant: search, kind: inference, replicas: 2, peakMemory: 12GiB, latency: critical, pool: l4}
  - {name: embed, tenant: search, kind: batch, replicas: 5, peakMemory: 3GiB, pool: l4}
  - {name: lab, tenant: search, kind: notebook, replicas: 4, peakMemory: 5GiB, pool: l4}
";

/// A planned node once every consumer has read the artifacts.
#[derive(Debug)]
struct Deployed {
    name: String,
    config: Config,
    flags: Flags,
    scheduler: Node,
}

/// The cluster the artifacts make: the ClusterPolicy in force and every planned node.
#[derive(Debug)]
struct Cluster {
    spec: Value,
    nodes: Vec<Deployed>,
}

fn artifact<'a>(files: &'a BTreeMap<String, String>, path: &str) -> &'a str {
    files
        .get(path)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("{path} not emitted"))
}

/// `kubectl label` and `kubectl taint` lines of the node script, per node.
type NodeScript = BTreeMap<String, (BTreeMap<String, String>, Vec<(String, String, String)>)>;

fn node_script(script: &str) -> NodeScript {
    let mut out: NodeScript = BTreeMap::new();
    for line in script.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["kubectl", "label", "node", name, "--overwrite", pairs @ ..] => {
                let e = out.entry(name.to_string()).or_default();
                for p in pairs {
                    let (k, v) = p.split_once('=').unwrap();
                    e.0.insert(k.to_string(), v.to_string());
                }
            }
            ["kubectl", "taint", "node", name, "--overwrite", taint] => {
                let (kv, effect) = taint.split_once(':').unwrap();
                let (k, v) = kv.split_once('=').unwrap();
                out.entry(name.to_string()).or_default().1.push((
                    k.to_string(),
                    v.to_string(),
                    effect.to_string(),
                ));
            }
            _ => {}
        }
    }
    out
}

/// Reads the artifacts as their consumers do; every rule a consumer would refuse them by is an error.
fn deploy(plan: &Plan, input: &PlanInput) -> Result<Cluster, Vec<String>> {
    let files: BTreeMap<String, String> = emit::artifacts(plan, input, &Objects::default())
        .into_iter()
        .map(|a| (a.path, a.content))
        .collect();
    let mut errors = Vec::new();
    // The ClusterPolicy: the chart's, patched.
    let patch = yaml(artifact(&files, "cluster-policy-patch.yaml")).map_err(|e| vec![e])?;
    let mut spec = operator::helm_default_spec();
    operator::merge_patch(&mut spec, &patch["spec"]);
    if let Err(e) = operator::validate(&spec) {
        errors.push(format!("ClusterPolicy: {e}"));
    }
    for part in ["devicePlugin", "toolkit"] {
        match operator::image_path(&spec[part]) {
            Ok(Some(image)) if !operator::published_tag_form(&image) => {
                errors.push(format!("{part}: {image} is not a tag NVIDIA publishes"))
            }
            Ok(_) => {}
            Err(e) => errors.push(format!("{part}: {e}")),
        }
    }
    let env = operator::device_plugin_env(&spec);
    let cdi = spec.pointer("/cdi/enabled").and_then(Value::as_bool) == Some(true);
    let toolkit_env = operator::toolkit_env(&spec);
    // The device plugin ConfigMap, named by the ClusterPolicy, every key a config the plugin reads.
    let cm = yaml(artifact(&files, "device-plugin-config.yaml")).map_err(|e| vec![e])?;
    if cm.pointer("/metadata/name") != spec.pointer("/devicePlugin/config/name") {
        errors.push("the device plugin ConfigMap is not the one the ClusterPolicy names".into());
    }
    let mut configs: BTreeMap<String, Config> = BTreeMap::new();
    for (key, text) in cm["data"].as_object().into_iter().flatten() {
        match device_plugin::parse(text.as_str().unwrap_or("")) {
            Ok(c) => {
                configs.insert(key.clone(), c);
            }
            Err(e) => errors.push(format!("device plugin config {key}: {e}")),
        }
    }
    let keys: Vec<String> = configs.keys().cloned().collect();
    // mig-parted's ConfigMap and config.
    let mig_cm = yaml(artifact(&files, "mig-parted-config.yaml")).map_err(|e| vec![e])?;
    if mig_cm.pointer("/metadata/name") != spec.pointer("/migManager/config/name") {
        errors.push("the mig-parted ConfigMap is not the one the ClusterPolicy names".into());
    }
    let mig = match mig_parted::parse(
        mig_cm
            .pointer("/data/config.yaml")
            .and_then(Value::as_str)
            .unwrap_or(""),
    ) {
        Ok(m) => m,
        Err(e) => {
            errors.push(format!("mig-parted config: {e}"));
            BTreeMap::new()
        }
    };
    if let Some(default) = spec
        .pointer("/migManager/config/default")
        .and_then(Value::as_str)
    {
        if !mig.contains_key(default) {
            errors.push(format!("mig-parted config lacks the default {default}"));
        }
    }
    let script = node_script(artifact(&files, "nodes.sh"));
    let mut nodes = Vec::new();
    for node in &plan.nodes {
        let at = &node.name;
        let Some((labels, taints)) = script.get(at) else {
            errors.push(format!("{at}: not in the node script"));
            continue;
        };
        let model = catalogue::lookup(&node.model).unwrap();
        let key = match operator::node_config_key(&spec, labels, &keys) {
            Ok(k) => k,
            Err(e) => {
                errors.push(format!("{at}: {e}"));
                continue;
            }
        };
        let config = configs[&key].clone();
        let flags = device_plugin::flags(&config, &env);
        if let Err(e) = device_plugin::validate(&config, &flags) {
            errors.push(format!(
                "{at}: the device plugin with config {key} exits: {e}"
            ));
        }
        // The GPUs as the MIG manager leaves them: MIG off without a MIG config label.
        let mut gpus: gfd::Gpus = vec![Vec::new(); node.gpu_count as usize];
        if let Some(name) = labels.get("nvidia.com/mig.config") {
            let Some(entries) = mig.get(name) else {
                errors.push(format!("{at}: mig-parted config {name} does not exist"));
                continue;
            };
            let mut covered = vec![false; gpus.len()];
            for e in entries {
                let filter_ok = e.device_filter.is_empty()
                    || model
                        .pci_device_ids
                        .iter()
                        .any(|id| e.device_filter.contains(&id.to_string()));
                if !filter_ok {
                    continue;
                }
                let devices: Vec<usize> = match &e.devices {
                    None => (0..gpus.len()).collect(),
                    Some(list) => list.iter().map(|&d| d as usize).collect(),
                };
                for d in devices {
                    if d >= gpus.len() {
                        errors.push(format!("{at}: mig-parted names GPU {d}"));
                        continue;
                    }
                    covered[d] = true;
                    if e.mig_enabled {
                        let counts: Vec<(&str, u32)> = e
                            .mig_devices
                            .iter()
                            .map(|(p, &c)| (p.as_str(), c as u32))
                            .collect();
                        if let Err(err) = geometry::place_counts(model, &counts) {
                            errors.push(format!("{at}: GPU {d}: {err}"));
                        }
                        gpus[d] = e
                            .mig_devices
                            .iter()
                            .flat_map(|(p, &c)| {
                                std::iter::repeat_n(p.replace('+', "."), c as usize)
                            })
                            .collect();
                    }
                }
            }
            if covered.iter().any(|c| !c) {
                errors.push(format!("{at}: mig-parted config {name} leaves GPUs unset"));
            }
        }
        // The MPS daemon skips MIG devices (`cmd/mps-control-daemon/mps/manager.go` lines 91-94).
        if config.strategy() == Strategy::Mps && gpus.iter().any(|g| !g.is_empty()) {
            errors.push(format!("{at}: MPS on a node with MIG"));
        }
        // Unprivileged pods get the GPUs the plugin gives them, and only those.
        let request = toolkit::plugin_request(&flags.device_list_strategy, cdi);
        if !toolkit::unprivileged_gets_devices(&toolkit_env, request) {
            errors.push(format!(
                "{at}: unprivileged containers get no GPU (device list strategy {:?})",
                flags.device_list_strategy
            ));
        }
        let by_envvar = toolkit::Request {
            mounts: false,
            envvar: true,
            cdi: false,
        };
        if toolkit::unprivileged_gets_devices(&toolkit_env, by_envvar) {
            errors.push(format!(
                "{at}: an unprivileged container gets GPUs by setting NVIDIA_VISIBLE_DEVICES"
            ));
        }
        let mut node_labels = labels.clone();
        node_labels.extend(gfd::labels(&config, &flags, &gpus));
        // The kubelet labels every node with its operating system (`kubernetes.io/os`).
        node_labels.insert("kubernetes.io/os".into(), "linux".into());
        let allocatable = gfd::resources(&config, &flags, &gpus);
        nodes.push(Deployed {
            name: node.name.clone(),
            config,
            flags,
            scheduler: Node {
                labels: node_labels,
                taints: taints.clone(),
                allocatable,
            },
        });
    }
    if errors.is_empty() {
        Ok(Cluster { spec, nodes })
    } else {
        Err(errors)
    }
}

/// How the plan hands a workload's resource out: (sharing strategy, replicas per device).
fn planned(w: &gpu_trust_planner::plan::PlanWorkload) -> (Strategy, u32) {
    match w.mechanism {
        Some(Mechanism::TimeSlicing) | Some(Mechanism::MigTimeSlicing) => {
            (Strategy::TimeSlicing, w.share_replicas.unwrap_or(1))
        }
        Some(Mechanism::Mps) => (Strategy::Mps, w.share_replicas.unwrap_or(1)),
        _ => (Strategy::None, 1),
    }
}

/// How a node's device plugin hands a resource out.
fn offered(node: &Deployed, resource: &str) -> (Strategy, u32) {
    let replicas = node.config.replicas(resource);
    if replicas > 1 {
        (node.config.strategy(), replicas)
    } else {
        (Strategy::None, 1)
    }
}

/// Every pod patch against every node: the nodes the scheduler admits it to all hand its resource
/// out as planned and accept its request; the nodes its replicas were planned on all admit it.
fn pods(plan: &Plan, input: &PlanInput, cluster: &Cluster) -> Vec<String> {
    let files: BTreeMap<String, String> = emit::artifacts(plan, input, &Objects::default())
        .into_iter()
        .map(|a| (a.path, a.content))
        .collect();
    let mut errors = Vec::new();
    for w in plan.workloads.iter().filter(|w| w.placed > 0) {
        let path = format!("pod-patches/{}.{}.yaml", w.namespace, w.name);
        let Some(text) = files.get(&path) else {
            errors.push(format!("{}: no pod patch", w.name));
            continue;
        };
        let patch = match yaml(text) {
            Ok(p) => p,
            Err(e) => {
                errors.push(format!("{path}: {e}"));
                continue;
            }
        };
        errors.extend(pod_errors(
            plan,
            w,
            &patch["spec"]["template"]["spec"],
            cluster,
        ));
    }
    errors
}

fn pod_errors(
    plan: &Plan,
    w: &gpu_trust_planner::plan::PlanWorkload,
    pod: &Value,
    cluster: &Cluster,
) -> Vec<String> {
    let mut errors = Vec::new();
    let resource = w.resource.clone().unwrap_or_default();
    let want = planned(w);
    let planned_on: Vec<&str> = plan
        .nodes
        .iter()
        .filter(|n| {
            n.gpus
                .iter()
                .any(|g| g.assignments.iter().any(|a| a.workload == w.name))
        })
        .map(|n| n.name.as_str())
        .collect();
    let requests = scheduler::requests(pod);
    for node in &cluster.nodes {
        let admitted = scheduler::admits(pod, &node.scheduler);
        if planned_on.contains(&node.name.as_str()) && !admitted {
            errors.push(format!(
                "{}: the pod is not admitted to {}, where the plan put it",
                w.name, node.name
            ));
        }
        if !admitted {
            continue;
        }
        let got = offered(node, &resource);
        if got != want {
            errors.push(format!(
                "{}: the pod may land on {}, where {resource} is {:?} x{} (planned {:?} x{})",
                w.name, node.name, got.0, got.1, want.0, want.1
            ));
        }
        for (r, &n) in &requests {
            if !device_plugin::admits(&node.config, r, n) {
                errors.push(format!(
                    "{}: on {} the device plugin refuses {n} of the shared {r}",
                    w.name, node.name
                ));
            }
        }
    }
    errors
}

/// The object a patch is applied to when no object of the workload was given with the plan: a
/// Deployment whose first container, named as the patch assumes, requested `nvidia.com/gpu: 1` in
/// its limits and requests next to CPU, and a second container without GPU; with a toleration the
/// patch replaces.
fn assumed_original(p: &PodPatch) -> Value {
    // One name for all: patches that are the same are applied once.
    serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "workload", "namespace": "tenant"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "workload"}},
            "template": {
                "metadata": {"labels": {"app": "workload"}},
                "spec": {
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {"name": p.container, "image": "registry.example/app:1",
                         "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": 1},
                                       "requests": {"cpu": "1", "nvidia.com/gpu": 1}}},
                        {"name": "proxy", "image": "registry.example/proxy:1",
                         "resources": {"requests": {"cpu": "100m"}}},
                    ],
                },
            },
        },
    })
}

/// The NVIDIA GPU resources of one map of a container (`limits` or `requests`), and the others.
fn split_resources(c: &Value, map: &str) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let mut gpu = BTreeMap::new();
    let mut other = BTreeMap::new();
    for (k, v) in c
        .pointer(&format!("/resources/{map}"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let v = v
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        if gpu_trust_model::resource::is_nvidia_gpu_resource(k) {
            gpu.insert(k.clone(), v);
        } else {
            other.insert(k.clone(), v);
        }
    }
    (gpu, other)
}

/// What is wrong with one patch once kubectl has applied it to `original`: the containers must be
/// the original's, the GPU container must request exactly the planned resource in limits and
/// requests (and keep its other resources), no other container may request a GPU, and the pod must
/// land exactly where the plan says (the checks of [`pod_errors`]).
fn patched_errors(
    plan: &Plan,
    w: &gpu_trust_planner::plan::PlanWorkload,
    p: &PodPatch,
    original: &Value,
    cluster: &Cluster,
) -> Vec<String> {
    let at = format!("{}/{}", p.namespace, p.workload);
    let mut object = original.clone();
    if let Some(check) = &p.check {
        match kubectl::patch(&object, "json", check) {
            Ok(o) => object = o,
            Err(e) => return vec![format!("{at}: the check fails: {e}")],
        }
    }
    let result = match kubectl::patch(&object, "strategic", &p.patch) {
        Ok(o) => o,
        Err(e) => return vec![format!("{at}: kubectl refuses the patch: {e}")],
    };
    let mut errors = Vec::new();
    for c in result
        .pointer("/spec/template/spec/initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for map in ["limits", "requests"] {
            let (gpu, _) = split_resources(c, map);
            if !gpu.is_empty() {
                errors.push(format!(
                    "{at}: init container {} {map} still holds GPU resources {gpu:?}",
                    c["name"]
                ));
            }
        }
    }
    let names = |o: &Value| -> Vec<String> {
        o.pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect()
    };
    if names(&result) != names(original) {
        errors.push(format!(
            "{at}: containers {:?} became {:?}",
            names(original),
            names(&result)
        ));
    }
    let planned: BTreeMap<String, String> = w
        .resource
        .iter()
        .map(|r| (r.clone(), w.count.to_string()))
        .collect();
    let containers = result
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &containers {
        let name = c["name"].as_str().unwrap_or("");
        let before = original
            .pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|x| x["name"] == c["name"]));
        for map in ["limits", "requests"] {
            let (gpu, other) = split_resources(c, map);
            let want = if name == p.container {
                planned.clone()
            } else {
                BTreeMap::new()
            };
            if gpu != want {
                errors.push(format!(
                    "{at}: container {name} {map} GPU resources {gpu:?}, planned {want:?}"
                ));
            }
            let kept = before
                .map(|b| split_resources(b, map).1)
                .unwrap_or_default();
            if other != kept {
                errors.push(format!(
                    "{at}: container {name} {map} {kept:?} became {other:?}"
                ));
            }
        }
    }
    if let Some(pod) = result.pointer("/spec/template/spec") {
        errors.extend(pod_errors(plan, w, pod, cluster));
    }
    errors
}

/// Every pod patch of the plan applied by kubectl to its original (from `originals`, by namespace
/// and name, else [`assumed_original`]), a few at a time; a patch applied to an original already
/// patched the same way is checked on the first one's result.
fn kubectl_errors(
    plan: &Plan,
    input: &PlanInput,
    objects: &Objects,
    originals: &BTreeMap<(String, String), Value>,
    cluster: &Cluster,
) -> Vec<String> {
    let patches = emit::pod_patches(plan, input, objects);
    let mut seen = std::collections::BTreeSet::new();
    let work: Vec<(&gpu_trust_planner::plan::PlanWorkload, &PodPatch, Value)> = patches
        .iter()
        .filter_map(|p| {
            let w = plan.workloads.iter().find(|w| w.name == p.workload)?;
            let original = originals
                .get(&(p.namespace.clone(), p.workload.clone()))
                .cloned()
                .unwrap_or_else(|| assumed_original(p));
            let key = (
                original.to_string(),
                p.patch.to_string(),
                p.check.as_ref().map(Value::to_string),
                w.resource.clone(),
                w.count,
                plan.nodes
                    .iter()
                    .filter(|n| {
                        n.gpus
                            .iter()
                            .any(|g| g.assignments.iter().any(|a| a.workload == w.name))
                    })
                    .map(|n| n.name.clone())
                    .collect::<Vec<_>>(),
            );
            seen.insert(key).then_some((w, p, original))
        })
        .collect();
    let threads = 4;
    let chunk = work.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = work
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .flat_map(|(w, p, original)| patched_errors(plan, w, p, original, cluster))
                        .collect::<Vec<String>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec!["a kubectl thread panicked".into()])
            })
            .collect()
    })
}

fn assert_consumers_accept(plan: &Plan, input: &PlanInput, what: &str) -> Cluster {
    assert!(
        check(input, plan).is_empty(),
        "{what}: {:#?}",
        check(input, plan)
    );
    let cluster = deploy(plan, input).unwrap_or_else(|e| panic!("{what}: {e:#?}"));
    let errors = pods(plan, input, &cluster);
    assert!(errors.is_empty(), "{what}: {errors:#?}");
    // The pod patches do what they say when kubectl applies them.
    if kubectl::available(what) {
        let errors = kubectl_errors(plan, input, &Objects::default(), &BTreeMap::new(), &cluster);
        assert!(errors.is_empty(), "{what}: {errors:#?}");
    }
    cluster
}

#[test]
fn a_plan_with_mig_mps_and_time_slicing_is_accepted_by_every_consumer() {
    let input = input_of(MIXED);
    let plan = solve(&input);
    assert!(plan.complete(), "{:#?}", plan.unplaced);
    // The plan does mix them: MIG instances whole and time-sliced, whole GPUs whole, MPS and
    // time-sliced, for one tenant.
    let mechanisms: Vec<Option<Mechanism>> = plan.workloads.iter().map(|w| w.mechanism).collect();
    for m in [
        Mechanism::MigInstance,
        Mechanism::MigTimeSlicing,
        Mechanism::Exclusive,
        Mechanism::Mps,
        Mechanism::TimeSlicing,
    ] {
        assert!(
            mechanisms.contains(&Some(m)),
            "{m:?} missing: {mechanisms:?}"
        );
    }
    let cluster = assert_consumers_accept(&plan, &input, "mixed plan");
    // MIG nodes run the plugin with the mixed strategy, MPS nodes without MIG: one ClusterPolicy
    // that sets neither.
    assert!(cluster.spec.pointer("/mig/strategy").is_none());
    let strategies: Vec<(&str, Strategy)> = cluster
        .nodes
        .iter()
        .map(|n| (n.flags.mig_strategy.as_str(), n.config.strategy()))
        .collect();
    assert!(
        strategies.contains(&("mixed", Strategy::TimeSlicing)),
        "{strategies:?}"
    );
    assert!(
        strategies.contains(&("none", Strategy::Mps)),
        "{strategies:?}"
    );
    // The device plugin passes devices as volume mounts on every node, CDI on or not.
    for n in &cluster.nodes {
        assert_eq!(
            n.flags.device_list_strategy,
            ["volume-mounts"],
            "{}",
            n.name
        );
    }
    // One tenant pool offers nvidia.com/gpu three ways on L4, and a MIG profile two ways on H100.
    let l4: Vec<(Strategy, u32)> = cluster
        .nodes
        .iter()
        .filter(|n| n.name.starts_with("l4"))
        .map(|n| offered(n, "nvidia.com/gpu"))
        .collect();
    for s in [Strategy::None, Strategy::Mps, Strategy::TimeSlicing] {
        assert!(l4.iter().any(|(x, _)| *x == s), "{s:?} not offered: {l4:?}");
    }
}

#[test]
fn the_example_plan_is_accepted_by_every_consumer() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/plan");
    let text = std::fs::read_to_string(format!("{dir}/plan.yaml")).unwrap();
    let plan_file = file::parse(&text, "plan.yaml").unwrap();
    let PolicySource::File { path, .. } = &plan_file.policy else {
        panic!("the example names its policy file")
    };
    let policy_text = std::fs::read_to_string(format!("{dir}/{path}")).unwrap();
    let policy = gpu_trust_policy::parse(&policy_text, path).unwrap();
    let input = plan_file.resolve(&policy, today()).unwrap();
    let plan = solve(&input);
    let cluster = assert_consumers_accept(&plan, &input, "example");
    // The image tags are NVIDIA's: `v` and the version the plan file gives.
    assert_eq!(
        operator::image_path(&cluster.spec["devicePlugin"]).unwrap(),
        Some("nvcr.io/nvidia/k8s-device-plugin:v0.18.1".to_string())
    );
    assert_eq!(
        operator::image_path(&cluster.spec["toolkit"]).unwrap(),
        Some("nvcr.io/nvidia/k8s/container-toolkit:v1.19.1".to_string())
    );
}

#[test]
fn generated_plans_are_accepted_by_every_consumer() {
    for (seed, model, accept, gpus_per_node) in [
        (1u64, "H100-SXM5-80GB", 0.0, 8u32),
        (2, "H100-SXM5-80GB", 0.5, 4),
        (3, "A30", 0.0, 4),
        (4, "L40S", 0.3, 4),
        (5, "A100-SXM4-40GB", 1.0, 8),
        (6, "H200-SXM-141GB", 0.0, 8),
        (7, "L4", 0.2, 2),
        (8, "L4", 0.0, 1),
    ] {
        let spec = FleetSpec {
            model: model.to_string(),
            node_acceptance: accept,
            gpus_per_node,
            replicas_per_tenant: 12,
            ..FleetSpec::benchmark(150, seed)
        };
        let input = fleet(&spec);
        let plan = solve(&input);
        assert_consumers_accept(&plan, &input, &format!("seed {seed} {model}"));
    }
    for seed in 1..=20 {
        let input = mig_fleet(seed, "H100-SXM5-80GB", 12, 8);
        let plan = solve(&input);
        assert_consumers_accept(&plan, &input, &format!("MIG fleet {seed}"));
    }
}

// The checks above would have caught the defects they guard against.

#[test]
fn the_plugin_refuses_mps_under_a_cluster_wide_mixed_strategy() {
    let input = input_of(MIXED);
    let plan = solve(&input);
    let mut spec = operator::helm_default_spec();
    let patch = yaml(
        &emit::artifacts(&plan, &input, &Objects::default())
            .into_iter()
            .find(|a| a.path == "cluster-policy-patch.yaml")
            .unwrap()
            .content,
    )
    .unwrap();
    operator::merge_patch(&mut spec, &patch["spec"]);
    // With the patch, the chart's `single` is gone; with `mixed` set cluster-wide, as before, the
    // operator's environment beats every node's file.
    assert!(spec.pointer("/mig/strategy").is_none());
    spec["mig"]["strategy"] = Value::String("mixed".into());
    let env = operator::device_plugin_env(&spec);
    let mps = emit::device_plugin_configs(&plan)
        .into_iter()
        .find(|(_, c)| c.sharing.as_ref().is_some_and(|s| s.mps.is_some()))
        .map(|(_, c)| serde_saphyr::to_string(&c).unwrap())
        .expect("an MPS config");
    let config = device_plugin::parse(&mps).unwrap();
    let err = device_plugin::validate(&config, &device_plugin::flags(&config, &env)).unwrap_err();
    assert!(err.contains("mixed is not supported with MPS"), "{err}");
}

#[test]
fn pod_patches_without_the_mechanism_labels_would_land_on_other_mechanisms() {
    let input = input_of(MIXED);
    let plan = solve(&input);
    let cluster = deploy(&plan, &input).unwrap();
    let mut wrong = 0;
    for w in plan.workloads.iter().filter(|w| w.placed > 0) {
        let resource = w.resource.clone().unwrap();
        let patch = emit::pod_patches(&plan, &input, &Objects::default())
            .into_iter()
            .find(|p| p.workload == w.name)
            .unwrap();
        let mut pod = patch.patch["spec"]["template"]["spec"].clone();
        let selector = pod["nodeSelector"].as_object_mut().unwrap();
        selector.retain(|k, _| !k.starts_with(&format!("{resource}.")));
        wrong += pod_errors(&plan, w, &pod, &cluster).len();
    }
    assert!(
        wrong > 0,
        "the pool and toleration alone admit only the right nodes"
    );
}

#[test]
fn without_the_device_list_strategy_unprivileged_pods_get_no_gpu_when_cdi_is_off() {
    let mut spec = operator::helm_default_spec();
    spec["cdi"]["enabled"] = Value::Bool(false);
    spec["toolkit"]["env"] = serde_json::json!([
        {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", "value": "false"},
        {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS", "value": "true"},
    ]);
    // The file says volume-mounts, but the operator's environment says envvar.
    let config = device_plugin::parse(
        "version: v1\nflags:\n  migStrategy: mixed\n  plugin:\n    deviceListStrategy: volume-mounts\n",
    )
    .unwrap();
    let flags = device_plugin::flags(&config, &operator::device_plugin_env(&spec));
    assert_eq!(flags.device_list_strategy, ["envvar"]);
    let request = toolkit::plugin_request(&flags.device_list_strategy, false);
    assert!(!toolkit::unprivileged_gets_devices(
        &operator::toolkit_env(&spec),
        request
    ));
    // With the planner's devicePlugin.env the mounts reach the container.
    spec["devicePlugin"]["env"] =
        serde_json::json!([{"name": "DEVICE_LIST_STRATEGY", "value": "volume-mounts"}]);
    let flags = device_plugin::flags(&config, &operator::device_plugin_env(&spec));
    let request = toolkit::plugin_request(&flags.device_list_strategy, false);
    assert!(toolkit::unprivileged_gets_devices(
        &operator::toolkit_env(&spec),
        request
    ));
}

#[test]
fn an_unprefixed_version_is_no_published_tag() {
    let spec = serde_json::json!({"repository": "nvcr.io/nvidia", "image": "k8s-device-plugin", "version": "0.18.1"});
    let image = operator::image_path(&spec).unwrap().unwrap();
    assert!(!operator::published_tag_form(&image));
    // A version without repository and image is refused by the operator.
    assert!(operator::image_path(&serde_json::json!({"version": "v0.18.1"})).is_err());
}

#[test]
fn the_consumer_parsers_refuse_what_their_sources_refuse() {
    // Device plugin: replicas below 2, a resource outside nvidia.com's naming, an unknown version.
    let one = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 1\n";
    assert!(device_plugin::parse(one).unwrap_err().contains(">= 2"));
    let name = "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/GPU\n      replicas: 2\n";
    assert!(device_plugin::parse(name).is_err());
    assert!(device_plugin::parse("version: v2\n").is_err());
    let empty = "version: v1\nsharing:\n  timeSlicing:\n    resources: []\n";
    assert!(device_plugin::parse(empty).is_err());
    // mig-parted: a missing version, MIG devices with MIG off, a malformed profile.
    assert!(
        mig_parted::parse("mig-configs:\n  a:\n  - {devices: all, mig-enabled: false}\n").is_err()
    );
    let off = "version: v1\nmig-configs:\n  a:\n  - {devices: all, mig-enabled: false, mig-devices: {1g.10gb: 1}}\n";
    assert!(mig_parted::parse(off).is_err());
    let bad = "version: v1\nmig-configs:\n  a:\n  - {devices: [0], mig-enabled: true, mig-devices: {1g.10: 1}}\n";
    assert!(mig_parted::parse(bad).is_err());
    assert!(mig_parted::profile_format("1c.2g.20gb").is_ok());
    assert!(mig_parted::profile_format("1g.10gb+me").is_ok());
    assert!(mig_parted::profile_format("1g.10gb+me-x").is_err());
}

/// A Deployment whose GPU container is not the first and is not named as the plan file says: a
/// sidecar `proxy` first, then `server` with `nvidia.com/gpu: 1` in limits and requests, an init
/// container `warmup` that requests a GPU too, and a toleration of its own that the patch must keep.
fn named_original(namespace: &str, name: &str) -> Value {
    serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {"example.com/old-pool": "cpu"},
                    "tolerations": [{"key": "example.com/spot", "operator": "Exists", "effect": "NoSchedule"}],
                    "initContainers": [
                        {"name": "warmup", "image": "registry.example/app:1",
                         "resources": {"limits": {"nvidia.com/gpu": 1},
                                       "requests": {"nvidia.com/gpu": 1}}},
                    ],
                    "containers": [
                        {"name": "proxy", "image": "registry.example/proxy:1",
                         "resources": {"requests": {"cpu": "100m"}}},
                        {"name": "server", "image": "registry.example/app:1",
                         "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": 1},
                                       "requests": {"cpu": "1", "nvidia.com/gpu": 1}}},
                    ],
                },
            },
        },
    })
}

#[test]
fn with_the_objects_given_patches_name_their_gpu_containers_and_keep_their_tolerations() {
    let input = input_of(MIXED);
    let plan = solve(&input);
    let cluster = deploy(&plan, &input).unwrap_or_else(|e| panic!("{e:#?}"));
    let mut objects = Objects::default();
    let mut originals = BTreeMap::new();
    let spot = gpu_trust_model::fleet::PodToleration {
        key: Some("example.com/spot".into()),
        exists: true,
        value: None,
        effect: Some("NoSchedule".into()),
        seconds: None,
    };
    for w in plan.workloads.iter().filter(|w| w.placed > 0) {
        let key = (w.namespace.clone(), w.name.clone());
        objects.templates.insert(
            key.clone(),
            gpu_trust_planner::patch::TemplateObject {
                kind: "Deployment".into(),
                containers: vec![
                    ("proxy".into(), Default::default()),
                    ("server".into(), ["nvidia.com/gpu".to_string()].into()),
                ],
                init_containers: vec![("warmup".into(), ["nvidia.com/gpu".to_string()].into())],
                tolerations: vec![spot.clone()],
                node_selector: [("example.com/old-pool".into(), "cpu".into())].into(),
            },
        );
        originals.insert(key, named_original(&w.namespace, &w.name));
    }
    let patches = emit::pod_patches(&plan, &input, &objects);
    assert!(!patches.is_empty());
    for p in &patches {
        assert_eq!(p.container, "server", "{}", p.workload);
        assert!(!p.assumed && p.check.is_none(), "{}", p.workload);
        // The init container's GPU request is removed, and said so.
        let init = &p.patch["spec"]["template"]["spec"]["initContainers"][0];
        assert_eq!(init["name"], "warmup", "{}", p.patch);
        assert!(init["resources"]["limits"]["nvidia.com/gpu"].is_null());
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("init container `warmup`")),
            "{:?}",
            p.notes
        );
        assert_eq!(p.kind.as_deref(), Some("Deployment"));
        let tolerations = p.patch["spec"]["template"]["spec"]["tolerations"]
            .as_array()
            .unwrap();
        assert!(
            tolerations.iter().any(|t| t["key"] == "example.com/spot"),
            "{}: {tolerations:?}",
            p.workload
        );
        // The template's own selector key would stay beside the plan's and match no planned node.
        let selector = &p.patch["spec"]["template"]["spec"]["nodeSelector"];
        assert!(
            selector["example.com/old-pool"].is_null()
                && selector.get("example.com/old-pool").is_some(),
            "{}: {selector}",
            p.workload
        );
    }
    if kubectl::available("named containers") {
        let errors = kubectl_errors(&plan, &input, &objects, &originals, &cluster);
        assert!(errors.is_empty(), "{errors:#?}");
    }
}

#[test]
fn a_patch_with_an_assumed_name_changes_nothing_when_the_name_is_wrong() {
    let input = input_of(MIXED);
    let plan = solve(&input);
    let p = emit::pod_patches(&plan, &input, &Objects::default())
        .into_iter()
        .next()
        .unwrap();
    assert!(p.assumed);
    let check = p.check.clone().unwrap();
    if !kubectl::available("assumed name") {
        return;
    }
    // The template's first container is `proxy`, not the assumed name: the check fails.
    let original = named_original(&p.namespace, &p.workload);
    let err = kubectl::patch(&original, "json", &check).unwrap_err();
    assert!(err.contains("test"), "{err}");
    // Without the check, the strategic merge would have added a second GPU container.
    let merged = kubectl::patch(&original, "strategic", &p.patch).unwrap();
    let names: Vec<&str> = merged["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

/// `value` read as the Kubernetes type `T` and written back: what the typed API keeps of it. A field
/// the API does not have, or of the wrong shape, does not come back the same (or does not read).
fn api_round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

#[test]
fn dra_objects_have_the_v1_api_shape_and_the_driver_admits_their_configs() {
    use consumers::dra_driver::{self, Gates};
    use gpu_trust_planner::dra;
    use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceClaimTemplate};
    let input = input_of(MIXED);
    let plan = gpu_trust_planner::solve_with(
        &input,
        &gpu_trust_planner::SolveOptions {
            dra: true,
            ..Default::default()
        },
    );
    assert!(plan.complete(), "{:#?}", plan.unplaced);
    assert!(
        check(&input, &plan).is_empty(),
        "{:#?}",
        check(&input, &plan)
    );
    let d = dra::dra_plan(&plan, &input);
    assert!(!d.classes.is_empty() && !d.templates.is_empty() && !d.claims.is_empty());
    // The Kubernetes v1 API shape.
    let mut errors = Vec::new();
    for (objects, round_trip) in [
        (
            &d.classes,
            api_round_trip::<DeviceClass> as fn(&Value) -> Result<Value, String>,
        ),
        (&d.templates, api_round_trip::<ResourceClaimTemplate>),
        (&d.claims, api_round_trip::<ResourceClaim>),
    ] {
        for o in objects {
            assert_eq!(o["apiVersion"], dra::RESOURCE_API);
            match round_trip(o) {
                Ok(back) if back == *o => {}
                Ok(back) => errors.push(format!("{o}\nbecame\n{back}")),
                Err(e) => errors.push(format!("{o}: {e}")),
            }
        }
    }
    assert!(errors.is_empty(), "{errors:#?}");
    // The driver admits every config with the feature gates the plan says the claims need, and
    // refuses the shared ones without them.
    let gates = Gates {
        time_slicing_settings: d.gates.contains(dra::TIME_SLICING_GATE),
        mps_support: d.gates.contains(dra::MPS_GATE),
    };
    for t in &d.templates {
        let e = dra_driver::admit_claim_spec(&t["spec"]["spec"], "spec.spec", gates);
        assert!(e.is_empty(), "{t}: {e:#?}");
    }
    // A shared device is one claim, of one namespace: its name (node, GPU, instance) is unique.
    let names: BTreeSet<&str> = d
        .claims
        .iter()
        .filter_map(|c| c["metadata"]["name"].as_str())
        .collect();
    assert_eq!(
        names.len(),
        d.claims.len(),
        "a device shared across namespaces"
    );
    let mut strategies = BTreeSet::new();
    for c in &d.claims {
        let e = dra_driver::admit_claim_spec(&c["spec"], "spec", gates);
        assert!(e.is_empty(), "{c}: {e:#?}");
        let p = &c["spec"]["devices"]["config"][0]["opaque"]["parameters"];
        strategies.insert(dra_driver::admit(p, gates).unwrap().unwrap_or_default());
        let refused = dra_driver::admit_claim_spec(&c["spec"], "spec", Gates::default());
        assert!(!refused.is_empty(), "{c} needs no gate");
    }
    assert!(
        strategies.contains("MPS") && strategies.contains("TimeSlicing"),
        "{strategies:?}"
    );
    // Every placed replica is served by exactly one claim use; a shared claim lies in the namespace
    // of the pods that name it.
    let mut served = BTreeSet::new();
    for u in &d.uses {
        for (i, _) in &u.replicas {
            assert!(
                served.insert((u.workload.clone(), *i)),
                "{} #{i} twice",
                u.workload
            );
        }
        let kind = if u.template {
            "ResourceClaimTemplate"
        } else {
            "ResourceClaim"
        };
        let objects = if u.template { &d.templates } else { &d.claims };
        assert!(
            objects.iter().any(|o| o["kind"] == kind
                && o["metadata"]["name"] == u.claim.as_str()
                && o["metadata"]["namespace"] == u.namespace.as_str()),
            "{} names {kind} {} not in {}",
            u.workload,
            u.claim,
            u.namespace
        );
    }
    let placed: usize = plan.workloads.iter().map(|w| w.placed as usize).sum();
    assert_eq!(served.len(), placed);
    // The pod patches, applied by kubectl: no extended GPU resource is left, the GPU container
    // names the pod's claim, the pod names the planned claim and its pool.
    let patches = dra::pod_patches(&plan, &input, &d, &Objects::default());
    assert_eq!(patches.len(), d.uses.len());
    if !kubectl::available("dra patches") {
        return;
    }
    for (u, p) in &patches {
        let original = assumed_original(p);
        let checked = kubectl::patch(&original, "json", p.check.as_ref().unwrap()).unwrap();
        let result = kubectl::patch(&checked, "strategic", &p.patch).unwrap();
        let pod = &result["spec"]["template"]["spec"];
        for c in pod["containers"].as_array().unwrap() {
            for map in ["limits", "requests"] {
                let (gpu, _) = split_resources(c, map);
                assert!(gpu.is_empty(), "{}: {gpu:?}", p.workload);
            }
            let claims = c
                .pointer("/resources/claims")
                .cloned()
                .unwrap_or(Value::Null);
            if c["name"] == p.container.as_str() {
                assert_eq!(
                    claims,
                    serde_json::json!([{"name": "gpu"}]),
                    "{}",
                    p.workload
                );
            } else {
                assert!(claims.is_null(), "{}: {claims}", p.workload);
            }
        }
        let source = if u.template {
            "resourceClaimTemplateName"
        } else {
            "resourceClaimName"
        };
        assert_eq!(
            pod["resourceClaims"],
            serde_json::json!([{"name": "gpu", source: u.claim}]),
            "{}",
            p.workload
        );
        let pool = plan
            .workloads
            .iter()
            .find(|w| w.name == u.workload)
            .unwrap()
            .pool
            .clone()
            .unwrap();
        assert_eq!(
            pod["nodeSelector"][gpu_trust_planner::plan::POOL_LABEL],
            pool.as_str()
        );
    }
}
