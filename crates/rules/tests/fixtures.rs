//! Every rule against its fixtures: `tests/fixtures/<code>/{violating,clean}.yaml` (Kubernetes objects as
//! a cluster dump has them) with `<case>.policy.yaml` beside them, read by the real ingest and policy
//! and audited on a fixed date. The violating case's findings of the rule are a snapshot; the clean
//! case has none of them.

use gpu_trust_policy::Date;
use gpu_trust_rules::report::{AuditReport, Finding};
use gpu_trust_rules::{audit, registry, AuditInput, AuditOptions};
use std::path::Path;

fn today() -> Date {
    Date::new(2026, 6, 1).unwrap()
}

fn load(code: &str, case: &str) -> AuditReport {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(code);
    let file = format!("tests/fixtures/{code}/{case}.yaml");
    let text = std::fs::read_to_string(dir.join(format!("{case}.yaml")))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let ingested = gpu_trust_ingest::ingest_text(&text, &file);
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{file}: {errors:?}");
    let policy_path = dir.join(format!("{case}.policy.yaml"));
    let policy = match std::fs::read_to_string(&policy_path) {
        Ok(text) => {
            gpu_trust_policy::parse(&text, &format!("tests/fixtures/{code}/{case}.policy.yaml"))
                .unwrap_or_else(|e| panic!("{}: {e:?}", policy_path.display()))
        }
        Err(_) => gpu_trust_policy::Policy::default(),
    };
    let tenancy = policy.resolve(&ingested.fleet.namespaces);
    let options = AuditOptions::new(today());
    audit(&AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    })
}

fn of_rule<'a>(r: &'a AuditReport, code: &str) -> Vec<&'a Finding> {
    r.findings.iter().filter(|f| f.rule == code).collect()
}

fn check(code: &str) {
    let violating = load(code, "violating");
    let found = of_rule(&violating, code);
    assert!(
        !found.is_empty(),
        "{code}: the violating fixture has no finding"
    );
    insta::assert_snapshot!(
        format!("{code}_fixture"),
        serde_json::to_string_pretty(&found).unwrap()
    );
    let clean = load(code, "clean");
    let found = of_rule(&clean, code);
    assert!(
        found.is_empty(),
        "{code}: the clean fixture has findings: {}",
        serde_json::to_string_pretty(&found).unwrap()
    );
}

macro_rules! fixtures {
    ($($name:ident => $code:literal,)*) => {
        $(
            #[test]
            fn $name() {
                check($code);
            }
        )*

        #[test]
        fn every_rule_has_fixtures() {
            let tested = [$($code),*];
            for r in registry() {
                assert!(tested.contains(&r.code), "{} has no fixture test", r.code);
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(r.code);
                for case in ["violating", "clean"] {
                    assert!(dir.join(format!("{case}.yaml")).is_file(), "{}: no {case}.yaml", r.code);
                }
            }
        }
    };
}

fixtures! {
    gt001 => "GT001",
    gt002 => "GT002",
    gt003 => "GT003",
    gt004 => "GT004",
    gt101 => "GT101",
    gt102 => "GT102",
    gt103 => "GT103",
    gt104 => "GT104",
    gt105 => "GT105",
    gt106 => "GT106",
    gt107 => "GT107",
    gt108 => "GT108",
    gt109 => "GT109",
    gt110 => "GT110",
    gt111 => "GT111",
    gt112 => "GT112",
    gt201 => "GT201",
    gt202 => "GT202",
    gt203 => "GT203",
    gt204 => "GT204",
    gt205 => "GT205",
    gt206 => "GT206",
    gt207 => "GT207",
    gt208 => "GT208",
    gt301 => "GT301",
    gt302 => "GT302",
    gt303 => "GT303",
    gt401 => "GT401",
    gt402 => "GT402",
    gt403 => "GT403",
    gt501 => "GT501",
    gt502 => "GT502",
}
