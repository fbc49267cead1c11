//! `gen-cluster`: a synthetic GPU cluster, as `kubectl get -o yaml` would print it, for benchmarks and
//! fuzz corpora. Not part of the product's CLI.
//!
//! N nodes in pools of mixed GPU models and sharing modes (MIG mixed strategy, time-slicing, MPS, HAMi,
//! exclusive), with GFD labels, the GPU Operator's ClusterPolicy and ConfigMaps, M tenants with namespaces,
//! and P pods spread over the tenants and nodes. The same arguments always give the same bytes.
//!
//! ```text
//! cargo run --release -p gpu-trust-gen -- --nodes 2000 --pods 60000 --tenants 200 --format yaml --out big.yaml
//! cargo run --release -p gpu-trust-gen -- --nodes 20 --pods 300 --format dir --out manifests/
//! cargo run --release -p gpu-trust-gen -- --shape shared-pool --nodes 40 --tenants 1000 --out pool.yaml
//! ```
//!
//! `--shape spread` (the default) places every pod on a node, each tenant preferring one pool;
//! `--shape shared-pool` makes every node one time-sliced pool and gives each tenant one notebook
//! Deployment allowed anywhere on it (no pods, no trust relations: everyone may meet everyone).

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use serde_json::{json, Map, Value};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "gen-cluster",
    about = "Generate a synthetic multi-tenant GPU cluster dump"
)]
struct Args {
    /// Number of nodes.
    #[arg(long, default_value_t = 200)]
    nodes: usize,
    /// Number of tenant pods.
    #[arg(long, default_value_t = 6000)]
    pods: usize,
    /// Number of tenants (each gets one or two namespaces).
    #[arg(long, default_value_t = 40)]
    tenants: usize,
    /// Seed for the deterministic generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// yaml: one `kind: List` document; json: the same List as JSON (indented); json-min: without
    /// whitespace; dir: a folder of manifests.
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    format: Format,
    /// Output file (yaml, json) or folder (dir); standard output when absent (yaml, json).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write a tenancy policy for the generated tenants to this file.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// What the cluster looks like (see the module documentation).
    #[arg(long, value_enum, default_value_t = Shape::Spread)]
    shape: Shape,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Shape {
    /// Six node pools, every pod placed, each tenant preferring one pool.
    Spread,
    /// One time-sliced pool, one notebook Deployment per tenant that may run on any of its nodes.
    SharedPool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Yaml,
    Json,
    /// The same List as JSON without whitespace (what `kubectl get -o json | jq -c` gives).
    JsonMin,
    Dir,
}

/// A small deterministic generator (SplitMix64), so the output never depends on a library's RNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// One node pool: a GPU model and how the GPU Operator shares it.
struct Pool {
    name: &'static str,
    product: &'static str,
    gpus: u32,
    memory_mib: u32,
    /// `nvidia.com/device-plugin.config` key, if the pool uses a sharing config.
    sharing_key: Option<&'static str>,
    /// `nvidia.com/mig.config` name, if the pool is partitioned.
    mig_config: Option<&'static str>,
    /// Resources a pod on this pool requests, and how many such units a GPU offers.
    resources: &'static [(&'static str, u32)],
    hami: bool,
    /// Share of the nodes, in percent.
    weight: usize,
}

const POOLS: &[Pool] = &[
    Pool {
        name: "h100-mig",
        product: "NVIDIA-H100-80GB-HBM3",
        gpus: 8,
        memory_mib: 81559,
        sharing_key: None,
        mig_config: Some("all-balanced"),
        resources: &[
            ("nvidia.com/mig-1g.10gb", 2),
            ("nvidia.com/mig-2g.20gb", 1),
            ("nvidia.com/mig-3g.40gb", 1),
        ],
        hami: false,
        weight: 30,
    },
    Pool {
        name: "a100-ts",
        product: "NVIDIA-A100-SXM4-80GB",
        gpus: 8,
        memory_mib: 81920,
        sharing_key: Some("time-slicing-4"),
        mig_config: None,
        resources: &[("nvidia.com/gpu", 4)],
        hami: false,
        weight: 25,
    },
    Pool {
        name: "l40s-ts",
        product: "NVIDIA-L40S",
        gpus: 4,
        memory_mib: 46068,
        sharing_key: Some("time-slicing-8"),
        mig_config: None,
        resources: &[("nvidia.com/gpu", 8)],
        hami: false,
        weight: 20,
    },
    Pool {
        name: "h200-mps",
        product: "NVIDIA-H200",
        gpus: 8,
        memory_mib: 143771,
        sharing_key: Some("mps-4"),
        mig_config: None,
        resources: &[("nvidia.com/gpu", 4)],
        hami: false,
        weight: 10,
    },
    Pool {
        name: "l4-hami",
        product: "NVIDIA-L4",
        gpus: 4,
        memory_mib: 23034,
        sharing_key: None,
        mig_config: None,
        resources: &[("nvidia.com/gpu", 10)],
        hami: true,
        weight: 5,
    },
    Pool {
        name: "h100-whole",
        product: "NVIDIA-H100-80GB-HBM3",
        gpus: 8,
        memory_mib: 81559,
        sharing_key: None,
        mig_config: None,
        resources: &[("nvidia.com/gpu", 1)],
        hami: false,
        weight: 10,
    },
];

