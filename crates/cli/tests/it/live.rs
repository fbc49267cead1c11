//! The live audit against a recorded cluster served on loopback through the Kubernetes API paths.
//!
//! The server (`support/apiserver.rs`) is our own test server, not a kube-apiserver: it serves the
//! examples' objects through the discovery documents and the list paths, in small pages, with a
//! 403 and a 410 where a test asks for them. `kubectl_lists_what_the_recording_serves` checks it
//! against the real client.

use crate::apiserver;
use std::io::Write as _;

use apiserver::{ApiServer, Behaviour, Object};
use assert_cmd::Command;
use std::path::{Path, PathBuf};

const EXAMPLES: &[&str] = &[
    "ml-platform",
    "inference-platform",
    "gke",
    "hami-kai",
    "helm-device-plugin",
];

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn gpu_trust() -> Command {
    let mut cmd = Command::cargo_bin("gpu-trust").expect("binary");
    cmd.env_remove("KUBECONFIG");
    cmd
}

/// Whether gpu-trust reads objects of this kind (the one list shared with ingest).
fn read_by_gpu_trust(o: &Object) -> bool {
    gpu_trust_ingest::api::read_kinds()
        .iter()
        .any(|k| k.group == o.group && k.kind == o.kind)
}

struct Recorded {
    server: ApiServer,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

fn serve(name: &str, behaviour: Behaviour) -> Recorded {
    let objects = apiserver::load(&example(name).join("cluster.yaml"));
    let server = ApiServer::start(objects, behaviour);
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).expect("write kubeconfig");
    Recorded {
        server,
        dir,
        kubeconfig,
    }
}

/// Writes the objects gpu-trust reads as files named by their API paths, in the order a live read
/// lists them (kinds in the shared list's order, objects in the server's), and returns the paths.
fn write_files(objects: &[Object], root: &Path) -> Vec<PathBuf> {
    let kinds = gpu_trust_ingest::api::read_kinds();
    let mut ordered: Vec<&Object> = objects.iter().filter(|o| read_by_gpu_trust(o)).collect();
    ordered.sort_by_key(|o| {
        kinds
            .iter()
            .position(|k| k.group == o.group && k.kind == o.kind)
    });
    let mut paths = Vec::new();
    for o in ordered {
        let rel = PathBuf::from(o.path());
        let file = root.join(&rel);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, o.file_text()).expect("write object");
        paths.push(rel);
    }
    paths
}

const TODAY: &str = "2026-11-20";

#[test]
fn the_live_audit_equals_the_file_audit_of_the_same_objects() {
    for name in EXAMPLES {
        let rec = serve(
            name,
            Behaviour {
                page: 2,
                forbidden: vec![],
                expire_once: vec!["pods", "nodes"],
                ..Behaviour::default()
            },
        );
        let policy = example(name).join("policy.yaml");
        let live = gpu_trust()
            .args(["audit", "--kubeconfig"])
            .arg(&rec.kubeconfig)
            .arg("--policy")
            .arg(&policy)
            // Two examples hold no RBAC objects: partial either way, accepted so both reports are
            // written and compared.
            .args(["-o", "json", "--today", TODAY, "--accept-partial"])
            .output()
            .expect("run live audit");

        let files_root = rec.dir.path().join("files");
        let paths = write_files(&rec.server.objects(), &files_root);
        let file = gpu_trust()
            .current_dir(&files_root)
            .arg("audit")
            .args(&paths)
            .arg("--policy")
            .arg(&policy)
            .args(["--format", "json", "--today", TODAY, "--accept-partial"])
            .output()
            .expect("run file audit");

        assert_eq!(
            live.status.code(),
            file.status.code(),
            "{name}: exit codes differ; live stderr:\n{}",
            String::from_utf8_lossy(&live.stderr)
        );
        assert!(
            matches!(live.status.code(), Some(0 | 1)),
            "{name}: {}",
            String::from_utf8_lossy(&live.stderr)
        );
        // The same report but for where it came from: the live one names its server and context.
        let mut reports = [&live.stdout, &file.stdout]
            .map(|out| serde_json::from_slice::<serde_json::Value>(out).expect("a JSON report"));
        let provenance = reports.each_mut().map(|r| r["provenance"].take());
        assert!(
            provenance[0]["server"].is_string(),
            "{name}: {}",
            provenance[0]
        );
        assert!(
            provenance[1].get("server").is_none(),
            "{name}: {}",
            provenance[1]
        );
        assert!(
            reports[0] == reports[1],
            "{name}: the live report differs from the file report\n--- live\n{}\n--- file\n{}",
            String::from_utf8_lossy(&live.stdout),
            String::from_utf8_lossy(&file.stdout)
        );
        let report: serde_json::Value = serde_json::from_slice(&live.stdout).expect("json report");
        assert!(
            report.to_string().contains("\"api/v1/namespaces/"),
            "{name}: locations name the objects' API paths"
        );

        // It paged (the server gives 2 objects a page) and started again on the expired tokens.
        let log = rec.server.log();
        assert!(
            log.iter().any(|l| l.contains("continue=page-")),
            "{name}: no paging: {log:?}"
        );
        let pod_lists = log
            .iter()
            .filter(|l| l.starts_with("/api/v1/pods?"))
            .count();
        let pods = rec
            .server
            .objects()
            .iter()
            .filter(|o| o.resource == "pods")
            .count();
        if pods > 2 {
            // One restart after the 410: the first page twice.
            let first_pages = log
                .iter()
                .filter(|l| l.starts_with("/api/v1/pods?") && !l.contains("continue="))
                .count();
            assert_eq!(
                first_pages, 2,
                "{name}: the list restarts once after 410 Gone: {log:?}"
            );
            assert!(pod_lists > 2);
        }
    }
}

