//! The per-document sketch: a simhash (Charikar 2002) of the tf-idf term vector, whose Hamming
//! distances estimate the cosine similarity of two documents; and the collection's idf table
//! that weights it.
//!
//! The idf table comes from the language ([`Idf::builtin`]: estimated from wordfreq's word
//! frequencies, `reference-corpus/<lang>-idf.tsv`, so that a document is weighed alike in every
//! build) or is learned while building (from the first [`IDF_SAMPLE`] documents, [`Idf::from_df`],
//! with a view of its own for the sketch), and is stored in the index, so that a query is
//! weighted exactly as the documents it is compared with.

use crate::error::{Error, Result};
use crate::format::{Reader, Writer};
use crate::hash;
use crate::text::{self, Analyzer, Lang};
use std::collections::{BTreeMap, HashMap};

/// The idf table is learned from at most this many documents (the first ones added), which
/// bounds the memory a build holds before its sketches can be computed.
pub const IDF_SAMPLE: usize = 20_000;

/// idf values are stored as `round(idf · IDF_SCALE)` in a `u8`.
pub const IDF_SCALE: f32 = 16.0;

/// The weight, in documents, of the language's idf table where a build learns its own
/// ([`Idf::from_df_with_prior`]): enough that a handful of documents do not zero the weights of
/// the terms they share, little beside the hundreds to 20,000 a table is learned from (20 cost
/// 0.04 of precision on crate licences, whose boilerplate it weighed up; 2 to 5 stay within
/// 0.005 on every development set).
pub const PRIOR_DOCS: u32 = 5;

/// A term as the sketch sees it: its 128-bit hash `xxh3_128(term, TERM_SEED)` and frequency.
pub type TermHash = (u128, u32);

/// The inverse document frequency ln(N/df) of a term in `df` of `docs` documents, 0 for a term
/// in no document: the one idf of the project (the index's weights, quantised by [`Idf`]; the
/// exact tf-idf cosines of `pocketdex-methods` and of the evaluation).
#[inline]
pub fn idf(docs: u64, df: u32) -> f64 {
    if df == 0 {
        0.0
    } else {
        (docs as f64 / df as f64).ln()
    }
}

/// The 32-bit key of a term in the idf table: the top 32 bits of its 128-bit hash.
#[inline]
pub fn idf_key(h: u128) -> u32 {
    (h >> 96) as u32
}

/// Inverse document frequencies of a collection's or a language's common terms: `ln(N / df)`
/// for the terms in the table ([`Idf::from_df`], [`Idf::builtin`]), a default for every other
/// (rarer) term.
///
/// A learned table has two views (format version 11 on). The samples of the codes weigh the
/// `N/2 + 500` terms of highest df and give every other term one default, as before; the sketch
/// weighs up to [`SKETCH_TERMS`] terms (the *sketch-only* entries beyond those) and gives the
/// rest a default of their own. With a single short table, a collection of a few hundred long
/// documents weighed its rare, unshared terms at the mean idf of its mid-frequency ones, and
/// two different State of the Union addresses (tf-idf cosine 0.49) scored 0.80; the codes keep
/// their weights because the recall of `--similar` was measured with them.
#[derive(Clone, Debug, PartialEq)]
pub struct Idf {
    /// Documents the frequencies were counted over; 0 for a language's table (estimated from
    /// word frequencies, [`LanguageIdf`]).
    pub docs: u32,
    /// idf of terms not in the table.
    pub default: f32,
    /// `(key, round(idf · 16))`, sorted by key.
    table: Vec<(u32, u8)>,
    /// The sketch-only entries: `(key, round(idf · 16))`, sorted by key, none in `table`.
    sketch_only: Vec<(u32, u8)>,
    /// The sketch's idf of terms in neither list: `default` when `sketch_only` is empty.
    sketch_default: f32,
    /// Checksum of the encoded table: identifies it ([`Idf::id`]).
    id: u64,
    /// Both lists again, for lookups in O(1): buckets of [`IDF_BUCKET`] entries, one cache
    /// line each, chosen by the key's low bits (keys are hash bits, so uniform).
    buckets: Vec<IdfBucket>,
    /// `default` and `sketch_default` in sixteenths.
    quanta_default: (u16, u16),
}

/// At most this many entries in a learned table, sketch-only ones included: what a table
/// learned from [`IDF_SAMPLE`] documents keeps (`IDF_SAMPLE / 2 + 500`), so that a sketch is
/// weighed alike in a collection of any size.
pub const SKETCH_TERMS: usize = IDF_SAMPLE / 2 + 500;

/// A learned table's sketch view holds entries past the samples' until the terms it leaves out
/// have idfs within this coefficient of variation (standard deviation over mean, weighed by
/// occurrences), so that their one default misweighs none by much. On the development sets,
/// Wikipedia leads need no entries beyond the samples' (0.10 there already); a few hundred State
/// of the Union addresses (0.53) and Linux's documentation (0.24) need thousands.
pub const SKETCH_DEFAULT_CV: f64 = 0.1;

/// Entries per bucket of [`Idf`]'s lookup table.
const IDF_BUCKET: usize = 8;

/// A bucket of [`Idf`]'s lookup table: keys and quanta filled from the front, a sketch quantum
/// of 0 marking an empty entry (a code quantum of 0: a sketch-only entry, whose samples weigh
/// the default); a full bucket's keys may go on in the next one (linear probing by bucket). A
/// lookup reads one line and decides without a branch on what it read unless the bucket is
/// full: weighing looks up every term of a document, and slot-by-slot probing's unpredictable
/// branches (hit, empty, next slot) waited for each cache miss in turn.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
struct IdfBucket {
    keys: [u32; IDF_BUCKET],
    quanta: [u8; IDF_BUCKET],
    sketch: [u8; IDF_BUCKET],
}

impl Idf {
    /// Unit weights: every term weighs the same (no collection statistics).
    pub fn uniform() -> Idf {
        Idf::with_table(0, 1.0, Vec::new())
    }

    fn with_table(docs: u32, default: f32, table: Vec<(u32, u8)>) -> Idf {
        Idf::with_tables(docs, default, table, default, Vec::new())
    }

    fn with_tables(
        docs: u32,
        default: f32,
        table: Vec<(u32, u8)>,
        sketch_default: f32,
        sketch_only: Vec<(u32, u8)>,
    ) -> Idf {
        // Without sketch-only entries the two views are one (as the section has it: §6.8).
        let sketch_default = if sketch_only.is_empty() {
            default
        } else {
            sketch_default
        };
        // About 3 entries per bucket of 8: few buckets overflow into the next.
        let entries = table.len() + sketch_only.len();
        let count = (entries / 3 + 1).next_power_of_two().max(4);
        let mut buckets = vec![IdfBucket::default(); count];
        let mask = count - 1;
        let both = table.iter().map(|&(k, q)| (k, q, q));
        for (key, quant, sketch) in both.chain(sketch_only.iter().map(|&(k, q)| (k, 0, q))) {
            let mut b = key as usize & mask;
            loop {
                let bucket = &mut buckets[b];
                if let Some(free) = bucket.sketch.iter().position(|&q| q == 0) {
                    bucket.keys[free] = key;
                    // Quanta are at least 1 (from_df clamps, decode checks), so a sketch
                    // quantum of 0 marks an empty entry and a code quantum of 0 one that is
                    // the sketch's only.
                    bucket.quanta[free] = quant;
                    bucket.sketch[free] = sketch.max(1);
                    break;
                }
                b = (b + 1) & mask;
            }
        }
        let mut idf = Idf {
            docs,
            default,
            table,
            sketch_only,
            sketch_default,
            id: 0,
            buckets,
            quanta_default: (
                (default * IDF_SCALE).round() as u16,
                (sketch_default * IDF_SCALE).round() as u16,
            ),
        };
        let mut w = Writer::default();
        idf.encode(&mut w);
        idf.id = hash::checksum(&w.buf);
        idf
    }

