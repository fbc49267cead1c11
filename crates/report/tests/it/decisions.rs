//! The verdict, what to fix first and what changed since a baseline, as the table, Markdown and
//! HTML open with them.

use crate::common;

use common::{sample_decided_report, sample_rules};
use gpu_trust_report::audit::markdown::{self, MarkdownOptions};
use gpu_trust_report::audit::table::{self, TableOptions};
use gpu_trust_report::audit::{fix_first, html};

#[test]
fn the_table_opens_with_the_verdict_and_what_to_fix_first() {
    let text = table::render(&sample_decided_report(), &TableOptions::default());
    let head: String = text
        .split("\nTENANTS")
        .next()
        .unwrap_or_default()
        .to_string();
    insta::assert_snapshot!(head);
    assert!(text.contains("GT101 untrusted-share-time-sliced-gpu [possible] device NEW"));
}

#[test]
fn the_markdown_opens_with_the_verdict_and_lists_new_findings_first() {
    let text = markdown::render(
        &sample_decided_report(),
        &sample_rules(),
        &MarkdownOptions::new(),
    );
    let head: String = text
        .split("#### Findings, worst first")
        .next()
        .unwrap_or_default()
        .to_string();
    insta::assert_snapshot!(head);
    let first = text
        .split("#### Findings, worst first")
        .nth(1)
        .and_then(|t| t.lines().find(|l| l.starts_with("**")))
        .unwrap_or_default();
    assert!(first.ends_with("· **new**\\"), "{first}");
}

#[test]
fn the_page_opens_with_the_verdict_and_what_to_fix_first() {
    let page = html::render(&sample_decided_report(), &sample_rules());
    let verdict = page.find("id=\"verdict\"").unwrap();
    let block = page.find("id=\"fix-first\"").unwrap();
    let matrix = page.find("id=\"matrix\"").unwrap();
    assert!(verdict < block && block < matrix);
    assert!(page.contains("<li id=\"action-a2\"><strong>a2</strong> Upgrade the GPU driver"));
}

#[test]
fn the_emitted_files_are_the_patches_and_the_patched_copies_at_their_paths() {
    let report = sample_decided_report();
    let patched = vec![
        ("deploy/app.yaml".to_string(), "a".to_string()),
        ("/abs/../nodes.yaml".to_string(), "b".to_string()),
        ("-".to_string(), "c".to_string()),
    ];
    let files: Vec<String> = fix_first::emitted(&report, &patched, "chart/rendered.yaml")
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            "a1.json",
            "a2.json",
            "patched/deploy/app.yaml",
            "patched/abs/nodes.yaml",
            "patched/chart/rendered.yaml"
        ]
    );
}

#[test]
fn the_summary_is_a_row_per_tenant_and_per_pool() {
    let report = sample_decided_report();
    let text = table::render(
        &report,
        &TableOptions {
            summary: true,
            width: 80,
            ..TableOptions::default()
        },
    );
    let rows: String = text
        .split("\nTENANTS")
        .nth(1)
        .unwrap_or_default()
        .split("\nadvisory data")
        .next()
        .unwrap_or_default()
        .to_string();
    insta::assert_snapshot!(rows);
    assert!(!text.contains("FINDINGS"));
    let md = markdown::render(
        &report,
        &sample_rules(),
        &MarkdownOptions {
            summary: true,
            ..MarkdownOptions::new()
        },
    );
    assert!(md.contains("| acme | critical | 3 | a1 |"), "{md}");
    assert!(
        md.contains("| gpu-a100-2 | 8 A100-SXM4-80GB | time-slicing x4 | critical |"),
        "{md}"
    );
}
