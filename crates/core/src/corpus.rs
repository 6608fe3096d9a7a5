//! Documents in: a directory (every regular file below it), a single file, a JSON Lines file, a
//! Parquet file (with the `parquet` feature), or standard input (JSON Lines or one document);
//! decoded lossily, HTML stripped, empty, binary and over-large inputs reported and skipped,
//! unreadable files and directories too. Documents are read in ordered batches so that memory
//! stays bounded: by [`Reader::max_doc_bytes`] for the largest document (see [`Reader`] for the
//! multiple), and by a few megabytes per core besides.

use crate::error::{Error, Result};
use crate::text;
use rayon::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

#[cfg(feature = "parquet")]
mod parquet;

/// The default [`Reader::max_doc_bytes`]: 64 MiB, some hundred times a long book.
pub const DEFAULT_MAX_DOC_BYTES: u64 = 64 << 20;

/// What standard input (`-`) holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StdinFormat {
    /// JSON Lines when the first character that is not white space is `{`, one document
    /// otherwise.
    #[default]
    Auto,
    /// JSON Lines: one `{"id", "text", "title"?}` per line.
    Jsonl,
    /// One document, its markup removed when it looks like HTML (as for a file).
    Text,
    /// One HTML document.
    Html,
}

impl StdinFormat {
    /// Every format, for front ends' lists.
    pub const ALL: [StdinFormat; 4] = [
        StdinFormat::Auto,
        StdinFormat::Jsonl,
        StdinFormat::Text,
        StdinFormat::Html,
    ];

    /// Its name: `auto`, `jsonl`, `text` or `html`.
    pub fn name(self) -> &'static str {
        match self {
            StdinFormat::Auto => "auto",
            StdinFormat::Jsonl => "jsonl",
            StdinFormat::Text => "text",
            StdinFormat::Html => "html",
        }
    }

    /// What it reads, for people.
    pub fn description(self) -> &'static str {
        match self {
            StdinFormat::Auto => {
                "JSON Lines if the first non-blank character is `{`, else one document"
            }
            StdinFormat::Jsonl => "JSON Lines, one {\"id\", \"text\", \"title\"?} per line",
            StdinFormat::Text => "one document (HTML recognised by its content)",
            StdinFormat::Html => "one HTML document",
        }
    }
}

/// Which fields of a JSON Lines record, or columns of a Parquet file, hold a document's id,
/// text and title: by default `id`, `text` and `title`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    /// The id: a string or an integer (written in decimal). A record without one (or with null,
    /// or a blank string) is named after its place: `FILE:LINE` (JSON Lines), `FILE:ROW` (Parquet, rows counted from 1).
    pub id: String,
    /// The text: a record without it is skipped ([`SkipKind::NoTextField`]).
    pub text: String,
    /// The optional title.
    pub title: String,
}

impl Default for Keys {
    /// `id`, `text` and `title`.
    fn default() -> Self {
        Keys {
            id: "id".into(),
            text: "text".into(),
            title: "title".into(),
        }
    }
}

/// How documents are read: the per-document size limit, what standard input holds, and the
/// fields of records.
///
/// Memory: a document over `max_doc_bytes` (a file by its size, a JSON Lines record by the
/// length of its line) is skipped without being kept in memory. Documents over 8 MiB are read,
/// decoded and handed to the caller's map one at a time; while one is, it takes at most three
/// times its size (a file: its bytes, or its text and the text without markup; a JSON Lines
/// record: its line, the JSON parser's buffer for a text with escapes, and the text), plus the
/// read-ahead of a stream of JSON Lines (16 MiB) and the smaller documents other cores are
/// reading. So reading holds at most about `3 × max_doc_bytes` plus some 16 MiB per core
/// besides what the caller keeps. A Parquet file is read a batch of rows at a time (about 4 MiB
/// of text), so it holds what a batch's rows hold: a value cannot be skipped unread there.
///
/// A JSON Lines file that is a regular file is mapped into memory and parsed where the page
/// cache holds it (a pipe or standard input is read): each chunk's pages are unmapped once it
/// is parsed, so that it holds no read-ahead at all. As with every memory-mapped input (ripgrep
/// maps files alike), another program that truncates the file while it is read makes the read
/// of the lost pages fault and the process die of SIGBUS; read such a file as a stream
/// instead (`cat docs.jsonl | pocketdex build - …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reader {
    /// The largest document read, in bytes (of a file, of a JSON Lines record's line, or of a
    /// Parquet row's text).
    pub max_doc_bytes: u64,
    /// What `-` holds.
    pub stdin: StdinFormat,
    /// The fields of JSON Lines records and the columns of Parquet files that hold a
    /// document's id, text and title.
    pub keys: Keys,
    /// The id of a document read from standard input as text (`-` when `None`).
    pub stdin_id: Option<String>,
}

impl Default for Reader {
    /// [`DEFAULT_MAX_DOC_BYTES`], [`StdinFormat::Auto`] and the default [`Keys`].
    fn default() -> Self {
        Reader {
            max_doc_bytes: DEFAULT_MAX_DOC_BYTES,
            stdin: StdinFormat::Auto,
            keys: Keys::default(),
            stdin_id: None,
        }
    }
}

/// One document ready for fingerprinting.
#[derive(Clone, Debug)]
pub struct Document {
    /// Its id: path relative to the input directory, file name, or the record's `id`.
    pub id: String,
    /// Optional title (JSON `title`, or the title column).
    pub title: Option<String>,
    /// Plain text (markup removed).
    pub text: String,
    /// Invalid UTF-8 sequences replaced while decoding.
    pub invalid_utf8: usize,
}

/// An input that could not be indexed, and why.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// The id or path of the input.
    pub id: String,
    /// What kind of input it was: front ends choose exit statuses and output types by it.
    pub kind: SkipKind,
    /// Why it was skipped, for people.
    pub reason: String,
}

/// Why an input was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipKind {
    /// The file or directory could not be read (its [`std::io::ErrorKind`]): an error, not a
    /// property of the document.
    Unreadable(std::io::ErrorKind),
    /// Nothing but white space.
    Empty,
    /// NUL or control bytes: not text.
    Binary,
    /// No text left once markup is removed.
    NoText,
    /// A JSON Lines record that is not JSON.
    InvalidJson,
    /// A JSON Lines record whose id, text or title is of a type that cannot be one (an id with
    /// a fraction, a text that is a number, a title that is an object, ...).
    WrongType,
    /// A JSON Lines record without a text field ([`Keys::text`]), or a Parquet row whose text
    /// is null.
    NoTextField,
    /// Larger than [`Reader::max_doc_bytes`]: left unread.
    TooLarge,
    /// A record whose id is blank or holds control characters
    /// ([`crate::check::is_printable_id`]): no output could print it on one line, nor `delete`
    /// be given it. The reader hands such records over; a front end that names documents by
    /// their ids (a build, an add) skips them so.
    UnprintableId,
}

impl SkipKind {
    /// True for the kinds that are errors of reading (an unreadable file, a record that is not
    /// JSON, has a field of the wrong type or an id no one could print: a truncated or damaged
    /// upload, say) rather than documents without text.
    pub fn is_error(self) -> bool {
        matches!(
            self,
            SkipKind::Unreadable(_)
                | SkipKind::InvalidJson
                | SkipKind::WrongType
                | SkipKind::UnprintableId
        )
    }
}

/// What one input item became.
#[derive(Clone, Debug)]
pub enum Item {
    /// A document.
    Doc(Document),
    /// Reported and skipped.
    Skipped(Skipped),
}

/// Where documents come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Every regular file below a directory; ids are paths relative to it, `/`-separated.
    Dir(PathBuf),
    /// One file; its id is its file name.
    File(PathBuf),
    /// One document per line: `{"id": "...", "text": "...", "title": "..."}`.
    Jsonl(PathBuf),
    /// One document per row of a Parquet file, its id, text and title in the columns
    /// [`Reader::keys`] names (reading needs the `parquet` feature).
    Parquet(PathBuf),
    /// Standard input, read as [`Reader::stdin`] says: JSON Lines, or one document whose id is
    /// `-`.
    Stdin,
}

impl Source {
    /// The source an INPUT argument names: `-` is standard input, a `.jsonl` or `.ndjson`
    /// file is JSON Lines (so is a `.json` file that holds them), a `.parquet` file is Parquet,
    /// a directory is walked, any other path is one document.
    pub fn from_arg(arg: impl AsRef<Path>) -> Result<Source> {
        let path = arg.as_ref().to_path_buf();
        if path.as_os_str() == "-" {
            return Ok(Source::Stdin);
        }
        let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
        // By the extension, in any case: `.jsonl` (or `.ndjson`, its other common name) and
        // `.parquet`.
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        Ok(if meta.is_dir() {
            Source::Dir(path)
        } else if matches!(ext.as_deref(), Some("jsonl" | "ndjson")) {
            // A Parquet file under a JSON Lines name would be read as thousands of invalid
            // lines; its magic bytes tell (looked at in regular files only: a pipe's bytes
            // are read once).
            if meta.is_file() && starts_with(&path, b"PAR1") {
                return Err(Error::Invalid(format!(
                    "{} is a Parquet file (it begins with PAR1); name it .parquet",
                    path.display()
                )));
            }
            Source::Jsonl(path)
        } else if ext.as_deref() == Some("parquet") {
            Source::Parquet(path)
        } else if ext.as_deref() == Some("json") && meta.is_file() && json_lines_inside(&path) {
            // JSON Lines under a .json name (a common export), which as one document would
            // index its records' syntax as one text.
            Source::Jsonl(path)
        } else {
            Source::File(path)
        })
    }
}

