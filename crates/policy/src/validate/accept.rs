//! `accept`: the interference the operator accepts, per rule, scoped by tenants, namespaces, nodes or
//! workloads, with a reason and an end date.

use super::check::PolicyCheck;
use crate::pattern::NamespacePattern;
use crate::raw::{self, S};
use crate::{Acceptance, Date, WorkloadRef};
use std::collections::BTreeSet;

impl PolicyCheck {
    pub(super) fn acceptance(&mut self, entry: S<raw::RawAcceptance>) -> Option<Acceptance> {
        let loc = self.cx.loc(&entry);
        let a = entry.value;
        let mut ok = true;
        let rule = match &a.rule {
            None => {
                self.cx.error(
                    loc.clone(),
                    "acceptance needs a `rule` (a code such as GT401)",
                );
                ok = false;
                String::new()
            }
            Some(r) => {
                if !is_rule_code(&r.value) {
                    self.cx.error(
                        self.cx.loc(r),
                        format!(
                            "acceptance rule `{}` is not a rule code of the form GTnnn (e.g. GT401)",
                            r.value
                        ),
                    );
                    ok = false;
                }
                r.value.clone()
            }
        };
        // An entry without a reason is kept: it accepts nothing, and the audit reports it (GT004)
        // where it is, as it reports an annotation without one.
        let reason = a
            .reason
            .as_ref()
            .map(|r| r.value.trim().to_string())
            .unwrap_or_default();
        let tenants = match &a.tenants {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance tenants is empty: leave it out to accept the rule for all tenants",
                );
                ok = false;
                None
            }
            Some(list) => {
                let mut set = BTreeSet::new();
                for t in &list.value {
                    if t.value.trim().is_empty() {
                        self.cx
                            .error(self.cx.loc(t), "acceptance names an empty tenant");
                        ok = false;
                    } else if !set.insert(t.value.clone()) {
                        self.cx.error(
                            self.cx.loc(t),
                            format!("acceptance names tenant `{}` twice", t.value),
                        );
                        ok = false;
                    }
                }
                Some(set)
            }
        };
        let errors = self.cx.error_count();
        let namespaces = match &a.namespaces {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance namespaces is empty: leave it out to accept the rule in every namespace",
                );
                None
            }
            Some(list) => Some(self.patterns(&list.value, "acceptance namespaces")),
        };
        let nodes = match &a.nodes {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance nodes is empty: leave it out to accept the rule on every node",
                );
                None
            }
            Some(list) => {
                let mut set = BTreeSet::new();
                for n in &list.value {
                    if let Err(e) = node_name(&n.value) {
                        self.cx
                            .error(self.cx.loc(n), format!("acceptance nodes: {e}"));
                    } else if !set.insert(n.value.clone()) {
                        self.cx.error(
                            self.cx.loc(n),
                            format!("acceptance names node `{}` twice", n.value),
                        );
                    }
                }
                Some(set)
            }
        };
        let workloads = match &a.workloads {
            None => None,
            Some(list) if list.value.is_empty() => {
                self.cx.error(
                    self.cx.loc(list),
                    "acceptance workloads is empty: leave it out to accept the rule for every workload",
                );
                None
            }
            Some(list) => {
                let mut out: Vec<WorkloadRef> = Vec::new();
                for w in &list.value {
                    if let Some(r) = self.workload_ref(w) {
                        if out.contains(&r) {
                            self.cx.error(
                                self.cx.loc(w),
                                format!(
                                    "acceptance names workload {} {}/{} twice",
                                    r.kind, r.namespace, r.name
                                ),
                            );
                        } else {
                            out.push(r);
                        }
                    }
                }
                Some(out)
            }
        };
        if self.cx.error_count() > errors {
            ok = false;
        }
        let until = match &a.until {
            None => None,
            Some(u) => match Date::parse(&u.value) {
                Ok(d) => Some(d),
                Err(e) => {
                    self.cx.error(self.cx.loc(u), format!("until: {e}"));
                    ok = false;
                    None
                }
            },
        };
        ok.then_some(Acceptance {
            rule,
            tenants,
            namespaces,
            workloads,
            nodes,
            reason,
            until,
            location: loc,
        })
    }
}

impl PolicyCheck {
    /// One entry of an acceptance's `workloads`: `kind`, `namespace` and `name`, each required.
    fn workload_ref(&mut self, w: &S<raw::RawWorkloadRef>) -> Option<WorkloadRef> {
        let loc = self.cx.loc(w);
        let field = |v: &Option<S<String>>, name: &str, this: &mut Self| match v {
            Some(t) if !t.value.trim().is_empty() => Some(t.value.clone()),
            Some(t) => {
                this.cx.error(
                    this.cx.loc(t),
                    format!("acceptance workload `{name}` is empty"),
                );
                None
            }
            None => {
                this.cx.error(
                    loc.clone(),
                    format!(
                        "acceptance workload needs `{name}` (a workload is named by kind, namespace and name, e.g. {{kind: Deployment, namespace: ml, name: trainer}})"
                    ),
                );
                None
            }
        };
        let kind = field(&w.value.kind, "kind", self);
        let namespace = field(&w.value.namespace, "namespace", self);
        let name = field(&w.value.name, "name", self);
        if let Some(ns) = &w.value.namespace {
            if let Err(e) = NamespacePattern::check(&ns.value) {
                self.cx.error(
                    self.cx.loc(ns),
                    format!("acceptance workload namespace: {e}"),
                );
                return None;
            }
            if ns.value.contains('*') {
                self.cx.error(
                    self.cx.loc(ns),
                    "acceptance workload namespace: a workload is in one namespace; use `namespaces` for globs",
                );
                return None;
            }
        }
        Some(WorkloadRef {
            kind: kind?,
            namespace: namespace?,
            name: name?,
        })
    }
}

/// Why a text cannot be a node name: Kubernetes names nodes with DNS subdomains (lower-case letters,
/// digits, `-` and `.`, at most 253 characters).
fn node_name(text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err("a node name cannot be empty".to_string());
    }
    if text.len() > 253 {
        return Err(format!("`{text}` is longer than 253 characters"));
    }
    if let Some(bad) = text
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '.'))
    {
        return Err(format!(
            "`{text}` is not a node name: `{bad}` is not allowed (lower-case letters, digits, `-` and `.`)"
        ));
    }
    Ok(())
}

/// `GT` followed by exactly three digits.
fn is_rule_code(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 5 && b.starts_with(b"GT") && b[2..].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_codes() {
        assert!(is_rule_code("GT401"));
        assert!(is_rule_code("GT003"));
        assert!(!is_rule_code("GT40"));
        assert!(!is_rule_code("gt401"));
        assert!(!is_rule_code("GT4011"));
        assert!(!is_rule_code("GTX01"));
        assert!(!is_rule_code("GT４01"));
    }
}
