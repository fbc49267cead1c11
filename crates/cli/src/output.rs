//! Where command output goes: standard output or `--output FILE`, the exit codes shared by commands,
//! and the messages on standard error. (Input is read in `input.rs`.)
//!
//! Text from the input reaches a terminal only through here, through [`escaped`], or through the
//! report crate's renderers, which escape each value: diagnostics and messages on standard error are
//! escaped whole ([`gpu_trust_model::terminal::escape`]), so a file or object name cannot move the
//! cursor, set a window title or forge a line.

use anyhow::Context as _;
use gpu_trust_model::terminal::escape;
use gpu_trust_model::Diagnostic;
use std::borrow::Cow;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;

/// Exit code 0: nothing at or above the failure threshold.
pub const CLEAN: u8 = 0;
/// Exit code 1: findings at or above the threshold (or, for `plan`, unplaced replicas).
pub const FINDINGS: u8 = 1;
/// Exit code 2: usage error or unusable input.
pub const INPUT_ERROR: u8 = 2;

pub fn exit(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// Text from the input, made safe for a terminal (control characters written out visibly).
pub fn escaped(text: &str) -> Cow<'_, str> {
    escape(text)
}

/// Writes one line to standard error, escaped. A closed standard error is not an error: the exit
/// code still tells the outcome.
pub fn eprint_line(line: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(escape(line).as_bytes());
    let _ = err.write_all(b"\n");
}

/// `gpu-trust: error: MESSAGE` on standard error.
pub fn eprint_error(message: impl std::fmt::Display) {
    eprint_line(&format!("gpu-trust: error: {message}"));
}

/// Diagnostics on standard error, one per line, as `file:line:column: level: message`.
pub fn eprint_diagnostics<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) {
    for d in diagnostics {
        eprint_line(&d.to_string());
    }
}

/// The input `target` would overwrite, if any: one of `inputs` (files read: the cluster's paths, the
/// policy, the configuration...) that is the same file, or, for an input folder, an existing file in
/// it the walk reads (`.yaml`, `.yml`, `.json`). A report written there would destroy what it judged.
pub fn overwritten_input<'a>(target: &Path, inputs: &'a [&'a Path]) -> Option<&'a Path> {
    let meta = std::fs::metadata(target).ok()?;
    let target_real = std::fs::canonicalize(target).ok()?;
    inputs.iter().copied().find(|input| {
        if *input == Path::new("-") {
            return false;
        }
        let Ok(input_meta) = std::fs::metadata(input) else {
            return false;
        };
        if input_meta.is_dir() {
            let read = target
                .extension()
                .and_then(OsStr::to_str)
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
            return read
                && std::fs::canonicalize(input).is_ok_and(|dir| target_real.starts_with(dir));
        }
        same_file(&meta, &input_meta)
            || std::fs::canonicalize(input).is_ok_and(|real| real == target_real)
    })
}

/// Whether two files are one (hard links included).
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// Writes `text` to the file, or to standard output when `path` is `None`.
pub fn write_output(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    stream_output(path, |w| Ok(w.write_all(text.as_bytes())?))
}

/// Writes `text` to a file beside `path` and renames it over `path`, so that a reader (or a process
/// killed meanwhile) sees the old content or the new, never half of it.
pub fn replace_output(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    write_output(Some(&tmp), text)?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("{}: cannot write", escape(&path.display().to_string())))
}

/// Hands `write` a buffered writer to the file, or to standard output when `path` is `None`, and
/// flushes it: a large report is written as it is rendered, never held whole in memory. An error
/// names the file (or standard output).
pub fn stream_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match path {
        Some(p) => {
            let name = || format!("{}: cannot write", escape(&p.display().to_string()));
            let file = File::create(p).with_context(name)?;
            let mut w = BufWriter::with_capacity(1 << 16, file);
            write(&mut w).with_context(name)?;
            w.flush().with_context(name)?;
        }
        None => {
            let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
            write(&mut out).context("standard output: cannot write")?;
            out.flush().context("standard output: cannot write")?;
        }
    }
    Ok(())
}

/// The exit code of a command whose verdict is `code`, once its output was written (`written`).
/// A reader that went away (`gpu-trust audit ... | head`) does not change the verdict: the command
/// exits with `code`, never 0 in its place; any other write error is an error (exit 2).
pub fn verdict(written: anyhow::Result<()>, code: u8) -> anyhow::Result<ExitCode> {
    match written {
        Ok(()) => Ok(exit(code)),
        Err(e) if is_broken_pipe(&e) => Ok(exit(code)),
        Err(e) => Err(e),
    }
}

/// Whether colour and terminal tables suit the destination (a terminal, and NO_COLOR unset).
pub fn stdout_is_terminal(path: Option<&Path>) -> bool {
    path.is_none() && io::stdout().is_terminal()
}

/// The width to wrap terminal text and fit tables to: `COLUMNS` when set to a number, else the
/// terminal's width when standard output is one (and no `--output` file is given), else 100 columns;
/// never under 40.
pub fn text_width(path: Option<&Path>) -> usize {
    const DEFAULT: usize = 100;
    const NARROWEST: usize = 40;
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0);
    let width = columns.or_else(|| {
        if stdout_is_terminal(path) {
            terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))
        } else {
            None
        }
    });
    width.unwrap_or(DEFAULT).max(NARROWEST)
}

/// When to colour output (`--color`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColourChoice {
    /// Colour on a terminal, unless NO_COLOR is set or TERM is `dumb`.
    #[default]
    Auto,
    /// Colour always, into files and pipes too.
    Always,
    /// Never colour.
    Never,
}

static COLOUR: OnceLock<ColourChoice> = OnceLock::new();

/// Records the `--color` choice for the process (the first call wins).
pub fn set_colour(choice: ColourChoice) {
    let _ = COLOUR.set(choice);
}

/// Whether output to `path` (standard output when `None`) gets colour: `--color always` or
/// `never` decide alone; `auto` colours a terminal unless NO_COLOR is set (to anything but the
/// empty string, <https://no-color.org>) or TERM is `dumb`.
pub fn colour_enabled(path: Option<&Path>) -> bool {
    match COLOUR.get().copied().unwrap_or_default() {
        ColourChoice::Always => true,
        ColourChoice::Never => false,
        ColourChoice::Auto => {
            stdout_is_terminal(path)
                && auto_colour_allowed(
                    std::env::var_os("NO_COLOR").as_deref(),
                    std::env::var_os("TERM").as_deref(),
                )
        }
    }
}

/// The environment's say under `--color auto`.
fn auto_colour_allowed(no_color: Option<&OsStr>, term: Option<&OsStr>) -> bool {
    no_color.is_none_or(OsStr::is_empty) && term != Some(OsStr::new("dumb"))
}

/// Whether the error is a closed pipe on output (the reader went away), as an I/O error or
/// inside a JSON serializer's error.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_colour_respects_no_color_and_dumb_terminals() {
        let os = |s: &'static str| Some(OsStr::new(s));
        assert!(auto_colour_allowed(None, os("xterm-256color")));
        assert!(auto_colour_allowed(None, None));
        assert!(auto_colour_allowed(os(""), os("xterm")));
        assert!(!auto_colour_allowed(os("1"), os("xterm")));
        assert!(!auto_colour_allowed(None, os("dumb")));
    }
}
