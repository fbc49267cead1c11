//! Following a live cluster for `gpu-trust serve`: every kind the server serves of those ingest
//! reads is listed, then watched from the list's resource version; added, changed and deleted
//! objects update a store of documents (the same documents [`crate::read`] returns), and each
//! change bumps a generation that the caller waits on. A watch that ends is started again from the
//! last resource version it saw; one the server has compacted past (410 Gone) lists its kind again.
//! A kind that cannot be listed stays in the snapshot as an error diagnostic and an unread
//! collection (as [`crate::read`] has it), and is tried again. Discovery that fails is tried again
//! too. Every failed discovery, list or watch, and a watch that ends sooner than a healthy one
//! does, waits a [`Backoff`] delay before the next request, and is told to the caller's
//! `on_failure`.
//! A watch is bounded in time ([`WATCH_SECONDS`] and a margin) and in line length ([`MAX_LINE`]).
//!
//! Memory: the store holds one document per object, as the server sent it (no history, no copy of
//! earlier versions); a snapshot clones the documents for one audit at a time.

use crate::backoff::Backoff;
use crate::{
    connect, describe, discover, document, list_kind, runtime, Error, Options, Served, Snapshot,
};
use futures::io::{AsyncBufRead, AsyncBufReadExt};
use gpu_trust_ingest::api::ApiKind;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use kube::core::params::WatchParams;
use kube::core::Request;
use kube::Client;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long one watch request lasts before it is started again (below the client's read timeout).
pub const WATCH_SECONDS: u32 = 50;
/// A watch that ends sooner than this (without the server saying why) counts as failed: a server
/// that ends every watch at once is not asked again at once.
pub const HEALTHY_WATCH: Duration = Duration::from_secs(10);
/// How long after [`WATCH_SECONDS`] a watch is cut off when its server does not end it.
pub const WATCH_MARGIN: Duration = Duration::from_secs(15);
/// The longest line (one event) a watch may send: an object is at most about 1.5 MiB in etcd.
pub const MAX_LINE: usize = 16 << 20;

/// What went wrong while following the cluster, for the caller to log and count.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The API path of the collection.
    pub path: String,
    /// `discovery`, `list` or `watch`.
    pub request: &'static str,
    pub message: String,
    /// How long the kind waits before its next request.
    pub retry_in: Duration,
}

/// Where failures are told.
pub type OnFailure = Arc<dyn Fn(&Failure) + Send + Sync>;
/// How often the CustomResourceDefinitions are checked again for custom kinds with pod templates.
pub const CUSTOM_KINDS_EVERY: Duration = Duration::from_secs(60);

#[derive(Default)]
struct KindState {
    served: Option<Served>,
    objects: BTreeMap<String, String>,
    error: Option<Diagnostic>,
    listed: bool,
}

#[derive(Default)]
struct Store {
    kinds: Vec<KindState>,
    absent: Vec<ApiKind>,
    /// The namespace the read is scoped to.
    namespace: Option<String>,
    discovered: bool,
    /// Custom kinds with pod templates that are not read ([`crate::crds`]), once checked.
    unread_custom: Option<Vec<Diagnostic>>,
    generation: u64,
    fatal: Option<String>,
}

struct Shared {
    store: Mutex<Store>,
    changed: Condvar,
    failures: AtomicU64,
    on_failure: OnFailure,
    timeout: Duration,
}

impl Shared {
    fn failed(&self, path: &str, request: &'static str, message: String, retry_in: Duration) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        (self.on_failure)(&Failure {
            path: path.to_string(),
            request,
            message,
            retry_in,
        });
    }
}

impl Shared {
    fn update(&self, f: impl FnOnce(&mut Store)) {
        if let Ok(mut s) = self.store.lock() {
            f(&mut s);
            s.generation += 1;
            self.changed.notify_all();
        }
    }
}

/// The cluster as last seen, kept up to date by a background thread.
pub struct Mirror {
    shared: Arc<Shared>,
}

