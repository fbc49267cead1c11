//! What the audit could judge: per layer, whether the input puts it in play, and whether it was
//! evaluated whole, in part, or not at all, with the reasons. A pure function of the fleet, the tenancy
//! and what was skipped; the report carries it and the CLI decides the exit code from it.
//!
//! Semantics (documented for users in `docs/coverage.md`):
//!
//! - **In play.** The device and host layers are in play when the input has a GPU node, or a tenant
//!   workload that requests a GPU or asks the NVIDIA runtime for devices (`NVIDIA_VISIBLE_DEVICES`).
//!   The contract layer is in play with them (every tenant has a contract, `proportional-compute` by
//!   default). Confidentiality is in play when a tenant is marked confidential or a GPU node has CC
//!   mode on. The control plane is in play when a tenant has a namespace in the input.
//! - **Gaps.** A gap is something the input does not show that a layer's checks need: no Node objects
//!   (or none with GPUs) while workloads request GPUs; pods bound to nodes absent from the input; GPU
//!   nodes where a workload asks for a GPU no mechanism maps (a resource or an allocation record of a
//!   scheduler gpu-trust does not know: how those GPUs are shared is unknown, never exclusive); no
//!   RoleBinding or ClusterRoleBinding; facts a platform hides or configs not in the input; documents
//!   skipped with `--skip-invalid`. A layer with a gap is `partial` when some of its checks still ran
//!   (workload-level checks run on manifests alone) and `not-evaluated` when none could.
//! - **Blocking.** A gap in a layer in play is blocking unless something else already answers for it:
//!   a finding that reports it (GT001, GT002, GT208: facts the platform hides or configs not in the
//!   input, which the user cannot add to the input; GT203: environments a Secret may set, which no
//!   input holds) or `--skip-invalid` (skipped documents; `serve` has no such flag, so what it could
//!   not read blocks). A run with a blocking gap is partial: the CLI exits 2 unless `--accept-partial`
//!   is given. [`GapReason::completed_by`] names the input that completes a blocking gap.

use crate::registry::{codes_reporting, reporting, Reports};
use gpu_trust_model::fleet::{Fleet, NodeFact, UnresolvedKind};
use gpu_trust_model::report::coverage::{Coverage, CoverageStatus, Gap, GapReason, LayerCoverage};
use gpu_trust_model::Layer;
use gpu_trust_policy::Tenancy;
use std::collections::BTreeSet;

/// The most names (nodes) a gap lists; its message says how many there are.
pub const MAX_GAP_NAMES: usize = 20;

/// What a gap does to a layer's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Effect {
    Partial,
    NotEvaluated,
}

/// What coverage is computed from besides the fleet and the tenancy.
#[derive(Debug, Clone, Copy, Default)]
pub struct CoverageInput {
    /// Documents that could not be used, left out of the audit.
    pub skipped_documents: usize,
    /// The user let them be left out (`--skip-invalid`): their gap does not block.
    pub skip_invalid: bool,
    /// `--accept-partial`.
    pub accept_partial: bool,
}

fn names(set: &BTreeSet<String>) -> Vec<String> {
    set.iter().take(MAX_GAP_NAMES).cloned().collect()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Computes the coverage of an audit of `fleet` under `tenancy`: why each layer is in play, then
/// each kind of gap the input leaves, then what the gaps make of each layer.
pub fn coverage(fleet: &Fleet, tenancy: &Tenancy, input: CoverageInput) -> Coverage {
    let play = InPlay::of(fleet, tenancy);
    let mut gaps = Gaps(Vec::new());
    no_gpu_nodes(fleet, &play, &mut gaps);
    missing_nodes(fleet, &mut gaps);
    no_rbac(fleet, &mut gaps);
    hidden_facts(fleet, &mut gaps);
    unresolved_configs(fleet, &mut gaps);
    extended_resources(&play, &mut gaps);
    unmapped_gpus(fleet, &mut gaps);
    unresolved_sources(fleet, tenancy, &mut gaps);
    skipped_input(input, &mut gaps);
    judge(play, gaps, input.accept_partial)
}

/// What puts the layers in play, in words (`None`: nothing does), with the counts the gaps read.
struct InPlay<'f> {
    gpu_nodes: usize,
    gpu_workloads: usize,
    /// Tenant workloads that ask the NVIDIA runtime for GPUs without requesting one.
    runtime_askers: usize,
    /// Pods whose extended resources DRA may serve with GPUs through a DeviceClass the input lacks.
    extended: Vec<&'f gpu_trust_model::fleet::Unresolved>,
    extended_pods: BTreeSet<String>,
    /// The device, host and contract layers.
    gpu_in_play: Option<String>,
    control_in_play: Option<String>,
    confidentiality_in_play: Option<String>,
}

