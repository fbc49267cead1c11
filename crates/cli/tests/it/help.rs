//! Help text is wrapped by clap at the terminal's width (COLUMNS here), never by hand: every line
//! fits the width it is given, the words are the same at every width, and a paragraph of a command's
//! description fills its lines instead of breaking where its source comment did.

use assert_cmd::Command;

/// Every command with help of its own.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["audit"],
    &["inventory"],
    &["plan"],
    &["probe"],
    &["mechanisms"],
    &["catalogue"],
    &["policy"],
    &["policy", "check"],
    &["rules"],
    &["explain"],
    &["completions"],
];

fn help(command: &[&str], columns: usize) -> String {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .env("COLUMNS", columns.to_string())
        .env("NO_COLOR", "1")
        .args(command)
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{command:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

#[test]
fn help_fits_the_width_and_says_the_same_at_every_width() {
    for command in COMMANDS {
        let wide = help(command, 100);
        for columns in [60, 80, 100] {
            let text = help(command, columns);
            for line in text.lines() {
                // An example command line is kept as written; a single long word cannot be broken.
                let example = line.starts_with("  gpu-trust ")
                    || line.starts_with("  kubectl ")
                    || line.starts_with("  helm ");
                assert!(
                    line.chars().count() <= columns || example || !line.trim().contains(' '),
                    "{command:?} at {columns} columns: {line:?}"
                );
            }
            assert_eq!(
                words(&text),
                words(&wide),
                "{command:?} at {columns} columns"
            );
        }
    }
}

#[test]
fn description_paragraphs_fill_their_lines() {
    for command in COMMANDS {
        let text = help(command, 100);
        // The description: the paragraphs before `Usage:`.
        let description = &text[..text.find("Usage:").unwrap_or(0)];
        for paragraph in description.split("\n\n") {
            let lines: Vec<&str> = paragraph.lines().collect();
            // Every line but a paragraph's last is filled close to the width: the next word
            // would not have fitted.
            for pair in lines.windows(2) {
                let next = pair[1].split_whitespace().next().unwrap_or("");
                assert!(
                    pair[0].chars().count() + 1 + next.chars().count() > 100,
                    "{command:?}: a line broken early: {:?} / {:?}",
                    pair[0],
                    pair[1]
                );
            }
        }
    }
}
