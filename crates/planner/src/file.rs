//! The plan file: its YAML shape (unknown fields refused, every value located), validation of what
//! it says, and resolution against the tenancy policy into a [`PlanInput`] the solver reads.
//!
//! Reading happens in two steps because the policy may live in another file: [`parse`] reads the plan
//! file and says where the policy is ([`PolicySource`]); the caller reads that file if needed, parses it
//! with `gpu_trust_policy::parse`, and hands the [`Policy`] to [`PlanFile::resolve`]. This crate does no
//! I/O.

use gpu_trust_model::catalogue::{self, GpuModel};
use gpu_trust_model::fleet::{self, NamespaceInfo, Tee, WorkloadClass};
use gpu_trust_model::isolation::{Admission, Level};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location, Trust, Version};
use gpu_trust_policy::{parse_memory_mib, Contract, Date, Latency, Policy, TenantOrigin};
use gpu_trust_source::{Limits, ValidationContext};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};

/// The `apiVersion` a plan file may give.
pub const API_VERSION: &str = "gpu-trust/v1";
/// The `kind` a plan file may give.
pub const KIND: &str = "Plan";
/// The largest plan file read, in bytes.
pub const MAX_PLAN_BYTES: usize = 64 << 20;
/// The namespace the GPU Operator runs in when the plan file does not say (its install guide's name).
pub const DEFAULT_OPERATOR_NAMESPACE: &str = gpu_trust_model::stack::GPU_OPERATOR_NAMESPACE;
/// Most replicas of one workload (a bound on what one line of input may cost).
pub const MAX_REPLICAS: u32 = 100_000;
/// Most replicas of all workloads together.
pub const MAX_TOTAL_REPLICAS: u64 = 1_000_000;
/// Most nodes in one pool and GPUs on one node that a plan file may declare.
pub const MAX_NODES_PER_POOL: u32 = 100_000;
pub const MAX_GPUS_PER_NODE: u32 = 64;

type S<T> = Spanned<T>;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPlan {
    api_version: Option<S<String>>,
    kind: Option<S<String>>,
    policy_file: Option<S<String>>,
    policy: Option<S<IgnoredAny>>,
    #[serde(default)]
    inventory: Vec<S<RawPool>>,
    #[serde(default)]
    workloads: Vec<S<RawWorkload>>,
    gpu_operator: Option<S<RawOperator>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPool {
    pool: Option<S<String>>,
    model: Option<S<String>>,
    gpus_per_node: Option<S<u32>>,
    nodes: Option<S<u32>>,
    driver_version: Option<S<String>>,
    tee: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawWorkload {
    name: Option<S<String>>,
    tenant: Option<S<String>>,
    namespace: Option<S<String>>,
    kind: Option<S<String>>,
    replicas: Option<S<u32>>,
    peak_memory: Option<S<String>>,
    compute: Option<S<f64>>,
    latency: Option<S<String>>,
    gpus: Option<S<u32>>,
    image: Option<S<String>>,
    container: Option<S<String>>,
    pool: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawOperator {
    namespace: Option<S<String>>,
    version: Option<S<String>>,
    toolkit_version: Option<S<String>>,
    device_plugin_version: Option<S<String>>,
}

/// Where the plan's tenancy policy is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// Neither `policy:` nor `policyFile:`: the secure default policy.
    Default,
    /// `policy:` inline. `text` keeps the plan file's line and column numbers (everything outside the
    /// policy is blanked), so `gpu_trust_policy::parse(text, file)` reports positions in the plan file.
    Inline { text: String },
    /// `policyFile:`, as written (relative paths are relative to the plan file's folder).
    File { path: String, location: Location },
}

/// A node pool of the inventory: nodes of one GPU model.
#[derive(Debug, Clone)]
pub struct Pool {
    pub name: String,
    pub model: &'static GpuModel,
    pub gpus_per_node: u32,
    /// Nodes available; the plan may use fewer.
    pub nodes: u32,
    pub driver_version: Option<Version>,
    /// The nodes' CPU TEE (`tee:`), which the runtime class of a confidential tenant's pods follows.
    pub tee: Option<&'static Tee>,
    pub location: Location,
}

/// A workload as the plan file gives it.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    pub name: String,
    pub tenant: String,
    pub namespace: Option<String>,
    pub kind: WorkloadClass,
    pub replicas: u32,
    pub peak_memory_mib: Option<u64>,
    /// Fraction of a whole GPU's compute needed at peak, in (0, 1].
    pub compute: Option<f64>,
    pub latency: Option<Latency>,
    /// GPUs per replica (training only; 1 otherwise).
    pub gpus: u32,
    pub image: Option<String>,
    pub container: Option<String>,
    /// Pin to one pool of the inventory.
    pub pool: Option<String>,
    pub location: Location,
}

/// GPU Operator settings the emitted objects carry (`gpuOperator:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorSettings {
    pub namespace: String,
    pub version: Option<Version>,
    pub toolkit_version: Option<Version>,
    pub device_plugin_version: Option<Version>,
}

