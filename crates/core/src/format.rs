//! The index file's byte layout: magic, version, section directory, trailer, and the encodings
//! used inside sections (little-endian integers, packed bit arrays, select samples, string
//! tables). `index-format.md` is the source of truth; names here follow its sections.

use crate::error::{Error, Result};
use crate::hash;
use std::ops::Range;

/// The first eight bytes of every index file (PNG-style: a high byte, a name, CR LF, ^Z, LF).
pub const MAGIC: [u8; 8] = *b"\x89PDX\r\n\x1a\n";
/// The last eight bytes of every index file.
pub const END_MAGIC: [u8; 8] = *b"PDX-END\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 14;
/// The oldest version this build reads: version 5 files differ only in their idf rule (stored in
/// the file, so they answer exactly as before) and lack the set sections CODES and IDS; versions
/// 5 and 6 lack the block tree (TREE, SUMS), so their large sections are checked whole; version
/// 7 files have 4 KiB blocks in their tree instead of 16 KiB (a field of TREE, read as written);
/// files before version 9 have 4-bit MPHF group seeds instead of 2 and levels of 100% instead of
/// 150% (`mphf::seed_bits` of the version; the level sizes are in the section, read as written);
/// version 9 files differ from version 10 in how a learned idf table was made (stored in the
/// file) and in the ids of file names that are not UTF-8, so they answer as before; version 10
/// files have no sketch-only idf entries (`Idf::decode`), so their sketches weigh as their
/// samples do, as they did; files before version 13 have no FILTER, and their lookups go to the
/// MPHF, as they did; version 13 files may have their FILTER at any multiple of [`ALIGN`]
/// (version 14 puts it at a multiple of [`FILTER_ALIGN`]), read as written.
pub const MIN_VERSION: u32 = 5;
/// Bytes of the fixed header: magic, version, section count, file length, directory checksum.
pub const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 8;
/// Offset of the directory checksum in the header.
pub const DIR_CHECKSUM_AT: usize = HEADER_LEN - 8;
/// Bytes of one directory entry: id, reserved, offset, length, checksum.
pub const DIR_ENTRY_LEN: usize = 4 + 4 + 8 + 8 + 8;
/// Bytes of the trailer: file checksum, end magic.
pub const TRAILER_LEN: usize = 8 + 8;
/// Sections start at multiples of this many bytes.
pub const ALIGN: usize = 8;
/// FILTER starts at a multiple of this many bytes (version 14 on): its 32-byte blocks then never
/// straddle two 64-byte cache lines. At an offset of 56 modulo 64, half of them did, and a
/// query of 16 shards at 2 million documents ran a third slower (`scripts/set-bench.sh`).
pub const FILTER_ALIGN: usize = 64;
/// One select sample is kept for every this many slots (see section STARTS).
pub const SELECT_SAMPLE: u64 = 64;
/// Strings of a string table are grouped in blocks of this many, one offset per block.
pub const STRING_BLOCK: usize = 16;

/// The sections of an index, by id (see `index-format.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum SectionId {
    /// Counts and fingerprinting parameters.
    Meta = 1,
    /// Prefix classes (table and expected shares) and stopwords.
    Classes = 2,
    /// The minimal perfect hash function.
    Mphf = 3,
    /// One 16-bit check per slot.
    Checks = 4,
    /// Start-of-list bit vector over postings, with select samples.
    Starts = 5,
    /// Packed document ids.
    Postings = 6,
    /// Per-document simhash sketches.
    Sketches = 7,
    /// Document ids (names) as a string table.
    Names = 8,
    /// Optional titles as a string table.
    Titles = 9,
    /// The idf table that weights the sketches.
    Idf = 10,
    /// Optional (segments of an index set): every document's codes, so that segments merge
    /// without their texts.
    Codes = 11,
    /// Optional (segments of an index set): document names' hashes, sorted, to find a
    /// document by its id.
    Ids = 12,
    /// The block tree's size and root (version 7 on).
    Tree = 13,
    /// The block tree's hashes: of every block of the large sections, and of its own blocks
    /// (version 7 on).
    Sums = 14,
    /// Optional (version 13 on): a Bloom filter over the distinct codes, in files whose codes
    /// were made for a larger collection (shards, segments), where most lookups miss.
    Filter = 15,
}

