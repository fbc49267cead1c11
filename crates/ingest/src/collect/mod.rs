//! The Collector: every document of the input dispatched to its reader, with what a bad document
//! added rolled back so that it never hides the rest.
//!
//! Its rooms: this file (a document's dispatch by kind, with the rollback, and the objects of no
//! reader), `known.rs` (the built-in kinds), `template.rs` (a pod spec or template into a workload
//! draft), `controlled.rs` (the kinds of the controllers table, manifests embedded in them, and any
//! other kind searched for pod templates) and `finish.rs` (the fleet assembled once every document is
//! read).

mod controlled;
mod finish;
mod known;
mod template;

use crate::controllers;
use crate::discover::{self, At, RuntimeDraft, TrainJobDraft};
use crate::kinds::{self, Dispatch, Dispatched};
use crate::nodes::{ConfigMapDraft, NodeDraft};
use crate::workload_placement::WorkloadDraft;
use crate::{annotations, api, cluster, crd, dra, kserve, platforms, rbac, Options};
use gpu_trust_model::fleet::RuntimeClassInfo;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, ObjectRef};
use gpu_trust_source::{Entry, Limits, Object};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use std::collections::BTreeMap;

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
                    Code::InvalidValue,
                    Location::new(self.location.file.clone(), pos.line, pos.column),
                    e.message,
                )
            });
        }
        if let Some(v) = self.json {
            use serde::de::DeserializeSeed;
            return seed.deserialize(v).map_err(|e| {
                Diagnostic::error(Code::InvalidValue, self.location.clone(), e.to_string())
            });
        }
        match self.object {
            Some(o) => o.deserialize_seed(seed),
            None => Ok(Dispatched::NotAnObject),
        }
    }
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
    owners: usize,
    unreadable: usize,
}

/// An owner reference: the owned object (namespace, kind, name) and its owner's kind and name.
type Owned = ((String, String, String), (String, String));

#[derive(Default)]
pub(crate) struct Collector {
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
    pub(crate) diagnostics: Vec<Diagnostic>,
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
    /// The `ownerReferences` of the workload objects read.
    owners: Vec<Owned>,
    /// Objects of a kind with no reader that name a GPU resource outside any pod template, with the
    /// error they are unless the workloads they own are in the input (`controlled.rs`).
    unreadable: Vec<(ObjectRef, Diagnostic)>,
}

/// Where the collector stood when an input began: what reading it added can be dropped.
pub(crate) struct InputMark {
    checkpoint: Checkpoint,
    diagnostics: usize,
}

impl Collector {
    pub(crate) fn new(options: &Options) -> Self {
        Collector {
            limits: options.limits,
            unread: options.unread.clone(),
            ..Collector::default()
        }
    }

    pub(crate) fn mark_input(&self) -> InputMark {
        InputMark {
            checkpoint: self.mark(),
            diagnostics: self.diagnostics.len(),
        }
    }

    /// Drops everything read since `mark` (a large file the pieces reader gave up on, to be read
    /// whole instead).
    pub(crate) fn drop_since(&mut self, mark: InputMark) {
        self.checkpoint = mark.checkpoint;
        self.rollback();
        self.diagnostics.truncate(mark.diagnostics);
        self.current = None;
    }

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
            owners: self.owners.len(),
            unreadable: self.unreadable.len(),
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
        self.owners.truncate(c.owners);
        self.unreadable.truncate(c.unreadable);
    }

    pub(crate) fn end_document(&mut self, pending: &mut Vec<Object<'_>>) {
        for o in pending.drain(..) {
            self.diagnostics.push(Diagnostic::error(
                Code::NotAnObject,
                o.location(),
                "list item without apiVersion and kind, in a list that does not name its item kind",
            ));
        }
        self.current = None;
    }

    pub(crate) fn accept<'a>(
        &mut self,
        pending: &mut Vec<Object<'a>>,
        input: usize,
        entry: Entry<'a>,
    ) {
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
                d = Diagnostic::warning(Code::UnauditedManifest,
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
                    let r = self.annotated_ref(meta, &kind, doc);
                    let refs = meta.owner_references.iter().flatten();
                    self.owned(&r, refs.map(|o| (o.kind.clone(), o.name.clone())));
                    (subject, r, entries)
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
                self.report(Diagnostic::error(
                    Code::NotAnObject,
                    doc.location.clone(),
                    message,
                ))
            }
            Dispatched::NotAnObject => self.report(Diagnostic::error(
                Code::NotAnObject,
                doc.location.clone(),
                "not a Kubernetes object: expected a mapping with string apiVersion and kind",
            )),
            Dispatched::BadList => self.report(Diagnostic::error(
                Code::NotAnObject,
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
            return Err(Diagnostic::error(
                Code::UnrenderedInput,
                field_location("kind"),
                message,
            ));
        }
        if let Some(r) = kinds::refusal(api, kind) {
            let loc = field_location(r.field);
            return Err(if r.error {
                Diagnostic::error(Code::RefusedKind, loc, r.message)
            } else {
                Diagnostic::warning(Code::UnreadApiVersion, loc, r.message)
            });
        }
        if let Some(c) = controllers::misspelled(group, kind) {
            return Err(Diagnostic::error(Code::RefusedKind,
                field_location("kind"),
                format!(
                    "kind {kind:?} does not exist in {group} (kinds are case-sensitive) and the API server would refuse this object; did you mean {:?}?",
                    c.kind
                ),
            ));
        }
        let reference = self.reference_at(root, kind, &doc.location);
        let entries = annotations::tree_entries(root, &doc.location);
        let refs = root
            .get("metadata")
            .and_then(|m| m.get("ownerReferences"))
            .and_then(At::items)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|o| Some((o.get("kind")?.text()?, o.get("name")?.text()?)));
        let refs: Vec<(String, String)> = refs.collect();
        self.owned(&reference, refs);
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

    /// Notes the owners an object's `ownerReferences` name (namespaced: an owner is in its namespace).
    fn owned(&mut self, object: &ObjectRef, owners: impl IntoIterator<Item = (String, String)>) {
        let key = (
            object.namespace.clone().unwrap_or_default(),
            object.kind.clone(),
            object.name.clone(),
        );
        self.owners
            .extend(owners.into_iter().map(|owner| (key.clone(), owner)));
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
