//! `gpu-trust manpages DIR` (hidden): the man pages, generated from the command definitions, for
//! release archives and packagers.

use anyhow::Context as _;
use clap::Command;
use std::path::PathBuf;
use std::process::ExitCode;

/// Write the man pages into DIR: gpu-trust.1 and one gpu-trust-COMMAND.1 per visible command.
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

/// Each page's file name and roff text: the command's page, then one per visible subcommand (hidden
/// commands and options are left out, as the completions leave them out). No date: the same
/// binary writes the same bytes.
pub fn pages(command: &Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let name = super::completions::BIN_NAME;
    let visible = super::completions::without_hidden(command).name(name);
    let mut out = Vec::new();
    let mut page = Vec::new();
    clap_mangen::Man::new(visible.clone()).render(&mut page)?;
    out.push((format!("{name}.1"), page));
    for sub in visible.get_subcommands() {
        let full = format!("{name}-{}", sub.get_name());
        let mut page = Vec::new();
        clap_mangen::Man::new(
            sub.clone()
                .name(full.clone())
                .bin_name(full.replace('-', " ")),
        )
        .render(&mut page)?;
        out.push((format!("{full}.1"), page));
    }
    Ok(out)
}
