//! Exact set-similarity self-join: every pair of documents whose Jaccard or Dice (S3) coefficient
//! reaches a threshold, through an inverted index with length partitioning and pruning by the
//! similarity bound, each candidate verified by merging the two sets. Used by spex (S3) and
//! SpotSigs (Jaccard).
//!
//! Why it is exact. Order the documents by set size. For a document A and any partner B no
//! larger than it, sim(A, B) ≥ t forces (writing o = |A ∩ B|, n = |A|):
//! - Jaccard: o ≥ t·n and |B| ≥ t·n;
//! - Dice: o ≥ t·n/(2 − t) and |B| ≥ t·n/(2 − t).
//!
//! So B lies in a contiguous range of the size order (SpotSigs' length partitioning, with one
//! partition per length), and if A's elements are ordered rarest first, B must contain one of
//! A's first |A| − ⌈bound⌉ + 1 elements (the prefix): otherwise they would share fewer than the
//! bound (SpotSigs' inverted-index pruning by the Jaccard bound; the same bound serves S3). A
//! probes only its prefix's lists, only inside its size range, and every document met is
//! verified. Elements that occur in one document only cannot be shared and are left out of the
//! index (spex's observation), while the set sizes keep counting them.

use rayon::prelude::*;

/// The set similarity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// |A ∩ B| / |A ∪ B|.
    Jaccard,
    /// 2|A ∩ B| / (|A| + |B|): the S3 score.
    Dice,
}

const EPS: f64 = 1e-9;

impl Measure {
    /// The score from the overlap and the two sizes.
    pub fn score(self, overlap: u32, a: u32, b: u32) -> f64 {
        match self {
            Measure::Jaccard => {
                super::shingles::jaccard_of(overlap as usize, a as usize, b as usize)
            }
            Measure::Dice => super::shingles::dice_of(overlap as usize, a as usize, b as usize),
        }
    }

    /// The least overlap a set of size `n` needs with a set no larger than it to score `t`, which
    /// is also the least size of that partner; at least 1 (pairs share something).
    pub fn bound(self, n: u32, t: f64) -> u32 {
        let x = match self {
            Measure::Jaccard => t * n as f64,
            Measure::Dice => t * n as f64 / (2.0 - t),
        };
        ((x - EPS).ceil().max(1.0)) as u32
    }
}

impl Measure {
    /// The least overlap two sets of sizes `a` and `b` need to score `t`.
    pub fn pair_bound(self, a: u32, b: u32, t: f64) -> u32 {
        let sum = (a + b) as f64;
        let x = match self {
            Measure::Jaccard => t * sum / (1.0 + t),
            Measure::Dice => t * sum / 2.0,
        };
        ((x - EPS).ceil().max(1.0)) as u32
    }
}

/// One document for the join.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetDoc {
    /// |set|: every element, including those that occur nowhere else.
    pub size: u32,
    /// The elements that occur in at least one other document, numbered rarest first, ascending.
    pub tokens: Vec<u32>,
}

/// Numbers the elements of hash sets by document frequency (rarest first) and drops those that
/// occur in one set only. `sets[d]` is sorted and deduplicated (possibly only the part of a set
/// that can be shared, as spex keeps); `sizes[d]` is the full set size.
pub fn index_sets(sets: &[&[u64]], sizes: &[u32]) -> Vec<SetDoc> {
    let mut all: Vec<(u64, u32)> = sets
        .iter()
        .enumerate()
        .flat_map(|(d, s)| s.iter().map(move |&h| (h, d as u32)))
        .collect();
    all.par_sort_unstable();
    // Runs of equal hashes: (start, end, hash) of those in two or more sets, rarest first.
    let mut runs: Vec<(u32, u32, u64)> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let mut j = i + 1;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        if j - i >= 2 {
            runs.push((i as u32, j as u32, all[i].0));
        }
        i = j;
    }
    runs.par_sort_unstable_by_key(|&(s, e, h)| (e - s, h));
    let mut tokens: Vec<Vec<u32>> = vec![Vec::new(); sets.len()];
    for (id, &(s, e, _)) in runs.iter().enumerate() {
        for &(_, d) in &all[s as usize..e as usize] {
            tokens[d as usize].push(id as u32);
        }
    }
    // Ids were handed out in ascending order, so every list is sorted already.
    tokens
        .into_iter()
        .zip(sizes)
        .map(|(tokens, &size)| SetDoc { size, tokens })
        .collect()
}

