//! The fleet, assembled once every document is read: nodes resolved with their sharing in force,
//! DRA claims, workloads placed, namespaces, RBAC, acceptances.

use super::{Collector, NamespaceRecord};
use crate::api::Unread;
use crate::duplicates::{
    self, unique_acceptances, unique_config_maps, unique_nodes, unique_runtime_classes,
    unique_workloads,
};
use crate::nodes::{self, ConfigMapDraft, NodeDraft};
use crate::workload_placement::{self, WorkloadDraft};
use crate::{cluster, crd, dra, env, platforms, rbac, workloads};
use gpu_trust_model::fleet::{
    Fleet, Ingested, NamespaceInfo, Node, RuntimeClassInfo, Unresolved, Workload,
};
use gpu_trust_model::resource;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, ObjectRef, Version};
use std::collections::{BTreeMap, BTreeSet};

impl Collector {
    /// Workloads requesting a device gpu-trust cannot judge: an NVIDIA device KubeVirt serves that is
    /// no whole GPU, or a compute instance of a MIG GPU instance. What they get, and whom they
    /// share it with, is not judged: an error at the workload.
    fn unjudged_devices(&mut self) {
        for w in &self.workloads {
            let w = &w.workload;
            for name in w.gpu.resources.keys() {
                let Some((c, gpu_instance)) = resource::compute_instance(name) else {
                    continue;
                };
                self.diagnostics.push(Diagnostic::error(Code::UnjudgedDevice,
                    w.object.location.clone(),
                    format!(
                        "{} requests `{name}`: {c} compute slice(s) of a {gpu_instance} MIG GPU instance, whose compute instances share its memory and engines with each other (NVIDIA MIG user guide); gpu-trust does not model compute instances, so whom it shares that memory with is not judged (NVIDIA's device plugin advertises no compute-instance profile by default: k8s-device-plugin internal/rm/rm.go names only profiles whose compute slices equal the GPU instance's)",
                        w.object
                    ),
                ));
            }
        }
        for (name, why, at) in &self.unjudged_devices {
            for w in &self.workloads {
                let w = &w.workload;
                if w.gpu.resources.contains_key(name) {
                    self.diagnostics.push(Diagnostic::error(Code::UnjudgedDevice,
                        w.object.location.clone(),
                        format!(
                            "{} requests `{name}`: {why} ({}:{}); what it gets, and whom it shares it with, is not judged",
                            w.object, at.file, at.line
                        ),
                    ));
                }
            }
        }
    }

