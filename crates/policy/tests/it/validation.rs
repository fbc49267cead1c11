//! Every validation error of the policy file, each pointing at its line and column.

use gpu_trust_policy::{parse, Diagnostic, Policy};

fn read(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn errors(name: &str) -> Vec<Diagnostic> {
    match parse(&read(name), name) {
        Ok(_) => panic!("{name} should be refused"),
        Err(e) => e,
    }
}

/// Asserts that an error at `line:column` has a message containing every part of `parts`.
#[track_caller]
fn has(errors: &[Diagnostic], line: u32, column: u32, parts: &[&str]) {
    let found = errors.iter().any(|e| {
        e.location.line == line
            && e.location.column == column
            && e.is_error()
            && parts.iter().all(|p| e.message.contains(p))
    });
    let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(
        found,
        "no error at {line}:{column} with {parts:?} in:\n{}",
        all.join("\n")
    );
}

#[test]
fn valid_example_parses() {
    let policy = parse(&read("valid.yaml"), "valid.yaml").unwrap();
    let names: Vec<&str> = policy.declared_tenants().collect();
    assert_eq!(names, ["search", "ads", "acme", "platform-ml"]);
    assert_eq!(policy.relations().len(), 2);
    assert_eq!(policy.workloads()[0].peak_memory_mib, Some(61_440));
    assert_eq!(
        policy.acceptances()[0].until.unwrap().to_string(),
        "2027-06-30"
    );
    assert_eq!(policy.patch_window_days(), 30);
    assert_eq!(policy.max_replicas(), 4);
    assert_eq!(policy.file(), Some("valid.yaml"));
}

#[test]
fn typo_in_a_field_names_its_line() {
    let e = errors("typo-field.yaml");
    assert_eq!(e.len(), 1);
    has(&e, 7, 5, &["unknown field `namepsaces`"]);
    assert_eq!(e[0].location.file, "typo-field.yaml");
    assert!(e[0]
        .to_string()
        .starts_with("typo-field.yaml:7:5: error[invalid-value]: unknown field"));
}

#[test]
fn namespace_claimed_by_two_tenants_names_both() {
    let e = errors("namespace-claimed-twice.yaml");
    assert_eq!(e.len(), 2, "{e:?}");
    has(
        &e,
        5,
        27,
        &["`shared`", "tenant `search` (line 3)", "tenant `ads`"],
    );
    has(
        &e,
        7,
        18,
        &["`ads-*`", "tenant `ads` (line 5)", "tenant `globex`"],
    );
}

#[test]
fn relation_errors() {
    let e = errors("relations.yaml");
    has(
        &e,
        11,
        7,
        &[
            "`ads` and `search`",
            "different levels",
            "limited (line 9)",
            "full",
        ],
    );
    has(&e, 13, 25, &["`billing`", "not declared"]);
    has(&e, 15, 22, &["`ads` with itself"]);
    has(&e, 17, 7, &["exactly two tenants", "names 1"]);
    // The same pair again with the same level is redundant, not contradictory.
    assert_eq!(e.len(), 4, "{e:?}");
}

#[test]
fn acceptance_errors() {
    let e = errors("acceptances.yaml");
    has(&e, 5, 5, &["needs a `rule`"]);
    has(&e, 8, 11, &["`gt401`", "GTnnn"]);
    has(&e, 10, 11, &["`GT40`", "GTnnn"]);
    has(&e, 16, 14, &["tenants is empty"]);
    has(&e, 19, 23, &["`search` twice"]);
    // Entries without a reason (lines 7 and 12) are read: they accept nothing, and the audit
    // reports them as GT004.
    assert_eq!(e.len(), 5, "{e:?}");
}

#[test]
fn acceptance_without_a_reason_is_read_and_accepts_nothing() {
    let text = "accept:\n  - rule: GT401\n  - rule: GT207\n    reason: \"  \"\n";
    let policy = parse(text, "p.yaml").unwrap();
    let a = policy.acceptances();
    assert_eq!(a.len(), 2);
    assert!(a.iter().all(|a| !a.has_reason()));
    assert!(!a[0].matches("GT401", ["x", "y"]));
    assert_eq!((a[0].location.line, a[1].location.line), (2, 3));
}

#[test]
fn acceptance_scopes_are_read() {
    let text = "accept:
  - rule: GT202
    reason: runs the MIG manager
    namespaces: [ml-ops, \"team-*\"]
    workloads:
      - {kind: Deployment, namespace: ml-ops, name: mig-tuner}
    nodes: [gpu-1.example.com]
";
    let policy = parse(text, "p.yaml").unwrap();
    let a = &policy.acceptances()[0];
    let ns: Vec<&str> = a
        .namespaces
        .iter()
        .flatten()
        .map(|p| p.pattern.as_str())
        .collect();
    assert_eq!(ns, ["ml-ops", "team-*"]);
    assert!(a.workloads.as_ref().unwrap()[0].names("Deployment", "ml-ops", "mig-tuner"));
    assert!(a.nodes.as_ref().unwrap().contains("gpu-1.example.com"));
    assert!(a.is_scoped());
    assert!(
        !a.matches("GT202", ["ml"]),
        "a scoped entry needs more than tenants"
    );
}

#[test]
fn acceptance_scope_errors() {
    let e = errors("accept-scopes.yaml");
    has(&e, 7, 17, &["namespaces is empty"]);
    has(&e, 10, 18, &["`Search_Prod`", "not a namespace"]);
    has(&e, 14, 9, &["needs `name`", "kind, namespace and name"]);
    has(&e, 18, 39, &["one namespace", "`namespaces`"]);
    has(&e, 21, 13, &["`GPU_1`", "not a node name"]);
    has(&e, 24, 20, &["node `gpu-1` twice"]);
    assert_eq!(e.len(), 6, "{e:?}");
}

#[test]
fn a_typo_in_an_acceptance_scope_names_its_line() {
    let text = "accept:\n  - rule: GT207\n    reason: shared pool\n    node: [gpu-1]\n";
    let e = parse(text, "p.yaml").unwrap_err();
    has(&e, 4, 5, &["unknown field `node`", "nodes"]);
}

#[test]
fn bad_dates() {
    let e = errors("dates.yaml");
    has(&e, 4, 12, &["`2027-02-29`", "does not exist"]);
    has(&e, 7, 12, &["`2027-13-01`", "month"]);
    has(&e, 10, 12, &["`06/30/2027`", "YYYY-MM-DD"]);
    has(&e, 13, 12, &["YYYY-MM-DD"]);
    // 2028-02-29 on line 16 is a real day.
    assert_eq!(e.len(), 4, "{e:?}");
}

#[test]
fn duplicate_and_nameless_tenants() {
    let e = errors("duplicate-tenant.yaml");
    has(&e, 6, 11, &["`search` is declared twice", "line 2"]);
    has(&e, 8, 5, &["needs a `name`"]);
    assert_eq!(e.len(), 2, "{e:?}");
}

#[test]
fn invalid_values_are_all_reported() {
    let e = errors("values.yaml");
    has(&e, 1, 13, &["apiVersion must be `gpu-trust/v1`"]);
    has(&e, 2, 7, &["kind must be `TenancyPolicy`"]);
    has(&e, 5, 31, &["`Search_Batch`", "not a namespace"]);
    has(&e, 6, 14, &["latency `urgent`"]);
    has(&e, 7, 15, &["contract `exclusive`"]);
    has(&e, 9, 16, &["subject kind `Robot`"]);
    has(&e, 10, 16, &["`trainer` needs a `namespace`"]);
    has(&e, 11, 46, &["only a ServiceAccount"]);
    has(&e, 13, 12, &["trust level `partial`"]);
    has(&e, 17, 11, &["workload kind `finetune`"]);
    has(&e, 18, 17, &["`60` has no unit"]);
    has(&e, 20, 17, &["unknown unit `Gb`"]);
    has(&e, 21, 15, &["selector is empty"]);
    has(&e, 23, 5, &["sets nothing"]);
    has(&e, 25, 16, &["maxReplicas must be at least 1"]);
    assert_eq!(e.len(), 15, "{e:?}");
    let lines: Vec<u32> = e.iter().map(|d| d.location.line).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "errors come in file order");
}

#[test]
fn platform_namespace_claimed_by_a_tenant() {
    let e = errors("platform-conflict.yaml");
    assert_eq!(e.len(), 1, "{e:?}");
    has(
        &e,
        4,
        18,
        &[
            "`monitoring`",
            "`observability`",
            "platformNamespaces (line 1)",
        ],
    );
}

#[test]
fn default_platform_namespace_may_be_claimed() {
    // Only an explicit platformNamespaces list contradicts a claim; the defaults give way.
    let p = parse(
        "tenants:\n  - name: ops\n    namespaces: [gpu-operator]\n",
        "p.yaml",
    )
    .unwrap();
    let t = p.resolve(&[gpu_trust_model::fleet::NamespaceInfo {
        name: "gpu-operator".into(),
        ..Default::default()
    }]);
    assert!(t.tenant_of("gpu-operator").is_some());
}

#[test]
fn empty_file_is_the_default_policy() {
    let p = parse(&read("empty.yaml"), "empty.yaml").unwrap();
    let d = Policy::default();
    assert_eq!(p.tenant_labels(), d.tenant_labels());
    assert_eq!(p.platform_namespaces(), d.platform_namespaces());
    assert_eq!(p.default_trust(), d.default_trust());
    assert_eq!(
        parse("---\n", "p.yaml").unwrap().tenant_labels(),
        d.tenant_labels()
    );
}

#[test]
fn tenant_label_can_be_turned_off() {
    let p = parse("tenantLabel: null\n", "p.yaml").unwrap();
    assert!(p.tenant_labels().is_empty());
    let p = parse("tenantLabel: example.com/team\n", "p.yaml").unwrap();
    assert_eq!(p.tenant_labels(), ["example.com/team"]);
    let e = parse("tenantLabel: \"\"\n", "p.yaml").unwrap_err();
    assert_eq!(e[0].location.line, 1);
}

#[test]
fn document_shape_errors() {
    let e = parse("# comment\n- a\n- b\n", "p.yaml").unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].location.line, 2);
    assert!(e[0].message.contains("is a mapping"), "{}", e[0]);

    let e = parse("tenants: []\n---\ntenants: []\n", "p.yaml").unwrap_err();
    assert_eq!(e[0].code, gpu_trust_model::Code::NotOneDocument, "{}", e[0]);

    let e = parse("tenants:\n  - name: a\n    confidential: maybe\n", "p.yaml").unwrap_err();
    assert_eq!((e[0].location.line, e[0].location.column), (3, 19));

    let e = parse(
        "tenants:\n  - name: a\n  - name: a\n    name: b\n",
        "p.yaml",
    )
    .unwrap_err();
    assert_eq!(
        e[0].location.line, 4,
        "duplicate keys are an error: {}",
        e[0]
    );
}

