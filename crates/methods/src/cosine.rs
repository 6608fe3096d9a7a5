//! Term-frequency vectors of content words and their exact cosines: plain term frequencies (the
//! vector simhash sketches) and tf-idf over a collection (the measure of the evaluation oracle,
//! `scripts/oracle/truth.py`: tf = raw count, idf = ln(N/df), rows L2-normalised).
//!
//! The tf-idf measure is defined once here, over sorted (term, count) slices of any term key:
//! [`term_counts`], [`idf`], [`norm`] and [`tfidf_cosine`]. [`DocFreq`] applies it to hashed
//! words (the methods), and `pocketdex-eval`'s ground truth to interned term numbers.

use super::shingles::word_hash;
use rayon::prelude::*;

/// Sorted (term, count) pairs of a sequence of terms in any order.
///
/// ```
/// use pocketdex_methods::cosine::term_counts;
/// assert_eq!(term_counts([7u32, 3, 7, 7]), [(3, 1), (7, 3)]);
/// ```
pub fn term_counts<K: Ord + Copy>(terms: impl IntoIterator<Item = K>) -> Vec<(K, u32)> {
    // Sorting the bare keys is cheaper than sorting (key, 1) pairs; the ground truth counts
    // every document of a collection.
    let mut v: Vec<K> = terms.into_iter().collect();
    v.sort_unstable();
    add_up_runs(v.into_iter().map(|k| (k, 1)))
}

/// (term, count) pairs sorted by term with equal terms next to each other, equal terms added up.
fn add_up_runs<K: Ord + Copy>(sorted: impl Iterator<Item = (K, u32)>) -> Vec<(K, u32)> {
    let mut out: Vec<(K, u32)> = Vec::with_capacity(sorted.size_hint().0);
    for (k, c) in sorted {
        match out.last_mut() {
            Some((last, n)) if *last == k => *n += c,
            _ => out.push((k, c)),
        }
    }
    out
}

/// The inverse document frequency ln(N/df) of a term in `df` of `docs` documents (0 for a term
/// in no document; a term in every document weighs 0): the core's one idf, which also weighs
/// the index.
#[inline]
pub fn idf(docs: usize, df: u32) -> f64 {
    pocketdex::sketch::idf(docs as u64, df)
}

/// The L2 norm of a vector given by its weights.
#[inline]
pub fn norm(weights: impl IntoIterator<Item = f64>) -> f64 {
    weights.into_iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The L2 norm of a document's tf-idf vector: √Σ (tf · idf(term))².
#[inline]
pub fn tfidf_norm<K: Copy>(counts: &[(K, u32)], idf: impl Fn(K) -> f64) -> f64 {
    norm(counts.iter().map(|&(k, c)| c as f64 * idf(k)))
}

/// The exact tf-idf cosine of two documents given as sorted (term, count) slices and their
/// [`tfidf_norm`]s: Σ tf_a · tf_b · idf² / (norm_a · norm_b), at most 1 (0 when either norm is
/// 0). No allocation: the ground truth calls it for every candidate pair.
///
/// ```
/// use pocketdex_methods::cosine::{idf, term_counts, tfidf_cosine, tfidf_norm};
/// // Three documents: "cat dog", "cat eel", "fox"; term numbers cat 0, dog 1, eel 2, fox 3.
/// let df = [2, 1, 1, 1];
/// let w = |t: u32| idf(3, df[t as usize]);
/// let (a, b) = (term_counts([0u32, 1]), term_counts([0u32, 2]));
/// let c = tfidf_cosine(&a, &b, w, tfidf_norm(&a, w), tfidf_norm(&b, w));
/// let (l15, l3) = (1.5f64.ln(), 3f64.ln());
/// assert!((c - l15 * l15 / (l15 * l15 + l3 * l3)).abs() < 1e-12);
/// ```
#[inline]
pub fn tfidf_cosine<K: Ord + Copy>(
    a: &[(K, u32)],
    b: &[(K, u32)],
    idf: impl Fn(K) -> f64,
    norm_a: f64,
    norm_b: f64,
) -> f64 {
    if norm_a == 0.0 || norm_b == 0.0 {
        return 0.0;
    }
    let dot = merge_dot(a, b, |k, x, y| {
        let w = idf(k);
        x as f64 * y as f64 * w * w
    });
    (dot / (norm_a * norm_b)).min(1.0)
}

/// The term frequencies of one document: (term hash, count), sorted by hash.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermVector {
    terms: Vec<(u64, u32)>,
    norm: f64,
}

