//! The validated policy, and the validation that builds it from the file as written.

use crate::pattern::NamespacePattern;
use crate::quantity::parse_memory_mib;
use crate::raw::{self, RawPolicy, S};
use crate::{Acceptance, Date};
use gpu_trust_model::fleet::{Subject, WorkloadClass};
use gpu_trust_model::{Diagnostic, Location, Trust};
use gpu_trust_source::{parse_document, Limits};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The `apiVersion` a policy file may give.
pub const API_VERSION: &str = "gpu-trust/v1";
/// The `kind` a policy file may give.
pub const KIND: &str = "TenancyPolicy";

/// Namespace labels that name a tenant when the policy does not set `tenantLabel`.
///
/// - `capsule.clastix.io/tenant`: Capsule (projectcapsule/capsule) stamps it on every namespace of a
///   Tenant, with the Tenant's name as the value (its `GetTypeLabel` for a Tenant).
pub const DEFAULT_TENANT_LABELS: &[&str] = &["capsule.clastix.io/tenant"];

/// Infrastructure namespaces when the policy does not set `platformNamespaces`: the Kubernetes system
/// namespaces (kube-system, kube-public, kube-node-lease, created by every cluster) and the NVIDIA GPU
/// Operator's namespace as its install guide names it (`gpu-operator`), as vendors rename it
/// (`nvidia-gpu-operator` on OpenShift, `*-gpu-operator`), and NVIDIA's other components (`nvidia-*`).
///
/// Then the namespaces the schedulers and workload operators install into by default, which run
/// their controllers and device plugins, never a tenant's pods:
/// - `volcano-system`: volcano-sh/volcano `installer/volcano-development.yaml`;
/// - `kai-scheduler` and `kai-resource-reservation` (the reservation pods that hold the GPUs KAI
///   shares in fractions): NVIDIA/KAI-Scheduler `pkg/common/constants` (`DefaultKAINamespace`,
///   `DefaultResourceReservationName`);
/// - `hami-system`: Project-HAMi/HAMi `hack/deploy.sh` (`TARGET_NS`, default `hami-system`);
/// - `lws-system`: kubernetes-sigs/lws `config/default/kustomization.yaml`;
/// - `jobset-system`: kubernetes-sigs/jobset `config/default/kustomization.yaml`;
/// - `ray-system`: ray-project/kuberay `ray-operator/config/default/kustomization.yaml` (the KubeRay
///   operator's namespace).
pub const DEFAULT_PLATFORM_NAMESPACES: &[&str] = &[
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "gpu-operator",
    "nvidia-*",
    "*-gpu-operator",
    "volcano-system",
    "kai-scheduler",
    "kai-resource-reservation",
    "hami-system",
    "lws-system",
    "jobset-system",
    "ray-system",
];

/// The largest policy file read, in bytes (a policy is a few kilobytes; this bounds a wrong path).
pub const MAX_POLICY_BYTES: usize = 16 << 20;

/// Days a published driver fix may stay unapplied (`host.patchWindowDays`) when the policy is silent.
pub const DEFAULT_PATCH_WINDOW_DAYS: u32 = 30;
/// Replicas per time-sliced or MPS GPU without a memory limit (`sharing.maxReplicas`) before GT110.
pub const DEFAULT_MAX_REPLICAS: u32 = 4;

pub use gpu_trust_model::Latency;

/// What the hosting terms promise a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Contract {
    /// Isolation from other tenants: any shared memory pool, fault domain, compute, or a node shared
    /// with a distrusted tenant breaks it (GT501).
    Isolation,
    /// A share of compute, with the interference that comes with it (GT502 states which).
    #[default]
    ProportionalCompute,
}

impl Contract {
    pub const ALL: [Contract; 2] = [Contract::Isolation, Contract::ProportionalCompute];