const OPERATOR_NS: &str = "gpu-operator";

/// The pool every node of `--shape shared-pool` belongs to: A100s time-sliced four ways.
const SHARED_POOL: usize = 1;

fn main() -> std::process::ExitCode {
    match generate(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // `gen-cluster | head` is not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-cluster: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn generate(args: Args) -> Result<()> {
    let mut rng = Rng(args.seed);
    let mut objects = Vec::new();
    objects.push(cluster_policy());
    objects.push(device_plugin_config());
    objects.push(mig_parted_config());
    objects.push(json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": OPERATOR_NS, "labels": {"kubernetes.io/metadata.name": OPERATOR_NS}}
    }));
    objects.extend(operator_daemonsets());

    let nodes = match args.shape {
        Shape::Spread => nodes(&args, &mut rng),
        Shape::SharedPool => (0..args.nodes)
            .map(|i| (SHARED_POOL, node(i, &POOLS[SHARED_POOL], &mut rng)))
            .collect(),
    };
    let tenants = args.tenants.max(1);
    for t in 0..tenants {
        for ns in tenant_namespaces(t) {
            let mut labels = Map::new();
            labels.insert("kubernetes.io/metadata.name".into(), json!(ns));
            labels.insert("tenant.example.com/name".into(), json!(tenant_name(t)));
            if !t.is_multiple_of(3) {
                labels.insert(
                    "pod-security.kubernetes.io/enforce".into(),
                    json!("baseline"),
                );
            }
            objects.push(json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "labels": labels}
            }));
        }
        objects.extend(tenant_rbac(t));
    }
    for (_, node) in &nodes {
        objects.push(node.clone());
    }
    // The nodes of each pool, found once (a pod's node is drawn from its tenant's preferred pool).
    let by_pool: Vec<Vec<&(usize, Value)>> = (0..POOLS.len())
        .map(|pool| nodes.iter().filter(|(pi, _)| *pi == pool).collect())
        .collect();
    match args.shape {
        Shape::Spread => {
            for p in 0..args.pods {
                let tenant = pick_tenant(&mut rng, tenants);
                objects.push(pod(p, tenant, &nodes, &by_pool, &mut rng));
            }
        }
        Shape::SharedPool => {
            for t in 0..tenants {
                objects.push(notebook_deployment(t));
            }
        }
    }

    match args.format {
        Format::Yaml => {
            let list = list(objects);
            let mut w = open(args.out.as_ref())?;
            write_yaml_list(&mut w, &list)?;
            w.flush()?;
        }
        Format::Json | Format::JsonMin => {
            let list = list(objects);
            let mut w = open(args.out.as_ref())?;
            if args.format == Format::Json {
                serde_json::to_writer_pretty(&mut w, &list)?;
            } else {
                serde_json::to_writer(&mut w, &list)?;
            }
            w.write_all(b"\n")?;
            w.flush()?;
        }
        Format::Dir => {
            let dir = args
                .out
                .clone()
                .context("--format dir needs --out FOLDER")?;
            write_dir(&dir, &objects)?;
        }
    }
    if let Some(p) = &args.policy {
        let text = match args.shape {
            Shape::Spread => policy(tenants, true),
            Shape::SharedPool => policy(tenants, false),
        };
        fs::write(p, text).with_context(|| p.display().to_string())?;
    }
    Ok(())
}

fn open(path: Option<&PathBuf>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(BufWriter::new(
            fs::File::create(p).with_context(|| p.display().to_string())?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    })
}

fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
}

