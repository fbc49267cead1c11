//! The evidence of a fake time-slicing run, as a snapshot of its JSON. Numbers that depend on how many
//! loop rounds the aggressor managed (a matter of scheduling, not of the fake's model) are replaced. The
//! output formats are the report crate's (`gpu_trust_report::probe`), tested there on this evidence.

use crate::common;

use common::run_fake;
use gpu_trust_probe::Scenario;
use std::time::Duration;

/// All scenarios but utilisation, whose throughput depends on how the two workers' windows overlap.
const STABLE: [Scenario; 5] = [
    Scenario::MemoryExhaustion,
    Scenario::ComputeHog,
    Scenario::Bandwidth,
    Scenario::ResidualData,
    Scenario::DeviceFault,
];

/// Replaces the value of the loop-count fields, keeping the output's own key order and layout.
fn scrub(json: &str) -> String {
    json.lines()
        .map(|line| {
            let key = line.trim_start();
            match ["\"kernelsCompleted\": ", "\"bandwidthGbPerS\": "]
                .iter()
                .find(|k| key.starts_with(*k))
            {
                Some(k) => {
                    let indent = &line[..line.len() - key.len()];
                    let comma = if line.ends_with(',') { "," } else { "" };
                    format!("{indent}{k}\"[loop count]\"{comma}")
                }
                None => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The evidence as the probe writes it (pretty JSON).
fn to_json(ev: &gpu_trust_probe::ProbeEvidence) -> String {
    serde_json::to_string_pretty(ev).expect("evidence serialises")
}

#[test]
fn time_slicing_json() {
    let ev = run_fake("time-slicing", &STABLE, Duration::from_secs(60));
    let text = to_json(&ev);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["schema"], "gpu-trust/probe/v1");
    insta::assert_snapshot!(scrub(&text));
}

#[test]
fn json_is_byte_identical_for_identical_evidence() {
    let ev = run_fake(
        "mig",
        &[Scenario::MemoryExhaustion],
        Duration::from_secs(60),
    );
    let back: gpu_trust_probe::ProbeEvidence = serde_json::from_str(&to_json(&ev)).unwrap();
    assert_eq!(to_json(&back), to_json(&ev));
}
