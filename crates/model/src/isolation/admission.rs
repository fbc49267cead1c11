//! The admission table: whether two tenants may share a device, a GPU, a node or an API server, by
//! the sharing level, their trust and whether either was promised isolation (the policy's `contract:
//! isolation`). Each row names the rule that reports the pairs it covers; the rule's declaration
//! holds the severity. The audit's pairwise rules judge their sites by these rows, and the planner
//! shares a device, a GPU or a node only where every row that covers the pair allows it (or the
//! policy accepts the row's rule for the pair, where the row says so), so a plan that audits clean
//! holds by construction.

use super::Mechanism;
use super::Scope;
use crate::vocab::Trust;

/// What the members of a co-location share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// One GPU or MIG instance, shared under the mechanism (time-slicing, MPS, a fraction, a claim).
    Device(Mechanism),
    /// Different MIG instances of one physical GPU.
    MigGpu,
    /// One node: kernel, driver, toolkit, runtime.
    Node,
    /// One API server: the cluster's control plane.
    ControlPlane,
}

impl Level {
    /// The mechanism and scope a co-location at this level has in the isolation model, for the
    /// incidents it carries.
    pub fn reach(self) -> (Mechanism, Scope) {
        match self {
            Level::Device(m) if m.is_mig() => (m, Scope::Instance),
            Level::Device(m) => (m, Scope::Gpu),
            Level::MigGpu => (Mechanism::MigInstance, Scope::Gpu),
            Level::Node => (Mechanism::Exclusive, Scope::Node),
            Level::ControlPlane => (Mechanism::Exclusive, Scope::Cluster),
        }
    }
}

/// What a plan may do with a pair that a row covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Never place them so: the row's finding is one a plan must not cause.
    Never,
    /// Place them so only where the policy accepts the row's rule for the pair today.
    WhenAccepted,
    /// A plan may place them so; the finding (informational, or about one cluster, which every plan
    /// shares) stays.
    Allowed,
}

/// One row of the admission table.
#[derive(Debug, Clone, Copy)]
pub struct Admission {
    /// The code of the rule that reports the pairs this row covers.
    pub rule: &'static str,
    /// The sites it covers: a level, and for device sites, which mechanisms.
    pub at: At,
    /// The trust between the two tenants.
    pub trusts: &'static [Trust],
    /// Only pairs in which a tenant was promised isolation.
    pub promised: bool,
    pub plan: Plan,
}

/// The sites a row covers.
#[derive(Debug, Clone, Copy)]
pub enum At {
    /// Devices shared under a mechanism the predicate holds for.
    Devices(fn(Mechanism) -> bool),
    MigGpu,
    Node,
    ControlPlane,
}

impl At {
    pub fn covers(self, level: Level) -> bool {
        match (self, level) {
            (At::Devices(f), Level::Device(m)) => f(m),
            (At::MigGpu, Level::MigGpu) | (At::Node, Level::Node) => true,
            (At::ControlPlane, Level::ControlPlane) => true,
            _ => false,
        }
    }
}

/// Trust below `full`: what separate memory and fault domains are owed to.
pub const BELOW_FULL: &[Trust] = &[Trust::None, Trust::Limited];
/// Trust `none` only.
pub const NONE: &[Trust] = &[Trust::None];
/// Trust `full` only.
pub const FULL: &[Trust] = &[Trust::Full];
/// Any trust.
pub const ANY: &[Trust] = &[Trust::None, Trust::Limited, Trust::Full];

fn time_sliced(m: Mechanism) -> bool {
    m == Mechanism::TimeSlicing
}
/// An MPS server shared as such (a fraction on one is the fraction's row).
fn mps_server(m: Mechanism) -> bool {
    m.is_mps() && !m.is_fraction()
}
fn mig_time_sliced(m: Mechanism) -> bool {
    m == Mechanism::MigTimeSlicing
}

