//! The renderers on one report that uses every field: snapshots of the text, JSON and SARIF, and the
//! properties users rely on (determinism, colour only when asked, partial input never looks clean).

use crate::common;

use common::{sample_report, sample_rules};
use gpu_trust_report::audit::sarif::SarifOptions;
use gpu_trust_report::audit::table::TableOptions;
use gpu_trust_report::{
    audit::{json, sarif, table},
    rules,
};
use std::path::PathBuf;

fn sarif_options() -> SarifOptions {
    let mut o = SarifOptions::new("0.1.0", PathBuf::from("/src/platform"));
    o.fallback_file = Some("examples/inference/policy.yaml".into());
    o
}

#[test]
fn table_snapshot() {
    let text = table::render(&sample_report(false), &TableOptions::default());
    insta::assert_snapshot!(text);
}

#[test]
fn table_with_skipped_input_says_partial() {
    let text = table::render(&sample_report(true), &TableOptions::default());
    assert!(text.contains("SKIPPED INPUT"));
    assert!(text
        .contains("examples/inference/broken.yaml:3:7: error[invalid-value]: Pod spec.containers"));
    // The summary line, wrapped at the width: it ends with the partial input.
    let last = text.trim_end().replace('\n', " ");
    assert!(
        last.ends_with("; 1 document skipped: partial input"),
        "{last}"
    );
}

/// One findings section, worst first across the layers, each finding naming its layer: the criticals
/// are at the top however many findings follow.
#[test]
fn table_lists_findings_worst_first_across_layers() {
    let mut report = sample_report(false);
    // A critical in the contract layer comes before the device layer's high.
    report.findings[4].severity = gpu_trust_model::Severity::Critical;
    let text = table::render(&report, &TableOptions::default());
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter(|l| l.contains(" GT"))
        .collect();
    assert_eq!(
        heads,
        [
            "  CRITICAL GT101 untrusted-share-time-sliced-gpu [possible] device",
            "  CRITICAL GT502 shared-not-isolated [possible] contract",
            "  HIGH     GT104 distrusting-share-mig-gpu [observed] device",
            "  HIGH     GT207 distrusting-share-node [observed] host",
            "  MEDIUM   GT401 distrusting-share-api-server [observed] control-plane ACCEPTED",
        ]
    );
    assert!(text.contains("FINDINGS (5 findings, worst first)"));
    assert!(!text.contains("DEVICE ("));
}

/// A command in a fix stands whole on a line of its own, whatever the width, so it can be copied.
#[test]
fn table_fix_commands_are_never_wrapped() {
    let text = table::render(
        &sample_report(false),
        &TableOptions {
            width: 60,
            ..TableOptions::default()
        },
    );
    assert!(
        text.lines()
            .any(|l| l == "           kubectl taint nodes NODE gpu-trust/tenant=TENANT:NoSchedule"),
        "{text}"
    );
    assert!(text.contains("    fix: Dedicate nodes per tenant with a taint\n"));
    assert!(text.contains("\n         and a matching toleration\n"));
}

#[test]
fn table_colour_only_when_asked() {
    let report = sample_report(false);
    let plain = table::render(&report, &TableOptions::default());
    assert!(!plain.contains('\x1b'));
    let coloured = table::render(
        &report,
        &TableOptions {
            colour: true,
            ..TableOptions::default()
        },
    );
    assert!(coloured.contains("\x1b["));
    // Stripping the escapes gives the plain text back.
    let mut stripped = String::new();
    let mut chars = coloured.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            stripped.push(c);
        }
    }
    assert_eq!(stripped, plain);
}