/// Writes the List the way kubectl does: `items:` then each object as a `- ` entry.
fn write_yaml_list(w: &mut dyn Write, list: &Value) -> Result<()> {
    writeln!(w, "apiVersion: v1")?;
    writeln!(w, "items:")?;
    if let Some(items) = list["items"].as_array() {
        for item in items {
            let text = serde_saphyr::to_string(item)?;
            let mut first = true;
            for line in text.lines() {
                if line == "---" {
                    continue;
                }
                if first {
                    writeln!(w, "- {line}")?;
                    first = false;
                } else {
                    writeln!(w, "  {line}")?;
                }
            }
        }
    }
    writeln!(w, "kind: List")?;
    writeln!(w, "metadata:")?;
    writeln!(w, "  resourceVersion: \"\"")?;
    Ok(())
}

fn write_dir(dir: &PathBuf, objects: &[Value]) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    for (i, chunk) in objects.chunks(10).enumerate() {
        let mut text = String::new();
        for o in chunk {
            text.push_str("---\n");
            let doc = serde_saphyr::to_string(o)?;
            text.push_str(doc.trim_start_matches("---\n"));
        }
        let path = dir.join(format!("manifest-{i:05}.yaml"));
        fs::write(&path, text).with_context(|| path.display().to_string())?;
    }
    Ok(())
}

fn tenant_name(t: usize) -> String {
    format!("tenant-{t:03}")
}

fn tenant_namespaces(t: usize) -> Vec<String> {
    let base = tenant_name(t);
    if t.is_multiple_of(4) {
        vec![format!("{base}-prod"), format!("{base}-dev")]
    } else {
        vec![format!("{base}-prod")]
    }
}

/// Tenants are not equally large: a few big tenants and a long tail.
fn pick_tenant(rng: &mut Rng, tenants: usize) -> usize {
    let a = rng.below(tenants);
    let b = rng.below(tenants);
    a.min(b)
}

fn pick_pool(rng: &mut Rng) -> usize {
    let total: usize = POOLS.iter().map(|p| p.weight).sum();
    let mut x = rng.below(total);
    for (i, p) in POOLS.iter().enumerate() {
        if x < p.weight {
            return i;
        }
        x -= p.weight;
    }
    0
}

fn nodes(args: &Args, rng: &mut Rng) -> Vec<(usize, Value)> {
    (0..args.nodes)
        .map(|i| {
            let pool_idx = pick_pool(rng);
            (pool_idx, node(i, &POOLS[pool_idx], rng))
        })
        .collect()
}

