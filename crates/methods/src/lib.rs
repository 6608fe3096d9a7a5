//! The classical near-duplicate methods on the crate's one text pipeline, behind one trait.
//!
//! Every method implements [`Method`], in its own module, for a unit struct ([`exact::Exact`],
//! [`minhash::Minhash`], …); [`ALL`] lists them and [`by_name`] finds one by its command-line
//! name. A [`Detector`] is one method with its [`Options`]. It turns each document into
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
//! | `spotsigs` | spot signatures, length partitions + inverted-index pruning | weighted Jaccard of the signature multisets (idf filter optional) | 0.6 |
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
//! **Collection statistics.** SpotSigs' optional idf filter counts document frequencies over
//! the whole collection, identical copies included ([`Docs::stands_for`]), and may set aside
//! documents it leaves with too few signatures ([`Found::set_aside`]).
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
//! **Memory.** A method writes each document's features as a [`Record`] of a few flat fields
//! (shingle sets, sketches, term hashes and counts), and the [`FeatureStore`] keeps a
//! collection's records in one array of 64-bit words: in memory up to
//! [`Options::memory_limit`], beyond that in an unnamed temporary file read back through a
//! memory map. A method reads them without copying ([`Docs::record`]); pair counting spills to
//! temporary files too ([`pairs`]), so what a method holds beyond its features is a few words
//! per document and its candidate tables. [`Detector::find`] takes features in a slice;
//! [`Detector::store`], [`FeatureStore::push`] and [`Detector::find_in`] take them as they are
//! made, as `pocketdex dups` does.
//!
//! **Adding a method** takes a module that implements [`Method`] for a unit struct (see
//! [`spotsigs`] for a short one), its `pub mod` line below and its entry in [`ALL`]; its options,
//! if it has new ones, go into [`Options`], and its row of `pocketdex compare` into
//! [`compare::Comparison`].
//!
//! # Example
//! ```
//! use pocketdex_methods::{find_pairs, groups::group_pairs, minhash::Minhash, Options};
//! let texts = [
//!     "The quick brown fox jumps over the lazy dog near the river bank today.",
//!     "Mozart was a prolific and influential composer of the Classical period.",
//!     "The quick brown fox jumps over the lazy dog near the river bank today!",
//! ];
//! let out = find_pairs(&Minhash, &texts, &Options::default())?;
//! assert_eq!((out.pairs[0].a, out.pairs[0].b, out.pairs[0].score), (0, 2, 1.0));
//! let groups = group_pairs(texts.len(), &out.pairs);
//! assert_eq!(groups[0].members, [0, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Analyzer::terms`]: pocketdex::text::Analyzer::terms

#![deny(missing_docs)]

pub mod canon;
pub mod compare;
pub mod cosine;
mod detector;
pub mod exact;
pub mod fuzzy;
pub mod groups;
pub mod join;
pub mod minhash;
mod options;
pub mod pairs;
pub mod shingles;
pub mod simhash;
pub mod spex;
pub mod spotsigs;
pub mod store;
pub mod trials;

pub use canon::{Canonicalizer, Level};
pub use detector::{
    find_pairs, Described, Describer, Detector, Docs, Features, Found, Outcome, Scorer, SetAside,
    Stats,
};
pub use options::{Options, DEFAULT_MEMORY_LIMIT};
pub use store::{FeatureStore, Record};

use compare::Comparison;
use pocketdex::error::Result;
use std::fmt;

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

/// Every method, in the order `pocketdex dups --help` and `pocketdex compare --json` list them.
pub static ALL: &[&dyn Method] = &[
    &exact::Exact,
    &fuzzy::Fuzzy,
    &minhash::Minhash,
    &trials::Trials,
    &spex::Spex,
    &spotsigs::Spotsigs,
    &simhash::Simhash,
];

