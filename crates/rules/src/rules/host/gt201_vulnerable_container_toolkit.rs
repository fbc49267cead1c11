use super::setup;
use crate::advisories::{Component, Effect, Hit, RuntimeSetup};
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::NodeId;
use gpu_trust_model::stack;
use gpu_trust_model::{Layer, Severity, Version};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A component of the NVIDIA stack on a GPU node that hosts tenants is a version affected by a
    /// known vulnerability or isolation defect of the advisory data, and the node's setup does not
    /// rule it out (CDI mode, crun as the low-level runtime). The components: the NVIDIA Container
    /// Toolkit (the toolkit image on the node, or ClusterPolicy `spec.toolkit.version`), the GPU
    /// Operator, the device plugin, the MIG manager and the DRA driver, read from their images on
    /// pods, DaemonSets and Deployments, Helm's `helm.sh/chart` label, and the ClusterPolicy and
    /// GPUCluster specs. An advisory's GPU Operator row says which operator releases ship an
    /// affected component; where the node's version of every component the advisory names is read
    /// directly, those versions decide and the operator's row is not reported (a toolkit pinned to a
    /// fixed version is not vulnerable because the operator's default would be). Whether CDI injects the devices comes from the ClusterPolicy (`cdi.enabled`,
    /// `cdi.default`), else from the default of the operator or toolkit version (CDI by default from
    /// GPU Operator 25.10.0 and toolkit 1.18.0), else from a CDI device list strategy; whether the
    /// device plugin's own CDI code runs comes from its device list strategy (default `envvar`), so
    /// an advisory of its CDI strategies is not reported for a plugin that uses none. A condition
    /// the input does not show (the plugin's configuration could not be read) is named in the
    /// message as such. Advisories
    /// given with `--advisories` (the project's format or vendors' CSAF documents) are reported with
    /// their document's title and address. A node the GPU Operator gives VMs
    /// (`nvidia.com/gpu.workload.config` `vm-passthrough` or `vm-vgpu`) runs none of these
    /// components and is not judged.
    ///
    /// ## Why it matters
    ///
    /// The toolkit's hooks run with host privileges while a container starts. Its published
    /// vulnerabilities let a crafted image read or write the host file system or run code as root on the
    /// host (CVE-2024-0132, CVE-2025-23359, CVE-2025-23266 "NVIDIAScape"). An escape reaches every tenant
    /// on the node, whatever separates them on the GPU. Defects without a CVE do too: GPU Operator
    /// 26.3.0 to 26.3.2 injected every RDMA device of the node into GPU containers.
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
    /// Upgrade the component (and the GPU Operator that deploys it) to at least the fixed version the
    /// finding names. Until then, apply the mitigation an advisory gives (for CVE-2025-23266,
    /// `disable-cuda-compat-lib-hook`) and run only trusted images on shared nodes.
    ///
    /// ## References
    ///
    /// - NVIDIA product-security bulletins 5582, 5585, 5599, 5616, 5659, 5850; CVE records.
    /// - NVIDIA cloud-native docs, GPU Operator security page and release notes (26.3.3: the RDMA
    ///   devices); NVIDIA Container Toolkit 1.18.0 and GPU Operator 25.10.0 release notes (CDI by
    ///   default).
    /// - gpu-trust advisory data (`crates/rules/data/advisories.yaml`, `components.yaml`), to which
    ///   `--advisories` adds or which it replaces.
    pub struct VulnerableContainerToolkit {
        code: "GT201",
        name: "vulnerable-container-toolkit",
        layer: Layer::Host,
        severity: SeverityRule::ByNodeSharing { shared: Severity::Critical, otherwise: Severity::High },
        summary: "a component of the NVIDIA stack on a node hosting tenants (toolkit, GPU Operator, device plugin, MIG manager, DRA driver) has a known vulnerability or isolation defect",
    }
}

const POLICY_TOOLKIT: &str = "ClusterPolicy spec.toolkit.version";

/// The installed versions of each component on a node, with where the version was read.
fn installed(
    ctx: &Context<'_>,
    node: NodeId,
    seen: &[stack::ComponentVersion],
) -> Vec<(Component, Version, String)> {
    let mut out: Vec<(Component, Version, String)> = Vec::new();
    let cp = ctx.fleet.cluster_policy.as_ref();
    let gpu = ctx.gpu(node);
    let policy_toolkit = cp.and_then(|c| c.toolkit_version.clone());
    match (gpu.and_then(|g| g.toolkit_version.clone()), policy_toolkit) {
        (Some(v), Some(p)) if v.text == p.text => {
            out.push((Component::ContainerToolkit, v, POLICY_TOOLKIT.to_string()));
        }
        (Some(v), _) => out.push((
            Component::ContainerToolkit,
            v,
            "the toolkit image on the node".to_string(),
        )),
        (None, Some(p)) => out.push((Component::ContainerToolkit, p, POLICY_TOOLKIT.to_string())),
        (None, None) => {}
    }
    if let Some(v) = gpu.and_then(|g| g.operator_version.clone()) {
        out.push((
            Component::GpuOperator,
            v,
            "the GPU Operator image".to_string(),
        ));
    }
    for s in seen {
        if s.component.layer() != Layer::Host
            || !(s.nodes.is_empty() || s.nodes.contains(&node))
            || out
                .iter()
                .any(|(c, v, _)| *c == s.component && v.text == s.version.text)
        {
            continue;
        }
        // One version of a component is named once: the first source in order (images, then
        // labels and specs) stands for the others.
        if out
            .iter()
            .any(|(c, v, _)| *c == s.component && *v == s.version)
        {
            continue;
        }
        out.push((s.component, s.version.clone(), s.source.clone()));
    }
    out
}

