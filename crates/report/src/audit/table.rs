//! The terminal report: tenants, then the findings worst first across the layers (each naming its
//! layer: device, host, confidentiality, control-plane, contract), then what tenants share (one line
//! per shared thing) and the blast radius, the skipped input, and a summary line.
//!
//! Colour (ANSI, through `anstyle`) is added only when [`TableOptions::colour`] is set; the caller decides
//! from the terminal and `NO_COLOR`. Without colour the text is plain and stable, fit for snapshots.
//! Prose wraps at [`TableOptions::width`] between words, never inside one; a command in a fix (a
//! code span with a space in it) stands whole on a line of its own. Every string that comes
//! from the input goes through [`gpu_trust_model::terminal::escape`], so a name cannot steer the
//! terminal or forge a line. Long lists stay bounded: at most [`MAX_LISTED`] names per field, and a
//! large report's groups and blast radius are folded (the JSON report has everything).

use crate::text::{last_column, wrap};
use crate::AuditReport;
use anstyle::{AnsiColor, Effects, Style};
use gpu_trust_model::terminal::escape;
use gpu_trust_model::{Certainty, Incident, Layer, Severity};
use gpu_trust_rules::report::{
    BlastRadiusEntry, Finding, GroupEntry, GroupLevel, Matrix, SeverityCounts, Summary,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Names listed per field of a finding (tenants, nodes) before "and N more".
pub const MAX_LISTED: usize = 20;

/// Tenants listed in the tenants section before "and N more".
pub const MAX_TENANTS: usize = 50;

/// Groups listed one per line; a larger report lists the ones with the most pairs.
pub const MAX_GROUPS: usize = 50;

/// Tenants whose blast radius is listed one per line; with more, tenants that reach alike share a
/// line.
pub const MAX_BLAST_TENANTS: usize = 20;

/// How to render the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableOptions {
    /// Emit ANSI colour and bold.
    pub colour: bool,
    /// Wrap prose at this many columns.
    pub width: usize,
    /// Findings the caller left out of the report it hands over, counted in a line after the
    /// summary so that nothing is hidden silently.
    pub hidden: Hidden,
    /// A row per tenant and per node pool instead of the findings (`--summary`).
    pub summary: bool,
}

/// Findings left out of a rendered report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hidden {
    /// Accepted findings left out.
    pub accepted: usize,
    /// Findings left out for a severity below `min_severity`.
    pub below: usize,
    /// The lowest severity shown.
    pub min_severity: Option<Severity>,
    /// Findings of rules the configuration disables, left out of the report.
    pub disabled: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            colour: false,
            width: 100,
            hidden: Hidden::default(),
            summary: false,
        }
    }
}

/// Styles in use; all plain when colour is off.
struct Palette {
    colour: bool,
}

