//! A located value tree: every mapping, sequence, scalar and key keeps the line and column it was
//! read at. Scalars borrow from the input text where they can.
//!
//! The tree is what the YAML reader builds for one object at a time (a document, or one item of a
//! document's split sequence), and what [`crate::de`] deserializes typed values from, so that an
//! error inside an object names the exact line and column of the offending value.

use std::borrow::Cow;

/// A line and column in the input, both 1-based (`0` means unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl Pos {
    pub fn new(line: u32, column: u32) -> Pos {
        Pos { line, column }
    }
}

/// How a scalar was written. Only plain scalars are resolved to null, booleans and numbers;
/// quoted and block scalars are always strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// A core-schema tag written on a node (`!!str`, `!!int`...). Other tags do not change how the
/// node reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tag {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Map,
    Seq,
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar<'a> {
    pub text: Cow<'a, str>,
    pub style: ScalarStyle,
    pub tag: Option<Tag>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Scalar(Scalar<'a>),
    Seq(Vec<Node<'a>>),
    /// Entries in input order; keys are unique (duplicates are an input error).
    Map(Vec<(Node<'a>, Node<'a>)>),
}

/// One value of the input with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Node<'a> {
    pub pos: Pos,
    pub value: Value<'a>,
}

/// What a scalar means once resolved (YAML 1.1 booleans and legacy octal included, as Kubernetes'
/// YAML reader resolves untyped values).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resolved<'s> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'s str),
}

impl<'a> Node<'a> {
    pub fn scalar(pos: Pos, text: impl Into<Cow<'a, str>>, style: ScalarStyle) -> Node<'a> {
        Node {
            pos,
            value: Value::Scalar(Scalar {
                text: text.into(),
                style,
                tag: None,
            }),
        }
    }

    /// The value of `key` when this is a mapping with a scalar key of that text.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.as_scalar_text() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text of a scalar (any style), `None` for collections.
    pub fn as_scalar_text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) => Some(&s.text),
            _ => None,
        }
    }

    /// The text of a scalar that is not null.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) if !matches!(s.resolve(), Resolved::Null) => Some(&s.text),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar(s) if matches!(s.resolve(), Resolved::Null))
    }

    pub fn as_map(&self) -> Option<&[(Node<'a>, Node<'a>)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node<'a>]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// Number of nodes in this subtree (keys included).
    pub fn size(&self) -> usize {
        match &self.value {
            Value::Scalar(_) => 1,
            Value::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            Value::Map(entries) => {
                1 + entries
                    .iter()
                    .map(|(k, v)| k.size() + v.size())
                    .sum::<usize>()
            }
        }
    }

    /// A short name of the node's kind for messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.value {
            Value::Scalar(s) => match s.resolve() {
                Resolved::Null => "null",
                Resolved::Bool(_) => "boolean",
                Resolved::Int(_) | Resolved::UInt(_) => "integer",
                Resolved::Float(_) => "float",
                Resolved::Str(_) => "string",
            },
            Value::Seq(_) => "sequence",
            Value::Map(_) => "mapping",
        }
    }

    /// An owned copy that no longer borrows the input.
    pub fn into_owned(self) -> Node<'static> {
        Node {
            pos: self.pos,
            value: match self.value {
                Value::Scalar(s) => Value::Scalar(Scalar {
                    text: Cow::Owned(s.text.into_owned()),
                    style: s.style,
                    tag: s.tag,
                }),
                Value::Seq(items) => Value::Seq(items.into_iter().map(Node::into_owned).collect()),
                Value::Map(entries) => Value::Map(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.into_owned(), v.into_owned()))
                        .collect(),
                ),
            },
        }
    }
}

impl Scalar<'_> {
    /// Resolves the scalar the way an untyped Kubernetes field reads it: tags first, then (for
    /// plain scalars only) null, booleans (YAML 1.1 words included), integers (decimal, `0x`, `0o`,
    /// `0b`, and legacy `0644` octal) and floats; everything else is a string.
    pub fn resolve(&self) -> Resolved<'_> {
        match &self.tag {
            Some(Tag::Str) => return Resolved::Str(&self.text),
            Some(Tag::Null) => return Resolved::Null,
            Some(Tag::Bool) => {
                return resolve_bool(&self.text).map_or(Resolved::Str(&self.text), Resolved::Bool)
            }
            Some(Tag::Int) => return resolve_int(&self.text).unwrap_or(Resolved::Str(&self.text)),
            Some(Tag::Float) => {
                return resolve_float(&self.text)
                    .or_else(|| resolve_int(&self.text))
                    .unwrap_or(Resolved::Str(&self.text))
            }
            _ => {}
        }
        if self.style != ScalarStyle::Plain {
            return Resolved::Str(&self.text);
        }
        resolve_plain(&self.text)
    }
}

