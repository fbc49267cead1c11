//! From Kubernetes manifests and cluster dumps to the fleet model.
//!
//! [`ingest`] reads inputs (files, directories and standard input come through
//! [`gpu_trust_source::gather`]) of YAML or JSON, multi-document streams and `kind: List` / `*List`
//! dumps, and returns the [`Fleet`] with every problem it found as a [`Diagnostic`]. One bad document
//! never hides the others: a malformed document is an error diagnostic (file, line, column) and the
//! rest of the input is read as if it were absent; an object of a known kind with a wrong shape is an
//! error for that object only. A document that is not an object (no `apiVersion` and `kind`) is an
//! error, as kubectl makes it, and so is a kind or version the API server would refuse (`kind:
//! node`, a Node at `v2`); lists inside lists are flattened. Platform namespaces are not special
//! here. An object without a namespace is in `default`. Pods that have finished (`Succeeded`,
//! `Failed`) hold no device and are left out. The same object read twice counts once.
//!
//! What it reads: Node, Pod and the built-in pod-owning kinds (Deployment, StatefulSet, DaemonSet,
//! ReplicaSet, Job, CronJob), the workload controllers of the controllers table (`controllers.rs`:
//! Kubeflow, Trainer, JobSet, Volcano, LeaderWorkerSet, KubeRay, KServe, Knative, Argo, vLLM
//! production-stack...), Namespace, ConfigMap (device plugin and mig-parted configs), ClusterPolicy
//! (`nvidia.com/v1`), RuntimeClass, ResourceClaim, ResourceClaimTemplate, DeviceClass, Role,
//! ClusterRole, RoleBinding, ClusterRoleBinding. Any other kind is searched for pod templates by
//! their shape (`discover.rs`); one that names a GPU resource outside a readable template is an
//! error. Kinds that never run pods (Services, Secrets, quotas, scheduler queues) are read for their
//! namespace only.
//!
//! - [`device_plugin`] and [`mig_parted`] parse the two NVIDIA configuration formats with the rules
//!   their tools apply; the planner checks the files it writes with them.
//! - Node resolution follows the GPU Operator (see the `nodes` module): sharing in force per node,
//!   MIG geometry from the mig-parted config and the catalogue, GPU Feature Discovery labels as the
//!   fallback, versions from labels, operand images and the ClusterPolicy.
//! - Placement: the devices a scheduled pod may be on (pinned by HAMi's allocation, one GPU on the
//!   node, one instance of a profile), and the node set its constraints permit, shared between
//!   workloads with equal constraints.
//!
//! ```
//! let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels:\n    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n    nvidia.com/gpu.count: \"8\"\n";
//! let ingested = gpu_trust_ingest::ingest_text(text, "cluster.yaml");
//! let node = &ingested.fleet.nodes[0];
//! assert_eq!(node.object.location.line, 1);
//! assert_eq!(node.gpu.as_ref().unwrap().count, 8);
//! assert!(ingested.diagnostics.is_empty());
//! ```

mod annotations;
pub mod api;
mod cluster;
mod controllers;
mod crd;
pub mod device_plugin;
mod discover;
mod dra;
mod duplicates;
mod env;
mod inference;
pub mod inventory;
mod kinds;
mod kserve;
mod kubevirt;
pub mod mig_parted;
mod nodes;
mod placement;
mod platforms;
mod rbac;
mod util;
mod workload_placement;
mod workloads;

use crate::controllers::{Controller, Reads};
use crate::discover::{At, Embedded, RuntimeDraft, TrainJobDraft};
use crate::kinds::{Dispatch, Dispatched, Typed};
use crate::nodes::{ConfigMapDraft, NodeDraft};
use crate::placement::Constraints;
use gpu_trust_model::fleet::{
    Fleet, Ingested, NamespaceInfo, Node, RuntimeClassInfo, Unresolved, Workload, WorkloadClass,
    WorkloadKind,
};
use gpu_trust_model::resource;
use gpu_trust_model::{Diagnostic, Location, ObjectRef, Version};
use gpu_trust_source::tree::{ScalarStyle, Value};
use gpu_trust_source::{
    read_json_pieces, read_stream, Entry, Format, Gathered, Input, LargeFile, Limits, Object,
    Pieces, ReadOptions,
};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::PathBuf;

pub use gpu_trust_source::Input as SourceInput;

/// How to read the input.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub limits: Limits,
    /// Collections the reader of a live cluster could not list: a configuration missing from the
    /// input is then unknown, not missing from the cluster.
    pub unread: Vec<api::Unread>,
}

/// Reads every input into the fleet model.
pub fn ingest(inputs: &[Input], options: &Options) -> Ingested {
    let mut c = Collector {
        limits: options.limits,
        unread: options.unread.clone(),
        ..Collector::default()
    };
    for (i, input) in inputs.iter().enumerate() {
        read_input(&mut c, i, input, options);
    }
    c.finish()
}

/// Reads every input into the fleet model, each input's text released as soon as it is read: on a
/// large dump the text does not stay beside the fleet while the fleet is built.
pub fn ingest_owned(inputs: Vec<Input>, options: &Options) -> Ingested {
    let mut c = Collector {
        limits: options.limits,
        unread: options.unread.clone(),
        ..Collector::default()
    };
    for (i, input) in inputs.into_iter().enumerate() {
        read_input(&mut c, i, &input, options);
    }
    c.finish()
}

/// Files at least this large that are not named as YAML are read in pieces (see
/// [`ingest_gathered`]): the size of a cluster dump whose text would otherwise weigh on the peak.
pub const LARGE_INPUT_BYTES: u64 = 64 << 20;

/// Reads every gathered input into the fleet model ([`gpu_trust_source::gather_large`]): texts as
/// [`ingest_owned`] reads them, and each large file in pieces, so that its text never lives in
/// memory whole. A large file the pieces reader does not take as it is (not one JSON List, or
/// anything wrong in it outside one item) is read whole instead, with the same result as
/// [`ingest_owned`] gives for its text.
pub fn ingest_gathered(inputs: Vec<Gathered>, options: &Options) -> Ingested {
    let mut c = Collector {
        limits: options.limits,
        unread: options.unread.clone(),
        ..Collector::default()
    };
    for (i, input) in inputs.into_iter().enumerate() {
        match input {
            Gathered::Text(input) => read_input(&mut c, i, &input, options),
            Gathered::Large(file) => read_large(&mut c, i, &file, options),
        }
    }
    c.finish()
}

/// How ingest reads every input: objects of `kind: List` documents item by item.
fn read_options(options: &Options) -> ReadOptions {
    ReadOptions {
        limits: options.limits,
        split_key: Some("items".to_string()),
        format: Format::Auto,
    }
}

/// Reads a large file in pieces, on a second thread while the objects are typed and converted on
/// this one; when the pieces reader says to, drops what it handed on and reads the file whole.
fn read_large(c: &mut Collector, i: usize, file: &LargeFile, options: &Options) {
    let read = read_options(options);
    let mut reader = match file.open(&options.limits) {
        Ok(f) => f,
        Err(d) => return c.diagnostics.push(d),
    };
    let mark = (c.mark(), c.diagnostics.len());
    let mut pending: Vec<Object<'_>> = Vec::new();
    let name = file.name.as_str();
    let pieces = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Entry<'_>>>(PIPELINE_DEPTH);
        let read = &read;
        let reader = scope.spawn(move || {
            let mut batch = Vec::with_capacity(PIPELINE_BATCH);
            let pieces = read_json_pieces(&mut reader, name, read, &mut |e| {
                batch.push(e);
                if batch.len() == PIPELINE_BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(PIPELINE_BATCH));
                    // The receiver only stops early if this thread's owner is gone.
                    let _ = tx.send(full);
                }
            });
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            pieces
        });
        for batch in rx {
            for e in batch {
                c.accept(&mut pending, i, e);
            }
        }
        reader.join().unwrap_or(Pieces::Whole)
    });
    c.end_document(&mut pending);
    if pieces == Pieces::Read {
        // A valid JSON text has no line that reads as a Markdown fragment: no hints to add.
        return;
    }
    c.checkpoint = mark.0;
    c.rollback();
    c.diagnostics.truncate(mark.1);
    c.current = None;
    match file.read_whole(&options.limits) {
        Ok(input) => read_input(c, i, &input, options),
        Err(d) => c.diagnostics.push(d),
    }
}