impl SectionId {
    /// All sections in file order.
    pub const ALL: [SectionId; 15] = [
        SectionId::Meta,
        SectionId::Classes,
        SectionId::Idf,
        SectionId::Tree,
        SectionId::Mphf,
        SectionId::Filter,
        SectionId::Checks,
        SectionId::Starts,
        SectionId::Postings,
        SectionId::Sketches,
        SectionId::Names,
        SectionId::Titles,
        SectionId::Codes,
        SectionId::Ids,
        SectionId::Sums,
    ];

    /// The section with this id.
    pub fn from_u32(id: u32) -> Option<SectionId> {
        SectionId::ALL.into_iter().find(|s| *s as u32 == id)
    }

    /// The first format version that has this section.
    pub fn since(self) -> u32 {
        match self {
            SectionId::Codes | SectionId::Ids => 6,
            SectionId::Tree | SectionId::Sums => 7,
            SectionId::Filter => 13,
            _ => MIN_VERSION,
        }
    }

    /// The multiple of which this section's offset is in a file of `version`.
    pub fn align(self, version: u32) -> usize {
        match self {
            SectionId::Filter if version >= 14 => FILTER_ALIGN,
            _ => ALIGN,
        }
    }

    /// Upper-case name as in the spec.
    pub fn name(self) -> &'static str {
        match self {
            SectionId::Meta => "META",
            SectionId::Classes => "CLASSES",
            SectionId::Mphf => "MPHF",
            SectionId::Checks => "CHECKS",
            SectionId::Starts => "STARTS",
            SectionId::Postings => "POSTINGS",
            SectionId::Sketches => "SKETCHES",
            SectionId::Names => "NAMES",
            SectionId::Titles => "TITLES",
            SectionId::Idf => "IDF",
            SectionId::Codes => "CODES",
            SectionId::Ids => "IDS",
            SectionId::Tree => "TREE",
            SectionId::Sums => "SUMS",
            SectionId::Filter => "FILTER",
        }
    }
}

/// Where one section is and what its bytes hash to (one directory entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The section.
    pub id: SectionId,
    /// Offset from the start of the file (a multiple of [`ALIGN`]).
    pub offset: u64,
    /// Length in bytes (without padding).
    pub len: u64,
    /// [`hash::checksum`] of the section's bytes.
    pub checksum: u64,
}

impl Entry {
    /// The section's bytes as a range of the file.
    pub fn range(&self) -> Range<usize> {
        self.offset as usize..(self.offset + self.len) as usize
    }
}

/// The header and the section directory (`index-format.md` §4, §5): the one type that
/// lays them out for the builder and decodes and checks them for the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directory {
    /// The file's format version.
    pub version: u32,
    /// Total bytes of the file, trailer included.
    pub file_len: u64,
    /// The entries in file order.
    entries: Vec<Entry>,
    /// Each section's entry by `id − 1` (ids are 1 to `SectionId::ALL.len()`), so that a
    /// lookup's section reads cost no search.
    by_id: [Option<Entry>; SectionId::ALL.len()],
}

impl Directory {
    /// Lays out sections of these lengths in this order: each at the next multiple of its
    /// alignment ([`SectionId::align`]) after the directory and the section before it, then
    /// the trailer (at a multiple of [`ALIGN`]).
    pub fn layout(sections: &[(SectionId, &[u8])]) -> Directory {
        let mut at = (HEADER_LEN + sections.len() * DIR_ENTRY_LEN).next_multiple_of(ALIGN);
        let mut entries = Vec::with_capacity(sections.len());
        for (id, bytes) in sections {
            at = at.next_multiple_of(id.align(VERSION));
            entries.push(Entry {
                id: *id,
                offset: at as u64,
                len: bytes.len() as u64,
                checksum: hash::checksum(bytes),
            });
            at = (at + bytes.len()).next_multiple_of(ALIGN);
        }
        Directory::new(VERSION, (at + TRAILER_LEN) as u64, entries)
    }