impl Default for OperatorSettings {
    fn default() -> Self {
        OperatorSettings {
            namespace: DEFAULT_OPERATOR_NAMESPACE.to_string(),
            version: None,
            toolkit_version: None,
            device_plugin_version: None,
        }
    }
}

/// A plan file, read and checked on its own (the policy not yet applied).
#[derive(Debug, Clone)]
pub struct PlanFile {
    pub file: String,
    pub policy: PolicySource,
    pub inventory: Vec<Pool>,
    pub workloads: Vec<WorkloadSpec>,
    pub operator: OperatorSettings,
}

/// A tenant that has workloads in the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantInfo {
    pub name: String,
    pub latency: Latency,
    pub confidential: bool,
    pub contract: Contract,
    /// The tenant label value its namespaces carry in the emitted objects (tenants the policy does not
    /// declare, named by a tenant label); `None` when the namespace name alone resolves it.
    pub label: Option<(String, String)>,
}

/// A workload, resolved: namespace, tenant and effective latency known.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    /// Index into [`PlanInput::tenants`].
    pub tenant: usize,
    pub namespace: String,
    pub kind: WorkloadClass,
    pub replicas: u32,
    pub peak_memory_mib: Option<u64>,
    pub compute: Option<f64>,
    pub latency: Latency,
    pub gpus: u32,
    pub image: Option<String>,
    pub container: String,
    /// Index into [`PlanInput::pools`].
    pub pool: Option<usize>,
    pub location: Location,
}

/// Everything the solver needs, with trust as matrices over [`PlanInput::tenants`].
#[derive(Debug, Clone)]
pub struct PlanInput {
    pub file: String,
    pub pools: Vec<Pool>,
    /// Sorted by name.
    pub workloads: Vec<Workload>,
    /// Sorted by name.
    pub tenants: Vec<TenantInfo>,
    /// `trust[a][b]`: the policy's trust between tenants `a` and `b` (full on the diagonal).
    pub trust: Vec<Vec<Trust>>,
    /// `node_ok[a][b]`: whether `a` and `b` may run on one node: the model's admission table at the
    /// node level, with the acceptances the policy holds for the pair today (always for trust above
    /// `none`; for `none` only where the policy accepts every rule that reports the shared node).
    pub node_ok: Vec<Vec<bool>>,
    /// `sharing.maxReplicas` of the policy: the most time-slicing replicas per GPU or instance.
    pub max_replicas: u32,
    pub operator: OperatorSettings,
}

impl PlanInput {
    /// Whether either of `a` and `b` was promised isolation.
    fn promised(&self, a: usize, b: usize) -> bool {
        self.tenants[a].contract == Contract::Isolation
            || self.tenants[b].contract == Contract::Isolation
    }

    /// Whether `a` and `b` may share one time-sliced or MPS device: the model's admission table
    /// admits them there under every mechanism that shares a device (trust `full`, neither promised
    /// isolation). One tenant may always share with itself.
    pub fn may_share_device(&self, a: usize, b: usize) -> bool {
        a == b || Admission::admits_device(self.trust[a][b], self.promised(a, b))
    }

    /// Whether `a` and `b` may use instances of one physical GPU (the admission table: trust above
    /// `none`).
    pub fn may_share_gpu(&self, a: usize, b: usize) -> bool {
        a == b
            || Admission::admits(Level::MigGpu, self.trust[a][b], self.promised(a, b), |_| {
                false
            })
    }

    /// Whether `a` and `b` may run on one node (the admission table, with the acceptances the
    /// policy holds today: [`PlanInput::node_ok`]).
    pub fn may_share_node(&self, a: usize, b: usize) -> bool {
        a == b || self.node_ok[a][b]
    }

    /// Total replicas of every workload.
    pub fn replica_count(&self) -> usize {
        self.workloads.iter().map(|w| w.replicas as usize).sum()
    }
}

fn limits() -> Limits {
    Limits {
        max_file_bytes: MAX_PLAN_BYTES,
        ..Limits::default()
    }
}

