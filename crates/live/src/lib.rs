//! Reading a live cluster through its API server, the way kubectl does: the kubeconfig's current
//! context (or another one, or the in-cluster ServiceAccount), with the authentication kube-rs
//! implements (client certificates, tokens, exec plugins, OIDC).
//!
//! [`read`] asks the server which of the kinds ingest reads it serves ([`gpu_trust_ingest::api`],
//! the one list that the read-only role of [`rbac`] is made from), lists each of them page by page
//! (`limit`/`continue`, the whole list again when a continue token has expired: 410 Gone), a few
//! kinds at a time, and returns every object as a located document for ingest: its name is the
//! object's API path without the leading slash and with `.json` after it
//! (`api/v1/namespaces/ml/pods/trainer-0.json`: a Namespace's path is a prefix of its objects', and
//! the suffix keeps every name a possible file name, so the same objects can be audited as files), its text
//! the object as the server sent it, with `apiVersion` and `kind` put back where a list leaves them
//! out. Ingest then reads the objects exactly as it reads files, so a live audit and an audit of
//! the same objects written to files give the same verdicts.
//!
//! A kind the server serves but that cannot be read (403 Forbidden, any other failure) is an error
//! diagnostic located at its API path: the audit fails closed on it unless the user accepts a
//! partial audit, as for an unreadable file. So is a custom kind outside the list whose definition
//! describes pod templates ([`crds`]): a file audit would search it, a live audit does not.

pub mod access;
pub mod backoff;
pub mod crds;
pub mod feed;
pub mod rbac;
pub mod reports;
pub mod service;
pub mod watch;

use futures::stream::{self, StreamExt};
use gpu_trust_ingest::api::{read_kinds, ApiKind, Unread};
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_source::Input;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::params::ListParams;
use kube::core::Request;
use kube::discovery::{verbs, Scope};
use kube::{Client, Config, Discovery};
use serde::Deserialize;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Objects per list page (what kubectl asks for: `--chunk-size` 500).
pub const PAGE_LIMIT: u32 = 500;
/// Kinds listed at the same time.
pub const PARALLEL_LISTS: usize = 4;
/// How many times a list whose continue token expired (410 Gone) is started again.
pub const MAX_RESTARTS: usize = 3;
/// How long one request may take, from sending it to the last byte of the answer (unless
/// [`Options::request_timeout`] says otherwise): a server that drips its answer byte by byte is
/// cut off then.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Pages of one list at most (with [`PAGE_LIMIT`], 10 million objects of one kind).
pub const MAX_PAGES: usize = 20_000;
/// Pages in a row without an object that a list may have before it is an error (a server that
/// hands out continue tokens without end).
pub const MAX_EMPTY_PAGES: usize = 10;

/// Kinds every API server serves: a server whose discovery lacks one is not one to audit (a proxy
/// that hides them, a broken aggregation layer), and the audit fails closed. (group, kind)
pub const REQUIRED: &[(&str, &str)] = &[
    ("", "Pod"),
    ("", "Node"),
    ("", "Namespace"),
    ("", "ConfigMap"),
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
];

/// Kinds a server may leave out of its discovery without being refused, whose absence leaves what
/// other objects say unknown: they are handed to ingest as unread, a gap only where an object uses
/// them (a pod that names a runtime class, whose handler says whether it runs the NVIDIA container
/// runtime). RuntimeClass (`node.k8s.io/v1`) is stable since Kubernetes 1.20
/// (https://kubernetes.io/docs/concepts/containers/runtime-class/; KEP-585), so a server that does
/// not list it hides it. (group, kind)
pub const REQUIRED_WHEN_USED: &[(&str, &str)] = &[("node.k8s.io", "RuntimeClass")];

/// Where the cluster is and what part of it to read.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A kubeconfig file instead of `$KUBECONFIG` or `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// A context of the kubeconfig instead of its current context.
    pub context: Option<String>,
    /// Read namespaced kinds in this namespace only (cluster-scoped kinds are read whole, and so
    /// are the kinds that configure the GPUs: [`ApiKind::configures_gpus`]).
    pub namespace: Option<String>,
    /// How long one request may take ([`REQUEST_TIMEOUT`] when `None`).
    pub request_timeout: Option<Duration>,
}

