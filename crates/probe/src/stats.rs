//! The statistics a verdict rests on, pure and seeded: nearest-rank quantiles, the samples a quantile
//! needs, a percentile bootstrap of the contended-over-baseline ratio of a quantile, a distribution-free
//! bound for files that kept only summaries, and the three-way decision against a threshold.
//!
//! Every ratio is contended over baseline of a time (a latency, or the time of one copy pass), so that
//! more is worse.

use gpu_trust_model::evidence::{RatioInterval, Verdict};

/// The interval's coverage.
pub const CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples: enough for the 2.5th and 97.5th percentiles of the ratio to be stable to a few
/// parts in a thousand.
pub const RESAMPLES: u32 = 1000;
/// Samples a quantile needs beyond it before it is reported: 100, so a p99 needs 10,000 samples and a
/// median 200.
pub const TAIL_SAMPLES: f64 = 100.0;

/// The nearest-rank `q` quantile of sorted samples (`None` when there are none).
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

/// Whether `n` samples are enough to report the `q` quantile ([`TAIL_SAMPLES`] beyond it).
pub fn enough_for(q: f64, n: usize) -> bool {
    n as f64 * (1.0 - q) >= TAIL_SAMPLES - 1e-9
}

/// How a quantile is named in a sentence (`p99`, `median`).
pub fn quantile_name(q: f64) -> String {
    if (q - 0.5).abs() < 1e-9 {
        "median".into()
    } else {
        format!("p{}", (q * 100.0).round())
    }
}

/// SplitMix64: a small, seeded generator, so that the same samples always give the same interval.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the modulo bias is below 2^-40 for the sample counts used here).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The `q` quantile of a resample of `samples` drawn with replacement into `scratch`.
fn resampled_quantile(samples: &[f64], q: f64, rng: &mut SplitMix, scratch: &mut Vec<f64>) -> f64 {
    scratch.clear();
    scratch.extend((0..samples.len()).map(|_| samples[rng.below(samples.len())]));
    let rank = ((q * scratch.len() as f64).ceil() as usize).clamp(1, scratch.len());
    *scratch.select_nth_unstable_by(rank - 1, f64::total_cmp).1
}

/// The ratio of the `q` quantile of `contended` over that of `baseline`, with a percentile bootstrap
/// interval at [`CONFIDENCE`]: each resample draws both samples anew with replacement, independently.
/// `None` when either sample is too small for `q` ([`enough_for`]) or a quantile is not positive.
pub fn bootstrap_ratio(
    statistic: &str,
    baseline: &[f64],
    contended: &[f64],
    q: f64,
    seed: u64,
) -> Option<RatioInterval> {
    if !enough_for(q, baseline.len()) || !enough_for(q, contended.len()) {
        return None;
    }
    let sorted = |s: &[f64]| {
        let mut v = s.to_vec();
        v.sort_by(f64::total_cmp);
        v
    };
    let (b, c) = (
        quantile(&sorted(baseline), q)?,
        quantile(&sorted(contended), q)?,
    );
    if !(b > 0.0 && c.is_finite()) {
        return None;
    }
    let mut rng = SplitMix(seed);
    let mut scratch = Vec::with_capacity(baseline.len().max(contended.len()));
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let rb = resampled_quantile(baseline, q, &mut rng, &mut scratch);
            let rc = resampled_quantile(contended, q, &mut rng, &mut scratch);
            (rb > 0.0).then(|| rc / rb)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Some(RatioInterval {
        statistic: format!("{} {statistic}", quantile_name(q)),
        ratio: round3(c / b),
        low: round3(quantile(&ratios, tail)?),
        high: round3(quantile(&ratios, 1.0 - tail)?),
        confidence: CONFIDENCE,
        method: format!("percentile bootstrap, {RESAMPLES} resamples"),
        baseline_samples: count(baseline.len()),
        contended_samples: count(contended.len()),
    })
}

