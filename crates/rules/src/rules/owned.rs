//! The findings of the rules about one workload: one per owning workload (a Deployment with its
//! pods, a PyTorchJob with its templates and pods), naming the owner once with how many pods it
//! covers, never one per pod beside one for the owner.
//!
//! A rule judges each workload on its own ([`per_owner`]'s `judge`); the verdicts of one owner are
//! then put together. Only the surest of them speak: those of scheduled workloads (pods) when any
//! has one, at the strongest certainty, so that a finding never says that an owner runs on a node
//! where only its template may go. The owner's template still gives the finding when none of its
//! pods has one (it may be placed where no pod is yet).
//!
//! The rules about one workload's seat (GT106, GT111, GT301, GT302) judge by the model's rows about
//! one workload (`isolation::SEATS`), which the planner places by: [`traits`] is what a workload is,
//! [`seat`] what it gets on a node, [`refused`] its seats that a rule's row refuses it.

use crate::context::Context;
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::fleet::{NodeId, Workload, WorkloadClass, WorkloadId};
use gpu_trust_model::isolation::{Mechanism, Seat, SeatRow, Traits};
use gpu_trust_model::{Certainty, Severity};
use gpu_trust_policy::{Latency, TenantId};
use std::collections::BTreeSet;

/// What a rule finds about one workload.
#[derive(Debug, Clone)]
pub struct Verdict<V> {
    pub certainty: Certainty,
    pub nodes: BTreeSet<NodeId>,
    pub mechanisms: BTreeSet<Mechanism>,
    /// What the rule needs to word it.
    pub detail: V,
}

/// The verdicts of one owning workload that speak, put together.
pub struct Owned<'v, V> {
    pub tenant: TenantId,
    /// The owner and how many of its pods: `Deployment cust-acme/web (3 pods)`.
    pub subject: String,
    /// The owner alone, for remediations: `Deployment cust-acme/web`.
    pub owner: String,
    pub certainty: Certainty,
    /// The nodes of the verdicts.
    pub nodes: BTreeSet<NodeId>,
    pub mechanisms: BTreeSet<Mechanism>,
    /// The workloads of the verdicts.
    pub workloads: Vec<WorkloadId>,
    pub details: Vec<&'v V>,
    /// The namespace of the owner.
    pub namespace: String,
}

impl<V> Owned<'_, V> {
    /// Every distinct item the details give, in order.
    pub fn all<T: Ord + Clone>(&self, of: impl Fn(&V) -> Vec<T>) -> Vec<T> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for d in &self.details {
            for x in of(d) {
                if seen.insert(x.clone()) {
                    out.push(x);
                }
            }
        }
        out
    }
}

/// What a finding about one owner says.
pub struct Words {
    pub message: String,
    pub remediation: String,
}

