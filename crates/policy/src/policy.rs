//! The validated policy, and the validation that builds it from the file as written.

use crate::pattern::NamespacePattern;
use crate::quantity::parse_memory_mib;
use crate::raw::{self, RawPolicy, S};
use crate::{Acceptance, Date, WorkloadRef};
use gpu_trust_model::fleet::{Subject, WorkloadClass};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, Trust};
use gpu_trust_source::{Limits, ValidationContext};
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

/// Infrastructure namespaces whatever the policy says (its `platformNamespaces` add to them, and a
/// tenant that names one takes it): the Kubernetes system namespaces (kube-system, kube-public,
/// kube-node-lease, created by every cluster) and the NVIDIA GPU
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
    gpu_trust_model::stack::GPU_OPERATOR_NAMESPACE,
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

    /// Infrastructure namespaces (names and globs): the built-in ones, then those the policy adds.
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
    let (raw, cx) = if is_blank(text) && text.len() <= MAX_POLICY_BYTES {
        (
            RawPolicy::default(),
            ValidationContext::new(file, Code::InvalidPolicy),
        )
    } else {
        let (raw, cx) = ValidationContext::read::<Option<RawPolicy>>(
            text,
            file,
            &limits(),
            Code::InvalidPolicy,
        )
        .map_err(|d| vec![reword(d, text)])?;
        (raw.unwrap_or_default(), cx)
    };
    let mut check = PolicyCheck { cx };
    let policy = check.policy(raw);
    check.cx.finish(policy)
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
    if d.code == Code::NotOneDocument {
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

/// The policy file's checks, reporting into the shared validation context.
struct PolicyCheck {
    cx: ValidationContext,
}

impl PolicyCheck {
    fn policy(&mut self, raw: RawPolicy) -> Policy {
        let mut policy = Policy {
            file: Some(self.cx.file().to_string()),
            ..Policy::default()
        };
        self.cx
            .expect_word(raw.api_version.as_ref(), "apiVersion", API_VERSION);
        self.cx.expect_word(raw.kind.as_ref(), "kind", KIND);
        match raw.tenant_label {
            None => {}
            Some(None) => policy.tenant_labels.clear(),
            Some(Some(label)) => {
                let text = label.value.trim();
                if text.is_empty() || text.contains(char::is_whitespace) {
                    self.cx.error(
                        self.cx.loc(&label),
                        format!(
                            "tenantLabel `{}` is not a label key (write `tenantLabel: null` to derive no tenants from labels)",
                            label.value
                        ),
                    );
                }
                policy.tenant_labels = vec![text.to_string()];
            }
        }
        // The policy's platform namespaces extend the built-in list: naming `monitoring` must not
        // make the GPU Operator's namespace a tenant. A built-in namespace becomes a tenant's only
        // when a tenant names it (and `policy check` warns).
        let given = raw
            .platform_namespaces
            .map(|list| self.patterns(&list.value, "platformNamespaces"))
            .unwrap_or_default();
        policy.tenants = self.tenants(raw.tenants);
        self.platform_conflicts(&given, &policy.tenants);
        for p in given {
            if !policy.platform.iter().any(|q| q.pattern == p.pattern) {
                policy.platform.push(p);
            }
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
                    self.cx.error(
                        self.cx.loc(&max),
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
            let loc = self.cx.loc(item);
            if let Err(e) = NamespacePattern::check(&item.value) {
                self.cx.error(loc, format!("{field}: {e}"));
                continue;
            }
            if let Some(first) = seen.get(item.value.as_str()) {
                self.cx.error(
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
            let entry_loc = self.cx.loc(&entry);
            let t = entry.value;
            let Some(name) = t.name else {
                self.cx.error(entry_loc, "tenant needs a `name`");
                continue;
            };
            let name_loc = self.cx.loc(&name);
            let name = name.value;
            if name.trim().is_empty() || name.trim() != name {
                self.cx.error(
                    name_loc.clone(),
                    format!(
                        "tenant name `{name}` must be non-empty and have no surrounding spaces"
                    ),
                );
            }
            if let Some(first) = names.get(&name) {
                self.cx.error(
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
                        self.cx.error(
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
                        self.cx.error(
                            self.cx.loc(c),
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
                    self.cx.error(
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
        let loc = self.cx.loc(&raw);
        let s = raw.value;
        let (Some(kind), Some(name)) = (s.kind, s.name) else {
            self.cx.error(
                loc,
                format!("subject of tenant `{tenant}` needs a `kind` (User, Group or ServiceAccount) and a `name`"),
            );
            return None;
        };
        let mut ok = true;
        if !matches!(kind.value.as_str(), "User" | "Group" | "ServiceAccount") {
            self.cx.error(
                self.cx.loc(&kind),
                format!(
                    "subject kind `{}` is not one of User, Group, ServiceAccount",
                    kind.value
                ),
            );
            ok = false;
        }
        if name.value.trim().is_empty() {
            self.cx.error(self.cx.loc(&name), "subject name is empty");
            ok = false;
        }
        let namespace = match (&s.namespace, kind.value.as_str()) {
            (None, "ServiceAccount") => {
                self.cx.error(
                    self.cx.loc(&kind),
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
                    self.cx.error(self.cx.loc(ns), e);
                    ok = false;
                } else if ns.value.contains('*') {
                    self.cx
                        .error(self.cx.loc(ns), "a subject's namespace cannot be a glob");
                    ok = false;
                }
                Some(ns.value.clone())
            }
            (Some(ns), _) => {
                self.cx.error(
                    self.cx.loc(ns),
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
            self.cx.error(
                self.cx.loc(s),
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
            self.cx.error(
                self.cx.loc(s),
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
            let loc = self.cx.loc(&entry);
            let r = entry.value;
            let level = match &r.level {
                None => {
                    self.cx.error(
                        loc.clone(),
                        "relation needs a `level` (none, limited or full)",
                    );
                    None
                }
                Some(l) => self.trust_level(l),
            };
            if r.tenants.len() != 2 {
                self.cx.error(
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
                    self.cx.error(
                        self.cx.loc(t),
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
                self.cx.error(
                    self.cx.loc(b),
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
                    self.cx.error(
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
        let loc = self.cx.loc(&entry);
        let w = entry.value;
        let mut ok = true;
        let Some(selector) = w.selector else {
            self.cx.error(
                loc,
                "workload entry needs a `selector` (namespace and/or labels)",
            );
            return None;
        };
        let selector_loc = self.cx.loc(&selector);
        let selector = selector.value;
        if selector.namespace.is_none() && selector.labels.is_empty() {
            self.cx.error(
                selector_loc,
                "workload selector is empty: give a namespace, labels, or both",
            );
            ok = false;
        }
        let namespace = match selector.namespace {
            None => None,
            Some(ns) => match NamespacePattern::check(&ns.value) {
                Ok(()) => Some(NamespacePattern::new(ns.value.clone(), self.cx.loc(&ns))),
                Err(e) => {
                    self.cx.error(self.cx.loc(&ns), e);
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
                    self.cx.error(
                        self.cx.loc(k),
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
                    self.cx.error(self.cx.loc(m), format!("peakMemory: {e}"));
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
            self.cx.error(
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
        let loc = self.cx.loc(&entry);
        let a = entry.value;
        let mut ok = true;
        let rule = match &a.rule {
            None => {
                self.cx.error(
                    loc.clone(),
                    "acceptance needs a `rule` (a code such as GT401)",
                );
                ok = false;
                String::new()
            }
            Some(r) => {
                if !is_rule_code(&r.value) {
                    self.cx.error(
                        self.cx.loc(r),
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
        // An entry without a reason is kept: it accepts nothing, and the audit reports it (GT004)
        // where it is, as it reports an annotation without one.
        let reason = a
            .reason
            .as_ref()
            .map(|r| r.value.trim().to_string())
            .unwrap_or_default();
        let tenants = match &a.tenants {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance tenants is empty: leave it out to accept the rule for all tenants",
                );
                ok = false;
                None
            }
            Some(list) => {
                let mut set = BTreeSet::new();
                for t in &list.value {
                    if t.value.trim().is_empty() {
                        self.cx
                            .error(self.cx.loc(t), "acceptance names an empty tenant");
                        ok = false;
                    } else if !set.insert(t.value.clone()) {
                        self.cx.error(
                            self.cx.loc(t),
                            format!("acceptance names tenant `{}` twice", t.value),
                        );
                        ok = false;
                    }
                }
                Some(set)
            }
        };
        let errors = self.cx.error_count();
        let namespaces = match &a.namespaces {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance namespaces is empty: leave it out to accept the rule in every namespace",
                );
                None
            }
            Some(list) => Some(self.patterns(&list.value, "acceptance namespaces")),
        };
        let nodes = match &a.nodes {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance nodes is empty: leave it out to accept the rule on every node",
                );
                None
            }
            Some(list) => {
                let mut set = BTreeSet::new();
                for n in &list.value {
                    if let Err(e) = node_name(&n.value) {
                        self.cx
                            .error(self.cx.loc(n), format!("acceptance nodes: {e}"));
                    } else if !set.insert(n.value.clone()) {
                        self.cx.error(
                            self.cx.loc(n),
                            format!("acceptance names node `{}` twice", n.value),
                        );
                    }
                }
                Some(set)
            }
        };
        let workloads = match &a.workloads {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance workloads is empty: leave it out to accept the rule for every workload",
                );
                None
            }
            Some(list) => {
                let mut out: Vec<WorkloadRef> = Vec::new();
                for w in &list.value {
                    if let Some(r) = self.workload_ref(w) {
                        if out.contains(&r) {
                            self.cx.error(
                                self.cx.loc(w),
                                format!(
                                    "acceptance names workload {} {}/{} twice",
                                    r.kind, r.namespace, r.name
                                ),
                            );
                        } else {
                            out.push(r);
                        }
                    }
                }
                Some(out)
            }
        };
        if self.cx.error_count() > errors {
            ok = false;
        }
        let until = match &a.until {
            None => None,
            Some(u) => match Date::parse(&u.value) {
                Ok(d) => Some(d),
                Err(e) => {
                    self.cx.error(self.cx.loc(u), format!("until: {e}"));
                    ok = false;
                    None
                }
            },
        };
        ok.then_some(Acceptance {
            rule,
            tenants,
            namespaces,
            workloads,
            nodes,
            reason,
            until,
            location: loc,
        })
    }
}

impl PolicyCheck {
    /// One entry of an acceptance's `workloads`: `kind`, `namespace` and `name`, each required.
    fn workload_ref(&mut self, w: &S<raw::RawWorkloadRef>) -> Option<WorkloadRef> {
        let loc = self.cx.loc(w);
        let field = |v: &Option<S<String>>, name: &str, this: &mut Self| match v {
            Some(t) if !t.value.trim().is_empty() => Some(t.value.clone()),
            Some(t) => {
                this.cx.error(
                    this.cx.loc(t),
                    format!("acceptance workload `{name}` is empty"),
                );
                None
            }
            None => {
                this.cx.error(
                    loc.clone(),
                    format!(
                        "acceptance workload needs `{name}` (a workload is named by kind, namespace and name, e.g. {{kind: Deployment, namespace: ml, name: trainer}})"
                    ),
                );
                None
            }
        };
        let kind = field(&w.value.kind, "kind", self);
        let namespace = field(&w.value.namespace, "namespace", self);
        let name = field(&w.value.name, "name", self);
        if let Some(ns) = &w.value.namespace {
            if let Err(e) = NamespacePattern::check(&ns.value) {
                self.cx.error(
                    self.cx.loc(ns),
                    format!("acceptance workload namespace: {e}"),
                );
                return None;
            }
            if ns.value.contains('*') {
                self.cx.error(
                    self.cx.loc(ns),
                    "acceptance workload namespace: a workload is in one namespace; use `namespaces` for globs",
                );
                return None;
            }
        }
        Some(WorkloadRef {
            kind: kind?,
            namespace: namespace?,
            name: name?,
        })
    }
}

/// Why a text cannot be a node name: Kubernetes names nodes with DNS subdomains (lower-case letters,
/// digits, `-` and `.`, at most 253 characters).
fn node_name(text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err("a node name cannot be empty".to_string());
    }
    if text.len() > 253 {
        return Err(format!("`{text}` is longer than 253 characters"));
    }
    if let Some(bad) = text
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '.'))
    {
        return Err(format!(
            "`{text}` is not a node name: `{bad}` is not allowed (lower-case letters, digits, `-` and `.`)"
        ));
    }
    Ok(())
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
