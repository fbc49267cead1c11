//! The HTTP side of `gpu-trust serve`: each connection on a thread of its own (at most
//! [`MAX_CONNECTIONS`] at once, [`MAX_PER_CLIENT`] of one client; more are closed at once), one
//! request per connection, the request's head read within [`HEAD_TIMEOUT`] and at most
//! [`MAX_HEAD`] bytes, the answer written within [`WRITE_TIMEOUT`]: a slow or silent client holds
//! its own threads only, and `/healthz` answers.
//! With a certificate, TLS (rustls), the files read again when they change.

use super::access::{Access, Decision};
use super::{Log, Published};
use gpu_trust_live::access::User;
use gpu_trust_report::audit::prometheus;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// Connections one client (an IP address) may hold at once: a client that opens and holds many
/// cannot take every slot, so /healthz and /readyz still answer the kubelet and the others.
pub const MAX_PER_CLIENT: usize = 8;
/// How long a client has to send its request's head (and, with TLS, its handshake).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest request head.
pub const MAX_HEAD: usize = 16 * 1024;
/// How long writing the answer may take.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The certificate and key, read again when either file changes.
pub struct Tls {
    cert: PathBuf,
    key: PathBuf,
    state: Mutex<(
        Option<SystemTime>,
        Option<SystemTime>,
        Arc<rustls::ServerConfig>,
    )>,
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("{}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate in the file", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map(Arc::new)
        .map_err(|e| format!("{}: {e}", cert.display()))
}

impl Tls {
    pub fn load(cert: &Path, key: &Path) -> Result<Tls, String> {
        let config = server_config(cert, key)?;
        Ok(Tls {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            state: Mutex::new((modified(cert), modified(key), config)),
        })
    }

    /// The configuration, read again first when a file changed (a failed read keeps the last one).
    fn config(&self, log: Log) -> Option<Arc<rustls::ServerConfig>> {
        let mut s = self.state.lock().ok()?;
        let (c, k) = (modified(&self.cert), modified(&self.key));
        if (c, k) != (s.0, s.1) {
            match server_config(&self.cert, &self.key) {
                Ok(config) => {
                    *s = (c, k, config);
                    log.write(
                        "info",
                        "TLS certificate read again",
                        &[("file", Value::from(self.cert.display().to_string()))],
                    );
                }
                Err(e) => {
                    // Try again on the next connection; serve with the last good one meanwhile.
                    log.write(
                        "warn",
                        "the TLS certificate could not be read again; the last one is kept",
                        &[("error", Value::from(e))],
                    );
                }
            }
        }
        Some(Arc::clone(&s.2))
    }
}

/// The connections open, in all and per client.
#[derive(Default)]
struct Slots(Mutex<(usize, HashMap<IpAddr, usize>)>);

impl Slots {
    /// Takes a slot for `client`, if one is free for it.
    fn take(&self, client: IpAddr) -> bool {
        let Ok(mut s) = self.0.lock() else {
            return false;
        };
        let (all, per) = &mut *s;
        let mine = per.entry(client).or_default();
        if *all >= MAX_CONNECTIONS || *mine >= MAX_PER_CLIENT {
            if *mine == 0 {
                per.remove(&client);
            }
            return false;
        }
        *all += 1;
        *mine += 1;
        true
    }

    fn give_back(&self, client: IpAddr) {
        if let Ok(mut s) = self.0.lock() {
            let (all, per) = &mut *s;
            *all = all.saturating_sub(1);
            if let Some(mine) = per.get_mut(&client) {
                *mine -= 1;
                if *mine == 0 {
                    per.remove(&client);
                }
            }
        }
    }
}

/// Starts accepting connections on a thread of its own.
pub fn serve(
    listener: TcpListener,
    tls: Option<Tls>,
    published: Arc<RwLock<Published>>,
    access: Option<Arc<Access>>,
    log: Log,
) {
    let tls = tls.map(Arc::new);
    let slots = Arc::new(Slots::default());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let Ok(client) = stream.peer_addr().map(|a| a.ip()) else {
                continue;
            };
            if !slots.take(client) {
                drop(stream);
                continue;
            }
            let (published, access, tls, mine) = (
                Arc::clone(&published),
                access.clone(),
                tls.clone(),
                Arc::clone(&slots),
            );
            let spawned = std::thread::Builder::new().spawn(move || {
                let _ = connection(stream, tls.as_deref(), &published, access.as_deref(), log);
                mine.give_back(client);
            });
            if spawned.is_err() {
                // The closure was dropped with the failed spawn, without giving its slot back.
                slots.give_back(client);
            }
        }
    });
}

