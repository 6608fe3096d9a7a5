//! SpotSigs (Theobald, Siddharth & Paepcke, SIGIR 2008): signatures anchored at stopwords,
//! matched by the weighted Jaccard of their multisets after idf filtering, as published.
//!
//! **Signatures.** Each occurrence of an antecedent (a frequent stopword such as "the", "is",
//! "was") starts a spot signature: the antecedent followed by the next `chain` words that are not
//! stopwords (stopwords in between are skipped, spot distance 1). Natural-language text is dense
//! in antecedents while navigation bars, ads and error pages are not, so the signatures favour a
//! page's running text. A document keeps the multiset of its signatures: a signature that occurs
//! three times counts three times. A document with fewer than `min_signatures` signatures
//! (default 4, as in the authors' configuration) has no natural-language text to speak of: it is
//! set aside and reported instead of being matched.
//!
//! **idf filter.** Over the collection (every document not set aside, identical copies
//! included), a signature in `df` of `N` documents has the normalised idf
//! `ln((N + 1) / df) / ln(N + 1)` (1 for a signature of one document, near 0 for one in all of
//! them). Signatures outside [`Options::min_idf`, `Options::max_idf`] are dropped from every
//! document before matching: the very common ones carry boilerplate, the very rare ones cannot
//! match. A document left with fewer than `min_signatures` signatures is set aside then. The
//! authors' released implementation keeps [0.2, 0.85]; the default here is [0, 1], every
//! signature, because their bounds assume a large collection where most documents have copies:
//! 0.85 drops every signature of fewer than (N + 1)^0.15 documents, which on 300 distinct
//! Wikipedia leads leaves 297 of them with fewer than 4 signatures, and 0.2 drops every
//! signature of more than (N + 1)^0.8 documents, which in a collection of ten copies of one
//! text is all of them (README, "Classical near-duplicate methods").
//!
//! **Score.** The weighted (multiset) Jaccard `Σ min(a_s, b_s) / Σ max(a_s, b_s)` over the kept
//! signatures' counts ([`SpotJaccard::Weighted`], the default), or the Jaccard of the sets of
//! kept signatures ([`SpotJaccard::Set`]). Both are found exactly by the set join of
//! [`join`](super::join): a multiset is the set of its (signature, k-th occurrence) pairs, whose
//! set Jaccard is the weighted Jaccard. The join is the paper's matching: a document is compared
//! only with documents whose signature count `|B|` is within the bound `|A| / |B| ≥ τ` (length
//! partitioning, one partition per count) and only through the lists of its rarest signatures
//! that can still reach the threshold (inverted-index pruning under the same bound); every
//! candidate is verified.

use super::compare::Comparison;
use super::groups::Collected;
use super::join::{index_sets, self_join_by_block, Measure};
use super::shingles::{shingle_hash, word_hash};
use super::{Described, Describer, Docs, Found, Info, Method, Options, Record, Scorer, SetAside};
use pocketdex::error::Result;
use pocketdex::hash;
use pocketdex::text::{self, Analyzer, Lang};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashSet;

/// SpotSigs: stopword-anchored signatures (Theobald et al.), idf-filtered, scored by the
/// weighted Jaccard of the signature multisets (or of the sets, [`SpotJaccard::Set`]), exactly;
/// documents with too few signatures are set aside.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spotsigs;

/// Which Jaccard SpotSigs scores with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpotJaccard {
    /// `Σ min / Σ max` of the signature counts: the paper's measure.
    #[default]
    Weighted,
    /// `|A ∩ B| / |A ∪ B|` of the signature sets (each signature once).
    Set,
}

impl SpotJaccard {
    /// Both, in the order `--help` lists them.
    pub const ALL: [SpotJaccard; 2] = [SpotJaccard::Weighted, SpotJaccard::Set];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SpotJaccard::Weighted => "weighted",
            SpotJaccard::Set => "set",
        }
    }

    /// The measure's name in summaries and in `compare`.
    pub fn label(self) -> &'static str {
        match self {
            SpotJaccard::Weighted => "weighted Jaccard",
            SpotJaccard::Set => "Jaccard",
        }
    }

    /// One line on what it measures.
    pub fn description(self) -> &'static str {
        match self {
            SpotJaccard::Weighted => {
                "Σ min / Σ max of the signature counts (the paper's multiset Jaccard)"
            }
            SpotJaccard::Set => "Jaccard of the signature sets, each signature once",
        }
    }
}

