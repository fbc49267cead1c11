//! The one way input bytes come in: a file named on the command line, a file found in an input
//! folder, or standard input, read whole but never past a size bound, and decoded as UTF-8 with a
//! located error otherwise. Every file the tool reads (cluster input, policy, plan, evidence,
//! advisories) goes through here, so the checks on special files, size and encoding are made once.

use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::path::Path;

/// How a path reached the reader: named by the user, or found while walking a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Named on the command line (or in a plan's `policyFile`): a named pipe is read, as
    /// `<(kubectl get ...)` gives one.
    Named,
    /// Found in an input folder: only regular files are read.
    Walked,
}

/// Reads the file at `path` (standard input, from `stdin`, for `-`) as UTF-8 text of at most
/// `limit` bytes. Devices, sockets and folders are refused without being read; errors name the
/// path, and the line and column of the first byte that is not UTF-8.
pub fn read_file(path: &Path, stdin: &mut dyn Read, limit: usize) -> Result<String, Diagnostic> {
    if path.as_os_str() == "-" {
        return read_stdin(stdin, limit);
    }
    read_path(path, Origin::Named, limit).map(|(text, _)| text)
}

/// Reads standard input as UTF-8 text of at most `limit` bytes.
pub fn read_stdin(stdin: &mut dyn Read, limit: usize) -> Result<String, Diagnostic> {
    let bytes = read_bounded(stdin, "-", limit, None)?;
    decode("-", bytes, limit)
}

/// Reads a file found at `path`; returns its text and its metadata (taken from the open file).
pub(crate) fn read_path(
    path: &Path,
    origin: Origin,
    limit: usize,
) -> Result<(String, Metadata), Diagnostic> {
    let name = display(path);
    let (file, meta) = open_checked(path, origin, limit)?;
    // A regular file's size is known: read into a buffer of that size, never a doubled one.
    let size = meta.is_file().then_some(meta.len());
    let bytes = read_bounded(&mut &file, &name, limit, size)?;
    Ok((decode(&name, bytes, limit)?, meta))
}

/// Opens the file at `path` for reading, refusing what [`read_path`] refuses before it reads: a
/// kind of file not read from `origin`, a regular file over `limit` bytes.
pub(crate) fn open_checked(
    path: &Path,
    origin: Origin,
    limit: usize,
) -> Result<(File, Metadata), Diagnostic> {
    let name = display(path);
    let file = open(path, origin)?;
    let meta = file
        .metadata()
        .map_err(|e| error(Code::UnreadableInput, &name, format!("cannot read: {e}")))?;
    check_kind(&name, &meta, origin)?;
    if meta.is_file() && meta.len() > as_u64(limit) {
        return Err(error(
            Code::OverLimit,
            &name,
            format!(
                "file is {} bytes, over the file size limit of {limit} bytes (max_file_bytes)",
                meta.len()
            ),
        ));
    }
    Ok((file, meta))
}

/// Opens for reading. A file found in a folder is opened without blocking, so that a named pipe
/// swapped in after the folder was listed cannot stall the run before its kind is checked.
fn open(path: &Path, origin: Origin) -> Result<File, Diagnostic> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    if origin == Origin::Walked {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    let _ = origin;
    options.open(path).map_err(|e| {
        error(
            Code::UnreadableInput,
            &display(path),
            format!("cannot read: {e}"),
        )
    })
}

/// What kind of file `meta` describes, in words, when it is not one the reader takes.
fn check_kind(name: &str, meta: &Metadata, origin: Origin) -> Result<(), Diagnostic> {
    if meta.is_file() {
        return Ok(());
    }
    if meta.is_dir() {
        return Err(error(
            Code::UnreadableInput,
            name,
            "is a folder, not a file",
        ));
    }
    let kind = special_kind(meta);
    if kind == SpecialKind::Fifo && origin == Origin::Named {
        return Ok(());
    }
    Err(error(
        Code::InputLeftOut,
        name,
        format!(
            "{}: not read (only regular files{} are read)",
            kind.describe(),
            if origin == Origin::Named {
                ", named pipes and standard input"
            } else {
                " in an input folder"
            }
        ),
    ))
}

/// The kinds of file that are not regular files or folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecialKind {
    Fifo,
    CharDevice,
    BlockDevice,
    Socket,
    Other,
}

impl SpecialKind {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            SpecialKind::Fifo => "a named pipe (FIFO)",
            SpecialKind::CharDevice => "a character device",
            SpecialKind::BlockDevice => "a block device",
            SpecialKind::Socket => "a socket",
            SpecialKind::Other => "not a regular file",
        }
    }
}

