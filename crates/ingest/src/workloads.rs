//! From a pod spec (of a Pod or of a workload's template) to what the model records: what it requests
//! of GPUs, its containers, what reaches the host, an inference server, its class, its constraints.

use crate::inference;
use crate::placement::Constraints;
use crate::util::quantity_u64;
use gpu_trust_model::fleet::{
    ContainerInfo, FractionRequest, GpuRequest, HamiRequest, PodSecurity, WorkloadClass,
    WorkloadKind,
};
use gpu_trust_model::isolation::{FractionNames, Key, Mechanism, Request};
use k8s_openapi::api::core::v1 as core;
use std::collections::BTreeMap;

/// How a request names a vGPU, a fraction or its scheduler is written once, in the rows of
/// `gpu_trust_model::isolation`. HAMi's task priority resource (Project-HAMi/HAMi `docs/config.md`,
/// `resourcePriority`) is read only here.
const HAMI_PRIORITY: &str = "nvidia.com/priority";

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
    /// What schedulers recorded on the pod about its devices.
    pub records: crate::records::Records,
    /// Marks of a training job: gang labels or a distributed launcher.
    pub training: bool,
    /// Resource quantities that are not quantities (`container: name=value`): the API server would
    /// reject the object.
    pub invalid: Vec<String>,
    /// hostPaths the API server refuses or that cannot be judged (`volume: path: why`).
    pub refused_paths: Vec<String>,
    pub notebook: bool,
    /// What containers' environments take from ConfigMaps and Secrets, by container index.
    pub env_refs: Vec<(usize, crate::env::Refs)>,
}

