//! Checked on touch: the block hash tree of sections TREE and SUMS (`index-format.md` §7.1).
//! The large sections are cut into blocks; each block's BLAKE3 hash is in SUMS, whose blocks
//! are hashed in turn, up to one root in TREE, which `open` checks with the small sections. A
//! reader checks a block the first time a query reads it and remembers it in one bit, so the
//! cost does not grow with the file and a damaged block gives an error, never an answer.
//! Files of versions 5 and 6 have no tree: their large sections are checked whole, against
//! the directory, the first time they are read.

use crate::error::{Error, Result};
use crate::format::{Directory, Reader, SectionId, Writer};
use crate::hash;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of one block hash: BLAKE3 cut to 128 bits.
pub const HASH_LEN: usize = 16;
/// log2 of the block size written today: 16 KiB, the sixteen 1 KiB chunks BLAKE3 hashes side
/// by side in its widest SIMD path, about 6 GB/s on one core against 2.2 GB/s for 4 KiB
/// blocks (of four chunks), which a batch of queries pays for most of a large file once; and
/// 0.1% of the file in hashes (format version 8). Version 7 files have 4 KiB blocks (README,
/// "Integrity and signed indexes", has the measurements that chose the size).
pub const BLOCK_LOG2: u8 = 14;
/// Block sizes a reader accepts: 512 bytes to 16 MiB.
const BLOCK_LOG2_RANGE: std::ops::RangeInclusive<u8> = 9..=24;
/// The tag of SUMS' own blocks (the top level) in [`block_hash`]; the root uses tag 0.
const TOP_TAG: u32 = SectionId::Sums as u32;

/// One block's hash: BLAKE3 of its tag (the section id), its index and its bytes, so that a
/// block moved to another place or section does not match.
pub fn block_hash(tag: u32, index: u64, bytes: &[u8]) -> [u8; HASH_LEN] {
    // The 12-byte prefix would leave the block's bytes off BLAKE3's 1 KiB chunk boundaries, and
    // `Hasher::update` then compresses most of them 64 bytes at a time. Hashed as one
    // contiguous input (the same bytes, so the same hash), whole chunks go through BLAKE3's
    // SIMD path: a query's first touch of a block costs about a third as much.
    const PREFIX: usize = 12;
    const INLINE: usize = PREFIX + (1 << BLOCK_LOG2);
    thread_local! {
        // The contiguous input, reused: zeroing 16 KiB on the stack for every block would
        // cost a tenth of its hash.
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut out = [0u8; HASH_LEN];
    let digest = if bytes.len() + PREFIX <= INLINE {
        BUF.with_borrow_mut(|buf| {
            buf.clear();
            buf.extend_from_slice(&tag.to_le_bytes());
            buf.extend_from_slice(&index.to_le_bytes());
            buf.extend_from_slice(bytes);
            blake3::hash(buf)
        })
    } else {
        let mut h = blake3::Hasher::new();
        h.update(&tag.to_le_bytes());
        h.update(&index.to_le_bytes());
        h.update(bytes);
        h.finalize()
    };
    out.copy_from_slice(&digest.as_bytes()[..HASH_LEN]);
    out
}

/// The sections `open` decodes and checks whole (TREE only from version 7; FILTER when the file
/// has one); a signature hashes exactly these beside the header and directory. FILTER is read
/// at every one of a query's codes: checking its blocks as they are first read cost a query on
/// 16 shards more than checking all of it at open (10 bits per code: 1.2 MB, one xxh3 pass of
/// 59 µs in memory, for a shard of 125,000 documents at 2 million's resolution).
pub const CHECKED_AT_OPEN: [SectionId; 6] = [
    SectionId::Meta,
    SectionId::Classes,
    SectionId::Idf,
    SectionId::Mphf,
    SectionId::Filter,
    SectionId::Tree,
];

/// True for the sections that the tree covers block by block: all but those `open` checks
/// whole and SUMS, the tree itself.
pub fn covered(id: SectionId) -> bool {
    !CHECKED_AT_OPEN.contains(&id) && id != SectionId::Sums
}

/// Section TREE: the block size, the number of leaf and top hashes, and the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tree {
    /// log2 of the block size.
    pub block_log2: u8,
    /// Hashes of the covered sections' blocks.
    pub leaves: u64,
    /// Hashes of the leaf hashes' blocks.
    pub tops: u64,
    /// Hash of all top hashes.
    pub root: [u8; HASH_LEN],
}

