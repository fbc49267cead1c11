//! Extended resources served by DRA (KEP-5004): a container's request of a DeviceClass's
//! `extendedResourceName`, or of `deviceclass.resource.kubernetes.io/<class>`, is a GPU request through
//! the pod's own claim when the class is NVIDIA's; what the input cannot explain is unresolved.

use gpu_trust_ingest::ingest_text;
use gpu_trust_model::fleet::{DraStrategy, Fleet, UnresolvedKind, Workload};

const NODE: &str = "apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels:
    nvidia.com/gpu.present: \"true\"
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    nvidia.com/gpu.count: \"8\"
status:
  allocatable: {cpu: \"64\"}
";

/// The DeviceClass `gpu.nvidia.com` with `extendedResourceName: example.com/gpu` and, when given, a
/// `GpuConfig` sharing strategy.
fn class(strategy: Option<&str>) -> String {
    let config = strategy
        .map(|s| {
            format!(
                "  config:
  - opaque:
      driver: gpu.nvidia.com
      parameters:
        apiVersion: resource.nvidia.com/v1beta1
        kind: GpuConfig
        sharing: {{strategy: {s}}}
"
            )
        })
        .unwrap_or_default();
    format!(
        "apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com'
{config}"
    )
}

fn pod(ns: &str, name: &str, resource: &str, status: &str) -> String {
    format!(
        "apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}}}
spec:
  nodeName: gpu-1
  containers:
  - name: c
    image: cuda
    resources:
      limits:
        {resource}: 1
{status}"
    )
}

fn fleet(docs: &[String]) -> Fleet {
    let ing = ingest_text(&docs.join("---\n"), "in.yaml");
    assert!(
        ing.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        ing.diagnostics
    );
    ing.fleet
}

fn workload<'a>(f: &'a Fleet, name: &str) -> &'a Workload {
    f.workloads
        .iter()
        .find(|w| w.object.name == name)
        .unwrap_or_else(|| panic!("no workload {name}"))
}

/// The class's `extendedResourceName` and its implicit name both make a GPU request of the class,
/// exclusive without a config.
#[test]
fn both_names_of_an_nvidia_class_are_gpu_requests() {
    let f = fleet(&[
        NODE.to_string(),
        class(None),
        pod("team-a", "a", "example.com/gpu", ""),
        pod(
            "team-b",
            "b",
            "deviceclass.resource.kubernetes.io/gpu.nvidia.com",
            "",
        ),
    ]);
    for name in ["a", "b"] {
        let w = workload(&f, name);
        assert!(w.requests_gpu(), "{name}");
        assert_eq!(w.gpu.dra.len(), 1, "{name}");
        let u = &w.gpu.dra[0];
        assert_eq!(u.device_class.as_deref(), Some("gpu.nvidia.com"));
        assert_eq!(u.strategy, DraStrategy::Exclusive);
        assert_eq!(u.claim, None, "the scheduler's claim is the pod's alone");
        assert!(w.placement.node.is_some(), "{name} is on its node");
    }
    assert!(f.unresolved.is_empty(), "{:?}", f.unresolved);
}

/// `extendedResourceName` is read from `resource.k8s.io/v1beta1` and `v1beta2` DeviceClasses too.
#[test]
fn every_served_version_of_device_class_maps_its_resource() {
    for version in ["v1beta1", "v1beta2"] {
        let f = fleet(&[
            NODE.to_string(),
            class(None).replace("resource.k8s.io/v1", &format!("resource.k8s.io/{version}")),
            pod("team-a", "a", "example.com/gpu", ""),
        ]);
        assert_eq!(workload(&f, "a").gpu.dra.len(), 1, "{version}");
    }
}

/// The class's opaque config decides the sharing strategy.
#[test]
fn the_class_config_decides_the_strategy() {
    for (strategy, want) in [
        ("TimeSlicing", DraStrategy::TimeSlicing),
        ("MPS", DraStrategy::Mps),
    ] {
        let f = fleet(&[
            NODE.to_string(),
            class(Some(strategy)),
            pod("team-a", "a", "example.com/gpu", ""),
        ]);
        assert_eq!(workload(&f, "a").gpu.dra[0].strategy, want, "{strategy}");
    }
}

/// The claim the pod's status names, allocated, places the pod on its device.
#[test]
fn the_status_claim_names_the_devices() {
    let status = "status:
  phase: Running
  extendedResourceClaimStatus:
    resourceClaimName: a-extended-resources-abcde
    requestMappings:
    - {containerName: c, requestName: container-0-request-0, resourceName: example.com/gpu}
";
    let claim = "apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: a-extended-resources-abcde
  namespace: team-a
  annotations: {resource.kubernetes.io/extended-resource-claim: \"true\"}
spec:
  devices:
    requests:
    - name: container-0-request-0
      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 1}
status:
  allocation:
    devices:
      results:
      - {device: gpu-3, driver: gpu.nvidia.com, pool: gpu-1, request: container-0-request-0}
";
    let f = fleet(&[
        NODE.to_string(),
        class(None),
        pod("team-a", "a", "example.com/gpu", status),
        claim.to_string(),
    ]);
    let w = workload(&f, "a");
    assert_eq!(w.gpu.dra.len(), 1, "{:?}", w.gpu.dra);
    let gpus: Vec<u32> = w.placement.devices.iter().map(|d| d.gpu).collect();
    assert_eq!(gpus, vec![3]);
    assert!(w.placement.observed);
    // The scheduler's claim is listed as a per-pod claim: exclusive without a config.
    let c = f
        .resource_claims
        .iter()
        .find(|c| c.object.name == "a-extended-resources-abcde")
        .expect("claim");
    assert_eq!(c.strategy, DraStrategy::Exclusive);
}

