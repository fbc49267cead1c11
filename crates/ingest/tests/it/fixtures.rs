//! Fixtures for each source of truth ingest reads, and the fleet it builds from them, as snapshots
//! of a readable summary (every field the rules use) and of the diagnostics.

use gpu_trust_ingest::{ingest, ingest_paths, ingest_text, Options};
use gpu_trust_model::fleet::{ConfigSource, Fleet, Ingested};
use gpu_trust_source::Input;
use std::fmt::Write as _;
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn source(s: &ConfigSource) -> String {
    match s {
        ConfigSource::ConfigMap {
            namespace,
            name,
            key,
            config,
        } => format!(
            "cm {namespace}/{name}[{key}]{}",
            config.as_ref().map(|c| format!(" {c}")).unwrap_or_default()
        ),
        ConfigSource::NodeLabels => "labels".into(),
        ConfigSource::Default => "default".into(),
        ConfigSource::Unknown => "unknown".into(),
    }
}

/// Every field of the fleet the rules read, one line per fact.
fn summary(ing: &Ingested) -> String {
    let f: &Fleet = &ing.fleet;
    let mut out = String::new();
    let names = |ids: &[usize]| -> String {
        let v: Vec<&str> = ids.iter().map(|&i| f.nodes[i].name.as_str()).collect();
        format!("[{}]", v.join(","))
    };
    for n in &f.nodes {
        let taints: Vec<String> = n
            .taints
            .iter()
            .map(|t| format!("{}:{:?}", t.key, t.effect))
            .collect();
        writeln!(
            out,
            "node {} @{} taints={taints:?}",
            n.name, n.object.location
        )
        .unwrap();
        let Some(g) = &n.gpu else { continue };
        writeln!(
            out,
            "  gpu product={:?} model={:?} count={} mem={:?} driver={:?} toolkit={:?} operator={:?} cc={:?} hami={}",
            g.product,
            g.model,
            g.count,
            g.memory_mib,
            g.driver_version.as_ref().map(|v| &v.text),
            g.toolkit_version.as_ref().map(|v| &v.text),
            g.operator_version.as_ref().map(|v| &v.text),
            g.cc_mode,
            g.hami
        )
        .unwrap();
        writeln!(
            out,
            "  sharing {:?} replicas={:?} rename={} fail>1={} list={:?} from {} | mig {:?} from {}",
            g.sharing.strategy,
            g.sharing.replicas,
            g.sharing.rename_by_default,
            g.sharing.fail_requests_greater_than_one,
            g.sharing.device_list_strategy,
            source(&g.sharing.source),
            g.mig_strategy,
            g.mig_source.as_ref().map_or("-".to_string(), source)
        )
        .unwrap();
        for p in &g.gpus {
            let slots: Vec<String> = p
                .mig
                .iter()
                .map(|s| {
                    format!(
                        "{}@{}",
                        s.profile,
                        s.start.map_or("?".into(), |x| x.to_string())
                    )
                })
                .collect();
            writeln!(
                out,
                "  gpu{} uuid={:?} mig={} [{}]",
                p.index,
                p.uuid,
                p.mig_enabled,
                slots.join(" ")
            )
            .unwrap();
        }
    }
    for r in &f.mig_requests {
        writeln!(
            out,
            "mig-request {} gpus={:?} config={} enabled={} devices={:?} error={:?} @{}",
            f.nodes[r.node].name,
            r.gpus,
            r.config,
            r.mig_enabled,
            r.mig_devices,
            r.error,
            r.object.location
        )
        .unwrap();
    }
    for w in &f.workloads {
        writeln!(
            out,
            "workload {} {}/{}{} @{} class={:?} replicas={} sched={:?} sa={:?} owner={:?}",
            w.object.kind,
            w.namespace,
            w.object.name,
            w.role
                .as_ref()
                .map(|r| format!("[{r}]"))
                .unwrap_or_default(),
            w.object.location,
            w.class,
            w.replicas,
            w.scheduler_name,
            w.service_account,
            w.owner
        )
        .unwrap();
        writeln!(
            out,
            "  requests {:?} hami={:?} fraction={:?} dra={:?} peak={:?}",
            w.gpu.resources,
            w.gpu.hami.as_ref().map(|h| (
                h.gpus,
                h.memory_mib,
                h.cores_percent,
                &h.mode,
                h.control_disabled
            )),
            w.gpu
                .fraction
                .as_ref()
                .map(|x| (x.scheduler, x.fraction, x.memory_mib)),
            w.gpu
                .dra
                .iter()
                .map(|d| (&d.claim, &d.template, &d.device_class, d.strategy))
                .collect::<Vec<_>>(),
            w.peak_memory_mib
        )
        .unwrap();
        let s = &w.pod_security;
        let host: Vec<String> = w
            .containers
            .iter()
            .filter(|c| {
                c.privileged
                    || !c.added_capabilities.is_empty()
                    || c.nvidia_visible_devices.is_some()
            })
            .map(|c| {
                format!(
                    "{}(priv={} caps={:?} nvd={:?})",
                    c.name, c.privileged, c.added_capabilities, c.nvidia_visible_devices
                )
            })
            .collect();
        if s.host_pid
            || s.host_ipc
            || s.host_network
            || s.runtime_class_name.is_some()
            || !s.host_paths.is_empty()
            || !s.cdi_annotations.is_empty()
            || !host.is_empty()
        {
            writeln!(
                out,
                "  security pid={} ipc={} net={} runtime={:?} hostPaths={:?} cdi={:?} containers={host:?}",
                s.host_pid, s.host_ipc, s.host_network, s.runtime_class_name, s.host_paths, s.cdi_annotations
            )
            .unwrap();
        }
        if let Some(i) = &w.inference {
            writeln!(
                out,
                "  inference {:?} in {} reserves {:?} via {:?}{}",
                i.engine,
                i.container,
                i.reserved_fraction,
                i.flag,
                i.via
                    .as_ref()
                    .map_or(String::new(), |v| format!(" run by {v}"))
            )
            .unwrap();
        }
        let p = &w.placement;
        writeln!(
            out,
            "  placement node={} devices={:?} observed={} recorded={:?} permitted={}",
            p.node.map_or("-".to_string(), |n| f.nodes[n].name.clone()),
            p.devices
                .iter()
                .map(|d| (d.gpu, d.instance))
                .collect::<Vec<_>>(),
            p.observed,
            p.recorded.iter().map(|r| r.describe()).collect::<Vec<_>>(),
            names(f.permitted_nodes(w))
        )
        .unwrap();
    }
    for n in &f.namespaces {
        writeln!(
            out,
            "namespace {} labels={:?} object={}",
            n.name,
            n.labels,
            n.object.is_some()
        )
        .unwrap();
    }
    for r in &f.runtime_classes {
        writeln!(
            out,
            "runtimeclass {} handler={} confidential={}",
            r.name,
            r.handler,
            r.is_confidential()
        )
        .unwrap();
    }
    if let Some(cp) = &f.cluster_policy {
        writeln!(
            out,
            "clusterpolicy ns={:?} toolkit={:?} driver={:?} plugin={:?} mig={:?} dp={:?} mm={:?} cdi={:?}",
            cp.operator_namespace,
            cp.toolkit_version.as_ref().map(|v| &v.text),
            cp.driver_version.as_ref().map(|v| &v.text),
            cp.device_plugin_version.as_ref().map(|v| &v.text),
            cp.mig_strategy,
            cp.device_plugin_config,
            cp.mig_manager_config,
            cp.cdi_enabled
        )
        .unwrap();
    }
    for b in &f.rbac.bindings {
        let subjects: Vec<String> = b
            .subjects
            .iter()
            .map(|s| {
                format!(
                    "{}:{}{}",
                    s.kind,
                    s.namespace
                        .as_ref()
                        .map(|n| format!("{n}/"))
                        .unwrap_or_default(),
                    s.name
                )
            })
            .collect();
        let rules: Vec<String> = b
            .rules
            .iter()
            .map(|r| {
                format!(
                    "{}/{}:{}",
                    r.api_groups.join("|"),
                    r.resources.join("|"),
                    r.verbs.join("|")
                )
            })
            .collect();
        writeln!(
            out,
            "binding {} ns={:?} role={} missing={} subjects={subjects:?} rules={rules:?}",
            b.object.name, b.namespace, b.role, b.role_missing
        )
        .unwrap();
    }
    for c in &f.resource_claims {
        writeln!(
            out,
            "claim {} template={} class={:?} strategy={:?}",
            c.object, c.template, c.device_class, c.strategy
        )
        .unwrap();
    }
    for u in &f.unresolved {
        writeln!(out, "unresolved {:?} {:?}: {}", u.what, u.node, u.message).unwrap();
    }
    for d in &ing.diagnostics {
        writeln!(out, "diagnostic {d}").unwrap();
    }
    out
}

