//! The same object read twice: two files, a kustomize base and its patch, a dump and the manifests it
//! came from, an item repeated in a list. Two readings that say the same to the audit are one object;
//! two that differ are an error at the later reading, naming the first and what differs, because the
//! audit cannot know which one the cluster runs (it never takes the first as the truth).

use crate::nodes::ConfigMapDraft;
use crate::nodes::NodeDraft;
use crate::workload_placement::WorkloadDraft;
use gpu_trust_model::fleet::{AnnotatedAcceptance, RuntimeClassInfo, WorkloadKind};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use std::collections::BTreeMap;

/// The error for a second reading of `what` (`Deployment ml/trainer`) at `here` that differs from the
/// first, at `first`, in `differences` (field names, as the audit reads them).
pub(crate) fn conflict(
    what: &str,
    here: &Location,
    first: &Location,
    differences: &[String],
) -> Diagnostic {
    Diagnostic::error(Code::ConflictingDuplicate,
        here.clone(),
        format!(
            "{what} is also at {first} with different contents ({}): which one the cluster runs cannot be judged; give it once (a kustomize base and its patches: audit what `kubectl kustomize` renders)",
            if differences.is_empty() {
                "its contents".to_string()
            } else {
                differences.join(", ")
            }
        ),
    )
}

/// The top-level fields in which two serialisable readings differ, `object` (where it was read) left
/// out; a reading that does not serialise differs as a whole.
pub(crate) fn differing_fields<T: serde::Serialize>(a: &T, b: &T) -> Vec<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return vec!["its contents".to_string()];
    };
    let mut keys: Vec<&String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| *k != "object")
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// Nodes by name. A node read twice with the same labels, taints and status counts once; two readings
/// that differ are an error at the later one (see [`conflict`]), which is left out.
pub(crate) fn unique_nodes(
    mut drafts: Vec<NodeDraft>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<NodeDraft> {
    drafts.sort_by(|a, b| {
        a.name
            .cmp(&b.name)
            .then(a.object.location.cmp(&b.object.location))
    });
    let mut kept: Vec<NodeDraft> = Vec::with_capacity(drafts.len());
    for d in drafts {
        match kept.last() {
            Some(prev) if prev.name == d.name => {
                let mut differ = Vec::new();
                for (what, same) in [
                    ("labels", prev.labels == d.labels),
                    ("taints", prev.taints == d.taints),
                    ("annotations", prev.hami_register == d.hami_register),
                    ("status", prev.extended == d.extended),
                ] {
                    if !same {
                        differ.push(what.to_string());
                    }
                }
                if !differ.is_empty() {
                    diagnostics.push(conflict(
                        &format!("Node {}", d.name),
                        &d.object.location,
                        &prev.object.location,
                        &differ,
                    ));
                }
            }
            _ => kept.push(d),
        }
    }
    kept
}

/// Workloads sorted by namespace, kind and name. The same object read twice (a dump and the manifests
/// it came from, an item repeated in a list) counts once when both readings say the same to the
/// audit; two that differ are an error at the later one (see [`conflict`]), which is left out.
#[allow(clippy::vec_box)] // See `Collector::workloads`.
pub(crate) fn unique_workloads(
    mut wdrafts: Vec<Box<WorkloadDraft>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Box<WorkloadDraft>> {
    fn key(w: &WorkloadDraft) -> (&str, WorkloadKind, &str, &str, Option<&str>) {
        let w = &w.workload;
        (
            w.namespace.as_str(),
            w.kind,
            w.object.kind.as_str(),
            w.object.name.as_str(),
            w.role.as_deref(),
        )
    }
    wdrafts.sort_by(|a, b| {
        key(a)
            .cmp(&key(b))
            .then_with(|| a.workload.object.location.cmp(&b.workload.object.location))
    });
    let mut unique: Vec<Box<WorkloadDraft>> = Vec::with_capacity(wdrafts.len());
    for d in wdrafts {
        match unique.last() {
            Some(prev) if key(prev) == key(&d) => {
                let differ = workload_differences(prev, &d);
                if !differ.is_empty() {
                    diagnostics.push(conflict(
                        &format!(
                            "{} {}/{}",
                            d.workload.object.kind, d.workload.namespace, d.workload.object.name
                        ),
                        &d.workload.object.location,
                        &prev.workload.object.location,
                        &differ,
                    ));
                }
            }
            _ => unique.push(d),
        }
    }
    unique
}

/// What two readings of one workload differ in, as the audit reads them.
fn workload_differences(a: &WorkloadDraft, b: &WorkloadDraft) -> Vec<String> {
    let mut out = differing_fields(&a.workload, &b.workload);
    for (what, same) in [
        ("nodeName", a.node_name == b.node_name),
        ("scheduling constraints", a.constraints == b.constraints),
        ("resourceClaims", a.claims == b.claims),
        ("recorded devices", a.records == b.records),
        ("environment sources", a.env_refs == b.env_refs),
        (
            "extended resource claims",
            format!("{:?}", a.extended) == format!("{:?}", b.extended),
        ),
    ] {
        if !same {
            out.push(what.to_string());
        }
    }
    out
}

/// ConfigMaps by namespace and name. One read twice with the same data counts once; two readings
/// whose data differ are an error at the later one, which is left out.
pub(crate) fn unique_config_maps(
    read: Vec<(String, String, ConfigMapDraft)>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<(String, String), ConfigMapDraft> {
    let mut config_maps: BTreeMap<(String, String), ConfigMapDraft> = BTreeMap::new();
    for (ns, name, cm) in read {
        match config_maps.entry((ns, name)) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(cm);
            }
            std::collections::btree_map::Entry::Occupied(o) if o.get().data != cm.data => {
                diagnostics.push(conflict(
                    &format!("ConfigMap {}/{}", o.key().0, o.key().1),
                    &cm.object.location,
                    &o.get().object.location,
                    &["data".to_string()],
                ))
            }
            std::collections::btree_map::Entry::Occupied(_) => {}
        }
    }
    config_maps
}

/// RuntimeClasses by name. One read twice with the same handler counts once; two readings whose
/// handlers differ are an error at the later one, which is left out.
pub(crate) fn unique_runtime_classes(
    read: Vec<RuntimeClassInfo>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<RuntimeClassInfo> {
    let mut runtime_classes = read;
    runtime_classes.sort_by(|a, b| a.name.cmp(&b.name).then(a.object.cmp(&b.object)));
    runtime_classes.dedup_by(|later, first| {
        if later.name != first.name {
            return false;
        }
        if later.handler != first.handler {
            diagnostics.push(conflict(
                &format!("RuntimeClass {}", later.name),
                &later.object.location,
                &first.object.location,
                &["handler".to_string()],
            ));
        }
        true
    });
    runtime_classes
}

/// Acceptances annotated on objects, by subject, object and rule. The same annotation read twice
/// counts once; two readings whose reason or end date differ are an error at the later one.
pub(crate) fn unique_acceptances(
    read: Vec<AnnotatedAcceptance>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<AnnotatedAcceptance> {
    let mut acceptances = read;
    acceptances.sort_by(|a, b| {
        (
            &a.subject,
            &a.object.kind,
            &a.object.namespace,
            &a.object.name,
            &a.rule,
        )
            .cmp(&(
                &b.subject,
                &b.object.kind,
                &b.object.namespace,
                &b.object.name,
                &b.rule,
            ))
            .then_with(|| a.cmp(b))
    });
    acceptances.dedup_by(|a, b| {
        let same = (
            &a.subject,
            &a.object.kind,
            &a.object.namespace,
            &a.object.name,
            &a.rule,
        ) == (
            &b.subject,
            &b.object.kind,
            &b.object.namespace,
            &b.object.name,
            &b.rule,
        );
        if same && (&a.reason, a.until) != (&b.reason, b.until) {
            diagnostics.push(conflict(
                &format!("{} (annotation {})", a.object, a.annotation),
                &a.location,
                &b.location,
                &["its reason or end date".to_string()],
            ));
        }
        same
    });
    acceptances
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Thing {
        object: u32,
        labels: Vec<&'static str>,
        replicas: u32,
    }

    #[test]
    fn differences_leave_out_where_it_was_read() {
        let a = Thing {
            object: 1,
            labels: vec!["a"],
            replicas: 1,
        };
        let b = Thing {
            object: 2,
            labels: vec!["a"],
            replicas: 2,
        };
        assert_eq!(differing_fields(&a, &b), ["replicas"]);
        assert!(differing_fields(&a, &a).is_empty());
        let d = conflict(
            "Deployment ml/x",
            &Location::new("b.yaml", 1, 1),
            &Location::new("a.yaml", 3, 1),
            &["replicas".to_string()],
        );
        assert!(d.is_error());
        assert!(d
            .message
            .contains("a.yaml:3:1 with different contents (replicas)"));
    }
}
