//! From Kubernetes manifests and cluster dumps to the fleet model.
//!
//! [`ingest`] reads inputs (files, directories and standard input come through
//! [`gpu_trust_source::gather`]) of YAML or JSON, multi-document streams and `kind: List` / `*List`
//! dumps, and returns the [`Fleet`] with every problem it found as a [`Diagnostic`]. One bad document
//! never hides the others: a malformed document is an error diagnostic (file, line, column) and the
//! rest of the input is read as if it were absent; an object of a known kind with a wrong shape is an
//! error for that object only. A document that is not an object (no `apiVersion` and `kind`) is an
//! error, as kubectl makes it, and so is a kind or version the API server would refuse (`kind:
//! node`, a Node at `v2`); lists inside lists are flattened. Platform namespaces are not special
//! here. An object without a namespace is in `default`. Pods that have finished (`Succeeded`,
//! `Failed`) hold no device and are left out. The same object read twice counts once.
//!
//! What it reads: Node, Pod and the built-in pod-owning kinds (Deployment, StatefulSet, DaemonSet,
//! ReplicaSet, Job, CronJob), the workload controllers of the controllers table (`controllers.rs`:
//! Kubeflow, Trainer, JobSet, Volcano, LeaderWorkerSet, KubeRay, KServe, Knative, Argo, vLLM
//! production-stack...), Namespace, ConfigMap (device plugin and mig-parted configs), ClusterPolicy
//! (`nvidia.com/v1`), RuntimeClass, ResourceClaim, ResourceClaimTemplate, DeviceClass, Role,
//! ClusterRole, RoleBinding, ClusterRoleBinding. Any other kind is searched for pod templates by
//! their shape (`discover/shape.rs`); one that names a GPU resource outside a readable template is an
//! error. Kinds that never run pods (Services, Secrets, quotas, scheduler queues) are read for their
//! namespace only.
//!
//! - [`device_plugin`] and [`mig_parted`] parse the two NVIDIA configuration formats with the rules
//!   their tools apply; the planner checks the files it writes with them.
//! - Node resolution follows the GPU Operator (see the `nodes` module): sharing in force per node,
//!   MIG geometry from the mig-parted config and the catalogue, GPU Feature Discovery labels as the
//!   fallback, versions from labels, operand images and the ClusterPolicy.
//! - Placement: the devices a scheduled pod may be on (pinned by HAMi's allocation, one GPU on the
//!   node, one instance of a profile), and the node set its constraints permit, shared between
//!   workloads with equal constraints.
//!
//! ```
//! let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels:\n    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n    nvidia.com/gpu.count: \"8\"\n";
//! let ingested = gpu_trust_ingest::ingest_text(text, "cluster.yaml");
//! let node = &ingested.fleet.nodes[0];
//! assert_eq!(node.object.location.line, 1);
//! assert_eq!(node.gpu.as_ref().unwrap().count, 8);
//! assert!(ingested.diagnostics.is_empty());
//! ```

mod annotations;
pub mod api;
mod cluster;
mod collect;
mod controllers;
mod crd;
pub mod device_plugin;
mod discover;
mod dra;
mod duplicates;
mod env;
mod inference;
pub mod inventory;
mod kinds;
mod kserve;
mod kubevirt;
pub mod mig_parted;
mod nodes;
mod placement;
mod platforms;
mod rbac;
mod records;
mod util;
mod workload_placement;
mod workloads;

use crate::collect::Collector;
use gpu_trust_model::fleet::Ingested;
use gpu_trust_model::Diagnostic;
use gpu_trust_source::{
    read_json_pieces, read_stream, Entry, Format, Gathered, Input, LargeFile, Limits, Object,
    Pieces, ReadOptions,
};
use std::io::Read;
use std::path::PathBuf;

pub use gpu_trust_source::Input as SourceInput;

/// How to read the input.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub limits: Limits,
    /// Collections the reader of a live cluster could not list: a configuration missing from the
    /// input is then unknown, not missing from the cluster.
    pub unread: Vec<api::Unread>,
}

