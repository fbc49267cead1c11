//! `gpu-trust completions SHELL`: shell completion scripts generated from the command definitions.

use std::process::ExitCode;

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The shell to generate completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut command, "gpu-trust", &mut out);
    Ok(ExitCode::SUCCESS)
}

/// What `--help` shows after the options, as written (clap wraps the prose above itself).
const EXAMPLES: &str = "\
Examples:
  gpu-trust completions bash > /etc/bash_completion.d/gpu-trust
  gpu-trust completions zsh > \"${fpath[1]}/_gpu-trust\"
  gpu-trust completions fish > ~/.config/fish/completions/gpu-trust.fish";
