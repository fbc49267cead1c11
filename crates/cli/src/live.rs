//! Where the cluster comes from when a command is given no PATH: the API server of the current
//! kubeconfig context, read by `gpu-trust-live`, whose documents go through the same ingest as
//! files.

use gpu_trust_model::fleet::Ingested;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Mutex;

/// The flags kubectl users pass to name a cluster.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClusterArgs {
    /// The kubeconfig file of the live cluster (default: $KUBECONFIG, then ~/.kube/config, then the
    /// ServiceAccount of the pod gpu-trust runs in).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context of the live cluster (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Read the live cluster's namespaced objects of this namespace only (the tenant in scope);
    /// nodes, cluster-scoped RBAC and the GPU configuration (the ClusterPolicy, and the ConfigMaps
    /// and DaemonSets of every namespace) are still read.
    #[arg(long, short = 'n', value_name = "NS")]
    pub namespace: Option<String>,
    /// How long one request to the API server may take, to its answer's last byte, as kubectl's
    /// flag (30s, 2m, or seconds; default 60s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub request_timeout: Option<std::time::Duration>,
}

/// A duration as kubectl's `--request-timeout` takes it: seconds, or a number with `s`, `m` or
/// `h`; more than zero and at most a day.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("`{text}`: the unit must be ms, s, m or h")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (30s, 2m)"))?;
    let seconds = value * scale;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        return Err(format!(
            "`{text}`: a duration must be above 0 and at most a day"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

impl ClusterArgs {
    /// Whether a flag that only a live read uses was given.
    pub fn any(&self) -> bool {
        self.kubeconfig.is_some()
            || self.context.is_some()
            || self.namespace.is_some()
            || self.request_timeout.is_some()
    }

    pub fn options(&self) -> gpu_trust_live::Options {
        gpu_trust_live::Options {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
            request_timeout: self.request_timeout,
        }
    }
}

/// The usage error for cluster flags given with files.
pub const WITH_PATHS: &str =
    "--kubeconfig, --context, --namespace and --request-timeout choose a cluster to read; they cannot be used with PATH";

/// One line on standard error, rewritten in place, when standard error is a terminal.
struct TerminalProgress {
    shown: Mutex<bool>,
}

impl gpu_trust_live::Progress for TerminalProgress {
    fn update(&self, done: usize, total: usize, objects: usize) {
        let Ok(mut shown) = self.shown.lock() else {
            return;
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[Kgpu-trust: reading the cluster: {done}/{total} kinds, {objects} objects"
        );
        let _ = err.flush();
        *shown = true;
    }
}

impl TerminalProgress {
    fn clear(&self) {
        if self.shown.lock().map(|s| *s).unwrap_or(false) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

/// Reads the cluster; `None` when no cluster could be read at all (the message is printed). Kinds
/// that could not be listed are error diagnostics of the snapshot, as unreadable files are.
pub fn read(args: &ClusterArgs) -> anyhow::Result<gpu_trust_live::Snapshot> {
    let snapshot = if std::io::stderr().is_terminal() {
        let progress = TerminalProgress {
            shown: Mutex::new(false),
        };
        let s = gpu_trust_live::read(&args.options(), &progress);
        progress.clear();
        s
    } else {
        gpu_trust_live::read(&args.options(), &gpu_trust_live::Quiet)
    };
    snapshot.map_err(|e| anyhow::anyhow!("{e}"))
}

/// The fleet of a snapshot, with the kinds that could not be read as error diagnostics.
pub fn ingest(snapshot: gpu_trust_live::Snapshot) -> Ingested {
    let options = options(&snapshot);
    let mut ingested = gpu_trust_ingest::ingest(&snapshot.inputs, &options);
    ingested.diagnostics.extend(snapshot.diagnostics);
    ingested.diagnostics.sort();
    ingested.diagnostics.dedup();
    ingested
}

/// How ingest reads a snapshot: what could not be listed is unknown, not absent.
pub fn options(snapshot: &gpu_trust_live::Snapshot) -> gpu_trust_ingest::Options {
    gpu_trust_ingest::Options {
        unread: snapshot.unread.clone(),
        ..gpu_trust_ingest::Options::default()
    }
}

/// The name a kubectl plugin is installed as: kubectl runs `kubectl-gpu_trust` for `kubectl
/// gpu-trust` (https://kubernetes.io/docs/tasks/extend-kubectl/kubectl-plugins/#names-with-dashes-and-underscores).
pub const PLUGIN_BINARY: &str = "kubectl-gpu_trust";

/// Whether this process was started as the kubectl plugin.
pub fn invoked_as_plugin() -> bool {
    std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .is_some_and(|name| name == PLUGIN_BINARY)
}

/// The command line as the kubectl plugin: usage and examples read `kubectl gpu-trust ...`.
pub fn as_plugin(cmd: clap::Command) -> clap::Command {
    let rename = |text: String| {
        text.replace("\n  gpu-trust ", "\n  kubectl gpu-trust ")
            .replace("| gpu-trust ", "| kubectl gpu-trust ")
            .replace("`gpu-trust ", "`kubectl gpu-trust ")
    };
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = cmd.name("kubectl gpu-trust").bin_name("kubectl gpu-trust");
    for name in names {
        cmd = cmd.mut_subcommand(&name, |sub| {
            let long = sub.get_long_about().map(|s| rename(s.to_string()));
            let after = sub.get_after_help().map(|s| rename(s.to_string()));
            let sub = sub.bin_name(format!("kubectl gpu-trust {name}"));
            let sub = match long {
                Some(text) => sub.long_about(text),
                None => sub,
            };
            match after {
                Some(text) => sub.after_help(text),
                None => sub,
            }
        });
    }
    cmd
}
