//! Reading an index: `Index<D: AsRef<[u8]>>` over any bytes (a `Vec<u8>` in tests, a memory map
//! in the CLI). [`Index::open`] is cheap and checks header, directory, bounds and the small
//! sections it decodes; every other byte is checked the first time something reads it (the
//! block tree, `integrity`), so a damaged file gives an error, never a wrong answer and never a
//! panic. [`Index::verify`] checks every byte at once.

use crate::error::{Error, Result};
use crate::filter::{self, Filter};
use crate::fingerprint::{Fingerprinter, Params, Resolution};
use crate::format::{self, Directory, SectionId, Strings};
use crate::hash;
use crate::integrity::{Guard, Tree};
use crate::meta::{self, Meta};
use crate::mphf;
use crate::signing::{self, PublicKey, Signature};
use crate::sketch::Idf;
use crate::text::Analyzer;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

/// An opened index.
pub struct Index<D> {
    data: D,
    meta: Meta,
    /// Shared with the other segments of a set that have the same parameters, classes and idf
    /// table ([`Index::open_like`]).
    fingerprinter: Arc<Fingerprinter>,
    /// The MPHF read where it lies in `data` (section MPHF).
    mphf: mphf::View,
    /// Where each section is, and its checksum.
    dir: Directory,
    starts_bits_len: usize,
    /// See [`Index::schema_key`]; computed once, as a set query asks for it per part.
    schema_key: u64,
    /// Which blocks of the large sections have been checked.
    guard: Guard,
    /// Bytes of the index proper: the file without its signature block.
    len: usize,
    /// The signature block, when the file is signed.
    signature: Option<Signature>,
}

/// What [`Index::open_like`] may share: another index's parameters, its CLASSES and IDF bytes
/// (checked when it was opened), and the fingerprinter decoded from them.
type Shared<'a> = (&'a Params, &'a [u8], &'a [u8], &'a Arc<Fingerprinter>);

/// A query's keys, with their FILTER hashes (index-format.md §6.10), computed the first time a
/// file with a FILTER asks and then shared by every file of a set: the hash does not depend on
/// the file, and 16 shards hashed each key 16 times.
pub(crate) struct Keys {
    pub(crate) keys: Vec<u64>,
    filter: std::cell::OnceCell<Vec<u64>>,
}

impl Keys {
    /// The keys of a query's `probes`, in order.
    pub(crate) fn of(probes: &[crate::fingerprint::Code]) -> Keys {
        Keys::new(probes.iter().map(|c| c.key).collect())
    }

    pub(crate) fn new(keys: Vec<u64>) -> Keys {
        Keys {
            keys,
            filter: std::cell::OnceCell::new(),
        }
    }

    fn filter_hashes(&self) -> &[u64] {
        self.filter
            .get_or_init(|| self.keys.iter().map(|&k| filter::hash(k)).collect())
    }
}

/// One section's place in the file, as `pocketdex info` shows it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SectionInfo {
    /// Section name.
    pub name: &'static str,
    /// Offset from the start of the file.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

impl<D: AsRef<[u8]>> Index<D> {
    /// Opens an index: checks magic, version, length, the directory and its checksum, every
    /// section's bounds and size, and the checksums of the sections it decodes (META, CLASSES,
    /// IDF, MPHF, TREE). It reads nothing else: the blocks of postings, sketches, names and the
    /// other large sections are checked when first read (an error names the damaged block),
    /// and [`Index::verify`] checks everything.
    pub fn open(data: D) -> Result<Self> {
        Self::open_sharing(data, None)
    }

    /// The byte ranges [`Index::open`] reads whole: the small sections it checks and decodes
    /// (META, CLASSES, IDF, MPHF, TREE). A reader that maps the file and advises random access
    /// (lookups read a few scattered bytes) gets no fault-around from the kernel, so the MPHF's
    /// megabytes would fault in one 4 KiB page at a time; faulting these ranges in at once
    /// (`MADV_POPULATE_READ`) saves that. Empty when the file is not readable as an index
    /// (`open` then says why).
    pub fn open_reads(data: &[u8]) -> Vec<Range<usize>> {
        let Ok((bytes, _)) = signing::split(data) else {
            return Vec::new();
        };
        let Ok(dir) = Directory::decode(bytes) else {
            return Vec::new();
        };
        [
            SectionId::Meta,
            SectionId::Classes,
            SectionId::Idf,
            SectionId::Mphf,
            SectionId::Tree,
        ]
        .into_iter()
        .filter_map(|id| dir.get(id).map(|e| e.range()))
        .filter(|r| r.start <= r.end && r.end <= bytes.len())
        .collect()
    }

