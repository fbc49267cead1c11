//! The validation that builds a [`Policy`] from the file as written: the file is read through the
//! source crate's bounded reader, then each list is checked in its own module (`tenants`,
//! `relations`, `workloads`, `accept`), every error collected in one `ValidationContext`.

mod accept;
mod check;
mod relations;
mod tenants;
mod workloads;

use crate::policy::{Policy, API_VERSION, KIND, MAX_POLICY_BYTES};
use crate::raw::RawPolicy;
use check::PolicyCheck;
use gpu_trust_model::Code;
use gpu_trust_model::{Diagnostic, Location};
use gpu_trust_source::{Limits, ValidationContext};
use std::collections::BTreeMap;

/// Reads and validates a policy file. `file` names it in diagnostics.
///
/// Syntax errors and unknown fields stop the reading (with their location); once the file has been
/// read, every validation error is collected, sorted by position. An empty file is the default policy.
pub fn parse(text: &str, file: &str) -> Result<Policy, Vec<Diagnostic>> {
    let (raw, cx) = if is_blank(text) && text.len() <= MAX_POLICY_BYTES {
        (
            RawPolicy::default(),
            ValidationContext::new(file, Code::InvalidPolicy),
        )
    } else {
        let (raw, cx) = ValidationContext::read::<Option<RawPolicy>>(
            text,
            file,
            &limits(),
            Code::InvalidPolicy,
        )
        .map_err(|d| vec![reword(d, text)])?;
        (raw.unwrap_or_default(), cx)
    };
    let mut check = PolicyCheck { cx };
    let policy = check.policy(raw);
    check.cx.finish(policy)
}

fn limits() -> Limits {
    Limits {
        max_file_bytes: MAX_POLICY_BYTES,
        ..Limits::default()
    }
}

/// Says what the parser's own wording leaves unclear to someone writing a policy.
fn reword(mut d: Diagnostic, text: &str) -> Diagnostic {
    // The line of the first YAML node: a "mapping" error there is about the whole document.
    let first_line = text
        .lines()
        .position(|l| {
            let t = l.trim();
            !(t.is_empty() || t.starts_with('#') || t == "---")
        })
        .map_or(0, |i| i + 1);
    if d.code == Code::NotOneDocument {
        d.message =
            "a policy file holds one YAML document; this one has a second after `---`".into();
    } else if usize::try_from(d.location.line).is_ok_and(|l| l == first_line)
        && d.location.column == 1
        && d.message == "expected mapping start"
    {
        d.message = "a policy file is a mapping (apiVersion, kind, tenants, trust, ...)".into();
    }
    d
}

/// Whether the text holds no YAML node (only blank lines and comments).
fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

impl PolicyCheck {
    fn policy(&mut self, raw: RawPolicy) -> Policy {
        let mut policy = Policy {
            file: Some(self.cx.file().to_string()),
            ..Policy::default()
        };
        self.cx
            .expect_word(raw.api_version.as_ref(), "apiVersion", API_VERSION);
        self.cx.expect_word(raw.kind.as_ref(), "kind", KIND);
        match raw.tenant_label {
            None => {}
            Some(None) => policy.tenant_labels.clear(),
            Some(Some(label)) => {
                let text = label.value.trim();
                if text.is_empty() || text.contains(char::is_whitespace) {
                    self.cx.error(
                        self.cx.loc(&label),
                        format!(
                            "tenantLabel `{}` is not a label key (write `tenantLabel: null` to derive no tenants from labels)",
                            label.value
                        ),
                    );
                }
                policy.tenant_labels = vec![text.to_string()];
            }
        }
        // The policy's platform namespaces extend the built-in list: naming `monitoring` must not
        // make the GPU Operator's namespace a tenant. A built-in namespace becomes a tenant's only
        // when a tenant names it (and `policy check` warns).
        let given = raw
            .platform_namespaces
            .map(|list| self.patterns(&list.value, "platformNamespaces"))
            .unwrap_or_default();
        policy.tenants = self.tenants(raw.tenants);
        self.platform_conflicts(&given, &policy.tenants);
        for p in given {
            if !policy.platform.iter().any(|q| q.pattern == p.pattern) {
                policy.platform.push(p);
            }
        }
        let declared: BTreeMap<String, Location> = policy
            .tenants
            .iter()
            .map(|t| (t.name.clone(), t.location.clone()))
            .collect();
        if let Some(trust) = raw.trust {
            if let Some(d) = &trust.default {
                if let Some(t) = self.trust_level(d) {
                    policy.default_trust = t;
                }
            }
            policy.relations = self.relations(trust.relations, &declared);
        }
        policy.workloads = raw
            .workloads
            .into_iter()
            .filter_map(|w| self.workload(w))
            .collect();
        if let Some(host) = raw.host {
            if let Some(days) = host.patch_window_days {
                policy.patch_window_days = days.value;
            }
        }
        if let Some(sharing) = raw.sharing {
            if let Some(max) = sharing.max_replicas {
                if max.value == 0 {
                    self.cx.error(
                        self.cx.loc(&max),
                        "sharing.maxReplicas must be at least 1 (a GPU advertised as 0 replicas cannot be used)",
                    );
                } else {
                    policy.max_replicas = max.value;
                }
            }
        }
        policy.acceptances = raw
            .accept
            .into_iter()
            .filter_map(|a| self.acceptance(a))
            .collect();
        policy
    }
}
