use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant pod (or pod template) that runs or may run on a GPU node with `hostPID`, `hostIPC` or
    /// `hostNetwork`.
    ///
    /// ## Why it matters
    ///
    /// With `hostPID` a container sees and can signal every process of the node, including other
    /// tenants' GPU processes and the MPS control daemon (killing an MPS client by signal can leave the
    /// server undefined). With `hostIPC` it reaches the host's shared memory, where MPS keeps its
    /// client segments. With `hostNetwork` it reaches node-local services such as the DCGM exporter and
    /// the kubelet as the node does.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// spec:
    ///   hostIPC: true
    ///   containers: [{image: my-trainer, resources: {limits: {nvidia.com/gpu: 1}}}]
    /// ```
    ///
    /// ## Remediation
    ///
    /// Remove the host namespaces from the pod spec and enforce Pod Security `baseline` on the namespace
    /// (`pod-security.kubernetes.io/enforce: baseline`).
    ///
    /// ## References
    ///
    /// - Kubernetes Pod Security Standards, Baseline: host namespaces are forbidden.
    /// - NVIDIA MPS documentation: clients communicate with the server through shared memory and named
    ///   pipes; killing a client by signal is unsupported.
    pub struct HostNamespacesOnGpuNode {
        code: "GT204",
        name: "host-namespaces-on-gpu-node",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a tenant pod uses hostPID, hostIPC or hostNetwork on a GPU node (hostIPC reaches MPS shared memory)",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    owned::per_owner(
        ctx,
        sink,
        Severity::High,
        |wid, _, w| {
            let s = &w.pod_security;
            let mut which = Vec::new();
            if s.host_pid {
                which.push(
                    "hostPID (every process of the node, other tenants' GPU processes included)",
                );
            }
            if s.host_ipc {
                which.push("hostIPC (the host's shared memory, where MPS clients meet the server)");
            }
            if s.host_network {
                which.push("hostNetwork (node-local services as the node sees them)");
            }
            if which.is_empty() {
                return None;
            }
            let (certainty, nodes) = ctx.colo().reach_of(wid);
            (!nodes.is_empty()).then(|| owned::Verdict {
                certainty,
                nodes: nodes.into_iter().collect(),
                mechanisms: BTreeSet::new(),
                detail: which,
            })
        },
        |o| {
            let which = o.all(|w| w.clone());
            owned::Words {
                message: format!(
                    "{} of tenant {} uses {} and {} GPU {}",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    text::list(&which),
                    if o.certainty == Certainty::Observed { "runs on" } else { "may run on" },
                    text::nodes(ctx, o.nodes.iter().copied())
                ),
                remediation: format!(
                    "Remove hostPID, hostIPC and hostNetwork from {} and label namespace {} `pod-security.kubernetes.io/enforce: baseline`",
                    o.owner, o.namespace
                ),
            }
        },
    );
}
