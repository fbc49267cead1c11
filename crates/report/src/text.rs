//! Small text helpers shared by the renderers: word wrapping, Markdown sections, counted nouns, the
//! commands' tables, escaped input text and pretty JSON.

use comfy_table::{
    presets::UTF8_FULL_CONDENSED, ColumnConstraint, ContentArrangement, Table, Width,
};
use gpu_trust_model::report::AdvisoryData;
use gpu_trust_model::terminal::escape;
use serde::Serialize;

/// `1 node`, `2 nodes`: a count and its noun.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1 node`, `1,000 nodes`: a count grouped by thousands and its noun.
pub(crate) fn count_phrase(n: usize, noun: &str) -> String {
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

/// One line for a report's footer: `advisory data of 2026-09-30, newest bulletin NVIDIA
/// security bulletin 5861 (built-in)`, with where else it came from, and a warning when stale.
pub fn advisory_line(data: &AdvisoryData) -> String {
    let date = data.newest_bulletin.as_deref().unwrap_or("no date");
    let mut s = format!("advisory data of {date}");
    if let Some(name) = &data.newest_bulletin_name {
        s.push_str(&format!(", newest bulletin {name}"));
    }
    // The update's bulletins are counted, not listed.
    let mut from: Vec<String> = data
        .sources
        .iter()
        .filter(|n| !data.update.as_ref().is_some_and(|u| n.starts_with(&u.from)))
        .map(|n| {
            if data.built_in_replaced_by.as_ref() == Some(n) {
                format!("{n}, which replaces the built-in data")
            } else {
                n.clone()
            }
        })
        .collect();
    if let Some(u) = &data.update {
        from.push(format!(
            "{} from {} ({})",
            count_phrase(u.bulletins, "bulletin"),
            u.from,
            match &u.checked {
                Some(day) => format!("nothing newer on {day}"),
                None => "its last update did not read every bulletin".to_string(),
            }
        ));
    }
    s.push_str(&format!(
        " ({})",
        if from.is_empty() {
            "none".to_string()
        } else {
            from.join("; ")
        }
    ));
    if data.stale {
        match data.age_days {
            Some(d) => s.push_str(&format!(
                "; warning: {d} days old, over {} days: run `gpu-trust advisories update` (or give newer bulletins with --advisories)",
                gpu_trust_rules::advisories::STALE_AFTER_DAYS
            )),
            None => s.push_str(
                "; warning: the data has no dates: run `gpu-trust advisories update` (or give dated bulletins with --advisories)",
            ),
        }
    }
    s
}

/// The narrowest a command's table is laid out: below this its columns cannot hold a word.
const NARROWEST_TABLE: usize = 40;

/// A table in the commands' one style (condensed UTF-8 frames) with its header, its cells wrapped
/// so that no line is wider than `width` columns (the terminal's, or `COLUMNS`; at least 40) and,
/// where the columns' longest words fit that width together, no word is broken: see [`Grid`].
pub(crate) fn table<S: ToString>(width: usize, header: impl IntoIterator<Item = S>) -> Grid {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    let width = u16::try_from(width.max(NARROWEST_TABLE)).unwrap_or(u16::MAX);
    t.set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    t.set_header(header.into_iter().map(|h| h.to_string()));
    Grid(t)
}

/// A command's table: rows are added as to a comfy-table `Table`; printed, no word or identifier is
/// cut (comfy-table cuts a word wider than its column). When the longest words of all columns fit
/// the width side by side, each column is at least as wide as its longest word; when they do not,
/// each row is printed as a record instead: its first cell, then `header: value` lines, wrapped
/// at word boundaries.
pub(crate) struct Grid(Table);

impl std::ops::Deref for Grid {
    type Target = Table;
    fn deref(&self) -> &Table {
        &self.0
    }
}

impl std::ops::DerefMut for Grid {
    fn deref_mut(&mut self) -> &mut Table {
        &mut self.0
    }
}

impl std::fmt::Display for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = usize::from(self.0.width().unwrap_or(u16::MAX));
        let mut longest: Vec<usize> = Vec::new();
        for row in self.0.header().into_iter().chain(self.0.row_iter()) {
            for (i, cell) in row.cell_iter().enumerate() {
                let word = cell
                    .content()
                    .split_whitespace()
                    .map(|w| w.chars().count())
                    .max()
                    .unwrap_or(0);
                if longest.len() <= i {
                    longest.resize(i + 1, 0);
                }
                longest[i] = longest[i].max(word);
            }
        }
        // Each column: its longest word and a space either side; the frame: one column more than
        // there are columns.
        if longest.iter().map(|w| w + 3).sum::<usize>() + 1 > width {
            return f.write_str(&records(&self.0, width));
        }
        let mut t = self.0.clone();
        for (i, w) in longest.iter().enumerate() {
            let w = u16::try_from(w + 2).unwrap_or(u16::MAX);
            if let Some(column) = t.column_mut(i) {
                column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(w)));
            }
        }
        write!(f, "{t}")
    }
}

