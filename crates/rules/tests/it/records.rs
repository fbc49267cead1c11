//! What schedulers record about the devices they gave pods, and GPUs asked for in a way no mechanism
//! maps, read by the real ingest from public objects (`tests/fixtures/records/` and the GT104/GT105
//! cases, each citing its source): a GPU no mechanism maps is a named coverage gap and never
//! "exclusive" (inventory, GPU layout, findings); scheduler records show per tenant.

use gpu_trust_ingest::ingest_text;
use gpu_trust_ingest::inventory::{inventory, Inventory};
use gpu_trust_model::fleet::{Ingested, UnresolvedKind, WorkloadOverrides};
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::report::coverage::GapReason;
use gpu_trust_model::report::layout::Sharing;
use gpu_trust_model::report::AuditReport;
use gpu_trust_model::Layer;
use gpu_trust_policy::{Date, Policy, Tenancy};
use gpu_trust_rules::coverage::{coverage, CoverageInput};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use std::path::Path;

struct Read {
    ingested: Ingested,
    tenancy: Tenancy,
    report: AuditReport,
    inventory: Inventory,
}

/// A fixture read and audited with the GPU layout, every namespace its own tenant, with its inventory.
fn read(file: &str) -> Read {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let ingested = ingest_text(&text, file);
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{file}: {errors:?}");
    let tenancy = Policy::default().resolve(&ingested.fleet.namespaces);
    let mut options = AuditOptions::new(Date::new(2026, 12, 1).unwrap());
    options.layout = true;
    let report = audit(&AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    });
    let inventory = inventory(
        &ingested.fleet,
        &ingested.diagnostics,
        &|ns| tenancy.tenant_of(ns).map(|t| tenancy.name(t).to_string()),
        &|_| WorkloadOverrides::default(),
        tenancy.tenants().len(),
    );
    Read {
        ingested,
        tenancy,
        report,
        inventory,
    }
}

/// A scheduler gpu-trust does not know shares a GPU between two tenants: Alibaba's GPU sharing (a
/// resource no row maps), and MIG instances of one A100 whose records no recorder gpu-trust knows
/// wrote. The node is a blocking device-layer gap naming it; its GPU is never called exclusive.
#[test]
fn a_gpu_no_mechanism_maps_is_a_named_gap_never_exclusive() {
    for (file, node) in [
        ("tests/fixtures/records/gpushare.yaml", "t4-share"),
        (
            "tests/fixtures/records/unknown-mig-scheduler.yaml",
            "a100-dyn",
        ),
    ] {
        let r = read(file);
        let fleet = &r.ingested.fleet;
        let unmapped: Vec<_> = fleet
            .unresolved
            .iter()
            .filter(|u| u.what == UnresolvedKind::UnmappedGpu)
            .collect();
        assert_eq!(unmapped.len(), 2, "{file}: {unmapped:#?}");
        for w in &fleet.workloads {
            assert!(!w.gpu.unmapped.is_empty(), "{file}: {}", w.object);
            for (_, n) in fleet.gpu_nodes() {
                assert_eq!(Mechanism::of_workload(w, n.gpu.as_ref().unwrap()), None);
            }
        }

        let c = coverage(fleet, &r.tenancy, CoverageInput::default());
        assert!(!c.complete, "{file}");
        let gap = c
            .layer(Layer::Device)
            .unwrap()
            .gaps
            .iter()
            .find(|g| g.reason == GapReason::UnmappedGpu)
            .unwrap_or_else(|| panic!("{file}: {c:#?}"));
        assert!(gap.blocking);
        assert_eq!(gap.nodes, [node]);
        assert_eq!(r.report.coverage, c);

        let layout = r.report.layout.iter().find(|n| n.name == node).unwrap();
        for g in &layout.gpus {
            assert_eq!(g.sharing, Sharing::Unknown, "{file}: GPU {}", g.index);
        }
        let view = r.inventory.nodes.iter().find(|n| n.name == node).unwrap();
        assert!(!view.devices.is_empty());
        for d in &view.devices {
            assert_eq!(d.mechanism, None, "{file}: {}", d.id);
            for o in &d.occupants {
                assert_eq!(o.mechanism, None, "{file}: {}", o.pod);
            }
        }
        for f in &r.report.findings {
            assert!(
                !f.message.to_lowercase().contains("exclusive"),
                "{file}: {}",
                f.message
            );
        }
    }
}

/// Known resources beside a device of another kind (an RDMA device), and HAMi's choice of a GPU by
/// UUID, are what gpu-trust maps: no gap, and the devices keep their mechanism.
#[test]
fn what_gpu_trust_maps_is_no_gap() {
    let r = read("tests/fixtures/records/known.yaml");
    let fleet = &r.ingested.fleet;
    assert!(
        !fleet
            .unresolved
            .iter()
            .any(|u| u.what == UnresolvedKind::UnmappedGpu),
        "{:#?}",
        fleet.unresolved
    );
    assert!(fleet.workloads.iter().all(|w| w.gpu.unmapped.is_empty()));
    let view = &r.inventory.nodes[0];
    assert!(view.devices.iter().all(|d| d.mechanism.is_some()));
    let c = coverage(fleet, &r.tenancy, CoverageInput::default());
    for layer in &c.layers {
        assert!(
            layer
                .gaps
                .iter()
                .all(|g| g.reason != GapReason::UnmappedGpu),
            "{c:#?}"
        );
    }
}

