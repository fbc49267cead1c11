//! The rows of the controllers table whose pods are in groups: each group's templates found at its
//! path, with the role, count and scheduler the row says.

use super::{argo, join, At, Found, Read};
use crate::controllers::{Controller, Count, Group, Reads, Role, Shape};
use gpu_trust_model::{Diagnostic, Location};
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Reads an object of a table row whose pods are in groups.
pub(crate) fn read_groups(
    c: &Controller,
    root: At<'_, '_>,
    object: &Location,
) -> Result<Read, Diagnostic> {
    let mut read = Read::default();
    let Reads::Groups(groups) = &c.reads else {
        return Ok(read);
    };
    for g in *groups {
        for item in select(root, g.at) {
            read_item(g, root, &item, object, &mut read)?;
        }
    }
    Ok(read)
}

/// One item selected by a group's `at`: the key or index the wildcard stepped into.
struct Item<'t, 'a> {
    at: At<'t, 'a>,
    path: String,
    key: Option<String>,
    index: Option<usize>,
}

/// The values at `path`, where one `*` steps into every item of a sequence or value of a mapping.
fn select<'t, 'a>(root: At<'t, 'a>, path: &str) -> Vec<Item<'t, 'a>> {
    let (before, after) = match path.split_once(".*") {
        Some((b, a)) => (b, Some(a.strip_prefix('.').unwrap_or(a))),
        None => (path, None),
    };
    let Some(base) = root.path(before) else {
        return Vec::new();
    };
    let Some(after) = after else {
        return vec![Item {
            at: base,
            path: before.to_string(),
            key: None,
            index: None,
        }];
    };
    let mut out = Vec::new();
    if let Some(items) = base.items() {
        for (i, it) in items.into_iter().enumerate() {
            if let Some(at) = it.path(after) {
                out.push(Item {
                    at,
                    path: join(&format!("{before}[{i}]"), after),
                    key: None,
                    index: Some(i),
                });
            }
        }
    } else if let Some(entries) = base.entries() {
        for (k, it) in entries {
            if let Some(at) = it.path(after) {
                out.push(Item {
                    at,
                    path: join(&format!("{before}.{k}"), after),
                    key: Some(k),
                    index: None,
                });
            }
        }
    }
    out
}

fn read_item(
    g: &Group,
    root: At<'_, '_>,
    item: &Item<'_, '_>,
    object: &Location,
    read: &mut Read,
) -> Result<(), Diagnostic> {
    let role = match g.role {
        Role::None => None,
        Role::Fixed(r) => Some(r.to_string()),
        Role::Key => item.key.clone(),
        Role::Field(f) => Some(match item.at.get(f).and_then(At::text) {
            Some(v) => v,
            None => {
                let last = g.at.trim_end_matches(".*");
                let last = last.rsplit('.').next().unwrap_or(last);
                format!("{last}[{}]", item.index.unwrap_or(0))
            }
        }),
    };
    let mut replicas: i64 = 1;
    for factor in g.count {
        replicas = replicas.saturating_mul(count(factor, root, item, object)?);
    }
    let template_at = match item.at.path(g.template) {
        Some(t) => t,
        // An optional template (LeaderWorkerSet's leaderTemplate, KubeRay's submitter).
        None => return Ok(()),
    };
    let path = join(&item.path, g.template);
    let mut templates: Vec<(core::PodTemplateSpec, i64)> = Vec::new();
    match g.shape {
        Shape::PodTemplate => {
            templates.push((template_at.typed(object, &path)?, 1));
        }
        Shape::JobTemplate => {
            let job: batch::JobTemplateSpec = template_at.typed(object, &path)?;
            if let Some(spec) = job.spec {
                templates.push((spec.template, i64::from(spec.parallelism.unwrap_or(1))));
            }
        }
        Shape::InlinePodSpec { containers } => {
            let mut spec: core::PodSpec = template_at.typed(object, &path)?;
            for field in containers {
                if let Some(at) = template_at.get(field) {
                    let mut container: core::Container = at.typed(object, &join(&path, field))?;
                    if container.name.is_empty() {
                        // KServe names the serving container it builds from these fields
                        // `kserve-container` (`constants.InferenceServiceContainerName`).
                        container.name = "kserve-container".to_string();
                    }
                    spec.containers.push(container);
                }
            }
            let meta = ObjectMeta {
                labels: opt_map(template_at.get("labels"), object, &join(&path, "labels"))?,
                annotations: opt_map(
                    template_at.get("annotations"),
                    object,
                    &join(&path, "annotations"),
                )?,
                ..ObjectMeta::default()
            };
            if !spec.containers.is_empty() {
                templates.push((
                    core::PodTemplateSpec {
                        metadata: Some(meta),
                        spec: Some(spec),
                    },
                    1,
                ));
            }
        }
        Shape::Argo { inherit } => {
            let workflow = root.path(inherit.trim_start_matches('/'));
            // An Argo template is one pod, named by the template.
            return argo::read(
                item.at,
                item.index,
                template_at,
                workflow,
                object,
                &path,
                read,
            );
        }
    }
    let scheduler = match g.scheduler {
        Some(p) => root
            .path(p.trim_start_matches('/'))
            .map(|s| s.typed::<String>(object, p))
            .transpose()?,
        None => None,
    };
    for (mut t, per) in templates {
        if let (Some(s), Some(spec)) = (&scheduler, t.spec.as_mut()) {
            if spec.scheduler_name.is_none() {
                spec.scheduler_name = Some(s.clone());
            }
        }
        read.found.push(Found {
            role: role.clone(),
            replicas: replicas.saturating_mul(per),
            template: t,
            path: path.clone(),
            unknown_constraints: false,
        });
    }
    Ok(())
}

fn opt_map(
    at: Option<At<'_, '_>>,
    object: &Location,
    path: &str,
) -> Result<Option<BTreeMap<String, String>>, Diagnostic> {
    at.map(|a| a.typed(object, path)).transpose()
}

fn count(
    factor: &Count,
    root: At<'_, '_>,
    item: &Item<'_, '_>,
    object: &Location,
) -> Result<i64, Diagnostic> {
    let field = |path: &str, default: i64| -> Result<i64, Diagnostic> {
        let at = match path.strip_prefix('/') {
            Some(p) => root.path(p),
            None => item.at.path(path),
        };
        match at {
            Some(a) => Ok(a.typed::<i64>(object, path)?.max(0)),
            None => Ok(default),
        }
    };
    Ok(match *factor {
        Count::Field(path, default) => field(path, default)?,
        Count::LessOne {
            field: f,
            default,
            when,
        } => {
            let v = field(f, default)?;
            if when.is_none_or(|w| item.at.path(w).is_some()) {
                (v - 1).max(0)
            } else {
                v
            }
        }
    })
}
