//! [`Options`]: every option of every method, with the defaults and ranges they are checked
//! against.

use super::spotsigs::SpotJaccard;
use super::trials::TrialParams;
use super::Level;
use pocketdex::error::{Error, Result};
use pocketdex::text::Lang;

/// [`Options::memory_limit`] by default: 512 MiB, a quarter of the 2 GB a method may take at
/// 2 million documents.
pub const DEFAULT_MEMORY_LIMIT: u64 = 512 << 20;

/// Every option of every method; each method reads its own.
///
/// Defaults:
/// - `lang` = English (stopwords, stemmer, antecedents)
/// - `threshold` = `None`: the method's [`Method::default_threshold`](crate::Method::default_threshold)
/// - `verify` = true: estimating methods report exact scores
/// - `level` = [`Level::Stem`] (exact: all six canonicalization levels)
/// - `shingle` = 3 words, `permutations` = 128 (minhash)
/// - `ngram` = 2 words, `hashes` = 14, `trials` = 6, `agree` = 2 (trials)
/// - `chunk` = 8 words (spex)
/// - `chain` = 2 words, `antecedents` = `None` ([`spotsigs::default_antecedents`]),
///   `min_signatures` = 4, `spot_jaccard` = weighted, `min_idf` = 0, `max_idf` = 1: no idf
///   filter; the authors used 0.2 and 0.85 (SpotSigs)
/// - `max_hamming` = 3 bits (simhash)
/// - `spanning_above` = 100: larger groups list a spanning set of pairs
/// - `memory_limit` = [`DEFAULT_MEMORY_LIMIT`]: features beyond it go to a temporary file
///
/// [`spotsigs::default_antecedents`]: crate::spotsigs::default_antecedents
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Language of the documents.
    pub lang: Lang,
    /// Keep pairs whose score is at least this (0 < T ≤ 1); `None` = the method's default.
    pub threshold: Option<f64>,
    /// Verify estimated candidates with the exact measure and report it.
    pub verify: bool,
    /// exact: canonicalization level.
    pub level: Level,
    /// minhash: words per shingle.
    pub shingle: usize,
    /// minhash: hash permutations (sketch size).
    pub permutations: usize,
    /// trials: words per n-gram.
    pub ngram: usize,
    /// trials: hash functions per trial.
    pub hashes: usize,
    /// trials: number of trials.
    pub trials: usize,
    /// trials: trials that must agree.
    pub agree: usize,
    /// spex: words per chunk.
    pub chunk: usize,
    /// SpotSigs: non-stopwords after each antecedent.
    pub chain: usize,
    /// SpotSigs: the antecedents (case-folded); `None` = the language's defaults.
    pub antecedents: Option<Vec<String>>,
    /// SpotSigs: documents with fewer signatures (repeats counted), before or after the idf
    /// filter, are set aside.
    pub min_signatures: usize,
    /// SpotSigs: the weighted (multiset) Jaccard of the paper, or the Jaccard of the sets.
    pub spot_jaccard: SpotJaccard,
    /// SpotSigs: signatures whose normalised idf is below this are dropped (boilerplate).
    pub min_idf: f64,
    /// SpotSigs: signatures whose normalised idf is above this are dropped (too rare to match).
    pub max_idf: f64,
    /// simhash: largest Hamming distance searched.
    pub max_hamming: u32,
    /// Every method: a group of more than this many documents lists a maximum spanning tree
    /// of its pairs ([`groups::spanning`](crate::groups::spanning)) instead of every pair
    /// found; 1 for every group, `usize::MAX` for none.
    pub spanning_above: usize,
    /// Every method: bytes of features held in memory; a collection's features beyond it go
    /// to an unnamed temporary file in `TMPDIR`, read back through a memory map (page cache,
    /// which the kernel reclaims under pressure). Not a cap on the whole process: a method's
    /// tables come on top (see the README's "At scale").
    pub memory_limit: u64,
}

impl Default for Options {
    fn default() -> Self {
        let t = TrialParams::default();
        Options {
            lang: Lang::En,
            threshold: None,
            verify: true,
            level: Level::Stem,
            shingle: 3,
            permutations: 128,
            ngram: t.ngram,
            hashes: t.hashes,
            trials: t.trials,
            agree: t.agree,
            chunk: 8,
            chain: 2,
            antecedents: None,
            min_signatures: 4,
            spot_jaccard: SpotJaccard::Weighted,
            min_idf: 0.0,
            max_idf: 1.0,
            max_hamming: 3,
            spanning_above: 100,
            memory_limit: DEFAULT_MEMORY_LIMIT,
        }
    }
}

impl Options {
    /// Checks the options; the error names the one that is out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(m));
        if let Some(t) = self.threshold {
            if !(t > 0.0 && t <= 1.0) {
                return bad(format!("threshold must be above 0 and at most 1, not {t}"));
            }
        }
        let ranges: [(&str, usize, usize, usize); 8] = [
            ("shingle", self.shingle, 1, 64),
            ("permutations", self.permutations, 1, 4096),
            ("ngram", self.ngram, 1, 64),
            ("hashes", self.hashes, 1, 256),
            ("trials", self.trials, 1, 64),
            ("agree", self.agree, 1, self.trials.max(1)),
            ("chunk", self.chunk, 1, 64),
            ("chain", self.chain, 1, 16),
        ];
        for (name, v, lo, hi) in ranges {
            if v < lo || v > hi {
                return bad(format!("{name} must be between {lo} and {hi}, not {v}"));
            }
        }
        if self.max_hamming > 32 {
            return bad(format!(
                "max-hamming must be at most 32 (beyond that the block tables compare nearly all pairs), not {}",
                self.max_hamming
            ));
        }
        if !(0.0 <= self.min_idf && self.min_idf <= self.max_idf && self.max_idf <= 1.0) {
            return bad(format!(
                "the idf range must satisfy 0 ≤ min-idf ≤ max-idf ≤ 1, not [{}, {}] (0 and 1 keep every signature)",
                self.min_idf, self.max_idf
            ));
        }
        if self.antecedents.as_ref().is_some_and(|a| a.is_empty()) {
            return bad("antecedents must not be empty".into());
        }
        // `--antecedents ""` or "the,,is": a word that is empty matches nothing.
        if self
            .antecedents
            .as_ref()
            .is_some_and(|a| a.iter().any(|w| w.trim().is_empty()))
        {
            return bad("antecedents must be words: an empty one matches nothing".into());
        }
        if self.min_signatures == 0 {
            return bad("min-signatures must be at least 1 (a document without signatures has nothing to compare)".into());
        }
        Ok(())
    }

    /// The trials parameters.
    pub fn trial_params(&self) -> TrialParams {
        TrialParams {
            ngram: self.ngram,
            hashes: self.hashes,
            trials: self.trials,
            agree: self.agree,
        }
    }

    /// What an estimating method's measure says when it reports estimates (verification off).
    pub(crate) fn estimated(&self) -> &'static str {
        if self.verify {
            ""
        } else {
            " (estimated)"
        }
    }
}
