//! Clusters as each installer or managed platform leaves them, built from public manifests (see the
//! header of each file under `tests/fixtures/platforms/`), read by the real ingest and audited: the
//! findings the rule catalogue gives, and none of the judgement errors these inputs used to cause.

use gpu_trust_ingest::ingest_text;
use gpu_trust_model::fleet::{
    ConfigSource, Fleet, GpuNode, Ingested, MigStrategy, NodeFact, Platform, SharingStrategy,
};
use gpu_trust_model::report::{AuditReport, Finding};
use gpu_trust_policy::Date;
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use std::collections::BTreeMap;
use std::path::Path;

fn load(name: &str) -> (Ingested, AuditReport) {
    load_with(name, gpu_trust_policy::Policy::default())
}

/// `load` under `policy`, with the GPU layout the HTML report draws.
fn load_with(name: &str, policy: gpu_trust_policy::Policy) -> (Ingested, AuditReport) {
    let file = format!("tests/fixtures/platforms/{name}");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let ingested = ingest_text(&text, &file);
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{file}: {errors:?}");
    let tenancy = policy.resolve(&ingested.fleet.namespaces);
    let mut options = AuditOptions::new(Date::new(2026, 6, 1).unwrap());
    options.layout = true;
    let report = audit(&AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    });
    (ingested, report)
}

/// Every platform gpu-trust reads (the model's one table, `Platform::ALL`) has a fixture here in
/// which ingest finds a node of that platform, and a row of README.md's "Platforms read" table that
/// names its spelling: a new platform fails here until it has both.
#[test]
fn every_platform_has_a_fixture_and_a_row_in_the_readme() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/platforms");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/platforms")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    files.sort();
    let mut found: BTreeMap<Platform, String> = BTreeMap::new();
    for name in &files {
        let (ing, _) = load(name);
        for node in &ing.fleet.nodes {
            for p in node.gpu.iter().flat_map(|g| &g.platforms) {
                found.entry(*p).or_insert_with(|| name.clone());
            }
        }
    }
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Platforms read"))
        .expect("README.md has a section \"Platforms read\"");
    let first_cells: Vec<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" |").next())
        .collect();
    let mut missing = Vec::new();
    for p in Platform::ALL {
        let name = p.as_str();
        if !found.contains_key(p) {
            missing.push(format!(
                "{name}: no fixture under tests/fixtures/platforms/ has a GPU node ingest reads as {name}"
            ));
        }
        if !first_cells.iter().any(|c| c.contains(&format!("`{name}`"))) {
            missing.push(format!(
                "{name}: no row of README.md's \"Platforms read\" table names `{name}` in its first cell"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

fn gpu<'f>(fleet: &'f Fleet, node: &str) -> &'f GpuNode {
    let id = fleet.node_by_name(node).expect("the node is in the fleet");
    fleet.nodes[id].gpu.as_ref().expect("a GPU node")
}

/// The node's GPUs are time-sliced `replicas` ways by the config under `key` of the ConfigMap
/// `namespace`/`name`.
fn assert_time_sliced_by(node: &GpuNode, replicas: u32, [namespace, name, key]: [&str; 3]) {
    assert_eq!(node.sharing.strategy, SharingStrategy::TimeSlicing);
    assert_eq!(node.sharing.replicas_for("nvidia.com/gpu"), replicas);
    assert_eq!(
        node.sharing.source,
        ConfigSource::ConfigMap {
            namespace: namespace.into(),
            name: name.into(),
            key: key.into(),
            config: None,
        }
    );
}

fn findings<'r>(r: &'r AuditReport, code: &str) -> Vec<&'r Finding> {
    r.findings.iter().filter(|f| f.rule == code).collect()
}

fn on_node<'r>(r: &'r AuditReport, code: &str, node: &str) -> Vec<&'r Finding> {
    findings(r, code)
        .into_iter()
        .filter(|f| f.nodes.iter().any(|n| n == node))
        .collect()
}

/// The operator's stock mig-parted ConfigMap has `all-enabled` with `mig-devices: {}`; mig-parted
/// accepts it, so every node that selects one of its layouts keeps its MIG geometry.
#[test]
fn the_operator_stock_mig_config_is_read_whole() {
    let (ing, report) = load("gpu-operator-stock-mig.yaml");
    assert!(
        findings(&report, "GT002").is_empty(),
        "{:#?}",
        findings(&report, "GT002")
    );
    let fleet = &ing.fleet;
    let h100 = gpu(fleet, "h100-balanced");
    assert_eq!(h100.gpus[0].mig.len(), 4, "all-balanced on an H100");
    assert!(matches!(
        h100.mig_source,
        Some(ConfigSource::ConfigMap { .. })
    ));
    assert_eq!(gpu(fleet, "a100-sliced").gpus[0].mig.len(), 7);
    let mig_mode = gpu(fleet, "a100-mig-mode");
    assert!(mig_mode.gpus[0].mig_enabled && mig_mode.gpus[0].mig.is_empty());
    assert!(!mig_mode.advertises("nvidia.com/gpu"));
    assert!(h100.platforms.contains(&Platform::GpuOperator));
}

