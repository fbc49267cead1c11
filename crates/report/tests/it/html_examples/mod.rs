//! The example clusters under `examples/`, audited the way `gpu-trust audit` does: an example cluster
//! is a folder with YAML or JSON files named `cluster*` (read together as the cluster) and, when
//! present, a `policy.yaml` (the tenancy policy). Other folders (a plan input) are not clusters. The
//! date is fixed so that acceptances and patch windows do not move with the clock.

#![allow(dead_code)]

use gpu_trust_policy::{Date, Policy};
use gpu_trust_report::{registry_docs as docs, AuditReport, RuleDoc};
use gpu_trust_rules::{audit, AuditInput, AuditOptions};
use std::path::{Path, PathBuf};

/// The repository's `examples/` folder.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The registry's documentation, as `gpu-trust explain` prints it.
pub fn registry_docs() -> Vec<RuleDoc<'static>> {
    docs()
}

/// Each example: its folder name and the audit report, with the GPU layout the HTML page draws.
pub fn audit_examples() -> Vec<(String, AuditReport)> {
    let root = examples_dir();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !cluster_files(p).is_empty())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| audit_example(d)).collect()
}

/// The `cluster*.yaml|yml|json` files of a folder, sorted.
fn cluster_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            p.is_file() && matches!(ext, "yaml" | "yml" | "json") && stem.starts_with("cluster")
        })
        .collect();
    files.sort();
    files
}

fn audit_example(dir: &Path) -> (String, AuditReport) {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let files = cluster_files(dir);
    let inputs: Vec<gpu_trust_ingest::SourceInput> = files
        .iter()
        .map(|f| gpu_trust_ingest::SourceInput {
            name: format!(
                "examples/{name}/{}",
                f.file_name().unwrap().to_string_lossy()
            ),
            text: std::fs::read_to_string(f).unwrap(),
        })
        .collect();
    let ingested = gpu_trust_ingest::ingest(&inputs, &gpu_trust_ingest::Options::default());
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
    let policy_file = dir.join("policy.yaml");
    let policy = if policy_file.is_file() {
        let text = std::fs::read_to_string(&policy_file).unwrap();
        gpu_trust_policy::parse(&text, &format!("examples/{name}/policy.yaml"))
            .unwrap_or_else(|e| panic!("{name}: {e:#?}"))
    } else {
        Policy::default()
    };
    let fleet = ingested.fleet;
    let tenancy = policy.resolve(&fleet.namespaces);
    let mut options = AuditOptions::new(Date::new(2026, 6, 1).unwrap());
    options.layout = true;
    let report = audit(&AuditInput {
        fleet: &fleet,
        tenancy: &tenancy,
        options: &options,
    });
    (name, report)
}