    pub(crate) fn finish(mut self) -> Ingested {
        self.end_document(&mut Vec::new());
        self.train_jobs();
        self.predictors();
        self.vm_instances();
        self.read_through();
        self.unjudged_devices();
        let mut diagnostics = std::mem::take(&mut self.diagnostics);
        let mut unresolved: Vec<Unresolved> = Vec::new();

        let drafts = unique_nodes(std::mem::take(&mut self.nodes), &mut diagnostics);

        // The ClusterPolicy the operator uses (the first by name when there are several).
        let mut policies = std::mem::take(&mut self.policies);
        policies.sort_by(|a, b| a.0.cmp(&b.0));
        if policies.len() > 1 {
            diagnostics.push(Diagnostic::warning(
                Code::SeveralOperatorConfigs,
                policies[1].0.location.clone(),
                format!(
                    "more than one ClusterPolicy; the GPU Operator uses one, taken here as {}",
                    policies[0].0.name
                ),
            ));
        }
        let config_maps =
            unique_config_maps(std::mem::take(&mut self.config_maps), &mut diagnostics);
        let policy = policies.first();
        let operator_namespace = operator_namespace(
            &self.operator_pods,
            policy.map(|p| &p.1),
            &config_maps,
            &drafts,
        );
        let info = policy.map(|(r, cp)| cluster::info(cp, r.clone(), operator_namespace.clone()));
        let gpu_cluster = self.gpu_cluster(policy.map(|p| &p.0), &mut diagnostics);

        let (operands, operator_version) = operands_by_node(std::mem::take(&mut self.operands));

        let operator = policy.zip(info.as_ref()).and_then(|((r, cp), info)| {
            platforms::gpu_operator::plugin_selection(cp, info, r, &operator_namespace)
        });
        let mut plugin_daemonsets = std::mem::take(&mut self.plugin_daemonsets);
        plugin_daemonsets.sort_by(|a, b| a.selection.owner.cmp(&b.selection.owner));
        let mut ctx = nodes::Context {
            info: info.as_ref(),
            operator,
            daemonsets: &plugin_daemonsets,
            operator_namespace: &operator_namespace,
            config_maps: &config_maps,
            operands: &operands,
            operator_version,
            dp_cache: BTreeMap::new(),
            mig_cache: BTreeMap::new(),
            unread: &self.unread,
            policy: policy.map(|p| &p.1),
        };
        let mut fleet_nodes: Vec<Node> = Vec::with_capacity(drafts.len());
        let mut mig_requests = Vec::new();
        for (id, d) in drafts.iter().enumerate() {
            let r = ctx.resolve(d, id);
            unresolved.extend(r.unresolved);
            diagnostics.extend(r.diagnostics);
            mig_requests.extend(r.mig_requests);
            fleet_nodes.push(Node {
                object: d.object.clone(),
                name: d.name.clone(),
                labels: d.labels.clone(),
                taints: d.taints.clone(),
                gpu: r.gpu,
            });
        }
        drop(ctx);

        // DRA claims and their strategies.
        let claims = dra::resolve(&self.claims, &self.classes);

        // Workloads, sorted; node ids, devices and permitted node sets.
        let mut wdrafts = unique_workloads(std::mem::take(&mut self.workloads), &mut diagnostics);
        let runtime_classes =
            unique_runtime_classes(std::mem::take(&mut self.runtime_classes), &mut diagnostics);
        unresolved.extend(resolve_references(
            &mut wdrafts,
            &config_maps,
            &runtime_classes,
            &self.unread,
        ));
        // Extended resources served by DRA (KEP-5004): what the nodes advertise, and whether every
        // node's status says what it advertises.
        let advertised: BTreeSet<String> = drafts
            .iter()
            .flat_map(|n| n.extended.iter().flatten())
            .filter(|(_, v)| **v > 0)
            .map(|(k, _)| k.clone())
            .collect();
        let nodes_known = !drafts.is_empty() && drafts.iter().all(|n| n.extended.is_some());
        let extended = dra::Extended::new(&self.classes, &self.claims, advertised, nodes_known);
        let placed = workload_placement::place_workloads(
            wdrafts,
            &drafts,
            &fleet_nodes,
            &claims,
            &self.claims,
            &extended,
        );
        unresolved.extend(placed.unresolved);
        let workloads_out = placed.workloads;

        let namespaces = namespaces_of(
            &workloads_out,
            std::mem::take(&mut self.namespaces),
            &self.bindings,
            &mut diagnostics,
        );

        let rbac = rbac::resolve(&self.roles, std::mem::take(&mut self.bindings));

        unresolved.sort();
        unresolved.dedup();
        let acceptances =
            unique_acceptances(std::mem::take(&mut self.acceptances), &mut diagnostics);
        for (_, (first, n)) in std::mem::take(&mut self.unnamespaced) {
            diagnostics.push(Diagnostic::warning(Code::MissingNamespace,
                first,
                format!(
                    "{} in this file {} no metadata.namespace: {} audited in namespace `default`, but `kubectl apply` puts {} in its context's namespace (or `-n`), and Helm in the release's; write the namespace in the manifests (or render with `helm template --namespace NS`)",
                    if n == 1 { "a namespaced object".to_string() } else { format!("{n} namespaced objects") },
                    if n == 1 { "names" } else { "name" },
                    if n == 1 { "it is" } else { "they are" },
                    if n == 1 { "it" } else { "them" },
                ),
            ));
        }
        diagnostics.sort();
        diagnostics.dedup();
        mig_requests.sort_by(|a: &gpu_trust_model::fleet::MigRequest, b| {
            (a.node, &a.gpus).cmp(&(b.node, &b.gpus))
        });
        Ingested {
            fleet: Fleet {
                nodes: fleet_nodes,
                workloads: workloads_out,
                namespaces: namespaces.into_values().collect(),
                runtime_classes,
                cluster_policy: info,
                rbac,
                resource_claims: claims,
                unresolved,
                node_sets: placed.node_sets,
                mig_requests,
                acceptances,
                gpu_cluster,
            },
            diagnostics,
        }
    }

