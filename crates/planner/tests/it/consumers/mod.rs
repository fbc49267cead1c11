//! The rules the consumers of the planner's artifacts apply, ported from their sources (each rule
//! names its file and lines) so that tests can run every emitted artifact through them:
//!
//! - [`operator`]: the NVIDIA GPU Operator: the ClusterPolicy the Helm chart renders, a merge patch
//!   applied to it, its validation, the device plugin container's environment and image it derives;
//! - [`device_plugin`]: the k8s-device-plugin: its config file (`api/config/v1`), the flags it ends up
//!   with (command line and environment over the file), their validation, and which devices it shares;
//! - [`mig_parted`]: mig-parted's config (`api/spec/v1`) and MIG profile names;
//! - [`gfd`]: the labels GPU Feature Discovery writes per node;
//! - [`toolkit`]: whether the container toolkit gives an unprivileged container its devices;
//! - [`scheduler`]: which nodes admit a pod (labels, taints, extended resources) and whether the device
//!   plugin then admits its request;
//! - [`kubectl`]: the real kubectl, which applies pod patches as the API server does;
//! - [`dra_driver`]: how NVIDIA's DRA driver admits the opaque configuration of a claim.
//!
//! The sources are Go; the rules are restated here in Rust, none of their code is copied. Where the
//! real parser accepts and ignores something (unknown keys), these checks refuse it: an artifact
//! should not depend on what a consumer overlooks.

pub mod device_plugin;
pub mod dra_driver;
pub mod gfd;
pub mod kubectl;
pub mod mig_parted;
pub mod operator;
pub mod scheduler;
pub mod toolkit;

use serde_json::Value;

/// Reads YAML text into a JSON value, as the Go consumers read YAML into generic maps
/// (`sigs.k8s.io/yaml`).
pub fn yaml(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
}

/// The object's keys that are not in `known`.
pub fn unknown_keys<'a>(v: &'a Value, known: &[&str]) -> Vec<&'a str> {
    v.as_object()
        .map(|o| {
            o.keys()
                .map(String::as_str)
                .filter(|k| !known.contains(k))
                .collect()
        })
        .unwrap_or_default()
}