pub(crate) fn special_kind(meta: &Metadata) -> SpecialKind {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return SpecialKind::Fifo;
        }
        if t.is_char_device() {
            return SpecialKind::CharDevice;
        }
        if t.is_block_device() {
            return SpecialKind::BlockDevice;
        }
        if t.is_socket() {
            return SpecialKind::Socket;
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    SpecialKind::Other
}

/// The first buffer of a read whose size is not known.
const CHUNK: usize = 64 << 10;

/// Reads at most `limit + 1` bytes: one more than allowed tells an oversized input apart. `size`,
/// when known, is what the input should hold.
fn read_bounded(
    reader: &mut dyn Read,
    name: &str,
    limit: usize,
    size: Option<u64>,
) -> Result<Vec<u8>, Diagnostic> {
    let cap = limit.saturating_add(1);
    let mut reader = reader.take(as_u64(cap));
    let Some(hint) = size.and_then(|s| usize::try_from(s).ok()) else {
        return read_unsized(&mut reader, name, limit);
    };
    let mut bytes = Vec::new();
    bytes.reserve_exact(hint.min(limit));
    // A file said its size: the buffer holds it, and a file read to that size is probed for more
    // before the buffer grows (a file that grew), doubling with exact reservations and never past
    // `limit + 1` bytes. `filled` bytes are read;
    // the rest of `bytes` is zeroed room for the next read.
    let mut filled = 0usize;
    loop {
        if filled == bytes.len() {
            if filled == cap {
                break;
            }
            if filled > 0 && filled == hint {
                let mut probe = [0u8; 4096];
                match read_some(&mut reader, &mut probe) {
                    Ok(0) => break,
                    Ok(n) => {
                        bytes.reserve_exact(n);
                        bytes.extend_from_slice(&probe[..n]);
                        filled += n;
                        continue;
                    }
                    Err(e) => return Err(read_error(name, &e)),
                }
            }
            let want = bytes
                .capacity()
                .max(CHUNK)
                .max(filled.saturating_mul(2))
                .min(cap);
            bytes.reserve_exact(want.saturating_sub(bytes.len()));
            bytes.resize(want, 0);
        }
        match read_some(&mut reader, &mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) => return Err(read_error(name, &e)),
        }
    }
    bytes.truncate(filled);
    if bytes.len() > limit {
        return Err(over_limit(name, limit));
    }
    Ok(bytes)
}

/// The error for an input past `limit` bytes.
fn over_limit(name: &str, limit: usize) -> Diagnostic {
    error(
        Code::OverLimit,
        name,
        format!("input is over the file size limit of {limit} bytes (max_file_bytes)"),
    )
}

/// The largest piece [`read_unsized`] reads at once.
const MAX_PIECE: usize = 64 << 20;

/// Reads an input of unknown size (standard input, a pipe) of at most `limit` bytes into pieces
/// that are never moved, and joins them only once the input has ended within the limit. One buffer
/// that doubles is copied at every doubling, and the allocator, which keeps freed memory for the
/// rest of a short command (`crates/cli/src/alloc.rs`), then holds every copy: refusing 1.2 GB of
/// standard input held 3 GB that way (docs/benchmarks.md). Refused, this holds the limit and one
/// byte; accepted, the input and its joined copy.
fn read_unsized(reader: &mut impl Read, name: &str, limit: usize) -> Result<Vec<u8>, Diagnostic> {
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut total = 0usize;
    loop {
        let want = total.clamp(CHUNK, MAX_PIECE);
        let mut piece = vec![0u8; want];
        let mut filled = 0usize;
        while filled < want {
            match read_some(reader, &mut piece[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => return Err(read_error(name, &e)),
            }
        }
        piece.truncate(filled);
        total = total.saturating_add(filled);
        let ended = filled < want;
        if filled > 0 {
            pieces.push(piece);
        }
        if total > limit {
            return Err(over_limit(name, limit));
        }
        if ended {
            break;
        }
    }
    if pieces.len() == 1 {
        return Ok(pieces.pop().unwrap_or_default());
    }
    let mut bytes = Vec::with_capacity(total);
    for piece in pieces {
        bytes.extend_from_slice(&piece);
    }
    Ok(bytes)
}

/// UTF-8 text from bytes, or a located error: UTF-16 and UTF-32 (with a byte-order mark, or UTF-16
/// recognised by the zero bytes around its first character) are named as such.
pub fn decode(name: &str, bytes: Vec<u8>, limit: usize) -> Result<String, Diagnostic> {
    if bytes.len() > limit {
        return Err(over_limit(name, limit));
    }
    let located =
        |message: &str| Diagnostic::error(Code::InputEncoding, Location::new(name, 1, 1), message);
    if bytes.starts_with(&[0xFF, 0xFE, 0, 0]) || bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Err(located("input is UTF-32; convert it to UTF-8"));
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(located("input is UTF-16; convert it to UTF-8"));
    }
    if let [a, b, ..] = bytes.as_slice() {
        // YAML and JSON start with a printable ASCII character; in UTF-16 without a byte-order
        // mark that is a zero byte beside it.
        let ascii = |c: u8| c.is_ascii_graphic() || c == b' ' || c == b'\n' || c == b'\r';
        if (*a == 0 && ascii(*b)) || (ascii(*a) && *b == 0) {
            return Err(located(
                "input looks like UTF-16 without a byte-order mark (zero bytes between the characters); convert it to UTF-8",
            ));
        }
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..valid];
        let line = memchr::memchr_iter(b'\n', before).count() + 1;
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        let column = utf8_chars(&before[line_start..]) + 1;
        Diagnostic::error(
            Code::InputEncoding,
            Location::new(
                name,
                u32::try_from(line).unwrap_or(u32::MAX),
                u32::try_from(column).unwrap_or(u32::MAX),
            ),
            "input is not valid UTF-8",
        )
    })
}

