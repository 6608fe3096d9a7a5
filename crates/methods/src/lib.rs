//! The classical near-duplicate methods on the crate's one text pipeline, behind one interface.
//!
//! A [`Detector`] is one [`Method`] with its [`Options`]. It turns each document into
//! [`Features`] ([`Detector::prepare`], independent per document, so it runs in parallel while
//! the corpus is read), then finds every pair of documents at or above the threshold
//! ([`Detector::find`]). [`groups::group_pairs`] turns the pairs into equivalence groups (the
//! connected components). [`Detector::brute_force`] computes the same exact scores over all n²
//! pairs, for tests and small collections.
//!
//! | method | candidates from | score (exact unless `verify` is off) | default threshold |
//! |---|---|---|---|
//! | `exact` | equal 128-bit hash of the canonical text ([`canon`], six levels) | 1 | — |
//! | `fuzzy` | the fuzzy-fingerprint index: each document's query codes looked up | tf-idf cosine of content words | 0.8 |
//! | `minhash` | p = 128 MinHash sketch values shared (pair counting) | Jaccard of 3-word shingles of content words | 0.8 |
//! | `trials` | ≥ 2 of 6 trials of 14 hashes agree | Jaccard of 2-word n-grams of content words | 0.9 |
//! | `spex` | chunks (8 words) repeated in the collection, inverted index | S3 of the chunk sets | 0.58 |
//! | `spotsigs` | spot signatures, length partitions + inverted-index pruning | Jaccard of the signature sets | 0.6 |
//! | `simhash` | 64-bit fingerprints within Hamming distance 3 (block tables) | cosine of term frequencies | 0.8 |
//!
//! **Verification.** The estimating methods (minhash, trials, simhash, fuzzy) find candidates
//! the fast way, then compute the exact measure they estimate for each candidate and keep it
//! when it reaches the threshold; the reported score is that exact value, so no reported pair is
//! below the threshold. With [`Options::verify`] off, they report their own estimate instead
//! (kept when the estimate reaches the threshold), with the errors each module documents:
//! MinHash √(J(1 − J)/p) (≤ 0.044 at p = 128); trials: the detection probability of
//! [`trials::probability`]; simhash: Binomial(64, θ/π) bits; fuzzy: the index's simhash sketch
//! of the tf-idf vector (idf learned from a sample of the collection; see [`pocketdex::sketch`]).
//! spex, SpotSigs and exact compute their score exactly by construction. Pairs are never found
//! by comparing all pairs of documents.
//!
//! **Default thresholds.** spex 0.58 is the paper's content-equivalence threshold. minhash 0.8
//! and fuzzy 0.8 are the near-duplicate truths the project measures with (word 3-shingle Jaccard
//! ≥ 0.8, tf-idf cosine ≥ 0.8). trials 0.9: the signature itself detects a pair at overlap 0.91
//! half of the time (14 hashes), so verification at 0.9 keeps its own decision boundary.
//! SpotSigs 0.6: on the development collections, pairs at S3 ≈ 0.58 have a median SpotSigs
//! Jaccard of 0.57–0.71. simhash 0.8 is a safety net below the search radius: pairs within 3 of
//! 64 bits had a median cosine above 0.98 there, and a pair at cosine 0.8 falls within 3 bits
//! with probability 4·10⁻⁴.
//!
//! **Tokens.** Every method reads plain text (markup removed, as the [`corpus`](pocketdex::corpus)
//! reader delivers it) through [`pocketdex::text`]: UAX #29 words, case-folded.
//! - exact: the canonical text at [`Options::level`] (default: all six levels);
//! - minhash, trials, simhash, fuzzy: content words ([`Analyzer::terms`]: words with a letter,
//!   stopwords removed), as the evaluation oracle (`scripts/oracle/truth.py`) counts them;
//! - spex: all words; SpotSigs: all words, stopwords as antecedents and skipped in chains.
//!
//! **Set aside.** A document a method cannot describe (no content words, no words, too few spot
//! signatures, an empty canonical text) is reported in [`Outcome::set_aside`] and matched with
//! nothing.
//!
//! **Identical features.** Documents whose features are identical (for example byte-identical
//! copies) are compared with the others once: the first of them stands for the rest, and every
//! later one is reported as one pair with the first, score 1 ([`Evidence::Identical`]). The
//! groups are the same as if every pair were listed; the list stays linear in the copies instead
//! of quadratic.
//!
//! # Example
//! ```
//! use pocketdex_methods::{find_pairs, groups::group_pairs, Method, Options};
//! let texts = [
//!     "The quick brown fox jumps over the lazy dog near the river bank today.",
//!     "Mozart was a prolific and influential composer of the Classical period.",
//!     "The quick brown fox jumps over the lazy dog near the river bank today!",
//! ];
//! let out = find_pairs(Method::Minhash, &texts, &Options::default())?;
//! assert_eq!((out.pairs[0].a, out.pairs[0].b, out.pairs[0].score), (0, 2, 1.0));
//! let groups = group_pairs(texts.len(), &out.pairs);
//! assert_eq!(groups[0].members, [0, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Analyzer::terms`]: pocketdex::text::Analyzer::terms

