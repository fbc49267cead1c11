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

/// A crate's source files by module path (`["rules", "device"]` for `src/rules/device/mod.rs`, none
/// for `lib.rs` and `main.rs`), each with its text before its test module.
fn modules(src: &Path) -> BTreeMap<Vec<String>, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out: BTreeMap<Vec<String>, String> = BTreeMap::new();
    for file in files {
        let rel = file
            .strip_prefix(src)
            .expect("a file of src")
            .with_extension("");
        let mut path: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into()).collect();
        if matches!(
            path.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            path.pop();
        }
        let text = std::fs::read_to_string(&file).expect("a source file");
        out.entry(path).or_default().push_str(&text);
    }
    out
}

/// The module paths a module's code names with `crate::` or `super::` (a `use` group's items each),
/// comments and the test module left out.
fn named_paths(module: &[String], text: &str) -> Vec<Vec<String>> {
    let code: String = text
        .lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let segments = |s: &str| -> Vec<String> {
        s.split("::")
            .map(|p| p.trim().split(|c: char| !ident(c)).next().unwrap_or(""))
            .take_while(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find(['c', 's']) {
        let (before, from) = rest.split_at(at);
        let starts = !before.ends_with(|c: char| ident(c) || c == ':');
        let head = ["crate::", "super::"]
            .into_iter()
            .find(|h| from.starts_with(h));
        let Some(head) = head.filter(|_| starts) else {
            rest = &from[1..];
            continue;
        };
        let end = from
            .find(|c: char| !(ident(c) || c == ':'))
            .unwrap_or(from.len());
        let mut base: Vec<String> = module.to_vec();
        base.pop();
        if head == "crate::" {
            base.clear();
        }
        let mut path = segments(&from[head.len()..end]);
        while path.first().is_some_and(|s| s == "super") {
            path.remove(0);
            base.pop();
        }
        base.extend(path);
        let mut named = vec![base.clone()];
        if from[end..].starts_with('{') {
            let group = &from[end + 1..];
            let (mut depth, mut item) = (0, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        named.push([base.clone(), segments(&item)].concat());
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            named.push([base.clone(), segments(&item)].concat());
        }
        out.extend(named);
        rest = &from[end.max(1)..];
    }
    out
}

/// The loops between a crate's files: each a list of modules every one of which names the next,
/// through `use`, a path in code or a `pub use` re-export. A module naming its own parent or child
/// (`super::helper`, a folder's `mod.rs` calling its files) is one module split over files, not a
/// loop.
fn loops(modules: &BTreeMap<Vec<String>, String>) -> Vec<Vec<String>> {
    let related = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    let edges: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> = modules
        .iter()
        .map(|(module, text)| {
            let targets = named_paths(module, text)
                .into_iter()
                .filter_map(|path| {
                    (0..=path.len())
                        .rev()
                        .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
                })
                .filter(|target| !related(target, module))
                .collect();
            (module, targets)
        })
        .collect();
    let reach = |from: &Vec<String>| {
        let mut seen: BTreeSet<&Vec<String>> = BTreeSet::new();
        let mut todo: Vec<&Vec<String>> = edges[from].iter().copied().collect();
        while let Some(m) = todo.pop() {
            if seen.insert(m) {
                todo.extend(edges[m].iter().copied());
            }
        }
        seen
    };
    let reaches: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> =
        modules.keys().map(|m| (m, reach(m))).collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    for (m, r) in &reaches {
        let name = |k: &Vec<String>| format!("crate::{}", k.join("::"));
        let ring: Vec<String> = r
            .iter()
            .filter(|o| reaches[*o].contains(m))
            .map(|o| name(o))
            .collect();
        if r.contains(m) && !found.contains(&ring) {
            found.push(ring);
        }
    }
    found
}

#[test]
fn no_crate_has_a_loop_between_its_files() {
    let mut problems = Vec::new();
    for (name, manifest) in crates() {
        let src = manifest.parent().expect("a crate folder").join("src");
        if src.is_dir() {
            for ring in loops(&modules(&src)) {
                problems.push(format!("{name}: {} name each other", ring.join(", ")));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_loop_check_would_catch_a_loop_behind_re_exports() {
    let crate_of = |files: &[(&str, &str)]| -> BTreeMap<Vec<String>, String> {
        let path = |m: &str| {
            m.split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        };
        files
            .iter()
            .map(|(m, text)| (path(m), text.to_string()))
            .collect()
    };
    // The loop the rules crate once had: the report re-exported the coverage, whose rules' registry
    // re-exported the sink, which named a type of the report.
    let looped = crate_of(&[
        (
            "",
            "pub mod report;\npub mod coverage;\npub mod registry;\npub mod sink;",
        ),
        ("report", "pub use crate::coverage::Coverage;"),
        (
            "coverage",
            "use crate::registry::{codes_reporting, Reports};",
        ),
        ("registry", "pub use crate::sink::{Reports, RuleMeta};"),
        ("sink", "pub sources: Vec<crate::report::AcceptanceSource>,"),
    ]);
    assert_eq!(
        loops(&looped),
        vec![vec![
            "crate::coverage".to_string(),
            "crate::registry".to_string(),
            "crate::report".to_string(),
            "crate::sink".to_string(),
        ]]
    );
    // Through `super::` and a `use` group, from a nested module.
    let nested = crate_of(&[
        ("rules", "mod common; mod wording;"),
        ("rules::common", "pub use super::wording::Wording;"),
        (
            "rules::wording",
            "use super::{common::{Share, Tally}, tally};",
        ),
        ("rules::tally", ""),
    ]);
    assert_eq!(loops(&nested).len(), 1);
    // Not a loop: a folder's module and its files, a comment, the test module.
    let split = crate_of(&[
        (
            "audit",
            "mod table; pub fn f() { crate::audit::table::g() }",
        ),
        ("audit::table", "use super::f; // crate::other::x\n"),
        (
            "other",
            "use crate::audit::f;\n#[cfg(test)]\nmod tests { use crate::audit::table::g; }",
        ),
    ]);
    assert!(loops(&split).is_empty(), "{:?}", loops(&split));
}
