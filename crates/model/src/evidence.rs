//! Probe evidence: the wire types of `gpu-trust probe` JSON (`schema: "gpu-trust/probe/v2"`; the
//! older `v1`, which recorded neither the run's conditions nor its samples, still reads).
//!
//! The probe writes a [`ProbeEvidence`]; the audit reads it back with `--evidence FILE` and attaches each
//! scenario's outcome to the device-layer findings of the node and mechanism it was measured on, as
//! [`cite`] words it: the GPU, the driver, the date, the run, the mechanism's settings, how many runs
//! agree, and that another GPU or driver may behave differently. These types carry no behaviour beyond
//! small lookups and that sentence, so that the audit needs nothing from the probe crate.
//!
//! Field names are camelCase; enum values are kebab-case. Optional values are left out when absent.

use crate::isolation::Mechanism;
use crate::vocab::Incident;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The `schema` value of the probe JSON this version writes.
pub const PROBE_SCHEMA: &str = "gpu-trust/probe/v2";
/// The first schema, still read: its files record no run, settings or samples, and its verdicts are
/// spelt `isolated` and `not-isolated`.
pub const PROBE_SCHEMA_V1: &str = "gpu-trust/probe/v1";

/// One probe run: where and how it ran, what it detected, and what each scenario measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeEvidence {
    /// [`PROBE_SCHEMA`] (or [`PROBE_SCHEMA_V1`] for an older file).
    pub schema: String,
    /// The gpu-trust version that measured it.
    pub tool_version: String,
    /// The Kubernetes node (or host) the probe ran on: `--node`, else the host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Which run this is and what measured it (absent in v1 files).
    #[serde(default, skip_serializing_if = "RunEvidence::is_empty")]
    pub run: RunEvidence,
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
        self.schema == PROBE_SCHEMA || self.schema == PROBE_SCHEMA_V1
    }

    /// The scenario's evidence, if that scenario ran.
    pub fn scenario(&self, scenario: Scenario) -> Option<&ScenarioEvidence> {
        self.scenarios.iter().find(|s| s.scenario == scenario)
    }

    /// Whether this evidence speaks for workloads on `site` that share through `mechanism`, and from
    /// where: `Some(false)` when it was measured on that node (or on no named node), `Some(true)` when
    /// it was measured on a reference host that is not a node of the audited cluster and has the site's
    /// GPU model (what a mechanism leaves shared does not change from one GPU of a model to another; the
    /// citation then says where it was measured). It must also have been measured under that mechanism.
    /// A fraction (HAMi, KAI, Run:ai) adds its own accounting, so evidence of the bare mechanism does not
    /// speak for it.
    pub fn speaks_for(&self, site: &EvidenceSite<'_>, mechanism: Mechanism) -> Option<bool> {
        let reference = match self.node.as_deref() {
            None => false,
            Some(n) if n == site.node => false,
            Some(n) if !site.cluster_nodes.contains(n) => match self.model_id() {
                Some(id) if site.model == Some(id) => true,
                _ => return None,
            },
            Some(_) => return None,
        };
        (self.mechanism.kind.model_mechanism() == Some(mechanism)).then_some(reference)
    }

    /// The victim's GPU and the driver, as a citation names them (`NVIDIA H200, driver 580.159.04`).
    fn gpu(&self) -> String {
        let name = self.victim.name.as_deref().unwrap_or("GPU not named");
        match self.driver.version.as_deref() {
            Some(v) => format!("{name}, driver {v}"),
            None => format!("{name}, driver not recorded"),
        }
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

/// What the audit says about `incident` between workloads on `site` that share through `mechanism`,
/// from every evidence file that speaks for it ([`ProbeEvidence::speaks_for`]): one sentence per
/// scenario and conditions (the place, the GPU, the driver, the mechanism's settings). Runs under the
/// same conditions are counted together (`affected in 2 of 3 runs`), each run named with what it
/// measured, so that runs that disagree are never two facts; runs under other settings are another
/// sentence that names those settings. Every sentence names the date and says that another GPU or
/// driver may behave differently.
pub fn cite(
    evidence: &[ProbeEvidence],
    site: &EvidenceSite<'_>,
    mechanism: Mechanism,
    incident: Incident,
) -> Vec<String> {
    let mut groups: BTreeMap<Conditions, Vec<Cited<'_>>> = BTreeMap::new();
    for ev in evidence.iter().filter(|e| e.schema_supported()) {
        let Some(reference) = ev.speaks_for(site, mechanism) else {
            continue;
        };
        for s in ev
            .scenarios
            .iter()
            .filter(|s| s.scenario.incident() == Some(incident))
        {
            let conditions = Conditions {
                scenario: s.scenario,
                settings: ev.mechanism.describe(),
                place: match (&ev.node, reference) {
                    (Some(node), true) => {
                        format!("{node} ({}, not a node of this cluster)", ev.gpu())
                    }
                    (Some(node), false) => format!("{node} ({})", ev.gpu()),
                    (None, _) => format!("a host ({})", ev.gpu()),
                },
            };
            groups.entry(conditions).or_default().push(Cited {
                run: ev.run.name.as_deref().unwrap_or("an unnamed run"),
                date: ev.run.date().unwrap_or("an unrecorded date"),
                verdict: s.verdict,
                summary: &s.summary,
            });
        }
    }
    groups
        .into_iter()
        .map(|(c, runs)| c.sentence(&runs))
        .collect()
}

/// What a group of runs has in common: the citation names it once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Conditions {
    scenario: Scenario,
    settings: String,
    place: String,
}

