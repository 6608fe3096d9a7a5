//! The fuzzy-fingerprint index as an all-pairs method: every document goes into an in-memory
//! pocketdex index ([`IndexBuilder`] → [`Index`]), and every document queries it through the
//! library's one query path ([`Index::query_fingerprint`]). Pairs found in either direction are candidates; the
//! index's simhash sketches (tf-idf weighted) estimate their cosine, and each is verified with
//! the exact tf-idf cosine of the two documents in the collection ([`DocFreq`]), the measure of
//! the evaluation oracle.

use super::compare::Comparison;
use super::cosine::{DocFreq, TermVector};
use super::{
    Described, Describer, Docs, Evidence, Found, Info, Method, Options, Pair, Record, Scorer,
};
use bytemuck::cast_slice;
use pocketdex::error::Result;
use pocketdex::fingerprint::{Fingerprint, Material, Weighed};
use pocketdex::sketch::Idf;
use pocketdex::{Index, IndexBuilder, Lang, Params, QueryFingerprint, QueryOptions};
use rayon::prelude::*;

/// How far below the threshold the sketch estimate may be for a pair to be verified. The
/// sketch's estimate of the tf-idf cosine has a standard error of about 0.06 near 0.8 (and its
/// idf is learned from a sample); 0.25 keeps nearly every pair the codes find.
pub const SLACK: f64 = 0.25;

/// What the method keeps of one document, read from its record: its class counts and its terms
/// in a compact form (hashes and counts side by side, 20 bytes a term instead of 32), from which
/// its fingerprint is rebuilt for the index and for its query.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kept<'a> {
    /// terms, 1 when `exact` holds a value, exact, maker.
    header: &'a [u64],
    class_counts: &'a [u32],
    /// 128-bit term hashes as (low, high) words.
    hashes: &'a [[u64; 2]],
    counts: &'a [u32],
}

impl<'a> Kept<'a> {
    /// The record of an (unweighed) fingerprint, and its identity.
    pub fn describe(fingerprint: &Fingerprint) -> Described {
        let (hashes, counts): (Vec<[u64; 2]>, Vec<u32>) = fingerprint
            .term_hashes
            .iter()
            .map(|&(h, c)| ([h as u64, (h >> 64) as u64], c))
            .unzip();
        let header = [
            fingerprint.terms as u64,
            fingerprint.exact.is_some() as u64,
            fingerprint.exact.unwrap_or(0),
            fingerprint.maker,
        ];
        let mut sorted = fingerprint.term_hashes.clone();
        sorted.sort_unstable();
        let identity = Described::identity_of(
            sorted
                .iter()
                .flat_map(|&(h, c)| [h as u64, (h >> 64) as u64, c as u64]),
        );
        Described::new(
            &[
                cast_slice(&header),
                cast_slice(&fingerprint.class_counts),
                cast_slice(&hashes),
                cast_slice(&counts),
            ],
            identity,
        )
    }

    /// The document as its record holds it.
    pub fn of(r: Record<'a>) -> Kept<'a> {
        Kept {
            header: r.field(0),
            class_counts: r.field(1),
            hashes: r.field(2),
            counts: r.field(3),
        }
    }

    fn term_hashes(&self) -> impl Iterator<Item = (u128, u32)> + 'a {
        self.hashes
            .iter()
            .zip(self.counts)
            .map(|(&[lo, hi], &c)| (lo as u128 | (hi as u128) << 64, c))
    }

    /// The (unweighed) fingerprint.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint {
            terms: self.header[0] as u32,
            class_counts: self.class_counts.to_vec(),
            term_hashes: self.term_hashes().collect(),
            exact: (self.header[1] == 1).then_some(self.header[2]),
            weighed: None,
            maker: self.header[3],
        }
    }

    /// Bytes of the record.
    fn bytes(&self) -> u64 {
        (8 * self.header.len() + 4 * self.class_counts.len() + 20 * self.counts.len()) as u64
    }

    /// The term-frequency vector (keyed by the low 64 bits of the term hashes).
    pub fn tf(&self) -> TermVector {
        TermVector::from_counts(
            self.hashes
                .iter()
                .zip(self.counts)
                .map(|(&[lo, _], &c)| (lo, c)),
        )
    }
}

/// The parameters of the in-memory index, and so of the fingerprints that go into it. Pairs at
/// the method's thresholds (0.8 by default) are near copies: the probes of [`find`] look up no
/// similar-path codes, so the index leaves them out.
fn params() -> Params {
    Params {
        similar_bands: 0,
        ..Params::default()
    }
}

/// One document.
pub(crate) struct Doc<'a> {
    pub kept: Kept<'a>,
}

