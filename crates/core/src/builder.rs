//! Building an index: fingerprint documents, collect (code, document) references, build the MPHF
//! over the distinct codes, and write every section, then the checksummed trailer.
//!
//! Memory grows with the index, not the corpus: per document its name, title, sketch and code
//! material (digits and samples, in flat arrays) are kept, never its text; only the first
//! [`sketch::IDF_SAMPLE`] documents wait as whole fingerprints until the idf table is learned.

use crate::atomic::{parent_dir, write_atomically};
use crate::error::{Error, Result};
use crate::filter;
use crate::fingerprint::{Code, Fingerprint, Fingerprinter, Params, Resolution};
use crate::format::{self, Directory, SectionId, Writer};
use crate::hash::{self, FastState};
use crate::index::Index;
use crate::integrity;
use crate::meta::{self, Meta};
use crate::mphf;
use crate::reference::Reference;
use crate::sketch::{self, Idf};
use crate::text::{Analyzer, Lang};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};

/// Collects documents and writes an index file.
///
/// # Example
/// ```
/// use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions};
/// let mut b = IndexBuilder::for_lang(Lang::En, Params::default())?;
/// b.add("a", None, "Jupiter is the fifth planet from the Sun and the largest in the Solar System.");
/// b.add("b", None, "Mozart was a prolific and influential composer of the Classical period.");
/// let mut bytes = Vec::new();
/// b.finish(&mut bytes)?;
/// let index = Index::open(bytes)?;
/// index.verify()?;
/// let hits = index.query("Jupiter is the fifth planet from the Sun and the biggest in the Solar System.", &QueryOptions::default())?;
/// assert_eq!(index.name(hits.hits[0].doc)?.as_deref(), Some("a"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct IndexBuilder {
    fingerprinter: Fingerprinter,
    lang: String,
    names: StringList,
    titles: StringList,
    has_titles: bool,
    sketches: Vec<u64>,
    store: Store,
    paths: PathCounts,
    /// Document frequencies by idf key, counted over the first `IDF_SAMPLE` documents (on the
    /// thread that adds them, once per distinct term: keys are hash bits, so SipHash is not
    /// needed).
    df: HashMap<u32, u32, FastState>,
    /// Documents waiting for the idf table: (number, fingerprint).
    pending: Vec<(u32, Fingerprint)>,
    /// The fingerprinter with the learned idf table, once learned.
    weighing: Option<Fingerprinter>,
    /// Write the sections of an index set's segment (CODES, IDS) too.
    set_sections: bool,
}

/// Strings in one buffer (a `String` per document would cost more than the document's index
/// entry at millions of documents).
#[derive(Default)]
pub(crate) struct StringList {
    blob: String,
    ends: Vec<u64>,
}

impl StringList {
    pub(crate) fn push(&mut self, s: &str) {
        self.blob.push_str(s);
        self.ends.push(self.blob.len() as u64);
    }
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &str> {
        (0..self.ends.len()).map(|i| {
            let a = if i == 0 { 0 } else { self.ends[i - 1] as usize };
            &self.blob[a..self.ends[i] as usize]
        })
    }
}

/// Every document's code material in flat arrays, until [`IndexBuilder::finish`] knows the
/// collection's size and with it the resolution.
#[derive(Default)]
struct Store {
    /// Documents with fuzzy digits, in order; their digits (`schemes × k` each) and samples
    /// (`caps.bands × caps.samples` each).
    fuzzy_docs: Vec<u32>,
    digits: Vec<u8>,
    samples: Vec<u32>,
    /// Documents on the short path, in order; their fragments (`minhash_bands ×
    /// caps.short_rows` each).
    short_docs: Vec<u32>,
    short: Vec<u32>,
    /// Documents on the similar path, in order; their fragments (`similar_bands ×
    /// caps.similar_rows` each).
    similar_docs: Vec<u32>,
    similar: Vec<u32>,
    /// Documents without words and their exact codes.
    exact: Vec<(u32, u64)>,
}

/// How many documents were indexed on each path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PathCounts {
    /// Documents with fuzzy codes.
    pub fuzzy: u64,
    /// Documents with short-path (weighted MinHash) codes.
    pub short: u64,
    /// Documents with both.
    pub both: u64,
    /// Documents with only the exact code (no words).
    pub exact: u64,
}

/// What a finished build wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BuildStats {
    /// Documents indexed.
    pub docs: u64,
    /// Distinct codes (MPHF slots).
    pub codes: u64,
    /// (code, document) references.
    pub refs: u64,
    /// Bytes of the file.
    pub bytes: u64,
    /// Bytes of the document names' strings (lengths and UTF-8).
    pub name_bytes: u64,
    /// Bytes per section, in file order.
    pub sections: Vec<(String, u64)>,
    /// Documents per path; `None` when the documents' codes were copied, not made (an export
    /// of a set's segments keeps their codes, which do not say which path made them).
    pub paths: Option<PathCounts>,
    /// The resolution of the codes.
    pub resolution: Resolution,
}

impl IndexBuilder {
    /// A builder with the built-in reference and stopwords of `lang`.
    pub fn for_lang(lang: Lang, params: Params) -> Result<Self> {
        Ok(Self::empty(
            Fingerprinter::for_lang(lang, params)?,
            lang.code().to_string(),
        ))
    }

    /// A builder with any reference distribution and stopwords.
    pub fn new(params: Params, reference: &Reference, analyzer: Analyzer) -> Result<Self> {
        if reference.lang.len() > 16 {
            return Err(Error::Invalid("language code longer than 16 bytes".into()));
        }
        if analyzer.stopwords().iter().any(|s| s.len() > 255) {
            return Err(Error::Invalid("stopwords must be at most 255 bytes".into()));
        }
        Ok(Self::empty(
            Fingerprinter::with_reference(params, reference, analyzer)?,
            reference.lang.clone(),
        ))
    }

    /// A builder of no documents yet, without an idf table.
    fn empty(fingerprinter: Fingerprinter, lang: String) -> Self {
        IndexBuilder {
            fingerprinter,
            lang,
            names: StringList::default(),
            titles: StringList::default(),
            has_titles: false,
            sketches: Vec::new(),
            store: Store::default(),
            paths: PathCounts::default(),
            df: HashMap::default(),
            pending: Vec::new(),
            weighing: None,
            set_sections: false,
        }
    }

