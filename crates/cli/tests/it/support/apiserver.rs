//! A recording of a cluster served over HTTP on loopback through the Kubernetes API paths, for the
//! tests of the live audit and of `gpu-trust serve`.
//!
//! This is our own small server, written for these tests; it is not a kube-apiserver. It serves
//! what a client of the real one reads: the discovery documents (`/api`, `/api/v1`, `/apis`,
//! `/apis/<group>/<version>`), lists at `/api/v1/...` and `/apis/<group>/<version>/...` (all
//! namespaces or one), pages of at most `page` objects with `continue` tokens, items of built-in
//! kinds without `apiVersion` and `kind` (as the API server writes lists), a 403 `Status` for the
//! resources it is told to forbid, a 410 `Status` the first time a continue token of a resource it
//! is told to expire is used, and watch streams (`?watch=1`) of the objects added after the list's
//! resource version. Faithfulness to the real client is checked by pointing kubectl at it.

#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The resources the recorded clusters' API server serves: (group, version, kind, resource,
/// namespaced). More than gpu-trust reads (Services, Secrets, Leases), and custom resources only of
/// the projects the recorded clusters run.
pub const SERVED: &[Resource] = &[
    ("", "v1", "Namespace", "namespaces", false),
    ("", "v1", "Node", "nodes", false),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
    ),
    ("", "v1", "Pod", "pods", true),
    ("", "v1", "ConfigMap", "configmaps", true),
    ("", "v1", "Service", "services", true),
    ("", "v1", "Secret", "secrets", true),
    ("", "v1", "ServiceAccount", "serviceaccounts", true),
    (
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        true,
    ),
    ("", "v1", "PodTemplate", "podtemplates", true),
    ("apps", "v1", "Deployment", "deployments", true),
    ("apps", "v1", "StatefulSet", "statefulsets", true),
    ("apps", "v1", "DaemonSet", "daemonsets", true),
    ("apps", "v1", "ReplicaSet", "replicasets", true),
    (
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
    ),
    ("batch", "v1", "Job", "jobs", true),
    ("batch", "v1", "CronJob", "cronjobs", true),
    ("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", false),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    ),
    ("coordination.k8s.io", "v1", "Lease", "leases", true),
    (
        "resource.k8s.io",
        "v1",
        "ResourceClaim",
        "resourceclaims",
        true,
    ),
    (
        "resource.k8s.io",
        "v1",
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        true,
    ),
    (
        "resource.k8s.io",
        "v1",
        "DeviceClass",
        "deviceclasses",
        false,
    ),
    (
        "resource.k8s.io",
        "v1",
        "ResourceSlice",
        "resourceslices",
        false,
    ),
    (
        "nvidia.com",
        "v1",
        "ClusterPolicy",
        "clusterpolicies",
        false,
    ),
    ("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", true),
    ("kubeflow.org", "v1", "MPIJob", "mpijobs", true),
    ("ray.io", "v1", "RayCluster", "rayclusters", true),
    ("ray.io", "v1", "RayJob", "rayjobs", true),
    (
        "serving.kserve.io",
        "v1beta1",
        "InferenceService",
        "inferenceservices",
        true,
    ),
    (
        "serving.kserve.io",
        "v1alpha1",
        "ServingRuntime",
        "servingruntimes",
        true,
    ),
    (
        "leaderworkerset.x-k8s.io",
        "v1",
        "LeaderWorkerSet",
        "leaderworkersets",
        true,
    ),
    ("scheduling.run.ai", "v2", "Queue", "queues", false),
];

/// The API groups whose lists leave `apiVersion` and `kind` out of their items.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "node.k8s.io",
    "rbac.authorization.k8s.io",
    "coordination.k8s.io",
    "resource.k8s.io",
];

/// One object of the recorded cluster.
#[derive(Debug, Clone)]
pub struct Object {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub resource: &'static str,
    pub namespaced: bool,
    pub namespace: Option<String>,
    pub name: String,
    /// The object with `apiVersion` and `kind`.
    pub value: Value,
    /// The resource version it was added at.
    pub added: u64,
}