/// A bound on the ratio of the p99s of two samples of which only the median, the p99 and the maximum
/// were kept (a v1 file): the true contended p99 is at least the sample median (the median exceeds the
/// true p99 only if half the samples lie above it, which 1 % of them do), and the true baseline p99 is
/// at most the sample maximum unless every sample fell below it, with probability 0.99^n. So the ratio
/// lies in [contended median / baseline maximum, contended maximum / baseline median] with coverage at
/// least 1 - 0.99^n_baseline - 0.99^n_contended, for independent samples of a continuous distribution.
/// `None` when that coverage is below [`CONFIDENCE`] (under 368 samples a phase).
pub fn summary_bound(
    statistic: &str,
    baseline: (u32, f64, f64),
    contended: (u32, f64, f64),
    point: f64,
) -> Option<RatioInterval> {
    let ((nb, p50_b, max_b), (nc, p50_c, max_c)) = (baseline, contended);
    let miss = |n: u32| 0.99f64.powi(i32::try_from(n).unwrap_or(i32::MAX));
    let coverage = 1.0 - miss(nb) - miss(nc);
    if coverage < CONFIDENCE || p50_b <= 0.0 || max_b <= 0.0 {
        return None;
    }
    Some(RatioInterval {
        statistic: format!("p99 {statistic}"),
        ratio: round3(point),
        low: round3(p50_c / max_b),
        high: round3(max_c / p50_b),
        confidence: (coverage * 1000.0).floor() / 1000.0,
        method: "order statistics of the kept median and maximum".into(),
        baseline_samples: nb,
        contended_samples: nc,
    })
}

/// The verdict of one interval against `threshold` (a ratio above 1 that counts as harm): affected when
/// the whole interval lies above it, no measurable effect when the whole interval lies below it,
/// inconclusive when it straddles it.
pub fn decide(interval: &RatioInterval, threshold: f64) -> Verdict {
    if interval.low > threshold {
        Verdict::Affected
    } else if interval.high < threshold {
        Verdict::NoMeasurableEffect
    } else {
        Verdict::Inconclusive
    }
}

/// The verdict of several intervals on one scenario (the GPU-timed and the host-timed): affected when
/// any is, no measurable effect only when every one is, inconclusive otherwise or when there is none.
pub fn combine(verdicts: &[Verdict]) -> Verdict {
    if verdicts.contains(&Verdict::Affected) {
        Verdict::Affected
    } else if !verdicts.is_empty() && verdicts.iter().all(|v| *v == Verdict::NoMeasurableEffect) {
        Verdict::NoMeasurableEffect
    } else {
        Verdict::Inconclusive
    }
}