/// One run's outcome of a scenario, as a citation names it.
struct Cited<'a> {
    run: &'a str,
    date: &'a str,
    verdict: Verdict,
    summary: &'a str,
}

impl Conditions {
    fn sentence(&self, runs: &[Cited<'_>]) -> String {
        let n = runs.len();
        let mut tally: BTreeMap<Verdict, usize> = BTreeMap::new();
        for r in runs {
            *tally.entry(r.verdict).or_default() += 1;
        }
        let tally: Vec<String> = tally
            .iter()
            .map(|(v, k)| format!("{} in {k} of {n} run{}", v.words(), plural(n)))
            .collect();
        // Runs that measured the same thing are listed together; each keeps its own verdict.
        let mut measured: Vec<(Vec<&str>, Verdict, &str)> = Vec::new();
        for r in runs {
            match measured
                .iter_mut()
                .find(|(_, v, s)| *v == r.verdict && *s == r.summary)
            {
                Some((names, _, _)) => names.push(r.run),
                None => measured.push((vec![r.run], r.verdict, r.summary)),
            }
        }
        let measured: Vec<String> = measured
            .iter()
            .map(|(names, _, summary)| format!("{}: {summary}", names.join(", ")))
            .collect();
        let dates: BTreeSet<&str> = runs.iter().map(|r| r.date).collect();
        let dates: Vec<&str> = dates.into_iter().collect();
        let disagree = if tally.len() > 1 {
            " The runs disagree under the same recorded conditions: the effect is near what the probe can tell apart, or depends on something it does not record."
        } else {
            ""
        };
        format!(
            "{}: {} under {} ({}).{disagree} Measured on {} on {}; another GPU or driver may behave differently.",
            self.scenario,
            tally.join(", "),
            self.settings,
            measured.join("; "),
            self.place,
            dates.join(", "),
        )
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Which run a file is and what measured it, so that a citation can name the run and its date and a
/// reader can rebuild the binary that measured it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEvidence {
    /// The run's name as whoever ran it gave it (`--run`), e.g. `2026-12-04-h200/run-2a`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When the probe started, UTC (`2026-12-04T11:37:42Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The commit the binary was built from (`GPU_TRUST_COMMIT` at build time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The SHA-256 of the binary that measured, in hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_sha256: Option<String>,
    /// The command line the probe ran with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// True while the run is under way: the file holds the scenarios that finished so far (the probe
    /// writes it after each one, so a run that is killed leaves what it measured).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// For a file converted from an older schema: from what, and what was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converted: Option<String>,
}

impl RunEvidence {
    pub fn is_empty(&self) -> bool {
        self == &RunEvidence::default()
    }

    /// The `YYYY-MM-DD` of [`RunEvidence::started_at`].
    pub fn date(&self) -> Option<&str> {
        let t = self.started_at.as_deref()?;
        t.get(..10)
            .filter(|d| d.parse::<crate::date::Date>().is_ok())
    }
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
    /// The settings of the mechanism in force (MPS limits, replicas, time-slice interval); `None` in a
    /// v1 file, which did not record them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<MechanismSettings>,
}

impl MechanismEvidence {
    /// The mechanism with its settings, as a citation names it (`MPS with 50% active threads and a
    /// pinned memory limit of 71885M per client, as for 2 replicas`). What was not declared is said to
    /// be so, never taken for a default: an MPS client cannot see its daemon's limits.
    pub fn describe(&self) -> String {
        let title = self.kind.title();
        let Some(s) = &self.settings else {
            return format!("{title} (its settings not recorded)");
        };
        let mut text = match self.kind {
            MeasuredMechanism::Mps | MeasuredMechanism::MigMps => {
                let threads = s.mps_active_thread_percentage.as_deref();
                let memory = s.mps_pinned_memory_limit.as_deref();
                let mut limits = Vec::new();
                match threads {
                    Some("100") | None => {}
                    Some(p) => limits.push(format!("{p}% active threads")),
                }
                match memory {
                    Some("none") | None => {}
                    Some(m) => limits.push(format!("a pinned memory limit of {m}")),
                }
                match (threads, memory, limits.is_empty()) {
                    (None, None, _) => format!("{title} (its limits not declared)"),
                    (_, _, false) => format!("{title} with {} per client", limits.join(" and ")),
                    (Some(_), Some(_), true) => format!("{title} without limits"),
                    (None, Some(_), true) => {
                        format!("{title} without a memory limit (active threads not declared)")
                    }
                    (Some(_), None, true) => {
                        format!("{title} with all threads (memory limit not declared)")
                    }
                }
            }
            MeasuredMechanism::TimeSlicing | MeasuredMechanism::MigTimeSlicing => {
                match &s.time_slice {
                    Some(t) => format!("{title}, time-slice interval {t}"),
                    None => format!("{title}, time-slice interval not recorded"),
                }
            }
            _ => title.to_string(),
        };
        if let Some(r) = s.replicas {
            text.push_str(&format!(", as for {r} replicas"));
        }
        text
    }
}

/// How the mechanism was set up for the run, as whoever ran it declared it (`--setting KEY=VALUE`): a
/// client cannot read its MPS daemon's defaults. Values are kept as they were given.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MechanismSettings {
    /// The replicas the GPU was set up as (the device plugin's `replicas`), when the run emulated them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u32>,
    /// Each MPS client's active thread percentage as its daemon was set (`100`: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mps_active_thread_percentage: Option<String>,
    /// Each MPS client's pinned device memory limit as its daemon was set, e.g. `71885M` (`none`: no
    /// limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mps_pinned_memory_limit: Option<String>,
    /// The time-slice interval (`nvidia-smi compute-policy --set-timeslice`), when the run set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_slice: Option<String>,
}

impl MechanismSettings {
    /// The keys of [`MechanismSettings::set`], in the order the help lists them.
    pub const KEYS: [&'static str; 4] = [
        "replicas",
        "mps-active-thread-percentage",
        "mps-pinned-memory-limit",
        "time-slice",
    ];

