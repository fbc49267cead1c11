//! Suppressions: acceptances annotated on workloads and Namespaces, and policy `accept` entries
//! scoped by namespace, workload or node (docs/suppressions.md). The cluster is real manifests read
//! by the real ingest: a time-sliced H100 node that acme and globex share.

use gpu_trust_model::report::{AuditReport, Finding};
use gpu_trust_policy::Date;
use gpu_trust_rules::{audit, AuditInput, AuditOptions};

const CLUSTER: &str = include_str!("../fixtures/suppressions/cluster.yaml");

const POLICY: &str = "tenants:
  - {name: acme, namespaces: [cust-acme]}
  - {name: globex, namespaces: [cust-globex]}
trust:
  default: none
";

fn today() -> Date {
    Date::new(2026, 6, 1).unwrap()
}

/// A Deployment bound to gpu-1 with one GPU, its annotations and whether it is privileged (with the
/// host network: GT202 and GT204).
fn deployment(ns: &str, name: &str, annotations: &[(&str, &str)], privileged: bool) -> String {
    let mut a = String::new();
    for (k, v) in annotations {
        a.push_str(&format!("    {k}: \"{v}\"\n"));
    }
    let meta = if a.is_empty() {
        String::new()
    } else {
        format!("  annotations:\n{a}")
    };
    format!(
        "---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
{meta}spec:
  replicas: 1
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      nodeName: gpu-1
      hostNetwork: {privileged}
      containers:
        - name: main
          image: registry.example.com/{name}:1.0
          securityContext: {{privileged: {privileged}}}
          resources:
            limits:
              nvidia.com/gpu: \"1\"
"
    )
}

/// The same cluster with annotations on the tenant Namespaces.
fn cluster(ns_annotations: &[(&str, &str, &str)]) -> String {
    let mut text = CLUSTER.to_string();
    for (ns, k, v) in ns_annotations {
        let at = format!("  name: {ns}\n");
        text = text.replacen(&at, &format!("{at}  annotations:\n    {k}: \"{v}\"\n"), 1);
    }
    text
}

fn run_full(text: &str, policy: &str) -> (AuditReport, Vec<String>) {
    let ingested = gpu_trust_ingest::ingest_text(text, "cluster.yaml");
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    let policy = gpu_trust_policy::parse(policy, "policy.yaml").unwrap();
    let tenancy = policy.resolve(&ingested.fleet.namespaces);
    let options = AuditOptions::new(today());
    let report = audit(&AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    });
    (report, errors)
}

fn run(text: &str, policy: &str) -> AuditReport {
    let (report, errors) = run_full(text, policy);
    assert!(errors.is_empty(), "{errors:?}");
    report
}

fn of_rule<'a>(r: &'a AuditReport, code: &str) -> Vec<&'a Finding> {
    r.findings.iter().filter(|f| f.rule == code).collect()
}

fn one<'a>(r: &'a AuditReport, code: &str) -> &'a Finding {
    let found = of_rule(r, code);
    assert_eq!(found.len(), 1, "{code}: {found:#?}");
    found[0]
}

const ACCEPT_204: (&str, &str) = (
    "accept.gpu-trust.io/GT204",
    "RDMA benchmark: host network for NCCL over RoCE",
);

#[test]
fn an_annotation_accepts_a_finding_about_its_workload() {
    let text = format!(
        "{}{}",
        CLUSTER,
        deployment("cust-acme", "gpu-debug", &[ACCEPT_204], true)
    );
    let report = run(&text, POLICY);
    let f = one(&report, "GT204");
    let accepted = f.accepted.as_ref().expect("accepted by the annotation");
    assert_eq!(accepted.reason, ACCEPT_204.1);
    let source = &accepted.sources[0];
    assert_eq!(source.from, "annotation");
    assert_eq!(
        source.object.as_deref(),
        Some("Deployment cust-acme/gpu-debug")
    );
    assert_eq!(source.annotation.as_deref(), Some(ACCEPT_204.0));
    assert_eq!((source.file.as_str(), source.line), ("cluster.yaml", 89));
    // Without the annotation the same finding is open.
    let bare = format!(
        "{}{}",
        CLUSTER,
        deployment("cust-acme", "gpu-debug", &[], true)
    );
    assert!(one(&run(&bare, POLICY), "GT204").accepted.is_none());
}

