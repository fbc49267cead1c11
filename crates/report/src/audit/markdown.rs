//! A Markdown summary for a pull-request comment or a CI job summary, for a reviewer to act on:
//!
//! - the partial-audit banner first when the audit is partial, with the layers not evaluated;
//! - the verdict in one line (and the run's exit code), then the counts;
//! - the findings worst first (not accepted before accepted, most severe first, then in report
//!   order), each with its rule (linked to the rule's page), what it found and its fix, and the
//!   tenants, nodes and objects collapsed in a `<details>` block, each object a link to its file
//!   and line relative to the repository root;
//! - within GitHub's comment size ([`MAX_CHARS`]): the findings that do not fit are counted in a note.
//!
//! Text from the input is escaped so that it stays text: no HTML, link, emphasis, table cell or
//! @mention can come from an object's name. What the rules write between backticks is set as code,
//! so no backslash-escaped backtick is shown.

use crate::audit::table::{hidden_line, summary_line, Hidden};
use crate::text::Span;
use crate::{AuditReport, RuleDoc};
use gpu_trust_model::report::{Finding, FindingObject, Since};
use gpu_trust_model::Severity;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The most characters the summary has: GitHub's limit on a comment body (65,536), counted in bytes,
/// which are never fewer than the characters or UTF-16 units GitHub counts.
pub const MAX_CHARS: usize = 65_536;

/// Names listed per field of a finding (tenants, nodes, objects) before "and N more".
const MAX_LISTED: usize = 20;

/// How to render the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// Findings at or above this severity that are not accepted fail the run; `None`: never.
    pub fail_at: Option<Severity>,
    /// Findings the caller left out of the report it hands over.
    pub hidden: Hidden,
    /// Where the objects' files are, for links; without it objects are named with their file and
    /// line as text.
    pub links: Option<FileLinks>,
    /// The start of every rule page's URL (`GT101.md` is appended); without it rules are not linked.
    pub rule_pages: Option<String>,
    /// The most bytes the summary may have ([`MAX_CHARS`]; lower only in tests).
    pub max_chars: usize,
    /// A row per tenant and per node pool instead of the findings (`--summary`).
    pub summary: bool,
}

impl MarkdownOptions {
    /// No threshold, nothing hidden, no links, at GitHub's comment size.
    pub fn new() -> Self {
        MarkdownOptions {
            max_chars: MAX_CHARS,
            ..MarkdownOptions::default()
        }
    }
}

/// How an object's file becomes a link: its path relative to the repository root, after `base`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLinks {
    /// The directory the report's file names are relative to, absolute.
    pub working_dir: PathBuf,
    /// The repository root, absolute.
    pub root: PathBuf,
    /// Put before each relative path: empty for links relative to where the Markdown is shown from
    /// the repository root, or a URL ending in `/` (`https://github.com/OWNER/REPO/blob/SHA/`).
    pub base: String,
    /// The path standard input stands for (`--stdin-filename`).
    pub stdin_name: Option<String>,
}

/// The report as Markdown, ending in a newline.
pub fn render(report: &AuditReport, rules: &[RuleDoc<'_>], options: &MarkdownOptions) -> String {
    let mut out = String::from("### gpu-trust audit\n\n");
    out.push_str(&crate::audit::coverage::markdown_banner(
        &report.coverage,
        inline,
    ));
    let _ = writeln!(out, "{}\n", verdict(report, options));
    out.push_str(&fix_first(report));
    let _ = writeln!(
        out,
        "{}\n",
        inline(&summary_line(&report.summary, report.skipped.len()))
    );
    let _ = writeln!(
        out,
        "{}\n",
        with_code(&crate::text::advisory_line(&report.advisory_data))
    );
    if !report.skipped.is_empty() {
        let _ = writeln!(
            out,
            "**Partial input**: {} document{} could not be used and {} left out of the audit.\n",
            report.skipped.len(),
            if report.skipped.len() == 1 { "" } else { "s" },
            if report.skipped.len() == 1 {
                "was"
            } else {
                "were"
            }
        );
    }

    if options.summary {
        out.push_str(&summary_tables(report));
        return out;
    }
    let mut tail = String::new();
    if let Some(line) = hidden_line(&options.hidden) {
        let _ = writeln!(tail, "_{}_\n", inline(&line));
    }
    let order = worst_first(&report.findings);
    // Room for the note on what does not fit.
    let budget = options
        .max_chars
        .saturating_sub(out.len() + tail.len() + 200);
    let mut shown = 0usize;
    let mut body = String::new();
    for &i in &order {
        let block = finding_block(&report.findings[i], rules, options);
        if body.len() + block.len() > budget {
            break;
        }
        body.push_str(&block);
        shown += 1;
    }
    if !order.is_empty() {
        out.push_str("#### Findings, worst first\n\n");
    }
    out.push_str(&body);
    if shown < order.len() {
        let _ =
            writeln!(
            out,
            "**{} more finding{} not shown**: a comment holds {} characters. The SARIF, JSON and \
             HTML reports have every finding.\n",
            order.len() - shown,
            if order.len() - shown == 1 { " is" } else { "s are" },
            options.max_chars
        );
    }
    out.push_str(&tail);
    out
}

/// The verdict in one line, with the run's exit code: the report's, else the one `fail_at` gives.
fn verdict(report: &AuditReport, options: &MarkdownOptions) -> String {
    let v = report
        .verdict
        .clone()
        .unwrap_or_else(|| report.verdict(options.fail_at, false));
    let outcome = match v.outcome {
        "fails" => "Fails",
        "passes" => "Passes",
        _ => "Reports only",
    };
    // The reason is gpu-trust's own words (counts, severities, flags), no text of the input.
    format!("**{outcome}** (exit {}): {}.", v.exit_code, v.reason)
}

/// `--summary`: a table of the tenants and one of the GPU node pools.
fn summary_tables(report: &AuditReport) -> String {
    let worst = |s: Option<Severity>| s.map_or("-", Severity::as_str).to_string();
    let mut out = String::from(
        "#### Tenants\n\n| tenant | worst | open | fix first | shares |\n| --- | --- | --- | --- | --- |\n",
    );
    for r in crate::audit::summary::tenants(report) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            inline(&r.tenant),
            worst(r.worst),
            r.open,
            r.action.as_deref().unwrap_or("-"),
            inline(&r.shares.join(", "))
        );
    }
    let pools = crate::audit::summary::pools(report);
    if !pools.is_empty() {
        out.push_str("\n#### Node pools\n\n| pool | GPUs | sharing | worst | open | tenants |\n| --- | --- | --- | --- | --- | --- |\n");
        for r in pools {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                inline(&r.nodes),
                inline(&r.gpus),
                inline(&r.sharing),
                worst(r.worst),
                r.open,
                inline(&r.tenants.join(", "))
            );
        }
    }
    out.push('\n');
    out
}