    /// Sets one setting from `KEY=VALUE`; the error says why the text is not one.
    pub fn set(&mut self, text: &str) -> Result<(), String> {
        let (key, value) = text
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .filter(|(_, v)| !v.is_empty() && v.len() <= 64)
            .ok_or_else(|| format!("`{text}` is not KEY=VALUE"))?;
        let number = |v: &str| v.parse::<f64>().ok().filter(|p| *p > 0.0 && *p <= 100.0);
        match key {
            "replicas" => {
                self.replicas =
                    Some(
                        value.parse().ok().filter(|r| *r > 0).ok_or_else(|| {
                            format!("replicas `{value}` is not a positive number")
                        })?,
                    )
            }
            "mps-active-thread-percentage" => {
                number(value).ok_or_else(|| format!("`{value}` is not a percentage"))?;
                self.mps_active_thread_percentage = Some(value.to_string());
            }
            "mps-pinned-memory-limit" => {
                if !value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"=,.".contains(&b))
                {
                    return Err(format!(
                        "`{value}` is not a memory limit (71885M, 8G, 0=8G)"
                    ));
                }
                self.mps_pinned_memory_limit = Some(value.to_string());
            }
            "time-slice" => {
                if !["default", "short", "medium", "long"].contains(&value) {
                    return Err(format!(
                        "time-slice `{value}` is not one of default, short, medium, long"
                    ));
                }
                self.time_slice = Some(value.to_string());
            }
            _ => {
                return Err(format!(
                    "unknown setting `{key}` (one of {})",
                    MechanismSettings::KEYS.join(", ")
                ))
            }
        }
        Ok(())
    }
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

