//! Probe evidence: the wire types of `gpu-trust probe` JSON (`schema: "gpu-trust/probe/v1"`).
//!
//! The probe writes a [`ProbeEvidence`]; the audit reads it back with `--evidence FILE` and attaches each
//! scenario's outcome to the device-layer findings of the node and mechanism it was measured on. These
//! types carry no behaviour beyond small lookups ([`Scenario::incident`], [`ProbeEvidence::claims`],
//! [`MeasuredMechanism::applies_to`]) so that the audit needs nothing from the probe crate.
//!
//! Field names are camelCase; enum values are kebab-case. Optional values are left out when absent.

use crate::isolation::Mechanism;
use crate::vocab::Incident;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The `schema` value of probe JSON.
pub const PROBE_SCHEMA: &str = "gpu-trust/probe/v1";

/// One probe run: where it ran, what it detected, and what each scenario measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeEvidence {
    /// Always [`PROBE_SCHEMA`].
    pub schema: String,
    /// The gpu-trust version that measured it.
    pub tool_version: String,
    /// The Kubernetes node (or host) the probe ran on: `--node`, else the host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub victim: DeviceEvidence,
    pub aggressor: DeviceEvidence,
    pub driver: DriverEvidence,
    pub mechanism: MechanismEvidence,
    /// In the order they ran.
    pub scenarios: Vec<ScenarioEvidence>,
}

impl ProbeEvidence {
    /// Whether the document is of a schema this version reads.
    pub fn schema_supported(&self) -> bool {
        self.schema == PROBE_SCHEMA
    }

    /// The scenario's evidence, if that scenario ran.
    pub fn scenario(&self, scenario: Scenario) -> Option<&ScenarioEvidence> {
        self.scenarios.iter().find(|s| s.scenario == scenario)
    }

    /// What this evidence speaks to: one claim per scenario that ran, with the incident it bears on, the
    /// mechanism it was measured under, and a sentence the audit can attach to a finding
    /// (`measured on node-a: victim allocation of 256 MiB failed ... under time-slicing`).
    pub fn claims(&self) -> Vec<EvidenceClaim> {
        self.scenarios
            .iter()
            .map(|s| EvidenceClaim {
                node: self.node.clone(),
                mechanism: self.mechanism.kind,
                incident: s.scenario.incident(),
                scenario: s.scenario,
                verdict: s.verdict,
                statement: match &self.node {
                    Some(node) => format!(
                        "measured on {node}: {} under {} ({})",
                        s.summary, self.mechanism.kind, s.verdict
                    ),
                    None => format!(
                        "measured: {} under {} ({})",
                        s.summary, self.mechanism.kind, s.verdict
                    ),
                },
            })
            .collect()
    }

    /// The claims that bear on `incident` between workloads on `site` that share through `mechanism`. The
    /// evidence speaks for the site when it was measured on that node, or on no named node, or on a
    /// reference host that is not a node of the audited cluster and has the site's GPU model (what a
    /// mechanism leaves shared does not change from one GPU of a model to another; the statement then
    /// says where it was measured). It must also have been measured under that mechanism. A fraction
    /// (HAMi, KAI, Run:ai) adds its own accounting, so evidence of the bare mechanism does not speak for it.
    pub fn claims_for(
        &self,
        site: &EvidenceSite<'_>,
        mechanism: Mechanism,
        incident: Incident,
    ) -> Vec<EvidenceClaim> {
        let reference_model = match self.node.as_deref() {
            None => None,
            Some(n) if n == site.node => None,
            Some(n) if !site.cluster_nodes.contains(n) => match self.model_id() {
                Some(id) if site.model == Some(id) => self.victim.name.clone(),
                _ => return Vec::new(),
            },
            Some(_) => return Vec::new(),
        };
        if self.mechanism.kind.model_mechanism() != Some(mechanism) {
            return Vec::new();
        }
        self.claims()
            .into_iter()
            .filter(|c| c.incident == Some(incident))
            .map(|mut c| {
                if let (Some(model), Some(node)) = (&reference_model, &self.node) {
                    c.statement = c.statement.replacen(
                        &format!("measured on {node}:"),
                        &format!("measured on {node} ({model}, not a node of this cluster):"),
                        1,
                    );
                }
                c
            })
            .collect()
    }

    /// The catalogue id of the GPU the victim ran on, from the name the driver gave it.
    fn model_id(&self) -> Option<&'static str> {
        let name = self.victim.name.as_deref()?;
        crate::catalogue::lookup(name).map(|m| m.id)
    }
}