/// What to fix first, when the report has it, and what changed since a baseline.
fn fix_first(report: &AuditReport) -> String {
    let mut out = String::new();
    if let Some(b) = crate::audit::fix_first::block(report) {
        let _ = writeln!(out, "#### Fix first\n\n{}\n", inline(&b.head));
        for a in &b.actions {
            let _ = writeln!(
                out,
                "1. **{}** {}: {} ({}).",
                a.id,
                inline(&a.summary),
                inline(&a.closes),
                inline(&a.proof)
            );
            if !a.commands.is_empty() {
                let _ = writeln!(out, "   ```sh");
                for c in &a.commands {
                    let _ = writeln!(out, "   {c}");
                }
                let _ = writeln!(out, "   ```");
            }
            for n in &a.notes {
                let _ = writeln!(out, "   - {}", inline(n));
            }
        }
        if !b.actions.is_empty() {
            out.push('\n');
        }
        for line in b.after.iter().chain(&b.unclosed) {
            let _ = writeln!(out, "{}\n", inline(line));
        }
    }
    if let Some(base) = &report.baseline {
        let _ = writeln!(
            out,
            "Since the baseline {}: {} new, {} unchanged, {} fixed.\n",
            inline(&base.file),
            base.new,
            base.unchanged,
            base.fixed.len()
        );
        for f in base.fixed.iter().take(MAX_LISTED) {
            let _ = writeln!(
                out,
                "- fixed: {} {}: {}",
                f.rule,
                f.severity.as_str(),
                inline(&f.message)
            );
        }
        if !base.fixed.is_empty() {
            out.push('\n');
        }
    }
    out
}

/// The findings' indexes worst first: not accepted before accepted, new since a baseline before
/// the others, most severe first, then in report order.
fn worst_first(findings: &[Finding]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by_key(|i| {
        let f = &findings[*i];
        (
            f.accepted.is_some(),
            f.since == Some(Since::Unchanged),
            std::cmp::Reverse(f.severity),
            *i,
        )
    });
    order
}