/// Characters in valid UTF-8 bytes: the bytes that are not continuation bytes.
pub(crate) fn utf8_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b as i8) >= -0x40).count()
}

/// One read, retried when interrupted.
fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

fn read_error(name: &str, e: &std::io::Error) -> Diagnostic {
    if name == "-" {
        error(
            Code::UnreadableInput,
            name,
            format!("cannot read standard input: {e}"),
        )
    } else {
        error(Code::UnreadableInput, name, format!("cannot read: {e}"))
    }
}

fn error(code: Code, name: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(code, Location::new(name, 0, 0), message)
}

fn as_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

pub(crate) fn display(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_refuses_one_byte_more() {
        for n in [0, 1, 4095, 4096, CHUNK, CHUNK + 1, 200_000] {
            let data = vec![b'a'; n];
            let text = read_stdin(&mut data.as_slice(), 200_000).unwrap();
            assert_eq!(text.len(), n);
        }
        let data = vec![b'a'; 200_001];
        let e = read_stdin(&mut data.as_slice(), 200_000).unwrap_err();
        assert_eq!(e.code, Code::OverLimit, "{e}");
    }

    #[test]
    fn utf16_is_named_with_and_without_a_byte_order_mark() {
        let le: Vec<u8> = "\u{feff}a: 1\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let e = decode("p.yaml", le, 1 << 20).unwrap_err();
        assert_eq!((e.location.line, e.location.column), (1, 1));
        assert!(e.message.contains("UTF-16"), "{e}");
        let be: Vec<u8> = "a: 1\n".encode_utf16().flat_map(u16::to_be_bytes).collect();
        let e = decode("p.yaml", be, 1 << 20).unwrap_err();
        assert!(e.message.contains("UTF-16"), "{e}");
    }

    #[test]
    fn invalid_utf8_is_located_in_characters() {
        let e = decode("x.yaml", b"a: 1\nb: \xc3\xa9\xff\n".to_vec(), 100).unwrap_err();
        assert_eq!((e.location.line, e.location.column), (2, 5), "{e}");
    }

    #[test]
    fn reads_stop_past_the_bound() {
        let mut endless = std::io::repeat(b'a');
        let e = read_stdin(&mut endless, 1000).unwrap_err();
        assert_eq!(e.code, Code::OverLimit, "{e}");
    }

    /// A reader that hands out a few bytes at a time, as a pipe does.
    struct Dribble<'a>(&'a [u8]);

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(7_001);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn input_of_unknown_size_is_joined_whole_across_its_pieces() {
        // Past several pieces (64 KiB, then doubling), each byte where it was read.
        let data: Vec<u8> = (0..600_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let text = read_stdin(&mut Dribble(&data), 1 << 20).unwrap();
        assert_eq!(text.as_bytes(), data.as_slice());
        let text = read_stdin(&mut Dribble(&data), data.len()).unwrap();
        assert_eq!(text.len(), data.len());
        let e = read_stdin(&mut Dribble(&data), data.len() - 1).unwrap_err();
        assert_eq!(e.code, Code::OverLimit, "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_folders_are_refused_unread() {
        let e = read_file(Path::new("/dev/zero"), &mut std::io::empty(), 1 << 30).unwrap_err();
        assert_eq!(e.code, Code::InputLeftOut, "{e}");
        assert!(e.message.contains("character device"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read_file(dir.path(), &mut std::io::empty(), 100).unwrap_err();
        assert_eq!(e.code, Code::UnreadableInput, "{e}");
    }
}
