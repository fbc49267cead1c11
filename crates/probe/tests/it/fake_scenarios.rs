//! Every scenario under every fake mechanism, through the real orchestration and verdict logic.

use crate::common;

use common::{options, run_fake, run_fake_with};
use gpu_trust_model::evidence::{MeasuredMechanism, ScenarioEvidence};
use gpu_trust_probe::{Scenario, Verdict};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

fn verdicts(profile: &str) -> Vec<(Scenario, Verdict)> {
    run_fake(profile, &[], LONG)
        .scenarios
        .iter()
        .map(|s| (s.scenario, s.verdict))
        .collect()
}

fn get(ev: &gpu_trust_probe::ProbeEvidence, s: Scenario) -> &ScenarioEvidence {
    ev.scenario(s).unwrap()
}

#[test]
fn time_slicing_shares_memory_compute_and_bandwidth_but_contains_faults() {
    let ev = run_fake("time-slicing", &[], LONG);
    assert_eq!(ev.mechanism.kind, MeasuredMechanism::TimeSlicing);
    let order: Vec<Scenario> = ev.scenarios.iter().map(|s| s.scenario).collect();
    assert_eq!(order, Scenario::ALL.to_vec(), "the device faults run last");
    assert_eq!(ev.schema, "gpu-trust/probe/v2");
    assert_eq!(ev.run.name.as_deref(), Some("test"));
    assert!(ev.run.date().is_some(), "{:?}", ev.run.started_at);
    assert!(ev.mechanism.settings.is_some());

    let mem = get(&ev, Scenario::MemoryExhaustion);
    assert_eq!(mem.verdict, Verdict::Affected, "{}", mem.summary);
    let c = mem
        .contended
        .victim
        .as_ref()
        .unwrap()
        .memory
        .as_ref()
        .unwrap();
    assert!(!c.allocation_ok);
    assert!(c
        .allocation_error
        .as_deref()
        .unwrap()
        .contains("OUT_OF_MEMORY"));
    assert!(c.checksum_intact, "time-slicing keeps address spaces apart");
    assert!(
        mem.contended
            .aggressor
            .as_ref()
            .unwrap()
            .allocated_mib
            .unwrap()
            > 15_000
    );
    assert!(
        mem.summary
            .starts_with("the victim's allocation of 256 MiB failed"),
        "{}",
        mem.summary
    );

    // The fake's time slice: the victim's kernels wait on the host's clock, not on the GPU's.
    let hog = get(&ev, Scenario::ComputeHog);
    assert_eq!(hog.verdict, Verdict::Affected, "{}", hog.summary);
    let [gpu, host] = &hog.comparison.intervals[..] else {
        panic!("{:?}", hog.comparison)
    };
    assert_eq!(gpu.statistic, "median latency, GPU-timed");
    assert!(gpu.low <= 1.0 && 1.0 <= gpu.high, "{gpu:?}");
    assert!(host.low > 3.0, "{host:?}");
    let pooled = hog
        .baseline
        .victim
        .as_ref()
        .unwrap()
        .latency
        .as_ref()
        .unwrap();
    assert_eq!((pooled.gpu_us.len(), pooled.blocks), (400, 4));

    let bw = get(&ev, Scenario::Bandwidth);
    assert_eq!(bw.verdict, Verdict::Affected, "{}", bw.summary);
    assert_eq!(
        bw.comparison.intervals[1].statistic,
        "median bandwidth of a pass, host-timed"
    );

    let res = get(&ev, Scenario::ResidualData);
    assert_eq!(res.verdict, Verdict::NoMeasurableEffect, "{}", res.summary);
    assert_eq!(
        res.contended
            .victim
            .as_ref()
            .unwrap()
            .residue
            .as_ref()
            .unwrap()
            .marker_words,
        0
    );

    let util = get(&ev, Scenario::Utilisation);
    assert_eq!(util.verdict, Verdict::ReportOnly);
    assert_eq!(util.contended.nvml_gpu_utilisation_percent, Some(100.0));
    let r = util.comparison.throughput_ratio.unwrap();
    assert!(
        r < 0.75,
        "each process loses throughput while NVML says 100%: {r}"
    );
    assert!(util.contended.peer.is_some());

    for s in [Scenario::DeviceFault, Scenario::DeviceFaultBusy] {
        let fault = get(&ev, s);
        assert_eq!(
            fault.verdict,
            Verdict::NoMeasurableEffect,
            "{}",
            fault.summary
        );
        assert_eq!(
            fault.contended.aggressor.as_ref().unwrap().fault_raised,
            Some(true)
        );
    }
    let busy = get(&ev, Scenario::DeviceFaultBusy);
    assert!(
        busy.summary.contains("while the victim ran kernels"),
        "{}",
        busy.summary
    );
}

