//! The one public error type of the library: every way reading, building or querying can fail.

use std::path::PathBuf;

/// Everything that can go wrong in pocketdex. Each message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error, with the path it concerns when there is one.
    #[error("{}: {source}", path.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "I/O".into()))]
    Io {
        /// The file involved, if known.
        path: Option<PathBuf>,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The bytes do not start with the pocketdex magic: not an index file at all.
    #[error("not a pocketdex index (bad magic bytes); pass a file written by `pocketdex build`")]
    BadMagic,
    /// The file is a pocketdex index of a format version this build cannot read.
    #[error("index format version {got} is not supported (this pocketdex reads versions {min} to {expected}); {}", if got > expected { "it was written by a newer pocketdex: upgrade pocketdex to read it (if none wrote it, the file is damaged: restore a good copy)" } else { "rebuild the index with this version of `pocketdex build`" }, min = crate::format::MIN_VERSION)]
    Version {
        /// The version this build reads.
        expected: u32,
        /// The version found in the file.
        got: u32,
    },
    /// The file is shorter than its header says: an interrupted copy or download.
    #[error("index is truncated: {what}; copy or rebuild the file")]
    Truncated {
        /// Which part is missing.
        what: String,
    },
    /// A structural inconsistency: the file is corrupt.
    #[error("index is corrupt: {what}; rebuild the index or restore it from a good copy")]
    Format {
        /// What is inconsistent.
        what: String,
    },
    /// A checksum did not match: the bytes changed after the file was written.
    #[error("checksum mismatch in {section} (expected {expected:#018x}, found {got:#018x}); the file is damaged: rebuild it or restore a good copy")]
    ChecksumMismatch {
        /// The region the checksum covers.
        section: &'static str,
        /// The checksum stored in the file.
        expected: u64,
        /// The checksum of the bytes as they are.
        got: u64,
    },
    /// A block of a large section does not match its hash in the block tree: found the first
    /// time a query read it (`index-format.md` §7.1).
    #[error("{}{section} block {} (at byte {offset}) does not match its hash; the file is damaged: run `pocketdex verify` on it, then rebuild it or restore a good copy", file.as_ref().map(|f| format!("{f}: ")).unwrap_or_default(), if *block == u64::MAX { "root".to_string() } else { block.to_string() })]
    BlockMismatch {
        /// The file, when the reader knows it: an index set or files queried together name
        /// the part that is damaged.
        file: Option<String>,
        /// The section.
        section: &'static str,
        /// The block's number within the section (`u64::MAX` for the tree's root).
        block: u64,
        /// The block's first byte, from the start of the file (of SUMS for the tree itself).
        offset: u64,
    },
    /// A trusted public key was given and the index's signature is missing, by another key, or
    /// does not match the file.
    #[error("signature check failed: {0}")]
    Signature(String),
    /// Invalid parameters or input given by the caller.
    #[error("{0}")]
    Invalid(String),
    /// A path that cannot be used as asked (a directory that does not exist, one that cannot be
    /// written in), found before any work was done: the message says why and what to do.
    #[error("{message}")]
    Path {
        /// The path.
        path: PathBuf,
        /// What the operating system's error would be.
        kind: std::io::ErrorKind,
        /// Its `errno`, when known.
        errno: Option<i32>,
        /// The whole message.
        message: String,
    },
    /// Another process holds an index set's writer lock.
    #[error("another pocketdex process is changing the index set {}; try again when it is done, or wait for it (`--wait`)", path.display())]
    Busy {
        /// The index set.
        path: PathBuf,
    },
    /// An error of one file among several (a segment of an index set, one of files queried
    /// together), the file named: [`Error::kind`] is the wrapped error's, so a damaged segment
    /// is as damaged as a damaged file.
    #[error("{file}: {error}{}", advice.map(|a| format!("; {a}")).unwrap_or_default())]
    InFile {
        /// The file.
        file: String,
        /// What went wrong in it.
        error: Box<Error>,
        /// What mends it, beyond what `error` says.
        advice: Option<&'static str>,
    },
    /// A document id that an index set already holds.
    #[error("{}", duplicate_id(id, file.as_deref(), *more, others))]
    DuplicateId {
        /// The id (the first of the batch the set holds).
        id: String,
        /// The file being adopted that holds it (`None`: documents being added).
        file: Option<PathBuf>,
        /// How many more ids of the documents being added the set holds: one message names
        /// them all, not one per try.
        more: u64,
        /// The first few of those.
        others: Vec<String>,
    },
}