/// One finding: its severity, rule and layer in a line, what it found, its fix, and the tenants,
/// nodes and objects collapsed.
fn finding_block(f: &Finding, rules: &[RuleDoc<'_>], options: &MarkdownOptions) -> String {
    let mut out = String::new();
    let rule = match (&options.rule_pages, rules.iter().any(|r| r.code == f.rule)) {
        (Some(base), true) => format!("[{}]({base}{}.md)", f.rule, f.rule),
        _ => inline(&f.rule),
    };
    let mut accepted = if f.accepted.is_some() {
        " · accepted"
    } else {
        ""
    }
    .to_string();
    if f.since == Some(Since::New) {
        accepted.push_str(" · **new**");
    }
    let _ = writeln!(
        out,
        "**{}** · {rule} {} · {} · {}{accepted}\\",
        f.severity.as_str().to_ascii_uppercase(),
        code_text(&f.name),
        f.layer.as_str(),
        f.certainty.as_str(),
    );
    let _ = writeln!(out, "{}\n", line_start(&with_code(&f.message)));
    let _ = writeln!(out, "**Fix**: {}\n", with_code(&f.remediation));
    if let Some(a) = &f.accepted {
        let until = a
            .until
            .as_deref()
            .map(|u| format!(" (until {})", inline(u)))
            .unwrap_or_default();
        let _ = writeln!(out, "**Accepted**: {}{until}\n", inline(&a.reason));
    }

    let mut details = String::new();
    if !f.tenants.is_empty() {
        let _ = writeln!(details, "- tenants: {}", listed(&f.tenants, |t| inline(t)));
    }
    if let Some(pairs) = f.pairs.filter(|n| *n > 1) {
        let _ = writeln!(details, "- pairs: {pairs}");
    }
    if !f.nodes.is_empty() {
        let _ = writeln!(details, "- nodes: {}", listed(&f.nodes, |n| inline(n)));
    }
    if !f.objects.is_empty() {
        let objects: Vec<String> = f.objects.iter().map(|o| object(o, options)).collect();
        let _ = writeln!(details, "- objects: {}", listed(&objects, |o| o.clone()));
    }
    for e in &f.evidence {
        let _ = writeln!(details, "- evidence: {}", with_code(e));
    }
    if !details.is_empty() {
        let mut what = Vec::new();
        if !f.tenants.is_empty() {
            what.push(crate::plural(f.tenants.len(), "tenant", "tenants"));
        }
        if !f.nodes.is_empty() {
            what.push(crate::plural(f.nodes.len(), "node", "nodes"));
        }
        if !f.objects.is_empty() {
            what.push(crate::plural(f.objects.len(), "object", "objects"));
        }
        if !f.evidence.is_empty() {
            what.push("evidence".to_string());
        }
        let _ = writeln!(
            out,
            "<details><summary>{}</summary>\n\n{details}\n</details>\n",
            what.join(", ")
        );
    }
    out
}

/// An object as a link to its file and line (relative to the repository root), or as text.
fn object(o: &FindingObject, options: &MarkdownOptions) -> String {
    let name = match &o.namespace {
        Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
        None => format!("{} {}", o.kind, o.name),
    };
    match &options.links {
        Some(links) => {
            let path = crate::paths::relative_uri(
                &o.file,
                &links.working_dir,
                &links.root,
                links.stdin_name.as_deref(),
            );
            let line = if o.line > 0 {
                format!("#L{}", o.line)
            } else {
                String::new()
            };
            format!("[{}]({}{path}{line})", inline(&name), url(&links.base))
        }
        None if o.line > 0 => format!("{} ({}:{})", inline(&name), inline(&o.file), o.line),
        None => format!("{} ({})", inline(&name), inline(&o.file)),
    }
}

/// A link destination's start as given, with what would end or break a Markdown link destination
/// percent-encoded.
fn url(base: &str) -> String {
    let mut out = String::with_capacity(base.len());
    for c in base.chars() {
        if c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | '(' | ')' | '\\' | '`') {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Markdown that starts a line, with what would open a list, a quote or a heading there escaped
/// (`1.`, `2)`, `-`, `+`, `>`, `=`): a message stays a paragraph whatever name it starts with.
fn line_start(text: &str) -> String {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let rest = &text[digits..];
    if digits > 0 && (rest.starts_with('.') || rest.starts_with(')')) {
        return format!("{}\\{rest}", &text[..digits]);
    }
    if text.starts_with(['-', '+', '>', '=']) {
        return format!("\\{text}");
    }
    text.to_string()
}

/// At most [`MAX_LISTED`] items, each rendered by `show`, then how many more.
fn listed(items: &[String], show: impl Fn(&String) -> String) -> String {
    let mut s = items
        .iter()
        .take(MAX_LISTED)
        .map(show)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > MAX_LISTED {
        let _ = write!(s, " and {} more", items.len() - MAX_LISTED);
    }
    s
}

/// Text whose backtick-delimited parts are set as code spans and the rest escaped ([`inline`]), so
/// that what the rules write as code reads as code and no backtick is shown escaped. A backtick
/// without a partner is escaped as text.
pub fn with_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (span, piece) in crate::text::backtick_spans(text) {
        match span {
            Span::Unpaired => {
                out.push_str("\\`");
                out.push_str(&inline(piece));
            }
            Span::Code => out.push_str(&code_text(piece)),
            Span::Prose => out.push_str(&inline(piece)),
        }
    }
    out
}

/// `text` as one code span: on one line (control characters become spaces), delimited by a run of
/// backticks longer than any inside it. Nothing in a code span is markup, a link or a mention.
fn code_text(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.trim().is_empty() {
        return inline(&text);
    }
    let mut longest = 0usize;
    let mut run = 0usize;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    // A space on each side keeps a backtick at either end from joining the fence; CommonMark strips
    // one space on each side.
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// `text` as inline Markdown that renders as itself: the marks that open emphasis, code, links,
/// strikethrough or a table cell are backslash-escaped, and `:` too (no autolink); `<`, `>` and
/// `&` become entities (no HTML); line breaks and control characters become spaces, so a line stays
/// one line; and a zero-width space follows every `@`, so that no name mentions a user or team.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("@&#8203;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