#[test]
fn an_annotation_for_another_rule_or_another_workload_accepts_nothing() {
    let text = format!(
        "{}{}{}",
        CLUSTER,
        deployment(
            "cust-acme",
            "gpu-debug",
            &[("accept.gpu-trust.io/GT106", "training shares by design")],
            true
        ),
        deployment("cust-acme", "gpu-debug-2", &[ACCEPT_204], true)
    );
    let report = run(&text, POLICY);
    let found = of_rule(&report, "GT204");
    let open: Vec<&str> = found
        .iter()
        .filter(|f| f.accepted.is_none())
        .map(|f| f.key.as_str())
        .collect();
    assert_eq!(open, ["Deployment/cust-acme/gpu-debug"]);
}

#[test]
fn a_namespace_annotation_accepts_the_findings_of_its_workloads() {
    let text = format!(
        "{}{}",
        cluster(&[("cust-acme", ACCEPT_204.0, ACCEPT_204.1)]),
        deployment("cust-acme", "gpu-debug", &[], true)
    );
    let report = run(&text, POLICY);
    let accepted = one(&report, "GT204").accepted.clone().expect("accepted");
    assert_eq!(
        accepted.sources[0].object.as_deref(),
        Some("Namespace cust-acme")
    );
}

/// GT101 between acme and globex, on one time-sliced GPU.
fn pair(acme: &[(&str, &str)], globex: &[(&str, &str)]) -> String {
    format!(
        "{}{}{}",
        CLUSTER,
        deployment("cust-acme", "infer", acme, false),
        deployment("cust-globex", "train", globex, false)
    )
}

const ACCEPT_101_ACME: (&str, &str) = (
    "accept.gpu-trust.io/GT101",
    "acme's inference tolerates a noisy neighbour",
);
const ACCEPT_101_GLOBEX: (&str, &str) = (
    "accept.gpu-trust.io/GT101",
    "globex's batch jobs hold no customer data",
);

#[test]
fn one_tenant_cannot_accept_a_shared_risk_for_the_other() {
    let report = run(&pair(&[ACCEPT_101_ACME], &[]), POLICY);
    let f = one(&report, "GT101");
    assert!(f.accepted.is_none(), "{f:#?}");
    assert!(f.accepted_pairs.is_empty());
    assert_eq!(f.severity, gpu_trust_model::Severity::Critical);
    assert!(report.summary.findings.critical >= 1);
}

#[test]
fn an_annotation_that_accepts_nothing_says_whose_is_missing() {
    // acme's annotation alone: the pair stays open, and the finding names globex as the tenant
    // whose annotation is missing, at acme's annotation.
    let report = run(&pair(&[ACCEPT_101_ACME], &[]), POLICY);
    let f = one(&report, "GT101");
    let [o] = f.one_sided_acceptances.as_slice() else {
        panic!("{:#?}", f.one_sided_acceptances)
    };
    assert_eq!(o.tenant, "acme");
    assert_eq!(o.missing_tenants, ["globex"]);
    assert_eq!(o.missing_count, 1);
    assert!(
        o.message
            .contains("it is missing on globex's workloads there"),
        "{}",
        o.message
    );
    assert_eq!(
        o.sources[0].object.as_deref(),
        Some("Deployment cust-acme/infer")
    );
    // acme annotates one of its two workloads there: its own other workload is what is missing.
    let text = format!(
        "{}{}",
        pair(&[ACCEPT_101_ACME], &[ACCEPT_101_GLOBEX]),
        deployment("cust-acme", "infer-2", &[], false)
    );
    let report = run(&text, POLICY);
    let f = one(&report, "GT101");
    assert!(f.accepted.is_none());
    let acme = f
        .one_sided_acceptances
        .iter()
        .find(|o| o.tenant == "acme")
        .expect("acme's annotations accept nothing");
    assert_eq!(acme.uncovered_workloads, ["Deployment cust-acme/infer-2"]);
    // globex's side is whole, but its only partner's is not: acme's annotation is missing.
    let globex = f
        .one_sided_acceptances
        .iter()
        .find(|o| o.tenant == "globex")
        .expect("globex's annotation accepts nothing");
    assert_eq!(globex.missing_tenants, ["acme"]);
    // Both whole: the pair is accepted and nothing is said.
    let report = run(&pair(&[ACCEPT_101_ACME], &[ACCEPT_101_GLOBEX]), POLICY);
    assert!(one(&report, "GT101").one_sided_acceptances.is_empty());
}

#[test]
fn both_tenants_accepting_accepts_the_pair() {
    let report = run(&pair(&[ACCEPT_101_ACME], &[ACCEPT_101_GLOBEX]), POLICY);
    let f = one(&report, "GT101");
    let accepted = f.accepted.as_ref().expect("both sides accept");
    assert_eq!(
        accepted.reason,
        format!("{}; {}", ACCEPT_101_ACME.1, ACCEPT_101_GLOBEX.1)
    );
    let objects: Vec<&str> = accepted
        .sources
        .iter()
        .filter_map(|s| s.object.as_deref())
        .collect();
    assert_eq!(
        objects,
        ["Deployment cust-acme/infer", "Deployment cust-globex/train"]
    );
}

