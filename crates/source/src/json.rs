//! The JSON reader: serde_json finds each object's text (items of the split sequence as raw slices,
//! never as a value tree), the position comes from the slice's byte offset, and the object is
//! deserialized from its own text when the sink asks for it.

use crate::stream::{json_error, Entry, Object, ReadOptions};
use crate::tree::Pos;
use gpu_trust_model::{Diagnostic, Location};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// serde_json's fixed nesting bound.
pub(crate) const JSON_DEPTH_LIMIT: usize = 128;

/// Reads JSON text. Returns an error, having handed nothing on, when the first document is not
/// valid JSON (the caller may then read the text as YAML).
pub(crate) fn read<'a>(
    text: &'a str,
    file: &'a str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Entry<'a>),
) -> Result<(), Diagnostic> {
    let split = options.split_key.as_deref();
    let mut lines = Lines::new(text);
    let mut de = serde_json::Deserializer::from_str(text);
    let seed = DocSeed { split };
    let first = seed
        .deserialize(&mut de)
        .map_err(|e| located(&json_error(&e, Pos::new(1, 1)), file))?;
    if de.end().is_ok() {
        let raw = text.trim_matches(|c: char| c.is_ascii_whitespace());
        emit(raw, first, 1, text, file, options, &mut lines, sink);
        return Ok(());
    }
    // Several documents in a row: find each one's text, then read it.
    let stream = serde_json::Deserializer::from_str(text).into_iter::<&'a RawValue>();
    for (i, next) in stream.enumerate() {
        let document = i + 1;
        match next {
            Ok(raw) => {
                let raw = raw.get();
                let base = lines.pos(offset(text, raw));
                let seed = DocSeed { split };
                match seed.deserialize(&mut serde_json::Deserializer::from_str(raw)) {
                    Ok(doc) => emit(raw, doc, document, text, file, options, &mut lines, sink),
                    Err(e) => sink(Entry::Invalid {
                        document,
                        item: None,
                        diagnostic: located(&json_error(&e, base), file),
                    }),
                }
            }
            Err(e) => {
                sink(Entry::Invalid {
                    document,
                    item: None,
                    diagnostic: located(&json_error(&e, Pos::new(1, 1)), file),
                });
                break;
            }
        }
    }
    Ok(())
}

fn located(e: &crate::de::Error, file: &str) -> Diagnostic {
    Diagnostic::error(
        Location::new(file, e.pos.line, e.pos.column),
        e.message.clone(),
    )
}

#[allow(clippy::too_many_arguments)]
fn emit<'a>(
    raw: &'a str,
    doc: Doc<'a>,
    document: usize,
    text: &'a str,
    file: &'a str,
    options: &ReadOptions,
    lines: &mut Lines<'a>,
    sink: &mut dyn FnMut(Entry<'a>),
) {
    let base = lines.pos(offset(text, raw));
    match doc {
        Doc::Whole => {
            if let Some(d) = check(raw, base, file, options, lines, text) {
                sink(Entry::Invalid {
                    document,
                    item: None,
                    diagnostic: d,
                });
            } else {
                sink(Entry::Object(Object::json(file, document, None, raw, base)));
            }
        }
        Doc::Split { fields, items } => {
            let count = items.len();
            let mut positioned_fields = Vec::with_capacity(fields.len());
            // Positions in text order: the fields before the items, then the items, then the rest.
            let first_item = items.first().map(|r| offset(text, r.get()));
            let (before, after): (Vec<_>, Vec<_>) = fields
                .into_iter()
                .partition(|(_, r)| first_item.is_none_or(|f| offset(text, r.get()) < f));
            for (k, r) in before {
                let p = lines.pos(offset(text, r.get()));
                positioned_fields.push((k, r.get(), p));
            }
            for (index, item) in items.into_iter().enumerate() {
                let item = item.get();
                let pos = lines.pos(offset(text, item));
                match check(item, pos, file, options, lines, text) {
                    Some(d) => sink(Entry::Invalid {
                        document,
                        item: Some(index),
                        diagnostic: d,
                    }),
                    None => sink(Entry::Object(Object::json(
                        file,
                        document,
                        Some(index),
                        item,
                        pos,
                    ))),
                }
            }
            for (k, r) in after {
                let p = lines.pos(offset(text, r.get()));
                positioned_fields.push((k, r.get(), p));
            }
            sink(Entry::Container {
                object: Object::json_fields(file, document, base, positioned_fields),
                items: count,
            });
        }
    }
}

