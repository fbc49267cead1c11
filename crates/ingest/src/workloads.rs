//! From a pod spec (of a Pod or of a workload's template) to what the model records: what it requests
//! of GPUs, its containers, what reaches the host, an inference server, its class, its constraints.

use crate::inference;
use crate::placement::Constraints;
use crate::util::{quantity_u64, uuids};
use gpu_trust_model::fleet::{
    ContainerInfo, FractionRequest, FractionScheduler, GpuRequest, HamiRequest, PodSecurity,
    WorkloadClass, WorkloadKind,
};
use gpu_trust_model::resource;
use k8s_openapi::api::core::v1 as core;
use std::collections::BTreeMap;

/// HAMi's resource names are in `gpu_trust_model::resource`; its task priority resource
/// (Project-HAMi/HAMi `docs/config.md`, `resourcePriority`) is read only here.
const HAMI_PRIORITY: &str = "nvidia.com/priority";
/// Written by HAMi's scheduler: the devices a pod got, per container.
pub(crate) const HAMI_ALLOCATED: &str = "hami.io/vgpu-devices-allocated";
/// HAMi pod annotations that only mean something under HAMi.
/// HAMi's annotation choosing a vGPU's mode (Project-HAMi/HAMi `docs/config.md`).
const HAMI_VGPU_MODE: &str = "nvidia.com/vgpu-mode";
const HAMI_ANNOTATIONS: &[&str] = &[
    "nvidia.com/use-gpuuuid",
    "nvidia.com/nouse-gpuuuid",
    "nvidia.com/use-gputype",
    "nvidia.com/nouse-gputype",
    HAMI_VGPU_MODE,
    HAMI_ALLOCATED,
];
const HAMI_SCHEDULER: &str = "hami-scheduler";
/// KAI Scheduler / Run:ai fraction annotations.
const FRACTION: &str = "gpu-fraction";
const FRACTION_MEMORY: &str = "gpu-memory";
const FRACTION_DEVICES: &str = "gpu-fraction-num-devices";
const FRACTION_MPS: &str = "mps";
/// Environment variables kept on a container: the ones that change isolation or device visibility,
/// and the DCGM exporter's (`gpu_trust_model::stack::EXPORTER_ENV_PREFIXES`).
const KEPT_ENV_PREFIXES: &[&str] = &["CUDA_", "NVIDIA_", "LD_PRELOAD", "HAMI_"];

/// Labels and annotations that mark a pod as part of a gang (training) job: coscheduling
/// (`scheduling.x-k8s.io/pod-group`), Volcano (`scheduling.k8s.io/group-name`,
/// `volcano.sh/job-name`), Kubeflow training operator (`training.kubeflow.org/job-name`), JobSet
/// (`jobset.sigs.k8s.io/jobset-name`), Kueue pod groups (`kueue.x-k8s.io/pod-group-name`).
const GANG_KEYS: &[&str] = &[
    "scheduling.x-k8s.io/pod-group",
    "pod-group.scheduling.sigs.k8s.io",
    "scheduling.k8s.io/group-name",
    "volcano.sh/job-name",
    "training.kubeflow.org/job-name",
    "training.kubeflow.org/replica-type",
    "jobset.sigs.k8s.io/jobset-name",
    "kueue.x-k8s.io/pod-group-name",
];
/// Distributed-training launchers on a command line.
const TRAINING_PROGRAMS: &[&str] = &[
    "torchrun",
    "torch.distributed.run",
    "torch.distributed.launch",
    "deepspeed",
    "horovodrun",
    "accelerate",
];
/// Notebook servers: Kubeflow Notebooks label their pods `notebook-name`; Jupyter images.
const NOTEBOOK_LABEL: &str = "notebook-name";
const NOTEBOOK_IMAGES: &[&str] = &["jupyter", "notebook"];

/// What a pod spec says, before placement.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parts {
    pub gpu: GpuRequest,
    pub containers: Vec<ContainerInfo>,
    pub pod_security: PodSecurity,
    pub inference: Option<gpu_trust_model::fleet::InferenceServer>,
    pub peak_memory_mib: Option<u64>,
    pub scheduler_name: Option<String>,
    pub service_account: Option<String>,
    pub constraints: Constraints,
    /// `spec.resourceClaims`: (name in the pod, ResourceClaim name, ResourceClaimTemplate name).
    pub claims: Vec<(String, Option<String>, Option<String>)>,
    /// GPU UUIDs from HAMi's allocation annotation.
    pub allocated: Vec<String>,
    /// Marks of a training job: gang labels or a distributed launcher.
    pub training: bool,
    /// Resource quantities that are not quantities (`container: name=value`): the API server would
    /// reject the object.
    pub invalid: Vec<String>,
    pub notebook: bool,
}

