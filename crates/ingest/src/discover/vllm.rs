//! The vLLM production-stack's VLLMRuntime: the operator builds a Deployment from fields of its own,
//! and these are its pods.

use super::{At, Found};
use gpu_trust_model::{Diagnostic, Location};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use std::collections::BTreeMap;

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
                .unwrap_or_else(|| gpu_trust_model::resource::GPU.to_string());
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
