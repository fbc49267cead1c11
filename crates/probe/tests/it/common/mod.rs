//! Shared set-up: the fake backend driven through the real orchestration, with workers as threads.

use gpu_trust_probe::fake::FakeBackend;
use gpu_trust_probe::orchestrate::{run_probe, ProbeOptions};
use gpu_trust_probe::thresholds::{Workload, DEFAULT_WORKLOAD, THRESHOLDS};
use gpu_trust_probe::transport::ThreadLauncher;
use gpu_trust_probe::{DeviceSpec, ProbeEvidence, Scenario};
use std::sync::Arc;
use std::time::Duration;

/// Small enough to run in milliseconds on the fake.
pub const TEST_WORKLOAD: Workload = Workload {
    latency_samples: 100,
    residual_max_mib: 1024,
    utilisation_ms: 60,
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
    }
}

/// Runs the probe on a fake profile; `timeout` bounds each scenario.
pub fn run_fake(profile: &str, scenarios: &[Scenario], timeout: Duration) -> ProbeEvidence {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(FakeBackend::with_dir(profile, dir.path()).unwrap());
    let launcher = ThreadLauncher {
        backend: backend.clone(),
    };
    let mut progress = Vec::new();
    let ev = run_probe(
        backend.as_ref(),
        &launcher,
        &options(scenarios, timeout),
        &mut |p| progress.push(p.to_string()),
    )
    .unwrap();
    assert_eq!(progress.len(), 3 * ev.scenarios.len(), "{progress:?}");
    ev
}
