//! The YAML reader: events from the parser into one located tree per object, under the bounds of
//! [`Limits`], with an error boundary per document (a syntax error skips to the next `---`) and per
//! object (a bound or a duplicate key skips only that object).

use crate::object::{Entry, Object, ReadOptions};
use crate::tree::{Node, Pos, Scalar, ScalarStyle, Tag, Value};
use crate::Limits;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use serde_saphyr::granit_parser::{self as gp, Event, Parser, Span, StrInput};
use std::collections::HashMap;

/// The kind of a node, for the tags it may carry.
#[derive(Clone, Copy)]
enum Kind {
    Scalar,
    Seq,
    Map,
}

/// Why building stopped.
enum Fail {
    /// The document is not valid YAML: skip to the next document.
    Syntax(Box<Diagnostic>),
    /// The object broke a bound or a content rule: skip the rest of this object only.
    Object(Box<Diagnostic>),
}

struct Reader<'a, 'o> {
    parser: Parser<'a, StrInput<'a>>,
    file: &'a str,
    limits: &'o Limits,
    /// Collections open right now.
    depth: usize,
    /// Per document: anchored nodes, alias count and nodes added through aliases.
    anchors: HashMap<usize, Node<'a>>,
    aliases: usize,
    expanded: usize,
    /// Byte offset where the current object starts (for the object size bound).
    object_start: usize,
    /// Lines before the text this reader parses (a slice of a larger input).
    line_offset: u32,
}

fn parser_options(limits: &Limits) -> gp::Options {
    let mut parser_options = gp::Options::default();
    parser_options.set_emit_comments(false);
    // Our own depth bound is reported per object; the parser's (which fails the document, as it
    // counts while scanning ahead) stays above it.
    let nesting = parser_nesting(limits);
    parser_options.flow_nesting_limit = nesting;
    parser_options.block_nesting_limit = nesting;
    parser_options
}

fn reader<'a, 'o>(
    text: &'a str,
    file: &'a str,
    limits: &'o Limits,
    line_offset: u32,
) -> Reader<'a, 'o> {
    Reader {
        parser: Parser::new_from_str_with_options(text, parser_options(limits)),
        file,
        limits,
        depth: 0,
        anchors: HashMap::new(),
        aliases: 0,
        expanded: 0,
        object_start: 0,
        line_offset,
    }
}

/// Reads the items of one chunk of a large list (a slice of the input holding whole items of the
/// root mapping's split sequence, as a block sequence at column 0). `first` is the index of its
/// first item. On a syntax error, returns what it read before it and the error.
pub(crate) fn read_chunk<'a>(
    text: &'a str,
    file: &'a str,
    limits: &Limits,
    line_offset: u32,
    first: usize,
) -> Result<Vec<Entry<'a>>, (Vec<Entry<'a>>, Diagnostic)> {
    let mut reader = reader(text, file, limits, line_offset);
    let mut out = Vec::new();
    let mut index = first;
    let result = (|| -> Result<(), Diagnostic> {
        loop {
            let (event, span) = reader.next_raw()?;
            match event {
                Event::StreamStart | Event::DocumentStart(..) => continue,
                Event::SequenceStart(..) => break,
                _ => {
                    return Err(Diagnostic::error(
                        Code::InvalidValue,
                        reader.loc(reader.pos(&span)),
                        "expected the items of a list",
                    ))
                }
            }
        }
        loop {
            let (event, span) = reader.next_raw()?;
            if matches!(event, Event::SequenceEnd) {
                return Ok(());
            }
            reader.object_start = span.start.byte_offset().unwrap_or(0);
            match reader.build(event, span) {
                Ok(node) => out.push(Entry::Object(Object::tree(file, 1, Some(index), node))),
                Err(Fail::Syntax(d)) => return Err(*d),
                Err(Fail::Object(d)) => {
                    out.push(Entry::Invalid {
                        document: 1,
                        item: Some(index),
                        diagnostic: *d,
                    });
                    reader.skip_to(1)?;
                }
            }
            index += 1;
        }
    })();
    match result {
        Ok(()) => Ok(out),
        Err(d) => Err((out, d)),
    }
}