pub mod canon;
pub mod compare;
pub mod cosine;
pub mod exact;
pub mod fuzzy;
pub mod groups;
pub mod join;
pub mod minhash;
pub mod pairs;
pub mod shingles;
pub mod simhash;
pub mod spex;
pub mod spotsigs;
pub mod trials;

pub use canon::{Canonicalizer, Level};

use cosine::{DocFreq, TermVector};
use pocketdex::error::{Error, Result};
use pocketdex::fingerprint::Fingerprinter;
use pocketdex::text::{self, Lang};
use pocketdex::{hash, IndexBuilder};
use rayon::prelude::*;
use std::collections::HashSet;

/// Seed of the word hashes of the shingling methods ([`shingles::word_hash`]).
pub const WORD_SEED: u64 = 0x706b_7464_7831_7764; // "pktdx1wd"
/// Start value of the shingle fold ([`shingles::shingle_hash`]).
pub const SHINGLE_SEED: u64 = 0x706b_7464_7831_7367; // "pktdx1sg"
/// Seed of the 128-bit hash of canonical text ([`Canonicalizer::hash`]).
pub const CANON_SEED: u64 = 0x706b_7464_7831_636e; // "pktdx1cn"
/// Mixed into a term hash to give its 64 simhash bits ([`simhash::fingerprint`]).
pub const SIMHASH_SEED: u64 = 0x706b_7464_7831_7368; // "pktdx1sh"
/// Seed of the 128-bit identity of a feature set (documents with equal identities are compared
/// once).
pub const IDENTITY_SEED: u64 = 0x706b_7464_7831_6964; // "pktdx1id"

/// A near-duplicate detection method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Retrieval equivalence: identical canonical text (content-equivalence paper).
    Exact,
    /// pocketdex's fuzzy-fingerprint index, queried with every document.
    Fuzzy,
    /// Shingling and MinHash sketches (Broder).
    Minhash,
    /// The multi-trial signature (search-engine duplicate-elimination note).
    Trials,
    /// spex chunk selection and the S3 score (content-equivalence paper).
    Spex,
    /// SpotSigs: stopword-anchored signatures (Theobald et al.).
    Spotsigs,
    /// 64-bit simhash searched by Hamming distance (Charikar; Manku et al.).
    Simhash,
}

impl Method {
    /// Every method.
    pub const ALL: [Method; 7] = [
        Method::Exact,
        Method::Fuzzy,
        Method::Minhash,
        Method::Trials,
        Method::Spex,
        Method::Spotsigs,
        Method::Simhash,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Fuzzy => "fuzzy",
            Method::Minhash => "minhash",
            Method::Trials => "trials",
            Method::Spex => "spex",
            Method::Spotsigs => "spotsigs",
            Method::Simhash => "simhash",
        }
    }

    /// One line on what the method is, for help texts.
    pub fn description(self) -> &'static str {
        match self {
            Method::Exact => {
                "Retrieval equivalence: identical canonical text (content-equivalence paper)"
            }
            Method::Fuzzy => "pocketdex's fuzzy-fingerprint index, queried with every document",
            Method::Minhash => "Shingling and MinHash sketches (Broder)",
            Method::Trials => {
                "The multi-trial signature (search-engine duplicate-elimination note)"
            }
            Method::Spex => "spex chunk selection and the S3 score (content-equivalence paper)",
            Method::Spotsigs => "SpotSigs: stopword-anchored signatures (Theobald et al.)",
            Method::Simhash => {
                "64-bit simhash searched by Hamming distance (Charikar; Manku et al.)"
            }
        }
    }

    /// The default threshold on the method's score (1 for exact, where it is not used).
    pub fn default_threshold(self) -> f64 {
        match self {
            Method::Exact => 1.0,
            Method::Fuzzy => 0.8,
            Method::Minhash => 0.8,
            Method::Trials => 0.9,
            Method::Spex => 0.58,
            Method::Spotsigs => 0.6,
            Method::Simhash => 0.8,
        }
    }

    /// True for the methods whose candidates come from an estimate (and are verified).
    pub fn estimates(self) -> bool {
        matches!(
            self,
            Method::Fuzzy | Method::Minhash | Method::Trials | Method::Simhash
        )
    }
}

