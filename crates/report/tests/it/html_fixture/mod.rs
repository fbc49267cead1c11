//! GPU layouts for the sample report of `tests/common`: a time-sliced node shared by acme and globex,
//! and a MIG node whose GPUs show every kind of instance (placed, free, of unknown placement, shared by
//! time-slicing) and an empty MIG GPU.

#![allow(dead_code)]

use gpu_trust_model::fleet::SharingStrategy;
use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::report::layout::{
    AllocationLayout, GpuLayout, MigInstanceLayout, NodeLayout, Occupant, Sharing, TenantPresence,
};
use gpu_trust_model::Certainty;

pub fn occupant(
    tenant: &str,
    certainty: Certainty,
    mechanism: Mechanism,
    pods: &[&str],
) -> Occupant {
    Occupant {
        tenant: tenant.into(),
        certainty,
        mechanisms: vec![mechanism],
        workloads: pods.iter().map(|p| format!("Pod {p}")).collect(),
        workload_count: pods.len(),
        recorded: Vec::new(),
    }
}

pub fn instance(
    profile: &str,
    start: Option<u8>,
    size: u8,
    compute: u8,
    mib: u64,
    sharing: Sharing,
    tenants: Vec<Occupant>,
) -> MigInstanceLayout {
    MigInstanceLayout {
        profile: profile.into(),
        start,
        memory_slices: Some(size),
        compute_slices: Some(compute),
        memory_mib: Some(mib),
        sharing,
        tenants,
    }
}

fn presence(tenant: &str, certainty: Certainty) -> TenantPresence {
    TenantPresence {
        tenant: tenant.into(),
        certainty,
    }
}

