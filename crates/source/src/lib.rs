//! Reading input text into typed values, with bounds on what the input may cost and a location on
//! every error. This crate knows YAML, JSON and positions; it knows nothing of Kubernetes.
//!
//! - [`parse_document`] reads one YAML (or JSON) document into a serde type: the policy file and the
//!   plan file use it. Errors come back as a [`Diagnostic`] naming file, line and column. Duplicate
//!   keys are an error (which value would the cluster have used?), and so is input over the [`Limits`].
//! - [`read_stream`] reads a whole input (a multi-document YAML stream, or JSON) and hands on one
//!   [`Object`] at a time, each with its file, line and column, splitting a root mapping's sequence
//!   (Kubernetes `items`) into one object per item. One bad document never hides the others. JSON
//!   items are found as raw slices and typed straight from their text; a large YAML list in
//!   `kubectl` layout is parsed on several threads, its items handed on in input order.
//! - [`parse_value`] reads a single document through the same located reader (for configurations
//!   embedded in other objects, such as a ConfigMap's keys).
//! - [`read_json_pieces`] reads a large JSON List from a reader in pieces, handing on the same
//!   objects as [`read_stream`] without the whole text in memory, or says to read it whole.
//! - [`gather`] turns command-line paths (files, directories, `-` for standard input) into inputs,
//!   and [`read_file`] reads one file: every file the tool reads comes through these, bounded.
//!   [`gather_large`] leaves large JSON files to be read in pieces when they are used.
//! - [`tree`] and [`de`]: the located value tree and the serde deserializer over it.
//! - [`ValidationContext`]: reading a configuration file (the policy, the plan, the advisory data) and
//!   collecting its checks' errors, each located at its value.
//!
//! Architecture invariant: reading never panics and never stops at the first error; it returns
//! what it could read plus a diagnostic for each document or object it could not.

pub mod de;
mod file;
mod inputs;
mod json;
mod object;
mod parallel;
mod pieces;
mod stream;
pub mod tree;
mod validate;
mod yaml;

pub use file::{decode, read_file, read_stdin};
pub use inputs::{
    gather, gather_large, gather_with, GatherOptions, Gathered, Input, LargeFile, MAX_WALK_DEPTH,
    MAX_WALK_ENTRIES,
};
pub use object::{Entry, Format, Object, ReadOptions};
pub use pieces::{read_json_pieces, Pieces};
pub use stream::{read_all, read_stream};
pub use tree::{Node, Pos, Value};
pub use validate::ValidationContext;

use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use serde::de::DeserializeOwned;
use serde_saphyr::{budget::Budget, options::DuplicateKeyPolicy, Options};

/// What one input may cost. The defaults suit policy and plan files and cluster dumps alike; an
/// error for a broken bound names the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest input file, in bytes (a `kubectl get -o yaml` dump of a large cluster is one file).
    pub max_file_bytes: usize,
    /// Largest single object: a document, or one item of a document's split sequence. Kubernetes
    /// itself stores objects of at most about 1.5 MiB (etcd's default request size).
    pub max_object_bytes: usize,
    /// Deepest nesting of mappings and sequences in an object, YAML or JSON (a JSON document is
    /// bounded by the JSON parser at 128 levels as well, named in its error).
    pub max_depth: usize,
    /// Most alias references (`*name`) in one document.
    pub max_aliases: usize,
    /// Most nodes that aliases may add to one document; alias bombs stop here.
    pub max_alias_expansion: usize,
    /// Largest single scalar, in bytes.
    pub max_scalar_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 1 << 30,
            max_object_bytes: 32 << 20,
            max_depth: 64,
            max_aliases: 1_000,
            max_alias_expansion: 10_000,
            max_scalar_bytes: 1 << 20,
        }
    }
}

