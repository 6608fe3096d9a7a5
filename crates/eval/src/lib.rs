//! The evaluation harness: exact similarities, recall and precision per similarity bucket.
//!
//! Three steps, each usable on its own (the `pocketdex eval` command runs them in order):
//!
//! 1. **Ground truth** ([`truth`]): every pair of documents whose tf-idf cosine is at least
//!    `min`, computed exactly. A document is its content terms ([`Analyzer::terms`]: markup
//!    removed by the corpus reader, stopwords and tokens without a letter dropped); tf is the raw
//!    count, idf = ln(N/df), vectors are L2-normalised (a term in every document weighs 0). For
//!    the pairs kept, also the Jaccard similarity of the sets of word 3-shingles over the
//!    content-term sequence (a document with one or two terms has one shingle of them).
//!    Candidate pairs come from an inverted index, never from all n² pairs: each document
//!    accumulates dot products with the higher-numbered documents through postings. To keep the
//!    postings of very common terms short and still lose nothing, each document leaves its most
//!    common terms out of the postings as long as their part of its vector has a norm below
//!    `min` (All-Pairs, Bayardo et al. 2007): a pair whose cosine reaches `min` then shares at
//!    least one indexed term, and every candidate's cosine is recomputed exactly (f64).
//! 2. **Queries** ([`query_all`]): every document is a query; hits are mapped to corpus
//!    document numbers ([`DocMap`]).
//! 3. **Metrics** ([`Report::compute`]): recall and precision per similarity bucket of width
//!    0.05 from `min` (rounded down to a multiple of 0.05) to 1 (the last bucket includes 1.0),
//!    as in Figure 1 of "Wikipedia in the Pocket" (Potthast, SIGIR 2007).
//!
//! Definitions:
//! - A **truth pair** is an unordered pair of different documents (with different ids) with
//!   cosine ≥ `min`. It is **found** when a's hits contain b or b's hits contain a ("both": in
//!   both directions). Pairs with a document missing from the index are left out of recall.
//! - A **hit** is a (query, document) answer other than the query itself; hits are counted per
//!   direction. A hit whose pair is not a truth pair has a cosine below `min`.
//! - **precision(s)** = among hits with score ≥ s, the share whose true cosine is ≥ s.
//! - **long** pairs: both documents have at least `long_min_terms` content terms (the index's
//!   fuzzy-path threshold); **short** pairs: the others (the short-document path).
//! - **self-first**: the share of queries (documents in the index) whose first hit is the query
//!   document, or an exact duplicate of it (cosine 1) at the same score as the query document.
//! - **estimator error**: `score − cosine` over the hits that are truth pairs.
//!
//! Columns of [`Report::tsv`], one row per bucket `[lo, hi)`:
//!
//! | column | meaning |
//! |---|---|
//! | `lo`, `hi` | the bucket of true cosine (the last one includes `hi` = 1) |
//! | `pairs`, `found`, `recall` | truth pairs in the bucket, found in either direction, share |
//! | `found_both`, `recall_both` | found in both directions, share |
//! | `long_pairs`, `long_recall` | the same for pairs of two long documents |
//! | `short_pairs`, `short_recall` | the same for the other pairs |
//! | `mean_jaccard3` | mean Jaccard of word 3-shingles of the bucket's pairs |
//! | `hits`, `mean_score` | hits whose true cosine is in the bucket, their mean score |
//! | `bias`, `rmse` | mean and root mean square of `score − cosine` over those hits |
//! | `score_ge_lo`, `correct`, `precision` | hits with score ≥ `lo`; of those, with true cosine ≥ `lo`; precision(`lo`) |
//!
//! Missing values (an empty bucket) are `NA`.
//!
//! Beside it: generated collections and edited copies ([`synth`]) and wordfreq's word lists
//! ([`wordfreq`]), the data sources of the benchmarks and of the reference tables.

pub mod synth;
pub mod wordfreq;

use pocketdex::error::{Error, Result};
use pocketdex::index::Index;
use pocketdex::query::QueryOptions;
use pocketdex::text::Analyzer;
use rayon::prelude::*;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Documents as sequences of interned content terms, in document order.
#[derive(Clone, Debug, Default)]
pub struct TermDocs {
    seqs: Vec<Vec<u32>>,
    vocab: HashMap<String, u32>,
}

impl TermDocs {
    /// No documents.
    pub fn new() -> Self {
        Self::default()
    }

    /// The content terms of every text, with one analyzer (tokenized in parallel).
    pub fn from_texts<S: AsRef<str> + Sync>(analyzer: &Analyzer, texts: &[S]) -> Self {
        let terms: Vec<Vec<String>> = texts
            .par_iter()
            .map(|t| analyzer.terms(t.as_ref()))
            .collect();
        let mut docs = Self::new();
        for t in &terms {
            docs.push(t);
        }
        docs
    }

    /// Adds a document given as its content terms in order; returns its number.
    pub fn push<S: AsRef<str>>(&mut self, terms: &[S]) -> u32 {
        let seq = terms
            .iter()
            .map(|t| {
                let t = t.as_ref();
                match self.vocab.get(t) {
                    Some(&id) => id,
                    None => {
                        let id = self.vocab.len() as u32;
                        self.vocab.insert(t.to_owned(), id);
                        id
                    }
                }
            })
            .collect();
        self.seqs.push(seq);
        (self.seqs.len() - 1) as u32
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.seqs.len()
    }

