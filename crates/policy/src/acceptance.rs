//! Interference the operator knowingly accepts (`accept:` entries).

use crate::{Date, NamespacePattern};
use gpu_trust_model::Location;
use serde::Serialize;
use std::collections::BTreeSet;

/// One `accept:` entry: findings of `rule` (narrowed to exactly `tenants`, and to the `namespaces`,
/// `workloads` and `nodes` given) are still reported, marked accepted, and do not fail the run, until
/// the day after `until`. An entry without a reason accepts nothing (the audit reports it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Acceptance {
    /// A rule code such as `GT401`.
    pub rule: String,
    /// The exact set of tenants a finding must involve; `None` accepts the rule for any tenants.
    pub tenants: Option<BTreeSet<String>>,
    /// Namespaces (names or `*` globs) every workload and namespace of the finding must be in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<NamespacePattern>>,
    /// Workload objects every workload of the finding must belong to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workloads: Option<Vec<WorkloadRef>>,
    /// Nodes every node of the finding must be one of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<BTreeSet<String>>,
    /// Empty when the entry gives none: it then accepts nothing.
    pub reason: String,
    /// Last day the acceptance holds; `None` holds without end.
    pub until: Option<Date>,
    /// Where the entry is in the policy file.
    #[serde(skip)]
    pub location: Location,
}

/// A workload object named by an acceptance's `workloads` scope: the object its pods come from (a
/// Deployment, a Job, a PyTorchJob...) or a bare Pod.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRef {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl WorkloadRef {
    /// Whether the reference names this object (`kind`, `namespace`, `name`).
    pub fn names(&self, kind: &str, namespace: &str, name: &str) -> bool {
        self.kind == kind && self.namespace == namespace && self.name == name
    }
}

/// Whether an acceptance still holds on a given day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcceptanceState {
    /// It holds (its `until` is today or later, or it has none).
    Active,
    /// Its `until` has passed: it no longer suppresses anything, and the audit reports GT003.
    Expired,
}

impl AcceptanceState {
    pub fn as_str(self) -> &'static str {
        match self {
            AcceptanceState::Active => "active",
            AcceptanceState::Expired => "expired",
        }
    }
}

impl Acceptance {
    /// Whether the entry is narrowed by `namespaces`, `workloads` or `nodes`: then the tenants of a
    /// finding alone cannot say whether it matches (the audit judges the rest).
    pub fn is_scoped(&self) -> bool {
        self.namespaces.is_some() || self.workloads.is_some() || self.nodes.is_some()
    }

    /// Whether the entry gives a reason; one without accepts nothing.
    pub fn has_reason(&self) -> bool {
        !self.reason.trim().is_empty()
    }