#[test]
fn kubectl_list_dump_of_a_gpu_operator_cluster() {
    let ing = ingest_text(&fixture("cluster-dump.yaml"), "cluster-dump.yaml");
    insta::assert_snapshot!("cluster_dump", summary(&ing));
}

#[test]
fn the_same_dump_as_json_gives_the_same_fleet() {
    let yaml = ingest_text(&fixture("cluster-dump.yaml"), "cluster-dump.yaml");
    let json = ingest_text(&fixture("cluster-dump.json"), "cluster-dump.json");
    assert!(
        json.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        json.diagnostics
    );
    let strip = |i: &Ingested| {
        let mut v = serde_json::to_value(&i.fleet).unwrap();
        fn walk(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    m.remove("location");
                    m.values_mut().for_each(walk);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        walk(&mut v);
        v
    };
    assert_eq!(strip(&yaml), strip(&json));
    // Locations point into the JSON text: the first Pod item's line there.
    let pod = json
        .fleet
        .workloads
        .iter()
        .find(|w| w.object.name == "acme-infer-0")
        .unwrap();
    let line = fixture("cluster-dump.json")
        .lines()
        .position(|l| l.contains("\"name\": \"acme-infer-0\""))
        .unwrap();
    assert!(pod.object.location.line > 1 && (pod.object.location.line as usize) < line + 1);
}

#[test]
fn gitops_directory_of_manifests() {
    let ing = ingest_paths(
        &[PathBuf::from("tests/fixtures/gitops")],
        &mut std::io::empty(),
        &Options::default(),
    );
    insta::assert_snapshot!("gitops", summary(&ing));
}

#[test]
fn gpu_feature_discovery_labels_without_configs() {
    let ing = ingest_text(&fixture("labels-only.yaml"), "labels-only.yaml");
    insta::assert_snapshot!("labels_only", summary(&ing));
}

#[test]
fn configs_named_but_absent_are_unresolved() {
    let ing = ingest_text(&fixture("missing-config.yaml"), "missing-config.yaml");
    insta::assert_snapshot!("missing_config", summary(&ing));
}

#[test]
fn typed_list_items_take_the_list_kind_and_bad_items_stand_alone() {
    let ing = ingest_text(&fixture("podlist.json"), "podlist.json");
    insta::assert_snapshot!("podlist", summary(&ing));
    let errors: Vec<_> = ing.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(ing.fleet.workloads.len(), 1);
}

fn broken_inputs(fix: bool) -> Vec<Input> {
    ["a-nodes.yaml", "b-pods.yaml", "c-namespaces.yaml"]
        .iter()
        .map(|f| {
            let mut text = fixture(&format!("broken/{f}"));
            if fix && *f == "b-pods.yaml" {
                // The same lines with the malformed second document commented out.
                let mut doc = 0;
                let lines: Vec<String> = text
                    .lines()
                    .map(|l| {
                        if l == "---" {
                            doc += 1;
                            l.to_string()
                        } else if doc == 1 {
                            format!("# {l}")
                        } else {
                            l.to_string()
                        }
                    })
                    .collect();
                text = lines.join("\n") + "\n";
            }
            Input {
                name: format!("broken/{f}"),
                text,
            }
        })
        .collect()
}

#[test]
fn a_malformed_document_names_its_position_and_changes_nothing_else() {
    let broken = ingest(&broken_inputs(false), &Options::default());
    let errors: Vec<String> = broken
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("broken/b-pods.yaml:19:5: error[invalid-yaml]: invalid YAML"),
        "{}",
        errors[0]
    );
    let fixed = ingest(&broken_inputs(true), &Options::default());
    assert!(fixed.diagnostics.is_empty(), "{:?}", fixed.diagnostics);
    assert_eq!(
        serde_json::to_string(&broken.fleet).unwrap(),
        serde_json::to_string(&fixed.fleet).unwrap()
    );
    let names: Vec<&str> = broken
        .fleet
        .workloads
        .iter()
        .map(|w| w.object.name.as_str())
        .collect();
    assert_eq!(names, ["first", "third"]);
}