/// Reads one input, and hints at Markdown fragments in its errors while its text is at hand.
fn read_input(c: &mut Collector, i: usize, input: &Input, options: &Options) {
    let read = read_options(options);
    let from = c.diagnostics.len();
    // Items of the current document without apiVersion/kind, waiting for the list's own kind.
    let mut pending: Vec<Object<'_>> = Vec::new();
    if input.text.len() < PIPELINE_BYTES {
        read_stream(&input.text, &input.name, &read, &mut |e| {
            c.accept(&mut pending, i, e)
        });
    } else {
        // A large input: parse on one thread while the objects are typed and converted on
        // this one. Batches keep the order of the input.
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Entry<'_>>>(PIPELINE_DEPTH);
            let read = &read;
            scope.spawn(move || {
                let mut batch = Vec::with_capacity(PIPELINE_BATCH);
                read_stream(&input.text, &input.name, read, &mut |e| {
                    batch.push(e);
                    if batch.len() == PIPELINE_BATCH {
                        let full =
                            std::mem::replace(&mut batch, Vec::with_capacity(PIPELINE_BATCH));
                        // The receiver only stops early if this thread's owner is gone.
                        let _ = tx.send(full);
                    }
                });
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
            });
            for batch in rx {
                for e in batch {
                    c.accept(&mut pending, i, e);
                }
            }
        });
    }
    c.end_document(&mut pending);
    hint_fragments(&mut c.diagnostics[from..], std::slice::from_ref(input));
}

/// Inputs at least this large are read on a second thread.
const PIPELINE_BYTES: usize = 4 << 20;
/// Objects handed from the reading thread at a time, and batches in flight.
const PIPELINE_BATCH: usize = 256;
const PIPELINE_DEPTH: usize = 8;

/// Reads command-line paths (files, directories walked for `.yaml`, `.yml` and `.json`, `-` for
/// `stdin`) into the fleet model; unreadable paths are error diagnostics like malformed documents.
pub fn ingest_paths(paths: &[PathBuf], stdin: &mut dyn Read, options: &Options) -> Ingested {
    let (inputs, gathered) = gpu_trust_source::gather(paths, stdin, &options.limits);
    let mut ingested = ingest(&inputs, options);
    ingested.diagnostics.extend(gathered);
    ingested.diagnostics.sort();
    ingested.diagnostics.dedup();
    ingested
}

/// Reads one text (named `file` in locations).
pub fn ingest_text(text: &str, file: &str) -> Ingested {
    ingest(
        &[Input {
            name: file.to_string(),
            text: text.to_string(),
        }],
        &Options::default(),
    )
}

/// The type of a list document (`kind: PodList`), which names the kind of items without one.
#[derive(Default, Deserialize)]
struct ListHeader {
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    kind: Option<String>,
}

/// One object to read: where it starts and its body (a located YAML tree, a JSON value, or JSON
/// text not parsed yet).
struct Doc<'t, 'a> {
    location: Location,
    object: Option<&'t Object<'a>>,
    node: Option<&'t gpu_trust_source::Node<'a>>,
    json: Option<&'t serde_json::Value>,
    /// An item of a list that is itself an item.
    nested: bool,
}

impl<'t, 'a> Doc<'t, 'a> {
    fn of(o: &'t Object<'a>) -> Self {
        Doc {
            location: o.location(),
            object: Some(o),
            node: o.node(),
            json: None,
            nested: false,
        }
    }

    fn nested(parent: &Doc<'_, '_>, item: At<'t, 'a>) -> Self {
        let (node, json) = match item {
            At::Yaml(n) => (Some(n), None),
            At::Json(v) => (None, Some(v)),
        };
        Doc {
            location: item.location(&parent.location),
            object: None,
            node,
            json,
            nested: true,
        }
    }

    /// The body as a tree, when it is one already.
    fn root(&self) -> Option<At<'t, 'a>> {
        match (self.node, self.json) {
            (Some(n), _) => Some(At::Yaml(n)),
            (None, Some(v)) => Some(At::Json(v)),
            (None, None) => None,
        }
    }

    /// The body of a JSON object as a value.
    fn json_value(&self) -> Result<serde_json::Value, Diagnostic> {
        match self.object {
            Some(o) => o.deserialize(),
            None => Ok(serde_json::Value::Null),
        }
    }

    fn dispatch(&self, supplied: Option<(&str, &str)>) -> Result<Dispatched, Diagnostic> {
        let seed = Dispatch { supplied };
        if let Some(n) = self.node {
            return gpu_trust_source::de::seed_from_node(seed, n).map_err(|e| {
                let pos = if e.pos.line == 0 { n.pos } else { e.pos };
                Diagnostic::error(
                    Location::new(self.location.file.clone(), pos.line, pos.column),
                    e.message,
                )
            });
        }
        if let Some(v) = self.json {
            use serde::de::DeserializeSeed;
            return seed
                .deserialize(v)
                .map_err(|e| Diagnostic::error(self.location.clone(), e.to_string()));
        }
        match self.object {
            Some(o) => o.deserialize_seed(seed),
            None => Ok(Dispatched::NotAnObject),
        }
    }
}

/// A workload read from a Pod or a template, before nodes are known.
struct WorkloadDraft {
    workload: Workload,
    node_name: Option<String>,
    constraints: Constraints,
    claims: Vec<(String, Option<String>, Option<String>)>,
    allocated: Vec<String>,
    /// A pod's `status.extendedResourceClaimStatus`.
    extended: Option<dra::ExtendedStatus>,
    /// What its containers' environments take from ConfigMaps and Secrets, by container index.
    env_refs: Vec<(usize, env::Refs)>,
}

/// A namespace named by an object, with the labels and reference of a Namespace object.
type NamespaceRecord = (String, Option<(BTreeMap<String, String>, ObjectRef)>);

/// Lengths of the collections at the start of a document, to drop what a bad document added.
#[derive(Default, Clone, Copy)]
struct Checkpoint {
    nodes: usize,
    workloads: usize,
    namespaces: usize,
    config_maps: usize,
    policies: usize,
    gpu_clusters: usize,
    runtime_classes: usize,
    roles: usize,
    bindings: usize,
    claims: usize,
    classes: usize,
    operands: usize,
    operator_pods: usize,
    plugin_daemonsets: usize,
    runtimes: usize,
    train_jobs: usize,
    serving_runtimes: usize,
    predictors: usize,
    unjudged_devices: usize,
    acceptances: usize,
}

#[derive(Default)]
struct Collector {
    nodes: Vec<NodeDraft>,
    /// Boxed: on a large dump the list grows, is sorted and deduplicated without moving the drafts
    /// themselves (about a kilobyte each), and without a second copy of them all beside the first.
    #[allow(clippy::vec_box)]
    workloads: Vec<Box<WorkloadDraft>>,
    namespaces: Vec<NamespaceRecord>,
    config_maps: Vec<(String, String, ConfigMapDraft)>,
    policies: Vec<(ObjectRef, crd::ClusterPolicy)>,
    gpu_clusters: Vec<(ObjectRef, crd::GpuCluster)>,
    runtime_classes: Vec<RuntimeClassInfo>,
    roles: Vec<rbac::RoleDraft>,
    bindings: Vec<rbac::BindingDraft>,
    claims: Vec<dra::ClaimDraft>,
    classes: Vec<dra::DeviceClassDraft>,
    /// Operand images of pods: (node, operand).
    operands: Vec<(Option<String>, cluster::Operand)>,
    /// Namespaces of pods and Deployments running the GPU Operator itself.
    operator_pods: Vec<String>,
    /// Device plugins installed without the GPU Operator (Helm chart, static manifests).
    plugin_daemonsets: Vec<platforms::plugin_daemonset::PluginDaemonSet>,
    diagnostics: Vec<Diagnostic>,
    current: Option<(usize, usize)>,
    checkpoint: Checkpoint,
    /// Kubeflow Trainer runtimes and the TrainJobs that reference them, joined at the end.
    runtimes: Vec<RuntimeDraft>,
    train_jobs: Vec<TrainJobDraft>,
    /// KServe serving runtimes and the predictors that run in them, joined at the end.
    serving_runtimes: Vec<kserve::ServingRuntime>,
    predictors: Vec<kserve::Predictor>,
    /// NVIDIA devices the KubeVirt CR permits that are not read as whole GPUs: name, why, where.
    unjudged_devices: Vec<(String, String, Location)>,
    /// While objects embedded in another (an Argo resource template's manifest) are read: that
    /// object, and the namespace its objects default to.
    embedding: Option<(ObjectRef, String)>,
    limits: Limits,
    /// Collections a live reader could not list.
    unread: Vec<api::Unread>,
    /// Acceptances annotated on the workloads and Namespaces read.
    acceptances: Vec<gpu_trust_model::fleet::AnnotatedAcceptance>,
    /// Per file, the first namespaced object that names no namespace and how many do.
    unnamespaced: BTreeMap<String, (Location, usize)>,
}

