//! Pod templates in objects ingest has no typed reader for: read by the controllers table
//! ([`crate::controllers`]), or found by their shape in any other kind.
//!
//! Objects are walked as located YAML trees (errors name the line and column of the value) or as
//! JSON values (errors name the object and the path). Generic discovery looks for
//! `PodTemplateSpec` shapes (`{metadata?, spec: {containers: [...]}}`) and `PodSpec` shapes
//! (`{containers: [...]}`) anywhere under the object but its `metadata` and `status`, bounded in
//! depth, in nodes visited and in templates kept.

use crate::controllers::{Controller, Count, Group, Reads, Role, Shape};
use gpu_trust_model::{Diagnostic, Location, ObjectRef};
use gpu_trust_source::tree::{Node, Pos, ScalarStyle, Value};
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One value of an object, as a located YAML node or a JSON value.
#[derive(Clone, Copy)]
pub(crate) enum At<'t, 'a> {
    Yaml(&'t Node<'a>),
    Json(&'t serde_json::Value),
}

impl<'t, 'a> At<'t, 'a> {
    /// The value of `key` in a mapping; `None` when absent or null.
    pub(crate) fn get(self, key: &str) -> Option<At<'t, 'a>> {
        let v = match self {
            At::Yaml(n) => At::Yaml(n.get(key)?),
            At::Json(v) => At::Json(v.get(key)?),
        };
        (!v.is_null()).then_some(v)
    }

    /// The value at a dotted path (no wildcards).
    pub(crate) fn path(self, path: &str) -> Option<At<'t, 'a>> {
        if path.is_empty() {
            return Some(self);
        }
        path.split('.').try_fold(self, |at, key| at.get(key))
    }

    fn is_null(self) -> bool {
        match self {
            At::Yaml(n) => n.is_null(),
            At::Json(v) => v.is_null(),
        }
    }

    /// Items of a sequence.
    pub(crate) fn items(self) -> Option<Vec<At<'t, 'a>>> {
        match self {
            At::Yaml(n) => n.as_seq().map(|s| s.iter().map(At::Yaml).collect()),
            At::Json(v) => v.as_array().map(|s| s.iter().map(At::Json).collect()),
        }
    }

    /// Entries of a mapping with scalar keys.
    pub(crate) fn entries(self) -> Option<Vec<(String, At<'t, 'a>)>> {
        match self {
            At::Yaml(n) => n.as_map().map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.as_scalar_text()?.to_string(), At::Yaml(v))))
                    .collect()
            }),
            At::Json(v) => v
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), At::Json(v))).collect()),
        }
    }

    /// The text of a scalar (strings, and numbers or booleans written as such).
    pub(crate) fn text(self) -> Option<String> {
        match self {
            At::Yaml(n) => n.as_str().map(str::to_string),
            At::Json(serde_json::Value::String(s)) => Some(s.clone()),
            At::Json(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => {
                Some(v.to_string())
            }
            At::Json(_) => None,
        }
    }

    pub(crate) fn pos(self) -> Option<Pos> {
        match self {
            At::Yaml(n) => Some(n.pos),
            At::Json(_) => None,
        }
    }

    /// Reads the value as `T`; an error names where (`path` is said when the position is
    /// unknown, as for JSON input).
    pub(crate) fn typed<T: DeserializeOwned>(
        self,
        object: &Location,
        path: &str,
    ) -> Result<T, Diagnostic> {
        match self {
            At::Yaml(n) => gpu_trust_source::de::from_node::<T>(n).map_err(|e| {
                let pos = if e.pos.line == 0 { n.pos } else { e.pos };
                Diagnostic::error(
                    Location::new(object.file.clone(), pos.line, pos.column),
                    e.message,
                )
            }),
            At::Json(v) => T::deserialize(v)
                .map_err(|e| Diagnostic::error(object.clone(), format!("{path}: {e}"))),
        }
    }

    /// Where the value is: its own position, or the object's.
    pub(crate) fn location(self, object: &Location) -> Location {
        match self.pos() {
            Some(p) => Location::new(object.file.clone(), p.line, p.column),
            None => object.clone(),
        }
    }
}

/// A pod template found in an object.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub role: Option<String>,
    pub replicas: i64,
    pub template: core::PodTemplateSpec,
    /// Where the template is in the object (`spec.workerGroupSpecs[0].template`).
    pub path: String,
    /// The template's scheduling constraints are unknown (a TrainJob whose runtime is missing):
    /// treat every taint as tolerated.
    pub unknown_constraints: bool,
}

/// An object embedded as text (`resource.manifest` of an Argo template), with the file line its
/// text starts on.
#[derive(Debug, Clone)]
pub(crate) struct Embedded {
    pub text: String,
    pub first_line: u32,
}

/// What one controller object holds.
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub found: Vec<Found>,
    pub embedded: Vec<Embedded>,
    pub warnings: Vec<Diagnostic>,
}