/// True when the file at `path` holds JSON Lines: its first value (after blank lines) is a JSON
/// object, and the next one, on a later line, begins another. A JSON document (an object over
/// several lines, an array) is not; nor is one object alone, which stays a document. Looks at
/// the first MiB: a first record longer than that leaves the file one document.
fn json_lines_inside(path: &Path) -> bool {
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(1 << 20).read_to_end(&mut head));
    if read.is_err() {
        return false;
    }
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let head = &head[start..];
    let mut values = serde_json::Deserializer::from_slice(head).into_iter::<serde_json::Value>();
    let first_is_object = matches!(values.next(), Some(Ok(serde_json::Value::Object(_))));
    let rest = &head[values.byte_offset()..];
    let gap = rest.iter().position(|b| !b.is_ascii_whitespace());
    first_is_object && gap.is_some_and(|g| rest[g] == b'{' && rest[..g].contains(&b'\n'))
}

/// True when the file at `path` begins with `magic` (false when it cannot be read: reading it
/// later says why).
fn starts_with(path: &Path, magic: &[u8]) -> bool {
    let mut head = vec![0u8; magic.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == magic)
}

/// The sources of several INPUT arguments (see [`Source::from_arg`]); the first that cannot
/// be read is the error.
pub fn sources<S: AsRef<Path>>(args: &[S]) -> Result<Vec<Source>> {
    args.iter().map(|a| Source::from_arg(a.as_ref())).collect()
}

/// At most how many documents the sources hold, when that can be known without parsing them:
/// files of directories, lines of JSON Lines files (read once more, at memory speed), rows of
/// Parquet files (from their footers); `None` for standard input.
pub fn count_at_most(sources: &[Source]) -> Result<Option<u64>> {
    let mut total = 0u64;
    for source in sources {
        total += match source {
            Source::Dir(dir) => list(dir).files.len() as u64,
            Source::File(_) => 1,
            Source::Jsonl(path) => match count_lines(path, 64 << 20)? {
                Some(n) => n,
                // A pipe or device: known only once read.
                None => return Ok(None),
            },
            Source::Parquet(path) => parquet_rows(path)?,
            Source::Stdin => return Ok(None),
        };
    }
    Ok(Some(total))
}

/// The lines of a regular file (a last line without a newline counted), `None` for anything
/// else (a pipe cannot be read twice). A build waits for this count before it starts, so the
/// newlines are counted on every core, each in its own part of at least `part` bytes: where
/// the file is mapped when it can be ([`count_mapped`]), read otherwise ([`count_read`]).
fn count_lines(path: &Path, part: u64) -> Result<Option<u64>> {
    // Not opened unless it is a regular file: opening a named pipe would take the place of
    // the build's own reader, and the writer's data with it.
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Ok(None);
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    match mapped(&file) {
        Some(map) => Ok(Some(count_mapped(&map, part, JSONL_CHUNK))),
        None => count_read(path, meta.len(), part).map(Some),
    }
}

/// How many parts of at least `part` bytes `len` bytes are counted in: one per core at most.
fn parts(len: u64, part: u64) -> u64 {
    (rayon::current_num_threads() as u64).clamp(1, len.div_ceil(part.max(1)).max(1))
}

/// The lines of a mapped file, counted in parts of at least `part` bytes on every core, where
/// the page cache holds them (reading them into a buffer had cost a copy of the whole file, 3%
/// of a build's CPU); each part a `window` at a time, unmapped once counted, so that what was
/// counted does not stay resident.
fn count_mapped(map: &memmap2::Mmap, part: u64, window: usize) -> u64 {
    let bytes = &map[..];
    let each = bytes
        .len()
        .div_ceil(parts(bytes.len() as u64, part) as usize)
        .max(1);
    let newlines: u64 = bytes
        .par_chunks(each)
        .enumerate()
        .map(|(p, chunk)| {
            let start = p * each;
            (0..chunk.len())
                .step_by(window.max(1))
                .map(|at| {
                    let to = (at + window).min(chunk.len());
                    let n = memchr::memchr_iter(b'\n', &chunk[at..to]).count() as u64;
                    unmap_pages(map, start + at, start + to);
                    n
                })
                .sum::<u64>()
        })
        .sum();
    newlines + bytes.last().is_some_and(|&b| b != b'\n') as u64
}

/// The lines of the `len` bytes of the regular file at `path`, read in parts of at least `part`
/// bytes on every core, each through a handle of its own.
fn count_read(path: &Path, len: u64, part: u64) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    if len == 0 {
        return Ok(0);
    }
    let parts = parts(len, part);
    let each = len.div_ceil(parts);
    // Each part counts the newlines in its bytes; the last part also says whether the file
    // ends in one.
    let counts = (0..parts)
        .into_par_iter()
        .map(|p| -> std::io::Result<(u64, Option<u8>)> {
            let (start, end) = (p * each, ((p + 1) * each).min(len));
            let mut file = std::fs::File::open(path)?;
            file.seek(SeekFrom::Start(start))?;
            let mut file = file.take(end - start);
            let mut buf = vec![0u8; (1 << 20).min((end - start) as usize)];
            let (mut n, mut last) = (0u64, None);
            loop {
                let got = match file.read(&mut buf) {
                    // The part's end, or the file shrank while being counted: what was read
                    // is counted.
                    Ok(0) => break,
                    Ok(got) => got,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                // memchr's count is vectorised, so this pass costs the reads alone.
                n += memchr::memchr_iter(b'\n', &buf[..got]).count() as u64;
                last = Some(buf[got - 1]);
            }
            Ok((n, last))
        })
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io(path, e))?;
    let newlines: u64 = counts.iter().map(|c| c.0).sum();
    let last = counts.iter().rev().find_map(|c| c.1);
    Ok(newlines + last.is_some_and(|b| b != b'\n') as u64)
}

/// True when the number of documents is known once the sources are opened (directories,
/// files, Parquet files), so a progress bar can show a total; JSON Lines are counted as they
/// stream.
pub fn counts_known(sources: &[Source]) -> bool {
    sources
        .iter()
        .all(|s| matches!(s, Source::Dir(_) | Source::File(_) | Source::Parquet(_)))
}

/// The rows of a Parquet file, from its footer.
#[cfg(feature = "parquet")]
fn parquet_rows(path: &Path) -> Result<u64> {
    parquet::rows(path)
}

#[cfg(not(feature = "parquet"))]
fn parquet_rows(path: &Path) -> Result<u64> {
    Err(no_parquet(path))
}

/// The error of a Parquet input in a build without the `parquet` feature.
#[cfg(not(feature = "parquet"))]
fn no_parquet(path: &Path) -> Error {
    Error::Invalid(format!(
        "{}: this build of pocketdex cannot read Parquet files (it was built without the \
         `parquet` feature); convert the file to JSON Lines, or use a build with the feature",
        path.display()
    ))
}

/// What is below a directory.
#[derive(Debug, Default)]
pub struct Listing {
    /// The regular files, sorted by relative path, with their ids.
    pub files: Vec<(PathBuf, String)>,
    /// Symlinks and other non-regular entries, left out.
    pub non_regular: usize,
    /// Directories (the top one included) that could not be read, skipped with what is below
    /// them; their ids end in `/`.
    pub unreadable: Vec<Skipped>,
}

/// A file name as (part of) a document id: itself when it is UTF-8 without control characters;
/// otherwise each byte that is not UTF-8, each byte of a control character (a newline or a tab
/// in a name would break every line-based output, and `delete` could not be given the id) and
/// each backslash written `\xHH` (`caf\xE9.txt` for Latin-1 `café.txt`), so that names
/// differing in those bytes keep different ids (a lossy conversion made them all
/// `caf\u{FFFD}.txt`, one id for several files), and [`path_of_id`] finds the file again.
pub fn id_of_name(name: &std::ffi::OsStr) -> std::borrow::Cow<'_, str> {
    #[cfg(unix)]
    {
        use std::fmt::Write;
        use std::os::unix::ffi::OsStrExt;
        let bytes = name.as_bytes();
        if let Ok(s) = std::str::from_utf8(bytes) {
            if is_own_id(s) {
                return std::borrow::Cow::Borrowed(s);
            }
        }
        // A name of spaces alone would be a blank id, which no one could type either.
        let blank = bytes.iter().all(|&b| b == b' ');
        let mut id = String::with_capacity(bytes.len() + 8);
        for chunk in bytes.utf8_chunks() {
            // A backslash is escaped too in such a name, so that [`path_of_id`] reads back
            // exactly the bytes it had.
            for c in chunk.valid().chars() {
                if c == '\\' || c.is_control() || (blank && c == ' ') {
                    for b in c.encode_utf8(&mut [0; 4]).bytes() {
                        let _ = write!(id, "\\x{b:02X}");
                    }
                } else {
                    id.push(c);
                }
            }
            for b in chunk.invalid() {
                let _ = write!(id, "\\x{b:02X}");
            }
        }
        std::borrow::Cow::Owned(id)
    }
    // Elsewhere names are UTF-16; one that is not valid (an unpaired surrogate) is rare.
    #[cfg(not(unix))]
    name.to_string_lossy()
}

/// True for a UTF-8 file name that is its own id ([`id_of_name`]): no control characters, and
/// not spaces alone. The one rule both ways, so that [`path_of_id`] reads back what was made.
#[cfg(unix)]
fn is_own_id(name: &str) -> bool {
    !name.chars().any(char::is_control) && (name.is_empty() || name.bytes().any(|b| b != b' '))
}

