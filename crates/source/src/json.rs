//! The JSON reader: serde_json finds each object's text (items of the split sequence as raw slices,
//! never as a value tree), the position comes from the slice's byte offset, and the object is
//! deserialized from its own text when the sink asks for it.

use crate::file::utf8_chars;
use crate::object::{json_error, Entry, Object, ReadOptions};
use crate::tree::Pos;
use crate::Limits;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;

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
        .map_err(|e| located(&json_error(&e, Pos::new(1, 1)), file, json_code(&e)))?;
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
                        diagnostic: located(&json_error(&e, base), file, json_code(&e)),
                    }),
                }
            }
            Err(e) => {
                sink(Entry::Invalid {
                    document,
                    item: None,
                    diagnostic: located(&json_error(&e, Pos::new(1, 1)), file, json_code(&e)),
                });
                break;
            }
        }
    }
    Ok(())
}

/// A JSON error at `e`'s place: the parser's own nesting bound is a limit, anything else invalid JSON.
fn located(e: &crate::de::Error, file: &str, code: Code) -> Diagnostic {
    Diagnostic::error(
        code,
        Location::new(file, e.pos.line, e.pos.column),
        e.message.clone(),
    )
}

/// The code of a serde_json error: its recursion bound is a limit of the reader.
fn json_code(e: &serde_json::Error) -> Code {
    if e.to_string().starts_with("recursion limit exceeded") {
        Code::OverLimit
    } else {
        Code::InvalidJson
    }
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
                sink(Entry::Object(Object::json(
                    file,
                    document,
                    None,
                    Cow::Borrowed(raw),
                    base,
                )));
            }
        }
        Doc::Split {
            fields,
            items,
            duplicate,
        } => {
            // A duplicate root key, or a problem in a root field's value, makes the document
            // invalid before any of its items is handed on.
            let mut problem = duplicate.map(|(key, value)| {
                // The whole document's scan finds the first problem in text order, with both
                // places of the duplicate (linear, and only on this error path).
                let start = offset(text, raw);
                match scan(raw, usize::MAX, usize::MAX) {
                    Some(Problem::DuplicateKey { at, first, key }) => {
                        let first = lines.pos(start + first).line;
                        let p = lines.pos(start + at);
                        duplicate_key(file, p, &key, Some(first))
                    }
                    _ => {
                        let p = lines.pos(key_start(text, offset(text, value.get())));
                        duplicate_key(file, p, &key, None)
                    }
                }
            });
            if problem.is_none() {
                problem = fields
                    .iter()
                    .find_map(|(_, r)| check(r.get(), base, file, options, lines, text));
            }
            if let Some(d) = problem {
                sink(Entry::Invalid {
                    document,
                    item: None,
                    diagnostic: d,
                });
                return;
            }
            let count = items.len();
            let mut positioned_fields = Vec::with_capacity(fields.len());
            // Positions in text order: the fields before the items, then the items, then the rest.
            let first_item = items.first().map(|r| offset(text, r.get()));
            let (before, after): (Vec<_>, Vec<_>) = fields
                .into_iter()
                .partition(|(_, r)| first_item.is_none_or(|f| offset(text, r.get()) < f));
            for (k, r) in before {
                let p = lines.pos(offset(text, r.get()));
                positioned_fields.push((k, Cow::Borrowed(r.get()), p));
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
                        Cow::Borrowed(item),
                        pos,
                    ))),
                }
            }
            for (k, r) in after {
                let p = lines.pos(offset(text, r.get()));
                positioned_fields.push((k, Cow::Borrowed(r.get()), p));
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
    let start = offset(text, raw);
    check_at(raw, base, file, &options.limits, &mut |at| {
        lines.pos(start + at)
    })
}

/// [`check`] for text that starts at `base`; `pos_of` gives the position of a byte of `raw`.
pub(crate) fn check_at(
    raw: &str,
    base: Pos,
    file: &str,
    limits: &Limits,
    pos_of: &mut dyn FnMut(usize) -> Pos,
) -> Option<Diagnostic> {
    if raw.len() > limits.max_object_bytes {
        return Some(over_size(base, file, limits));
    }
    // The depth bound of YAML holds for JSON too, in every field of an object.
    let problem = scan(raw, limits.max_scalar_bytes, limits.max_depth)?;
    Some(diagnose(problem, file, limits, pos_of))
}

/// What [`check_piece`] makes of a value's text.
pub(crate) enum Checked {
    /// Within the bounds: hand it on.
    Fine,
    /// Over a bound of its own, reported as [`check_at`] reports it.
    Invalid(Diagnostic),
    /// Nested deeper than `max_depth`.
    TooDeep,
}