/// Reads an object of a table row whose pods are in groups.
pub(crate) fn read_groups(
    c: &Controller,
    root: At<'_, '_>,
    object: &Location,
) -> Result<Read, Diagnostic> {
    let mut read = Read::default();
    let Reads::Groups(groups) = &c.reads else {
        return Ok(read);
    };
    for g in *groups {
        for item in select(root, g.at) {
            read_item(g, root, &item, object, &mut read)?;
        }
    }
    Ok(read)
}

/// One item selected by a group's `at`: the key or index the wildcard stepped into.
struct Item<'t, 'a> {
    at: At<'t, 'a>,
    path: String,
    key: Option<String>,
    index: Option<usize>,
}

/// The values at `path`, where one `*` steps into every item of a sequence or value of a mapping.
fn select<'t, 'a>(root: At<'t, 'a>, path: &str) -> Vec<Item<'t, 'a>> {
    let (before, after) = match path.split_once(".*") {
        Some((b, a)) => (b, Some(a.strip_prefix('.').unwrap_or(a))),
        None => (path, None),
    };
    let Some(base) = root.path(before) else {
        return Vec::new();
    };
    let Some(after) = after else {
        return vec![Item {
            at: base,
            path: before.to_string(),
            key: None,
            index: None,
        }];
    };
    let mut out = Vec::new();
    if let Some(items) = base.items() {
        for (i, it) in items.into_iter().enumerate() {
            if let Some(at) = it.path(after) {
                out.push(Item {
                    at,
                    path: join(&format!("{before}[{i}]"), after),
                    key: None,
                    index: Some(i),
                });
            }
        }
    } else if let Some(entries) = base.entries() {
        for (k, it) in entries {
            if let Some(at) = it.path(after) {
                out.push(Item {
                    at,
                    path: join(&format!("{before}.{k}"), after),
                    key: Some(k),
                    index: None,
                });
            }
        }
    }
    out
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}.{b}"),
    }
}

fn read_item(
    g: &Group,
    root: At<'_, '_>,
    item: &Item<'_, '_>,
    object: &Location,
    read: &mut Read,
) -> Result<(), Diagnostic> {
    let role = match g.role {
        Role::None => None,
        Role::Fixed(r) => Some(r.to_string()),
        Role::Key => item.key.clone(),
        Role::Field(f) => Some(match item.at.get(f).and_then(At::text) {
            Some(v) => v,
            None => {
                let last = g.at.trim_end_matches(".*");
                let last = last.rsplit('.').next().unwrap_or(last);
                format!("{last}[{}]", item.index.unwrap_or(0))
            }
        }),
    };
    let mut replicas: i64 = 1;
    for factor in g.count {
        replicas = replicas.saturating_mul(count(factor, root, item, object)?);
    }
    let template_at = match item.at.path(g.template) {
        Some(t) => t,
        // An optional template (LeaderWorkerSet's leaderTemplate, KubeRay's submitter).
        None => return Ok(()),
    };
    let path = join(&item.path, g.template);
    let mut templates: Vec<(core::PodTemplateSpec, i64)> = Vec::new();
    match g.shape {
        Shape::PodTemplate => {
            templates.push((template_at.typed(object, &path)?, 1));
        }
        Shape::JobTemplate => {
            let job: batch::JobTemplateSpec = template_at.typed(object, &path)?;
            if let Some(spec) = job.spec {
                templates.push((spec.template, i64::from(spec.parallelism.unwrap_or(1))));
            }
        }
        Shape::InlinePodSpec { containers } => {
            let mut spec: core::PodSpec = template_at.typed(object, &path)?;
            for field in containers {
                if let Some(at) = template_at.get(field) {
                    let mut container: core::Container = at.typed(object, &join(&path, field))?;
                    if container.name.is_empty() {
                        // KServe names the serving container it builds from these fields
                        // `kserve-container` (`constants.InferenceServiceContainerName`).
                        container.name = "kserve-container".to_string();
                    }
                    spec.containers.push(container);
                }
            }
            let meta = ObjectMeta {
                labels: opt_map(template_at.get("labels"), object, &join(&path, "labels"))?,
                annotations: opt_map(
                    template_at.get("annotations"),
                    object,
                    &join(&path, "annotations"),
                )?,
                ..ObjectMeta::default()
            };
            if !spec.containers.is_empty() {
                templates.push((
                    core::PodTemplateSpec {
                        metadata: Some(meta),
                        spec: Some(spec),
                    },
                    1,
                ));
            }
        }
        Shape::Argo { inherit } => {
            let workflow = root.path(inherit.trim_start_matches('/'));
            // An Argo template is one pod, named by the template.
            return argo(item, template_at, workflow, object, &path, read);
        }
    }
    let scheduler = match g.scheduler {
        Some(p) => root
            .path(p.trim_start_matches('/'))
            .map(|s| s.typed::<String>(object, p))
            .transpose()?,
        None => None,
    };
    for (mut t, per) in templates {
        if let (Some(s), Some(spec)) = (&scheduler, t.spec.as_mut()) {
            if spec.scheduler_name.is_none() {
                spec.scheduler_name = Some(s.clone());
            }
        }
        read.found.push(Found {
            role: role.clone(),
            replicas: replicas.saturating_mul(per),
            template: t,
            path: path.clone(),
            unknown_constraints: false,
        });
    }
    Ok(())
}

