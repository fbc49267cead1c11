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

/// What renderers are made of. The binary parses arguments, reads input, calls the libraries, writes
/// what they return and sets the exit code; every table, wire shape and piece of report text is built
/// in `gpu-trust-report` (one module per command and format). A file of `crates/cli/src` using one of
/// these is rendering, and belongs there.
const RENDERING: &[(&str, &str)] = &[
    ("comfy_table", "builds a table"),
    ("anstyle", "styles text"),
    ("Serialize", "defines or uses a wire shape"),
    ("serde_json::to_", "serializes a document"),
    ("to_string_pretty", "serializes a document"),
    ("serde_saphyr::to_", "serializes a document"),
    ("json!", "builds a document"),
    (".push_str(", "assembles output text piece by piece"),
    ("writeln!(", "assembles output text line by line"),
];

/// The crates that only renderers need, which the binary must not depend on.
const RENDERING_CRATES: &[&str] = &["comfy-table", "anstyle", "anstream"];

/// The rendering constructs in Rust source, comments and test code left out: (line, construct, what
/// it does). Besides the markers above, two shapes of `format!`-only rendering are caught: a format
/// spec with a width or an alignment (`{:<8}`, `{:>w$}`), which lays out columns, and lines joined with
/// a newline, which assembles a multi-line text.
fn rendering_in(source: &str) -> Vec<(usize, &'static str, &'static str)> {
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            // Test modules close a file; what they print is a test's message, not output.
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        for (marker, why) in RENDERING {
            let hit = if marker.chars().all(char::is_alphanumeric) {
                // A word: `Serialize`, not `Deserialize`.
                code.match_indices(marker).any(|(at, _)| {
                    let before = code[..at].chars().next_back();
                    let after = code[at + marker.len()..].chars().next();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            } else {
                code.contains(marker)
            };
            if hit {
                found.push((n + 1, *marker, *why));
            }
        }
        if has_width_or_alignment(code) {
            found.push((n + 1, "{:<width}", "lays out columns"));
        }
        if code.contains(r#".join("\n")"#) {
            found.push((n + 1, r#".join("\n")"#, "assembles a multi-line text"));
        }
    }
    found
}

/// Whether a line holds a format spec with a fill, an alignment or a width: `{:<8}`, `{name:>w$}`,
/// `{:08}`, `{:^10}`. Precision alone (`{:.1}`) and debug output (`{:?}`, `{:#?}`) are not layout.
fn has_width_or_alignment(code: &str) -> bool {
    let mut rest = code;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(escaped) = after.strip_prefix('{') {
            rest = escaped;
            continue;
        }
        let Some(close) = after.find('}') else {
            return false;
        };
        let inner = &after[..close];
        if let Some((_, spec)) = inner.split_once(':') {
            let mut chars = spec.chars();
            let first = chars.next();
            let second = chars.next();
            let aligned = |c: Option<char>| matches!(c, Some('<' | '>' | '^'));
            let width = first.is_some_and(|c| c.is_ascii_digit())
                || spec.ends_with('$') && !spec.starts_with('.');
            if aligned(first) || aligned(second) || width {
                return true;
            }
        }
        rest = &after[close + 1..];
    }
    false
}

/// The files of `src` that only tests compile (`#[cfg(test)] mod name;` in `main.rs`).
fn test_only_files(src: &Path) -> Vec<PathBuf> {
    let main = std::fs::read_to_string(src.join("main.rs")).expect("main.rs");
    let lines: Vec<&str> = main.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| w[1].strip_prefix("mod ")?.strip_suffix(';'))
        .map(|name| src.join(format!("{name}.rs")))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a source folder")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_binary_holds_no_renderer() {
    let src = root().join("crates/cli/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 10 && files.iter().any(|f| f.ends_with("commands/inventory.rs")),
        "the CLI's sources were not found: {files:?}"
    );
    let tests_only = test_only_files(&src);
    assert!(
        tests_only.iter().any(|f| f.ends_with("cli_contract.rs")),
        "the test-only modules of main.rs were not found: {tests_only:?}"
    );
    let mut problems = Vec::new();
    for file in files.iter().filter(|f| !tests_only.contains(f)) {
        let text = std::fs::read_to_string(file).expect("a source file");
        for (line, marker, why) in rendering_in(&text) {
            problems.push(format!(
                "{}:{line}: `{marker}` {why}: renderers live in crates/report",
                file.display()
            ));
        }
    }
    let manifest =
        std::fs::read_to_string(root().join("crates/cli/Cargo.toml")).expect("Cargo.toml");
    let dependencies = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|d| d.split("\n[").next())
        .unwrap_or("");
    for name in RENDERING_CRATES {
        if dependencies.lines().any(|l| {
            l.trim_start().starts_with(&format!("{name}."))
                || l.trim_start().starts_with(&format!("{name} "))
        }) {
            problems.push(format!(
                "crates/cli/Cargo.toml depends on {name}, which only renderers need"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_renderer_check_would_catch_a_renderer_moved_back() {
    // The renderers the binary once held, as they are now in the report crate: each is caught.
    for moved in [
        "inventory/table.rs",
        "inventory/yaml.rs",
        "catalogue/json.rs",
        "catalogue/table.rs",
        "mechanisms/json.rs",
        "mechanisms/table.rs",
        "policy/table.rs",
        "plan/table.rs",
        "audit/coverage.rs",
        "text.rs",
        "probe/table.rs",
    ] {
        let text = std::fs::read_to_string(root().join("crates/report/src").join(moved))
            .expect("a renderer of the report crate");
        assert!(
            !rendering_in(&text).is_empty(),
            "the check sees no rendering in crates/report/src/{moved}"
        );
    }
    // Words are matched whole, and comments are left out.
    assert!(rendering_in("#[derive(Deserialize)] // Serialize").is_empty());
    assert_eq!(rendering_in("#[derive(Serialize)]").len(), 1);
    assert_eq!(rendering_in("    out.push_str(&line);").len(), 1);
    // A renderer made of `format!` alone: columns, or lines joined into one text.
    assert_eq!(rendering_in(r#"format!("{:<w$}  {}", a, b)"#).len(), 1);
    assert_eq!(rendering_in(r#"format!("{name:>8} {count:05}")"#).len(), 1);
    assert_eq!(rendering_in(r#"let text = rows.join("\n");"#).len(), 1);
    // A message with its values is not layout, nor is a test module's text.
    assert!(rendering_in(r#"format!("{path}: `{id}` {:?} {:.1} {{literal}}", x, y)"#).is_empty());
    assert!(rendering_in("#[cfg(test)]\nmod tests { fn f() { out.push_str(x); } }").is_empty());
}
