//! Pod patches: how each workload's pod template changes to run where and as the plan says.
//!
//! A patch is a strategic merge patch of `spec.template.spec` (what `kubectl patch --type strategic`
//! applies, Kubernetes `staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`), and the
//! way strategic merge treats each field decides how the patch is written:
//!
//! - **Resources.** `resources.limits` and `resources.requests` are maps, merged key by key: a key the
//!   patch gives is set, a key the patch sets to `null` is removed (`mergeMap`), every other key stays.
//!   A patch that only adds the planned resource leaves the old GPU request in the pod, which then asks
//!   for both. So every NVIDIA GPU resource the container requests is set to `null` in both maps, and
//!   the planned resource is set in both (an extended resource's request must equal its limit:
//!   Kubernetes `pkg/apis/core/validation`, `ValidateResourceRequirements`). `null` for a key the map
//!   does not hold changes nothing.
//! - **Init containers.** `initContainers` is merged by `name` as well (`patchMergeKey:"name"` on
//!   `PodSpec.InitContainers`). An init container that requests a GPU would keep the old resource
//!   in the pod (a pod asks for the larger of its init containers' requests and its containers'
//!   sum: Kubernetes documentation, "Init Containers", "Resource sharing within containers"), so
//!   its GPU request is removed and named; without the objects, its name is unknown and the patch
//!   says that such a request stays.
//! - **Containers.** `containers` is merged by `name` (`patchMergeKey:"name"` on `PodSpec.Containers`);
//!   an element whose name matches no container is appended as a new container
//!   (`mergeSliceWithoutSpecialElements`). So the patch names the containers that really request GPUs
//!   when the objects of the workload are given with the plan ([`Objects`]); otherwise the name is
//!   assumed, the patch says so, and a JSON patch of `test` operations (RFC 6902, which fails and
//!   changes nothing when a tested value differs) checks the assumption before the strategic merge runs.
//! - **Node selection.** `nodeSelector` is a map (merged): a key of the template's selector that the
//!   plan does not give would stay and narrow the nodes to none, so the patch sets it to `null` when
//!   the objects are given. `tolerations` has no merge key, so the patch's list replaces the
//!   template's: the patch keeps the template's tolerations when the objects are given, and says that
//!   it replaces them when not.
//! - **DRA.** `resourceClaims` is merged by `name` (`patchMergeKey:"name"` on `PodSpec.ResourceClaims`);
//!   a container's `resources.claims` is replaced as a whole.

use crate::file::PlanInput;
use crate::plan::{PlanWorkload, Toleration};
use gpu_trust_model::catalogue::GpuModel;
use gpu_trust_model::fleet::{Fleet, PodToleration, WorkloadKind};
use gpu_trust_model::resource;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The path of the pod template's spec in the kinds the patches are written for (`spec.template`
/// of Deployment, StatefulSet, DaemonSet, ReplicaSet and Job).
pub const TEMPLATE_SPEC: &str = "/spec/template/spec";
/// The claim name the DRA patches give the pod's GPU claim.
pub const DRA_CLAIM: &str = "gpu";

/// A workload's pod template as the objects given with the plan have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateObject {
    /// `Deployment`, `StatefulSet`, `Job`...
    pub kind: String,
    /// Containers in the template's order, each with the NVIDIA GPU resources it requests.
    pub containers: Vec<(String, BTreeSet<String>)>,
    /// Init containers in the template's order, the same way.
    pub init_containers: Vec<(String, BTreeSet<String>)>,
    /// The template's tolerations.
    pub tolerations: Vec<PodToleration>,
    /// The template's `nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
}

/// The workload objects given with the plan (`--current`), by namespace and name.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    pub templates: BTreeMap<(String, String), TemplateObject>,
}

/// The kinds whose pod template is `spec.template` and takes a strategic merge patch.
const TEMPLATE_KINDS: &[WorkloadKind] = &[
    WorkloadKind::Deployment,
    WorkloadKind::StatefulSet,
    WorkloadKind::DaemonSet,
    WorkloadKind::ReplicaSet,
    WorkloadKind::Job,
];