impl<'f> InPlay<'f> {
    /// The GPU layers are in play with a GPU node, else a workload requesting GPUs (or extended
    /// resources DRA may serve with them, or setting NVIDIA_VISIBLE_DEVICES); the control plane with
    /// a tenant namespace; confidentiality with a confidential tenant or a GPU node in CC mode.
    fn of(fleet: &'f Fleet, tenancy: &Tenancy) -> InPlay<'f> {
        let tenant_workloads: Vec<_> = fleet
            .workloads
            .iter()
            .filter(|w| tenancy.tenant_of(&w.namespace).is_some())
            .collect();
        let gpu_workloads = fleet.workloads.iter().filter(|w| w.requests_gpu()).count();
        let runtime_askers = tenant_workloads
            .iter()
            .filter(|w| !w.requests_gpu())
            .filter(|w| {
                w.containers.iter().any(|c| {
                    c.nvidia_visible_devices
                        .as_deref()
                        .is_some_and(gpu_trust_model::host::visible_devices_name_gpus)
                })
            })
            .count();
        let gpu_nodes = fleet.gpu_nodes().count();
        // Pods whose extended resources DRA may serve with GPUs through a DeviceClass the input lacks.
        let extended: Vec<&gpu_trust_model::fleet::Unresolved> = fleet
            .unresolved
            .iter()
            .filter(|u| u.what == UnresolvedKind::ExtendedResource)
            .collect();
        let extended_pods: BTreeSet<String> =
            extended.iter().map(|u| u.object.to_string()).collect();

        let gpu_in_play = if gpu_nodes > 0 {
            Some(format!(
                "the input has {}",
                plural(gpu_nodes, "GPU node", "GPU nodes")
            ))
        } else if gpu_workloads > 0 {
            Some(format!(
                "{} {} GPUs",
                plural(gpu_workloads, "workload", "workloads"),
                if gpu_workloads == 1 {
                    "requests"
                } else {
                    "request"
                }
            ))
        } else if !extended_pods.is_empty() {
            Some(format!(
                "{} extended resources DRA may serve with GPUs",
                plural(
                    extended_pods.len(),
                    "workload requests",
                    "workloads request"
                )
            ))
        } else if runtime_askers > 0 {
            Some(format!(
                "{} {} NVIDIA_VISIBLE_DEVICES",
                plural(runtime_askers, "tenant workload", "tenant workloads"),
                if runtime_askers == 1 { "sets" } else { "set" }
            ))
        } else {
            None
        };

        let tenant_namespaces = tenancy
            .tenants()
            .iter()
            .filter(|t| !t.namespaces.is_empty())
            .count();
        let control_in_play = (tenant_namespaces > 0).then(|| {
            format!(
                "{} {} namespaces in the input, on one API server",
                plural(tenant_namespaces, "tenant", "tenants"),
                if tenant_namespaces == 1 {
                    "has"
                } else {
                    "have"
                }
            )
        });

        let confidential_tenants = tenancy
            .tenants()
            .iter()
            .filter(|t| t.confidential && !t.namespaces.is_empty())
            .count();
        let cc_nodes = fleet
            .gpu_nodes()
            .filter(|(_, n)| {
                n.gpu
                    .as_ref()
                    .and_then(|g| g.cc_mode.as_deref())
                    .is_some_and(|m| m != "off")
            })
            .count();
        let confidentiality_in_play = if confidential_tenants > 0 {
            Some(format!(
                "{} marked confidential",
                plural(confidential_tenants, "tenant is", "tenants are")
            ))
        } else if cc_nodes > 0 {
            Some(format!(
                "{} CC mode on",
                plural(cc_nodes, "GPU node has", "GPU nodes have")
            ))
        } else {
            None
        };

        InPlay {
            gpu_nodes,
            gpu_workloads,
            runtime_askers,
            extended,
            extended_pods,
            gpu_in_play,
            control_in_play,
            confidentiality_in_play,
        }
    }
}

/// Gaps, each with the layers it touches and what it does to them.
struct Gaps(Vec<(Layer, Effect, Gap)>);

impl Gaps {
    fn add(&mut self, layers: &[(Layer, Effect)], gap: Gap) {
        for (l, e) in layers {
            self.0.push((*l, *e, gap.clone()));
        }
    }
}

/// The first three of what the input leaves unresolved, in their own words.
fn examples(unresolved: &[&gpu_trust_model::fleet::Unresolved]) -> String {
    let words: BTreeSet<&str> = unresolved.iter().map(|u| u.message.as_str()).collect();
    words.into_iter().take(3).collect::<Vec<_>>().join("; ")
}

/// The codes of the rules that report a gap as findings.
fn reported_by(what: Reports) -> Vec<String> {
    reporting(what).map(|r| r.code.to_string()).collect()
}

/// Workloads ask for GPUs and the input has no GPU node: the GPU layers are judged on the
/// workloads alone (the contract not at all), which blocks.
fn no_gpu_nodes(fleet: &Fleet, play: &InPlay<'_>, gaps: &mut Gaps) {
    let (gpu_nodes, gpu_workloads, runtime_askers) =
        (play.gpu_nodes, play.gpu_workloads, play.runtime_askers);
    if gpu_nodes == 0 && (gpu_workloads > 0 || runtime_askers > 0) {
        let asking = gpu_workloads.max(runtime_askers);
        let (reason, what) = if fleet.nodes.is_empty() {
            (GapReason::NoNodes, "no Node object".to_string())
        } else {
            (
                GapReason::NoGpuNodes,
                format!(
                    "{} and none with NVIDIA GPUs",
                    plural(fleet.nodes.len(), "node", "nodes")
                ),
            )
        };
        gaps.add(
            &[
                (Layer::Device, Effect::Partial),
                (Layer::Host, Effect::Partial),
                (Layer::Confidentiality, Effect::Partial),
                (Layer::Contract, Effect::NotEvaluated),
            ],
            Gap {
                reason,
                blocking: true,
                message: format!(
                    "the input has {what} while {} {} GPUs: which GPUs and nodes tenants share, and how they are configured, is not judged (only the checks on the workloads themselves ran); add the nodes with --nodes FILE",
                    plural(asking, "workload", "workloads"),
                    if asking == 1 { "asks for" } else { "ask for" }
                ),
                reported_by: Vec::new(),
                nodes: Vec::new(),
            },
        );
    }
}

/// Pods bound to nodes the input does not hold: every GPU layer is partial, which blocks.
fn missing_nodes(fleet: &Fleet, gaps: &mut Gaps) {
    let missing: BTreeSet<String> = fleet
        .unresolved
        .iter()
        .filter(|u| u.what == UnresolvedKind::MissingNode)
        .filter_map(|u| u.node.clone())
        .collect();
    if !missing.is_empty() {
        gaps.add(
            &[
                (Layer::Device, Effect::Partial),
                (Layer::Host, Effect::Partial),
                (Layer::Confidentiality, Effect::Partial),
                (Layer::Contract, Effect::Partial),
            ],
            Gap {
                reason: GapReason::MissingNodes,
                blocking: true,
                message: format!(
                    "pods are bound to {} not in the input: their GPUs, sharing and neighbours are unknown; add those Node objects",
                    plural(missing.len(), "node", "nodes")
                ),
                reported_by: Vec::new(),
                nodes: names(&missing),
            },
        );
    }
}

/// No RBAC binding in the input: the control plane is partial, which blocks.
fn no_rbac(fleet: &Fleet, gaps: &mut Gaps) {
    if fleet.rbac.bindings.is_empty() {
        gaps.add(
            &[(Layer::ControlPlane, Effect::Partial)],
            Gap {
                reason: GapReason::NoRbac,
                blocking: true,
                message: format!("the input has no RoleBinding or ClusterRoleBinding: what tenants' subjects may do to nodes, the GPU Operator's objects and cluster-scoped objects ({}) is not judged; add the RBAC objects (`kubectl get clusterroles,clusterrolebindings,roles,rolebindings -A -o yaml`)", codes_reporting(Reports::Rbac)),
                reported_by: Vec::new(),
                nodes: Vec::new(),
            },
        );
    }
}

/// Facts a platform hides, per layer, with the nodes and the reasons; reported by the rules that
/// declare it, so they do not block.
fn hidden_facts(fleet: &Fleet, gaps: &mut Gaps) {
    // Facts a platform hides: per layer, the nodes and the reasons, reported by the rules that
    // declare it.
    for (layer, facts) in [
        (
            Layer::Device,
            &[
                NodeFact::GpuModel,
                NodeFact::GpuCount,
                NodeFact::SharingConfig,
                NodeFact::MigLayout,
            ][..],
        ),
        (
            Layer::Host,
            &[NodeFact::DriverVersion, NodeFact::ToolkitVersion][..],
        ),
        (Layer::Confidentiality, &[NodeFact::CcMode][..]),
    ] {
        let mut nodes = BTreeSet::new();
        let mut reasons: std::collections::BTreeMap<NodeFact, BTreeSet<&str>> =
            std::collections::BTreeMap::new();
        for (_, n) in fleet.gpu_nodes() {
            let Some(g) = &n.gpu else { continue };
            for u in g.unknown.iter().filter(|u| facts.contains(&u.fact)) {
                nodes.insert(n.name.clone());
                reasons.entry(u.fact).or_default().insert(u.reason.as_str());
            }
        }
        let what: Vec<String> = reasons
            .iter()
            .map(|(fact, why)| {
                format!(
                    "{} ({})",
                    fact.as_str(),
                    why.iter().copied().collect::<Vec<_>>().join("; ")
                )
            })
            .collect();
        if nodes.is_empty() {
            continue;
        }
        gaps.add(
            &[(layer, Effect::Partial)],
            Gap {
                reason: GapReason::HiddenFacts,
                blocking: false,
                message: format!(
                    "{} not given for {}; the checks that need {} cannot judge those nodes",
                    what.join("; "),
                    plural(nodes.len(), "node", "nodes"),
                    if what.len() == 1 { "it" } else { "them" }
                ),
                reported_by: reported_by(Reports::HiddenFacts(layer)),
                nodes: names(&nodes),
            },
        );
    }
}

/// Device plugin or mig-parted configs a node selects that the input lacks: the device layer is
/// partial; reported by the rules that declare it, so they do not block.
fn unresolved_configs(fleet: &Fleet, gaps: &mut Gaps) {
    let unresolved: BTreeSet<String> = fleet
        .unresolved
        .iter()
        .filter(|u| {
            matches!(
                u.what,
                UnresolvedKind::DevicePluginConfig | UnresolvedKind::MigConfig
            )
        })
        .map(|u| u.node.clone().unwrap_or_else(|| u.object.to_string()))
        .collect();
    if !unresolved.is_empty() {
        gaps.add(
            &[(Layer::Device, Effect::Partial)],
            Gap {
                reason: GapReason::UnresolvedConfig,
                blocking: false,
                message: format!(
                    "the device plugin or mig-parted config selected for {} is not in the input: the sharing mode there is unknown",
                    plural(unresolved.len(), "node or object", "nodes or objects")
                ),
                reported_by: reported_by(Reports::UnresolvedConfig),
                nodes: names(&unresolved),
            },
        );
    }
}

/// Extended resources DRA may serve through a DeviceClass the input lacks: blocks.
fn extended_resources(play: &InPlay<'_>, gaps: &mut Gaps) {
    let (extended, extended_pods) = (&play.extended, &play.extended_pods);
    if !extended.is_empty() {
        let nodes: BTreeSet<String> = extended.iter().filter_map(|u| u.node.clone()).collect();
        gaps.add(
            &[
                (Layer::Device, Effect::Partial),
                (Layer::Host, Effect::Partial),
                (Layer::Contract, Effect::Partial),
            ],
            Gap {
                reason: GapReason::UnresolvedExtendedResource,
                blocking: true,
                message: format!(
                    "{} extended resources that DRA may serve with GPUs through a DeviceClass the input lacks, so whether {} GPUs, and how they are shared, is not evaluated ({}); add the DeviceClasses (`kubectl get deviceclasses -o yaml`)",
                    plural(extended_pods.len(), "workload requests", "workloads request"),
                    if extended_pods.len() == 1 { "it gets" } else { "they get" },
                    examples(extended)
                ),
                reported_by: Vec::new(),
                nodes: names(&nodes),
            },
        );
    }
}

/// GPUs asked for in a way no mechanism maps: how those nodes' GPUs are shared is unknown, which
/// blocks.
fn unmapped_gpus(fleet: &Fleet, gaps: &mut Gaps) {
    let unmapped: Vec<&gpu_trust_model::fleet::Unresolved> = fleet
        .unresolved
        .iter()
        .filter(|u| u.what == UnresolvedKind::UnmappedGpu)
        .collect();
    if !unmapped.is_empty() {
        let nodes: BTreeSet<String> = fleet
            .unmapped_nodes()
            .into_iter()
            .filter_map(|n| fleet.nodes.get(n).map(|n| n.name.clone()))
            .collect();
        gaps.add(
            &[
                (Layer::Device, Effect::Partial),
                (Layer::Contract, Effect::Partial),
            ],
            Gap {
                reason: GapReason::UnmappedGpu,
                blocking: true,
                message: format!(
                    "on {} a GPU is asked for in a way no mechanism gpu-trust knows maps, so how {} GPUs are shared, and with whom, is not evaluated ({}); the GPUs there are not taken as exclusive",
                    plural(nodes.len(), "GPU node", "GPU nodes"),
                    if nodes.len() == 1 { "its" } else { "their" },
                    examples(&unmapped)
                ),
                reported_by: Vec::new(),
                nodes: names(&nodes),
            },
        );
    }
}

/// Tenant workloads that take what the audit reads from objects the input lacks (ConfigMaps and
/// RuntimeClasses: blocking) or gpu-trust does not read (Secrets: not blocking).
fn unresolved_sources(fleet: &Fleet, tenancy: &Tenancy, gaps: &mut Gaps) {
    // What tenant workloads take from objects the input lacks or gpu-trust does not read: the rules
    // that read their environment or runtime class cannot judge them all. A Secret is never in the
    // input: the rule that judges it where it can give GPUs says so, and its gap does not block.
    let secret_fix = format!("{} reports, as possible, those a Secret could give GPUs (no GPU request, on GPU nodes whose runtime honours the variable); for the others what the Secret sets is not judged; give Secret sources a prefix no NVIDIA_, CUDA_ or HAMI_ variable starts with (`envFrom[].prefix`) to leave nothing unknown", codes_reporting(Reports::SecretEnvironment));
    for (kind, reason, blocking, what, fix) in [
        (
            UnresolvedKind::EnvFrom,
            GapReason::UnresolvedEnvironment,
            true,
            "take their environment from a ConfigMap not in the input, which may set NVIDIA_VISIBLE_DEVICES or another variable the audit reads",
            "add the ConfigMaps (`kubectl get configmaps -A -o yaml`)",
        ),
        (
            UnresolvedKind::SecretEnv,
            GapReason::UnresolvedEnvironment,
            false,
            "take their environment from a Secret, which gpu-trust never reads, and it may set NVIDIA_VISIBLE_DEVICES or another variable the audit reads",
            secret_fix.as_str(),
        ),
        (
            UnresolvedKind::RuntimeClass,
            GapReason::UnresolvedRuntimeClass,
            true,
            "name a runtime class whose RuntimeClass is not in the input, so whether they run the NVIDIA container runtime, or a confidential one, is not known",
            "add the RuntimeClasses (`kubectl get runtimeclasses -o yaml`)",
        ),
    ] {
        let objects: BTreeSet<String> = fleet
            .unresolved
            .iter()
            .filter(|u| u.what == kind)
            .filter(|u| {
                u.object
                    .namespace
                    .as_deref()
                    .is_some_and(|ns| tenancy.tenant_of(ns).is_some())
            })
            .map(|u| u.object.to_string())
            .collect();
        if objects.is_empty() {
            continue;
        }
        let mut layers = vec![(Layer::Device, Effect::Partial), (Layer::Host, Effect::Partial)];
        // Whether a confidential tenant's GPU workload runs a confidential runtime (GT303's question)
        // is not known either.
        if kind == UnresolvedKind::RuntimeClass
            && fleet.workloads.iter().any(|w| {
                w.requests_gpu()
                    && w.pod_security.runtime_handler.is_none()
                    && w.pod_security.runtime_class_name.is_some()
                    && tenancy
                        .tenant_of(&w.namespace)
                        .is_some_and(|t| tenancy.tenant(t).confidential)
            })
        {
            layers.push((Layer::Confidentiality, Effect::Partial));
        }
        let examples: Vec<&str> = objects.iter().take(3).map(String::as_str).collect();
        gaps.add(
            &layers,
            Gap {
                reason,
                blocking,
                message: format!(
                    "{} {what} ({}{}); {fix}",
                    plural(objects.len(), "tenant workload", "tenant workloads"),
                    examples.join(", "),
                    if objects.len() > examples.len() { ", ..." } else { "" }
                ),
                reported_by: if kind == UnresolvedKind::SecretEnv {
                    reported_by(Reports::SecretEnvironment)
                } else {
                    Vec::new()
                },
                nodes: Vec::new(),
            },
        );
    }
}

/// Documents that could not be read: every layer is partial, which blocks unless `--skip-invalid`
/// let them be left out.
fn skipped_input(input: CoverageInput, gaps: &mut Gaps) {
    if input.skipped_documents > 0 {
        gaps.add(
            &Layer::ALL.map(|l| (l, Effect::Partial)),
            Gap {
                reason: GapReason::SkippedInput,
                blocking: !input.skip_invalid,
                message: format!(
                    "{} could not be read and {} skipped{}: what {} held is not judged",
                    plural(input.skipped_documents, "document", "documents"),
                    if input.skipped_documents == 1 {
                        "was"
                    } else {
                        "were"
                    },
                    if input.skip_invalid {
                        " (--skip-invalid)"
                    } else {
                        ""
                    },
                    if input.skipped_documents == 1 {
                        "it"
                    } else {
                        "they"
                    }
                ),
                reported_by: Vec::new(),
                nodes: Vec::new(),
            },
        );
    }
}

/// Each layer's status from why it is in play and its gaps (none kept for a layer not in play),
/// and whether any blocking gap is left.
fn judge(play: InPlay<'_>, gaps: Gaps, accept_partial: bool) -> Coverage {
    let InPlay {
        gpu_in_play,
        control_in_play,
        confidentiality_in_play,
        ..
    } = play;
    let layers: Vec<LayerCoverage> = Layer::ALL
        .into_iter()
        .map(|layer| {
            let in_play = match layer {
                Layer::Device | Layer::Host | Layer::Contract => gpu_in_play.clone(),
                Layer::Confidentiality => confidentiality_in_play.clone(),
                Layer::ControlPlane => control_in_play.clone(),
            };
            let mut mine: Vec<(Effect, Gap)> = gaps
                .0
                .iter()
                .filter(|(l, _, _)| *l == layer)
                .map(|(_, e, g)| (*e, g.clone()))
                .collect();
            mine.sort_by(|a, b| a.1.cmp(&b.1));
            let status = match &in_play {
                None => CoverageStatus::NotInPlay,
                Some(_) if mine.iter().any(|(e, _)| *e == Effect::NotEvaluated) => {
                    CoverageStatus::NotEvaluated
                }
                Some(_) if !mine.is_empty() => CoverageStatus::Partial,
                Some(_) => CoverageStatus::Evaluated,
            };
            if status == CoverageStatus::NotInPlay {
                mine.clear();
            }
            LayerCoverage {
                layer,
                status,
                in_play: in_play.unwrap_or_else(|| not_in_play(layer).to_string()),
                gaps: mine.into_iter().map(|(_, g)| g).collect(),
            }
        })
        .collect();
    let complete = !layers.iter().any(|l| l.gaps.iter().any(|g| g.blocking));
    Coverage {
        complete,
        accepted_partial: accept_partial,
        layers,
    }
}

fn not_in_play(layer: Layer) -> &'static str {
    match layer {
        Layer::Device | Layer::Host | Layer::Contract => {
            "no GPU node, and no workload requests a GPU or sets NVIDIA_VISIBLE_DEVICES"
        }
        Layer::Confidentiality => "no tenant is marked confidential and no GPU node has CC mode on",
        Layer::ControlPlane => "no tenant has a namespace in the input",
    }
}