/// Where a finding shares, as evidence is matched against it: the node, its GPU model (catalogue id),
/// and the names of every node of the audited cluster.
#[derive(Debug, Clone, Copy)]
pub struct EvidenceSite<'a> {
    pub node: &'a str,
    pub model: Option<&'a str>,
    pub cluster_nodes: &'a std::collections::BTreeSet<&'a str>,
}

/// A statement the audit can cite: one scenario's outcome on one node under one mechanism.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceClaim {
    pub node: Option<String>,
    pub mechanism: MeasuredMechanism,
    /// `None` for scenarios that bear on no incident (residual data, utilisation).
    pub incident: Option<Incident>,
    pub scenario: Scenario,
    pub verdict: Verdict,
    pub statement: String,
}

/// A device one role ran on, as given on the command line and as the driver named it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceEvidence {
    /// `--victim` / `--aggressor` as given (`0`, `GPU-...`, `MIG-...`).
    pub spec: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The GPU UUID, or the MIG instance UUID for a MIG device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// For a MIG device: the UUID of the physical GPU it is carved from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_uuid: Option<String>,
    /// NVML index of the physical GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    /// `major.minor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DriverEvidence {
    /// The display driver version (`550.127.05`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The CUDA version the driver supports (`12.4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
}

/// What the probe found in force between the two roles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MechanismEvidence {
    pub kind: MeasuredMechanism,
    /// MIG mode of the victim's physical GPU (`None` when NVML does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_mode: Option<bool>,
    /// Whether an MPS control daemon serves this process (pipe directory with a control socket, or a running
    /// `nvidia-cuda-mps-control`).
    pub mps: bool,
    /// The MPS pipe directory found, when `mps` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mps_pipe_directory: Option<String>,
    /// `default`, `exclusive-process`, `prohibited`, `exclusive-thread`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_mode: Option<String>,
    /// Confidential-computing mode of the system (`on`, `off`), when NVML exposes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc_mode: Option<String>,
    /// Why the probe chose this kind, and anything that qualifies the measurements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The sharing mechanism between victim and aggressor that a probe run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MeasuredMechanism {
    /// Both on one full GPU, each with its own context, no MPS: the driver time-slices them.
    TimeSlicing,
    /// Both clients of one MPS server on one full GPU.
    Mps,
    /// Different MIG instances of one GPU.
    Mig,
    /// The same MIG instance, time-sliced inside it.
    MigTimeSlicing,
    /// The same MIG instance, both clients of an MPS server inside it.
    MigMps,
    /// Different physical GPUs.
    SeparateGpus,
    /// One full GPU in EXCLUSIVE_PROCESS compute mode without MPS: a second process gets no context.
    ExclusiveProcess,
    /// The probe could not tell.
    Unknown,
}

impl MeasuredMechanism {
    pub const ALL: [MeasuredMechanism; 8] = [
        MeasuredMechanism::TimeSlicing,
        MeasuredMechanism::Mps,
        MeasuredMechanism::Mig,
        MeasuredMechanism::MigTimeSlicing,
        MeasuredMechanism::MigMps,
        MeasuredMechanism::SeparateGpus,
        MeasuredMechanism::ExclusiveProcess,
        MeasuredMechanism::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MeasuredMechanism::TimeSlicing => "time-slicing",
            MeasuredMechanism::Mps => "mps",
            MeasuredMechanism::Mig => "mig",
            MeasuredMechanism::MigTimeSlicing => "mig-time-slicing",
            MeasuredMechanism::MigMps => "mig-mps",
            MeasuredMechanism::SeparateGpus => "separate-gpus",
            MeasuredMechanism::ExclusiveProcess => "exclusive-process",
            MeasuredMechanism::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<MeasuredMechanism> {
        MeasuredMechanism::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// The mechanism of the isolation model this measurement stands for: both roles on one full GPU without
    /// MPS are [`Mechanism::TimeSlicing`], different MIG instances [`Mechanism::MigInstance`], different
    /// GPUs (or a GPU that admits one process) [`Mechanism::Exclusive`]. `None` when unknown.
    pub fn model_mechanism(self) -> Option<Mechanism> {
        Some(match self {
            MeasuredMechanism::TimeSlicing => Mechanism::TimeSlicing,
            MeasuredMechanism::Mps => Mechanism::Mps,
            MeasuredMechanism::Mig => Mechanism::MigInstance,
            MeasuredMechanism::MigTimeSlicing => Mechanism::MigTimeSlicing,
            MeasuredMechanism::MigMps => Mechanism::MigMps,
            MeasuredMechanism::SeparateGpus | MeasuredMechanism::ExclusiveProcess => {
                Mechanism::Exclusive
            }
            MeasuredMechanism::Unknown => return None,
        })
    }
}

impl fmt::Display for MeasuredMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one probe scenario does to the victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// The aggressor allocates all the device memory it can get.
    MemoryExhaustion,
    /// The aggressor launches long kernels back to back.
    ComputeHog,
    /// The aggressor runs a memory-bound copy kernel.
    Bandwidth,
    /// The aggressor fills memory with a marker pattern, frees it and exits; the victim scans fresh memory.
    ResidualData,
    /// Two equal victims: NVML utilisation against each process's own throughput.
    Utilisation,
    /// The aggressor triggers an illegal memory access.
    DeviceFault,
}

impl Scenario {
    /// In the order the probe runs them: the device fault last, since under MPS it puts the server in FAULT
    /// until its clients exit, which would spoil the scenarios after it.
    pub const ALL: [Scenario; 6] = [
        Scenario::MemoryExhaustion,
        Scenario::ComputeHog,
        Scenario::Bandwidth,
        Scenario::ResidualData,
        Scenario::Utilisation,
        Scenario::DeviceFault,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::MemoryExhaustion => "memory-exhaustion",
            Scenario::ComputeHog => "compute-hog",
            Scenario::Bandwidth => "bandwidth",
            Scenario::ResidualData => "residual-data",
            Scenario::Utilisation => "utilisation",
            Scenario::DeviceFault => "device-fault",
        }
    }