/// Input text cannot steer the terminal or forge a line of the report.
#[test]
fn table_escapes_input_text() {
    let mut report = sample_report(false);
    report.tenants[0].name = "acme\x1b[2J\nFAKE LINE".into();
    report.findings[0].message = "evil\nGT999 forged".into();
    report.findings[0].objects[0].name = "pod\u{202e}x".into();
    let text = table::render(&report, &TableOptions::default());
    assert!(!text.contains('\x1b'));
    assert!(!text.contains('\u{202e}'));
    assert!(text.contains("acme\\x1b[2J\\x0aFAKE LINE"));
    assert!(text.contains("evil\\x0aGT999 forged"));
    assert!(!text.lines().any(|l| l.starts_with("GT999")));
}

/// Prose wraps at the given width between words, never inside one.
#[test]
fn table_wraps_at_the_width_without_breaking_words() {
    let report = sample_report(false);
    let unwrapped = table::render(
        &report,
        &TableOptions {
            colour: false,
            width: 10_000,
            ..TableOptions::default()
        },
    );
    let words: std::collections::BTreeSet<&str> = unwrapped.split_whitespace().collect();
    for width in [60, 100, 160] {
        let text = table::render(
            &report,
            &TableOptions {
                colour: false,
                width,
                ..TableOptions::default()
            },
        );
        for line in text.lines() {
            for w in line.split_whitespace() {
                assert!(words.contains(w), "width {width}: {w:?} is a broken word");
            }
            // A line longer than the width holds a word too long to break (a path, say), or is a
            // table row whose columns come before the wrapped one.
            if line.chars().count() > width {
                assert!(
                    line.split_whitespace().count() <= 2 || line.contains("  "),
                    "width {width}: {line:?}"
                );
            }
        }
    }
}

#[test]
fn table_summary_line_counts_unaccepted() {
    let text = table::render(&sample_report(false), &TableOptions::default());
    assert_eq!(
        text.lines().last().unwrap(),
        "4 findings: 1 critical, 2 high, 1 info; 1 accepted; 3 tenants, 2 nodes, 16 GPUs"
    );
}

#[test]
fn json_snapshot_and_determinism() {
    let report = sample_report(true);
    let a = json::render(&report).unwrap();
    let b = json::render(&report.clone()).unwrap();
    assert_eq!(a, b);
    assert!(a.ends_with("}\n"));
    insta::assert_snapshot!(a);
}

#[test]
fn sarif_snapshot() {
    let text = sarif::render(&sample_report(true), &sample_rules(), &sarif_options()).unwrap();
    insta::assert_snapshot!(text);
}

#[test]
fn sarif_results_point_at_real_lines_and_fingerprint_stably() {
    let report = sample_report(false);
    let v: serde_json::Value =
        serde_json::from_str(&sarif::render(&report, &sample_rules(), &sarif_options()).unwrap())
            .unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), report.findings.len());
    let first = &results[0];
    assert_eq!(first["ruleId"], "GT101");
    assert_eq!(first["level"], "error");
    let loc = &first["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "examples/inference/cluster.yaml"
    );
    assert_eq!(loc["region"]["startLine"], 120);
    // Moving the object to another line keeps the fingerprint.
    let mut moved = report.clone();
    moved.findings[0].objects[0].line = 999;
    let w: serde_json::Value =
        serde_json::from_str(&sarif::render(&moved, &sample_rules(), &sarif_options()).unwrap())
            .unwrap();
    assert_eq!(
        first["partialFingerprints"]["primaryLocationLineHash"],
        w["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"]
    );
    // A finding without objects points at the fallback file; an accepted one is suppressed.
    let api = results.iter().find(|r| r["ruleId"] == "GT401").unwrap();
    assert_eq!(
        api["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "examples/inference/policy.yaml"
    );
    assert_eq!(api["suppressions"][0]["kind"], "external");
    // Rules are listed sorted, once each, with GitHub's security-severity of their highest
    // severity, help from their documentation and a link to their page.
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["GT101", "GT104", "GT207", "GT401", "GT502"]);
    assert_eq!(rules[0]["properties"]["security-severity"], "9.5");
    assert_eq!(rules[0]["defaultConfiguration"]["level"], "error");
    assert_eq!(
        rules[0]["helpUri"],
        "https://github.com/gpu-trust/gpu-trust/blob/v0.1.0/docs/rules/GT101.md"
    );
    assert_eq!(
        rules[0]["fullDescription"]["text"],
        "Two tenants with trust below full share a time-sliced GPU."
    );
    assert!(rules[0]["help"]["markdown"]
        .as_str()
        .unwrap()
        .contains("# Remediation"));
    assert_eq!(first["ruleIndex"], 0);
}

