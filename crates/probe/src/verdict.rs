//! From measurements to a verdict, per scenario, against [`crate::thresholds`] and by the intervals of
//! [`crate::stats`]. Pure. Each summary says what was done, no more: how many trials or samples, what
//! the victim was doing, how much of the memory in question a scan covered.

use crate::stats::{bootstrap_ratio, combine, decide, enough_for, round3, summary_bound};
use crate::thresholds::Thresholds;
use gpu_trust_model::evidence::{
    AggressorReport, Comparison, LatencyMeasurement, Measurement, PhaseEvidence, RatioInterval,
    Scenario, Verdict,
};
use thiserror::Error;

/// A scenario's verdict, one sentence on what was measured, and the ratios.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub summary: String,
    pub comparison: Comparison,
}

fn judgement(verdict: Verdict, summary: String) -> Judgement {
    Judgement {
        verdict,
        summary,
        comparison: Comparison::default(),
    }
}

/// The seed of every bootstrap, so that the same samples always give the same interval.
const SEED: u64 = 0x6770_752d_7472_7374;

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
    #[error("the neighbour could not allocate any memory")]
    AggressorAllocatedNothing,
    /// The baseline of a ratio is zero (`what` names the quantity).
    #[error("the baseline {0} is zero")]
    ZeroBaseline(&'static str),
    /// Fewer samples than the smallest quantile reported needs ([`crate::stats::enough_for`]).
    #[error(
        "too few samples for an interval: {baseline} alone and {contended} with the neighbour, \
         where a median needs 200 a phase"
    )]
    TooFewSamples { baseline: usize, contended: usize },
    #[error("the victim's context failed even alone: {0}")]
    VictimContextFailedAlone(String),
    #[error("the neighbour's illegal memory access raised no error")]
    NoFaultRaised,
    #[error("the neighbour's fault fell outside the window in which the victim ran kernels")]
    FaultOutsideBusyWindow,
    #[error("the neighbour filled no memory with the marker")]
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
        Err(why) => judgement(Verdict::Inconclusive, why.to_string()),
    }
}

/// The two ways a sample was timed, as a summary names them.
const TIMINGS: [&str; 2] = ["GPU-timed", "host-timed"];

/// `p99 latency, GPU-timed: 1.35x baseline (95% CI 1.20-1.52)`.
fn with_interval(i: &RatioInterval) -> String {
    format!(
        "{}: {:.2}x baseline ({:.0}% CI {:.2}-{:.2})",
        i.statistic,
        i.ratio,
        (i.confidence * 100.0).floor(),
        i.low,
        i.high
    )
}

/// Why a set of intervals gave its verdict against a threshold (`1.20x`): wholly on its `worse` side,
/// wholly on its `fine` side, or across it.
fn because(verdict: Verdict, worse: &str, fine: &str, threshold: f64) -> String {
    match verdict {
        Verdict::Affected => format!("every interval {worse} {threshold:.2}x"),
        Verdict::NoMeasurableEffect => format!("every interval {fine} {threshold:.2}x"),
        _ => format!("not every interval on one side of {threshold:.2}x"),
    }
}

