use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{Layer, Severity};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A GPU node hosting tenants whose trust is below `full`, for which the input does not say the GPU
    /// driver version (no `nvidia.com/cuda.driver-version.*` labels) or the container toolkit version
    /// (no ClusterPolicy `spec.toolkit.version`, nothing recorded for the node). A node the GPU
    /// Operator gives VMs runs neither, so neither version is missing there.
    ///
    /// ## Why it matters
    ///
    /// GT201 and GT205 can only judge versions they know. Where tenants that do not fully trust each
    /// other share a node, an unknown version is an unchecked path from one to the other.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Node
    /// metadata:
    ///   labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}   # no driver-version labels
    /// ```
    ///
    /// ## Remediation
    ///
    /// Include the ClusterPolicy and nodes as the cluster has them (`kubectl get nodes,clusterpolicies
    /// -o yaml`): GPU Feature Discovery labels every node with its driver version. Pin
    /// `spec.toolkit.version` in the ClusterPolicy.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU Feature Discovery: `nvidia.com/cuda.driver-version.{major,minor,revision,full}`.
    /// - NVIDIA GPU Operator: ClusterPolicy `spec.toolkit.version` (no label carries the toolkit version).
    pub struct UnknownHostVersions {
        code: "GT208",
        name: "unknown-host-versions",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::Low),
        summary: "a node hosting tenants below full trust has no known driver or toolkit version, so the patch window cannot be checked",
        reports: [Reports::HiddenFacts(Layer::Host)],
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let shared = super::nodes_shared_below_full(ctx);
    let cp_toolkit = ctx
        .fleet
        .cluster_policy
        .as_ref()
        .and_then(|c| c.toolkit_version.as_ref())
        .is_some();
    let mut groups: BTreeMap<Vec<&str>, BTreeSet<usize>> = BTreeMap::new();
    for id in shared {
        let Some(gpu) = ctx.gpu(id).filter(|g| g.workload.is_container()) else {
            continue;
        };
        let mut missing = Vec::new();
        if gpu.driver_version.is_none() {
            missing.push("GPU driver");
        }
        if gpu.toolkit_version.is_none() && !cp_toolkit {
            missing.push("NVIDIA Container Toolkit");
        }
        if !missing.is_empty() {
            groups.entry(missing).or_default().insert(id);
        }
    }
    for (missing, nodes) in groups {
        let Some(certainty) = super::tenant_presence(ctx, &nodes) else {
            continue;
        };
        let tenants: BTreeSet<_> = nodes
            .iter()
            .flat_map(|n| ctx.colo().tenants_on(*n).into_keys())
            .collect();
        let draft = sink
            .draft(Severity::Low, certainty)
            .key(format!("unknown/{}", missing.join(",")))
            .tenants(tenants.iter().copied())
            .nodes(nodes.iter().copied())
            .with_node_objects(ctx)
            .message(format!(
                "the {} {} of {}, shared by tenants {} below full trust, {} not in the input: known vulnerabilities and the patch window cannot be checked there",
                text::list(&missing),
                if missing.len() == 1 { "version" } else { "versions" },
                text::nodes(ctx, nodes.iter().copied()),
                text::tenants(ctx, tenants.iter().copied()),
                if missing.len() == 1 { "is" } else { "are" }
            ))
            .remediation(
                "Audit the nodes and ClusterPolicy as the cluster has them (`kubectl get nodes,clusterpolicies -o yaml`): GPU Feature Discovery labels each node with `nvidia.com/cuda.driver-version.full`; pin ClusterPolicy `spec.toolkit.version`".to_string(),
            );
        sink.push(draft);
    }
}