/// A live audit of `rec` that must fail closed: exit 2 without `--skip-invalid`; with it, an exit of 0
/// or 1 and a JSON report. Returns the first run's standard error, and the second's with its report.
fn audit_fails_closed(rec: &Recorded) -> (String, String, String) {
    let out = gpu_trust()
        .args(["audit", "--kubeconfig"])
        .arg(&rec.kubeconfig)
        .output()
        .expect("run");
    let refused = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{refused}");

    let out = gpu_trust()
        .args(["audit", "--skip-invalid", "-o", "json", "--kubeconfig"])
        .arg(&rec.kubeconfig)
        .output()
        .expect("run");
    let skipped = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{skipped}");
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    (refused, skipped, report)
}

#[test]
fn a_kind_it_may_not_list_fails_the_audit_closed_unless_skipped() {
    let rec = serve(
        "ml-platform",
        Behaviour {
            page: 0,
            forbidden: vec!["clusterrolebindings"],
            expire_once: vec![],
            ..Behaviour::default()
        },
    );
    let (stderr, skipped, report) = audit_fails_closed(&rec);
    assert!(
        stderr.contains("apis/rbac.authorization.k8s.io/v1/clusterrolebindings")
            && stderr.contains("403 forbidden"),
        "{stderr}"
    );
    assert!(stderr.contains("--skip-invalid"), "{stderr}");
    assert!(skipped.contains("only part of the input"), "{skipped}");
    assert!(
        report.contains("apis/rbac.authorization.k8s.io/v1/clusterrolebindings"),
        "the report lists the kind it could not read: {report}"
    );
}

/// A custom kind that is not in the controllers table but whose definition describes pod templates:
/// a file audit would search its objects for GPU requests, a live audit does not list them, so the
/// live audit fails closed on it (unless a partial audit is accepted), naming the kind.
#[test]
fn a_custom_kind_with_pod_templates_the_live_audit_does_not_read_fails_it_closed() {
    let rec = serve("ml-platform", Behaviour::default());
    rec.server.add(apiserver::crd(
        "gpus.example.com",
        "TrainingRun",
        "trainingruns",
        apiserver::pod_template_schema(),
    ));
    // And one that carries no pods (cert-manager's kind of definition): no error for it.
    rec.server.add(apiserver::crd(
        "cert-manager.io",
        "Certificate",
        "certificates",
        serde_json::json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"secretName": {"type": "string"}}}}}),
    ));
    let (stderr, _, report) = audit_fails_closed(&rec);
    assert!(
        stderr.contains("TrainingRun (gpus.example.com)")
            && stderr.contains("kubectl get trainingruns.gpus.example.com -A -o yaml"),
        "{stderr}"
    );
    assert!(!stderr.contains("Certificate"), "{stderr}");
    assert!(
        report.contains("customresourcedefinitions/trainingruns.gpus.example.com"),
        "the report lists the kind it did not read: {report}"
    );
}

