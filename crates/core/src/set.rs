//! Index sets: a directory of immutable segment files (the index format with its set sections)
//! and a manifest naming the live segments and the deleted documents, changed by one writer at a
//! time and read as snapshots; and several index files queried as one.
//!
//! A writer never changes a file in place. It writes a new segment (temporary file, fsync,
//! rename), then replaces the manifest the same way; a reader that opened the old manifest keeps
//! its segments mapped. A crash at any step leaves the old manifest or the new one, and the next
//! writer removes whatever no manifest names (`index-format.md` §15).

use crate::atomic::{parent_dir, write_atomically};
use crate::builder::{IndexBuilder, Parts, StringList};
use crate::error::{Error, Result};
use crate::fingerprint::sealed::Analysed;
use crate::fingerprint::{Code, Fingerprint, Query};
use crate::hash;
use crate::index::{Index, Keys};
use crate::query::{order_hits, Hit, QueryOptions};
use crate::BuildStats;
use memmap2::Mmap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The manifest's file name in a set's directory: what makes a directory an index set.
pub const MANIFEST: &str = "pocketdex-set.json";
/// The zero-document index whose parameters, classes, stopwords, idf table and resolution every
/// segment of the set shares.
pub const SCHEMA: &str = "schema.pdx";
/// The file a writer locks.
const LOCK: &str = ".lock";
/// The manifest format this build writes and reads.
const MANIFEST_VERSION: u32 = 1;
/// A merge joins the two newest segments while the older holds at most this many times the
/// newer's live documents: segments then grow geometrically from newest to oldest, so `n` adds
/// leave about log₂ n of them, and each document is rewritten about log₂ n times.
const MERGE_RATIO: u64 = 2;

/// The index file whose parameters and idf table `path` names: an index set's schema, or the
/// file itself (`--idf`, `idf=`: a table copied from a file or from the set being joined).
pub fn index_file_of(path: &Path) -> PathBuf {
    if is_set(path) {
        path.join(SCHEMA)
    } else {
        path.to_path_buf()
    }
}

/// What mends a set whose schema is damaged or missing.
const SCHEMA_MENDS: &str = "in an index set, restore it from a copy of the set's directory, \
                            or `pocketdex repair SET` writes it again from a sound segment";

/// What mends a set whose segment is damaged or missing.
const MENDS: &str = "in an index set, restore the segment from a copy of the set's directory, \
                     or `pocketdex repair SET` drops it and lists its documents' ids";

/// The error for a `path` that a command changing or exporting an index set was given but that
/// is no set, saying what it is instead and what to do.
pub fn not_a_set(path: &Path) -> Error {
    let p = path.display();
    Error::Invalid(if path.is_file() && crate::is_index_file(path) {
        format!(
            "{p} is an index file, which never changes; keep documents that change in an index set (a directory): `pocketdex add SET DOC...`, then `pocketdex merge SET -o FILE.pdx` to ship one file"
        )
    } else if path.is_dir() {
        format!(
            "{p} is a directory but not an index set (it has no {MANIFEST}); create a set with `pocketdex add SET DOC...`"
        )
    } else if path.exists() {
        format!("{p} is not an index set (a directory made by `pocketdex add`)")
    } else {
        return Error::at_path(
            path,
            std::io::ErrorKind::NotFound,
            format!("{p} does not exist; create an index set with `pocketdex add {p} DOC...`"),
        );
    })
}

/// The options a writer was given for a new set, which fix it for its life: an existing set
/// must agree with each one given (a script that always passes them works; other values are
/// refused, not ignored). Shared by every front end that creates sets.
#[derive(Clone, Debug, Default)]
pub struct NewSetOptions {
    /// `--lang`.
    pub lang: Option<crate::Lang>,
    /// `--expected-docs`.
    pub expected_docs: Option<u64>,
    /// `--idf`.
    pub idf: Option<GivenIdf>,
}

/// An idf table given for a new set (`--idf`).
#[derive(Clone, Debug)]
pub enum GivenIdf {
    /// The set's language's built-in table.
    Language,
    /// Another table: how it was given (a file's path, `collection`), and its id
    /// ([`crate::sketch::Idf::id`]; `None`: no table, which no set has).
    Table {
        /// How it was given, for messages.
        named: String,
        /// Its id.
        id: Option<u64>,
    },
}

impl GivenIdf {
    /// `--idf collection`: a table learned from the documents that come first, which no set
    /// has.
    pub fn collection() -> GivenIdf {
        GivenIdf::Table {
            named: "collection".into(),
            id: None,
        }
    }

    /// The table of `index`, given as the index file `file`.
    pub fn of_index<D: AsRef<[u8]>>(file: &Path, index: &Index<D>) -> GivenIdf {
        GivenIdf::Table {
            named: file.display().to_string(),
            id: index.fingerprinter().idf().map(|i| i.id()),
        }
    }
}

impl NewSetOptions {
    /// Refuses options that disagree with the set at `path`, whose schema is `schema`.
    pub fn agree_with(&self, path: &Path, schema: &Index<Mmap>) -> Result<()> {
        let meta = schema.meta();
        if let Some(lang) = self.lang.filter(|l| l.code() != meta.lang) {
            return Err(Error::Invalid(format!(
                "{} holds documents in language {}, not {}; --lang applies when a set is created",
                path.display(),
                meta.lang,
                lang.code()
            )));
        }
        if let Some(idf) = &self.idf {
            let (named, given) = match idf {
                GivenIdf::Language => (
                    "language",
                    crate::Lang::ALL
                        .into_iter()
                        .find(|l| l.code() == meta.lang)
                        .map(|l| crate::sketch::Idf::builtin(l).id()),
                ),
                GivenIdf::Table { named, id } => (named.as_str(), *id),
            };
            if given.is_none() || given != schema.fingerprinter().idf().map(|i| i.id()) {
                return Err(Error::Invalid(format!(
                    "{} has another idf table than --idf {named}; --idf applies when a set is created",
                    path.display()
                )));
            }
        }
        if let Some(n) = self.expected_docs {
            if crate::fingerprint::Resolution::for_docs(n) != schema.resolution() {
                return Err(Error::Invalid(format!(
                    "{} was created for another size (its codes' resolution is fixed); --expected-docs applies when a set is created",
                    path.display()
                )));
            }
        }
        Ok(())
    }
}

/// True when `path` is an index set (a directory with a manifest).
pub fn is_set(path: &Path) -> bool {
    path.join(MANIFEST).is_file()
}

/// The manifest: the live segments, in order, with their deleted documents.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Manifest {
    /// Always "pocketdex-set".
    format: String,
    version: u32,
    /// Increases with every change.
    generation: u64,
    /// The number of the next segment file.
    next_segment: u64,
    segments: Vec<SegmentEntry>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct SegmentEntry {
    /// File name in the set's directory.
    file: String,
    /// Documents in the file (deleted ones included).
    docs: u32,
    /// The file's whole-file checksum (its trailer), in hex: the file named is the file meant.
    checksum: String,
    /// Deleted documents of the file, ascending.
    deleted: Vec<u32>,
}

/// The manifest file: the manifest and a checksum of its JSON, so that a damaged manifest is
/// refused rather than read.
#[derive(serde::Serialize, serde::Deserialize)]
struct ManifestFile {
    manifest: Manifest,
    checksum: String,
}

impl Manifest {
    fn empty() -> Manifest {
        Manifest {
            format: "pocketdex-set".into(),
            version: MANIFEST_VERSION,
            generation: 0,
            next_segment: 1,
            segments: Vec::new(),
        }
    }

    fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        let raw = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let bad = |what: String| Error::format(format!("{}: {what}", path.display()));
        let file: ManifestFile =
            serde_json::from_slice(&raw).map_err(|e| bad(format!("not a manifest ({e})")))?;
        let m = file.manifest;
        if m.format != "pocketdex-set" {
            return Err(bad("not a pocketdex set manifest".into()));
        }
        if m.version != MANIFEST_VERSION {
            return Err(bad(format!(
                "manifest version {} is not supported (this pocketdex reads version {MANIFEST_VERSION})",
                m.version
            )));
        }
        if file.checksum != hex(m.checksum()) {
            return Err(bad("checksum mismatch".into()));
        }
        let mut files = std::collections::HashSet::new();
        for s in &m.segments {
            let plain = !s.file.contains(['/', '\\']) && s.file.ends_with(".pdx");
            let ascending = s.deleted.windows(2).all(|w| w[0] < w[1]);
            if !plain || !ascending || s.deleted.last().is_some_and(|&d| d >= s.docs) {
                return Err(bad(format!("segment entry {} is inconsistent", s.file)));
            }
            // Named twice, every document would answer twice.
            if !files.insert(s.file.as_str()) {
                return Err(bad(format!("segment {} is listed twice", s.file)));
            }
        }
        Ok(m)
    }

    fn checksum(&self) -> u64 {
        let json = serde_json::to_vec(self).expect("a manifest serializes");
        hash::checksum(&json)
    }

    /// Writes the manifest atomically (temporary file, fsync, rename, fsync of the directory).
    /// Writes the manifest into `dir`; `commit`, what the change was, is noted for a signal
    /// handler in the same step as the rename ([`crate::atomic::write_committing`]).
    fn write(&self, dir: &Path, commit: Option<String>) -> Result<()> {
        let file = ManifestFile {
            manifest: self.clone(),
            checksum: hex(self.checksum()),
        };
        let mut json = serde_json::to_vec_pretty(&file).expect("a manifest serializes");
        json.push(b'\n');
        crate::atomic::write_committing(
            dir,
            &dir.join(MANIFEST),
            || Step::ManifestWritten.reached(),
            commit,
            |out| {
                out.write_all(&json)?;
                Ok(())
            },
        )
    }

    /// The number of the next segment file: `next_segment`, or past every segment named if
    /// it is not (a damaged or hand-edited manifest must not have a writer replace a segment).
    fn next_number(&self) -> u64 {
        self.segments
            .iter()
            .filter_map(|s| segment_number(&s.file))
            .map(|n| n + 1)
            .fold(self.next_segment, u64::max)
    }

    fn live_docs(&self) -> u64 {
        self.segments
            .iter()
            .map(|s| (s.docs - s.deleted.len() as u32) as u64)
            .sum()
    }
}

fn hex(v: u64) -> String {
    format!("{v:016x}")
}

/// The steps of a change at which the crash tests stop the process (`POCKETDEX_CRASH_AT`), and
/// the interruption tests stall it (`POCKETDEX_STALL_AT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// A new file is written and synced under its temporary name.
    SegmentWritten,
    /// The new segment has its final name; the manifest does not name it yet.
    SegmentRenamed,
    /// The new manifest is written and synced under its temporary name.
    ManifestWritten,
    /// The new manifest is in place; files it no longer names are not yet removed.
    Committed,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::SegmentWritten => "segment-written",
            Step::SegmentRenamed => "segment-renamed",
            Step::ManifestWritten => "manifest-written",
            Step::Committed => "committed",
        }
    }

    /// Ends the process abruptly (as `kill -9` would: no destructor, no cleanup) when the
    /// environment variable `POCKETDEX_CRASH_AT` names this step: the crash-safety tests' hook.
    fn reached(self) {
        if std::env::var_os("POCKETDEX_CRASH_AT").is_some_and(|v| v == self.name()) {
            std::process::abort();
        }
        // The interruption tests' hook: a minute's stall here, for a signal to come.
        if std::env::var_os("POCKETDEX_STALL_AT").is_some_and(|v| v == self.name()) {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    }
}

/// Writes `path` atomically ([`write_atomically`]), stopping at `step` for the crash tests.
fn write_step<T>(
    dir: &Path,
    path: &Path,
    step: Step,
    write: impl FnOnce(&mut dyn Write) -> Result<T>,
) -> Result<T> {
    write_atomically(dir, path, || step.reached(), |out| write(out))
}

/// Maps and opens an index file; with `like`, sharing its fingerprinter when they have the same
/// parameters, classes and idf table ([`Index::open_like`]), as a set's files do.
fn map(path: &Path, like: Option<&Index<Mmap>>) -> Result<Index<Mmap>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    // Mapping a directory fails with "No such device", which says nothing useful.
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Error::Invalid(format!(
            "{} is a directory where an index file belongs; restore the file from a good copy",
            path.display()
        )));
    }
    // SAFETY: segment files are never changed in place (writers create new files and rename
    // them); `verify` checks every byte for those who need it.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
    // Lookups read a few scattered bytes: read-ahead would page in what they never use. What
    // `open` reads whole is faulted in at once instead (see `Index::open_reads`).
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Random);
    #[cfg(target_os = "linux")]
    for r in Index::<&[u8]>::open_reads(&map) {
        // Best effort: a kernel older than 5.14 refuses it, and `open` faults them in itself.
        let _ = map.advise_range(memmap2::Advice::PopulateRead, r.start, r.len());
    }
    match like {
        Some(like) => Index::open_like(map, like),
        None => Index::open(map),
    }
    .map_err(|e| in_file(path, e))
}

/// The error of a part's file without the file's name ([`Part::verify`] names it by its name
/// in the set), for a message that names it otherwise.
fn without_file(e: Error) -> Error {
    match e {
        Error::InFile { error, .. } => *error,
        e => e,
    }
}

/// An error about a file, with its path in the message.
fn in_file(path: &Path, e: Error) -> Error {
    match e {
        Error::Io { path: None, source } => Error::io(path, source),
        Error::Io { .. } | Error::InFile { .. } => e,
        other => Error::InFile {
            file: path.display().to_string(),
            error: Box::new(other),
            advice: None,
        },
    }
}

/// The segment at `path`, mapped, if it is the one manifest `entry` names (its checksum and
/// size; what opening a set checks).
fn named_segment(
    path: &Path,
    entry: &SegmentEntry,
    like: Option<&Index<Mmap>>,
) -> Result<Index<Mmap>> {
    let index = map(path, like)?;
    if !index.is_segment()
        || hex(trailer_checksum(&index)) != entry.checksum
        || index.doc_count() != entry.docs
    {
        return Err(Error::format(format!(
            "{}: not the segment the manifest names (other checksum or size)",
            path.display()
        )));
    }
    Ok(index)
}

/// [`named_segment`] as a part of the set, sound in every byte ([`Part::verify`]); otherwise
/// what is wrong with it.
fn sound_segment(
    path: &Path,
    entry: &SegmentEntry,
    like: Option<&Index<Mmap>>,
) -> Result<Part<Mmap>> {
    let part = Part {
        file: entry.file.clone(),
        index: named_segment(path, entry, like)?,
        deleted: entry.deleted.clone(),
    };
    part.verify()?;
    Ok(part)
}

/// Refuses to drop a file for an error that says nothing of its bytes: one that cannot be read
/// for its permissions (or any I/O error but a missing file), or one written by a newer
/// pocketdex, is a sound file this process cannot read, and the user can mend that.
fn refuse_unless_damaged(e: &Error) -> Result<()> {
    let why = match e.kind() {
        Error::Io { source, .. } if source.kind() != std::io::ErrorKind::NotFound => {
            "it cannot be read, which says nothing of its bytes: make it readable (its permissions, the disk), then run repair again"
        }
        Error::Version { got, expected } if got > expected => {
            "it was written by a newer pocketdex: repair the set with that version"
        }
        _ => return Ok(()),
    };
    Err(Error::Invalid(format!(
        "{e}; repair drops only damaged or missing files, and changed nothing: {why}"
    )))
}

/// `e`, met in the file at `path`, naming it and what mends it; I/O errors stay as they are
/// (a segment a merge removed meanwhile is `NotFound`, and [`IndexSet::open`] then reads the
/// new manifest).
fn advised(path: &Path, e: Error, advice: &'static str) -> Error {
    match in_file(path, e) {
        Error::InFile { file, error, .. } => Error::InFile {
            file,
            error,
            advice: Some(advice),
        },
        other => other,
    }
}

/// Refuses a schema (at `path`) that is not the one `parts` were built from: one copied from
/// another set would make new segments, and exports, answer otherwise.
fn same_schema<D: AsRef<[u8]>>(path: &Path, schema: &Index<Mmap>, parts: &[Part<D>]) -> Result<()> {
    match parts
        .iter()
        .find(|p| p.index.schema_key() != schema.schema_key())
    {
        Some(p) => Err(Error::Invalid(format!(
            "{}: other parameters, stopwords, idf table or resolution than segment {}: not this \
             set's schema; restore the set's own {SCHEMA} from a copy",
            path.display(),
            p.file
        ))),
        None => Ok(()),
    }
}

/// The file name of segment number `n`.
fn segment_file(n: u64) -> String {
    format!("seg-{n:08}.pdx")
}