fn node(i: usize, pool: &Pool, rng: &mut Rng) -> Value {
    let name = format!("gpu-{}-{i:05}", pool.name);
    let driver = ["550.127.05", "550.90.07", "570.133.20", "535.216.01"][rng.below(4)];
    let parts: Vec<&str> = driver.split('.').collect();
    let mut labels = Map::new();
    for (k, v) in [
        ("beta.kubernetes.io/arch", "amd64"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/os", "linux"),
        ("node.kubernetes.io/instance-type", "gpu-8x"),
        ("nvidia.com/gpu.present", "true"),
        ("nvidia.com/gpu.deploy.driver", "true"),
        ("nvidia.com/gpu.deploy.container-toolkit", "true"),
        ("nvidia.com/gpu.deploy.device-plugin", "true"),
        ("nvidia.com/gpu.deploy.gpu-feature-discovery", "true"),
        ("nvidia.com/gpu.family", "hopper"),
        ("nvidia.com/gpu.machine", "SYS-821GE-TNHR"),
        ("nvidia.com/cuda.runtime-version.major", "12"),
        ("nvidia.com/cuda.runtime-version.minor", "4"),
    ] {
        labels.insert(k.into(), json!(v));
    }
    labels.insert("kubernetes.io/hostname".into(), json!(name));
    labels.insert("pool.example.com/name".into(), json!(pool.name));
    labels.insert("nvidia.com/gpu.product".into(), json!(pool.product));
    labels.insert("nvidia.com/gpu.count".into(), json!(pool.gpus.to_string()));
    labels.insert(
        "nvidia.com/gpu.memory".into(),
        json!(pool.memory_mib.to_string()),
    );
    labels.insert("nvidia.com/cuda.driver-version.full".into(), json!(driver));
    labels.insert(
        "nvidia.com/cuda.driver-version.major".into(),
        json!(parts[0]),
    );
    labels.insert(
        "nvidia.com/cuda.driver-version.minor".into(),
        json!(parts[1]),
    );
    labels.insert(
        "nvidia.com/cuda.driver-version.revision".into(),
        json!(parts[2]),
    );
    let mut capacity = Map::new();
    capacity.insert("cpu".into(), json!("192"));
    capacity.insert("memory".into(), json!("2113412996Ki"));
    capacity.insert("pods".into(), json!("110"));
    if let Some(key) = pool.sharing_key {
        labels.insert("nvidia.com/device-plugin.config".into(), json!(key));
        let strategy = if key.starts_with("mps") {
            "mps"
        } else {
            "time-slicing"
        };
        labels.insert("nvidia.com/gpu.sharing-strategy".into(), json!(strategy));
        labels.insert(
            "nvidia.com/gpu.replicas".into(),
            json!(pool.resources[0].1.to_string()),
        );
    } else {
        labels.insert("nvidia.com/gpu.sharing-strategy".into(), json!("none"));
    }
    if let Some(cfg) = pool.mig_config {
        labels.insert("nvidia.com/mig.config".into(), json!(cfg));
        labels.insert("nvidia.com/mig.config.state".into(), json!("success"));
        labels.insert("nvidia.com/mig.strategy".into(), json!("mixed"));
        labels.insert("nvidia.com/mig.capable".into(), json!("true"));
        for (res, per_gpu) in pool.resources {
            let profile = res.trim_start_matches("nvidia.com/mig-");
            labels.insert(
                format!("nvidia.com/mig-{profile}.count"),
                json!((per_gpu * pool.gpus).to_string()),
            );
        }
    }
    for (res, per_gpu) in pool.resources {
        capacity.insert((*res).into(), json!((per_gpu * pool.gpus).to_string()));
    }
    let mut annotations = Map::new();
    annotations.insert("node.alpha.kubernetes.io/ttl".into(), json!("0"));
    annotations.insert(
        "volumes.kubernetes.io/controller-managed-attach-detach".into(),
        json!("true"),
    );
    if pool.hami {
        let devices: Vec<Value> = (0..pool.gpus)
            .map(|g| {
                json!({"id": format!("GPU-{:08x}-{g}", i), "count": 10, "devmem": pool.memory_mib,
                       "devcore": 100, "type": pool.product, "health": true})
            })
            .collect();
        annotations.insert(
            "hami.io/node-nvidia-register".into(),
            json!(serde_json::to_string(&devices).unwrap_or_default()),
        );
        capacity.insert("nvidia.com/gpu".into(), json!((10 * pool.gpus).to_string()));
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": annotations,
            "creationTimestamp": "2026-10-01T08:00:00Z",
            "labels": labels,
            "name": name,
            "resourceVersion": (1_000_000 + i).to_string(),
            "uid": format!("6c1e0c5a-0000-4000-8000-{i:012}"),
        },
        "spec": {
            "podCIDR": format!("10.{}.{}.0/24", (i / 256) % 256, i % 256),
            "providerID": format!("aws:///us-east-1a/i-{i:017x}"),
            "taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}]
        },
        "status": {
            "allocatable": capacity.clone(),
            "capacity": capacity,
            "conditions": [
                {"lastHeartbeatTime": "2026-12-01T10:00:00Z", "lastTransitionTime": "2026-10-01T08:05:00Z",
                 "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True", "type": "Ready"},
                {"lastHeartbeatTime": "2026-12-01T10:00:00Z", "lastTransitionTime": "2026-10-01T08:05:00Z",
                 "message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory",
                 "status": "False", "type": "MemoryPressure"}
            ],
            "nodeInfo": {
                "architecture": "amd64", "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.8.0-1015-aws", "kubeletVersion": "v1.31.4", "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.5 LTS"
            }
        }
    })
}

