//! From command-line paths to input texts: files as named, folders walked recursively for `.yaml`,
//! `.yml` and `.json` files (in name order), `-` for standard input.
//!
//! A walk never reads less than it says. Whatever it leaves out that could have been input is an
//! error diagnostic naming the path, so the audit counts it as skipped input and cannot pass clean:
//!
//! - Hidden entries (names starting with `.`) are not read: version-control folders, CI settings
//!   (`.github/workflows/*.yaml`) and editor files are not cluster input. A hidden file with an
//!   input extension, or a hidden folder holding one, is reported unless the same file was read
//!   under a visible name (a ConfigMap volume links `a.yaml` to `..data/a.yaml`). Naming a hidden
//!   path on the command line reads it.
//! - Folders nested deeper than [`MAX_WALK_DEPTH`] levels are reported, not read.
//! - Named pipes, devices and sockets found in a folder are reported, never opened for reading
//!   (a link to `/dev/zero` would never end); named on the command line, a pipe is read (`<(...)`).
//! - A symbolic link whose target is outside the folder being walked is reported and not followed
//!   unless [`GatherOptions::follow_symlinks`] is set; a link inside the folder is read.
//!
//! Every read is bounded by [`Limits::max_file_bytes`], and a walk by [`MAX_WALK_ENTRIES`].

use crate::file::{self, display, Origin};
use crate::object::Format;
use crate::Limits;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use std::collections::BTreeSet;
use std::fs::{self, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

/// One input text and the name locations use for it (the path as given, or `-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub name: String,
    pub text: String,
}

/// One gathered input: its text, or a large file left to be read when it is used.
#[derive(Debug)]
pub enum Gathered {
    Text(Input),
    Large(LargeFile),
}

/// A regular file found large enough to read in pieces ([`crate::read_json_pieces`]); it has passed
/// the checks of a read (kind, size) when gathered, and passes them again when opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeFile {
    /// The name locations use: the path as given.
    pub name: String,
    path: PathBuf,
    origin: Origin,
}

impl LargeFile {
    /// Opens the file to read it in pieces.
    pub fn open(&self, limits: &Limits) -> Result<fs::File, Diagnostic> {
        file::open_checked(&self.path, self.origin, limits.max_file_bytes).map(|(f, _)| f)
    }

    /// Reads the file whole, as [`gather`] reads every other file.
    pub fn read_whole(&self, limits: &Limits) -> Result<Input, Diagnostic> {
        let (text, _) = file::read_path(&self.path, self.origin, limits.max_file_bytes)?;
        Ok(Input {
            name: self.name.clone(),
            text,
        })
    }
}

/// How to gather inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GatherOptions {
    pub limits: Limits,
    /// Follow symbolic links whose target lies outside the folder being walked.
    pub follow_symlinks: bool,
}

/// Folders nested deeper than this below an input folder are reported, not read.
pub const MAX_WALK_DEPTH: usize = 64;
/// Entries one run looks at while walking folders, at most.
pub const MAX_WALK_ENTRIES: usize = 1_000_000;

/// Reads every path with the default options (links out of a walked folder are not followed).
pub fn gather(
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    limits: &Limits,
) -> (Vec<Input>, Vec<Diagnostic>) {
    gather_with(
        paths,
        stdin,
        &GatherOptions {
            limits: *limits,
            follow_symlinks: false,
        },
    )
}

/// Reads every path. Unreadable files, files over the size bound, text that is not UTF-8 and
/// everything a walk left out are diagnostics (errors); the other inputs are still returned.
/// Standard input is read at most once.
pub fn gather_with(
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    options: &GatherOptions,
) -> (Vec<Input>, Vec<Diagnostic>) {
    let (gathered, diagnostics) = gather_all(paths, stdin, options, None);
    let inputs = gathered
        .into_iter()
        .filter_map(|g| match g {
            Gathered::Text(input) => Some(input),
            Gathered::Large(_) => None,
        })
        .collect();
    (inputs, diagnostics)
}

/// [`gather_with`], except that regular files of at least `large_from` bytes whose name does not
/// say YAML are not read but returned as [`Gathered::Large`], to be read in pieces when used.
/// Standard input and named pipes are read whole (they cannot be read a second time).
pub fn gather_large(
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    options: &GatherOptions,
    large_from: u64,
) -> (Vec<Gathered>, Vec<Diagnostic>) {
    gather_all(paths, stdin, options, Some(large_from))
}