/// Latency intervals from the samples (v2): the p99 when both phases have 10,000, else the median;
/// from the kept summaries of a v1 file, the order-statistics bound of the p99.
fn latency_intervals(
    b: &LatencyMeasurement,
    c: &LatencyMeasurement,
) -> Result<(Vec<RatioInterval>, Option<f64>), Unjudged> {
    if b.gpu_us.is_empty() || c.gpu_us.is_empty() {
        let point = ratio(c.p99_us, b.p99_us).ok_or(Unjudged::ZeroBaseline("p99 latency"))?;
        return summary_bound(
            "latency, host-timed",
            (b.samples, b.p50_us, b.max_us),
            (c.samples, c.p50_us, c.max_us),
            point,
        )
        .map(|i| (vec![i], None))
        .ok_or(Unjudged::TooFewSamples {
            baseline: b.samples as usize,
            contended: c.samples as usize,
        });
    }
    let n = b.gpu_us.len().min(c.gpu_us.len());
    let q = if enough_for(0.99, n) {
        0.99
    } else if enough_for(0.5, n) {
        0.5
    } else {
        return Err(Unjudged::TooFewSamples {
            baseline: b.gpu_us.len(),
            contended: c.gpu_us.len(),
        });
    };
    let intervals = [(&b.gpu_us, &c.gpu_us), (&b.host_us, &c.host_us)]
        .iter()
        .zip(TIMINGS)
        .filter_map(|((bs, cs), how)| bootstrap_ratio(&format!("latency, {how}"), bs, cs, q, SEED))
        .collect::<Vec<_>>();
    if intervals.is_empty() {
        return Err(Unjudged::ZeroBaseline("latency"));
    }
    Ok((intervals, Some(q)))
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
            Ok(if !c.allocation_ok {
                judgement(
                    Verdict::Affected,
                    format!(
                        "the victim's allocation of {} MiB failed while the neighbour held {held} MiB ({})",
                        c.working_set_mib,
                        c.allocation_error.as_deref().unwrap_or("no error text")
                    ),
                )
            } else if !c.checksum_intact {
                judgement(
                    Verdict::Affected,
                    format!("the victim's buffers lost their checksum while the neighbour held {held} MiB"),
                )
            } else {
                judgement(
                    Verdict::NoMeasurableEffect,
                    format!(
                        "the victim's allocation of {} MiB succeeded and its buffers kept their checksum while the neighbour held {held} MiB",
                        c.working_set_mib
                    ),
                )
            })
        }
        Scenario::ComputeHog => {
            if contended.error.is_some()
                || aggressor.and_then(|a| a.kernels_completed).unwrap_or(0) == 0
            {
                return Err(phase_failed("contended", contended));
            }
            let b = part(baseline, "baseline", |m| m.latency.as_ref())?;
            let c = part(contended, "contended", |m| m.latency.as_ref())?;
            let (intervals, q) = latency_intervals(b, c)?;
            let threshold = t.p99_slowdown_max;
            let mut verdict = combine(
                &intervals
                    .iter()
                    .map(|i| decide(i, threshold))
                    .collect::<Vec<_>>(),
            );
            let measured: Vec<String> = intervals.iter().map(with_interval).collect();
            let mut summary = format!(
                "victim kernel {}: {}",
                measured.join("; "),
                because(verdict, "above", "below", threshold)
            );
            match q {
                None => summary.push_str(&format!(
                    " ({} samples a phase, of which only the median, p99 and maximum were kept: the \
                     interval is their distribution-free bound)",
                    b.samples.min(c.samples)
                )),
                Some(q) => {
                    summary.push_str(&format!(
                        " ({} samples alone and {} with the hog, in {} alternating blocks each)",
                        b.gpu_us.len(),
                        c.gpu_us.len(),
                        b.blocks.max(1)
                    ));
                    if q < 0.99 && verdict == Verdict::NoMeasurableEffect {
                        verdict = Verdict::Inconclusive;
                        summary.push_str(
                            "; the tail was not measured: a p99 needs 10,000 samples a phase",
                        );
                    }
                }
            }
            Ok(Judgement {
                verdict,
                summary,
                comparison: Comparison {
                    p50_slowdown: ratio(c.p50_us, b.p50_us),
                    p99_slowdown: ratio(c.p99_us, b.p99_us),
                    intervals,
                    ..Comparison::default()
                },
            })
        }
        Scenario::Bandwidth => {
            if contended.error.is_some()
                || aggressor.and_then(|a| a.kernels_completed).unwrap_or(0) == 0
            {
                return Err(phase_failed("contended", contended));
            }
            let b = part(baseline, "baseline", |m| m.bandwidth.as_ref())?;
            let c = part(contended, "contended", |m| m.bandwidth.as_ref())?;
            let overall =
                ratio(c.gb_per_s, b.gb_per_s).ok_or(Unjudged::ZeroBaseline("bandwidth"))?;
            let comparison = |intervals| Comparison {
                bandwidth_ratio: Some(overall),
                intervals,
                ..Comparison::default()
            };
            if b.pass_gpu_us.is_empty() || c.pass_gpu_us.is_empty() {
                return Ok(Judgement {
                    verdict: Verdict::Inconclusive,
                    summary: format!(
                        "victim bandwidth {overall:.2}x baseline ({:.0} GB/s alone, {:.0} GB/s with the copy kernel), one aggregate of {} passes a phase, which gives no interval",
                        b.gb_per_s, c.gb_per_s, b.passes
                    ),
                    comparison: comparison(Vec::new()),
                });
            }
            let n = b.pass_gpu_us.len().min(c.pass_gpu_us.len());
            if !enough_for(0.5, n) {
                return Err(Unjudged::TooFewSamples {
                    baseline: b.pass_gpu_us.len(),
                    contended: c.pass_gpu_us.len(),
                });
            }
            // Judged on the time of a pass (more is worse), reported as bandwidth (its inverse).
            let slower = 1.0 / t.bandwidth_ratio_min;
            let mut verdicts = Vec::new();
            let mut intervals = Vec::new();
            for ((bs, cs), how) in [
                (&b.pass_gpu_us, &c.pass_gpu_us),
                (&b.pass_host_us, &c.pass_host_us),
            ]
            .into_iter()
            .zip(TIMINGS)
            {
                let Some(time) = bootstrap_ratio("", bs, cs, 0.5, SEED) else {
                    continue;
                };
                verdicts.push(decide(&time, slower));
                intervals.push(RatioInterval {
                    statistic: format!("median bandwidth of a pass, {how}"),
                    ratio: round3(1.0 / time.ratio),
                    low: round3(1.0 / time.high),
                    high: round3(1.0 / time.low),
                    ..time
                });
            }
            if intervals.is_empty() {
                return Err(Unjudged::ZeroBaseline("pass time"));
            }
            let verdict = combine(&verdicts);
            let measured: Vec<String> = intervals.iter().map(with_interval).collect();
            Ok(Judgement {
                verdict,
                summary: format!(
                    "victim {}: {} ({} passes alone and {} with the copy kernel, in {} alternating blocks each; {:.0} GB/s alone, {:.0} GB/s with it)",
                    measured.join("; "),
                    because(verdict, "below", "above", t.bandwidth_ratio_min),
                    b.pass_gpu_us.len(),
                    c.pass_gpu_us.len(),
                    b.blocks.max(1),
                    b.gb_per_s,
                    c.gb_per_s
                ),
                comparison: comparison(intervals),
            })
        }
        Scenario::DeviceFault | Scenario::DeviceFaultBusy => {
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
            let c = contended.victim.as_ref().and_then(|m| m.fault.as_ref());
            let busy = scenario == Scenario::DeviceFaultBusy;
            if busy {
                if let Some(c) = c {
                    if !fault_in_window(aggressor, c.busy_from_ms, c.busy_until_ms) {
                        return Err(Unjudged::FaultOutsideBusyWindow);
                    }
                }
            }
            let while_ = match c.and_then(|c| c.busy_kernels) {
                Some(k) if busy => format!("while the victim ran kernels ({k} completed)"),
                _ if busy => "while the victim ran kernels".to_string(),
                _ => "while the victim was idle".to_string(),
            };
            let one = format!("one illegal-address fault in the neighbour's context, {while_},");
            // The neighbour faulted and then the victim's worker failed: that is the fault reaching it.
            let Some(c) = c else {
                let why = contended.error.as_deref().unwrap_or("no measurement");
                return Ok(judgement(
                    Verdict::Affected,
                    format!("{one} was followed by the victim's failure ({cause}): {why}"),
                ));
            };
            Ok(if c.context_survived {
                judgement(
                    Verdict::NoMeasurableEffect,
                    format!("{one} did not end the victim's context: its next kernel ran and its buffer kept its pattern ({cause} in the neighbour only)"),
                )
            } else {
                judgement(
                    Verdict::Affected,
                    format!(
                        "{one} ended the victim's context: {}",
                        c.error.as_deref().unwrap_or("checksum changed")
                    ),
                )
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
            let after = format!("after the neighbour filled and freed {filled} MiB");
            if c.marker_words > t.marker_words_max {
                return Ok(judgement(
                    Verdict::Affected,
                    format!(
                        "victim found {} marker words ({} MiB) in {} MiB of fresh memory {after}{before}",
                        c.marker_words,
                        c.marker_words * 8 / (1024 * 1024),
                        c.scanned_mib
                    ),
                ));
            }
            // The freed memory lies somewhere in what was free; what the victim left unscanned of that
            // may hold all of it, so the share surely covered is what remains of the freed memory.
            let covered = c.free_mib.map(|free| {
                let unscanned = free.saturating_sub(c.scanned_mib);
                (
                    filled.saturating_sub(unscanned) as f64 / filled as f64,
                    unscanned,
                )
            });
            let none = format!("no marker in {} MiB of fresh memory {after}", c.scanned_mib);
            Ok(match covered {
                Some((share, _)) if share >= t.residue_coverage_min => judgement(
                    Verdict::NoMeasurableEffect,
                    format!(
                        "{none}: the scan took all the memory the victim could allocate, which covers at least {:.1}% of what was freed{before}",
                        (share * 1000.0).floor() / 10.0
                    ),
                ),
                Some((share, unscanned)) => judgement(
                    Verdict::Inconclusive,
                    format!(
                        "{none}, but it left {unscanned} MiB of free memory unscanned, so it surely covered only {:.1}% of what was freed{before}",
                        (share * 1000.0).floor() / 10.0
                    ),
                ),
                None => judgement(
                    Verdict::Inconclusive,
                    format!(
                        "{none}, but how much free memory it left unscanned was not recorded, so the scan need not have covered what was freed{before}"
                    ),
                ),
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

/// Whether the neighbour's fault was raised while the victim ran kernels (both clocks are the host's
/// wall clock in milliseconds; a missing time decides nothing against it).
fn fault_in_window(a: Option<&AggressorReport>, from: Option<u64>, until: Option<u64>) -> bool {
    match (a.and_then(|a| a.fault_at_ms), from, until) {
        (Some(at), Some(from), Some(until)) => from <= at && at <= until,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thresholds::THRESHOLDS;
    use gpu_trust_model::evidence::{
        BandwidthMeasurement, FaultMeasurement, MemoryMeasurement, ResidueMeasurement,
        ThroughputMeasurement,
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

    fn hog() -> AggressorReport {
        AggressorReport {
            kernels_completed: Some(10),
            ..AggressorReport::default()
        }
    }

    /// `n` samples spread evenly over `[base, base * 1.5)`, in a scrambled order: every quantile is
    /// known (the p99 is about `base * 1.495`).
    fn spread(n: usize, base: f64) -> Vec<f64> {
        (0..n)
            .map(|i| base * (1.0 + ((i * 7919) % n) as f64 / n as f64 / 2.0))
            .collect()
    }

    fn timed(n: usize, gpu: f64, host: f64) -> Measurement {
        let host_us = spread(n, host);
        let mut sorted = host_us.clone();
        sorted.sort_by(f64::total_cmp);
        Measurement {
            latency: Some(LatencyMeasurement {
                samples: n as u32,
                p50_us: crate::stats::quantile(&sorted, 0.5).unwrap(),
                p99_us: crate::stats::quantile(&sorted, 0.99).unwrap(),
                max_us: *sorted.last().unwrap(),
                gpu_us: spread(n, gpu),
                host_us,
                blocks: 4,
            }),
            ..Measurement::default()
        }
    }

    fn hog_verdict(baseline: Measurement, contended: Measurement) -> Judgement {
        judge(
            Scenario::ComputeHog,
            &victim(baseline),
            &with_aggressor(victim(contended), hog()),
            &THRESHOLDS,
        )
    }

    #[test]
    fn a_slowdown_beyond_the_threshold_in_either_timing_is_affected() {
        // Time-slicing: the kernel itself takes as long on the GPU, but the host waits a time slice.
        let j = hog_verdict(timed(10_000, 10.0, 15.0), timed(10_000, 10.0, 2400.0));
        assert_eq!(j.verdict, Verdict::Affected, "{}", j.summary);
        assert_eq!(j.comparison.intervals.len(), 2);
        let [gpu, host] = &j.comparison.intervals[..] else {
            panic!()
        };
        assert_eq!(gpu.statistic, "p99 latency, GPU-timed");
        assert!((gpu.ratio - 1.0).abs() < 0.01, "{gpu:?}");
        assert!(host.low > 100.0, "{host:?}");
        assert!(
            j.summary
                .starts_with("victim kernel p99 latency, GPU-timed: 1.00x baseline (95% CI "),
            "{}",
            j.summary
        );
        assert!(
            j.summary.contains(
                "10000 samples alone and 10000 with the hog, in 4 alternating blocks each"
            ),
            "{}",
            j.summary
        );
    }

    #[test]
    fn no_effect_needs_both_timings_bounded_below_the_threshold_at_the_p99() {
        let j = hog_verdict(timed(10_000, 10.0, 15.0), timed(10_000, 10.3, 15.3));
        assert_eq!(j.verdict, Verdict::NoMeasurableEffect, "{}", j.summary);
        assert!(
            j.summary.contains("every interval below 1.20x"),
            "{}",
            j.summary
        );
    }

    #[test]
    fn an_interval_across_the_threshold_is_inconclusive() {
        // A true 1.2x slowdown: neither side of the threshold can be excluded.
        let j = hog_verdict(timed(10_000, 10.0, 15.0), timed(10_000, 12.0, 18.0));
        assert_eq!(j.verdict, Verdict::Inconclusive, "{}", j.summary);
    }

    #[test]
    fn fewer_samples_than_a_p99_needs_judge_the_median_and_never_claim_no_effect() {
        // Under 10,000 samples: the median. A large effect is still found; no effect is not claimed.
        let j = hog_verdict(timed(10_000, 10.0, 15.0), timed(300, 10.0, 20_000.0));
        assert_eq!(j.verdict, Verdict::Affected, "{}", j.summary);
        assert_eq!(
            j.comparison.intervals[0].statistic,
            "median latency, GPU-timed"
        );
        let j = hog_verdict(timed(10_000, 10.0, 15.0), timed(300, 10.0, 15.0));
        assert_eq!(j.verdict, Verdict::Inconclusive, "{}", j.summary);
        assert!(
            j.summary.ends_with("a p99 needs 10,000 samples a phase"),
            "{}",
            j.summary
        );
        let j = hog_verdict(timed(10_000, 10.0, 15.0), timed(150, 10.0, 15.0));
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.summary.starts_with("too few samples"), "{}", j.summary);
    }

    fn kept(samples: u32, p50: f64, p99: f64, max: f64) -> Measurement {
        Measurement {
            latency: Some(LatencyMeasurement {
                samples,
                p50_us: p50,
                p99_us: p99,
                max_us: max,
                ..LatencyMeasurement::default()
            }),
            ..Measurement::default()
        }
    }

    #[test]
    fn a_v1_tail_within_the_baselines_spread_is_inconclusive() {
        // docs/evidence/2026-12-04-h200/run-2b, MPS with limits: "not isolated" at 1.35x in v1.
        let j = hog_verdict(
            kept(400, 8.737, 14.924, 20.956),
            kept(400, 9.81, 20.214, 47.6),
        );
        assert_eq!(j.verdict, Verdict::Inconclusive, "{}", j.summary);
        assert_eq!(j.comparison.p99_slowdown, Some(1.354));
        assert!(j.summary.contains("(96% CI 0.47-5.45)"), "{}", j.summary);
        assert!(j.summary.contains("400 samples a phase"), "{}", j.summary);
        // The same run's time-slicing: the contended median is 98 times the baseline's maximum.
        let j = hog_verdict(
            kept(400, 10.334, 14.946, 24.726),
            kept(400, 2417.441, 2426.623, 2429.631),
        );
        assert_eq!(j.verdict, Verdict::Affected, "{}", j.summary);
    }

    #[test]
    fn a_hog_that_never_ran_proves_nothing() {
        let j = judge(
            Scenario::ComputeHog,
            &victim(timed(10_000, 10.0, 15.0)),
            &victim(timed(10_000, 10.0, 15.0)),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Inconclusive);
    }

    fn passes(n: usize, gpu: f64, host: f64) -> Measurement {
        Measurement {
            bandwidth: Some(BandwidthMeasurement {
                gb_per_s: 1000.0 * 100.0 / host,
                buffer_mib: 256,
                passes: n as u32,
                pass_gpu_us: spread(n, gpu),
                pass_host_us: spread(n, host),
                blocks: 4,
            }),
            ..Measurement::default()
        }
    }

    #[test]
    fn bandwidth_is_judged_on_the_median_pass_and_reported_as_bandwidth() {
        let b = victim(passes(1000, 100.0, 110.0));
        let j = judge(
            Scenario::Bandwidth,
            &b,
            &with_aggressor(victim(passes(1000, 170.0, 180.0)), hog()),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Affected, "{}", j.summary);
        let gpu = &j.comparison.intervals[0];
        assert_eq!(gpu.statistic, "median bandwidth of a pass, GPU-timed");
        assert!(
            (gpu.ratio - 0.588).abs() < 0.01 && gpu.high < 0.9,
            "{gpu:?}"
        );
        let j = judge(
            Scenario::Bandwidth,
            &b,
            &with_aggressor(victim(passes(1000, 101.0, 111.0)), hog()),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::NoMeasurableEffect, "{}", j.summary);
    }

    #[test]
    fn one_aggregate_a_phase_gives_no_interval() {
        let bw = |g| Measurement {
            bandwidth: Some(BandwidthMeasurement {
                gb_per_s: g,
                buffer_mib: 256,
                passes: 200,
                ..BandwidthMeasurement::default()
            }),
            ..Measurement::default()
        };
        let j = judge(
            Scenario::Bandwidth,
            &victim(bw(3884.0)),
            &with_aggressor(victim(bw(807.0)), hog()),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert_eq!(j.comparison.bandwidth_ratio, Some(0.208));
        assert!(
            j.summary.ends_with("which gives no interval"),
            "{}",
            j.summary
        );
        let zero = judge(
            Scenario::Bandwidth,
            &victim(bw(0.0)),
            &with_aggressor(victim(bw(807.0)), hog()),
            &THRESHOLDS,
        );
        assert_eq!(zero.verdict, Verdict::Inconclusive);
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
    fn memory_checksum_loss_is_affected_and_failed_baseline_is_inconclusive() {
        let held = AggressorReport {
            allocated_mib: Some(1000),
            ..AggressorReport::default()
        };
        let b = victim(memory(true, true));
        let corrupted = with_aggressor(victim(memory(true, false)), held.clone());
        let j = judge(Scenario::MemoryExhaustion, &b, &corrupted, &THRESHOLDS);
        assert_eq!(j.verdict, Verdict::Affected);
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

    fn fault(survived: bool, busy: bool) -> Measurement {
        Measurement {
            fault: Some(FaultMeasurement {
                context_survived: survived,
                next_kernel_ok: survived,
                checksum_intact: survived,
                error: (!survived).then(|| "CUDA_ERROR_ILLEGAL_ADDRESS".into()),
                busy,
                busy_kernels: busy.then_some(120),
                busy_from_ms: busy.then_some(1_000),
                busy_until_ms: busy.then_some(2_000),
            }),
            ..Measurement::default()
        }
    }

    fn raised(at: u64) -> AggressorReport {
        AggressorReport {
            fault_raised: Some(true),
            fault_error: Some("CUDA_ERROR_ILLEGAL_ADDRESS".into()),
            fault_at_ms: Some(at),
            ..AggressorReport::default()
        }
    }

    #[test]
    fn a_fault_claim_says_what_the_victim_was_doing_and_how_many_trials() {
        let b = victim(fault(true, false));
        let j = judge(
            Scenario::DeviceFault,
            &b,
            &with_aggressor(victim(fault(true, false)), raised(1_500)),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::NoMeasurableEffect);
        assert!(
            j.summary.starts_with(
                "one illegal-address fault in the neighbour's context, while the victim was idle, \
                 did not end the victim's context"
            ),
            "{}",
            j.summary
        );
        let j = judge(
            Scenario::DeviceFaultBusy,
            &b,
            &with_aggressor(victim(fault(false, true)), raised(1_500)),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Affected);
        assert!(
            j.summary.starts_with(
                "one illegal-address fault in the neighbour's context, while the victim ran \
                 kernels (120 completed), ended the victim's context"
            ),
            "{}",
            j.summary
        );
        // A fault outside the busy window says nothing about a busy victim.
        let j = judge(
            Scenario::DeviceFaultBusy,
            &b,
            &with_aggressor(victim(fault(true, true)), raised(2_500)),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.summary.contains("outside the window"), "{}", j.summary);
    }

    #[test]
    fn device_fault_needs_a_raised_fault_and_counts_a_dead_victim() {
        let quiet = AggressorReport {
            fault_raised: Some(false),
            ..AggressorReport::default()
        };
        let b = victim(fault(true, false));
        let j = judge(
            Scenario::DeviceFault,
            &b,
            &with_aggressor(victim(fault(true, false)), quiet),
            &THRESHOLDS,
        );
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.summary.contains("raised no error"));
        let dead = PhaseEvidence {
            aggressor: Some(raised(1)),
            error: Some("the victim ended while measure: read: broken pipe".into()),
            ..PhaseEvidence::default()
        };
        let j = judge(Scenario::DeviceFault, &b, &dead, &THRESHOLDS);
        assert_eq!(j.verdict, Verdict::Affected);
        assert!(
            j.summary.contains("was followed by the victim's failure"),
            "{}",
            j.summary
        );
    }

    fn residue(scanned: u64, markers: u64, free: Option<u64>) -> Measurement {
        Measurement {
            residue: Some(ResidueMeasurement {
                scanned_mib: scanned,
                marker_words: markers,
                free_mib: free,
            }),
            ..Measurement::default()
        }
    }

    #[test]
    fn no_residue_counts_only_when_the_scan_covered_what_was_freed() {
        let filled = AggressorReport {
            allocated_mib: Some(65_536),
            ..AggressorReport::default()
        };
        let run = |c: Measurement| {
            judge(
                Scenario::ResidualData,
                &victim(residue(1024, 0, Some(140_000))),
                &with_aggressor(victim(c), filled.clone()),
                &THRESHOLDS,
            )
        };
        // All the free memory scanned, less a context's worth.
        let j = run(residue(140_000, 0, Some(140_100)));
        assert_eq!(j.verdict, Verdict::NoMeasurableEffect, "{}", j.summary);
        assert!(
            j.summary.contains("at least 99.8% of what was freed"),
            "{}",
            j.summary
        );
        // 64 of about 140 GiB (the H200's v1 runs): the freed memory may lie in what was not scanned.
        let j = run(residue(65_536, 0, Some(140_000)));
        assert_eq!(j.verdict, Verdict::Inconclusive, "{}", j.summary);
        assert!(
            j.summary.contains(
                "left 74464 MiB of free memory unscanned, so it surely covered only 0.0%"
            ),
            "{}",
            j.summary
        );
        let j = run(residue(65_536, 0, None));
        assert_eq!(j.verdict, Verdict::Inconclusive, "{}", j.summary);
        let j = run(residue(65_536, 1, None));
        assert_eq!(j.verdict, Verdict::Affected, "{}", j.summary);
    }

    #[test]
    fn utilisation_is_a_report_and_a_missing_peer_is_inconclusive() {
        let tp = |k| Measurement {
            throughput: Some(ThroughputMeasurement {
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