impl Object {
    pub fn from_value(value: Value) -> Object {
        let api_version = value["apiVersion"]
            .as_str()
            .expect("apiVersion")
            .to_string();
        let kind = value["kind"].as_str().expect("kind").to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        let &(group, version, kind, resource, namespaced) = SERVED
            .iter()
            .find(|(g, v, k, _, _)| *g == group && *v == version && *k == kind)
            .unwrap_or_else(|| panic!("the test server does not serve {api_version} {kind}"));
        let name = value["metadata"]["name"]
            .as_str()
            .expect("metadata.name")
            .to_string();
        let namespace = namespaced.then(|| {
            value["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_string()
        });
        let mut value = value;
        if let Some(ns) = &namespace {
            // The API server fills in the namespace of every namespaced object it stores.
            value["metadata"]["namespace"] = Value::from(ns.as_str());
        }
        Object {
            group,
            version,
            kind,
            resource,
            namespaced,
            namespace,
            name,
            value,
            added: 0,
        }
    }

    /// The object as an item of a list: built-in kinds without `apiVersion` and `kind`.
    pub fn item_text(&self) -> String {
        let mut v = self.value.clone();
        if BUILT_IN_GROUPS.contains(&self.group) {
            if let Some(m) = v.as_object_mut() {
                m.remove("apiVersion");
                m.remove("kind");
            }
        }
        serde_json::to_string(&v).expect("serialise")
    }

    /// The object's API path, without the leading slash, and `.json`: what a live audit names it.
    pub fn path(&self) -> String {
        let base = if self.group.is_empty() {
            format!("api/{}", self.version)
        } else {
            format!("apis/{}/{}", self.group, self.version)
        };
        match &self.namespace {
            Some(ns) => format!(
                "{base}/namespaces/{ns}/{}/{}.json",
                self.resource, self.name
            ),
            None => format!("{base}/{}/{}.json", self.resource, self.name),
        }
    }

    /// The object as a file, as `kubectl get --raw` of its path gives it with `apiVersion` and
    /// `kind` first where the list left them out.
    pub fn file_text(&self) -> String {
        let item = self.item_text();
        if BUILT_IN_GROUPS.contains(&self.group) {
            let api_version = if self.group.is_empty() {
                self.version.to_string()
            } else {
                format!("{}/{}", self.group, self.version)
            };
            let rest = &item[1..];
            let sep = if rest.starts_with('}') { "" } else { "," };
            format!(
                "{{\"apiVersion\":\"{api_version}\",\"kind\":\"{}\"{sep}{rest}",
                self.kind
            )
        } else {
            item
        }
    }
}

/// The objects of a `kubectl get -o yaml` dump (a List, or a stream of objects).
pub fn load(path: &Path) -> Vec<Object> {
    let text = std::fs::read_to_string(path).expect("read example");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("parse example");
    let mut out = Vec::new();
    for doc in docs {
        if doc.is_null() {
            continue;
        }
        match doc["items"].as_array() {
            Some(items) if doc["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                out.extend(items.iter().cloned().map(Object::from_value))
            }
            _ => out.push(Object::from_value(doc)),
        }
    }
    out
}

/// What the server does besides serving.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    /// Objects per page at most (0: as many as the client asks for).
    pub page: usize,
    /// Resources whose lists answer 403.
    pub forbidden: Vec<&'static str>,
    /// Resources whose first continue token answers 410 Gone.
    pub expire_once: Vec<&'static str>,
    /// Resources left out of discovery.
    pub hidden: Vec<&'static str>,
    /// Resources whose lists misbehave, and how.
    pub hostile: Vec<(&'static str, Hostile)>,
    /// Every watch answers 500 at once.
    pub fail_watches: bool,
    /// The tokens TokenReview accepts: (token, user name, groups).
    pub users: Vec<(&'static str, &'static str, Vec<&'static str>)>,
    /// What SubjectAccessReview allows: (user name, what).
    pub grants: Vec<(&'static str, Grant)>,
    /// The first replace of a report answers 409 Conflict.
    pub conflict_once: bool,
    /// Namespaces where every write of a report answers 403 Forbidden.
    pub refused_reports: Vec<&'static str>,
    /// The first so many requests of a group's discovery document answer 500.
    pub fail_discovery: usize,
}

/// A list answer that is not what a list is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hostile {
    /// A list object without `items`.
    NoItems,
    /// A single object instead of a list.
    SingleObject,
    /// Items of another kind.
    OtherKind,
    /// Each page at another resource version.
    ChangingVersion,
    /// The same continue token on every page.
    RepeatingToken,
    /// A new continue token on every page, with no items, for ever.
    EndlessToken,
    /// The answer a byte every half second.
    Drip,
    /// Every list answers 500 Internal Server Error.
    ServerError,
}

/// An access a SubjectAccessReview allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// `get` on a non-resource path.
    Path(&'static str),
    /// `list pods` in a namespace.
    ListPods(&'static str),
}

struct State {
    objects: Vec<Object>,
    behaviour: Behaviour,
    expired: BTreeSet<String>,
    resource_version: u64,
    log: Vec<String>,
    /// OpenReports reports by (namespace, name).
    reports: std::collections::BTreeMap<(String, String), Value>,
    conflicted: bool,
    discovery_failed: usize,
}

/// The running server.
pub struct ApiServer {
    pub port: u16,
    state: Arc<(Mutex<State>, Condvar)>,
}

/// A kubeconfig whose current context is the server at `url`.
pub fn kubeconfig_for(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: recorded\n  cluster:\n    server: {url}\n\
         users:\n- name: auditor\n  user:\n    token: recorded-token\n\
         contexts:\n- name: recorded\n  context:\n    cluster: recorded\n    user: auditor\n\
         current-context: recorded\n"
    )
}

impl ApiServer {
    pub fn start(objects: Vec<Object>, behaviour: Behaviour) -> ApiServer {
        ApiServer::start_on(0, objects, behaviour)
    }

    /// Starts the server on loopback at `port` (0: any free port).
    pub fn start_on(port: u16, objects: Vec<Object>, behaviour: Behaviour) -> ApiServer {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind loopback");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new((
            Mutex::new(State {
                objects,
                behaviour,
                expired: BTreeSet::new(),
                resource_version: 1000,
                log: Vec::new(),
                reports: Default::default(),
                conflicted: false,
                discovery_failed: 0,
            }),
            Condvar::new(),
        ));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve_connection(stream, &shared);
                });
            }
        });
        ApiServer { port, state }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A kubeconfig whose current context is this server.
    pub fn kubeconfig(&self) -> String {
        kubeconfig_for(&self.url())
    }

    /// Every request line served so far (path and query).
    pub fn log(&self) -> Vec<String> {
        self.state.0.lock().expect("lock").log.clone()
    }

    /// The reports written to the server, by (namespace, name).
    pub fn reports(&self) -> std::collections::BTreeMap<(String, String), Value> {
        self.state.0.lock().expect("lock").reports.clone()
    }

    /// Puts a report there as someone else would.
    pub fn put_report(&self, namespace: &str, name: &str, value: Value) {
        let mut s = self.state.0.lock().expect("lock");
        s.resource_version += 1;
        let mut value = value;
        value["metadata"]["resourceVersion"] = Value::from(s.resource_version.to_string());
        s.reports
            .insert((namespace.to_string(), name.to_string()), value);
    }

    pub fn objects(&self) -> Vec<Object> {
        self.state.0.lock().expect("lock").objects.clone()
    }

    /// Adds an object; watchers of its resource see it.
    pub fn add(&self, value: Value) {
        let (lock, cvar) = &*self.state;
        let mut s = lock.lock().expect("lock");
        s.resource_version += 1;
        let mut o = Object::from_value(value);
        o.added = s.resource_version;
        o.value["metadata"]["resourceVersion"] = Value::from(s.resource_version.to_string());
        s.objects.push(o);
        cvar.notify_all();
    }
}

