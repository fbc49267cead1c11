//! Interference the operator knowingly accepts (`accept:` entries).

use crate::Date;
use gpu_trust_model::Location;
use serde::Serialize;
use std::collections::BTreeSet;

/// One `accept:` entry: findings of `rule` (narrowed to exactly `tenants` when given) are still
/// reported, marked accepted, and do not fail the run, until the day after `until`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Acceptance {
    /// A rule code such as `GT401`.
    pub rule: String,
    /// The exact set of tenants a finding must involve; `None` accepts the rule for any tenants.
    pub tenants: Option<BTreeSet<String>>,
    pub reason: String,
    /// Last day the acceptance holds; `None` holds without end.
    pub until: Option<Date>,
    /// Where the entry is in the policy file.
    #[serde(skip)]
    pub location: Location,
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
    /// Whether a finding of `rule` involving `tenants` is the kind this entry accepts, whatever the
    /// date. With `tenants` set on the entry, the finding's tenants must be exactly that set (order and
    /// repetition do not matter); without, any tenants match.
    ///
    /// ```
    /// # use gpu_trust_policy::Acceptance;
    /// # use gpu_trust_model::Location;
    /// let a = Acceptance {
    ///     rule: "GT401".into(),
    ///     tenants: Some(["ads".to_string(), "search".to_string()].into()),
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
    fn without_until_never_expires() {
        let a = acceptance(None, None);
        assert!(!a.is_expired(Date::MAX));
    }
}