/// The number of a segment file name that [`segment_file`] makes.
fn segment_number(file: &str) -> Option<u64> {
    let digits = file.strip_prefix("seg-")?.strip_suffix(".pdx")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The checksum in an index file's trailer.
fn trailer_checksum(index: &Index<Mmap>) -> u64 {
    let b: &[u8] = index.bytes();
    u64::from_le_bytes(b[b.len() - 16..b.len() - 8].try_into().expect("8 bytes"))
}

/// One index of a set: a segment, or one of several files queried together.
pub struct Part<D> {
    /// The file's name (a segment's name in the set's directory, or the path given).
    pub file: String,
    /// The index.
    pub index: Index<D>,
    /// Its deleted documents, ascending.
    deleted: Vec<u32>,
}

impl<D: AsRef<[u8]>> Part<D> {
    /// Checks every byte of the part's index ([`Index::verify`]) and that every deleted
    /// document exists; an error names the part's file.
    fn verify(&self) -> Result<()> {
        self.index.verify().map_err(|e| Error::InFile {
            file: self.file.clone(),
            error: Box::new(e),
            advice: None,
        })?;
        if self
            .deleted
            .last()
            .is_some_and(|&d| d >= self.index.doc_count())
        {
            return Err(Error::InFile {
                file: self.file.clone(),
                error: Box::new(Error::format("a deleted document is out of range")),
                advice: None,
            });
        }
        Ok(())
    }

    /// True when document `doc` of this part was deleted.
    pub fn is_deleted(&self, doc: u32) -> bool {
        self.deleted.binary_search(&doc).is_ok()
    }

    /// Documents not deleted.
    pub fn live_docs(&self) -> u64 {
        self.index.doc_count() as u64 - self.deleted.len() as u64
    }
}

/// A hit of a set query: which part, and the hit in it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SetHit {
    /// The part (segment or file) the document is in, in set order.
    pub part: usize,
    /// The hit, with the document's number in its part.
    pub hit: Hit,
}

/// The answer to a query of a set.
#[derive(Clone, Debug, Default)]
pub struct SetQueryResult {
    /// Index terms in the query, as the first part counts them (parts of other schemas may
    /// count others).
    pub terms: u32,
    /// Codes looked up in each part (summed over parts of different parameters).
    pub lookups: usize,
    /// Distinct live documents the codes found before ranking.
    pub candidates: usize,
    /// Hits, best first: by score, then collided groups, the query's own document, then set
    /// order (part, then document number), which is the order of a single index of the same
    /// documents.
    pub hits: Vec<SetHit>,
}

/// Several indexes queried as one: an index set's snapshot, or index files given together.
///
/// When the parts share parameters, classes, stopwords, idf table and resolution (every set
/// does; so do files built with the same language and `--expected-docs` or `--resolution`), a
/// query answers exactly as one index of their live documents would: the same hits, scores and
/// order (but for unknown codes slipping through a 16-bit check, with probability 2⁻¹⁶ per lookup).
pub struct IndexSet<D = Mmap> {
    parts: Vec<Part<D>>,
    /// The set's directory, for a set.
    dir: Option<PathBuf>,
    generation: u64,
    /// The indexes this was opened from, as their names were given (a set's directory, a
    /// file's path), each with its first part: one, unless several were joined.
    sources: Vec<(usize, String)>,
}

impl Index<Mmap> {
    /// Opens the index file at `path`, memory-mapped: what `pocketdex query` does. Only the
    /// header, directory and small sections are read and checked now; each block a query reads
    /// is checked when first read, and [`Index::verify`] checks every byte.
    ///
    /// The file must not be changed in place while it is mapped (truncated, or copied over): a
    /// read of a lost page kills the process with SIGBUS, as with every mapped file. pocketdex's
    /// own writers never do that: they write a new file and rename it into place.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened or mapped; [`Error::Invalid`] for a
    /// directory; what [`Index::open`] returns for bytes that are not a sound index, naming the
    /// file.
    pub fn open_path(path: impl AsRef<Path>) -> Result<Index<Mmap>> {
        map(path.as_ref(), None)
    }
}

impl IndexSet<Mmap> {
    /// Opens an index set's current snapshot: reads the manifest and maps its segments. A
    /// segment removed by a concurrent merge between the two makes it read the new manifest.
    pub fn open(dir: &Path) -> Result<IndexSet<Mmap>> {
        let mut manifest = Manifest::read(dir)?;
        loop {
            match Self::open_manifest(dir, &manifest, None) {
                Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {
                    // Gone because a writer committed a merge meanwhile: read its manifest.
                    // Gone under the same manifest: the set is damaged, say so.
                    let newer = Manifest::read(dir)?;
                    if newer.generation == manifest.generation {
                        return Err(Error::format(format!(
                            "a segment the manifest names is missing ({e}); {MENDS}"
                        )));
                    }
                    manifest = newer;
                }
                other => return other,
            }
        }
    }

    /// The snapshot of manifest `m`; its segments share `like`'s fingerprinter (the schema's)
    /// or the first segment's.
    fn open_manifest(
        dir: &Path,
        m: &Manifest,
        like: Option<&Index<Mmap>>,
    ) -> Result<IndexSet<Mmap>> {
        Self::reopen(dir, m, Vec::new(), like)
    }

    /// The snapshot of manifest `m`, taking the segments of `open` that it still names (a
    /// writer's next snapshot maps only its new segments).
    fn reopen(
        dir: &Path,
        m: &Manifest,
        open: Vec<Part<Mmap>>,
        like: Option<&Index<Mmap>>,
    ) -> Result<IndexSet<Mmap>> {
        let mut open: std::collections::HashMap<String, Index<Mmap>> =
            open.into_iter().map(|p| (p.file, p.index)).collect();
        let mut parts = Vec::with_capacity(m.segments.len());
        for s in &m.segments {
            if let Some(index) = open.remove(&s.file) {
                parts.push(Part {
                    file: s.file.clone(),
                    index,
                    deleted: s.deleted.clone(),
                });
                continue;
            }
            let path = dir.join(&s.file);
            let like = like
                .or(parts.first().map(|p: &Part<Mmap>| &p.index))
                .or(open.values().next());
            let index = named_segment(&path, s, like).map_err(|e| advised(&path, e, MENDS))?;
            parts.push(Part {
                file: s.file.clone(),
                index,
                deleted: s.deleted.clone(),
            });
        }
        Ok(IndexSet {
            parts,
            dir: Some(dir.to_path_buf()),
            generation: m.generation,
            sources: vec![(0, dir.display().to_string())],
        })
    }

    /// Opens index files (each a plain index or a segment) to be queried as one, in the order
    /// given.
    pub fn open_files(paths: &[PathBuf]) -> Result<IndexSet<Mmap>> {
        let mut parts: Vec<(String, Index<Mmap>)> = Vec::with_capacity(paths.len());
        for p in paths {
            // Shards of one collection share their fingerprinter.
            let index = map(p, parts.first().map(|(_, i)| i))?;
            parts.push((p.display().to_string(), index));
        }
        Ok(IndexSet::from_indexes(parts))
    }
}

impl<D: AsRef<[u8]>> IndexSet<D> {
    /// Indexes (with a name each, e.g. their paths) queried as one, in this order.
    pub fn from_indexes(indexes: Vec<(String, Index<D>)>) -> IndexSet<D> {
        let sources = indexes
            .iter()
            .enumerate()
            .map(|(i, (file, _))| (i, file.clone()))
            .collect();
        IndexSet {
            parts: indexes
                .into_iter()
                .map(|(file, index)| Part {
                    file,
                    index,
                    deleted: Vec::new(),
                })
                .collect(),
            dir: None,
            generation: 0,
            sources,
        }
    }

    /// This set and then `other`'s parts, queried as one (no longer one set's snapshot).
    pub fn join(mut self, other: IndexSet<D>) -> IndexSet<D> {
        let first = self.parts.len();
        self.sources
            .extend(other.sources.into_iter().map(|(i, name)| (first + i, name)));
        self.parts.extend(other.parts);
        self.dir = None;
        self.generation = 0;
        self
    }

    /// The parts (segments or files), in set order.
    pub fn parts(&self) -> &[Part<D>] {
        &self.parts
    }

    /// True when every part fingerprints and probes a query alike (the same parameters, idf
    /// table and resolution), so that the set answers as one index of all their documents.
    /// Parts of other schemas are each queried with their own, and their scores come from
    /// different idf tables.
    pub fn answers_as_one(&self) -> bool {
        self.parts
            .windows(2)
            .all(|w| w[0].index.schema_key() == w[1].index.schema_key())
    }

