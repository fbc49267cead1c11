//! `gpu-trust plan FILE --current CLUSTER`: the migration from the cluster that runs now to the plan.
//! The example under examples/plan/migration/ is this command's output, checked here; the script is
//! checked with the real shellcheck and run with a fake kubectl.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_dir() -> PathBuf {
    workspace().join("examples/plan/migration")
}

/// Runs `plan examples/plan/plan.yaml --current examples/plan/migration/cluster.yaml` from the
/// workspace root (so the paths in the output are relative), with `args`, writing to `output`.
fn migration(args: &[&str], output: &Path) -> std::process::Output {
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(workspace())
        .args([
            "plan",
            "examples/plan/plan.yaml",
            "--current",
            "examples/plan/migration/cluster.yaml",
            "--today",
            "2026-12-01",
            "--output",
            output.to_str().unwrap(),
        ])
        .args(args)
        .output()
        .unwrap()
}

/// The three renderings of the example, written into `dir`: (file name, text, exit code, stderr).
fn render_example(dir: &Path) -> Vec<(&'static str, String, Option<i32>, String)> {
    [
        ("migration.txt", "table"),
        ("migration.json", "json"),
        ("migrate.sh", "script"),
    ]
    .into_iter()
    .map(|(name, format)| {
        let path = dir.join(name);
        let out = migration(&["--format", format], &path);
        (
            name,
            std::fs::read_to_string(&path).unwrap_or_default(),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .collect()
}

#[test]
fn the_example_is_the_output_of_its_command() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, code, stderr) in render_example(dir.path()) {
        assert_eq!(code, Some(0), "{name}: {stderr}");
        // The warnings before repartitioning: one affected driver, one unknown.
        assert!(
            stderr.contains("warning: node gpu-h100-02 is repartitioned on driver 580.95.05, affected by CVE-2026-24197")
                && stderr.contains("warning: node gpu-h100-03 is repartitioned, and its driver version is unknown"),
            "{name}: {stderr}"
        );
        let committed = std::fs::read_to_string(example_dir().join(name)).unwrap_or_default();
        assert!(
            text == committed,
            "examples/plan/migration/{name} differs from `gpu-trust plan examples/plan/plan.yaml --current examples/plan/migration/cluster.yaml --today 2026-12-01 --format ... --output examples/plan/migration/{name}`:\n{text}"
        );
    }
}

#[test]
fn the_json_follows_its_schema_and_says_what_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    let out = migration(&["--format", "json"], &path);
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("docs/schema/migration-v1.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // Byte-identical on a second run.
    let again = dir.path().join("again.json");
    migration(&["--format", "json"], &again);
    assert_eq!(text, std::fs::read_to_string(&again).unwrap());

    assert_eq!(doc["schema"], "gpu-trust/migration/v1");
    assert_eq!(doc["targetAudit"]["clean"], true);
    let nodes = doc["nodes"].as_array().unwrap();
    let kinds: Vec<&str> = nodes.iter().map(|n| n["mig"].as_str().unwrap()).collect();
    assert!(
        kinds.contains(&"mode") && kinds.contains(&"layout") && kinds.contains(&"unknown"),
        "{kinds:?}"
    );
    // One node per pool per step, and the pool out in a step keeps one node fewer.
    let pools = |names: &Vec<Value>| -> Vec<String> {
        names
            .iter()
            .map(|n| {
                nodes.iter().find(|x| x["node"] == *n).unwrap()["pool"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    for step in doc["steps"].as_array().unwrap() {
        let mut p = pools(step["nodes"].as_array().unwrap());
        let n = p.len();
        p.dedup();
        assert_eq!(p.len(), n, "two nodes of one pool in one step: {step}");
        for c in step["capacity"].as_array().unwrap() {
            let total = doc["capacityNow"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["pool"] == c["pool"])
                .unwrap()["nodes"]
                .as_u64()
                .unwrap();
            let out = p.iter().filter(|x| **x == c["pool"]).count() as u64;
            assert_eq!(c["nodes"].as_u64().unwrap(), total - out, "{step}");
        }
    }
    // The drain of gpu-h100-03 evicts the research team's feature cache too, which has no GPU, and
    // deletes its emptyDir data; the node exporter's DaemonSet pod stays.
    let h100_03 = nodes.iter().find(|n| n["node"] == "gpu-h100-03").unwrap();
    let evicts = h100_03["evicts"].as_array().unwrap();
    assert_eq!(evicts.len(), 5, "{h100_03}");
    assert!(evicts.iter().any(|p| p["pod"] == "research/feature-cache-0"
        && p["gpu"] == false
        && p["emptyDir"] == serde_json::json!(["cache"])));
    assert!(evicts
        .iter()
        .all(|p| p["pod"] != "monitoring/node-exporter-h100-03"));
    let affected = nodes.iter().find(|n| n["node"] == "gpu-h100-02").unwrap();
    assert_eq!(affected["driver"]["status"], "affected");
    assert_eq!(affected["driver"]["advisories"][0]["fix"], "580.159.03");
}

#[test]
fn the_script_passes_shellcheck() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("migrate.sh");
    assert_eq!(
        migration(&["--format", "script"], &script).status.code(),
        Some(0)
    );
    crate::release::shellcheck(&[&script]);
}

/// A folder with a fake `kubectl` that appends its arguments to `kubectl.log` and reads its input.
fn fake_kubectl(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let kubectl = bin.join("kubectl");
    std::fs::write(
        &kubectl,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\ncat > /dev/null\n",
            dir.join("kubectl.log").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn run_script(dir: &Path, script: &Path, args: &[&str]) -> std::process::Output {
    let bin = fake_kubectl(dir);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("bash")
        .arg(script)
        .args(args)
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_script_only_prints_without_apply() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("migrate.sh");
    migration(&["--format", "script"], &script);
    let out = run_script(dir.path(), &script, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !dir.path().join("kubectl.log").exists(),
        "a dry run called kubectl"
    );
    assert!(
        stdout.contains("+ kubectl cordon gpu-h100-02")
            && stdout.contains("+ kubectl drain gpu-h100-02 --ignore-daemonsets")
            && stdout.contains("+ kubectl uncordon gpu-h100-02")
            && stdout.contains("kind: ConfigMap"),
        "{stdout}"
    );
    // The warning comes even in a dry run.
    assert!(String::from_utf8_lossy(&out.stderr).contains("CVE-2026-24197"));
    // A wrong argument is a usage error.
    assert_eq!(
        run_script(dir.path(), &script, &["--aply"]).status.code(),
        Some(2)
    );
}

#[test]
fn applying_stops_before_a_risky_driver_unless_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("migrate.sh");
    migration(&["--format", "script"], &script);
    let log = dir.path().join("kubectl.log");
    let out = run_script(dir.path(), &script, &["--apply"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.starts_with("apply -f -"), "{calls}");
    assert!(
        !calls.contains("cordon gpu-h100-02") && !calls.contains("cordon gpu-h100-03"),
        "{calls}"
    );

    std::fs::remove_file(&log).unwrap();
    let out = run_script(dir.path(), &script, &["--apply", "--accept-driver-risk"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    let at = |s: &str| {
        calls
            .find(s)
            .unwrap_or_else(|| panic!("`{s}` not called:\n{calls}"))
    };
    // Per node: cordon, drain, label, wait for the MIG manager, uncordon.
    assert!(at("cordon gpu-h100-02") < at("drain gpu-h100-02"));
    assert!(at("drain gpu-h100-02") < at("label node gpu-h100-02"));
    assert!(at("label node gpu-h100-02") < at("wait node/gpu-h100-02"));
    assert!(at("wait node/gpu-h100-02") < at("uncordon gpu-h100-02"));
    assert!(
        calls.contains("patch deployment ads-rank --type strategic"),
        "{calls}"
    );
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out");
    // The script format is the migration's: without --current it is a usage error.
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(workspace())
        .args(["plan", "examples/plan/plan.yaml", "--format", "script"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Not for DRA plans.
    assert_eq!(migration(&["--dra"], &out_file).status.code(), Some(2));
    // A current cluster without the plan's nodes (Deployments only): nothing to migrate to.
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(workspace())
        .args([
            "plan",
            "examples/plan/plan.yaml",
            "--current",
            "examples/plan/current.yaml",
        ])
        .args(["--today", "2026-12-01", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!doc["shortfalls"].as_array().unwrap().is_empty());
}

/// A current node labelled with a config name the plan gives other contents (as after an earlier
/// plan): the migration says so, exits 1, and its script prints but refuses `--apply` before any
/// command, because applying the new ConfigMap could reconfigure the node before it is drained.
#[test]
fn a_config_name_the_plan_redefines_stops_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(example_dir().join("cluster.yaml")).unwrap();
    let renamed = example.replace(
        "nvidia.com/mig.config: team-mig-1",
        "nvidia.com/mig.config: gpu-trust-mig-1",
    );
    assert_ne!(renamed, example, "the example's label moved");
    let cluster = dir.path().join("cluster.yaml");
    std::fs::write(&cluster, renamed).unwrap();
    let run = |format: &str, output: &Path| {
        Command::cargo_bin("gpu-trust")
            .unwrap()
            .current_dir(workspace())
            .args(["plan", "examples/plan/plan.yaml", "--current"])
            .arg(&cluster)
            .args(["--today", "2026-12-01", "--format", format, "--output"])
            .arg(output)
            .output()
            .unwrap()
    };
    let json = dir.path().join("migration.json");
    let out = run("json", &json);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("is labelled nvidia.com/mig.config=gpu-trust-mig-1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["configClashes"][0]["config"], "gpu-trust-mig-1");
    assert_eq!(doc["configClashes"][0]["label"], "nvidia.com/mig.config");

    let script = dir.path().join("migrate.sh");
    assert_eq!(run("script", &script).status.code(), Some(1));
    let dry = run_script(dir.path(), &script, &[]);
    assert!(dry.status.success());
    let out = run_script(dir.path(), &script, &["--apply", "--accept-driver-risk"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !dir.path().join("kubectl.log").exists(),
        "kubectl was called before the refusal"
    );
    crate::release::shellcheck(&[&script]);
}
