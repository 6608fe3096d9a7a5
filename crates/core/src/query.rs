//! Querying: fingerprint the query with the index's own parameters, look up every code and
//! multi-probe variant, and rank the candidates by the similarity their sketches estimate.

use crate::fingerprint::{Fingerprint, Path};
use crate::index::Index;
use crate::sketch::estimate_similarity;

/// How to query.
#[derive(Clone, Debug)]
pub struct QueryOptions {
    /// Keep at most this many hits (default 100: every near copy in all but huge clusters).
    pub top: usize,
    /// Keep hits whose estimated similarity is at least this (default 0.5).
    pub threshold: f32,
    /// Lookups per fuzzy band code (the code and its most likely neighbours); `None` = the
    /// index's default.
    pub probes: Option<u8>,
    /// High-similarity search: also look up the similar path, which finds documents that say
    /// nearly the same thing in other words (cosine down to about 0.6), not only near copies.
    pub similar: bool,
    /// Lookups per similar band when `similar`; `None` = the index's default.
    pub similar_probes: Option<u8>,
}

impl QueryOptions {
    /// High-similarity search with its defaults: the similar path looked up, and hits kept
    /// down to an estimated similarity of 0.4 (the estimate's error at cosine 0.6 is about
    /// 0.08, so a threshold of 0.5 would drop about one pair in eight there).
    pub fn similar() -> Self {
        QueryOptions {
            threshold: 0.4,
            similar: true,
            ..QueryOptions::default()
        }
    }
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            top: 100,
            threshold: 0.5,
            probes: None,
            similar: false,
            similar_probes: None,
        }
    }
}

/// One indexed document found for a query.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Hit {
    /// Document number.
    pub doc: u32,
    /// Estimated cosine similarity in [0, 1] from the sketches.
    pub score: f32,
    /// How many code groups (scheme × band, or MinHash band) collided.
    pub codes: u16,
    /// The path whose codes found it (fuzzy before short before exact when several did).
    pub path: Path,
}

/// The answer to one query.
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    /// Index terms in the query.
    pub terms: u32,
    /// Codes looked up (with probes).
    pub lookups: usize,
    /// Distinct documents the codes found before ranking.
    pub candidates: usize,
    /// Hits, best first: by score, then collided groups, then document number.
    pub hits: Vec<Hit>,
}

impl<D: AsRef<[u8]>> Index<D> {
    /// Finds the indexed documents that are near copies of `text`.
    pub fn query(&self, text: &str, opts: &QueryOptions) -> QueryResult {
        self.query_fingerprint(&self.fingerprinter().fingerprint_query(text), opts)
    }

    /// Finds the indexed documents that are near copies of a document fingerprinted (and
    /// weighed) by this index's [`Index::fingerprinter`] ([`Fingerprinter::fingerprint_query`]
    /// or [`Fingerprinter::fingerprint`]).
    ///
    /// [`Fingerprinter::fingerprint_query`]: crate::Fingerprinter::fingerprint_query
    /// [`Fingerprinter::fingerprint`]: crate::Fingerprinter::fingerprint
    ///
    /// # Panics
    /// When the fingerprint was weighed with another idf table.
    pub fn query_fingerprint(&self, fp: &Fingerprint, opts: &QueryOptions) -> QueryResult {
        let f = self.fingerprinter();
        let budget = opts.probes.unwrap_or(f.params().probes);
        assert_eq!(
            fp.weighed.as_ref().map(|w| w.idf),
            f.idf().map(|i| i.id()),
            "a query must be weighed with its index's idf table"
        );
        let similar = opts
            .similar
            .then(|| opts.similar_probes.unwrap_or(f.params().similar_probes));
        let probes = f.query_probes(fp, self.resolution(), budget, similar);
        // Every (candidate, path, group) that collided, then counted per candidate.
        let mut found: Vec<(u32, Path, u16)> = Vec::new();
        let keys: Vec<u64> = probes.iter().map(|c| c.key).collect();
        self.lookup_many(&keys, |i, postings| {
            let code = &probes[i];
            found.extend(postings.map(|doc| (doc, code.path, code.group)));
        });
        found.sort_unstable();
        found.dedup();
        // The candidates' sketches are scattered over the file: ask for all before reading any.
        for run in found.chunk_by(|a, b| a.0 == b.0) {
            self.prefetch_sketch(run[0].0);
        }
        let sketch = fp.sketch();
        let mut hits: Vec<Hit> = Vec::new();
        let mut candidates = 0;
        for run in found.chunk_by(|a, b| a.0 == b.0) {
            candidates += 1;
            let doc = run[0].0;
            let Some(words) = self.sketch_words(doc) else {
                continue;
            };
            let score = estimate_similarity(sketch, words);
            if score >= opts.threshold {
                hits.push(Hit {
                    doc,
                    score,
                    codes: run.len() as u16,
                    path: run[0].1,
                });
            }
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.codes.cmp(&a.codes))
                .then(a.doc.cmp(&b.doc))
        });
        hits.truncate(opts.top);
        QueryResult {
            terms: fp.terms,
            lookups: probes.len(),
            candidates,
            hits,
        }
    }
}