/// The method with this command-line name.
///
/// # Example
/// ```
/// let m = pocketdex_methods::by_name("spex").unwrap();
/// assert_eq!((m.name(), m.default_threshold()), ("spex", 0.58));
/// assert!(pocketdex_methods::by_name("Spex").is_none());
/// ```
pub fn by_name(name: &str) -> Option<&'static dyn Method> {
    ALL.iter().copied().find(|m| m.name() == name)
}

/// The constants of a [`Method`], one struct per method ([`Method::info`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Info {
    /// The command-line name, lowercase; also the method's name in JSON output.
    pub name: &'static str,
    /// One line on what the method is, for help texts.
    pub description: &'static str,
    /// The default threshold on the method's score (1 for exact, where it is not used).
    pub default_threshold: f64,
    /// True for the methods whose candidates come from an estimate (and are verified).
    pub estimates: bool,
}

/// A near-duplicate detection method: its name and defaults, how it describes one document, and
/// how it finds the pairs of a collection. A [`Detector`] runs one; the methods' own docs
/// (module docs) say how each finds its candidates and what its score is.
pub trait Method: fmt::Debug + Send + Sync {
    /// What the method is, in constants: name, description, default threshold.
    fn info(&self) -> &'static Info;

    /// The command-line name, lowercase; also the method's name in JSON output.
    fn name(&self) -> &'static str {
        self.info().name
    }

    /// One line on what the method is, for help texts.
    fn description(&self) -> &'static str {
        self.info().description
    }

    /// The default threshold on the method's score (1 for exact, where it is not used).
    fn default_threshold(&self) -> f64 {
        self.info().default_threshold
    }

    /// True for the methods whose candidates come from an estimate (and are verified).
    fn estimates(&self) -> bool {
        self.info().estimates
    }

    /// What the score measures, with the parameters of `options`.
    fn measure(&self, options: &Options) -> String;

    /// What a reported pair satisfies, in words: the measure and the threshold.
    fn criterion(&self, options: &Options, threshold: f64) -> String {
        format!("{} ≥ {threshold}", self.measure(options))
    }

    /// The method set up for `options` (already validated): what describes one document.
    fn describer(&self, options: &Options) -> Result<Describer>;

    /// Every pair among the distinct documents [`Docs::reps`] whose score reaches `threshold`,
    /// numbered by their positions in `reps` (the [`Detector`] maps them back and adds the
    /// identical copies), with the number of candidate pairs and any diagnostics.
    fn find(&self, docs: &Docs<'_>, options: &Options, threshold: f64) -> Result<Found>;

    /// The exact score of a pair of documents (numbers in the collection; `None`: never a pair),
    /// computed directly, for [`Detector::brute_force`]; `docs.reps()` are the documents not set
    /// aside.
    fn scorer<'a>(&self, docs: &Docs<'a>, options: &'a Options) -> Result<Scorer<'a>>;

    /// The score `pocketdex compare` shows for this method, on the scale of its threshold, and
    /// whether that reaches the default threshold as `pocketdex dups` would apply it.
    fn verdict(&self, comparison: &Comparison) -> (f64, bool);
}

impl dyn Method + '_ {
    /// True when both are the same method (methods are known by their names).
    ///
    /// # Example
    /// ```
    /// use pocketdex_methods::{by_name, exact::Exact};
    /// assert!(by_name("exact").unwrap().is(&Exact));
    /// ```
    pub fn is(&self, other: &dyn Method) -> bool {
        self.name() == other.name()
    }
}

impl<'b> PartialEq<dyn Method + 'b> for dyn Method + '_ {
    fn eq(&self, other: &(dyn Method + 'b)) -> bool {
        self.is(other)
    }
}

impl Eq for dyn Method + '_ {}

/// A method serializes as its name, as the CLI's JSON output names it.
impl serde::Serialize for dyn Method + '_ {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
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

    /// A later document `b` with the same features as `a`.
    pub(crate) fn identical(a: u32, b: u32) -> Pair {
        Pair {
            a,
            b,
            score: 1.0,
            estimate: None,
            evidence: Evidence::Identical,
        }
    }
}
