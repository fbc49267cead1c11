//! Following a live cluster for `gpu-trust serve`: every kind the server serves of those ingest
//! reads is listed, then watched from the list's resource version; added, changed and deleted
//! objects update a store of documents (the same documents [`crate::read`] returns), and each
//! change bumps a generation that the caller waits on. A watch that ends is started again from the
//! last resource version it saw; one the server has compacted past (410 Gone) lists its kind again.
//! A kind that cannot be listed stays in the snapshot as an error diagnostic, and is tried again.
//!
//! Memory: the store holds one document per object, as the server sent it (no history, no copy of
//! earlier versions); a snapshot clones the documents for one audit at a time.

use crate::{connect, discover, document, list_kind, runtime, Error, Options, Served, Snapshot};
use futures::io::AsyncBufReadExt;
use futures::stream::StreamExt;
use gpu_trust_ingest::api::ApiKind;
use gpu_trust_model::{Diagnostic, Location};
use kube::core::params::WatchParams;
use kube::core::Request;
use kube::Client;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long one watch request lasts before it is started again (below the client's read timeout).
pub const WATCH_SECONDS: u32 = 50;
/// How long to wait before listing a kind again after a failure.
pub const RETRY: Duration = Duration::from_secs(15);
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
    discovered: bool,
    /// Custom kinds with pod templates that are not read ([`crate::crds`]), once checked.
    unread_custom: Option<Vec<Diagnostic>>,
    generation: u64,
    fatal: Option<String>,
}

struct Shared {
    store: Mutex<Store>,
    changed: Condvar,
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
    /// Connects, discovers the kinds and starts following them on a thread of its own.
    pub fn start(options: Options) -> Mirror {
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::default()),
            changed: Condvar::new(),
        });
        let thread_shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let shared = thread_shared;
            let rt = match runtime() {
                Ok(rt) => rt,
                Err(e) => return shared.update(|s| s.fatal = Some(e.0)),
            };
            rt.block_on(async {
                if let Err(e) = follow_cluster(&options, &shared).await {
                    shared.update(|s| s.fatal = Some(e.0));
                }
            });
        });
        Mirror { shared }
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

    /// Why following the cluster stopped, if it did (no cluster, discovery failed).
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
            ..Snapshot::default()
        };
        for k in &s.kinds {
            if let Some(served) = &k.served {
                snapshot.served.push(served.clone());
            }
            match &k.error {
                Some(d) => snapshot.diagnostics.push(d.clone()),
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

async fn follow_cluster(options: &Options, shared: &Arc<Shared>) -> Result<(), Error> {
    let (client, _) = connect(options).await?;
    let (served, absent) = discover(&client).await?;
    shared.update(|s| {
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
        let found = crate::crds::unread_workload_kinds(client).await;
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

/// Lists one kind, then follows it for as long as the process runs.
async fn follow_kind(
    client: &Client,
    index: usize,
    served: &Served,
    namespace: Option<&str>,
    shared: &Arc<Shared>,
) {
    loop {
        let resource_version = match list_kind(client, served, namespace).await {
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
                shared.update(|s| {
                    let k = &mut s.kinds[index];
                    k.error = Some(d);
                    k.listed = true;
                });
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        watch_kind(client, index, served, namespace, resource_version, shared).await;
    }
}

/// Follows one kind from `resource_version` until the server says the version is gone (the caller
/// then lists again).
async fn watch_kind(
    client: &Client,
    index: usize,
    served: &Served,
    namespace: Option<&str>,
    mut resource_version: String,
    shared: &Arc<Shared>,
) {
    let path = served.collection(namespace);
    let params = WatchParams::default().timeout(WATCH_SECONDS);
    loop {
        let Ok(request) = Request::new(&path).watch(&params, &resource_version) else {
            return;
        };
        let stream = match client.request_stream(request).await {
            Ok(s) => s,
            Err(kube::Error::Api(status)) if status.code == 410 => return,
            Err(_) => {
                tokio::time::sleep(RETRY).await;
                return;
            }
        };
        let mut lines = Box::pin(stream).lines();
        while let Some(line) = lines.next().await {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let Ok(event) = serde_json::from_str::<Event<'_>>(&line) else {
                continue;
            };
            let object = event.object.get();
            let meta: Option<EventObject> = serde_json::from_str(object).ok();
            if event.kind == "ERROR" {
                // A Status: 410 Gone means the version was compacted away; list again.
                if meta.as_ref().and_then(|m| m.code) == Some(410) {
                    return;
                }
                break;
            }
            if let Some(rv) = meta.and_then(|m| m.metadata.resource_version) {
                resource_version = rv;
            }
            if event.kind == "BOOKMARK" {
                continue;
            }
            let doc = match document(served, object) {
                Ok(d) => d,
                Err(message) => {
                    let d = Diagnostic::error(
                        Location::new(path.trim_start_matches('/'), 0, 0),
                        message,
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
    }
}