/// [`check_at`] for valid JSON text that is also refused when nested deeper than `max_depth`
/// (whatever else is wrong with it), in one pass over the text when nothing is.
pub(crate) fn check_piece(
    raw: &str,
    base: Pos,
    file: &str,
    limits: &Limits,
    max_depth: usize,
    pos_of: &mut dyn FnMut(usize) -> Pos,
) -> Checked {
    if raw.len() > limits.max_object_bytes {
        return if deeper_than(raw, max_depth) {
            Checked::TooDeep
        } else {
            Checked::Invalid(over_size(base, file, limits))
        };
    }
    match scan(raw, limits.max_scalar_bytes, max_depth) {
        None => Checked::Fine,
        Some(Problem::TooDeep) => Checked::TooDeep,
        // The scan stopped at the first problem: the depth of the rest is checked apart.
        Some(_) if deeper_than(raw, max_depth) => Checked::TooDeep,
        Some(problem) => Checked::Invalid(diagnose(problem, file, limits, pos_of)),
    }
}

fn over_size(base: Pos, file: &str, limits: &Limits) -> Diagnostic {
    Diagnostic::error(
        Code::OverLimit,
        Location::new(file, base.line, base.column),
        format!(
            "object is over the size limit of {} bytes (max_object_bytes)",
            limits.max_object_bytes
        ),
    )
}

fn diagnose(
    problem: Problem<'_>,
    file: &str,
    limits: &Limits,
    pos_of: &mut dyn FnMut(usize) -> Pos,
) -> Diagnostic {
    match problem {
        Problem::LongString { at, len } => {
            let p = pos_of(at);
            Diagnostic::error(
                Code::OverLimit,
                Location::new(file, p.line, p.column),
                format!(
                    "string of {len} bytes is over the scalar limit of {} bytes (max_scalar_bytes)",
                    limits.max_scalar_bytes
                ),
            )
        }
        Problem::DuplicateKey { at, first, key } => {
            let first = pos_of(first).line;
            let p = pos_of(at);
            duplicate_key(file, p, &key, Some(first))
        }
        Problem::TooDeep => {
            let p = pos_of(0);
            Diagnostic::error(
                Code::OverLimit,
                Location::new(file, p.line, p.column),
                format!(
                    "object nests mappings and sequences deeper than the depth limit of {} levels (max_depth)",
                    limits.max_depth
                ),
            )
        }
    }
}

/// Whether JSON text nests objects and arrays deeper than `max`.
fn deeper_than(text: &str, max: usize) -> bool {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => match closing_quote(bytes, i + 1) {
                Some(close) => i = close,
                None => return false,
            },
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// The error for a key given twice in one object, worded as the YAML reader words it.
fn duplicate_key(file: &str, at: Pos, key: &str, first_line: Option<u32>) -> Diagnostic {
    Diagnostic::error(
        Code::DuplicateKey,
        Location::new(file, at.line, at.column),
        match first_line {
            Some(line) => format!(
                "duplicate key `{key}` (first at line {line}): which value would the cluster use?"
            ),
            None => format!("duplicate key `{key}`: which value would the cluster use?"),
        },
    )
}

/// What [`scan`] finds wrong in an object's text.
#[derive(Debug, PartialEq, Eq)]
enum Problem<'a> {
    /// A string (key or value) longer than the scalar bound, starting at byte `at`.
    LongString { at: usize, len: usize },
    /// A key given twice in one object: the second at byte `at`, the first at byte `first`.
    DuplicateKey {
        at: usize,
        first: usize,
        key: Cow<'a, str>,
    },
    /// Objects and arrays nested deeper than asked.
    TooDeep,
}

/// An open object or array while scanning.
struct Frame<'a> {
    object: bool,
    /// The next string of an object is a key.
    expect_key: bool,
    /// Where this object's keys start in the scanner's shared key list.
    start: usize,
    /// An object's keys once it has many: looked up by hash instead of one by one.
    set: Option<HashMap<Cow<'a, str>, usize>>,
}

/// Keys of one object compared one by one up to this many, by hash beyond.
const LINEAR_KEYS: usize = 32;

