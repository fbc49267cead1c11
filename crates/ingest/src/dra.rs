//! Dynamic Resource Allocation: which claims are NVIDIA GPU claims, and how each shares its device.
//!
//! NVIDIA's DRA driver (NVIDIA/k8s-dra-driver-gpu, now kubernetes-sigs/dra-driver-nvidia-gpu) publishes
//! the DeviceClasses `gpu.nvidia.com`, `mig.nvidia.com` and `vfio.gpu.nvidia.com`; a claim's or
//! DeviceClass's opaque config for driver `gpu.nvidia.com` carries parameters of group
//! `resource.nvidia.com/v1beta1` (`api/nvidia.com/resource/v1beta1/api.go`): `GpuConfig` (a whole
//! GPU) or `MigDeviceConfig` (one MIG instance), each with `sharing.strategy` `TimeSlicing` or `MPS`
//! (`sharing.go`), and `VfioDeviceConfig` (a GPU passed through to a VM, `vfiodeviceconfig.go`). The
//! move to kubernetes-sigs kept the driver name, the group, the kinds and the DeviceClasses; its
//! `gpu.nvidia.com` DeviceClass also maps the extended resource `nvidia.com/gpu` under
//! `resource.k8s.io/v1` (`deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml`).
//! Sharing inside a MIG instance is MIG time-slicing or MIG MPS, never whole-GPU sharing. Without a
//! config, the pods that share one ResourceClaim share its device (time-slicing); a claim made from a
//! template belongs to one pod.
//!
//! Extended resources backed by DRA (KEP-5004, https://www.kubernetes.dev/resources/keps/5004/, feature
//! gate `DRAExtendedResource`, alpha in Kubernetes 1.34, beta in 1.36; kubernetes/website, page "DRA
//! Features", section "Extended resource allocation by DRA"): a DeviceClass may name an extended resource in `spec.extendedResourceName`, and every
//! DeviceClass is also requested as `deviceclass.resource.kubernetes.io/<class name>` (kubernetes
//! `staging/src/k8s.io/api/resource/v1beta1/types.go`, `ResourceDeviceClassPrefix`). A container that
//! requests such a resource in `resources.requests`/`limits` gets devices of the class through one
//! ResourceClaim the scheduler makes for the pod alone: an `ExactCount` request of that many devices,
//! annotated `resource.kubernetes.io/extended-resource-claim: "true"` (`ExtendedResourceClaimAnnotation`,
//! same file), whose name and request mappings the pod records in `status.extendedResourceClaimStatus`
//! (`PodExtendedResourceClaimStatus`, k8s-openapi 0.29 `src/v1_35/api/core/v1/pod_status.rs`; an
//! example of both in kubernetes-sigs/dra-driver-nvidia-gpu `demo/specs/extended-resources/gpu-full.yaml`). The class's config
//! applies to those devices as to any claim on the class, and like a claim from a template the claim is
//! one pod's: a device goes to one claim, unless the driver publishes its GPUs for several claims
//! (`allowMultipleAllocations`, KEP-5075), which NVIDIA's driver does only under its alpha
//! `ConsumableShares` feature gate, off by default (kubernetes-sigs/dra-driver-nvidia-gpu pull request
//! 1257). One extended resource is served by the device plugin or by DRA on a node, not both; a node
//! whose device plugin advertises the resource serves it through the device plugin.
//!
//! What the cluster recorded as allocated is read as a fact ([`Published::allocation`]): each
//! claim's `status.allocation.devices.results` (driver, pool, device, `shareID`) against the devices
//! the ResourceSlices publish ([`published`]: whether a device goes to several claims, the GPU a MIG
//! device is part of), and the pods a claim belongs to: those its `status.reservedFor` names, those
//! that name it in `spec.resourceClaims`, and those whose `status.resourceClaimStatuses` (a claim
//! made from a template) or `status.extendedResourceClaimStatus` names it.

use crate::crd;
use gpu_trust_model::fleet::{Allocation, DeviceId, DraClaimUse, DraStrategy, ResourceClaimInfo};
use gpu_trust_model::resource;
use gpu_trust_model::ObjectRef;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) const NVIDIA_DRIVER: &str = "gpu.nvidia.com";
/// The implicit extended resource of every DeviceClass is this prefix and the class name.
const IMPLICIT_PREFIX: &str = "deviceclass.resource.kubernetes.io/";
/// The annotation on the ResourceClaim the scheduler makes for a pod's extended resources.
const EXTENDED_CLAIM_ANNOTATION: &str = "resource.kubernetes.io/extended-resource-claim";
/// A DeviceClass's CEL selector that names the NVIDIA driver's domain (`device.driver ==
/// 'gpu.nvidia.com'`, or an attribute of its domain, `device.attributes['gpu.nvidia.com']`) selects the
/// NVIDIA driver's devices: attribute domains are the driver's name (the Kubernetes documentation's
/// DeviceClass examples; kubernetes-sigs/dra-driver-nvidia-gpu
/// `demo/specs/extended-resources/mig-1g-12gb.yaml`).
const NVIDIA_SELECTOR: &str = "gpu.nvidia.com";
/// Such a selector selects MIG devices when it asks for the driver's `type` attribute `mig` (same demo
/// file), written here without spaces and with single quotes.
const NVIDIA_MIG_SELECTOR: &str = "device.attributes['gpu.nvidia.com'].type=='mig'";
const MIG_CLASS: &str = "mig.nvidia.com";
const MIG_CONFIG_KIND: &str = "MigDeviceConfig";
const TIME_SLICING: &str = "TimeSlicing";
const MPS: &str = "MPS";
const NVIDIA_CLASSES: &[&str] = &["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"];

