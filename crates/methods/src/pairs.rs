//! Pair generation from shared values, as in the search-engine data-structures text: an inverted
//! list of documents per value, a (document, document) pair generated for every two documents in
//! one list, and the pairs counted. No two documents are compared unless they share a value.
//!
//! The pairs are counted per first document, in parallel: document `a` walks the lists of its
//! values and counts the later documents `b` it meets, in a dense counter array. That gives the
//! same counts as generating and sorting all pairs, without holding them all in memory; a block
//! of first documents at a time, whose pairs go to the caller before the next block is counted
//! (`in_blocks`), so that m near-identical documents' m² pairs are never held at once. The work
//! is the number of generated pairs: Σ over values of (list length)²/2. The lists are found by
//! sorting (value, document) entries; beyond 4 million entries they are spilled to temporary
//! files by range of values and sorted one range at a time, and values are computed by the
//! caller on demand, never held for the whole collection.

use super::shingles::{jaccard_of, overlap};
use super::{Evidence, Pair};
use pocketdex::error::{Error, Result};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Mutex;

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

/// Entries (value, document) sorted at once, at most: 16 bytes each, 64 MiB. More are spilled
/// in one pass to temporary files, one per range of values, and each range is read back, sorted
/// and listed in turn, so a collection's pairs are counted in memory that does not grow with its
/// number of values (minhash at 2 million documents has 256 million), at the cost of writing and
/// reading each once (12 bytes per value).
const PASS_ENTRIES: usize = 1 << 22;

/// Bytes of one spilled entry: the value and the document, little-endian.
const ENTRY_BYTES: usize = 12;

/// Documents whose values are spilled together (one rayon task).
const SPILL_CHUNK: usize = 4096;

/// Every pair of `n` documents that shares at least `min_count` values. `values(d, out)` pushes
/// document d's values onto `out` (tag values with their position, e.g. the permutation number,
/// when equal values at different positions must not match; a value repeated in one document
/// counts once). Returns the pairs sorted by (a, b), and the number of (document, document)
/// pairs generated.
///
/// # Errors
/// When the values are too many for memory and cannot be spilled to the temporary directory
/// (`TMPDIR`): it is not writable, or too small (12 bytes per value).
pub fn count_shared<F>(n: usize, values: F, min_count: u32) -> Result<(Vec<Shared>, u64)>
where
    F: Fn(u32, &mut Vec<u64>) + Sync,
{
    let mut all = Vec::new();
    let generated =
        count_shared_each(n, &values, min_count, PASS_ENTRIES, BLOCK_PAIRS, |shared| {
            all.extend(shared);
            Ok(())
        })?;
    Ok((all, generated))
}

/// [`count_shared`], handing the pairs to `each` a block at a time (in order of (a, b), at most about
/// a million pairs per block) instead of returning them all: a caller that verifies and keeps
/// fewer holds no more. Returns the number of (document, document) pairs generated.
pub fn count_shared_by_block<F>(
    n: usize,
    values: F,
    min_count: u32,
    each: impl FnMut(Vec<Shared>) -> Result<()>,
) -> Result<u64>
where
    F: Fn(u32, &mut Vec<u64>) + Sync,
{
    count_shared_each(n, &values, min_count, PASS_ENTRIES, BLOCK_PAIRS, each)
}