/// Reads a YAML stream document by document on this thread.
pub(crate) fn read_sequential<'a>(
    text: &'a str,
    file: &'a str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Entry<'a>),
) {
    let mut reader = reader(text, file, &options.limits, 0);
    let mut document = 0usize;
    loop {
        let (event, _span) = match reader.next_raw() {
            Ok(e) => e,
            Err(d) => {
                sink(Entry::Invalid {
                    document: document.max(1),
                    item: None,
                    diagnostic: d,
                });
                if !reader.recover(sink, document) {
                    return;
                }
                continue;
            }
        };
        match event {
            Event::StreamStart | Event::DocumentEnd => continue,
            Event::StreamEnd => return,
            Event::DocumentStart(..) => {
                document += 1;
                reader.anchors.clear();
                reader.aliases = 0;
                reader.expanded = 0;
                match reader.document(document, options.split_key.as_deref(), sink) {
                    Ok(()) => {}
                    Err(d) => {
                        sink(Entry::Invalid {
                            document,
                            item: None,
                            diagnostic: d,
                        });
                        if !reader.recover(sink, document) {
                            return;
                        }
                    }
                }
            }
            _ => {
                // Events outside a document cannot happen in a well-formed event stream.
                sink(Entry::Invalid {
                    document: document.max(1),
                    item: None,
                    diagnostic: Diagnostic::error(
                        Code::InvalidYaml,
                        Location::new(file, 0, 0),
                        "YAML event outside a document",
                    ),
                });
                return;
            }
        }
    }
}

