//! Namespace names and `*` globs, as tenants and platform lists write them.

use gpu_trust_model::Location;
use serde::{Serialize, Serializer};

/// A namespace name or a glob where `*` stands for any run of characters (`ads-*`, `*-gpu-operator`).
/// It serialises as the pattern text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NamespacePattern {
    pub pattern: String,
    /// Where the policy wrote it; an unknown location for built-in defaults.
    pub location: Location,
}

impl Serialize for NamespacePattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.pattern)
    }
}

/// Longest namespace name Kubernetes accepts (a DNS-1123 label).
const MAX_NAMESPACE_LEN: usize = 63;

impl NamespacePattern {
    pub fn new(pattern: impl Into<String>, location: Location) -> NamespacePattern {
        NamespacePattern {
            pattern: pattern.into(),
            location,
        }
    }

    /// Whether the pattern contains `*`.
    pub fn is_glob(&self) -> bool {
        self.pattern.contains('*')
    }

    /// How specific a glob is: the number of characters that are not `*`. Between two globs that
    /// both match a namespace, the more specific one wins.
    pub fn specificity(&self) -> usize {
        self.pattern.chars().filter(|c| *c != '*').count()
    }

    /// Whether `namespace` is this name, or matches this glob.
    pub fn matches(&self, namespace: &str) -> bool {
        glob_match(self.pattern.as_bytes(), namespace.as_bytes())
    }

    /// Why the text cannot name namespaces, if it cannot: namespaces are DNS-1123 labels (lower-case
    /// letters, digits and `-`, at most 63 characters), and a glob adds `*`.
    pub fn check(text: &str) -> Result<(), String> {
        if text.is_empty() {
            return Err("a namespace cannot be empty".to_string());
        }
        if let Some(bad) = text
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '*'))
        {
            return Err(format!(
                "`{text}` is not a namespace name or glob: `{bad}` is not allowed (lower-case letters, digits, `-`, and `*` as a wildcard)"
            ));
        }
        if !text.contains('*') && text.len() > MAX_NAMESPACE_LEN {
            return Err(format!(
                "`{text}` is longer than the {MAX_NAMESPACE_LEN} characters a namespace name may have"
            ));
        }
        Ok(())
    }
}

impl NamespacePattern {
    /// A name that both patterns match, when there is one (the shortest the search finds): two
    /// globs of different tenants that share a name can tie over a namespace of the cluster.
    pub fn common_match(&self, other: &NamespacePattern) -> Option<String> {
        common_match(self.pattern.as_bytes(), other.pattern.as_bytes())
    }
}

/// The most glob pairs [`tied_globs`] looks at: past it, the search stops and says so.
pub(crate) const TIE_BUDGET: usize = 1_000_000;

/// A name that two globs of different owners (`usize`, a tenant's index) of equal specificity both
/// match, for each such pair found, and whether the search looked at every candidate pair. Pairs are
/// looked for through the globs' literal prefixes (the text before the first `*`): two globs share a
/// name only when one prefix starts the other, and likewise for their suffixes, so a policy of
/// per-tenant globs (`team-1-*`, `team-2-*`) costs about one lookup per glob, not one per pair. Globs
/// that overlap everything (`*-prod`, `*x*`) are compared with all the others of their specificity,
/// within [`TIE_BUDGET`] pairs.
pub(crate) fn tied_globs(globs: &[(usize, &NamespacePattern)]) -> (Vec<String>, bool) {
    use std::collections::{BTreeMap, BTreeSet};
    let mut buckets: BTreeMap<usize, Vec<(usize, &NamespacePattern, &str, &str)>> = BTreeMap::new();
    for (owner, g) in globs {
        let text = g.pattern.as_str();
        let prefix = text.split('*').next().unwrap_or("");
        let suffix = text.rsplit('*').next().unwrap_or("");
        buckets
            .entry(g.specificity())
            .or_default()
            .push((*owner, *g, prefix, suffix));
    }
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut budget = TIE_BUDGET;
    for mut bucket in buckets.into_values() {
        bucket.sort_by(|a, b| a.2.cmp(b.2));
        let prefixes: Vec<&str> = bucket.iter().map(|e| e.2).collect();
        for (i, (owner, g, prefix, suffix)) in bucket.iter().enumerate() {
            // Candidates: globs whose prefix starts this one's (a shorter or equal prefix), and
            // globs whose prefix this one starts (the sorted run after it).
            let mut candidates: Vec<usize> = Vec::new();
            for k in (0..=prefix.len()).filter(|k| prefix.is_char_boundary(*k)) {
                let p = &prefix[..k];
                let from = prefixes.partition_point(|x| *x < p);
                let to = prefixes.partition_point(|x| *x <= p);
                candidates.extend(from..to);
            }
            let longer = prefixes.partition_point(|x| *x <= *prefix);
            candidates
                .extend((longer..prefixes.len()).take_while(|j| prefixes[*j].starts_with(prefix)));
            for j in candidates.into_iter().filter(|j| *j > i) {
                if budget == 0 {
                    return (found.into_iter().collect(), false);
                }
                budget -= 1;
                let (other, h, _, other_suffix) = &bucket[j];
                if other == owner
                    || !(suffix.ends_with(other_suffix) || other_suffix.ends_with(suffix))
                {
                    continue;
                }
                if let Some(w) = g.common_match(h) {
                    found.insert(w);
                }
            }
        }
    }
    (found.into_iter().collect(), true)
}

