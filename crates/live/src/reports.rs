//! Keeping report objects in the cluster equal to what the last audit found (`gpu-trust serve
//! --write-reports`): the caller hands the objects it wants, one per namespace; what is there and
//! carries gpu-trust's label is created, replaced when it differs (with its resource version, tried
//! again on a conflict) or deleted when it is no longer wanted. An object of the same name without
//! the label (someone else's: a create answered 409) is left as it is, and said so; a namespace
//! that refuses a write does not stop the others: each failure is returned with its path. Live
//! does not read the objects' meaning: it compares them as JSON, leaving out what the server writes
//! (`metadata` but the labels, `status`).
//!
//! The kind is OpenReports' `Report` (`openreports.io/v1alpha1`, plural `reports`:
//! https://github.com/openreports/reports-api, `apis/openreports.io/v1alpha1/report_types.go`).

use crate::{describe, request_text, Error};
use kube::core::params::{DeleteParams, GetParams, ListParams, PostParams};
use kube::core::Request;
use kube::Client;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The API group and version of the reports.
pub const API_VERSION: &str = "openreports.io/v1alpha1";
/// All reports, every namespace.
pub const COLLECTION: &str = "/apis/openreports.io/v1alpha1/reports";
/// The label on every report gpu-trust writes, and only those: the ones it may replace or delete.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "gpu-trust");
/// Tries of one write that meets a conflict (someone else changed the object in between).
pub const CONFLICT_TRIES: usize = 3;
/// Pages of the list of existing reports at most.
const MAX_PAGES: usize = 1000;

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Synced {
    pub created: usize,
    pub replaced: usize,
    pub deleted: usize,
    pub unchanged: usize,
    /// Conflicts met and resolved by reading the object again.
    pub conflicts: usize,
    /// Reports not written or deleted, by API path, with why: a refused or failed request, or an
    /// object of that name gpu-trust did not write, left alone.
    pub failed: Vec<(String, String)>,
}

/// The namespace's collection.
fn collection(namespace: &str) -> String {
    format!("/apis/openreports.io/v1alpha1/namespaces/{namespace}/reports")
}

/// What of an object the comparison looks at: everything but what the server writes.
fn content(object: &Value) -> Value {
    let mut v = object.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("status");
        let labels = m
            .get("metadata")
            .and_then(|md| md.get("labels"))
            .cloned()
            .unwrap_or(Value::Null);
        m.insert(
            "metadata".to_string(),
            serde_json::json!({"labels": labels}),
        );
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}

/// Whether gpu-trust wrote `object` (it carries the label [`MANAGED_BY`]).
fn managed(object: &Value) -> bool {
    object
        .pointer("/metadata/labels")
        .and_then(|l| l.get(MANAGED_BY.0))
        .and_then(Value::as_str)
        == Some(MANAGED_BY.1)
}

fn name_of(object: &Value) -> Option<(String, String)> {
    let md = object.get("metadata")?;
    Some((
        md.get("namespace")?.as_str()?.to_string(),
        md.get("name")?.as_str()?.to_string(),
    ))
}

/// The reports gpu-trust wrote, by (namespace, name).
async fn existing(
    client: &Client,
    timeout: Duration,
) -> Result<BTreeMap<(String, String), Value>, Error> {
    let selector = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
    let mut out = BTreeMap::new();
    let mut token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut params = ListParams::default().labels(&selector).limit(500);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let request = Request::new(COLLECTION)
            .list(&params)
            .map_err(|e| Error::Request(e.to_string()))?;
        let text = request_text(client, request, timeout)
            .await
            .map_err(|e| Error::Api {
                path: COLLECTION.to_string(),
                message: describe(&e),
            })?;
        let page: Value = serde_json::from_str(&text).map_err(|e| Error::Answer {
            path: COLLECTION.to_string(),
            message: format!("not a list: {e}"),
        })?;
        let Some(items) = page.get("items").and_then(Value::as_array) else {
            return Err(Error::Answer {
                path: COLLECTION.to_string(),
                message: "the answer has no items".to_string(),
            });
        };
        // The selector asked for gpu-trust's reports only; what the answer holds is checked again,
        // so that a server ignoring the selector never gets another tool's report deleted.
        for item in items.iter().filter(|i| managed(i)) {
            if let Some(key) = name_of(item) {
                out.insert(key, item.clone());
            }
        }
        match page
            .pointer("/metadata/continue")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            Some(t) if token.as_deref() != Some(t) => token = Some(t.to_string()),
            _ => return Ok(out),
        }
    }
    Err(Error::Answer {
        path: COLLECTION.to_string(),
        message: format!("the list did not end after {MAX_PAGES} pages"),
    })
}

fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// Creates, replaces and deletes gpu-trust's reports so that they are `wanted` (each object with
/// its `metadata.namespace` and `metadata.name`; the label [`MANAGED_BY`] is put on each).
pub async fn sync(client: &Client, wanted: Vec<Value>, timeout: Duration) -> Result<Synced, Error> {
    let mut have = existing(client, timeout).await?;
    let mut done = Synced::default();
    let mut seen = BTreeSet::new();
    for mut object in wanted {
        if let Some(md) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            let labels = md
                .entry("labels")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(l) = labels.as_object_mut() {
                l.insert(MANAGED_BY.0.to_string(), Value::from(MANAGED_BY.1));
            }
        }
        let Some((namespace, name)) = name_of(&object) else {
            return Err(Error::Request(
                "a report without metadata.namespace and name".to_string(),
            ));
        };
        seen.insert((namespace.clone(), name.clone()));
        let mut current = have.remove(&(namespace.clone(), name.clone()));
        let path = collection(&namespace);
        let here = format!("{path}/{name}");
        let mut tries = 0;
        loop {
            tries += 1;
            let result = match &current {
                Some(c) if content(c) == content(&object) => {
                    done.unchanged += 1;
                    break;
                }
                Some(c) => {
                    let mut body = object.clone();
                    body["metadata"]["resourceVersion"] = c
                        .pointer("/metadata/resourceVersion")
                        .cloned()
                        .unwrap_or(Value::Null);
                    let request = Request::new(&path)
                        .replace(&name, &PostParams::default(), body.to_string().into_bytes())
                        .map_err(|e| Error::Request(e.to_string()))?;
                    request_text(client, request, timeout).await.map(|_| {
                        done.replaced += 1;
                    })
                }
                None => {
                    let request = Request::new(&path)
                        .create(&PostParams::default(), object.to_string().into_bytes())
                        .map_err(|e| Error::Request(e.to_string()))?;
                    request_text(client, request, timeout).await.map(|_| {
                        done.created += 1;
                    })
                }
            };
            match result {
                Ok(()) => break,
                // Changed (or created) by someone else since it was read: read it and try again,
                // unless it is not gpu-trust's.
                Err(e) if status_code(&e) == Some(409) && tries < CONFLICT_TRIES => {
                    done.conflicts += 1;
                    let request = Request::new(&path)
                        .get(&name, &GetParams::default())
                        .map_err(|e| Error::Request(e.to_string()))?;
                    current = match request_text(client, request, timeout).await {
                        Ok(text) => serde_json::from_str(&text).ok(),
                        Err(e) if status_code(&e) == Some(404) => None,
                        Err(e) => {
                            done.failed.push((here, describe(&e)));
                            break;
                        }
                    };
                    if current.as_ref().is_some_and(|c| !managed(c)) {
                        done.failed.push((
                            here,
                            format!(
                                "a report of this name that gpu-trust did not write (without the label {}: {}) is there: left alone",
                                MANAGED_BY.0, MANAGED_BY.1
                            ),
                        ));
                        break;
                    }
                }
                Err(e) => {
                    done.failed.push((here, describe(&e)));
                    break;
                }
            }
        }
    }
    // What is left is gpu-trust's and no longer wanted.
    for (namespace, name) in have.into_keys() {
        let path = collection(&namespace);
        let request = Request::new(&path)
            .delete(&name, &DeleteParams::default())
            .map_err(|e| Error::Request(e.to_string()))?;
        match request_text(client, request, timeout).await {
            Ok(_) => done.deleted += 1,
            Err(e) if status_code(&e) == Some(404) => {}
            Err(e) => done.failed.push((format!("{path}/{name}"), describe(&e))),
        }
    }
    Ok(done)
}

impl crate::service::Service {
    /// [`sync`], from a thread without a runtime.
    pub fn sync_reports(&self, wanted: Vec<Value>, timeout: Duration) -> Result<Synced, Error> {
        // Each request is bounded by `timeout`; the whole sync by as many as it may make.
        let requests = (wanted.len() * (CONFLICT_TRIES * 2) + 64) as u32;
        self.call(timeout.saturating_mul(requests), move |client| async move {
            sync(&client, wanted, timeout).await
        })
    }
}