/// Scans valid JSON text once, in linear time, for the first string longer than `max_string` bytes,
/// the first key given twice in one object (keys compared after unescaping, so `"k\u0069nd"` is
/// `kind`) and the first object or array nested deeper than `max_depth`. Nesting is bounded by the
/// JSON parser itself, at [`crate::object::JSON_DEPTH_LIMIT`].
fn scan(text: &str, max_string: usize, max_depth: usize) -> Option<Problem<'_>> {
    let bytes = text.as_bytes();
    let mut keys: Vec<(Cow<'_, str>, usize)> = Vec::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut i = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let close = closing_quote(bytes, i + 1)?;
                let len = close - i - 1;
                if len > max_string {
                    return Some(Problem::LongString { at: i, len });
                }
                if let Some(frame) = stack.last_mut().filter(|f| f.object && f.expect_key) {
                    frame.expect_key = false;
                    let raw = &text[i + 1..close];
                    let key = if raw.contains('\\') {
                        serde_json::from_str::<String>(&text[i..=close])
                            .map_or(Cow::Borrowed(raw), Cow::Owned)
                    } else {
                        Cow::Borrowed(raw)
                    };
                    let first = match &mut frame.set {
                        Some(set) => match set.get(&key) {
                            Some(first) => Some(*first),
                            None => {
                                set.insert(key.clone(), i);
                                None
                            }
                        },
                        None => {
                            let first = keys[frame.start..]
                                .iter()
                                .find(|(k, _)| *k == key)
                                .map(|(_, at)| *at);
                            if first.is_none() {
                                keys.push((key.clone(), i));
                                if keys.len() - frame.start > LINEAR_KEYS {
                                    frame.set = Some(keys.drain(frame.start..).collect());
                                }
                            }
                            first
                        }
                    };
                    if let Some(first) = first {
                        return Some(Problem::DuplicateKey { at: i, first, key });
                    }
                }
                i = close + 1;
            }
            b'{' | b'[' => {
                if stack.len() >= max_depth {
                    return Some(Problem::TooDeep);
                }
                stack.push(Frame {
                    object: bytes[i] == b'{',
                    expect_key: true,
                    start: keys.len(),
                    set: None,
                });
                i += 1;
            }
            b'}' | b']' => {
                if let Some(frame) = stack.pop() {
                    keys.truncate(frame.start);
                }
                i += 1;
            }
            b',' => {
                if let Some(frame) = stack.last_mut() {
                    frame.expect_key = frame.object;
                }
                i += 1;
            }
            // Whitespace, `:`, numbers and literals: up to the next byte that matters.
            _ => {
                i += 1;
                while i < bytes.len() && !STRUCTURAL[usize::from(bytes[i])] {
                    i += 1;
                }
            }
        }
    }
    None
}

/// The bytes [`scan`] acts on: a string's quote, brackets and braces, commas.
static STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'[' as usize] = true;
    t[b'}' as usize] = true;
    t[b']' as usize] = true;
    t[b',' as usize] = true;
    t
};

/// The closing quote of a string whose text starts at `from`: the next quote not escaped by an
/// odd run of backslashes.
fn closing_quote(bytes: &[u8], from: usize) -> Option<usize> {
    // Most strings of a manifest (keys, names) are short: their first bytes are looked at one by
    // one before searching the rest.
    let mut j = from;
    let short = from.saturating_add(16).min(bytes.len());
    while j < short {
        match bytes[j] {
            b'"' => return Some(j),
            b'\\' => break,
            _ => j += 1,
        }
    }
    loop {
        let q = memchr::memchr2(b'"', b'\\', bytes.get(j..)?)? + j;
        if bytes[q] == b'\\' {
            j = q + 2;
            continue;
        }
        return Some(q);
    }
}

/// The byte offset of the key whose value starts at `value` (in JSON text, the key's opening quote
/// before the `:`).
fn key_start(text: &str, value: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = value.min(bytes.len());
    // Back over whitespace, the colon and whitespace to the key's closing quote.
    while i > 0 && bytes[i - 1] != b'"' {
        i -= 1;
    }
    if i == 0 {
        return value;
    }
    // Back to the opening quote: the first quote before the closing one that no odd run of
    // backslashes escapes.
    let mut j = i - 1;
    while let Some(q) = memchr::memrchr(b'"', &bytes[..j]) {
        let slashes = bytes[..q].iter().rev().take_while(|b| **b == b'\\').count();
        if slashes % 2 == 0 {
            return q;
        }
        j = q;
    }
    value
}