/// The relative path a document id made by [`id_of_name`] stands for: `\xHH` becomes the byte
/// again where the id's name was not UTF-8 or held control characters (a name that is UTF-8
/// without them is its own id, taken as is).
pub fn path_of_id(id: &str) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        let parts: Vec<std::ffi::OsString> = id
            .split('/')
            .map(|part| {
                let bytes = unescape_name(part);
                // Only an escape that made a name `id_of_name` escapes is one: a name that is
                // its own id is taken as is.
                match String::from_utf8(bytes) {
                    Ok(s) if is_own_id(&s) => std::ffi::OsString::from(part),
                    Ok(s) => std::ffi::OsString::from(s),
                    Err(e) => std::ffi::OsString::from_vec(e.into_bytes()),
                }
            })
            .collect();
        parts.iter().collect()
    }
    #[cfg(not(unix))]
    PathBuf::from(id)
}

/// `part` with each `\xHH` (two hex digits) as the byte it names.
#[cfg(unix)]
fn unescape_name(part: &str) -> Vec<u8> {
    let hex = |c: &u8| (*c as char).to_digit(16);
    let b = part.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            if let (Some(hi), Some(lo)) = (b.get(i + 2).and_then(hex), b.get(i + 3).and_then(hex)) {
                out.push((hi * 16 + lo) as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Lists the files below a directory (see [`Listing`]); an unreadable subdirectory is skipped
/// and reported, as an unreadable file is.
pub fn list(dir: &Path) -> Listing {
    let mut listing = Listing::default();
    let id_of = |path: &Path| {
        let rel = path.strip_prefix(dir).unwrap_or(path);
        rel.components()
            .map(|c| id_of_name(c.as_os_str()))
            .collect::<Vec<_>>()
            .join("/")
    };
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        match entry {
            // An index set's manifest below an input directory is pocketdex's, not a document
            // (its segments are skipped as every index file is: as binary).
            Ok(entry) if entry.file_type().is_file() && is_manifest(entry.path()) => {}
            Ok(entry) if entry.file_type().is_file() => {
                listing
                    .files
                    .push((entry.path().to_path_buf(), id_of(entry.path())));
            }
            Ok(entry) if !entry.file_type().is_dir() => listing.non_regular += 1,
            Ok(_) => {}
            Err(e) => {
                let path = e.path().unwrap_or(dir).to_path_buf();
                let io = e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("file system loop"));
                listing.unreadable.push(Skipped {
                    id: format!("{}/", id_of(&path)),
                    kind: SkipKind::Unreadable(io.kind()),
                    reason: format!("cannot read directory: {io}"),
                });
            }
        }
    }
    listing
}

/// True for an index set's manifest: its name, and the format it names itself by.
fn is_manifest(path: &Path) -> bool {
    path.file_name() == Some(std::ffi::OsStr::new(crate::set::MANIFEST))
        && std::fs::File::open(path).is_ok_and(|f| {
            let mut head = Vec::with_capacity(256);
            f.take(256).read_to_end(&mut head).is_ok()
                && memchr::memmem::find(&head, b"\"pocketdex-set\"").is_some()
        })
}

/// The files below a directory, sorted by relative path, with their ids; symlinks and other
/// non-regular entries are left out (their number is returned). Fails on the first directory
/// that cannot be read; [`list`] skips and reports it instead.
pub fn walk(dir: &Path) -> Result<(Vec<(PathBuf, String)>, usize)> {
    let listing = list(dir);
    match listing.unreadable.into_iter().next() {
        Some(s) => Err(Error::io(
            dir.join(s.id.trim_end_matches('/')),
            std::io::Error::new(
                match s.kind {
                    SkipKind::Unreadable(k) => k,
                    _ => std::io::ErrorKind::Other,
                },
                s.reason,
            ),
        )),
        None => Ok((listing.files, listing.non_regular)),
    }
}

/// Reads one file as a document with the default [`Reader`] (see [`Reader::read_file`]).
pub fn read_file(path: &Path, id: String) -> Item {
    Reader::default().read_file(path, id)
}

/// `Some(true)` for a file named `.html`, `.htm` or `.xhtml` (its markup is removed whatever it
/// looks like); `None` otherwise: the text is looked at ([`crate::text::plain_text`]).
pub fn html_by_name(path: &Path) -> Option<bool> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| matches!(e.to_ascii_lowercase().as_str(), "html" | "htm" | "xhtml"))
        .filter(|&h| h)
}

/// Documents over this size are read one at a time (see [`Reader`]).
const BIG_DOC: u64 = 8 << 20;

/// The one lane for documents over [`BIG_DOC`]: one thread at a time reads, decodes and maps
/// one. Re-entrant, because a thread waiting inside the caller's map (for a rayon job) may
/// pick up another document.
struct Lane {
    owner: Mutex<Option<(std::thread::ThreadId, usize)>>,
    free: Condvar,
}

static LANE: Lane = Lane {
    owner: Mutex::new(None),
    free: Condvar::new(),
};

impl Lane {
    fn enter(&'static self) -> LaneGuard {
        let me = std::thread::current().id();
        let mut owner = self.owner.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match owner.as_mut() {
                None => {
                    *owner = Some((me, 1));
                    break;
                }
                Some((t, depth)) if *t == me => {
                    *depth += 1;
                    break;
                }
                Some(_) => owner = self.free.wait(owner).unwrap_or_else(|e| e.into_inner()),
            }
        }
        LaneGuard(self)
    }
}

struct LaneGuard(&'static Lane);

impl Drop for LaneGuard {
    fn drop(&mut self) {
        let mut owner = self.0.owner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, depth)) = owner.as_mut() {
            *depth -= 1;
            if *depth == 0 {
                *owner = None;
                self.0.free.notify_one();
            }
        }
    }
}

/// Runs `f` in the lane when `bytes` is over [`BIG_DOC`].
fn in_lane<T>(bytes: u64, f: impl FnOnce() -> T) -> T {
    let _guard = (bytes > BIG_DOC).then(|| LANE.enter());
    f()
}

/// Bytes as a short human-readable size.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let (mut v, mut u) = (bytes as f64 / 1024.0, 0);
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    let v = format!("{v:.1}");
    format!("{} {}", v.strip_suffix(".0").unwrap_or(&v), UNITS[u])
}

impl Reader {
    /// The item of a document over the limit: `bytes` is its size.
    fn too_large(&self, id: String, bytes: u64) -> Item {
        let (size, limit) = (human(bytes), human(self.max_doc_bytes));
        // Sizes that round alike are given exactly ("4.9 KiB, over the limit of 4.9 KiB" said
        // nothing).
        let reason = if size == limit {
            format!(
                "{bytes} B, over the limit of {} B per document",
                self.max_doc_bytes
            )
        } else {
            format!("{size}, over the limit of {limit} per document")
        };
        Item::Skipped(Skipped {
            id,
            kind: SkipKind::TooLarge,
            reason,
        })
    }

    /// The item of a document over the limit whose size is not known (a stream, a device, a
    /// file that grew): reading stopped past the limit.
    fn too_large_unread(&self, id: String) -> Item {
        Item::Skipped(Skipped {
            id,
            kind: SkipKind::TooLarge,
            reason: format!(
                "over the limit of {} per document (not read further)",
                human(self.max_doc_bytes)
            ),
        })
    }

    /// Reads one file as a document: files over [`Reader::max_doc_bytes`], binary and empty
    /// files are skipped, HTML is stripped (by extension `.html`/`.htm`/`.xhtml`, or by
    /// content).
    pub fn read_file(&self, path: &Path, id: String) -> Item {
        self.read_file_then(path, id, |item| item)
    }

