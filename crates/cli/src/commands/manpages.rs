//! `gpu-trust manpages DIR` (hidden): the man pages, generated from the command definitions, for
//! release archives and packagers.

use anyhow::Context as _;
use clap::Command;
use std::path::PathBuf;
use std::process::ExitCode;

/// Write the man pages into DIR: gpu-trust.1 and one gpu-trust-COMMAND.1 per visible command (and
/// gpu-trust-COMMAND-SUBCOMMAND.1 below it).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder to write the pages into (created if missing).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

pub fn run(args: Args, command: Command) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("{}: cannot create", args.dir.display()))?;
    for (name, page) in pages(&command)? {
        let path = args.dir.join(name);
        std::fs::write(&path, page).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Each page's file name and roff text: the command's page, then one per visible subcommand, at
/// every level (`gpu-trust-policy-check.1`); hidden commands and options are left out, as the
/// completions leave them out, and so is clap's `help` command, which has no page. A page's
/// synopsis names the command as it is typed (`gpu-trust policy check`). No date: the same binary
/// writes the same bytes.
pub fn pages(command: &Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let name = super::completions::BIN_NAME;
    let mut out = Vec::new();
    add(
        &super::completions::without_hidden(command),
        name,
        name,
        &mut out,
    )?;
    Ok(out)
}

/// The page of `command`, in the file `file`.1 and typed as `typed`, then its subcommands' pages.
fn add(
    command: &Command,
    file: &str,
    typed: &str,
    out: &mut Vec<(String, Vec<u8>)>,
) -> anyhow::Result<()> {
    let command = command.clone().disable_help_subcommand(true);
    let mut page = Vec::new();
    clap_mangen::Man::new(
        command
            .clone()
            .name(file.to_string())
            .bin_name(typed.to_string()),
    )
    .render(&mut page)?;
    out.push((format!("{file}.1"), page));
    for sub in command.get_subcommands() {
        let name = sub.get_name();
        add(
            sub,
            &format!("{file}-{name}"),
            &format!("{typed} {name}"),
            out,
        )?;
    }
    Ok(())
}