    /// The schema of an index set (the empty index whose parameters every segment shares),
    /// mapped from its directory; `None` for index files opened together.
    ///
    /// # Errors
    /// What opening the schema's file returns (a set whose schema is damaged or missing).
    pub fn schema(&self) -> Result<Option<Index<Mmap>>> {
        match &self.dir {
            Some(dir) => {
                let path = dir.join(SCHEMA);
                map(&path, None)
                    .map(Some)
                    .map_err(|e| advised(&path, e, SCHEMA_MENDS))
            }
            None => Ok(None),
        }
    }

    /// The set's directory, when this is an index set.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The manifest generation of this snapshot (0 for files opened together).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Live (not deleted) documents.
    pub fn live_docs(&self) -> u64 {
        self.parts.iter().map(Part::live_docs).sum()
    }

    /// The index that part `part` came from, as its name was given (a set's directory or a
    /// file's path), when several were opened together: which of them holds a hit.
    pub fn source(&self, part: usize) -> Option<&str> {
        if self.sources.len() < 2 {
            return None;
        }
        let i = self.sources.partition_point(|&(first, _)| first <= part);
        Some(self.sources[i.checked_sub(1)?].1.as_str())
    }

    /// The name of document `doc` of part `part`.
    pub fn name(&self, part: usize, doc: u32) -> Result<Option<std::borrow::Cow<'_, str>>> {
        self.parts.get(part).map_or(Ok(None), |p| {
            p.index.name(doc).map_err(|e| e.in_file(&p.file))
        })
    }

    /// The title of document `doc` of part `part`.
    pub fn title(&self, part: usize, doc: u32) -> Result<Option<std::borrow::Cow<'_, str>>> {
        self.parts.get(part).map_or(Ok(None), |p| {
            p.index.title(doc).map_err(|e| e.in_file(&p.file))
        })
    }

    /// The live document with this id: its part and number.
    pub fn find(&self, id: &str) -> Result<Option<(usize, u32)>> {
        for (i, p) in self.parts.iter().enumerate().rev() {
            let found = p.index.find(id).map_err(|e| e.in_file(&p.file))?;
            if let Some(d) = found.filter(|&d| !p.is_deleted(d)) {
                return Ok(Some((i, d)));
            }
        }
        Ok(None)
    }

    /// Checks every byte of every part ([`Index::verify`]) and that every deleted document
    /// exists; for a set's snapshot also its schema ([`SCHEMA`]), which writers and exports
    /// build from: every byte, and that every segment shares its parameters, idf table and
    /// resolution (a schema copied from another set would make new segments answer otherwise).
    pub fn verify(&self) -> Result<()> {
        if let Some(dir) = &self.dir {
            let path = dir.join(SCHEMA);
            let schema = map(&path, None).map_err(|e| advised(&path, e, SCHEMA_MENDS))?;
            schema
                .verify()
                .map_err(|e| advised(&path, e, SCHEMA_MENDS))?;
            same_schema(&path, &schema, &self.parts)?;
        }
        for p in &self.parts {
            match (&self.dir, p.verify()) {
                (_, Ok(())) => {}
                // A set's segment is named by its path, with what mends a set (`repair`).
                (Some(dir), Err(e)) => {
                    return Err(advised(&dir.join(&p.file), without_file(e), MENDS))
                }
                (None, Err(e)) => return Err(e),
            }
        }
        Ok(())
    }

    /// Finds the live documents that are near copies of `text` in every part.
    ///
    /// # Errors
    /// As [`Index::query`]: when a part of a file the query reads is damaged.
    pub fn query(&self, text: &str, opts: &QueryOptions) -> Result<SetQueryResult> {
        self.query_with(opts, |index| {
            let fp = index.fingerprinter().fingerprint_query(text);
            let sketch = fp.sketch().to_vec();
            (fp.analysis().clone(), sketch)
        })
    }

    /// Finds the live documents that are near copies of a fingerprinted document (see
    /// [`Index::query_fingerprint`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the fingerprint was made with other parameters, classes or
    /// stopwords than a part's; as [`Index::query`] when a part of a file is damaged.
    pub fn query_fingerprint(
        &self,
        fp: &impl Query,
        opts: &QueryOptions,
    ) -> Result<SetQueryResult> {
        let fp = fp.analysis();
        for p in &self.parts {
            if !p.index.fingerprinter().made(fp) {
                return Err(Error::Invalid(format!(
                    "{}: the fingerprint was made with other parameters, classes or stopwords than this index's",
                    p.file
                )));
            }
        }
        self.query_with(opts, |index| {
            let sketch = index.sketch_for(fp);
            (fp.clone(), sketch)
        })
    }

    /// The one set query path: a part fingerprints the query (or reuses the previous part's
    /// fingerprint when they share parameters, idf table and resolution), its live candidates
    /// are scored, and all hits are ordered as one index would order them.
    fn query_with(
        &self,
        opts: &QueryOptions,
        fingerprint: impl Fn(&Index<D>) -> (Fingerprint, Vec<u64>),
    ) -> Result<SetQueryResult> {
        let mut out = SetQueryResult::default();
        let mut hits: Vec<SetHit> = Vec::new();
        let mut last: Option<Asked> = None;
        for (i, p) in self.parts.iter().enumerate() {
            let key = p.index.schema_key();
            if last.as_ref().is_none_or(|l| l.schema != key) {
                let (fp, sketch) = fingerprint(&p.index);
                let probes = p.index.probes(&fp, opts);
                // Parts that share the probes share their lookups' count: a set reports what
                // one index of its documents would.
                out.lookups += probes.len();
                let keys = Keys::of(&probes);
                last = Some(Asked {
                    schema: key,
                    fp,
                    sketch,
                    probes,
                    keys,
                });
            }
            let Asked {
                fp,
                sketch,
                probes,
                keys,
                ..
            } = last.as_ref().expect("set above");
            if i == 0 {
                out.terms = fp.terms;
            }
            let (candidates, found) = p
                .index
                .candidates(probes, keys, sketch, opts.threshold, |d| p.is_deleted(d))
                .map_err(|e| e.in_file(&p.file))?;
            out.candidates += candidates;
            hits.extend(found.into_iter().map(|hit| SetHit { part: i, hit }));
        }
        order_hits(
            &mut hits,
            opts,
            |h| &h.hit,
            |h| self.name(h.part, h.hit.doc),
            |h| (h.part, h.hit.doc),
        )?;
        out.hits = hits;
        Ok(out)
    }
}

/// What the parts of a set that share a schema ([`Index::schema_key`]) share of a query: its
/// fingerprint, sketch, probes and their keys.
struct Asked {
    schema: u64,
    fp: Fingerprint,
    sketch: Vec<u64>,
    probes: Vec<Code>,
    keys: Keys,
}

/// What a change to a set did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Change {
    /// Documents added.
    pub added: u64,
    /// Documents deleted (replaced ones included).
    pub deleted: u64,
    /// Segments merged away by the merge policy or a merge.
    pub merged: u64,
    /// Segments after the change.
    pub segments: u64,
    /// Live documents after the change.
    pub live_docs: u64,
    /// The manifest generation after the change.
    pub generation: u64,
    /// Why the merge policy's merge failed after the change was committed (a full disk): the
    /// change stands and the set is sound, with a segment more than it would have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_failed: Option<String>,
}

/// What [`SetWriter::repair`] found and did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Repair {
    /// Segments dropped from the set: damaged, missing, or not the file the manifest names.
    pub dropped: Vec<DroppedSegment>,
    /// The schema was damaged and is written again from a sound segment (which holds the same
    /// parameters, idf table and resolution): nothing is lost.
    pub schema_rewritten: bool,
    /// The set after the repair (`added` and `deleted` stay 0).
    pub change: Change,
}

/// A segment [`SetWriter::repair`] dropped, and what it held.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DroppedSegment {
    /// Its file name in the set.
    pub file: String,
    /// What was wrong with it.
    pub why: String,
    /// Its live documents: what the set lost.
    pub live_docs: u64,
    /// The ids of those documents that could still be read, in order, to add them again.
    pub ids: Vec<String>,
    /// Live documents whose ids could not be read (a damaged block of names, a missing file).
    pub unread: u64,
    /// Where the damaged file was moved (under the set's `damaged/`), kept for a closer look;
    /// `None` when there was no file.
    pub kept_as: Option<PathBuf>,
}