fn offset(text: &str, slice: &str) -> usize {
    (slice.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// Byte offsets to line and column, moving a cursor: the cost of a move is the distance moved, so
/// positions in increasing order cost one pass over the text however long its lines (a minified
/// document is one line).
struct Lines<'a> {
    text: &'a str,
    offset: usize,
    line: u32,
    line_start: usize,
    /// Characters from `line_start` to `offset`.
    column: usize,
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
            match memchr::memrchr(b'\n', seg) {
                Some(last) => {
                    let n = memchr::memchr_iter(b'\n', seg).count();
                    self.line = self
                        .line
                        .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                    self.line_start = self.offset + last + 1;
                    self.column = utf8_chars(&bytes[self.line_start..offset]);
                }
                None => self.column += utf8_chars(seg),
            }
        } else {
            let seg = &bytes[offset..self.offset];
            let n = memchr::memchr_iter(b'\n', seg).count();
            if n == 0 {
                self.column = self.column.saturating_sub(utf8_chars(seg));
            } else {
                self.line = self
                    .line
                    .saturating_sub(u32::try_from(n).unwrap_or(u32::MAX))
                    .max(1);
                self.line_start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
                self.column = utf8_chars(&bytes[self.line_start..offset]);
            }
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
        /// A root key given twice (the first duplicate), and its second value.
        duplicate: Option<(String, &'a RawValue)>,
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
        let mut fields: Vec<(String, &'de RawValue)> = Vec::new();
        let mut items: Option<Vec<&'de RawValue>> = None;
        let mut seen = HashSet::new();
        let mut duplicate = None;
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                let value = map.next_value::<&'de RawValue>()?;
                if duplicate.is_none() {
                    duplicate = Some((key, value));
                }
                continue;
            }
            if key == split {
                match map.next_value::<Items<'de>>()? {
                    Items(Some(list)) => items = Some(list),
                    Items(None) => {
                        // Not a sequence: the document is read whole (and checked whole, which
                        // finds any duplicate key with its position).
                        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                        return Ok(Doc::Whole);
                    }
                }
            } else {
                fields.push((key, map.next_value::<&'de RawValue>()?));
            }
        }
        Ok(match items {
            Some(items) => Doc::Split {
                fields,
                items,
                duplicate,
            },
            // Checked whole, which finds a duplicate with its position.
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

    fn long(text: &str, max: usize) -> Option<usize> {
        match scan(text, max, usize::MAX) {
            Some(Problem::LongString { at, .. }) => Some(at),
            _ => None,
        }
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
        assert!(scan(r#"{"a": [[1]]}"#, 10, usize::MAX).is_none());
        assert_eq!(long(r#"{"a": "0123456789ab"}"#, 10), Some(6));
        assert!(scan(r#"{"a": "\"[[[[[["}"#, 100, usize::MAX).is_none());
        assert_eq!(long(r#"{"a": "x\"yyyyyyyyyyyyyyyyyy"}"#, 10), Some(6));
        assert!(scan(r#"{"unterminated"#, 3, usize::MAX).is_none());
    }

    #[test]
    fn scan_finds_duplicate_keys_after_unescaping() {
        let text =
            r#"{"kind": "Service", "spec": {"kind": 1, "a": {"kind": 2}}, "k\u0069nd": "Pod"}"#;
        assert_eq!(
            scan(text, 100, usize::MAX),
            Some(Problem::DuplicateKey {
                at: 59,
                first: 1,
                key: Cow::Borrowed("kind")
            })
        );
        // The same key in sibling and nested objects is no duplicate.
        assert!(scan(
            r#"[{"a": 1}, {"a": 2, "b": {"a": 3}}, {"a": {"a": {}}}]"#,
            100,
            usize::MAX
        )
        .is_none());
        // Objects with many keys are checked by hash.
        let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}, \"k7\": 0}}", many.join(", "));
        assert!(matches!(
            scan(&text, 100, usize::MAX),
            Some(Problem::DuplicateKey { key, .. }) if key == "k7"
        ));
        assert!(scan(&format!("{{{}}}", many.join(", ")), 100, usize::MAX).is_none());
    }

    #[test]
    fn closing_quotes_are_found_past_escapes_near_and_far() {
        // The first unescaped quote, found byte by byte: what `closing_quote` must agree with.
        fn naive(bytes: &[u8], from: usize) -> Option<usize> {
            let mut j = from;
            while j < bytes.len() {
                match bytes[j] {
                    b'"' => return Some(j),
                    b'\\' => j += 2,
                    _ => j += 1,
                }
            }
            None
        }
        for at in 0..40 {
            for escape in ["\\\"", "\\\\", "\\u00e9", "\\n"] {
                let text = format!(
                    "\"{}{escape}{}\" tail\"",
                    "a".repeat(at),
                    "b".repeat(at % 7)
                );
                let bytes = text.as_bytes();
                assert_eq!(closing_quote(bytes, 1), naive(bytes, 1), "{text}");
            }
            // Unterminated, and ending in a backslash.
            let open = format!("\"{}\\", "a".repeat(at));
            assert_eq!(closing_quote(open.as_bytes(), 1), None, "{open}");
        }
    }

    #[test]
    fn key_start_finds_the_opening_quote() {
        let text = r#"{"a\"b" : 1}"#;
        assert_eq!(key_start(text, text.find('1').unwrap()), 1);
    }

    #[test]
    fn positions_on_one_long_line_move_by_distance() {
        let text = format!("{}é{}", "x".repeat(1000), "y".repeat(1000));
        let mut l = Lines::new(&text);
        assert_eq!(l.pos(500), Pos::new(1, 501));
        assert_eq!(l.pos(1002), Pos::new(1, 1002));
        assert_eq!(l.pos(1001 + 1000), Pos::new(1, 2001));
        assert_eq!(l.pos(1000), Pos::new(1, 1001));
    }
}