    /// Identifies the table (a checksum of its encoding): fingerprints weighed with one table
    /// are only taken by an index with the same table.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `round(16 · idf)` of a term for its samples: the integer weight unit of the codes (every
    /// idf is a whole number of sixteenths, the default included).
    #[inline]
    pub fn quantum(&self, h: u128) -> u16 {
        self.quanta(h).0
    }

    /// The quanta of a term for its samples and for the sketch, from one lookup.
    #[inline]
    pub fn quanta(&self, h: u128) -> (u16, u16) {
        let key = idf_key(h);
        // Selects, not branches: whether a term is in the table is a coin toss. Whether the
        // table has sketch-only entries is not (the same for every term), and without them
        // both views are one.
        let or = |q: u8, default: u16| if q == 0 { default } else { q as u16 };
        if self.sketch_only.is_empty() {
            // (The samples' half of the lookup is dead code here, and compiled out.)
            let q = or(self.lookup(key).1, self.quanta_default.0);
            (q, q)
        } else {
            let (q, s) = self.lookup(key);
            (or(q, self.quanta_default.0), or(s, self.quanta_default.1))
        }
    }

    /// A key's (samples, sketch) quanta in the table, each 0 where that view has none.
    #[inline]
    fn lookup(&self, key: u32) -> (u8, u8) {
        let mask = self.buckets.len() - 1;
        let mut b = key as usize & mask;
        loop {
            let bucket = &self.buckets[b];
            // Keys are unique; an empty entry may hold key 0, but its quanta are 0.
            let (q, s) = (0..IDF_BUCKET).fold((0u8, 0u8), |(q, s), i| {
                let hit = 0u8.wrapping_sub(u8::from(bucket.keys[i] == key));
                (q | bucket.quanta[i] & hit, s | bucket.sketch[i] & hit)
            });
            // Found, or not full (so the key would be here): almost always one or the other.
            if (s != 0) | (bucket.sketch[IDF_BUCKET - 1] == 0) {
                return (q, s);
            }
            b = (b + 1) & mask;
        }
    }

    /// An idf table from document frequencies over `docs` documents. It keeps the
    /// `docs / 2 + 500` terms of highest df among those with df ≥ 2 (ties by key) for the
    /// samples, and for the sketch alone the next ones, as far as the rest need to weigh alike
    /// ([`SKETCH_DEFAULT_CV`]) and at most [`SKETCH_TERMS`] in all. Every other term gets one
    /// default per view: the mean idf of the occurrences of the terms that
    /// view leaves out, Σ df·idf / Σ df over them, which is what such a term in a document
    /// weighs on average (most are unique to one document, some are not). Every idf is at
    /// least 1/16 (one quantum).
    pub fn from_df<S: std::hash::BuildHasher>(df: &HashMap<u32, u32, S>, docs: u32) -> Idf {
        Idf::from_df_with_prior(df, docs, None)
    }

    /// [`Idf::from_df`] with the language's table as a prior of [`PRIOR_DOCS`] documents:
    /// `ln((N + m) / (df + m·p))`, where `p = e^−idf` is the share of the language's documents
    /// that hold the term. Without it a collection of a few documents weighs its shared terms
    /// at nothing (`ln(N/df)` is 0 for a term in every document): a 5%-edited copy scored 0.26
    /// against its original as the only two documents of an index and 0.62 among three, 0.81
    /// and 0.82 with the prior (0.79–0.88 among 5 to 100). From hundreds of documents on, the
    /// prior moves few weights by a quantum.
    pub fn from_df_with_prior<S: std::hash::BuildHasher>(
        df: &HashMap<u32, u32, S>,
        docs: u32,
        prior: Option<&Idf>,
    ) -> Idf {
        let n = docs.max(1) as u64;
        // The idf of a term in `d` documents whose key is `k` (`None`: one the language's table
        // does not hold, as a left-out term may be).
        let idf_of = |k: Option<u32>, d: u32| match prior {
            None => idf(n, d),
            Some(lang) => {
                let m = PRIOR_DOCS as f64;
                let p = (-(k.map_or(lang.default, |k| lang.get_key(k)) as f64)).exp();
                ((n as f64 + m) / (d as f64 + m * p)).ln()
            }
        };
        let mut common: Vec<(u32, u32)> = df
            .iter()
            .filter(|e| *e.1 >= 2)
            .map(|(&k, &d)| (k, d))
            .collect();
        common.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let samples = docs as usize / 2 + 500;
        common.truncate(SKETCH_TERMS.max(samples));
        let samples = samples.min(common.len());
        // Terms outside `common`, in (df, key) order so that sums do not depend on the hash
        // map's iteration order (builds are reproducible).
        let in_common: std::collections::HashSet<u32> = common.iter().map(|e| e.0).collect();
        let mut rest: Vec<(u32, u32)> = df
            .iter()
            .filter(|e| !in_common.contains(e.0))
            .map(|(&k, &d)| (d, k))
            .collect();
        rest.sort_unstable();
        // Σ df, Σ df·w and Σ df·w² over the terms a table of `c` entries leaves out, for every
        // `c` from `samples` on: those outside `common`, then `common` from its end back.
        let mut sums = [0f64; 3];
        let add = |sums: &mut [f64; 3], k: u32, d: u32| {
            let w = idf_of(Some(k), d);
            sums[0] += d as f64;
            sums[1] += d as f64 * w;
            sums[2] += d as f64 * w * w;
        };
        for &(d, k) in &rest {
            add(&mut sums, k, d);
        }
        // suffix[c - samples]: the sums for a table of `c` entries.
        let mut suffix = vec![sums; common.len() - samples + 1];
        for c in (samples..common.len()).rev() {
            add(&mut sums, common[c].0, common[c].1);
            suffix[c - samples] = sums;
        }
        // The sketch's table: the fewest entries from `samples` on whose left-out terms weigh
        // alike, their idf's coefficient of variation at most SKETCH_DEFAULT_CV, so that one
        // default stands for them all.
        let sketch_len = (samples..=common.len())
            .find(|&c| {
                let [n, s1, s2] = suffix[c - samples];
                let mean = s1 / n;
                n == 0.0 || (s2 / n - mean * mean).max(0.0).sqrt() <= SKETCH_DEFAULT_CV * mean
            })
            .unwrap_or(common.len());
        // Every weight is at least one quantum: a term in every document (or every term of a
        // one-document index) still counts a little, so sketches are never all zero.
        let quant = |v: f64| (v as f32 * IDF_SCALE).round().clamp(1.0, 255.0) as u8;
        // The mean idf of the occurrences of the terms a table of `c` entries leaves out,
        // summed in (df, key) order.
        let default = |c: usize| {
            let mut left_out: Vec<(u32, u32)> = common[c..]
                .iter()
                .map(|&(k, d)| (d, k))
                .chain(rest.iter().copied())
                .collect();
            left_out.sort_unstable();
            let (mut weighted, mut occurrences) = (0f64, 0f64);
            for &(d, k) in &left_out {
                weighted += d as f64 * idf_of(Some(k), d);
                occurrences += d as f64;
            }
            let mean = if occurrences > 0.0 {
                weighted / occurrences
            } else {
                idf_of(None, 1)
            };
            quant(mean) as f32 / IDF_SCALE
        };
        let (sample_default, sketch_default) = (default(samples), default(sketch_len));
        let mut entries: Vec<(u32, u8)> = common[..sketch_len]
            .iter()
            .map(|&(k, d)| (k, quant(idf_of(Some(k), d))))
            .collect();
        let mut sketch_only = entries.split_off(samples);
        entries.sort_unstable();
        sketch_only.sort_unstable();
        Idf::with_tables(docs, sample_default, entries, sketch_default, sketch_only)
    }

    /// The built-in idf table of a language (`reference-corpus/<lang>-idf.tsv`, see
    /// [`LanguageIdf`]): the same for every build, so a document's samples and sketch do not
    /// depend on what else its index holds.
    pub fn builtin(lang: Lang) -> Idf {
        LanguageIdf::parse(lang.files().idf)
            .expect("built-in idf table is valid (tested)")
            .idf()
    }

