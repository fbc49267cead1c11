//! The plan for clusters that allocate GPUs with Dynamic Resource Allocation (`plan --emit DIR --dra`):
//! DeviceClasses, ResourceClaimTemplates and ResourceClaims of `resource.k8s.io/v1` (GA in Kubernetes
//! 1.34, KEP-4381) for NVIDIA's DRA driver for GPUs, and pod patches that reference the claims.
//!
//! The driver (NVIDIA/k8s-dra-driver-gpu, now kubernetes-sigs/dra-driver-nvidia-gpu) publishes each GPU
//! as a device of driver `gpu.nvidia.com` with the attribute `type` `gpu`, and each MIG instance with
//! `type` `mig` and `profile` (`1g.10gb`): `cmd/gpu-kubelet-plugin/deviceinfo.go` and `mig.go`,
//! `CommonAttributesMig`; its own DeviceClasses select them the same way
//! (`deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml`, `deviceclass-mig.yaml`).
//! How a device is shared is the opaque configuration of the claim, parameters of
//! `resource.nvidia.com/v1beta1` (`api/nvidia.com/resource/v1beta1`): `GpuConfig` with `sharing`
//! `TimeSlicing` (and `timeSlicingConfig.interval`) or `MPS` (and `mpsConfig`), `MigDeviceConfig` with
//! `sharing` `TimeSlicing` or `MPS` (no interval). MIG layouts stay static: the MIG manager applies the
//! mig-parted config the plan labels each node with, and the driver publishes the instances it finds.
//!
//! What the plan becomes:
//!
//! - one DeviceClass per kind of device the plan hands out: whole GPUs, and each MIG profile;
//! - a device the plan gives one replica (an exclusive GPU, a gang of GPUs, a MIG instance) is a
//!   ResourceClaimTemplate per workload: every pod gets a claim of its own, which no other pod can use;
//! - a device the plan shares (time-slicing, MPS) is one ResourceClaim, which the pods that name it
//!   share; a pod can only name a claim of its own namespace, so the plan is made with
//!   [`crate::SolveOptions::dra`] (one namespace per shared device), and a workload whose replicas
//!   the plan spreads over several shared devices runs as one group of replicas per claim;
//! - the opaque configuration sits in the claims, where the driver's admission webhook checks it
//!   (`cmd/webhook/main.go` validates ResourceClaims and ResourceClaimTemplates); it says the
//!   sharing explicitly, also for exclusive devices (a config without `sharing`), so that what each
//!   claim is for can be read from it.
//!
//! Sharing through a claim needs the driver's `TimeSlicingSettings` or `MPSSupport` feature gate
//! (alpha, off by default: `pkg/featuregates/featuregates.go`); the device plugin must not run on the
//! nodes the driver serves GPUs on (the driver's chart refuses `resources.gpus.enabled` next to it,
//! `templates/validation.yaml`).

use crate::file::PlanInput;
use crate::patch::{self, Objects, PodPatch, Request};
use crate::plan::{DeviceSharing, Plan, PlanGpu, PlanNode, PlanWorkload, POOL_LABEL};
use gpu_trust_model::catalogue;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The `apiVersion` of the DRA objects.
pub const RESOURCE_API: &str = "resource.k8s.io/v1";
/// The driver's name, and the domain of its device attributes.
pub const DRIVER: &str = "gpu.nvidia.com";
/// The group and version of the driver's opaque configuration.
pub const CONFIG_API: &str = "resource.nvidia.com/v1beta1";
/// The name of the request in every claim the plan writes.
pub const REQUEST: &str = "gpu";
/// The DeviceClass of whole GPUs.
pub const GPU_CLASS: &str = "gpu-trust-gpu";
/// The driver's feature gates that sharing through a claim needs.
pub const TIME_SLICING_GATE: &str = "TimeSlicingSettings";
pub const MPS_GATE: &str = "MPSSupport";

/// The DeviceClass of one MIG profile.
pub fn mig_class(profile: &str) -> String {
    format!("gpu-trust-mig-{profile}")
}

/// One device the plan places replicas on: node, GPU index and, for a MIG instance, its start.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Device {
    pub node: String,
    pub gpu: u32,
    pub instance: Option<(String, u8)>,
}

impl Device {
    /// The name the driver publishes the device under on its node (its `ResourceSlice`): `gpu-<minor>`
    /// for a GPU, `gpu-<minor>-mig-<profile without dots>-<profile id>-<start>` for a MIG instance
    /// (`cmd/gpu-kubelet-plugin/deviceinfo.go` `CanonicalName`, `mig.go` `ToCanonicalName`). The
    /// GPU's minor number is taken to be its index.
    pub fn driver_name(&self, model: Option<&catalogue::GpuModel>) -> String {
        match &self.instance {
            None => format!("gpu-{}", self.gpu),
            Some((profile, start)) => {
                let id = model
                    .and_then(|m| m.profile(profile))
                    .and_then(|p| p.profile_id)
                    .unwrap_or(0);
                format!(
                    "gpu-{}-mig-{}-{id}-{start}",
                    self.gpu,
                    profile.replace(['.', '+'], "")
                )
            }
        }
    }
}

