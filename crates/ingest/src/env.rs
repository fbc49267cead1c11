//! A container's environment that other objects give it: `envFrom` (every key of a ConfigMap or a
//! Secret, with an optional prefix) and `valueFrom` key references. Read with the pod spec, resolved
//! once every ConfigMap of the input is known: a ConfigMap's keys become the variables they set, as
//! the kubelet sets them; a ConfigMap absent from the input that may set a variable the audit reads
//! is [`UnresolvedKind::EnvFrom`], a Secret that may (gpu-trust never reads Secrets)
//! [`UnresolvedKind::SecretEnv`], and one that may set `NVIDIA_VISIBLE_DEVICES` is named on the
//! container (`ContainerInfo::visible_devices_secrets`) for the rules to judge where it matters.
//!
//! The kubelet's order (Kubernetes documentation, "Configure a Pod to Use a ConfigMap", and
//! `EnvFromSource`): the sources of `envFrom` in order, a later one winning over an earlier one for the
//! same name, then `env`, which wins over all of them.

use crate::nodes::ConfigMapDraft;
use gpu_trust_model::fleet::{ContainerInfo, Unresolved, UnresolvedKind};
use gpu_trust_model::ObjectRef;
use k8s_openapi::api::core::v1 as core;
use std::collections::BTreeMap;

/// Environment variables kept on a container: the ones that change isolation or device visibility,
/// and the DCGM exporter's (`gpu_trust_model::stack::EXPORTER_ENV_PREFIXES`).
pub(crate) const KEPT_ENV_PREFIXES: &[&str] = &["CUDA_", "NVIDIA_", "LD_PRELOAD", "HAMI_"];

/// The variable by which the NVIDIA container runtime picks a container's GPUs.
const VISIBLE_DEVICES: &str = "NVIDIA_VISIBLE_DEVICES";

/// The value recorded for a variable whose value comes from somewhere ingest does not read (a Secret,
/// a field of the pod).
pub(crate) const FROM_ELSEWHERE: &str = "<valueFrom>";

/// Whether the audit reads a variable of this name.
pub(crate) fn kept(name: &str) -> bool {
    kept_prefixes().any(|p| name.starts_with(p))
}

fn kept_prefixes() -> impl Iterator<Item = &'static &'static str> {
    KEPT_ENV_PREFIXES
        .iter()
        .chain(gpu_trust_model::stack::EXPORTER_ENV_PREFIXES)
}

/// Whether a source whose keys get `prefix` can set a variable the audit reads.
fn may_set_kept(prefix: &str) -> bool {
    kept_prefixes().any(|k| k.starts_with(prefix) || prefix.starts_with(k))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    ConfigMap { name: String, optional: bool },
    Secret(String),
}

/// What one container's environment takes from other objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Refs {
    /// `envFrom`, in order, with prefixes.
    from: Vec<(Source, String)>,
    /// `env[].valueFrom` of a kept name: the name, the source and its key.
    keys: Vec<(String, Source, String)>,
}

impl Refs {
    pub(crate) fn is_empty(&self) -> bool {
        self.from.is_empty() && self.keys.is_empty()
    }
}

/// The references of a container's `envFrom` and `env` (before resolution).
pub(crate) fn refs(env: Option<&[core::EnvVar]>, env_from: Option<&[core::EnvFromSource]>) -> Refs {
    let mut out = Refs::default();
    for f in env_from.into_iter().flatten() {
        let prefix = f.prefix.clone().unwrap_or_default();
        if let Some(c) = &f.config_map_ref {
            out.from.push((
                Source::ConfigMap {
                    name: c.name.clone(),
                    optional: c.optional.unwrap_or(false),
                },
                prefix.clone(),
            ));
        }
        if let Some(s) = &f.secret_ref {
            out.from.push((Source::Secret(s.name.clone()), prefix));
        }
    }
    for e in env.into_iter().flatten().filter(|e| kept(&e.name)) {
        let Some(from) = e.value.is_none().then_some(e.value_from.as_ref()).flatten() else {
            continue;
        };
        if let Some(c) = &from.config_map_key_ref {
            out.keys.push((
                e.name.clone(),
                Source::ConfigMap {
                    name: c.name.clone(),
                    optional: c.optional.unwrap_or(false),
                },
                c.key.clone(),
            ));
        } else if let Some(s) = &from.secret_key_ref {
            out.keys.push((
                e.name.clone(),
                Source::Secret(s.name.clone()),
                s.key.clone(),
            ));
        }
    }
    out
}