/// `nvidia.com/gpu` stays the device plugin's where a node advertises it, unless the pod's status says
/// DRA served it.
#[test]
fn nvidia_gpu_is_the_device_plugins_unless_the_status_maps_it() {
    let mapped = "status:
  extendedResourceClaimStatus:
    resourceClaimName: b-extended-resources-abcde
    requestMappings:
    - {containerName: c, requestName: container-0-request-0, resourceName: nvidia.com/gpu}
";
    let chart_class = "apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  extendedResourceName: nvidia.com/gpu
  selectors:
  - cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}
";
    // The node's device plugin advertises nvidia.com/gpu: it serves it.
    let plugin_node = NODE.replace("{cpu: \"64\"}", "{cpu: \"64\", nvidia.com/gpu: \"8\"}");
    assert_ne!(plugin_node, NODE);
    let f = fleet(&[
        plugin_node,
        chart_class.to_string(),
        pod("team-a", "a", "nvidia.com/gpu", ""),
        pod("team-b", "b", "nvidia.com/gpu", mapped),
    ]);
    let a = workload(&f, "a");
    assert!(a.requests_gpu() && a.gpu.dra.is_empty());
    let b = workload(&f, "b");
    assert_eq!(b.gpu.dra.len(), 1);
    assert_eq!(b.gpu.dra[0].device_class.as_deref(), Some("gpu.nvidia.com"));
    // No node advertises it: the class serves it.
    let f = fleet(&[
        NODE.to_string(),
        chart_class.to_string(),
        pod("team-a", "a", "nvidia.com/gpu", ""),
    ]);
    assert_eq!(workload(&f, "a").gpu.dra.len(), 1);
}

/// Extended resources of other devices stay quiet; one only DRA can serve, of a class the input
/// lacks, is unresolved.
#[test]
fn unexplained_gpu_shaped_and_implicit_names_are_unresolved() {
    let quiet = fleet(&[
        NODE.to_string(),
        pod("team-a", "a", "example.com/foo", ""),
        pod("team-a", "h", "hugepages-2Mi", ""),
    ]);
    assert!(quiet.unresolved.is_empty(), "{:?}", quiet.unresolved);
    assert!(quiet.workloads.iter().all(|w| !w.requests_gpu()));

    let f = fleet(&[
        NODE.to_string(),
        pod(
            "team-b",
            "b",
            "deviceclass.resource.kubernetes.io/gpu.nvidia.com",
            "",
        ),
        pod("team-c", "c", "example.com/gpu", ""),
    ]);
    let mut got: Vec<(&str, &str)> = f
        .unresolved
        .iter()
        .filter(|u| u.what == UnresolvedKind::ExtendedResource)
        .map(|u| (u.object.name.as_str(), u.message.as_str()))
        .collect();
    got.sort();
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0]
        .1
        .contains("DeviceClass gpu.nvidia.com is not in the input"));
    assert!(got[1].1.contains("example.com/gpu"));
    // A class of another driver explains its resource: not a GPU, and quiet.
    let other = "apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic.example.com}
spec:
  extendedResourceName: example.com/gpu-nic
  selectors:
  - cel: {expression: \"device.driver == 'nic.example.com'\"}
";
    let f = fleet(&[
        NODE.to_string(),
        other.to_string(),
        pod("team-a", "a", "example.com/gpu-nic", ""),
    ]);
    assert!(f.unresolved.is_empty());
    assert!(!workload(&f, "a").requests_gpu());
}

/// The driver's own extended resource demos, with the claims and status the scheduler writes.
#[test]
fn the_dra_drivers_extended_resource_demos() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/dra/extended-resources.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let ing = ingest_text(&text, "extended-resources.yaml");
    assert!(ing.diagnostics.iter().all(|d| !d.is_error()));
    let f = &ing.fleet;
    let full = workload(f, "gpu-full-pod");
    assert_eq!(full.gpu.dra.len(), 1);
    assert_eq!(full.gpu.dra[0].strategy, DraStrategy::Exclusive);
    let gpus: Vec<u32> = full.placement.devices.iter().map(|d| d.gpu).collect();
    assert_eq!(gpus, vec![1]);
    let mig = workload(f, "mig-1g12gb-pod");
    assert_eq!(mig.gpu.dra.len(), 1, "{:?}", mig.gpu);
    assert_eq!(mig.gpu.dra[0].strategy, DraStrategy::Mig);
    assert!(f.unresolved.is_empty(), "{:?}", f.unresolved);
}