    /// How a sentence names it.
    pub fn title(self) -> &'static str {
        match self {
            MeasuredMechanism::TimeSlicing => "time-slicing",
            MeasuredMechanism::Mps => "MPS",
            MeasuredMechanism::Mig => "separate MIG instances",
            MeasuredMechanism::MigTimeSlicing => "time-slicing inside one MIG instance",
            MeasuredMechanism::MigMps => "MPS inside one MIG instance",
            MeasuredMechanism::SeparateGpus => "separate GPUs",
            MeasuredMechanism::ExclusiveProcess => "an EXCLUSIVE_PROCESS GPU",
            MeasuredMechanism::Unknown => "an unknown mechanism",
        }
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
    /// The aggressor triggers an illegal memory access while the victim is idle.
    DeviceFault,
    /// The same fault while the victim runs kernels.
    DeviceFaultBusy,
}

impl Scenario {
    /// In the order the probe runs them: the device faults last, since under MPS a fault puts the server
    /// in FAULT until its clients exit, which would spoil the scenarios after it (each scenario starts
    /// new processes, so the second fault meets a server its first one's clients have left).
    pub const ALL: [Scenario; 7] = [
        Scenario::MemoryExhaustion,
        Scenario::ComputeHog,
        Scenario::Bandwidth,
        Scenario::ResidualData,
        Scenario::Utilisation,
        Scenario::DeviceFault,
        Scenario::DeviceFaultBusy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::MemoryExhaustion => "memory-exhaustion",
            Scenario::ComputeHog => "compute-hog",
            Scenario::Bandwidth => "bandwidth",
            Scenario::ResidualData => "residual-data",
            Scenario::Utilisation => "utilisation",
            Scenario::DeviceFault => "device-fault",
            Scenario::DeviceFaultBusy => "device-fault-busy",
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
            Scenario::DeviceFault | Scenario::DeviceFaultBusy => Some(Incident::DeviceFault),
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

/// What a scenario's measurements say about the victim. A v1 file's `isolated` and `not-isolated` read
/// as [`Verdict::NoMeasurableEffect`] and [`Verdict::Affected`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The neighbour harmed the victim: for a ratio, its whole confidence interval lies beyond the
    /// threshold.
    #[serde(alias = "not-isolated")]
    Affected,
    /// What was measured bounds the harm small: for a ratio, its whole confidence interval lies within
    /// the threshold. It says no more than the summary's trials.
    #[serde(alias = "isolated")]
    NoMeasurableEffect,
    /// The measurements do not decide it: an interval that straddles the threshold, too few samples, a
    /// phase that failed or timed out, or a neighbour that did not act.
    Inconclusive,
    /// A report, not a verdict (utilisation).
    ReportOnly,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Affected => "affected",
            Verdict::NoMeasurableEffect => "no-measurable-effect",
            Verdict::Inconclusive => "inconclusive",
            Verdict::ReportOnly => "report-only",
        }
    }

    /// How a sentence says it.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Affected => "affected",
            Verdict::NoMeasurableEffect => "no measurable effect",
            Verdict::Inconclusive => "inconclusive",
            Verdict::ReportOnly => "a report",
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

/// Latency of a short fixed kernel, one launch at a time as a request would run it. The percentiles are
/// of the host-timed samples (launch to completion as the victim's host thread saw it: a v1 file has
/// only these, of 400 samples); a v2 file also holds every sample, timed both ways.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LatencyMeasurement {
    pub samples: u32,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Each sample's time on the GPU, µs: CUDA events recorded around the kernel on its stream. It
    /// leaves out the wait before the victim's context runs (under time-slicing, the neighbour's slice).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_us: Vec<f64>,
    /// Each sample's time from launch to completion on the victim's host thread, µs (same order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_us: Vec<f64>,
    /// How many blocks the samples were taken in, alternating with the other phase's blocks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocks: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BandwidthMeasurement {
    /// Bytes read plus bytes written per second over all passes, in GB/s (10^9), host-timed.
    pub gb_per_s: f64,
    pub buffer_mib: u64,
    pub passes: u32,
    /// Each pass's time on the GPU (CUDA events around it), µs; v2 only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_gpu_us: Vec<f64>,
    /// Each pass's time from launch to completion on the host, µs; v2 only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_host_us: Vec<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocks: u32,
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
    /// Whether the victim ran kernels while the fault happened (false in v1: it was idle).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub busy: bool,
    /// Work kernels the victim completed while busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_kernels: Option<u64>,
    /// When the victim was busy, wall-clock milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_from_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_until_ms: Option<u64>,
}

