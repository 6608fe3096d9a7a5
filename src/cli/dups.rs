//! `pocketdex dups`: Find groups of near-duplicate documents with a classical method.

use std::process::ExitCode;

/// Find groups of near-duplicate documents with a classical method.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`pocketdex dups` is not available yet")
}
