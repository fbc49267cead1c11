//! Where command output goes: the formats every command prints in and the `-o/--format` and
//! `--output [FORMAT=]FILE` arguments, declared once for all commands; standard output or the files
//! named; the exit codes shared by commands, and the messages on standard error. (Input is read in
//! `input.rs`.)
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
use std::path::{Path, PathBuf};
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

/// A run that stops with an exit code whose reason is already on standard error: `main` exits with
/// it and prints nothing more. (An error whose message is the reason is printed by `main` as
/// `gpu-trust: error: MESSAGE`, exit 2.)
#[derive(Debug)]
pub struct Stopped(pub ExitCode);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for Stopped {}

/// Stops the run with exit 2, its reason printed already.
pub fn stopped() -> anyhow::Error {
    Stopped(exit(INPUT_ERROR)).into()
}

/// Every format a command prints in, declared once: a command offers the ones it renders with
/// `#[command(mut_arg("format", output::offer(FORMATS)))]`, and [`OutputArgs`] reads `-o/--format`
/// and `--output` the same way for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text for reading, fitted to the terminal's width.
    Table,
    /// The command's JSON document (its schema is named in the command's help).
    Json,
    /// The same document as YAML.
    Yaml,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// JUnit XML, for CI test tabs.
    Junit,
    /// Markdown, for a pull-request comment or a job summary.
    Markdown,
    /// One self-contained HTML page (no network access).
    Html,
    /// A bash script that prints its commands unless run with --apply.
    Script,
}

impl Format {
    /// The audit report's format this names; `None` for the formats an audit does not write.
    pub fn report(self) -> Option<gpu_trust_report::audit::Format> {
        use gpu_trust_report::audit::Format as Report;
        match self {
            Format::Table => Some(Report::Table),
            Format::Json => Some(Report::Json),
            Format::Sarif => Some(Report::Sarif),
            Format::Junit => Some(Report::Junit),
            Format::Markdown => Some(Report::Markdown),
            Format::Html => Some(Report::Html),
            Format::Yaml | Format::Script => None,
        }
    }

    /// The format a file's name says, for `--output FILE` without `--format`. A SARIF log's name
    /// ends in `.sarif`, or `.sarif.json` (SARIF 2.1.0, OASIS Standard, section 3.2, "SARIF file
    /// naming convention"); a JUnit report is XML.
    pub fn of_file(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".sarif.json") {
            return Some(Format::Sarif);
        }
        let (_, extension) = name.rsplit_once('.')?;
        Some(match extension {
            "json" => Format::Json,
            "yaml" | "yml" => Format::Yaml,
            "sarif" => Format::Sarif,
            "xml" => Format::Junit,
            "md" | "markdown" => Format::Markdown,
            "html" | "htm" => Format::Html,
            "sh" => Format::Script,
            _ => return None,
        })
    }

    fn name(self) -> String {
        use clap::ValueEnum as _;
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

/// The names of `formats`, as a list for a message (`table, json`).
pub fn format_names(formats: &[Format]) -> String {
    let names: Vec<String> = formats.iter().map(|f| f.name()).collect();
    names.join(", ")
}

/// `-o/--format` restricted to a command's `formats` (its help, completions and errors list those
/// only), for the command's `#[command(mut_arg("format", ...))]`.
pub fn offer(formats: &'static [Format]) -> impl FnOnce(clap::Arg) -> clap::Arg {
    use clap::builder::{PossibleValuesParser, TypedValueParser as _};
    use clap::ValueEnum as _;
    move |arg| {
        let values = formats.iter().filter_map(|f| f.to_possible_value());
        let first = formats.first().copied().unwrap_or(Format::Table);
        arg.value_parser(
            PossibleValuesParser::new(values)
                .map(move |s| Format::from_str(&s, true).unwrap_or(first)),
        )
    }
}

/// `-o/--format` and `--output [FORMAT=]FILE`: the same arguments for every command that prints.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OutputArgs {
    /// Output format (default: table, or what the name of the --output FILE says).
    #[arg(long, short = 'o', value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Write to FILE instead of standard output. Without --format, a FILE ending in .json, .sarif,
    /// .xml (JUnit), .md, .html or .yaml is written in that format. FORMAT=FILE writes that format
    /// to FILE as well (e.g. sarif=gpu-trust.sarif); repeatable: several formats in one run.
    #[arg(long, value_name = "[FORMAT=]FILE", value_parser = parse_output)]
    pub output: Vec<OutputTarget>,
}

/// Where one `--output` goes (`[FORMAT=]FILE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTarget {
    /// `None`: the run's format.
    pub format: Option<Format>,
    pub path: PathBuf,
}

/// `FORMAT=FILE` when the part before the first `=` is a format's name, else `FILE`; a format's
/// name alone (`--output json`) is refused: it would write a file of that name.
pub(crate) fn parse_output(s: &str) -> Result<OutputTarget, String> {
    use clap::ValueEnum as _;
    if let Some((name, file)) = s.split_once('=') {
        if let Ok(format) = Format::from_str(name, true) {
            if file.is_empty() {
                return Err(format!("`{s}` names no file after `=`"));
            }
            return Ok(OutputTarget {
                format: Some(format),
                path: PathBuf::from(file),
            });
        }
    }
    if s.is_empty() {
        return Err("an empty file name".into());
    }
    if let Ok(format) = Format::from_str(s, true) {
        let name = format.name();
        return Err(format!(
            "`{s}` is a format, and --output takes a file: -o {name} (--format {name}) chooses the format; --output ./{s} writes a file of that name"
        ));
    }
    Ok(OutputTarget {
        format: None,
        path: PathBuf::from(s),
    })
}