impl Objects {
    /// The pod templates of a fleet's workload objects.
    pub fn from_fleet(fleet: &Fleet) -> Objects {
        let mut templates = BTreeMap::new();
        for w in &fleet.workloads {
            if !TEMPLATE_KINDS.contains(&w.kind) || w.owner.is_some() {
                continue;
            }
            let of = |init: bool| -> Vec<(String, BTreeSet<String>)> {
                w.containers
                    .iter()
                    .filter(|c| c.is_init == init)
                    .map(|c| {
                        let gpu: BTreeSet<String> = c
                            .resources
                            .keys()
                            .filter(|k| resource::is_nvidia_gpu_resource(k))
                            .cloned()
                            .collect();
                        (c.name.clone(), gpu)
                    })
                    .collect()
            };
            let tolerations = w.placement.tolerations.clone();
            templates
                .entry((w.namespace.clone(), w.object.name.clone()))
                .or_insert(TemplateObject {
                    kind: w.object.kind.clone(),
                    containers: of(false),
                    init_containers: of(true),
                    tolerations,
                    node_selector: w.placement.node_selector.clone(),
                });
        }
        Objects { templates }
    }
}

/// What the patch gives the GPU container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// An extended resource, this many per pod.
    Resource { name: String, count: u32 },
    /// A DRA claim of the pod: made from a ResourceClaimTemplate (one claim per pod) or a
    /// ResourceClaim shared by the pods that name it.
    Claim { template: bool, name: String },
}

/// One workload's patch.
#[derive(Debug, Clone, PartialEq)]
pub struct PodPatch {
    pub workload: String,
    pub namespace: String,
    /// The object's kind when it was given with the plan.
    pub kind: Option<String>,
    /// The container that gets the planned request.
    pub container: String,
    /// Whether the container name is assumed (no object of the workload was given).
    pub assumed: bool,
    /// What the patch changes besides the request, and what it assumes, one sentence each.
    pub notes: Vec<String>,
    /// The strategic merge patch.
    pub patch: Value,
    /// With assumed names: the JSON patch (RFC 6902) of `test` operations to run first.
    pub check: Option<Value>,
}

/// Every resource name a container may request an NVIDIA GPU by on `model`: whole GPUs, each MIG
/// profile of the model, renamed shared resources, HAMi's.
pub fn gpu_resources(model: &GpuModel) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = [resource::GPU, resource::GPU_SHARED]
        .into_iter()
        .chain(resource::HAMI_RESOURCES)
        .map(str::to_string)
        .collect();
    for p in model.mig.map(|m| m.profiles).unwrap_or(&[]) {
        let name = p.resource_name();
        out.insert(format!("{name}{}", resource::SHARED_SUFFIX));
        out.insert(name);
    }
    out
}

/// A toleration as the API writes it, each field only when given.
fn toleration_json(t: &PodToleration) -> Value {
    let mut m = Map::new();
    if let Some(k) = &t.key {
        m.insert("key".into(), json!(k));
    }
    m.insert(
        "operator".into(),
        json!(if t.exists { "Exists" } else { "Equal" }),
    );
    if let (Some(v), false) = (&t.value, t.exists) {
        m.insert("value".into(), json!(v));
    }
    if let Some(e) = &t.effect {
        m.insert("effect".into(), json!(e));
    }
    if let Some(s) = t.seconds {
        m.insert("tolerationSeconds".into(), json!(s));
    }
    Value::Object(m)
}

/// The plan's toleration in the model's form.
fn planned(t: &Toleration) -> PodToleration {
    PodToleration {
        key: Some(t.key.clone()).filter(|k| !k.is_empty()),
        exists: t.operator == "Exists",
        value: Some(t.value.clone()).filter(|v| !v.is_empty()),
        effect: Some(t.effect.clone()).filter(|e| !e.is_empty()),
        seconds: None,
    }
}

/// The resources of one container in the patch: every GPU resource of `remove` set to `null` in
/// limits and requests, the planned resource set in both.
fn container_resources(remove: &BTreeSet<String>, request: Option<&Request>) -> Value {
    let mut limits = Map::new();
    for r in remove {
        limits.insert(r.clone(), Value::Null);
    }
    let mut claims = None;
    match request {
        Some(Request::Resource { name, count }) => {
            limits.insert(name.clone(), json!(count));
        }
        Some(Request::Claim { .. }) => claims = Some(json!([{ "name": DRA_CLAIM }])),
        None => {}
    }
    let mut out = json!({"limits": limits.clone(), "requests": limits});
    if let Some(c) = claims {
        out["claims"] = c;
    }
    out
}

/// The GPU model of the pool a workload was planned on.
pub(crate) fn pool_model(input: &PlanInput, w: &PlanWorkload) -> Option<&'static GpuModel> {
    let pool = w.pool.as_deref()?;
    input.pools.iter().find(|p| p.name == pool).map(|p| p.model)
}

/// The container name the plan file gives a workload (its name when the file gives none).
pub(crate) fn container_of<'a>(input: &'a PlanInput, w: &'a PlanWorkload) -> &'a str {
    input
        .workloads
        .iter()
        .find(|x| x.name == w.name)
        .map(|x| x.container.as_str())
        .unwrap_or(w.name.as_str())
}

