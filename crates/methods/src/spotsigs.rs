//! SpotSigs (Theobald, Siddharth & Paepcke, SIGIR 2008): signatures anchored at stopwords.
//!
//! Each occurrence of an antecedent (a frequent stopword such as "the", "is", "was") starts a
//! spot signature: the antecedent followed by the next `chain` words that are not stopwords
//! (stopwords in between are skipped, spot distance 1). Natural-language text is dense in
//! antecedents while navigation bars, ads and error pages are not, so the signatures favour a
//! page's running text. A document with fewer than `min_signatures` signatures (default 4, as in
//! the authors' configuration) has no natural-language text to speak of: it is set aside and
//! reported instead of being matched.
//!
//! Matching is by the Jaccard coefficient of the signature sets, found exactly with length
//! partitioning and inverted-index pruning by the Jaccard bound ([`join`](super::join)): a
//! document is only compared with documents whose size is within the bound, and only through
//! the lists of its rarest signatures that can still reach the threshold. The authors also
//! offer a weighted (multiset) Jaccard; sets are used here, like the other set methods.

use super::join::{index_sets, self_join, Measure};
use super::shingles::{shingle_hash, word_hash};
use super::Pair;
use pocketdex::text::{Analyzer, Lang};
use std::collections::HashSet;

/// The default antecedents of a language: auxiliary verbs and the definite article, after the
/// antecedent list of the authors' reference configuration (English), and their German
/// counterparts.
pub fn default_antecedents(lang: Lang) -> Vec<String> {
    let words: &[&str] = match lang {
        Lang::En => &[
            "the", "be", "is", "are", "was", "were", "will", "would", "shall", "should", "can",
            "could", "has", "have", "had", "do", "did", "does",
        ],
        Lang::De => &[
            "der", "die", "das", "ist", "sind", "war", "waren", "wird", "werden", "wurde",
            "wurden", "hat", "haben", "hatte", "kann", "können", "soll",
        ],
    };
    words.iter().map(|w| w.to_string()).collect()
}

/// The spot signatures of a word sequence (case-folded words, e.g. from [`text::words`]): the
/// sorted, deduplicated signature hashes, and how many signatures were found (with repeats).
///
/// [`text::words`]: pocketdex::text::words
///
/// # Example
/// ```
/// use pocketdex_methods::spotsigs::{default_antecedents, signatures};
/// use pocketdex::{Analyzer, Lang};
/// let words: Vec<String> = pocketdex::text::words("The cat is on the mat in the sun").collect();
/// let ante = default_antecedents(Lang::En).into_iter().collect();
/// let (set, found) = signatures(&words, &ante, &Analyzer::for_lang(Lang::En), 2);
/// // the:cat:mat, is:mat:sun, the:mat:sun; the last "the" has only one word after it
/// assert_eq!((set.len(), found), (3, 3));
/// ```
pub fn signatures(
    words: &[String],
    antecedents: &HashSet<String>,
    analyzer: &Analyzer,
    chain: usize,
) -> (Vec<u64>, u32) {
    let chain = chain.max(1);
    // Positions of the words that are not stopwords, to find each chain quickly.
    let content: Vec<usize> = (0..words.len())
        .filter(|&i| !analyzer.is_stopword(&words[i]))
        .collect();
    let mut set = Vec::new();
    let mut buf = Vec::with_capacity(chain + 1);
    for (i, w) in words.iter().enumerate() {
        if !antecedents.contains(w) {
            continue;
        }
        let from = content.partition_point(|&p| p <= i);
        if from + chain > content.len() {
            continue;
        }
        buf.clear();
        buf.push(word_hash(w));
        buf.extend(
            content[from..from + chain]
                .iter()
                .map(|&p| word_hash(&words[p])),
        );
        set.push(shingle_hash(&buf));
    }
    let found = set.len() as u32;
    set.sort_unstable();
    set.dedup();
    (set, found)
}

/// All pairs with Jaccard ≥ `t` of the signature sets; score = Jaccard (exact). Returns the
/// pairs and the candidates verified.
pub(crate) fn find(sets: &[&[u64]], t: f64) -> (Vec<Pair>, u64) {
    let sizes: Vec<u32> = sets.iter().map(|s| s.len() as u32).collect();
    let docs = index_sets(sets, &sizes);
    let (joined, candidates) = self_join(&docs, Measure::Jaccard, t);
    let pairs = joined
        .into_iter()
        .map(|j| j.into_pair(Measure::Jaccard, &sizes))
        .collect();
    (pairs, candidates)
}
