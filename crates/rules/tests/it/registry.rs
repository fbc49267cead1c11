//! Tests over the whole rule registry: codes, names, layers, severities and documentation. They
//! enumerate the registry; the one list of the rules with their code, name, layer and severity is the
//! `codes` snapshot, which a new rule changes (review its diff).

use gpu_trust_model::Layer;
use gpu_trust_rules::{registry, rule, DOC_SECTIONS};
use std::collections::BTreeSet;

#[test]
fn codes_are_unique_and_sorted() {
    let codes: Vec<&str> = registry().iter().map(|r| r.code).collect();
    let unique: BTreeSet<&str> = codes.iter().copied().collect();
    assert_eq!(unique.len(), codes.len(), "duplicate codes in {codes:?}");
    let mut sorted = codes.clone();
    sorted.sort();
    assert_eq!(codes, sorted, "the registry is in code order");
    let names: BTreeSet<&str> = registry().iter().map(|r| r.name).collect();
    assert_eq!(names.len(), codes.len(), "duplicate names");
}

#[test]
fn codes_sit_in_their_layer_range() {
    for r in registry() {
        let digit = r.code.as_bytes()[2];
        let expected: &[Layer] = match digit {
            b'0' => &[Layer::Device, Layer::Contract],
            b'1' => &[Layer::Device],
            b'2' => &[Layer::Host],
            b'3' => &[Layer::Confidentiality],
            b'4' => &[Layer::ControlPlane],
            b'5' => &[Layer::Contract],
            _ => panic!("{}: unknown range", r.code),
        };
        assert!(
            expected.contains(&r.layer),
            "{} is in layer {}",
            r.code,
            r.layer
        );
    }
}

#[test]
fn every_doc_has_every_section_in_order() {
    for r in registry() {
        let doc = r.documentation();
        let mut last = 0;
        for s in DOC_SECTIONS {
            let heading = format!("## {s}");
            let at = doc
                .find(&heading)
                .unwrap_or_else(|| panic!("{}: no section {s}", r.code));
            assert!(at >= last, "{}: section {s} out of order", r.code);
            last = at;
            let body = r.section(s).unwrap_or_default();
            assert!(
                body.len() > 20,
                "{}: section {s} is nearly empty: {body:?}",
                r.code
            );
        }
        assert!(
            !doc.lines()
                .any(|l| l.starts_with(' ') && !l.starts_with("  ")),
            "{}: the doc keeps rustdoc's leading space",
            r.code
        );
        assert!(
            r.section("Example").unwrap_or_default().contains("```"),
            "{}: example has no code",
            r.code
        );
        assert!(
            !r.summary.ends_with('.'),
            "{}: summary ends with a period",
            r.code
        );
    }
}

#[test]
fn rules_are_found_by_code_without_case() {
    assert_eq!(
        rule("gt101").map(|r| r.name),
        Some("untrusted-share-time-sliced-gpu")
    );
    assert_eq!(rule(" GT502 ").map(|r| r.code), Some("GT502"));
    assert!(rule("GT999").is_none());
}

/// The rule catalogue as the registry holds it: code, name, layer and severity of every rule.
#[test]
fn code_list_snapshot() {
    let lines: Vec<String> = registry()
        .iter()
        .map(|r| format!("{} {} [{}] {}", r.code, r.name, r.layer, r.severity))
        .collect();
    insta::assert_snapshot!("codes", lines.join("\n"));
}

#[test]
fn explain_page_snapshot() {
    let r = rule("GT101").unwrap();
    insta::assert_snapshot!("explain_gt101", r.documentation());
}
