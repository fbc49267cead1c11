//! The pairs section: for every two tenants that share anything, their trust, what they share (layers
//! and device resources) and what separates them, read from the co-location analysis and the
//! isolation model.

use crate::colocation::PairColocation;
use crate::context::Context;
use crate::report::PairEntry;
use gpu_trust_model::isolation::{Enforcement, Mechanism, Property};
use gpu_trust_model::Certainty;
use gpu_trust_policy::TenantId;
use std::collections::BTreeSet;

/// What the pairs section calls each device property a pair shares or keeps separate.
pub fn property_name(p: Property) -> &'static str {
    match p {
        Property::MemoryCapacity => "memory-pool",
        Property::AddressSpace => "address-space",
        Property::FaultDomain => "fault-domain",
        Property::Compute => "compute",
        Property::Bandwidth => "memory-bandwidth",
        Property::SideChannels => "side-channels",
    }
}

/// Share names in the order the section lists them: device resource, properties, then layers.
const ORDER: [&str; 11] = [
    "gpu",
    "mig-instance",
    "mps-server",
    "memory-pool",
    "address-space",
    "fault-domain",
    "compute",
    "memory-bandwidth",
    "side-channels",
    "host",
    "control-plane",
];

fn ordered(set: BTreeSet<&'static str>) -> Vec<String> {
    let mut v: Vec<&str> = set.into_iter().collect();
    v.sort_by_key(|s| ORDER.iter().position(|o| o == s).unwrap_or(ORDER.len()));
    v.into_iter().map(str::to_string).collect()
}

/// The entry of one pair, `None` when they share nothing.
pub(crate) fn entry(
    ctx: &Context<'_>,
    a: TenantId,
    b: TenantId,
    colo: Option<&PairColocation>,
    same_api_server: bool,
) -> Option<PairEntry> {
    let mut shares: BTreeSet<&'static str> = BTreeSet::new();
    let mut separated: BTreeSet<&'static str> = BTreeSet::new();
    let mut certainty: Option<Certainty> = None;
    let mut device_mechanisms: Vec<Mechanism> = Vec::new();
    if let Some(p) = colo {
        for (m, share) in &p.device {
            if share.is_empty() {
                continue;
            }
            device_mechanisms.push(*m);
            shares.insert(if m.is_mig() { "mig-instance" } else { "gpu" });
            if m.is_mps() {
                shares.insert("mps-server");
            }
            for prop in Property::ALL {
                if m.property(prop).enforcement != Enforcement::Separate {
                    shares.insert(property_name(prop));
                }
            }
            certainty = min(certainty, share.certainty());
        }
        if !p.mig_gpu.is_empty() {
            shares.insert("gpu");
            for prop in Property::ALL {
                if Mechanism::MigInstance.property(prop).enforcement != Enforcement::Separate {
                    shares.insert(property_name(prop));
                }
            }
            certainty = min(certainty, p.mig_gpu.certainty());
        }
        if !p.node.is_empty() {
            shares.insert("host");
            certainty = min(certainty, p.node.certainty());
        }
        if !device_mechanisms.is_empty() {
            // What every device mechanism they share still keeps apart.
            for prop in Property::ALL {
                if device_mechanisms
                    .iter()
                    .all(|m| m.property(prop).enforcement == Enforcement::Separate)
                {
                    separated.insert(property_name(prop));
                }
            }
        } else if !p.mig_gpu.is_empty() {
            separated.insert("mig-instance");
        } else if !p.node.is_empty() {
            separated.insert("gpu");
        }
    }
    if !shares.contains("host") {
        separated.insert("node");
    }
    if same_api_server {
        shares.insert("control-plane");
    } else {
        separated.insert("virtual-cluster");
    }
    if shares.is_empty() {
        return None;
    }
    let (na, nb) = (
        ctx.tenant_name(a).to_string(),
        ctx.tenant_name(b).to_string(),
    );
    let tenants = if na <= nb { [na, nb] } else { [nb, na] };
    Some(PairEntry {
        tenants,
        trust: ctx.trust(a, b),
        shares: ordered(shares),
        separated_by: ordered_separated(separated),
        certainty,
    })
}

fn ordered_separated(set: BTreeSet<&'static str>) -> Vec<String> {
    const SEP: [&str; 9] = [
        "mig-instance",
        "gpu",
        "node",
        "virtual-cluster",
        "memory-pool",
        "address-space",
        "fault-domain",
        "compute",
        "memory-bandwidth",
    ];
    let mut v: Vec<&str> = set.into_iter().collect();
    v.sort_by_key(|s| SEP.iter().position(|o| o == s).unwrap_or(SEP.len()));
    v.into_iter().map(str::to_string).collect()
}

fn min(a: Option<Certainty>, b: Certainty) -> Option<Certainty> {
    Some(a.map_or(b, |a| a.min(b)))
}

/// Every pair of tenants of the cluster that shares anything, sorted by names.
pub(crate) fn pairs(ctx: &Context<'_>) -> Vec<PairEntry> {
    let tenants: Vec<TenantId> = ctx.gpu_tenants().into_iter().collect();
    let virtual_clusters = ctx.virtual_cluster_tenants();
    let mut out = Vec::new();
    for (i, a) in tenants.iter().enumerate() {
        for b in &tenants[i + 1..] {
            let same_api = !virtual_clusters.contains(a) && !virtual_clusters.contains(b);
            if let Some(e) = entry(ctx, *a, *b, ctx.colo.pair_of(*a, *b), same_api) {
                out.push(e);
            }
        }
    }
    out.sort_by(|x, y| x.tenants.cmp(&y.tenants));
    out
}
