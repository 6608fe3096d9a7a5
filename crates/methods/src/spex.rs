//! spex chunk selection and the S3 score (Bernstein & Zobel 2004; the content-equivalence paper).
//!
//! A chunk is a window of `chunk` consecutive words (default 8). A chunk that occurs only once in
//! the collection cannot be shared, so it cannot change any pair's score: spex keeps only chunks
//! that occur more than once, found by iterative hashing. Pass k hashes the k-word windows into
//! a table of two bits per slot (seen, seen again); a (k+1)-word window can only repeat if
//! both k-word windows inside it did, so pass k + 1 looks only at those. Between passes a
//! document keeps one bit per window (candidate or not), and a pass recomputes a candidate's
//! hash from its k words: no per-word hashes are held for the collection. The table is lossy
//! (two windows may share a slot), which only keeps a few extra chunks: never loses one. The
//! kept chunks are then counted exactly, those in a single document dropped, and the S3 pairs
//! found by the inverted-index join of [`join`](super::join).
//!
//! S3(u, v) = |C(u) ∩ C(v)| / mean(|C(u)|, |C(v)|), where C(d) is the set of distinct chunks of
//! d (all of them, kept or not): the Dice coefficient of the chunk sets. Content equivalence at
//! S3 ≥ 0.58 (the paper's threshold, where 95% of the pairs its assessors judged were equivalent
//! at level 1 or above). A document with fewer than `chunk` words has one chunk: all its words.
//! The score is exact (up to 64-bit chunk-hash collisions).

use super::compare::Comparison;
use super::groups::Collected;
use super::join::{index_sets, self_join_by_block, Measure};
use super::shingles::{shingle_hash, shingles, word_hash};
use super::{Described, Describer, Docs, Found, Info, Method, Options, Scorer};
use pocketdex::error::Result;
use pocketdex::text;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// spex chunk selection and the S3 score (content-equivalence paper): pairs share chunks that
/// repeat in the collection, scored by S3 of the chunk sets (exact).
#[derive(Clone, Copy, Debug, Default)]
pub struct Spex;

impl Method for Spex {
    fn info(&self) -> &'static Info {
        &Info {
            name: "spex",
            description: "spex chunk selection and the S3 score (content-equivalence paper)",
            default_threshold: 0.58,
            estimates: false,
        }
    }

    fn measure(&self, o: &Options) -> String {
        format!("S3 of {}-word chunks", o.chunk)
    }

    fn describer(&self, _: &Options) -> Result<Describer> {
        Ok(Box::new(|text| {
            let words: Vec<u64> = text::words(text).map(|w| word_hash(&w)).collect();
            if words.is_empty() {
                return Err("no words".into());
            }
            let identity = Described::identity_of(words.iter().copied());
            // One field: the hashes of all the document's words, in order.
            Ok(Described::new(&[bytemuck::cast_slice(&words)], identity))
        }))
    }

    /// The pairs, and the passes of the selection as a note.
    fn find(&self, docs: &Docs<'_>, o: &Options, t: f64) -> Result<Found> {
        let words: Vec<&[u64]> = docs
            .reps_records()?
            .into_iter()
            .map(|r| r.field(0))
            .collect();
        let (kept, candidates, passes) = find(&words, o.chunk, t, o.spanning_above);
        let summary: Vec<String> = passes
            .iter()
            .map(|p| format!("{}: {}→{}", p.words, p.candidates, p.repeated))
            .collect();
        Ok(Found {
            notes: vec![format!(
                "spex passes (window words: windows hashed → seen more than once): {}",
                summary.join(", ")
            )],
            ..Found::collected(kept, candidates)
        })
    }

    /// S3 over all the chunks of each document, kept or not.
    fn scorer<'a>(&self, docs: &Docs<'a>, o: &'a Options) -> Result<Scorer<'a>> {
        let chunks: Vec<Vec<u64>> = (0..docs.len() as u32)
            .into_par_iter()
            .map(|d| {
                docs.record(d)
                    .map(|r| chunks(r.field(0), o.chunk))
                    .unwrap_or_default()
            })
            .collect();
        Ok(Box::new(move |a, b| {
            Some(s3(&chunks[a as usize], &chunks[b as usize]))
        }))
    }

    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        let score = c.spex.score;
        (score, score + 1e-9 >= self.default_threshold())
    }
}

/// The distinct chunks of a document (sorted chunk hashes).
pub fn chunks(words: &[u64], chunk: usize) -> Vec<u64> {
    shingles(words, chunk)
}

