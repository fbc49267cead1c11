//! `workloads`: what a selector's workloads are (kind, peak memory, latency) where the objects alone
//! cannot say.

use super::check::PolicyCheck;
use crate::pattern::NamespacePattern;
use crate::policy::WorkloadRule;
use crate::quantity::parse_memory_mib;
use crate::raw::{self, S};
use gpu_trust_model::fleet::WorkloadClass;

impl PolicyCheck {
    pub(super) fn workload(&mut self, entry: S<raw::RawWorkload>) -> Option<WorkloadRule> {
        let loc = self.cx.loc(&entry);
        let w = entry.value;
        let mut ok = true;
        let Some(selector) = w.selector else {
            self.cx.error(
                loc,
                "workload entry needs a `selector` (namespace and/or labels)",
            );
            return None;
        };
        let selector_loc = self.cx.loc(&selector);
        let selector = selector.value;
        if selector.namespace.is_none() && selector.labels.is_empty() {
            self.cx.error(
                selector_loc,
                "workload selector is empty: give a namespace, labels, or both",
            );
            ok = false;
        }
        let namespace = match selector.namespace {
            None => None,
            Some(ns) => match NamespacePattern::check(&ns.value) {
                Ok(()) => Some(NamespacePattern::new(ns.value.clone(), self.cx.loc(&ns))),
                Err(e) => {
                    self.cx.error(self.cx.loc(&ns), e);
                    ok = false;
                    None
                }
            },
        };
        let kind = match &w.kind {
            None => None,
            Some(k) => {
                let c = WorkloadClass::parse(&k.value);
                if c.is_none() {
                    self.cx.error(
                        self.cx.loc(k),
                        format!(
                            "workload kind `{}` is not one of training, inference, notebook, batch",
                            k.value
                        ),
                    );
                    ok = false;
                }
                c
            }
        };
        let peak_memory_mib = match &w.peak_memory {
            None => None,
            Some(m) => match parse_memory_mib(&m.value.0) {
                Ok(mib) => Some(mib),
                Err(e) => {
                    self.cx.error(self.cx.loc(m), format!("peakMemory: {e}"));
                    ok = false;
                    None
                }
            },
        };
        let latency = match &w.latency {
            None => None,
            Some(l) => {
                let l2 = self.latency(l);
                ok &= l2.is_some();
                l2
            }
        };
        if w.kind.is_none() && w.peak_memory.is_none() && w.latency.is_none() {
            self.cx.error(
                loc.clone(),
                "workload entry sets nothing: give a kind, a peakMemory or a latency",
            );
            ok = false;
        }
        ok.then_some(WorkloadRule {
            namespace,
            labels: selector.labels,
            kind,
            peak_memory_mib,
            latency,
            location: loc,
        })
    }
}
