//! What every rule reads: the fleet, the tenancy, the co-location analysis, the date and the advisories,
//! plus what is known about each workload once the policy's `workloads` entries are applied.

use crate::advisories::Advisories;
use crate::analysis::Analysis;
use crate::colocation::{Colocation, Site};
use gpu_trust_model::fleet::{
    Fleet, GpuNode, NamespaceInfo, NodeId, Workload, WorkloadClass, WorkloadId,
};
use gpu_trust_model::Trust;
use gpu_trust_policy::{Date, Latency, Tenancy, TenantId, WorkloadOverrides};
use std::collections::BTreeSet;

/// The read-only world of one audit.
pub struct Context<'a> {
    pub fleet: &'a Fleet,
    pub tenancy: &'a Tenancy,
    /// The audit's one analysis: the shared things, each workload's tenant and policy overrides.
    pub analysis: &'a Analysis,
    pub today: Date,
    pub advisories: &'a Advisories,
    /// The tenants of the report's matrix (whose pairs findings spell out), sorted.
    pub matrix: &'a BTreeSet<TenantId>,
    /// Who owns each pod (for acceptances written on a pod's controller, and to name a pod by
    /// its owner).
    pub(crate) owners: &'a crate::owner::Owners,
    /// The pair an explanation asks about (`audit --pair`), lower id first or not.
    pub explain: Option<(TenantId, TenantId)>,
    /// The tenants a focused audit is for ([`crate::AuditOptions::focus`]): its findings say
    /// nothing of the pairs, places and contracts of other tenants alone. `None`: every tenant.
    pub focus: Option<&'a BTreeSet<TenantId>>,
}

impl<'a> Context<'a> {
    /// Whether the audit reports what concerns tenant `t` on its own (always, unless focused on
    /// other tenants).
    pub fn in_focus(&self, t: TenantId) -> bool {
        self.focus.is_none_or(|set| set.contains(&t))
    }

    /// Whether node `n` hosts a tenant the audit is focused on (every node, unless focused): a
    /// focused finding about nodes names only those.
    pub fn hosts_focus(&self, n: NodeId) -> bool {
        self.focus
            .is_none_or(|set| self.colo().tenants_on(n).keys().any(|t| set.contains(t)))
    }

    /// The shared things (the co-location analysis), the API server included.
    pub fn colo(&self) -> &'a Colocation {
        &self.analysis.colo
    }

    /// `tenant_of()[w]`: the tenant of workload `w`; `None` for platform namespaces.
    pub fn tenant_of(&self) -> &'a [Option<TenantId>] {
        &self.analysis.tenant_of
    }

    /// `overrides()[w]`: what the policy's `workloads` entries say about workload `w`.
    pub fn overrides(&self) -> &'a [WorkloadOverrides] {
        &self.analysis.overrides
    }

    pub fn workload(&self, id: WorkloadId) -> Option<&'a Workload> {
        self.fleet.workloads.get(id)
    }

    pub fn tenant(&self, id: WorkloadId) -> Option<TenantId> {
        self.tenant_of().get(id).copied().flatten()
    }

    /// A site (shared thing) of the co-location analysis, the API server included.
    pub fn site(&self, id: usize) -> Option<&'a Site> {
        self.colo().sites.get(id)
    }

    pub fn tenant_name(&self, id: TenantId) -> &'a str {
        self.tenancy.name(id)
    }

    pub fn trust(&self, a: TenantId, b: TenantId) -> Trust {
        self.tenancy.trust(a, b)
    }

    pub fn node_name(&self, id: NodeId) -> &'a str {
        self.fleet.nodes.get(id).map_or("?", |n| n.name.as_str())
    }

    /// A namespace of the fleet by name (the fleet keeps them sorted).
    pub fn namespace(&self, name: &str) -> Option<&'a NamespaceInfo> {
        let ns = &self.fleet.namespaces;
        match ns.binary_search_by(|n| n.name.as_str().cmp(name)) {
            Ok(i) => ns.get(i),
            Err(_) => ns.iter().find(|n| n.name == name),
        }
    }

    pub fn gpu(&self, id: NodeId) -> Option<&'a GpuNode> {
        self.fleet.nodes.get(id).and_then(|n| n.gpu.as_ref())
    }

    /// Tenant workloads, with their tenant.
    pub fn tenant_workloads(
        &self,
    ) -> impl Iterator<Item = (WorkloadId, TenantId, &'a Workload)> + '_ {
        self.fleet
            .workloads
            .iter()
            .enumerate()
            .filter_map(|(i, w)| self.tenant(i).map(|t| (i, t, w)))
    }

    /// The workloads of the tenants in focus ([`Context::in_focus`]), with their tenant: what a
    /// rule says of one tenant's own workloads, which a focused audit says of its tenants only.
    pub fn focused_workloads(
        &self,
    ) -> impl Iterator<Item = (WorkloadId, TenantId, &'a Workload)> + '_ {
        self.tenant_workloads()
            .filter(|(_, t, _)| self.in_focus(*t))
    }

    /// Tenants that have at least one workload in the input, sorted.
    pub fn tenants_with_workloads(&self) -> BTreeSet<TenantId> {
        self.tenant_of().iter().flatten().copied().collect()
    }

    /// Tenants with a workload that runs or may run on a GPU node: the tenants of the GPU fleet.
    pub fn gpu_tenants(&self) -> &'a BTreeSet<TenantId> {
        &self.analysis.gpu_tenants
    }

    /// What the workload does: the policy's `workloads` kind, else what ingest classified, else
    /// training for the training kinds.
    pub fn class(&self, id: WorkloadId) -> WorkloadClass {
        let Some(w) = self.workload(id) else {
            return WorkloadClass::Unknown;
        };
        let o = self.overrides().get(id).copied().unwrap_or_default();
        match o.class(w) {
            WorkloadClass::Unknown if o.kind.is_none() && w.kind.is_training_kind() => {
                WorkloadClass::Training
            }
            class => class,
        }
    }

    /// Peak device memory in MiB, from the policy's `workloads` entries or the objects.
    pub fn peak_memory_mib(&self, id: WorkloadId) -> Option<u64> {
        let w = self.workload(id)?;
        self.overrides()
            .get(id)
            .copied()
            .unwrap_or_default()
            .peak_memory_mib(w)
    }

    /// Latency sensitivity: the workload's entry, else its tenant's.
    pub fn latency(&self, id: WorkloadId) -> Latency {
        if let Some(l) = self.overrides().get(id).and_then(|o| o.latency) {
            return l;
        }
        self.tenant(id)
            .map(|t| self.tenancy.tenant(t).latency)
            .unwrap_or_default()
    }
}

impl<'a> Context<'a> {
    /// Tenants whose workloads all run in a virtual cluster (each has its own API server; nodes,
    /// device plugins and drivers stay shared): pods the vCluster syncer put in the host namespace,
    /// and the virtual cluster's own control plane beside them.
    pub fn virtual_cluster_tenants(&self) -> &'a BTreeSet<TenantId> {
        &self.analysis.virtual_clusters
    }

    /// The tenants the blast radius covers: those of the GPU fleet and those that share the API
    /// server.
    pub fn blast_tenants(&self) -> &'a BTreeSet<TenantId> {
        &self.analysis.blast_tenants
    }
}
