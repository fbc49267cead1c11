//! Resolution: the policy applied to the namespaces of a cluster gives the tenants, who owns which
//! namespace, the trust between every two tenants, and whose RBAC subjects act for whom.

use crate::pattern::NamespacePattern;
use crate::policy::{Contract, Latency, Policy, TenantDecl, WorkloadRule};
use crate::{Acceptance, Date};
use gpu_trust_model::fleet::{NamespaceInfo, Subject};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, Trust};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A tenant of one [`Tenancy`]: its position in [`Tenancy::tenants`], which are sorted by name, so
/// ids order like names. An id is only meaningful for the tenancy that issued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TenantId(usize);

impl TenantId {
    /// The position in [`Tenancy::tenants`].
    pub fn index(self) -> usize {
        self.0
    }
}

/// Why a tenant exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TenantOrigin {
    /// Declared under `tenants` in the policy.
    Declared,
    /// Named by the tenant label on a namespace that no declared tenant claims.
    Label,
    /// A namespace nobody claims: a tenant of its own, with the default trust.
    Unassigned,
}

/// One tenant, resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tenant {
    pub name: String,
    /// The namespaces of the input that belong to it, sorted.
    pub namespaces: Vec<String>,
    /// The namespaces and globs the policy declares for it (empty unless declared).
    pub declared_namespaces: Vec<String>,
    pub origin: TenantOrigin,
    pub latency: Latency,
    pub confidential: bool,
    pub contract: Contract,
    /// RBAC subjects the policy says act for it (its namespaces' ServiceAccounts count anyway).
    pub subjects: Vec<Subject>,
    /// Where it was declared, or the Namespace object that produced it.
    #[serde(skip)]
    pub location: Location,
}

impl Tenant {
    /// Whether the tenant is a namespace that no tenant claims (the output lists it as unassigned).
    pub fn is_unassigned(&self) -> bool {
        self.origin == TenantOrigin::Unassigned
    }
}

/// What a namespace of the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NamespaceRole {
    /// Infrastructure: trusted, never a tenant.
    Platform,
    Tenant(TenantId),
}

/// Where the trust between two tenants comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrustSource {
    /// Both are the same tenant: trust is full.
    SameTenant,
    /// A `trust.relations` entry, at this location.
    Relation(Location),
    /// No relation: `trust.default`.
    Default,
}

/// Two different tenants and the trust between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPair {
    /// Sorted.
    pub tenants: [TenantId; 2],
    pub trust: Trust,
    pub source: TrustSource,
}

pub use gpu_trust_model::fleet::WorkloadOverrides;

/// Subjects that every tenant can act as, so a binding to them is a binding for every tenant.
///
/// Source: Kubernetes documentation, "Authenticating" (every authenticated request carries the group
/// `system:authenticated`; anonymous requests are user `system:anonymous` in group
/// `system:unauthenticated`) and "Using RBAC Authorization", "Referring to subjects" (group
/// `system:serviceaccounts` holds every service account of the cluster).
const EVERY_TENANT_SUBJECTS: &[(&str, &str)] = &[
    ("Group", "system:authenticated"),
    ("Group", "system:unauthenticated"),
    ("Group", "system:serviceaccounts"),
    ("User", "system:anonymous"),
];

/// Service account user names are `system:serviceaccount:<namespace>:<name>`, and the group of all
/// service accounts of one namespace is `system:serviceaccounts:<namespace>` (Kubernetes
/// documentation, "Using RBAC Authorization", "Referring to subjects").
const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";
const SERVICE_ACCOUNT_GROUP_PREFIX: &str = "system:serviceaccounts:";

/// A policy resolved against the namespaces of a cluster.
#[derive(Debug, Clone)]
pub struct Tenancy {
    tenants: Vec<Tenant>,
    by_name: BTreeMap<String, TenantId>,
    namespaces: BTreeMap<String, NamespaceRole>,
    /// Subjects the policy lists (kind, name, namespace for a ServiceAccount) -> their tenants.
    subjects: BTreeMap<(String, String, Option<String>), BTreeSet<TenantId>>,
    platform: Vec<NamespacePattern>,
    tenant_labels: Vec<String>,
    default_trust: Trust,
    relations: BTreeMap<(TenantId, TenantId), (Trust, Location)>,
    workloads: Vec<WorkloadRule>,
    patch_window_days: u32,
    max_replicas: u32,
    acceptances: Vec<Acceptance>,
    diagnostics: Vec<Diagnostic>,
}

