//! Reading a large JSON List in pieces: the root mapping's `items` are found one at a time in a
//! buffer of about a megabyte, so the file's text never lives in memory whole.
//!
//! The pieces reader hands on exactly what the whole-text reader (`json.rs`) hands on for the same
//! text, or gives up: [`read_json_pieces`] returns [`Pieces::Whole`] as soon as the input is anything
//! but a valid JSON mapping whose split key holds a sequence, with every root value and every item
//! within the bounds (invalid UTF-8, a syntax error, truncated input, a duplicate root key, a root
//! value or an item over a bound, several documents, a root sequence...). The caller then discards
//! whatever was handed on and reads the input whole, which reports the problem exactly as before.
//! A problem inside one item that the whole-text reader reports for that item alone (a duplicate
//! key, a string over the scalar bound) is reported the same way here, and reading goes on.
//!
//! Positions are counted as the whole-text reader counts them: lines from `\n`, columns in
//! characters from the line's start, from the first byte after a UTF-8 byte-order mark.

use crate::file::utf8_chars;
use crate::json::{check_piece, Checked};
use crate::object::{Entry, Object, ReadOptions};
use crate::tree::Pos;
use serde::de::IgnoredAny;
use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{ErrorKind, Read};

/// What reading in pieces came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pieces {
    /// The input was read; everything handed on stands.
    Read,
    /// The input is not one the pieces reader takes as it is: discard everything it handed on and
    /// read the input whole.
    Whole,
}

/// Bytes read from the input at a time.
const CHUNK: usize = 1 << 20;
/// Deepest nesting of a root value or an item taken in pieces: serde_json's bound is 128 levels,
/// counted from the root (an item is two levels down); deeper values are left to the whole-text
/// reader, which reports them (as it reports any object deeper than `Limits::max_depth`).
const MAX_DEPTH: usize = 100;

/// The input is not one to read in pieces (or could not be read): read it whole.
struct Stop;

/// Reads JSON from `input` (named `file` in locations) and hands every object to `sink`, as
/// [`crate::read_stream`] would for the same text; see the module documentation for
/// [`Pieces::Whole`]. `options.split_key` must name the key to split (else nothing is read).
pub fn read_json_pieces<'a>(
    input: &mut dyn Read,
    file: &'a str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Entry<'a>),
) -> Pieces {
    let Some(split) = options.split_key.as_deref() else {
        return Pieces::Whole;
    };
    let mut reader = Splitter {
        input,
        buf: Vec::new(),
        pos: 0,
        end: 0,
        read: 0,
        eof: false,
        limit: options.limits.max_file_bytes,
        keep: None,
        tracked: 0,
        line: 1,
        column: 0,
    };
    match reader.document(split, file, options, sink) {
        Ok(()) => Pieces::Read,
        Err(Stop) => Pieces::Whole,
    }
}

struct Splitter<'r> {
    input: &'r mut dyn Read,
    buf: Vec<u8>,
    /// The next byte to look at, and the end of what `buf` holds.
    pos: usize,
    end: usize,
    /// Bytes read from the input so far.
    read: usize,
    eof: bool,
    limit: usize,
    /// The start of the value being taken: `buf` keeps it when it refills.
    keep: Option<usize>,
    /// Where in `buf` the position below stands: line, and characters from the line's start.
    tracked: usize,
    line: u32,
    column: usize,
}