fn gather_all(
    paths: &[PathBuf],
    stdin: &mut dyn Read,
    options: &GatherOptions,
    large_from: Option<u64>,
) -> (Vec<Gathered>, Vec<Diagnostic>) {
    let mut g = Gatherer {
        options,
        large_from,
        inputs: Vec::new(),
        diagnostics: Vec::new(),
        visited: BTreeSet::new(),
        read: BTreeSet::new(),
        hidden: Vec::new(),
        entries: 0,
    };
    let mut stdin_read = false;
    for path in paths {
        if path.as_os_str() == "-" {
            if stdin_read {
                g.diagnostics.push(Diagnostic::error(
                    Code::UnreadableInput,
                    Location::new("-", 0, 0),
                    "standard input is named more than once",
                ));
                continue;
            }
            stdin_read = true;
            match file::read_stdin(stdin, options.limits.max_file_bytes) {
                Ok(text) => g.inputs.push(Gathered::Text(Input {
                    name: "-".to_string(),
                    text,
                })),
                Err(d) => g.diagnostics.push(d),
            }
            continue;
        }
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => match fs::canonicalize(path) {
                Ok(root) => g.walk(path, &root, 0, None),
                Err(e) => g.error(
                    Code::UnreadableInput,
                    path,
                    format!("cannot read folder: {e}"),
                ),
            },
            Ok(_) => g.read(path, Origin::Named),
            Err(e) => g.error(Code::UnreadableInput, path, format!("cannot read: {e}")),
        }
    }
    g.finish();
    (g.inputs, g.diagnostics)
}

/// The identity of a file, to tell when two paths are one file.
#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = PathBuf;

#[cfg(unix)]
fn file_id(meta: &Metadata, _path: &Path) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_meta: &Metadata, path: &Path) -> FileId {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A hidden entry of a walked folder and the input files under it.
struct Hidden {
    path: PathBuf,
    folder: bool,
    files: Vec<(FileId, PathBuf)>,
}

struct Gatherer<'o> {
    options: &'o GatherOptions,
    /// Regular files at least this large (and not named as YAML) are left to be read in pieces.
    large_from: Option<u64>,
    inputs: Vec<Gathered>,
    diagnostics: Vec<Diagnostic>,
    /// Folders walked, with whether the walk was inside a hidden entry (each is walked once per kind).
    visited: BTreeSet<(FileId, bool)>,
    /// Files read.
    read: BTreeSet<FileId>,
    hidden: Vec<Hidden>,
    entries: usize,
}

