//! The migration as a bash script: a dry run by default (it prints each command), `--apply` to run
//! them. Every value from the input is single-quoted for the shell.
//!
//! Order: the configs (the mig-parted and device plugin ConfigMaps, the ClusterPolicy patch), the
//! labels and taints of nodes that are not drained, then each step (cordon, drain, labels and taint,
//! wait for the MIG manager's `nvidia.com/mig.config.state=success`, uncordon), then the pod patches
//! of the workloads the current cluster holds. Before repartitioning a node whose driver is affected
//! by an advisory about MIG reconfiguration, or unknown, it warns, and with `--apply` it stops there
//! (exit 3) unless `--accept-driver-risk` is given. When a node's current config label names a config
//! the migration redefines ([`Migration::config_clashes`]), `--apply` stops before anything (exit 3).

use super::{clash_warning, driver_warning, evictions, TargetAudit};
use gpu_trust_model::labels;
use gpu_trust_planner::migrate::{taint_of, MigChange, Migration, NodeChange};
use std::fmt::Write;

/// How long the script waits for a drain and for the MIG manager, per node.
pub const WAIT: &str = "30m";

/// `text` as one single-quoted shell word.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` made safe for a comment line: control characters as `?`.
fn comment(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

const PRELUDE: &str = r#"set -euo pipefail

apply=false
accept_risk=false
for arg in "$@"; do
  case "$arg" in
    --apply) apply=true ;;
    --accept-driver-risk) accept_risk=true ;;
    *)
      echo "usage: $0 [--apply] [--accept-driver-risk]" >&2
      exit 2
      ;;
  esac
done

# Runs a command with --apply; otherwise prints it.
run() {
  if [ "$apply" = true ]; then
    "$@"
  else
    printf '+'
    printf ' %q' "$@"
    printf '\n'
  fi
}

# Runs a command that reads a document on standard input; otherwise prints both.
run_with_input() {
  if [ "$apply" = true ]; then
    "$@"
  else
    printf '+'
    printf ' %q' "$@"
    printf ' <<EOF\n'
    cat
    printf 'EOF\n'
  fi
}

# Warns before a node is repartitioned on a driver the advisory data warns about; with --apply,
# stops unless --accept-driver-risk was given.
driver_risk() {
  printf 'warning: %s\n' "$2" >&2
  if [ "$apply" = true ] && [ "$accept_risk" = false ]; then
    printf 'stopping before node %s: pass --accept-driver-risk to repartition it anyway\n' "$1" >&2
    exit 3
  fi
}
"#;

fn labels_and_taint(s: &mut String, migration: &Migration, n: &NodeChange) {
    if let Some(labels) = migration.script.labels.get(&n.node) {
        let mut labels = labels.clone();
        // The MIG manager sets the state to `pending` when it starts and to `success` when done
        // (NVIDIA/mig-parted `reconfigure-mig.sh`); set with the new config, `pending` keeps the wait
        // below from returning on the state the previous config left.
        if n.mig != MigChange::Unchanged {
            labels.insert(labels::MIG_CONFIG_STATE.to_string(), "pending".to_string());
        }
        let pairs: Vec<String> = labels
            .iter()
            .map(|(k, v)| quote(&format!("{k}={v}")))
            .collect();
        let _ = writeln!(
            s,
            "run kubectl label node {} --overwrite {}",
            quote(&n.node),
            pairs.join(" ")
        );
    }
    let _ = writeln!(
        s,
        "run kubectl taint node {} --overwrite {}",
        quote(&n.node),
        quote(&taint_of(&n.tenant_pool))
    );
}

