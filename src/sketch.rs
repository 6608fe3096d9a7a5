//! The per-document sketch: a simhash (Charikar 2002) of the tf-idf term vector, whose Hamming
//! distances estimate the cosine similarity of two documents; and the collection's idf table
//! that weights it.
//!
//! The idf table is learned while building (from the first [`IDF_SAMPLE`] documents) and stored
//! in the index, so that a query is weighted exactly as the documents it is compared with.

use crate::error::{Error, Result};
use crate::format::{Reader, Writer};
use crate::hash;
use std::collections::HashMap;

/// The idf table is learned from at most this many documents (the first ones added), which
/// bounds the memory a build holds before its sketches can be computed.
pub const IDF_SAMPLE: usize = 20_000;

/// idf values are stored as `round(idf · IDF_SCALE)` in a `u8`.
pub const IDF_SCALE: f32 = 16.0;

/// A term as the sketch sees it: its 128-bit hash `xxh3_128(term, TERM_SEED)` and frequency.
pub type TermHash = (u128, u32);

/// The 32-bit key of a term in the idf table: the top 32 bits of its 128-bit hash.
#[inline]
pub fn idf_key(h: u128) -> u32 {
    (h >> 96) as u32
}

/// Inverse document frequencies of a collection's common terms: `ln(N / df)` for the terms in
/// the table, a default for every other (rarer) term.
#[derive(Clone, Debug, PartialEq)]
pub struct Idf {
    /// Documents the frequencies were counted over.
    pub docs: u32,
    /// idf of terms not in the table.
    pub default: f32,
    /// `(key, round(idf · 16))`, sorted by key.
    table: Vec<(u32, u8)>,
    /// Checksum of the encoded table: identifies it ([`Idf::id`]).
    id: u64,
    /// The table again, for lookups in O(1): open addressing on the key's low bits (keys are
    /// hash bits, so uniform), `(key, quantum)` per slot, quantum 0 marking an empty slot.
    slots: Vec<(u32, u8)>,
}

impl Idf {
    /// Unit weights: every term weighs the same (no collection statistics).
    pub fn uniform() -> Idf {
        Idf::with_table(0, 1.0, Vec::new())
    }

    fn with_table(docs: u32, default: f32, table: Vec<(u32, u8)>) -> Idf {
        let mut slots = vec![(0u32, 0u8); (table.len() * 2).next_power_of_two().max(16)];
        let mask = slots.len() - 1;
        for &(key, quant) in &table {
            let mut i = key as usize & mask;
            while slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            // Quanta are at least 1 (from_df clamps, decode checks), so 0 marks empty slots.
            slots[i] = (key, quant.max(1));
        }
        let mut idf = Idf {
            docs,
            default,
            table,
            id: 0,
            slots,
        };
        let mut w = Writer::default();
        idf.encode(&mut w);
        idf.id = hash::checksum(&w.buf);
        idf
    }

    /// Identifies the table (a checksum of its encoding): fingerprints weighed with one table
    /// are only taken by an index with the same table.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `round(16 · idf)` of a term: the integer weight unit of samples (every idf is a whole
    /// number of sixteenths, the default included).
    #[inline]
    pub fn quantum(&self, h: u128) -> u16 {
        match self.find(idf_key(h)) {
            Some(q) => q as u16,
            None => (self.default * IDF_SCALE).round() as u16,
        }
    }

