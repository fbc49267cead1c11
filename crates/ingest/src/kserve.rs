//! KServe: the serving runtime an InferenceService's predictor runs in, and the predictor pod KServe
//! builds from the two. A predictor written as `model: {modelFormat, args, resources}` names no
//! image: the image, its arguments and part of the pod come from a ServingRuntime or
//! ClusterServingRuntime, so what the pod runs (vLLM behind KServe's Hugging Face runtime) is only
//! known once the runtime is read.
//!
//! Sources (kserve/kserve):
//! - `pkg/controller/v1beta1/inferenceservice/components/predictor.go`: the runtime is the one
//!   `model.runtime` names (`GetServingRuntime`: a ServingRuntime of the namespace, else a
//!   ClusterServingRuntime), else the first of `GetSupportingRuntimes`; the predictor container is
//!   the runtime's `kserve-container` merged with the model's container; the runtime's other
//!   containers are added.
//! - `pkg/apis/serving/v1beta1/predictor_model.go`, `GetSupportingRuntimes`: runtimes that are not
//!   `disabled`, not `multiModel`, multi-node exactly when the predictor is (`workerSpec`), that
//!   support the model's protocol (`protocolVersions`, the model's default `v1`; a runtime listing
//!   none supports any) and list the model's format with `autoSelect: true` (and its version when
//!   the model names one); the namespace's runtimes first, then the cluster's, each by priority
//!   (highest first, none last), then protocol, newest first, name.
//! - `pkg/controller/v1beta1/inferenceservice/utils/utils.go`: `MergeRuntimeContainers` (a strategic
//!   merge of the model's container onto the runtime's, with the arguments concatenated: the
//!   runtime's first) and `MergePodSpec` (the runtime's nodeSelector, affinity, tolerations, volumes,
//!   imagePullSecrets, schedulerName and resourceClaims under the predictor's own).
//! - `pkg/apis/serving/v1alpha1/servingruntime_types.go`: `supportedModelFormats` (`name`,
//!   `version`, `autoSelect`, `priority`), `protocolVersions`, `disabled`, `multiModel`,
//!   `workerSpec`, and the inline pod fields.

use crate::discover::{At, Found};
use gpu_trust_model::fleet::{WorkloadClass, WorkloadKind};
use gpu_trust_model::{Diagnostic, Location, ObjectRef};
use k8s_openapi::api::core::v1 as core;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The API group of KServe's kinds.
pub(crate) const GROUP: &str = "serving.kserve.io";
/// The container KServe builds the predictor's server in (`constants.InferenceServiceContainerName`).
pub(crate) const CONTAINER: &str = "kserve-container";
/// The protocol a model speaks when it names none (`ModelSpec.GetProtocol`).
const DEFAULT_PROTOCOL: &str = "v1";

