//! `--emit-job`: the probe as a Kubernetes indexed Job, so that the device plugin places victim and
//! aggressor the way it places tenants.
//!
//! Pod 0 runs the victim and the probe's coordination and prints the JSON evidence on its standard
//! output; pod 1 serves aggressor workers on a port. A headless Service named like the Job gives pod 1 the
//! stable name `<job>-1.<job>`: an indexed Job's pods have the host name `<job>-<index>`, and a `subdomain`
//! equal to a headless Service's name gives them DNS records under it (Kubernetes documentation, "Job with
//! Pod-to-Pod Communication"). `JOB_COMPLETION_INDEX` is set in each pod of an indexed Job, and the pods
//! carry the label `batch.kubernetes.io/job-completion-index` (Kubernetes 1.28 and later).

use crate::error::ProbeError;
use gpu_trust_model::evidence::Scenario;

/// The container port the aggressor pod serves on.
pub const DEFAULT_PORT: u16 = 7077;

/// The hidden subcommand the Job's pods run: it reads the pod's completion index and takes the
/// victim's role (index 0) or the aggressor's (index 1).
pub const JOB_POD_SUBCOMMAND: &str = "probe-job-pod";
/// The driver libraries the probe needs in its container, and nothing else: `compute` (libcuda) and
/// `utility` (NVML). The image needs no CUDA library of its own: the kernels are PTX inside the binary.
/// Also the NVIDIA Container Toolkit's default when the variable is unset; set so that an image's own value
/// cannot narrow it. Source: NVIDIA/nvidia-container-toolkit, internal/config/image/capabilities.go
/// (`DefaultDriverCapabilities`, and the `compute` and `utility` capabilities).
pub const DRIVER_CAPABILITIES: &str = "compute,utility";
/// Slack on top of the scenarios' time bounds, for image pulls, scheduling and connecting.
const SLACK_SECS: u64 = 600;

#[derive(Debug, Clone)]
pub struct JobOptions {
    pub name: String,
    pub namespace: Option<String>,
    pub image: String,
    pub node_selector: Vec<(String, String)>,
    pub resource: String,
    pub scenarios: Vec<Scenario>,
    pub timeout_secs: u64,
    pub port: u16,
    /// The binary's path in the image.
    pub binary: String,
}

/// Parses `K=V`.
pub fn parse_selector(text: &str) -> Result<(String, String), ProbeError> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(ProbeError::Usage(format!(
            "`--node-selector {text}`: expected KEY=VALUE (e.g. nvidia.com/gpu.product=NVIDIA-H200)"
        ))),
    }
}

