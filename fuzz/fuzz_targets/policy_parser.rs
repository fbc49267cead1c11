//! Fuzzes the tenancy policy parser: any bytes must give a policy or located diagnostics, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(policy) = gpu_trust_policy::parse(text, "fuzz.yaml") {
            // Resolution over no namespaces must hold up for any policy that parsed.
            let _ = policy.resolve(&[]);
        }
    }
});