    /// Reads one file as [`Reader::read_file`] does and hands the item to `f`; a large file is
    /// read and handed over in the one lane for large documents.
    fn read_file_then<T>(&self, path: &Path, id: String, f: impl FnOnce(Item) -> T) -> T {
        let unreadable = |id, e: std::io::Error| {
            Item::Skipped(Skipped {
                id,
                kind: SkipKind::Unreadable(e.kind()),
                reason: format!("cannot read: {e}"),
            })
        };
        let mut file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) => return f(unreadable(id, e)),
        };
        let size = file.metadata().map_or(0, |m| m.len());
        if size > self.max_doc_bytes {
            return f(self.too_large(id, size));
        }
        in_lane(size, || {
            let mut bytes = Vec::with_capacity(size as usize + 1);
            // At most one byte over the limit, in case the file grew since its size was read.
            if let Err(e) = (&mut file)
                .take(self.max_doc_bytes + 1)
                .read_to_end(&mut bytes)
            {
                return f(unreadable(id, e));
            }
            drop(file);
            if bytes.len() as u64 > self.max_doc_bytes {
                return f(self.too_large_unread(id));
            }
            f(from_vec(id, None, bytes, html_by_name(path)))
        })
    }

    /// Reads every source and hands the items to `sink` in input order, in batches processed
    /// in parallel by `map` (e.g. fingerprinting): about `batch` files of a directory, or about
    /// 4 MiB of JSON Lines or of Parquet rows' text, at a time. Reading, mapping and the sink
    /// overlap: a JSON Lines file is mapped (a stream of them is read ahead on a reader thread,
    /// as Parquet is decoded), the rayon pool maps batch i (splitting lines, decoding and
    /// parsing each record's JSON and at once mapping it) while the calling thread sinks batch
    /// i − 1, so that every core stays busy. `on_count` learns how many
    /// items are known to be coming, when a directory has been listed or a Parquet file
    /// opened. Returns the number of symlinks and special files not followed.
    pub fn for_each_batch<T: Send>(
        &self,
        sources: &[Source],
        batch: usize,
        map: impl Fn(Item) -> T + Sync,
        mut on_count: impl FnMut(u64),
        mut sink: impl FnMut(Vec<T>) -> Result<()>,
    ) -> Result<usize> {
        let mut non_regular = 0;
        let mut overlap = Overlap { pending: None };
        for source in sources {
            match source {
                Source::Dir(dir) => {
                    let listing = list(dir);
                    non_regular += listing.non_regular;
                    on_count((listing.files.len() + listing.unreadable.len()) as u64);
                    if !listing.unreadable.is_empty() {
                        let skipped = listing.unreadable;
                        overlap.step(
                            || skipped.into_iter().map(|s| map(Item::Skipped(s))).collect(),
                            &mut sink,
                        )?;
                    }
                    for chunk in listing.files.chunks(batch.max(1)) {
                        overlap.step(
                            || {
                                chunk
                                    .par_iter()
                                    .map(|(path, id)| self.read_file_then(path, id.clone(), &map))
                                    .collect()
                            },
                            &mut sink,
                        )?;
                    }
                }
                Source::File(path) => {
                    on_count(1);
                    let id = path
                        .file_name()
                        .map(|n| id_of_name(n).into_owned())
                        .unwrap_or_else(|| path.display().to_string());
                    overlap.step(|| vec![self.read_file_then(path, id, &map)], &mut sink)?;
                }
                Source::Jsonl(path) => {
                    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
                    let name = path.display().to_string();
                    match mapped(&file) {
                        Some(m) if compression(&m).is_some() => {
                            // Else every line of it would be reported as invalid JSON.
                            return Err(Error::Invalid(format!(
                                "{name} is {}-compressed: decompress it first, or pipe the decompressed records to standard input (-)",
                                compression(&m).unwrap_or_default()
                            )));
                        }
                        Some(m) => self.jsonl_mapped(&m, &name, &map, &mut overlap, &mut sink)?,
                        None => self.jsonl(file, &name, &map, &mut overlap, &mut sink)?,
                    }
                }
                #[cfg(feature = "parquet")]
                Source::Parquet(path) => {
                    self.parquet(path, &map, &mut on_count, &mut overlap, &mut sink)?;
                }
                #[cfg(not(feature = "parquet"))]
                Source::Parquet(path) => return Err(no_parquet(path)),
                Source::Stdin => {
                    let mut stdin = std::io::stdin();
                    let (format, head) = match self.stdin {
                        StdinFormat::Auto => sniff(&mut stdin).map_err(|e| Error::io("-", e))?,
                        f => (f, Vec::new()),
                    };
                    match format {
                        StdinFormat::Jsonl | StdinFormat::Auto => {
                            let input = std::io::Cursor::new(head).chain(stdin);
                            self.jsonl(input, "stdin", &map, &mut overlap, &mut sink)?;
                        }
                        StdinFormat::Text | StdinFormat::Html => {
                            let html = (format == StdinFormat::Html).then_some(true);
                            let item = self.read_one(head, stdin, html);
                            overlap.step(|| vec![map(item)], &mut sink)?;
                        }
                    }
                }
            }
        }
        overlap.finish(&mut sink)?;
        Ok(non_regular)
    }

    /// One document from `head` and then `rest` (standard input), with the id
    /// [`Reader::stdin_id`] (`-` by default).
    fn read_one(&self, mut head: Vec<u8>, rest: impl Read, html: Option<bool>) -> Item {
        let id = self.stdin_id.clone().unwrap_or_else(|| "-".to_string());
        let room = (self.max_doc_bytes + 1).saturating_sub(head.len() as u64);
        if let Err(e) = rest.take(room).read_to_end(&mut head) {
            return Item::Skipped(Skipped {
                id,
                kind: SkipKind::Unreadable(e.kind()),
                reason: format!("cannot read: {e}"),
            });
        }
        if head.len() as u64 > self.max_doc_bytes {
            // Not read further: the writer learns it by a closed pipe.
            return self.too_large_unread(id);
        }
        in_lane(head.len() as u64, || from_vec(id, None, head, html))
    }

    /// Reads JSON Lines from `reader` (named `name` in ids and messages).
    fn jsonl<T: Send>(
        &self,
        reader: impl Read + Send,
        name: &str,
        map: &(impl Fn(Item) -> T + Sync),
        overlap: &mut Overlap<T>,
        sink: &mut impl FnMut(Vec<T>) -> Result<()>,
    ) -> Result<()> {
        let limit = self.max_doc_bytes;
        let budget = Arc::new(Budget::default());
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Piece>>(2);
            let reader_budget = Arc::clone(&budget);
            s.spawn(move || read_pieces(reader, limit, &reader_budget, tx));
            for piece in rx {
                match piece.map_err(|e| Error::io(name, e))? {
                    Piece::TooLong { line, bytes } => {
                        let item = self.too_large(format!("{name}:{line}"), bytes);
                        overlap.step(|| vec![map(item)], sink)?;
                    }
                    Piece::Lines(chunk) => {
                        let first = chunk.first_line;
                        overlap.step(|| self.records(chunk, first, &mut 0, name, map), sink)?;
                    }
                }
            }
            Ok(())
        })
    }

    /// Reads JSON Lines from a file mapped into memory (named `name` in ids and messages): the
    /// same chunks of whole lines as [`Reader::jsonl`] makes, parsed where the page cache holds
    /// them instead of copied out first, and each chunk's pages unmapped once it is parsed.
    fn jsonl_mapped<T: Send>(
        &self,
        file: &memmap2::Mmap,
        name: &str,
        map: &(impl Fn(Item) -> T + Sync),
        overlap: &mut Overlap<T>,
        sink: &mut impl FnMut(Vec<T>) -> Result<()>,
    ) -> Result<()> {
        let bytes = &file[..];
        let (mut start, mut line) = (0, 1);
        while start < bytes.len() {
            let want = (start + JSONL_CHUNK).min(bytes.len());
            let end = memchr::memchr(b'\n', &bytes[want..]).map_or(bytes.len(), |i| want + i + 1);
            let chunk = MappedChunk { file, start, end };
            let mut lines = 0;
            overlap.step(|| self.records(chunk, line, &mut lines, name, map), sink)?;
            (start, line) = (end, line + lines);
        }
        Ok(())
    }

    /// The items of one chunk of JSON Lines, in parallel: each record parsed and at once mapped
    /// (while its text is still in the core's cache), a large one in the lane; the chunk's
    /// bytes let go once every record is mapped. Sets `newlines` to the chunk's newlines.
    fn records<T: Send>(
        &self,
        chunk: impl AsRef<[u8]>,
        first_line: usize,
        newlines: &mut usize,
        name: &str,
        map: &(impl Fn(Item) -> T + Sync),
    ) -> Vec<T> {
        // The lines as `split` on `\n` gives them, found with `memchr` (a byte-by-byte split
        // cost 4% of a build's CPU).
        let bytes = chunk.as_ref();
        let (mut start, mut ends) = (0, 0);
        let lines: Vec<(usize, &[u8])> = memchr::memchr_iter(b'\n', bytes)
            .chain(std::iter::once(bytes.len()))
            .enumerate()
            .map(|(i, end)| {
                let line = &bytes[start..end];
                (start, ends) = (end + 1, i);
                (first_line + i, line)
            })
            .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
            .collect();
        // The last piece (after the last newline) has the number of newlines as its index.
        *newlines = ends;
        let items = lines
            .into_par_iter()
            .map(|(no, line)| {
                let id = format!("{name}:{no}");
                let size = line.len() as u64;
                if size > self.max_doc_bytes {
                    return map(self.too_large(id, size));
                }
                in_lane(size, || {
                    let bom = line.starts_with(b"\xef\xbb\xbf");
                    let line = if bom { &line[3..] } else { line };
                    let item = match std::str::from_utf8(line) {
                        Ok(line) => json_record(line, id, no, &self.keys),
                        Err(_) => {
                            let d = text::decode(line);
                            match json_record(&d.text, id, no, &self.keys) {
                                Item::Doc(mut doc) => {
                                    doc.invalid_utf8 = d.invalid_utf8;
                                    Item::Doc(doc)
                                }
                                skipped => skipped,
                            }
                        }
                    };
                    map(item)
                })
            })
            .collect();
        drop(chunk);
        items
    }
}

/// A regular file mapped read-only for sequential reading; `None` for anything else (a pipe, a
/// device) or when mapping fails, which [`Reader::jsonl`] then reads.
fn mapped(file: &std::fs::File) -> Option<memmap2::Mmap> {
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    // SAFETY: the map is only read. A file truncated by another program while it is read makes
    // a read of the lost pages fault (SIGBUS), as for every mapped input (see `Reader`).
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

/// Whole lines of a mapped file, `start..end`; dropped once parsed, which unmaps their pages (a
/// file's pages stay in the page cache, and a later read maps them again), so that what was
/// parsed does not count as resident.
struct MappedChunk<'a> {
    file: &'a memmap2::Mmap,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for MappedChunk<'_> {
    fn as_ref(&self) -> &[u8] {
        &self.file[self.start..self.end]
    }
}

impl Drop for MappedChunk<'_> {
    fn drop(&mut self) {
        unmap_pages(self.file, self.start, self.end);
    }
}

