//! `gpu-trust probe --format table`: the devices and driver, the run and the mechanism's settings, one
//! row per scenario, what each verdict was judged against, and the mechanism's notes.

use gpu_trust_model::evidence::{DeviceEvidence, ProbeEvidence, RunEvidence};
use gpu_trust_model::terminal::escape;
use std::fmt::Write;

const HEADERS: [&str; 3] = ["SCENARIO", "VERDICT", "MEASURED"];

/// A device as the user named it, then what the driver says about it.
fn device_line(d: &DeviceEvidence) -> String {
    let mut parts = vec![escape(&d.spec).into_owned()];
    parts.extend(d.name.as_deref().map(|n| escape(n).into_owned()));
    parts.extend(d.uuid.as_deref().map(|u| escape(u).into_owned()));
    parts.extend(d.memory_mib.map(|m| format!("{m} MiB")));
    parts.join(", ")
}

/// The driver, CUDA and the modes the probe found, as one line.
fn driver_line(evidence: &ProbeEvidence) -> String {
    let m = &evidence.mechanism;
    let on_off = |on: bool| if on { "on" } else { "off" };
    [
        evidence
            .driver
            .version
            .as_deref()
            .map(|v| format!("driver {}", escape(v))),
        evidence
            .driver
            .cuda_version
            .as_deref()
            .map(|v| format!("CUDA {}", escape(v))),
        m.compute_mode
            .as_deref()
            .map(|c| format!("compute mode {}", escape(c))),
        m.mig_mode.map(|on| format!("MIG {}", on_off(on))),
        Some(format!("MPS {}", on_off(m.mps))),
        m.cc_mode.as_deref().map(|c| format!("CC {}", escape(c))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
}

/// Which run this is and what measured it, as one line.
fn run_line(evidence: &ProbeEvidence) -> String {
    let r: &RunEvidence = &evidence.run;
    if r.is_empty() {
        return format!("not recorded ({})", escape(&evidence.schema));
    }
    [
        r.name.as_deref().map(|n| escape(n).into_owned()),
        r.started_at
            .as_deref()
            .map(|t| format!("started {}", escape(t))),
        Some(match r.commit.as_deref() {
            Some(c) => format!("commit {}", escape(c)),
            None => "commit not recorded".to_string(),
        }),
        r.binary_sha256
            .as_deref()
            .map(|h| format!("binary sha256 {}", escape(h))),
        r.partial.then(|| "partial".to_string()),
        r.converted.as_deref().map(|c| escape(c).into_owned()),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
}

/// The table for a terminal. Columns are as wide as their longest cell; the last one is not padded.
pub fn render(evidence: &ProbeEvidence) -> String {
    let mut out = String::new();
    let node = evidence
        .node
        .as_deref()
        .map(|n| format!(" on {}", escape(n)))
        .unwrap_or_default();
    let _ = writeln!(out, "gpu-trust probe{node}: {}", evidence.mechanism.kind);
    let _ = writeln!(out, "  victim:    {}", device_line(&evidence.victim));
    let _ = writeln!(out, "  aggressor: {}", device_line(&evidence.aggressor));
    let _ = writeln!(out, "  {}", driver_line(evidence));
    let _ = writeln!(out, "  run:       {}", run_line(evidence));
    let _ = writeln!(
        out,
        "  under:     {}\n",
        escape(&evidence.mechanism.describe())
    );

    let rows: Vec<[String; 3]> = evidence
        .scenarios
        .iter()
        .map(|s| {
            [
                s.scenario.to_string(),
                s.verdict.to_string(),
                escape(&s.summary).into_owned(),
            ]
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].len())
            .chain([HEADERS[i].len()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1) = (width(0), width(1));
    let _ = writeln!(
        out,
        "{:<w0$}  {:<w1$}  {}",
        HEADERS[0], HEADERS[1], HEADERS[2]
    );
    for r in &rows {
        let _ = writeln!(out, "{:<w0$}  {:<w1$}  {}", r[0], r[1], r[2]);
    }

    let thresholds: Vec<String> = evidence
        .scenarios
        .iter()
        .filter_map(|s| {
            s.threshold
                .as_ref()
                .map(|t| format!("  {}: {t}", s.scenario))
        })
        .collect();
    if !thresholds.is_empty() {
        out.push_str("\njudged against:\n");
        for t in thresholds {
            let _ = writeln!(out, "{t}");
        }
    }
    if !evidence.mechanism.notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &evidence.mechanism.notes {
            let _ = writeln!(out, "  - {}", escape(n));
        }
    }
    out
}
