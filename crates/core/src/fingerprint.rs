//! Index terms → prefix-class vector → deviations from the reference → fuzzy codes; plus the
//! per-document sketch, the short-document path and the similar path. The ONE path shared by
//! build and query.
//!
//! A document's codes (the MPHF keys) come from these paths:
//! - **fuzzy** (documents with at least [`Params::min_terms`] terms): for every fuzzification
//!   scheme and every band (an interleaved subset of the classes), the interval of each class's
//!   deviation, followed by the band's [`Resolution::samples`] weighted MinHash samples (the
//!   document's terms drawn in proportion to tf·idf, P-MinHash of Moulton & Jiang 2018), hashed.
//!   The samples give the code the entropy that a large collection needs: the class vector alone
//!   has a few bits per band, so its posting lists grow with the collection.
//! - **short** (documents with fewer than [`Params::short_below`] terms): bands of weighted
//!   MinHash samples over the terms, as in LSH (Broder 1997; Indyk & Motwani 1998).
//! - **exact** (documents with no words at all): a hash of the whitespace-normalised text.
//! - **similar** (every document with words, besides its other codes): [`Params::similar_bands`]
//!   bands of weighted MinHash samples drawn with cubed tf·idf weights, which fall on the
//!   document's most distinctive terms. Only high-similarity queries
//!   ([`Fingerprinter::similar_probes`], `query --similar`) look them up: they find rewrites,
//!   revisions and translations (cosine down to about 0.6) that the other paths miss.
//!
//! How specific the codes are ([`Resolution`]: bands, samples per band, rows per short and
//! similar band) is
//! chosen from the size of the collection ([`Resolution::for_docs`]), so that a query's
//! candidates stay bounded as the collection grows, and stored in the index.
//!
//! A query looks up its own codes and their most likely neighbours: per band, the
//! [`Params::probes`] cheapest sets of changes (a deviation moved across its nearest boundary,
//! a sample replaced by the runner-up), cheapest first (query-directed multi-probe, Lv et al.
//! 2007).
//!
//! Every document also gets a simhash sketch (Charikar 2002) of its tf-idf vector (see
//! [`crate::sketch`]), which turns a candidate into an estimated cosine similarity.

use crate::error::{Error, Result};
use crate::hash;
use crate::reference::{Classes, Reference};
use crate::sketch::{self, Idf, TermHash, IDF_SCALE};
use crate::text::{self, Analyzer, Lang};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// How deviations from the reference are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Deviation {
    /// `(f_i − p_i) / p_i`: relative to the expected share.
    Relative = 0,
    /// `(c_i − n p_i) / sqrt(n p_i (1 − p_i))`: a z-score that accounts for document length.
    ZScore = 1,
}

/// How specific the codes are: more bands give a near copy more chances to collide; samples
/// and rows make each code rarer among unrelated documents. Stored in the index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Resolution {
    /// Number of bands; class i belongs to band i mod `bands`.
    pub bands: u8,
    /// Weighted MinHash samples appended to each fuzzy band code.
    pub samples: u8,
    /// Weighted MinHash samples (rows) per band of the short path.
    pub short_rows: u8,
    /// Weighted MinHash samples (rows) per band of the similar path.
    pub similar_rows: u8,
}

/// The resolutions [`Resolution::for_docs`] chooses from, with the largest collection each is
/// for. Measured on generated collections (README, "At scale", "How the codes were chosen";
/// `scripts/scale-bench.sh` and `build --resolution` in `scripts/tune.sh` measure a step
/// again): each step divides a query's candidates by 6 to 20, at some recall of the
/// farthest pairs (cosine 0.8–0.9); each bound keeps the mean under about 64 candidates. The
/// first step, for collections of at most 2,000 documents, has no samples: its candidates are
/// a fifth of the collection at most (≤ 440), and it finds the most pairs. The similar path's
/// rows grow on their own schedule (README, "High-similarity search"): at 2 million generated
/// documents 3 rows keep a `--similar` query under 512 candidates where 2 give ~700.
pub const LADDER: [(u64, Resolution); 7] = [
    (2_000, Resolution::new(4, 0, 2, 1)),
    (50_000, Resolution::new(4, 1, 2, 2)),
    (350_000, Resolution::new(3, 1, 2, 2)),
    (5_000_000, Resolution::new(4, 2, 3, 3)),
    (20_000_000, Resolution::new(3, 2, 3, 4)),
    (300_000_000, Resolution::new(4, 3, 3, 4)),
    (u64::MAX, Resolution::new(3, 3, 3, 4)),
];

/// At most this many samples per fuzzy band and rows per short band.
pub const MAX_SAMPLES: u8 = 4;

/// What a builder that chooses the resolution from the collection's size draws for every
/// document: enough for every step of [`LADDER`] up to 20 million documents. Larger collections
/// state their size ([`Params::resolution`]); each sample costs a pass over a document's terms.
pub const AUTO_CAPS: Resolution = Resolution::new(4, 2, 3, 4);

impl Resolution {
    /// A resolution.
    pub const fn new(bands: u8, samples: u8, short_rows: u8, similar_rows: u8) -> Resolution {
        Resolution {
            bands,
            samples,
            short_rows,
            similar_rows,
        }
    }

    /// True when every part of `self` is at most that of `caps`: codes at `self` can be made
    /// from material drawn for `caps`.
    pub fn within(&self, caps: Resolution) -> bool {
        self.bands <= caps.bands
            && self.samples <= caps.samples
            && self.short_rows <= caps.short_rows
            && self.similar_rows <= caps.similar_rows
    }

    /// The resolution for a collection of `docs` documents: the first step of [`LADDER`] whose
    /// bound is at least `docs`.
    pub fn for_docs(docs: u64) -> Resolution {
        LADDER
            .iter()
            .find(|(max, _)| docs <= *max)
            .map(|e| e.1)
            .unwrap_or(LADDER[LADDER.len() - 1].1)
    }

    /// The smallest caps that hold every step of [`LADDER`] up to the one for `docs`: what a
    /// builder that will hold at most `docs` documents draws.
    pub fn caps_up_to(docs: u64) -> Resolution {
        let last = Resolution::for_docs(docs);
        let mut caps = Resolution::new(0, 0, 0, 0);
        for (_, r) in LADDER {
            caps = Resolution::new(
                caps.bands.max(r.bands),
                caps.samples.max(r.samples),
                caps.short_rows.max(r.short_rows),
                caps.similar_rows.max(r.similar_rows),
            );
            if r == last {
                break;
            }
        }
        caps
    }

    /// The similar rows [`LADDER`] pairs with `samples` per fuzzy band: samples say which
    /// collection sizes the codes are for, and the rows of the last step with at most that many
    /// samples suit the largest of those sizes (what `build --resolution B,S,R` takes).
    pub fn similar_rows_for_samples(samples: u8) -> u8 {
        LADDER
            .iter()
            .map(|e| e.1)
            .rfind(|l| l.samples <= samples)
            .map_or(1, |l| l.similar_rows)
    }

    /// [`Resolution::for_docs`], or the last step of [`LADDER`] before it that fits `caps`.
    pub fn for_docs_within(docs: u64, caps: Resolution) -> Resolution {
        let mut chosen = LADDER[0].1;
        for (max, r) in LADDER {
            if !r.within(caps) {
                break;
            }
            chosen = r;
            if docs <= max {
                break;
            }
        }
        chosen
    }

    fn validate(&self, classes: u16) -> Result<()> {
        if self.bands == 0 || self.bands as u16 > classes || self.bands > 64 {
            return Err(Error::Invalid(format!(
                "bands must be between 1 and min(64, classes = {classes}), not {}",
                self.bands
            )));
        }
        if (classes as usize).div_ceil(self.bands as usize) > 64 {
            return Err(Error::Invalid(format!(
                "at most 64 classes per band: {classes} classes need at least {} bands",
                (classes as usize).div_ceil(64)
            )));
        }
        if self.samples > MAX_SAMPLES
            || !(1..=MAX_SAMPLES).contains(&self.short_rows)
            || !(1..=MAX_SAMPLES).contains(&self.similar_rows)
        {
            return Err(Error::Invalid(format!(
                "samples per band must be at most {MAX_SAMPLES}, short and similar rows between 1 and {MAX_SAMPLES}"
            )));
        }
        Ok(())
    }
}

/// Every parameter of fingerprinting. The values in force are stored in the index, so a query
/// always uses the parameters its index was built with.
///
/// Defaults (chosen by measurement; see the README's "Choosing the defaults"):
/// - `classes` = 24 prefix classes
/// - `schemes` = one fuzzification scheme of 3 intervals, boundaries `[-0.45, 0.45]`; more
///   (staggered) schemes are supported, but multi-probe queries already look across the
///   boundaries, so extra schemes cost index bytes without adding recall
/// - `deviation` = [`Deviation::Relative`]
/// - `probes` = 24 lookups per fuzzy band code at query time (the code and its 23 most likely
///   neighbours)
/// - `min_terms` = 30: documents with fewer terms get no fuzzy codes
/// - `short_below` = 60: documents with fewer terms get short-path codes
/// - `minhash_bands` = 6 bands on the short path
/// - `sketch_words` = 3: a 192-bit simhash per document
/// - `similar_bands` = 2 bands of weighted MinHash samples per document for high-similarity
///   search (`query --similar`); 0 indexes none
/// - `similar_probes` = 48 lookups per similar band in a high-similarity query
/// - `resolution` = `None`: chosen from the collection's size ([`Resolution::for_docs`])
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Params {
    /// Number of prefix classes, k.
    pub classes: u16,
    /// Per fuzzification scheme, its interval boundaries (ascending); r = boundaries + 1 intervals.
    pub schemes: Vec<Vec<f32>>,
    /// How deviations are measured.
    pub deviation: Deviation,
    /// Default number of lookups per fuzzy band code at query time.
    pub probes: u8,
    /// Default number of lookups per short-path band at query time ([`SHORT_PROBES`]; 1 in
    /// files before format version 12, which were queried with the codes alone).
    pub short_probes: u8,
    /// Documents with at least this many terms get fuzzy codes.
    pub min_terms: u32,
    /// Documents with fewer than this many terms get short-path codes.
    pub short_below: u32,
    /// Bands of the short path.
    pub minhash_bands: u8,
    /// Simhash sketch length in 64-bit words.
    pub sketch_words: u8,
    /// Bands of the similar path (every document with terms); 0: none.
    pub similar_bands: u8,
    /// Default number of lookups per similar band in a high-similarity query.
    pub similar_probes: u8,
    /// How specific the codes are; `None` lets the builder choose from the collection's size.
    pub resolution: Option<Resolution>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 24,
            schemes: vec![vec![-0.45, 0.45]],
            deviation: Deviation::Relative,
            probes: 24,
            short_probes: SHORT_PROBES,
            min_terms: 30,
            short_below: 60,
            minhash_bands: 6,
            sketch_words: 3,
            similar_bands: 2,
            similar_probes: 48,
            resolution: None,
        }
    }
}

impl Params {
    /// Equal, and alike to the bit: `==` takes -0.0 for 0.0 in a scheme's boundaries, while
    /// a fingerprinter's identity (and META) tells them apart.
    pub(crate) fn identical(&self, other: &Params) -> bool {
        self == other && format!("{self:?}") == format!("{other:?}")
    }

    /// Checks that the parameters make sense; the error says which one does not.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(m));
        if self.classes < 2 {
            return bad(format!("classes must be at least 2, not {}", self.classes));
        }
        if let Some(r) = &self.resolution {
            r.validate(self.classes)?;
        }
        if self.resolution.is_none() {
            // Every resolution the builder may choose must fit the classes.
            for (_, r) in LADDER
                .iter()
                .filter(|(_, r)| r.samples <= AUTO_CAPS.samples)
            {
                r.validate(self.classes).map_err(|e| {
                    Error::Invalid(format!("{e} (or give the resolution explicitly)"))
                })?;
            }
        }
        if self.schemes.is_empty() || self.schemes.len() > 16 {
            return bad(format!(
                "between 1 and 16 fuzzification schemes, not {}",
                self.schemes.len()
            ));
        }
        for (i, s) in self.schemes.iter().enumerate() {
            if s.is_empty()
                || s.len() > 15
                || s.iter().any(|b| !b.is_finite())
                || s.windows(2).any(|w| w[0] >= w[1])
            {
                return bad(format!(
                    "scheme {i}: boundaries must be 1 to 15 finite, strictly ascending numbers"
                ));
            }
        }
        if self.probes == 0 {
            return bad("probes (lookups per band) must be at least 1".into());
        }
        if self.short_probes == 0 {
            return bad("short probes (lookups per short band) must be at least 1".into());
        }
        if self.minhash_bands == 0 || self.minhash_bands > 64 {
            return bad("short-path bands must be between 1 and 64".into());
        }
        if self.similar_bands > 64 {
            return bad("similar-path bands must be at most 64".into());
        }
        if self.similar_probes == 0 {
            return bad("similar probes (lookups per similar band) must be at least 1".into());
        }
        if !(1..=8).contains(&self.sketch_words) {
            return bad(format!(
                "sketch words must be between 1 and 8, not {}",
                self.sketch_words
            ));
        }
        Ok(())
    }

    /// Sketch length in bits.
    pub fn sketch_bits(&self) -> u32 {
        self.sketch_words as u32 * 64
    }
}