/// What a workload's replicas claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimUse {
    pub workload: String,
    pub namespace: String,
    /// The template or claim name.
    pub claim: String,
    /// A ResourceClaimTemplate (each pod its own claim) or a shared ResourceClaim.
    pub template: bool,
    /// The replicas it serves, with the device each is planned on.
    pub replicas: Vec<(u32, Device)>,
}

/// The plan as DRA objects.
#[derive(Debug, Clone, Default)]
pub struct DraPlan {
    pub classes: Vec<Value>,
    pub templates: Vec<Value>,
    pub claims: Vec<Value>,
    pub uses: Vec<ClaimUse>,
    /// The driver's feature gates the claims need.
    pub gates: BTreeSet<&'static str>,
}

fn class(name: &str, selector: &str) -> Value {
    json!({
        "apiVersion": RESOURCE_API,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": selector}}]},
    })
}

/// The opaque parameters for a device handed out as `sharing` to `replicas` pods: `GpuConfig` or
/// `MigDeviceConfig`, without `sharing` when the device is one claim's alone; an MPS device pins each
/// client's memory to its share and gives it its share of the threads.
pub fn parameters(mig: bool, sharing: DeviceSharing, replicas: u32, memory_mib: u64) -> Value {
    let kind = if mig { "MigDeviceConfig" } else { "GpuConfig" };
    let mut p = json!({"apiVersion": CONFIG_API, "kind": kind});
    match sharing {
        DeviceSharing::Exclusive => {}
        DeviceSharing::TimeSlicing if mig => {
            p["sharing"] = json!({"strategy": "TimeSlicing"});
        }
        DeviceSharing::TimeSlicing => {
            p["sharing"] = json!({
                "strategy": "TimeSlicing",
                "timeSlicingConfig": {"interval": "Default"},
            });
        }
        DeviceSharing::Mps => {
            let r = u64::from(replicas.max(1));
            p["sharing"] = json!({
                "strategy": "MPS",
                "mpsConfig": {
                    "defaultActiveThreadPercentage": 100 / r,
                    "defaultPinnedDeviceMemoryLimit": format!("{}Mi", (memory_mib / r).max(1)),
                },
            });
        }
    }
    p
}

fn claim_spec(class: &str, count: u32, parameters: Value) -> Value {
    json!({"devices": {
        "requests": [{"name": REQUEST, "exactly": {
            "deviceClassName": class,
            "allocationMode": "ExactCount",
            "count": count,
        }}],
        "config": [{"requests": [REQUEST], "opaque": {"driver": DRIVER, "parameters": parameters}}],
    }})
}

/// Where each placed replica is: (workload, replica) to its device, with the GPU it is on.
fn devices_of(plan: &Plan) -> BTreeMap<(String, u32), (Device, &PlanNode, &PlanGpu)> {
    let mut out = BTreeMap::new();
    for n in &plan.nodes {
        for g in &n.gpus {
            for a in &g.assignments {
                let device = Device {
                    node: n.name.clone(),
                    gpu: g.index,
                    instance: a.profile.clone().zip(a.start),
                };
                out.entry((a.workload.clone(), a.replica))
                    .or_insert((device, n, g));
            }
        }
    }
    out
}

/// The claim name of a shared device.
fn shared_claim_name(d: &Device) -> String {
    match &d.instance {
        None => format!("gpu-trust-{}-gpu{}", d.node, d.gpu),
        Some((p, s)) => format!("gpu-trust-{}-gpu{}-{p}-{s}", d.node, d.gpu),
    }
}

/// Shared claims by namespace and name: the claim, and the (workload, replica, device) that name it.
type SharedClaims = BTreeMap<(String, String), (Value, Vec<(String, u32, Device)>)>;

