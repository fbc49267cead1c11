//! The rule catalogue as `gpu-trust rules` prints it: a table grouped by code family, or JSON
//! (`gpu-trust/rules/v1`). Everything shown comes from the registry's [`RuleDoc`]s.

use crate::audit::table::TableOptions;
use crate::text::last_column;
use crate::RuleDoc;
use anstyle::{Effects, Style};
use gpu_trust_model::{Layer, Severity};
use serde::Serialize;
use std::fmt::Write as _;

/// The JSON document `gpu-trust rules --format json` prints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RulesJson<'a> {
    schema: &'static str,
    rules: Vec<RuleJson<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleJson<'a> {
    code: &'a str,
    name: &'a str,
    layer: Layer,
    severity: Severity,
    severity_rule: &'a str,
    summary: &'a str,
}

fn sorted<'a, 'b>(rules: &'b [RuleDoc<'a>]) -> Vec<&'b RuleDoc<'a>> {
    let mut v: Vec<&RuleDoc<'a>> = rules.iter().collect();
    v.sort_by(|a, b| a.code.cmp(b.code));
    v
}

/// The catalogue as pretty JSON, sorted by code, ending in a newline.
pub fn render_json(rules: &[RuleDoc<'_>]) -> Result<String, serde_json::Error> {
    let doc = RulesJson {
        schema: "gpu-trust/rules/v1",
        rules: sorted(rules)
            .into_iter()
            .map(|r| RuleJson {
                code: r.code,
                name: r.name,
                layer: r.layer,
                severity: r.severity,
                severity_rule: &r.severity_rule,
                summary: r.summary,
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}

/// The catalogue as text: one block per code family, one line per rule, sorted by code.
pub fn render_table(rules: &[RuleDoc<'_>], options: &TableOptions) -> String {
    let bold = |s: &str| {
        if options.colour {
            let style = Style::new().effects(Effects::BOLD);
            format!("{}{s}{}", style.render(), style.render_reset())
        } else {
            s.to_string()
        }
    };
    let rules = sorted(rules);
    let total = rules.len();
    let name_width = rules
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    // One block per code family (GT0xx input and policy, GT1xx device ... GT5xx contract), in code order.
    let mut groups: Vec<(String, Vec<&RuleDoc<'_>>)> = Vec::new();
    let mut last_family = None;
    for r in rules {
        let family = r.code.chars().nth(2);
        if last_family != Some(family) || groups.is_empty() {
            let heading = if family == Some('0') {
                "INPUT AND POLICY".to_string()
            } else {
                r.layer.as_str().to_ascii_uppercase()
            };
            groups.push((heading, Vec::new()));
            last_family = Some(family);
        }
        if let Some((_, v)) = groups.last_mut() {
            v.push(r);
        }
    }
    let lead = 2 + 5 + 2 + name_width + 2 + 8 + 2;
    for (heading, group) in groups {
        let _ = writeln!(out, "{}", bold(&heading));
        for r in group {
            // Too narrow beside the name, the summary goes under it.
            let summary = last_column(r.summary, lead, options.width, 2 + 5 + 2);
            let head = format!(
                "  {}  {:<name_width$}  {:<8}  ",
                bold(r.code),
                r.name,
                r.severity.as_str(),
            );
            let head = if summary.starts_with('\n') {
                head.trim_end()
            } else {
                &head
            };
            let _ = writeln!(out, "{head}{summary}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{total} rules; `gpu-trust explain CODE` prints a rule's documentation"
    );
    out
}

/// One rule's page, `docs/rules/GTxxx.md`: its code and name, layer and severities, summary, and
/// its documentation as the rule file writes it. Generated from the registry; a test keeps the
/// checked-in pages in sync (`crates/report/tests/it/rule_pages.rs`).
pub fn page(rule: &RuleDoc<'_>) -> String {
    let severities: Vec<&str> = rule.severities.iter().map(|s| s.as_str()).collect();
    let mut out = format!(
        "<!-- Generated from the documentation of rule {} in crates/rules/src/rules/; do not edit. -->\n\n\
         # {} {}\n\n\
         | | |\n| --- | --- |\n| layer | {} |\n| severity | {} |\n| severities a finding can have | {} |\n\n\
         {}\n\n",
        rule.code,
        rule.code,
        rule.name,
        rule.layer.as_str(),
        rule.severity_rule,
        severities.join(", "),
        rule.summary.trim_end(),
    );
    out.push_str(rule.documentation.trim());
    let _ = write!(
        out,
        "\n\n---\n\n`gpu-trust explain {}` shows this documentation in a terminal. [All rules](README.md).\n",
        rule.code
    );
    out
}

/// The index of the rule pages, `docs/rules/README.md`: one row per rule, by code, linking its page.
pub fn pages_index(rules: &[RuleDoc<'_>]) -> String {
    let mut out = String::from(
        "<!-- Generated from the rule registry; do not edit. -->\n\n\
         # Rules\n\n\
         Every rule gpu-trust audits with, by code: `GT0xx` input and policy, `GT1xx` device, `GT2xx` \
         host, `GT3xx` confidentiality, `GT4xx` control plane, `GT5xx` contract. Each page is the \
         rule's documentation (`gpu-trust explain CODE`); SARIF results link to them (`helpUri`).\n\n\
         | rule | layer | severity | what it detects |\n| --- | --- | --- | --- |\n",
    );
    for r in sorted(rules) {
        let _ = writeln!(
            out,
            "| [{}]({}.md) `{}` | {} | {} | {} |",
            r.code,
            r.code,
            r.name,
            r.layer.as_str(),
            r.severity_rule.replace('|', "\\|"),
            r.summary.trim_end().replace('|', "\\|")
        );
    }
    out
}
