//! The token layer of the shingling methods: pinned 64-bit word hashes, q-word shingles hashed by
//! folding word hashes, and the overlap, Jaccard and Dice coefficients of sorted hash sets.
//!
//! What a shingle set is — the windows of q words, one shingle for a shorter non-empty sequence
//! — is defined once, by [`shingle_set`], over any term type with a 64-bit key per window: the
//! methods key hashed words by [`shingle_hash`], `pocketdex-eval`'s ground truth packs interned
//! term numbers.
//!
//! A shingle's hash is `fold(SHINGLE_SEED, words)` with [`step`], so the hash of a window can be
//! extended one word at a time; spex's iterative hashing relies on that. Sets are sorted,
//! deduplicated `Vec<u64>`: two different shingles share a hash with probability about 2⁻⁶⁴ per
//! pair, which is negligible beside every other error in this module (and the tests compare with
//! sets of strings).

use super::{Described, SHINGLE_SEED, WORD_SEED};
use pocketdex::hash;
use pocketdex::Analyzer;

/// The pinned hash of one (case-folded) word: xxh3-64 with [`WORD_SEED`].
#[inline]
pub fn word_hash(word: &str) -> u64 {
    hash::h64(word.as_bytes(), WORD_SEED)
}

/// The hashes of a sequence of words, in order.
pub fn word_hashes<S: AsRef<str>>(words: &[S]) -> Vec<u64> {
    words.iter().map(|w| word_hash(w.as_ref())).collect()
}

/// A document's set of `q`-word shingles of its content words, with the identity of that set,
/// or why it has none: what minhash and trials describe a document by.
pub fn content_shingles(
    analyzer: &Analyzer,
    text: &str,
    q: usize,
) -> std::result::Result<(Vec<u64>, u128), String> {
    let set = shingles(&word_hashes(&analyzer.terms(text)), q);
    if set.is_empty() {
        return Err("no content words".into());
    }
    let identity = Described::identity_of(set.iter().copied());
    Ok((set, identity))
}

/// One step of the shingle fold: the hash of a window extended by one word.
#[inline]
pub fn step(acc: u64, word: u64) -> u64 {
    hash::fmix64(acc.rotate_left(29) ^ word)
}

/// The hash of a sequence of word hashes (a shingle, chunk or signature).
#[inline]
pub fn shingle_hash(words: &[u64]) -> u64 {
    words.iter().fold(SHINGLE_SEED, |acc, &w| step(acc, w))
}

/// The set of `q`-word shingles of a word sequence, sorted and deduplicated. A sequence of 1 to
/// q − 1 words has a single shingle made of all of them (as in the evaluation oracle,
/// `scripts/oracle/truth.py`); an empty sequence has none.
///
/// # Example
/// ```
/// use pocketdex_methods::shingles::{shingles, word_hashes};
/// let w = word_hashes(&["a", "rose", "is", "a", "rose", "is", "a", "rose"]);
/// assert_eq!(shingles(&w, 3).len(), 3); // "a rose is", "rose is a", "is a rose"
/// assert_eq!(shingles(&w[..2], 3).len(), 1);
/// ```
pub fn shingles(words: &[u64], q: usize) -> Vec<u64> {
    shingle_set(words, q, shingle_hash)
}

/// The set of `q`-word shingles of a sequence of terms of any type, each window made a 64-bit
/// key by `key`, sorted and deduplicated. A sequence of 1 to q − 1 terms has a single shingle,
/// `key` of all of them; an empty sequence has none.
///
/// # Example
/// ```
/// use pocketdex_methods::shingles::shingle_set;
/// let key = |w: &[u8]| w.iter().fold(0u64, |k, &t| k << 8 | t as u64);
/// assert_eq!(shingle_set(b"abcab", 2, key), [0x6162, 0x6263, 0x6361]);
/// assert_eq!(shingle_set(b"a", 2, key), [0x61]);
/// assert!(shingle_set(b"", 2, key).is_empty());
/// ```
pub fn shingle_set<T>(terms: &[T], q: usize, key: impl Fn(&[T]) -> u64) -> Vec<u64> {
    let q = q.max(1);
    if terms.is_empty() {
        return Vec::new();
    }
    if terms.len() < q {
        return vec![key(terms)];
    }
    let mut set: Vec<u64> = terms.windows(q).map(key).collect();
    set.sort_unstable();
    set.dedup();
    // Kept per document for a whole collection: no room for the duplicates dedup removed.
    set.shrink_to_fit();
    set
}

/// The number of elements two sorted, deduplicated slices share.
pub fn overlap<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Jaccard coefficient |A ∩ B| / |A ∪ B| of two sorted, deduplicated sets (0 when both are empty).
pub fn jaccard<T: Ord>(a: &[T], b: &[T]) -> f64 {
    jaccard_of(overlap(a, b), a.len(), b.len())
}

/// Jaccard coefficient from the overlap and the two set sizes.
#[inline]
pub fn jaccard_of(overlap: usize, a: usize, b: usize) -> f64 {
    let union = a + b - overlap;
    if union == 0 {
        0.0
    } else {
        overlap as f64 / union as f64
    }
}

/// Dice coefficient 2|A ∩ B| / (|A| + |B|): shared elements as a share of the mean set size.
/// This is the S3 score of Bernstein & Zobel when the elements are chunks.
#[inline]
pub fn dice_of(overlap: usize, a: usize, b: usize) -> f64 {
    if a + b == 0 {
        0.0
    } else {
        2.0 * overlap as f64 / (a + b) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_hash_extends_one_word_at_a_time() {
        let w = word_hashes(&["one", "two", "three"]);
        assert_eq!(
            step(step(step(SHINGLE_SEED, w[0]), w[1]), w[2]),
            shingle_hash(&w)
        );
        assert_ne!(shingle_hash(&w[..2]), shingle_hash(&[w[1], w[0]]));
    }

    // Pin the hashes: canonical hashes, shingles and sketches must not change between versions
    // (users keep `dups --json` output and compare runs).
    #[test]
    fn hashes_known_answers() {
        assert_eq!(word_hash("pocketdex"), 0x2a89_2c49_9c77_30ad);
        assert_eq!(
            shingle_hash(&word_hashes(&["near", "duplicate", "detection"])),
            0xc71f_336a_dc4c_5e08
        );
        assert_eq!(
            super::super::Canonicalizer::hash("pocketdex"),
            0xa71c_edb2_a731_1c8c_2974_b231_0a14_950a
        );
        let tf = super::super::cosine::TermVector::from_terms(&[
            "near",
            "duplicate",
            "detection",
            "near",
        ]);
        assert_eq!(
            super::super::simhash::fingerprint(&tf),
            0x0098_0bcd_846a_a810
        );
        assert_eq!(
            super::super::minhash::sketch(&[1, 2, 3], 2)[1],
            0x6453_dd52_2580_790d
        );
        let p = super::super::trials::TrialParams::default();
        assert_eq!(
            super::super::trials::signature(&[1, 2, 3], &p)[0],
            0x8b4a_5789_318a_d059
        );
    }

    #[test]
    fn coefficients_known_answers() {
        let a = [1u64, 2, 3, 4];
        let b = [3u64, 4, 5, 6, 7, 8];
        assert_eq!(overlap(&a, &b), 2);
        assert!((jaccard(&a, &b) - 2.0 / 8.0).abs() < 1e-12);
        assert!((dice_of(2, 4, 6) - 0.4).abs() < 1e-12);
        assert_eq!(jaccard::<u64>(&[], &[]), 0.0);
    }
}