#[test]
fn a_namespace_scopes_the_tenant_objects_and_still_reads_the_cluster() {
    let rec = serve("ml-platform", Behaviour::default());
    let out = gpu_trust()
        .args([
            "inventory",
            "-o",
            "json",
            "-n",
            "ml-training",
            "--kubeconfig",
        ])
        .arg(&rec.kubeconfig)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = rec.server.log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("/api/v1/namespaces/ml-training/pods?")),
        "{log:?}"
    );
    assert!(
        !log.iter().any(|l| l.starts_with("/api/v1/pods?")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("/api/v1/nodes?")),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l.starts_with("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings?")),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l.starts_with("/apis/nvidia.com/v1/clusterpolicies?")),
        "{log:?}"
    );
    let inventory: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let text = inventory.to_string();
    assert!(text.contains("ml-training"));
    assert!(
        !text.contains("\"ml-research\""),
        "pods of other namespaces are not read"
    );
}

/// The rules of a JSON audit report's findings, and its coverage gaps' reasons.
fn rules_and_gaps(report: &[u8]) -> (Vec<String>, Vec<String>) {
    let report: serde_json::Value = serde_json::from_slice(report).expect("json report");
    let rules = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["rule"].as_str().map(str::to_string))
        .collect();
    let gaps = report.to_string();
    let gaps = ["unresolved-config", "skipped-input"]
        .iter()
        .filter(|r| gaps.contains(&format!("\"{r}\"")))
        .map(|r| r.to_string())
        .collect();
    (rules, gaps)
}

/// An audit scoped to one namespace still reads what decides how the GPUs are shared: the
/// ClusterPolicy, and the ConfigMaps (the device plugin's and mig-parted's, in the GPU Operator's
/// namespace) and DaemonSets of every namespace. The tenant's nodes keep their sharing
/// configuration: no "missing configuration" finding.
#[test]
fn a_namespaced_audit_reads_the_sharing_configuration_of_every_namespace() {
    let rec = serve("ml-platform", Behaviour::default());
    let out = gpu_trust()
        .args(["audit", "-o", "json", "--today", TODAY, "-n", "ml-training"])
        .arg("--policy")
        .arg(example("ml-platform").join("policy.yaml"))
        .arg("--kubeconfig")
        .arg(&rec.kubeconfig)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let log = rec.server.log();
    for cluster_wide in ["/api/v1/configmaps?", "/apis/apps/v1/daemonsets?"] {
        assert!(
            log.iter().any(|l| l.starts_with(cluster_wide)),
            "{cluster_wide}: {log:?}"
        );
    }
    assert!(
        log.iter()
            .any(|l| l.starts_with("/api/v1/namespaces/ml-training/pods?")),
        "{log:?}"
    );
    let (rules, gaps) = rules_and_gaps(&out.stdout);
    assert!(!rules.iter().any(|r| r == "GT002"), "{rules:?}");
    assert!(gaps.is_empty(), "{gaps:?}");
}