/// Reads and checks a plan file. Syntax errors and unknown fields stop the reading (with their
/// location); after that every validation error is collected, sorted by position.
pub fn parse(text: &str, file: &str) -> Result<PlanFile, Vec<Diagnostic>> {
    let (raw, cx) =
        ValidationContext::read::<Option<RawPlan>>(text, file, &limits(), Code::InvalidPlanFile)
            .map_err(|d| vec![reword(d)])?;
    let mut check = PlanCheck { cx };
    let plan = check.plan(raw.unwrap_or_default(), text);
    check.cx.finish(plan)
}

fn reword(mut d: Diagnostic) -> Diagnostic {
    if d.code == Code::NotOneDocument {
        d.message = "a plan file holds one YAML document; this one has a second after `---`".into();
    }
    d
}

/// The plan file's checks, reporting into the shared validation context.
struct PlanCheck {
    cx: ValidationContext,
}

impl PlanCheck {
    fn plan(&mut self, raw: RawPlan, text: &str) -> PlanFile {
        self.cx
            .expect_word(raw.api_version.as_ref(), "apiVersion", API_VERSION);
        self.cx.expect_word(raw.kind.as_ref(), "kind", KIND);
        let policy = match (&raw.policy, &raw.policy_file) {
            (Some(p), Some(f)) => {
                self.cx.error(
                    self.cx.loc(f),
                    format!(
                        "give the policy inline (`policy:` on line {}) or by `policyFile:`, not both",
                        gpu_trust_source::position(p.referenced.line())
                    ),
                );
                PolicySource::Default
            }
            (Some(p), None) => PolicySource::Inline {
                text: inline_policy_text(
                    text,
                    gpu_trust_source::position(p.referenced.line()),
                    gpu_trust_source::position(p.referenced.column()),
                ),
            },
            (None, Some(f)) => {
                if f.value.trim().is_empty() {
                    self.cx.error(self.cx.loc(f), "policyFile is empty");
                }
                PolicySource::File {
                    path: f.value.clone(),
                    location: self.cx.loc(f),
                }
            }
            (None, None) => PolicySource::Default,
        };
        let inventory = self.inventory(raw.inventory);
        let total: u64 = raw
            .workloads
            .iter()
            .filter_map(|w| w.value.replicas.as_ref().map(|r| u64::from(r.value)))
            .sum();
        if total > MAX_TOTAL_REPLICAS {
            self.cx.error(
                self.cx.whole_file(),
                format!("the workloads ask for {total} replicas; a plan holds at most {MAX_TOTAL_REPLICAS}"),
            );
        }
        let pool_names: BTreeSet<String> = inventory.iter().map(|p| p.name.clone()).collect();
        let workloads = self.workloads(raw.workloads, &pool_names, &inventory);
        let operator = raw
            .gpu_operator
            .map(|o| self.operator(o))
            .unwrap_or_default();
        PlanFile {
            file: self.cx.file().to_string(),
            policy,
            inventory,
            workloads,
            operator,
        }
    }

    fn operator(&mut self, raw: S<RawOperator>) -> OperatorSettings {
        let o = raw.value;
        let mut out = OperatorSettings::default();
        if let Some(ns) = &o.namespace {
            if !is_dns_label(&ns.value) {
                self.cx.error(
                    self.cx.loc(ns),
                    format!(
                        "gpuOperator.namespace `{}` is not a namespace name (lower-case letters, digits and `-`, at most 63)",
                        ns.value
                    ),
                );
            } else {
                out.namespace = ns.value.clone();
            }
        }
        out.version = self.cx.version(o.version.as_ref(), "gpuOperator.version");
        out.toolkit_version = self
            .cx
            .version(o.toolkit_version.as_ref(), "gpuOperator.toolkitVersion");
        out.device_plugin_version = self.cx.version(
            o.device_plugin_version.as_ref(),
            "gpuOperator.devicePluginVersion",
        );
        out
    }