fn opt_map(
    at: Option<At<'_, '_>>,
    object: &Location,
    path: &str,
) -> Result<Option<BTreeMap<String, String>>, Diagnostic> {
    at.map(|a| a.typed(object, path)).transpose()
}

fn count(
    factor: &Count,
    root: At<'_, '_>,
    item: &Item<'_, '_>,
    object: &Location,
) -> Result<i64, Diagnostic> {
    let field = |path: &str, default: i64| -> Result<i64, Diagnostic> {
        let at = match path.strip_prefix('/') {
            Some(p) => root.path(p),
            None => item.at.path(path),
        };
        match at {
            Some(a) => Ok(a.typed::<i64>(object, path)?.max(0)),
            None => Ok(default),
        }
    };
    Ok(match *factor {
        Count::Field(path, default) => field(path, default)?,
        Count::LessOne {
            field: f,
            default,
            when,
        } => {
            let v = field(f, default)?;
            if when.is_none_or(|w| item.at.path(w).is_some()) {
                (v - 1).max(0)
            } else {
                v
            }
        }
    })
}

/// The pod-level fields of an Argo template and of its workflow.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArgoPod {
    node_selector: Option<BTreeMap<String, String>>,
    affinity: Option<core::Affinity>,
    tolerations: Option<Vec<core::Toleration>>,
    scheduler_name: Option<String>,
    service_account_name: Option<String>,
    security_context: Option<core::PodSecurityContext>,
    host_network: Option<bool>,
    volumes: Option<Vec<core::Volume>>,
    /// A template's pod metadata.
    metadata: Option<ArgoMetadata>,
    /// The workflow's pod metadata.
    pod_metadata: Option<ArgoMetadata>,
    init_containers: Option<Vec<core::Container>>,
    sidecars: Option<Vec<core::Container>>,
    container: Option<core::Container>,
    script: Option<core::Container>,
    container_set: Option<ArgoContainerSet>,
    pod_spec_patch: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ArgoMetadata {
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
struct ArgoContainerSet {
    #[serde(default)]
    containers: Vec<core::Container>,
}

/// One Argo template: a pod when it runs containers, objects when it creates them.
fn argo(
    item: &Item<'_, '_>,
    template: At<'_, '_>,
    workflow: Option<At<'_, '_>>,
    object: &Location,
    path: &str,
    read: &mut Read,
) -> Result<(), Diagnostic> {
    if let Some(m) = template.path("resource.manifest") {
        if let At::Yaml(n) = m {
            if let Value::Scalar(s) = &n.value {
                let leading =
                    u32::try_from(s.text.chars().take_while(|c| *c == '\n').count()).unwrap_or(0);
                // A literal or plain block keeps the file's lines; other styles start at the key.
                let first_line = match s.style {
                    ScalarStyle::Literal | ScalarStyle::Plain => {
                        n.pos.line.saturating_sub(leading).max(1)
                    }
                    _ => n.pos.line.max(1),
                };
                read.embedded.push(Embedded {
                    text: s.text.to_string(),
                    first_line,
                });
            }
        } else if let Some(text) = m.text() {
            read.embedded.push(Embedded {
                text,
                first_line: object.line.max(1),
            });
        }
    }
    let t: ArgoPod = template.typed(object, path)?;
    let w: ArgoPod = match workflow {
        Some(w) => w.typed(object, "spec")?,
        None => ArgoPod::default(),
    };
    let mut containers: Vec<core::Container> = Vec::new();
    let mut main = |c: Option<core::Container>, name: &str| {
        if let Some(mut c) = c {
            if c.name.is_empty() {
                // Argo names the container of a container or script template `main`.
                c.name = name.to_string();
            }
            containers.push(c);
        }
    };
    main(t.container, "main");
    main(t.script, "main");
    for c in t.container_set.map(|s| s.containers).unwrap_or_default() {
        main(Some(c), "main");
    }
    if containers.is_empty() {
        return Ok(());
    }
    containers.extend(t.sidecars.unwrap_or_default());
    if let Some(patch) = t.pod_spec_patch.or(w.pod_spec_patch) {
        if !patch.trim().is_empty() {
            read.warnings.push(Diagnostic::warning(
                item.at.location(object),
                format!(
                    "{path}: podSpecPatch is not applied; what it changes (resources, security context) is not audited"
                ),
            ));
        }
    }
    let mut tolerations = t.tolerations.unwrap_or_default();
    tolerations.extend(w.tolerations.unwrap_or_default());
    let mut volumes = t.volumes.unwrap_or_default();
    volumes.extend(w.volumes.unwrap_or_default());
    let spec = core::PodSpec {
        containers,
        init_containers: t.init_containers,
        node_selector: t.node_selector.or(w.node_selector),
        affinity: t.affinity.or(w.affinity),
        tolerations: (!tolerations.is_empty()).then_some(tolerations),
        scheduler_name: t.scheduler_name.or(w.scheduler_name),
        service_account_name: t.service_account_name.or(w.service_account_name),
        security_context: t.security_context.or(w.security_context),
        host_network: w.host_network,
        volumes: (!volumes.is_empty()).then_some(volumes),
        ..core::PodSpec::default()
    };
    let mut labels = w
        .pod_metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let mut annotations = w
        .pod_metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    if let Some(m) = t.metadata {
        labels.extend(m.labels.unwrap_or_default());
        annotations.extend(m.annotations.unwrap_or_default());
    }
    let role = template
        .get("name")
        .and_then(At::text)
        .unwrap_or_else(|| format!("templates[{}]", item.index.unwrap_or(0)));
    read.found.push(Found {
        role: Some(role),
        replicas: 1,
        template: core::PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: (!labels.is_empty()).then_some(labels),
                annotations: (!annotations.is_empty()).then_some(annotations),
                ..ObjectMeta::default()
            }),
            spec: Some(spec),
        },
        path: path.to_string(),
        unknown_constraints: false,
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Kubeflow Trainer: TrainJobs and the runtimes they reference.

/// The label a runtime's replicated Job carries to say which step of a TrainJob it is
/// (kubeflow/trainer `pkg/constants`, `LabelTrainJobAncestor`; the trainer's value is `trainer`).
const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";
const ANCESTOR_TRAINER: &str = "trainer";
/// The trainer's replicated Job and container are named `node` in the runtimes Kubeflow ships
/// (kubeflow/trainer `manifests/base/runtimes/`, `pkg/constants` `Node`).
const TRAINER_NODE: &str = "node";

/// A TrainingRuntime or ClusterTrainingRuntime.
#[derive(Debug, Clone)]
pub(crate) struct RuntimeDraft {
    pub kind: String,
    /// `None` for a ClusterTrainingRuntime.
    pub namespace: Option<String>,
    pub name: String,
    pub num_nodes: Option<i64>,
    pub jobs: Vec<RuntimeJob>,
}

#[derive(Debug, Clone)]
pub(crate) struct RuntimeJob {
    pub name: String,
    pub replicas: i64,
    pub parallelism: i64,
    pub template: core::PodTemplateSpec,
    pub trainer: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuntimeSpec {
    ml_policy: Option<MlPolicy>,
    template: Option<JobSetTemplate>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MlPolicy {
    num_nodes: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
struct JobSetTemplate {
    spec: Option<JobSetSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobSetSpec {
    #[serde(default)]
    replicated_jobs: Vec<ReplicatedJob>,
}

#[derive(Debug, Default, Deserialize)]
struct ReplicatedJob {
    #[serde(default)]
    name: String,
    replicas: Option<i64>,
    #[serde(default)]
    template: batch::JobTemplateSpec,
}

/// Reads a training runtime.
pub(crate) fn read_runtime(
    kind: &str,
    namespace: Option<String>,
    name: &str,
    root: At<'_, '_>,
    object: &Location,
) -> Result<RuntimeDraft, Diagnostic> {
    let spec: RuntimeSpec = match root.get("spec") {
        Some(s) => s.typed(object, "spec")?,
        None => RuntimeSpec::default(),
    };
    let jobs = spec
        .template
        .and_then(|t| t.spec)
        .map(|s| s.replicated_jobs)
        .unwrap_or_default()
        .into_iter()
        .map(|j| {
            let ancestor = j
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.as_ref())
                .and_then(|l| l.get(ANCESTOR_LABEL))
                .cloned();
            let job = j.template.spec.unwrap_or_default();
            RuntimeJob {
                trainer: ancestor.as_deref() == Some(ANCESTOR_TRAINER)
                    || (ancestor.is_none() && j.name == TRAINER_NODE),
                name: j.name,
                replicas: j.replicas.unwrap_or(1).max(0),
                parallelism: i64::from(job.parallelism.unwrap_or(1)).max(0),
                template: job.template,
            }
        })
        .collect();
    Ok(RuntimeDraft {
        kind: kind.to_string(),
        namespace,
        name: name.to_string(),
        num_nodes: spec.ml_policy.and_then(|m| m.num_nodes),
        jobs,
    })
}

/// A TrainJob, before its runtime is known.
#[derive(Debug, Clone)]
pub(crate) struct TrainJobDraft {
    pub object: ObjectRef,
    pub runtime_kind: String,
    pub runtime_name: String,
    trainer: Trainer,
    patches: Vec<PodPatch>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Trainer {
    image: Option<String>,
    command: Option<Vec<String>>,
    args: Option<Vec<String>>,
    env: Option<Vec<core::EnvVar>>,
    num_nodes: Option<i64>,
    resources_per_node: Option<core::ResourceRequirements>,
}

/// Pod-level changes a TrainJob makes to some of its runtime's jobs (`None`: every job).
#[derive(Debug, Clone, Default)]
struct PodPatch {
    jobs: Option<Vec<String>>,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    spec: PodSpecPatch,
}

/// The pod spec fields a TrainJob may patch (kubeflow/trainer `PodSpecPatch`,
/// `PodTemplateSpecOverride`, and v2.0's `PodSpecOverride`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSpecPatch {
    service_account_name: Option<String>,
    node_selector: Option<BTreeMap<String, String>>,
    affinity: Option<core::Affinity>,
    tolerations: Option<Vec<core::Toleration>>,
    volumes: Option<Vec<core::Volume>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TrainJobSpec {
    runtime_ref: Option<RuntimeRef>,
    trainer: Option<Trainer>,
    #[serde(default)]
    runtime_patches: Vec<RuntimePatch>,
    #[serde(default)]
    pod_template_overrides: Vec<PodTemplateOverride>,
    #[serde(default)]
    pod_spec_overrides: Vec<PodSpecOverride>,
}

#[derive(Debug, Default, Deserialize)]
struct RuntimeRef {
    #[serde(default)]
    name: String,
    kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuntimePatch {
    training_runtime_spec: Option<PatchRuntimeSpec>,
}

#[derive(Debug, Default, Deserialize)]
struct PatchRuntimeSpec {
    template: Option<PatchJobSet>,
}

#[derive(Debug, Default, Deserialize)]
struct PatchJobSet {
    spec: Option<PatchJobSetSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PatchJobSetSpec {
    #[serde(default)]
    replicated_jobs: Vec<PatchReplicatedJob>,
}

#[derive(Debug, Default, Deserialize)]
struct PatchReplicatedJob {
    #[serde(default)]
    name: String,
    template: Option<PatchJobTemplate>,
}

#[derive(Debug, Default, Deserialize)]
struct PatchJobTemplate {
    spec: Option<PatchJobSpec>,
}

#[derive(Debug, Default, Deserialize)]
struct PatchJobSpec {
    template: Option<PatchPodTemplate>,
}

#[derive(Debug, Default, Deserialize)]
struct PatchPodTemplate {
    metadata: Option<ArgoMetadata>,
    spec: Option<PodSpecPatch>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodTemplateOverride {
    #[serde(default)]
    target_jobs: Vec<TargetJob>,
    metadata: Option<ArgoMetadata>,
    spec: Option<PodSpecPatch>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSpecOverride {
    #[serde(default)]
    target_jobs: Vec<TargetJob>,
    #[serde(flatten)]
    spec: PodSpecPatch,
}

#[derive(Debug, Default, Deserialize)]
struct TargetJob {
    #[serde(default)]
    name: String,
}

/// Reads a TrainJob.
pub(crate) fn read_train_job(
    object: ObjectRef,
    root: At<'_, '_>,
) -> Result<TrainJobDraft, Diagnostic> {
    let loc = object.location.clone();
    let spec: TrainJobSpec = match root.get("spec") {
        Some(s) => s.typed(&loc, "spec")?,
        None => TrainJobSpec::default(),
    };
    let runtime = spec.runtime_ref.unwrap_or_default();
    let mut patches = Vec::new();
    for p in spec.runtime_patches {
        let jobs = p
            .training_runtime_spec
            .and_then(|s| s.template)
            .and_then(|t| t.spec)
            .map(|s| s.replicated_jobs)
            .unwrap_or_default();
        for j in jobs {
            let Some(pod) = j.template.and_then(|t| t.spec).and_then(|s| s.template) else {
                continue;
            };
            let (labels, annotations) = meta_maps(pod.metadata);
            patches.push(PodPatch {
                jobs: Some(vec![j.name]),
                labels,
                annotations,
                spec: pod.spec.unwrap_or_default(),
            });
        }
    }
    for o in spec.pod_template_overrides {
        let (labels, annotations) = meta_maps(o.metadata);
        patches.push(PodPatch {
            jobs: targets(&o.target_jobs),
            labels,
            annotations,
            spec: o.spec.unwrap_or_default(),
        });
    }
    for o in spec.pod_spec_overrides {
        patches.push(PodPatch {
            jobs: targets(&o.target_jobs),
            spec: o.spec,
            ..PodPatch::default()
        });
    }
    Ok(TrainJobDraft {
        object,
        // `kind` defaults to ClusterTrainingRuntime (`RuntimeRef`).
        runtime_kind: runtime
            .kind
            .unwrap_or_else(|| "ClusterTrainingRuntime".to_string()),
        runtime_name: runtime.name,
        trainer: spec.trainer.unwrap_or_default(),
        patches,
    })
}

fn meta_maps(m: Option<ArgoMetadata>) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let m = m.unwrap_or_default();
    (
        m.labels.unwrap_or_default(),
        m.annotations.unwrap_or_default(),
    )
}

fn targets(t: &[TargetJob]) -> Option<Vec<String>> {
    (!t.is_empty()).then(|| t.iter().map(|j| j.name.clone()).collect())
}

/// The pods of a TrainJob: its runtime's jobs with the trainer settings and patches applied; when
/// the runtime is not in the input, one job of trainer nodes built from the trainer settings alone,
/// with unknown scheduling constraints.
pub(crate) fn resolve_train_job(job: &TrainJobDraft, runtime: Option<&RuntimeDraft>) -> Vec<Found> {
    let trainer = &job.trainer;
    let jobs: Vec<RuntimeJob> = match runtime {
        Some(r) => r.jobs.clone(),
        None => vec![RuntimeJob {
            name: TRAINER_NODE.to_string(),
            replicas: 1,
            parallelism: 1,
            template: core::PodTemplateSpec {
                metadata: None,
                spec: Some(core::PodSpec {
                    containers: vec![core::Container {
                        name: TRAINER_NODE.to_string(),
                        ..core::Container::default()
                    }],
                    ..core::PodSpec::default()
                }),
            },
            trainer: true,
        }],
    };
    let mut out = Vec::new();
    for mut j in jobs {
        let mut replicas = j.replicas.saturating_mul(j.parallelism);
        if j.trainer {
            if let Some(n) = trainer
                .num_nodes
                .or_else(|| runtime.and_then(|r| r.num_nodes))
            {
                replicas = n.max(0);
            }
            if let Some(spec) = j.template.spec.as_mut() {
                let i = spec
                    .containers
                    .iter()
                    .position(|c| c.name == TRAINER_NODE)
                    .unwrap_or(0);
                if let Some(c) = spec.containers.get_mut(i) {
                    if trainer.image.is_some() {
                        c.image = trainer.image.clone();
                    }
                    if trainer.command.is_some() {
                        c.command = trainer.command.clone();
                    }
                    if trainer.args.is_some() {
                        c.args = trainer.args.clone();
                    }
                    if let Some(env) = &trainer.env {
                        let mut merged = c.env.take().unwrap_or_default();
                        for e in env {
                            merged.retain(|x| x.name != e.name);
                            merged.push(e.clone());
                        }
                        c.env = Some(merged);
                    }
                    if trainer.resources_per_node.is_some() {
                        c.resources = trainer.resources_per_node.clone();
                    }
                }
            }
        }
        for p in &job.patches {
            if p.jobs
                .as_ref()
                .is_some_and(|names| !names.contains(&j.name))
            {
                continue;
            }
            let meta = j.template.metadata.get_or_insert_with(ObjectMeta::default);
            if !p.labels.is_empty() {
                meta.labels
                    .get_or_insert_with(BTreeMap::new)
                    .extend(p.labels.clone());
            }
            if !p.annotations.is_empty() {
                meta.annotations
                    .get_or_insert_with(BTreeMap::new)
                    .extend(p.annotations.clone());
            }
            let Some(spec) = j.template.spec.as_mut() else {
                continue;
            };
            let s = &p.spec;
            if let Some(sa) = &s.service_account_name {
                spec.service_account_name = Some(sa.clone());
            }
            if let Some(ns) = &s.node_selector {
                spec.node_selector
                    .get_or_insert_with(BTreeMap::new)
                    .extend(ns.clone());
            }
            if s.affinity.is_some() {
                spec.affinity = s.affinity.clone();
            }
            if let Some(t) = &s.tolerations {
                spec.tolerations
                    .get_or_insert_with(Vec::new)
                    .extend(t.iter().cloned());
            }
            if let Some(v) = &s.volumes {
                spec.volumes
                    .get_or_insert_with(Vec::new)
                    .extend(v.iter().cloned());
            }
        }
        out.push(Found {
            role: Some(j.name.clone()),
            replicas,
            path: format!("runtime job {}", j.name),
            template: j.template,
            unknown_constraints: runtime.is_none(),
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// vLLM production-stack.

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VllmRuntimeSpec {
    #[serde(default)]
    model: VllmModel,
    #[serde(default)]
    vllm_config: VllmConfig,
    #[serde(default)]
    deployment_config: VllmDeployment,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VllmModel {
    #[serde(rename = "modelURL")]
    model_url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VllmConfig {
    tensor_parallel_size: Option<i64>,
    gpu_memory_utilization: Option<String>,
    #[serde(default)]
    extra_args: Vec<String>,
    #[serde(default)]
    env: Vec<core::EnvVar>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VllmDeployment {
    replicas: Option<i64>,
    node_selector_terms: Option<Vec<core::NodeSelectorTerm>>,
    toleration: Option<Vec<core::Toleration>>,
    #[serde(default)]
    resources: VllmResources,
    #[serde(default)]
    image: VllmImage,
    pod_annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    sidecar_config: VllmSidecar,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VllmResources {
    cpu: Option<String>,
    memory: Option<String>,
    gpu: Option<String>,
    gpu_type: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct VllmImage {
    registry: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VllmSidecar {
    #[serde(default)]
    enabled: bool,
    name: Option<String>,
    #[serde(default)]
    image: VllmImage,
    command: Option<Vec<String>>,
    args: Option<Vec<String>>,
    #[serde(default)]
    resources: VllmResources,
}

impl VllmResources {
    /// Requests and limits as the operator sets them: cpu, memory, and `gpu` of `gpuType`
    /// (default `nvidia.com/gpu`), each as both request and limit.
    fn requirements(&self) -> core::ResourceRequirements {
        use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
        let mut list = BTreeMap::new();
        if let Some(c) = self.cpu.as_ref().filter(|c| !c.is_empty()) {
            list.insert("cpu".to_string(), Quantity(c.clone()));
        }
        if let Some(m) = self.memory.as_ref().filter(|m| !m.is_empty()) {
            list.insert("memory".to_string(), Quantity(m.clone()));
        }
        if let Some(g) = self.gpu.as_ref().filter(|g| !g.is_empty()) {
            let kind = self
                .gpu_type
                .clone()
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "nvidia.com/gpu".to_string());
            list.insert(kind, Quantity(g.clone()));
        }
        core::ResourceRequirements {
            limits: Some(list.clone()),
            requests: Some(list),
            ..core::ResourceRequirements::default()
        }
    }
}

impl VllmImage {
    fn reference(&self) -> String {
        format!(
            "{}/{}",
            self.registry.as_deref().unwrap_or(""),
            self.name.as_deref().unwrap_or("")
        )
    }
}

/// The pods of a VLLMRuntime: the Deployment its operator builds, with the fields that matter to
/// an audit (image, `vllm serve` with the model and memory flags, resources, node affinity,
/// tolerations, the optional sidecar).
pub(crate) fn read_vllm_runtime(
    root: At<'_, '_>,
    object: &Location,
    name: &str,
) -> Result<Vec<Found>, Diagnostic> {
    let spec: VllmRuntimeSpec = match root.get("spec") {
        Some(s) => s.typed(object, "spec")?,
        None => VllmRuntimeSpec::default(),
    };
    let d = &spec.deployment_config;
    let v = &spec.vllm_config;
    let mut args: Vec<String> = spec.model.model_url.clone().into_iter().collect();
    if let Some(tp) = v.tensor_parallel_size.filter(|t| *t > 0) {
        args.extend(["--tensor-parallel-size".to_string(), tp.to_string()]);
    }
    if let Some(u) = v.gpu_memory_utilization.as_ref().filter(|u| !u.is_empty()) {
        // The operator writes the flag with underscores, which vLLM's parser accepts.
        args.extend(["--gpu_memory_utilization".to_string(), u.clone()]);
    }
    args.extend(v.extra_args.iter().cloned());
    let mut containers = vec![core::Container {
        name: "vllm".to_string(),
        image: Some(d.image.reference()),
        command: Some(vec!["/opt/venv/bin/vllm".to_string(), "serve".to_string()]),
        args: Some(args),
        env: (!v.env.is_empty()).then(|| v.env.clone()),
        resources: Some(d.resources.requirements()),
        ..core::Container::default()
    }];
    let s = &d.sidecar_config;
    if s.enabled {
        containers.push(core::Container {
            name: s.name.clone().unwrap_or_else(|| "sidecar".to_string()),
            image: Some(s.image.reference()),
            command: s.command.clone(),
            args: s.args.clone(),
            resources: Some(s.resources.requirements()),
            ..core::Container::default()
        });
    }
    let affinity = d.node_selector_terms.clone().map(|terms| core::Affinity {
        node_affinity: Some(core::NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(core::NodeSelector {
                node_selector_terms: terms,
            }),
            ..core::NodeAffinity::default()
        }),
        ..core::Affinity::default()
    });
    let mut labels: BTreeMap<String, String> = match root.path("metadata.labels") {
        Some(l) => l.typed(object, "metadata.labels")?,
        None => BTreeMap::new(),
    };
    labels.insert("app".to_string(), name.to_string());
    Ok(vec![Found {
        role: None,
        replicas: d.replicas.unwrap_or(1).max(0),
        template: core::PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels),
                annotations: d.pod_annotations.clone(),
                ..ObjectMeta::default()
            }),
            spec: Some(core::PodSpec {
                containers,
                affinity,
                tolerations: d.toleration.clone(),
                ..core::PodSpec::default()
            }),
        },
        path: "spec.deploymentConfig".to_string(),
        unknown_constraints: false,
    }])
}

// ---------------------------------------------------------------------------------------------
// Generic discovery.

/// Bounds on what discovery may cost per object.
const MAX_DEPTH: usize = 24;
const MAX_NODES: usize = 200_000;
const MAX_FOUND: usize = 32;

/// A template found by its shape.
pub(crate) struct Shaped<'t, 'a> {
    pub path: String,
    pub at: At<'t, 'a>,
    /// `{metadata, spec: PodSpec}` rather than a bare pod spec.
    pub template: bool,
    /// An integer `replicas` beside the template.
    pub replicas: Option<At<'t, 'a>>,
}

/// Pod templates anywhere in an object but its `metadata` and `status`; `truncated` when a bound
/// stopped the search.
pub(crate) fn discover<'t, 'a>(root: At<'t, 'a>) -> (Vec<Shaped<'t, 'a>>, bool) {
    let mut w = Walk {
        found: Vec::new(),
        nodes: 0,
        truncated: false,
    };
    w.visit(root, String::new(), 0, None);
    (w.found, w.truncated)
}

struct Walk<'t, 'a> {
    found: Vec<Shaped<'t, 'a>>,
    nodes: usize,
    truncated: bool,
}

fn containers_shape(at: At<'_, '_>) -> bool {
    at.get("containers")
        .and_then(At::items)
        .is_some_and(|items| {
            !items.is_empty()
                && items
                    .iter()
                    .all(|c| c.get("image").is_some() || c.get("name").is_some())
        })
}

impl<'t, 'a> Walk<'t, 'a> {
    fn visit(&mut self, at: At<'t, 'a>, path: String, depth: usize, parent: Option<At<'t, 'a>>) {
        self.nodes += 1;
        if self.nodes > MAX_NODES || depth > MAX_DEPTH || self.found.len() >= MAX_FOUND {
            self.truncated = true;
            return;
        }
        let replicas = || {
            parent
                .and_then(|p| p.get("replicas"))
                .or_else(|| at.get("replicas"))
        };
        if let Some(spec) = at.get("spec") {
            if containers_shape(spec) {
                self.found.push(Shaped {
                    path,
                    at,
                    template: true,
                    replicas: replicas(),
                });
                return;
            }
        }
        if depth > 0 && containers_shape(at) {
            self.found.push(Shaped {
                path,
                at,
                template: false,
                replicas: replicas(),
            });
            return;
        }
        if let Some(entries) = at.entries() {
            for (k, v) in entries {
                if depth == 0 && matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                {
                    continue;
                }
                self.visit(v, join(&path, &k), depth + 1, Some(at));
            }
        } else if let Some(items) = at.items() {
            for (i, v) in items.into_iter().enumerate() {
                self.visit(v, format!("{path}[{i}]"), depth + 1, Some(at));
            }
        }
    }
}

/// Reads a template found by its shape.
pub(crate) fn read_shaped(s: &Shaped<'_, '_>, object: &Location) -> Result<Found, Diagnostic> {
    let template = if s.template {
        s.at.typed::<core::PodTemplateSpec>(object, &s.path)?
    } else {
        core::PodTemplateSpec {
            metadata: None,
            spec: Some(s.at.typed(object, &s.path)?),
        }
    };
    // A `replicas` beside the template that is not a number says nothing about this template.
    let replicas = s
        .replicas
        .and_then(|r| r.typed::<i64>(object, "replicas").ok())
        .unwrap_or(1)
        .max(0);
    Ok(Found {
        role: (!s.path.is_empty()).then(|| s.path.clone()),
        replicas,
        template,
        path: if s.path.is_empty() {
            "the object itself".to_string()
        } else {
            s.path.clone()
        },
        unknown_constraints: false,
    })
}

/// Resource names that request a GPU (the device plugin's, HAMi's) when written in an object
/// outside any pod template ingest can read: the first such mention and where it is.
pub(crate) fn gpu_mention(root: At<'_, '_>) -> Option<(String, Option<Pos>)> {
    fn is_gpu(s: &str) -> bool {
        use gpu_trust_model::resource;
        resource::is_gpu_resource(s) || resource::HAMI_RESOURCES.contains(&s)
    }
    fn walk(
        at: At<'_, '_>,
        path: &str,
        depth: usize,
        nodes: &mut usize,
    ) -> Option<(String, Option<Pos>)> {
        *nodes += 1;
        if depth > MAX_DEPTH || *nodes > MAX_NODES {
            return None;
        }
        if let Some(entries) = at.entries() {
            for (k, v) in entries {
                if depth == 0 && matches!(k.as_str(), "metadata" | "status") {
                    continue;
                }
                // Where a GPU resource name is a node label or a taint, not a request.
                if matches!(
                    k.as_str(),
                    "tolerations"
                        | "toleration"
                        | "nodeSelector"
                        | "affinity"
                        | "nodeSelectorTerms"
                ) {
                    continue;
                }
                let p = join(path, &k);
                if is_gpu(&k) {
                    return Some((p, v.pos()));
                }
                if let Some(found) = walk(v, &p, depth + 1, nodes) {
                    return Some(found);
                }
            }
        } else if let Some(items) = at.items() {
            for (i, v) in items.into_iter().enumerate() {
                if let Some(found) = walk(v, &format!("{path}[{i}]"), depth + 1, nodes) {
                    return Some(found);
                }
            }
        } else if at.text().is_some_and(|t| is_gpu(t.trim())) {
            return Some((path.to_string(), at.pos()));
        }
        None
    }
    walk(root, "", 0, &mut 0)
}

/// The text of `metadata.<field>` of an object.
pub(crate) fn meta_text(root: At<'_, '_>, field: &str) -> Option<String> {
    root.get("metadata")?.get(field)?.text()
}