#[test]
fn a_side_accepts_through_its_namespace() {
    let text = format!(
        "{}{}{}",
        cluster(&[("cust-globex", ACCEPT_101_GLOBEX.0, ACCEPT_101_GLOBEX.1)]),
        deployment("cust-acme", "infer", &[ACCEPT_101_ACME], false),
        deployment("cust-globex", "train", &[], false)
    );
    assert!(one(&run(&text, POLICY), "GT101").accepted.is_some());
}

#[test]
fn a_side_accepts_only_when_all_its_workloads_there_do() {
    let text = format!(
        "{}{}",
        pair(&[ACCEPT_101_ACME], &[ACCEPT_101_GLOBEX]),
        deployment("cust-globex", "train-2", &[], false)
    );
    assert!(one(&run(&text, POLICY), "GT101").accepted.is_none());
}

#[test]
fn an_expired_annotation_accepts_nothing_and_is_gt003() {
    let text = pair(
        &[
            ACCEPT_101_ACME,
            ("accept.gpu-trust.io/GT101.until", "2026-05-31"),
        ],
        &[ACCEPT_101_GLOBEX],
    );
    let report = run(&text, POLICY);
    assert!(one(&report, "GT101").accepted.is_none());
    let expired = one(&report, "GT003");
    assert!(
        expired
            .message
            .contains("annotated on Deployment cust-acme/infer (`accept.gpu-trust.io/GT101`"),
        "{}",
        expired.message
    );
    assert!(expired.message.contains("expired on 2026-05-31"));
    assert_eq!(expired.objects[0].line, 89);
    // On its last day it still holds.
    let text = pair(
        &[
            ACCEPT_101_ACME,
            ("accept.gpu-trust.io/GT101.until", "2026-06-01"),
        ],
        &[ACCEPT_101_GLOBEX],
    );
    let report = run(&text, POLICY);
    assert!(one(&report, "GT101").accepted.is_some());
    assert!(of_rule(&report, "GT003").is_empty());
}

#[test]
fn an_annotation_without_a_reason_accepts_nothing_and_is_gt004() {
    let text = pair(&[("accept.gpu-trust.io/GT101", " ")], &[ACCEPT_101_GLOBEX]);
    let report = run(&text, POLICY);
    assert!(one(&report, "GT101").accepted.is_none());
    let f = one(&report, "GT004");
    assert_eq!(f.tenants, ["acme"]);
    assert!(f.message.contains("gives no reason"), "{}", f.message);
}

#[test]
fn a_policy_entry_without_a_reason_accepts_nothing_and_is_gt004() {
    let policy = format!("{POLICY}accept:\n  - rule: GT101\n    tenants: [acme, globex]\n");
    let report = run(&pair(&[], &[]), &policy);
    assert!(one(&report, "GT101").accepted.is_none());
    assert_eq!(one(&report, "GT004").objects[0].line, 7);
}

#[test]
fn invalid_annotations_are_located_errors_and_accept_nothing() {
    let text = pair(
        &[
            ("accept.gpu-trust.io/gt101", "lower case"),
            ("accept.gpu-trust.io/GT101.until", "2026-13-01"),
        ],
        &[ACCEPT_101_GLOBEX],
    );
    let (report, errors) = run_full(&text, POLICY);
    assert_eq!(
        errors,
        [
            "cluster.yaml:89:5: error[invalid-acceptance-annotation]: Deployment cust-acme/infer: annotation `accept.gpu-trust.io/gt101`: rule codes are written in upper case (`accept.gpu-trust.io/GT101`); this acceptance is not applied",
            "cluster.yaml:90:5: error[invalid-acceptance-annotation]: Deployment cust-acme/infer: annotation `accept.gpu-trust.io/GT101.until`: `2026-13-01` is not a date: the month must be 01 to 12; the acceptance of GT101 is not applied",
        ]
    );
    assert!(one(&report, "GT101").accepted.is_none());
}

