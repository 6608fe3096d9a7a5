//! From corpus to index and back: which corpus document each index document is ([`DocMap`]),
//! and every corpus document queried with its hits as corpus documents ([`query_all`]).

use pocketdex::Index;
use pocketdex::QueryOptions;
use rayon::prelude::*;
use std::collections::HashMap;

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
    ///
    /// # Errors
    /// When a damaged part of the index is read.
    pub fn by_name<D: AsRef<[u8]>>(index: &Index<D>, ids: &[String]) -> pocketdex::Result<Self> {
        let mut first: HashMap<&str, u32> = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            first.entry(id.as_str()).or_insert(i as u32);
        }
        let mut in_index_first = vec![false; ids.len()];
        let corpus_of: Vec<Option<u32>> = (0..index.doc_count())
            .map(|d| {
                let c = index
                    .name(d)?
                    .and_then(|name| first.get(name.as_ref()).copied());
                if let Some(c) = c {
                    in_index_first[c as usize] = true;
                }
                Ok(c)
            })
            .collect::<pocketdex::Result<_>>()?;
        // Every corpus document with an indexed id counts as in the index, not only the first.
        let in_index: Vec<bool> = ids
            .iter()
            .map(|id| in_index_first[first[id.as_str()] as usize])
            .collect();
        Ok(DocMap {
            index_docs_not_in_corpus: corpus_of.iter().filter(|c| c.is_none()).count(),
            corpus_docs_not_in_index: in_index.iter().filter(|&&x| !x).count(),
            corpus_of,
            in_index,
        })
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
///
/// # Errors
/// When a query reads a damaged part of the index.
pub fn query_all<D, S>(
    index: &Index<D>,
    texts: &[S],
    map: &DocMap,
    opts: &QueryOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> pocketdex::Result<Vec<Answer>>
where
    D: AsRef<[u8]> + Sync,
    S: AsRef<str> + Sync,
{
    texts
        .par_iter()
        .with_min_len(4)
        .map(|text| {
            let r = index.query(text.as_ref(), opts)?;
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
            Ok(answer)
        })
        .collect()
}
