//! Text from the input on a terminal: names of namespaces, pods, tenants and files come from files
//! that anyone may have written, and a terminal obeys the control characters in them (colour, cursor
//! moves, window titles through OSC, the bell) and starts a new line at every line feed, so that an
//! object's name could forge lines of the report. Every string taken from the input and printed for a
//! person goes through [`escape`] first; machine formats (JSON, SARIF, HTML) escape for their own
//! syntax instead and keep the text exact.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character written out visibly: C0 controls (line feed and tab
/// included), DEL and C1 controls as `\x1b`-style escapes, and the Unicode bidirectional
/// overrides and isolates (which reorder what a terminal shows) as `\u{202e}`. A backslash is
/// kept as it is. Borrowed when nothing needed escaping.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            // Writing into a String cannot fail.
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// Bidirectional embeddings, overrides and isolates (Unicode TR9), and the marks that can hide text.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            escape("cust-acme/infer-0"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(escape("tenant ünïcode 租户"), "tenant ünïcode 租户");
    }

    #[test]
    fn controls_are_visible() {
        assert_eq!(escape("a\x1b[31mred"), "a\\x1b[31mred");
        assert_eq!(escape("x\ny"), "x\\x0ay");
        assert_eq!(escape("\x07\t\r\x7f"), "\\x07\\x09\\x0d\\x7f");
        assert_eq!(escape("\u{9b}31m"), "\\x9b31m");
        assert_eq!(escape("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
        assert_eq!(escape("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape("back\\slash"), "back\\slash");
    }
}
