//! The measurements: recall per similarity bucket and over wider ranges of cosine, precision(s),
//! the estimator's error and self-first, from the truth and the answers ([`Report::compute`]).
//! Every number has a named field; the definitions are in the crate documentation.

use crate::{Answer, AnswerHit, DocMap, Settings, TermDocs, TruthPair};
use std::collections::HashMap;

/// A count out of a total.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Ratio {
    /// How many.
    pub n: u64,
    /// Out of how many.
    pub of: u64,
    /// n / of (`None` when `of` is 0).
    pub rate: Option<f64>,
}

impl Ratio {
    /// `n` out of `of`.
    pub fn new(n: u64, of: u64) -> Self {
        Ratio {
            n,
            of,
            rate: (of > 0).then(|| n as f64 / of as f64),
        }
    }
}

/// One similarity bucket: a row of [`Report::tsv`] (see the crate documentation).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Bucket {
    /// Lower bound of the true cosine.
    pub lo: f64,
    /// Upper bound (excluded, except 1 in the last bucket).
    pub hi: f64,
    /// Truth pairs in the bucket found in either direction, of all truth pairs in it.
    pub recall: Ratio,
    /// Found in both directions.
    pub recall_both: Ratio,
    /// Pairs of two long documents.
    pub recall_long: Ratio,
    /// Pairs with a short document.
    pub recall_short: Ratio,
    /// Mean Jaccard of word 3-shingles of the truth pairs in the bucket.
    pub mean_jaccard3: Option<f64>,
    /// Hits whose true cosine is in the bucket.
    pub hits: u64,
    /// Their mean score.
    pub mean_score: Option<f64>,
    /// Mean of score − cosine over those hits.
    pub bias: Option<f64>,
    /// Root mean square of score − cosine over those hits.
    pub rmse: Option<f64>,
    /// precision(lo): hits with score ≥ lo whose true cosine is ≥ lo (`None` below `min`).
    pub precision: Option<Ratio>,
}

/// Recall over a range of true cosine, for all pairs and split by document length.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RecallRange {
    /// A name such as `cos>=0.90` or `0.80<=cos<0.90`.
    pub name: String,
    /// Lowest cosine (included).
    pub lo: f64,
    /// Highest cosine (excluded, unless 1).
    pub hi: f64,
    /// All pairs.
    pub all: Ratio,
    /// Pairs of two long documents.
    pub long: Ratio,
    /// Pairs with a short document.
    pub short: Ratio,
}

/// Recall over the wider ranges of cosine; the ranges that start below `min` are `None`.
/// Serialized (and listed by [`iter`](Self::iter)) as a list in field order.
#[derive(Clone, Debug)]
pub struct RecallRanges {
    /// `cos>=0.95`.
    pub cos_0_95: RecallRange,
    /// `cos>=0.90`.
    pub cos_0_90: RecallRange,
    /// `0.80<=cos<0.90`.
    pub cos_0_80_0_90: RecallRange,
    /// `min<=cos<0.80`, when `min` < 0.8.
    pub cos_min_0_80: Option<RecallRange>,
    /// `0.70<=cos<0.90` (high-similarity search), when `min` ≤ 0.7.
    pub cos_0_70_0_90: Option<RecallRange>,
    /// `0.60<=cos<0.70` (high-similarity search), when `min` ≤ 0.6.
    pub cos_0_60_0_70: Option<RecallRange>,
    /// `0.50<=cos<0.60` (high-similarity search), when `min` ≤ 0.5.
    pub cos_0_50_0_60: Option<RecallRange>,
    /// `cos>=min`: every truth pair.
    pub all: RecallRange,
}

impl RecallRanges {
    /// The ranges present, in field order.
    pub fn iter(&self) -> impl Iterator<Item = &RecallRange> {
        [
            Some(&self.cos_0_95),
            Some(&self.cos_0_90),
            Some(&self.cos_0_80_0_90),
            self.cos_min_0_80.as_ref(),
            self.cos_0_70_0_90.as_ref(),
            self.cos_0_60_0_70.as_ref(),
            self.cos_0_50_0_60.as_ref(),
            Some(&self.all),
        ]
        .into_iter()
        .flatten()
    }
}

