//! `pocketdex eval`: Measure retrieval quality against exact similarities.

use std::process::ExitCode;

/// Measure retrieval quality against exact similarities.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`pocketdex eval` is not available yet")
}