impl Gatherer<'_> {
    fn error(&mut self, code: Code, path: &Path, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic::error(
            code,
            Location::new(display(path), 0, 0),
            message,
        ));
    }

    fn read(&mut self, path: &Path, origin: Origin) {
        let limit = self.options.limits.max_file_bytes;
        if let Some(from) = self.large_from {
            let name = display(path);
            if Format::for_name(&name) != Format::Yaml {
                match file::open_checked(path, origin, limit) {
                    Ok((_, meta)) if meta.is_file() && meta.len() >= from => {
                        self.read.insert(file_id(&meta, path));
                        self.inputs.push(Gathered::Large(LargeFile {
                            name,
                            path: path.to_path_buf(),
                            origin,
                        }));
                        return;
                    }
                    Ok(_) => {}
                    Err(d) => return self.diagnostics.push(d),
                }
            }
        }
        match file::read_path(path, origin, limit) {
            Ok((text, meta)) => {
                self.read.insert(file_id(&meta, path));
                self.inputs.push(Gathered::Text(Input {
                    name: display(path),
                    text,
                }));
            }
            Err(d) => self.diagnostics.push(d),
        }
    }

    /// Walks `dir` (a folder below the input folder `root`); `hidden` is the hidden entry it lies
    /// in, whose files are only recorded.
    fn walk(&mut self, dir: &Path, root: &Path, depth: usize, hidden: Option<usize>) {
        if depth > MAX_WALK_DEPTH {
            self.error(
                Code::InputLeftOut,
                dir,
                format!(
                    "folder nested more than {MAX_WALK_DEPTH} levels below the input folder: not read"
                ),
            );
            return;
        }
        match fs::metadata(dir) {
            Ok(m) => {
                if !self.visited.insert((file_id(&m, dir), hidden.is_some())) {
                    return;
                }
            }
            Err(e) => {
                return self.error(
                    Code::UnreadableInput,
                    dir,
                    format!("cannot read folder: {e}"),
                )
            }
        }
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                return self.error(
                    Code::UnreadableInput,
                    dir,
                    format!("cannot read folder: {e}"),
                )
            }
        };
        let mut paths = Vec::new();
        for entry in entries {
            match entry {
                Ok(e) => paths.push(e.path()),
                Err(e) => {
                    return self.error(
                        Code::UnreadableInput,
                        dir,
                        format!("cannot read folder: {e}"),
                    )
                }
            }
        }
        paths.sort();
        for path in paths {
            self.entries += 1;
            if self.entries > MAX_WALK_ENTRIES {
                self.error(
                    Code::InputLeftOut,
                    dir,
                    format!(
                        "more than {MAX_WALK_ENTRIES} entries in the input folders: the rest is not read"
                    ),
                );
                return;
            }
            self.entry(&path, root, depth, hidden);
        }
    }

    fn entry(&mut self, path: &Path, root: &Path, depth: usize, hidden: Option<usize>) {
        let input_name = has_input_extension(path);
        let lmeta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) => return self.error(Code::UnreadableInput, path, format!("cannot read: {e}")),
        };
        let meta = if lmeta.file_type().is_symlink() {
            let target = match fs::canonicalize(path) {
                Ok(t) => t,
                Err(e) => {
                    if input_name {
                        self.error(
                            Code::UnreadableInput,
                            path,
                            format!("symbolic link that leads nowhere: {e}"),
                        );
                    }
                    return;
                }
            };
            let meta = match fs::metadata(path) {
                Ok(m) => m,
                Err(e) => {
                    return self.error(Code::UnreadableInput, path, format!("cannot read: {e}"))
                }
            };
            if !(meta.is_dir() || input_name) {
                return;
            }
            if !target.starts_with(root) && !self.options.follow_symlinks {
                return self.error(
                    Code::InputLeftOut,
                    path,
                    format!(
                        "symbolic link to `{}`, outside the input folder: not followed (pass --follow-symlinks to read it)",
                        target.display()
                    ),
                );
            }
            meta
        } else {
            lmeta
        };
        if !(meta.is_dir() || input_name) {
            return;
        }
        let hidden = hidden.or_else(|| {
            let dot = path
                .file_name()
                .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."));
            dot.then(|| {
                self.hidden.push(Hidden {
                    path: path.to_path_buf(),
                    folder: meta.is_dir(),
                    files: Vec::new(),
                });
                self.hidden.len() - 1
            })
        });
        if meta.is_dir() {
            self.walk(path, root, depth + 1, hidden);
        } else if let Some(h) = hidden {
            self.hidden[h]
                .files
                .push((file_id(&meta, path), path.to_path_buf()));
        } else if meta.is_file() {
            self.read(path, Origin::Walked);
        } else {
            self.error(
                Code::InputLeftOut,
                path,
                format!(
                    "{}: not read (only regular files in an input folder are read)",
                    file::special_kind(&meta).describe()
                ),
            );
        }
    }

    /// Reports the hidden entries holding input files that were not read under another name.
    fn finish(&mut self) {
        for h in std::mem::take(&mut self.hidden) {
            let unread: Vec<&PathBuf> = h
                .files
                .iter()
                .filter(|(id, _)| !self.read.contains(id))
                .map(|(_, p)| p)
                .collect();
            let Some(first) = unread.first() else {
                continue;
            };
            let message = if h.folder {
                format!(
                    "hidden folder (its name starts with `.`) holding {} input file{} (first: {}): not read; name the folder on the command line to read it",
                    unread.len(),
                    if unread.len() == 1 { "" } else { "s" },
                    first.display()
                )
            } else {
                "hidden file (its name starts with `.`): not read; name it on the command line to read it"
                    .to_string()
            };
            self.error(Code::InputLeftOut, &h.path, message);
        }
    }
}