pub(crate) fn pod_parts(
    spec: &core::PodSpec,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> Parts {
    let mut containers = Vec::with_capacity(spec.containers.len());
    let mut invalid = Vec::new();
    for c in spec.init_containers.iter().flatten() {
        containers.push(container(c, true, &mut invalid));
    }
    for c in &spec.containers {
        containers.push(container(c, false, &mut invalid));
    }
    // Effective request per resource: the larger of the app containers' sum and the largest init
    // container (the kubelet's rule for pod requests).
    let mut sum: BTreeMap<String, u64> = BTreeMap::new();
    let mut init_max: BTreeMap<String, u64> = BTreeMap::new();
    for c in &containers {
        for (k, v) in &c.resources {
            if c.is_init {
                let e = init_max.entry(k.clone()).or_default();
                *e = (*e).max(*v);
            } else {
                *sum.entry(k.clone()).or_default() += *v;
            }
        }
    }
    for (k, v) in init_max {
        let e = sum.entry(k).or_default();
        *e = (*e).max(v);
    }
    let resources: BTreeMap<String, u64> = sum.into_iter().filter(|(_, v)| *v > 0).collect();

    let scheduler_name = spec.scheduler_name.clone().filter(|s| !s.is_empty());
    let control_disabled = containers.iter().any(|c| {
        c.env
            .get("CUDA_DISABLE_CONTROL")
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
    });
    let allocated = annotations
        .get(HAMI_ALLOCATED)
        .map(|a| uuids(a))
        .unwrap_or_default();
    let hami_resources = resource::HAMI_RESOURCES
        .iter()
        .any(|r| resources.contains_key(*r));
    let hami_marked = scheduler_name.as_deref() == Some(HAMI_SCHEDULER)
        || HAMI_ANNOTATIONS
            .iter()
            .any(|a| annotations.contains_key(*a));
    let hami = (hami_resources || hami_marked).then(|| HamiRequest {
        gpus: resources.get(resource::GPU).copied().unwrap_or(0),
        memory_mib: resources.get(resource::HAMI_MEMORY).copied(),
        memory_percentage: resources.get(resource::HAMI_MEMORY_PERCENTAGE).copied(),
        cores_percent: resources.get(resource::HAMI_CORES).copied(),
        mode: annotations.get(HAMI_VGPU_MODE).cloned(),
        control_disabled,
    });
    let fraction = fraction(annotations, labels, scheduler_name.as_deref());
    let claims: Vec<(String, Option<String>, Option<String>)> = spec
        .resource_claims
        .iter()
        .flatten()
        .map(|c| {
            (
                c.name.clone(),
                c.resource_claim_name.clone(),
                c.resource_claim_template_name.clone(),
            )
        })
        .collect();

    let mut host_paths: Vec<String> = spec
        .volumes
        .iter()
        .flatten()
        .filter_map(|v| v.host_path.as_ref().map(|h| h.path.clone()))
        .collect();
    host_paths.sort();
    host_paths.dedup();
    let mut cdi: Vec<String> = annotations
        .iter()
        .filter(|(k, _)| k.starts_with("cdi.k8s.io/") || k.starts_with("nvidia.cdi.k8s.io/"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    cdi.sort();
    let pod_security = PodSecurity {
        host_pid: spec.host_pid.unwrap_or(false),
        host_ipc: spec.host_ipc.unwrap_or(false),
        host_network: spec.host_network.unwrap_or(false),
        runtime_class_name: spec.runtime_class_name.clone(),
        host_paths,
        cdi_annotations: cdi,
    };
    let inference = inference::detect(&containers);
    let training = GANG_KEYS
        .iter()
        .any(|k| labels.contains_key(*k) || annotations.contains_key(*k))
        || containers.iter().any(|c| {
            c.argv.iter().take(8).any(|a| {
                let base = a.rsplit('/').next().unwrap_or(a);
                TRAINING_PROGRAMS.contains(&base)
                    || a.split_whitespace().any(|w| TRAINING_PROGRAMS.contains(&w))
            })
        });
    let notebook = labels.contains_key(NOTEBOOK_LABEL)
        || containers.iter().any(|c| {
            let name = crate::util::image_name(&c.image).to_ascii_lowercase();
            NOTEBOOK_IMAGES.iter().any(|n| name.contains(n))
        });
    // HAMi's memory and core shares are accounted by its scheduler, not advertised by nodes.
    let requested: Vec<String> = resources
        .keys()
        .filter(|k| !resource::HAMI_RESOURCES.contains(&k.as_str()) && k.as_str() != HAMI_PRIORITY)
        .cloned()
        .collect();
    let constraints = Constraints::from_spec(spec, requested);
    let peak_memory_mib = hami.as_ref().and_then(|h| h.memory_mib);
    Parts {
        gpu: GpuRequest {
            resources,
            hami,
            fraction,
            dra: Vec::new(),
        },
        containers,
        pod_security,
        inference,
        peak_memory_mib,
        scheduler_name,
        service_account: Some(
            spec.service_account_name
                .clone()
                .or_else(|| spec.service_account.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "default".to_string()),
        ),
        constraints,
        claims,
        allocated,
        training,
        notebook,
        invalid,
    }
}

fn container(c: &core::Container, is_init: bool, invalid: &mut Vec<String>) -> ContainerInfo {
    let mut argv = c.command.clone().unwrap_or_default();
    argv.extend(c.args.iter().flatten().cloned());
    let mut env = BTreeMap::new();
    let mut visible = None;
    for e in c.env.iter().flatten() {
        if !KEPT_ENV_PREFIXES
            .iter()
            .chain(gpu_trust_model::stack::EXPORTER_ENV_PREFIXES)
            .any(|p| e.name.starts_with(p))
        {
            continue;
        }
        let value = match (&e.value, &e.value_from) {
            (Some(v), _) => v.clone(),
            (None, Some(_)) => "<valueFrom>".to_string(),
            (None, None) => String::new(),
        };
        if e.name == "NVIDIA_VISIBLE_DEVICES" {
            visible = Some(value.clone());
        }
        env.insert(e.name.clone(), value);
    }
    let mut resources = BTreeMap::new();
    if let Some(r) = &c.resources {
        // Limits, or requests where no limit is set (extended resources need both equal anyway).
        let limits = r.limits.as_ref();
        let requests = r.requests.as_ref();
        let names = limits
            .into_iter()
            .flat_map(|m| m.keys())
            .chain(requests.into_iter().flat_map(|m| m.keys()));
        for name in names {
            if !name.contains('/') || resources.contains_key(name) {
                continue;
            }
            let q = limits
                .and_then(|m| m.get(name))
                .or_else(|| requests.and_then(|m| m.get(name)));
            if let Some(q) = q {
                match quantity_u64(&q.0) {
                    Some(v) => {
                        resources.insert(name.clone(), v);
                    }
                    None => invalid.push(format!("container {}: {name}={}", c.name, q.0)),
                }
            }
        }
    }
    let sc = c.security_context.as_ref();
    let mut added_capabilities: Vec<String> = sc
        .and_then(|s| s.capabilities.as_ref())
        .and_then(|caps| caps.add.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|cap| cap.trim_start_matches("CAP_").to_ascii_uppercase())
        .collect();
    added_capabilities.sort();
    added_capabilities.dedup();
    ContainerInfo {
        name: c.name.clone(),
        image: c.image.clone().unwrap_or_default(),
        argv,
        privileged: sc.and_then(|s| s.privileged).unwrap_or(false),
        added_capabilities,
        nvidia_visible_devices: visible,
        env,
        resources,
        is_init,
    }
}

fn fraction(
    annotations: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
    scheduler: Option<&str>,
) -> Option<FractionRequest> {
    let f = annotations.get(FRACTION);
    let m = annotations.get(FRACTION_MEMORY);
    if f.is_none() && m.is_none() {
        return None;
    }
    // Run:ai's scheduler and queue label; KAI Scheduler (its open-source successor) otherwise.
    let runai = scheduler == Some("runai-scheduler") || labels.contains_key("runai/queue");
    Some(FractionRequest {
        scheduler: if runai {
            FractionScheduler::RunAi
        } else {
            FractionScheduler::Kai
        },
        fraction: f.and_then(|v| v.trim().parse::<f64>().ok()),
        memory_mib: m.and_then(|v| quantity_u64(v)),
        num_devices: annotations
            .get(FRACTION_DEVICES)
            .and_then(|v| v.trim().parse().ok()),
        mps: annotations
            .get(FRACTION_MPS)
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
    })
}

/// The class of a workload from its kind and what its spec shows (policy `workloads` entries are
/// applied later, by the consumer of the fleet).
pub(crate) fn classify(kind: WorkloadKind, parts: &Parts) -> WorkloadClass {
    if kind.is_training_kind() || parts.training {
        WorkloadClass::Training
    } else if parts.inference.is_some() {
        WorkloadClass::Inference
    } else if parts.notebook {
        WorkloadClass::Notebook
    } else if matches!(kind, WorkloadKind::Job | WorkloadKind::CronJob) {
        WorkloadClass::Batch
    } else {
        WorkloadClass::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(yaml: &str, annotations: &[(&str, &str)]) -> Parts {
        let spec: core::PodSpec =
            gpu_trust_source::parse_value(yaml, "t.yaml", &Default::default(), 0).unwrap();
        let a = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pod_parts(&spec, &BTreeMap::new(), &a)
    }

    #[test]
    fn requests_take_the_larger_of_app_sum_and_init_max() {
        let p = parts(
            "initContainers:\n- {name: i, resources: {limits: {nvidia.com/gpu: 3}}}\ncontainers:\n- {name: a, resources: {limits: {nvidia.com/gpu: 1}}}\n- {name: b, resources: {requests: {nvidia.com/gpu: '1'}}}\n",
            &[],
        );
        assert_eq!(p.gpu.resources["nvidia.com/gpu"], 3);
        assert_eq!(p.constraints.resources, ["nvidia.com/gpu"]);
    }

    #[test]
    fn hami_request_and_allocation() {
        let p = parts(
            "schedulerName: hami-scheduler\ncontainers:\n- name: a\n  resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 10000, nvidia.com/gpucores: 30}}\n  env: [{name: CUDA_DISABLE_CONTROL, value: 'true'}, {name: HOME, value: /root}]\n",
            &[(HAMI_ALLOCATED, "GPU-0a1b,NVIDIA,10000,30:;")],
        );
        let h = p.gpu.hami.unwrap();
        assert_eq!(
            (h.gpus, h.memory_mib, h.cores_percent),
            (1, Some(10000), Some(30))
        );
        assert!(h.control_disabled);
        assert_eq!(p.allocated, ["GPU-0a1b"]);
        assert_eq!(p.peak_memory_mib, Some(10000));
        assert!(!p.containers[0].env.contains_key("HOME"));
    }

    #[test]
    fn kai_fraction_and_security() {
        let p = parts(
            "schedulerName: kai-scheduler\nhostIPC: true\nvolumes: [{name: mps, hostPath: {path: /run/nvidia/mps}}]\ncontainers:\n- name: a\n  securityContext: {privileged: true, capabilities: {add: [CAP_SYS_ADMIN]}}\n  env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n",
            &[("gpu-fraction", "0.5"), ("nvidia.cdi.k8s.io/gpu", "nvidia.com/gpu=all")],
        );
        let f = p.gpu.fraction.unwrap();
        assert_eq!(
            (f.scheduler, f.fraction),
            (FractionScheduler::Kai, Some(0.5))
        );
        assert!(p.pod_security.host_ipc);
        assert_eq!(p.pod_security.host_paths, ["/run/nvidia/mps"]);
        assert_eq!(
            p.pod_security.cdi_annotations,
            ["nvidia.cdi.k8s.io/gpu=nvidia.com/gpu=all"]
        );
        assert!(p.containers[0].privileged);
        assert_eq!(p.containers[0].added_capabilities, ["SYS_ADMIN"]);
        assert_eq!(
            p.containers[0].nvidia_visible_devices.as_deref(),
            Some("all")
        );
    }

    #[test]
    fn classes() {
        let t = parts(
            "containers: [{name: a, image: pytorch, command: [torchrun, train.py]}]\n",
            &[],
        );
        assert_eq!(classify(WorkloadKind::Job, &t), WorkloadClass::Training);
        let i = parts(
            "containers: [{name: a, image: 'vllm/vllm-openai:v0.6.0'}]\n",
            &[],
        );
        assert_eq!(
            classify(WorkloadKind::Deployment, &i),
            WorkloadClass::Inference
        );
        let b = parts("containers: [{name: a, image: busybox}]\n", &[]);
        assert_eq!(classify(WorkloadKind::CronJob, &b), WorkloadClass::Batch);
        assert_eq!(
            classify(WorkloadKind::PyTorchJob, &b),
            WorkloadClass::Training
        );
        assert_eq!(classify(WorkloadKind::Pod, &b), WorkloadClass::Unknown);
    }
}
