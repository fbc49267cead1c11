//! `gpu-trust policy init`: the drafted policy ([`gpu_trust_policy::init::Draft`]) as a policy file
//! with comments saying why each tenant holds its namespaces and where gpu-trust guessed. Every name
//! is written as a double-quoted scalar (a JSON string), so no name reads as another YAML type.

use gpu_trust_policy::init::{Draft, Source};
use std::fmt::Write as _;

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn why(source: &Source, tenant: &str) -> String {
    match source {
        Source::Capsule => format!("Capsule Tenant {tenant} (label capsule.clastix.io/tenant)"),
        Source::Hnc => format!("the HNC tree under namespace {tenant} (its tree labels)"),
        Source::VCluster => {
            format!("the host namespace of virtual cluster {tenant} (its synced pods' vcluster.loft.sh/managed-by)")
        }
        Source::KubeflowProfile => {
            format!("Kubeflow profile {tenant} (label app.kubernetes.io/part-of: kubeflow-profile)")
        }
        Source::TeamLabel(key) => format!(
            "guess: namespaces labelled {key}: {tenant}, a team label no tool defines; check they are one tenant"
        ),
        Source::Alone => {
            "guess: no multi-tenancy label groups this namespace: a tenant of its own".to_string()
        }
    }
}

/// The policy file, `from` naming what was read (`cluster.yaml`, `the cluster of context prod`).
pub fn yaml(draft: &Draft, from: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# A tenancy policy to start from, written by gpu-trust policy init\n\
         # from the namespaces of {from}.\n\
         # Read every tenant before using it: trust between tenants is none until a relation says\n\
         # otherwise, and the lines marked `guess` are gpu-trust's, not a multi-tenancy tool's.\n\
         # `gpu-trust policy check FILE` validates it."
    );
    out.push_str("apiVersion: gpu-trust/v1\nkind: TenancyPolicy\n\n");
    if !draft.builtin_platform.is_empty() {
        let _ = writeln!(
            out,
            "# Built-in platform namespaces of this cluster, never tenants: {}.",
            draft.builtin_platform.join(", ")
        );
    }
    if !draft.platform.is_empty() {
        out.push_str(
            "# guess: named like kube-system (`*-system`), so infrastructure, not a tenant.\nplatformNamespaces:\n",
        );
        for ns in &draft.platform {
            let _ = writeln!(out, "  - {}", quoted(ns));
        }
    }
    out.push('\n');
    if draft.tenants.is_empty() {
        out.push_str("# No namespace of the input belongs to a tenant.\ntenants: []\n");
    } else {
        out.push_str("tenants:\n");
        for t in &draft.tenants {
            for s in &t.sources {
                let _ = writeln!(out, "  # {}", why(s, &t.name));
            }
            let namespaces: Vec<String> = t.namespaces.iter().map(|n| quoted(n)).collect();
            let _ = writeln!(
                out,
                "  - name: {}\n    namespaces: [{}]",
                quoted(&t.name),
                namespaces.join(", ")
            );
        }
    }
    out.push_str("\n# Different tenants trust each other not at all until a relation says so:\n");
    out.push_str("#   relations: [{tenants: [a, b], level: limited}]\ntrust:\n  default: none\n");
    out
}