/// A pair found by the join: documents `a < b` and their overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Joined {
    /// First document.
    pub a: u32,
    /// Second document.
    pub b: u32,
    /// |A ∩ B|.
    pub overlap: u32,
}

impl Joined {
    /// The reported pair: its `measure` score from the overlap and the set sizes, as evidence.
    pub fn into_pair(self, measure: Measure, sizes: &[u32]) -> super::Pair {
        let (sa, sb) = (sizes[self.a as usize], sizes[self.b as usize]);
        super::Pair {
            a: self.a,
            b: self.b,
            score: measure.score(self.overlap, sa, sb),
            estimate: None,
            evidence: super::Evidence::Shared {
                shared: self.overlap,
                a: sa,
                b: sb,
            },
        }
    }
}

/// Every pair with `measure ≥ t` (and at least one shared element), sorted by (a, b), and the
/// number of candidate pairs verified.
pub fn self_join(docs: &[SetDoc], measure: Measure, t: f64) -> (Vec<Joined>, u64) {
    let mut pairs = Vec::new();
    let candidates = self_join_by_block(docs, measure, t, |joined| pairs.extend(joined));
    pairs.sort_unstable();
    (pairs, candidates)
}

/// [`self_join`], handing the pairs to `each` a block of documents at a time (a few million
/// pairs at most, unless one document alone has more; in no particular order) instead of
/// holding them all: m near-identical documents' m² pairs are never held at once. Returns the
/// number of candidate pairs verified.
pub fn self_join_by_block(
    docs: &[SetDoc],
    measure: Measure,
    t: f64,
    each: impl FnMut(Vec<Joined>),
) -> u64 {
    self_join_blocks(docs, measure, t, super::pairs::BLOCK_PAIRS, each)
}

