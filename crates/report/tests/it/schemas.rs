//! The rendered JSON validates against the shipped JSON Schema, and the SARIF against the published
//! SARIF 2.1.0 schema (see tests/data/SOURCES.md).

use crate::common;

use common::{sample_report, sample_rules};
use gpu_trust_model::report::GroupLevel;
use gpu_trust_model::{Certainty, Incident, Layer, Severity, Trust};
use gpu_trust_report::audit::sarif::SarifOptions;
use gpu_trust_report::audit::{json, sarif};
use serde_json::Value;
use std::path::PathBuf;

fn load(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn audit_schema() -> Value {
    load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/audit-v2.schema.json"
    ))
}

fn errors(schema: &Value, instance: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn audit_json_validates_against_the_shipped_schema() {
    let schema = audit_schema();
    for report in [
        sample_report(false),
        sample_report(true),
        common::sample_decided_report(),
    ] {
        let doc: Value = serde_json::from_str(&json::render(&report).unwrap()).unwrap();
        let errs = errors(&schema, &doc);
        assert!(errs.is_empty(), "{errs:#?}");
    }
}

#[test]
fn the_schema_rejects_what_the_format_forbids() {
    let schema = audit_schema();
    let good: Value = serde_json::from_str(&json::render(&sample_report(false)).unwrap()).unwrap();

    let mut bad = good.clone();
    bad["findings"][0]["severity"] = "severe".into();
    assert!(
        !errors(&schema, &bad).is_empty(),
        "unknown severity accepted"
    );

    let mut bad = good.clone();
    bad["findings"][0]["surprise"] = true.into();
    assert!(!errors(&schema, &bad).is_empty(), "unknown field accepted");

    let mut bad = good.clone();
    bad["schema"] = "gpu-trust/audit/v1".into();
    assert!(
        !errors(&schema, &bad).is_empty(),
        "other schema version accepted"
    );

    let mut bad = good.clone();
    bad.as_object_mut().unwrap().remove("skipped");
    assert!(
        !errors(&schema, &bad).is_empty(),
        "missing skipped accepted"
    );

    // The aggregated form: a group has two tenants at least, a finding's pairs are counted from one,
    // a matrix pair names two tenants and at least one incident, a group id is g1, g2...
    let mut bad = good.clone();
    bad["groups"][0]["tenants"]
        .as_array_mut()
        .unwrap()
        .truncate(1);
    assert!(
        !errors(&schema, &bad).is_empty(),
        "one-tenant group accepted"
    );
    let mut bad = good.clone();
    bad["findings"][0]["pairs"] = 0.into();
    assert!(!errors(&schema, &bad).is_empty(), "zero pairs accepted");
    let mut bad = good.clone();
    bad["findings"][0]["groups"][0] = "pool".into();
    assert!(!errors(&schema, &bad).is_empty(), "bad group id accepted");
    let mut bad = good.clone();
    bad["matrix"]["pairs"][0]["incidents"] = serde_json::json!({});
    assert!(
        !errors(&schema, &bad).is_empty(),
        "a matrix pair without incidents accepted"
    );
    let mut bad = good.clone();
    bad["matrix"]["pairs"][0]["incidents"] = serde_json::json!({"meltdown": "observed"});
    assert!(
        !errors(&schema, &bad).is_empty(),
        "unknown incident accepted"
    );
    let mut bad = good.clone();
    bad["blastRadius"][0]["reaches"] = serde_json::json!(["globex"]);
    assert!(
        !errors(&schema, &bad).is_empty(),
        "v1 reaches list accepted"
    );
    // Where an acceptance comes from: a policy entry or an annotation, with its place.
    let accepted = good["findings"]
        .as_array()
        .unwrap()
        .iter()
        .position(|f| f["accepted"]["sources"].is_array())
        .expect("the sample has an accepted finding with its sources");
    let mut bad = good.clone();
    bad["findings"][accepted]["accepted"]["sources"][0]["from"] = "comment".into();
    assert!(
        !errors(&schema, &bad).is_empty(),
        "unknown acceptance source accepted"
    );
    let mut bad = good.clone();
    bad["findings"][accepted]["accepted"]["sources"][0]
        .as_object_mut()
        .unwrap()
        .remove("line");
    assert!(
        !errors(&schema, &bad).is_empty(),
        "an acceptance source without its line accepted"
    );
    let mut bad = good;
    bad.as_object_mut().unwrap().remove("matrix");
    assert!(!errors(&schema, &bad).is_empty(), "missing matrix accepted");
}

/// Every value the model can serialise is one the schema allows: the schema and the Rust types agree.
#[test]
fn the_schema_enums_match_the_model() {
    let schema = audit_schema();
    let enum_of = |def: &str| -> Vec<String> {
        schema["$defs"][def]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{def} has no enum"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let ser = |v: Value| v.as_str().unwrap().to_string();
    let layers: Vec<String> = Layer::ALL
        .iter()
        .map(|x| ser(serde_json::to_value(x).unwrap()))
        .collect();
    assert_eq!(layers, enum_of("layer"));
    let severities: Vec<String> = Severity::ALL
        .iter()
        .map(|x| ser(serde_json::to_value(x).unwrap()))
        .collect();
    assert_eq!(severities, enum_of("severity"));
    let incidents: Vec<String> = Incident::ALL
        .iter()
        .map(|x| ser(serde_json::to_value(x).unwrap()))
        .collect();
    assert_eq!(incidents, enum_of("incident"));
    let certainties: Vec<String> = [
        Certainty::Observed,
        Certainty::Possible,
        Certainty::Permitted,
    ]
    .iter()
    .map(|x| ser(serde_json::to_value(x).unwrap()))
    .collect();
    assert_eq!(certainties, enum_of("certainty"));
    let trusts: Vec<String> = [Trust::None, Trust::Limited, Trust::Full]
        .iter()
        .map(|x| ser(serde_json::to_value(x).unwrap()))
        .collect();
    assert_eq!(trusts, enum_of("trust"));
    let mechanisms: Vec<String> = gpu_trust_model::isolation::Mechanism::ALL
        .iter()
        .map(|x| ser(serde_json::to_value(x).unwrap()))
        .collect();
    assert_eq!(mechanisms, enum_of("mechanism"));
    let levels: Vec<String> = [
        GroupLevel::Device,
        GroupLevel::MigGpu,
        GroupLevel::Node,
        GroupLevel::ControlPlane,
    ]
    .iter()
    .map(|x| ser(serde_json::to_value(x).unwrap()))
    .collect();
    let level_enum: Vec<String> = schema["$defs"]["group"]["properties"]["level"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(levels, level_enum);
}

/// The published SARIF 2.1.0 schema, with one repair: its `language` patterns
/// `^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$` have a stray `]` that a strict regex dialect rejects when
/// the schema is compiled; they are replaced by the language-tag pattern they mean. The file stays as
/// published.
fn sarif_schema() -> Value {
    const PUBLISHED: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    const REPAIRED: &str = "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$";
    fn repair(v: &mut Value) -> usize {
        match v {
            Value::String(s) if s == PUBLISHED => {
                *s = REPAIRED.to_string();
                1
            }
            Value::Array(items) => items.iter_mut().map(repair).sum(),
            Value::Object(map) => map.values_mut().map(repair).sum(),
            _ => 0,
        }
    }
    let mut schema = load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sarif-schema-2.1.0.json"
    ));
    assert!(repair(&mut schema) > 0, "the schema file changed");
    schema
}

#[test]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let schema = sarif_schema();
    let mut options = SarifOptions::new("0.1.0", PathBuf::from("/src/platform"));
    options.fallback_file = Some("examples/inference/policy.yaml".into());
    for skipped in [false, true] {
        let text = sarif::render(&sample_report(skipped), &sample_rules(), &options).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let errs = errors(&schema, &doc);
        assert!(errs.is_empty(), "{errs:#?}");
    }
}

#[test]
fn the_sarif_schema_catches_a_broken_log() {
    let schema = sarif_schema();
    let options = SarifOptions::new("0.1.0", PathBuf::from("/src"));
    let text = sarif::render(&sample_report(false), &sample_rules(), &options).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    assert!(!errors(&schema, &doc).is_empty(), "startLine 0 accepted");
}
