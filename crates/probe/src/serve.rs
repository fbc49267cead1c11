//! A remote aggressor host: `probe-worker --serve ADDR` in one pod accepts connections from the victim's
//! probe in another pod and runs a fresh aggressor worker process for each, relaying the line protocol.
//!
//! Each connection starts with one line: [`SESSION_LINE`] (start a worker and relay until either side
//! closes) or [`SHUTDOWN_LINE`] (the probe is done: the server exits). Connections are served one at a
//! time, and the server ends after its lifetime in any case.

use crate::error::ProbeError;
use crate::protocol::{SESSION_LINE, SHUTDOWN_LINE};
use crate::transport::ChildGuard;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a new connection has to say what it wants.
const HANDSHAKE: Duration = Duration::from_secs(10);

pub struct ServeOptions {
    pub listen: String,
    /// How long the server runs at most.
    pub lifetime: Duration,
    /// The worker command: this binary and the arguments that make it an aggressor worker.
    pub exe: PathBuf,
    pub worker_args: Vec<String>,
}

/// Serves until a shutdown line or the end of the lifetime.
pub fn serve_remote(opts: &ServeOptions, log: &mut dyn FnMut(&str)) -> Result<(), ProbeError> {
    let listener = TcpListener::bind(&opts.listen)
        .map_err(|e| ProbeError::io(format!("listening on {}", opts.listen), e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| ProbeError::io("listener", e))?;
    let until = Instant::now() + opts.lifetime;
    log(&format!("serving aggressor workers on {}", opts.listen));
    while Instant::now() < until {
        match listener.accept() {
            Ok((stream, peer)) => {
                if stream.set_nonblocking(false).is_err() {
                    continue;
                }
                match session(stream, opts, until) {
                    Ok(true) => {
                        log(&format!("shutdown requested by {peer}"));
                        return Ok(());
                    }
                    Ok(false) => log(&format!("session with {peer} ended")),
                    Err(e) => log(&format!("session with {peer}: {e}")),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(ProbeError::io("accepting a connection", e)),
        }
    }
    log("lifetime over");
    Ok(())
}

/// One connection. `Ok(true)` when it asked the server to shut down.
fn session(stream: TcpStream, opts: &ServeOptions, until: Instant) -> Result<bool, ProbeError> {
    stream
        .set_read_timeout(Some(HANDSHAKE))
        .map_err(|e| ProbeError::io("connection", e))?;
    let mut reader = BufReader::new(
        stream
            .try_clone()
            .map_err(|e| ProbeError::io("connection", e))?,
    );
    let mut first = String::new();
    (&mut reader)
        .take(256)
        .read_line(&mut first)
        .map_err(|e| ProbeError::io("handshake", e))?;
    match first.trim() {
        SHUTDOWN_LINE => return Ok(true),
        SESSION_LINE => {}
        other => {
            let _ = stream.shutdown(Shutdown::Both);
            return Err(ProbeError::Worker(format!(
                "unexpected handshake `{}`",
                other.chars().take(40).collect::<String>()
            )));
        }
    }
    let _ = stream.set_read_timeout(None);
    let mut child = Command::new(&opts.exe)
        .args(&opts.worker_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| ProbeError::Worker(format!("starting {}: {e}", opts.exe.display())))?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let mut guard = ChildGuard::new(child);
    let (Some(mut stdin), Some(mut stdout)) = (stdin, stdout) else {
        return Err(ProbeError::Worker(
            "the worker's pipes could not be opened".into(),
        ));
    };
    let mut out = stream
        .try_clone()
        .map_err(|e| ProbeError::io("connection", e))?;
    // A scoped thread: the request relay is joined before the session returns. It ends when the
    // connection is shut down below (its read returns) or when the worker's input closes.
    std::thread::scope(|scope| {
        // Requests: connection -> worker, until the connection closes its writing side.
        scope.spawn(move || relay(&mut reader, &mut stdin));
        // Replies: worker -> connection, until the worker exits.
        relay(&mut stdout, &mut out);
        guard.wait_until(until.min(Instant::now() + Duration::from_secs(10)));
        let _ = stream.shutdown(Shutdown::Both);
    });
    Ok(false)
}

/// Copies until end of input or an error, forwarding each read at once. (`std::io::copy` may move a pipe
/// into a socket with `splice`, which waits for more data than one protocol line.)
fn relay(from: &mut dyn Read, to: &mut dyn Write) {
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

/// Tells a server at `address` that the probe is done.
pub fn request_shutdown(address: &str) -> Result<(), ProbeError> {
    let mut s = TcpStream::connect(address).map_err(|e| ProbeError::io(address.to_string(), e))?;
    s.write_all(format!("{SHUTDOWN_LINE}\n").as_bytes())
        .map_err(|e| ProbeError::io(address.to_string(), e))
}
