//! From measurements to a verdict, per scenario, against [`crate::thresholds`]. Pure.

use crate::thresholds::Thresholds;
use gpu_trust_model::evidence::{Comparison, Measurement, PhaseEvidence, Scenario, Verdict};
use thiserror::Error;

/// A scenario's verdict, one sentence on what was measured, and the ratios.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub summary: String,
    pub comparison: Comparison,
}

fn inconclusive(summary: impl Into<String>) -> Judgement {
    Judgement {
        verdict: Verdict::Inconclusive,
        summary: summary.into(),
        comparison: Comparison::default(),
    }
}

/// Rounds a ratio to three decimals, so that reports read well and the JSON does not carry float noise.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0 && num.is_finite() && den.is_finite()).then(|| round3(num / den))
}

/// Why a scenario could not be judged; its text is the inconclusive verdict's summary.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
enum Unjudged {
    /// A phase (`baseline` or `contended`) ended with an error.
    #[error("the {what} run did not complete: {error}")]
    PhaseFailed { what: &'static str, error: String },
    /// A phase ended without the measurement the scenario needs.
    #[error("the {what} run returned no measurement")]
    NoMeasurement { what: &'static str },
    #[error("the victim's allocation of {mib} MiB failed even alone: {why}")]
    VictimAllocationFailedAlone { mib: u64, why: String },
    #[error("the aggressor could not allocate any memory")]
    AggressorAllocatedNothing,
    /// The baseline of a ratio is zero (`what` names the quantity).
    #[error("the baseline {0} is zero")]
    ZeroBaseline(&'static str),
    #[error("the victim's context failed even alone: {0}")]
    VictimContextFailedAlone(String),
    #[error("the aggressor's illegal memory access raised no error")]
    NoFaultRaised,
    #[error("the aggressor filled no memory with the marker")]
    NoMarkerFilled,
    #[error("the victim could not allocate fresh memory to scan")]
    NothingScanned,
}

fn phase_failed(what: &'static str, phase: &PhaseEvidence) -> Unjudged {
    match &phase.error {
        Some(e) => Unjudged::PhaseFailed {
            what,
            error: e.clone(),
        },
        None => Unjudged::NoMeasurement { what },
    }
}

fn part<'a, T>(
    phase: &'a PhaseEvidence,
    what: &'static str,
    get: impl Fn(&'a Measurement) -> Option<&'a T>,
) -> Result<&'a T, Unjudged> {
    phase
        .victim
        .as_ref()
        .and_then(get)
        .ok_or_else(|| phase_failed(what, phase))
}

/// Judges one scenario.
pub fn judge(
    scenario: Scenario,
    baseline: &PhaseEvidence,
    contended: &PhaseEvidence,
    t: &Thresholds,
) -> Judgement {
    match judge_inner(scenario, baseline, contended, t) {
        Ok(j) => j,
        Err(why) => inconclusive(why.to_string()),
    }
}

fn judge_inner(
    scenario: Scenario,
    baseline: &PhaseEvidence,
    contended: &PhaseEvidence,
    t: &Thresholds,
) -> Result<Judgement, Unjudged> {
    let aggressor = contended.aggressor.as_ref();
    match scenario {
        Scenario::MemoryExhaustion => {
            let b = part(baseline, "baseline", |m| m.memory.as_ref())?;
            if !b.allocation_ok || !b.checksum_intact {
                return Err(Unjudged::VictimAllocationFailedAlone {
                    mib: b.working_set_mib,
                    why: b
                        .allocation_error
                        .clone()
                        .unwrap_or_else(|| "checksum changed".into()),
                });
            }
            let held = aggressor.and_then(|a| a.allocated_mib).unwrap_or(0);
            if held == 0 {
                return Err(match &contended.error {
                    Some(_) => phase_failed("contended", contended),
                    None => Unjudged::AggressorAllocatedNothing,
                });
            }
            let c = part(contended, "contended", |m| m.memory.as_ref())?;
            let (verdict, summary) = if !c.allocation_ok {
                (
                    Verdict::NotIsolated,
                    format!(
                        "victim allocation of {} MiB failed while the aggressor held {held} MiB ({})",
                        c.working_set_mib,
                        c.allocation_error.as_deref().unwrap_or("no error text")
                    ),
                )
            } else if !c.checksum_intact {
                (
                    Verdict::NotIsolated,
                    format!(
                        "victim buffers lost their checksum while the aggressor held {held} MiB"
                    ),
                )
            } else {
                (
                    Verdict::Isolated,
                    format!(
                        "victim allocation of {} MiB succeeded and its buffers kept their checksum while the aggressor held {held} MiB",
                        c.working_set_mib
                    ),
                )
            };
            Ok(Judgement {
                verdict,
                summary,
                comparison: Comparison::default(),
            })
        }
        Scenario::ComputeHog => {
            let b = part(baseline, "baseline", |m| m.latency.as_ref())?;
            if aggressor.and_then(|a| a.kernels_completed).unwrap_or(0) == 0 {
                return Err(phase_failed("contended", contended));
            }
            let c = part(contended, "contended", |m| m.latency.as_ref())?;
            let p99 = ratio(c.p99_us, b.p99_us).ok_or(Unjudged::ZeroBaseline("p99 latency"))?;
            let p50 = ratio(c.p50_us, b.p50_us);
            let verdict = if p99 < t.p99_slowdown_max {
                Verdict::Isolated
            } else {
                Verdict::NotIsolated
            };
            Ok(Judgement {
                verdict,
                summary: format!(
                    "victim p99 kernel latency {p99:.2}x baseline ({:.1} us alone, {:.1} us with the hog)",
                    b.p99_us, c.p99_us
                ),
                comparison: Comparison {
                    p50_slowdown: p50,
                    p99_slowdown: Some(p99),
                    ..Comparison::default()
                },
            })
        }
        Scenario::Bandwidth => {
            let b = part(baseline, "baseline", |m| m.bandwidth.as_ref())?;
            if aggressor.and_then(|a| a.kernels_completed).unwrap_or(0) == 0 {
                return Err(phase_failed("contended", contended));
            }
            let c = part(contended, "contended", |m| m.bandwidth.as_ref())?;
            let r = ratio(c.gb_per_s, b.gb_per_s).ok_or(Unjudged::ZeroBaseline("bandwidth"))?;
            let verdict = if r > t.bandwidth_ratio_min {
                Verdict::Isolated
            } else {
                Verdict::NotIsolated
            };
            Ok(Judgement {
                verdict,
                summary: format!(
                    "victim bandwidth {r:.2}x baseline ({:.0} GB/s alone, {:.0} GB/s with the copy kernel)",
                    b.gb_per_s, c.gb_per_s
                ),
                comparison: Comparison {
                    bandwidth_ratio: Some(r),
                    ..Comparison::default()
                },
            })
        }
        Scenario::DeviceFault => {
            let b = part(baseline, "baseline", |m| m.fault.as_ref())?;
            if !b.context_survived {
                return Err(Unjudged::VictimContextFailedAlone(
                    b.error.clone().unwrap_or_else(|| "no error text".into()),
                ));
            }
            let raised = aggressor.and_then(|a| a.fault_raised);
            if raised != Some(true) {
                return Err(match raised {
                    Some(false) => Unjudged::NoFaultRaised,
                    _ => phase_failed("contended", contended),
                });
            }
            let cause = aggressor
                .and_then(|a| a.fault_error.clone())
                .unwrap_or_else(|| "illegal memory access".into());
            // The aggressor faulted and then the victim's worker failed: that is the fault reaching it.
            let Some(c) = contended.victim.as_ref().and_then(|m| m.fault.as_ref()) else {
                let why = contended.error.as_deref().unwrap_or("no measurement");
                return Ok(Judgement {
                    verdict: Verdict::NotIsolated,
                    summary: format!(
                        "victim failed after the aggressor's illegal memory access ({cause}): {why}"
                    ),
                    comparison: Comparison::default(),
                });
            };
            Ok(if c.context_survived {
                Judgement {
                    verdict: Verdict::Isolated,
                    summary: format!(
                        "victim context survived the aggressor's illegal memory access ({cause})"
                    ),
                    comparison: Comparison::default(),
                }
            } else {
                Judgement {
                    verdict: Verdict::NotIsolated,
                    summary: format!(
                        "victim context lost after the aggressor's illegal memory access: {}",
                        c.error.as_deref().unwrap_or("checksum changed")
                    ),
                    comparison: Comparison::default(),
                }
            })
        }
        Scenario::ResidualData => {
            let b = part(baseline, "baseline", |m| m.residue.as_ref())?;
            let filled = aggressor.and_then(|a| a.allocated_mib).unwrap_or(0);
            if filled == 0 {
                return Err(match &contended.error {
                    Some(_) => phase_failed("contended", contended),
                    None => Unjudged::NoMarkerFilled,
                });
            }
            let c = part(contended, "contended", |m| m.residue.as_ref())?;
            if c.scanned_mib == 0 {
                return Err(Unjudged::NothingScanned);
            }
            let before = if b.marker_words > 0 {
                format!(
                    " (the baseline already found {} marker words)",
                    b.marker_words
                )
            } else {
                String::new()
            };
            Ok(if c.marker_words > t.marker_words_max {
                Judgement {
                    verdict: Verdict::NotIsolated,
                    summary: format!(
                        "victim found {} marker words ({} MiB) in {} MiB of fresh memory after the aggressor filled and freed {filled} MiB{before}",
                        c.marker_words,
                        c.marker_words * 8 / (1024 * 1024),
                        c.scanned_mib
                    ),
                    comparison: Comparison::default(),
                }
            } else {
                Judgement {
                    verdict: Verdict::Isolated,
                    summary: format!(
                        "no marker in {} MiB of fresh memory after the aggressor filled and freed {filled} MiB{before}",
                        c.scanned_mib
                    ),
                    comparison: Comparison::default(),
                }
            })
        }
        Scenario::Utilisation => {
            let b = part(baseline, "baseline", |m| m.throughput.as_ref())?;
            let c = part(contended, "contended", |m| m.throughput.as_ref())?;
            let peer = contended
                .peer
                .as_ref()
                .and_then(|m| m.throughput.as_ref())
                .ok_or_else(|| phase_failed("contended", contended))?;
            let mine = ratio(c.kernels_per_s, b.kernels_per_s)
                .ok_or(Unjudged::ZeroBaseline("throughput"))?;
            let both = ratio(c.kernels_per_s + peer.kernels_per_s, b.kernels_per_s)
                .ok_or(Unjudged::ZeroBaseline("throughput"))?;
            let nvml = match (
                baseline.nvml_gpu_utilisation_percent,
                contended.nvml_gpu_utilisation_percent,
            ) {
                (Some(u_b), Some(u_c)) => {
                    format!("NVML reported {u_b:.0}% GPU utilisation alone and {u_c:.0}% shared")
                }
                _ => "NVML reported no utilisation for this device".into(),
            };
            Ok(Judgement {
                verdict: Verdict::ReportOnly,
                summary: format!(
                    "{nvml}, while the victim kept {mine:.2}x of its solo throughput ({both:.2}x for both together)"
                ),
                comparison: Comparison {
                    throughput_ratio: Some(mine),
                    combined_throughput_ratio: Some(both),
                    ..Comparison::default()
                },
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thresholds::THRESHOLDS;
    use gpu_trust_model::evidence::{
        AggressorReport, BandwidthMeasurement, FaultMeasurement, LatencyMeasurement,
        MemoryMeasurement, ResidueMeasurement,
    };

    fn victim(m: Measurement) -> PhaseEvidence {
        PhaseEvidence {
            victim: Some(m),
            ..PhaseEvidence::default()
        }
    }

    fn with_aggressor(mut p: PhaseEvidence, a: AggressorReport) -> PhaseEvidence {
        p.aggressor = Some(a);
        p
    }

    fn latency(p99: f64) -> Measurement {
        Measurement {
            latency: Some(LatencyMeasurement {
                samples: 100,
                p50_us: p99 / 2.0,
                p99_us: p99,
                max_us: p99,
            }),
            ..Measurement::default()
        }
    }

    fn hog() -> AggressorReport {
        AggressorReport {
            kernels_completed: Some(10),
            ..AggressorReport::default()
        }
    }

    #[test]
    fn p99_threshold_is_strict() {
        let b = victim(latency(10.0));
        let just_under = with_aggressor(victim(latency(11.99)), hog());
        let at = with_aggressor(victim(latency(12.0)), hog());
        assert_eq!(
            judge(Scenario::ComputeHog, &b, &just_under, &THRESHOLDS).verdict,
            Verdict::Isolated
        );
        assert_eq!(
            judge(Scenario::ComputeHog, &b, &at, &THRESHOLDS).verdict,
            Verdict::NotIsolated
        );
    }

    #[test]
    fn a_hog_that_never_ran_proves_nothing() {
        let b = victim(latency(10.0));
        let c = victim(latency(10.0));
        let j = judge(Scenario::ComputeHog, &b, &c, &THRESHOLDS);
        assert_eq!(j.verdict, Verdict::Inconclusive);
    }

    #[test]
    fn bandwidth_threshold() {
        let bw = |g| Measurement {
            bandwidth: Some(BandwidthMeasurement {
                gb_per_s: g,
                buffer_mib: 256,
                passes: 10,
            }),
            ..Measurement::default()
        };
        let b = victim(bw(1000.0));
        let ok = with_aggressor(victim(bw(950.0)), hog());
        let bad = with_aggressor(victim(bw(900.0)), hog());
        let j = judge(Scenario::Bandwidth, &b, &ok, &THRESHOLDS);
        assert_eq!(
            (j.verdict, j.comparison.bandwidth_ratio),
            (Verdict::Isolated, Some(0.95))
        );
        assert_eq!(
            judge(Scenario::Bandwidth, &b, &bad, &THRESHOLDS).verdict,
            Verdict::NotIsolated
        );
        let zero = victim(bw(0.0));
        assert_eq!(
            judge(Scenario::Bandwidth, &zero, &ok, &THRESHOLDS).verdict,
            Verdict::Inconclusive
        );
    }

    fn memory(ok: bool, intact: bool) -> Measurement {
        Measurement {
            memory: Some(MemoryMeasurement {
                working_set_mib: 256,
                allocation_ok: ok,
                allocation_error: (!ok).then(|| "CUDA_ERROR_OUT_OF_MEMORY".into()),
                checksum_intact: intact,
                free_mib: Some(0),
            }),
            ..Measurement::default()
        }
    }

    #[test]
    fn memory_checksum_loss_is_not_isolated_and_failed_baseline_is_inconclusive() {
        let held = AggressorReport {
            allocated_mib: Some(1000),
            ..AggressorReport::default()
        };
        let b = victim(memory(true, true));
        let corrupted = with_aggressor(victim(memory(true, false)), held.clone());
        let j = judge(Scenario::MemoryExhaustion, &b, &corrupted, &THRESHOLDS);
        assert_eq!(j.verdict, Verdict::NotIsolated);
        assert!(j.summary.contains("checksum"), "{}", j.summary);
        let bad_base = victim(memory(false, true));
        let j = judge(
            Scenario::MemoryExhaustion,
            &bad_base,
            &corrupted,
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.summary.contains("even alone"), "{}", j.summary);
        let nothing_held = with_aggressor(victim(memory(true, true)), AggressorReport::default());
        let j = judge(Scenario::MemoryExhaustion, &b, &nothing_held, &THRESHOLDS);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.summary.contains("could not allocate"), "{}", j.summary);
    }

    fn fault(survived: bool) -> Measurement {
        Measurement {
            fault: Some(FaultMeasurement {
                context_survived: survived,
                next_kernel_ok: survived,
                checksum_intact: survived,
                error: (!survived).then(|| "CUDA_ERROR_ILLEGAL_ADDRESS".into()),
            }),
            ..Measurement::default()
        }
    }

    #[test]
    fn device_fault_needs_a_raised_fault_and_counts_a_dead_victim() {
        let raised = AggressorReport {
            fault_raised: Some(true),
            fault_error: Some("CUDA_ERROR_ILLEGAL_ADDRESS".into()),
            ..AggressorReport::default()
        };
        let quiet = AggressorReport {
            fault_raised: Some(false),
            ..AggressorReport::default()
        };
        let b = victim(fault(true));
        let j = judge(
            Scenario::DeviceFault,
            &b,
            &with_aggressor(victim(fault(true)), quiet),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.summary.contains("raised no error"));
        let dead = PhaseEvidence {
            aggressor: Some(raised.clone()),
            error: Some("the victim ended while measure: read: broken pipe".into()),
            ..PhaseEvidence::default()
        };
        let j = judge(Scenario::DeviceFault, &b, &dead, &THRESHOLDS);
        assert_eq!(j.verdict, Verdict::NotIsolated);
        assert!(
            j.summary.starts_with("victim failed after"),
            "{}",
            j.summary
        );
        let lost = with_aggressor(victim(fault(false)), raised);
        assert_eq!(
            judge(Scenario::DeviceFault, &b, &lost, &THRESHOLDS).verdict,
            Verdict::NotIsolated
        );
    }

    #[test]
    fn residual_baseline_markers_are_reported() {
        let res = |n| Measurement {
            residue: Some(ResidueMeasurement {
                scanned_mib: 1024,
                marker_words: n,
            }),
            ..Measurement::default()
        };
        let filled = AggressorReport {
            allocated_mib: Some(1024),
            ..AggressorReport::default()
        };
        let j = judge(
            Scenario::ResidualData,
            &victim(res(5)),
            &with_aggressor(victim(res(0)), filled.clone()),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Isolated);
        assert!(
            j.summary.contains("baseline already found 5"),
            "{}",
            j.summary
        );
        let j = judge(
            Scenario::ResidualData,
            &victim(res(0)),
            &with_aggressor(victim(res(1)), filled),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::NotIsolated);
    }

    #[test]
    fn utilisation_is_a_report_and_a_missing_peer_is_inconclusive() {
        let tp = |k| Measurement {
            throughput: Some(gpu_trust_model::evidence::ThroughputMeasurement {
                kernels_per_s: k,
                seconds: 2.0,
            }),
            ..Measurement::default()
        };
        let mut b = victim(tp(1000.0));
        b.nvml_gpu_utilisation_percent = Some(100.0);
        let mut c = victim(tp(500.0));
        c.nvml_gpu_utilisation_percent = Some(100.0);
        assert_eq!(
            judge(Scenario::Utilisation, &b, &c, &THRESHOLDS).verdict,
            Verdict::Inconclusive
        );
        c.peer = Some(tp(500.0));
        let j = judge(Scenario::Utilisation, &b, &c, &THRESHOLDS);
        assert_eq!(j.verdict, Verdict::ReportOnly);
        assert_eq!(j.comparison.throughput_ratio, Some(0.5));
        assert_eq!(j.comparison.combined_throughput_ratio, Some(1.0));
        assert!(j
            .summary
            .starts_with("NVML reported 100% GPU utilisation alone and 100% shared"));
    }
}
