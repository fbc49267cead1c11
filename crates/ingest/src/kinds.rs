//! The object kinds ingest reads, recognised by `apiVersion` and `kind`, and read in one pass: the
//! dispatcher reads keys until it knows the kind, then hands the rest of the same mapping to that
//! kind's type. Everything else is ignored (only its namespace is kept).
//!
//! Pods and Nodes read `metadata` and `spec` as k8s-openapi types and, of `status`, only the pod's
//! phase and the node's allocatable resources: conditions, container statuses and image lists are
//! skipped unread, which is most of a large dump.

use crate::crd;
use gpu_trust_model::stack::NVIDIA_API_GROUP;
use k8s_openapi::api::{
    apps::v1 as apps, batch::v1 as batch, core::v1 as core, node::v1 as nodev1, rbac::v1 as rbacv1,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, DeserializeSeed, IgnoredAny, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Node,
    Pod,
    Namespace,
    ConfigMap,
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    Job,
    CronJob,
    RuntimeClass,
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
    ClusterPolicy,
    GpuCluster,
    ResourceClaim,
    ResourceClaimTemplate,
    DeviceClass,
    ResourceSlice,
}

/// The kind of an object, from its `apiVersion` and `kind`.
pub(crate) fn classify(api_version: &str, kind: &str) -> Option<Kind> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Some(match (group, version, kind) {
        ("", "v1", "Node") => Kind::Node,
        ("", "v1", "Pod") => Kind::Pod,
        ("", "v1", "Namespace") => Kind::Namespace,
        ("", "v1", "ConfigMap") => Kind::ConfigMap,
        ("apps", "v1", "Deployment") => Kind::Deployment,
        ("apps", "v1", "StatefulSet") => Kind::StatefulSet,
        ("apps", "v1", "DaemonSet") => Kind::DaemonSet,
        ("apps", "v1", "ReplicaSet") => Kind::ReplicaSet,
        ("batch", "v1", "Job") => Kind::Job,
        ("batch", "v1", "CronJob") => Kind::CronJob,
        ("node.k8s.io", "v1", "RuntimeClass") => Kind::RuntimeClass,
        ("rbac.authorization.k8s.io", "v1", "Role") => Kind::Role,
        ("rbac.authorization.k8s.io", "v1", "ClusterRole") => Kind::ClusterRole,
        ("rbac.authorization.k8s.io", "v1", "RoleBinding") => Kind::RoleBinding,
        ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding") => Kind::ClusterRoleBinding,
        (NVIDIA_API_GROUP, "v1", "ClusterPolicy") => Kind::ClusterPolicy,
        (NVIDIA_API_GROUP, "v1alpha1", "GPUCluster") => Kind::GpuCluster,
        ("resource.k8s.io", "v1" | "v1beta1" | "v1beta2", "ResourceClaim") => Kind::ResourceClaim,
        ("resource.k8s.io", "v1" | "v1beta1" | "v1beta2", "ResourceClaimTemplate") => {
            Kind::ResourceClaimTemplate
        }
        ("resource.k8s.io", "v1" | "v1beta1" | "v1beta2", "DeviceClass") => Kind::DeviceClass,
        ("resource.k8s.io", "v1" | "v1beta1" | "v1beta2", "ResourceSlice") => Kind::ResourceSlice,
        _ => return None,
    })
}

