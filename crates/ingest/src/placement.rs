//! Where a workload may run: the nodes its scheduling constraints permit, and, for a scheduled pod,
//! the devices of its node it may be using.
//!
//! Constraints are the ones the scheduler filters on without looking at what else runs: requested
//! extended resources (the node must offer them), `nodeName`, `nodeSelector`, required node affinity
//! (`matchExpressions` on labels, `matchFields` on `metadata.name`), and taints with effect
//! `NoSchedule` or `NoExecute` that the pod does not tolerate. Scoring, preferred affinity, pod
//! (anti-)affinity and topology spread are left out: they make co-location less likely, never
//! impossible. Workloads with equal constraints share one node set.

use gpu_trust_model::fleet::{Node, NodeId, Taint, TaintEffect};
use k8s_openapi::api::core::v1 as core;
use std::collections::{BTreeMap, HashMap};

/// A workload's scheduling constraints, in a form that can be compared and hashed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Constraints {
    pub node_name: Option<String>,
    pub node_selector: Vec<(String, String)>,
    /// Required node affinity: the terms are ORed; `None` when there is none.
    pub affinity: Option<Vec<Term>>,
    pub tolerations: Vec<Tol>,
    /// Extended resources requested (non-zero), sorted.
    pub resources: Vec<String>,
    /// Those of them some container requests more than one of, sorted: a node whose device plugin
    /// refuses such a request at admission does not run the pod (`GpuNode::refuses_more_than_one`).
    pub many: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Term {
    pub expressions: Vec<Requirement>,
    pub fields: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Requirement {
    pub key: String,
    pub op: Op,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
    /// An operator the API does not define: matches nothing, as the scheduler rejects it.
    Invalid,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Tol {
    pub key: Option<String>,
    pub exists: bool,
    pub value: Option<String>,
    /// `None` tolerates every effect.
    pub effect: Option<String>,
    /// `tolerationSeconds`.
    pub seconds: Option<i64>,
}

impl Constraints {
    pub(crate) fn from_spec(spec: &core::PodSpec, resources: Vec<String>) -> Constraints {
        let mut node_selector: Vec<(String, String)> = spec
            .node_selector
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        node_selector.sort();
        let affinity = spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|n| {
                n.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(|sel| sel.node_selector_terms.iter().map(term).collect());
        let mut tolerations: Vec<Tol> = spec
            .tolerations
            .iter()
            .flatten()
            .map(|t| Tol {
                key: t.key.clone().filter(|k| !k.is_empty()),
                exists: t.operator.as_deref() == Some("Exists"),
                value: t.value.clone(),
                effect: t.effect.clone().filter(|e| !e.is_empty()),
                seconds: t.toleration_seconds,
            })
            .collect();
        tolerations.sort();
        tolerations.dedup();
        Constraints {
            node_name: spec.node_name.clone().filter(|n| !n.is_empty()),
            node_selector,
            affinity,
            tolerations,
            resources,
            many: Vec::new(),
        }
    }

    /// The tolerations the DaemonSet controller adds to every daemon pod (`pkg/controller/daemon/util`):
    /// not-ready and unreachable (NoExecute), disk, memory and PID pressure, unschedulable and, for
    /// host-network pods, network-unavailable (NoSchedule).
    pub(crate) fn add_daemonset_tolerations(&mut self, host_network: bool) {
        let mut add = |key: &str, effect: &str| {
            self.tolerations.push(Tol {
                key: Some(key.to_string()),
                exists: true,
                value: None,
                effect: Some(effect.to_string()),
                seconds: None,
            })
        };
        add("node.kubernetes.io/not-ready", "NoExecute");
        add("node.kubernetes.io/unreachable", "NoExecute");
        add("node.kubernetes.io/disk-pressure", "NoSchedule");
        add("node.kubernetes.io/memory-pressure", "NoSchedule");
        add("node.kubernetes.io/pid-pressure", "NoSchedule");
        add("node.kubernetes.io/unschedulable", "NoSchedule");
        if host_network {
            add("node.kubernetes.io/network-unavailable", "NoSchedule");
        }
        self.tolerations.sort();
        self.tolerations.dedup();
    }

    /// The tolerations as the model keeps them (for patches of the pod template).
    pub(crate) fn pod_tolerations(&self) -> Vec<gpu_trust_model::fleet::PodToleration> {
        self.tolerations
            .iter()
            .map(|t| gpu_trust_model::fleet::PodToleration {
                key: t.key.clone(),
                exists: t.exists,
                value: t.value.clone(),
                effect: t.effect.clone(),
                seconds: t.seconds,
            })
            .collect()
    }

    /// Takes every taint as tolerated: for a template whose tolerations are not in the input (a
    /// TrainJob whose runtime is missing), so that it is not kept off nodes it may reach.
    pub(crate) fn tolerate_everything(&mut self) {
        self.tolerations = vec![Tol {
            key: None,
            exists: true,
            value: None,
            effect: None,
            seconds: None,
        }];
    }

    /// Whether `node` passes every constraint. `offers` says whether the node offers a resource.
    pub(crate) fn permits(&self, node: &Node, offers: &dyn Fn(&str) -> bool) -> bool {
        if let Some(n) = &self.node_name {
            if *n != node.name {
                return false;
            }
        }
        if !self
            .node_selector
            .iter()
            .all(|(k, v)| node.labels.get(k) == Some(v))
        {
            return false;
        }
        if let Some(terms) = &self.affinity {
            if !terms.iter().any(|t| t.matches(node)) {
                return false;
            }
        }
        if !node
            .taints
            .iter()
            .filter(|t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute))
            .all(|t| self.tolerations.iter().any(|tol| tol.tolerates(t)))
        {
            return false;
        }
        self.resources.iter().all(|r| offers(r))
    }

    /// Node names this workload is limited to by name alone (`nodeName`, or every affinity term
    /// carrying a `metadata.name In` field), so permitted sets need not scan every node.
    pub(crate) fn name_candidates(&self) -> Option<Vec<&str>> {
        if let Some(n) = &self.node_name {
            return Some(vec![n.as_str()]);
        }
        let terms = self.affinity.as_ref()?;
        let mut names = Vec::new();
        for t in terms {
            let f = t
                .fields
                .iter()
                .find(|f| f.key == "metadata.name" && f.op == Op::In)?;
            names.extend(f.values.iter().map(String::as_str));
        }
        names.sort_unstable();
        names.dedup();
        Some(names)
    }
}

fn term(t: &core::NodeSelectorTerm) -> Term {
    let req = |r: &core::NodeSelectorRequirement| Requirement {
        key: r.key.clone(),
        op: match r.operator.as_str() {
            "In" => Op::In,
            "NotIn" => Op::NotIn,
            "Exists" => Op::Exists,
            "DoesNotExist" => Op::DoesNotExist,
            "Gt" => Op::Gt,
            "Lt" => Op::Lt,
            _ => Op::Invalid,
        },
        values: r.values.clone().unwrap_or_default(),
    };
    Term {
        expressions: t.match_expressions.iter().flatten().map(req).collect(),
        fields: t.match_fields.iter().flatten().map(req).collect(),
    }
}

impl Term {
    /// A term matches when all its requirements do; an empty term matches no node (as in the
    /// scheduler's `nodeaffinity` plugin).
    fn matches(&self, node: &Node) -> bool {
        if self.expressions.is_empty() && self.fields.is_empty() {
            return false;
        }
        self.expressions
            .iter()
            .all(|r| r.matches(node.labels.get(&r.key).map(String::as_str)))
            && self.fields.iter().all(|r| {
                let value = (r.key == "metadata.name").then_some(node.name.as_str());
                r.matches(value)
            })
    }
}

impl Requirement {
    fn matches(&self, value: Option<&str>) -> bool {
        match self.op {
            Op::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Op::NotIn => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::Gt | Op::Lt => {
                let (Some(v), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|b| b.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.op == Op::Gt {
                    v > bound
                } else {
                    v < bound
                }
            }
            Op::Invalid => false,
        }
    }
}

impl Tol {
    fn tolerates(&self, taint: &Taint) -> bool {
        if let Some(effect) = &self.effect {
            let e = match taint.effect {
                TaintEffect::NoSchedule => "NoSchedule",
                TaintEffect::PreferNoSchedule => "PreferNoSchedule",
                TaintEffect::NoExecute => "NoExecute",
            };
            if effect != e {
                return false;
            }
        }
        match &self.key {
            // An empty key with Exists tolerates every taint.
            None => self.exists,
            Some(k) if *k != taint.key => false,
            Some(_) if self.exists => true,
            Some(_) => self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        }
    }
}

/// Interns permitted node sets: equal constraints (of workloads not bound to a node) are evaluated
/// once, equal sets stored once.
#[derive(Default)]
pub(crate) struct NodeSets {
    pub sets: Vec<Vec<NodeId>>,
    by_nodes: HashMap<Vec<NodeId>, usize>,
    by_constraints: HashMap<Constraints, usize>,
}

impl NodeSets {
    pub(crate) fn new() -> Self {
        let mut s = NodeSets::default();
        s.intern(Vec::new());
        s
    }

    pub(crate) fn intern(&mut self, nodes: Vec<NodeId>) -> usize {
        if let Some(&id) = self.by_nodes.get(&nodes) {
            return id;
        }
        let id = self.sets.len();
        self.by_nodes.insert(nodes.clone(), id);
        self.sets.push(nodes);
        id
    }

    /// The set of nodes `c` permits among `nodes` (sorted by name). `offers` says whether a node
    /// offers a resource, to a container that requests more than one of it when the flag is set.
    pub(crate) fn permitted(
        &mut self,
        c: &Constraints,
        nodes: &[Node],
        by_name: &BTreeMap<&str, NodeId>,
        offers: &dyn Fn(NodeId, &str, bool) -> bool,
    ) -> usize {
        let offers = |i: NodeId, r: &str| {
            offers(i, r, c.many.binary_search_by(|m| m.as_str().cmp(r)).is_ok())
        };
        // A pod bound to a node (`nodeName`, as every scheduled pod of a dump) is permitted that
        // node or none: its constraints are seldom another's, and cheap to evaluate, so they are
        // neither looked up nor kept (on a dump, a copy of every pod's constraints).
        let memo = c.node_name.is_none();
        if memo {
            if let Some(&id) = self.by_constraints.get(c) {
                return id;
            }
        }
        let ids: Vec<NodeId> = match c.name_candidates() {
            Some(names) => {
                let mut ids: Vec<NodeId> = names
                    .iter()
                    .filter_map(|n| by_name.get(n).copied())
                    .filter(|&i| c.permits(&nodes[i], &|r| offers(i, r)))
                    .collect();
                ids.sort_unstable();
                ids
            }
            None => (0..nodes.len())
                .filter(|&i| c.permits(&nodes[i], &|r| offers(i, r)))
                .collect(),
        };
        let id = self.intern(ids);
        if memo {
            self.by_constraints.insert(c.clone(), id);
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::{Location, ObjectRef};

    fn node(name: &str, labels: &[(&str, &str)], taints: &[(&str, TaintEffect)]) -> Node {
        Node {
            object: ObjectRef {
                kind: "Node".into(),
                namespace: None,
                name: name.into(),
                location: Location::default(),
            },
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints: taints
                .iter()
                .map(|(k, e)| Taint {
                    key: k.to_string(),
                    value: None,
                    effect: *e,
                })
                .collect(),
            gpu: None,
        }
    }

    fn spec(yaml: &str) -> core::PodSpec {
        gpu_trust_source::parse_value(yaml, "t.yaml", &Default::default(), 0).unwrap()
    }

    #[test]
    fn selector_affinity_taints() {
        let gpu = node(
            "gpu",
            &[("pool", "a100"), ("zone", "1")],
            &[("nvidia.com/gpu", TaintEffect::NoSchedule)],
        );
        let cpu = node(
            "cpu",
            &[("pool", "cpu")],
            &[("soft", TaintEffect::PreferNoSchedule)],
        );
        let any = |_: &str| true;
        let plain = Constraints::from_spec(&spec("containers: []\n"), vec![]);
        assert!(!plain.permits(&gpu, &any));
        assert!(plain.permits(&cpu, &any));
        let tolerant = Constraints::from_spec(
            &spec("containers: []\ntolerations: [{key: nvidia.com/gpu, operator: Exists}]\nnodeSelector: {pool: a100}\n"),
            vec![],
        );
        assert!(tolerant.permits(&gpu, &any));
        assert!(!tolerant.permits(&cpu, &any));
        let affinity = Constraints::from_spec(
            &spec("containers: []\ntolerations: [{operator: Exists}]\naffinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n      - matchExpressions: [{key: zone, operator: Gt, values: ['0']}]\n"),
            vec![],
        );
        assert!(affinity.permits(&gpu, &any));
        assert!(!affinity.permits(&cpu, &any));
        let needs = Constraints::from_spec(
            &spec("containers: []\ntolerations: [{operator: Exists}]\n"),
            vec!["nvidia.com/gpu".into()],
        );
        assert!(!needs.permits(&gpu, &|r| r != "nvidia.com/gpu"));
    }

    #[test]
    fn daemon_pods_are_found_by_name() {
        let c = Constraints::from_spec(
            &spec("containers: []\naffinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n      - matchFields: [{key: metadata.name, operator: In, values: [b]}]\n"),
            vec![],
        );
        assert_eq!(c.name_candidates(), Some(vec!["b"]));
        let nodes = vec![node("a", &[], &[]), node("b", &[], &[])];
        let by_name: BTreeMap<&str, NodeId> = [("a", 0), ("b", 1)].into_iter().collect();
        let mut sets = NodeSets::new();
        let id = sets.permitted(&c, &nodes, &by_name, &|_, _, _| true);
        assert_eq!(sets.sets[id], vec![1]);
        assert_eq!(sets.sets[0], Vec::<NodeId>::new());
    }
}
