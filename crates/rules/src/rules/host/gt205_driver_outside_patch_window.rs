use crate::advisories::{Component, RuntimeSetup};
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::NodeId;
use gpu_trust_model::{Certainty, Layer, Severity, Version};
use std::collections::{BTreeMap, BTreeSet};

declare_rule! {
    /// ## What it detects
    ///
    /// A GPU node whose driver version (from the `nvidia.com/cuda.driver-version.*` labels) is older than
    /// the fix of a driver advisory that was published longer ago than the policy's patch window
    /// (`host.patchWindowDays`, default 30). Versions are compared per branch: a driver is fixed when it
    /// is at or above the fix of its own branch; a branch newer than every listed fix is fixed; an older
    /// branch without a fix of its own is not, and the finding says it has no fixed release and names
    /// the fix of the next branch to move to (bulletin 5861 fixes R580, R595, R610 and R615 only:
    /// R535 and R570 drivers are affected with no fixed release on their branch).
    /// A node the GPU Operator gives VMs
    /// (`nvidia.com/gpu.workload.config` `vm-passthrough` or `vm-vgpu`) runs no container driver and
    /// is not judged.
    ///
    /// ## Why it matters
    ///
    /// Every tenant on the node shares its kernel driver. Driver advisories include privilege escalation
    /// by an unprivileged user and leaks of uninitialised memory, so an unpatched driver is a way from
    /// one tenant's container to another's data.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// kind: Node
    /// metadata:
    ///   labels:
    ///     nvidia.com/cuda.driver-version.full: 550.54.15   # CVE-2024-0126 fixed in 550.127.05
    /// ```
    ///
    /// ## Remediation
    ///
    /// Upgrade the driver to the fixed version of its branch (ClusterPolicy `spec.driver.version` when
    /// the GPU Operator manages it), or move to a newer branch; drain the node first.
    ///
    /// ## References
    ///
    /// - NVIDIA GPU display driver security bulletins 5586, 5614, 5630, 5703, 5747 (January 2026),
    ///   5821 (May 2026, no R570 fix: R570 is affected and the upgrade is to R580), 5861 (September
    ///   2026: fixes in R580, R595, R610, R615; none for R535 or R570); roughly quarterly.
    /// - gpu-trust advisory data (`crates/rules/data/advisories.yaml`); `--today` fixes the date used.
    pub struct DriverOutsidePatchWindow {
        code: "GT205",
        name: "driver-outside-patch-window",
        layer: Layer::Host,
        severity: SeverityRule::Fixed(Severity::High),
        summary: "a node's GPU driver is older than the fix of an advisory published longer ago than the patch window",
    }
}

fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    let window = i64::from(ctx.tenancy.patch_window_days());
    let mut groups: BTreeMap<String, (Version, BTreeSet<NodeId>)> = BTreeMap::new();
    for (id, node) in ctx.fleet.gpu_nodes() {
        let Some(v) = node.gpu.as_ref().and_then(|g| g.driver_version.clone()) else {
            continue;
        };
        // A node the GPU Operator gives VMs runs no container driver (a label left from before
        // says nothing of what runs now).
        if !ctx.hosts_focus(id) || !super::runs_containers(ctx, id) {
            continue;
        }
        groups
            .entry(v.text.clone())
            .or_insert_with(|| (v, BTreeSet::new()))
            .1
            .insert(id);
    }
    for (_, (version, nodes)) in groups {
        let overdue: Vec<_> = ctx
            .advisories
            .hits(Component::Driver, &version, RuntimeSetup::default())
            .into_iter()
            .filter(|h| h.fix.is_some())
            .filter_map(|h| {
                let published = h.advisory.published?;
                let days = ctx.today.days_since(published);
                (days > window).then_some((h, days))
            })
            .collect();
        if overdue.is_empty() {
            continue;
        }
        let tenants: BTreeSet<_> = nodes
            .iter()
            .flat_map(|n| ctx.colo().tenants_on(*n).into_keys())
            .collect();
        // A fix of another branch means the bulletin gives this branch none.
        let off_branch = |f: &Version| f.major() != version.major();
        let items: Vec<String> = overdue
            .iter()
            .map(|(h, days)| {
                let fix = match &h.fix {
                    Some(f) if off_branch(f) => format!(
                        "no fixed release on this branch: move to a supported branch (R{}: {f} or later)",
                        f.major()
                    ),
                    Some(f) => format!("fixed in {f}"),
                    None => String::new(),
                };
                format!(
                    "{} ({}, CVSS {}, {}, published {}, {days} days ago; {fix})",
                    h.advisory.id,
                    h.advisory.summary,
                    h.advisory
                        .cvss
                        .map_or_else(|| "none".to_string(), |c| format!("{c:.1}")),
                    h.advisory.bulletin,
                    h.advisory.published_text.as_deref().unwrap_or("?"),
                )
            })
            .collect();
        let target = overdue.iter().filter_map(|(h, _)| h.fix.clone()).max();
        let no_fix_here: Vec<String> = overdue
            .iter()
            .filter(|(h, _)| h.fix.as_ref().is_some_and(off_branch))
            .map(|(h, _)| h.advisory.id.clone())
            .collect();
        let hosted = if tenants.is_empty() {
            String::new()
        } else {
            let word = if tenants.len() == 1 {
                "tenant"
            } else {
                "tenants"
            };
            format!(
                ", hosting {word} {},",
                text::tenants(ctx, tenants.iter().copied())
            )
        };
        let draft = sink
            .draft(Severity::High, Certainty::Observed)
            .key(format!("driver/{}", version.text))
            .tenants(tenants.iter().copied())
            .nodes(nodes.iter().copied())
            .with_node_objects(ctx)
            .message(format!(
                "GPU driver {version} on {}{hosted} is older than the fix of {}, beyond the patch window of {window} days",
                text::nodes(ctx, nodes.iter().copied()),
                text::list(&items)
            ))
            .remediation(format!(
                "{}Upgrade the driver on {} to {} or later of branch R{} (ClusterPolicy `spec.driver.version` when the GPU Operator manages it), draining each node first",
                if no_fix_here.is_empty() {
                    String::new()
                } else {
                    format!(
                        "Branch R{} has no fixed release of {}: move to a supported branch. ",
                        version.major(),
                        text::list(&no_fix_here)
                    )
                },
                text::nodes(ctx, nodes.iter().copied()),
                target.as_ref().map_or_else(|| "the fixed version".to_string(), |t| t.to_string()),
                target.as_ref().map_or(version.major(), Version::major)
            ));
        sink.push(draft);
    }
}
