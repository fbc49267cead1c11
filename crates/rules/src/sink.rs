//! Where rules put their findings. A rule fills a [`Draft`] in the terms of the model (tenant ids,
//! node ids, workload ids); the audit turns drafts into the wire format, names them, applies
//! acceptances and evidence, and sorts them.

use crate::context::Context;
use crate::registry::RuleMeta;
use gpu_trust_model::fleet::{NodeId, WorkloadId};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, ObjectRef, Severity, Trust};
use gpu_trust_policy::TenantId;
use std::collections::BTreeSet;

/// A finding before it is written out.
#[derive(Debug, Clone)]
pub struct Draft {
    pub rule: &'static RuleMeta,
    pub severity: Severity,
    pub certainty: Certainty,
    pub tenants: BTreeSet<TenantId>,
    pub nodes: BTreeSet<NodeId>,
    pub workloads: BTreeSet<WorkloadId>,
    /// Objects other than workloads (Nodes, the ClusterPolicy, bindings, policy entries).
    pub objects: BTreeSet<ObjectRef>,
    pub message: String,
    pub remediation: String,
    /// Device mechanisms the finding is about, so probe evidence of the same mechanism can be attached.
    pub mechanisms: BTreeSet<Mechanism>,
    /// For a finding of a pairwise rule: the pairs it covers.
    pub pairs: Option<DraftPairs>,
    /// The sites (shared things) it is about: indices into [`Context::sites`].
    pub sites: Vec<usize>,
    /// What the finding is about, stable across runs; when `None`, the audit takes the owning
    /// workload of its first workload, else its tenants, else its nodes.
    pub key: Option<String>,
    /// The severity of each open pair of tenants of the matrix it covers.
    pub matrix: Vec<((TenantId, TenantId), Severity)>,
}

/// The pairs a finding of a pairwise rule covers.
#[derive(Debug, Clone, Default)]
pub struct DraftPairs {
    /// How many (each pair once).
    pub count: usize,
    /// Pairs accepted by a policy acceptance naming exactly those two tenants, or by the
    /// annotations of both, with what accepts each.
    pub accepted: Vec<((TenantId, TenantId), crate::acceptance::Granted)>,
    /// Every pair is accepted by such acceptances.
    pub all_accepted: bool,
    /// When some pairs are accepted and others stay open: the first open pairs by tenant name (at
    /// most [`OPEN_PAIRS_LISTED`]).
    pub open: Vec<(TenantId, TenantId)>,
    /// Where its pairs meet: per site and certainty.
    pub shares: Vec<DraftShare>,
    /// Its pairs one by one, when there are at most 200 of them.
    pub listed: Option<Vec<DraftPair>>,
    /// Annotations of one tenant that accept none of its pairs, because the other tenant of each
    /// pair (or some of its own workloads) lacks one.
    pub one_sided: Vec<OneSided>,
    /// The pair an explanation asks about ([`crate::AuditOptions::pair`]), when the finding covers it.
    pub explained: Option<ExplainedPair>,
}

/// Where some pairs of a finding meet: one shared thing, at one certainty.
#[derive(Debug, Clone)]
pub struct DraftShare {
    pub site: usize,
    pub certainty: Certainty,
    pub reason: &'static str,
    /// The severity of its open pairs (of all its pairs when every one is accepted).
    pub severity: Severity,
    pub tenants: Vec<TenantId>,
    pub nodes: BTreeSet<NodeId>,
    pub pairs: usize,
    /// How many of them are accepted one by one.
    pub accepted: usize,
    pub trusts: Vec<Trust>,
    pub every_pair: bool,
}

/// One pair of a finding.
#[derive(Debug, Clone)]
pub struct DraftPair {
    pub tenants: (TenantId, TenantId),
    pub trust: Trust,
    pub certainty: Certainty,
    pub severity: Severity,
    pub sites: Vec<usize>,
    pub accepted: bool,
}

/// A tenant's annotations that accept nothing in a pairwise finding.
#[derive(Debug, Clone)]
pub struct OneSided {
    pub tenant: TenantId,
    /// The annotations.
    pub sources: Vec<crate::report::AcceptanceSource>,
    /// Tenants of its pairs whose workloads lack the annotation (the first [`OPEN_PAIRS_LISTED`]),
    /// and how many in all.
    pub missing: Vec<TenantId>,
    pub missing_count: usize,
    /// Its own workloads in the finding that lack the annotation (the first few), and how many.
    pub uncovered: Vec<WorkloadId>,
    pub uncovered_count: usize,
}

/// What a finding says about one pair: its own certainty, severity, words and acceptance.
#[derive(Debug, Clone)]
pub struct ExplainedPair {
    pub certainty: Certainty,
    pub reason: &'static str,
    pub severity: Severity,
    pub sites: Vec<usize>,
    pub nodes: BTreeSet<NodeId>,
    pub message: String,
    pub remediation: String,
    pub accepted: Option<crate::acceptance::Granted>,
}

/// How many of a partly accepted finding's open pairs it names.
pub const OPEN_PAIRS_LISTED: usize = 20;

/// The findings of one audit, as rules push them.
pub struct Sink<'a> {
    rule: &'static RuleMeta,
    out: &'a mut Vec<Draft>,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(rule: &'static RuleMeta, out: &'a mut Vec<Draft>) -> Sink<'a> {
        Sink { rule, out }
    }

    /// A new draft of the running rule at `severity` as observed, adjusted for `certainty` (a
    /// `permitted` finding is one step lower).
    pub fn draft(&self, severity: Severity, certainty: Certainty) -> Draft {
        Draft {
            rule: self.rule,
            severity: certainty.adjust(severity),
            certainty,
            tenants: BTreeSet::new(),
            nodes: BTreeSet::new(),
            workloads: BTreeSet::new(),
            objects: BTreeSet::new(),
            message: String::new(),
            remediation: String::new(),
            mechanisms: BTreeSet::new(),
            pairs: None,
            sites: Vec::new(),
            key: None,
            matrix: Vec::new(),
        }
    }

    pub fn push(&mut self, draft: Draft) {
        self.out.push(draft);
    }

    pub fn rule(&self) -> &'static RuleMeta {
        self.rule
    }
}

impl Draft {
    pub fn tenants(mut self, t: impl IntoIterator<Item = TenantId>) -> Self {
        self.tenants.extend(t);
        self
    }

    pub fn nodes(mut self, n: impl IntoIterator<Item = NodeId>) -> Self {
        self.nodes.extend(n);
        self
    }

    pub fn workloads(mut self, w: impl IntoIterator<Item = WorkloadId>) -> Self {
        self.workloads.extend(w);
        self
    }

    pub fn object(mut self, o: ObjectRef) -> Self {
        self.objects.insert(o);
        self
    }

    pub fn mechanism(mut self, m: Mechanism) -> Self {
        self.mechanisms.insert(m);
        self
    }

    pub fn message(mut self, m: impl Into<String>) -> Self {
        self.message = m.into();
        self
    }

    pub fn remediation(mut self, r: impl Into<String>) -> Self {
        self.remediation = r.into();
        self
    }

    /// Adds the Node objects of the draft's nodes (for node-level findings).
    pub fn with_node_objects(mut self, ctx: &Context<'_>) -> Self {
        for n in &self.nodes {
            if let Some(node) = ctx.fleet.nodes.get(*n) {
                self.objects.insert(node.object.clone());
            }
        }
        self
    }
}

impl Draft {
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    pub fn mechanisms_from(mut self, m: impl IntoIterator<Item = Mechanism>) -> Self {
        self.mechanisms.extend(m);
        self
    }
}
