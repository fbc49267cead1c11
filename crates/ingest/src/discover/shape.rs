//! Generic discovery: pod templates found by their shape anywhere in an object of a kind without a
//! reader, and the GPU resources named outside any template.

use super::{join, At, Found};
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_source::tree::Pos;
use k8s_openapi::api::core::v1 as core;

/// Bounds on what discovery may cost per object.
const MAX_DEPTH: usize = 24;
const MAX_NODES: usize = 200_000;
const MAX_FOUND: usize = 32;

/// A template found by its shape.
pub(crate) struct Shaped<'t, 'a> {
    pub path: String,
    pub at: At<'t, 'a>,
    /// `{metadata, spec: PodSpec}` rather than a bare pod spec.
    pub template: bool,
    /// An integer `replicas` beside the template.
    pub replicas: Option<At<'t, 'a>>,
}

/// Pod templates anywhere in an object but its `metadata` and `status`; `truncated` when a bound
/// stopped the search.
pub(crate) fn discover<'t, 'a>(root: At<'t, 'a>) -> (Vec<Shaped<'t, 'a>>, bool) {
    let mut w = Walk {
        found: Vec::new(),
        nodes: 0,
        truncated: false,
    };
    w.visit(root, String::new(), 0, None);
    (w.found, w.truncated)
}

struct Walk<'t, 'a> {
    found: Vec<Shaped<'t, 'a>>,
    nodes: usize,
    truncated: bool,
}

fn containers_shape(at: At<'_, '_>) -> bool {
    at.get("containers")
        .and_then(At::items)
        .is_some_and(|items| {
            !items.is_empty()
                && items
                    .iter()
                    .all(|c| c.get("image").is_some() || c.get("name").is_some())
        })
}

impl<'t, 'a> Walk<'t, 'a> {
    fn visit(&mut self, at: At<'t, 'a>, path: String, depth: usize, parent: Option<At<'t, 'a>>) {
        self.nodes += 1;
        if self.nodes > MAX_NODES || depth > MAX_DEPTH || self.found.len() >= MAX_FOUND {
            self.truncated = true;
            return;
        }
        let replicas = || {
            parent
                .and_then(|p| p.get("replicas"))
                .or_else(|| at.get("replicas"))
        };
        if let Some(spec) = at.get("spec") {
            if containers_shape(spec) {
                self.found.push(Shaped {
                    path,
                    at,
                    template: true,
                    replicas: replicas(),
                });
                return;
            }
        }
        if depth > 0 && containers_shape(at) {
            self.found.push(Shaped {
                path,
                at,
                template: false,
                replicas: replicas(),
            });
            return;
        }
        if let Some(entries) = at.entries() {
            for (k, v) in entries {
                if depth == 0 && matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                {
                    continue;
                }
                self.visit(v, join(&path, &k), depth + 1, Some(at));
            }
        } else if let Some(items) = at.items() {
            for (i, v) in items.into_iter().enumerate() {
                self.visit(v, format!("{path}[{i}]"), depth + 1, Some(at));
            }
        }
    }
}

/// Reads a template found by its shape.
pub(crate) fn read_shaped(s: &Shaped<'_, '_>, object: &Location) -> Result<Found, Diagnostic> {
    let template = if s.template {
        s.at.typed::<core::PodTemplateSpec>(object, &s.path)?
    } else {
        core::PodTemplateSpec {
            metadata: None,
            spec: Some(s.at.typed(object, &s.path)?),
        }
    };
    // A `replicas` beside the template that is not a number says nothing about this template.
    let replicas = s
        .replicas
        .and_then(|r| r.typed::<i64>(object, "replicas").ok())
        .unwrap_or(1)
        .max(0);
    Ok(Found {
        role: (!s.path.is_empty()).then(|| s.path.clone()),
        replicas,
        template,
        path: if s.path.is_empty() {
            "the object itself".to_string()
        } else {
            s.path.clone()
        },
        unknown_constraints: false,
    })
}

/// Resource names that request a GPU (the device plugin's, HAMi's) when written in an object
/// outside any pod template ingest can read: the first such mention and where it is.
pub(crate) fn gpu_mention(root: At<'_, '_>) -> Option<(String, Option<Pos>)> {
    fn is_gpu(s: &str) -> bool {
        use gpu_trust_model::resource;
        resource::is_gpu_resource(s) || resource::HAMI_RESOURCES.contains(&s)
    }
    fn walk(
        at: At<'_, '_>,
        path: &str,
        depth: usize,
        nodes: &mut usize,
    ) -> Option<(String, Option<Pos>)> {
        *nodes += 1;
        if depth > MAX_DEPTH || *nodes > MAX_NODES {
            return None;
        }
        if let Some(entries) = at.entries() {
            for (k, v) in entries {
                if depth == 0 && matches!(k.as_str(), "metadata" | "status") {
                    continue;
                }
                // Where a GPU resource name is a node label or a taint, not a request.
                if matches!(
                    k.as_str(),
                    "tolerations"
                        | "toleration"
                        | "nodeSelector"
                        | "affinity"
                        | "nodeSelectorTerms"
                ) {
                    continue;
                }
                let p = join(path, &k);
                if is_gpu(&k) {
                    return Some((p, v.pos()));
                }
                if let Some(found) = walk(v, &p, depth + 1, nodes) {
                    return Some(found);
                }
            }
        } else if let Some(items) = at.items() {
            for (i, v) in items.into_iter().enumerate() {
                if let Some(found) = walk(v, &format!("{path}[{i}]"), depth + 1, nodes) {
                    return Some(found);
                }
            }
        } else if at.text().is_some_and(|t| is_gpu(t.trim())) {
            return Some((path.to_string(), at.pos()));
        }
        None
    }
    walk(root, "", 0, &mut 0)
}
