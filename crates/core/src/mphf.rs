//! The minimal perfect hash function over all distinct codes: `ph`'s FMPHGO with the pinned
//! [`crate::hash::MphfHasher`], built and written by ph, read in place by [`View`] (ph's lookup
//! over the mapped bytes, tested against ph's own).
//!
//! Why FMPHGO and not PHast: PHast's `get` reaches `unreachable!()` for some keys outside its
//! build set, and every query probes codes that were never indexed; FMPHGO's `get` returns
//! `None` or an arbitrary slot for such keys, and the slot's 16-bit check rejects the latter.
//! FMPHGO's bytes do not depend on the thread count, so a build is reproducible anywhere.

use crate::error::{Error, Result};
use crate::hash::MphfHasher;
use crate::index::prefetch;
use ph::fmph::{GOBuildConf, GOConf, GOFunction, TwoToPowerBitsStatic};

/// The concrete MPHF type: 16-bit groups (2^4) and 2-bit group seeds (2^1) (format version 9
/// on; 4-bit seeds, 2^2, before: see [`SEED_BITS`]).
pub type Function = GOFunction<TwoToPowerBitsStatic<4>, TwoToPowerBitsStatic<1>, MphfHasher>;

/// Bits per group seed in version 9 files ([`SEED_BITS_BEFORE_V9`] in earlier ones). The
/// builder tries every seed of each group of each level, one pass over the level's keys
/// per seed. `cargo bench --bench mphf_settings` over 14.4 million codes on two cores: 4-bit
/// seeds and levels of 100% (version 8) build in 2.5 s at 2.16 bits per code; 2-bit seeds and
/// levels of 150% in 0.63 s at 2.48 bits, 0.3 bytes per document more at 2 million; an absent
/// code, what most of a query's probes are, is looked up as fast (43–45 ns), a present one in
/// 37 ns against 43.
pub const SEED_BITS: u8 = 2;
/// [`SEED_BITS`] of files before version 9.
pub const SEED_BITS_BEFORE_V9: u8 = 4;

/// The bits per group seed of a file of format `version`.
pub fn seed_bits(version: u32) -> u8 {
    if version >= 9 {
        SEED_BITS
    } else {
        SEED_BITS_BEFORE_V9
    }
}

/// Each level's bit array, in percent of the keys left for it (format version 9 on; 100 before):
/// fewer keys go on to the next level, so fewer passes over them (see [`SEED_BITS`]).
pub const LEVEL_SIZE: u16 = 150;

/// Builds the MPHF over distinct `keys` (all cores).
pub fn build(keys: &[u64]) -> Function {
    let conf = GOConf::hash_bps_bpg(
        MphfHasher,
        TwoToPowerBitsStatic::<1>,
        TwoToPowerBitsStatic::<4>,
    );
    GOFunction::from_slice_with_conf(keys, GOBuildConf::with_lsize_mt(conf, LEVEL_SIZE, true))
}

/// Serialises the MPHF (ph's own layout; see `index-format.md`, section MPHF).
pub fn to_bytes(f: &Function) -> Vec<u8> {
    let mut out = Vec::with_capacity(f.write_bytes());
    f.write(&mut out).expect("writing to a Vec cannot fail");
    out
}

/// Reads an MPHF whose section checksum has already been checked (the readers use [`View`];
/// this is ph's own reader, its oracle in the tests). `ph`'s reader and lookup trust
/// their input, so the layout is checked first (see [`layout`]); a panic in ph's reader that
/// this check did not foresee still becomes an error here.
#[cfg(test)]
pub fn from_bytes(mut bytes: &[u8]) -> Result<Function> {
    let total = bytes.len();
    check_layout(bytes)?;
    let read = std::panic::catch_unwind(move || {
        let f = Function::read_with_hasher(&mut bytes, MphfHasher);
        (f, bytes.len())
    });
    match read {
        Ok((Ok(f), 0)) => Ok(f),
        Ok((Ok(_), left)) => Err(Error::format(format!(
            "MPHF section has {left} trailing bytes of {total}"
        ))),
        Ok((Err(e), _)) => Err(Error::format(format!("MPHF section unreadable: {e}"))),
        Err(_) => Err(Error::format("MPHF section unreadable")),
    }
}