/// The built-in kinds ingest reads, with their API group and the versions it reads them at: the
/// versions current API servers serve (Kubernetes API reference; the "Deprecated API Migration
/// Guide" lists the ones removed: `extensions/v1beta1`, `apps/v1beta1` and `apps/v1beta2` workloads
/// in 1.16, `rbac.authorization.k8s.io/v1beta1` in 1.22, `batch/v1beta1` CronJob and
/// `node.k8s.io/v1beta1` RuntimeClass in 1.25). DRA's `resource.k8s.io` also had alpha versions
/// that older servers still serve.
pub(crate) const BUILT_IN: &[(&str, &str, &[&str])] = &[
    ("", "Node", &["v1"]),
    ("", "Pod", &["v1"]),
    ("", "Namespace", &["v1"]),
    ("", "ConfigMap", &["v1"]),
    ("apps", "Deployment", &["v1"]),
    ("apps", "StatefulSet", &["v1"]),
    ("apps", "DaemonSet", &["v1"]),
    ("apps", "ReplicaSet", &["v1"]),
    ("batch", "Job", &["v1"]),
    ("batch", "CronJob", &["v1"]),
    ("node.k8s.io", "RuntimeClass", &["v1"]),
    ("rbac.authorization.k8s.io", "Role", &["v1"]),
    ("rbac.authorization.k8s.io", "ClusterRole", &["v1"]),
    ("rbac.authorization.k8s.io", "RoleBinding", &["v1"]),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding", &["v1"]),
    (
        "resource.k8s.io",
        "ResourceClaim",
        &["v1", "v1beta1", "v1beta2"],
    ),
    (
        "resource.k8s.io",
        "ResourceClaimTemplate",
        &["v1", "v1beta1", "v1beta2"],
    ),
    (
        "resource.k8s.io",
        "DeviceClass",
        &["v1", "v1beta1", "v1beta2"],
    ),
    (
        "resource.k8s.io",
        "ResourceSlice",
        &["v1", "v1beta1", "v1beta2"],
    ),
];

/// The built-in API groups of the kinds above, and `extensions`, where old manifests put workloads.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "extensions",
    "node.k8s.io",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
];

/// Why an object of a built-in group that ingest did not classify cannot be read as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The field the message is about: `kind` or `apiVersion`.
    pub field: &'static str,
    pub message: String,
    /// An error (the API server refuses such an object); else a warning (a version older servers
    /// serve, which ingest does not read).
    pub error: bool,
}

/// Whether `apiVersion`/`kind` (which [`classify`] did not recognise) names a kind ingest reads in
/// a way the API server refuses: a kind in the wrong letter case (`kind: node`), a version that is
/// not served (`apiVersion: v2` for a Node), or a kind in a group that does not have it (`apps/v1`
/// Node). Dropping such an object would hide a node or a workload from the audit.
pub(crate) fn refusal(api_version: &str, kind: &str) -> Option<Refusal> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if !BUILT_IN_GROUPS.contains(&group) {
        return None;
    }
    let served = |g: &str, versions: &[&str]| {
        let api = |v: &&str| {
            if g.is_empty() {
                (*v).to_string()
            } else {
                format!("{g}/{v}")
            }
        };
        versions.iter().map(api).collect::<Vec<_>>().join(", ")
    };
    if let Some((g, k, versions)) = BUILT_IN.iter().find(|(_, k, _)| *k == kind) {
        if *g == group && versions.contains(&version) {
            return None;
        }
        if *g == group {
            let dra = *g == "resource.k8s.io";
            return Some(Refusal {
                field: "apiVersion",
                message: if dra {
                    format!(
                        "{k} is read at apiVersion {}; this one at {api_version}, an older DRA version, is not read, and the claims it describes are not resolved",
                        served(g, versions)
                    )
                } else {
                    format!(
                        "{k} is served at apiVersion {}; the API server would refuse {api_version}, and this object is not read",
                        served(g, versions)
                    )
                },
                error: !dra,
            });
        }
        return Some(Refusal {
            field: "apiVersion",
            message: format!(
                "{k} is in API group {} (apiVersion {}), not {api_version}: the API server would refuse this object",
                if g.is_empty() { "core" } else { g },
                served(g, versions)
            ),
            error: true,
        });
    }
    let (_, k, _) = BUILT_IN
        .iter()
        .find(|(_, k, _)| k.eq_ignore_ascii_case(kind))?;
    Some(Refusal {
        field: "kind",
        message: format!(
            "kind {kind:?} does not exist (kinds are case-sensitive) and the API server would refuse this object; did you mean {k:?}?"
        ),
        error: true,
    })
}

/// kustomize's API group: `Kustomization` (`kustomize.config.k8s.io/v1beta1`) and `Component`
/// (`v1alpha1`) are kustomize's input, never objects of a cluster (kustomize documentation,
/// "kustomization.yaml" and "Components").
const KUSTOMIZE_GROUP: &str = "kustomize.config.k8s.io";

/// Why an object of `group`/`kind` is a tool's input and not a rendered object: a kustomization
/// whose bases, patches, name prefixes and namespace are applied only when it is rendered.
pub(crate) fn unrendered(group: &str, kind: &str) -> Option<String> {
    (group == KUSTOMIZE_GROUP).then(|| {
        format!(
            "a {kind} is kustomize's input, not rendered here: the resources beside it are read as written, without its patches, name prefixes and namespace; audit what `kubectl kustomize DIR` (or `kustomize build DIR`) renders instead of the folder"
        )
    })
}