impl TermVector {
    /// Counts the terms (the document's content words, e.g. from [`Analyzer::terms`]).
    ///
    /// [`Analyzer::terms`]: pocketdex::text::Analyzer::terms
    pub fn from_terms<S: AsRef<str>>(terms: &[S]) -> Self {
        Self::from_sorted_counts(term_counts(terms.iter().map(|t| word_hash(t.as_ref()))))
    }

    /// A vector from (term hash, count) pairs in any order; equal hashes are added up.
    pub fn from_counts(counts: impl IntoIterator<Item = (u64, u32)>) -> Self {
        let mut v: Vec<(u64, u32)> = counts.into_iter().collect();
        v.sort_unstable();
        Self::from_sorted_counts(add_up_runs(v.into_iter()))
    }

    fn from_sorted_counts(mut terms: Vec<(u64, u32)>) -> Self {
        // Counting left room for every occurrence; a method keeps one vector per document.
        terms.shrink_to_fit();
        let norm = norm(terms.iter().map(|&(_, c)| c as f64));
        TermVector { terms, norm }
    }

    /// (term hash, count) pairs, sorted by hash.
    pub fn terms(&self) -> &[(u64, u32)] {
        &self.terms
    }

    /// True when the document has no content word.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Number of distinct terms.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// The exact cosine of the two term-frequency vectors (0 when either is empty).
    pub fn cosine(&self, other: &TermVector) -> f64 {
        if self.norm == 0.0 || other.norm == 0.0 {
            return 0.0;
        }
        let dot = merge_dot(&self.terms, &other.terms, |_, a, b| a as f64 * b as f64);
        (dot / (self.norm * other.norm)).min(1.0)
    }
}

impl TermVector {
    /// The L2 norm of the counts.
    pub fn norm(&self) -> f64 {
        self.norm
    }
}

/// A [`TermVector`] as a feature record holds it (hashes and counts side by side, and the
/// norm), read without copying.
#[derive(Clone, Copy, Debug)]
pub struct TermsRef<'a> {
    hashes: &'a [u64],
    counts: &'a [u32],
    norm: f64,
}

impl<'a> TermsRef<'a> {
    /// A vector's sorted hashes, their counts and the norm ([`TermVector::norm`]).
    pub fn new(hashes: &'a [u64], counts: &'a [u32], norm: f64) -> Self {
        debug_assert_eq!(hashes.len(), counts.len());
        TermsRef {
            hashes,
            counts,
            norm,
        }
    }

    /// [`TermVector::cosine`], to the last bit: the same products summed in the same order.
    pub fn cosine(&self, other: &TermsRef<'_>) -> f64 {
        if self.norm == 0.0 || other.norm == 0.0 {
            return 0.0;
        }
        let (a, b) = (self.hashes, other.hashes);
        let dot = merge_sum((a.len(), |i| a[i]), (b.len(), |j| b[j]), |i, j| {
            self.counts[i] as f64 * other.counts[j] as f64
        });
        (dot / (self.norm * other.norm)).min(1.0)
    }
}

/// Document frequencies of a collection's terms, for tf-idf weights.
#[derive(Clone, Debug)]
pub struct DocFreq {
    /// (term hash, number of documents holding it), sorted by hash.
    df: Vec<(u64, u32)>,
    docs: usize,
}

/// Documents whose terms are sorted together when counting document frequencies: what
/// [`DocFreq`] holds besides its table.
const DF_CHUNK: usize = 1 << 16;