    /// A builder whose documents get exactly the codes and sketches `index`'s documents got:
    /// its parameters, resolution, classes, stopwords and idf table. Collections built in
    /// pieces (shards, or the segments of an index set) are built this way, so that their
    /// pieces queried together answer as one index of all their documents.
    pub fn like<D: AsRef<[u8]>>(index: &Index<D>) -> Self {
        let f = index.fingerprinter().clone();
        IndexBuilder {
            weighing: Some(f.clone()),
            ..Self::empty(f, index.meta().lang.clone())
        }
    }

    /// Also writes the sections a segment of an index set needs (`index-format.md` §6.9):
    /// every document's codes, so that segments merge without their texts, and the names'
    /// hashes, to find a document by its id. Shards built apart this way, from the set's
    /// schema ([`IndexBuilder::like`]), join a set with [`SetWriter::adopt`](crate::SetWriter::adopt).
    pub fn with_set_sections(mut self) -> Self {
        self.set_sections = true;
        self
    }

    /// The fingerprinter documents go through (shareable across threads). Until the builder
    /// has learned its idf table (from the first [`sketch::IDF_SAMPLE`] documents) it has none,
    /// and the builder weighs what it is given; afterwards [`IndexBuilder::weighing_fingerprinter`]
    /// weighs on the caller's threads.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Once the idf table is learned: a fingerprinter that weighs with it, so that callers
    /// fingerprinting on other threads hand in finished fingerprints.
    pub fn weighing_fingerprinter(&self) -> Option<&Fingerprinter> {
        self.weighing.as_ref()
    }

    /// Tells the builder it will hold at most `docs` documents, so that it draws only the
    /// samples the resolutions up to that size need (a build of 200,000 documents draws about
    /// half of what one of unknown size does). Call it before adding documents; a build that
    /// ends up larger gets the most specific codes its samples allow.
    ///
    /// # Panics
    /// When documents were added already.
    pub fn size_hint(&mut self, docs: u64) {
        assert!(self.is_empty(), "size_hint before the first document");
        let caps = Resolution::caps_up_to(docs);
        self.fingerprinter = self.fingerprinter.clone().with_caps(caps);
        self.weighing = self.weighing.take().map(|f| f.with_caps(caps));
        // Room for what nearly every document adds, so that the arrays are not copied as they
        // grow. Pages are only touched when written; a bound too large for the machine is
        // simply not reserved.
        let n = usize::try_from(docs).unwrap_or(usize::MAX);
        let p = self.fingerprinter.params();
        let digits = p.schemes.len() * self.fingerprinter.classes().k();
        let per_doc = |x: usize| n.saturating_mul(x);
        let store = &mut self.store;
        let _ = self
            .sketches
            .try_reserve_exact(per_doc(p.sketch_words as usize));
        let _ = store.fuzzy_docs.try_reserve_exact(n);
        let _ = store.digits.try_reserve_exact(per_doc(digits));
        let _ = store
            .samples
            .try_reserve_exact(per_doc(caps.bands as usize * caps.samples as usize));
        if p.similar_bands > 0 {
            let _ = store.similar_docs.try_reserve_exact(n);
            let _ = store.similar.try_reserve_exact(per_doc(
                p.similar_bands as usize * caps.similar_rows as usize,
            ));
        }
    }

    /// Weighs every document with `idf` instead of learning a table from the first
    /// [`sketch::IDF_SAMPLE`] documents: the same document then gets the same codes and sketch
    /// in every build, whatever else the build holds (index sets and shards need that).
    ///
    /// # Panics
    /// When documents were added already.
    pub fn with_idf(mut self, idf: Idf) -> Self {
        assert!(self.is_empty(), "with_idf before the first document");
        self.weighing = Some(self.fingerprinter.clone().with_idf(idf));
        self
    }

    /// Weighs every document with the idf table of `index` ([`IndexBuilder::with_idf`]): a
    /// collection's own weights, fixed for every piece built with them.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `index` is in another language than this builder.
    ///
    /// # Panics
    /// When documents were added already.
    pub fn with_idf_of<D: AsRef<[u8]>>(self, index: &Index<D>) -> Result<Self> {
        if index.meta().lang != self.lang {
            return Err(Error::Invalid(format!(
                "that index is in language {}, not {}",
                index.meta().lang,
                self.lang
            )));
        }
        let idf = index
            .fingerprinter()
            .idf()
            .cloned()
            .expect("an index has its idf table");
        Ok(self.with_idf(idf))
    }

