//! Namespace names a reader can mistake for one another: two names whose Unicode TS #39 skeletons
//! are equal (`team-a` and `tеam-a` with a Cyrillic `е`, `team-a` and `team–a` with an en dash,
//! `ads-1` and `ads-l`), and names with characters a namespace cannot have (namespaces are DNS-1123
//! labels: lower-case ASCII letters, digits and `-`). A policy that names one while the cluster has the
//! other gives a tenant's workloads to no one, or to someone else; the audit warns about both.

use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use std::collections::BTreeMap;

/// The names at most one warning lists in full.
const MAX_LISTED: usize = 5;

/// Warnings for names among `names` (a name and where it was written) that look like another of
/// them, and for names with characters outside a namespace name's. Linear in the names: each is
/// grouped by its skeleton once.
pub(crate) fn confusable(names: &[(&str, &Location)]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut by_skeleton: BTreeMap<String, BTreeMap<&str, &Location>> = BTreeMap::new();
    for (name, at) in names {
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            out.push(Diagnostic::warning(Code::InvalidNamespaceName,
                known(at),
                format!(
                    "namespace `{}` has {}, which no namespace name can have (lower-case letters, digits and `-`): the API server refuses it, and a reader may take it for another",
                    name.escape_default(),
                    describe(c),
                ),
            ));
        }
        by_skeleton
            .entry(skeleton(name))
            .or_default()
            .entry(name)
            .or_insert(at);
    }
    for group in by_skeleton.values().filter(|g| g.len() > 1) {
        let listed: Vec<String> = group
            .keys()
            .take(MAX_LISTED)
            .map(|n| format!("`{}`", n.escape_default()))
            .collect();
        let at = group
            .values()
            .filter(|l| !l.file.is_empty())
            .min()
            .map_or_else(|| known(&Location::default()), |l| (*l).clone());
        out.push(Diagnostic::warning(Code::LookalikeNamespaces,
            at,
            format!(
                "namespaces {}{} look alike: a reader, or a policy, can take one for another; rename one",
                listed.join(" and "),
                if group.len() > MAX_LISTED { " (and more)" } else { "" }
            ),
        ));
    }
    out
}

/// The UTS #39 skeleton of a name, with the hyphen-like dashes it folds taken to `-`.
fn skeleton(name: &str) -> String {
    unicode_security::skeleton(name)
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => '-',
            c => c,
        })
        .collect()
}

/// Where a name was written, or the input as a whole for a namespace no Namespace object names.
fn known(at: &Location) -> Location {
    if at.file.is_empty() {
        Location::new("input", 0, 0)
    } else {
        at.clone()
    }
}

fn describe(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("`{c}`")
    } else {
        format!("U+{:04X}", u32::from(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(names: &[&str]) -> Vec<String> {
        let at = Location::new("p.yaml", 1, 1);
        let list: Vec<(&str, &Location)> = names.iter().map(|n| (*n, &at)).collect();
        confusable(&list).into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn look_alikes_and_foreign_characters_are_warned_about() {
        assert!(warnings(&["team-a", "team-b", "ml-prod"]).is_empty());
        let w = warnings(&["team-a", "t\u{0435}am-a"]);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|m| m.contains("U+0435")), "{w:?}");
        assert!(w.iter().any(|m| m.contains("look alike")), "{w:?}");
        let w = warnings(&["team-a", "team\u{2013}a"]);
        assert!(w.iter().any(|m| m.contains("look alike")), "{w:?}");
        assert!(w.iter().any(|m| m.contains("U+2013")), "{w:?}");
        let w = warnings(&["ads-1", "ads-l"]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("`ads-1` and `ads-l`"), "{w:?}");
    }
}
