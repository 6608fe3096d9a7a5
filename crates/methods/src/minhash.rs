//! Shingling and MinHash sketches (Broder 1997; the search-engine data-structures text): the set
//! of q-word shingles of a document, a sketch of its minima under p independent hash
//! permutations, resemblance estimated as the share of sketch positions that agree, and
//! all-pairs detection by counting the (document, document) pairs generated from shared sketch
//! values.
//!
//! Permutation j maps a shingle hash h to `hash::derived(h, j)` (MurmurHash3's finalizer over
//! h + (j + 1)·φ): a fixed bijection of 64-bit values per j, standing in for the min-wise
//! independent permutations that cannot be drawn uniformly in practice.
//!
//! Estimation error: for resemblance r, the number of agreeing positions is Binomial(p, r), so
//! the estimate has standard error √(r(1 − r)/p): at most 0.044 for p = 128.

use super::compare::Comparison;
use super::groups::Collected;
use super::pairs::{count_shared_by_block, jaccard_pairs};
use super::shingles::{self, jaccard};
use super::{Described, Describer, Docs, Evidence, Found, Info, Method, Options, Scorer};
use bytemuck::cast_slice;
use pocketdex::error::Result;
use pocketdex::hash;
use pocketdex::text::Analyzer;

/// Shingling and MinHash sketches (Broder): candidates share enough sketch values, scored by the
/// Jaccard of the q-word shingles of content words.
#[derive(Clone, Copy, Debug, Default)]
pub struct Minhash;

impl Method for Minhash {
    fn info(&self) -> &'static Info {
        &Info {
            name: "minhash",
            description: "Shingling and MinHash sketches (Broder)",
            default_threshold: 0.8,
            estimates: true,
        }
    }

    fn measure(&self, o: &Options) -> String {
        format!(
            "Jaccard of {}-word shingles of content words{} (p = {})",
            o.shingle,
            o.estimated(),
            o.permutations
        )
    }

    fn describer(&self, o: &Options) -> Result<Describer> {
        let analyzer = Analyzer::for_lang(o.lang);
        let (q, p) = (o.shingle, o.permutations);
        Ok(Box::new(move |text| {
            let (set, identity) = shingles::content_shingles(&analyzer, text, q)?;
            let sketch = sketch(&set, p);
            // Fields: 0 the shingle set (sorted), 1 the sketch.
            Ok(Described::new(
                &[cast_slice(&set), cast_slice(&sketch)],
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
                sketch: r.field(1),
            })
            .collect();
        find(&docs, o.permutations, t, o.verify, o.spanning_above)
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, _: &'a Options) -> Result<Scorer<'a>> {
        Ok(docs.jaccard_scorer(0))
    }

    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        let score = c.minhash.jaccard.score;
        (score, score + 1e-9 >= self.default_threshold())
    }
}

/// The sketch of a shingle set: its minimum under each of `p` permutations (empty for an empty
/// set).
pub fn sketch(set: &[u64], p: usize) -> Vec<u64> {
    if set.is_empty() {
        return Vec::new();
    }
    let mut mins = vec![u64::MAX; p];
    for &s in set {
        for (j, m) in mins.iter_mut().enumerate() {
            let v = hash::derived(s, j as u32);
            if v < *m {
                *m = v;
            }
        }
    }
    mins
}

/// The resemblance estimated from two sketches: the share of positions that agree.
///
/// # Example
/// ```
/// use pocketdex_methods::minhash::{estimate, sketch};
/// let a: Vec<u64> = (0..200).collect();
/// let b: Vec<u64> = (50..250).collect(); // Jaccard 150/250 = 0.6
/// let est = estimate(&sketch(&a, 256), &sketch(&b, 256));
/// assert!((est - 0.6).abs() < 0.12, "{est}");
/// ```
pub fn estimate(a: &[u64], b: &[u64]) -> f64 {
    agreeing(a, b) as f64 / a.len().max(b.len()).max(1) as f64
}

/// The number of sketch positions that agree.
pub fn agreeing(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x == y).count()
}

/// Standard error of the estimate at resemblance `r` with `p` permutations.
pub fn standard_error(r: f64, p: usize) -> f64 {
    (r * (1.0 - r) / p.max(1) as f64).sqrt()
}

/// One document: its shingle set (sorted) and sketch.
pub(crate) struct Doc<'a> {
    pub set: &'a [u64],
    pub sketch: &'a [u64],
}

/// All pairs of `docs` by sketch agreement. With `verify`, candidates are the pairs whose estimate
/// reaches `t` less three standard errors, and each is kept when its exact Jaccard reaches `t`
/// (score = exact Jaccard); without, pairs whose estimate reaches `t` (score = estimate). Returns
/// the pairs (indices into `docs`; groups of more than `above` reduced as
/// [`Collected`] does) and the number of candidates.
pub(crate) fn find(
    docs: &[Doc<'_>],
    p: usize,
    t: f64,
    verify: bool,
    above: usize,
) -> Result<Found> {
    let slack = if verify {
        3.0 * standard_error(t, p)
    } else {
        0.0
    };
    let min_count = (((t - slack) * p as f64) - 1e-9).ceil().max(1.0) as u32;
    // A sketch value tagged with its permutation, computed per pass rather than held.
    let values = |d: u32, out: &mut Vec<u64>| {
        let sketch = docs[d as usize].sketch.iter().enumerate();
        out.extend(sketch.map(|(j, &v)| hash::derived(v, j as u32)));
    };
    let mut kept = Collected::new(docs.len(), above);
    let mut candidates = 0u64;
    count_shared_by_block(docs.len(), values, min_count, |shared| {
        candidates += shared.len() as u64;
        kept.extend(jaccard_pairs(
            shared,
            |d| docs[d as usize].set,
            t,
            verify,
            |count| count as f64 / p as f64,
            |agree| Evidence::Sketch {
                agree,
                of: p as u32,
            },
        ));
        Ok(())
    })?;
    Ok(Found::collected(kept, candidates))
}

/// Exact Jaccard of two shingle sets (re-exported for symmetry with the other methods).
pub fn exact(a: &[u64], b: &[u64]) -> f64 {
    jaccard(a, b)
}
