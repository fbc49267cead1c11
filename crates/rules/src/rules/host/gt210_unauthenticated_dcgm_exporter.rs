use crate::advisories::{Component, Effect, RuntimeSetup};
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::stack::{self, EXPORTER_PORT};
use gpu_trust_model::{Certainty, Layer, Severity};
use std::collections::BTreeSet;

declare_rule! {
    /// ## What it detects
    ///
    /// A DCGM exporter on GPU nodes that host tenants serves its endpoints without authentication (no
    /// `--web-config-file` / `DCGM_EXPORTER_WEB_CONFIG_FILE`), so any pod that reaches its port can read
    /// them. Found as a workload running the exporter's image (the GPU Operator's
    /// `nvidia-dcgm-exporter` DaemonSet, the exporter's chart), else as the ClusterPolicy's or
    /// GPUCluster's `dcgmExporter` spec (on the nodes for containers: the GPU Operator runs no exporter
    /// on a node it gives VMs). Worse when `/debug/pprof` is served: turned on with
    /// `--enable-pprof`, or a version the advisory data marks with the `unauthenticated-profiling`
    /// effect (CVE-2026-47483: 4.8.0 and 4.8.1 served it to anyone). High with profiling endpoints,
    /// medium for the metrics alone.
    ///
    /// ## Why it matters
    ///
    /// The metrics name every pod on every GPU of the node, with its namespace (and its labels, with
    /// pod labels on), and how much memory and compute it uses: one tenant learns its neighbours'
    /// workloads and load. Profiling endpoints disclose the exporter's memory and command line, and
    /// concurrent profile requests exhaust the node service every tenant's monitoring relies on. A
    /// NetworkPolicy can keep tenants out; gpu-trust does not read NetworkPolicies, so a finding on
    /// the pod network is `possible`, one on the host network (which NetworkPolicies do not cover on
    /// most network plugins) is `observed`.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: DaemonSet
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - image: nvcr.io/nvidia/k8s/dcgm-exporter:4.5.2-4.8.1-ubuntu22.04  # /debug/pprof open
    ///           env: [{name: DCGM_EXPORTER_KUBERNETES, value: "true"}]           # no web config
    /// ```
    ///
    /// ## Remediation
    ///
    /// Upgrade the exporter to 4.8.2 or later and leave `--enable-pprof` off; serve it behind TLS and
    /// basic authentication (`--web-config-file`, the chart's `tlsServerConfig`/`basicAuth`), and allow
    /// only the metrics collector to reach port 9400 with a NetworkPolicy.
    ///
    /// ## References
    ///
    /// - NVIDIA security bulletin 5857 (CVE-2026-47483, July 2026); dcgm-exporter tags 4.5.1-4.8.0 to
    ///   4.5.3-4.8.2 (`internal/pkg/server/server.go`, `--enable-pprof`).
    /// - NVIDIA/dcgm-exporter pull request 209 (TLS and basic authentication through the Prometheus
    ///   exporter-toolkit web configuration); `pkg/cmd/app.go` (`--web-config-file`).
    /// - GPU Operator `assets/state-dcgm-exporter/0800_daemonset.yaml` (port 9400, no web config).
    pub struct UnauthenticatedDcgmExporter {
        code: "GT210",
        name: "unauthenticated-dcgm-exporter",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a DCGM exporter on tenants' GPU nodes answers without authentication: other tenants' pods and load, and its profiling endpoints when on",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // An exporter known from a spec runs on the nodes for containers: the GPU Operator deploys none
    // on the nodes it gives VMs.
    let all_gpu_nodes: BTreeSet<usize> = ctx
        .fleet
        .gpu_nodes()
        .map(|(id, _)| id)
        .filter(|id| super::runs_containers(ctx, *id))
        .collect();
    for e in stack::exporters(ctx.fleet) {
        if e.settings.authenticated {
            continue;
        }
        let nodes: BTreeSet<usize> = if e.nodes.is_empty() {
            all_gpu_nodes.clone()
        } else {
            e.nodes.iter().copied().collect()
        };
        let nodes: BTreeSet<usize> = nodes.into_iter().filter(|n| ctx.hosts_focus(*n)).collect();
        let tenants: BTreeSet<_> = nodes
            .iter()
            .flat_map(|n| ctx.colo().tenants_on(*n).into_keys())
            .collect();
        if tenants.is_empty() {
            continue;
        }
        // Profiling: turned on, or served by a version the advisory data names.
        let advisory = e.settings.version.as_ref().and_then(|v| {
            ctx.advisories
                .hits(Component::DcgmExporter, v, RuntimeSetup::default())
                .into_iter()
                .find(|h| {
                    h.advisory
                        .effects
                        .contains(&Effect::UnauthenticatedProfiling)
                })
        });
        let mut exposes = vec![format!(
            "metrics naming every pod on its GPUs and their use{}",
            if e.settings.pod_labels {
                ", with the pods' labels"
            } else {
                ""
            }
        )];
        if e.settings.pprof {
            exposes.push("/debug/pprof, turned on with --enable-pprof".to_string());
        } else if let Some(h) = &advisory {
            exposes.push(format!(
                "/debug/pprof ({}{})",
                h.advisory.id,
                h.fix
                    .as_ref()
                    .map_or_else(String::new, |f| format!(", fixed in {f}"))
            ));
        }
        let profiling = e.settings.pprof || advisory.is_some();
        let severity = if profiling {
            Severity::High
        } else {
            Severity::Medium
        };
        let certainty = if e.settings.host_network {
            Certainty::Observed
        } else {
            Certainty::Possible
        };
        let name = e.object.as_ref().map_or_else(
            || "the DCGM exporter".to_string(),
            |o| format!("the DCGM exporter of {o}"),
        );
        let version = e
            .settings
            .version
            .as_ref()
            .map_or_else(String::new, |v| format!(" {v}"));
        let network = if e.settings.host_network {
            format!("on the host network, port {EXPORTER_PORT} of each node")
        } else {
            format!("on the pod network, port {EXPORTER_PORT}, unless a NetworkPolicy keeps tenants out (not read by gpu-trust)")
        };
        let mut draft = sink
            .draft(severity, certainty)
            .key(format!(
                "exporter/{}",
                e.object.as_ref().map_or_else(String::new, |o| o.to_string())
            ))
            .tenants(tenants.iter().copied())
            .nodes(nodes.iter().copied())
            .message(format!(
                "{name}{version} answers without authentication {network}, serving {} on {}, hosting {} {}: any tenant's pod can read them",
                text::list(&exposes),
                text::nodes(ctx, nodes.iter().copied()),
                if tenants.len() == 1 { "tenant" } else { "tenants" },
                text::tenants(ctx, tenants.iter().copied())
            ))
            .remediation(if profiling {
                format!("Upgrade {name} to 4.8.2 or later without --enable-pprof; serve it with --web-config-file (TLS and basic authentication) and allow only the metrics collector to reach port {EXPORTER_PORT} with a NetworkPolicy")
            } else {
                format!("Serve {name} with --web-config-file (TLS and basic authentication) and allow only the metrics collector to reach port {EXPORTER_PORT} with a NetworkPolicy")
            });
        if let Some(o) = e.object.clone() {
            draft = draft.object(o);
        }
        sink.push(draft);
    }
}