    pub fn as_str(self) -> &'static str {
        match self {
            Contract::Isolation => "isolation",
            Contract::ProportionalCompute => "proportional-compute",
        }
    }

    pub fn parse(s: &str) -> Option<Contract> {
        Contract::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tenant as the policy declares it (before namespaces are resolved).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TenantDecl {
    pub name: String,
    pub location: Location,
    pub namespaces: Vec<NamespacePattern>,
    pub latency: Latency,
    pub confidential: bool,
    pub contract: Contract,
    pub subjects: Vec<Subject>,
}

/// A `trust.relations` entry: the level between two declared tenants (symmetric).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Relation {
    /// The two tenant names, sorted.
    pub tenants: [String; 2],
    pub level: Trust,
    #[serde(skip)]
    pub location: Location,
}

/// A `workloads` entry: what the objects alone cannot say about matching workloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRule {
    /// The namespace (name or glob) a workload must be in; `None` for any namespace.
    pub namespace: Option<NamespacePattern>,
    /// Labels a workload must carry, all of them, with these values.
    pub labels: BTreeMap<String, String>,
    pub kind: Option<WorkloadClass>,
    pub peak_memory_mib: Option<u64>,
    pub latency: Option<Latency>,
    #[serde(skip)]
    pub location: Location,
}

impl WorkloadRule {
    /// Whether a workload in `namespace` with `labels` is selected by this entry.
    pub fn matches(&self, namespace: &str, labels: &BTreeMap<String, String>) -> bool {
        self.namespace.as_ref().is_none_or(|p| p.matches(namespace))
            && self
                .labels
                .iter()
                .all(|(k, v)| labels.get(k).is_some_and(|have| have == v))
    }
}

/// A tenancy policy, validated. Build one with [`crate::parse`] or take [`Policy::default`] (no policy
/// file: the secure default), then [`resolve`](Policy::resolve) it against the cluster's namespaces.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub(crate) file: Option<String>,
    pub(crate) tenant_labels: Vec<String>,
    pub(crate) platform: Vec<NamespacePattern>,
    pub(crate) tenants: Vec<TenantDecl>,
    pub(crate) default_trust: Trust,
    pub(crate) relations: Vec<Relation>,
    pub(crate) workloads: Vec<WorkloadRule>,
    pub(crate) patch_window_days: u32,
    pub(crate) max_replicas: u32,
    pub(crate) acceptances: Vec<Acceptance>,
}

impl Default for Policy {
    /// No policy file: every namespace is its own tenant (or joins the tenant its Capsule label
    /// names), platform namespaces are the defaults, and different tenants do not trust each other.
    fn default() -> Policy {
        Policy {
            file: None,
            tenant_labels: DEFAULT_TENANT_LABELS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            platform: DEFAULT_PLATFORM_NAMESPACES
                .iter()
                .map(|p| NamespacePattern::new(*p, Location::default()))
                .collect(),
            tenants: Vec::new(),
            default_trust: Trust::None,
            relations: Vec::new(),
            workloads: Vec::new(),
            patch_window_days: DEFAULT_PATCH_WINDOW_DAYS,
            max_replicas: DEFAULT_MAX_REPLICAS,
            acceptances: Vec::new(),
        }
    }
}

impl Policy {
    /// The file the policy was read from (`None` for the default policy).
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The namespace labels that name a tenant, in the order they are consulted.
    pub fn tenant_labels(&self) -> &[String] {
        &self.tenant_labels
    }

    /// Infrastructure namespaces (names and globs).
    pub fn platform_namespaces(&self) -> &[NamespacePattern] {
        &self.platform
    }

    /// Trust between different tenants that no relation covers.
    pub fn default_trust(&self) -> Trust {
        self.default_trust
    }

    pub fn relations(&self) -> &[Relation] {
        &self.relations
    }

    pub fn workloads(&self) -> &[WorkloadRule] {
        &self.workloads
    }