    /// [`Index::open`], sharing `like`'s fingerprinter when this file's parameters, CLASSES and
    /// IDF sections are byte for byte `like`'s, as a set's segments and its schema are: decoding
    /// the classes and the idf table and hashing them into an identity costs more than the rest
    /// of `open` save the MPHF, once per segment for every short-lived `check --add`.
    pub fn open_like<E: AsRef<[u8]>>(data: D, like: &Index<E>) -> Result<Self> {
        let shared = (
            &like.meta.params,
            like.section(SectionId::Classes),
            like.section(SectionId::Idf),
            &like.fingerprinter,
        );
        Self::open_sharing(data, Some(shared))
    }

    fn open_sharing(data: D, like: Option<Shared<'_>>) -> Result<Self> {
        let (bytes, signature) = signing::split(data.as_ref())?;
        let len = bytes.len();
        let dir = Directory::decode(bytes)?;
        let section = |id: SectionId| -> Result<&[u8]> {
            let e = dir
                .get(id)
                .ok_or_else(|| Error::format(format!("section {} is missing", id.name())))?;
            Ok(&bytes[e.range()])
        };
        let checked = |id: SectionId| -> Result<&[u8]> {
            let s = section(id)?;
            let (expected, got) = (dir.get(id).map_or(0, |e| e.checksum), hash::checksum(s));
            if got != expected {
                return Err(Error::ChecksumMismatch {
                    section: id.name(),
                    expected,
                    got,
                });
            }
            Ok(s)
        };
        // Every small section's checksum before any is decoded: a damaged file fails fast.
        let (meta, classes, idf, mphf) = (
            checked(SectionId::Meta)?,
            checked(SectionId::Classes)?,
            checked(SectionId::Idf)?,
            checked(SectionId::Mphf)?,
        );
        let tree = if dir.version >= 7 {
            Some(checked(SectionId::Tree)?)
        } else {
            None
        };
        let meta = Meta::decode(meta, dir.version)?;
        let fingerprinter = match like {
            Some((params, c, i, f))
                if params.identical(&meta.params) && c == classes && i == idf =>
            {
                f.clone()
            }
            _ => {
                let (classes, stopwords) = meta::decode_classes(classes)?;
                let idf = Idf::decode(idf, dir.version)?;
                Arc::new(
                    Fingerprinter::new(meta.params.clone(), classes, Analyzer::new(stopwords))
                        .map_err(|e| {
                            Error::format(format!("parameters do not fit the classes: {e}"))
                        })?
                        .with_idf(idf),
                )
            }
        };
        let mphf = mphf::View::new(mphf, mphf::seed_bits(dir.version))?;
        let tree = tree.map(|t| Tree::decode(t, &dir)).transpose()?;
        let guard = Guard::new(&dir, tree);

        // Sizes of the fixed-layout sections follow from the counts (which, being bounded by the
        // file's bits, cannot overflow the arithmetic below).
        let slots = meta.slot_count as u64;
        let refs = meta.ref_count;
        if refs > bytes.len() as u64 * 8 {
            return Err(Error::format(
                "META: more references than the file has bits",
            ));
        }
        let words = |bits: u64| bits.div_ceil(64) * 8;
        let starts_bits_len = words(refs) as usize;
        let expect = [
            (SectionId::Checks, slots * 2),
            (
                SectionId::Starts,
                words(refs) + slots.div_ceil(format::SELECT_SAMPLE) * 8,
            ),
            (SectionId::Postings, words(refs * meta.posting_bits as u64)),
            (
                SectionId::Sketches,
                meta.doc_count as u64 * meta.params.sketch_words as u64 * 8,
            ),
        ];
        for (id, len) in expect {
            if section(id)?.len() as u64 != len {
                return Err(Error::format(format!(
                    "section {} has the wrong size",
                    id.name()
                )));
            }
        }
        let docs = meta.doc_count as u64;
        let set_lens = [
            (SectionId::Codes, (docs * 2).next_multiple_of(8) + refs * 8),
            (SectionId::Ids, docs * 12),
        ];
        if dir.get(SectionId::Filter).is_some()
            && Filter::new(checked(SectionId::Filter)?).is_none()
        {
            return Err(Error::format(
                "section FILTER is not a whole number of 32-byte blocks",
            ));
        }
        for (id, len) in set_lens {
            if dir.get(id).is_some() && section(id)?.len() as u64 != len {
                return Err(Error::format(format!(
                    "section {} has the wrong size",
                    id.name()
                )));
            }
        }
        for id in [SectionId::Names, SectionId::Titles] {
            if let Ok(s) = section(id) {
                if Strings::parse(s, id.name())?.len() != meta.doc_count {
                    return Err(Error::format(format!(
                        "section {} does not hold one string per document",
                        id.name()
                    )));
                }
            } else if id == SectionId::Names {
                return Err(Error::format("section NAMES is missing"));
            }
        }
        let schema_key = {
            let r = meta.params.resolution;
            let idf = fingerprinter.idf().map_or(0, |i| i.id());
            hash::h64(
                format!("{} {idf} {r:?}", fingerprinter.identity()).as_bytes(),
                0,
            )
        };
        Ok(Index {
            data,
            meta,
            fingerprinter,
            mphf,
            dir,
            starts_bits_len,
            schema_key,
            guard,
            len,
            signature,
        })
    }