impl<'a> Reader<'a, '_> {
    fn pos(&self, span: &Span) -> Pos {
        let p = pos(span);
        Pos::new(p.line.saturating_add(self.line_offset), p.column)
    }

    fn scan_error(&self, e: &gp::ScanError) -> Diagnostic {
        let mut d = scan_error(e, self.file);
        if d.location.line > 0 {
            d.location.line = d.location.line.saturating_add(self.line_offset);
        }
        d
    }

    fn loc(&self, pos: Pos) -> Location {
        Location::new(self.file, pos.line, pos.column)
    }

    fn recover(&mut self, sink: &mut dyn FnMut(Entry<'a>), document: usize) -> bool {
        self.depth = 0;
        self.anchors.clear();
        match self.parser.proceed_next_document() {
            Ok(more) => more,
            Err(e) => {
                sink(Entry::Invalid {
                    document: document.max(1),
                    item: None,
                    diagnostic: self.scan_error(&e),
                });
                false
            }
        }
    }

    /// The next event, tracking depth; a syntax error is returned as a diagnostic.
    fn next_raw(&mut self) -> Result<(Event<'a>, Span), Diagnostic> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => {
                match event {
                    Event::SequenceStart(..) | Event::MappingStart(..) => self.depth += 1,
                    Event::SequenceEnd | Event::MappingEnd => {
                        self.depth = self.depth.saturating_sub(1)
                    }
                    _ => {}
                }
                Ok((event, span))
            }
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Err(Diagnostic::error(
                Code::InvalidYaml,
                Location::new(self.file, 0, 0),
                "unexpected end of the YAML stream",
            )),
        }
    }

    /// The next event inside an object, with the object size bound checked.
    fn next(&mut self) -> Result<(Event<'a>, Span), Fail> {
        let (event, span) = self.next_raw().map_err(|d| Fail::Syntax(Box::new(d)))?;
        let end = span.end.byte_offset().unwrap_or(0);
        let size = end.saturating_sub(self.object_start);
        if size > self.limits.max_object_bytes {
            return Err(Fail::Object(Box::new(Diagnostic::error(
                Code::OverLimit,
                self.loc(self.pos(&span)),
                format!(
                    "object is over the size limit of {} bytes (max_object_bytes)",
                    self.limits.max_object_bytes
                ),
            ))));
        }
        Ok((event, span))
    }

    /// Skips events until the depth is back to `depth` (the rest of a failed object).
    fn skip_to(&mut self, depth: usize) -> Result<(), Diagnostic> {
        while self.depth > depth {
            self.next_raw()?;
        }
        Ok(())
    }

    /// Reads one document after its DocumentStart, up to and including its DocumentEnd.
    fn document(
        &mut self,
        document: usize,
        split_key: Option<&str>,
        sink: &mut dyn FnMut(Entry<'a>),
    ) -> Result<(), Diagnostic> {
        let (event, span) = self.next_raw()?;
        if matches!(event, Event::DocumentEnd) {
            return Ok(());
        }
        self.object_start = span.start.byte_offset().unwrap_or(0);
        let root_is_map = matches!(event, Event::MappingStart(..));
        if let (Some(key), true) = (split_key, root_is_map) {
            self.split_root(document, key, event, span, sink)?;
        } else {
            match self.build(event, span) {
                Ok(node) => {
                    if !is_empty_document(&node) {
                        sink(Entry::Object(Object::tree(self.file, document, None, node)));
                    }
                }
                Err(Fail::Syntax(d)) => return Err(*d),
                Err(Fail::Object(d)) => {
                    sink(Entry::Invalid {
                        document,
                        item: None,
                        diagnostic: *d,
                    });
                    self.skip_to(0)?;
                }
            }
        }
        match self.next_raw()? {
            (Event::DocumentEnd, _) => Ok(()),
            (_, span) => Err(Diagnostic::error(
                Code::InvalidYaml,
                self.loc(self.pos(&span)),
                "expected the end of the document",
            )),
        }
    }

    /// A root mapping whose `key` entry, when a sequence, is read and handed on item by item.
    fn split_root(
        &mut self,
        document: usize,
        key: &str,
        event: Event<'a>,
        span: Span,
        sink: &mut dyn FnMut(Entry<'a>),
    ) -> Result<(), Diagnostic> {
        let root_pos = self.pos(&span);
        if let Event::MappingStart(_, _, Some(tag)) = &event {
            if let Err(Fail::Object(d) | Fail::Syntax(d)) = self.tag(tag, Kind::Map, root_pos) {
                sink(Entry::Invalid {
                    document,
                    item: None,
                    diagnostic: *d,
                });
                return self.skip_to(0);
            }
        }
        if let Event::MappingStart(_, anchor, _) = &event {
            if *anchor != 0 {
                // An anchored root could be aliased from inside itself; read it whole.
                return self.whole_root(document, event, span, sink);
            }
        }
        let mut entries: Vec<(Node<'a>, Node<'a>)> = Vec::new();
        let mut items: Option<usize> = None;
        let mut failed: Option<Diagnostic> = None;
        loop {
            let (kev, kspan) = self.next_raw()?;
            if matches!(kev, Event::MappingEnd) {
                break;
            }
            if failed.is_some() {
                // After a failed entry, skip the rest of the document's entries.
                self.skip_node(&kev)?;
                let (vev, _) = self.next_raw()?;
                self.skip_node(&vev)?;
                continue;
            }
            self.object_start = kspan.start.byte_offset().unwrap_or(0);
            let key_node = match self.build(kev, kspan) {
                Ok(k) => k,
                Err(Fail::Syntax(d)) => return Err(*d),
                Err(Fail::Object(d)) => {
                    failed = Some(*d);
                    self.skip_to(1)?;
                    let (vev, _) = self.next_raw()?;
                    self.skip_node(&vev)?;
                    continue;
                }
            };
            let (vev, vspan) = self.next_raw()?;
            let is_split = key_node.as_scalar_text() == Some(key)
                && matches!(vev, Event::SequenceStart(_, _, None))
                && items.is_none();
            if is_split {
                let seq_depth = self.depth;
                let mut index = 0usize;
                loop {
                    let (iev, ispan) = self.next_raw()?;
                    if matches!(iev, Event::SequenceEnd) {
                        break;
                    }
                    self.object_start = ispan.start.byte_offset().unwrap_or(0);
                    match self.build(iev, ispan) {
                        Ok(node) => sink(Entry::Object(Object::tree(
                            self.file,
                            document,
                            Some(index),
                            node,
                        ))),
                        Err(Fail::Syntax(d)) => return Err(*d),
                        Err(Fail::Object(d)) => {
                            sink(Entry::Invalid {
                                document,
                                item: Some(index),
                                diagnostic: *d,
                            });
                            self.skip_to(seq_depth)?;
                        }
                    }
                    index += 1;
                }
                items = Some(index);
                continue;
            }
            self.object_start = vspan.start.byte_offset().unwrap_or(0);
            match self.build(vev, vspan) {
                Ok(v) => entries.push((key_node, v)),
                Err(Fail::Syntax(d)) => return Err(*d),
                Err(Fail::Object(d)) => {
                    failed = Some(*d);
                    self.skip_to(1)?;
                }
            }
        }
        if let Some(d) = failed {
            sink(Entry::Invalid {
                document,
                item: None,
                diagnostic: d,
            });
            return Ok(());
        }
        let mut node = Node {
            pos: root_pos,
            value: Value::Map(entries),
        };
        if let Err(d) = self.finish_map(&mut node) {
            sink(Entry::Invalid {
                document,
                item: None,
                diagnostic: d,
            });
            return Ok(());
        }
        match items {
            Some(count) => sink(Entry::Container {
                object: Object::tree(self.file, document, None, node),
                items: count,
            }),
            None => sink(Entry::Object(Object::tree(self.file, document, None, node))),
        }
        Ok(())
    }

    fn whole_root(
        &mut self,
        document: usize,
        event: Event<'a>,
        span: Span,
        sink: &mut dyn FnMut(Entry<'a>),
    ) -> Result<(), Diagnostic> {
        match self.build(event, span) {
            Ok(node) => sink(Entry::Object(Object::tree(self.file, document, None, node))),
            Err(Fail::Syntax(d)) => return Err(*d),
            Err(Fail::Object(d)) => {
                sink(Entry::Invalid {
                    document,
                    item: None,
                    diagnostic: *d,
                });
                self.skip_to(0)?;
            }
        }
        Ok(())
    }

    /// Consumes the rest of an entry of the root mapping that starts with `event`, without
    /// building it (after an earlier entry failed).
    fn skip_node(&mut self, event: &Event<'a>) -> Result<(), Diagnostic> {
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => self.skip_to(1),
            _ => Ok(()),
        }
    }

    /// Builds the node that starts with `event`.
    fn build(&mut self, event: Event<'a>, span: Span) -> Result<Node<'a>, Fail> {
        let p = self.pos(&span);
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                if text.len() > self.limits.max_scalar_bytes {
                    return Err(Fail::Object(Box::new(Diagnostic::error(
                        Code::OverLimit,
                        self.loc(p),
                        format!(
                            "scalar of {} bytes is over the scalar limit of {} bytes (max_scalar_bytes)",
                            text.len(),
                            self.limits.max_scalar_bytes
                        ),
                    ))));
                }
                let tag = match tag {
                    Some(t) => Some(self.tag(&t, Kind::Scalar, p)?),
                    None => None,
                };
                let node = Node {
                    pos: p,
                    value: Value::Scalar(Scalar {
                        text,
                        style: scalar_style(style),
                        tag,
                    }),
                };
                self.anchor(anchor, &node);
                Ok(node)
            }
            Event::SequenceStart(_, anchor, tag) => {
                if let Some(t) = tag {
                    self.tag(&t, Kind::Seq, p)?;
                }
                self.check_depth(p)?;
                let mut items = Vec::new();
                loop {
                    let (ev, sp) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.build(ev, sp)?);
                }
                let node = Node {
                    pos: p,
                    value: Value::Seq(items),
                };
                self.anchor(anchor, &node);
                Ok(node)
            }
            Event::MappingStart(_, anchor, tag) => {
                if let Some(t) = tag {
                    self.tag(&t, Kind::Map, p)?;
                }
                self.check_depth(p)?;
                let mut entries = Vec::new();
                loop {
                    let (ev, sp) = self.next()?;
                    if matches!(ev, Event::MappingEnd) {
                        break;
                    }
                    let key = self.build(ev, sp)?;
                    let (ev, sp) = self.next()?;
                    let value = self.build(ev, sp)?;
                    entries.push((key, value));
                }
                let mut node = Node {
                    pos: p,
                    value: Value::Map(entries),
                };
                self.finish_map(&mut node)
                    .map_err(|d| Fail::Object(Box::new(d)))?;
                self.anchor(anchor, &node);
                Ok(node)
            }
            Event::Alias(id) => {
                self.aliases += 1;
                if self.aliases > self.limits.max_aliases {
                    return Err(Fail::Object(Box::new(Diagnostic::error(
                        Code::OverLimit,
                        self.loc(p),
                        format!(
                            "more than {} aliases in one document, over the alias limit (max_aliases)",
                            self.limits.max_aliases
                        ),
                    ))));
                }
                let Some(target) = self.anchors.get(&id) else {
                    return Err(Fail::Object(Box::new(Diagnostic::error(
                        Code::InvalidYaml,
                        self.loc(p),
                        "alias refers to a node that contains it (a recursive alias)",
                    ))));
                };
                let size = target.size();
                self.expanded = self.expanded.saturating_add(size);
                if self.expanded > self.limits.max_alias_expansion {
                    return Err(Fail::Object(Box::new(Diagnostic::error(
                        Code::OverLimit,
                        self.loc(p),
                        format!(
                            "aliases expand to more than {} nodes in one document, over the alias expansion limit (max_alias_expansion); is this an alias bomb?",
                            self.limits.max_alias_expansion
                        ),
                    ))));
                }
                Ok(target.clone())
            }
            _ => Err(Fail::Syntax(Box::new(Diagnostic::error(
                Code::InvalidYaml,
                self.loc(p),
                "unexpected YAML event inside a node",
            )))),
        }
    }

    /// The tag written on a node, when the node may carry it: the core schema's scalar tags on
    /// scalars (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, and `!` for a string), `!!seq` and
    /// `!!map` on collections. Any other tag is an error at the node: Kubernetes reads YAML as
    /// JSON, which has no tags, so an application's tag (`!secret`, `!!binary`) would be dropped
    /// and its value read as something it was not meant to be.
    fn tag(&self, tag: &gp::Tag, kind: Kind, p: Pos) -> Result<Tag, Fail> {
        let converted = if tag.handle() == "!" && tag.suffix().is_empty() {
            Tag::Str
        } else {
            convert_tag(tag)
        };
        let fits = match kind {
            Kind::Scalar => !matches!(converted, Tag::Map | Tag::Seq | Tag::Other),
            Kind::Seq => {
                matches!(converted, Tag::Seq) || tag.handle() == "!" && tag.suffix().is_empty()
            }
            Kind::Map => {
                matches!(converted, Tag::Map) || tag.handle() == "!" && tag.suffix().is_empty()
            }
        };
        if fits {
            return Ok(converted);
        }
        let what = match kind {
            Kind::Scalar => "a scalar",
            Kind::Seq => "a sequence",
            Kind::Map => "a mapping",
        };
        let message = if matches!(converted, Tag::Other) {
            format!(
                "unsupported tag `{}` on {what}: Kubernetes reads YAML as JSON, which has no tags; remove the tag",
                tag.original()
            )
        } else {
            format!(
                "tag `{}` does not fit {what}; remove the tag",
                tag.original()
            )
        };
        Err(Fail::Object(Box::new(Diagnostic::error(
            Code::UnsupportedTag,
            self.loc(p),
            message,
        ))))
    }

    fn check_depth(&self, p: Pos) -> Result<(), Fail> {
        if self.depth > self.limits.max_depth {
            return Err(Fail::Object(Box::new(Diagnostic::error(
                Code::OverLimit,
                self.loc(p),
                format!(
                    "nesting is deeper than the depth limit of {} levels (max_depth)",
                    self.limits.max_depth
                ),
            ))));
        }
        Ok(())
    }

    fn anchor(&mut self, anchor: usize, node: &Node<'a>) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
    }

    /// Applies merge keys (`<<: *base`) and rejects duplicate keys.
    fn finish_map(&mut self, node: &mut Node<'a>) -> Result<(), Diagnostic> {
        let Value::Map(entries) = &mut node.value else {
            return Ok(());
        };
        let has_merge = entries.iter().any(|(k, _)| is_merge_key(k));
        if has_merge {
            let mut own = Vec::with_capacity(entries.len());
            let mut sources: Vec<Node<'a>> = Vec::new();
            for (k, v) in std::mem::take(entries) {
                if is_merge_key(&k) {
                    match v.value {
                        Value::Map(_) => sources.push(v),
                        Value::Seq(list) => {
                            for m in list {
                                if !matches!(m.value, Value::Map(_)) {
                                    return Err(Diagnostic::error(
                                        Code::InvalidYaml,
                                        self.loc(m.pos),
                                        "a merge key `<<` takes a mapping or a sequence of mappings",
                                    ));
                                }
                                sources.push(m);
                            }
                        }
                        _ => {
                            return Err(Diagnostic::error(
                                Code::InvalidYaml,
                                self.loc(v.pos),
                                "a merge key `<<` takes a mapping or a sequence of mappings",
                            ))
                        }
                    }
                } else {
                    own.push((k, v));
                }
            }
            check_duplicates(&own, self.file)?;
            let mut merged = own;
            for source in sources {
                if let Value::Map(src) = source.value {
                    for (k, v) in src {
                        let present = k.as_scalar_text().is_some_and(|t| {
                            merged.iter().any(|(m, _)| m.as_scalar_text() == Some(t))
                        });
                        if !present {
                            merged.push((k, v));
                        }
                    }
                }
            }
            *entries = merged;
            return Ok(());
        }
        check_duplicates(entries, self.file)
    }
}

