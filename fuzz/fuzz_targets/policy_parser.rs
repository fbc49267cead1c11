//! Fuzzes the tenancy policy parser: any bytes must give a policy or located diagnostics, never a
//! panic.
#![no_main]

use gpu_trust_model::fleet::NamespaceInfo;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(policy) = gpu_trust_policy::parse(text, "fuzz.yaml") {
            // Resolution must hold up for any policy that parsed, over no namespaces and over a
            // few that globs, labels and platform lists can match.
            let _ = policy.resolve(&[]);
            let _ = policy.resolve(&namespaces());
        }
    }
});

fn namespaces() -> Vec<NamespaceInfo> {
    ["team-a", "team-b-prod", "kube-system", "gpu-operator", "default", ""]
        .iter()
        .enumerate()
        .map(|(i, name)| NamespaceInfo {
            name: (*name).to_string(),
            labels: [("capsule.clastix.io/tenant".to_string(), format!("t{}", i % 3))]
                .into_iter()
                .collect(),
            object: None,
        })
        .collect()
}
