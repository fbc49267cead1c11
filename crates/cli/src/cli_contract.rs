//! The command line's conventions, checked over every command: each visible argument is described,
//! value names come from one vocabulary, and the completion scripts offer nothing hidden.

use crate::Cli;
use clap::CommandFactory;

/// The metavariables in use: one spelling per kind of value (`<FILE>`, never `<OUTPUT>`; dates
/// as `<YYYY-MM-DD>`, never `<DATE>`).
const VALUE_NAMES: &[&str] = &[
    "PATH",
    "FILE",
    "DIR",
    "FORMAT",
    "FORMAT=FILE",
    "[FORMAT=]FILE",
    "SEVERITY",
    "YYYY-MM-DD",
    "WHEN",
    "SHELL",
    "CODE",
    "NAME",
    "DEV",
    "SECS",
    "HOST:PORT",
    "ADDR",
    "K=V",
    "IMAGE",
    "NS",
    "RULE",
    "MECHANISM",
    "MODEL",
    "PROFILE",
    "N",
    "URL",
    "DURATION",
];

fn visit(command: &clap::Command, path: &str, check: &mut dyn FnMut(&str, &clap::Arg)) {
    for arg in command.get_arguments() {
        check(path, arg);
    }
    for sub in command.get_subcommands() {
        if sub.is_hide_set() {
            continue;
        }
        visit(sub, &format!("{path} {}", sub.get_name()), check);
    }
}

#[test]
fn every_visible_argument_is_described_and_named_consistently() {
    let mut command = Cli::command();
    command.build();
    let mut problems = Vec::new();
    visit(&command, "gpu-trust", &mut |path, arg| {
        if arg.is_hide_set() {
            return;
        }
        let id = arg.get_id().as_str();
        if arg.get_help().is_none() && arg.get_long_help().is_none() {
            problems.push(format!("{path}: `{id}` has no description"));
        }
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
        if !takes_value || !arg.get_possible_values().is_empty() {
            // Flags, and values listed in the help (a value enum), need no metavariable.
            for value in arg.get_possible_values() {
                if value.is_hide_set() {
                    continue;
                }
                if arg.get_id() != "shell" && value.get_help().is_none() {
                    problems.push(format!(
                        "{path}: value `{}` of `{id}` has no description",
                        value.get_name()
                    ));
                }
            }
            return;
        }
        match arg.get_value_names() {
            Some(names) => {
                for name in names {
                    if !VALUE_NAMES.contains(&name.as_str()) {
                        problems.push(format!(
                            "{path}: `{id}` has the metavariable <{name}>, not one of {VALUE_NAMES:?}"
                        ));
                    }
                }
            }
            None => problems.push(format!(
                "{path}: `{id}` has no metavariable (it would print <{}>)",
                id.to_ascii_uppercase()
            )),
        }
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn fail_on_lists_its_values_never_included() {
    let command = Cli::command();
    let audit = command.find_subcommand("audit").expect("audit");
    let fail_on = audit
        .get_arguments()
        .find(|a| a.get_id() == "fail_on")
        .expect("--fail-on");
    let values: Vec<String> = fail_on
        .get_possible_values()
        .iter()
        .map(|v| v.get_name().to_string())
        .collect();
    assert_eq!(
        values,
        ["critical", "high", "medium", "low", "info", "never"]
    );
}

#[test]
fn completion_scripts_offer_no_hidden_command_or_option() {
    let command = Cli::command();
    for shell in [
        clap_complete::Shell::Bash,
        clap_complete::Shell::Zsh,
        clap_complete::Shell::Fish,
    ] {
        // The probe's help mentions the worker (`probe-worker --serve`); that is prose, not an offer.
        let script = crate::commands::completions::script(shell, &command)
            .replace("probe-worker --serve", "");
        assert!(
            !script.contains("probe-worker") && !script.contains("probe__subcmd__worker"),
            "{shell}: offers the hidden worker subcommand"
        );
        assert!(
            !script.contains("fake-dir"),
            "{shell}: offers a hidden option"
        );
        assert!(
            script.contains("fail-on"),
            "{shell}: misses audit's options"
        );
    }
}

#[test]
fn man_pages_name_the_command_as_typed_and_refer_only_to_pages_there_are() {
    let pages = crate::commands::manpages::pages(&Cli::command()).expect("pages");
    let files: Vec<&str> = pages.iter().map(|(f, _)| f.as_str()).collect();
    assert!(files.contains(&"gpu-trust-policy-check.1"), "{files:?}");
    for (file, page) in &pages {
        let text = String::from_utf8_lossy(page);
        // gpu-trust-policy-check.1 is typed `gpu-trust policy check`.
        let rest = file.trim_end_matches(".1").trim_start_matches("gpu-trust");
        let typed = format!("gpu-trust{}", rest.replace('-', " ")).replace('-', "\\-");
        let synopsis = text
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .and_then(|t| t.lines().next())
            .unwrap_or("");
        assert!(
            synopsis.starts_with(&format!("\\fB{typed}\\fR")),
            "{file}: {synopsis}"
        );
        for (at, _) in text.match_indices("(1)") {
            let name = text[..at]
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '\\'))
                .next()
                .unwrap_or("")
                .replace("\\-", "-");
            assert!(
                files.contains(&format!("{name}.1").as_str()),
                "{file} refers to {name}(1), which is not generated"
            );
        }
    }
}

/// Every example of every command's help parses: its options exist and take the values it gives.
/// (`tests/it/help.rs` runs them.)
#[test]
fn every_example_parses() {
    let mut command = Cli::command();
    command.build();
    let mut checked = 0;
    let mut problems = Vec::new();
    let mut visit = vec![command.clone()];
    while let Some(c) = visit.pop() {
        visit.extend(c.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
        let Some(help) = c
            .get_after_help()
            .map(|h| h.to_string().replace("\\\n", " "))
        else {
            continue;
        };
        for line in help.lines().filter(|l| l.starts_with("  ")) {
            for stage in line.split(['|', '&', '>', '#']) {
                let words: Vec<&str> = stage.split_whitespace().collect();
                if words.first() != Some(&"gpu-trust") || words.iter().any(|w| w.contains('\'')) {
                    continue;
                }
                checked += 1;
                if let Err(e) = Cli::command().try_get_matches_from(&words) {
                    problems.push(format!("{line}: {e}"));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} examples found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
