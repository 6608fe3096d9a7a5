//! Index terms → prefix-class vector → deviations from the reference → fuzzy codes; plus the
//! per-document sketch and the short-document path. The ONE path shared by build and query.
//!
//! A document's codes (the MPHF keys) come from one of three paths:
//! - **fuzzy** (documents with at least [`Params::min_terms`] terms): for every fuzzification
//!   scheme and every band (an interleaved subset of the classes), the interval of each class's
//!   deviation, hashed. Queries also probe the codes obtained by moving the [`Params::probes`]
//!   deviations nearest a boundary across it (multi-probe).
//! - **short** (documents with fewer than [`Params::short_below`] terms): MinHash bands over the
//!   set of terms, as in LSH (Broder 1997; Indyk & Motwani 1998).
//! - **exact** (documents with no words at all): a hash of the whitespace-normalised text.
//!
//! Every document also gets a simhash sketch (Charikar 2002) of its tf-idf vector (see
//! [`crate::sketch`]), which turns a candidate into an estimated cosine similarity.

use crate::error::{Error, Result};
use crate::hash;
use crate::reference::Classes;
use crate::sketch::{self, Idf, TermHash};
use crate::text::{self, Analyzer};
use std::collections::HashMap;
use unicode_segmentation::UnicodeSegmentation;

/// How deviations from the reference are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Deviation {
    /// `(f_i − p_i) / p_i`: relative to the expected share.
    Relative = 0,
    /// `(c_i − n p_i) / sqrt(n p_i (1 − p_i))`: a z-score that accounts for document length.
    ZScore = 1,
}

/// Every parameter of fingerprinting. The values in force are stored in the index, so a query
/// always uses the parameters its index was built with.
///
/// Defaults (chosen by measurement; see the README's "Choosing the defaults"):
/// - `classes` = 24 prefix classes
/// - `bands` = 3: class i belongs to band i mod 3 (8 classes per band)
/// - `schemes` = one fuzzification scheme of 3 intervals, boundaries `[-0.45, 0.45]`; more
///   (staggered) schemes are supported, but multi-probe queries already look across the
///   boundaries, so extra schemes cost index bytes without adding recall
/// - `deviation` = [`Deviation::Relative`]
/// - `probes` = 4 boundary-nearest deviations flipped per query code (2⁴ = 16 lookups per code)
/// - `min_terms` = 30: documents with fewer terms get no fuzzy codes
/// - `short_below` = 60: documents with fewer terms get MinHash band codes
/// - `minhash_bands` = 6 bands of `minhash_rows` = 2 rows
/// - `sketch_words` = 3: a 192-bit simhash per document
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Params {
    /// Number of prefix classes, k.
    pub classes: u16,
    /// Number of bands; class i belongs to band i mod `bands`.
    pub bands: u8,
    /// Per fuzzification scheme, its interval boundaries (ascending); r = boundaries + 1 intervals.
    pub schemes: Vec<Vec<f32>>,
    /// How deviations are measured.
    pub deviation: Deviation,
    /// Default number of deviations flipped across their nearest boundary per query code.
    pub probes: u8,
    /// Documents with at least this many terms get fuzzy codes.
    pub min_terms: u32,
    /// Documents with fewer than this many terms get MinHash band codes.
    pub short_below: u32,
    /// MinHash bands of the short path.
    pub minhash_bands: u8,
    /// MinHash rows (hash functions) per band.
    pub minhash_rows: u8,
    /// Simhash sketch length in 64-bit words.
    pub sketch_words: u8,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 24,
            bands: 3,
            schemes: vec![vec![-0.45, 0.45]],
            deviation: Deviation::Relative,
            probes: 4,
            min_terms: 30,
            short_below: 60,
            minhash_bands: 6,
            minhash_rows: 2,
            sketch_words: 3,
        }
    }
}

