//! The FILTER section: a split block Bloom filter over a file's distinct codes, so that a query
//! tells most codes a file does not hold from the ones it does with one 32-byte read instead of
//! an MPHF lookup (`index-format.md` §6.10).
//!
//! The layout and the bits a key sets are Apache Parquet's split block Bloom filter (SBBF,
//! `parquet-format/BloomFilter.md`): 256-bit blocks of eight 32-bit words, one bit set in each
//! word, chosen by eight odd salts. Only the key's hash and the number of blocks are pocketdex's.
//! A file of a collection's own size has no FILTER: most of a query's codes are in it. A shard or
//! a segment whose codes were made for a larger collection (§8.6) finds few of them, and
//! without a filter each absent code costs an MPHF lookup of two to three levels (~45–80 ns);
//! with 16 such files a query's absent codes were half its time (`scripts/set-bench.sh`).

use crate::fingerprint::{Resolution, LADDER};
use crate::hash::fmix64;

/// Bytes per block: eight little-endian u32 words.
pub const BLOCK_BYTES: usize = 32;

/// Bits of filter per distinct code: about 1 absent code in 80 gets through (SBBF's rate at 10
/// bits per key), and then costs the MPHF lookup it would have cost anyway.
pub const BITS_PER_CODE: u64 = 10;

/// Seed of the key's hash ("pktdx1fl").
pub const FILTER_SEED: u64 = 0x706b_7464_7831_666c;

/// Parquet's SBBF salts: word `i` of a block gets bit `(h32 · SALT[i]) >> 27`.
const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// True when a file of `docs` documents whose codes are at `resolution` gets a FILTER: when the
/// resolution is a later step of [`LADDER`] than [`Resolution::for_docs`]`(docs)`, the codes were
/// made for a larger collection (a shard or a segment of one), and most codes a query looks up
/// are not in the file. A file of its collection's own size finds enough of them that the filter
/// would cost its bytes (10 bits per code, 9 bytes per document at 2 million) for little; so does
/// one whose resolution is an earlier step (a build of over 20 million documents without
/// `--expected-docs`, whose caps stop at the 20-million step) or off the ladder (`--resolution`).
pub fn wanted(resolution: Resolution, docs: u64) -> bool {
    let step = |r: Resolution| LADDER.iter().position(|e| e.1 == r);
    match (step(resolution), step(Resolution::for_docs(docs))) {
        (Some(made_for), Some(own)) => made_for > own,
        _ => false,
    }
}

/// The number of blocks of a filter over `codes` distinct codes (at least one).
pub fn blocks_for(codes: u64) -> u64 {
    (codes * BITS_PER_CODE)
        .div_ceil(8 * BLOCK_BYTES as u64)
        .max(1)
}

/// The key's hash: which block (its high 32 bits) and which bits (its low 32). Keys are
/// already xxh3 hashes (§8); the seed and MurmurHash3's finalizer (a few cycles, paid once per
/// code per query: the files of a set share it, `index::Keys`) make the filter's bits
/// independent of those the MPHF and the checks use.
#[inline(always)]
pub(crate) fn hash(key: u64) -> u64 {
    fmix64(key ^ FILTER_SEED)
}

/// The byte offset of the block of hash `h` in a filter of `blocks` blocks.
#[inline(always)]
fn block_at(h: u64, blocks: u64) -> usize {
    (((h >> 32) * blocks) >> 32) as usize * BLOCK_BYTES
}

/// The bit each of a block's eight words must have for hash `h`.
#[inline(always)]
fn masks(h: u64) -> [u32; 8] {
    let h32 = h as u32;
    SALT.map(|s| 1u32 << (h32.wrapping_mul(s) >> 27))
}

