//! A partial audit never looks clean, in any format: every format of the audit report is rendered
//! on one partial report (the control plane not evaluated for want of RBAC) and must say so where a
//! reader or a CI tool looks first, and must not report the checks it could not run as passed.

use crate::common;

use common::{sample_coverage, sample_report, sample_rules};
use gpu_trust_model::Severity;
use gpu_trust_report::audit::junit::JunitOptions;
use gpu_trust_report::audit::markdown::MarkdownOptions;
use gpu_trust_report::audit::sarif::SarifOptions;
use gpu_trust_report::audit::table::TableOptions;
use gpu_trust_report::{
    audit::{html, json, junit, markdown, sarif, table},
    AuditReport,
};
use std::path::PathBuf;

/// The sample report, partial: no RBAC, so the control plane is not evaluated in full, and without
/// its control-plane finding (no RBAC, nothing found there). `accepted`: with --accept-partial.
fn partial(accepted: bool) -> AuditReport {
    let mut report = sample_report(false);
    report.coverage = sample_coverage(true, accepted);
    report
        .findings
        .retain(|f| f.layer != gpu_trust_model::Layer::ControlPlane);
    report
}

#[test]
fn every_format_says_the_audit_is_partial() {
    let report = partial(false);
    let rules = sample_rules();

    let text = table::render(&report, &TableOptions::default());
    assert!(
        text.starts_with("PARTIAL AUDIT: not evaluated in full: control-plane."),
        "{text}"
    );

    let md = markdown::render(
        &report,
        &rules,
        &MarkdownOptions {
            fail_at: Some(Severity::High),
            ..MarkdownOptions::new()
        },
    );
    let mut lines = md
        .lines()
        .skip_while(|l| l.starts_with('#') || l.is_empty());
    assert_eq!(lines.next(), Some("> [!CAUTION]"), "{md}");
    let banner = lines.next().unwrap();
    assert!(
        banner.contains("PARTIAL AUDIT") && banner.contains("control-plane"),
        "{md}"
    );
    assert!(md.contains("> - control-plane (partial)\\: no-rbac\\: the input has no RoleBinding"));
    assert!(
        md.contains("**Fails** (exit 2): the audit is partial"),
        "{md}"
    );

    let mut buf = Vec::new();
    json::write(&report, &mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(v["coverage"]["complete"], false);

    let log: serde_json::Value = serde_json::from_str(
        &sarif::render(
            &report,
            &rules,
            &SarifOptions::new("0.1.0", PathBuf::from("/src")),
        )
        .unwrap(),
    )
    .unwrap();
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert!(notes
        .iter()
        .any(|n| n["level"] == "error" && n["descriptor"]["id"] == "coverage/no-rbac"));

    let xml = junit::render(
        &report,
        &rules,
        &JunitOptions {
            fail_at: Some(Severity::High),
            disabled: Vec::new(),
        },
    );
    // GT401 found nothing because the control plane could not be judged: an error, not a pass.
    let gt401 = xml
        .split("<testcase ")
        .find(|c| c.contains("gpu-trust.control-plane.GT401"))
        .unwrap();
    assert!(
        gt401.contains("<error type=\"not-evaluated\" message=\"not evaluated in full: the control-plane layer is partial: no-rbac"),
        "{gt401}"
    );
    assert!(
        xml.contains("name=\"gpu-trust.control-plane\" tests=\"1\" failures=\"0\" errors=\"1\"")
    );

    let page = html::render(&report, &rules);
    assert!(page.contains("<p class=\"partial\" id=\"partial-audit\" role=\"alert\">"));
}

/// With --accept-partial the run passes on its findings, but no format hides that the audit is
/// partial: the checks that could not run are skipped with the reason, never passed.
#[test]
fn an_accepted_partial_audit_still_says_so() {
    let report = partial(true);
    let rules = sample_rules();
    let text = table::render(&report, &TableOptions::default());
    assert!(text.starts_with("PARTIAL AUDIT (accepted with --accept-partial)"));
    let md = markdown::render(
        &report,
        &rules,
        &MarkdownOptions {
            fail_at: Some(Severity::Critical),
            ..MarkdownOptions::new()
        },
    );
    assert!(
        md.contains("**PARTIAL AUDIT (accepted with --accept-partial)"),
        "{md}"
    );
    assert!(md.contains("(a partial audit, accepted: it does not cover the layers above)"));
    let log: serde_json::Value = serde_json::from_str(
        &sarif::render(
            &report,
            &rules,
            &SarifOptions::new("0.1.0", PathBuf::from("/src")),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
    let xml = junit::render(&report, &rules, &JunitOptions::default());
    let gt401 = xml
        .split("<testcase ")
        .find(|c| c.contains("gpu-trust.control-plane.GT401"))
        .unwrap();
    assert!(
        gt401.contains("<skipped message=\"not evaluated in full (partial audit accepted with --accept-partial): the control-plane layer is partial"),
        "{gt401}"
    );
}