fn has_input_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(inputs: &[Input], dir: &Path) -> Vec<String> {
        inputs
            .iter()
            .map(|i| {
                Path::new(&i.name)
                    .strip_prefix(dir)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect()
    }

    fn messages(diags: &[Diagnostic], dir: &Path) -> Vec<String> {
        diags
            .iter()
            .map(|d| {
                let file = Path::new(&d.location.file);
                let file = file.strip_prefix(dir).unwrap_or(file);
                format!("{}: {}", file.display(), d.message)
            })
            .collect()
    }

    #[test]
    fn directories_are_walked_in_order_and_hidden_input_reported() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("b")).unwrap();
        fs::create_dir(dir.path().join(".git")).unwrap();
        fs::write(dir.path().join(".git/HEAD"), "ref").unwrap();
        fs::write(dir.path().join("b/z.yml"), "a: 1\n").unwrap();
        fs::write(dir.path().join("a.json"), "{}").unwrap();
        fs::write(dir.path().join("notes.txt"), "x").unwrap();
        fs::create_dir(dir.path().join(".github")).unwrap();
        fs::write(dir.path().join(".github/c.yaml"), "a: 1\n").unwrap();
        fs::write(dir.path().join(".pod.yaml"), "a: 1\n").unwrap();
        fs::write(dir.path().join("bad.yaml"), [b'a', b':', b' ', 0xC3, 0x28]).unwrap();
        let (inputs, diags) = gather(
            &[dir.path().to_path_buf()],
            &mut std::io::empty(),
            &Limits::default(),
        );
        assert_eq!(names(&inputs, dir.path()), ["a.json", "b/z.yml"]);
        let m = messages(&diags, dir.path());
        assert_eq!(m.len(), 3, "{m:#?}");
        assert!(
            m[0].starts_with("bad.yaml: input is not valid UTF-8"),
            "{m:#?}"
        );
        assert_eq!((diags[0].location.line, diags[0].location.column), (1, 4));
        assert!(m[1].starts_with(".github: hidden folder"), "{m:#?}");
        assert!(m[1].contains("holding 1 input file"), "{m:#?}");
        assert!(m[2].starts_with(".pod.yaml: hidden file"), "{m:#?}");
        assert!(diags.iter().all(Diagnostic::is_error));
    }

    #[cfg(unix)]
    #[test]
    fn hidden_files_read_under_a_visible_name_are_not_reported() {
        // The layout of a ConfigMap volume: visible links into a hidden, timestamped folder.
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("..2026_01_01")).unwrap();
        fs::write(dir.path().join("..2026_01_01/a.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink("..2026_01_01", dir.path().join("..data")).unwrap();
        std::os::unix::fs::symlink("..data/a.yaml", dir.path().join("a.yaml")).unwrap();
        let (inputs, diags) = gather(
            &[dir.path().to_path_buf()],
            &mut std::io::empty(),
            &Limits::default(),
        );
        assert_eq!(names(&inputs, dir.path()), ["a.yaml"]);
        assert!(diags.is_empty(), "{diags:#?}");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_and_links_out_of_the_folder_are_reported_unread() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("pod.yaml"), "a: 1\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.yaml")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("pod.yaml"), dir.path().join("out.yaml"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("outdir")).unwrap();
        std::os::unix::fs::symlink("missing.yaml", dir.path().join("dangling.yaml")).unwrap();
        let fifo = dir.path().join("pipe.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let have_fifo = made.is_ok_and(|s| s.success());
        let (inputs, diags) = gather(
            &[dir.path().to_path_buf()],
            &mut std::io::empty(),
            &Limits::default(),
        );
        assert!(inputs.is_empty(), "{inputs:?}");
        let m = messages(&diags, dir.path());
        assert!(
            m.iter()
                .any(|m| m.starts_with("dangling.yaml: symbolic link that leads nowhere")),
            "{m:#?}"
        );
        assert!(
            m.iter()
                .any(|m| m.starts_with("out.yaml: symbolic link to")
                    && m.contains("--follow-symlinks")),
            "{m:#?}"
        );
        assert!(
            m.iter().any(|m| m.starts_with("outdir: symbolic link to")),
            "{m:#?}"
        );
        assert!(
            m.iter()
                .any(|m| m.starts_with("zero.yaml: symbolic link to `/dev/zero`")),
            "{m:#?}"
        );
        if have_fifo {
            assert!(
                m.iter()
                    .any(|m| m.starts_with("pipe.yaml: a named pipe (FIFO): not read")),
                "{m:#?}"
            );
        }

        let follow = GatherOptions {
            follow_symlinks: true,
            ..GatherOptions::default()
        };
        let (inputs, diags) =
            gather_with(&[dir.path().to_path_buf()], &mut std::io::empty(), &follow);
        assert_eq!(names(&inputs, dir.path()), ["out.yaml", "outdir/pod.yaml"]);
        let m = messages(&diags, dir.path());
        assert!(
            m.iter()
                .any(|m| m.starts_with("zero.yaml: a character device: not read")),
            "{m:#?}"
        );
    }

    #[test]
    fn folders_too_deep_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_path_buf();
        for _ in 0..=MAX_WALK_DEPTH {
            deep.push("d");
        }
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join("pod.yaml"), "a: 1\n").unwrap();
        let (inputs, diags) = gather(
            &[dir.path().to_path_buf()],
            &mut std::io::empty(),
            &Limits::default(),
        );
        assert!(inputs.is_empty());
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert!(diags[0].is_error());
        assert!(
            diags[0].message.contains("nested more than 64 levels"),
            "{}",
            diags[0]
        );
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
