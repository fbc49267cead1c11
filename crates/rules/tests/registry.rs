//! Tests over the whole rule registry: codes, names, layers, severities and documentation.

use gpu_trust_model::Layer;
use gpu_trust_rules::{registry, rule, DOC_SECTIONS};
use std::collections::BTreeSet;

/// The catalogue (the product's rule catalogue, `rules.md`): code, name, layer, severity as stated.
const CATALOGUE: &[(&str, &str, &str, &str)] = &[
    ("GT001", "unknown-gpu-model", "device", "low"),
    ("GT002", "missing-sharing-config", "device", "medium"),
    ("GT003", "expired-acceptance", "contract", "medium"),
    ("GT004", "acceptance-without-reason", "contract", "medium"),
    (
        "GT101",
        "untrusted-share-time-sliced-gpu",
        "device",
        "none→critical, limited→high",
    ),
    (
        "GT102",
        "untrusted-share-mps",
        "device",
        "none→critical, limited→high",
    ),
    (
        "GT103",
        "untrusted-share-mig-instance",
        "device",
        "none→critical, limited→high",
    ),
    ("GT104", "distrusting-share-mig-gpu", "device", "high"),
    (
        "GT105",
        "fraction-is-accounting",
        "device",
        "none→critical, limited→high",
    ),
    ("GT106", "training-on-shared-gpu", "device", "high"),
    (
        "GT107",
        "greedy-reservation-on-shared-gpu",
        "device",
        "high",
    ),
    ("GT108", "invalid-mig-geometry", "device", "high"),
    ("GT109", "slice-below-peak", "device", "medium"),
    ("GT110", "wide-blast-radius", "device", "low"),
    (
        "GT111",
        "latency-critical-on-shared-compute",
        "device",
        "medium",
    ),
    ("GT112", "mps-client-fault-domain", "device", "info"),
    (
        "GT201",
        "vulnerable-container-toolkit",
        "host",
        "critical if tenants with trust below full share the node, else high",
    ),
    (
        "GT202",
        "privileged-tenant-pod-on-gpu-node",
        "host",
        "critical",
    ),
    ("GT203", "visible-devices-without-request", "host", "high"),
    ("GT204", "host-namespaces-on-gpu-node", "host", "high"),
    ("GT205", "driver-outside-patch-window", "host", "high"),
    (
        "GT206",
        "tenant-namespace-without-pod-security",
        "host",
        "medium",
    ),
    ("GT207", "distrusting-share-node", "host", "high"),
    ("GT208", "unknown-host-versions", "host", "low"),
    (
        "GT301",
        "confidential-tenant-without-cc",
        "confidentiality",
        "high",
    ),
    (
        "GT302",
        "cc-with-partial-allocation",
        "confidentiality",
        "high",
    ),
    (
        "GT303",
        "confidential-tenant-without-attestation",
        "confidentiality",
        "medium",
    ),
    (
        "GT401",
        "distrusting-share-api-server",
        "control-plane",
        "medium",
    ),
    (
        "GT402",
        "tenant-can-repartition-gpus",
        "control-plane",
        "critical",
    ),
    (
        "GT403",
        "tenant-can-write-cluster-scope",
        "control-plane",
        "high",
    ),
    (
        "GT501",
        "isolation-promised-not-enforced",
        "contract",
        "critical",
    ),
    ("GT502", "shared-not-isolated", "contract", "info"),
];

#[test]
fn codes_are_unique_and_sorted() {
    let codes: Vec<&str> = registry().iter().map(|r| r.code).collect();
    let unique: BTreeSet<&str> = codes.iter().copied().collect();
    assert_eq!(unique.len(), codes.len(), "duplicate codes in {codes:?}");
    let mut sorted = codes.clone();
    sorted.sort();
    assert_eq!(codes, sorted, "the registry is in code order");
    let names: BTreeSet<&str> = registry().iter().map(|r| r.name).collect();
    assert_eq!(names.len(), codes.len(), "duplicate names");
}

#[test]
fn registry_matches_the_catalogue() {
    let got: Vec<(String, String, String, String)> = registry()
        .iter()
        .map(|r| {
            (
                r.code.to_string(),
                r.name.to_string(),
                r.layer.to_string(),
                r.severity.to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String, String, String)> = CATALOGUE
        .iter()
        .map(|(c, n, l, s)| (c.to_string(), n.to_string(), l.to_string(), s.to_string()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn codes_sit_in_their_layer_range() {
    for r in registry() {
        let digit = r.code.as_bytes()[2];
        let expected: &[Layer] = match digit {
            b'0' => &[Layer::Device, Layer::Contract],
            b'1' => &[Layer::Device],
            b'2' => &[Layer::Host],
            b'3' => &[Layer::Confidentiality],
            b'4' => &[Layer::ControlPlane],
            b'5' => &[Layer::Contract],
            _ => panic!("{}: unknown range", r.code),
        };
        assert!(
            expected.contains(&r.layer),
            "{} is in layer {}",
            r.code,
            r.layer
        );
    }
}

#[test]
fn every_doc_has_every_section_in_order() {
    for r in registry() {
        let doc = r.documentation();
        let mut last = 0;
        for s in DOC_SECTIONS {
            let heading = format!("## {s}");
            let at = doc
                .find(&heading)
                .unwrap_or_else(|| panic!("{}: no section {s}", r.code));
            assert!(at >= last, "{}: section {s} out of order", r.code);
            last = at;
            let body = r.section(s).unwrap_or_default();
            assert!(
                body.len() > 20,
                "{}: section {s} is nearly empty: {body:?}",
                r.code
            );
        }
        assert!(
            !doc.lines()
                .any(|l| l.starts_with(' ') && !l.starts_with("  ")),
            "{}: the doc keeps rustdoc's leading space",
            r.code
        );
        assert!(
            r.section("Example").unwrap_or_default().contains("```"),
            "{}: example has no code",
            r.code
        );
        assert!(
            !r.summary.ends_with('.'),
            "{}: summary ends with a period",
            r.code
        );
    }
}

#[test]
fn rules_are_found_by_code_without_case() {
    assert_eq!(
        rule("gt101").map(|r| r.name),
        Some("untrusted-share-time-sliced-gpu")
    );
    assert_eq!(rule(" GT502 ").map(|r| r.code), Some("GT502"));
    assert!(rule("GT999").is_none());
}

#[test]
fn code_list_snapshot() {
    let lines: Vec<String> = registry()
        .iter()
        .map(|r| format!("{} {} [{}] {}", r.code, r.name, r.layer, r.severity))
        .collect();
    insta::assert_snapshot!("codes", lines.join("\n"));
}

#[test]
fn explain_page_snapshot() {
    let r = rule("GT101").unwrap();
    insta::assert_snapshot!("explain_gt101", r.documentation());
}
