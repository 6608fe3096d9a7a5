//! The features of a whole collection in one flat array of 64-bit words, no heap object per
//! document: held in memory up to [`Options::memory_limit`](crate::Options::memory_limit)
//! bytes, beyond that written to an unnamed temporary file and read back through a memory map,
//! so that a collection's features cost page cache (which the kernel reclaims under pressure),
//! not resident memory.
//!
//! A document's record is a few fields, each a slice of plain values (`u64`, `u32`, `f32`, …):
//! `[fields k][byte length of each field, k words][each field's bytes, padded to 8]`. A method
//! writes them with [`Record::write`] and reads them back without copying with
//! [`Record::field`].

use super::detector::Features;
use bytemuck::Pod;
use pocketdex::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};

/// Where the words live: in memory, being written to a temporary file, or mapped from it.
enum Words {
    Memory(Vec<u64>),
    Writing { file: BufWriter<File>, len: u64 },
    Mapped(memmap2::Mmap),
    Empty,
}

/// The features of a collection, document by document; made by pushing each document's
/// [`Features`] in order, then [`FeatureStore::seal`]ed before a method reads them.
pub struct FeatureStore {
    words: Words,
    /// Per document, the word where its record starts; one more entry for the end.
    starts: Vec<u64>,
    /// Per document, the identity of its features (see [`Described`](crate::Described)), or
    /// `None` when it is set aside.
    identities: Vec<Option<u128>>,
    /// Documents set aside, and why.
    set_aside: Vec<(u32, String)>,
    /// The method whose features these are.
    method: Option<&'static str>,
    /// Bytes of words held in memory before the rest goes to a temporary file.
    budget: u64,
}

impl std::fmt::Debug for FeatureStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeatureStore")
            .field("documents", &self.len())
            .field("words", &self.word_count())
            .field("spilled", &self.spilled())
            .finish()
    }
}

impl FeatureStore {
    /// An empty store that keeps at most `budget` bytes of features in memory.
    pub fn new(budget: u64) -> FeatureStore {
        FeatureStore {
            words: Words::Memory(Vec::new()),
            starts: vec![0],
            identities: Vec::new(),
            set_aside: Vec::new(),
            method: None,
            budget,
        }
    }

    /// Documents pushed.
    pub fn len(&self) -> usize {
        self.identities.len()
    }

    /// True when no document was pushed.
    pub fn is_empty(&self) -> bool {
        self.identities.is_empty()
    }

    /// True when the features went to a temporary file.
    pub fn spilled(&self) -> bool {
        matches!(self.words, Words::Writing { .. } | Words::Mapped(_))
    }

    /// True when pushed features are in a temporary file not yet mapped.
    pub(crate) fn unsealed(&self) -> bool {
        matches!(self.words, Words::Writing { .. })
    }

    /// Words of features held (in memory or in the file).
    pub fn word_count(&self) -> u64 {
        *self.starts.last().expect("starts has an end")
    }

    /// The name of the method whose features were pushed (`None` before the first).
    pub(crate) fn method(&self) -> Option<&'static str> {
        self.method
    }

    /// Appends the next document's features.
    ///
    /// # Errors
    /// When features of another method were pushed before, when the store is sealed, or when
    /// the temporary file cannot be written (`TMPDIR` unwritable or full).
    pub fn push(&mut self, features: Features) -> Result<()> {
        let name = features.method().name();
        match self.method {
            Some(m) if m != name => {
                return Err(Error::Invalid(format!(
                    "features of method {name} pushed after features of method {m}"
                )))
            }
            _ => self.method = Some(name),
        }
        if self.identities.len() >= u32::MAX as usize - 1 {
            return Err(Error::Invalid("at most 2^32 − 2 documents".into()));
        }
        let doc = self.identities.len() as u32;
        let words = match features.into_kept() {
            Ok((words, identity)) => {
                self.identities.push(Some(identity));
                words
            }
            Err(reason) => {
                self.identities.push(None);
                self.set_aside.push((doc, reason));
                Vec::new()
            }
        };
        self.append(&words)?;
        let end = self.word_count() + words.len() as u64;
        self.starts.push(end);
        Ok(())
    }

    fn append(&mut self, words: &[u64]) -> Result<()> {
        match &mut self.words {
            Words::Memory(v) => {
                v.extend_from_slice(words);
                if v.len() as u64 * 8 > self.budget {
                    let file = tempfile::tempfile().map_err(spill_error)?;
                    let mut file = BufWriter::with_capacity(1 << 20, file);
                    file.write_all(bytemuck::cast_slice(v))
                        .map_err(spill_error)?;
                    let len = v.len() as u64;
                    self.words = Words::Writing { file, len };
                }
            }
            Words::Writing { file, len } => {
                file.write_all(bytemuck::cast_slice(words))
                    .map_err(spill_error)?;
                *len += words.len() as u64;
            }
            Words::Mapped(_) | Words::Empty => {
                return Err(Error::Invalid("features pushed to a sealed store".into()))
            }
        }
        Ok(())
    }

    /// Ends pushing: a spilled store is flushed and mapped. Reading before sealing sees no
    /// spilled record.
    ///
    /// # Errors
    /// When the temporary file cannot be flushed or mapped.
    pub fn seal(&mut self) -> Result<()> {
        if let Words::Writing { .. } = self.words {
            let Words::Writing { file, .. } = std::mem::replace(&mut self.words, Words::Empty)
            else {
                unreachable!("matched above")
            };
            let file = file.into_inner().map_err(|e| spill_error(e.into_error()))?;
            // SAFETY: the file is unnamed (no other process can reach it) and never written
            // again, so the mapped bytes cannot change.
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(spill_error)?;
            self.words = Words::Mapped(map);
        }
        Ok(())
    }

    fn all_words(&self) -> &[u64] {
        match &self.words {
            Words::Memory(v) => v,
            // A map starts on a page boundary, so its bytes are aligned for u64.
            Words::Mapped(m) => bytemuck::cast_slice(&m[..]),
            Words::Writing { .. } | Words::Empty => &[],
        }
    }

    /// Document `doc`'s record; `None` when it is set aside.
    ///
    /// # Panics
    /// When `doc` is out of range, or the store is spilled and not sealed.
    pub fn record(&self, doc: u32) -> Option<Record<'_>> {
        self.identities[doc as usize]?;
        let (a, b) = (self.starts[doc as usize], self.starts[doc as usize + 1]);
        let words = self.all_words();
        assert!(
            b as usize <= words.len(),
            "a spilled feature store is read before it is sealed"
        );
        Some(Record::of_words(&words[a as usize..b as usize]))
    }

    /// Per document, the identity of its features (`None` when set aside).
    pub(crate) fn identities(&self) -> &[Option<u128>] {
        &self.identities
    }

    /// The documents set aside, and why, ascending.
    pub(crate) fn set_aside(&self) -> &[(u32, String)] {
        &self.set_aside
    }
}