impl Mirror {
    /// Connects, discovers the kinds and starts following them on a thread of its own; every failed
    /// list or watch is told to `on_failure` (from that thread).
    pub fn start(options: Options, on_failure: OnFailure) -> Mirror {
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::default()),
            changed: Condvar::new(),
            failures: AtomicU64::new(0),
            on_failure,
            timeout: options.timeout(),
        });
        let thread_shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let shared = thread_shared;
            let rt = match runtime() {
                Ok(rt) => rt,
                Err(e) => return shared.update(|s| s.fatal = Some(e.to_string())),
            };
            rt.block_on(async {
                if let Err(e) = follow_cluster(&options, &shared).await {
                    shared.update(|s| s.fatal = Some(e.to_string()));
                }
            });
        });
        Mirror { shared }
    }

    /// Lists and watches that failed since the start.
    pub fn failures(&self) -> u64 {
        self.shared.failures.load(Ordering::Relaxed)
    }

    /// The current generation (it grows with every change seen).
    pub fn generation(&self) -> u64 {
        self.shared.store.lock().map(|s| s.generation).unwrap_or(0)
    }

    /// Waits until the generation is past `seen` or `timeout` passes; returns the generation.
    pub fn wait_past(&self, seen: u64, timeout: Duration) -> u64 {
        let Ok(guard) = self.shared.store.lock() else {
            return seen;
        };
        match self.shared.changed.wait_timeout_while(guard, timeout, |s| {
            s.generation <= seen && s.fatal.is_none()
        }) {
            Ok((s, _)) => s.generation,
            Err(_) => seen,
        }
    }

    /// Why following the cluster stopped, if it did (no usable kubeconfig or client).
    pub fn fatal(&self) -> Option<String> {
        self.shared.store.lock().ok().and_then(|s| s.fatal.clone())
    }

    /// Every object as a document, once every kind has been listed (or failed) at least once.
    pub fn snapshot(&self) -> Option<(u64, Snapshot)> {
        let s = self.shared.store.lock().ok()?;
        if !s.discovered || s.kinds.iter().any(|k| !k.listed) {
            return None;
        }
        let unread_custom = s.unread_custom.as_ref()?;
        let mut snapshot = Snapshot {
            absent: s.absent.clone(),
            unread: crate::unread_absent(&s.absent),
            ..Snapshot::default()
        };
        for k in &s.kinds {
            if let Some(served) = &k.served {
                snapshot.served.push(served.clone());
            }
            match &k.error {
                // A kind that cannot be read is unknown to ingest, as in a one-off read.
                Some(d) => {
                    if let Some(served) = &k.served {
                        snapshot
                            .unread
                            .push(served.unread(s.namespace.as_deref(), d));
                    }
                    snapshot.diagnostics.push(d.clone());
                }
                None => snapshot.inputs.extend(k.objects.iter().map(|(name, text)| {
                    gpu_trust_source::Input {
                        name: name.clone(),
                        text: text.clone(),
                    }
                })),
            }
        }
        snapshot.diagnostics.extend(unread_custom.iter().cloned());
        Some((s.generation, snapshot))
    }
}

/// Follows the cluster; only an unusable kubeconfig or client ends it. Discovery that fails (the
/// server unreachable, one of its requests refused, kinds every server serves missing) is tried
/// again after a [`Backoff`] delay, each failure told: a server that is down when `serve` starts,
/// or restarts, does not end the process.
async fn follow_cluster(options: &Options, shared: &Arc<Shared>) -> Result<(), Error> {
    let (client, server) = connect(options).await?;
    let mut backoff = Backoff::new();
    let (served, absent) = loop {
        match discover(&client, &server).await {
            Ok(found) => break found,
            Err(e) => {
                let delay = backoff.failed();
                shared.failed("/apis", "discovery", e.to_string(), delay);
                tokio::time::sleep(delay).await;
            }
        }
    };
    shared.update(|s| {
        s.namespace = options.namespace.clone();
        s.kinds = served
            .iter()
            .map(|k| KindState {
                served: Some(k.clone()),
                ..KindState::default()
            })
            .collect();
        s.absent = absent;
        s.discovered = true;
    });
    let namespace = options.namespace.as_deref();
    let kinds = futures::future::join_all(
        served
            .iter()
            .enumerate()
            .map(|(i, k)| follow_kind(&client, i, k, k.scope(namespace), shared)),
    );
    futures::future::join(kinds, follow_custom_kinds(&client, shared)).await;
    Ok(())
}

