//! Small text helpers shared by the renderers: word wrapping and Markdown sections.

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