/// A ServingRuntime or ClusterServingRuntime.
#[derive(Debug, Clone)]
pub(crate) struct ServingRuntime {
    /// `None` for a ClusterServingRuntime.
    pub namespace: Option<String>,
    pub name: String,
    /// `metadata.creationTimestamp` (RFC 3339 sorts as text).
    pub created: String,
    spec: RuntimeSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuntimeSpec {
    #[serde(default)]
    supported_model_formats: Vec<ModelFormat>,
    #[serde(default)]
    protocol_versions: Vec<String>,
    disabled: Option<bool>,
    multi_model: Option<bool>,
    worker_spec: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    containers: Vec<core::Container>,
    node_selector: Option<BTreeMap<String, String>>,
    affinity: Option<core::Affinity>,
    tolerations: Option<Vec<core::Toleration>>,
    volumes: Option<Vec<core::Volume>>,
    image_pull_secrets: Option<Vec<core::LocalObjectReference>>,
    scheduler_name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelFormat {
    #[serde(default)]
    name: String,
    version: Option<String>,
    auto_select: Option<bool>,
    priority: Option<i64>,
}

/// What an InferenceService's `spec.predictor.model` asks of a runtime.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelRef {
    #[serde(default)]
    model_format: ModelFormat,
    runtime: Option<String>,
    protocol_version: Option<String>,
}

/// A predictor whose server comes from a serving runtime, read before the runtimes are known.
#[derive(Debug, Clone)]
pub(crate) struct Predictor {
    pub object: ObjectRef,
    /// How the controllers table records the InferenceService's workloads.
    pub kind: WorkloadKind,
    pub class: Option<WorkloadClass>,
    pub model: ModelRef,
    /// Whether the predictor runs on several nodes (`workerSpec`).
    pub multinode: bool,
    /// The predictor's pods as the InferenceService writes them.
    pub found: Found,
}

/// Reads a serving runtime.
pub(crate) fn read_runtime(
    namespace: Option<String>,
    name: &str,
    root: At<'_, '_>,
    object: &Location,
) -> Result<ServingRuntime, Diagnostic> {
    let spec = match root.get("spec") {
        Some(s) => s.typed(object, "spec")?,
        None => RuntimeSpec::default(),
    };
    let created = root
        .path("metadata.creationTimestamp")
        .and_then(At::text)
        .unwrap_or_default();
    Ok(ServingRuntime {
        namespace,
        name: name.to_string(),
        created,
        spec,
    })
}

/// The model reference of an InferenceService whose predictor is written as `model`; `None` for a
/// predictor of containers or of a framework field (whose images KServe's config names).
pub(crate) fn read_model(
    root: At<'_, '_>,
    object: &Location,
) -> Result<Option<ModelRef>, Diagnostic> {
    match root.path("spec.predictor.model") {
        Some(m) => m.typed(object, "spec.predictor.model").map(Some),
        None => Ok(None),
    }
}

/// The runtime KServe gives `predictor`, or why none can be told from the input.
pub(crate) fn runtime_for<'r>(
    predictor: &Predictor,
    runtimes: &'r [ServingRuntime],
) -> Result<&'r ServingRuntime, String> {
    let ns = predictor.object.namespace.as_deref().unwrap_or("default");
    let in_namespace = |r: &&ServingRuntime| r.namespace.as_deref() == Some(ns);
    let cluster = |r: &&ServingRuntime| r.namespace.is_none();
    if let Some(name) = &predictor.model.runtime {
        return runtimes
            .iter()
            .filter(in_namespace)
            .chain(runtimes.iter().filter(cluster))
            .find(|r| &r.name == name)
            .ok_or_else(|| {
                format!("its serving runtime `{name}` is not in the input (neither a ServingRuntime of namespace {ns} nor a ClusterServingRuntime)")
            });
    }
    let model = &predictor.model;
    let protocol = model
        .protocol_version
        .as_deref()
        .unwrap_or(DEFAULT_PROTOCOL);
    let supports = |r: &&ServingRuntime| {
        let s = &r.spec;
        s.disabled != Some(true)
            && s.multi_model != Some(true)
            && s.worker_spec.is_some() == predictor.multinode
            && (s.protocol_versions.is_empty() || s.protocol_versions.iter().any(|p| p == protocol))
            && s.supported_model_formats.iter().any(|f| {
                f.auto_select == Some(true)
                    && f.name == model.model_format.name
                    && model
                        .model_format
                        .version
                        .as_ref()
                        .is_none_or(|v| f.version.as_ref() == Some(v))
            })
    };
    let ranked = |filter: &dyn Fn(&&ServingRuntime) -> bool| {
        let mut found: Vec<&ServingRuntime> = runtimes
            .iter()
            .filter(|r| filter(r) && supports(r))
            .collect();
        found.sort_by(|a, b| {
            let priority = |r: &ServingRuntime| {
                r.spec
                    .supported_model_formats
                    .iter()
                    .find(|f| f.name == model.model_format.name)
                    .and_then(|f| f.priority)
            };
            // Some(priority) before None, higher first; then protocol, newest, name.
            let key = |r: &ServingRuntime| (priority(r).is_none(), std::cmp::Reverse(priority(r)));
            key(a)
                .cmp(&key(b))
                .then(protocol_rank(a).cmp(&protocol_rank(b)))
                .then(b.created.cmp(&a.created))
                .then(a.name.cmp(&b.name))
        });
        found.into_iter().next()
    };
    ranked(&in_namespace)
        .or_else(|| ranked(&cluster))
        .ok_or_else(|| {
            format!(
                "no serving runtime in the input serves model format `{}`{} (the runtime KServe would pick is unknown)",
                model.model_format.name,
                model
                    .model_format
                    .version
                    .as_ref()
                    .map_or(String::new(), |v| format!(" version {v}"))
            )
        })
}

