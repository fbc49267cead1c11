use crate::colocation::Level;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::NodeId;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::stack::{self, Exporter, PER_POD_METRICS_SINCE};
use gpu_trust_model::{Certainty, Layer, Severity, Version};
use gpu_trust_policy::{Contract, TenantId};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant whose contract is `proportional-compute` (the default: it bills or promises a share)
    /// shares time-sliced or MPS GPUs (device plugin sharing, whole GPUs or inside MIG instances)
    /// with other tenants, on nodes where nothing in the input can tell one tenant's use of a shared
    /// GPU from another's. That takes a DCGM exporter on the node, with Kubernetes mapping on
    /// (`DCGM_EXPORTER_KUBERNETES`), its per-pod mode for shared GPUs on
    /// (`KUBERNETES_VIRTUAL_GPUS=true`), at version 4.8.2 or later, which splits a shared GPU's
    /// utilisation and memory by process and pod; earlier versions give every pod of a shared GPU
    /// the whole GPU's figures. Pod labels on the metrics (the GPU Operator's `enablePodLabels`) name
    /// the tenant when namespaces do not, but do not split a GPU by themselves. Fractions of HAMi,
    /// KAI Scheduler and Run:ai keep their own accounting and are not judged here.
    ///
    /// ## Why it matters
    ///
    /// A share that cannot be measured cannot be billed fairly or enforced after the fact: one
    /// tenant's heavy kernels on a time-sliced GPU slow its neighbours, and the only device metrics
    /// are the whole GPU's. "The missing per-pod attribution makes cross-tenant boundaries as
    /// difficult to police as shared infrastructure bills."
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: DaemonSet          # the GPU Operator's exporter, as deployed by default
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - image: nvcr.io/nvidia/k8s/dcgm-exporter:4.5.2-4.8.1-ubuntu22.04
    ///           env: [{name: DCGM_EXPORTER_KUBERNETES, value: "true"}]   # no KUBERNETES_VIRTUAL_GPUS
    /// ```
    ///
    /// ## Remediation
    ///
    /// Run the DCGM exporter 4.8.2 or later on the shared nodes with `KUBERNETES_VIRTUAL_GPUS=true`
    /// (ClusterPolicy `spec.dcgmExporter.env`, or the exporter chart's `extraEnv`), and pod labels on
    /// if tenants are told apart by label; or bill and promise whole GPUs or MIG instances instead.
    ///
    /// ## References
    ///
    /// - NVIDIA/dcgm-exporter `pkg/cmd/app.go` (`--kubernetes-virtual-gpus`: metrics of virtual GPUs
    ///   under time-sharing or MPS); pull request 594, "Add per-process GPU metrics for time-sharing
    ///   and MIG" (in 4.8.2); issues 587 and 307 (device metrics duplicated or attached to one pod).
    /// - NVIDIA GPU Operator 26.3.2 release notes: `dcgmExporter.enablePodLabels`, `enablePodUID`.
    /// - gpu-trust tenancy policy: `contract`.
    pub struct ShareNotMeasurable {
        code: "GT503",
        name: "share-not-measurable",
        layer: Layer::Contract,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a tenant billed or promised a share of time-sliced or MPS GPUs shares them on nodes where nothing measures each tenant's use",
    }
}

/// Neighbours a finding names (the finding is about the tenant, not its pairs).
const MAX_NEIGHBOURS: usize = 8;

/// The device plugin's sharing mechanisms the exporter's per-pod mode covers.
fn measured_mechanism(m: Mechanism) -> bool {
    matches!(
        m,
        Mechanism::TimeSlicing | Mechanism::Mps | Mechanism::MigTimeSlicing | Mechanism::MigMps
    )
}