    /// The names (ids) of the documents added so far, in order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.names.iter()
    }

    /// True when nothing about the codes or sketches depends on the documents added: the idf
    /// table and the resolution are fixed ([`IndexBuilder::with_idf`], [`Params::resolution`]).
    pub fn is_fixed(&self) -> bool {
        self.weighing.is_some() && self.fingerprinter.params().resolution.is_some()
    }

    /// How many documents added so far share their id with an earlier one, and the first such
    /// id; `None` when every id is unique. An index file keeps every document it is given, so
    /// a repeated id names two documents in its hits; an index set refuses repeats instead.
    pub fn repeated_ids(&self) -> Option<(u64, &str)> {
        repeated_ids(self.names())
    }

    /// Number of documents added so far.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when no document was added.
    pub fn is_empty(&self) -> bool {
        self.names.len() == 0
    }

    /// Fingerprints and adds a document; returns its number. `text` is taken as plain text:
    /// markup would be indexed as words (`pocketdex build` removes HTML's first, with
    /// [`crate::text::plain_text`]).
    pub fn add(&mut self, name: &str, title: Option<&str>, text: &str) -> u32 {
        let fp = self
            .weighing
            .as_ref()
            .unwrap_or(&self.fingerprinter)
            .fingerprint(text);
        self.push(name, title, fp)
    }

    /// Adds a document fingerprinted by [`IndexBuilder::fingerprinter`] or
    /// [`IndexBuilder::weighing_fingerprinter`] (e.g. on another thread), or by any fingerprinter
    /// with the same parameters, classes and stopwords; returns its number. A fingerprint
    /// weighed with another idf table, or for other caps, is weighed again.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the fingerprint was made with other parameters, classes or
    /// stopwords: its codes would never meet the others'; or when its terms were shed
    /// ([`Fingerprint::shed_terms`]) and it would have to be weighed again here.
    pub fn add_fingerprint(
        &mut self,
        name: &str,
        title: Option<&str>,
        fp: Fingerprint,
    ) -> Result<u32> {
        if !self.fingerprinter.made(&fp) {
            return Err(Error::Invalid(format!(
                "{name}: fingerprint made with other parameters, classes or stopwords than this builder's; fingerprint it with IndexBuilder::fingerprinter()"
            )));
        }
        if fp.is_shed() && !self.fits(&fp) {
            return Err(Error::Invalid(format!(
                "{name}: fingerprint's terms were shed, but this builder must weigh it (it has no idf table yet, or another one, or larger caps); shed only fingerprints weighed by IndexBuilder::weighing_fingerprinter()"
            )));
        }
        Ok(self.push(name, title, fp))
    }

    /// True when `fp` is weighed as this builder would weigh it: the same idf table and
    /// caps. Material of other caps has another length per document, and the builder reads
    /// each document's at a stride of its own caps.
    fn fits(&self, fp: &Fingerprint) -> bool {
        self.weighing.as_ref().is_some_and(|f| {
            let id = f.idf().map(Idf::id);
            fp.weighed
                .as_ref()
                .is_some_and(|w| Some(w.idf) == id && f.caps() == w.material.caps)
        })
    }

    /// Adds a fingerprint this builder's parameters made.
    fn push(&mut self, name: &str, title: Option<&str>, mut fp: Fingerprint) -> u32 {
        let doc = self.names.len() as u32;
        self.names.push(name);
        self.titles.push(title.unwrap_or(""));
        self.has_titles |= title.is_some_and(|t| !t.is_empty());
        let fits = self.fits(&fp);
        match &self.weighing {
            Some(f) => {
                if !fits {
                    f.weigh(&mut fp);
                }
                self.keep(doc, &fp);
            }
            None => {
                for &(h, _) in &fp.term_hashes {
                    *self.df.entry(sketch::idf_key(h)).or_default() += 1;
                }
                fp.weighed = None;
                self.pending.push((doc, fp));
                if self.pending.len() >= sketch::IDF_SAMPLE {
                    self.learn_idf();
                }
            }
        }
        doc
    }

    /// Keeps a weighed fingerprint's sketch and code material. Documents are kept in order:
    /// those waiting for the idf table are documents 0, 1, … and kept when it is learned,
    /// before any later one.
    fn keep(&mut self, doc: u32, fp: &Fingerprint) {
        let w = fp.weighed.as_ref().expect("weighed");
        debug_assert_eq!(
            self.sketches.len(),
            doc as usize * self.fingerprinter.params().sketch_words as usize
        );
        self.sketches.extend_from_slice(&w.sketch);
        // Weighing draws digits only for a fuzzy-path document and fragments only for a
        // short-path one (Fingerprinter::weigh), so the material says the paths.
        let m = &w.material;
        let fuzzy = !m.digits.is_empty();
        let short = !m.short.is_empty();
        if fuzzy {
            self.store.fuzzy_docs.push(doc);
            self.store.digits.extend_from_slice(&m.digits);
            self.store.samples.extend_from_slice(&m.samples);
        }
        if short {
            self.store.short_docs.push(doc);
            self.store.short.extend_from_slice(&m.short);
        }
        if !m.similar.is_empty() {
            self.store.similar_docs.push(doc);
            self.store.similar.extend_from_slice(&m.similar);
        }
        if let Some(e) = m.exact {
            self.store.exact.push((doc, e));
        }
        match (fuzzy, short) {
            (true, true) => self.paths.both += 1,
            (true, false) => self.paths.fuzzy += 1,
            (false, true) => self.paths.short += 1,
            (false, false) => self.paths.exact += 1,
        }
    }

    /// Freezes the idf table from the documents seen so far and weighs them (in parallel).
    fn learn_idf(&mut self) {
        // The language's table is the prior of a built-in language (a custom reference's
        // builder learns from its documents alone).
        let prior = Lang::from_code(&self.lang).map(Idf::builtin);
        let idf = Idf::from_df_with_prior(&self.df, self.pending.len() as u32, prior.as_ref());
        let f = self.fingerprinter.clone().with_idf(idf);
        let mut pending = std::mem::take(&mut self.pending);
        pending.par_iter_mut().for_each(|(_, fp)| f.weigh(fp));
        for (doc, fp) in &pending {
            self.keep(*doc, fp);
        }
        self.df = HashMap::default();
        self.weighing = Some(f);
    }

    /// Writes the index to `out` and returns what was written.
    pub fn finish<W: Write>(mut self, out: W) -> Result<BuildStats> {
        if self.weighing.is_none() {
            self.learn_idf();
        }
        if self.names.len() >= u32::MAX as usize {
            return Err(Error::Invalid(
                "at most 2^32 − 1 documents per index".into(),
            ));
        }
        let caps = self.fingerprinter.caps();
        let resolution = self
            .fingerprinter
            .params()
            .resolution
            .unwrap_or_else(|| Resolution::for_docs_within(self.names.len() as u64, caps));
        let IndexBuilder {
            fingerprinter,
            lang,
            names,
            titles,
            has_titles,
            sketches,
            store,
            paths,
            df,
            pending,
            weighing,
            set_sections,
        } = self;
        // What only fingerprinting needed goes before the references are made: the fields of
        // a partly moved builder would live until the index is written.
        drop((df, pending));
        let refs = references(store, &fingerprinter, caps, resolution);
        drop(fingerprinter);
        Parts {
            fingerprinter: weighing.expect("learned above"),
            lang,
            names,
            titles: has_titles.then_some(titles),
            sketches,
            refs,
            resolution,
            set_sections,
            paths: Some(paths),
        }
        .write(out)
    }

    /// Writes the index to `path` atomically: a temporary file in the same directory, fsync,
    /// rename. A failed build leaves nothing at `path`; temporary files that killed writers
    /// left in that directory (`.pocketdex-*.tmp`, unlocked) are removed. It replaces whatever
    /// `path` was: the front ends check first ([`crate::atomic::check_output`],
    /// [`crate::atomic::check_replaces_only_an_index`]).
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be written in; [`Error::Invalid`] when `path`
    /// is a symbolic link or not a regular file; what [`IndexBuilder::finish`] returns.
    pub fn write_to_path(self, path: &Path) -> Result<BuildStats> {
        write_atomically(parent_dir(path), path, || {}, |out| self.finish(out))
    }
}

