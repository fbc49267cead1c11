//! The CI formats read by the tools that consume them: the JUnit report validated against the
//! published JUnit XML schema (the Jenkins xUnit plugin's `junit-10.xsd`) by `xmllint`, and the
//! Markdown summary rendered by a CommonMark parser (pulldown-cmark) as a pull request would show
//! it. Both are snapshot-tested, and input text must not change their structure.

mod common;

use common::{sample_report, sample_rules};
use gpu_trust_model::Severity;
use gpu_trust_report::junit::{self, JunitOptions};
use gpu_trust_report::markdown::{self, MarkdownOptions};
use gpu_trust_report::table::Hidden;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};

fn xsd() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit-10.xsd")
}

/// `xmllint`, or `None` (and a note) when it is not installed and CI is not set.
fn xmllint() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("xmllint"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but xmllint is not installed (Debian's libxml2-utils)"
        );
        eprintln!("SKIPPED: xmllint is not installed (Debian's libxml2-utils)");
    }
    found
}

/// Validates `xml` against the JUnit schema; panics with xmllint's complaint.
fn assert_valid_junit(xml: &str) {
    let Some(xmllint) = xmllint() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.xml");
    std::fs::write(&file, xml).unwrap();
    let out = std::process::Command::new(xmllint)
        .arg("--noout")
        .arg("--schema")
        .arg(xsd())
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the JUnit report does not validate:\n{}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn count(xml: &str, needle: &str) -> usize {
    xml.matches(needle).count()
}

#[test]
fn junit_validates_and_fails_what_fails_the_run() {
    let report = sample_report(false);
    let options = JunitOptions {
        fail_at: Some(Severity::High),
        disabled: Vec::new(),
    };
    let xml = junit::render(&report, &sample_rules(), &options);
    assert_valid_junit(&xml);
    insta::assert_snapshot!("junit", xml);

    let failing = report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none() && f.severity >= Severity::High)
        .count();
    assert!(failing > 0);
    assert_eq!(count(&xml, "<failure "), failing);
    assert!(xml.contains(&format!("failures=\"{failing}\" errors=\"0\">")));
    // The accepted finding is skipped with its reason; every rule has a test case.
    assert_eq!(
        count(&xml, "<skipped "),
        report
            .findings
            .iter()
            .filter(|f| f.accepted.is_some())
            .count()
    );
    assert!(xml.contains("accepted until 2027-06-30: one cluster per region by design"));
    for rule in sample_rules() {
        assert!(
            xml.contains(&format!(
                "classname=\"gpu-trust.{}.{}\"",
                rule.layer.as_str(),
                rule.code
            )),
            "{} has no test case",
            rule.code
        );
    }

    // --fail-on never: no failure; a disabled rule is skipped with the configuration's reason.
    let never = junit::render(
        &report,
        &sample_rules(),
        &JunitOptions {
            fail_at: None,
            disabled: vec![("GT104".into(), "reviewed by hand".into())],
        },
    );
    assert_valid_junit(&never);
    assert_eq!(count(&never, "<failure "), 0);
    assert!(never.contains("disabled by the configuration: reviewed by hand"));
}

#[test]
fn junit_partial_input_is_an_error_and_input_text_stays_text() {
    let mut report = sample_report(true);
    report.findings[0].message = "a \"quoted\" <b>name</b> & \u{1b}[31mred\u{7} ]]>".into();
    report.findings[0].objects[0].name = "x\"/><testcase name=\"forged".into();
    let xml = junit::render(
        &report,
        &sample_rules(),
        &JunitOptions {
            fail_at: Some(Severity::High),
            disabled: Vec::new(),
        },
    );
    assert_valid_junit(&xml);
    assert_eq!(count(&xml, "<error "), report.skipped.len());
    assert!(!xml.contains("name=\"forged\""));
    assert!(!xml.contains('\u{1b}'));
}

/// The Markdown's events, as GitHub's CommonMark reader with tables sees them.
fn events(text: &str) -> Vec<Event<'_>> {
    Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).collect()
}

#[test]
fn markdown_renders_as_a_table_with_links_to_its_rules() {
    let report = sample_report(false);
    let options = MarkdownOptions {
        fail_at: Some(Severity::High),
        hidden: Hidden {
            accepted: 2,
            ..Hidden::default()
        },
    };
    let text = markdown::render(&report, &sample_rules(), &options);
    insta::assert_snapshot!("markdown", text);

    let events = events(&text);
    let rows = events
        .iter()
        .filter(|e| matches!(e, Event::Start(Tag::TableRow)))
        .count();
    assert_eq!(rows, report.findings.len(), "one body row per finding");
    let cells_per_row: Vec<usize> = {
        let mut counts = Vec::new();
        let mut n = 0;
        for e in &events {
            match e {
                Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => n = 0,
                Event::Start(Tag::TableCell) => n += 1,
                Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => counts.push(n),
                _ => {}
            }
        }
        counts
    };
    assert!(cells_per_row.iter().all(|n| *n == 5), "{cells_per_row:?}");

    // Every link points at a heading of the rules section with the rule's code.
    let links: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(links.len(), report.findings.len());
    let mut headings = Vec::new();
    let mut in_heading = false;
    for e in &events {
        match e {
            Event::Start(Tag::Heading {
                level: HeadingLevel::H5,
                ..
            }) => in_heading = true,
            Event::Text(t) if in_heading => headings.push(format!("#{}", t.to_ascii_lowercase())),
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            _ => {}
        }
    }
    for link in &links {
        assert!(
            headings.contains(link),
            "{link} has no heading in {headings:?}"
        );
    }
    assert!(text.contains("**Fails**"));
    assert!(text.contains("2 accepted findings not shown"));
}

#[test]
fn markdown_input_text_cannot_add_html_links_or_cells() {
    let mut report = sample_report(false);
    report.findings[0].message =
        "<script>alert(1)</script> | [click](https://example.com) *bold* `code` ~~gone~~\nnew row"
            .into();
    report.findings[0].tenants = vec!["a|b".into(), "_x_".into()];
    let text = markdown::render(&report, &sample_rules(), &MarkdownOptions::default());
    let events = events(&text);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Html(_) | Event::InlineHtml(_))),
        "input became HTML:\n{text}"
    );
    let links = events
        .iter()
        .filter(|e| matches!(e, Event::Start(Tag::Link { .. })))
        .count();
    assert_eq!(links, report.findings.len(), "input became a link:\n{text}");
    let mut in_table = false;
    for e in &events {
        match e {
            Event::Start(Tag::Table(_)) => in_table = true,
            Event::End(TagEnd::Table) => in_table = false,
            Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough) | Event::Code(_) => {
                assert!(!in_table, "input became markup in the table:\n{text}")
            }
            _ => {}
        }
    }
    let rows = events
        .iter()
        .filter(|e| matches!(e, Event::Start(Tag::TableRow)))
        .count();
    assert_eq!(rows, report.findings.len(), "input added a row:\n{text}");
    // The text reads back as written.
    let plain: String = events
        .iter()
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.to_string()),
            _ => None,
        })
        .collect();
    assert!(plain.contains("<script>alert(1)</script> | [click](https://example.com) *bold*"));
    assert!(plain.contains("a|b, _x_"));
}