impl Palette {
    fn paint(&self, style: Style, text: &str) -> String {
        if self.colour {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }

    fn heading(&self, text: &str) -> String {
        self.paint(
            Style::new().effects(Effects::BOLD | Effects::UNDERLINE),
            text,
        )
    }

    fn bold(&self, text: &str) -> String {
        self.paint(Style::new().effects(Effects::BOLD), text)
    }

    fn dim(&self, text: &str) -> String {
        self.paint(Style::new().effects(Effects::DIMMED), text)
    }

    fn severity(&self, severity: Severity, text: &str) -> String {
        let style = match severity {
            Severity::Critical => Style::new()
                .fg_color(Some(AnsiColor::BrightRed.into()))
                .effects(Effects::BOLD),
            Severity::High => Style::new().fg_color(Some(AnsiColor::Red.into())),
            Severity::Medium => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Severity::Low => Style::new().fg_color(Some(AnsiColor::Cyan.into())),
            Severity::Info => Style::new().effects(Effects::DIMMED),
        };
        self.paint(style, text)
    }

    fn accepted(&self, text: &str) -> String {
        self.paint(Style::new().fg_color(Some(AnsiColor::Green.into())), text)
    }
}

/// The report as terminal text, ending in a newline.
pub fn render(report: &AuditReport, options: &TableOptions) -> String {
    let p = Palette {
        colour: options.colour,
    };
    let width = options.width;
    let mut out = crate::audit::coverage::table_notice(&report.coverage, width, |t| {
        p.severity(Severity::High, t)
    });

    render_lead(&mut out, report, &p, width);
    if options.summary {
        render_summary(&mut out, report, &p, width);
    } else {
        render_tenants(&mut out, report, &p, width);
        render_findings(&mut out, report, &p, width);
        render_groups(&mut out, &report.groups, &p, width);
        render_blast_radius(&mut out, report, &p, width);
        render_skipped(&mut out, report, &p, width);
        out.push_str(&crate::audit::coverage::table_section(
            &report.coverage,
            width,
            |t| p.heading(t),
        ));
    }
    // The advisory data's date, then the summary, which stays the last line scripts read.
    let data = wrap(&esc(&report.advisory_data.line()), width, "");
    if report.advisory_data.stale {
        out.push_str(&p.severity(Severity::Medium, &data));
    } else {
        out.push_str(&p.dim(&data));
    }
    out.push('\n');
    out.push_str(&p.bold(&wrap(
        &summary_line(&report.summary, report.skipped.len()),
        width,
        "",
    )));
    out.push('\n');
    if let Some(line) = hidden_line(&options.hidden) {
        let _ = writeln!(out, "{}", p.dim(&wrap(&line, width, "")));
    }
    out
}

/// The verdict (why the run exits as it does) and what to fix first, when the report has them.
fn render_lead(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    if let Some(v) = &report.verdict {
        let mut outcome = v.outcome.replace('-', " ");
        outcome[..1].make_ascii_uppercase();
        let line = wrap(
            &format!("{outcome} (exit {}): {}.", v.exit_code, esc(&v.reason)),
            width,
            "  ",
        );
        let _ = writeln!(out, "{}\n", p.bold(&line));
    }
    if let Some(base) = &report.baseline {
        let line = format!(
            "Since the baseline {}: {} new, {} unchanged, {} fixed.",
            esc(&base.file),
            base.new,
            base.unchanged,
            base.fixed.len()
        );
        let _ = writeln!(out, "{}", wrap(&line, width, "  "));
        for f in base.fixed.iter().take(MAX_LISTED) {
            let line = format!(
                "fixed: {} {}: {}",
                f.rule,
                f.severity.as_str(),
                esc(&f.message)
            );
            let _ = writeln!(out, "  {}", wrap(&line, width.saturating_sub(4), "    "));
        }
        if base.fixed.len() > MAX_LISTED {
            let _ = writeln!(out, "  and {} more fixed", base.fixed.len() - MAX_LISTED);
        }
        out.push('\n');
    }
    let Some(b) = crate::audit::fix_first::block(report) else {
        return;
    };
    section(out, p, width, "FIX FIRST", &esc(&b.head));
    let indent = "      ";
    let prose = |out: &mut String, text: &str| {
        let _ = writeln!(
            out,
            "{indent}{}",
            wrap(&esc(text), width.saturating_sub(indent.len()), indent)
        );
    };
    for a in &b.actions {
        let _ = writeln!(
            out,
            "  {}  {}",
            p.bold(&a.id),
            wrap(&esc(&a.summary), width.saturating_sub(indent.len()), indent)
        );
        prose(out, &a.closes);
        prose(out, &a.proof);
        // Each command whole on a line of its own, to be copied, indented as a fix's commands.
        for c in &a.commands {
            let _ = writeln!(out, "{indent}     {}", esc(c));
        }
        for n in &a.notes {
            prose(out, &format!("note: {n}"));
        }
    }
    for line in b.after.iter().chain(&b.unclosed) {
        let _ = writeln!(out, "  {}", wrap(&esc(line), width.saturating_sub(2), "  "));
    }
    out.push('\n');
}

/// `--summary`: a row per tenant and per GPU node pool.
fn render_summary(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    let worst = |s: Option<Severity>| s.map_or("-", Severity::as_str).to_string();
    section(
        out,
        p,
        width,
        "TENANTS",
        "the worst of its open findings, how many, the first action that closes one, what it shares",
    );
    let rows: Vec<[String; 5]> = crate::audit::summary::tenants(report)
        .into_iter()
        .map(|r| {
            [
                esc(&r.tenant),
                worst(r.worst),
                r.open.to_string(),
                r.action.unwrap_or_else(|| "-".to_string()),
                if r.shares.is_empty() {
                    "nothing".to_string()
                } else {
                    r.shares.join(", ")
                },
            ]
        })
        .collect();
    write_columns(
        out,
        &["tenant", "worst", "open", "fix", "shares"],
        &rows,
        p,
        width,
    );
    out.push('\n');
    let rows: Vec<[String; 6]> = crate::audit::summary::pools(report)
        .into_iter()
        .map(|r| {
            [
                esc(&r.nodes),
                esc(&r.gpus),
                r.sharing,
                worst(r.worst),
                r.open.to_string(),
                listed(&r.tenants, MAX_LISTED),
            ]
        })
        .collect();
    if !rows.is_empty() {
        section(
            out,
            p,
            width,
            "NODE POOLS",
            "GPU nodes of one model and sharing configuration, the worst of their open findings",
        );
        write_columns(
            out,
            &["pool", "GPUs", "sharing", "worst", "open", "tenants"],
            &rows,
            p,
            width,
        );
        out.push('\n');
    }
}

/// What the table leaves out, as one line (`None` when nothing is left out).
pub fn hidden_line(hidden: &Hidden) -> Option<String> {
    let mut parts = Vec::new();
    if hidden.accepted > 0 {
        parts.push(format!(
            "{} not shown (--show-accepted shows {})",
            count_phrase(hidden.accepted, "accepted finding"),
            if hidden.accepted == 1 { "it" } else { "them" }
        ));
    }
    if hidden.below > 0 {
        let floor = hidden.min_severity.map_or("info", Severity::as_str);
        parts.push(format!(
            "{} below {floor} not shown",
            count_phrase(hidden.below, "finding")
        ));
    }
    if hidden.disabled > 0 {
        parts.push(format!(
            "{} of disabled rules not reported",
            count_phrase(hidden.disabled, "finding")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Input text, escaped for the terminal.
fn esc(text: &str) -> String {
    escape(text).into_owned()
}

/// The first [`MAX_LISTED`] items, escaped and joined, and how many more.
fn listed(items: &[String], max: usize) -> String {
    let mut s = items
        .iter()
        .take(max)
        .map(|i| esc(i))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        let _ = write!(s, " and {} more", items.len() - max);
    }
    s
}

fn render_tenants(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    if report.tenants.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", p.heading("TENANTS"));
    for t in report.tenants.iter().take(MAX_TENANTS) {
        let namespaces: Vec<String> = t.namespaces.iter().map(|n| esc(n)).collect();
        let mut line = format!("{}: {}", esc(&t.name), namespaces.join(", "));
        if t.unassigned {
            line.push_str(" (unassigned: a tenant of its own, default trust)");
        }
        if t.virtual_cluster {
            line.push_str(" (in a virtual cluster: an API server of its own)");
        }
        let _ = writeln!(out, "  {}", wrap(&line, width.saturating_sub(6), "      "));
    }
    if report.tenants.len() > MAX_TENANTS {
        let _ = writeln!(
            out,
            "  {}",
            p.dim(&format!(
                "and {} more tenants (the JSON report lists them all)",
                report.tenants.len() - MAX_TENANTS
            ))
        );
    }
    out.push('\n');
}

fn render_findings(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    if report.findings.is_empty() {
        let _ = writeln!(out, "{}", p.heading("FINDINGS"));
        let _ = writeln!(out, "  none\n");
        return;
    }
    // Worst first across the layers: not accepted before accepted, most severe first, observed
    // before possible before permitted, then the layers in model order and the report's order; each
    // finding names its layer.
    let mut shown: Vec<&Finding> = report.findings.iter().collect();
    shown.sort_by_key(|f| {
        (
            f.accepted.is_some(),
            std::cmp::Reverse(f.severity),
            f.certainty,
            Layer::ALL.iter().position(|l| *l == f.layer),
        )
    });
    let _ = writeln!(
        out,
        "{} {}",
        p.heading("FINDINGS"),
        p.dim(&format!(
            "({}, worst first)",
            count_phrase(shown.len(), "finding")
        ))
    );
    for f in shown {
        render_finding(out, f, p, width);
    }
}

fn render_finding(out: &mut String, f: &Finding, p: &Palette, width: usize) {
    let label = format!("{:<8}", f.severity.as_str().to_ascii_uppercase());
    let field_indent = "             ";
    let certainty = format!("[{}]", f.certainty);
    let mut head = format!(
        "  {} {} {}",
        p.severity(f.severity, &label),
        p.bold(&f.rule),
        f.name,
    );
    // Certainty, layer and acceptance go under the name when the line would not fit.
    let tail_len =
        1 + certainty.len() + 1 + f.layer.as_str().len() + if f.accepted.is_some() { 9 } else { 0 };
    let head_len = 2 + label.len() + 1 + f.rule.chars().count() + 1 + f.name.chars().count();
    if head_len + tail_len > width {
        head.push('\n');
        head.push_str(field_indent);
    } else {
        head.push(' ');
    }
    let _ = write!(head, "{} {}", p.dim(&certainty), p.dim(f.layer.as_str()));
    if f.accepted.is_some() {
        head.push(' ');
        head.push_str(&p.accepted("ACCEPTED"));
    }
    if f.since == Some(gpu_trust_rules::report::Since::New) {
        head.push(' ');
        head.push_str(&p.bold("NEW"));
    }
    let _ = writeln!(out, "{head}");
    let indent = "    ";
    let field = |out: &mut String, name: &str, value: &str| {
        let text = wrap(
            value,
            width.saturating_sub(field_indent.len()),
            field_indent,
        );
        let _ = writeln!(out, "{indent}{name:<9}{text}");
    };
    if !f.tenants.is_empty() {
        field(out, "tenants", &listed(&f.tenants, MAX_LISTED));
    }
    if let Some(pairs) = f.pairs.filter(|n| *n > 1 || !f.accepted_pairs.is_empty()) {
        let mut text = count_phrase(pairs, "pair");
        if !f.accepted_pairs.is_empty() {
            let _ = write!(
                text,
                ", {} accepted, {} open",
                f.accepted_pair_count(),
                pairs.saturating_sub(f.accepted_pair_count())
            );
        }
        field(out, "pairs", &text);
        if !f.open_pairs.is_empty() {
            field(out, "open", &open_pairs_text(f, esc));
        }
    }
    if !f.nodes.is_empty() {
        field(out, "nodes", &listed(&f.nodes, MAX_LISTED));
    }
    // Where its pairs meet, when in more than one place or with more than one certainty.
    if f.by_group.len() > 1 {
        for (i, line) in where_lines(f, esc).iter().enumerate() {
            field(out, if i == 0 { "where" } else { "" }, line);
        }
    }
    for (i, o) in f.objects.iter().enumerate() {
        let label = if i == 0 { "objects  " } else { "         " };
        let name = object_text(o, esc);
        let place = if o.line > 0 {
            format!("{}:{}", esc(&o.file), o.line)
        } else {
            esc(&o.file)
        };
        // An object and its file on one line when they fit, else the file under the object.
        let fits = indent.len() + label.len() + name.chars().count() + 2 + place.chars().count();
        if fits <= width {
            let _ = writeln!(out, "{indent}{label}{name}  {}", p.dim(&place));
        } else {
            let _ = writeln!(out, "{indent}{label}{name}");
            let _ = writeln!(out, "{field_indent}  {}", p.dim(&place));
        }
    }
    let _ = writeln!(
        out,
        "{indent}{}",
        wrap(&esc(&f.message), width.saturating_sub(indent.len()), indent)
    );
    // Continuation lines line up under the text after the label; no line of prose passes the
    // width, and each command stands whole on a line of its own, to be copied.
    let fix = format!("fix: {}", esc(&f.remediation));
    let _ = writeln!(
        out,
        "{indent}{}",
        crate::text::wrap_with_commands(&fix, width.saturating_sub(9), "         ")
    );
    let labelled = " ".repeat(14);
    for e in &f.evidence {
        let line = format!("evidence: {}", esc(e));
        let _ = writeln!(
            out,
            "{indent}{}",
            wrap(&line, width.saturating_sub(14), &labelled)
        );
    }
    if let Some(a) = &f.accepted {
        let until = a
            .until
            .as_deref()
            .map(|u| format!(" (until {})", esc(u)))
            .unwrap_or_default();
        let line = format!("accepted: {}{until}", esc(&a.reason));
        let _ = writeln!(
            out,
            "{indent}{}",
            p.accepted(&wrap(&line, width.saturating_sub(14), &labelled))
        );
    }
    for a in f.accepted_pairs.iter().take(MAX_LISTED) {
        let until = a
            .until
            .as_deref()
            .map(|u| format!(", until {}", esc(u)))
            .unwrap_or_default();
        let line = format!(
            "accepted for {} and {}: {}{until}",
            esc(&a.tenants[0]),
            esc(&a.tenants[1]),
            esc(&a.reason)
        );
        let _ = writeln!(
            out,
            "{indent}{}",
            p.accepted(&wrap(&line, width.saturating_sub(14), &labelled))
        );
    }
    for o in &f.one_sided_acceptances {
        let line = format!("note: {}", esc(&o.message));
        let _ = writeln!(
            out,
            "{indent}{}",
            p.dim(&wrap(&line, width.saturating_sub(14), &labelled))
        );
    }
    let shown = f.accepted_pairs.len().min(MAX_LISTED);
    if f.accepted_pair_count() > shown {
        let _ = writeln!(
            out,
            "{indent}{}",
            p.accepted(&format!(
                "and {} more accepted pairs",
                f.accepted_pair_count() - shown
            ))
        );
    }
    out.push('\n');
}

/// Places of a pairwise finding listed before "and N more".
pub(crate) const MAX_PLACES: usize = 10;

/// One line per place a pairwise finding's pairs meet: `observed, critical: acme and perf on gpu-a
/// (g2)`; at most [`MAX_PLACES`], then how many more.
pub(crate) fn where_lines(f: &Finding, name: impl Fn(&str) -> String) -> Vec<String> {
    let names = |items: &[String]| -> String {
        let shown: Vec<String> = items.iter().take(5).map(|s| name(s)).collect();
        match items.len() {
            0 => "-".to_string(),
            1 => shown.join(""),
            n if n <= 5 => format!("{} and {}", shown[..n - 1].join(", "), shown[n - 1]),
            n => format!("{} and {} more", shown.join(", "), n - 5),
        }
    };
    let mut lines: Vec<String> = f
        .by_group
        .iter()
        .take(MAX_PLACES)
        .map(|g| {
            let who = if g.pairs == 1 {
                names(&g.tenants)
            } else {
                format!("{} ({})", names(&g.tenants), count_phrase(g.pairs, "pair"))
            };
            let place = if g.nodes.is_empty() {
                String::new()
            } else {
                format!(" on {}", names(&g.nodes))
            };
            format!(
                "{}, {}: {who}{place} ({})",
                g.certainty,
                g.severity,
                name(&g.group)
            )
        })
        .collect();
    if f.by_group.len() > MAX_PLACES {
        lines.push(format!(
            "and {} more (byGroup in the JSON report)",
            count_phrase(f.by_group.len() - MAX_PLACES, "place")
        ));
    }
    lines
}

/// A finding's object: `Deployment ns/web (3 pods)`, `Pod ns/web-1 (of Deployment ns/web, 3
/// pods)` for a pod that stands for an owner the input lacks.
pub(crate) fn object_text(
    o: &gpu_trust_rules::report::FindingObject,
    name: impl Fn(&str) -> String,
) -> String {
    let mut text = match &o.namespace {
        Some(ns) => format!("{} {}/{}", name(&o.kind), name(ns), name(&o.name)),
        None => format!("{} {}", name(&o.kind), name(&o.name)),
    };
    let pods = o.pods.map(|n| count_phrase(n, "pod"));
    match (&o.owner, pods) {
        (Some(owner), Some(pods)) => {
            let _ = write!(text, " (of {}, {pods})", name(&owner.replacen('/', " ", 1)));
        }
        (Some(owner), None) => {
            let _ = write!(text, " (of {})", name(&owner.replacen('/', " ", 1)));
        }
        (None, Some(pods)) => {
            let _ = write!(text, " ({pods})");
        }
        (None, None) => {}
    }
    text
}

/// A partly accepted finding's open pairs: `globex and initech; acme and initech, and 3 more`.
pub(crate) fn open_pairs_text(f: &Finding, name: impl Fn(&str) -> String) -> String {
    let mut text = f
        .open_pairs
        .iter()
        .map(|[a, b]| format!("{} and {}", name(a), name(b)))
        .collect::<Vec<_>>()
        .join("; ");
    let open = f.pairs.unwrap_or(0).saturating_sub(f.accepted_pair_count());
    if open > f.open_pairs.len() {
        let _ = write!(text, "; and {} more", open - f.open_pairs.len());
    }
    text
}

/// What a group is, in a few words: `time-slicing GPU`, `MIG GPU`, `node`, `API server`.
pub(crate) fn group_what(g: &GroupEntry) -> String {
    let what = match (g.level, g.mechanism) {
        (GroupLevel::Device, Some(m)) if m.is_mig() => format!("{m} MIG instance"),
        (GroupLevel::Device, Some(m)) => format!("{m} GPU"),
        (GroupLevel::Device, None) => "GPU".to_string(),
        (GroupLevel::MigGpu, _) => "MIG GPU".to_string(),
        (GroupLevel::Node, _) => "node".to_string(),
        (GroupLevel::ControlPlane, _) => "API server".to_string(),
    };
    if g.permitted {
        format!("{what} (permitted)")
    } else {
        what
    }
}

fn render_groups(out: &mut String, groups: &[GroupEntry], p: &Palette, width: usize) {
    if groups.is_empty() {
        return;
    }
    section(
        out,
        p,
        width,
        "SHARED",
        "what tenants share: one line per shared thing",
    );
    let mut shown: Vec<&GroupEntry> = groups.iter().collect();
    if shown.len() > MAX_GROUPS {
        // The device groups first, then by pairs: what splits the most tenants.
        shown.sort_by_key(|g| (g.level, std::cmp::Reverse(g.pairs)));
        shown.truncate(MAX_GROUPS);
        shown.sort_by_key(|g| groups.iter().position(|x| x.id == g.id));
    }
    let rows: Vec<[String; 4]> = shown
        .iter()
        .map(|g| {
            let nodes = if g.nodes.is_empty() {
                "-".to_string()
            } else {
                listed(&g.nodes, 3)
            };
            [
                g.id.clone(),
                group_what(g),
                nodes,
                format!(
                    "{} ({}, {})",
                    listed(&g.tenants, MAX_LISTED),
                    count_phrase(g.pairs, "pair"),
                    g.certainty
                ),
            ]
        })
        .collect();
    write_columns(out, &["group", "shared", "on", "tenants"], &rows, p, width);
    if shown.len() < groups.len() {
        let _ = writeln!(
            out,
            "  {}",
            p.dim(&format!(
                "and {} more groups (the JSON report lists them all)",
                groups.len() - shown.len()
            ))
        );
    }
    out.push('\n');
}

/// Who a blast-radius entry reaches, as the matrix names them (with the certainty for that
/// incident), and how many more.
fn reached(e: &BlastRadiusEntry, matrix: &Matrix, tenants: usize) -> String {
    let mut names: Vec<(&str, Certainty)> = matrix
        .pairs
        .iter()
        .filter_map(|p| {
            let c = *p.incidents.get(&e.incident)?;
            match &p.tenants {
                [a, b] if *a == e.tenant => Some((b.as_str(), c)),
                [a, b] if *b == e.tenant => Some((a.as_str(), c)),
                _ => None,
            }
        })
        .collect();
    names.sort_unstable();
    // One certainty for all is said once: for every other tenant, as that.
    if let [(_, c), rest @ ..] = names.as_slice() {
        if rest.iter().all(|(_, r)| r == c) && names.len() == e.reaches {
            if names.len() >= 3 && names.len() + 1 == tenants {
                return format!("every other tenant ({c})");
            }
            if names.len() <= MAX_LISTED {
                let list: Vec<String> = names.iter().map(|(t, _)| esc(t)).collect();
                return format!("{} ({c})", list.join(", "));
            }
        }
    }
    let mut s = names
        .iter()
        .take(MAX_LISTED)
        .map(|(t, c)| format!("{} ({c})", esc(t)))
        .collect::<Vec<_>>()
        .join(", ");
    let shown = names.len().min(MAX_LISTED);
    if e.reaches > shown {
        if shown == 0 {
            let _ = write!(s, "{} ({})", count_phrase(e.reaches, "tenant"), e.certainty);
        } else {
            let _ = write!(s, " and {} more", e.reaches - shown);
        }
    }
    s
}

fn render_blast_radius(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    let entries = &report.blast_radius;
    if entries.is_empty() {
        return;
    }
    section(
        out,
        p,
        width,
        "BLAST RADIUS",
        "who an incident started by a tenant reaches; incidents not listed reach no one",
    );
    let tenants: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e.tenant.as_str()).collect();
    let rows: Vec<[String; 3]> = if tenants.len() <= MAX_BLAST_TENANTS {
        entries
            .iter()
            .map(|e| {
                [
                    esc(&e.tenant),
                    e.incident.as_str().to_string(),
                    reached(e, &report.matrix, report.tenants.len()),
                ]
            })
            .collect()
    } else {
        // Tenants that reach as many others, as surely, share a line.
        type Key = (Incident, usize, Certainty);
        let mut folded: BTreeMap<Key, Vec<String>> = BTreeMap::new();
        for e in entries {
            folded
                .entry((e.incident, e.reaches, e.certainty))
                .or_default()
                .push(e.tenant.clone());
        }
        let mut rows: Vec<(usize, [String; 3])> = folded
            .into_iter()
            .map(|((incident, reaches, certainty), who)| {
                (
                    who.len(),
                    [
                        listed(&who, 4),
                        incident.as_str().to_string(),
                        format!(
                            "{} each, {certainty}",
                            count_phrase(reaches, "other tenant")
                        ),
                    ],
                )
            })
            .collect();
        rows.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
        rows.into_iter().map(|(_, r)| r).collect()
    };
    write_columns(out, &["tenant", "incident", "reaches"], &rows, p, width);
    out.push('\n');
}

/// A section heading with its explanation, the explanation wrapped at the width.
fn section(out: &mut String, p: &Palette, width: usize, heading: &str, explanation: &str) {
    let text = wrap(
        &format!("({explanation})"),
        width.saturating_sub(heading.len() + 1),
        &" ".repeat(heading.len() + 1),
    );
    let _ = writeln!(out, "{} {}", p.heading(heading), p.dim(&text));
}

fn render_skipped(out: &mut String, report: &AuditReport, p: &Palette, width: usize) {
    if report.skipped.is_empty() {
        return;
    }
    let note = wrap(
        "(not audited: the findings above cover only part of the input)",
        width.saturating_sub(14),
        &" ".repeat(14),
    );
    let _ = writeln!(
        out,
        "{} {}",
        p.heading("SKIPPED INPUT"),
        p.severity(Severity::High, &note)
    );
    for s in &report.skipped {
        let line = format!(
            "{}:{}:{}: error[{}]: {}",
            esc(&s.file),
            s.line,
            s.column,
            s.code,
            esc(&s.error)
        );
        let _ = writeln!(out, "  {}", wrap(&line, width.saturating_sub(4), "    "));
    }
    out.push('\n');
}

/// Left-aligned columns separated by two spaces, the header bold; the last column wraps at `width`
/// (continuation lines indented to it). Widths count characters. Cells are already escaped.
fn write_columns<const N: usize>(
    out: &mut String,
    header: &[&str; N],
    rows: &[[String; N]],
    p: &Palette,
    width: usize,
) {
    let mut widths = [0usize; N];
    for (i, h) in header.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let lead: usize = 2 + widths
        .iter()
        .take(N.saturating_sub(1))
        .map(|w| w + 2)
        .sum::<usize>();
    // Too narrow beside the other columns, the last one goes under them, from the second column.
    let under = 2 + widths[0] + 2;
    let line = |cells: &[String]| -> String {
        let mut s = String::from("  ");
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                let last = last_column(cell, lead, width, under);
                if last.starts_with('\n') {
                    s.truncate(s.trim_end().len());
                }
                s.push_str(&last);
            } else {
                let pad = widths[i].saturating_sub(cell.chars().count());
                s.push_str(cell);
                s.extend(std::iter::repeat_n(' ', pad + 2));
            }
        }
        s.trim_end().to_string()
    };
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let _ = writeln!(out, "{}", p.bold(&line(&head)));
    for row in rows {
        let _ = writeln!(out, "{}", line(row));
    }
}

fn count_phrase(n: usize, noun: &str) -> String {
    let digits = n.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{grouped} {noun}s")
    }
}

