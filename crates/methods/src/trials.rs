//! The multi-trial signature of the search-engine duplicate-elimination note: the set of unique
//! word n-grams (default 2), `hashes` hash functions per trial (default 14), `trials` trials
//! (default 6). A trial agrees when all of its hash functions pick the same n-gram in both
//! documents (the same minimum); a pair is a duplicate when at least `agree` trials (default 2)
//! agree. The signature kept per document is one 64-bit value per trial (the hash of its
//! minima).
//!
//! If the two n-gram sets have resemblance (overlap) p, one hash function agrees with
//! probability p, one trial with probability q = p^hashes, and the pair is detected with
//! probability 1 − Σ_{k < agree} C(trials, k) q^k (1 − q)^(trials − k); for 2 of 6 trials that is
//! the note's `1 - ((1 - q)**6 + 6 * q * (1 - q)**5)` ([`probability`]).

use super::compare::Comparison;
use super::groups::Collected;
use super::pairs::{count_shared_by_block, jaccard_pairs};
use super::shingles::{content_shingles, shingle_hash};
use super::{Described, Describer, Docs, Evidence, Found, Info, Method, Options, Scorer};
use bytemuck::cast_slice;
use pocketdex::error::Result;
use pocketdex::hash;
use pocketdex::text::Analyzer;

/// The multi-trial signature (search-engine duplicate-elimination note): candidates agree in
/// enough trials, scored by the Jaccard of the n-grams of content words.
#[derive(Clone, Copy, Debug, Default)]
pub struct Trials;

impl Method for Trials {
    fn info(&self) -> &'static Info {
        &Info {
            name: "trials",
            description: "The multi-trial signature (search-engine duplicate-elimination note)",
            default_threshold: 0.9,
            estimates: true,
        }
    }

    fn measure(&self, o: &Options) -> String {
        format!(
            "Jaccard of {}-word n-grams of content words{} ({} of {} trials of {} hashes agree)",
            o.ngram,
            o.estimated(),
            o.agree,
            o.trials,
            o.hashes
        )
    }

    fn describer(&self, o: &Options) -> Result<Describer> {
        let analyzer = Analyzer::for_lang(o.lang);
        let params = o.trial_params();
        Ok(Box::new(move |text| {
            let (set, identity) = content_shingles(&analyzer, text, params.ngram)?;
            let signature = signature(&set, &params);
            // Fields: 0 the n-gram set (sorted), 1 the signature.
            Ok(Described::new(
                &[cast_slice(&set), cast_slice(&signature)],
                identity,
            ))
        }))
    }

    fn find(&self, docs: &Docs<'_>, o: &Options, t: f64) -> Result<Found> {
        let docs: Vec<Doc<'_>> = docs
            .reps_records()?
            .into_iter()
            .map(|r| Doc {
                set: r.field(0),
                signature: r.field(1),
            })
            .collect();
        find(&docs, &o.trial_params(), t, o.verify, o.spanning_above)
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, _: &'a Options) -> Result<Scorer<'a>> {
        Ok(docs.jaccard_scorer(0))
    }

    /// The Jaccard, passing only when the signature itself accepts the pair too.
    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        let score = c.trials.jaccard.score;
        (
            score,
            c.trials.duplicate && score + 1e-9 >= self.default_threshold(),
        )
    }
}

/// The parameters of the signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrialParams {
    /// Words per n-gram (the note's "Indexing Options" words; default 2).
    pub ngram: usize,
    /// Hash functions per trial (default 14).
    pub hashes: usize,
    /// Trials (default 6).
    pub trials: usize,
    /// Trials that must agree (default 2).
    pub agree: usize,
}

impl Default for TrialParams {
    fn default() -> Self {
        TrialParams {
            ngram: 2,
            hashes: 14,
            trials: 6,
            agree: 2,
        }
    }
}

