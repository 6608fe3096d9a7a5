//! `pocketdex verify`: check every byte of an index.

use super::util;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Check an index completely: checksums of the whole file and of every section, and the
/// structure of postings and names. Exit status 0 when sound, 2 (with what is wrong) otherwise.
/// Run it after copying an index to new media.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The index file.
    #[arg(value_name = "FILE.pdx")]
    index: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Written with `?`, not println!, so that a closed stdout ends the command quietly.
    let mut out = std::io::stdout().lock();
    let index = util::open_index(&args.index, util::Access::Scan)?;
    index
        .verify()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.index.display()))?;
    writeln!(
        out,
        "{}: ok ({} documents, {} bytes)",
        args.index.display(),
        index.doc_count(),
        index.len_bytes()
    )?;
    Ok(ExitCode::SUCCESS)
}
