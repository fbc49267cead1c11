//! The admission table: whether two tenants may share a device, a GPU, a node or an API server, by
//! the sharing level, their trust and whether either was promised isolation (the policy's `contract:
//! isolation`). Each row names the rule that reports the pairs it covers; the rule's declaration
//! holds the severity. The audit's pairwise rules judge their sites by these rows, and the planner
//! shares a device, a GPU or a node only where every row that covers the pair allows it (or the
//! policy accepts the row's rule for the pair, where the row says so), so a plan that audits clean
//! holds by construction.
//!
//! Beside the pair rows, [`SEATS`] holds the rows about one workload: which workloads (by what they
//! are: training, latency-critical, of a confidential tenant) may not have which seat on a GPU, each
//! naming the rule that reports it. No plan may give a workload a seat its rows refuse.

use super::facts::{Enforcement, Property};
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

/// What one workload is, for the rows about one workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traits {
    /// A training workload (gangs of GPUs for hours).
    pub training: bool,
    /// Of a tenant, or a policy workload, marked `latency: critical`.
    pub latency_critical: bool,
    /// Of a tenant marked confidential.
    pub confidential: bool,
}

/// How one workload gets its GPU, as the rows about one workload judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seat {
    pub mechanism: Mechanism,
    /// A MIG instance smaller than the whole GPU.
    pub partial: bool,
    /// The GPU's confidential-computing mode is on.
    pub cc: bool,
}

impl Seat {
    /// A seat on a GPU whose CC mode is off.
    pub fn of(mechanism: Mechanism, partial: bool) -> Seat {
        Seat {
            mechanism,
            partial,
            cc: false,
        }
    }

    /// Shared with other workloads, or a MIG slice smaller than the GPU.
    fn shared_or_partial(self) -> bool {
        self.mechanism.shares_device() || (self.mechanism.is_mig() && self.partial)
    }
}

/// One row about one workload: the workloads it covers may not have the seats it refuses; the rule
/// reports those that do, and no plan gives them one.
#[derive(Debug, Clone, Copy)]
pub struct SeatRow {
    /// The code of the rule that reports the refused seats.
    pub rule: &'static str,
    /// The workloads the row covers.
    pub who: fn(Traits) -> bool,
    /// The seats it refuses them.
    pub refuses: fn(Seat) -> bool,
}

/// The rows about one workload.
pub const SEATS: &[SeatRow] = &[
    // Training holds memory and compute for hours and its collectives stall on one slow rank: whole,
    // dedicated GPUs.
    SeatRow {
        rule: "GT106",
        who: |t| t.training,
        refuses: Seat::shared_or_partial,
    },
    // A latency-critical workload needs compute no neighbour can take: a guaranteed quantum (the
    // isolation model's compute property, separate under a whole GPU and a MIG instance alone).
    SeatRow {
        rule: "GT111",
        who: |t| t.latency_critical,
        refuses: |s| s.mechanism.property(Property::Compute).enforcement != Enforcement::Separate,
    },
    // A confidential tenant's GPU memory and PCIe traffic are protected only with CC mode on.
    SeatRow {
        rule: "GT301",
        who: |t| t.confidential,
        refuses: |s| !s.cc,
    },
    // CC mode separates tenants only as whole GPUs in passthrough: no workload shares a GPU, or has a
    // MIG slice of one, whose CC mode is on.
    SeatRow {
        rule: "GT302",
        who: |_| true,
        refuses: |s| s.cc && (s.mechanism.shares_device() || s.mechanism.is_mig()),
    },
];

impl SeatRow {
    /// The row of a rule; `None` for a rule with no row about one workload.
    pub fn of_rule(rule: &str) -> Option<&'static SeatRow> {
        SEATS.iter().find(|r| r.rule == rule)
    }

    /// Whether the row refuses `seat` to a workload with `traits`.
    pub fn refuses_to(&self, traits: Traits, seat: Seat) -> bool {
        (self.who)(traits) && (self.refuses)(seat)
    }

    /// The rows that refuse `seat` to a workload with `traits`.
    pub fn refusing(traits: Traits, seat: Seat) -> impl Iterator<Item = &'static SeatRow> {
        SEATS.iter().filter(move |r| r.refuses_to(traits, seat))
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
    #[test]
    fn a_workload_with_no_traits_may_have_any_seat_off_cc() {
        for m in Mechanism::ALL {
            for partial in [false, true] {
                let seat = Seat::of(m, partial);
                assert_eq!(SeatRow::refusing(Traits::default(), seat).count(), 0, "{m}");
            }
        }
    }

    #[test]
    fn each_trait_keeps_a_whole_gpu_of_its_own() {
        let whole = Seat::of(Mechanism::Exclusive, false);
        let training = Traits {
            training: true,
            ..Traits::default()
        };
        let critical = Traits {
            latency_critical: true,
            ..Traits::default()
        };
        let confidential = Traits {
            confidential: true,
            ..Traits::default()
        };
        assert_eq!(SeatRow::refusing(training, whole).count(), 0);
        assert_eq!(SeatRow::refusing(critical, whole).count(), 0);
        let rules = |t, s| SeatRow::refusing(t, s).map(|r| r.rule).collect::<Vec<_>>();
        assert_eq!(rules(confidential, whole), ["GT301"]);
        assert!(rules(confidential, Seat { cc: true, ..whole }).is_empty());
        let sliced = Seat::of(Mechanism::TimeSlicing, false);
        assert_eq!(rules(training, sliced), ["GT106"]);
        assert_eq!(rules(critical, sliced), ["GT111"]);
        // A MIG instance of its own: compute is its own, but a slice is no GPU for training.
        let slice = Seat::of(Mechanism::MigInstance, true);
        assert_eq!(rules(critical, slice), Vec::<&str>::new());
        assert_eq!(rules(training, slice), ["GT106"]);
        assert!(rules(training, Seat::of(Mechanism::MigInstance, false)).is_empty());
        assert_eq!(
            rules(Traits::default(), Seat { cc: true, ..slice }),
            ["GT302"]
        );
    }
}