    /// True when there is no document.
    pub fn is_empty(&self) -> bool {
        self.seqs.is_empty()
    }

    /// Number of distinct terms.
    pub fn vocab_len(&self) -> usize {
        self.vocab.len()
    }

    /// The term numbers of document `doc`, in order.
    pub fn seq(&self, doc: usize) -> &[u32] {
        &self.seqs[doc]
    }

    /// Number of content terms (occurrences) of document `doc`.
    pub fn term_count(&self, doc: usize) -> usize {
        self.seqs[doc].len()
    }
}

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

/// Every pair of documents with cosine ≥ `min` (see the module documentation), sorted by
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
    let tf: Vec<Vec<(u32, u32)>> = docs.seqs.par_iter().map(|s| term_counts(s)).collect();
    let mut df = vec![0u32; vocab];
    for d in &tf {
        for &(t, _) in d {
            df[t as usize] += 1;
        }
    }
    let idf: Vec<f64> = df
        .iter()
        .map(|&c| {
            if c == 0 {
                0.0
            } else {
                (n as f64 / c as f64).ln()
            }
        })
        .collect();
    let norm: Vec<f64> = tf
        .par_iter()
        .map(|d| {
            d.iter()
                .map(|&(t, c)| (c as f64 * idf[t as usize]).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    let min = min as f64;
    // Float slack for the pruning bounds; the kept pairs are decided on the exact f64 cosine.
    const SLACK: f64 = 1e-3;
    let bound = (min - SLACK).max(0.0);
    // Normalised weights per document, the terms most common in the collection first.
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
                        let c = dot_counts(&tf[a], &tf[b], &idf) / (norm[a] * norm[b]);
                        if c >= min - 1e-9 {
                            out.push((a as u32, b as u32, c.min(1.0) as f32));
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
                shingles(&docs.seqs[d], vocab)
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
            jaccard3: pocketdex_methods::shingles::jaccard(&sh[a as usize], &sh[b as usize]) as f32,
        })
        .collect();
    out.par_sort_unstable_by_key(|p| (p.a, p.b));
    out
}

/// Sorted (term, count) of a term sequence.
fn term_counts(seq: &[u32]) -> Vec<(u32, u32)> {
    let mut s = seq.to_vec();
    s.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for t in s {
        match out.last_mut() {
            Some((last, c)) if *last == t => *c += 1,
            _ => out.push((t, 1)),
        }
    }
    out
}

/// Σ tf_a · tf_b · idf² over the common terms of two sorted (term, count) lists.
fn dot_counts(a: &[(u32, u32)], b: &[(u32, u32)], idf: &[f64]) -> f64 {
    let (mut i, mut j, mut s) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let w = idf[a[i].0 as usize];
                s += a[i].1 as f64 * b[j].1 as f64 * w * w;
                i += 1;
                j += 1;
            }
        }
    }
    s
}

/// Sorted distinct word 3-shingles of a term sequence, as 64-bit keys (exact while the
/// vocabulary has fewer than 2²¹ − 1 terms, a 64-bit hash beyond).
fn shingles(seq: &[u32], vocab: usize) -> Vec<u64> {
    let key = |x: u64, y: u64, z: u64| {
        if vocab < (1 << 21) - 1 {
            (x << 42) | (y << 21) | z
        } else {
            let mut b = [0u8; 24];
            b[..8].copy_from_slice(&x.to_le_bytes());
            b[8..16].copy_from_slice(&y.to_le_bytes());
            b[16..].copy_from_slice(&z.to_le_bytes());
            pocketdex::hash::h64(&b, 0)
        }
    };
    // Term t becomes t + 1 so that 0 pads a document of one or two terms.
    let mut v: Vec<u64> = match seq.len() {
        0 => return Vec::new(),
        1 | 2 => {
            let g = |i: usize| seq.get(i).map_or(0, |&t| t as u64 + 1);
            vec![key(g(0), g(1), g(2))]
        }
        _ => seq
            .windows(3)
            .map(|w| key(w[0] as u64 + 1, w[1] as u64 + 1, w[2] as u64 + 1))
            .collect(),
    };
    v.sort_unstable();
    v.dedup();
    v
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

/// Which corpus document each index document is.
#[derive(Clone, Debug)]
pub struct DocMap {
    /// Per index document, its corpus document number (`None`: not in the corpus).
    pub corpus_of: Vec<Option<u32>>,
    /// Per corpus document, true when a document of the same id is in the index.
    pub in_index: Vec<bool>,
    /// Index documents whose id is not in the corpus.
    pub index_docs_not_in_corpus: usize,
    /// Corpus documents whose id is not in the index.
    pub corpus_docs_not_in_index: usize,
}

impl DocMap {
    /// Index document i is corpus document i (an index built from the corpus, in order).
    pub fn identity(n: usize) -> Self {
        DocMap {
            corpus_of: (0..n as u32).map(Some).collect(),
            in_index: vec![true; n],
            index_docs_not_in_corpus: 0,
            corpus_docs_not_in_index: 0,
        }
    }

    /// Maps by name: index document i is the first corpus document whose id is its name.
    pub fn by_name<D: AsRef<[u8]>>(index: &Index<D>, ids: &[String]) -> Self {
        let mut first: HashMap<&str, u32> = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            first.entry(id.as_str()).or_insert(i as u32);
        }
        let mut in_index_first = vec![false; ids.len()];
        let corpus_of: Vec<Option<u32>> = (0..index.doc_count())
            .map(|d| {
                let c = index
                    .name(d)
                    .and_then(|name| first.get(name.as_ref()).copied());
                if let Some(c) = c {
                    in_index_first[c as usize] = true;
                }
                c
            })
            .collect();
        let in_index: Vec<bool> = ids
            .iter()
            .map(|id| in_index_first[first[id.as_str()] as usize])
            .collect();
        DocMap {
            index_docs_not_in_corpus: corpus_of.iter().filter(|c| c.is_none()).count(),
            corpus_docs_not_in_index: in_index.iter().filter(|&&x| !x).count(),
            corpus_of,
            in_index,
        }
    }
}