impl Limits {
    fn options(&self, text_len: usize) -> Options {
        let mut budget = Budget::default();
        budget.max_depth = self.max_depth;
        budget.max_aliases = self.max_aliases;
        // Scale the event budgets with the text: a document has at most a few events per byte,
        // while aliases are the only way to get more events than bytes.
        budget.max_events = text_len.saturating_mul(2).max(1_000);
        budget.max_nodes = text_len.max(1_000);
        budget.max_total_scalar_bytes = text_len.max(1_000);
        budget.max_recorded_anchor_events = text_len.max(1_000);
        let mut options = Options::default();
        options.budget = Some(budget);
        options.duplicate_keys = DuplicateKeyPolicy::Error;
        // `defaultMode: 0644` reads as 420, as kubectl reads it.
        options.legacy_octal_numbers = true;
        // A string field given a plain scalar that YAML 1.1 reads as a boolean or a number
        // (`tenant: on`, `version: 1.10`) must be quoted, as the cluster reader requires; tags the
        // reader does not know are errors, not dropped.
        options.no_schema = true;
        options.reject_unsupported_tags = true;
        options.with_snippet = false;
        options
    }
}

/// Reads one document of `text` (from `file`, for locations) into `T`.
///
/// Use `#[serde(deny_unknown_fields)]` on `T` to make unknown fields an error with their location.
pub fn parse_document<T: DeserializeOwned>(
    text: &str,
    file: &str,
    limits: &Limits,
) -> Result<T, Diagnostic> {
    if text.len() > limits.max_file_bytes {
        return Err(Diagnostic::error(
            Code::OverLimit,
            Location::new(file, 0, 0),
            format!(
                "input is {} bytes, over the limit of {} bytes",
                text.len(),
                limits.max_file_bytes
            ),
        ));
    }
    if let Some(d) = oversized_scalar(text, file, limits) {
        return Err(d);
    }
    serde_saphyr::from_str_with_options::<T>(text, limits.options(text.len()))
        .map_err(|e| document_error(&e, text, file))
}

/// A serde-saphyr error on `text` as a located diagnostic, with the offending scalar quoted and
/// what to write instead where serde-saphyr's own message names only a type.
fn document_error(e: &serde_saphyr::Error, text: &str, file: &str) -> Diagnostic {
    let mut d = saphyr_error(e, file);
    let inner = unwrap_error(e);
    match inner {
        serde_saphyr::Error::InvalidScalar { ty, .. } => {
            let value = scalar_at(text, d.location.line, d.location.column);
            d.message = match expected(ty) {
                Some(what) => format!("`{value}` is not {what}"),
                None => format!("`{value}` is not a valid {ty}"),
            };
        }
        serde_saphyr::Error::QuotingRequired { value, .. } => {
            let quoted = if value.contains('"') {
                format!("'{}'", value.replace('\'', "''"))
            } else {
                format!("\"{value}\"")
            };
            d.message = format!(
                "`{value}` is a boolean, a number or null to YAML readers, but this field is a string: quote it, {quoted}"
            );
        }
        _ => {}
    }
    d
}

fn unwrap_error(mut e: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = e
    {
        e = error;
    }
    e
}

/// What a value of a primitive type must be, in words.
fn expected(ty: &str) -> Option<String> {
    let range = |min: i128, max: u128| format!("a whole number from {min} to {max}");
    Some(match ty {
        "u8" => range(0, u8::MAX.into()),
        "u16" => range(0, u16::MAX.into()),
        "u32" => range(0, u32::MAX.into()),
        "u64" | "usize" => range(0, u64::MAX.into()),
        "i8" => range(i8::MIN.into(), i8::MAX as u128),
        "i16" => range(i16::MIN.into(), i16::MAX as u128),
        "i32" => range(i32::MIN.into(), i32::MAX as u128),
        "i64" | "isize" => range(i64::MIN.into(), i64::MAX as u128),
        "f32" | "f64" => "a number".to_string(),
        "bool" => "a boolean (true or false)".to_string(),
        _ => return None,
    })
}

/// The plain scalar that starts at `line`:`column` of `text` (up to the end of its line, a comment
/// or a flow delimiter), for messages.
fn scalar_at(text: &str, line: u32, column: u32) -> String {
    let Some(l) = text.split('\n').nth(line.saturating_sub(1) as usize) else {
        return String::new();
    };
    let rest: String = l.chars().skip(column.saturating_sub(1) as usize).collect();
    let end = rest.find([',', ']', '}', '#', '\r']).unwrap_or(rest.len());
    rest[..end].trim().chars().take(80).collect()
}