/// One rendering of a command's output: its format and where it goes (`None`: standard output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub format: Format,
    pub path: Option<PathBuf>,
}

impl Target {
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The width to fit its text to ([`text_width`]).
    pub fn width(&self) -> usize {
        text_width(self.path())
    }

    /// Whether it gets colour ([`colour_enabled`]).
    pub fn colour(&self) -> bool {
        colour_enabled(self.path())
    }
}

impl OutputArgs {
    /// Each rendering of a command that prints in `offered` (its default first), or why not.
    pub fn targets(&self, offered: &[Format]) -> anyhow::Result<Vec<Target>> {
        let default = offered.first().copied().unwrap_or(Format::Table);
        targets(self.format, &self.output, offered, default).map_err(anyhow::Error::msg)
    }

    /// The one file `--output FILE` names, for output of a single form of its own (a role's
    /// manifests, a Job): `None` for standard output; an error when `-o` or more than one
    /// `--output` is given.
    pub fn one_file(&self, what: &str) -> anyhow::Result<Option<&Path>> {
        match (self.format, self.output.as_slice()) {
            (None, []) => Ok(None),
            (None, [OutputTarget { format: None, path }]) => {
                Ok(Some(path.as_path()).filter(|p| *p != Path::new("-")))
            }
            _ => anyhow::bail!("{what} writes one file: --output FILE, without -o"),
        }
    }
}

/// Each rendering, in order: standard output gets `format` (else what the name of a plain
/// `--output FILE` says, said on standard error, else `default`) unless a plain `--output FILE`
/// takes it; then each `--output`. A format's name, a file named twice or two reports on standard
/// output are errors.
pub fn targets(
    format: Option<Format>,
    outputs: &[OutputTarget],
    offered: &[Format],
    default: Format,
) -> Result<Vec<Target>, String> {
    let plain: Vec<&OutputTarget> = outputs.iter().filter(|o| o.format.is_none()).collect();
    if plain.len() > 1 {
        return Err(format!(
            "--output FILE is given {} times; name the format of the others (--output FORMAT=FILE)",
            plain.len()
        ));
    }
    let named = plain
        .first()
        .filter(|o| o.path != Path::new("-"))
        .and_then(|o| Some((&o.path, Format::of_file(&o.path)?)));
    let main = match (format, named) {
        (Some(f), _) => f,
        // A command that prints one format writes it whatever the file is called.
        (None, Some(_)) if offered.len() == 1 => default,
        (None, Some((path, f))) if offered.contains(&f) => {
            eprint_line(&format!(
                "gpu-trust: writing {} as {} (its name says so; -o FORMAT chooses another)",
                path.display(),
                f.name()
            ));
            f
        }
        (None, Some((path, f))) => {
            return Err(format!(
                "--output {}: its name says {}, which this command does not write (it writes {}); name the format with -o FORMAT",
                escaped(&path.display().to_string()),
                f.name(),
                format_names(offered)
            ))
        }
        (None, None) => default,
    };
    let mut out: Vec<Target> = Vec::new();
    if plain.is_empty() {
        out.push(Target {
            format: main,
            path: None,
        });
    }
    for o in outputs {
        let format = o.format.unwrap_or(main);
        if !offered.contains(&format) {
            return Err(format!(
                "this command does not write {} (it writes {})",
                format.name(),
                format_names(offered)
            ));
        }
        let path = (o.path != Path::new("-")).then(|| o.path.clone());
        if let Some(p) = &path {
            if out.iter().any(|t| t.path.as_ref() == Some(p)) {
                return Err(format!(
                    "{} is named by two --output options",
                    escaped(&p.display().to_string())
                ));
            }
        } else if out.iter().any(|t| t.path.is_none()) {
            return Err("two reports would go to standard output".into());
        }
        out.push(Target { format, path });
    }
    Ok(out)
}

/// Writes each target's rendering (`render`), then exits with `code`: a reader that went away
/// does not change it ([`verdict`]); the files are still written.
pub fn write_targets(
    targets: &[Target],
    code: u8,
    render: impl FnMut(&Target) -> anyhow::Result<String>,
) -> anyhow::Result<ExitCode> {
    write_targets_with(targets, code, render, write_output)
}

/// [`write_targets`], each text written by `write` (to replace a file whole, say).
pub fn write_targets_with(
    targets: &[Target],
    code: u8,
    mut render: impl FnMut(&Target) -> anyhow::Result<String>,
    write: impl Fn(Option<&Path>, &str) -> anyhow::Result<()>,
) -> anyhow::Result<ExitCode> {
    let written = stream_each(targets, |t| {
        render(t).and_then(|text| write(t.path(), &text))
    });
    verdict(written, code)
}

/// Writes each target in order (`write`); the outcome of the last write. A write that fails stops
/// the others, but for a reader that went away: the files are still written.
pub fn stream_each<T>(
    targets: impl IntoIterator<Item = T>,
    mut write: impl FnMut(T) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut written = Ok(());
    for target in targets {
        written = write(target);
        if written.as_ref().is_err_and(|e| !is_broken_pipe(e)) {
            break;
        }
    }
    written
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
