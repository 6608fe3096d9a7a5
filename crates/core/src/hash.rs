//! Every hash function the index bytes depend on, pinned: xxh3 with fixed seeds and a fixed mixer.
//!
//! The index stores codes, checks and sketches computed with these functions; changing any of them
//! changes the format. Each one has a known-answer test below. Never use `std`'s `DefaultHasher`.

use xxhash_rust::xxh3::{xxh3_128_with_seed, xxh3_64_with_seed};

/// Seed of the codes (the MPHF keys) of every path: `xxh3_64_with_seed(code bytes, CODE_SEED)`.
pub const CODE_SEED: u64 = 0x706b_7464_7831_636f; // "pktdx1co"
/// Seed of the 128-bit term hash: the term's identity in the sketch, the idf table and (folded
/// to 64 bits) the MinHash permutations of the short-document path.
pub const TERM_SEED: u64 = 0x706b_7464_7831_7465; // "pktdx1te"
/// Seed of the hash that places a prefix unknown to the reference table into a class.
pub const PREFIX_SEED: u64 = 0x706b_7464_7831_7066; // "pktdx1pf"
/// Seed of the whole-file and per-section checksums.
pub const CHECKSUM_SEED: u64 = 0;
/// Seed of document names' hashes in section IDS (format v6).
pub const NAME_SEED: u64 = 0x706b_7464_7836_6e6d; // "pktdx6nm"
/// Added to the MPHF's level number to seed its key hash (see [`MphfHasher`]).
pub const MPHF_SEED: u64 = 0x706b_7464_7831_6d70; // "pktdx1mp"

/// A pinned 64-bit hash of bytes: xxh3-64 with `seed`.
#[inline]
pub fn h64(bytes: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// A pinned 128-bit hash of bytes: xxh3-128 with `seed`.
#[inline]
pub fn h128(bytes: &[u8], seed: u64) -> u128 {
    xxh3_128_with_seed(bytes, seed)
}

/// The checksum of a region of the file: xxh3-64 with seed 0.
#[inline]
pub fn checksum(bytes: &[u8]) -> u64 {
    xxh3_64_with_seed(bytes, CHECKSUM_SEED)
}

/// MurmurHash3's 64-bit finalizer: a fixed bijective mixer, used to derive many hash functions
/// (MinHash permutations) from one term hash.
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// MurmurHash3's 32-bit finalizer: the mixer of the sketch's coordinates (8 of them at once in
/// an AVX2 register, where 64-bit multiplies do not exist).
#[inline]
pub fn fmix32(mut k: u32) -> u32 {
    k ^= k >> 16;
    k = k.wrapping_mul(FMIX32_MUL.0);
    k ^= k >> 13;
    k = k.wrapping_mul(FMIX32_MUL.1);
    k ^= k >> 16;
    k
}

/// The two multipliers of [`fmix32`] (the sketch's vector path repeats its steps).
pub const FMIX32_MUL: (u32, u32) = (0x85eb_ca6b, 0xc2b2_ae35);

/// The `j`-th derived hash of a 64-bit term hash: `fmix64(h + (j + 1) · φ)` with φ = 0x9e3779b97f4a7c15.
#[inline]
pub fn derived(h: u64, j: u32) -> u64 {
    fmix64(h.wrapping_add((j as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

/// The seeded hasher handed to the MPHF (`ph` crate). Its keys are `u64` codes; a key hashes to
/// `xxh3_64_with_seed(key.to_le_bytes(), MPHF_SEED + level)`, independent of platform and of `std`.
#[derive(Clone, Copy, Debug, Default)]
pub struct MphfHasher;

/// The state of [`MphfHasher`] for one key.
#[derive(Clone, Copy, Debug)]
pub struct MphfKeyHasher {
    seed: u64,
    value: u64,
}

impl std::hash::Hasher for MphfKeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.value
    }
    #[inline]
    fn write_u64(&mut self, key: u64) {
        self.value = xxh3_64_with_seed(&key.to_le_bytes(), self.seed);
    }
    // Only `u64` keys are hashed; any other input is hashed as bytes, chained through the seed.
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.value = xxh3_64_with_seed(bytes, self.seed ^ self.value);
    }
}

impl ph::BuildSeededHasher for MphfHasher {
    type Hasher = MphfKeyHasher;
    #[inline]
    fn build_hasher(&self, seed: u64) -> MphfKeyHasher {
        MphfKeyHasher {
            seed: MPHF_SEED.wrapping_add(seed),
            value: 0,
        }
    }
}

/// The hasher of in-memory maps keyed by words (stopwords, prefixes) or by term hashes: one-shot
/// xxh3 of a word's bytes, much cheaper than std's SipHash on short keys; a `u128` key is a term
/// hash, uniform already, so its high half is the hash; a `u32` key (an idf key, hash bits too)
/// is spread over all 64 bits by one `fmix64`. Nothing stored depends on it; it exists for
/// speed only (lookups run once per distinct word of every document).
#[derive(Clone, Copy, Debug, Default)]
pub struct FastState;

/// The state of [`FastState`] for one key.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxh3_64_with_seed(bytes, self.0);
    }
    #[inline]
    fn write_u8(&mut self, b: u8) {
        self.0 = fmix64(self.0 ^ b as u64);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        // Mixed so that the map's bucket bits (low) and tag bits (high) both see all 32.
        self.0 = fmix64(self.0 ^ u64::from(v));
    }
    #[inline]
    fn write_u128(&mut self, h: u128) {
        self.0 ^= (h >> 64) as u64;
    }
}

