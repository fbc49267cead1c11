//! A hand-built audit report that exercises every field of the wire format, and a small rule registry
//! for it. The renderers are tested on this; the real rules and examples are tested through the CLI.

#![allow(dead_code)]

use gpu_trust_model::isolation::Mechanism;
use gpu_trust_model::{Certainty, Incident, Layer, Severity, Trust};
use gpu_trust_report::RuleDoc;
use gpu_trust_rules::coverage::{Coverage, CoverageStatus, Gap, GapReason, LayerCoverage};
use gpu_trust_rules::report::{
    AcceptanceSource, AcceptedEntry, AcceptedPair, AuditReport, BlastRadiusEntry, CoveredPair,
    Finding, FindingObject, GroupEntry, GroupLevel, Matrix, MatrixPair, OneSidedAcceptance,
    SeverityCounts, ShareEntry, SkippedEntry, Summary, TenantEntry, SCHEMA,
};
use std::collections::BTreeMap;

/// A coverage with every status: device and contract evaluated, host partial on facts a platform hides
/// (not blocking), confidentiality not in play, and the control plane partial for want of RBAC
/// (blocking) when `partial`.
pub fn sample_coverage(partial: bool, accepted: bool) -> Coverage {
    let layer = |layer, status, in_play: &str, gaps: Vec<Gap>| LayerCoverage {
        layer,
        status,
        in_play: in_play.into(),
        gaps,
    };
    let gpus = "the input has 2 GPU nodes";
    Coverage {
        complete: !partial,
        accepted_partial: accepted,
        layers: vec![
            layer(Layer::Device, CoverageStatus::Evaluated, gpus, vec![]),
            layer(
                Layer::Host,
                CoverageStatus::Partial,
                gpus,
                vec![Gap {
                    reason: GapReason::HiddenFacts,
                    blocking: false,
                    message: "driver-version (GKE labels the driver branch, not its version) not given for 1 node; the checks that need it cannot judge those nodes".into(),
                    reported_by: vec!["GT208".into()],
                    nodes: vec!["gke-l4-1".into()],
                }],
            ),
            layer(
                Layer::Confidentiality,
                CoverageStatus::NotInPlay,
                "no tenant is marked confidential and no GPU node has CC mode on",
                vec![],
            ),
            if partial {
                layer(
                    Layer::ControlPlane,
                    CoverageStatus::Partial,
                    "3 tenants have namespaces in the input, on one API server",
                    vec![Gap {
                        reason: GapReason::NoRbac,
                        blocking: true,
                        message: "the input has no RoleBinding or ClusterRoleBinding".into(),
                        reported_by: vec![],
                        nodes: vec![],
                    }],
                )
            } else {
                layer(
                    Layer::ControlPlane,
                    CoverageStatus::Evaluated,
                    "3 tenants have namespaces in the input, on one API server",
                    vec![],
                )
            },
            layer(Layer::Contract, CoverageStatus::Evaluated, gpus, vec![]),
        ],
    }
}

fn pod(ns: &str, name: &str, line: u32) -> FindingObject {
    FindingObject {
        kind: "Pod".into(),
        namespace: Some(ns.into()),
        name: name.into(),
        file: "examples/inference/cluster.yaml".into(),
        line,
        pods: None,
        owner: None,
    }
}

#[allow(clippy::too_many_arguments)]
fn finding(
    rule: &str,
    name: &str,
    layer: Layer,
    severity: Severity,
    certainty: Certainty,
    tenants: &[&str],
    nodes: &[&str],
    objects: Vec<FindingObject>,
    message: &str,
    remediation: &str,
) -> Finding {
    Finding {
        rule: rule.into(),
        name: name.into(),
        layer,
        severity,
        certainty,
        tenants: tenants.iter().map(|s| s.to_string()).collect(),
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        objects,
        message: message.into(),
        remediation: remediation.into(),
        accepted: None,
        pairs: None,
        accepted_pairs: vec![],
        accepted_pair_count: None,
        open_pairs: vec![],
        groups: vec![],
        by_group: vec![],
        covered_pairs: vec![],
        one_sided_acceptances: vec![],
        key: objects_key(rule, tenants),
        evidence: vec![],
        explained: None,
        since: None,
    }
}

