//! The evidence of a fake time-slicing run, as a snapshot of its JSON. Numbers that depend on how many
//! loop rounds the aggressor managed (a matter of scheduling, not of the fake's model) and the time the
//! run started are replaced, and each list of samples by its length. The output formats are the report
//! crate's (`gpu_trust_report::probe`), tested there on this evidence.

use crate::common;

use common::run_fake;
use gpu_trust_probe::Scenario;
use std::time::Duration;

/// All scenarios but utilisation, whose throughput depends on how the two workers' windows overlap, and
/// the busy fault, whose victim counts the kernels it ran in a window of wall-clock time.
const STABLE: [Scenario; 5] = [
    Scenario::MemoryExhaustion,
    Scenario::ComputeHog,
    Scenario::Bandwidth,
    Scenario::ResidualData,
    Scenario::DeviceFault,
];

/// Replaces the value of the loop-count and time fields, and each list of samples by its length,
/// keeping the output's own key order and layout.
fn scrub(json: &str) -> String {
    let mut out = Vec::new();
    let mut lines = json.lines();
    while let Some(line) = lines.next() {
        let key = line.trim_start();
        let indent = &line[..line.len() - key.len()];
        let samples = ["\"gpuUs\"", "\"hostUs\"", "\"passGpuUs\"", "\"passHostUs\""];
        if let Some(name) = key.strip_suffix(": [").filter(|k| samples.contains(k)) {
            // A list of numbers, one a line, up to its closing bracket.
            let mut n = 0;
            let mut close = "";
            for l in lines.by_ref() {
                let t = l.trim();
                if t.starts_with(']') {
                    close = if t.ends_with(',') { "," } else { "" };
                    break;
                }
                n += 1;
            }
            out.push(format!("{indent}{name}: \"[{n} samples]\"{close}"));
            continue;
        }
        let replaced = [
            ("\"kernelsCompleted\": ", "[loop count]"),
            ("\"bandwidthGbPerS\": ", "[loop count]"),
            ("\"startedAt\": ", "[time]"),
            ("\"faultAtMs\": ", "[time]"),
        ]
        .iter()
        .find(|(k, _)| key.starts_with(*k));
        out.push(match replaced {
            Some((k, what)) => {
                let comma = if line.ends_with(',') { "," } else { "" };
                format!("{indent}{k}\"{what}\"{comma}")
            }
            None => line.to_string(),
        });
    }
    out.join("\n")
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
    assert_eq!(value["schema"], "gpu-trust/probe/v2");
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
