//! The Markdown of rule documentation as escaped HTML: headings, paragraphs, bullet and numbered lists,
//! fenced code, inline code, `**strong**`, `[links](https://...)` and bare `https://` addresses. Every
//! character of the source is escaped; only the tags written here are produced, so the output is safe
//! whatever the documentation holds.

use super::escape;

/// Renders `doc`; headings are shifted down so that `#` becomes `heading_base` (`<h4>` for 4).
pub(super) fn to_html(doc: &str, heading_base: usize) -> String {
    let mut out = String::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut list: Option<&'static str> = None;
    let mut fence: Option<Vec<&str>> = None;

    for line in doc.lines() {
        if let Some(code) = fence.as_mut() {
            if line.trim_start().starts_with("```") {
                out.push_str("<pre><code>");
                out.push_str(&escape(&code.join("\n")));
                out.push_str("</code></pre>\n");
                fence = None;
            } else {
                code.push(line);
            }
            continue;
        }
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            flush_paragraph(&mut out, &mut paragraph);
            close_list(&mut out, &mut list);
            fence = Some(Vec::new());
            continue;
        }
        if trimmed.is_empty() {
            flush_paragraph(&mut out, &mut paragraph);
            close_list(&mut out, &mut list);
            continue;
        }
        if let Some((level, title)) = heading(trimmed) {
            flush_paragraph(&mut out, &mut paragraph);
            close_list(&mut out, &mut list);
            let h = (level + heading_base - 1).min(6);
            out.push_str(&format!("<h{h}>{}</h{h}>\n", inline(title)));
            continue;
        }
        if let Some((kind, item)) = list_item(trimmed) {
            flush_paragraph(&mut out, &mut paragraph);
            if list != Some(kind) {
                close_list(&mut out, &mut list);
                out.push_str(&format!("<{kind}>\n"));
                list = Some(kind);
            }
            out.push_str(&format!("<li>{}</li>\n", inline(item)));
            continue;
        }
        if list.is_some() && line.starts_with("  ") {
            // A continuation line of the last list item.
            if out.ends_with("</li>\n") {
                out.truncate(out.len() - "</li>\n".len());
                out.push(' ');
                out.push_str(&inline(trimmed));
                out.push_str("</li>\n");
                continue;
            }
        }
        close_list(&mut out, &mut list);
        paragraph.push(trimmed);
    }
    if let Some(code) = fence {
        out.push_str("<pre><code>");
        out.push_str(&escape(&code.join("\n")));
        out.push_str("</code></pre>\n");
    }
    flush_paragraph(&mut out, &mut paragraph);
    close_list(&mut out, &mut list);
    out
}

fn flush_paragraph(out: &mut String, paragraph: &mut Vec<&str>) {
    if paragraph.is_empty() {
        return;
    }
    out.push_str("<p>");
    out.push_str(&inline(&paragraph.join(" ")));
    out.push_str("</p>\n");
    paragraph.clear();
}

fn close_list(out: &mut String, list: &mut Option<&'static str>) {
    if let Some(kind) = list.take() {
        out.push_str(&format!("</{kind}>\n"));
    }
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = line[level..].strip_prefix(' ')?;
    Some((level, rest.trim()))
}

fn list_item(line: &str) -> Option<(&'static str, &str)> {
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some(("ul", rest));
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        if let Some(rest) = line[digits..].strip_prefix(". ") {
            return Some(("ol", rest));
        }
    }
    None
}

/// Inline markup of one paragraph or item: code spans, strong emphasis, links, bare addresses.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('`') {
            if let Some(end) = after.find('`') {
                out.push_str("<code>");
                out.push_str(&escape(&after[..end]));
                out.push_str("</code>");
                rest = &after[end + 1..];
                continue;
            }
        }
        if let Some(after) = rest.strip_prefix("**") {
            if let Some(end) = after.find("**") {
                out.push_str("<strong>");
                out.push_str(&inline(&after[..end]));
                out.push_str("</strong>");
                rest = &after[end + 2..];
                continue;
            }
        }
        if let Some(after) = rest.strip_prefix('[') {
            if let Some((label, url, used)) = link(after) {
                out.push_str(&anchor(url, &inline(label)));
                rest = &after[used..];
                continue;
            }
        }
        if rest.starts_with("https://") || rest.starts_with("http://") {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '"')
                .unwrap_or(rest.len());
            // Sentence punctuation after an address is not part of it.
            let url = rest[..end].trim_end_matches(['.', ',', ';', ':', ')']);
            if !url.is_empty() {
                out.push_str(&anchor(url, &escape(url)));
                rest = &rest[url.len()..];
                continue;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push_str(&escape(&c.to_string()));
        }
        rest = chars.as_str();
    }
    out
}

/// `label](url)` after the opening bracket: the label, the address and the bytes used.
fn link(after: &str) -> Option<(&str, &str, usize)> {
    let close = after.find("](")?;
    let label = &after[..close];
    let tail = &after[close + 2..];
    let end = tail.find(')')?;
    let url = &tail[..end];
    if !(url.starts_with("https://") || url.starts_with("http://"))
        || url.contains(char::is_whitespace)
    {
        return None;
    }
    Some((label, url, close + 2 + end + 1))
}

/// A link to an outside address; it is followed only when the reader clicks it.
fn anchor(url: &str, label_html: &str) -> String {
    format!(
        "<a href=\"{}\" rel=\"noopener noreferrer external\">{label_html}</a>",
        escape(url)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_blocks() {
        let doc = "## What it detects\n\nTwo tenants share `nvidia.com/gpu`.\nSecond line.\n\n\
                   - one\n- two\n\n```yaml\nkind: <Pod>\n```\n1. first\n";
        let html = to_html(doc, 4);
        assert_eq!(
            html,
            "<h5>What it detects</h5>\n<p>Two tenants share <code>nvidia.com/gpu</code>. Second line.</p>\n\
             <ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<pre><code>kind: &lt;Pod&gt;</code></pre>\n\
             <ol>\n<li>first</li>\n</ol>\n"
        );
    }

    #[test]
    fn escapes_everything_it_does_not_write() {
        let html = to_html(
            "<script>alert(1)</script> **<b>** [x](javascript:alert(1))",
            4,
        );
        assert!(!html.contains("<script>"));
        assert!(!html.contains("<b>"));
        assert!(!html.contains("href=\"javascript"));
        assert!(html.contains("&lt;script&gt;"));
    }

    #[test]
    fn links_outside_addresses() {
        let html = inline("See https://docs.nvidia.com/a?b=1&c=2. And [guide](https://x.test/g).");
        assert_eq!(
            html,
            "See <a href=\"https://docs.nvidia.com/a?b=1&amp;c=2\" rel=\"noopener noreferrer external\">\
             https://docs.nvidia.com/a?b=1&amp;c=2</a>. And <a href=\"https://x.test/g\" \
             rel=\"noopener noreferrer external\">guide</a>."
        );
    }
}