/// Unmaps the pages of `map` from the one `start` is in up to the one `end` is in, which stays
/// mapped (the next chunk or window starts in it). The file's pages stay in the page cache, and
/// a later read maps them again.
fn unmap_pages(map: &memmap2::Mmap, start: usize, end: usize) {
    #[cfg(unix)]
    {
        // The map starts on a page boundary, so offsets on page multiples are page-aligned
        // (16 or 64 KiB pages on some ARM systems, 4 KiB elsewhere). memmap2 would align the
        // start down itself, but the end must stop before the page `end` is in.
        let page = page_size();
        let (from, to) = (start / page * page, end / page * page);
        if from < to {
            // SAFETY: a read-only file mapping: pages touched again after MADV_DONTNEED are
            // read from the file, with the same contents.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
            };
        }
    }
    #[cfg(not(unix))]
    let _ = (map, start, end);
}

/// The system's page size (4 KiB when it cannot be read).
#[cfg(unix)]
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf reads a constant of the system and has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(n)
            .ok()
            .filter(|n| n.is_power_of_two())
            .unwrap_or(4096)
    })
}

impl AsRef<[u8]> for Chunk {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// Reads the first bytes of `input` up to its first non-blank byte: JSON Lines when that is
/// `{`, one document otherwise (and for empty input). Returns the bytes read.
fn sniff(input: &mut impl Read) -> std::io::Result<(StdinFormat, Vec<u8>)> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match input.read(&mut byte) {
            Ok(0) => return Ok((StdinFormat::Text, head)),
            Ok(_) => {
                head.push(byte[0]);
                // A UTF-8 byte order mark may come first.
                let rest = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
                if rest.iter().all(u8::is_ascii_whitespace) || b"\xef\xbb\xbf".starts_with(&head) {
                    continue;
                }
                let format = if rest.trim_ascii_start().starts_with(b"{") {
                    StdinFormat::Jsonl
                } else {
                    StdinFormat::Text
                };
                return Ok((format, head));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The compression format whose magic bytes `bytes` start with, if any: a compressed file is
/// read as the binary it is, and the message says what to do about it.
pub fn compression(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x1f, 0x8b, ..] => Some("gzip"),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Some("zstd"),
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => Some("xz"),
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some("bzip2"),
        [0x04, 0x22, 0x4d, 0x18, ..] => Some("lz4"),
        [b'P', b'K', 3, 4, ..] => Some("zip"),
        _ => None,
    }
}

/// A document from raw bytes (see [`Reader::read_file`]).
pub fn from_bytes(id: String, title: Option<String>, bytes: &[u8], html: Option<bool>) -> Item {
    from_vec(id, title, bytes.to_vec(), html)
}

/// A document from owned raw bytes: valid UTF-8 becomes its text without a copy.
pub fn from_vec(id: String, title: Option<String>, bytes: Vec<u8>, html: Option<bool>) -> Item {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Item::Skipped(Skipped {
            id,
            kind: SkipKind::Empty,
            reason: "empty".into(),
        });
    }
    if let Some(decoded) = text::decode_utf16(&bytes) {
        return from_text(id, title, decoded.text, html, decoded.invalid_utf8);
    }
    if text::looks_binary(&bytes) {
        return Item::Skipped(Skipped {
            id,
            kind: SkipKind::Binary,
            reason: match compression(&bytes) {
                // An index below an input directory (a set's segments among them).
                _ if bytes.starts_with(&crate::format::MAGIC) => "a pocketdex index (it keeps no text to index: not a document)".into(),
                // A Spark output directory's part files, or one piped in.
                _ if bytes.starts_with(b"PAR1") => "binary (a Parquet file, whose rows are read only from a file given by name, ending in .parquet, not below a directory or from standard input)".into(),
                // Office documents and EPUB books are zip archives too.
                Some("zip") => "binary (a zip archive, as office documents and EPUB books are: extract its text first)".into(),
                Some(format) => format!("binary ({format}-compressed: decompress it first)"),
                None => "binary (NUL or control bytes)".into(),
            },
        });
    }
    let (raw, invalid_utf8) = match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..3);
            }
            (text, 0)
        }
        Err(e) => {
            let decoded = text::decode(e.as_bytes());
            (decoded.text, decoded.invalid_utf8)
        }
    };
    from_text(id, title, raw, html, invalid_utf8)
}

fn from_text(
    id: String,
    title: Option<String>,
    raw: String,
    html: Option<bool>,
    invalid_utf8: usize,
) -> Item {
    let text = match text::plain_text(&raw, html) {
        std::borrow::Cow::Borrowed(_) => raw,
        std::borrow::Cow::Owned(t) => t,
    };
    if text.trim().is_empty() {
        return Item::Skipped(Skipped {
            id,
            kind: SkipKind::NoText,
            reason: "no text (empty after removing markup)".into(),
        });
    }
    Item::Doc(Document {
        id,
        title,
        text,
        invalid_utf8,
    })
}

/// The fields of a JSON Lines record that pocketdex reads; the others are skipped unparsed.
#[derive(Default)]
struct JsonDoc {
    id: Option<Scalar>,
    text: Option<Scalar>,
    title: Option<Scalar>,
}

/// A field's value as pocketdex can use it: its type is judged after parsing, so that a record
/// with a field of the wrong type is reported as such, not as invalid JSON.
enum Scalar {
    Null,
    Str(String),
    /// An integer within 64 bits, as written.
    Int(String),
    /// A number with a fraction or an exponent, or an integer beyond 64 bits.
    Float(f64),
    Bool(bool),
    Array,
    Object,
}

impl Scalar {
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Null => "null",
            Scalar::Str(_) => "a string",
            Scalar::Int(_) => "an integer",
            Scalar::Float(_) => "a number with a fraction or an exponent (or beyond 64 bits)",
            Scalar::Bool(_) => "a boolean",
            Scalar::Array => "an array",
            Scalar::Object => "an object",
        }
    }
}

impl<'de> serde::Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Scalar, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> serde::de::Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E>(self) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Int(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Int(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Scalar, E> {
        Ok(Scalar::Str(v))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Scalar, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Scalar::Array)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Scalar, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(Scalar::Object)
    }
}

/// Which of [`Keys`] a field of a record is.
enum Field {
    Id,
    Text,
    Title,
    Other,
}

/// Deserializes a record's fields as [`Keys`] names them (what `#[derive(Deserialize)]` does
/// for fixed names, with names chosen at run time): one pass, no map of the whole record.
#[derive(Clone, Copy)]
struct RecordSeed<'k>(&'k Keys);

impl<'de> serde::de::DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = JsonDoc;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<JsonDoc, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for RecordSeed<'_> {
    type Value = JsonDoc;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<JsonDoc, A::Error> {
        use serde::de::Error as _;
        let mut doc = JsonDoc::default();
        let duplicate = |name: &str| A::Error::custom(format!("duplicate field `{name}`"));
        while let Some(field) = map.next_key_seed(FieldSeed(self.0))? {
            match field {
                Field::Id if doc.id.is_some() => return Err(duplicate(&self.0.id)),
                Field::Id => doc.id = Some(map.next_value()?),
                Field::Text if doc.text.is_some() => return Err(duplicate(&self.0.text)),
                Field::Text => doc.text = Some(map.next_value()?),
                Field::Title if doc.title.is_some() => return Err(duplicate(&self.0.title)),
                Field::Title => doc.title = Some(map.next_value()?),
                Field::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(doc)
    }
}

/// A record's key, told by name without being copied.
struct FieldSeed<'k>(&'k Keys);

impl<'de> serde::de::DeserializeSeed<'de> for FieldSeed<'_> {
    type Value = Field;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Field, D::Error> {
        d.deserialize_str(self)
    }
}

impl serde::de::Visitor<'_> for FieldSeed<'_> {
    type Value = Field;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> std::result::Result<Field, E> {
        let keys = self.0;
        Ok(if name == keys.text {
            Field::Text
        } else if name == keys.id {
            Field::Id
        } else if name == keys.title {
            Field::Title
        } else {
            Field::Other
        })
    }
}

/// The default [`Keys`], for the functions that take none.
static DEFAULT_KEYS: std::sync::LazyLock<Keys> = std::sync::LazyLock::new(Keys::default);

/// Parses one JSON Lines record with the default [`Keys`] (see [`Reader::from_json_line`]).
pub fn from_json_line(line: &str, fallback_id: String) -> Item {
    json_record(line, fallback_id, 0, &DEFAULT_KEYS)
}

impl Reader {
    /// Parses one JSON Lines record with [`Reader::keys`]; `fallback_id` names it when it has
    /// no id. Positions in messages are within the record.
    pub fn from_json_line(&self, line: &str, fallback_id: String) -> Item {
        json_record(line, fallback_id, 0, &self.keys)
    }
}

