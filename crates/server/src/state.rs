//! The index the server answers from: opened once, shared by every request, and swapped for a
//! new snapshot when the file (or the set's manifest) on disk is replaced.

use arc_swap::ArcSwap;
use memmap2::Mmap;
use pocketdex::{Index, IndexSet};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// A check run on every snapshot before it is served (the CLI's `--public-key`).
pub type Trust = Box<dyn Fn(&IndexSet<Mmap>) -> Result<(), String> + Send + Sync>;

/// What identifies one version of the index on disk: a replaced file (renamed over, as
/// pocketdex's writers do) has a new inode or modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let m = std::fs::metadata(path)?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let inode = 0;
    Ok(Stamp {
        len: m.len(),
        modified: m.modified().ok(),
        inode,
    })
}

/// One opened version of the index and what `/v1/info` says of it.
pub struct Snapshot {
    /// The index (a file is a set of one part).
    pub set: IndexSet<Mmap>,
    /// `pocketdex info --json` of it.
    pub info: Value,
    /// Live documents.
    pub documents: u64,
    stamp: Stamp,
}

/// The index behind the server.
pub struct Served {
    /// The file or set directory given.
    pub path: PathBuf,
    /// True for an index set.
    pub is_set: bool,
    current: ArcSwap<Snapshot>,
    trust: Option<Trust>,
    /// Snapshots swapped in since start.
    pub reloads: AtomicU64,
    /// The last reload error, printed once.
    last_error: Mutex<Option<String>>,
    /// Held while reloading.
    reloading: Mutex<()>,
}

/// The file whose replacement means a new version: the file, or a set's manifest.
fn watched(path: &Path, is_set: bool) -> PathBuf {
    if is_set {
        path.join(pocketdex::MANIFEST)
    } else {
        path.to_path_buf()
    }
}

fn open(path: &Path, is_set: bool, trust: Option<&Trust>) -> Result<Snapshot, String> {
    // The stamp is taken first: a replacement racing the open is seen at the next poll.
    let stamp = stamp(&watched(path, is_set)).map_err(|e| format!("{}: {e}", path.display()))?;
    let label = path.display().to_string();
    let (set, info) = if is_set {
        let set = IndexSet::open(path).map_err(|e| format!("{label}: {e}"))?;
        let schema_path = path.join(pocketdex::SCHEMA);
        let schema = IndexSet::open_files(std::slice::from_ref(&schema_path))
            .map_err(|e| format!("{label}: {e}"))?;
        let schema: &Index<Mmap> = &schema.parts()[0].index;
        let info = pocketdex::info::set_info(&label, &set, schema);
        (set, info)
    } else {
        let set = IndexSet::open_files(std::slice::from_ref(&path.to_path_buf()))
            .map_err(|e| e.to_string())?;
        let mut info = pocketdex::info::file_info(&label, &set.parts()[0].index)
            .map_err(|e| format!("{label}: {e}"))?;
        // As `info --json` says it: served with --public-key, a file is signed by that key
        // (checked below) or not served.
        info["signature_checked"] = trust.is_some().into();
        (set, info)
    };
    if let Some(check) = trust {
        check(&set)?;
    }
    Ok(Snapshot {
        documents: set.live_docs(),
        set,
        info,
        stamp,
    })
}

/// `new` once every byte it has that `old` had not is checked ([`pocketdex::Index::verify`]):
/// a replaced file whole, a set's new segments (the others are the same immutable files). A
/// damaged replacement is then refused and the old version kept, where opening alone (which
/// checks blocks as they are first read) would have swapped it in and failed every query.
fn verify_new(old: &Snapshot, new: Snapshot, is_set: bool) -> Result<Snapshot, String> {
    for p in new.set.parts() {
        let seen = is_set && old.set.parts().iter().any(|o| o.file == p.file);
        if !seen {
            p.index.verify().map_err(|e| format!("{}: {e}", p.file))?;
        }
    }
    Ok(new)
}