/// A document's signature multiset: (signature hash, occurrences), ascending by hash.
pub type Multiset = Vec<(u64, u32)>;

/// The multiset a record holds (see the describer).
fn multiset(r: &Record<'_>) -> Multiset {
    let (hashes, counts) = (r.field::<u64>(0), r.field::<u32>(1));
    hashes.iter().copied().zip(counts.iter().copied()).collect()
}

impl Method for Spotsigs {
    fn info(&self) -> &'static Info {
        &Info {
            name: "spotsigs",
            description:
                "SpotSigs: stopword-anchored signatures, weighted Jaccard (Theobald et al.)",
            default_threshold: 0.6,
            estimates: false,
        }
    }

    fn measure(&self, o: &Options) -> String {
        let kind = o.spot_jaccard.label();
        let filter = if filters(o) {
            format!(", idf in [{}, {}]", o.min_idf, o.max_idf)
        } else {
            String::new()
        };
        format!(
            "{kind} of spot signatures (antecedent + {} words{filter})",
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
            let spots = signatures(&words, &antecedents, &analyzer, chain);
            let found = total(&spots);
            if (found as usize) < min_signatures || spots.is_empty() {
                return Err(format!(
                    "too few antecedents: {found} spot signature{}, at least {} needed (too little running text)",
                    if found == 1 { "" } else { "s" },
                    min_signatures.max(1)
                ));
            }
            let identity = Described::identity_of(spots.iter().flat_map(|&(s, c)| [s, c as u64]));
            let (hashes, counts): (Vec<u64>, Vec<u32>) = spots.into_iter().unzip();
            // Fields: 0 the signature hashes (ascending), 1 their occurrences.
            Ok(Described::new(
                &[bytemuck::cast_slice(&hashes), bytemuck::cast_slice(&counts)],
                identity,
            ))
        }))
    }

    fn find(&self, docs: &Docs<'_>, o: &Options, t: f64) -> Result<Found> {
        let records = docs.reps_records()?;
        let m = o.spot_jaccard;
        // Per document: its size and the join's elements, or why it is set aside.
        let described: Vec<std::result::Result<(u32, Vec<u64>), String>> = if filters(o) {
            // The filter weighs each signature by the whole collection's document frequency.
            let owned: Vec<Multiset> = records.iter().map(multiset).collect();
            let reps: Vec<&[(u64, u32)]> = owned.iter().map(Vec::as_slice).collect();
            let kept = Filter::new(o).apply(&reps, docs.stands_for());
            kept.into_par_iter()
                .map(|k| match k {
                    Kept::Aside(reason) => Err(reason),
                    Kept::Spots(spots) => Ok((size(&spots, m), elements(&spots, m))),
                })
                .collect()
        } else {
            // Without it, each multiset is read from its record for the moment it takes.
            records
                .par_iter()
                .map(|r| {
                    let spots = multiset(r);
                    Ok((size(&spots, m), elements(&spots, m)))
                })
                .collect()
        };
        drop(records);
        let mut set_aside = Vec::new();
        let mut live = Vec::new();
        let mut sets = Vec::new();
        let mut sizes = Vec::new();
        for (i, d) in described.into_iter().enumerate() {
            match d {
                Err(reason) => set_aside.push(SetAside {
                    doc: i as u32,
                    reason,
                }),
                Ok((size, set)) => {
                    sizes.push(size);
                    sets.push(set);
                    live.push(i as u32);
                }
            }
        }
        let refs: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
        let set_docs = index_sets(&refs, &sizes);
        drop(sets);
        let mut pairs = Collected::new(docs.reps().len(), o.spanning_above);
        let candidates = self_join_by_block(&set_docs, Measure::Jaccard, t, |joined| {
            pairs.extend(joined.into_iter().map(|j| {
                let mut p = j.into_pair(Measure::Jaccard, &sizes);
                p.a = live[p.a as usize];
                p.b = live[p.b as usize];
                p
            }))
        });
        let mut notes = Vec::new();
        if filters(o) {
            notes.push(format!(
                "idf filter [{}, {}]: {} of {} distinct documents left with fewer than {} signatures",
                o.min_idf,
                o.max_idf,
                set_aside.len(),
                live.len() + set_aside.len(),
                o.min_signatures.max(1)
            ));
        }
        Ok(Found {
            notes,
            set_aside,
            ..Found::collected(pairs, candidates)
        })
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, o: &'a Options) -> Result<Scorer<'a>> {
        let all: Vec<Option<Multiset>> = (0..docs.len() as u32)
            .map(|d| docs.record(d).as_ref().map(multiset))
            .collect();
        let live: Vec<&[(u64, u32)]> = all.iter().flatten().map(Vec::as_slice).collect();
        let mut kept = Filter::new(o)
            .apply(&live, &vec![1; live.len()])
            .into_iter();
        // Per document: its kept multiset, None when set aside before or after the filter.
        let per_doc: Vec<Option<Multiset>> = all
            .iter()
            .map(|s| match (s, s.as_ref().and_then(|_| kept.next())) {
                (Some(_), Some(Kept::Spots(m))) => Some(m.into_owned()),
                _ => None,
            })
            .collect();
        let measure = o.spot_jaccard;
        Ok(Box::new(move |a, b| {
            let (x, y) = (per_doc[a as usize].as_ref()?, per_doc[b as usize].as_ref()?);
            Some(score(x, y, measure))
        }))
    }

    /// The Jaccard of the two documents alone (no collection, so no idf filter), passing only
    /// when neither document would be set aside.
    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        let score = c.spotsigs.jaccard.score;
        let aside = c.spotsigs.set_aside.iter().any(|&x| x);
        (score, !aside && score + 1e-9 >= self.default_threshold())
    }
}

