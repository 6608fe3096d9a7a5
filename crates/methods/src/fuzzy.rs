//! The fuzzy-fingerprint index as an all-pairs method: every document goes into an in-memory
//! pocketdex index ([`IndexBuilder`] → [`Index`]), and every document queries it through the
//! library's one query path ([`Index::query_fingerprint`]). Pairs found in either direction are candidates; the
//! index's simhash sketches (tf-idf weighted) estimate their cosine, and each is verified with
//! the exact tf-idf cosine of the two documents in the collection ([`DocFreq`]), the measure of
//! the evaluation oracle.

use super::compare::Comparison;
use super::cosine::{merge_sum, shared_weight, DocFreq, IdfTable, TermVector};
use super::groups::Collected;
use super::{
    Described, Describer, Docs, Evidence, Found, Info, Method, Options, Pair, Record, Scorer,
};
use bytemuck::cast_slice;
use pocketdex::error::{Error, Result};
use pocketdex::fingerprint::{Fingerprint, Material, Weighed};
use pocketdex::sketch::Idf;
use pocketdex::{Fingerprinter, Index, IndexBuilder, Lang, Params, QueryFingerprint, QueryOptions};
use rayon::prelude::*;

/// How far below the threshold the sketch estimate may be for a pair to be verified. The
/// sketch's estimate of the tf-idf cosine has a standard error of about 0.06 near 0.8 (and its
/// idf is learned from a sample); 0.25 keeps nearly every pair the codes find.
pub const SLACK: f64 = 0.25;

/// What the method keeps of one document, read from its record: its class counts and its terms
/// in a compact form (hashes and counts side by side, 24 bytes a term), from which its
/// fingerprint is rebuilt for the index and for its query, and which verify a pair without
/// making a term vector. The terms are sorted by the low 64 bits of their hash (the key of the
/// verifying cosine), with each fingerprint term's rank in that order to rebuild the
/// fingerprint's own order (its sketch sums weights in that order).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kept<'a> {
    /// terms, 1 when `exact` holds a value, exact, maker, 1 when no two terms share their low
    /// 64 bits (so the sorted terms are the term vector as they are).
    header: &'a [u64],
    class_counts: &'a [u32],
    /// 128-bit term hashes as (low, high) words, ascending.
    hashes: &'a [[u64; 2]],
    counts: &'a [u32],
    /// Per term of the fingerprint, in its order: its position in `hashes`.
    rank: &'a [u32],
}

