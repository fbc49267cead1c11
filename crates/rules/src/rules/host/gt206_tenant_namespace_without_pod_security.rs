use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant namespace whose pods run or may run on GPU nodes and that lacks the Pod Security
    /// admission label `pod-security.kubernetes.io/enforce: baseline` (or `restricted`).
    ///
    /// ## Why it matters
    ///
    /// Without an enforced standard, nothing stops a tenant from creating the pods of GT202 and GT204:
    /// privileged containers, hostPath mounts of `/dev`, host namespaces. The audit only sees the pods
    /// that exist; the label stops the ones that will.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Namespace
    /// metadata:
    ///   name: team-a
    ///   labels: {}      # no pod-security.kubernetes.io/enforce
    /// ```
    ///
    /// ## Remediation
    ///
    /// `kubectl label namespace NAMESPACE pod-security.kubernetes.io/enforce=baseline` (or `restricted`),
    /// after checking with `--dry-run=server` which running pods would be refused.
    ///
    /// ## References
    ///
    /// - Kubernetes Pod Security Standards and Pod Security Admission: the
    ///   `pod-security.kubernetes.io/enforce` namespace label and its levels.
    pub struct TenantNamespaceWithoutPodSecurity {
        code: "GT206",
        name: "tenant-namespace-without-pod-security",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a tenant namespace whose pods may reach GPU nodes lacks an enforced Pod Security level of baseline or restricted",
    }
}

/// Pod Security levels that forbid privileged pods, hostPath and host namespaces.
const ENFORCING_LEVELS: [&str; 2] = ["baseline", "restricted"];

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // namespace -> (strongest certainty, workloads reaching GPU nodes, nodes)
    let mut reach: BTreeMap<&str, (Certainty, BTreeSet<usize>, BTreeSet<usize>)> = BTreeMap::new();
    for (wid, _, w) in ctx.tenant_workloads() {
        let (certainty, nodes) = ctx.colo().reach_of(wid);
        if nodes.is_empty() {
            continue;
        }
        let e = reach.entry(w.namespace.as_str()).or_insert((
            Certainty::Permitted,
            BTreeSet::new(),
            BTreeSet::new(),
        ));
        e.0 = e.0.min(certainty);
        e.1.insert(wid);
        e.2.extend(nodes);
    }
    for (ns, (certainty, workloads, nodes)) in reach {
        let info = ctx.namespace(ns);
        let level = info.and_then(|n| n.pod_security_enforce());
        if level.is_some_and(|l| ENFORCING_LEVELS.contains(&l.trim())) {
            continue;
        }
        let Some(tenant) = ctx.tenancy.tenant_of(ns) else {
            continue;
        };
        let state = match level {
            Some(l) => format!("enforces Pod Security level `{l}`"),
            None => "has no `pod-security.kubernetes.io/enforce` label".to_string(),
        };
        let mut draft = sink
            .draft(Severity::Medium, certainty)
            .key(format!("Namespace/{ns}"))
            .tenants([tenant])
            .workloads(workloads.iter().copied())
            .nodes(nodes.iter().copied())
            .message(format!(
                "namespace {ns} of tenant {} {state}, and its workloads reach GPU {}: nothing stops a privileged pod, a /dev hostPath or host namespaces there",
                ctx.tenant_name(tenant),
                text::nodes(ctx, nodes.iter().copied())
            ))
            .remediation(format!(
                "kubectl label namespace {ns} pod-security.kubernetes.io/enforce=baseline (or restricted; check first with --dry-run=server)"
            ));
        if let Some(o) = info.and_then(|n| n.object.clone()) {
            draft = draft.object(o);
        }
        sink.push(draft);
    }
}
