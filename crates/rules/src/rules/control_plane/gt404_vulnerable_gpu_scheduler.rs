use crate::advisories::{Component, Hit, RuntimeSetup};
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::stack::KAI_SCHEDULER_NAME;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A GPU scheduler that serves every tenant (KAI Scheduler) runs a version affected by a known
    /// vulnerability of the advisory data: KAI Scheduler before 0.13.0 answers API requests without
    /// authentication (CVE-2026-24177) and authorises cross-namespace pod references wrongly
    /// (CVE-2026-24176). The version is read from the images of its pods, Deployments and
    /// DaemonSets (`ghcr.io/nvidia/kai-scheduler/<component>`) and Helm's `helm.sh/chart` label. The
    /// tenants named are those whose pods KAI schedules (`schedulerName: kai-scheduler`, KAI GPU
    /// fractions), else every tenant of the cluster.
    ///
    /// ## Why it matters
    ///
    /// The scheduler binds every tenant's pods to GPUs and reads every namespace. A flaw in it is a
    /// path from one tenant to another through the control plane, whatever separates them on the
    /// GPU: an unauthenticated endpoint discloses other namespaces' workloads, and a pod reference
    /// across namespaces lets one tenant tamper with another's scheduling.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Deployment
    /// metadata: {name: kai-scheduler-default, namespace: kai-scheduler}
    /// spec:
    ///   template:
    ///     spec:
    ///       containers: [{name: scheduler, image: ghcr.io/nvidia/kai-scheduler/scheduler:v0.12.6}]
    /// ```
    ///
    /// ## Remediation
    ///
    /// Upgrade KAI Scheduler to the fixed version the finding names (0.13.0 or later for the April
    /// 2026 bulletin), and keep tenants' pods from reaching its services with a NetworkPolicy.
    ///
    /// ## References
    ///
    /// - NVIDIA security bulletin 5818, "NVIDIA KAI Scheduler - April 2026" (CVE-2026-24177,
    ///   CVE-2026-24176; all versions before 0.13.0).
    /// - gpu-trust advisory data (`crates/rules/data/advisories.yaml`), to which `--advisories` adds
    ///   vendors' CSAF documents.
    pub struct VulnerableGpuScheduler {
        code: "GT404",
        name: "vulnerable-gpu-scheduler",
        layer: Layer::ControlPlane,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a GPU scheduler every tenant's pods go through (KAI Scheduler) runs a version with a known vulnerability",
    }
}

fn describe(hit: &Hit<'_>) -> String {
    let a = hit.advisory;
    let mut s = format!("{} ({}", a.id, a.summary);
    if let Some(c) = a.cvss {
        s.push_str(&format!(", CVSS {c:.1}"));
    }
    if let Some(fix) = &hit.fix {
        s.push_str(&format!(", fixed in {fix}"));
    }
    match (&a.title, &a.url) {
        (Some(t), Some(u)) => s.push_str(&format!("; {t}, {u}")),
        (Some(t), None) => s.push_str(&format!("; {t}")),
        (None, Some(u)) => s.push_str(&format!("; {u}")),
        (None, None) => {}
    }
    s.push(')');
    s
}

/// A version of a component as the input shows it: the version, where it was read, the objects.
type Seen = (
    gpu_trust_model::Version,
    BTreeSet<String>,
    BTreeSet<gpu_trust_model::ObjectRef>,
);

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // (component, version text) -> what was seen of it
    let mut seen: BTreeMap<(Component, String), Seen> = BTreeMap::new();
    for v in &ctx.analysis.versions {
        if v.component.layer() != Layer::ControlPlane {
            continue;
        }
        let e = seen
            .entry((v.component, v.version.text.clone()))
            .or_insert_with(|| (v.version.clone(), BTreeSet::new(), BTreeSet::new()));
        e.1.insert(v.source.clone());
        if let Some(o) = &v.object {
            e.2.insert(o.clone());
        }
    }
    if seen.is_empty() {
        return;
    }
    let users: BTreeSet<_> = ctx
        .tenant_workloads()
        .filter(|(_, _, w)| {
            w.scheduler_name.as_deref() == Some(KAI_SCHEDULER_NAME)
                || w.gpu
                    .fraction
                    .as_ref()
                    .is_some_and(|f| f.scheduler == Mechanism::KaiFraction)
        })
        .map(|(_, t, _)| t)
        .collect();
    let tenants = if users.is_empty() {
        ctx.tenants_with_workloads()
    } else {
        users.clone()
    };
    if tenants.is_empty() {
        return;
    }
    for ((component, _), (version, sources, objects)) in seen {
        let hits = ctx
            .advisories
            .hits(component, &version, RuntimeSetup::default());
        if hits.is_empty() {
            continue;
        }
        let items: Vec<String> = hits.iter().map(describe).collect();
        let target = hits.iter().filter_map(|h| h.fix.clone()).max();
        let sources: Vec<String> = sources.into_iter().collect();
        let whose = if users.is_empty() {
            format!(
                "every tenant can reach it: {}",
                text::tenants(ctx, tenants.iter().copied())
            )
        } else {
            format!(
                "it schedules the pods of {} {}",
                if tenants.len() == 1 {
                    "tenant"
                } else {
                    "tenants"
                },
                text::tenants(ctx, tenants.iter().copied())
            )
        };
        let mut draft = sink
            .draft(Severity::High, Certainty::Observed)
            .key(format!("{}/{}", component.as_str(), version.text))
            .tenants(tenants.iter().copied())
            .message(format!(
                "{component} {version} ({}) is affected by {}: a path between tenants through the control plane, where {whose}",
                text::list(&sources),
                text::list(&items)
            ))
            .remediation(match &target {
                Some(t) => format!("Upgrade {component} to {t} or later"),
                None => format!("Upgrade {component} to a fixed release"),
            });
        for o in objects {
            draft = draft.object(o);
        }
        sink.push(draft);
    }
}