/// The signature of an n-gram set: one value per trial, the hash of that trial's `hashes`
/// minima. Hash function i of trial r is `hash::derived(·, r·hashes + i)`. Empty for an empty
/// set.
pub fn signature(set: &[u64], params: &TrialParams) -> Vec<u64> {
    if set.is_empty() {
        return Vec::new();
    }
    let k = params.hashes * params.trials;
    let mut mins = vec![u64::MAX; k];
    for &s in set {
        for (j, m) in mins.iter_mut().enumerate() {
            let v = hash::derived(s, j as u32);
            if v < *m {
                *m = v;
            }
        }
    }
    mins.chunks(params.hashes.max(1))
        .map(shingle_hash)
        .collect()
}

/// The probability that a pair of n-gram sets with resemblance `p` is detected.
///
/// # Example
/// ```
/// use pocketdex_methods::trials::{probability, TrialParams};
/// // The note's table: 90% overlap, 14 hashes → 41.5%.
/// let p = probability(0.90, &TrialParams::default());
/// assert!((p - 0.415).abs() < 0.001);
/// ```
pub fn probability(p: f64, params: &TrialParams) -> f64 {
    let q = p.powi(params.hashes as i32);
    let n = params.trials as i32;
    let below: f64 = (0..params.agree.min(params.trials) as i32)
        .map(|k| binomial(n as u64, k as u64) * q.powi(k) * (1.0 - q).powi(n - k))
        .sum();
    (1.0 - below).clamp(0.0, 1.0)
}

fn binomial(n: u64, k: u64) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The resemblance suggested by `agreeing` of `trials` trials: (agreeing/trials)^(1/hashes),
/// the value of p for which q = p^hashes equals the observed share.
pub fn estimate(agreeing: usize, params: &TrialParams) -> f64 {
    (agreeing as f64 / params.trials.max(1) as f64).powf(1.0 / params.hashes.max(1) as f64)
}

/// One document: its n-gram set (sorted) and signature.
pub(crate) struct Doc<'a> {
    pub set: &'a [u64],
    pub signature: &'a [u64],
}

/// The pairs whose signatures agree in at least `agree` trials. With `verify`, each is kept when
/// the exact Jaccard of the n-gram sets reaches `t` (score = exact Jaccard); without, when the
/// estimate from the agreeing trials reaches `t` (score = estimate). Returns the pairs and the
/// number of candidates (pairs the signature accepts); groups of more than `above` are reduced
/// as [`Collected`] does.
pub(crate) fn find(
    docs: &[Doc<'_>],
    params: &TrialParams,
    t: f64,
    verify: bool,
    above: usize,
) -> Result<Found> {
    // A trial's value tagged with its number, computed per pass rather than held.
    let values = |d: u32, out: &mut Vec<u64>| {
        let signature = docs[d as usize].signature.iter().enumerate();
        out.extend(signature.map(|(r, &v)| hash::derived(v, r as u32)));
    };
    let mut kept = Collected::new(docs.len(), above);
    let mut candidates = 0u64;
    count_shared_by_block(docs.len(), values, params.agree.max(1) as u32, |shared| {
        candidates += shared.len() as u64;
        kept.extend(jaccard_pairs(
            shared,
            |d| docs[d as usize].set,
            t,
            verify,
            |count| estimate(count as usize, params),
            |agree| Evidence::Trials {
                agree,
                of: params.trials as u32,
            },
        ));
        Ok(())
    })?;
    Ok(Found::collected(kept, candidates))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_sets_agree_in_every_trial() {
        let set: Vec<u64> = (1..100).map(|i| i * 7919).collect();
        let p = TrialParams::default();
        let s = signature(&set, &p);
        assert_eq!(s.len(), 6);
        assert_eq!(s, signature(&set, &p));
        let other: Vec<u64> = (1000..1100).collect();
        let o = signature(&other, &p);
        assert!(s.iter().zip(&o).all(|(x, y)| x != y));
        assert!((estimate(6, &p) - 1.0).abs() < 1e-12);
        assert_eq!(probability(1.0, &p), 1.0);
    }
}
