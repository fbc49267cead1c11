//! What a rule is to the audit, and where it puts its findings. A rule ([`RuleMeta`]: its code,
//! name, layer, how its severity is decided, what it answers for besides its detection, and its check)
//! runs its check over the [`Context`] and fills [`Draft`]s in the terms of the model (tenant ids,
//! node ids, workload ids) through a [`Sink`]; the audit turns drafts into the wire format, names them,
//! applies acceptances and evidence, and sorts them. A rule, its check's sink and its drafts name each
//! other, so they are declared together here; `registry.rs` lists the rules and reads their
//! documentation.

use crate::context::Context;
use gpu_trust_model::fleet::{NodeId, WorkloadId};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, Layer, ObjectRef, Severity, Trust};
use gpu_trust_policy::TenantId;
use std::collections::BTreeSet;
use std::fmt;

/// A rule: its metadata, its documentation, and the check that runs it.
#[derive(Clone, Copy)]
pub struct RuleMeta {
    /// Stable code, e.g. `GT101`.
    pub code: &'static str,
    /// Kebab-case name, e.g. `untrusted-share-time-sliced-gpu`.
    pub name: &'static str,
    pub layer: Layer,
    pub severity: SeverityRule,
    /// One line: what the rule detects.
    pub summary: &'static str,
    /// The doc comment as written (every line keeps the space after `///`).
    pub raw_doc: &'static str,
    /// Whether the rule's risk falls on the tenant's neighbours rather than on the tenant whose
    /// workload it names (a privileged pod sees every GPU of its node): then a tenant's own annotation
    /// cannot accept a finding, only the policy can (`acceptance.rs`, docs/suppressions.md).
    pub neighbour_risk: bool,
    /// What it answers for besides its own detection ([`Reports`]).
    pub reports: &'static [Reports],
    /// The module the rule is declared in (`gpu_trust_rules::rules::device::gt101_...`): the tests check
    /// that each rule's file is named after its code and name.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) module: &'static str,
    pub(crate) check: fn(&Context<'_>, &mut Sink<'_>),
}

impl fmt::Debug for RuleMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuleMeta")
            .field("code", &self.code)
            .field("name", &self.name)
            .field("layer", &self.layer)
            .field("severity", &self.severity)
            .finish_non_exhaustive()
    }
}

impl RuleMeta {
    /// The highest severity the rule reports (between tenants that do not trust each other).
    pub fn default_severity(&self) -> Severity {
        self.severity.highest()
    }
}

/// How a rule's severity is decided, as the catalogue states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeverityRule {
    /// One severity.
    Fixed(Severity),
    /// By the trust between the two tenants involved (`none→critical, limited→high`); tenants with
    /// full trust get no finding.
    ByTrust { none: Severity, limited: Severity },
    /// Higher when tenants with trust below `full` share the node concerned.
    ByNodeSharing {
        shared: Severity,
        otherwise: Severity,
    },
}

impl SeverityRule {
    /// The rule's highest severity: the one it has between tenants that do not trust each other.
    pub fn highest(self) -> Severity {
        match self {
            SeverityRule::Fixed(s) => s,
            SeverityRule::ByTrust { none, limited } => none.max(limited),
            SeverityRule::ByNodeSharing { shared, otherwise } => shared.max(otherwise),
        }
    }

    /// Every severity a finding of the rule can have, most severe first: each of its severities, and
    /// each one step lower (a `permitted` finding).
    pub fn possible(self) -> Vec<Severity> {
        let base = match self {
            SeverityRule::Fixed(s) => vec![s],
            SeverityRule::ByTrust { none, limited } => vec![none, limited],
            SeverityRule::ByNodeSharing { shared, otherwise } => vec![shared, otherwise],
        };
        let mut all: Vec<Severity> = base.iter().flat_map(|s| [*s, s.lowered()]).collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        all.dedup();
        all
    }

    /// The severity between two tenants of `trust` (`None` when full trust makes it no finding).
    pub fn for_trust(self, trust: Trust) -> Option<Severity> {
        match (self, trust) {
            (SeverityRule::ByTrust { none, .. }, Trust::None) => Some(none),
            (SeverityRule::ByTrust { limited, .. }, Trust::Limited) => Some(limited),
            (SeverityRule::ByTrust { .. }, Trust::Full) => None,
            (rule, _) => Some(rule.highest()),
        }
    }
}

impl fmt::Display for SeverityRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeverityRule::Fixed(s) => write!(f, "{s}"),
            SeverityRule::ByTrust { none, limited } => write!(f, "none→{none}, limited→{limited}"),
            SeverityRule::ByNodeSharing { shared, otherwise } => write!(
                f,
                "{shared} if tenants with trust below full share the node, else {otherwise}"
            ),
        }
    }
}

/// What a rule answers for besides its own detection, declared in its `declare_rule!`
/// (`reports: [...]`): coverage and the policy check find the rule here (`registry::reporting`) instead of
/// naming it, so adding or renumbering a rule touches its file only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reports {
    /// Facts the input hides about GPU nodes in this layer: its findings report them, so coverage
    /// lists it in the `hidden-facts` gap of the layer (`reportedBy`).
    HiddenFacts(Layer),
    /// A device plugin or mig-parted config a node or the ClusterPolicy selects that the input lacks
    /// (coverage's `unresolved-config` gap).
    UnresolvedConfig,
    /// What tenants' subjects may do through RBAC: without a RoleBinding or ClusterRoleBinding in the
    /// input it judges nothing, and coverage's `no-rbac` gap names it.
    Rbac,
    /// A policy acceptance past its `until` date (the policy check names it).
    ExpiredAcceptance,
    /// A policy acceptance without a reason (the policy check names it).
    AcceptanceWithoutReason,
    /// More replicas per shared GPU without a memory limit than the policy's limit (the policy check
    /// names it beside the limit).
    ReplicasOverLimit,
    /// Tenant containers whose environment a Secret may set: the rule judges them where a Secret
    /// could give them GPUs, so coverage's Secret gap (`unresolved-environment`) does not block.
    SecretEnvironment,
}

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
    pub accepted: Vec<((TenantId, TenantId), crate::granted::Granted)>,
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
    pub sources: Vec<gpu_trust_model::report::AcceptanceSource>,
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
    pub accepted: Option<crate::granted::Granted>,
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
