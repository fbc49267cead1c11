//! The planner's main correctness test: the planned cluster, written as Kubernetes objects and read
//! back by ingest, audits with no open finding, of any severity, that the plan could have avoided.
//! The emitted configs also parse with the parsers ingest reads real clusters with.

use gpu_trust_model::fleet::WorkloadKind;
use gpu_trust_model::isolation::{self, ADMISSION};
use gpu_trust_model::Trust;
use gpu_trust_planner::emit;
use gpu_trust_planner::file::{self, PlanInput, PolicySource};
use gpu_trust_planner::generate::{fleet, FleetSpec};
use gpu_trust_planner::{check, snapshot, solve, Plan};
use gpu_trust_policy::{Contract, Date, Policy};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};

fn today() -> Date {
    Date::parse("2026-03-01").unwrap()
}

/// Open findings of the planned cluster that the plan could have avoided.
fn serious(plan: &Plan, input: &PlanInput, policy: &Policy) -> Vec<String> {
    serious_in(&snapshot(plan, input), policy, None)
}

/// Whether a plan could have avoided a finding of the rule: every rule but those of what no plan
/// decides (the host's software and settings, which the snapshot does not state: driver and toolkit
/// versions, pod security, the DCGM exporter that measures shared GPUs, and the interference a
/// tenant's contract accepts) and the sharings the admission table lets a plan make
/// (`Plan::Allowed`: one API server, MPS clients of one tenant).
fn avoidable(rule: &str) -> bool {
    const NOT_PLANNED: &[&str] = &["GT205", "GT206", "GT208", "GT502", "GT503"];
    !NOT_PLANNED.contains(&rule)
        && !ADMISSION
            .iter()
            .any(|r| r.rule == rule && r.plan == isolation::Plan::Allowed)
}

/// Open findings a plan could have avoided in a snapshot; with `pods`, the audit must see that many
/// pods with a GPU on their node. (Ingest does not read which device a claim was
/// allocated: a DRA pod is judged as possibly on any GPU of its node, or on its node alone.)
fn serious_in(text: &str, policy: &Policy, pods: Option<usize>) -> Vec<String> {
    let ingested = gpu_trust_ingest::ingest_text(text, "snapshot.yaml");
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "the snapshot does not read back: {errors:#?}"
    );
    if let Some(pods) = pods {
        let on_gpus = ingested
            .fleet
            .workloads
            .iter()
            .filter(|w| {
                w.kind == WorkloadKind::Pod && w.requests_gpu() && w.placement.node.is_some()
            })
            .count();
        assert_eq!(
            on_gpus, pods,
            "pods the audit sees with a GPU on their node"
        );
        // Each is judged by what the cluster recorded: its claim's allocation.
        let recorded = ingested
            .fleet
            .workloads
            .iter()
            .filter(|w| w.kind == WorkloadKind::Pod && !w.placement.allocations.is_empty())
            .count();
        assert_eq!(recorded, pods, "pods with recorded DRA allocations");
    }
    let tenancy = policy.resolve(&ingested.fleet.namespaces);
    let options = AuditOptions::new(today());
    let report = audit(&AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    });
    report
        .findings
        .iter()
        .filter(|f| avoidable(&f.rule) && f.accepted.is_none())
        .map(|f| format!("{} {:?} {:?}: {}", f.rule, f.tenants, f.nodes, f.message))
        .collect()
}

