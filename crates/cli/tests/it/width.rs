//! Every command's table fits the terminal: at `COLUMNS=80` and `120` no line of `plan`,
//! `inventory`, `policy check`, `mechanisms`, `catalogue` (all models, and one), `advisories`,
//! `rules` or of the audit's table is wider than the terminal, save a command of a fix, which stands
//! whole on a line of its own to be copied; and no word or identifier is cut to fit.

use assert_cmd::Command;

/// The command's standard output at `columns` (a pipe, as under a pager), run at the repository
/// root with paths relative to it.
fn at(columns: usize, args: &[&str]) -> String {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("NO_COLOR", "1")
        .env("COLUMNS", columns.to_string())
        // The built-in advisory data only, whatever the user's cache holds.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/width-no-cache"),
        )
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

fn at_80(args: &[&str]) -> String {
    at(80, args)
}

/// The words of a text, tables' frames and a word's closing punctuation aside.
fn words(text: &str) -> std::collections::BTreeSet<String> {
    text.split(|c: char| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c))
        .map(|w| w.trim_end_matches([':', ',', ';']))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn too_wide(text: &str, width: usize) -> Vec<String> {
    text.lines()
        .filter(|l| l.chars().count() > width)
        .map(str::to_string)
        .collect()
}

/// At 80 and 120 columns every command's output fits, and every word it prints is a word of its
/// output at 1000 columns, where nothing needs wrapping: a word cut to fit a column would not be.
#[test]
fn every_commands_table_fits_80_and_120_columns_with_no_word_cut() {
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["plan", "examples/plan/plan.yaml"],
        vec!["policy", "check", "examples/ml-platform/policy.yaml"],
        vec!["mechanisms"],
        vec!["mechanisms", "--sources"],
        vec!["catalogue"],
        vec!["catalogue", "H100-SXM5-80GB"],
        vec!["advisories", "--today", "2026-12-01"],
        vec!["rules"],
    ];
    let examples = ["ml-platform", "inference-platform", "hami-kai", "gke"];
    let files: Vec<(String, String)> = examples
        .iter()
        .map(|e| {
            (
                format!("examples/{e}/cluster.yaml"),
                format!("examples/{e}/policy.yaml"),
            )
        })
        .collect();
    for (cluster, policy) in &files {
        commands.push(vec!["inventory", cluster, "--policy", policy]);
    }
    for args in &commands {
        let whole = words(&at(1000, args));
        for columns in [80, 120] {
            let text = at(columns, args);
            assert!(text.lines().count() > 3, "{args:?}: {text}");
            let wide = too_wide(&text, columns);
            assert!(
                wide.is_empty(),
                "{args:?} at {columns} columns:\n{}",
                wide.join("\n")
            );
            let cut: Vec<String> = words(&text).difference(&whole).cloned().collect();
            assert!(
                cut.is_empty(),
                "{args:?} at {columns} columns cuts words: {cut:?}"
            );
        }
    }
}

/// A node of the examples fits a screen (50 lines) in the inventory at 80 columns: GPUs that show
/// the same are one row.
#[test]
fn an_inventory_node_fits_a_screen() {
    for example in ["ml-platform", "inference-platform", "hami-kai", "gke"] {
        let text = at_80(&[
            "inventory",
            &format!("examples/{example}/cluster.yaml"),
            "--policy",
            &format!("examples/{example}/policy.yaml"),
        ]);
        let nodes = text.split("\n\n").filter(|s| s.contains("  driver "));
        for node in nodes {
            let lines = node.lines().count();
            let name = node.lines().next().unwrap_or("");
            assert!(lines <= 50, "{example}: {name}: {lines} lines\n{node}");
        }
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