    /// This index with its blocks no longer checked when read: only for the benchmark that
    /// measures what the checks cost (`benches/integrity.rs`). Never use it to answer queries.
    #[doc(hidden)]
    pub fn without_block_checks(mut self) -> Self {
        self.guard = Guard::off();
        self
    }

    /// The size of the blocks each of which is checked against the block tree when first read
    /// (16 KiB since version 8, 4 KiB in version 7; `index-format.md` §7.1);
    /// `None` for files of versions 5 and 6, whose large sections are checked whole.
    pub fn block_size(&self) -> Option<u64> {
        self.guard.block_size()
    }

    /// The file's signature block, if it is signed (by anyone: see [`Index::check_signature`]).
    pub fn signature(&self) -> Option<&Signature> {
        self.signature.as_ref()
    }

    /// Checks that the file is signed by `trusted`. The signature covers the header, the
    /// directory and the sections `open` checked, TREE among them, whose root covers every
    /// other byte a query reads (`index-format.md` §7.2): after this, every answer comes from
    /// bytes the key's owner signed, and the check costs what `open` does.
    ///
    /// # Errors
    /// [`Error::Signature`] when the file is unsigned, signed by another key, or changed since.
    pub fn check_signature(&self, trusted: &PublicKey) -> Result<()> {
        signing::check(self.bytes(), &self.dir, self.signature.as_ref(), trusted)
    }

    /// Checks every byte: the whole-file checksum, every section's checksum, and the structure of
    /// postings and names. Run it after copying an index to new media.
    pub fn verify(&self) -> Result<()> {
        let bytes = self.bytes();
        let body = &bytes[..bytes.len() - format::TRAILER_LEN];
        let stored = u64::from_le_bytes(
            bytes[bytes.len() - format::TRAILER_LEN..bytes.len() - 8]
                .try_into()
                .expect("8 bytes"),
        );
        let got = hash::checksum(body);
        if got != stored {
            return Err(Error::ChecksumMismatch {
                section: "whole file",
                expected: stored,
                got,
            });
        }
        // The signature block's own bytes are under no checksum: a block damaged in a copy
        // shows as a signature that its embedded key does not verify (who the key is, only
        // --public-key can say).
        if let Some(sig) = &self.signature {
            signing::check_embedded(bytes, &self.dir, sig)?;
        }
        self.guard.touch_all(bytes, &self.dir)?;
        for e in self.dir.entries() {
            let got = hash::checksum(&bytes[e.range()]);
            if got != e.checksum {
                return Err(Error::ChecksumMismatch {
                    section: e.id.name(),
                    expected: e.checksum,
                    got,
                });
            }
        }
        // Padding between the directory, the sections and the trailer is zero (the directory
        // keeps sections in file order).
        let regions: Vec<Range<usize>> = self.dir.entries().iter().map(|e| e.range()).collect();
        let mut at = self.dir.len_bytes();
        for r in regions
            .iter()
            .chain(std::iter::once(&(body.len()..body.len())))
        {
            if bytes[at.min(r.start)..r.start].iter().any(|&b| b != 0) {
                return Err(Error::format("padding between sections is not zero"));
            }
            at = r.end;
        }
        // Every slot has a non-empty list, every select sample is right, and every posting
        // names a document.
        let slots = self.meta.slot_count as u64;
        if slots > 0 {
            let starts = self.section(SectionId::Starts);
            let (bits, _) = starts.split_at(self.starts_bits_len);
            let ones: u64 = bits
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8")).count_ones() as u64)
                .sum();
            // A start in the last word's bits beyond the references would be counted above
            // but begin no list (found by fuzzing).
            let beyond = (self.meta.ref_count..bits.len() as u64 * 8)
                .any(|p| format::get_bits(bits, p, 1) == Some(1));
            if ones != slots || beyond || format::get_bits(bits, 0, 1) != Some(1) {
                return Err(Error::format("STARTS does not mark one list per slot"));
            }
            let samples = &starts[self.starts_bits_len..];
            let mut seen = 0u64;
            for p in 0..self.meta.ref_count {
                if format::get_bits(bits, p, 1) == Some(1) {
                    if seen.is_multiple_of(format::SELECT_SAMPLE)
                        && format::word(samples, seen / format::SELECT_SAMPLE) != Some(p)
                    {
                        return Err(Error::format("STARTS select samples are wrong"));
                    }
                    seen += 1;
                }
            }
        }
        let postings = self.section(SectionId::Postings);
        let width = self.meta.posting_bits as u32;
        for p in 0..self.meta.ref_count {
            match format::get_bits(postings, p * width as u64, width) {
                Some(d) if d < self.meta.doc_count as u64 => {}
                _ => return Err(Error::format("a posting names no document")),
            }
        }
        for id in [SectionId::Names, SectionId::Titles] {
            if let Some(e) = self.dir.get(id) {
                Strings::parse(&bytes[e.range()], id.name())?.check(id.name())?;
            }
        }
        self.verify_set_sections()
    }