impl Options {
    /// How long one request may take.
    pub fn timeout(&self) -> Duration {
        self.request_timeout.unwrap_or(REQUEST_TIMEOUT)
    }
}

/// Why the cluster could not be read at all, or a request `serve` makes of the API server failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kubeconfig (a file, or the one kubectl would use) or the client made from it is unusable.
    #[error("{origin}: {message}")]
    Config { origin: String, message: String },
    /// No kubeconfig and no ServiceAccount of a pod to read the cluster with.
    #[error("no cluster to read: {0} (pass PATH to audit files, or --kubeconfig)")]
    NoCluster(String),
    #[error("API discovery failed: {0}")]
    Discovery(String),
    /// Kinds every API server serves are missing from discovery.
    #[error(
        "the server does not list {0} in its discovery, which every Kubernetes API server serves: \
         it cannot be audited (a proxy that hides kinds, or not an API server)"
    )]
    NotAnApiServer(String),
    #[error("cannot start the client's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// A request that could not be built.
    #[error("{0}")]
    Request(String),
    /// The API server failed or refused a request at `path`.
    #[error("{path}: {message}")]
    Api { path: String, message: String },
    /// The API server's answer at `path` is not what was asked for.
    #[error("{path}: {message}")]
    Answer { path: String, message: String },
    #[error("the API server did not answer within {0}s")]
    Timeout(u64),
    #[error("the API client has stopped")]
    Stopped,
}

/// A kind the server serves, resolved to the version and path to list it at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub kind: ApiKind,
    /// `v1`, `apps/v1`...
    pub api_version: String,
    /// The collection's path without a namespace: `/api/v1/pods`, `/apis/apps/v1/deployments`.
    pub path: String,
    pub namespaced: bool,
}

impl Served {
    /// The collection's path in `namespace` (all namespaces when `None`, and always for
    /// cluster-scoped kinds).
    pub fn collection(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced => {
                let (prefix, resource) = self.path.rsplit_once('/').unwrap_or(("", &self.path));
                format!("{prefix}/namespaces/{ns}/{resource}")
            }
            _ => self.path.clone(),
        }
    }
}

impl Served {
    /// What a failed list of the kind, told by `diagnostic`, leaves unknown to ingest.
    pub fn unread(&self, namespace: Option<&str>, diagnostic: &Diagnostic) -> Unread {
        Unread {
            kind: self.kind,
            namespace: self.scope(namespace).map(str::to_string),
            reason: format!("{} could not be listed", diagnostic.location.file),
        }
    }

    /// The namespace to list the kind in when the read is scoped to `namespace`: the kinds that
    /// configure the GPUs (the device plugin's and mig-parted's ConfigMaps, the device plugin's
    /// DaemonSet) are listed in every namespace, since the sharing in force on every node depends
    /// on them.
    pub fn scope<'n>(&self, namespace: Option<&'n str>) -> Option<&'n str> {
        if self.kind.configures_gpus() {
            None
        } else {
            namespace
        }
    }
}

/// The kinds of [`REQUIRED_WHEN_USED`] among `absent`, as ingest's unread collections.
pub fn unread_absent(absent: &[ApiKind]) -> Vec<Unread> {
    absent
        .iter()
        .filter(|k| REQUIRED_WHEN_USED.contains(&(k.group, k.kind)))
        .map(|k| Unread {
            kind: *k,
            namespace: None,
            reason: format!(
                "the API server does not list {} ({}) in its discovery",
                k.kind, k.group
            ),
        })
        .collect()
}

/// What a read of the cluster gave.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// One document per object, named by its API path, in a fixed order (kinds in the order of
    /// [`read_kinds`], objects in the order the server listed them).
    pub inputs: Vec<Input>,
    /// The kinds that could not be read (errors located at their API path).
    pub diagnostics: Vec<Diagnostic>,
    /// The same kinds, with the namespace they were listed in, for ingest: what is missing from
    /// them is unknown, not absent from the cluster.
    pub unread: Vec<Unread>,
    /// The kinds that were read.
    pub served: Vec<Served>,
    /// Kinds ingest reads that the server does not serve (a CRD that is not installed).
    pub absent: Vec<ApiKind>,
    /// The API server read ([`read`] says; a watch's store does not).
    pub server: Option<String>,
    /// The kubeconfig context it was read through: the one asked for, else the current context
    /// (none inside a pod).
    pub context: Option<String>,
}