/// A collection ready to be written, however its codes were found (fingerprinted by a builder,
/// or read from the segments being merged).
pub(crate) struct Parts {
    /// The fingerprinter of the collection, with its idf table.
    pub fingerprinter: Fingerprinter,
    pub lang: String,
    pub names: StringList,
    /// Titles, when some document has one.
    pub titles: Option<StringList>,
    pub sketches: Vec<u64>,
    /// Every (code, document) pair, in any order, repeats allowed.
    pub refs: Vec<(u64, u32)>,
    pub resolution: Resolution,
    pub set_sections: bool,
    /// Documents per path, when they were fingerprinted (see [`BuildStats::paths`]).
    pub paths: Option<PathCounts>,
}

impl Parts {
    /// Writes the index file to `out` and returns what was written.
    pub fn write<W: Write>(self, out: W) -> Result<BuildStats> {
        let Parts {
            fingerprinter,
            lang,
            names,
            titles,
            sketches,
            mut refs,
            resolution,
            set_sections,
            paths,
        } = self;
        let idf = fingerprinter
            .idf()
            .expect("a builder weighs with an idf table");
        refs.par_sort_unstable();
        let keys = dedup_keys(&mut refs);
        if keys.len() > u32::MAX as usize {
            return Err(Error::Invalid("more than 2^32 distinct codes".into()));
        }
        let mphf_bytes = mphf::to_bytes(&mphf::build(&keys));
        // Each key's slot, on every core, in key order (a perfect hash: every slot once), read
        // as a query reads it, many keys' reads asked for at once (ph's `get`, one key at a
        // time, took 0.39–0.49 s at 2,000,000 documents, this 0.29–0.37 s, in one-off timings).
        let view = mphf::View::new(&mphf_bytes, mphf::SEED_BITS)?;
        let mut slot_of = vec![0u32; keys.len()];
        slot_of
            .par_chunks_mut(SLOT_CHUNK)
            .zip(keys.par_chunks(SLOT_CHUNK))
            .for_each(|(out, keys)| {
                view.get_many(&mphf_bytes, keys, |i, slot| {
                    out[i] = slot.expect("MPHF maps every build key") as u32;
                })
            });
        let slot_count = keys.len() as u32;
        let ref_count = refs.len() as u64;
        let filter_bytes =
            filter::wanted(resolution, names.len() as u64).then(|| filter::build(&keys));
        let (checks, run_lens, postings) = by_slot(&refs, keys, &slot_of);
        drop(slot_of);
        // CODES wants each document's keys; the references are in key order.
        let refs_by_doc = if set_sections {
            refs_by_doc(&refs, names.len())
        } else {
            (Vec::new(), Vec::new())
        };
        drop(refs);

        let doc_count = names.len() as u32;
        let posting_bits = format::bits_for(doc_count as u64);
        let mut params = fingerprinter.params().clone();
        params.resolution = Some(resolution);
        let meta = Meta {
            doc_count,
            slot_count,
            ref_count,
            posting_bits: posting_bits as u8,
            lang,
            params,
        };
        let mut sections: Vec<(SectionId, Vec<u8>)> = Vec::new();
        let mut w = Writer::default();
        meta.encode(&mut w);
        sections.push((SectionId::Meta, std::mem::take(&mut w.buf)));
        meta::encode_classes(
            fingerprinter.classes(),
            &fingerprinter.analyzer().stopwords(),
            &mut w,
        );
        sections.push((SectionId::Classes, std::mem::take(&mut w.buf)));
        idf.encode(&mut w);
        sections.push((SectionId::Idf, std::mem::take(&mut w.buf)));
        sections.push((SectionId::Mphf, mphf_bytes));
        if let Some(f) = filter_bytes {
            sections.push((SectionId::Filter, f));
        }
        // The large sections' sizes are known: each is written into a buffer of its size
        // (grown by doubling, each would be copied and its pages faulted in about twice).
        w.buf.reserve_exact(2 * checks.len());
        for &c in &checks {
            w.u16(c);
        }
        drop(checks);
        sections.push((SectionId::Checks, std::mem::take(&mut w.buf)));
        // STARTS: bit p set when posting p starts a slot's list; then every 64th one's position.
        w.buf.reserve_exact(
            8 * (ref_count.div_ceil(64) + (slot_count as u64).div_ceil(format::SELECT_SAMPLE))
                as usize,
        );
        format::pack_bits(
            run_lens
                .iter()
                .flat_map(|&n| (0..n).map(|i| (i == 0) as u64)),
            1,
            &mut w,
        );
        let mut pos = 0u64;
        for (s, &n) in run_lens.iter().enumerate() {
            if (s as u64).is_multiple_of(format::SELECT_SAMPLE) {
                w.u64(pos);
            }
            pos += n as u64;
        }
        drop(run_lens);
        sections.push((SectionId::Starts, std::mem::take(&mut w.buf)));
        w.buf
            .reserve_exact(8 * (ref_count * posting_bits as u64).div_ceil(64) as usize);
        format::pack_bits(postings.iter().map(|&d| d as u64), posting_bits, &mut w);
        drop(postings);
        sections.push((SectionId::Postings, std::mem::take(&mut w.buf)));
        w.buf.reserve_exact(8 * sketches.len());
        for s in &sketches {
            w.u64(*s);
        }
        sections.push((SectionId::Sketches, std::mem::take(&mut w.buf)));
        format::write_strings(names.iter(), &mut w);
        let name_bytes = names
            .iter()
            .map(|n| n.len() as u64 + leb_len(n.len()))
            .sum();
        sections.push((SectionId::Names, std::mem::take(&mut w.buf)));
        if let Some(titles) = &titles {
            format::write_strings(titles.iter(), &mut w);
            sections.push((SectionId::Titles, std::mem::take(&mut w.buf)));
        }
        if set_sections {
            sections.push((SectionId::Codes, codes_section(&refs_by_doc, doc_count)));
            sections.push((SectionId::Ids, ids_section(&names)));
        }
        let bytes = write_file(out, &mut sections)?;
        Ok(BuildStats {
            docs: doc_count as u64,
            codes: meta.slot_count as u64,
            refs: meta.ref_count,
            bytes,
            name_bytes,
            sections: sections
                .iter()
                .map(|(id, b)| (id.name().to_string(), b.len() as u64))
                .collect(),
            paths,
            resolution,
        })
    }
}

/// Keys per task when their slots are looked up.
const SLOT_CHUNK: usize = 1 << 16;