/// The table. A pair sharing at a level is admitted when no row covers it, or every row that covers
/// it allows it.
pub const ADMISSION: &[Admission] = &[
    Admission {
        rule: "GT101",
        at: At::Devices(time_sliced),
        trusts: BELOW_FULL,
        promised: false,
        plan: Plan::Never,
    },
    Admission {
        rule: "GT102",
        at: At::Devices(mps_server),
        trusts: BELOW_FULL,
        promised: false,
        plan: Plan::Never,
    },
    Admission {
        rule: "GT103",
        at: At::Devices(mig_time_sliced),
        trusts: BELOW_FULL,
        promised: false,
        plan: Plan::Never,
    },
    Admission {
        rule: "GT104",
        at: At::MigGpu,
        trusts: NONE,
        promised: false,
        plan: Plan::Never,
    },
    Admission {
        rule: "GT105",
        at: At::Devices(Mechanism::is_fraction),
        trusts: BELOW_FULL,
        promised: false,
        plan: Plan::Never,
    },
    Admission {
        rule: "GT112",
        at: At::Devices(Mechanism::is_mps),
        trusts: FULL,
        promised: false,
        plan: Plan::Allowed,
    },
    Admission {
        rule: "GT207",
        at: At::Node,
        trusts: NONE,
        promised: false,
        plan: Plan::WhenAccepted,
    },
    Admission {
        rule: "GT401",
        at: At::ControlPlane,
        trusts: NONE,
        promised: false,
        plan: Plan::Allowed,
    },
    Admission {
        rule: "GT501",
        at: At::Devices(Mechanism::shares_device),
        trusts: ANY,
        promised: true,
        plan: Plan::Never,
    },
    Admission {
        rule: "GT501",
        at: At::Node,
        trusts: NONE,
        promised: true,
        plan: Plan::WhenAccepted,
    },
];

impl Admission {
    /// The rows of one rule.
    pub fn of_rule(rule: &str) -> impl Iterator<Item = &'static Admission> + '_ {
        ADMISSION.iter().filter(move |r| r.rule == rule)
    }

    /// Whether the row covers a pair of `trust` at `level` (`promised`: either tenant was promised
    /// isolation).
    pub fn covers(&self, level: Level, trust: Trust, promised: bool) -> bool {
        self.at.covers(level) && self.trusts.contains(&trust) && (promised || !self.promised)
    }

    /// Whether a plan may place a pair of `trust` so that they share at `level`: every row covering
    /// them allows it, or accepts it where `accepted(rule)` says the policy accepts that rule for
    /// the pair.
    pub fn admits(
        level: Level,
        trust: Trust,
        promised: bool,
        accepted: impl Fn(&str) -> bool,
    ) -> bool {
        ADMISSION
            .iter()
            .filter(|r| r.covers(level, trust, promised))
            .all(|r| match r.plan {
                Plan::Never => false,
                Plan::WhenAccepted => accepted(r.rule),
                Plan::Allowed => true,
            })
    }

    /// Whether a plan may place a pair on one shared device (a time-sliced or MPS GPU or MIG
    /// instance, whichever mechanism shares it), with no acceptance in force.
    pub fn admits_device(trust: Trust, promised: bool) -> bool {
        Mechanism::ALL
            .iter()
            .filter(|m| m.shares_device())
            .all(|m| Admission::admits(Level::Device(*m), trust, promised, |_| false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_device_below_full_trust_is_never_admitted_under_any_mechanism() {
        for m in Mechanism::ALL.into_iter().filter(|m| m.shares_device()) {
            for t in BELOW_FULL {
                assert!(
                    ADMISSION
                        .iter()
                        .any(|r| r.covers(Level::Device(m), *t, false) && r.plan == Plan::Never),
                    "{m} {t:?}"
                );
            }
            assert!(
                Admission::admits(Level::Device(m), Trust::Full, false, |_| false),
                "{m}"
            );
            assert!(
                !Admission::admits(Level::Device(m), Trust::Full, true, |_| true),
                "{m}"
            );
        }
    }

    #[test]
    fn a_node_of_distrusting_tenants_needs_its_acceptances() {
        assert!(!Admission::admits(Level::Node, Trust::None, false, |_| {
            false
        }));
        assert!(Admission::admits(Level::Node, Trust::None, false, |r| r == "GT207"));
        assert!(!Admission::admits(Level::Node, Trust::None, true, |r| r == "GT207"));
        assert!(Admission::admits(Level::Node, Trust::None, true, |_| true));
        assert!(Admission::admits(Level::Node, Trust::Limited, true, |_| {
            false
        }));
        assert!(!Admission::admits(
            Level::MigGpu,
            Trust::None,
            false,
            |_| true
        ));
        assert!(Admission::admits(
            Level::MigGpu,
            Trust::Limited,
            false,
            |_| false
        ));
    }
}