/// Bits per group of [`Function`], as ph writes them in the section.
const GROUP_BITS: u8 = 16;

/// ph's FMPHGO lookup ([`Function::get`]) over the section's bytes where they lie, in the file's
/// memory map: nothing is copied at `open`, which only counts the ones before each 512-bit block
/// of the group bits (for the rank). ph's own reader copies the section word by word and builds
/// its rank index, a few milliseconds at 2 million documents in every process that opens the
/// index (a `check --add`, a one-document `query`). The lookup is ph's, step for step, tested
/// against it on every key and on keys it was not built on.
#[derive(Clone, Debug)]
pub struct View {
    /// Groups per level.
    levels: Vec<u64>,
    /// Where the group bits start in the section (16 per group, in little-endian 64-bit words);
    /// the seeds follow them (`seed_bits` per group, likewise).
    bits_at: usize,
    seeds_at: usize,
    /// Bits per group seed: [`SEED_BITS`], or [`SEED_BITS_BEFORE_V9`] in older files; a
    /// 64-bit word holds `2^seeds_per_word_log2` of them.
    seed_bits: u8,
    seeds_per_word_log2: u32,
    /// Per block of [`RANK_WORDS`] words of group bits, the ones before it.
    ranks: Vec<u64>,
    /// Bytes of the section.
    len: usize,
}

/// Words of group bits per entry of [`View`]'s rank table (512 bits).
const RANK_WORDS: usize = 8;

impl View {
    /// Reads the layout of an MPHF section whose checksum has already been checked, refusing
    /// what ph's reader refuses, the level sizes it never writes (see [`layout`]), and seeds of
    /// other than `seed_bits` bits (what the file's version says).
    pub fn new(bytes: &[u8], seed_bits: u8) -> Result<View> {
        check_layout(bytes)?;
        if bytes[0] != GROUP_BITS {
            return Err(Error::format(format!(
                "MPHF section unreadable: {} bits per group, not {GROUP_BITS}",
                bytes[0]
            )));
        }
        // `layout` read these sizes already, so they are whole VByte numbers.
        let (mut at, mut levels) = (1, Vec::new());
        let mut vbyte = || {
            let mut v = 0u64;
            for i in 0.. {
                let b = bytes[at];
                at += 1;
                v |= ((b & 0x7f) as u64) << (7 * i);
                if b & 0x80 == 0 {
                    break;
                }
            }
            v
        };
        let count = vbyte();
        for _ in 0..count {
            levels.push(vbyte());
        }
        let groups: u64 = levels.iter().sum();
        let bit_words = (groups * GROUP_BITS as u64).div_ceil(64) as usize;
        let seeds_byte = at + 8 * bit_words;
        if bytes[seeds_byte] != seed_bits {
            return Err(Error::format(format!(
                "MPHF section unreadable: {} bits per group seed, not {seed_bits}",
                bytes[seeds_byte]
            )));
        }
        let mut view = View {
            levels,
            bits_at: at,
            seeds_at: seeds_byte + 1,
            seed_bits,
            seeds_per_word_log2: (64 / seed_bits as u32).trailing_zeros(),
            ranks: Vec::with_capacity(bit_words.div_ceil(RANK_WORDS)),
            len: bytes.len(),
        };
        with_popcnt!(view.count_ranks(bytes, bit_words));
        Ok(view)
    }

    /// Fills the rank table: the ones before each block of [`RANK_WORDS`] words of group bits.
    #[inline(always)]
    fn count_ranks(&mut self, bytes: &[u8], bit_words: usize) {
        let mut ones = 0u64;
        for w in 0..bit_words {
            if w % RANK_WORDS == 0 {
                self.ranks.push(ones);
            }
            ones += self.bit_word(bytes, w).count_ones() as u64;
        }
    }

    #[inline]
    fn word(bytes: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
    }

    #[inline]
    fn bit_word(&self, bytes: &[u8], w: usize) -> u64 {
        Self::word(bytes, self.bits_at + 8 * w)
    }

