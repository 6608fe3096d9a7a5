//! The ground truth: every pair of documents whose exact tf-idf cosine reaches a threshold, with
//! the Jaccard of their word 3-shingles, and its TSV form (that of `scripts/oracle/truth.py`).
//!
//! The measures are the methods crate's ([`tfidf_cosine`], [`shingle_set`], [`jaccard`]);
//! this module only finds the candidate pairs without looking at all n² of them (All-Pairs,
//! Bayardo et al. 2007; see the crate documentation).

use crate::TermDocs;
use pocketdex_methods::cosine::{self, term_counts, tfidf_cosine, tfidf_norm};
use pocketdex_methods::shingles::{jaccard, shingle_set};
use rayon::prelude::*;

/// A pair of documents with their exact similarities; `a < b` are document numbers.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TruthPair {
    /// The lower document number.
    pub a: u32,
    /// The higher document number.
    pub b: u32,
    /// Cosine similarity of the tf-idf vectors of content terms.
    pub cosine: f32,
    /// Jaccard similarity of the sets of word 3-shingles of content terms.
    pub jaccard3: f32,
}

/// Every pair of documents with cosine ≥ `min` (see the crate documentation), sorted by
/// `(a, b)`.
pub fn truth(docs: &TermDocs, min: f32) -> Vec<TruthPair> {
    truth_with_progress(docs, min, &|_| {})
}

