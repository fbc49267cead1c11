//! `gpu-trust catalogue`: the GPU catalogue and one model's MIG profiles and layouts.

use assert_cmd::Command;
use serde_json::Value;

/// The catalogue at its widest layout (160 columns), so that no name is broken across lines:
/// fitting narrower terminals is tests/width.rs's.
fn run(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("gpu-trust")
        .unwrap()
        .env("COLUMNS", "160")
        .arg("catalogue")
        .args(args)
        .output()
        .unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn h100_json_lists_profiles_with_memory_placements_and_19_layouts() {
    let doc = json(&["NVIDIA-H100-80GB-HBM3", "--format", "json"]);
    assert_eq!(doc["schema"], "gpu-trust/catalogue/v1");
    assert_eq!(doc["model"]["id"], "H100-SXM5-80GB");
    let profiles = doc["model"]["mig"]["profiles"].as_array().unwrap();
    let p = profiles.iter().find(|p| p["name"] == "1g.10gb").unwrap();
    assert_eq!(p["memoryMib"], 9984);
    assert_eq!(p["placements"], "{0,1,2,3,4,5,6}:1");
    assert_eq!(p["starts"], serde_json::json!([0, 1, 2, 3, 4, 5, 6]));
    let p = profiles.iter().find(|p| p["name"] == "3g.40gb").unwrap();
    assert_eq!(p["placements"], "{0,4}:4");
    assert_eq!(p["sms"], 60);
    assert_eq!(doc["layouts"]["maximalCount"], 19);
    assert_eq!(doc["layouts"]["maximal"].as_array().unwrap().len(), 19);
    assert_eq!(
        doc["layouts"]["profiles"],
        serde_json::json!(["1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"])
    );
    let seven = doc["layouts"]["maximal"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["instances"].as_array().unwrap().len() == 7)
        .unwrap();
    assert_eq!(seven["strandedSlices"], serde_json::json!([7]));
}

#[test]
fn json_output_is_byte_identical_between_runs() {
    let a = run(&["H100-SXM5-80GB", "--format", "json"]).stdout;
    let b = run(&["H100-SXM5-80GB", "--format", "json"]).stdout;
    assert_eq!(a, b);
    let a = run(&["--format", "json"]).stdout;
    let b = run(&["--format", "json"]).stdout;
    assert_eq!(a, b);
}

#[test]
fn the_list_names_every_model_with_mig_and_cc() {
    let doc = json(&["--format", "json"]);
    let models = doc["models"].as_array().unwrap();
    assert!(models.len() >= 25);
    let l40s = models.iter().find(|m| m["id"] == "L40S").unwrap();
    assert!(l40s["mig"].is_null());
    assert_eq!(l40s["productLabels"], serde_json::json!(["NVIDIA-L40S"]));
    let b200 = models.iter().find(|m| m["id"] == "B200").unwrap();
    assert_eq!(b200["confidentialComputing"], "single-and-multi-gpu");

    let out = run(&[]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "H100-SXM5-80GB",
        "NVIDIA-H100-80GB-HBM3",
        "Tesla-T4",
        "L40S",
        "A30",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}

#[test]
fn the_model_table_shows_profiles_and_layouts() {
    let out = run(&["A30"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("4 memory slices, 4 compute slices"), "{text}");
    assert!(text.contains("{0,2}:2"), "{text}");
    assert!(
        text.contains("5 maximal layouts over 1g.6gb, 2g.12gb, 4g.24gb"),
        "{text}"
    );
    assert!(text.contains("2g.12gb@0 + 2g.12gb@2"), "{text}");

    let out = run(&["NVIDIA-H100-80GB-HBM3-SHARED"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("19 maximal layouts"), "{text}");
    assert!(text.contains("9984 MiB (9.75 GiB)"), "{text}");
    assert!(text.contains("(unused memory slices: 7)"), "{text}");
}

#[test]
fn profiles_can_be_chosen() {
    let doc = json(&["H100-SXM5-80GB", "--profile", "3g.40gb", "--format", "json"]);
    assert_eq!(doc["layouts"]["maximalCount"], 1);
    let all = json(&["H100-SXM5-80GB", "--all-profiles", "--format", "json"]);
    assert!(all["layouts"]["maximalCount"].as_u64().unwrap() > 19);
    let out = run(&["H100-SXM5-80GB", "--profile", "9g.1tb"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no MIG profile `9g.1tb`"));
}

#[test]
fn models_without_mig_say_so() {
    let doc = json(&["NVIDIA-L40S", "--format", "json"]);
    assert!(doc["layouts"].is_null());
    let text = String::from_utf8(run(&["Tesla-T4"]).stdout).unwrap();
    assert!(text.contains("MIG: not supported"), "{text}");
    let out = run(&["L40S", "--profile", "1g.10gb"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_unknown_model_is_a_usage_error_with_close_names() {
    let out = run(&["NVIDIA-H100-80GB"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown GPU model `NVIDIA-H100-80GB`"),
        "{err}"
    );
    assert!(err.contains("NVIDIA-H100-80GB-HBM3"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn profile_flags_need_a_model() {
    assert_eq!(run(&["--profile", "1g.10gb"]).status.code(), Some(2));
}
