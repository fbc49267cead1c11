//! The CI formats read by the tools that consume them: the JUnit report validated against the
//! published JUnit XML schema (the Jenkins xUnit plugin's `junit-10.xsd`) by `xmllint`, and the
//! Markdown summary rendered by a CommonMark parser (pulldown-cmark) as a pull request would show
//! it. Both are snapshot-tested, and input text must not change their structure.

use crate::common;
use std::io::Write as _;

use common::{sample_report, sample_rules};
use gpu_trust_model::Severity;
use gpu_trust_report::audit::junit::{self, JunitOptions};
use gpu_trust_report::audit::markdown::{self, FileLinks, MarkdownOptions};
use gpu_trust_report::audit::table::Hidden;
use pulldown_cmark::{Event, Options, Parser, Tag};
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
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: xmllint is not installed (Debian's libxml2-utils)"
        );
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

fn links(events: &[Event<'_>]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url.to_string()),
            _ => None,
        })
        .collect()
}

fn markdown_options() -> MarkdownOptions {
    MarkdownOptions {
        fail_at: Some(Severity::High),
        links: Some(FileLinks {
            working_dir: PathBuf::from("/src/platform"),
            root: PathBuf::from("/src"),
            base: String::new(),
            stdin_name: None,
        }),
        rule_pages: Some("https://example.com/gpu-trust/blob/v0.1.0/docs/rules/".into()),
        ..MarkdownOptions::new()
    }
}

#[test]
fn markdown_lists_findings_worst_first_with_their_fix_and_links() {
    let report = sample_report(false);
    let options = MarkdownOptions {
        hidden: Hidden {
            accepted: 2,
            ..Hidden::default()
        },
        ..markdown_options()
    };
    let text = markdown::render(&report, &sample_rules(), &options);
    insta::assert_snapshot!("markdown", text);

    // The verdict in one line, right under the heading.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "### gpu-trust audit");
    assert!(lines[2].starts_with("**Fails** (exit 1): 3 findings at or above high"));
    // Worst first: critical, high, high, info, then the accepted medium.
    let order: Vec<usize> = ["**CRITICAL** ", "**HIGH** ", "**INFO** ", "**MEDIUM** "]
        .iter()
        .map(|h| text.find(h).unwrap_or_else(|| panic!("{h} missing")))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    // Every finding has its fix; commands read as code, no backslash-escaped backtick is shown.
    assert_eq!(text.matches("**Fix**: ").count(), report.findings.len());
    assert!(!text.contains("\\`"), "{text}");
    let events = events(&text);
    assert!(events.iter().any(|e| matches!(e, Event::Code(c)
        if c.as_ref() == "kubectl taint nodes NODE gpu-trust/tenant=TENANT:NoSchedule")));
    // Rules link to their pages, objects to their file and line relative to the repository root.
    let found = links(&events);
    assert!(found
        .contains(&"https://example.com/gpu-trust/blob/v0.1.0/docs/rules/GT101.md".to_string()));
    assert!(
        found.contains(&"platform/examples/inference/cluster.yaml#L120".to_string()),
        "{found:?}"
    );
    // Details are collapsed, one block per finding with something to show.
    assert_eq!(
        text.matches("<details><summary>").count(),
        text.matches("</details>").count()
    );
    assert!(text.matches("<details><summary>").count() >= 4);
    assert!(text.contains("2 accepted findings not shown"));

    // A link base (a pull-request comment) goes before each path.
    let based = markdown::render(
        &report,
        &sample_rules(),
        &MarkdownOptions {
            links: Some(FileLinks {
                base: "https://github.com/o/r/blob/abc (1)/".into(),
                ..markdown_options().links.unwrap()
            }),
            ..markdown_options()
        },
    );
    assert!(links(&events_owned(&based)).contains(
        &"https://github.com/o/r/blob/abc%20%281%29/platform/examples/inference/cluster.yaml#L120"
            .to_string()
    ));
}

fn events_owned(text: &str) -> Vec<Event<'static>> {
    events(text).into_iter().map(Event::into_static).collect()
}

/// GitHub takes at most 65,536 characters in a comment: what does not fit is counted, never cut
/// in the middle of a finding.
#[test]
fn markdown_stays_within_a_comment_and_says_what_it_left_out() {
    let mut report = sample_report(false);
    let one = report.findings[0].clone();
    report.findings = (0..2000)
        .map(|i| {
            let mut f = one.clone();
            f.key = format!("k{i}");
            f
        })
        .collect();
    let text = markdown::render(&report, &sample_rules(), &markdown_options());
    assert!(text.len() <= markdown::MAX_CHARS, "{}", text.len());
    let shown = text.matches("**Fix**: ").count();
    assert!(shown > 10 && shown < 2000, "{shown}");
    assert!(
        text.contains(&format!("**{} more findings are not shown**", 2000 - shown)),
        "{}",
        &text[text.len() - 400..]
    );
    assert_eq!(
        text.matches("<details>").count(),
        text.matches("</details>").count()
    );
}

#[test]
fn markdown_input_text_cannot_add_html_links_cells_or_mentions() {
    let mut report = sample_report(false);
    report.findings[0].message =
        "<script>alert(1)</script> | [click](https://example.com) *bold* ~~gone~~ @octocat\nnew line"
            .into();
    report.findings[0].tenants = vec!["a|b".into(), "_x_".into(), "@org/team".into()];
    report.findings[0].objects[0].name = "x](javascript:alert(1))".into();
    report.findings[1].message = "1. a forged list item".into();
    report.findings[2].message = "> a forged quote".into();
    let text = markdown::render(&report, &sample_rules(), &markdown_options());
    let events = events(&text);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Start(Tag::List(Some(_)) | Tag::BlockQuote(_)))),
        "a message became a list or a quote:\n{text}"
    );
    let headings = events
        .iter()
        .filter(|e| matches!(e, Event::Start(Tag::Heading { .. })))
        .count();
    assert_eq!(headings, 2, "{text}");
    let html: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Html(h) | Event::InlineHtml(h) => Some(h.to_string()),
            _ => None,
        })
        .collect();
    // The only HTML is the summary's own: a details block's opening line and its end.
    for h in &html {
        let h = h.trim();
        let own = h == "</details>"
            || h.strip_prefix("<details><summary>")
                .and_then(|rest| rest.strip_suffix("</summary>"))
                .is_some_and(|inside| !inside.contains('<'));
        assert!(own, "input became HTML: {h}\n{text}");
    }
    for link in links(&events) {
        assert!(
            link.starts_with("https://example.com/gpu-trust/") || link.starts_with("platform/"),
            "input became a link: {link}\n{text}"
        );
    }
    for e in &events {
        if let Event::Start(Tag::Emphasis | Tag::Strikethrough) = e {
            panic!("input became markup:\n{text}");
        }
    }
    // The text reads back as written, less the mentions, which a zero-width space breaks.
    let plain: String = events
        .iter()
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.to_string()),
            _ => None,
        })
        .collect();
    assert!(plain.contains("<script>alert(1)</script> | [click](https://example.com) *bold*"));
    assert!(plain.contains("a|b, _x_, @\u{200b}org/team"), "{plain}");
    assert!(plain.contains("@\u{200b}octocat"));
    assert!(!plain.contains("@octocat"));
}