#[test]
fn the_same_input_gives_byte_identical_json() {
    let a = ingest_text(&fixture("cluster-dump.yaml"), "x.yaml");
    let b = ingest_text(&fixture("cluster-dump.yaml"), "x.yaml");
    assert_eq!(
        serde_json::to_string(&a.fleet).unwrap(),
        serde_json::to_string(&b.fleet).unwrap()
    );
}

#[test]
fn an_alias_bomb_is_refused_quickly_and_the_rest_is_read() {
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb, namespace: x}\ndata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..24 {
        let p = i - 1;
        text.push_str(&format!("  a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
    }
    text.push_str("---\napiVersion: v1\nkind: Namespace\nmetadata: {name: after-the-bomb}\n");
    // 10^24 nodes if expanded: the refusal at the alias limit is what keeps this finite (no clock
    // here: how long it takes is a benchmark's business, not a test's).
    let ing = ingest_text(&text, "bomb.yaml");
    let e = ing.diagnostics.iter().find(|d| d.is_error()).unwrap();
    assert_eq!(e.code, gpu_trust_model::Code::OverLimit, "{e}");
    assert_eq!(e.location.file, "bomb.yaml");
    assert!(ing
        .fleet
        .namespaces
        .iter()
        .any(|n| n.name == "after-the-bomb"));
}

#[test]
fn permitted_sets_are_shared_between_equal_constraints() {
    let mut text = String::new();
    for n in 0..50 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n{n:02}\n  labels: {{nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.count: '1', zone: z{}}}\n",
            n % 2
        ));
    }
    for p in 0..400 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{p}, namespace: ns{}}}\nspec:\n  nodeSelector: {{zone: z{}}}\n  containers: [{{name: c, image: i}}]\n",
            p % 7,
            p % 2
        ));
    }
    let ing = ingest_text(&text, "many.yaml");
    // The empty set, and one set per zone.
    assert_eq!(ing.fleet.node_sets.len(), 3);
    let w = &ing.fleet.workloads[0];
    assert_eq!(ing.fleet.permitted_nodes(w).len(), 25);
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn mutated_dumps_never_panic(cuts in proptest::collection::vec((0usize..30_000, 0usize..60, "[-:{}\\[\\],&*!|>'\"\n #a-z0-9]{0,8}"), 1..4)) {
            let base = fixture("cluster-dump.yaml");
            let mut text = base.clone();
            for (at, len, insert) in cuts {
                let at = at.min(text.len());
                let start = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
                let end = ((start + len).min(text.len())..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
                text.replace_range(start..end, &insert);
            }
            let ing = ingest_text(&text, "mutated.yaml");
            let _ = gpu_trust_ingest::inventory::inventory(&ing.fleet, &ing.diagnostics, &|ns| Some(ns.to_string()), &|_| Default::default(), 0);
        }

        #[test]
        fn mutated_json_dumps_never_panic(at in 0usize..40_000, len in 0usize..80, insert in "[{}\\[\\],:\"0-9a-z ]{0,6}") {
            let mut text = fixture("cluster-dump.json");
            let at = at.min(text.len());
            let end = (at + len).min(text.len());
            if text.is_char_boundary(at) && text.is_char_boundary(end) {
                text.replace_range(at..end, &insert);
            }
            let _ = ingest_text(&text, "mutated.json");
        }
    }
}

