//! simhash (Charikar 2002): a 64-bit fingerprint of a document's term-frequency vector, searched
//! by Hamming distance with the block-permutation tables of Manku, Jain & Das Sarma (WWW 2007).
//!
//! Every term's 64-bit hash votes on each bit, +tf when the bit is set and −tf when not; the
//! fingerprint keeps the bits with a positive total. Two fingerprints differ in each bit with
//! probability θ/π, θ the angle between the two tf vectors, so a Hamming distance h estimates
//! the cosine as cos(π·h/64).
//!
//! Search: split the 64 bits into k + 1 blocks. Two fingerprints within distance k agree exactly
//! on at least one block, so the pairs that share a block value are all the candidates: the
//! search finds every pair within distance k, exactly, without comparing all pairs. A pair
//! that agrees on several blocks is checked once.
//!
//! Estimation error: with 64 bits h is Binomial(64, θ/π); at cosine 0.9 (θ/π ≈ 0.14) the
//! distance averages 9.2 bits with a standard deviation of 2.8, and a pair falls within the
//! default distance 3 with probability 1.3% (at cosine 0.8: 0.04%). Reported pairs are verified
//! with the exact cosine of the tf vectors.

use super::compare::Comparison;
use super::cosine::{TermVector, TermsRef};
use super::groups::Collected;
use super::SIMHASH_SEED;
use super::{
    Described, Describer, Docs, Evidence, Found, Info, Method, Options, Pair, Record, Scorer,
};
use bytemuck::{bytes_of, cast_slice};
use pocketdex::error::Result;
use pocketdex::hash;
use pocketdex::text::Analyzer;
use rayon::prelude::*;

/// 64-bit simhash searched by Hamming distance (Charikar; Manku et al.): candidates within
/// [`Options::max_hamming`] bits, scored by the cosine of term frequencies.
#[derive(Clone, Copy, Debug, Default)]
pub struct Simhash;

impl Method for Simhash {
    fn info(&self) -> &'static Info {
        &Info {
            name: "simhash",
            description: "64-bit simhash searched by Hamming distance (Charikar; Manku et al.)",
            default_threshold: 0.8,
            estimates: true,
        }
    }

    fn measure(&self, o: &Options) -> String {
        format!(
            "cosine of term frequencies{} (64-bit simhash within {} bits)",
            o.estimated(),
            o.max_hamming
        )
    }

    fn describer(&self, o: &Options) -> Result<Describer> {
        let analyzer = Analyzer::for_lang(o.lang);
        Ok(Box::new(move |text| {
            let tf = TermVector::from_terms(&analyzer.terms(text));
            if tf.is_empty() {
                return Err("no content words".into());
            }
            let identity =
                Described::identity_of(tf.terms().iter().flat_map(|&(h, c)| [h, c as u64]));
            let fingerprint = fingerprint(&tf);
            let (hashes, counts): (Vec<u64>, Vec<u32>) = tf.terms().iter().copied().unzip();
            // Fields: 0 the fingerprint, 1 the term hashes (sorted), 2 their counts, 3 the norm.
            Ok(Described::new(
                &[
                    bytes_of(&fingerprint),
                    cast_slice(&hashes),
                    cast_slice(&counts),
                    bytes_of(&tf.norm()),
                ],
                identity,
            ))
        }))
    }

    fn find(&self, docs: &Docs<'_>, o: &Options, t: f64) -> Result<Found> {
        let docs: Vec<Doc<'_>> = docs.reps_records()?.iter().map(Doc::of).collect();
        Ok(find(&docs, o.max_hamming, t, o.verify, o.spanning_above))
    }

    /// Pairs within the radius only; their cosine, or its estimate when not verifying.
    fn scorer<'a>(&self, docs: &Docs<'a>, o: &'a Options) -> Result<Scorer<'a>> {
        let docs = *docs;
        Ok(Box::new(move |a, b| {
            let (x, y) = (Doc::of(&docs.record(a)?), Doc::of(&docs.record(b)?));
            let h = hamming(x.fingerprint, y.fingerprint);
            if h > o.max_hamming {
                None
            } else if o.verify {
                Some(x.tf.cosine(&y.tf))
            } else {
                Some(estimate(h))
            }
        }))
    }

    /// The exact cosine, passing only when the fingerprints are within the radius.
    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        let score = c.simhash.cosine;
        (
            score,
            c.simhash.within && score + 1e-9 >= self.default_threshold(),
        )
    }
}