/// The one writer of an index set: holds the set's lock while it lives.
pub struct SetWriter {
    dir: PathBuf,
    /// Held for the writer's lifetime (an OS lock, released when the file closes, also on a
    /// crash).
    _lock: SetLock,
    manifest: Manifest,
    schema: Index<Mmap>,
    /// The current snapshot, kept in step with the manifest.
    set: IndexSet<Mmap>,
    /// What the next commit does, for a signal handler to say once it is committed
    /// ([`crate::atomic::note_committed`]).
    note: Option<String>,
    /// This writer made the set's directory ([`SetWriter::create`] of a path that did not
    /// exist): [`SetWriter::discard_unused`] removes it, and leaves a directory the user made.
    made_dir: bool,
}

impl SetWriter {
    /// Opens an existing set for writing: takes its lock (waits for it when `wait`, else fails
    /// with [`Error::Busy`]), then removes files a crashed writer left (temporary files, segments
    /// no manifest names).
    pub fn open(dir: &Path, wait: bool) -> Result<SetWriter> {
        if !is_set(dir) {
            return Err(not_a_set(dir));
        }
        let lock = lock(dir, wait)?;
        let manifest = Manifest::read(dir)?;
        let schema = map(&dir.join(SCHEMA), None)?;
        let set = IndexSet::open_manifest(dir, &manifest, Some(&schema))?;
        same_schema(&dir.join(SCHEMA), &schema, &set.parts)?;
        let w = SetWriter {
            dir: dir.to_path_buf(),
            _lock: lock,
            manifest,
            schema,
            set,
            note: None,
            made_dir: false,
        };
        w.collect_garbage();
        Ok(w)
    }

    /// Makes a damaged set sound again, under the set's lock (waits for it when `wait`): every
    /// segment the manifest names is checked alone, every byte ([`Index::verify`]), and one that
    /// is damaged, missing or not the file named is dropped from the set, with the ids of its
    /// live documents that can still be read; its file is moved to the set's `damaged/`
    /// directory. A damaged schema is written again from a sound segment. The set then answers
    /// as one index of the documents left: add the dropped ones again from their sources. A set
    /// with nothing wrong is left as it is. A damaged manifest is not repaired (restore it from
    /// a copy of the set's directory).
    pub fn repair(dir: &Path, wait: bool) -> Result<Repair> {
        if dir.is_file() && crate::is_index_file(dir) {
            return Err(Error::Invalid(format!(
                "{} is one index file, which repair cannot mend: rebuild it or restore a good copy (repair drops the damaged segments of an index set)",
                dir.display()
            )));
        }
        if !is_set(dir) {
            return Err(not_a_set(dir));
        }
        let lock = lock(dir, wait)?;
        let manifest = Manifest::read(dir)?;
        let schema_path = dir.join(SCHEMA);
        let schema = map(&schema_path, None)
            .and_then(|s| s.verify().map_err(|e| in_file(&schema_path, e)).map(|()| s));
        let mut parts = Vec::new();
        let mut dropped = Vec::new();
        if let Err(e) = &schema {
            refuse_unless_damaged(e)?;
        }
        for s in &manifest.segments {
            let path = dir.join(&s.file);
            match sound_segment(&path, s, schema.as_ref().ok()) {
                Ok(part) => parts.push(part),
                Err(why) => {
                    refuse_unless_damaged(&why)?;
                    dropped.push((s, why))
                }
            }
        }
        let mut repair = Repair::default();
        let schema = match schema {
            Ok(schema) => schema,
            Err(e) => {
                let Some(like) = parts.first() else {
                    return Err(Error::Invalid(format!(
                        "{e}; and no segment is sound to write it again from: build the set again from its documents"
                    )));
                };
                write_step(dir, &schema_path, Step::SegmentWritten, |out| {
                    IndexBuilder::like(&like.index).finish(out).map(|_| ())
                })?;
                repair.schema_rewritten = true;
                map(&schema_path, None)?
            }
        };
        // Segments sound alone but of another schema than the rest are not the set's.
        if let Err(e) = same_schema(&schema_path, &schema, &parts) {
            return Err(Error::Invalid(format!(
                "{e}; repair cannot tell which is the set's own"
            )));
        }
        // The ids first, then the file out of the way, then the manifest without it: a crash in
        // between leaves a segment the manifest names missing, which the next repair drops,
        // reading its ids from where the file was moved.
        let damaged = dir.join("damaged");
        for (entry, why) in dropped {
            let moved = damaged.join(&entry.file);
            let path = match dir.join(&entry.file) {
                p if !p.exists() && moved.exists() => moved.clone(),
                p => p,
            };
            let live = entry.docs as u64 - entry.deleted.len() as u64;
            let mut d = DroppedSegment {
                file: entry.file.clone(),
                // The file is named beside it.
                why: without_file(why).to_string(),
                live_docs: live,
                ids: Vec::new(),
                unread: live,
                kept_as: None,
            };
            if let Ok(index) = map(&path, None) {
                for doc in 0..entry.docs.min(index.doc_count()) {
                    if entry.deleted.binary_search(&doc).is_err() {
                        if let Ok(Some(id)) = index.name(doc) {
                            d.ids.push(id.into_owned());
                        }
                    }
                }
                d.unread = live.saturating_sub(d.ids.len() as u64);
            }
            if path.exists() {
                if path != moved {
                    std::fs::create_dir_all(&damaged).map_err(|e| Error::io(&damaged, e))?;
                    std::fs::rename(&path, &moved).map_err(|e| Error::io(&path, e))?;
                }
                d.kept_as = Some(moved);
            }
            repair.dropped.push(d);
        }
        let mut w = SetWriter {
            dir: dir.to_path_buf(),
            _lock: lock,
            set: IndexSet {
                parts,
                dir: Some(dir.to_path_buf()),
                generation: manifest.generation,
                sources: vec![(0, dir.display().to_string())],
            },
            manifest,
            schema,
            note: None,
            made_dir: false,
        };
        if !repair.dropped.is_empty() {
            let mut m = w.manifest.clone();
            let gone: std::collections::HashSet<&str> =
                repair.dropped.iter().map(|d| d.file.as_str()).collect();
            m.segments.retain(|s| !gone.contains(s.file.as_str()));
            w.commit(m)?;
        }
        repair.change = w.summary(Change::default());
        Ok(repair)
    }

    /// Creates a set at `dir` (a new or empty directory) whose documents get the codes and
    /// sketches `schema` gives them. `schema` must be empty and fix both its idf table
    /// ([`IndexBuilder::with_idf`]) and its resolution ([`Params::resolution`](crate::Params)):
    /// nothing about a set may depend on which documents came first. Fails with
    /// [`Error::Busy`] while another process is creating it, when it is a set already, and
    /// inside another set's directory.
    pub fn create(dir: &Path, schema: IndexBuilder) -> Result<SetWriter> {
        Self::create_or_wait(dir, schema, false)?.ok_or_else(|| {
            Error::Invalid(format!(
                "{} is an index set already; open it to change it",
                dir.display()
            ))
        })
    }