/// Which path produced a code or answered a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Path {
    /// Fuzzy-fingerprint codes.
    Fuzzy,
    /// Weighted MinHash band codes (short documents).
    Short,
    /// Exact hash of the normalised text (documents without words).
    Exact,
    /// Weighted MinHash band codes of every document, looked up by high-similarity queries.
    Similar,
}

impl Path {
    /// The path's tag: the first byte of every code it hashes.
    fn tag(self) -> u8 {
        match self {
            Path::Fuzzy => 1,
            Path::Short => 2,
            Path::Exact => 3,
            Path::Similar => 4,
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Path::Fuzzy => "fuzzy",
            Path::Short => "short",
            Path::Exact => "exact",
            Path::Similar => "similar",
        }
    }
}

/// One code of a document, or one probe of a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code {
    /// The 64-bit code: the MPHF key.
    pub key: u64,
    /// The path that made it.
    pub path: Path,
    /// Which (scheme, band) or short band made it; collisions are counted per group.
    pub group: u16,
}

impl Code {
    /// The one code of a document without words: its exact hash, group 0.
    fn exact(key: u64) -> Code {
        Code {
            key,
            path: Path::Exact,
            group: 0,
        }
    }
}

/// What analysing a document gives: everything its codes, probes and sketch are made from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fingerprint {
    /// Number of index terms (occurrences).
    pub terms: u32,
    /// Term occurrences per prefix class.
    pub class_counts: Vec<u32>,
    /// The document's set source with frequencies, in first-seen order: its distinct terms, or,
    /// when it has none, its distinct words (stopwords and numbers included).
    pub term_hashes: Vec<TermHash>,
    /// The exact-path code, for a text without any word.
    pub exact: Option<u64>,
    /// Codes material and sketch, once weighed with an idf table ([`Fingerprinter::weigh`]).
    pub weighed: Option<Weighed>,
    /// [`Fingerprinter::identity`] of the fingerprinter that made it: a builder or an index
    /// refuses a fingerprint made with other parameters, classes or stopwords, whose codes
    /// would never meet theirs.
    pub maker: u64,
}

/// A query's fingerprint ([`Fingerprinter::fingerprint_query`]): a document's analysis and
/// its sketch, without the code material an index stores. Index time and query time are
/// separate types: a query cannot be indexed or asked for its codes, which would silently find
/// nothing (it draws only what its probes need):
///
/// ```compile_fail
/// # use pocketdex::{Fingerprinter, Lang, Params};
/// # let f = Fingerprinter::for_lang(Lang::En, Params::default()).unwrap();
/// let q = f.fingerprint_query("a query");
/// f.codes(&q, pocketdex::fingerprint::Resolution::for_docs(1)); // codes need a Fingerprint
/// ```
///
/// Both roles can be a query ([`Query`]): a document's [`Fingerprint`] is looked up as it is
/// (`dups --method fuzzy`, the submission check), or made a `QueryFingerprint` with `from`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryFingerprint(Fingerprint);

impl QueryFingerprint {
    /// Number of index terms (occurrences).
    pub fn terms(&self) -> u32 {
        self.0.terms
    }

    /// The query's distinct terms with their frequencies (see [`Fingerprint::term_hashes`]).
    pub fn term_hashes(&self) -> &[TermHash] {
        &self.0.term_hashes
    }

    /// The sketch its candidates are scored with; empty when it was not weighed.
    pub fn sketch(&self) -> &[u64] {
        self.0.sketch()
    }
}

impl From<Fingerprint> for QueryFingerprint {
    /// A document's fingerprint as a query: its analysis and sketch, its code material dropped.
    fn from(mut fp: Fingerprint) -> Self {
        if let Some(w) = &mut fp.weighed {
            w.material = Material::default();
        }
        QueryFingerprint(fp)
    }
}

/// What a query can be made from: a [`QueryFingerprint`] or a document's [`Fingerprint`]
/// (sealed: the probes read the analysis both hold).
pub trait Query: sealed::Analysed {}
impl Query for Fingerprint {}
impl Query for QueryFingerprint {}

pub(crate) mod sealed {
    use super::{Fingerprint, QueryFingerprint};

    /// The analysis behind either role.
    pub trait Analysed {
        fn analysis(&self) -> &Fingerprint;
    }
    impl Analysed for Fingerprint {
        fn analysis(&self) -> &Fingerprint {
            self
        }
    }
    impl Analysed for QueryFingerprint {
        fn analysis(&self) -> &Fingerprint {
            &self.0
        }
    }
}

/// The parts of a fingerprint that depend on the idf table: the weighted MinHash samples the
/// codes are made of, and the sketch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Weighed {
    /// [`Idf::id`] of the table they were weighed with.
    pub idf: u64,
    /// Everything the document's codes are made of, at any resolution within its caps.
    pub material: Material,
    /// The simhash sketch.
    pub sketch: Vec<u64>,
}

/// A document's code material: interval digits per class and weighted MinHash samples, enough
/// to make its codes at every resolution up to its caps ([`Material::codes`]). A builder keeps
/// its digits and samples (about 70 bytes for a document, in flat arrays) until it knows the
/// collection's size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Material {
    /// Fuzzy path: the interval of every class's deviation, per scheme (`schemes × k` bytes);
    /// empty when the document has no fuzzy codes.
    pub digits: Vec<u8>,
    /// Fuzzy samples: `bands × samples` fragments (band-major) for the caps below.
    pub samples: Vec<u32>,
    /// Short path: `minhash_bands × rows` fragments (band-major); empty when not on the path.
    pub short: Vec<u32>,
    /// Similar path: `similar_bands × caps.similar_rows` fragments (band-major); empty for a
    /// document without terms.
    pub similar: Vec<u32>,
    /// The exact code, for a text without any word.
    pub exact: Option<u64>,
    /// Caps the samples were drawn for: bands, samples per band, rows per short and per similar
    /// band.
    pub caps: Resolution,
}

/// Fingerprints documents with one set of parameters, classes and stopwords.
#[derive(Clone, Debug)]
pub struct Fingerprinter {
    params: Params,
    // Shared by clones (a builder clones its fingerprinter per role and per set segment): the
    // classes, stopwords and idf table are the bulk of it.
    classes: Arc<Classes>,
    analyzer: Arc<Analyzer>,
    /// The weights of samples and sketch; `None` while a build is still counting document
    /// frequencies.
    idf: Option<Arc<Idf>>,
    /// What [`Fingerprinter::weigh`] draws for: the fixed resolution, else [`AUTO_CAPS`] or what
    /// [`Fingerprinter::with_caps`] set.
    caps: Resolution,
    /// What its fingerprints are comparable by ([`Fingerprinter::identity`]).
    identity: u64,
}

/// Term statistics of one document.
struct TermStats {
    /// Per distinct term, in first-seen order: its 128-bit hash and occurrences, as
    /// [`Fingerprint::term_hashes`] keeps them.
    terms: Vec<(u128, u32)>,
    /// Occurrences per prefix class.
    class_counts: Vec<u32>,
    total: u32,
}

/// A distinct term of a document as counting finds it: its 128-bit hash, occurrences, and
/// prefix class.
type CountedTerm = (u128, u32, u16);

/// A word's entry in [`WordTable`] that is not counted (a stopword).
const SKIP: u32 = u32::MAX;

/// The distinct words of one document, by their 128-bit term hash (the identity every later
/// stage gives a term: sketch, idf, samples), with open addressing on its high 64 bits, which
/// a slot keeps: two words of one document merge only when those agree (odds 2^-64 per pair),
/// and one probe reads one cache line. Emptying it for the next document writes
/// 16 bytes a slot.
struct WordTable {
    slots: Vec<WordSlot>,
    /// The slots in use, so that emptying the table costs what the document filled.
    used: Vec<u32>,
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct WordSlot {
    /// The high 64 bits of the term hash (meaningful where `value` is not empty).
    tag: u64,
    /// The caller's entry, or [`EMPTY`].
    value: u32,
}

/// An empty slot of [`WordTable`].
const EMPTY: u32 = u32::MAX - 1;

const EMPTY_SLOT: WordSlot = WordSlot {
    tag: 0,
    value: EMPTY,
};

impl WordTable {
    fn with_capacity(words: usize) -> WordTable {
        let slots = (words * 2).next_power_of_two().max(64);
        WordTable {
            slots: vec![EMPTY_SLOT; slots],
            used: Vec::new(),
        }
    }

    /// Empties the table for a document of about `words` distinct words (it grows as needed;
    /// a table grown for a huge document is let go).
    fn reset(&mut self, words: usize) {
        let want = (words * 2).next_power_of_two().max(64);
        if self.slots.len() > 4 * want.max(1 << 14) || self.slots.len() < want {
            *self = WordTable::with_capacity(words);
        } else {
            for &i in &self.used {
                self.slots[i as usize] = EMPTY_SLOT;
            }
            self.used.clear();
        }
    }