/// [`truth`], calling `progress(k)` as k more documents have been compared with all others.
pub fn truth_with_progress(
    docs: &TermDocs,
    min: f32,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<TruthPair> {
    let n = docs.len();
    let vocab = docs.vocab_len();
    // Sorted (term, count) per document.
    let tf: Vec<Vec<(u32, u32)>> = (0..n)
        .into_par_iter()
        .map(|d| term_counts(docs.seq(d).iter().copied()))
        .collect();
    let mut df = vec![0u32; vocab];
    for d in &tf {
        for &(t, _) in d {
            df[t as usize] += 1;
        }
    }
    let idf: Vec<f64> = df.iter().map(|&c| cosine::idf(n, c)).collect();
    let idf_of = |t: u32| idf[t as usize];
    let norm: Vec<f64> = tf.par_iter().map(|d| tfidf_norm(d, idf_of)).collect();
    let min = min as f64;
    // Float slack for the pruning bounds; the kept pairs are decided on the exact f64 cosine.
    const SLACK: f64 = 1e-3;
    let bound = (min - SLACK).max(0.0);
    // Normalised weights per document (f32: they only choose candidates), the terms most
    // common in the collection first.
    let weights: Vec<Vec<(u32, f32)>> = (0..n)
        .into_par_iter()
        .map(|d| {
            if norm[d] == 0.0 {
                return Vec::new();
            }
            let mut w: Vec<(u32, f32)> = tf[d]
                .iter()
                .filter(|&&(t, _)| idf[t as usize] > 0.0)
                .map(|&(t, c)| (t, (c as f64 * idf[t as usize] / norm[d]) as f32))
                .collect();
            w.sort_unstable_by_key(|&(t, _)| (std::cmp::Reverse(df[t as usize]), t));
            w
        })
        .collect();
    // Postings hold each document's terms after its leading run of norm < bound (its prefix).
    // For any unit vector x, x·prefix ≤ |prefix| < bound, so a pair with cosine ≥ min shares
    // at least one posted term of the higher-numbered document.
    let mut postings: Vec<Vec<(u32, f32)>> = vec![Vec::new(); vocab];
    let mut prefix_norm = vec![0f32; n];
    for (d, w) in weights.iter().enumerate() {
        let (mut sq, mut split) = (0.0f64, 0);
        for &(_, x) in w {
            let next = sq + (x as f64).powi(2);
            if next.sqrt() >= bound {
                break;
            }
            sq = next;
            split += 1;
        }
        prefix_norm[d] = sq.sqrt() as f32;
        for &(t, x) in &w[split..] {
            postings[t as usize].push((d as u32, x));
        }
    }
    let pairs: Vec<(u32, u32, f32)> = (0..n)
        .into_par_iter()
        .with_min_len(8)
        .map_init(
            || (vec![0f32; n], Vec::<u32>::new()),
            |(acc, touched), a| {
                for &(t, wa) in &weights[a] {
                    let p = &postings[t as usize];
                    let from = p.partition_point(|&(d, _)| d as usize <= a);
                    for &(b, wb) in &p[from..] {
                        let s = &mut acc[b as usize];
                        if *s == 0.0 {
                            touched.push(b);
                        }
                        *s += wa * wb;
                    }
                }
                let mut out = Vec::new();
                for &b in touched.iter() {
                    let b = b as usize;
                    let partial = std::mem::take(&mut acc[b]);
                    if (partial + prefix_norm[b]) as f64 >= min - SLACK {
                        let c = tfidf_cosine(&tf[a], &tf[b], idf_of, norm[a], norm[b]);
                        if c >= min - 1e-9 {
                            out.push((a as u32, b as u32, c as f32));
                        }
                    }
                }
                touched.clear();
                progress(1);
                out
            },
        )
        .flatten_iter()
        .collect();
    // Jaccard of 3-shingles for the documents in a pair.
    let mut needed = vec![false; n];
    for &(a, b, _) in &pairs {
        needed[a as usize] = true;
        needed[b as usize] = true;
    }
    let sh: Vec<Vec<u64>> = (0..n)
        .into_par_iter()
        .map(|d| {
            if needed[d] {
                shingles3(docs.seq(d), vocab)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut out: Vec<TruthPair> = pairs
        .par_iter()
        .map(|&(a, b, cosine)| TruthPair {
            a,
            b,
            cosine,
            jaccard3: jaccard(&sh[a as usize], &sh[b as usize]) as f32,
        })
        .collect();
    out.par_sort_unstable_by_key(|p| (p.a, p.b));
    out
}

/// Sorted distinct word 3-shingles of a term sequence, as 64-bit keys: the three term numbers
/// packed (exact while the vocabulary has fewer than 2²¹ − 1 terms), a 64-bit hash of them
/// beyond.
fn shingles3(seq: &[u32], vocab: usize) -> Vec<u64> {
    let packed = vocab < (1 << 21) - 1;
    shingle_set(seq, 3, |w: &[u32]| {
        // Term t becomes t + 1 so that 0 pads the one shingle of a document of one or two terms.
        let g = |i: usize| w.get(i).map_or(0, |&t| t as u64 + 1);
        let (x, y, z) = (g(0), g(1), g(2));
        if packed {
            (x << 42) | (y << 21) | z
        } else {
            let mut b = [0u8; 24];
            b[..8].copy_from_slice(&x.to_le_bytes());
            b[8..16].copy_from_slice(&y.to_le_bytes());
            b[16..].copy_from_slice(&z.to_le_bytes());
            pocketdex::hash::h64(&b, 0)
        }
    })
}

/// Writes truth pairs as TSV in the format of `scripts/oracle/truth.py`: a header
/// `a b cosine jaccard3`, then one row per pair with the ids in code-point order (escaped:
/// `\t`, `\n`, `\r`, `\\`), sorted by ids.
pub fn write_truth_tsv(
    mut out: impl std::io::Write,
    ids: &[String],
    pairs: &[TruthPair],
) -> std::io::Result<()> {
    let mut rows: Vec<(&str, &str, f32, f32)> = pairs
        .iter()
        .map(|p| {
            let (a, b) = (ids[p.a as usize].as_str(), ids[p.b as usize].as_str());
            let (a, b) = if b < a { (b, a) } else { (a, b) };
            (a, b, p.cosine, p.jaccard3)
        })
        .collect();
    rows.sort_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    writeln!(out, "a\tb\tcosine\tjaccard3")?;
    for (a, b, c, j) in rows {
        writeln!(out, "{}\t{}\t{c:.6}\t{j:.6}", escape_id(a), escape_id(b))?;
    }
    Ok(())
}

/// An id as the oracle writes it: backslash, tab, newline and carriage return escaped.
fn escape_id(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(['\\', '\t', '\n', '\r']) {
        s.replace('\\', "\\\\")
            .replace('\t', "\\t")
            .replace('\n', "\\n")
            .replace('\r', "\\r")
            .into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shingle_keys_pad_short_documents_and_pack_three_terms() {
        assert!(shingles3(&[], 10).is_empty());
        assert_eq!(shingles3(&[4], 10), [5 << 42]);
        assert_eq!(shingles3(&[4, 0], 10), [(5 << 42) | (1 << 21)]);
        // "a b a b": two distinct windows.
        assert_eq!(shingles3(&[0, 1, 0, 1], 10).len(), 2);
        // Past 2²¹ − 1 terms the keys are hashes of the same triples.
        let wide = shingles3(&[0, 1, 0, 1], 1 << 21);
        assert_eq!(wide.len(), 2);
        assert_ne!(wide, shingles3(&[0, 1, 0, 1], 10));
    }

    #[test]
    fn ids_are_escaped_as_the_oracle_does() {
        assert_eq!(escape_id("a\tb\\c\nd\re"), "a\\tb\\\\c\\nd\\re");
        assert!(matches!(escape_id("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