impl std::hash::BuildHasher for FastState {
    type Hasher = FastHasher;
    #[inline]
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ph::BuildSeededHasher;

    // Known answers of the xxh3 reference implementation (empty input, seed 0) pin the algorithm;
    // the values with our seeds pin the seeds.
    #[test]
    fn xxh3_known_answers() {
        assert_eq!(h64(b"", 0), 0x2d06_8005_38d3_94c2);
        assert_eq!(h128(b"", 0), 0x99aa_06d3_0147_98d8_6001_c324_468d_497f);
        assert_eq!(checksum(b""), 0x2d06_8005_38d3_94c2);
        assert_eq!(h64(b"pocketdex", CODE_SEED), KAT_CODE);
        assert_eq!(h128(b"pocketdex", TERM_SEED), KAT_TERM);
        assert_eq!(h64(b"pocketdex", PREFIX_SEED), KAT_PREFIX);
    }

    const KAT_CODE: u64 = 0x182b_28c2_aeb8_9613;
    const KAT_TERM: u128 = 0x5816_330b_0758_d410_f8b0_8b26_9aaf_d959;
    const KAT_PREFIX: u64 = 0x579a_9f44_4d34_f8a0;

    #[test]
    fn mixer_known_answers() {
        assert_eq!(fmix64(0), 0);
        assert_eq!(fmix64(1), KAT_FMIX1);
        assert_eq!(derived(42, 0), KAT_DERIVED);
        assert_eq!(fmix32(0), 0);
        assert_eq!(fmix32(1), KAT_FMIX32_1);
        assert_eq!(fmix32(0x1234_5678), 0xe37c_d1bc);
    }
    // MurmurHash3's fmix32(1).
    const KAT_FMIX32_1: u32 = 0x514e_28b7;
    // MurmurHash3's published fmix64(1).
    const KAT_FMIX1: u64 = 0xb456_bcfc_34c2_cb2c;
    const KAT_DERIVED: u64 = 0x2d1c_8760_f804_7fc7;

    #[test]
    fn mphf_hasher_is_pinned() {
        assert_eq!(
            MphfHasher.hash_one(7u64, 0),
            h64(&7u64.to_le_bytes(), MPHF_SEED)
        );
        assert_eq!(MphfHasher.hash_one(7u64, 3), KAT_MPHF);
    }
    const KAT_MPHF: u64 = 0x8978_9fc0_b3dc_c595;
}
