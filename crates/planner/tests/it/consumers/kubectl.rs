//! The real `kubectl` (CI installs one: `.ci/run`): pod patches applied to an
//! object with `kubectl patch --local`, which runs the same strategic merge and JSON patch code as the
//! API server (`k8s.io/apimachinery/pkg/util/strategicpatch`, `github.com/evanphx/json-patch`) on the
//! object given, without a cluster.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

/// Whether kubectl can be run. Where it cannot, a test skips, unless it runs in CI (`CI=true`),
/// where it fails: CI installs kubectl (`.ci/run`).
pub fn available(test: &str) -> bool {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "kubectl is missing: .ci/run installs one"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: kubectl is not installed"
        );
    }
    found
}

/// `kubectl patch --local` of `object` with `patch` of `kind` (`strategic`, `json`, `merge`): the
/// patched object, or kubectl's error.
pub fn patch(object: &Value, kind: &str, patch: &Value) -> Result<Value, String> {
    let mut child = Command::new("kubectl")
        .args([
            "patch", "--local", "-f", "-", "-o", "json", "--type", kind, "-p",
        ])
        .arg(patch.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("kubectl: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(object.to_string().as_bytes())
            .map_err(|e| format!("kubectl stdin: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("kubectl: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("kubectl output: {e}"))
}