/// Reads up to the end of the request head, within the deadline and the size bound.
fn read_head(
    conn: &mut dyn Read,
    socket: &TcpStream,
    deadline: Instant,
) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || head.len() > MAX_HEAD {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "request head too slow or too long",
            ));
        }
        socket.set_read_timeout(Some(left))?;
        let n = conn.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

fn connection(
    stream: TcpStream,
    tls: Option<&Tls>,
    published: &RwLock<Published>,
    access: Option<&Access>,
    log: Log,
) -> std::io::Result<()> {
    let deadline = Instant::now() + HEAD_TIMEOUT;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    match tls.and_then(|t| t.config(log)) {
        Some(config) => {
            let socket = stream.try_clone()?;
            let conn = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
            let mut tls_stream = rustls::StreamOwned::new(conn, stream);
            let head = read_head(&mut tls_stream, &socket, deadline)?;
            let answer = respond(&head, published, access, log);
            write_answer(&mut tls_stream, &answer)?;
            tls_stream.conn.send_close_notify();
            tls_stream.flush()
        }
        None => {
            let socket = stream.try_clone()?;
            let mut plain = stream;
            let head = read_head(&mut plain, &socket, deadline)?;
            let answer = respond(&head, published, access, log);
            write_answer(&mut plain, &answer)
        }
    }
}

/// An answer: status line, content type, body, whether to send the body (not for HEAD), whether it
/// asks for a bearer token, and whether it asks to be asked again in a second.
struct Answer {
    status: &'static str,
    content_type: &'static str,
    body: String,
    head_only: bool,
    challenge: bool,
    retry_after: bool,
}

fn text(status: &'static str, body: &str) -> Answer {
    Answer {
        status,
        content_type: "text/plain; charset=utf-8",
        body: body.to_string(),
        head_only: false,
        challenge: false,
        retry_after: false,
    }
}

fn write_answer(out: &mut dyn Write, a: &Answer) -> std::io::Result<()> {
    let challenge = if a.challenge {
        "WWW-Authenticate: Bearer realm=\"gpu-trust\"\r\n"
    } else {
        ""
    };
    let retry = if a.retry_after {
        "Retry-After: 1\r\n"
    } else {
        ""
    };
    write!(
        out,
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{challenge}{retry}Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        a.status,
        a.content_type,
        a.body.len()
    )?;
    if !a.head_only {
        out.write_all(a.body.as_bytes())?;
    }
    out.flush()
}

const NOT_YET: &str = "the first audit is not done\n";
const NOT_COMPLETE: &str =
    "no complete audit is done yet (a kind that cannot be read makes it partial: see the log)\n";

fn respond(
    head: &[u8],
    published: &RwLock<Published>,
    access: Option<&Access>,
    log: Log,
) -> Answer {
    let head = String::from_utf8_lossy(head);
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let path = target.split('?').next().unwrap_or(target);
    // The token is read here and handed to the API server only: never logged, never stored as is.
    let token = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("authorization"))
        .and_then(|(_, v)| {
            let v = v.trim();
            let (scheme, rest) = v.split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| rest.trim().to_string())
        });
    let mut answer = answer(method, path, token.as_deref(), published, access, log);
    answer.head_only = method == "HEAD";
    answer
}