fn is_merge_key(k: &Node<'_>) -> bool {
    matches!(&k.value, Value::Scalar(s) if s.style == ScalarStyle::Plain && s.tag.is_none() && s.text == "<<")
}

fn check_duplicates(entries: &[(Node<'_>, Node<'_>)], file: &str) -> Result<(), Diagnostic> {
    let dup = |k: &Node<'_>, first: Pos| {
        Diagnostic::error(
            Code::DuplicateKey,
            Location::new(file, k.pos.line, k.pos.column),
            format!(
                "duplicate key `{}` (first at line {}): which value would the cluster use?",
                k.as_scalar_text().unwrap_or(""),
                first.line
            ),
        )
    };
    if entries.len() <= 16 {
        for (i, (k, _)) in entries.iter().enumerate() {
            let Some(t) = k.as_scalar_text() else {
                continue;
            };
            if let Some((first, _)) = entries[..i]
                .iter()
                .find(|(o, _)| o.as_scalar_text() == Some(t))
            {
                return Err(dup(k, first.pos));
            }
        }
        return Ok(());
    }
    let mut seen: HashMap<&str, Pos> = HashMap::with_capacity(entries.len());
    for (k, _) in entries {
        let Some(t) = k.as_scalar_text() else {
            continue;
        };
        if let Some(first) = seen.insert(t, k.pos) {
            return Err(dup(k, first));
        }
    }
    Ok(())
}