    /// A language's idf table from a word frequency list: [`LanguageIdf::from_word_frequencies`]
    /// as an [`Idf`].
    pub fn from_word_frequencies(
        words: impl IntoIterator<Item = (String, f64)>,
        analyzer: &Analyzer,
        tokens: u32,
        terms: usize,
    ) -> Result<Idf> {
        Ok(LanguageIdf::from_word_frequencies(words, "", analyzer, tokens, terms)?.idf())
    }

    /// The idf of a term as the sketch weighs it ([`Idf::quantum`] is the samples' weight).
    #[inline]
    pub fn get(&self, h: u128) -> f32 {
        self.get_key(idf_key(h))
    }

    /// [`Idf::get`] by the term's key ([`idf_key`]).
    pub fn get_key(&self, key: u32) -> f32 {
        match self.lookup(key).1 {
            0 => self.sketch_default,
            q => q as f32 / IDF_SCALE,
        }
    }

    /// Number of terms in the table, sketch-only entries included.
    pub fn len(&self) -> usize {
        self.table.len() + self.sketch_only.len()
    }

    /// Number of terms in the table whose samples are weighed by their own idf.
    pub fn sample_terms(&self) -> usize {
        self.table.len()
    }

    /// The sketch's idf of a term in neither list (`default` without sketch-only entries).
    pub fn sketch_default(&self) -> f32 {
        self.sketch_default
    }

    /// True when the table is empty (every term gets the default).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Encodes section IDF: docs, default, count, keys, quantised idfs; then, when the table
    /// has sketch-only entries (format version 11 on), the sketch's default, their count, keys
    /// and quantised idfs.
    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.docs);
        w.f32(self.default);
        Idf::encode_entries(&self.table, w);
        if !self.sketch_only.is_empty() {
            w.f32(self.sketch_default);
            Idf::encode_entries(&self.sketch_only, w);
        }
    }

    fn encode_entries(entries: &[(u32, u8)], w: &mut Writer) {
        w.u32(entries.len() as u32);
        for e in entries {
            w.u32(e.0);
        }
        for e in entries {
            w.u8(e.1);
        }
    }

    /// Decodes section IDF of a file of format `version` (sketch-only entries from version 11).
    pub fn decode(bytes: &[u8], version: u32) -> Result<Idf> {
        let mut r = Reader::new(bytes, "IDF");
        let docs = r.u32()?;
        let default = Idf::decode_default(&mut r)?;
        let table = Idf::decode_entries(&mut r)?;
        let (sketch_default, sketch_only) = if r.remaining() > 0 && version >= 11 {
            let d = Idf::decode_default(&mut r)?;
            let entries = Idf::decode_entries(&mut r)?;
            // Disjoint from the samples' entries: both sorted, so one merge finds a repeat.
            let (mut i, mut j) = (0, 0);
            while i < table.len() && j < entries.len() {
                match table[i].0.cmp(&entries[j].0) {
                    std::cmp::Ordering::Less => i += 1,
                    std::cmp::Ordering::Greater => j += 1,
                    std::cmp::Ordering::Equal => {
                        return Err(Error::format("IDF: a key is in both of its tables"))
                    }
                }
            }
            if entries.is_empty() {
                return Err(Error::format(
                    "IDF: an empty sketch-only table is written as none",
                ));
            }
            (d, entries)
        } else {
            (default, Vec::new())
        };
        if r.remaining() > 0 {
            return Err(Error::format("IDF: table size does not match its count"));
        }
        Ok(Idf::with_tables(
            docs,
            default,
            table,
            sketch_default,
            sketch_only,
        ))
    }

    fn decode_default(r: &mut Reader) -> Result<f32> {
        let default = r.f32()?;
        let quantum = default * IDF_SCALE;
        if !((1.0..=255.0).contains(&quantum) && quantum.fract() == 0.0) {
            return Err(Error::format(
                "IDF: a default is not a whole number of sixteenths in [1/16, 255/16]",
            ));
        }
        Ok(default)
    }

    fn decode_entries(r: &mut Reader) -> Result<Vec<(u32, u8)>> {
        let n = r.u32()? as usize;
        if n.checked_mul(5).is_none_or(|b| b > r.remaining()) {
            return Err(Error::format("IDF: table size does not match its count"));
        }
        let keys = r.take(n * 4)?;
        let quants = r.take(n)?;
        let table: Vec<(u32, u8)> = keys
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .zip(quants.iter().copied())
            .collect();
        if table.iter().any(|e| e.1 == 0) || table.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(Error::format("IDF: table is not sorted or has an idf of 0"));
        }
        Ok(table)
    }
}

/// The nominal document length, in tokens (stopwords included), for which a language table
/// estimates document frequencies: between the median lengths of the development sets (about
/// 75 words for Wikipedia leads, 220–600 for READMEs, copyright files and man pages); 1,000
/// measured no better.
pub const LANGUAGE_IDF_TOKENS: u32 = 300;

/// Terms in a language table: the most frequent content terms. Every index carries the table
/// (5 bytes a term, 50 KB): as many as a build of 20,000 documents or more learns
/// (`IDF_SAMPLE / 2 + 500`). They cover about 84% (en) and 69% (de) of wordfreq's content-term
/// occurrences; 4,096 terms measured worse.
pub const LANGUAGE_IDF_TERMS: usize = 10_000;

/// A language's idf table with its terms, as `reference-corpus/<lang>-idf.tsv` holds it.
///
/// From word frequencies per token `f` (wordfreq's), the document frequency of a term in a
/// document of `L` = `tokens` tokens is estimated as `df = 1 − exp(−f·L)` (occurrences as a
/// Poisson process), and its idf is `ln(1 / df)`, quantised as [`Idf::from_df`] quantises.
/// [`LanguageIdf::idf`] is the table the index stores; its `docs` is 0 (no documents counted).
#[derive(Clone, Debug, PartialEq)]
pub struct LanguageIdf {
    /// The language (ISO 639-1 code).
    pub lang: String,
    /// The nominal document length `L` in tokens.
    pub tokens: u32,
    /// `round(16 · idf)` of a term not in the table.
    pub default: u8,
    /// `(term, round(16 · idf))`, most frequent first; no two terms share an [`idf_key`].
    pub terms: Vec<(String, u8)>,
    /// Free-text provenance lines (source, licence, command), kept as `#` comments.
    pub provenance: Vec<String>,
}