/// GT110 counts only replicas of resources a node advertises: `nvidia.com/gpu` on GPUs the mixed
/// strategy turned into MIG instances, or a MIG profile of another layout, share nothing.
#[test]
fn wide_blast_radius_counts_only_advertised_resources() {
    let (_, report) = load("gpu-operator-stock-mig.yaml");
    let gt110 = findings(&report, "GT110");
    assert_eq!(gt110.len(), 1, "{gt110:#?}");
    assert_eq!(gt110[0].nodes, ["a100-whole"]);
    assert!(
        gt110[0].message.contains("8 replicas of nvidia.com/gpu"),
        "{}",
        gt110[0].message
    );
}

/// GPU Feature Discovery labels MIG-enabled GPUs without sharing (`nvidia.com/gpu.replicas=0`): on a
/// mixed-strategy node that is no evidence against the config in force.
#[test]
fn mixed_mig_labels_do_not_contradict_the_config() {
    let (ing, _) = load("gpu-operator-stock-mig.yaml");
    let spurious: Vec<String> = ing
        .diagnostics
        .iter()
        .filter(|d| d.code == gpu_trust_model::Code::LabelsDisagree)
        .map(|d| d.to_string())
        .collect();
    assert!(spurious.is_empty(), "{spurious:#?}");
}

/// A device plugin installed by its Helm chart: its config is found through its DaemonSet and
/// config-manager picks it by the node label, else the config named `default`.
#[test]
fn helm_installed_device_plugin_config_is_resolved() {
    let (ing, report) = load("helm-device-plugin.yaml");
    assert!(
        findings(&report, "GT002").is_empty(),
        "{:#?}",
        findings(&report, "GT002")
    );
    let shared = gpu(&ing.fleet, "l4-shared");
    assert_time_sliced_by(
        shared,
        10,
        [
            "nvidia-device-plugin",
            "nvdp-nvidia-device-plugin-configs",
            "ts-10",
        ],
    );
    assert!(shared.platforms.contains(&Platform::DevicePlugin));
    let whole = gpu(&ing.fleet, "l4-whole");
    assert_eq!(whole.sharing.strategy, SharingStrategy::None);
    assert!(
        matches!(&whole.sharing.source, ConfigSource::ConfigMap { key, .. } if key == "default")
    );
    let gt101 = on_node(&report, "GT101", "l4-shared");
    assert!(!gt101.is_empty(), "two teams on one time-sliced L4");
    assert!(
        !on_node(&report, "GT110", "l4-shared").is_empty(),
        "10 replicas > 4"
    );
}

/// GKE time-sharing: one L4 shared four ways by GKE's plugin, known from GKE's labels alone.
#[test]
fn gke_time_sharing_is_time_slicing_of_a_known_gpu() {
    let (ing, report) = load("gke.yaml");
    let l4 = gpu(&ing.fleet, "gke-l4-timeshared");
    assert_eq!(l4.model.as_deref(), Some("L4"));
    assert_eq!(l4.count, 1);
    assert_eq!(l4.sharing.strategy, SharingStrategy::TimeSlicing);
    assert_eq!(l4.sharing.replicas_for("nvidia.com/gpu"), 4);
    assert!(l4.platforms.contains(&Platform::Gke));
    // GKE hides the driver version: recorded, never guessed.
    assert!(l4.driver_version.is_none());
    assert!(l4
        .unknown
        .iter()
        .any(|u| u.fact == NodeFact::DriverVersion && u.reason.contains("GKE")));
    let gt101 = on_node(&report, "GT101", "gke-l4-timeshared");
    assert_eq!(gt101.len(), 1, "{gt101:#?}");
    assert_eq!(gt101[0].tenants, ["team-a", "team-b"]);
    assert!(
        !on_node(&report, "GT107", "gke-l4-timeshared").is_empty(),
        "TGI reserves the whole shared GPU"
    );
    assert!(
        findings(&report, "GT001").is_empty(),
        "{:#?}",
        findings(&report, "GT001")
    );
    assert!(findings(&report, "GT002").is_empty());
}