#[test]
fn documents_that_are_not_objects_are_errors_but_unknown_kinds_are_not() {
    for text in [
        "- just\n- a list\n",
        "replicaCount: 2\nimage: {tag: latest}\n",
        "apiVersion: v1\nkind: List\nitems: {apiVersion: v1, kind: Pod}\n",
    ] {
        let ing = ingest_text(text, "x.yaml");
        let errors: Vec<_> = ing.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert_eq!(errors.len(), 1, "{text}: {:?}", ing.diagnostics);
        assert_eq!(errors[0].location.to_string(), "x.yaml:1:1");
    }
    let ing = ingest_text("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n", "svc.yaml");
    assert!(ing.diagnostics.is_empty(), "{:?}", ing.diagnostics);
    assert_eq!(ing.fleet.namespaces.len(), 1);
    assert_eq!(ing.fleet.namespaces[0].name, "shop");
}

/// The errors of an ingestion, as printed.
fn errors_of(ing: &Ingested) -> Vec<String> {
    ing.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect()
}

/// The same object read twice: identical readings are one object, silently; readings that differ in
/// what the audit reads are an error at the later one, never "the first wins" (a kustomize base and its
/// patch, a dump and changed manifests, a list item repeated with other contents).
#[test]
fn an_object_read_twice_counts_once_or_is_an_error() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec: {containers: [{name: c, image: i}]}\n";
    let read = |first: &str, second: &str| {
        ingest(
            &[
                Input {
                    name: "dump.yaml".into(),
                    text: first.into(),
                },
                Input {
                    name: "manifests/p.yaml".into(),
                    text: second.into(),
                },
            ],
            &Options::default(),
        )
    };
    let ing = read(pod, pod);
    assert_eq!(ing.fleet.workloads.len(), 1);
    assert_eq!(ing.fleet.workloads[0].object.location.file, "dump.yaml");
    assert!(ing.diagnostics.is_empty(), "{:?}", ing.diagnostics);

    let patched = pod.replace(
        "image: i}",
        "image: i, securityContext: {privileged: true}}",
    );
    let ing = read(pod, &patched);
    let errors = errors_of(&ing);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("manifests/p.yaml:1:1: error[conflicting-duplicate]: Pod a/p is also at dump.yaml:1:1 with different contents (containers)"),
        "{errors:?}"
    );

    // Namespaces, ConfigMaps, Nodes and RuntimeClasses alike.
    for (a, b, what) in [
        (
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {pod-security.kubernetes.io/enforce: restricted}}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {pod-security.kubernetes.io/enforce: privileged}}\n",
            "Namespace a",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\ndata: {x: '1'}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\ndata: {x: '2'}\n",
            "ConfigMap a/c",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: node-1, labels: {nvidia.com/gpu.count: '1'}}\n",
            "apiVersion: v1\nkind: Node\nmetadata: {name: node-1, labels: {nvidia.com/gpu.count: '8'}}\n",
            "Node node-1",
        ),
        (
            "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gpu}\nhandler: runc\n",
            "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gpu}\nhandler: nvidia\n",
            "RuntimeClass gpu",
        ),
    ] {
        let ing = read(a, b);
        let errors = errors_of(&ing);
        assert_eq!(errors.len(), 1, "{what}: {errors:?}");
        assert!(errors[0].contains(&format!("{what} is also at")), "{errors:?}");
        assert!(read(a, a).diagnostics.iter().all(|d| !d.is_error()), "{what}");
    }
}