pub fn sample_layout() -> Vec<NodeLayout> {
    let shared: Vec<GpuLayout> = (0..8)
        .map(|i| GpuLayout {
            index: i,
            uuid: Some(format!("GPU-a100-{i}")),
            sharing: Sharing::TimeSlicing { replicas: 4 },
            mechanisms: vec![Mechanism::TimeSlicing],
            tenants: vec![
                occupant(
                    "acme",
                    Certainty::Possible,
                    Mechanism::TimeSlicing,
                    &["cust-acme/infer-0"],
                ),
                occupant(
                    "globex",
                    Certainty::Possible,
                    Mechanism::TimeSlicing,
                    &["cust-globex/chat-7d9f"],
                ),
            ],
            instances: vec![],
        })
        .collect();
    let mig = Mechanism::MigInstance;
    let mut h100 = vec![
        GpuLayout {
            index: 0,
            uuid: Some("GPU-h100-0".into()),
            sharing: Sharing::Mig,
            mechanisms: vec![mig],
            tenants: vec![],
            instances: vec![
                instance(
                    "3g.40gb",
                    Some(0),
                    4,
                    3,
                    40448,
                    Sharing::Exclusive,
                    vec![occupant(
                        "acme",
                        Certainty::Observed,
                        mig,
                        &["cust-acme/embed-0"],
                    )],
                ),
                instance(
                    "2g.20gb",
                    Some(4),
                    2,
                    2,
                    20096,
                    Sharing::Exclusive,
                    vec![occupant(
                        "initech",
                        Certainty::Observed,
                        mig,
                        &["cust-initech/rerank-0"],
                    )],
                ),
                instance("1g.10gb", Some(6), 1, 1, 9984, Sharing::Exclusive, vec![]),
            ],
        },
        GpuLayout {
            index: 1,
            uuid: Some("GPU-h100-1".into()),
            sharing: Sharing::Mig,
            mechanisms: vec![Mechanism::MigTimeSlicing],
            tenants: vec![],
            instances: (0..7)
                .map(|s| {
                    instance(
                        "1g.10gb",
                        Some(s),
                        1,
                        1,
                        9984,
                        Sharing::TimeSlicing { replicas: 2 },
                        if s < 2 {
                            vec![
                                occupant(
                                    "acme",
                                    Certainty::Possible,
                                    Mechanism::MigTimeSlicing,
                                    &["cust-acme/small-0"],
                                ),
                                occupant(
                                    "initech",
                                    Certainty::Permitted,
                                    Mechanism::MigTimeSlicing,
                                    &["cust-initech/job"],
                                ),
                            ]
                        } else {
                            vec![]
                        },
                    )
                })
                .collect(),
        },
        GpuLayout {
            index: 2,
            uuid: None,
            sharing: Sharing::Mig,
            mechanisms: vec![mig],
            tenants: vec![],
            instances: vec![
                instance("4g.40gb", Some(0), 4, 4, 40448, Sharing::Exclusive, vec![]),
                instance(
                    "3g.40gb",
                    None,
                    4,
                    3,
                    40448,
                    Sharing::Exclusive,
                    vec![occupant(
                        "globex",
                        Certainty::Permitted,
                        mig,
                        &["cust-globex/batch"],
                    )],
                ),
            ],
        },
    ];
    for i in 3..8 {
        h100.push(GpuLayout {
            index: i,
            uuid: None,
            sharing: Sharing::Mig,
            mechanisms: vec![],
            tenants: vec![],
            instances: vec![instance(
                "7g.80gb",
                Some(0),
                8,
                7,
                81152,
                Sharing::Exclusive,
                vec![],
            )],
        });
    }
    vec![
        NodeLayout {
            name: "gpu-a100-2".into(),
            file: "examples/inference/cluster.yaml".into(),
            line: 12,
            product: Some("NVIDIA-A100-SXM4-80GB-SHARED".into()),
            model: Some("A100-SXM4-80GB".into()),
            model_name: Some("NVIDIA A100-SXM4-80GB".into()),
            memory_mib: Some(81920),
            memory_slices: Some(8),
            compute_slices: Some(7),
            sharing_strategy: SharingStrategy::TimeSlicing,
            hami: false,
            gpus: shared,
            tenants: vec![
                presence("acme", Certainty::Observed),
                presence("globex", Certainty::Observed),
            ],
            allocations: vec![],
        },
        NodeLayout {
            name: "gpu-h100-1".into(),
            file: "examples/inference/cluster.yaml".into(),
            line: 60,
            product: Some("NVIDIA-H100-80GB-HBM3".into()),
            model: Some("H100-SXM5-80GB".into()),
            model_name: Some("NVIDIA H100 80GB HBM3".into()),
            memory_mib: Some(81559),
            memory_slices: Some(8),
            compute_slices: Some(7),
            sharing_strategy: SharingStrategy::TimeSlicing,
            hami: false,
            gpus: h100,
            tenants: vec![
                presence("acme", Certainty::Observed),
                presence("globex", Certainty::Permitted),
                presence("initech", Certainty::Observed),
            ],
            // The MIG instance acme's pod got from NVIDIA's DRA driver, as its claim records it.
            allocations: vec![AllocationLayout {
                tenant: "acme".into(),
                device: "gpu.nvidia.com/gpu-h100-1/gpu-0-mig-3g40gb-9-0".into(),
                gpu: Some("GPU-1c7e3b52-8d4a-4f69-a2b1-5e0c9d8f7a63".into()),
                workload: "cust-acme/embed-0".into(),
                record: "ResourceClaim cust-acme/embed-0-mig-h2k7d".into(),
            }],
        },
    ]
}

/// MIG instances in a layout (one `mig-slice` element each on the page).
/// MIG instances drawn: those of the first GPU of each run of identical GPUs.
pub fn mig_instances(layout: &[NodeLayout]) -> usize {
    layout
        .iter()
        .flat_map(|n| gpu_trust_report::audit::html::gpu_runs(&n.gpus))
        .map(|run| run[0].instances.len())
        .sum()
}

/// GPUs in a layout (one drawing each).
/// GPU drawings: one per run of identical GPUs of a node.
pub fn gpus(layout: &[NodeLayout]) -> usize {
    layout
        .iter()
        .map(|n| gpu_trust_report::audit::html::gpu_runs(&n.gpus).len())
        .sum()
}

/// `report` with `layout` as the GPU layout the audit would have built for it.
pub fn with_layout(
    mut report: gpu_trust_model::report::AuditReport,
    layout: Vec<NodeLayout>,
) -> gpu_trust_model::report::AuditReport {
    report.layout = layout;
    report
}
