//! Every scenario under every fake mechanism, through the real orchestration and verdict logic.

use crate::common;

use common::run_fake;
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
    assert_eq!(order, Scenario::ALL.to_vec(), "device-fault runs last");

    let mem = get(&ev, Scenario::MemoryExhaustion);
    assert_eq!(mem.verdict, Verdict::NotIsolated, "{}", mem.summary);
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
            .starts_with("victim allocation of 256 MiB failed"),
        "{}",
        mem.summary
    );

    let hog = get(&ev, Scenario::ComputeHog);
    assert_eq!(hog.verdict, Verdict::NotIsolated);
    assert_eq!(hog.comparison.p99_slowdown, Some(4.0));

    let bw = get(&ev, Scenario::Bandwidth);
    assert_eq!(bw.verdict, Verdict::NotIsolated);
    assert_eq!(bw.comparison.bandwidth_ratio, Some(0.5));

    let res = get(&ev, Scenario::ResidualData);
    assert_eq!(res.verdict, Verdict::Isolated, "{}", res.summary);
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

    let fault = get(&ev, Scenario::DeviceFault);
    assert_eq!(fault.verdict, Verdict::Isolated, "{}", fault.summary);
    assert_eq!(
        fault.contended.aggressor.as_ref().unwrap().fault_raised,
        Some(true)
    );
}

#[test]
fn mps_limits_memory_but_spreads_faults() {
    assert_eq!(
        verdicts("mps"),
        vec![
            (Scenario::MemoryExhaustion, Verdict::Isolated),
            (Scenario::ComputeHog, Verdict::NotIsolated),
            (Scenario::Bandwidth, Verdict::NotIsolated),
            (Scenario::ResidualData, Verdict::Isolated),
            (Scenario::Utilisation, Verdict::ReportOnly),
            (Scenario::DeviceFault, Verdict::NotIsolated),
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
        f.summary.starts_with("victim context lost"),
        "{}",
        f.summary
    );
}

#[test]
fn mig_isolates_every_measured_property() {
    let ev = run_fake("mig", &[], LONG);
    assert_eq!(ev.mechanism.kind, MeasuredMechanism::Mig);
    assert!(ev.victim.uuid.as_deref().unwrap().starts_with("MIG-"));
    assert_ne!(ev.victim.uuid, ev.aggressor.uuid);
    for s in &ev.scenarios {
        let want = if s.scenario == Scenario::Utilisation {
            Verdict::ReportOnly
        } else {
            Verdict::Isolated
        };
        assert_eq!(s.verdict, want, "{}: {}", s.scenario, s.summary);
    }
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
    assert_eq!(r.verdict, Verdict::NotIsolated, "{}", r.summary);
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
        1024 * 1024 * 1024 / 8,
        "every freed marker word reappears"
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
fn claims_name_incident_mechanism_and_node() {
    let ev = run_fake("time-slicing", &[Scenario::MemoryExhaustion], LONG);
    let claims = ev.claims();
    assert_eq!(claims.len(), 1);
    assert_eq!(
        claims[0].incident,
        Some(gpu_trust_model::Incident::MemoryExhaustion)
    );
    assert!(
        claims[0]
            .statement
            .starts_with("measured on gpu-test: victim allocation of 256 MiB failed"),
        "{}",
        claims[0].statement
    );
    assert!(claims[0].statement.contains("under time-slicing"));
}