/// All pairs the index finds. With `tfidf` (the collection's tf-idf, for verifying):
/// candidates with estimate ≥ t − [`SLACK`], kept when the tf-idf cosine reaches `t`; without:
/// pairs with estimate ≥ t, score = estimate. Returns the pairs and the candidates.
pub(crate) fn find(
    docs: &[Doc<'_>],
    lang: Lang,
    tfidf: Option<&TfIdf>,
    t: f64,
    block_bytes: u64,
) -> Result<(Vec<Pair>, u64)> {
    let verify = tfidf.is_some();
    if docs.len() < 2 {
        return Ok((Vec::new(), 0));
    }
    let mut builder = IndexBuilder::for_lang(lang, params())?;
    builder.size_hint(docs.len() as u64);
    for (i, d) in docs.iter().enumerate() {
        builder.add_fingerprint(&i.to_string(), None, d.kept.fingerprint())?;
    }
    let mut bytes = Vec::new();
    builder.finish(&mut bytes)?;
    let index = Index::open(bytes)?;
    let floor = if verify { t - SLACK } else { t };
    // Every document is a query on the library's one query path: its probes, their postings,
    // and the candidates whose sketches estimate a similarity of at least `floor` (less a
    // rounding margin, as the estimate is an f32).
    let opts = QueryOptions {
        top: usize::MAX,
        threshold: (floor - 1e-6) as f32,
        ..QueryOptions::default()
    };
    let idf = index.fingerprinter().idf().map_or(0, Idf::id);
    // (a, b, colliding code groups, estimate) with a < b, found from either end; the documents
    // query a chunk at a time, so that only one chunk's hits are held twice.
    let mut estimated: Vec<(u32, u32, u32, f64)> = Vec::new();
    for first in (0..docs.len()).step_by(QUERY_CHUNK) {
        let found = (first..(first + QUERY_CHUNK).min(docs.len()))
            .into_par_iter()
            .map(|a| -> Result<Vec<_>> {
                // The document's sketch is in the index already: handed over as weighed with
                // the index's idf, the query path uses it instead of drawing it again.
                let mut fp = docs[a].kept.fingerprint();
                fp.weighed = Some(Weighed {
                    idf,
                    material: Material::default(),
                    sketch: index.sketch(a as u32)?.unwrap_or_default(),
                });
                let r = index.query_fingerprint(&QueryFingerprint::from(fp), &opts)?;
                let a = a as u32;
                Ok(r.hits
                    .into_iter()
                    .filter(|h| h.doc != a)
                    .map(|h| (a.min(h.doc), a.max(h.doc), h.codes as u32, h.score as f64))
                    .collect())
            })
            .collect::<Result<Vec<Vec<_>>>>()?;
        estimated.extend(found.into_iter().flatten());
    }
    // Found from both ends: keep one, with the larger number of colliding groups.
    estimated.sort_unstable_by(|p, q| (p.0, p.1).cmp(&(q.0, q.1)).then(q.2.cmp(&p.2)));
    estimated.dedup_by_key(|p| (p.0, p.1));
    let candidates = estimated.len() as u64;
    // Documents in blocks of at most `block_bytes` of features, and the candidates verified one
    // pair of blocks at a time: when the features were spilled to a file, each block is read
    // from it once per block it is paired with instead of once per candidate (2 million
    // documents' candidates, 11 million, read at random thrash a page cache smaller than the
    // file). In one block, this is the order of (a, b).
    let mut block = Vec::with_capacity(docs.len());
    let (mut at, mut bytes) = (0u32, 0u64);
    for d in docs {
        let size = d.kept.bytes();
        if bytes > 0 && bytes + size > block_bytes {
            at += 1;
            bytes = 0;
        }
        bytes += size;
        block.push(at);
    }
    estimated.par_sort_unstable_by_key(|p| (block[p.0 as usize], block[p.1 as usize], p.0, p.1));
    let mut pairs = Vec::new();
    // One pair of blocks at a time, in parallel within it; each run of one first document
    // makes its term vector once.
    for blocks in estimated.chunk_by(|p, q| {
        (block[p.0 as usize], block[p.1 as usize]) == (block[q.0 as usize], block[q.1 as usize])
    }) {
        pairs.par_extend(blocks.par_chunk_by(|p, q| p.0 == q.0).flat_map_iter(|run| {
            let a = run[0].0;
            let tf_a = tfidf.map(|_| docs[a as usize].kept.tf());
            run.iter().filter_map(move |&(_, b, groups, est)| {
                let score = match (tfidf, &tf_a) {
                    (Some(w), Some(tf_a)) => w.cosine(tf_a, a, &docs[b as usize].kept.tf(), b),
                    _ => est,
                };
                (score + 1e-9 >= t).then_some(Pair {
                    a,
                    b,
                    score,
                    estimate: Some(est),
                    evidence: Evidence::Codes { groups },
                })
            })
        }));
    }
    pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
    Ok((pairs, candidates))
}

/// Documents that query the index at once in [`find`].
const QUERY_CHUNK: usize = 1 << 16;

/// pocketdex's fuzzy-fingerprint index, queried with every document: candidates from colliding
/// codes, scored by the tf-idf cosine of content words.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fuzzy;

impl Method for Fuzzy {
    fn info(&self) -> &'static Info {
        &Info {
            name: "fuzzy",
            description: "pocketdex's fuzzy-fingerprint index, queried with every document",
            default_threshold: 0.8,
            estimates: true,
        }
    }

    fn measure(&self, o: &Options) -> String {
        format!("tf-idf cosine of content words{}", o.estimated())
    }

    /// The fingerprint, kept compactly, made by the fingerprinter of the index it goes into.
    fn describer(&self, o: &Options) -> Result<Describer> {
        let f = IndexBuilder::for_lang(o.lang, params())?
            .fingerprinter()
            .clone();
        Ok(Box::new(move |text| {
            let fingerprint = f.fingerprint(text);
            if fingerprint.terms == 0 {
                return Err("no content words".into());
            }
            Ok(Kept::describe(&fingerprint))
        }))
    }

    fn find(&self, docs: &Docs<'_>, o: &Options, t: f64) -> Result<Found> {
        let tfidf = if o.verify {
            Some(TfIdf::new(docs, docs.reps())?)
        } else {
            None
        };
        let kept: Vec<Doc<'_>> = docs
            .reps_records()?
            .into_iter()
            .map(|r| Doc { kept: Kept::of(r) })
            .collect();
        // Spilled features are verified a block at a time (see `find`): a block's records take
        // at most a quarter of the memory limit, so that two of them stay in the page cache.
        let block = if docs.spilled() {
            (o.memory_limit / 4).max(1)
        } else {
            u64::MAX
        };
        Ok(find(&kept, o.lang, tfidf.as_ref(), t, block)?.into())
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, _: &'a Options) -> Result<Scorer<'a>> {
        let every: Vec<u32> = (0..docs.len() as u32).collect();
        let tfidf = TfIdf::new(docs, &every)?;
        // Every pair: each document's term vector made once.
        let tf: Vec<Option<TermVector>> = (0..docs.len() as u32)
            .into_par_iter()
            .map(|d| docs.record(d).map(|r| Kept::of(r).tf()))
            .collect();
        Ok(Box::new(move |a, b| {
            let (a, b) = (a as usize, b as usize);
            let (Some(ta), Some(tb)) = (&tf[a], &tf[b]) else {
                return Some(0.0);
            };
            Some(tfidf.cosine(ta, a as u32, tb, b as u32))
        }))
    }

    /// Two documents are no collection to learn idf from: `compare` shows the cosine of plain
    /// term frequencies.
    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        (c.cosine, c.cosine + 1e-9 >= self.default_threshold())
    }
}