impl LanguageIdf {
    /// Builds a table from a word frequency list (e.g. wordfreq's, read by
    /// `pocketdex_eval::wordfreq::read`): `(word, frequency per token)`, in any order.
    ///
    /// Each word goes through the index's term analysis: a word that is not exactly one word of
    /// [`text::words`], or that is no content word or a stopword of `analyzer`, is skipped; the
    /// frequencies of words that fold to the same term, and of terms with the same
    /// [`idf_key`], add up (a key is listed under its most frequent term). The `terms` keys of
    /// highest frequency are kept (ties by key). Every other term gets one default: the mean
    /// idf of the left-out terms' occurrences, `Σ df·idf / Σ df` over them, as in
    /// [`Idf::from_df`]. Sums run in a fixed order, so the table depends only on the list.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the list holds no content term or `tokens` is 0.
    pub fn from_word_frequencies(
        words: impl IntoIterator<Item = (String, f64)>,
        lang: &str,
        analyzer: &Analyzer,
        tokens: u32,
        terms: usize,
    ) -> Result<LanguageIdf> {
        if tokens == 0 {
            return Err(Error::Invalid(
                "the nominal document length must be at least 1 token".into(),
            ));
        }
        // (term, frequency) per list entry, in an order of their own, so that sums do not
        // depend on the list's order.
        let mut entries: Vec<(String, f64)> = Vec::new();
        for (word, freq) in words {
            let mut w = text::words(&word);
            let (Some(term), None) = (w.next(), w.next()) else {
                continue;
            };
            if freq.is_finite()
                && freq > 0.0
                && text::is_content_word(&term)
                && !analyzer.is_stopword(&term)
            {
                entries.push((term, freq));
            }
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut by_term: Vec<(String, f64)> = Vec::new();
        for (term, f) in entries {
            match by_term.last_mut() {
                Some(last) if last.0 == term => last.1 += f,
                _ => by_term.push((term, f)),
            }
        }
        // Per key (in term order): the summed frequency and its most frequent term.
        let mut by_key: BTreeMap<u32, (f64, String, f64)> = BTreeMap::new();
        for (term, f) in by_term {
            let e = by_key.entry(idf_key(term_hash(&term))).or_insert((
                0.0,
                String::new(),
                f64::NEG_INFINITY,
            ));
            e.0 += f;
            if f > e.2 {
                (e.1, e.2) = (term, f);
            }
        }
        if by_key.is_empty() {
            return Err(Error::Invalid(
                "the word list holds no content terms of the language".into(),
            ));
        }
        let mut order: Vec<(u32, f64, String)> =
            by_key.into_iter().map(|(k, (f, t, _))| (k, f, t)).collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let l = tokens as f64;
        let df = |f: f64| -(-f * l).exp_m1();
        let quant = |df: f64| {
            ((1.0 / df).ln() as f32 * IDF_SCALE)
                .round()
                .clamp(1.0, 255.0) as u8
        };
        let (mut weighted, mut occurrences) = (0f64, 0f64);
        for (_, f, _) in order.iter().skip(terms) {
            let d = df(*f);
            weighted += d * (1.0 / d).ln();
            occurrences += d;
        }
        let default = if occurrences > 0.0 {
            weighted / occurrences
        } else {
            // Nothing left out: a term as rare as the rarest listed one.
            (1.0 / df(order.last().expect("not empty").1)).ln()
        };
        order.truncate(terms);
        Ok(LanguageIdf {
            lang: lang.to_string(),
            tokens,
            default: ((default as f32) * IDF_SCALE).round().clamp(1.0, 255.0) as u8,
            terms: order
                .into_iter()
                .map(|(_, f, t)| (t, quant(df(f))))
                .collect(),
            provenance: Vec::new(),
        })
    }

    /// The idf table an index stores: `docs` 0, the default and the terms by [`idf_key`].
    pub fn idf(&self) -> Idf {
        let mut table: Vec<(u32, u8)> = self
            .terms
            .iter()
            .map(|(t, q)| (idf_key(term_hash(t)), *q))
            .collect();
        table.sort_unstable();
        Idf::with_table(0, self.default as f32 / IDF_SCALE, table)
    }

    /// The table as text: `#` comments (`lang:`, `tokens:`, `default:` and provenance), then
    /// `term<TAB>round(16 · idf)` lines, most frequent term first.
    pub fn to_tsv(&self) -> String {
        let mut out = format!("# pocketdex language idf table\n# lang: {}\n", self.lang);
        for line in &self.provenance {
            out.push_str(&format!("# {line}\n"));
        }
        out.push_str(&format!(
            "# tokens: {}\n# default: {}\n",
            self.tokens, self.default
        ));
        for (t, q) in &self.terms {
            out.push_str(&format!("{t}\t{q}\n"));
        }
        out
    }

    /// Reads a table written by [`LanguageIdf::to_tsv`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for a line that is not `term<TAB>quantum` (quantum 1–255), a term
    /// that is listed twice or shares its key with another, or a missing `lang`, `tokens` or
    /// `default` comment.
    pub fn parse(raw: &str) -> Result<LanguageIdf> {
        let (mut lang, mut tokens, mut default) = (None, None, None);
        let mut provenance = Vec::new();
        let mut terms = Vec::new();
        let mut keys = std::collections::HashSet::new();
        for (no, line) in raw.lines().enumerate() {
            let bad = |what: &str| Error::Invalid(format!("idf table line {}: {what}", no + 1));
            if let Some(comment) = line.strip_prefix('#') {
                let comment = comment.trim();
                if let Some(v) = comment.strip_prefix("lang:") {
                    lang = Some(v.trim().to_string());
                } else if let Some(v) = comment.strip_prefix("tokens:") {
                    let v = v.trim().parse::<u32>().ok().filter(|&t| t > 0);
                    tokens = Some(v.ok_or_else(|| bad("expected `# tokens: L`, L ≥ 1"))?);
                } else if let Some(v) = comment.strip_prefix("default:") {
                    let v = v.trim().parse::<u8>().ok().filter(|&q| q > 0);
                    default = Some(v.ok_or_else(|| bad("expected `# default: 1–255`"))?);
                } else if !comment.is_empty() && comment != "pocketdex language idf table" {
                    provenance.push(comment.to_string());
                }
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let (term, q) = line
                .split_once('\t')
                .ok_or_else(|| bad("expected `term<TAB>quantum`"))?;
            let q = q
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|&q| q > 0)
                .ok_or_else(|| bad("the quantum must be a whole number from 1 to 255"))?;
            if term.is_empty() || !keys.insert(idf_key(term_hash(term))) {
                return Err(bad("empty term, or a term whose key is listed already"));
            }
            terms.push((term.to_string(), q));
        }
        let missing = |what: &str| Error::Invalid(format!("idf table has no `# {what}:` line"));
        Ok(LanguageIdf {
            lang: lang.ok_or_else(|| missing("lang"))?,
            tokens: tokens.ok_or_else(|| missing("tokens"))?,
            default: default.ok_or_else(|| missing("default"))?,
            terms,
            provenance,
        })
    }
}

/// Hashes a term for the sketch.
#[inline]
pub fn term_hash(term: &str) -> u128 {
    hash::h128(term.as_bytes(), hash::TERM_SEED)
}

/// The magnitudes of a sketch coordinate: standard normal quantiles at `0.5 + (i + 0.5) / 16`,
/// i = 0..7. A coordinate is one of them with a sign, picked by 4 bits of a term's hash: the
/// 16 normal quantiles at `(i + 0.5) / 16`. Literal values, so that sketches do not depend on a
/// platform's `ln`/`sqrt`.
const HALF_GAUSS: [f32; 8] = [
    0.078_412_41,
    0.237_202_1,
    0.402_250_1,
    0.579_132_2,
    0.776_421_8,
    1.009_990_2,
    1.318_010_9,
    1.862_731_8,
];

/// Simhash of `terms` weighted tf · idf with random hyperplanes (Charikar 2002): bit i is set
/// when the document's projection on hyperplane normal i is positive.
///
/// Coordinates are drawn from 16 normal quantiles rather than ±1: with Gaussian normals
/// P(bit differs) = angle / π exactly, and 16 levels stay within 0.01 of it even when a few
/// heavy terms dominate a vector, where ±1 signs are far off (ties and lattice effects).
/// Sixteen levels are 4 bits, so one 32-bit hash gives 8 coordinates and a term's 64
/// coordinates per sketch word cost 8 hashes, computed 8 at a time in AVX2 registers (two words
/// at a time in AVX-512 ones).
///
/// Coordinates (index-format.md §8.8): with `s` the term's 64-bit base folded to 32 bits, lane
/// `k` of word `w` is `x = fmix32(s + (8·w + k + 1) · 0x9e3779b9)`; nibble `n` of `x` (bits
/// 4n..4n+3) is the coordinate of bit `8n + k`: magnitude `HALF_GAUSS[nibble & 7]`, negative
/// when `nibble & 8`. Each vote is the f32 sum over terms in order of `(weight ·
/// magnitude)` with its sign, so the vectorised path gives the same bits as the scalar one.
pub fn simhash(terms: &[TermHash], idf: &Idf, words: usize) -> Vec<u64> {
    let weighted: Vec<(u32, f32)> = terms
        .iter()
        .map(|&(h, tf)| (sketch_base(h), tf as f32 * idf.get(h)))
        .collect();
    simhash_of(&weighted, words)
}

/// [`simhash`] of terms already weighed: per term, [`sketch_base`] of its hash and its weight
/// `tf · idf` in f32.
pub(crate) fn simhash_of(weighted: &[(u32, f32)], words: usize) -> Vec<u64> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
        let mut out = Vec::with_capacity(words);
        let mut word = 0;
        while word + 1 < words as u32 {
            // SAFETY: the CPU has AVX-512 F, checked just above.
            let (a, b) = unsafe { simhash_words_avx512(weighted, word) };
            out.extend([a, b]);
            word += 2;
        }
        if out.len() < words {
            // SAFETY: the CPU has AVX-512 F and VL, checked just above.
            out.push(unsafe { simhash_word_avx512vl(weighted, word) });
        }
        return out;
    }
    (0..words)
        .map(|word| simhash_word(weighted, word as u32))
        .collect()
}

