//! The input's documents with changes applied and written again: what a change makes of the objects,
//! audited again to prove what it closes, and `--emit-fixes`'s patched copies.
//!
//! A patch merges as a strategic merge patch does for the fields the actions write
//! (Kubernetes `staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`; the planner's
//! `patch` module says which field merges how): maps key by key, a key set to `null` removed, the
//! lists of containers, init containers and resource claims merged element by element by `name`
//! (`patchMergeKey:"name"` on `PodSpec`), any other list (tolerations) replaced. On maps alone this
//! is also a JSON merge patch (RFC 7386), which is how a ClusterPolicy is patched.
//!
//! A file that holds a changed object is written again whole, each document as JSON (which a YAML
//! reader reads as it is): a `.json` file of one document as that document, any other as a YAML
//! stream; a List keeps its other items.

use gpu_trust_source::{Entry, Format, Input, Limits, ReadOptions};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The lists a strategic merge patch merges by `name` in the pod spec (Kubernetes
/// `staging/src/k8s.io/api/core/v1/types.go`: `Containers`, `InitContainers` and `ResourceClaims`
/// carry `patchMergeKey:"name"`).
const MERGED_BY_NAME: [&str; 3] = ["containers", "initContainers", "resourceClaims"];

/// An object of the input, by kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl Target {
    fn of(v: &Value) -> Option<Target> {
        let meta = v.get("metadata")?;
        Some(Target {
            kind: v.get("kind")?.as_str()?.to_string(),
            namespace: meta
                .get("namespace")
                .and_then(Value::as_str)
                .map(str::to_string),
            name: meta.get("name")?.as_str()?.to_string(),
        })
    }
}

/// One change to one object.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// The patch merged into the object.
    Patch(Target, Value),
    /// The object is gone (the pods and ReplicaSet a rollout replaces).
    Remove(Target),
}

impl Edit {
    fn target(&self) -> &Target {
        match self {
            Edit::Patch(t, _) | Edit::Remove(t) => t,
        }
    }
}

/// The inputs with `edits` applied: the files that hold an edited object written again (after
/// `header`, a YAML comment, in a file that is not JSON), the others as they are. An error says why
/// the edits cannot be made: an object to patch that no input holds, a file with a document that
/// does not read.
pub fn apply(
    inputs: &[Input],
    edits: &[Edit],
    limits: &Limits,
    header: &str,
) -> Result<Vec<Input>, String> {
    let mut done = vec![false; edits.len()];
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        // Only a file that names an edited object is read again.
        if !edits.iter().any(|e| input.text.contains(&e.target().name)) {
            out.push(input.clone());
            continue;
        }
        match rewrite(input, edits, &mut done, limits, header)? {
            Some(text) => out.push(Input {
                name: input.name.clone(),
                text,
            }),
            None => out.push(input.clone()),
        }
    }
    // An object to remove may be absent (a dump without ReplicaSets); one to patch may not.
    let missing = edits
        .iter()
        .zip(&done)
        .position(|(e, d)| !d && matches!(e, Edit::Patch(..)));
    if let Some(i) = missing {
        let t = edits[i].target();
        return Err(format!(
            "{} {}{} is not in the input",
            t.kind,
            t.namespace
                .as_deref()
                .map(|n| format!("{n}/"))
                .unwrap_or_default(),
            t.name
        ));
    }
    Ok(out)
}

/// One file's text with the edits applied, `None` when none applies to it.
fn rewrite(
    input: &Input,
    edits: &[Edit],
    done: &mut [bool],
    limits: &Limits,
    header: &str,
) -> Result<Option<String>, String> {
    let options = ReadOptions {
        limits: *limits,
        split_key: Some("items".to_string()),
        format: Format::Auto,
    };
    // Per document: its root (a List's without its items), whether it is a List, and the List's
    // items by position.
    type Document = (Option<Value>, bool, BTreeMap<usize, Value>);
    let mut documents: BTreeMap<usize, Document> = BTreeMap::new();
    for entry in gpu_trust_source::read_all(&input.text, &input.name, &options) {
        let (object, root) = match entry {
            Entry::Object(o) => (o, false),
            Entry::Container { object, .. } => (object, true),
            Entry::Invalid { diagnostic, .. } => {
                return Err(format!(
                    "{} cannot be written again: {}",
                    input.name, diagnostic.message
                ))
            }
        };
        let value: Value = object.deserialize().map_err(|d| d.message)?;
        let document = documents.entry(object.document()).or_default();
        match (root, object.item()) {
            (false, Some(i)) => {
                document.2.insert(i, value);
            }
            _ => {
                document.0 = Some(value);
                document.1 |= root;
            }
        }
    }
    let mut changed = false;
    let mut edit = |v: Value| -> Option<Value> {
        let Some(target) = Target::of(&v) else {
            return Some(v);
        };
        let mut v = Some(v);
        for (i, e) in edits.iter().enumerate() {
            if *e.target() != target {
                continue;
            }
            done[i] = true;
            changed = true;
            match e {
                Edit::Remove(_) => v = None,
                Edit::Patch(_, patch) => {
                    if let Some(v) = v.as_mut() {
                        merge(v, patch, "");
                    }
                }
            }
        }
        v
    };
    let mut written: Vec<Value> = Vec::new();
    for (_, (root, list, items)) in documents {
        let mut root =
            root.ok_or_else(|| format!("{}: a list without its document", input.name))?;
        // A List's items, handed on one by one or read with it.
        let listed = match (&mut root, list) {
            (Value::Object(m), true) => Some(
                m.entry("items")
                    .or_insert(Value::Array(items.into_values().collect())),
            ),
            (Value::Object(m), false) => m.get_mut("items").filter(|i| i.is_array()),
            _ => None,
        };
        match listed {
            Some(Value::Array(items)) => {
                *items = std::mem::take(items)
                    .into_iter()
                    .filter_map(&mut edit)
                    .collect();
                written.push(root);
            }
            _ => written.extend(edit(root)),
        }
    }
    if !changed {
        return Ok(None);
    }
    let json = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    if Format::for_name(&input.name) == Format::Json {
        return match written.as_slice() {
            [one] => Ok(Some(format!("{}\n", json(one)))),
            _ => Err(format!(
                "{} would hold {} JSON documents",
                input.name,
                written.len()
            )),
        };
    }
    let mut text = String::new();
    for line in header.lines() {
        text.push_str(&format!("# {line}\n"));
    }
    for v in &written {
        text.push_str(&format!("---\n{}\n", json(v)));
    }
    Ok(Some(text))
}