/// Per slot, in slot order: its key's check, the number of its references, and (the last
/// vector) their documents, slot after slot. `refs` are sorted by key, `keys` are their
/// distinct keys, ascending (their memory is reused), and `slot_of[i]` is the slot of `keys[i]`.
///
/// Everything is read in key order and written to its slot, on every core, a block of keys per
/// task: random writes, which the CPU does not wait for, where reading in slot order had cost
/// two dependent random reads per slot (at 2,000,000 documents, 14.4 million slots: the slots'
/// lookup and regrouping 2.0 s of a build's 19.4 before, 1.0 s now; README, "At scale").
fn by_slot(refs: &[(u64, u32)], keys: Vec<u64>, slot_of: &[u32]) -> (Vec<u16>, Vec<u32>, Vec<u32>) {
    // Enough tasks to balance two to a few dozen cores, few enough that a task's overhead is
    // nothing beside its 65,536 random writes.
    const KEYS: usize = 1 << 16;
    debug_assert_eq!(keys.len(), slot_of.len());
    // Each block of keys with its references (a run per key, in key order).
    let blocks: Vec<(usize, &[(u64, u32)])> = (0..keys.len())
        .step_by(KEYS)
        .map(|first| {
            let last = (first + KEYS).min(keys.len());
            let from = refs.partition_point(|r| r.0 < keys[first]);
            let to = match keys.get(last) {
                Some(&k) => refs.partition_point(|r| r.0 < k),
                None => refs.len(),
            };
            (first, &refs[from..to])
        })
        .collect();
    // Calls `each(key index, run)` for every key of a block, in order.
    fn runs(first: usize, refs: &[(u64, u32)], mut each: impl FnMut(usize, &[(u64, u32)])) {
        let (mut i, mut at) = (first, 0);
        while at < refs.len() {
            let key = refs[at].0;
            let len = refs[at..].iter().take_while(|r| r.0 == key).count();
            each(i, &refs[at..at + len]);
            (i, at) = (i + 1, at + len);
        }
    }
    // Zeroed by the allocator (pages the kernel zeroes as the cores first write them), not by
    // a pass of stores on one core first: 0.16–0.19 s at 14.4 million slots.
    let mut checks = vec![0u16; keys.len()];
    let mut lens = vec![0u32; keys.len()];
    {
        let (checks, lens) = (atomic_u16(&mut checks), atomic_u32(&mut lens));
        blocks.par_iter().for_each(|&(first, block)| {
            runs(first, block, |i, run| {
                let s = slot_of[i] as usize;
                checks[s].store(format::check16(keys[i]), Ordering::Relaxed);
                // (A run is at most one per document: fewer than 2^32, as `finish` checked.)
                lens[s].store(run.len() as u32, Ordering::Relaxed);
            });
        });
    }
    // Where each slot's documents start, in the keys' place: the keys are not needed any more,
    // and a build's peak memory is here.
    let mut starts = keys;
    let mut at = 0u64;
    for (start, &n) in starts.iter_mut().zip(&lens) {
        *start = at;
        at += n as u64;
    }
    let mut postings = vec![0u32; refs.len()];
    {
        let postings = atomic_u32(&mut postings);
        blocks.par_iter().for_each(|&(first, block)| {
            runs(first, block, |i, run| {
                let at = starts[slot_of[i] as usize] as usize;
                for (j, r) in run.iter().enumerate() {
                    postings[at + j].store(r.1, Ordering::Relaxed);
                }
            });
        });
    }
    (checks, lens, postings)
}

/// `v` as atomics, which every core may store to while the borrow lasts.
fn atomic_u32(v: &mut [u32]) -> &[AtomicU32] {
    const { assert!(std::mem::align_of::<AtomicU32>() == std::mem::align_of::<u32>()) };
    // SAFETY: `AtomicU32` has the size and bit validity of `u32` (std's documentation) and, as
    // asserted, its alignment; the exclusive borrow keeps every other access out.
    unsafe { &*(v as *mut [u32] as *const [AtomicU32]) }
}

/// [`atomic_u32`] for `u16`.
fn atomic_u16(v: &mut [u16]) -> &[AtomicU16] {
    const { assert!(std::mem::align_of::<AtomicU16>() == std::mem::align_of::<u16>()) };
    // SAFETY: as in `atomic_u32`.
    unsafe { &*(v as *mut [u16] as *const [AtomicU16]) }
}

