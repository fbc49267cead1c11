//! One value of an object, as a located YAML node or a JSON value: what every reader walks.

use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_source::tree::{Node, Pos};
use serde::de::DeserializeOwned;

/// One value of an object, as a located YAML node or a JSON value.
#[derive(Clone, Copy)]
pub(crate) enum At<'t, 'a> {
    Yaml(&'t Node<'a>),
    Json(&'t serde_json::Value),
}

impl<'t, 'a> At<'t, 'a> {
    /// The value of `key` in a mapping; `None` when absent or null.
    pub(crate) fn get(self, key: &str) -> Option<At<'t, 'a>> {
        let v = match self {
            At::Yaml(n) => At::Yaml(n.get(key)?),
            At::Json(v) => At::Json(v.get(key)?),
        };
        (!v.is_null()).then_some(v)
    }

    /// The value at a dotted path (no wildcards).
    pub(crate) fn path(self, path: &str) -> Option<At<'t, 'a>> {
        if path.is_empty() {
            return Some(self);
        }
        path.split('.').try_fold(self, |at, key| at.get(key))
    }

    fn is_null(self) -> bool {
        match self {
            At::Yaml(n) => n.is_null(),
            At::Json(v) => v.is_null(),
        }
    }

    /// Items of a sequence.
    pub(crate) fn items(self) -> Option<Vec<At<'t, 'a>>> {
        match self {
            At::Yaml(n) => n.as_seq().map(|s| s.iter().map(At::Yaml).collect()),
            At::Json(v) => v.as_array().map(|s| s.iter().map(At::Json).collect()),
        }
    }

    /// Entries of a mapping with scalar keys.
    pub(crate) fn entries(self) -> Option<Vec<(String, At<'t, 'a>)>> {
        match self {
            At::Yaml(n) => n.as_map().map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.as_scalar_text()?.to_string(), At::Yaml(v))))
                    .collect()
            }),
            At::Json(v) => v
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), At::Json(v))).collect()),
        }
    }

    /// The text of a scalar (strings, and numbers or booleans written as such).
    pub(crate) fn text(self) -> Option<String> {
        match self {
            At::Yaml(n) => n.as_str().map(str::to_string),
            At::Json(serde_json::Value::String(s)) => Some(s.clone()),
            At::Json(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => {
                Some(v.to_string())
            }
            At::Json(_) => None,
        }
    }

    pub(crate) fn pos(self) -> Option<Pos> {
        match self {
            At::Yaml(n) => Some(n.pos),
            At::Json(_) => None,
        }
    }

    /// Reads the value as `T`; an error names where (`path` is said when the position is
    /// unknown, as for JSON input).
    pub(crate) fn typed<T: DeserializeOwned>(
        self,
        object: &Location,
        path: &str,
    ) -> Result<T, Diagnostic> {
        match self {
            At::Yaml(n) => gpu_trust_source::de::from_node::<T>(n).map_err(|e| {
                let pos = if e.pos.line == 0 { n.pos } else { e.pos };
                Diagnostic::error(
                    Code::InvalidValue,
                    Location::new(object.file.clone(), pos.line, pos.column),
                    e.message,
                )
            }),
            At::Json(v) => T::deserialize(v).map_err(|e| {
                Diagnostic::error(Code::InvalidValue, object.clone(), format!("{path}: {e}"))
            }),
        }
    }

    /// Where the value is: its own position, or the object's.
    pub(crate) fn location(self, object: &Location) -> Location {
        match self.pos() {
            Some(p) => Location::new(object.file.clone(), p.line, p.column),
            None => object.clone(),
        }
    }
}
