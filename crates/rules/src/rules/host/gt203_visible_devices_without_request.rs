use super::super::owned;
use crate::advisories::{Component, Effect};
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_policy::TenantId;
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A tenant container that asks the NVIDIA runtime for GPUs without requesting a GPU resource: it
    /// sets `NVIDIA_VISIBLE_DEVICES` (to anything but `void` or `none`; in `env`, through `envFrom` of a
    /// ConfigMap with or without a prefix, or from a ConfigMap key; ephemeral containers included), uses
    /// a runtime class whose handler is the NVIDIA runtime (`nvidia`, `nvidia-cdi`, `nvidia-legacy`,
    /// `nvidia-experimental`, whatever the class is called; CUDA base images set
    /// `NVIDIA_VISIBLE_DEVICES=all` themselves), or carries an
    /// `nvidia.cdi.k8s.io/*` annotation, on GPU nodes where the toolkit honours the variable from
    /// unprivileged containers (its default) or the device plugin passes devices by environment variable.
    /// On manifests alone (no GPU node in the input) the toolkit's default decides, unless the input's
    /// ClusterPolicy turns the variable off. An environment taken from a Secret, or a runtime class
    /// whose RuntimeClass the input lacks, cannot be judged: the audit's coverage reports it as a gap.
    ///
    /// `NVIDIA_VISIBLE_DEVICES=none` normally gives no GPU, but a toolkit version the advisory data
    /// marks with the `visible-devices-none-gets-all` effect (before 1.18.2, in its CDI modes, which
    /// are its default from 1.18.0) gives such a container every GPU of the node: a tenant container
    /// that sets `none` on a node running such a toolkit is reported too, whether or not it requests
    /// GPUs.
    ///
    /// ## Why it matters
    ///
    /// The scheduler and device plugin never see such a container, so it is never counted, never
    /// isolated and never kept off a neighbour's GPU: with `NVIDIA_VISIBLE_DEVICES=all` it gets every GPU
    /// of the node, including the ones allocated to other tenants. With the NRI plugin, a CDI annotation
    /// injects any GPU by UUID from any namespace. The risk falls on the neighbours whose GPUs it takes,
    /// so a tenant's own annotation does not accept a finding of this rule: only the policy can.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// spec:
    ///   runtimeClassName: nvidia
    ///   containers:
    ///     - env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
    ///       # no nvidia.com/gpu in resources
    /// ```
    ///
    /// ## Remediation
    ///
    /// Request GPUs only through resources. Harden the toolkit: set
    /// `ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED=false` and
    /// `ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS=true` under ClusterPolicy `toolkit.env`, and
    /// `deviceListStrategy: volume-mounts` in the device plugin config; a mutating webhook can set
    /// `NVIDIA_VISIBLE_DEVICES=none` on tenant pods without a GPU request, on nodes whose toolkit is
    /// 1.18.2 or later (on older ones in CDI mode, `none` gives every GPU).
    ///
    /// ## References
    ///
    /// - NVIDIA Container Toolkit configuration: `accept-nvidia-visible-devices-envvar-when-unprivileged`
    ///   (default true), `accept-nvidia-visible-devices-as-volume-mounts` (default false).
    /// - NVIDIA k8s-device-plugin: `--device-list-strategy` (default envvar).
    /// - NVIDIA k8s-device-plugin issue 1605, "Silent full-GPU exposure when pods omit nvidia.com/gpu
    ///   request"; GPU Operator NRI plugin documentation.
    /// - The NVIDIA runtime handlers and their RuntimeClasses: `gpu_trust_model::host::NVIDIA_RUNTIME_HANDLERS`
    ///   (GPU Operator `assets/pre-requisites/02*_runtime_class*.yaml`).
    /// - NVIDIA Container Toolkit 1.18.2 release notes: "Fix a bug where all GPUs were made available
    ///   to a container when NVIDIA_VISIBLE_DEVICES=none was specified" (gpu-trust advisory data,
    ///   `NVIDIA-CTK-VISIBLE-DEVICES-NONE`).
    pub struct VisibleDevicesWithoutRequest {
        code: "GT203",
        name: "visible-devices-without-request",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a tenant container sets NVIDIA_VISIBLE_DEVICES, uses the nvidia runtime class or a CDI annotation without requesting a GPU",
        neighbour_risk: true,
    }
}