/// Resolves a plain scalar's text.
pub fn resolve_plain(text: &str) -> Resolved<'_> {
    if is_null(text) {
        return Resolved::Null;
    }
    if let Some(b) = resolve_bool(text) {
        return Resolved::Bool(b);
    }
    if let Some(i) = resolve_int(text) {
        return i;
    }
    if let Some(f) = resolve_float(text) {
        return f;
    }
    Resolved::Str(text)
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// YAML 1.1 booleans, which the Go YAML library Kubernetes reads manifests with still accepts
/// (`privileged: yes` is `true` to the API server).
pub fn resolve_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" | "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => {
            Some(true)
        }
        "false" | "False" | "FALSE" | "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => {
            Some(false)
        }
        _ => None,
    }
}

/// Integers: decimal, `0x` hex, `0o` octal, `0b` binary, and `0`-prefixed legacy octal
/// (`defaultMode: 0644` is 420, as kubectl reads it). Underscores are not accepted.
pub fn resolve_int(text: &str) -> Option<Resolved<'static>> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(o) = digits.strip_prefix("0o") {
        (8, o)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(body, radix).ok()?;
    if negative {
        if magnitude == 0 {
            return Some(Resolved::Int(0));
        }
        let m = i64::try_from(magnitude - 1).ok()?;
        Some(Resolved::Int(-m - 1))
    } else if let Ok(i) = i64::try_from(magnitude) {
        Some(Resolved::Int(i))
    } else {
        Some(Resolved::UInt(magnitude))
    }
}

/// Floats: `1.5`, `-2e3`, `.5`, `.inf`, `-.Inf`, `.nan`.
pub fn resolve_float(text: &str) -> Option<Resolved<'static>> {
    let unsigned = text.trim_start_matches(['-', '+']);
    if text.len() - unsigned.len() > 1 {
        return None;
    }
    let negative = text.starts_with('-');
    match unsigned {
        ".inf" | ".Inf" | ".INF" => {
            return Some(Resolved::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }))
        }
        ".nan" | ".NaN" | ".NAN" if text.len() == unsigned.len() => {
            return Some(Resolved::Float(f64::NAN))
        }
        _ => {}
    }
    // Digits, at most one '.', an optional exponent; at least one digit before the exponent.
    let bytes = unsigned.as_bytes();
    let mut i = 0;
    let mut mantissa_digits = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
        mantissa_digits += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    if i != bytes.len() {
        return None;
    }
    text.parse::<f64>().ok().map(Resolved::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_resolve_like_kubernetes_reads_them() {
        assert_eq!(resolve_plain("~"), Resolved::Null);
        assert_eq!(resolve_plain("yes"), Resolved::Bool(true));
        assert_eq!(resolve_plain("Off"), Resolved::Bool(false));
        assert_eq!(resolve_plain("0644"), Resolved::Int(420));
        assert_eq!(resolve_plain("0x1F"), Resolved::Int(31));
        assert_eq!(
            resolve_plain("-9223372036854775808"),
            Resolved::Int(i64::MIN)
        );
        assert_eq!(
            resolve_plain("18446744073709551615"),
            Resolved::UInt(u64::MAX)
        );
        assert_eq!(resolve_plain("1.5"), Resolved::Float(1.5));
        assert_eq!(resolve_plain("-.inf"), Resolved::Float(f64::NEG_INFINITY));
        assert_eq!(resolve_plain("1e3"), Resolved::Float(1000.0));
        assert_eq!(resolve_plain("08"), Resolved::Float(8.0));
        assert_eq!(resolve_plain("1.2.3"), Resolved::Str("1.2.3"));
        assert_eq!(resolve_plain("--1"), Resolved::Str("--1"));
        assert_eq!(resolve_plain("e3"), Resolved::Str("e3"));
        assert_eq!(resolve_plain("550.127.05"), Resolved::Str("550.127.05"));
    }

    #[test]
    fn quoted_scalars_stay_strings() {
        let s = Scalar {
            text: "true".into(),
            style: ScalarStyle::DoubleQuoted,
            tag: None,
        };
        assert_eq!(s.resolve(), Resolved::Str("true"));
        let t = Scalar {
            text: "5".into(),
            style: ScalarStyle::Plain,
            tag: Some(Tag::Str),
        };
        assert_eq!(t.resolve(), Resolved::Str("5"));
    }
}