fn objects_key(rule: &str, tenants: &[&str]) -> String {
    format!("{rule}/{}", tenants.join(","))
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[allow(clippy::too_many_arguments)]
fn group(
    id: &str,
    level: GroupLevel,
    mechanism: Option<Mechanism>,
    nodes: &[&str],
    tenants: &[(&str, Certainty)],
    certainty: Certainty,
    shares: &[&str],
    separated_by: &[&str],
) -> GroupEntry {
    let k = tenants.len();
    let permitted = tenants.iter().any(|(_, c)| *c == Certainty::Permitted);
    GroupEntry {
        id: id.into(),
        level,
        mechanism,
        permitted,
        nodes: strings(nodes),
        tenants: tenants.iter().map(|(t, _)| t.to_string()).collect(),
        permitted_tenants: if permitted {
            tenants
                .iter()
                .filter(|(_, c)| *c == Certainty::Permitted)
                .map(|(t, _)| t.to_string())
                .collect()
        } else {
            vec![]
        },
        pairs: k * (k - 1) / 2,
        certainty,
        shares: strings(shares),
        separated_by: strings(separated_by),
    }
}

pub fn sample_report(skipped: bool) -> AuditReport {
    let mut findings = vec![
        finding(
            "GT101",
            "untrusted-share-time-sliced-gpu",
            Layer::Device,
            Severity::Critical,
            Certainty::Possible,
            &["acme", "globex"],
            &["gpu-a100-2"],
            vec![pod("cust-acme", "infer-0", 120), pod("cust-globex", "chat-7d9f", 214)],
            "acme and globex (trust none) may share a GPU on gpu-a100-2, time-sliced 4 ways: one memory pool \
             and one fault domain; the fraction each was sold is accounting only",
            "Give each tenant its own MIG instance or its own GPU, or set `replicas: 1` in key `a100-ts4` of \
             ConfigMap gpu-operator/device-plugin-config",
        ),
        finding(
            "GT104",
            "distrusting-share-mig-gpu",
            Layer::Device,
            Severity::High,
            Certainty::Observed,
            &["acme", "initech"],
            &["gpu-h100-1"],
            vec![pod("cust-acme", "embed-0", 300), pod("cust-initech", "rerank-0", 340)],
            "acme and initech (trust none) use different MIG instances of GPU 0 on gpu-h100-1",
            "Put tenants that distrust each other on different physical GPUs",
        ),
        finding(
            "GT207",
            "distrusting-share-node",
            Layer::Host,
            Severity::High,
            Certainty::Observed,
            &["acme", "globex", "initech"],
            &["gpu-a100-2", "gpu-h100-1"],
            vec![pod("cust-acme", "embed-0", 300)],
            "3 tenants (acme, globex and initech; 2 pairs, trust none) share nodes gpu-a100-2 and \
             gpu-h100-1: kernel, driver, container toolkit and runtime",
            "Dedicate nodes per tenant with a taint (`kubectl taint nodes NODE gpu-trust/tenant=TENANT:NoSchedule`) \
             and a matching toleration",
        ),
        finding(
            "GT401",
            "distrusting-share-api-server",
            Layer::ControlPlane,
            Severity::Medium,
            Certainty::Observed,
            &["acme", "globex", "initech"],
            &[],
            vec![],
            "3 tenants (acme, globex and initech; 3 pairs, trust none) share one API server",
            "Run each external customer in its own virtual cluster",
        ),
        finding(
            "GT502",
            "shared-not-isolated",
            Layer::Contract,
            Severity::Info,
            Certainty::Possible,
            &["globex"],
            &["gpu-a100-2"],
            vec![FindingObject {
                kind: "Tenant".into(),
                namespace: None,
                name: "globex".into(),
                file: "examples/inference/policy.yaml".into(),
                line: 14,
                pods: None,
                owner: None,
            }],
            "globex (contract proportional-compute) accepts memory and fault interference from acme",
            "None needed; state it in the hosting terms",
        ),
    ];
    findings[1].evidence =
        vec!["probe 2026-11-02 on H100-80GB: neighbour p99 +3% under memory hog".into()];
    for (i, pairs, groups) in [
        (0, 1, &["g1"][..]),
        (1, 1, &["g3"][..]),
        (2, 2, &["g2", "g5"][..]),
        (3, 3, &["g4"][..]),
    ] {
        findings[i].pairs = Some(pairs);
        findings[i].groups = strings(groups);
    }
    findings[0].key = "device/time-slicing@A100-SXM4-80GB time-slicing nvidia.com/gpu=4".into();
    // A Deployment named once with its pods, and a pod standing for an owner the input lacks.
    findings[0].objects.extend([
        FindingObject {
            kind: "Deployment".into(),
            pods: Some(2),
            ..pod("cust-acme", "infer", 100)
        },
        FindingObject {
            pods: Some(3),
            owner: Some("Deployment/cust-globex/chat".into()),
            ..pod("cust-globex", "chat-7d9f-x2v8q", 230)
        },
    ]);
    findings[0].by_group = vec![ShareEntry {
        group: "g1".into(),
        nodes: strings(&["gpu-a100-2"]),
        tenants: strings(&["acme", "globex"]),
        pairs: 1,
        trusts: vec![Trust::None],
        certainty: Certainty::Possible,
        reason:
            "they run there and the sharing configuration lets the device plugin put them together"
                .into(),
        severity: Severity::Critical,
        every_pair: true,
        accepted: 0,
    }];
    findings[0].covered_pairs = vec![CoveredPair {
        tenants: ["acme".into(), "globex".into()],
        trust: Trust::None,
        certainty: Certainty::Possible,
        severity: Severity::Critical,
        groups: strings(&["g1"]),
        accepted: false,
    }];
    findings[0].one_sided_acceptances = vec![OneSidedAcceptance {
        tenant: "acme".into(),
        sources: vec![AcceptanceSource {
            from: "annotation",
            file: "cluster.yaml".into(),
            line: 40,
            column: 5,
            object: Some("Deployment cust-acme/infer".into()),
            annotation: Some("accept.gpu-trust.io/GT101".into()),
            reason: String::new(),
            namespace: Some("cust-acme".into()),
        }],
        missing_tenants: strings(&["globex"]),
        missing_count: 1,
        uncovered_workloads: vec![],
        uncovered_count: 0,
        message: "the `accept.gpu-trust.io/GT101` annotations of acme accept nothing for its pair with globex: GT101 needs the annotation on every workload of both tenants of a pair in the finding, and it is missing on globex's workloads there".into(),
    }];
    // GT207 over two nodes its pairs reach differently.
    findings[2].by_group = vec![
        ShareEntry {
            group: "g2".into(),
            nodes: strings(&["gpu-a100-2"]),
            tenants: strings(&["acme", "globex"]),
            pairs: 1,
            trusts: vec![Trust::None],
            certainty: Certainty::Observed,
            reason: "they are scheduled there".into(),
            severity: Severity::High,
            every_pair: true,
            accepted: 1,
        },
        ShareEntry {
            group: "g5".into(),
            nodes: strings(&["gpu-h100-1"]),
            tenants: strings(&["acme", "initech"]),
            pairs: 1,
            trusts: vec![Trust::None],
            certainty: Certainty::Observed,
            reason: "they are scheduled there".into(),
            severity: Severity::High,
            every_pair: true,
            accepted: 0,
        },
    ];
    findings[2].covered_pairs = vec![
        CoveredPair {
            tenants: ["acme".into(), "globex".into()],
            trust: Trust::None,
            certainty: Certainty::Observed,
            severity: Severity::High,
            groups: strings(&["g2"]),
            accepted: true,
        },
        CoveredPair {
            tenants: ["acme".into(), "initech".into()],
            trust: Trust::None,
            certainty: Certainty::Observed,
            severity: Severity::High,
            groups: strings(&["g5"]),
            accepted: false,
        },
    ];
    findings[2].accepted_pairs = vec![AcceptedPair {
        tenants: ["acme".into(), "globex".into()],
        reason: "one pool for the pilot".into(),
        until: Some("2027-01-31".into()),
        sources: vec![
            AcceptanceSource {
                from: "annotation",
                file: "cluster.yaml".into(),
                line: 12,
                column: 5,
                object: Some("Namespace cust-acme".into()),
                annotation: Some("accept.gpu-trust.io/GT207".into()),
                reason: String::new(),
                namespace: Some("cust-acme".into()),
            },
            AcceptanceSource {
                from: "annotation",
                file: "cluster.yaml".into(),
                line: 24,
                column: 5,
                object: Some("Namespace cust-globex".into()),
                annotation: Some("accept.gpu-trust.io/GT207".into()),
                reason: String::new(),
                namespace: Some("cust-globex".into()),
            },
        ],
    }];
    findings[2].open_pairs = vec![["globex".into(), "initech".into()]];
    findings[3].key = "api-server".into();
    findings[3].accepted = Some(AcceptedEntry {
        reason: "one cluster per region by design".into(),
        until: Some("2027-06-30".into()),
        sources: vec![AcceptanceSource {
            from: "policy",
            file: "policy.yaml".into(),
            line: 21,
            column: 5,
            object: None,
            annotation: None,
            reason: String::new(),
            namespace: None,
        }],
    });
    let mut counts = SeverityCounts::default();
    for f in findings.iter().filter(|f| f.accepted.is_none()) {
        counts.add(f.severity);
    }
    let device = [
        "gpu",
        "memory-pool",
        "fault-domain",
        "compute",
        "memory-bandwidth",
        "side-channels",
    ];
    let groups = vec![
        group(
            "g1",
            GroupLevel::Device,
            Some(Mechanism::TimeSlicing),
            &["gpu-a100-2"],
            &[
                ("acme", Certainty::Observed),
                ("globex", Certainty::Observed),
            ],
            Certainty::Possible,
            &device,
            &["address-space"],
        ),
        group(
            "g2",
            GroupLevel::Node,
            None,
            &["gpu-a100-2"],
            &[
                ("acme", Certainty::Observed),
                ("globex", Certainty::Observed),
            ],
            Certainty::Observed,
            &["host"],
            &[],
        ),
        group(
            "g3",
            GroupLevel::MigGpu,
            None,
            &["gpu-h100-1"],
            &[
                ("acme", Certainty::Observed),
                ("initech", Certainty::Observed),
            ],
            Certainty::Observed,
            &["gpu", "side-channels"],
            &[
                "mig-instance",
                "memory-pool",
                "address-space",
                "fault-domain",
                "compute",
            ],
        ),
        group(
            "g4",
            GroupLevel::ControlPlane,
            None,
            &[],
            &[
                ("acme", Certainty::Observed),
                ("globex", Certainty::Observed),
                ("initech", Certainty::Observed),
            ],
            Certainty::Observed,
            &["control-plane"],
            &[],
        ),
        group(
            "g5",
            GroupLevel::Node,
            None,
            &["gpu-h100-1"],
            &[
                ("acme", Certainty::Observed),
                ("initech", Certainty::Observed),
            ],
            Certainty::Observed,
            &["host"],
            &[],
        ),
    ];
    let entry = |tenant: &str, incident, reaches, certainty| BlastRadiusEntry {
        tenant: String::from(tenant),
        incident,
        reaches,
        certainty,
    };
    let blast_radius = vec![
        entry("acme", Incident::MemoryExhaustion, 1, Certainty::Possible),
        entry("acme", Incident::DeviceFault, 1, Certainty::Possible),
        entry("acme", Incident::ComputeContention, 1, Certainty::Possible),
        entry("acme", Incident::HostEscape, 2, Certainty::Observed),
        entry("acme", Incident::ControlPlane, 2, Certainty::Observed),
        entry("globex", Incident::MemoryExhaustion, 1, Certainty::Possible),
        entry("globex", Incident::DeviceFault, 1, Certainty::Possible),
        entry(
            "globex",
            Incident::ComputeContention,
            1,
            Certainty::Possible,
        ),
        entry("globex", Incident::HostEscape, 1, Certainty::Observed),
        entry("globex", Incident::ControlPlane, 2, Certainty::Observed),
        entry("initech", Incident::HostEscape, 1, Certainty::Observed),
        entry("initech", Incident::ControlPlane, 2, Certainty::Observed),
    ];
    let incidents =
        |list: &[(Incident, Certainty)]| list.iter().copied().collect::<BTreeMap<_, _>>();
    let matrix = Matrix {
        tenants: strings(&["acme", "globex", "initech"]),
        omitted: 0,
        pairs: vec![
            MatrixPair {
                tenants: ["acme".into(), "globex".into()],
                trust: Trust::None,
                severity: Some(Severity::Critical),
                incidents: incidents(&[
                    (Incident::MemoryExhaustion, Certainty::Possible),
                    (Incident::DeviceFault, Certainty::Possible),
                    (Incident::ComputeContention, Certainty::Possible),
                    (Incident::HostEscape, Certainty::Observed),
                    (Incident::ControlPlane, Certainty::Observed),
                ]),
            },
            MatrixPair {
                tenants: ["acme".into(), "initech".into()],
                trust: Trust::None,
                severity: Some(Severity::High),
                incidents: incidents(&[
                    (Incident::HostEscape, Certainty::Observed),
                    (Incident::ControlPlane, Certainty::Observed),
                ]),
            },
            MatrixPair {
                tenants: ["globex".into(), "initech".into()],
                trust: Trust::Limited,
                severity: None,
                incidents: incidents(&[(Incident::ControlPlane, Certainty::Observed)]),
            },
        ],
    };
    AuditReport {
        schema: SCHEMA,
        summary: Summary {
            tenants: 3,
            nodes: 2,
            gpus: 16,
            findings: counts,
            accepted: 1,
        },
        coverage: sample_coverage(false, false),
        tenants: vec![
            TenantEntry {
                name: "acme".into(),
                namespaces: vec!["cust-acme".into()],
                unassigned: false,
                virtual_cluster: false,
            },
            TenantEntry {
                name: "globex".into(),
                namespaces: vec!["cust-globex".into()],
                unassigned: false,
                virtual_cluster: false,
            },
            TenantEntry {
                name: "initech".into(),
                namespaces: vec!["cust-initech".into()],
                unassigned: true,
                virtual_cluster: false,
            },
        ],
        findings,
        groups,
        blast_radius,
        matrix,
        skipped: if skipped {
            vec![SkippedEntry {
                file: "examples/inference/broken.yaml".into(),
                line: 3,
                column: 7,
                error: "Pod spec.containers: invalid type: string, expected a sequence".into(),
                code: gpu_trust_model::Code::InvalidValue,
            }]
        } else {
            vec![]
        },
        disabled_rules: Vec::new(),
        pair: None,
        advisory_data: gpu_trust_rules::report::AdvisoryData {
            newest_bulletin: Some("2026-01-28".into()),
            age_days: Some(124),
            stale: true,
            sources: vec![
                "built-in".into(),
                "https://mirror.example.com/product-security/2026/5821/5821.json".into(),
                "bulletins/5850.json".into(),
            ],
            newest_bulletin_name: Some("NVIDIA security bulletin 5747".into()),
            built_in_replaced_by: None,
            update: Some(gpu_trust_rules::report::UpdateData {
                from: "https://mirror.example.com/product-security".into(),
                checked: Some("2026-01-30".into()),
                bulletins: 1,
            }),
        },
        pools: Vec::new(),
        layout: Vec::new(),
        fix_first: None,
        actions: None,
        baseline: None,
        provenance: None,
        verdict: None,
    }
}

const DOC_GT101: &str = "# What it detects\n\nTwo tenants with trust below `full` share a time-sliced GPU.\n\n\
# Why it matters\n\nTime-slicing shares one memory pool and one fault domain.\n\n# Example\n\n```yaml\n\
resources:\n  limits:\n    nvidia.com/gpu: 1\n```\n\n# Remediation\n\nUse MIG instances.\n\n# References\n\n\
- NVIDIA GPU Operator docs, time-slicing\n";

pub fn sample_rules() -> Vec<RuleDoc<'static>> {
    let doc = |code, name, layer, severity, summary| RuleDoc {
        code,
        name,
        layer,
        severity,
        severity_rule: severity.to_string(),
        severities: vec![severity, severity.lowered()],
        summary,
        documentation: DOC_GT101,
    };
    vec![
        doc(
            "GT502",
            "shared-not-isolated",
            Layer::Contract,
            Severity::Info,
            "Proportional-compute tenant shares GPUs",
        ),
        doc(
            "GT101",
            "untrusted-share-time-sliced-gpu",
            Layer::Device,
            Severity::Critical,
            "Tenants below full trust share a time-sliced GPU",
        ),
        doc(
            "GT104",
            "distrusting-share-mig-gpu",
            Layer::Device,
            Severity::High,
            "Distrusting tenants on MIG instances of one GPU",
        ),
        doc(
            "GT207",
            "distrusting-share-node",
            Layer::Host,
            Severity::High,
            "Distrusting tenants share a node",
        ),
        doc(
            "GT401",
            "distrusting-share-api-server",
            Layer::ControlPlane,
            Severity::Medium,
            "Distrusting tenants share an API server",
        ),
    ]
}

