//! Every measure of every method for one pair of documents, side by side: what `pocketdex
//! compare` prints. Each number comes from the same functions the methods use on whole
//! collections, so a pair compared here scores exactly as `pocketdex dups` scores it (except
//! tf-idf, which needs a collection: here the cosine of plain term frequencies is shown).

use super::canon::{Canonicalizer, Level};
use super::cosine::TermVector;
use super::shingles::{self, dice_of, jaccard_of, overlap, word_hashes};
use super::spotsigs::SpotJaccard;
use super::{minhash, simhash, spotsigs, trials, Method, Options};
use pocketdex::error::Result;
use pocketdex::fingerprint::{Code, Resolution};
use pocketdex::sketch::Idf;
use pocketdex::text;
use pocketdex::Fingerprinter;
use serde::Serialize;
use std::collections::HashSet;

/// One document as `compare` reads it.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The text as stored (markup and all), for canonicalization level 1.
    pub raw: &'a str,
    /// The plain text (markup removed), for everything else.
    pub plain: &'a str,
}

/// Canonical equality at one level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelMatch {
    /// The level.
    pub level: Level,
    /// Its number, 1–6.
    pub number: u8,
    /// True when both canonical texts are identical (same 128-bit hash).
    pub equal: bool,
    /// True when either canonical text is empty (only stopwords, say): `dups` sets such a
    /// document aside at this level, so it is no exact copy of anything.
    pub empty: bool,
}

/// Sizes of the two documents.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Counts {
    /// Words (UAX #29).
    pub words: [usize; 2],
    /// Content words (stopwords and tokens without a letter removed).
    pub content_words: [usize; 2],
}

/// A set-overlap measure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SetScore {
    /// The score (Jaccard or S3).
    pub score: f64,
    /// Elements in both.
    pub shared: usize,
    /// Elements of each document.
    pub sizes: [usize; 2],
}

/// MinHash.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MinhashScore {
    /// Exact Jaccard of the shingle sets.
    pub jaccard: SetScore,
    /// The sketch estimate.
    pub estimate: f64,
    /// Agreeing sketch positions.
    pub agree: usize,
    /// Sketch size.
    pub permutations: usize,
}

/// The multi-trial signature.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrialsScore {
    /// Exact Jaccard of the n-gram sets.
    pub jaccard: SetScore,
    /// Trials that agree.
    pub agree: usize,
    /// Trials.
    pub trials: usize,
    /// True when at least the required number of trials agree.
    pub duplicate: bool,
    /// The probability that a pair with this Jaccard is detected.
    pub probability: f64,
}

/// SpotSigs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpotsigsScore {
    /// Jaccard of the two documents' signatures, weighted or of the sets as the options say
    /// (no idf filter: two documents are no collection); weighted, `shared` is Σ min of the
    /// counts and `sizes` count repeats.
    pub jaccard: SetScore,
    /// Signatures found per document (with repeats).
    pub found: [u32; 2],
    /// Per document: would it be set aside (too few signatures)?
    pub set_aside: [bool; 2],
}

/// simhash.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimhashScore {
    /// Differing bits of the 64-bit fingerprints.
    pub hamming: u32,
    /// cos(π·h/64).
    pub estimate: f64,
    /// Exact cosine of the term-frequency vectors.
    pub cosine: f64,
    /// True when the distance is within the searched radius.
    pub within: bool,
}

/// Fuzzy-fingerprint code collisions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FuzzyScore {
    /// Codes per document, as an index of at most 2,000 documents has them (uniform weights,
    /// `Resolution::for_docs(2)`).
    pub codes: [usize; 2],
    /// Code groups in which the two documents' own codes are equal.
    pub colliding_groups: usize,
    /// Code groups of B that A's query codes (with multi-probe) hit, and the reverse: what
    /// `pocketdex query` finds in each direction in such an index.
    pub query_hits: [usize; 2],
    /// Similar-path bands of B that A's `query --similar` probes hit, and the reverse (not
    /// counted in the fields above).
    pub similar_hits: [usize; 2],
}

/// Every measure for one pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Sizes.
    pub counts: Counts,
    /// exact: equality per canonicalization level.
    pub exact: Vec<LevelMatch>,
    /// The level of the options, whose equality is the exact method's verdict.
    pub level: Level,
    /// minhash.
    pub minhash: MinhashScore,
    /// trials.
    pub trials: TrialsScore,
    /// spex: S3 of the chunk sets.
    pub spex: SetScore,
    /// SpotSigs.
    pub spotsigs: SpotsigsScore,
    /// simhash.
    pub simhash: SimhashScore,
    /// Cosine of the term-frequency vectors of content words.
    pub cosine: f64,
    /// fuzzy.
    pub fuzzy: FuzzyScore,
}