/// Reads a single document of `text` through the located reader into `T`; errors name the line and
/// column of the offending value, shifted down by `line_offset` lines (for text embedded in another
/// file, such as a ConfigMap key written as a block scalar). A stream of several documents, or an
/// empty one, is an error.
pub fn parse_value<T: DeserializeOwned>(
    text: &str,
    file: &str,
    limits: &Limits,
    line_offset: u32,
) -> Result<T, Diagnostic> {
    parse_one(text, file, limits, line_offset, Format::Auto)
}

/// Reads one JSON document into `T` through the JSON reader: a duplicate key, a string over the
/// scalar bound or a value of the wrong type is an error naming its line and column.
pub fn parse_json<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, Diagnostic> {
    parse_one(text, file, &Limits::default(), 0, Format::Json)
}

fn parse_one<T: DeserializeOwned>(
    text: &str,
    file: &str,
    limits: &Limits,
    line_offset: u32,
    format: Format,
) -> Result<T, Diagnostic> {
    let options = ReadOptions {
        limits: *limits,
        split_key: None,
        format,
    };
    let shift = |mut d: Diagnostic| {
        if d.location.line > 0 {
            d.location.line = d.location.line.saturating_add(line_offset);
        }
        d
    };
    let mut entries = read_all(text, file, &options).into_iter();
    let first = entries.next();
    if let Some(extra) = entries.next() {
        let location = match &extra {
            Entry::Object(o) | Entry::Container { object: o, .. } => o.location(),
            Entry::Invalid { diagnostic, .. } => diagnostic.location.clone(),
        };
        return Err(shift(Diagnostic::error(
            Code::NotOneDocument,
            location,
            "expected one document, found several",
        )));
    }
    match first {
        Some(Entry::Object(o)) => o.deserialize::<T>().map_err(shift),
        Some(Entry::Container { object, .. }) => object.deserialize::<T>().map_err(shift),
        Some(Entry::Invalid { diagnostic, .. }) => Err(shift(diagnostic)),
        None => Err(Diagnostic::error(
            Code::NotOneDocument,
            Location::new(file, line_offset.saturating_add(1), 1),
            "the document is empty",
        )),
    }
}

/// Turns a serde-saphyr error into a located diagnostic.
pub fn saphyr_error(e: &serde_saphyr::Error, file: &str) -> Diagnostic {
    let (line, column) = e
        .location()
        .map(|l| (position(l.line()), position(l.column())))
        .unwrap_or((0, 0));
    Diagnostic::error(
        saphyr_code(unwrap_error(e)),
        Location::new(file, line, column),
        error_message(e),
    )
}

/// The code of a serde-saphyr error: the reader's bounds, YAML syntax, tags, several documents, and
/// otherwise a value that does not fit its field (unknown keys, wrong types, YAML 1.1 scalars).
fn saphyr_code(e: &serde_saphyr::Error) -> Code {
    use serde_saphyr::Error as E;
    match e {
        E::AliasReplayCounterOverflow { .. }
        | E::AliasReplayLimitExceeded { .. }
        | E::AliasExpansionLimitExceeded { .. }
        | E::AliasReplayStackDepthExceeded { .. }
        | E::Budget { .. } => Code::OverLimit,
        E::MultipleDocuments { .. } => Code::NotOneDocument,
        E::DuplicateMappingKey { .. } => Code::DuplicateKey,
        E::TaggedScalarCannotDeserializeIntoString { .. } | E::UnsupportedTag { .. } => {
            Code::UnsupportedTag
        }
        E::Eof { .. }
        | E::UnexpectedContainerEndWhileSkippingNode { .. }
        | E::UnexpectedContainerEndWhileReadingKeyNode { .. }
        | E::ContainerEndMismatch { .. }
        | E::MergeValueNotMapOrSeqOfMaps { .. }
        | E::MergeKeyNotAllowed { .. }
        | E::FoldedBlockScalarMustIndentContent { .. }
        | E::UnknownAnchor { .. }
        | E::IndentationError { .. } => Code::InvalidYaml,
        _ => Code::InvalidValue,
    }
}