/// Checks the CustomResourceDefinitions for custom kinds with pod templates that are not read, now
/// and then every [`CUSTOM_KINDS_EVERY`]; a change of the answer is a change of the cluster.
async fn follow_custom_kinds(client: &Client, shared: &Arc<Shared>) {
    loop {
        let found = crate::crds::unread_workload_kinds(client, shared.timeout).await;
        let changed = shared
            .store
            .lock()
            .map(|s| s.unread_custom.as_ref() != Some(&found))
            .unwrap_or(false);
        if changed {
            shared.update(|s| s.unread_custom = Some(found));
        }
        tokio::time::sleep(CUSTOM_KINDS_EVERY).await;
    }
}

/// One event of a watch stream.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    object: &'a serde_json::value::RawValue,
}

#[derive(Deserialize)]
struct EventObject {
    #[serde(default)]
    code: Option<u16>,
    #[serde(default)]
    metadata: EventMeta,
}

#[derive(Deserialize, Default)]
struct EventMeta {
    #[serde(rename = "resourceVersion", default)]
    resource_version: Option<String>,
}

/// Lists one kind, then follows it for as long as the process runs, waiting a backoff delay after
/// every failure.
async fn follow_kind(
    client: &Client,
    index: usize,
    served: &Served,
    namespace: Option<&str>,
    shared: &Arc<Shared>,
) {
    let path = served.collection(namespace);
    let mut backoff = Backoff::new();
    loop {
        let mut resource_version = match list_kind(client, served, namespace, shared.timeout).await
        {
            Ok((inputs, rv)) => {
                shared.update(|s| {
                    let k = &mut s.kinds[index];
                    k.objects = inputs.into_iter().map(|i| (i.name, i.text)).collect();
                    k.error = None;
                    k.listed = true;
                });
                rv
            }
            Err(d) => {
                let delay = backoff.failed();
                shared.failed(&path, "list", d.message.clone(), delay);
                shared.update(|s| {
                    let k = &mut s.kinds[index];
                    k.error = Some(d);
                    k.listed = true;
                });
                tokio::time::sleep(delay).await;
                continue;
            }
        };
        // Watch from the list's version until the server says the version is gone.
        loop {
            let started = Instant::now();
            let end = watch_kind(client, index, served, &path, &mut resource_version, shared).await;
            let healthy = started.elapsed() >= HEALTHY_WATCH;
            let gone = matches!(end, WatchEnd::Gone);
            let message = match end {
                WatchEnd::Timeout if healthy => {
                    backoff.healthy();
                    continue;
                }
                // A version compacted away after a healthy watch: list again at once.
                WatchEnd::Gone if healthy => break,
                WatchEnd::Timeout => format!(
                    "the server ended the watch after {:.1}s",
                    started.elapsed().as_secs_f64()
                ),
                WatchEnd::Gone => "the resource version is gone (410 Gone)".to_string(),
                WatchEnd::Failed(m) => m,
            };
            let delay = backoff.failed();
            shared.failed(&path, "watch", message, delay);
            tokio::time::sleep(delay).await;
            if gone {
                break;
            }
        }
    }
}

/// How a watch ended.
enum WatchEnd {
    /// The stream ended without an error (the server's timeout, or it closed the stream).
    Timeout,
    /// The server no longer has the resource version (410 Gone): list again.
    Gone,
    /// Any other failure.
    Failed(String),
}

