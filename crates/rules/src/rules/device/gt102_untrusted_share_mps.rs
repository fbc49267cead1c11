use super::super::common::{self, PairRule, Tally, Wording};
use super::super::wording;
use crate::context::Context;
use crate::registry::{declare_rule, SeverityRule};
use crate::sink::Sink;
use crate::text;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Layer, Severity};

declare_rule! {
    /// ## What it detects
    ///
    /// Two tenants whose trust is below `full` are clients of one MPS server: the device plugin's MPS
    /// sharing on a whole GPU, MPS inside one MIG instance, or HAMi's MPS mode.
    ///
    /// ## Why it matters
    ///
    /// MPS runs the clients' kernels concurrently in one server. On Volta and later each client has its
    /// own address space, but a fatal fault in one client puts the server into FAULT and every client of
    /// it fails, without being told who caused it; the pinned memory limit and the active thread
    /// percentage are limits a daemon sets, not partitions, and memory bandwidth and L2 are contended.
    /// MPS inside a MIG instance is reported here too: its clients share the instance's server. A
    /// client's user id separates nothing either: the DRA driver's multi-user MPS (v0.5.0, the control
    /// daemon run with `-M`) lets containers of different UIDs share one claim's server.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// sharing:
    ///   mps:
    ///     resources: [{name: nvidia.com/gpu, replicas: 4}]
    /// # tenants acme and globex (trust limited) both request nvidia.com/gpu on that node
    /// ```
    ///
    /// ## Remediation
    ///
    /// Give tenants below full trust separate MPS servers at least by separate GPUs (trust `none`: separate
    /// node pools) or separate MIG instances (trust `limited`): MIG gives each its own memory, SMs and
    /// fault domain.
    ///
    /// ## References
    ///
    /// - NVIDIA MPS documentation, sections 2.3.3-2.3.7: Volta+ error containment, the server's FAULT
    ///   state, `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT` and `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`.
    /// - kubernetes-sigs/dra-driver-nvidia-gpu issue #1158 and pull request #1153 (in v0.5.0): MPS
    ///   claims were limited to consumers of one UID; the multi-user option starts the control daemon
    ///   with `-M` for consumers of any UID.
    /// - NVIDIA k8s-device-plugin, MPS support: pinned memory limit total/replicas, thread percentage
    ///   100/replicas.
    /// - gpu-trust isolation model (`gpu-trust mechanisms`), rows mps and mig-mps.
    pub struct UntrustedShareMps {
        code: "GT102",
        name: "untrusted-share-mps",
        layer: Layer::Device,
        severity: SeverityRule::ByTrust { none: Severity::Critical, limited: Severity::High },
        summary: "two tenants with trust below full are clients of one MPS server (one GPU or one MIG instance)",
    }
}

// Its sites and trusts: its rows of the admission table (`gpu_trust_model::isolation::admission`;
// a fraction on an MPS server is GT105's: it names the MPS it inherits).
fn check(ctx: &Context<'_>, sink: &mut Sink<'_>) {
    common::declared(ctx, sink, PairRule::BY_LEVEL, |level, t| Wording {
        message: message(ctx, level.reach().0, t),
        remediation: super::gt101_untrusted_share_time_sliced_gpu::remediation(ctx, t),
    });
}

fn message(ctx: &Context<'_>, m: Mechanism, tally: &Tally) -> String {
    let (one, many) = if m.is_mig() {
        (
            "an MPS server inside one MIG instance",
            "MPS servers inside MIG instances",
        )
    } else {
        ("an MPS server on one GPU", "MPS servers on GPUs")
    };
    format!(
        "{}. {}",
        wording::tally_opening(ctx, tally, one, many),
        text::enforcement(m, &text::INCIDENT_PROPERTIES)
    )
}