/// The DRA objects of a plan (made with [`crate::SolveOptions::dra`]).
pub fn dra_plan(plan: &Plan, input: &PlanInput) -> DraPlan {
    let mut out = DraPlan::default();
    let placed = devices_of(plan);
    let mut classes: BTreeMap<String, Value> = BTreeMap::new();
    let mut shared: SharedClaims = BTreeMap::new();
    for w in plan.workloads.iter().filter(|w| w.placed > 0) {
        let model = patch::pool_model(input, w);
        let mut reps: Vec<(u32, Device, DeviceSharing, u32)> = Vec::new();
        for i in 0..w.replicas {
            let Some((d, _, g)) = placed.get(&(w.name.clone(), i)) else {
                continue;
            };
            let (sharing, replicas) = match &d.instance {
                Some((p, s)) => g
                    .mig
                    .iter()
                    .find(|m| m.profile == *p && m.start == *s)
                    .map(|m| (m.sharing, m.replicas))
                    .unwrap_or((DeviceSharing::Exclusive, 1)),
                None => (g.sharing, g.replicas),
            };
            reps.push((i, d.clone(), sharing, replicas));
        }
        let Some((_, first, sharing, _)) = reps.first().cloned() else {
            continue;
        };
        let class_name = match &first.instance {
            Some((p, _)) => {
                let name = mig_class(p);
                classes.entry(name.clone()).or_insert_with(|| {
                    class(
                        &name,
                        &format!(
                            "device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'mig' && device.attributes['{DRIVER}'].profile == '{p}'"
                        ),
                    )
                });
                name
            }
            None => {
                classes.entry(GPU_CLASS.to_string()).or_insert_with(|| {
                    class(
                        GPU_CLASS,
                        &format!(
                            "device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"
                        ),
                    )
                });
                GPU_CLASS.to_string()
            }
        };
        let mig = first.instance.is_some();
        if sharing == DeviceSharing::Exclusive {
            let name = format!("{}-gpu", w.name);
            out.templates.push(json!({
                "apiVersion": RESOURCE_API,
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": w.namespace},
                "spec": {"spec": claim_spec(&class_name, w.count.max(1), parameters(mig, sharing, 1, 0))},
            }));
            out.uses.push(ClaimUse {
                workload: w.name.clone(),
                namespace: w.namespace.clone(),
                claim: name,
                template: true,
                replicas: reps.into_iter().map(|(i, d, _, _)| (i, d)).collect(),
            });
            continue;
        }
        out.gates.insert(match sharing {
            DeviceSharing::Mps => MPS_GATE,
            _ => TIME_SLICING_GATE,
        });
        for (i, d, sharing, replicas) in reps {
            let memory = match &d.instance {
                Some((p, _)) => model
                    .and_then(|m| m.profile(p))
                    .map(|p| p.memory_mib)
                    .unwrap_or(0),
                None => model.map(|m| m.memory_mib).unwrap_or(0),
            };
            let name = shared_claim_name(&d);
            let entry = shared
                .entry((w.namespace.clone(), name.clone()))
                .or_insert_with(|| {
                    let claim = json!({
                        "apiVersion": RESOURCE_API,
                        "kind": "ResourceClaim",
                        "metadata": {"name": name, "namespace": w.namespace},
                        "spec": claim_spec(&class_name, 1, parameters(mig, sharing, replicas, memory)),
                    });
                    (claim, Vec::new())
                });
            entry.1.push((w.name.clone(), i, d));
        }
    }
    out.classes = classes.into_values().collect();
    let mut shared_uses: BTreeMap<(String, String, String), Vec<(u32, Device)>> = BTreeMap::new();
    for ((ns, name), (claim, users)) in shared {
        out.claims.push(claim);
        for (w, i, d) in users {
            shared_uses
                .entry((w, ns.clone(), name.clone()))
                .or_default()
                .push((i, d));
        }
    }
    for ((workload, namespace, claim), replicas) in shared_uses {
        out.uses.push(ClaimUse {
            workload,
            namespace,
            claim,
            template: false,
            replicas,
        });
    }
    out.uses.sort_by(|a, b| {
        (&a.namespace, &a.workload, &a.claim).cmp(&(&b.namespace, &b.workload, &b.claim))
    });
    out
}

/// The workload as DRA places it: the plan's tolerations, and the pool's label alone as the node
/// selector (the scheduler finds devices through the claims, not through the device plugin's
/// labels).
fn dra_workload(w: &PlanWorkload) -> PlanWorkload {
    let mut w = w.clone();
    w.node_selector.retain(|k, _| k == POOL_LABEL);
    w
}

/// One pod patch per claim use: the workload's pods name the claim (their own from the template, or
/// the shared one) and request no extended GPU resource.
pub fn pod_patches(
    plan: &Plan,
    input: &PlanInput,
    dra: &DraPlan,
    objects: &Objects,
) -> Vec<(ClaimUse, PodPatch)> {
    let mut out = Vec::new();
    for u in &dra.uses {
        let Some(w) = plan.workloads.iter().find(|w| w.name == u.workload) else {
            continue;
        };
        let Some(model) = patch::pool_model(input, w) else {
            continue;
        };
        let request = Request::Claim {
            template: u.template,
            name: u.claim.clone(),
        };
        let p = patch::pod_patch(
            &dra_workload(w),
            patch::container_of(input, w),
            model,
            objects,
            &request,
        );
        out.push((u.clone(), p));
    }
    out
}
