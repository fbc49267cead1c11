//! A pod spec or pod template into a workload draft: what every reader of a workload ends in.

use super::Collector;
use crate::workload_placement::WorkloadDraft;
use crate::{cluster, workloads};
use gpu_trust_model::fleet::{Workload, WorkloadClass, WorkloadKind};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, ObjectRef};
use k8s_openapi::api::core::v1 as core;
use std::collections::BTreeMap;

impl Collector {
    /// A pod template of a workload: `replicas` pods of `kind`; `class` when the controller says
    /// what its pods do; `unknown_constraints` when where it may run is not known (every taint is
    /// then taken as tolerated).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn template(
        &mut self,
        r: ObjectRef,
        kind: WorkloadKind,
        role: Option<String>,
        replicas: i64,
        t: &core::PodTemplateSpec,
        class: Option<WorkloadClass>,
        unknown_constraints: bool,
    ) {
        let Some(spec) = &t.spec else { return };
        let meta = t.metadata.as_ref();
        let labels = meta.and_then(|m| m.labels.clone()).unwrap_or_default();
        let annotations = meta.and_then(|m| m.annotations.clone()).unwrap_or_default();
        if spec.containers.iter().any(|c| {
            c.image
                .as_deref()
                .is_some_and(|i| matches!(cluster::operand(i), Some(cluster::Operand::Operator(_))))
        }) {
            self.operator_pods
                .push(r.namespace.clone().unwrap_or_default());
        }
        let replicas = u32::try_from(replicas.max(0)).unwrap_or(u32::MAX);
        let mut draft = match self.draft(r, kind, role, replicas, spec, labels, annotations) {
            Ok(d) => d,
            Err(e) => {
                self.report(e);
                return;
            }
        };
        if let Some(c) = class {
            draft.workload.class = c;
        }
        if kind == WorkloadKind::DaemonSet {
            draft
                .constraints
                .add_daemonset_tolerations(spec.host_network.unwrap_or(false));
        }
        if unknown_constraints {
            draft.constraints.tolerate_everything();
        }
        // `nodeName` binds every pod of the template to that node without the scheduler: they
        // are on it as soon as they exist.
        if replicas > 0 || kind == WorkloadKind::DaemonSet {
            draft.node_name = spec.node_name.clone().filter(|n| !n.is_empty());
        }
        self.workloads.push(Box::new(draft));
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn draft(
        &self,
        object: ObjectRef,
        kind: WorkloadKind,
        role: Option<String>,
        replicas: u32,
        spec: &core::PodSpec,
        labels: BTreeMap<String, String>,
        annotations: BTreeMap<String, String>,
    ) -> Result<WorkloadDraft, Diagnostic> {
        let parts = workloads::pod_parts(spec, &labels, &annotations);
        if !parts.invalid.is_empty() {
            return Err(Diagnostic::error(Code::InvalidQuantity,
                object.location.clone(),
                format!(
                    "{} {}: resource quantities that are not quantities ({}); the API server would reject it",
                    object.kind,
                    object.name,
                    parts.invalid.join(", ")
                ),
            ));
        }
        if !parts.refused_paths.is_empty() {
            return Err(Diagnostic::error(
                Code::UnjudgedHostPath,
                object.location.clone(),
                format!(
                    "{} {}: {}; what it mounts from the host cannot be judged",
                    object.kind,
                    object.name,
                    parts.refused_paths.join("; ")
                ),
            ));
        }
        let class = workloads::classify(kind, &parts);
        let namespace = object
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        Ok(WorkloadDraft {
            workload: Workload {
                object,
                namespace,
                kind,
                role,
                replicas,
                class,
                labels,
                annotations,
                scheduler_name: parts.scheduler_name,
                service_account: parts.service_account,
                gpu: parts.gpu,
                containers: parts.containers,
                pod_security: parts.pod_security,
                inference: parts.inference,
                peak_memory_mib: parts.peak_memory_mib,
                placement: Default::default(),
                owner: None,
            },
            node_name: None,
            constraints: parts.constraints,
            claims: parts.claims,
            records: parts.records,
            extended: None,
            run_by: None,
            env_refs: parts.env_refs,
        })
    }
}
