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
}

impl Idf {
    /// Unit weights: every term weighs the same (no collection statistics).
    pub fn uniform() -> Idf {
        Idf {
            docs: 0,
            default: 1.0,
            table: Vec::new(),
        }
    }

    /// An idf table from document frequencies over `docs` documents. It keeps the
    /// `docs / 2 + 500` terms of highest df among those with df ≥ 2 (ties by key); other terms
    /// get the idf of half the smallest kept df (at most `ln(docs)`). Every idf is at least
    /// 1/16 (one quantum).
    pub fn from_df(df: &HashMap<u32, u32>, docs: u32) -> Idf {
        let n = docs.max(1) as f64;
        let mut common: Vec<(u32, u32)> = df
            .iter()
            .filter(|e| *e.1 >= 2)
            .map(|(&k, &d)| (k, d))
            .collect();
        common.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        common.truncate(docs as usize / 2 + 500);
        let cut = common.last().map_or(1, |e| e.1);
        // Every weight is at least one quantum: a term in every document (or every term of a
        // one-document index) still counts a little, so sketches are never all zero.
        let default = (n / (cut as f64 / 2.0).max(1.0)).ln() as f32;
        let quant = |d: u32| {
            ((n / d as f64).ln() as f32 * IDF_SCALE)
                .round()
                .clamp(1.0, 255.0) as u8
        };
        let mut table: Vec<(u32, u8)> = common.into_iter().map(|(k, d)| (k, quant(d))).collect();
        table.sort_unstable();
        Idf {
            docs,
            default: (default * IDF_SCALE).round().clamp(1.0, 255.0) / IDF_SCALE,
            table,
        }
    }

    /// The idf of a term.
    #[inline]
    pub fn get(&self, h: u128) -> f32 {
        let key = idf_key(h);
        match self.table.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => self.table[i].1 as f32 / IDF_SCALE,
            Err(_) => self.default,
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
        if !(default.is_finite() && default >= 0.0) || table.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(Error::format(
                "IDF: table is not sorted or its default is invalid",
            ));
        }
        Ok(Idf {
            docs,
            default,
            table,
        })
    }
}

/// Hashes a term for the sketch.
#[inline]
pub fn term_hash(term: &str) -> u128 {
    hash::h128(term.as_bytes(), hash::TERM_SEED)
}

/// The `word`-th 64 bits of a term's hyperplane signs: the two halves of its 128-bit hash, then
/// `derived(low half, word)`.
#[inline]
fn signs(h: u128, word: usize) -> u64 {
    match word {
        0 => h as u64,
        1 => (h >> 64) as u64,
        w => hash::derived(h as u64, w as u32),
    }
}

/// Simhash of `terms` weighted tf · idf: bit i is set when the weighted vote of the terms'
/// sign bits i is positive.
pub fn simhash(terms: &[TermHash], idf: &Idf, words: usize) -> Vec<u64> {
    let mut votes = vec![0f32; words * 64];
    for &(h, tf) in terms {
        let w = tf as f32 * idf.get(h);
        if w == 0.0 {
            continue;
        }
        for (word, chunk) in votes.chunks_exact_mut(64).enumerate() {
            let bits = signs(h, word);
            for (i, v) in chunk.iter_mut().enumerate() {
                *v += if bits >> i & 1 == 1 { w } else { -w };
            }
        }
    }
    votes
        .chunks_exact(64)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u64, |acc, (i, &v)| acc | (((v > 0.0) as u64) << i))
        })
        .collect()
}

/// The estimated cosine similarity of two sketches: cos(π · hamming / bits), clamped to [0, 1].
pub fn estimate_similarity(a: &[u64], b: &[u64]) -> f32 {
    let bits = (a.len().min(b.len()) * 64) as f64;
    if bits == 0.0 {
        return 0.0;
    }
    let hamming: u32 = a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum();
    (std::f64::consts::PI * hamming as f64 / bits)
        .cos()
        .max(0.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_estimate() {
        assert_eq!(estimate_similarity(&[0, 0], &[0, 0]), 1.0);
        assert_eq!(estimate_similarity(&[0, 0], &[u64::MAX, u64::MAX]), 0.0);
        assert!(estimate_similarity(&[0, 0], &[u64::MAX, 0]).abs() < 1e-6);
    }

    #[test]
    fn idf_table_round_trips_and_weights_common_terms_low() {
        let mut df = HashMap::new();
        df.insert(1u32, 900u32); // in 90% of documents
        df.insert(2, 10);
        df.insert(3, 1); // unique terms are not stored
        let idf = Idf::from_df(&df, 1000);
        assert_eq!(idf.len(), 2);
        let h = |k: u32| (k as u128) << 96;
        assert!((idf.get(h(1)) - (1000f32 / 900.0).ln()).abs() < 0.04);
        assert!((idf.get(h(2)) - 100f32.ln()).abs() < 0.04);
        assert!(
            (idf.get(h(3)) - 200f32.ln()).abs() < 0.04,
            "{}",
            idf.get(h(3))
        );
        let mut w = Writer::default();
        idf.encode(&mut w);
        assert_eq!(Idf::decode(&w.buf).unwrap(), idf);
        assert!(Idf::decode(&w.buf[..w.buf.len() - 1]).is_err());
        // One document: no term is common, every weight is the floor, not zero.
        let one = Idf::from_df(&HashMap::from([(5u32, 1u32)]), 1);
        assert_eq!(one.get(h(5)), 1.0 / IDF_SCALE);
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
        let est = estimate_similarity(&simhash(&a, &u, 4), &simhash(&b, &u, 4));
        assert!((est - 0.9).abs() < 0.08, "{est}");
        assert_eq!(simhash(&a, &u, 2), simhash(&a, &u, 2));
    }
}