    #[inline]
    fn find(&self, key: u32) -> Option<u8> {
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let (k, q) = self.slots[i];
            if q == 0 {
                return None;
            }
            if k == key {
                return Some(q);
            }
            i = (i + 1) & mask;
        }
    }

    /// An idf table from document frequencies over `docs` documents. It keeps the
    /// `docs / 2 + 500` terms of highest df among those with df ≥ 2 (ties by key). Every other
    /// term gets one default: the mean idf of the left-out terms' occurrences, Σ df·ln(N/df) /
    /// Σ df over them, which is what a left-out term in a document weighs on average (most are
    /// unique to one document, some are not). Every idf is at least 1/16 (one quantum).
    pub fn from_df(df: &HashMap<u32, u32>, docs: u32) -> Idf {
        let n = docs.max(1) as f64;
        let mut common: Vec<(u32, u32)> = df
            .iter()
            .filter(|e| *e.1 >= 2)
            .map(|(&k, &d)| (k, d))
            .collect();
        common.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        common.truncate(docs as usize / 2 + 500);
        // Left-out terms by df, summed in df order so that the result does not depend on the
        // hash map's iteration order (builds are reproducible).
        let kept: std::collections::HashSet<u32> = common.iter().map(|e| e.0).collect();
        let mut left_out: std::collections::BTreeMap<u32, u64> = Default::default();
        for (k, &d) in df {
            if !kept.contains(k) {
                *left_out.entry(d).or_default() += 1;
            }
        }
        let (mut weighted, mut occurrences) = (0f64, 0f64);
        for (&d, &terms) in &left_out {
            weighted += terms as f64 * d as f64 * (n / d as f64).ln();
            occurrences += terms as f64 * d as f64;
        }
        // Every weight is at least one quantum: a term in every document (or every term of a
        // one-document index) still counts a little, so sketches are never all zero.
        let default = if occurrences > 0.0 {
            weighted / occurrences
        } else {
            n.ln()
        } as f32;
        let quant = |d: u32| {
            ((n / d as f64).ln() as f32 * IDF_SCALE)
                .round()
                .clamp(1.0, 255.0) as u8
        };
        let mut table: Vec<(u32, u8)> = common.into_iter().map(|(k, d)| (k, quant(d))).collect();
        table.sort_unstable();
        Idf::with_table(
            docs,
            (default * IDF_SCALE).round().clamp(1.0, 255.0) / IDF_SCALE,
            table,
        )
    }

    /// The idf of a term.
    #[inline]
    pub fn get(&self, h: u128) -> f32 {
        match self.find(idf_key(h)) {
            Some(q) => q as f32 / IDF_SCALE,
            None => self.default,
        }
    }

    /// Number of terms in the table.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when the table is empty (every term gets the default).
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Encodes section IDF: docs, default, count, keys, quantised idfs.
    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.docs);
        w.f32(self.default);
        w.u32(self.table.len() as u32);
        for e in &self.table {
            w.u32(e.0);
        }
        for e in &self.table {
            w.u8(e.1);
        }
    }

    /// Decodes section IDF.
    pub fn decode(bytes: &[u8]) -> Result<Idf> {
        let mut r = Reader::new(bytes, "IDF");
        let docs = r.u32()?;
        let default = r.f32()?;
        let n = r.u32()? as usize;
        if n.checked_mul(5) != Some(r.remaining()) {
            return Err(Error::format("IDF: table size does not match its count"));
        }
        let keys = r.take(n * 4)?;
        let quants = r.take(n)?;
        let table: Vec<(u32, u8)> = keys
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .zip(quants.iter().copied())
            .collect();
        let quantum = default * IDF_SCALE;
        if !((1.0..=255.0).contains(&quantum) && quantum.fract() == 0.0)
            || table.iter().any(|e| e.1 == 0)
            || table.windows(2).any(|w| w[0].0 >= w[1].0)
        {
            return Err(Error::format(
                "IDF: table is not sorted or its default is invalid",
            ));
        }
        Ok(Idf::with_table(docs, default, table))
    }
}

/// Hashes a term for the sketch.
#[inline]
pub fn term_hash(term: &str) -> u128 {
    hash::h128(term.as_bytes(), hash::TERM_SEED)
}