/// The devices Volcano recorded for each tenant's pod are shown with it, in the inventory and in the
/// GPU layout the HTML report draws.
#[test]
fn recorded_devices_are_shown_per_tenant() {
    let r = read("tests/fixtures/GT105/violating-volcano-recorded.yaml");
    let uuid = "GPU-5d1c7a3e-2f4b-4e8a-9c61-0b7d3e2a9f10 (Volcano vGPU)";
    let occupants: Vec<_> = r.inventory.nodes[0]
        .devices
        .iter()
        .flat_map(|d| &d.occupants)
        .collect();
    assert!(!occupants.is_empty());
    for o in occupants {
        assert_eq!(o.recorded, [uuid], "{}", o.pod);
    }
    let layout = &r.report.layout[0];
    let recorded: Vec<(&str, &[String])> = layout
        .gpus
        .iter()
        .flat_map(|g| &g.tenants)
        .map(|o| (o.tenant.as_str(), o.recorded.as_slice()))
        .collect();
    assert!(!recorded.is_empty());
    assert!(recorded.iter().all(|(_, r)| *r == [uuid]), "{recorded:?}");
}

/// KAI Scheduler v0.18: `sm-sharing` runs a fraction as a client of an MPS server, `time-slicing`
/// (the default) does not; NvFractions' memory request is the fraction's memory, its limit caps
/// nothing and is not read.
#[test]
fn kai_compute_modes_and_nvfractions() {
    let r = read("tests/fixtures/GT105/violating-kai-sm-sharing.yaml");
    let fleet = &r.ingested.fleet;
    let node = fleet.nodes[0].gpu.as_ref().unwrap();
    for w in &fleet.workloads {
        assert_eq!(Mechanism::of_workload(w, node), Some(Mechanism::KaiMps));
    }
    let r = read("tests/fixtures/GT105/violating-kai-nvfractions.yaml");
    let fleet = &r.ingested.fleet;
    let node = fleet.nodes[0].gpu.as_ref().unwrap();
    for w in &fleet.workloads {
        assert_eq!(
            Mechanism::of_workload(w, node),
            Some(Mechanism::KaiFraction)
        );
        let f = w.gpu.fraction.as_ref().unwrap();
        assert_eq!(f.memory_mib, Some(20 * 1024), "the request, not the limit");
    }
}

/// Volcano's dynamic MIG and KAI's fractions share GPUs the node's configuration hands out whole:
/// the inventory gives those GPUs their occupants' mechanism, and the layout their MIG instances or
/// fractions, never exclusive.
#[test]
fn gpus_a_scheduler_shares_are_never_exclusive() {
    for (file, mechanism) in [
        (
            "tests/fixtures/GT104/violating-volcano-dynamic-mig.yaml",
            Mechanism::MigInstance,
        ),
        (
            "tests/fixtures/GT105/violating-kai-group.yaml",
            Mechanism::KaiFraction,
        ),
    ] {
        let r = read(file);
        let occupied: Vec<_> = r.inventory.nodes[0]
            .devices
            .iter()
            .filter(|d| !d.occupants.is_empty())
            .collect();
        assert!(!occupied.is_empty(), "{file}");
        for d in occupied {
            assert_eq!(d.mechanism, Some(mechanism), "{file}: {}", d.id);
        }
        for g in r.report.layout[0]
            .gpus
            .iter()
            .filter(|g| !g.tenants.is_empty())
        {
            assert_eq!(g.mechanisms, [mechanism], "{file}: GPU {}", g.index);
        }
    }
}

/// GT105 judges a fraction by its scheduler's row alone: two tenants' pods with a fraction of each
/// row that names a fraction, on one GPU, are reported under that row's mechanism.
#[test]
fn every_fraction_row_is_reported_by_gt105() {
    use crate::common::{of_rule, run, two_tenants, FleetSpec, NodeSpec, W};
    let fractional = Mechanism::ALL
        .into_iter()
        .filter(|m| m.row().request.fraction.is_some());
    for m in fractional {
        let spec = FleetSpec::default()
            .node(NodeSpec::new("gpu-1", 1))
            .workload(W::pod("cust-acme", "a").on("gpu-1").fraction(m, 0.5))
            .workload(W::pod("cust-globex", "b").on("gpu-1").fraction(m, 0.5));
        let report = run(&spec, &two_tenants("none"));
        let found = of_rule(&report, "GT105");
        assert!(
            found.iter().any(|f| f.message.contains(m.title())),
            "{m}: {found:#?}"
        );
    }
}