#[test]
fn mps_limits_memory_but_spreads_faults() {
    assert_eq!(
        verdicts("mps"),
        vec![
            (Scenario::MemoryExhaustion, Verdict::NoMeasurableEffect),
            (Scenario::ComputeHog, Verdict::Affected),
            (Scenario::Bandwidth, Verdict::Affected),
            (Scenario::ResidualData, Verdict::NoMeasurableEffect),
            (Scenario::Utilisation, Verdict::ReportOnly),
            (Scenario::DeviceFault, Verdict::Affected),
            (Scenario::DeviceFaultBusy, Verdict::Affected),
        ]
    );
}

#[test]
fn mps_fault_reaches_the_victim_context() {
    let ev = run_fake("mps", &[Scenario::DeviceFault], LONG);
    let f = get(&ev, Scenario::DeviceFault);
    let m = f.contended.victim.as_ref().unwrap().fault.as_ref().unwrap();
    assert!(!m.context_survived);
    assert!(m.error.as_deref().unwrap().contains("ILLEGAL_ADDRESS"));
    assert!(
        f.summary.starts_with(
            "one illegal-address fault in the neighbour's context, while the victim was idle, \
             ended the victim's context"
        ),
        "{}",
        f.summary
    );
}

#[test]
fn mig_shows_no_measurable_effect_and_a_p99_needs_ten_thousand_samples() {
    let mut opts = options(&[], LONG);
    opts.workload.latency_samples = 10_000;
    let ev = run_fake_with("mig", &opts);
    assert_eq!(ev.mechanism.kind, MeasuredMechanism::Mig);
    assert!(ev.victim.uuid.as_deref().unwrap().starts_with("MIG-"));
    assert_ne!(ev.victim.uuid, ev.aggressor.uuid);
    for s in &ev.scenarios {
        let want = if s.scenario == Scenario::Utilisation {
            Verdict::ReportOnly
        } else {
            Verdict::NoMeasurableEffect
        };
        assert_eq!(s.verdict, want, "{}: {}", s.scenario, s.summary);
    }
    let hog = get(&ev, Scenario::ComputeHog);
    assert_eq!(
        hog.comparison.intervals[0].statistic,
        "p99 latency, GPU-timed"
    );
    // With 400 samples a phase the same GPU's median shows no effect, which is not a claim about the
    // tail: inconclusive.
    let few = run_fake("mig", &[Scenario::ComputeHog], LONG);
    let hog = get(&few, Scenario::ComputeHog);
    assert_eq!(hog.verdict, Verdict::Inconclusive, "{}", hog.summary);
    assert!(
        hog.summary.contains("a p99 needs 10,000 samples"),
        "{}",
        hog.summary
    );
    let util = get(&ev, Scenario::Utilisation);
    assert_eq!(util.contended.nvml_gpu_utilisation_percent, None);
    assert!(
        util.summary.starts_with("NVML reported no utilisation"),
        "{}",
        util.summary
    );
}