/// GKE MIG partitions: every A100 cut into seven 1g.5gb instances advertised as `nvidia.com/gpu`.
#[test]
fn gke_partitions_are_mig_instances() {
    let (ing, report) = load("gke.yaml");
    let a100 = gpu(&ing.fleet, "gke-a100-partitioned");
    assert_eq!(a100.model.as_deref(), Some("A100-SXM4-40GB"));
    assert_eq!(a100.count, 1);
    assert_eq!(a100.mig_strategy, MigStrategy::Single);
    assert_eq!(a100.gpus[0].mig.len(), 7);
    assert!(on_node(&report, "GT101", "gke-a100-partitioned").is_empty());
    let gt104 = on_node(&report, "GT104", "gke-a100-partitioned");
    assert_eq!(gt104.len(), 1, "separate instances of one GPU: {gt104:#?}");
}

/// KAI's MPS sharing: fraction pods that mount the MPS pipe directory are clients of one MPS server,
/// not time-sliced; GT105 names the MPS the fraction inherits, and GT102 does not repeat it.
#[test]
fn kai_fractions_on_mps_inherit_mps() {
    let (ing, report) = load("kai-mps.yaml");
    let node = gpu(&ing.fleet, "h100-kai");
    for w in &ing.fleet.workloads {
        assert_eq!(
            gpu_trust_model::isolation::Mechanism::of_workload(w, node),
            Some(gpu_trust_model::isolation::Mechanism::KaiMps),
            "{}",
            w.object
        );
    }
    let gt105 = findings(&report, "GT105");
    assert_eq!(gt105.len(), 1, "{gt105:#?}");
    assert!(
        gt105[0].message.contains("inherits MPS"),
        "{}",
        gt105[0].message
    );
    assert!(findings(&report, "GT102").is_empty());
}

/// AKS labels only the accelerator vendor and the VM size: the size names the GPU model and count,
/// and a size with a fraction of one GPU leaves the model unknown with the reason.
#[test]
fn aks_vm_size_names_the_gpus() {
    let (ing, report) = load("aks.yaml");
    let a100 = gpu(&ing.fleet, "aks-gpu-12345678-vmss000000");
    assert_eq!(a100.model.as_deref(), Some("A100-PCIE-80GB"));
    assert_eq!(a100.count, 2);
    assert!(a100.platforms.contains(&Platform::Aks));
    assert!(a100
        .unknown
        .iter()
        .any(|u| u.fact == NodeFact::DriverVersion && u.reason.contains("AKS")));
    // One whole GPU each, no sharing configured: nothing shared on the device, the host is.
    assert!(on_node(&report, "GT101", "aks-gpu-12345678-vmss000000").is_empty());
    assert_eq!(
        on_node(&report, "GT207", "aks-gpu-12345678-vmss000000").len(),
        1
    );
    assert!(on_node(&report, "GT001", "aks-gpu-12345678-vmss000000").is_empty());
    let gt001 = on_node(&report, "GT001", "aks-nva10-87654321-vmss000000");
    assert_eq!(gt001.len(), 1, "{gt001:#?}");
    assert!(
        gt001[0].message.contains("fraction of one GPU"),
        "{}",
        gt001[0].message
    );
}

/// Karpenter's AWS provider names the GPU of the instance type: `a10g` with 22888 MiB is the
/// catalogue's A10G, `l40s` its L40S; a g6f size's eighth of an L4 is no whole GPU, and the
/// finding says so rather than that the catalogue lacks the L4. EKS Auto Mode's `a10g` with the
/// 24576 MiB EC2 once reported is the same A10G, never an unknown GPU.
#[test]
fn karpenter_instance_gpus_resolve_to_catalogue_models() {
    let (ing, report) = load("eks-karpenter.yaml");
    let a10g = gpu(&ing.fleet, "ip-10-0-12-34.ec2.internal");
    assert_eq!(a10g.model.as_deref(), Some("A10G"));
    assert!(a10g.platforms.contains(&Platform::Eks));
    assert_eq!(
        gpu(&ing.fleet, "ip-10-0-56-78.ec2.internal")
            .model
            .as_deref(),
        Some("L40S")
    );
    assert!(on_node(&report, "GT001", "ip-10-0-12-34.ec2.internal").is_empty());
    let auto = gpu(&ing.fleet, "i-0a1b2c3d4e5f60718");
    assert_eq!(auto.model.as_deref(), Some("A10G"));
    assert_eq!(auto.memory_mib, Some(24576));
    assert!(on_node(&report, "GT001", "i-0a1b2c3d4e5f60718").is_empty());
    assert!(on_node(&report, "GT001", "ip-10-0-56-78.ec2.internal").is_empty());
    let fraction = on_node(&report, "GT001", "ip-10-0-90-12.ec2.internal");
    assert_eq!(fraction.len(), 1, "{fraction:#?}");
    assert!(
        fraction[0].message.contains("fraction of one `l4` GPU")
            && !fraction[0].message.contains("does not know"),
        "{}",
        fraction[0].message
    );
}