/// How a namespace was placed, before tenant ids exist.
enum Placement<'p> {
    Platform,
    Declared(usize),
    Label(&'p str),
    Unassigned,
}

impl Policy {
    /// Applies the policy to the namespaces of a cluster.
    ///
    /// For each namespace, in this order: a tenant that names it explicitly; an explicit platform
    /// namespace; the tenant with the most specific glob that matches it; a platform glob; the tenant
    /// its tenant label names (a declared tenant of that name, else a new one); else a tenant of its
    /// own, named after it and marked unassigned (suffixed ` (namespace)` if that name is taken). A
    /// namespace with a tenant label is never made infrastructure by a platform name or glob: it
    /// goes to the label's tenant, with a warning.
    /// Declared tenants exist even when none of their namespaces is in the input.
    ///
    /// Two tenants whose globs match a namespace equally specifically are an error in
    /// [`Tenancy::diagnostics`] (the namespace goes to the first by name); acceptances naming a tenant
    /// that did not resolve are a warning there.
    pub fn resolve(&self, namespaces: &[NamespaceInfo]) -> Tenancy {
        let mut diagnostics = Vec::new();
        let mut input: BTreeMap<&str, &NamespaceInfo> = BTreeMap::new();
        for ns in namespaces {
            input.entry(ns.name.as_str()).or_insert(ns);
        }

        let index = PlaceIndex::new(self);
        let placements: Vec<(&str, &NamespaceInfo, Placement)> = input
            .iter()
            .map(|(name, info)| (*name, *info, self.place(&index, info, &mut diagnostics)))
            .collect();

        // Names taken by declared and label tenants, before unassigned namespaces pick theirs.
        let mut builders: BTreeMap<String, Tenant> = BTreeMap::new();
        for decl in &self.tenants {
            builders
                .entry(decl.name.clone())
                .or_insert_with(|| declared_tenant(decl));
        }
        for (name, info, placement) in &placements {
            let tenant = match placement {
                Placement::Platform | Placement::Unassigned => continue,
                Placement::Declared(i) => self.tenants[*i].name.as_str(),
                Placement::Label(value) => value,
            };
            let entry = builders
                .entry(tenant.to_string())
                .or_insert_with(|| Tenant {
                    name: tenant.to_string(),
                    namespaces: Vec::new(),
                    declared_namespaces: Vec::new(),
                    origin: TenantOrigin::Label,
                    latency: Latency::default(),
                    confidential: false,
                    contract: Contract::default(),
                    subjects: Vec::new(),
                    location: object_location(info),
                });
            entry.namespaces.push(name.to_string());
        }
        for (name, info, placement) in &placements {
            if !matches!(placement, Placement::Unassigned) {
                continue;
            }
            let mut candidate = name.to_string();
            let mut n = 1;
            while builders.contains_key(&candidate) {
                n += 1;
                candidate = if n == 2 {
                    format!("{name} (namespace)")
                } else {
                    format!("{name} (namespace {n})")
                };
            }
            builders.insert(
                candidate.clone(),
                Tenant {
                    name: candidate,
                    namespaces: vec![name.to_string()],
                    declared_namespaces: Vec::new(),
                    origin: TenantOrigin::Unassigned,
                    latency: Latency::default(),
                    confidential: false,
                    contract: Contract::default(),
                    subjects: Vec::new(),
                    location: object_location(info),
                },
            );
        }

        let tenants: Vec<Tenant> = builders.into_values().collect();
        let by_name: BTreeMap<String, TenantId> = tenants
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), TenantId(i)))
            .collect();
        let mut roles = BTreeMap::new();
        for t in &tenants {
            for ns in &t.namespaces {
                roles.insert(ns.clone(), NamespaceRole::Tenant(by_name[&t.name]));
            }
        }
        for (name, _, placement) in &placements {
            if matches!(placement, Placement::Platform) {
                roles.insert(name.to_string(), NamespaceRole::Platform);
            }
        }

        let mut subjects: BTreeMap<_, BTreeSet<TenantId>> = BTreeMap::new();
        for (i, t) in tenants.iter().enumerate() {
            for s in &t.subjects {
                subjects
                    .entry(subject_key(s))
                    .or_default()
                    .insert(TenantId(i));
            }
        }

        let mut relations = BTreeMap::new();
        for r in &self.relations {
            if let (Some(&a), Some(&b)) = (by_name.get(&r.tenants[0]), by_name.get(&r.tenants[1])) {
                relations.insert((a.min(b), a.max(b)), (r.level, r.location.clone()));
            }
        }

        for a in &self.acceptances {
            for t in a.tenants.iter().flatten() {
                if !by_name.contains_key(t) {
                    diagnostics.push(Diagnostic::warning(Code::UnknownTenant,
                        a.location.clone(),
                        format!(
                            "acceptance of {} names tenant `{t}`, which is neither declared nor found in the namespaces given: it matches no finding",
                            a.rule
                        ),
                    ));
                }
            }
        }
        if !input.is_empty() {
            diagnostics.extend(self.unmatched_tenants(&tenants));
            let mut names: BTreeMap<&str, Location> = BTreeMap::new();
            for (name, info) in &input {
                names.insert(name, object_location(info));
            }
            for p in self
                .tenants
                .iter()
                .flat_map(|t| &t.namespaces)
                .chain(&self.platform)
                .filter(|p| !p.is_glob())
            {
                names
                    .entry(p.pattern.as_str())
                    .or_insert_with(|| p.location.clone());
            }
            let list: Vec<(&str, &Location)> = names.iter().map(|(n, l)| (*n, l)).collect();
            diagnostics.extend(crate::names::confusable(&list));
        }
        diagnostics.sort();
        diagnostics.dedup();

        Tenancy {
            tenants,
            by_name,
            namespaces: roles,
            subjects,
            platform: self.platform.clone(),
            tenant_labels: self.tenant_labels.clone(),
            default_trust: self.default_trust,
            relations,
            workloads: self.workloads.clone(),
            patch_window_days: self.patch_window_days,
            max_replicas: self.max_replicas,
            acceptances: self.acceptances.clone(),
            diagnostics,
        }
    }

    /// One warning naming the declared tenants that got no namespace of the input: a typo in their
    /// namespaces leaves their workloads to other tenants or unassigned (a live audit of one namespace
    /// has them too).
    fn unmatched_tenants(&self, tenants: &[Tenant]) -> Option<Diagnostic> {
        let empty: Vec<&Tenant> = tenants
            .iter()
            .filter(|t| t.origin == TenantOrigin::Declared && t.namespaces.is_empty())
            .collect();
        let first = empty.first()?;
        let listed: Vec<String> = empty
            .iter()
            .take(5)
            .map(|t| format!("`{}` ({})", t.name, t.declared_namespaces.join(", ")))
            .collect();
        Some(Diagnostic::warning(Code::TenantWithoutNamespace,
            first.location.clone(),
            format!(
                "{} {}{} no namespace of the input: check the names for typos; whatever runs in the namespaces meant is judged as another tenant's or an unassigned namespace's",
                if empty.len() == 1 { "tenant" } else { "tenants" },
                listed.join(", "),
                if empty.len() > 5 {
                    format!(" and {} more match", empty.len() - 5)
                } else if empty.len() == 1 {
                    " matches".to_string()
                } else {
                    " match".to_string()
                }
            ),
        ))
    }

    fn place<'p>(
        &'p self,
        index: &PlaceIndex<'p>,
        ns: &'p NamespaceInfo,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Placement<'p> {
        let name = ns.name.as_str();
        if let Some(i) = index.explicit.get(name) {
            return Placement::Declared(*i);
        }
        // A tenant label is a tenant's claim: a platform name or glob never overrides it, since a
        // tenant that may create namespaces (Capsule's tenant owners, the Multi Tenant Operator's)
        // could otherwise take one out of the audit by its name (`x-gpu-operator`).
        let labelled = self.tenant_labels.iter().find_map(|label| {
            let value = ns.labels.get(label)?.trim();
            (!value.is_empty()).then_some((label.as_str(), value))
        });
        let platform = |pattern: &str, diagnostics: &mut Vec<Diagnostic>| match labelled {
            Some((label, value)) => {
                diagnostics.push(Diagnostic::warning(
                    Code::TenantClaimsPlatform,
                    object_location(ns),
                    format!(
                        "namespace `{name}` matches the platform namespace `{pattern}` but carries the tenant label `{label}: {value}`: it is judged as tenant `{value}`'s; if it is infrastructure, take the label off or name it under a tenant"
                    ),
                ));
                Placement::Label(value)
            }
            None => Placement::Platform,
        };
        if index.platform.contains(name) {
            return platform(name, diagnostics);
        }
        // The most specific matching glob of each tenant (the last of equal ones, in its list).
        let mut per_tenant: BTreeMap<usize, (usize, usize, &NamespacePattern)> = BTreeMap::new();
        for (t, at, g) in index.candidates(name) {
            if !g.matches(name) {
                continue;
            }
            let key = (g.specificity(), at);
            match per_tenant.get(&t) {
                Some((s, a, _)) if (*s, *a) >= key => {}
                _ => {
                    per_tenant.insert(t, (key.0, key.1, g));
                }
            }
        }
        let mut best: Option<(usize, usize, &NamespacePattern)> = None;
        let mut tied: Vec<(usize, &NamespacePattern)> = Vec::new();
        for (i, (s, _, g)) in per_tenant {
            match best {
                Some((_, bs, _)) if s < bs => {}
                Some((_, bs, _)) if s == bs => tied.push((i, g)),
                _ => {
                    best = Some((i, s, g));
                    tied.clear();
                }
            }
        }
        if let Some((i, _, g)) = best {
            if tied.is_empty() {
                return Placement::Declared(i);
            }
            let mut all: Vec<(usize, &NamespacePattern)> = vec![(i, g)];
            all.extend(tied);
            all.sort_by(|a, b| self.tenants[a.0].name.cmp(&self.tenants[b.0].name));
            let described: Vec<String> = all
                .iter()
                .map(|(t, p)| format!("`{}` of tenant `{}`", p.pattern, self.tenants[*t].name))
                .collect();
            let location = all
                .iter()
                .map(|(_, p)| p.location.clone())
                .max()
                .unwrap_or_default();
            diagnostics.push(Diagnostic::error(Code::NamespaceGlobTie,
                location,
                format!(
                    "namespace `{name}` matches equally specific globs {}: it is given to `{}`; name it explicitly under one tenant",
                    described.join(" and "),
                    self.tenants[all[0].0].name
                ),
            ));
            return Placement::Declared(all[0].0);
        }
        if let Some(p) = self.platform.iter().find(|p| p.matches(name)) {
            return platform(&p.pattern, diagnostics);
        }
        match labelled {
            Some((_, value)) => Placement::Label(value),
            None => Placement::Unassigned,
        }
    }
}