/// When the ConfigMaps may not be listed (a namespaced user's 403 at the cluster scope), the audit
/// fails closed on the unread kind (exit 2); accepted with --skip-invalid, the report marks the gap
/// and says nothing about a configuration missing from the cluster.
#[test]
fn a_forbidden_sharing_configuration_is_a_gap_not_a_finding() {
    let rec = serve(
        "ml-platform",
        Behaviour {
            forbidden: vec!["configmaps"],
            ..Behaviour::default()
        },
    );
    let run = |extra: &[&str]| {
        gpu_trust()
            .args(["audit", "-o", "json", "--today", TODAY, "-n", "ml-training"])
            .args(extra)
            .arg("--policy")
            .arg(example("ml-platform").join("policy.yaml"))
            .arg("--kubeconfig")
            .arg(&rec.kubeconfig)
            .output()
            .expect("run")
    };
    let refused = run(&[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("api/v1/configmaps") && stderr.contains("403 forbidden"),
        "{stderr}"
    );
    let skipped = run(&["--skip-invalid"]);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(matches!(skipped.status.code(), Some(0 | 1)), "{stderr}");
    let (rules, gaps) = rules_and_gaps(&skipped.stdout);
    assert!(!rules.iter().any(|r| r == "GT002"), "{rules:?}");
    assert_eq!(gaps, ["skipped-input"], "{gaps:?}");
}

#[test]
fn it_reads_only_what_the_role_grants() {
    let rec = serve("inference-platform", Behaviour::default());
    gpu_trust()
        .args(["audit", "--kubeconfig"])
        .arg(&rec.kubeconfig)
        .assert()
        .code(predicates::ord::lt(2));
    let role = gpu_trust_live_rules();
    for line in rec.server.log() {
        let Some(path) = line.split('?').next() else {
            continue;
        };
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, resource) = match parts.as_slice() {
            ["api", _] | ["apis"] | ["api"] | ["apis", _, _] => continue, // discovery
            ["api", _, .., r] => ("", *r),
            ["apis", g, _, .., r] => (*g, *r),
            _ => continue,
        };
        if line.starts_with("listed ") {
            continue;
        }
        assert!(
            role.iter().any(|(g, r)| g == group && r == resource),
            "{path} is read but the role does not grant it"
        );
    }
}

/// The (group, resource) pairs of the shipped ClusterRole.
fn gpu_trust_live_rules() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/rbac.yaml"),
    )
    .expect("deploy/rbac.yaml");
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).expect("yaml");
    let role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole")
        .expect("a ClusterRole");
    let mut out = Vec::new();
    for rule in role["rules"].as_array().expect("rules") {
        assert_eq!(rule["verbs"], serde_json::json!(["list", "watch"]));
        for g in rule["apiGroups"].as_array().expect("groups") {
            for r in rule["resources"].as_array().expect("resources") {
                out.push((
                    g.as_str().expect("group").to_string(),
                    r.as_str().expect("resource").to_string(),
                ));
            }
        }
    }
    out
}

#[test]
fn the_shipped_role_is_the_one_print_rbac_writes() {
    let out = gpu_trust()
        .args(["audit", "--print-rbac"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/rbac.yaml"),
    )
    .expect("deploy/rbac.yaml");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        shipped,
        "deploy/rbac.yaml is out of date: run `gpu-trust audit --print-rbac > deploy/rbac.yaml`"
    );
    // Every kind gpu-trust reads is granted.
    let rules = gpu_trust_live_rules();
    for k in gpu_trust_ingest::api::read_kinds() {
        assert!(
            rules.iter().any(|(g, r)| g == k.group && r == k.resource),
            "{} is not granted",
            k.kind
        );
    }
}