/// The policy of a generated fleet, as a policy file would state it.
fn policy_of(input: &PlanInput) -> Policy {
    let mut text = String::from("apiVersion: gpu-trust/v1\nkind: TenancyPolicy\ntenants:\n");
    for t in &input.tenants {
        text.push_str(&format!(
            "  - name: {}\n    namespaces: [{}]\n",
            t.name, t.name
        ));
        if t.confidential {
            text.push_str("    confidential: true\n");
        }
        if t.contract == Contract::Isolation {
            text.push_str("    contract: isolation\n");
        }
    }
    text.push_str("trust:\n  default: none\n  relations:\n");
    let n = input.tenants.len();
    let mut accepts = String::new();
    for a in 0..n {
        for b in a + 1..n {
            let (ta, tb) = (&input.tenants[a].name, &input.tenants[b].name);
            let t = input.trust[a][b];
            if t != Trust::None {
                text.push_str(&format!(
                    "    - {{tenants: [{ta}, {tb}], level: {}}}\n",
                    t.as_str()
                ));
            } else if input.node_ok[a][b] {
                // Every rule the admission table lets a plan share a node under when accepted.
                let rules: std::collections::BTreeSet<&str> = ADMISSION
                    .iter()
                    .filter(|r| r.plan == isolation::Plan::WhenAccepted)
                    .map(|r| r.rule)
                    .collect();
                for rule in rules {
                    accepts.push_str(&format!(
                        "  - {{rule: {rule}, tenants: [{ta}, {tb}], reason: one host by design}}\n"
                    ));
                }
            }
        }
    }
    if !accepts.is_empty() {
        text.push_str("accept:\n");
        text.push_str(&accepts);
    }
    gpu_trust_policy::parse(&text, "policy.yaml").unwrap()
}

fn example() -> (PlanInput, Policy) {
    example_with("")
}

/// The example with more workloads (items of its `workloads` list, which ends the file).
fn example_with(workloads: &str) -> (PlanInput, Policy) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/plan");
    let text = std::fs::read_to_string(format!("{dir}/plan.yaml")).unwrap() + workloads;
    let plan_file = file::parse(&text, "plan.yaml").unwrap();
    let PolicySource::File { path, .. } = &plan_file.policy else {
        panic!("the example names its policy file")
    };
    let policy_text = std::fs::read_to_string(format!("{dir}/{path}")).unwrap();
    let policy = gpu_trust_policy::parse(&policy_text, path).unwrap();
    (plan_file.resolve(&policy, today()).unwrap(), policy)
}

/// The plan of `input`, which places every replica and which the independent checker accepts.
fn complete_plan(input: &PlanInput) -> Plan {
    let plan = solve(input);
    assert!(plan.complete(), "{:#?}", plan.unplaced);
    let problems = check(input, &plan);
    assert!(problems.is_empty(), "{problems:#?}");
    plan
}

#[test]
fn the_example_plan_audits_clean() {
    let (input, policy) = example();
    let plan = complete_plan(&input);
    let found = serious(&plan, &input, &policy);
    assert!(found.is_empty(), "{found:#?}");
}

/// A latency-critical tenant's notebook is planned on a seat of its own, not time-sliced: the
/// planner, its checker and GT111 read one row.
#[test]
fn a_latency_critical_notebook_audits_clean() {
    let (input, policy) = example_with(
        "  - {name: ads-lab, tenant: ads, kind: notebook, replicas: 3, peakMemory: 4GiB, pool: l40s}\n",
    );
    let plan = complete_plan(&input);
    let found = serious(&plan, &input, &policy);
    assert!(found.is_empty(), "{found:#?}");
}

/// A plan of a confidential tenant and another on an L40S pool and an H100 pool, the H100 pool with
/// the pool line `tee` (empty: none).
fn confidential_plan(tee: &str) -> (PlanInput, Policy) {
    let text = format!(
        "apiVersion: gpu-trust/v1
kind: Plan
policy:
  tenants:
    - {{name: acme, namespaces: [cust-acme], confidential: true}}
    - {{name: search, namespaces: [search]}}
inventory:
  - {{pool: l40s, model: L40S, gpusPerNode: 4, nodes: 2}}
  - {{pool: h100, model: H100-SXM5-80GB, gpusPerNode: 8, nodes: 2{tee}}}
workloads:
  - {{name: acme-infer, tenant: acme, kind: inference, replicas: 3, peakMemory: 30GiB}}
  - {{name: search-api, tenant: search, kind: inference, replicas: 4, peakMemory: 10GiB}}
"
    );
    let plan_file = file::parse(&text, "plan.yaml").unwrap();
    let PolicySource::Inline { text } = &plan_file.policy else {
        panic!("the plan gives its policy inline")
    };
    let policy = gpu_trust_policy::parse(text, "plan.yaml").unwrap();
    (plan_file.resolve(&policy, today()).unwrap(), policy)
}