    /// CODES holds exactly the table's references (each of a document's codes finds it), and
    /// IDS every document once, under its name's hash, in order.
    fn verify_set_sections(&self) -> Result<()> {
        if let Some(codes) = self.codes()? {
            let mut n = 0u64;
            let mut last: Option<(u32, u64)> = None;
            for (doc, key) in codes {
                n += 1;
                let ordered = last.is_none_or(|(d, k)| d < doc || (d == doc && k < key));
                if !ordered || !self.lookup(key)?.is_some_and(|mut p| p.any(|d| d == doc)) {
                    return Err(Error::format(
                        "CODES does not match the table (a code of a document does not find it)",
                    ));
                }
                last = Some((doc, key));
            }
            if n != self.meta.ref_count {
                return Err(Error::format("CODES does not hold every reference"));
            }
        }
        if self.dir.get(SectionId::Ids).is_some() {
            let (hashes, docs) = self.ids()?;
            let mut seen = vec![false; self.meta.doc_count as usize];
            let mut last = None;
            for (i, h) in hashes.enumerate() {
                let doc = docs(i);
                let ok = seen.get(doc as usize).is_some_and(|s| !s)
                    && last.is_none_or(|l| l <= (h, doc))
                    && self.name(doc)?.is_some_and(|n| name_hash(&n) == h);
                if !ok {
                    return Err(Error::format("IDS does not list every name once, in order"));
                }
                seen[doc as usize] = true;
                last = Some((h, doc));
            }
        }
        Ok(())
    }

    /// Section IDS as (hashes, doc of the `i`-th hash), the whole section checked.
    #[allow(clippy::type_complexity)]
    fn ids(
        &self,
    ) -> Result<(
        impl ExactSizeIterator<Item = u64> + '_,
        impl Fn(usize) -> u32 + '_,
    )> {
        let s = self.section(SectionId::Ids);
        self.touch(SectionId::Ids, 0..s.len())?;
        let n = self.meta.doc_count as usize;
        let (hashes, docs) = s.split_at((n * 8).min(s.len()));
        Ok((
            hashes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
            move |i: usize| {
                docs.get(i * 4..i * 4 + 4).map_or(u32::MAX, |c| {
                    u32::from_le_bytes(c.try_into().expect("4 bytes"))
                })
            },
        ))
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.data.as_ref()[..self.len]
    }

    /// Equal for indexes whose query fingerprints, probes and sketches are the same: the
    /// fingerprinter's identity, the idf table and the resolution (a builder made from one
    /// makes segments of the other's set).
    pub fn schema_key(&self) -> u64 {
        self.schema_key
    }

    /// The format version of the file.
    pub fn version(&self) -> u32 {
        self.dir.version
    }

    /// True when the file carries the sections of an index set's segment (CODES and IDS).
    pub fn is_segment(&self) -> bool {
        self.dir.get(SectionId::Codes).is_some() && self.dir.get(SectionId::Ids).is_some()
    }