    /// The slot of `key` in `bytes`, the section this view was made from (`None` for some keys
    /// it was not built on): [`Function::get`]. Every group and bit it computes lies inside
    /// the section (each level has groups, and the lengths were checked), whatever its
    /// contents.
    ///
    /// # Panics
    /// When `bytes` is not as long as the section the view was made from.
    #[inline]
    pub fn get(&self, bytes: &[u8], key: u64) -> Option<u64> {
        with_popcnt!(self.get_in(bytes, key))
    }

    /// [`View::get`], for whichever instructions it is compiled with.
    #[inline(always)]
    fn get_in(&self, bytes: &[u8], key: u64) -> Option<u64> {
        assert_eq!(bytes.len(), self.len, "an MPHF view reads its own section");
        let mut before = 0u64;
        for (level, &size) in self.levels.iter().enumerate() {
            let (hash, group) = group_of(key, level, size, before);
            let rank = self.rank_of(bytes, self.bit_of(bytes, hash, group));
            if rank.is_some() {
                return rank;
            }
            before += size;
        }
        None
    }

    /// [`View::get`] of every key of `keys`, handed in order to `slot(i, answer)`: the reads of
    /// [`BATCH`] keys are asked for together, level by level, where one key at a time waits for
    /// each of its dependent reads (the group's seed, then its bit and rank) in turn.
    ///
    /// # Panics
    /// When `bytes` is not the view's section.
    pub fn get_many(&self, bytes: &[u8], keys: &[u64], slot: impl FnMut(usize, Option<u64>)) {
        with_popcnt!(self.get_many_in(bytes, keys, slot))
    }

    /// [`View::get_many`], for whichever instructions it is compiled with.
    #[inline(always)]
    fn get_many_in(&self, bytes: &[u8], keys: &[u64], mut slot: impl FnMut(usize, Option<u64>)) {
        assert_eq!(bytes.len(), self.len, "an MPHF view reads its own section");
        for (b, keys) in keys.chunks(BATCH).enumerate() {
            let mut answers = [None; BATCH];
            // The keys not placed yet: (number in the batch, level hash, group, then bit).
            let mut left = [(0usize, 0u64, 0u64); BATCH];
            let mut n = keys.len();
            for (i, l) in left.iter_mut().enumerate().take(n) {
                l.0 = i;
            }
            let mut before = 0u64;
            for (level, &size) in self.levels.iter().enumerate() {
                if n == 0 {
                    break;
                }
                for l in &mut left[..n] {
                    let (hash, group) = group_of(keys[l.0], level, size, before);
                    prefetch(bytes, self.seed_word_at(group));
                    (l.1, l.2) = (hash, group);
                }
                for l in &mut left[..n] {
                    let bit = self.bit_of(bytes, l.1, l.2);
                    let block = bit / (64 * RANK_WORDS);
                    prefetch(bytes, self.bits_at + 8 * (bit / 64));
                    prefetch(bytes, self.bits_at + 8 * block * RANK_WORDS);
                    prefetch(&self.ranks, block);
                    l.2 = bit as u64;
                }
                // The keys this level places are answered; the others move up, in order.
                let mut kept = 0;
                for i in 0..n {
                    let l = left[i];
                    match self.rank_of(bytes, l.2 as usize) {
                        Some(r) => answers[l.0] = Some(r),
                        None => {
                            left[kept] = l;
                            kept += 1;
                        }
                    }
                }
                n = kept;
                before += size;
            }
            for (i, &a) in answers.iter().enumerate().take(keys.len()) {
                slot(b * BATCH + i, a);
            }
        }
    }

    /// Where the 64-bit word holding `group`'s seed starts in the section. (Seeds per word are
    /// a power of two: shifts, not divisions, on this hot path.)
    #[inline(always)]
    fn seed_word_at(&self, group: u64) -> usize {
        self.seeds_at + 8 * (group >> self.seeds_per_word_log2) as usize
    }

