//! Acceptances written on objects as annotations (`accept.gpu-trust.io/<RULE>`), as ingest reads them.

use super::Workload;
use crate::location::{Location, ObjectRef};
use serde::{Deserialize, Serialize};

/// The annotation prefix of an acceptance written on an object: `accept.gpu-trust.io/GT202` holds
/// the reason, `accept.gpu-trust.io/GT202.until` the last day it holds (docs/suppressions.md).
pub const ACCEPT_ANNOTATION_PREFIX: &str = "accept.gpu-trust.io/";
/// The suffix of the annotation that holds an acceptance's last day.
pub const ACCEPT_UNTIL_SUFFIX: &str = ".until";

/// What an annotated acceptance is written on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AnnotatedSubject {
    /// A workload object (a controller such as a Deployment or a Job, or a bare Pod): it covers the
    /// workloads read from that object.
    Workload,
    /// A Namespace: it covers every workload in the namespace.
    Namespace,
}

/// An acceptance written on an object: `accept.gpu-trust.io/<rule>: <reason>`, with
/// `accept.gpu-trust.io/<rule>.until: <YYYY-MM-DD>` when it ends.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnotatedAcceptance {
    pub subject: AnnotatedSubject,
    /// The annotated object (for a Namespace, its name is the namespace).
    pub object: ObjectRef,
    /// A rule code of the form `GTnnn`.
    pub rule: String,
    /// The reason; `None` when the reason annotation is absent or blank (such an acceptance accepts
    /// nothing and is itself a finding).
    pub reason: Option<String>,
    /// The last day it holds.
    pub until: Option<crate::date::Date>,
    /// The annotation key of the reason (or of the `until` when the reason is absent).
    pub annotation: String,
    /// Where that annotation is (the object's position when the input gives none, as for JSON).
    pub location: Location,
}

impl AnnotatedAcceptance {
    /// Whether it covers a workload: written on the workload's own object, or on its namespace.
    pub fn covers(&self, workload: &Workload) -> bool {
        match self.subject {
            AnnotatedSubject::Workload => {
                self.object.kind == workload.object.kind
                    && self.object.name == workload.object.name
                    && self.object.namespace.as_deref() == Some(workload.namespace.as_str())
            }
            AnnotatedSubject::Namespace => self.object.name == workload.namespace,
        }
    }

    /// Whether it holds on `today` (through its `until` day).
    pub fn is_expired(&self, today: crate::date::Date) -> bool {
        self.until.is_some_and(|u| u < today)
    }
}