/// Why the exporters of a node cannot split a shared GPU by tenant; `None` when one can.
fn unmeasured(node: NodeId, exporters: &[Exporter], since: &Version) -> Option<String> {
    let here: Vec<&Exporter> = exporters
        .iter()
        .filter(|e| e.nodes.is_empty() || e.nodes.contains(&node))
        .collect();
    if here.is_empty() {
        return Some("no DCGM exporter runs there".to_string());
    }
    let mut why = BTreeSet::new();
    for e in here {
        let s = &e.settings;
        let name = e.object.as_ref().map_or_else(
            || "the DCGM exporter".to_string(),
            |o| format!("the DCGM exporter of {o}"),
        );
        if !s.kubernetes {
            why.insert(format!(
                "{name} does not map metrics to pods (DCGM_EXPORTER_KUBERNETES)"
            ));
        } else if !s.virtual_gpus {
            why.insert(format!(
                "{name} gives a shared GPU's metrics to one pod (KUBERNETES_VIRTUAL_GPUS is not set)"
            ));
        } else {
            match &s.version {
                Some(v) if v >= since => return None,
                Some(v) => {
                    why.insert(format!(
                        "{name} {v} gives every pod of a shared GPU the whole GPU's figures (per-pod figures from {since})"
                    ));
                }
                None => {
                    why.insert(format!(
                        "the version of {name} is not in the input (per-pod figures from {since})"
                    ));
                }
            }
        }
    }
    Some(why.into_iter().collect::<Vec<_>>().join("; "))
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let Some(since) = Version::parse(PER_POD_METRICS_SINCE) else {
        return;
    };
    let exporters = stack::exporters(ctx.fleet);
    // Per tenant: its neighbours on measured shared GPUs, the nodes, mechanisms, certainty.
    type Share = (
        BTreeSet<TenantId>,
        BTreeSet<NodeId>,
        BTreeSet<Mechanism>,
        Option<Certainty>,
    );
    let mut shares: BTreeMap<TenantId, Share> = BTreeMap::new();
    for site in &ctx.colo().sites {
        let Level::Device(m) = site.level else {
            continue;
        };
        if !measured_mechanism(m) || site.members.len() < 2 {
            continue;
        }
        for (t, me) in &site.members {
            // Another tenant's contract is its own business in a focused audit.
            if ctx.tenancy.tenant(*t).contract != Contract::ProportionalCompute || !ctx.in_focus(*t)
            {
                continue;
            }
            // The neighbours it meets, the first few of them only: nothing here grows with the
            // square of a site's tenants.
            for (u, other) in site
                .members
                .iter()
                .filter(|(u, _)| *u != t)
                .take(MAX_NEIGHBOURS)
            {
                let Some((certainty, _)) = site.meet(ctx.fleet, me, other) else {
                    continue;
                };
                let e = shares.entry(*t).or_default();
                if e.0.len() < MAX_NEIGHBOURS {
                    e.0.insert(*u);
                }
                e.1.extend(site.nodes.iter().copied());
                e.2.insert(m);
                e.3 = Some(e.3.map_or(certainty, |c| c.min(certainty)));
            }
        }
    }
    for (tenant, (neighbours, nodes, mechanisms, certainty)) in shares {
        let Some(certainty) = certainty else { continue };
        let mut why: BTreeMap<String, BTreeSet<NodeId>> = BTreeMap::new();
        for n in &nodes {
            if let Some(reason) = unmeasured(*n, &exporters, &since) {
                why.entry(reason).or_default().insert(*n);
            }
        }
        if why.is_empty() {
            continue;
        }
        let unmeasured_nodes: BTreeSet<NodeId> = why.values().flatten().copied().collect();
        let reasons: Vec<String> = why
            .iter()
            .map(|(reason, ns)| format!("on {}, {reason}", text::nodes(ctx, ns.iter().copied())))
            .collect();
        let kinds: Vec<String> = mechanisms.iter().map(|m| m.title().to_string()).collect();
        let mut draft = sink
            .draft(Severity::Medium, certainty)
            .key(format!("measure/{}", ctx.tenant_name(tenant)))
            .tenants(std::iter::once(tenant).chain(neighbours.iter().copied()))
            .nodes(unmeasured_nodes.iter().copied())
            .message(format!(
                "tenant {} (contract proportional-compute) shares GPUs under {} with {}{}, but nothing in the cluster measures each tenant's use of a shared GPU: {}",
                ctx.tenant_name(tenant),
                text::list(&kinds),
                text::tenants(ctx, neighbours.iter().copied()),
                if neighbours.len() >= MAX_NEIGHBOURS { " and others" } else { "" },
                reasons.join("; ")
            ))
            .remediation(format!(
                "Run the DCGM exporter {PER_POD_METRICS_SINCE} or later on {} with KUBERNETES_VIRTUAL_GPUS=true (ClusterPolicy `spec.dcgmExporter.env`), and pod labels on when tenants are told apart by label; or give {} whole GPUs or MIG instances",
                text::nodes(ctx, unmeasured_nodes.iter().copied()),
                ctx.tenant_name(tenant)
            ));
        for e in &exporters {
            if let Some(o) = e.object.clone() {
                if e.nodes.is_empty() || e.nodes.iter().any(|n| unmeasured_nodes.contains(n)) {
                    draft = draft.object(o);
                }
            }
        }
        sink.push(draft);
    }
}
