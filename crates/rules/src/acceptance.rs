//! Which acceptances accept a finding, and where each came from: the policy's `accept` entries
//! (narrowed by tenants, namespaces, workloads or nodes) and the `accept.gpu-trust.io/<RULE>`
//! annotations on workloads and Namespaces (docs/suppressions.md).
//!
//! An acceptance counts only when it gives a reason and its `until` has not passed. The rules:
//!
//! - A policy entry with `tenants` only (or nothing) accepts a finding whose tenants are exactly
//!   those (or any); one naming two tenants accepts that pair of a pairwise finding.
//! - A policy entry with `namespaces`, `workloads` or `nodes` accepts a finding only when everything
//!   the finding involves lies in each scope it gives: every workload (and Namespace) of the
//!   finding, of every shared thing it covers, in a listed namespace; every workload one of the
//!   listed objects (or owned by one); every node listed. It never splits a finding's pairs.
//! - Annotations accept a finding about workloads when every workload of it is covered: by an
//!   annotation on its own object, on the object that owns it (a pod's Deployment), or on its
//!   Namespace. A finding about a Namespace alone (GT206) is accepted by that Namespace's annotation.
//! - A rule whose risk falls on the neighbours (`RuleMeta::neighbour_risk`: GT202 a privileged pod,
//!   GT203 GPUs taken without a request) is accepted by the policy only: the tenants at risk are every
//!   tenant the node has or will have, and only the policy speaks for them all. Its annotations are
//!   reported (`unknown_rules`) and not applied.
//! - For a pairwise finding, annotations accept a pair only when both tenants accept: every workload
//!   of each tenant in the shared things of the finding is covered (a tenant with no workload there,
//!   as at the API server, accepts through annotations on all its namespaces). One tenant's
//!   annotation never waives the risk to the other.

pub use crate::granted::{annotation_source, policy_source, Granted};

use crate::context::Context;
use crate::owner::Owners;
use crate::sink::Draft;
use gpu_trust_model::fleet::{AnnotatedAcceptance, AnnotatedSubject, Workload, WorkloadId};
use gpu_trust_model::Code;
use gpu_trust_policy::{Acceptance, Date, TenantId};
use std::collections::BTreeSet;

/// Whether an annotated acceptance counts for `rule` today.
fn usable(a: &AnnotatedAcceptance, rule: &str, today: Date) -> bool {
    a.rule == rule && a.reason.is_some() && !a.is_expired(today)
}

/// Whether a policy entry counts today.
fn active(a: &Acceptance, rule: &str, today: Date) -> bool {
    a.rule == rule && a.has_reason() && !a.is_expired(today)
}

/// The annotations of the fleet that count for one rule today, with the owners of pods, to see
/// which workloads they cover.
pub struct Annotations<'c> {
    list: Vec<&'c AnnotatedAcceptance>,
    owners: &'c Owners,
}

impl<'c> Annotations<'c> {
    pub fn new(ctx: &Context<'c>, rule: &str) -> Annotations<'c> {
        let list: Vec<&AnnotatedAcceptance> = ctx
            .fleet
            .acceptances
            .iter()
            .filter(|a| usable(a, rule, ctx.today))
            .collect();
        Annotations {
            list,
            owners: ctx.owners,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The first annotation covering a workload: on its own object, on the object that owns it, or
    /// on its Namespace.
    pub fn covering(&self, w: &Workload) -> Option<&'c AnnotatedAcceptance> {
        let owner = self.owners.of(w);
        self.list
            .iter()
            .find(|a| {
                a.covers(w)
                    || (a.subject == AnnotatedSubject::Workload
                        && a.object.namespace.as_deref().is_some_and(|ns| {
                            owner == format!("{}/{ns}/{}", a.object.kind, a.object.name)
                        }))
            })
            .copied()
    }

    /// The annotation on a Namespace.
    pub fn on_namespace(&self, name: &str) -> Option<&'c AnnotatedAcceptance> {
        self.list
            .iter()
            .find(|a| a.subject == AnnotatedSubject::Namespace && a.object.name == name)
            .copied()
    }

    /// Annotations covering every one of `workloads` (and every Namespace of `namespaces`), when
    /// there is at least one and all are covered.
    pub fn cover_all(
        &self,
        ctx: &Context<'_>,
        workloads: impl IntoIterator<Item = WorkloadId>,
        namespaces: impl IntoIterator<Item = String>,
    ) -> Option<Vec<&'c AnnotatedAcceptance>> {
        if self.list.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        let mut any = false;
        for id in workloads {
            any = true;
            out.push(self.covering(ctx.workload(id)?)?);
        }
        for ns in namespaces {
            any = true;
            out.push(self.on_namespace(&ns)?);
        }
        any.then_some(out)
    }