/// The message of [`Error::DuplicateId`]: what to do differs for a document being added (take
/// another id, or replace) and a piece being adopted (its segment cannot replace a document).
fn duplicate_id(id: &str, file: Option<&std::path::Path>, more: u64, others: &[String]) -> String {
    let also = match more {
        0 => String::new(),
        n => {
            let named: Vec<String> = others.iter().map(|o| format!("{o:?}")).collect();
            let rest = if (others.len() as u64) < n {
                ", …"
            } else {
                ""
            };
            format!(" (and {n} more: {}{rest})", named.join(", "))
        }
    };
    match file {
        None if more > 0 => format!("document id {id:?} is already in the index set{also}; give the new documents other ids, or replace the old ones (`--replace`)"),
        None => format!("document id {id:?} is already in the index set; give the new document another id, or replace the old one (`--replace`)"),
        Some(f) => format!(
            "{}: document id {id:?} is already in the index set; delete it from the set first (`pocketdex delete SET ID`), or build the piece without it",
            f.display()
        ),
    }
}

impl Error {
    /// An [`Error::Path`] of `kind` about `path`, its `errno` the one the system gives that
    /// kind (`NotFound`: ENOENT, `NotADirectory`: ENOTDIR, `PermissionDenied`: EACCES).
    pub fn at_path(path: impl Into<PathBuf>, kind: std::io::ErrorKind, message: String) -> Self {
        use std::io::ErrorKind::*;
        let errno = match kind {
            NotFound => Some(2),
            PermissionDenied => Some(13),
            NotADirectory => Some(20),
            _ => None,
        };
        Error::Path {
            path: path.into(),
            kind,
            errno,
            message,
        }
    }

    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: Some(path.into()),
            source,
        }
    }

    /// The kind of the underlying I/O error, for an I/O error: how front ends tell a closed
    /// output (`BrokenPipe`) or a missing file from other failures without reading messages.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self.kind() {
            Error::Io { source, .. } => Some(source.kind()),
            Error::Path { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The error that says what kind of failure this is: the wrapped one of an
    /// [`Error::InFile`], this one otherwise. Front ends match on it (a damaged file, a bad
    /// argument, a busy set) and print the whole error.
    pub fn kind(&self) -> &Error {
        match self {
            Error::InFile { error, .. } => error.kind(),
            e => e,
        }
    }

    /// True when the bytes of an index are damaged or foreign: not an index, an unknown version,
    /// truncated, inconsistent, or failing a checksum.
    pub fn is_damage(&self) -> bool {
        matches!(
            self.kind(),
            Error::BadMagic
                | Error::Version { .. }
                | Error::Truncated { .. }
                | Error::Format { .. }
                | Error::ChecksumMismatch { .. }
                | Error::BlockMismatch { .. }
        )
    }

    /// This error, found while reading `file` (a part of a set or of files queried together),
    /// names it: the message of a damaged block, a corrupt structure or an I/O error says
    /// which file to verify and replace. Other errors are returned as they are.
    pub fn in_file(self, file: &str) -> Self {
        match self {
            Error::BlockMismatch {
                file: None,
                section,
                block,
                offset,
            } => Error::BlockMismatch {
                file: Some(file.to_owned()),
                section,
                block,
                offset,
            },
            Error::Format { what } => Error::Format {
                what: format!("{file}: {what}"),
            },
            Error::Io { path: None, source } => Error::Io {
                path: Some(file.into()),
                source,
            },
            e => e,
        }
    }

    /// A corrupt-structure error.
    pub fn format(what: impl Into<String>) -> Self {
        Error::Format { what: what.into() }
    }
}

impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Self {
        Error::Io { path: None, source }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
