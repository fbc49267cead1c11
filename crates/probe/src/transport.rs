//! How the parent reaches a worker: a child process over pipes, a TCP connection to a remote aggressor,
//! or (in tests) a thread over channels. All three carry the same [`crate::protocol`] messages. A
//! worker process's own end of the pipes is here too ([`serve_stdio`]).
//!
//! Every link is bounded in time (each receive has a deadline) and cleans up on drop: a child process is
//! killed and waited for, so no worker outlives its scenario, on error paths included.

use crate::device::{Backend, DeviceSpec, Role};
use crate::error::ProbeError;
use crate::protocol::{decode, encode, LineError, Reply, Request, MAX_LINE, SESSION_LINE};
use crate::worker::{self, Incoming};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why no reply came.
#[derive(Debug, Error)]
pub enum LinkError {
    /// Nothing arrived before the deadline.
    #[error("no reply before the deadline")]
    Timeout,
    /// The worker wrote something that is not a reply, or its output could not be read.
    #[error(transparent)]
    Line(#[from] LineError),
    /// The worker's output ended.
    #[error("the worker closed its output")]
    OutputClosed,
}

/// Why a request did not reach the worker.
#[derive(Debug, Error)]
pub enum SendError {
    #[error("the worker's input is closed")]
    InputClosed,
    #[error("the worker has ended")]
    Ended,
    #[error("writing to the worker: {0}")]
    Write(#[source] std::io::Error),
    #[error("writing to the remote worker: {0}")]
    WriteRemote(#[source] std::io::Error),
}

/// One worker, from the parent's side.
pub trait WorkerLink: Send {
    fn send(&mut self, request: &Request) -> Result<(), SendError>;
    /// The next reply, or `Timeout` at `deadline`.
    fn recv(&mut self, deadline: Instant) -> Result<Reply, LinkError>;
    /// Asks the worker to exit and waits for it until `deadline`, then forces it.
    fn finish(&mut self, deadline: Instant);
    /// Ends the worker now.
    fn kill(&mut self);
    /// What the worker wrote on its standard error, if anything (last few KiB).
    fn diagnostics(&self) -> String {
        String::new()
    }
}

/// Starts workers.
pub trait Launcher: Send + Sync {
    fn launch(&self, role: Role, device: &DeviceSpec) -> Result<Box<dyn WorkerLink>, ProbeError>;
}

/// Reads lines from `reader` into a channel until it closes or a line is too long or not UTF-8.
fn pump<R: Read + Send + 'static, T: Send + 'static>(
    reader: R,
    parse: fn(&str) -> Result<T, LineError>,
) -> Receiver<Result<T, LineError>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(reader);
        loop {
            let mut line = String::new();
            let mut limited = (&mut reader).take(MAX_LINE as u64 + 1);
            match limited.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) if line.len() > MAX_LINE => {
                    let _ = tx.send(Err(LineError::Overlong));
                    break;
                }
                Ok(_) => {
                    if line.trim().is_empty() {
                        continue;
                    }
                    if tx.send(parse(&line)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(LineError::Read(e)));
                    break;
                }
            }
        }
    });
    rx
}

fn recv_until<T>(rx: &Receiver<Result<T, LineError>>, deadline: Instant) -> Result<T, LinkError> {
    let wait = deadline.saturating_duration_since(Instant::now());
    match rx.recv_timeout(wait) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(LinkError::Line(e)),
        Err(RecvTimeoutError::Timeout) => Err(LinkError::Timeout),
        Err(RecvTimeoutError::Disconnected) => Err(LinkError::OutputClosed),
    }
}

/// A child process that is killed and reaped when dropped.
pub struct ChildGuard {
    child: Option<Child>,
}