/// Rounds to three decimals, so that reports read well and the JSON does not carry float noise.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` samples of a known distribution: a fixed permutation of evenly spaced quantiles of an
    /// exponential tail on top of `base`, so that every quantile is known exactly.
    fn samples(n: usize, base: f64, scale: f64, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix(seed);
        let mut v: Vec<f64> = (0..n)
            .map(|i| base - scale * (1.0 - (i as f64 + 0.5) / n as f64).ln())
            .collect();
        for i in (1..v.len()).rev() {
            v.swap(i, rng.below(i + 1));
        }
        v
    }

    /// `n` independent draws of an exponential distribution of mean `scale`.
    fn draws(n: usize, scale: f64, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix(seed);
        (0..n)
            .map(|_| -scale * (1.0 - (rng.next() >> 11) as f64 / (1u64 << 53) as f64).ln())
            .collect()
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), Some(50.0));
        assert_eq!(quantile(&v, 0.99), Some(99.0));
        assert_eq!(quantile(&v, 1.0), Some(100.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn a_p99_needs_ten_thousand_samples_and_a_median_two_hundred() {
        assert!(enough_for(0.99, 10_000));
        assert!(!enough_for(0.99, 9_999));
        assert!(enough_for(0.5, 200));
        assert!(!enough_for(0.5, 199));
        let few = samples(9_999, 10.0, 1.0, 1);
        assert_eq!(bootstrap_ratio("latency", &few, &few, 0.99, 7), None);
    }

    #[test]
    fn a_known_slowdown_is_found_affected_with_an_interval_around_it() {
        // The contended tail is the baseline's scaled by 1.5: the p99 ratio is 1.5.
        let b = samples(10_000, 10.0, 2.0, 1);
        let c: Vec<f64> = samples(10_000, 10.0, 2.0, 2)
            .iter()
            .map(|x| x * 1.5)
            .collect();
        let i = bootstrap_ratio("latency", &b, &c, 0.99, 42).unwrap();
        assert_eq!(i.statistic, "p99 latency");
        assert!((i.ratio - 1.5).abs() < 0.01, "{i:?}");
        assert!(i.low < 1.5 && 1.5 < i.high, "{i:?}");
        assert!(i.low > 1.2, "the interval excludes the threshold: {i:?}");
        assert_eq!(decide(&i, 1.2), Verdict::Affected);
        assert_eq!((i.baseline_samples, i.contended_samples), (10_000, 10_000));
    }

    #[test]
    fn no_effect_is_bounded_small() {
        let b = samples(10_000, 10.0, 2.0, 3);
        let c = samples(10_000, 10.0, 2.0, 4);
        let i = bootstrap_ratio("latency", &b, &c, 0.99, 42).unwrap();
        assert!(i.low < 1.0 && 1.0 < i.high, "{i:?}");
        assert!(i.high < 1.2, "{i:?}");
        assert_eq!(decide(&i, 1.2), Verdict::NoMeasurableEffect);
    }

    #[test]
    fn an_effect_near_the_threshold_with_few_samples_is_inconclusive() {
        // A true median ratio of 1.2 measured with 200 samples a phase: the interval straddles it.
        let b = samples(200, 10.0, 5.0, 5);
        let c: Vec<f64> = samples(200, 10.0, 5.0, 6).iter().map(|x| x * 1.2).collect();
        let i = bootstrap_ratio("latency", &b, &c, 0.5, 42).unwrap();
        assert!(i.low < 1.2 && 1.2 < i.high, "{i:?}");
        assert_eq!(decide(&i, 1.2), Verdict::Inconclusive);
    }

    #[test]
    fn the_interval_covers_the_true_ratio_about_as_often_as_it_claims() {
        // 40 independent experiments with a true median ratio of 1.3: a 95% interval should miss it
        // about twice; more than 6 misses (probability under 0.2% for a correct interval) fails.
        let mut misses = 0;
        for k in 0..40u64 {
            let b = draws(400, 1.0, 100 + 2 * k);
            let c = draws(400, 1.3, 101 + 2 * k);
            let i = bootstrap_ratio("t", &b, &c, 0.5, k).unwrap();
            if !(i.low <= 1.3 && 1.3 <= i.high) {
                misses += 1;
            }
        }
        assert!(
            misses <= 6,
            "{misses} of 40 intervals missed the true ratio"
        );
    }

    #[test]
    fn the_bootstrap_is_deterministic_for_a_seed() {
        let b = samples(300, 10.0, 1.0, 8);
        let c = samples(300, 11.0, 1.0, 9);
        assert_eq!(
            bootstrap_ratio("t", &b, &c, 0.5, 1),
            bootstrap_ratio("t", &b, &c, 0.5, 1)
        );
    }

    #[test]
    fn summaries_bound_the_p99_ratio_from_the_median_and_the_maximum() {
        // The H200's MPS run with limits (docs/evidence/2026-12-04-h200/run-2b): a contended p99 of
        // 20.2 us against 14.9 us alone, but the contended median (9.8) is below the baseline maximum
        // (21.0): the interval straddles 1.2.
        let i = summary_bound(
            "latency, host-timed",
            (400, 8.737, 20.956),
            (400, 9.81, 47.6),
            1.354,
        )
        .unwrap();
        assert_eq!((i.low, i.high), (0.468, 5.448));
        assert_eq!(i.confidence, 0.964);
        assert_eq!(decide(&i, 1.2), Verdict::Inconclusive);
        // Time-slicing on the same GPU: every contended sample waited a time slice.
        let ts = summary_bound(
            "latency, host-timed",
            (400, 10.334, 24.726),
            (400, 2417.441, 2429.631),
            162.0,
        )
        .unwrap();
        assert!(ts.low > 97.0, "{ts:?}");
        assert_eq!(decide(&ts, 1.2), Verdict::Affected);
        // Too few samples for the coverage claimed.
        assert_eq!(
            summary_bound("t", (100, 1.0, 2.0), (100, 5.0, 6.0), 3.0),
            None
        );
    }

    #[test]
    fn combined_verdicts_need_every_interval_small_for_no_effect() {
        use Verdict::*;
        assert_eq!(combine(&[NoMeasurableEffect, Affected]), Affected);
        assert_eq!(combine(&[NoMeasurableEffect, Inconclusive]), Inconclusive);
        assert_eq!(
            combine(&[NoMeasurableEffect, NoMeasurableEffect]),
            NoMeasurableEffect
        );
        assert_eq!(combine(&[]), Inconclusive);
    }
}