impl Collector {
    fn mark(&self) -> Checkpoint {
        Checkpoint {
            nodes: self.nodes.len(),
            workloads: self.workloads.len(),
            namespaces: self.namespaces.len(),
            config_maps: self.config_maps.len(),
            policies: self.policies.len(),
            gpu_clusters: self.gpu_clusters.len(),
            runtime_classes: self.runtime_classes.len(),
            roles: self.roles.len(),
            bindings: self.bindings.len(),
            claims: self.claims.len(),
            classes: self.classes.len(),
            operands: self.operands.len(),
            operator_pods: self.operator_pods.len(),
            plugin_daemonsets: self.plugin_daemonsets.len(),
            runtimes: self.runtimes.len(),
            train_jobs: self.train_jobs.len(),
            serving_runtimes: self.serving_runtimes.len(),
            predictors: self.predictors.len(),
            unjudged_devices: self.unjudged_devices.len(),
            acceptances: self.acceptances.len(),
        }
    }

    fn rollback(&mut self) {
        let c = self.checkpoint;
        self.nodes.truncate(c.nodes);
        self.workloads.truncate(c.workloads);
        self.namespaces.truncate(c.namespaces);
        self.config_maps.truncate(c.config_maps);
        self.policies.truncate(c.policies);
        self.gpu_clusters.truncate(c.gpu_clusters);
        self.runtime_classes.truncate(c.runtime_classes);
        self.roles.truncate(c.roles);
        self.bindings.truncate(c.bindings);
        self.claims.truncate(c.claims);
        self.classes.truncate(c.classes);
        self.operands.truncate(c.operands);
        self.operator_pods.truncate(c.operator_pods);
        self.plugin_daemonsets.truncate(c.plugin_daemonsets);
        self.runtimes.truncate(c.runtimes);
        self.train_jobs.truncate(c.train_jobs);
        self.serving_runtimes.truncate(c.serving_runtimes);
        self.predictors.truncate(c.predictors);
        self.unjudged_devices.truncate(c.unjudged_devices);
        self.acceptances.truncate(c.acceptances);
    }

    fn end_document(&mut self, pending: &mut Vec<Object<'_>>) {
        for o in pending.drain(..) {
            self.diagnostics.push(Diagnostic::error(
                o.location(),
                "list item without apiVersion and kind, in a list that does not name its item kind",
            ));
        }
        self.current = None;
    }