/// Progress of a read, for a terminal.
pub trait Progress: Sync {
    fn update(&self, kinds_done: usize, kinds_total: usize, objects: usize);
}

/// No progress shown.
pub struct Quiet;

impl Progress for Quiet {
    fn update(&self, _: usize, _: usize, _: usize) {}
}

/// A client for the cluster `options` names, and a line naming it.
pub async fn connect(options: &Options) -> Result<(Client, String), Error> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        cluster: None,
        user: None,
    };
    let config =
        match &options.kubeconfig {
            Some(path) => {
                let config_error = |e: &dyn std::fmt::Display| Error::Config {
                    origin: path.display().to_string(),
                    message: e.to_string(),
                };
                let kubeconfig = Kubeconfig::read_from(path).map_err(|e| config_error(&e))?;
                Config::from_custom_kubeconfig(kubeconfig, &kube_options)
                    .await
                    .map_err(|e| config_error(&e))?
            }
            None if options.context.is_some() => Config::from_kubeconfig(&kube_options)
                .await
                .map_err(|e| Error::Config {
                    origin: "kubeconfig".to_string(),
                    message: e.to_string(),
                })?,
            // The current context, or the ServiceAccount of the pod this runs in.
            None => Config::infer()
                .await
                .map_err(|e| Error::NoCluster(e.to_string()))?,
        };
    let mut config = config;
    config.read_timeout = Some(options.timeout());
    config.connect_timeout = Some(options.timeout());
    let server = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| Error::Config {
        origin: server.clone(),
        message: e.to_string(),
    })?;
    Ok((client, server))
}

/// A request's text, within `timeout` from sending it to the last byte.
pub(crate) async fn request_text(
    client: &Client,
    request: http::Request<Vec<u8>>,
    timeout: Duration,
) -> Result<String, kube::Error> {
    match tokio::time::timeout(timeout, client.request_text(request)).await {
        Ok(r) => r,
        Err(_) => Err(kube::Error::Service(
            format!(
                "the answer did not arrive in full within {}s",
                timeout.as_secs_f64()
            )
            .into(),
        )),
    }
}

/// The kinds of [`read_kinds`] that the server serves, at the version to read them at, and those it
/// does not serve.
pub async fn discover(client: &Client) -> Result<(Vec<Served>, Vec<ApiKind>), Error> {
    let kinds = read_kinds();
    let mut groups: Vec<&str> = kinds.iter().map(|k| k.group).collect();
    groups.sort_unstable();
    groups.dedup();
    let discovery = Discovery::new(client.clone())
        .filter(&groups)
        .run()
        .await
        .map_err(|e| Error::Discovery(describe(&e)))?;
    let mut served = Vec::new();
    let mut absent = Vec::new();
    for kind in kinds {
        let found = discovery.get(kind.group).and_then(|group| {
            if kind.versions.is_empty() {
                return group.recommended_kind(kind.kind);
            }
            // The server's preferred version when ingest reads it, else the first ingest reads.
            let preferred = group.preferred_version();
            let mut versions: Vec<&str> = kind.versions.to_vec();
            if let Some(p) = preferred {
                if let Some(i) = versions.iter().position(|v| *v == p) {
                    let p = versions.remove(i);
                    versions.insert(0, p);
                }
            }
            versions.iter().find_map(|v| {
                group
                    .versioned_resources(v)
                    .into_iter()
                    .find(|(ar, _)| ar.kind == kind.kind)
            })
        });
        match found {
            Some((ar, caps)) if caps.supports_operation(verbs::LIST) => {
                let base = if ar.group.is_empty() {
                    format!("/api/{}", ar.version)
                } else {
                    format!("/apis/{}/{}", ar.group, ar.version)
                };
                served.push(Served {
                    kind,
                    api_version: ar.api_version.clone(),
                    path: format!("{base}/{}", ar.plural),
                    namespaced: caps.scope == Scope::Namespaced,
                });
            }
            _ => absent.push(kind),
        }
    }
    let missing: Vec<String> = absent
        .iter()
        .filter(|k| REQUIRED.contains(&(k.group, k.kind)))
        .map(|k| {
            if k.group.is_empty() {
                format!("{} (v1)", k.kind)
            } else {
                format!("{} ({})", k.kind, k.group)
            }
        })
        .collect();
    if !missing.is_empty() {
        return Err(Error::NotAnApiServer(missing.join(", ")));
    }
    Ok((served, absent))
}

