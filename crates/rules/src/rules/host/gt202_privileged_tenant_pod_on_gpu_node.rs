use super::super::owned;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::Workload;
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant pod (or pod template) that runs or may run on a GPU node and is privileged, adds the
    /// `SYS_ADMIN` capability, or mounts a hostPath under `/dev`, `/run/nvidia`,
    /// `/var/run/nvidia-container-devices` or the MPS pipe directory (`/run/nvidia/mps`), or an ancestor of
    /// them such as `/`. On manifests alone (no GPU node in the input), a workload that requests a GPU
    /// is judged by its request: it will run on a GPU node.
    ///
    /// ## Why it matters
    ///
    /// A privileged container sees every device node of the host: every GPU, including the ones the
    /// device plugin gave to other tenants, and their memory through the driver. The NVIDIA toolkit
    /// treats a container with `CAP_SYS_ADMIN` as privileged and hands it all GPUs. The MPS pipe directory
    /// is the control channel of every MPS client on the node. Platform DaemonSets need these rights;
    /// tenants never do.
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
    pub struct PrivilegedTenantPodOnGpuNode {
        code: "GT202",
        name: "privileged-tenant-pod-on-gpu-node",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::Critical),
        summary: "a tenant pod that runs or may run on a GPU node is privileged, adds SYS_ADMIN, or mounts GPU device or MPS paths from the host",
    }
}

/// Host paths that expose GPUs or their control channels (sources in the doc comment above:
/// device nodes, the driver's runtime directory, the toolkit's device list, the MPS pipe root).
const SENSITIVE_PATHS: [&str; 4] = [
    "/dev",
    "/run/nvidia",
    "/var/run/nvidia-container-devices",
    "/run/nvidia/mps",
];

/// Whether mounting `path` exposes a sensitive path: it is one, lies under one, or contains one.
pub(crate) fn sensitive_host_path(path: &str) -> bool {
    let clean = path.trim_end_matches('/');
    let clean = if clean.is_empty() { "/" } else { clean };
    let clean = clean
        .strip_prefix("/var/run")
        .map_or(clean.to_string(), |rest| {
            // /var/run is a link to /run on every current distribution.
            format!("/run{rest}")
        });
    SENSITIVE_PATHS.iter().any(|p| {
        let p = p
            .strip_prefix("/var/run")
            .map_or(p.to_string(), |r| format!("/run{r}"));
        clean == p
            || clean.starts_with(&format!("{p}/"))
            || clean == "/"
            || p.starts_with(&format!("{clean}/"))
    })
}

/// What makes the workload privileged on the host, in words.
pub(crate) fn privileges(w: &Workload) -> Vec<String> {
    let mut out = Vec::new();
    for c in &w.containers {
        if c.privileged {
            out.push(format!("container {} is privileged", c.name));
        }
        if c.added_capabilities.iter().any(|cap| {
            cap.trim_start_matches("CAP_")
                .eq_ignore_ascii_case("SYS_ADMIN")
        }) {
            out.push(format!("container {} adds SYS_ADMIN", c.name));
        }
    }
    for p in &w.pod_security.host_paths {
        if sensitive_host_path(p) {
            out.push(format!("mounts hostPath {p}"));
        }
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
        "Remove privileged, SYS_ADMIN and the GPU hostPath mounts from {owner}, and label namespace {namespace} `pod-security.kubernetes.io/enforce: baseline` (or `restricted`) so they cannot return; host-level tools belong in a platform namespace"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_paths() {
        for p in [
            "/dev",
            "/dev/nvidia0",
            "/run/nvidia/mps",
            "/var/run/nvidia-container-devices",
            "/",
            "/run",
            "/var/run/nvidia/driver",
        ] {
            assert!(sensitive_host_path(p), "{p}");
        }
        for p in [
            "/data",
            "/var/lib/models",
            "/devices-not",
            "/run/containerd",
        ] {
            assert!(!sensitive_host_path(p), "{p}");
        }
    }
}