#[test]
fn garbage_never_panics() {
    for text in [
        "\u{0}",
        "[",
        "{",
        "tenants: {a: b}",
        "accept: [1, 2]",
        "trust: {relations: [{tenants: [1, 2], level: 3}]}",
        "workloads: [{selector: {labels: {a: [1]}}}]",
        "tenants:\n  - &a {name: x}\n  - *a\n",
        "sharing: {maxReplicas: 99999999999999}",
    ] {
        let _ = parse(text, "p.yaml");
    }
}

mod fuzz {
    use proptest::prelude::*;

    proptest! {
        /// Arbitrary text built from the policy's own words and YAML punctuation never panics, and
        /// every error it yields carries the file name.
        #[test]
        fn parse_never_panics(words in proptest::collection::vec(
            prop_oneof![
                Just("tenants:"), Just("accept:"), Just("trust:"), Just("relations:"),
                Just("- name: a"), Just("namespaces: [a, \"b-*\"]"), Just("level: full"),
                Just("rule: GT401"), Just("until: 2027-02-29"), Just("peakMemory: 1.5Gi"),
                Just("workloads:"), Just("selector: {}"), Just("  "), Just("\n"), Just("- "),
                Just("{"), Just("}"), Just("["), Just("]"), Just(":"), Just("&x"), Just("*x"),
                Just("tenants: [search, ads]"), Just("reason: r"), Just("null"),
            ],
            0..40,
        )) {
            let text = words.concat();
            if let Err(errors) = gpu_trust_policy::parse(&text, "fuzz.yaml") {
                prop_assert!(!errors.is_empty());
                prop_assert!(errors.iter().all(|e| e.location.file == "fuzz.yaml"));
            }
        }
    }
}

/// What every fixture reads to, each diagnostic as the command line prints it: the wording, order and
/// locations of the policy's diagnostics are part of its interface.
#[test]
fn every_fixture_reads_to_the_same_diagnostics() {
    let dir = format!("{}/tests/fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        out.push_str(&format!("== {name}\n"));
        match parse(&read(&name), &name) {
            Ok(_) => out.push_str("ok\n"),
            Err(errors) => {
                for e in errors {
                    out.push_str(&format!("{e}\n"));
                }
            }
        }
    }
    insta::assert_snapshot!("fixture_diagnostics", out);
}