    /// Whether the rule and tenants of a finding are the kind this entry accepts, whatever the date
    /// and the scopes. With `tenants` set on the entry, the finding's tenants must be exactly that
    /// set (order and repetition do not matter); without, any tenants match.
    pub fn matches_tenants<I>(&self, rule: &str, tenants: I) -> bool
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        if self.rule != rule {
            return false;
        }
        match &self.tenants {
            None => true,
            Some(want) => {
                let got: BTreeSet<String> = tenants
                    .into_iter()
                    .map(|t| t.as_ref().to_string())
                    .collect();
                &got == want
            }
        }
    }

    /// Whether a finding of `rule` involving `tenants` is the kind this entry accepts, whatever the
    /// date: [`matches_tenants`](Self::matches_tenants), for an entry that gives a reason and no
    /// other scope (a scoped entry needs the finding's namespaces, workloads and nodes).
    ///
    /// ```
    /// # use gpu_trust_policy::Acceptance;
    /// # use gpu_trust_model::Location;
    /// let a = Acceptance {
    ///     rule: "GT401".into(),
    ///     tenants: Some(["ads".to_string(), "search".to_string()].into()),
    ///     namespaces: None,
    ///     workloads: None,
    ///     nodes: None,
    ///     reason: "one cluster by design".into(),
    ///     until: None,
    ///     location: Location::default(),
    /// };
    /// assert!(a.matches("GT401", ["search", "ads"]));
    /// assert!(!a.matches("GT401", ["search", "ads", "acme"]));
    /// assert!(!a.matches("GT207", ["ads", "search"]));
    /// ```
    pub fn matches<I>(&self, rule: &str, tenants: I) -> bool
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        !self.is_scoped() && self.has_reason() && self.matches_tenants(rule, tenants)
    }

    /// Whether the entry's `until` lies before `today` (the acceptance holds through its `until` day).
    pub fn is_expired(&self, today: Date) -> bool {
        self.until.is_some_and(|until| until < today)
    }

    pub fn state(&self, today: Date) -> AcceptanceState {
        if self.is_expired(today) {
            AcceptanceState::Expired
        } else {
            AcceptanceState::Active
        }
    }

    /// Whether the entry accepts this finding today: it [`matches`](Self::matches) and has not expired.
    pub fn suppresses<I>(&self, rule: &str, tenants: I, today: Date) -> bool
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        !self.is_expired(today) && self.matches(rule, tenants)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acceptance(tenants: Option<&[&str]>, until: Option<&str>) -> Acceptance {
        Acceptance {
            rule: "GT401".into(),
            tenants: tenants.map(|t| t.iter().map(|s| s.to_string()).collect()),
            namespaces: None,
            workloads: None,
            nodes: None,
            reason: "by design".into(),
            until: until.map(|u| Date::parse(u).unwrap()),
            location: Location::default(),
        }
    }

    #[test]
    fn tenant_set_is_order_free_and_exact() {
        let a = acceptance(Some(&["search", "ads"]), None);
        assert!(a.matches("GT401", ["ads", "search"]));
        assert!(a.matches("GT401", vec!["search".to_string(), "ads".to_string()]));
        assert!(a.matches("GT401", ["ads", "search", "ads"]));
        assert!(!a.matches("GT401", ["ads"]));
        assert!(!a.matches("GT401", ["ads", "search", "acme"]));
        assert!(!a.matches("GT402", ["ads", "search"]));
    }

    #[test]
    fn without_tenants_any_finding_of_the_rule_matches() {
        let a = acceptance(None, None);
        assert!(a.matches("GT401", ["x", "y"]));
        assert!(a.matches("GT401", Vec::<String>::new()));
        assert!(!a.matches("GT101", ["x", "y"]));
    }

    #[test]
    fn holds_through_its_until_day() {
        let a = acceptance(None, Some("2027-06-30"));
        let on = Date::parse("2027-06-30").unwrap();
        let after = Date::parse("2027-07-01").unwrap();
        assert!(!a.is_expired(on));
        assert_eq!(a.state(on), AcceptanceState::Active);
        assert!(a.suppresses("GT401", ["a", "b"], on));
        assert!(a.is_expired(after));
        assert_eq!(a.state(after), AcceptanceState::Expired);
        assert!(!a.suppresses("GT401", ["a", "b"], after));
        assert!(
            a.matches("GT401", ["a", "b"]),
            "an expired entry still matches, so GT003 can name it"
        );
    }

    #[test]
    fn scoped_or_reasonless_entries_never_match_on_tenants_alone() {
        let mut a = acceptance(None, None);
        a.nodes = Some(["gpu-1".to_string()].into());
        assert!(!a.matches("GT401", ["x", "y"]));
        assert!(a.matches_tenants("GT401", ["x", "y"]));
        let mut b = acceptance(None, None);
        b.reason = " ".into();
        assert!(!b.has_reason());
        assert!(!b.suppresses("GT401", ["x", "y"], Date::MIN));
    }

    #[test]
    fn without_until_never_expires() {
        let a = acceptance(None, None);
        assert!(!a.is_expired(Date::MAX));
    }
}
