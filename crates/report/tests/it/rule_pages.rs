//! The rule pages, `docs/rules/GTxxx.md` and their index `docs/rules/README.md`, are generated from
//! the registry's documentation (`gpu_trust_report::rules::page`): this test fails when a checked-in
//! page differs from what the registry says, when a rule has no page, or when a page names no rule.
//! Refresh them as snapshots are refreshed: `INSTA_UPDATE=always cargo test -p gpu-trust-report
//! --test it rule_pages` (never under `CI=true`), then read the diff.

use gpu_trust_report::{registry_docs, rules};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules")
}

fn updating() -> bool {
    std::env::var_os("CI").is_none() && std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always")
}

#[test]
fn rule_pages_are_in_sync_with_the_registry() {
    let docs = registry_docs();
    let mut expected: BTreeMap<String, String> = docs
        .iter()
        .map(|r| (format!("{}.md", r.code), rules::page(r)))
        .collect();
    expected.insert("README.md".into(), rules::pages_index(&docs));

    let dir = folder();
    if updating() {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !expected.contains_key(&name) {
                std::fs::remove_file(&path).unwrap();
            }
        }
        for (name, text) in &expected {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }

    let mut problems = Vec::new();
    for (name, text) in &expected {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(found) if found == *text => {}
            Ok(_) => problems.push(format!("docs/rules/{name} differs from the registry")),
            Err(_) => problems.push(format!("docs/rules/{name} is missing")),
        }
    }
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !expected.contains_key(&name) {
            problems.push(format!("docs/rules/{name} names no rule of the registry"));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\nrefresh with INSTA_UPDATE=always cargo test -p gpu-trust-report --test it rule_pages",
        problems.join("\n")
    );
}

/// A page holds the rule's whole documentation under its code and name, and the index links every
/// page.
#[test]
fn a_page_is_the_rules_documentation() {
    let docs = registry_docs();
    let index = rules::pages_index(&docs);
    for r in &docs {
        let page = rules::page(r);
        assert!(page.contains(&format!("\n# {} {}\n", r.code, r.name)));
        assert!(page.contains(r.documentation.trim()));
        assert!(page.contains(&format!("| layer | {} |", r.layer.as_str())));
        assert!(index.contains(&format!("[{}]({}.md)", r.code, r.code)));
    }
}