impl serde::Serialize for RecallRanges {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Precision of the hits at or above one score.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PrecisionAt {
    /// The score threshold.
    pub score: f64,
    /// Hits with true cosine ≥ 0.9, of the hits with score ≥ `score`.
    pub cos_0_90: Ratio,
    /// Hits with true cosine ≥ 0.8.
    pub cos_0_80: Ratio,
}

/// How far the index's similarity estimate is from the true cosine.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Estimator {
    /// Hits that are truth pairs (the sample).
    pub hits: u64,
    /// Mean of score − cosine.
    pub bias: Option<f64>,
    /// Root mean square of score − cosine.
    pub rmse: Option<f64>,
    /// Mean of |score − cosine|.
    pub mae: Option<f64>,
}

/// Counts of the query step.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct QueryStats {
    /// Queries asked (every corpus document).
    pub queries: u64,
    /// Queries with at least one hit (the query document itself counts).
    pub with_hits: u64,
    /// Hits other than the query document itself.
    pub hits: u64,
    /// Of those, hits on truth pairs.
    pub hits_on_truth_pairs: u64,
    /// Hits on index documents that are not in the corpus (left out).
    pub unmapped_hits: u64,
    /// Mean candidates (documents the codes found) per query.
    pub mean_candidates: f64,
    /// Most candidates of one query.
    pub max_candidates: u64,
}

/// The headline numbers.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    /// Recall of pairs with cosine ≥ 0.95.
    pub recall_cos_0_95: Option<f64>,
    /// Recall of pairs with cosine ≥ 0.9.
    pub recall_cos_0_90: Option<f64>,
    /// Recall of pairs with 0.8 ≤ cosine < 0.9.
    pub recall_cos_0_80_0_90: Option<f64>,
    /// Recall of all truth pairs.
    pub recall_all: Option<f64>,
    /// Recall of pairs with cosine ≥ 0.9 and a short document.
    pub recall_short_cos_0_90: Option<f64>,
    /// Precision of hits with score ≥ 0.9: true cosine ≥ 0.9.
    pub precision_score_0_90_cos_0_90: Option<f64>,
    /// Precision of hits with score ≥ 0.9: true cosine ≥ 0.8.
    pub precision_score_0_90_cos_0_80: Option<f64>,
    /// Recall of pairs with 0.7 ≤ cosine < 0.9 (high-similarity search).
    pub recall_cos_0_70_0_90: Option<f64>,
    /// Recall of pairs with 0.6 ≤ cosine < 0.7 (high-similarity search).
    pub recall_cos_0_60_0_70: Option<f64>,
    /// Precision of hits with score ≥ 0.7: true cosine ≥ 0.6 (high-similarity search).
    pub precision_score_0_70_cos_0_60: Option<f64>,
    /// Mean of score − cosine.
    pub estimator_bias: Option<f64>,
    /// Root mean square of score − cosine.
    pub estimator_rmse: Option<f64>,
    /// Share of queries whose first hit is themselves (or an exact duplicate at equal score).
    pub self_first: Option<f64>,
}

/// Everything measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// What was measured and how.
    pub settings: Settings,
    /// Corpus documents.
    pub documents: usize,
    /// Truth pairs (cosine ≥ min, different ids).
    pub truth_pairs: usize,
    /// Pairs of two documents with the same id, left out.
    pub same_id_pairs: usize,
    /// Truth pairs with a document missing from the index, left out of recall.
    pub pairs_not_in_index: usize,
    /// The headline numbers.
    pub summary: Summary,
    /// Recall and precision per similarity bucket.
    pub buckets: Vec<Bucket>,
    /// Recall over wider ranges of cosine.
    pub recall: RecallRanges,
    /// Precision of the hits with score ≥ 0.9.
    pub precision_score_0_90: PrecisionAt,
    /// Hits with score ≥ 0.7 whose true cosine is ≥ 0.6 (high-similarity search).
    pub precision_score_0_70_cos_0_60: Ratio,
    /// Queries whose first hit is the query document (or an exact duplicate at equal score).
    pub self_first: Ratio,
    /// Queries whose first hit is the query document or ranks equal to it (same score and code
    /// groups: the index cannot tell them apart, and `pocketdex query` puts the query's own
    /// document first among them).
    pub self_first_or_tie: Ratio,
    /// Queries whose hits include the query document.
    pub self_found: Ratio,
    /// Error of the similarity estimate.
    pub estimator: Estimator,
    /// Counts of the query step.
    pub queries: QueryStats,
}

