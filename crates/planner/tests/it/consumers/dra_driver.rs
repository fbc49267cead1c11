//! NVIDIA's DRA driver for GPUs (NVIDIA/k8s-dra-driver-gpu, now kubernetes-sigs/dra-driver-nvidia-gpu,
//! read at commit 22407113, May 2026): how its admission webhook and its kubelet plugin read the opaque
//! configuration of a ResourceClaim or ResourceClaimTemplate.
//!
//! - `cmd/webhook/main.go`, `admitResourceClaimParameters`: for each `spec.devices.config[]` entry
//!   whose `opaque.driver` is `gpu.nvidia.com`, the parameters are decoded strictly (unknown fields are
//!   errors, `api/nvidia.com/resource/v1beta1/api.go`, `StrictDecoder`), must be one of the known kinds,
//!   then `Normalize()` and `Validate()` run.
//! - The kinds (`gpuconfig.go`, `migconfig.go`, `sharing.go`): `GpuConfig {sharing: {strategy,
//!   timeSlicingConfig: {interval}, mpsConfig}}`, `MigDeviceConfig {sharing: {strategy, mpsConfig}}`
//!   (a MIG device takes no time-slice interval), `MpsConfig {defaultActiveThreadPercentage,
//!   defaultPinnedDeviceMemoryLimit, defaultPerDevicePinnedMemoryLimit}`.
//! - `Normalize()` fills defaults according to the feature gates: no sharing becomes `TimeSlicing`
//!   when `TimeSlicingSettings` is on, a `TimeSlicing` GPU without interval gets `Default`, `MPS`
//!   without `mpsConfig` gets an empty one.
//! - `Validate()` (`validate.go`): a strategy is `TimeSlicing` (only with the `TimeSlicingSettings`
//!   gate) or `MPS` (only with `MPSSupport`); the interval is `Default`, `Short`, `Medium` or `Long`;
//!   the active thread percentage is 0 to 100.
//! - The kubelet plugin then asks the sharing for its config (`GetTimeSlicingConfig`,
//!   `GetMpsConfig`): a `TimeSlicing` GPU must not carry an `mpsConfig`, an `MPS` one no
//!   `timeSlicingConfig`; a pinned memory limit must come to at least one MiB (`limit.Megabyte`).
//!
//! Both sharing gates are alpha and off by default (`pkg/featuregates/featuregates.go`).

use serde_json::Value;

pub const DRIVER: &str = "gpu.nvidia.com";
pub const API_VERSION: &str = "resource.nvidia.com/v1beta1";

/// The driver's feature gates that decide what a config may say.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gates {
    pub time_slicing_settings: bool,
    pub mps_support: bool,
}

fn keys_in(v: &Value, known: &[&str], at: &str) -> Result<(), String> {
    if !v.is_object() {
        return Err(format!("{at}: not an object"));
    }
    match super::unknown_keys(v, known).first() {
        Some(k) => Err(format!("{at}: unknown field \"{k}\" (strict decoding)")),
        None => Ok(()),
    }
}

/// A Kubernetes quantity in bytes (`10Gi`, `512Mi`, `1G`, `1000`): binary and decimal suffixes.
pub fn quantity_bytes(q: &Value) -> Result<i128, String> {
    let s = match q {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => return Err(format!("quantity {other} is not a string or number")),
    };
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let mult: i128 = match suffix {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        _ => return Err(format!("quantity {s}: unknown suffix")),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("quantity {s}: not a number"))?;
    Ok((n * mult as f64) as i128)
}

fn mps_config(v: &Value, at: &str) -> Result<(), String> {
    keys_in(
        v,
        &[
            "defaultActiveThreadPercentage",
            "defaultPinnedDeviceMemoryLimit",
            "defaultPerDevicePinnedMemoryLimit",
        ],
        at,
    )?;
    if let Some(p) = v.get("defaultActiveThreadPercentage") {
        let p = p
            .as_i64()
            .ok_or_else(|| format!("{at}: active thread percentage is not an integer"))?;
        if p < 0 {
            return Err("active thread percentage must not be negative".into());
        }
        if p > 100 {
            return Err("active thread percentage must not be greater than 100".into());
        }
    }
    let mut limits: Vec<&Value> = v
        .get("defaultPinnedDeviceMemoryLimit")
        .into_iter()
        .collect();
    if let Some(m) = v.get("defaultPerDevicePinnedMemoryLimit") {
        let m = m
            .as_object()
            .ok_or_else(|| format!("{at}: per-device limits are not a map"))?;
        limits.extend(m.values());
    }
    for l in limits {
        if quantity_bytes(l)? / 1024 / 1024 <= 0 {
            return Err(format!("invalid limit: value set too low: {l}"));
        }
    }
    Ok(())
}

