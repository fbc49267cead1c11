//! `gpu-trust completions SHELL`: shell completion scripts generated from the command definitions.

use clap::Command;
use std::io::Write as _;
use std::process::ExitCode;

/// Print a shell completion script.
///
/// The script completes subcommands, their options and the options' values. Hidden commands and
/// options (the probe's worker process, test switches) are never offered.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The shell to generate completions for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// The name the scripts complete (the installed binary's name).
pub const BIN_NAME: &str = "gpu-trust";

pub fn run(args: Args, command: Command) -> anyhow::Result<ExitCode> {
    let script = script(args.shell, &command);
    let mut out = std::io::stdout().lock();
    out.write_all(script.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The completion script for `shell`, for the visible part of `command`.
pub fn script(shell: clap_complete::Shell, command: &Command) -> String {
    let mut visible = without_hidden(command);
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut visible, BIN_NAME, &mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    match shell {
        clap_complete::Shell::Bash => fix_bash_states(&text, BIN_NAME),
        _ => text,
    }
}

/// A copy of `command` without its hidden subcommands and hidden arguments, recursively: the
/// generators (completions, man pages) offer everything a command holds, hidden or not.
pub(crate) fn without_hidden(command: &Command) -> Command {
    let mut out = Command::new(command.get_name().to_string())
        .args(
            command
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .cloned(),
        )
        .subcommands(
            command
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(without_hidden),
        );
    if let Some(about) = command.get_about() {
        out = out.about(about.clone());
    }
    // What the man pages show besides (the completions read only `about`).
    if let Some(long) = command.get_long_about() {
        out = out.long_about(long.clone());
    }
    if let Some(after) = command.get_after_help() {
        out = out.after_help(after.clone());
    }
    if let Some(version) = command.get_version() {
        out = out.version(version.to_string());
    }
    out
}

/// The bash generator (clap_complete 4.6.12, the newest release) names the state of a subcommand
/// in two ways when the binary's name holds a hyphen: the loop that reads the command line spells
/// `gpu__trust__subcmd__audit`, the case arms `gpu__subcmd__trust__subcmd__audit`, so no option
/// of a subcommand is ever completed (clap-rs/clap#6421, fixed by clap-rs/clap#6428, not yet
/// released). The arms are respelled the way the loop spells them.
fn fix_bash_states(script: &str, bin_name: &str) -> String {
    const SEP: &str = "__subcmd__";
    let broken = format!("{}{SEP}", bin_name.replace('-', SEP));
    let loop_spelling = format!("{}{SEP}", bin_name.replace('-', "__"));
    if broken == loop_spelling {
        return script.to_string();
    }
    script.replace(&broken, &loop_spelling)
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust completions bash > /etc/bash_completion.d/gpu-trust
  gpu-trust completions zsh > \"${fpath[1]}/_gpu-trust\"
  gpu-trust completions fish > ~/.config/fish/completions/gpu-trust.fish";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_states_are_respelled_only_for_hyphenated_names() {
        let arm = "        gpu__subcmd__trust__subcmd__audit)\n";
        assert_eq!(
            fix_bash_states(arm, "gpu-trust"),
            "        gpu__trust__subcmd__audit)\n"
        );
        assert_eq!(
            fix_bash_states("tool__subcmd__a)", "tool"),
            "tool__subcmd__a)"
        );
    }
}