/// One hit of a query, as a corpus document.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnswerHit {
    /// Corpus document number.
    pub doc: u32,
    /// Estimated similarity.
    pub score: f32,
    /// Code groups that collided.
    pub codes: u16,
}

/// What one query returned, in corpus document numbers.
#[derive(Clone, Debug, Default)]
pub struct Answer {
    /// Hits best first. Hits on index documents that are not in the corpus are left out.
    pub hits: Vec<AnswerHit>,
    /// Distinct documents the codes found before the threshold and ranking.
    pub candidates: usize,
    /// Hits left out because their index document is not in the corpus.
    pub unmapped: usize,
}

/// Queries the index with every text (in parallel); `progress(k)` learns of k more queries.
pub fn query_all<D, S>(
    index: &Index<D>,
    texts: &[S],
    map: &DocMap,
    opts: &QueryOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Answer>
where
    D: AsRef<[u8]> + Sync,
    S: AsRef<str> + Sync,
{
    texts
        .par_iter()
        .with_min_len(4)
        .map(|text| {
            let r = index.query(text.as_ref(), opts);
            let mut answer = Answer {
                hits: Vec::with_capacity(r.hits.len()),
                candidates: r.candidates,
                unmapped: 0,
            };
            for h in &r.hits {
                match map.corpus_of.get(h.doc as usize).copied().flatten() {
                    Some(doc) => answer.hits.push(AnswerHit {
                        doc,
                        score: h.score,
                        codes: h.codes,
                    }),
                    None => answer.unmapped += 1,
                }
            }
            progress(1);
            answer
        })
        .collect()
}

/// What is measured and how the index is queried.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Settings {
    /// Lowest cosine of a truth pair.
    pub min: f32,
    /// Query threshold on the estimated similarity (0: every candidate counts).
    pub threshold: f32,
    /// Hits kept per query (`None`: all).
    pub top: Option<usize>,
    /// Probes per fuzzy code (`None`: the index's default).
    pub probes: Option<u8>,
    /// Queries look up the similar path too (`query --similar`).
    pub similar: bool,
    /// Lookups per similar band (`None`: the index's default).
    pub similar_probes: Option<u8>,
    /// Documents with at least this many content terms are "long" (the index's fuzzy path).
    pub long_min_terms: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min: 0.5,
            threshold: 0.0,
            top: None,
            probes: None,
            similar: false,
            similar_probes: None,
            long_min_terms: 30,
        }
    }
}

impl Settings {
    /// The query options these settings ask for.
    pub fn query_options(&self) -> QueryOptions {
        QueryOptions {
            top: self.top.unwrap_or(usize::MAX),
            threshold: self.threshold,
            probes: self.probes,
            similar: self.similar,
            similar_probes: self.similar_probes,
        }
    }
}

/// A count out of a total.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Ratio {
    /// How many.
    pub n: u64,
    /// Out of how many.
    pub of: u64,
    /// n / of (`None` when `of` is 0).
    pub rate: Option<f64>,
}

impl Ratio {
    fn new(n: u64, of: u64) -> Self {
        Ratio {
            n,
            of,
            rate: (of > 0).then(|| n as f64 / of as f64),
        }
    }
}

/// One similarity bucket: a row of [`Report::tsv`] (see the module documentation).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Bucket {
    /// Lower bound of the true cosine.
    pub lo: f64,
    /// Upper bound (excluded, except 1 in the last bucket).
    pub hi: f64,
    /// Truth pairs in the bucket found in either direction, of all truth pairs in it.
    pub recall: Ratio,
    /// Found in both directions.
    pub recall_both: Ratio,
    /// Pairs of two long documents.
    pub recall_long: Ratio,
    /// Pairs with a short document.
    pub recall_short: Ratio,
    /// Mean Jaccard of word 3-shingles of the truth pairs in the bucket.
    pub mean_jaccard3: Option<f64>,
    /// Hits whose true cosine is in the bucket.
    pub hits: u64,
    /// Their mean score.
    pub mean_score: Option<f64>,
    /// Mean of score − cosine over those hits.
    pub bias: Option<f64>,
    /// Root mean square of score − cosine over those hits.
    pub rmse: Option<f64>,
    /// precision(lo): hits with score ≥ lo whose true cosine is ≥ lo (`None` below `min`).
    pub precision: Option<Ratio>,
}