/// "12 findings: 2 critical, 5 high, 4 medium, 1 info; 1 accepted; 4 tenants, 6 nodes, 32 GPUs".
/// Counts are of findings not accepted; severities with no finding are left out.
pub fn summary_line(summary: &Summary, skipped: usize) -> String {
    let counts: &SeverityCounts = &summary.findings;
    let total: usize = Severity::ALL.iter().map(|s| counts.get(*s)).sum();
    let mut line = count_phrase(total, "finding");
    let parts: Vec<String> = Severity::ALL
        .iter()
        .filter(|s| counts.get(**s) > 0)
        .map(|s| format!("{} {}", counts.get(*s), s.as_str()))
        .collect();
    if !parts.is_empty() {
        line.push_str(": ");
        line.push_str(&parts.join(", "));
    }
    if summary.accepted > 0 {
        let _ = write!(line, "; {} accepted", summary.accepted);
    }
    let _ = write!(
        line,
        "; {}, {}, {}",
        count_phrase(summary.tenants, "tenant"),
        count_phrase(summary.nodes, "node"),
        count_phrase(summary.gpus, "GPU")
    );
    if skipped > 0 {
        let _ = write!(
            line,
            "; {} skipped: partial input",
            count_phrase(skipped, "document")
        );
    }
    line
}
