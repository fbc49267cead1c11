//! Large list dumps read on several threads.
//!
//! `kubectl get -o yaml` prints one root mapping whose `items:` is a block sequence at column 0. In
//! block YAML, no line of an item's text can start at column 0 (nested content is indented, and a
//! document marker would end the document), so each line starting with `-` at column 0 opens an item.
//! The items are split there into chunks that parse independently, on as many threads as the machine
//! offers; results are handed on strictly in input order, with a bounded number of chunks in flight,
//! so memory stays bounded as in the sequential reader. Everything else (several documents,
//! directives, anything that may be an alias, a flow-style root) goes to the sequential reader.

use crate::object::{Entry, ReadOptions};
use crate::yaml;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// Inputs smaller than this are read sequentially (small in unit tests, to exercise the chunking).
const PARALLEL_BYTES: usize = if cfg!(test) { 32 << 10 } else { 8 << 20 };
/// Text per chunk.
const CHUNK_BYTES: usize = if cfg!(test) { 4 << 10 } else { 1 << 20 };

/// Reads `text` on several threads when it has the shape described above; returns `false`, having
/// handed nothing on, when it does not (the caller then reads it sequentially).
pub(crate) fn read<'a>(
    text: &'a str,
    file: &'a str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Entry<'a>),
) -> bool {
    let Some(key) = options.split_key.as_deref() else {
        return false;
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if text.len() < PARALLEL_BYTES || threads < 2 {
        return false;
    }
    let Some(plan) = plan(text, key) else {
        return false;
    };
    // The root mapping without its items (same lines, item lines left empty), for the container.
    let mut root =
        String::with_capacity(plan.region.0 + (text.len() - plan.region.1) + plan.region_lines);
    root.push_str(&text[..plan.region.0]);
    root.extend(std::iter::repeat_n('\n', plan.region_lines));
    root.push_str(&text[plan.region.1..]);

    let chunks = &plan.chunks;
    let next = AtomicUsize::new(0);
    // Permits bound the chunks read ahead of the sink.
    let window = threads * 2;
    let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(window);
    for _ in 0..window {
        let _ = permit_tx.send(());
    }
    // Dropped on an error, which stops the workers at their next chunk.
    let mut permit_tx = Some(permit_tx);
    let permit_rx = Arc::new(Mutex::new(permit_rx));
    let (result_tx, result_rx) = mpsc::channel();
    let mut failed = false;
    let mut items = 0usize;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let result_tx = result_tx.clone();
            let permit_rx = Arc::clone(&permit_rx);
            let next = &next;
            scope.spawn(move || loop {
                let permit = match permit_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                if permit.is_err() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(c) = chunks.get(i) else { return };
                let r = yaml::read_chunk(
                    &text[c.start..c.end],
                    file,
                    &options.limits,
                    c.line_offset,
                    c.first,
                );
                if result_tx.send((i, r)).is_err() {
                    return;
                }
            });
        }
        drop(result_tx);
        let mut pending = BTreeMap::new();
        let mut expected = 0usize;
        for (i, r) in result_rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&expected) {
                expected += 1;
                if failed {
                    continue;
                }
                match r {
                    Ok(entries) => {
                        items += entries.len();
                        entries.into_iter().for_each(&mut *sink);
                    }
                    Err((entries, d)) => {
                        entries.into_iter().for_each(&mut *sink);
                        sink(Entry::Invalid {
                            document: 1,
                            item: None,
                            diagnostic: d,
                        });
                        failed = true;
                    }
                }
                if failed {
                    // The workers finish the chunks they hold and find no more permits.
                    permit_tx = None;
                } else if let Some(tx) = &permit_tx {
                    let _ = tx.send(());
                }
            }
            if failed {
                pending.clear();
            }
        }
        drop(permit_tx.take());
    });
    if failed {
        return true;
    }
    let container = ReadOptions {
        limits: options.limits,
        split_key: None,
        format: crate::Format::Yaml,
    };
    let mut root_entries = Vec::new();
    yaml::read_sequential(&root, file, &container, &mut |e| root_entries.push(e));
    for e in root_entries {
        match e {
            Entry::Object(o) => {
                if let Some(object) = o.into_owned(file) {
                    sink(Entry::Container { object, items });
                }
            }
            Entry::Container { object, .. } => {
                if let Some(object) = object.into_owned(file) {
                    sink(Entry::Container { object, items });
                }
            }
            Entry::Invalid {
                document,
                item,
                diagnostic,
            } => sink(Entry::Invalid {
                document,
                item,
                diagnostic,
            }),
        }
    }
    true
}