    /// [`SetWriter::create`], or `None` when `dir` is a set already, or became one while this
    /// call waited for another process creating it (with `wait`; open it then with
    /// [`SetWriter::open`]): two writers that start on a new set at once both get to write.
    pub fn create_or_wait(
        dir: &Path,
        schema: IndexBuilder,
        wait: bool,
    ) -> Result<Option<SetWriter>> {
        if !schema.is_empty() || !schema.is_fixed() {
            return Err(Error::Invalid(
                "an index set's schema must be an empty builder with a fixed idf table and resolution".into(),
            ));
        }
        // An empty path (an unset variable) would make the working directory the set.
        if dir.as_os_str().is_empty() {
            return Err(Error::Invalid(
                "an index set needs a directory's name, and the path is empty".into(),
            ));
        }
        if !is_set(dir) {
            crate::atomic::check_new_set_outside_sets(dir)?;
        }
        loop {
            if is_set(dir) {
                return Ok(None);
            }
            if !only_leftovers(dir)? {
                // Another process may have made it a set since the first look.
                if is_set(dir) {
                    return Ok(None);
                }
                return Err(Error::Invalid(format!(
                    "{} exists and is not an index set; give a new or empty directory",
                    dir.display()
                )));
            }
            let existed = dir.exists();
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            let lock = lock(dir, wait).inspect_err(|_| {
                if !existed {
                    let _ = std::fs::remove_dir(dir);
                }
            })?;
            // While this call waited, the other process created the set, or gave up and
            // removed its lock file (this lock is then on a file no one else sees: again).
            if is_set(dir) {
                return Ok(None);
            }
            if !lock_is_current(dir, &lock.0) {
                continue;
            }
            if !only_leftovers(dir)? {
                return Err(Error::Invalid(format!(
                    "{} exists and is not an index set; give a new or empty directory",
                    dir.display()
                )));
            }
            // The schema first, then the manifest that makes the directory a set. A failure (a
            // full disk) takes back what this call made: no half-made set is left behind.
            let made = write_step(dir, &dir.join(SCHEMA), Step::SegmentWritten, |out| {
                schema.finish(out).map(|_| ())
            })
            .and_then(|()| Manifest::empty().write(dir, None));
            if let Err(e) = made {
                let _ = std::fs::remove_file(dir.join(SCHEMA));
                let _ = std::fs::remove_file(dir.join(LOCK));
                if !existed {
                    let _ = std::fs::remove_dir(dir);
                }
                return Err(e);
            }
            let manifest = Manifest::empty();
            let schema = map(&dir.join(SCHEMA), None)?;
            return Ok(Some(SetWriter {
                dir: dir.to_path_buf(),
                _lock: lock,
                set: IndexSet::open_manifest(dir, &manifest, Some(&schema))?,
                manifest,
                schema,
                note: None,
                made_dir: !existed,
            }));
        }
    }