impl ChildGuard {
    pub fn new(child: Child) -> Self {
        ChildGuard { child: Some(child) }
    }

    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Waits for the child to exit until `deadline`; kills it then. Always reaps.
    pub fn wait_until(&mut self, deadline: Instant) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break,
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How long `finish` lets a worker exit by itself before killing it.
const EXIT_GRACE: Duration = Duration::from_secs(10);
/// Bytes of a worker's standard error kept for error messages.
const STDERR_TAIL: usize = 4096;

/// A worker process: this binary re-executed with the hidden worker subcommand.
pub struct ProcessLink {
    guard: ChildGuard,
    stdin: Option<ChildStdin>,
    replies: Receiver<Result<Reply, LineError>>,
    stderr: Arc<Mutex<String>>,
}

impl WorkerLink for ProcessLink {
    fn send(&mut self, request: &Request) -> Result<(), SendError> {
        let stdin = self.stdin.as_mut().ok_or(SendError::InputClosed)?;
        stdin
            .write_all(encode(request).as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(SendError::Write)
    }

    fn recv(&mut self, deadline: Instant) -> Result<Reply, LinkError> {
        recv_until(&self.replies, deadline)
    }

    fn finish(&mut self, deadline: Instant) {
        let _ = self.send(&Request::Exit);
        self.stdin = None;
        let grace = (Instant::now() + EXIT_GRACE).min(deadline.max(Instant::now()));
        self.guard.wait_until(grace);
    }

    fn kill(&mut self) {
        self.stdin = None;
        self.guard.kill();
    }

    fn diagnostics(&self) -> String {
        self.stderr
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }
}

/// Starts worker processes: `EXE probe-worker --role ROLE --device DEV [backend args]`.
pub struct ProcessLauncher {
    pub exe: PathBuf,
    /// Arguments before the role (the hidden subcommand's name).
    pub subcommand: Vec<String>,
    pub backend: Arc<dyn Backend>,
}

impl Launcher for ProcessLauncher {
    fn launch(&self, role: Role, device: &DeviceSpec) -> Result<Box<dyn WorkerLink>, ProbeError> {
        let mut cmd = Command::new(&self.exe);
        cmd.args(&self.subcommand)
            .arg("--role")
            .arg(role.as_str())
            .arg("--device")
            .arg(device.to_string())
            .args(self.backend.worker_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in self.backend.worker_env(device) {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| ProbeError::Worker(format!("starting {}: {e}", self.exe.display())))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let guard = ChildGuard::new(child);
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            return Err(ProbeError::Worker(
                "the worker's pipes could not be opened".into(),
            ));
        };
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(pipe) = stderr_pipe {
            let sink = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(pipe);
                let mut line = String::new();
                while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
                    if let Ok(mut s) = sink.lock() {
                        s.push_str(&line);
                        if s.len() > STDERR_TAIL {
                            let mut cut = s.len() - STDERR_TAIL;
                            while !s.is_char_boundary(cut) {
                                cut += 1;
                            }
                            s.drain(..cut);
                        }
                    }
                    line.clear();
                }
            });
        }
        Ok(Box::new(ProcessLink {
            guard,
            stdin: Some(stdin),
            replies: pump(stdout, decode::<Reply>),
            stderr,
        }))
    }
}

/// A worker in a thread of this process, over channels (tests, and the fake backend).
pub struct ThreadLink {
    requests: Option<Sender<Incoming>>,
    replies: Receiver<Result<Reply, LineError>>,
    done: Receiver<()>,
}

impl WorkerLink for ThreadLink {
    fn send(&mut self, request: &Request) -> Result<(), SendError> {
        self.requests
            .as_ref()
            .ok_or(SendError::InputClosed)?
            .send(Ok(request.clone()))
            .map_err(|_| SendError::Ended)
    }

    fn recv(&mut self, deadline: Instant) -> Result<Reply, LinkError> {
        recv_until(&self.replies, deadline)
    }

    fn finish(&mut self, deadline: Instant) {
        let _ = self.send(&Request::Exit);
        self.requests = None;
        let wait = deadline
            .saturating_duration_since(Instant::now())
            .min(EXIT_GRACE);
        let _ = self.done.recv_timeout(wait);
    }

    fn kill(&mut self) {
        // A thread cannot be killed: closing its input makes it stop at its next look.
        self.requests = None;
    }
}

/// Runs workers as threads with the given backend's sessions.
pub struct ThreadLauncher {
    pub backend: Arc<dyn Backend>,
}

