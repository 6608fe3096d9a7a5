//! Equivalence groups: the connected components of the reported pairs (union-find with path
//! halving and union by size), each with the pairs inside it; and [`clusters`], one row per
//! document saying which group it is in and whether it is a duplicate, for deduplicating
//! pipelines (`dups --output`, the Python package).

use super::Pair;

/// A disjoint-set forest over documents `0..n`.
#[derive(Clone, Debug)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Joins the sets of `a` and `b`; true when they were apart.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
        true
    }
}

/// One equivalence group: documents joined by reported pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Document numbers, ascending (input order).
    pub members: Vec<u32>,
    /// The reported pairs inside the group, best score first.
    pub pairs: Vec<Pair>,
}

/// The order groups list their pairs in: best score first, ties to the smaller `(a, b)`.
fn best_first(x: &Pair, y: &Pair) -> std::cmp::Ordering {
    y.score
        .total_cmp(&x.score)
        .then(x.a.cmp(&y.a))
        .then(x.b.cmp(&y.b))
}

/// The groups (connected components with at least two documents) of `pairs` over documents
/// `0..n`: largest first, then by first member.
///
/// # Example
/// ```
/// use pocketdex_methods::{groups::group_pairs, Pair};
/// let p = |a, b| Pair::new(a, b, 0.9);
/// let groups = group_pairs(6, &[p(0, 1), p(4, 5), p(1, 3)]);
/// assert_eq!(groups[0].members, [0, 1, 3]);
/// assert_eq!(groups[1].members, [4, 5]);
/// ```
pub fn group_pairs(n: usize, pairs: &[Pair]) -> Vec<Group> {
    let mut uf = UnionFind::new(n);
    for p in pairs {
        uf.union(p.a, p.b);
    }
    let mut index: Vec<u32> = vec![u32::MAX; n];
    let mut groups: Vec<Group> = Vec::new();
    let mut in_pairs = vec![false; n];
    for p in pairs {
        in_pairs[p.a as usize] = true;
        in_pairs[p.b as usize] = true;
    }
    for doc in 0..n as u32 {
        if !in_pairs[doc as usize] {
            continue;
        }
        let root = uf.find(doc) as usize;
        if index[root] == u32::MAX {
            index[root] = groups.len() as u32;
            groups.push(Group {
                members: Vec::new(),
                pairs: Vec::new(),
            });
        }
        groups[index[root] as usize].members.push(doc);
    }
    for p in pairs {
        let root = uf.find(p.a) as usize;
        groups[index[root] as usize].pairs.push(*p);
    }
    for g in &mut groups {
        g.pairs.sort_by(best_first);
    }
    groups.sort_by(|x, y| {
        y.members
            .len()
            .cmp(&x.members.len())
            .then(x.members[0].cmp(&y.members[0]))
    });
    groups
}

/// `pairs` (over documents `0..n`) with every group of more than `above` documents reduced to
/// a maximum spanning tree: the highest-scoring pairs that join it (ties to the smaller
/// `(a, b)`), one fewer than its members. The groups stay the same, and so does every
/// document's best score (a document's best pair is always in the tree), while a group of m
/// near-identical documents lists m − 1 pairs instead of up to m(m − 1)/2. Smaller groups keep
/// every pair. Returns the pairs, sorted by `(a, b)`, and the number of groups reduced.
///
/// # Example
/// ```
/// use pocketdex_methods::{groups::spanning, Pair};
/// let p = |a, b, s| Pair::new(a, b, s);
/// // A triangle (a group of 3) and a pair: above 2, the triangle keeps its best two.
/// let pairs = vec![p(0, 1, 0.9), p(0, 2, 0.8), p(1, 2, 0.95), p(3, 4, 0.7)];
/// let (kept, reduced) = spanning(5, pairs.clone(), 2);
/// assert_eq!(kept, [p(0, 1, 0.9), p(1, 2, 0.95), p(3, 4, 0.7)]);
/// assert_eq!(reduced, 1);
/// assert_eq!(spanning(5, pairs.clone(), 3).0, pairs);
/// ```
pub fn spanning(n: usize, mut pairs: Vec<Pair>, above: usize) -> (Vec<Pair>, u64) {
    let mut groups = UnionFind::new(n);
    for p in &pairs {
        groups.union(p.a, p.b);
    }
    let large = |uf: &mut UnionFind, d: u32| {
        let r = uf.find(d);
        uf.size[r as usize] as usize > above
    };
    if !pairs.iter().any(|p| large(&mut groups, p.a)) {
        return (pairs, 0);
    }
    pairs.sort_by(best_first);
    let mut tree = UnionFind::new(n);
    let mut reduced = std::collections::HashSet::new();
    pairs.retain(|p| {
        if !large(&mut groups, p.a) {
            return true;
        }
        reduced.insert(groups.find(p.a));
        tree.union(p.a, p.b)
    });
    pairs.sort_by_key(|p| (p.a, p.b));
    (pairs, reduced.len() as u64)
}

