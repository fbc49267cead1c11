//! What the audit could judge, layer by layer, as the report carries it (`coverage` of the
//! `gpu-trust/audit/v2` wire format). The rules crate computes it (`gpu_trust_rules::coverage`); the
//! CLI decides the exit code from it.

use crate::Layer;
use serde::Serialize;

/// What the audit could judge, layer by layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// No layer in play has a blocking gap: the audit judged everything the input puts in play.
    pub complete: bool,
    /// The user accepted a partial audit (`--accept-partial`); meaningful when `complete` is false.
    pub accepted_partial: bool,
    /// The five layers, in layer order.
    pub layers: Vec<LayerCoverage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerCoverage {
    pub layer: Layer,
    pub status: CoverageStatus,
    /// Why the layer is in play (or why not), in words.
    pub in_play: String,
    /// What the input lacks for this layer, sorted by reason.
    pub gaps: Vec<Gap>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoverageStatus {
    /// Every check of the layer ran on what it needs.
    Evaluated,
    /// Some checks ran; others lacked input (see the gaps).
    Partial,
    /// The layer is in play but none of its checks could run.
    NotEvaluated,
    /// Nothing in the input puts the layer in play.
    NotInPlay,
}

impl CoverageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CoverageStatus::Evaluated => "evaluated",
            CoverageStatus::Partial => "partial",
            CoverageStatus::NotEvaluated => "not evaluated",
            CoverageStatus::NotInPlay => "not in play",
        }
    }
}

/// One thing the input lacks for a layer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gap {
    pub reason: GapReason,
    /// Whether this gap alone makes the run partial (exit 2 without `--accept-partial`).
    pub blocking: bool,
    pub message: String,
    /// The rules that report this gap as findings, when some do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reported_by: Vec<String>,
    /// The nodes concerned, sorted, at most `MAX_GAP_NAMES`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GapReason {
    /// Workloads request GPUs and the input has no Node object.
    NoNodes,
    /// Workloads request GPUs and the input has nodes, none with NVIDIA GPUs.
    NoGpuNodes,
    /// Pods are bound to nodes that are not in the input.
    MissingNodes,
    /// The input has no RoleBinding or ClusterRoleBinding.
    NoRbac,
    /// A platform hides facts about GPU nodes (driver version, sharing config...).
    HiddenFacts,
    /// A config a node or the ClusterPolicy selects is not in the input.
    UnresolvedConfig,
    /// Documents skipped with `--skip-invalid` (or, in `serve`, that could not be read).
    SkippedInput,
    /// Pods request extended resources DRA may serve with GPUs through a DeviceClass the input lacks.
    UnresolvedExtendedResource,
    /// Tenant containers take their environment from a ConfigMap the input lacks (blocking), or from
    /// a Secret (not blocking), that may set a variable the audit reads (`NVIDIA_VISIBLE_DEVICES`,
    /// `CUDA_*`).
    UnresolvedEnvironment,
    /// Tenant pods name a runtime class whose RuntimeClass the input lacks: whether it is the NVIDIA
    /// runtime is not known.
    UnresolvedRuntimeClass,
    /// Workloads on GPU nodes ask for a GPU no mechanism maps: a resource no row, device plugin or
    /// DeviceClass names, or an allocation record of a scheduler gpu-trust does not know.
    UnmappedGpu,
}

impl GapReason {
    pub fn as_str(self) -> &'static str {
        match self {
            GapReason::NoNodes => "no-nodes",
            GapReason::NoGpuNodes => "no-gpu-nodes",
            GapReason::MissingNodes => "missing-nodes",
            GapReason::NoRbac => "no-rbac",
            GapReason::HiddenFacts => "hidden-facts",
            GapReason::UnresolvedConfig => "unresolved-config",
            GapReason::SkippedInput => "skipped-input",
            GapReason::UnresolvedExtendedResource => "unresolved-extended-resource",
            GapReason::UnresolvedEnvironment => "unresolved-environment",
            GapReason::UnresolvedRuntimeClass => "unresolved-runtime-class",
            GapReason::UnmappedGpu => "unmapped-gpu",
        }
    }

    /// The input that completes a gap of this reason, in words (the partial-audit message's closing
    /// hint); `None` for what no input completes (hidden facts, skipped documents, GPUs asked for in
    /// a way no mechanism maps).
    pub fn completed_by(self) -> Option<&'static str> {
        match self {
            GapReason::NoNodes | GapReason::NoGpuNodes | GapReason::MissingNodes => {
                Some("the Node objects (--nodes FILE)")
            }
            GapReason::NoRbac => Some("the RBAC objects"),
            GapReason::UnresolvedConfig => Some("the device plugin and mig-parted ConfigMaps"),
            GapReason::UnresolvedExtendedResource => Some("the DeviceClasses"),
            GapReason::UnresolvedEnvironment => Some("the ConfigMaps the containers read"),
            GapReason::UnresolvedRuntimeClass => Some("the RuntimeClasses"),
            GapReason::HiddenFacts | GapReason::SkippedInput | GapReason::UnmappedGpu => None,
        }
    }
}

impl Coverage {
    /// The gaps that make the run partial, with their layer, in layer order.
    pub fn blocking(&self) -> impl Iterator<Item = (Layer, &Gap)> {
        self.layers
            .iter()
            .filter(|l| l.status != CoverageStatus::NotInPlay)
            .flat_map(|l| l.gaps.iter().map(move |g| (l.layer, g)))
            .filter(|(_, g)| g.blocking)
    }

    pub fn layer(&self, layer: Layer) -> Option<&LayerCoverage> {
        self.layers.iter().find(|l| l.layer == layer)
    }
}
