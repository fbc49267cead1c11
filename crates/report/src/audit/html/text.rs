//! Text for the page: HTML escaping, code spans, JSON safe inside a script element, counted phrases.

use super::*;
use crate::text::Span;
use std::fmt::Write as _;

/// HTML-escapes text for element content and quoted attribute values. Control characters other
/// than tab and line breaks (which HTML shows as spaces), and the Unicode bidirectional controls that
/// reorder what a browser shows, are written out visibly as the terminal formats write them
/// (`\x1b`, `\u{202e}`), so a name cannot hide or reverse text on the page.
pub fn escape(text: &str) -> String {
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
pub fn code_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (span, piece) in crate::text::backtick_spans(text) {
        match span {
            Span::Unpaired => {
                out.push('`');
                out.push_str(&escape(piece));
            }
            Span::Code => {
                out.push_str("<code>");
                out.push_str(&escape(piece));
                out.push_str("</code>");
            }
            Span::Prose => out.push_str(&escape(piece)),
        }
    }
    out
}

/// JSON made safe to sit inside a `<script>` element: `<`, `>` and `&` (and the two line separators
/// JavaScript once treated as line ends) as `\u` escapes, which JSON reads back unchanged; so are C1
/// controls and the bidirectional controls, which would reorder the page's source as shown.
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{80}'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{061c}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            _ => out.push(c),
        }
    }
    out
}

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `3 more tenants`, `1 more tenant`.
pub(super) fn more(n: usize, one: &str, many: &str) -> String {
    format!("{n} more {}", if n == 1 { one } else { many })
}

/// The first [`MAX_NAMES`] names, joined, and how many more there are.
pub(super) fn names_text(names: &[String], one: &str, many: &str) -> String {
    let mut s = names
        .iter()
        .take(MAX_NAMES)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > MAX_NAMES {
        let _ = write!(s, " and {}", more(names.len() - MAX_NAMES, one, many));
    }
    s
}

pub(super) fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else if max <= 1 {
        "…".to_string()
    } else {
        let mut s: String = text.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}
