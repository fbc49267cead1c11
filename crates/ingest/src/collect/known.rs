//! The built-in kinds: each typed object into what the fleet is built from.

use super::{Collector, Doc};
use crate::kinds::{self, Typed};
use crate::nodes::{self, ConfigMapDraft};
use crate::{cluster, dra, platforms, rbac};
use gpu_trust_model::fleet::{RuntimeClassInfo, WorkloadKind};
use gpu_trust_model::{Diagnostic, ObjectRef};
use gpu_trust_source::tree::{ScalarStyle, Value};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

impl Collector {
    pub(super) fn known(
        &mut self,
        doc: &Doc<'_, '_>,
        typed: Typed,
        kind: &str,
    ) -> Result<(), Diagnostic> {
        let default_namespace = self.default_namespace();
        let reference = |meta: &ObjectMeta, default_ns: bool| ObjectRef {
            kind: kind.to_string(),
            namespace: if default_ns {
                Some(
                    meta.namespace
                        .clone()
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| default_namespace.clone()),
                )
            } else {
                None
            },
            // Objects created by a controller may have only a name prefix.
            name: meta
                .name
                .clone()
                .or_else(|| meta.generate_name.clone())
                .unwrap_or_default(),
            location: doc.location.clone(),
        };
        match typed {
            Typed::Node(n) => {
                let r = reference(&n.metadata, false);
                self.nodes.push(nodes::draft(&n, r));
            }
            Typed::Pod(p) => {
                self.pod(*p, reference)?;
            }
            Typed::Namespace(n) => {
                let r = reference(&n.metadata, false);
                let labels = n.metadata.labels.clone().unwrap_or_default();
                self.namespaces.push((r.name.clone(), Some((labels, r))));
            }
            Typed::ConfigMap(cm) => {
                let r = reference(&cm.metadata, true);
                self.config_map(doc, *cm, r);
            }
            Typed::Deployment(d) => {
                let r = reference(&d.metadata, true);
                if let Some(spec) = d.spec {
                    self.controller_template(
                        r,
                        WorkloadKind::Deployment,
                        i64::from(spec.replicas.unwrap_or(1)),
                        &spec.template,
                    );
                }
            }
            Typed::StatefulSet(d) => {
                let r = reference(&d.metadata, true);
                if let Some(spec) = d.spec {
                    self.controller_template(
                        r,
                        WorkloadKind::StatefulSet,
                        i64::from(spec.replicas.unwrap_or(1)),
                        &spec.template,
                    );
                }
            }
            Typed::DaemonSet(d) => {
                let r = reference(&d.metadata, true);
                self.plugin_daemonsets
                    .extend(platforms::plugin_daemonset::read(&d, r.clone()));
                if let Some(spec) = d.spec {
                    self.controller_template(r, WorkloadKind::DaemonSet, 0, &spec.template);
                }
            }
            Typed::ReplicaSet(d) => {
                let r = reference(&d.metadata, true);
                if let Some(spec) = d.spec {
                    if let Some(t) = &spec.template {
                        self.controller_template(
                            r,
                            WorkloadKind::ReplicaSet,
                            i64::from(spec.replicas.unwrap_or(1)),
                            t,
                        );
                    }
                }
            }
            Typed::Job(j) => {
                let r = reference(&j.metadata, true);
                // A Job in a terminal state (its `Complete` or `Failed` condition true: its pods
                // succeeded, or its backoff limit or deadline was reached) creates no pod again
                // (Kubernetes documentation, "Jobs": "Terminal Job conditions").
                let finished = j
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| {
                        c.iter().any(|c| {
                            matches!(c.type_.as_str(), "Complete" | "Failed") && c.status == "True"
                        })
                    });
                if let Some(spec) = j.spec.filter(|_| !finished) {
                    self.controller_template(
                        r,
                        WorkloadKind::Job,
                        i64::from(spec.parallelism.unwrap_or(1)),
                        &spec.template,
                    );
                }
            }
            Typed::CronJob(j) => {
                let r = reference(&j.metadata, true);
                if let Some(job) = j.spec.and_then(|s| s.job_template.spec) {
                    self.controller_template(
                        r,
                        WorkloadKind::CronJob,
                        i64::from(job.parallelism.unwrap_or(1)),
                        &job.template,
                    );
                }
            }
            Typed::RuntimeClass(rc) => {
                let r = reference(&rc.metadata, false);
                self.runtime_classes.push(RuntimeClassInfo {
                    name: r.name.clone(),
                    object: r,
                    handler: rc.handler,
                });
            }
            Typed::Role(_) | Typed::ClusterRole(_) => {
                self.role(typed);
            }
            Typed::RoleBinding(b) => {
                let r = reference(&b.metadata, true);
                let ns = r.namespace.clone();
                self.bindings.push(rbac::BindingDraft {
                    subjects: rbac::subjects(b.subjects.as_ref(), ns.as_deref()),
                    object: r,
                    namespace: ns,
                    role_kind: b.role_ref.kind,
                    role: b.role_ref.name,
                });
            }
            Typed::ClusterRoleBinding(b) => {
                let r = reference(&b.metadata, false);
                self.bindings.push(rbac::BindingDraft {
                    subjects: rbac::subjects(b.subjects.as_ref(), None),
                    object: r,
                    namespace: None,
                    role_kind: b.role_ref.kind,
                    role: b.role_ref.name,
                });
            }
            Typed::ClusterPolicy(cp) => {
                let r = reference(&cp.metadata, false);
                self.policies.push((r, *cp));
            }
            Typed::GpuCluster(g) => {
                let r = reference(&g.metadata, false);
                self.gpu_clusters.push((r, *g));
            }
            Typed::ResourceClaim(c) => {
                let r = reference(&c.metadata, true);
                self.claims.push(dra::claim_draft(
                    r.clone(),
                    r.namespace.clone().unwrap_or_default(),
                    r.name.clone(),
                    false,
                    &c.spec,
                    c.status.as_ref(),
                ));
                if let Some(d) = self.claims.last_mut() {
                    d.extended = dra::is_extended_claim(&c.metadata);
                }
            }
            Typed::ResourceClaimTemplate(c) => {
                let r = reference(&c.metadata, true);
                self.claims.push(dra::claim_draft(
                    r.clone(),
                    r.namespace.clone().unwrap_or_default(),
                    r.name.clone(),
                    true,
                    &c.spec.spec,
                    None,
                ));
            }
            Typed::DeviceClass(c) => {
                self.classes.push(dra::class_draft(&c));
            }
        }
        Ok(())
    }

    /// A ConfigMap, with the file line of each data key's text (configurations embedded in it are
    /// read later, and their errors point into the file).
    fn config_map(&mut self, doc: &Doc<'_, '_>, cm: core::ConfigMap, r: ObjectRef) {
        let mut key_lines = BTreeMap::new();
        if let Some(data) = doc
            .node
            .and_then(|n| n.get("data"))
            .and_then(|d| d.as_map())
        {
            for (k, v) in data {
                let (Some(key), Value::Scalar(s)) = (k.as_scalar_text(), &v.value) else {
                    continue;
                };
                // The node's position is its first non-empty line; a literal block keeps
                // the lines of the file, so text line n is file line offset + n.
                let leading =
                    u32::try_from(s.text.chars().take_while(|c| *c == '\n').count()).unwrap_or(0);
                let offset = match s.style {
                    ScalarStyle::Literal | ScalarStyle::Plain => {
                        v.pos.line.saturating_sub(1).saturating_sub(leading)
                    }
                    // Folded and quoted text does not keep the file's lines: point at the key.
                    _ => 0,
                };
                key_lines.insert(key.to_string(), offset);
            }
        }
        let ns = r.namespace.clone().unwrap_or_default();
        let name = r.name.clone();
        self.config_maps.push((
            ns,
            name,
            ConfigMapDraft {
                object: r,
                data: cm.data.unwrap_or_default(),
                key_lines,
            },
        ));
    }

    /// The pod template of a built-in controller, with the replicas it asks for.
    fn controller_template(
        &mut self,
        r: ObjectRef,
        kind: WorkloadKind,
        replicas: i64,
        t: &core::PodTemplateSpec,
    ) {
        self.template(r, kind, None, replicas, t, None, false);
    }

    /// A Role or ClusterRole: its rules, and a ClusterRole's aggregation selectors.
    fn role(&mut self, typed: Typed) {
        let cluster = matches!(typed, Typed::ClusterRole(_));
        let (metadata, rules, aggregation) = match typed {
            Typed::Role(role) => (role.metadata, rbac::rules(role.rules.as_ref()), Vec::new()),
            Typed::ClusterRole(role) => {
                let agg = role
                    .aggregation_rule
                    .and_then(|a| a.cluster_role_selectors)
                    .unwrap_or_default();
                (role.metadata, rbac::rules(role.rules.as_ref()), agg)
            }
            _ => return,
        };
        self.roles.push(rbac::RoleDraft {
            namespace: (!cluster).then(|| {
                metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into())
            }),
            name: metadata.name.clone().unwrap_or_default(),
            labels: metadata.labels.clone().unwrap_or_default(),
            rules,
            aggregation,
        });
    }

    fn pod(
        &mut self,
        mut p: kinds::PodObject,
        reference: impl Fn(&ObjectMeta, bool) -> ObjectRef,
    ) -> Result<(), Diagnostic> {
        let r = reference(&p.metadata, true);
        let Some(spec) = p.spec else {
            return Ok(());
        };
        let labels = p.metadata.labels.take().unwrap_or_default();
        let annotations = p.metadata.annotations.take().unwrap_or_default();
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        let extended = p
            .status
            .as_ref()
            .and_then(|s| s.extended_resource_claim_status.as_ref())
            .map(dra::ExtendedStatus::of);
        // A pod that has finished holds no device and will not run again; its owner (a Job, a
        // CronJob) is what may run next.
        if matches!(phase, Some("Succeeded" | "Failed")) {
            return Ok(());
        }
        let node_name = spec.node_name.clone().filter(|n| !n.is_empty());
        for c in spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
        {
            if let Some(image) = &c.image {
                match cluster::operand(image) {
                    Some(cluster::Operand::Operator(v)) => {
                        self.operator_pods
                            .push(r.namespace.clone().unwrap_or_default());
                        self.operands.push((None, cluster::Operand::Operator(v)));
                    }
                    Some(op) => self.operands.push((node_name.clone(), op)),
                    None => {}
                }
            }
        }
        let owner = p
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true))
            .map(|o| format!("{}/{}", o.kind, o.name));
        let mut draft = self.draft(r, WorkloadKind::Pod, None, 1, &spec, labels, annotations)?;
        draft.workload.owner = owner;
        draft.node_name = node_name;
        draft.extended = extended;
        self.workloads.push(Box::new(draft));
        Ok(())
    }
}
