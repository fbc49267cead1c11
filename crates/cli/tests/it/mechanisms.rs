//! `gpu-trust mechanisms`: the isolation model as users read it.

use assert_cmd::Command;
use serde_json::Value;

fn mechanisms_json() -> Value {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["mechanisms", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

fn cell<'a>(doc: &'a Value, mechanism: &str, property: &str) -> &'a Value {
    let m = doc["mechanisms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == mechanism)
        .unwrap_or_else(|| panic!("no mechanism {mechanism}"));
    m["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["property"] == property)
        .unwrap_or_else(|| panic!("no property {property}"))
}

#[test]
fn time_slicing_shares_memory_and_the_whole_gpu_fault_domain() {
    let doc = mechanisms_json();
    assert_eq!(
        cell(&doc, "time-slicing", "memory-capacity")["enforcement"],
        "shared"
    );
    let fault = cell(&doc, "time-slicing", "fault-domain");
    assert_eq!(fault["enforcement"], "shared");
    assert!(fault["note"].as_str().unwrap().contains("whole GPU"));
}

#[test]
fn mig_instances_keep_memory_and_faults_separate() {
    let doc = mechanisms_json();
    assert_eq!(
        cell(&doc, "mig-instance", "memory-capacity")["enforcement"],
        "separate"
    );
    assert_eq!(
        cell(&doc, "mig-instance", "fault-domain")["enforcement"],
        "separate"
    );
}

#[test]
fn fractions_are_accounting_not_protection() {
    let doc = mechanisms_json();
    assert_eq!(
        cell(&doc, "hami-vgpu", "memory-capacity")["enforcement"],
        "limited-in-software"
    );
    assert_eq!(
        cell(&doc, "kai-fraction", "memory-capacity")["enforcement"],
        "not-enforced"
    );
}

#[test]
fn every_fact_has_a_source() {
    let doc = mechanisms_json();
    for m in doc["mechanisms"].as_array().unwrap() {
        for p in m["properties"].as_array().unwrap() {
            assert!(!p["source"].as_str().unwrap().is_empty(), "{m}");
        }
    }
}

#[test]
fn table_names_the_mechanisms_and_dra_mapping() {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["mechanisms", "--mechanism", "mps"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("every client of the MPS server"));
    assert!(text.contains("TimeSlicing -> time-slicing"));
}

#[test]
fn unknown_mechanism_is_a_usage_error() {
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["mechanisms", "--mechanism", "magic"])
        .assert()
        .code(2);
}
