//! The shared vocabulary of every command: layers, severities, certainties, trust levels, incidents.
//!
//! These enums are the words findings, blast radius, plans and probe evidence are written in. Their
//! kebab-case serialisations are part of the JSON wire formats (`gpu-trust/audit/v2`, `gpu-trust/plan/v1`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The five layers a tenant boundary is judged at, from the bottom up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    /// The GPU itself: memory, faults, compute, bandwidth, side channels.
    Device,
    /// The node: kernel, GPU driver, container toolkit, container runtime, MPS control daemon.
    Host,
    /// Confidential computing and attestation of GPU state.
    Confidentiality,
    /// The API server, RBAC, CRDs and controllers.
    ControlPlane,
    /// What the hosting terms promise a tenant.
    Contract,
}

impl Layer {
    pub const ALL: [Layer; 5] = [
        Layer::Device,
        Layer::Host,
        Layer::Confidentiality,
        Layer::ControlPlane,
        Layer::Contract,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Device => "device",
            Layer::Host => "host",
            Layer::Confidentiality => "confidentiality",
            Layer::ControlPlane => "control-plane",
            Layer::Contract => "contract",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How bad a finding is. Ordered: `Info < Low < Medium < High < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 5] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
        Severity::Info,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// One step lower (a `permitted` finding is reported one step below the same finding observed).
    pub fn lowered(self) -> Severity {
        match self {
            Severity::Critical => Severity::High,
            Severity::High => Severity::Medium,
            Severity::Medium => Severity::Low,
            Severity::Low | Severity::Info => Severity::Info,
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        Some(match s {
            "info" => Severity::Info,
            "low" => Severity::Low,
            "medium" => Severity::Medium,
            "high" => Severity::High,
            "critical" => Severity::Critical,
            _ => return None,
        })
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How sure the audit is that two workloads are co-located.
///
/// Ordered from the strongest evidence to the weakest: `Observed < Possible < Permitted`, so the
/// minimum of several certainties is the strongest one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Certainty {
    /// The objects prove the co-location (an allocation annotation, one GPU on the node, one instance of a profile).
    Observed,
    /// Same node, and the node's sharing configuration lets the device plugin put them on the same GPU or instance.
    Possible,
    /// Not co-located now, but no scheduling constraint keeps them apart.
    Permitted,
}

impl Certainty {
    pub fn as_str(self) -> &'static str {
        match self {
            Certainty::Observed => "observed",
            Certainty::Possible => "possible",
            Certainty::Permitted => "permitted",
        }
    }

    /// The severity a finding of this certainty carries, given the severity of the rule when observed.
    pub fn adjust(self, severity: Severity) -> Severity {
        match self {
            Certainty::Permitted => severity.lowered(),
            Certainty::Observed | Certainty::Possible => severity,
        }
    }
}

impl fmt::Display for Certainty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Trust between two tenants. Ordered: `None < Limited < Full`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// They distrust each other: different physical GPUs, different nodes unless accepted.
    #[default]
    None,
    /// Same organisation, but each needs its own memory and fault domain: at least separate MIG instances.
    Limited,
    /// They share trust: sharing a time-sliced GPU or an MPS server is allowed.
    Full,
}

impl Trust {
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::None => "none",
            Trust::Limited => "limited",
            Trust::Full => "full",
        }
    }

    pub fn parse(s: &str) -> Option<Trust> {
        Some(match s {
            "none" => Trust::None,
            "limited" => Trust::Limited,
            "full" => Trust::Full,
            _ => return None,
        })
    }
}

impl fmt::Display for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How sensitive a tenant or workload is to latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Latency {
    /// Needs a guaranteed execution quantum: time-slicing, MPS and fractions cannot give one (GT111).
    Critical,
    #[default]
    Standard,
    Tolerant,
}

impl Latency {
    pub const ALL: [Latency; 3] = [Latency::Critical, Latency::Standard, Latency::Tolerant];

    pub fn as_str(self) -> &'static str {
        match self {
            Latency::Critical => "critical",
            Latency::Standard => "standard",
            Latency::Tolerant => "tolerant",
        }
    }

    pub fn parse(s: &str) -> Option<Latency> {
        Latency::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl fmt::Display for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one tenant can set off, and the blast radius question asks who else it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Incident {
    /// A tenant allocates all the device memory it can get.
    MemoryExhaustion,
    /// A tenant's kernel faults (illegal address, Xid needing a reset, MPS server FAULT).
    DeviceFault,
    /// A tenant launches back-to-back kernels or saturates bandwidth.
    ComputeContention,
    /// A tenant escapes its container (toolkit CVE, privileged pod, host namespaces).
    HostEscape,
    /// A tenant abuses the shared API server (RBAC reach, cluster-scoped writes).
    ControlPlane,
}

impl Incident {
    pub const ALL: [Incident; 5] = [
        Incident::MemoryExhaustion,
        Incident::DeviceFault,
        Incident::ComputeContention,
        Incident::HostEscape,
        Incident::ControlPlane,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Incident::MemoryExhaustion => "memory-exhaustion",
            Incident::DeviceFault => "device-fault",
            Incident::ComputeContention => "compute-contention",
            Incident::HostEscape => "host-escape",
            Incident::ControlPlane => "control-plane",
        }
    }

    pub fn parse(s: &str) -> Option<Incident> {
        Incident::ALL.into_iter().find(|i| i.as_str() == s)
    }
}

impl fmt::Display for Incident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permitted_is_one_step_lower() {
        assert_eq!(
            Certainty::Permitted.adjust(Severity::Critical),
            Severity::High
        );
        assert_eq!(
            Certainty::Possible.adjust(Severity::Critical),
            Severity::Critical
        );
        assert_eq!(Certainty::Permitted.adjust(Severity::Info), Severity::Info);
    }

    #[test]
    fn certainty_orders_strongest_first() {
        assert!(Certainty::Observed < Certainty::Possible);
        assert!(Certainty::Possible < Certainty::Permitted);
    }

    #[test]
    fn names_round_trip() {
        for i in Incident::ALL {
            assert_eq!(Incident::parse(i.as_str()), Some(i));
        }
        for s in Severity::ALL {
            assert_eq!(Severity::parse(s.as_str()), Some(s));
        }
    }
}
