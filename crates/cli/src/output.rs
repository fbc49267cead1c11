//! Where command output goes: standard output or `--output FILE`, and the exit codes shared by commands.

use anyhow::Context as _;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// Exit code 0: nothing at or above the failure threshold.
pub const CLEAN: u8 = 0;
/// Exit code 1: findings at or above the threshold (or, for `plan`, unplaced replicas).
pub const FINDINGS: u8 = 1;
/// Exit code 2: usage error or unusable input.
pub const INPUT_ERROR: u8 = 2;

pub fn exit(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// Writes `text` to the file, or to standard output when `path` is `None`.
pub fn write_output(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    stream_output(path, |w| Ok(w.write_all(text.as_bytes())?))
}

/// Hands `write` a buffered writer to the file, or to standard output when `path` is `None`, and
/// flushes it: a large report is written as it is rendered, never held whole in memory.
pub fn stream_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match path {
        Some(p) => {
            let mut w = BufWriter::with_capacity(
                1 << 16,
                File::create(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
            );
            write(&mut w)?;
            w.flush()
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        }
        None => {
            let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
            write(&mut out)?;
            out.flush()?;
        }
    }
    Ok(())
}

/// Whether colour and terminal tables suit the destination (a terminal, and NO_COLOR unset).
pub fn stdout_is_terminal(path: Option<&Path>) -> bool {
    path.is_none() && io::stdout().is_terminal()
}

/// The width to wrap terminal text at: `COLUMNS` when set to a number, else the terminal's width when
/// standard output is one (and no `--output` file is given), else 100 columns; never under 40.
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

pub fn colour_enabled(path: Option<&Path>) -> bool {
    stdout_is_terminal(path) && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A closed pipe (`gpu-trust rules | head`) is not an error.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Reads a UTF-8 file (or standard input for `-`) of at most `limit` bytes: policy, plan, evidence and
/// advisory files all go through here, so none of them can make the tool read without bound.
pub fn read_text(path: &Path, limit: usize) -> anyhow::Result<String> {
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        io::stdin().lock().take(cap).read_to_end(&mut bytes)?;
    } else {
        File::open(path)
            .context("cannot open")?
            .take(cap)
            .read_to_end(&mut bytes)
            .context("cannot read")?;
    }
    if bytes.len() > limit {
        anyhow::bail!("larger than {limit} bytes");
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}
