//! Every command's table fits the terminal: at `COLUMNS=80` no line of `plan`, `inventory`, `policy
//! check`, `mechanisms`, `catalogue` (all models, and one) or of the audit's table is wider than 80
//! columns, save a command of a fix, which stands whole on a line of its own to be copied.

use assert_cmd::Command;

/// The command's standard output at 80 columns (a pipe, as under a pager), run at the repository
/// root with paths relative to it.
fn at_80(args: &[&str]) -> String {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .args(args)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn too_wide(text: &str, width: usize) -> Vec<String> {
    text.lines()
        .filter(|l| l.chars().count() > width)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_commands_table_fits_80_columns() {
    let cluster = "examples/ml-platform/cluster.yaml";
    let policy = "examples/ml-platform/policy.yaml";
    for args in [
        vec!["plan", "examples/plan/plan.yaml"],
        vec!["inventory", cluster, "--policy", policy],
        vec!["policy", "check", policy],
        vec!["mechanisms"],
        vec!["mechanisms", "--sources"],
        vec!["catalogue"],
        vec!["catalogue", "H100-SXM5-80GB"],
        vec!["rules"],
    ] {
        let text = at_80(&args);
        assert!(text.lines().count() > 3, "{args:?}: {text}");
        let wide = too_wide(&text, 80);
        assert!(
            wide.is_empty(),
            "{args:?} at 80 columns:\n{}",
            wide.join("\n")
        );
    }
}

#[test]
fn the_audit_table_fits_80_columns_but_for_whole_commands() {
    for example in ["ml-platform", "inference-platform", "hami-kai"] {
        let text = at_80(&[
            "audit",
            &format!("examples/{example}/cluster.yaml"),
            "--policy",
            &format!("examples/{example}/policy.yaml"),
            "--today",
            "2026-11-15",
        ]);
        for line in too_wide(&text, 80) {
            // A command of a fix: on its own line, indented under the fix.
            assert!(
                line.starts_with("           ") && !line.trim().contains("  "),
                "{example}: {line}"
            );
        }
    }
}
