use crate::advisories::{Component, Hit, RuntimeSetup};
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::NodeId;
use gpu_trust_model::isolation::LAYERS;
use gpu_trust_model::{Layer, Severity, Version};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// The NVIDIA Container Toolkit (ClusterPolicy `spec.toolkit.version`, or a version recorded for the
    /// node), the GPU Operator, the device plugin or the MIG manager on a GPU node that hosts tenants is a
    /// version affected by a known container-escape vulnerability, and the node's setup does not rule it
    /// out (CDI mode, crun as the low-level runtime).
    ///
    /// ## Why it matters
    ///
    /// The toolkit's hooks run with host privileges while a container starts. Its published
    /// vulnerabilities let a crafted image read or write the host file system or run code as root on the
    /// host (CVE-2024-0132, CVE-2025-23359, CVE-2025-23266 "NVIDIAScape"). An escape reaches every tenant
    /// on the node, whatever separates them on the GPU.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: ClusterPolicy
    /// spec:
    ///   toolkit:
    ///     version: v1.16.1-ubuntu20.04     # affected by CVE-2024-0132 (fixed in 1.16.2)
    /// ```
    ///
    /// ## Remediation
    ///
    /// Upgrade the toolkit (and the GPU Operator that deploys it) to at least the fixed version the
    /// finding names. Until then, apply the mitigation an advisory gives (for CVE-2025-23266,
    /// `disable-cuda-compat-lib-hook`) and run only trusted images on shared nodes.
    ///
    /// ## References
    ///
    /// - NVIDIA product-security bulletins 5582, 5585, 5599, 5616, 5659, 5850; CVE records.
    /// - NVIDIA cloud-native docs, GPU Operator security page and release notes.
    /// - gpu-trust advisory data (`crates/rules/data/advisories.yaml`), replaceable with `--advisories`.
    pub struct VulnerableContainerToolkit {
        code: "GT201",
        name: "vulnerable-container-toolkit",
        layer: Layer::Host,
        severity: SeverityRule::ByNodeSharing { shared: Severity::Critical, otherwise: Severity::High },
        summary: "the NVIDIA Container Toolkit or GPU Operator version on a node hosting tenants is affected by a known container-escape CVE",
    }
}

fn setup(ctx: &Context<'_>, node: NodeId) -> RuntimeSetup {
    let cp = ctx.fleet.cluster_policy.as_ref();
    let strategy_cdi = ctx.gpu(node).is_some_and(|g| {
        g.sharing
            .device_list_strategy
            .iter()
            .any(|s| s.starts_with("cdi"))
    });
    RuntimeSetup {
        cdi: cp
            .and_then(|c| c.cdi_enabled)
            .or(strategy_cdi.then_some(true)),
        crun: cp
            .and_then(|c| c.low_level_runtime.as_deref())
            .map(|r| r == "crun"),
    }
}

const POLICY_TOOLKIT: &str = "ClusterPolicy spec.toolkit.version";

/// The installed versions of each component on a node, with where the version was read.
fn installed(ctx: &Context<'_>, node: NodeId) -> Vec<(Component, Version, &'static str)> {
    let mut out = Vec::new();
    let cp = ctx.fleet.cluster_policy.as_ref();
    let gpu = ctx.gpu(node);
    let policy_toolkit = cp.and_then(|c| c.toolkit_version.clone());
    match (gpu.and_then(|g| g.toolkit_version.clone()), policy_toolkit) {
        (Some(v), Some(p)) if v.text == p.text => {
            out.push((Component::ContainerToolkit, v, POLICY_TOOLKIT));
        }
        (Some(v), _) => out.push((
            Component::ContainerToolkit,
            v,
            "the toolkit image on the node",
        )),
        (None, Some(p)) => out.push((Component::ContainerToolkit, p, POLICY_TOOLKIT)),
        (None, None) => {}
    }
    if let Some(v) = gpu.and_then(|g| g.operator_version.clone()) {
        out.push((Component::GpuOperator, v, "the GPU Operator image"));
    }
    if let Some(v) = cp.and_then(|c| c.device_plugin_version.clone()) {
        out.push((
            Component::DevicePlugin,
            v,
            "ClusterPolicy spec.devicePlugin.version",
        ));
    }
    out
}

