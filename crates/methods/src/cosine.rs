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

    fn from_sorted_counts(terms: Vec<(u64, u32)>) -> Self {
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

/// Document frequencies of a collection's terms, for tf-idf weights.
#[derive(Clone, Debug)]
pub struct DocFreq {
    /// (term hash, number of documents holding it), sorted by hash.
    df: Vec<(u64, u32)>,
    docs: usize,
}

impl DocFreq {
    /// Counts in how many of the vectors each term occurs; `docs` is N, the collection size
    /// (documents without any content word count in N, as in the oracle).
    pub fn new<'a>(vectors: impl IntoIterator<Item = &'a TermVector>, docs: usize) -> Self {
        let mut count = 0;
        let mut all: Vec<u64> = vectors
            .into_iter()
            .inspect(|_| count += 1)
            .flat_map(|v| v.terms.iter().map(|&(h, _)| h))
            .collect();
        all.par_sort_unstable();
        let mut df: Vec<(u64, u32)> = Vec::new();
        for h in all {
            match df.last_mut() {
                Some((last, c)) if *last == h => *c += 1,
                _ => df.push((h, 1)),
            }
        }
        DocFreq {
            df,
            docs: docs.max(count),
        }
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

    /// The L2-normalised tf-idf vector of a document: weight tf · ln(N/df). A term that is in
    /// every document weighs 0 and is left out. The [`dot`] of two of them is their
    /// [`tfidf_cosine`] up to float rounding.
    pub fn weights(&self, v: &TermVector) -> Vec<(u64, f64)> {
        let mut w: Vec<(u64, f64)> = v
            .terms
            .iter()
            .filter_map(|&(h, tf)| {
                let x = tf as f64 * self.idf(h);
                (x > 0.0).then_some((h, x))
            })
            .collect();
        // The weights left out are 0: this is the document's `tfidf_norm`.
        let norm = norm(w.iter().map(|&(_, x)| x));
        if norm > 0.0 {
            for (_, x) in &mut w {
                *x /= norm;
            }
        }
        w
    }
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
    let (mut i, mut j, mut s) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += mul(a[i].0, a[i].1, b[j].1);
                i += 1;
                j += 1;
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
