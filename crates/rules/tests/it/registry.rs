//! Tests over the whole rule registry: codes, names, layers, severities and documentation. They
//! enumerate the registry; the one list of the rules with their code, name, layer and severity is the
//! `codes` snapshot, which a new rule changes (review its diff).

use gpu_trust_model::Layer;
use gpu_trust_rules::{registry, rule, DOC_SECTIONS};
use std::collections::BTreeSet;

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

/// The rule catalogue as the registry holds it: code, name, layer and severity of every rule.
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

/// Rule codes are written in rule files, their fixtures, generated files, documentation and tests,
/// and nowhere else in the product's code: what names a rule for something it answers for finds it
/// in the registry (`registry::Reports`), so renumbering or adding a rule touches its file only.
/// This walks every `src/` file of the workspace's crates and tools, up to its test module, leaves
/// out comments and the rule files, and fails on a `GTnnn` that names a rule of the registry.
#[test]
fn rule_codes_appear_only_in_rule_files() {
    // Examples of the syntax in help and error texts (they show how to write a code, and name no
    // rule's judgement), each with the code it shows.
    const EXAMPLES: &[(&str, &str)] = &[
        ("crates/cli/src/commands/explain.rs", "GT101"),
        ("crates/cli/src/config.rs", "GT502"),
        ("crates/ingest/src/annotations.rs", "GT202"),
        ("crates/policy/src/validate/accept.rs", "GT401"),
    ];
    // The admission table: which rule reports a sharing it refuses, the one place the audit's
    // pairwise rules and the planner read that decision from (the planner cannot depend on the rules
    // crate). `every_admission_row_names_a_registered_rule` ties each code there to the registry.
    const DECISION_TABLE: &str = "crates/model/src/isolation/admission.rs";
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let codes: BTreeSet<&str> = registry().iter().map(|r| r.code).collect();
    let mut files = Vec::new();
    for top in ["crates", "tools"] {
        let Ok(entries) = std::fs::read_dir(root.join(top)) else {
            continue;
        };
        for e in entries.flatten() {
            collect_rs(&e.path().join("src"), &mut files);
        }
    }
    assert!(files.len() > 100, "{} files", files.len());
    let mut found = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("crates/rules/src/rules/") || rel == DECISION_TABLE {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let product = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in product.lines().enumerate() {
            let code_part = line.split("//").next().unwrap_or("");
            let bytes = code_part.as_bytes();
            for (i, w) in bytes.windows(5).enumerate() {
                if !(w.starts_with(b"GT") && w[2..].iter().all(u8::is_ascii_digit)) {
                    continue;
                }
                let word = std::str::from_utf8(w).unwrap();
                let starts = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
                let ends = bytes.get(i + 5).is_none_or(|b| !b.is_ascii_digit());
                if starts
                    && ends
                    && codes.contains(word)
                    && !EXAMPLES.contains(&(rel.as_str(), word))
                {
                    found.push(format!("{rel}:{}: {word}", n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "rule codes written outside rule files (declare what the rule answers for in its \
         `declare_rule!` and read it from the registry): {found:#?}"
    );
}

fn collect_rs(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The fleet-wide scan of the stack's component versions (every workload's images) runs once per
/// audit, in the analysis, and the rules read its result: a rule that scanned again per node made a
/// 2,000-node audit take 55 s instead of 3 (docs/benchmarks.md, "Tenant views").
#[test]
fn the_stack_versions_are_scanned_once_per_audit() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect_rs(&src, &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let scanning: Vec<String> = files
        .iter()
        .filter(|p| !p.ends_with("analysis.rs"))
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|text| text.contains("stack::versions(")))
        .map(|p| p.display().to_string())
        .collect();
    assert!(scanning.is_empty(), "scan again: {scanning:?}");
}
