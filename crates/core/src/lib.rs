//! pocketdex: near-duplicate and high-similarity search with fuzzy-fingerprints in one small,
//! memory-mapped index.
//!
//! The data flow, one module per stage:
//!
//! documents ([`corpus`]) → tokens ([`text`]) → prefix-class vector and deviations from the
//! reference ([`mod@reference`], [`fingerprint`]) → fuzzy codes and sketch ([`fingerprint`],
//! [`sketch`]) → MPHF table file ([`IndexBuilder`]; the MPHF, the byte layout and the META
//! section are private modules that follow `index-format.md`) → reader over any bytes
//! ([`Index`]) → query ([`Index::query`], [`Index::query_fingerprint`]) → many index files as
//! one ([`IndexSet`]; a set that changes, [`SetWriter`]) → the submission check ([`Check`]).
//!
//! What a user needs is re-exported here: [`IndexBuilder`] and [`Index`] with
//! [`QueryOptions`], [`QueryResult`] and [`Hit`]; [`Fingerprinter`] and [`Params`] to
//! fingerprint on other threads or machines, where the two roles are two types — a
//! [`Fingerprint`] is what the index stores, a [`QueryFingerprint`] is only looked up; [`IndexSet`] to query shards or an index set's
//! segments as one index, and [`SetWriter`] to add, delete and merge under a lock, crash-safe;
//! [`Lang`], [`Reference`] and [`Analyzer`] for other languages; one [`Error`] type whose
//! variants say what went wrong and what to do.
//!
//! This crate is the core of a workspace: the classical near-duplicate methods on the same text
//! pipeline are `pocketdex-methods`, the evaluation harness that measures all of them against
//! exact similarities is `pocketdex-eval`, and the command line is `pocketdex-cli`.
//!
//! Fuzzy-fingerprinting is Stein's (2005) similarity hash; the index is that of "Wikipedia in the
//! Pocket" (Potthast, SIGIR 2007): all codes of a collection under a minimal perfect hash
//! function with a 16-bit check per slot and packed postings. `index-format.md` specifies the
//! file byte by byte.
//!
//! ```
//! use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions};
//! let mut builder = IndexBuilder::for_lang(Lang::En, Params::default())?;
//! builder.add("moon", None, "The Moon is Earth's only natural satellite, orbiting at about 384,400 km.");
//! builder.add("sun", None, "The Sun is the star at the centre of the Solar System, a hot ball of plasma.");
//! let mut file = Vec::new();          // or `builder.write_to_path(path)` for an atomic file
//! builder.finish(&mut file)?;
//! let index = Index::open(file)?;     // or Index::open_path(path): the file memory-mapped
//! let result = index.query("The Moon is the only natural satellite of Earth, at about 384,400 km.", &QueryOptions::default())?;
//! assert_eq!(index.name(result.hits[0].doc)?.as_deref(), Some("moon"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

/// Evaluates `$e` compiled with the POPCNT instruction where the CPU has it (found at run time):
/// the MPHF's rank and the STARTS select count ones in every lookup, and the x86-64 baseline that
/// Rust compiles for has no POPCNT, so `count_ones` is a dozen instructions there instead of one.
/// `$e` must be a call of `#[inline(always)]` code, so that it is compiled into this copy.
macro_rules! with_popcnt {
    ($e:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "popcnt")]
            unsafe fn popcnt<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            if std::is_x86_feature_detected!("popcnt") {
                // SAFETY: the CPU has POPCNT, the one instruction `popcnt` may use beyond the
                // baseline.
                unsafe { popcnt(|| $e) }
            } else {
                $e
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $e
        }
    }};
}

// In pipeline order: documents → tokens → prefix classes → fuzzy codes and sketch → MPHF table
// file → reader → query → sets of files.
pub mod error;
pub mod hash;
pub mod corpus;
pub mod text;
pub mod reference;
pub mod fingerprint;
pub mod sketch;
pub mod signing;
mod mphf;
mod filter;
mod format;
mod meta;
pub mod atomic;
mod builder;
mod index;
mod integrity;
mod query;
mod set;
pub mod check;
pub mod info;

pub use builder::{repeated_ids, BuildStats, IndexBuilder, PathCounts};
pub use check::{Check, Verdict};
pub use error::{Error, Result};
pub use fingerprint::{Fingerprint, Fingerprinter, Params, QueryFingerprint};
#[doc(hidden)]
pub use format::reseal;
pub use index::{is_index_file, Index, ListLengths, Postings, SectionInfo};
/// The bytes of a memory-mapped index file ([`Index::open_path`], [`IndexSet`]).
pub use memmap2::Mmap;
pub use meta::Meta;
/// The index format version this build writes and reads (`index-format.md` §14).
pub const FORMAT_VERSION: u32 = format::VERSION;
pub use query::{rounded, Hit, HitRecord, QueryOptions, QueryResult};
pub use reference::{Classes, Reference};
pub use set::{
    export_set, index_file_of, is_set, not_a_set, repeated_path, Change, DroppedSegment, GivenIdf,
    IndexSet, NewSetOptions, Part, Repair, SetHit, SetQueryResult, SetWriter, MANIFEST, SCHEMA,
};
pub use text::{Analyzer, Lang};