/// The 32-bit base of a term's coordinates: its 64-bit base (the halves of its 128-bit hash
/// XORed, as for samples) folded once more.
#[inline]
pub(crate) fn sketch_base(h: u128) -> u32 {
    let b = h as u64 ^ (h >> 64) as u64;
    b as u32 ^ (b >> 32) as u32
}

/// The 32-bit hash of lane `k` of sketch word `word` of a term of base `s`.
#[inline]
fn lane_hash(s: u32, word: u32, k: u32) -> u32 {
    hash::fmix32(s.wrapping_add(lane_step(word, k)))
}

/// What lane `k` of sketch word `word` adds to a term's base before mixing: `(8·word + k + 1) ·`
/// [`LANE_STEP`]. `k` may run past 7 into the next word's lanes, as the two-word path has them.
#[inline]
fn lane_step(word: u32, k: u32) -> u32 {
    (8 * word + k + 1).wrapping_mul(LANE_STEP)
}

/// ⌊2^32 / φ⌋: the step between a term's lane hashes.
const LANE_STEP: u32 = 0x9e37_79b9;

/// Sketch word `word` of terms given as (coordinate base, weight).
fn simhash_word(terms: &[(u32, f32)], word: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { simhash_word_avx2(terms, word) };
    }
    simhash_word_scalar(terms, word)
}

/// [`simhash_word`] on any CPU.
fn simhash_word_scalar(terms: &[(u32, f32)], word: u32) -> u64 {
    let mut votes = [0f32; 64];
    for &(s, weight) in terms {
        let scaled = HALF_GAUSS.map(|g| weight * g);
        for k in 0..8 {
            let x = lane_hash(s, word, k);
            for n in 0..8 {
                let nibble = (x >> (4 * n)) & 15;
                let m = scaled[(nibble & 7) as usize];
                votes[8 * n as usize + k as usize] += if nibble & 8 != 0 { -m } else { m };
            }
        }
    }
    votes
        .iter()
        .enumerate()
        .fold(0u64, |acc, (i, &v)| acc | (((v > 0.0) as u64) << i))
}

/// [`simhash_word`] with the 64 votes in eight AVX registers: the 8 lane hashes in one
/// register, each nibble's magnitude by a register permute from `weight · HALF_GAUSS`, its sign
/// by an XOR of the float's sign bit (exact, as the scalar negation).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn simhash_word_avx2(terms: &[(u32, f32)], word: u32) -> u64 {
    use std::arch::x86_64::*;
    // Lane k adds the step of lane_hash(s, word, k).
    let steps: [u32; 8] = std::array::from_fn(|k| lane_step(word, k as u32));
    // SAFETY (of the unaligned loads): both arrays hold 8 four-byte values.
    let steps = _mm256_loadu_si256(steps.as_ptr().cast());
    let gauss = _mm256_loadu_ps(HALF_GAUSS.as_ptr());
    let sign = _mm256_set1_epi32(i32::MIN);
    let mut votes = [_mm256_setzero_ps(); 8];
    for &(s, weight) in terms {
        let scaled = _mm256_mul_ps(_mm256_set1_ps(weight), gauss);
        let x = lane_hashes_x8(s, steps);
        macro_rules! nibble {
            ($n:literal, $right:literal, $left:literal) => {{
                // The permute reads the low 3 bits of each lane; bit 3 moves to the sign bit.
                let m = _mm256_permutevar8x32_ps(scaled, _mm256_srli_epi32::<$right>(x));
                let s = _mm256_and_si256(_mm256_slli_epi32::<$left>(x), sign);
                let c = _mm256_xor_ps(m, _mm256_castsi256_ps(s));
                votes[$n] = _mm256_add_ps(votes[$n], c);
            }};
        }
        nibble!(0, 0, 28);
        nibble!(1, 4, 24);
        nibble!(2, 8, 20);
        nibble!(3, 12, 16);
        nibble!(4, 16, 12);
        nibble!(5, 20, 8);
        nibble!(6, 24, 4);
        nibble!(7, 28, 0);
    }
    word_bits_x8(&votes)
}

/// The 8 lane hashes of a term of base `s` ([`lane_hash`]): `fmix32(s + step)` per lane.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lane_hashes_x8(s: u32, steps: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let mut x = _mm256_add_epi32(_mm256_set1_epi32(s as i32), steps);
    // hash::fmix32, lane by lane.
    x = _mm256_xor_si256(x, _mm256_srli_epi32::<16>(x));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32(hash::FMIX32_MUL.0 as i32));
    x = _mm256_xor_si256(x, _mm256_srli_epi32::<13>(x));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32(hash::FMIX32_MUL.1 as i32));
    _mm256_xor_si256(x, _mm256_srli_epi32::<16>(x))
}

/// A sketch word from its 64 votes, 8 per register (bit `8n + k` from lane `k` of `votes[n]`):
/// set where the vote is positive.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn word_bits_x8(votes: &[std::arch::x86_64::__m256; 8]) -> u64 {
    use std::arch::x86_64::*;
    votes.iter().enumerate().fold(0u64, |acc, (n, &v)| {
        let positive = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(v, _mm256_setzero_ps()));
        acc | (positive as u8 as u64) << (8 * n)
    })
}

/// Sketch words `word` and `word + 1` in one pass: [`simhash_word_avx2`] with the two words'
/// 8 lanes side by side in 16-lane AVX-512 registers, and a nibble's signed coordinate picked
/// by one permute from `weight · [HALF_GAUSS, −HALF_GAUSS]` (all 4 bits as the index; `weight ·
/// −g` is `−(weight · g)` to the bit, as IEEE-754 multiplication is symmetric in sign), so
/// each vote sums the same f32 values in the same order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn simhash_words_avx512(terms: &[(u32, f32)], word: u32) -> (u64, u64) {
    use std::arch::x86_64::*;
    // Lanes 0–7 add the steps of word `word`, lanes 8–15 those of word `word + 1`.
    let steps: [u32; 16] = std::array::from_fn(|k| lane_step(word, k as u32));
    let signed: [f32; 16] = std::array::from_fn(|i| {
        let g = HALF_GAUSS[i & 7];
        if i < 8 {
            g
        } else {
            -g
        }
    });
    // SAFETY (of the unaligned loads): both arrays hold 16 four-byte values.
    let steps = _mm512_loadu_si512(steps.as_ptr().cast());
    let gauss = _mm512_loadu_ps(signed.as_ptr());
    let mut votes = [_mm512_setzero_ps(); 8];
    for &(s, weight) in terms {
        let scaled = _mm512_mul_ps(_mm512_set1_ps(weight), gauss);
        let mut x = _mm512_add_epi32(_mm512_set1_epi32(s as i32), steps);
        // hash::fmix32, lane by lane.
        x = _mm512_xor_si512(x, _mm512_srli_epi32::<16>(x));
        x = _mm512_mullo_epi32(x, _mm512_set1_epi32(hash::FMIX32_MUL.0 as i32));
        x = _mm512_xor_si512(x, _mm512_srli_epi32::<13>(x));
        x = _mm512_mullo_epi32(x, _mm512_set1_epi32(hash::FMIX32_MUL.1 as i32));
        x = _mm512_xor_si512(x, _mm512_srli_epi32::<16>(x));
        for (n, vote) in votes.iter_mut().enumerate() {
            // The permute reads the low 4 bits of each lane: nibble n (a constant shift once
            // the loop is unrolled).
            let nibble = _mm512_srl_epi32(x, _mm_cvtsi32_si128(4 * n as i32));
            *vote = _mm512_add_ps(*vote, _mm512_permutexvar_ps(nibble, scaled));
        }
    }
    let mut bits = (0u64, 0u64);
    for (n, &v) in votes.iter().enumerate() {
        let positive = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, _mm512_setzero_ps());
        bits.0 |= (positive as u8 as u64) << (8 * n);
        bits.1 |= ((positive >> 8) as u8 as u64) << (8 * n);
    }
    bits
}