fn count_shared_each<F>(
    n: usize,
    values: &F,
    min_count: u32,
    pass_entries: usize,
    block_pairs: u64,
    mut each: impl FnMut(Vec<Shared>) -> Result<()>,
) -> Result<u64>
where
    F: Fn(u32, &mut Vec<u64>) + Sync,
{
    let total: usize = (0..n as u32)
        .into_par_iter()
        .map_init(Vec::new, |buf, d| {
            buf.clear();
            values(d, buf);
            buf.len()
        })
        .sum();
    let mut lists = Lists::default();
    if total <= pass_entries {
        let mut entries: Vec<(u64, u32)> = (0..n as u32)
            .into_par_iter()
            .map_init(Vec::new, |buf, d| {
                buf.clear();
                values(d, buf);
                buf.iter().map(|&x| (x, d)).collect::<Vec<_>>()
            })
            .flatten_iter()
            .collect();
        lists.add(&mut entries);
    } else {
        // 2^bits ranges of values, by their top bits: hash values spread evenly over them.
        let bits = total
            .div_ceil(pass_entries)
            .next_power_of_two()
            .trailing_zeros();
        let spill = Spill::new(bits)?;
        (0..n)
            .into_par_iter()
            .step_by(SPILL_CHUNK)
            .try_for_each(|first| {
                let mut buf = Vec::new();
                let mut out = vec![Vec::new(); 1 << bits];
                for d in first..(first + SPILL_CHUNK).min(n) {
                    buf.clear();
                    values(d as u32, &mut buf);
                    for &x in &buf {
                        let range = &mut out[(x >> (64 - bits)) as usize];
                        range.extend_from_slice(&x.to_le_bytes());
                        range.extend_from_slice(&(d as u32).to_le_bytes());
                    }
                }
                spill.write(&out)
            })?;
        for range in 0..1usize << bits {
            let mut entries = spill.read(range)?;
            lists.add(&mut entries);
        }
    }
    let Lists { docs, lists } = lists;
    // Each document's lists, flat: those of document d are `of_doc[at[d]..at[d + 1]]`.
    let mut at = vec![0u32; n + 1];
    for &d in &docs {
        at[d as usize + 1] += 1;
    }
    for d in 0..n {
        at[d + 1] += at[d];
    }
    let mut of_doc = vec![0u32; docs.len()];
    let mut next = at.clone();
    for (l, &(s, e)) in lists.iter().enumerate() {
        for &d in &docs[s as usize..e as usize] {
            of_doc[next[d as usize] as usize] = l as u32;
            next[d as usize] += 1;
        }
    }
    drop(next);
    // The (document, document) pairs each first document generates: the later documents it
    // meets in its lists. At most as many distinct pairs (and no more than there are later
    // documents), so a block's pairs are at most the sum of its weights.
    let mut weights: Vec<u64> = (0..n as u32)
        .into_par_iter()
        .map(|a| {
            let mine = &of_doc[at[a as usize] as usize..at[a as usize + 1] as usize];
            mine.iter()
                .map(|&l| {
                    let (s, e) = lists[l as usize];
                    let list = &docs[s as usize..e as usize];
                    (list.len() - list.partition_point(|&d| d <= a)) as u64
                })
                .sum()
        })
        .collect();
    let generated = weights.iter().sum();
    for (a, w) in weights.iter_mut().enumerate() {
        *w = (*w).min((n - 1 - a) as u64);
    }
    let counters = Counters::new(n);
    in_blocks(&weights, block_pairs, |block| {
        let shared: Vec<Vec<Shared>> = block
            .into_par_iter()
            .map_init(
                || counters.lend(),
                |lent, a| {
                    let (count, touched) = lent.get();
                    let mine = &of_doc[at[a as usize] as usize..at[a as usize + 1] as usize];
                    for &l in mine {
                        let (s, e) = lists[l as usize];
                        let list = &docs[s as usize..e as usize];
                        let after = list.partition_point(|&d| d <= a);
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
                    out
                },
            )
            .collect();
        each(shared.into_iter().flatten().collect())
    })?;
    Ok(generated)
}

/// The pairs of `shared` that reach `t`, in parallel: scored by the exact Jaccard of the two
/// documents' `set`s when `verify`, else by `estimate(count)`; with `evidence(count)`. What
/// minhash and the multi-trial signature do with their candidates.
pub(crate) fn jaccard_pairs<'a>(
    shared: Vec<Shared>,
    set: impl Fn(u32) -> &'a [u64] + Sync,
    t: f64,
    verify: bool,
    estimate: impl Fn(u32) -> f64 + Sync,
    evidence: impl Fn(u32) -> Evidence + Sync,
) -> Vec<Pair> {
    shared
        .into_par_iter()
        .filter_map(|s| {
            let est = estimate(s.count);
            let score = if verify {
                let (a, b) = (set(s.a), set(s.b));
                jaccard_of(overlap(a, b), a.len(), b.len())
            } else {
                est
            };
            (score + 1e-9 >= t).then_some(Pair {
                a: s.a,
                b: s.b,
                score,
                estimate: Some(est),
                evidence: evidence(s.count),
            })
        })
        .collect()
}

/// Candidate pairs made at once, at most (one document's own pairs aside): 12 MB of [`Shared`],
/// and up to a million verified pairs (48 MB).
pub(crate) const BLOCK_PAIRS: u64 = 1 << 20;