/// Reads every input into the fleet model.
pub fn ingest(inputs: &[Input], options: &Options) -> Ingested {
    let mut c = Collector::new(options);
    for (i, input) in inputs.iter().enumerate() {
        read_input(&mut c, i, input, options);
    }
    c.finish()
}

/// Reads every input into the fleet model, each input's text released as soon as it is read: on a
/// large dump the text does not stay beside the fleet while the fleet is built.
pub fn ingest_owned(inputs: Vec<Input>, options: &Options) -> Ingested {
    let mut c = Collector::new(options);
    for (i, input) in inputs.into_iter().enumerate() {
        read_input(&mut c, i, &input, options);
    }
    c.finish()
}

/// Files at least this large that are not named as YAML are read in pieces (see
/// [`ingest_gathered`]): the size of a cluster dump whose text would otherwise weigh on the peak.
pub const LARGE_INPUT_BYTES: u64 = 64 << 20;

/// Reads every gathered input into the fleet model ([`gpu_trust_source::gather_large`]): texts as
/// [`ingest_owned`] reads them, and each large file in pieces, so that its text never lives in
/// memory whole. A large file the pieces reader does not take as it is (not one JSON List, or
/// anything wrong in it outside one item) is read whole instead, with the same result as
/// [`ingest_owned`] gives for its text.
pub fn ingest_gathered(inputs: Vec<Gathered>, options: &Options) -> Ingested {
    let mut c = Collector::new(options);
    for (i, input) in inputs.into_iter().enumerate() {
        match input {
            Gathered::Text(input) => read_input(&mut c, i, &input, options),
            Gathered::Large(file) => read_large(&mut c, i, &file, options),
        }
    }
    c.finish()
}

/// How ingest reads every input: objects of `kind: List` documents item by item.
fn read_options(options: &Options) -> ReadOptions {
    ReadOptions {
        limits: options.limits,
        split_key: Some("items".to_string()),
        format: Format::Auto,
    }
}

/// Reads a large file in pieces, on a second thread while the objects are typed and converted on
/// this one; when the pieces reader says to, drops what it handed on and reads the file whole.
fn read_large(c: &mut Collector, i: usize, file: &LargeFile, options: &Options) {
    let read = read_options(options);
    let mut reader = match file.open(&options.limits) {
        Ok(f) => f,
        Err(d) => return c.diagnostics.push(d),
    };
    let mark = c.mark_input();
    let mut pending: Vec<Object<'_>> = Vec::new();
    let name = file.name.as_str();
    let pieces = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Entry<'_>>>(PIPELINE_DEPTH);
        let read = &read;
        let reader = scope.spawn(move || {
            let mut batch = Vec::with_capacity(PIPELINE_BATCH);
            let pieces = read_json_pieces(&mut reader, name, read, &mut |e| {
                batch.push(e);
                if batch.len() == PIPELINE_BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(PIPELINE_BATCH));
                    // The receiver only stops early if this thread's owner is gone.
                    let _ = tx.send(full);
                }
            });
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            pieces
        });
        for batch in rx {
            for e in batch {
                c.accept(&mut pending, i, e);
            }
        }
        reader.join().unwrap_or(Pieces::Whole)
    });
    c.end_document(&mut pending);
    if pieces == Pieces::Read {
        // A valid JSON text has no line that reads as a Markdown fragment: no hints to add.
        return;
    }
    c.drop_since(mark);
    match file.read_whole(&options.limits) {
        Ok(input) => read_input(c, i, &input, options),
        Err(d) => c.diagnostics.push(d),
    }
}

