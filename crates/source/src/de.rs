//! Typed values from a located tree: a serde `Deserializer` over [`Node`] whose errors carry the
//! line and column of the value that did not fit.
//!
//! Scalars read by the type asked for, as the Kubernetes API server reads the JSON that its YAML
//! reader (YAML 1.1) makes of them:
//!
//! - A string field takes a string. A plain scalar that YAML 1.1 reads as a boolean or a number
//!   (`gpu: on`, `count: 4`, `tag: 1.10`) becomes a JSON boolean or number, which the API server
//!   refuses for a string field; so is it here, at the value, with the quoted form to write. A map
//!   key may be a number written in decimal (the YAML reader turns it into the same text); a
//!   key that is a boolean, a null or another number spelling is refused the same way.
//! - A boolean field takes `true`/`false` and the YAML 1.1 words (`yes`, `on`...).
//! - A number field takes a plain number; an integer field refuses a fraction or an exponent
//!   (`4.0`), naming the integer to write, and a quoted number, naming the unquoted one.
//! - `null` reads as an absent value, an empty collection, or the empty string, as Go's decoder
//!   leaves a zero value.

use crate::tree::{
    resolve_bool, resolve_float, resolve_int, Node, Pos, Resolved, Scalar, ScalarStyle, Value,
};
use serde::de::{
    self, DeserializeSeed, EnumAccess, Expected, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use std::fmt;

/// A deserialization error with the position of the value it is about (`0:0` when unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    pub pos: Pos,
}

impl Error {
    fn at(mut self, pos: Pos) -> Error {
        if self.pos.line == 0 {
            self.pos = pos;
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error {
            message: msg.to_string(),
            pos: Pos::default(),
        }
    }
}

/// Deserializes `T` from a tree.
pub fn from_node<'de, T: de::Deserialize<'de>>(node: &Node<'de>) -> Result<T, Error> {
    T::deserialize(NodeDeserializer::new(node))
}

/// Deserializes with a seed from a tree.
pub fn seed_from_node<'de, S: DeserializeSeed<'de>>(
    seed: S,
    node: &Node<'de>,
) -> Result<S::Value, Error> {
    seed.deserialize(NodeDeserializer::new(node))
}

/// A serde deserializer reading one node of a tree.
#[derive(Clone, Copy)]
pub struct NodeDeserializer<'n, 'de> {
    node: &'n Node<'de>,
    /// The node is a mapping key.
    key: bool,
}

impl<'n, 'de> NodeDeserializer<'n, 'de> {
    pub fn new(node: &'n Node<'de>) -> Self {
        NodeDeserializer { node, key: false }
    }

    fn key(node: &'n Node<'de>) -> Self {
        NodeDeserializer { node, key: true }
    }

    /// Why a scalar cannot be read as a string, when YAML 1.1 makes it something else.
    fn not_a_string(&self, s: &Scalar<'de>) -> Option<Error> {
        let resolved = s.resolve();
        let what = match resolved {
            Resolved::Str(text) if s.style == ScalarStyle::Plain && s.tag.is_none() => {
                if is_timestamp(text) {
                    "a date"
                } else if text.contains('_') && resolve_int(&text.replace('_', "")).is_some() {
                    "an integer"
                } else {
                    return None;
                }
            }
            Resolved::Str(_) => return None,
            Resolved::Null if !self.key => return None,
            Resolved::Int(i) if self.key && i.to_string() == s.text => return None,
            Resolved::UInt(u) if self.key && u.to_string() == s.text => return None,
            Resolved::Null => "null",
            Resolved::Bool(_) => "a boolean",
            Resolved::Int(_) | Resolved::UInt(_) => "an integer",
            Resolved::Float(_) => "a number",
        };
        let quoted = if s.text.contains('"') {
            format!("'{}'", s.text.replace('\'', "''"))
        } else {
            format!("\"{}\"", s.text)
        };
        Some(Error {
            message: format!(
                "`{}` is {what} in YAML as Kubernetes reads it, but this {} is a string: quote it, {quoted}",
                s.text,
                if self.key { "key" } else { "field" }
            ),
            pos: self.node.pos,
        })
    }