/// Pairs as a method verifies them, reduced while they come in: whenever the pairs held double,
/// every group of more than `above` documents so far is cut to its maximum spanning tree
/// ([`spanning`]). A pair left out of a tree is the worst on a cycle of better pairs, which
/// later pairs cannot break, and groups only grow, so [`Collected::into_pairs`] then
/// [`spanning`] give exactly what [`spanning`] of all the pairs would; meanwhile memory holds
/// every pair of the small groups and one fewer than the members of each large one, not the up
/// to m(m − 1)/2 pairs of m near-identical documents.
///
/// # Example
/// ```
/// use pocketdex_methods::{groups::{spanning, Collected}, Pair};
/// // 300 near-identical documents: 44,850 pairs, listed as a tree of 299.
/// let all: Vec<Pair> = (0..300u32)
///     .flat_map(|a| (a + 1..300).map(move |b| Pair::new(a, b, 1.0 - (a + b) as f64 * 1e-4)))
///     .collect();
/// let mut c = Collected::new(300, 100);
/// c.extend(all.iter().copied());
/// assert_eq!(c.found(), 44_850);
/// let mut held = c.into_pairs();
/// held.sort_by_key(|p| (p.a, p.b));
/// let tree = spanning(300, held, 100);
/// assert_eq!(tree, spanning(300, all, 100));
/// assert_eq!(tree.0.len(), 299);
/// ```
#[derive(Debug)]
pub struct Collected {
    n: usize,
    above: usize,
    pairs: Vec<Pair>,
    found: u64,
    /// Reduce when this many pairs are held.
    reduce_at: usize,
    /// The least `reduce_at` ([`REDUCE_FIRST`]; tests reduce sooner).
    floor: usize,
}

/// Pairs held before the first reduction (40 MB): collections without large groups never
/// reduce, and a reduction costs a sort of what is held.
const REDUCE_FIRST: usize = 1 << 20;

impl Collected {
    /// Nothing yet, for pairs among documents `0..n`.
    pub fn new(n: usize, above: usize) -> Self {
        Collected {
            n,
            above,
            pairs: Vec::new(),
            found: 0,
            reduce_at: REDUCE_FIRST,
            floor: REDUCE_FIRST,
        }
    }

    /// One more pair (each pair of documents once).
    pub fn push(&mut self, pair: Pair) {
        self.found += 1;
        self.pairs.push(pair);
        if self.pairs.len() >= self.reduce_at {
            self.reduce();
        }
    }

    /// More pairs.
    pub fn extend(&mut self, pairs: impl IntoIterator<Item = Pair>) {
        for p in pairs {
            self.push(p);
        }
    }

    fn reduce(&mut self) {
        let (kept, _) = spanning(self.n, std::mem::take(&mut self.pairs), self.above);
        self.pairs = kept;
        self.reduce_at = (2 * self.pairs.len()).max(self.floor);
    }

    /// Pairs pushed so far.
    pub fn found(&self) -> u64 {
        self.found
    }

    /// The pairs held, in no particular order: every pair of the groups of at most `above`
    /// documents, and at least a maximum spanning tree of each larger group.
    pub fn into_pairs(self) -> Vec<Pair> {
        self.pairs
    }
}

