use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Mechanism, SeatRow};
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A workload of a tenant marked `confidential: true` in the policy that runs, or may run, on a GPU
    /// whose confidential-computing mode is not on (`nvidia.com/cc.mode.state` is not `on` or `ppcie`).
    ///
    /// ## Why it matters
    ///
    /// Without CC mode the GPU's memory and the PCIe traffic to it are readable by the host: by the node's
    /// administrators, by a driver or toolkit exploit, by anything that escapes another tenant's
    /// container. A confidential tenant was promised that its data in use is protected from the
    /// platform; that needs CC mode on a CC-capable GPU (H100, H200, B200 and later in the catalogue).
    ///
    /// ## Example
    ///
    /// ```yaml
    /// tenants:
    ///   - name: acme
    ///     namespaces: [cust-acme]
    ///     confidential: true
    /// # cust-acme pods run on a node labelled nvidia.com/cc.mode.state: "off"
    /// ```
    ///
    /// ## Remediation
    ///
    /// Run the tenant on a CC node pool: CC-capable GPUs with `nvidia.com/cc.mode=on` (the GPU Operator's
    /// CC manager applies it), whole GPUs passed through to confidential VMs, and a nodeSelector on
    /// `nvidia.com/cc.mode.state: "on"` for the tenant's workloads.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator, confidential computing: labels `nvidia.com/cc.mode`,
    ///   `nvidia.com/cc.mode.state`, `nvidia.com/cc.ready.state`; ClusterPolicy `ccManager`.
    /// - NVIDIA Confidential Containers supported platforms.
    pub struct ConfidentialTenantWithoutCc {
        code: "GT301",
        name: "confidential-tenant-without-cc",
        layer: Layer::Confidentiality,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a tenant marked confidential runs on a GPU whose CC mode is not on",
        reports: [Reports::HiddenFacts(Layer::Confidentiality)],
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // tenant -> (certainty, workloads, nodes)
    let mut found: BTreeMap<TenantId, (Certainty, BTreeSet<usize>, BTreeSet<usize>)> =
        BTreeMap::new();
    // Which workloads and seats: the rule's row about one workload in the model's table.
    let Some(row) = SeatRow::of_rule(sink.rule().code) else {
        return;
    };
    for (wid, tenant, w) in ctx.tenant_workloads() {
        if !(row.who)(owned::traits(ctx, wid, tenant)) || !w.requests_gpu() {
            continue;
        }
        let (certainty, nodes) = ctx.colo().reach_of(wid);
        let off: Vec<usize> = nodes
            .into_iter()
            .filter(|n| {
                ctx.gpu(*n).is_some_and(|g| {
                    let m = Mechanism::of_workload(w, g).unwrap_or(Mechanism::Exclusive);
                    (row.refuses)(owned::seat(ctx, w, m, *n))
                })
            })
            .collect();
        if off.is_empty() {
            continue;
        }
        let e =
            found
                .entry(tenant)
                .or_insert((Certainty::Permitted, BTreeSet::new(), BTreeSet::new()));
        e.0 = e.0.min(certainty);
        e.1.insert(wid);
        e.2.extend(off);
    }
    for (tenant, (certainty, workloads, nodes)) in found {
        let modes: BTreeSet<String> = nodes
            .iter()
            .filter_map(|n| ctx.gpu(*n))
            .map(|g| g.cc_mode.clone().unwrap_or_else(|| "not set".to_string()))
            .collect();
        let draft = sink
            .draft(Severity::High, certainty)
            .key(format!("tenant/{}", ctx.tenant_name(tenant)))
            .tenants([tenant])
            .workloads(workloads.iter().copied())
            .nodes(nodes.iter().copied())
            .message(format!(
                "confidential tenant {}'s workloads {} GPUs on {} whose CC mode is {}: GPU memory and PCIe traffic are readable from the host",
                ctx.tenant_name(tenant),
                if certainty == Certainty::Observed { "run on" } else { "may run on" },
                text::nodes(ctx, nodes.iter().copied()),
                text::list(&modes.into_iter().collect::<Vec<_>>())
            ))
            .remediation(format!(
                "Run {} on a CC node pool: CC-capable GPUs with `{}=on`, whole GPUs in passthrough, and a nodeSelector `{}: \"on\"` on its workloads",
                ctx.tenant_name(tenant),
                gpu_trust_model::labels::CC_MODE,
                gpu_trust_model::labels::CC_MODE_STATE
            ));
        sink.push(draft);
    }
}