pub(crate) fn pod_parts(
    spec: &core::PodSpec,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> Parts {
    let mut containers = Vec::with_capacity(spec.containers.len());
    let mut invalid = Vec::new();
    let mut env_refs = Vec::new();
    let mut add = |c: &core::Container, is_init: bool, containers: &mut Vec<ContainerInfo>| {
        let r = crate::env::refs(c.env.as_deref(), c.env_from.as_deref());
        if !r.is_empty() {
            env_refs.push((containers.len(), r));
        }
        containers.push(container(c, is_init, &mut invalid));
    };
    for c in spec.init_containers.iter().flatten() {
        add(c, true, &mut containers);
    }
    for c in &spec.containers {
        add(c, false, &mut containers);
    }
    // Ephemeral containers (`kubectl debug`) run in the pod like the others, with the same security
    // context and environment; the API server refuses resources on them, so they request nothing.
    for e in spec.ephemeral_containers.iter().flatten() {
        add(&ephemeral(e), false, &mut containers);
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
    let records = crate::records::read(annotations, labels);
    // A vGPU: the first mechanism of the isolation table whose vGPU names mark the request.
    let vgpu = Mechanism::ALL.into_iter().find_map(|m| {
        let request = m.row().request;
        let names = request.vgpu?;
        request
            .marks(&resources, annotations, scheduler_name.as_deref(), labels)
            .then_some((m, names))
    });
    let hami = vgpu.map(|(m, names)| HamiRequest {
        gpus: resources.get(names.count).copied().unwrap_or(0),
        memory_mib: resources.get(names.memory).copied(),
        memory_percentage: names
            .memory_percentage
            .and_then(|r| resources.get(r).copied()),
        cores_percent: resources.get(names.cores).copied(),
        mode: annotations.get(names.mode).cloned(),
        control_disabled,
        via: (m != Mechanism::HamiVgpu).then_some(m),
    });
    let rows = Mechanism::ALL.map(|m| (m, &m.row().request));
    let fraction = fraction(rows, annotations, labels, scheduler_name.as_deref());
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

    let mut host_paths: Vec<String> = Vec::new();
    let mut refused_paths = Vec::new();
    let mut empty_dirs = Vec::new();
    for v in spec.volumes.iter().flatten() {
        if v.empty_dir.is_some() {
            empty_dirs.push(v.name.clone());
        }
        let Some(h) = &v.host_path else { continue };
        match gpu_trust_model::host::normalise_host_path(&h.path) {
            Ok(p) => host_paths.push(p),
            Err(why) => {
                refused_paths.push(format!("volume {}: hostPath {:?}: {why}", v.name, h.path))
            }
        }
    }
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
        runtime_handler: None,
        host_paths,
        cdi_annotations: cdi,
        empty_dirs,
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
    // A vGPU's memory and core shares that its scheduler accounts are not advertised by nodes.
    let accounted = vgpu.map_or(&[][..], |(_, names)| names.accounted);
    let requested: Vec<String> = resources
        .keys()
        .filter(|k| !accounted.contains(&k.as_str()) && k.as_str() != HAMI_PRIORITY)
        .cloned()
        .collect();
    let mut constraints = Constraints::from_spec(spec, requested);
    constraints.many = constraints
        .resources
        .iter()
        .filter(|r| {
            containers
                .iter()
                .any(|c| c.resources.get(*r).is_some_and(|q| *q > 1))
        })
        .cloned()
        .collect();
    let peak_memory_mib = hami.as_ref().and_then(|h| h.memory_mib);
    Parts {
        gpu: GpuRequest {
            resources,
            hami,
            fraction,
            dra: Vec::new(),
            unmapped: Vec::new(),
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
        records,
        training,
        notebook,
        invalid,
        refused_paths,
        env_refs,
    }
}

/// An ephemeral container as a container: what the audit reads of it (its name, image, command,
/// environment and security context); its resources, which the API server refuses, are dropped.
fn ephemeral(e: &core::EphemeralContainer) -> core::Container {
    core::Container {
        name: e.name.clone(),
        image: e.image.clone(),
        command: e.command.clone(),
        args: e.args.clone(),
        env: e.env.clone(),
        env_from: e.env_from.clone(),
        security_context: e.security_context.clone(),
        ..core::Container::default()
    }
}

fn container(c: &core::Container, is_init: bool, invalid: &mut Vec<String>) -> ContainerInfo {
    let mut argv = c.command.clone().unwrap_or_default();
    argv.extend(c.args.iter().flatten().cloned());
    let mut env = BTreeMap::new();
    let mut visible = None;
    for e in c.env.iter().flatten() {
        if !crate::env::kept(&e.name) {
            continue;
        }
        let value = match (&e.value, &e.value_from) {
            (Some(v), _) => v.clone(),
            (None, Some(_)) => crate::env::FROM_ELSEWHERE.to_string(),
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
        .map(|cap| {
            let cap = cap.trim().to_ascii_uppercase();
            cap.strip_prefix("CAP_").map_or(cap.clone(), str::to_string)
        })
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
        visible_devices_secrets: Vec::new(),
        env,
        resources,
        is_init,
    }
}

/// The fraction a pod's annotations spell in the names of one of `rows` (the isolation table's, or in
/// a test some of its own): of the first row whose schedulers or labels mark the pod, else of the
/// first whose names the pod carries. `None` when it carries no row's fraction or memory.
fn fraction<'r>(
    rows: impl IntoIterator<Item = (Mechanism, &'r Request)>,
    annotations: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
    scheduler: Option<&str>,
) -> Option<FractionRequest> {
    let number = |key: Key| {
        let value = match key {
            Key::Pod(k) => annotations.get(k),
            _ => annotations
                .iter()
                .find(|(k, _)| key.matches(k))
                .map(|(_, v)| v),
        };
        value.map(|v| v.trim())
    };
    let carried: Vec<(Mechanism, &Request, FractionNames)> = rows
        .into_iter()
        .filter_map(|(m, r)| Some((m, r, r.fraction?)))
        .filter(|(_, _, n)| {
            let mut keys = std::iter::once(n.fraction).chain(n.memory.iter().map(|(k, _)| *k));
            keys.any(|k| number(k).is_some())
        })
        .collect();
    let (m, _, names) = carried
        .iter()
        .find(|(_, r, _)| r.marks(&BTreeMap::new(), &BTreeMap::new(), scheduler, labels))
        .or_else(|| carried.first())?;
    Some(FractionRequest {
        scheduler: *m,
        fraction: number(names.fraction).and_then(|v| v.parse::<f64>().ok()),
        memory_mib: names
            .memory
            .iter()
            .find_map(|(k, per_mib)| quantity_u64(number(*k)?).map(|v| v / per_mib)),
        num_devices: number(names.devices).and_then(|v| v.parse().ok()),
        mps: names.mps.iter().any(|(key, value)| {
            annotations
                .iter()
                .any(|(k, v)| key.matches(k) && v.trim().eq_ignore_ascii_case(value))
        }),
    })
}

/// The handler of runtime class `name`: its RuntimeClass's in the input, or for a class the GPU
/// Operator creates (`gpu_trust_model::host::NVIDIA_RUNTIME_HANDLERS`, name and handler equal) the
/// name; `None` for any other class the input lacks.
pub(crate) fn runtime_handler(
    name: &str,
    classes: &[gpu_trust_model::fleet::RuntimeClassInfo],
) -> Option<String> {
    match classes.binary_search_by(|c| c.name.as_str().cmp(name)) {
        Ok(i) => classes.get(i).map(|c| c.handler.clone()),
        Err(_) => gpu_trust_model::host::is_nvidia_runtime_handler(name).then(|| name.to_string()),
    }
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
            &[(gpu_trust_model::isolation::HAMI_ALLOCATED, "GPU-0a1b,NVIDIA,10000,30:;")],
        );
        let h = p.gpu.hami.unwrap();
        assert_eq!(
            (h.gpus, h.memory_mib, h.cores_percent),
            (1, Some(10000), Some(30))
        );
        assert!(h.control_disabled);
        let uuids: Vec<_> = p.records.devices.iter().map(|d| &d.device).collect();
        assert_eq!(
            uuids,
            [&gpu_trust_model::fleet::PhysicalDevice::Gpu(
                "GPU-0a1b".into()
            )]
        );
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
            (Mechanism::KaiFraction, Some(0.5))
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

    /// A fractional scheduler is read from its row alone: a row built here, with keys no vendor
    /// uses, under Run:ai's id, is read as that id's fraction, preferred to KAI's where its
    /// scheduler marks the pod.
    #[test]
    fn a_row_of_its_own_is_read_as_its_fraction() {
        let row = Request {
            schedulers: &["example-scheduler"],
            fraction: Some(FractionNames {
                fraction: Key::Pod("example.com/share"),
                memory: &[(Key::Container("example.com/", ".memory"), 1 << 20)],
                devices: Key::Pod("example.com/gpus"),
                mps: &[(Key::Pod("example.com/mode"), "mps")],
                on_mps: None,
                recorded: &[],
            }),
            ..Mechanism::KaiFraction.row().request
        };
        let kai = &Mechanism::KaiFraction.row().request;
        let rows = [
            (Mechanism::KaiFraction, kai),
            (Mechanism::RunaiFraction, &row),
        ];
        let a: BTreeMap<String, String> = [
            ("example.com/share", " 0.25"),
            ("example.com/main.memory", "4Gi"),
            ("example.com/gpus", "2"),
            ("example.com/mode", "MPS"),
            ("gpu-fraction", "0.5"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let none = BTreeMap::new();
        let f = fraction(rows, &a, &none, Some("example-scheduler")).unwrap();
        assert_eq!(f.scheduler, Mechanism::RunaiFraction);
        assert_eq!(
            (f.fraction, f.memory_mib, f.num_devices, f.mps),
            (Some(0.25), Some(4096), Some(2), true)
        );
        // Another scheduler: the first row whose names the pod carries.
        let f = fraction(rows, &a, &none, None).unwrap();
        assert_eq!(
            (f.scheduler, f.fraction),
            (Mechanism::KaiFraction, Some(0.5))
        );
        // Neither row's names: no fraction.
        assert!(fraction(rows, &none, &none, Some("example-scheduler")).is_none());
    }

    #[test]
    fn ephemeral_containers_capabilities_and_host_paths() {
        let p = parts(
            "containers: [{name: a}]\nephemeralContainers:\n- name: dbg\n  image: busybox\n  securityContext: {privileged: true, capabilities: {add: [cap_sys_admin, all]}}\n  env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n  resources: {limits: {nvidia.com/gpu: 1}}\nvolumes:\n- {name: a, hostPath: {path: //dev}}\n- {name: b, hostPath: {path: /run//nvidia/}}\n- {name: c, hostPath: {path: /./dev/}}\n",
            &[],
        );
        let dbg = &p.containers[1];
        assert_eq!(dbg.name, "dbg");
        assert!(dbg.privileged);
        assert_eq!(dbg.added_capabilities, ["ALL", "SYS_ADMIN"]);
        assert_eq!(dbg.nvidia_visible_devices.as_deref(), Some("all"));
        // The API server refuses resources on ephemeral containers: they request nothing.
        assert!(p.gpu.resources.is_empty());
        assert_eq!(p.pod_security.host_paths, ["/dev", "/run/nvidia"]);
        assert!(p.refused_paths.is_empty());

        let p = parts(
            "containers: [{name: a}]\nvolumes: [{name: up, hostPath: {path: /data/../dev}}, {name: rel, hostPath: {path: dev}}]\n",
            &[],
        );
        assert_eq!(p.refused_paths.len(), 2, "{:?}", p.refused_paths);
        assert!(p.refused_paths[0].contains("`..`"), "{:?}", p.refused_paths);
        assert!(p.pod_security.host_paths.is_empty());
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
