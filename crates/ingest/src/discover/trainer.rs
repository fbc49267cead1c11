//! Kubeflow Trainer: TrainJobs and the runtimes they reference, joined once every object is read.

use super::{At, Found, PodMetadata};
use gpu_trust_model::{Diagnostic, Location, ObjectRef};
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use std::collections::BTreeMap;

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
    metadata: Option<PodMetadata>,
    spec: Option<PodSpecPatch>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodTemplateOverride {
    #[serde(default)]
    target_jobs: Vec<TargetJob>,
    metadata: Option<PodMetadata>,
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

fn meta_maps(m: Option<PodMetadata>) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
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