    fn pos(&self) -> Pos {
        self.node.pos
    }

    fn unexpected(&self) -> Unexpected<'n> {
        match &self.node.value {
            Value::Scalar(s) => unexpected_scalar(s),
            Value::Seq(_) => Unexpected::Seq,
            Value::Map(_) => Unexpected::Map,
        }
    }

    fn invalid(&self, exp: &dyn Expected) -> Error {
        de::Error::invalid_type(self.unexpected(), exp)
    }

    fn scalar(&self) -> Option<&'n Scalar<'de>> {
        match &self.node.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    fn visit_text<V: Visitor<'de>>(
        &self,
        s: &'n Scalar<'de>,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if matches!(s.resolve(), Resolved::Null) {
            return visitor.visit_str("");
        }
        match &s.text {
            std::borrow::Cow::Borrowed(b) => visitor.visit_borrowed_str(b),
            std::borrow::Cow::Owned(o) => visitor.visit_str(o),
        }
    }

    fn visit_number<V: Visitor<'de>>(&self, visitor: V, float: bool) -> Result<V::Value, Error> {
        let Some(s) = self.scalar() else {
            return Err(self.invalid(&visitor));
        };
        if s.style != crate::tree::ScalarStyle::Plain && s.tag.is_none() {
            if let Some(n) = resolve_int(&s.text).or_else(|| resolve_float(&s.text)) {
                if !matches!(n, Resolved::Float(_)) || float {
                    return Err(Error {
                        message: format!(
                            "`{}` is quoted, so it is a string, but this field is a number: write it without quotes, {}",
                            s.text, s.text
                        ),
                        pos: self.pos(),
                    });
                }
            }
        }
        let resolved = match s.resolve() {
            Resolved::Int(i) => Resolved::Int(i),
            Resolved::UInt(u) => Resolved::UInt(u),
            Resolved::Float(f) => Resolved::Float(f),
            Resolved::Str(t) if s.style == crate::tree::ScalarStyle::Plain => {
                // A tag such as `!!str` kept it a string; an explicit number tag may still parse.
                match resolve_int(t).or_else(|| resolve_float(t)) {
                    Some(r) if s.tag != Some(crate::tree::Tag::Str) => r,
                    _ => return Err(self.invalid(&visitor)),
                }
            }
            _ => return Err(self.invalid(&visitor)),
        };
        if let (Resolved::Float(f), false) = (resolved, float) {
            let hint = if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
                format!(": write {}", f as i64)
            } else {
                String::new()
            };
            return Err(Error {
                message: format!(
                    "`{}` is not an integer, and this field takes an integer{hint}",
                    s.text
                ),
                pos: self.pos(),
            });
        }
        match resolved {
            Resolved::Int(i) if float => visitor.visit_f64(i as f64),
            Resolved::UInt(u) if float => visitor.visit_f64(u as f64),
            Resolved::Int(i) => visitor.visit_i64(i),
            Resolved::UInt(u) => visitor.visit_u64(u),
            Resolved::Float(f) => visitor.visit_f64(f),
            _ => Err(self.invalid(&visitor)),
        }
    }
}

/// A plain scalar that YAML 1.1 (the Go reader Kubernetes uses) takes for a timestamp: a date
/// `YYYY-M-D`, alone or followed by a time.
fn is_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let month = digits(5);
    if !(1..=2).contains(&month) || b.get(5 + month) != Some(&b'-') {
        return false;
    }
    let day_at = 6 + month;
    let day = digits(day_at);
    if !(1..=2).contains(&day) {
        return false;
    }
    matches!(b.get(day_at + day), None | Some(b'T' | b't' | b' '))
}

fn unexpected_scalar<'n>(s: &'n Scalar<'_>) -> Unexpected<'n> {
    match s.resolve() {
        Resolved::Null => Unexpected::Unit,
        Resolved::Bool(b) => Unexpected::Bool(b),
        Resolved::Int(i) => Unexpected::Signed(i),
        Resolved::UInt(u) => Unexpected::Unsigned(u),
        Resolved::Float(f) => Unexpected::Float(f),
        Resolved::Str(_) => Unexpected::Str(&s.text),
    }
}