    /// The bit of a key of level hash `hash` in `group`: ph's `in_group_index` under the
    /// group's seed.
    #[inline(always)]
    fn bit_of(&self, bytes: &[u8], hash: u64, group: u64) -> usize {
        const IN_GROUP_MASK: u32 = GROUP_BITS as u32 - 1;
        let seed_bits = self.seed_bits as u64;
        let in_word = group & ((1 << self.seeds_per_word_log2) - 1);
        let seed = (Self::word(bytes, self.seed_word_at(group)) >> (in_word * seed_bits))
            & ((1u64 << seed_bits) - 1);
        (group * GROUP_BITS as u64 + (mix32(hash as u32 ^ seed as u32) & IN_GROUP_MASK) as u64)
            as usize
    }

    /// ph's rank of `bit` (the ones before it) when it is set: the key's slot.
    #[inline(always)]
    fn rank_of(&self, bytes: &[u8], bit: usize) -> Option<u64> {
        let word = self.bit_word(bytes, bit / 64);
        if word >> (bit % 64) & 1 == 0 {
            return None;
        }
        let block = bit / (64 * RANK_WORDS);
        let mut rank = self.ranks[block];
        for w in block * RANK_WORDS..bit / 64 {
            rank += self.bit_word(bytes, w).count_ones() as u64;
        }
        Some(rank + (word & ((1u64 << (bit % 64)) - 1)).count_ones() as u64)
    }
}

/// Keys whose first-level reads [`View::get_many`] asks for together: enough to cover a
/// memory access's latency, few enough that their lines stay in the first-level cache.
const BATCH: usize = 32;

/// A key's hash at `level` and its group: ph's `group_nr` (map64_to_64) among the level's
/// `size` groups, after the `before` groups of the levels below it.
#[inline(always)]
fn group_of(key: u64, level: usize, size: u64, before: u64) -> (u64, u64) {
    let hash = ph::BuildSeededHasher::hash_one(&MphfHasher, key, level as u64);
    (hash, before + ((hash as u128 * size as u128) >> 64) as u64)
}

/// ph's 32-bit mixer of a group's hash and seed (`goindexing::mix32`).
#[inline(always)]
fn mix32(mut x: u32) -> u32 {
    x = (x ^ (x >> 16)).wrapping_mul(0x21f0aaad);
    x = (x ^ (x >> 15)).wrapping_mul(0xd35a2d97);
    x ^ (x >> 15)
}

/// The section's length is the one its level sizes ask for, and every level is one ph writes.
fn check_layout(bytes: &[u8]) -> Result<()> {
    match layout(bytes) {
        Layout::Length(len) if len == bytes.len() => Ok(()),
        Layout::Length(_) | Layout::Unreadable => Err(Error::format(
            "MPHF section: level sizes do not match its length",
        )),
        Layout::BadLevel(l) => Err(Error::format(format!(
            "MPHF section: level {l} is not a positive whole number of 64-bit words"
        ))),
        Layout::BadSeedBits(b) => Err(Error::format(format!(
            "MPHF section unreadable: {b} bits per group seed, not {SEED_BITS} (or {SEED_BITS_BEFORE_V9} before version 9)"
        ))),
    }
}

/// What the level sizes of an MPHF section say.
#[derive(Debug, PartialEq)]
enum Layout {
    /// The length the section must have.
    Length(usize),
    /// A level size that ph's builder never writes: 0 groups (ph's lookup would then read the
    /// seed and bit of a group beyond the arrays, the seed without a bounds check) or not a
    /// multiple of 4 groups (ph makes every level whole 64-bit words).
    BadLevel(u64),
    /// Seeds of a size pocketdex never writes.
    BadSeedBits(u8),
    /// The sizes cannot be read, or ask for more than any index holds.
    Unreadable,
}