/// [`simhash_word_avx2`] with a nibble's signed coordinate picked by one two-table permute from
/// `weight · HALF_GAUSS` and `weight · −HALF_GAUSS` (bit 3 of the index picks the table), as
/// [`simhash_words_avx512`] does for two words: the odd word of a sketch.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn simhash_word_avx512vl(terms: &[(u32, f32)], word: u32) -> u64 {
    use std::arch::x86_64::*;
    let steps: [u32; 8] = std::array::from_fn(|k| lane_step(word, k as u32));
    let negated = HALF_GAUSS.map(|g| -g);
    // SAFETY (of the unaligned loads): the arrays hold 8 four-byte values.
    let steps = _mm256_loadu_si256(steps.as_ptr().cast());
    let gauss = _mm256_loadu_ps(HALF_GAUSS.as_ptr());
    let negated = _mm256_loadu_ps(negated.as_ptr());
    let mut votes = [_mm256_setzero_ps(); 8];
    for &(s, weight) in terms {
        let w = _mm256_set1_ps(weight);
        let (plus, minus) = (_mm256_mul_ps(w, gauss), _mm256_mul_ps(w, negated));
        let x = lane_hashes_x8(s, steps);
        for (n, vote) in votes.iter_mut().enumerate() {
            // The permute reads the low 4 bits of each lane: nibble n.
            let nibble = _mm256_srl_epi32(x, _mm_cvtsi32_si128(4 * n as i32));
            *vote = _mm256_add_ps(*vote, _mm256_permutex2var_ps(plus, nibble, minus));
        }
    }
    word_bits_x8(&votes)
}