/// One document's row in a deduplicated collection: its cluster (its group, or itself alone),
/// the cluster's representative, and whether it is a duplicate of that representative. Keeping
/// the rows with `!is_duplicate` keeps one document per cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// The document (its number: input order).
    pub doc: u32,
    /// Its cluster's number, from 1: the groups' numbers in [`group_pairs`]'s order (largest
    /// first, as `dups --json` numbers them), then the documents in no group, each its own
    /// cluster, in input order.
    pub cluster: u64,
    /// Documents in the cluster (1 for a document in no group).
    pub size: u64,
    /// The cluster's first document in input order, which stands for it.
    pub representative: u32,
    /// True for every document of the cluster but its representative.
    pub is_duplicate: bool,
    /// The highest score of a reported pair joining this document within its group (for the
    /// representative too); `None` for a document in no group.
    pub score: Option<f64>,
}

/// The clusters of documents `0..n` that `groups` make: one [`Cluster`] per document, in
/// document order (a document in no group is a cluster of one). Free of I/O: front ends write
/// the rows as they like.
///
/// # Example
/// ```
/// use pocketdex_methods::{groups::{clusters, group_pairs}, Pair};
/// let groups = group_pairs(4, &[Pair::new(1, 3, 0.9)]);
/// let rows = clusters(4, &groups);
/// assert_eq!(rows.len(), 4);
/// assert!(!rows[1].is_duplicate && rows[3].is_duplicate);
/// assert_eq!((rows[3].representative, rows[3].cluster, rows[3].size), (1, 1, 2));
/// assert_eq!((rows[0].cluster, rows[0].size, rows[0].score), (2, 1, None));
/// ```
///
/// # Panics
/// When a group names a document `≥ n`, or a document is in two groups.
pub fn clusters(n: usize, groups: &[Group]) -> Vec<Cluster> {
    let mut rows: Vec<Option<Cluster>> = vec![None; n];
    for (number, g) in groups.iter().enumerate() {
        let representative = *g.members.iter().min().expect("a group has members");
        for &doc in &g.members {
            let score = g
                .pairs
                .iter()
                .filter(|p| p.a == doc || p.b == doc)
                .map(|p| p.score)
                .reduce(f64::max);
            let row = &mut rows[doc as usize];
            assert!(row.is_none(), "document {doc} is in two groups");
            *row = Some(Cluster {
                doc,
                cluster: number as u64 + 1,
                size: g.members.len() as u64,
                representative,
                is_duplicate: doc != representative,
                score,
            });
        }
    }
    let mut next = groups.len() as u64;
    rows.into_iter()
        .enumerate()
        .map(|(doc, row)| {
            row.unwrap_or_else(|| {
                next += 1;
                Cluster {
                    doc: doc as u32,
                    cluster: next,
                    size: 1,
                    representative: doc as u32,
                    is_duplicate: false,
                    score: None,
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collected_pairs_reduce_to_what_all_pairs_do() {
        // Random scores over a few large groups, small groups and scattered pairs, pushed in a
        // random order and reduced every few pairs: the trees and small groups at the end are
        // those of all the pairs, and what is held stays near the trees' size.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x = pocketdex::hash::fmix64(x.wrapping_add(1));
            x
        };
        let n = 3000u32;
        let mut all = Vec::new();
        for g in 0..4u32 {
            // A group of 250 near-identical documents: every pair.
            let members: Vec<u32> = (0..250).map(|i| g * 250 + i).collect();
            for (i, &a) in members.iter().enumerate() {
                for &b in &members[i + 1..] {
                    all.push((a, b));
                }
            }
        }
        for g in 0..50u32 {
            // Groups of 5 documents.
            let base = 1000 + g * 5;
            for a in base..base + 5 {
                for b in a + 1..base + 5 {
                    all.push((a, b));
                }
            }
        }
        let mut seen: std::collections::HashSet<(u32, u32)> = all.iter().copied().collect();
        for _ in 0..2000 {
            let (a, b) = ((next() % n as u64) as u32, (next() % n as u64) as u32);
            if a != b && seen.insert((a.min(b), a.max(b))) {
                all.push((a.min(b), a.max(b)));
            }
        }
        for i in (1..all.len()).rev() {
            all.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let pairs: Vec<Pair> = all
            .iter()
            // Few distinct scores, so that ties are broken by (a, b) as well.
            .map(|&(a, b)| Pair::new(a, b, 0.8 + (next() % 16) as f64 / 100.0))
            .collect();
        for above in [3, 100, 300, 2000] {
            let mut c = Collected::new(n as usize, above);
            (c.reduce_at, c.floor) = (500, 500);
            let mut most = 0;
            for &p in &pairs {
                c.push(p);
                most = most.max(c.pairs.len());
            }
            assert_eq!(c.found(), pairs.len() as u64);
            let mut held = c.into_pairs();
            held.sort_by_key(|p| (p.a, p.b));
            let mut sorted = pairs.clone();
            sorted.sort_by_key(|p| (p.a, p.b));
            assert_eq!(
                spanning(n as usize, held, above),
                spanning(n as usize, sorted, above)
            );
            if above == 100 {
                // 124,500 pairs in the large groups; held at most twice what a reduction keeps.
                assert!(most < 2 * (4 * 249 + 50 * 10 + 2000) + 500, "{most}");
            }
        }
    }

    #[test]
    fn one_row_per_document_and_one_representative_per_cluster() {
        let p = |a, b, s| Pair::new(a, b, s);
        // Groups {0, 5, 9} and {2, 7, 8}, found in that order; 1, 3, 4, 6 alone.
        let pairs = [p(2, 7, 0.9), p(0, 5, 1.0), p(5, 9, 0.8), p(7, 8, 0.95)];
        let rows = clusters(10, &group_pairs(10, &pairs));
        assert_eq!(rows.len(), 10);
        assert!(rows.iter().enumerate().all(|(i, r)| r.doc == i as u32));
        let row = |d: usize| {
            let r = &rows[d];
            (r.cluster, r.size, r.representative, r.is_duplicate, r.score)
        };
        assert_eq!(row(0), (1, 3, 0, false, Some(1.0)));
        assert_eq!(row(5), (1, 3, 0, true, Some(1.0)));
        assert_eq!(row(9), (1, 3, 0, true, Some(0.8)));
        assert_eq!(row(2), (2, 3, 2, false, Some(0.9)));
        assert_eq!(row(7), (2, 3, 2, true, Some(0.95)));
        assert_eq!(row(8), (2, 3, 2, true, Some(0.95)));
        // Singletons: their own clusters after the groups', in input order.
        assert_eq!(row(1), (3, 1, 1, false, None));
        assert_eq!(row(3), (4, 1, 3, false, None));
        assert_eq!(row(6), (6, 1, 6, false, None));
        // Keeping the rows that are not duplicates keeps one document per cluster.
        let kept: Vec<u32> = rows
            .iter()
            .filter(|r| !r.is_duplicate)
            .map(|r| r.doc)
            .collect();
        assert_eq!(kept, [0, 1, 2, 3, 4, 6]);
        let mut ids: Vec<u64> = rows.iter().map(|r| r.cluster).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids, (1..=6).collect::<Vec<u64>>());
    }

    #[test]
    fn no_groups_no_documents() {
        assert!(clusters(0, &[]).is_empty());
        let rows = clusters(3, &[]);
        assert!(rows
            .iter()
            .all(|r| !r.is_duplicate && r.size == 1 && r.score.is_none()));
        assert_eq!(
            rows.iter().map(|r| r.cluster).collect::<Vec<_>>(),
            [1, 2, 3]
        );
    }

    #[test]
    #[should_panic(expected = "in two groups")]
    fn overlapping_groups_are_refused() {
        let g = |members: Vec<u32>| Group {
            members,
            pairs: Vec::new(),
        };
        clusters(3, &[g(vec![0, 1]), g(vec![1, 2])]);
    }

    #[test]
    fn components_and_their_pairs() {
        let p = |a, b, s| Pair::new(a, b, s);
        let pairs = [p(2, 7, 0.9), p(0, 5, 1.0), p(5, 9, 0.8), p(7, 8, 0.95)];
        let g = group_pairs(10, &pairs);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].members, [0, 5, 9]);
        assert_eq!(g[1].members, [2, 7, 8]);
        assert_eq!(g[1].pairs[0].score, 0.95);
        assert_eq!(g[0].pairs.len() + g[1].pairs.len(), 4);
        assert!(group_pairs(3, &[]).is_empty());
    }
}
