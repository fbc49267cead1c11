//! Who is asking, and what they may see: a request's bearer token reviewed by the API server
//! (TokenReview, `authentication.k8s.io/v1`) and the user's access checked by it
//! (SubjectAccessReview, `authorization.k8s.io/v1`), as kube-rbac-proxy and the kubelet delegate
//! them. The ServiceAccount needs `create` on both, which the built-in ClusterRole
//! `system:auth-delegator` grants
//! (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#other-component-roles).
//!
//! Sources: TokenReview, https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-review-v1/;
//! SubjectAccessReview, https://kubernetes.io/docs/reference/kubernetes-api/authorization-resources/subject-access-review-v1/.

use crate::service::Service;
use crate::{describe, Error};
use futures::stream::{self, StreamExt};
use kube::core::params::PostParams;
use kube::core::Request;
use kube::Client;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The collection TokenReviews are created in.
pub const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
/// The collection SubjectAccessReviews are created in.
pub const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
/// How long one review may take.
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);
/// Access reviews in flight at once for one batch.
pub const PARALLEL_REVIEWS: usize = 8;

/// A user as the API server authenticated them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct User {
    #[serde(default)]
    pub username: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What an access review asks about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    /// `get` of a path that is not a resource (`/metrics`), as `nonResourceURLs` grant it.
    Path(String),
    /// `list` of a resource in a namespace (`pods` in `team-a`).
    List {
        namespace: String,
        group: String,
        resource: String,
    },
}

#[derive(Deserialize)]
struct TokenReviewAnswer {
    #[serde(default)]
    status: TokenReviewStatus,
}

#[derive(Deserialize, Default)]
struct TokenReviewStatus {
    #[serde(default)]
    authenticated: bool,
    #[serde(default)]
    user: Option<User>,
}

#[derive(Deserialize)]
struct AccessReviewAnswer {
    #[serde(default)]
    status: AccessReviewStatus,
}

#[derive(Deserialize, Default)]
struct AccessReviewStatus {
    #[serde(default)]
    allowed: bool,
}

async fn create(client: &Client, path: &str, body: serde_json::Value) -> Result<String, Error> {
    let request = Request::new(path)
        .create(&PostParams::default(), body.to_string().into_bytes())
        .map_err(|e| Error::Request(e.to_string()))?;
    client.request_text(request).await.map_err(|e| Error::Api {
        path: path.to_string(),
        message: describe(&e),
    })
}

/// The user a bearer token authenticates, or `None` when the API server does not accept it.
pub async fn review_token(client: &Client, token: &str) -> Result<Option<User>, Error> {
    let body = serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": token},
    });
    let text = create(client, TOKEN_REVIEWS, body).await?;
    let answer: TokenReviewAnswer = serde_json::from_str(&text).map_err(|e| Error::Answer {
        path: TOKEN_REVIEWS.to_string(),
        message: format!("not a TokenReview: {e}"),
    })?;
    Ok(match (answer.status.authenticated, answer.status.user) {
        (true, Some(user)) if !user.username.is_empty() => Some(user),
        _ => None,
    })
}

/// Whether the API server allows `user` the `access`.
pub async fn review_access(client: &Client, user: &User, access: &Access) -> Result<bool, Error> {
    let mut spec = serde_json::json!({
        "user": user.username,
        "groups": user.groups,
        "extra": user.extra,
    });
    if !user.uid.is_empty() {
        spec["uid"] = serde_json::Value::from(user.uid.as_str());
    }
    match access {
        Access::Path(path) => {
            spec["nonResourceAttributes"] = serde_json::json!({"path": path, "verb": "get"});
        }
        Access::List {
            namespace,
            group,
            resource,
        } => {
            spec["resourceAttributes"] = serde_json::json!({
                "namespace": namespace, "verb": "list", "group": group, "resource": resource,
            });
        }
    }
    let body = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": spec,
    });
    let text = create(client, ACCESS_REVIEWS, body).await?;
    let answer: AccessReviewAnswer = serde_json::from_str(&text).map_err(|e| Error::Answer {
        path: ACCESS_REVIEWS.to_string(),
        message: format!("not a SubjectAccessReview: {e}"),
    })?;
    Ok(answer.status.allowed)
}

impl Service {
    /// [`review_token`], from a thread without a runtime.
    pub fn authenticate(&self, token: &str) -> Result<Option<User>, Error> {
        let token = token.to_string();
        self.call(REVIEW_TIMEOUT, move |client| async move {
            review_token(&client, &token).await
        })
    }

    /// [`review_access`] of each of `accesses`, answers in the same order, a few at a time.
    pub fn allowed(&self, user: &User, accesses: Vec<Access>) -> Result<Vec<bool>, Error> {
        let user = user.clone();
        // A batch may hold many namespaces: its time grows with them, each review bounded.
        let rounds = accesses.len().div_ceil(PARALLEL_REVIEWS).max(1) as u32;
        self.call(REVIEW_TIMEOUT * rounds, move |client| async move {
            let count = accesses.len();
            // Each review owns what it uses: a future borrowing across the stream is not Send.
            let answers: Vec<(usize, Result<bool, Error>)> =
                stream::iter(accesses.into_iter().enumerate())
                    .map(|(i, a)| {
                        let (client, user) = (client.clone(), user.clone());
                        async move { (i, review_access(&client, &user, &a).await) }
                    })
                    .buffer_unordered(PARALLEL_REVIEWS)
                    .collect()
                    .await;
            let mut out = vec![false; count];
            for (i, r) in answers {
                out[i] = r?;
            }
            Ok(out)
        })
    }
}