/// Reads every kind ingest reads from the cluster `options` names.
pub fn read(options: &Options, progress: &dyn Progress) -> Result<Snapshot, Error> {
    runtime()?.block_on(async {
        let (client, server) = connect(options).await?;
        let mut snapshot = read_with(&client, options, progress).await?;
        snapshot.server = Some(server);
        snapshot.context = options.context.clone().or_else(|| {
            match &options.kubeconfig {
                Some(path) => Kubeconfig::read_from(path).ok(),
                None => Kubeconfig::read().ok(),
            }
            .and_then(|k| k.current_context)
        });
        Ok(snapshot)
    })
}

/// A runtime for one command: the lists are network-bound, one thread drives them all.
pub fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}

/// Reads every kind the server serves of those ingest reads, with `client`.
pub async fn read_with(
    client: &Client,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Snapshot, Error> {
    let namespace = options.namespace.as_deref();
    let timeout = options.timeout();
    let (served, absent) = discover(client).await?;
    let total = served.len();
    let done = AtomicUsize::new(0);
    let objects = AtomicUsize::new(0);
    progress.update(0, total, 0);
    let mut results: Vec<(usize, Result<Vec<Input>, Diagnostic>)> =
        stream::iter(served.iter().enumerate())
            .map(|(i, s)| {
                let done = &done;
                let objects = &objects;
                async move {
                    let r = list_kind(client, s, s.scope(namespace), timeout)
                        .await
                        .map(|(items, _)| items);
                    if let Ok(items) = &r {
                        objects.fetch_add(items.len(), Ordering::Relaxed);
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress.update(d, total, objects.load(Ordering::Relaxed));
                    (i, r)
                }
            })
            .buffer_unordered(PARALLEL_LISTS)
            .collect()
            .await;
    results.sort_by_key(|(i, _)| *i);
    let mut snapshot = Snapshot {
        unread: unread_absent(&absent),
        served,
        absent,
        ..Snapshot::default()
    };
    for (i, r) in results {
        match r {
            Ok(items) => snapshot.inputs.extend(items),
            Err(d) => {
                if let Some(s) = snapshot.served.get(i) {
                    snapshot.unread.push(s.unread(namespace, &d));
                }
                snapshot.diagnostics.push(d);
            }
        }
    }
    // Custom kinds outside the list that carry pod templates: not read, so not a clean audit.
    snapshot
        .diagnostics
        .extend(crds::unread_workload_kinds(client, timeout).await);
    Ok(snapshot)
}

/// One page of a list: the objects are kept as the server wrote them.
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: ListMeta,
    /// Absent in an answer that is not a list (a single object, a Status).
    #[serde(borrow, default)]
    items: Option<Vec<&'a serde_json::value::RawValue>>,
}

#[derive(Deserialize, Default)]
struct ListMeta {
    #[serde(rename = "continue", default)]
    continue_token: Option<String>,
    #[serde(rename = "resourceVersion", default)]
    resource_version: Option<String>,
}

/// What an object says of itself, to name it.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: HeadMeta,
}

#[derive(Deserialize, Default)]
struct HeadMeta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: Option<String>,
}

