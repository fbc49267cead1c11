//! Output formats of a probe run: JSON (`gpu-trust/probe/v1`) and a plain table.

use gpu_trust_model::evidence::{DeviceEvidence, ProbeEvidence};

/// The evidence as pretty JSON with a trailing newline. Field order is fixed by the types, so the same
/// evidence always gives the same bytes.
pub fn to_json(evidence: &ProbeEvidence) -> String {
    let mut s = serde_json::to_string_pretty(evidence).unwrap_or_else(|e| {
        // The evidence types are plain data; this only guards against a non-finite float.
        serde_json::json!({ "schema": evidence.schema, "error": e.to_string() }).to_string()
    });
    s.push('\n');
    s
}

fn device_line(d: &DeviceEvidence) -> String {
    let mut parts = vec![d.spec.clone()];
    if let Some(n) = &d.name {
        parts.push(n.clone());
    }
    if let Some(u) = &d.uuid {
        parts.push(u.clone());
    }
    if let Some(m) = d.memory_mib {
        parts.push(format!("{m} MiB"));
    }
    parts.join(", ")
}

/// A table for a terminal: one row per scenario, then the notes.
pub fn to_table(evidence: &ProbeEvidence) -> String {
    let mut out = String::new();
    let m = &evidence.mechanism;
    out.push_str(&format!(
        "gpu-trust probe{}: {}\n",
        evidence
            .node
            .as_deref()
            .map(|n| format!(" on {n}"))
            .unwrap_or_default(),
        m.kind
    ));
    out.push_str(&format!("  victim:    {}\n", device_line(&evidence.victim)));
    out.push_str(&format!(
        "  aggressor: {}\n",
        device_line(&evidence.aggressor)
    ));
    let driver = [
        evidence
            .driver
            .version
            .as_deref()
            .map(|v| format!("driver {v}")),
        evidence
            .driver
            .cuda_version
            .as_deref()
            .map(|v| format!("CUDA {v}")),
        m.compute_mode
            .as_deref()
            .map(|c| format!("compute mode {c}")),
        m.mig_mode
            .map(|on| format!("MIG {}", if on { "on" } else { "off" })),
        Some(format!("MPS {}", if m.mps { "on" } else { "off" })),
        m.cc_mode.as_deref().map(|c| format!("CC {c}")),
    ];
    let driver: Vec<String> = driver.into_iter().flatten().collect();
    out.push_str(&format!("  {}\n\n", driver.join(", ")));

    let headers = ["SCENARIO", "VERDICT", "MEASURED"];
    let rows: Vec<[String; 3]> = evidence
        .scenarios
        .iter()
        .map(|s| {
            [
                s.scenario.to_string(),
                s.verdict.to_string(),
                s.summary.clone(),
            ]
        })
        .collect();
    let w0 = rows
        .iter()
        .map(|r| r[0].len())
        .chain([headers[0].len()])
        .max()
        .unwrap_or(0);
    let w1 = rows
        .iter()
        .map(|r| r[1].len())
        .chain([headers[1].len()])
        .max()
        .unwrap_or(0);
    out.push_str(&format!(
        "{:<w0$}  {:<w1$}  {}\n",
        headers[0], headers[1], headers[2]
    ));
    for r in &rows {
        out.push_str(&format!("{:<w0$}  {:<w1$}  {}\n", r[0], r[1], r[2]));
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
        out.push_str("\nisolated means:\n");
        for t in thresholds {
            out.push_str(&t);
            out.push('\n');
        }
    }
    if !m.notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &m.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}