/// The S3 score of two chunk sets.
///
/// # Example
/// ```
/// use pocketdex_methods::spex::{chunks, s3};
/// use pocketdex_methods::shingles::word_hashes;
/// let a = word_hashes(&"one two three four five six seven eight nine ten".split(' ').collect::<Vec<_>>());
/// let mut b = a.clone();
/// b[9] = 0; // the last word differs: chunks 1–2 of 3 are shared
/// assert!((s3(&chunks(&a, 8), &chunks(&b, 8)) - 2.0 / 3.0).abs() < 1e-12);
/// ```
pub fn s3(a: &[u64], b: &[u64]) -> f64 {
    super::shingles::dice_of(super::shingles::overlap(a, b), a.len(), b.len())
}

/// What one pass of iterative hashing did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pass {
    /// Window length in words.
    pub words: u32,
    /// Windows hashed (those whose two shorter windows repeated).
    pub candidates: u64,
    /// Windows the table saw more than once.
    pub repeated: u64,
}

/// The chunks spex keeps, per document.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Per document: the kept chunk hashes, sorted and deduplicated.
    pub kept: Vec<Vec<u64>>,
    /// Per document: the number of distinct chunks, kept or not.
    pub sizes: Vec<u32>,
    /// One entry per pass.
    pub passes: Vec<Pass>,
}

/// A table of two bits per slot, seen and seen again, side by side in one word so that both
/// live in one cache line.
struct Table {
    cells: Vec<AtomicU64>,
    shift: u32,
}

impl Table {
    /// A table with at least 8 slots per expected insertion (32 slots per word).
    fn new(insertions: u64) -> Table {
        let slots = (insertions.max(1) * 8).next_power_of_two().max(32);
        Table {
            cells: (0..slots / 32).map(|_| AtomicU64::new(0)).collect(),
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// The word and the "seen" bit of a hash's slot (its "again" bit is the next one up).
    #[inline]
    fn slot(&self, h: u64) -> (usize, u64) {
        let s = h >> self.shift;
        ((s / 32) as usize, 1u64 << (2 * (s % 32)))
    }

    #[inline]
    fn insert(&self, h: u64) {
        let (w, seen) = self.slot(h);
        let cell = &self.cells[w];
        if cell.load(Ordering::Relaxed) & (seen << 1) != 0 {
            return;
        }
        if cell.fetch_or(seen, Ordering::Relaxed) & seen != 0 {
            cell.fetch_or(seen << 1, Ordering::Relaxed);
        }
    }

    #[inline]
    fn repeated(&self, h: u64) -> bool {
        let (w, seen) = self.slot(h);
        self.cells[w].load(Ordering::Relaxed) & (seen << 1) != 0
    }
}

/// The positions of the set bits of one word, in increasing order.
fn bits(mut w: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (w != 0).then(|| {
            let i = w.trailing_zeros() as usize;
            w &= w - 1;
            i
        })
    })
}

/// The positions of the set bits of a bit set, in increasing order.
fn ones(set: &[u64]) -> impl Iterator<Item = usize> + '_ {
    set.iter()
        .enumerate()
        .flat_map(|(j, &w)| bits(w).map(move |i| j * 64 + i))
}

/// The hashes of the `k`-word windows of `words` at the set bits of `set` (window `base` + bit),
/// in `buf`. Computing a bit-set word's hashes before touching the table lets the table's cache
/// misses overlap.
fn window_hashes<'b>(
    words: &[u64],
    base: usize,
    set: u64,
    k: usize,
    buf: &'b mut [u64; 64],
) -> &'b [u64] {
    let mut n = 0;
    for i in bits(set) {
        buf[n] = shingle_hash(&words[base + i..base + i + k]);
        n += 1;
    }
    &buf[..n]
}