/// The webhook's and the kubelet plugin's reading of one opaque config: `Ok` with the strategy the
/// device gets (`None` for no sharing), or the error they refuse it with.
pub fn admit(parameters: &Value, gates: Gates) -> Result<Option<String>, String> {
    if parameters.get("apiVersion").and_then(Value::as_str) != Some(API_VERSION) {
        return Err(format!("apiVersion must be {API_VERSION}"));
    }
    let kind = parameters.get("kind").and_then(Value::as_str).unwrap_or("");
    let mig = match kind {
        "GpuConfig" => false,
        "MigDeviceConfig" => true,
        other => {
            return Err(format!(
                "expected a recognized configuration type but got {other:?}"
            ))
        }
    };
    keys_in(parameters, &["apiVersion", "kind", "sharing"], "")?;
    let Some(sharing) = parameters.get("sharing") else {
        // Normalize: no sharing is time-slicing when the gate is on (GpuConfig with the default
        // interval), nothing otherwise.
        return Ok(gates
            .time_slicing_settings
            .then(|| "TimeSlicing".to_string()));
    };
    let known: &[&str] = if mig {
        &["strategy", "mpsConfig"]
    } else {
        &["strategy", "timeSlicingConfig", "mpsConfig"]
    };
    keys_in(sharing, known, "sharing")?;
    let strategy = sharing
        .get("strategy")
        .and_then(Value::as_str)
        .unwrap_or("");
    match strategy {
        "TimeSlicing" if !gates.time_slicing_settings => Err(
            "\"TimeSlicing\" is selected as the GPU sharing strategy, but the \"TimeSlicingSettings\" feature gate is not enabled".into(),
        ),
        "MPS" if !gates.mps_support => Err(
            "\"MPS\" is selected as the GPU sharing strategy, but the \"MPSSupport\" feature gate is not enabled".into(),
        ),
        "TimeSlicing" => {
            if sharing.get("mpsConfig").is_some() {
                return Err("cannot use MpsConfig with the 'TimeSlicing' strategy".into());
            }
            if let Some(ts) = sharing.get("timeSlicingConfig") {
                keys_in(ts, &["interval"], "timeSlicingConfig")?;
                // Validate() dereferences the interval: a config without one does not validate.
                match ts.get("interval").and_then(Value::as_str) {
                    Some("Default" | "Short" | "Medium" | "Long") => {}
                    other => return Err(format!("unknown time-slice interval: {other:?}")),
                }
            }
            Ok(Some(strategy.to_string()))
        }
        "MPS" => {
            if sharing.get("timeSlicingConfig").is_some() {
                return Err("cannot use TimeSlicingConfig with the 'MPS' strategy".into());
            }
            if let Some(m) = sharing.get("mpsConfig") {
                mps_config(m, "mpsConfig")?;
            }
            Ok(Some(strategy.to_string()))
        }
        other => Err(format!(
            "unknown GPU sharing strategy: {other}, supported GPU sharing strategies: TimeSlicing, MPS"
        )),
    }
}

/// The configs of a claim spec (`spec` of a ResourceClaim, `spec.spec` of a template) for the driver,
/// each admitted: the errors, located as the webhook locates them.
pub fn admit_claim_spec(spec: &Value, path: &str, gates: Gates) -> Vec<String> {
    let mut errors = Vec::new();
    for (i, c) in spec
        .pointer("/devices/config")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(opaque) = c.get("opaque") else {
            continue;
        };
        if opaque.get("driver").and_then(Value::as_str) != Some(DRIVER) {
            continue;
        }
        let at = format!("{path}.devices.config[{i}].opaque.parameters");
        match opaque.get("parameters") {
            Some(p) => {
                if let Err(e) = admit(p, gates) {
                    errors.push(format!("object at {at} is invalid: {e}"));
                }
            }
            None => errors.push(format!("error decoding object at {at}: no parameters")),
        }
    }
    errors
}
