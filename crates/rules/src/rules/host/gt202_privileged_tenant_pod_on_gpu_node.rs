use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::Workload;
use gpu_trust_model::host;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant pod (or pod template) that runs or may run on a GPU node and has a privileged container
    /// (an ephemeral `kubectl debug` container included), adds the `SYS_ADMIN` capability or `ALL` (in
    /// any letter case, with or without `CAP_`), or mounts a hostPath under `/dev`, `/run/nvidia`,
    /// `/var/run/nvidia-container-devices` or the MPS pipe directory (`/run/nvidia/mps`), a container
    /// runtime's socket (containerd, k3s's containerd, CRI-O, Docker, cri-dockerd), or the kubelet's
    /// device plugin or pod resources sockets (`/var/lib/kubelet/device-plugins`,
    /// `/var/lib/kubelet/pod-resources`), or an ancestor of them such as `/` or `/run`. Paths are
    /// judged as the node resolves them (`//dev`, `/./dev` and `/run//nvidia/` are `/dev` and
    /// `/run/nvidia`; `/var/run` is `/run`). On manifests alone (no GPU node in the input), a workload
    /// that requests a GPU is judged by its request: it will run on a GPU node.
    ///
    /// ## Why it matters
    ///
    /// A privileged container sees every device node of the host: every GPU, including the ones the
    /// device plugin gave to other tenants, and their memory through the driver. The NVIDIA toolkit
    /// treats a container with `CAP_SYS_ADMIN` as privileged and hands it all GPUs. The MPS pipe directory
    /// is the control channel of every MPS client on the node. A container runtime's socket starts any
    /// container on the node, privileged included; the kubelet's device plugin socket lets a pod register
    /// as the GPU plugin, and the pod resources socket lists every pod's devices. Platform DaemonSets
    /// need these rights; tenants never do.
    ///
    /// The risk falls on the node's other tenants, present and future, so a tenant's own annotation does
    /// not accept a finding of this rule: only the policy can (docs/suppressions.md).
    ///
    /// ## Example
    ///
    /// ```yaml
    /// metadata: {namespace: team-a}
    /// spec:
    ///   containers:
    ///     - securityContext: {privileged: true}
    /// ```
    ///
    /// ## Remediation
    ///
    /// Drop `privileged` and `SYS_ADMIN`, remove the hostPath volume, and enforce the Pod Security
    /// Standard `baseline` (or `restricted`) on the namespace
    /// (`pod-security.kubernetes.io/enforce: baseline`) so it cannot come back. Workloads that truly need
    /// host access belong in a platform namespace run by the cluster admins.
    ///
    /// ## References
    ///
    /// - Kubernetes Pod Security Standards, Baseline: privileged containers, added capabilities outside
    ///   the default set (SYS_ADMIN included) and hostPath volumes are forbidden.
    /// - NVIDIA Container Toolkit: "privileged" means CAP_SYS_ADMIN in the bounding set.
    /// - NVIDIA k8s-device-plugin MPS support: pipe and shared-memory directories under `/run/nvidia/mps`.
    /// - containerd and CRI-O grant every capability for `ALL` in any letter case (containerd
    ///   `pkg/cri/util.InStringSlice`).
    /// - The socket paths of containerd, k3s, CRI-O, Docker and cri-dockerd, and the kubelet's "Device
    ///   Plugins" and "Monitoring Device Plugin Resources" documentation; each path with its source in
    ///   `gpu_trust_model::host::SENSITIVE_PATHS`.
    pub struct PrivilegedTenantPodOnGpuNode {
        code: "GT202",
        name: "privileged-tenant-pod-on-gpu-node",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::Critical),
        summary: "a tenant pod that runs or may run on a GPU node is privileged, adds SYS_ADMIN or ALL, or mounts GPU device, MPS, container runtime or kubelet device plugin paths from the host",
        neighbour_risk: true,
    }
}

/// What makes the workload privileged on the host, in words: privileged containers (ephemeral ones
/// included), capabilities that give `SYS_ADMIN` and host paths that expose GPUs or the node, as the
/// model's host facts (`gpu_trust_model::host`) say.
pub(crate) fn privileges(w: &Workload) -> Vec<String> {
    let mut out = Vec::new();
    for c in &w.containers {
        if c.privileged {
            out.push(format!("container {} is privileged", c.name));
        }
        for cap in c
            .added_capabilities
            .iter()
            .filter(|c| host::grants_sys_admin(c))
        {
            out.push(if cap.eq_ignore_ascii_case("SYS_ADMIN") {
                format!("container {} adds SYS_ADMIN", c.name)
            } else {
                format!(
                    "container {} adds {cap} (every capability, SYS_ADMIN included)",
                    c.name
                )
            });
        }
    }
    for p in &w.pod_security.host_paths {
        let exposed = host::exposed_by(p);
        if exposed.is_empty() {
            continue;
        }
        let what: Vec<&str> = exposed.iter().map(|s| s.exposes).collect();
        out.push(format!("mounts hostPath {p} ({})", what.join(", ")));
    }
    out
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let manifests = ctx.fleet.gpu_nodes().next().is_none();
    owned::per_owner(
        ctx,
        sink,
        Severity::Critical,
        |wid, _, w| {
            let what = privileges(w);
            if what.is_empty() {
                return None;
            }
            let (certainty, nodes) = ctx.colo().reach_of(wid);
            if !nodes.is_empty() {
                return Some(owned::Verdict {
                    certainty,
                    nodes: nodes.into_iter().collect(),
                    mechanisms: BTreeSet::new(),
                    detail: what,
                });
            }
            // Without GPU nodes in the input (manifests alone), a GPU request says where it will
            // run: on some GPU node, whose name and neighbours are unknown.
            (w.requests_gpu() && manifests).then(|| owned::Verdict {
                certainty: Certainty::Possible,
                nodes: BTreeSet::new(),
                mechanisms: BTreeSet::new(),
                detail: what,
            })
        },
        |o| {
            let what = o.all(|w| w.clone());
            let message = if o.nodes.is_empty() {
                format!(
                    "{} of tenant {} requests a GPU, so it runs on a GPU node (the input has none to name): {}; it will see every GPU of its node and every neighbour's devices",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    text::list(&what)
                )
            } else {
                format!(
                    "{} of tenant {} {} GPU {}: {}; it sees every GPU of the node and every neighbour's devices",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    if o.certainty == Certainty::Observed { "runs on" } else { "may run on" },
                    text::nodes(ctx, o.nodes.iter().copied()),
                    text::list(&what)
                )
            };
            owned::Words {
                message,
                remediation: remediation(&o.owner, &o.namespace),
            }
        },
    );
}

fn remediation(owner: &str, namespace: &str) -> String {
    format!(
        "Remove privileged, SYS_ADMIN (or ALL) and the host path mounts from {owner}, and label namespace {namespace} `pod-security.kubernetes.io/enforce: baseline` (or `restricted`) so they cannot return; host-level tools belong in a platform namespace"
    )
}
