//! The coverage section and the partial-audit notice in every format: snapshots of the table section,
//! the HTML section and the SARIF notifications, and the notice at the top of a partial report.

use crate::common;

use common::{sample_coverage, sample_report, sample_rules};
use gpu_trust_report::audit::coverage::{html_section, sarif_notifications, table_section};
use gpu_trust_report::audit::sarif::SarifOptions;
use gpu_trust_report::audit::table::TableOptions;
use gpu_trust_report::audit::{html, sarif, table};
use std::path::PathBuf;

#[test]
fn table_section_snapshot() {
    let text = table_section(&sample_coverage(true, false), 100, |t| t.to_string());
    insta::assert_snapshot!(text);
}

#[test]
fn html_section_snapshot() {
    insta::assert_snapshot!(html_section(&sample_coverage(true, false)));
}

#[test]
fn sarif_notifications_snapshot() {
    let notes = sarif_notifications(&sample_coverage(true, false));
    insta::assert_snapshot!(serde_json::to_string_pretty(&notes).unwrap());
}

#[test]
fn a_partial_report_says_so_first() {
    let mut report = sample_report(false);
    report.coverage = sample_coverage(true, false);
    let text = table::render(&report, &TableOptions::default());
    assert!(
        text.starts_with("PARTIAL AUDIT: not evaluated in full: control-plane."),
        "{text}"
    );
    report.coverage = sample_coverage(true, true);
    let text = table::render(&report, &TableOptions::default());
    assert!(
        text.starts_with("PARTIAL AUDIT (accepted with --accept-partial)"),
        "{text}"
    );
    let page = html::render(&report, &sample_rules());
    assert!(page.contains("<p class=\"partial\" id=\"partial-audit\" role=\"alert\">"));
    // A complete report has no notice, but still its coverage section.
    let report = sample_report(false);
    let text = table::render(&report, &TableOptions::default());
    assert!(text.starts_with("TENANTS"), "{text}");
    assert!(text.contains("COVERAGE\n"));
    let page = html::render(&report, &sample_rules());
    assert!(!page.contains("id=\"partial-audit\""));
    assert!(page.contains("<section id=\"coverage\""));
}

#[test]
fn sarif_errors_only_for_unaccepted_blocking_gaps() {
    let level = |partial, accepted| -> Vec<String> {
        sarif_notifications(&sample_coverage(partial, accepted))
            .iter()
            .map(|n| n["level"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(level(true, false), ["warning", "error"]);
    assert_eq!(level(true, true), ["warning", "warning"]);
    assert_eq!(level(false, false), ["warning"]);
    // The run carries the whole coverage as a property.
    let mut report = sample_report(false);
    report.coverage = sample_coverage(true, false);
    let text = sarif::render(
        &report,
        &sample_rules(),
        &SarifOptions::new("0.1.0", PathBuf::from("/src")),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["runs"][0]["properties"]["gpu-trust/coverage"]["complete"],
        false
    );
}
