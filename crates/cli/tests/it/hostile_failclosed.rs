//! Fail closed: an audit never looks clean about input it did not read whole, and input never
//! steers the terminal. Each test is an input a hostile or careless user can give; each must be
//! refused with a location and exit 2 (or read correctly), and never hang: every run has a time
//! bound, as a hang is a failure.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

fn bin() -> Command {
    let mut c = Command::cargo_bin("gpu-trust").unwrap();
    c.timeout(Duration::from_secs(120));
    c
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let out = bin().args(args).output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// Exit 2, no panic, and a line of standard error naming `file:line:column`.
fn refused_at(r: &Run, file: &str, line: u32, column: Option<u32>) {
    assert_eq!(r.code, Some(2), "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let want = match column {
        Some(c) => format!("{file}:{line}:{c}: error["),
        None => format!("{file}:{line}:"),
    };
    assert!(r.stderr.contains(&want), "want `{want}` in:\n{}", r.stderr);
}

/// Exit 2 and an error naming `path` (a whole file or folder: no line).
fn refused_file(r: &Run, path: &str, words: &str) {
    assert_eq!(r.code, Some(2), "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(
        r.stderr
            .lines()
            .any(|l| l.starts_with(&format!("{path}: error[")) && l.contains(words)),
        "want `{path}: error[CODE]: ... {words}` in:\n{}",
        r.stderr
    );
}

const NAMESPACE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tenant-a\n";

/// A pod of `ns` asking for a GPU, as YAML.
fn gpu_pod(ns: &str, name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  nodeName: gpu-1\n  containers:\n  - name: c\n    image: cuda\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    )
}

// --- Duplicate keys in JSON -------------------------------------------------------------------

#[test]
fn a_duplicate_json_key_hiding_a_gpu_pod_is_refused_like_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let pod = r#"{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "p", "namespace": "a"}, "spec": {"nodeName": "gpu-1", "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}, "kind": "Pod"}"#;
    let file = write(dir.path(), "service-or-pod.json", pod);
    let at = pod.rfind("\"kind\"").unwrap() as u32 + 1;
    for command in ["audit", "inventory"] {
        let r = run(&[command, s(&file)]);
        refused_at(&r, s(&file), 1, Some(at));
        assert!(r.stderr.contains("duplicate key `kind`"), "{}", r.stderr);
    }

    // A Node that is also a Pod, in a List, one item per line; and a key spelled with an escape.
    let list = "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}},\n{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}, \"k\\u0069nd\": \"Pod\"}\n]}";
    let file = write(dir.path(), "node-or-pod.json", list);
    let r = run(&["audit", s(&file)]);
    refused_at(&r, s(&file), 3, Some(65));

    // Two `items` at the root of a List: which list would the cluster use?
    let two = "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [],\n \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}}]}";
    let file = write(dir.path(), "two-items.json", two);
    let r = run(&["audit", s(&file)]);
    refused_at(&r, s(&file), 2, Some(2));
    assert!(
        r.stderr.contains("duplicate key `items` (first at line 1)"),
        "{}",
        r.stderr
    );
}

// --- Folders: hidden entries, depth, special files, links -------------------------------------

#[test]
fn a_hidden_file_in_an_input_folder_is_unread_input_not_a_silent_drop() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ns.yaml", NAMESPACE);
    let hidden = write(dir.path(), ".gpu-pod.yaml", &gpu_pod("tenant-a", "hidden"));
    write(
        dir.path(),
        ".config/more.yaml",
        &gpu_pod("tenant-a", "more"),
    );
    let r = run(&["audit", s(dir.path())]);
    refused_file(&r, s(&hidden), "hidden file");
    refused_file(&r, s(&dir.path().join(".config")), "hidden folder");
    // --skip-invalid audits the rest and lists what was not read.
    // (The rest holds a pod on a node the input lacks and no RBAC: a partial audit, accepted here.)
    let r = run(&[
        "audit",
        s(dir.path()),
        "--skip-invalid",
        "--accept-partial",
        "--format",
        "json",
    ]);
    assert_ne!(r.code, Some(2), "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let skipped = report["skipped"].to_string();
    assert!(skipped.contains(".gpu-pod.yaml"), "{skipped}");
    // Named on the command line, a hidden file is read.
    let r = run(&["inventory", s(&hidden), s(&dir.path().join("ns.yaml"))]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("1 workload"), "{}", r.stdout);
}

