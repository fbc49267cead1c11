//! Fuzzes the cluster input path: the reader (YAML and JSON, multi-document, `kind: List`), then
//! ingestion into the fleet model and the audit over it. Any bytes must give objects, a fleet and a
//! report, or located diagnostics: never a panic or a hang.
#![no_main]

use gpu_trust_policy::{Date, Policy};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use gpu_trust_source::{read_all, Format, ReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for format in [Format::Yaml, Format::Json] {
        let options = ReadOptions {
            split_key: Some("items".to_string()),
            format,
            ..ReadOptions::default()
        };
        let _ = read_all(text, "fuzz.yaml", &options);
    }
    // The whole path a cluster file takes: auto-detected format, Kubernetes types, fleet model,
    // then every rule over whatever could be read.
    let ingested = gpu_trust_ingest::ingest_text(text, "fuzz.yaml");
    let tenancy = Policy::default().resolve(&ingested.fleet.namespaces);
    let options = AuditOptions::new(Date::parse("2026-12-01").expect("a valid date"));
    let report = audit(&AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    });
    let _ = serde_json::to_string(&report);
});