/// Parses the record on line `line_no` of its file (0: unknown), so that a message about
/// invalid JSON gives the file's line and column.
fn json_record(line: &str, fallback_id: String, line_no: usize, keys: &Keys) -> Item {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(line);
    let parsed = RecordSeed(keys)
        .deserialize(&mut de)
        .and_then(|doc| de.end().map(|()| doc));
    let doc = match parsed {
        Ok(d) => d,
        Err(e) => {
            // serde_json ends its message with the position within the record.
            let message = e.to_string();
            let what = message
                .rfind(" at line ")
                .map_or(message.as_str(), |i| &message[..i]);
            let at = match line_no {
                0 => format!("column {}", e.column()),
                n => format!("line {n}, column {}", e.column()),
            };
            return Item::Skipped(Skipped {
                id: fallback_id,
                kind: SkipKind::InvalidJson,
                reason: format!("invalid JSON at {at}: {what}"),
            });
        }
    };
    let wrong = |id: String, key: &str, v: &Scalar, want: &str| {
        Item::Skipped(Skipped {
            id,
            kind: SkipKind::WrongType,
            reason: format!("the {key:?} field is {}, not {want}", v.kind()),
        })
    };
    // Ids are exact: a number with a fraction or beyond 64 bits would be rounded.
    let id = match doc.id {
        None | Some(Scalar::Null) => fallback_id,
        // A blank id names nothing a user could print or delete by.
        Some(Scalar::Str(s)) if s.trim().is_empty() => fallback_id,
        Some(Scalar::Str(s) | Scalar::Int(s)) => s,
        Some(v) => return wrong(fallback_id, &keys.id, &v, "a string or an integer"),
    };
    // A title that is a number or a boolean becomes its text; null is none.
    let title = match doc.title {
        None | Some(Scalar::Null) => None,
        Some(Scalar::Str(s) | Scalar::Int(s)) => Some(s),
        Some(Scalar::Float(f)) => Some(f.to_string()),
        Some(Scalar::Bool(b)) => Some(b.to_string()),
        Some(v) => return wrong(id, &keys.title, &v, "a string"),
    };
    match doc.text {
        Some(Scalar::Str(text)) if !text.trim().is_empty() => from_text(id, title, text, None, 0),
        Some(Scalar::Str(_)) => Item::Skipped(Skipped {
            id,
            kind: SkipKind::Empty,
            reason: "empty".into(),
        }),
        None => Item::Skipped(Skipped {
            id,
            kind: SkipKind::NoTextField,
            reason: format!("no {:?} field", keys.text),
        }),
        // As the Parquet reader says of a null text.
        Some(Scalar::Null) => Item::Skipped(Skipped {
            id,
            kind: SkipKind::NoTextField,
            reason: format!("no text ({:?} is null)", keys.text),
        }),
        Some(v) => wrong(id, &keys.text, &v, "a string"),
    }
}

/// Reads every source with the default [`Reader`] (see [`Reader::for_each_batch`]).
pub fn for_each_batch<T: Send>(
    sources: &[Source],
    batch: usize,
    map: impl Fn(Item) -> T + Sync,
    on_count: impl FnMut(u64),
    sink: impl FnMut(Vec<T>) -> Result<()>,
) -> Result<usize> {
    Reader::default().for_each_batch(sources, batch, map, on_count, sink)
}

/// The texts of every document of `sources` in order, read with the default [`Reader`];
/// skipped documents are left out. For tools and benchmarks that want the texts in memory.
pub fn texts(sources: &[Source]) -> Result<Vec<String>> {
    let mut texts = Vec::new();
    for_each_batch(
        sources,
        4096,
        |i| i,
        |_| {},
        |b| {
            texts.extend(b.into_iter().filter_map(|i| match i {
                Item::Doc(d) => Some(d.text),
                Item::Skipped(_) => None,
            }));
            Ok(())
        },
    )?;
    Ok(texts)
}

/// Runs the map of one batch on the rayon pool while the calling thread sinks the previous
/// batch's results.
struct Overlap<T> {
    pending: Option<Vec<T>>,
}

impl<T: Send> Overlap<T> {
    fn step(
        &mut self,
        work: impl FnOnce() -> Vec<T> + Send,
        sink: &mut impl FnMut(Vec<T>) -> Result<()>,
    ) -> Result<()> {
        let previous = self.pending.take();
        let (mapped, sunk) = std::thread::scope(|s| {
            let worker = s.spawn(work);
            let sunk = previous.map_or(Ok(()), &mut *sink);
            let mapped = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (mapped, sunk)
        });
        self.pending = Some(mapped);
        sunk
    }

    fn finish(&mut self, sink: &mut impl FnMut(Vec<T>) -> Result<()>) -> Result<()> {
        self.pending.take().map_or(Ok(()), sink)
    }
}

/// Bytes of JSON Lines read ahead per batch (whole lines: a longer line makes a longer batch).
const JSONL_CHUNK: usize = 4 << 20;
/// At most this many bytes of JSON Lines are read ahead of the batch being mapped, unless that
/// batch is done: a long line is not read while another is being parsed.
const READ_AHEAD: usize = 4 * JSONL_CHUNK;

/// Bytes read and not yet let go by the batch that maps them.
#[derive(Default)]
struct Budget {
    in_flight: Mutex<usize>,
    changed: Condvar,
}