impl Policy {
    /// What the policy does to some cluster, found without one (`gpu-trust policy check`):
    ///
    /// - errors for two tenants' globs that are equally specific and share a namespace that
    ///   nothing else decides (`team-*` and `*-prod` both match `team-prod`): the audit refuses a
    ///   cluster holding such a namespace, so the policy is not valid as written;
    /// - warnings for platform namespaces a tenant takes: a tenant naming a default platform
    ///   namespace (`kube-system`), or a tenant glob over a platform glob, makes those namespaces
    ///   the tenant's, not infrastructure.
    pub fn static_diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let globs: Vec<(usize, &NamespacePattern)> = self
            .tenants
            .iter()
            .enumerate()
            .flat_map(|(i, t)| {
                t.namespaces
                    .iter()
                    .filter(|p| p.is_glob())
                    .map(move |p| (i, p))
            })
            .collect();
        let (witnesses, complete) = crate::pattern::tied_globs(&globs);
        if !complete {
            if let Some((_, first)) = globs.first() {
                out.push(Diagnostic::warning(Code::GlobSearchStopped,
                    first.location.clone(),
                    format!(
                        "the search for tenants' globs that tie over a namespace stopped after {} comparisons: this policy has too many globs that overlap to list them all; the audit still refuses a cluster holding a namespace two of them tie over",
                        crate::pattern::TIE_BUDGET
                    ),
                ));
            }
        }
        let index = PlaceIndex::new(self);
        for name in witnesses {
            let ns = NamespaceInfo {
                name: name.clone(),
                ..NamespaceInfo::default()
            };
            let mut ties = Vec::new();
            self.place(&index, &ns, &mut ties);
            for d in ties {
                out.push(Diagnostic::error(
                    d.code,
                    d.location,
                    format!(
                        "{}; the audit refuses a cluster that has such a namespace",
                        d.message
                            .replacen("namespace `", "a namespace such as `", 1)
                    ),
                ));
            }
        }
        for t in &self.tenants {
            for claim in &t.namespaces {
                for p in &self.platform {
                    let taken = if claim.is_glob() {
                        // An explicit platform name beats a tenant glob; a platform glob does not.
                        if !p.is_glob() {
                            continue;
                        }
                        claim.common_match(p)
                    } else if p.matches(&claim.pattern) {
                        Some(claim.pattern.clone())
                    } else {
                        None
                    };
                    let Some(ns) = taken else { continue };
                    let what = match (claim.is_glob(), p.is_glob()) {
                        (false, false) => "a platform namespace".to_string(),
                        (false, true) => format!("platform glob `{}`", p.pattern),
                        (true, _) => format!(
                            "platform glob `{}` (both match `{ns}`, for example)",
                            p.pattern
                        ),
                    };
                    out.push(Diagnostic::warning(Code::TenantClaimsPlatform,
                        claim.location.clone(),
                        format!(
                            "tenant `{}` claims `{}`, which is also {what}: a tenant's claim comes first, so the audit judges such namespaces as the tenant's, not as infrastructure",
                            t.name, claim.pattern
                        ),
                    ));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The policy's namespaces, indexed once per resolution so that placing a namespace costs lookups,
/// not a pass over every tenant: explicit names (the first tenant naming one wins), explicit platform
/// names, and tenants' globs by literal prefix (the text before the first `*`), by suffix for globs
/// that start with `*`, and the globs with neither.
struct PlaceIndex<'p> {
    explicit: std::collections::HashMap<&'p str, usize>,
    platform: BTreeSet<&'p str>,
    /// (tenant, position in its list, glob).
    by_prefix: std::collections::HashMap<&'p str, Vec<(usize, usize, &'p NamespacePattern)>>,
    by_suffix: std::collections::HashMap<&'p str, Vec<(usize, usize, &'p NamespacePattern)>>,
    open: Vec<(usize, usize, &'p NamespacePattern)>,
}

impl<'p> PlaceIndex<'p> {
    fn new(policy: &'p Policy) -> PlaceIndex<'p> {
        let mut index = PlaceIndex {
            explicit: std::collections::HashMap::new(),
            platform: policy
                .platform
                .iter()
                .filter(|p| !p.is_glob())
                .map(|p| p.pattern.as_str())
                .collect(),
            by_prefix: std::collections::HashMap::new(),
            by_suffix: std::collections::HashMap::new(),
            open: Vec::new(),
        };
        for (t, decl) in policy.tenants.iter().enumerate() {
            for (at, p) in decl.namespaces.iter().enumerate() {
                let text = p.pattern.as_str();
                if !p.is_glob() {
                    index.explicit.entry(text).or_insert(t);
                    continue;
                }
                let prefix = text.split('*').next().unwrap_or("");
                let suffix = text.rsplit('*').next().unwrap_or("");
                let entry = (t, at, p);
                if !prefix.is_empty() {
                    index.by_prefix.entry(prefix).or_default().push(entry);
                } else if !suffix.is_empty() {
                    index.by_suffix.entry(suffix).or_default().push(entry);
                } else {
                    index.open.push(entry);
                }
            }
        }
        index
    }

    /// The globs that may match `name`: those whose prefix or suffix it has, and the open ones.
    fn candidates<'s>(
        &'s self,
        name: &'s str,
    ) -> impl Iterator<Item = (usize, usize, &'p NamespacePattern)> + 's {
        let cuts = (0..=name.len()).filter(move |k| name.is_char_boundary(*k));
        let prefixed = cuts
            .clone()
            .filter_map(move |k| self.by_prefix.get(&name[..k]))
            .flatten();
        let suffixed = cuts
            .filter_map(move |k| self.by_suffix.get(&name[k..]))
            .flatten();
        prefixed.chain(suffixed).chain(self.open.iter()).copied()
    }
}

fn declared_tenant(decl: &TenantDecl) -> Tenant {
    Tenant {
        name: decl.name.clone(),
        namespaces: Vec::new(),
        declared_namespaces: decl.namespaces.iter().map(|p| p.pattern.clone()).collect(),
        origin: TenantOrigin::Declared,
        latency: decl.latency,
        confidential: decl.confidential,
        contract: decl.contract,
        subjects: decl.subjects.clone(),
        location: decl.location.clone(),
    }
}

fn object_location(ns: &NamespaceInfo) -> Location {
    ns.object
        .as_ref()
        .map(|o| o.location.clone())
        .unwrap_or_default()
}

impl Tenancy {
    /// All tenants, sorted by name (declared, label-derived and unassigned alike).
    pub fn tenants(&self) -> &[Tenant] {
        &self.tenants
    }

    /// The ids of all tenants, in name order.
    pub fn ids(&self) -> impl Iterator<Item = TenantId> + '_ {
        (0..self.tenants.len()).map(TenantId)
    }

    /// The tenant of an id this tenancy issued.
    ///
    /// # Panics
    /// On an id from another tenancy that is out of this one's range.
    pub fn tenant(&self, id: TenantId) -> &Tenant {
        &self.tenants[id.0]
    }

    /// The tenant's name (see [`tenant`](Self::tenant) for panics).
    pub fn name(&self, id: TenantId) -> &str {
        &self.tenant(id).name
    }

    pub fn tenant_by_name(&self, name: &str) -> Option<TenantId> {
        self.by_name.get(name).copied()
    }

    /// The tenant a namespace of the input belongs to. `None` for platform namespaces, and for
    /// namespaces that were not given to [`Policy::resolve`] (the fleet lists every namespace an object
    /// names, so that only happens when the caller forgets one; check [`is_platform`](Self::is_platform)
    /// before treating `None` as infrastructure).
    pub fn tenant_of(&self, namespace: &str) -> Option<TenantId> {
        match self.namespaces.get(namespace) {
            Some(NamespaceRole::Tenant(id)) => Some(*id),
            _ => None,
        }
    }

    /// What a namespace of the input is; `None` for a namespace not given to [`Policy::resolve`].
    pub fn role(&self, namespace: &str) -> Option<NamespaceRole> {
        self.namespaces.get(namespace).copied()
    }

    /// Whether a namespace is infrastructure: resolved so, or (for a namespace not in the input)
    /// named by a platform pattern.
    pub fn is_platform(&self, namespace: &str) -> bool {
        match self.namespaces.get(namespace) {
            Some(role) => *role == NamespaceRole::Platform,
            None => self.platform.iter().any(|p| p.matches(namespace)),
        }
    }

    /// The namespaces of the input with their roles, sorted by name.
    pub fn namespaces(&self) -> impl Iterator<Item = (&str, NamespaceRole)> {
        self.namespaces.iter().map(|(n, r)| (n.as_str(), *r))
    }

    /// The platform namespaces and globs of the policy.
    pub fn platform_patterns(&self) -> &[NamespacePattern] {
        &self.platform
    }

    /// The namespace labels that name tenants, in the order consulted.
    pub fn tenant_labels(&self) -> &[String] {
        &self.tenant_labels
    }

    /// Trust between different tenants that no relation covers.
    pub fn default_trust(&self) -> Trust {
        self.default_trust
    }

    /// Trust between two tenants: full within one tenant, the relation between them (symmetric), or
    /// the default.
    pub fn trust(&self, a: TenantId, b: TenantId) -> Trust {
        if a == b {
            return Trust::Full;
        }
        self.relations
            .get(&(a.min(b), a.max(b)))
            .map(|(t, _)| *t)
            .unwrap_or(self.default_trust)
    }

    /// Where [`trust`](Self::trust) between two tenants comes from.
    pub fn trust_source(&self, a: TenantId, b: TenantId) -> TrustSource {
        if a == b {
            return TrustSource::SameTenant;
        }
        match self.relations.get(&(a.min(b), a.max(b))) {
            Some((_, loc)) => TrustSource::Relation(loc.clone()),
            None => TrustSource::Default,
        }
    }

    /// The `trust.relations` entries, one per pair of different tenants (sorted ids), with their level
    /// and location; every other pair of different tenants has the [default](Self::default_trust).
    pub fn relations(&self) -> impl Iterator<Item = ([TenantId; 2], Trust, &Location)> + '_ {
        self.relations
            .iter()
            .map(|((a, b), (trust, location))| ([*a, *b], *trust, location))
    }

    /// Every pair of different tenants with its trust, in name order. Quadratic in the tenants: meant
    /// for reports on small policy files, not for audit loops (use [`trust`](Self::trust) and
    /// [`relations`](Self::relations) there).
    pub fn pairs(&self) -> Vec<TrustPair> {
        let mut out = Vec::new();
        for a in self.ids() {
            for b in self.ids().filter(|b| *b > a) {
                out.push(TrustPair {
                    tenants: [a, b],
                    trust: self.trust(a, b),
                    source: self.trust_source(a, b),
                });
            }
        }
        out
    }

    /// The tenants an RBAC subject acts for: a ServiceAccount (or its user name
    /// `system:serviceaccount:NS:NAME`) belongs to the tenant of its namespace, the group of one
    /// namespace's service accounts to that namespace's tenant, cluster-wide groups such as
    /// `system:authenticated` to every tenant, and any subject a tenant lists under `subjects` to that
    /// tenant. Sorted; empty for subjects of nobody (platform service accounts, admins).
    pub fn tenants_of_subject(&self, subject: &Subject) -> Vec<TenantId> {
        let kind = subject.kind.as_str();
        let name = subject.name.as_str();
        if EVERY_TENANT_SUBJECTS.contains(&(kind, name)) {
            return self.ids().collect();
        }
        let mut out = BTreeSet::new();
        let namespace = match kind {
            "ServiceAccount" => subject.namespace.as_deref(),
            "User" => name
                .strip_prefix(SERVICE_ACCOUNT_USER_PREFIX)
                .and_then(|rest| rest.split_once(':'))
                .map(|(ns, _)| ns),
            "Group" => name.strip_prefix(SERVICE_ACCOUNT_GROUP_PREFIX),
            _ => None,
        };
        if let Some(t) = namespace.and_then(|ns| self.tenant_of(ns)) {
            out.insert(t);
        }
        if let Some(listed) = self.subjects.get(&subject_key(subject)) {
            out.extend(listed.iter().copied());
        }
        out.into_iter().collect()
    }

    /// Whether `subject` acts for `tenant` (see [`tenants_of_subject`](Self::tenants_of_subject)).
    pub fn is_subject_of(&self, tenant: TenantId, subject: &Subject) -> bool {
        self.tenants_of_subject(subject).contains(&tenant)
    }

    /// The policy's `workloads` entries, in file order.
    pub fn workload_rules(&self) -> &[WorkloadRule] {
        &self.workloads
    }

    /// What the `workloads` entries say about a workload in `namespace` with `labels`.
    pub fn workload_overrides(
        &self,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> WorkloadOverrides {
        let mut o = WorkloadOverrides::default();
        for rule in self
            .workloads
            .iter()
            .filter(|r| r.matches(namespace, labels))
        {
            o.kind = o.kind.or(rule.kind);
            o.peak_memory_mib = o.peak_memory_mib.or(rule.peak_memory_mib);
            o.latency = o.latency.or(rule.latency);
        }
        o
    }

    /// `host.patchWindowDays`: days a published driver fix may stay unapplied (default 30).
    pub fn patch_window_days(&self) -> u32 {
        self.patch_window_days
    }

    /// `sharing.maxReplicas`: replicas per time-sliced or MPS GPU without a memory limit before GT110
    /// (default 4).
    pub fn max_replicas(&self) -> u32 {
        self.max_replicas
    }

    /// The acceptances, in file order.
    pub fn acceptances(&self) -> &[Acceptance] {
        &self.acceptances
    }

    /// The first acceptance that accepts a finding of `rule` involving `tenants` on `today` (matching
    /// and not expired).
    pub fn acceptance_for<I>(&self, rule: &str, tenants: I, today: Date) -> Option<&Acceptance>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let tenants: Vec<String> = tenants
            .into_iter()
            .map(|t| t.as_ref().to_string())
            .collect();
        self.acceptances
            .iter()
            .find(|a| a.suppresses(rule, &tenants, today))
    }

    /// Acceptances whose `until` has passed on `today` (each is a GT003 finding).
    pub fn expired_acceptances(&self, today: Date) -> impl Iterator<Item = &Acceptance> {
        self.acceptances.iter().filter(move |a| a.is_expired(today))
    }

    /// Problems found while resolving: equally specific globs of two tenants matching one namespace
    /// (errors: the policy is ambiguous for this cluster), acceptances naming no resolved tenant
    /// (warnings). Sorted.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

/// How a subject is looked up: kind and name, and for a ServiceAccount its namespace (a User or
/// Group has none, whatever a binding writes there).
fn subject_key(s: &Subject) -> (String, String, Option<String>) {
    let namespace = if s.kind == "ServiceAccount" {
        s.namespace.clone()
    } else {
        None
    };
    (s.kind.clone(), s.name.clone(), namespace)
}