/// The rows of `t` as records: the first cell, then each other cell as `header: value` indented
/// under it, wrapped to `width` at word boundaries; a blank line between records.
fn records(t: &Table, width: usize) -> String {
    let header: Vec<String> = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect())
        .unwrap_or_default();
    let rows: Vec<String> = t
        .row_iter()
        .map(|row| {
            let lines: Vec<String> = row
                .cell_iter()
                .enumerate()
                .map(|(i, cell)| match i {
                    0 => wrap(&cell.content(), width.saturating_sub(2), "  "),
                    _ => {
                        let label = header.get(i).map_or("", String::as_str);
                        let content = cell.content();
                        if content.contains('\n') {
                            // A value of several lines (a pod each): each under the label.
                            let mut s = format!("  {label}:");
                            for line in content.lines() {
                                s.push_str("\n    ");
                                s.push_str(&wrap(line, width.saturating_sub(6), "      "));
                            }
                            s
                        } else {
                            let text = format!("{label}: {content}");
                            format!("  {}", wrap(&text, width.saturating_sub(4), "    "))
                        }
                    }
                })
                .collect();
            lines.join("\n")
        })
        .collect();
    rows.join("\n\n")
}

/// A line of prose at `indent`, wrapped to fit `width` columns, its continuation lines indented two
/// columns more, ending in a newline: the commands' facts and notes around their tables.
pub(crate) fn prose_line(text: &str, width: usize, indent: &str) -> String {
    let hanging = format!("{indent}  ");
    format!(
        "{indent}{}\n",
        wrap(text, width.saturating_sub(hanging.len()), &hanging)
    )
}

/// The narrowest a last column is wrapped beside the columns before it; narrower, it moves under them.
const NARROWEST_LAST_COLUMN: usize = 24;

/// `text` as the last column of a line whose other columns take `lead` of `width` columns: wrapped
/// beside them when at least 24 columns are left, else starting on the next line, indented by
/// `under` columns and wrapped in what is left there. The caller trims the trailing blanks of the
/// columns before it when the text begins with a line break.
pub(crate) fn last_column(text: &str, lead: usize, width: usize, under: usize) -> String {
    if width >= lead + NARROWEST_LAST_COLUMN {
        wrap(text, width - lead, &" ".repeat(lead))
    } else {
        let indent = " ".repeat(under);
        format!(
            "\n{indent}{}",
            wrap(text, width.saturating_sub(under), &indent)
        )
    }
}

/// How a part of a text split at its backticks reads: prose, a code span, or what follows a
/// backtick without a partner.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Span {
    Prose,
    Code,
    Unpaired,
}

/// `text` split at its backticks, each part with how it reads: parts between paired backticks are
/// code, and when the backticks do not pair up the part after the last one is [`Span::Unpaired`].
pub(crate) fn backtick_spans(text: &str) -> impl Iterator<Item = (Span, &str)> {
    let count = text.split('`').count();
    // An odd number of parts means the backticks pair up; otherwise the last one has no partner.
    let paired = if count % 2 == 1 { count } else { count - 1 };
    text.split('`').enumerate().map(move |(i, part)| {
        let span = if i >= paired {
            Span::Unpaired
        } else if i % 2 == 1 {
            Span::Code
        } else {
            Span::Prose
        };
        (span, part)
    })
}

/// Text from the input, escaped for a terminal.
pub(crate) fn e(text: &str) -> String {
    escape(text).into_owned()
}

/// Texts from the input, each escaped for a terminal, joined with `sep`.
pub(crate) fn joined(items: &[String], sep: &str) -> String {
    items.iter().map(|s| e(s)).collect::<Vec<_>>().join(sep)
}

/// A document as pretty JSON ending in a newline: the commands' JSON formats.
pub(crate) fn pretty_json<T: Serialize + ?Sized>(doc: &T) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(doc)?;
    s.push('\n');
    Ok(s)
}

