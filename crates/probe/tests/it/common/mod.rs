//! Shared set-up: the fake backend driven through the real orchestration, with workers as threads.

use gpu_trust_model::evidence::{MechanismSettings, RunEvidence};
use gpu_trust_probe::fake::FakeBackend;
use gpu_trust_probe::orchestrate::{run_probe, ProbeOptions};
use gpu_trust_probe::thresholds::{Workload, DEFAULT_WORKLOAD, THRESHOLDS};
use gpu_trust_probe::transport::ThreadLauncher;
use gpu_trust_probe::{DeviceSpec, ProbeEvidence, Scenario};
use std::sync::Arc;
use std::time::Duration;

/// Small enough to run in a second on the fake: 400 latency samples and copy passes a phase, enough for
/// a median but not for a p99.
pub const TEST_WORKLOAD: Workload = Workload {
    latency_samples: 400,
    bandwidth_passes: 400,
    utilisation_ms: 60,
    fault_busy_ms: 100,
    ..DEFAULT_WORKLOAD
};

pub fn options(scenarios: &[Scenario], timeout: Duration) -> ProbeOptions {
    ProbeOptions {
        victim: DeviceSpec::Index(0),
        aggressor: DeviceSpec::Index(0),
        scenarios: scenarios.to_vec(),
        timeout,
        workload: TEST_WORKLOAD,
        thresholds: THRESHOLDS,
        node: Some("gpu-test".into()),
        remote_aggressor: None,
        run: RunEvidence {
            name: Some("test".into()),
            ..RunEvidence::default()
        },
        settings: MechanismSettings::default(),
    }
}

/// Runs the probe on a fake profile; `timeout` bounds each scenario.
pub fn run_fake(profile: &str, scenarios: &[Scenario], timeout: Duration) -> ProbeEvidence {
    run_fake_with(profile, &options(scenarios, timeout))
}

/// Runs the probe on a fake profile with these options; checks that every scenario but the last was
/// handed over as partial evidence.
pub fn run_fake_with(profile: &str, options: &ProbeOptions) -> ProbeEvidence {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(FakeBackend::with_dir(profile, dir.path()).unwrap());
    let launcher = ThreadLauncher {
        backend: backend.clone(),
    };
    let mut progress = Vec::new();
    let mut partial = Vec::new();
    let ev = run_probe(
        backend.as_ref(),
        &launcher,
        options,
        &mut |p| progress.push(p.to_string()),
        &mut |e| partial.push((e.scenarios.len(), e.run.partial)),
    )
    .unwrap();
    assert_eq!(progress.len(), 3 * ev.scenarios.len(), "{progress:?}");
    let expected: Vec<(usize, bool)> = (1..ev.scenarios.len()).map(|n| (n, true)).collect();
    assert_eq!(
        partial, expected,
        "partial evidence after every scenario but the last"
    );
    assert!(!ev.run.partial);
    ev
}