impl<'a> Kept<'a> {
    /// The record of an (unweighed) fingerprint, and its identity.
    pub fn describe(fingerprint: &Fingerprint) -> Described {
        let mut order: Vec<u32> = (0..fingerprint.term_hashes.len() as u32).collect();
        let key = |i: &u32| {
            let h = fingerprint.term_hashes[*i as usize].0;
            (h as u64, (h >> 64) as u64)
        };
        order.sort_unstable_by_key(key);
        let mut rank = vec![0u32; order.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let (hashes, counts): (Vec<[u64; 2]>, Vec<u32>) = order
            .iter()
            .map(|&i| {
                let (h, c) = fingerprint.term_hashes[i as usize];
                ([h as u64, (h >> 64) as u64], c)
            })
            .unzip();
        let unique = hashes.windows(2).all(|w| w[0][0] != w[1][0]);
        let header = [
            fingerprint.terms as u64,
            fingerprint.exact.is_some() as u64,
            fingerprint.exact.unwrap_or(0),
            fingerprint.maker,
            unique as u64,
        ];
        let mut sorted = fingerprint.term_hashes.clone();
        sorted.sort_unstable();
        let identity = Described::identity_of(
            sorted
                .iter()
                .flat_map(|&(h, c)| [h as u64, (h >> 64) as u64, c as u64]),
        );
        Described::new(
            &[
                cast_slice(&header),
                cast_slice(&fingerprint.class_counts),
                cast_slice(&hashes),
                cast_slice(&counts),
                cast_slice(&rank),
            ],
            identity,
        )
    }

    /// The document as its record holds it.
    pub fn of(r: Record<'a>) -> Kept<'a> {
        Kept {
            header: r.field(0),
            class_counts: r.field(1),
            hashes: r.field(2),
            counts: r.field(3),
            rank: r.field(4),
        }
    }

    /// The (unweighed) fingerprint, its terms in their first order.
    pub fn fingerprint(&self) -> Fingerprint {
        let term = |r: u32| {
            let [lo, hi] = self.hashes[r as usize];
            (lo as u128 | (hi as u128) << 64, self.counts[r as usize])
        };
        Fingerprint {
            terms: self.header[0] as u32,
            class_counts: self.class_counts.to_vec(),
            term_hashes: self.rank.iter().map(|&r| term(r)).collect(),
            exact: (self.header[1] == 1).then_some(self.header[2]),
            weighed: None,
            maker: self.header[3],
        }
    }

    /// Bytes of the record.
    fn bytes(&self) -> u64 {
        (8 * self.header.len() + 4 * self.class_counts.len() + 24 * self.counts.len()) as u64
    }

    /// The term-frequency vector (keyed by the low 64 bits of the term hashes).
    pub fn tf(&self) -> TermVector {
        TermVector::from_counts(
            self.hashes
                .iter()
                .zip(self.counts)
                .map(|(&[lo, _], &c)| (lo, c)),
        )
    }

    /// The term vector as the record holds it, when that is [`Kept::tf`] already (no two terms
    /// share their low 64 bits): keys and counts, ascending.
    fn sorted_tf(&self) -> Option<(&'a [[u64; 2]], &'a [u32])> {
        (self.header[4] == 1).then_some((self.hashes, self.counts))
    }
}

/// The parameters of the in-memory index, and so of the fingerprints that go into it. Pairs at
/// the method's thresholds (0.8 by default) are near copies: the probes of [`find`] look up no
/// similar-path codes, so the index leaves them out.
fn params() -> Params {
    Params {
        similar_bands: 0,
        ..Params::default()
    }
}

/// One document.
pub(crate) struct Doc<'a> {
    pub kept: Kept<'a>,
}

/// All pairs the index finds. With `tfidf` (the collection's tf-idf, for verifying):
/// candidates with estimate ≥ t − [`SLACK`], kept when the tf-idf cosine reaches `t`; without:
/// pairs with estimate ≥ t, score = estimate. Returns the pairs (groups of more than `above`
/// reduced as they are verified) and the candidates.
pub(crate) fn find(
    docs: &[Doc<'_>],
    lang: Lang,
    tfidf: Option<&TfIdf>,
    t: f64,
    block_bytes: u64,
    above: usize,
    run_entries: usize,
) -> Result<Found> {
    let verify = tfidf.is_some();
    let mut kept = Collected::new(docs.len(), above);
    if docs.len() < 2 {
        return Ok(Found::collected(kept, 0));
    }
    let mut builder = IndexBuilder::for_lang(lang, params())?;
    builder.size_hint(docs.len() as u64);
    // Until the builder has learned its idf (from the first documents) it weighs them itself;
    // after that, a chunk of documents is weighed on all cores before it is added.
    let mut next = 0;
    while next < docs.len() {
        let Some(f) = builder.weighing_fingerprinter() else {
            builder.add_fingerprint(&next.to_string(), None, docs[next].kept.fingerprint())?;
            next += 1;
            continue;
        };
        let end = (next + WEIGH_CHUNK).min(docs.len());
        let weighed: Vec<Fingerprint> = (next..end)
            .into_par_iter()
            .map(|d| {
                let mut fp = docs[d].kept.fingerprint();
                f.weigh(&mut fp);
                fp
            })
            .collect();
        for (d, fp) in (next..end).zip(weighed) {
            builder.add_fingerprint(&d.to_string(), None, fp)?;
        }
        next = end;
    }
    let mut bytes = Vec::new();
    builder.finish(&mut bytes)?;
    let index = Index::open(bytes)?;
    let floor = if verify { t - SLACK } else { t };
    // Every document is a query on the library's one query path: its probes, their postings,
    // and the candidates whose sketches estimate a similarity of at least `floor` (less a
    // rounding margin, as the estimate is an f32).
    let opts = QueryOptions {
        top: usize::MAX,
        threshold: (floor - 1e-6) as f32,
        ..QueryOptions::default()
    };
    let idf = index.fingerprinter().idf().map_or(0, Idf::id);
    // Documents in blocks of at most `block_bytes` of features, and the candidates verified one
    // pair of blocks at a time: when the features were spilled to a file, each block is read
    // from it once per block it is paired with instead of once per candidate (2 million
    // documents' candidates, 11 million, read at random thrash a page cache smaller than the
    // file). In one block, this is the order of (a, b).
    let mut block = Vec::with_capacity(docs.len());
    let (mut at, mut bytes) = (0u32, 0u64);
    for d in docs {
        let size = d.kept.bytes();
        if bytes > 0 && bytes + size > block_bytes {
            at += 1;
            bytes = 0;
        }
        bytes += size;
        block.push(at);
    }
    let order = |c: &Candidate| {
        (
            block[c.0 as usize],
            block[c.1 as usize],
            c.0,
            c.1,
            // Found from both ends: the larger number of colliding groups first (and the
            // larger estimate, though both ends estimate alike), the one kept.
            std::cmp::Reverse(c.2),
            std::cmp::Reverse(c.3.to_bits()),
        )
    };
    // (a, b, colliding code groups, estimate) with a < b, found from either end, in sorted runs
    // of at most `run_entries` (spilled to temporary files beyond one), so that the candidates
    // are never all held: m near-identical documents find m² of them. Each query's hits go to
    // the runs as soon as it is made.
    let runs = std::sync::Mutex::new(Runs::new(run_entries));
    (0..docs.len())
        .into_par_iter()
        .try_for_each(|a| -> Result<()> {
            // The document's sketch is in the index already: handed over as weighed with the
            // index's idf, the query path uses it instead of drawing it again.
            let mut fp = docs[a].kept.fingerprint();
            fp.weighed = Some(Weighed {
                idf,
                material: Material::default(),
                sketch: index.sketch(a as u32)?.unwrap_or_default(),
            });
            let r = index.query_fingerprint(&QueryFingerprint::from(fp), &opts)?;
            let a = a as u32;
            let hits: Vec<Candidate> = r
                .hits
                .into_iter()
                .filter(|h| h.doc != a)
                .map(|h| (a.min(h.doc), a.max(h.doc), h.codes as u32, h.score))
                .collect();
            // Most documents find only themselves: no lock for them.
            if hits.is_empty() {
                return Ok(());
            }
            runs.lock().expect("no query panicked").add(hits, &order)
        })?;
    let runs = runs.into_inner().expect("no query panicked");
    let mut candidates = 0u64;
    let mut batch: Vec<Candidate> = Vec::new();
    let mut verify_batch = |batch: &mut Vec<Candidate>| {
        // In parallel; each run of one first document makes its term vector once.
        let pairs: Vec<Pair> = batch
            .par_chunk_by(|p, q| p.0 == q.0)
            .flat_map_iter(|run| {
                let a = run[0].0;
                let ka = docs[a as usize].kept;
                // The first document's term vector and idf weights, made once for its run.
                let tf_a = tfidf.map(|w| Verifier::new(w, &ka, a));
                run.iter().filter_map(move |&(_, b, groups, est)| {
                    let est = est as f64;
                    let score = match &tf_a {
                        Some(v) => v.cosine(&docs[b as usize].kept, b),
                        None => est,
                    };
                    (score + 1e-9 >= t).then_some(Pair {
                        a,
                        b,
                        score,
                        estimate: Some(est),
                        evidence: Evidence::Codes { groups },
                    })
                })
            })
            .collect();
        kept.extend(pairs);
        batch.clear();
    };
    runs.merged(&order, |c| {
        candidates += 1;
        // One pair of blocks at a time, at most a million candidates.
        if let Some(last) = batch.last() {
            let pair_of = |c: &Candidate| (block[c.0 as usize], block[c.1 as usize]);
            if pair_of(last) != pair_of(&c) || batch.len() >= super::pairs::BLOCK_PAIRS as usize {
                verify_batch(&mut batch);
            }
        }
        batch.push(c);
    })?;
    verify_batch(&mut batch);
    Ok(Found::collected(kept, candidates))
}

/// A candidate pair as the index found it: a < b, colliding code groups, the estimate.
type Candidate = (u32, u32, u32, f32);

/// Bytes of a spilled [`Candidate`], little-endian.
const CANDIDATE_BYTES: usize = 16;

/// Candidates in sorted runs, each deduplicated by (a, b) keeping the first in the order: the
/// current run in memory, earlier ones in temporary files without a name in TMPDIR
/// (`tempfile::tempfile`: the system removes them when they are closed, the process killed
/// included). At most [`MAX_RUN_FILES`] files: more are merged into one first, so a merge
/// never opens more.
struct Runs {
    run_entries: usize,
    current: Vec<Candidate>,
    /// The runs written, each read from its start.
    spilled: Vec<std::fs::File>,
}

/// A run file that cannot be made, written or read: where, and what to do.
fn spill_error(e: std::io::Error) -> Error {
    super::store::temp_file_error("candidate pairs", true, e)
}

/// Run files merged at once, at most (each read through a 64 KiB buffer).
const MAX_RUN_FILES: usize = 64;

impl Runs {
    fn new(run_entries: usize) -> Runs {
        Runs {
            run_entries: run_entries.max(1),
            current: Vec::new(),
            spilled: Vec::new(),
        }
    }

    /// Sorts `run` by `order` and drops all but the first of each (a, b).
    fn sort<K: Ord>(run: &mut Vec<Candidate>, order: &impl Fn(&Candidate) -> K) {
        // Not rayon's sort: a spill runs under the lock of the queries' tasks, and a thread
        // waiting in a parallel sort could take up one of them, which would wait for the lock.
        run.sort_unstable_by_key(order);
        run.dedup_by_key(|c| (c.0, c.1));
    }

    fn add<K: Ord>(
        &mut self,
        found: impl IntoIterator<Item = Candidate>,
        order: &impl Fn(&Candidate) -> K,
    ) -> Result<()> {
        for c in found {
            if self.current.len() == self.current.capacity() {
                // Grown by doubling up to a run exactly, not past it.
                let want = (2 * self.current.capacity())
                    .max(1024)
                    .min(self.run_entries);
                self.current.reserve_exact(want - self.current.len());
            }
            self.current.push(c);
            if self.current.len() >= self.run_entries {
                self.spill(order)?;
            }
        }
        Ok(())
    }

    /// A new run file.
    fn new_file() -> Result<std::io::BufWriter<std::fs::File>> {
        let file = tempfile::tempfile().map_err(spill_error)?;
        Ok(std::io::BufWriter::with_capacity(1 << 16, file))
    }

    /// Writes the current run to a file of its own; at [`MAX_RUN_FILES`] files, merges them
    /// into one.
    fn spill<K: Ord>(&mut self, order: &impl Fn(&Candidate) -> K) -> Result<()> {
        Self::sort(&mut self.current, order);
        let mut w = Self::new_file()?;
        for c in self.current.drain(..) {
            write_candidate(&mut w, c)?;
        }
        self.spilled.push(finish(w)?);
        if self.spilled.len() >= MAX_RUN_FILES {
            // Merged into the new file, the old ones are closed: their space goes back now.
            let merging = std::mem::take(&mut self.spilled);
            let mut w = Self::new_file()?;
            merge_files(merging, Vec::new(), order, |c| write_candidate(&mut w, c))?;
            self.spilled.push(finish(w)?);
        }
        Ok(())
    }

    /// Every candidate once, in `order`, the first of each (a, b) across runs.
    fn merged<K: Ord>(
        mut self,
        order: &impl Fn(&Candidate) -> K,
        mut each: impl FnMut(Candidate),
    ) -> Result<()> {
        Self::sort(&mut self.current, order);
        if self.spilled.is_empty() {
            self.current.into_iter().for_each(each);
            return Ok(());
        }
        merge_files(self.spilled, self.current, order, |c| {
            each(c);
            Ok(())
        })
    }
}

/// Appends one candidate to a run file.
fn write_candidate(w: &mut std::io::BufWriter<std::fs::File>, c: Candidate) -> Result<()> {
    use std::io::Write;
    let mut e = [0u8; CANDIDATE_BYTES];
    e[..4].copy_from_slice(&c.0.to_le_bytes());
    e[4..8].copy_from_slice(&c.1.to_le_bytes());
    e[8..12].copy_from_slice(&c.2.to_le_bytes());
    e[12..].copy_from_slice(&c.3.to_le_bytes());
    w.write_all(&e).map_err(spill_error)
}

/// A run file written whole, to be read from its start.
fn finish(w: std::io::BufWriter<std::fs::File>) -> Result<std::fs::File> {
    use std::io::Seek;
    let mut f = w.into_inner().map_err(|e| spill_error(e.into_error()))?;
    f.rewind().map_err(spill_error)?;
    Ok(f)
}

/// The candidates of sorted, deduplicated run `files` and the sorted, deduplicated run
/// `memory`, merged in `order`, each (a, b) once (its first).
fn merge_files<K: Ord>(
    files: Vec<std::fs::File>,
    memory: Vec<Candidate>,
    order: &impl Fn(&Candidate) -> K,
    mut each: impl FnMut(Candidate) -> Result<()>,
) -> Result<()> {
    use std::io::{BufRead, Read};
    let mut readers: Vec<_> = files
        .into_iter()
        .map(|f| std::io::BufReader::with_capacity(1 << 16, f))
        .collect();
    let read = |r: &mut std::io::BufReader<std::fs::File>| -> Result<Option<Candidate>> {
        let at_end = r.fill_buf().map_err(spill_error)?.is_empty();
        if at_end {
            return Ok(None);
        }
        // A record cut short is an error, not the end: the file was written whole.
        let mut e = [0u8; CANDIDATE_BYTES];
        r.read_exact(&mut e).map_err(spill_error)?;
        Ok(Some((
            u32::from_le_bytes(e[..4].try_into().expect("4 bytes")),
            u32::from_le_bytes(e[4..8].try_into().expect("4 bytes")),
            u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
            f32::from_le_bytes(e[12..].try_into().expect("4 bytes")),
        )))
    };
    // The smallest head of every run (files, then the run in memory at index `files`):
    // ordered by `order`, then by run; the candidate's fields ride along.
    let head = |c: Candidate, run: usize| {
        std::cmp::Reverse((order(&c), run, (c.0, c.1, c.2, c.3.to_bits())))
    };
    let mut memory = memory.into_iter();
    let mut heap = std::collections::BinaryHeap::new();
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some(c) = read(r)? {
            heap.push(head(c, i));
        }
    }
    let from_memory = readers.len();
    if let Some(c) = memory.next() {
        heap.push(head(c, from_memory));
    }
    let mut last: Option<(u32, u32)> = None;
    while let Some(std::cmp::Reverse((_, i, (a, b, groups, est)))) = heap.pop() {
        if last != Some((a, b)) {
            last = Some((a, b));
            each((a, b, groups, f32::from_bits(est)))?;
        }
        let next = if i == from_memory {
            memory.next()
        } else {
            read(&mut readers[i])?
        };
        if let Some(c) = next {
            heap.push(head(c, i));
        }
    }
    Ok(())
}

/// One document's side of verifying its candidates: its term vector and the idf of each of its
/// terms, so that a candidate whose record holds its term vector as it is
/// ([`Kept::sorted_tf`]) is verified by one merge, without a lookup or an allocation.
struct Verifier<'w> {
    tfidf: &'w TfIdf,
    tf: TermVector,
    idf: Vec<f64>,
    doc: u32,
}

