use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::is_confidential_handler;
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// GPU workloads of a tenant marked `confidential: true` that do not run in a confidential runtime: no
    /// `runtimeClassName`, or a RuntimeClass whose handler does not name a CPU TEE (a Kata VM alone,
    /// NVIDIA's `kata-qemu-nvidia-gpu` or CoCo's `kata-qemu-coco-dev`, is not confidential). A
    /// runtime class whose RuntimeClass the input lacks is not judged: the audit's coverage reports
    /// it as a gap of the confidentiality layer.
    ///
    /// ## Why it matters
    ///
    /// CC mode on the GPU protects data in use only if the tenant can verify, before it sends secrets,
    /// that the GPU and the VM really are in CC mode with known firmware. That attestation happens in a
    /// confidential container runtime (Kata with the NVIDIA attestation flow and a key broker); an
    /// ordinary container on a CC node cannot attest anything, and enabling CC mode does not by itself
    /// verify the environment.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// metadata: {namespace: cust-acme}   # tenant acme is confidential
    /// spec:
    ///   containers: [{resources: {limits: {nvidia.com/gpu: 1}}}]   # no runtimeClassName
    /// ```
    ///
    /// ## Remediation
    ///
    /// Run the tenant's GPU pods with a confidential RuntimeClass (for example a Kata handler for NVIDIA
    /// GPUs with SNP or TDX) and release secrets only after attestation (Trustee key broker with NVIDIA's
    /// remote attestation service).
    ///
    /// ## References
    ///
    /// - NVIDIA nvtrust and the NVIDIA Remote Attestation Service (NRAS).
    /// - Confidential Containers: Trustee (KBS, attestation service, reference values) with NRAS.
    pub struct ConfidentialTenantWithoutAttestation {
        code: "GT303",
        name: "confidential-tenant-without-attestation",
        layer: Layer::Confidentiality,
        severity: SeverityRule::Fixed(Severity::Medium),
        summary: "a confidential tenant's pods do not run in a confidential runtime, so GPU state cannot be attested before launch",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let mut found: BTreeMap<TenantId, BTreeSet<usize>> = BTreeMap::new();
    for (wid, tenant, w) in ctx.tenant_workloads() {
        if !ctx.tenancy.tenant(tenant).confidential || !w.requests_gpu() {
            continue;
        }
        // A runtime class whose RuntimeClass was not read is a coverage gap, not a finding.
        let ps = &w.pod_security;
        let confidential = match (&ps.runtime_class_name, &ps.runtime_handler) {
            (Some(_), None) => continue,
            (_, Some(handler)) => is_confidential_handler(handler),
            (None, None) => false,
        };
        if !confidential {
            found.entry(tenant).or_default().insert(wid);
        }
    }
    for (tenant, workloads) in found {
        let classes: BTreeSet<String> = workloads
            .iter()
            .filter_map(|w| ctx.workload(*w))
            .map(|w| {
                w.pod_security.runtime_class_name.clone().map_or_else(
                    || "no runtime class".to_string(),
                    |c| format!("runtime class {c}"),
                )
            })
            .collect();
        let nodes: BTreeSet<usize> = workloads
            .iter()
            .flat_map(|w| ctx.colo().reach_of(*w).1)
            .collect();
        let draft = sink
            .draft(Severity::Medium, Certainty::Observed)
            .key(format!("tenant/{}", ctx.tenant_name(tenant)))
            .tenants([tenant])
            .workloads(workloads.iter().copied())
            .nodes(nodes)
            .message(format!(
                "confidential tenant {}'s GPU workloads run with {}, not a confidential runtime (Kata or CoCo on a CPU TEE: SEV-SNP, TDX): the GPU's CC state cannot be attested before secrets reach it",
                ctx.tenant_name(tenant),
                text::list(&classes.into_iter().collect::<Vec<_>>())
            ))
            .remediation(format!(
                "Give {}'s GPU pods a confidential RuntimeClass (a Kata handler for NVIDIA GPUs with SNP or TDX) and release secrets only after attestation (Trustee key broker with NVIDIA's attestation service)",
                ctx.tenant_name(tenant)
            ));
        sink.push(draft);
    }
}