impl Budget {
    /// Waits until `holding` more bytes and one more read fit, or nothing is in flight.
    fn wait_for_room(&self, holding: usize) {
        let mut n = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        while *n > 0 && *n + holding + JSONL_CHUNK > READ_AHEAD {
            n = self.changed.wait(n).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn take(self: &Arc<Self>, bytes: usize) -> Release {
        *self.in_flight.lock().unwrap_or_else(|e| e.into_inner()) += bytes;
        Release(Arc::clone(self), bytes)
    }
}

/// Gives a chunk's bytes back to the budget when the chunk is dropped.
struct Release(Arc<Budget>, usize);

impl Drop for Release {
    fn drop(&mut self) {
        *self.0.in_flight.lock().unwrap_or_else(|e| e.into_inner()) -= self.1;
        self.0.changed.notify_all();
    }
}

/// One batch of JSON Lines: whole lines, and the number of the first.
struct Chunk {
    bytes: Vec<u8>,
    first_line: usize,
    _release: Release,
}

/// What the JSON Lines reader hands over, in order.
enum Piece {
    /// Whole lines.
    Lines(Chunk),
    /// A line longer than the limit, skipped unread: its number and length.
    TooLong { line: usize, bytes: u64 },
}

/// Reads `reader` in chunks of whole lines (the last one may lack its newline) and sends them,
/// numbered, until the end or an error; a line over `limit` bytes is counted and skipped, not
/// kept. Stops when the receiver is gone.
fn read_pieces(
    mut reader: impl Read,
    limit: u64,
    budget: &Arc<Budget>,
    tx: std::sync::mpsc::SyncSender<std::io::Result<Piece>>,
) {
    // The start of the line being read (always at a line's start), then what was just read
    // after it: read straight into the chunk being made, not copied there from a buffer.
    let mut carry: Vec<u8> = Vec::new();
    let mut line = 1;
    // The bytes of a line over the limit seen so far, while it is being skipped.
    let mut skipping: Option<u64> = None;
    loop {
        budget.wait_for_room(carry.len());
        let scanned = carry.len();
        carry.reserve(JSONL_CHUNK);
        // Fill up to a chunk (reads of a pipe or terminal may be short); `read_to_end` of at
        // most a chunk reads into the spare room without zeroing it first.
        let eof = match (&mut reader)
            .take(JSONL_CHUNK as u64)
            .read_to_end(&mut carry)
        {
            Ok(n) => n < JSONL_CHUNK,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        if let Some(seen) = skipping {
            // Nothing is kept while a line is skipped: `carry` holds only what was just read.
            match memchr::memchr(b'\n', &carry) {
                None => {
                    skipping = Some(seen + carry.len() as u64);
                    carry.clear();
                }
                Some(i) => {
                    let piece = Piece::TooLong {
                        line,
                        bytes: seen + i as u64,
                    };
                    if tx.send(Ok(piece)).is_err() {
                        return;
                    }
                    skipping = None;
                    line += 1;
                    carry.drain(..=i);
                }
            }
        }
        let scanned = scanned.min(carry.len());
        let cut = if eof {
            Some(carry.len())
        } else {
            memchr::memrchr(b'\n', &carry[scanned..]).map(|i| scanned + i + 1)
        };
        if let Some(cut) = cut {
            let rest = carry[cut..].to_vec();
            carry.truncate(cut);
            let lines = memchr::memchr_iter(b'\n', &carry).count();
            if !carry.is_empty() {
                let bytes = std::mem::replace(&mut carry, rest);
                let chunk = Chunk {
                    _release: budget.take(bytes.len()),
                    bytes,
                    first_line: line,
                };
                if tx.send(Ok(Piece::Lines(chunk))).is_err() {
                    return;
                }
            } else {
                carry = rest;
            }
            line += lines;
        }
        if carry.len() as u64 > limit {
            // The line being read is over the limit already: count the rest of it, keep none.
            skipping = Some(carry.len() as u64);
            carry = Vec::new();
        }
        if eof {
            if let Some(bytes) = skipping {
                let _ = tx.send(Ok(Piece::TooLong { line, bytes }));
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_under_a_json_name_are_read_as_json_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = tmp.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.to_str().unwrap().to_string()
        };
        let lines = write(
            "a.json",
            "{\"id\": 1, \"text\": \"x\"}\n\n{\"id\": 2, \"text\": \"y\"}\n",
        );
        let bom = write("b.JSON", "\u{feff}{\"id\": 1}\r\n{\"id\": 2}");
        let pretty = write("c.json", "{\n  \"id\": 1,\n  \"text\": \"x\"\n}\n");
        let one = write("d.json", "{\"id\": 1, \"text\": \"x\"}\n");
        let array = write("e.json", "[{\"id\": 1}]\n{\"id\": 2}\n");
        let blank = write("f.json", "\n\n{\"id\": 1}\n{\"id\": 2}\n");
        let same_line = write("g.json", "{\"id\": 1} {\"id\": 2}\n");
        for (path, jsonl) in [
            (lines, true),
            (bom, true),
            (pretty, false),
            (one, false),
            (array, false),
            (blank, true),
            (same_line, false),
        ] {
            let source = Source::from_arg(&path).unwrap();
            assert_eq!(matches!(source, Source::Jsonl(_)), jsonl, "{path}");
        }
    }

    /// The page size is the kernel's: `madvise` takes ranges starting on its multiples and
    /// refuses those starting half a page in (so a 4 KiB guess fails on 16 or 64 KiB pages, and
    /// an 8 KiB one on 4 KiB pages); pages handed back read the file's bytes again.
    #[cfg(unix)]
    #[test]
    fn pages_are_handed_back_on_the_systems_page_boundaries() {
        let page = page_size();
        assert!(page.is_power_of_two() && page >= 4096, "{page}");
        let bytes: Vec<u8> = (0..4 * page).map(|i| (i % 251) as u8).collect();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &bytes).unwrap();
        // SAFETY: the test's own temporary file, which nothing else changes.
        let map = unsafe { memmap2::Mmap::map(file.as_file()) }.unwrap();
        assert_eq!(map[..], bytes[..]);
        // The kernel's own check, not memmap2's (which aligns ranges down itself).
        // SAFETY: `at + page` lies within the 4-page read-only file mapping, which reads the
        // file again after MADV_DONTNEED.
        let advise = |at: usize| unsafe {
            libc::madvise(map.as_ptr().add(at) as *mut _, page, libc::MADV_DONTNEED)
        };
        assert_eq!(advise(page), 0, "a page boundary");
        assert_ne!(advise(page / 2), 0, "half a page in is not a page boundary");
        unmap_pages(&map, page / 2, 3 * page + 5);
        assert_eq!(map[..], bytes[..]);
    }

    #[test]
    fn json_lines_records() {
        match from_json_line(
            r#"{"id": 7, "text": "<p>Hello <b>world</b></p>", "title": "T"}"#,
            "f:1".into(),
        ) {
            Item::Doc(d) => {
                assert_eq!(d.id, "7");
                assert_eq!(d.title.as_deref(), Some("T"));
                assert_eq!(
                    d.text.split_whitespace().collect::<Vec<_>>(),
                    ["Hello", "world"]
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(from_json_line("{not json", "f:2".into()), Item::Skipped(s) if s.id == "f:2")
        );
        assert!(
            matches!(from_json_line(r#"{"id":"x","text":"  "}"#, "f:3".into()), Item::Skipped(s) if s.reason == "empty")
        );
        match json_record(
            r#"{"id": "b", "text": bad}"#,
            "f:9".into(),
            9,
            &Keys::default(),
        ) {
            Item::Skipped(s) => assert_eq!(
                s.reason,
                "invalid JSON at line 9, column 21: expected value"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn records_are_read_by_their_keys() {
        let keys = Keys {
            id: "doc".into(),
            text: "body".into(),
            title: "headline".into(),
        };
        let line = r#"{"id": "not this", "doc": 12, "text": "nor this", "body": "<p>this</p>", "headline": "H", "x": [1, {"body": 2}]}"#;
        match json_record(line, "f:1".into(), 1, &keys) {
            Item::Doc(d) => {
                assert_eq!((d.id.as_str(), d.title.as_deref()), ("12", Some("H")));
                assert_eq!(d.text.trim(), "this");
            }
            other => panic!("{other:?}"),
        }
        // The default keys read the other fields of the same line.
        match from_json_line(line, "f:1".into()) {
            Item::Doc(d) => assert_eq!((d.id.as_str(), d.text.as_str()), ("not this", "nor this")),
            other => panic!("{other:?}"),
        }
        let skipped = |line: &str| match json_record(line, "f:2".into(), 2, &keys) {
            Item::Skipped(s) => (s.id, s.kind, s.reason),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            skipped(r#"{"text": "t"}"#),
            (
                "f:2".into(),
                SkipKind::NoTextField,
                "no \"body\" field".into()
            )
        );
        assert_eq!(skipped(r#"{"body": null}"#).1, SkipKind::NoTextField);
        assert_eq!(
            skipped(r#"{"body": "a", "body": "b"}"#).2,
            "invalid JSON at line 2, column 20: duplicate field `body`"
        );
        assert!(skipped(r#"["body"]"#)
            .2
            .ends_with("invalid type: sequence, expected a JSON object"));
        assert_eq!(
            skipped(r#"{"body": "a"} x"#).2.split(':').next(),
            Some("invalid JSON at line 2, column 15")
        );
    }

    /// File names that are not UTF-8 (Latin-1 archives) or hold control characters keep
    /// printable ids of their own, which lead back to their files; a UTF-8 name without control
    /// characters, backslashes and `\x` text included, is its own id.
    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_keep_distinct_ids_that_find_their_files() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let sub = std::ffi::OsStr::from_bytes(b"d\xe9j\xe0");
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        let names: [&[u8]; 10] = [
            b"caf\xe9.txt",
            b"caf\xe8.txt",
            b"caf\xc3\xa9.txt",
            b"a\\x41 \xff.txt",
            b"a\\x41.txt",
            b"d\xe9j\xe0/r\xe9sum\xe9.txt",
            b"line\nbreak\\.txt",
            b"tab\tand\xc2\x85next line.txt",
            b"del\x7f\xff.txt",
            b"  ",
        ];
        for name in names {
            std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(name)), "text").unwrap();
        }
        let listing = list(dir.path());
        let mut ids: Vec<&str> = listing.files.iter().map(|(_, id)| id.as_str()).collect();
        ids.sort_unstable();
        assert_eq!(
            ids,
            [
                "\\x20\\x20",
                "a\\x41.txt",
                "a\\x5Cx41 \\xFF.txt",
                "caf\\xE8.txt",
                "caf\\xE9.txt",
                "café.txt",
                "d\\xE9j\\xE0/r\\xE9sum\\xE9.txt",
                "del\\x7F\\xFF.txt",
                "line\\x0Abreak\\x5C.txt",
                "tab\\x09and\\xC2\\x85next line.txt",
            ]
        );
        for (path, id) in &listing.files {
            assert_eq!(&dir.path().join(path_of_id(id)), path, "{id}");
        }
        // A file given by name has the same id as below a directory.
        let one = dir.path().join(std::ffi::OsStr::from_bytes(names[0]));
        assert_eq!(id_of_name(one.file_name().unwrap()), "caf\\xE9.txt");
    }

    /// Lines counted in parts, of any size down to a byte, are the file's lines: with and
    /// without a last newline, empty lines, an empty file; a pipe's are not known.
    #[test]
    fn lines_are_counted_in_parts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.jsonl");
        for text in [
            "",
            "\n",
            "{}",
            "{}\n",
            "{\"text\": \"a\"}\n\n{\"text\": \"b\"}\n{\"text\": \"c\"}",
            "a\nbb\nccc\ndddd\neeeee\nffffff\nggggggg\n",
        ] {
            std::fs::write(&path, text).unwrap();
            let lines = text.lines().count() as u64;
            for part in [1, 2, 3, 7, 64 << 20] {
                assert_eq!(
                    count_lines(&path, part).unwrap(),
                    Some(lines),
                    "{text:?} in parts of {part}"
                );
                // Both ways of counting, whichever `count_lines` took: read, and mapped in
                // windows down to a byte.
                let len = text.len() as u64;
                assert_eq!(
                    count_read(&path, len, part).unwrap(),
                    lines,
                    "{text:?} read"
                );
                if !text.is_empty() {
                    let file = std::fs::File::open(&path).unwrap();
                    let map = mapped(&file).unwrap();
                    for window in [1, 2, 5, JSONL_CHUNK] {
                        let n = count_mapped(&map, part, window);
                        assert_eq!(n, lines, "{text:?} mapped in windows of {window}");
                    }
                }
            }
        }
        assert_eq!(count_lines(Path::new("/dev/null"), 1).unwrap(), None);
    }

    #[cfg(not(feature = "parquet"))]
    #[test]
    fn parquet_needs_the_feature() {
        let source = [Source::Parquet("docs.parquet".into())];
        let read = for_each_batch(&source, 1, |i| i, |_| {}, |_| Ok(()));
        let message = read.unwrap_err().to_string();
        assert!(
            message.starts_with("docs.parquet: this build of pocketdex cannot read Parquet files"),
            "{message}"
        );
        assert_eq!(count_at_most(&source).unwrap_err().to_string(), message);
    }

    #[test]
    fn empty_and_binary_bytes_are_skipped() {
        assert!(
            matches!(from_bytes("e".into(), None, b" \n\t", None), Item::Skipped(s) if s.reason == "empty")
        );
        assert!(
            matches!(from_bytes("b".into(), None, b"\x00\x01\x02PNG", None), Item::Skipped(s) if s.reason.starts_with("binary"))
        );
        assert!(
            matches!(from_bytes("h".into(), None, b"<html><script>x</script></html>", None), Item::Skipped(s) if s.reason.starts_with("no text"))
        );
        match from_bytes("u".into(), None, b"caf\xe9 au lait", None) {
            Item::Doc(d) => assert_eq!(d.invalid_utf8, 1),
            other => panic!("{other:?}"),
        }
        match from_bytes("bom".into(), None, b"\xef\xbb\xbfplain words", None) {
            Item::Doc(d) => assert_eq!(d.text, "plain words"),
            other => panic!("{other:?}"),
        }
        // UTF-16 with a byte order mark (what Windows calls Unicode) is text, not binary;
        // without one it stays binary (its NUL bytes).
        let utf16: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain(
                "<p>Grüße aus Köln</p>"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            )
            .collect();
        match from_bytes("w".into(), None, &utf16, None) {
            Item::Doc(d) => assert_eq!((d.text.trim(), d.invalid_utf8), ("Grüße aus Köln", 0)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            from_bytes("n".into(), None, &utf16[2..], None),
            Item::Skipped(s) if s.kind == SkipKind::Binary
        ));
    }

    /// A field of the wrong type is reported as such (the JSON is valid); ids are exact;
    /// titles that are numbers or booleans are their JSON text.
    #[test]
    fn fields_of_the_wrong_type() {
        let read = |line: &str| json_record(line, "f:3".into(), 3, &Keys::default());
        let skipped = |line: &str| match read(line) {
            Item::Skipped(s) => (s.id, s.kind, s.reason),
            other => panic!("{other:?}"),
        };
        let doc = |line: &str| match read(line) {
            Item::Doc(d) => (d.id, d.title),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            doc(r#"{"id": 18446744073709551615, "title": 1984, "text": "t"}"#),
            ("18446744073709551615".into(), Some("1984".into()))
        );
        assert_eq!(
            doc(r#"{"id": -7, "title": true, "text": "t"}"#),
            ("-7".into(), Some("true".into()))
        );
        assert_eq!(
            doc(r#"{"id": null, "title": null, "text": "t"}"#),
            ("f:3".into(), None)
        );
        // A blank id is no name: the record's place is.
        for blank in [r#""""#, r#"" ""#, r#""\t\n""#] {
            let line = format!(r#"{{"id": {blank}, "text": "t"}}"#);
            assert_eq!(doc(&line), ("f:3".into(), None), "{line}");
        }
        assert_eq!(doc(r#"{"id": " a ", "text": "t"}"#).0, " a ");
        assert_eq!(
            skipped(r#"{"id": 1e3, "text": "t"}"#),
            (
                "f:3".into(),
                SkipKind::WrongType,
                "the \"id\" field is a number with a fraction or an exponent (or beyond 64 bits), not a string or an integer".into()
            )
        );
        assert_eq!(
            skipped(r#"{"id": 18446744073709551616, "text": "t"}"#).1,
            SkipKind::WrongType
        );
        assert_eq!(
            skipped(r#"{"id": ["a"], "text": "t"}"#).2,
            "the \"id\" field is an array, not a string or an integer"
        );
        assert_eq!(
            skipped(r#"{"id": "x", "title": {"en": "T"}, "text": "t"}"#),
            (
                "x".into(),
                SkipKind::WrongType,
                "the \"title\" field is an object, not a string".into()
            )
        );
        assert_eq!(
            skipped(r#"{"id": "x", "text": 12}"#).2,
            "the \"text\" field is an integer, not a string"
        );
        assert_eq!(skipped(r#"{"text": null}"#).1, SkipKind::NoTextField);
    }

    /// Invalid UTF-8 in a JSON Lines record is replaced and counted, as in a file.
    #[test]
    fn invalid_utf8_in_records_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.jsonl");
        std::fs::write(
            &path,
            b"{\"id\": \"a\", \"text\": \"caf\xe9 au \xff lait\"}\n",
        )
        .unwrap();
        let mut docs = Vec::new();
        for_each_batch(
            &[Source::Jsonl(path)],
            8,
            |item| item,
            |_| {},
            |batch| {
                docs.extend(batch);
                Ok(())
            },
        )
        .unwrap();
        match &docs[..] {
            [Item::Doc(d)] => assert_eq!(
                (d.text.as_str(), d.invalid_utf8),
                ("caf\u{fffd} au \u{fffd} lait", 2)
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Every line of `input` read with `limit` through the reader thread: (first line number,
    /// text) of each piece, long lines as (number, "too long: N").
    fn pieces(input: &[u8], limit: u64) -> Vec<(usize, String)> {
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        let budget = Arc::new(Budget::default());
        let input = input.to_vec();
        let reader = std::thread::spawn(move || read_pieces(&input[..], limit, &budget, tx));
        let out = rx
            .into_iter()
            .map(|p| match p.unwrap() {
                Piece::Lines(c) => (c.first_line, String::from_utf8(c.bytes.clone()).unwrap()),
                Piece::TooLong { line, bytes } => (line, format!("too long: {bytes}")),
            })
            .collect();
        reader.join().unwrap();
        out
    }

    /// A JSON Lines file read where it is mapped gives exactly the items that reading it through
    /// a stream gives (a pipe's way): the same ids (line numbers), texts, titles and skips in
    /// the same order, across several chunks, with blank and CRLF lines, a BOM, invalid UTF-8
    /// and JSON, lines over the limit (one longer than a chunk) and no final newline.
    #[test]
    fn mapped_json_lines_are_the_streamed_lines() {
        let mut input = Vec::new();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        input.extend_from_slice(b"\xef\xbb\xbf{\"id\": \"first\", \"text\": \"bom\"}\n");
        let mut line = 1;
        while input.len() < 3 * JSONL_CHUNK + 12_345 {
            line += 1;
            match next(400) {
                0..=9 => input.extend_from_slice(b"\n"),
                10..=19 => input.extend_from_slice(b"  \r\n"),
                20..=29 => input.extend_from_slice(b"{\"text\": \"bad\xff utf-8\"}\n"),
                30..=39 => input.extend_from_slice(b"{not json\n"),
                40 => {
                    let long = "y ".repeat(next(3) as usize * 1_000_000 + 30_000);
                    input.extend_from_slice(format!("{{\"text\": \"{long}\"}}\n").as_bytes());
                }
                _ => {
                    let words = "word ".repeat(next(400) as usize + 1);
                    let title = if next(2) == 0 {
                        ", \"title\": \"T\""
                    } else {
                        ""
                    };
                    let end = if next(5) == 0 { "\r\n" } else { "\n" };
                    let record =
                        format!("{{\"id\": \"d{line}\", \"text\": \"{words}\"{title}}}{end}");
                    input.extend_from_slice(record.as_bytes());
                }
            }
        }
        input.extend_from_slice(b"{\"text\": \"no final newline\"}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.jsonl");
        std::fs::write(&path, &input).unwrap();
        let reader = Reader {
            max_doc_bytes: 100_000,
            ..Reader::default()
        };
        let describe = |item: Item| format!("{item:?}");
        let mut mapped_items = Vec::new();
        reader
            .for_each_batch(
                &[Source::Jsonl(path.clone())],
                1,
                describe,
                |_| {},
                |b| {
                    mapped_items.extend(b);
                    Ok(())
                },
            )
            .unwrap();
        let mut streamed = Vec::new();
        let mut overlap = Overlap { pending: None };
        let mut sink = |b: Vec<String>| {
            streamed.extend(b);
            Ok(())
        };
        let name = path.display().to_string();
        reader
            .jsonl(&input[..], &name, &describe, &mut overlap, &mut sink)
            .unwrap();
        overlap.finish(&mut sink).unwrap();
        assert!(mapped_items.len() > 1000, "{} items", mapped_items.len());
        assert!(mapped_items.iter().any(|i| i.contains("TooLarge")));
        assert!(mapped_items.iter().any(|i| i.contains("InvalidJson")));
        assert!(mapped_items.iter().any(|i| i.contains("no final newline")));
        assert_eq!(mapped_items.len(), streamed.len());
        for (i, (m, s)) in mapped_items.iter().zip(&streamed).enumerate() {
            assert_eq!(m, s, "item {i}");
        }
    }

    #[test]
    fn lines_over_the_limit_are_counted_not_kept() {
        let long = "x".repeat(JSONL_CHUNK * 2 + 5);
        let input = format!("a\n{long}\nb\nc");
        assert_eq!(
            pieces(input.as_bytes(), 100),
            [
                (1, "a\n".to_string()),
                (2, format!("too long: {}", long.len())),
                (3, "b\nc".to_string())
            ]
        );
        // The last line, without its newline.
        let input = format!("a\n{long}");
        assert_eq!(
            pieces(input.as_bytes(), 100),
            [
                (1, "a\n".to_string()),
                (2, format!("too long: {}", long.len()))
            ]
        );
        // Under the limit, one piece.
        assert_eq!(pieces(b"a\nb\n", 100), [(1, "a\nb\n".to_string())]);
    }

    #[test]
    fn stdin_is_sniffed_by_its_first_non_blank_byte() {
        let sniffed = |input: &[u8]| sniff(&mut &input[..]).unwrap();
        assert_eq!(
            sniffed(b"  \n{\"text\": 1}\n"),
            (StdinFormat::Jsonl, b"  \n{".to_vec())
        );
        assert_eq!(sniffed(b"\xef\xbb\xbf{").0, StdinFormat::Jsonl);
        assert_eq!(sniffed(b"Hello {").0, StdinFormat::Text);
        assert_eq!(sniffed(b"<html>").0, StdinFormat::Text);
        assert_eq!(sniffed(b"").0, StdinFormat::Text);
    }

    #[test]
    fn files_over_the_limit_are_skipped_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        std::fs::write(&path, "word ".repeat(1000)).unwrap();
        let small = Reader {
            max_doc_bytes: 4999,
            ..Reader::default()
        };
        match small.read_file(&path, "big.txt".into()) {
            Item::Skipped(s) => {
                assert_eq!(s.kind, SkipKind::TooLarge);
                assert_eq!(s.reason, "5000 B, over the limit of 4999 B per document");
            }
            other => panic!("{other:?}"),
        }
        let enough = Reader {
            max_doc_bytes: 5000,
            ..Reader::default()
        };
        assert!(matches!(
            enough.read_file(&path, "big.txt".into()),
            Item::Doc(_)
        ));
    }
}