/// The toolkit setting that decides whether unprivileged containers may pick GPUs by variable, as
/// the GPU Operator names it under ClusterPolicy `toolkit.env` (default true).
const ACCEPT_ENVVAR: &str = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED";

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    none_gets_all(ctx, sink);
    let toolkit_accepts = ctx
        .fleet
        .cluster_policy
        .as_ref()
        .and_then(|c| c.toolkit_env.get(ACCEPT_ENVVAR))
        .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"));
    let manifests = ctx.fleet.gpu_nodes().next().is_none();
    owned::per_owner(
        ctx,
        sink,
        Severity::High,
        |wid, _, w| judge(ctx, wid, w, toolkit_accepts, manifests),
        |o| {
            let ways = o.all(|w| w.clone());
            let message = if o.nodes.is_empty() {
                format!(
                    "{} of tenant {} requests no GPU, but {}; on any GPU node it is scheduled onto (the input has none to name) the toolkit accepts the variable from unprivileged containers by default, so it can get GPUs the scheduler gave to other tenants",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    text::list(&ways)
                )
            } else {
                let why = if toolkit_accepts {
                    "the toolkit accepts the variable from unprivileged containers (its default)"
                } else {
                    "the device plugin passes devices by environment variable"
                };
                format!(
                    "{} of tenant {} requests no GPU, but {}; on {} {why}, so it can get GPUs the scheduler gave to other tenants",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    text::list(&ways),
                    text::nodes(ctx, o.nodes.iter().copied())
                )
            };
            owned::Words {
                message,
                remediation: remediation(&o.owner),
            }
        },
    );
}

/// How a workload that requests no GPU may still get one, and where.
fn judge(
    ctx: &Context<'_>,
    wid: usize,
    w: &gpu_trust_model::fleet::Workload,
    toolkit_accepts: bool,
    manifests: bool,
) -> Option<owned::Verdict<Vec<String>>> {
    if w.requests_gpu() {
        return None;
    }
    let mut ways = Vec::new();
    let mut by_variable = false;
    for c in &w.containers {
        if let Some(v) = &c.nvidia_visible_devices {
            if gpu_trust_model::host::visible_devices_name_gpus(v) {
                ways.push(format!(
                    "container {} sets NVIDIA_VISIBLE_DEVICES={v}",
                    c.name
                ));
                by_variable = true;
            }
        }
    }
    if let Some(handler) = w
        .pod_security
        .runtime_handler
        .as_deref()
        .filter(|h| gpu_trust_model::host::is_nvidia_runtime_handler(h))
    {
        let name = w.pod_security.runtime_class_name.as_deref().unwrap_or("");
        ways.push(if name == handler {
            format!("it uses runtimeClassName {name}")
        } else {
            format!("it uses runtimeClassName {name} (NVIDIA runtime handler {handler})")
        });
        by_variable = true;
    }
    let cdi = !w.pod_security.cdi_annotations.is_empty();
    if cdi {
        ways.push(format!(
            "it carries CDI annotation {}",
            text::list(&w.pod_security.cdi_annotations)
        ));
    }
    if ways.is_empty() {
        return None;
    }
    let (certainty, nodes) = ctx.colo().reach_of(wid);
    let nodes: BTreeSet<usize> = nodes
        .into_iter()
        .filter(|n| {
            cdi || (by_variable
                && (toolkit_accepts
                    || ctx.gpu(*n).is_some_and(|g| {
                        g.sharing.device_list_strategy.iter().any(|s| s == "envvar")
                    })))
        })
        .collect();
    if !nodes.is_empty() {
        return Some(owned::Verdict {
            certainty,
            nodes,
            mechanisms: BTreeSet::new(),
            detail: ways,
        });
    }
    // Without GPU nodes in the input (manifests alone): the toolkit's default decides.
    (manifests && (cdi || (by_variable && toolkit_accepts))).then(|| owned::Verdict {
        certainty: Certainty::Possible,
        nodes: BTreeSet::new(),
        mechanisms: BTreeSet::new(),
        detail: ways,
    })
}