/// Residual data, victim side: fresh allocations scanned for the aggressor's marker.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResidueMeasurement {
    pub scanned_mib: u64,
    /// 64-bit words equal to the marker.
    pub marker_words: u64,
    /// Free device memory the victim's driver reported before it allocated (v2): what it scanned
    /// covers all the memory the neighbour freed only if it scanned all of this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_mib: Option<u64>,
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
    /// When the fault was raised, wall-clock milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_at_ms: Option<u64>,
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
    /// The intervals the verdict rests on (v2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<RatioInterval>,
}

/// A contended-over-baseline ratio of one statistic, with its confidence interval.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RatioInterval {
    /// What is compared (`p99 latency, GPU-timed`).
    pub statistic: String,
    /// The point estimate, contended over baseline.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The interval's coverage (`0.95`).
    pub confidence: f64,
    /// How it was computed (`percentile bootstrap, 1000 resamples`).
    pub method: String,
    pub baseline_samples: u32,
    pub contended_samples: u32,
}

impl Comparison {
    pub fn is_empty(&self) -> bool {
        self == &Comparison::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(scenario: Scenario, verdict: Verdict, summary: &str) -> ScenarioEvidence {
        ScenarioEvidence {
            scenario,
            verdict,
            summary: summary.into(),
            threshold: None,
            baseline: PhaseEvidence::default(),
            contended: PhaseEvidence::default(),
            comparison: Comparison::default(),
        }
    }

    fn evidence(kind: MeasuredMechanism) -> ProbeEvidence {
        ProbeEvidence {
            schema: PROBE_SCHEMA.into(),
            tool_version: "0.0.0".into(),
            node: Some("gpu-a".into()),
            run: RunEvidence {
                name: Some("run-1".into()),
                started_at: Some("2026-12-04T11:34:09Z".into()),
                ..RunEvidence::default()
            },
            victim: DeviceEvidence {
                name: Some("NVIDIA H200".into()),
                ..DeviceEvidence::default()
            },
            aggressor: DeviceEvidence::default(),
            driver: DriverEvidence {
                version: Some("580.159.04".into()),
                cuda_version: None,
            },
            mechanism: MechanismEvidence {
                kind,
                mig_mode: Some(false),
                mps: false,
                mps_pipe_directory: None,
                compute_mode: None,
                cc_mode: None,
                notes: vec![],
                settings: Some(MechanismSettings::default()),
            },
            scenarios: vec![
                scenario(
                    Scenario::MemoryExhaustion,
                    Verdict::Affected,
                    "victim allocation of 256 MiB failed",
                ),
                scenario(
                    Scenario::ResidualData,
                    Verdict::NoMeasurableEffect,
                    "no marker found",
                ),
            ],
        }
    }

    fn with_run(
        mut ev: ProbeEvidence,
        name: &str,
        verdict: Verdict,
        summary: &str,
    ) -> ProbeEvidence {
        ev.run.name = Some(name.into());
        ev.scenarios[0].verdict = verdict;
        ev.scenarios[0].summary = summary.into();
        ev
    }

    #[test]
    fn scenarios_map_to_incidents() {
        assert_eq!(
            Scenario::MemoryExhaustion.incident(),
            Some(Incident::MemoryExhaustion)
        );
        for fault in [Scenario::DeviceFault, Scenario::DeviceFaultBusy] {
            assert_eq!(fault.incident(), Some(Incident::DeviceFault));
        }
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
    fn a_citation_names_the_gpu_driver_date_run_settings_and_that_another_gpu_may_differ() {
        let ev = evidence(MeasuredMechanism::TimeSlicing);
        let cluster = ["gpu-a", "gpu-b"].into_iter().collect();
        let cited = cite(
            std::slice::from_ref(&ev),
            &site("gpu-a", None, &cluster),
            Mechanism::TimeSlicing,
            Incident::MemoryExhaustion,
        );
        assert_eq!(
            cited,
            [
                "memory-exhaustion: affected in 1 of 1 run under time-slicing, time-slice interval \
                 not recorded (run-1: victim allocation of 256 MiB failed). Measured on gpu-a \
                 (NVIDIA H200, driver 580.159.04) on 2026-12-04; another GPU or driver may behave \
                 differently."
            ]
        );
    }

    #[test]
    fn time_slicing_evidence_speaks_for_time_slicing_nodes_only() {
        let ev = vec![evidence(MeasuredMechanism::TimeSlicing)];
        let cluster = ["gpu-a", "gpu-b"].into_iter().collect();
        let on = |node| site(node, None, &cluster);
        let cites = |node, m, i| cite(&ev, &on(node), m, i);
        assert_eq!(
            cites("gpu-a", Mechanism::TimeSlicing, Incident::MemoryExhaustion).len(),
            1
        );
        assert!(cites("gpu-b", Mechanism::TimeSlicing, Incident::MemoryExhaustion).is_empty());
        assert!(cites("gpu-a", Mechanism::MigInstance, Incident::MemoryExhaustion).is_empty());
        assert!(cites("gpu-a", Mechanism::HamiVgpu, Incident::MemoryExhaustion).is_empty());
        assert!(cites("gpu-a", Mechanism::TimeSlicing, Incident::DeviceFault).is_empty());
    }

    #[test]
    fn evidence_from_a_reference_host_speaks_for_nodes_of_its_gpu_model_and_says_where() {
        let mut ev = evidence(MeasuredMechanism::TimeSlicing);
        ev.node = Some("bench-host".into());
        let ev = vec![ev];
        let h200 = crate::catalogue::lookup("NVIDIA H200").map(|m| m.id);
        let h100 = crate::catalogue::lookup("NVIDIA H100 80GB HBM3").map(|m| m.id);
        assert!(h200.is_some() && h100.is_some() && h200 != h100);
        let cluster = ["gpu-a", "gpu-b"].into_iter().collect();
        let cited = cite(
            &ev,
            &site("gpu-a", h200, &cluster),
            Mechanism::TimeSlicing,
            Incident::MemoryExhaustion,
        );
        assert_eq!(cited.len(), 1);
        assert!(
            cited[0].contains(
                "Measured on bench-host (NVIDIA H200, driver 580.159.04, not a node of this \
                 cluster) on 2026-12-04"
            ),
            "{}",
            cited[0]
        );
        // Another GPU model, or a node of unknown model: the measurement does not speak for it.
        for model in [h100, None] {
            assert!(cite(
                &ev,
                &site("gpu-a", model, &cluster),
                Mechanism::TimeSlicing,
                Incident::MemoryExhaustion
            )
            .is_empty());
        }
        // Measured on another node of the cluster: that node's own evidence, never another's.
        let cluster_with_host = ["gpu-a", "bench-host"].into_iter().collect();
        assert!(cite(
            &ev,
            &site("gpu-a", h200, &cluster_with_host),
            Mechanism::TimeSlicing,
            Incident::MemoryExhaustion
        )
        .is_empty());
    }

    #[test]
    fn runs_under_the_same_conditions_are_counted_together_and_never_two_facts() {
        let base = evidence(MeasuredMechanism::Mps);
        let ev = vec![
            with_run(
                base.clone(),
                "run-2a",
                Verdict::NoMeasurableEffect,
                "p99 1.04x",
            ),
            with_run(base.clone(), "run-2b", Verdict::Affected, "p99 1.35x"),
            with_run(base.clone(), "run-2c", Verdict::Affected, "p99 1.35x"),
        ];
        let cluster = ["gpu-a"].into_iter().collect();
        let cited = cite(
            &ev,
            &site("gpu-a", None, &cluster),
            Mechanism::Mps,
            Incident::MemoryExhaustion,
        );
        assert_eq!(cited.len(), 1, "{cited:#?}");
        let c = &cited[0];
        assert!(
            c.starts_with(
                "memory-exhaustion: affected in 2 of 3 runs, no measurable effect in 1 of 3 runs \
                 under MPS (its limits not declared) (run-2a: p99 1.04x; run-2b, run-2c: p99 1.35x). The runs \
                 disagree under the same recorded conditions"
            ),
            "{c}"
        );
    }

    #[test]
    fn runs_under_other_settings_are_another_sentence_that_names_them() {
        let mut unlimited = evidence(MeasuredMechanism::Mps);
        let mut none = MechanismSettings::default();
        none.set("mps-active-thread-percentage=100").unwrap();
        none.set("mps-pinned-memory-limit=none").unwrap();
        unlimited.mechanism.settings = Some(none);
        let mut limited = with_run(
            unlimited.clone(),
            "run-2a",
            Verdict::NoMeasurableEffect,
            "victim allocation of 256 MiB succeeded",
        );
        let mut settings = MechanismSettings::default();
        for s in [
            "replicas=2",
            "mps-active-thread-percentage=50",
            "mps-pinned-memory-limit=71885M",
        ] {
            settings.set(s).unwrap();
        }
        limited.mechanism.settings = Some(settings);
        let mut unrecorded = with_run(unlimited.clone(), "old", Verdict::Affected, "failed");
        unrecorded.schema = PROBE_SCHEMA_V1.into();
        unrecorded.mechanism.settings = None;
        unrecorded.run = RunEvidence::default();
        let cluster = ["gpu-a"].into_iter().collect();
        let cited = cite(
            &[unlimited, limited, unrecorded],
            &site("gpu-a", None, &cluster),
            Mechanism::Mps,
            Incident::MemoryExhaustion,
        );
        assert_eq!(cited.len(), 3, "{cited:#?}");
        assert!(cited[0].contains("under MPS (its settings not recorded) (an unnamed run: failed)"));
        assert!(cited[0].contains("on an unrecorded date"));
        assert!(cited[1].contains(
            "no measurable effect in 1 of 1 run under MPS with 50% active threads and a pinned \
             memory limit of 71885M per client, as for 2 replicas (run-2a: "
        ));
        assert!(cited[2].contains("affected in 1 of 1 run under MPS without limits (run-1: "));
    }

    #[test]
    fn settings_are_read_from_key_value_text() {
        let mut s = MechanismSettings::default();
        s.set("time-slice=long").unwrap();
        s.set("replicas=4").unwrap();
        assert_eq!(s.time_slice.as_deref(), Some("long"));
        assert_eq!(s.replicas, Some(4));
        for bad in [
            "replicas=0",
            "replicas",
            "colour=blue",
            "time-slice=forever",
            "mps-active-thread-percentage=150",
            "mps-pinned-memory-limit=8G; rm",
        ] {
            assert!(s.set(bad).is_err(), "{bad}");
        }
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
    fn camel_case_wire_names() {
        let ev = evidence(MeasuredMechanism::TimeSlicing);
        let json = serde_json::to_value(&ev).unwrap();
        assert_eq!(json["schema"], "gpu-trust/probe/v2");
        assert_eq!(json["toolVersion"], "0.0.0");
        assert_eq!(json["run"]["startedAt"], "2026-12-04T11:34:09Z");
        assert_eq!(json["mechanism"]["kind"], "time-slicing");
        assert_eq!(json["mechanism"]["migMode"], false);
        assert_eq!(json["mechanism"]["settings"], serde_json::json!({}));
        assert_eq!(json["scenarios"][0]["verdict"], "affected");
        assert!(json["scenarios"][0].get("comparison").is_none());
        let back: ProbeEvidence = serde_json::from_value(json).unwrap();
        assert_eq!(back, ev);
        assert!(back.schema_supported());
    }

    #[test]
    fn a_v1_file_still_reads_with_its_verdicts_renamed_and_no_conditions() {
        let v1 = serde_json::json!({
            "schema": "gpu-trust/probe/v1",
            "toolVersion": "0.1.0",
            "victim": {"spec": "0"},
            "aggressor": {"spec": "0"},
            "driver": {},
            "mechanism": {"kind": "mps", "mps": true},
            "scenarios": [
                {"scenario": "device-fault", "verdict": "isolated", "summary": "s",
                 "baseline": {}, "contended": {}},
                {"scenario": "memory-exhaustion", "verdict": "not-isolated", "summary": "s",
                 "baseline": {}, "contended": {}}
            ]
        });
        let ev: ProbeEvidence = serde_json::from_value(v1).unwrap();
        assert!(ev.schema_supported());
        assert_eq!(ev.scenarios[0].verdict, Verdict::NoMeasurableEffect);
        assert_eq!(ev.scenarios[1].verdict, Verdict::Affected);
        assert_eq!(ev.mechanism.settings, None);
        assert!(ev.run.is_empty());
        assert_eq!(ev.run.date(), None);
    }
}
