//! The audit's coverage on the command line: whether a partial audit may pass (`--accept-partial`),
//! with the message that names each gap on standard error (written by
//! `gpu_trust_report::audit::coverage::partial_message`), and the check of `--nodes` files. What is in play
//! and what was evaluated is decided in `gpu_trust_rules::coverage`; this only prints and decides the
//! exit.

use crate::output;
use gpu_trust_model::report::Coverage;
use std::path::{Path, PathBuf};

/// Whether the run may end on its findings: the coverage is complete, or the user accepted a partial
/// audit. Otherwise prints every blocking gap, by layer, and how to accept.
pub fn passes(coverage: &Coverage) -> bool {
    for line in gpu_trust_report::audit::coverage::partial_message(coverage) {
        output::eprint_line(&line);
    }
    !gpu_trust_report::audit::coverage::exits_partial(coverage)
}

/// Checks each `--nodes` file on its own: a file (not standard input), holding at least one Node and
/// no workload but DaemonSets (the device plugin's, whose config the nodes use). Problems in its documents are reported when the whole input is read.
pub fn check_nodes_files(paths: &[PathBuf], follow_symlinks: bool) -> Result<(), String> {
    for path in paths {
        if path == Path::new("-") {
            return Err(
                "--nodes takes a file; standard input can hold the manifests (PATH `-`)".into(),
            );
        }
        let ingested = crate::input::load_cluster(std::slice::from_ref(path), follow_symlinks);
        let name = path.display();
        if ingested.diagnostics.iter().any(|d| d.is_error()) {
            // Reported with file, line and column once the whole input is read.
            continue;
        }
        // DaemonSets are the node agents (the device plugin, GPU Feature Discovery) whose configuration
        // the nodes need; any other workload belongs in PATH.
        if let Some(w) = ingested
            .fleet
            .workloads
            .iter()
            .find(|w| w.kind != gpu_trust_model::fleet::WorkloadKind::DaemonSet)
        {
            return Err(format!(
                "{name}: --nodes takes nodes and their GPU configuration, but it holds {} ({}); pass workloads as PATH",
                w.object, w.object.location
            ));
        }
        if ingested.fleet.nodes.is_empty() {
            return Err(format!(
                "{name}: --nodes holds no Node object (`kubectl get nodes -o yaml` writes them)"
            ));
        }
    }
    Ok(())
}