    fn inventory(&mut self, raw: Vec<S<RawPool>>) -> Vec<Pool> {
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        let mut out = Vec::new();
        for entry in raw {
            let loc = self.cx.loc(&entry);
            let p = entry.value;
            let Some(name) = p.pool else {
                self.cx.error(loc, "inventory entry needs a `pool` name");
                continue;
            };
            let name_loc = self.cx.loc(&name);
            if !is_dns_label(&name.value) || name.value.len() > 40 {
                self.cx.error(
                    name_loc.clone(),
                    format!(
                        "pool name `{}` must be lower-case letters, digits and `-`, at most 40 characters (it names nodes)",
                        name.value
                    ),
                );
            }
            if let Some(first) = seen.get(&name.value) {
                self.cx.error(
                    name_loc.clone(),
                    format!(
                        "pool `{}` is declared twice (first on line {first})",
                        name.value
                    ),
                );
                continue;
            }
            seen.insert(name.value.clone(), name_loc.line);
            let model = match &p.model {
                None => {
                    self.cx.error(
                        name_loc.clone(),
                        format!("pool `{}` needs a `model`", name.value),
                    );
                    None
                }
                Some(m) => match catalogue::lookup(&m.value) {
                    Some(model) => Some(model),
                    None => {
                        let hints = catalogue::suggest(&m.value);
                        let hint = if hints.is_empty() {
                            String::new()
                        } else {
                            format!("; did you mean {}?", hints.join(", "))
                        };
                        self.cx.error(
                            self.cx.loc(m),
                            format!(
                                "GPU model `{}` is not in the catalogue (`gpu-trust catalogue` lists them){hint}",
                                m.value
                            ),
                        );
                        None
                    }
                },
            };
            let gpus_per_node = match &p.gpus_per_node {
                None => {
                    self.cx.error(
                        name_loc.clone(),
                        format!("pool `{}` needs `gpusPerNode`", name.value),
                    );
                    None
                }
                Some(g) if g.value == 0 || g.value > MAX_GPUS_PER_NODE => {
                    self.cx.error(
                        self.cx.loc(g),
                        format!("gpusPerNode must be between 1 and {MAX_GPUS_PER_NODE}"),
                    );
                    None
                }
                Some(g) => Some(g.value),
            };
            let nodes = match &p.nodes {
                None => {
                    self.cx.error(
                        name_loc.clone(),
                        format!(
                            "pool `{}` needs `nodes` (how many are available)",
                            name.value
                        ),
                    );
                    None
                }
                Some(n) if n.value > MAX_NODES_PER_POOL => {
                    self.cx.error(
                        self.cx.loc(n),
                        format!("nodes must be at most {MAX_NODES_PER_POOL}"),
                    );
                    None
                }
                Some(n) => Some(n.value),
            };
            let driver_version = self.cx.version(p.driver_version.as_ref(), "driverVersion");
            let tee = p.tee.as_ref().and_then(|t| {
                let found = fleet::tee(&t.value);
                if found.is_none() {
                    let names: Vec<&str> = fleet::TEES.iter().map(|t| t.name).collect();
                    self.cx.error(
                        self.cx.loc(t),
                        format!(
                            "tee `{}` is not one of {} (the nodes' CPU TEE: AMD SEV-SNP or Intel TDX)",
                            t.value,
                            names.join(", ")
                        ),
                    );
                }
                found
            });
            if let (Some(model), Some(gpus_per_node), Some(nodes)) = (model, gpus_per_node, nodes) {
                out.push(Pool {
                    name: name.value,
                    model,
                    gpus_per_node,
                    nodes,
                    driver_version,
                    tee,
                    location: name_loc,
                });
            }
        }
        out
    }