impl Comparison {
    /// The score each method gives the pair on the scale of its threshold, and whether that
    /// reaches the method's default threshold ([`Method::verdict`]), for every method of
    /// [`ALL`](crate::ALL) in order.
    pub fn verdicts(&self) -> Vec<(&'static dyn Method, f64, bool)> {
        crate::ALL
            .iter()
            .map(|&m| {
                let (score, pass) = m.verdict(self);
                (m, score, pass)
            })
            .collect()
    }

    /// [`Comparison::verdicts`] as `pocketdex compare --json` and the server's `/v1/compare`
    /// give them, each with its threshold and what its score measures.
    pub fn verdict_records(&self) -> Vec<Verdict> {
        self.verdicts()
            .into_iter()
            .map(|(m, score, pass)| Verdict {
                method: m.name(),
                score,
                threshold: m.default_threshold(),
                near_duplicate: pass,
                measure: if m.is(&crate::fuzzy::Fuzzy) {
                    // Two documents alone are no collection to learn an idf from.
                    "cosine of term frequencies (dups --method fuzzy: tf-idf cosine in the collection)"
                } else if m.is(&crate::simhash::Simhash) {
                    // The score alone does not decide: the pair must be found first.
                    "cosine of term frequencies, a near duplicate only when the simhashes are within the Hamming distance too (as dups measures it)"
                } else if m.is(&crate::exact::Exact) {
                    "identical at the canonicalization level (as dups measures it, but for level 1, which compare applies to the raw texts, markup included)"
                } else {
                    "as dups measures it"
                },
            })
            .collect()
    }
}

/// One method's verdict on a pair: its score, its default threshold, and whether the score
/// reaches it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Verdict {
    /// The method's name.
    pub method: &'static str,
    /// Its score of the pair.
    pub score: f64,
    /// Its default threshold.
    pub threshold: f64,
    /// Whether the score reaches the threshold.
    pub near_duplicate: bool,
    /// What the score is, where it differs from what `pocketdex dups` measures.
    pub measure: &'static str,
}

fn set_score(a: &[u64], b: &[u64], dice: bool) -> SetScore {
    let o = overlap(a, b);
    SetScore {
        score: if dice {
            dice_of(o, a.len(), b.len())
        } else {
            jaccard_of(o, a.len(), b.len())
        },
        shared: o,
        sizes: [a.len(), b.len()],
    }
}

/// SpotSigs' score of two documents alone: no collection, so no idf filter.
fn spot_score(a: &spotsigs::Multiset, b: &spotsigs::Multiset, m: SpotJaccard) -> SetScore {
    let (shared, x, y) = spotsigs::parts(a, b, m);
    SetScore {
        score: jaccard_of(shared as usize, x as usize, y as usize),
        shared: shared as usize,
        sizes: [x as usize, y as usize],
    }
}