impl DocFreq {
    /// Counts in how many of the vectors each term occurs; `docs` is N, the collection size
    /// (documents without any content word count in N, as in the oracle).
    pub fn new<'a>(vectors: impl IntoIterator<Item = &'a TermVector>, docs: usize) -> Self {
        let mut df = DocFreq {
            df: Vec::new(),
            docs: 0,
        };
        let mut chunk: Vec<u64> = Vec::new();
        let mut in_chunk = 0;
        for v in vectors {
            chunk.extend(v.terms.iter().map(|&(h, _)| h));
            in_chunk += 1;
            if in_chunk == DF_CHUNK {
                df.add(std::mem::take(&mut chunk), in_chunk);
                in_chunk = 0;
            }
        }
        df.add(chunk, in_chunk);
        df.docs = docs.max(df.docs);
        df
    }

    /// [`DocFreq::new`] for `docs` documents whose distinct terms `terms_of(d)` gives (any order;
    /// none for a document without content words), a chunk of documents at a time in parallel:
    /// no more than one chunk's terms are held at once.
    pub fn from_docs(docs: usize, terms_of: impl Fn(usize) -> Vec<u64> + Sync) -> Self {
        let mut df = DocFreq {
            df: Vec::new(),
            docs: 0,
        };
        for first in (0..docs).step_by(DF_CHUNK) {
            let end = (first + DF_CHUNK).min(docs);
            let chunk: Vec<u64> = (first..end)
                .into_par_iter()
                .flat_map_iter(&terms_of)
                .collect();
            df.add(chunk, end - first);
        }
        df
    }

    /// Adds the terms of `docs` more documents (each term once per document).
    fn add(&mut self, mut terms: Vec<u64>, docs: usize) {
        terms.par_sort_unstable();
        let counted = add_up_runs(terms.into_iter().map(|h| (h, 1)));
        let old = std::mem::take(&mut self.df);
        let mut merged = Vec::with_capacity(old.len() + counted.len());
        let (mut a, mut b) = (old.into_iter().peekable(), counted.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    let n = x.1 + y.1;
                    let h = x.0;
                    a.next();
                    b.next();
                    (h, n)
                }
                (Some(x), Some(y)) if x.0 < y.0 => a.next().expect("peeked"),
                (Some(_), Some(_)) | (None, Some(_)) => b.next().expect("peeked"),
                (Some(_), None) => a.next().expect("peeked"),
                (None, None) => break,
            };
            merged.push(next);
        }
        self.df = merged;
        self.docs += docs;
    }

    /// The [`idf`] of a term (of a term the collection does not hold: as if in one document).
    pub fn idf(&self, term: u64) -> f64 {
        let df = self
            .df
            .binary_search_by_key(&term, |&(k, _)| k)
            .map(|i| self.df[i].1)
            .unwrap_or(1);
        idf(self.docs, df)
    }

    /// Every term's [`DocFreq::idf`] in a hash table: one probe per lookup, not a binary search
    /// and a logarithm (16 bytes a term, twice over for the table's spare room).
    pub fn idf_table(&self) -> IdfTable {
        let mut table = rustc_hash::FxHashMap::default();
        table.reserve(self.df.len());
        table.extend(self.df.iter().map(|&(h, df)| (h, idf(self.docs, df))));
        IdfTable {
            table,
            absent: idf(self.docs, 1),
        }
    }

    /// The L2-normalised tf-idf vector of a document: weight tf · ln(N/df). A term that is in
    /// every document weighs 0 and is left out. The [`dot`] of two of them is their
    /// [`tfidf_cosine`] up to float rounding, and exactly their [`DocFreq::cosine`].
    pub fn weights(&self, v: &TermVector) -> Vec<(u64, f64)> {
        let norm = self.norm(v);
        v.terms
            .iter()
            .filter_map(|&(h, tf)| {
                let x = tf as f64 * self.idf(h);
                (x > 0.0).then_some((h, if norm > 0.0 { x / norm } else { x }))
            })
            .collect()
    }

    /// The L2 norm of a document's tf-idf vector (over its weights above 0, in term order).
    pub fn norm(&self, v: &TermVector) -> f64 {
        norm_with(v.terms.iter().copied(), |h| self.idf(h))
    }

    /// The [`dot`] of the two documents' [`DocFreq::weights`], to the last bit, from their term
    /// vectors and [`DocFreq::norm`]s: the weights of the terms they share only, so that a
    /// collection's pairs are verified without holding every document's weights.
    pub fn cosine(&self, a: &TermVector, norm_a: f64, b: &TermVector, norm_b: f64) -> f64 {
        let dot = merge_dot(&a.terms, &b.terms, |h, x, y| {
            shared_weight(x, y, self.idf(h), norm_a, norm_b)
        });
        dot.min(1.0)
    }
}

