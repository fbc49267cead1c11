//! The policy file's checks and the checks of values several lists share: namespace lists, trust
//! levels and latencies.

use crate::pattern::NamespacePattern;
use crate::raw::S;
use gpu_trust_model::{Latency, Trust};
use gpu_trust_source::ValidationContext;
use std::collections::BTreeMap;

/// The policy file's checks, reporting into the shared validation context.
pub(super) struct PolicyCheck {
    pub(super) cx: ValidationContext,
}

impl PolicyCheck {
    /// Namespace names and globs of one list, each checked, duplicates refused.
    pub(super) fn patterns(&mut self, list: &[S<String>], field: &str) -> Vec<NamespacePattern> {
        let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
        let mut out = Vec::new();
        for item in list {
            let loc = self.cx.loc(item);
            if let Err(e) = NamespacePattern::check(&item.value) {
                self.cx.error(loc, format!("{field}: {e}"));
                continue;
            }
            if let Some(first) = seen.get(item.value.as_str()) {
                self.cx.error(
                    loc,
                    format!(
                        "{field}: `{}` is listed twice (first on line {first})",
                        item.value
                    ),
                );
                continue;
            }
            seen.insert(&item.value, loc.line);
            out.push(NamespacePattern::new(item.value.clone(), loc));
        }
        out
    }

    pub(super) fn trust_level(&mut self, s: &S<String>) -> Option<Trust> {
        let t = Trust::parse(&s.value);
        if t.is_none() {
            self.cx.error(
                self.cx.loc(s),
                format!(
                    "trust level `{}` is not one of none, limited, full",
                    s.value
                ),
            );
        }
        t
    }

    pub(super) fn latency(&mut self, s: &S<String>) -> Option<Latency> {
        let l = Latency::parse(&s.value);
        if l.is_none() {
            self.cx.error(
                self.cx.loc(s),
                format!(
                    "latency `{}` is not one of critical, standard, tolerant",
                    s.value
                ),
            );
        }
        l
    }
}