/// GPUs the Kata sandbox device plugin passes through (`nvidia.com/pgpu`) are GPU workloads: the
/// confidential tenant's Kata pod is judged on the GPU's CC mode, the node counts its passed-through
/// GPUs, the container device plugin's time-slicing does not reach them, and the layout the HTML
/// draws puts both tenants on GPUs of their own.
#[test]
fn gpus_passed_through_to_kata_vms_are_gpu_workloads() {
    let policy = gpu_trust_policy::parse(
        "apiVersion: gpu-trust/v1\nkind: TenancyPolicy\ntenants:\n  - {name: acme, namespaces: [cust-acme], confidential: true}\n  - {name: team-b, namespaces: [team-b]}\n",
        "policy.yaml",
    )
    .expect("policy");
    let (ing, report) = load_with("gpu-operator-kata.yaml", policy);
    let kata = gpu(&ing.fleet, "gpu-kata");
    assert_eq!(kata.count, 8);
    assert_eq!(kata.sharing.strategy, SharingStrategy::None);
    assert_eq!(
        gpu(&ing.fleet, "gpu-containers").sharing.strategy,
        SharingStrategy::TimeSlicing
    );
    let pods: Vec<_> = ing
        .fleet
        .workloads
        .iter()
        .filter(|w| w.object.name == "cuda-vectoradd-kata")
        .collect();
    assert_eq!(pods.len(), 2);
    assert!(pods.iter().all(|w| w.requests_gpu()));
    let gt301 = on_node(&report, "GT301", "gpu-kata");
    assert_eq!(gt301.len(), 1, "{gt301:#?}");
    assert!(gt301[0].message.contains("acme"), "{}", gt301[0].message);
    // Whole GPUs each: nothing shared on the device between the two tenants.
    for code in ["GT101", "GT102", "GT103"] {
        assert!(on_node(&report, code, "gpu-kata").is_empty(), "{code}");
    }
    let layout = report
        .layout
        .iter()
        .find(|n| n.name == "gpu-kata")
        .expect("the passthrough node is drawn");
    assert_eq!(layout.gpus.len(), 8);
    let occupied: Vec<&str> = layout
        .gpus
        .iter()
        .flat_map(|g| g.tenants.iter().map(|t| t.tenant.as_str()))
        .collect();
    assert!(
        occupied.contains(&"acme") && occupied.contains(&"team-b"),
        "{occupied:?}"
    );
}

/// OpenShift: OLM installs the GPU Operator into `nvidia-gpu-operator`, and nothing in the dump says
/// so; the OpenShift node label makes ingest look for the ClusterPolicy's device plugin ConfigMap
/// there, so the time-slicing config is read, not reported missing.
#[test]
fn openshift_reads_the_operator_config_from_olms_namespace() {
    let (ing, report) = load("openshift.yaml");
    let node = "ip-10-0-141-7.us-east-2.compute.internal";
    let a10g = gpu(&ing.fleet, node);
    assert!(a10g.platforms.contains(&Platform::OpenShift));
    assert!(a10g.platforms.contains(&Platform::GpuOperator));
    assert_eq!(a10g.model.as_deref(), Some("A10G"));
    assert_time_sliced_by(
        a10g,
        4,
        ["nvidia-gpu-operator", "time-slicing-config", "any"],
    );
    assert!(
        findings(&report, "GT002").is_empty(),
        "{:#?}",
        findings(&report, "GT002")
    );
    let gt101 = on_node(&report, "GT101", node);
    assert_eq!(gt101.len(), 1, "{gt101:#?}");
    assert_eq!(gt101[0].tenants, ["team-a", "team-b"]);
}

/// A node without GPU Feature Discovery labels whose GPUs NVIDIA's DRA driver publishes is a GPU
/// node: its ResourceSlice gives the model (its `productName`), the count and each GPU's UUID.
#[test]
fn the_dra_drivers_slices_describe_a_node_without_labels() {
    let (ing, _) = load("dra-driver.yaml");
    let node = gpu(&ing.fleet, "dra-worker-1");
    assert_eq!(node.model.as_deref(), Some("A100-SXM4-40GB"));
    assert_eq!(node.count, 2);
    let uuids: Vec<Option<&str>> = node.gpus.iter().map(|g| g.uuid.as_deref()).collect();
    assert_eq!(
        uuids,
        [
            Some("GPU-a3f0c1d2-5b6e-4f70-8a91-b2c3d4e5f607"),
            Some("GPU-0e1f2a3b-4c5d-4e6f-9a0b-1c2d3e4f5a6b")
        ]
    );
    assert_eq!(node.platforms, [Platform::DraDriver]);
}