/// The 64-bit simhash of a term-frequency vector (0 for an empty one).
///
/// # Example
/// ```
/// use pocketdex_methods::{cosine::TermVector, simhash::{fingerprint, hamming}};
/// let a = TermVector::from_terms(&["cheap", "flights", "paris", "cheap", "hotels"]);
/// let b = TermVector::from_terms(&["cheap", "flights", "paris", "cheap", "hotel"]);
/// assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
/// assert!(hamming(fingerprint(&a), fingerprint(&b)) < 32);
/// ```
pub fn fingerprint(tf: &TermVector) -> u64 {
    let mut votes = [0i64; 64];
    for &(term, count) in tf.terms() {
        let bits = hash::fmix64(term ^ SIMHASH_SEED);
        let w = count as i64;
        for (i, v) in votes.iter_mut().enumerate() {
            if bits >> i & 1 == 1 {
                *v += w;
            } else {
                *v -= w;
            }
        }
    }
    votes
        .iter()
        .enumerate()
        .fold(0u64, |acc, (i, &v)| acc | (((v > 0) as u64) << i))
}

/// The number of bits in which two fingerprints differ.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The cosine a Hamming distance suggests: cos(π·h/64), clamped to [0, 1].
pub fn estimate(h: u32) -> f64 {
    (std::f64::consts::PI * h as f64 / 64.0).cos().max(0.0)
}

/// The k + 1 blocks (shift, mask) of the search for distance `k`.
fn blocks(k: u32) -> Vec<(u32, u64)> {
    let n = (k + 1).min(64);
    let mut out = Vec::with_capacity(n as usize);
    let mut shift = 0;
    for b in 0..n {
        let width = 64 / n + u32::from(b < 64 % n);
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        out.push((shift, mask));
        shift += width;
    }
    out
}

/// A pair of documents (a < b) and the Hamming distance of their fingerprints.
pub type Near = (u32, u32, u32);

/// Every pair of fingerprints within Hamming distance `k` (documents a < b), by the block tables.
/// Returns (a, b, distance) sorted, and the candidate pairs examined.
pub fn within(fps: &[u64], k: u32) -> (Vec<Near>, u64) {
    let all = std::sync::Mutex::new(Vec::new());
    let examined = within_by_block(fps, k, |near| {
        all.lock().expect("no block panicked").extend(near)
    });
    let mut all = all.into_inner().expect("no block panicked");
    all.sort_unstable();
    (all, examined)
}

/// [`within`], handing the pairs to `each` a few million at a time as the block tables find
/// them (from several threads, in no particular order) instead of holding them all: m
/// near-identical fingerprints' m² pairs are never held at once. Returns the candidate pairs
/// examined.
pub fn within_by_block(fps: &[u64], k: u32, each: impl Fn(Vec<Near>) + Sync) -> u64 {
    within_flushing(fps, k, super::pairs::BLOCK_PAIRS as usize, each)
}

/// [`within_by_block`], handing on each block table's pairs every `flush` pairs.
fn within_flushing(fps: &[u64], k: u32, flush: usize, each: impl Fn(Vec<Near>) + Sync) -> u64 {
    let blocks = blocks(k);
    blocks
        .par_iter()
        .enumerate()
        .map(|(bi, &(shift, mask))| {
            let mut keyed: Vec<(u64, u32)> = fps
                .iter()
                .enumerate()
                .map(|(d, &f)| ((f >> shift) & mask, d as u32))
                .collect();
            keyed.sort_unstable();
            let mut out = Vec::new();
            let mut examined = 0u64;
            let mut i = 0;
            while i < keyed.len() {
                let mut j = i + 1;
                while j < keyed.len() && keyed[j].0 == keyed[i].0 {
                    j += 1;
                }
                for x in i..j {
                    for y in x + 1..j {
                        let (a, b) = (keyed[x].1, keyed[y].1);
                        let (fa, fb) = (fps[a as usize], fps[b as usize]);
                        // Checked in the first block the two agree on.
                        if blocks[..bi]
                            .iter()
                            .any(|&(s, m)| (fa >> s) & m == (fb >> s) & m)
                        {
                            continue;
                        }
                        examined += 1;
                        let h = hamming(fa, fb);
                        if h <= k {
                            out.push((a.min(b), a.max(b), h));
                            if out.len() >= flush {
                                each(std::mem::take(&mut out));
                            }
                        }
                    }
                }
                i = j;
            }
            each(out);
            examined
        })
        .sum()
}

