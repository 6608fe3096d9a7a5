//! `pocketdex verify`: check every byte of an index.

use super::util;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Check every byte of an index: run it after copying an index to new media.
///
/// Checksums of the whole file and of every section, and the structure of postings and names.
/// Exit status 0 when sound, 2 (with what is wrong) otherwise.
///
/// An index set is checked segment by segment, with its manifest (every segment it names is
/// there, unchanged, and every deleted document exists) and its schema (schema.pdx, which every
/// segment must share). Several INDEX arguments are checked in turn; the status is 2 when any
/// is not sound. A signed file's signature is checked against the key it carries (a damaged
/// block); with --public-key, a file must also be signed by that key (`pocketdex sign`).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Index files or index sets.
    #[arg(required = true, value_name = "INDEX")]
    indexes: Vec<PathBuf>,
    #[command(flatten)]
    trust: super::sign::Trust,
    /// Print nothing for a sound index: the exit status says it (what is wrong still goes to
    /// stderr), e.g. `pocketdex verify -q /media/usb/wiki.pdx && echo shipped`.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Written with `?`, not println!, so that a closed stdout ends the command quietly.
    let mut out = std::io::stdout().lock();
    util::for_each_index(&args.indexes, |path| {
        let set = util::open_indexes(std::slice::from_ref(path), util::Access::Scan)?;
        args.trust.check(&set, std::slice::from_ref(path))?;
        // A file's errors name it already (as the set's part); a set's name the segment's path,
        // with what mends it.
        set.verify()?;
        if args.quiet {
            return Ok(());
        }
        if path.is_dir() {
            writeln!(
                out,
                "{}: ok ({} in {}, {} bytes)",
                path.display(),
                super::util::plural(set.live_docs(), "live document"),
                super::util::plural(set.parts().len() as u64, "segment"),
                set.parts().iter().map(|p| p.index.len_bytes()).sum::<u64>()
            )?;
        } else {
            writeln!(
                out,
                "{}: ok ({} documents, {} bytes)",
                path.display(),
                set.live_docs(),
                set.parts()[0].index.len_bytes()
            )?;
        }
        Ok(())
    })
}