/// Fills in a container's environment from the ConfigMaps of the input (`config_maps` by namespace and
/// name), records the Secrets that may set `NVIDIA_VISIBLE_DEVICES`, and returns what it could not
/// resolve, held by `object`.
pub(crate) fn resolve(
    container: &mut ContainerInfo,
    refs: &Refs,
    namespace: &str,
    object: &ObjectRef,
    config_maps: &BTreeMap<(String, String), ConfigMapDraft>,
) -> Vec<Unresolved> {
    let mut unresolved = Vec::new();
    let mut gap = |what: UnresolvedKind, source: String| {
        unresolved.push(Unresolved {
            object: object.clone(),
            node: None,
            what,
            message: format!(
                "container {} of {object} {source}: whether it sets NVIDIA_VISIBLE_DEVICES or another variable the audit reads is not known",
                container.name
            ),
        })
    };
    let lookup = |name: &str| config_maps.get(&(namespace.to_string(), name.to_string()));
    // What envFrom sets, later sources winning; then the names `env` sets keep theirs. A Secret that
    // may set the variable leaves its value unknown, until a later source sets it.
    let mut from: BTreeMap<String, String> = BTreeMap::new();
    let mut secrets: Vec<String> = Vec::new();
    for (source, prefix) in &refs.from {
        match source {
            Source::ConfigMap { name, optional } => match lookup(name) {
                Some(cm) => {
                    for (k, v) in &cm.data {
                        let full = format!("{prefix}{k}");
                        if kept(&full) {
                            if full == VISIBLE_DEVICES {
                                secrets.clear();
                            }
                            from.insert(full, v.clone());
                        }
                    }
                }
                None if may_set_kept(prefix) => gap(
                    UnresolvedKind::EnvFrom,
                    format!(
                        "takes its environment from ConfigMap {namespace}/{name}{} (envFrom{}), which is not in the input",
                        if *optional { ", optional" } else { "" },
                        prefixed(prefix)
                    ),
                ),
                None => {}
            },
            Source::Secret(name) if may_set_kept(prefix) => {
                if VISIBLE_DEVICES.starts_with(prefix.as_str()) {
                    from.remove(VISIBLE_DEVICES);
                    secrets.push(format!("{namespace}/{name} (envFrom{})", prefixed(prefix)));
                }
                gap(
                    UnresolvedKind::SecretEnv,
                    format!(
                        "takes its environment from Secret {namespace}/{name} (envFrom{}), which gpu-trust does not read",
                        prefixed(prefix)
                    ),
                )
            }
            Source::Secret(_) => {}
        }
    }
    // `env` wins over every envFrom source.
    if container.env.contains_key(VISIBLE_DEVICES) {
        secrets.clear();
    }
    for (name, value) in from {
        container.env.entry(name).or_insert(value);
    }
    for (name, source, key) in &refs.keys {
        match source {
            Source::ConfigMap { name: cm, .. } => match lookup(cm).map(|c| c.data.get(key)) {
                Some(Some(v)) => {
                    container.env.insert(name.clone(), v.clone());
                }
                // An optional key that is absent leaves the variable unset; a required one keeps
                // the container from starting.
                Some(None) => {
                    container.env.remove(name);
                }
                None => gap(
                    UnresolvedKind::EnvFrom,
                    format!(
                        "sets {name} from ConfigMap {namespace}/{cm} (key {key}), which is not in the input"
                    ),
                ),
            },
            Source::Secret(secret) => {
                if name == VISIBLE_DEVICES {
                    container.env.remove(name);
                    secrets = vec![format!("{namespace}/{secret} (key {key})")];
                }
                gap(
                    UnresolvedKind::SecretEnv,
                    format!(
                        "sets {name} from Secret {namespace}/{secret} (key {key}), which gpu-trust does not read"
                    ),
                )
            }
        }
    }
    container.nvidia_visible_devices = container.env.get(VISIBLE_DEVICES).cloned();
    container.visible_devices_secrets = secrets;
    unresolved
}