/// `nvidia.com/gpu.count` beyond any node's is an error at the node, and no GPU is modelled for it.
#[test]
fn an_implausible_gpu_count_is_an_error_not_a_fleet() {
    let ing = ingest_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.count: '4000000000'}\n",
        "n.yaml",
    );
    let errors = errors_of(&ing);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "n.yaml:1:1: error[implausible-gpu-count]: Node node-1: label `nvidia.com/gpu.count` says 4000000000 GPUs"
        ),
        "{errors:?}"
    );
    let gpu = ing.fleet.nodes[0].gpu.as_ref().unwrap();
    assert!(gpu.gpus.is_empty());
    assert!(gpu.unknown.iter().any(|u| u.reason.contains("4000000000")));
}

/// Namespaced objects without `metadata.namespace` are audited in `default`, with one warning per
/// file: `kubectl apply` and Helm put them elsewhere.
#[test]
fn objects_without_a_namespace_are_warned_about_once_per_file() {
    let ing = ingest_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c}]}}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: x}\nspec: {containers: [{name: c}]}\n",
        "chart.yaml",
    );
    let warnings: Vec<String> = ing.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(
            "chart.yaml:1:1: warning[missing-namespace]: 2 namespaced objects in this file name no metadata.namespace"
        ),
        "{warnings:?}"
    );
    assert!(
        ing.fleet
            .workloads
            .iter()
            .filter(|w| w.namespace == "default")
            .count()
            == 2
    );
}