/// A confidential tenant's pods run as NVIDIA's confidential containers: the GPU passed through
/// (`nvidia.com/pgpu`) to a Kata VM of the pool's TEE, whose RuntimeClass the audit resolves, so
/// GT303 finds nothing (and GT301/GT302 neither).
#[test]
fn a_confidential_tenant_runs_in_confidential_containers() {
    let (input, policy) = confidential_plan(", tee: tdx");
    let plan = complete_plan(&input);
    let w = plan
        .workloads
        .iter()
        .find(|w| w.name == "acme-infer")
        .unwrap();
    assert_eq!(w.resource.as_deref(), Some("nvidia.com/pgpu"));
    assert_eq!(
        w.runtime_class_name.as_deref(),
        Some("kata-qemu-nvidia-gpu-tdx")
    );
    let other = plan
        .workloads
        .iter()
        .find(|w| w.name == "search-api")
        .unwrap();
    assert_eq!(other.runtime_class_name, None);
    let text = snapshot(&plan, &input);
    let ingested = gpu_trust_ingest::ingest_text(&text, "snapshot.yaml");
    let handlers: Vec<Option<&str>> = ingested
        .fleet
        .workloads
        .iter()
        .filter(|w| w.kind == WorkloadKind::Pod && w.namespace == "cust-acme")
        .map(|w| w.pod_security.runtime_handler.as_deref())
        .collect();
    assert_eq!(handlers, vec![Some("kata-qemu-nvidia-gpu-tdx"); 3]);
    let found = serious(&plan, &input, &policy);
    assert!(found.is_empty(), "{found:#?}");
    // The same pods without their runtime class are what GT303 reports.
    let plain: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("runtimeClassName:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let found = serious_in(&plain, &policy, None);
    assert!(found.iter().any(|f| f.starts_with("GT303")), "{found:#?}");
}

/// A CC-capable pool that does not say its nodes' CPU TEE cannot run confidential containers: the
/// confidential tenant's workload stays unplaced, and the reason says what to add.
#[test]
fn a_pool_without_a_tee_leaves_a_confidential_workload_unplaced() {
    let (input, _) = confidential_plan("");
    let plan = solve(&input);
    assert!(
        check(&input, &plan).is_empty(),
        "{:#?}",
        check(&input, &plan)
    );
    let unplaced: Vec<&str> = plan.unplaced.iter().map(|u| u.workload.as_str()).collect();
    assert_eq!(unplaced, ["acme-infer"; 3]);
    assert!(
        plan.unplaced[0]
            .reason
            .contains("add `tee: snp` (AMD SEV-SNP) or `tee: tdx` (Intel TDX)"),
        "{}",
        plan.unplaced[0].reason
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 8, failure_persistence: None, ..Default::default() })]

    /// The order of the plan file's workloads changes nothing in the plan.
    #[test]
    fn the_plan_does_not_depend_on_the_order_of_the_file(seed in proptest::prelude::any::<u64>()) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/plan");
        let text = std::fs::read_to_string(format!("{dir}/plan.yaml")).unwrap();
        let (head, list) = text.split_once("workloads:\n").unwrap();
        let mut items: Vec<String> = Vec::new();
        for line in list.split_inclusive('\n') {
            match items.last_mut() {
                Some(item) if !line.starts_with("  - ") => item.push_str(line),
                _ => items.push(line.to_string()),
            }
        }
        // A permutation drawn from the seed (Fisher-Yates over a linear congruential sequence).
        let mut x = seed;
        for i in (1..items.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            items.swap(i, (x >> 33) as usize % (i + 1));
        }
        let shuffled = format!("{head}workloads:\n{}", items.concat());
        let (input, _) = example();
        let plan_of = |t: &str| {
            let policy = gpu_trust_policy::parse(&std::fs::read_to_string(format!("{dir}/policy.yaml")).unwrap(), "policy.yaml").unwrap();
            let input = file::parse(t, "plan.yaml").unwrap().resolve(&policy, today()).unwrap();
            serde_json::to_string(&solve(&input)).unwrap()
        };
        proptest::prop_assert_eq!(plan_of(&text), plan_of(&shuffled));
        proptest::prop_assert_eq!(input.workloads.len(), items.len());
    }
}