impl<'w> Verifier<'w> {
    fn new(tfidf: &'w TfIdf, kept: &Kept<'_>, doc: u32) -> Self {
        let tf = kept.tf();
        let idf = tf.terms().iter().map(|&(h, _)| tfidf.idf.idf(h)).collect();
        Verifier {
            tfidf,
            tf,
            idf,
            doc,
        }
    }

    /// [`TfIdf::cosine`] of this document and `b`, to the last bit: the same products of the
    /// same weights, summed in the same order ([`DocFreq::cosine`]).
    fn cosine(&self, kept: &Kept<'_>, b: u32) -> f64 {
        let Some((hashes, counts)) = kept.sorted_tf() else {
            return self.tfidf.cosine(&self.tf, self.doc, &kept.tf(), b);
        };
        let (na, nb) = (
            self.tfidf.norms[self.doc as usize],
            self.tfidf.norms[b as usize],
        );
        let a = self.tf.terms();
        let dot = merge_sum(
            (a.len(), |i| a[i].0),
            (hashes.len(), |j| hashes[j][0]),
            |i, j| shared_weight(a[i].1, counts[j], self.idf[i], na, nb),
        );
        dot.min(1.0)
    }
}

/// Documents weighed at once in [`find`] (their samples are held until they are added).
const WEIGH_CHUNK: usize = 1 << 13;