    /// Whether a tenant accepts the finding's risk in `sites`: every workload of it there is
    /// covered; with none there, every namespace of the tenant carries the annotation.
    pub fn side(
        &self,
        ctx: &Context<'_>,
        tenant: TenantId,
        sites: &[usize],
    ) -> Option<Vec<&'c AnnotatedAcceptance>> {
        self.side_of(ctx, tenant, sites)
            .filter(|s| s.uncovered.is_empty())
            .map(|s| s.covering)
    }
}

/// One tenant's annotations in a pairwise finding: those that cover its workloads there (or its
/// Namespaces, when it has none there), and its workloads there that none covers.
#[derive(Debug, Clone)]
pub struct Side<'c> {
    pub covering: Vec<&'c AnnotatedAcceptance>,
    pub uncovered: Vec<WorkloadId>,
}

impl<'c> Annotations<'c> {
    /// A tenant's side of a pairwise finding in `sites`, when at least one annotation covers
    /// something of it there: it accepts when nothing is left uncovered ([`Annotations::side`]).
    pub fn side_of(
        &self,
        ctx: &Context<'_>,
        tenant: TenantId,
        sites: &[usize],
    ) -> Option<Side<'c>> {
        if self.list.is_empty() {
            return None;
        }
        let workloads: BTreeSet<WorkloadId> = sites
            .iter()
            .filter_map(|s| ctx.site(*s))
            .filter_map(|s| s.members.get(&tenant))
            .flat_map(|m| m.workloads.iter().copied())
            .collect();
        if workloads.is_empty() {
            // No workload there (the API server): its Namespaces, all of them, accept for it.
            let namespaces = ctx.tenancy.tenant(tenant).namespaces.clone();
            let covering = self.cover_all(ctx, Vec::new(), namespaces)?;
            return Some(Side {
                covering,
                uncovered: Vec::new(),
            });
        }
        let mut covering = Vec::new();
        let mut uncovered = Vec::new();
        for id in workloads {
            match ctx.workload(id).and_then(|w| self.covering(w)) {
                Some(a) => covering.push(a),
                None => uncovered.push(id),
            }
        }
        (!covering.is_empty()).then_some(Side {
            covering,
            uncovered,
        })
    }
}

/// What a finding involves, for scoped policy entries: its workloads (of every shared thing it
/// covers), the Namespaces it names, and its nodes.
pub struct Involved {
    pub workloads: BTreeSet<WorkloadId>,
    pub namespaces: BTreeSet<String>,
    pub nodes: BTreeSet<String>,
}

impl Involved {
    pub fn of(ctx: &Context<'_>, d: &Draft) -> Involved {
        let mut workloads = d.workloads.clone();
        let mut nodes: BTreeSet<String> = d
            .nodes
            .iter()
            .map(|n| ctx.node_name(*n).to_string())
            .collect();
        for s in d.sites.iter().filter_map(|s| ctx.site(*s)) {
            for m in s.members.values() {
                workloads.extend(m.workloads.iter().copied());
            }
            nodes.extend(s.nodes.iter().map(|n| ctx.node_name(*n).to_string()));
        }
        let namespaces = d
            .objects
            .iter()
            .filter(|o| o.kind == "Namespace")
            .map(|o| o.name.clone())
            .collect();
        Involved {
            workloads,
            namespaces,
            nodes,
        }
    }
}

/// Whether everything a finding involves lies in a scoped entry's scopes.
fn in_scope(ctx: &Context<'_>, owners: &Owners, a: &Acceptance, inv: &Involved) -> bool {
    let workloads: Vec<&Workload> = inv
        .workloads
        .iter()
        .filter_map(|w| ctx.workload(*w))
        .collect();
    if let Some(patterns) = &a.namespaces {
        let names: Vec<&str> = workloads
            .iter()
            .map(|w| w.namespace.as_str())
            .chain(inv.namespaces.iter().map(String::as_str))
            .collect();
        if names.is_empty() || !names.iter().all(|n| patterns.iter().any(|p| p.matches(n))) {
            return false;
        }
    }
    if let Some(refs) = &a.workloads {
        if workloads.is_empty() {
            return false;
        }
        let all = workloads.iter().all(|w| {
            let owner = owners.of(w);
            refs.iter().any(|r| {
                r.names(&w.object.kind, &w.namespace, &w.object.name)
                    || owner == format!("{}/{}/{}", r.kind, r.namespace, r.name)
            })
        });
        if !all {
            return false;
        }
    }
    if let Some(nodes) = &a.nodes {
        if inv.nodes.is_empty() || !inv.nodes.iter().all(|n| nodes.contains(n)) {
            return false;
        }
    }
    true
}