    /// `host.patchWindowDays` (default 30).
    pub fn patch_window_days(&self) -> u32 {
        self.patch_window_days
    }

    /// `sharing.maxReplicas` (default 4).
    pub fn max_replicas(&self) -> u32 {
        self.max_replicas
    }

    pub fn acceptances(&self) -> &[Acceptance] {
        &self.acceptances
    }

    /// Names of the tenants the file declares, in file order.
    pub fn declared_tenants(&self) -> impl Iterator<Item = &str> {
        self.tenants.iter().map(|t| t.name.as_str())
    }
}

/// Reads and validates a policy file. `file` names it in diagnostics.
///
/// Syntax errors and unknown fields stop the reading (with their location); once the file has been
/// read, every validation error is collected, sorted by position. An empty file is the default policy.
pub fn parse(text: &str, file: &str) -> Result<Policy, Vec<Diagnostic>> {
    let raw = if is_blank(text) && text.len() <= MAX_POLICY_BYTES {
        RawPolicy::default()
    } else {
        parse_document::<Option<RawPolicy>>(text, file, &limits())
            .map_err(|d| vec![reword(d, text)])?
            .unwrap_or_default()
    };
    let mut v = Validator {
        file: file.to_string(),
        errors: Vec::new(),
    };
    let policy = v.policy(raw);
    if v.errors.is_empty() {
        Ok(policy)
    } else {
        let mut errors = v.errors;
        errors.sort();
        errors.dedup();
        Err(errors)
    }
}

fn limits() -> Limits {
    Limits {
        max_file_bytes: MAX_POLICY_BYTES,
        ..Limits::default()
    }
}

/// Says what the parser's own wording leaves unclear to someone writing a policy.
fn reword(mut d: Diagnostic, text: &str) -> Diagnostic {
    // The line of the first YAML node: a "mapping" error there is about the whole document.
    let first_line = text
        .lines()
        .position(|l| {
            let t = l.trim();
            !(t.is_empty() || t.starts_with('#') || t == "---")
        })
        .map_or(0, |i| i + 1);
    if d.message.contains("multiple YAML documents") {
        d.message =
            "a policy file holds one YAML document; this one has a second after `---`".into();
    } else if usize::try_from(d.location.line).is_ok_and(|l| l == first_line)
        && d.location.column == 1
        && d.message == "expected mapping start"
    {
        d.message = "a policy file is a mapping (apiVersion, kind, tenants, trust, ...)".into();
    }
    d
}

/// Whether the text holds no YAML node (only blank lines and comments).
fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

struct Validator {
    file: String,
    errors: Vec<Diagnostic>,
}

impl Validator {
    fn loc<T>(&self, s: &S<T>) -> Location {
        gpu_trust_source::spanned_location(&self.file, s)
    }

    fn error(&mut self, location: Location, message: impl Into<String>) {
        self.errors.push(Diagnostic::error(location, message));
    }