/// pocketdex's fuzzy-fingerprint index, queried with every document: candidates from colliding
/// codes, scored by the tf-idf cosine of content words.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fuzzy;

impl Method for Fuzzy {
    fn info(&self) -> &'static Info {
        &Info {
            name: "fuzzy",
            description: "pocketdex's fuzzy-fingerprint index, queried with every document",
            default_threshold: 0.8,
            estimates: true,
        }
    }

    fn measure(&self, o: &Options) -> String {
        format!("tf-idf cosine of content words{}", o.estimated())
    }

    /// The fingerprint, kept compactly, made by the fingerprinter of the index it goes into.
    fn describer(&self, o: &Options) -> Result<Describer> {
        let f = Fingerprinter::for_lang(o.lang, params())?;
        Ok(Box::new(move |text| {
            let fingerprint = f.fingerprint(text);
            if fingerprint.terms == 0 {
                return Err("no content words".into());
            }
            Ok(Kept::describe(&fingerprint))
        }))
    }

    fn find(&self, docs: &Docs<'_>, o: &Options, t: f64) -> Result<Found> {
        let tfidf = if o.verify {
            Some(TfIdf::new(docs, docs.reps())?)
        } else {
            None
        };
        let kept: Vec<Doc<'_>> = docs
            .reps_records()?
            .into_iter()
            .map(|r| Doc { kept: Kept::of(r) })
            .collect();
        // Spilled features are verified a block at a time (see `find`): a block's records take
        // at most a quarter of the memory limit, so that two of them stay in the page cache.
        let block = if docs.spilled() {
            (o.memory_limit / 4).max(1)
        } else {
            u64::MAX
        };
        // Candidates are sorted in runs of a quarter of the memory limit.
        let run = (o.memory_limit / 4 / CANDIDATE_BYTES as u64).max(1 << 16) as usize;
        find(
            &kept,
            o.lang,
            tfidf.as_ref(),
            t,
            block,
            o.spanning_above,
            run,
        )
    }

    fn scorer<'a>(&self, docs: &Docs<'a>, _: &'a Options) -> Result<Scorer<'a>> {
        let every: Vec<u32> = (0..docs.len() as u32).collect();
        let tfidf = TfIdf::new(docs, &every)?;
        // Every pair: each document's term vector made once.
        let tf: Vec<Option<TermVector>> = (0..docs.len() as u32)
            .into_par_iter()
            .map(|d| docs.record(d).map(|r| Kept::of(r).tf()))
            .collect();
        Ok(Box::new(move |a, b| {
            let (a, b) = (a as usize, b as usize);
            let (Some(ta), Some(tb)) = (&tf[a], &tf[b]) else {
                return Some(0.0);
            };
            Some(tfidf.cosine(ta, a as u32, tb, b as u32))
        }))
    }

    /// Two documents are no collection to learn idf from: `compare` shows the cosine of plain
    /// term frequencies.
    fn verdict(&self, c: &Comparison) -> (f64, bool) {
        (c.cosine, c.cosine + 1e-9 >= self.default_threshold())
    }
}