    /// Header and directory bytes, with the directory checksum.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.buf.extend_from_slice(&MAGIC);
        w.u32(VERSION);
        w.u32(self.entries.len() as u32);
        w.u64(self.file_len);
        w.u64(0); // directory checksum, filled below
        for e in &self.entries {
            w.u32(e.id as u32);
            w.u32(0);
            w.u64(e.offset);
            w.u64(e.len);
            w.u64(e.checksum);
        }
        let sum = dir_checksum(&w.buf);
        w.buf[DIR_CHECKSUM_AT..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
        w.buf
    }

    /// Decodes and checks the header and directory of a whole file: magic, version, length, end
    /// magic, the directory checksum, and every section inside the file, aligned, in order and
    /// at most once. Section contents are not read.
    pub fn decode(bytes: &[u8]) -> Result<Directory> {
        // An empty file is most often a copy that never started, not some other kind of file.
        if bytes.is_empty() {
            return Err(Error::Truncated {
                what: "the file is empty".into(),
            });
        }
        // A few bytes that begin as an index does are a copy that stopped early too.
        if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
            return Err(Error::Truncated {
                what: format!(
                    "{} bytes, the start of an index's magic and nothing more",
                    bytes.len()
                ),
            });
        }
        if bytes.len() < MAGIC.len() || bytes[..8] != MAGIC {
            return Err(Error::BadMagic);
        }
        if bytes.len() < HEADER_LEN + TRAILER_LEN {
            return Err(Error::Truncated {
                what: format!("{} bytes is shorter than a header", bytes.len()),
            });
        }
        let mut r = Reader::new(&bytes[8..HEADER_LEN], "header");
        let version = r.u32()?;
        if !(MIN_VERSION..=VERSION).contains(&version) {
            return Err(Error::Version {
                expected: VERSION,
                got: version,
            });
        }
        let count = r.u32()? as usize;
        let file_len = r.u64()?;
        let dir_sum = r.u64()?;
        if file_len != bytes.len() as u64 {
            let what = format!(
                "the header says {file_len} bytes, the file has {}",
                bytes.len()
            );
            // A file that ends as an index ends was not cut short: its length field is damaged.
            let ends_whole = bytes[bytes.len() - 8..] == END_MAGIC;
            // An index followed by the start of a signature block (its magic), shorter than a
            // block: a signed file cut short, which a copy that stopped early leaves.
            let index_len = usize::try_from(file_len).unwrap_or(usize::MAX);
            let cut_signature = index_len < bytes.len()
                && bytes.len() - index_len < crate::signing::SIGNATURE_LEN
                && {
                    // The magic, or as much of it as is left.
                    let rest = &bytes[index_len..];
                    let magic = &crate::signing::SIG_MAGIC[..];
                    rest.starts_with(magic) || magic.starts_with(rest)
                };
            return Err(if cut_signature {
                Error::Truncated {
                    what: format!(
                        "its signature block has {} of its {} bytes",
                        bytes.len() - index_len,
                        crate::signing::SIGNATURE_LEN
                    ),
                }
            } else if file_len > bytes.len() as u64 && !ends_whole {
                Error::Truncated { what }
            } else if index_len < bytes.len() && !ends_whole {
                // Longer than it says, and not ending as an index: bytes appended after the
                // index and its signature block (a copy's zero padding, another file).
                let signed = bytes[index_len..].starts_with(&crate::signing::SIG_MAGIC)
                    && bytes.len() - index_len >= crate::signing::SIGNATURE_LEN;
                let whole = index_len
                    + if signed {
                        crate::signing::SIGNATURE_LEN
                    } else {
                        0
                    };
                Error::format(format!(
                    "{} bytes follow the {whole} of {} index (padding, or another file's bytes): cut the file to {whole} bytes (`truncate -s {whole} FILE`)",
                    bytes.len() - whole,
                    if signed { "a signed" } else { "an" }
                ))
            } else {
                Error::format(format!(
                    "{what}{}",
                    if ends_whole {
                        " and ends where an index ends, so the length field is damaged"
                    } else {
                        ""
                    }
                ))
            });
        }
        if bytes[bytes.len() - 8..] != END_MAGIC {
            return Err(Error::format("end magic missing"));
        }
        let dir_end = count
            .checked_mul(DIR_ENTRY_LEN)
            .and_then(|n| n.checked_add(HEADER_LEN))
            .filter(|&e| e <= bytes.len() - TRAILER_LEN)
            .ok_or_else(|| Error::format(format!("{count} sections do not fit the file")))?;
        let got = dir_checksum(&bytes[..dir_end]);
        if got != dir_sum {
            return Err(Error::ChecksumMismatch {
                section: "header and directory",
                expected: dir_sum,
                got,
            });
        }
        let mut entries: Vec<Entry> = Vec::with_capacity(count);
        let mut last_end = dir_end as u64;
        let mut r = Reader::new(&bytes[HEADER_LEN..dir_end], "directory");
        for _ in 0..count {
            let id = r.u32()?;
            if r.u32()? != 0 {
                return Err(Error::format(
                    "a directory entry's reserved field is not zero",
                ));
            }
            let (offset, len, checksum) = (r.u64()?, r.u64()?, r.u64()?);
            let id = SectionId::from_u32(id)
                .filter(|id| id.since() <= version)
                .ok_or_else(|| Error::format(format!("unknown section id {id}")))?;
            let end = offset
                .checked_add(len)
                .filter(|&e| e <= (bytes.len() - TRAILER_LEN) as u64);
            let align = id.align(version) as u64;
            if !offset.is_multiple_of(align) {
                return Err(Error::format(format!(
                    "section {} starts at byte {offset}, not at a multiple of {align}",
                    id.name()
                )));
            }
            match end {
                Some(end) if offset >= last_end => last_end = end,
                _ => {
                    return Err(Error::format(format!(
                        "section {} is out of bounds",
                        id.name()
                    )))
                }
            }
            if entries.iter().any(|e: &Entry| e.id == id) {
                return Err(Error::format(format!(
                    "section {} appears twice",
                    id.name()
                )));
            }
            entries.push(Entry {
                id,
                offset,
                len,
                checksum,
            });
        }
        Ok(Directory::new(version, file_len, entries))
    }

    fn new(version: u32, file_len: u64, entries: Vec<Entry>) -> Directory {
        let mut by_id = [None; SectionId::ALL.len()];
        for e in &entries {
            by_id[e.id as usize - 1] = Some(*e);
        }
        Directory {
            version,
            file_len,
            entries,
            by_id,
        }
    }

    /// The entries in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry of a section, if the file has it.
    pub fn get(&self, id: SectionId) -> Option<&Entry> {
        self.by_id[id as usize - 1].as_ref()
    }

    /// Bytes of header and directory.
    pub fn len_bytes(&self) -> usize {
        HEADER_LEN + self.entries.len() * DIR_ENTRY_LEN
    }
}

