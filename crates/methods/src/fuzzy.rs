//! The fuzzy-fingerprint index as an all-pairs method: every document goes into an in-memory
//! pocketdex index ([`IndexBuilder`] → [`Index`]), and every document's query codes (with
//! multi-probe) are looked up in it. Pairs found in either direction are candidates; the
//! index's simhash sketches (tf-idf weighted) estimate their cosine, and each is verified with
//! the exact tf-idf cosine of the two documents in the collection ([`DocFreq`](super::cosine::DocFreq)), the measure of
//! the evaluation oracle.

use super::cosine::{dot, TermVector};
use super::{Evidence, Pair};
use pocketdex::error::Result;
use pocketdex::fingerprint::{Fingerprint, Path};
use pocketdex::sketch::estimate_similarity;
use pocketdex::{Index, IndexBuilder, Lang, Params};
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

/// One document.
pub(crate) struct Doc<'a> {
    pub kept: &'a Kept,
}

/// All pairs the index finds. `weights[d]` is document d's L2-normalised tf-idf vector (over the
/// whole collection, copies included; empty when not verifying). With `verify`: candidates with estimate ≥ t − [`SLACK`], kept when the tf-idf cosine reaches
/// `t`; without: pairs with estimate ≥ t, score = estimate. Returns the pairs and the candidates.
pub(crate) fn find(
    docs: &[Doc<'_>],
    lang: Lang,
    weights: &[Vec<(u64, f64)>],
    t: f64,
    verify: bool,
) -> Result<(Vec<Pair>, u64)> {
    if docs.len() < 2 {
        return Ok((Vec::new(), 0));
    }
    // Pairs at the method's thresholds (0.8 by default) are near copies: the probes below look
    // up no similar-path codes, so the index leaves them out.
    let params = Params {
        similar_bands: 0,
        ..Params::default()
    };
    let mut builder = IndexBuilder::for_lang(lang, params)?;
    builder.size_hint(docs.len() as u64);
    for (i, d) in docs.iter().enumerate() {
        builder.add_fingerprint(&i.to_string(), None, d.kept.fingerprint());
    }
    let mut bytes = Vec::new();
    builder.finish(&mut bytes)?;
    let index = Index::open(bytes)?;
    // The sketches as the index weighs them (tf-idf, with the idf the build learned).
    let sketches: Vec<Vec<u64>> = (0..docs.len() as u32)
        .map(|d| index.sketch(d).unwrap_or_default())
        .collect();
    let floor = if verify { t - SLACK } else { t };
    // Per document: the documents its codes meet, with the code groups that collided, kept
    // when the sketches estimate a similarity of at least `floor`.
    let mut estimated: Vec<(u32, u32, u32, f64)> = docs
        .par_iter()
        .enumerate()
        .map_init(Vec::new, |hits: &mut Vec<(u32, (Path, u16))>, (a, d)| {
            hits.clear();
            let f = index.fingerprinter();
            // Probes need the terms and classes only (they draw their own samples).
            let fp = d.kept.fingerprint();
            for code in &f.probes(&fp, index.resolution(), f.params().probes) {
                if let Some(postings) = index.lookup(code.key) {
                    for b in postings {
                        if b as usize != a {
                            hits.push((b, (code.path, code.group)));
                        }
                    }
                }
            }
            hits.sort_unstable();
            hits.dedup();
            let mut out: Vec<(u32, u32, u32, f64)> = Vec::new();
            let mut i = 0;
            while i < hits.len() {
                let b = hits[i].0;
                let mut j = i + 1;
                while j < hits.len() && hits[j].0 == b {
                    j += 1;
                }
                let est = estimate_similarity(&sketches[a], &sketches[b as usize]) as f64;
                if est + 1e-9 >= floor {
                    let (x, y) = ((a as u32).min(b), (a as u32).max(b));
                    out.push((x, y, (j - i) as u32, est));
                }
                i = j;
            }
            out
        })
        .flatten_iter()
        .collect();
    // Found from both ends: keep one, with the larger number of colliding groups.
    estimated.sort_unstable_by(|p, q| (p.0, p.1).cmp(&(q.0, q.1)).then(q.2.cmp(&p.2)));
    estimated.dedup_by_key(|p| (p.0, p.1));
    let candidates = estimated.len() as u64;
    let pairs = estimated
        .into_par_iter()
        .filter_map(|(a, b, groups, est)| {
            let score = if verify {
                dot(&weights[a as usize], &weights[b as usize])
            } else {
                est
            };
            (score + 1e-9 >= t).then_some(Pair {
                a,
                b,
                score,
                estimate: Some(est),
                evidence: Evidence::Codes { groups },
            })
        })
        .collect();
    Ok((pairs, candidates))
}