impl Tree {
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u8(self.block_log2);
        w.u8(HASH_LEN as u8);
        w.buf.extend_from_slice(&[0; 6]);
        w.u64(self.leaves);
        w.u64(self.tops);
        w.buf.extend_from_slice(&self.root);
        w.buf
    }

    /// Decodes section TREE and checks it against the directory: the leaf count is the
    /// covered sections' blocks, and SUMS holds exactly the top and leaf hashes.
    pub fn decode(bytes: &[u8], dir: &Directory) -> Result<Tree> {
        let mut r = Reader::new(bytes, "TREE");
        let block_log2 = r.u8()?;
        let hash_len = r.u8()?;
        if r.take(6)?.iter().any(|&b| b != 0) {
            return Err(Error::format("TREE: reserved bytes are not zero"));
        }
        let (leaves, tops) = (r.u64()?, r.u64()?);
        let root = r.take(HASH_LEN)?.try_into().expect("HASH_LEN bytes");
        r.finish()?;
        if !BLOCK_LOG2_RANGE.contains(&block_log2) || hash_len as usize != HASH_LEN {
            return Err(Error::format(format!(
                "TREE: block size 2^{block_log2} or hash length {hash_len} is not supported"
            )));
        }
        let want = leaf_count(dir, block_log2);
        let sums = dir.get(SectionId::Sums).map_or(0, |e| e.len);
        if leaves != want
            || tops != top_count(leaves, block_log2)
            || Some(sums) != (leaves + tops).checked_mul(HASH_LEN as u64)
        {
            return Err(Error::format(
                "TREE does not match the sections' sizes or SUMS",
            ));
        }
        Ok(Tree {
            block_log2,
            leaves,
            tops,
            root,
        })
    }
}

/// Blocks of `len` bytes.
fn blocks(len: u64, block_log2: u8) -> u64 {
    len.div_ceil(1 << block_log2)
}

/// The number of leaf hashes: every covered section's blocks, in file order.
fn leaf_count(dir: &Directory, block_log2: u8) -> u64 {
    dir.entries()
        .iter()
        .filter(|e| covered(e.id))
        .map(|e| blocks(e.len, block_log2))
        .sum()
}

fn top_count(leaves: u64, block_log2: u8) -> u64 {
    blocks(leaves * HASH_LEN as u64, block_log2)
}

/// Hashes `bytes` block by block with `tag`, in parallel.
fn hash_blocks(tag: u32, bytes: &[u8], block_log2: u8) -> Vec<[u8; HASH_LEN]> {
    bytes
        .par_chunks(1 << block_log2)
        .enumerate()
        .map(|(i, b)| block_hash(tag, i as u64, b))
        .collect()
}

/// The contents of sections TREE and SUMS for these sections (in file order; TREE and SUMS
/// themselves not among them).
pub fn build(sections: &[(SectionId, &[u8])]) -> (Vec<u8>, Vec<u8>) {
    build_with(sections, BLOCK_LOG2)
}

/// [`build`] with blocks of `2^log2` bytes.
fn build_with(sections: &[(SectionId, &[u8])], log2: u8) -> (Vec<u8>, Vec<u8>) {
    let mut leaves: Vec<u8> = Vec::new();
    for (id, bytes) in sections.iter().filter(|(id, _)| covered(*id)) {
        leaves.extend(hash_blocks(*id as u32, bytes, log2).concat());
    }
    let top = hash_blocks(TOP_TAG, &leaves, log2).concat();
    let tree = Tree {
        block_log2: log2,
        leaves: (leaves.len() / HASH_LEN) as u64,
        tops: (top.len() / HASH_LEN) as u64,
        root: block_hash(0, 0, &top),
    };
    let mut sums = top;
    sums.extend_from_slice(&leaves);
    (tree.encode(), sums)
}

