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
/// line number.
fn refuses(command: &str, file: &Path) {
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
    assert_eq!(
        out.status.code(),
        Some(2),
        "{command} {name}: expected exit 2\nstderr: {stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "{command} {name} panicked: {stderr}"
    );
    let located = stderr.lines().any(|l| {
        l.find(&name).is_some_and(|i| {
            let rest = &l[i + name.len()..];
            rest.starts_with(':') && rest[1..].starts_with(|c: char| c.is_ascii_digit())
        })
    });
    assert!(
        located,
        "{command} {name}: the error must name file:line\nstderr: {stderr}"
    );
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