    pub fn parse(s: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// The incident of the isolation model this scenario measures: memory exhaustion and device faults
    /// directly; the compute hog and bandwidth scenarios are both compute contention. Residual data (a
    /// confidentiality property of the device) and utilisation (a report) bear on no incident.
    pub fn incident(self) -> Option<Incident> {
        match self {
            Scenario::MemoryExhaustion => Some(Incident::MemoryExhaustion),
            Scenario::DeviceFault => Some(Incident::DeviceFault),
            Scenario::ComputeHog | Scenario::Bandwidth => Some(Incident::ComputeContention),
            Scenario::ResidualData | Scenario::Utilisation => None,
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a scenario's measurements say about the boundary between the two roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The victim was not harmed beyond the threshold.
    Isolated,
    /// The aggressor harmed the victim beyond the threshold.
    NotIsolated,
    /// The measurements do not decide it (a phase failed or timed out, or the aggressor did not act).
    Inconclusive,
    /// A report, not a verdict (utilisation).
    ReportOnly,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Isolated => "isolated",
            Verdict::NotIsolated => "not-isolated",
            Verdict::Inconclusive => "inconclusive",
            Verdict::ReportOnly => "report-only",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One scenario: the victim alone, the victim with the aggressor, the comparison and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioEvidence {
    pub scenario: Scenario,
    pub verdict: Verdict,
    /// One sentence on what was measured (`victim p99 kernel latency 3.10x baseline`).
    pub summary: String,
    /// The threshold the verdict applied (`p99 slowdown < 1.20x`), when the scenario has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<String>,
    pub baseline: PhaseEvidence,
    pub contended: PhaseEvidence,
    #[serde(default, skip_serializing_if = "Comparison::is_empty")]
    pub comparison: Comparison,
}

/// One run of a scenario (baseline or contended).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseEvidence {
    /// What the victim measured; absent when the victim failed before measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim: Option<Measurement>,
    /// What the aggressor achieved (contended runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggressor: Option<AggressorReport>,
    /// The second victim's measurement (utilisation, contended run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<Measurement>,
    /// Mean NVML GPU utilisation sampled while the phase measured (utilisation scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvml_gpu_utilisation_percent: Option<f64>,
    /// Why the phase did not complete (timeout, worker failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A victim's measurements; the scenario decides which parts are present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Measurement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryMeasurement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyMeasurement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<BandwidthMeasurement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultMeasurement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residue: Option<ResidueMeasurement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<ThroughputMeasurement>,
}

/// Memory exhaustion, victim side.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryMeasurement {
    /// The size of the working set the victim holds and then asks for again.
    pub working_set_mib: u64,
    /// Whether the new allocation of the working set succeeded.
    pub allocation_ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_error: Option<String>,
    /// Whether the buffers the victim held before still hold their pattern.
    pub checksum_intact: bool,
    /// Free device memory the victim's driver reported before the new allocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_mib: Option<u64>,
}

/// Latency of a short fixed kernel, launch to completion as the victim's host thread sees it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LatencyMeasurement {
    pub samples: u32,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BandwidthMeasurement {
    /// Bytes read plus bytes written per second, in GB/s (10^9).
    pub gb_per_s: f64,
    pub buffer_mib: u64,
    pub passes: u32,
}

/// Device fault, victim side.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultMeasurement {
    /// The victim's context still ran a kernel and its buffer kept its pattern.
    pub context_survived: bool,
    pub next_kernel_ok: bool,
    pub checksum_intact: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Residual data, victim side: fresh allocations scanned for the aggressor's marker.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResidueMeasurement {
    pub scanned_mib: u64,
    /// 64-bit words equal to the marker.
    pub marker_words: u64,
}

/// Useful work: fixed-size kernels completed per second.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThroughputMeasurement {
    pub kernels_per_s: f64,
    pub seconds: f64,
}