    /// The document named `name`: by binary search in section IDS when the file has it, else
    /// by a scan of the names.
    pub fn find(&self, name: &str) -> Result<Option<u32>> {
        if self.dir.get(SectionId::Ids).is_none() {
            for d in 0..self.doc_count() {
                if self.name(d)?.as_deref() == Some(name) {
                    return Ok(Some(d));
                }
            }
            return Ok(None);
        }
        let h = name_hash(name);
        let n = self.meta.doc_count as usize;
        let hash_at = |i: usize| -> Result<u64> {
            let b = self.read(SectionId::Ids, i * 8..i * 8 + 8)?;
            Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
        };
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if hash_at(mid)? < h {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for i in lo..n {
            if hash_at(i)? != h {
                break;
            }
            let at = n * 8 + i * 4;
            let b = self.read(SectionId::Ids, at..at + 4)?;
            let doc = u32::from_le_bytes(b.try_into().expect("4 bytes"));
            if self.name(doc)?.as_deref() == Some(name) {
                return Ok(Some(doc));
            }
        }
        Ok(None)
    }

    /// Every document's codes from section CODES, in document order: (document, key); `None`
    /// when the file has no CODES section. The whole section is checked first.
    pub(crate) fn codes(&self) -> Result<Option<impl Iterator<Item = (u32, u64)> + '_>> {
        let Some(e) = self.dir.get(SectionId::Codes) else {
            return Ok(None);
        };
        let s = self.read(SectionId::Codes, 0..e.len as usize)?;
        let n = self.meta.doc_count as usize;
        let (counts, keys) = s.split_at((n * 2).next_multiple_of(8).min(s.len()));
        let counts = counts
            .chunks_exact(2)
            .take(n)
            .map(|c| u16::from_le_bytes([c[0], c[1]]));
        let keys = keys
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
        // Each document's number once per code it has, beside the codes in document order.
        let docs = counts
            .enumerate()
            .flat_map(|(d, c)| std::iter::repeat_n(d as u32, c as usize));
        Ok(Some(docs.zip(keys)))
    }

    /// A section's bytes, unchecked: only for reads that are checked ([`Index::touch`]) before
    /// anything they give is trusted.
    fn section(&self, id: SectionId) -> &[u8] {
        match self.dir.get(id) {
            Some(e) => &self.bytes()[e.range()],
            None => &[],
        }
    }

    /// Checks the blocks of section `id` that hold its bytes `range`, unless checked before.
    #[inline]
    fn touch(&self, id: SectionId, range: Range<usize>) -> Result<()> {
        self.guard.touch(self.bytes(), &self.dir, id, range)
    }

    /// Bytes `range` of section `id`, checked.
    fn read(&self, id: SectionId, range: Range<usize>) -> Result<&[u8]> {
        let s = self.section(id);
        if range.end > s.len() || range.start > range.end {
            return Err(Error::format(format!(
                "a read past the end of section {}",
                id.name()
            )));
        }
        self.touch(id, range.clone())?;
        Ok(&s[range])
    }

    /// The bytes of the little-endian words that hold bits `bits` of a packed array.
    fn word_bytes(bits: Range<u64>) -> Range<usize> {
        if bits.is_empty() {
            return 0..0;
        }
        (bits.start / 64 * 8) as usize..((bits.end - 1) / 64 * 8 + 8) as usize
    }

    /// The `s`-th start bit's position (the first posting of slot `s`), checked: the select
    /// sample it starts from and every word it scans.
    fn select(&self, s: u64) -> Result<Option<u64>> {
        let starts = self.section(SectionId::Starts);
        let (bits, samples) = starts.split_at(self.starts_bits_len.min(starts.len()));
        let sample = (s / format::SELECT_SAMPLE) as usize * 8;
        self.touch(
            SectionId::Starts,
            self.starts_bits_len + sample..self.starts_bits_len + sample + 8,
        )?;
        let found = format::select1(bits, samples, s);
        // The scan read from the sample's word to the answer's (or to the end, without one).
        if let Some(from) = format::word(samples, s / format::SELECT_SAMPLE) {
            // A crafted sample may be any u64: the arithmetic saturates (the read then fails).
            let to = found.map_or(bits.len() as u64 * 8, |p| p.saturating_add(1));
            let words = Self::word_bytes(from..to.max(from.saturating_add(1)));
            self.touch(SectionId::Starts, words.start..words.end.min(bits.len()))?;
        }
        Ok(found)
    }

    /// The range of postings of slot `s`.
    fn list_range(&self, s: u32) -> Result<Option<Range<u64>>> {
        let Some(a) = self.select(s as u64)? else {
            return Ok(None);
        };
        let b = if s + 1 < self.meta.slot_count {
            match self.select(s as u64 + 1)? {
                Some(b) => b,
                None => return Ok(None),
            }
        } else {
            self.meta.ref_count
        };
        Ok((a < b && b <= self.meta.ref_count).then_some(a..b))
    }