/// The bounds on one object's text: its size, nesting depth and longest string.
fn check(
    raw: &str,
    base: Pos,
    file: &str,
    options: &ReadOptions,
    lines: &mut Lines<'_>,
    text: &str,
) -> Option<Diagnostic> {
    let limits = &options.limits;
    if raw.len() > limits.max_object_bytes {
        return Some(Diagnostic::error(
            Location::new(file, base.line, base.column),
            format!(
                "object is over the size limit of {} bytes (max_object_bytes)",
                limits.max_object_bytes
            ),
        ));
    }
    let (at, message) = scan(raw.as_bytes(), limits.max_scalar_bytes)?;
    let p = lines.pos(offset(text, raw) + at);
    Some(Diagnostic::error(
        Location::new(file, p.line, p.column),
        message,
    ))
}

/// Finds the first string in JSON text longer than `max_string` bytes, jumping from quote to quote.
/// (Nesting is bounded by the JSON parser itself, at [`JSON_DEPTH_LIMIT`].)
fn scan(bytes: &[u8], max_string: usize) -> Option<(usize, String)> {
    let mut i = 0usize;
    while let Some(open) = memchr::memchr(b'"', &bytes[i..]).map(|p| p + i) {
        // Find the closing quote: the next one not escaped by an odd run of backslashes.
        let mut j = open + 1;
        let close = loop {
            let q = memchr::memchr2(b'"', b'\\', &bytes[j..]).map(|p| p + j)?;
            if bytes[q] == b'\\' {
                j = q + 2;
                if j > bytes.len() {
                    return None;
                }
                continue;
            }
            break q;
        };
        let len = close - open - 1;
        if len > max_string {
            return Some((
                open,
                format!("string of {len} bytes is over the scalar limit of {max_string} bytes (max_scalar_bytes)"),
            ));
        }
        i = close + 1;
    }
    None
}

fn offset(text: &str, slice: &str) -> usize {
    (slice.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// Byte offsets to line and column, moving a cursor (cheap for offsets in increasing order: the
/// column is carried along, so a minified file of one long line costs no more than an indented one).
struct Lines<'a> {
    text: &'a str,
    offset: usize,
    line: u32,
    line_start: usize,
    /// Characters from `line_start` to `offset`.
    column: usize,
}

/// Characters in UTF-8 bytes that start and end on character boundaries.
fn chars_in(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b & 0xC0) != 0x80).count()
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            text,
            offset: 0,
            line: 1,
            line_start: 0,
            column: 0,
        }
    }

    fn pos(&mut self, offset: usize) -> Pos {
        let bytes = self.text.as_bytes();
        let offset = offset.min(bytes.len());
        if offset >= self.offset {
            let seg = &bytes[self.offset..offset];
            let n = memchr::memchr_iter(b'\n', seg).count();
            match memchr::memrchr(b'\n', seg) {
                Some(last) => {
                    self.line = self
                        .line
                        .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                    self.line_start = self.offset + last + 1;
                    self.column = chars_in(&bytes[self.line_start..offset]);
                }
                None => self.column += chars_in(seg),
            }
        } else {
            let seg = &bytes[offset..self.offset];
            let n = memchr::memchr_iter(b'\n', seg).count();
            self.line = self
                .line
                .saturating_sub(u32::try_from(n).unwrap_or(u32::MAX))
                .max(1);
            self.line_start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
            self.column = chars_in(&bytes[self.line_start..offset]);
        }
        self.offset = offset;
        Pos::new(
            self.line,
            u32::try_from(self.column + 1).unwrap_or(u32::MAX),
        )
    }
}

/// What a JSON document is to the reader.
enum Doc<'a> {
    /// Not a mapping with a sequence under the split key: handed on whole.
    Whole,
    Split {
        fields: Vec<(String, &'a RawValue)>,
        items: Vec<&'a RawValue>,
    },
}

