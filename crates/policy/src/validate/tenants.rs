//! `tenants` and `platformNamespaces`: each tenant's name, namespaces (a namespace belongs to one
//! tenant only), latency, contract and RBAC subjects.

use super::check::PolicyCheck;
use crate::pattern::NamespacePattern;
use crate::policy::{Contract, TenantDecl};
use crate::raw::{self, S};
use gpu_trust_model::fleet::Subject;
use std::collections::{BTreeMap, BTreeSet};

impl PolicyCheck {
    pub(super) fn tenants(&mut self, raw: Vec<S<raw::RawTenant>>) -> Vec<TenantDecl> {
        let mut names: BTreeMap<String, u32> = BTreeMap::new();
        // Namespace (or glob, as written) -> the tenant that claimed it first, and where.
        let mut claims: BTreeMap<String, (String, u32)> = BTreeMap::new();
        let mut out = Vec::new();
        for entry in raw {
            let entry_loc = self.cx.loc(&entry);
            let t = entry.value;
            let Some(name) = t.name else {
                self.cx.error(entry_loc, "tenant needs a `name`");
                continue;
            };
            let name_loc = self.cx.loc(&name);
            let name = name.value;
            if name.trim().is_empty() || name.trim() != name {
                self.cx.error(
                    name_loc.clone(),
                    format!(
                        "tenant name `{name}` must be non-empty and have no surrounding spaces"
                    ),
                );
            }
            if let Some(first) = names.get(&name) {
                self.cx.error(
                    name_loc.clone(),
                    format!("tenant `{name}` is declared twice (first on line {first})"),
                );
            } else {
                names.insert(name.clone(), name_loc.line);
            }
            let namespaces = self.patterns(&t.namespaces, &format!("tenant `{name}`"));
            for ns in &namespaces {
                match claims.get(&ns.pattern) {
                    Some((other, line)) if *other != name => {
                        let what = if ns.is_glob() { "glob" } else { "namespace" };
                        self.cx.error(
                            ns.location.clone(),
                            format!(
                                "{what} `{}` is claimed by tenant `{other}` (line {line}) and by tenant `{name}`: a namespace belongs to one tenant only",
                                ns.pattern
                            ),
                        );
                    }
                    Some(_) => {}
                    None => {
                        claims.insert(ns.pattern.clone(), (name.clone(), ns.location.line));
                    }
                }
            }
            let latency = t
                .latency
                .as_ref()
                .and_then(|l| self.latency(l))
                .unwrap_or_default();
            let contract = match &t.contract {
                None => Contract::default(),
                Some(c) => match Contract::parse(&c.value) {
                    Some(c) => c,
                    None => {
                        self.cx.error(
                            self.cx.loc(c),
                            format!(
                                "contract `{}` is not one of isolation, proportional-compute",
                                c.value
                            ),
                        );
                        Contract::default()
                    }
                },
            };
            let subjects = t
                .subjects
                .into_iter()
                .filter_map(|s| self.subject(s, &name))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            out.push(TenantDecl {
                name,
                location: name_loc,
                namespaces,
                latency,
                confidential: t.confidential.unwrap_or(false),
                contract,
                subjects,
            });
        }
        out
    }

    /// A namespace explicitly named both as a platform namespace and as a tenant's is a contradiction.
    pub(super) fn platform_conflicts(
        &mut self,
        platform: &[NamespacePattern],
        tenants: &[TenantDecl],
    ) {
        for p in platform.iter().filter(|p| !p.is_glob()) {
            for t in tenants {
                if let Some(ns) = t.namespaces.iter().find(|n| n.pattern == p.pattern) {
                    self.cx.error(
                        ns.location.clone(),
                        format!(
                            "namespace `{}` is claimed by tenant `{}` and listed in platformNamespaces (line {}): it is either infrastructure or a tenant's",
                            ns.pattern, t.name, p.location.line
                        ),
                    );
                }
            }
        }
    }

    pub(super) fn subject(&mut self, raw: S<raw::RawSubject>, tenant: &str) -> Option<Subject> {
        let loc = self.cx.loc(&raw);
        let s = raw.value;
        let (Some(kind), Some(name)) = (s.kind, s.name) else {
            self.cx.error(
                loc,
                format!("subject of tenant `{tenant}` needs a `kind` (User, Group or ServiceAccount) and a `name`"),
            );
            return None;
        };
        let mut ok = true;
        if !matches!(kind.value.as_str(), "User" | "Group" | "ServiceAccount") {
            self.cx.error(
                self.cx.loc(&kind),
                format!(
                    "subject kind `{}` is not one of User, Group, ServiceAccount",
                    kind.value
                ),
            );
            ok = false;
        }
        if name.value.trim().is_empty() {
            self.cx.error(self.cx.loc(&name), "subject name is empty");
            ok = false;
        }
        let namespace = match (&s.namespace, kind.value.as_str()) {
            (None, "ServiceAccount") => {
                self.cx.error(
                    self.cx.loc(&kind),
                    format!(
                        "ServiceAccount subject `{}` needs a `namespace`",
                        name.value
                    ),
                );
                ok = false;
                None
            }
            (Some(ns), "ServiceAccount") => {
                if let Err(e) = NamespacePattern::check(&ns.value) {
                    self.cx.error(self.cx.loc(ns), e);
                    ok = false;
                } else if ns.value.contains('*') {
                    self.cx
                        .error(self.cx.loc(ns), "a subject's namespace cannot be a glob");
                    ok = false;
                }
                Some(ns.value.clone())
            }
            (Some(ns), _) => {
                self.cx.error(
                    self.cx.loc(ns),
                    format!(
                        "only a ServiceAccount subject has a namespace, not a {}",
                        kind.value
                    ),
                );
                ok = false;
                None
            }
            (None, _) => None,
        };
        ok.then_some(Subject {
            kind: kind.value,
            name: name.value,
            namespace,
        })
    }
}
