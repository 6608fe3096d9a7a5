//! Documents as sequences of interned content terms: the input of the ground truth and of the
//! length split of the metrics.

use pocketdex::text::Analyzer;
use rayon::prelude::*;
use std::collections::HashMap;

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

    /// Number of distinct terms; term numbers are `0..vocab_len()`.
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