struct DocSeed<'s> {
    split: Option<&'s str>,
}

impl<'de> DeserializeSeed<'de> for DocSeed<'_> {
    type Value = Doc<'de>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Doc<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocSeed<'_> {
    type Value = Doc<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc<'de>, A::Error> {
        let Some(split) = self.split else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Doc::Whole);
        };
        let mut fields = Vec::new();
        let mut items: Option<Vec<&'de RawValue>> = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == split && items.is_none() {
                match map.next_value::<Items<'de>>()? {
                    Items(Some(list)) => items = Some(list),
                    Items(None) => {
                        // Not a sequence: the document is read whole.
                        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                        return Ok(Doc::Whole);
                    }
                }
            } else {
                fields.push((key, map.next_value::<&'de RawValue>()?));
            }
        }
        Ok(match items {
            Some(items) => Doc::Split { fields, items },
            None => Doc::Whole,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Doc::Whole)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Doc<'de>, E> {
        Ok(Doc::Whole)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Doc<'de>, E> {
        Ok(Doc::Whole)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Doc<'de>, E> {
        Ok(Doc::Whole)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Doc<'de>, E> {
        Ok(Doc::Whole)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Doc<'de>, E> {
        Ok(Doc::Whole)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Doc<'de>, E> {
        Ok(Doc::Whole)
    }
}

/// The split key's value: its items' raw texts when it is a sequence.
struct Items<'a>(Option<Vec<&'a RawValue>>);

impl<'de> de::Deserialize<'de> for Items<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Items<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<'de>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element::<&'de RawValue>()? {
                    items.push(item);
                }
                Ok(Items(Some(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items<'de>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Items(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Items<'de>, E> {
                Ok(Items(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Items<'de>, E> {
                Ok(Items(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Items<'de>, E> {
                Ok(Items(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Items<'de>, E> {
                Ok(Items(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Items<'de>, E> {
                Ok(Items(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Items<'de>, E> {
                Ok(Items(None))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_move_both_ways() {
        let text = "ab\ncd\n\nxyz";
        let mut l = Lines::new(text);
        assert_eq!(l.pos(8), Pos::new(4, 2));
        assert_eq!(l.pos(3), Pos::new(2, 1));
        assert_eq!(l.pos(0), Pos::new(1, 1));
        assert_eq!(l.pos(4), Pos::new(2, 2));
    }

    #[test]
    fn columns_are_carried_along_one_long_line() {
        // A minified List: every item on line 1, its column in characters (ü is two bytes).
        let text = "[{\"a\":\"ü\"},{\"b\":1},\n{\"c\":2}]";
        let mut l = Lines::new(text);
        assert_eq!(l.pos(1), Pos::new(1, 2));
        assert_eq!(l.pos(text.find("{\"b").unwrap()), Pos::new(1, 12));
        assert_eq!(l.pos(text.find("{\"c").unwrap()), Pos::new(2, 1));
        assert_eq!(l.pos(text.find("{\"b").unwrap()), Pos::new(1, 12));
        // Many items on one line cost one pass, not one pass each (a quadratic cursor would take
        // minutes here).
        let items: Vec<String> = (0..200_000).map(|i| format!("{{\"i\":{i}}}")).collect();
        let line = format!("[{}]", items.join(","));
        let mut l = Lines::new(&line);
        let mut at = 1;
        for (k, item) in items.iter().enumerate() {
            assert_eq!(l.pos(at).column as usize, at + 1, "item {k}");
            at += item.len() + 1;
        }
    }

    #[test]
    fn scan_finds_long_strings() {
        assert!(scan(br#"{"a": [[1]]}"#, 10).is_none());
        assert_eq!(scan(br#"{"a": "0123456789ab"}"#, 10).map(|x| x.0), Some(6));
        assert!(scan(br#"{"a": "\"[[[[[["}"#, 100).is_none());
        assert_eq!(
            scan(br#"{"a": "x\"yyyyyyyyyyyyyyyyyy"}"#, 10).map(|x| x.0),
            Some(6)
        );
        assert!(scan(br#"{"unterminated"#, 3).is_none());
    }
}