/// What the aggressor achieved; a verdict needs proof that it acted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AggressorReport {
    /// Device memory it held (memory exhaustion) or filled with the marker (residual data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated_mib: Option<u64>,
    /// Hog or copy kernels it completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels_completed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gb_per_s: Option<f64>,
    /// Whether its illegal memory access raised an error in its own context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_raised: Option<bool>,
    /// The driver's error for it (`CUDA_ERROR_ILLEGAL_ADDRESS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_error: Option<String>,
}

/// Contended against baseline.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_slowdown: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_slowdown: Option<f64>,
    /// Contended bandwidth over baseline bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_ratio: Option<f64>,
    /// The victim's contended throughput over its throughput alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ratio: Option<f64>,
    /// Both processes' contended throughput together over the victim's throughput alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combined_throughput_ratio: Option<f64>,
}

impl Comparison {
    pub fn is_empty(&self) -> bool {
        self == &Comparison::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(kind: MeasuredMechanism) -> ProbeEvidence {
        ProbeEvidence {
            schema: PROBE_SCHEMA.into(),
            tool_version: "0.0.0".into(),
            node: Some("gpu-a".into()),
            victim: DeviceEvidence::default(),
            aggressor: DeviceEvidence::default(),
            driver: DriverEvidence::default(),
            mechanism: MechanismEvidence {
                kind,
                mig_mode: Some(false),
                mps: false,
                mps_pipe_directory: None,
                compute_mode: None,
                cc_mode: None,
                notes: vec![],
            },
            scenarios: vec![
                ScenarioEvidence {
                    scenario: Scenario::MemoryExhaustion,
                    verdict: Verdict::NotIsolated,
                    summary: "victim allocation of 256 MiB failed".into(),
                    threshold: None,
                    baseline: PhaseEvidence::default(),
                    contended: PhaseEvidence::default(),
                    comparison: Comparison::default(),
                },
                ScenarioEvidence {
                    scenario: Scenario::ResidualData,
                    verdict: Verdict::Isolated,
                    summary: "no marker found".into(),
                    threshold: None,
                    baseline: PhaseEvidence::default(),
                    contended: PhaseEvidence::default(),
                    comparison: Comparison::default(),
                },
            ],
        }
    }

    #[test]
    fn scenarios_map_to_incidents() {
        assert_eq!(
            Scenario::MemoryExhaustion.incident(),
            Some(Incident::MemoryExhaustion)
        );
        assert_eq!(
            Scenario::DeviceFault.incident(),
            Some(Incident::DeviceFault)
        );
        assert_eq!(
            Scenario::ComputeHog.incident(),
            Some(Incident::ComputeContention)
        );
        assert_eq!(
            Scenario::Bandwidth.incident(),
            Some(Incident::ComputeContention)
        );
        assert_eq!(Scenario::ResidualData.incident(), None);
        assert_eq!(Scenario::Utilisation.incident(), None);
    }

    #[test]
    fn names_round_trip() {
        for s in Scenario::ALL {
            assert_eq!(Scenario::parse(s.as_str()), Some(s));
        }
        for m in MeasuredMechanism::ALL {
            assert_eq!(MeasuredMechanism::parse(m.as_str()), Some(m));
        }
    }

    fn site<'a>(
        node: &'a str,
        model: Option<&'a str>,
        cluster: &'a std::collections::BTreeSet<&'a str>,
    ) -> EvidenceSite<'a> {
        EvidenceSite {
            node,
            model,
            cluster_nodes: cluster,
        }
    }

    #[test]
    fn time_slicing_evidence_speaks_for_time_slicing_nodes_only() {
        let ev = evidence(MeasuredMechanism::TimeSlicing);
        let cluster = ["gpu-a", "gpu-b"].into_iter().collect();
        let on = |node| site(node, None, &cluster);
        let claims = ev.claims_for(
            &on("gpu-a"),
            Mechanism::TimeSlicing,
            Incident::MemoryExhaustion,
        );
        assert_eq!(claims.len(), 1);
        assert_eq!(
            claims[0].statement,
            "measured on gpu-a: victim allocation of 256 MiB failed under time-slicing (not-isolated)"
        );
        assert!(ev
            .claims_for(
                &on("gpu-b"),
                Mechanism::TimeSlicing,
                Incident::MemoryExhaustion
            )
            .is_empty());
        assert!(ev
            .claims_for(
                &on("gpu-a"),
                Mechanism::MigInstance,
                Incident::MemoryExhaustion
            )
            .is_empty());
        assert!(ev
            .claims_for(
                &on("gpu-a"),
                Mechanism::HamiVgpu,
                Incident::MemoryExhaustion
            )
            .is_empty());
        assert!(ev
            .claims_for(&on("gpu-a"), Mechanism::TimeSlicing, Incident::DeviceFault)
            .is_empty());
    }

    #[test]
    fn evidence_from_a_reference_host_speaks_for_nodes_of_its_gpu_model_and_says_where() {
        let mut ev = evidence(MeasuredMechanism::TimeSlicing);
        ev.node = Some("bench-host".into());
        ev.victim.name = Some("NVIDIA H200".into());
        let h200 = crate::catalogue::lookup("NVIDIA H200").map(|m| m.id);
        let h100 = crate::catalogue::lookup("NVIDIA H100 80GB HBM3").map(|m| m.id);
        assert!(h200.is_some() && h100.is_some() && h200 != h100);
        let cluster = ["gpu-a", "gpu-b"].into_iter().collect();
        let claims = ev.claims_for(
            &site("gpu-a", h200, &cluster),
            Mechanism::TimeSlicing,
            Incident::MemoryExhaustion,
        );
        assert_eq!(claims.len(), 1);
        assert_eq!(
            claims[0].statement,
            "measured on bench-host (NVIDIA H200, not a node of this cluster): victim allocation of 256 \
             MiB failed under time-slicing (not-isolated)"
        );
        // Another GPU model, or a node of unknown model: the measurement does not speak for it.
        for model in [h100, None] {
            assert!(ev
                .claims_for(
                    &site("gpu-a", model, &cluster),
                    Mechanism::TimeSlicing,
                    Incident::MemoryExhaustion
                )
                .is_empty());
        }
        // Measured on another node of the cluster: that node's own evidence, never another's.
        let cluster_with_host = ["gpu-a", "bench-host"].into_iter().collect();
        assert!(ev
            .claims_for(
                &site("gpu-a", h200, &cluster_with_host),
                Mechanism::TimeSlicing,
                Incident::MemoryExhaustion
            )
            .is_empty());
    }

    #[test]
    fn measured_mechanisms_map_to_the_model() {
        assert_eq!(
            MeasuredMechanism::Mig.model_mechanism(),
            Some(Mechanism::MigInstance)
        );
        assert_eq!(
            MeasuredMechanism::SeparateGpus.model_mechanism(),
            Some(Mechanism::Exclusive)
        );
        assert_eq!(MeasuredMechanism::Unknown.model_mechanism(), None);
        for m in MeasuredMechanism::ALL {
            if let Some(model) = m.model_mechanism() {
                assert!(!model.is_fraction(), "{m} maps to a fraction");
            }
        }
    }

    #[test]
    fn residual_claim_has_no_incident() {
        let ev = evidence(MeasuredMechanism::Mps);
        let claims = ev.claims();
        assert_eq!(claims.len(), 2);
        assert_eq!(claims[1].incident, None);
        assert_eq!(claims[1].verdict, Verdict::Isolated);
    }

    #[test]
    fn camel_case_wire_names() {
        let ev = evidence(MeasuredMechanism::TimeSlicing);
        let json = serde_json::to_value(&ev).unwrap();
        assert_eq!(json["schema"], "gpu-trust/probe/v1");
        assert_eq!(json["toolVersion"], "0.0.0");
        assert_eq!(json["mechanism"]["kind"], "time-slicing");
        assert_eq!(json["mechanism"]["migMode"], false);
        assert_eq!(json["scenarios"][0]["verdict"], "not-isolated");
        assert!(json["scenarios"][0].get("comparison").is_none());
        let back: ProbeEvidence = serde_json::from_value(json).unwrap();
        assert_eq!(back, ev);
        assert!(back.schema_supported());
    }
}