/// Standard normal quantiles at (i + 0.5) / 256, i = 0..255: one byte of a term's hash picks
/// its coordinate on one random hyperplane normal. Literal values, so that sketches do not
/// depend on a platform's `ln`/`sqrt`.
#[rustfmt::skip]
const GAUSS: [f32; 256] = [
    -2.88563, -2.5205, -2.33523, -2.20658, -2.10655, -2.02401, -1.95332, -1.89123,
    -1.83567, -1.78526, -1.73902, -1.69622, -1.65632, -1.6189, -1.58362, -1.5502,
    -1.51843, -1.48812, -1.45912, -1.4313, -1.40455, -1.37876, -1.35386, -1.32977,
    -1.30643, -1.28378, -1.26177, -1.24036, -1.2195, -1.19915, -1.17929, -1.15989,
    -1.14091, -1.12234, -1.10414, -1.08631, -1.06881, -1.05163, -1.03476, -1.01818,
    -1.00187, -0.985826, -0.970031, -0.954474, -0.939145, -0.924034, -0.90913, -0.894426,
    -0.879913, -0.865583, -0.851429, -0.837443, -0.823619, -0.80995, -0.796432, -0.783057,
    -0.769821, -0.756718, -0.743744, -0.730894, -0.718164, -0.705549, -0.693045, -0.680649,
    -0.668356, -0.656164, -0.644068, -0.632066, -0.620154, -0.60833, -0.59659, -0.584932,
    -0.573352, -0.561849, -0.55042, -0.539062, -0.527774, -0.516552, -0.505395, -0.494301,
    -0.483267, -0.472291, -0.461373, -0.450509, -0.439697, -0.428937, -0.418227, -0.407564,
    -0.396947, -0.386375, -0.375846, -0.365359, -0.354911, -0.344502, -0.33413, -0.323794,
    -0.313493, -0.303225, -0.292988, -0.282782, -0.272606, -0.262457, -0.252336, -0.242241,
    -0.23217, -0.222122, -0.212097, -0.202093, -0.19211, -0.182145, -0.172199, -0.162269,
    -0.152356, -0.142457, -0.132573, -0.122701, -0.112841, -0.102993, -0.093154, -0.0833242,
    -0.0735025, -0.0636879, -0.0538794, -0.0440761, -0.034277, -0.0244812, -0.0146878, -0.00489578,
    0.00489578, 0.0146878, 0.0244812, 0.034277, 0.0440761, 0.0538794, 0.0636879, 0.0735025,
    0.0833242, 0.093154, 0.102993, 0.112841, 0.122701, 0.132573, 0.142457, 0.152356,
    0.162269, 0.172199, 0.182145, 0.19211, 0.202093, 0.212097, 0.222122, 0.23217,
    0.242241, 0.252336, 0.262457, 0.272606, 0.282782, 0.292988, 0.303225, 0.313493,
    0.323794, 0.33413, 0.344502, 0.354911, 0.365359, 0.375846, 0.386375, 0.396947,
    0.407564, 0.418227, 0.428937, 0.439697, 0.450509, 0.461373, 0.472291, 0.483267,
    0.494301, 0.505395, 0.516552, 0.527774, 0.539062, 0.55042, 0.561849, 0.573352,
    0.584932, 0.59659, 0.60833, 0.620154, 0.632066, 0.644068, 0.656164, 0.668356,
    0.680649, 0.693045, 0.705549, 0.718164, 0.730894, 0.743744, 0.756718, 0.769821,
    0.783057, 0.796432, 0.80995, 0.823619, 0.837443, 0.851429, 0.865583, 0.879913,
    0.894426, 0.90913, 0.924034, 0.939145, 0.954474, 0.970031, 0.985826, 1.00187,
    1.01818, 1.03476, 1.05163, 1.06881, 1.08631, 1.10414, 1.12234, 1.14091,
    1.15989, 1.17929, 1.19915, 1.2195, 1.24036, 1.26177, 1.28378, 1.30643,
    1.32977, 1.35386, 1.37876, 1.40455, 1.4313, 1.45912, 1.48812, 1.51843,
    1.5502, 1.58362, 1.6189, 1.65632, 1.69622, 1.73902, 1.78526, 1.83567,
    1.89123, 1.95332, 2.02401, 2.10655, 2.20658, 2.33523, 2.5205, 2.88563,
];