/// [`DocFreq::idf`] of every term of a collection, looked up by hash ([`DocFreq::idf_table`]).
#[derive(Clone, Debug)]
pub struct IdfTable {
    table: rustc_hash::FxHashMap<u64, f64>,
    absent: f64,
}

impl IdfTable {
    /// [`DocFreq::idf`] of `term`, the same value.
    #[inline]
    pub fn idf(&self, term: u64) -> f64 {
        self.table.get(&term).copied().unwrap_or(self.absent)
    }

    /// [`DocFreq::norm`] of a term vector given as its (term, count) pairs, ascending: the same
    /// value.
    pub fn norm_of(&self, terms: impl IntoIterator<Item = (u64, u32)>) -> f64 {
        norm_with(terms, |h| self.idf(h))
    }
}

/// The L2 norm of the tf-idf weights above 0 of (term, count) pairs, in their order.
fn norm_with(terms: impl IntoIterator<Item = (u64, u32)>, idf: impl Fn(u64) -> f64) -> f64 {
    norm(terms.into_iter().filter_map(|(h, tf)| {
        let x = tf as f64 * idf(h);
        (x > 0.0).then_some(x)
    }))
}

/// The cosine of two L2-normalised sparse vectors sorted by term (their dot product).
pub fn dot(a: &[(u64, f64)], b: &[(u64, f64)]) -> f64 {
    merge_dot(a, b, |_, x, y| x * y).min(1.0)
}

/// Σ mul(term, x, y) over the terms two sorted sparse vectors share.
#[inline]
fn merge_dot<K: Ord + Copy, T: Copy>(
    a: &[(K, T)],
    b: &[(K, T)],
    mul: impl Fn(K, T, T) -> f64,
) -> f64 {
    merge_sum((a.len(), |i| a[i].0), (b.len(), |j| b[j].0), |i, j| {
        mul(a[i].0, a[i].1, b[j].1)
    })
}

/// Σ term(i, j), in ascending key order, over the positions i of `a` and j of `b` (each a
/// length and the key at a position, keys ascending) whose keys are equal: the one merge of
/// every sparse dot product here, whatever layout holds the vectors.
#[inline]
pub(crate) fn merge_sum<K: Ord>(
    (a_len, a_key): (usize, impl Fn(usize) -> K),
    (b_len, b_key): (usize, impl Fn(usize) -> K),
    mut term: impl FnMut(usize, usize) -> f64,
) -> f64 {
    let (mut i, mut j, mut s) = (0, 0, 0.0);
    while i < a_len && j < b_len {
        match a_key(i).cmp(&b_key(j)) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += term(i, j);
                i += 1;
                j += 1;
            }
        }
    }
    s
}

