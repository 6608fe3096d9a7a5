//! Writing a file atomically: a temporary file beside the target, fsync, rename, fsync of the
//! directory. Index builds, set segments and set manifests all go through `write_atomically`,
//! other files (`dups --output`) through [`write_file`].
//!
//! No temporary file outlives its writer for long:
//! - a failed write removes its own (the temporary file is deleted when dropped);
//! - a writer holds an OS lock on its temporary file while it lives, and every write into a
//!   directory first removes the temporary files there whose lock it can take: their writer
//!   died (SIGKILL, power loss). A live writer's file is locked, so concurrent builds into one
//!   directory leave each other alone;
//! - a program's signal handler calls [`remove_in_flight`] on SIGINT or SIGTERM, which removes
//!   the temporary files being written and keeps any of them from being renamed into place.
//!
//! A new file gets the permissions the umask leaves of `rw-rw-rw-` (0666), as any file a
//! program creates; a file that is replaced passes its permissions on, as `cp` and a shell's
//! `>` keep them (a private index stays private when it is rebuilt or signed); a secret
//! ([`write_private_file`]) is 0600 whatever it replaces.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// How temporary files begin: hidden, and named for pocketdex.
pub const TEMP_PREFIX: &str = ".pocketdex-";
/// How temporary files end.
pub const TEMP_SUFFIX: &str = ".pdx.tmp";

/// The temporary files being written now by this process.
static IN_FLIGHT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn in_flight() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it intact: the list itself is always consistent.
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner())
}

/// For a signal handler: removes every temporary file this process is writing, then runs
/// `then`, which should end the process (e.g. by re-raising the signal), with the list of
/// temporary files held, so that no write can rename its file into place any more. Returns the
/// number of files removed if `then` returns.
pub fn remove_in_flight(then: impl FnOnce(usize, &Held)) -> usize {
    let list = in_flight();
    let removed = list
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count();
    then(removed, &Held(()));
    removed
}

/// What [`remove_in_flight`] gives its `then`: while it lives, no temporary file of this
/// process can be renamed into place.
pub struct Held(());

impl Held {
    /// In every index set this process writes (holds the writer lock of), removes the segment
    /// files its manifest on disk does not name: a new one renamed into place before the
    /// manifest that would name it, or old ones a committed merge had not removed yet, which
    /// the next writer would otherwise remove. Returns how many. Only for a `then` that ends
    /// the process: one that goes on could write a manifest that names such a file.
    pub fn remove_unnamed_segments(&self) -> usize {
        crate::set::remove_unnamed_segments()
    }
}

/// What this process has committed that a later step of the same call must not be taken to
/// have undone: an index set's `add` commits its documents, then merges segments; a signal
/// during the merge should say that the documents are in (a script would otherwise add them
/// again and be refused their ids).
static COMMITTED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Records that a change is committed (what it was, for a signal handler to say): the first
/// of a call, which the commits that follow it (merges of segments) do not replace.
pub fn note_committed(what: String) {
    COMMITTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(what);
}

/// The change this process committed, if any ([`note_committed`]).
pub fn committed() -> Option<String> {
    COMMITTED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether `name` is the name of one of pocketdex's temporary files.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)
}