/// Compares two documents by every measure, with the parameters of `options` (its threshold and
/// `verify` are not used).
///
/// # Example
/// ```
/// use pocketdex_methods::compare::{compare, Input};
/// use pocketdex_methods::Options;
/// let a = "The Moon is Earth's only natural satellite. It orbits at an average distance of 384,400 km.";
/// let b = "The Moon is the only natural satellite of Earth. It orbits at an average distance of 384,400 km.";
/// let c = compare(Input { raw: a, plain: a }, Input { raw: b, plain: b }, &Options::default())?;
/// // 8-word chunks: "it orbits at an average distance of 384,400" and the next one are shared.
/// assert_eq!((c.spex.shared, c.spex.sizes), (2, [9, 11]));
/// assert!((c.spex.score - 0.2).abs() < 1e-12);
/// assert!(!c.exact[0].equal);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compare(a: Input<'_>, b: Input<'_>, options: &Options) -> Result<Comparison> {
    options.validate()?;
    let o = options;
    let canon = Canonicalizer::new(o.lang);
    let analyzer = canon.analyzer();
    let exact = Level::ALL
        .iter()
        .map(|&level| {
            let (x, y) = if level == Level::Whitespace {
                (canon.canonical(a.raw, level), canon.canonical(b.raw, level))
            } else {
                (
                    canon.canonical_plain(a.plain, level),
                    canon.canonical_plain(b.plain, level),
                )
            };
            LevelMatch {
                level,
                number: level.number(),
                equal: Canonicalizer::hash(&x) == Canonicalizer::hash(&y),
                empty: x.is_empty() || y.is_empty(),
            }
        })
        .collect();
    let words: [Vec<String>; 2] = [
        text::words(a.plain).collect(),
        text::words(b.plain).collect(),
    ];
    let terms = [analyzer.terms(a.plain), analyzer.terms(b.plain)];
    let term_hashes = [word_hashes(&terms[0]), word_hashes(&terms[1])];
    let word_h = [word_hashes(&words[0]), word_hashes(&words[1])];

    let sh = [
        shingles::shingles(&term_hashes[0], o.shingle),
        shingles::shingles(&term_hashes[1], o.shingle),
    ];
    let sk = [
        minhash::sketch(&sh[0], o.permutations),
        minhash::sketch(&sh[1], o.permutations),
    ];
    let agree = minhash::agreeing(&sk[0], &sk[1]);

    let tp = o.trial_params();
    let ng = [
        shingles::shingles(&term_hashes[0], o.ngram),
        shingles::shingles(&term_hashes[1], o.ngram),
    ];
    let sig = [
        trials::signature(&ng[0], &tp),
        trials::signature(&ng[1], &tp),
    ];
    let trials_agree = sig[0].iter().zip(&sig[1]).filter(|(x, y)| x == y).count();
    let ng_score = set_score(&ng[0], &ng[1], false);

    let ch = [
        super::spex::chunks(&word_h[0], o.chunk),
        super::spex::chunks(&word_h[1], o.chunk),
    ];

    let ante: HashSet<String> = o
        .antecedents
        .clone()
        .unwrap_or_else(|| spotsigs::default_antecedents(o.lang))
        .iter()
        .map(|w| text::fold(w))
        .collect();
    let ss = [
        spotsigs::signatures(&words[0], &ante, analyzer, o.chain),
        spotsigs::signatures(&words[1], &ante, analyzer, o.chain),
    ];
    let found = [spotsigs::total(&ss[0]), spotsigs::total(&ss[1])];
    let min_sig = o.min_signatures.max(1);

    let tf = [
        TermVector::from_terms(&terms[0]),
        TermVector::from_terms(&terms[1]),
    ];
    let fp = [simhash::fingerprint(&tf[0]), simhash::fingerprint(&tf[1])];
    let hamming = simhash::hamming(fp[0], fp[1]);
    let cosine = tf[0].cosine(&tf[1]);

    // Two documents are no collection to learn idf from: uniform weights, and the resolution
    // of the smallest collections.
    let f = Fingerprinter::for_lang(o.lang, pocketdex::Params::default())?.with_idf(Idf::uniform());
    let res = Resolution::for_docs(2);
    let budget = f.params().probes;
    let fps = [f.fingerprint(a.plain), f.fingerprint(b.plain)];
    // The similar path is reported on its own: the fuzzy rows say what a default query sees.
    let (docs, similar): (Vec<Vec<Code>>, Vec<Vec<Code>>) = fps
        .iter()
        .map(|fp| {
            f.codes(fp, res)
                .into_iter()
                .partition(|c| c.path != pocketdex::fingerprint::Path::Similar)
        })
        .unzip();
    let probes = [
        f.probes(&fps[0], res, budget),
        f.probes(&fps[1], res, budget),
    ];
    let similar_budget = f.params().similar_probes;
    let similar_probes = [
        f.similar_probes(&fps[0], res, similar_budget),
        f.similar_probes(&fps[1], res, similar_budget),
    ];
    let groups_hit = |q: &[Code], d: &[Code]| {
        let keys: HashSet<u64> = d.iter().map(|c| c.key).collect();
        let mut groups: Vec<_> = q
            .iter()
            .filter(|c| keys.contains(&c.key))
            .map(|c| (c.path, c.group))
            .collect();
        groups.sort_unstable();
        groups.dedup();
        groups.len()
    };

    Ok(Comparison {
        counts: Counts {
            words: [words[0].len(), words[1].len()],
            content_words: [terms[0].len(), terms[1].len()],
        },
        exact,
        level: o.level,
        minhash: MinhashScore {
            jaccard: set_score(&sh[0], &sh[1], false),
            estimate: minhash::estimate(&sk[0], &sk[1]),
            agree,
            permutations: o.permutations,
        },
        trials: TrialsScore {
            probability: trials::probability(ng_score.score, &tp),
            jaccard: ng_score,
            agree: trials_agree,
            trials: tp.trials,
            duplicate: !sig[0].is_empty() && trials_agree >= tp.agree,
        },
        spex: set_score(&ch[0], &ch[1], true),
        spotsigs: SpotsigsScore {
            jaccard: spot_score(&ss[0], &ss[1], o.spot_jaccard),
            found,
            set_aside: [(found[0] as usize) < min_sig, (found[1] as usize) < min_sig],
        },
        simhash: SimhashScore {
            hamming,
            estimate: simhash::estimate(hamming),
            cosine,
            within: !tf[0].is_empty() && !tf[1].is_empty() && hamming <= o.max_hamming,
        },
        cosine,
        fuzzy: FuzzyScore {
            codes: [docs[0].len(), docs[1].len()],
            colliding_groups: groups_hit(&docs[0], &docs[1]),
            query_hits: [
                groups_hit(&probes[0], &docs[1]),
                groups_hit(&probes[1], &docs[0]),
            ],
            similar_hits: [
                groups_hit(&similar_probes[0], &similar[1]),
                groups_hit(&similar_probes[1], &similar[0]),
            ],
        },
    })
}