impl Splitter<'_> {
    /// Reads more input into `buf`, dropping what is no longer needed.
    fn fill(&mut self) -> Result<(), Stop> {
        if self.eof {
            return Ok(());
        }
        let drop = self.keep.unwrap_or(self.pos).min(self.pos);
        if drop > 0 {
            self.advance(drop);
            self.buf.copy_within(drop..self.end, 0);
            self.end -= drop;
            self.pos -= drop;
            self.tracked -= drop;
            self.keep = self.keep.map(|k| k - drop);
        }
        if self.buf.len() < self.end + CHUNK {
            self.buf.resize(self.end + CHUNK, 0);
        }
        loop {
            match self.input.read(&mut self.buf[self.end..self.end + CHUNK]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    self.read += n;
                    if self.read > self.limit {
                        return Err(Stop);
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // The whole-text reader reads again and reports the error.
                Err(_) => return Err(Stop),
            }
        }
    }

    /// The next byte, without taking it; `None` at the end of the input.
    fn peek(&mut self) -> Result<Option<u8>, Stop> {
        if self.pos == self.end {
            self.fill()?;
        }
        Ok(self.buf[..self.end].get(self.pos).copied())
    }

    /// Takes JSON whitespace, then returns the next byte (not taken).
    fn next_token(&mut self) -> Result<Option<u8>, Stop> {
        loop {
            match self.peek()? {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                other => return Ok(other),
            }
        }
    }

    /// Takes `byte`, or stops.
    fn expect(&mut self, byte: u8) -> Result<(), Stop> {
        if self.next_token()? == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// Moves the position counters up to `to` (an index into `buf`, not before `tracked`).
    fn advance(&mut self, to: usize) {
        if to <= self.tracked {
            return;
        }
        let seg = &self.buf[self.tracked..to];
        match memchr::memrchr(b'\n', seg) {
            Some(last) => {
                let n = memchr::memchr_iter(b'\n', seg).count();
                self.line = self
                    .line
                    .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                self.column = utf8_chars(&seg[last + 1..]);
            }
            None => self.column += utf8_chars(seg),
        }
        self.tracked = to;
    }

    /// The position of the byte at `at` (an index into `buf`).
    fn pos_at(&mut self, at: usize) -> Pos {
        self.advance(at);
        Pos::new(
            self.line,
            u32::try_from(self.column + 1).unwrap_or(u32::MAX),
        )
    }

    /// Takes one JSON value's text (no longer than `max` bytes), valid UTF-8 and valid JSON by
    /// serde_json, and returns its start in `buf`; the value is `buf[start..self.pos]` until the
    /// next read. Its depth is left to [`check_piece`], which scans the text anyway.
    ///
    /// serde_json finds the value's end as it checks it, in one pass. It is given what is buffered
    /// up to the last byte that may follow a value (whitespace or punctuation), so that no number
    /// or literal is cut short. A value that runs past that is parsed again once at least twice as
    /// much of it is buffered (a value costs at most about three parses of its text), and the
    /// buffer never holds more than `max` bytes of it beyond one read.
    fn value(&mut self, max: usize) -> Result<usize, Stop> {
        self.keep = Some(self.pos);
        // Bytes of the value to have buffered before parsing (again).
        let mut want = 1usize;
        loop {
            while self.end - self.pos < want && !self.eof {
                self.fill()?;
            }
            let all = &self.buf[self.pos..self.end];
            let bytes = if self.eof {
                all
            } else {
                let last = all.iter().rposition(|b| {
                    matches!(
                        b,
                        b' ' | b'\t'
                            | b'\n'
                            | b'\r'
                            | b','
                            | b':'
                            | b'['
                            | b']'
                            | b'{'
                            | b'}'
                            | b'"'
                    )
                });
                &all[..last.map_or(0, |i| i + 1)]
            };
            let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<IgnoredAny>();
            match stream.next() {
                Some(Ok(_)) => {
                    let len = stream.byte_offset();
                    if len > max {
                        return Err(Stop);
                    }
                    std::str::from_utf8(&bytes[..len]).map_err(|_| Stop)?;
                    let start = self.pos;
                    self.pos += len;
                    return Ok(start);
                }
                // The value goes on past what was given.
                Some(Err(e)) if e.is_eof() && !self.eof => {}
                None if !self.eof => {}
                // Not valid JSON, or no value before the end of the input.
                _ => return Err(Stop),
            }
            if all.len() > max {
                return Err(Stop);
            }
            want = all
                .len()
                .saturating_mul(2)
                .clamp(all.len() + 1, max.saturating_add(1));
        }
    }

    /// The text of the value taken last, from `start`.
    fn text(&self, start: usize) -> &str {
        // `value` checked it is UTF-8.
        std::str::from_utf8(&self.buf[start..self.pos]).unwrap_or_default()
    }

    fn document<'a>(
        &mut self,
        split: &str,
        file: &'a str,
        options: &ReadOptions,
        sink: &mut dyn FnMut(Entry<'a>),
    ) -> Result<(), Stop> {
        let limits = &options.limits;
        while self.end < 3 && !self.eof {
            self.fill()?;
        }
        if self.buf[..self.end].starts_with(b"\xEF\xBB\xBF") {
            self.pos = 3;
            self.tracked = 3;
        }
        if self.next_token()? != Some(b'{') {
            return Err(Stop);
        }
        let base = self.pos_at(self.pos);
        self.pos += 1;
        let mut keys = HashSet::new();
        let mut fields: Vec<(String, Cow<'a, str>, Pos)> = Vec::new();
        let mut count = None;
        loop {
            if self.next_token()? != Some(b'"') {
                return Err(Stop);
            }
            let start = self.value(limits.max_scalar_bytes)?;
            let key: String = serde_json::from_str(self.text(start)).map_err(|_| Stop)?;
            self.keep = None;
            if !keys.insert(key.clone()) {
                return Err(Stop);
            }
            self.expect(b':')?;
            if key == split {
                self.expect(b'[')?;
                count = Some(self.items(file, options, sink)?);
            } else {
                self.next_token()?;
                let start = self.value(limits.max_object_bytes)?;
                let at = self.pos_at(start);
                let text = self.text(start).to_string();
                self.keep = None;
                let checked = check_piece(
                    &text,
                    at,
                    file,
                    limits,
                    MAX_DEPTH.min(limits.max_depth),
                    &mut |i| within(&text, at, i),
                );
                if !matches!(checked, Checked::Fine) {
                    return Err(Stop);
                }
                fields.push((key, Cow::Owned(text), at));
            }
            match self.next_token()? {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(Stop),
            }
        }
        // One document: nothing but whitespace may follow.
        if self.next_token()?.is_some() {
            return Err(Stop);
        }
        let Some(items) = count else {
            return Err(Stop);
        };
        sink(Entry::Container {
            object: Object::json_fields(file, 1, base, fields),
            items,
        });
        Ok(())
    }

    /// Hands on the items of the split sequence, its `[` taken; returns how many there were.
    fn items<'a>(
        &mut self,
        file: &'a str,
        options: &ReadOptions,
        sink: &mut dyn FnMut(Entry<'a>),
    ) -> Result<usize, Stop> {
        let limits = &options.limits;
        if self.next_token()? == Some(b']') {
            self.pos += 1;
            return Ok(0);
        }
        let mut index = 0;
        loop {
            match self.next_token()? {
                None | Some(b']') => return Err(Stop),
                Some(_) => {}
            }
            let start = self.value(limits.max_object_bytes)?;
            let at = self.pos_at(start);
            let text = self.text(start);
            let entry = match check_piece(
                text,
                at,
                file,
                limits,
                MAX_DEPTH.min(limits.max_depth),
                &mut |i| within(text, at, i),
            ) {
                Checked::TooDeep => return Err(Stop),
                Checked::Invalid(diagnostic) => Entry::Invalid {
                    document: 1,
                    item: Some(index),
                    diagnostic,
                },
                Checked::Fine => Entry::Object(Object::json(
                    file,
                    1,
                    Some(index),
                    Cow::Owned(text.to_string()),
                    at,
                )),
            };
            self.keep = None;
            sink(entry);
            index += 1;
            match self.next_token()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(index);
                }
                _ => return Err(Stop),
            }
        }
    }
}