#[derive(Debug, Clone)]
pub(crate) struct ClaimDraft {
    pub object: ObjectRef,
    pub namespace: String,
    pub name: String,
    pub template: bool,
    /// Made by the scheduler for one pod's extended resources (KEP-5004): the pod's alone.
    pub extended: bool,
    pub device_class: Option<String>,
    pub config: Option<DraStrategy>,
    /// The devices allocated to it, of the NVIDIA driver.
    pub allocated: Vec<Allocated>,
    /// The pods it is reserved for (`status.reservedFor`), by name.
    pub reserved_for: Vec<String>,
    /// A request asks for admin access (KEP-5018).
    pub admin_access: bool,
}

/// One device of a claim's allocation (`status.allocation.devices.results`).
#[derive(Debug, Clone)]
pub(crate) struct Allocated {
    pub pool: String,
    pub device: String,
    /// The result names a share of the device (`shareID`): the device may be allocated more than
    /// once.
    pub share: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct DeviceClassDraft {
    pub object: ObjectRef,
    pub name: String,
    pub config: Option<DraStrategy>,
    pub nvidia: bool,
    /// `spec.extendedResourceName`.
    pub extended_resource: Option<String>,
    /// A selector names the NVIDIA driver (`device.driver == 'gpu.nvidia.com'`).
    pub selects_nvidia: bool,
    /// A selector asks for the NVIDIA driver's MIG devices.
    pub selects_mig: bool,
    /// `metadata.creationTimestamp`: the newer of two classes naming one extended resource serves it.
    pub created: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
}

/// The strategy an NVIDIA opaque config names.
pub(crate) fn config_strategy(configs: &[crd::DeviceConfig]) -> Option<DraStrategy> {
    configs.iter().find_map(|c| {
        let o = c.opaque.as_ref()?;
        if o.driver.as_deref() != Some(NVIDIA_DRIVER) {
            return None;
        }
        let p = o.parameters.as_ref()?;
        let kind = p.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        let sharing = p
            .get("sharing")
            .and_then(|s| s.get("strategy"))
            .and_then(|s| s.as_str());
        Some(match (kind, sharing) {
            (MIG_CONFIG_KIND, Some(MPS)) => DraStrategy::MigMps,
            (MIG_CONFIG_KIND, Some(TIME_SLICING)) => DraStrategy::MigTimeSlicing,
            (MIG_CONFIG_KIND, _) => DraStrategy::Mig,
            (_, Some(MPS)) => DraStrategy::Mps,
            (_, Some(TIME_SLICING)) => DraStrategy::TimeSlicing,
            _ => DraStrategy::Exclusive,
        })
    })
}

pub(crate) fn claim_draft(
    object: ObjectRef,
    namespace: String,
    name: String,
    template: bool,
    spec: &crd::ClaimSpec,
    status: Option<&crd::ClaimStatus>,
) -> ClaimDraft {
    let device_class = spec
        .devices
        .requests
        .iter()
        .find_map(|r| r.device_class().map(str::to_string));
    let allocated = status
        .and_then(|s| s.allocation.as_ref())
        .and_then(|a| a.devices.as_ref())
        .map(|d| {
            d.results
                .iter()
                .filter(|r| r.driver.as_deref().is_none_or(|dr| dr == NVIDIA_DRIVER))
                .filter_map(|r| {
                    Some(Allocated {
                        pool: r.pool.clone()?,
                        device: r.device.clone()?,
                        share: r.share_id.as_deref().is_some_and(|s| !s.is_empty()),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let reserved_for = status
        .into_iter()
        .flat_map(|s| &s.reserved_for)
        .filter(|r| r.resource.as_deref().is_none_or(|r| r == "pods"))
        .filter_map(|r| r.name.clone())
        .collect();
    ClaimDraft {
        object,
        namespace,
        name,
        template,
        extended: false,
        device_class,
        config: config_strategy(&spec.devices.config),
        allocated,
        reserved_for,
        admin_access: spec
            .devices
            .requests
            .iter()
            .any(crd::DeviceRequest::admin_access),
    }
}

/// The claims that are NVIDIA GPU claims, with their strategy and whether their devices may be
/// allocated to other claims too.
///
/// A device published with `allowMultipleAllocations` goes to several claims, in any namespace
/// (consumable capacity, KEP-5075, beta and on by default since Kubernetes 1.36): NVIDIA's driver
/// publishes its GPUs and dynamic MIG devices so under `--consumable-shares`, and time-slices the
/// claims that share one (its "system-mediated" sharing supports time-slicing only and refuses MPS:
/// kubernetes-sigs/dra-driver-nvidia-gpu pull requests 1257 and 1375, `docs/concepts/gpu-sharing.md`).
/// A claim allocated such a device, or a share of one (`shareID`), shares it; one not allocated yet
/// may be given one when the input's ResourceSlices publish devices of its kind so (the driver's flag
/// is set for the whole installation).
pub(crate) fn resolve(
    claims: &[ClaimDraft],
    classes: &[DeviceClassDraft],
    published: &Published,
) -> Vec<ResourceClaimInfo> {
    let by_name: BTreeMap<&str, &DeviceClassDraft> =
        classes.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut out: Vec<ResourceClaimInfo> = claims
        .iter()
        .filter_map(|c| {
            let class = c
                .device_class
                .as_deref()
                .and_then(|n| by_name.get(n).copied());
            let nvidia = c.config.is_some()
                || class.is_some_and(|d| d.nvidia)
                || c.device_class
                    .as_deref()
                    .is_some_and(|n| NVIDIA_CLASSES.contains(&n));
            if !nvidia {
                return None;
            }
            let mig = c.device_class.as_deref() == Some(MIG_CLASS)
                || class.is_some_and(|d| d.selects_mig);
            let shareable = if c.allocated.is_empty() {
                published.shares(mig)
            } else {
                c.allocated.iter().any(|a| published.shareable(a))
            };
            let strategy =
                c.config
                    .or(class.and_then(|d| d.config))
                    .unwrap_or(match (mig, shareable) {
                        (true, true) => DraStrategy::MigTimeSlicing,
                        (true, false) => DraStrategy::Mig,
                        (false, true) => DraStrategy::TimeSlicing,
                        (false, false) if c.template || c.extended => DraStrategy::Exclusive,
                        (false, false) => DraStrategy::TimeSlicing,
                    });
            Some(ResourceClaimInfo {
                object: c.object.clone(),
                template: c.template,
                device_class: c.device_class.clone(),
                strategy,
                admin_access: c.admin_access,
                shareable,
            })
        })
        .collect();
    out.sort_by(|a, b| a.object.cmp(&b.object));
    out
}

/// The attributes NVIDIA's DRA driver publishes for each device: its `type` (`gpu`, `mig`), its
/// `uuid`, a MIG device's `parentUUID` and the GPU's `productName`
/// (kubernetes-sigs/dra-driver-nvidia-gpu `cmd/gpu-kubelet-plugin/deviceinfo.go`, `GpuInfo.Attributes`
/// and `CommonAttributesMig`, for static and dynamic MIG devices alike). An attribute written without
/// a domain is in the driver's own (Kubernetes API reference, `Device.attributes`).
const TYPE: &str = "type";
const MIG_TYPE: &str = "mig";
const UUID: &str = "uuid";
const PARENT_UUID: &str = "parentUUID";
const PRODUCT_NAME: &str = "productName";

/// A device a DRA driver publishes in a ResourceSlice, as the audit reads it.
#[derive(Debug, Clone)]
pub(crate) struct PublishedDevice {
    pub driver: String,
    pub pool: String,
    pub name: String,
    /// `spec.nodeName` of its slice.
    pub node: Option<String>,
    pub uuid: Option<String>,
    /// A MIG device: a partition of one physical GPU.
    pub mig: bool,
    /// The physical GPU a partition is part of: its `parentUUID`, else the counter set it consumes
    /// from (partitionable devices, KEP-4815: the driver defines one counter set per physical GPU and
    /// its partitions consume from it, `cmd/gpu-kubelet-plugin/partitions.go`).
    pub parent: Option<DeviceId>,
    /// `allowMultipleAllocations: true`.
    pub shareable: bool,
    pub product: Option<String>,
    generation: i64,
}

/// The devices of one ResourceSlice.
pub(crate) fn published(slice: &crd::ResourceSlice) -> Vec<PublishedDevice> {
    let spec = &slice.spec;
    let (Some(driver), Some(pool)) = (spec.driver.as_deref(), spec.pool.name.as_deref()) else {
        return Vec::new();
    };
    spec.devices
        .iter()
        .filter_map(|d| {
            let name = d.name.clone()?;
            let f = d.fields();
            let attribute = |key: &str| {
                f.attributes
                    .get(key)
                    .or_else(|| f.attributes.get(&format!("{driver}/{key}")))
                    .and_then(|a| a.string.clone())
            };
            let parent_uuid = attribute(PARENT_UUID);
            let mig = attribute(TYPE).as_deref() == Some(MIG_TYPE) || parent_uuid.is_some();
            let counters = f
                .consumes_counters
                .iter()
                .find_map(|c| c.counter_set.clone());
            let parent = match (parent_uuid, counters) {
                (Some(u), _) => Some(DeviceId::Uuid(u)),
                (None, Some(set)) if mig => Some(DeviceId::Dra {
                    driver: driver.to_string(),
                    pool: pool.to_string(),
                    device: set,
                }),
                _ => None,
            };
            Some(PublishedDevice {
                driver: driver.to_string(),
                pool: pool.to_string(),
                node: spec.node_name.clone(),
                uuid: attribute(UUID),
                mig,
                parent,
                shareable: f.allow_multiple_allocations == Some(true),
                product: attribute(PRODUCT_NAME),
                generation: spec.pool.generation,
                name,
            })
        })
        .collect()
}

/// What NVIDIA's DRA driver publishes of one node's GPUs: how many physical GPUs its devices are on
/// (a whole GPU by its UUID, a MIG device by its parent), the product name, and each whole GPU's
/// UUID by its minor number.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeGpus {
    pub count: u32,
    pub product: Option<String>,
    pub uuids: BTreeMap<u32, String>,
}

/// The devices the input's ResourceSlices publish, by driver, pool and name: of each pool, only the
/// slices of its highest generation (Kubernetes API reference, ResourceSlice: "A consumer must only
/// use ResourceSlices with the highest generation number and ignore all others").
#[derive(Debug, Default)]
pub(crate) struct Published {
    devices: BTreeMap<(String, String, String), PublishedDevice>,
}

impl Published {
    pub(crate) fn new(all: Vec<PublishedDevice>) -> Published {
        let mut newest: BTreeMap<(&str, &str), i64> = BTreeMap::new();
        for d in &all {
            let g = newest.entry((&d.driver, &d.pool)).or_insert(d.generation);
            *g = (*g).max(d.generation);
        }
        let keep: Vec<bool> = all
            .iter()
            .map(|d| newest.get(&(d.driver.as_str(), d.pool.as_str())) == Some(&d.generation))
            .collect();
        let devices = all
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(d, _)| ((d.driver.clone(), d.pool.clone(), d.name.clone()), d))
            .collect();
        Published { devices }
    }

    fn get(&self, pool: &str, device: &str) -> Option<&PublishedDevice> {
        self.devices.get(&(
            NVIDIA_DRIVER.to_string(),
            pool.to_string(),
            device.to_string(),
        ))
    }

    /// Whether an allocated device may go to other claims too.
    fn shareable(&self, a: &Allocated) -> bool {
        a.share || self.get(&a.pool, &a.device).is_some_and(|d| d.shareable)
    }

    /// Whether the NVIDIA driver publishes devices of the kind (MIG devices or GPUs) for several
    /// claims.
    fn shares(&self, mig: bool) -> bool {
        self.devices
            .values()
            .any(|d| d.driver == NVIDIA_DRIVER && d.shareable && d.mig == mig)
    }

    /// What the NVIDIA driver's devices on node `node` say of its GPUs; `None` when it publishes none
    /// there.
    pub(crate) fn node_gpus(&self, node: &str) -> Option<NodeGpus> {
        let mut out = NodeGpus::default();
        let mut physical: BTreeSet<DeviceId> = BTreeSet::new();
        for d in self
            .devices
            .values()
            .filter(|d| d.driver == NVIDIA_DRIVER && d.node.as_deref() == Some(node))
        {
            out.product = out.product.take().or_else(|| d.product.clone());
            let id = match (&d.parent, &d.uuid) {
                (Some(parent), _) => parent.clone(),
                (None, Some(uuid)) if !d.mig => DeviceId::Uuid(uuid.clone()),
                _ => DeviceId::Uuid(d.name.clone()),
            };
            physical.insert(id);
            // A whole GPU is published as `gpu-<minor>` (`deviceinfo.go`, `CanonicalName`).
            if let (false, Some(uuid)) = (d.mig, &d.uuid) {
                if let Some(minor) = d.name.strip_prefix("gpu-").and_then(|m| m.parse().ok()) {
                    out.uuids.insert(minor, uuid.clone());
                }
            }
        }
        out.count = u32::try_from(physical.len()).unwrap_or(u32::MAX);
        (out.count > 0).then_some(out)
    }

    /// What the cluster recorded of one device allocated to the claim `record`: the device, the GPU
    /// it is a partition of and whether others may be given it too. Without its ResourceSlice, a MIG
    /// device's GPU is the one NVIDIA's driver names it after: `gpu-<minor>-mig-...` is a partition of
    /// `gpu-<minor>` (`deviceinfo.go` and `mig.go`, `CanonicalName`).
    pub(crate) fn allocation(&self, record: &ObjectRef, a: &Allocated) -> Allocation {
        let dra = |device: &str| DeviceId::Dra {
            driver: NVIDIA_DRIVER.to_string(),
            pool: a.pool.clone(),
            device: device.to_string(),
        };
        let parent = match self.get(&a.pool, &a.device) {
            Some(d) => d.parent.clone(),
            None => a
                .device
                .split_once("-mig-")
                .map(|(gpu, _)| gpu)
                .filter(|gpu| gpu.starts_with("gpu-"))
                .map(dra),
        };
        Allocation {
            device: dra(&a.device),
            parent,
            shareable: self.shareable(a),
            record: record.clone(),
        }
    }
}

pub(crate) fn class_draft(dc: &crd::DeviceClass, object: ObjectRef) -> DeviceClassDraft {
    let name = dc.metadata.name.clone().unwrap_or_default();
    DeviceClassDraft {
        object,
        nvidia: NVIDIA_CLASSES.contains(&name.as_str())
            || dc.spec.config.iter().any(|c| {
                c.opaque.as_ref().and_then(|o| o.driver.as_deref()) == Some(NVIDIA_DRIVER)
            }),
        config: config_strategy(&dc.spec.config),
        extended_resource: dc.spec.extended_resource_name.clone(),
        selects_nvidia: selector_holds(dc, NVIDIA_SELECTOR),
        selects_mig: selector_holds(dc, NVIDIA_MIG_SELECTOR),
        created: dc.metadata.creation_timestamp.clone(),
        name,
    }
}

/// Whether a CEL selector of the class holds `what`, read without spaces and with `"` as `'`.
fn selector_holds(dc: &crd::DeviceClass, what: &str) -> bool {
    dc.spec.selectors.iter().any(|s| {
        s.cel
            .as_ref()
            .and_then(|c| c.expression.as_deref())
            .is_some_and(|e| {
                let e: String = e
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .map(|c| if c == '"' { '\'' } else { c })
                    .collect();
                e.contains(what)
            })
    })
}

/// Whether a ResourceClaim is the one the scheduler made for a pod's extended resources.
pub(crate) fn is_extended_claim(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> bool {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(EXTENDED_CLAIM_ANNOTATION))
        .is_some_and(|v| v == "true")
}

/// A pod's `status.extendedResourceClaimStatus`: the claim's name and the resources it serves.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExtendedStatus {
    pub claim: Option<String>,
    pub resources: Vec<String>,
}

impl ExtendedStatus {
    pub(crate) fn of(s: &crd::ExtendedResourceClaimStatus) -> ExtendedStatus {
        let mut resources: Vec<String> = s
            .request_mappings
            .iter()
            .filter_map(|m| m.resource_name.clone())
            .collect();
        resources.sort();
        resources.dedup();
        ExtendedStatus {
            claim: s.resource_claim_name.clone().filter(|n| !n.is_empty()),
            resources,
        }
    }
}

/// What a pod's extended resources come to under DRA.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExtendedUses {
    /// The NVIDIA GPU requests among them, each as the use of the pod's own claim.
    pub uses: Vec<DraClaimUse>,
    /// Resources DRA serves (no node advertises them: the scheduler does not look for them there).
    pub served: Vec<String>,
    /// The claim the scheduler made, when the pod's status names it.
    pub claim: Option<String>,
    /// Why a resource could not be judged: (resource, reason).
    pub unresolved: Vec<(String, String)>,
}

/// Whether an extended resource has the shape of a GPU: its name after the domain is `gpu`, or starts
/// with `gpu.`, `gpu-` or `mig-`, as the NVIDIA device plugin's (`nvidia.com/gpu`,
/// `nvidia.com/gpu.shared`, `nvidia.com/mig-<profile>`, [`resource`]), the DRA driver's extended resource
/// demos (`nvidia.com/mig-1g.12gb`) and the Kubernetes documentation's DRA example (`example.com/gpu`)
/// write GPU resources.
fn gpu_shaped(name: &str) -> bool {
    let Some((_, local)) = name.split_once('/') else {
        return false;
    };
    local == "gpu"
        || local.starts_with("gpu.")
        || local.starts_with("gpu-")
        || local.starts_with("mig-")
}

/// What the input says about extended resources backed by DRA, indexed once for every pod: the
/// DeviceClasses by name and by the extended resource each serves, the ResourceClaims by namespace and
/// name, and what the nodes advertise.
pub(crate) struct Extended<'a> {
    by_name: BTreeMap<&'a str, &'a DeviceClassDraft>,
    by_resource: BTreeMap<&'a str, &'a DeviceClassDraft>,
    claims: BTreeMap<(&'a str, &'a str), &'a ClaimDraft>,
    advertised: BTreeSet<String>,
    nodes_known: bool,
    published: &'a Published,
}

impl<'a> Extended<'a> {
    /// `advertised`: the extended resources nodes of the input advertise; `nodes_known`: whether the
    /// input has nodes and each has its status (what it advertises).
    pub(crate) fn new(
        classes: &'a [DeviceClassDraft],
        claims: &'a [ClaimDraft],
        advertised: BTreeSet<String>,
        nodes_known: bool,
        published: &'a Published,
    ) -> Extended<'a> {
        // Of two classes naming one extended resource, the newer serves it; at the same time, the
        // first by name (the `extendedResourceName` field's documentation in `DeviceClassSpec`).
        let mut by_resource: BTreeMap<&str, &DeviceClassDraft> = BTreeMap::new();
        for c in classes {
            let Some(r) = c.extended_resource.as_deref() else {
                continue;
            };
            let e = by_resource.entry(r).or_insert(c);
            if (&c.created, std::cmp::Reverse(&c.name)) > (&e.created, std::cmp::Reverse(&e.name)) {
                *e = c;
            }
        }
        Extended {
            by_name: classes.iter().map(|c| (c.name.as_str(), c)).collect(),
            by_resource,
            claims: claims
                .iter()
                .filter(|c| !c.template)
                .map(|c| ((c.namespace.as_str(), c.name.as_str()), c))
                .collect(),
            advertised,
            nodes_known,
            published,
        }
    }

    /// The class that serves extended resource `name`: the implicit name's class, or the class naming
    /// it in `extendedResourceName`.
    fn class_of(&self, name: &str) -> Option<&'a DeviceClassDraft> {
        match name.strip_prefix(IMPLICIT_PREFIX) {
            Some(class) => self.by_name.get(class).copied(),
            None => self.by_resource.get(name).copied(),
        }
    }

