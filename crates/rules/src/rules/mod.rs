//! Every rule, one file each, grouped by layer. A rule's doc comment is its documentation.

mod common;
mod confidentiality;
mod contract;
mod control_plane;
mod device;
mod host;
mod input;

use crate::registry::RuleMeta;

/// The registry, in code order.
pub(crate) static ALL: &[RuleMeta] = &[
    input::gt001_unknown_gpu_model::UnknownGpuModel::META,
    input::gt002_missing_sharing_config::MissingSharingConfig::META,
    input::gt003_expired_acceptance::ExpiredAcceptance::META,
    input::gt004_acceptance_without_reason::AcceptanceWithoutReason::META,
    device::gt101_untrusted_share_time_sliced_gpu::UntrustedShareTimeSlicedGpu::META,
    device::gt102_untrusted_share_mps::UntrustedShareMps::META,
    device::gt103_untrusted_share_mig_instance::UntrustedShareMigInstance::META,
    device::gt104_distrusting_share_mig_gpu::DistrustingShareMigGpu::META,
    device::gt105_fraction_is_accounting::FractionIsAccounting::META,
    device::gt106_training_on_shared_gpu::TrainingOnSharedGpu::META,
    device::gt107_greedy_reservation_on_shared_gpu::GreedyReservationOnSharedGpu::META,
    device::gt108_invalid_mig_geometry::InvalidMigGeometry::META,
    device::gt109_slice_below_peak::SliceBelowPeak::META,
    device::gt110_wide_blast_radius::WideBlastRadius::META,
    device::gt111_latency_critical_on_shared_compute::LatencyCriticalOnSharedCompute::META,
    device::gt112_mps_client_fault_domain::MpsClientFaultDomain::META,
    host::gt201_vulnerable_container_toolkit::VulnerableContainerToolkit::META,
    host::gt202_privileged_tenant_pod_on_gpu_node::PrivilegedTenantPodOnGpuNode::META,
    host::gt203_visible_devices_without_request::VisibleDevicesWithoutRequest::META,
    host::gt204_host_namespaces_on_gpu_node::HostNamespacesOnGpuNode::META,
    host::gt205_driver_outside_patch_window::DriverOutsidePatchWindow::META,
    host::gt206_tenant_namespace_without_pod_security::TenantNamespaceWithoutPodSecurity::META,
    host::gt207_distrusting_share_node::DistrustingShareNode::META,
    host::gt208_unknown_host_versions::UnknownHostVersions::META,
    confidentiality::gt301_confidential_tenant_without_cc::ConfidentialTenantWithoutCc::META,
    confidentiality::gt302_cc_with_partial_allocation::CcWithPartialAllocation::META,
    confidentiality::gt303_confidential_tenant_without_attestation::ConfidentialTenantWithoutAttestation::META,
    control_plane::gt401_distrusting_share_api_server::DistrustingShareApiServer::META,
    control_plane::gt402_tenant_can_repartition_gpus::TenantCanRepartitionGpus::META,
    control_plane::gt403_tenant_can_write_cluster_scope::TenantCanWriteClusterScope::META,
    contract::gt501_isolation_promised_not_enforced::IsolationPromisedNotEnforced::META,
    contract::gt502_shared_not_isolated::SharedNotIsolated::META,
];