/// A plan for DRA and its snapshot (claims allocated their devices), with the replicas it places.
fn dra_plan(input: &PlanInput) -> (Plan, String, usize) {
    let plan = gpu_trust_planner::solve_with(
        input,
        &gpu_trust_planner::SolveOptions {
            dra: true,
            ..Default::default()
        },
    );
    assert!(check(input, &plan).is_empty());
    let text = gpu_trust_planner::snapshot::dra_snapshot(&plan, input);
    let placed = plan.workloads.iter().map(|w| w.placed as usize).sum();
    (plan, text, placed)
}

#[test]
fn dra_plans_audit_clean() {
    let (input, policy) = example();
    let (plan, text, placed) = dra_plan(&input);
    assert!(plan.complete(), "{:#?}", plan.unplaced);
    let found = serious_in(&text, &policy, Some(placed));
    assert!(found.is_empty(), "example: {found:#?}");
    for (seed, model, accept) in [(1u64, "H100-SXM5-80GB", 0.0), (4, "L40S", 0.3)] {
        let spec = FleetSpec {
            model: model.to_string(),
            node_acceptance: accept,
            isolation: 0.1,
            replicas_per_tenant: 12,
            ..FleetSpec::benchmark(60, seed)
        };
        let input = fleet(&spec);
        let policy = policy_of(&input);
        let (_, text, placed) = dra_plan(&input);
        let found = serious_in(&text, &policy, Some(placed));
        assert!(found.is_empty(), "seed {seed} {model}: {found:#?}");
    }
}

#[test]
fn generated_plans_audit_clean() {
    for (seed, model, accept, conf) in [
        (1u64, "H100-SXM5-80GB", 0.0, 0.0),
        (2, "H100-SXM5-80GB", 0.5, 0.3),
        (3, "A30", 0.0, 0.0),
        (4, "L40S", 0.3, 0.0),
        (5, "A100-SXM4-40GB", 1.0, 0.0),
        (6, "H200-SXM-141GB", 0.0, 0.2),
    ] {
        let spec = FleetSpec {
            model: model.to_string(),
            node_acceptance: accept,
            confidential: conf,
            isolation: 0.1,
            replicas_per_tenant: 12,
            ..FleetSpec::benchmark(150, seed)
        };
        let input = fleet(&spec);
        let policy = policy_of(&input);
        let plan = solve(&input);
        assert!(check(&input, &plan).is_empty());
        // The confidential tenants' replicas run as confidential containers.
        let confidential: u32 = plan
            .workloads
            .iter()
            .filter(|w| w.runtime_class_name.is_some())
            .map(|w| w.placed)
            .sum();
        let wanted = input.tenants.iter().any(|t| t.confidential);
        assert_eq!(wanted, conf > 0.0, "seed {seed} {model}");
        assert_eq!(confidential > 0, wanted, "seed {seed} {model}");
        let found = serious(&plan, &input, &policy);
        assert!(found.is_empty(), "seed {seed} {model}: {found:#?}");
    }
}

#[test]
fn emitted_configs_parse_as_ingest_reads_them() {
    let (input, _) = example();
    let plan = solve(&input);
    let mig = serde_saphyr::to_string(&emit::mig_parted_config(&plan)).unwrap();
    let parsed = gpu_trust_ingest::mig_parted::parse(&mig, "mig.yaml", 0).unwrap();
    assert!(parsed.mig_configs.contains_key(emit::ALL_DISABLED));
    assert_eq!(
        parsed.mig_configs.len(),
        emit::mig_parted_config(&plan).mig_configs.len()
    );
    let configs = emit::device_plugin_configs(&plan);
    assert!(configs.len() >= 2, "the example shares GPUs: {configs:?}");
    for (key, config) in configs {
        let text = serde_saphyr::to_string(&config).unwrap();
        let (_, warnings) = gpu_trust_ingest::device_plugin::parse(
            &text,
            &key,
            0,
            gpu_trust_ingest::device_plugin::Strictness::Strict,
        )
        .unwrap();
        assert!(warnings.is_empty(), "{key}: {warnings:?}");
    }
}