/// A Kustomization in the input is kustomize's input, not rendered: an error naming
/// `kubectl kustomize`, whatever else the folder holds.
#[test]
fn a_kustomization_is_named_as_not_rendered() {
    let ing = ingest_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: prod\nresources: [deployment.yaml]\npatches: [{path: gpu.yaml}]\n",
        "overlays/prod/kustomization.yaml",
    );
    let errors = errors_of(&ing);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "overlays/prod/kustomization.yaml:2:7: error[unrendered-input]: a Kustomization is kustomize's input"
        ),
        "{errors:?}"
    );
    assert!(errors[0].contains("kubectl kustomize"), "{errors:?}");
}

/// One fixture per group of workload controllers (`tests/fixtures/controllers/`): every pod
/// template each controller would run, with its role, replicas, class and constraints.
#[test]
fn workload_controllers_read_through_the_table() {
    let dir = format!("{}/tests/fixtures/controllers", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let name = format!("controllers/{stem}.yaml");
        let ing = ingest_text(&std::fs::read_to_string(&f).unwrap(), &name);
        assert!(
            ing.diagnostics.iter().all(|d| !d.is_error()),
            "{name}: {:?}",
            ing.diagnostics
        );
        insta::assert_snapshot!(format!("controllers_{stem}"), summary(&ing));
    }
}

/// A VM that requests an NVIDIA vGPU the KubeVirt CR serves as a mediated device is not judged: an
/// error at the VM, naming the device and the CR.
#[test]
fn kubevirt_vgpu_requests_are_refused() {
    let text = "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\nspec:\n  configuration:\n    permittedHostDevices:\n      mediatedDevices:\n      - {mdevNameSelector: GRID T4-1Q, resourceName: nvidia.com/GRID_T4-1Q}\n---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: desktop, namespace: vms}\nspec:\n  runStrategy: Always\n  template:\n    spec:\n      domain:\n        devices:\n          gpus: [{deviceName: nvidia.com/GRID_T4-1Q, name: vgpu1}]\n";
    let ing = ingest_text(text, "vgpu.yaml");
    let errors: Vec<_> = ing.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].code == gpu_trust_model::Code::UnjudgedDevice
            && errors[0].message.contains("nvidia.com/GRID_T4-1Q")
            && errors[0].location.line == 10,
        "{}",
        errors[0]
    );
}