/// Each result carries its own severity (`level` and `properties.security-severity`) under its
/// rule's one descriptor: a finding whose severity changes keeps its rule id and fingerprint, so
/// GitHub updates the alert instead of closing it and opening another.
#[test]
fn sarif_severity_is_per_result_under_one_rule() {
    let mut report = sample_report(false);
    report.findings[0].severity = gpu_trust_model::Severity::High;
    report.findings[0].certainty = gpu_trust_model::Certainty::Permitted;
    let v: serde_json::Value =
        serde_json::from_str(&sarif::render(&report, &sample_rules(), &sarif_options()).unwrap())
            .unwrap();
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for (r, f) in v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&report.findings)
    {
        let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], r["ruleId"]);
        assert_eq!(r["ruleId"], f.rule.as_str());
        assert_eq!(r["level"], sarif::level(f.severity));
        assert_eq!(
            r["properties"]["security-severity"],
            sarif::security_severity(f.severity)
        );
    }
    let first = &v["runs"][0]["results"][0];
    assert_eq!(first["ruleId"], "GT101");
    assert_eq!(first["level"], "error");
    assert_eq!(first["properties"]["security-severity"], "8.0");
    assert_eq!(first["properties"]["severity"], "high");
    // The fingerprint does not move with the severity: it is the rule and what the finding is about.
    let plain: serde_json::Value = serde_json::from_str(
        &sarif::render(&sample_report(false), &sample_rules(), &sarif_options()).unwrap(),
    )
    .unwrap();
    assert_eq!(first["ruleId"], plain["runs"][0]["results"][0]["ruleId"]);
    assert_eq!(
        first["partialFingerprints"],
        plain["runs"][0]["results"][0]["partialFingerprints"]
    );
}

/// No absolute path of the machine gets into the log: a file outside the root is reached from it.
#[test]
fn sarif_uris_are_never_absolute() {
    let mut report = sample_report(true);
    report.findings[0].objects[0].file = "/tmp/rendered/chart.yaml".into();
    let mut o = sarif_options();
    o.root = PathBuf::from("/src/platform");
    let text = sarif::render(&report, &sample_rules(), &o).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "../../tmp/rendered/chart.yaml"
    );
    // The only absolute URI is the root's own, in originalUriBaseIds.
    assert_eq!(text.matches("file://").count(), 1, "{text}");
    assert!(!text.contains("\"uri\": \"/"));
}