/// Recomputes every checksum of an index file in place: each section's directory entry whose
/// range lies inside the file, the directory checksum and the trailer's file checksum. For the
/// fuzzers and the corruption tests, which mutate a valid file and want the parsers behind the
/// checksums reached; a damaged header is left as it is.
#[doc(hidden)]
pub fn reseal(bytes: &mut [u8]) {
    reseal_checksums(bytes);
    // The tree hashes the sections, and the checksums then cover the tree.
    if let Ok(dir) = Directory::decode(bytes) {
        crate::integrity::reseal(bytes, &dir);
        reseal_checksums(bytes);
    }
}

fn reseal_checksums(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN + TRAILER_LEN {
        return;
    }
    let count = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
    let Some(dir_end) = count
        .checked_mul(DIR_ENTRY_LEN)
        .and_then(|n| n.checked_add(HEADER_LEN))
        .filter(|&e| e <= bytes.len() - TRAILER_LEN)
    else {
        return;
    };
    let body_end = bytes.len() - TRAILER_LEN;
    for i in 0..count {
        let at = HEADER_LEN + i * DIR_ENTRY_LEN;
        let field = |o: usize| u64::from_le_bytes(bytes[at + o..at + o + 8].try_into().expect("8"));
        let (offset, len) = (field(8), field(16));
        if let Some(end) = offset.checked_add(len).filter(|&e| e <= body_end as u64) {
            let sum = hash::checksum(&bytes[offset as usize..end as usize]);
            bytes[at + 24..at + 32].copy_from_slice(&sum.to_le_bytes());
        }
    }
    let sum = dir_checksum(&bytes[..dir_end]);
    bytes[DIR_CHECKSUM_AT..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
    let sum = hash::checksum(&bytes[..body_end]);
    bytes[body_end..body_end + 8].copy_from_slice(&sum.to_le_bytes());
}

/// Checksum of the header (without its checksum field) and the directory.
fn dir_checksum(head_and_dir: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::with_seed(hash::CHECKSUM_SEED);
    h.update(&head_and_dir[..DIR_CHECKSUM_AT]);
    h.update(&head_and_dir[HEADER_LEN..]);
    h.digest()
}

/// The 16-bit check stored in a code's slot: the code's top 16 bits.
#[inline]
pub fn check16(key: u64) -> u16 {
    (key >> 48) as u16
}

/// Bits needed to store any value below `n` (at least 1).
pub fn bits_for(n: u64) -> u32 {
    (64 - n.saturating_sub(1).leading_zeros()).max(1)
}

/// Little-endian writer into a byte vector.
#[derive(Default)]
pub struct Writer {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Writer {
    /// A `u8`.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// A little-endian `u16`.
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A little-endian `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A little-endian IEEE-754 `f32`.
    pub fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A little-endian IEEE-754 `f64`.
    pub fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Bytes prefixed by their length as a `u8` (the caller ensures ≤ 255).
    pub fn short_bytes(&mut self, b: &[u8]) {
        self.u8(b.len() as u8);
        self.buf.extend_from_slice(b);
    }
    /// An unsigned LEB128 integer.
    pub fn leb128(&mut self, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.buf.push(byte);
                return;
            }
            self.buf.push(byte | 0x80);
        }
    }
}

/// Bounds-checked little-endian reader over a section; every failure is a format error that
/// names the section.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    section: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader over `bytes` of section `section`.
    pub fn new(bytes: &'a [u8], section: &'static str) -> Self {
        Reader {
            bytes,
            pos: 0,
            section,
        }
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| Error::format(format!("section {} ends early", self.section)))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("take returns N bytes"))
    }
    /// A `u8`.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    /// A little-endian `u16`.
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    /// A little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    /// A little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// A little-endian `f32`.
    pub fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    /// A little-endian `f64`.
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    /// Bytes prefixed by a `u8` length.
    pub fn short_bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u8()? as usize;
        self.take(n)
    }
    /// An unsigned LEB128 integer of at most 10 bytes.
    pub fn leb128(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Error::format(format!(
            "section {}: overlong LEB128",
            self.section
        )))
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
    /// Fails unless every byte was read.
    pub fn finish(&self) -> Result<()> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(Error::format(format!(
                "section {} has {} unexpected trailing bytes",
                self.section,
                self.remaining()
            )))
        }
    }
}

/// Packs `values` of `width` bits each, LSB first, into little-endian `u64` words.
pub fn pack_bits(values: impl IntoIterator<Item = u64>, width: u32, out: &mut Writer) {
    let mut word = 0u64;
    let mut used = 0u32;
    for v in values {
        debug_assert!(width == 64 || v < 1 << width);
        word |= v << used;
        if used + width >= 64 {
            out.u64(word);
            let spill = used + width - 64;
            word = if spill == 0 { 0 } else { v >> (width - spill) };
            used = spill;
        } else {
            used += width;
        }
    }
    if used > 0 {
        out.u64(word);
    }
}

/// The little-endian `u64` word `i` of a word array, or `None` past its end.
#[inline]
pub fn word(words: &[u8], i: u64) -> Option<u64> {
    let at = usize::try_from(i).ok()?.checked_mul(8)?;
    let b = words.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// The `width`-bit value at bit position `pos` of a packed array, or `None` past its end.
#[inline]
pub fn get_bits(words: &[u8], pos: u64, width: u32) -> Option<u64> {
    let (i, off) = (pos / 64, (pos % 64) as u32);
    let lo = word(words, i)? >> off;
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    if off + width <= 64 {
        Some(lo & mask)
    } else {
        let hi = word(words, i + 1)? << (64 - off);
        Some((lo | hi) & mask)
    }
}

/// Position of the `s`-th set bit (from 0) of `bits`, given samples of every
/// [`SELECT_SAMPLE`]-th set bit's position; `None` when there is no such bit.
pub fn select1(bits: &[u8], samples: &[u8], s: u64) -> Option<u64> {
    with_popcnt!(select1_in(bits, samples, s))
}

/// [`select1`], for whichever instructions it is compiled with.
#[inline(always)]
fn select1_in(bits: &[u8], samples: &[u8], s: u64) -> Option<u64> {
    let start = word(samples, s / SELECT_SAMPLE)?;
    let mut left = s % SELECT_SAMPLE;
    let mut i = start / 64;
    let mut w = word(bits, i)? & (u64::MAX << (start % 64));
    loop {
        let ones = w.count_ones() as u64;
        if left < ones {
            for _ in 0..left {
                w &= w - 1;
            }
            return Some(i * 64 + w.trailing_zeros() as u64);
        }
        left -= ones;
        i += 1;
        w = word(bits, i)?;
    }
}

/// Writes a string table: count, block size, block offsets, then each string as LEB128 length
/// and UTF-8 bytes.
pub fn write_strings<'s>(strings: impl ExactSizeIterator<Item = &'s str>, out: &mut Writer) {
    let n = strings.len();
    let mut blob = Writer::default();
    let mut offsets = Vec::with_capacity(n / STRING_BLOCK + 2);
    for (i, s) in strings.enumerate() {
        if i % STRING_BLOCK == 0 {
            offsets.push(blob.buf.len() as u64);
        }
        blob.leb128(s.len() as u64);
        blob.buf.extend_from_slice(s.as_bytes());
    }
    offsets.push(blob.buf.len() as u64);
    out.u32(n as u32);
    out.u32(STRING_BLOCK as u32);
    for o in offsets {
        out.u64(o);
    }
    out.buf.extend_from_slice(&blob.buf);
}

/// A string table read from a section (borrowing its bytes).
#[derive(Clone, Copy, Debug)]
pub struct Strings<'a> {
    count: u32,
    offsets: &'a [u8],
    blob: &'a [u8],
}

impl<'a> Strings<'a> {
    /// Parses the table's header and checks its sizes (not the strings: see [`Strings::check`]).
    pub fn parse(bytes: &'a [u8], section: &'static str) -> Result<Strings<'a>> {
        let mut r = Reader::new(bytes, section);
        let count = r.u32()?;
        let block = r.u32()?;
        if block as usize != STRING_BLOCK {
            return Err(Error::format(format!(
                "section {section}: block size {block}"
            )));
        }
        let blocks = (count as usize).div_ceil(STRING_BLOCK) + 1;
        let offsets = r.take(
            blocks
                .checked_mul(8)
                .ok_or_else(|| Error::format("string table too large"))?,
        )?;
        let blob = r.take(r.remaining())?;
        let t = Strings {
            count,
            offsets,
            blob,
        };
        if word(offsets, blocks as u64 - 1) != Some(blob.len() as u64) {
            return Err(Error::format(format!(
                "section {section}: string table length mismatch"
            )));
        }
        Ok(t)
    }

    /// Where the strings' bytes start, from the start of the section.
    pub fn blob_offset(&self) -> usize {
        8 + self.offsets.len()
    }

    /// Number of strings.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// The bytes of string `i`, or `None` when `i` is out of range or the table is damaged.
    pub fn get(&self, i: u32) -> Option<&'a [u8]> {
        if i >= self.count {
            return None;
        }
        let block = i as usize / STRING_BLOCK;
        let start = usize::try_from(word(self.offsets, block as u64)?).ok()?;
        let mut r = Reader::new(self.blob.get(start..)?, "strings");
        for _ in 0..i as usize % STRING_BLOCK {
            let n = usize::try_from(r.leb128().ok()?).ok()?;
            r.take(n).ok()?;
        }
        let n = usize::try_from(r.leb128().ok()?).ok()?;
        r.take(n).ok()
    }

    /// Full check: every block offset consistent and every string valid UTF-8.
    pub fn check(&self, section: &'static str) -> Result<()> {
        let bad = || Error::format(format!("section {section}: damaged string table"));
        let mut r = Reader::new(self.blob, section);
        for i in 0..self.count as usize {
            if i % STRING_BLOCK == 0
                && word(self.offsets, (i / STRING_BLOCK) as u64)
                    != Some((self.blob.len() - r.remaining()) as u64)
            {
                return Err(bad());
            }
            let n = usize::try_from(r.leb128()?).map_err(|_| bad())?;
            std::str::from_utf8(r.take(n)?).map_err(|_| bad())?;
        }
        r.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn section_ids_are_one_to_the_section_count() {
        // `Directory::by_id` is indexed by id − 1.
        let mut ids: Vec<u32> = SectionId::ALL.iter().map(|&s| s as u32).collect();
        ids.sort_unstable();
        assert_eq!(ids, (1..=SectionId::ALL.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn a_directory_decodes_as_it_was_laid_out() {
        let (a, b) = (vec![1u8; 13], vec![2u8; 40]);
        let dir = Directory::layout(&[(SectionId::Meta, &a[..]), (SectionId::Names, &b[..])]);
        let mut file = dir.encode();
        for e in dir.entries() {
            file.resize(e.offset as usize, 0);
            file.extend_from_slice(if e.id == SectionId::Meta { &a } else { &b });
        }
        file.resize(dir.file_len as usize - 8, 0);
        file.extend_from_slice(&END_MAGIC);
        assert_eq!(Directory::decode(&file).unwrap(), dir);
        // After a 32-byte header, two 32-byte entries and META (96..109) padded to 8.
        assert_eq!(dir.get(SectionId::Names).unwrap().range(), 112..152);
        assert!(dir.get(SectionId::Titles).is_none());
    }

    #[test]
    fn a_file_shorter_than_the_magic_is_truncated_if_it_begins_as_one() {
        for n in 1..MAGIC.len() {
            let err = Directory::decode(&MAGIC[..n]).unwrap_err();
            assert!(
                matches!(&err, Error::Truncated { what } if what.starts_with(&format!("{n} bytes"))),
                "{n}: {err}"
            );
        }
        // Other short files are some other kind of file.
        assert!(matches!(Directory::decode(b"PK\x03"), Err(Error::BadMagic)));
        assert!(matches!(Directory::decode(b"\n"), Err(Error::BadMagic)));
    }

    /// A file of `version` with a META of 13 bytes and then a FILTER of 64: its bytes, and its
    /// directory as laid out today.
    fn meta_and_filter(version: u32, filter_at: Option<u64>) -> (Vec<u8>, Directory) {
        let (a, b) = (vec![1u8; 13], vec![2u8; 64]);
        let mut dir = Directory::layout(&[(SectionId::Meta, &a[..]), (SectionId::Filter, &b[..])]);
        dir.version = version;
        if let Some(at) = filter_at {
            dir.entries[1].offset = at;
            dir.file_len = at + 64 + TRAILER_LEN as u64;
        }
        let dir = Directory::new(dir.version, dir.file_len, dir.entries.clone());
        let mut file = dir.encode();
        file[8..12].copy_from_slice(&version.to_le_bytes());
        let sum = dir_checksum(&file);
        file[DIR_CHECKSUM_AT..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
        for e in dir.entries() {
            file.resize(e.offset as usize, 0);
            file.extend_from_slice(if e.id == SectionId::Meta { &a } else { &b });
        }
        file.resize(dir.file_len as usize - 8, 0);
        file.extend_from_slice(&END_MAGIC);
        (file, dir)
    }

    #[test]
    fn filter_is_64_aligned_from_version_14() {
        // Header and two entries end at 96, META at 96..109; FILTER at the next multiple of 64.
        let (file, dir) = meta_and_filter(VERSION, None);
        assert_eq!(dir.get(SectionId::Filter).unwrap().offset, 128);
        assert_eq!(Directory::decode(&file).unwrap(), dir);
        // Version 13 put it at the next multiple of 8, which its readers still accept.
        let (file, dir) = meta_and_filter(13, Some(112));
        assert_eq!(Directory::decode(&file).unwrap(), dir);
        // A version 14 file with FILTER there is refused, saying why.
        let (file, _) = meta_and_filter(14, Some(112));
        let e = Directory::decode(&file).unwrap_err().to_string();
        assert!(
            e.contains("FILTER starts at byte 112, not at a multiple of 64"),
            "{e}"
        );
        let (file, _) = meta_and_filter(14, Some(116));
        assert!(Directory::decode(&file).is_err());
    }

    #[test]
    fn bit_widths() {
        assert_eq!(bits_for(0), 1);
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(3), 2);
        assert_eq!(bits_for(6000), 13);
        assert_eq!(bits_for(1 << 20), 20);
        assert_eq!(bits_for((1 << 20) + 1), 21);
    }

    #[test]
    fn packed_bits_known_bytes() {
        let mut w = Writer::default();
        pack_bits([1, 2, 3, 4, 5], 13, &mut w);
        // 1 | 2<<13 | 3<<26 | 4<<39 | 5<<52 (low 12 bits of 5), then the 13th bit of 5 (0).
        let first: u64 = 1 | 2 << 13 | 3 << 26 | 4 << 39 | 5 << 52;
        assert_eq!(w.buf[..8], first.to_le_bytes());
        assert_eq!(w.buf[8..], [0u8; 8]);
        let mut w = Writer::default();
        pack_bits([0x1fff, 1], 13, &mut w);
        assert_eq!(w.buf, (0x1fffu64 | 1 << 13).to_le_bytes());
    }

    proptest! {
        #[test]
        fn packed_bits_round_trip(width in 1u32..=64, raw in proptest::collection::vec(any::<u64>(), 0..200)) {
            let values: Vec<u64> = raw.iter().map(|v| if width == 64 { *v } else { v & ((1 << width) - 1) }).collect();
            let mut w = Writer::default();
            pack_bits(values.iter().copied(), width, &mut w);
            prop_assert_eq!(w.buf.len(), (values.len() * width as usize).div_ceil(64) * 8);
            for (i, v) in values.iter().enumerate() {
                prop_assert_eq!(get_bits(&w.buf, i as u64 * width as u64, width), Some(*v));
            }
            prop_assert_eq!(get_bits(&w.buf, w.buf.len() as u64 * 8, width.min(1)), None);
        }

        #[test]
        fn select_matches_a_scan(bits in proptest::collection::vec(any::<bool>(), 1..2000)) {
            let mut w = Writer::default();
            pack_bits(bits.iter().map(|&b| b as u64), 1, &mut w);
            let ones: Vec<u64> = bits.iter().enumerate().filter(|b| *b.1).map(|b| b.0 as u64).collect();
            let mut s = Writer::default();
            for o in ones.iter().step_by(SELECT_SAMPLE as usize) { s.u64(*o); }
            for (i, &o) in ones.iter().enumerate() {
                prop_assert_eq!(select1(&w.buf, &s.buf, i as u64), Some(o));
                // The copy compiled for the baseline, without POPCNT, too.
                prop_assert_eq!(select1_in(&w.buf, &s.buf, i as u64), Some(o));
            }
            prop_assert_eq!(select1(&w.buf, &s.buf, ones.len() as u64), None);
        }

        #[test]
        fn strings_round_trip(v in proptest::collection::vec(".{0,40}", 0..100)) {
            let mut w = Writer::default();
            write_strings(v.iter().map(String::as_str), &mut w);
            let t = Strings::parse(&w.buf, "NAMES").unwrap();
            t.check("NAMES").unwrap();
            prop_assert_eq!(t.len() as usize, v.len());
            for (i, s) in v.iter().enumerate() {
                prop_assert_eq!(t.get(i as u32), Some(s.as_bytes()));
            }
            prop_assert_eq!(t.get(v.len() as u32), None);
        }
    }
}