    fn accept<'a>(&mut self, pending: &mut Vec<Object<'a>>, input: usize, entry: Entry<'a>) {
        let document = match &entry {
            Entry::Object(o) | Entry::Container { object: o, .. } => o.document(),
            Entry::Invalid { document, .. } => *document,
        };
        if self.current != Some((input, document)) {
            self.end_document(pending);
            self.current = Some((input, document));
            self.checkpoint = self.mark();
        }
        match entry {
            Entry::Object(o) => self.object(pending, o, None),
            Entry::Container { object, .. } => self.container(pending, object),
            Entry::Invalid {
                item: None,
                diagnostic,
                ..
            } => {
                self.rollback();
                pending.clear();
                self.diagnostics.push(diagnostic);
            }
            Entry::Invalid { diagnostic, .. } => self.diagnostics.push(diagnostic),
        }
    }

    /// The rest of a list document: its kind names the kind of items that do not say theirs.
    fn container<'a>(&mut self, pending: &mut Vec<Object<'a>>, object: Object<'a>) {
        let header: ListHeader = object.deserialize().unwrap_or_default();
        let waiting = std::mem::take(pending);
        let kind = header.kind.as_deref().unwrap_or("");
        let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
        match (item_kind, header.api_version.as_deref()) {
            (Some(k), Some(api)) => {
                for o in waiting {
                    self.object(pending, o, Some((api, k)));
                }
            }
            _ => {
                *pending = waiting;
                self.end_document(pending);
            }
        }
    }

    fn object<'a>(
        &mut self,
        pending: &mut Vec<Object<'a>>,
        o: Object<'a>,
        supplied: Option<(&str, &str)>,
    ) {
        let dispatched = match o.deserialize_seed(Dispatch { supplied }) {
            Ok(d) => d,
            Err(d) => {
                self.report(d);
                return;
            }
        };
        if matches!(dispatched, Dispatched::NoKind) && o.item().is_some() && supplied.is_none() {
            pending.push(o);
            return;
        }
        let doc = Doc::of(&o);
        self.dispatched(&doc, dispatched);
    }

    /// Reads an object of any input (embedded manifests are read from text of their own).
    fn object_any(&mut self, o: &Object<'_>) {
        match o.deserialize_seed(Dispatch { supplied: None }) {
            Ok(d) => self.dispatched(&Doc::of(o), d),
            Err(d) => self.report(d),
        }
    }

    /// A diagnostic; inside an embedded manifest, errors become warnings (the text is a template
    /// its controller fills in at run time, such as Argo's `{{inputs.parameters.x}}`).
    fn report(&mut self, mut d: Diagnostic) {
        if let Some((owner, _)) = &self.embedding {
            if d.is_error() {
                d = Diagnostic::warning(
                    d.location.clone(),
                    format!(
                        "{} (in a resource manifest of {owner}, filled in when it runs: this object is not audited)",
                        d.message
                    ),
                );
            }
        }
        self.diagnostics.push(d);
    }

    fn dispatched(&mut self, doc: &Doc<'_, '_>, dispatched: Dispatched) {
        match dispatched {
            Dispatched::Known { kind, object } => {
                if object.lacks_namespace() {
                    self.unnamespaced(&doc.location);
                }
                // Workloads add their namespace when the fleet is built; the other namespaced
                // kinds add theirs here.
                if let Some(ns) = object.config_namespace() {
                    self.namespaces.push((ns.to_string(), None));
                }
                let annotated = annotations::typed_subject(&object).map(|(subject, meta)| {
                    let entries = annotations::typed_entries(meta, doc.node, &doc.location);
                    (subject, self.annotated_ref(meta, &kind, doc), entries)
                });
                match self.known(doc, object, &kind) {
                    Err(d) => self.report(d),
                    Ok(()) => {
                        if let Some((subject, r, entries)) = annotated {
                            self.annotated(subject, &r, entries);
                        }
                    }
                }
            }
            Dispatched::Unknown {
                namespace,
                api_version,
                kind,
            } => {
                if let Some(ns) = namespace.filter(|n| !n.is_empty()) {
                    self.namespaces.push((ns, None));
                }
                if let Err(d) = self.unknown(doc, &api_version, &kind) {
                    self.report(d);
                }
            }
            // As kubectl refuses them: an input that is not made of objects is not a cluster.
            Dispatched::NoKind => {
                let message = if doc.nested {
                    "list item without apiVersion and kind, in a list that does not name its item kind".to_string()
                } else {
                    let owned = match doc.root() {
                        Some(_) => None,
                        None => doc.json_value().ok(),
                    };
                    let root = doc.root().or(owned.as_ref().map(At::Json));
                    not_an_object(root)
                };
                self.report(Diagnostic::error(doc.location.clone(), message))
            }
            Dispatched::NotAnObject => self.report(Diagnostic::error(
                doc.location.clone(),
                "not a Kubernetes object: expected a mapping with string apiVersion and kind",
            )),
            Dispatched::BadList => self.report(Diagnostic::error(
                doc.location.clone(),
                "the items of a list must be a sequence of objects",
            )),
        }
    }

    /// An object of a kind without a typed reader: a list inside a list, a kind the API server
    /// would refuse, a controller of the table, or any other kind searched for pod templates.
    fn unknown(&mut self, doc: &Doc<'_, '_>, api: &str, kind: &str) -> Result<(), Diagnostic> {
        let (group, _) = api.split_once('/').unwrap_or(("", api));
        let owned;
        let root = match doc.root() {
            Some(r) => r,
            None => {
                owned = doc.json_value()?;
                At::Json(&owned)
            }
        };
        // A list inside a list: kubectl flattens nested lists (cli-runtime
        // `resource.FlattenListVisitor`), and so does ingest.
        if kind.ends_with("List") {
            if let Some(items) = root.get("items").and_then(At::items) {
                let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
                let supplied = item_kind.map(|k| (api, k));
                for item in items {
                    let d = Doc::nested(doc, item);
                    match d.dispatch(supplied) {
                        Ok(x) => self.dispatched(&d, x),
                        Err(e) => self.report(e),
                    }
                }
                return Ok(());
            }
        }
        let field_location = |field: &str| {
            root.get(field)
                .map_or(doc.location.clone(), |a| a.location(&doc.location))
        };
        if let Some(message) = kinds::unrendered(group, kind) {
            return Err(Diagnostic::error(field_location("kind"), message));
        }
        if let Some(r) = kinds::refusal(api, kind) {
            let loc = field_location(r.field);
            return Err(if r.error {
                Diagnostic::error(loc, r.message)
            } else {
                Diagnostic::warning(loc, r.message)
            });
        }
        if let Some(c) = controllers::misspelled(group, kind) {
            return Err(Diagnostic::error(
                field_location("kind"),
                format!(
                    "kind {kind:?} does not exist in {group} (kinds are case-sensitive) and the API server would refuse this object; did you mean {:?}?",
                    c.kind
                ),
            ));
        }
        let reference = self.reference_at(root, kind, &doc.location);
        let entries = annotations::tree_entries(root, &doc.location);
        let before = self.workloads.len();
        let read = match controllers::lookup(group, kind) {
            Some(c) => self.controller(c, root, reference.clone()),
            None if controllers::inert(group, kind) => return Ok(()),
            None => self.generic(root, reference.clone()),
        };
        if read.is_ok() {
            if self.workloads.len() > before
                && discover::meta_text(root, "namespace").is_none_or(|n| n.is_empty())
            {
                self.unnamespaced(&doc.location);
            }
            self.annotated(
                gpu_trust_model::fleet::AnnotatedSubject::Workload,
                &reference,
                entries,
            );
        }
        read
    }

    /// Notes a namespaced object read from a file without `metadata.namespace` (objects inside another
    /// take their owner's namespace and are not counted).
    fn unnamespaced(&mut self, location: &Location) {
        if self.embedding.is_some() {
            return;
        }
        self.unnamespaced
            .entry(location.file.clone())
            .and_modify(|(first, n)| {
                *n += 1;
                if location < first {
                    *first = location.clone();
                }
            })
            .or_insert((location.clone(), 1));
    }

    /// The reference an accept annotation of a typed object names (the namespace of a workload as
    /// its workloads get it; a Namespace by its name).
    fn annotated_ref(&self, meta: &ObjectMeta, kind: &str, doc: &Doc<'_, '_>) -> ObjectRef {
        let namespaced = kind != "Namespace";
        ObjectRef {
            kind: kind.to_string(),
            namespace: namespaced.then(|| {
                meta.namespace
                    .clone()
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| self.default_namespace())
            }),
            name: meta
                .name
                .clone()
                .or_else(|| meta.generate_name.clone())
                .unwrap_or_default(),
            location: doc.location.clone(),
        }
    }

    /// Keeps the valid accept annotations of an object that was read, and reports the others.
    fn annotated(
        &mut self,
        subject: gpu_trust_model::fleet::AnnotatedSubject,
        object: &ObjectRef,
        entries: Vec<annotations::Entry>,
    ) {
        if entries.is_empty() {
            return;
        }
        let (accepted, errors) = annotations::parse(subject, object, entries);
        self.acceptances.extend(accepted);
        for e in errors {
            self.report(e);
        }
    }

    /// The reference of an object read as a tree.
    fn reference_at(&self, root: At<'_, '_>, kind: &str, location: &Location) -> ObjectRef {
        let name = discover::meta_text(root, "name")
            .or_else(|| discover::meta_text(root, "generateName"))
            .unwrap_or_default();
        let namespace = discover::meta_text(root, "namespace")
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| self.default_namespace());
        ObjectRef {
            kind: kind.to_string(),
            namespace: Some(namespace),
            name,
            location: location.clone(),
        }
    }

    /// The namespace of an object that names none.
    fn default_namespace(&self) -> String {
        self.embedding
            .as_ref()
            .map_or_else(|| "default".to_string(), |(_, ns)| ns.clone())
    }

    /// An object of the controllers table.
    fn controller(
        &mut self,
        c: &'static Controller,
        root: At<'_, '_>,
        r: ObjectRef,
    ) -> Result<(), Diagnostic> {
        let loc = r.location.clone();
        match c.reads {
            Reads::Holder if c.kind.ends_with("TrainingRuntime") => {
                let namespace = (c.kind == "TrainingRuntime")
                    .then(|| r.namespace.clone())
                    .flatten();
                let runtime = discover::read_runtime(c.kind, namespace, &r.name, root, &loc)?;
                self.runtimes.push(runtime);
            }
            Reads::Holder if c.group == kserve::GROUP && c.kind.ends_with("ServingRuntime") => {
                let namespace = (c.kind == "ServingRuntime")
                    .then(|| r.namespace.clone())
                    .flatten();
                let runtime = kserve::read_runtime(namespace, &r.name, root, &loc)?;
                self.serving_runtimes.push(runtime);
            }
            Reads::Holder if c.group == kubevirt::GROUP && c.kind == "KubeVirt" => {
                for (name, why) in kubevirt::unjudged_devices(root, &loc)? {
                    self.unjudged_devices.push((name, why, loc.clone()));
                }
            }
            Reads::Holder => {}
            Reads::KubeVirt | Reads::VllmRuntime => {
                let found = if matches!(c.reads, Reads::KubeVirt) {
                    kubevirt::read(c.kind, root, &loc)?
                } else {
                    discover::read_vllm_runtime(root, &loc, &r.name)?
                };
                for f in found {
                    self.template(
                        r.clone(),
                        c.workload,
                        f.role,
                        f.replicas,
                        &f.template,
                        c.class,
                        false,
                    );
                }
            }
            Reads::TrainJob => {
                let job = discover::read_train_job(r, root)?;
                self.train_jobs.push(job);
            }
            Reads::Groups(_) => {
                let read = discover::read_groups(c, root, &loc)?;
                // A KServe predictor written as `model` runs the image of a serving runtime: its
                // pods are built once the runtimes are read.
                let model = if c.group == kserve::GROUP && c.kind == "InferenceService" {
                    kserve::read_model(root, &loc)?
                } else {
                    None
                };
                let multinode = root.path("spec.predictor.workerSpec").is_some();
                for f in read.found {
                    if let Some(model) = model
                        .as_ref()
                        .filter(|_| f.role.as_deref() == Some("predictor"))
                    {
                        self.predictors.push(kserve::Predictor {
                            object: r.clone(),
                            kind: c.workload,
                            class: c.class,
                            model: model.clone(),
                            multinode,
                            found: f,
                        });
                        continue;
                    }
                    self.template(
                        r.clone(),
                        c.workload,
                        f.role,
                        f.replicas,
                        &f.template,
                        c.class,
                        f.unknown_constraints,
                    );
                }
                for w in read.warnings {
                    self.report(w);
                }
                self.embedded(read.embedded, &r);
            }
        }
        Ok(())
    }

    /// Objects written as text inside another (Argo resource templates), read as objects of its
    /// namespace. Their own embedded objects are not read further.
    fn embedded(&mut self, items: Vec<Embedded>, owner: &ObjectRef) {
        if items.is_empty() {
            return;
        }
        if self.embedding.is_some() {
            self.report(Diagnostic::warning(
                owner.location.clone(),
                format!("{owner}: resource manifests inside a resource manifest are not read"),
            ));
            return;
        }
        let namespace = owner
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let file = owner.location.file.clone();
        let options = ReadOptions {
            limits: self.limits,
            split_key: None,
            format: Format::Yaml,
        };
        self.embedding = Some((owner.clone(), namespace));
        for e in items {
            // Blank lines in front keep the file's line numbers in what is read.
            let mut text =
                "\n".repeat(usize::try_from(e.first_line.saturating_sub(1)).unwrap_or(0));
            text.push_str(&e.text);
            read_stream(&text, &file, &options, &mut |entry| match entry {
                Entry::Object(o) | Entry::Container { object: o, .. } => self.object_any(&o),
                Entry::Invalid { diagnostic, .. } => self.report(diagnostic),
            });
        }
        self.embedding = None;
    }

    /// Any other kind: pod templates found by their shape are audited; a GPU resource named
    /// outside any template is an error, since what the object runs cannot be read.
    fn generic(&mut self, root: At<'_, '_>, r: ObjectRef) -> Result<(), Diagnostic> {
        let loc = r.location.clone();
        let (shaped, truncated) = discover::discover(root);
        let mut gpu_paths = Vec::new();
        for s in &shaped {
            let found = match discover::read_shaped(s, &loc) {
                Ok(f) => f,
                Err(e) => {
                    self.report(Diagnostic::warning(
                        e.location,
                        format!(
                            "{r}: {} is shaped like a pod template but is not one ({}); not read",
                            s.path, e.message
                        ),
                    ));
                    continue;
                }
            };
            let before = self.workloads.len();
            self.template(
                r.clone(),
                WorkloadKind::Custom,
                found.role,
                found.replicas,
                &found.template,
                None,
                false,
            );
            if self.workloads[before..]
                .iter()
                .any(|w| w.workload.requests_gpu())
            {
                gpu_paths.push(found.path);
            }
        }
        if truncated {
            self.report(Diagnostic::warning(
                loc.clone(),
                format!("{r}: the search for pod templates stopped at its bounds; what is deeper is not read"),
            ));
        }
        if !gpu_paths.is_empty() {
            self.report(Diagnostic::warning(
                loc,
                format!(
                    "{r}: a kind gpu-trust has no controller for; the pod templates found by their shape at {} request GPUs and are audited, each counted as the `replicas` beside it, or one",
                    gpu_paths.join(", ")
                ),
            ));
        } else if shaped.is_empty() {
            if let Some((path, pos)) = discover::gpu_mention(root) {
                let at = match pos {
                    Some(p) => Location::new(loc.file.clone(), p.line, p.column),
                    None => loc,
                };
                return Err(Diagnostic::error(
                    at,
                    format!(
                        "{r} names a GPU resource at {path} but holds no pod template gpu-trust can read: what it runs would not be audited"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn known(&mut self, doc: &Doc<'_, '_>, typed: Typed, kind: &str) -> Result<(), Diagnostic> {
        let default_namespace = self.default_namespace();
        let reference = |meta: &ObjectMeta, default_ns: bool| ObjectRef {
            kind: kind.to_string(),
            namespace: if default_ns {
                Some(
                    meta.namespace
                        .clone()
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| default_namespace.clone()),
                )
            } else {
                None
            },
            // Objects created by a controller may have only a name prefix.
            name: meta
                .name
                .clone()
                .or_else(|| meta.generate_name.clone())
                .unwrap_or_default(),
            location: doc.location.clone(),
        };
        match typed {
            Typed::Node(n) => {
                let r = reference(&n.metadata, false);
                self.nodes.push(nodes::draft(&n, r));
            }
            Typed::Pod(p) => {
                self.pod(*p, reference)?;
            }
            Typed::Namespace(n) => {
                let r = reference(&n.metadata, false);
                let labels = n.metadata.labels.clone().unwrap_or_default();
                self.namespaces.push((r.name.clone(), Some((labels, r))));
            }
            Typed::ConfigMap(cm) => {
                let r = reference(&cm.metadata, true);
                self.config_map(doc, *cm, r);
            }
            Typed::Deployment(d) => {
                let r = reference(&d.metadata, true);
                if let Some(spec) = d.spec {
                    self.controller_template(
                        r,
                        WorkloadKind::Deployment,
                        i64::from(spec.replicas.unwrap_or(1)),
                        &spec.template,
                    );
                }
            }
            Typed::StatefulSet(d) => {
                let r = reference(&d.metadata, true);
                if let Some(spec) = d.spec {
                    self.controller_template(
                        r,
                        WorkloadKind::StatefulSet,
                        i64::from(spec.replicas.unwrap_or(1)),
                        &spec.template,
                    );
                }
            }
            Typed::DaemonSet(d) => {
                let r = reference(&d.metadata, true);
                self.plugin_daemonsets
                    .extend(platforms::plugin_daemonset::read(&d, r.clone()));
                if let Some(spec) = d.spec {
                    self.controller_template(r, WorkloadKind::DaemonSet, 0, &spec.template);
                }
            }
            Typed::ReplicaSet(d) => {
                let r = reference(&d.metadata, true);
                if let Some(spec) = d.spec {
                    if let Some(t) = &spec.template {
                        self.controller_template(
                            r,
                            WorkloadKind::ReplicaSet,
                            i64::from(spec.replicas.unwrap_or(1)),
                            t,
                        );
                    }
                }
            }
            Typed::Job(j) => {
                let r = reference(&j.metadata, true);
                if let Some(spec) = j.spec {
                    self.controller_template(
                        r,
                        WorkloadKind::Job,
                        i64::from(spec.parallelism.unwrap_or(1)),
                        &spec.template,
                    );
                }
            }
            Typed::CronJob(j) => {
                let r = reference(&j.metadata, true);
                if let Some(job) = j.spec.and_then(|s| s.job_template.spec) {
                    self.controller_template(
                        r,
                        WorkloadKind::CronJob,
                        i64::from(job.parallelism.unwrap_or(1)),
                        &job.template,
                    );
                }
            }
            Typed::RuntimeClass(rc) => {
                let r = reference(&rc.metadata, false);
                self.runtime_classes.push(RuntimeClassInfo {
                    name: r.name.clone(),
                    object: r,
                    handler: rc.handler,
                });
            }
            Typed::Role(_) | Typed::ClusterRole(_) => {
                self.role(typed);
            }
            Typed::RoleBinding(b) => {
                let r = reference(&b.metadata, true);
                let ns = r.namespace.clone();
                self.bindings.push(rbac::BindingDraft {
                    subjects: rbac::subjects(b.subjects.as_ref(), ns.as_deref()),
                    object: r,
                    namespace: ns,
                    role_kind: b.role_ref.kind,
                    role: b.role_ref.name,
                });
            }
            Typed::ClusterRoleBinding(b) => {
                let r = reference(&b.metadata, false);
                self.bindings.push(rbac::BindingDraft {
                    subjects: rbac::subjects(b.subjects.as_ref(), None),
                    object: r,
                    namespace: None,
                    role_kind: b.role_ref.kind,
                    role: b.role_ref.name,
                });
            }
            Typed::ClusterPolicy(cp) => {
                let r = reference(&cp.metadata, false);
                self.policies.push((r, *cp));
            }
            Typed::GpuCluster(g) => {
                let r = reference(&g.metadata, false);
                self.gpu_clusters.push((r, *g));
            }
            Typed::ResourceClaim(c) => {
                let r = reference(&c.metadata, true);
                self.claims.push(dra::claim_draft(
                    r.clone(),
                    r.namespace.clone().unwrap_or_default(),
                    r.name.clone(),
                    false,
                    &c.spec,
                    c.status.as_ref(),
                ));
                if let Some(d) = self.claims.last_mut() {
                    d.extended = dra::is_extended_claim(&c.metadata);
                }
            }
            Typed::ResourceClaimTemplate(c) => {
                let r = reference(&c.metadata, true);
                self.claims.push(dra::claim_draft(
                    r.clone(),
                    r.namespace.clone().unwrap_or_default(),
                    r.name.clone(),
                    true,
                    &c.spec.spec,
                    None,
                ));
            }
            Typed::DeviceClass(c) => {
                self.classes.push(dra::class_draft(&c));
            }
        }
        Ok(())
    }

    /// A ConfigMap, with the file line of each data key's text (configurations embedded in it are
    /// read later, and their errors point into the file).
    fn config_map(&mut self, doc: &Doc<'_, '_>, cm: core::ConfigMap, r: ObjectRef) {
        let mut key_lines = BTreeMap::new();
        if let Some(data) = doc
            .node
            .and_then(|n| n.get("data"))
            .and_then(|d| d.as_map())
        {
            for (k, v) in data {
                let (Some(key), Value::Scalar(s)) = (k.as_scalar_text(), &v.value) else {
                    continue;
                };
                // The node's position is its first non-empty line; a literal block keeps
                // the lines of the file, so text line n is file line offset + n.
                let leading =
                    u32::try_from(s.text.chars().take_while(|c| *c == '\n').count()).unwrap_or(0);
                let offset = match s.style {
                    ScalarStyle::Literal | ScalarStyle::Plain => {
                        v.pos.line.saturating_sub(1).saturating_sub(leading)
                    }
                    // Folded and quoted text does not keep the file's lines: point at the key.
                    _ => 0,
                };
                key_lines.insert(key.to_string(), offset);
            }
        }
        let ns = r.namespace.clone().unwrap_or_default();
        let name = r.name.clone();
        self.config_maps.push((
            ns,
            name,
            ConfigMapDraft {
                object: r,
                data: cm.data.unwrap_or_default(),
                key_lines,
            },
        ));
    }

    /// The pod template of a built-in controller, with the replicas it asks for.
    fn controller_template(
        &mut self,
        r: ObjectRef,
        kind: WorkloadKind,
        replicas: i64,
        t: &core::PodTemplateSpec,
    ) {
        self.template(r, kind, None, replicas, t, None, false);
    }

    /// A Role or ClusterRole: its rules, and a ClusterRole's aggregation selectors.
    fn role(&mut self, typed: Typed) {
        let cluster = matches!(typed, Typed::ClusterRole(_));
        let (metadata, rules, aggregation) = match typed {
            Typed::Role(role) => (role.metadata, rbac::rules(role.rules.as_ref()), Vec::new()),
            Typed::ClusterRole(role) => {
                let agg = role
                    .aggregation_rule
                    .and_then(|a| a.cluster_role_selectors)
                    .unwrap_or_default();
                (role.metadata, rbac::rules(role.rules.as_ref()), agg)
            }
            _ => return,
        };
        self.roles.push(rbac::RoleDraft {
            namespace: (!cluster).then(|| {
                metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into())
            }),
            name: metadata.name.clone().unwrap_or_default(),
            labels: metadata.labels.clone().unwrap_or_default(),
            rules,
            aggregation,
        });
    }

    fn pod(
        &mut self,
        mut p: kinds::PodObject,
        reference: impl Fn(&ObjectMeta, bool) -> ObjectRef,
    ) -> Result<(), Diagnostic> {
        let r = reference(&p.metadata, true);
        let Some(spec) = p.spec else {
            return Ok(());
        };
        let labels = p.metadata.labels.take().unwrap_or_default();
        let annotations = p.metadata.annotations.take().unwrap_or_default();
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        let extended = p
            .status
            .as_ref()
            .and_then(|s| s.extended_resource_claim_status.as_ref())
            .map(dra::ExtendedStatus::of);
        // A pod that has finished holds no device and will not run again; its owner (a Job, a
        // CronJob) is what may run next.
        if matches!(phase, Some("Succeeded" | "Failed")) {
            return Ok(());
        }
        let node_name = spec.node_name.clone().filter(|n| !n.is_empty());
        for c in spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
        {
            if let Some(image) = &c.image {
                match cluster::operand(image) {
                    Some(cluster::Operand::Operator(v)) => {
                        self.operator_pods
                            .push(r.namespace.clone().unwrap_or_default());
                        self.operands.push((None, cluster::Operand::Operator(v)));
                    }
                    Some(op) => self.operands.push((node_name.clone(), op)),
                    None => {}
                }
            }
        }
        let owner = p
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true))
            .map(|o| format!("{}/{}", o.kind, o.name));
        let mut draft = self.draft(r, WorkloadKind::Pod, None, 1, &spec, labels, annotations)?;
        draft.workload.owner = owner;
        draft.node_name = node_name;
        draft.extended = extended;
        self.workloads.push(Box::new(draft));
        Ok(())
    }

    /// A pod template of a workload: `replicas` pods of `kind`; `class` when the controller says
    /// what its pods do; `unknown_constraints` when where it may run is not known (every taint is
    /// then taken as tolerated).
    #[allow(clippy::too_many_arguments)]
    fn template(
        &mut self,
        r: ObjectRef,
        kind: WorkloadKind,
        role: Option<String>,
        replicas: i64,
        t: &core::PodTemplateSpec,
        class: Option<WorkloadClass>,
        unknown_constraints: bool,
    ) {
        let Some(spec) = &t.spec else { return };
        let meta = t.metadata.as_ref();
        let labels = meta.and_then(|m| m.labels.clone()).unwrap_or_default();
        let annotations = meta.and_then(|m| m.annotations.clone()).unwrap_or_default();
        if spec.containers.iter().any(|c| {
            c.image
                .as_deref()
                .is_some_and(|i| matches!(cluster::operand(i), Some(cluster::Operand::Operator(_))))
        }) {
            self.operator_pods
                .push(r.namespace.clone().unwrap_or_default());
        }
        let replicas = u32::try_from(replicas.max(0)).unwrap_or(u32::MAX);
        let mut draft = match self.draft(r, kind, role, replicas, spec, labels, annotations) {
            Ok(d) => d,
            Err(e) => {
                self.report(e);
                return;
            }
        };
        if let Some(c) = class {
            draft.workload.class = c;
        }
        if kind == WorkloadKind::DaemonSet {
            draft
                .constraints
                .add_daemonset_tolerations(spec.host_network.unwrap_or(false));
        }
        if unknown_constraints {
            draft.constraints.tolerate_everything();
        }
        // `nodeName` binds every pod of the template to that node without the scheduler: they
        // are on it as soon as they exist.
        if replicas > 0 || kind == WorkloadKind::DaemonSet {
            draft.node_name = spec.node_name.clone().filter(|n| !n.is_empty());
        }
        self.workloads.push(Box::new(draft));
    }

    #[allow(clippy::too_many_arguments)]
    fn draft(
        &self,
        object: ObjectRef,
        kind: WorkloadKind,
        role: Option<String>,
        replicas: u32,
        spec: &core::PodSpec,
        labels: BTreeMap<String, String>,
        annotations: BTreeMap<String, String>,
    ) -> Result<WorkloadDraft, Diagnostic> {
        let parts = workloads::pod_parts(spec, &labels, &annotations);
        if !parts.invalid.is_empty() {
            return Err(Diagnostic::error(
                object.location.clone(),
                format!(
                    "{} {}: resource quantities that are not quantities ({}); the API server would reject it",
                    object.kind,
                    object.name,
                    parts.invalid.join(", ")
                ),
            ));
        }
        if !parts.refused_paths.is_empty() {
            return Err(Diagnostic::error(
                object.location.clone(),
                format!(
                    "{} {}: {}; what it mounts from the host cannot be judged",
                    object.kind,
                    object.name,
                    parts.refused_paths.join("; ")
                ),
            ));
        }
        let class = workloads::classify(kind, &parts);
        let namespace = object
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        Ok(WorkloadDraft {
            workload: Workload {
                object,
                namespace,
                kind,
                role,
                replicas,
                class,
                labels,
                annotations,
                scheduler_name: parts.scheduler_name,
                service_account: parts.service_account,
                gpu: parts.gpu,
                containers: parts.containers,
                pod_security: parts.pod_security,
                inference: parts.inference,
                peak_memory_mib: parts.peak_memory_mib,
                placement: Default::default(),
                owner: None,
            },
            node_name: None,
            constraints: parts.constraints,
            claims: parts.claims,
            allocated: parts.allocated,
            extended: None,
            env_refs: parts.env_refs,
        })
    }

    /// TrainJobs, with the runtimes they reference: the runtime's jobs with the TrainJob's trainer
    /// settings and patches applied; without the runtime, the trainer nodes alone, permitted
    /// wherever what they request is offered.
    fn train_jobs(&mut self) {
        let jobs = std::mem::take(&mut self.train_jobs);
        for job in jobs {
            let ns = job.object.namespace.clone();
            let runtime = self.runtimes.iter().find(|r| {
                r.kind == job.runtime_kind
                    && r.name == job.runtime_name
                    && (r.kind == "ClusterTrainingRuntime" || r.namespace == ns)
            });
            if runtime.is_none() {
                self.diagnostics.push(Diagnostic::warning(
                    job.object.location.clone(),
                    format!(
                        "{}: its {} {} is not in the input; its trainer nodes are read from the TrainJob alone and taken to tolerate every taint (the runtime's scheduling constraints are unknown)",
                        job.object, job.runtime_kind, job.runtime_name
                    ),
                ));
            }
            let found = discover::resolve_train_job(&job, runtime);
            for f in found {
                self.template(
                    job.object.clone(),
                    WorkloadKind::Custom,
                    f.role,
                    f.replicas,
                    &f.template,
                    Some(WorkloadClass::Training),
                    f.unknown_constraints,
                );
            }
        }
    }

    /// KServe predictors written as `model`, with the serving runtime KServe gives each; without
    /// it, the predictor as written (what its server runs is then unknown, and said so).
    fn predictors(&mut self) {
        let predictors = std::mem::take(&mut self.predictors);
        for p in predictors {
            let found = match kserve::runtime_for(&p, &self.serving_runtimes)
                .and_then(|runtime| kserve::apply(runtime, &p.found))
            {
                Ok(found) => found,
                Err(why) => {
                    self.diagnostics.push(Diagnostic::warning(
                        p.object.location.clone(),
                        format!(
                            "{}: {why}; the image of its predictor, and so the server it runs, is unknown",
                            p.object
                        ),
                    ));
                    p.found
                }
            };
            self.template(
                p.object,
                p.kind,
                found.role,
                found.replicas,
                &found.template,
                p.class,
                found.unknown_constraints,
            );
        }
    }

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
                self.diagnostics.push(Diagnostic::error(
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
                    self.diagnostics.push(Diagnostic::error(
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

    fn finish(mut self) -> Ingested {
        self.end_document(&mut Vec::new());
        self.train_jobs();
        self.predictors();
        self.unjudged_devices();
        let mut diagnostics = std::mem::take(&mut self.diagnostics);
        let mut unresolved: Vec<Unresolved> = Vec::new();

        let drafts = unique_nodes(std::mem::take(&mut self.nodes), &mut diagnostics);

        // The ClusterPolicy the operator uses (the first by name when there are several).
        let mut policies = std::mem::take(&mut self.policies);
        policies.sort_by(|a, b| a.0.cmp(&b.0));
        if policies.len() > 1 {
            diagnostics.push(Diagnostic::warning(
                policies[1].0.location.clone(),
                format!(
                    "more than one ClusterPolicy; the GPU Operator uses one, taken here as {}",
                    policies[0].0.name
                ),
            ));
        }
        let mut config_maps: BTreeMap<(String, String), ConfigMapDraft> = BTreeMap::new();
        for (ns, name, cm) in std::mem::take(&mut self.config_maps) {
            match config_maps.entry((ns, name)) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(cm);
                }
                std::collections::btree_map::Entry::Occupied(o) if o.get().data != cm.data => {
                    diagnostics.push(duplicates::conflict(
                        &format!("ConfigMap {}/{}", o.key().0, o.key().1),
                        &cm.object.location,
                        &o.get().object.location,
                        &["data".to_string()],
                    ))
                }
                std::collections::btree_map::Entry::Occupied(_) => {}
            }
        }
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
        let mut runtime_classes = std::mem::take(&mut self.runtime_classes);
        runtime_classes.sort_by(|a, b| a.name.cmp(&b.name).then(a.object.cmp(&b.object)));
        runtime_classes.dedup_by(|later, first| {
            if later.name != first.name {
                return false;
            }
            if later.handler != first.handler {
                diagnostics.push(duplicates::conflict(
                    &format!("RuntimeClass {}", later.name),
                    &later.object.location,
                    &first.object.location,
                    &["handler".to_string()],
                ));
            }
            true
        });
        unresolved.extend(resolve_references(
            &mut wdrafts,
            &config_maps,
            &runtime_classes,
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
        // The same object read twice counts once.
        let mut acceptances = std::mem::take(&mut self.acceptances);
        acceptances.sort_by(|a, b| {
            (
                &a.subject,
                &a.object.kind,
                &a.object.namespace,
                &a.object.name,
                &a.rule,
            )
                .cmp(&(
                    &b.subject,
                    &b.object.kind,
                    &b.object.namespace,
                    &b.object.name,
                    &b.rule,
                ))
                .then_with(|| a.cmp(b))
        });
        acceptances.dedup_by(|a, b| {
            let same = (
                &a.subject,
                &a.object.kind,
                &a.object.namespace,
                &a.object.name,
                &a.rule,
            ) == (
                &b.subject,
                &b.object.kind,
                &b.object.namespace,
                &b.object.name,
                &b.rule,
            );
            if same && (&a.reason, a.until) != (&b.reason, b.until) {
                diagnostics.push(duplicates::conflict(
                    &format!("{} (annotation {})", a.object, a.annotation),
                    &a.location,
                    &b.location,
                    &["its reason or end date".to_string()],
                ));
            }
            same
        });
        for (_, (first, n)) in std::mem::take(&mut self.unnamespaced) {
            diagnostics.push(Diagnostic::warning(
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
}

impl Collector {
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
                r.location.clone(),
                format!(
                    "more than one GPUCluster; the GPU Operator uses one, taken here as {}",
                    found[0].0.name
                ),
            ));
        }
        let (r, g) = found.into_iter().next()?;
        if let Some(p) = policy {
            diagnostics.push(Diagnostic::warning(
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

/// Why a mapping without `apiVersion` or `kind` is not an object, with what it looks like when it
/// is a file of another tool (so a user knows what to give instead).
fn not_an_object(root: Option<At<'_, '_>>) -> String {
    let has = |k: &str| root.and_then(|r| r.get(k)).is_some();
    let missing = match (has("apiVersion"), has("kind")) {
        (true, false) => "kind is missing",
        (false, true) => "apiVersion is missing",
        _ => "apiVersion and kind are missing",
    };
    // Shapes of the files that sit next to manifests: mig-parted's config (`mig-configs`,
    // NVIDIA/mig-parted `pkg/types/v1`), the device plugin's config (`version` with `flags`,
    // `sharing` or `resources`, NVIDIA/k8s-device-plugin `api/config/v1`), a Helm chart's
    // Chart.yaml (`apiVersion`, `name`, `version`), a kustomization (`resources` with
    // `namespace`, `patches`, `images` or `namePrefix`).
    let looks = if has("mig-configs") {
        Some("a mig-parted config: gpu-trust reads it inside the ConfigMap the GPU Operator's MIG manager uses")
    } else if has("version") && (has("flags") || has("sharing") || has("resources")) {
        Some("an NVIDIA device plugin config: gpu-trust reads it inside the ConfigMap the device plugin uses")
    } else if has("apiVersion") && has("name") && has("version") && !has("kind") {
        Some("a Helm chart's Chart.yaml: audit what `helm template` renders")
    } else if has("resources")
        && (has("namespace") || has("patches") || has("images") || has("namePrefix"))
    {
        Some("a kustomization, which is not rendered: audit what `kubectl kustomize DIR` renders")
    } else {
        None
    };
    match looks {
        Some(l) => format!("not a Kubernetes object: {missing}; this looks like {l}"),
        None => format!("not a Kubernetes object: {missing}"),
    }
}

/// What makes a document that does not read a fragment of documentation rather than a broken
/// manifest: a line `...` standing for text left out, or a shell command in front of its output.
/// `line` is the line of the error, 1-based, in `lines`, the text's lines.
fn fragment_hint(lines: &[&str], line: u32) -> Option<String> {
    let line = usize::try_from(line).ok()?.checked_sub(1)?;
    let at = lines.get(line)?.trim();
    if at == "..." || at == "\u{2026}" {
        return Some(format!(
            "line {} ({at:?}) stands for text left out, as documentation writes it: this is a fragment of a document, not a manifest",
            line + 1
        ));
    }
    // The document's lines up to the error (a document starts after a `---`).
    let start = lines[..=line]
        .iter()
        .rposition(|l| l.starts_with("---"))
        .map_or(0, |i| i + 1);
    let (i, command) = lines[start..=line].iter().enumerate().find(|(_, l)| {
        let l = l.trim_start();
        l.starts_with("$ ") || l.starts_with("kubectl ") || l.starts_with("helm ")
    })?;
    Some(format!(
        "line {} is a shell command ({:?}), as documentation shows before its output: this is a fragment of a document, not a manifest",
        start + i + 1,
        command.trim()
    ))
}

/// Adds [`fragment_hint`] to errors of documents that could not be read.
fn hint_fragments(diagnostics: &mut [Diagnostic], inputs: &[Input]) {
    let mut split: Option<(usize, Vec<&str>)> = None;
    for d in diagnostics.iter_mut().filter(|d| d.is_error()) {
        if !(d.message.starts_with("invalid YAML")
            || d.message.starts_with("not a Kubernetes object"))
        {
            continue;
        }
        let Some(at) = inputs.iter().position(|i| i.name == d.location.file) else {
            continue;
        };
        // The text's lines, split once per input (not once per error: a file of many documents
        // that are not objects has an error for each).
        if split.as_ref().is_none_or(|(i, _)| *i != at) {
            split = Some((at, inputs[at].text.lines().collect()));
        }
        let Some((_, lines)) = &split else { continue };
        if let Some(h) = fragment_hint(lines, d.location.line) {
            d.message = format!("{}; {h}", d.message);
        }
    }
}

/// The operator's namespace: where its own pods run; else the namespace holding the ConfigMap the
/// ClusterPolicy names (when exactly one does); else the default.
/// Nodes by name. A node read twice with the same labels, taints and status counts once; two readings
/// that differ are an error at the later one (`duplicates.rs`), which is left out.
fn unique_nodes(mut drafts: Vec<NodeDraft>, diagnostics: &mut Vec<Diagnostic>) -> Vec<NodeDraft> {
    drafts.sort_by(|a, b| {
        a.name
            .cmp(&b.name)
            .then(a.object.location.cmp(&b.object.location))
    });
    let mut kept: Vec<NodeDraft> = Vec::with_capacity(drafts.len());
    for d in drafts {
        match kept.last() {
            Some(prev) if prev.name == d.name => {
                let mut differ = Vec::new();
                for (what, same) in [
                    ("labels", prev.labels == d.labels),
                    ("taints", prev.taints == d.taints),
                    ("annotations", prev.hami_register == d.hami_register),
                    ("status", prev.extended == d.extended),
                ] {
                    if !same {
                        differ.push(what.to_string());
                    }
                }
                if !differ.is_empty() {
                    diagnostics.push(duplicates::conflict(
                        &format!("Node {}", d.name),
                        &d.object.location,
                        &prev.object.location,
                        &differ,
                    ));
                }
            }
            _ => kept.push(d),
        }
    }
    kept
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

/// Workloads sorted by namespace, kind and name. The same object read twice (a dump and the manifests
/// it came from, an item repeated in a list) counts once when both readings say the same to the
/// audit; two that differ are an error at the later one (`duplicates.rs`), which is left out.
#[allow(clippy::vec_box)] // See `Collector::workloads`.
fn unique_workloads(
    mut wdrafts: Vec<Box<WorkloadDraft>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Box<WorkloadDraft>> {
    fn key(w: &WorkloadDraft) -> (&str, WorkloadKind, &str, &str, Option<&str>) {
        let w = &w.workload;
        (
            w.namespace.as_str(),
            w.kind,
            w.object.kind.as_str(),
            w.object.name.as_str(),
            w.role.as_deref(),
        )
    }
    wdrafts.sort_by(|a, b| {
        key(a)
            .cmp(&key(b))
            .then_with(|| a.workload.object.location.cmp(&b.workload.object.location))
    });
    let mut unique: Vec<Box<WorkloadDraft>> = Vec::with_capacity(wdrafts.len());
    for d in wdrafts {
        match unique.last() {
            Some(prev) if key(prev) == key(&d) => {
                let differ = workload_differences(prev, &d);
                if !differ.is_empty() {
                    diagnostics.push(duplicates::conflict(
                        &format!(
                            "{} {}/{}",
                            d.workload.object.kind, d.workload.namespace, d.workload.object.name
                        ),
                        &d.workload.object.location,
                        &prev.workload.object.location,
                        &differ,
                    ));
                }
            }
            _ => unique.push(d),
        }
    }
    unique
}

/// What two readings of one workload differ in, as the audit reads them.
fn workload_differences(a: &WorkloadDraft, b: &WorkloadDraft) -> Vec<String> {
    let mut out = duplicates::differing_fields(&a.workload, &b.workload);
    for (what, same) in [
        ("nodeName", a.node_name == b.node_name),
        ("scheduling constraints", a.constraints == b.constraints),
        ("resourceClaims", a.claims == b.claims),
        ("allocated devices", a.allocated == b.allocated),
        ("environment sources", a.env_refs == b.env_refs),
        (
            "extended resource claims",
            format!("{:?}", a.extended) == format!("{:?}", b.extended),
        ),
    ] {
        if !same {
            out.push(what.to_string());
        }
    }
    out
}

/// What workloads take from other objects of the input: their containers' environment from
/// ConfigMaps (`env.rs`), and the handler of their runtime class; what the input cannot tell is
/// returned as unresolved.
#[allow(clippy::vec_box)] // See `Collector::workloads`.
fn resolve_references(
    wdrafts: &mut [Box<WorkloadDraft>],
    config_maps: &BTreeMap<(String, String), ConfigMapDraft>,
    runtime_classes: &[RuntimeClassInfo],
) -> Vec<Unresolved> {
    let mut unresolved = Vec::new();
    for d in wdrafts.iter_mut() {
        let w = &mut d.workload;
        for (i, refs) in &d.env_refs {
            if let Some(c) = w.containers.get_mut(*i) {
                unresolved.extend(env::resolve(c, refs, &w.namespace, &w.object, config_maps));
            }
        }
        if let Some(name) = w.pod_security.runtime_class_name.clone() {
            match workloads::runtime_handler(&name, runtime_classes) {
                Some(h) => w.pod_security.runtime_handler = Some(h),
                None => unresolved.push(Unresolved {
                    object: w.object.clone(),
                    node: None,
                    what: gpu_trust_model::fleet::UnresolvedKind::RuntimeClass,
                    message: format!(
                        "{} uses runtimeClassName {name}, whose RuntimeClass is not in the input: whether it runs the NVIDIA container runtime is not known",
                        w.object
                    ),
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
    platforms::gpu_operator::default_namespace(nodes).to_string()
}