/// [`sample_report`] as `gpu-trust audit` finishes it: a verdict, what to fix first (one action
/// verified, one not), a baseline with a fixed finding and a new one, and its provenance.
pub fn sample_decided_report() -> AuditReport {
    use gpu_trust_rules::report::{
        Action, ActionKind, Baseline, FixFirst, FixedFinding, Provenance, Search, Since,
    };
    let mut report = sample_report(false);
    let ids: Vec<String> = report.findings.iter().map(|f| f.id()).collect();
    for (i, f) in report.findings.iter_mut().enumerate() {
        f.since = Some(if i == 0 { Since::New } else { Since::Unchanged });
    }
    report.baseline = Some(Baseline {
        file: "main.json".into(),
        generated_at: Some("2026-11-01T08:00:00Z".into()),
        new: 1,
        unchanged: report.findings.len() - 1,
        fixed: vec![FixedFinding {
            rule: "GT107".into(),
            key: "Deployment/cust-umbrella/llm-api".into(),
            severity: Severity::High,
            message: "vLLM reserves 90% of a shared GPU".into(),
        }],
    });
    let mut remaining = report.summary.findings;
    remaining.critical -= 1;
    remaining.high -= 1;
    report.fix_first = Some(FixFirst {
        threshold: Severity::High,
        open: report.summary.findings.at_or_above(Severity::High),
        search: Search::Exact,
        tried: 5,
        untried: 0,
        remaining,
        unclosed: vec![ids[1].clone()],
        blocked: Vec::new(),
        not_tried: None,
    });
    report.actions = Some(vec![
        Action {
            id: "a1".into(),
            kind: ActionKind::MoveWorkload,
            summary: "Move Deployment cust-acme/infer to node gpu-h100-2 (nodeSelector pool=acme)"
                .into(),
            object: "Deployment/cust-acme/infer".into(),
            commands: vec![
                "kubectl patch deployment infer -n cust-acme --type strategic -p '{\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{\"pool\":\"acme\"}}}}}'".into(),
                "kubectl rollout status deployment/infer -n cust-acme".into(),
            ],
            patch: Some(serde_json::json!({"spec": {"template": {"spec": {"nodeSelector": {"pool": "acme"}}}}})),
            closes: vec![ids[0].clone()],
            verified: true,
            notes: Vec::new(),
        },
        Action {
            id: "a2".into(),
            kind: ActionKind::UpgradeDriver,
            summary: "Upgrade the GPU driver 580.95.05 on node gpu-h100-1 to 580.159.03".into(),
            object: "ClusterPolicy/cluster-policy".into(),
            commands: vec!["kubectl patch clusterpolicies.nvidia.com cluster-policy --type merge -p '{\"spec\":{\"driver\":{\"version\":\"580.159.03\"}}}'".into()],
            patch: Some(serde_json::json!({"spec": {"driver": {"version": "580.159.03"}}})),
            closes: report
                .findings
                .iter()
                .filter(|f| f.rule == "GT207")
                .map(|f| f.id())
                .collect(),
            verified: false,
            notes: vec!["the effect comes from controllers".into()],
        },
    ]);
    report.pools = vec![gpu_trust_rules::report::PoolEntry {
        signature: "A100-SXM4-80GB time-slicing nvidia.com/gpu=4".into(),
        gpu: "A100-SXM4-80GB".into(),
        mechanism: Mechanism::TimeSlicing,
        replicas: Some(4),
        mig: false,
        nodes: vec!["gpu-a100-2".into()],
        gpus: 8,
        tenants: vec!["acme".into(), "globex".into()],
    }];
    let mut provenance = Provenance::new("0.1.0", 1_765_000_000, &[0xab; 32]);
    provenance.context = Some("prod".into());
    provenance.server = Some("https://10.0.0.1:6443".into());
    report.provenance = Some(provenance);
    report.verdict = Some(report.verdict(Some(Severity::High), false));
    report
}