    fn workloads(
        &mut self,
        raw: Vec<S<RawWorkload>>,
        pools: &BTreeSet<String>,
        inventory: &[Pool],
    ) -> Vec<WorkloadSpec> {
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        let mut out = Vec::new();
        for entry in raw {
            let loc = self.cx.loc(&entry);
            let w = entry.value;
            let Some(name) = w.name else {
                self.cx.error(loc, "workload needs a `name`");
                continue;
            };
            let name_loc = self.cx.loc(&name);
            let mut ok = true;
            if !is_dns_label(&name.value) || name.value.len() > 50 {
                self.cx.error(
                    name_loc.clone(),
                    format!(
                        "workload name `{}` must be lower-case letters, digits and `-`, at most 50 characters (it names pods)",
                        name.value
                    ),
                );
                ok = false;
            }
            if let Some(first) = seen.get(&name.value) {
                self.cx.error(
                    name_loc.clone(),
                    format!(
                        "workload `{}` is declared twice (first on line {first})",
                        name.value
                    ),
                );
                continue;
            }
            seen.insert(name.value.clone(), name_loc.line);
            let tenant = match &w.tenant {
                Some(t) if !t.value.trim().is_empty() => t.value.clone(),
                Some(t) => {
                    self.cx.error(self.cx.loc(t), "tenant is empty");
                    ok = false;
                    String::new()
                }
                None => {
                    self.cx.error(
                        name_loc.clone(),
                        format!("workload `{}` needs a `tenant`", name.value),
                    );
                    ok = false;
                    String::new()
                }
            };
            if let Some(ns) = &w.namespace {
                if !is_dns_label(&ns.value) {
                    self.cx.error(
                        self.cx.loc(ns),
                        format!("namespace `{}` is not a namespace name", ns.value),
                    );
                    ok = false;
                }
            }
            let kind = match &w.kind {
                None => {
                    self.cx.error(
                        name_loc.clone(),
                        format!(
                            "workload `{}` needs a `kind` (inference, notebook, training or batch)",
                            name.value
                        ),
                    );
                    ok = false;
                    WorkloadClass::Unknown
                }
                Some(k) => match WorkloadClass::parse(&k.value) {
                    Some(c) => c,
                    None => {
                        self.cx.error(
                            self.cx.loc(k),
                            format!(
                                "kind `{}` is not one of inference, notebook, training, batch",
                                k.value
                            ),
                        );
                        ok = false;
                        WorkloadClass::Unknown
                    }
                },
            };
            let replicas = match &w.replicas {
                None => 1,
                Some(r) if r.value > MAX_REPLICAS => {
                    self.cx.error(
                        self.cx.loc(r),
                        format!("replicas must be at most {MAX_REPLICAS}"),
                    );
                    ok = false;
                    0
                }
                Some(r) => r.value,
            };
            let peak_memory_mib = match &w.peak_memory {
                None => {
                    if kind != WorkloadClass::Training && kind != WorkloadClass::Unknown {
                        self.cx.error(
                            name_loc.clone(),
                            format!(
                                "workload `{}` needs `peakMemory` (per replica, e.g. 18GiB): the slice is sized for the peak",
                                name.value
                            ),
                        );
                        ok = false;
                    }
                    None
                }
                Some(m) => match parse_memory_mib(&m.value) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        self.cx.error(self.cx.loc(m), format!("peakMemory: {e}"));
                        ok = false;
                        None
                    }
                },
            };
            let compute = match &w.compute {
                None => None,
                Some(c) if !(c.value > 0.0 && c.value <= 1.0) => {
                    self.cx.error(
                        self.cx.loc(c),
                        "compute is a fraction of one GPU, above 0 and at most 1",
                    );
                    ok = false;
                    None
                }
                Some(c) => Some(c.value),
            };
            let latency = match &w.latency {
                None => None,
                Some(l) => match Latency::parse(&l.value) {
                    Some(l) => Some(l),
                    None => {
                        self.cx.error(
                            self.cx.loc(l),
                            format!(
                                "latency `{}` is not one of critical, standard, tolerant",
                                l.value
                            ),
                        );
                        ok = false;
                        None
                    }
                },
            };
            let gpus = match &w.gpus {
                None => 1,
                Some(g) if kind != WorkloadClass::Training => {
                    self.cx.error(
                        self.cx.loc(g),
                        "gpus is for training (whole GPUs per replica); other kinds give peakMemory and compute",
                    );
                    ok = false;
                    1
                }
                Some(g) if g.value == 0 || g.value > MAX_GPUS_PER_NODE => {
                    self.cx.error(
                        self.cx.loc(g),
                        format!("gpus must be between 1 and {MAX_GPUS_PER_NODE}"),
                    );
                    ok = false;
                    1
                }
                Some(g) => g.value,
            };
            for (field, value) in [("image", &w.image), ("container", &w.container)] {
                if let Some(v) = value {
                    let bad = v.value.trim().is_empty() || v.value.contains(char::is_whitespace);
                    let bad_container = field == "container" && !is_dns_label(&v.value);
                    if bad || bad_container {
                        self.cx.error(
                            self.cx.loc(v),
                            format!("{field} `{}` is not valid", v.value),
                        );
                        ok = false;
                    }
                }
            }
            let pool = match &w.pool {
                None => None,
                Some(p) if pools.contains(&p.value) => Some(p.value.clone()),
                Some(p) => {
                    let known: Vec<&str> = inventory.iter().map(|p| p.name.as_str()).collect();
                    self.cx.error(
                        self.cx.loc(p),
                        format!(
                            "pool `{}` is not in the inventory (pools: {})",
                            p.value,
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    );
                    ok = false;
                    None
                }
            };
            if ok {
                out.push(WorkloadSpec {
                    name: name.value,
                    tenant,
                    namespace: w.namespace.map(|n| n.value),
                    kind,
                    replicas,
                    peak_memory_mib,
                    compute,
                    latency,
                    gpus,
                    image: w.image.map(|i| i.value),
                    container: w.container.map(|c| c.value),
                    pool,
                    location: name_loc,
                });
            }
        }
        out
    }
}