/// Recall over a range of true cosine, for all pairs and split by document length.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RecallRange {
    /// A name such as `cos>=0.90` or `0.80<=cos<0.90`.
    pub name: String,
    /// Lowest cosine (included).
    pub lo: f64,
    /// Highest cosine (excluded, unless 1).
    pub hi: f64,
    /// All pairs.
    pub all: Ratio,
    /// Pairs of two long documents.
    pub long: Ratio,
    /// Pairs with a short document.
    pub short: Ratio,
}

/// Precision of the hits at or above one score.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PrecisionAt {
    /// The score threshold.
    pub score: f64,
    /// Hits with true cosine ≥ 0.9, of the hits with score ≥ `score`.
    pub cos_0_90: Ratio,
    /// Hits with true cosine ≥ 0.8.
    pub cos_0_80: Ratio,
}

/// How far the index's similarity estimate is from the true cosine.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Estimator {
    /// Hits that are truth pairs (the sample).
    pub hits: u64,
    /// Mean of score − cosine.
    pub bias: Option<f64>,
    /// Root mean square of score − cosine.
    pub rmse: Option<f64>,
    /// Mean of |score − cosine|.
    pub mae: Option<f64>,
}

/// Counts of the query step.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct QueryStats {
    /// Queries asked (every corpus document).
    pub queries: u64,
    /// Queries with at least one hit (the query document itself counts).
    pub with_hits: u64,
    /// Hits other than the query document itself.
    pub hits: u64,
    /// Of those, hits on truth pairs.
    pub hits_on_truth_pairs: u64,
    /// Hits on index documents that are not in the corpus (left out).
    pub unmapped_hits: u64,
    /// Mean candidates (documents the codes found) per query.
    pub mean_candidates: f64,
    /// Most candidates of one query.
    pub max_candidates: u64,
}

/// The headline numbers.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    /// Recall of pairs with cosine ≥ 0.95.
    pub recall_cos_0_95: Option<f64>,
    /// Recall of pairs with cosine ≥ 0.9.
    pub recall_cos_0_90: Option<f64>,
    /// Recall of pairs with 0.8 ≤ cosine < 0.9.
    pub recall_cos_0_80_0_90: Option<f64>,
    /// Recall of all truth pairs.
    pub recall_all: Option<f64>,
    /// Recall of pairs with cosine ≥ 0.9 and a short document.
    pub recall_short_cos_0_90: Option<f64>,
    /// Precision of hits with score ≥ 0.9: true cosine ≥ 0.9.
    pub precision_score_0_90_cos_0_90: Option<f64>,
    /// Precision of hits with score ≥ 0.9: true cosine ≥ 0.8.
    pub precision_score_0_90_cos_0_80: Option<f64>,
    /// Recall of pairs with 0.7 ≤ cosine < 0.9 (high-similarity search).
    pub recall_cos_0_70_0_90: Option<f64>,
    /// Recall of pairs with 0.6 ≤ cosine < 0.7 (high-similarity search).
    pub recall_cos_0_60_0_70: Option<f64>,
    /// Precision of hits with score ≥ 0.7: true cosine ≥ 0.6 (high-similarity search).
    pub precision_score_0_70_cos_0_60: Option<f64>,
    /// Mean of score − cosine.
    pub estimator_bias: Option<f64>,
    /// Root mean square of score − cosine.
    pub estimator_rmse: Option<f64>,
    /// Share of queries whose first hit is themselves (or an exact duplicate at equal score).
    pub self_first: Option<f64>,
}

/// Everything measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// What was measured and how.
    pub settings: Settings,
    /// Corpus documents.
    pub documents: usize,
    /// Truth pairs (cosine ≥ min, different ids).
    pub truth_pairs: usize,
    /// Pairs of two documents with the same id, left out.
    pub same_id_pairs: usize,
    /// Truth pairs with a document missing from the index, left out of recall.
    pub pairs_not_in_index: usize,
    /// The headline numbers.
    pub summary: Summary,
    /// Recall and precision per similarity bucket.
    pub buckets: Vec<Bucket>,
    /// Recall over wider ranges of cosine.
    pub recall: Vec<RecallRange>,
    /// Precision of the hits with score ≥ 0.9.
    pub precision_score_0_90: PrecisionAt,
    /// Hits with score ≥ 0.7 whose true cosine is ≥ 0.6 (high-similarity search).
    pub precision_score_0_70_cos_0_60: Ratio,
    /// Queries whose first hit is the query document (or an exact duplicate at equal score).
    pub self_first: Ratio,
    /// Queries whose first hit is the query document or ranks equal to it (same score and code
    /// groups: the index cannot tell them apart, and `pocketdex query` puts the query's own
    /// document first among them).
    pub self_first_or_tie: Ratio,
    /// Queries whose hits include the query document.
    pub self_found: Ratio,
    /// Error of the similarity estimate.
    pub estimator: Estimator,
    /// Counts of the query step.
    pub queries: QueryStats,
}

