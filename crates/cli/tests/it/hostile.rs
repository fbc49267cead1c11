//! The hostile-input corpus (tests/hostile/): every file must be refused with a located error and exit 2,
//! by every command that reads cluster input, quickly and without a panic.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "corpus went missing: {files:?}");
    files
}

/// Runs one command on one file and checks the contract: exit 2, no panic, an error naming the file and a
/// line number (`line`, when given). Says what broke the contract.
fn refusal(command: &str, file: &Path, line: Option<usize>) -> Result<(), String> {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .arg(command)
        .arg(file)
        // A hang is a failure: nothing in the corpus may take long.
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(2) {
        return Err(format!(
            "{command} {name}: expected exit 2, got {:?}\nstderr: {stderr}",
            out.status.code()
        ));
    }
    if stderr.contains("panicked") {
        return Err(format!("{command} {name} panicked: {stderr}"));
    }
    let located = stderr.lines().any(|l| {
        l.find(&name).is_some_and(|i| {
            let rest = &l[i + name.len()..];
            match line {
                Some(n) => rest.starts_with(&format!(":{n}:")),
                None => {
                    rest.starts_with(':') && rest[1..].starts_with(|c: char| c.is_ascii_digit())
                }
            }
        })
    });
    if !located {
        let want = line.map_or("file:line".to_string(), |n| format!("{name}:{n}"));
        return Err(format!(
            "{command} {name}: the error must name {want}\nstderr: {stderr}"
        ));
    }
    Ok(())
}

fn refuses(command: &str, file: &Path) {
    if let Err(e) = refusal(command, file, None) {
        panic!("{e}");
    }
}

#[test]
fn inventory_refuses_every_hostile_input_with_a_location() {
    for file in corpus() {
        refuses("inventory", &file);
    }
}

#[test]
fn audit_refuses_every_hostile_input_with_a_location() {
    for file in corpus() {
        refuses("audit", &file);
    }
}

#[test]
fn oversized_scalar_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge-scalar.yaml");
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, namespace: default}}\ndata:\n  blob: {}\n",
        "A".repeat(40 << 20)
    );
    std::fs::write(&file, text).unwrap();
    refuses("audit", &file);
}

#[test]
fn skip_invalid_still_lists_the_hostile_document() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(
        &good,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tenant-a\n",
    )
    .unwrap();
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/alias-bomb.yaml");
    std::fs::copy(&bad, dir.path().join("alias-bomb.yaml")).unwrap();
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["inventory", "--skip-invalid", "--format", "json"])
        .arg(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("alias-bomb.yaml"), "{stdout}");
}

/// One field of `typed/fields.yaml` given a value of the wrong type: the text, and the line of the
/// field.
struct Mutation {
    line: usize,
    text: String,
    what: String,
}

/// Every wrong-type mutation of a block-style YAML text: a scalar value becomes a mapping, a
/// sequence item a mapping, and a block collection (the lines indented under its key) a string.
fn wrong_type_mutations(base: &str) -> Vec<Mutation> {
    let lines: Vec<&str> = base.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "---" {
            continue;
        }
        let body = trimmed.strip_prefix("- ").unwrap_or(trimmed);
        // The column of the key (or of the item's scalar): a block value's lines are indented further.
        let column = line.len() - body.len();
        let prefix = &line[..column];
        let with = |new_line: String, drop_block: bool| {
            let mut text: Vec<String> = lines[..i].iter().map(|l| l.to_string()).collect();
            text.push(new_line);
            let mut j = i + 1;
            while drop_block && j < lines.len() && indent(lines[j]) > column {
                j += 1;
            }
            text.extend(lines[j..].iter().map(|l| l.to_string()));
            text.join("\n") + "\n"
        };
        let (line_no, text, what) = match body.split_once(':') {
            Some((key, value)) if value.trim().is_empty() => (
                i + 1,
                with(format!("{prefix}{key}: wrong-type"), true),
                format!("`{key}` as a string"),
            ),
            Some((key, _)) => (
                i + 1,
                with(format!("{prefix}{key}: {{wrong: [type]}}"), false),
                format!("`{key}` as a mapping"),
            ),
            None => (
                i + 1,
                with(format!("{prefix}{{wrong: [type]}}"), false),
                format!("sequence item `{body}` as a mapping"),
            ),
        };
        out.push(Mutation {
            line: line_no,
            text,
            what,
        });
    }
    out
}

/// "Wrong types in every field we read": each field of a valid cluster, one at a time, with a value
/// of the wrong type. The run must exit 2, without a panic, naming the file and the field's line.
#[test]
fn wrong_type_in_every_field_read_is_located() {
    let base_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/typed/fields.yaml");
    let base = std::fs::read_to_string(&base_path).unwrap();
    // The base itself is valid.
    let ok = Command::cargo_bin("gpu-trust")
        .unwrap()
        .arg("inventory")
        .arg(&base_path)
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    let mutations = wrong_type_mutations(&base);
    assert!(mutations.len() > 100, "{} mutations", mutations.len());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fields.yaml");
    let mut failures = Vec::new();
    for m in &mutations {
        std::fs::write(&file, &m.text).unwrap();
        if let Err(e) = refusal("inventory", &file, Some(m.line)) {
            failures.push(format!("line {} ({}): {e}", m.line, m.what));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} wrong-type inputs were not refused at their line:\n{}",
        failures.len(),
        mutations.len(),
        failures.join("\n")
    );
}