struct Chunk {
    start: usize,
    end: usize,
    line_offset: u32,
    first: usize,
}

struct Plan {
    /// Byte range of the item lines.
    region: (usize, usize),
    region_lines: usize,
    chunks: Vec<Chunk>,
}

/// Finds the split key's block sequence at column 0 and cuts it into chunks at item starts; `None`
/// when the text is not a single block-mapping document of that shape, or may hold aliases.
fn plan(text: &str, key: &str) -> Option<Plan> {
    let bytes = text.as_bytes();
    if may_hold_aliases(bytes) {
        return None;
    }
    #[derive(PartialEq)]
    enum State {
        Before,
        Items,
        After,
    }
    let mut state = State::Before;
    let mut region_start = 0usize;
    let mut region_end = bytes.len();
    let mut item_starts: Vec<(usize, u32)> = Vec::new();
    let mut line_start = 0usize;
    let mut line_no = 0u32;
    while line_start < bytes.len() {
        let line_end =
            memchr::memchr(b'\n', &bytes[line_start..]).map_or(bytes.len(), |p| line_start + p);
        let line = &text[line_start..line_end];
        line_no = line_no.saturating_add(1);
        let first = line.as_bytes().first().copied();
        if line.starts_with("---") || line.starts_with("...") || first == Some(b'%') {
            return None;
        }
        let indented_or_blank = matches!(first, None | Some(b' ' | b'\t' | b'#' | b'\r'));
        match state {
            State::Items => {
                if line == "-" || line.starts_with("- ") || line.starts_with("-\t") {
                    item_starts.push((line_start, line_no));
                } else if !indented_or_blank {
                    region_end = line_start;
                    state = State::After;
                }
            }
            State::Before | State::After if indented_or_blank => {}
            State::Before | State::After => {
                // A root key line; anything else at column 0 is left to the sequential reader.
                if !first.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'"' || b == b'\'') {
                    return None;
                }
                if line.trim_end().strip_suffix(':') == Some(key) {
                    if state == State::After {
                        return None;
                    }
                    state = State::Items;
                    region_start = (line_end + 1).min(bytes.len());
                }
            }
        }
        line_start = line_end + 1;
    }
    if state == State::Before {
        return None;
    }
    let first_item = *item_starts.first()?;
    // Only blank lines and comments may come between the key and its first item.
    if !text[region_start..first_item.0]
        .lines()
        .all(|l| l.trim().is_empty() || l.starts_with('#'))
    {
        return None;
    }
    let mut chunks = Vec::new();
    let mut chunk_start = first_item;
    let mut first_index = 0usize;
    for (i, &(off, line)) in item_starts.iter().enumerate().skip(1) {
        if off - chunk_start.0 >= CHUNK_BYTES {
            chunks.push(Chunk {
                start: chunk_start.0,
                end: off,
                line_offset: chunk_start.1.saturating_sub(1),
                first: first_index,
            });
            first_index = i;
            chunk_start = (off, line);
        }
    }
    chunks.push(Chunk {
        start: chunk_start.0,
        end: region_end,
        line_offset: chunk_start.1.saturating_sub(1),
        first: first_index,
    });
    let region_lines = memchr::memchr_iter(b'\n', &bytes[region_start..region_end]).count();
    Some(Plan {
        region: (region_start, region_end),
        region_lines,
        chunks,
    })
}

