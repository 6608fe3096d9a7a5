//! `pocketdex synth`: Generate edited copies of documents at controlled rates.

use std::process::ExitCode;

/// Generate edited copies of documents at controlled rates.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`pocketdex synth` is not available yet")
}
