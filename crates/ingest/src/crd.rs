//! Typed structs of our own for the custom resources ingest reads field by field: the GPU
//! Operator's ClusterPolicy and GPUCluster, and the DRA objects (read across `resource.k8s.io/v1`, `v1beta1` and
//! `v1beta2`, whose shapes differ). The fields of later Kubernetes versions (consumable capacity's
//! `allowMultipleAllocations` and `shareID`, KEP-5075) are read here the same way, whatever version of
//! k8s-openapi the binary picks. Workload controllers are read through the controllers table
//! (`controllers.rs`) instead.
//!
//! Only the fields ingest uses are declared; other fields are ignored, as the API server's own
//! clients ignore fields they do not know. A declared field of the wrong type is an input error.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

/// `nvidia.com/v1` ClusterPolicy (GPU Operator `api/nvidia/v1/clusterpolicy_types.go`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicy {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ClusterPolicySpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicySpec {
    #[serde(default)]
    pub operator: Option<OperatorSpec>,
    #[serde(default)]
    pub device_plugin: Option<DevicePluginSpec>,
    #[serde(default)]
    pub mig: Option<MigSpec>,
    #[serde(default)]
    pub mig_manager: Option<MigManagerSpec>,
    #[serde(default)]
    pub driver: Option<ComponentSpec>,
    #[serde(default)]
    pub toolkit: Option<ComponentSpec>,
    #[serde(default)]
    pub cc_manager: Option<CcManagerSpec>,
    #[serde(default)]
    pub cdi: Option<CdiSpec>,
    #[serde(default)]
    pub sandbox_workloads: Option<SandboxWorkloadsSpec>,
    pub dcgm_exporter: Option<DcgmExporterSpec>,
    /// `spec.vgpuManager` (`enabled`, `repository`, `image`, `version`: GPU Operator "GPU Operator
    /// with KubeVirt", `--set vgpuManager.version=<driver version>`).
    #[serde(default)]
    pub vgpu_manager: Option<ComponentSpec>,
}

/// `spec.sandboxWorkloads` (NVIDIA/gpu-operator `api/nvidia/v1/clusterpolicy_types.go`): whether GPUs
/// may be passed through to VMs, and the workload a node without the `nvidia.com/gpu.workload.config`
/// label gets.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxWorkloadsSpec {
    pub enabled: Option<bool>,
    pub default_workload: Option<String>,
}

/// `spec.dcgmExporter` of a ClusterPolicy or a GPUCluster (`DCGMExporterSpec`, which the GPUCluster
/// reuses): the fields read here.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DcgmExporterSpec {
    pub enabled: Option<bool>,
    pub version: Option<String>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    #[serde(default)]
    pub args: Vec<String>,
    pub enable_pod_labels: Option<bool>,
    pub host_network: Option<bool>,
}