/// Simhash of `terms` weighted tf · idf with Gaussian random hyperplanes (Charikar 2002): bit i
/// is set when the document's projection on hyperplane normal i is positive. Gaussian normals,
/// not ±1 signs, make P(bit differs) = angle / π exactly, so the estimate is unbiased even
/// when a few heavy terms dominate a vector.
///
/// The coordinates of a term for sketch word `w` are 64 Gaussian values, one per byte of
/// `derived(low ^ high half of the term hash, 8·w + j)` (j = 0..7, bytes little-endian). Each
/// vote is the f32 sum over terms in order, multiply then add (never fused), so the vectorised
/// path gives the same bits as the scalar one.
pub fn simhash(terms: &[TermHash], idf: &Idf, words: usize) -> Vec<u64> {
    let weighted: Vec<(u64, f32)> = terms
        .iter()
        .map(|&(h, tf)| (h as u64 ^ (h >> 64) as u64, tf as f32 * idf.get(h)))
        .collect();
    (0..words)
        .map(|word| simhash_word(&weighted, word as u32))
        .collect()
}

/// Sketch word `word` of terms given as (coordinate base, weight).
fn simhash_word(terms: &[(u64, f32)], word: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { simhash_word_avx2(terms, word) };
    }
    simhash_word_scalar(terms, word)
}

/// [`simhash_word`] on any CPU.
fn simhash_word_scalar(terms: &[(u64, f32)], word: u32) -> u64 {
    let mut votes = [0f32; 64];
    for &(base, weight) in terms {
        for j in 0..8 {
            let bytes = hash::derived(base, 8 * word + j).to_le_bytes();
            for (v, b) in votes[8 * j as usize..][..8].iter_mut().zip(bytes) {
                *v += weight * GAUSS[b as usize];
            }
        }
    }
    votes
        .iter()
        .enumerate()
        .fold(0u64, |acc, (i, &v)| acc | (((v > 0.0) as u64) << i))
}

/// [`simhash_word`] with the 64 votes in eight AVX registers: about twice as fast. The table
/// lookups stay scalar (a gather is slower on the CPUs we measured); multiply and add are
/// separate instructions, as in the scalar path.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn simhash_word_avx2(terms: &[(u64, f32)], word: u32) -> u64 {
    use std::arch::x86_64::*;
    let mut votes = [_mm256_setzero_ps(); 8];
    for &(base, weight) in terms {
        let w = _mm256_set1_ps(weight);
        for (j, v) in votes.iter_mut().enumerate() {
            let b = hash::derived(base, 8 * word + j as u32).to_le_bytes();
            let g = |i: usize| GAUSS[b[i] as usize];
            let coords = _mm256_setr_ps(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7));
            *v = _mm256_add_ps(*v, _mm256_mul_ps(w, coords));
        }
    }
    votes.iter().enumerate().fold(0u64, |acc, (j, &v)| {
        let positive = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(v, _mm256_setzero_ps()));
        acc | (positive as u8 as u64) << (8 * j)
    })
}