fn answer(
    method: &str,
    path: &str,
    token: Option<&str>,
    published: &RwLock<Published>,
    access: Option<&Access>,
    log: Log,
) -> Answer {
    if method != "GET" && method != "HEAD" {
        return text("405 Method Not Allowed", "only GET and HEAD\n");
    }
    let (audit, ready, process) = match published.read() {
        Ok(p) => (p.audit.clone(), p.ready, p.process.clone()),
        Err(_) => return text("500 Internal Server Error", "unavailable\n"),
    };
    match path {
        "/healthz" => return text("200 OK", "ok\n"),
        "/readyz" => {
            return if ready {
                text("200 OK", "ready\n")
            } else {
                text("503 Service Unavailable", NOT_COMPLETE)
            }
        }
        "/metrics" | "/report.json" | "/report.html" => {}
        _ => return text("404 Not Found", "not found\n"),
    }
    let tenants = audit
        .as_ref()
        .map(|a| a.report.tenants.as_slice())
        .unwrap_or(&[]);
    let decision = access.map(|a| a.decide(token, path, tenants));
    let visible = match admitted(decision.as_ref(), path, token.is_some(), log) {
        Ok(visible) => visible,
        Err(refusal) => return refusal,
    };
    let rendered = audit.as_ref().map(|a| match visible {
        None => Arc::clone(&a.full),
        Some(tenants) => a.view(tenants),
    });
    if path == "/metrics" {
        // The process's metrics from the start; the audit's once there is one.
        let audit_metrics = rendered.as_ref().map(|r| r.metrics.as_str()).unwrap_or("");
        let body = format!("{}{audit_metrics}", prometheus::render_process(&process));
        let content_type = "text/plain; version=0.0.4; charset=utf-8";
        return Answer {
            content_type,
            body,
            ..text("200 OK", "")
        };
    }
    let Some(r) = rendered else {
        return text("503 Service Unavailable", NOT_YET);
    };
    let (content_type, body) = if path == "/report.json" {
        ("application/json", r.json.clone())
    } else {
        ("text/html; charset=utf-8", r.html.clone())
    };
    Answer {
        content_type,
        body,
        ..text("200 OK", "")
    }
}

/// What the access review lets a request see: everything (`None`), or the views of some tenants;
/// else the answer that refuses it (401, 403, or 503 while the review goes on or cannot be made),
/// logged with the path and why.
fn admitted<'a>(
    decision: Option<&'a Decision>,
    path: &str,
    token: bool,
    log: Log,
) -> Result<Option<&'a BTreeSet<String>>, Answer> {
    let path = ("path", Value::from(path));
    let user = |user: &User| ("user", Value::from(user.username.as_str()));
    match decision {
        None | Some(Decision::Full(_)) => Ok(None),
        Some(Decision::Tenants(_, visible)) => Ok(Some(visible)),
        Some(Decision::Unauthenticated) => {
            let reason = if token {
                "the API server does not accept the token"
            } else {
                "no bearer token"
            };
            let fields = [
                path,
                ("status", Value::from(401)),
                ("reason", Value::from(reason)),
            ];
            log.write("warn", "request denied", &fields);
            let needed = "a bearer token the API server accepts is needed\n";
            Err(Answer {
                challenge: true,
                ..text("401 Unauthorized", needed)
            })
        }
        Some(Decision::Forbidden(u)) => {
            let fields = [path, ("status", Value::from(403)), user(u)];
            log.write("warn", "request denied", &fields);
            Err(text("403 Forbidden", "forbidden\n"))
        }
        Some(Decision::Reviewing(u)) => {
            let fields = [path, ("status", Value::from(503)), user(u)];
            let message = "the access review of a request goes on in the user's next requests";
            log.write("warn", message, &fields);
            let again = "the access review is not finished; ask again\n";
            Err(Answer {
                retry_after: true,
                ..text("503 Service Unavailable", again)
            })
        }
        Some(Decision::Unavailable(e)) => {
            let fields = [path, ("error", Value::from(e.as_str()))];
            log.write(
                "error",
                "the API server could not review a request",
                &fields,
            );
            let body = "the API server could not be asked\n";
            Err(text("503 Service Unavailable", body))
        }
    }
}