/// A count out of a total, while counting.
#[derive(Clone, Copy, Debug, Default)]
struct Count {
    n: u64,
    of: u64,
}

impl Count {
    fn add(&mut self, yes: bool) {
        self.of += 1;
        self.n += yes as u64;
    }

    fn ratio(self) -> Ratio {
        Ratio::new(self.n, self.of)
    }
}

/// What became of one truth pair whose documents are both in the index.
struct Outcome {
    cosine: f32,
    jaccard3: f32,
    /// Either document's hits hold the other.
    found: bool,
    /// Both do.
    found_both: bool,
    /// Both documents are long.
    long: bool,
}

/// Truth pairs counted: found, found both ways, and found split by length.
#[derive(Clone, Copy, Debug, Default)]
struct PairCounts {
    found: Count,
    found_both: Count,
    long: Count,
    short: Count,
}

impl PairCounts {
    fn add(&mut self, o: &Outcome) {
        self.found.add(o.found);
        self.found_both.add(o.found_both);
        if o.long {
            self.long.add(o.found)
        } else {
            self.short.add(o.found)
        }
    }
}

/// Sums of the estimator's error `score − cosine` over a set of hits.
#[derive(Default, Clone, Copy)]
struct Moments {
    n: u64,
    sum: f64,
    sq: f64,
    abs: f64,
    score: f64,
}

impl Moments {
    fn add(&mut self, err: f64, score: f64) {
        self.n += 1;
        self.sum += err;
        self.sq += err * err;
        self.abs += err.abs();
        self.score += score;
    }

    fn mean(&self, x: f64) -> Option<f64> {
        (self.n > 0).then(|| x / self.n as f64)
    }
}

/// A bucket while counting.
#[derive(Clone, Copy, Default)]
struct BucketCounts {
    /// Its truth pairs.
    pairs: PairCounts,
    /// Σ jaccard3 of its truth pairs.
    jaccard3: f64,
    /// Hits whose true cosine is in it.
    hits: Moments,
    /// precision(lo): hits with score ≥ lo, counted by true cosine ≥ lo.
    precision: Count,
}

/// The grid of buckets: multiples of 0.05 from `min` rounded down, to 1.
struct Grid {
    /// The first bucket's lower bound, in twentieths.
    g0: i64,
    /// Number of buckets.
    len: usize,
}

impl Grid {
    fn new(min: f32) -> Self {
        let g0 = ((min as f64 * 20.0 + 1e-6).floor() as i64).clamp(0, 19);
        Grid {
            g0,
            len: (20 - g0) as usize,
        }
    }

    /// The lower bound of bucket k (the upper one of k − 1).
    fn lo(&self, k: usize) -> f64 {
        (self.g0 + k as i64) as f64 / 20.0
    }

    /// The bucket of a cosine (the last one includes 1); `None` below the first.
    fn of(&self, c: f32) -> Option<usize> {
        let k = ((c as f64) * 20.0 + 1e-7).floor() as i64 - self.g0;
        (k >= 0).then(|| (k as usize).min(self.len - 1))
    }
}