fn is_empty_document(node: &Node<'_>) -> bool {
    node.is_null()
}

fn pos(span: &Span) -> Pos {
    Pos::new(
        clamp(span.start.line()),
        clamp(span.start.col().saturating_add(1)),
    )
}

fn clamp(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn scalar_style(style: gp::ScalarStyle) -> ScalarStyle {
    match style {
        gp::ScalarStyle::Plain => ScalarStyle::Plain,
        gp::ScalarStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        gp::ScalarStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        gp::ScalarStyle::Literal => ScalarStyle::Literal,
        gp::ScalarStyle::Folded => ScalarStyle::Folded,
    }
}

fn convert_tag(tag: &gp::Tag) -> Tag {
    match tag.core_suffix() {
        Some("str") => Tag::Str,
        Some("int") => Tag::Int,
        Some("float") => Tag::Float,
        Some("bool") => Tag::Bool,
        Some("null") => Tag::Null,
        Some("map") => Tag::Map,
        Some("seq") => Tag::Seq,
        _ => Tag::Other,
    }
}

fn parser_nesting(limits: &Limits) -> usize {
    limits.max_depth.saturating_add(2).max(PARSER_NESTING)
}

/// The nesting the parser itself allows (its default).
const PARSER_NESTING: usize = 255;

fn scan_error(e: &gp::ScanError, file: &str) -> Diagnostic {
    let m = e.marker();
    let info = e.info();
    let (code, message) = if matches!(e.kind(), gp::ErrorKind::RecursionLimitExceeded) {
        (
            Code::OverLimit,
            format!(
                "nesting is deeper than the YAML parser's depth limit of {PARSER_NESTING} levels"
            ),
        )
    } else if info.is_empty() {
        (Code::InvalidYaml, "invalid YAML".to_string())
    } else {
        (Code::InvalidYaml, format!("invalid YAML: {info}"))
    };
    Diagnostic::error(
        code,
        Location::new(file, clamp(m.line()), clamp(m.col().saturating_add(1))),
        message,
    )
}
