//! JUnit XML for CI test tabs (GitLab, Jenkins, Azure Pipelines, test-report actions): the audit
//! as test results.
//!
//! One `testsuite` per layer. In it, per rule of the layer: one `testcase` per finding (per rule
//! and shared thing, named by the finding's stable key), or one passing `testcase` when the rule
//! found nothing. A finding that is not accepted and is at or above the failure threshold is a
//! `failure`; an accepted finding and a rule the configuration disables are `skipped`, with the
//! reason; other findings pass and say what they found in `system-out`. Input left out with
//! `--skip-invalid` is an `error` in a suite of its own. A rule that found nothing in a layer the
//! audit could not evaluate in full (a blocking coverage gap) has not passed: its test case is an
//! `error` naming the gap, or `skipped` with it when `--accept-partial` accepted the partial audit.
//! A partial audit is never all green.
//!
//! No timestamps or timings: the same report gives the same bytes. Text from the input is escaped
//! for XML, and characters XML 1.0 cannot hold are written out visibly.

use crate::{AuditReport, RuleDoc};
use gpu_trust_model::report::coverage::CoverageStatus;
use gpu_trust_model::report::Finding;
use gpu_trust_model::{Layer, Severity};
use std::fmt::Write as _;

/// How to render the JUnit report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JunitOptions {
    /// Findings at or above this severity that are not accepted fail; `None`: none fails
    /// (`--fail-on never`).
    pub fail_at: Option<Severity>,
    /// Rules the configuration disables, with the reason: their test cases are skipped.
    pub disabled: Vec<(String, String)>,
}

#[derive(Default)]
struct Suite {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    body: String,
}

impl Suite {
    fn case(&mut self, classname: &str, name: &str, inner: Case<'_>) {
        self.tests += 1;
        let _ = write!(
            self.body,
            "    <testcase classname=\"{}\" name=\"{}\"",
            attr(classname),
            attr(name)
        );
        match inner {
            Case::Pass => self.body.push_str("/>\n"),
            Case::Out(text) => {
                let _ = write!(
                    self.body,
                    ">\n      <system-out>{}</system-out>\n    </testcase>\n",
                    text_node(&text)
                );
            }
            Case::Failure {
                kind,
                message,
                text,
            } => {
                self.failures += 1;
                let _ = write!(
                    self.body,
                    ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    attr(kind),
                    attr(&message),
                    text_node(&text)
                );
            }
            Case::Skipped(message) => {
                self.skipped += 1;
                let _ = write!(
                    self.body,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    attr(&message)
                );
            }
            Case::Error {
                kind,
                message,
                text,
            } => {
                self.errors += 1;
                let _ = write!(
                    self.body,
                    ">\n      <error type=\"{}\" message=\"{}\">{}</error>\n    </testcase>\n",
                    attr(kind),
                    attr(&message),
                    text_node(&text)
                );
            }
        }
    }
}

enum Case<'a> {
    Pass,
    Out(String),
    Failure {
        kind: &'a str,
        message: String,
        text: String,
    },
    Skipped(String),
    Error {
        kind: &'a str,
        message: String,
        text: String,
    },
}