#[test]
fn paths_and_cluster_flags_do_not_mix_and_no_cluster_is_an_input_error() {
    gpu_trust()
        .args(["audit", "cluster.yaml", "--context", "prod"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot be used with PATH"));
    let dir = tempfile::tempdir().expect("tempdir");
    gpu_trust()
        .env("HOME", dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .arg("audit")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no cluster to read"));
}

/// What a newcomer meets first, said so that the first line tells what to do: no kubeconfig (PATH or
/// --kubeconfig), a context the kubeconfig lacks (the contexts it has), a server that does not
/// answer (its URL).
#[test]
fn live_errors_say_what_to_do_and_where() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = gpu_trust()
        .env("HOME", dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .arg("inventory")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // What to do comes first, before the client's reason.
    let first = stderr.lines().next().unwrap_or("");
    let advice = first.find("PATH").zip(first.find("--kubeconfig"));
    let reason = first.find("failed").unwrap_or(first.len());
    assert!(advice.is_some_and(|(p, k)| p.max(k) < reason), "{stderr}");

    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        apiserver::kubeconfig_for(&url).replace(
            "contexts:\n",
            "contexts:\n- name: prod\n  context:\n    cluster: recorded\n    user: auditor\n",
        ),
    )
    .expect("kubeconfig");
    let out = gpu_trust()
        .env("KUBECONFIG", &kubeconfig)
        .args(["audit", "--context", "staging", "--request-timeout", "5s"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no context `staging`") && stderr.contains("prod, recorded"),
        "{stderr}"
    );
    let out = gpu_trust()
        .args(["audit", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--request-timeout", "5s"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&url), "{stderr}");
}

#[test]
fn format_names_follow_kubectl_and_never_become_file_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = gpu_trust()
        .current_dir(dir.path())
        .arg("audit")
        .arg(example("ml-platform").join("cluster.yaml"))
        .args(["-o", "json", "--today", TODAY])
        .output()
        .expect("run");
    assert!(matches!(out.status.code(), Some(0 | 1)));
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .expect("-o json writes JSON to stdout");
    assert!(!dir.path().join("json").exists());
    let out = gpu_trust()
        .current_dir(dir.path())
        .arg("inventory")
        .arg(example("ml-platform").join("cluster.yaml"))
        .args(["-o", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("inventory -o json");
    let out = gpu_trust()
        .current_dir(dir.path())
        .arg("inventory")
        .arg(example("ml-platform").join("cluster.yaml"))
        .args(["-o", "yaml"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let yaml: serde_json::Value =
        serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).expect("inventory -o yaml");
    assert_eq!(yaml, json, "-o yaml is the JSON document as YAML");
    assert!(!dir.path().join("yaml").exists());
}

#[test]
fn as_a_kubectl_plugin_usage_reads_kubectl_gpu_trust() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugin = dir.path().join("kubectl-gpu_trust");
    let binary = assert_cmd::cargo::cargo_bin("gpu-trust");
    std::fs::copy(&binary, &plugin).expect("copy binary");
    // Another test's child, forked while the copy was open for writing, holds it open until its
    // exec: Linux refuses to run a file open for writing (ETXTBSY, 26) until then.
    let out = (0..50)
        .find_map(|_| {
            match std::process::Command::new(&plugin)
                .args(["audit", "--help"])
                .output()
            {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    None
                }
                other => Some(other),
            }
        })
        .expect("the copy stays busy")
        .expect("run plugin");
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(help.contains("Usage: kubectl gpu-trust audit"), "{help}");
    assert!(
        help.contains("\n  kubectl gpu-trust audit --policy tenancy.yaml"),
        "{help}"
    );
    assert!(!help.contains("\n  gpu-trust "), "{help}");
    let out = std::process::Command::new(&plugin)
        .output()
        .expect("run plugin");
    let usage = String::from_utf8_lossy(&out.stderr);
    assert!(usage.contains("kubectl gpu-trust"), "{usage}");
}

/// kubectl pointed at the recording lists the objects it serves: the server speaks the API as the
/// real client reads it.
#[test]
fn kubectl_lists_what_the_recording_serves() {
    if std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "kubectl is missing: .ci/run installs one"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED kubectl_lists_what_the_recording_serves: kubectl is not installed"
        );
        return;
    }
    let rec = serve(
        "ml-platform",
        Behaviour {
            page: 2,
            forbidden: vec![],
            expire_once: vec![],
            ..Behaviour::default()
        },
    );
    let objects = rec.server.objects();
    let mut resources: Vec<(&str, &str)> = objects.iter().map(|o| (o.resource, o.group)).collect();
    resources.sort_unstable();
    resources.dedup();
    for (resource, group) in resources {
        let name = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let out = std::process::Command::new("kubectl")
            .env("HOME", rec.dir.path())
            .arg("--kubeconfig")
            .arg(&rec.kubeconfig)
            .args([
                "get",
                &name,
                "--all-namespaces",
                "--chunk-size=2",
                "-o",
                "json",
            ])
            .output()
            .expect("run kubectl");
        assert!(
            out.status.success(),
            "kubectl get {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("kubectl json");
        let mut seen: Vec<(String, String)> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                (
                    i["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    i["metadata"]["name"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let mut served: Vec<(String, String)> = objects
            .iter()
            .filter(|o| o.resource == resource && o.group == group)
            .map(|o| (o.namespace.clone().unwrap_or_default(), o.name.clone()))
            .collect();
        seen.sort();
        served.sort();
        assert_eq!(seen, served, "kubectl get {name}");
    }
}

/// The shipped Deployment and CronJob run commands the binary accepts, with the ServiceAccount the
/// role is bound to, and the policy they mount is valid.
#[test]
fn the_deploy_manifests_run_what_the_binary_accepts() {
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    let mut containers = 0;
    for file in ["serve.yaml", "cronjob.yaml"] {
        let text = std::fs::read_to_string(deploy.join(file)).expect("manifest");
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).expect("yaml");
        for doc in &docs {
            assert_eq!(doc["metadata"]["namespace"], "gpu-trust", "{file}");
            if doc["kind"] == "ConfigMap" {
                let policy = doc["data"]["policy.yaml"].as_str().expect("policy.yaml");
                let out = gpu_trust()
                    .args(["policy", "check", "-", "-o", "json"])
                    .write_stdin(policy)
                    .output()
                    .expect("run");
                assert_eq!(out.status.code(), Some(0));
                // An example with tenants, to rename: what a policy needs is shown.
                let checked: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
                assert!(checked["tenants"].as_array().is_some_and(|t| t.len() >= 2));
            }
            let pod = match doc["kind"].as_str() {
                Some("Deployment") => &doc["spec"]["template"]["spec"],
                Some("CronJob") => &doc["spec"]["jobTemplate"]["spec"]["template"]["spec"],
                _ => continue,
            };
            assert_eq!(pod["serviceAccountName"], "gpu-trust-reader", "{file}");
            for c in pod["containers"].as_array().expect("containers") {
                let args: Vec<&str> = c["args"]
                    .as_array()
                    .expect("args")
                    .iter()
                    .map(|a| a.as_str().expect("arg"))
                    .collect();
                // The arguments parse (clap stops at the first one it refuses, before --help).
                gpu_trust().args(&args).arg("--help").assert().code(0);
                containers += 1;
            }
        }
    }
    assert_eq!(containers, 2);
}

/// A kubeconfig user with an exec plugin (as EKS, GKE and AKS write them): the token it prints is
/// the one the requests carry.
#[test]
fn exec_credential_plugins_authenticate_the_requests() {
    let rec = serve("gke", Behaviour::default());
    let plugin = rec.dir.path().join("get-token");
    std::fs::write(
        &plugin,
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"token-from-exec\"}}'\n",
    )
    .expect("write plugin");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let kubeconfig = rec.server.kubeconfig().replace(
        "  user:\n    token: recorded-token\n",
        &format!(
            "  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
            plugin.display()
        ),
    );
    assert!(kubeconfig.contains("exec:"));
    std::fs::write(&rec.kubeconfig, kubeconfig).expect("kubeconfig");
    gpu_trust()
        .args(["inventory", "--kubeconfig"])
        .arg(&rec.kubeconfig)
        .assert()
        .code(0);
    let log = rec.server.log();
    assert!(
        log.iter()
            .any(|l| l == "authorization: Bearer token-from-exec"),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.contains("recorded-token")));
}

/// A server whose discovery lacks a kind every API server serves is not audited: exit 2, naming it.
#[test]
fn kinds_every_api_server_serves_are_required() {
    for hidden in [
        "pods",
        "nodes",
        "namespaces",
        "configmaps",
        "clusterrolebindings",
    ] {
        let rec = serve(
            "ml-platform",
            Behaviour {
                hidden: vec![hidden],
                ..Behaviour::default()
            },
        );
        let out = gpu_trust()
            .args(["audit", "--kubeconfig"])
            .arg(&rec.kubeconfig)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{hidden}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("every Kubernetes API server serves"),
            "{hidden}: {err}"
        );
    }
}

/// RuntimeClass is not among the kinds every server must list, but once a tenant pod names a runtime
/// class (here the NVIDIA runtime's), what the class runs is read from it: a server whose discovery
/// hides RuntimeClasses makes the audit partial (exit 2, the gap named), where the same cluster
/// with them listed is judged whole.
#[test]
fn a_runtime_class_in_use_requires_runtime_classes() {
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "sandbox", "namespace": "ml-research"},
        "spec": {"runtimeClassName": "nvidia", "containers": [{"name": "c", "image": "busybox"}]}});
    for hidden in [false, true] {
        let rec = serve(
            "ml-platform",
            Behaviour {
                hidden: if hidden {
                    vec!["runtimeclasses"]
                } else {
                    vec![]
                },
                ..Behaviour::default()
            },
        );
        rec.server.add(pod.clone());
        let out = gpu_trust()
            .args(["audit", "-o", "json", "--today", TODAY])
            .arg("--policy")
            .arg(example("ml-platform").join("policy.yaml"))
            .arg("--kubeconfig")
            .arg(&rec.kubeconfig)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report = String::from_utf8_lossy(&out.stdout);
        let gap = report.contains("\"unresolved-runtime-class\"");
        if hidden {
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(gap && stderr.contains("RuntimeClass"), "{stderr}");
        } else {
            assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
            assert!(!gap, "{report}");
        }
    }
}