#[test]
fn policy_entries_scoped_by_namespace_workload_or_node() {
    let text = format!(
        "{}{}",
        CLUSTER,
        deployment("cust-acme", "gpu-debug", &[], true)
    );
    let accepted = |scope: &str| {
        let policy =
            format!("{POLICY}accept:\n  - rule: GT202\n    reason: vendor debug image\n{scope}");
        one(&run(&text, &policy), "GT202").accepted.clone()
    };
    let by_ns = accepted("    namespaces: [\"cust-*\"]\n").expect("namespace scope");
    assert_eq!(by_ns.sources[0].from, "policy");
    assert_eq!(
        (by_ns.sources[0].file.as_str(), by_ns.sources[0].line),
        ("policy.yaml", 7)
    );
    assert!(accepted("    namespaces: [cust-globex]\n").is_none());
    assert!(accepted(
        "    workloads:\n      - {kind: Deployment, namespace: cust-acme, name: gpu-debug}\n"
    )
    .is_some());
    assert!(accepted(
        "    workloads:\n      - {kind: Deployment, namespace: cust-acme, name: other}\n"
    )
    .is_none());
    assert!(accepted("    nodes: [gpu-1]\n").is_some());
    assert!(accepted("    nodes: [gpu-2]\n").is_none());
    // Scopes together must all hold.
    assert!(accepted("    nodes: [gpu-1]\n    namespaces: [cust-globex]\n").is_none());
}

#[test]
fn a_scoped_policy_entry_accepts_a_pairwise_finding_only_when_all_of_it_is_in_scope() {
    let accepted = |scope: &str| {
        let policy =
            format!("{POLICY}accept:\n  - rule: GT101\n    reason: one pool by design\n{scope}");
        one(&run(&pair(&[], &[]), &policy), "GT101")
            .accepted
            .clone()
    };
    assert!(accepted("    nodes: [gpu-1]\n").is_some());
    assert!(accepted("    namespaces: [cust-acme]\n").is_none());
    assert!(accepted("    namespaces: [cust-acme, cust-globex]\n").is_some());
}

#[test]
fn a_controller_annotation_covers_its_pods_in_a_cluster_dump() {
    let pod = "---
apiVersion: v1
kind: Pod
metadata:
  name: gpu-debug-7d4f9c8b6d-x2x9k
  namespace: cust-acme
  labels: {app: gpu-debug, pod-template-hash: 7d4f9c8b6d}
  ownerReferences:
    - {apiVersion: apps/v1, kind: ReplicaSet, name: gpu-debug-7d4f9c8b6d, uid: 5b7e0c4e-1f0a-4c1e-9a57-3c1d2f3e4a5b, controller: true}
spec:
  nodeName: gpu-1
  hostNetwork: true
  containers:
    - name: main
      image: registry.example.com/gpu-debug:1.0
      securityContext: {privileged: true}
status:
  phase: Running
";
    let annotated = format!(
        "{}{}{pod}",
        CLUSTER,
        deployment("cust-acme", "gpu-debug", &[ACCEPT_204], true)
    );
    let report = run(&annotated, POLICY);
    assert!(of_rule(&report, "GT204")
        .iter()
        .all(|f| f.accepted.is_some()));
    // The pod alone, without its Deployment in the input: nothing accepts it.
    let report = run(&format!("{CLUSTER}{pod}"), POLICY);
    assert!(one(&report, "GT204").accepted.is_none());
}

/// GT202 and GT203 put their risk on the other tenants of the node: a tenant's own annotation, on its
/// workload or its Namespace, does not accept them (it is reported and not applied); the policy does.
#[test]
fn a_tenant_annotation_does_not_accept_a_risk_that_falls_on_its_neighbours() {
    let accept = ("accept.gpu-trust.io/GT202", "our debug image is privileged");
    let text = format!(
        "{}{}",
        cluster(&[("cust-acme", accept.0, accept.1)]),
        deployment("cust-acme", "gpu-debug", &[accept], true)
    );
    let ingested = gpu_trust_ingest::ingest_text(&text, "cluster.yaml");
    let warnings: Vec<String> = gpu_trust_rules::acceptance::unknown_rules(&ingested.fleet)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.contains("warning[not-accepted-by-annotation]:")
                && w.contains("is not applied: the risk of GT202 falls on the other tenants")),
        "{warnings:?}"
    );
    let report = run(&text, POLICY);
    assert!(one(&report, "GT202").accepted.is_none());
    // GT204 on the same workload is the tenant's own to accept.
    let text = format!(
        "{}{}",
        CLUSTER,
        deployment("cust-acme", "gpu-debug", &[accept, ACCEPT_204], true)
    );
    let report = run(&text, POLICY);
    assert!(one(&report, "GT202").accepted.is_none());
    assert!(one(&report, "GT204").accepted.is_some());
    // The policy speaks for every tenant of the node.
    let policy = format!("{POLICY}accept:\n  - rule: GT202\n    namespaces: [cust-acme]\n    reason: vendor diagnostics, reviewed\n");
    assert!(one(&run(&text, &policy), "GT202").accepted.is_some());
}
