//! What a pod spec can reach of its host beyond its own devices: host paths that hand over the GPUs or
//! the node, the capabilities that make a container privileged to the NVIDIA toolkit, the runtime
//! handlers of the NVIDIA container runtime, the components every pod on a node shares. Each fact
//! has its source; ingest normalises what it reads with these functions, and the host rules judge
//! with the tables.

use crate::fleet::GpuWorkload;

/// A host path whose mount hands a container something of the node, with what and the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SensitivePath {
    /// Absolute, normalised, with `/run` for `/var/run`.
    pub path: &'static str,
    /// What mounting it gives, in words.
    pub exposes: &'static str,
    /// Whether it hands over the node itself (a runtime or kubelet socket), not only GPUs.
    pub takeover: bool,
}

/// Host paths that expose GPUs, their control channels, or the node. A mount of one of them, of a path
/// below one, or of a folder above one (`/`, `/run`, `/var/lib/kubelet`) exposes it.
///
/// Sources:
/// - `/dev`: the device nodes of every GPU (`/dev/nvidia*`, `/dev/nvidia-caps`), Linux and the NVIDIA
///   driver's documentation.
/// - `/run/nvidia`: the GPU Operator's driver container root and toolkit state (NVIDIA GPU Operator,
///   `driver.rootfs` and `/run/nvidia/driver`).
/// - `/run/nvidia-container-devices`: the device list the toolkit reads from volume mounts (NVIDIA
///   Container Toolkit, `accept-nvidia-visible-devices-as-volume-mounts`).
/// - `/run/nvidia/mps`: the MPS control daemon's pipe and shared-memory root of the device plugin
///   (NVIDIA k8s-device-plugin, MPS support).
/// - `/run/containerd`: containerd's socket `/run/containerd/containerd.sock` (containerd
///   documentation, `config.toml` `[grpc] address`); whoever reaches it starts any container on the node.
/// - `/run/k3s/containerd`: the containerd socket of k3s and RKE2 (k3s documentation, "Advanced
///   Options": `/run/k3s/containerd/containerd.sock`).
/// - `/run/crio`: CRI-O's socket `/var/run/crio/crio.sock` (CRI-O `crio.conf(5)`, `listen`).
/// - `/run/docker.sock`: the Docker Engine's socket `/var/run/docker.sock` (Docker documentation,
///   "Docker daemon socket option").
/// - `/run/cri-dockerd.sock`: cri-dockerd's CRI socket `/var/run/cri-dockerd.sock` (Mirantis
///   cri-dockerd README).
/// - `/var/lib/kubelet/device-plugins`: the kubelet's device plugin registration socket `kubelet.sock`
///   and every plugin's socket (Kubernetes documentation, "Device Plugins"): a pod there can register
///   as the GPU plugin or talk to it.
/// - `/var/lib/kubelet/pod-resources`: the kubelet's pod resources API socket, which lists every pod's
///   devices (Kubernetes documentation, "Monitoring Device Plugin Resources").
pub const SENSITIVE_PATHS: &[SensitivePath] = &[
    SensitivePath {
        path: "/dev",
        exposes: "the device nodes of every GPU",
        takeover: false,
    },
    SensitivePath {
        path: "/run/nvidia",
        exposes: "the NVIDIA driver and toolkit state",
        takeover: false,
    },
    SensitivePath {
        path: "/run/nvidia-container-devices",
        exposes: "the toolkit's device list",
        takeover: false,
    },
    SensitivePath {
        path: "/run/nvidia/mps",
        exposes: "the MPS control pipes",
        takeover: false,
    },
    SensitivePath {
        path: "/run/containerd",
        exposes: "the containerd socket",
        takeover: true,
    },
    SensitivePath {
        path: "/run/k3s/containerd",
        exposes: "the k3s containerd socket",
        takeover: true,
    },
    SensitivePath {
        path: "/run/crio",
        exposes: "the CRI-O socket",
        takeover: true,
    },
    SensitivePath {
        path: "/run/docker.sock",
        exposes: "the Docker socket",
        takeover: true,
    },
    SensitivePath {
        path: "/run/cri-dockerd.sock",
        exposes: "the cri-dockerd socket",
        takeover: true,
    },
    SensitivePath {
        path: "/var/lib/kubelet/device-plugins",
        exposes: "the kubelet's device plugin sockets",
        takeover: true,
    },
    SensitivePath {
        path: "/var/lib/kubelet/pod-resources",
        exposes: "the kubelet's pod resources socket",
        takeover: true,
    },
];