#[derive(Default, Clone, Copy)]
struct Moments {
    n: u64,
    sum: f64,
    sq: f64,
    abs: f64,
    score: f64,
}

impl Moments {
    fn add(&mut self, err: f64, score: f64) {
        self.n += 1;
        self.sum += err;
        self.sq += err * err;
        self.abs += err.abs();
        self.score += score;
    }
    fn mean(&self, x: f64) -> Option<f64> {
        (self.n > 0).then(|| x / self.n as f64)
    }
}

impl Report {
    /// Measures the answers against the truth. `ids` and `docs` are the corpus (same order),
    /// `truth` from [`truth`], `answers` from [`query_all`] (one per corpus document).
    pub fn compute(
        ids: &[String],
        docs: &TermDocs,
        truth: &[TruthPair],
        answers: &[Answer],
        map: &DocMap,
        settings: &Settings,
    ) -> Report {
        assert_eq!(ids.len(), docs.len(), "one id per document");
        assert_eq!(ids.len(), answers.len(), "one answer per document");
        let same = |a: u32, b: u32| a == b || ids[a as usize] == ids[b as usize];
        let long = |d: u32| docs.term_count(d as usize) >= settings.long_min_terms as usize;
        let pairs: Vec<&TruthPair> = truth.iter().filter(|p| !same(p.a, p.b)).collect();
        let cosine: HashMap<(u32, u32), f32> =
            pairs.iter().map(|p| ((p.a, p.b), p.cosine)).collect();
        let cos_of = |a: u32, b: u32| cosine.get(&(a.min(b), a.max(b))).copied();

        // The bucket grid: multiples of 0.05 from `min` rounded down, to 1.
        let g0 = ((settings.min as f64 * 20.0 + 1e-6).floor() as i64).clamp(0, 19);
        let nb = (20 - g0) as usize;
        let lo_of = |k: usize| (g0 + k as i64) as f64 / 20.0;
        let bucket_of = |c: f32| -> Option<usize> {
            let k = ((c as f64) * 20.0 + 1e-7).floor() as i64 - g0;
            (k >= 0).then(|| (k as usize).min(nb - 1))
        };

        // Recall.
        let hit_sets: Vec<Vec<u32>> = answers
            .iter()
            .map(|a| {
                let mut v: Vec<u32> = a.hits.iter().map(|h| h.doc).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let finds = |q: u32, d: u32| hit_sets[q as usize].binary_search(&d).is_ok();
        // Per bucket: pairs, found, found both ways, long pairs, long found, short pairs, short found.
        let mut rec = vec![[0u64; 7]; nb];
        let mut jac = vec![0f64; nb];
        let ranges: Vec<(String, f64, f64)> = {
            let m = settings.min as f64;
            let mut r = vec![
                ("cos>=0.95".to_string(), 0.95, 1.0),
                ("cos>=0.90".to_string(), 0.9, 1.0),
                ("0.80<=cos<0.90".to_string(), 0.8, 0.9),
            ];
            if m < 0.8 {
                r.push((format!("{m:.2}<=cos<0.80"), m, 0.8));
            }
            // The ranges of high-similarity search (`query --similar`).
            for (lo, hi) in [(0.7, 0.9), (0.6, 0.7), (0.5, 0.6)] {
                if m <= lo {
                    r.push((format!("{lo:.2}<=cos<{hi:.2}"), lo, hi));
                }
            }
            r.push((format!("cos>={m:.2}"), m, 1.0));
            r
        };
        // Per range: pairs, found, long pairs, long found, short pairs, short found.
        let mut range_counts = vec![[0u64; 6]; ranges.len()];
        let mut pairs_not_in_index = 0;
        for p in &pairs {
            if !(map.in_index[p.a as usize] && map.in_index[p.b as usize]) {
                pairs_not_in_index += 1;
                continue;
            }
            let (ab, ba) = (finds(p.a, p.b), finds(p.b, p.a));
            let found = (ab || ba) as u64;
            let is_long = long(p.a) && long(p.b);
            if let Some(k) = bucket_of(p.cosine) {
                let r = &mut rec[k];
                r[0] += 1;
                r[1] += found;
                r[2] += (ab && ba) as u64;
                if is_long {
                    r[3] += 1;
                    r[4] += found;
                } else {
                    r[5] += 1;
                    r[6] += found;
                }
                jac[k] += p.jaccard3 as f64;
            }
            let c = p.cosine as f64;
            for (i, (_, lo, hi)) in ranges.iter().enumerate() {
                if c >= *lo - 1e-7 && (c < *hi - 1e-7 || *hi >= 1.0) {
                    let r = &mut range_counts[i];
                    r[0] += 1;
                    r[1] += found;
                    if is_long {
                        r[2] += 1;
                        r[3] += found;
                    } else {
                        r[4] += 1;
                        r[5] += found;
                    }
                }
            }
        }

        // Hits: precision, estimator error, self-first.
        let thresholds: Vec<f32> = (0..nb).map(|k| lo_of(k) as f32).collect();
        let mut prec = vec![(0u64, 0u64); nb];
        let mut by_bucket = vec![Moments::default(); nb];
        let mut all = Moments::default();
        let (mut p09, mut p09_09, mut p09_08) = (0u64, 0u64, 0u64);
        let (mut p07, mut p07_06) = (0u64, 0u64);
        let mut stats = QueryStats {
            queries: answers.len() as u64,
            ..QueryStats::default()
        };
        let (mut self_first, mut self_tied, mut self_found, mut asked) = (0u64, 0u64, 0u64, 0u64);
        let mut candidates = 0u64;
        for (q, answer) in answers.iter().enumerate() {
            let q = q as u32;
            candidates += answer.candidates as u64;
            stats.max_candidates = stats.max_candidates.max(answer.candidates as u64);
            stats.unmapped_hits += answer.unmapped as u64;
            stats.with_hits += (!answer.hits.is_empty()) as u64;
            if map.in_index[q as usize] {
                asked += 1;
                let own = answer.hits.iter().find(|h| same(q, h.doc));
                if let (Some(first), Some(own)) = (answer.hits.first(), own) {
                    let tie = own.score == first.score && own.codes == first.codes;
                    let dup = own.score == first.score
                        && cos_of(q, first.doc).is_some_and(|c| c >= 0.99999);
                    self_first += (same(q, first.doc) || dup) as u64;
                    self_tied += (same(q, first.doc) || tie) as u64;
                }
                self_found += own.is_some() as u64;
            }
            for &AnswerHit { doc: d, score, .. } in &answer.hits {
                if same(q, d) {
                    continue;
                }
                stats.hits += 1;
                let cos = cos_of(q, d);
                for (k, &s) in thresholds.iter().enumerate() {
                    if score >= s {
                        prec[k].0 += 1;
                        prec[k].1 += cos.is_some_and(|c| c >= s) as u64;
                    }
                }
                if score >= 0.7 {
                    p07 += 1;
                    p07_06 += cos.is_some_and(|c| c >= 0.6) as u64;
                }
                if score >= 0.9 {
                    p09 += 1;
                    p09_09 += cos.is_some_and(|c| c >= 0.9) as u64;
                    p09_08 += cos.is_some_and(|c| c >= 0.8) as u64;
                }
                if let Some(c) = cos {
                    stats.hits_on_truth_pairs += 1;
                    let err = score as f64 - c as f64;
                    all.add(err, score as f64);
                    if let Some(k) = bucket_of(c) {
                        by_bucket[k].add(err, score as f64);
                    }
                }
            }
        }
        stats.mean_candidates = candidates as f64 / answers.len().max(1) as f64;

        let buckets: Vec<Bucket> = (0..nb)
            .map(|k| {
                let r = rec[k];
                let m = by_bucket[k];
                Bucket {
                    lo: lo_of(k),
                    hi: lo_of(k + 1),
                    recall: Ratio::new(r[1], r[0]),
                    recall_both: Ratio::new(r[2], r[0]),
                    recall_long: Ratio::new(r[4], r[3]),
                    recall_short: Ratio::new(r[6], r[5]),
                    mean_jaccard3: (r[0] > 0).then(|| jac[k] / r[0] as f64),
                    hits: m.n,
                    mean_score: m.mean(m.score),
                    bias: m.mean(m.sum),
                    rmse: m.mean(m.sq).map(f64::sqrt),
                    precision: (thresholds[k] >= settings.min)
                        .then(|| Ratio::new(prec[k].1, prec[k].0)),
                }
            })
            .collect();
        let recall: Vec<RecallRange> = ranges
            .iter()
            .zip(&range_counts)
            .map(|((name, lo, hi), r)| RecallRange {
                name: name.clone(),
                lo: *lo,
                hi: *hi,
                all: Ratio::new(r[1], r[0]),
                long: Ratio::new(r[3], r[2]),
                short: Ratio::new(r[5], r[4]),
            })
            .collect();
        let estimator = Estimator {
            hits: all.n,
            bias: all.mean(all.sum),
            rmse: all.mean(all.sq).map(f64::sqrt),
            mae: all.mean(all.abs),
        };
        let precision_score_0_90 = PrecisionAt {
            score: 0.9,
            cos_0_90: Ratio::new(p09_09, p09),
            cos_0_80: Ratio::new(p09_08, p09),
        };
        let self_first = Ratio::new(self_first, asked);
        let range_rate = |name: &str, f: fn(&RecallRange) -> Ratio| {
            recall
                .iter()
                .find(|r| r.name == name)
                .and_then(|r| f(r).rate)
        };
        let summary = Summary {
            recall_cos_0_95: range_rate("cos>=0.95", |r| r.all),
            recall_cos_0_90: range_rate("cos>=0.90", |r| r.all),
            recall_cos_0_80_0_90: range_rate("0.80<=cos<0.90", |r| r.all),
            recall_all: recall.last().and_then(|r| r.all.rate),
            recall_short_cos_0_90: range_rate("cos>=0.90", |r| r.short),
            precision_score_0_90_cos_0_90: precision_score_0_90.cos_0_90.rate,
            precision_score_0_90_cos_0_80: precision_score_0_90.cos_0_80.rate,
            recall_cos_0_70_0_90: range_rate("0.70<=cos<0.90", |r| r.all),
            recall_cos_0_60_0_70: range_rate("0.60<=cos<0.70", |r| r.all),
            precision_score_0_70_cos_0_60: Ratio::new(p07_06, p07).rate,
            estimator_bias: estimator.bias,
            estimator_rmse: estimator.rmse,
            self_first: self_first.rate,
        };
        Report {
            settings: settings.clone(),
            documents: ids.len(),
            truth_pairs: pairs.len(),
            same_id_pairs: truth.len() - pairs.len(),
            pairs_not_in_index,
            summary,
            buckets,
            recall,
            precision_score_0_90,
            precision_score_0_70_cos_0_60: Ratio::new(p07_06, p07),
            self_first,
            self_first_or_tie: Ratio::new(self_tied, asked),
            self_found: Ratio::new(self_found, asked),
            estimator,
            queries: stats,
        }
    }

    /// The bucket table as TSV: a header row, then one row per bucket (columns in the module
    /// documentation).
    pub fn tsv(&self) -> String {
        let mut s = String::from(
            "lo\thi\tpairs\tfound\trecall\tfound_both\trecall_both\tlong_pairs\tlong_recall\t\
             short_pairs\tshort_recall\tmean_jaccard3\thits\tmean_score\tbias\trmse\t\
             score_ge_lo\tcorrect\tprecision\n",
        );
        let f = |x: Option<f64>| x.map_or_else(|| "NA".to_string(), |v| format!("{v:.4}"));
        for b in &self.buckets {
            let (ph, pc, pr) = match b.precision {
                Some(p) => (p.of.to_string(), p.n.to_string(), f(p.rate)),
                None => ("NA".into(), "NA".into(), "NA".into()),
            };
            let _ = writeln!(
                s,
                "{:.2}\t{:.2}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{ph}\t{pc}\t{pr}",
                b.lo,
                b.hi,
                b.recall.of,
                b.recall.n,
                f(b.recall.rate),
                b.recall_both.n,
                f(b.recall_both.rate),
                b.recall_long.of,
                f(b.recall_long.rate),
                b.recall_short.of,
                f(b.recall_short.rate),
                f(b.mean_jaccard3),
                b.hits,
                f(b.mean_score),
                f(b.bias),
                f(b.rmse),
            );
        }
        s
    }

    /// A human-readable summary: the bucket table and the headline numbers.
    pub fn text(&self) -> String {
        let ratio = |r: &Ratio| match r.rate {
            Some(v) => format!("{:.2}% ({}/{})", 100.0 * v, r.n, r.of),
            None => "n/a (0 pairs)".to_string(),
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} documents, {} truth pairs with cosine ≥ {:.2}; query threshold {}, top {}",
            self.documents,
            self.truth_pairs,
            self.settings.min,
            self.settings.threshold,
            self.settings
                .top
                .map_or_else(|| "all".to_string(), |t| t.to_string())
        );
        let _ = writeln!(
            s,
            "  cosine         pairs   recall     long    short    hits    bias    rmse  precision(s)"
        );
        let pc =
            |x: Option<f64>| x.map_or_else(|| "n/a".to_string(), |v| format!("{:.1}%", 100.0 * v));
        for b in &self.buckets {
            let _ = writeln!(
                s,
                "  [{:.2},{:.2}{} {:>7}  {:>7}  {:>7}  {:>7}  {:>6}  {:>6}  {:>6}  {}",
                b.lo,
                b.hi,
                if b.hi >= 1.0 { "]" } else { ")" },
                b.recall.of,
                pc(b.recall.rate),
                pc(b.recall_long.rate),
                pc(b.recall_short.rate),
                b.hits,
                b.bias.map_or("n/a".into(), |v| format!("{v:+.3}")),
                b.rmse.map_or("n/a".into(), |v| format!("{v:.3}")),
                b.precision.as_ref().map_or("n/a".into(), |p| format!(
                    "{} of {}",
                    pc(p.rate),
                    p.of
                )),
            );
        }
        let _ = write!(s, "recall:");
        for r in &self.recall {
            let _ = write!(s, " {} {};", r.name, ratio(&r.all));
        }
        let _ = writeln!(s);
        if let Some(r) = self.recall.iter().find(|r| r.name == "cos>=0.90") {
            let _ = writeln!(
                s,
                "recall cos>=0.90 by length: long {}; short {}",
                ratio(&r.long),
                ratio(&r.short)
            );
        }
        let p = &self.precision_score_0_90;
        let _ = writeln!(
            s,
            "precision of hits with score ≥ 0.9: cos ≥ 0.9 {}; cos ≥ 0.8 {}",
            ratio(&p.cos_0_90),
            ratio(&p.cos_0_80)
        );
        let _ = writeln!(
            s,
            "precision of hits with score ≥ 0.7: cos ≥ 0.6 {}",
            ratio(&self.precision_score_0_70_cos_0_60)
        );
        let e = &self.estimator;
        let _ = writeln!(
            s,
            "estimator (score − cosine over {} hits on truth pairs): bias {}, RMSE {}, MAE {}",
            e.hits,
            e.bias.map_or("n/a".into(), |v| format!("{v:+.4}")),
            e.rmse.map_or("n/a".into(), |v| format!("{v:.4}")),
            e.mae.map_or("n/a".into(), |v| format!("{v:.4}")),
        );
        let q = &self.queries;
        let _ = writeln!(
            s,
            "self-first {} ({} counting ties at equal score and codes); self found {}; {} non-self hits ({} on truth pairs), {:.1} candidates/query",
            ratio(&self.self_first),
            ratio(&self.self_first_or_tie),
            ratio(&self.self_found),
            q.hits,
            q.hits_on_truth_pairs,
            q.mean_candidates
        );
        s
    }

    /// The plot as SVG: recall per bucket (at the bucket centres) and precision(s) against
    /// similarity, axes `min`..1 × 0..1.
    pub fn svg(&self, title: &str) -> Result<String> {
        use plotters::prelude::*;
        let err = |e: &dyn std::fmt::Display| Error::Invalid(format!("plot: {e}"));
        let x0 = self.buckets.first().map_or(0.5, |b| b.lo);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (820, 560)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(18)
                .x_label_area_size(48)
                .y_label_area_size(58)
                .build_cartesian_2d(x0..1.0f64, 0.0..1.0f64)
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_labels(((1.0 - x0) * 20.0).round() as usize + 1)
                .y_labels(11)
                .x_label_formatter(&|x| format!("{x:.2}"))
                .y_label_formatter(&|y| format!("{y:.1}"))
                .x_desc("similarity (true tf-idf cosine; for precision: score and cosine ≥ s)")
                .y_desc("recall / precision")
                .max_light_lines(1)
                .light_line_style(BLACK.mix(0.05))
                .draw()
                .map_err(|e| err(&e))?;
            let recall: Vec<(f64, f64)> = self
                .buckets
                .iter()
                .filter_map(|b| b.recall.rate.map(|r| ((b.lo + b.hi) / 2.0, r)))
                .collect();
            let precision: Vec<(f64, f64)> = self
                .buckets
                .iter()
                .filter_map(|b| b.precision.and_then(|p| p.rate).map(|r| (b.lo, r)))
                .collect();
            let blue = RGBColor(31, 119, 180);
            let orange = RGBColor(214, 39, 40);
            chart
                .draw_series(LineSeries::new(recall.clone(), blue.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label("recall (pairs with true cosine in the bucket)")
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2))
                });
            chart
                .draw_series(PointSeries::of_element(
                    recall,
                    4,
                    blue.filled(),
                    &|c, s, st| Circle::new(c, s, st),
                ))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(LineSeries::new(precision.clone(), orange.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label("precision(s): hits with score ≥ s that have cosine ≥ s")
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], orange.stroke_width(2))
                });
            chart
                .draw_series(PointSeries::of_element(
                    precision,
                    4,
                    orange.filled(),
                    &|c, s, st| EmptyElement::at(c) + Rectangle::new([(-s, -s), (s, s)], st),
                ))
                .map_err(|e| err(&e))?;
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK.mix(0.5))
                .label_font(("sans-serif", 14))
                .draw()
                .map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))?;
        }
        Ok(svg)
    }
}