    fn policy(&mut self, raw: RawPolicy) -> Policy {
        let mut policy = Policy {
            file: Some(self.file.clone()),
            ..Policy::default()
        };
        if let Some(v) = &raw.api_version {
            if v.value != API_VERSION {
                self.error(
                    self.loc(v),
                    format!("apiVersion must be `{API_VERSION}`, not `{}`", v.value),
                );
            }
        }
        if let Some(k) = &raw.kind {
            if k.value != KIND {
                self.error(
                    self.loc(k),
                    format!("kind must be `{KIND}`, not `{}`", k.value),
                );
            }
        }
        match raw.tenant_label {
            None => {}
            Some(None) => policy.tenant_labels.clear(),
            Some(Some(label)) => {
                let text = label.value.trim();
                if text.is_empty() || text.contains(char::is_whitespace) {
                    self.error(
                        self.loc(&label),
                        format!(
                            "tenantLabel `{}` is not a label key (write `tenantLabel: null` to derive no tenants from labels)",
                            label.value
                        ),
                    );
                }
                policy.tenant_labels = vec![text.to_string()];
            }
        }
        let platform_given = raw.platform_namespaces.is_some();
        if let Some(list) = raw.platform_namespaces {
            policy.platform = self.patterns(&list.value, "platformNamespaces");
        }
        policy.tenants = self.tenants(raw.tenants);
        if platform_given {
            self.platform_conflicts(&policy.platform, &policy.tenants);
        }
        let declared: BTreeMap<String, Location> = policy
            .tenants
            .iter()
            .map(|t| (t.name.clone(), t.location.clone()))
            .collect();
        if let Some(trust) = raw.trust {
            if let Some(d) = &trust.default {
                if let Some(t) = self.trust_level(d) {
                    policy.default_trust = t;
                }
            }
            policy.relations = self.relations(trust.relations, &declared);
        }
        policy.workloads = raw
            .workloads
            .into_iter()
            .filter_map(|w| self.workload(w))
            .collect();
        if let Some(host) = raw.host {
            if let Some(days) = host.patch_window_days {
                policy.patch_window_days = days.value;
            }
        }
        if let Some(sharing) = raw.sharing {
            if let Some(max) = sharing.max_replicas {
                if max.value == 0 {
                    self.error(
                        self.loc(&max),
                        "sharing.maxReplicas must be at least 1 (a GPU advertised as 0 replicas cannot be used)",
                    );
                } else {
                    policy.max_replicas = max.value;
                }
            }
        }
        policy.acceptances = raw
            .accept
            .into_iter()
            .filter_map(|a| self.acceptance(a))
            .collect();
        policy
    }

    /// Namespace names and globs of one list, each checked, duplicates refused.
    fn patterns(&mut self, list: &[S<String>], field: &str) -> Vec<NamespacePattern> {
        let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
        let mut out = Vec::new();
        for item in list {
            let loc = self.loc(item);
            if let Err(e) = NamespacePattern::check(&item.value) {
                self.error(loc, format!("{field}: {e}"));
                continue;
            }
            if let Some(first) = seen.get(item.value.as_str()) {
                self.error(
                    loc,
                    format!(
                        "{field}: `{}` is listed twice (first on line {first})",
                        item.value
                    ),
                );
                continue;
            }
            seen.insert(&item.value, loc.line);
            out.push(NamespacePattern::new(item.value.clone(), loc));
        }
        out
    }

    fn tenants(&mut self, raw: Vec<S<raw::RawTenant>>) -> Vec<TenantDecl> {
        let mut names: BTreeMap<String, u32> = BTreeMap::new();
        // Namespace (or glob, as written) -> the tenant that claimed it first, and where.
        let mut claims: BTreeMap<String, (String, u32)> = BTreeMap::new();
        let mut out = Vec::new();
        for entry in raw {
            let entry_loc = self.loc(&entry);
            let t = entry.value;
            let Some(name) = t.name else {
                self.error(entry_loc, "tenant needs a `name`");
                continue;
            };
            let name_loc = self.loc(&name);
            let name = name.value;
            if name.trim().is_empty() || name.trim() != name {
                self.error(
                    name_loc.clone(),
                    format!(
                        "tenant name `{name}` must be non-empty and have no surrounding spaces"
                    ),
                );
            }
            if let Some(first) = names.get(&name) {
                self.error(
                    name_loc.clone(),
                    format!("tenant `{name}` is declared twice (first on line {first})"),
                );
            } else {
                names.insert(name.clone(), name_loc.line);
            }
            let namespaces = self.patterns(&t.namespaces, &format!("tenant `{name}`"));
            for ns in &namespaces {
                match claims.get(&ns.pattern) {
                    Some((other, line)) if *other != name => {
                        let what = if ns.is_glob() { "glob" } else { "namespace" };
                        self.error(
                            ns.location.clone(),
                            format!(
                                "{what} `{}` is claimed by tenant `{other}` (line {line}) and by tenant `{name}`: a namespace belongs to one tenant only",
                                ns.pattern
                            ),
                        );
                    }
                    Some(_) => {}
                    None => {
                        claims.insert(ns.pattern.clone(), (name.clone(), ns.location.line));
                    }
                }
            }
            let latency = t
                .latency
                .as_ref()
                .and_then(|l| self.latency(l))
                .unwrap_or_default();
            let contract = match &t.contract {
                None => Contract::default(),
                Some(c) => match Contract::parse(&c.value) {
                    Some(c) => c,
                    None => {
                        self.error(
                            self.loc(c),
                            format!(
                                "contract `{}` is not one of isolation, proportional-compute",
                                c.value
                            ),
                        );
                        Contract::default()
                    }
                },
            };
            let subjects = t
                .subjects
                .into_iter()
                .filter_map(|s| self.subject(s, &name))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            out.push(TenantDecl {
                name,
                location: name_loc,
                namespaces,
                latency,
                confidential: t.confidential.unwrap_or(false),
                contract,
                subjects,
            });
        }
        out
    }

