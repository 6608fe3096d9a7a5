//! Writing a file atomically: a temporary file beside the target, fsync, rename, fsync of the
//! directory. Index builds, set segments and set manifests all go through [`write_atomically`].

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes `path` by `write` into a temporary file `.pocketdex-*.pdx.tmp` in `dir`, then fsync,
/// `before_rename()` (the crash tests' hook), rename, and fsync of `dir`: a failure or crash
/// leaves the old file or the new one at `path`, never a part of one.
pub(crate) fn write_atomically<T>(
    dir: &Path,
    path: &Path,
    before_rename: impl FnOnce(),
    write: impl FnOnce(&mut dyn Write) -> Result<T>,
) -> Result<T> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".pocketdex-")
        .suffix(".pdx.tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    let out = {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        let out = write(&mut w)?;
        w.flush().map_err(|e| Error::io(path, e))?;
        out
    };
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    before_rename();
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        // Makes the rename itself durable; not every platform can fsync a directory.
        let _ = d.sync_all();
    }
    Ok(out)
}
