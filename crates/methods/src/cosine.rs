//! Term-frequency vectors of content words and their exact cosines: plain term frequencies (the
//! vector simhash sketches) and tf-idf over a collection (the measure of the evaluation oracle,
//! `scripts/oracle/truth.py`: tf = raw count, idf = ln(N/df), rows L2-normalised).

use super::shingles::word_hash;
use rayon::prelude::*;

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
        Self::from_counts(terms.iter().map(|t| (word_hash(t.as_ref()), 1)))
    }

    /// A vector from (term hash, count) pairs in any order; equal hashes are added up.
    pub fn from_counts(counts: impl IntoIterator<Item = (u64, u32)>) -> Self {
        let mut v: Vec<(u64, u32)> = counts.into_iter().collect();
        v.sort_unstable();
        let mut out: Vec<(u64, u32)> = Vec::with_capacity(v.len());
        for (h, c) in v {
            match out.last_mut() {
                Some((last, n)) if *last == h => *n += c,
                _ => out.push((h, c)),
            }
        }
        let norm = out
            .iter()
            .map(|&(_, c)| (c as f64) * (c as f64))
            .sum::<f64>()
            .sqrt();
        TermVector { terms: out, norm }
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
        let dot = merge_dot(&self.terms, &other.terms, |a, b| a as f64 * b as f64);
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

    /// The L2-normalised tf-idf vector of a document: weight tf · ln(N/df). A term that is in
    /// every document weighs 0 and is left out.
    pub fn weights(&self, v: &TermVector) -> Vec<(u64, f64)> {
        let n = self.docs as f64;
        let mut w: Vec<(u64, f64)> = v
            .terms
            .iter()
            .filter_map(|&(h, tf)| {
                let df = self
                    .df
                    .binary_search_by_key(&h, |&(k, _)| k)
                    .map(|i| self.df[i].1)
                    .unwrap_or(1);
                let x = tf as f64 * (n / df as f64).ln();
                (x > 0.0).then_some((h, x))
            })
            .collect();
        let norm = w.iter().map(|&(_, x)| x * x).sum::<f64>().sqrt();
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
    merge_dot(a, b, |x, y| x * y).min(1.0)
}

fn merge_dot<T: Copy>(a: &[(u64, T)], b: &[(u64, T)], mul: impl Fn(T, T) -> f64) -> f64 {
    let (mut i, mut j, mut s) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += mul(a[i].1, b[j].1);
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
    }
}