/// KServe's order of protocols (`GetProtocolVersionPriority`: the runtime's lowest of v1, v2,
/// grpc-v1, grpc-v2; unknown last).
fn protocol_rank(r: &ServingRuntime) -> u8 {
    r.spec
        .protocol_versions
        .iter()
        .map(|p| match p.as_str() {
            "v1" => 1,
            "v2" => 2,
            "grpc-v1" => 3,
            "grpc-v2" => 4,
            _ => 5,
        })
        .min()
        .unwrap_or(5)
}

/// The predictor's pods with the runtime applied: its `kserve-container` merged under the model's,
/// its other containers added, its pod fields under the predictor's.
pub(crate) fn apply(runtime: &ServingRuntime, found: &Found) -> Result<Found, String> {
    let mut out = found.clone();
    let Some(spec) = out.template.spec.as_mut() else {
        return Ok(out);
    };
    let Some(base) = runtime.spec.containers.iter().find(|c| c.name == CONTAINER) else {
        return Err(format!(
            "its serving runtime `{}` has no `{CONTAINER}` container, which KServe refuses",
            runtime.name
        ));
    };
    let merged = match spec.containers.iter().position(|c| c.name == CONTAINER) {
        Some(i) => {
            let own = spec.containers.remove(i);
            let mut merged: core::Container = merge_typed(base, &own, CONTAINER_KEYS)?;
            merged.args = Some(
                base.args
                    .iter()
                    .flatten()
                    .chain(own.args.iter().flatten())
                    .cloned()
                    .collect(),
            );
            merged.name = CONTAINER.to_string();
            merged
        }
        None => base.clone(),
    };
    spec.containers.insert(0, merged);
    spec.containers.extend(
        runtime
            .spec
            .containers
            .iter()
            .filter(|c| c.name != CONTAINER)
            .cloned(),
    );
    let r = &runtime.spec;
    let pod = core::PodSpec {
        node_selector: r.node_selector.clone(),
        affinity: r.affinity.clone(),
        tolerations: r.tolerations.clone(),
        volumes: r.volumes.clone(),
        image_pull_secrets: r.image_pull_secrets.clone(),
        scheduler_name: r.scheduler_name.clone(),
        ..core::PodSpec::default()
    };
    let containers = std::mem::take(&mut spec.containers);
    let mut pod: core::PodSpec = merge_typed(&pod, &*spec, POD_KEYS)?;
    pod.containers = containers;
    *spec = pod;
    Ok(out)
}

/// Lists a strategic merge patch merges by a key instead of replacing (k8s.io/api core/v1
/// `patchMergeKey`): a container's environment, mounts and ports; a pod's volumes.
const CONTAINER_KEYS: &[(&str, &str)] = &[
    ("env", "name"),
    ("volumeMounts", "mountPath"),
    ("ports", "containerPort"),
];
const POD_KEYS: &[(&str, &str)] = &[("volumes", "name")];

/// `patch` merged onto `base` as a strategic merge patch merges them: maps field by field, the
/// lists of `keys` item by item, any other list and value replaced.
fn merge_typed<T: serde::Serialize + serde::de::DeserializeOwned>(
    base: &T,
    patch: &T,
    keys: &[(&str, &str)],
) -> Result<T, String> {
    let mut b = serde_json::to_value(base).map_err(|e| e.to_string())?;
    let p = serde_json::to_value(patch).map_err(|e| e.to_string())?;
    merge(&mut b, &p, keys);
    serde_json::from_value(b).map_err(|e| e.to_string())
}

