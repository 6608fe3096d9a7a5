//! `pocketdex report`: Report how much of a collection is redundant.

use std::process::ExitCode;

/// Report how much of a collection is redundant.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`pocketdex report` is not available yet")
}
