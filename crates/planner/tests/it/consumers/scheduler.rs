//! The Kubernetes scheduler's node filters for a pod (`NodeAffinity` on `nodeSelector`,
//! `TaintToleration`, `NodeResourcesFit` on extended resources; kubernetes/kubernetes
//! `pkg/scheduler/framework/plugins`).

use serde_json::Value;
use std::collections::BTreeMap;

/// A node as the scheduler sees it.
#[derive(Debug, Clone)]
pub struct Node {
    pub labels: BTreeMap<String, String>,
    /// (key, value, effect)
    pub taints: Vec<(String, String, String)>,
    pub allocatable: BTreeMap<String, u64>,
}

/// Whether a pod spec (`spec.template.spec` of a patch) passes the node's filters: every
/// `nodeSelector` pair among the labels, every `NoSchedule`/`NoExecute` taint tolerated (`Equal`
/// matches key and value, `Exists` the key; no effect matches every effect), and every extended
/// resource it requests advertised at least as many times.
pub fn admits(pod: &Value, node: &Node) -> bool {
    let selector_ok = pod
        .get("nodeSelector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| node.labels.get(k).map(String::as_str) == v.as_str());
    let tolerations: Vec<&Value> = pod
        .get("tolerations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let tolerated = |(key, value, effect): &(String, String, String)| {
        tolerations.iter().any(|t| {
            let s = |k: &str| t.get(k).and_then(Value::as_str);
            let op = s("operator").unwrap_or("Equal");
            let key_ok = s("key").is_none_or(|k| k.is_empty() && op == "Exists" || k == key);
            let value_ok = op == "Exists" || s("value").unwrap_or("") == value;
            let effect_ok = s("effect").is_none_or(|e| e.is_empty() || e == effect);
            key_ok && value_ok && effect_ok
        })
    };
    let taints_ok = node
        .taints
        .iter()
        .filter(|t| t.2 == "NoSchedule" || t.2 == "NoExecute")
        .all(tolerated);
    let resources_ok = requests(pod)
        .iter()
        .all(|(r, &n)| node.allocatable.get(r).copied().unwrap_or(0) >= n);
    selector_ok && taints_ok && resources_ok
}

/// The extended resources (names with a domain: not `cpu`, `memory`...) the pod's containers request
/// (limits; for extended resources requests equal limits).
pub fn requests(pod: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for c in pod
        .get("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (k, v) in c
            .pointer("/resources/limits")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            // A patch removes a key with `null`; cpu and memory are no extended resources.
            if !k.contains('/') || v.is_null() {
                continue;
            }
            let n = v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                .unwrap_or(0);
            *out.entry(k.clone()).or_default() += n;
        }
    }
    out
}