/// Why a hostPath cannot be judged as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPathError {
    /// A `..` element: the API server refuses it (Kubernetes `pkg/apis/core/validation`,
    /// `validateHostPathVolumeSource` calls `validatePathNoBacksteps`).
    Backstep,
    /// Not absolute: what the runtime would mount is not known.
    Relative,
    /// Empty: the API server refuses it (`path` is required).
    Empty,
}

impl std::fmt::Display for HostPathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HostPathError::Backstep => {
                "it contains `..`, which the API server refuses in a hostPath"
            }
            HostPathError::Relative => {
                "it is not absolute, so which host folder the runtime mounts is not known"
            }
            HostPathError::Empty => "it is empty, which the API server refuses",
        })
    }
}

/// A hostPath as the node resolves it, lexically: repeated and trailing `/` and `.` elements dropped
/// (`//dev`, `/./dev/`, `/run//nvidia`). `..` and relative paths are errors.
pub fn normalise_host_path(path: &str) -> Result<String, HostPathError> {
    if path.is_empty() {
        return Err(HostPathError::Empty);
    }
    if !path.starts_with('/') {
        return Err(HostPathError::Relative);
    }
    let mut out = String::with_capacity(path.len());
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(HostPathError::Backstep),
            p => {
                out.push('/');
                out.push_str(p);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// `/var/run` is a link to `/run` on every current distribution (systemd `tmpfiles.d/var.conf`,
/// the Filesystem Hierarchy Standard 3.0): a normalised path with `/run` for it.
fn canonical_run(path: &str) -> std::borrow::Cow<'_, str> {
    match path.strip_prefix("/var/run") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("/run{rest}").into(),
        _ => path.into(),
    }
}

/// What mounting the normalised host `path` exposes: the sensitive paths it is, lies under, or
/// contains (`/` contains them all). Empty when it exposes none.
pub fn exposed_by(path: &str) -> Vec<&'static SensitivePath> {
    let path = canonical_run(path);
    let path = path.as_ref();
    let within = |inner: &str, outer: &str| {
        outer == "/"
            || inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    SENSITIVE_PATHS
        .iter()
        .filter(|s| within(path, s.path) || within(s.path, path))
        .collect()
}

/// Whether an added capability, as a container spec writes it, gives `CAP_SYS_ADMIN`: `SYS_ADMIN` or
/// `ALL`, in any letter case, with or without the `CAP_` prefix. containerd's CRI plugin and CRI-O grant
/// every capability for `ALL` compared without case (containerd `pkg/cri/util.InStringSlice`, "Comparison
/// is case insensitive", in `WithCapabilities`), and upper-case the other names; CRI-O adds the `CAP_`
/// prefix only when it is missing. The NVIDIA Container Toolkit treats a container with
/// `CAP_SYS_ADMIN` as privileged and gives it every GPU.
pub fn grants_sys_admin(capability: &str) -> bool {
    let c = capability.trim().to_ascii_uppercase();
    let c = c.strip_prefix("CAP_").unwrap_or(&c);
    c == "SYS_ADMIN" || c == "ALL"
}

/// The runtime handlers of the NVIDIA container runtime: `nvidia`, and with CDI `nvidia-cdi` and
/// `nvidia-legacy`, as the GPU Operator creates their RuntimeClasses (NVIDIA/gpu-operator
/// `assets/pre-requisites/0200_runtime_class.yaml` with the name and handler of
/// `spec.operator.runtimeClass`, default `nvidia`; `0210_runtime_class_legacy.yaml`;
/// `0220_runtime_class_cdi.yaml`) and the toolkit registers them with containerd and CRI-O
/// (`nvidia-ctk runtime configure`); `nvidia-experimental`, the older experimental runtime that k3s and
/// RKE2 still register (k3s `pkg/agent/containerd` runtimes).
pub const NVIDIA_RUNTIME_HANDLERS: &[&str] = &[
    "nvidia",
    "nvidia-cdi",
    "nvidia-legacy",
    "nvidia-experimental",
];

/// Whether a RuntimeClass handler runs containers through the NVIDIA container runtime.
pub fn is_nvidia_runtime_handler(handler: &str) -> bool {
    NVIDIA_RUNTIME_HANDLERS.contains(&handler)
}

