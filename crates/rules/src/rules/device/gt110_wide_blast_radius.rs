use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::{Enforcement, Property};
use gpu_trust_model::{Certainty, Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// A node whose device plugin advertises each GPU (or MIG instance) as more time-slicing or MPS
    /// replicas than the policy's limit (`sharing.maxReplicas`, default 4), where nothing limits the
    /// memory of a replica. Only resources the node advertises count: replicas a config lists for
    /// `nvidia.com/gpu` on GPUs that are all MIG-partitioned, or for a MIG profile the node does not
    /// have (MIG disabled, another layout), share nothing.
    ///
    /// ## Why it matters
    ///
    /// Every replica is one more workload in the same memory pool and fault domain: one replica's memory
    /// exhaustion or device fault reaches all the others on its GPU. With ten replicas per GPU a single
    /// faulty notebook stops ten workloads. Replicas also do not add compute; each gets less.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// sharing:
    ///   timeSlicing:
    ///     resources: [{name: nvidia.com/gpu, replicas: 10}]
    /// ```
    ///
    /// ## Remediation
    ///
    /// Lower `replicas` to the limit or below, or cut the GPU into MIG instances (memory and faults
    /// separate per instance), or use MPS, whose device plugin pins a memory limit per replica.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes": more replicas do not give
    ///   proportional compute; no memory or fault isolation between replicas.
    /// - gpu-trust tenancy policy: `sharing.maxReplicas`.
    pub struct WideBlastRadius {
        code: "GT110",
        name: "wide-blast-radius",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::Low),
        summary: "a time-sliced or MPS GPU advertises more replicas than the configured limit with no memory limit per replica",
        reports: [Reports::ReplicasOverLimit],
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let limit = ctx.tenancy.max_replicas();
    for (id, node) in ctx.fleet.gpu_nodes() {
        let Some(gpu) = &node.gpu else { continue };
        for (resource, &replicas) in &gpu.sharing.replicas {
            if replicas <= limit || !gpu.advertises_shared(resource) {
                continue;
            }
            let mechanism = gpu.mechanism_for(resource);
            if !mechanism.shares_device() {
                continue;
            }
            let mig = mechanism.is_mig();
            let memory = mechanism.property(Property::MemoryCapacity);
            if !matches!(
                memory.enforcement,
                Enforcement::Shared | Enforcement::NotEnforced
            ) {
                continue;
            }
            let unit = if mig { "MIG instance" } else { "GPU" };
            let tenants = ctx.colo().tenants_on(id);
            let draft = sink
                .draft(Severity::Low, Certainty::Observed)
                .key(format!("node/{}/{resource}", node.name))
                .nodes([id])
                .tenants(tenants.keys().copied())
                .with_node_objects(ctx)
                .mechanism(mechanism)
                .message(format!(
                    "node {} advertises each {unit} as {replicas} replicas of {resource} ({}), more than the limit of {limit}, with no memory limit per replica: {}; one replica's memory exhaustion or fault reaches up to {} others",
                    node.name,
                    mechanism.title(),
                    text::enforcement(mechanism, &[Property::MemoryCapacity, Property::FaultDomain]),
                    replicas - 1
                ))
                .remediation(format!(
                    "Lower `replicas` for {resource} to {limit} or fewer in {}, or cut the GPUs into MIG instances so memory and faults stay per instance",
                    wording::config_source(gpu)
                ));
            sink.push(draft);
        }
    }
}