/// The collection's tf-idf as verifying needs it: document frequencies (every document, copies
/// too, as the collection has them) and the tf-idf norm of each document compared. A pair's
/// cosine is made from the two documents' terms when it is verified, so the collection's
/// weight vectors are never held at once (at 2 million documents they took 3 GB, and their
/// term vectors 3 GB more).
pub(crate) struct TfIdf {
    df: DocFreq,
    /// The same idf, by hash table.
    idf: IdfTable,
    /// Per document of `which` (by position): its tf-idf norm (0 for one set aside).
    norms: Vec<f64>,
}

impl TfIdf {
    fn new(docs: &Docs<'_>, which: &[u32]) -> Result<TfIdf> {
        let kept = |d: u32| docs.record(d).map(Kept::of);
        // A record's sorted terms are its term vector unless two share their low 64 bits.
        let df = DocFreq::from_docs(docs.len(), |d| match kept(d as u32) {
            None => Vec::new(),
            Some(k) => match k.sorted_tf() {
                Some((hashes, _)) => hashes.iter().map(|h| h[0]).collect(),
                None => k.tf().terms().iter().map(|&(h, _)| h).collect(),
            },
        });
        let idf = df.idf_table();
        let norms = which
            .par_iter()
            .map(|&d| match kept(d) {
                None => 0.0,
                Some(k) => match k.sorted_tf() {
                    Some((hashes, counts)) => {
                        idf.norm_of(hashes.iter().zip(counts).map(|(h, &c)| (h[0], c)))
                    }
                    None => idf.norm_of(k.tf().terms().iter().copied()),
                },
            })
            .collect();
        Ok(TfIdf { df, idf, norms })
    }