/// Every option of every method; each method reads its own.
///
/// Defaults:
/// - `lang` = English (stopwords, stemmer, antecedents)
/// - `threshold` = `None`: the method's [`Method::default_threshold`]
/// - `verify` = true: estimating methods report exact scores
/// - `level` = [`Level::Stem`] (exact: all six canonicalization levels)
/// - `shingle` = 3 words, `permutations` = 128 (minhash)
/// - `ngram` = 2 words, `hashes` = 14, `trials` = 6, `agree` = 2 (trials)
/// - `chunk` = 8 words (spex)
/// - `chain` = 2 words, `antecedents` = `None` ([`spotsigs::default_antecedents`]),
///   `min_signatures` = 4 (SpotSigs)
/// - `max_hamming` = 3 bits (simhash)
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
    /// SpotSigs: documents with fewer signatures are set aside.
    pub min_signatures: usize,
    /// simhash: largest Hamming distance searched.
    pub max_hamming: u32,
}

impl Default for Options {
    fn default() -> Self {
        let t = trials::TrialParams::default();
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
            max_hamming: 3,
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
        if self.antecedents.as_ref().is_some_and(|a| a.is_empty()) {
            return bad("antecedents must not be empty".into());
        }
        Ok(())
    }

    /// The trials parameters.
    pub fn trial_params(&self) -> trials::TrialParams {
        trials::TrialParams {
            ngram: self.ngram,
            hashes: self.hashes,
            trials: self.trials,
            agree: self.agree,
        }
    }
}

/// Why a reported pair was found, besides its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// Identical features: the same canonical text, or a later copy of a document (see the
    /// module docs).
    Identical,
    /// MinHash: sketch positions that agree, of `of`.
    Sketch {
        /// Agreeing positions.
        agree: u32,
        /// Sketch size p.
        of: u32,
    },
    /// Multi-trial signature: trials that agree, of `of`.
    Trials {
        /// Agreeing trials.
        agree: u32,
        /// Number of trials.
        of: u32,
    },
    /// spex / SpotSigs: shared chunks or signatures, and each document's count.
    Shared {
        /// Elements in both.
        shared: u32,
        /// Elements of the first document.
        a: u32,
        /// Elements of the second document.
        b: u32,
    },
    /// simhash: the Hamming distance of the fingerprints.
    Hamming {
        /// Differing bits.
        distance: u32,
    },
    /// fuzzy: the code groups (scheme × band, or MinHash band) that collided.
    Codes {
        /// Colliding groups.
        groups: u32,
    },
    /// Computed directly by [`Detector::brute_force`].
    Computed,
}

/// A pair of near-duplicate documents.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Pair {
    /// First document (the smaller number).
    pub a: u32,
    /// Second document.
    pub b: u32,
    /// The score: the exact measure of the method (see the module docs), or its estimate when
    /// verification is off.
    pub score: f64,
    /// The method's own estimate, for the estimating methods.
    pub estimate: Option<f64>,
    /// What the method saw.
    pub evidence: Evidence,
}

impl Pair {
    /// A pair with a score and no other information (documents ordered).
    pub fn new(a: u32, b: u32, score: f64) -> Pair {
        Pair {
            a: a.min(b),
            b: a.max(b),
            score,
            estimate: None,
            evidence: Evidence::Computed,
        }
    }

    fn identical(a: u32, b: u32) -> Pair {
        Pair {
            a,
            b,
            score: 1.0,
            estimate: None,
            evidence: Evidence::Identical,
        }
    }
}

/// A document a method could not describe, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SetAside {
    /// Document number.
    pub doc: u32,
    /// Why.
    pub reason: String,
}

