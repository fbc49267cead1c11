//! Test fleets built in code: nodes, pods and templates with what the rules read, and a policy in
//! YAML, fed through the real policy resolution and the real audit.

#![allow(dead_code)]

use gpu_trust_model::fleet::{
    Binding, ConfigSource, ContainerInfo, Fleet, FractionRequest, GpuNode, GpuRequest, HamiRequest,
    InferenceEngine, InferenceServer, MigSlot, MigStrategy, NamespaceInfo, Node, PhysicalDevice,
    PhysicalGpu, PolicyRule, RecordedDevice, SharingConfig, SharingStrategy, Subject, Workload,
    WorkloadClass, WorkloadKind,
};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::report::{AuditReport, Finding};
use gpu_trust_model::{Location, ObjectRef, Version};
use gpu_trust_policy::{Date, Tenancy};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use std::collections::BTreeMap;

pub const FILE: &str = "cluster.yaml";

pub fn today() -> Date {
    Date::new(2026, 6, 1).unwrap()
}

fn obj(kind: &str, ns: Option<&str>, name: &str, line: u32) -> ObjectRef {
    ObjectRef {
        kind: kind.to_string(),
        namespace: ns.map(str::to_string),
        name: name.to_string(),
        location: Location::new(FILE, line, 1),
    }
}

/// A GPU node description.
#[derive(Clone)]
pub struct NodeSpec {
    pub name: String,
    pub gpus: u32,
    pub product: Option<String>,
    pub model: Option<String>,
    pub strategy: SharingStrategy,
    pub replicas: BTreeMap<String, u32>,
    pub mig: Option<(MigStrategy, Vec<Vec<&'static str>>)>,
    pub driver: Option<&'static str>,
    pub toolkit: Option<&'static str>,
    pub cc: Option<&'static str>,
    pub hami: bool,
    pub gpu: bool,
    pub memory_mib: Option<u64>,
    pub labels: BTreeMap<String, String>,
}

impl NodeSpec {
    pub fn new(name: &str, gpus: u32) -> NodeSpec {
        NodeSpec {
            name: name.to_string(),
            gpus,
            product: Some("NVIDIA-H100-80GB-HBM3".to_string()),
            model: Some("H100-SXM5-80GB".to_string()),
            strategy: SharingStrategy::None,
            replicas: BTreeMap::new(),
            mig: None,
            driver: Some("580.95.05"),
            toolkit: None,
            cc: None,
            hami: false,
            gpu: true,
            memory_mib: Some(81_559),
            labels: BTreeMap::new(),
        }
    }

    pub fn cpu(name: &str) -> NodeSpec {
        NodeSpec {
            gpu: false,
            ..NodeSpec::new(name, 0)
        }
    }

    pub fn time_sliced(mut self, replicas: u32) -> Self {
        self.strategy = SharingStrategy::TimeSlicing;
        self.replicas.insert("nvidia.com/gpu".into(), replicas);
        self
    }

    pub fn mps(mut self, replicas: u32) -> Self {
        self.strategy = SharingStrategy::Mps;
        self.replicas.insert("nvidia.com/gpu".into(), replicas);
        self
    }

