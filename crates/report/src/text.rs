//! Small text helpers shared by the renderers: word wrapping, Markdown sections, counted nouns, the
//! commands' tables, escaped input text and pretty JSON.

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpu_trust_model::terminal::escape;
use serde::Serialize;

/// `1 node`, `2 nodes`: a count and its noun.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// How a command's table is fitted to its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Columns as wide as their content (a file or a pipe).
    Natural,
    /// Wrapped to the terminal's width (standard output is a terminal).
    Terminal,
    /// Wrapped to this many columns wherever it goes (the reference tables: catalogue, mechanisms).
    Width(u16),
}

impl Fit {
    /// [`Fit::Terminal`] when the output is a terminal, else [`Fit::Natural`].
    pub(crate) fn terminal(terminal: bool) -> Fit {
        if terminal {
            Fit::Terminal
        } else {
            Fit::Natural
        }
    }
}

/// A table in the commands' one style (condensed UTF-8 frames) with its header.
pub(crate) fn table<S: ToString>(fit: Fit, header: impl IntoIterator<Item = S>) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    match fit {
        Fit::Natural => {}
        Fit::Terminal => {
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        Fit::Width(width) => {
            t.set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(width);
        }
    }
    t.set_header(header.into_iter().map(|h| h.to_string()));
    t
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
