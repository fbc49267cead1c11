//! From command-line paths to input texts: files as named, directories walked recursively for
//! `.yaml`, `.yml` and `.json` files (in name order, hidden entries skipped), `-` for standard input.

use crate::Limits;
use gpu_trust_model::{Diagnostic, Location};
use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One input text and the name locations use for it (the path as given, or `-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub name: String,
    pub text: String,
}

/// Reads every path. Unreadable files, files over the size bound and text that is not UTF-8 are
/// diagnostics (errors); the other inputs are still returned. Standard input is read at most once.
pub fn gather(
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    limits: &Limits,
) -> (Vec<Input>, Vec<Diagnostic>) {
    let mut inputs = Vec::new();
    let mut diagnostics = Vec::new();
    let mut stdin_read = false;
    let mut seen_dirs = BTreeSet::new();
    for path in paths {
        if path.as_os_str() == "-" {
            if stdin_read {
                diagnostics.push(Diagnostic::error(
                    Location::new("-", 0, 0),
                    "standard input is named more than once",
                ));
                continue;
            }
            stdin_read = true;
            let mut bytes = Vec::new();
            let cap = u64::try_from(limits.max_file_bytes).unwrap_or(u64::MAX);
            match stdin.take(cap.saturating_add(1)).read_to_end(&mut bytes) {
                Ok(_) => push_bytes(
                    "-".to_string(),
                    bytes,
                    limits,
                    &mut inputs,
                    &mut diagnostics,
                ),
                Err(e) => diagnostics.push(Diagnostic::error(
                    Location::new("-", 0, 0),
                    format!("cannot read standard input: {e}"),
                )),
            }
            continue;
        }
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => walk(
                path,
                limits,
                &mut inputs,
                &mut diagnostics,
                &mut seen_dirs,
                0,
            ),
            Ok(_) => read_file(path, limits, &mut inputs, &mut diagnostics),
            Err(e) => diagnostics.push(Diagnostic::error(
                Location::new(display(path), 0, 0),
                format!("cannot read: {e}"),
            )),
        }
    }
    (inputs, diagnostics)
}

/// Directories nested deeper than this are not walked (a guard against link loops that
/// canonical paths do not catch).
const MAX_WALK_DEPTH: usize = 64;

fn walk(
    dir: &Path,
    limits: &Limits,
    inputs: &mut Vec<Input>,
    diagnostics: &mut Vec<Diagnostic>,
    seen: &mut BTreeSet<PathBuf>,
    depth: usize,
) {
    if depth > MAX_WALK_DEPTH {
        diagnostics.push(Diagnostic::warning(
            Location::new(display(dir), 0, 0),
            format!("directory nested deeper than {MAX_WALK_DEPTH} levels: not read"),
        ));
        return;
    }
    if let Ok(canonical) = fs::canonicalize(dir) {
        if !seen.insert(canonical) {
            return;
        }
    }
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            diagnostics.push(Diagnostic::error(
                Location::new(display(dir), 0, 0),
                format!("cannot read directory: {e}"),
            ));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        match fs::metadata(&path) {
            Ok(m) if m.is_dir() => walk(&path, limits, inputs, diagnostics, seen, depth + 1),
            Ok(_) if has_input_extension(&path) => read_file(&path, limits, inputs, diagnostics),
            Ok(_) => {}
            Err(e) => diagnostics.push(Diagnostic::error(
                Location::new(display(&path), 0, 0),
                format!("cannot read: {e}"),
            )),
        }
    }
}

fn has_input_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json"))
}

fn read_file(
    path: &Path,
    limits: &Limits,
    inputs: &mut Vec<Input>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let name = display(path);
    if let Ok(m) = fs::metadata(path) {
        if m.len() > u64::try_from(limits.max_file_bytes).unwrap_or(u64::MAX) {
            diagnostics.push(Diagnostic::error(
                Location::new(name, 0, 0),
                format!(
                    "file is {} bytes, over the file size limit of {} bytes (max_file_bytes)",
                    m.len(),
                    limits.max_file_bytes
                ),
            ));
            return;
        }
    }
    match fs::read(path) {
        Ok(bytes) => push_bytes(name, bytes, limits, inputs, diagnostics),
        Err(e) => diagnostics.push(Diagnostic::error(
            Location::new(name, 0, 0),
            format!("cannot read: {e}"),
        )),
    }
}

fn push_bytes(
    name: String,
    bytes: Vec<u8>,
    limits: &Limits,
    inputs: &mut Vec<Input>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if bytes.len() > limits.max_file_bytes {
        diagnostics.push(Diagnostic::error(
            Location::new(name, 0, 0),
            format!(
                "input is over the file size limit of {} bytes (max_file_bytes)",
                limits.max_file_bytes
            ),
        ));
        return;
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        diagnostics.push(Diagnostic::error(
            Location::new(name, 1, 1),
            "input is UTF-16; convert it to UTF-8",
        ));
        return;
    }
    match String::from_utf8(bytes) {
        Ok(text) => inputs.push(Input { name, text }),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let before = String::from_utf8_lossy(&bytes[..valid]);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            diagnostics.push(Diagnostic::error(
                Location::new(
                    name,
                    u32::try_from(line).unwrap_or(u32::MAX),
                    u32::try_from(column).unwrap_or(u32::MAX),
                ),
                "input is not valid UTF-8",
            ));
        }
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_walked_in_order_and_hidden_entries_skipped() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("b")).unwrap();
        fs::create_dir(dir.path().join(".git")).unwrap();
        fs::write(dir.path().join("b/z.yml"), "a: 1\n").unwrap();
        fs::write(dir.path().join("a.json"), "{}").unwrap();
        fs::write(dir.path().join("notes.txt"), "x").unwrap();
        fs::write(dir.path().join(".git/c.yaml"), "a: 1\n").unwrap();
        fs::write(dir.path().join("bad.yaml"), [b'a', b':', b' ', 0xC3, 0x28]).unwrap();
        let (inputs, diags) = gather(
            &[dir.path().to_path_buf()],
            &mut std::io::empty(),
            &Limits::default(),
        );
        let names: Vec<_> = inputs
            .iter()
            .map(|i| {
                Path::new(&i.name)
                    .strip_prefix(dir.path())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["a.json", "b/z.yml"]);
        assert_eq!(diags.len(), 1);
        assert_eq!((diags[0].location.line, diags[0].location.column), (1, 4));
    }

    #[test]
    fn stdin_is_read_once() {
        let mut stdin: &[u8] = b"kind: Pod\n";
        let (inputs, diags) = gather(
            &[PathBuf::from("-"), PathBuf::from("-")],
            &mut stdin,
            &Limits::default(),
        );
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].name, "-");
        assert_eq!(diags.len(), 1);
    }

    #[test]
    fn missing_file_is_an_error() {
        let (inputs, diags) = gather(
            &[PathBuf::from("does/not/exist.yaml")],
            &mut std::io::empty(),
            &Limits::default(),
        );
        assert!(inputs.is_empty());
        assert!(diags[0].is_error());
    }
}