fn pod(
    p: usize,
    tenant: usize,
    nodes: &[(usize, Value)],
    by_pool: &[Vec<&(usize, Value)>],
    rng: &mut Rng,
) -> Value {
    let namespaces = tenant_namespaces(tenant);
    let ns = namespaces[rng.below(namespaces.len())].clone();
    // Each tenant prefers one pool, so tenants meet on some nodes and not on others.
    let (pool_idx, node_name) = if nodes.is_empty() {
        (0, None)
    } else {
        let preferred = tenant % POOLS.len();
        let candidates = &by_pool[preferred];
        let (pi, n) = if candidates.is_empty() || rng.below(10) == 0 {
            let (pi, n) = &nodes[rng.below(nodes.len())];
            (*pi, n)
        } else {
            let (pi, n) = candidates[rng.below(candidates.len())];
            (*pi, n)
        };
        (pi, n["metadata"]["name"].as_str().map(str::to_string))
    };
    let pool = &POOLS[pool_idx];
    let resource = pool.resources[rng.below(pool.resources.len())].0;
    let kind = rng.below(10);
    let (name, image, args): (String, &str, Vec<&str>) = match kind {
        0..=3 => (
            format!("vllm-{p:06}"),
            "vllm/vllm-openai:v0.8.5",
            vec![
                "--model",
                "meta-llama/Llama-3.1-8B-Instruct",
                "--gpu-memory-utilization",
                "0.45",
            ],
        ),
        4 | 5 => (
            format!("notebook-{p:06}"),
            "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-01",
            vec!["start-notebook.py"],
        ),
        6 => (
            format!("tgi-{p:06}"),
            "ghcr.io/huggingface/text-generation-inference:3.0.1",
            vec!["--model-id", "mistralai/Mistral-7B-Instruct-v0.3"],
        ),
        _ => (
            format!("batch-{p:06}"),
            "nvcr.io/nvidia/pytorch:24.10-py3",
            vec!["python", "embed.py"],
        ),
    };
    let mut limits = Map::new();
    limits.insert("cpu".into(), json!("4"));
    limits.insert("memory".into(), json!("32Gi"));
    let mut annotations = Map::new();
    if pool.hami {
        limits.insert("nvidia.com/gpu".into(), json!("1"));
        limits.insert("nvidia.com/gpumem".into(), json!("4096"));
        limits.insert("nvidia.com/gpucores".into(), json!("25"));
        if let Some(n) = &node_name {
            annotations.insert("hami.io/vgpu-node".into(), json!(n));
            let idx = rng.below(pool.gpus as usize);
            annotations.insert(
                "hami.io/vgpu-devices-allocated".into(),
                json!(format!("GPU-{}-{idx},NVIDIA,4096,25:;", n)),
            );
        }
    } else {
        limits.insert(resource.into(), json!("1"));
    }
    let mut spec = json!({
        "containers": [{
            "name": "main",
            "image": image,
            "args": args,
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
            "resources": {"limits": limits.clone(), "requests": limits},
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                              "name": "kube-api-access", "readOnly": true}]
        }],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": true,
        "nodeSelector": {"pool.example.com/name": pool.name},
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": if pool.hami { "hami-scheduler" } else { "default-scheduler" },
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}
        ],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]
    });
    if let (Some(n), Some(obj)) = (&node_name, spec.as_object_mut()) {
        obj.insert("nodeName".into(), json!(n));
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": annotations,
            "creationTimestamp": "2026-11-20T12:00:00Z",
            "labels": {"app": name.split('-').next().unwrap_or("app"), "tenant.example.com/name": tenant_name(tenant)},
            "name": name,
            "namespace": ns,
            "resourceVersion": (5_000_000 + p).to_string(),
            "uid": format!("0b7c41a2-1111-4000-8000-{p:012}"),
        },
        "spec": spec,
        "status": {
            "conditions": [
                {"lastTransitionTime": "2026-11-20T12:00:05Z", "status": "True", "type": "Initialized"},
                {"lastTransitionTime": "2026-11-20T12:01:10Z", "status": "True", "type": "Ready"},
                {"lastTransitionTime": "2026-11-20T12:00:01Z", "status": "True", "type": "PodScheduled"}
            ],
            "containerStatuses": [{
                "containerID": format!("containerd://{:064x}", p),
                "image": image, "imageID": format!("{image}@sha256:{:064x}", p),
                "lastState": {}, "name": "main", "ready": true, "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": "2026-11-20T12:01:00Z"}}
            }],
            "hostIP": "10.0.0.10",
            "phase": "Running",
            "podIP": format!("10.244.{}.{}", (p / 256) % 256, p % 256),
            "qosClass": "Guaranteed",
            "startTime": "2026-11-20T12:00:01Z"
        }
    })
}

/// A tenant's notebook server as a Deployment (what `kubectl get deployments` prints): one replica
/// of a Jupyter image with one time-sliced GPU, allowed on every node of the shared pool and nowhere
/// else. Not scheduled: the audit judges where it may run.
fn notebook_deployment(t: usize) -> Value {
    let ns = format!("{}-prod", tenant_name(t));
    let pool = &POOLS[SHARED_POOL];
    let name = "notebook";
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {"app": name, "tenant.example.com/name": tenant_name(t)},
            "resourceVersion": (7_000_000 + t).to_string(),
            "uid": format!("5d2a0c11-2222-4000-8000-{t:012}"),
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tenant.example.com/name": tenant_name(t)}},
                "spec": {
                    "containers": [{
                        "name": "main",
                        "image": "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-01",
                        "args": ["start-notebook.py"],
                        "resources": {
                            "limits": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"},
                            "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"}
                        },
                        "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}
                    }],
                    "nodeSelector": {"pool.example.com/name": pool.name},
                    "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
                    "tolerations": [
                        {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}
                    ]
                }
            }
        },
        "status": {"availableReplicas": 1, "readyReplicas": 1, "replicas": 1, "updatedReplicas": 1}
    })
}