/// One document: its fingerprint and tf vector.
pub(crate) struct Doc<'a> {
    pub fingerprint: u64,
    pub tf: TermsRef<'a>,
}

impl<'a> Doc<'a> {
    /// The document as its record holds it (see the describer).
    fn of(r: &Record<'a>) -> Doc<'a> {
        Doc {
            fingerprint: r.word(0),
            tf: TermsRef::new(r.field(1), r.field(2), r.field::<f64>(3)[0]),
        }
    }
}

/// The pairs within Hamming distance `k`. With `verify`, kept when the exact cosine of the tf
/// vectors reaches `t` (score = exact cosine); without, kept when the estimate cos(π·h/64)
/// reaches `t` (score = estimate). Returns the pairs (groups of more than `above` reduced as
/// they come) and the candidates (pairs within `k`).
pub(crate) fn find(docs: &[Doc<'_>], k: u32, t: f64, verify: bool, above: usize) -> Found {
    let fps: Vec<u64> = docs.iter().map(|d| d.fingerprint).collect();
    let kept = std::sync::Mutex::new((Collected::new(docs.len(), above), 0u64));
    within_by_block(&fps, k, |near| {
        let candidates = near.len() as u64;
        let pairs: Vec<Pair> = near
            .into_par_iter()
            .filter_map(|(a, b, h)| {
                let est = estimate(h);
                let score = if verify {
                    docs[a as usize].tf.cosine(&docs[b as usize].tf)
                } else {
                    est
                };
                (score + 1e-9 >= t).then_some(Pair {
                    a,
                    b,
                    score,
                    estimate: Some(est),
                    evidence: Evidence::Hamming { distance: h },
                })
            })
            .collect();
        let mut kept = kept.lock().expect("no block panicked");
        kept.0.extend(pairs);
        kept.1 += candidates;
    });
    let (pairs, candidates) = kept.into_inner().expect("no block panicked");
    Found::collected(pairs, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_search_equals_brute_force() {
        // Fingerprints in clusters of small perturbations, so that many pairs are near.
        let mut fps = Vec::new();
        let mut x = 0x1234_5678_9abc_def0u64;
        for c in 0..40u64 {
            let base = hash::fmix64(c + 1);
            for _ in 0..6 {
                x = hash::fmix64(x);
                let flips = (x % 6) as u32;
                let mut f = base;
                for j in 0..flips {
                    f ^= 1 << ((x >> (8 * j)) % 64);
                }
                fps.push(f);
            }
        }
        for k in [0, 1, 3, 5, 9] {
            let mut brute = Vec::new();
            for a in 0..fps.len() {
                for b in a + 1..fps.len() {
                    let h = hamming(fps[a], fps[b]);
                    if h <= k {
                        brute.push((a as u32, b as u32, h));
                    }
                }
            }
            assert_eq!(within(&fps, k).0, brute, "k = {k}");
            // Handed on a pair at a time: the same pairs, each once.
            let got = std::sync::Mutex::new(Vec::new());
            within_flushing(&fps, k, 1, |near| {
                assert!(near.len() <= 1);
                got.lock().unwrap().extend(near)
            });
            let mut got = got.into_inner().unwrap();
            got.sort_unstable();
            assert_eq!(got, brute, "k = {k}, one at a time");
        }
        assert_eq!(blocks(3).iter().map(|b| b.1.count_ones()).sum::<u32>(), 64);
        assert_eq!(blocks(63).len(), 64);
    }
}