/// `nvidia.com/v1alpha1` GPUCluster (GPU Operator 26.7.0, `api/nvidia/v1alpha1/gpucluster_types.go`):
/// the DRA driver, DCGM and the DCGM exporter, for a cluster that has no ClusterPolicy.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuCluster {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: GpuClusterSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuClusterSpec {
    #[serde(default)]
    pub dra_driver: Option<DraDriverSpec>,
    #[serde(default)]
    pub dcgm_exporter: Option<DcgmExporterSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraDriverSpec {
    pub version: Option<String>,
    #[serde(default)]
    pub feature_gates: std::collections::BTreeMap<String, bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorSpec {
    pub default_runtime: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevicePluginSpec {
    pub enabled: Option<bool>,
    pub version: Option<String>,
    pub config: Option<NamedConfig>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
}

/// `{name, default}`: a ConfigMap and the key (or named config) used when a node's label names none.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedConfig {
    pub name: Option<String>,
    pub default: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigSpec {
    pub strategy: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigManagerSpec {
    pub config: Option<NamedConfig>,
    pub version: Option<String>,
}

/// The shape the driver and toolkit sections share (the fields read here).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentSpec {
    pub enabled: Option<bool>,
    pub version: Option<String>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CcManagerSpec {
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CdiSpec {
    pub enabled: Option<bool>,
    pub default: Option<bool>,
    pub nri_plugin_enabled: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct EnvVar {
    pub name: String,
    pub value: Option<String>,
}

/// `resource.k8s.io` ResourceClaim (v1, v1beta1, v1beta2).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaim {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ClaimSpec,
    pub status: Option<ClaimStatus>,
}

/// `resource.k8s.io` ResourceClaimTemplate: `spec.spec` is a claim spec.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimTemplate {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ClaimTemplateSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimTemplateSpec {
    #[serde(default)]
    pub spec: ClaimSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimSpec {
    #[serde(default)]
    pub devices: ClaimDevices,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimDevices {
    #[serde(default)]
    pub requests: Vec<DeviceRequest>,
    #[serde(default)]
    pub config: Vec<DeviceConfig>,
}

/// A request: `deviceClassName` directly (v1beta1) or under `exactly` / `firstAvailable` (v1, v1beta2).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRequest {
    pub device_class_name: Option<String>,
    /// `adminAccess` of a v1beta1 request.
    pub admin_access: Option<bool>,
    pub exactly: Option<ExactRequest>,
    #[serde(default)]
    pub first_available: Vec<ExactRequest>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExactRequest {
    pub device_class_name: Option<String>,
    /// `adminAccess` of a v1 or v1beta2 request.
    pub admin_access: Option<bool>,
}

impl DeviceRequest {
    /// Whether the request asks for admin access (KEP-5018).
    pub fn admin_access(&self) -> bool {
        self.admin_access == Some(true)
            || self
                .exactly
                .as_ref()
                .is_some_and(|e| e.admin_access == Some(true))
    }

    /// The device class the request names (the first alternative of `firstAvailable`).
    pub fn device_class(&self) -> Option<&str> {
        self.device_class_name
            .as_deref()
            .or_else(|| {
                self.exactly
                    .as_ref()
                    .and_then(|e| e.device_class_name.as_deref())
            })
            .or_else(|| {
                self.first_available
                    .iter()
                    .find_map(|e| e.device_class_name.as_deref())
            })
    }
}

/// `config[]` of a claim or a DeviceClass: opaque, driver-specific parameters.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceConfig {
    pub opaque: Option<OpaqueConfig>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpaqueConfig {
    pub driver: Option<String>,
    pub parameters: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatus {
    pub allocation: Option<Allocation>,
    /// The pods the claim is reserved for (`ResourceClaimConsumerReference`: `resource`, `name`,
    /// `uid`): the pods that use the allocated devices.
    #[serde(default)]
    pub reserved_for: Vec<ConsumerReference>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsumerReference {
    pub resource: Option<String>,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Allocation {
    pub devices: Option<AllocatedDevices>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocatedDevices {
    #[serde(default)]
    pub results: Vec<AllocationResult>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationResult {
    pub driver: Option<String>,
    pub pool: Option<String>,
    pub device: Option<String>,
    /// The share of a device published for several allocations (consumable capacity, KEP-5075;
    /// `DeviceRequestAllocationResult.shareID`, the same in `v1`, `v1beta1` and `v1beta2`): set only
    /// when the device may be allocated more than once.
    #[serde(rename = "shareID")]
    pub share_id: Option<String>,
}

/// `resource.k8s.io` ResourceSlice (`v1` and `v1beta2` list devices with their fields at the top,
/// `v1beta1` under `basic`; k8s-openapi 0.29 `src/v1_35/api/resource/{v1,v1beta1}/device.rs`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSlice {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ResourceSliceSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSliceSpec {
    pub driver: Option<String>,
    #[serde(default)]
    pub pool: ResourcePool,
    pub node_name: Option<String>,
    #[serde(default)]
    pub devices: Vec<SliceDevice>,
}

/// The pool a slice belongs to: only the slices of its highest generation count.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcePool {
    pub name: Option<String>,
    #[serde(default)]
    pub generation: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SliceDevice {
    pub name: Option<String>,
    #[serde(default)]
    pub attributes: std::collections::BTreeMap<String, DeviceAttribute>,
    pub allow_multiple_allocations: Option<bool>,
    #[serde(default)]
    pub consumes_counters: Vec<CounterConsumption>,
    /// `v1beta1`: the same fields under `basic`.
    pub basic: Option<DeviceFields>,
}

impl SliceDevice {
    /// The device's fields, wherever its version writes them.
    pub fn fields(&self) -> DeviceFields {
        match &self.basic {
            Some(b) => b.clone(),
            None => DeviceFields {
                attributes: self.attributes.clone(),
                allow_multiple_allocations: self.allow_multiple_allocations,
                consumes_counters: self.consumes_counters.clone(),
            },
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceFields {
    /// By name, qualified by a domain or (without one) in the driver's own.
    #[serde(default)]
    pub attributes: std::collections::BTreeMap<String, DeviceAttribute>,
    pub allow_multiple_allocations: Option<bool>,
    /// The counter sets the device consumes from: partitions of one physical device consume from
    /// its set (KEP-4815).
    #[serde(default)]
    pub consumes_counters: Vec<CounterConsumption>,
}

/// An attribute's value: exactly one of its typed fields is set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceAttribute {
    pub string: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CounterConsumption {
    pub counter_set: Option<String>,
}

/// `resource.k8s.io` DeviceClass.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceClass {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: DeviceClassSpec,
}

/// `spec` of a DeviceClass. `extendedResourceName` (KEP-5004, alpha in Kubernetes 1.34) has the
/// same name and place in `v1`, `v1beta1` and `v1beta2` (the generated `DeviceClassSpec` of each,
/// k8s-openapi 0.29 `src/v1_35/api/resource/{v1,v1beta1,v1beta2}/device_class_spec.rs`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceClassSpec {
    #[serde(default)]
    pub config: Vec<DeviceConfig>,
    #[serde(default)]
    pub selectors: Vec<DeviceSelector>,
    pub extended_resource_name: Option<String>,
}

/// A DeviceClass selector: a CEL expression over a device.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSelector {
    pub cel: Option<CelSelector>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CelSelector {
    pub expression: Option<String>,
}

/// `status.extendedResourceClaimStatus` of a Pod (KEP-5004): the ResourceClaim the scheduler made for
/// the pod's extended resources backed by DRA, and which container resource maps to which of its
/// requests (of each mapping, `containerName`, `resourceName` and `requestName`; only the resource is
/// read) (`PodExtendedResourceClaimStatus` and `ContainerExtendedResourceRequest`, k8s-openapi 0.29
/// `src/v1_35/api/core/v1/pod_extended_resource_claim_status.rs`,
/// `container_extended_resource_request.rs`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtendedResourceClaimStatus {
    #[serde(default)]
    pub request_mappings: Vec<ExtendedResourceRequest>,
    pub resource_claim_name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtendedResourceRequest {
    pub resource_name: Option<String>,
}

/// `status.resourceClaimStatuses` of a Pod: the ResourceClaim made from a template for one of its
/// `spec.resourceClaims` entries (`PodResourceClaimStatus`: `name`, the entry's, and
/// `resourceClaimName`, the claim's; k8s-openapi 0.29 `src/v1_35/api/core/v1/pod_resource_claim_status.rs`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodResourceClaimStatus {
    pub resource_claim_name: Option<String>,
}
