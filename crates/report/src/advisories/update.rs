//! What `gpu-trust advisories update` did, as text: where it read, what it kept, what it could not.

use crate::text::{e, plural};
use std::fmt::Write as _;

/// One update, as the command saw it.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The repository or mirror read.
    pub from: String,
    /// The cache's folder.
    pub cache: String,
    /// The years whose indexes were read.
    pub years: Vec<u16>,
    /// Bulletin ids read for the first time, revised, already current, held by the built-in data.
    pub added: Vec<String>,
    pub revised: Vec<String>,
    pub unchanged: Vec<String>,
    pub known: Vec<String>,
    /// Bulletins in the cache now.
    pub kept: usize,
    /// The last day every listed bulletin was read, if one was.
    pub checked: Option<String>,
    /// Problems (printed on standard error, located at their address).
    pub errors: usize,
}

fn ids(list: &[String]) -> String {
    if list.is_empty() {
        String::new()
    } else {
        format!(" ({})", e(&list.join(", ")))
    }
}

/// The summary, a few lines ending in a newline.
pub fn render(s: &Summary) -> String {
    let mut out = String::new();
    let years: Vec<String> = s.years.iter().map(u16::to_string).collect();
    let _ = if years.is_empty() {
        writeln!(out, "Read {}: no index could be read.", e(&s.from))
    } else {
        writeln!(
            out,
            "Read {}: the index{} of {}.",
            e(&s.from),
            if years.len() == 1 { "" } else { "es" },
            years.join(", ")
        )
    };
    let _ = writeln!(
        out,
        "New: {}{}. Revised: {}{}. Unchanged: {}. In the built-in data already: {}{}.",
        plural(s.added.len(), "bulletin", "bulletins"),
        ids(&s.added),
        plural(s.revised.len(), "bulletin", "bulletins"),
        ids(&s.revised),
        plural(s.unchanged.len(), "bulletin", "bulletins"),
        plural(s.known.len(), "bulletin", "bulletins"),
        ids(&s.known),
    );
    let _ = writeln!(
        out,
        "Cache: {}, {}; {}.",
        e(&s.cache),
        plural(s.kept, "bulletin", "bulletins"),
        match (&s.checked, s.errors) {
            (Some(day), 0) => format!("every listed bulletin read on {day}"),
            (_, n) => format!(
                "{} (above, on standard error): the last good data stays in use",
                plural(n, "problem", "problems")
            ),
        }
    );
    if s.errors == 0 {
        out.push_str("Every command now reads these bulletins with the built-in data, offline.\n");
    }
    out
}