    /// Mixed-strategy MIG with the same layout on every GPU.
    pub fn mig(mut self, layout: &[&'static str]) -> Self {
        self.mig = Some((
            MigStrategy::Mixed,
            (0..self.gpus).map(|_| layout.to_vec()).collect(),
        ));
        self
    }

    pub fn driver(mut self, v: Option<&'static str>) -> Self {
        self.driver = v;
        self
    }

    pub fn toolkit(mut self, v: &'static str) -> Self {
        self.toolkit = Some(v);
        self
    }

    pub fn cc(mut self, mode: &'static str) -> Self {
        self.cc = Some(mode);
        self
    }

    pub fn hami(mut self) -> Self {
        self.hami = true;
        self
    }

    fn build(&self, line: u32) -> Node {
        let gpu = self.gpu.then(|| {
            let layouts = self.mig.as_ref().map(|(_, l)| l.clone());
            GpuNode {
                product: self.product.clone(),
                model: self.model.clone(),
                count: self.gpus,
                memory_mib: self.memory_mib,
                driver_version: self.driver.and_then(Version::parse),
                toolkit_version: self.toolkit.and_then(Version::parse),
                operator_version: None,
                cc_mode: self.cc.map(str::to_string),
                mig_strategy: self.mig.as_ref().map_or(MigStrategy::None, |(s, _)| *s),
                sharing: SharingConfig {
                    source: ConfigSource::ConfigMap {
                        namespace: "gpu-operator".into(),
                        name: "device-plugin-config".into(),
                        key: format!("{}-config", self.name),
                        config: None,
                    },
                    strategy: self.strategy,
                    rename_by_default: false,
                    fail_requests_greater_than_one: false,
                    replicas: self.replicas.clone(),
                    device_list_strategy: vec!["envvar".into()],
                    allocation_policy: None,
                },
                gpus: (0..self.gpus)
                    .map(|i| {
                        let mig: Vec<MigSlot> = layouts
                            .as_ref()
                            .and_then(|l| l.get(i as usize))
                            .map(|l| {
                                l.iter()
                                    .map(|p| MigSlot {
                                        profile: p.to_string(),
                                        start: None,
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        PhysicalGpu {
                            index: i,
                            uuid: Some(format!("GPU-{}-{i}", self.name)),
                            mig_enabled: !mig.is_empty(),
                            mig,
                        }
                    })
                    .collect(),
                hami: self.hami,
                mig_source: None,
                advertised: None,
                platforms: Vec::new(),
                unknown: Vec::new(),
                workload: Default::default(),
            }
        });
        Node {
            object: obj("Node", None, &self.name, line),
            name: self.name.clone(),
            labels: self.labels.clone(),
            taints: vec![],
            gpu,
        }
    }
}

/// A workload description; `node` is a node name (scheduled) and `permitted` node names.
#[derive(Clone)]
pub struct W {
    pub w: Workload,
    pub node: Option<String>,
    pub permitted: Vec<String>,
}

impl W {
    pub fn pod(ns: &str, name: &str) -> W {
        W {
            w: Workload {
                object: obj("Pod", Some(ns), name, 1),
                namespace: ns.to_string(),
                kind: WorkloadKind::Pod,
                role: None,
                replicas: 1,
                class: WorkloadClass::Unknown,
                labels: BTreeMap::new(),
                annotations: BTreeMap::new(),
                scheduler_name: None,
                service_account: None,
                gpu: GpuRequest::default(),
                containers: vec![ContainerInfo {
                    name: "main".into(),
                    image: "registry.example/app:1".into(),
                    ..ContainerInfo::default()
                }],
                pod_security: Default::default(),
                inference: None,
                peak_memory_mib: None,
                placement: Default::default(),
                owner: None,
            },
            node: None,
            permitted: vec![],
        }
    }

    pub fn template(kind: WorkloadKind, ns: &str, name: &str) -> W {
        let mut w = W::pod(ns, name);
        w.w.kind = kind;
        w.w.object.kind = format!("{kind:?}");
        w
    }

    pub fn on(mut self, node: &str) -> Self {
        self.node = Some(node.to_string());
        self
    }

    pub fn permitted(mut self, nodes: &[&str]) -> Self {
        self.permitted = nodes.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn gpu(self, n: u64) -> Self {
        self.resource("nvidia.com/gpu", n)
    }

    pub fn resource(mut self, name: &str, n: u64) -> Self {
        self.w.gpu.resources.insert(name.to_string(), n);
        self.w.containers[0].resources.insert(name.to_string(), n);
        self
    }

    /// A DRA claim on NVIDIA's `gpu.nvidia.com` class: the namespace's `shared` ResourceClaim, or
    /// one of the pod's own from a template.
    pub fn dra(mut self, shared: bool, strategy: gpu_trust_model::fleet::DraStrategy) -> Self {
        self.w.gpu.dra.push(gpu_trust_model::fleet::DraClaimUse {
            claim: shared.then(|| format!("{}/shared", self.w.namespace)),
            template: (!shared).then(|| "gpu".to_string()),
            device_class: Some("gpu.nvidia.com".into()),
            strategy,
            shareable: false,
        });
        self
    }

    pub fn hami(mut self, memory_mib: u64, uuids: &[&str]) -> Self {
        self.w.gpu.hami = Some(HamiRequest {
            gpus: 1,
            memory_mib: Some(memory_mib),
            ..HamiRequest::default()
        });
        self.w.peak_memory_mib = Some(memory_mib);
        self.w.placement.recorded = uuids
            .iter()
            .map(|u| RecordedDevice {
                by: Mechanism::HamiVgpu,
                device: PhysicalDevice::Gpu(u.to_string()),
                part: None,
            })
            .collect();
        self
    }

    pub fn kai(self, fraction: f64) -> Self {
        let mut b = self.fraction(Mechanism::KaiFraction, fraction);
        b.w.scheduler_name = Some("kai-scheduler".into());
        b
    }

    /// A fraction of the fractional scheduler of row `scheduler`.
    pub fn fraction(mut self, scheduler: Mechanism, fraction: f64) -> Self {
        self.w.gpu.fraction = Some(FractionRequest {
            scheduler,
            fraction: Some(fraction),
            memory_mib: None,
            num_devices: None,
            mps: false,
        });
        self
    }

    pub fn class(mut self, c: WorkloadClass) -> Self {
        self.w.class = c;
        self
    }

    pub fn privileged(mut self) -> Self {
        self.w.containers[0].privileged = true;
        self
    }

    pub fn host_path(mut self, p: &str) -> Self {
        self.w.pod_security.host_paths.push(p.into());
        self
    }

    pub fn host_ipc(mut self) -> Self {
        self.w.pod_security.host_ipc = true;
        self
    }

    pub fn visible_devices(mut self, v: &str) -> Self {
        self.w.containers[0].nvidia_visible_devices = Some(v.into());
        self
    }

    pub fn vllm(mut self, fraction: Option<f64>) -> Self {
        self.w.class = WorkloadClass::Inference;
        self.w.inference = Some(InferenceServer {
            engine: InferenceEngine::Vllm,
            container: "main".into(),
            reserved_fraction: Some(fraction.unwrap_or(0.9)),
            flag: fraction.map(|_| "--gpu-memory-utilization".to_string()),
            via: None,
        });
        self
    }

    pub fn peak(mut self, mib: u64) -> Self {
        self.w.peak_memory_mib = Some(mib);
        self
    }

    /// The devices ingest resolved for a scheduled pod: `(gpu, instance)`; `observed` pins them.
    pub fn devices(mut self, slots: &[(u32, Option<u32>)], observed: bool) -> Self {
        self.w.placement.devices = slots
            .iter()
            .map(|(gpu, instance)| gpu_trust_model::fleet::DeviceSlot {
                gpu: *gpu,
                instance: *instance,
            })
            .collect();
        self.w.placement.observed = observed;
        self
    }

    pub fn owner(mut self, owner: &str) -> Self {
        self.w.owner = Some(owner.into());
        self
    }
}

/// A fleet under construction.
#[derive(Default, Clone)]
pub struct FleetSpec {
    pub nodes: Vec<NodeSpec>,
    pub workloads: Vec<W>,
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    pub bindings: Vec<Binding>,
    pub unresolved: Vec<gpu_trust_model::fleet::Unresolved>,
}

impl FleetSpec {
    pub fn node(mut self, n: NodeSpec) -> Self {
        self.nodes.push(n);
        self
    }

    pub fn workload(mut self, w: W) -> Self {
        self.workloads.push(w);
        self
    }

    pub fn namespace(mut self, name: &str, labels: &[(&str, &str)]) -> Self {
        self.namespaces.insert(
            name.to_string(),
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        self
    }

    pub fn binding(
        mut self,
        namespace: Option<&str>,
        role: &str,
        subjects: Vec<Subject>,
        rules: Vec<PolicyRule>,
    ) -> Self {
        let kind = if namespace.is_some() {
            "RoleBinding"
        } else {
            "ClusterRoleBinding"
        };
        self.bindings.push(Binding {
            object: obj(kind, namespace, &format!("{role}-binding"), 900),
            namespace: namespace.map(str::to_string),
            role: role.to_string(),
            subjects,
            rules,
            role_missing: false,
        });
        self
    }

    pub fn build(&self) -> Fleet {
        let mut nodes: Vec<NodeSpec> = self.nodes.clone();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        let index: BTreeMap<String, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        let mut node_sets: Vec<Vec<usize>> = vec![vec![]];
        let mut workloads: Vec<Workload> = self
            .workloads
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut w = spec.w.clone();
                w.object.location.line = 100 + i as u32 * 10;
                w.placement.node = spec.node.as_ref().map(|n| index[n]);
                let mut permitted: Vec<usize> = if spec.node.is_none() {
                    spec.permitted.iter().map(|n| index[n]).collect()
                } else {
                    spec.node.iter().map(|n| index[n]).collect()
                };
                permitted.sort();
                permitted.dedup();
                w.placement.permitted = match node_sets.iter().position(|s| *s == permitted) {
                    Some(i) => i,
                    None => {
                        node_sets.push(permitted);
                        node_sets.len() - 1
                    }
                };
                w
            })
            .collect();
        workloads.sort_by(|a, b| {
            (&a.namespace, a.kind, &a.object.name).cmp(&(&b.namespace, b.kind, &b.object.name))
        });
        let mut ns: BTreeMap<String, BTreeMap<String, String>> = self.namespaces.clone();
        for w in &workloads {
            ns.entry(w.namespace.clone()).or_default();
        }
        ns.entry("gpu-operator".into()).or_default();
        Fleet {
            nodes: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| n.build(10 + i as u32))
                .collect(),
            workloads,
            namespaces: ns
                .into_iter()
                .enumerate()
                .map(|(i, (name, labels))| NamespaceInfo {
                    object: Some(obj("Namespace", None, &name, 800 + i as u32)),
                    name,
                    labels,
                })
                .collect(),
            runtime_classes: vec![],
            cluster_policy: None,
            rbac: gpu_trust_model::fleet::Rbac {
                bindings: self.bindings.clone(),
            },
            resource_claims: vec![],
            unresolved: self.unresolved.clone(),
            node_sets,
            mig_requests: vec![],
            acceptances: Vec::new(),
            gpu_cluster: None,
            dra_classes: Vec::new(),
        }
    }
}

pub fn tenancy(fleet: &Fleet, policy: &str) -> Tenancy {
    let policy = if policy.trim().is_empty() {
        gpu_trust_policy::Policy::default()
    } else {
        gpu_trust_policy::parse(policy, "policy.yaml").expect("test policy parses")
    };
    policy.resolve(&fleet.namespaces)
}

pub fn run(spec: &FleetSpec, policy: &str) -> AuditReport {
    run_with(spec, policy, AuditOptions::new(today()))
}

pub fn run_with(spec: &FleetSpec, policy: &str, options: AuditOptions) -> AuditReport {
    let fleet = spec.build();
    let tenancy = tenancy(&fleet, policy);
    audit(&AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &options,
    })
}

pub fn of_rule<'a>(report: &'a AuditReport, code: &str) -> Vec<&'a Finding> {
    report.findings.iter().filter(|f| f.rule == code).collect()
}

pub fn json(findings: &[&Finding]) -> String {
    serde_json::to_string_pretty(findings).unwrap()
}

/// Two tenants, one per namespace, with a trust level.
pub fn two_tenants(trust: &str) -> String {
    format!(
        "tenants:\n  - {{name: acme, namespaces: [cust-acme]}}\n  - {{name: globex, namespaces: [cust-globex]}}\ntrust:\n  relations:\n    - {{tenants: [acme, globex], level: {trust}}}\n"
    )
}
