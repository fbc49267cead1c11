use super::super::common::{self, PairRule, Wording};
use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::Property;
use gpu_trust_model::{Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// Tenants with trust `full` that are clients of one MPS server.
    ///
    /// ## Why it matters
    ///
    /// Full trust allows sharing, so this is not a violation. It is a note: on Volta and later a fatal
    /// fault in one MPS client puts the server into FAULT; every client on that GPU gets the error,
    /// without knowing who caused it, and new clients are refused until the faulting ones exit. A
    /// misbehaving job of one team stops the other team's inference.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// trust:
    ///   relations:
    ///     - {tenants: [search, platform-ml], level: full}
    /// # both run on an MPS-shared node
    /// ```
    ///
    /// ## Remediation
    ///
    /// None required. If the shared fault domain is not wanted, give one tenant separate GPUs or MIG
    /// instances; watch for `CUDA_ERROR_MPS_SERVER_NOT_READY` in both tenants' logs.
    ///
    /// ## References
    ///
    /// - NVIDIA MPS documentation, sections 2.3.3-2.3.7: Volta+ error containment and the server's FAULT
    ///   state.
    pub struct MpsClientFaultDomain {
        code: "GT112",
        name: "mps-client-fault-domain",
        layer: Layer::Device,
        severity: SeverityRule::Fixed(Severity::Info),
        summary: "tenants with trust full share an MPS server: one client's fatal fault stops every client",
    }
}

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`).
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    common::declared(ctx, sink, PairRule::BY_LEVEL, |level, tally| {
        Wording {
        message: format!(
            "{}. Allowed by full trust, but {}",
            wording::tally_opening(ctx, tally, "an MPS server", "MPS servers"),
            text::enforcement(level.reach().0, &[Property::FaultDomain])
        ),
        remediation: match wording::two_names(ctx, tally) {
            Some((a, b)) => format!(
                "Nothing is required; to keep {a}'s faults from stopping {b}, give them separate GPUs or MIG instances"
            ),
            None => "Nothing is required; to keep one tenant's faults from stopping the others, give them separate GPUs or MIG instances".to_string(),
        },
    }
    });
}