#[test]
fn a_folder_nested_past_the_depth_limit_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ns.yaml", NAMESPACE);
    let mut deep = dir.path().to_path_buf();
    for _ in 0..66 {
        deep.push("d");
    }
    write(&deep, "pod.yaml", &gpu_pod("tenant-a", "deep"));
    let r = run(&["audit", s(dir.path())]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("nested more than 64 levels"),
        "{}",
        r.stderr
    );
}

#[cfg(unix)]
#[test]
fn devices_pipes_and_links_out_of_the_folder_are_never_read() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = write(outside.path(), "pod.yaml", &gpu_pod("tenant-a", "outside"));
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ns.yaml", NAMESPACE);
    symlink("/dev/zero", dir.path().join("zero.yaml")).unwrap();
    symlink("/dev/urandom", dir.path().join("random.json")).unwrap();
    symlink(&elsewhere, dir.path().join("linked.yaml")).unwrap();
    let fifo = dir.path().join("pipe.yaml");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // Would grow without bound, or block forever, if read.
    let r = run(&["audit", s(dir.path())]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    refused_file(
        &r,
        s(&dir.path().join("zero.yaml")),
        "outside the input folder",
    );
    refused_file(
        &r,
        s(&dir.path().join("random.json")),
        "outside the input folder",
    );
    refused_file(&r, s(&dir.path().join("linked.yaml")), "--follow-symlinks");
    refused_file(&r, s(&fifo), "named pipe");
    // Asked to follow links, the manifest outside is read; the devices are still refused.
    let r = run(&[
        "inventory",
        s(dir.path()),
        "--follow-symlinks",
        "--skip-invalid",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("1 workload"), "{}", r.stdout);
    refused_file(
        &Run { code: Some(2), ..r },
        s(&dir.path().join("zero.yaml")),
        "character device",
    );
    // A device named directly is refused unread, for the cluster, the policy and the plan.
    let r = run(&["audit", "/dev/zero"]);
    refused_file(&r, "/dev/zero", "character device");
    let r = run(&["audit", s(dir.path()), "--policy", "/dev/urandom"]);
    refused_file(&r, "/dev/urandom", "character device");
    let r = run(&["plan", "/dev/zero"]);
    refused_file(&r, "/dev/zero", "character device");
}

// --- A reader that goes away ------------------------------------------------------------------

/// Runs `gpu-trust args` with standard output a pipe whose reading end is closed before the
/// command writes, and returns the exit code.
fn exit_with_closed_reader(args: &[&str]) -> Option<i32> {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait().unwrap().code()
}

#[test]
fn a_closed_pipe_never_turns_findings_into_a_clean_exit() {
    let cluster = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/audit");
    let findings = cluster.join("two-tenants-time-sliced.yaml");
    let clean = cluster.join("one-tenant-exclusive.yaml");
    for format in ["table", "json", "sarif", "html"] {
        assert_eq!(
            exit_with_closed_reader(&["audit", s(&findings), "--format", format]),
            Some(1),
            "{format}: findings at or above --fail-on"
        );
        assert_eq!(
            exit_with_closed_reader(&["audit", s(&clean), "--format", format]),
            Some(0),
            "{format}: nothing at or above --fail-on"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_output_error_names_the_file_in_every_format() {
    let cluster =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/audit/two-tenants-time-sliced.yaml");
    for format in ["table", "json", "sarif", "html"] {
        let r = run(&[
            "audit",
            s(&cluster),
            "--format",
            format,
            "--output",
            "/dev/full",
        ]);
        assert_eq!(r.code, Some(2), "{format}: {}", r.stderr);
        assert!(
            r.stderr.contains("/dev/full: cannot write"),
            "{format}: {}",
            r.stderr
        );
    }
}

// --- Minified JSON --------------------------------------------------------------------------

#[test]
fn minified_json_is_read_in_linear_time_with_exact_columns() {
    // 40,000 pods on one line, as `jq -c` or an API response gives them; the last pod has a
    // duplicate key. Counting columns from the line's start for every object took minutes here.
    let mut text = String::from(r#"{"apiVersion":"v1","kind":"List","items":["#);
    for i in 0..40_000 {
        text.push_str(&format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p{i}","namespace":"ns{}"}},"spec":{{"nodeName":"n{}","containers":[{{"name":"c","image":"i","resources":{{"limits":{{"nvidia.com/gpu":1}}}}}}]}}}},"#,
            i % 50,
            i % 400
        ));
    }
    let bad = text.len() + 1;
    text.push_str(r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","name":"y"}}]}"#);
    let at = (bad + r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","#.len()) as u32;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "minified.json", &text);
    let r = run(&["inventory", s(&file)]);
    refused_at(&r, s(&file), 1, Some(at));
    assert!(r.stderr.contains("duplicate key `name`"), "{}", r.stderr);
}

// --- Terminal escaping ------------------------------------------------------------------------

#[test]
fn names_from_the_input_cannot_steer_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // A pod and a namespace whose names carry ESC sequences, OSC (window title), BEL and a newline
    // that would forge a line of output.
    let cluster = "apiVersion: v1\nkind: Node\nmetadata:\n  name: \"gpu-1\\e[2J\"\n  labels:\n    nvidia.com/gpu.product: \"NVIDIA-A100-SXM4-80GB\\e]0;owned\\a\"\n    nvidia.com/gpu.count: \"1\"\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: \"p\\nFINDINGS  none\"\n  namespace: \"team\\e[31m\"\nspec:\n  nodeName: \"gpu-1\\e[2J\"\n  containers:\n  - name: c\n    image: i\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
    let file = write(dir.path(), "cluster.yaml", cluster);
    let r = run(&["inventory", s(&file)]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for raw in ['\x1b', '\x07'] {
        assert!(
            !r.stdout.contains(raw),
            "raw control character in:\n{}",
            r.stdout
        );
    }
    assert!(
        !r.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("FINDINGS")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\\x1b[2J"), "{}", r.stdout);

    // JSON stays exact: the names come back as they were, escaped for JSON.
    let r = run(&["inventory", s(&file), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v.to_string().contains("team\\u001b[31m"), "{v}");

    // A diagnostic quoting a file name and a value from the input is escaped too.
    let name = "bad\x1b]0;title\x07.yaml";
    let bad = write(
        dir.path(),
        name,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"\\e[5m\"\n  labels: {gpu: on}\n",
    );
    let r = run(&["audit", s(&bad)]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    for raw in ['\x1b', '\x07'] {
        assert!(
            !r.stderr.contains(raw),
            "raw control character in:\n{}",
            r.stderr
        );
    }
    assert!(
        r.stderr.contains("bad\\x1b]0;title\\x07.yaml:5:"),
        "{}",
        r.stderr
    );
}

// --- YAML 1.1 scalars and tags ----------------------------------------------------------------

#[test]
fn yaml_1_1_scalars_the_api_server_refuses_are_refused_at_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // (text, line, column, words)
        ("apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n  labels:\n    gpu: on\n", 6, 10, "quote it, \"on\""),
        ("apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n  labels:\n    nvidia.com/gpu.count: 4\n", 6, 27, "quote it, \"4\""),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec:\n  containers:\n  - name: c\n    image: i\n    env:\n    - {name: X, value: yes}\n", 9, 24, "a boolean"),
        ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: a}\nspec:\n  replicas: 4.0\n  template:\n    spec:\n      containers: [{name: c, image: i}]\n", 5, 13, "write 4"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec:\n  containers:\n  - name: c\n    image: !custom i\n", 7, 20, "unsupported tag `!custom`"),
    ];
    for (i, (text, line, column, words)) in cases.iter().enumerate() {
        let file = write(dir.path(), &format!("case-{i}.yaml"), text);
        let r = run(&["inventory", s(&file)]);
        refused_at(&r, s(&file), *line, Some(*column));
        assert!(r.stderr.contains(words), "case {i}: {}", r.stderr);
    }
    // Quoted, the same values read.
    let file = write(
        dir.path(),
        "quoted.yaml",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n  labels:\n    gpu: \"on\"\n    nvidia.com/gpu.count: \"4\"\n",
    );
    assert_eq!(run(&["inventory", s(&file)]).code, Some(0));
}

// --- Messages ---------------------------------------------------------------------------------

const PLAN: &str = "apiVersion: gpu-trust/v1\nkind: Plan\ninventory:\n  - {pool: p, model: H100-SXM5-80GB, gpusPerNode: 8, nodes: 1}\nworkloads:\n  - {name: w, tenant: t, kind: inference, replicas: REPLICAS, peakMemory: 90GiB}\npolicy:\n  tenants:\n    - {name: t, namespaces: [t]}\n";

#[test]
fn an_invalid_number_says_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "plan.yaml", &PLAN.replace("REPLICAS", "-1"));
    let r = run(&["plan", s(&file)]);
    refused_at(&r, s(&file), 6, None);
    assert!(
        r.stderr
            .contains("`-1` is not a whole number from 0 to 4294967295"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_utf16_policy_is_named_with_a_location() {
    let dir = tempfile::tempdir().unwrap();
    let text = "tenants:\n  - name: a\n    namespaces: [a]\n";
    let bytes: Vec<u8> = "\u{feff}"
        .chars()
        .chain(text.chars())
        .collect::<String>()
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let file = dir.path().join("policy.yaml");
    std::fs::write(&file, bytes).unwrap();
    let r = run(&["policy", "check", s(&file)]);
    refused_at(&r, s(&file), 1, Some(1));
    assert!(r.stderr.contains("UTF-16"), "{}", r.stderr);
}

/// `text` as UTF-16: little-endian with a byte-order mark, or big-endian without one.
fn utf16(text: &str, bom: bool) -> Vec<u8> {
    if bom {
        "\u{feff}"
            .chars()
            .chain(text.chars())
            .collect::<String>()
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect()
    } else {
        text.encode_utf16().flat_map(u16::to_be_bytes).collect()
    }
}

#[test]
fn every_file_a_command_reads_is_refused_as_utf16_with_its_name() {
    // The policy, plan, evidence, advisory and configuration files all come through the one bounded
    // reader of the cluster input: UTF-16 is named, located at 1:1, and the run exits 2.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cluster = write(d, "cluster.yaml", NAMESPACE);
    let good_policy = write(d, "good-policy.yaml", "tenants: []\n");
    let policy_text = "tenants:\n  - name: a\n    namespaces: [tenant-a]\n";
    for bom in [true, false] {
        let tag = if bom { "bom" } else { "nobom" };
        let file = |name: &str, text: &str| {
            let path = d.join(format!("{tag}-{name}"));
            std::fs::write(&path, utf16(text, bom)).unwrap();
            path
        };
        let policy = file("policy.yaml", policy_text);
        let plan = file(
            "plan.yaml",
            "apiVersion: gpu-trust/v1\nkind: Plan\ninventory: []\nworkloads: []\n",
        );
        let plan_with_file = write(
            d,
            &format!("{tag}-plan-file.yaml"),
            &format!(
                "apiVersion: gpu-trust/v1\nkind: Plan\npolicyFile: {}\ninventory: []\nworkloads: []\n",
                s(&policy)
            ),
        );
        let evidence = file("evidence.json", "{\"schema\": \"gpu-trust/probe/v1\"}\n");
        let advisories = file("advisories.yaml", "advisories: []\n");
        let config = file("config.yaml", "failOn: never\n");
        let runs: Vec<(Vec<&str>, &Path)> = vec![
            (
                vec!["audit", s(&cluster), "--no-config", "--policy", s(&policy)],
                &policy,
            ),
            (
                vec!["inventory", s(&cluster), "--policy", s(&policy)],
                &policy,
            ),
            (vec!["policy", "check", s(&policy)], &policy),
            (vec!["plan", s(&plan)], &plan),
            (vec!["plan", s(&plan_with_file)], &policy),
            (
                vec![
                    "audit",
                    s(&cluster),
                    "--no-config",
                    "--policy",
                    s(&good_policy),
                    "--evidence",
                    s(&evidence),
                ],
                &evidence,
            ),
            (
                vec![
                    "audit",
                    s(&cluster),
                    "--no-config",
                    "--policy",
                    s(&good_policy),
                    "--advisories",
                    s(&advisories),
                ],
                &advisories,
            ),
            (vec!["audit", s(&cluster), "--config", s(&config)], &config),
        ];
        for (args, refused) in runs {
            let r = run(&args);
            refused_at(&r, s(refused), 1, Some(1));
            assert!(r.stderr.contains("UTF-16"), "{args:?}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "{args:?} wrote: {}", r.stdout);
        }
    }
    // Standard input too.
    let out = bin()
        .args(["plan", "-"])
        .write_stdin(utf16("apiVersion: gpu-trust/v1\n", true))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("-:1:1: error[input-encoding]: ") && stderr.contains("UTF-16"),
        "{stderr}"
    );
}

#[test]
fn policy_check_refuses_tied_globs_the_audit_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let policy = write(
        dir.path(),
        "policy.yaml",
        "tenants:\n  - name: team\n    namespaces: [\"team-*\"]\n  - name: prod\n    namespaces: [\"*-prod\"]\n",
    );
    let r = run(&["policy", "check", s(&policy)]);
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("team-prod"), "{}", r.stderr);
    assert!(!r.stdout.contains("valid"), "{}", r.stdout);
    // The audit refuses a cluster holding such a namespace, as policy check said it would.
    let cluster = write(
        dir.path(),
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-prod\n",
    );
    let r = run(&["audit", s(&cluster), "--policy", s(&policy)]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

#[test]
fn policy_check_does_not_call_a_claimed_namespace_infrastructure() {
    let dir = tempfile::tempdir().unwrap();
    let policy = write(
        dir.path(),
        "policy.yaml",
        "tenants:\n  - name: ops\n    namespaces: [kube-system]\n",
    );
    let r = run(&["policy", "check", s(&policy)]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let platform = r
        .stdout
        .lines()
        .find(|l| l.starts_with("Platform namespaces (infrastructure"))
        .unwrap();
    assert!(!platform.contains("kube-system"), "{}", r.stdout);
    assert!(
        r.stdout.contains("kube-system (tenant ops)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains(&format!(
            "{}:3:18: warning[tenant-claims-platform]: tenant `ops` claims `kube-system`",
            s(&policy)
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn a_hundred_thousand_unplaced_replicas_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "plan.yaml", &PLAN.replace("REPLICAS", "100000"));
    let r = run(&["plan", s(&file)]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].starts_with("gpu-trust: w#0-#99999 (100000 replicas) not placed: "),
        "{}",
        r.stderr
    );
    assert!(r.stdout.lines().count() < 100, "{}", r.stdout);
}

// --- GPUs through DRA extended resources whose DeviceClass is not in the input ----------------

/// A pod requesting `deviceclass.resource.kubernetes.io/<class>` (KEP-5004) of a class the input
/// lacks may get GPUs shared any way: the audit is partial, says what was not evaluated and exits 2;
/// `--accept-partial` accepts it. Extended resources of other devices stay quiet.
#[test]
fn a_dra_extended_resource_of_a_missing_device_class_is_not_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels:\n    nvidia.com/gpu.present: \"true\"\n    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n    nvidia.com/gpu.count: \"8\"\nstatus:\n  allocatable: {cpu: \"64\"}\n";
    let pod = |resource: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: tenant-a\nspec:\n  nodeName: gpu-1\n  containers:\n  - name: c\n    image: cuda\n    resources:\n      limits:\n        {resource}: 1\n"
        )
    };
    let missing = write(
        dir.path(),
        "missing.yaml",
        &format!(
            "{node}---\n{}",
            pod("deviceclass.resource.kubernetes.io/gpu.nvidia.com")
        ),
    );
    let r = run(&["audit", s(&missing)]);
    assert_eq!(r.code, Some(2), "stderr: {}", r.stderr);
    assert!(
        r.stderr.contains("unresolved-extended-resource")
            && r.stderr.contains("Pod tenant-a/p requests deviceclass.resource.kubernetes.io/gpu.nvidia.com: DeviceClass gpu.nvidia.com is not in the input"),
        "{}",
        r.stderr
    );
    let r = run(&["audit", "--accept-partial", s(&missing)]);
    assert!(matches!(r.code, Some(0 | 1)), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("PARTIAL AUDIT"), "{}", r.stdout);

    let quiet = write(
        dir.path(),
        "quiet.yaml",
        &format!("{node}---\n{}", pod("example.com/foo")),
    );
    let r = run(&["audit", s(&quiet)]);
    assert!(!r.stderr.contains("extended"), "{}", r.stderr);
}

// --- Tenant views ------------------------------------------------------------------------------

/// A tenant view is built from the report, not rewritten as text: a neighbour that names its GPU
/// pods after words of the report (`critical`, `true`, `null`) or after the viewer's own node and
/// workload changes no severity, breaks no format and hides none of the viewer's names; the view's
/// `accept:` snippets are YAML naming only the viewer (or a placeholder for the other tenant).
#[test]
fn a_neighbours_names_never_rewrite_a_tenant_view() {
    let dir = tempfile::tempdir().unwrap();
    let example = format!("{}/../../examples/ml-platform", env!("CARGO_MANIFEST_DIR"));
    let mut pods = String::new();
    for name in [
        "critical",
        "true",
        "null",
        "a100-ts-02",
        "rapids-backfill-20261113",
    ] {
        pods.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: \"{name}\"\n  namespace: ml-training\nspec:\n  nodeName: a100-ts-02\n  containers:\n  - name: main\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
        ));
    }
    let neighbours = write(dir.path(), "neighbours.yaml", &pods);
    let view = |format: &str| {
        run(&[
            "audit",
            &format!("{example}/cluster.yaml"),
            s(&neighbours),
            "--policy",
            &format!("{example}/policy.yaml"),
            "--today",
            "2026-12-01",
            "--view",
            "data-sandbox",
            "-o",
            format,
        ])
    };
    let json = view("json");
    assert_eq!(json.code, Some(1), "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("valid JSON");
    let findings = report["findings"].as_array().unwrap();
    let severities = ["critical", "high", "medium", "low", "info"];
    assert!(findings
        .iter()
        .all(|f| severities.contains(&f["severity"].as_str().unwrap_or_default())));
    assert!(findings.iter().any(|f| f["severity"] == "critical"));
    assert!(
        findings.iter().any(|f| {
            let m = f["message"].as_str().unwrap_or_default();
            m.contains("data-sandbox/rapids-backfill-20261113") && m.contains("node a100-ts-02")
        }),
        "{}",
        json.stdout
    );
    let sarif = view("sarif");
    serde_json::from_str::<serde_json::Value>(&sarif.stdout).expect("valid SARIF");
    let mut snippets = 0;
    for f in findings {
        let fix = f["remediation"].as_str().unwrap_or_default();
        for (at, _) in fix.match_indices("`accept: [") {
            let snippet = &fix[at + 1..];
            let snippet = &snippet[..snippet.find('`').unwrap()];
            let yaml: serde_json::Value = serde_saphyr::from_str(snippet).expect(snippet);
            for t in yaml["accept"][0]["tenants"].as_array().unwrap() {
                let t = t.as_str().unwrap();
                assert!(
                    ["data-sandbox", "TENANT", "A", "B"].contains(&t),
                    "{snippet}"
                );
            }
            snippets += 1;
        }
    }
    assert!(snippets > 0, "{}", json.stdout);
}
