//! Every emitted artifact through the rules of its real consumer (see `consumers/`), read back from the
//! text `--emit` writes: the ClusterPolicy patch applied to the ClusterPolicy the GPU Operator's Helm
//! chart renders, each node's device plugin config with the environment the operator gives the
//! plugin, mig-parted's config and each node's layout, the labels GPU Feature Discovery then writes,
//! and each pod patch against every node: a pod lands only where the device plugin hands its resource
//! out the way the plan does, and everywhere the plan put its replicas.

mod consumers;

use consumers::device_plugin::{self, Config, Flags, Strategy};
use consumers::scheduler::{self, Node};
use consumers::{gfd, mig_parted, operator, toolkit, yaml};
use gpu_trust_model::catalogue;
use gpu_trust_model::geometry;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_planner::emit;
use gpu_trust_planner::file::{self, PlanInput, PolicySource};
use gpu_trust_planner::generate::{fleet, mig_fleet, FleetSpec};
use gpu_trust_planner::{check, solve, Plan};
use gpu_trust_policy::Date;
use serde_json::Value;
use std::collections::BTreeMap;

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
    let files: BTreeMap<String, String> = emit::artifacts(plan, input)
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
    let files: BTreeMap<String, String> = emit::artifacts(plan, input)
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

fn assert_consumers_accept(plan: &Plan, input: &PlanInput, what: &str) -> Cluster {
    assert!(
        check(input, plan).is_empty(),
        "{what}: {:#?}",
        check(input, plan)
    );
    let cluster = deploy(plan, input).unwrap_or_else(|e| panic!("{what}: {e:#?}"));
    let errors = pods(plan, input, &cluster);
    assert!(errors.is_empty(), "{what}: {errors:#?}");
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
        &emit::artifacts(&plan, &input)
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
        let patch = emit::pod_patch(w, "main").unwrap();
        let mut pod = patch["spec"]["template"]["spec"].clone();
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