/// True when the options' idf range can drop a signature: every idf lies in (0, 1].
fn filters(o: &Options) -> bool {
    o.min_idf > 0.0 || o.max_idf < 1.0
}

/// Signatures of a multiset, repeats counted.
pub fn total(m: &[(u64, u32)]) -> u32 {
    m.iter().map(|&(_, c)| c).sum()
}

/// The size the join sees: signatures with repeats (weighted) or distinct signatures (set).
fn size(m: &[(u64, u32)], measure: SpotJaccard) -> u32 {
    match measure {
        SpotJaccard::Weighted => total(m),
        SpotJaccard::Set => m.len() as u32,
    }
}

/// The join's elements of a multiset, ascending: each signature once (set), or its k-th
/// occurrence as element `derived(s, k)` beside `s` itself for the first (weighted), so that
/// the set Jaccard of the elements is the weighted Jaccard of the multisets.
fn elements(m: &[(u64, u32)], measure: SpotJaccard) -> Vec<u64> {
    match measure {
        // A multiset is ascending by signature already.
        SpotJaccard::Set => m.iter().map(|&(s, _)| s).collect(),
        SpotJaccard::Weighted => {
            let mut out: Vec<u64> = m
                .iter()
                .flat_map(|&(s, c)| {
                    (0..c).map(move |k| if k == 0 { s } else { hash::derived(s, k) })
                })
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        }
    }
}

/// What the Jaccard of two multisets (ascending by signature) is made of: their overlap and
/// their sizes. Weighted: Σ min of the counts, and the counts with repeats; set: the shared
/// signatures, and the distinct ones.
pub fn parts(a: &[(u64, u32)], b: &[(u64, u32)], measure: SpotJaccard) -> (u32, u32, u32) {
    let (mut i, mut j, mut o) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                o += match measure {
                    SpotJaccard::Weighted => a[i].1.min(b[j].1),
                    SpotJaccard::Set => 1,
                };
                i += 1;
                j += 1;
            }
        }
    }
    (o, size(a, measure), size(b, measure))
}