/// The FILTER section over `keys` (distinct or not): `blocks_for(keys.len())` blocks.
pub fn build(keys: &[u64]) -> Vec<u8> {
    let blocks = blocks_for(keys.len() as u64);
    let mut words = vec![0u32; blocks as usize * 8];
    for &k in keys {
        let h = hash(k);
        let at = block_at(h, blocks) / 4;
        for (w, m) in words[at..at + 8].iter_mut().zip(masks(h)) {
            *w |= m;
        }
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A FILTER section read in place (its length checked: a whole number of blocks, at least one).
#[derive(Clone, Copy, Debug)]
pub struct Filter<'a> {
    bytes: &'a [u8],
    blocks: u64,
}

impl<'a> Filter<'a> {
    /// The filter in `bytes`, or `None` when they are not a whole number of blocks (at least one).
    pub fn new(bytes: &'a [u8]) -> Option<Filter<'a>> {
        (!bytes.is_empty() && bytes.len().is_multiple_of(BLOCK_BYTES)).then_some(Filter {
            bytes,
            blocks: (bytes.len() / BLOCK_BYTES) as u64,
        })
    }

    /// Where `key`'s block starts in the section, and its hash: read those 32 bytes, then ask
    /// [`Filter::passes`].
    #[inline(always)]
    pub fn probe(&self, key: u64) -> Probe {
        self.probe_hashed(hash(key))
    }

    /// [`Filter::probe`] of a key whose hash ([`hash`]) is `h`: the hash does not depend on the
    /// filter, so a set's files share one per key.
    #[inline(always)]
    pub fn probe_hashed(&self, h: u64) -> Probe {
        Probe {
            at: block_at(h, self.blocks),
            h,
        }
    }

    /// False when the probed key was certainly not among the keys the filter was built from.
    /// All eight words are tested without a branch between them: most keys a shard is asked
    /// for fail, at a word that no branch predictor can guess.
    #[inline(always)]
    pub fn passes(&self, p: &Probe) -> bool {
        let block: &[u8; BLOCK_BYTES] = self.bytes[p.at..p.at + BLOCK_BYTES]
            .try_into()
            .expect("a whole block");
        let m = masks(p.h);
        let mut all = true;
        for i in 0..8 {
            let w = u32::from_le_bytes(block[4 * i..4 * i + 4].try_into().expect("4 bytes"));
            all &= w & m[i] != 0;
        }
        all
    }

    /// [`Filter::passes`] of `key`.
    #[inline(always)]
    pub fn may_contain(&self, key: u64) -> bool {
        self.passes(&self.probe(key))
    }

    /// Appends to `out` the numbers of the `probes` that pass ([`Filter::passes`]), in order.
    /// With AVX2, a block's eight words are tested at once (one multiply, shift and test of
    /// the eight salts, as Parquet's and Impala's SBBF readers do): the scalar test of the eight
    /// words, with a variable shift each, was a sixth of a 16-shard query's CPU.
    pub fn passing(&self, probes: &[Probe], out: &mut Vec<usize>) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { self.passing_avx2(probes, out) };
            return;
        }
        self.passing_scalar(probes, out);
    }

    /// [`Filter::passing`], one word at a time.
    fn passing_scalar(&self, probes: &[Probe], out: &mut Vec<usize>) {
        out.extend((0..probes.len()).filter(|&i| self.passes(&probes[i])));
    }

    /// [`Filter::passing`] with AVX2: the same bits as [`masks`], eight lanes at once.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn passing_avx2(&self, probes: &[Probe], out: &mut Vec<usize>) {
        use std::arch::x86_64::*;
        let salt = _mm256_setr_epi32(
            SALT[0] as i32,
            SALT[1] as i32,
            SALT[2] as i32,
            SALT[3] as i32,
            SALT[4] as i32,
            SALT[5] as i32,
            SALT[6] as i32,
            SALT[7] as i32,
        );
        let one = _mm256_set1_epi32(1);
        for (i, p) in probes.iter().enumerate() {
            // A whole block, or a panic: `at` is a block of this filter for probes it made.
            let block = &self.bytes[p.at..p.at + BLOCK_BYTES];
            let bits = _mm256_srli_epi32::<27>(_mm256_mullo_epi32(
                _mm256_set1_epi32(p.h as u32 as i32),
                salt,
            ));
            let mask = _mm256_sllv_epi32(one, bits);
            // SAFETY: `block` is 32 bytes (an unaligned load); its words are little-endian, as
            // x86's lanes are.
            let words = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
            // Every bit of `mask` is set in `words`: (!words & mask) == 0.
            if _mm256_testc_si256(words, mask) == 1 {
                out.push(i);
            }
        }
    }
}

