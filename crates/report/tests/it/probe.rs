//! `gpu-trust probe`'s output formats, rendered from recorded evidence (a fake time-slicing run, see
//! `tests/data/SOURCES.md`): the table a person reads, and JSON the audit reads back byte for byte.

use gpu_trust_model::evidence::{ProbeEvidence, Verdict};
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
    assert!(ev
        .scenarios
        .iter()
        .any(|s| s.verdict == Verdict::NotIsolated));
}

#[test]
fn json_reads_back_to_the_same_bytes() {
    let ev = evidence();
    let text = probe::json::render(&ev).unwrap();
    assert!(text.ends_with("}\n"));
    let back: ProbeEvidence = serde_json::from_str(&text).unwrap();
    assert_eq!(probe::json::render(&back).unwrap(), text);
    assert_eq!(
        text,
        include_str!("../data/probe-time-slicing.json"),
        "the renderer writes the evidence exactly as recorded"
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