/// An error of the temporary file, saying what to do about it.
fn spill_error(e: std::io::Error) -> Error {
    temp_file_error("features", true, e)
}

/// A temporary file of `what` (in TMPDIR) that cannot be made, written or read: an OS error
/// of that directory (Python's `OSError`, errno kept) that says what to do; `memory_limit`
/// where a larger `--memory-limit` keeps more in memory instead.
pub(crate) fn temp_file_error(what: &str, memory_limit: bool, e: std::io::Error) -> Error {
    let dir = std::env::temp_dir();
    Error::Path {
        message: format!(
            "cannot keep {what} in a temporary file in {} ({e}); point TMPDIR at a writable \
             directory with room{}",
            dir.display(),
            if memory_limit {
                ", or raise `dups --memory-limit` to keep more of them in memory"
            } else {
                ""
            }
        ),
        kind: e.kind(),
        errno: e.raw_os_error(),
        path: dir,
    }
}

/// One document's features as stored: a few fields of plain values.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    words: &'a [u64],
}

impl<'a> Record<'a> {
    /// The record that `words` (made by [`Record::write`]) hold.
    pub(crate) fn of_words(words: &'a [u64]) -> Self {
        Record { words }
    }

    /// The words of a record of `fields`, each a slice of plain values.
    pub fn write(fields: &[&[u8]]) -> Vec<u64> {
        let data: usize = fields.iter().map(|f| f.len().div_ceil(8)).sum();
        let mut out = Vec::with_capacity(1 + fields.len() + data);
        out.push(fields.len() as u64);
        out.extend(fields.iter().map(|f| f.len() as u64));
        for f in fields {
            let at = out.len();
            out.resize(at + f.len().div_ceil(8), 0);
            bytemuck::cast_slice_mut::<u64, u8>(&mut out[at..])[..f.len()].copy_from_slice(f);
        }
        out
    }

    /// Field `i` as a slice of `T`, without copying.
    ///
    /// # Panics
    /// When the record has no field `i`, or its length is not a multiple of `T`'s size, or `T`
    /// needs more than 8-byte alignment: a method reading a record it did not write.
    pub fn field<T: Pod>(&self, i: usize) -> &'a [T] {
        let k = self.words[0] as usize;
        assert!(i < k, "field {i} of a record of {k}");
        let lens = &self.words[1..=k];
        let at = 1
            + k
            + lens[..i]
                .iter()
                .map(|&l| (l as usize).div_ceil(8))
                .sum::<usize>();
        let len = lens[i] as usize;
        let bytes: &'a [u8] = bytemuck::cast_slice(&self.words[at..at + len.div_ceil(8)]);
        bytemuck::cast_slice(&bytes[..len])
    }

    /// Field `i`, one `u64`.
    pub fn word(&self, i: usize) -> u64 {
        self.field::<u64>(i)[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_as_written() {
        let a: Vec<u64> = vec![1, 2, u64::MAX];
        let b: Vec<u32> = vec![7, 8, 9]; // 12 bytes: padded to 16
        let c: Vec<f32> = vec![];
        let d: Vec<u8> = b"abc".to_vec();
        let words = Record::write(&[
            bytemuck::cast_slice(&a),
            bytemuck::cast_slice(&b),
            bytemuck::cast_slice(&c),
            &d,
        ]);
        // header 1 + lengths 4 + data 3 + 2 + 0 + 1 words
        assert_eq!(words.len(), 11);
        let r = Record { words: &words };
        assert_eq!(r.field::<u64>(0), &a[..]);
        assert_eq!(r.field::<u32>(1), &b[..]);
        assert_eq!(r.field::<f32>(2), &c[..]);
        assert_eq!(r.field::<u8>(3), &d[..]);
        assert_eq!(r.word(0), 1);
    }
}
