//! Fuzzes the cluster input reader (YAML and JSON, multi-document, `kind: List`): any bytes must give
//! objects or located diagnostics, never a panic or a hang.
#![no_main]

use gpu_trust_source::{read_all, Format, ReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for format in [Format::default(), Format::Yaml, Format::Json] {
        let options = ReadOptions {
            split_key: Some("items".to_string()),
            format,
            ..ReadOptions::default()
        };
        let _ = read_all(text, "fuzz.yaml", &options);
    }
});