impl Launcher for ThreadLauncher {
    fn launch(&self, role: Role, device: &DeviceSpec) -> Result<Box<dyn WorkerLink>, ProbeError> {
        let (req_tx, req_rx) = mpsc::channel::<Incoming>();
        let (rep_tx, rep_rx) = mpsc::channel::<Result<Reply, LineError>>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let backend = Arc::clone(&self.backend);
        let device = device.clone();
        std::thread::Builder::new()
            .name(format!("probe-{role}"))
            .spawn(move || {
                let opened = backend.open_session(role, &device);
                let mut reply = |r: &Reply| rep_tx.send(Ok(r.clone())).is_ok();
                worker::serve(opened, &req_rx, &mut reply);
                let _ = done_tx.send(());
            })
            .map_err(|e| ProbeError::Worker(format!("starting a worker thread: {e}")))?;
        Ok(Box::new(ThreadLink {
            requests: Some(req_tx),
            replies: rep_rx,
            done: done_rx,
        }))
    }
}

/// A remote aggressor: a connection to `probe-worker --serve` in another pod, which runs a fresh worker
/// process per connection.
pub struct TcpLink {
    stream: TcpStream,
    replies: Receiver<Result<Reply, LineError>>,
}

impl WorkerLink for TcpLink {
    fn send(&mut self, request: &Request) -> Result<(), SendError> {
        self.stream
            .write_all(encode(request).as_bytes())
            .and_then(|()| self.stream.flush())
            .map_err(SendError::WriteRemote)
    }

    fn recv(&mut self, deadline: Instant) -> Result<Reply, LinkError> {
        recv_until(&self.replies, deadline)
    }

    fn finish(&mut self, deadline: Instant) {
        let _ = self.send(&Request::Exit);
        let _ = self.stream.shutdown(Shutdown::Write);
        // The server reaps its worker; wait for it to close the connection.
        let wait_until = deadline.min(Instant::now() + EXIT_GRACE);
        while recv_until(&self.replies, wait_until).is_ok() {}
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    fn kill(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

impl Drop for TcpLink {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Connects `role` to a remote worker server; other roles are started by `local`.
pub struct RemoteLauncher {
    pub address: String,
    pub remote_role: Role,
    pub local: Box<dyn Launcher>,
    /// How long to keep trying to connect (the other pod may still be starting).
    pub connect_for: Duration,
}

impl Launcher for RemoteLauncher {
    fn launch(&self, role: Role, device: &DeviceSpec) -> Result<Box<dyn WorkerLink>, ProbeError> {
        if role != self.remote_role {
            return self.local.launch(role, device);
        }
        let until = Instant::now() + self.connect_for;
        let mut last = String::from("no address");
        loop {
            let addrs = self
                .address
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<_>>());
            match addrs {
                Ok(list) => {
                    for addr in list {
                        match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
                            Ok(mut stream) => {
                                stream
                                    .write_all(format!("{SESSION_LINE}\n").as_bytes())
                                    .map_err(|e| ProbeError::io(self.address.clone(), e))?;
                                let reader = stream
                                    .try_clone()
                                    .map_err(|e| ProbeError::io(self.address.clone(), e))?;
                                return Ok(Box::new(TcpLink {
                                    stream,
                                    replies: pump(reader, decode::<Reply>),
                                }));
                            }
                            Err(e) => last = e.to_string(),
                        }
                    }
                }
                Err(e) => last = e.to_string(),
            }
            if Instant::now() >= until {
                return Err(ProbeError::Worker(format!(
                    "no remote {role} at {}: {last}",
                    self.address
                )));
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

/// Feeds a worker process's standard input into the channel `worker::serve` reads.
pub fn stdin_requests() -> Receiver<Incoming> {
    pump(std::io::stdin(), decode::<Request>)
}

/// Runs a worker process: requests from standard input, replies on standard output (one line each).
pub fn serve_stdio(backend: &dyn Backend, role: Role, device: &DeviceSpec) {
    let opened = backend.open_session(role, device);
    let requests = stdin_requests();
    let mut reply = |r: &Reply| {
        let mut out = std::io::stdout().lock();
        out.write_all(encode(r).as_bytes())
            .and_then(|()| out.flush())
            .is_ok()
    };
    worker::serve(opened, &requests, &mut reply);
}