/// The score of two multisets: `Σ min / Σ max` of the counts (weighted), or the Jaccard of the
/// sets of signatures (set). Computed from the counts directly, so it is the brute-force oracle
/// the join is checked against.
pub fn score(a: &[(u64, u32)], b: &[(u64, u32)], measure: SpotJaccard) -> f64 {
    let (o, x, y) = parts(a, b, measure);
    super::shingles::jaccard_of(o as usize, x as usize, y as usize)
}

/// The idf filter of a collection: which signatures every document keeps.
struct Filter {
    on: bool,
    min_idf: f64,
    max_idf: f64,
    min_signatures: usize,
}

/// One document after the filter: its multiset (borrowed when the filter kept all of it).
enum Kept<'a> {
    Spots(Cow<'a, [(u64, u32)]>),
    Aside(String),
}

impl Filter {
    fn new(o: &Options) -> Filter {
        Filter {
            on: filters(o),
            min_idf: o.min_idf,
            max_idf: o.max_idf,
            min_signatures: o.min_signatures,
        }
    }

    /// The normalised idf of a signature in `df` of `n` documents.
    fn idf(df: u64, n: u64) -> f64 {
        ((n + 1) as f64 / df as f64).ln() / ((n + 1) as f64).ln()
    }

    /// Filters `docs`, where document `d` stands for `weight[d]` documents of the collection
    /// (itself and its identical copies): document frequencies count every one of them.
    fn apply<'a>(&self, docs: &[&'a [(u64, u32)]], weight: &[u32]) -> Vec<Kept<'a>> {
        if !self.on {
            // Nothing is dropped, and nobody falls below the minimum the describer applied.
            return docs
                .iter()
                .map(|&m| Kept::Spots(Cow::Borrowed(m)))
                .collect();
        }
        let n: u64 = weight.iter().map(|&w| w as u64).sum();
        let mut all: Vec<(u64, u32)> = docs
            .par_iter()
            .enumerate()
            .flat_map_iter(|(d, m)| m.iter().map(move |&(s, _)| (s, d as u32)))
            .collect();
        all.par_sort_unstable();
        // The signatures that pass, ascending.
        let mut pass = Vec::new();
        let mut i = 0;
        while i < all.len() {
            let mut j = i;
            let mut df = 0u64;
            while j < all.len() && all[j].0 == all[i].0 {
                df += weight[all[j].1 as usize] as u64;
                j += 1;
            }
            let idf = Self::idf(df, n);
            if idf >= self.min_idf && idf <= self.max_idf {
                pass.push(all[i].0);
            }
            i = j;
        }
        drop(all);
        docs.par_iter()
            .map(|m| {
                let kept: Multiset = m
                    .iter()
                    .copied()
                    .filter(|(s, _)| pass.binary_search(s).is_ok())
                    .collect();
                let found = total(&kept);
                if (found as usize) < self.min_signatures || kept.is_empty() {
                    Kept::Aside(format!(
                        "too few spot signatures after the idf filter: {found} kept of {}, at least {} needed (the rest are too common or too rare in this collection)",
                        total(m),
                        self.min_signatures.max(1)
                    ))
                } else {
                    Kept::Spots(Cow::Owned(kept))
                }
            })
            .collect()
    }
}

/// The default antecedents of a language: auxiliary verbs and the definite article, after the
/// antecedent list of the authors' reference configuration (English), and their counterparts
/// in the other languages (forms of "to be", "to have", "can" and the definite articles).
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
        Lang::Fr => &[
            "le", "la", "les", "est", "sont", "était", "étaient", "sera", "seront", "fut", "a",
            "ont", "avait", "avaient", "peut", "peuvent", "doit",
        ],
        Lang::Es => &[
            "el", "la", "los", "las", "es", "son", "era", "eran", "fue", "será", "serán", "ha",
            "han", "había", "puede", "pueden", "debe",
        ],
        Lang::It => &[
            "il", "lo", "la", "i", "gli", "le", "è", "sono", "era", "erano", "fu", "sarà", "ha",
            "hanno", "aveva", "può", "possono", "deve",
        ],
        Lang::Pt => &[
            "o", "a", "os", "as", "é", "são", "era", "eram", "foi", "será", "serão", "tem", "têm",
            "tinha", "pode", "podem", "deve",
        ],
    };
    words.iter().map(|w| w.to_string()).collect()
}