/// A Pod, without the parts of its status ingest does not read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PodObject {
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: Option<core::PodSpec>,
    pub status: Option<PodPhase>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodPhase {
    pub phase: Option<String>,
    pub extended_resource_claim_status: Option<crate::crd::ExtendedResourceClaimStatus>,
    #[serde(default)]
    pub resource_claim_statuses: Vec<crate::crd::PodResourceClaimStatus>,
}

/// A Node, without the parts of its status ingest does not read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct NodeObject {
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: Option<core::NodeSpec>,
    pub status: Option<NodeResources>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct NodeResources {
    pub allocatable: Option<BTreeMap<String, Quantity>>,
    pub capacity: Option<BTreeMap<String, Quantity>>,
}

/// An object of a known kind, typed.
pub(crate) enum Typed {
    Node(Box<NodeObject>),
    Pod(Box<PodObject>),
    Namespace(Box<core::Namespace>),
    ConfigMap(Box<core::ConfigMap>),
    Deployment(Box<apps::Deployment>),
    StatefulSet(Box<apps::StatefulSet>),
    DaemonSet(Box<apps::DaemonSet>),
    ReplicaSet(Box<apps::ReplicaSet>),
    Job(Box<batch::Job>),
    CronJob(Box<batch::CronJob>),
    RuntimeClass(Box<nodev1::RuntimeClass>),
    Role(Box<rbacv1::Role>),
    ClusterRole(Box<rbacv1::ClusterRole>),
    RoleBinding(Box<rbacv1::RoleBinding>),
    ClusterRoleBinding(Box<rbacv1::ClusterRoleBinding>),
    ClusterPolicy(Box<crd::ClusterPolicy>),
    GpuCluster(Box<crd::GpuCluster>),
    ResourceClaim(Box<crd::ResourceClaim>),
    ResourceClaimTemplate(Box<crd::ResourceClaimTemplate>),
    DeviceClass(Box<crd::DeviceClass>),
    ResourceSlice(Box<crd::ResourceSlice>),
}

impl Typed {
    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta {
        match self {
            Typed::Node(o) => &o.metadata,
            Typed::Pod(o) => &o.metadata,
            Typed::Namespace(o) => &o.metadata,
            Typed::ConfigMap(o) => &o.metadata,
            Typed::Deployment(o) => &o.metadata,
            Typed::StatefulSet(o) => &o.metadata,
            Typed::DaemonSet(o) => &o.metadata,
            Typed::ReplicaSet(o) => &o.metadata,
            Typed::Job(o) => &o.metadata,
            Typed::CronJob(o) => &o.metadata,
            Typed::RuntimeClass(o) => &o.metadata,
            Typed::Role(o) => &o.metadata,
            Typed::ClusterRole(o) => &o.metadata,
            Typed::RoleBinding(o) => &o.metadata,
            Typed::ClusterRoleBinding(o) => &o.metadata,
            Typed::ClusterPolicy(o) => &o.metadata,
            Typed::GpuCluster(o) => &o.metadata,
            Typed::ResourceClaim(o) => &o.metadata,
            Typed::ResourceClaimTemplate(o) => &o.metadata,
            Typed::DeviceClass(o) => &o.metadata,
            Typed::ResourceSlice(o) => &o.metadata,
        }
    }

    /// Whether objects of the kind live in a namespace.
    fn namespaced(&self) -> bool {
        !matches!(
            self,
            Typed::Node(_)
                | Typed::Namespace(_)
                | Typed::RuntimeClass(_)
                | Typed::ClusterRole(_)
                | Typed::ClusterRoleBinding(_)
                | Typed::ClusterPolicy(_)
                | Typed::GpuCluster(_)
                | Typed::DeviceClass(_)
                | Typed::ResourceSlice(_)
        )
    }

    /// The namespace of a namespaced object that is not a workload (ConfigMap, Role, RoleBinding,
    /// ResourceClaim, ResourceClaimTemplate).
    pub(crate) fn config_namespace(&self) -> Option<&str> {
        match self {
            Typed::ConfigMap(_)
            | Typed::Role(_)
            | Typed::RoleBinding(_)
            | Typed::ResourceClaim(_)
            | Typed::ResourceClaimTemplate(_) => {}
            _ => return None,
        }
        self.metadata()
            .namespace
            .as_deref()
            .filter(|n| !n.is_empty())
    }