#[test]
fn unscrubbed_memory_leaks_the_marker() {
    let ev = run_fake("no-scrub", &[Scenario::ResidualData], LONG);
    let r = get(&ev, Scenario::ResidualData);
    assert_eq!(r.verdict, Verdict::Affected, "{}", r.summary);
    let found = r
        .contended
        .victim
        .as_ref()
        .unwrap()
        .residue
        .as_ref()
        .unwrap()
        .marker_words;
    assert_eq!(
        found,
        16_384 * 1024 * 1024 / 8,
        "every freed marker word of the whole fake GPU reappears"
    );
    assert_eq!(
        r.baseline
            .victim
            .as_ref()
            .unwrap()
            .residue
            .as_ref()
            .unwrap()
            .marker_words,
        0
    );
}

#[test]
fn a_hanging_aggressor_makes_every_scenario_inconclusive_within_the_timeout() {
    // The bound covers the baseline too (both runs share it): three seconds leave the baseline's
    // fake victim time to start and finish on a loaded machine, where one second did not. That the
    // hang is cut at the bound is shown by the contended run's error, not by a clock here.
    let ev = run_fake("hang", &[], Duration::from_secs(3));
    for s in &ev.scenarios {
        assert_eq!(
            s.verdict,
            Verdict::Inconclusive,
            "{}: {}",
            s.scenario,
            s.summary
        );
        let err = s.contended.error.as_deref().unwrap_or("");
        assert!(err.contains("timed out after 3s"), "{}: {err}", s.scenario);
        assert!(
            s.baseline.error.is_none(),
            "the baseline has no aggressor: {:?}",
            s.baseline.error
        );
    }
}

#[test]
fn an_aggressor_without_a_context_is_inconclusive_and_says_why() {
    let ev = run_fake("exclusive-process", &[], LONG);
    assert_eq!(ev.mechanism.kind, MeasuredMechanism::ExclusiveProcess);
    for s in &ev.scenarios {
        assert_eq!(s.verdict, Verdict::Inconclusive, "{}", s.scenario);
        assert!(
            s.contended
                .error
                .as_deref()
                .unwrap()
                .contains("EXCLUSIVE_PROCESS"),
            "{:?}",
            s.contended.error
        );
    }
}

#[test]
fn selected_scenarios_run_once_in_canonical_order() {
    let ev = run_fake(
        "time-slicing",
        &[
            Scenario::DeviceFault,
            Scenario::MemoryExhaustion,
            Scenario::DeviceFault,
        ],
        LONG,
    );
    let order: Vec<Scenario> = ev.scenarios.iter().map(|s| s.scenario).collect();
    assert_eq!(
        order,
        vec![Scenario::MemoryExhaustion, Scenario::DeviceFault]
    );
}

#[test]
fn a_citation_of_a_run_names_its_conditions() {
    let ev = run_fake("time-slicing", &[Scenario::MemoryExhaustion], LONG);
    let cluster = ["gpu-test"].into_iter().collect();
    let site = gpu_trust_model::evidence::EvidenceSite {
        node: "gpu-test",
        model: None,
        cluster_nodes: &cluster,
    };
    let cited = gpu_trust_model::evidence::cite(
        std::slice::from_ref(&ev),
        &site,
        gpu_trust_model::isolation::Mechanism::TimeSlicing,
        gpu_trust_model::Incident::MemoryExhaustion,
    );
    assert_eq!(cited.len(), 1);
    assert!(
        cited[0].starts_with(
            "memory-exhaustion: affected in 1 of 1 run under time-slicing, time-slice interval not \
             recorded (test: the victim's allocation of 256 MiB failed"
        ),
        "{}",
        cited[0]
    );
    assert!(
        cited[0].contains(&format!(
            "Measured on gpu-test (Fake GPU (time-slicing), driver fake) on {}",
            ev.run.date().unwrap()
        )),
        "{}",
        cited[0]
    );
}