/// A list answer that is not what a list is fails the audit closed (exit 2, the kind's API path
/// and why), within bounded time, even with --skip-invalid left out or given.
#[test]
fn a_list_answer_that_is_not_a_list_fails_closed_in_bounded_time() {
    use apiserver::Hostile;
    let cases = [
        (Hostile::NoItems, "has no items"),
        (Hostile::SingleObject, "not a PodList"),
        (Hostile::OtherKind, "is a Secret, not a Pod"),
        (Hostile::ChangingVersion, "different resource versions"),
        // The repeated page's objects or its token, whichever is seen first.
        (Hostile::RepeatingToken, "twice"),
        (Hostile::EndlessToken, "without an object"),
        (Hostile::Drip, "did not arrive in full within"),
    ];
    for (how, says) in cases {
        let rec = serve(
            "ml-platform",
            Behaviour {
                page: 2,
                hostile: vec![("pods", how)],
                ..Behaviour::default()
            },
        );
        let started = std::time::Instant::now();
        let out = gpu_trust()
            .args(["audit", "--request-timeout", "3s", "--kubeconfig"])
            .arg(&rec.kubeconfig)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{how:?}: {err}");
        assert!(err.contains("api/v1/pods"), "{how:?}: {err}");
        assert!(err.contains(says), "{how:?}: {err}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{how:?} took {:?}",
            started.elapsed()
        );
    }
}