/// Greedy word wrap: lines of at most `width` characters (a longer word stays whole on its own line),
/// each continuation line prefixed by `indent`. Existing line breaks are kept.
pub(crate) fn wrap(text: &str, width: usize, indent: &str) -> String {
    let width = width.max(20);
    let mut out = String::new();
    for (i, paragraph) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        let mut column = 0usize;
        for word in paragraph.split_whitespace() {
            let len = word.chars().count();
            if column > 0 && column + 1 + len > width {
                out.push('\n');
                out.push_str(indent);
                column = 0;
            }
            if column > 0 {
                out.push(' ');
                column += 1;
            }
            out.push_str(word);
            column += len;
        }
    }
    out
}

/// [`wrap`] for text with commands in it: a code span that holds a command (`` `kubectl taint nodes
/// ...` ``: its first word a plain lower-case name) or a snippet longer than 40 characters leaves the
/// prose and stands on a line of its own, indented two more columns and never wrapped, so that it can
/// be copied whole; parentheses that only held it are dropped. Other code spans (a field, a setting
/// such as `` `replicas: 1` ``) stay in the prose with their backticks, never broken across lines.
pub(crate) fn wrap_with_commands(text: &str, width: usize, indent: &str) -> String {
    let pieces: Vec<&str> = text.split('`').collect();
    // An odd number of pieces means the backticks pair up; otherwise the last one has no partner.
    let paired = if pieces.len() % 2 == 1 {
        pieces.len()
    } else {
        pieces.len() - 1
    };
    // Prose chunks (wrapped) and commands (whole), in order.
    let mut lines: Vec<String> = Vec::new();
    let mut prose = String::new();
    let mut after_paren = false;
    let flush = |prose: &mut String, lines: &mut Vec<String>| {
        let chunk = prose.trim();
        if !chunk.is_empty() {
            let wrapped = wrap(chunk, width, indent);
            lines.push(if lines.is_empty() {
                wrapped
            } else {
                format!("{indent}{wrapped}")
            });
        }
        prose.clear();
    };
    for (i, piece) in pieces.iter().enumerate() {
        if i >= paired {
            prose.push('`');
            prose.push_str(piece);
        } else if i % 2 == 0 {
            let piece = if after_paren {
                piece.strip_prefix(')').unwrap_or(piece)
            } else {
                piece
            };
            after_paren = false;
            prose.push_str(piece);
        } else if !stands_alone(piece) {
            prose.push('`');
            // Kept on one line: its spaces do not break (put back after wrapping).
            prose.push_str(&piece.replace(' ', NO_BREAK));
            prose.push('`');
        } else {
            // A command: the prose before it (without a parenthesis that only opens it), then the
            // command on a line of its own.
            let next_closes = pieces.get(i + 1).is_some_and(|n| n.starts_with(')'));
            if next_closes && prose.trim_end().ends_with('(') {
                let kept = prose.trim_end().trim_end_matches('(').to_string();
                prose = kept;
                after_paren = true;
            }
            flush(&mut prose, &mut lines);
            lines.push(format!("{indent}  {}", piece.trim()));
        }
    }
    flush(&mut prose, &mut lines);
    lines.join("\n").replace(NO_BREAK, " ")
}

/// Stands for a space inside a code span while prose is wrapped (a private-use character: no input
/// text reaches here unescaped with it, and it counts one column like the space it stands for).
const NO_BREAK: &str = "\u{e000}";

/// Whether a code span is a command or a long snippet, to stand on a line of its own.
fn stands_alone(code: &str) -> bool {
    let code = code.trim();
    let mut words = code.split_whitespace();
    let (Some(first), Some(_)) = (words.next(), words.next()) else {
        return false;
    };
    let program = first
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    program || code.chars().count() > 40
}

/// The body of the Markdown section whose heading (any level of `#`) reads `heading`, case-insensitive,
/// up to the next heading of the same or a higher level. `None` when absent or empty.
pub(crate) fn markdown_section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let mut start: Option<(usize, usize)> = None; // (byte offset of the body, heading level)
    let mut offset = 0usize;
    for line in doc.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if let Some((level, title)) = heading_of(trimmed) {
            match start {
                Some((body, open_level)) if level <= open_level => {
                    return non_empty(&doc[body..offset]);
                }
                None if title.eq_ignore_ascii_case(heading) => {
                    start = Some((offset + line.len(), level));
                }
                _ => {}
            }
        }
        offset += line.len();
    }
    start.and_then(|(body, _)| non_empty(&doc[body..]))
}

fn heading_of(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &line[level..];
    if !rest.starts_with(' ') {
        return None;
    }
    Some((level, rest.trim()))
}