/// Runs `block` over the documents `0..weights.len()`, a block of consecutive numbers at a
/// time, in order: each block as long as its documents' `weights` (at least the pairs each can
/// produce) sum to at most `budget`, and at least one document. So pairs are made and consumed
/// a bounded number at a time even when m near-identical documents make m² of them, instead of
/// all being held before the first is verified.
pub(crate) fn in_blocks<E>(
    weights: &[u64],
    budget: u64,
    mut block: impl FnMut(std::ops::Range<u32>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut at = 0usize;
    while at < weights.len() {
        let (mut end, mut sum) = (at + 1, weights[at]);
        while end < weights.len() && sum.saturating_add(weights[end]) <= budget {
            sum = sum.saturating_add(weights[end]);
            end += 1;
        }
        block(at as u32..end as u32)?;
        at = end;
    }
    Ok(())
}

/// A counter per document and the list of those touched, zero between uses, lent to rayon's
/// tasks block after block instead of allocated (n of them) for each.
pub(crate) struct Counters {
    n: usize,
    free: Mutex<Vec<(Vec<u32>, Vec<u32>)>>,
}

impl Counters {
    pub(crate) fn new(n: usize) -> Self {
        Counters {
            n,
            free: Mutex::new(Vec::new()),
        }
    }

    /// A set of counters until the returned value is dropped.
    pub(crate) fn lend(&self) -> Lent<'_> {
        let kept = self.free.lock().expect("no task panicked").pop();
        Lent {
            from: self,
            counters: Some(kept.unwrap_or_else(|| (vec![0; self.n], Vec::new()))),
        }
    }
}

/// Counters lent by [`Counters::lend`]; given back when dropped (the user leaves them zero).
pub(crate) struct Lent<'a> {
    from: &'a Counters,
    counters: Option<(Vec<u32>, Vec<u32>)>,
}

impl Lent<'_> {
    pub(crate) fn get(&mut self) -> (&mut Vec<u32>, &mut Vec<u32>) {
        let (count, touched) = self.counters.as_mut().expect("held until dropped");
        (count, touched)
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.counters.take() {
            if let Ok(mut free) = self.from.free.lock() {
                free.push(c);
            }
        }
    }
}

/// Lists of two or more documents that share a value, as (start, end) into `docs`.
#[derive(Default)]
struct Lists {
    docs: Vec<u32>,
    lists: Vec<(u32, u32)>,
}

impl Lists {
    /// Sorts `entries` (a whole range of values) and adds the lists of their values.
    fn add(&mut self, entries: &mut [(u64, u32)]) {
        entries.par_sort_unstable();
        let index = |i: usize| u32::try_from(i).expect("fewer than 2^32 shared values");
        let docs = &mut self.docs;
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
                    self.lists.push((index(start), index(docs.len())));
                } else {
                    docs.truncate(start);
                }
            }
            i = j;
        }
    }
}

/// Entries spilled to one temporary file per range of values: files without a name in TMPDIR
/// (`tempfile::tempfile`), which the system removes when they are closed, the process killed
/// included (a kill -9 or the OOM killer would leave named ones behind, gigabytes at scale).
struct Spill {
    files: Vec<Mutex<BufWriter<File>>>,
}

/// A spill file that cannot be made, written or read: where, and what to do.
fn spill_error(e: std::io::Error) -> Error {
    super::store::temp_file_error(
        "the values pairs are counted with (12 bytes per value: 3 GB for minhash at 2 million documents)",
        false,
        e,
    )
}

impl Spill {
    fn new(bits: u32) -> Result<Spill> {
        let files = (0..1usize << bits)
            .map(|_| {
                let f = tempfile::tempfile().map_err(spill_error)?;
                Ok(Mutex::new(BufWriter::with_capacity(1 << 16, f)))
            })
            .collect::<Result<_>>()?;
        Ok(Spill { files })
    }

    /// Appends each range's encoded entries to its file.
    fn write(&self, ranges: &[Vec<u8>]) -> Result<()> {
        for (r, bytes) in ranges.iter().enumerate().filter(|(_, b)| !b.is_empty()) {
            let mut f = self.files[r].lock().expect("no writer panicked");
            f.write_all(bytes).map_err(spill_error)?;
        }
        Ok(())
    }

