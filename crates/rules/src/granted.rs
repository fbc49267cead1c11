//! What accepts a finding or a pair ([`Granted`]): the reasons, the earliest end, and where each
//! acceptance was written. Which acceptances accept a finding is decided in `acceptance.rs`; drafts
//! carry the grants of their pairs.

use gpu_trust_model::fleet::{AnnotatedAcceptance, AnnotatedSubject};
use gpu_trust_model::report::{AcceptanceSource, AcceptedEntry};
use gpu_trust_policy::{Acceptance, Date};

/// What accepts a finding or a pair: the reasons, the earliest end, and where they were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    pub reasons: Vec<String>,
    pub until: Option<Date>,
    pub sources: Vec<AcceptanceSource>,
}

impl Granted {
    pub fn policy(a: &Acceptance) -> Granted {
        Granted {
            reasons: vec![a.reason.clone()],
            until: a.until,
            sources: vec![policy_source(a)],
        }
    }

    pub fn annotations<'a>(list: impl IntoIterator<Item = &'a AnnotatedAcceptance>) -> Granted {
        let mut g = Granted {
            reasons: Vec::new(),
            until: None,
            sources: Vec::new(),
        };
        for a in list {
            g.add_annotation(a);
        }
        g.normalise();
        g
    }

    fn add_annotation(&mut self, a: &AnnotatedAcceptance) {
        if let Some(r) = &a.reason {
            self.reasons.push(r.clone());
        }
        self.until = min_until(self.until, a.until);
        self.sources.push(annotation_source(a));
    }

    /// Several grants together: all reasons and sources, the earliest end.
    pub fn merge(grants: impl IntoIterator<Item = Granted>) -> Granted {
        let mut g = Granted {
            reasons: Vec::new(),
            until: None,
            sources: Vec::new(),
        };
        for x in grants {
            g.reasons.extend(x.reasons);
            g.until = min_until(g.until, x.until);
            g.sources.extend(x.sources);
        }
        g.normalise();
        g
    }

    fn normalise(&mut self) {
        self.reasons.sort();
        self.reasons.dedup();
        self.sources.sort();
        self.sources.dedup();
    }

    /// The report's entry: reasons joined by `; `.
    pub fn entry(&self) -> AcceptedEntry {
        AcceptedEntry {
            reason: self.reasons.join("; "),
            until: self.until.map(|u| u.to_string()),
            sources: self.sources.clone(),
        }
    }
}

/// The earlier of two ends, where `None` is no end.
fn min_until(a: Option<Date>, b: Option<Date>) -> Option<Date> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

pub fn policy_source(a: &Acceptance) -> AcceptanceSource {
    AcceptanceSource {
        from: "policy",
        file: a.location.file.clone(),
        line: a.location.line,
        column: a.location.column,
        object: None,
        annotation: None,
        reason: a.reason.clone(),
        namespace: None,
    }
}

pub fn annotation_source(a: &AnnotatedAcceptance) -> AcceptanceSource {
    AcceptanceSource {
        from: "annotation",
        file: a.location.file.clone(),
        line: a.location.line,
        column: a.location.column,
        object: Some(a.object.to_string()),
        annotation: Some(a.annotation.clone()),
        reason: a.reason.clone().unwrap_or_default(),
        namespace: a
            .object
            .namespace
            .clone()
            .or_else(|| (a.subject == AnnotatedSubject::Namespace).then(|| a.object.name.clone())),
    }
}