    /// The slot of `h`: its entry, or the empty slot where it belongs.
    #[inline]
    fn find(&self, h: u128) -> usize {
        let mask = self.slots.len() - 1;
        let tag = (h >> 64) as u64;
        let mut slot = tag as usize & mask;
        loop {
            let s = self.slots[slot];
            if s.value == EMPTY || s.tag == tag {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The entry at `slot`, if any.
    #[inline]
    fn get(&self, slot: usize) -> Option<u32> {
        let v = self.slots[slot].value;
        (v != EMPTY).then_some(v)
    }

    /// Inserts `h` with `value` at the empty `slot` [`WordTable::find`] just returned for it.
    fn insert(&mut self, slot: usize, h: u128, value: u32) {
        self.slots[slot] = WordSlot {
            tag: (h >> 64) as u64,
            value,
        };
        self.used.push(slot as u32);
        if self.used.len() * 2 > self.slots.len() {
            self.grow();
        }
    }

    /// Doubles the slots and places the entries again.
    #[cold]
    fn grow(&mut self) {
        let mut new = WordTable::with_capacity(self.slots.len());
        let mask = new.slots.len() - 1;
        for &i in &self.used {
            let s = self.slots[i as usize];
            let mut at = s.tag as usize & mask;
            while new.slots[at].value != EMPTY {
                at = (at + 1) & mask;
            }
            new.slots[at] = s;
            new.used.push(at as u32);
        }
        *self = new;
    }
}

/// Sample numbers (`g` of [`draw`], index-format.md §8.3) of a path's `bands` bands of `rows`
/// samples each, band-major: sample `j` of band `b` is `first + 16·b + j`, where `first` is
/// [`FUZZY_SAMPLES`], [`SHORT_SAMPLES`] or [`SIMILAR_SAMPLES`].
fn sample_numbers(first: u32, bands: usize, rows: usize) -> Vec<u32> {
    sample_number_iter(first, bands, rows).collect()
}

/// [`sample_numbers`], one after another.
fn sample_number_iter(first: u32, bands: usize, rows: usize) -> impl Iterator<Item = u32> {
    (0..bands).flat_map(move |b| (0..rows).map(move |j| first + (b * 16 + j) as u32))
}

/// The first sample number of the fuzzy path's bands.
const FUZZY_SAMPLES: u32 = SAMPLE_SEED_BASE;
/// The first sample number of the short path's bands.
const SHORT_SAMPLES: u32 = SAMPLE_SEED_BASE + 4096;
/// The first sample number of the similar path's bands.
const SIMILAR_SAMPLES: u32 = SAMPLE_SEED_BASE + 8192;

/// Sample numbers start here, and [`draw`] adds it once more to `⌊g/2⌋` for the `hash::derived`
/// index (as format v3 defined it; sketches of v1–v3 used the indices below 64).
const SAMPLE_SEED_BASE: u32 = 1 << 16;

/// Default lookups per short-path band at query time ([`Params::short_probes`], stored in META
/// since format version 12): the band's code and the 3 combinations of its rows' samples that a
/// near copy most likely drew instead (README, "Short documents at scale").
pub const SHORT_PROBES: u8 = 4;

/// Cost of replacing a sample by its runner-up when probing, on the scale of a deviation's
/// squared distance to its boundary in units of its edit noise (see [`Fingerprinter::probes`]).
pub const SAMPLE_PROBE_COST: f64 = 1.0;

/// At most this many of a band's cheapest changes are combined into probes.
const PROBE_COORDS: usize = 16;

impl Fingerprinter {
    /// A fingerprinter; fails when the parameters do not fit the classes.
    pub fn new(params: Params, classes: Classes, analyzer: Analyzer) -> Result<Self> {
        params.validate()?;
        if classes.k() != params.classes as usize {
            return Err(Error::Invalid(format!(
                "parameters ask for {} classes but the class table has {}",
                params.classes,
                classes.k()
            )));
        }
        // What a fingerprint depends on: the parameters that shape terms, digits, samples and
        // sketches (not the query-time probe budgets, nor the resolution, whose caps a builder
        // checks itself), the classes and the stopwords. The identity lives only in memory
        // (never in a file), so `Debug` text of the parameters is a stable enough description;
        // the classes and stopwords go in as bytes (their `Debug` text cost a process opening
        // a set's segments more than a millisecond).
        let p = &params;
        let mut key = format!(
            "{:?} {:?} {:?} {} {} {} {} {}\n",
            p.classes,
            p.schemes,
            p.deviation,
            p.min_terms,
            p.short_below,
            p.minhash_bands,
            p.sketch_words,
            p.similar_bands,
        )
        .into_bytes();
        // Every list and string with its length first, so that no two descriptions run into
        // each other.
        let len = |key: &mut Vec<u8>, n: usize| key.extend_from_slice(&(n as u64).to_le_bytes());
        len(&mut key, classes.table().len());
        for (prefix, class) in classes.table() {
            len(&mut key, prefix.len());
            key.extend_from_slice(prefix.as_bytes());
            key.extend_from_slice(&class.to_le_bytes());
        }
        len(&mut key, classes.expected().len());
        for e in classes.expected() {
            key.extend_from_slice(&e.to_bits().to_le_bytes());
        }
        let stopwords = analyzer.stopwords();
        len(&mut key, stopwords.len());
        for w in stopwords {
            len(&mut key, w.len());
            key.extend_from_slice(w.as_bytes());
        }
        let identity = hash::h64(&key, 0);
        Ok(Fingerprinter {
            caps: params.resolution.unwrap_or(AUTO_CAPS),
            identity,
            params,
            classes: Arc::new(classes),
            analyzer: Arc::new(analyzer),
            idf: None,
        })
    }

    /// A fingerprinter with the built-in reference and stopwords of `lang`: the one
    /// [`IndexBuilder::for_lang`](crate::IndexBuilder::for_lang) uses with the same parameters.
    ///
    /// The last few made are kept and shared (each is a few `Arc`s): parsing the reference and
    /// packing its classes takes about a millisecond, which callers that make one per call
    /// (`compare`, a fuzzy `dups` of a few documents) would otherwise pay every time, and a
    /// shared one also keeps each thread's word table warm.
    pub fn for_lang(lang: Lang, params: Params) -> Result<Self> {
        const KEEP: usize = 4;
        static MADE: std::sync::Mutex<Vec<(Lang, Fingerprinter)>> =
            std::sync::Mutex::new(Vec::new());
        // A poisoned lock only means another thread panicked while pushing: the list is sound.
        // Held while one is made (once per parameters), so that none is made twice.
        let mut m = MADE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, f)) = m
            .iter()
            .find(|(l, f)| *l == lang && f.params.identical(&params))
        {
            return Ok(f.clone());
        }
        let f = Self::with_reference(params, &Reference::builtin(lang), Analyzer::for_lang(lang))?;
        if m.len() == KEEP {
            m.remove(0);
        }
        m.push((lang, f.clone()));
        Ok(f)
    }

    /// A fingerprinter with any reference distribution and stopwords.
    pub fn with_reference(
        params: Params,
        reference: &Reference,
        analyzer: Analyzer,
    ) -> Result<Self> {
        let classes = Classes::new(reference, params.classes)?;
        Self::new(params, classes, analyzer)
    }

    /// What makes two fingerprinters' fingerprints comparable: a number equal for equal
    /// parameters, classes and stopwords (the idf table and caps aside, which a builder or an
    /// index applies itself). Valid within one process only.
    pub fn identity(&self) -> u64 {
        self.identity
    }

    /// True when `fp` was made by a fingerprinter with this one's [`identity`](Self::identity).
    pub fn made(&self, fp: &Fingerprint) -> bool {
        fp.maker == self.identity
    }

    /// The same fingerprinter with samples and sketches weighted by `idf`.
    pub fn with_idf(mut self, idf: Idf) -> Self {
        self.idf = Some(Arc::new(idf));
        self
    }

    /// The idf table samples and sketches are weighted with, if any.
    pub fn idf(&self) -> Option<&Idf> {
        self.idf.as_deref()
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The prefix classes.
    pub fn classes(&self) -> &Classes {
        &self.classes
    }

    /// The analyzer (stopwords).
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// The caps material is drawn for: the fixed resolution, else [`AUTO_CAPS`] or what
    /// [`Fingerprinter::with_caps`] set.
    pub fn caps(&self) -> Resolution {
        self.caps
    }

    /// The same fingerprinter drawing material for `caps` (ignored when the resolution is fixed).
    pub fn with_caps(mut self, caps: Resolution) -> Self {
        if self.params.resolution.is_none() {
            self.caps = caps;
        }
        self
    }

    /// Counts the content terms of a text (`content_only`) or all its words. Each occurrence
    /// costs its 128-bit term hash and one probe of a per-document table; the stopword test and
    /// the prefix class are computed once per distinct word.
    fn count(&self, text: &str, content_only: bool) -> TermStats {
        thread_local! {
            // The word table, folding buffer and term list of this thread, reused from document
            // to document.
            static SCRATCH: std::cell::RefCell<(WordTable, String, Vec<CountedTerm>)> =
                std::cell::RefCell::new((WordTable::with_capacity(0), String::new(), Vec::new()));
        }
        SCRATCH.with_borrow_mut(|(table, scratch, terms)| {
            // Sized for the document, up to 65,536 words: a larger one grows the table as its
            // distinct words need, instead of 2.5 bytes of table per byte of text.
            table.reset((text.len() / 16).min(1 << 16));
            terms.clear();
            self.count_with(text, content_only, table, scratch, terms);
            let mut class_counts = vec![0u32; self.classes.k()];
            let mut total = 0;
            for &(_, c, class) in terms.iter() {
                class_counts[class as usize] += c;
                total += c;
            }
            let stats = TermStats {
                // One allocation of the exact size: a document's terms live on in its
                // fingerprint.
                terms: terms.iter().map(|&(h, c, _)| (h, c)).collect(),
                class_counts,
                total,
            };
            // A list grown for a huge document is let go, as the word table is: at most
            // 65,536 terms (2 MiB) stay.
            terms.shrink_to(1 << 16);
            stats
        })
    }

    /// Appends to `terms` each distinct term of `text` (or word, without `content_only`) in
    /// first-seen order: its 128-bit hash, occurrences, and prefix class.
    fn count_with(
        &self,
        text: &str,
        content_only: bool,
        table: &mut WordTable,
        scratch: &mut String,
        terms: &mut Vec<CountedTerm>,
    ) {
        text::for_each_word(text, scratch, |w| {
            if content_only && !w.has_letter {
                return;
            }
            let h = sketch::term_hash(w.text);
            let slot = table.find(h);
            let i = match table.get(slot) {
                Some(i) => i,
                None => {
                    // The stopword test and the class read small tables that stay in L1:
                    // a per-thread memo of both by term hash (1 MiB) counted English 2–9%
                    // slower, its cache misses costing more than it spared.
                    let i = if content_only && self.analyzer.is_stopword_hash(h) {
                        SKIP
                    } else {
                        terms.push((h, 0, self.classes.class_of(w.text) as u16));
                        terms.len() as u32 - 1
                    };
                    table.insert(slot, h, i);
                    i
                }
            };
            if i != SKIP {
                terms[i as usize].1 += 1;
            }
        });
    }

    /// The prefix-class vector: term occurrences per class.
    pub fn class_vector(&self, text: &str) -> Vec<u32> {
        self.analyze(text).class_counts
    }

    /// Deviations of a class vector from the reference.
    pub fn deviations(&self, vector: &[u32]) -> Vec<f64> {
        let n: f64 = vector.iter().map(|&c| c as f64).sum::<f64>().max(1.0);
        vector
            .iter()
            .zip(self.classes.expected())
            .map(|(&c, &p)| match self.params.deviation {
                Deviation::Relative => (c as f64 / n - p) / p,
                Deviation::ZScore => (c as f64 - n * p) / (n * p * (1.0 - p)).sqrt(),
            })
            .collect()
    }

    /// Analyses a document: terms, class counts and the set its samples and sketch come from;
    /// weighed as well when this fingerprinter has an idf table.
    pub fn fingerprint(&self, text: &str) -> Fingerprint {
        let mut fp = self.analyze(text);
        if self.idf.is_some() {
            self.weigh(&mut fp);
        }
        fp
    }

    /// Analyses a query: terms, class counts and the sketch, but no code material (a query
    /// draws what its probes need, [`Fingerprinter::probes`]).
    ///
    /// # Panics
    /// When the fingerprinter has no idf table.
    pub fn fingerprint_query(&self, text: &str) -> QueryFingerprint {
        let mut fp = self.analyze(text);
        let idf = self.weights();
        fp.weighed = Some(Weighed {
            idf: idf.id(),
            material: Material::default(),
            sketch: sketch::simhash(&fp.term_hashes, idf, self.params.sketch_words as usize),
        });
        QueryFingerprint(fp)
    }

    fn analyze(&self, text: &str) -> Fingerprint {
        let stats = self.count(text, true);
        let class_counts = stats.class_counts;
        let set = if stats.total > 0 {
            stats.terms
        } else {
            // No content terms: stopwords and numbers are all there is to compare.
            self.count(text, false).terms
        };
        let (term_hashes, exact) = if !set.is_empty() {
            (set, None)
        } else {
            // No words: the whitespace-normalised text is the one "term", so identical texts
            // get identical sketches, and its hash is the exact code.
            let normal = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut bytes = vec![Path::Exact.tag()];
            bytes.extend_from_slice(normal.as_bytes());
            (
                vec![(sketch::term_hash(&normal), 1)],
                Some(hash::h64(&bytes, hash::CODE_SEED)),
            )
        };
        Fingerprint {
            terms: class_counts.iter().sum(),
            class_counts,
            term_hashes,
            exact,
            weighed: None,
            maker: self.identity,
        }
    }

    fn weights(&self) -> &Idf {
        self.idf
            .as_deref()
            .expect("weighing needs an idf table (Fingerprinter::with_idf)")
    }

    /// Draws the fingerprint's samples and sketch with this fingerprinter's idf table.
    ///
    /// # Panics
    /// When the fingerprinter has no idf table.
    pub fn weigh(&self, fp: &mut Fingerprint) {
        let idf = self.weights();
        let mut material = Material {
            exact: fp.exact,
            caps: self.caps(),
            ..Material::default()
        };
        thread_local! {
            // A document's weights, sample numbers and draws: a build weighs millions of
            // documents on each thread, and these are dropped as soon as they are drawn from.
            static WEIGH: std::cell::RefCell<WeighScratch> = const {
                std::cell::RefCell::new((
                    Weights { samples: Vec::new(), sketch: Vec::new() },
                    Vec::new(),
                    Vec::new(),
                ))
            };
        }
        let sketch = WEIGH.with_borrow_mut(|(weights, seeds, drawn)| {
            weigh_terms_into(&fp.term_hashes, idf, true, weights);
            if fp.exact.is_none() {
                self.draw_material(fp, &weights.samples, seeds, drawn, &mut material);
            }
            let sketch = sketch::simhash_of(&weights.sketch, self.params.sketch_words as usize);
            // A rare long document leaves no more than this much behind per thread.
            const KEEP: usize = 1 << 16;
            if weights.samples.capacity() > KEEP {
                *weights = Weights {
                    samples: Vec::new(),
                    sketch: Vec::new(),
                };
            }
            sketch
        });
        fp.weighed = Some(Weighed {
            idf: idf.id(),
            material,
            sketch,
        });
    }

    /// The digits and samples of every path `fp` is indexed under, drawn from its `weighted`
    /// terms ([`Fingerprinter::weigh`]); `seeds` and `drawn` are scratch.
    fn draw_material(
        &self,
        fp: &Fingerprint,
        weighted: &[(u64, f64)],
        seeds: &mut Vec<u32>,
        drawn: &mut Vec<(u32, Option<u32>)>,
        material: &mut Material,
    ) {
        let caps = self.caps();
        let p = &self.params;
        let n = fp.terms;
        seeds.clear();
        drawn.clear();
        // Every path's samples in as few passes over the terms as there are 16 of them (the
        // similar path's on the cubed weights, [`similar_weights`]), each sample drawn exactly
        // as alone.
        if n >= p.min_terms && n > 0 {
            let dev = self.deviations(&fp.class_counts);
            for bounds in &p.schemes {
                material
                    .digits
                    .extend(dev.iter().map(|&d| interval(d, bounds)));
            }
            seeds.extend(sample_number_iter(
                FUZZY_SAMPLES,
                caps.bands as usize,
                caps.samples as usize,
            ));
        }
        let fuzzy = seeds.len();
        if n < p.short_below || n == 0 {
            seeds.extend(sample_number_iter(
                SHORT_SAMPLES,
                p.minhash_bands as usize,
                caps.short_rows as usize,
            ));
        }
        let short = seeds.len();
        if p.similar_bands > 0 {
            seeds.extend(sample_number_iter(
                SIMILAR_SAMPLES,
                p.similar_bands as usize,
                caps.similar_rows as usize,
            ));
        }
        draw_cubed_from(weighted, seeds, short, drawn);
        let frags = drawn.iter().map(|d| d.0);
        material.samples.extend(frags.clone().take(fuzzy));
        material
            .short
            .extend(frags.clone().skip(fuzzy).take(short - fuzzy));
        material.similar.extend(frags.skip(short));
    }

    /// The codes a document is indexed under at `resolution` (index thresholds: fuzzy from
    /// `min_terms`, short below `short_below`).
    ///
    /// # Panics
    /// When the fingerprint is not weighed or `resolution` exceeds the material's caps.
    pub fn codes(&self, fp: &Fingerprint, resolution: Resolution) -> Vec<Code> {
        let m = &fp
            .weighed
            .as_ref()
            .expect("codes need a weighed fingerprint")
            .material;
        m.codes(fp.terms, &self.params, self.classes.k(), resolution)
    }

    /// The probes of a query: for every path whose documents could be near copies of it, its
    /// codes and, per fuzzy band, their `budget − 1` most likely neighbours (the cheapest sets of
    /// changes first), per short band its `short_probes` likeliest codes (its own first). A
    /// query looks up the fuzzy path a little below `min_terms` and the short
    /// path a little above `short_below`, so that edits moving a document across a threshold
    /// do not hide it.
    ///
    /// # Panics
    /// When the fingerprinter has no idf table.
    pub fn probes(&self, fp: &impl Query, resolution: Resolution, budget: u8) -> Vec<Code> {
        self.query_probes(fp, resolution, budget, self.params.short_probes, None)
    }

    /// What a query looks up: [`Fingerprinter::probes`] with `short_budget` lookups per short
    /// band instead of the parameters' and, with `similar` = `Some(budget)`,
    /// [`Fingerprinter::similar_probes`] with that budget, from one weighing of the query's terms.
    ///
    /// # Panics
    /// As [`Fingerprinter::probes`] and [`Fingerprinter::similar_probes`].
    pub fn query_probes(
        &self,
        fp: &impl Query,
        resolution: Resolution,
        budget: u8,
        short_budget: u8,
        similar: Option<u8>,
    ) -> Vec<Code> {
        let fp = fp.analysis();
        let weighted = weigh_terms(&fp.term_hashes, self.weights(), false).samples;
        let mut out = self.probes_from(fp, &weighted, resolution, budget, short_budget);
        if let Some(b) = similar {
            self.similar_probes_from(fp, &weighted, resolution, b, &mut out);
        }
        out
    }

    /// [`Fingerprinter::probes`] with the query's terms weighed (`weigh_terms`).
    fn probes_from(
        &self,
        fp: &Fingerprint,
        weighted: &[(u64, f64)],
        resolution: Resolution,
        budget: u8,
        short_budget: u8,
    ) -> Vec<Code> {
        let p = &self.params;
        if let Some(exact) = fp.exact {
            return vec![Code::exact(exact)];
        }
        let mut out = Vec::new();
        let n = fp.terms;
        let mut drawn = Vec::new();
        if n >= p.min_terms - p.min_terms / 5 && n > 0 {
            let dev = self.deviations(&fp.class_counts);
            let total = n as f64;
            let expected = self.classes.expected();
            let bands = resolution.bands as usize;
            let samples = resolution.samples as usize;
            draw(
                weighted,
                &sample_numbers(FUZZY_SAMPLES, bands, samples),
                true,
                &mut drawn,
            );
            // Buffers of one band, reused.
            let mut coords: Vec<(u32, u32, f64)> = Vec::new();
            let (mut values, mut v, mut order, mut costs) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut sets = Vec::new();
            out.reserve(p.schemes.len() * bands * budget.max(1) as usize);
            for (s, bounds) in p.schemes.iter().enumerate() {
                for band in 0..bands {
                    let group = (s * bands + band) as u16;
                    // Each coordinate of the band: its value, the value across its nearest
                    // boundary (or the runner-up sample), and the cost of that change.
                    coords.clear();
                    for i in (band..self.classes.k()).step_by(bands) {
                        let (dist, other) = nearest_boundary(dev[i], bounds);
                        // Edits move a class's count by about √(ε·n·(f + p)) occurrences, so a
                        // deviation moves by that over n·p: distance in units of this noise.
                        let f = fp.class_counts[i] as f64 / total;
                        let pi = expected[i];
                        let cost = dist * dist * total * pi * pi / (f + pi);
                        coords.push((interval(dev[i], bounds) as u32, other as u32, cost));
                    }
                    for &(first, second) in &drawn[band * samples..(band + 1) * samples] {
                        coords.push((first, second.unwrap_or(first), SAMPLE_PROBE_COST));
                    }
                    values.clear();
                    values.extend(coords.iter().map(|c| c.0));
                    let members = values.len() - samples;
                    let key =
                        |v: &[u32]| fuzzy_key(s, resolution, band, &v[..members], &v[members..]);
                    out.push(Code {
                        key: key(&values),
                        path: Path::Fuzzy,
                        group,
                    });
                    order.clear();
                    order.extend((0..coords.len()).filter(|&c| coords[c].0 != coords[c].1));
                    order.sort_by(|&a, &b| coords[a].2.total_cmp(&coords[b].2).then(a.cmp(&b)));
                    order.truncate(PROBE_COORDS);
                    costs.clear();
                    costs.extend(order.iter().map(|&c| coords[c].2));
                    cheapest_sets(&costs, budget.max(1) as usize - 1, &mut sets);
                    for &set in &sets {
                        v.clear();
                        v.extend_from_slice(&values);
                        for (o, &c) in order.iter().enumerate() {
                            if set & (1 << o) != 0 {
                                v[c] = coords[c].1;
                            }
                        }
                        out.push(Code {
                            key: key(&v),
                            path: Path::Fuzzy,
                            group,
                        });
                    }
                }
            }
        }
        // Saturating: `short_below` is any u32 (found by fuzzing).
        if n < p.short_below.saturating_add(p.short_below / 5) || n == 0 {
            let rows = resolution.short_rows as usize;
            let seeds = sample_numbers(SHORT_SAMPLES, p.minhash_bands as usize, rows);
            ranked_band_probes(
                Path::Short,
                weighted,
                &seeds,
                rows,
                short_budget.max(1) as usize,
                &mut out,
            );
        }
        out
    }

    /// The similar-path probes of a query: per similar band, the `budget` combinations of its
    /// rows' samples that a similar document most likely drew. Row by row, the query's terms are
    /// ranked by their exponential clocks; a document whose weights differ from the query's draws
    /// one of the query's first few, and combinations are tried in order of their rank sum
    /// (at most 64 ranks per row, so at most 64 probes per band with one row). Empty when the
    /// index has no similar path or the query has no terms.
    ///
    /// # Panics
    /// When the fingerprinter has no idf table, or `resolution.similar_rows` is not between 1
    /// and [`MAX_SAMPLES`].
    pub fn similar_probes(&self, fp: &impl Query, resolution: Resolution, budget: u8) -> Vec<Code> {
        let fp = fp.analysis();
        let weighted = weigh_terms(&fp.term_hashes, self.weights(), false).samples;
        let mut out = Vec::new();
        self.similar_probes_from(fp, &weighted, resolution, budget, &mut out);
        out
    }

    /// [`Fingerprinter::similar_probes`] with the query's terms weighed, appended to `out`.
    fn similar_probes_from(
        &self,
        fp: &Fingerprint,
        weighted: &[(u64, f64)],
        resolution: Resolution,
        budget: u8,
        out: &mut Vec<Code>,
    ) {
        let p = &self.params;
        if fp.exact.is_some() || p.similar_bands == 0 || fp.term_hashes.is_empty() {
            return;
        }
        let rows = resolution.similar_rows as usize;
        assert!(
            (1..=MAX_SAMPLES as usize).contains(&rows),
            "similar rows must be between 1 and {MAX_SAMPLES}, not {rows}"
        );
        let weighted = similar_weights(weighted);
        let seeds = sample_numbers(SIMILAR_SAMPLES, p.similar_bands as usize, rows);
        ranked_band_probes(
            Path::Similar,
            &weighted,
            &seeds,
            rows,
            budget.max(1) as usize,
            out,
        );
    }

    /// Fingerprints and weighs a query text and returns its probes at `resolution`, with the
    /// fingerprint (for the sketch).
    ///
    /// # Panics
    /// When the fingerprinter has no idf table.
    pub fn query(
        &self,
        text: &str,
        resolution: Resolution,
        budget: u8,
    ) -> (QueryFingerprint, Vec<Code>) {
        let fp = self.fingerprint_query(text);
        let probes = self.probes(&fp, resolution, budget);
        (fp, probes)
    }
}

impl Fingerprint {
    /// The sketch, once weighed.
    pub fn sketch(&self) -> &[u64] {
        self.weighed.as_ref().map_or(&[], |w| &w.sketch[..])
    }

    /// Lets go of the terms and class counts of a weighed fingerprint, which only weighing
    /// needs: an index keeps a document's material and sketch. A build that fingerprints on
    /// many threads sheds them on the thread that made them (freeing memory another thread
    /// allocated costs glibc a lock of that thread's arena). An [`crate::IndexBuilder`] refuses
    /// a shed fingerprint it would have to weigh again; nothing changes when it is not weighed.
    pub fn shed_terms(&mut self) {
        if self.weighed.is_some() {
            self.term_hashes = Vec::new();
            self.class_counts = Vec::new();
        }
    }

    /// True when [`Fingerprint::shed_terms`] let go of its terms (an analysed document always
    /// has at least one: a text without words is its own term).
    pub fn is_shed(&self) -> bool {
        self.term_hashes.is_empty()
    }
}

impl Material {
    /// The document's codes at `resolution`, with index thresholds. `terms` and `params` are
    /// those of its fingerprint.
    ///
    /// # Panics
    /// When `resolution` exceeds the caps the material was drawn for.
    pub fn codes(
        &self,
        terms: u32,
        params: &Params,
        k: usize,
        resolution: Resolution,
    ) -> Vec<Code> {
        let caps = self.caps;
        assert!(
            resolution.within(caps),
            "resolution {resolution:?} exceeds the material's caps {caps:?}"
        );
        if let Some(exact) = self.exact {
            return vec![Code::exact(exact)];
        }
        let mut out = Vec::new();
        if terms >= params.min_terms && terms > 0 && !self.digits.is_empty() {
            fuzzy_codes(
                &self.digits,
                &self.samples,
                caps,
                params,
                k,
                resolution,
                &mut out,
            );
        }
        if (terms < params.short_below || terms == 0) && !self.short.is_empty() {
            band_codes(Path::Short, &self.short, caps, params, resolution, &mut out);
        }
        if !self.similar.is_empty() {
            band_codes(
                Path::Similar,
                &self.similar,
                caps,
                params,
                resolution,
                &mut out,
            );
        }
        out
    }
}

/// The fuzzy codes of a document from its digits (`schemes × k`) and samples (`caps.bands ×
/// caps.samples`, band-major) at `resolution`.
pub fn fuzzy_codes(
    digits: &[u8],
    samples: &[u32],
    caps: Resolution,
    params: &Params,
    k: usize,
    resolution: Resolution,
    out: &mut Vec<Code>,
) {
    let bands = resolution.bands as usize;
    let mut members = [0u32; 64];
    for s in 0..params.schemes.len() {
        let digits = &digits[s * k..(s + 1) * k];
        for band in 0..bands {
            let mut m = 0;
            for i in (band..k).step_by(bands) {
                if m < members.len() {
                    members[m] = digits[i] as u32;
                }
                m += 1;
            }
            let at = band * caps.samples as usize;
            let samples = &samples[at..at + resolution.samples as usize];
            out.push(Code {
                key: fuzzy_key(s, resolution, band, &members[..m.min(64)], samples),
                path: Path::Fuzzy,
                group: (s * bands + band) as u16,
            });
        }
    }
}

/// The band codes of a document on the short or the similar path from its fragments (`bands ×
/// caps' rows`, band-major: `minhash_bands × caps.short_rows` or `similar_bands ×
/// caps.similar_rows`) at `resolution`.
///
/// # Panics
/// For another path.
pub fn band_codes(
    path: Path,
    frags: &[u32],
    caps: Resolution,
    params: &Params,
    resolution: Resolution,
    out: &mut Vec<Code>,
) {
    let (bands, stride, rows) = match path {
        Path::Short => (params.minhash_bands, caps.short_rows, resolution.short_rows),
        Path::Similar => (
            params.similar_bands,
            caps.similar_rows,
            resolution.similar_rows,
        ),
        _ => panic!("band codes are made on the short and the similar path, not {path:?}"),
    };
    let stride = stride as usize;
    for band in 0..bands as usize {
        let f = &frags[band * stride..band * stride + rows as usize];
        out.push(Code {
            key: band_key(path, rows, band, f),
            path,
            group: band as u16,
        });
    }
}

/// A fuzzy band code: xxh3 of `[1, scheme, bands, samples, band, digits…, samples as u32 LE…]`.
fn fuzzy_key(scheme: usize, r: Resolution, band: usize, digits: &[u32], samples: &[u32]) -> u64 {
    let mut bytes = [0u8; 5 + 64 + 4 * MAX_SAMPLES as usize];
    bytes[..5].copy_from_slice(&[
        Path::Fuzzy.tag(),
        scheme as u8,
        r.bands,
        r.samples,
        band as u8,
    ]);
    let mut at = 5;
    for &d in digits {
        bytes[at] = d as u8;
        at += 1;
    }
    for &s in samples {
        bytes[at..at + 4].copy_from_slice(&s.to_le_bytes());
        at += 4;
    }
    hash::h64(&bytes[..at], hash::CODE_SEED)
}

/// A short (tag 2) or similar (tag 4) band code: xxh3 of `[tag, rows, band, fragments as u32
/// LE…]`.
fn band_key(path: Path, rows: u8, band: usize, frags: &[u32]) -> u64 {
    let mut bytes = [0u8; 3 + 4 * MAX_SAMPLES as usize];
    bytes[..3].copy_from_slice(&[path.tag(), rows, band as u8]);
    let mut at = 3;
    for &f in frags {
        bytes[at..at + 4].copy_from_slice(&f.to_le_bytes());
        at += 4;
    }
    hash::h64(&bytes[..at], hash::CODE_SEED)
}

/// A document's terms weighed, from one idf lookup per term.
struct Weights {
    /// The set source as sampling needs it: per element, its 64-bit MinHash base (the two
    /// halves of its term hash folded) and its weight tf · round(16 · idf), a whole number.
    samples: Vec<(u64, f64)>,
    /// The sketch's terms: [`sketch::sketch_base`] and `tf · idf` in f32 (the idf a whole
    /// number of sixteenths, so the same as [`Idf::get`] gives).
    sketch: Vec<(u32, f32)>,
}

/// What [`Fingerprinter::weigh`] reuses on a thread: the weights, the sample numbers and
/// the draws of a document.
type WeighScratch = (Weights, Vec<u32>, Vec<(u32, Option<u32>)>);

/// [`Weights`] of `terms`; the sketch's only `with_sketch`.
fn weigh_terms(terms: &[TermHash], idf: &Idf, with_sketch: bool) -> Weights {
    let mut w = Weights {
        samples: Vec::with_capacity(terms.len()),
        sketch: Vec::with_capacity(if with_sketch { terms.len() } else { 0 }),
    };
    weigh_terms_into(terms, idf, with_sketch, &mut w);
    w
}

/// [`weigh_terms`] into `w`'s vectors (cleared first), which a thread reuses from document to
/// document.
fn weigh_terms_into(terms: &[TermHash], idf: &Idf, with_sketch: bool, w: &mut Weights) {
    w.samples.clear();
    w.sketch.clear();
    for &(h, tf) in terms {
        let (q, s) = idf.quanta(h);
        w.samples
            .push((h as u64 ^ (h >> 64) as u64, (tf as u64 * q as u64) as f64));
        if with_sketch {
            w.sketch
                .push((sketch::sketch_base(h), tf as f32 * (s as f32 / IDF_SCALE)));
        }
    }
}

/// Weighted MinHash samples (P-MinHash, Moulton & Jiang 2018): sample `g` of a set is the
/// element with the smallest exponential clock `−ln(U) / weight`, two documents drawing the same
/// element with probability equal to the probability Jaccard of their weight vectors. `U` is
/// `(v + 0.5) / 2^32` for `v` the low (even `g`) or high (odd `g`) 32 bits of `derived(base,
/// SAMPLE_SEED_BASE + ⌊g/2⌋)`, so one hash serves two samples. Writes, per sample `g` of
/// `seeds`, the winner's fragment (low 32 bits of its base) and, with `runner_up`, the second
/// element's. Ties go to the smaller base.
fn draw(terms: &[(u64, f64)], seeds: &[u32], runner_up: bool, out: &mut Vec<(u32, Option<u32>)>) {
    for chunk in seeds.chunks(16) {
        draw16(terms, chunk, 0, runner_up, out);
    }
}

/// [`draw`] of every seed, those from position `cubed` on over the cubed weights
/// ([`similar_weights`]): the same samples as drawing the two parts apart, with the two kinds
/// side by side in the passes over the terms.
fn draw_cubed_from(
    terms: &[(u64, f64)],
    seeds: &[u32],
    cubed: usize,
    out: &mut Vec<(u32, Option<u32>)>,
) {
    for (c, chunk) in seeds.chunks(16).enumerate() {
        // The lanes of this chunk at or past `cubed`.
        let first = cubed.saturating_sub(16 * c).min(chunk.len());
        let cube = ((1u32 << chunk.len()) - (1u32 << first)) as u16;
        draw16(terms, chunk, cube, false, out);
    }
}

/// [`draw`] for at most 16 seeds, in one pass over the terms; seed `i` over the cubed weights
/// where bit `i` of `cube` is set.
fn draw16(
    terms: &[(u64, f64)],
    seeds: &[u32],
    cube: u16,
    runner_up: bool,
    out: &mut Vec<(u32, Option<u32>)>,
) {
    // (clock, base) of the best and second best element per sample.
    let none = (f64::INFINITY, u64::MAX);
    let mut kept = ([none; 16], [none; 16]);
    clocks(
        terms,
        seeds,
        cube,
        &mut kept,
        |(best, second), i| if runner_up { second[i].0 } else { best[i].0 },
        |(best, second), i, e| {
            if before(e, best[i]) {
                second[i] = best[i];
                best[i] = e;
            } else if before(e, second[i]) {
                second[i] = e;
            }
        },
    );
    let (best, second) = kept;
    for i in 0..seeds.len() {
        out.push((
            best[i].1 as u32,
            (runner_up && second[i].0.is_finite()).then_some(second[i].1 as u32),
        ));
    }
}

/// True when `(clock, base)` `a` draws before `b`: the smaller clock, ties to the smaller base.
#[inline(always)]
fn before(a: (f64, u64), b: (f64, u64)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// The one pass over a set's elements that every draw makes, for at most 16 sample numbers:
/// for element `(base, weight)` and sample `seeds[i]`, its clock `−ln(U) / weight` (§8.4 of
/// index-format.md; the weight [`cubed`] where bit `i` of `cube` is set) is handed
/// to `keep(state, i, (clock, base))` unless `1 − U` already shows it cannot beat
/// `bar(state, i)`.
#[inline(always)]
fn clocks<S>(
    terms: &[(u64, f64)],
    seeds: &[u32],
    cube: u16,
    state: &mut S,
    bar: impl Fn(&S, usize) -> f64,
    keep: impl FnMut(&mut S, usize, (f64, u64)),
) {
    debug_assert!(seeds.len() <= 16);
    #[cfg(target_arch = "x86_64")]
    if seeds.len() > 2
        && std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512dq")
    {
        // SAFETY: the CPU has AVX-512 F and DQ, checked just above.
        unsafe { clocks_avx512(terms, seeds, cube, state, bar, keep) };
        return;
    }
    clocks_scalar(terms, seeds, cube, state, bar, keep)
}

/// [`clocks`], one sample at a time.
#[inline(always)]
fn clocks_scalar<S>(
    terms: &[(u64, f64)],
    seeds: &[u32],
    cube: u16,
    state: &mut S,
    bar: impl Fn(&S, usize) -> f64,
    mut keep: impl FnMut(&mut S, usize, (f64, u64)),
) {
    for &(base, plain) in terms {
        let w3 = cubed(plain);
        let mut pair = (u32::MAX, 0u64);
        for (i, &g) in seeds.iter().enumerate() {
            let w = if cube >> i & 1 == 1 { w3 } else { plain };
            if pair.0 != g / 2 {
                pair = (g / 2, hash::derived(base, SAMPLE_SEED_BASE + g / 2));
            }
            let v = if g % 2 == 0 {
                pair.1 as u32
            } else {
                (pair.1 >> 32) as u32
            };
            // −ln(U) ≥ 1 − U: most elements are ruled out without a logarithm. The margin keeps
            // the decision that of the exact clock, whatever its rounding.
            let one_minus_u = ((!v) as f64 + 0.5) * (1.0 / 4_294_967_296.0);
            if one_minus_u >= bar(state, i) * w * (1.0 + 1e-9) {
                continue;
            }
            keep(state, i, (neg_ln_unit(v) / w, base));
        }
    }
}

/// [`clocks`] with the samples' hashes and the `1 − U` bound of 16 samples in two AVX-512
/// registers per element (one for at most 8 samples; the hashes of at most 8 pairs in one,
/// spread to the lanes by a permute): the same hashes and comparisons in IEEE-754 double
/// precision, so the same elements reach `keep`, in the same order per sample (samples are
/// independent: keeping one never changes another's bar). The clocks of the samples an element
/// passes the bound in are computed eight at a time ([`neg_ln_unit8`], the same bits), then
/// kept one sample at a time, as in [`clocks_scalar`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn clocks_avx512<S>(
    terms: &[(u64, f64)],
    seeds: &[u32],
    cube: u16,
    state: &mut S,
    bar: impl Fn(&S, usize) -> f64,
    mut keep: impl FnMut(&mut S, usize, (f64, u64)),
) {
    use std::arch::x86_64::*;
    const PHI: u64 = 0x9e37_79b9_7f4a_7c15;
    let n = seeds.len();
    // Per sample: what `hash::derived` adds to the element's base, and which half of the hash
    // is its U (lanes past `n` repeat sample 0 and are masked off).
    let mut adds = [0u64; 16];
    let mut shifts = [0u64; 16];
    let mut bars = [0f64; 16];
    // The distinct hashes of the samples (a band's samples come in pairs 2j, 2j + 1 that share
    // one), and per lane which of them it reads: with at most 8, as a build's 14 samples at 2
    // million documents are, each element's hashes are one register of fmix64, not two.
    let mut pair_adds = [0u64; 8];
    let mut pair_of = [0u64; 16];
    let mut pairs = 0usize;
    for i in 0..16 {
        let g = seeds[if i < n { i } else { 0 }];
        adds[i] = ((SAMPLE_SEED_BASE + g / 2) as u64 + 1).wrapping_mul(PHI);
        shifts[i] = if g.is_multiple_of(2) { 0 } else { 32 };
        bars[i] = bar(state, i.min(n - 1));
        let known = pair_adds[..pairs.min(8)].iter().position(|&a| a == adds[i]);
        pair_of[i] = match known {
            Some(j) => j as u64,
            None => {
                if pairs < 8 {
                    pair_adds[pairs] = adds[i];
                }
                pairs += 1;
                pairs as u64 - 1
            }
        };
    }
    // With at most 8 distinct hashes, each element's come from one register (`pair_adds`).
    let shared = pairs <= 8;
    // Lanes 8–15 hold samples only past the eighth.
    let halves = if n > 8 { 2 } else { 1 };
    let live: u16 = if n == 16 { u16::MAX } else { (1u16 << n) - 1 };
    let (m1, m2) = (
        _mm512_set1_epi64(0xff51_afd7_ed55_8ccd_u64 as i64),
        _mm512_set1_epi64(0xc4ce_b9fe_1a85_ec53_u64 as i64),
    );
    let low = _mm512_set1_epi64(0xffff_ffff);
    let (half, scale, margin) = (
        _mm512_set1_pd(0.5),
        _mm512_set1_pd(1.0 / 4_294_967_296.0),
        _mm512_set1_pd(1.0 + 1e-9),
    );
    // The clocks of the lanes that pass the bound, computed eight at a time.
    let mut clock = [0f64; 16];
    // fmix64 (hash::fmix64), eight at a time.
    let fmix8 = |mut k: __m512i| {
        k = _mm512_xor_si512(k, _mm512_srli_epi64::<33>(k));
        k = _mm512_mullo_epi64(k, m1);
        k = _mm512_xor_si512(k, _mm512_srli_epi64::<33>(k));
        k = _mm512_mullo_epi64(k, m2);
        _mm512_xor_si512(k, _mm512_srli_epi64::<33>(k))
    };
    let pair_adds = _mm512_loadu_si512(pair_adds.as_ptr().cast());
    let lanes = [
        _mm512_loadu_si512(pair_of.as_ptr().cast()),
        _mm512_loadu_si512(pair_of.as_ptr().add(8).cast()),
    ];
    for &(base, plain) in terms {
        let w3 = cubed(plain);
        let (bw_plain, bw_cubed) = (_mm512_set1_pd(plain), _mm512_set1_pd(w3));
        let b = _mm512_set1_epi64(base as i64);
        let hashes = shared.then(|| fmix8(_mm512_add_epi64(b, pair_adds)));
        let mut mask: u16 = 0;
        for (h, lanes) in lanes.iter().enumerate().take(halves) {
            let at = 8 * h;
            // SAFETY: `at + 8 ≤ 16`: every load and store below is within its array.
            let k = match hashes {
                Some(hashes) => _mm512_permutexvar_epi64(*lanes, hashes),
                None => fmix8(_mm512_add_epi64(
                    b,
                    _mm512_loadu_si512(adds.as_ptr().add(at).cast()),
                )),
            };
            let u = _mm512_and_si512(
                _mm512_srlv_epi64(k, _mm512_loadu_si512(shifts.as_ptr().add(at).cast())),
                low,
            );
            // 1 − U = ((!v) + 0.5) / 2^32, exact in f64 as in the scalar path.
            let one_minus_u = _mm512_mul_pd(
                _mm512_add_pd(_mm512_cvtepu64_pd(_mm512_xor_si512(u, low)), half),
                scale,
            );
            // Each lane's weight: plain, or cubed where `cube` says.
            let bw = _mm512_mask_blend_pd((cube >> at) as u8, bw_plain, bw_cubed);
            let bound = _mm512_mul_pd(
                _mm512_mul_pd(_mm512_loadu_pd(bars.as_ptr().add(at)), bw),
                margin,
            );
            // Not (1 − U ≥ bound), NaN included: the scalar path's `continue` negated.
            let pass = _mm512_cmp_pd_mask::<_CMP_NGE_UQ>(one_minus_u, bound) & (live >> at) as u8;
            if pass != 0 {
                // Early in a document most lanes pass: their −ln(U) side by side, not one
                // dependent chain of a division and 16 multiply-adds after another.
                let c = _mm512_div_pd(neg_ln_unit8(u), bw);
                _mm512_storeu_pd(clock.as_mut_ptr().add(at), c);
            }
            mask |= (pass as u16) << at;
        }
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            keep(state, i, (clock[i], base));
            bars[i] = bar(state, i);
        }
    }
}

/// [`neg_ln_unit`] of eight `v` (each below 2^32, in a 64-bit lane): the same IEEE-754
/// operations in the same order, lane by lane, so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn neg_ln_unit8(v: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512d {
    use std::arch::x86_64::*;
    let u = _mm512_mul_pd(
        _mm512_add_pd(_mm512_cvtepu64_pd(v), _mm512_set1_pd(0.5)),
        _mm512_set1_pd(1.0 / 4_294_967_296.0),
    );
    let bits = _mm512_castpd_si512(u);
    let mut e = _mm512_sub_epi64(
        _mm512_and_si512(_mm512_srli_epi64::<52>(bits), _mm512_set1_epi64(0x7ff)),
        _mm512_set1_epi64(1023),
    );
    let mut m = _mm512_castsi512_pd(_mm512_or_si512(
        _mm512_and_si512(bits, _mm512_set1_epi64(0x000f_ffff_ffff_ffff)),
        _mm512_set1_epi64(0x3ff0_0000_0000_0000),
    ));
    let above = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(m, _mm512_set1_pd(std::f64::consts::SQRT_2));
    m = _mm512_mask_mul_pd(m, above, m, _mm512_set1_pd(0.5));
    e = _mm512_mask_add_epi64(e, above, e, _mm512_set1_epi64(1));
    let one = _mm512_set1_pd(1.0);
    let y = _mm512_div_pd(_mm512_sub_pd(m, one), _mm512_add_pd(m, one));
    let y2 = _mm512_mul_pd(y, y);
    let mut sum = _mm512_set1_pd(ATANH[8]);
    for k in (0..8).rev() {
        sum = _mm512_add_pd(_mm512_mul_pd(sum, y2), _mm512_set1_pd(ATANH[k]));
    }
    let ln = _mm512_add_pd(
        _mm512_mul_pd(
            _mm512_cvtepi64_pd(e),
            _mm512_set1_pd(std::f64::consts::LN_2),
        ),
        _mm512_mul_pd(_mm512_set1_pd(2.0), _mm512_mul_pd(y, sum)),
    );
    // −x flips the sign bit, as the scalar negation does.
    _mm512_xor_pd(ln, _mm512_set1_pd(-0.0))
}

/// The similar path's weights: the cube of the samples' tf · idf, computed as `(q · q) · q` in
/// f64 (exact up to q = 2^17, then two IEEE-754 roundings: the same on every machine). Cubing
/// concentrates the samples on a document's most distinctive terms, which documents saying the same thing in other
/// words share, while the common words unrelated documents share weigh next to nothing:
/// on the development sets it found more pairs at cosine 0.5–0.7 with a third of the
/// candidates of the plain weights (README, "High-similarity search").
fn similar_weights(w: &[(u64, f64)]) -> Vec<(u64, f64)> {
    w.iter().map(|&(b, x)| (b, cubed(x))).collect()
}

/// A weight as the similar path draws with it: `(w · w) · w`, the one definition both
/// [`similar_weights`] and the shared passes of [`clocks`] use.
#[inline(always)]
fn cubed(w: f64) -> f64 {
    w * w * w
}

/// At most this many ranked samples per row of a similar query.
const RANKED_MAX: usize = 64;

/// Per seed of `seeds`, the fragments of the (at most) `k` elements with the smallest clocks,
/// smallest first: [`draw`]'s winner and the elements that would win next.
fn draw_ranked(terms: &[(u64, f64)], seeds: &[u32], k: usize) -> Vec<Vec<u32>> {
    debug_assert!((1..=RANKED_MAX).contains(&k));
    let mut out = Vec::with_capacity(seeds.len());
    // (clock, base) of the k best elements of seed `i` at `best[i·k..(i + 1)·k]`, ascending;
    // `len[i]` of them are set. Sized for `k`, not for RANKED_MAX: a short query ranks 3 per
    // seed, and clearing 16 × 64 slots per chunk had cost more than its whole draw.
    let mut best = vec![(f64::INFINITY, u64::MAX); 16 * k];
    for chunk in seeds.chunks(16) {
        best.fill((f64::INFINITY, u64::MAX));
        let mut kept = (&mut best[..], [0usize; 16]);
        clocks(
            terms,
            chunk,
            0,
            &mut kept,
            |(best, _), i| best[i * k + k - 1].0,
            |(best, len), i, e| {
                let list = &mut best[i * k..(i + 1) * k];
                let at = list.partition_point(|&x| before(x, e));
                if at < k {
                    list.copy_within(at..k - 1, at + 1);
                    list[at] = e;
                    len[i] = (len[i] + 1).min(k);
                }
            },
        );
        let len = kept.1;
        for (i, &n) in len.iter().enumerate().take(chunk.len()) {
            out.push(best[i * k..i * k + n].iter().map(|e| e.1 as u32).collect());
        }
    }
    out
}

/// The band probes of a query on a MinHash band path (short or similar): per band of `rows`
/// samples (`seeds`, band-major, drawn from `terms`), the `budget` combinations of its rows'
/// samples that a similar document most likely drew. Row by row, the terms are ranked by their
/// exponential clocks, and combinations are tried in order of their rank sum, so the first is
/// the band's own code (at most [`RANKED_MAX`] ranks per row). Nothing when `terms` is empty.
fn ranked_band_probes(
    path: Path,
    terms: &[(u64, f64)],
    seeds: &[u32],
    rows: usize,
    budget: usize,
    out: &mut Vec<Code>,
) {
    // The first `budget` rank tuples have rank sums up to the smallest s with
    // C(s + rows, rows) ≥ budget tuples, so no rank above s is ever used.
    let mut s = 0usize;
    while binomial(s + rows, rows) < budget {
        s += 1;
    }
    let ranked = draw_ranked(terms, seeds, (s + 1).min(RANKED_MAX));
    let bands = seeds.len() / rows;
    out.reserve(bands * budget);
    let mut tuples = Vec::new();
    let mut frags = [0u32; MAX_SAMPLES as usize];
    for band in 0..bands {
        let lists = &ranked[band * rows..(band + 1) * rows];
        let lens: Vec<usize> = lists.iter().map(Vec::len).collect();
        rank_tuples(&lens, budget, &mut tuples);
        for t in tuples.chunks_exact(rows) {
            for (r, &rank) in t.iter().enumerate() {
                frags[r] = lists[r][rank as usize];
            }
            out.push(Code {
                key: band_key(path, rows as u8, band, &frags[..rows]),
                path,
                group: band as u16,
            });
        }
    }
}

/// C(n, k), saturating.
fn binomial(n: usize, k: usize) -> usize {
    (0..k).fold(1usize, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// The first `count` tuples of ranks `(r_0, …)` with `r_i < lens[i]`, in order of their sum,
/// then lexicographically, written flat to `out`.
fn rank_tuples(lens: &[usize], count: usize, out: &mut Vec<u32>) {
    out.clear();
    if lens.contains(&0) {
        return;
    }
    let mut t = vec![0u32; lens.len()];
    let mut written = 0;
    // Tuples of sum s, for s = 0, 1, …, each in lexicographic order.
    let max_sum: usize = lens.iter().map(|l| l - 1).sum();
    for sum in 0..=max_sum {
        fill(lens, sum, 0, &mut t, out, &mut written, count);
        if written >= count {
            break;
        }
    }
    fn fill(
        lens: &[usize],
        left: usize,
        i: usize,
        t: &mut [u32],
        out: &mut Vec<u32>,
        written: &mut usize,
        count: usize,
    ) {
        if *written >= count {
            return;
        }
        if i + 1 == lens.len() {
            if left < lens[i] {
                t[i] = left as u32;
                out.extend_from_slice(t);
                *written += 1;
            }
            return;
        }
        for r in 0..lens[i].min(left + 1) {
            t[i] = r as u32;
            fill(lens, left - r, i + 1, t, out, written, count);
        }
    }
}

/// −ln(U) for U = (v + 0.5) / 2^32 ∈ (0, 1), computed with IEEE-754 additions,
/// multiplications and one division (no platform `ln`), so codes are the same on every machine:
/// U = m · 2^e with m ∈ [√½, √2), ln m = 2·atanh(y) for y = (m − 1)/(m + 1), whose series
/// y · Σ y^(2k) / (2k + 1), k = 0..8, is summed by Horner's rule from the highest term with
/// the coefficients `ATANH` (relative error below 1e-15).
pub fn neg_ln_unit(v: u32) -> f64 {
    let u = (v as f64 + 0.5) * (1.0 / 4_294_967_296.0);
    let bits = u.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        // m/2 ∈ (0.71, 1): the series then converges like 0.1716^(2k+1).
        m *= 0.5;
        e += 1;
    }
    let y = (m - 1.0) / (m + 1.0);
    let y2 = y * y;
    let mut sum = ATANH[8];
    for k in (0..8).rev() {
        sum = sum * y2 + ATANH[k];
    }
    const LN2: f64 = std::f64::consts::LN_2;
    -(e as f64 * LN2 + 2.0 * (y * sum))
}

/// 1 / (2k + 1) for k = 0..8, as the nearest f64 (Rust's parse of the decimal literal).
const ATANH: [f64; 9] = [
    1.0,
    1.0 / 3.0,
    1.0 / 5.0,
    1.0 / 7.0,
    1.0 / 9.0,
    1.0 / 11.0,
    1.0 / 13.0,
    1.0 / 15.0,
    1.0 / 17.0,
];

/// The interval of a deviation: how many boundaries lie at or below it.
fn interval(dev: f64, bounds: &[f32]) -> u8 {
    bounds.iter().take_while(|&&b| dev >= b as f64).count() as u8
}

/// Distance from a deviation to its nearest boundary, and the interval on that boundary's other side.
fn nearest_boundary(dev: f64, bounds: &[f32]) -> (f64, u8) {
    let here = interval(dev, bounds);
    let mut best = (f64::INFINITY, here);
    for (j, &b) in bounds.iter().enumerate() {
        let dist = (dev - b as f64).abs();
        if dist < best.0 {
            // Boundary j separates interval j from interval j + 1.
            let other = if here as usize > j {
                j as u8
            } else {
                j as u8 + 1
            };
            best = (dist, other);
        }
    }
    best
}

/// The `count` non-empty subsets of coordinates `0 … costs.len()−1` (costs ascending, at most
/// 32) with the smallest summed cost, cheapest first (ties: the subset generated first), as bit
/// masks. Each subset is generated once from its parent by *shifting* its highest element one up
/// or *expanding* it with the next element, as in Lv et al. (2007), so the heap holds at most
/// 2·count entries.
fn cheapest_sets(costs: &[f64], count: usize, out: &mut Vec<u32>) {
    #[derive(PartialEq)]
    struct Entry {
        cost: f64,
        order: u32,
        mask: u32,
    }
    impl Eq for Entry {}
    impl PartialOrd for Entry {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Entry {
        // A max-heap of the reverse: the cheapest, then the earliest pushed, on top.
        fn cmp(&self, o: &Self) -> Ordering {
            o.cost.total_cmp(&self.cost).then(o.order.cmp(&self.order))
        }
    }
    debug_assert!(costs.len() <= 32);
    out.clear();
    if costs.is_empty() || count == 0 {
        return;
    }
    let mut heap = BinaryHeap::with_capacity(2 * count + 1);
    let mut pushed = 0;
    heap.push(Entry {
        cost: costs[0],
        order: 0,
        mask: 1,
    });
    while out.len() < count {
        let Some(Entry { cost, mask, .. }) = heap.pop() else {
            break;
        };
        let last = 31 - mask.leading_zeros() as usize;
        if last + 1 < costs.len() {
            pushed += 1;
            heap.push(Entry {
                cost: cost - costs[last] + costs[last + 1],
                order: pushed,
                mask: (mask & !(1 << last)) | 1 << (last + 1),
            });
            pushed += 1;
            heap.push(Entry {
                cost: cost + costs[last + 1],
                order: pushed,
                mask: mask | 1 << (last + 1),
            });
        }
        out.push(mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Reference;
    use crate::text::Lang;

    fn fp() -> Fingerprinter {
        let p = Params::default();
        let classes = Classes::new(&Reference::builtin(Lang::En), p.classes).unwrap();
        Fingerprinter::new(p, classes, Analyzer::for_lang(Lang::En))
            .unwrap()
            .with_idf(Idf::uniform())
    }

    /// `for_lang` keeps the last few fingerprinters it made: each one it hands out, kept or
    /// not, answers as one made afresh with the same parameters, and other parameters or another
    /// language are never given a kept one.
    #[test]
    fn for_lang_shares_only_what_equal_parameters_made() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../samples/wiki-en/Choir.txt"
        ))
        .unwrap();
        // More parameter sets than are kept, twice over: the second round finds none of the
        // first ones kept, the repeats within a round find theirs.
        for _round in 0..2 {
            for classes in [24u16, 26, 24, 28, 30, 32, 36, 36] {
                let p = Params {
                    classes,
                    ..Params::default()
                };
                let fresh = Fingerprinter::with_reference(
                    p.clone(),
                    &Reference::builtin(Lang::En),
                    Analyzer::for_lang(Lang::En),
                )
                .unwrap();
                let made = Fingerprinter::for_lang(Lang::En, p).unwrap();
                assert_eq!(made.params(), fresh.params());
                assert_eq!(made.identity(), fresh.identity());
                let (a, b) = (
                    made.with_idf(Idf::uniform()),
                    fresh.with_idf(Idf::uniform()),
                );
                assert_eq!(
                    a.fingerprint(&text),
                    b.fingerprint(&text),
                    "{classes} classes"
                );
            }
        }
        // Boundaries equal by `==` but not to the bit get a fingerprinter of their own.
        let zero = |z: f32| Params {
            schemes: vec![vec![z, 0.45]],
            ..Params::default()
        };
        let (plus, minus) = (
            Fingerprinter::for_lang(Lang::En, zero(0.0)).unwrap(),
            Fingerprinter::for_lang(Lang::En, zero(-0.0)).unwrap(),
        );
        assert!(minus.params().schemes[0][0].is_sign_negative());
        assert_ne!(plus.identity(), minus.identity());
        let en = Fingerprinter::for_lang(Lang::En, Params::default()).unwrap();
        let de = Fingerprinter::for_lang(Lang::De, Params::default()).unwrap();
        assert_ne!(en.identity(), de.identity());
        assert_eq!(
            de.identity(),
            Fingerprinter::with_reference(
                Params::default(),
                &Reference::builtin(Lang::De),
                Analyzer::for_lang(Lang::De)
            )
            .unwrap()
            .identity()
        );
    }

    #[test]
    fn intervals_and_boundaries() {
        let b = [-0.3f32, 0.3];
        assert_eq!(interval(-1.0, &b), 0);
        assert_eq!(interval(0.0, &b), 1);
        assert_eq!(interval(0.31, &b), 2);
        let (d, other) = nearest_boundary(0.25, &b);
        assert!((d - 0.05).abs() < 1e-6);
        assert_eq!(other, 2);
        assert_eq!(nearest_boundary(0.35, &b).1, 1);
        assert_eq!(nearest_boundary(-0.5, &b).1, 1);
    }

    #[test]
    fn ladder_is_ordered_and_within_caps() {
        assert!(LADDER.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(Resolution::for_docs(0), LADDER[0].1);
        assert_eq!(Resolution::for_docs(2_000_000), Resolution::new(4, 2, 3, 3));
        assert_eq!(Resolution::for_docs(u64::MAX), LADDER[6].1);
        for (_, r) in LADDER {
            r.validate(24).unwrap();
        }
        assert_eq!(fp().caps(), AUTO_CAPS);
        assert_eq!(
            Resolution::for_docs_within(2_000_000, AUTO_CAPS),
            Resolution::new(4, 2, 3, 3)
        );
        assert_eq!(
            Resolution::for_docs_within(1 << 40, AUTO_CAPS),
            Resolution::new(3, 2, 3, 4)
        );
        assert_eq!(Resolution::for_docs_within(10, AUTO_CAPS), LADDER[0].1);
    }

    #[test]
    fn auto_caps_hold_the_ladder_up_to_20_million() {
        assert_eq!(Resolution::caps_up_to(20_000_000), AUTO_CAPS);
        assert_eq!(Resolution::caps_up_to(200_000), Resolution::new(4, 1, 2, 2));
        assert_eq!(Resolution::caps_up_to(1_000), Resolution::new(4, 0, 2, 1));
    }

    #[test]
    fn neg_ln_matches_ln() {
        for v in [
            0u32,
            1,
            12345,
            u32::MAX / 3,
            u32::MAX / 2,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let u = (v as f64 + 0.5) / 4_294_967_296.0;
            let want = -u.ln();
            assert!((neg_ln_unit(v) - want).abs() <= 1e-14 * want, "{v}");
        }
        // Pinned to the bit: the samples, and so the codes, depend on it.
        assert_eq!(neg_ln_unit(0).to_bits(), KAT_NEG_LN[0]);
        assert_eq!(neg_ln_unit(12345).to_bits(), KAT_NEG_LN[1]);
        assert_eq!(neg_ln_unit(u32::MAX / 3).to_bits(), KAT_NEG_LN[2]);
        assert_eq!(neg_ln_unit(u32::MAX).to_bits(), KAT_NEG_LN[3]);
    }

    const KAT_NEG_LN: [u64; 4] = [
        0x4036_dfb5_16f2_0bbe,
        0x4029_84f2_8845_ea25,
        0x3ff1_93ea_7aa5_030a,
        0x3de0_0000_0004_0000,
    ];

    /// The eight-lane −ln of the AVX-512 pass is [`neg_ln_unit`] to the bit: on the ends of the
    /// range, on each side of every mantissa's √2 turn (U = 2^−k·√2), and on a million hashes.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_neg_ln_equals_scalar() {
        if !std::is_x86_feature_detected!("avx512f") || !std::is_x86_feature_detected!("avx512dq") {
            return;
        }
        let mut values = vec![0, 1, 2, 12345, u32::MAX / 3, u32::MAX - 1, u32::MAX];
        for k in 1..32 {
            let turn = (std::f64::consts::SQRT_2 * 2f64.powi(32 - k) - 0.5) as u32;
            values.extend(turn.saturating_sub(2)..=turn.saturating_add(2));
        }
        values.extend((0..1_000_000u64).map(|i| hash::fmix64(i) as u32));
        for chunk in values.chunks(8) {
            let mut lanes = [0u64; 8];
            for (l, &v) in lanes.iter_mut().zip(chunk) {
                *l = v as u64;
            }
            let mut got = [0f64; 8];
            // SAFETY: the CPU has AVX-512 F and DQ, checked above; both arrays hold 8 lanes.
            unsafe {
                use std::arch::x86_64::*;
                let r = neg_ln_unit8(_mm512_loadu_si512(lanes.as_ptr().cast()));
                _mm512_storeu_pd(got.as_mut_ptr(), r);
            }
            for (&v, g) in lanes.iter().zip(got) {
                assert_eq!(g.to_bits(), neg_ln_unit(v as u32).to_bits(), "{v}");
            }
        }
    }

    #[test]
    fn cheapest_sets_come_in_order_of_cost() {
        let costs = [0.1, 0.2, 0.25, 0.9];
        let mut sets = Vec::new();
        cheapest_sets(&costs, 15, &mut sets);
        assert_eq!(sets.len(), 15);
        assert_eq!(sets[..4], [0b1, 0b10, 0b100, 0b11]);
        let cost = |s: &u32| {
            (0..4)
                .filter(|i| s & (1 << i) != 0)
                .map(|i| costs[i])
                .sum::<f64>()
        };
        assert!(sets.windows(2).all(|w| cost(&w[0]) <= cost(&w[1]) + 1e-12));
        let mut all = sets.clone();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 15, "every non-empty subset once");
    }

    #[test]
    fn samples_follow_the_weights() {
        // Element 22 weighs three times element 11: it wins about 3/4 of the samples, and the
        // fast rejection never changes a winner.
        let terms = [(11u64, 1.0), (22, 3.0)];
        let seeds: Vec<u32> = (0..4000).collect();
        let mut out = Vec::new();
        for chunk in seeds.chunks(16) {
            draw(&terms, chunk, true, &mut out);
        }
        let wins = out.iter().filter(|d| d.0 == 22).count();
        assert!((2850..3150).contains(&wins), "{wins}");
        assert!(out
            .iter()
            .all(|d| d.1 == Some(if d.0 == 22 { 11 } else { 22 })));
        // Against the clocks computed in full for a larger set.
        let many: Vec<(u64, f64)> = (0..300u64)
            .map(|i| (hash::fmix64(i + 1), (1 + i % 7) as f64))
            .collect();
        for g in 0..64u32 {
            let mut got = Vec::new();
            draw(&many, &[g], false, &mut got);
            let want = many
                .iter()
                .map(|&(b, w)| {
                    let x = hash::derived(b, SAMPLE_SEED_BASE + g / 2);
                    let v = if g % 2 == 0 {
                        x as u32
                    } else {
                        (x >> 32) as u32
                    };
                    (neg_ln_unit(v) / w, b)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                .unwrap();
            assert_eq!(got[0].0, want.1 as u32);
        }
        let mut one = Vec::new();
        draw(&[(7, 1.0)], &[5], true, &mut one);
        assert_eq!(one, [(7, None)]);
    }

    #[test]
    fn query_probes_contain_the_document_codes() {
        let f = fp();
        let text = include_str!("../../../tests/data/sample.txt");
        let doc = f.fingerprint(text);
        for r in LADDER
            .iter()
            .map(|e| e.1)
            .filter(|r| r.samples <= AUTO_CAPS.samples)
        {
            let codes = f.codes(&doc, r);
            let (fuzzy, similar): (Vec<Code>, Vec<Code>) =
                codes.into_iter().partition(|c| c.path == Path::Fuzzy);
            assert_eq!(fuzzy.len(), r.bands as usize, "{r:?}");
            assert_eq!(similar.len(), 2, "{r:?}");
            assert!(similar.iter().all(|c| c.path == Path::Similar));
            let probes = f.probes(&doc, r, 24);
            assert_eq!(probes.len(), r.bands as usize * 24);
            for c in &fuzzy {
                assert!(probes.contains(c), "{r:?}");
            }
            // A similar query's first probe per band is the document's own code.
            let similar_probes = f.similar_probes(&doc, r, 48);
            assert_eq!(similar_probes.len(), 2 * 48, "{r:?}");
            for (band, c) in similar.iter().enumerate() {
                assert_eq!(similar_probes[band * 48], *c, "{r:?}");
            }
            assert!(!probes.iter().any(|p| similar_probes.contains(p)));
        }
    }

    /// A short document's probes: per short band, its own code first, then the other
    /// combinations of its rows' ranked samples; with a budget of 1, the codes alone.
    #[test]
    fn short_probes_start_with_the_document_codes() {
        let f = fp();
        let text = include_str!("../../../tests/data/sample.txt");
        let short: String = text
            .split_whitespace()
            .take(30)
            .collect::<Vec<_>>()
            .join(" ");
        let doc = f.fingerprint(&short);
        assert!(doc.terms < f.params().min_terms);
        for rows in 1..=AUTO_CAPS.short_rows {
            let r = Resolution::new(4, 2, rows, 3);
            let own: Vec<Code> = f
                .codes(&doc, r)
                .into_iter()
                .filter(|c| c.path == Path::Short)
                .collect();
            assert_eq!(own.len(), 6);
            let alone = f.query_probes(&doc, r, 24, 1, None);
            assert_eq!(alone, own, "rows {rows}");
            let probes = f.query_probes(&doc, r, 24, SHORT_PROBES, None);
            let per_band = SHORT_PROBES as usize;
            assert_eq!(probes.len(), 6 * per_band, "rows {rows}");
            for (band, c) in own.iter().enumerate() {
                let mine = &probes[band * per_band..(band + 1) * per_band];
                assert_eq!(mine[0], *c);
                assert!(mine
                    .iter()
                    .all(|p| p.path == Path::Short && p.group == band as u16));
                let keys: std::collections::BTreeSet<u64> = mine.iter().map(|p| p.key).collect();
                assert_eq!(keys.len(), per_band, "rows {rows}: distinct probes");
            }
        }
    }

    /// (sample, clock bits, base) of every element that reaches `keep`, in order, and each
    /// sample's best (clock bits, base) at the end: what a pass of [`clocks`] decides.
    type ClockTrace = (Vec<(usize, u64, u64)>, Vec<(u64, u64)>);

    /// The [`ClockTrace`] of one pass.
    fn clock_trace(
        terms: &[(u64, f64)],
        seeds: &[u32],
        pass: impl FnOnce(
            &[(u64, f64)],
            &[u32],
            &mut [(f64, u64); 16],
            &dyn Fn(&[(f64, u64); 16], usize) -> f64,
            &mut dyn FnMut(&mut [(f64, u64); 16], usize, (f64, u64)),
        ),
    ) -> ClockTrace {
        let mut best = [(f64::INFINITY, u64::MAX); 16];
        let mut trace = Vec::new();
        pass(terms, seeds, &mut best, &|b, i| b[i].0, &mut |b, i, e| {
            trace.push((i, e.0.to_bits(), e.1));
            if before(e, b[i]) {
                b[i] = e;
            }
        });
        (trace, best.iter().map(|e| (e.0.to_bits(), e.1)).collect())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The AVX-512 pass (where the CPU has it) keeps exactly the elements, clocks and
        /// winners of the scalar pass, for any sample numbers and weights, heavy, light, tiny.
        #[test]
        fn vector_clocks_equal_scalar_clocks(
            bases in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..120),
            weights in proptest::collection::vec(1e-6f64..1e7, 120),
            // Some weights from 1e-110 to 1e110, whose cubes overflow or underflow.
            extreme in proptest::collection::vec((-110i32..110, 0usize..120), 0..8),
            seeds in proptest::collection::vec(0u32..5000, 1..=16),
            cube in proptest::prelude::any::<u16>(),
            // Seeds in pairs 2j, 2j + 1 that share a hash (one U in each half), as a path's
            // bands draw them.
            paired in proptest::prelude::any::<bool>(),
        ) {
            let seeds: Vec<u32> = if paired {
                seeds.iter().flat_map(|&g| [g & !1, g | 1]).take(seeds.len()).collect()
            } else {
                seeds
            };
            let mut weights = weights;
            for (e, at) in extreme {
                weights[at] = 1.5 * 10f64.powi(e);
            }
            let terms: Vec<(u64, f64)> = bases.iter().zip(&weights).map(|(&b, &w)| (b, w)).collect();
            let scalar = clock_trace(&terms, &seeds, |t, s, st, bar, keep| {
                clocks_scalar(t, s, cube, st, bar, keep)
            });
            let dispatched = clock_trace(&terms, &seeds, |t, s, st, bar, keep| {
                clocks(t, s, cube, st, bar, keep)
            });
            proptest::prop_assert_eq!(scalar, dispatched);
        }

        /// Drawn side by side in shared passes, plain and cubed samples are those drawn apart.
        #[test]
        fn mixed_draws_equal_separate_draws(
            bases in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..80),
            weights in proptest::collection::vec(1.0f64..5000.0, 80),
            seeds in proptest::collection::vec(0u32..9000, 0..40),
            cubed in 0usize..40,
        ) {
            let terms: Vec<(u64, f64)> = bases.iter().zip(&weights).map(|(&b, &w)| (b, w)).collect();
            let cubed = cubed.min(seeds.len());
            let mut apart = Vec::new();
            draw(&terms, &seeds[..cubed], false, &mut apart);
            draw(&similar_weights(&terms), &seeds[cubed..], false, &mut apart);
            let mut together = Vec::new();
            draw_cubed_from(&terms, &seeds, cubed, &mut together);
            proptest::prop_assert_eq!(together, apart);
        }
    }

    #[test]
    fn ranked_draws_extend_the_winner_in_clock_order() {
        let many: Vec<(u64, f64)> = (0..300u64)
            .map(|i| (hash::fmix64(i + 7), (1 + i % 5) as f64 * 1000.0))
            .collect();
        let seeds: Vec<u32> = (0..20).collect();
        let ranked = draw_ranked(&many, &seeds, 6);
        let mut best = Vec::new();
        draw(&many, &seeds, true, &mut best);
        for (g, list) in ranked.iter().enumerate() {
            // Against the clocks computed in full.
            let mut clocks: Vec<(f64, u64)> = many
                .iter()
                .map(|&(b, w)| {
                    let x = hash::derived(b, SAMPLE_SEED_BASE + g as u32 / 2);
                    let v = if g % 2 == 0 {
                        x as u32
                    } else {
                        (x >> 32) as u32
                    };
                    (neg_ln_unit(v) / w, b)
                })
                .collect();
            clocks.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let want: Vec<u32> = clocks[..6].iter().map(|c| c.1 as u32).collect();
            assert_eq!(list, &want, "seed {g}");
            assert_eq!(list[0], best[g].0);
            assert_eq!(Some(list[1]), best[g].1);
        }
        // Fewer elements than asked for: all of them.
        assert_eq!(draw_ranked(&many[..3], &[4], 6)[0].len(), 3);
    }

    /// Drawing only the ranks the first `budget` tuples can use gives the probes that the full
    /// ranking (64 ranks per row) gives.
    #[test]
    fn similar_probes_need_only_the_first_ranks() {
        let f = fp();
        let doc = f.fingerprint(include_str!("../../../tests/data/sample.txt"));
        for rows in 1..=MAX_SAMPLES {
            let r = Resolution::new(4, 2, 3, rows);
            for budget in [1u8, 7, 48, 200] {
                let got = f.similar_probes(&doc, r, budget);
                let weights = similar_weights(
                    &weigh_terms(&doc.term_hashes, f.idf().unwrap(), false).samples,
                );
                let seeds = sample_numbers(SIMILAR_SAMPLES, 2, rows as usize);
                let ranked = draw_ranked(&weights, &seeds, RANKED_MAX);
                let mut want = Vec::new();
                let mut tuples = Vec::new();
                for band in 0..2 {
                    let lists = &ranked[band * rows as usize..(band + 1) * rows as usize];
                    let lens: Vec<usize> = lists.iter().map(Vec::len).collect();
                    rank_tuples(&lens, budget as usize, &mut tuples);
                    for t in tuples.chunks_exact(rows as usize) {
                        let frags: Vec<u32> = t
                            .iter()
                            .enumerate()
                            .map(|(j, &k)| lists[j][k as usize])
                            .collect();
                        want.push(band_key(Path::Similar, rows, band, &frags));
                    }
                }
                let got: Vec<u64> = got.iter().map(|c| c.key).collect();
                assert_eq!(got, want, "rows {rows}, budget {budget}");
            }
        }
    }

    #[test]
    fn rank_tuples_come_by_rank_sum() {
        let mut out = Vec::new();
        rank_tuples(&[3, 3], 6, &mut out);
        assert_eq!(out, [0, 0, 0, 1, 1, 0, 0, 2, 1, 1, 2, 0]);
        rank_tuples(&[2, 1, 2], 10, &mut out);
        assert_eq!(out, [0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1], "only 4 exist");
        rank_tuples(&[4], 2, &mut out);
        assert_eq!(out, [0, 1]);
        rank_tuples(&[0, 3], 2, &mut out);
        assert!(out.is_empty());
    }

    /// Terms and class counts as the plain definition gives them: UAX #29 words, lower-cased
    /// char by char, with a letter, not stopwords; distinct terms in first-seen order.
    fn reference_terms(f: &Fingerprinter, text: &str) -> (Vec<TermHash>, Vec<u32>) {
        use unicode_segmentation::UnicodeSegmentation;
        let mut terms: Vec<(String, u32)> = Vec::new();
        let mut classes = vec![0u32; f.classes().k()];
        for w in text.unicode_words() {
            let t: String = w.chars().flat_map(char::to_lowercase).collect();
            if !t.chars().any(char::is_alphabetic) || f.analyzer().is_stopword(&t) {
                continue;
            }
            classes[f.classes().class_of(&t)] += 1;
            match terms.iter_mut().find(|e| e.0 == t) {
                Some(e) => e.1 += 1,
                None => terms.push((t, 1)),
            }
        }
        let hashes = terms
            .iter()
            .map(|(t, c)| (sketch::term_hash(t), *c))
            .collect();
        (hashes, classes)
    }

    #[test]
    fn counts_agree_with_the_plain_definition() {
        let f = fp();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/wiki-en");
        let mut texts: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        texts.push("Die Straße, DIE STRASSE und die Größe: ÄÖÜ äöü ß — Σίσυφος ΟΔΥΣΣΕΥΣ.".into());
        texts.push("don't e.g. U.S.A. 3.14 x_y naïve café 東京 🎉 a\u{0301}b".into());
        for text in &texts {
            let got = f.analyze(text);
            let (terms, classes) = reference_terms(&f, text);
            assert_eq!(got.term_hashes, terms);
            assert_eq!(got.class_counts, classes);
        }
    }

    /// A document's sketch, from its terms weighed once for samples and sketch, is §8.8's
    /// simhash of its terms with the idf table's weights.
    #[test]
    fn sketch_of_weighed_terms_is_the_simhash() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/wiki-en");
        let texts: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        let plain = fp();
        let mut df: std::collections::HashMap<u32, u32> = Default::default();
        for t in &texts {
            for &(h, _) in &plain.analyze(t).term_hashes {
                *df.entry(sketch::idf_key(h)).or_default() += 1;
            }
        }
        let idf = Idf::from_df(&df, texts.len() as u32);
        let f = fp().with_idf(idf.clone());
        for t in &texts {
            let doc = f.fingerprint(t);
            let want = sketch::simhash(&doc.term_hashes, &idf, f.params().sketch_words as usize);
            assert_eq!(doc.sketch(), &want[..]);
            assert_eq!(f.fingerprint_query(t).sketch(), &want[..]);
        }
    }

    #[test]
    fn paths_by_length() {
        let f = fp();
        let r = Resolution::for_docs(0);
        let short = f.fingerprint(
            "Quantum chromodynamics describes strong interactions between quarks and gluons.",
        );
        let codes = f.codes(&short, r);
        let on = |codes: &[Code], path| codes.iter().filter(|c| c.path == path).count();
        assert_eq!(on(&codes, Path::Short), 6);
        assert_eq!(on(&codes, Path::Similar), 2);
        assert_eq!(codes.len(), 8);
        let none = f.fingerprint("the of and 1234");
        let codes = f.codes(&none, r);
        assert_eq!(on(&codes, Path::Short), 6, "{none:?}");
        assert_eq!(on(&codes, Path::Similar), 2, "{none:?}");
        let punct = f.fingerprint("--- ... !!!");
        let codes = f.codes(&punct, r);
        assert_eq!(codes.len(), 1);
        assert_eq!(codes[0].path, Path::Exact);
        assert_eq!(f.probes(&punct, r, 24), codes);
        assert!(f.similar_probes(&punct, r, 48).is_empty());
    }
}