    /// Whether a namespaced object names no `metadata.namespace`: it goes where whoever applies it
    /// says (`kubectl`'s context or `-n`, a Helm release), which the file does not.
    pub(crate) fn lacks_namespace(&self) -> bool {
        self.namespaced()
            && self
                .metadata()
                .namespace
                .as_deref()
                .is_none_or(str::is_empty)
    }
}

/// What the dispatcher found.
pub(crate) enum Dispatched {
    /// A known kind; `kind` is the object's `kind` as written.
    Known { kind: String, object: Typed },
    /// Another kind, with its `apiVersion` and `kind` as written: read through the controllers
    /// table or searched for pod templates, or only its namespace kept.
    Unknown {
        namespace: Option<String>,
        api_version: String,
        kind: String,
    },
    /// A mapping without `apiVersion` and `kind` (an item of a typed list such as `PodList`).
    NoKind,
    /// Not a mapping.
    NotAnObject,
    /// A list (`kind: List`, `*List`) whose `items` is not a sequence.
    BadList,
}

/// Reads one object. `supplied` gives the type of items that do not say theirs.
pub(crate) struct Dispatch<'k> {
    pub supplied: Option<(&'k str, &'k str)>,
}

impl<'de> DeserializeSeed<'de> for Dispatch<'_> {
    type Value = Dispatched;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Dispatched, D::Error> {
        deserializer.deserialize_any(self)
    }
}

macro_rules! not_an_object {
    ($($name:ident: $t:ty),*) => {
        $(fn $name<E: de::Error>(self, _: $t) -> Result<Dispatched, E> {
            Ok(Dispatched::NotAnObject)
        })*
    };
}

impl<'de> Visitor<'de> for Dispatch<'_> {
    type Value = Dispatched;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    not_an_object!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);

    fn visit_unit<E: de::Error>(self) -> Result<Dispatched, E> {
        Ok(Dispatched::NotAnObject)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Dispatched, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Dispatched::NotAnObject)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Dispatched, A::Error> {
        let (mut api, mut kind) = match self.supplied {
            Some((a, k)) => (Some(a.to_string()), Some(k.to_string())),
            None => (None, None),
        };
        let mut buffered: Vec<(String, serde_json::Value)> = Vec::new();
        while api.is_none() || kind.is_none() {
            let Some(key) = map.next_key::<Cow<'de, str>>()? else {
                break;
            };
            match key.as_ref() {
                // Anything but a string is an error at the value: which kind would it be?
                "apiVersion" => api = Some(map.next_value_seed(TypeField("apiVersion"))?),
                "kind" => kind = Some(map.next_value_seed(TypeField("kind"))?),
                _ => buffered.push((key.into_owned(), map.next_value::<serde_json::Value>()?)),
            }
        }
        let (Some(api), Some(kind)) = (api, kind) else {
            return Ok(Dispatched::NoKind);
        };
        let Some(k) = classify(&api, &kind) else {
            let list = kind.ends_with("List");
            if list
                && buffered
                    .iter()
                    .any(|(k, v)| k == "items" && !v.is_array() && !v.is_null())
            {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok(Dispatched::BadList);
            }
            // Unknown kind: keep its namespace, skip the rest.
            let mut namespace = buffered
                .iter()
                .find(|(k, _)| k == "metadata")
                .and_then(|(_, m)| m.get("namespace"))
                .and_then(|n| n.as_str())
                .map(str::to_string);
            let mut bad_list = false;
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == "metadata" && namespace.is_none() {
                    let m: MetaNamespace = map.next_value()?;
                    namespace = m.namespace;
                } else if list && key == "items" {
                    bad_list |= !map.next_value::<SequenceOrNull>()?.0;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if bad_list {
                return Ok(Dispatched::BadList);
            }
            return Ok(Dispatched::Unknown {
                namespace,
                api_version: api,
                kind,
            });
        };
        let replay = Replay {
            prefix: [("apiVersion", api), ("kind", kind.clone())],
            next: 0,
            buffered: buffered.into_iter(),
            pending: None,
            inner: map,
        };
        let object = typed(k, replay)?;
        Ok(Dispatched::Known { kind, object })
    }
}