    /// Undoes [`SetWriter::create`] when nothing was added after all (a failed `add`, a
    /// `check --add` with nothing new): removes the manifest first (from then on the directory
    /// is no set), the schema and the lock file, then the directory if this writer made it and
    /// nothing else is in it (an empty directory the user made stays).
    /// A set that has segments or has changed since it was created is left as it is.
    pub fn discard_unused(self) -> Result<()> {
        if self.manifest.generation != 0 || !self.manifest.segments.is_empty() {
            return Err(Error::Invalid(format!(
                "{} has changed since it was created; it is kept",
                self.dir.display()
            )));
        }
        // What is on disk decides, not what this writer believes (a commit whose reopening
        // failed has a newer manifest there).
        let on_disk = Manifest::read(&self.dir)?;
        if on_disk.generation != 0 || !on_disk.segments.is_empty() {
            return Err(Error::Invalid(format!(
                "{} has changed since it was created; it is kept",
                self.dir.display()
            )));
        }
        let dir = self.dir.clone();
        for name in [MANIFEST, SCHEMA] {
            let path = dir.join(name);
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
        // The lock file and the directory go while the lock is held: a writer waiting on it
        // then finds its lock on a file no longer there and starts again (`lock_is_current`),
        // instead of creating the set in a directory this removes under it.
        let _ = std::fs::remove_file(dir.join(LOCK));
        if self.made_dir {
            let _ = std::fs::remove_dir(&dir);
        }
        drop(self);
        Ok(())
    }

    /// True when this writer made the set's directory (it did not exist before
    /// [`SetWriter::create`]); false for a directory that was there, empty, and for
    /// [`SetWriter::open`].
    pub fn made_directory(&self) -> bool {
        self.made_dir
    }

    /// The set as it is now.
    pub fn set(&self) -> &IndexSet<Mmap> {
        &self.set
    }

    /// The schema: the empty index whose parameters every segment shares.
    pub fn schema(&self) -> &Index<Mmap> {
        &self.schema
    }

    /// Refuses to go on with documents read and fingerprinted, before this writer took the
    /// lock, with `schema` (the set's, read without the lock): a set made again meanwhile, of
    /// another schema, would not fit them, and a manifest that cannot be replaced is said
    /// before their segment is written.
    pub fn agrees_with_read(&self, schema: &Index<Mmap>) -> Result<()> {
        crate::atomic::check_writable(&self.dir.join(MANIFEST))?;
        if self.schema.schema_key() != schema.schema_key() {
            return Err(Error::Invalid(format!(
                "{} was made again while the documents were read (another schema): run the command again",
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// A builder for documents to add: the set's parameters, classes, stopwords, idf table and
    /// resolution. Fingerprint with its [`IndexBuilder::fingerprinter`] on any thread.
    pub fn builder(&self) -> IndexBuilder {
        IndexBuilder::like(&self.schema).with_set_sections()
    }

    /// Adds the documents of `builder` (from [`SetWriter::builder`]) as one new segment, then
    /// merges segments as the merge policy asks. Ids must be unique: an id already live in the
    /// set is refused ([`Error::DuplicateId`]) unless `replace`, which deletes the old document
    /// in the same step. Nothing is changed when it fails.
    pub fn add(&mut self, builder: IndexBuilder, replace: bool) -> Result<Change> {
        let mut change = self.add_unmerged(builder, replace)?;
        if change.added > 0 {
            self.merge_as_policy_asks(&mut change);
        }
        Ok(change)
    }

    /// [`SetWriter::add`] without the merge that follows: the documents are committed as a
    /// segment of their own. A front end that answers before merging (`check --add` prints its
    /// verdicts, and lets the lock go while it does) merges later, with
    /// [`SetWriter::merge_as_policy_asks`] on a writer of its own.
    pub fn add_unmerged(&mut self, builder: IndexBuilder, replace: bool) -> Result<Change> {
        let mut change = Change::default();
        if builder.is_empty() {
            return Ok(self.summary(change));
        }
        // Ids unique within the batch and, unless replaced, new to the set.
        let mut seen = std::collections::HashSet::new();
        let mut replaced: Vec<(usize, u32)> = Vec::new();
        // Without `replace`, every held id is counted, so that one refusal names them all.
        let mut held: Vec<&str> = Vec::new();
        for name in builder.names() {
            if !seen.insert(name) {
                return Err(Error::Invalid(format!(
                    "document id {name:?} is given twice; ids are unique in an index set"
                )));
            }
            if let Some(at) = self.set.find(name)? {
                if !replace {
                    held.push(name);
                    continue;
                }
                replaced.push(at);
            }
        }
        if let Some((first, rest)) = held.split_first() {
            return Err(Error::DuplicateId {
                id: first.to_string(),
                file: None,
                more: rest.len() as u64,
                others: rest.iter().take(3).map(|s| s.to_string()).collect(),
            });
        }
        change.added = builder.len() as u64;
        change.deleted = replaced.len() as u64;
        let mut m = self.manifest.clone();
        for (part, doc) in replaced {
            insert_sorted(&mut m.segments[part].deleted, doc);
        }
        let entry = self.write_segment(&mut m, |out| builder.finish(out))?;
        let file = entry.file.clone();
        m.segments.push(entry);
        // Once committed the documents are in, whatever the merge does. Failing the call then
        // would have a caller add them again (and be refused their ids); so would a signal
        // during the merge, unless the handler can say so: noted as soon as the manifest is.
        self.note = Some(format!(
            "{} document{} added to {} (generation {})",
            change.added,
            if change.added == 1 { " was" } else { "s were" },
            self.dir.display(),
            m.generation + 1
        ));
        self.commit_or_remove(m, &[file])?;
        Ok(self.summary(change))
    }

    /// Merges segments as the merge policy asks (the newest ones, while an older one holds at
    /// most twice the newer's documents), recording in `change` what was merged or why the
    /// merge failed: committed documents stay in either way.
    pub fn merge_as_policy_asks(&mut self, change: &mut Change) {
        match self.apply_merge_policy() {
            Ok(merged) => change.merged += merged,
            Err(e) => change.merge_failed = Some(e.to_string()),
        }
        *change = self.summary(std::mem::take(change));
    }

    /// Deletes the live documents with these ids; returns, per id, whether it was found.
    pub fn delete<S: AsRef<str>>(&mut self, ids: &[S]) -> Result<(Vec<bool>, Change)> {
        let mut m = self.manifest.clone();
        let mut found = Vec::with_capacity(ids.len());
        let mut change = Change::default();
        for id in ids {
            let at = self.set.find(id.as_ref())?;
            if let Some((part, doc)) = at {
                if insert_sorted(&mut m.segments[part].deleted, doc) {
                    change.deleted += 1;
                }
            }
            found.push(at.is_some());
        }
        if change.deleted > 0 {
            self.commit(m)?;
        }
        Ok((found, self.summary(change)))
    }

    /// Merges every segment into one, dropping deleted documents (nothing to do for a set of
    /// one segment without deletions).
    pub fn merge_all(&mut self) -> Result<Change> {
        let mut change = Change::default();
        let n = self.manifest.segments.len();
        let clean = n == 1 && self.manifest.segments[0].deleted.is_empty();
        if n > 0 && !clean {
            self.merge_range(0..n)?;
            change.merged = n as u64;
        }
        Ok(self.summary(change))
    }

    /// Writes the live documents as one plain index file (no set sections): an index to ship.
    /// The file is what `build` writes for the same documents with the set's parameters.
    pub fn export(&self, path: &Path) -> Result<BuildStats> {
        write_export(&self.schema, &self.set.parts, path)
    }

    fn summary(&self, mut change: Change) -> Change {
        change.segments = self.manifest.segments.len() as u64;
        change.live_docs = self.manifest.live_docs();
        change.generation = self.manifest.generation;
        change
    }

    /// Adds index files built apart as segments of the set, in the order given, in one step:
    /// shards built from the set's schema ([`IndexBuilder::like`] on [`SetWriter::schema`],
    /// then [`IndexBuilder::with_set_sections`]) on other cores, machines or days, such as one
    /// per partition of a Spark job. Every byte of each file is checked ([`Index::verify`]); each
    /// must be a segment with the schema's parameters, classes, stopwords, idf table and
    /// resolution, and its ids must be new to the set and to the other files. The files are
    /// copied into the set (written, fsynced, renamed, as every segment is) and left where they
    /// were. No merge follows: the set answers as one index of all its documents as it is, and
    /// [`SetWriter::merge_all`] joins the segments when fewer files are wanted. Nothing changes
    /// when it fails.
    pub fn adopt(&mut self, files: &[PathBuf]) -> Result<Change> {
        let mut seen = std::collections::HashSet::new();
        let mut added = 0u64;
        let mut verified = Vec::with_capacity(files.len());
        for path in files {
            let index = map(path, Some(&self.schema))?;
            index.verify().map_err(|e| in_file(path, e))?;
            if !index.is_segment() {
                return Err(Error::Invalid(format!(
                    "{}: not a segment of an index set; build it from the set's schema (`pocketdex build --segment-of SET`, or IndexBuilder::like(schema).with_set_sections())",
                    path.display()
                )));
            }
            if index.schema_key() != self.schema.schema_key() {
                return Err(Error::Invalid(format!(
                    "{}: built with other parameters, stopwords, idf table or resolution than the set's schema; build it from the set's {SCHEMA} (`pocketdex build --segment-of SET`, or IndexBuilder::like)",
                    path.display()
                )));
            }
            for d in 0..index.doc_count() {
                let name = index.name(d)?.unwrap_or_default().into_owned();
                if self.set.find(&name)?.is_some() {
                    return Err(Error::DuplicateId {
                        id: name,
                        file: Some(path.clone()),
                        more: 0,
                        others: Vec::new(),
                    });
                }
                if !seen.insert(name) {
                    return Err(Error::Invalid(format!(
                        "{}: document id {:?} is given twice; ids are unique in an index set",
                        path.display(),
                        index.name(d)?.unwrap_or_default()
                    )));
                }
            }
            added += index.doc_count() as u64;
            verified.push(index);
        }
        let mut m = self.manifest.clone();
        let held = m.segments.len();
        for index in &verified {
            // The mapped bytes verified above (segment files are replaced by rename, never
            // changed in place).
            match self.write_segment(&mut m, |out| Ok(out.write_all(index.bytes())?)) {
                Ok(entry) => m.segments.push(entry),
                Err(e) => {
                    // No manifest names the segments written so far: a failed adopt leaves the
                    // directory as it found it, not for the next writer to clean up.
                    for s in &m.segments[held..] {
                        let _ = std::fs::remove_file(self.dir.join(&s.file));
                    }
                    return Err(e);
                }
            }
        }
        if !files.is_empty() {
            let new: Vec<String> = m.segments[held..].iter().map(|s| s.file.clone()).collect();
            self.commit_or_remove(m, &new)?;
        }
        Ok(self.summary(Change {
            added,
            ..Change::default()
        }))
    }

    /// Writes a new segment file by `write` and returns its manifest entry (not yet committed).
    fn write_segment<T>(
        &self,
        m: &mut Manifest,
        write: impl FnOnce(&mut dyn Write) -> Result<T>,
    ) -> Result<SegmentEntry> {
        // Past every segment the manifest names, whatever `next_segment` says (a damaged or
        // hand-edited manifest must not make a writer replace a live segment).
        let number = m.next_number();
        let file = segment_file(number);
        m.next_segment = number + 1;
        // Never over a file the manifest names (`Manifest::read` refuses a manifest whose
        // `next_segment` would allow it; this holds whatever the manifest says).
        if m.segments.iter().any(|s| s.file == file) {
            return Err(Error::format(format!(
                "{}: the manifest names {file} already; the set's manifest is damaged",
                self.dir.display()
            )));
        }
        let path = self.dir.join(&file);
        write_step(&self.dir, &path, Step::SegmentWritten, write)?;
        Step::SegmentRenamed.reached();
        let index = map(&path, Some(&self.schema))?;
        Ok(SegmentEntry {
            file,
            docs: index.doc_count(),
            checksum: hex(trailer_checksum(&index)),
            deleted: Vec::new(),
        })
    }

    /// Replaces the manifest by `m` and opens the new snapshot; removes files no longer named.
    fn commit(&mut self, mut m: Manifest) -> Result<()> {
        m.generation += 1;
        // Every commit is noted for a signal handler (the first of a call is what it says): a
        // change interrupted after it stands, whatever its kind.
        let note = self.note.take().unwrap_or_else(|| {
            format!(
                "{} changed (generation {})",
                self.dir.display(),
                m.generation
            )
        });
        m.write(&self.dir, Some(note))?;
        Step::Committed.reached();
        // The manifest on disk is `m` from here on, whatever follows.
        self.manifest = m.clone();
        let old = std::mem::take(&mut self.set.parts);
        self.set = IndexSet::reopen(&self.dir, &m, old, Some(&self.schema)).map_err(|e| {
            Error::Invalid(format!(
                "the change is committed (generation {}), but the set could not be opened again: {e}",
                m.generation
            ))
        })?;
        self.collect_garbage();
        Ok(())
    }

    /// [`SetWriter::commit`]; when the manifest could not be written (a full disk), the new
    /// segment `files` no manifest names are removed at once rather than left for the next
    /// writer, taking room on the disk that failed.
    fn commit_or_remove(&mut self, m: Manifest, files: &[String]) -> Result<()> {
        let before = self.manifest.generation;
        let result = self.commit(m);
        if result.is_err() && self.manifest.generation == before {
            for f in files {
                let _ = std::fs::remove_file(self.dir.join(f));
            }
        }
        result
    }

    /// The generation of the set's manifest as this writer last wrote or read it.
    pub fn generation(&self) -> u64 {
        self.manifest.generation
    }

    /// Merges the two newest segments while the older holds at most [`MERGE_RATIO`] times the
    /// newer's live documents; returns how many segments were merged away. The whole cascade
    /// is one merge of the newest segments it reaches: the same documents in the same order as
    /// merging them pair by pair (only the segment's file number differs), written and
    /// committed once instead of once per pair, so that it lands whole or not at all.
    fn apply_merge_policy(&mut self) -> Result<u64> {
        let s = &self.manifest.segments;
        let n = s.len();
        if n < 2 {
            return Ok(0);
        }
        let live = |e: &SegmentEntry| e.docs as u64 - e.deleted.len() as u64;
        // Segments `first..n` merge; `newest` is the live documents of what they become.
        let (mut first, mut newest) = (n - 1, live(&s[n - 1]));
        while first > 0 && live(&s[first - 1]).max(1) <= MERGE_RATIO * newest.max(1) {
            first -= 1;
            newest += live(&s[first]);
        }
        if first == n - 1 {
            return Ok(0);
        }
        self.merge_range(first..n)?;
        Ok((n - 1 - first) as u64)
    }

    /// Replaces the adjacent segments `range` by one holding their live documents, in order.
    fn merge_range(&mut self, range: std::ops::Range<usize>) -> Result<()> {
        let parts = parts_of(&self.schema, &self.set.parts[range.clone()], true)?;
        let mut m = self.manifest.clone();
        let entry = self.write_segment(&mut m, |out| parts.write(out))?;
        let file = entry.file.clone();
        m.segments.splice(range, [entry]);
        self.commit_or_remove(m, &[file])
    }
}

/// Writes the live documents of the index set at `dir`, as its current snapshot has them, as one
/// plain index file (what [`SetWriter::export`] writes), without the writer's lock: a set on
/// read-only media, or one a writer is changing, is exported as the snapshot it had when opened.
pub fn export_set(dir: &Path, path: &Path) -> Result<BuildStats> {
    // Before any work: an output in the set, not writable, or a file that is no index.
    crate::atomic::check_output(path)?;
    crate::atomic::check_replaces_only_an_index(path)?;
    if !is_set(dir) {
        return Err(not_a_set(dir));
    }
    let schema = map(&dir.join(SCHEMA), None)?;
    let set = IndexSet::open(dir)?;
    write_export(&schema, &set.parts, path)
}

/// Writes `parts`' live documents as one plain index file at `path`, atomically.
fn write_export(schema: &Index<Mmap>, parts: &[Part<Mmap>], path: &Path) -> Result<BuildStats> {
    let parts = parts_of(schema, parts, false)?;
    write_step(parent_dir(path), path, Step::SegmentWritten, |out| {
        parts.write(out)
    })
}

/// The live documents of `parts`, in order, ready to be written as one index of `schema`.
fn parts_of(schema: &Index<Mmap>, parts: &[Part<Mmap>], set_sections: bool) -> Result<Parts> {
    let f = schema.fingerprinter().clone();
    let words = f.params().sketch_words as usize;
    let mut names = StringList::default();
    let mut titles = StringList::default();
    let mut has_titles = false;
    let mut sketches = Vec::new();
    let mut refs = Vec::new();
    for p in parts {
        let base = names.len() as u32;
        // New numbers of the part's live documents.
        let mut renumber = vec![u32::MAX; p.index.doc_count() as usize];
        let mut next = base;
        for (d, slot) in renumber.iter_mut().enumerate() {
            let d = d as u32;
            if p.is_deleted(d) {
                continue;
            }
            *slot = next;
            next += 1;
            names.push(&p.index.name(d)?.unwrap_or_default());
            let t = p.index.title(d)?.unwrap_or_default();
            has_titles |= !t.is_empty();
            titles.push(&t);
            sketches.extend(p.index.sketch_words(d)?.into_iter().flatten().take(words));
        }
        let codes = p
            .index
            .codes()?
            .expect("every segment has CODES (checked on open)");
        refs.extend(
            codes
                .filter(|&(d, _)| renumber[d as usize] != u32::MAX)
                .map(|(d, k)| (k, renumber[d as usize])),
        );
    }
    Ok(Parts {
        fingerprinter: f,
        lang: schema.meta().lang.clone(),
        names,
        titles: has_titles.then_some(titles),
        sketches,
        refs,
        resolution: schema.resolution(),
        set_sections,
        paths: None,
    })
}

impl SetWriter {
    /// Removes stale temporary files and segment files the manifest does not name (left by a crash;
    /// or replaced by a merge). Readers that mapped them keep their maps; a reader between
    /// reading the manifest and mapping its segments retries with the new manifest.
    fn collect_garbage(&self) {
        remove_unnamed(&self.dir, &self.manifest);
        // Temporary files only when their writer is gone (they are locked while written): the
        // front ends refuse outputs here, but a program of the user's may be writing one.
        crate::atomic::remove_stale(&self.dir);
    }
}

/// Inserts `v` into the ascending `list`; false when it was there.
fn insert_sorted(list: &mut Vec<u32>, v: u32) -> bool {
    match list.binary_search(&v) {
        Ok(_) => false,
        Err(i) => {
            list.insert(i, v);
            true
        }
    }
}

/// True when `dir` does not exist, or holds only what a creation that crashed (or is under way,
/// not yet with a manifest) leaves: the lock file, the schema, temporary files.
fn only_leftovers(dir: &Path) -> Result<bool> {
    let leftover = |name: &str| {
        name == LOCK
            || name == SCHEMA
            || (name.starts_with(".pocketdex-") && name.ends_with(".tmp"))
    };
    let mut entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(Error::io(dir, e)),
    };
    Ok(!entries.any(|e| e.map_or(true, |e| !e.file_name().to_str().is_some_and(leftover))))
}

/// True when `lock` is still the file at the lock's path (a creation that gave up removes it,
/// and whoever waited on it then holds a lock no one else can see).
fn lock_is_current(dir: &Path, lock: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(dir.join(LOCK)), lock.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, lock);
        true
    }
}

/// The set's writer lock (and the set's directory), let go explicitly when dropped: a process
/// forked while it was held shares its open file, which would otherwise keep the lock for as
/// long as the child lives.
struct SetLock(File, PathBuf);

impl Drop for SetLock {
    fn drop(&mut self) {
        locked().retain(|d| d != &self.1);
        let _ = self.0.unlock();
    }
}

/// The directories of the sets whose writer lock this process holds.
static LOCKED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn locked() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it intact: it is always consistent.
    LOCKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`crate::atomic::Held::remove_unnamed_segments`]: in every set this process writes, the
/// segment files its manifest on disk does not name are removed; returns how many.
pub(crate) fn remove_unnamed_segments() -> usize {
    locked()
        .iter()
        .map(|dir| match Manifest::read(dir) {
            Ok(m) => remove_unnamed(dir, &m),
            // No manifest yet (a set being created): nothing names a segment, and none is made.
            Err(_) => 0,
        })
        .sum()
}

/// Removes the segment files in `dir` that manifest `m` does not name; returns how many.
fn remove_unnamed(dir: &Path, m: &Manifest) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let live: std::collections::HashSet<&str> =
        m.segments.iter().map(|s| s.file.as_str()).collect();
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let Some(name) = name.to_str() else {
                return false;
            };
            name.starts_with("seg-")
                && name.ends_with(".pdx")
                && !live.contains(name)
                && std::fs::remove_file(e.path()).is_ok()
        })
        .count()
}

