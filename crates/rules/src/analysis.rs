//! The analysis of one audit, computed once: per workload its tenant and what the policy's
//! `workloads` entries say about it, the co-location analysis (with the API server as one more shared
//! thing), the tenants of the GPU fleet and the tenants in virtual clusters. The rules, the groups,
//! the blast radius, the matrix and the GPU layout view all read this one value; nothing computes any
//! of it a second time.

use crate::colocation::{Colocation, Level, Site};
use gpu_trust_model::fleet::{Fleet, Workload};
use gpu_trust_model::stack::{self, ComponentVersion};
use gpu_trust_policy::{Tenancy, TenantId, WorkloadOverrides};
use std::collections::{BTreeMap, BTreeSet};

/// What every part of one audit reads besides the fleet and the tenancy.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// `tenant_of[w]`: the tenant of workload `w`; `None` for platform namespaces.
    pub tenant_of: Vec<Option<TenantId>>,
    /// `overrides[w]`: what the policy's `workloads` entries say about workload `w`.
    pub overrides: Vec<WorkloadOverrides>,
    /// The shared things, the API server included.
    pub colo: Colocation,
    /// Tenants with a workload that runs or may run on a GPU node: the tenants of the GPU fleet.
    pub gpu_tenants: BTreeSet<TenantId>,
    /// Tenants whose workloads all run in a virtual cluster.
    pub virtual_clusters: BTreeSet<TenantId>,
    /// The tenants the blast radius covers: those of the GPU fleet and those that share the API
    /// server.
    pub blast_tenants: BTreeSet<TenantId>,
    /// Every version of a stack component the input shows ([`stack::versions`]): one pass over the
    /// workloads' images, which the host and control-plane rules read for every node.
    pub versions: Vec<ComponentVersion>,
}

impl Analysis {
    /// Analyses `fleet` under `tenancy` (once per audit: [`crate::audit`] is its one caller).
    pub(crate) fn compute(fleet: &Fleet, tenancy: &Tenancy) -> Analysis {
        let tenant_of: Vec<Option<TenantId>> = fleet
            .workloads
            .iter()
            .map(|w| tenancy.tenant_of(&w.namespace))
            .collect();
        let overrides = fleet
            .workloads
            .iter()
            .map(|w| tenancy.workload_overrides(&w.namespace, &w.labels))
            .collect();
        let mut colo = Colocation::compute(fleet, &tenant_of);
        let tenant_workloads = || {
            fleet
                .workloads
                .iter()
                .enumerate()
                .filter_map(|(i, w)| tenant_of.get(i).copied().flatten().map(|t| (i, t, w)))
        };
        let gpu_tenants: BTreeSet<TenantId> = tenant_workloads()
            .filter(|(w, _, _)| colo.reaches_gpu(*w))
            .map(|(_, t, _)| t)
            .collect();
        let mut all: BTreeMap<TenantId, bool> = BTreeMap::new();
        for (_, t, w) in tenant_workloads() {
            let e = all.entry(t).or_insert(true);
            *e &= in_virtual_cluster(w);
        }
        let virtual_clusters: BTreeSet<TenantId> = all
            .into_iter()
            .filter(|(_, v)| *v)
            .map(|(t, _)| t)
            .collect();
        // The API server is one more shared thing: every tenant with a namespace in the input, GPU
        // workloads or not, except those whose workloads all run in a virtual cluster.
        let api_server: BTreeSet<TenantId> = tenancy
            .ids()
            .filter(|t| !tenancy.tenant(*t).namespaces.is_empty())
            .chain(tenant_of.iter().flatten().copied())
            .filter(|t| !virtual_clusters.contains(t))
            .collect();
        colo.add_site(Site::control_plane(api_server));
        let mut blast_tenants = gpu_tenants.clone();
        for site in &colo.sites {
            if site.level == Level::ControlPlane {
                blast_tenants.extend(site.members.keys().copied());
            }
        }
        Analysis {
            tenant_of,
            overrides,
            colo,
            gpu_tenants,
            virtual_clusters,
            blast_tenants,
            versions: stack::versions(fleet),
        }
    }
}

/// Whether a workload is a virtual cluster: a pod its syncer put in the host namespace, or the
/// virtual cluster's control plane there.
fn in_virtual_cluster(w: &Workload) -> bool {
    w.virtual_cluster().is_some()
}