/// Counts of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Documents given.
    pub documents: u64,
    /// Documents with distinct features (the ones compared).
    pub distinct: u64,
    /// Later copies of a document with identical features.
    pub copies: u64,
    /// Candidate pairs the method produced before the threshold (and verification).
    pub candidates: u64,
}

/// What [`Detector::find`] found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The pairs at or above the threshold, sorted by (a, b).
    pub pairs: Vec<Pair>,
    /// Documents set aside.
    pub set_aside: Vec<SetAside>,
    /// Counts.
    pub stats: Stats,
    /// Method-specific diagnostics, one line each (e.g. spex's passes).
    pub notes: Vec<String>,
}

/// What a method keeps of one document.
#[derive(Clone, Debug)]
pub struct Features {
    inner: Inner,
    aside: Option<String>,
}

#[derive(Clone, Debug)]
enum Inner {
    Exact(Option<u128>),
    Minhash { set: Vec<u64>, sketch: Vec<u64> },
    Trials { set: Vec<u64>, signature: Vec<u64> },
    Spex { words: Vec<u64> },
    Spotsigs { set: Vec<u64> },
    Simhash { fingerprint: u64, tf: TermVector },
    Fuzzy(Box<fuzzy::Kept>),
}

impl Features {
    /// Why the document is set aside, if it is.
    pub fn set_aside(&self) -> Option<&str> {
        self.aside.as_deref()
    }

    /// The method these features belong to.
    pub fn method(&self) -> Method {
        match self.inner {
            Inner::Exact(_) => Method::Exact,
            Inner::Minhash { .. } => Method::Minhash,
            Inner::Trials { .. } => Method::Trials,
            Inner::Spex { .. } => Method::Spex,
            Inner::Spotsigs { .. } => Method::Spotsigs,
            Inner::Simhash { .. } => Method::Simhash,
            Inner::Fuzzy(_) => Method::Fuzzy,
        }
    }

    /// The 128-bit identity: equal identities mean equal scores against every document.
    fn identity(&self) -> Option<u128> {
        if self.aside.is_some() {
            return None;
        }
        Some(match &self.inner {
            Inner::Exact(h) => (*h)?,
            Inner::Minhash { set, .. } | Inner::Trials { set, .. } | Inner::Spotsigs { set } => {
                hash_u64s(set.iter().copied())
            }
            Inner::Spex { words } => hash_u64s(words.iter().copied()),
            Inner::Simhash { tf, .. } => {
                hash_u64s(tf.terms().iter().flat_map(|&(h, c)| [h, c as u64]))
            }
            Inner::Fuzzy(kept) => hash_u64s(
                kept.sorted_terms()
                    .iter()
                    .flat_map(|&(h, c)| [h as u64, (h >> 64) as u64, c as u64]),
            ),
        })
    }

    /// The term-frequency vector of the fuzzy method, from the fingerprint's term hashes.
    fn fuzzy_tf(&self) -> Option<TermVector> {
        match &self.inner {
            Inner::Fuzzy(kept) if self.aside.is_none() => Some(kept.tf()),
            _ => None,
        }
    }
}

fn hash_u64s(xs: impl Iterator<Item = u64>) -> u128 {
    let bytes: Vec<u8> = xs.flat_map(u64::to_le_bytes).collect();
    hash::h128(&bytes, IDENTITY_SEED)
}

/// One method with its options, ready to describe documents and find pairs.
#[derive(Debug)]
pub struct Detector {
    method: Method,
    options: Options,
    threshold: f64,
    canon: Canonicalizer,
    antecedents: HashSet<String>,
    fingerprinter: Option<Fingerprinter>,
}