/// Merges `patch` into `target`, which is the value of `key` in its parent.
pub fn merge(target: &mut Value, patch: &Value, key: &str) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else if let Some(existing) = t.get_mut(k) {
                    merge(existing, v, k);
                } else {
                    t.insert(k.clone(), fresh(v, k));
                }
            }
        }
        (Value::Array(t), Value::Array(p)) if MERGED_BY_NAME.contains(&key) => {
            for element in p {
                let name = element.get("name").filter(|n| n.is_string());
                match t
                    .iter_mut()
                    .find(|e| name.is_some() && e.get("name") == name)
                {
                    Some(existing) => merge(existing, element, ""),
                    None => t.push(fresh(element, "")),
                }
            }
        }
        (t, p) => *t = fresh(p, key),
    }
}

/// A patch's value where the target has none: its `null`s mean nothing and are left out.
fn fresh(patch: &Value, key: &str) -> Value {
    match patch {
        Value::Object(_) => {
            let mut v = Value::Object(Map::new());
            merge(&mut v, patch, key);
            v
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_patch_merges_maps_removes_nulls_replaces_tolerations_and_merges_containers_by_name() {
        let mut pod = json!({"spec": {"template": {"spec": {
            "nodeSelector": {"pool": "eval", "zone": "a"},
            "tolerations": [{"key": "a", "operator": "Exists"}],
            "containers": [
                {"name": "proxy", "image": "p"},
                {"name": "server", "image": "s", "resources": {"limits": {"cpu": "1", "nvidia.com/mig-1g.10gb": 1}}}
            ]
        }}}});
        let patch = json!({"spec": {"template": {"spec": {
            "nodeSelector": {"pool": null, "dedicated": "initech", "gone": null},
            "tolerations": [{"key": "b", "operator": "Exists"}],
            "containers": [{"name": "server", "resources": {"limits": {"nvidia.com/mig-1g.10gb": null, "nvidia.com/gpu": 1}}}]
        }}}});
        merge(&mut pod, &patch, "");
        assert_eq!(
            pod,
            json!({"spec": {"template": {"spec": {
                "nodeSelector": {"zone": "a", "dedicated": "initech"},
                "tolerations": [{"key": "b", "operator": "Exists"}],
                "containers": [
                    {"name": "proxy", "image": "p"},
                    {"name": "server", "image": "s", "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": 1}}}
                ]
            }}}})
        );
    }

    #[test]
    fn a_list_keeps_its_other_items_and_an_object_not_in_the_input_is_an_error() {
        let input = Input {
            name: "c.yaml".into(),
            text: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: ns}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: ns}}\n".into(),
        };
        let pod = |name: &str| Target {
            kind: "Pod".into(),
            namespace: Some("ns".into()),
            name: name.into(),
        };
        let out = apply(
            std::slice::from_ref(&input),
            &[Edit::Remove(pod("a"))],
            &Limits::default(),
            "patched",
        )
        .unwrap();
        let text = &out[0].text;
        assert!(text.starts_with("# patched\n---\n"), "{text}");
        let entries = gpu_trust_ingest::ingest_text(text, "c.yaml");
        assert!(entries.diagnostics.is_empty(), "{:?}", entries.diagnostics);
        assert!(text.contains("\"b\"") && !text.contains("\"a\""), "{text}");
        let patch = Edit::Patch(pod("c"), serde_json::json!({}));
        let err = apply(&[input], &[patch], &Limits::default(), "").unwrap_err();
        assert_eq!(err, "Pod ns/c is not in the input");
    }
}
