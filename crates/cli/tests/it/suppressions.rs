//! Suppressions at the command line: acceptances annotated on workloads and Namespaces change the
//! exit status as policy acceptances do, one tenant's annotation does not accept a pair, and an
//! annotation or a policy entry that names no rule is an input error (docs/suppressions.md).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn cluster() -> String {
    let path = format!(
        "{}/tests/data/audit/two-tenants-time-sliced.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

/// The cluster with `annotations` (key, value) on the pod named `pod`.
fn annotate(text: &str, pod: &str, annotations: &[(&str, &str)]) -> String {
    let at = format!("  name: {pod}\n");
    let mut block = String::from("  annotations:\n");
    for (k, v) in annotations {
        block.push_str(&format!("    {k}: \"{v}\"\n"));
    }
    assert!(text.contains(&at), "{pod} not in the cluster");
    text.replacen(&at, &format!("{at}{block}"), 1)
}

/// Audits the cluster from standard input, as JSON, failing on critical findings.
fn audit(text: &str) -> assert_cmd::assert::Assert {
    audit_with(text, &["--format", "json", "--fail-on", "critical"])
}

/// Audits the cluster from standard input (named `cluster.yaml`, on a fixed day) with `args`.
fn audit_with(text: &str, args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .env("NO_COLOR", "1")
        .args([
            "audit",
            "-",
            "--stdin-filename",
            "cluster.yaml",
            "--today",
            "2026-11-15",
        ])
        .args(args)
        .write_stdin(text.to_string())
        .assert()
}

fn gt101(out: &assert_cmd::assert::Assert) -> Value {
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GT101")
        .cloned()
        .expect("a GT101 finding")
}

const A: (&str, &str) = (
    "accept.gpu-trust.io/GT101",
    "training tolerates the shared lab GPU",
);
const B: (&str, &str) = (
    "accept.gpu-trust.io/GT101",
    "inference on the lab GPU serves no customer",
);

#[test]
fn the_shared_gpu_fails_the_run_without_acceptances() {
    let out = audit(&cluster()).code(1);
    assert!(gt101(&out)["accepted"].is_null());
}

#[test]
fn annotations_of_both_tenants_make_the_run_pass() {
    let text = annotate(&annotate(&cluster(), "train-a", &[A]), "infer-b", &[B]);
    let out = audit(&text).code(0);
    let f = gt101(&out);
    let sources: Vec<&str> = f["accepted"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["object"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["Pod team-a/train-a", "Pod team-b/infer-b"]);
    assert_eq!(f["accepted"]["sources"][0]["line"], 43);
    assert_eq!(f["accepted"]["sources"][0]["file"], "cluster.yaml");
}

#[test]
fn one_tenants_annotation_leaves_the_run_failing() {
    let text = annotate(&cluster(), "train-a", &[A]);
    let out = audit(&text).code(1);
    let f = gt101(&out);
    assert!(f["accepted"].is_null());
    // The annotation that accepts nothing is named in the finding and on standard error, at its
    // line, with the tenant whose annotation is missing.
    let one_sided = &f["oneSidedAcceptances"][0];
    assert_eq!(one_sided["missingTenants"], serde_json::json!(["team-b"]));
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let line = stderr
        .lines()
        .find(|l| l.contains("warning: GT101:"))
        .unwrap_or_else(|| panic!("no warning on standard error: {stderr}"));
    assert!(line.starts_with("gpu-trust: cluster.yaml:43:"), "{line}");
    assert!(line.contains("missing on team-b's workloads"), "{line}");
}

#[test]
fn an_annotation_naming_no_rule_is_an_input_error() {
    let text = annotate(
        &annotate(
            &cluster(),
            "train-a",
            &[A, ("accept.gpu-trust.io/GT999", "typo")],
        ),
        "infer-b",
        &[B],
    );
    audit(&text).code(2).stderr(predicate::str::contains(
        ":44:5: error[unknown-rule]: Pod team-a/train-a: annotation `accept.gpu-trust.io/GT999` accepts GT999, which is not a rule of gpu-trust",
    ));
}

#[test]
fn a_malformed_annotation_is_an_input_error_naming_its_line() {
    let text = annotate(
        &cluster(),
        "train-a",
        &[A, ("accept.gpu-trust.io/GT101.until", "31/01/2027")],
    );
    audit(&text)
        .code(2)
        .stderr(predicate::str::contains(":44:5: error[invalid-acceptance-annotation]: Pod team-a/train-a: annotation `accept.gpu-trust.io/GT101.until`: `31/01/2027` is not a date"));
}

#[test]
fn a_policy_entry_naming_no_rule_refuses_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: gpu-trust/v1\nkind: TenancyPolicy\naccept:\n  - rule: GT101\n    reason: lab GPU\n  - rule: GT999\n    reason: typo\n",
    )
    .unwrap();
    let at = format!(
        "{}:6:5: error[unknown-rule]: accept: GT999 is not a rule of gpu-trust",
        policy.display()
    );
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["policy", "check"])
        .arg(&policy)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(at.as_str()));
    audit_with(&cluster(), &["--policy", policy.to_str().unwrap()])
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(at.as_str()));
}