    /// Whether the pod's own claim (`claim`, when the input has it) may share its devices with other
    /// claims: its allocation says, else what the driver publishes (see [`resolve`]).
    fn shareable(&self, claim: Option<&ClaimDraft>, mig: bool) -> bool {
        match claim.filter(|c| !c.allocated.is_empty()) {
            Some(c) => c.allocated.iter().any(|a| self.published.shareable(a)),
            None => self.published.shares(mig),
        }
    }

    /// The pod's extended resources (`resources`, summed over its containers) that DRA serves, with
    /// the NVIDIA GPU requests among them as uses of the pod's own claim. `status` is the pod's
    /// `status.extendedResourceClaimStatus`; the claim it names, when the input has it, says the class
    /// when the input lacks the class's mapping.
    pub(crate) fn uses(
        &self,
        resources: &BTreeMap<String, u64>,
        status: Option<&ExtendedStatus>,
        namespace: &str,
    ) -> ExtendedUses {
        let mut out = ExtendedUses {
            claim: status.and_then(|s| s.claim.clone()),
            ..ExtendedUses::default()
        };
        let status_claim = out
            .claim
            .as_deref()
            .and_then(|n| self.claims.get(&(namespace, n)).copied());
        for name in resources.keys() {
            let mapped = status.is_some_and(|s| s.resources.iter().any(|r| r == name));
            let advertised = self.advertised.contains(name);
            // The device plugin's own names stay the device plugin's unless the pod's status says DRA
            // served them, or a class maps them and no node of the input (each with its status)
            // advertises them: a node that runs the device plugin advertises them and serves them so.
            if resource::is_gpu_resource(name)
                && !mapped
                && !(self.nodes_known
                    && !advertised
                    && self.by_resource.contains_key(name.as_str()))
            {
                continue;
            }
            let class = match self.class_of(name) {
                Some(c) => c,
                None => {
                    // The scheduler's claim, when the input has it, names the class in its request.
                    let claimed = status_claim
                        .filter(|_| mapped)
                        .and_then(|c| c.device_class.as_deref());
                    if let Some(c) = claimed.and_then(|n| self.by_name.get(n).copied()) {
                        c
                    } else if let Some(n) = claimed.filter(|n| NVIDIA_CLASSES.contains(n)) {
                        let mig = n == MIG_CLASS;
                        out.uses.push(use_of(
                            Some(n.to_string()),
                            None,
                            mig,
                            self.shareable(status_claim, mig),
                        ));
                        out.served.push(name.clone());
                        continue;
                    } else {
                        if let Some(class) = name.strip_prefix(IMPLICIT_PREFIX) {
                            out.unresolved.push((
                                name.clone(),
                                format!("DeviceClass {class} is not in the input"),
                            ));
                        } else if mapped {
                            out.unresolved.push((
                                name.clone(),
                                "the pod's status says DRA serves it, and neither a DeviceClass naming it nor the ResourceClaim the status names is in the input".to_string(),
                            ));
                        } else if gpu_shaped(name) && !advertised {
                            out.unresolved.push((
                                name.clone(),
                                "no DeviceClass in the input names it in extendedResourceName and no node advertises it".to_string(),
                            ));
                        }
                        continue;
                    }
                }
            };
            // A node whose device plugin advertises the resource serves it so.
            if advertised && !mapped {
                continue;
            }
            out.served.push(name.clone());
            if class.nvidia || class.selects_nvidia {
                let mig = class.name == MIG_CLASS || class.selects_mig;
                let shareable = self.shareable(status_claim.filter(|_| mapped), mig);
                out.uses.push(use_of(
                    Some(class.name.clone()),
                    class.config,
                    mig,
                    shareable,
                ));
            }
        }
        out
    }
}

