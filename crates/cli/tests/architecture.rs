//! The import table of ARCHITECTURE.md ("What may import what") is the rule, and this test holds the
//! crates to it: every `gpu-trust-*` crate a library depends on (outside its dev-dependencies) must be
//! one the table allows, the tools depend on no crate of the product, and every crate of the workspace
//! has a row. A new dependency that climbs the pipeline fails here, with the row to change named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The table: crate (short name) -> the crates it may depend on. "everything" and "nothing of the
/// product" are read as such; a parenthesis ("(and ingest/rules in tests only)") names dev-only
/// allowances, which this test does not need since dev-dependencies are not checked.
fn table() -> BTreeMap<String, Option<BTreeSet<String>>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text
        .find("## What may import what")
        .expect("ARCHITECTURE.md has a 'What may import what' section");
    let mut rows = BTreeMap::new();
    for line in text[start..].lines().skip(1) {
        if line.starts_with("## ") {
            break;
        }
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        if cells.len() != 2 || cells[0].trim() == "crate" || cells[0].contains("---") {
            continue;
        }
        let allowed = cells[1].split('(').next().unwrap_or("").trim();
        let allowed = match allowed {
            "everything" => None,
            a if a.starts_with("nothing") || a == "serde only" => Some(BTreeSet::new()),
            a => Some(
                a.split(',')
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty())
                    .collect(),
            ),
        };
        for name in cells[0].split(',') {
            rows.insert(name.trim().to_string(), allowed.clone());
        }
    }
    rows
}

/// The `gpu-trust-*` crates a manifest depends on outside `[dev-dependencies]` and `[build-dependencies]`
/// (short names: `gpu-trust-model` is `model`).
fn product_dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).expect("Cargo.toml");
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        if !in_deps {
            continue;
        }
        let key = line.split(['=', '.', ' ']).next().unwrap_or("");
        if let Some(short) = key.strip_prefix("gpu-trust-") {
            out.insert(short.to_string());
        } else if key == "gpu-trust" {
            out.insert("cli".to_string());
        }
    }
    out
}

/// Every crate of the workspace: (short name in the table, manifest).
fn crates() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in ["crates", "tools"] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let manifest = entry.path().join("Cargo.toml");
            if !manifest.is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            out.push((name, manifest));
        }
    }
    out.sort();
    out
}

#[test]
fn every_crate_depends_only_on_what_the_architecture_table_allows() {
    let table = table();
    assert!(
        table.contains_key("model") && table.contains_key("cli"),
        "the import table was not found or not read: {table:?}"
    );
    let mut problems = Vec::new();
    for (name, manifest) in crates() {
        let Some(allowed) = table.get(&name) else {
            problems.push(format!(
                "{name}: no row in ARCHITECTURE.md's 'What may import what' table"
            ));
            continue;
        };
        let Some(allowed) = allowed else { continue };
        for dep in product_dependencies(&manifest) {
            if !allowed.contains(&dep) {
                problems.push(format!(
                    "{name} depends on {dep}, which its row of the import table does not allow ({})",
                    manifest.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_reads_dependencies_and_would_catch_an_upward_import() {
    // The parser must see the real edges, or the test above would pass on nothing.
    let report = product_dependencies(&root().join("crates/report/Cargo.toml"));
    assert!(
        report.contains("rules") && report.contains("model"),
        "{report:?}"
    );
    // The rules crate tests with ingest (fixtures are read as clusters) but does not depend on it.
    let rules = product_dependencies(&root().join("crates/rules/Cargo.toml"));
    assert!(rules.contains("policy"), "{rules:?}");
    assert!(
        !rules.contains("ingest"),
        "dev-dependencies are not edges: {rules:?}"
    );
    let table = table();
    let rules_may = table["rules"].as_ref().expect("rules has a list");
    assert!(
        !rules_may.contains("report"),
        "rules importing report would be caught"
    );
}