/// The report as a JUnit XML document.
pub fn render(report: &AuditReport, rules: &[RuleDoc<'_>], options: &JunitOptions) -> String {
    let mut suites: Vec<(String, Suite)> = Vec::new();
    let accepted_partial = report.coverage.accepted_partial;
    for layer in Layer::ALL {
        let mut suite = Suite::default();
        // What keeps the layer from being evaluated in full, if anything.
        let gaps = not_evaluated(report, layer);
        for rule in rules.iter().filter(|r| r.layer == layer) {
            let classname = format!("gpu-trust.{}.{}", layer.as_str(), rule.code);
            if let Some((_, reason)) = options.disabled.iter().find(|(c, _)| c == rule.code) {
                suite.case(
                    &classname,
                    &format!("{} {}", rule.code, rule.name),
                    Case::Skipped(format!("disabled by the configuration: {reason}")),
                );
                continue;
            }
            let found: Vec<&Finding> = report
                .findings
                .iter()
                .filter(|f| f.rule == rule.code)
                .collect();
            if found.is_empty() {
                let case = match &gaps {
                    None => Case::Pass,
                    Some(why) if accepted_partial => Case::Skipped(format!(
                        "not evaluated in full (partial audit accepted with --accept-partial): {why}"
                    )),
                    Some(why) => Case::Error {
                        kind: "not-evaluated",
                        message: format!("not evaluated in full: {why}"),
                        text: "no finding here does not mean the check passed: the input does not \
                               let the audit evaluate this layer (the run exits 2)"
                            .to_string(),
                    },
                };
                suite.case(&classname, &format!("{} {}", rule.code, rule.name), case);
                continue;
            }
            for f in found {
                let name = format!("{} {}", f.rule, f.key);
                let case = if let Some(a) = &f.accepted {
                    Case::Skipped(match &a.until {
                        Some(until) => format!("accepted until {until}: {}", a.reason),
                        None => format!("accepted: {}", a.reason),
                    })
                } else if options.fail_at.is_some_and(|floor| f.severity >= floor) {
                    Case::Failure {
                        kind: f.severity.as_str(),
                        message: format!("{} {}: {}", f.severity.as_str(), f.name, f.message),
                        text: details(f),
                    }
                } else {
                    Case::Out(format!(
                        "{} (below the failure threshold)\n{}",
                        f.severity.as_str(),
                        details(f)
                    ))
                };
                suite.case(&classname, &name, case);
            }
        }
        suites.push((format!("gpu-trust.{}", layer.as_str()), suite));
    }
    if !report.skipped.is_empty() {
        let mut suite = Suite::default();
        for s in &report.skipped {
            let place = format!("{}:{}:{}", s.file, s.line, s.column);
            suite.case(
                "gpu-trust.input",
                &place,
                Case::Error {
                    kind: s.code.as_str(),
                    message: format!("{place}: {}", s.error),
                    text: "this document was left out of the audit (--skip-invalid): the report \
                           covers only part of the input"
                        .to_string(),
                },
            );
        }
        suites.push(("gpu-trust.input".to_string(), suite));
    }

    let total = |f: fn(&Suite) -> usize| suites.iter().map(|(_, s)| f(s)).sum::<usize>();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"gpu-trust audit\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        total(|s| s.tests),
        total(|s| s.failures),
        total(|s| s.errors)
    );
    for (name, suite) in &suites {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
            attr(name),
            suite.tests,
            suite.failures,
            suite.errors,
            suite.skipped
        );
        out.push_str(&suite.body);
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Why `layer` was not evaluated in full (its status and blocking gaps), or `None` when it was, or is
/// not in play.
fn not_evaluated(report: &AuditReport, layer: Layer) -> Option<String> {
    let l = report.coverage.layer(layer)?;
    if l.status == CoverageStatus::NotInPlay {
        return None;
    }
    let gaps: Vec<String> = l
        .gaps
        .iter()
        .filter(|g| g.blocking)
        .map(|g| format!("{}: {}", g.reason.as_str(), g.message))
        .collect();
    (!gaps.is_empty()).then(|| {
        format!(
            "the {} layer is {}: {}",
            layer.as_str(),
            l.status.as_str(),
            gaps.join("; ")
        )
    })
}

/// What a finding says, as the body of its test case.
fn details(f: &Finding) -> String {
    let mut text = format!("{}\n", f.message);
    if !f.tenants.is_empty() {
        let _ = writeln!(text, "tenants: {}", f.tenants.join(", "));
    }
    if !f.nodes.is_empty() {
        let _ = writeln!(text, "nodes: {}", f.nodes.join(", "));
    }
    for o in &f.objects {
        let name = match &o.namespace {
            Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
            None => format!("{} {}", o.kind, o.name),
        };
        if o.line > 0 {
            let _ = writeln!(text, "object: {name} ({}:{})", o.file, o.line);
        } else {
            let _ = writeln!(text, "object: {name} ({})", o.file);
        }
    }
    let _ = writeln!(text, "fix: {}", f.remediation);
    for e in &f.evidence {
        let _ = writeln!(text, "evidence: {e}");
    }
    text
}

/// Characters XML 1.0 can hold (<https://www.w3.org/TR/xml/#charsets>).
fn allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

fn escape_into(out: &mut String, text: &str, attribute: bool) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            c if !allowed(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// `text` as an XML attribute value (between double quotes).
fn attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text, true);
    out
}

/// `text` as XML character data.
fn text_node(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text, false);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_text_cannot_break_out_of_the_xml() {
        assert_eq!(attr("a\"<b>&\n"), "a&quot;&lt;b&gt;&amp;&#10;");
        assert_eq!(text_node("x\u{1b}[2J\u{0}"), "x\\u{1b}[2J\\u{0}");
        assert_eq!(text_node("]]>"), "]]&gt;");
    }
}
