//! `--emit-job` YAML: it parses, and the fields the probe depends on are there.

use gpu_trust_probe::job::{
    parse_selector, render_job, JobOptions, DEFAULT_PORT, JOB_POD_SUBCOMMAND,
};
use gpu_trust_probe::Scenario;
use serde_json::Value;

fn options() -> JobOptions {
    JobOptions {
        name: "gpu-trust-probe".into(),
        namespace: Some("gpu-audit".into()),
        image: "registry.example/gpu-trust:0.1.0".into(),
        node_selector: vec![("nvidia.com/gpu.product".into(), "NVIDIA-H200".into())],
        resource: "nvidia.com/gpu".into(),
        scenarios: vec![],
        timeout_secs: 120,
        port: DEFAULT_PORT,
        binary: "gpu-trust".into(),
    }
}

fn docs(o: &JobOptions) -> Vec<Value> {
    let yaml = render_job(o).unwrap();
    serde_saphyr::from_multiple::<Value>(&yaml).unwrap()
}

#[test]
fn indexed_job_with_two_pods_each_requesting_one_replica() {
    let d = docs(&options());
    assert_eq!(d.len(), 2);
    let (svc, job) = (&d[0], &d[1]);
    assert_eq!(svc["kind"], "Service");
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert_eq!(svc["spec"]["selector"]["job-name"], "gpu-trust-probe");
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["metadata"]["namespace"], "gpu-audit");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 2);
    assert_eq!(spec["parallelism"], 2);
    assert_eq!(spec["backoffLimit"], 0);
    assert_eq!(spec["activeDeadlineSeconds"], 7 * 120 + 600);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["subdomain"], svc["metadata"]["name"]);
    assert_eq!(pod["nodeSelector"]["nvidia.com/gpu.product"], "NVIDIA-H200");
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/gpu-trust:0.1.0");
    assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], 1);
    assert_eq!(
        c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
        "spec.nodeName"
    );
    // The container toolkit mounts libcuda (compute) and NVML (utility): all the probe loads.
    assert_eq!(c["env"][1]["name"], "NVIDIA_DRIVER_CAPABILITIES");
    assert_eq!(c["env"][1]["value"], "compute,utility");
    // Exec form: the shipped image has no shell.
    assert_eq!(c["command"], serde_json::json!(["gpu-trust"]));
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            JOB_POD_SUBCOMMAND,
            "--peer",
            "gpu-trust-probe-1.gpu-trust-probe:7077",
            "--port",
            "7077",
            "--timeout",
            "120",
            "--serve-for",
            "1440",
        ]
    );
    assert!(!args
        .iter()
        .any(|a| a.contains("/bin/sh") || a.contains('$')));
}

#[test]
fn explains_how_to_collect_the_evidence() {
    let yaml = render_job(&options()).unwrap();
    assert!(yaml.starts_with('#'));
    assert!(yaml.contains(
        "kubectl -n gpu-audit logs -l job-name=gpu-trust-probe,batch.kubernetes.io/job-completion-index=0 --tail=-1 > probe.json"
    ));
}

#[test]
fn scenarios_mig_resources_and_quoting() {
    let mut o = options();
    o.namespace = None;
    o.resource = "nvidia.com/mig-1g.18gb".into();
    o.scenarios = vec![Scenario::DeviceFault, Scenario::MemoryExhaustion];
    o.node_selector = vec![("tier".into(), "a \"quoted\": value".into())];
    let d = docs(&o);
    let job = &d[1];
    assert!(job["metadata"].get("namespace").is_none());
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["nodeSelector"]["tier"], "a \"quoted\": value");
    assert_eq!(
        pod["containers"][0]["resources"]["limits"]["nvidia.com/mig-1g.18gb"],
        1
    );
    let args: Vec<&str> = pod["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.ends_with(&[
            "--scenario",
            "memory-exhaustion",
            "--scenario",
            "device-fault"
        ]),
        "{args:?}"
    );
    assert_eq!(job["spec"]["activeDeadlineSeconds"], 2 * 120 + 600);
}

#[test]
fn rejects_what_kubernetes_would() {
    let mut o = options();
    o.node_selector.clear();
    assert!(render_job(&o)
        .unwrap_err()
        .to_string()
        .contains("--node-selector"));
    let mut o = options();
    o.name = "Probe_1".into();
    assert!(render_job(&o).is_err());
    assert!(parse_selector("novalue").is_err());
    assert!(parse_selector("=v").is_err());
    assert_eq!(
        parse_selector("k=").unwrap(),
        ("k".to_string(), String::new())
    );
}
