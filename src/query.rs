//! Querying: fingerprint the query with the index's own parameters, look up every code and
//! multi-probe variant, and rank the candidates by the similarity their sketches estimate.

use crate::fingerprint::Path;
use crate::index::Index;
use crate::sketch::estimate_similarity;
use std::collections::HashMap;

/// How to query.
#[derive(Clone, Debug)]
pub struct QueryOptions {
    /// Keep at most this many hits (default 100: every near copy in all but huge clusters).
    pub top: usize,
    /// Keep hits whose estimated similarity is at least this (default 0.5).
    pub threshold: f32,
    /// Deviations flipped per fuzzy code; `None` = the index's default.
    pub probes: Option<u8>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            top: 100,
            threshold: 0.5,
            probes: None,
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
        let f = self.fingerprinter();
        let probes = opts.probes.unwrap_or(f.params().probes);
        let fp = f.query_probes(text, probes);
        // Per candidate: the (path, group) pairs that collided.
        let mut found: HashMap<u32, Vec<(Path, u16)>> = HashMap::new();
        for code in &fp.codes {
            if let Some(postings) = self.lookup(code.key) {
                for doc in postings {
                    let groups = found.entry(doc).or_default();
                    if !groups.contains(&(code.path, code.group)) {
                        groups.push((code.path, code.group));
                    }
                }
            }
        }
        let candidates = found.len();
        let mut hits: Vec<Hit> = found
            .into_iter()
            .filter_map(|(doc, groups)| {
                let score = estimate_similarity(&fp.sketch, self.sketch_words(doc)?);
                let path = groups.iter().map(|g| g.0).min()?;
                Some(Hit {
                    doc,
                    score,
                    codes: groups.len() as u16,
                    path,
                })
            })
            .filter(|h| h.score >= opts.threshold)
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.codes.cmp(&a.codes))
                .then(a.doc.cmp(&b.doc))
        });
        hits.truncate(opts.top);
        QueryResult {
            terms: fp.terms,
            lookups: fp.codes.len(),
            candidates,
            hits,
        }
    }
}
