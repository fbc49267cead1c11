//! `--emit-snapshot`: the planned cluster as Kubernetes objects, so `gpu-trust audit` can judge the plan
//! the way it judges a real cluster. One `kind: List` document with Namespaces (pod-security labels),
//! Nodes (the labels GPU Feature Discovery and the GPU Operator write, the plan's labels and taints, and
//! the resources the device plugin would advertise), the two ConfigMaps, a ClusterPolicy that names
//! them, and one Pod per placed replica with its node, resources and tolerations.

use crate::emit;
use crate::file::PlanInput;
use crate::plan::{Plan, TENANTS_TAINT};
use gpu_trust_model::catalogue;
use gpu_trust_model::fleet::SharingStrategy;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The Pod Security admission level the snapshot's tenant namespaces enforce.
pub const POD_SECURITY_LEVEL: &str = "baseline";

/// GPU Feature Discovery's `-SHARED` suffix on `nvidia.com/gpu.product` for nodes whose whole GPUs
/// are shared without renaming the resource (k8s-device-plugin README, shared access to GPUs).
const SHARED_SUFFIX: &str = "-SHARED";

fn node_object(node: &crate::plan::PlanNode, input: &PlanInput) -> Value {
    let model = catalogue::lookup(&node.model);
    let product = model
        .and_then(|m| m.product_labels.first().copied())
        .unwrap_or(node.model.as_str());
    let whole_shared = node.sharing.resources.contains_key("nvidia.com/gpu");
    let mut labels: BTreeMap<String, String> = emit::node_labels(node);
    labels.insert("nvidia.com/gpu.present".into(), "true".into());
    labels.insert(
        "nvidia.com/gpu.product".into(),
        if whole_shared {
            format!("{product}{SHARED_SUFFIX}")
        } else {
            product.to_string()
        },
    );
    labels.insert("nvidia.com/gpu.count".into(), node.gpu_count.to_string());
    if let Some(m) = model {
        labels.insert("nvidia.com/gpu.memory".into(), m.memory_mib.to_string());
        labels.insert(
            "nvidia.com/mig.capable".into(),
            m.supports_mig().to_string(),
        );
    }
    // The node-wide MIG strategy label only under a MIG strategy (GPU Feature Discovery,
    // `internal/lm/mig-strategy.go` lines 62-64 and 105-108).
    if emit::node_mig_strategy(node) != emit::MIG_STRATEGY_NONE {
        labels.insert(
            "nvidia.com/mig.strategy".into(),
            emit::node_mig_strategy(node).into(),
        );
    }
    if node.mig_config.is_some() {
        labels.insert("nvidia.com/mig.config.state".into(), "success".into());
    }
    if node.sharing.strategy == SharingStrategy::Mps {
        labels.insert("nvidia.com/mps.capable".into(), "true".into());
    }
    if node.confidential {
        labels.insert("nvidia.com/cc.mode.state".into(), "on".into());
    }
    // Per resource: count, replicas and sharing strategy, as GPU Feature Discovery labels them.
    labels.extend(emit::gfd_resource_labels(node));
    if let Some(v) = input
        .pools
        .iter()
        .find(|p| p.name == node.pool)
        .and_then(|p| p.driver_version.as_ref())
    {
        labels.insert("nvidia.com/cuda.driver-version.full".into(), v.text.clone());
        let parts = ["major", "minor", "revision"];
        for (name, value) in parts.iter().zip(&v.parts) {
            labels.insert(
                format!("nvidia.com/cuda.driver-version.{name}"),
                value.to_string(),
            );
        }
    }
    let resources: Map<String, Value> = emit::node_resources(node)
        .into_iter()
        .map(|(k, v)| (k, json!(v.to_string())))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels},
        "spec": {"taints": [{
            "key": TENANTS_TAINT,
            "value": node.tenant_pool,
            "effect": "NoSchedule",
        }]},
        "status": {"capacity": resources.clone(), "allocatable": resources},
    })
}

/// The snapshot document (YAML).
pub fn snapshot(plan: &Plan, input: &PlanInput) -> String {
    let mut items: Vec<Value> = Vec::new();
    // Namespaces of the workloads, with the tenant label where the policy needs it.
    let mut namespaces: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for w in &input.workloads {
        let labels = namespaces.entry(w.namespace.clone()).or_default();
        labels.insert(
            "pod-security.kubernetes.io/enforce".into(),
            POD_SECURITY_LEVEL.into(),
        );
        if let Some((k, v)) = &input.tenants[w.tenant].label {
            labels.insert(k.clone(), v.clone());
        }
    }
    for (name, labels) in &namespaces {
        items.push(json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": labels},
        }));
    }
    items.push(json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": input.operator.namespace},
    }));
    for node in &plan.nodes {
        items.push(node_object(node, input));
    }
    items.push(emit::mig_config_map(plan, input));
    items.push(emit::device_plugin_config_map(plan, input));
    items.push(json!({
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": emit::CLUSTER_POLICY},
        "spec": emit::cluster_policy_spec(input),
    }));
    // One Pod per placed replica.
    let mut pods: BTreeSet<(String, String, u32)> = BTreeSet::new();
    let mut node_of: BTreeMap<(String, u32), String> = BTreeMap::new();
    for node in &plan.nodes {
        for g in &node.gpus {
            for a in &g.assignments {
                node_of
                    .entry((a.workload.clone(), a.replica))
                    .or_insert_with(|| node.name.clone());
            }
        }
    }
    for w in &plan.workloads {
        let Some(resource) = &w.resource else {
            continue;
        };
        let spec_w = input.workloads.iter().find(|x| x.name == w.name);
        for i in 0..w.replicas {
            let Some(node) = node_of.get(&(w.name.clone(), i)) else {
                continue;
            };
            if !pods.insert((w.namespace.clone(), w.name.clone(), i)) {
                continue;
            }
            let mut container = json!({
                "name": spec_w.map(|x| x.container.as_str()).unwrap_or(w.name.as_str()),
                "resources": {"limits": {resource.clone(): w.count.to_string()}},
                "securityContext": {"allowPrivilegeEscalation": false},
            });
            if let Some(image) = spec_w.and_then(|x| x.image.as_ref()) {
                container["image"] = json!(image);
            }
            items.push(json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": format!("{}-{i}", w.name),
                    "namespace": w.namespace,
                    "labels": {
                        "app.kubernetes.io/name": w.name,
                        "gpu-trust.io/workload": w.name,
                        "gpu-trust.io/kind": w.kind.as_str(),
                    },
                },
                "spec": {
                    "nodeName": node,
                    "nodeSelector": w.node_selector,
                    "tolerations": w.tolerations,
                    "containers": [container],
                },
            }));
        }
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    serde_saphyr::to_string(&list).unwrap_or_default()
}
