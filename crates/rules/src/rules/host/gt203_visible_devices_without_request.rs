use super::super::owned;
use crate::advisories::{Component, Effect};
use crate::context::Context;
use crate::registry::{declare_rule, Reports, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::stack;
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
    /// ClusterPolicy turns the variable off. A container that may take the variable from a Secret
    /// (`envFrom` without a prefix that rules it out, or `valueFrom.secretKeyRef`), which gpu-trust
    /// never reads, is reported as `possible` where it could get GPUs that way; the audit's coverage
    /// names the other Secret sources without making the audit partial. A runtime class whose
    /// RuntimeClass the input lacks cannot be judged: coverage reports it as a gap.
    ///
    /// What the runtime does not give is not reported: a container that sets
    /// `NVIDIA_VISIBLE_DEVICES` to `void` (or empty) in the pod spec gets no GPU, whatever its image
    /// sets or its runtime class, nor does `none` (below); a node the GPU Operator gives VMs runs no
    /// container toolkit; the toolkit's NRI plugin alone reads `nvidia.cdi.k8s.io/` annotations, so
    /// they give nothing where the ClusterPolicy leaves it off (`cdi.nriPluginEnabled`); and it
    /// injects a management CDI device (`management.nvidia.com/gpu`) only into pods of the namespaces
    /// it allows (the GPU Operator's and those `NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES` lists, GT209),
    /// so such an annotation elsewhere gives nothing.
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
    /// - NVIDIA Container Toolkit, "Specialized Configurations with Docker", GPU Enumeration: `none`
    ///   gives no GPU (driver capabilities only); `void`, empty or unset behaves as runc.
    /// - NVIDIA Container Toolkit `cmd/nvidia-ctk-installer/container/runtime/nri/plugin.go`: the
    ///   management devices of a pod outside the allowed namespaces are skipped.
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
        reports: [Reports::SecretEnvironment],
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
            let ways = o.all(|(w, _)| w.clone());
            // Whether a way is the variable (or the runtime class that reads it), not an annotation.
            let by_variable = o.all(|(_, v)| vec![*v]).contains(&true);
            let message = if o.nodes.is_empty() {
                format!(
                    "{} of tenant {} requests no GPU, but {}; on any GPU node it is scheduled onto (the input has none to name) {}, so it can get GPUs the scheduler gave to other tenants",
                    o.subject,
                    ctx.tenant_name(o.tenant),
                    text::list(&ways),
                    if by_variable {
                        "the toolkit accepts the variable from unprivileged containers by default"
                    } else {
                        "the runtime injects the CDI devices an annotation names"
                    }
                )
            } else {
                let why = match (by_variable, toolkit_accepts) {
                    (true, true) => {
                        "the toolkit accepts the variable from unprivileged containers (its default)"
                    }
                    (true, false) => "the device plugin passes devices by environment variable",
                    (false, _) => "the runtime injects the CDI devices an annotation names",
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

/// How a workload that requests no GPU may still get one (in words, and whether by the variable),
/// and where.
fn judge(
    ctx: &Context<'_>,
    wid: usize,
    w: &gpu_trust_model::fleet::Workload,
    toolkit_accepts: bool,
    manifests: bool,
) -> Option<owned::Verdict<(Vec<String>, bool)>> {
    if w.requests_gpu() {
        return None;
    }
    let mut ways = Vec::new();
    let mut by_variable = false;
    // Ways that hold only if a Secret gpu-trust does not read sets the variable.
    let mut by_secret = 0;
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
        if !c.visible_devices_secrets.is_empty() {
            ways.push(format!(
                "container {} may set NVIDIA_VISIBLE_DEVICES from Secret {}, which gpu-trust does not read",
                c.name,
                text::list(&c.visible_devices_secrets)
            ));
            by_secret += 1;
        }
    }
    // The variable a container sets in the pod spec replaces the image's (CUDA images set `all`):
    // the runtime class gives GPUs only to a container that does not set it to a value naming none.
    let image_decides = w.containers.iter().any(|c| {
        c.nvidia_visible_devices
            .as_deref()
            .is_none_or(gpu_trust_model::host::visible_devices_name_gpus)
    });
    if let Some(handler) = w
        .pod_security
        .runtime_handler
        .as_deref()
        .filter(|h| gpu_trust_model::host::is_nvidia_runtime_handler(h))
        .filter(|_| image_decides)
    {
        let name = w.pod_security.runtime_class_name.as_deref().unwrap_or("");
        ways.push(if name == handler {
            format!("it uses runtimeClassName {name}")
        } else {
            format!("it uses runtimeClassName {name} (NVIDIA runtime handler {handler})")
        });
        by_variable = true;
    }
    let injecting = injecting_annotations(ctx, w);
    let cdi = !injecting.is_empty();
    if cdi {
        ways.push(format!(
            "it carries CDI annotation {}",
            text::list(&injecting)
        ));
    }
    if ways.is_empty() {
        return None;
    }
    let by_variable = by_variable || by_secret > 0;
    // Only a Secret may set the variable: whether it does is not known.
    let surely = ways.len() > by_secret;
    let (certainty, nodes) = ctx.colo().reach_of(wid);
    let certainty = if surely {
        certainty
    } else {
        certainty.max(Certainty::Possible)
    };
    // A node the GPU Operator gives VMs runs no container toolkit: neither the variable nor a CDI
    // annotation gives anything there.
    let nodes: BTreeSet<usize> = nodes
        .into_iter()
        .filter(|n| super::runs_containers(ctx, *n))
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
            detail: (ways, by_variable),
        });
    }
    // Without GPU nodes in the input (manifests alone): the toolkit's default decides.
    (manifests && (cdi || (by_variable && toolkit_accepts))).then(|| owned::Verdict {
        certainty: Certainty::Possible,
        nodes: BTreeSet::new(),
        mechanisms: BTreeSet::new(),
        detail: (ways, by_variable),
    })
}

/// The CDI annotations of a workload that can give it devices. The NRI plugin alone reads its
/// domain's annotations: none where the ClusterPolicy leaves the plugin off, and no management
/// device for a pod outside the namespaces it allows (it then injects nothing of the annotation).
/// Without a ClusterPolicy neither is known, and every annotation counts.
fn injecting_annotations(ctx: &Context<'_>, w: &gpu_trust_model::fleet::Workload) -> Vec<String> {
    let cp = ctx.fleet.cluster_policy.as_ref();
    let allowed = cp.map(|c| c.nri_management_namespaces());
    w.pod_security
        .cdi_annotations
        .iter()
        .filter(|a| {
            let (key, devices) = a.split_once('=').unwrap_or((a.as_str(), ""));
            if !key.starts_with(stack::NRI_CDI_ANNOTATION_DOMAIN) {
                return true;
            }
            let plugin_on = cp.is_none_or(|c| c.nri_plugin_enabled == Some(true));
            let management = devices.contains(stack::MANAGEMENT_DEVICE_KIND);
            plugin_on
                && (!management
                    || allowed
                        .as_ref()
                        .is_none_or(|ns| ns.contains(&w.namespace.as_str())))
        })
        .cloned()
        .collect()
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
        // A node the GPU Operator gives VMs runs no toolkit, whatever version the ClusterPolicy names.
        if !super::runs_containers(ctx, id) {
            continue;
        }
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