/// The section's layout from its level sizes (`index-format.md`, section MPHF): group bits byte,
/// VByte level count and sizes, 16 bits per group, seed bits byte, that many bits per group
/// (2 or 4; [`View::new`] checks which one the file's version has). ph
/// allocates what the sizes ask for before reading, and an allocation failure aborts the
/// process, so the sizes are checked before ph sees them.
fn layout(bytes: &[u8]) -> Layout {
    let mut at = 1; // group bits
    let mut vbyte = || -> Option<u64> {
        let mut v = 0u64;
        for i in 0..8 {
            let b = *bytes.get(at)?;
            at += 1;
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None // a size needing a 9th byte is far beyond any real index
    };
    let Some(levels) = vbyte().filter(|&l| l <= 64) else {
        return Layout::Unreadable;
    };
    let mut groups = 0u64;
    for l in 0..levels {
        let Some(size) = vbyte() else {
            return Layout::Unreadable;
        };
        if size == 0 || size % 4 != 0 {
            return Layout::BadLevel(l);
        }
        groups = match groups.checked_add(size) {
            Some(g) if g <= 1 << 40 => g,
            _ => return Layout::Unreadable,
        };
    }
    let words = |bits: u64| bits.div_ceil(64) * 8;
    let Some(seeds_byte) = usize::try_from(at as u64 + words(16 * groups))
        .ok()
        .filter(|&s| s < bytes.len())
    else {
        return Layout::Unreadable;
    };
    let seed_bits = match bytes[seeds_byte] {
        b @ (SEED_BITS | SEED_BITS_BEFORE_V9) => b as u64,
        b => return Layout::BadSeedBits(b),
    };
    match usize::try_from(seeds_byte as u64 + 1 + words(seed_bits * groups)) {
        Ok(len) => Layout::Length(len),
        Err(_) => Layout::Unreadable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::h64;

    #[test]
    fn is_a_bijection_and_round_trips() {
        let keys: Vec<u64> = (0..20_000u64).map(|i| h64(&i.to_le_bytes(), 1)).collect();
        let f = build(&keys);
        let mut seen = vec![false; keys.len()];
        for k in &keys {
            let slot = f.get(k).expect("member key has a slot") as usize;
            assert!(!seen[slot], "two keys share slot {slot}");
            seen[slot] = true;
        }
        let bytes = to_bytes(&f);
        let g = from_bytes(&bytes).unwrap();
        assert!(keys.iter().all(|k| f.get(k) == g.get(k)));
        // The same keys give the same bytes: builds are reproducible.
        assert_eq!(to_bytes(&build(&keys)), bytes);
        assert!(from_bytes(&bytes[..bytes.len() - 3]).is_err());
        // A level size of 2^40 groups is refused before ph would try to allocate it.
        let mut huge = vec![bytes[0], 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
        huge.extend_from_slice(&[0; 16]);
        assert!(from_bytes(&huge).is_err());
    }

    /// The MPHF of format versions 5 to 8: 4-bit group seeds, levels of 100%.
    type FunctionBeforeV9 =
        GOFunction<TwoToPowerBitsStatic<4>, TwoToPowerBitsStatic<2>, MphfHasher>;

    fn build_before_v9(keys: &[u64]) -> FunctionBeforeV9 {
        let conf = GOConf::hash_bps_bpg(
            MphfHasher,
            TwoToPowerBitsStatic::<2>,
            TwoToPowerBitsStatic::<4>,
        );
        GOFunction::from_slice_with_conf(keys, GOBuildConf::with_mt(conf, true))
    }

    fn bytes_before_v9(f: &FunctionBeforeV9) -> Vec<u8> {
        let mut out = Vec::with_capacity(f.write_bytes());
        f.write(&mut out).unwrap();
        out
    }

    /// The zero-copy view gives every key ph's slot, and every key ph was not built on ph's
    /// answer too (`None` or the same arbitrary slot), at sizes of one to several levels, for
    /// today's MPHF and for that of files before version 9.
    #[test]
    fn the_view_answers_as_ph_does() {
        for (n, seed) in [(1u64, 3u64), (7, 4), (100, 5), (5_000, 6), (120_000, 7)] {
            let keys: Vec<u64> = (0..n).map(|i| h64(&i.to_le_bytes(), seed)).collect();
            let (f, old) = (build(&keys), build_before_v9(&keys));
            let (bytes, old_bytes) = (to_bytes(&f), bytes_before_v9(&old));
            let view = View::new(&bytes, SEED_BITS).unwrap();
            let old_view = View::new(&old_bytes, SEED_BITS_BEFORE_V9).unwrap();
            assert_eq!(view.levels.len(), f.level_sizes().len());
            assert_eq!(old_view.levels.len(), old.level_sizes().len());
            let others = (0..20_000u64).map(|i| h64(&i.to_le_bytes(), seed + 100));
            let mut found = 0;
            for k in keys.iter().copied().chain(others) {
                let want = f.get(&k);
                assert_eq!(view.get(&bytes, k), want, "key {k:#x} of {n}");
                // The copy compiled for the baseline, without POPCNT, answers alike.
                assert_eq!(view.get_in(&bytes, k), want, "key {k:#x} of {n}");
                assert_eq!(
                    old_view.get(&old_bytes, k),
                    old.get(&k),
                    "key {k:#x} of {n}"
                );
                found += want.is_some() as usize;
            }
            assert!(found >= keys.len());
            // Many keys at once answer as one at a time, in order, over batches and levels.
            for (view, bytes) in [(&view, &bytes), (&old_view, &old_bytes)] {
                let all: Vec<u64> = keys
                    .iter()
                    .copied()
                    .chain((0..20_000u64).map(|i| h64(&i.to_le_bytes(), seed + 100)))
                    .collect();
                let mut got = Vec::with_capacity(all.len());
                view.get_many(bytes, &all, |i, slot| got.push((i, slot)));
                let mut baseline = Vec::with_capacity(all.len());
                view.get_many_in(bytes, &all, |i, slot| baseline.push((i, slot)));
                assert_eq!(got, baseline, "{n} keys, with and without POPCNT");
                let want: Vec<_> = all
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| (i, view.get(bytes, k)))
                    .collect();
                assert_eq!(got, want, "{n} keys");
            }
            assert_eq!(
                from_bytes(&bytes).unwrap().get(&keys[0]),
                view.get(&bytes, keys[0])
            );
        }
        // What ph's reader refuses, the view refuses.
        let bytes = to_bytes(&build(&[1, 2, 3]));
        let mut bad = bytes.clone();
        bad[0] = 8;
        assert!(View::new(&bad, SEED_BITS).is_err() && from_bytes(&bad).is_err());
        let mut bad = bytes.clone();
        let seeds = bytes.len() - 9;
        assert_eq!(bad[seeds], SEED_BITS);
        bad[seeds] = 3;
        assert!(View::new(&bad, SEED_BITS).is_err() && from_bytes(&bad).is_err());
        assert!(View::new(&bytes[..bytes.len() - 1], SEED_BITS).is_err());
        // Seeds of the other version's size: refused with what the version says.
        let old = bytes_before_v9(&build_before_v9(&[1, 2, 3]));
        let err = View::new(&old, SEED_BITS).unwrap_err().to_string();
        assert!(err.contains("4 bits per group seed, not 2"), "{err}");
        assert!(View::new(&bytes, SEED_BITS_BEFORE_V9).is_err());
    }

    /// A level of 0 groups with a length that matches would make ph's lookup read a group beyond
    /// its arrays (found by the `mutate` fuzz target); levels that are not whole 64-bit words
    /// are never written either. Both are refused with the level named.
    #[test]
    fn refuses_levels_ph_never_writes() {
        let keys: Vec<u64> = (0..100u64).map(|i| h64(&i.to_le_bytes(), 2)).collect();
        let bytes = to_bytes(&build(&keys));
        assert_eq!(layout(&bytes), Layout::Length(bytes.len()));
        let levels = bytes[1] as usize;
        assert!(levels >= 1 && bytes[2..2 + levels].iter().all(|&b| b < 0x80));
        // One more level of 0 groups: same length, so only the level check refuses it.
        let mut zero = vec![bytes[0], bytes[1] + 1];
        zero.extend_from_slice(&bytes[2..2 + levels]);
        zero.push(0);
        zero.extend_from_slice(&bytes[2 + levels..]);
        assert_eq!(layout(&zero), Layout::BadLevel(levels as u64));
        let err = View::new(&zero, SEED_BITS)
            .expect_err("refused")
            .to_string();
        assert!(err.contains(&format!("level {levels} ")), "{err}");
        let err = from_bytes(&zero).err().expect("refused").to_string();
        assert!(err.contains(&format!("level {levels} ")), "{err}");
        // A level of 6 groups instead of 4 or 8 (whatever the length).
        let mut odd = bytes.clone();
        odd[2] = 6;
        assert_eq!(layout(&odd), Layout::BadLevel(0));
    }
}
