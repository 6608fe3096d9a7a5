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

use super::compare::Comparison;
use super::join::{index_sets, self_join, Measure};
use super::shingles::{jaccard, shingle_hash, word_hash};
use super::{Described, Describer, Docs, Found, Method, Options, Pair, Scorer};
use pocketdex::error::Result;
use pocketdex::text::{self, Analyzer, Lang};
use std::collections::HashSet;

/// SpotSigs: stopword-anchored signatures (Theobald et al.), scored by the Jaccard of the
/// signature sets (exact); documents with too few signatures are set aside.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spotsigs;

/// What the method keeps of a document: its signature set (sorted).
#[derive(Debug)]
struct Signatures(Vec<u64>);

impl Method for Spotsigs {
    fn name(&self) -> &'static str {
        "spotsigs"
    }

    fn description(&self) -> &'static str {
        "SpotSigs: stopword-anchored signatures (Theobald et al.)"
    }

    fn default_threshold(&self) -> f64 {
        0.6
    }

    fn estimates(&self) -> bool {
        false
    }

    fn measure(&self, o: &Options) -> String {
        format!(
            "Jaccard of spot signatures (antecedent + {} words)",
            o.chain
        )
    }

    fn describer(&self, o: &Options) -> Result<Describer> {
        let antecedents: HashSet<String> = o
            .antecedents
            .clone()
            .unwrap_or_else(|| default_antecedents(o.lang))
            .iter()
            .map(|w| text::fold(w))
            .collect();
        let analyzer = Analyzer::for_lang(o.lang);
        let (chain, min_signatures) = (o.chain, o.min_signatures);
        Ok(Box::new(move |text| {
            let words: Vec<String> = text::words(text).collect();
            let (set, found) = signatures(&words, &antecedents, &analyzer, chain);
            if (found as usize) < min_signatures || set.is_empty() {
                return Err(format!(
                    "too few antecedents: {found} spot signature{}, at least {} needed (too little running text)",
                    if found == 1 { "" } else { "s" },
                    min_signatures.max(1)
                ));
            }
            let identity = Described::identity_of(set.iter().copied());
            Ok(Described::new(Signatures(set), identity))
        }))
    }

    fn find(&self, docs: &Docs<'_>, _: &Options, t: f64) -> Result<Found> {
        let sets: Vec<&[u64]> = docs
            .reps_as::<Signatures>()?
            .into_iter()
            .map(|s| s.0.as_slice())
            .collect();
        let (pairs, candidates) = find(&sets, t);
        Ok(Found {
            pairs,
            candidates,
            notes: Vec::new(),
        })
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, _: &'a Options) -> Result<Scorer<'a>> {
        let all = docs.all::<Signatures>()?;
        Ok(Box::new(move |a, b| {
            Some(jaccard(&all[a as usize]?.0, &all[b as usize]?.0))
        }))
    }

    /// The Jaccard, passing only when neither document would be set aside.
    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        let score = c.spotsigs.jaccard.score;
        let aside = c.spotsigs.set_aside.iter().any(|&x| x);
        (score, !aside && score + 1e-9 >= self.default_threshold())
    }
}

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