fn prefixed(prefix: &str) -> String {
    if prefix.is_empty() {
        String::new()
    } else {
        format!(" with prefix {prefix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> ObjectRef {
        ObjectRef {
            kind: "Pod".into(),
            namespace: Some("ml".into()),
            name: "p".into(),
            location: gpu_trust_model::Location::new("t.yaml", 1, 1),
        }
    }

    fn spec(yaml: &str) -> core::Container {
        gpu_trust_source::parse_value(yaml, "t.yaml", &Default::default(), 0).unwrap()
    }

    fn maps(entries: &[(&str, &[(&str, &str)])]) -> BTreeMap<(String, String), ConfigMapDraft> {
        entries
            .iter()
            .map(|(name, data)| {
                (
                    ("ml".to_string(), name.to_string()),
                    ConfigMapDraft {
                        object: pod(),
                        data: data
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect(),
                        key_lines: BTreeMap::new(),
                    },
                )
            })
            .collect()
    }

    fn run(
        yaml: &str,
        config_maps: &BTreeMap<(String, String), ConfigMapDraft>,
    ) -> (ContainerInfo, Vec<Unresolved>) {
        let c = spec(yaml);
        let mut info = ContainerInfo {
            name: c.name.clone(),
            ..ContainerInfo::default()
        };
        for e in c.env.iter().flatten().filter(|e| kept(&e.name)) {
            let v = e
                .value
                .clone()
                .unwrap_or_else(|| FROM_ELSEWHERE.to_string());
            info.env.insert(e.name.clone(), v);
        }
        let r = refs(c.env.as_deref(), c.env_from.as_deref());
        let u = resolve(&mut info, &r, "ml", &pod(), config_maps);
        (info, u)
    }

    #[test]
    fn config_map_keys_with_prefix_set_variables_and_env_wins() {
        let cms = maps(&[
            ("gpu", &[("VISIBLE_DEVICES", "all"), ("OTHER", "x")]),
            ("late", &[("NVIDIA_DRIVER_CAPABILITIES", "all")]),
        ]);
        let (c, u) = run(
            "name: a\nenvFrom:\n- {configMapRef: {name: gpu}, prefix: NVIDIA_}\n- {configMapRef: {name: late}}\n",
            &cms,
        );
        assert!(u.is_empty(), "{u:?}");
        assert_eq!(c.nvidia_visible_devices.as_deref(), Some("all"));
        assert_eq!(c.env["NVIDIA_DRIVER_CAPABILITIES"], "all");
        assert_eq!(c.env["NVIDIA_OTHER"], "x");

        let (c, _) = run(
            "name: a\nenv: [{name: NVIDIA_VISIBLE_DEVICES, value: none}]\nenvFrom: [{configMapRef: {name: gpu}, prefix: NVIDIA_}]\n",
            &cms,
        );
        assert_eq!(c.nvidia_visible_devices.as_deref(), Some("none"));
    }

    #[test]
    fn key_references_resolve_from_config_maps() {
        let cms = maps(&[("gpu", &[("devices", "void")])]);
        let (c, u) = run(
            "name: a\nenv: [{name: NVIDIA_VISIBLE_DEVICES, valueFrom: {configMapKeyRef: {name: gpu, key: devices}}}]\n",
            &cms,
        );
        assert!(u.is_empty());
        assert_eq!(c.nvidia_visible_devices.as_deref(), Some("void"));
    }

    #[test]
    fn secrets_and_missing_config_maps_that_may_set_kept_names_are_gaps() {
        let none = maps(&[]);
        let (c, u) = run("name: a\nenvFrom: [{secretRef: {name: creds}}]\n", &none);
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].what, UnresolvedKind::SecretEnv);
        assert!(u[0].message.contains("Secret ml/creds"), "{}", u[0].message);
        assert_eq!(c.visible_devices_secrets, ["ml/creds (envFrom)"]);
        let (_, u) = run(
            "name: a\nenvFrom: [{configMapRef: {name: absent}, prefix: NV}]\n",
            &none,
        );
        assert_eq!(u.len(), 1);
        // A prefix that cannot make a name the audit reads leaves nothing unknown.
        let (_, u) = run(
            "name: a\nenvFrom: [{secretRef: {name: creds}, prefix: APP_}, {configMapRef: {name: absent}, prefix: DB_}]\n",
            &none,
        );
        assert!(u.is_empty(), "{u:?}");
        let (c, u) = run(
            "name: a\nenv: [{name: NVIDIA_VISIBLE_DEVICES, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n",
            &none,
        );
        assert_eq!(u.len(), 1);
        // The Secret's value is not known: no value is claimed, the Secret is named.
        assert_eq!(c.nvidia_visible_devices, None);
        assert_eq!(c.visible_devices_secrets, ["ml/s (key k)"]);
    }

    /// The kubelet's order decides whether a Secret may still set the variable: a later ConfigMap
    /// source or `env` sets it over the Secret; a Secret after a ConfigMap leaves it unknown.
    #[test]
    fn a_secret_may_set_the_variable_only_where_nothing_later_does() {
        let cms = maps(&[("gpu", &[("NVIDIA_VISIBLE_DEVICES", "void")])]);
        let (c, _) = run(
            "name: a\nenvFrom: [{secretRef: {name: creds}}, {configMapRef: {name: gpu}}]\n",
            &cms,
        );
        assert!(c.visible_devices_secrets.is_empty());
        assert_eq!(c.nvidia_visible_devices.as_deref(), Some("void"));
        let (c, _) = run(
            "name: a\nenvFrom: [{configMapRef: {name: gpu}}, {secretRef: {name: creds}}]\n",
            &cms,
        );
        assert_eq!(c.visible_devices_secrets, ["ml/creds (envFrom)"]);
        assert_eq!(c.nvidia_visible_devices, None);
        let (c, u) = run(
            "name: a\nenv: [{name: NVIDIA_VISIBLE_DEVICES, value: void}]\nenvFrom: [{secretRef: {name: creds}}]\n",
            &cms,
        );
        assert!(c.visible_devices_secrets.is_empty());
        assert_eq!(u.len(), 1, "the Secret may still set CUDA_ variables");
        // A prefix the variable does not start with sets other variables the audit reads.
        let (c, u) = run(
            "name: a\nenvFrom: [{secretRef: {name: creds}, prefix: CUDA_}]\n",
            &cms,
        );
        assert!(c.visible_devices_secrets.is_empty());
        assert_eq!(u.len(), 1);
    }
}