/// The use of a pod's own claim on `class`: the class's config decides how it shares its device;
/// without one, each device is the pod's alone (a MIG instance for a class of MIG devices), unless
/// the driver publishes its devices for several claims (`shareable`, see [`resolve`]).
fn use_of(
    device_class: Option<String>,
    config: Option<DraStrategy>,
    mig: bool,
    shareable: bool,
) -> DraClaimUse {
    DraClaimUse {
        claim: None,
        template: None,
        device_class,
        strategy: config.unwrap_or(match (mig, shareable) {
            (true, true) => DraStrategy::MigTimeSlicing,
            (true, false) => DraStrategy::Mig,
            (false, true) => DraStrategy::TimeSlicing,
            (false, false) => DraStrategy::Exclusive,
        }),
        shareable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(kind: &str, strategy: Option<&str>) -> Vec<crd::DeviceConfig> {
        let mut parameters =
            serde_json::json!({"apiVersion": "resource.nvidia.com/v1beta1", "kind": kind});
        if let Some(s) = strategy {
            parameters["sharing"] = serde_json::json!({"strategy": s});
        }
        let v =
            serde_json::json!([{"opaque": {"driver": "gpu.nvidia.com", "parameters": parameters}}]);
        serde_json::from_value(v).unwrap_or_default()
    }

    fn class(name: &str, yaml_spec: serde_json::Value, created: Option<&str>) -> DeviceClassDraft {
        let mut v = serde_json::json!({"metadata": {"name": name}, "spec": yaml_spec});
        if let Some(c) = created {
            v["metadata"]["creationTimestamp"] = serde_json::json!(c);
        }
        let dc: crd::DeviceClass = serde_json::from_value(v).unwrap_or_default();
        let object = ObjectRef {
            kind: "DeviceClass".into(),
            namespace: None,
            name: name.into(),
            location: gpu_trust_model::Location::default(),
        };
        class_draft(&dc, object)
    }

    /// A selector naming the NVIDIA driver or its attributes, in either quote and any spacing, makes
    /// a class NVIDIA's; one asking for its `mig` type, a MIG class.
    #[test]
    fn selectors_naming_the_nvidia_driver_make_an_nvidia_class() {
        let cel = |e: &str| serde_json::json!({"selectors": [{"cel": {"expression": e}}]});
        let c = class("a", cel("device.driver==\"gpu.nvidia.com\""), None);
        assert!(c.selects_nvidia && !c.selects_mig);
        let c = class(
            "b",
            cel("device.driver == 'gpu.nvidia.com' && device.attributes[\"gpu.nvidia.com\"].type == \"mig\""),
            None,
        );
        assert!(c.selects_nvidia && c.selects_mig);
        let c = class("c", cel("device.driver == 'gpu.example.com'"), None);
        assert!(!c.selects_nvidia && !c.nvidia);
    }

    /// Of two classes naming one extended resource, the newer serves it; at the same time, the first
    /// by name; the implicit name is the class's own.
    #[test]
    fn the_newer_class_serves_an_extended_resource() {
        let spec = serde_json::json!({"extendedResourceName": "example.com/gpu"});
        let classes = vec![
            class("old", spec.clone(), Some("2026-01-01T00:00:00Z")),
            class("new-b", spec.clone(), Some("2026-06-01T00:00:00Z")),
            class("new-a", spec.clone(), Some("2026-06-01T00:00:00Z")),
        ];
        let published = Published::default();
        let ext = Extended::new(&classes, &[], BTreeSet::new(), false, &published);
        let name = |r: &str| ext.class_of(r).map(|c| c.name.as_str());
        assert_eq!(name("example.com/gpu"), Some("new-a"));
        assert_eq!(name("deviceclass.resource.kubernetes.io/old"), Some("old"));
        assert_eq!(name("deviceclass.resource.kubernetes.io/gone"), None);
        assert_eq!(name("example.com/other"), None);
    }

    /// GPU-shaped names are the device plugin's and the DRA examples' forms; HAMi's memory and core
    /// resources, hugepages and other devices are not.
    #[test]
    fn gpu_shaped_names() {
        for yes in [
            "example.com/gpu",
            "nvidia.com/mig-1g.12gb",
            "nvidia.com/gpu.shared",
            "example.com/gpu-a100",
        ] {
            assert!(gpu_shaped(yes), "{yes}");
        }
        for no in [
            "nvidia.com/gpumem",
            "nvidia.com/gpucores",
            "hugepages-2Mi",
            "example.com/foo",
            "gpu",
        ] {
            assert!(!gpu_shaped(no), "{no}");
        }
    }

    /// A `MigDeviceConfig` with a sharing strategy shares one MIG instance, not a whole GPU.
    #[test]
    fn sharing_inside_a_mig_instance_is_mig_sharing() {
        assert_eq!(
            config_strategy(&config("MigDeviceConfig", Some("TimeSlicing"))),
            Some(DraStrategy::MigTimeSlicing)
        );
        assert_eq!(
            config_strategy(&config("MigDeviceConfig", Some("MPS"))),
            Some(DraStrategy::MigMps)
        );
        assert_eq!(
            config_strategy(&config("MigDeviceConfig", None)),
            Some(DraStrategy::Mig)
        );
        assert_eq!(
            config_strategy(&config("GpuConfig", Some("TimeSlicing"))),
            Some(DraStrategy::TimeSlicing)
        );
        assert_eq!(
            config_strategy(&config("VfioDeviceConfig", None)),
            Some(DraStrategy::Exclusive)
        );
    }

    fn slice(v: serde_json::Value) -> Vec<PublishedDevice> {
        let s: crd::ResourceSlice = serde_json::from_value(v).unwrap_or_default();
        published(&s)
    }

    fn claim_ref() -> ObjectRef {
        ObjectRef {
            kind: "ResourceClaim".into(),
            namespace: Some("ml".into()),
            name: "c".into(),
            location: gpu_trust_model::Location::default(),
        }
    }

    /// `v1beta1` writes a device's fields under `basic`; attributes may carry the driver's domain;
    /// only a pool's newest generation counts.
    #[test]
    fn slices_of_every_version_and_only_the_newest_generation() {
        let old = slice(serde_json::json!({"spec": {
            "driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1},
            "devices": [{"name": "gpu-0", "allowMultipleAllocations": true,
                         "attributes": {"type": {"string": "gpu"}}}]}}));
        let new = slice(serde_json::json!({"spec": {
            "driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 2},
            "devices": [{"name": "gpu-0", "basic": {
                "attributes": {"gpu.nvidia.com/type": {"string": "gpu"},
                               "gpu.nvidia.com/uuid": {"string": "GPU-1"}}}}]}}));
        assert!(old[0].shareable && !new[0].shareable);
        assert_eq!(new[0].uuid.as_deref(), Some("GPU-1"));
        let p = Published::new(old.into_iter().chain(new).collect());
        let a = Allocated {
            pool: "n1".into(),
            device: "gpu-0".into(),
            share: false,
        };
        assert!(!p.allocation(&claim_ref(), &a).shareable);
        // A `shareID` is a share of a device published for several claims, slice or not.
        let shared = Allocated { share: true, ..a };
        assert!(p.allocation(&claim_ref(), &shared).shareable);
        assert_eq!(p.node_gpus("n1").map(|g| g.count), Some(1));
    }

    /// A MIG device's GPU is its `parentUUID`; without its slice, the GPU NVIDIA's driver names it
    /// after; a whole GPU is no partition.
    #[test]
    fn the_gpu_a_mig_device_is_part_of() {
        let devices = slice(serde_json::json!({"spec": {
            "driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1"},
            "devices": [{"name": "gpu-0-mig-1g10gb-19-0",
                         "attributes": {"type": {"string": "mig"}, "parentUUID": {"string": "GPU-P"}},
                         "consumesCounters": [{"counterSet": "gpu-0-counter-set"}]}]}}));
        let p = Published::new(devices);
        let on = |device: &str| {
            let a = Allocated {
                pool: "n1".into(),
                device: device.into(),
                share: false,
            };
            p.allocation(&claim_ref(), &a).parent
        };
        assert_eq!(
            on("gpu-0-mig-1g10gb-19-0"),
            Some(DeviceId::Uuid("GPU-P".into()))
        );
        assert_eq!(
            on("gpu-3-mig-3g40gb-9-4"),
            Some(DeviceId::Dra {
                driver: NVIDIA_DRIVER.into(),
                pool: "n1".into(),
                device: "gpu-3".into()
            })
        );
        assert_eq!(on("gpu-3"), None);
        // One GPU, counted by its parent.
        assert_eq!(p.node_gpus("n1").map(|g| g.count), Some(1));
    }
}