impl Detector {
    /// A detector; fails when an option is out of range.
    pub fn new(method: Method, options: Options) -> Result<Self> {
        options.validate()?;
        let threshold = options
            .threshold
            .unwrap_or_else(|| method.default_threshold());
        let canon = Canonicalizer::new(options.lang);
        let antecedents = options
            .antecedents
            .clone()
            .unwrap_or_else(|| spotsigs::default_antecedents(options.lang))
            .iter()
            .map(|w| text::fold(w))
            .collect();
        let fingerprinter = if method == Method::Fuzzy {
            Some(
                IndexBuilder::for_lang(options.lang, pocketdex::Params::default())?
                    .fingerprinter()
                    .clone(),
            )
        } else {
            None
        };
        Ok(Detector {
            method,
            options,
            threshold,
            canon,
            antecedents,
            fingerprinter,
        })
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The threshold in force.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// What the score measures, with the parameters in force.
    pub fn measure(&self) -> String {
        let o = &self.options;
        let est = if o.verify { "" } else { " (estimated)" };
        match self.method {
            Method::Exact => format!(
                "identical canonical text (levels 1–{}: up to {})",
                o.level.number(),
                o.level.describe()
            ),
            Method::Fuzzy => format!("tf-idf cosine of content words{est}"),
            Method::Minhash => format!(
                "Jaccard of {}-word shingles of content words{est} (p = {})",
                o.shingle, o.permutations
            ),
            Method::Trials => format!(
                "Jaccard of {}-word n-grams of content words{est} ({} of {} trials of {} hashes agree)",
                o.ngram, o.agree, o.trials, o.hashes
            ),
            Method::Spex => format!("S3 of {}-word chunks", o.chunk),
            Method::Spotsigs => format!(
                "Jaccard of spot signatures (antecedent + {} words)",
                o.chain
            ),
            Method::Simhash => format!(
                "cosine of term frequencies{est} (64-bit simhash within {} bits)",
                o.max_hamming
            ),
        }
    }

    /// What a reported pair satisfies, in words: the measure and the threshold.
    pub fn criterion(&self) -> String {
        match self.method {
            Method::Exact => self.measure(),
            _ => format!("{} ≥ {}", self.measure(), self.threshold),
        }
    }

    /// Describes one document (plain text, markup already removed). Independent per document,
    /// so documents can be prepared in parallel.
    pub fn prepare(&self, text: &str) -> Features {
        let o = &self.options;
        let none = |why: &str| Some(why.to_string());
        let (inner, aside) = match self.method {
            Method::Exact => {
                let c = self.canon.canonical_plain(text, o.level);
                if c.is_empty() {
                    (
                        Inner::Exact(None),
                        Some(format!(
                            "empty after canonicalization (up to {})",
                            o.level.describe()
                        )),
                    )
                } else {
                    (Inner::Exact(Some(Canonicalizer::hash(&c))), None)
                }
            }
            Method::Minhash => {
                let words = shingles::word_hashes(&self.canon.analyzer().terms(text));
                let set = shingles::shingles(&words, o.shingle);
                let sketch = minhash::sketch(&set, o.permutations);
                let aside = set.is_empty().then(|| "no content words".to_string());
                (Inner::Minhash { set, sketch }, aside)
            }
            Method::Trials => {
                let words = shingles::word_hashes(&self.canon.analyzer().terms(text));
                let set = shingles::shingles(&words, o.ngram);
                let signature = trials::signature(&set, &o.trial_params());
                let aside = set.is_empty().then(|| "no content words".to_string());
                (Inner::Trials { set, signature }, aside)
            }
            Method::Spex => {
                let words: Vec<u64> = text::words(text).map(|w| shingles::word_hash(&w)).collect();
                let aside = if words.is_empty() {
                    none("no words")
                } else {
                    None
                };
                (Inner::Spex { words }, aside)
            }
            Method::Spotsigs => {
                let words: Vec<String> = text::words(text).collect();
                let (set, found) =
                    spotsigs::signatures(&words, &self.antecedents, self.canon.analyzer(), o.chain);
                let aside = ((found as usize) < o.min_signatures || set.is_empty()).then(|| {
                    format!(
                        "too few antecedents: {found} spot signature{}, at least {} needed (too little running text)",
                        if found == 1 { "" } else { "s" },
                        o.min_signatures.max(1)
                    )
                });
                (Inner::Spotsigs { set }, aside)
            }
            Method::Simhash => {
                let tf = TermVector::from_terms(&self.canon.analyzer().terms(text));
                let fingerprint = simhash::fingerprint(&tf);
                let aside = tf.is_empty().then(|| "no content words".to_string());
                (Inner::Simhash { fingerprint, tf }, aside)
            }
            Method::Fuzzy => {
                let f = self
                    .fingerprinter
                    .as_ref()
                    .expect("the fuzzy detector has a fingerprinter");
                let fingerprint = f.fingerprint(text);
                let aside = (fingerprint.terms == 0).then(|| "no content words".to_string());
                (Inner::Fuzzy(Box::new(fuzzy::Kept::new(fingerprint))), aside)
            }
        };
        Features { inner, aside }
    }

    fn check(&self, features: &[Features]) -> Result<()> {
        if features.len() >= u32::MAX as usize {
            return Err(Error::Invalid("at most 2^32 − 1 documents".into()));
        }
        match features.iter().find(|f| f.method() != self.method) {
            Some(f) => Err(Error::Invalid(format!(
                "features of method {} given to a {} detector",
                f.method().name(),
                self.method.name()
            ))),
            None => Ok(()),
        }
    }

    /// Finds every pair of documents at or above the threshold (see the module docs for how
    /// each method finds them). Document numbers are positions in `features`.
    pub fn find(&self, features: &[Features]) -> Result<Outcome> {
        self.check(features)?;
        let o = &self.options;
        let t = self.threshold;
        let mut set_aside = Vec::new();
        let keys: Vec<Option<u128>> = features
            .iter()
            .enumerate()
            .map(|(i, f)| match &f.aside {
                Some(reason) => {
                    set_aside.push(SetAside {
                        doc: i as u32,
                        reason: reason.clone(),
                    });
                    None
                }
                None => f.identity(),
            })
            .collect();
        let classes = exact::classes(&keys);
        let reps: Vec<&Inner> = classes
            .reps
            .iter()
            .map(|&r| &features[r as usize].inner)
            .collect();
        let mut notes = Vec::new();
        let (local, candidates) = match self.method {
            Method::Exact => (Vec::new(), classes.copies.len() as u64),
            Method::Minhash => {
                let docs: Vec<minhash::Doc<'_>> = reps
                    .iter()
                    .map(|f| match f {
                        Inner::Minhash { set, sketch } => minhash::Doc { set, sketch },
                        _ => unreachable!("checked"),
                    })
                    .collect();
                minhash::find(&docs, o.permutations, t, o.verify)
            }
            Method::Trials => {
                let docs: Vec<trials::Doc<'_>> = reps
                    .iter()
                    .map(|f| match f {
                        Inner::Trials { set, signature } => trials::Doc { set, signature },
                        _ => unreachable!("checked"),
                    })
                    .collect();
                trials::find(&docs, &o.trial_params(), t, o.verify)
            }
            Method::Spex => {
                let docs: Vec<&[u64]> = reps
                    .iter()
                    .map(|f| match f {
                        Inner::Spex { words } => words.as_slice(),
                        _ => unreachable!("checked"),
                    })
                    .collect();
                let (pairs, candidates, passes) = spex::find(&docs, o.chunk, t);
                let summary: Vec<String> = passes
                    .iter()
                    .map(|p| format!("{}: {}→{}", p.words, p.candidates, p.repeated))
                    .collect();
                notes.push(format!(
                    "spex passes (window words: windows hashed → seen more than once): {}",
                    summary.join(", ")
                ));
                (pairs, candidates)
            }
            Method::Spotsigs => {
                let sets: Vec<&[u64]> = reps
                    .iter()
                    .map(|f| match f {
                        Inner::Spotsigs { set } => set.as_slice(),
                        _ => unreachable!("checked"),
                    })
                    .collect();
                spotsigs::find(&sets, t)
            }
            Method::Simhash => {
                let docs: Vec<simhash::Doc<'_>> = reps
                    .iter()
                    .map(|f| match f {
                        Inner::Simhash { fingerprint, tf } => simhash::Doc {
                            fingerprint: *fingerprint,
                            tf,
                        },
                        _ => unreachable!("checked"),
                    })
                    .collect();
                simhash::find(&docs, o.max_hamming, t, o.verify)
            }
            Method::Fuzzy => {
                // tf-idf weights of the documents compared; the document frequencies count
                // every document (copies too), as the collection has them.
                let weights: Vec<Vec<(u64, f64)>> = if o.verify {
                    let all_tf: Vec<Option<TermVector>> =
                        features.par_iter().map(Features::fuzzy_tf).collect();
                    let df = DocFreq::new(all_tf.iter().flatten(), features.len());
                    classes
                        .reps
                        .par_iter()
                        .map(|&r| df.weights(all_tf[r as usize].as_ref().expect("not set aside")))
                        .collect()
                } else {
                    Vec::new()
                };
                let docs: Vec<fuzzy::Doc<'_>> = classes
                    .reps
                    .iter()
                    .map(|&r| match &features[r as usize].inner {
                        Inner::Fuzzy(kept) => fuzzy::Doc { kept },
                        _ => unreachable!("checked"),
                    })
                    .collect();
                fuzzy::find(&docs, o.lang, &weights, t, o.verify)?
            }
        };
        let mut pairs: Vec<Pair> = local
            .into_iter()
            .map(|mut p| {
                p.a = classes.reps[p.a as usize];
                p.b = classes.reps[p.b as usize];
                p
            })
            .collect();
        pairs.extend(classes.copies.iter().map(|&(a, b)| Pair::identical(a, b)));
        pairs.sort_by_key(|p| (p.a, p.b));
        Ok(Outcome {
            pairs,
            set_aside,
            stats: Stats {
                documents: features.len() as u64,
                distinct: classes.reps.len() as u64,
                copies: classes.copies.len() as u64,
                candidates,
            },
            notes,
        })
    }

    /// The exact score of every pair of documents that reaches the threshold, computed directly
    /// for all n² pairs (for tests and small collections): what [`Detector::find`] must agree
    /// with. For simhash, pairs are those within [`Options::max_hamming`] bits (and, when
    /// verifying, with cosine ≥ threshold). Pairs must share something (score > 0).
    pub fn brute_force(&self, features: &[Features]) -> Result<Vec<Pair>> {
        self.check(features)?;
        let o = &self.options;
        let t = self.threshold;
        let live: Vec<u32> = (0..features.len() as u32)
            .filter(|&i| features[i as usize].aside.is_none())
            .collect();
        // Per-document data the score needs.
        let chunks: Vec<Vec<u64>> = match self.method {
            Method::Spex => features
                .par_iter()
                .map(|f| match &f.inner {
                    Inner::Spex { words } => spex::chunks(words, o.chunk),
                    _ => Vec::new(),
                })
                .collect(),
            _ => Vec::new(),
        };
        let weights: Vec<Vec<(u64, f64)>> = match self.method {
            Method::Fuzzy => {
                let all: Vec<Option<TermVector>> =
                    features.par_iter().map(Features::fuzzy_tf).collect();
                let df = DocFreq::new(all.iter().flatten(), features.len());
                all.par_iter()
                    .map(|v| v.as_ref().map(|v| df.weights(v)).unwrap_or_default())
                    .collect()
            }
            _ => Vec::new(),
        };
        let score = |a: usize, b: usize| -> Option<f64> {
            let (fa, fb) = (&features[a].inner, &features[b].inner);
            match (fa, fb) {
                (Inner::Exact(x), Inner::Exact(y)) => (x == y).then_some(1.0),
                (Inner::Minhash { set: x, .. }, Inner::Minhash { set: y, .. })
                | (Inner::Trials { set: x, .. }, Inner::Trials { set: y, .. })
                | (Inner::Spotsigs { set: x }, Inner::Spotsigs { set: y }) => {
                    Some(shingles::jaccard(x, y))
                }
                (Inner::Spex { .. }, Inner::Spex { .. }) => Some(spex::s3(&chunks[a], &chunks[b])),
                (
                    Inner::Simhash {
                        fingerprint: x,
                        tf: tx,
                    },
                    Inner::Simhash {
                        fingerprint: y,
                        tf: ty,
                    },
                ) => {
                    let h = simhash::hamming(*x, *y);
                    if h > o.max_hamming {
                        None
                    } else if o.verify {
                        Some(tx.cosine(ty))
                    } else {
                        Some(simhash::estimate(h))
                    }
                }
                (Inner::Fuzzy(_), Inner::Fuzzy(_)) => Some(cosine::dot(&weights[a], &weights[b])),
                _ => None,
            }
        };
        let pairs: Vec<Pair> = live
            .par_iter()
            .enumerate()
            .flat_map_iter(|(i, &a)| {
                let score = &score;
                live[i + 1..].iter().filter_map(move |&b| {
                    let s = score(a as usize, b as usize)?;
                    (s > 0.0 && s + 1e-9 >= t).then_some(Pair::new(a, b, s))
                })
            })
            .collect();
        Ok(pairs)
    }
}

/// Describes every text in parallel and finds the pairs: [`Detector::new`], [`Detector::prepare`]
/// and [`Detector::find`] in one call.
pub fn find_pairs<S: AsRef<str> + Sync>(
    method: Method,
    texts: &[S],
    options: &Options,
) -> Result<Outcome> {
    let detector = Detector::new(method, options.clone())?;
    let features: Vec<Features> = texts
        .par_iter()
        .map(|t| detector.prepare(t.as_ref()))
        .collect();
    detector.find(&features)
}
