//! `gpu-trust probe` (being built).

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {}

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`gpu-trust probe` is not built yet")
}

pub fn run_worker(_args: WorkerArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`gpu-trust probe-worker` is not built yet")
}