/// A VirtualMachineInstance is read through its VirtualMachine only when the input holds that VM,
/// running, with the VMI's GPUs: an owner reference to a VM the input lacks (or one that is halted,
/// or that asks for no GPU) hides nothing, and the VMI is read on its node.
#[test]
fn a_vmi_is_read_through_its_vm_only_when_the_vm_stands_for_it() {
    let vm = |name: &str, strategy: &str, gpus: &str| {
        format!("---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}, namespace: vms}}\nspec:\n  runStrategy: {strategy}\n  template:\n    spec:\n      domain:\n        devices:\n          gpus: [{gpus}]\n")
    };
    let vmi = |name: &str| {
        format!("---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: {name}\n  namespace: vms\n  ownerReferences:\n  - {{apiVersion: kubevirt.io/v1, kind: VirtualMachine, name: {name}, uid: 6f1c, controller: true}}\nspec:\n  domain:\n    devices:\n      gpus:\n      - {{deviceName: nvidia.com/GH100_H100_SXM5_80GB, name: gpu1}}\nstatus:\n  nodeName: gpu-vfio\n")
    };
    let gpu = "{deviceName: nvidia.com/GH100_H100_SXM5_80GB, name: gpu1}";
    let mut text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-vfio\n  labels: {nvidia.com/gpu.workload.config: vm-passthrough}\nstatus:\n  allocatable: {nvidia.com/GH100_H100_SXM5_80GB: \"8\"}\n".to_string();
    text.push_str(&vm("llm-vm", "Always", gpu));
    text.push_str(&vm("halted-vm", "Halted", gpu));
    text.push_str(&vm("cpu-vm", "Always", ""));
    for name in ["llm-vm", "halted-vm", "cpu-vm", "ghost-vm"] {
        text.push_str(&vmi(name));
    }
    let ing = ingest_text(&text, "vms.yaml");
    assert!(
        ing.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        ing.diagnostics
    );
    let vmis: Vec<(&str, Option<&str>)> = ing
        .fleet
        .workloads
        .iter()
        .filter(|w| w.object.kind == "VirtualMachineInstance")
        .map(|w| {
            let node = w.placement.node.map(|n| ing.fleet.nodes[n].name.as_str());
            (w.object.name.as_str(), node)
        })
        .collect();
    assert_eq!(
        vmis,
        [
            ("cpu-vm", Some("gpu-vfio")),
            ("ghost-vm", Some("gpu-vfio")),
            ("halted-vm", Some("gpu-vfio")),
        ]
    );
}

/// Pods on compute instances of one MIG GPU instance (`nvidia.com/mig-1c.3g.40gb`, a profile
/// mig-parted creates: its known configs list `1c.3g.20gb`) share that instance's memory; gpu-trust
/// does not model compute instances, so such a request is refused with the reason, never judged as
/// pods that only share a node.
#[test]
fn compute_instance_requests_are_refused_with_the_reason() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: team-a}\nspec:\n  containers:\n  - name: c\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources: {limits: {nvidia.com/mig-1c.3g.40gb: 1}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: team-b}\nspec:\n  containers:\n  - name: c\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources: {limits: {nvidia.com/mig-3g.40gb: 1}}\n";
    let ing = ingest_text(text, "ci.yaml");
    let errors: Vec<_> = ing.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0];
    assert_eq!(e.location.line, 1, "{e}");
    assert!(
        e.code == gpu_trust_model::Code::UnjudgedDevice
            && e.message.contains("nvidia.com/mig-1c.3g.40gb")
            && e.message.contains("internal/rm/rm.go"),
        "{e}"
    );
}

/// An operator's custom resource gpu-trust has no reader for (NIM Operator's NIMService) names a GPU
/// outside any pod template: with the Deployment it owns in the input it is read through that
/// Deployment (a warning says so); alone, what it runs would not be audited, an error.
#[test]
fn an_unknown_operator_resource_is_read_through_the_workloads_it_owns() {
    let text = fixture("nim-service.yaml");
    let ing = ingest_text(&text, "nim-service.yaml");
    assert!(
        ing.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        ing.diagnostics
    );
    let through: Vec<_> = ing
        .diagnostics
        .iter()
        .filter(|d| d.code == gpu_trust_model::Code::ReadThroughOwned)
        .collect();
    assert_eq!(through.len(), 1, "{:?}", ing.diagnostics);
    assert!(
        through[0]
            .message
            .contains("Deployment nim-service/llama-3-1-8b-instruct"),
        "{}",
        through[0]
    );
    let gpu: Vec<_> = ing
        .fleet
        .workloads
        .iter()
        .filter(|w| w.requests_gpu())
        .map(|w| w.object.kind.as_str())
        .collect();
    assert_eq!(gpu, ["Deployment"]);

    // The NIMService alone: what it runs is missing.
    let alone = text.split("\n---\n").next().unwrap();
    let ing = ingest_text(alone, "nim-service.yaml");
    let errors: Vec<_> = ing.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, gpu_trust_model::Code::UnreadableGpuWorkload);
}
