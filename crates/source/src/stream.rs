//! Reading a whole input (a YAML stream or JSON text) into located objects, one at a time.
//!
//! [`read_stream`] hands each object to a sink as soon as it is read, so a large input never lives
//! in memory as one tree: a document is one object, and when [`ReadOptions::split_key`] names a
//! key, a root mapping whose entry of that key is a sequence is handed on item by item, followed by
//! the rest of the mapping as a [`Entry::Container`].
//!
//! Error boundaries: a YAML syntax error makes its document [`Entry::Invalid`] and reading resumes
//! at the next document; a broken bound (object size, depth, aliases, scalar size) or a duplicate
//! key makes only that object invalid. When a document turns out invalid after some of its items
//! were handed on, the sink receives `Invalid { item: None, .. }` for it and should drop them.

use crate::object::{Entry, Format, ReadOptions};
use crate::{json, parallel, yaml};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};

/// Reads `text` (named `file` in locations) and hands every object to `sink`, in input order.
pub fn read_stream<'a>(
    text: &'a str,
    file: &'a str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Entry<'a>),
) {
    if text.len() > options.limits.max_file_bytes {
        sink(Entry::Invalid {
            document: 1,
            item: None,
            diagnostic: Diagnostic::error(
                Code::OverLimit,
                Location::new(file, 0, 0),
                format!(
                    "input is {} bytes, over the file size limit of {} bytes (max_file_bytes)",
                    text.len(),
                    options.limits.max_file_bytes
                ),
            ),
        });
        return;
    }
    let format = match options.format {
        Format::Auto => match Format::for_name(file) {
            Format::Auto => Format::Auto,
            f => f,
        },
        f => f,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match format {
        Format::Yaml => read_yaml(text, file, options, sink),
        Format::Json => {
            if let Err(d) = json::read(text, file, options, sink) {
                sink(Entry::Invalid {
                    document: 1,
                    item: None,
                    diagnostic: d,
                });
            }
        }
        Format::Auto => {
            let looks_json = matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['));
            if !looks_json || json::read(text, file, options, sink).is_err() {
                read_yaml(text, file, options, sink);
            }
        }
    }
}

/// Reads everything into a vector (for small inputs and tests).
pub fn read_all<'a>(text: &'a str, file: &'a str, options: &ReadOptions) -> Vec<Entry<'a>> {
    let mut out = Vec::new();
    read_stream(text, file, options, &mut |e| out.push(e));
    out
}

/// Reads a YAML stream: a large list dump on several threads when it has the shape for it, else
/// document by document on this thread.
fn read_yaml<'a>(
    text: &'a str,
    file: &'a str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Entry<'a>),
) {
    if !parallel::read(text, file, options, sink) {
        yaml::read_sequential(text, file, options, sink);
    }
}
