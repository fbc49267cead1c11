//! Argo Workflows: one template of a Workflow (or WorkflowTemplate, CronWorkflow) is one pod when it
//! runs containers, with the workflow's pod-level fields, and objects when it creates them.

use super::{At, Embedded, Found, PodMetadata, Read};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_source::tree::{ScalarStyle, Value};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The pod-level fields of an Argo template and of its workflow.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArgoPod {
    node_selector: Option<BTreeMap<String, String>>,
    affinity: Option<core::Affinity>,
    tolerations: Option<Vec<core::Toleration>>,
    scheduler_name: Option<String>,
    service_account_name: Option<String>,
    security_context: Option<core::PodSecurityContext>,
    host_network: Option<bool>,
    volumes: Option<Vec<core::Volume>>,
    /// A template's pod metadata.
    metadata: Option<PodMetadata>,
    /// The workflow's pod metadata.
    pod_metadata: Option<PodMetadata>,
    init_containers: Option<Vec<core::Container>>,
    sidecars: Option<Vec<core::Container>>,
    container: Option<core::Container>,
    script: Option<core::Container>,
    container_set: Option<ArgoContainerSet>,
    pod_spec_patch: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ArgoContainerSet {
    #[serde(default)]
    containers: Vec<core::Container>,
}

/// One Argo template: a pod when it runs containers, objects when it creates them.
pub(super) fn read(
    item: At<'_, '_>,
    index: Option<usize>,
    template: At<'_, '_>,
    workflow: Option<At<'_, '_>>,
    object: &Location,
    path: &str,
    read: &mut Read,
) -> Result<(), Diagnostic> {
    if let Some(m) = template.path("resource.manifest") {
        if let At::Yaml(n) = m {
            if let Value::Scalar(s) = &n.value {
                let leading =
                    u32::try_from(s.text.chars().take_while(|c| *c == '\n').count()).unwrap_or(0);
                // A literal or plain block keeps the file's lines; other styles start at the key.
                let first_line = match s.style {
                    ScalarStyle::Literal | ScalarStyle::Plain => {
                        n.pos.line.saturating_sub(leading).max(1)
                    }
                    _ => n.pos.line.max(1),
                };
                read.embedded.push(Embedded {
                    text: s.text.to_string(),
                    first_line,
                });
            }
        } else if let Some(text) = m.text() {
            read.embedded.push(Embedded {
                text,
                first_line: object.line.max(1),
            });
        }
    }
    let t: ArgoPod = template.typed(object, path)?;
    let w: ArgoPod = match workflow {
        Some(w) => w.typed(object, "spec")?,
        None => ArgoPod::default(),
    };
    let mut containers: Vec<core::Container> = Vec::new();
    let mut main = |c: Option<core::Container>, name: &str| {
        if let Some(mut c) = c {
            if c.name.is_empty() {
                // Argo names the container of a container or script template `main`.
                c.name = name.to_string();
            }
            containers.push(c);
        }
    };
    main(t.container, "main");
    main(t.script, "main");
    for c in t.container_set.map(|s| s.containers).unwrap_or_default() {
        main(Some(c), "main");
    }
    if containers.is_empty() {
        return Ok(());
    }
    containers.extend(t.sidecars.unwrap_or_default());
    if let Some(patch) = t.pod_spec_patch.or(w.pod_spec_patch) {
        if !patch.trim().is_empty() {
            read.warnings.push(Diagnostic::warning(Code::PatchNotApplied,
                item.location(object),
                format!(
                    "{path}: podSpecPatch is not applied; what it changes (resources, security context) is not audited"
                ),
            ));
        }
    }
    let mut tolerations = t.tolerations.unwrap_or_default();
    tolerations.extend(w.tolerations.unwrap_or_default());
    let mut volumes = t.volumes.unwrap_or_default();
    volumes.extend(w.volumes.unwrap_or_default());
    let spec = core::PodSpec {
        containers,
        init_containers: t.init_containers,
        node_selector: t.node_selector.or(w.node_selector),
        affinity: t.affinity.or(w.affinity),
        tolerations: (!tolerations.is_empty()).then_some(tolerations),
        scheduler_name: t.scheduler_name.or(w.scheduler_name),
        service_account_name: t.service_account_name.or(w.service_account_name),
        security_context: t.security_context.or(w.security_context),
        host_network: w.host_network,
        volumes: (!volumes.is_empty()).then_some(volumes),
        ..core::PodSpec::default()
    };
    let mut labels = w
        .pod_metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let mut annotations = w
        .pod_metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    if let Some(m) = t.metadata {
        labels.extend(m.labels.unwrap_or_default());
        annotations.extend(m.annotations.unwrap_or_default());
    }
    let role = template
        .get("name")
        .and_then(At::text)
        .unwrap_or_else(|| format!("templates[{}]", index.unwrap_or(0)));
    read.found.push(Found {
        role: Some(role),
        replicas: 1,
        template: core::PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: (!labels.is_empty()).then_some(labels),
                annotations: (!annotations.is_empty()).then_some(annotations),
                ..ObjectMeta::default()
            }),
            spec: Some(spec),
        },
        path: path.to_string(),
        unknown_constraints: false,
    });
    Ok(())
}