/// The policy entry that accepts a whole finding today: one with only tenants (exactly the
/// finding's, or any), or a scoped one whose scopes hold everything the finding involves.
pub fn policy_whole<'t>(
    ctx: &Context<'t>,
    d: &Draft,
    tenants: &BTreeSet<String>,
) -> Option<&'t Acceptance> {
    let rule = d.rule.code;
    let mut scoped = ctx
        .tenancy
        .acceptances()
        .iter()
        .filter(|a| active(a, rule, ctx.today) && a.matches_tenants(rule, tenants))
        .peekable();
    scoped.peek()?;
    let mut involved: Option<Involved> = None;
    scoped.find(|a| {
        if !a.is_scoped() {
            return true;
        }
        let inv = involved.get_or_insert_with(|| Involved::of(ctx, d));
        in_scope(ctx, ctx.owners, a, inv)
    })
}

/// The annotations that accept a whole finding that is not pairwise: every workload of it, and every
/// Namespace it names, covered.
pub fn annotations_whole(ctx: &Context<'_>, d: &Draft) -> Option<Granted> {
    // A rule whose risk falls on the neighbours: the tenant who annotates is not the one at risk.
    if d.pairs.is_some() || d.rule.neighbour_risk || ctx.fleet.acceptances.is_empty() {
        return None;
    }
    let annotations = Annotations::new(ctx, d.rule.code);
    if annotations.is_empty() {
        return None;
    }
    let namespaces = d
        .objects
        .iter()
        .filter(|o| o.kind == "Namespace")
        .map(|o| o.name.clone());
    let list = annotations.cover_all(ctx, d.workloads.iter().copied(), namespaces)?;
    Some(Granted::annotations(list))
}

/// Errors for acceptances annotated with a rule code that names no rule of the catalogue, at the
/// annotation: ingest checks the form of a code, the audit knows which codes exist. Warnings for
/// annotations of a rule whose risk falls on the neighbours, which only the policy accepts.
pub fn unknown_rules(fleet: &gpu_trust_model::fleet::Fleet) -> Vec<gpu_trust_model::Diagnostic> {
    fleet
        .acceptances
        .iter()
        .filter_map(|a| match crate::registry::rule(&a.rule) {
            None => Some(gpu_trust_model::Diagnostic::error(Code::UnknownRule,
                a.location.clone(),
                format!(
                    "{}: annotation `{}` accepts {}, which is not a rule of gpu-trust (`gpu-trust rules` lists them); it is not applied",
                    a.object, a.annotation, a.rule
                ),
            )),
            Some(r) if r.neighbour_risk => Some(gpu_trust_model::Diagnostic::warning(Code::NotAcceptedByAnnotation,
                a.location.clone(),
                format!(
                    "{}: annotation `{}` is not applied: the risk of {} falls on the other tenants of the GPU nodes, not on the tenant who annotates; accept it in the tenancy policy (`accept:` with `rule: {}` and `namespaces` or `workloads`)",
                    a.object, a.annotation, r.code, r.code
                ),
            )),
            Some(_) => None,
        })
        .collect()
}

/// Errors for `accept:` entries of the policy whose rule code names no rule of the catalogue, at the
/// entry: the policy reader checks the form of a code (`GT` and digits), the rule catalogue knows
/// which codes exist. Such an entry would accept nothing while its author believes the finding
/// accepted, so the policy is refused, as an annotation with an unknown code is.
pub fn unknown_policy_rules(policy: &gpu_trust_policy::Policy) -> Vec<gpu_trust_model::Diagnostic> {
    policy
        .acceptances()
        .iter()
        .filter(|a| crate::registry::rule(&a.rule).is_none())
        .map(|a| {
            gpu_trust_model::Diagnostic::error(
                Code::UnknownRule,
                a.location.clone(),
                format!(
                    "accept: {} is not a rule of gpu-trust (`gpu-trust rules` lists them)",
                    a.rule
                ),
            )
        })
        .collect()
}