fn status(code: u16, reason: &str, message: &str) -> (u16, String) {
    let body = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    (code, body.to_string())
}

fn query_param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

fn serve_connection(
    stream: TcpStream,
    state: &Arc<(Mutex<State>, Condvar)>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut content_length = 0usize;
        let mut authorization = None;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 {
                return Ok(());
            }
            let h = header.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    content_length = v.trim().parse().unwrap_or(0);
                }
                if k.eq_ignore_ascii_case("authorization") {
                    authorization = Some(v.trim().to_string());
                }
            }
        }
        let mut body = vec![0u8; content_length.min(1 << 24)];
        if content_length > 0 {
            std::io::Read::read_exact(&mut reader, &mut body)?;
        }
        let method = request_line
            .split_whitespace()
            .next()
            .unwrap_or("GET")
            .to_string();
        let target = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("/")
            .to_string();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let query = percent_decode(query);
        {
            let mut s = state.0.lock().expect("lock");
            s.log.push(format!("{path}?{query}"));
            if let Some(a) = authorization {
                s.log.push(format!("authorization: {a}"));
            }
        }
        let watch = matches!(query_param(&query, "watch"), Some("1" | "true"));
        if watch && state.0.lock().expect("lock").behaviour.fail_watches {
            let (code, body) = status(500, "InternalError", "watches are broken here");
            write!(
                stream,
                "HTTP/1.1 {code} Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )?;
            stream.flush()?;
            continue;
        }
        if watch {
            return stream_watch(&mut stream, state, path, &query);
        }
        let body = String::from_utf8_lossy(&body).into_owned();
        let (code, body) = match special(state, &method, path, &body) {
            Some(answer) => answer,
            None => answer(state, path, &query),
        };
        if code == 200 && hostile(state, path) == Some(Hostile::Drip) {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )?;
            for b in body.bytes() {
                stream.write_all(&[b])?;
                stream.flush()?;
                std::thread::sleep(Duration::from_millis(500));
            }
            continue;
        }
        let reason = match code {
            200 => "OK",
            201 => "Created",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            409 => "Conflict",
            410 => "Gone",
            _ => "Error",
        };
        write!(
            stream,
            "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )?;
        stream.flush()?;
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a list path names: the served resource and the namespace.
/// A row of [`SERVED`].
type Resource = (&'static str, &'static str, &'static str, &'static str, bool);

fn parse_collection(path: &str) -> Option<(&'static Resource, Option<String>)> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let (namespace, resource) = match rest {
        [r] => (None, *r),
        ["namespaces", ns, r] => (Some(ns.to_string()), *r),
        _ => return None,
    };
    let served = SERVED
        .iter()
        .find(|(g, v, _, r, _)| *g == group && *v == version && *r == resource)?;
    if namespace.is_some() && !served.4 {
        return None;
    }
    Some((served, namespace))
}

