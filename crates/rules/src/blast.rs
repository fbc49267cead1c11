//! The blast radius: for each tenant and incident, the other tenants it reaches and how sure that is.
//!
//! Read from the isolation model's [`Mechanism::reach`]: a co-location at some level (one MIG instance,
//! one GPU, one node, the cluster) carries an incident when the mechanism's reach for that incident is
//! at least that level. Host escapes reach the node and control-plane incidents the cluster under every
//! mechanism.

use crate::colocation::Share;
use crate::context::Context;
use crate::report::BlastRadiusEntry;
use gpu_trust_model::isolation::{Mechanism, Scope};
use gpu_trust_model::{Certainty, Incident};
use gpu_trust_policy::TenantId;
use std::collections::BTreeMap;

/// Whether a co-location at `level` under `mechanism` carries `incident`.
pub fn carries(mechanism: Mechanism, level: Scope, incident: Incident) -> bool {
    let reach = mechanism.reach(incident);
    reach != Scope::Nothing && level <= reach
}

pub(crate) fn blast_radius(ctx: &Context<'_>) -> Vec<BlastRadiusEntry> {
    let tenants: Vec<TenantId> = ctx.gpu_tenants().into_iter().collect();
    let virtual_clusters = ctx.virtual_cluster_tenants();
    // (tenant, incident) -> reached tenant -> certainty
    let mut reach: BTreeMap<(TenantId, Incident), BTreeMap<TenantId, Certainty>> = BTreeMap::new();
    let mut add = |from: TenantId, to: TenantId, incident: Incident, c: Certainty| {
        let e = reach
            .entry((from, incident))
            .or_default()
            .entry(to)
            .or_insert(c);
        *e = (*e).min(c);
    };
    for ((a, b), pair) in &ctx.colo.pairs {
        let mut records: Vec<(Mechanism, Scope, &Share)> = Vec::new();
        for (m, share) in &pair.device {
            records.push((
                *m,
                if m.is_mig() {
                    Scope::Instance
                } else {
                    Scope::Gpu
                },
                share,
            ));
        }
        records.push((Mechanism::MigInstance, Scope::Gpu, &pair.mig_gpu));
        records.push((Mechanism::Exclusive, Scope::Node, &pair.node));
        for (m, level, share) in records {
            if share.is_empty() {
                continue;
            }
            let c = share.certainty();
            for i in Incident::ALL {
                if carries(m, level, i) {
                    add(*a, *b, i, c);
                    add(*b, *a, i, c);
                }
            }
        }
    }
    for (i, a) in tenants.iter().enumerate() {
        for b in &tenants[i + 1..] {
            if virtual_clusters.contains(a) || virtual_clusters.contains(b) {
                continue;
            }
            for incident in Incident::ALL {
                if carries(Mechanism::Exclusive, Scope::Cluster, incident) {
                    add(*a, *b, incident, Certainty::Observed);
                    add(*b, *a, incident, Certainty::Observed);
                }
            }
        }
    }
    let mut out = Vec::new();
    for t in &tenants {
        for incident in Incident::ALL {
            let reached = reach.remove(&(*t, incident)).unwrap_or_default();
            let certainty: BTreeMap<String, Certainty> = reached
                .iter()
                .map(|(r, c)| (ctx.tenant_name(*r).to_string(), *c))
                .collect();
            out.push(BlastRadiusEntry {
                tenant: ctx.tenant_name(*t).to_string(),
                incident,
                reaches: certainty.keys().cloned().collect(),
                certainty,
            });
        }
    }
    out.sort_by(|x, y| (&x.tenant, x.incident).cmp(&(&y.tenant, y.incident)));
    out
}