fn describe(hit: &Hit<'_>) -> String {
    let a = hit.advisory;
    let mut parts: Vec<String> = Vec::new();
    match a.cvss {
        Some(c) => parts.push(format!("CVSS {c:.1}")),
        None => parts.push(a.summary.clone()),
    }
    if let Some(fix) = &hit.fix {
        parts.push(format!("fixed in {fix}"));
    }
    let mut s = format!("{} ({}", a.id, parts.join(", "));
    for c in &hit.conditions {
        s.push_str(&format!(
            "; {}, which the input does not show",
            c.describe()
        ));
    }
    match (&a.title, &a.url) {
        (Some(t), Some(u)) => s.push_str(&format!("; {t}, {u}")),
        (Some(t), None) => s.push_str(&format!("; {t}")),
        (None, Some(u)) => s.push_str(&format!("; {u}")),
        (None, None) => {}
    }
    s.push(')');
    s
}

/// The hits GT201 reports: GT210 judges the exporter's unauthenticated profiling with its setup.
/// Whether `hit` is an advisory's GPU Operator row on a node where the version of every other
/// component the advisory names is known (`on_node`): the operator row stands for the components
/// the operator deploys, and those are judged by their own versions.
fn read_directly(hit: &Hit<'_>, on_node: &[(Component, Version, String)]) -> bool {
    let mut others = hit
        .advisory
        .affects
        .iter()
        .filter(|r| r.component != Component::GpuOperator)
        .peekable();
    hit.component == Component::GpuOperator
        && others.peek().is_some()
        && others.all(|r| on_node.iter().any(|(c, _, _)| *c == r.component))
}

fn reported<'a>(hits: Vec<Hit<'a>>) -> Vec<Hit<'a>> {
    hits.into_iter()
        .filter(|h| {
            !h.advisory
                .effects
                .contains(&Effect::UnauthenticatedProfiling)
        })
        .collect()
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let shared = super::nodes_shared_below_full(ctx);
    let seen = &ctx.analysis.versions;
    // (component, version, source, shared, the advisories it is reported for) -> nodes
    type Key = (Component, String, String, bool, Vec<String>);
    let mut groups: BTreeMap<Key, (Version, RuntimeSetup, BTreeSet<NodeId>)> = BTreeMap::new();
    for (id, _) in ctx.fleet.gpu_nodes() {
        // A node the GPU Operator gives VMs runs none of these components.
        if ctx.colo().tenants_on(id).is_empty()
            || !ctx.hosts_focus(id)
            || !super::runs_containers(ctx, id)
        {
            continue;
        }
        let s = setup(ctx, id);
        let on_node = installed(ctx, id, seen);
        for (component, version, source) in &on_node {
            let ids: Vec<String> = reported(ctx.advisories.hits(*component, version, s))
                .into_iter()
                .filter(|h| !read_directly(h, &on_node))
                .map(|h| h.advisory.id.clone())
                .collect();
            if ids.is_empty() {
                continue;
            }
            let key = (
                *component,
                version.text.clone(),
                source.clone(),
                shared.contains(&id),
                ids,
            );
            groups
                .entry(key)
                .or_insert_with(|| (version.clone(), s, BTreeSet::new()))
                .2
                .insert(id);
        }
    }
    for ((component, _, source, below_full, ids), (version, s, nodes)) in groups {
        let hits: Vec<Hit<'_>> = reported(ctx.advisories.hits(component, &version, s))
            .into_iter()
            .filter(|h| ids.contains(&h.advisory.id))
            .collect();
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
        // A focused audit judged only its tenants' pairs: what it says of trust is said of them.
        let focused: Vec<_> = tenants
            .iter()
            .copied()
            .filter(|t| ctx.focus.is_some_and(|f| f.contains(t)))
            .collect();
        let sharing = match (below_full, focused.is_empty()) {
            (true, _) => "tenants that do not fully trust each other share these nodes".to_string(),
            (false, true) => "the tenants on these nodes trust each other fully".to_string(),
            (false, false) => format!(
                "{} and every other tenant on these nodes trust each other fully",
                text::tenants(ctx, focused.iter().copied())
            ),
        };
        let from_policy = source.starts_with("ClusterPolicy");
        let mut draft = sink
            .draft(severity, certainty)
            // The same component on nodes whose tenants trust each other fully and on nodes they
            // do not is two findings of two severities: the key tells them apart.
            .key(format!(
                "{component}/{}/{source}{}",
                version.text,
                if below_full { "/shared" } else { "" }
            ))
            .tenants(tenants.iter().copied())
            .nodes(nodes.iter().copied())
            .with_node_objects(ctx)
            .message(format!(
                "{component} {version} ({source}) on {}, hosting {} {}, is affected by {}: a flaw in the node's NVIDIA stack reaches every tenant on the node, which shares {}; {sharing}",
                text::nodes(ctx, nodes.iter().copied()),
                if tenants.len() == 1 { "tenant" } else { "tenants" },
                text::tenants(ctx, tenants.iter().copied()),
                text::list(&cves),
                super::shared_components(ctx, nodes.iter().copied())
            ))
            .remediation({
                let mut r = match &target {
                    Some(t) => format!("Upgrade the {component} to {t} or later"),
                    None => format!("Upgrade the {component} to a fixed release"),
                };
                if component == Component::ContainerToolkit && from_policy {
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
        if from_policy {
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
