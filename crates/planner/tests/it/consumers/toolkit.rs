//! The NVIDIA Container Toolkit (NVIDIA/nvidia-container-toolkit): which devices an unprivileged
//! container gets.

use std::collections::BTreeMap;

/// How the device plugin passed a container its devices, and what the container itself set.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// The plugin listed the devices as volume mounts.
    pub mounts: bool,
    /// The plugin (or the container's own image or spec) set `NVIDIA_VISIBLE_DEVICES`.
    pub envvar: bool,
    /// The devices came as CDI annotations or CDI devices of the CRI.
    pub cdi: bool,
}

/// Whether an unprivileged container gets devices (`CUDA.VisibleDevices`,
/// `internal/config/image/cuda_image.go` lines 256-290): CDI annotations first; volume mounts when
/// `accept-nvidia-visible-devices-as-volume-mounts` is set (default false); the environment variable
/// only when `accept-nvidia-visible-devices-envvar-when-unprivileged` is set (default true). The
/// operator's toolkit container sets both from its environment
/// (`cmd/nvidia-ctk-installer/toolkit/toolkit.go` lines 157-169).
pub fn unprivileged_gets_devices(toolkit_env: &BTreeMap<String, String>, r: Request) -> bool {
    let flag = |k: &str, default: bool| {
        toolkit_env
            .get(k)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(default)
    };
    let accept_mounts = flag("ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS", false);
    let accept_envvar = flag(
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED",
        true,
    );
    r.cdi || (accept_mounts && r.mounts) || (accept_envvar && r.envvar)
}

/// The request the device plugin makes for its device list strategies (CDI ones only count when
/// the operator enabled CDI).
pub fn plugin_request(strategies: &[String], cdi_enabled: bool) -> Request {
    let has = |s: &str| strategies.iter().any(|x| x == s);
    Request {
        mounts: has("volume-mounts"),
        envvar: has("envvar"),
        cdi: cdi_enabled && (has("cdi-annotations") || has("cdi-cri")),
    }
}