/// GitHub rejects a run of more than 25,000 results or a file over 10 MB gzipped: what does not fit
/// is left out, the least severe first, and a notification says so.
#[test]
fn sarif_stays_within_githubs_limits_and_says_what_it_cut() {
    let mut report = sample_report(false);
    let template = report.findings.clone();
    report.findings = (0..sarif::MAX_RESULTS + 7)
        .map(|i| {
            let mut f = template[i % template.len()].clone();
            f.key = format!("k{i}");
            f
        })
        .collect();
    let v: serde_json::Value =
        serde_json::from_str(&sarif::render(&report, &sample_rules(), &sarif_options()).unwrap())
            .unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), sarif::MAX_RESULTS);
    // The accepted finding's copies went first; every other finding is kept.
    let count = |rule: &str| results.iter().filter(|r| r["ruleId"] == rule).count();
    let made = |i: usize| {
        report
            .findings
            .iter()
            .filter(|f| f.rule == template[i].rule)
            .count()
    };
    assert_eq!(count("GT401"), made(3) - 7);
    assert_eq!(count("GT101"), made(0));
    assert_eq!(count("GT502"), made(4));
    let cut = v["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["descriptor"]["id"] == "sarif/results-cut")
        .expect("a notification of the cut");
    assert!(cut["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("7 of 25007 findings are not in this SARIF log"));

    // The gzipped size, with a small bound so the test stays fast.
    let mut small = sample_report(false);
    small.findings = (0..400)
        .map(|i| {
            let mut f = template[i % 3].clone();
            f.key = format!("k{i}");
            // Text that does not compress: digits of a linear congruential sequence.
            let mut x = i as u64 + 1;
            f.message = (0..40)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    format!("{:x}", x >> 33)
                })
                .collect::<Vec<_>>()
                .join(" ");
            f
        })
        .collect();
    let mut o = sarif_options();
    o.max_gzipped_bytes = 20_000;
    let text = sarif::render(&small, &sample_rules(), &o).unwrap();
    let gz = {
        use std::io::Write as _;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap().len()
    };
    assert!(gz <= 20_000, "{gz}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kept = v["runs"][0]["results"].as_array().unwrap().len();
    assert!(kept > 0 && kept < 400, "{kept}");
    assert!(text.contains(&format!(
        "{} of 400 findings are not in this SARIF log",
        400 - kept
    )));
}

/// The fingerprint hashes the rule and the key (the owning workload, the node group), not the pods
/// or tenants: a rollout that renames every pod, or a tenant that joins a pool, keeps the alert.
#[test]
fn sarif_fingerprints_survive_rollouts_and_new_tenants() {
    let report = sample_report(false);
    let mut rolled = report.clone();
    rolled.findings[0].objects[0].name = "infer-5f7c9d8b6-x2k4p".into();
    rolled.findings[0].tenants.push("hooli".into());
    rolled.findings[0].pairs = Some(3);
    let fp = |r: &gpu_trust_report::AuditReport| {
        let v: serde_json::Value =
            serde_json::from_str(&sarif::render(r, &sample_rules(), &sarif_options()).unwrap())
                .unwrap();
        v["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"].clone()
    };
    assert_eq!(fp(&report), fp(&rolled));
    let mut other = report.clone();
    other.findings[0].key = "device/time-slicing@L40S time-slicing nvidia.com/gpu=8".into();
    assert_ne!(fp(&report), fp(&other));
}

/// URIs are relative to a stated root: `%SRCROOT%`, declared in `originalUriBaseIds`. A run that
/// exits 2 is not an execution GitHub should take as successful.
#[test]
fn sarif_uris_name_their_root() {
    let v: serde_json::Value = serde_json::from_str(
        &sarif::render(&sample_report(false), &sample_rules(), &sarif_options()).unwrap(),
    )
    .unwrap();
    let run = &v["runs"][0];
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///src/platform/"
    );
    let location = &run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(location["uriBaseId"], "%SRCROOT%");
    assert_eq!(location["uri"], "examples/inference/cluster.yaml");
}

#[test]
fn sarif_root_makes_uris_relative_to_it() {
    let mut o = sarif_options();
    o.root = PathBuf::from("/src");
    let v: serde_json::Value =
        serde_json::from_str(&sarif::render(&sample_report(false), &sample_rules(), &o).unwrap())
            .unwrap();
    assert_eq!(
        v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "platform/examples/inference/cluster.yaml"
    );
}

#[test]
fn rules_table_and_json() {
    let list = sample_rules();
    let text = rules::render_table(&list, &TableOptions::default());
    insta::assert_snapshot!("rules_table", text);
    let json: serde_json::Value =
        serde_json::from_str(&rules::render_json(&list).unwrap()).unwrap();
    assert_eq!(json["schema"], "gpu-trust/rules/v1");
    assert_eq!(json["rules"][0]["code"], "GT101");
    assert_eq!(json["rules"].as_array().unwrap().len(), list.len());
}