    /// A namespace explicitly named both as a platform namespace and as a tenant's is a contradiction.
    fn platform_conflicts(&mut self, platform: &[NamespacePattern], tenants: &[TenantDecl]) {
        for p in platform.iter().filter(|p| !p.is_glob()) {
            for t in tenants {
                if let Some(ns) = t.namespaces.iter().find(|n| n.pattern == p.pattern) {
                    self.error(
                        ns.location.clone(),
                        format!(
                            "namespace `{}` is claimed by tenant `{}` and listed in platformNamespaces (line {}): it is either infrastructure or a tenant's",
                            ns.pattern, t.name, p.location.line
                        ),
                    );
                }
            }
        }
    }

    fn subject(&mut self, raw: S<raw::RawSubject>, tenant: &str) -> Option<Subject> {
        let loc = self.loc(&raw);
        let s = raw.value;
        let (Some(kind), Some(name)) = (s.kind, s.name) else {
            self.error(
                loc,
                format!("subject of tenant `{tenant}` needs a `kind` (User, Group or ServiceAccount) and a `name`"),
            );
            return None;
        };
        let mut ok = true;
        if !matches!(kind.value.as_str(), "User" | "Group" | "ServiceAccount") {
            self.error(
                self.loc(&kind),
                format!(
                    "subject kind `{}` is not one of User, Group, ServiceAccount",
                    kind.value
                ),
            );
            ok = false;
        }
        if name.value.trim().is_empty() {
            self.error(self.loc(&name), "subject name is empty");
            ok = false;
        }
        let namespace = match (&s.namespace, kind.value.as_str()) {
            (None, "ServiceAccount") => {
                self.error(
                    self.loc(&kind),
                    format!(
                        "ServiceAccount subject `{}` needs a `namespace`",
                        name.value
                    ),
                );
                ok = false;
                None
            }
            (Some(ns), "ServiceAccount") => {
                if let Err(e) = NamespacePattern::check(&ns.value) {
                    self.error(self.loc(ns), e);
                    ok = false;
                } else if ns.value.contains('*') {
                    self.error(self.loc(ns), "a subject's namespace cannot be a glob");
                    ok = false;
                }
                Some(ns.value.clone())
            }
            (Some(ns), _) => {
                self.error(
                    self.loc(ns),
                    format!(
                        "only a ServiceAccount subject has a namespace, not a {}",
                        kind.value
                    ),
                );
                ok = false;
                None
            }
            (None, _) => None,
        };
        ok.then_some(Subject {
            kind: kind.value,
            name: name.value,
            namespace,
        })
    }

    fn trust_level(&mut self, s: &S<String>) -> Option<Trust> {
        let t = Trust::parse(&s.value);
        if t.is_none() {
            self.error(
                self.loc(s),
                format!(
                    "trust level `{}` is not one of none, limited, full",
                    s.value
                ),
            );
        }
        t
    }