impl Params {
    /// Checks that the parameters make sense; the error says which one does not.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(m));
        if self.classes < 2 {
            return bad(format!("classes must be at least 2, not {}", self.classes));
        }
        if self.bands == 0 || self.bands as u16 > self.classes {
            return bad(format!(
                "bands must be between 1 and classes ({}), not {}",
                self.classes, self.bands
            ));
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
        if self.probes > 8 {
            return bad(format!(
                "probes must be at most 8 (2^8 lookups per code), not {}",
                self.probes
            ));
        }
        if self.minhash_bands == 0 || self.minhash_rows == 0 || self.minhash_rows > 16 {
            return bad("minhash bands must be at least 1 and rows between 1 and 16".into());
        }
        if !(1..=8).contains(&self.sketch_words) {
            return bad(format!(
                "sketch words must be between 1 and 8, not {}",
                self.sketch_words
            ));
        }
        Ok(())
    }

    /// The number of codes in a fuzzy document: schemes × bands.
    pub fn fuzzy_codes(&self) -> usize {
        self.schemes.len() * self.bands as usize
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
    /// MinHash band codes (short documents).
    Short,
    /// Exact hash of the normalised text (documents without words).
    Exact,
}

impl Path {
    /// The path's tag: the first byte of every code it hashes.
    fn tag(self) -> u8 {
        match self {
            Path::Fuzzy => 1,
            Path::Short => 2,
            Path::Exact => 3,
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Path::Fuzzy => "fuzzy",
            Path::Short => "short",
            Path::Exact => "exact",
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
    /// Which (scheme, band) or MinHash band made it; collisions are counted per group.
    pub group: u16,
}

/// What fingerprinting a document gives.
#[derive(Clone, Debug, Default)]
pub struct Fingerprint {
    /// Number of index terms (occurrences).
    pub terms: u32,
    /// The codes (one per scheme × band, per MinHash band, or the exact code).
    pub codes: Vec<Code>,
    /// The simhash sketch (empty when the fingerprinter has no idf table yet, as while a build
    /// is still learning it).
    pub sketch: Vec<u64>,
    /// The document's terms for the sketch: hash and frequency.
    pub term_hashes: Vec<TermHash>,
}

/// Fingerprints documents with one set of parameters, classes and stopwords.
#[derive(Clone, Debug)]
pub struct Fingerprinter {
    params: Params,
    classes: Classes,
    analyzer: Analyzer,
    /// Band of each class.
    bands: Vec<Vec<usize>>,
    /// The weights of the sketch; `None` while a build is still counting document frequencies.
    idf: Option<Idf>,
}

/// Term statistics of one document.
struct TermStats {
    /// Per distinct term, in first-seen order: its 128-bit hash, occurrences, and prefix class.
    counts: Vec<(u128, u32, u16)>,
    total: u32,
}

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
        let b = params.bands as usize;
        let bands = (0..b)
            .map(|band| (band..classes.k()).step_by(b).collect())
            .collect();
        Ok(Fingerprinter {
            params,
            classes,
            analyzer,
            bands,
            idf: None,
        })
    }

    /// The same fingerprinter with sketches weighted by `idf`.
    pub fn with_idf(mut self, idf: Idf) -> Self {
        self.idf = Some(idf);
        self
    }

    /// The idf table sketches are weighted with, if any.
    pub fn idf(&self) -> Option<&Idf> {
        self.idf.as_ref()
    }

