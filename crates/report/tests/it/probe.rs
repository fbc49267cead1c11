//! `gpu-trust probe`'s output formats, rendered from recorded evidence (a fake time-slicing run in the
//! first schema, see `tests/data/SOURCES.md`): the table a person reads, and JSON the audit reads back
//! byte for byte.

use gpu_trust_model::evidence::{MechanismSettings, ProbeEvidence, RunEvidence, Verdict};
use gpu_trust_report::probe;

fn evidence() -> ProbeEvidence {
    let text = include_str!("../data/probe-time-slicing.json");
    serde_json::from_str(text).expect("the recorded evidence parses")
}

#[test]
fn time_slicing_table() {
    insta::assert_snapshot!(probe::table::render(&evidence()));
}

#[test]
fn the_table_names_each_scenario_with_its_verdict() {
    let ev = evidence();
    let text = probe::table::render(&ev);
    for s in &ev.scenarios {
        let row = text
            .lines()
            .find(|l| l.starts_with(&s.scenario.to_string()))
            .unwrap_or_else(|| panic!("no row for {}", s.scenario));
        assert!(row.contains(&s.verdict.to_string()), "{row}");
    }
    assert!(ev.scenarios.iter().any(|s| s.verdict == Verdict::Affected));
}

#[test]
fn the_table_names_the_run_and_the_settings_it_ran_under() {
    let mut ev = evidence();
    assert!(probe::table::render(&ev)
        .contains("  run:       not recorded (gpu-trust/probe/v1)\n  under:     time-slicing (its settings not recorded)\n"));
    ev.run = RunEvidence {
        name: Some("run-2a".into()),
        started_at: Some("2026-12-04T11:37:42Z".into()),
        commit: Some("7aba860".into()),
        partial: true,
        ..RunEvidence::default()
    };
    let mut settings = MechanismSettings::default();
    settings.set("replicas=4").unwrap();
    ev.mechanism.settings = Some(settings);
    let text = probe::table::render(&ev);
    assert!(
        text.contains(
            "  run:       run-2a, started 2026-12-04T11:37:42Z, commit 7aba860, partial\n  under:     \
             time-slicing, time-slice interval not recorded, as for 4 replicas\n"
        ),
        "{text}"
    );
}

#[test]
fn json_reads_back_to_the_same_bytes() {
    let ev = evidence();
    let text = probe::json::render(&ev).unwrap();
    assert!(text.ends_with("}\n"));
    let back: ProbeEvidence = serde_json::from_str(&text).unwrap();
    assert_eq!(back, ev);
    assert_eq!(probe::json::render(&back).unwrap(), text);
    // The recorded file is of the first schema: it reads, and writes back with the verdicts' new names.
    let recorded = include_str!("../data/probe-time-slicing.json");
    assert_eq!(
        text,
        recorded
            .replace("\"not-isolated\"", "\"affected\"")
            .replace("\"isolated\"", "\"no-measurable-effect\""),
    );
}

#[test]
fn control_characters_from_the_device_are_escaped_in_the_table() {
    let mut ev = evidence();
    ev.victim.name = Some("GPU\u{1b}[31m".to_string());
    ev.mechanism.notes.push("note\u{202e}".to_string());
    let text = probe::table::render(&ev);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
}