/// The collection's tf-idf as verifying needs it: document frequencies (every document, copies
/// too, as the collection has them) and the tf-idf norm of each document compared. A pair's
/// cosine is made from the two documents' terms when it is verified, so the collection's
/// weight vectors are never held at once (at 2 million documents they took 3 GB, and their
/// term vectors 3 GB more).
pub(crate) struct TfIdf {
    df: DocFreq,
    /// Per document of `which` (by position): its tf-idf norm (0 for one set aside).
    norms: Vec<f64>,
}

impl TfIdf {
    fn new(docs: &Docs<'_>, which: &[u32]) -> Result<TfIdf> {
        let kept = |d: u32| docs.record(d).map(Kept::of);
        let df = DocFreq::from_docs(docs.len(), |d| {
            kept(d as u32).map_or_else(Vec::new, |k| {
                k.tf().terms().iter().map(|&(h, _)| h).collect()
            })
        });
        let norms = which
            .par_iter()
            .map(|&d| kept(d).map_or(0.0, |k| df.norm(&k.tf())))
            .collect();
        Ok(TfIdf { df, norms })
    }

    /// The tf-idf cosine of documents `a` and `b` (positions in `which`) from their term
    /// vectors, exactly the dot of their normalised weight vectors.
    fn cosine(&self, tf_a: &TermVector, a: u32, tf_b: &TermVector, b: u32) -> f64 {
        let (na, nb) = (self.norms[a as usize], self.norms[b as usize]);
        self.df.cosine(tf_a, na, tf_b, nb)
    }
}
