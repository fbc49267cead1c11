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
