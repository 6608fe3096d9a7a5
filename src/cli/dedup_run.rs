//! `pocketdex dedup-run`: Collapse content-equivalent documents in ranked result lists.

use std::process::ExitCode;

/// Collapse content-equivalent documents in ranked result lists.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`pocketdex dedup-run` is not available yet")
}