/// Removes the temporary files in `dir` whose writer is gone (their lock can be taken); a
/// file another live process writes is locked and stays. Returns how many were removed;
/// errors (an unreadable directory, a file of another user) remove nothing.
pub fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        if !e.file_name().to_str().is_some_and(is_temp_name) {
            continue;
        }
        let Ok(file) = File::open(e.path()) else {
            continue;
        };
        // Held until the file is removed: a writer that created it but has not locked it yet
        // finds it gone once it has the lock, and makes another.
        if file.try_lock().is_ok() && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The directory a file `path` is written in (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Checks, before any work, that `path` can be written the way `write_atomically` writes it:
/// its directory exists and takes a new file (one is created and removed), and `path` is not a
/// directory. Returns the error a write would meet, with advice.
pub fn check_writable(path: &Path) -> Result<()> {
    // Standard output takes no rename, and an index or a row file is better not a stream.
    if path.as_os_str() == "-" {
        return Err(Error::Invalid(
            "-o - (standard output) is not supported here: give the name of the file to write (./- for a file named -)".into(),
        ));
    }
    if path.as_os_str().is_empty() {
        return Err(Error::Invalid(
            "the output path is empty: give the name of the file to write".into(),
        ));
    }
    // A name ending in a slash names a directory, existing or not.
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") && !path.is_dir() {
        return Err(Error::Invalid(format!(
            "{} ends in a slash, which names a directory; give the name of the file to write, e.g. {}",
            path.display(),
            path.join("index.pdx").display()
        )));
    }
    check_replaceable(path)?;
    if path.is_dir() {
        return Err(Error::Invalid(format!(
            "{} is a directory; give the name of the file to write, e.g. {}",
            path.display(),
            path.join("index.pdx").display()
        )));
    }
    let dir = parent_dir(path);
    if dir.exists() && !dir.is_dir() {
        return Err(Error::at_path(
            path,
            std::io::ErrorKind::NotADirectory,
            format!(
                "cannot write {}: {} is a file, not a directory",
                path.display(),
                dir.display()
            ),
        ));
    }
    if !dir.is_dir() {
        return Err(Error::at_path(
            path,
            std::io::ErrorKind::NotFound,
            format!(
                "cannot write {}: the directory {} does not exist; create it first",
                path.display(),
                dir.display()
            ),
        ));
    }
    match temp_in(dir) {
        Ok(_) => Ok(()),
        Err(e) => {
            // The advice fits the cause: most often a directory one may not write in.
            // tempfile wraps the system's error with the path, keeping only its text: the
            // code is read back from it ("… (os error 24)").
            let code = e.raw_os_error().or_else(|| {
                let text = e.to_string();
                let at = text.rfind("(os error ")? + "(os error ".len();
                text[at..].split(')').next()?.parse().ok()
            });
            let advice = match (code, e.kind()) {
                (Some(23 | 24), _) => "too many files are open: raise the limit (`ulimit -n`)",
                (_, std::io::ErrorKind::StorageFull) => {
                    "the disk is full: free some space, or choose another place"
                }
                (_, std::io::ErrorKind::ReadOnlyFilesystem) => {
                    "the file system is read-only: choose another place"
                }
                _ => "choose another place, or make the directory writable",
            };
            Err(Error::Path {
                path: path.to_path_buf(),
                kind: e.kind(),
                errno: code,
                message: format!(
                    "cannot write {}: cannot create a file in {} ({}); {advice}",
                    path.display(),
                    dir.display(),
                    plain(e)
                ),
            })
        }
    }
}

/// Refuses an existing `path` that a rename would replace with something else than a file: a
/// symbolic link (the link would become a file, its target left as it was), a device such as
/// `/dev/null` (run as root, the device node itself would be replaced), a FIFO or a socket.
fn check_replaceable(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| format!(" (to {})", t.display()))
            .unwrap_or_default();
        return Err(Error::Invalid(format!(
            "{} is a symbolic link{target}; pocketdex writes a new file and renames it into place, which would replace the link, so give the file it points to instead",
            path.display()
        )));
    }
    if kind.is_dir() || kind.is_file() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "{} is not a regular file ({}); pocketdex writes a new file and renames it into place, which would replace it, so give the name of a file",
        path.display(),
        special_kind(&kind)
    )))
}

#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "a special file"
}