fn answer(state: &Arc<(Mutex<State>, Condvar)>, path: &str, query: &str) -> (u16, String) {
    match path.trim_end_matches('/') {
        "/api" => {
            return (
                200,
                r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}"#
                    .to_string(),
            )
        }
        "/apis" => return (200, group_list()),
        "/version" => {
            return (
                200,
                r#"{"major":"1","minor":"35","gitVersion":"v1.35.0","platform":"linux/amd64"}"#.to_string(),
            )
        }
        _ => {}
    }
    let hidden = state.0.lock().expect("lock").behaviour.hidden.clone();
    if let Some(list) = resource_list(path, &hidden) {
        let mut s = state.0.lock().expect("lock");
        if s.discovery_failed < s.behaviour.fail_discovery {
            s.discovery_failed += 1;
            return status(500, "InternalError", "discovery is failing here");
        }
        return (200, list);
    }
    let Some((served, namespace)) = parse_collection(path) else {
        return status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
    };
    let &(group, version, kind, resource, _) = served;
    let mut s = state.0.lock().expect("lock");
    if s.behaviour.forbidden.contains(&resource) {
        let g = if group.is_empty() {
            String::new()
        } else {
            format!(".{group}")
        };
        return status(
            403,
            "Forbidden",
            &format!(
                "{resource}{g} is forbidden: User \"system:serviceaccount:gpu-trust:gpu-trust-reader\" cannot list resource \"{resource}\" in API group \"{group}\" at the cluster scope"
            ),
        );
    }
    let token = query_param(query, "continue").filter(|t| !t.is_empty());
    if let Some(t) = token {
        if s.behaviour.expire_once.contains(&resource) && s.expired.insert(resource.to_string()) {
            let _ = t;
            return status(
                410,
                "Expired",
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
            );
        }
    }
    let offset: usize = token
        .and_then(|t| t.strip_prefix("page-"))
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let items: Vec<&Object> = s
        .objects
        .iter()
        .filter(|o| o.group == group && o.resource == resource)
        .filter(|o| namespace.is_none() || o.namespace == namespace)
        .collect();
    let limit = query_param(query, "limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(0);
    let mut page = if limit == 0 { items.len() } else { limit };
    if s.behaviour.page > 0 {
        page = page.min(s.behaviour.page);
    }
    let end = (offset + page).min(items.len());
    let texts: Vec<String> = items[offset.min(end)..end]
        .iter()
        .map(|o| o.item_text())
        .collect();
    let more = end < items.len();
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let meta = if more {
        format!(
            r#"{{"resourceVersion":"{}","continue":"page-{end}","remainingItemCount":{}}}"#,
            s.resource_version,
            items.len() - end
        )
    } else {
        format!(r#"{{"resourceVersion":"{}"}}"#, s.resource_version)
    };
    let listed = format!("listed {resource} {} of {}", texts.len(), items.len());
    let how = s
        .behaviour
        .hostile
        .iter()
        .find(|(r, _)| *r == resource)
        .map(|(_, h)| *h);
    s.log.push(listed);
    let rv = s.resource_version;
    let list = |meta: &str, items: &str| {
        format!(
            r#"{{"apiVersion":"{api_version}","kind":"{kind}List","metadata":{meta},"items":[{items}]}}"#
        )
    };
    let body = match how {
        Some(Hostile::NoItems) => format!(
            r#"{{"apiVersion":"{api_version}","kind":"{kind}List","metadata":{{"resourceVersion":"{rv}"}}}}"#
        ),
        // One object, as a GET of a named object answers it (with its kind).
        Some(Hostile::SingleObject) => format!(
            r#"{{"apiVersion":"{api_version}","kind":"{kind}","metadata":{{"name":"x","namespace":"default"}}}}"#
        ),
        Some(Hostile::OtherKind) => list(
            &format!(r#"{{"resourceVersion":"{rv}"}}"#),
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"}}"#,
        ),
        Some(Hostile::ChangingVersion) => list(
            &format!(
                r#"{{"resourceVersion":"{}","continue":"page-{end}"}}"#,
                rv + offset as u64
            ),
            &texts.join(","),
        ),
        Some(Hostile::RepeatingToken) => list(
            &format!(r#"{{"resourceVersion":"{rv}","continue":"page-0"}}"#),
            &texts.join(","),
        ),
        Some(Hostile::EndlessToken) => list(
            &format!(
                r#"{{"resourceVersion":"{rv}","continue":"endless-{}"}}"#,
                s.log.len()
            ),
            "",
        ),
        Some(Hostile::ServerError) => {
            return status(
                500,
                "InternalError",
                "an error on the server has prevented the request from succeeding",
            )
        }
        Some(Hostile::Drip) | None => list(&meta, &texts.join(",")),
    };
    (200, body)
}

/// How the list of the collection at `path` misbehaves, if it does.
fn hostile(state: &Arc<(Mutex<State>, Condvar)>, path: &str) -> Option<Hostile> {
    let (served, _) = parse_collection(path)?;
    let s = state.0.lock().expect("lock");
    s.behaviour
        .hostile
        .iter()
        .find(|(r, _)| *r == served.3)
        .map(|(_, h)| *h)
}

const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const REPORTS: &str = "/apis/openreports.io/v1alpha1";

/// TokenReview, SubjectAccessReview and OpenReports reports; `None` for everything else.
fn special(
    state: &Arc<(Mutex<State>, Condvar)>,
    method: &str,
    path: &str,
    body: &str,
) -> Option<(u16, String)> {
    let mut s = state.0.lock().expect("lock");
    if path == TOKEN_REVIEWS && method == "POST" {
        let review: Value = serde_json::from_str(body).ok()?;
        let token = review["spec"]["token"].as_str().unwrap_or("");
        s.log.push("tokenreview".to_string());
        let user = s.behaviour.users.iter().find(|(t, _, _)| *t == token);
        let status = match user {
            Some((_, name, groups)) => serde_json::json!({
                "authenticated": true,
                "user": {"username": name, "uid": format!("uid-{name}"), "groups": groups},
            }),
            None => serde_json::json!({"authenticated": false, "error": "invalid bearer token"}),
        };
        let mut answer = review;
        answer["status"] = status;
        return Some((201, answer.to_string()));
    }
    if path == ACCESS_REVIEWS && method == "POST" {
        let review: Value = serde_json::from_str(body).ok()?;
        let spec = &review["spec"];
        let user = spec["user"].as_str().unwrap_or("");
        let allowed = s.behaviour.grants.iter().any(|(u, g)| {
            *u == user
                && match g {
                    Grant::Path(p) => {
                        spec["nonResourceAttributes"]["path"] == *p
                            && spec["nonResourceAttributes"]["verb"] == "get"
                    }
                    Grant::ListPods(ns) => {
                        let r = &spec["resourceAttributes"];
                        r["namespace"] == *ns
                            && r["verb"] == "list"
                            && r["resource"] == "pods"
                            && r["group"] == ""
                    }
                }
        });
        s.log.push(format!("subjectaccessreview {user} {allowed}"));
        let mut answer = review;
        answer["status"] = serde_json::json!({"allowed": allowed});
        return Some((201, answer.to_string()));
    }
    let rest = path.strip_prefix(REPORTS)?;
    let parts: Vec<&str> = rest.trim_matches('/').split('/').collect();
    s.log.push(format!("{method} {path}"));
    if let ["namespaces", ns, ..] = parts.as_slice() {
        if method != "GET" && s.behaviour.refused_reports.contains(ns) {
            return Some(status(
                403,
                "Forbidden",
                &format!("reports.openreports.io is forbidden in the namespace {ns}"),
            ));
        }
    }
    match (method, parts.as_slice()) {
        ("GET", ["reports"]) => {
            let items: Vec<Value> = s.reports.values().cloned().collect();
            let rv = s.resource_version;
            Some((
                200,
                serde_json::json!({"apiVersion": "openreports.io/v1alpha1", "kind": "ReportList",
                    "metadata": {"resourceVersion": rv.to_string()}, "items": items})
                .to_string(),
            ))
        }
        ("POST", ["namespaces", ns, "reports"]) => {
            let mut v: Value = serde_json::from_str(body).ok()?;
            let name = v["metadata"]["name"].as_str()?.to_string();
            let key = (ns.to_string(), name);
            if s.reports.contains_key(&key) {
                return Some(status(409, "AlreadyExists", "reports already exists"));
            }
            s.resource_version += 1;
            v["metadata"]["resourceVersion"] = Value::from(s.resource_version.to_string());
            s.reports.insert(key, v.clone());
            Some((201, v.to_string()))
        }
        ("PUT", ["namespaces", ns, "reports", name]) => {
            let mut v: Value = serde_json::from_str(body).ok()?;
            let key = (ns.to_string(), name.to_string());
            let Some(current) = s.reports.get(&key) else {
                return Some(status(404, "NotFound", "reports not found"));
            };
            let stale = current["metadata"]["resourceVersion"] != v["metadata"]["resourceVersion"];
            if stale || (s.behaviour.conflict_once && !s.conflicted) {
                s.conflicted = true;
                if !stale {
                    // Someone else writes in between.
                    s.resource_version += 1;
                    let rv = s.resource_version.to_string();
                    if let Some(c) = s.reports.get_mut(&key) {
                        c["metadata"]["resourceVersion"] = Value::from(rv);
                    }
                }
                return Some(status(
                    409,
                    "Conflict",
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
            s.resource_version += 1;
            v["metadata"]["resourceVersion"] = Value::from(s.resource_version.to_string());
            s.reports.insert(key, v.clone());
            Some((200, v.to_string()))
        }
        ("GET", ["namespaces", ns, "reports", name]) => {
            match s.reports.get(&(ns.to_string(), name.to_string())) {
                Some(v) => Some((200, v.to_string())),
                None => Some(status(404, "NotFound", "reports not found")),
            }
        }
        ("DELETE", ["namespaces", ns, "reports", name]) => {
            match s.reports.remove(&(ns.to_string(), name.to_string())) {
                Some(_) => Some((200, status(200, "", "deleted").1)),
                None => Some(status(404, "NotFound", "reports not found")),
            }
        }
        _ => Some(status(404, "NotFound", "not found")),
    }
}

fn group_list() -> String {
    let mut groups: Vec<(&str, &str)> = SERVED
        .iter()
        .filter(|(g, ..)| !g.is_empty())
        .map(|(g, v, ..)| (*g, *v))
        .collect();
    groups.dedup();
    let mut seen = BTreeSet::new();
    let groups: Vec<Value> = groups
        .into_iter()
        .filter(|(g, _)| seen.insert(*g))
        .map(|(g, _)| {
            let versions: Vec<Value> = SERVED
                .iter()
                .filter(|(gg, ..)| *gg == g)
                .map(|(_, v, ..)| *v)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .map(|v| serde_json::json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                .collect();
            let preferred = versions[0].clone();
            serde_json::json!({"name": g, "versions": versions, "preferredVersion": preferred})
        })
        .collect();
    serde_json::json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}).to_string()
}

fn resource_list(path: &str, hidden: &[&str]) -> Option<String> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version) = match parts.as_slice() {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return None,
    };
    if !SERVED.iter().any(|(g, v, ..)| *g == group && *v == version) {
        return None;
    }
    // A group whose resources are all hidden is served empty, as a server does whose group has
    // nothing it may show.
    let resources: Vec<Value> = SERVED
        .iter()
        .filter(|(g, v, ..)| *g == group && *v == version)
        .filter(|(_, _, _, r, _)| !hidden.contains(r))
        .map(|(_, _, kind, resource, namespaced)| {
            serde_json::json!({
                "name": resource,
                "singularName": kind.to_ascii_lowercase(),
                "namespaced": namespaced,
                "kind": kind,
                "verbs": ["get", "list", "watch"],
            })
        })
        .collect();
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        serde_json::json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
            .to_string(),
    )
}

/// A watch: the objects of the collection added after `resourceVersion`, as `ADDED` events, one
/// JSON object per chunk, until the client goes away or `timeoutSeconds` pass.
fn stream_watch(
    stream: &mut TcpStream,
    state: &Arc<(Mutex<State>, Condvar)>,
    path: &str,
    query: &str,
) -> std::io::Result<()> {
    let Some((served, namespace)) = parse_collection(path) else {
        let (code, body) = status(404, "NotFound", "no such collection");
        return write!(stream, "HTTP/1.1 {code} Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    };
    let &(group, _, _, resource, _) = served;
    let mut since: u64 = query_param(query, "resourceVersion")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let timeout = query_param(query, "timeoutSeconds")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30u64);
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )?;
    stream.flush()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(timeout);
    let (lock, cvar) = &**state;
    let mut s = lock.lock().expect("lock");
    loop {
        let events: Vec<(u64, String)> = s
            .objects
            .iter()
            .filter(|o| o.group == group && o.resource == resource && o.added > since)
            .filter(|o| namespace.is_none() || o.namespace == namespace)
            .map(|o| {
                (
                    o.added,
                    format!(
                        r#"{{"type":"ADDED","object":{}}}"#,
                        serde_json::to_string(&o.value).expect("json")
                    ),
                )
            })
            .collect();
        for (added, e) in events {
            since = since.max(added);
            let line = format!("{e}\n");
            drop(s);
            write!(stream, "{:x}\r\n{line}\r\n", line.len())?;
            stream.flush()?;
            s = lock.lock().expect("lock");
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            drop(s);
            write!(stream, "0\r\n\r\n")?;
            return stream.flush();
        }
        let (guard, _) = cvar
            .wait_timeout(s, (deadline - now).min(Duration::from_millis(500)))
            .expect("wait");
        s = guard;
    }
}

/// A CustomResourceDefinition of a namespaced kind, served at v1, with `schema` as its OpenAPI schema.
pub fn crd(group: &str, kind: &str, plural: &str, schema: Value) -> Value {
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": schema}}],
        }
    })
}

/// A schema with pod templates: `spec.template.spec.containers`, an array of objects.
pub fn pod_template_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "template": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "containers": {"type": "array", "items": {"type": "object"}}}}}}}}}})
}