macro_rules! number {
    ($($name:ident),*) => {
        $(fn $name<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.visit_number(visitor, false).map_err(|e| e.at(self.pos()))
        })*
    };
}

impl<'n, 'de> de::Deserializer<'de> for NodeDeserializer<'n, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match &self.node.value {
            Value::Scalar(s) => match s.resolve() {
                Resolved::Null => visitor.visit_unit(),
                Resolved::Bool(b) => visitor.visit_bool(b),
                Resolved::Int(i) => visitor.visit_i64(i),
                Resolved::UInt(u) => visitor.visit_u64(u),
                Resolved::Float(f) => visitor.visit_f64(f),
                Resolved::Str(_) => self.visit_text(s, visitor),
            },
            Value::Seq(items) => visitor.visit_seq(Seq::new(items)),
            Value::Map(entries) => visitor.visit_map(Map::new(entries)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.scalar() {
            Some(s)
                if s.style == crate::tree::ScalarStyle::Plain
                    && s.tag != Some(crate::tree::Tag::Str) =>
            {
                match resolve_bool(&s.text) {
                    Some(b) => visitor.visit_bool(b),
                    None => Err(self.invalid(&visitor)),
                }
            }
            _ => Err(self.invalid(&visitor)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    number!(
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128
    );

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.visit_number(visitor, true)
            .map_err(|e| e.at(self.pos()))
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.visit_number(visitor, true)
            .map_err(|e| e.at(self.pos()))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.scalar() {
            Some(s) => match self.not_a_string(s) {
                Some(e) => Err(e),
                None => self.visit_text(s, visitor),
            },
            None => Err(self.invalid(&visitor)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.scalar() {
            Some(s) => visitor.visit_bytes(s.text.as_bytes()),
            None => Err(self.invalid(&visitor)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = if self.node.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = if self.node.is_null() {
            visitor.visit_unit()
        } else {
            Err(self.invalid(&visitor))
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor
            .visit_newtype_struct(self)
            .map_err(|e| e.at(self.pos()))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match &self.node.value {
            Value::Seq(items) => visitor.visit_seq(Seq::new(items)),
            _ if self.node.is_null() => visitor.visit_seq(Seq::new(&[])),
            _ => Err(self.invalid(&visitor)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match &self.node.value {
            Value::Map(entries) => visitor.visit_map(Map::new(entries)),
            _ if self.node.is_null() => visitor.visit_map(Map::new(&[])),
            _ => Err(self.invalid(&visitor)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let r = match &self.node.value {
            Value::Scalar(_) => visitor.visit_enum(Enum {
                variant: self.node,
                value: None,
            }),
            Value::Map(entries) if entries.len() == 1 => visitor.visit_enum(Enum {
                variant: &entries[0].0,
                value: Some(&entries[0].1),
            }),
            _ => Err(self.invalid(&visitor)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    /// Field and variant names: their text, as the struct or enum matches it.
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.scalar() {
            Some(s) => self.visit_text(s, visitor),
            None => Err(self.invalid(&visitor)),
        };
        r.map_err(|e| e.at(self.pos()))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

struct Seq<'n, 'de> {
    items: std::slice::Iter<'n, Node<'de>>,
    len: usize,
}

impl<'n, 'de> Seq<'n, 'de> {
    fn new(items: &'n [Node<'de>]) -> Self {
        Seq {
            items: items.iter(),
            len: items.len(),
        }
    }
}

impl<'n, 'de> SeqAccess<'de> for Seq<'n, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            Some(node) => seed
                .deserialize(NodeDeserializer::new(node))
                .map(Some)
                .map_err(|e| e.at(node.pos)),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

struct Map<'n, 'de> {
    entries: std::slice::Iter<'n, (Node<'de>, Node<'de>)>,
    value: Option<&'n Node<'de>>,
    len: usize,
}

impl<'n, 'de> Map<'n, 'de> {
    fn new(entries: &'n [(Node<'de>, Node<'de>)]) -> Self {
        Map {
            entries: entries.iter(),
            value: None,
            len: entries.len(),
        }
    }
}

impl<'n, 'de> MapAccess<'de> for Map<'n, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.entries.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(NodeDeserializer::key(k))
                    .map(Some)
                    .map_err(|e| e.at(k.pos))
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(v) => seed
                .deserialize(NodeDeserializer::new(v))
                .map_err(|e| e.at(v.pos)),
            None => Err(de::Error::custom("value requested before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

struct Enum<'n, 'de> {
    variant: &'n Node<'de>,
    value: Option<&'n Node<'de>>,
}

impl<'n, 'de> EnumAccess<'de> for Enum<'n, 'de> {
    type Error = Error;
    type Variant = Variant<'n, 'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), Error> {
        let v = seed
            .deserialize(NodeDeserializer::new(self.variant))
            .map_err(|e| e.at(self.variant.pos))?;
        Ok((
            v,
            Variant {
                value: self.value,
                pos: self.variant.pos,
            },
        ))
    }
}

struct Variant<'n, 'de> {
    value: Option<&'n Node<'de>>,
    pos: Pos,
}

impl<'n, 'de> VariantAccess<'de> for Variant<'n, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            None => Ok(()),
            Some(v) if v.is_null() => Ok(()),
            Some(v) => Err(Error {
                message: format!(
                    "expected no value for a unit variant, found a {}",
                    v.kind_name()
                ),
                pos: v.pos,
            }),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.value {
            Some(v) => seed.deserialize(NodeDeserializer::new(v)),
            None => seed
                .deserialize(().into_deserializer())
                .map_err(|e: Error| e.at(self.pos)),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Some(v) => de::Deserializer::deserialize_seq(NodeDeserializer::new(v), visitor),
            None => Err(Error {
                message: "expected a sequence for a tuple variant".into(),
                pos: self.pos,
            }),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Some(v) => de::Deserializer::deserialize_map(NodeDeserializer::new(v), visitor),
            None => Err(Error {
                message: "expected a mapping for a struct variant".into(),
                pos: self.pos,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::ScalarStyle;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    fn s(line: u32, text: &str) -> Node<'static> {
        Node::scalar(Pos::new(line, 3), text.to_string(), ScalarStyle::Plain)
    }

    fn map(line: u32, entries: Vec<(&str, Node<'static>)>) -> Node<'static> {
        Node {
            pos: Pos::new(line, 1),
            value: Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| {
                        (
                            Node::scalar(
                                Pos::new(v.pos.line, 1),
                                k.to_string(),
                                ScalarStyle::Plain,
                            ),
                            v,
                        )
                    })
                    .collect(),
            ),
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct T {
        name: String,
        count: Option<u32>,
        on: Option<bool>,
        #[serde(default)]
        labels: BTreeMap<String, String>,
    }

    #[test]
    fn typed_fields_read_by_their_type() {
        let n = map(
            1,
            vec![
                ("name", quoted(2, "1.10")),
                ("count", s(3, "0x10")),
                ("on", s(4, "yes")),
                ("labels", map(5, vec![("a", quoted(6, "true"))])),
            ],
        );
        let t: T = from_node(&n).unwrap();
        assert_eq!(t.name, "1.10");
        assert_eq!(t.count, Some(16));
        assert_eq!(t.on, Some(true));
        assert_eq!(t.labels["a"], "true");
    }

    fn quoted(line: u32, text: &str) -> Node<'static> {
        Node::scalar(
            Pos::new(line, 3),
            text.to_string(),
            ScalarStyle::DoubleQuoted,
        )
    }

    #[test]
    fn yaml_1_1_scalars_in_string_fields_are_refused_with_the_quoted_form() {
        for (text, what) in [
            ("on", "a boolean"),
            ("yes", "a boolean"),
            ("4", "an integer"),
            ("1.10", "a number"),
            ("y", "a boolean"),
            ("1_000", "an integer"),
            ("2026-01-31", "a date"),
        ] {
            let n = map(1, vec![("name", s(2, text))]);
            let e = from_node::<T>(&n).unwrap_err();
            assert_eq!(e.pos, Pos::new(2, 3), "{e}");
            assert!(e.message.contains(what), "{e}");
            assert!(e.message.contains(&format!("quote it, \"{text}\"")), "{e}");
        }
        // In a map of strings too: `gpu: on` is a label the API server refuses.
        let n = map(
            1,
            vec![
                ("name", quoted(2, "x")),
                ("labels", map(3, vec![("gpu", s(4, "on"))])),
            ],
        );
        let e = from_node::<T>(&n).unwrap_err();
        assert_eq!(e.pos.line, 4, "{e}");
        // Tagged `!!str` and null stay readable.
        let mut tagged = s(2, "on");
        if let Value::Scalar(sc) = &mut tagged.value {
            sc.tag = Some(crate::tree::Tag::Str);
        }
        let t: T = from_node(&map(1, vec![("name", tagged)])).unwrap();
        assert_eq!(t.name, "on");
        let t: T = from_node(&map(1, vec![("name", s(2, "~"))])).unwrap();
        assert_eq!(t.name, "");
    }

    #[test]
    fn map_keys_keep_decimal_numbers_and_refuse_booleans() {
        let m: BTreeMap<String, String> =
            from_node(&map(1, vec![("8080", quoted(2, "http"))])).unwrap();
        assert_eq!(m["8080"], "http");
        let e = from_node::<BTreeMap<String, String>>(&map(1, vec![("on", quoted(2, "x"))]))
            .unwrap_err();
        assert!(e.message.contains("this key is a string"), "{e}");
        let e = from_node::<BTreeMap<String, String>>(&map(1, vec![("0x10", quoted(2, "x"))]))
            .unwrap_err();
        assert!(e.message.contains("an integer"), "{e}");
    }

    #[test]
    fn integers_refuse_fractions_and_quotes_with_what_to_write() {
        let n = map(1, vec![("name", quoted(2, "x")), ("count", s(3, "4.0"))]);
        let e = from_node::<T>(&n).unwrap_err();
        assert_eq!(e.pos, Pos::new(3, 3), "{e}");
        assert!(e.message.contains("takes an integer: write 4"), "{e}");
        let n = map(1, vec![("name", quoted(2, "x")), ("count", quoted(3, "4"))]);
        let e = from_node::<T>(&n).unwrap_err();
        assert!(e.message.contains("without quotes, 4"), "{e}");
    }

    #[test]
    fn wrong_type_names_the_value_position() {
        let n = map(1, vec![("name", quoted(2, "x")), ("count", s(3, "many"))]);
        let e = from_node::<T>(&n).unwrap_err();
        assert_eq!(e.pos, Pos::new(3, 3), "{e}");
        assert!(e.message.contains("many"), "{e}");
    }

    #[test]
    fn unknown_and_missing_fields_are_located() {
        let n = map(1, vec![("name", quoted(2, "x")), ("cuont", s(3, "1"))]);
        let e = from_node::<T>(&n).unwrap_err();
        assert_eq!(e.pos.line, 3, "{e}");
        let n = map(7, vec![("count", s(8, "1"))]);
        let e = from_node::<T>(&n).unwrap_err();
        assert_eq!(e.pos.line, 7, "{e}");
        assert!(e.message.contains("name"), "{e}");
    }

    #[test]
    fn negative_into_unsigned_fails() {
        let n = map(1, vec![("name", quoted(2, "x")), ("count", s(3, "-1"))]);
        assert!(from_node::<T>(&n).is_err());
    }

    #[test]
    fn generic_values_resolve_scalars() {
        let n = map(
            1,
            vec![("a", s(2, "0644")), ("b", s(3, "~")), ("c", s(4, "x"))],
        );
        let v: serde_json::Value = from_node(&n).unwrap();
        assert_eq!(v, serde_json::json!({"a": 420, "b": null, "c": "x"}));
    }
}