/// What every pod on a GPU node shares below its containers, as far as the node runs it: the kernel
/// and the container runtime; on a node for containers the GPU driver and the NVIDIA Container
/// Toolkit, which inject its GPUs; on a node for VMs ([`GpuWorkload`]) what the GPU Operator runs
/// there instead: the VFIO driver the VFIO manager binds the GPUs to (`vm-passthrough`), the
/// NVIDIA vGPU Manager (`vm-vgpu`); and the MPS control daemon where MPS shares the node's GPUs
/// (`mps`). Sources: NVIDIA/gpu-operator `controllers/state_manager.go` (`gpuStateLabels`, the
/// operands per workload config); NVIDIA/k8s-device-plugin's `mps-control-daemon` DaemonSet, which
/// runs only on nodes labelled `nvidia.com/mps.capable=true` (README, "Shared Access to GPUs").
pub fn node_components(workload: GpuWorkload, mps: bool) -> Vec<&'static str> {
    let mut out = vec!["kernel"];
    match workload {
        GpuWorkload::Container => out.extend(["GPU driver", "NVIDIA Container Toolkit"]),
        GpuWorkload::VmPassthrough => out.push("VFIO driver"),
        GpuWorkload::VmVgpu => out.push("NVIDIA vGPU Manager"),
    }
    out.push("container runtime");
    if mps {
        out.push("MPS control daemon");
    }
    out
}

/// Values of `NVIDIA_VISIBLE_DEVICES` that expose no GPU, compared trimmed and without case (NVIDIA
/// Container Toolkit: `void` leaves the container unchanged, `none` injects no GPU; empty selects
/// none).
pub const NO_GPU_VISIBLE_DEVICES: [&str; 3] = ["", "void", "none"];

/// Whether a value of `NVIDIA_VISIBLE_DEVICES` asks the NVIDIA runtime for GPUs.
pub fn visible_devices_name_gpus(value: &str) -> bool {
    !NO_GPU_VISIBLE_DEVICES.contains(&value.trim().to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a node shares follows what the GPU Operator runs on it: no toolkit or container driver
    /// on a node for VMs, the vGPU manager on a vGPU node, the MPS daemon only where MPS runs.
    #[test]
    fn node_components_are_what_the_node_runs() {
        assert_eq!(
            node_components(GpuWorkload::Container, false),
            [
                "kernel",
                "GPU driver",
                "NVIDIA Container Toolkit",
                "container runtime"
            ]
        );
        assert!(node_components(GpuWorkload::Container, true).contains(&"MPS control daemon"));
        assert_eq!(
            node_components(GpuWorkload::VmVgpu, false),
            ["kernel", "NVIDIA vGPU Manager", "container runtime"]
        );
        assert_eq!(
            node_components(GpuWorkload::VmPassthrough, false),
            ["kernel", "VFIO driver", "container runtime"]
        );
    }

    #[test]
    fn host_paths_normalise_as_the_node_resolves_them() {
        for (written, clean) in [
            ("//dev", "/dev"),
            ("/./dev", "/dev"),
            ("/run//nvidia/", "/run/nvidia"),
            ("/dev///", "/dev"),
            ("/", "/"),
            ("//", "/"),
            ("/data/models", "/data/models"),
        ] {
            assert_eq!(
                normalise_host_path(written).as_deref(),
                Ok(clean),
                "{written}"
            );
        }
        assert_eq!(
            normalise_host_path("/data/../dev"),
            Err(HostPathError::Backstep)
        );
        assert_eq!(normalise_host_path("dev"), Err(HostPathError::Relative));
        assert_eq!(normalise_host_path(""), Err(HostPathError::Empty));
    }

    #[test]
    fn exposure_covers_the_path_below_and_above() {
        let exposes = |p: &str| exposed_by(p).iter().map(|s| s.path).collect::<Vec<_>>();
        assert_eq!(exposes("/dev/nvidia0"), ["/dev"]);
        assert_eq!(
            exposes("/var/run/nvidia/mps"),
            ["/run/nvidia", "/run/nvidia/mps"]
        );
        assert_eq!(exposes("/var/run/docker.sock"), ["/run/docker.sock"]);
        assert_eq!(
            exposes("/run/containerd/containerd.sock"),
            ["/run/containerd"]
        );
        assert_eq!(
            exposes("/var/lib/kubelet"),
            [
                "/var/lib/kubelet/device-plugins",
                "/var/lib/kubelet/pod-resources"
            ]
        );
        assert_eq!(exposes("/").len(), SENSITIVE_PATHS.len());
        assert!(exposes("/var/run").len() >= 7);
        for harmless in [
            "/data",
            "/devices-not",
            "/var/lib/models",
            "/run/user",
            "/var/runner",
        ] {
            assert!(exposes(harmless).is_empty(), "{harmless}");
        }
    }

    #[test]
    fn capabilities_that_give_sys_admin() {
        for c in [
            "SYS_ADMIN",
            "sys_admin",
            "CAP_SYS_ADMIN",
            "cap_sys_admin",
            "ALL",
            "all",
            "All",
            "CAP_ALL",
        ] {
            assert!(grants_sys_admin(c), "{c}");
        }
        for c in ["NET_ADMIN", "SYS_PTRACE", "CAP_CHOWN", "ALLX"] {
            assert!(!grants_sys_admin(c), "{c}");
        }
    }
}
