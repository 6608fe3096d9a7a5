//! `pocketdex compare`: Compare two documents by every measure.

use std::process::ExitCode;

/// Compare two documents by every measure.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`pocketdex compare` is not available yet")
}
