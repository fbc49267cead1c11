//! The H200 evidence of 2026-12-04 as the audit cites it: each raw `gpu-trust/probe/v1` file under
//! `docs/evidence/2026-12-04-h200/run-*/`, kept as the script wrote it, converted into
//! `docs/evidence/2026-12-04-h200/v2/` with what v1 did not record taken from the same run's own files
//! (its start from `summary.json` and `steps.log`, the limits the script set from `steps.log` and the
//! daemon's answers) and every scenario judged again by the current verdicts.
//!
//! The conversion is this test: it fails when a committed v2 file differs from what it makes, and
//! `UPDATE_EVIDENCE=1 cargo test -p gpu-trust-probe --test it h200` writes them.

use gpu_trust_model::evidence::{
    MechanismSettings, ProbeEvidence, RunEvidence, ScenarioEvidence, PROBE_SCHEMA, PROBE_SCHEMA_V1,
};
use gpu_trust_probe::thresholds::THRESHOLDS;
use gpu_trust_probe::verdict::judge;
use std::path::{Path, PathBuf};

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/evidence/2026-12-04-h200")
}

/// The commit the four runs' binary was built from, as the folder's README records it (`7aba860`).
const COMMIT: &str = "7aba8605bf25f18b14165bfcd929c5e7dd23881e";

/// Every probe run of the four script runs, with the limits the script set on its MPS daemon (each
/// from the run's `steps.log`: the daemon of `mps` was started with no limit asked, so it ran with
/// all threads and no pinned memory limit; `mps-limited` asked for 8192M and no thread percentage;
/// `mps-replicas` for the device plugin's split of the GPU between two replicas).
const RUNS: [(&str, &str, &[&str]); 12] = [
    ("run-1", "time-slicing", &[]),
    ("run-1", "mps", &UNLIMITED),
    (
        "run-1",
        "mps-limited",
        &[
            "mps-active-thread-percentage=100",
            "mps-pinned-memory-limit=8192M",
        ],
    ),
    ("run-2a", "time-slicing", &[]),
    ("run-2a", "mps", &UNLIMITED),
    ("run-2a", "mps-replicas", &REPLICAS),
    ("run-2b", "time-slicing", &[]),
    ("run-2b", "mps", &UNLIMITED),
    ("run-2b", "mps-replicas", &REPLICAS),
    ("run-2c", "time-slicing", &[]),
    ("run-2c", "mps", &UNLIMITED),
    ("run-2c", "mps-replicas", &REPLICAS),
];
const UNLIMITED: [&str; 2] = [
    "mps-active-thread-percentage=100",
    "mps-pinned-memory-limit=none",
];
const REPLICAS: [&str; 3] = [
    "replicas=2",
    "mps-active-thread-percentage=50",
    "mps-pinned-memory-limit=71885M",
];

/// The probe's start: the script's (`summary.json`) plus the second its probe step began, from the
/// step's line in `steps.log` (`  25s mps: gpu-trust probe (18s per scenario): exit 1 in 13s`).
fn started_at(run: &Path, name: &str) -> String {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    let script = summary["startedAt"].as_str().unwrap();
    let steps = std::fs::read_to_string(run.join("steps.log")).unwrap();
    let line = steps
        .lines()
        .find(|l| l.contains(&format!(" {name}: gpu-trust probe ")))
        .unwrap_or_else(|| panic!("{}: no probe step {name}", run.display()));
    let number = |s: &str| s.trim().trim_end_matches('s').parse::<u64>().unwrap();
    let end = number(line.split_whitespace().next().unwrap());
    let took = number(line.rsplit(" in ").next().unwrap());
    // `2026-12-04T11:37:31Z` plus whole seconds, within the same day (every run took under a minute).
    let (day, time) = script.trim_end_matches('Z').split_once('T').unwrap();
    let hms: Vec<u64> = time.split(':').map(|p| p.parse().unwrap()).collect();
    let s = hms[0] * 3600 + hms[1] * 60 + hms[2] + end - took;
    assert!(s < 86_400);
    format!("{day}T{:02}:{:02}:{:02}Z", s / 3600, s % 3600 / 60, s % 60)
}

fn convert(run: &str, name: &str, settings: &[&str]) -> ProbeEvidence {
    let dir = folder().join(run);
    let raw = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
    let mut ev: ProbeEvidence = serde_json::from_str(&raw).unwrap();
    assert_eq!(ev.schema, PROBE_SCHEMA_V1, "{run}/{name}");
    ev.schema = PROBE_SCHEMA.into();
    ev.run = RunEvidence {
        name: Some(format!("2026-12-04-h200/{run}")),
        started_at: Some(started_at(&dir, name)),
        commit: Some(COMMIT.into()),
        converted: Some(format!(
            "converted from gpu-trust/probe/v1 ({run}/{name}.json): the run, its start and the \
             settings taken from the run's summary.json and steps.log, the commit from the folder's \
             README; the binary's SHA-256 was not recorded; every scenario judged again by the \
             current verdicts"
        )),
        ..RunEvidence::default()
    };
    let mut declared = MechanismSettings::default();
    for s in settings {
        declared.set(s).unwrap();
    }
    ev.mechanism.settings = Some(declared);
    ev.scenarios = ev
        .scenarios
        .into_iter()
        .map(|s| {
            let j = judge(s.scenario, &s.baseline, &s.contended, &THRESHOLDS);
            ScenarioEvidence {
                verdict: j.verdict,
                summary: j.summary,
                threshold: THRESHOLDS.describe(s.scenario),
                comparison: j.comparison,
                ..s
            }
        })
        .collect();
    ev
}

#[test]
fn the_cited_h200_evidence_is_the_raw_evidence_judged_again() {
    let update = std::env::var_os("UPDATE_EVIDENCE").is_some();
    let mut stale = Vec::new();
    for (run, name, settings) in RUNS {
        let ev = convert(run, name, settings);
        let mut text = serde_json::to_string_pretty(&ev).unwrap();
        text.push('\n');
        let path = folder().join("v2").join(run).join(format!("{name}.json"));
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("{run}/{name}"));
        }
    }
    assert!(
        stale.is_empty(),
        "docs/evidence/2026-12-04-h200/v2 is stale for {stale:?}: run UPDATE_EVIDENCE=1 cargo test \
         -p gpu-trust-probe --test it h200"
    );
}

#[test]
fn every_raw_probe_file_of_the_folder_is_converted() {
    let mut raw = Vec::new();
    for run in std::fs::read_dir(folder()).unwrap().flatten() {
        let run_name = run.file_name().to_string_lossy().into_owned();
        if !run_name.starts_with("run-") {
            continue;
        }
        for f in std::fs::read_dir(run.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            if text.contains("\"schema\": \"gpu-trust/probe/v1\"") {
                let file = f.file_name().to_string_lossy().into_owned();
                raw.push((run_name.clone(), file.trim_end_matches(".json").to_string()));
            }
        }
    }
    raw.sort();
    let mut listed: Vec<(String, String)> = RUNS
        .iter()
        .map(|(r, n, _)| (r.to_string(), n.to_string()))
        .collect();
    listed.sort();
    assert_eq!(
        raw, listed,
        "the example must cite every run, not a chosen one"
    );
}

#[test]
fn the_start_of_a_probe_step_is_read_from_its_run() {
    assert_eq!(
        started_at(&folder().join("run-2b"), "mps-replicas"),
        "2026-12-04T11:37:57Z"
    );
}