fn describe(hit: &Hit<'_>) -> String {
    let mut s = format!("{} (CVSS {:.1}", hit.advisory.id, hit.advisory.cvss);
    if let Some(fix) = &hit.fix {
        s.push_str(&format!(", fixed in {fix}"));
    }
    for c in &hit.conditions {
        s.push_str(&format!("; {}", c.describe()));
    }
    s.push(')');
    s
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let shared = super::nodes_shared_below_full(ctx);
    // (component, version, source, shared) -> nodes
    type Key = (Component, String, &'static str, bool);
    let mut groups: BTreeMap<Key, (Version, RuntimeSetup, BTreeSet<NodeId>)> = BTreeMap::new();
    for (id, _) in ctx.fleet.gpu_nodes() {
        if ctx.colo().tenants_on(id).is_empty() {
            continue;
        }
        let s = setup(ctx, id);
        for (component, version, source) in installed(ctx, id) {
            if ctx.advisories.hits(component, &version, s).is_empty() {
                continue;
            }
            let key = (
                component,
                version.text.clone(),
                source,
                shared.contains(&id),
            );
            groups
                .entry(key)
                .or_insert_with(|| (version, s, BTreeSet::new()))
                .2
                .insert(id);
        }
    }
    let host = LAYERS.iter().find(|l| l.layer == Layer::Host);
    for ((component, _, source, below_full), (version, s, nodes)) in groups {
        let hits = ctx.advisories.hits(component, &version, s);
        let Some(certainty) = super::tenant_presence(ctx, &nodes) else {
            continue;
        };
        let severity = if below_full {
            Severity::Critical
        } else {
            Severity::High
        };
        let tenants: BTreeSet<_> = nodes
            .iter()
            .flat_map(|n| ctx.colo().tenants_on(*n).into_keys())
            .collect();
        let cves: Vec<String> = hits.iter().map(describe).collect();
        let target = hits.iter().filter_map(|h| h.fix.clone()).max();
        let mitigations: BTreeSet<String> = hits
            .iter()
            .filter_map(|h| {
                h.advisory
                    .mitigation
                    .as_ref()
                    .map(|m| format!("{}: {m}", h.advisory.id))
            })
            .collect();
        let sharing = if below_full {
            "tenants that do not fully trust each other share these nodes"
        } else {
            "the tenants on these nodes trust each other fully"
        };
        let mut draft = sink
            .draft(severity, certainty)
            .key(format!("{component}/{}/{source}", version.text))
            .tenants(tenants.iter().copied())
            .nodes(nodes.iter().copied())
            .with_node_objects(ctx)
            .message(format!(
                "{component} {version} ({source}) on {}, hosting {} {}, is affected by {}: a container escape reaches every tenant on the node, which shares {}; {sharing}",
                text::nodes(ctx, nodes.iter().copied()),
                if tenants.len() == 1 { "tenant" } else { "tenants" },
                text::tenants(ctx, tenants.iter().copied()),
                text::list(&cves),
                host.map_or("the host", |h| h.shared)
            ))
            .remediation({
                let mut r = match &target {
                    Some(t) => format!("Upgrade the {component} to {t} or later"),
                    None => format!("Upgrade the {component} to a fixed release"),
                };
                if component == Component::ContainerToolkit && source.starts_with("ClusterPolicy") {
                    r.push_str(" (ClusterPolicy `spec.toolkit.version`)");
                }
                if !mitigations.is_empty() {
                    r.push_str(&format!(
                        "; until then: {}",
                        mitigations.into_iter().collect::<Vec<_>>().join("; ")
                    ));
                }
                r
            });
        if source.starts_with("ClusterPolicy") {
            if let Some(o) = ctx
                .fleet
                .cluster_policy
                .as_ref()
                .and_then(|c| c.object.clone())
            {
                draft = draft.object(o);
            }
        }
        sink.push(draft);
    }
}