/// How many of `ids` share their id with an earlier one, and the first such id (in the order
/// given); `None` when every id is unique. The ids' 128-bit hashes are sorted on every core,
/// so millions of ids cost a fraction of a second and no set of them.
pub fn repeated_ids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Option<(u64, &'a str)> {
    let ids: Vec<&str> = ids.into_iter().collect();
    // Halves of the hash, not a u128: 24 bytes an id instead of 32.
    let mut keyed: Vec<(u64, u64, u32)> = ids
        .par_iter()
        .enumerate()
        .map(|(i, id)| {
            let h = hash::h128(id.as_bytes(), 0);
            ((h >> 64) as u64, h as u64, i as u32)
        })
        .collect();
    keyed.par_sort_unstable();
    // After sorting, the later of two neighbours with the same hash repeats an earlier id.
    let (n, first) = keyed
        .windows(2)
        .filter(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        .fold((0u64, u32::MAX), |(n, first), w| (n + 1, first.min(w[1].2)));
    (n > 0).then(|| (n, ids[first as usize]))
}

/// Drops repeated references from `refs` (sorted) and returns their distinct keys, ascending:
/// parts that start at a new key, each deduplicated in place on every core, then moved together
/// (at 2 million documents, 15 million references: 0.1–0.36 s on one core before).
fn dedup_keys(refs: &mut Vec<(u64, u32)>) -> Vec<u64> {
    let parts = 4 * rayon::current_num_threads().max(1);
    // Where each part starts: after the last reference of the key at its nominal start.
    let mut cuts = vec![0];
    for p in 1..parts {
        let at = refs.len() * p / parts;
        if at == 0 || at <= *cuts.last().expect("starts with 0") {
            continue;
        }
        let key = refs[at - 1].0;
        let cut = at + refs[at..].partition_point(|r| r.0 == key);
        if cut < refs.len() {
            cuts.push(cut);
        }
    }
    cuts.push(refs.len());
    let mut pieces = Vec::with_capacity(cuts.len() - 1);
    let mut rest = &mut refs[..];
    for w in cuts.windows(2) {
        let (piece, tail) = rest.split_at_mut(w[1] - w[0]);
        pieces.push(piece);
        rest = tail;
    }
    // Each part's references kept and keys counted, then the keys written straight into their
    // place: no vector of keys per part beside the whole one.
    let done: Vec<(usize, usize)> = pieces.into_par_iter().map(dedup_part).collect();
    let mut kept = 0;
    for (&start, &(n, _)) in cuts.iter().zip(&done) {
        refs.copy_within(start..start + n, kept);
        kept += n;
    }
    refs.truncate(kept);
    let mut keys = vec![0u64; done.iter().map(|d| d.1).sum()];
    let (mut ref_parts, mut key_parts) = (Vec::new(), Vec::new());
    let (mut refs_left, mut keys_left) = (&refs[..], &mut keys[..]);
    for &(n, k) in &done {
        let (r, rest) = refs_left.split_at(n);
        let (ks, kr) = keys_left.split_at_mut(k);
        ref_parts.push(r);
        key_parts.push(ks);
        (refs_left, keys_left) = (rest, kr);
    }
    ref_parts
        .into_par_iter()
        .zip(key_parts)
        .for_each(|(refs, keys)| {
            for (key, run) in keys.iter_mut().zip(refs.chunk_by(|a, b| a.0 == b.0)) {
                *key = run[0].0;
            }
        });
    keys
}

/// [`dedup_keys`] of one part, in place: how many references it keeps, and how many keys.
fn dedup_part(refs: &mut [(u64, u32)]) -> (usize, usize) {
    let (mut kept, mut keys) = (0, 0);
    for i in 0..refs.len() {
        let r = refs[i];
        if kept > 0 && refs[kept - 1] == r {
            continue;
        }
        if kept == 0 || refs[kept - 1].0 != r.0 {
            keys += 1;
        }
        refs[kept] = r;
        kept += 1;
    }
    (kept, keys)
}

/// The references regrouped by document: each document's number of codes, and their keys in
/// document order (ascending within a document, as `refs` is sorted by key).
fn refs_by_doc(refs: &[(u64, u32)], docs: usize) -> (Vec<u16>, Vec<u64>) {
    let mut counts = vec![0u32; docs];
    for r in refs {
        counts[r.1 as usize] += 1;
    }
    let mut at: Vec<usize> = Vec::with_capacity(docs);
    let mut total = 0usize;
    for &c in &counts {
        at.push(total);
        total += c as usize;
    }
    let mut keys = vec![0u64; total];
    for r in refs {
        let i = &mut at[r.1 as usize];
        keys[*i] = r.0;
        *i += 1;
    }
    // A document has at most (schemes × bands) + short + similar bands + 1 codes, far below 2^16.
    (counts.into_iter().map(|c| c as u16).collect(), keys)
}

/// Section CODES: `doc_count` × u16 counts, zero-padded to a multiple of 8 bytes, then every
/// document's keys (u64) in document order.
fn codes_section((counts, keys): &(Vec<u16>, Vec<u64>), doc_count: u32) -> Vec<u8> {
    debug_assert_eq!(counts.len(), doc_count as usize);
    let mut w = Writer::default();
    for &c in counts {
        w.u16(c);
    }
    while w.buf.len() % 8 != 0 {
        w.u8(0);
    }
    for &k in keys {
        w.u64(k);
    }
    w.buf
}

/// Section IDS: the documents' name hashes (`h64(name, NAME_SEED)`) ascending, ties by
/// document, then the document of each (u32).
fn ids_section(names: &StringList) -> Vec<u8> {
    let mut ids: Vec<(u64, u32)> = names
        .iter()
        .enumerate()
        .map(|(d, n)| (hash::h64(n.as_bytes(), hash::NAME_SEED), d as u32))
        .collect();
    ids.par_sort_unstable();
    let mut w = Writer::default();
    for &(h, _) in &ids {
        w.u64(h);
    }
    for &(_, d) in &ids {
        w.u32(d);
    }
    w.buf
}

/// Every (code, document) pair of the collection at `resolution`, made in parallel.
fn references(
    mut store: Store,
    f: &Fingerprinter,
    caps: Resolution,
    resolution: Resolution,
) -> Vec<(u64, u32)> {
    use crate::fingerprint::{band_codes, fuzzy_codes, Path};
    let params = f.params();
    let k = f.classes().k();
    let digits = params.schemes.len() * k;
    let samples = caps.bands as usize * caps.samples as usize;
    let short = params.minhash_bands as usize * caps.short_rows as usize;
    let similar = params.similar_bands as usize * caps.similar_rows as usize;
    // Every path gives each of its documents the same number of codes, so each document's
    // references have a place known in advance, and every core fills its own blocks of them.
    let fuzzy_codes_per_doc = params.schemes.len() * resolution.bands as usize;
    let (short_bands, similar_bands) =
        (params.minhash_bands as usize, params.similar_bands as usize);
    let total = store.fuzzy_docs.len() * fuzzy_codes_per_doc
        + store.short_docs.len() * short_bands
        + store.similar_docs.len() * similar_bands
        + store.exact.len();
    // Zeroed by the allocator, so its pages are first touched by the cores that fill them.
    let mut refs = vec![(0u64, 0u32); total];
    let (fuzzy_refs, rest) = refs.split_at_mut(store.fuzzy_docs.len() * fuzzy_codes_per_doc);
    path_refs(
        fuzzy_refs,
        &store.fuzzy_docs,
        fuzzy_codes_per_doc,
        |i, out| {
            fuzzy_codes(
                &store.digits[i * digits..(i + 1) * digits],
                &store.samples[i * samples..(i + 1) * samples],
                caps,
                params,
                k,
                resolution,
                out,
            )
        },
    );
    // Each path's material goes as soon as its codes are made.
    drop((
        std::mem::take(&mut store.digits),
        std::mem::take(&mut store.samples),
    ));
    let (short_refs, rest) = rest.split_at_mut(store.short_docs.len() * short_bands);
    let (similar_refs, exact_refs) = rest.split_at_mut(store.similar_docs.len() * similar_bands);
    for (path, out, docs, frags, stride, bands) in [
        (
            Path::Short,
            short_refs,
            std::mem::take(&mut store.short_docs),
            std::mem::take(&mut store.short),
            short,
            short_bands,
        ),
        (
            Path::Similar,
            similar_refs,
            std::mem::take(&mut store.similar_docs),
            std::mem::take(&mut store.similar),
            similar,
            similar_bands,
        ),
    ] {
        path_refs(out, &docs, bands, |i, out| {
            let m = &frags[i * stride..(i + 1) * stride];
            band_codes(path, m, caps, params, resolution, out)
        });
    }
    for (r, &(doc, key)) in exact_refs.iter_mut().zip(&store.exact) {
        *r = (key, doc);
    }
    refs
}

/// The (code, document) pairs of the documents `docs` of one path into `refs`, `per_doc` of
/// them per document, on every core: `codes(i, out)` writes the codes of the `i`-th document.
///
/// # Panics
/// When a document gets another number of codes (a path's code count is fixed by its
/// parameters and the resolution).
fn path_refs(
    refs: &mut [(u64, u32)],
    docs: &[u32],
    per_doc: usize,
    codes: impl Fn(usize, &mut Vec<Code>) + Sync,
) {
    // Enough blocks to balance the cores, large enough that a task's overhead is nothing.
    const DOCS: usize = 4096;
    if per_doc == 0 {
        return;
    }
    refs.par_chunks_mut(DOCS * per_doc)
        .enumerate()
        .for_each(|(block, out)| {
            let mut made = Vec::with_capacity(per_doc);
            for (j, dst) in out.chunks_mut(per_doc).enumerate() {
                let i = block * DOCS + j;
                made.clear();
                codes(i, &mut made);
                assert_eq!(made.len(), per_doc, "codes per document on one path");
                for (r, c) in dst.iter_mut().zip(&made) {
                    *r = (c.key, docs[i]);
                }
            }
        });
}

fn leb_len(n: usize) -> u64 {
    (format::bits_for(n as u64 + 1) as u64).div_ceil(7).max(1)
}

/// Writes header, directory, 8-aligned sections and trailer; returns the file length.
fn write_file<W: Write>(out: W, sections: &mut Vec<(SectionId, Vec<u8>)>) -> Result<u64> {
    // The block tree over the others: TREE beside the small sections `open` reads, SUMS last.
    let (tree, sums) = {
        let views: Vec<(SectionId, &[u8])> = sections.iter().map(|(id, b)| (*id, &b[..])).collect();
        integrity::build(&views)
    };
    let at = sections
        .iter()
        .position(|(id, _)| *id == SectionId::Idf)
        .map_or(0, |i| i + 1);
    sections.insert(at, (SectionId::Tree, tree));
    sections.push((SectionId::Sums, sums));
    let sections = &sections[..];
    let views: Vec<(SectionId, &[u8])> = sections.iter().map(|(id, b)| (*id, &b[..])).collect();
    let dir = Directory::layout(&views);
    let mut out = ChecksumWriter {
        inner: out,
        hasher: xxhash_rust::xxh3::Xxh3::with_seed(hash::CHECKSUM_SEED),
        written: 0,
    };
    let io = |e| Error::Io {
        path: None,
        source: e,
    };
    out.write_all(&dir.encode()).map_err(io)?;
    for (e, (_, b)) in dir.entries().iter().zip(sections) {
        out.pad_to(e.offset).map_err(io)?;
        out.write_all(b).map_err(io)?;
    }
    out.pad_to(dir.file_len - format::TRAILER_LEN as u64)
        .map_err(io)?;
    let sum = out.hasher.digest();
    out.inner.write_all(&sum.to_le_bytes()).map_err(io)?;
    out.inner.write_all(&format::END_MAGIC).map_err(io)?;
    out.inner.flush().map_err(io)?;
    Ok(dir.file_len)
}

struct ChecksumWriter<W> {
    inner: W,
    hasher: xxhash_rust::xxh3::Xxh3,
    written: u64,
}

impl<W: Write> ChecksumWriter<W> {
    fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.hasher.update(b);
        self.written += b.len() as u64;
        self.inner.write_all(b)
    }
    fn pad_to(&mut self, at: u64) -> std::io::Result<()> {
        let n = at - self.written;
        self.write_all(&vec![0u8; n as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::{by_slot, dedup_keys, path_refs};
    use crate::fingerprint::{Code, Path};
    use crate::format;
    use crate::hash::fmix64;

    /// The one-pass dedup gives what `dedup` of the references and of their keys gave:
    /// empty, one, all repeats, and sorted references with repeats of pairs and of keys.
    #[test]
    fn dedup_keys_is_dedup_of_references_and_of_keys() {
        let mixed: Vec<(u64, u32)> = {
            let mut v: Vec<(u64, u32)> = (0..5000u64)
                .map(|i| (fmix64(i) % 700, (fmix64(!i) % 5) as u32))
                .collect();
            v.sort_unstable();
            v
        };
        // One key's references over several parts, and repeats across a part's nominal start.
        let long: Vec<(u64, u32)> = (0..3000u32)
            .map(|i| (1, i / 2))
            .chain((0..3000u64).map(|i| (2 + i / 3, 7)))
            .collect();
        for refs in [vec![], vec![(3, 1)], vec![(3, 1); 4], mixed, long] {
            let mut expected = refs.clone();
            expected.dedup();
            let mut keys: Vec<u64> = expected.iter().map(|r| r.0).collect();
            keys.dedup();
            let mut got = refs.clone();
            assert_eq!(dedup_keys(&mut got), keys);
            assert_eq!(got, expected);
        }
    }

    /// Filling each document's place on every core gives the references one document after
    /// another would: blocks of 4,096 documents, a partial last one, and none.
    #[test]
    fn path_refs_fill_each_documents_place() {
        for n in [0usize, 1, 4096, 3 * 4096 + 17] {
            let docs: Vec<u32> = (0..n as u32).map(|d| d * 3 + 1).collect();
            let codes = |i: usize, out: &mut Vec<Code>| {
                for g in 0..5u64 {
                    out.push(Code {
                        key: fmix64((i as u64) << 3 | g),
                        path: Path::Similar,
                        group: g as u16,
                    });
                }
            };
            let mut expected = Vec::new();
            for (i, &d) in docs.iter().enumerate() {
                let mut out = Vec::new();
                codes(i, &mut out);
                expected.extend(out.iter().map(|c| (c.key, d)));
            }
            let mut refs = vec![(0, 0); n * 5];
            path_refs(&mut refs, &docs, 5, codes);
            assert_eq!(refs, expected, "{n} documents");
        }
    }

    /// A shed fingerprint weighed by the builder's own fingerprinter is indexed exactly as the
    /// whole one; one the builder would have to weigh (no idf table yet, or another caps) is
    /// refused, and nothing is added.
    #[test]
    fn shed_fingerprints_index_alike_or_are_refused() {
        use crate::sketch::Idf;
        use crate::{IndexBuilder, Lang, Params};
        let texts = [
            "The crab walks sideways along the shore of the tide pool at dawn.",
            "A hermit crab borrows the empty shell of a sea snail for its home.",
            "",
        ];
        let build = |shed: bool| {
            let mut b = IndexBuilder::for_lang(Lang::En, Params::default())
                .unwrap()
                .with_idf(Idf::builtin(Lang::En));
            let f = b.weighing_fingerprinter().unwrap().clone();
            for (i, t) in texts.iter().enumerate() {
                let mut fp = f.fingerprint(t);
                if shed {
                    fp.shed_terms();
                    assert!(fp.is_shed() && fp.class_counts.is_empty());
                }
                b.add_fingerprint(&format!("d{i}"), None, fp).unwrap();
            }
            let mut out = Vec::new();
            b.finish(&mut out).unwrap();
            out
        };
        assert_eq!(build(true), build(false));
        // Learning its idf table from its documents, a builder weighs them itself.
        let mut b = IndexBuilder::for_lang(Lang::En, Params::default()).unwrap();
        let mut fp = b.fingerprinter().fingerprint(texts[0]);
        fp.shed_terms();
        assert!(!fp.is_shed(), "an unweighed fingerprint keeps its terms");
        let weighed = IndexBuilder::for_lang(Lang::En, Params::default())
            .unwrap()
            .with_idf(Idf::uniform());
        let mut fp = weighed
            .weighing_fingerprinter()
            .unwrap()
            .fingerprint(texts[0]);
        fp.shed_terms();
        let err = b.add_fingerprint("d0", None, fp).unwrap_err().to_string();
        assert!(err.contains("terms were shed"), "{err}");
        assert!(b.is_empty());
    }

    /// Fingerprints weighed for larger caps than the builder's (a fingerprinter of the same
    /// language and idf table, but not sized for this collection) are weighed again, and the
    /// index is byte for byte the one of the builder's own fingerprints: kept as they were,
    /// their longer material was read at the builder's stride, every document after the first
    /// with another's codes.
    #[test]
    fn repeated_ids_are_counted_as_a_set_would_count_them() {
        use super::repeated_ids;
        use crate::{IndexBuilder, Lang, Params};
        use std::collections::HashSet;
        // Against the obvious count: a set of the ids seen, in order.
        let oracle = |ids: &[&str]| -> Option<(u64, String)> {
            let mut seen = HashSet::new();
            let mut later = ids.iter().filter(|id| !seen.insert(**id));
            let first = later.next()?;
            Some((1 + later.count() as u64, first.to_string()))
        };
        let cases: Vec<Vec<&str>> = vec![
            vec![],
            vec!["a"],
            vec!["a", "b", "c"],
            vec!["a", "b", "a"],
            vec!["x", "y", "y", "x", "y", "z"],
            vec!["", "", "é", "e\u{301}", "é"],
        ];
        for ids in cases {
            let got = repeated_ids(ids.iter().copied()).map(|(n, f)| (n, f.to_string()));
            assert_eq!(got, oracle(&ids), "{ids:?}");
        }
        let mut b = IndexBuilder::for_lang(Lang::En, Params::default()).unwrap();
        for (id, text) in [
            ("a", "Jupiter is a planet"),
            ("b", "Mozart was a composer"),
            ("a", "Saturn has rings"),
        ] {
            b.add(id, None, text);
        }
        assert_eq!(b.repeated_ids(), Some((1, "a")));
    }

    #[test]
    fn fingerprints_of_other_caps_are_weighed_again() {
        use crate::sketch::Idf;
        use crate::{Fingerprinter, IndexBuilder, Lang, Params};
        let texts: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "Document {i} tells of the crab number {} that walks sideways along the shore of tide pool {} at dawn, borrowing shells {} and sea snails {} for a home near rock {}.",
                    i * 7, i % 5, i * 3, i % 11, i * 13
                )
            })
            .collect();
        let build = |other: bool| {
            let mut b = IndexBuilder::for_lang(Lang::En, Params::default())
                .unwrap()
                .with_idf(Idf::builtin(Lang::En));
            b.size_hint(1000);
            let f = if other {
                Fingerprinter::for_lang(Lang::En, Params::default())
                    .unwrap()
                    .with_idf(Idf::builtin(Lang::En))
            } else {
                b.weighing_fingerprinter().unwrap().clone()
            };
            if other {
                assert_ne!(f.caps(), b.weighing_fingerprinter().unwrap().caps());
            }
            for (i, t) in texts.iter().enumerate() {
                b.add_fingerprint(&format!("d{i}"), None, f.fingerprint(t))
                    .unwrap();
            }
            let mut out = Vec::new();
            b.finish(&mut out).unwrap();
            out
        };
        assert!(build(true) == build(false));
    }

    /// The regrouping by slot gives each slot its key's check, run length and documents, in
    /// slot order, as reading the runs slot after slot does: no keys, one block, and several
    /// blocks with a partial last one, slots in a random order of the keys.
    #[test]
    fn by_slot_is_the_runs_in_slot_order() {
        for keys in [0usize, 1, 1000, 2 * 65_536 + 123] {
            // References sorted by key, 1 to 4 per key, as `Parts::write` has them; keys,
            // documents and slot order from the crate's mixer.
            let key = |k: u64| k << 20 | fmix64(k) >> 44;
            let (mut refs, mut runs) = (Vec::new(), vec![Vec::new(); keys]);
            for k in 0..keys as u64 {
                for j in 0..1 + fmix64(k) % 4 {
                    let doc = fmix64(k << 2 | j) as u32 >> 12;
                    refs.push((key(k), doc));
                    runs[k as usize].push(doc);
                }
            }
            let distinct: Vec<u64> = (0..keys as u64).map(key).collect();
            let mut key_at_slot: Vec<u32> = (0..keys as u32).collect();
            key_at_slot.sort_by_key(|&k| fmix64(!(k as u64)));
            let mut slot_of = vec![0u32; keys];
            for (s, &k) in key_at_slot.iter().enumerate() {
                slot_of[k as usize] = s as u32;
            }
            let run = |k: u32| runs[k as usize].clone();
            let checks: Vec<u16> = key_at_slot
                .iter()
                .map(|&k| format::check16(distinct[k as usize]))
                .collect();
            let lens: Vec<u32> = key_at_slot.iter().map(|&k| run(k).len() as u32).collect();
            let postings: Vec<u32> = key_at_slot.iter().flat_map(|&k| run(k)).collect();
            assert_eq!(postings.len(), refs.len());
            assert_eq!(
                by_slot(&refs, distinct.clone(), &slot_of),
                (checks, lens, postings),
                "{keys} keys"
            );
        }
    }
}