    /// The tf-idf cosine of documents `a` and `b` (positions in `which`) from their term
    /// vectors, exactly the dot of their normalised weight vectors.
    fn cosine(&self, tf_a: &TermVector, a: u32, tf_b: &TermVector, b: u32) -> f64 {
        let (na, nb) = (self.norms[a as usize], self.norms[b as usize]);
        self.df.cosine(tf_a, na, tf_b, nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs spilled to files (past the file limit too, so that files are merged into one) and
    /// merged keep, of each (a, b), the candidate with the most groups, in order: what one sort
    /// of every candidate keeps.
    #[test]
    fn runs_keep_the_best_of_each_pair() {
        let mut x = 0x5851_f42d_4c95_7f2du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Pairs among 40 documents, each found several times with other groups.
        let all: Vec<Candidate> = (0..3000)
            .map(|_| {
                let (a, b) = ((next() % 40) as u32, (next() % 40) as u32);
                let groups = (next() % 5) as u32;
                (a.min(b), a.max(b) + 1, groups, (a + b) as f32 / 100.0)
            })
            .collect();
        let block = |d: u32| d / 13;
        let order = |c: &Candidate| {
            (
                block(c.0),
                block(c.1),
                c.0,
                c.1,
                std::cmp::Reverse(c.2),
                std::cmp::Reverse(c.3.to_bits()),
            )
        };
        let mut want: Vec<Candidate> = all.clone();
        want.sort_by_key(|c| (c.0, c.1, std::cmp::Reverse(c.2)));
        want.dedup_by_key(|c| (c.0, c.1));
        want.sort_by_key(order);
        for run in [1, 2, 9, 40, 2999, 3000, usize::MAX] {
            let mut runs = Runs::new(run);
            for chunk in all.chunks(7) {
                runs.add(chunk.iter().copied(), &order).unwrap();
            }
            let files = runs.spilled.len();
            assert!(files < MAX_RUN_FILES, "{files} files");
            let mut got = Vec::new();
            runs.merged(&order, |c| got.push(c)).unwrap();
            assert_eq!(got, want, "runs of {run}");
        }
    }

    /// Candidates sorted in runs spilled to files (as few as one per run) and merged give the
    /// pairs, scores and candidate counts of one sort in memory, with and without verifying,
    /// in one block of features or many.
    #[test]
    fn spilled_runs_find_what_one_sort_finds() {
        let f = Fingerprinter::for_lang(Lang::En, params()).unwrap();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let vocab: Vec<String> = (0..600).map(|i| format!("w{}x{}", i * 7 % 13, i)).collect();
        // 30 originals of 70 words, each with 5 copies that have 1–6 words replaced.
        let mut texts = Vec::new();
        for _ in 0..30 {
            let base: Vec<&str> = (0..70)
                .map(|_| vocab[(next() % vocab.len() as u64) as usize].as_str())
                .collect();
            texts.push(base.join(" "));
            for c in 0..5 {
                let mut copy = base.clone();
                for _ in 0..=c {
                    copy[(next() % 70) as usize] = &vocab[(next() % vocab.len() as u64) as usize];
                }
                texts.push(copy.join(" "));
            }
        }
        let fps: Vec<Fingerprint> = texts.iter().map(|t| f.fingerprint(t)).collect();
        let described: Vec<Described> = fps.iter().map(Kept::describe).collect();
        let docs: Vec<Doc<'_>> = described
            .iter()
            .map(|d| Doc {
                kept: Kept::of(d.record()),
            })
            .collect();
        let tfs: Vec<TermVector> = docs.iter().map(|d| d.kept.tf()).collect();
        let df = DocFreq::new(&tfs, tfs.len());
        let norms = tfs.iter().map(|v| df.norm(v)).collect();
        let tfidf = TfIdf {
            idf: df.idf_table(),
            df,
            norms,
        };
        let sorted = |found: Found| {
            let mut p = found.pairs;
            p.sort_by_key(|p| (p.a, p.b));
            (p, found.candidates, found.found)
        };
        for verify in [None, Some(&tfidf)] {
            let one =
                sorted(find(&docs, Lang::En, verify, 0.8, u64::MAX, 100, usize::MAX).unwrap());
            assert!(one.0.len() >= 100, "{} pairs", one.0.len());
            for (run, block) in [(1, u64::MAX), (7, u64::MAX), (50, 2000), (usize::MAX, 2000)] {
                let got = sorted(find(&docs, Lang::En, verify, 0.8, block, 100, run).unwrap());
                assert_eq!(got, one, "runs of {run}, blocks of {block} bytes");
            }
        }
    }

    /// The verifier's merge gives the cosine of [`TfIdf::cosine`] to the last bit, and a record
    /// rebuilds the fingerprint it was made from, terms in their order.
    #[test]
    fn verifier_is_the_tfidf_cosine_to_the_bit() {
        let f = Fingerprinter::for_lang(Lang::En, params()).unwrap();
        let texts = [
            "The river flows north through the valley; the valley floods each spring.",
            "The river flows north through a valley that floods every spring and autumn.",
            "Spring floods in the valley: the river, flowing north, rises every year.",
            "Cheap flights to Paris, cheap hotels in Paris, and a river cruise.",
            "A river cruise in Paris after cheap flights; hotels near the river.",
        ];
        let fps: Vec<Fingerprint> = texts.iter().map(|t| f.fingerprint(t)).collect();
        let described: Vec<Described> = fps.iter().map(Kept::describe).collect();
        let kept: Vec<Kept<'_>> = described.iter().map(|d| Kept::of(d.record())).collect();
        for (k, fp) in kept.iter().zip(&fps) {
            let mut want = fp.clone();
            want.weighed = None;
            assert_eq!(k.fingerprint(), want);
            assert!(k.sorted_tf().is_some());
        }
        let tfs: Vec<TermVector> = kept.iter().map(Kept::tf).collect();
        let df = DocFreq::new(&tfs, tfs.len());
        let norms = tfs.iter().map(|v| df.norm(v)).collect();
        let idf = df.idf_table();
        for v in &tfs {
            for &(h, _) in v.terms() {
                assert_eq!(idf.idf(h).to_bits(), df.idf(h).to_bits());
            }
            assert_eq!(idf.norm_of(v.terms().iter().copied()), df.norm(v));
        }
        assert_eq!(idf.idf(12345).to_bits(), df.idf(12345).to_bits());
        let tfidf = TfIdf { df, idf, norms };
        let mut positive = 0;
        for a in 0..kept.len() {
            let v = Verifier::new(&tfidf, &kept[a], a as u32);
            for b in 0..kept.len() {
                let want = tfidf.cosine(&tfs[a], a as u32, &tfs[b], b as u32);
                assert_eq!(v.cosine(&kept[b], b as u32).to_bits(), want.to_bits());
                positive += usize::from(a != b && want > 0.1);
            }
        }
        assert!(positive >= 8, "{positive}");
    }
}