    /// Range `r`'s entries, read back whole.
    fn read(&self, r: usize) -> Result<Vec<(u64, u32)>> {
        use std::io::{Read, Seek};
        let mut w = self.files[r].lock().expect("no writer panicked");
        w.flush().map_err(spill_error)?;
        let f = w.get_mut();
        let mut bytes = Vec::new();
        f.rewind()
            .and_then(|()| f.read_to_end(&mut bytes))
            .map_err(spill_error)?;
        // The file is not needed again: its disk space goes back before the next range.
        let _ = f.set_len(0);
        Ok(bytes
            .chunks_exact(ENTRY_BYTES)
            .map(|e| {
                let x = u64::from_le_bytes(e[..8].try_into().expect("8 bytes"));
                (x, u32::from_le_bytes(e[8..].try_into().expect("4 bytes")))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts of every pair, by comparing every two documents.
    fn brute_force(values: &[Vec<u64>], min_count: u32) -> Vec<Shared> {
        let mut want = Vec::new();
        for a in 0..values.len() {
            for b in a + 1..values.len() {
                let mut va = values[a].clone();
                va.sort_unstable();
                va.dedup();
                let c = va.iter().filter(|x| values[b].contains(x)).count() as u32;
                if c >= min_count.max(1) {
                    want.push(Shared {
                        a: a as u32,
                        b: b as u32,
                        count: c,
                    });
                }
            }
        }
        want
    }

    fn from(values: &[Vec<u64>]) -> impl Fn(u32, &mut Vec<u64>) + Sync + '_ {
        |d, out| out.extend_from_slice(&values[d as usize])
    }

    /// The pairs and the pairs generated, `pass_entries` (value, document) entries sorted at
    /// once, blocks of at most `block_pairs` pairs.
    fn count_in(
        values: &[Vec<u64>],
        min_count: u32,
        pass_entries: usize,
        block_pairs: u64,
    ) -> (Vec<Shared>, u64) {
        let mut all = Vec::new();
        let n = values.len();
        let generated = count_shared_each(
            n,
            &from(values),
            min_count,
            pass_entries,
            block_pairs,
            |s| {
                assert!(s.windows(2).all(|w| (w[0].a, w[0].b) < (w[1].a, w[1].b)));
                all.extend(s);
                Ok(())
            },
        )
        .unwrap();
        (all, generated)
    }

    #[test]
    fn counts_match_brute_force() {
        let values = vec![
            vec![1, 2, 3, 4],
            vec![2, 3, 4, 5],
            vec![9],
            vec![1, 2, 3, 4],
            vec![4, 8],
        ];
        let (got, _) = count_shared(values.len(), from(&values), 1).unwrap();
        assert_eq!(got, brute_force(&values, 1));
        let (got, _) = count_shared(values.len(), from(&values), 3).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got, brute_force(&values, 3));
    }

    /// Blocks cover the documents once, in order, within the budget unless one document
    /// alone exceeds it.
    #[test]
    fn blocks_hold_at_most_the_budget() {
        // Documents 30,000–39,999 are one group: each pairs with the rest of it.
        let weights: Vec<u64> = (0..100_000u64)
            .map(|d| {
                if (30_000..40_000).contains(&d) {
                    40_000 - d
                } else {
                    1
                }
            })
            .collect();
        for budget in [1, 5_000, 50_000, u64::MAX] {
            let mut next = 0u32;
            let Ok(()) = in_blocks(&weights, budget, |r| {
                assert_eq!(r.start, next);
                let held: u64 = weights[r.start as usize..r.end as usize].iter().sum();
                assert!(held <= budget || r.len() == 1, "{r:?}: {held}");
                next = r.end;
                Ok::<(), std::convert::Infallible>(())
            });
            assert_eq!(next, 100_000);
        }
    }

    /// Spilled to disk in ranges of values (as a large collection is), the pairs, their counts
    /// and the pairs generated are those of one sort in memory and of brute force.
    #[test]
    fn passes_count_as_one() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Values from a small pool spread over the whole 64-bit range, so lists are long and
        // every pass has some; a few values repeated inside a document.
        let pool: Vec<u64> = (0..60).map(|_| next()).collect();
        let values: Vec<Vec<u64>> = (0..80)
            .map(|_| {
                (0..1 + next() % 12)
                    .map(|_| pool[(next() % pool.len() as u64) as usize])
                    .collect()
            })
            .collect();
        for min_count in [1, 2, 3] {
            let want = brute_force(&values, min_count);
            let one = count_in(&values, min_count, usize::MAX, u64::MAX);
            assert_eq!(one.0, want);
            for pass_entries in [1, 7, 100] {
                let many = count_in(&values, min_count, pass_entries, u64::MAX);
                assert_eq!(many, one, "{pass_entries} entries per pass");
            }
            // Counted a block of first documents at a time, with counters lent from block to
            // block: the same pairs, in the same order.
            for block_pairs in [1, 7, 100] {
                let blocks = count_in(&values, min_count, 100, block_pairs);
                assert_eq!(blocks, one, "blocks of {block_pairs} pairs");
            }
        }
    }
}