/// The patch of workload `w` (planned on a pool of `model`), giving `request` to its GPU container.
/// `container` is the container name the plan file gives (or the workload's name).
pub fn pod_patch(
    w: &PlanWorkload,
    container: &str,
    model: &GpuModel,
    objects: &Objects,
    request: &Request,
) -> PodPatch {
    let mut notes = Vec::new();
    let object = objects
        .templates
        .get(&(w.namespace.clone(), w.name.clone()));
    let mut containers: Vec<Value> = Vec::new();
    let mut init_containers: Vec<Value> = Vec::new();
    let mut selector: Map<String, Value> = w
        .node_selector
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let (target, kind, assumed, tolerations) = match object {
        Some(o) => {
            let gpu: Vec<&(String, BTreeSet<String>)> =
                o.containers.iter().filter(|(_, r)| !r.is_empty()).collect();
            let named = o.containers.iter().any(|(n, _)| n == container);
            let target = if gpu.iter().any(|(n, _)| n == container) || (gpu.is_empty() && named) {
                container.to_string()
            } else if let Some((n, _)) = gpu.first() {
                n.clone()
            } else {
                o.containers
                    .first()
                    .map(|(n, _)| n.clone())
                    .unwrap_or_else(|| container.to_string())
            };
            for (name, requested) in &o.containers {
                if *name == target {
                    containers.push(json!({
                        "name": name,
                        "resources": container_resources(requested, Some(request)),
                    }));
                } else if !requested.is_empty() {
                    notes.push(format!(
                        "container `{name}` also requested {}; the plan gives the pod one device, so its GPU request is removed",
                        requested.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                    containers.push(json!({
                        "name": name,
                        "resources": container_resources(requested, None),
                    }));
                }
            }
            for (name, requested) in o.init_containers.iter().filter(|(_, r)| !r.is_empty()) {
                notes.push(format!(
                    "init container `{name}` requested {}; the plan gives the pod's device to container `{target}`, so the init container's GPU request is removed",
                    requested.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
                init_containers.push(json!({
                    "name": name,
                    "resources": container_resources(requested, None),
                }));
            }
            // The template's selector keys the plan does not give are removed.
            for k in o.node_selector.keys() {
                selector.entry(k.clone()).or_insert(Value::Null);
            }
            // The template's tolerations stay, with the plan's added.
            let mut tolerations = o.tolerations.clone();
            for t in w.tolerations.iter().map(planned) {
                if !tolerations.contains(&t) {
                    tolerations.push(t);
                }
            }
            (target, Some(o.kind.clone()), false, tolerations)
        }
        None => {
            let candidates = gpu_resources(model);
            containers.push(json!({
                "name": container,
                "resources": container_resources(&candidates, Some(request)),
            }));
            notes.push(format!(
                "no object of this workload was given with the plan: its GPU container is assumed to be the first of the pod template, named `{container}` (the plan file's `container`, else the workload's name)"
            ));
            notes.push(
                "the patch removes any NVIDIA GPU resource the container requested on this pool's GPU model (whole, MIG, shared, HAMi)"
                    .to_string(),
            );
            notes.push(
                "the tolerations replace the template's (strategic merge replaces a list without a merge key)"
                    .to_string(),
            );
            notes.push(
                "init containers are not patched (their names are not known): an init container's GPU request stays; give the workload's object with --current to have it removed"
                    .to_string(),
            );
            (
                container.to_string(),
                None,
                true,
                w.tolerations.iter().map(planned).collect(),
            )
        }
    };
    let mut spec = json!({
        "nodeSelector": selector,
        "tolerations": tolerations.iter().map(toleration_json).collect::<Vec<_>>(),
        "containers": containers,
    });
    if !init_containers.is_empty() {
        spec["initContainers"] = json!(init_containers);
    }
    if let Some(class) = &w.runtime_class_name {
        spec["runtimeClassName"] = json!(class);
    }
    if let Request::Claim { template, name } = request {
        let source = if *template {
            "resourceClaimTemplateName"
        } else {
            "resourceClaimName"
        };
        spec["resourceClaims"] = json!([{ "name": DRA_CLAIM, source: name }]);
    }
    let check = assumed.then(|| {
        json!([{
            "op": "test",
            "path": format!("{TEMPLATE_SPEC}/containers/0/name"),
            "value": target,
        }])
    });
    PodPatch {
        workload: w.name.clone(),
        namespace: w.namespace.clone(),
        kind,
        container: target,
        assumed,
        notes,
        patch: json!({"spec": {"template": {"spec": spec}}}),
        check,
    }
}