/// The estimated cosine similarity of two sketches: cos(π · hamming / bits), clamped to [0, 1].
pub fn estimate_similarity(
    a: &[u64],
    b: impl IntoIterator<Item = impl std::borrow::Borrow<u64>>,
) -> f32 {
    let (mut words, mut hamming) = (0usize, 0u32);
    for (x, y) in a.iter().zip(b) {
        words += 1;
        hamming += (x ^ y.borrow()).count_ones();
    }
    let bits = (words * 64) as f64;
    if bits == 0.0 {
        return 0.0;
    }
    (std::f64::consts::PI * hamming as f64 / bits)
        .cos()
        .max(0.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_estimate() {
        assert_eq!(estimate_similarity(&[0, 0], [0, 0]), 1.0);
        assert_eq!(estimate_similarity(&[0, 0], [u64::MAX, u64::MAX]), 0.0);
        assert!(estimate_similarity(&[0, 0], [u64::MAX, 0]).abs() < 1e-6);
    }

    #[test]
    fn idf_table_round_trips_and_weights_common_terms_low() {
        let mut df = HashMap::new();
        df.insert(1u32, 900u32); // in 90% of documents
        df.insert(2, 10);
        df.insert(3, 1); // unique terms are not stored
        df.insert(4, 1);
        let idf = Idf::from_df(&df, 1000);
        assert_eq!(idf.len(), 2);
        let h = |k: u32| (k as u128) << 96;
        assert!((idf.get(h(1)) - (1000f32 / 900.0).ln()).abs() < 0.04);
        assert!((idf.get(h(2)) - 100f32.ln()).abs() < 0.04);
        // Left out: two terms of df 1, so the default is ln(1000 / 1).
        assert!(
            (idf.get(h(3)) - 1000f32.ln()).abs() < 0.04,
            "{}",
            idf.get(h(3))
        );
        assert_eq!(idf.get(h(3)), idf.get(h(99)));
        let mut w = Writer::default();
        idf.encode(&mut w);
        assert_eq!(Idf::decode(&w.buf).unwrap(), idf);
        assert!(Idf::decode(&w.buf[..w.buf.len() - 1]).is_err());
        // One document: no term is common, every weight is the floor, not zero.
        let one = Idf::from_df(&HashMap::from([(5u32, 1u32)]), 1);
        assert_eq!(one.get(h(5)), 1.0 / IDF_SCALE);
    }

    /// The sketch as §8.8 of index-format.md states it, one term at a time.
    fn simhash_by_definition(terms: &[TermHash], idf: &Idf, words: usize) -> Vec<u64> {
        let mut votes = vec![0f32; words * 64];
        for &(h, tf) in terms {
            let weight = tf as f32 * idf.get(h);
            let base = h as u64 ^ (h >> 64) as u64;
            for (i, v) in votes.iter_mut().enumerate() {
                let byte = hash::derived(base, (i / 8) as u32).to_le_bytes()[i % 8];
                *v += weight * GAUSS[byte as usize];
            }
        }
        votes
            .chunks(64)
            .map(|c| (0..64).fold(0u64, |acc, i| acc | ((c[i] > 0.0) as u64) << i))
            .collect()
    }

    #[test]
    fn simhash_equals_its_definition_bit_for_bit() {
        let mut rng = crate::synth::Rng::new(7);
        let mut df = HashMap::new();
        let keys: Vec<u128> = (0..500)
            .map(|_| (rng.next_u64() as u128) << 64 | rng.next_u64() as u128)
            .collect();
        for (i, k) in keys.iter().enumerate() {
            df.insert(idf_key(*k), 1 + (i as u32 % 300));
        }
        let idf = Idf::from_df(&df, 1000);
        for n in [0usize, 1, 2, 7, 40, 300] {
            for _ in 0..20 {
                let terms: Vec<TermHash> = (0..n)
                    .map(|_| (keys[rng.below(keys.len())], 1 + rng.below(9) as u32))
                    .collect();
                for words in [1, 3, 4] {
                    assert_eq!(
                        simhash(&terms, &idf, words),
                        simhash_by_definition(&terms, &idf, words)
                    );
                }
            }
        }
        // The scalar path, on a machine where the vectorised one is taken.
        let terms: Vec<TermHash> = keys.iter().map(|&h| (h, 2)).collect();
        let weighted: Vec<(u64, f32)> = terms
            .iter()
            .map(|&(h, tf)| (h as u64 ^ (h >> 64) as u64, tf as f32 * idf.get(h)))
            .collect();
        let want = simhash_by_definition(&terms, &idf, 3);
        for word in 0..3 {
            assert_eq!(simhash_word_scalar(&weighted, word), want[word as usize]);
        }
    }

    #[test]
    fn simhash_tracks_cosine() {
        // Two vectors over 200 terms sharing 180: cosine 0.9.
        let a: Vec<TermHash> = (0..200u64)
            .map(|i| (term_hash(&i.to_string()), 1))
            .collect();
        let b: Vec<TermHash> = (20..220u64)
            .map(|i| (term_hash(&i.to_string()), 1))
            .collect();
        let u = Idf::uniform();
        let est = estimate_similarity(&simhash(&a, &u, 4), simhash(&b, &u, 4));
        assert!((est - 0.9).abs() < 0.08, "{est}");
        assert_eq!(simhash(&a, &u, 2), simhash(&a, &u, 2));
    }
}
