//! Text for the page: HTML escaping, code spans, JSON safe inside a script element, counted phrases.

use super::*;
pub(super) use crate::text::plural;
pub use crate::text::{html_code_spans as code_spans, html_escape as escape};
use std::fmt::Write as _;

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