/// The minor version of the kubectl that runs, if one does.
fn kubectl_minor() -> Option<u32> {
    let out = std::process::Command::new("kubectl")
        .args(["version", "--client", "-o", "json"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v["clientVersion"]["minor"]
        .as_str()?
        .trim_end_matches('+')
        .parse()
        .ok()
}

/// `kubectl kustomize deploy/` (Debian's kubernetes-client) builds the deployment, and the optional
/// components apply on top: the restricted Pod Security profile, TLS from a Secret, a NetworkPolicy
/// admitting only the monitoring namespace, the ServiceMonitor, the reports role and flag (for serve
/// and the CronJob, whose findings never fail the Job). The image is set for every container in one
/// step: the `images` entry `kustomize edit set image gpu-trust=my-registry/gpu-trust:1.2.3` writes.
/// Components need kustomize 3.7.0 or later (kubectl.docs.kubernetes.io, "Kustomize Components"),
/// which kubectl embeds from 1.21 (kustomize 4.0.5; kubectl 1.14 to 1.20 embed kustomize 2.0.3: the
/// kustomize README's version table).
#[test]
fn the_kustomization_builds_a_restricted_deployment() {
    let minor = kubectl_minor();
    if minor.is_none_or(|m| m < 21) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "kubectl 1.21 or later is missing (found 1.{minor:?}): .ci/run installs one"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the_kustomization_builds_a_restricted_deployment: no kubectl 1.21 or later (found 1.{minor:?})"
        );
        return;
    }
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    let overlay = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    // kustomize takes relative paths only.
    let up = overlay
        .path()
        .strip_prefix("/")
        .expect("absolute")
        .components()
        .map(|_| "..")
        .collect::<Vec<_>>()
        .join("/");
    let rel = format!("{up}{}", deploy.canonicalize().expect("deploy").display());
    std::fs::write(
        overlay.path().join("kustomization.yaml"),
        format!(
            "resources: [{rel}]\ncomponents: [{rel}/monitoring, {rel}/reports]\n\
             images:\n- name: gpu-trust\n  newName: my-registry/gpu-trust\n  newTag: 1.2.3\n"
        ),
    )
    .expect("overlay");
    let build = |dir: &Path| -> Vec<serde_json::Value> {
        let out = std::process::Command::new("kubectl")
            .arg("kustomize")
            .arg(dir)
            .output()
            .expect("kubectl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_saphyr::from_multiple(&String::from_utf8_lossy(&out.stdout)).expect("yaml")
    };
    let base = build(&deploy);
    let kind = |docs: &[serde_json::Value], k: &str| -> Vec<serde_json::Value> {
        docs.iter().filter(|d| d["kind"] == k).cloned().collect()
    };
    let ns = &kind(&base, "Namespace")[0];
    assert_eq!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
        "restricted"
    );
    let deployment = &kind(&base, "Deployment")[0];
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
    let args = c["args"].to_string();
    assert!(
        args.contains("--tls-cert-file") && !args.contains("--auth"),
        "{args}"
    );
    assert!(pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .any(|v| v["secret"]["secretName"] == "gpu-trust-tls"));
    let policy = &kind(&base, "NetworkPolicy")[0];
    assert_eq!(
        policy["spec"]["ingress"][0]["from"][0]["namespaceSelector"]["matchLabels"]
            ["kubernetes.io/metadata.name"],
        "monitoring"
    );
    assert!(kind(&base, "CronJob").len() == 1);
    assert!(kind(&base, "ServiceMonitor").is_empty());
    assert!(base
        .iter()
        .any(|d| d["kind"] == "ClusterRoleBinding"
            && d["roleRef"]["name"] == "system:auth-delegator"));
    // The reports role only with the component.
    assert!(!base
        .iter()
        .any(|d| d.to_string().contains("openreports.io")));
    let cron = |docs: &[serde_json::Value]| {
        kind(docs, "CronJob")[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
            .clone()
    };
    let args = cron(&base)["args"].to_string();
    assert!(
        args.contains(r#""--fail-on","never""#) && !args.contains("--write-reports"),
        "{args}"
    );
    let all = build(overlay.path());
    assert_eq!(kind(&all, "ServiceMonitor").len(), 1);
    let serving = &kind(&all, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0];
    assert!(serving["args"].to_string().contains("--write-reports"));
    assert!(cron(&all)["args"].to_string().contains("--write-reports"));
    for c in [serving, &cron(&all)] {
        assert_eq!(c["image"], "my-registry/gpu-trust:1.2.3");
    }
    assert!(all
        .iter()
        .any(|d| d["kind"] == "ClusterRole" && d["rules"][0]["apiGroups"][0] == "openreports.io"));
}

/// `audit --write-reports` (the CronJob's way to keep its report): one OpenReports Report per tenant
/// namespace with findings is written into the cluster the audit read, each with that tenant's
/// findings only; with `--fail-on never` findings do not fail the run. Files are refused: there is
/// no cluster to keep reports in.
#[test]
fn a_live_audit_keeps_openreports_reports_and_findings_do_not_fail_it() {
    let rec = serve("ml-platform", Behaviour::default());
    let policy = example("ml-platform").join("policy.yaml");
    let out = gpu_trust()
        .arg("audit")
        .arg("--kubeconfig")
        .arg(&rec.kubeconfig)
        .arg("--policy")
        .arg(&policy)
        .args(["--fail-on", "never", "--write-reports", "-o", "json"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(report["summary"]["findings"]["critical"].as_u64() > Some(0));
    assert!(stderr.contains("OpenReports reports: "), "{stderr}");
    let reports = rec.server.reports();
    let research = &reports[&("ml-research".to_string(), "gpu-trust".to_string())];
    assert_eq!(research["kind"], "Report");
    assert!(
        research["summary"]["fail"].as_u64() >= Some(1),
        "{research}"
    );
    let text = research.to_string();
    for other in ["ml-training", "ml-serving"] {
        assert!(!text.contains(other), "the research report names {other}");
    }
    assert!(reports.contains_key(&("ml-training".to_string(), "gpu-trust".to_string())));

    let out = gpu_trust()
        .arg("audit")
        .arg(example("ml-platform").join("cluster.yaml"))
        .arg("--write-reports")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--write-reports keeps the reports"));
}