    fn latency(&mut self, s: &S<String>) -> Option<Latency> {
        let l = Latency::parse(&s.value);
        if l.is_none() {
            self.error(
                self.loc(s),
                format!(
                    "latency `{}` is not one of critical, standard, tolerant",
                    s.value
                ),
            );
        }
        l
    }

    fn relations(
        &mut self,
        raw: Vec<S<raw::RawRelation>>,
        declared: &BTreeMap<String, Location>,
    ) -> Vec<Relation> {
        let mut seen: BTreeMap<[String; 2], (Trust, u32)> = BTreeMap::new();
        let mut out = Vec::new();
        for entry in raw {
            let loc = self.loc(&entry);
            let r = entry.value;
            let level = match &r.level {
                None => {
                    self.error(
                        loc.clone(),
                        "relation needs a `level` (none, limited or full)",
                    );
                    None
                }
                Some(l) => self.trust_level(l),
            };
            if r.tenants.len() != 2 {
                self.error(
                    loc,
                    format!(
                        "a relation names exactly two tenants; this one names {}",
                        r.tenants.len()
                    ),
                );
                continue;
            }
            let mut known = true;
            for t in &r.tenants {
                if !declared.contains_key(&t.value) {
                    self.error(
                        self.loc(t),
                        format!(
                            "relation names tenant `{}`, which is not declared under `tenants` (a declared tenant may list no namespaces and be filled by the tenant label)",
                            t.value
                        ),
                    );
                    known = false;
                }
            }
            let (a, b) = (&r.tenants[0], &r.tenants[1]);
            if a.value == b.value {
                self.error(
                    self.loc(b),
                    format!(
                        "relation pairs tenant `{}` with itself (trust inside one tenant is always full)",
                        a.value
                    ),
                );
                continue;
            }
            let (Some(level), true) = (level, known) else {
                continue;
            };
            let mut pair = [a.value.clone(), b.value.clone()];
            pair.sort();
            match seen.get(&pair) {
                Some((first, line)) if *first != level => {
                    self.error(
                        loc,
                        format!(
                            "tenants `{}` and `{}` are related twice with different levels: {first} (line {line}) and {level}",
                            pair[0], pair[1]
                        ),
                    );
                }
                Some(_) => {}
                None => {
                    seen.insert(pair.clone(), (level, loc.line));
                    out.push(Relation {
                        tenants: pair,
                        level,
                        location: loc,
                    });
                }
            }
        }
        out
    }

    fn workload(&mut self, entry: S<raw::RawWorkload>) -> Option<WorkloadRule> {
        let loc = self.loc(&entry);
        let w = entry.value;
        let mut ok = true;
        let Some(selector) = w.selector else {
            self.error(
                loc,
                "workload entry needs a `selector` (namespace and/or labels)",
            );
            return None;
        };
        let selector_loc = self.loc(&selector);
        let selector = selector.value;
        if selector.namespace.is_none() && selector.labels.is_empty() {
            self.error(
                selector_loc,
                "workload selector is empty: give a namespace, labels, or both",
            );
            ok = false;
        }
        let namespace = match selector.namespace {
            None => None,
            Some(ns) => match NamespacePattern::check(&ns.value) {
                Ok(()) => Some(NamespacePattern::new(ns.value.clone(), self.loc(&ns))),
                Err(e) => {
                    self.error(self.loc(&ns), e);
                    ok = false;
                    None
                }
            },
        };
        let kind = match &w.kind {
            None => None,
            Some(k) => {
                let c = WorkloadClass::parse(&k.value);
                if c.is_none() {
                    self.error(
                        self.loc(k),
                        format!(
                            "workload kind `{}` is not one of training, inference, notebook, batch",
                            k.value
                        ),
                    );
                    ok = false;
                }
                c
            }
        };
        let peak_memory_mib = match &w.peak_memory {
            None => None,
            Some(m) => match parse_memory_mib(&m.value.0) {
                Ok(mib) => Some(mib),
                Err(e) => {
                    self.error(self.loc(m), format!("peakMemory: {e}"));
                    ok = false;
                    None
                }
            },
        };
        let latency = match &w.latency {
            None => None,
            Some(l) => {
                let l2 = self.latency(l);
                ok &= l2.is_some();
                l2
            }
        };
        if w.kind.is_none() && w.peak_memory.is_none() && w.latency.is_none() {
            self.error(
                loc.clone(),
                "workload entry sets nothing: give a kind, a peakMemory or a latency",
            );
            ok = false;
        }
        ok.then_some(WorkloadRule {
            namespace,
            labels: selector.labels,
            kind,
            peak_memory_mib,
            latency,
            location: loc,
        })
    }