/// The script of a migration; `plan` names the plan file in its header.
pub fn render(migration: &Migration, audit: &TargetAudit, plan: &str) -> String {
    let mut s = String::from("#!/usr/bin/env bash\n");
    let _ = writeln!(
        s,
        "# The migration of the current cluster to the plan {}, written by `gpu-trust plan --current`.",
        comment(plan)
    );
    s.push_str("# Without arguments it prints what it would run; with --apply it runs it.\n");
    let _ = writeln!(
        s,
        "# The audit of the planned state: {}.",
        if audit.clean {
            format!("clean (no finding at or above {})", audit.fail_on.as_str())
        } else {
            format!(
                "NOT clean ({} findings at or above {})",
                audit.summary.findings.at_or_above(audit.fail_on),
                audit.fail_on.as_str()
            )
        }
    );
    s.push_str(PRELUDE);
    if !migration.safe_to_apply() {
        // Applying the configs would reconfigure these nodes before they are drained: printing is
        // safe, running is not, with no flag to override it.
        s.push('\n');
        for c in &migration.config_clashes {
            let _ = writeln!(
                s,
                "printf 'warning: %s\\n' {} >&2",
                quote(&clash_warning(c))
            );
        }
        s.push_str("if [ \"$apply\" = true ]; then\n  echo 'not applying: a current config name clashes with a planned one (above)' >&2\n  exit 3\nfi\n");
    }

    s.push_str(
        "\necho '== configs: the mig-parted and device plugin ConfigMaps, the ClusterPolicy'\n",
    );
    for doc in &migration.script.config_maps {
        s.push_str("run_with_input kubectl apply -f - <<'GPU_TRUST_EOF'\n");
        s.push_str(doc);
        if !doc.ends_with('\n') {
            s.push('\n');
        }
        s.push_str("GPU_TRUST_EOF\n");
    }
    let _ = writeln!(
        s,
        "run kubectl patch clusterpolicies.nvidia.com {} --type merge -p {}",
        quote(gpu_trust_planner::emit::CLUSTER_POLICY),
        quote(&migration.script.cluster_policy_patch)
    );

    let kept: Vec<&NodeChange> = migration.nodes.iter().filter(|n| !n.drain).collect();
    if !kept.is_empty() {
        s.push_str("\necho '== nodes that keep their GPU configuration: labels and taints only'\n");
        for n in kept {
            labels_and_taint(&mut s, migration, n);
        }
    }

    for step in &migration.steps {
        let nodes: Vec<&NodeChange> = step
            .nodes
            .iter()
            .filter_map(|name| migration.nodes.iter().find(|n| &n.node == name))
            .collect();
        let _ = writeln!(
            s,
            "\necho {}",
            quote(&format!(
                "== step {}: {}",
                step.number,
                step.nodes.join(", ")
            ))
        );
        for c in &step.capacity {
            let instances: Vec<String> = c
                .instances
                .iter()
                .map(|(p, n)| format!("{n} x {p}"))
                .collect();
            let _ = writeln!(
                s,
                "# Pool {} keeps {}, {}{}{} meanwhile.",
                comment(&c.pool),
                crate::text::plural(c.nodes as usize, "node", "nodes"),
                crate::text::plural(c.whole_gpus as usize, "whole GPU", "whole GPUs"),
                if instances.is_empty() {
                    ""
                } else {
                    ", MIG instances "
                },
                instances.join(", ")
            );
        }
        for n in &nodes {
            let _ = writeln!(
                s,
                "# {} becomes {} (pool {}): {}.",
                comment(&n.node),
                comment(&n.role),
                comment(&n.pool),
                comment(&n.reasons.join("; "))
            );
            let _ = writeln!(s, "# Its drain {}.", comment(&evictions(n)));
            if let Some(w) = driver_warning(n) {
                let _ = writeln!(s, "driver_risk {} {}", quote(&n.node), quote(&w));
            }
        }
        for n in &nodes {
            let _ = writeln!(s, "run kubectl cordon {}", quote(&n.node));
        }
        for n in &nodes {
            let _ = writeln!(
                s,
                "run kubectl drain {} --ignore-daemonsets --delete-emptydir-data --timeout={WAIT}",
                quote(&n.node)
            );
        }
        for n in &nodes {
            labels_and_taint(&mut s, migration, n);
        }
        for n in nodes.iter().filter(|n| n.mig != MigChange::Unchanged) {
            let state = labels::MIG_CONFIG_STATE.replace('.', "\\.");
            let _ = writeln!(
                s,
                "run kubectl wait {} --for={} --timeout={WAIT}",
                quote(&format!("node/{}", n.node)),
                quote(&format!("jsonpath={{.metadata.labels.{state}}}=success"))
            );
        }
        for n in &nodes {
            let _ = writeln!(s, "run kubectl uncordon {}", quote(&n.node));
        }
    }

    if !migration.script.patches.is_empty() {
        s.push_str(
            "\necho '== pod patches: each workload gets its planned GPU request and nodes'\n",
        );
        for p in &migration.script.patches {
            let target = format!(
                "run kubectl -n {} patch {} {}",
                quote(&p.namespace),
                quote(&p.kind),
                quote(&p.workload)
            );
            if let Some(check) = &p.check {
                let _ = writeln!(s, "{target} --type json -p {}", quote(check));
            }
            let _ = writeln!(s, "{target} --type strategic -p {}", quote(&p.patch));
        }
    }
    let missing: Vec<String> = migration
        .workloads
        .iter()
        .filter(|w| w.kind.is_none())
        .map(|w| format!("{}/{}", w.namespace, w.workload))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            s,
            "\n# Not in the current cluster, so not patched here (create them with their planned request): {}.",
            comment(&missing.join(", "))
        );
    }
    if !migration.released.is_empty() {
        let names: Vec<String> = migration.released.iter().map(|r| r.node.clone()).collect();
        let _ = writeln!(
            s,
            "# Not used by the plan, left as they are: {}.",
            comment(&names.join(", "))
        );
    }
    s
}
