//! Helpers shared by subcommands: the one memory map, progress bars, number formatting.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use pocketdex::Index;
use std::path::Path;

/// How a command reads an index, which sets the kernel's read-ahead for its map.
#[derive(Clone, Copy)]
pub enum Access {
    /// A few scattered bytes per lookup (query, eval): read-ahead would page in megabytes a
    /// query never uses.
    Lookups,
    /// Whole sections front to back (verify, info): read-ahead is what makes that fast.
    Scan,
}

/// Opens an index file by memory-mapping it and running the cheap checks of [`Index::open`].
pub fn open_index(path: &Path, access: Access) -> anyhow::Result<Index<memmap2::Mmap>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open index {}", path.display()))?;
    // SAFETY: the map is read-only and the index never trusts its bytes (every read is bounds-
    // checked and `verify` checks checksums). If another process truncates the file while it is
    // mapped, reads past the new end fault (SIGBUS), as for every memory-mapped reader; indexes
    // are written by rename, never in place, so pocketdex itself never does that.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .with_context(|| format!("cannot map {}", path.display()))?;
    #[cfg(unix)]
    let _ = map.advise(match access {
        Access::Lookups => memmap2::Advice::Random,
        Access::Scan => memmap2::Advice::Sequential,
    });
    Index::open(map).with_context(|| format!("{}", path.display()))
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: Option<u64>, what: &str) -> ProgressBar {
    let bar = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    let template = if len.is_some() {
        "{spinner} {msg} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})"
    } else {
        "{spinner} {msg} {pos} ({per_sec})"
    };
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    bar
}

/// The progress bar of a command that reads INPUT sources: a bar with a total when the number
/// of documents is known up front, a counting spinner otherwise, nothing with `quiet`.
pub fn input_progress(
    sources: &[pocketdex::corpus::Source],
    quiet: bool,
    what: &str,
) -> ProgressBar {
    if quiet {
        ProgressBar::hidden()
    } else {
        progress(pocketdex::corpus::counts_known(sources).then_some(0), what)
    }
}

/// Bytes as a human-readable size.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