    /// The documents indexed under `key`, or `None` when no document has that code (rejected by
    /// the FILTER, if the file has one, by the MPHF or by the slot's 16-bit check, so an unknown
    /// code slips through with probability 2⁻¹⁶ at most).
    pub fn lookup(&self, key: u64) -> Result<Option<Postings<'_>>> {
        if !self.may_hold(key) {
            return Ok(None);
        }
        let Some(slot) = self.slot(key) else {
            return Ok(None);
        };
        if !self.checks_out(key, slot)? {
            return Ok(None);
        }
        match self.list_range(slot)? {
            Some(range) => Ok(Some(self.postings(range)?)),
            None => Ok(None),
        }
    }

    /// False when the file certainly holds no document under `key`: its FILTER (index-format.md
    /// §6.10) rejects it. True for every key of a file without one.
    pub fn may_hold(&self, key: u64) -> bool {
        self.filter().is_none_or(|f| f.may_contain(key))
    }

    /// The FILTER section, when the file has one (its length was checked at open).
    fn filter(&self) -> Option<Filter<'_>> {
        self.dir.get(SectionId::Filter)?;
        Filter::new(self.section(SectionId::Filter))
    }

    /// The numbers of the `keys` that the file's FILTER lets through, in order (`None`: the file
    /// has no filter, every key goes on). Every key's block is asked for before any is read, so
    /// that a query's absent codes wait for memory together. (`open` checked the section.)
    fn through_filter(&self, keys: &Keys) -> Option<Vec<usize>> {
        let f = self.filter()?;
        let bytes = self.section(SectionId::Filter);
        let probes: Vec<filter::Probe> = keys
            .filter_hashes()
            .iter()
            .map(|&h| f.probe_hashed(h))
            .collect();
        for p in &probes {
            prefetch(bytes, p.at);
        }
        let mut kept = Vec::with_capacity(keys.keys.len());
        f.passing(&probes, &mut kept);
        Some(kept)
    }

    /// The MPHF's slot for `key`, if within the table (any key gets one; see `checks_out`).
    #[inline]
    fn slot(&self, key: u64) -> Option<u32> {
        self.in_table(self.mphf.get(self.section(SectionId::Mphf), key))
    }

    /// An MPHF answer, if it is a slot of the table (a damaged MPHF may answer beyond it).
    #[inline]
    fn in_table(&self, slot: Option<u64>) -> Option<u32> {
        slot.and_then(|s| (s < self.meta.slot_count as u64).then_some(s as u32))
    }

    /// True when slot `slot`'s 16-bit check is that of `key`: the key was indexed there.
    fn checks_out(&self, key: u64, slot: u32) -> Result<bool> {
        let at = slot as usize * 2;
        let c = self.read(SectionId::Checks, at..at + 2)?;
        Ok(u16::from_le_bytes([c[0], c[1]]) == format::check16(key))
    }

    /// The posting list at `range` of the POSTINGS section, its words checked.
    fn postings(&self, range: Range<u64>) -> Result<Postings<'_>> {
        let width = self.meta.posting_bits as u64;
        let words = self.section(SectionId::Postings);
        let bytes = Self::word_bytes(range.start * width..range.end * width);
        self.touch(SectionId::Postings, bytes.start..bytes.end.min(words.len()))?;
        Ok(Postings {
            words,
            width: width as u32,
            range,
            doc_count: self.meta.doc_count,
        })
    }

    /// [`Index::lookup`] of many keys at once, calling `found(i, postings)` for each key `keys[i]`
    /// that has documents, in order. A query's keys are looked up in stages, each stage first
    /// asking the CPU for the cache lines of every key's next step (FILTER's blocks in a file
    /// that has one, the MPHF's seed and bit words of the keys that pass, then check words, then
    /// select samples, then postings): a large index's lookups
    /// then wait for memory together rather than one after another (the MPHF's stages took a
    /// 2,000,000-document index's query p50 from 47–56 to 37–39 µs, one run alternating). The
    /// answers are those of [`Index::lookup`].
    pub fn lookup_many(&self, keys: &[u64], found: impl FnMut(usize, Postings<'_>)) -> Result<()> {
        self.lookup_keys(&Keys::new(keys.to_vec()), found)
    }

    /// [`Index::lookup_many`] of `keys`, whose FILTER hashes the files of a set share.
    pub(crate) fn lookup_keys(
        &self,
        keys: &Keys,
        mut found: impl FnMut(usize, Postings<'_>),
    ) -> Result<()> {
        let kept = self.through_filter(keys);
        let keys = &keys.keys[..];
        let checks = self.section(SectionId::Checks);
        let starts = self.section(SectionId::Starts);
        let samples = &starts[self.starts_bits_len.min(starts.len())..];
        let postings = self.section(SectionId::Postings);
        let kept_keys: Vec<u64>;
        let probe = match &kept {
            // No key passed the filter: nothing more to read.
            Some(k) if k.is_empty() => return Ok(()),
            Some(k) => {
                kept_keys = k.iter().map(|&i| keys[i]).collect();
                &kept_keys[..]
            }
            None => keys,
        };
        let mut slots: Vec<(usize, u32)> = Vec::with_capacity(probe.len());
        self.mphf
            .get_many(self.section(SectionId::Mphf), probe, |j, slot| {
                let i = kept.as_ref().map_or(j, |k| k[j]);
                if let Some(slot) = self.in_table(slot) {
                    prefetch(checks, slot as usize * 2);
                    slots.push((i, slot));
                }
            });
        let mut known = Vec::with_capacity(slots.len());
        for (i, slot) in slots {
            if self.checks_out(keys[i], slot)? {
                prefetch(samples, (slot as u64 / format::SELECT_SAMPLE) as usize * 8);
                known.push((i, slot));
            }
        }
        let mut lists: Vec<(usize, Range<u64>)> = Vec::with_capacity(known.len());
        for (i, slot) in known {
            if let Some(range) = self.list_range(slot)? {
                let width = self.meta.posting_bits as u64;
                prefetch(postings, (range.start * width / 8) as usize);
                lists.push((i, range));
            }
        }
        for (i, range) in lists {
            found(i, self.postings(range)?);
        }
        Ok(())
    }
    /// Asks the CPU to fetch the sketch of document `doc` ahead of its use (a query scoring
    /// many candidates); nothing for a document number out of range.
    pub fn prefetch_sketch(&self, doc: u32) {
        let w = self.meta.params.sketch_words as usize * 8;
        prefetch(self.section(SectionId::Sketches), doc as usize * w);
    }

    /// How long the posting lists are: one scan of the start bits (`info` shows it).
    pub fn list_lengths(&self) -> Result<ListLengths> {
        let starts = self.section(SectionId::Starts);
        let bits = self.read(SectionId::Starts, 0..self.starts_bits_len.min(starts.len()))?;
        let refs = self.meta.ref_count;
        // Lengths up to 2^16 in a histogram, longer ones listed.
        let mut small = vec![0u64; 1 << 16];
        let mut long: Vec<u64> = Vec::new();
        let mut record = |len: u64| match small.get_mut(len as usize) {
            Some(c) => *c += 1,
            None => long.push(len),
        };
        let mut last: Option<u64> = None;
        for (i, chunk) in bits.chunks_exact(8).enumerate() {
            let mut w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            while w != 0 {
                let p = i as u64 * 64 + w.trailing_zeros() as u64;
                w &= w - 1;
                if p >= refs {
                    break;
                }
                if let Some(a) = last {
                    record(p - a);
                }
                last = Some(p);
            }
        }
        if let Some(a) = last {
            record(refs - a);
        }
        long.sort_unstable();
        let lists: u64 = small.iter().sum::<u64>() + long.len() as u64;
        let quantile = |q: f64| -> u64 {
            let want = ((lists as f64 - 1.0) * q).round() as u64;
            let mut seen = 0u64;
            for (len, &c) in small.iter().enumerate() {
                seen += c;
                if seen > want {
                    return len as u64;
                }
            }
            long.get((want - seen) as usize).copied().unwrap_or(0)
        };
        let in_long: u64 = small
            .iter()
            .enumerate()
            .skip(1001)
            .map(|(len, &c)| len as u64 * c)
            .sum::<u64>()
            + long.iter().sum::<u64>();
        Ok(ListLengths {
            lists,
            mean: if lists > 0 {
                refs as f64 / lists as f64
            } else {
                0.0
            },
            p50: quantile(0.5),
            p99: quantile(0.99),
            max: long
                .last()
                .copied()
                .or_else(|| small.iter().rposition(|&c| c > 0).map(|l| l as u64))
                .unwrap_or(0),
            share_in_long: if refs > 0 {
                in_long as f64 / refs as f64
            } else {
                0.0
            },
        })
    }

    /// Counts and parameters.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The resolution of this index's codes.
    pub fn resolution(&self) -> Resolution {
        self.meta
            .params
            .resolution
            .expect("META always stores the resolution")
    }

    /// The fingerprinter queries must use: this index's parameters, classes and stopwords.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Number of documents.
    pub fn doc_count(&self) -> u32 {
        self.meta.doc_count
    }

    /// The sketch of document `doc` (`None` for a number past the last document).
    pub fn sketch(&self, doc: u32) -> Result<Option<Vec<u64>>> {
        Ok(self.sketch_words(doc)?.map(|w| w.collect()))
    }

    /// The words of document `doc`'s sketch, read in place (no allocation: this runs once per
    /// candidate of every query).
    pub fn sketch_words(&self, doc: u32) -> Result<Option<impl Iterator<Item = u64> + '_>> {
        if doc >= self.meta.doc_count {
            return Ok(None);
        }
        let w = self.meta.params.sketch_words as usize * 8;
        let at = doc as usize * w;
        let b = self.read(SectionId::Sketches, at..at + w)?;
        Ok(Some(b.chunks_exact(8).map(|c| {
            u64::from_le_bytes(c.try_into().expect("8 bytes"))
        })))
    }

    /// The name (id) of document `doc` (`None` for a number past the last document).
    pub fn name(&self, doc: u32) -> Result<Option<Cow<'_, str>>> {
        self.string(SectionId::Names, doc)
    }

    /// The title of document `doc`, when the index stores titles and it has one.
    pub fn title(&self, doc: u32) -> Result<Option<Cow<'_, str>>> {
        Ok(self
            .string(SectionId::Titles, doc)?
            .filter(|t| !t.is_empty()))
    }

    /// String `doc` of a string table, checked: the table's count, the offset of the string's
    /// block and the bytes from that offset to the string's end.
    fn string(&self, id: SectionId, doc: u32) -> Result<Option<Cow<'_, str>>> {
        if self.dir.get(id).is_none() || doc >= self.meta.doc_count {
            return Ok(None);
        }
        let s = self.section(id);
        self.touch(id, 0..8)?;
        let t = Strings::parse(s, id.name())?;
        let word = 8 + doc as usize / format::STRING_BLOCK * 8;
        self.touch(id, word..word + 8)?;
        let damaged = || Error::format(format!("section {}: damaged string table", id.name()));
        let bytes = t.get(doc).ok_or_else(damaged)?;
        let start =
            t.blob_offset() + format::word(&s[word..word + 8], 0).ok_or_else(damaged)? as usize;
        let end = bytes.as_ptr() as usize - s.as_ptr() as usize + bytes.len();
        self.touch(id, start..end)?;
        Ok(Some(String::from_utf8_lossy(bytes)))
    }

    /// Sections in file order with their offsets and lengths.
    pub fn sections(&self) -> Vec<SectionInfo> {
        self.dir
            .entries()
            .iter()
            .map(|e| SectionInfo {
                name: e.id.name(),
                offset: e.offset,
                len: e.len,
            })
            .collect()
    }

    /// Total bytes of the index.
    pub fn len_bytes(&self) -> u64 {
        self.data.as_ref().len() as u64
    }
}