fn dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 52
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A YAML double-quoted scalar (JSON string syntax is a subset of it).
fn q(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The Service and the Job, as one multi-document YAML text with comments.
pub fn render_job(o: &JobOptions) -> Result<String, ProbeError> {
    if !dns_label(&o.name) {
        return Err(ProbeError::Usage(format!(
            "job name `{}` must be a DNS label of at most 52 characters",
            o.name
        )));
    }
    if let Some(ns) = &o.namespace {
        if !dns_label(ns) {
            return Err(ProbeError::Usage(format!(
                "namespace `{ns}` is not a DNS label"
            )));
        }
    }
    if o.node_selector.is_empty() {
        return Err(ProbeError::Usage(
            "--emit-job needs at least one --node-selector KEY=VALUE naming the nodes to probe"
                .into(),
        ));
    }
    if o.resource.trim().is_empty() || o.resource.contains(char::is_whitespace) {
        return Err(ProbeError::Usage(format!(
            "`{}` is not a resource name",
            o.resource
        )));
    }
    if o.image.trim().is_empty() {
        return Err(ProbeError::Usage("--image must not be empty".into()));
    }
    let name = &o.name;
    let scenarios = crate::orchestrate::ordered(&o.scenarios);
    let budget = o.timeout_secs.saturating_mul(scenarios.len() as u64) + SLACK_SECS;
    let ns_flag = o
        .namespace
        .as_deref()
        .map(|n| format!("-n {n} "))
        .unwrap_or_default();
    let mut y = String::new();
    y.push_str(&format!(
        "# gpu-trust probe as a Kubernetes indexed Job. Pod 0 is the victim and prints the evidence; pod 1 is\n\
         # the aggressor. Each requests one {res} on the nodes selected by\n\
         #   {sel}\n\
         # so the device plugin places them as it places two tenants.\n\
         #\n\
         # Run it and collect the JSON from pod 0's log:\n\
         #   kubectl apply -f probe-job.yaml\n\
         #   kubectl {ns_flag}wait --for=condition=complete job/{name} --timeout={budget}s\n\
         #   kubectl {ns_flag}logs -l job-name={name},batch.kubernetes.io/job-completion-index=0 --tail=-1 > probe.json\n\
         #   gpu-trust audit <cluster objects> --evidence probe.json\n\
         #   kubectl {ns_flag}delete -f probe-job.yaml\n\
         #\n\
         # The pods measure each other only if the device plugin put them on one GPU: the JSON's victim and\n\
         # aggressor UUIDs say where they ran (mechanism separate-gpus otherwise).\n",
        res = o.resource,
        sel = o
            .node_selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
    ));
    let meta = |y: &mut String| {
        y.push_str("metadata:\n");
        y.push_str(&format!("  name: {}\n", q(name)));
        if let Some(ns) = &o.namespace {
            y.push_str(&format!("  namespace: {}\n", q(ns)));
        }
        y.push_str("  labels:\n    app.kubernetes.io/name: gpu-trust-probe\n");
    };
    y.push_str("apiVersion: v1\nkind: Service\n");
    meta(&mut y);
    y.push_str(&format!(
        "spec:\n  clusterIP: None\n  publishNotReadyAddresses: true\n  selector:\n    job-name: {}\n  ports:\n    - name: probe\n      port: {}\n",
        q(name),
        o.port
    ));
    y.push_str("---\napiVersion: batch/v1\nkind: Job\n");
    meta(&mut y);
    y.push_str(&format!(
        "spec:\n  completionMode: Indexed\n  completions: 2\n  parallelism: 2\n  backoffLimit: 0\n  activeDeadlineSeconds: {budget}\n"
    ));
    y.push_str("  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: gpu-trust-probe\n");
    y.push_str(&format!(
        "    spec:\n      restartPolicy: Never\n      subdomain: {}\n      nodeSelector:\n",
        q(name)
    ));
    for (k, v) in &o.node_selector {
        y.push_str(&format!("        {}: {}\n", q(k), q(v)));
    }
    // Exec form: the shipped image holds the binary and no shell. `probe-job-pod` reads the pod's
    // JOB_COMPLETION_INDEX (set by the Job controller in Indexed mode): pod 0 probes against pod 1's
    // aggressor and exits 0 on a result, findings included; pod 1 serves the aggressor.
    let mut args: Vec<String> = vec![
        JOB_POD_SUBCOMMAND.to_string(),
        "--peer".into(),
        format!("{name}-1.{name}:{}", o.port),
        "--port".into(),
        o.port.to_string(),
        "--timeout".into(),
        o.timeout_secs.to_string(),
        "--serve-for".into(),
        budget.to_string(),
    ];
    if !o.scenarios.is_empty() {
        for sc in &scenarios {
            args.push("--scenario".into());
            args.push(sc.to_string());
        }
    }
    y.push_str("      containers:\n        - name: probe\n");
    y.push_str(&format!("          image: {}\n", q(&o.image)));
    y.push_str(&format!(
        "          command: [{}]\n          args:\n",
        q(&o.binary)
    ));
    for a in &args {
        y.push_str(&format!("            - {}\n", q(a)));
    }
    y.push_str(
        "          env:\n            - name: NODE_NAME\n              valueFrom:\n                fieldRef:\n                  fieldPath: spec.nodeName\n",
    );
    y.push_str(&format!(
        "            - name: NVIDIA_DRIVER_CAPABILITIES\n              value: {}\n",
        q(DRIVER_CAPABILITIES)
    ));
    y.push_str(&format!(
        "          ports:\n            - name: probe\n              containerPort: {}\n",
        o.port
    ));
    y.push_str(&format!(
        "          resources:\n            limits:\n              {}: 1\n",
        q(&o.resource)
    ));
    Ok(y)
}