/// Whether the text may use aliases (`*name` after an indicator or space): then items may refer to
/// anchors in other items and must be read in one pass. False alarms only cost speed.
fn may_hold_aliases(bytes: &[u8]) -> bool {
    memchr::memchr_iter(b'*', bytes).any(|i| {
        let before = if i == 0 { b'\n' } else { bytes[i - 1] };
        let after = bytes.get(i + 1).copied().unwrap_or(b' ');
        matches!(before, b' ' | b'\t' | b'\n' | b'[' | b'{' | b',')
            && (after.is_ascii_alphanumeric() || after == b'_' || after == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_all;
    use crate::tree::Value;

    fn options() -> ReadOptions {
        ReadOptions {
            split_key: Some("items".into()),
            ..ReadOptions::default()
        }
    }

    /// (document, item, line, column, name or error) of one entry.
    type Line = (usize, Option<usize>, u32, u32, String);

    fn summary(text: &str) -> Vec<Line> {
        read_all(text, "big.yaml", &options())
            .into_iter()
            .map(|e| match e {
                Entry::Object(o) => {
                    let name = o
                        .node()
                        .and_then(|n| n.get("metadata"))
                        .and_then(|m| m.get("name"))
                        .and_then(|n| n.as_str())
                        .unwrap_or("")
                        .to_string();
                    (o.document(), o.item(), o.pos().line, o.pos().column, name)
                }
                Entry::Container { object, items } => {
                    let kind = object
                        .node()
                        .and_then(|n| n.get("kind"))
                        .map(|k| matches!(&k.value, Value::Scalar(s) if s.text == "List"));
                    (
                        object.document(),
                        None,
                        0,
                        0,
                        format!("container of {items}, list {kind:?}"),
                    )
                }
                Entry::Invalid {
                    document,
                    item,
                    diagnostic,
                } => (
                    document,
                    item,
                    diagnostic.location.line,
                    diagnostic.location.column,
                    format!("!{}", diagnostic.message),
                ),
            })
            .collect()
    }

    fn big_list(items: usize, broken_at: Option<usize>) -> String {
        let mut text = String::from("apiVersion: v1\nitems:\n");
        for i in 0..items {
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: pod-{i}\n  spec:\n    containers:\n    - image: app:1\n      name: c\n"
            ));
            if i == 77 {
                text.push_str("  spec: {duplicate: true}\n");
            }
            if broken_at == Some(i) {
                text.push_str("  status: [unclosed\n");
            }
        }
        text.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
        text
    }

    /// The same text read in parallel and, with a trailing comment that looks like an alias,
    /// sequentially.
    fn both(text: &str) -> (Vec<Line>, Vec<Line>) {
        assert!(text.len() > PARALLEL_BYTES);
        assert!(plan(text, "items").is_some_and(|p| p.chunks.len() > 4));
        let sequential = format!("{text}# *x\n");
        assert!(plan(&sequential, "items").is_none());
        (summary(text), summary(&sequential))
    }

    #[test]
    fn parallel_and_sequential_reading_agree() {
        let (parallel, sequential) = both(&big_list(2_000, None));
        assert_eq!(parallel.len(), 2_001);
        assert_eq!(parallel, sequential);
        assert!(
            parallel[77].4.contains("duplicate key `spec`"),
            "{:?}",
            parallel[77]
        );
        assert_eq!(parallel[1_999].4, "pod-1999");
        assert_eq!(parallel[2_000].4, "container of 2000, list Some(true)");
    }

    #[test]
    fn a_syntax_error_deep_in_a_large_list_is_the_same_error() {
        let (parallel, sequential) = both(&big_list(2_000, Some(1_500)));
        let err = |v: &[Line]| {
            v.iter()
                .find(|e| e.1.is_none() && e.4.starts_with('!'))
                .cloned()
        };
        assert!(err(&parallel).is_some(), "{:?}", parallel.last());
        assert_eq!(err(&parallel), err(&sequential));
        assert!(!parallel.iter().any(|e| e.4.starts_with("container")));
    }

    mod no_panic {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]

            #[test]
            fn mutated_large_lists_never_panic(cuts in proptest::collection::vec((0usize..60_000, 0usize..40, "[-: \n\t#a-z\\[\\]{},'\"&*|>]{0,6}"), 1..6)) {
                let mut text = big_list(400, None);
                for (at, len, insert) in cuts {
                    let at = at.min(text.len());
                    let end = (at + len).min(text.len());
                    if text.is_char_boundary(at) && text.is_char_boundary(end) {
                        text.replace_range(at..end, &insert);
                    }
                }
                let _ = summary(&text);
            }
        }
    }

    #[test]
    fn other_shapes_stay_sequential() {
        let list = big_list(600, None);
        assert!(plan(&list, "items").is_some());
        assert!(plan(&format!("---\n{list}"), "items").is_none());
        assert!(plan(&format!("{list}---\nkind: Other\n"), "items").is_none());
        assert!(plan(&list.replace("items:\n", "items: &all\n"), "items").is_none());
        assert!(plan(
            &list.replacen("apiVersion: v1\nitems", "- oops\nitems", 1),
            "items"
        )
        .is_none());
        assert!(plan(&list, "entries").is_none());
    }
}