/// What a term that two documents share adds to their tf-idf cosine ([`DocFreq::cosine`]): the
/// product of its normalised weights, tf · idf / norm on each side (0 unless both are above 0).
#[inline]
pub(crate) fn shared_weight(tf_a: u32, tf_b: u32, idf: f64, norm_a: f64, norm_b: f64) -> f64 {
    let (x, y) = (tf_a as f64 * idf, tf_b as f64 * idf);
    if x > 0.0 && y > 0.0 {
        (x / norm_a) * (y / norm_b)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_ref_cosine_is_the_vectors_to_the_bit() {
        let words = ["cat", "dog", "emu", "gnu", "owl", "yak", "ant", "bee"];
        let mut x = 7u64;
        let mut text = || -> Vec<&str> {
            (0..60)
                .map(|_| {
                    x = pocketdex::hash::fmix64(x);
                    words[(x % 8) as usize]
                })
                .collect()
        };
        for _ in 0..20 {
            let (a, b) = (
                TermVector::from_terms(&text()),
                TermVector::from_terms(&text()),
            );
            let parts =
                |v: &TermVector| -> (Vec<u64>, Vec<u32>) { v.terms().iter().copied().unzip() };
            let ((ha, ca), (hb, cb)) = (parts(&a), parts(&b));
            let ra = TermsRef::new(&ha, &ca, a.norm());
            let rb = TermsRef::new(&hb, &cb, b.norm());
            assert_eq!(ra.cosine(&rb).to_bits(), a.cosine(&b).to_bits());
        }
    }

    #[test]
    fn cosine_known_answers() {
        let a = TermVector::from_terms(&["cat", "cat", "dog"]);
        let b = TermVector::from_terms(&["cat", "dog", "dog"]);
        // (2,1)·(1,2) / (√5 · √5) = 4/5
        assert!((a.cosine(&b) - 0.8).abs() < 1e-12);
        assert!((a.cosine(&a) - 1.0).abs() < 1e-12);
        assert_eq!(a.cosine(&TermVector::default()), 0.0);
    }

    #[test]
    fn tfidf_known_answers() {
        let a = TermVector::from_terms(&["cat", "dog"]);
        let b = TermVector::from_terms(&["cat", "eel"]);
        let c = TermVector::from_terms(&["fox"]);
        let df = DocFreq::new([&a, &b, &c], 3);
        // cat: idf ln(3/2); dog, eel: ln 3. cos = ln(3/2)² / (ln(3/2)² + ln(3)²)
        let (l15, l3) = (1.5f64.ln(), 3f64.ln());
        let want = l15 * l15 / (l15 * l15 + l3 * l3);
        assert!((dot(&df.weights(&a), &df.weights(&b)) - want).abs() < 1e-12);
        assert_eq!(dot(&df.weights(&a), &df.weights(&c)), 0.0);
        // The same measure from counts, as the evaluation's ground truth computes it.
        let idf = |h: u64| df.idf(h);
        let (na, nb) = (tfidf_norm(a.terms(), idf), tfidf_norm(b.terms(), idf));
        assert!((tfidf_cosine(a.terms(), b.terms(), idf, na, nb) - want).abs() < 1e-12);
        assert_eq!(tfidf_cosine(a.terms(), c.terms(), idf, na, 0.0), 0.0);
    }

    /// Counted a chunk at a time (more than one chunk here), in order or in parallel, document
    /// frequencies are those of counting every term at once; the cosine made from two term
    /// vectors and their norms is the dot of their weights to the last bit.
    #[test]
    fn document_frequencies_in_chunks_and_cosines_from_norms() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let docs = DF_CHUNK + DF_CHUNK / 2 + 3;
        let vectors: Vec<TermVector> = (0..docs)
            .map(|_| {
                let len = next(4);
                TermVector::from_counts((0..len).map(|_| (next(500), 1 + next(3) as u32)))
            })
            .collect();
        let mut all: Vec<u64> = vectors
            .iter()
            .flat_map(|v| v.terms.iter().map(|t| t.0))
            .collect();
        all.sort_unstable();
        let want = add_up_runs(all.into_iter().map(|h| (h, 1)));
        let df = DocFreq::new(&vectors, docs);
        assert_eq!((df.df.as_slice(), df.docs), (want.as_slice(), docs));
        let par = DocFreq::from_docs(docs, |d| vectors[d].terms.iter().map(|t| t.0).collect());
        assert_eq!((par.df, par.docs), (df.df.clone(), df.docs));
        let mut shared = 0;
        for a in &vectors[..300] {
            for b in &vectors[..300] {
                let dot = dot(&df.weights(a), &df.weights(b));
                let cos = df.cosine(a, df.norm(a), b, df.norm(b));
                assert_eq!(cos.to_bits(), dot.to_bits(), "{a:?} {b:?}");
                shared += (dot > 0.0) as usize;
            }
        }
        assert!(shared > 500, "{shared} pairs share a term");
    }

    #[test]
    fn counts_of_keys_and_of_pairs_agree() {
        let words = ["b", "a", "b", "c", "b"];
        let by_pairs = TermVector::from_counts(words.iter().map(|w| (word_hash(w), 1)));
        assert_eq!(TermVector::from_terms(&words), by_pairs);
        assert_eq!(term_counts(["b", "a", "b"]), [("a", 1), ("b", 2)]);
        assert!(term_counts::<u32>([]).is_empty());
        assert_eq!(idf(4, 0), 0.0);
        assert_eq!(idf(4, 4), 0.0);
        assert!((norm([3.0, 4.0]) - 5.0).abs() < 1e-15);
    }
}
