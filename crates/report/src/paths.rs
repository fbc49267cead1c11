//! Paths of input files as the reports link them: relative to the repository root, percent-encoded
//! as URI paths, never absolute (SARIF's artifact URIs, the Markdown summary's links).

use std::path::{Component, Path, PathBuf};

/// The path of an input file (as the report names it: relative to `working_dir`, or absolute)
/// relative to `root`, as a URI path: a file outside the root is reached with `..` from it, so that
/// no absolute path of the machine that ran the audit gets into a report. Standard input (`-`) is
/// the path `stdin_name` names, else `stdin`.
pub fn relative_uri(
    file: &str,
    working_dir: &Path,
    root: &Path,
    stdin_name: Option<&str>,
) -> String {
    let file = if file == "-" {
        stdin_name.unwrap_or("stdin")
    } else {
        file
    };
    let path = Path::new(file);
    let absolute = normalise(&if path.is_absolute() {
        path.to_path_buf()
    } else {
        working_dir.join(path)
    });
    let root = normalise(root);
    let relative = match absolute.strip_prefix(&root) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => {
            // Up from the root to the deepest folder it shares with the file, then down.
            let shared = root
                .components()
                .zip(absolute.components())
                .take_while(|(a, b)| a == b)
                .count();
            let mut rel = PathBuf::new();
            for _ in root.components().skip(shared) {
                rel.push("..");
            }
            for c in absolute.components().skip(shared) {
                rel.push(c.as_os_str());
            }
            rel
        }
    };
    encode_path(&relative)
}

/// `.` and `..` resolved without touching the file system.
pub(crate) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Path components joined by `/`, each percent-encoded outside the URI's unreserved characters.
pub(crate) fn encode_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.components() {
        match c {
            Component::RootDir => out.push('/'),
            Component::Prefix(_) => {}
            Component::ParentDir => {
                if !out.is_empty() && !out.ends_with('/') {
                    out.push('/');
                }
                out.push_str("..");
            }
            other => {
                if !out.is_empty() && !out.ends_with('/') {
                    out.push('/');
                }
                for b in other.as_os_str().to_string_lossy().bytes() {
                    if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                        out.push(char::from(b));
                    } else {
                        out.push_str(&format!("%{b:02X}"));
                    }
                }
            }
        }
    }
    out
}