/// The hash of a document name in section IDS.
pub(crate) fn name_hash(name: &str) -> u64 {
    hash::h64(name.as_bytes(), hash::NAME_SEED)
}

/// The distribution of posting-list lengths (documents per distinct code).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ListLengths {
    /// Number of lists (distinct codes).
    pub lists: u64,
    /// Mean length.
    pub mean: f64,
    /// Median length.
    pub p50: u64,
    /// 99th percentile of the length.
    pub p99: u64,
    /// The longest list.
    pub max: u64,
    /// Share of all references that sit in lists longer than 1,000.
    pub share_in_long: f64,
}

/// The documents of one slot, in ascending order.
#[derive(Clone, Debug)]
pub struct Postings<'a> {
    words: &'a [u8],
    width: u32,
    range: Range<u64>,
    doc_count: u32,
}

impl Iterator for Postings<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        loop {
            let p = self.range.next()?;
            let d = format::get_bits(self.words, p * self.width as u64, self.width)?;
            // A damaged posting (only possible before `verify`) is skipped, not trusted.
            if d < self.doc_count as u64 {
                return Some(d as u32);
            }
        }
    }
}

/// A hint to load the cache line holding `items[at]`; nothing when `at` is out of bounds or the
/// target has no prefetch instruction. It never faults, so it is safe on any address.
#[inline]
pub(crate) fn prefetch<T>(items: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < items.len() {
        // SAFETY: a prefetch is a hint that neither faults nor reads memory architecturally;
        // the address is inside `items` anyway.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(items.as_ptr().add(at) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, at);
}

/// True when `path` is a file that begins as an index file does (`MAGIC`, `index-format.md`
/// §2): what tells an index a command cannot change from a document given in its place.
/// Nothing else is read or checked ([`Index::open`] does that).
pub fn is_index_file(path: &std::path::Path) -> bool {
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && head == format::MAGIC
}
