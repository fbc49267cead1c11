//! Pod templates in objects ingest has no typed reader for: read by the controllers table
//! ([`crate::controllers`]), or found by their shape in any other kind.
//!
//! Objects are walked as located YAML trees (errors name the line and column of the value) or as
//! JSON values (errors name the object and the path). Generic discovery looks for
//! `PodTemplateSpec` shapes (`{metadata?, spec: {containers: [...]}}`) and `PodSpec` shapes
//! (`{containers: [...]}`) anywhere under the object but its `metadata` and `status`, bounded in
//! depth, in nodes visited and in templates kept.
//!
//! One reader per file: `groups.rs` (the rows of the controllers table whose pods are in groups of
//! templates), `argo.rs` (an Argo template, a pod or the objects it creates), `trainer.rs` (Kubeflow
//! Trainer's TrainJobs and the runtimes they reference), `vllm.rs` (the vLLM production-stack's
//! VLLMRuntime, whose pods are described in fields of its own) and `shape.rs` (pod templates found by
//! their shape in any other kind); `tree.rs` is the located value they all walk.

mod argo;
mod groups;
mod shape;
mod trainer;
mod tree;
mod vllm;

pub(crate) use groups::read_groups;
pub(crate) use shape::{discover, gpu_mention, read_shaped};
pub(crate) use trainer::{
    read_runtime, read_train_job, resolve_train_job, RuntimeDraft, TrainJobDraft,
};
pub(crate) use tree::At;
pub(crate) use vllm::read_vllm_runtime;

use gpu_trust_model::Diagnostic;
use k8s_openapi::api::core::v1 as core;
use serde::Deserialize;
use std::collections::BTreeMap;

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

/// The labels and annotations of a pod template, as Argo templates and workflows and Kubeflow
/// Trainer's patches write them.
#[derive(Debug, Default, Deserialize)]
struct PodMetadata {
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}.{b}"),
    }
}

/// The text of `metadata.<field>` of an object.
pub(crate) fn meta_text(root: At<'_, '_>, field: &str) -> Option<String> {
    root.get("metadata")?.get(field)?.text()
}