/// A breadth-first search over pairs of positions in the two patterns: `*` may be skipped or
/// swallow a character the other pattern needs; two literals must agree. At most
/// `(|p| + 1) * (|q| + 1)` states.
fn common_match(p: &[u8], q: &[u8]) -> Option<String> {
    use std::collections::VecDeque;
    let (m, n) = (p.len(), q.len());
    // For each state, the state it was reached from and the character emitted on the way.
    let mut parent: Vec<Option<(usize, Option<u8>)>> = vec![None; (m + 1) * (n + 1)];
    let index = |i: usize, j: usize| i * (n + 1) + j;
    let start = index(0, 0);
    parent[start] = Some((start, None));
    let mut queue = VecDeque::from([(0usize, 0usize)]);
    while let Some((i, j)) = queue.pop_front() {
        if i == m && j == n {
            let mut out = Vec::new();
            let mut at = index(i, j);
            while at != start {
                let (from, c) = parent[at]?;
                out.extend(c);
                at = from;
            }
            out.reverse();
            let text = String::from_utf8(out).ok()?;
            // Two runs of `*` alone match anything: name something.
            return Some(if text.is_empty() {
                "x".to_string()
            } else {
                text
            });
        }
        let mut next: Vec<(usize, usize, Option<u8>)> = Vec::new();
        if i < m && p[i] == b'*' {
            next.push((i + 1, j, None));
        }
        if j < n && q[j] == b'*' {
            next.push((i, j + 1, None));
        }
        let mut chars: Vec<u8> = Vec::new();
        if i < m && p[i] != b'*' {
            chars.push(p[i]);
        }
        if j < n && q[j] != b'*' {
            chars.push(q[j]);
        }
        for c in chars {
            let step = |pat: &[u8], k: usize| -> Option<usize> {
                match pat.get(k) {
                    Some(b'*') => Some(k),
                    Some(x) if *x == c => Some(k + 1),
                    _ => None,
                }
            };
            if let (Some(a), Some(b)) = (step(p, i), step(q, j)) {
                next.push((a, b, Some(c)));
            }
        }
        for (a, b, c) in next {
            let k = index(a, b);
            if parent[k].is_none() {
                parent[k] = Some((index(i, j), c));
                queue.push_back((a, b));
            }
        }
    }
    None
}