/// [`self_join_by_block`] with blocks of at most `block_pairs` candidates.
fn self_join_blocks(
    docs: &[SetDoc],
    measure: Measure,
    t: f64,
    block_pairs: u64,
    mut each: impl FnMut(Vec<Joined>),
) -> u64 {
    let n = docs.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&d| (docs[d as usize].size, d));
    let sizes: Vec<u32> = order.iter().map(|&d| docs[d as usize].size).collect();
    // Inverted lists of positions in the size order, ascending.
    let tokens = docs
        .iter()
        .flat_map(|d| d.tokens.last())
        .max()
        .map_or(0, |&m| m as usize + 1);
    let mut start = vec![0u32; tokens + 1];
    for d in docs {
        for &t in &d.tokens {
            start[t as usize + 1] += 1;
        }
    }
    for i in 0..tokens {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut postings = vec![0u32; start[tokens] as usize];
    for (pos, &d) in order.iter().enumerate() {
        for &t in &docs[d as usize].tokens {
            postings[fill[t as usize] as usize] = pos as u32;
            fill[t as usize] += 1;
        }
    }
    drop(fill);
    // The prefix of a document's tokens that finds its candidates, and the size below which no
    // document can reach `t` with it.
    let probe = |pa: usize| -> Option<(&[u32], u32)> {
        let da = &docs[order[pa] as usize];
        let need = measure.bound(da.size, t);
        if (da.tokens.len() as u32) < need {
            return None;
        }
        let prefix = da.tokens.len() - need as usize + 1;
        Some((
            &da.tokens[..prefix],
            sizes.partition_point(|&s| s < need) as u32,
        ))
    };
    // At most the candidates each document can have (the postings it walks, and no more than
    // the documents in its range): its block's pairs are at most the sum.
    let weights: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|pa| {
            let Some((prefix, lo)) = probe(pa) else {
                return 0;
            };
            let walked: u64 = prefix
                .iter()
                .map(|&tok| {
                    let list =
                        &postings[start[tok as usize] as usize..start[tok as usize + 1] as usize];
                    let below = list.partition_point(|&p| (p as usize) < pa);
                    below.saturating_sub(list.partition_point(|&p| p < lo)) as u64
                })
                .sum();
            walked.min(pa.saturating_sub(lo as usize) as u64)
        })
        .collect();
    let counters = super::pairs::Counters::new(n);
    let mut candidates = 0u64;
    let Ok(()) = super::pairs::in_blocks(&weights, block_pairs, |block| {
        let results: Vec<(Vec<Joined>, u64)> = block
            .into_par_iter()
            .map_init(
                || counters.lend(),
                |lent, pa| {
                    let pa = pa as usize;
                    let (count, touched) = lent.get();
                    let da = &docs[order[pa] as usize];
                    let Some((prefix_tokens, lo)) = probe(pa) else {
                        return (Vec::new(), 0);
                    };
                    let prefix = prefix_tokens.len();
                    for &tok in prefix_tokens {
                        let list = &postings
                            [start[tok as usize] as usize..start[tok as usize + 1] as usize];
                        let from = list.partition_point(|&p| p < lo);
                        for &pb in &list[from..] {
                            if pb as usize >= pa {
                                break;
                            }
                            if count[pb as usize] == 0 {
                                touched.push(pb);
                            }
                            count[pb as usize] += 1;
                        }
                    }
                    // Each count is |prefix(A) ∩ B|; the rest of the overlap can only come from A's
                    // suffix, so a candidate whose count plus the suffix length falls short of what
                    // the pair needs is dropped without merging (All-Pairs, Bayardo et al. 2007).
                    let suffix = &da.tokens[prefix..];
                    let candidates = touched.len() as u64;
                    let mut out = Vec::new();
                    for &pb in touched.iter() {
                        let c = std::mem::take(&mut count[pb as usize]);
                        let db = &docs[order[pb as usize] as usize];
                        let need_pair = measure.pair_bound(da.size, db.size, t);
                        if c + (suffix.len() as u32) < need_pair {
                            continue;
                        }
                        let rest = match suffix.first() {
                            Some(&first) => {
                                let from = db.tokens.partition_point(|&x| x < first);
                                super::shingles::overlap(suffix, &db.tokens[from..]) as u32
                            }
                            None => 0,
                        };
                        let o = c + rest;
                        if measure.score(o, da.size, db.size) + EPS >= t {
                            let (a, b) = (order[pa], order[pb as usize]);
                            out.push(Joined {
                                a: a.min(b),
                                b: a.max(b),
                                overlap: o,
                            });
                        }
                    }
                    touched.clear();
                    (out, candidates)
                },
            )
            .collect();
        candidates += results.iter().map(|r| r.1).sum::<u64>();
        each(results.into_iter().flat_map(|r| r.0).collect());
        Ok::<(), std::convert::Infallible>(())
    });
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(sets: &[Vec<u64>], m: Measure, t: f64) -> Vec<Joined> {
        let mut out = Vec::new();
        for a in 0..sets.len() {
            for b in a + 1..sets.len() {
                let o = super::super::shingles::overlap(&sets[a], &sets[b]) as u32;
                if o > 0 && m.score(o, sets[a].len() as u32, sets[b].len() as u32) + EPS >= t {
                    out.push(Joined {
                        a: a as u32,
                        b: b as u32,
                        overlap: o,
                    });
                }
            }
        }
        out
    }

    fn join(sets: &[Vec<u64>], m: Measure, t: f64) -> Vec<Joined> {
        let refs: Vec<&[u64]> = sets.iter().map(|s| s.as_slice()).collect();
        let sizes: Vec<u32> = sets.iter().map(|s| s.len() as u32).collect();
        self_join(&index_sets(&refs, &sizes), m, t).0
    }

    #[test]
    fn bounds() {
        assert_eq!(Measure::Jaccard.bound(10, 0.8), 8);
        assert_eq!(Measure::Jaccard.bound(5, 0.8), 4);
        // Dice 0.58 with n = 100: o ≥ 58/1.42 = 40.8
        assert_eq!(Measure::Dice.bound(100, 0.58), 41);
        assert_eq!(Measure::Dice.bound(3, 0.0), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn join_equals_brute_force(
            sets in prop::collection::vec(prop::collection::btree_set(0u64..40, 1..15), 2..30),
            t in 0.05f64..1.0,
            dice in any::<bool>(),
        ) {
            let sets: Vec<Vec<u64>> = sets.into_iter().map(|s| s.into_iter().collect()).collect();
            let m = if dice { Measure::Dice } else { Measure::Jaccard };
            let want = brute(&sets, m, t);
            prop_assert_eq!(join(&sets, m, t), want.clone());
            // A block of documents at a time (as few as one), with counters lent from block
            // to block: the same pairs and candidates.
            let refs: Vec<&[u64]> = sets.iter().map(|s| s.as_slice()).collect();
            let sizes: Vec<u32> = sets.iter().map(|s| s.len() as u32).collect();
            let docs = index_sets(&refs, &sizes);
            let whole = self_join(&docs, m, t).1;
            for block_pairs in [1, 5] {
                let mut got = Vec::new();
                let candidates = self_join_blocks(&docs, m, t, block_pairs, |j| got.extend(j));
                got.sort_unstable();
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(candidates, whole);
            }
        }
    }
}