/// The estimated cosine similarity of two sketches: cos(π · hamming / bits), clamped to [0, 1].
pub fn estimate_similarity(
    a: &[u64],
    b: impl IntoIterator<Item = impl std::borrow::Borrow<u64>>,
) -> f32 {
    let (mut words, mut hamming) = (0usize, 0u32);
    for (x, y) in a.iter().zip(b) {
        words += 1;
        hamming += (x ^ y.borrow()).count_ones();
    }
    let bits = (words * 64) as f64;
    if bits == 0.0 {
        return 0.0;
    }
    (std::f64::consts::PI * hamming as f64 / bits)
        .cos()
        .max(0.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::VERSION;

    #[test]
    fn similarity_estimate() {
        assert_eq!(estimate_similarity(&[0, 0], [0, 0]), 1.0);
        assert_eq!(estimate_similarity(&[0, 0], [u64::MAX, u64::MAX]), 0.0);
        assert!(estimate_similarity(&[0, 0], [u64::MAX, 0]).abs() < 1e-6);
    }

    #[test]
    fn idf_table_round_trips_and_weights_common_terms_low() {
        let mut df = HashMap::new();
        df.insert(1u32, 900u32); // in 90% of documents
        df.insert(2, 10);
        df.insert(3, 1); // unique terms are not stored
        df.insert(4, 1);
        let idf = Idf::from_df(&df, 1000);
        assert_eq!(idf.len(), 2);
        let h = |k: u32| (k as u128) << 96;
        assert!((idf.get(h(1)) - (1000f32 / 900.0).ln()).abs() < 0.04);
        assert!((idf.get(h(2)) - 100f32.ln()).abs() < 0.04);
        // Left out: two terms of df 1, so the default is ln(1000 / 1).
        assert!(
            (idf.get(h(3)) - 1000f32.ln()).abs() < 0.04,
            "{}",
            idf.get(h(3))
        );
        assert_eq!(idf.get(h(3)), idf.get(h(99)));
        let mut w = Writer::default();
        idf.encode(&mut w);
        assert_eq!(Idf::decode(&w.buf, VERSION).unwrap(), idf);
        assert!(Idf::decode(&w.buf[..w.buf.len() - 1], VERSION).is_err());
        // One document: no term is common, every weight is the floor, not zero.
        let one = Idf::from_df(&HashMap::from([(5u32, 1u32)]), 1);
        assert_eq!(one.get(h(5)), 1.0 / IDF_SCALE);
    }

    /// A learned table of a few hundred documents of many middling terms: the samples' view is
    /// the rule of version 10 (the `N/2 + 500` terms of highest df, the mean idf of the other
    /// terms' occurrences for the rest), computed here from its definition; the sketch's view
    /// goes on in df order just as far as it must for the terms it leaves out to have idfs within
    /// [`SKETCH_DEFAULT_CV`] of their mean, and gives them that mean.
    #[test]
    fn learned_tables_extend_the_sketch_view_until_the_rest_weigh_alike() {
        let docs = 300u32;
        // Keys 1..=6000: df falls from 150 to 1 (a Zipf-like spread).
        let df: HashMap<u32, u32> = (1..=6000u32)
            .map(|k| (k, (150 * 40 / (k + 39)).max(1)))
            .collect();
        let idf = Idf::from_df(&df, docs);
        let q = |v: f64| (v as f32 * IDF_SCALE).round().clamp(1.0, 255.0) as u16;
        let w = |d: u32| (docs as f64 / d as f64).ln();
        let mut by_df: Vec<(u32, u32)> = df
            .iter()
            .filter(|e| *e.1 >= 2)
            .map(|(&k, &d)| (k, d))
            .collect();
        by_df.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        // The mean, and the coefficient of variation, of the idf of the occurrences of the
        // terms outside the first `c` of `by_df`.
        let rest = |c: usize| {
            let inside: std::collections::HashSet<u32> = by_df[..c].iter().map(|e| e.0).collect();
            let (mut n, mut s1, mut s2) = (0f64, 0f64, 0f64);
            for (&k, &d) in &df {
                if !inside.contains(&k) {
                    n += d as f64;
                    s1 += d as f64 * w(d);
                    s2 += d as f64 * w(d) * w(d);
                }
            }
            let mean = s1 / n;
            (mean, (s2 / n - mean * mean).sqrt() / mean)
        };
        let samples = docs as usize / 2 + 500;
        assert_eq!(idf.sample_terms(), samples);
        let sketch = idf.len();
        assert!(sketch > samples && sketch < by_df.len(), "{sketch} entries");
        assert!(rest(sketch).1 <= SKETCH_DEFAULT_CV && rest(sketch - 1).1 > SKETCH_DEFAULT_CV);
        let (sample_default, sketch_default) = (q(rest(samples).0), q(rest(sketch).0));
        assert!(
            sketch_default > sample_default,
            "the rest are rarer: {sketch_default} against {sample_default}"
        );
        for (i, &(k, d)) in by_df.iter().enumerate() {
            let want = if i < samples {
                (q(w(d)), q(w(d)))
            } else if i < sketch {
                (sample_default, q(w(d)))
            } else {
                (sample_default, sketch_default)
            };
            assert_eq!(idf.quanta((k as u128) << 96), want, "term {i} of df {d}");
        }
        assert_eq!(
            idf.quanta(0),
            (sample_default, sketch_default),
            "a term in no document"
        );
        assert_eq!(idf.get(0), sketch_default as f32 / IDF_SCALE);
        // Both views survive the section, which a version 10 reader does not take.
        let mut wr = Writer::default();
        idf.encode(&mut wr);
        assert_eq!(Idf::decode(&wr.buf, VERSION).unwrap(), idf);
        assert!(Idf::decode(&wr.buf, 10).is_err());
        // A table of twenty thousand documents keeps as many terms as the sketch's view may:
        // it has no sketch-only entries, and its section is version 10's.
        let big = Idf::from_df(&df, 20_000);
        assert_eq!((big.sample_terms(), big.len()), (by_df.len(), by_df.len()));
        let mut wr = Writer::default();
        big.encode(&mut wr);
        assert_eq!(Idf::decode(&wr.buf, 10).unwrap(), big);
    }

    /// A damaged sketch-only table is refused: a key in both tables, an empty one written, a
    /// default that is not a whole number of sixteenths.
    #[test]
    fn sketch_only_entries_are_checked() {
        let section = |extra: &[(u32, u8)], sketch_default: f32| {
            let mut w = Writer::default();
            w.u32(7);
            w.f32(2.0);
            Idf::encode_entries(&[(5, 20), (9, 30)], &mut w);
            w.f32(sketch_default);
            Idf::encode_entries(extra, &mut w);
            w.buf
        };
        let good = Idf::decode(&section(&[(6, 40)], 3.0), VERSION).unwrap();
        assert_eq!(good.quanta(6u128 << 96), (32, 40));
        assert_eq!(good.quanta(9u128 << 96), (30, 30));
        assert_eq!(good.quanta(8u128 << 96), (32, 48));
        for (extra, d) in [(&[(9u32, 40u8)][..], 3.0), (&[], 3.0), (&[(6, 40)], 3.01)] {
            assert!(
                Idf::decode(&section(extra, d), VERSION).is_err(),
                "{extra:?} {d}"
            );
        }
    }

    /// The bucketed lookup finds every key of a table and no other, in both views (the samples'
    /// and the sketch's), against a map, for tables from empty to crowded: keys that share
    /// their low bits (buckets that overflow into the next, and wrap around at the end), key 0,
    /// and keys that are not there.
    #[test]
    fn idf_lookup_agrees_with_a_map() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for size in [0usize, 1, 7, 8, 9, 100, 3_000] {
            for crowded in [false, true] {
                let mut map = HashMap::new();
                if crowded && size > 0 {
                    map.insert(0u32, 7u8);
                }
                while map.len() < size {
                    let r = next();
                    // Crowded: the low 4 bits all alike (the table has at least 4 buckets,
                    // so whole runs of buckets fill up).
                    let key = if crowded { (r as u32) << 4 } else { r as u32 };
                    map.insert(key, (r >> 40) as u8 | 1);
                }
                // Every third key (by its quantum) is the sketch's only: both views are
                // looked up in the same buckets.
                let sketch_only = |q: u8| q.is_multiple_of(3);
                let mut table: Vec<(u32, u8)> = map.iter().map(|(&k, &q)| (k, q)).collect();
                table.sort_unstable();
                let (extra, table): (Vec<_>, Vec<_>) =
                    table.into_iter().partition(|e| sketch_only(e.1));
                // A sketch default of its own only with sketch-only entries.
                let sketch_default = if extra.is_empty() { 32 } else { 48 };
                let idf = Idf::with_tables(1, 2.0, table, 3.0, extra);
                let expect = |key: u32| match map.get(&key) {
                    Some(&q) if sketch_only(q) => (32, q as u16),
                    Some(&q) => (q as u16, q as u16),
                    None => (32, sketch_default),
                };
                for &key in map.keys() {
                    assert_eq!(
                        idf.quanta((key as u128) << 96),
                        expect(key),
                        "size {size}, key {key:#x}"
                    );
                }
                for _ in 0..2_000 {
                    let key = next() as u32;
                    let key = if crowded { key << 4 } else { key };
                    assert_eq!(idf.quanta((key as u128) << 96), expect(key), "key {key:#x}");
                }
            }
        }
    }

    /// Known answers: the built-in language tables (`reference-corpus/<lang>-idf.tsv`). A
    /// change of a table, its parsing or the IDF encoding changes these ids, and with them
    /// every index built with `--idf language`.
    #[test]
    fn builtin_idf_tables_are_pinned() {
        for (lang, id, default, first) in [
            (Lang::En, 0xa11f_af50_72b3_85ab_u64, 129u8, ("it's", 12u8)),
            (Lang::De, 0x7a01_d729_3a38_531b, 132, ("mal", 13)),
            (Lang::Fr, 0xdd82_04dc_0127_d07a, 129, ("faire", 12)),
            (Lang::Es, 0x0f63_8850_88b3_b205, 127, ("años", 18)),
            (Lang::It, 0xf68e_17e0_7f81_4eec, 126, ("perché", 16)),
            (Lang::Pt, 0x1355_8714_8d29_a71b, 125, ("só", 14)),
        ] {
            let raw = lang.files().idf;
            let t = LanguageIdf::parse(raw).unwrap();
            assert_eq!(
                (t.lang.as_str(), t.tokens, t.default, t.terms.len()),
                (
                    lang.code(),
                    LANGUAGE_IDF_TOKENS,
                    default,
                    LANGUAGE_IDF_TERMS
                )
            );
            assert_eq!((t.terms[0].0.as_str(), t.terms[0].1), first);
            let idf = Idf::builtin(lang);
            assert_eq!(idf.id(), id, "{lang:?}: {:016x}", idf.id());
            assert_eq!((idf.docs, idf.len()), (0, LANGUAGE_IDF_TERMS));
            assert_eq!(idf, t.idf());
            // The text round-trips; every term is an index term of the language.
            assert_eq!(LanguageIdf::parse(&t.to_tsv()).unwrap(), t);
            let analyzer = Analyzer::for_lang(lang);
            for (term, q) in &t.terms {
                assert_eq!(analyzer.terms(term), [term.as_str()]);
                assert_eq!(idf.quantum(term_hash(term)), *q as u16);
            }
            // The file stays small enough to review and to compile in.
            assert!(raw.len() < 150_000, "{} bytes", raw.len());
        }
        let en = Idf::builtin(Lang::En);
        let w = |t: &str| en.get(term_hash(t));
        assert!(w("time") < w("planet") && w("planet") < w("jupiter"));
        assert_eq!(w("jupiter"), en.default);
        assert_eq!(w("xqzzyqx"), en.default);
        let de = Idf::builtin(Lang::De);
        assert!(de.get(term_hash("einfach")) < de.get(term_hash("verzeichnis")));
    }

    fn word_list() -> Vec<(String, f64)> {
        [
            ("the", 5e-2),  // a stopword: no index term
            ("Time", 1e-3), // folds to "time" …
            ("time", 5e-4), // … whose frequencies add up
            ("planet", 1e-5),
            ("orbit", 8e-6),
            ("new york", 1e-4), // two words: not one term
            ("1999", 1e-4),     // no letter: no index term
            ("jupiter", 3e-6),
            ("io", 1e-7),
            ("ganymede", 1e-7),
        ]
        .iter()
        .map(|&(w, f)| (w.to_string(), f))
        .collect()
    }

    #[test]
    fn language_idf_from_word_frequencies() {
        let analyzer = Analyzer::new(["the".to_string()]);
        let t = LanguageIdf::from_word_frequencies(word_list(), "en", &analyzer, 300, 4).unwrap();
        let q = |f: f64| ((1.0 / -(-f * 300.0).exp_m1()).ln() as f32 * 16.0).round() as u8;
        let want: Vec<(String, u8)> = [
            ("time", q(1.5e-3)),
            ("planet", q(1e-5)),
            ("orbit", q(8e-6)),
            ("jupiter", q(3e-6)),
        ]
        .iter()
        .map(|&(t, q)| (t.to_string(), q))
        .collect();
        assert_eq!(t.terms, want);
        assert!(want.windows(2).all(|w| w[0].1 < w[1].1), "{want:?}");
        // Left out: "io" and "ganymede", equally rare: the default is their idf.
        assert_eq!(t.default, q(1e-7));
        let idf = t.idf();
        assert_eq!(
            idf,
            Idf::from_word_frequencies(word_list(), &analyzer, 300, 4).unwrap()
        );
        assert_eq!(idf.get(term_hash("ganymede")), q(1e-7) as f32 / 16.0);
        assert_eq!(idf.get(term_hash("the")), idf.default);
        // Deterministic: the same table from the list in any order.
        let mut reversed = word_list();
        reversed.reverse();
        let r = LanguageIdf::from_word_frequencies(reversed, "en", &analyzer, 300, 4).unwrap();
        assert_eq!((r.terms, r.default), (t.terms.clone(), t.default));
        // Nothing left out: the default is the idf of the rarest term.
        let all =
            LanguageIdf::from_word_frequencies(word_list(), "en", &analyzer, 300, 99).unwrap();
        assert_eq!((all.terms.len(), all.default), (6, q(1e-7)));
        // A longer nominal document: common terms weigh less.
        let long =
            LanguageIdf::from_word_frequencies(word_list(), "en", &analyzer, 3000, 4).unwrap();
        assert!(long.terms[0].1 < t.terms[0].1);
        for bad in [
            LanguageIdf::from_word_frequencies(word_list(), "en", &analyzer, 0, 4),
            LanguageIdf::from_word_frequencies(
                vec![("the".to_string(), 0.1)],
                "en",
                &analyzer,
                300,
                4,
            ),
        ] {
            assert!(matches!(bad, Err(Error::Invalid(_))), "{bad:?}");
        }
    }

    #[test]
    fn language_idf_parse_errors() {
        let ok = "# lang: en\n# tokens: 300\n# default: 129\ntime\t13\nplanet\t99\n";
        let t = LanguageIdf::parse(ok).unwrap();
        assert_eq!(t.terms.len(), 2);
        assert_eq!(LanguageIdf::parse(&t.to_tsv()).unwrap(), t);
        for (bad, why) in [
            ("# tokens: 300\n# default: 129\ntime\t13\n", "no `# lang:`"),
            ("# lang: en\n# default: 129\ntime\t13\n", "no `# tokens:`"),
            ("# lang: en\n# tokens: 300\ntime\t13\n", "no `# default:`"),
            ("# lang: en\n# tokens: 0\n# default: 129\n", "tokens"),
            ("# lang: en\n# tokens: 300\n# default: 0\n", "default"),
            ("# lang: en\n# tokens: 300\n# default: 256\n", "default"),
            (
                "# lang: en\n# tokens: 300\n# default: 9\ntime 13\n",
                "line 4",
            ),
            (
                "# lang: en\n# tokens: 300\n# default: 9\ntime\t0\n",
                "line 4",
            ),
            (
                "# lang: en\n# tokens: 300\n# default: 9\ntime\t256\n",
                "line 4",
            ),
            (
                "# lang: en\n# tokens: 300\n# default: 9\ntime\tx\n",
                "line 4",
            ),
            ("# lang: en\n# tokens: 300\n# default: 9\n\t7\n", "line 4"),
            (
                "# lang: en\n# tokens: 300\n# default: 9\na\t7\na\t8\n",
                "line 5",
            ),
        ] {
            match LanguageIdf::parse(bad) {
                Err(Error::Invalid(e)) => assert!(e.contains(why), "{e} / {why}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    /// The sketch as §8.8 of index-format.md states it, one term and one bit at a time.
    fn simhash_by_definition(terms: &[TermHash], idf: &Idf, words: usize) -> Vec<u64> {
        let mut votes = vec![0f32; words * 64];
        for &(h, tf) in terms {
            let weight = tf as f32 * idf.get(h);
            let b = h as u64 ^ (h >> 64) as u64;
            let s = b as u32 ^ (b >> 32) as u32;
            for (i, v) in votes.iter_mut().enumerate() {
                let (w, bit) = (i / 64, i % 64);
                let (n, k) = (bit / 8, bit % 8);
                let step = ((8 * w + k + 1) as u32).wrapping_mul(0x9e37_79b9);
                let nibble = (hash::fmix32(s.wrapping_add(step)) >> (4 * n)) & 15;
                let m = weight * HALF_GAUSS[(nibble & 7) as usize];
                *v += if nibble >= 8 { -m } else { m };
            }
        }
        votes
            .chunks(64)
            .map(|c| (0..64).fold(0u64, |acc, i| acc | ((c[i] > 0.0) as u64) << i))
            .collect()
    }

    #[test]
    fn simhash_equals_its_definition_bit_for_bit() {
        // SplitMix64 through fmix64: fixed random keys and picks.
        let mut state = 7u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            crate::hash::fmix64(state)
        };
        let mut df = HashMap::new();
        let keys: Vec<u128> = (0..500)
            .map(|_| (next() as u128) << 64 | next() as u128)
            .collect();
        for (i, k) in keys.iter().enumerate() {
            df.insert(idf_key(*k), 1 + (i as u32 % 300));
        }
        let idf = Idf::from_df(&df, 1000);
        for n in [0usize, 1, 2, 7, 40, 300] {
            for _ in 0..20 {
                let terms: Vec<TermHash> = (0..n)
                    .map(|_| (keys[next() as usize % keys.len()], 1 + (next() % 9) as u32))
                    .collect();
                for words in [1, 2, 3, 4, 5] {
                    assert_eq!(
                        simhash(&terms, &idf, words),
                        simhash_by_definition(&terms, &idf, words)
                    );
                }
            }
        }
        // The scalar path, on a machine where the vectorised one is taken.
        let terms: Vec<TermHash> = keys.iter().map(|&h| (h, 2)).collect();
        let weighted: Vec<(u32, f32)> = terms
            .iter()
            .map(|&(h, tf)| (sketch_base(h), tf as f32 * idf.get(h)))
            .collect();
        let want = simhash_by_definition(&terms, &idf, 3);
        for word in 0..3 {
            assert_eq!(simhash_word_scalar(&weighted, word), want[word as usize]);
            // The one-word AVX2 path, which a machine with AVX-512 does not take.
            assert_eq!(simhash_word(&weighted, word), want[word as usize]);
        }
    }

    /// Bits differ with probability angle/π even when one heavy term dominates both vectors
    /// (3·t0 + t1 against 3·t0 + t2: cosine 0.9, angle/π 0.1436), where ±1 coordinates would
    /// almost never split them. Averaged over 400 triples of terms × 192 bits.
    #[test]
    fn simhash_is_unbiased_with_heavy_terms() {
        let u = Idf::uniform();
        let (mut differ, mut bits) = (0u32, 0u32);
        for i in 0..400u32 {
            let t = |j: u32| term_hash(&format!("{i}-{j}"));
            let a = [(t(0), 3), (t(1), 1)];
            let b = [(t(0), 3), (t(2), 1)];
            for (x, y) in simhash(&a, &u, 3).iter().zip(simhash(&b, &u, 3)) {
                differ += (x ^ y).count_ones();
                bits += 64;
            }
        }
        let want = (0.9f64).acos() / std::f64::consts::PI;
        let got = differ as f64 / bits as f64;
        assert!((got - want).abs() < 0.012, "{got} vs {want}");
    }

    #[test]
    fn simhash_tracks_cosine() {
        // Two vectors over 200 terms sharing 180: cosine 0.9.
        let a: Vec<TermHash> = (0..200u64)
            .map(|i| (term_hash(&i.to_string()), 1))
            .collect();
        let b: Vec<TermHash> = (20..220u64)
            .map(|i| (term_hash(&i.to_string()), 1))
            .collect();
        let u = Idf::uniform();
        let est = estimate_similarity(&simhash(&a, &u, 4), simhash(&b, &u, 4));
        assert!((est - 0.9).abs() < 0.08, "{est}");
        assert_eq!(simhash(&a, &u, 2), simhash(&a, &u, 2));
    }
}