/// A line or column from the parser as the model stores it (saturating at `u32::MAX`).
pub fn position(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Where a value read as `serde_saphyr::Spanned` stands in `file`: policy and plan validation point
/// their errors here.
pub fn spanned_location<T>(file: &str, value: &serde_saphyr::Spanned<T>) -> Location {
    Location::new(
        file,
        position(value.referenced.line()),
        position(value.referenced.column()),
    )
}

/// The message of a serde-saphyr error without its own location prefix or snippet.
fn error_message(e: &serde_saphyr::Error) -> String {
    let text = e.without_snippet().to_string();
    // serde-saphyr appends " at line X, column Y"; the diagnostic carries the location itself.
    let text = match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    text.trim().trim_end_matches('.').to_string()
}

/// Finds a single line longer than the scalar bound (a plain or quoted scalar cannot be longer than
/// its line unless it is a block scalar, whose lines are each bounded the same way).
fn oversized_scalar(text: &str, file: &str, limits: &Limits) -> Option<Diagnostic> {
    let mut line_no = 0u32;
    for line in text.split('\n') {
        line_no = line_no.saturating_add(1);
        if line.len() > limits.max_scalar_bytes {
            return Some(Diagnostic::error(
                Code::OverLimit,
                Location::new(file, line_no, 1),
                format!(
                    "line is {} bytes, over the scalar limit of {} bytes",
                    line.len(),
                    limits.max_scalar_bytes
                ),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        #[serde(default)]
        items: Vec<String>,
    }

    #[test]
    fn unknown_field_names_its_line() {
        let err = parse_document::<Doc>("name: a\nitmes: [b]\n", "p.yaml", &Limits::default())
            .unwrap_err();
        assert_eq!(err.location.file, "p.yaml");
        assert_eq!(err.location.line, 2, "{err}");
        assert!(err.message.contains("itmes"), "{err}");
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        let err =
            parse_document::<Doc>("name: a\nname: b\n", "p.yaml", &Limits::default()).unwrap_err();
        assert_eq!(err.location.line, 2, "{err}");
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let started = std::time::Instant::now();
        let err = parse_document::<serde_json::Value>(&text, "bomb.yaml", &Limits::default())
            .unwrap_err();
        assert!(started.elapsed().as_secs() < 5);
        assert!(err.is_error());
    }

    #[test]
    fn strings_that_yaml_reads_as_other_types_must_be_quoted() {
        let err = parse_document::<Doc>("name: on\n", "p.yaml", &Limits::default()).unwrap_err();
        assert_eq!((err.location.line, err.location.column), (1, 7), "{err}");
        assert!(err.message.contains("quote it, \"on\""), "{err}");
        let err =
            parse_document::<Doc>("name: \"x\"\nitems: [1.10]\n", "p.yaml", &Limits::default())
                .unwrap_err();
        assert_eq!(err.location.line, 2, "{err}");
        let ok = parse_document::<Doc>("name: 'on'\n", "p.yaml", &Limits::default()).unwrap();
        assert_eq!(ok.name, "on");
    }

    #[test]
    fn unknown_tags_are_refused() {
        let err =
            parse_document::<Doc>("name: !secret x\n", "p.yaml", &Limits::default()).unwrap_err();
        assert_eq!(err.location.line, 1, "{err}");
    }

    #[test]
    fn out_of_range_numbers_say_what_is_allowed() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct N {
            replicas: u32,
        }
        let err =
            parse_document::<N>("replicas: -1 # two\n", "p.yaml", &Limits::default()).unwrap_err();
        assert_eq!(err.location.line, 1, "{err}");
        assert_eq!(
            err.message, "`-1` is not a whole number from 0 to 4294967295",
            "{err}"
        );
    }

    #[test]
    fn huge_scalar_is_refused() {
        let text = format!("name: {}\n", "x".repeat(2 << 20));
        let err = parse_document::<Doc>(&text, "big.yaml", &Limits::default()).unwrap_err();
        assert_eq!(err.location.line, 1);
        assert_eq!(err.code, Code::OverLimit, "{err}");
    }
}
