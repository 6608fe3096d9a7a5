//! `pocketdex verify`: check every byte of an index.

use super::util;
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
    let index = util::open_index(&args.index, util::Access::Scan)?;
    index
        .verify()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.index.display()))?;
    println!(
        "{}: ok ({} documents, {} bytes)",
        args.index.display(),
        index.doc_count(),
        index.len_bytes()
    );
    Ok(ExitCode::SUCCESS)
}