impl Served {
    /// Opens the index at `path` (a file or a set), refusing it when `trust` does.
    pub fn open(path: &Path, trust: Option<Trust>) -> Result<Served, String> {
        let is_set = path.is_dir();
        if is_set && !pocketdex::is_set(path) {
            return Err(format!(
                "{} is a directory but not an index set (it has no {}); pass an index file, or a set made by `pocketdex add`",
                path.display(),
                pocketdex::MANIFEST
            ));
        }
        let first = open(path, is_set, trust.as_ref())?;
        // Every byte, as a replacement's: a damaged part that opening does not read (names,
        // postings) would otherwise be served, fail every query that touches it with a 500,
        // and leave /healthz saying "ok".
        first.set.verify().map_err(|e| {
            // A file's error names it already; a set's names the segment, under the set.
            let (e, label) = (e.to_string(), path.display().to_string());
            if e.starts_with(&label) {
                e
            } else {
                format!("{label}: {e}")
            }
        })?;
        Ok(Served {
            path: path.to_path_buf(),
            is_set,
            current: ArcSwap::from_pointee(first),
            trust,
            reloads: AtomicU64::new(0),
            last_error: Mutex::new(None),
            reloading: Mutex::new(()),
        })
    }

    /// The snapshot to answer a request from; it stays valid however long the request takes.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Swaps in the index on disk when it was replaced since the snapshot was opened. A version
    /// that cannot be opened (being copied, damaged, not signed) is reported once and the old
    /// snapshot kept. Blocking: call it off the async threads.
    pub fn reload_if_changed(&self) -> bool {
        self.reload(true)
    }

    /// [`Served::reload_if_changed`] after this process changed the set itself (`/v1/check`
    /// adding): its new segments are not checked byte by byte again, which for a merge that
    /// rewrote most of the set would hold up every add for a full verify.
    pub fn reload_after_own_change(&self) -> bool {
        self.reload(false)
    }

    fn reload(&self, verify: bool) -> bool {
        // One reload at a time: two (the watcher's and a writer's) racing could store the
        // older snapshot last.
        let _one = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(now) = stamp(&watched(&self.path, self.is_set)) else {
            // Gone (or for a moment, replaced by delete-then-create): keep serving the old one,
            // and say so.
            self.note_error(format!(
                "{} is gone (removed or moved away)",
                watched(&self.path, self.is_set).display()
            ));
            return false;
        };
        if now == self.current.load().stamp {
            // What is served is on disk (again: a file moved away and back).
            *self.last_error.lock().expect("not poisoned") = None;
            return false;
        }
        let old = self.current.load_full();
        let opened = open(&self.path, self.is_set, self.trust.as_ref()).and_then(|s| {
            if verify {
                verify_new(&old, s, self.is_set)
            } else {
                Ok(s)
            }
        });
        match opened {
            Ok(s) => {
                let docs = s.documents;
                self.current.store(Arc::new(s));
                self.reloads.fetch_add(1, Ordering::Relaxed);
                *self.last_error.lock().expect("not poisoned") = None;
                eprintln!(
                    "pocketdex: {} changed on disk; now serving it ({docs} documents)",
                    self.path.display()
                );
                true
            }
            Err(e) => {
                self.note_error(format!("it changed on disk but cannot be opened: {e}"));
                false
            }
        }
    }

    /// Records (and says once) why what is on disk is not served.
    fn note_error(&self, e: String) {
        let mut last = self.last_error.lock().expect("not poisoned");
        if last.as_deref() != Some(&e) {
            eprintln!(
                "pocketdex: {}: {e}; still serving the previous version",
                self.path.display()
            );
            *last = Some(e);
        }
    }

    /// Why the index on disk is not what is served, while it is not (for `/healthz`).
    pub fn reload_error(&self) -> Option<String> {
        self.last_error.lock().expect("not poisoned").clone()
    }
}