/// Every object of one kind, and the resource version the list was read at. The answer must be
/// what a list is: a `<Kind>List` with `items` of the kind, pages of one resource version, continue
/// tokens that neither repeat nor go on without objects, no object twice; anything else is an
/// error at the kind's API path, as is an answer that does not arrive within `timeout`.
pub(crate) async fn list_kind(
    client: &Client,
    served: &Served,
    namespace: Option<&str>,
    timeout: Duration,
) -> Result<(Vec<Input>, String), Diagnostic> {
    let path = served.collection(namespace);
    let located = |message: String| {
        Diagnostic::error(
            Code::ClusterUnread,
            Location::new(path.trim_start_matches('/'), 0, 0),
            format!(
                "{} ({}) could not be read from the cluster: {message}",
                served.kind.kind, served.api_version
            ),
        )
    };
    let list_name = format!("{}List", served.kind.kind);
    let mut restarts = 0;
    'list: loop {
        let mut inputs = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut token: Option<String> = None;
        let mut tokens: HashSet<String> = HashSet::new();
        let mut version: Option<String> = None;
        let mut empty_pages = 0;
        for _ in 0..MAX_PAGES {
            let mut params = ListParams::default().limit(PAGE_LIMIT);
            if let Some(t) = &token {
                params = params.continue_token(t);
            }
            let request = Request::new(&path)
                .list(&params)
                .map_err(|e| located(e.to_string()))?;
            let text = match request_text(client, request, timeout).await {
                Ok(text) => text,
                Err(kube::Error::Api(status)) if status.code == 410 && token.is_some() => {
                    // The continue token expired (the server compacted past it): the list is
                    // read again from the start, as client-go's pager does.
                    restarts += 1;
                    if restarts > MAX_RESTARTS {
                        return Err(located(format!(
                            "the list expired (410 Gone) {restarts} times while it was read"
                        )));
                    }
                    continue 'list;
                }
                Err(e) => return Err(located(describe(&e))),
            };
            let page: Page<'_> = serde_json::from_str(&text)
                .map_err(|e| located(format!("the server's answer is not a list: {e}")))?;
            if let Some(k) = page.kind.as_deref() {
                if k != list_name && k != "List" {
                    return Err(located(format!(
                        "the server answered a {k}, not a {list_name}"
                    )));
                }
            }
            let Some(items) = page.items else {
                return Err(located(
                    "the server's answer has no items: it is not a list".to_string(),
                ));
            };
            let page_version = page.metadata.resource_version.unwrap_or_default();
            match &version {
                None => version = Some(page_version.clone()),
                Some(v) if *v != page_version => {
                    return Err(located(format!(
                        "the pages of one list have different resource versions ({v}, then \
                         {page_version}): they are not one consistent list"
                    )));
                }
                Some(_) => {}
            }
            empty_pages = if items.is_empty() { empty_pages + 1 } else { 0 };
            for item in items {
                let doc = document(served, item.get()).map_err(|e| located(e.to_string()))?;
                if !names.insert(doc.name.clone()) {
                    return Err(located(format!(
                        "the list holds {} twice",
                        doc.name.trim_end_matches(".json")
                    )));
                }
                inputs.push(doc);
            }
            match page.metadata.continue_token {
                Some(t) if !t.is_empty() => {
                    if !tokens.insert(t.clone()) {
                        return Err(located(
                            "the server handed out the same continue token twice".to_string(),
                        ));
                    }
                    if empty_pages >= MAX_EMPTY_PAGES {
                        return Err(located(format!(
                            "{empty_pages} pages in a row without an object, and still a continue token"
                        )));
                    }
                    token = Some(t);
                }
                _ => return Ok((inputs, version.unwrap_or_default())),
            }
        }
        return Err(located(format!(
            "the list did not end after {MAX_PAGES} pages"
        )));
    }
}

/// Why an item of a list is not a document ingest can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// The item is not a JSON object (serde would read a struct from a sequence too).
    #[error("an item of the list is not an object")]
    NotAnObject,
    /// The item's metadata does not read.
    #[error("an item of the list is not an object: {0}")]
    Unreadable(String),
    /// The item says it is of another kind than the one listed.
    #[error("an item of the list is a {found}, not a {listed}")]
    OtherKind { found: String, listed: String },
    /// The item says it is of another version than the one listed.
    #[error("an item of the list is of {found}, not {listed}")]
    OtherVersion { found: String, listed: String },
}