/// The `apiVersion` or `kind` of an object, which must be a string.
struct TypeField(&'static str);

impl<'de> DeserializeSeed<'de> for TypeField {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TypeField {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a string {}", self.0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_string())
    }
}

/// Whether a value is a sequence (or null), read without keeping it.
struct SequenceOrNull(bool);

impl<'de> Deserialize<'de> for SequenceOrNull {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SequenceOrNull;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<SequenceOrNull, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(SequenceOrNull(true))
            }
            fn visit_unit<E: de::Error>(self) -> Result<SequenceOrNull, E> {
                Ok(SequenceOrNull(true))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SequenceOrNull, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(SequenceOrNull(false))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<SequenceOrNull, E> {
                Ok(SequenceOrNull(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<SequenceOrNull, E> {
                Ok(SequenceOrNull(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<SequenceOrNull, E> {
                Ok(SequenceOrNull(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<SequenceOrNull, E> {
                Ok(SequenceOrNull(false))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<SequenceOrNull, E> {
                Ok(SequenceOrNull(false))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct MetaNamespace {
    namespace: Option<String>,
}

fn read<'de, T: Deserialize<'de>, A: MapAccess<'de>>(replay: Replay<A>) -> Result<T, A::Error> {
    T::deserialize(de::value::MapAccessDeserializer::new(replay))
}

fn typed<'de, A: MapAccess<'de>>(k: Kind, r: Replay<A>) -> Result<Typed, A::Error> {
    Ok(match k {
        Kind::Node => Typed::Node(Box::new(read(r)?)),
        Kind::Pod => Typed::Pod(Box::new(read(r)?)),
        Kind::Namespace => Typed::Namespace(Box::new(read(r)?)),
        Kind::ConfigMap => Typed::ConfigMap(Box::new(read(r)?)),
        Kind::Deployment => Typed::Deployment(Box::new(read(r)?)),
        Kind::StatefulSet => Typed::StatefulSet(Box::new(read(r)?)),
        Kind::DaemonSet => Typed::DaemonSet(Box::new(read(r)?)),
        Kind::ReplicaSet => Typed::ReplicaSet(Box::new(read(r)?)),
        Kind::Job => Typed::Job(Box::new(read(r)?)),
        Kind::CronJob => Typed::CronJob(Box::new(read(r)?)),
        Kind::RuntimeClass => Typed::RuntimeClass(Box::new(read(r)?)),
        Kind::Role => Typed::Role(Box::new(read(r)?)),
        Kind::ClusterRole => Typed::ClusterRole(Box::new(read(r)?)),
        Kind::RoleBinding => Typed::RoleBinding(Box::new(read(r)?)),
        Kind::ClusterRoleBinding => Typed::ClusterRoleBinding(Box::new(read(r)?)),
        Kind::ClusterPolicy => Typed::ClusterPolicy(Box::new(read(r)?)),
        Kind::GpuCluster => Typed::GpuCluster(Box::new(read(r)?)),
        Kind::ResourceClaim => Typed::ResourceClaim(Box::new(read(r)?)),
        Kind::ResourceClaimTemplate => Typed::ResourceClaimTemplate(Box::new(read(r)?)),
        Kind::DeviceClass => Typed::DeviceClass(Box::new(read(r)?)),
        Kind::ResourceSlice => Typed::ResourceSlice(Box::new(read(r)?)),
    })
}

/// The rest of a mapping, with the entries the dispatcher already read put back in front.
struct Replay<A> {
    prefix: [(&'static str, String); 2],
    next: usize,
    buffered: std::vec::IntoIter<(String, serde_json::Value)>,
    pending: Option<serde_json::Value>,
    inner: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if let Some((k, _)) = self.prefix.get(self.next) {
            let key: de::value::StrDeserializer<'_, A::Error> = (*k).into_deserializer();
            return seed.deserialize(key).map(Some);
        }
        if let Some((k, v)) = self.buffered.next() {
            self.pending = Some(v);
            let key: de::value::StringDeserializer<A::Error> = k.into_deserializer();
            return seed.deserialize(key).map(Some);
        }
        self.inner.next_key_seed(seed)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        if let Some((_, v)) = self.prefix.get(self.next) {
            self.next += 1;
            let value: de::value::StrDeserializer<'_, A::Error> = v.as_str().into_deserializer();
            return seed.deserialize(value);
        }
        if let Some(v) = self.pending.take() {
            return seed.deserialize(v).map_err(de::Error::custom);
        }
        self.inner.next_value_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_the_api_server_refuses() {
        let r = refusal("v1", "node").unwrap();
        assert_eq!((r.field, r.error), ("kind", true));
        assert!(r.message.contains("did you mean \"Node\""), "{}", r.message);
        let r = refusal("v2", "Node").unwrap();
        assert_eq!((r.field, r.error), ("apiVersion", true));
        assert!(r.message.contains("apiVersion v1"), "{}", r.message);
        let r = refusal("extensions/v1beta1", "Deployment").unwrap();
        assert!(r.error && r.message.contains("apps/v1"), "{}", r.message);
        assert!(refusal("apps/v1", "Node").unwrap().error);
        // Older DRA versions: not read, said so.
        assert!(
            !refusal("resource.k8s.io/v1alpha3", "ResourceClaim")
                .unwrap()
                .error
        );
        // Kinds ingest does not read, and custom resources, are not its business.
        assert_eq!(refusal("v1", "Service"), None);
        assert_eq!(refusal("v1", "service"), None);
        assert_eq!(refusal("example.com/v1", "Node"), None);
    }

    #[test]
    fn kinds_by_group_and_version() {
        assert_eq!(classify("v1", "Pod"), Some(Kind::Pod));
        assert_eq!(classify("apps/v1", "Deployment"), Some(Kind::Deployment));
        assert_eq!(classify("batch.volcano.sh/v1alpha1", "Job"), None);
        assert_eq!(classify("batch/v1", "Job"), Some(Kind::Job));
        assert_eq!(
            classify("resource.k8s.io/v1beta1", "ResourceClaim"),
            Some(Kind::ResourceClaim)
        );
        assert_eq!(classify("v1", "Service"), None);
        assert_eq!(classify("apps/v1beta1", "Deployment"), None);
    }

    fn dispatch(text: &str, supplied: Option<(&str, &str)>) -> Dispatched {
        let entries = gpu_trust_source::read_all(text, "t.yaml", &Default::default());
        let gpu_trust_source::Entry::Object(o) = &entries[0] else {
            panic!()
        };
        o.deserialize_seed(Dispatch { supplied }).unwrap()
    }

    #[test]
    fn keys_before_the_kind_are_put_back() {
        let d = dispatch("metadata: {name: p, namespace: x}\nkind: Pod\napiVersion: v1\nspec: {containers: []}\n", None);
        let Dispatched::Known {
            object: Typed::Pod(p),
            ..
        } = d
        else {
            panic!()
        };
        assert_eq!(p.metadata.name.as_deref(), Some("p"));
        assert!(p.spec.is_some());
    }

    #[test]
    fn typed_list_items_get_their_type() {
        let d = dispatch("metadata: {name: p}\nspec: {containers: []}\n", None);
        assert!(matches!(d, Dispatched::NoKind));
        let d = dispatch(
            "metadata: {name: p}\nspec: {containers: []}\n",
            Some(("v1", "Pod")),
        );
        let Dispatched::Known {
            object: Typed::Pod(p),
            ..
        } = d
        else {
            panic!()
        };
        assert_eq!(p.metadata.name.as_deref(), Some("p"));
    }

    #[test]
    fn unknown_kinds_keep_their_namespace() {
        let d = dispatch(
            "apiVersion: v1\nkind: Service\nmetadata: {namespace: web}\nspec: {ports: []}\n",
            None,
        );
        assert!(
            matches!(d, Dispatched::Unknown { namespace: Some(n), kind, .. } if n == "web" && kind == "Service")
        );
        // A kind that is not a string is an error at the value.
        let entries = gpu_trust_source::read_all("kind: [odd]\n", "t.yaml", &Default::default());
        let gpu_trust_source::Entry::Object(o) = &entries[0] else {
            panic!()
        };
        let Err(err) = o.deserialize_seed(Dispatch { supplied: None }) else {
            panic!("a kind that is a sequence must be an error")
        };
        assert_eq!((err.location.line, err.location.column), (1, 7), "{err}");
        assert!(err.message.contains("expected a string kind"), "{err}");
    }
}
