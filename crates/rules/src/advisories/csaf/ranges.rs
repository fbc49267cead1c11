//! What the statuses of one vulnerability say of one component: fixed and last affected versions per
//! branch, the first affected version, the branches not affected, and the exact intervals of products
//! whose versions are several intervals or versions.

use super::version::VersionExpr;
use crate::advisories::{Affected, Component, Interval};
use gpu_trust_model::Version;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Affected,
    FirstAffected,
    Fixed,
    NotAffected,
}

/// What one vulnerability's statuses say of one component.
#[derive(Debug, Default)]
pub(super) struct Ranges {
    fixed: BTreeMap<u64, Version>,
    last_affected: BTreeMap<u64, Version>,
    introduced: Option<Version>,
    not_affected: BTreeSet<u64>,
    named: BTreeSet<u64>,
    /// Affected products of several intervals or versions, kept whole: they decide the branches
    /// they span.
    intervals: Vec<Interval>,
}

impl Ranges {
    pub(super) fn add(&mut self, status: Status, expr: &VersionExpr) {
        if status != Status::NotAffected {
            self.named.extend(expr.branches());
        }
        if let VersionExpr::Union(parts) = expr {
            for p in parts {
                match (status, p) {
                    (Status::Affected | Status::FirstAffected, VersionExpr::Exact(v)) => {
                        self.intervals.push(Interval {
                            lower: Some((v.clone(), true)),
                            upper: Some((v.clone(), true)),
                        });
                    }
                    (
                        Status::Affected | Status::FirstAffected,
                        VersionExpr::Range { lower, upper },
                    ) => {
                        self.intervals.push(Interval {
                            lower: lower.clone(),
                            upper: upper.clone(),
                        });
                    }
                    _ => self.add(status, p),
                }
            }
            return;
        }
        // The higher of two fixes of one branch (two product lines): the versions between stay affected.
        let mut fix = |v: &Version| {
            let e = self.fixed.entry(v.major()).or_insert_with(|| v.clone());
            if v > e {
                *e = v.clone();
            }
        };
        match (status, expr) {
            (Status::Fixed, VersionExpr::Exact(v))
            | (
                Status::Fixed,
                VersionExpr::Range {
                    lower: Some((v, _)),
                    ..
                },
            ) => fix(v),
            (
                Status::Affected | Status::FirstAffected,
                VersionExpr::Range {
                    upper: Some((v, false)),
                    lower,
                },
            ) => {
                fix(v);
                self.lower(lower);
            }
            (
                Status::Affected,
                VersionExpr::Range {
                    upper: Some((v, true)),
                    lower,
                },
            ) => {
                self.last(v);
                self.lower(lower);
            }
            (Status::Affected, VersionExpr::Exact(v)) => self.last(v),
            (Status::FirstAffected, VersionExpr::Exact(v)) => self.lower(&Some((v.clone(), true))),
            (Status::NotAffected, e) => self.not_affected.extend(e.branches()),
            _ => {}
        }
    }

    fn last(&mut self, v: &Version) {
        let e = self
            .last_affected
            .entry(v.major())
            .or_insert_with(|| v.clone());
        if v > e {
            *e = v.clone();
        }
    }

    fn lower(&mut self, lower: &Option<(Version, bool)>) {
        if let Some((v, _)) = lower {
            if v.parts.iter().any(|p| *p > 0) && self.introduced.as_ref().is_none_or(|i| v < i) {
                self.introduced = Some(v.clone());
            }
        }
    }

    pub(super) fn affected(
        self,
        component: Component,
        tree: Option<&BTreeSet<u64>>,
    ) -> Option<Affected> {
        if self.fixed.is_empty() && self.last_affected.is_empty() && self.intervals.is_empty() {
            return None;
        }
        let mut unaffected: BTreeSet<u64> = self.not_affected;
        if let Some(tree) = tree {
            unaffected.extend(tree.difference(&self.named).copied());
        }
        unaffected.retain(|b| !self.named.contains(b));
        Some(Affected {
            component,
            fixed: self.fixed.into_values().collect(),
            introduced: self.introduced,
            last_affected: self.last_affected.into_values().collect(),
            affected_branches: Vec::new(),
            unaffected_branches: unaffected.into_iter().collect(),
            intervals: self.intervals,
            preconditions: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_trust_model::Version;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn an_unlisted_branch_of_the_tree_is_not_affected() {
        let mut r = Ranges::default();
        r.add(Status::Fixed, &VersionExpr::Exact(v("580.159.03")));
        r.add(
            Status::Affected,
            &VersionExpr::Range {
                lower: None,
                upper: Some((v("580.159.03"), false)),
            },
        );
        let tree: BTreeSet<u64> = [535, 580, 595].into();
        let a = r.affected(Component::Driver, Some(&tree)).unwrap();
        assert_eq!(a.fixed, [v("580.159.03")]);
        assert_eq!(a.unaffected_branches, [535, 595]);
    }
}
