//! Host rules (GT2xx): the kernel, driver, toolkit and runtime every pod on a node shares.

pub mod gt201_vulnerable_container_toolkit;
pub mod gt202_privileged_tenant_pod_on_gpu_node;
pub mod gt203_visible_devices_without_request;
pub mod gt204_host_namespaces_on_gpu_node;
pub mod gt205_driver_outside_patch_window;
pub mod gt206_tenant_namespace_without_pod_security;
pub mod gt207_distrusting_share_node;
pub mod gt208_unknown_host_versions;

use crate::context::Context;
use gpu_trust_model::fleet::NodeId;
use gpu_trust_model::{Certainty, Trust};
use std::collections::BTreeSet;

/// GPU nodes shared by two tenants whose trust is below `full` (at any certainty).
pub(crate) fn nodes_shared_below_full(ctx: &Context<'_>) -> BTreeSet<NodeId> {
    let mut out = BTreeSet::new();
    for ((a, b), pair) in &ctx.colo.pairs {
        if ctx.trust(*a, *b) == Trust::Full {
            continue;
        }
        out.extend(pair.node.all_nodes().into_keys());
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