/// Refuses an `output` that is one of the `inputs` (the same file, by any name), or an
/// existing file below an input directory other than a pocketdex index: the write would
/// replace a document before, or while, it is read, and a file written there before is read
/// back as a document (`dups DIR -o DIR/rows.jsonl` run twice). An index below an input
/// directory is skipped as binary by every reader, so `build . -o index.pdx` may run again.
pub fn check_not_input<P: AsRef<Path>>(output: &Path, inputs: &[P]) -> Result<()> {
    let Ok(out) = std::fs::metadata(output) else {
        return Ok(());
    };
    for input in inputs.iter().map(AsRef::as_ref) {
        match std::fs::metadata(input) {
            Ok(m) if same_meta(&out, &m) => {
                return Err(Error::Invalid(format!(
                    "the output {} is also an input ({}); writing it would replace that document, so choose another output name",
                    output.display(),
                    input.display()
                )))
            }
            _ => {}
        }
    }
    if out.is_file() && !crate::index::is_index_file(output) {
        if let Some(dir) = input_dir_holding(output, inputs) {
            return Err(Error::Invalid(format!(
                "the output {} is a file below the input directory {}, which is read as a document (and would be replaced); choose an output outside {}",
                output.display(),
                dir.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Refuses an output that is an index set's directory, or lies in it or below it: the set's
/// writers own the files there. One written over a segment, the schema or the manifest loses
/// documents (`build -o SET/seg-00000001.pdx`), which `repair` cannot tell from damage, and
/// one with a segment's name that the manifest does not list is removed as a crash's leftover.
/// The one rule for every front end (`merge -o`, `build --segment-of` included).
pub fn check_not_in_a_set(path: &Path) -> Result<()> {
    if let Some(set) = set_holding(path, 0) {
        return Err(Error::Invalid(format!(
            "{} must be outside the index set {}, whose files are its writers' own (a segment's name would replace a live segment or be removed as a crash's leftover); write it elsewhere (documents join a set with `pocketdex add`, pieces built apart with `pocketdex adopt`)",
            path.display(),
            set.display()
        )));
    }
    Ok(())
}

/// The index set whose directory `path` is (unless `skip` is 1), or lies in or below, by its
/// real path.
fn set_holding(path: &Path, skip: usize) -> Option<PathBuf> {
    resolved(path)?
        .ancestors()
        .skip(skip)
        .find(|d| crate::set::is_set(d))
        .map(Path::to_path_buf)
}

/// Refuses a new index set at `dir` inside another one's directory: a set's directory holds
/// its writers' files alone (a backup by copying it would carry the other set along, and
/// `repair` moves what it does not know).
pub(crate) fn check_new_set_outside_sets(dir: &Path) -> Result<()> {
    if let Some(set) = set_holding(dir, 1) {
        return Err(Error::Invalid(format!(
            "a new index set cannot lie inside the index set {}, whose directory holds the set's own files; create it elsewhere",
            set.display()
        )));
    }
    Ok(())
}

/// [`check_writable`] of a command's output, after [`check_not_in_a_set`]: what every front
/// end checks of a file it will write (not the set writers, whose files are in their set).
pub fn check_output(path: &Path) -> Result<()> {
    check_not_in_a_set(path)?;
    check_writable(path)
}

/// Refuses to replace an existing file that is not a pocketdex index with one (`build -o`,
/// `merge -o`, Python's `IndexBuilder.write`): a mistyped or swapped output name would destroy a
/// document. An empty file (one `mktemp` made, say) holds nothing to lose.
pub fn check_replaces_only_an_index(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() > 0 && !crate::index::is_index_file(path) => {
            Err(Error::Invalid(format!(
                "{} exists and is not a pocketdex index, which writing one there would replace; remove it first, or choose another name",
                path.display()
            )))
        }
        _ => Ok(()),
    }
}

/// Refuses an output that is not an index (`dups -o`, `synth -o`) below an input directory,
/// existing or not: written there, the next run reads it back as a document. Besides
/// [`check_not_input`].
pub fn check_outside_inputs<P: AsRef<Path>>(output: &Path, inputs: &[P]) -> Result<()> {
    check_not_input(output, inputs)?;
    match input_dir_holding(output, inputs) {
        Some(dir) => Err(Error::Invalid(format!(
            "the output {} is below the input directory {}, where the next run would read it as a document; choose an output outside {}",
            output.display(),
            dir.display(),
            dir.display()
        ))),
        None => Ok(()),
    }
}

/// The first of `inputs` that is a directory holding `path` (or is `path`), by their real
/// paths; `path` need not exist yet (its nearest existing ancestor is resolved).
pub fn input_dir_holding<'a, P: AsRef<Path>>(path: &Path, inputs: &'a [P]) -> Option<&'a Path> {
    let real = resolved(path)?;
    inputs.iter().map(AsRef::as_ref).find(|input| {
        input
            .canonicalize()
            .is_ok_and(|d| d.is_dir() && real.starts_with(&d))
    })
}

/// The real path of `path`, which need not exist: its nearest existing ancestor canonicalized,
/// the rest of the names after it.
fn resolved(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut base = path;
    loop {
        let here = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        if let Ok(real) = here.canonicalize() {
            return Some(rest.iter().rev().fold(real, |p: PathBuf, n| p.join(n)));
        }
        rest.push(base.file_name()?.to_os_string());
        base = base.parent()?;
    }
}

#[cfg(unix)]
fn same_meta(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_meta(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// An io::Error without the temporary file's path that `tempfile` adds to its message ("… at
/// path \"…\""): the callers name the file they were asked to write, not ours.
fn plain(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    let text = e.to_string();
    match text.rfind(" at path ") {
        Some(i) => std::io::Error::new(e.kind(), &text[..i]),
        None => e,
    }
}

/// A new temporary file in `dir`, created with mode 0666 less the umask.
fn temp_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(TEMP_PREFIX).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
}

/// A temporary file, locked, still linked at its path, and listed as in flight.
fn locked_temp_in(dir: &Path) -> std::io::Result<(tempfile::NamedTempFile, InFlight)> {
    for _ in 0..16 {
        let tmp = temp_in(dir)?;
        tmp.as_file().lock()?;
        // Another process's remove_stale may have taken the lock and removed the file between
        // its creation and our lock: then the path is gone or another file's.
        if same_file(tmp.as_file(), tmp.path()) {
            in_flight().push(tmp.path().to_path_buf());
            let guard = InFlight(tmp.path().to_path_buf());
            return Ok((tmp, guard));
        }
    }
    Err(std::io::Error::other(
        "temporary files keep disappearing (another process removes them)",
    ))
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => same_meta(&a, &b),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.exists()
}

/// Takes a temporary file off the in-flight list when its write ends, however it ends.
struct InFlight(PathBuf);

impl Drop for InFlight {
    fn drop(&mut self) {
        in_flight().retain(|p| p != &self.0);
    }
}

/// Writes the file `path` by `write`, atomically: into a temporary file beside it, then fsync,
/// rename and fsync of its directory. A failure, or Ctrl-C or SIGTERM in a program that calls
/// [`remove_in_flight`] on them, leaves the old file at `path` or none, never a part of the
/// new one; stale temporary files in its directory are removed first. `write` gets a buffered
/// writer that is `Send`, as some encoders (Parquet's) require.
pub fn write_file<T>(
    path: &Path,
    write: impl FnOnce(&mut (dyn Write + Send)) -> Result<T>,
) -> Result<T> {
    write_atomically(parent_dir(path), path, || {}, write)
}

/// [`write_file`] for a secret: the file is readable and writable by its owner only (mode
/// 0600 on Unix) from its first byte, whatever the file it replaces allowed.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(
        parent_dir(path),
        path,
        Mode::Private,
        || {},
        || {},
        |w| w.write_all(bytes).map_err(|e| Error::io(path, e)),
    )
}

/// The permissions a written file gets.
#[derive(Clone, Copy)]
enum Mode {
    /// Those of the file it replaces; a new file's are 0666 less the umask.
    Keep,
    /// 0600: the owner's only.
    Private,
}

/// Writes `path` by `write` into a temporary file `.pocketdex-*.pdx.tmp` in `dir`, then fsync,
/// `before_rename()` (the crash tests' hook), rename, and fsync of `dir`: a failure or crash
/// leaves the old file or the new one at `path`, never a part of one. Stale temporary files in
/// `dir` are removed first (see the module's documentation).
/// A file it replaces keeps its permissions (`sign` of a 0600 index leaves it 0600).
pub(crate) fn write_atomically<T>(
    dir: &Path,
    path: &Path,
    before_rename: impl FnOnce(),
    write: impl FnOnce(&mut (dyn Write + Send)) -> Result<T>,
) -> Result<T> {
    write_with(dir, path, Mode::Keep, before_rename, || {}, write)
}

/// [`write_atomically`] of a change that is committed once `path` is renamed into place (an
/// index set's manifest): `commit` is noted ([`note_committed`]) in the same step as the
/// rename, with the list of temporary files held, so that a signal handler either finds the
/// file unrenamed (and removes it) or the change noted, never renamed yet unnoted.
pub(crate) fn write_committing<T>(
    dir: &Path,
    path: &Path,
    before_rename: impl FnOnce(),
    commit: Option<String>,
    write: impl FnOnce(&mut (dyn Write + Send)) -> Result<T>,
) -> Result<T> {
    let noted = move || {
        if let Some(what) = commit {
            note_committed(what);
        }
    };
    write_with(dir, path, Mode::Keep, before_rename, noted, write)
}

fn write_with<T>(
    dir: &Path,
    path: &Path,
    mode: Mode,
    before_rename: impl FnOnce(),
    renamed: impl FnOnce(),
    write: impl FnOnce(&mut (dyn Write + Send)) -> Result<T>,
) -> Result<T> {
    check_replaceable(path)?;
    remove_stale(dir);
    // Declared in this order so that the guard drops first: a file is off the list before it
    // is removed, and a signal handler never removes a path another file took since.
    let (mut tmp, guard) = locked_temp_in(dir).map_err(|e| Error::io(path, plain(e)))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Before the first byte: a secret is never readable by others, not even for a moment.
        let bits = match mode {
            Mode::Private => Some(0o600),
            Mode::Keep => std::fs::symlink_metadata(path)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.permissions().mode() & 0o7777),
        };
        if let Some(bits) = bits {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(bits))
                .map_err(|e| Error::io(path, e))?;
        }
    }
    #[cfg(not(unix))]
    let _ = mode;
    let out = {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        // A write that fails (a full disk) names the file it was writing.
        let out = write(&mut w).map_err(|e| match e {
            Error::Io { path: None, source } => Error::io(path, source),
            other => other,
        })?;
        w.flush().map_err(|e| Error::io(path, e))?;
        out
    };
    stall_for_tests();
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    before_rename();
    {
        // Renamed with the list held: a signal handler removes the file before or finds it
        // renamed, never renames it itself after removing.
        let _list = in_flight();
        tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
        renamed();
    }
    drop(guard);
    if let Ok(d) = File::open(dir) {
        // Makes the rename itself durable; not every platform can fsync a directory.
        let _ = d.sync_all();
    }
    Ok(out)
}

