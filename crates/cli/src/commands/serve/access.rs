//! Who may see what, decided by the API server and remembered briefly: the user of a bearer token
//! (TokenReview), whether the user may `get` the path (SubjectAccessReview on a non-resource URL:
//! the full view), and else which tenants' views it may see (SubjectAccessReview: `list pods` in
//! every namespace of the tenant). Answers are kept [`TTL`] (a refusal [`DENIED_TTL`]), for at most
//! [`MAX_ENTRIES`] tokens and accesses; tokens are kept only as their SHA-256, never logged.

use gpu_trust_live::access::{Access as Review, User};
use gpu_trust_live::service::Service;
use gpu_trust_rules::report::TenantEntry;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an answer of the API server is kept.
pub const TTL: Duration = Duration::from_secs(60);
/// How long a refusal (a token not accepted, an access not allowed) is kept.
pub const DENIED_TTL: Duration = Duration::from_secs(10);
/// Entries per cache at most (the cache is emptied when full).
pub const MAX_ENTRIES: usize = 4096;

/// What a request may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No token, or one the API server does not accept: 401.
    Unauthenticated,
    /// Everything.
    Full(User),
    /// The views of these tenants only (never empty).
    Tenants(User, BTreeSet<String>),
    /// Nothing: 403.
    Forbidden(User),
    /// The API server could not be asked: 503, nothing shown.
    Unavailable(String),
}

struct Cache<K, V> {
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Cache<K, V> {
    fn new() -> Self {
        Cache {
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, k: &K) -> Option<V> {
        let e = self.entries.lock().ok()?;
        e.get(k)
            .filter(|(until, _)| Instant::now() < *until)
            .map(|(_, v)| v.clone())
    }

    fn put(&self, k: K, v: V, ttl: Duration) {
        if let Ok(mut e) = self.entries.lock() {
            if e.len() >= MAX_ENTRIES {
                let now = Instant::now();
                e.retain(|_, (until, _)| now < *until);
                if e.len() >= MAX_ENTRIES {
                    e.clear();
                }
            }
            e.insert(k, (Instant::now() + ttl, v));
        }
    }
}

pub struct Access {
    service: Service,
    tokens: Cache<[u8; 32], Option<User>>,
    accesses: Cache<(User, Review), bool>,
}

fn digest(token: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

impl Access {
    pub fn new(service: Service) -> Access {
        Access {
            service,
            tokens: Cache::new(),
            accesses: Cache::new(),
        }
    }

    fn user(&self, token: &str) -> Result<Option<User>, String> {
        let key = digest(token);
        if let Some(u) = self.tokens.get(&key) {
            return Ok(u);
        }
        let user = self
            .service
            .authenticate(token)
            .map_err(|e| e.to_string())?;
        let ttl = if user.is_some() { TTL } else { DENIED_TTL };
        self.tokens.put(key, user.clone(), ttl);
        Ok(user)
    }

    fn allowed(&self, user: &User, reviews: &[Review]) -> Result<Vec<bool>, String> {
        let mut answers: Vec<Option<bool>> = reviews
            .iter()
            .map(|r| self.accesses.get(&(user.clone(), r.clone())))
            .collect();
        let ask: Vec<Review> = reviews
            .iter()
            .zip(&answers)
            .filter(|(_, a)| a.is_none())
            .map(|(r, _)| r.clone())
            .collect();
        if !ask.is_empty() {
            // `ask` is in the order of the unanswered slots.
            let mut fresh = self
                .service
                .allowed(user, ask)
                .map_err(|e| e.to_string())?
                .into_iter();
            for (r, slot) in reviews.iter().zip(answers.iter_mut()) {
                if slot.is_none() {
                    let a = fresh.next().unwrap_or(false);
                    let ttl = if a { TTL } else { DENIED_TTL };
                    self.accesses.put((user.clone(), r.clone()), a, ttl);
                    *slot = Some(a);
                }
            }
        }
        Ok(answers.into_iter().map(|a| a.unwrap_or(false)).collect())
    }

    /// The decision for a request of `path` carrying `token`, with the tenants of the last audit
    /// (none before the first: then only the full view can be granted).
    pub fn decide(&self, token: Option<&str>, path: &str, tenants: &[TenantEntry]) -> Decision {
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Decision::Unauthenticated;
        };
        let user = match self.user(token) {
            Ok(Some(u)) => u,
            Ok(None) => return Decision::Unauthenticated,
            Err(e) => return Decision::Unavailable(e),
        };
        match self.allowed(&user, &[Review::Path(path.to_string())]) {
            Ok(a) if a.first() == Some(&true) => return Decision::Full(user),
            Ok(_) => {}
            Err(e) => return Decision::Unavailable(e),
        }
        let candidates: Vec<&TenantEntry> = tenants
            .iter()
            .filter(|t| !t.namespaces.is_empty())
            .collect();
        let mut reviews: Vec<Review> = candidates
            .iter()
            .flat_map(|t| t.namespaces.iter())
            .map(|ns| Review::List {
                namespace: ns.clone(),
                group: String::new(),
                resource: "pods".to_string(),
            })
            .collect();
        reviews.sort();
        reviews.dedup();
        let answers = match self.allowed(&user, &reviews) {
            Ok(a) => a,
            Err(e) => return Decision::Unavailable(e),
        };
        let may: BTreeSet<&str> = reviews
            .iter()
            .zip(answers)
            .filter(|(_, a)| *a)
            .filter_map(|(r, _)| match r {
                Review::List { namespace, .. } => Some(namespace.as_str()),
                Review::Path(_) => None,
            })
            .collect();
        let visible: BTreeSet<String> = candidates
            .iter()
            .filter(|t| t.namespaces.iter().all(|ns| may.contains(ns.as_str())))
            .map(|t| t.name.clone())
            .collect();
        if visible.is_empty() {
            Decision::Forbidden(user)
        } else {
            Decision::Tenants(user, visible)
        }
    }
}