fn non_empty(s: &str) -> Option<&str> {
    let t = s.trim();
    (!t.is_empty()).then_some(t)
}

/// Markdown as plain text: headings lose their `#`, inline code its backticks, emphasis its stars.
pub(crate) fn markdown_to_plain(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut in_fence = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            out.push_str("    ");
            out.push_str(line);
        } else if let Some((_, title)) = heading_of(line.trim_end()) {
            out.push_str(title);
        } else {
            push_plain_line(&mut out, line);
        }
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// One line of Markdown prose without code-span backticks and `**` emphasis (text inside code spans kept).
fn push_plain_line(out: &mut String, line: &str) {
    let mut in_code = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => in_code = !in_code,
            '*' if !in_code && chars.peek() == Some(&'*') => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
}

/// HTML-escapes text for element content and quoted attribute values. Control characters other
/// than tab and line breaks (which HTML shows as spaces), and the Unicode bidirectional controls that
/// reorder what a browser shows, are written out visibly as the terminal formats write them
/// (`\x1b`, `\u{202e}`), so a name cannot hide or reverse text on the page.
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            _ => {
                let mut buf = [0u8; 4];
                out.push_str(&gpu_trust_model::terminal::escape(c.encode_utf8(&mut buf)));
            }
        }
    }
    out
}

/// Text with Markdown code spans (`` `like this` ``) set as `<code>`, everything escaped: what the
/// rules write between backticks reads as code, and no backtick is left on the page. A backtick
/// without a partner stays as it is.
pub fn html_code_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (span, piece) in backtick_spans(text) {
        match span {
            Span::Unpaired => {
                out.push('`');
                out.push_str(&html_escape(piece));
            }
            Span::Code => {
                out.push_str("<code>");
                out.push_str(&html_escape(piece));
                out.push_str("</code>");
            }
            Span::Prose => out.push_str(&html_escape(piece)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_width_and_indents() {
        let s = wrap("one two three four five six seven", 20, "  ");
        assert_eq!(s, "one two three four\n  five six seven");
        for line in s.lines() {
            assert!(line.chars().count() <= 20);
        }
    }

    #[test]
    fn wrap_keeps_long_words_whole() {
        let long = "x".repeat(50);
        let s = wrap(&format!("a {long} b"), 20, "");
        assert_eq!(s, format!("a\n{long}\nb"));
    }

    #[test]
    fn commands_stand_whole_on_their_own_lines() {
        let fix = "fix: taint the nodes (`kubectl taint nodes NODE gpu-trust/tenant=search:NoSchedule`) \
                   and set `replicas: 1` for the pool; or accept it (`accept: [{rule: GT207, tenants: [acme, search], reason: ...}]`)";
        let s = wrap_with_commands(fix, 40, "     ");
        assert_eq!(
            s,
            "fix: taint the nodes\n       kubectl taint nodes NODE gpu-trust/tenant=search:NoSchedule\n     \
             and set `replicas: 1` for the pool; or\n     accept it\n       accept: [{rule: GT207, tenants: [acme, search], reason: ...}]"
        );
        // A short setting stays in the prose, never broken at its space.
        assert_eq!(
            wrap_with_commands("aaaa bbbb cccc dddd eeee set `replicas: 1` now", 30, ""),
            "aaaa bbbb cccc dddd eeee set\n`replicas: 1` now"
        );
        // Without commands it is the plain wrap; an unpaired backtick stays.
        assert_eq!(wrap_with_commands("a `b c", 40, "  "), "a `b c");
        assert_eq!(
            wrap_with_commands("x `y` z", 40, "  "),
            wrap("x `y` z", 40, "  ")
        );
    }

    #[test]
    fn section_stops_at_the_next_heading() {
        let doc =
            "# What it detects\n\nTwo tenants.\n\n## Detail\nmore\n\n# Why it matters\n\nFaults.\n";
        assert_eq!(
            markdown_section(doc, "what it detects"),
            Some("Two tenants.\n\n## Detail\nmore")
        );
        assert_eq!(markdown_section(doc, "Why it matters"), Some("Faults."));
        assert_eq!(markdown_section(doc, "Example"), None);
    }

    #[test]
    fn plain_text_drops_markup() {
        let doc = "# Title\nUse `nvidia.com/gpu` **now** in `nvidia-*`\n```yaml\nkind: Pod\n```";
        assert_eq!(
            markdown_to_plain(doc),
            "Title\nUse nvidia.com/gpu now in nvidia-*\n    kind: Pod"
        );
    }
}
