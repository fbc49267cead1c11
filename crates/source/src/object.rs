//! What the readers hand on, and how they are asked to read: [`ReadOptions`] and [`Format`], and each
//! [`Entry`] of the input, whose [`Object`] keeps where it starts and deserializes into any serde type
//! with errors located in the file. serde_json's errors are made located here too (`json_error`),
//! for the JSON reader as for an object's JSON text.

use crate::de::{self as tree_de, Error as DeError};
use crate::tree::{Node, Pos};
use crate::Limits;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::marker::PhantomData;

/// serde_json's fixed nesting bound.
pub(crate) const JSON_DEPTH_LIMIT: usize = 128;

/// How to read an input.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    pub limits: Limits,
    /// A root mapping key whose sequence value is read item by item (`items` for Kubernetes lists).
    pub split_key: Option<String>,
    pub format: Format,
}

/// The syntax of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// JSON when the file name ends in `.json` or the text starts with `{` or `[` and parses as JSON;
    /// YAML otherwise.
    #[default]
    Auto,
    Yaml,
    Json,
}

impl Format {
    /// The format a file name implies.
    pub fn for_name(name: &str) -> Format {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") {
            Format::Json
        } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Format::Yaml
        } else {
            Format::Auto
        }
    }
}

/// What the reader hands on.
#[derive(Debug)]
pub enum Entry<'a> {
    /// A document, or one item of a document's split sequence.
    Object(Object<'a>),
    /// The root mapping of a document whose split sequence was handed on item by item, without that
    /// sequence; `items` says how many items it had.
    Container { object: Object<'a>, items: usize },
    /// A document (`item: None`) or one item that could not be read. The rest of the input goes on.
    Invalid {
        document: usize,
        item: Option<usize>,
        diagnostic: Diagnostic,
    },
}

/// One object of the input, with where it starts; deserialize it into any serde type.
#[derive(Debug)]
pub struct Object<'a> {
    file: &'a str,
    /// 1-based index of the document in the stream.
    document: usize,
    /// 0-based index in the document's split sequence.
    item: Option<usize>,
    pos: Pos,
    body: Body<'a>,
}

#[derive(Debug)]
enum Body<'a> {
    Tree(Node<'a>),
    /// JSON text: a slice of the input, or its own copy when the input is read in pieces.
    Json(Cow<'a, str>),
    /// Root entries of a JSON container: key, raw JSON value and the value's position.
    JsonFields(Vec<(String, Cow<'a, str>, Pos)>),
}

impl<'a> Object<'a> {
    pub(crate) fn tree(
        file: &'a str,
        document: usize,
        item: Option<usize>,
        node: Node<'a>,
    ) -> Self {
        Object {
            file,
            document,
            item,
            pos: node.pos,
            body: Body::Tree(node),
        }
    }

    pub(crate) fn json(
        file: &'a str,
        document: usize,
        item: Option<usize>,
        text: Cow<'a, str>,
        pos: Pos,
    ) -> Self {
        Object {
            file,
            document,
            item,
            pos,
            body: Body::Json(text),
        }
    }

    pub(crate) fn json_fields(
        file: &'a str,
        document: usize,
        pos: Pos,
        fields: Vec<(String, Cow<'a, str>, Pos)>,
    ) -> Self {
        Object {
            file,
            document,
            item: None,
            pos,
            body: Body::JsonFields(fields),
        }
    }

    /// The same object no longer borrowing the text it was read from (trees only), named `file`.
    pub(crate) fn into_owned<'b>(self, file: &'b str) -> Option<Object<'b>> {
        match self.body {
            Body::Tree(node) => Some(Object {
                file,
                document: self.document,
                item: self.item,
                pos: self.pos,
                body: Body::Tree(node.into_owned()),
            }),
            Body::Json(_) | Body::JsonFields(_) => None,
        }
    }

    pub fn file(&self) -> &'a str {
        self.file
    }

    pub fn document(&self) -> usize {
        self.document
    }

    pub fn item(&self) -> Option<usize> {
        self.item
    }

    pub fn pos(&self) -> Pos {
        self.pos
    }

    /// Where the object starts.
    pub fn location(&self) -> Location {
        Location::new(self.file, self.pos.line, self.pos.column)
    }

    /// The located tree, when the object was read from YAML.
    pub fn node(&self) -> Option<&Node<'a>> {
        match &self.body {
            Body::Tree(n) => Some(n),
            _ => None,
        }
    }

    /// Deserializes the object; an error names the file, line and column of the offending value.
    pub fn deserialize<'s, T: Deserialize<'s>>(&'s self) -> Result<T, Diagnostic> {
        self.deserialize_seed(PhantomData::<T>)
    }

    /// Deserializes the object with a seed.
    pub fn deserialize_seed<'s, S: DeserializeSeed<'s>>(
        &'s self,
        seed: S,
    ) -> Result<S::Value, Diagnostic> {
        let result = match &self.body {
            Body::Tree(node) => tree_de::seed_from_node(seed, node),
            Body::Json(text) => json_seed(seed, text, self.pos),
            Body::JsonFields(fields) => seed.deserialize(FieldsDeserializer { fields }),
        };
        result.map_err(|e| {
            let pos = if e.pos.line == 0 { self.pos } else { e.pos };
            Diagnostic::error(
                Code::InvalidValue,
                Location::new(self.file, pos.line, pos.column),
                e.message,
            )
        })
    }
}

/// Deserializes JSON text that starts at `base`, with positions made absolute.
fn json_seed<'a, S: DeserializeSeed<'a>>(
    seed: S,
    text: &'a str,
    base: Pos,
) -> Result<S::Value, DeError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = seed
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| json_error(&e, base))?;
    Ok(value)
}

/// A serde_json error as a located error, its position made absolute from `base`.
pub(crate) fn json_error(e: &serde_json::Error, base: Pos) -> DeError {
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    let message = if message == "recursion limit exceeded" {
        format!(
            "nesting is deeper than the JSON depth limit of {} levels",
            JSON_DEPTH_LIMIT
        )
    } else {
        message
    };
    let (line, column) = (clamp(e.line()), clamp(e.column()));
    let pos = if line == 0 {
        base
    } else if line == 1 {
        Pos::new(
            base.line,
            base.column.saturating_add(column.saturating_sub(1)),
        )
    } else {
        Pos::new(base.line.saturating_add(line - 1), column)
    };
    DeError { message, pos }
}

fn clamp(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The root entries of a JSON container as a map.
struct FieldsDeserializer<'f, 'a> {
    fields: &'f [(String, Cow<'a, str>, Pos)],
}

impl<'de> de::Deserializer<'de> for FieldsDeserializer<'de, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_map(FieldsMap {
            fields: self.fields.iter(),
            value: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct FieldsMap<'f, 'a> {
    fields: std::slice::Iter<'f, (String, Cow<'a, str>, Pos)>,
    value: Option<(&'f str, Pos)>,
}

impl<'f> MapAccess<'f> for FieldsMap<'f, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'f>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.fields.next() {
            Some((key, raw, pos)) => {
                self.value = Some((raw.as_ref(), *pos));
                seed.deserialize(de::value::StrDeserializer::<DeError>::new(key))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'f>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some((raw, pos)) => json_seed(seed, raw, pos),
            None => Err(de::Error::custom("value requested before its key")),
        }
    }
}