fn remediation(owner: &str) -> String {
    format!(
        "Remove the variable, runtime class or annotation from {owner} (or request `nvidia.com/gpu`); set `{ACCEPT_ENVVAR}=false` and `ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS=true` under ClusterPolicy `spec.toolkit.env` and `deviceListStrategy: volume-mounts` in the device plugin config"
    )
}

/// Tenant containers that set `NVIDIA_VISIBLE_DEVICES=none` on nodes whose toolkit turns `none` into
/// every GPU.
fn none_gets_all(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    // The workloads with a container that sets the variable to `none`, and those containers.
    let asking: Vec<(usize, TenantId, Vec<String>)> = ctx
        .focused_workloads()
        .filter_map(|(wid, tenant, w)| {
            let containers: Vec<String> = w
                .containers
                .iter()
                .filter(|c| {
                    c.nvidia_visible_devices
                        .as_deref()
                        .is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
                })
                .map(|c| c.name.clone())
                .collect();
            (!containers.is_empty()).then_some((wid, tenant, containers))
        })
        .collect();
    if asking.is_empty() {
        return;
    }
    // Per GPU node, its toolkit and the defect it has (with the fix).
    let mut affected: BTreeMap<usize, (String, String)> = BTreeMap::new();
    for (id, _) in ctx.fleet.gpu_nodes() {
        let Some((version, source)) = super::toolkit_version(ctx, id) else {
            continue;
        };
        let setup = super::setup(ctx, id);
        if let Some(hit) = ctx
            .advisories
            .hits(Component::ContainerToolkit, &version, setup)
            .into_iter()
            .find(|h| {
                h.advisory
                    .effects
                    .contains(&Effect::VisibleDevicesNoneGetsAll)
            })
        {
            let fix = hit
                .fix
                .as_ref()
                .map_or_else(String::new, |f| format!(", fixed in {f}"));
            affected.insert(
                id,
                (
                    format!("{} {version} ({source})", Component::ContainerToolkit),
                    format!("{}{fix}", hit.advisory.id),
                ),
            );
        }
    }
    if affected.is_empty() {
        return;
    }
    for (wid, tenant, containers) in asking {
        let (certainty, reach) = ctx.colo().reach_of(wid);
        let nodes: BTreeSet<usize> = reach
            .into_iter()
            .filter(|n| affected.contains_key(n))
            .collect();
        let Some((toolkit, defect)) = nodes.iter().next().and_then(|n| affected.get(n)) else {
            continue;
        };
        let draft = sink
            .draft(Severity::High, certainty)
            .key(format!("none/{}", text::workload(ctx, wid)))
            .tenants([tenant])
            .workloads([wid])
            .nodes(nodes.iter().copied())
            .message(format!(
                "{} of tenant {} sets NVIDIA_VISIBLE_DEVICES=none in container {}, but on {} the {toolkit} gives such a container every GPU of the node ({defect}), the GPUs the scheduler gave to other tenants included",
                text::workload(ctx, wid),
                ctx.tenant_name(tenant),
                text::list(&containers),
                text::nodes(ctx, nodes.iter().copied()),
            ))
            .remediation(format!(
                "Upgrade the NVIDIA Container Toolkit on {} ({defect}); until then remove NVIDIA_VISIBLE_DEVICES=none from {} (a pod that requests no GPU and sets no NVIDIA variable gets none)",
                text::nodes(ctx, nodes.iter().copied()),
                text::workload(ctx, wid)
            ));
        sink.push(draft);
    }
}