impl Report {
    /// Measures the answers against the truth. `ids` and `docs` are the corpus (same order),
    /// `truth` from [`truth`](crate::truth()), `answers` from [`query_all`](crate::query_all)
    /// (one per corpus document).
    pub fn compute(
        ids: &[String],
        docs: &TermDocs,
        truth: &[TruthPair],
        answers: &[Answer],
        map: &DocMap,
        settings: &Settings,
    ) -> Report {
        assert_eq!(ids.len(), docs.len(), "one id per document");
        assert_eq!(ids.len(), answers.len(), "one answer per document");
        let same = |a: u32, b: u32| a == b || ids[a as usize] == ids[b as usize];
        let long = |d: u32| docs.term_count(d as usize) >= settings.long_min_terms as usize;
        let pairs: Vec<&TruthPair> = truth.iter().filter(|p| !same(p.a, p.b)).collect();
        let cosine: HashMap<(u32, u32), f32> =
            pairs.iter().map(|p| ((p.a, p.b), p.cosine)).collect();
        let cos_of = |a: u32, b: u32| cosine.get(&(a.min(b), a.max(b))).copied();
        let grid = Grid::new(settings.min);
        let mut buckets = vec![BucketCounts::default(); grid.len];

        // Recall.
        let hit_sets: Vec<Vec<u32>> = answers
            .iter()
            .map(|a| {
                let mut v: Vec<u32> = a.hits.iter().map(|h| h.doc).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let finds = |q: u32, d: u32| hit_sets[q as usize].binary_search(&d).is_ok();
        let mut pairs_not_in_index = 0;
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(pairs.len());
        for p in &pairs {
            if !(map.in_index[p.a as usize] && map.in_index[p.b as usize]) {
                pairs_not_in_index += 1;
                continue;
            }
            let (ab, ba) = (finds(p.a, p.b), finds(p.b, p.a));
            outcomes.push(Outcome {
                cosine: p.cosine,
                jaccard3: p.jaccard3,
                found: ab || ba,
                found_both: ab && ba,
                long: long(p.a) && long(p.b),
            });
        }
        for o in &outcomes {
            if let Some(k) = grid.of(o.cosine) {
                buckets[k].pairs.add(o);
                buckets[k].jaccard3 += o.jaccard3 as f64;
            }
        }
        let range = |name: String, lo: f64, hi: f64| {
            let mut counts = PairCounts::default();
            for o in &outcomes {
                let c = o.cosine as f64;
                if c >= lo - 1e-7 && (c < hi - 1e-7 || hi >= 1.0) {
                    counts.add(o);
                }
            }
            RecallRange {
                name,
                lo,
                hi,
                all: counts.found.ratio(),
                long: counts.long.ratio(),
                short: counts.short.ratio(),
            }
        };
        let m = settings.min as f64;
        // The ranges of high-similarity search (`query --similar`), when `min` reaches them.
        let similar = |name: &str, lo: f64, hi: f64| (m <= lo).then(|| range(name.into(), lo, hi));
        let recall = RecallRanges {
            cos_0_95: range("cos>=0.95".into(), 0.95, 1.0),
            cos_0_90: range("cos>=0.90".into(), 0.9, 1.0),
            cos_0_80_0_90: range("0.80<=cos<0.90".into(), 0.8, 0.9),
            cos_min_0_80: (m < 0.8).then(|| range(format!("{m:.2}<=cos<0.80"), m, 0.8)),
            cos_0_70_0_90: similar("0.70<=cos<0.90", 0.7, 0.9),
            cos_0_60_0_70: similar("0.60<=cos<0.70", 0.6, 0.7),
            cos_0_50_0_60: similar("0.50<=cos<0.60", 0.5, 0.6),
            all: range(format!("cos>={m:.2}"), m, 1.0),
        };

        // Hits: precision, estimator error, self-first.
        let thresholds: Vec<f32> = (0..grid.len).map(|k| grid.lo(k) as f32).collect();
        let mut all = Moments::default();
        let (mut score_0_90_cos_0_90, mut score_0_90_cos_0_80) =
            (Count::default(), Count::default());
        let mut score_0_70_cos_0_60 = Count::default();
        let mut stats = QueryStats {
            queries: answers.len() as u64,
            ..QueryStats::default()
        };
        let (mut self_first, mut self_first_or_tie, mut self_found) =
            (Count::default(), Count::default(), Count::default());
        let mut candidates = 0u64;
        for (q, answer) in answers.iter().enumerate() {
            let q = q as u32;
            candidates += answer.candidates as u64;
            stats.max_candidates = stats.max_candidates.max(answer.candidates as u64);
            stats.unmapped_hits += answer.unmapped as u64;
            stats.with_hits += (!answer.hits.is_empty()) as u64;
            if map.in_index[q as usize] {
                let own = answer.hits.iter().find(|h| same(q, h.doc));
                let (first, tied) = match (answer.hits.first(), own) {
                    (Some(first), Some(own)) => {
                        let tie = own.score == first.score && own.codes == first.codes;
                        let dup = own.score == first.score
                            && cos_of(q, first.doc).is_some_and(|c| c >= 0.99999);
                        (same(q, first.doc) || dup, same(q, first.doc) || tie)
                    }
                    _ => (false, false),
                };
                self_first.add(first);
                self_first_or_tie.add(tied);
                self_found.add(own.is_some());
            }
            for &AnswerHit { doc: d, score, .. } in &answer.hits {
                if same(q, d) {
                    continue;
                }
                stats.hits += 1;
                let cos = cos_of(q, d);
                for (b, &s) in buckets.iter_mut().zip(&thresholds) {
                    if score >= s {
                        b.precision.add(cos.is_some_and(|c| c >= s));
                    }
                }
                if score >= 0.7 {
                    score_0_70_cos_0_60.add(cos.is_some_and(|c| c >= 0.6));
                }
                if score >= 0.9 {
                    score_0_90_cos_0_90.add(cos.is_some_and(|c| c >= 0.9));
                    score_0_90_cos_0_80.add(cos.is_some_and(|c| c >= 0.8));
                }
                if let Some(c) = cos {
                    stats.hits_on_truth_pairs += 1;
                    let err = score as f64 - c as f64;
                    all.add(err, score as f64);
                    if let Some(k) = grid.of(c) {
                        buckets[k].hits.add(err, score as f64);
                    }
                }
            }
        }
        stats.mean_candidates = candidates as f64 / answers.len().max(1) as f64;

        let buckets: Vec<Bucket> = buckets
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let (p, m) = (&b.pairs, &b.hits);
                Bucket {
                    lo: grid.lo(k),
                    hi: grid.lo(k + 1),
                    recall: p.found.ratio(),
                    recall_both: p.found_both.ratio(),
                    recall_long: p.long.ratio(),
                    recall_short: p.short.ratio(),
                    mean_jaccard3: (p.found.of > 0).then(|| b.jaccard3 / p.found.of as f64),
                    hits: m.n,
                    mean_score: m.mean(m.score),
                    bias: m.mean(m.sum),
                    rmse: m.mean(m.sq).map(f64::sqrt),
                    precision: (thresholds[k] >= settings.min).then(|| b.precision.ratio()),
                }
            })
            .collect();
        let estimator = Estimator {
            hits: all.n,
            bias: all.mean(all.sum),
            rmse: all.mean(all.sq).map(f64::sqrt),
            mae: all.mean(all.abs),
        };
        let precision_score_0_90 = PrecisionAt {
            score: 0.9,
            cos_0_90: score_0_90_cos_0_90.ratio(),
            cos_0_80: score_0_90_cos_0_80.ratio(),
        };
        let precision_score_0_70_cos_0_60 = score_0_70_cos_0_60.ratio();
        let self_first = self_first.ratio();
        let rate = |r: &Option<RecallRange>| r.as_ref().and_then(|r| r.all.rate);
        let summary = Summary {
            recall_cos_0_95: recall.cos_0_95.all.rate,
            recall_cos_0_90: recall.cos_0_90.all.rate,
            recall_cos_0_80_0_90: recall.cos_0_80_0_90.all.rate,
            recall_all: recall.all.all.rate,
            recall_short_cos_0_90: recall.cos_0_90.short.rate,
            precision_score_0_90_cos_0_90: precision_score_0_90.cos_0_90.rate,
            precision_score_0_90_cos_0_80: precision_score_0_90.cos_0_80.rate,
            recall_cos_0_70_0_90: rate(&recall.cos_0_70_0_90),
            recall_cos_0_60_0_70: rate(&recall.cos_0_60_0_70),
            precision_score_0_70_cos_0_60: precision_score_0_70_cos_0_60.rate,
            estimator_bias: estimator.bias,
            estimator_rmse: estimator.rmse,
            self_first: self_first.rate,
        };
        Report {
            settings: settings.clone(),
            documents: ids.len(),
            truth_pairs: pairs.len(),
            same_id_pairs: truth.len() - pairs.len(),
            pairs_not_in_index,
            summary,
            buckets,
            recall,
            precision_score_0_90,
            precision_score_0_70_cos_0_60,
            self_first,
            self_first_or_tie: self_first_or_tie.ratio(),
            self_found: self_found.ratio(),
            estimator,
            queries: stats,
        }
    }
}