fn merge(base: &mut Value, patch: &Value, keys: &[(&str, &str)]) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    continue;
                }
                let key = keys.iter().find(|(f, _)| f == k).map(|(_, key)| *key);
                match (b.get_mut(k), key, v) {
                    (Some(Value::Array(items)), Some(key), Value::Array(patched)) => {
                        for item in patched {
                            match items
                                .iter_mut()
                                .find(|i| i.get(key).is_some() && i.get(key) == item.get(key))
                            {
                                Some(existing) => merge(existing, item, &[]),
                                None => items.push(item.clone()),
                            }
                        }
                    }
                    (Some(existing @ Value::Object(_)), _, Value::Object(_)) => {
                        merge(existing, v, &[]);
                    }
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

    fn container(name: &str, image: Option<&str>, args: &[&str]) -> core::Container {
        core::Container {
            name: name.into(),
            image: image.map(str::to_string),
            args: Some(args.iter().map(|a| a.to_string()).collect()),
            ..core::Container::default()
        }
    }

    fn runtime(
        namespace: Option<&str>,
        name: &str,
        format: &str,
        priority: Option<i64>,
    ) -> ServingRuntime {
        ServingRuntime {
            namespace: namespace.map(str::to_string),
            name: name.into(),
            created: String::new(),
            spec: RuntimeSpec {
                supported_model_formats: vec![ModelFormat {
                    name: format.into(),
                    version: Some("1".into()),
                    auto_select: Some(true),
                    priority,
                }],
                protocol_versions: vec!["v2".into(), "v1".into()],
                containers: vec![container(
                    CONTAINER,
                    Some("kserve/huggingfaceserver:v0.15.2"),
                    &["--model_name={{.Name}}"],
                )],
                tolerations: Some(vec![core::Toleration {
                    key: Some("nvidia.com/gpu".into()),
                    operator: Some("Exists".into()),
                    ..core::Toleration::default()
                }]),
                ..RuntimeSpec::default()
            },
        }
    }

    fn predictor(runtime: Option<&str>) -> Predictor {
        let mut own = container(
            CONTAINER,
            None,
            &["--model_id=meta-llama/Llama-3.1-8B-Instruct"],
        );
        own.resources = Some(core::ResourceRequirements {
            limits: Some(BTreeMap::from([(
                "nvidia.com/gpu".to_string(),
                Quantity("1".into()),
            )])),
            ..core::ResourceRequirements::default()
        });
        Predictor {
            object: ObjectRef {
                kind: "InferenceService".into(),
                namespace: Some("team-a".into()),
                name: "llama".into(),
                location: Location::default(),
            },
            kind: WorkloadKind::Custom,
            class: Some(WorkloadClass::Inference),
            model: ModelRef {
                model_format: ModelFormat {
                    name: "huggingface".into(),
                    ..ModelFormat::default()
                },
                runtime: runtime.map(str::to_string),
                protocol_version: None,
            },
            multinode: false,
            found: Found {
                role: Some("predictor".into()),
                replicas: 1,
                template: core::PodTemplateSpec {
                    metadata: None,
                    spec: Some(core::PodSpec {
                        containers: vec![own],
                        ..core::PodSpec::default()
                    }),
                },
                path: "spec.predictor".into(),
                unknown_constraints: false,
            },
        }
    }

    #[test]
    fn the_namespace_runtime_wins_then_priority_then_the_cluster() {
        let runtimes = vec![
            runtime(None, "kserve-huggingfaceserver", "huggingface", Some(1)),
            runtime(Some("team-a"), "team-hf", "huggingface", None),
            runtime(Some("team-b"), "other-hf", "huggingface", Some(9)),
        ];
        assert_eq!(
            runtime_for(&predictor(None), &runtimes).map(|r| r.name.as_str()),
            Ok("team-hf")
        );
        assert_eq!(
            runtime_for(&predictor(None), &runtimes[..1]).map(|r| r.name.as_str()),
            Ok("kserve-huggingfaceserver")
        );
        let named = predictor(Some("kserve-huggingfaceserver"));
        assert_eq!(
            runtime_for(&named, &runtimes).map(|r| r.name.as_str()),
            Ok("kserve-huggingfaceserver")
        );
        assert!(runtime_for(&predictor(Some("missing")), &runtimes).is_err());
        let mut disabled = runtime(None, "off", "huggingface", Some(5));
        disabled.spec.disabled = Some(true);
        assert!(runtime_for(&predictor(None), &[disabled]).is_err());
    }

    #[test]
    fn the_model_container_is_merged_onto_the_runtime_one() {
        let r = runtime(None, "kserve-huggingfaceserver", "huggingface", Some(1));
        let found = apply(&r, &predictor(None).found).expect("merged");
        let spec = found.template.spec.expect("spec");
        let c = &spec.containers[0];
        assert_eq!(c.image.as_deref(), Some("kserve/huggingfaceserver:v0.15.2"));
        assert_eq!(
            c.args.as_deref(),
            Some(
                &[
                    "--model_name={{.Name}}".to_string(),
                    "--model_id=meta-llama/Llama-3.1-8B-Instruct".to_string()
                ][..]
            )
        );
        assert!(c
            .resources
            .as_ref()
            .and_then(|r| r.limits.as_ref())
            .is_some_and(|l| l.contains_key("nvidia.com/gpu")));
        assert_eq!(spec.tolerations.map(|t| t.len()), Some(1));
    }
}
