//! The fuzzy-fingerprint index as an all-pairs method: every document goes into an in-memory
//! pocketdex index ([`IndexBuilder`] → [`Index`]), and every document queries it through the
//! library's one query path ([`Index::query_fingerprint`]). Pairs found in either direction are candidates; the
//! index's simhash sketches (tf-idf weighted) estimate their cosine, and each is verified with
//! the exact tf-idf cosine of the two documents in the collection ([`DocFreq`]), the measure of
//! the evaluation oracle.

use super::compare::Comparison;
use super::cosine::{DocFreq, TermVector};
use super::{Described, Describer, Docs, Evidence, Found, Info, Method, Options, Pair, Scorer};
use pocketdex::error::Result;
use pocketdex::fingerprint::{Fingerprint, Material, Weighed};
use pocketdex::sketch::Idf;
use pocketdex::{Index, IndexBuilder, Lang, Params, QueryFingerprint, QueryOptions};
use rayon::prelude::*;

/// How far below the threshold the sketch estimate may be for a pair to be verified. The
/// sketch's estimate of the tf-idf cosine has a standard error of about 0.06 near 0.8 (and its
/// idf is learned from a sample); 0.25 keeps nearly every pair the codes find.
pub const SLACK: f64 = 0.25;

/// What the method keeps of one document: its class counts and its terms in a compact form
/// (hashes and counts side by side, 20 bytes a term instead of 32), from which its fingerprint
/// is rebuilt for the index and for its query.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    pub terms: u32,
    pub class_counts: Vec<u32>,
    pub hashes: Vec<u128>,
    pub counts: Vec<u32>,
    pub exact: Option<u64>,
    pub maker: u64,
}

impl Kept {
    pub fn new(fingerprint: Fingerprint) -> Kept {
        let (hashes, counts) = fingerprint.term_hashes.iter().copied().unzip();
        Kept {
            terms: fingerprint.terms,
            class_counts: fingerprint.class_counts,
            hashes,
            counts,
            exact: fingerprint.exact,
            maker: fingerprint.maker,
        }
    }

    /// The (unweighed) fingerprint.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint {
            terms: self.terms,
            class_counts: self.class_counts.clone(),
            term_hashes: self
                .hashes
                .iter()
                .copied()
                .zip(self.counts.iter().copied())
                .collect(),
            exact: self.exact,
            weighed: None,
            maker: self.maker,
        }
    }

    /// The term-frequency vector (keyed by the low 64 bits of the term hashes).
    pub fn tf(&self) -> TermVector {
        TermVector::from_counts(
            self.hashes
                .iter()
                .zip(&self.counts)
                .map(|(&h, &c)| (h as u64, c)),
        )
    }

    /// Hash and count of every term, sorted by hash: equal for equal bags of terms.
    pub fn sorted_terms(&self) -> Vec<(u128, u32)> {
        let mut v: Vec<(u128, u32)> = self
            .hashes
            .iter()
            .copied()
            .zip(self.counts.iter().copied())
            .collect();
        v.sort_unstable();
        v
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
    pub kept: &'a Kept,
}

/// All pairs the index finds. With `tfidf` (the collection's tf-idf, for verifying):
/// candidates with estimate ≥ t − [`SLACK`], kept when the tf-idf cosine reaches `t`; without:
/// pairs with estimate ≥ t, score = estimate. Returns the pairs and the candidates.
pub(crate) fn find(
    docs: &[Doc<'_>],
    lang: Lang,
    tfidf: Option<&TfIdf>,
    t: f64,
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
    // (a, b, colliding code groups, estimate) with a < b, found from either end.
    let mut estimated: Vec<(u32, u32, u32, f64)> = docs
        .par_iter()
        .enumerate()
        .map(|(a, d)| -> Result<Vec<_>> {
            // The document's sketch is in the index already: handed over as weighed with the
            // index's idf, the query path uses it instead of drawing it again.
            let mut fp = d.kept.fingerprint();
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
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    // Found from both ends: keep one, with the larger number of colliding groups.
    estimated.sort_unstable_by(|p, q| (p.0, p.1).cmp(&(q.0, q.1)).then(q.2.cmp(&p.2)));
    estimated.dedup_by_key(|p| (p.0, p.1));
    let candidates = estimated.len() as u64;
    // Sorted by (a, b): each run of one first document makes its term vector once.
    let pairs = estimated
        .par_chunk_by(|p, q| p.0 == q.0)
        .flat_map_iter(|run| {
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
        })
        .collect();
    Ok((pairs, candidates))
}

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
            let kept = Kept::new(fingerprint);
            let identity = Described::identity_of(
                kept.sorted_terms()
                    .iter()
                    .flat_map(|&(h, c)| [h as u64, (h >> 64) as u64, c as u64]),
            );
            Ok(Described::new(kept, identity))
        }))
    }

    fn find(&self, docs: &Docs<'_>, o: &Options, t: f64) -> Result<Found> {
        let tfidf = if o.verify {
            Some(TfIdf::new(docs, docs.reps())?)
        } else {
            None
        };
        let kept: Vec<Doc<'_>> = docs
            .reps_as::<Kept>()?
            .into_iter()
            .map(|kept| Doc { kept })
            .collect();
        Ok(find(&kept, o.lang, tfidf.as_ref(), t)?.into())
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, _: &'a Options) -> Result<Scorer<'a>> {
        let every: Vec<u32> = (0..docs.len() as u32).collect();
        let tfidf = TfIdf::new(docs, &every)?;
        // Every pair: each document's term vector made once.
        let tf: Vec<Option<TermVector>> = docs
            .all::<Kept>()?
            .par_iter()
            .map(|k| k.map(Kept::tf))
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
        let all = docs.all::<Kept>()?;
        let df = DocFreq::from_docs(docs.len(), |d| {
            all[d].map_or_else(Vec::new, |k| {
                k.tf().terms().iter().map(|&(h, _)| h).collect()
            })
        });
        let norms = which
            .par_iter()
            .map(|&d| all[d as usize].map_or(0.0, |k| df.norm(&k.tf())))
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