/// Selects the chunks of `chunk` words that occur more than once in the collection, by
/// iterative hashing (see the module docs). `docs[d]` is document d's word hashes.
pub fn select(docs: &[&[u64]], chunk: usize) -> Selection {
    let chunk = chunk.max(1);
    // Between passes a document keeps one bit per window (set: a candidate), not the windows'
    // hashes: 1 bit per word instead of 9 bytes, for the whole collection. In pass k, window i
    // is words[i..i + k] and bits at i ≥ the number of windows are always clear.
    let mut candidate: Vec<Vec<u64>> = docs
        .par_iter()
        .map(|w| {
            let mut set = vec![u64::MAX; w.len().div_ceil(64)];
            if w.len() % 64 != 0 {
                *set.last_mut().unwrap() = (1 << (w.len() % 64)) - 1;
            }
            set
        })
        .collect();
    let mut passes = Vec::with_capacity(chunk);
    for k in 1..=chunk {
        let candidates: u64 = candidate
            .par_iter()
            .map(|b| b.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            .sum();
        let table = Table::new(candidates);
        // A candidate's hash is recomputed from its k words, in both loops: the same value as
        // extending it one word per pass, and candidates are few after the first passes.
        docs.par_iter().zip(&candidate).for_each(|(w, b)| {
            let mut buf = [0; 64];
            for (j, &set) in b.iter().enumerate() {
                for &h in window_hashes(w, j * 64, set, k, &mut buf) {
                    table.insert(h);
                }
            }
        });
        let repeated: u64 = docs
            .par_iter()
            .zip(&mut candidate)
            .map(|(w, b)| {
                let (mut n, mut buf) = (0, [0; 64]);
                for (j, set) in b.iter_mut().enumerate() {
                    let hashes = window_hashes(w, j * 64, *set, k, &mut buf);
                    for (i, &h) in bits(*set).zip(hashes) {
                        if !table.repeated(h) {
                            *set &= !(1 << i);
                        }
                    }
                    n += set.count_ones() as u64;
                }
                n
            })
            .sum();
        passes.push(Pass {
            words: k as u32,
            candidates,
            repeated,
        });
        if k == chunk {
            break;
        }
        // Windows of k + 1 words: window i is a candidate when both k-word windows inside it
        // (i and i + 1) repeated. The last window's bit clears itself, as the bit past it is clear.
        candidate.par_iter_mut().for_each(|b| {
            for j in 0..b.len() {
                let next = b.get(j + 1).map_or(0, |&n| n << 63);
                b[j] &= (b[j] >> 1) | next;
            }
        });
    }
    let (kept, sizes): (Vec<Vec<u64>>, Vec<u32>) = docs
        .par_iter()
        .zip(candidate)
        .map(|(w, b)| {
            if w.len() < chunk {
                // One chunk of all the words (none for an empty document).
                let only: Vec<u64> = if w.is_empty() {
                    Vec::new()
                } else {
                    vec![shingle_hash(w)]
                };
                let n = only.len() as u32;
                return (only, n);
            }
            // All the chunk hashes of this one document, freed when it is done.
            let mut all: Vec<u64> = w.windows(chunk).map(shingle_hash).collect();
            let mut kept: Vec<u64> = ones(&b).map(|i| all[i]).collect();
            kept.sort_unstable();
            kept.dedup();
            all.sort_unstable();
            all.dedup();
            (kept, all.len() as u32)
        })
        .unzip();
    Selection {
        kept,
        sizes,
        passes,
    }
}

/// All pairs with S3 ≥ `t`, by spex selection and the inverted-index join; score = S3 (exact).
/// Returns the pairs (groups of more than `above` reduced as they come), the candidates
/// verified, and the selection's passes.
pub(crate) fn find(
    docs: &[&[u64]],
    chunk: usize,
    t: f64,
    above: usize,
) -> (Collected, u64, Vec<Pass>) {
    let sel = select(docs, chunk);
    let kept: Vec<&[u64]> = sel.kept.iter().map(|k| k.as_slice()).collect();
    let set_docs = index_sets(&kept, &sel.sizes);
    drop(sel.kept);
    let mut pairs = Collected::new(docs.len(), above);
    let candidates = self_join_by_block(&set_docs, Measure::Dice, t, |joined| {
        pairs.extend(
            joined
                .into_iter()
                .map(|j| j.into_pair(Measure::Dice, &sel.sizes)),
        )
    });
    (pairs, candidates, sel.passes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingles::{step, word_hashes};
    use crate::SHINGLE_SEED;

    fn words(s: &str) -> Vec<u64> {
        word_hashes(&s.split_whitespace().collect::<Vec<_>>())
    }

    /// The oracle: `select` as it was when it kept every window's hash and a `Vec<bool>` of
    /// candidates per document across the passes (before the memory rewrite).
    fn select_reference(docs: &[&[u64]], chunk: usize) -> Selection {
        struct State<'a> {
            words: &'a [u64],
            windows: Vec<u64>,
            candidate: Vec<bool>,
        }
        let chunk = chunk.max(1);
        let mut states: Vec<State<'_>> = docs
            .iter()
            .map(|w| State {
                words: w,
                windows: w.iter().map(|&x| step(SHINGLE_SEED, x)).collect(),
                candidate: vec![true; w.len()],
            })
            .collect();
        let mut passes = Vec::with_capacity(chunk);
        for k in 1..=chunk {
            let candidates: u64 = states
                .iter()
                .map(|s| s.candidate.iter().filter(|&&c| c).count() as u64)
                .sum();
            let table = Table::new(candidates);
            for s in &states {
                for (h, _) in s.windows.iter().zip(&s.candidate).filter(|(_, &c)| c) {
                    table.insert(*h);
                }
            }
            let mut repeated = 0;
            for s in &mut states {
                for (h, c) in s.windows.iter().zip(s.candidate.iter_mut()) {
                    *c = *c && table.repeated(*h);
                    repeated += *c as u64;
                }
            }
            passes.push(Pass {
                words: k as u32,
                candidates,
                repeated,
            });
            if k == chunk {
                break;
            }
            for s in &mut states {
                let m = s.windows.len().saturating_sub(1);
                for i in 0..m {
                    s.windows[i] = step(s.windows[i], s.words[i + k]);
                    s.candidate[i] = s.candidate[i] && s.candidate[i + 1];
                }
                s.windows.truncate(m);
                s.candidate.truncate(m);
            }
        }
        let (kept, sizes) = states
            .into_iter()
            .map(|s| {
                if s.words.len() < chunk {
                    let only: Vec<u64> = if s.words.is_empty() {
                        Vec::new()
                    } else {
                        vec![shingle_hash(s.words)]
                    };
                    let n = only.len() as u32;
                    return (only, n);
                }
                let mut all = s.windows.clone();
                all.sort_unstable();
                all.dedup();
                let mut kept: Vec<u64> = s
                    .windows
                    .iter()
                    .zip(&s.candidate)
                    .filter(|(_, &c)| c)
                    .map(|(&h, _)| h)
                    .collect();
                kept.sort_unstable();
                kept.dedup();
                (kept, all.len() as u32)
            })
            .unzip();
        Selection {
            kept,
            sizes,
            passes,
        }
    }

    /// xorshift64: a small deterministic generator for the random collections.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn select_matches_the_reference_on_random_collections() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..400 {
            // A small vocabulary so that chunks repeat; sometimes tiny, to make long repeats.
            let vocab = [2, 3, 5, 20, 200][round % 5];
            let n = 1 + rng.below(40) as usize;
            let collection: Vec<Vec<u64>> = (0..n)
                .map(|_| {
                    let len = match rng.below(8) {
                        0 | 1 => rng.below(4),  // empty or shorter than most chunks
                        2 | 3 => rng.below(10), // around the chunk lengths
                        4 => rng.below(200),    // across 64-bit words of the candidate bits
                        _ => rng.below(61),
                    };
                    (0..len).map(|_| rng.below(vocab) * 0x1000_0001).collect()
                })
                .collect();
            let docs: Vec<&[u64]> = collection.iter().map(Vec::as_slice).collect();
            for chunk in [0, 1, 2, 3, 8] {
                let (got, want) = (select(&docs, chunk), select_reference(&docs, chunk));
                let at = format!("round {round}, chunk {chunk}");
                assert_eq!(got.passes, want.passes, "{at}: passes");
                assert_eq!(got.sizes, want.sizes, "{at}: sizes");
                assert_eq!(got.kept, want.kept, "{at}: kept");
            }
        }
    }

    #[test]
    fn keeps_exactly_the_repeated_chunks() {
        let a = words("a b c d e f g h i j k l");
        let b = words("x a b c d e f g h i y z");
        let c = words("unique words only here in this one document for sure");
        let sel = select(&[&a, &b, &c], 8);
        // "a … h" and "b … i" occur in a and b; a table collision may keep a few more.
        let shared = [shingle_hash(&a[0..8]), shingle_hash(&a[1..9])];
        for s in shared {
            assert!(sel.kept[0].contains(&s) && sel.kept[1].contains(&s));
        }
        assert_eq!(sel.sizes, [5, 5, 3]);
        assert_eq!(sel.passes.len(), 8);
        assert!(sel.passes[7].candidates < sel.passes[0].candidates);
        let (pairs, _, _) = find(&[&a, &b, &c], 8, 0.3, 100);
        let pairs = pairs.into_pairs();
        assert_eq!(pairs.len(), 1);
        assert!((pairs[0].score - 2.0 * 2.0 / 10.0).abs() < 1e-12);
    }
}
