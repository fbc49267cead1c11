//! The policy file as written: serde structs that refuse unknown fields, with spans on every value a
//! validation error may have to point at. [`crate::validate`] turns them into a [`crate::Policy`].

use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

pub(crate) type S<T> = Spanned<T>;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawPolicy {
    pub api_version: Option<S<String>>,
    pub kind: Option<S<String>>,
    /// Absent: the default labels; `null`: no label; a string: that label.
    #[serde(default, deserialize_with = "present")]
    pub tenant_label: Option<Option<S<String>>>,
    pub platform_namespaces: Option<S<Vec<S<String>>>>,
    #[serde(default)]
    pub tenants: Vec<S<RawTenant>>,
    pub trust: Option<RawTrust>,
    #[serde(default)]
    pub workloads: Vec<S<RawWorkload>>,
    pub host: Option<RawHost>,
    pub sharing: Option<RawSharing>,
    #[serde(default)]
    pub accept: Vec<S<RawAcceptance>>,
}

/// Keeps "present but null" apart from "absent" (`Some(None)` vs `None`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawTenant {
    pub name: Option<S<String>>,
    #[serde(default)]
    pub namespaces: Vec<S<String>>,
    pub latency: Option<S<String>>,
    pub confidential: Option<bool>,
    pub contract: Option<S<String>>,
    #[serde(default)]
    pub subjects: Vec<S<RawSubject>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSubject {
    pub kind: Option<S<String>>,
    pub name: Option<S<String>>,
    pub namespace: Option<S<String>>,
    /// Accepted so that subjects can be copied from a RoleBinding; it carries no meaning here.
    #[allow(dead_code)]
    pub api_group: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawTrust {
    pub default: Option<S<String>>,
    #[serde(default)]
    pub relations: Vec<S<RawRelation>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawRelation {
    #[serde(default)]
    pub tenants: Vec<S<String>>,
    pub level: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawWorkload {
    pub selector: Option<S<RawSelector>>,
    pub kind: Option<S<String>>,
    pub peak_memory: Option<S<QuantityText>>,
    pub latency: Option<S<String>>,
}

/// A memory quantity as written: a string (`18GiB`), or a plain number (`60`), which validation
/// then refuses for its missing unit with the value's line, as Kubernetes quantities may be
/// written as numbers.
#[derive(Debug)]
pub(crate) struct QuantityText(pub String);

impl<'de> Deserialize<'de> for QuantityText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = QuantityText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a memory quantity such as 18GiB")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSelector {
    pub namespace: Option<S<String>>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawHost {
    pub patch_window_days: Option<S<u32>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSharing {
    pub max_replicas: Option<S<u32>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawAcceptance {
    pub rule: Option<S<String>>,
    pub tenants: Option<S<Vec<S<String>>>>,
    pub namespaces: Option<S<Vec<S<String>>>>,
    pub workloads: Option<S<Vec<S<RawWorkloadRef>>>>,
    pub nodes: Option<S<Vec<S<String>>>>,
    pub reason: Option<S<String>>,
    pub until: Option<S<String>>,
}

/// A workload an acceptance is scoped to: its object's kind, namespace and name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawWorkloadRef {
    pub kind: Option<S<String>>,
    pub namespace: Option<S<String>>,
    pub name: Option<S<String>>,
}