/// The position of byte `at` of `text`, which starts at `base`.
fn within(text: &str, base: Pos, at: usize) -> Pos {
    let seg = &text.as_bytes()[..at.min(text.len())];
    match memchr::memrchr(b'\n', seg) {
        None => Pos::new(
            base.line,
            base.column
                .saturating_add(u32::try_from(utf8_chars(seg)).unwrap_or(u32::MAX)),
        ),
        Some(last) => {
            let n = memchr::memchr_iter(b'\n', seg).count();
            Pos::new(
                base.line
                    .saturating_add(u32::try_from(n).unwrap_or(u32::MAX)),
                u32::try_from(utf8_chars(&seg[last + 1..]) + 1).unwrap_or(u32::MAX),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_all, Limits};
    use proptest::prelude::*;

    /// A reader that hands out at most `step` bytes a call, so that values and characters cross
    /// the buffer's edges.
    struct Trickle<'d> {
        data: &'d [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn options(limits: Limits) -> ReadOptions {
        ReadOptions {
            limits,
            split_key: Some("items".to_string()),
            format: crate::Format::Json,
        }
    }

    /// What a user of the entries sees: kinds, indices, positions, values and diagnostics.
    fn summary(entries: &[Entry<'_>]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match e {
                Entry::Object(o) => format!(
                    "object {} {:?} {:?} {:?}",
                    o.document(),
                    o.item(),
                    o.pos(),
                    o.deserialize::<serde_json::Value>()
                ),
                Entry::Container { object, items } => format!(
                    "container {} {items} {:?} {:?}",
                    object.document(),
                    object.pos(),
                    object.deserialize::<serde_json::Value>()
                ),
                Entry::Invalid {
                    document,
                    item,
                    diagnostic,
                } => format!("invalid {document} {item:?} {diagnostic}"),
            })
            .collect()
    }

    fn whole(text: &str, limits: Limits) -> Vec<String> {
        summary(&read_all(text, "list.json", &options(limits)))
    }

    fn pieces(text: &str, step: usize, limits: Limits) -> (Pieces, Vec<String>) {
        let mut out = Vec::new();
        let mut input = Trickle {
            data: text.as_bytes(),
            step,
        };
        let p = read_json_pieces(&mut input, "list.json", &options(limits), &mut |e| {
            out.push(e)
        });
        (p, summary(&out))
    }

    /// Read in pieces of every small size, the entries are those of the whole text.
    fn same(text: &str, limits: Limits) {
        let expected = whole(text, limits);
        for step in [1, 2, 3, 5, 7, 64, CHUNK] {
            let (p, got) = pieces(text, step, limits);
            assert_eq!(p, Pieces::Read, "step {step}");
            assert_eq!(got, expected, "step {step}");
        }
    }

    fn gives_up(text: &str, limits: Limits) {
        for step in [1, 3, CHUNK] {
            assert_eq!(pieces(text, step, limits).0, Pieces::Whole, "step {step}");
        }
    }

    const LIST: &str = "\u{feff}{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    {\n      \"kind\": \"Pod\",\n      \"metadata\": {\"name\": \"caf\u{e9}-\u{1F680}\", \"annotations\": {\"a\": \"[{\\\"x\\\": \\\"]\\\\\\\"}\"}}\n    },\n    {\"kind\": \"Node\", \"metadata\": {\"name\": \"n\u{e9}\u{e9}\"}}, {\"kind\": \"Pod\"},\n    7,\n    \"text ]}\",\n    [1, [2, {\"b\": null}]]\n  ],\n  \"kind\": \"List\",\n  \"metadata\": {\"resourceVersion\": \"\"}\n}\n";

    #[test]
    fn items_and_positions_match_the_whole_text_reader_across_buffer_edges() {
        same(LIST, Limits::default());
        // Minified: every item on one line, columns counted in characters.
        let minified: serde_json::Value =
            serde_json::from_str(LIST.trim_start_matches('\u{feff}')).unwrap();
        same(&minified.to_string(), Limits::default());
        // No items, and items first.
        same("{\"items\": [], \"kind\": \"PodList\"}", Limits::default());
        same("{\"items\":[{\"kind\":\"Pod\"}]}", Limits::default());
    }

    #[test]
    fn an_item_with_a_problem_of_its_own_is_reported_and_the_rest_read() {
        // A duplicate key and a string over the scalar bound, each in one item.
        let text = "{\"items\": [\n {\"kind\": \"Pod\"},\n {\"kind\": \"Pod\",\n  \"kind\": \"Node\"},\n {\"a\": \"0123456789abcdef\"},\n {\"kind\": \"Pod\"}\n]}";
        let limits = Limits {
            max_scalar_bytes: 12,
            ..Limits::default()
        };
        same(text, limits);
        let (_, got) = pieces(text, 5, limits);
        assert!(
            got[1].starts_with("invalid 1 Some(1) list.json:4:3"),
            "{got:#?}"
        );
        assert!(
            got[2].starts_with("invalid 1 Some(2) list.json:5:8"),
            "{got:#?}"
        );
        assert!(got[3].starts_with("object 1 Some(3)"), "{got:#?}");
    }

    #[test]
    fn what_the_whole_text_reader_reports_for_the_document_is_left_to_it() {
        let limits = Limits::default();
        // A syntax error in an item in the middle, truncated input, a trailing comma, a second
        // document, a duplicate root key, a root sequence, no items, a value that is not a list.
        for text in [
            "{\"items\": [{\"kind\": \"Pod\"}, {\"kind\": Pod}, {\"kind\": \"Pod\"}]}",
            "{\"items\": [{\"kind\": \"Pod\"}, {\"kind\": \"Po",
            "{\"items\": [{\"kind\": \"Pod\"}, {\"kind\": \"Pod\"}]",
            "{\"items\": [{\"kind\": \"Pod\"},]}",
            "{\"items\": []} {\"items\": []}",
            "{\"items\": [], \"items\": []}",
            "{\"kind\": \"List\", \"kind\": \"List\", \"items\": []}",
            "[{\"kind\": \"Pod\"}]",
            "{\"kind\": \"Pod\"}",
            "{\"items\": {}}",
            "{\"items\": [\"\\x\"]}",
            "{\"items\": [\"a\u{1}b\"]}",
            "items: []\n",
        ] {
            gives_up(text, limits);
            // The whole-text reader gives its own verdict on each.
            let _ = whole(text, limits);
        }
        // Not UTF-8 inside an item, and UTF-16.
        let mut bytes = b"{\"items\": [\"caf".to_vec();
        bytes.extend_from_slice(&[0xC3, 0x28]);
        bytes.extend_from_slice(b"\"]}");
        let mut input = Trickle {
            data: &bytes,
            step: 2,
        };
        assert_eq!(
            read_json_pieces(&mut input, "x.json", &options(limits), &mut |_| {}),
            Pieces::Whole
        );
        let utf16: Vec<u8> = "{\"items\": []}"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let mut input = Trickle {
            data: &utf16,
            step: 64,
        };
        assert_eq!(
            read_json_pieces(&mut input, "x.json", &options(limits), &mut |_| {}),
            Pieces::Whole
        );
    }

    #[test]
    fn bounds_are_kept() {
        let text = format!(
            "{{\"items\": [{{\"kind\": \"Pod\"}}, {{\"a\": \"{}\"}}]}}",
            "x".repeat(200)
        );
        // An item over the object bound, and a file over the file bound, are left to the
        // whole-text reader, which reports them.
        let small = Limits {
            max_object_bytes: 100,
            ..Limits::default()
        };
        gives_up(&text, small);
        assert!(whole(&text, small)[1].contains("max_object_bytes"));
        let tiny = Limits {
            max_file_bytes: 50,
            ..Limits::default()
        };
        gives_up(&text, tiny);
        // Nesting deeper than the pieces reader takes.
        let deep = format!(
            "{{\"items\": [{}{}]}}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        gives_up(&deep, Limits::default());
    }

    #[test]
    fn numbers_and_literals_cut_by_the_buffer_are_read_whole() {
        // serde_json is never given a number or a literal cut short at the buffer's end.
        let text = "{\"items\": [-1, 0.5e-3, 12345678901234567890, -0, true, false, null,\n [1e5,-2], {\"a\": -7.25E+2, \"b\": \"\\u00e9\\\\\\\"\"}, 42], \"kind\": 1.5}";
        same(text, Limits::default());
        same(&text.replace([' ', '\n'], ""), Limits::default());
    }

    #[test]
    fn an_item_longer_than_the_buffer_is_read_and_one_over_the_bound_is_not() {
        let strings: Vec<String> = (0..300_000).map(|i| format!("\"s{i}\"")).collect();
        let item = format!("{{\"kind\": \"Pod\", \"a\": [{}]}}", strings.join(", "));
        assert!(item.len() > 3 * CHUNK);
        let text = format!("{{\"items\": [{{\"kind\": \"Pod\"}}, {item}, 7]}}");
        let expected = whole(&text, Limits::default());
        for step in [7, 4096, CHUNK] {
            let (p, got) = pieces(&text, step, Limits::default());
            assert_eq!(p, Pieces::Read, "step {step}");
            assert_eq!(got, expected, "step {step}");
        }
        let bounded = Limits {
            max_object_bytes: 2 * CHUNK,
            ..Limits::default()
        };
        gives_up(&text, bounded);
    }

    #[test]
    fn depth_is_checked_whatever_else_is_wrong_with_an_item() {
        // The depth bound of every object, YAML's, holds for JSON items too.
        let max = MAX_DEPTH.min(Limits::default().max_depth);
        // As deep as the pieces reader takes: read.
        let deepest = format!(
            "{{\"items\": [{{\"b\": {}{}}}]}}",
            "[".repeat(max - 1),
            "]".repeat(max - 1)
        );
        same(&deepest, Limits::default());
        // One level deeper: that item is an error of its own, the others are read.
        let too_deep = format!(
            "{{\"items\": [{{\"kind\": \"Pod\"}}, {{\"b\": {}{}}}]}}",
            "[".repeat(max),
            "]".repeat(max)
        );
        let read = whole(&too_deep, Limits::default());
        assert_eq!(read.len(), 3, "{read:?}");
        assert!(read[0].starts_with("object"), "{read:?}");
        assert!(
            read[1].contains("deeper than the depth limit of 64 levels"),
            "{read:?}"
        );
        // One level deeper, after a duplicate key or a long string that the item would otherwise
        // be reported for: left to the whole-text reader.
        let limits = Limits {
            max_scalar_bytes: 12,
            ..Limits::default()
        };
        for before in ["\"a\": 1, \"a\": 2", "\"a\": \"0123456789abcdef\""] {
            let deeper = format!(
                "{{\"items\": [{{\"kind\": \"Pod\"}}, {{{before}, \"b\": {}{}}}]}}",
                "[".repeat(max),
                "]".repeat(max)
            );
            gives_up(&deeper, limits);
            let _ = whole(&deeper, limits);
            // And in a root value.
            let root = format!(
                "{{\"metadata\": {{{before}, \"b\": {}{}}}, \"items\": []}}",
                "[".repeat(max),
                "]".repeat(max)
            );
            gives_up(&root, limits);
        }
    }

    /// A JSON value of a few shapes, with strings that hold what the splitter must step over.
    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i32>().prop_map(serde_json::Value::from),
            "[a-z\\[\\]{}\"\\\\,: é🚀\n\t]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z\"\\]é]{1,6}", inner, 0..5)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn pieces_read_what_the_whole_text_reader_reads(
            items in prop::collection::vec(value(), 0..12),
            pretty in any::<bool>(),
            step in 1usize..40,
        ) {
            let list = serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List"});
            let text = if pretty {
                serde_json::to_string_pretty(&list).unwrap()
            } else {
                list.to_string()
            };
            let (p, got) = pieces(&text, step, Limits::default());
            prop_assert_eq!(p, Pieces::Read);
            prop_assert_eq!(got, whole(&text, Limits::default()));
        }
    }
}