/// An object of a list as a document for ingest: named by its API path, with `apiVersion` and
/// `kind` put first where the list left them out (lists of built-in kinds do).
pub fn document(served: &Served, item: &str) -> Result<Input, DocumentError> {
    // serde would read a struct from a sequence too: only a JSON object is an object.
    if !item.trim_start().starts_with('{') {
        return Err(DocumentError::NotAnObject);
    }
    let head: Head =
        serde_json::from_str(item).map_err(|e| DocumentError::Unreadable(e.to_string()))?;
    // An item that says what it is must be of the kind listed.
    if let Some(kind) = &head.kind {
        if kind != served.kind.kind {
            return Err(DocumentError::OtherKind {
                found: kind.clone(),
                listed: served.kind.kind.to_string(),
            });
        }
    }
    if let Some(v) = &head.api_version {
        if *v != served.api_version {
            return Err(DocumentError::OtherVersion {
                found: v.clone(),
                listed: served.api_version.clone(),
            });
        }
    }
    let name = object_path(
        served,
        head.metadata.namespace.as_deref(),
        &head.metadata.name,
    );
    let text = if head.api_version.is_none() && head.kind.is_none() {
        let rest = item
            .trim_start()
            .strip_prefix('{')
            .unwrap_or(item)
            .trim_start();
        let sep = if rest.starts_with('}') { "" } else { "," };
        format!(
            "{{\"apiVersion\":{},\"kind\":{}{sep}{rest}",
            serde_json::Value::from(served.api_version.as_str()),
            serde_json::Value::from(served.kind.kind),
        )
    } else {
        item.to_string()
    };
    Ok(Input { name, text })
}

/// What the location of one object names: its API path without the leading slash, and `.json`.
pub fn object_path(served: &Served, namespace: Option<&str>, name: &str) -> String {
    let collection = served.collection(if served.namespaced { namespace } else { None });
    format!("{}/{name}.json", collection.trim_start_matches('/'))
}

/// An error of the client in one line, with the server's status where it sent one.
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) => {
            let reason = match status.code {
                403 => "forbidden",
                401 => "unauthorized",
                404 => "not found",
                410 => "gone",
                _ => "refused",
            };
            if status.message.is_empty() {
                format!("{} {reason}", status.code)
            } else {
                format!("{} {reason}: {}", status.code, status.message)
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(group: &'static str, kind: &'static str, namespaced: bool) -> Served {
        let k = read_kinds()
            .into_iter()
            .find(|k| k.group == group && k.kind == kind)
            .expect("a kind ingest reads");
        let (api_version, base) = if group.is_empty() {
            ("v1".to_string(), "/api/v1".to_string())
        } else {
            (format!("{group}/v1"), format!("/apis/{group}/v1"))
        };
        Served {
            kind: k,
            api_version,
            path: format!("{base}/{}", k.resource),
            namespaced,
        }
    }

    #[test]
    fn items_of_built_in_lists_get_their_api_version_and_kind_back() {
        let pods = served("", "Pod", true);
        let doc = document(
            &pods,
            r#"{"metadata":{"name":"trainer-0","namespace":"ml"},"spec":{}}"#,
        )
        .expect("document");
        assert_eq!(doc.name, "api/v1/namespaces/ml/pods/trainer-0.json");
        assert_eq!(
            doc.text,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer-0","namespace":"ml"},"spec":{}}"#
        );
        let empty = document(&pods, "{}").expect("document");
        assert_eq!(empty.text, r#"{"apiVersion":"v1","kind":"Pod"}"#);
    }

    #[test]
    fn custom_resources_keep_the_text_the_server_sent() {
        let policies = served("nvidia.com", "ClusterPolicy", false);
        let item = r#"{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","metadata":{"name":"cluster-policy"}}"#;
        let doc = document(&policies, item).expect("document");
        assert_eq!(
            doc.name,
            "apis/nvidia.com/v1/clusterpolicies/cluster-policy.json"
        );
        assert_eq!(doc.text, item);
        assert_eq!(
            document(&policies, "[1]").err(),
            Some(DocumentError::NotAnObject)
        );
        assert_eq!(
            document(&policies, r#"{"apiVersion":"v1","kind":"Pod"}"#).err(),
            Some(DocumentError::OtherKind {
                found: "Pod".to_string(),
                listed: "ClusterPolicy".to_string()
            })
        );
    }

    #[test]
    fn a_namespace_narrows_namespaced_collections_only() {
        let pods = served("", "Pod", true);
        assert_eq!(pods.collection(None), "/api/v1/pods");
        assert_eq!(pods.collection(Some("ml")), "/api/v1/namespaces/ml/pods");
        let nodes = served("", "Node", false);
        assert_eq!(nodes.collection(Some("ml")), "/api/v1/nodes");
    }
}