#[test]
fn sarif_marks_an_annotation_in_source_at_its_line() {
    let text = annotate(&annotate(&cluster(), "train-a", &[A]), "infer-b", &[B]);
    let out = audit_with(&text, &["--format", "sarif", "--fail-on", "critical"]).code(0);
    let sarif: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let result = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["ruleId"]
                .as_str()
                .is_some_and(|id| id.starts_with("GT101"))
        })
        .expect("a GT101 result");
    let suppressions = result["suppressions"].as_array().unwrap();
    assert_eq!(suppressions.len(), 2, "one per tenant's annotation");
    for s in suppressions {
        assert_eq!(s["kind"], "inSource");
        assert_eq!(s["status"], "accepted");
        // Standard input's name, from the current directory (crates/cli), relative to the root of
        // the git repository.
        assert_eq!(
            s["location"]["physicalLocation"]["artifactLocation"]["uri"],
            "crates/cli/cluster.yaml"
        );
    }
    assert_eq!(
        suppressions[0]["location"]["physicalLocation"]["region"]["startLine"],
        43
    );
}

/// Tenants whose annotations accept each other's pairs: the finding lists the first 200 accepted
/// pairs by tenant names and counts them all (`acceptedPairCount`), the table says how many more
/// there are, and the report still validates against the shipped schema.
#[test]
fn accepted_pairs_are_listed_up_to_a_bound_and_counted() {
    const TENANTS: usize = 25;
    const ANNOTATED: usize = 22;
    let mut docs = vec![
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-a\n  labels:\n    nvidia.com/gpu.present: \"true\"\n    nvidia.com/gpu.product: \"NVIDIA-A100-SXM4-80GB\"\n    nvidia.com/gpu.count: \"1\"\n    nvidia.com/gpu.replicas: \"32\"\n    nvidia.com/gpu.sharing-strategy: \"time-slicing\"\nstatus:\n  allocatable:\n    nvidia.com/gpu: \"32\"\n".to_string(),
    ];
    for t in 0..TENANTS {
        let annotation = if t < ANNOTATED {
            "  annotations:\n    accept.gpu-trust.io/GT101: \"the lab GPU is shared by design\"\n"
        } else {
            ""
        };
        docs.push(format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{t:02}\n  namespace: team-{t:02}\n{annotation}spec:\n  nodeName: gpu-a\n  containers:\n    - name: main\n      image: registry.example.com/app:1.0\n      resources:\n        limits:\n          nvidia.com/gpu: \"1\"\nstatus:\n  phase: Running\n"
        ));
    }
    let text = docs.join("---\n");
    let out = audit_with(&text, &["--format", "json", "--accept-partial"]).code(1);
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let f = gt101(&out);
    let accepted = ANNOTATED * (ANNOTATED - 1) / 2;
    assert_eq!(f["pairs"], TENANTS * (TENANTS - 1) / 2);
    assert_eq!(f["acceptedPairCount"], accepted);
    let listed = f["acceptedPairs"].as_array().unwrap();
    assert_eq!(listed.len(), 200);
    let names: Vec<String> = listed.iter().map(|p| p["tenants"].to_string()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "the first pairs by tenant names");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/../../docs/schema/audit-v2.schema.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let table = audit_with(&text, &["--accept-partial"]).code(1);
    let table = String::from_utf8_lossy(&table.get_output().stdout).to_string();
    assert!(
        table.contains(&format!("{accepted} accepted, {} open", 300 - accepted)),
        "{table}"
    );
}
