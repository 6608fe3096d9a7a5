//! Reading an index: `Index<D: AsRef<[u8]>>` over any bytes (a `Vec<u8>` in tests, a memory map
//! in the CLI). [`Index::open`] is cheap and checks header, directory, bounds and the small
//! sections it decodes; [`Index::verify`] checks every byte. Damaged input gives an error, never
//! a panic.

use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprinter, Resolution};
use crate::format::{self, Directory, SectionId, Strings};
use crate::hash;
use crate::meta::{self, Meta};
use crate::mphf;
use crate::sketch::Idf;
use crate::text::Analyzer;
use std::borrow::Cow;
use std::ops::Range;

/// An opened index.
pub struct Index<D> {
    data: D,
    meta: Meta,
    fingerprinter: Fingerprinter,
    mphf: mphf::Function,
    /// Where each section is, and its checksum.
    dir: Directory,
    starts_bits_len: usize,
    /// See [`Index::schema_key`]; computed once, as a set query asks for it per part.
    schema_key: u64,
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
    /// IDF, MPHF). It does not scan postings, sketches or names: [`Index::verify`] does.
    pub fn open(data: D) -> Result<Self> {
        let bytes = data.as_ref();
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
        let meta = Meta::decode(checked(SectionId::Meta)?)?;
        let (classes, stopwords) = meta::decode_classes(checked(SectionId::Classes)?)?;
        let idf = Idf::decode(checked(SectionId::Idf)?)?;
        let fingerprinter =
            Fingerprinter::new(meta.params.clone(), classes, Analyzer::new(stopwords))
                .map_err(|e| Error::format(format!("parameters do not fit the classes: {e}")))?
                .with_idf(idf);
        let mphf = mphf::from_bytes(checked(SectionId::Mphf)?)?;

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
        })
    }

    /// Checks every byte: the whole-file checksum, every section's checksum, and the structure of
    /// postings and names. Run it after copying an index to new media.
    pub fn verify(&self) -> Result<()> {
        let bytes = self.data.as_ref();
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
        if let Some(codes) = self.codes() {
            let mut n = 0u64;
            let mut last: Option<(u32, u64)> = None;
            for (doc, key) in codes {
                n += 1;
                let ordered = last.is_none_or(|(d, k)| d < doc || (d == doc && k < key));
                if !ordered || !self.lookup(key).is_some_and(|mut p| p.any(|d| d == doc)) {
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
            let (hashes, docs) = self.ids();
            let mut seen = vec![false; self.meta.doc_count as usize];
            let mut last = None;
            for (i, h) in hashes.enumerate() {
                let doc = docs(i);
                let ok = seen.get(doc as usize).is_some_and(|s| !s)
                    && last.is_none_or(|l| l <= (h, doc))
                    && self.name(doc).is_some_and(|n| name_hash(&n) == h);
                if !ok {
                    return Err(Error::format("IDS does not list every name once, in order"));
                }
                seen[doc as usize] = true;
                last = Some((h, doc));
            }
        }
        Ok(())
    }

    /// Section IDS as (hashes, doc of the `i`-th hash).
    fn ids(
        &self,
    ) -> (
        impl ExactSizeIterator<Item = u64> + '_,
        impl Fn(usize) -> u32 + '_,
    ) {
        let s = self.section(SectionId::Ids);
        let n = self.meta.doc_count as usize;
        let (hashes, docs) = s.split_at((n * 8).min(s.len()));
        (
            hashes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
            move |i: usize| {
                docs.get(i * 4..i * 4 + 4).map_or(u32::MAX, |c| {
                    u32::from_le_bytes(c.try_into().expect("4 bytes"))
                })
            },
        )
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// Equal for indexes whose query fingerprints, probes and sketches are the same: the
    /// fingerprinter's identity, the idf table and the resolution.
    pub(crate) fn schema_key(&self) -> u64 {
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
    pub fn find(&self, name: &str) -> Option<u32> {
        if self.dir.get(SectionId::Ids).is_none() {
            return (0..self.doc_count()).find(|&d| self.name(d).as_deref() == Some(name));
        }
        let h = name_hash(name);
        let s = self.section(SectionId::Ids);
        let n = self.meta.doc_count as usize;
        let hash_at = |i: usize| u64::from_le_bytes(s[i * 8..i * 8 + 8].try_into().expect("8"));
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if hash_at(mid) < h {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let (_, doc_at) = self.ids();
        (lo..n)
            .take_while(|&i| hash_at(i) == h)
            .map(doc_at)
            .find(|&d| self.name(d).as_deref() == Some(name))
    }

    /// Every document's codes from section CODES, in document order: (document, key); `None`
    /// when the file has no CODES section.
    pub(crate) fn codes(&self) -> Option<impl Iterator<Item = (u32, u64)> + '_> {
        self.dir.get(SectionId::Codes)?;
        let s = self.section(SectionId::Codes);
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
        Some(docs.zip(keys))
    }

    fn section(&self, id: SectionId) -> &[u8] {
        match self.dir.get(id) {
            Some(e) => &self.data.as_ref()[e.range()],
            None => &[],
        }
    }

    /// The range of postings of slot `s`.
    fn list_range(&self, s: u32) -> Option<Range<u64>> {
        let starts = self.section(SectionId::Starts);
        let (bits, samples) = starts.split_at(self.starts_bits_len.min(starts.len()));
        let a = format::select1(bits, samples, s as u64)?;
        let b = if s + 1 < self.meta.slot_count {
            format::select1(bits, samples, s as u64 + 1)?
        } else {
            self.meta.ref_count
        };
        (a < b && b <= self.meta.ref_count).then_some(a..b)
    }

    /// The documents indexed under `key`, or `None` when no document has that code (rejected by
    /// the MPHF or by the slot's 16-bit check, so an unknown code slips through with probability
    /// 2⁻¹⁶).
    pub fn lookup(&self, key: u64) -> Option<Postings<'_>> {
        let slot = self.slot(key)?;
        self.checks_out(key, slot)
            .then(|| self.list_range(slot))
            .flatten()
            .map(|range| self.postings(range))
    }

    /// The MPHF's slot for `key`, if within the table (any key gets one; see `checks_out`).
    fn slot(&self, key: u64) -> Option<u32> {
        let slot = self.mphf.get(&key)?;
        (slot < self.meta.slot_count as u64).then_some(slot as u32)
    }

    /// True when slot `slot`'s 16-bit check is that of `key`: the key was indexed there.
    fn checks_out(&self, key: u64, slot: u32) -> bool {
        let at = slot as usize * 2;
        self.section(SectionId::Checks)
            .get(at..at + 2)
            .is_some_and(|c| u16::from_le_bytes([c[0], c[1]]) == format::check16(key))
    }

    /// The posting list at `range` of the POSTINGS section.
    fn postings(&self, range: Range<u64>) -> Postings<'_> {
        Postings {
            words: self.section(SectionId::Postings),
            width: self.meta.posting_bits as u32,
            range,
            doc_count: self.meta.doc_count,
        }
    }

    /// [`Index::lookup`] of many keys at once, calling `found(i, postings)` for each key `keys[i]`
    /// that has documents, in order. A query's keys are looked up in stages, each stage first
    /// asking the CPU for the cache lines of every key's next step (check words, then select
    /// samples, then postings): a large index's lookups then wait for memory together rather
    /// than one after another. The answers are those of [`Index::lookup`].
    pub fn lookup_many(&self, keys: &[u64], mut found: impl FnMut(usize, Postings<'_>)) {
        let checks = self.section(SectionId::Checks);
        let starts = self.section(SectionId::Starts);
        let samples = &starts[self.starts_bits_len.min(starts.len())..];
        let postings = self.section(SectionId::Postings);
        let mut slots: Vec<(usize, u32)> = Vec::with_capacity(keys.len());
        for (i, &key) in keys.iter().enumerate() {
            if let Some(slot) = self.slot(key) {
                prefetch(checks, slot as usize * 2);
                slots.push((i, slot));
            }
        }
        slots.retain(|&(i, slot)| {
            let known = self.checks_out(keys[i], slot);
            if known {
                prefetch(samples, (slot as u64 / format::SELECT_SAMPLE) as usize * 8);
            }
            known
        });
        let mut lists: Vec<(usize, Range<u64>)> = Vec::with_capacity(slots.len());
        for &(i, slot) in &slots {
            if let Some(range) = self.list_range(slot) {
                let width = self.meta.posting_bits as u64;
                prefetch(postings, (range.start * width / 8) as usize);
                lists.push((i, range));
            }
        }
        for (i, range) in lists {
            found(i, self.postings(range));
        }
    }

    /// Asks the CPU to fetch the sketch of document `doc` ahead of its use (a query scoring
    /// many candidates); nothing for a document number out of range.
    pub fn prefetch_sketch(&self, doc: u32) {
        let w = self.meta.params.sketch_words as usize * 8;
        prefetch(self.section(SectionId::Sketches), doc as usize * w);
    }

    /// How long the posting lists are: one scan of the start bits (`info` shows it).
    pub fn list_lengths(&self) -> ListLengths {
        let starts = self.section(SectionId::Starts);
        let bits = &starts[..self.starts_bits_len.min(starts.len())];
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
        ListLengths {
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
        }
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

    /// The sketch of document `doc`.
    pub fn sketch(&self, doc: u32) -> Option<Vec<u64>> {
        Some(self.sketch_words(doc)?.collect())
    }

    /// The words of document `doc`'s sketch, read in place (no allocation: this runs once per
    /// candidate of every query).
    pub fn sketch_words(&self, doc: u32) -> Option<impl Iterator<Item = u64> + '_> {
        let w = self.meta.params.sketch_words as usize;
        let s = self.section(SectionId::Sketches);
        let at = (doc as usize).checked_mul(w * 8)?;
        let b = s.get(at..at.checked_add(w * 8)?)?;
        Some(
            b.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        )
    }

    /// The name (id) of document `doc`; invalid UTF-8 from a damaged file is replaced.
    pub fn name(&self, doc: u32) -> Option<Cow<'_, str>> {
        self.string(SectionId::Names, doc)
    }

    /// The title of document `doc`, when the index stores titles and it has one.
    pub fn title(&self, doc: u32) -> Option<Cow<'_, str>> {
        self.string(SectionId::Titles, doc)
            .filter(|t| !t.is_empty())
    }

    fn string(&self, id: SectionId, doc: u32) -> Option<Cow<'_, str>> {
        let t = Strings::parse(self.section(id), id.name()).ok()?;
        t.get(doc).map(String::from_utf8_lossy)
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

/// A hint to load the cache line holding `bytes[at]`; nothing when `at` is out of bounds or the
/// target has no prefetch instruction. It never faults, so it is safe on any address.
#[inline]
fn prefetch(bytes: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < bytes.len() {
        // SAFETY: a prefetch is a hint that neither faults nor reads memory architecturally;
        // the address is inside `bytes` anyway.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(at) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, at);
}