/// `*` matches any run of bytes (including none); every other byte matches itself.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    // Position of the last `*` seen in the pattern, and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            // Let the last `*` swallow one more byte and retry from there.
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|b| *b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pat(s: &str) -> NamespacePattern {
        NamespacePattern::new(s, Location::default())
    }

    #[test]
    fn common_matches() {
        let both = |a: &str, b: &str| pat(a).common_match(&pat(b));
        assert_eq!(both("team-*", "*-prod").as_deref(), Some("team-prod"));
        assert_eq!(both("ads-*", "ads-*").as_deref(), Some("ads-"));
        assert_eq!(both("a*", "b*"), None);
        assert_eq!(both("*", "*").as_deref(), Some("x"));
        assert_eq!(both("*-a", "*-b"), None);
        for (a, b) in [("team-*", "*-prod"), ("a*b*c", "*bc"), ("x*", "*y*")] {
            let w = both(a, b).unwrap();
            assert!(pat(a).matches(&w) && pat(b).matches(&w), "{a} {b} {w}");
        }
    }

    #[test]
    fn tied_globs_are_found_through_their_prefixes() {
        let globs = [
            pat("team-*"),
            pat("*-prod"),
            pat("team-1-*"),
            pat("team-2-*"),
            pat("ads-*"),
        ];
        let owned: Vec<(usize, &NamespacePattern)> = globs.iter().enumerate().collect();
        let (ties, complete) = tied_globs(&owned);
        assert!(complete);
        // `team-*` and `*-prod` (five literal characters each); `ads-*` has four.
        assert_eq!(ties, ["team-prod"]);
        // Per-tenant globs with distinct prefixes never tie, and are not compared pair by pair.
        let many: Vec<NamespacePattern> = (0..20_000).map(|i| pat(&format!("t{i:05}-*"))).collect();
        let owned: Vec<(usize, &NamespacePattern)> = many.iter().enumerate().collect();
        assert_eq!(tied_globs(&owned), (Vec::new(), true));
        // The same owner's globs do not tie with each other.
        let same = [pat("a-*"), pat("*-b")];
        assert_eq!(
            tied_globs(&[(0, &same[0]), (0, &same[1])]).0,
            Vec::<String>::new()
        );
    }

    #[test]
    fn globs() {
        assert!(pat("ads-*").matches("ads-prod"));
        assert!(pat("ads-*").matches("ads-"));
        assert!(!pat("ads-*").matches("ads"));
        assert!(!pat("ads-*").matches("bads-prod"));
        assert!(pat("*-gpu-operator").matches("nvidia-gpu-operator"));
        assert!(!pat("*-gpu-operator").matches("gpu-operator"));
        assert!(pat("*").matches("anything"));
        assert!(pat("a*b*c").matches("aXXbYYc"));
        assert!(pat("a*b*c").matches("abc"));
        assert!(!pat("a*b*c").matches("acb"));
        assert!(pat("kube-system").matches("kube-system"));
        assert!(!pat("kube-system").matches("kube-system2"));
    }

    #[test]
    fn specificity_counts_literal_characters() {
        assert!(pat("ads-prod-*").specificity() > pat("ads-*").specificity());
        assert_eq!(pat("*").specificity(), 0);
    }

    #[test]
    fn check_refuses_non_namespaces() {
        assert!(NamespacePattern::check("ads-*").is_ok());
        assert!(NamespacePattern::check("cust-acme").is_ok());
        assert!(NamespacePattern::check("").is_err());
        assert!(NamespacePattern::check("Ads").unwrap_err().contains("`A`"));
        assert!(NamespacePattern::check("ads_prod").is_err());
        assert!(NamespacePattern::check("ads?").is_err());
        assert!(NamespacePattern::check(&"a".repeat(64)).is_err());
    }

    proptest! {
        #[test]
        fn literal_matches_only_itself(s in "[a-z0-9-]{1,20}", t in "[a-z0-9-]{1,20}") {
            prop_assert!(pat(&s).matches(&s));
            prop_assert_eq!(pat(&s).matches(&t), s == t);
        }

        #[test]
        fn prefix_glob(prefix in "[a-z-]{0,8}", rest in "[a-z0-9-]{0,8}") {
            let p = format!("{prefix}*");
            let text = format!("{prefix}{rest}");
            prop_assert!(pat(&p).matches(&text));
        }

        #[test]
        fn never_panics(p in "[a-c*]{0,12}", t in "[a-c]{0,12}") {
            let _ = pat(&p).matches(&t);
        }
    }
}
