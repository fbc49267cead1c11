//! The diagnostic codes are documented and used: `docs/diagnostics.md` is generated from the code
//! table (`gpu_trust_model::code::markdown`), and this test fails when the file differs from it (a
//! code added, renamed or described anew without the documentation following). Refresh it as
//! snapshots are refreshed: `INSTA_UPDATE=always cargo test -p gpu-trust-model --test it diagnostics`
//! (never under `CI=true`), then read the diff. It also fails when a code of the table is reported
//! nowhere in the product's source: a code is a kind of diagnostic that exists, not a placeholder.

use gpu_trust_model::code::{markdown, Code};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn updating() -> bool {
    std::env::var_os("CI").is_none() && std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always")
}

#[test]
fn the_documentation_lists_every_code_with_its_meaning() {
    let path = root().join("docs/diagnostics.md");
    let expected = markdown();
    if updating() {
        std::fs::write(&path, &expected).unwrap();
    }
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    for code in Code::ALL {
        assert!(
            found.contains(&format!("| `{}` | {} |", code.as_str(), code.meaning())),
            "docs/diagnostics.md does not document {}; refresh with INSTA_UPDATE=always cargo test -p gpu-trust-model --test it diagnostics",
            code.as_str()
        );
    }
    assert!(
        found == expected,
        "docs/diagnostics.md differs from the code table; refresh with INSTA_UPDATE=always cargo test -p gpu-trust-model --test it diagnostics"
    );
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_code_is_reported_somewhere() {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        sources(&entry.path().join("src"), &mut files);
    }
    let table = root().join("crates/model/src/code.rs");
    let text: String = files
        .iter()
        .filter(|f| **f != table)
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    let unused: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !text.contains(&format!("Code::{c:?}")))
        .map(|c| c.as_str())
        .collect();
    assert!(
        unused.is_empty(),
        "codes no diagnostic is made with: {unused:?}"
    );
}
