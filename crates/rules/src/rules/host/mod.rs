//! Host rules (GT2xx): the kernel, driver, toolkit and runtime every pod on a node shares.

pub mod gt201_vulnerable_container_toolkit;
pub mod gt202_privileged_tenant_pod_on_gpu_node;
pub mod gt203_visible_devices_without_request;
pub mod gt204_host_namespaces_on_gpu_node;
pub mod gt205_driver_outside_patch_window;
pub mod gt206_tenant_namespace_without_pod_security;
pub mod gt207_distrusting_share_node;
pub mod gt208_unknown_host_versions;

use super::common::{self, Relevant};
use crate::colocation::Level;
use crate::context::Context;
use gpu_trust_model::fleet::NodeId;
use gpu_trust_model::Certainty;
use std::collections::BTreeSet;

/// GPU nodes shared by two tenants whose trust is below `full` (at any certainty).
pub(crate) fn nodes_shared_below_full(ctx: &Context<'_>) -> BTreeSet<NodeId> {
    let mut out = BTreeSet::new();
    let relevant = Relevant {
        trusts: &|_| common::BELOW_FULL,
        involving: None,
    };
    for (i, site) in ctx.colo.sites.iter().enumerate() {
        if site.level != Level::Node || site.nodes.iter().all(|n| out.contains(n)) {
            continue;
        }
        if common::tally(ctx, &[i], &relevant).is_some() {
            out.extend(site.nodes.iter().copied());
        }
    }
    out
}

/// The strongest certainty with which any tenant is on any of `nodes`, `None` when no tenant is.
pub(crate) fn tenant_presence(ctx: &Context<'_>, nodes: &BTreeSet<NodeId>) -> Option<Certainty> {
    nodes
        .iter()
        .flat_map(|n| ctx.colo.tenants_on(*n).into_values())
        .min()
}