/// The spot signatures of a word sequence (case-folded words, e.g. from [`text::words`]), as a
/// multiset: (signature hash, occurrences), ascending by hash.
///
/// [`text::words`]: pocketdex::text::words
///
/// # Example
/// ```
/// use pocketdex_methods::spotsigs::{default_antecedents, signatures, total};
/// use pocketdex::{Analyzer, Lang};
/// let words: Vec<String> = pocketdex::text::words("The cat is on the mat. The cat is on the mat in the sun").collect();
/// let ante = default_antecedents(Lang::En).into_iter().collect();
/// let spots = signatures(&words, &ante, &Analyzer::for_lang(Lang::En), 2);
/// // the:cat:mat twice, is:mat:cat, the:mat:cat, is:mat:sun, the:mat:sun; the last "the" has
/// // one word after it
/// assert_eq!((spots.len(), total(&spots)), (5, 6));
/// ```
pub fn signatures(
    words: &[String],
    antecedents: &HashSet<String>,
    analyzer: &Analyzer,
    chain: usize,
) -> Multiset {
    let chain = chain.max(1);
    // Positions of the words that are not stopwords, to find each chain quickly.
    let content: Vec<usize> = (0..words.len())
        .filter(|&i| !analyzer.is_stopword(&words[i]))
        .collect();
    let mut all = Vec::new();
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
        all.push(shingle_hash(&buf));
    }
    all.sort_unstable();
    let mut out: Multiset = Vec::new();
    for s in all {
        match out.last_mut() {
            Some((last, c)) if *last == s => *c += 1,
            _ => out.push((s, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn multiset(v: &[u8]) -> Multiset {
        let mut m: Multiset = Vec::new();
        let mut v = v.to_vec();
        v.sort_unstable();
        for s in v {
            match m.last_mut() {
                Some((l, c)) if *l == s as u64 => *c += 1,
                _ => m.push((s as u64, 1)),
            }
        }
        m
    }

    #[test]
    fn weighted_jaccard_known_answers() {
        // {a, a, b} and {a, b, b, c}: min 1 + 1, max 2 + 2 + 1.
        let (a, b) = (multiset(&[1, 1, 2]), multiset(&[1, 2, 2, 3]));
        assert_eq!(score(&a, &b, SpotJaccard::Weighted), 2.0 / 5.0);
        assert_eq!(score(&a, &b, SpotJaccard::Set), 2.0 / 3.0);
        assert_eq!(score(&a, &a, SpotJaccard::Weighted), 1.0);
    }

    #[test]
    fn idf_is_normalised() {
        assert_eq!(Filter::idf(1, 9), 1.0);
        assert!((Filter::idf(10, 9)).abs() < 1e-12);
        // The authors' upper bound drops signatures of fewer than (N + 1)^0.15 documents.
        assert!(Filter::idf(3, 9_999) > 0.85 && Filter::idf(4, 9_999) < 0.85);
    }

    proptest! {
        /// The join's elements turn the weighted Jaccard into a set Jaccard: equal for every
        /// pair of multisets.
        #[test]
        fn elements_carry_the_weighted_jaccard(
            a in prop::collection::vec(0u8..12, 1..30),
            b in prop::collection::vec(0u8..12, 1..30),
            set in any::<bool>(),
        ) {
            let m = if set { SpotJaccard::Set } else { SpotJaccard::Weighted };
            let (a, b) = (multiset(&a), multiset(&b));
            let (ea, eb) = (elements(&a, m), elements(&b, m));
            prop_assert_eq!(ea.len() as u32, size(&a, m));
            let via = super::super::shingles::jaccard(&ea, &eb);
            prop_assert!((via - score(&a, &b, m)).abs() < 1e-12);
        }
    }
}