/// Measures an index against a corpus of (id, text) documents: truth with the index's own
/// analyzer, every document as a query, hits mapped by name.
///
/// ```
/// use pocketdex_eval::{evaluate, Settings};
/// use pocketdex::{Index, IndexBuilder, Lang, Params};
/// let docs: Vec<(String, String)> = vec![
///     ("a".into(), "Jupiter is the fifth planet from the Sun and the largest in the Solar System.".into()),
///     ("b".into(), "Jupiter is the fifth planet from the Sun and the biggest in the Solar System.".into()),
///     ("c".into(), "Mozart was a prolific and influential composer of the Classical period.".into()),
///     ("d".into(), "Paris is the capital and largest city of France, on the river Seine.".into()),
/// ];
/// let mut builder = IndexBuilder::for_lang(Lang::En, Params::default())?;
/// for (id, text) in &docs {
///     builder.add(id, None, text);
/// }
/// let mut bytes = Vec::new();
/// builder.finish(&mut bytes)?;
/// let index = Index::open(bytes)?;
/// let report = evaluate(&index, &docs, &Settings::default());
/// assert_eq!(report.truth_pairs, 1);
/// assert_eq!(report.summary.recall_all, Some(1.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn evaluate<D: AsRef<[u8]> + Sync>(
    index: &Index<D>,
    docs: &[(String, String)],
    settings: &Settings,
) -> Report {
    let ids: Vec<String> = docs.iter().map(|d| d.0.clone()).collect();
    let texts: Vec<&str> = docs.iter().map(|d| d.1.as_str()).collect();
    let terms = TermDocs::from_texts(index.fingerprinter().analyzer(), &texts);
    let pairs = truth(&terms, settings.min);
    let map = DocMap::by_name(index, &ids);
    let answers = query_all(index, &texts, &map, &settings.query_options(), &|_| {});
    Report::compute(&ids, &terms, &pairs, &answers, &map, settings)
}
