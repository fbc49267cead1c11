//! Who may see what, decided by the API server and remembered briefly: the user of a bearer token
//! (TokenReview), whether the user may `get` the path (SubjectAccessReview on a non-resource URL:
//! the full view), and else which tenants' views it may see (SubjectAccessReview: `list pods` in
//! every namespace of the tenant, asked namespace by namespace until one is refused). A request
//! causes at most [`MAX_REVIEWS`] access reviews; a decision that needs more is carried on by the
//! user's next requests (503 meanwhile). Answers are kept per user [`TTL`], refused or allowed (a
//! token the API server does not accept [`DENIED_TTL`]), for at most [`MAX_ENTRIES`] tokens and
//! accesses, the answer that expires first giving way when full; tokens are kept only as their
//! SHA-256, never logged.

use gpu_trust_live::access::{Access as Review, User};
use gpu_trust_live::service::Service;
use gpu_trust_model::report::TenantEntry;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an answer of the API server is kept: a user, an access allowed or refused (so that a
/// user with no rights costs its reviews once a minute, not once a request).
pub const TTL: Duration = Duration::from_secs(60);
/// How long a token the API server does not accept is remembered.
pub const DENIED_TTL: Duration = Duration::from_secs(10);
/// Entries per cache at most; when full, the entry that expires first gives way.
pub const MAX_ENTRIES: usize = 4096;
/// Access reviews one request may cause at most.
pub const MAX_REVIEWS: usize = 64;

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
    /// The user's tenants need more than [`MAX_REVIEWS`] reviews: 503, the next request goes on.
    Reviewing(User),
}

struct Cache<K, V> {
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: std::hash::Hash + Eq + Clone, V: Clone> Cache<K, V> {
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
            if e.len() >= MAX_ENTRIES && !e.contains_key(&k) {
                let now = Instant::now();
                e.retain(|_, (until, _)| now < *until);
                // Still full: the entry that expires first gives way, not the others.
                if e.len() >= MAX_ENTRIES {
                    let first = e
                        .iter()
                        .min_by_key(|(_, (until, _))| *until)
                        .map(|(k, _)| k.clone());
                    if let Some(first) = first {
                        e.remove(&first);
                    }
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
                    self.accesses.put((user.clone(), r.clone()), a, TTL);
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
        // Tenant by tenant, each namespace until one is refused; a round asks the next unanswered
        // namespace of every open tenant, within what is left of the request's reviews.
        let mut left = MAX_REVIEWS.saturating_sub(1);
        let mut known: HashMap<Review, bool> = HashMap::new();
        loop {
            let mut visible = BTreeSet::new();
            let mut next: Vec<Review> = Vec::new();
            for t in tenants.iter().filter(|t| !t.namespaces.is_empty()) {
                let first_not_allowed = t.namespaces.iter().map(|ns| list_pods(ns)).find_map(|r| {
                    let a = known
                        .get(&r)
                        .copied()
                        .or_else(|| self.accesses.get(&(user.clone(), r.clone())));
                    (a != Some(true)).then_some((r, a))
                });
                match first_not_allowed {
                    None => {
                        visible.insert(t.name.clone());
                    }
                    Some((r, None)) => next.push(r),
                    Some((_, Some(_))) => {}
                }
            }
            next.sort();
            next.dedup();
            if next.is_empty() {
                return if visible.is_empty() {
                    Decision::Forbidden(user)
                } else {
                    Decision::Tenants(user, visible)
                };
            }
            if left == 0 {
                return Decision::Reviewing(user);
            }
            next.truncate(left);
            left -= next.len();
            match self.allowed(&user, &next) {
                Ok(answers) => known.extend(next.into_iter().zip(answers)),
                Err(e) => return Decision::Unavailable(e),
            }
        }
    }
}

/// The review of `list pods` in `namespace`.
fn list_pods(namespace: &str) -> Review {
    Review::List {
        namespace: namespace.to_string(),
        group: String::new(),
        resource: "pods".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full cache makes room by dropping the entry that expires first, and keeps the others: a
    /// flood of new users does not cost everyone else their answers.
    #[test]
    fn a_full_cache_drops_the_entry_that_expires_first() {
        let cache: Cache<usize, bool> = Cache::new();
        cache.put(0, true, Duration::from_secs(5));
        for k in 1..MAX_ENTRIES {
            cache.put(k, true, TTL);
        }
        cache.put(MAX_ENTRIES, true, TTL);
        assert_eq!(cache.get(&0), None);
        assert!((1..=MAX_ENTRIES).all(|k| cache.get(&k) == Some(true)));
        assert_eq!(cache.entries.lock().unwrap().len(), MAX_ENTRIES);
    }
}