/// The next line of a watch stream into `line` (without its end); `Ok(false)` at the end of the
/// stream. A line longer than [`MAX_LINE`] is an error.
async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Result<bool, String> {
    line.clear();
    loop {
        let chunk = reader.fill_buf().await.map_err(|e| e.to_string())?;
        if chunk.is_empty() {
            return Ok(!line.is_empty());
        }
        let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if line.len() + take > MAX_LINE {
            return Err(format!("a watch event is longer than {MAX_LINE} bytes"));
        }
        line.extend_from_slice(&chunk[..take]);
        reader.consume_unpin(take);
        if done {
            line.pop();
            return Ok(true);
        }
    }
}

/// Follows one kind from `resource_version` (updated as events arrive) until the stream ends.
async fn watch_kind(
    client: &Client,
    index: usize,
    served: &Served,
    path: &str,
    resource_version: &mut String,
    shared: &Arc<Shared>,
) -> WatchEnd {
    let params = WatchParams::default().timeout(WATCH_SECONDS);
    let Ok(request) = Request::new(path).watch(&params, resource_version) else {
        return WatchEnd::Failed("the watch request could not be made".to_string());
    };
    let limit = Duration::from_secs(u64::from(WATCH_SECONDS)) + WATCH_MARGIN;
    let follow = async {
        let stream = match client.request_stream(request).await {
            Ok(s) => s,
            Err(kube::Error::Api(status)) if status.code == 410 => return WatchEnd::Gone,
            Err(e) => return WatchEnd::Failed(describe(&e)),
        };
        let mut reader = Box::pin(stream);
        let mut line = Vec::new();
        loop {
            match next_line(&mut reader, &mut line).await {
                Ok(true) => {}
                Ok(false) => return WatchEnd::Timeout,
                Err(e) => return WatchEnd::Failed(e),
            }
            let Ok(text) = std::str::from_utf8(&line) else {
                return WatchEnd::Failed("a watch event is not UTF-8".to_string());
            };
            if text.trim().is_empty() {
                continue;
            }
            let Ok(event) = serde_json::from_str::<Event<'_>>(text) else {
                return WatchEnd::Failed("a watch event is not one JSON event".to_string());
            };
            let object = event.object.get();
            let meta: Option<EventObject> = serde_json::from_str(object).ok();
            if event.kind == "ERROR" {
                // A Status: 410 Gone means the version was compacted away; list again.
                let code = meta.as_ref().and_then(|m| m.code);
                if code == Some(410) {
                    return WatchEnd::Gone;
                }
                return WatchEnd::Failed(format!(
                    "the server sent an error event ({})",
                    code.map(|c| c.to_string())
                        .unwrap_or_else(|| "no code".to_string())
                ));
            }
            if let Some(rv) = meta.and_then(|m| m.metadata.resource_version) {
                *resource_version = rv;
            }
            if event.kind == "BOOKMARK" {
                continue;
            }
            let doc = match document(served, object) {
                Ok(d) => d,
                Err(message) => {
                    let d = Diagnostic::error(
                        Code::ClusterUnread,
                        Location::new(path.trim_start_matches('/'), 0, 0),
                        format!(
                            "{} ({}) could not be read from the cluster: {message}",
                            served.kind.kind, served.api_version
                        ),
                    );
                    shared.update(|s| s.kinds[index].error = Some(d));
                    continue;
                }
            };
            shared.update(|s| {
                let objects = &mut s.kinds[index].objects;
                if event.kind == "DELETED" {
                    objects.remove(&doc.name);
                } else {
                    objects.insert(doc.name, doc.text);
                }
            });
        }
    };
    match tokio::time::timeout(limit, follow).await {
        Ok(end) => end,
        Err(_) => WatchEnd::Failed(format!("the watch went on past {}s", limit.as_secs())),
    }
}