    /// The sketch of a document's terms (uniform weights when there is no idf table).
    pub fn sketch(&self, term_hashes: &[TermHash]) -> Vec<u64> {
        let uniform;
        let idf = match &self.idf {
            Some(i) => i,
            None => {
                uniform = Idf::uniform();
                &uniform
            }
        };
        sketch::simhash(term_hashes, idf, self.params.sketch_words as usize)
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

    /// Counts the content terms of a text (`content_only`) or all its words, hashing each
    /// distinct term once. No allocation per word unless it needs case folding.
    fn count(&self, text: &str, content_only: bool) -> TermStats {
        let mut index: HashMap<u128, usize> = HashMap::new();
        let mut counts: Vec<(u128, u32, u16)> = Vec::new();
        let mut total = 0u32;
        let mut folded = String::new();
        for word in text.unicode_words() {
            let term: &str = if word
                .bytes()
                .any(|b| !b.is_ascii() || b.is_ascii_uppercase())
            {
                folded.clear();
                folded.extend(word.chars().flat_map(char::to_lowercase));
                &folded
            } else {
                word
            };
            if content_only && (!text::is_content_word(term) || self.analyzer.is_stopword(term)) {
                continue;
            }
            total += 1;
            let h = sketch::term_hash(term);
            match index.get(&h) {
                Some(&i) => counts[i].1 += 1,
                None => {
                    index.insert(h, counts.len());
                    counts.push((h, 1, self.classes.class_of(term) as u16));
                }
            }
        }
        TermStats { counts, total }
    }

    fn stats(&self, text: &str) -> TermStats {
        self.count(text, true)
    }

    /// The prefix-class vector: term occurrences per class.
    pub fn class_vector(&self, text: &str) -> Vec<u32> {
        let mut v = vec![0u32; self.classes.k()];
        for &(_, c, class) in &self.stats(text).counts {
            v[class as usize] += c;
        }
        v
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

    /// Fingerprints a document for indexing: its codes and sketch.
    pub fn fingerprint(&self, text: &str) -> Fingerprint {
        self.run(text, 0)
    }

    /// Fingerprints a query: its codes plus the multi-probe variants (`probes` deviations nearest
    /// a boundary flipped per fuzzy code), and its sketch. Queries of any length use every path
    /// whose documents could be near copies of them.
    pub fn query_probes(&self, text: &str, probes: u8) -> Fingerprint {
        self.run(text, probes.min(8))
    }

    fn run(&self, text: &str, probes: u8) -> Fingerprint {
        let stats = self.stats(text);
        let query = probes > 0;
        let mut codes = Vec::new();
        let p = &self.params;
        // A query looks up the fuzzy path a little below min_terms and the short path a little
        // above short_below, so that edits moving a document across a threshold do not hide it.
        let (fuzzy_from, short_to) = if query {
            (
                p.min_terms - p.min_terms / 5,
                p.short_below + p.short_below / 5,
            )
        } else {
            (p.min_terms, p.short_below)
        };
        if stats.total >= fuzzy_from && stats.total > 0 {
            self.fuzzy_codes(&stats, probes, &mut codes);
        }
        let words_only;
        let set_source = if stats.total > 0 {
            &stats
        } else {
            // No content terms: stopwords and numbers are all there is to compare.
            words_only = self.count(text, false);
            &words_only
        };
        if set_source.total > 0 && (stats.total < short_to || stats.total == 0) {
            self.minhash_codes(set_source, &mut codes);
        }
        if set_source.total == 0 {
            let normal: Vec<&str> = text.split_whitespace().collect();
            let mut bytes = vec![Path::Exact.tag()];
            bytes.extend_from_slice(normal.join(" ").as_bytes());
            codes.push(Code {
                key: hash::h64(&bytes, hash::CODE_SEED),
                path: Path::Exact,
                group: 0,
            });
        }
        let term_hashes: Vec<TermHash> = if set_source.total > 0 {
            set_source.counts.iter().map(|&(h, c, _)| (h, c)).collect()
        } else {
            // No words: the whitespace-normalised text is the one "term", so identical texts
            // get identical sketches.
            let normal: Vec<&str> = text.split_whitespace().collect();
            vec![(sketch::term_hash(&normal.join(" ")), 1)]
        };
        let sketch = if self.idf.is_some() {
            self.sketch(&term_hashes)
        } else {
            Vec::new()
        };
        Fingerprint {
            terms: stats.total,
            codes,
            sketch,
            term_hashes,
        }
    }

    fn fuzzy_codes(&self, stats: &TermStats, probes: u8, out: &mut Vec<Code>) {
        let mut vector = vec![0u32; self.classes.k()];
        for &(_, c, class) in &stats.counts {
            vector[class as usize] += c;
        }
        let dev = self.deviations(&vector);
        let mut digits = Vec::with_capacity(self.classes.k());
        for (s, bounds) in self.params.schemes.iter().enumerate() {
            for (b, members) in self.bands.iter().enumerate() {
                let group = (s * self.bands.len() + b) as u16;
                digits.clear();
                digits.extend(members.iter().map(|&i| interval(dev[i], bounds)));
                let header = [Path::Fuzzy.tag(), s as u8, b as u8];
                let key_of = |d: &[u8]| {
                    let mut bytes = Vec::with_capacity(3 + d.len());
                    bytes.extend_from_slice(&header);
                    bytes.extend_from_slice(d);
                    hash::h64(&bytes, hash::CODE_SEED)
                };
                out.push(Code {
                    key: key_of(&digits),
                    path: Path::Fuzzy,
                    group,
                });
                if probes == 0 {
                    continue;
                }
                // The deviations nearest a boundary, and the interval across it.
                let mut near: Vec<(f64, usize, u8)> = members
                    .iter()
                    .enumerate()
                    .map(|(j, &i)| {
                        let (dist, other) = nearest_boundary(dev[i], bounds);
                        (dist, j, other)
                    })
                    .collect();
                near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                near.truncate(probes as usize);
                for mask in 1u32..(1 << near.len()) {
                    let mut d = digits.clone();
                    for (bit, &(_, j, other)) in near.iter().enumerate() {
                        if mask & (1 << bit) != 0 {
                            d[j] = other;
                        }
                    }
                    out.push(Code {
                        key: key_of(&d),
                        path: Path::Fuzzy,
                        group,
                    });
                }
            }
        }
    }

    fn minhash_codes(&self, stats: &TermStats, out: &mut Vec<Code>) {
        let rows = self.params.minhash_rows as u32;
        let n = self.params.minhash_bands as u32 * rows;
        let mut mins = vec![u64::MAX; n as usize];
        for &(h128, _, _) in &stats.counts {
            // The term's 64-bit MinHash base: the two halves of its 128-bit hash folded.
            let h = h128 as u64 ^ (h128 >> 64) as u64;
            for (j, m) in mins.iter_mut().enumerate() {
                *m = (*m).min(hash::derived(h, j as u32));
            }
        }
        for (band, rows) in mins.chunks(rows as usize).enumerate() {
            let mut bytes = vec![Path::Short.tag(), band as u8];
            for r in rows {
                bytes.extend_from_slice(&r.to_le_bytes());
            }
            out.push(Code {
                key: hash::h64(&bytes, hash::CODE_SEED),
                path: Path::Short,
                group: band as u16,
            });
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Reference;
    use crate::text::Lang;

    fn fp() -> Fingerprinter {
        let p = Params::default();
        let classes = Classes::new(&Reference::builtin(Lang::En), p.classes).unwrap();
        Fingerprinter::new(p, classes, Analyzer::for_lang(Lang::En)).unwrap()
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
    fn query_probes_contain_the_document_codes() {
        let f = fp();
        let text = include_str!("../tests/data/sample.txt");
        let doc = f.fingerprint(text);
        let q = f.query_probes(text, 3);
        assert_eq!(doc.codes.len(), f.params().fuzzy_codes());
        assert_eq!(q.codes.len(), f.params().fuzzy_codes() * 8);
        for c in &doc.codes {
            assert!(q.codes.contains(c));
        }
        assert_eq!(doc.sketch, q.sketch);
    }

    #[test]
    fn paths_by_length() {
        let f = fp();
        let short = f.fingerprint(
            "Quantum chromodynamics describes strong interactions between quarks and gluons.",
        );
        assert!(short.codes.iter().all(|c| c.path == Path::Short));
        assert_eq!(short.codes.len(), 6);
        let none = f.fingerprint("the of and 1234");
        assert!(none.codes.iter().all(|c| c.path == Path::Short), "{none:?}");
        let punct = f.fingerprint("--- ... !!!");
        assert_eq!(punct.codes.len(), 1);
        assert_eq!(punct.codes[0].path, Path::Exact);
    }
}