fn cluster_policy() -> Value {
    json!({
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {
            "operator": {"defaultRuntime": "containerd"},
            "driver": {"enabled": true, "version": "550.127.05"},
            "toolkit": {"enabled": true, "version": "v1.17.4-ubuntu20.04"},
            "devicePlugin": {"enabled": true, "version": "v0.17.0",
                             "config": {"name": "device-plugin-config", "default": "exclusive"}},
            "mig": {"strategy": "mixed"},
            "migManager": {"enabled": true, "config": {"name": "default-mig-parted-config", "default": "all-disabled"}},
            "gfd": {"enabled": true},
            "dcgmExporter": {"enabled": true},
            "cdi": {"enabled": false}
        }
    })
}

fn device_plugin_config() -> Value {
    let ts = |replicas: u32| {
        format!(
            "version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: {replicas}\n"
        )
    };
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "device-plugin-config", "namespace": OPERATOR_NS},
        "data": {
            "exclusive": "version: v1\nflags:\n  migStrategy: mixed\n",
            "time-slicing-4": ts(4),
            "time-slicing-8": ts(8),
            "mps-4": "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
        }
    })
}

fn mig_parted_config() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "default-mig-parted-config", "namespace": OPERATOR_NS},
        "data": {
            "config.yaml": "version: v1\nmig-configs:\n  all-disabled:\n    - devices: all\n      mig-enabled: false\n  all-balanced:\n    - device-filter: [\"0x233010DE\", \"0x233110DE\"]\n      devices: all\n      mig-enabled: true\n      mig-devices:\n        \"1g.10gb\": 2\n        \"2g.20gb\": 1\n        \"3g.40gb\": 1\n"
        }
    })
}

fn operator_daemonsets() -> Vec<Value> {
    ["nvidia-device-plugin-daemonset", "nvidia-container-toolkit-daemonset", "nvidia-dcgm-exporter"]
        .iter()
        .map(|name| {
            json!({
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": OPERATOR_NS},
                "spec": {
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {
                            "hostPID": true,
                            "nodeSelector": {"nvidia.com/gpu.present": "true"},
                            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                            "containers": [{
                                "name": name,
                                "image": format!("nvcr.io/nvidia/{name}:v24.9.2"),
                                "securityContext": {"privileged": true},
                                "volumeMounts": [{"name": "run-nvidia", "mountPath": "/run/nvidia"}]
                            }],
                            "volumes": [{"name": "run-nvidia", "hostPath": {"path": "/run/nvidia"}}]
                        }
                    }
                }
            })
        })
        .collect()
}

fn tenant_rbac(t: usize) -> Vec<Value> {
    let ns = format!("{}-prod", tenant_name(t));
    vec![json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "team-edit", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": format!("{}-devs", tenant_name(t))}]
    })]
}

/// The tenancy policy: every tenant declared, trust `none` by default; with `relations`, every two
/// neighbouring tenants trust each other `limited`.
fn policy(tenants: usize, relations: bool) -> String {
    let mut s = String::from(
        "apiVersion: gpu-trust/v1\nkind: TenancyPolicy\ntenantLabel: tenant.example.com/name\ntenants:\n",
    );
    // Relations may only name declared tenants; the tenant label fills in their namespaces.
    for t in 0..tenants {
        s.push_str(&format!("  - name: {}\n", tenant_name(t)));
    }
    s.push_str("trust:\n  default: none\n  relations:\n");
    if !relations {
        s.push_str("    []\n");
        return s.replace("  relations:\n    []\n", "  relations: []\n");
    }
    for t in (0..tenants.saturating_sub(1)).step_by(2) {
        s.push_str(&format!(
            "    - tenants: [{}, {}]\n      level: limited\n",
            tenant_name(t),
            tenant_name(t + 1)
        ));
    }
    if tenants < 2 {
        s.push_str("    []\n");
        s = s.replace("  relations:\n    []\n", "  relations: []\n");
    }
    s
}