    /// The GPUCluster the operator uses: a singleton (its CRD requires the name `gpu-cluster`), and
    /// one a cluster with a ClusterPolicy cannot use (GPU Operator 26.7.0 release notes).
    fn gpu_cluster(
        &mut self,
        policy: Option<&ObjectRef>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<gpu_trust_model::fleet::GpuClusterInfo> {
        let mut found = std::mem::take(&mut self.gpu_clusters);
        found.sort_by(|a, b| a.0.cmp(&b.0));
        for (r, _) in found.iter().skip(1) {
            diagnostics.push(Diagnostic::warning(
                Code::SeveralOperatorConfigs,
                r.location.clone(),
                format!(
                    "more than one GPUCluster; the GPU Operator uses one, taken here as {}",
                    found[0].0.name
                ),
            ));
        }
        let (r, g) = found.into_iter().next()?;
        if let Some(p) = policy {
            diagnostics.push(Diagnostic::warning(Code::SeveralOperatorConfigs,
                r.location.clone(),
                format!(
                    "GPUCluster {} and ClusterPolicy {} are both in the input; the GPU Operator does not use them together",
                    r.name, p.name
                ),
            ));
        }
        Some(cluster::gpu_cluster(&g, r))
    }
}

/// The operand versions seen on each node (toolkit, driver), and the newest operator version.
fn operands_by_node(
    seen: Vec<(Option<String>, cluster::Operand)>,
) -> (BTreeMap<String, cluster::Operands>, Option<Version>) {
    let mut operands: BTreeMap<String, cluster::Operands> = BTreeMap::new();
    let mut operator_version: Option<Version> = None;
    for (node, op) in seen {
        match (node, op) {
            (_, cluster::Operand::Operator(v)) => {
                operator_version = Some(match operator_version {
                    Some(old) if old >= v => old,
                    _ => v,
                })
            }
            (Some(n), cluster::Operand::Toolkit(v)) => {
                operands.entry(n).or_default().toolkit = Some(v)
            }
            (Some(n), cluster::Operand::Driver(v)) => {
                operands.entry(n).or_default().driver = Some(v)
            }
            (None, _) => {}
        }
    }
    (operands, operator_version)
}

/// What workloads take from other objects of the input: their containers' environment from
/// ConfigMaps (`env.rs`), and the handler of their runtime class; what the input cannot tell is
/// returned as unresolved. When a live reader could not read the RuntimeClasses (`unread`), no
/// class is known, not even by the name the GPU Operator gives its own.
#[allow(clippy::vec_box)] // See `Collector::workloads`.
fn resolve_references(
    wdrafts: &mut [Box<WorkloadDraft>],
    config_maps: &BTreeMap<(String, String), ConfigMapDraft>,
    runtime_classes: &[RuntimeClassInfo],
    unread: &[Unread],
) -> Vec<Unresolved> {
    let classes_unread = unread
        .iter()
        .find(|u| u.covers("node.k8s.io", "RuntimeClass", ""));
    let mut unresolved = Vec::new();
    for d in wdrafts.iter_mut() {
        let w = &mut d.workload;
        for (i, refs) in &d.env_refs {
            if let Some(c) = w.containers.get_mut(*i) {
                unresolved.extend(env::resolve(c, refs, &w.namespace, &w.object, config_maps));
            }
        }
        if let Some(name) = w.pod_security.runtime_class_name.clone() {
            match workloads::runtime_handler(&name, runtime_classes).filter(|_| classes_unread.is_none()) {
                Some(h) => w.pod_security.runtime_handler = Some(h),
                None => unresolved.push(Unresolved {
                    object: w.object.clone(),
                    node: None,
                    what: gpu_trust_model::fleet::UnresolvedKind::RuntimeClass,
                    message: match classes_unread {
                        Some(u) => format!(
                            "{} uses runtimeClassName {name}, and the RuntimeClasses could not be read ({}): whether it runs the NVIDIA container runtime is not known",
                            w.object, u.reason
                        ),
                        None => format!(
                            "{} uses runtimeClassName {name}, whose RuntimeClass is not in the input: whether it runs the NVIDIA container runtime is not known",
                            w.object
                        ),
                    },
                }),
            }
        }
    }
    unresolved
}

/// Namespaces: from Namespace objects (the first reading's labels) and every namespaced workload
/// and binding.
fn namespaces_of(
    workloads: &[Workload],
    read: Vec<NamespaceRecord>,
    bindings: &[rbac::BindingDraft],
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, NamespaceInfo> {
    let mut namespaces: BTreeMap<String, NamespaceInfo> = BTreeMap::new();
    let blank = |name: &str| NamespaceInfo {
        name: name.to_string(),
        ..NamespaceInfo::default()
    };
    for w in workloads {
        if !namespaces.contains_key(&w.namespace) {
            namespaces.insert(w.namespace.clone(), blank(&w.namespace));
        }
    }
    for (name, object) in read {
        let e = namespaces
            .entry(name.clone())
            .or_insert_with(|| blank(&name));
        if let Some((labels, r)) = object {
            match &e.object {
                None => {
                    e.labels = labels;
                    e.object = Some(r);
                }
                // Its labels decide its Pod Security level and, through tenant labels, its tenant.
                Some(first) if e.labels != labels => diagnostics.push(duplicates::conflict(
                    &format!("Namespace {name}"),
                    &r.location,
                    &first.location,
                    &["labels".to_string()],
                )),
                Some(_) => {}
            }
        }
    }
    for b in bindings {
        if let Some(ns) = &b.namespace {
            namespaces.entry(ns.clone()).or_insert_with(|| blank(ns));
        }
    }
    namespaces
}

/// The operator's namespace: where its own pods run; else the namespace holding the ConfigMap the
/// ClusterPolicy names (when exactly one does); else the default.
fn operator_namespace(
    operator_pods: &[String],
    policy: Option<&crd::ClusterPolicy>,
    config_maps: &BTreeMap<(String, String), ConfigMapDraft>,
    nodes: &[NodeDraft],
) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for ns in operator_pods {
        *counts.entry(ns.as_str()).or_default() += 1;
    }
    if let Some((ns, _)) = counts
        .iter()
        .max_by_key(|(ns, n)| (**n, std::cmp::Reverse(**ns)))
    {
        return (*ns).to_string();
    }
    let named: Vec<String> = policy
        .into_iter()
        .flat_map(|cp| {
            [
                cp.spec
                    .device_plugin
                    .as_ref()
                    .and_then(|d| d.config.as_ref())
                    .and_then(|c| c.name.clone()),
                cp.spec
                    .mig_manager
                    .as_ref()
                    .and_then(|d| d.config.as_ref())
                    .and_then(|c| c.name.clone()),
            ]
        })
        .flatten()
        .chain(std::iter::once(
            platforms::gpu_operator::DEFAULT_MIG_CONFIGMAP.to_string(),
        ))
        .collect();
    let holders: BTreeSet<&str> = config_maps
        .keys()
        .filter(|(_, name)| named.contains(name))
        .map(|(ns, _)| ns.as_str())
        .collect();
    if holders.len() == 1 {
        if let Some(ns) = holders.iter().next() {
            return (*ns).to_string();
        }
    }
    platforms::gpu_operator::default_namespace(nodes.iter().map(|n| &n.labels)).to_string()
}
