//! Equivalence groups: the connected components of the reported pairs (union-find with path
//! halving and union by size), each with the pairs inside it.

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
        g.pairs.sort_by(|x, y| {
            y.score
                .total_cmp(&x.score)
                .then(x.a.cmp(&y.a))
                .then(x.b.cmp(&y.b))
        });
    }
    groups.sort_by(|x, y| {
        y.members
            .len()
            .cmp(&x.members.len())
            .then(x.members[0].cmp(&y.members[0]))
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

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