    fn acceptance(&mut self, entry: S<raw::RawAcceptance>) -> Option<Acceptance> {
        let loc = self.loc(&entry);
        let a = entry.value;
        let mut ok = true;
        let rule = match &a.rule {
            None => {
                self.error(
                    loc.clone(),
                    "acceptance needs a `rule` (a code such as GT401)",
                );
                ok = false;
                String::new()
            }
            Some(r) => {
                if !is_rule_code(&r.value) {
                    self.error(
                        self.loc(r),
                        format!(
                            "acceptance rule `{}` is not a rule code of the form GTnnn (e.g. GT401)",
                            r.value
                        ),
                    );
                    ok = false;
                }
                r.value.clone()
            }
        };
        let reason = match &a.reason {
            None => {
                self.error(
                    loc.clone(),
                    "acceptance needs a `reason`: say why the interference is accepted",
                );
                ok = false;
                String::new()
            }
            Some(r) if r.value.trim().is_empty() => {
                self.error(self.loc(r), "acceptance reason is empty");
                ok = false;
                String::new()
            }
            Some(r) => r.value.clone(),
        };
        let tenants = match &a.tenants {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.error(
                    self.loc(list),
                    "acceptance tenants is empty: leave it out to accept the rule for all tenants",
                );
                ok = false;
                None
            }
            Some(list) => {
                let mut set = BTreeSet::new();
                for t in &list.value {
                    if t.value.trim().is_empty() {
                        self.error(self.loc(t), "acceptance names an empty tenant");
                        ok = false;
                    } else if !set.insert(t.value.clone()) {
                        self.error(
                            self.loc(t),
                            format!("acceptance names tenant `{}` twice", t.value),
                        );
                        ok = false;
                    }
                }
                Some(set)
            }
        };
        let until = match &a.until {
            None => None,
            Some(u) => match Date::parse(&u.value) {
                Ok(d) => Some(d),
                Err(e) => {
                    self.error(self.loc(u), format!("until: {e}"));
                    ok = false;
                    None
                }
            },
        };
        ok.then_some(Acceptance {
            rule,
            tenants,
            reason,
            until,
            location: loc,
        })
    }
}

/// `GT` followed by exactly three digits.
fn is_rule_code(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 5 && b.starts_with(b"GT") && b[2..].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_codes() {
        assert!(is_rule_code("GT401"));
        assert!(is_rule_code("GT003"));
        assert!(!is_rule_code("GT40"));
        assert!(!is_rule_code("gt401"));
        assert!(!is_rule_code("GT4011"));
        assert!(!is_rule_code("GTX01"));
        assert!(!is_rule_code("GT４01"));
    }

    #[test]
    fn names_round_trip() {
        for l in Latency::ALL {
            assert_eq!(Latency::parse(l.as_str()), Some(l));
        }
        for c in Contract::ALL {
            assert_eq!(Contract::parse(c.as_str()), Some(c));
        }
    }
}