/// Reads one input, and hints at Markdown fragments in its errors while its text is at hand.
fn read_input(c: &mut Collector, i: usize, input: &Input, options: &Options) {
    let read = read_options(options);
    let from = c.diagnostics.len();
    // Items of the current document without apiVersion/kind, waiting for the list's own kind.
    let mut pending: Vec<Object<'_>> = Vec::new();
    if input.text.len() < PIPELINE_BYTES {
        read_stream(&input.text, &input.name, &read, &mut |e| {
            c.accept(&mut pending, i, e)
        });
    } else {
        // A large input: parse on one thread while the objects are typed and converted on
        // this one. Batches keep the order of the input.
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Entry<'_>>>(PIPELINE_DEPTH);
            let read = &read;
            scope.spawn(move || {
                let mut batch = Vec::with_capacity(PIPELINE_BATCH);
                read_stream(&input.text, &input.name, read, &mut |e| {
                    batch.push(e);
                    if batch.len() == PIPELINE_BATCH {
                        let full =
                            std::mem::replace(&mut batch, Vec::with_capacity(PIPELINE_BATCH));
                        // The receiver only stops early if this thread's owner is gone.
                        let _ = tx.send(full);
                    }
                });
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
            });
            for batch in rx {
                for e in batch {
                    c.accept(&mut pending, i, e);
                }
            }
        });
    }
    c.end_document(&mut pending);
    hint_fragments(&mut c.diagnostics[from..], std::slice::from_ref(input));
}

/// Inputs at least this large are read on a second thread.
const PIPELINE_BYTES: usize = 4 << 20;
/// Objects handed from the reading thread at a time, and batches in flight.
const PIPELINE_BATCH: usize = 256;
const PIPELINE_DEPTH: usize = 8;

/// Reads command-line paths (files, directories walked for `.yaml`, `.yml` and `.json`, `-` for
/// `stdin`) into the fleet model; unreadable paths are error diagnostics like malformed documents.
pub fn ingest_paths(paths: &[PathBuf], stdin: &mut dyn Read, options: &Options) -> Ingested {
    let (inputs, gathered) = gpu_trust_source::gather(paths, stdin, &options.limits);
    let mut ingested = ingest(&inputs, options);
    ingested.diagnostics.extend(gathered);
    ingested.diagnostics.sort();
    ingested.diagnostics.dedup();
    ingested
}

/// Reads one text (named `file` in locations).
pub fn ingest_text(text: &str, file: &str) -> Ingested {
    ingest(
        &[Input {
            name: file.to_string(),
            text: text.to_string(),
        }],
        &Options::default(),
    )
}

/// What makes a document that does not read a fragment of documentation rather than a broken
/// manifest: a line `...` standing for text left out, or a shell command in front of its output.
/// `line` is the line of the error, 1-based, in `lines`, the text's lines.
fn fragment_hint(lines: &[&str], line: u32) -> Option<String> {
    let line = usize::try_from(line).ok()?.checked_sub(1)?;
    let at = lines.get(line)?.trim();
    if at == "..." || at == "\u{2026}" {
        return Some(format!(
            "line {} ({at:?}) stands for text left out, as documentation writes it: this is a fragment of a document, not a manifest",
            line + 1
        ));
    }
    // The document's lines up to the error (a document starts after a `---`).
    let start = lines[..=line]
        .iter()
        .rposition(|l| l.starts_with("---"))
        .map_or(0, |i| i + 1);
    let (i, command) = lines[start..=line].iter().enumerate().find(|(_, l)| {
        let l = l.trim_start();
        l.starts_with("$ ") || l.starts_with("kubectl ") || l.starts_with("helm ")
    })?;
    Some(format!(
        "line {} is a shell command ({:?}), as documentation shows before its output: this is a fragment of a document, not a manifest",
        start + i + 1,
        command.trim()
    ))
}

/// Adds [`fragment_hint`] to errors of documents that could not be read.
fn hint_fragments(diagnostics: &mut [Diagnostic], inputs: &[Input]) {
    let mut split: Option<(usize, Vec<&str>)> = None;
    for d in diagnostics.iter_mut().filter(|d| d.is_error()) {
        if !(d.message.starts_with("invalid YAML")
            || d.message.starts_with("not a Kubernetes object"))
        {
            continue;
        }
        let Some(at) = inputs.iter().position(|i| i.name == d.location.file) else {
            continue;
        };
        // The text's lines, split once per input (not once per error: a file of many documents
        // that are not objects has an error for each).
        if split.as_ref().is_none_or(|(i, _)| *i != at) {
            split = Some((at, inputs[at].text.lines().collect()));
        }
        let Some((_, lines)) = &split else { continue };
        if let Some(h) = fragment_hint(lines, d.location.line) {
            d.message = format!("{}; {h}", d.message);
        }
    }
}