/// Takes the set's writer lock.
fn lock(dir: &Path, wait: bool) -> Result<SetLock> {
    let path = dir.join(LOCK);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    if wait {
        file.lock().map_err(|e| Error::io(&path, e))?;
    } else {
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Busy {
                    path: dir.to_path_buf(),
                })
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
    }
    locked().push(dir.to_path_buf());
    Ok(SetLock(file, dir.to_path_buf()))
}

/// The first two of `paths` that name the same file or directory (by their canonical paths,
/// so `a.pdx` and `./a.pdx` or a link to it are the same); paths that do not exist are
/// skipped.
pub fn repeated_path<P: AsRef<Path>>(paths: &[P]) -> Option<(&Path, &Path)> {
    let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
    for p in paths.iter().map(AsRef::as_ref) {
        if let Ok(real) = std::fs::canonicalize(p) {
            if let Some((_, first)) = seen.iter().find(|(r, _)| *r == real) {
                return Some((first, p));
            }
            seen.push((real, p));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(file: &str) -> SegmentEntry {
        SegmentEntry {
            file: file.into(),
            docs: 3,
            checksum: hex(1),
            deleted: vec![],
        }
    }

    /// A manifest that would answer a segment's documents twice is refused when read (and so
    /// by every command), even with a right checksum; one whose `next_segment` would have a
    /// writer replace a live segment is read, and writers number their segment past it.
    #[test]
    fn manifests_that_would_repeat_segments_are_refused_and_stale_numbers_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let read = |m: &Manifest| {
            m.write(dir.path(), None).unwrap();
            Manifest::read(dir.path()).map_err(|e| e.to_string())
        };
        let mut m = Manifest::empty();
        m.segments = vec![entry("seg-00000001.pdx"), entry("seg-00000004.pdx")];
        m.next_segment = 5;
        assert_eq!(read(&m), Ok(m.clone()));
        assert_eq!(m.next_number(), 5);
        // A stale `next_segment` is read (readers are not hurt), and writers number past it.
        m.next_segment = 4;
        assert_eq!(read(&m), Ok(m.clone()));
        assert_eq!(m.next_number(), 5);
        m.next_segment = 7;
        assert_eq!(m.next_number(), 7);
        m.segments.push(entry("seg-00000001.pdx"));
        let e = read(&m).unwrap_err();
        assert!(
            e.contains("segment seg-00000001.pdx is listed twice"),
            "{e}"
        );
        assert_eq!(segment_number(&segment_file(42)), Some(42));
        assert_eq!(segment_number("seg-.pdx"), None);
        assert_eq!(segment_number("seg-1a.pdx"), None);
    }
}