/// Judges every tenant workload with `judge` and pushes one finding per owning workload with a
/// verdict, at `severity` as observed (adjusted for the certainty), worded by `words`.
pub fn per_owner<V>(
    ctx: &Context<'_>,
    sink: &mut Sink<'_>,
    severity: Severity,
    judge: impl Fn(WorkloadId, TenantId, &Workload) -> Option<Verdict<V>>,
    words: impl Fn(&Owned<'_, V>) -> Words,
) {
    let mut verdicts: Vec<(WorkloadId, TenantId, Verdict<V>)> = Vec::new();
    for (wid, tenant, w) in ctx.focused_workloads() {
        if let Some(v) = judge(wid, tenant, w) {
            verdicts.push((wid, tenant, v));
        }
    }
    if verdicts.is_empty() {
        return;
    }
    let index: std::collections::BTreeMap<WorkloadId, usize> = verdicts
        .iter()
        .enumerate()
        .map(|(i, (w, _, _))| (*w, i))
        .collect();
    for unit in text::units(ctx, index.keys().copied()) {
        let of_unit: Vec<&(WorkloadId, TenantId, Verdict<V>)> = unit
            .workloads
            .iter()
            .filter_map(|w| index.get(w).map(|i| &verdicts[*i]))
            .collect();
        // The surest speak: scheduled workloads first, then the strongest certainty.
        let rank = |(w, _, v): &&(WorkloadId, TenantId, Verdict<V>)| {
            let (reach, nodes) = ctx.colo().reach_of(*w);
            (
                reach != Certainty::Observed || nodes.is_empty(),
                v.certainty,
            )
        };
        let Some(best) = of_unit.iter().map(rank).min() else {
            continue;
        };
        let kept: Vec<&(WorkloadId, TenantId, Verdict<V>)> = of_unit
            .iter()
            .copied()
            .filter(|x| rank(x) == best)
            .collect();
        let Some((_, tenant, _)) = kept.first() else {
            continue;
        };
        let workloads: Vec<WorkloadId> = kept.iter().map(|(w, _, _)| *w).collect();
        let owned = Owned {
            tenant: *tenant,
            subject: text::workloads(ctx, workloads.iter().copied()),
            owner: owner_of(ctx, &unit),
            certainty: best.1,
            nodes: kept
                .iter()
                .flat_map(|(_, _, v)| v.nodes.iter().copied())
                .collect(),
            mechanisms: kept
                .iter()
                .flat_map(|(_, _, v)| v.mechanisms.iter().copied())
                .collect(),
            details: kept.iter().map(|(_, _, v)| &v.detail).collect(),
            namespace: workloads
                .first()
                .and_then(|w| ctx.workload(*w))
                .map(|w| w.namespace.clone())
                .unwrap_or_default(),
            workloads,
        };
        let Words {
            message,
            remediation,
        } = words(&owned);
        let draft = sink
            .draft(severity, owned.certainty)
            .tenants([owned.tenant])
            .workloads(owned.workloads.iter().copied())
            .nodes(owned.nodes.iter().copied())
            .mechanisms_from(owned.mechanisms.iter().copied())
            .message(message)
            .remediation(remediation);
        sink.push(draft);
    }
}

/// The owner as a remediation names it: `Deployment cust-acme/web`, or a pod of its own by name.
fn owner_of(ctx: &Context<'_>, unit: &text::Unit) -> String {
    text::unit_name(
        ctx,
        &text::Unit {
            pods: 0,
            ..unit.clone()
        },
    )
}

/// What a workload of `tenant` is, for the model's rows about one workload.
pub fn traits(ctx: &Context<'_>, wid: WorkloadId, tenant: TenantId) -> Traits {
    Traits {
        training: ctx.class(wid) == WorkloadClass::Training,
        latency_critical: ctx.latency(wid) == Latency::Critical,
        confidential: ctx.tenancy.tenant(tenant).confidential,
    }
}

/// The seat a workload gets under `mechanism` on `node`: a MIG instance is partial unless the profile
/// it requests (or the single strategy's) is the whole GPU; CC by the node's mode.
pub fn seat(ctx: &Context<'_>, w: &Workload, mechanism: Mechanism, node: NodeId) -> Seat {
    let partial = mechanism.is_mig()
        && super::device::requested_profile(ctx, w, node)
            .is_none_or(|p| super::device::is_partial_profile(ctx, node, &p));
    Seat {
        mechanism,
        partial,
        cc: ctx.gpu(node).is_some_and(super::confidentiality::cc_on),
    }
}

/// The seats of a workload that the row of `rule` refuses it: the nodes and mechanisms, at the
/// certainty of its placement; the detail says whether every node it reaches refuses it. `None`
/// when the row does not cover the workload or refuses none of its seats.
pub fn refused(
    ctx: &Context<'_>,
    rule: &str,
    wid: WorkloadId,
    tenant: TenantId,
    w: &Workload,
) -> Option<Verdict<bool>> {
    let row = SeatRow::of_rule(rule)?;
    if !w.requests_gpu() || !(row.who)(traits(ctx, wid, tenant)) {
        return None;
    }
    let mut nodes = BTreeSet::new();
    let mut mechanisms = BTreeSet::new();
    let mut certainty = Certainty::Permitted;
    let mut every = true;
    for s in ctx.colo().seats(ctx.fleet, wid) {
        for &n in &s.nodes {
            if (row.refuses)(seat(ctx, w, s.mechanism, n)) {
                nodes.insert(n);
                mechanisms.insert(s.mechanism);
                certainty = certainty.min(s.certainty);
            } else {
                every = false;
            }
        }
    }
    (!nodes.is_empty()).then_some(Verdict {
        certainty,
        nodes,
        mechanisms,
        detail: every,
    })
}
