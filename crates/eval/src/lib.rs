//! The evaluation harness: exact similarities, recall and precision per similarity bucket.
//!
//! Three steps, each usable on its own (the `pocketdex eval` command runs them in order), on
//! documents as sequences of interned content terms ([`TermDocs`], `terms.rs`):
//!
//! 1. **Ground truth** ([`truth()`], `truth.rs`): every pair of documents whose tf-idf cosine is
//!    at least `min`, computed exactly. A document is its content terms
//!    ([`Analyzer::terms`](pocketdex::text::Analyzer::terms): markup removed by the corpus
//!    reader, stopwords and tokens without a letter dropped); tf is the raw count, idf =
//!    ln(N/df), vectors are L2-normalised (a term in every document weighs 0). For the pairs
//!    kept, also the Jaccard similarity of the sets of word 3-shingles over the content-term
//!    sequence (a document with one or two terms has one shingle of them). Both measures are the
//!    classical methods' own ([`tfidf_cosine`](pocketdex_methods::cosine::tfidf_cosine),
//!    [`shingle_set`](pocketdex_methods::shingles::shingle_set)), so truth and methods agree.
//!    Candidate pairs come from an inverted index, never from all n² pairs: each document
//!    accumulates dot products with the higher-numbered documents through postings. To keep the
//!    postings of very common terms short and still lose nothing, each document leaves its most
//!    common terms out of the postings as long as their part of its vector has a norm below
//!    `min` (All-Pairs, Bayardo et al. 2007): a pair whose cosine reaches `min` then shares at
//!    least one indexed term, and every candidate's cosine is recomputed exactly (f64).
//! 2. **Queries** ([`query_all`], `mapping.rs`): every document is a query; hits are mapped to
//!    corpus document numbers ([`DocMap`]).
//! 3. **Metrics** ([`Report::compute`], `metrics.rs`): recall and precision per similarity
//!    bucket of width 0.05 from `min` (rounded down to a multiple of 0.05) to 1 (the last bucket
//!    includes 1.0), as in Figure 1 of "Wikipedia in the Pocket" (Potthast, SIGIR 2007).
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
//! The headline numbers are the named fields of [`Summary`]; recall over wider ranges of cosine
//! those of [`RecallRanges`].
//!
//! The report is rendered (`render.rs`) as a table, a summary and a plot: [`Report::tsv`],
//! [`Report::text`], [`Report::svg`]. Columns of [`Report::tsv`], one row per bucket `[lo, hi)`:
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

// In pipeline order: terms, their truth, the queries, what is measured, how it is shown.
mod terms;
mod truth;
mod mapping;
mod metrics;
mod render;
pub mod synth;
pub mod wordfreq;

pub use mapping::{query_all, Answer, AnswerHit, DocMap};
pub use metrics::{
    Bucket, Estimator, PrecisionAt, QueryStats, Ratio, RecallRange, RecallRanges, Report, Summary,
};
pub use terms::TermDocs;
pub use truth::{truth, truth_with_progress, write_truth_tsv, TruthPair};

use pocketdex::Index;
use pocketdex::QueryOptions;

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
    /// Lookups per short-path band (`None`: [`pocketdex::fingerprint::SHORT_PROBES`]).
    pub short_probes: Option<u8>,
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
            short_probes: None,
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
            short_probes: self.short_probes,
            similar: self.similar,
            similar_probes: self.similar_probes,
            // No `self_name`: self-first measures the index's own ranking of ties.
            ..QueryOptions::default()
        }
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
/// let report = evaluate(&index, &docs, &Settings::default())?;
/// assert_eq!(report.truth_pairs, 1);
/// assert_eq!(report.summary.recall_all, Some(1.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn evaluate<D: AsRef<[u8]> + Sync>(
    index: &Index<D>,
    docs: &[(String, String)],
    settings: &Settings,
) -> pocketdex::Result<Report> {
    let ids: Vec<String> = docs.iter().map(|d| d.0.clone()).collect();
    let texts: Vec<&str> = docs.iter().map(|d| d.1.as_str()).collect();
    let terms = TermDocs::from_texts(index.fingerprinter().analyzer(), &texts);
    let pairs = truth(&terms, settings.min);
    let map = DocMap::by_name(index, &ids)?;
    let answers = query_all(index, &texts, &map, &settings.query_options(), &|_| {})?;
    Ok(Report::compute(
        &ids, &terms, &pairs, &answers, &map, settings,
    ))
}
