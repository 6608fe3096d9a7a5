//! Pair generation from shared values, as in the search-engine data-structures text: an inverted
//! list of documents per value, a (document, document) pair generated for every two documents in
//! one list, and the pairs counted. No two documents are compared unless they share a value.
//!
//! The pairs are counted per first document, in parallel: document `a` walks the lists of its
//! values and counts the later documents `b` it meets, in a dense counter array. That gives the
//! same counts as generating and sorting all pairs, without holding them all in memory. The work
//! is the number of generated pairs: Σ over values of (list length)²/2.

use rayon::prelude::*;

/// A pair of documents and the number of values they share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shared {
    /// First document (the smaller number).
    pub a: u32,
    /// Second document.
    pub b: u32,
    /// Values they share.
    pub count: u32,
}

/// Every pair of documents that shares at least `min_count` values. `values[d]` holds document
/// d's values, each at most once (tag values with their position, e.g. the permutation number,
/// when equal values at different positions must not match). Returns the pairs sorted by (a, b),
/// and the number of (document, document) pairs generated.
pub fn count_shared(values: &[Vec<u64>], min_count: u32) -> (Vec<Shared>, u64) {
    let n = values.len();
    let mut entries: Vec<(u64, u32)> = values
        .iter()
        .enumerate()
        .flat_map(|(d, v)| v.iter().map(move |&x| (x, d as u32)))
        .collect();
    entries.par_sort_unstable();
    // Lists of two or more documents, as (start, end) into `docs`; and each document's lists.
    let mut docs: Vec<u32> = Vec::new();
    let mut lists: Vec<(u32, u32)> = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        let mut j = i + 1;
        while j < entries.len() && entries[j].0 == entries[i].0 {
            j += 1;
        }
        if j - i >= 2 {
            let start = docs.len();
            for e in &entries[i..j] {
                // A value repeated inside one document counts once.
                if docs.len() == start || docs[docs.len() - 1] != e.1 {
                    docs.push(e.1);
                }
            }
            if docs.len() - start >= 2 {
                lists.push((start as u32, docs.len() as u32));
            } else {
                docs.truncate(start);
            }
        }
        i = j;
    }
    drop(entries);
    let mut of_doc: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (l, &(s, e)) in lists.iter().enumerate() {
        for &d in &docs[s as usize..e as usize] {
            of_doc[d as usize].push(l as u32);
        }
    }
    let results: Vec<(Vec<Shared>, u64)> = (0..n as u32)
        .into_par_iter()
        .map_init(
            || (vec![0u32; n], Vec::<u32>::new()),
            |(count, touched), a| {
                let mut generated = 0u64;
                for &l in &of_doc[a as usize] {
                    let (s, e) = lists[l as usize];
                    let list = &docs[s as usize..e as usize];
                    let after = list.partition_point(|&d| d <= a);
                    generated += (list.len() - after) as u64;
                    for &b in &list[after..] {
                        if count[b as usize] == 0 {
                            touched.push(b);
                        }
                        count[b as usize] += 1;
                    }
                }
                touched.sort_unstable();
                let mut out = Vec::new();
                for &b in touched.iter() {
                    let c = std::mem::take(&mut count[b as usize]);
                    if c >= min_count {
                        out.push(Shared { a, b, count: c });
                    }
                }
                touched.clear();
                (out, generated)
            },
        )
        .collect();
    let generated = results.iter().map(|r| r.1).sum();
    (results.into_iter().flat_map(|r| r.0).collect(), generated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_brute_force() {
        let values = vec![
            vec![1, 2, 3, 4],
            vec![2, 3, 4, 5],
            vec![9],
            vec![1, 2, 3, 4],
            vec![4, 8],
        ];
        let (got, _) = count_shared(&values, 1);
        let mut want = Vec::new();
        for a in 0..values.len() {
            for b in a + 1..values.len() {
                let c = values[a].iter().filter(|x| values[b].contains(x)).count() as u32;
                if c > 0 {
                    want.push(Shared {
                        a: a as u32,
                        b: b as u32,
                        count: c,
                    });
                }
            }
        }
        assert_eq!(got, want);
        let (got, _) = count_shared(&values, 3);
        assert_eq!(got.len(), 3);
    }
}