/// A key's block in a [`Filter`] (`at`: its first byte in the section) and its hash.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    pub at: usize,
    h: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hash::h64;

    fn keys(n: u64, seed: u64) -> Vec<u64> {
        (0..n).map(|i| h64(&i.to_le_bytes(), seed)).collect()
    }

    #[test]
    fn every_key_it_was_built_from_gets_through() {
        for n in [0, 1, 7, 1000, 100_000] {
            let ks = keys(n, 1);
            let bytes = build(&ks);
            assert_eq!(bytes.len() as u64, blocks_for(n) * BLOCK_BYTES as u64);
            let f = Filter::new(&bytes).expect("whole blocks");
            assert!(ks.iter().all(|&k| f.may_contain(k)), "{n} keys");
        }
    }

    #[test]
    fn few_absent_keys_get_through() {
        // SBBF at 10 bits per key lets about 1.2% through; a broken hash or salt lets far more.
        let f_bytes = build(&keys(200_000, 1));
        let f = Filter::new(&f_bytes).unwrap();
        let absent = keys(200_000, 2);
        let through = absent.iter().filter(|&&k| f.may_contain(k)).count();
        let rate = through as f64 / absent.len() as f64;
        assert!((0.004..0.025).contains(&rate), "false positive rate {rate}");
    }

    #[test]
    fn bits_follow_the_spec_and_are_pinned() {
        // index-format.md §6.10 computed here on its own, for 100 keys in 4 blocks.
        let ks = keys(100, 7);
        let blocks = 4u64;
        assert_eq!(blocks_for(100), blocks);
        let mut words = [0u32; 32];
        for &k in &ks {
            let h = fmix64(k ^ 0x706b_7464_7831_666c);
            let b = (((h >> 32) * blocks) >> 32) as usize;
            for (i, salt) in SALT.iter().enumerate() {
                words[8 * b + i] |= 1 << ((h as u32).wrapping_mul(*salt) >> 27);
            }
        }
        let spec: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let built = build(&ks);
        assert_eq!(built, spec);
        // Known answer: these bytes must not change without a new format version.
        assert_eq!(
            blake3::hash(&built).to_hex().as_str(),
            "4a963d6f4b239d72c1eb6d3eaadd9417497875ce64399f4826b411c26ac8eea2"
        );
    }

    #[test]
    fn only_codes_made_for_a_larger_collection_get_a_filter() {
        let million = Resolution::for_docs(1_000_000);
        assert!(
            wanted(million, 100),
            "a shard of a million-document collection"
        );
        assert!(wanted(million, 0), "a set's empty schema");
        assert!(!wanted(million, 1_000_000), "the collection itself");
        assert!(
            !wanted(million, 400_000),
            "a fifth of it: the same step of the ladder"
        );
        // Over 20 million documents without --expected-docs: codes at the caps' last step.
        let capped = Resolution::for_docs_within(25_000_000, crate::fingerprint::AUTO_CAPS);
        assert!(!wanted(capped, 25_000_000));
        assert!(!wanted(Resolution::new(2, 1, 1, 1), 10), "off the ladder");
    }

    #[test]
    fn every_way_of_testing_a_block_agrees() {
        // Members and absent keys of a small, nearly full filter (about half of the absent keys
        // pass) and of a sparse one (few do): each path passes the same keys.
        for (members, seed) in [(1000u64, 3u64), (20, 4)] {
            let bytes = build(&keys(members, seed));
            let f = Filter::new(&bytes).unwrap();
            let bytes_small = build(&keys(members, seed)[..members as usize / 10]);
            let small = Filter::new(&bytes_small).unwrap();
            let asked: Vec<u64> = keys(members, seed)
                .into_iter()
                .chain(keys(5000, 9))
                .collect();
            for f in [f, small] {
                let probes: Vec<Probe> = asked.iter().map(|&k| f.probe(k)).collect();
                let one_by_one: Vec<usize> = (0..asked.len())
                    .filter(|&i| f.may_contain(asked[i]))
                    .collect();
                let (mut passing, mut scalar) = (Vec::new(), Vec::new());
                f.passing(&probes, &mut passing);
                f.passing_scalar(&probes, &mut scalar);
                assert_eq!(passing, one_by_one);
                assert_eq!(scalar, one_by_one);
                assert!(one_by_one.len() < asked.len(), "some keys are kept out");
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx2") {
                    let mut avx2 = Vec::new();
                    // SAFETY: the CPU has AVX2.
                    unsafe { f.passing_avx2(&probes, &mut avx2) };
                    assert_eq!(avx2, one_by_one);
                }
            }
        }
    }

    #[test]
    fn damaged_lengths_are_refused() {
        assert!(Filter::new(&[]).is_none());
        assert!(Filter::new(&[0; 33]).is_none());
        assert!(Filter::new(&[0; 64]).is_some());
    }
}