/// The interruption tests' hook: `POCKETDEX_STALL_WRITE_MS=N` waits N ms once the temporary
/// file is written, before it is renamed, so that a test can signal a write in progress at a
/// known moment.
fn stall_for_tests() {
    if let Some(ms) = std::env::var("POCKETDEX_STALL_WRITE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_files_go_and_locked_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(".pocketdex-dead.pdx.tmp");
        std::fs::write(&stale, b"left by a killed build").unwrap();
        let live = dir.path().join(".pocketdex-live.pdx.tmp");
        let held = File::create(&live).unwrap();
        held.lock().unwrap();
        let other = dir.path().join("keep.tmp");
        std::fs::write(&other, b"not ours").unwrap();
        assert_eq!(remove_stale(dir.path()), 1);
        assert!(!stale.exists() && live.exists() && other.exists());
        drop(held);
        assert_eq!(remove_stale(dir.path()), 1);
        assert!(!live.exists());
    }

    #[test]
    fn a_write_leaves_only_its_file_and_a_failed_one_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.pdx");
        write_atomically(dir.path(), &path, || {}, |w| Ok(w.write_all(b"abc")?)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
        let failed: Result<()> = write_atomically(
            dir.path(),
            &dir.path().join("y.pdx"),
            || {},
            |_| Err(Error::Invalid("no".into())),
        );
        assert!(failed.is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.pdx"]);
        assert!(!in_flight().iter().any(|p| p.starts_with(dir.path())));
    }

    #[test]
    fn unwritable_targets_are_named_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_writable(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = check_writable(&dir.path().join("no/such/x.pdx"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        // A name with a trailing slash names a directory, made or not; no name is no file.
        let e = check_writable(&dir.path().join("new/"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ends in a slash") && e.contains("new/index.pdx"),
            "{e}"
        );
        let e = check_writable(Path::new("")).unwrap_err().to_string();
        assert!(e.contains("the output path is empty"), "{e}");
        check_writable(&dir.path().join("x.pdx")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A link, a device or a pipe at the output is refused, by the check before the work and
    /// by the write itself, and is left as it was; a file is replaced.
    #[cfg(unix)]
    #[test]
    fn only_files_are_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.pdx");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.pdx");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = check_writable(&link).unwrap_err().to_string();
        assert!(
            e.contains("is a symbolic link") && e.contains("real.pdx"),
            "{e}"
        );
        // A file where the output's directory should be is named as such.
        let e = check_writable(&target.join("x.pdx"))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("real.pdx is a file, not a directory"), "{e}");
        let e = write_file(&link, |w| Ok(w.write_all(b"new")?))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        let fifo = dir.path().join("fifo.pdx");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = check_writable(&fifo).unwrap_err().to_string();
        assert!(e.contains("not a regular file (a named pipe)"), "{e}");
        assert!(write_file(&fifo, |w| Ok(w.write_all(b"new")?)).is_err());
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        let e = check_writable(Path::new("/dev/null"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a character device"), "{e}");
        let e = check_writable(Path::new("-")).unwrap_err().to_string();
        assert!(e.contains("(standard output) is not supported here"), "{e}");
        write_file(&target, |w| Ok(w.write_all(b"new")?)).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn an_input_is_not_an_output() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("doc.txt");
        std::fs::write(&doc, b"a document").unwrap();
        let other = dir.path().join("other.txt");
        std::fs::write(&other, b"another").unwrap();
        // The same file by another name.
        let alias = dir.path().join(".").join("doc.txt");
        let e = check_not_input(&alias, &[other.clone(), doc.clone()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is also an input"), "{e}");
        check_not_input(&other, std::slice::from_ref(&doc)).unwrap();
        check_not_input(&dir.path().join("new.pdx"), std::slice::from_ref(&doc)).unwrap();
        // A file below an input directory, by a relative name through `..`: refused, but for
        // a new file and an index, which every reader skips.
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let inner = sub.join("rows.jsonl");
        std::fs::write(&inner, b"{\"id\": \"a\", \"text\": \"b\"}\n").unwrap();
        let round = sub.join("..").join("sub").join("rows.jsonl");
        let e = check_not_input(&round, std::slice::from_ref(&dir.path().to_path_buf()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("below the input directory"), "{e}");
        check_not_input(&inner, std::slice::from_ref(&doc)).unwrap();
        check_not_input(&sub.join("new.jsonl"), std::slice::from_ref(&sub)).unwrap();
        let index = sub.join("old.pdx");
        let mut bytes = crate::format::MAGIC.to_vec();
        bytes.extend_from_slice(b"rest of an index");
        std::fs::write(&index, bytes).unwrap();
        check_not_input(&index, std::slice::from_ref(&sub)).unwrap();
    }
}