/// A Kubernetes DNS label: lower-case alphanumerics and `-`, starting and ending alphanumeric, 1-63.
pub(crate) fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// The inline policy as a document of its own that keeps the plan file's positions: lines before it
/// are blank, the first line keeps its column by spaces, and the text ends at the next top-level key.
fn inline_policy_text(text: &str, line: u32, column: u32) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let first = (line.max(1) - 1) as usize;
    let mut out = String::new();
    for _ in 0..first.min(lines.len()) {
        out.push('\n');
    }
    let Some(start) = lines.get(first) else {
        return out;
    };
    let col = (column.max(1) - 1) as usize;
    // The value may start on the key's line (flow style) or on a later line (block style).
    let head: String = start
        .char_indices()
        .map(|(i, c)| if i < col { ' ' } else { c })
        .collect();
    out.push_str(&head);
    out.push('\n');
    for l in lines.iter().skip(first + 1) {
        let top_level = l
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace() && c != '#');
        if top_level {
            break;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

impl PlanFile {
    /// Applies the tenancy policy: each workload's namespace and tenant are checked against it, and
    /// trust between the tenants (and which `none` pairs may share a node, judged on `today`) becomes
    /// the matrices of [`PlanInput`].
    pub fn resolve(&self, policy: &Policy, today: Date) -> Result<PlanInput, Vec<Diagnostic>> {
        let mut errors = Vec::new();
        // Namespaces first: explicit, else the tenant's first explicit namespace, else its name.
        let label_key = policy.tenant_labels().first().cloned();
        let declared: BTreeSet<&str> = policy.declared_tenants().collect();
        let mut namespaces: BTreeMap<String, NamespaceInfo> = BTreeMap::new();
        let mut chosen: Vec<String> = Vec::new();
        let probe = policy.resolve(&[]);
        let first_explicit = |tenant: &str| -> Option<String> {
            let id = probe.tenant_by_name(tenant)?;
            probe
                .tenant(id)
                .declared_namespaces
                .iter()
                .find(|n| !n.contains('*'))
                .cloned()
        };
        for w in &self.workloads {
            let ns = match &w.namespace {
                Some(ns) => ns.clone(),
                None => match first_explicit(&w.tenant) {
                    Some(ns) => ns,
                    None if declared.contains(w.tenant.as_str()) => {
                        errors.push(Diagnostic::error(Code::InvalidPlanFile,
                            w.location.clone(),
                            format!(
                                "workload `{}`: tenant `{}` declares no namespace by name (only globs); give the workload a `namespace`",
                                w.name, w.tenant
                            ),
                        ));
                        String::new()
                    }
                    None => w.tenant.clone(),
                },
            };
            if !ns.is_empty() && !is_dns_label(&ns) {
                errors.push(Diagnostic::error(Code::InvalidPlanFile,
                    w.location.clone(),
                    format!(
                        "workload `{}`: tenant `{}` is used as the namespace name but is not one; give the workload a `namespace`",
                        w.name, w.tenant
                    ),
                ));
            }
            let mut labels = BTreeMap::new();
            if !declared.contains(w.tenant.as_str()) && ns != w.tenant {
                if let Some(key) = &label_key {
                    labels.insert(key.clone(), w.tenant.clone());
                }
            }
            namespaces
                .entry(ns.clone())
                .and_modify(|info| {
                    for (k, v) in &labels {
                        info.labels.entry(k.clone()).or_insert(v.clone());
                    }
                })
                .or_insert(NamespaceInfo {
                    name: ns.clone(),
                    labels,
                    object: None,
                });
            chosen.push(ns);
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let infos: Vec<NamespaceInfo> = namespaces.values().cloned().collect();
        let tenancy = policy.resolve(&infos);
        for d in tenancy.diagnostics() {
            if d.is_error() {
                errors.push(d.clone());
            }
        }
        let mut tenant_ids = Vec::new();
        for (w, ns) in self.workloads.iter().zip(&chosen) {
            if tenancy.is_platform(ns) {
                errors.push(Diagnostic::error(Code::InvalidPlanFile,
                    w.location.clone(),
                    format!(
                        "workload `{}`: namespace `{ns}` is a platform namespace of the policy, not a tenant's",
                        w.name
                    ),
                ));
                continue;
            }
            match tenancy.tenant_of(ns) {
                Some(id) if tenancy.name(id) == w.tenant => tenant_ids.push(id),
                Some(id) => errors.push(Diagnostic::error(Code::InvalidPlanFile,
                    w.location.clone(),
                    format!(
                        "workload `{}` says tenant `{}`, but the policy gives its namespace `{ns}` to tenant `{}`",
                        w.name,
                        w.tenant,
                        tenancy.name(id)
                    ),
                )),
                None => errors.push(Diagnostic::error(Code::InvalidPlanFile,
                    w.location.clone(),
                    format!(
                        "workload `{}`: namespace `{ns}` resolves to no tenant; declare tenant `{}` with it in the policy",
                        w.name, w.tenant
                    ),
                )),
            }
        }
        if !errors.is_empty() {
            errors.sort();
            errors.dedup();
            return Err(errors);
        }
        // Tenants with workloads, by name.
        let used: BTreeSet<gpu_trust_policy::TenantId> = tenant_ids.iter().copied().collect();
        let ids: Vec<gpu_trust_policy::TenantId> = used.into_iter().collect();
        let index_of: BTreeMap<gpu_trust_policy::TenantId, usize> =
            ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let tenants: Vec<TenantInfo> = ids
            .iter()
            .map(|id| {
                let t = tenancy.tenant(*id);
                let label = match (&label_key, t.origin) {
                    (Some(key), TenantOrigin::Label) => Some((key.clone(), t.name.clone())),
                    _ => None,
                };
                TenantInfo {
                    name: t.name.clone(),
                    latency: t.latency,
                    confidential: t.confidential,
                    contract: t.contract,
                    label,
                }
            })
            .collect();
        let n = ids.len();
        let mut trust = vec![vec![Trust::Full; n]; n];
        let mut node_ok = vec![vec![true; n]; n];
        for a in 0..n {
            for b in 0..n {
                if a == b {
                    continue;
                }
                let t = tenancy.trust(ids[a], ids[b]);
                trust[a][b] = t;
                let pair = [tenants[a].name.as_str(), tenants[b].name.as_str()];
                let promised = tenants[a].contract == Contract::Isolation
                    || tenants[b].contract == Contract::Isolation;
                node_ok[a][b] = Admission::admits(Level::Node, t, promised, |rule| {
                    tenancy.acceptance_for(rule, pair, today).is_some()
                });
            }
        }
        let pool_index: BTreeMap<&str, usize> = self
            .inventory
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.as_str(), i))
            .collect();
        let mut workloads: Vec<Workload> = self
            .workloads
            .iter()
            .zip(chosen)
            .zip(&tenant_ids)
            .map(|((w, namespace), id)| {
                let tenant = index_of.get(id).copied().unwrap_or(0);
                Workload {
                    name: w.name.clone(),
                    tenant,
                    namespace,
                    kind: w.kind,
                    replicas: w.replicas,
                    peak_memory_mib: w.peak_memory_mib,
                    compute: w.compute,
                    latency: w.latency.unwrap_or(tenants[tenant].latency),
                    gpus: w.gpus,
                    image: w.image.clone(),
                    container: w.container.clone().unwrap_or_else(|| w.name.clone()),
                    pool: w.pool.as_deref().and_then(|p| pool_index.get(p).copied()),
                    location: w.location.clone(),
                }
            })
            .collect();
        workloads.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(PlanInput {
            file: self.file.clone(),
            pools: self.inventory.clone(),
            workloads,
            tenants,
            trust,
            node_ok,
            max_replicas: tenancy.max_replicas(),
            operator: self.operator.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "apiVersion: gpu-trust/v1
kind: Plan
policy:
  tenants:
    - name: search
      namespaces: [search-prod]
    - name: ads
      namespaces: [ads-prod]
  trust:
    relations:
      - {tenants: [search, ads], level: limited}
inventory:
  - pool: h100
    model: H100-SXM5-80GB
    gpusPerNode: 8
    nodes: 2
workloads:
  - name: chat-api
    tenant: search
    kind: inference
    replicas: 3
    peakMemory: 18GiB
  - name: ads-rank
    tenant: ads
    kind: inference
    peakMemory: 8GiB
";

    fn today() -> Date {
        Date::parse("2026-01-01").unwrap()
    }

    #[test]
    fn inline_policy_keeps_plan_positions() {
        let plan = parse(PLAN, "plan.yaml").unwrap();
        let PolicySource::Inline { text } = &plan.policy else {
            panic!("inline policy expected");
        };
        let bad = text.replace("level: limited", "level: limitted");
        let err = gpu_trust_policy::parse(&bad, "plan.yaml").unwrap_err();
        assert_eq!(err[0].location.line, 11, "{err:?}");
        let policy = gpu_trust_policy::parse(text, "plan.yaml").unwrap();
        let input = plan.resolve(&policy, today()).unwrap();
        assert_eq!(input.tenants.len(), 2);
        assert_eq!(input.workloads[0].name, "ads-rank");
        assert_eq!(input.workloads[1].namespace, "search-prod");
        assert_eq!(input.trust[0][1], Trust::Limited);
        assert!(input.node_ok[0][1]);
        assert!(!input.may_share_device(0, 1));
        assert!(input.may_share_gpu(0, 1));
    }

    #[test]
    fn unknown_field_names_its_line() {
        let text = PLAN.replace("    replicas: 3\n", "    replicas: 3\n    replcas: 4\n");
        let err = parse(&text, "plan.yaml").unwrap_err();
        assert_eq!(err[0].location.line, 22, "{err:?}");
        assert!(err[0].message.contains("replcas"), "{err:?}");
    }

    #[test]
    fn validation_errors_are_collected() {
        let text = PLAN
            .replace("model: H100-SXM5-80GB", "model: H100-SXM9")
            .replace(
                "kind: inference\n    replicas: 3",
                "kind: serving\n    replicas: 3",
            );
        let err = parse(&text, "plan.yaml").unwrap_err();
        let lines: Vec<u32> = err.iter().map(|d| d.location.line).collect();
        assert_eq!(lines, vec![14, 20], "{err:?}");
        assert!(err[0].message.contains("not in the catalogue"), "{err:?}");
    }

    #[test]
    fn tenant_must_match_the_policy() {
        let text = PLAN.replace(
            "    tenant: ads\n",
            "    tenant: ads\n    namespace: search-prod\n",
        );
        let plan = parse(&text, "plan.yaml").unwrap();
        let PolicySource::Inline { text } = &plan.policy else {
            panic!()
        };
        let policy = gpu_trust_policy::parse(text, "plan.yaml").unwrap();
        let err = plan.resolve(&policy, today()).unwrap_err();
        assert!(err[0].message.contains("gives its namespace"), "{err:?}");
    }

    /// Every check of the plan file that one file can break at once, each diagnostic as the command
    /// line prints it: wording, order and locations are part of the interface.
    #[test]
    fn validation_diagnostics_are_stable() {
        let text = "apiVersion: gpu-trust/v0
kind: Planning
policy: {}
policyFile: tenancy.yaml
gpuOperator:
  namespace: Bad_NS
  version: latest
  toolkitVersion: 1.x
inventory:
  - pool: H100
    model: H100-SXM5-80GB
    gpusPerNode: 0
    nodes: 1
  - pool: a100
    model: A100-SXM4-99GB
    gpusPerNode: 8
    nodes: 1
    driverVersion: new
    tee: sev
  - pool: a100
    gpusPerNode: 8
    nodes: 1
workloads:
  - name: Chat
    tenant: search
    kind: inference
    peakMemory: 18GiB
  - name: chat
    tenant: ''
    kind: serving
    compute: 2
    latency: fast
  - name: chat
    tenant: ads
    kind: training
    gpus: 0
    namespace: Not_A_Namespace
";
        let errors: Vec<String> = parse(text, "plan.yaml")
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        insta::assert_snapshot!("plan_file_diagnostics", errors.join("\n"));
    }

    #[test]
    fn none_pairs_share_nodes_only_when_accepted() {
        let text = PLAN
            .replace("level: limited}", "level: none}\n  accept:\n    - {rule: GT207, tenants: [search, ads], reason: one team, until: 2026-06-30}");
        let plan = parse(&text, "plan.yaml").unwrap();
        let PolicySource::Inline { text } = &plan.policy else {
            panic!()
        };
        let policy = gpu_trust_policy::parse(text, "plan.yaml").unwrap();
        let input = plan.resolve(&policy, today()).unwrap();
        assert!(input.node_ok[0][1]);
        let later = plan
            .resolve(&policy, Date::parse("2026-07-01").unwrap())
            .unwrap();
        assert!(
            !later.node_ok[0][1],
            "an expired acceptance no longer holds"
        );
    }
}