/// How a reader trusts the large sections: by the tree (version 7 on), or whole against the
/// directory (versions 5 and 6).
enum Scheme {
    Tree {
        tree: Tree,
        /// The first leaf of each section, by `id − 1`.
        first_leaf: [u64; SectionId::ALL.len()],
    },
    Whole,
    /// No checks: only for the benchmark that measures what the checks cost.
    Off,
}

/// What has been checked so far: one bit per leaf block, then one per top block, then one for
/// the root (tree); one bit per section (whole). Bits are only ever set, by a check that passed,
/// so relaxed atomics suffice: the bytes they speak for never change.
pub struct Guard {
    scheme: Scheme,
    ok: Box<[AtomicU64]>,
}

impl Guard {
    /// A guard for a file with this directory and, from version 7 on, this tree.
    pub fn new(dir: &Directory, tree: Option<Tree>) -> Guard {
        let (scheme, bits) = match tree {
            Some(tree) => {
                let mut first_leaf = [0u64; SectionId::ALL.len()];
                let mut at = 0;
                for e in dir.entries().iter().filter(|e| covered(e.id)) {
                    first_leaf[e.id as usize - 1] = at;
                    at += blocks(e.len, tree.block_log2);
                }
                let bits = tree.leaves + tree.tops + 1;
                (Scheme::Tree { tree, first_leaf }, bits)
            }
            None => (Scheme::Whole, SectionId::ALL.len() as u64),
        };
        let ok = (0..bits.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        Guard { scheme, ok }
    }

    /// A guard that checks nothing (`Index::without_block_checks`, for the benchmark).
    pub fn off() -> Guard {
        Guard {
            scheme: Scheme::Off,
            ok: Box::new([]),
        }
    }

    /// The block size of the tree this guard checks by; `None` when sections are checked whole
    /// (versions 5 and 6) or not at all.
    pub fn block_size(&self) -> Option<u64> {
        match &self.scheme {
            Scheme::Tree { tree, .. } => Some(1 << tree.block_log2),
            Scheme::Whole | Scheme::Off => None,
        }
    }

    fn is_ok(&self, bit: u64) -> bool {
        self.ok[(bit / 64) as usize].load(Ordering::Relaxed) & (1 << (bit % 64)) != 0
    }

    fn set_ok(&self, bit: u64) {
        self.ok[(bit / 64) as usize].fetch_or(1 << (bit % 64), Ordering::Relaxed);
    }

    /// Checks the blocks of section `id` that hold its bytes `range` (relative to the
    /// section) unless they were checked before. `file` is the index's bytes (without a
    /// signature). Sections the tree does not cover pass: `open` checked them.
    #[inline]
    pub fn touch(
        &self,
        file: &[u8],
        dir: &Directory,
        id: SectionId,
        range: Range<usize>,
    ) -> Result<()> {
        if range.is_empty() || !covered(id) {
            return Ok(());
        }
        match &self.scheme {
            Scheme::Tree { tree, first_leaf } => {
                // Bytes past the section are not its blocks (the caller's read fails anyway).
                let len = dir.get(id).map_or(0, |e| e.len as usize);
                let range = range.start..range.end.min(len);
                if range.is_empty() {
                    return Ok(());
                }
                let first = first_leaf[id as usize - 1];
                let log2 = tree.block_log2;
                for b in (range.start >> log2) as u64..=((range.end - 1) >> log2) as u64 {
                    if !self.is_ok(first + b) {
                        self.check_leaf(file, dir, tree, id, first, b)?;
                    }
                }
                Ok(())
            }
            Scheme::Whole => {
                let bit = id as u64 - 1;
                if !self.is_ok(bit) {
                    let e = dir.get(id).ok_or_else(|| {
                        Error::format(format!("section {} is missing", id.name()))
                    })?;
                    let got = hash::checksum(&file[e.range()]);
                    if got != e.checksum {
                        return Err(Error::ChecksumMismatch {
                            section: id.name(),
                            expected: e.checksum,
                            got,
                        });
                    }
                    self.set_ok(bit);
                }
                Ok(())
            }
            Scheme::Off => Ok(()),
        }
    }

    /// Checks block `b` of section `id` against its leaf hash, after checking the leaf hash.
    #[cold]
    fn check_leaf(
        &self,
        file: &[u8],
        dir: &Directory,
        tree: &Tree,
        id: SectionId,
        first: u64,
        b: u64,
    ) -> Result<()> {
        let e = dir.get(id).expect("a touched section is in the directory");
        let size = 1usize << tree.block_log2;
        let start = e.offset as usize + b as usize * size;
        let end = (start + size).min((e.offset + e.len) as usize);
        let leaf = first + b;
        let sums = &file[dir.get(SectionId::Sums).expect("TREE checked SUMS").range()];
        let leaves = &sums[tree.tops as usize * HASH_LEN..];
        self.check_top(sums, tree, (leaf * HASH_LEN as u64) >> tree.block_log2)?;
        let at = leaf as usize * HASH_LEN;
        if block_hash(id as u32, b, &file[start..end])[..] != leaves[at..at + HASH_LEN] {
            return Err(Error::BlockMismatch {
                file: None,
                section: id.name(),
                block: b,
                offset: start as u64,
            });
        }
        self.set_ok(leaf);
        Ok(())
    }

    /// Checks top block `t` (leaf hashes) against its top hash, after checking the root.
    fn check_top(&self, sums: &[u8], tree: &Tree, t: u64) -> Result<()> {
        let bit = tree.leaves + t;
        if self.is_ok(bit) {
            return Ok(());
        }
        let (top, leaves) = sums.split_at(tree.tops as usize * HASH_LEN);
        let root_bit = tree.leaves + tree.tops;
        if !self.is_ok(root_bit) {
            if block_hash(0, 0, top) != tree.root {
                return Err(Error::BlockMismatch {
                    file: None,
                    section: "SUMS",
                    block: u64::MAX,
                    offset: 0,
                });
            }
            self.set_ok(root_bit);
        }
        let size = 1usize << tree.block_log2;
        let start = t as usize * size;
        let block = &leaves[start..(start + size).min(leaves.len())];
        let at = t as usize * HASH_LEN;
        if block_hash(TOP_TAG, t, block)[..] != top[at..at + HASH_LEN] {
            return Err(Error::BlockMismatch {
                file: None,
                section: "SUMS",
                block: t,
                offset: start as u64,
            });
        }
        self.set_ok(bit);
        Ok(())
    }

    /// Checks every block of every covered section (`verify`).
    pub fn touch_all(&self, file: &[u8], dir: &Directory) -> Result<()> {
        for e in dir.entries() {
            self.touch(file, dir, e.id, 0..e.len as usize)?;
        }
        Ok(())
    }
}

/// Recomputes TREE and SUMS of a version-7 file in place (for [`crate::format::reseal`]),
/// with the block size its TREE names; nothing when TREE is unreadable or the directory does
/// not lay them out for that size.
pub fn reseal(bytes: &mut [u8], dir: &Directory) {
    let (Some(t), Some(s)) = (dir.get(SectionId::Tree), dir.get(SectionId::Sums)) else {
        return;
    };
    let log2 = bytes[t.range()].first().copied().unwrap_or(BLOCK_LOG2);
    if !BLOCK_LOG2_RANGE.contains(&log2) {
        return;
    }
    let sections: Vec<(SectionId, &[u8])> = dir
        .entries()
        .iter()
        .filter(|e| !matches!(e.id, SectionId::Tree | SectionId::Sums))
        .map(|e| (e.id, &bytes[e.range()]))
        .collect();
    let (tree, sums) = build_with(&sections, log2);
    if t.len as usize == tree.len() && s.len as usize == sums.len() {
        bytes[t.range()].copy_from_slice(&tree);
        bytes[s.range()].copy_from_slice(&sums);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_hash_known_answer() {
        // The published BLAKE3 test vector of the empty input: the crate is the standard hash.
        assert_eq!(
            blake3::hash(b"").to_hex().as_str(),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
        let mut input = 7u32.to_le_bytes().to_vec();
        input.extend(1u64.to_le_bytes());
        input.extend(b"pocketdex");
        let h = block_hash(7, 1, b"pocketdex");
        assert_eq!(h[..], blake3::hash(&input).as_bytes()[..HASH_LEN]);
        // Both ways of hashing (a block of at most 16 KiB in one buffer, a larger one
        // streamed) are BLAKE3 of tag, index and bytes.
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        for len in [
            0, 1, 1012, 1013, 1024, 4084, 4096, 4097, 16_372, 16_384, 16_385, 20_000,
        ] {
            let mut input = 3u32.to_le_bytes().to_vec();
            input.extend(u64::MAX.to_le_bytes());
            input.extend(&bytes[..len]);
            assert_eq!(
                block_hash(3, u64::MAX, &bytes[..len])[..],
                blake3::hash(&input).as_bytes()[..HASH_LEN],
                "{len} bytes"
            );
        }
        assert_eq!(
            h,
            [
                0x44, 0x7e, 0x75, 0x41, 0x11, 0xfc, 0x42, 0xdd, 0xa4, 0x26, 0xe3, 0xfc, 0x91, 0x0a,
                0xcc, 0xa9
            ]
        );
    }

    /// TREE and SUMS of sections of several blocks, at the size written today and at 4 KiB,
    /// against the spec's definition (§7.1) computed here with BLAKE3 directly; and the roots
    /// pinned, so that a change in how sections are cut into blocks fails.
    #[test]
    fn tree_of_several_blocks_follows_the_spec() {
        let postings: Vec<u8> = (0..40_000u32).map(|i| (i * 31 % 253) as u8).collect();
        let names: Vec<u8> = (0..20_000u32).map(|i| (i % 17) as u8).collect();
        let meta = vec![3u8; 40];
        let sections = [
            (SectionId::Meta, meta.as_slice()),
            (SectionId::Postings, postings.as_slice()),
            (SectionId::Names, names.as_slice()),
        ];
        let spec_hash = |tag: u32, index: u64, bytes: &[u8]| {
            let mut input = tag.to_le_bytes().to_vec();
            input.extend(index.to_le_bytes());
            input.extend(bytes);
            blake3::hash(&input).as_bytes()[..HASH_LEN].to_vec()
        };
        let mut roots = Vec::new();
        for log2 in [BLOCK_LOG2, 12] {
            let b = 1usize << log2;
            let (tree, sums) = build_with(&sections, log2);
            // META is checked at open, so only POSTINGS and NAMES have leaves.
            let mut leaves = Vec::new();
            for (id, bytes) in &sections[1..] {
                for (i, block) in bytes.chunks(b).enumerate() {
                    leaves.extend(spec_hash(*id as u32, i as u64, block));
                }
            }
            let mut tops = Vec::new();
            for (i, block) in leaves.chunks(b).enumerate() {
                tops.extend(spec_hash(SectionId::Sums as u32, i as u64, block));
            }
            assert_eq!(
                sums,
                [tops.clone(), leaves.clone()].concat(),
                "SUMS, 2^{log2}"
            );
            let root = spec_hash(0, 0, &tops);
            assert_eq!(tree[0], log2);
            assert_eq!(tree[24..], root[..], "root, 2^{log2}");
            let want_leaves = (40_000usize.div_ceil(b) + 20_000usize.div_ceil(b)) as u64;
            assert_eq!(
                u64::from_le_bytes(tree[8..16].try_into().unwrap()),
                want_leaves
            );
            roots.push(root[..4].to_vec());
        }
        assert_eq!(roots, [ROOT_16K.to_vec(), ROOT_4K.to_vec()]);
    }

    /// The first bytes of the roots above (16 KiB and 4 KiB blocks).
    const ROOT_16K: [u8; 4] = [62, 167, 109, 132];
    const ROOT_4K: [u8; 4] = [75, 190, 89, 208];

    /// Sections of several blocks: a flip is found exactly when a read touches its block, and
    /// a flip in the tree itself when any block is first checked; with the blocks written
    /// today and the 4 KiB blocks of version 7 files.
    #[test]
    fn a_flip_is_found_when_its_block_is_read() {
        for log2 in [BLOCK_LOG2, 12] {
            flips_are_found_with_blocks_of(log2);
        }
    }

    fn flips_are_found_with_blocks_of(log2: u8) {
        // 5 blocks of postings and 3 of names, as with 20,000 and 9,000 bytes in 4 KiB blocks.
        let b = 1usize << log2;
        let (p_len, n_len) = (20_000 * b / 4096, 9_000 * b / 4096);
        let postings: Vec<u8> = (0..p_len as u32).map(|i| (i * 7 % 251) as u8).collect();
        let names: Vec<u8> = (0..n_len as u32).map(|i| (i % 13) as u8).collect();
        let meta = vec![1u8; 40];
        let mut sections = vec![
            (SectionId::Meta, meta.as_slice()),
            (SectionId::Postings, postings.as_slice()),
            (SectionId::Names, names.as_slice()),
        ];
        let (tree, sums) = build_with(&sections, log2);
        sections.insert(1, (SectionId::Tree, &tree));
        sections.push((SectionId::Sums, &sums));
        let dir = Directory::layout(&sections);
        let mut file = vec![0u8; dir.file_len as usize];
        for (e, (_, b)) in dir.entries().iter().zip(&sections) {
            file[e.range()].copy_from_slice(b);
        }
        let t = Tree::decode(&tree, &dir).unwrap();
        assert_eq!((t.leaves, t.tops, t.block_log2), (5 + 3, 1, log2));
        let guard = || Guard::new(&dir, Some(t));
        let g = guard();
        g.touch_all(&file, &dir).unwrap();
        let p = dir.get(SectionId::Postings).unwrap().offset as usize;
        let mut bad = file.clone();
        bad[p + 3 * b + 17] ^= 1;
        let g = guard();
        g.touch(&bad, &dir, SectionId::Postings, 0..3 * b).unwrap();
        g.touch(&bad, &dir, SectionId::Postings, 4 * b..p_len)
            .unwrap();
        g.touch(&bad, &dir, SectionId::Names, 0..n_len).unwrap();
        let e = g
            .touch(&bad, &dir, SectionId::Postings, 3 * b + 10..3 * b + 20)
            .unwrap_err();
        assert!(matches!(
            e,
            Error::BlockMismatch {
                section: "POSTINGS",
                block: 3,
                ..
            }
        ));
        // Checked blocks are remembered (the damage is behind them, so no error now)...
        g.touch(&bad, &dir, SectionId::Postings, 0..10).unwrap();
        // ... and a damaged leaf or top fails the first block read.
        let s = dir.get(SectionId::Sums).unwrap().offset as usize;
        for at in [s + 3, s + HASH_LEN + 5 * HASH_LEN + 1] {
            let mut bad = file.clone();
            bad[at] ^= 0x20;
            let r = guard().touch(&bad, &dir, SectionId::Names, 0..1);
            assert!(matches!(r, Err(Error::BlockMismatch { .. })), "{at}");
        }
    }
}
