//! Benchmarks of pocketdex on real text.
//!
//! Groups (criterion reports throughput for each):
//! - `fingerprint`: fingerprinting every document of the corpus, in bytes/s of text.
//! - `lookup`: `Index::lookup` of every code of every indexed document (`present`), and of as
//!   many random 64-bit keys that are no code (`absent`, the rejection path), in lookups/s.
//! - `query`: `Index::query` with the default options for every document's full text
//!   (fingerprint + multi-probe lookups + ranking), in queries/s.
//! - `build`: fingerprint + add + finish into a `Vec<u8>` for the whole corpus, in documents/s;
//!   `sequential` fingerprints on one thread, `parallel` fingerprints with rayon first as the CLI
//!   does. The index size per document is printed to stderr.
//! - `build_scale` (only when `POCKETDEX_BENCH_SCALE` is set): the sequential build of N
//!   synthetic documents (Zipf-distributed words over the vocabulary of `samples/wiki-en`, half
//!   of them from a per-document topic; 50–1000 words each; deterministic), in documents/s; the
//!   index bytes per document, in total and by section, are printed to stderr, to extrapolate to
//!   larger collections. `POCKETDEX_BENCH_SCALE` is one N or a comma-separated list.
//!
//! The corpus is the 300 Wikipedia lead sections in `samples/wiki-en/*.txt` (whole files, no
//! title), or the JSON Lines file (`{"id", "text", "title"?}` per line) that
//! `POCKETDEX_BENCH_CORPUS` names. Benchmark ids end in the corpus (`samples` or the file name),
//! e.g. `lookup/absent/wiki-en.jsonl`, so criterion compares runs on the same corpus only.
//!
//! Run from the repository root:
//!
//! ```sh
//! cargo bench --bench pocketdex                       # everything, about a minute
//! cargo bench --bench pocketdex -- --test             # compile and run each benchmark once
//! cargo bench --bench pocketdex -- lookup             # only the groups matching a filter
//! POCKETDEX_BENCH_CORPUS=data/dev/wiki-en.jsonl cargo bench --bench pocketdex
//! POCKETDEX_BENCH_SCALE=10000,100000 cargo bench --bench pocketdex -- build_scale
//! ```

mod common;

use common::{load_jsonl, load_samples, resolve, tag_of, Doc};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use pocketdex::{BuildStats, Index, IndexBuilder, Lang, Params, QueryOptions};
use pocketdex_eval::synth::Rng;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The documents and where they came from.
struct Corpus {
    /// Where the documents came from.
    label: String,
    /// The parameter of every benchmark id (`samples` or the JSON Lines file name), so that
    /// criterion compares a run only with earlier runs on the same corpus.
    tag: String,
    docs: Vec<Doc>,
}

impl Corpus {
    fn bytes(&self) -> u64 {
        self.docs.iter().map(|d| d.text.len() as u64).sum()
    }
}

fn load_corpus() -> Corpus {
    let corpus = match std::env::var("POCKETDEX_BENCH_CORPUS") {
        Ok(p) if !p.is_empty() => {
            let path = resolve(&p);
            Corpus {
                docs: load_jsonl(&path)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display())),
                tag: tag_of(&path),
                label: p,
            }
        }
        _ => Corpus {
            docs: load_samples(),
            label: "samples/wiki-en".into(),
            tag: "samples".into(),
        },
    };
    assert!(
        !corpus.docs.is_empty(),
        "the corpus {} is empty",
        corpus.label
    );
    eprintln!(
        "pocketdex bench: corpus {}: {} documents, {} bytes",
        corpus.label,
        corpus.docs.len(),
        corpus.bytes()
    );
    corpus
}

fn new_builder() -> IndexBuilder {
    IndexBuilder::for_lang(Lang::En, Params::default()).expect("default parameters are valid")
}

/// Sequential build: fingerprint and add each document, then finish into memory.
fn build_sequential(docs: &[Doc]) -> (Vec<u8>, BuildStats) {
    let mut builder = new_builder();
    for d in docs {
        builder.add(&d.id, d.title.as_deref(), &d.text);
    }
    let mut file = Vec::new();
    let stats = builder.finish(&mut file).expect("build into a Vec");
    (file, stats)
}

/// Parallel build: fingerprint all documents with rayon, add them in order, finish.
fn build_parallel(docs: &[Doc]) -> (Vec<u8>, BuildStats) {
    let mut builder = new_builder();
    let fingerprints: Vec<_> = {
        let f = builder.fingerprinter();
        docs.par_iter().map(|d| f.fingerprint(&d.text)).collect()
    };
    for (d, fp) in docs.iter().zip(fingerprints) {
        builder
            .add_fingerprint(&d.id, d.title.as_deref(), fp)
            .expect("made by the builder's fingerprinter");
    }
    let mut file = Vec::new();
    let stats = builder.finish(&mut file).expect("build into a Vec");
    (file, stats)
}

fn print_size(what: &str, stats: &BuildStats) {
    let docs = stats.docs.max(1) as f64;
    eprintln!(
        "pocketdex bench: {what}: {} docs, {} codes, {} refs, {} bytes = {:.1} bytes/doc \
         ({:.1} of them names)",
        stats.docs,
        stats.codes,
        stats.refs,
        stats.bytes,
        stats.bytes as f64 / docs,
        stats.name_bytes as f64 / docs,
    );
    let sections: Vec<String> = stats
        .sections
        .iter()
        .map(|(name, bytes)| format!("{name} {:.2}", *bytes as f64 / docs))
        .collect();
    eprintln!(
        "pocketdex bench: {what}: bytes/doc by section: {}",
        sections.join(", ")
    );
}

fn bench_fingerprint(c: &mut Criterion, corpus: &Corpus, index: &Index<Vec<u8>>) {
    let builder = new_builder();
    let analyse = builder.fingerprinter();
    let full = index.fingerprinter();
    let resolution = index.resolution();
    let mut group = c.benchmark_group("fingerprint");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(20);
    group.throughput(Throughput::Bytes(corpus.bytes()));
    // Terms and class counts only (what a build does before it has its idf table).
    group.bench_function(BenchmarkId::new("terms", &corpus.tag), |b| {
        b.iter(|| {
            for d in &corpus.docs {
                black_box(analyse.fingerprint(black_box(&d.text)));
            }
        })
    });
    // Terms, classes, samples and codes: what a document's index entry needs but its sketch.
    let codes_only = {
        let mut p = full.params().clone();
        p.sketch_words = 1;
        pocketdex::Fingerprinter::new(p, full.classes().clone(), full.analyzer().clone())
            .expect("valid")
            .with_idf(full.idf().expect("an index has idf").clone())
    };
    group.bench_function(BenchmarkId::new("codes", &corpus.tag), |b| {
        b.iter(|| {
            for d in &corpus.docs {
                let fp = codes_only.fingerprint(black_box(&d.text));
                black_box(codes_only.codes(&fp, resolution));
            }
        })
    });
    // Everything a build does per document: codes and the 192-bit sketch.
    group.bench_function(BenchmarkId::new("codes_and_sketch", &corpus.tag), |b| {
        b.iter(|| {
            for d in &corpus.docs {
                let fp = full.fingerprint(black_box(&d.text));
                black_box(full.codes(&fp, resolution));
            }
        })
    });
    group.finish();
}

/// `n` keys that are not in `present`: xxh3 of a counter.
fn absent_keys(present: &HashSet<u64>, n: usize) -> Vec<u64> {
    (0u64..)
        .map(|i| pocketdex::hash::h64(&i.to_le_bytes(), 0x706f_636b_6574))
        .filter(|k| !present.contains(k))
        .take(n)
        .collect()
}

fn bench_lookup(c: &mut Criterion, corpus: &Corpus, index: &Index<Vec<u8>>) {
    let f = index.fingerprinter();
    let present: Vec<u64> = corpus
        .docs
        .iter()
        .flat_map(|d| f.codes(&f.fingerprint(&d.text), index.resolution()))
        .map(|code| code.key)
        .collect();
    let missing = present
        .iter()
        .filter(|&&k| index.lookup(k).unwrap().is_none())
        .count();
    assert_eq!(
        missing, 0,
        "{missing} codes of indexed documents were not found"
    );
    let absent = absent_keys(&present.iter().copied().collect(), present.len());
    let accepted = absent
        .iter()
        .filter(|&&k| index.lookup(k).unwrap().is_some())
        .count();
    eprintln!(
        "pocketdex bench: lookup: {} codes of {} documents; {accepted} of {} absent keys \
         accepted (false positives)",
        present.len(),
        corpus.docs.len(),
        absent.len()
    );

    let mut group = c.benchmark_group("lookup");
    group.throughput(Throughput::Elements(present.len() as u64));
    for (name, keys) in [("present", &present), ("absent", &absent)] {
        group.bench_function(BenchmarkId::new(name, &corpus.tag), |b| {
            b.iter(|| {
                for &k in keys {
                    black_box(index.lookup(black_box(k)).unwrap());
                }
            })
        });
    }
    group.finish();
}

fn bench_query(c: &mut Criterion, corpus: &Corpus, index: &Index<Vec<u8>>) {
    let opts = QueryOptions::default();
    let found_self = corpus
        .docs
        .iter()
        .enumerate()
        .filter(|(i, d)| {
            index
                .query(&d.text, &opts)
                .unwrap()
                .hits
                .iter()
                .any(|h| h.doc == *i as u32)
        })
        .count();
    eprintln!(
        "pocketdex bench: query: {found_self} of {} documents find themselves",
        corpus.docs.len()
    );

    let mut group = c.benchmark_group("query");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.throughput(Throughput::Elements(corpus.docs.len() as u64));
    for (name, opts) in [
        ("all_docs", opts),
        ("all_docs_similar", QueryOptions::similar()),
    ] {
        group.bench_function(BenchmarkId::new(name, &corpus.tag), |b| {
            b.iter(|| {
                for d in &corpus.docs {
                    black_box(index.query(black_box(&d.text), &opts).unwrap());
                }
            })
        });
    }
    group.finish();
}

fn bench_build(c: &mut Criterion, corpus: &Corpus) {
    let mut group = c.benchmark_group("build");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.throughput(Throughput::Elements(corpus.docs.len() as u64));
    group.bench_function(BenchmarkId::new("sequential", &corpus.tag), |b| {
        b.iter(|| black_box(build_sequential(&corpus.docs)))
    });
    group.bench_function(BenchmarkId::new("parallel", &corpus.tag), |b| {
        b.iter(|| black_box(build_parallel(&corpus.docs)))
    });
    group.finish();
}

/// Words of `samples/wiki-en`, most frequent first, and a table mapping 20 random bits to a
/// word rank with Zipf's law (exponent 1).
struct Zipf {
    words: Vec<String>,
    table: Vec<u32>,
}

impl Zipf {
    const TABLE_BITS: u32 = 20;

    fn from_samples() -> Zipf {
        let mut counts: HashMap<String, u64> = HashMap::new();
        for d in load_samples() {
            for w in d.text.split(|c: char| !c.is_alphanumeric()) {
                if !w.is_empty() {
                    *counts.entry(w.to_lowercase()).or_default() += 1;
                }
            }
        }
        let mut ranked: Vec<(String, u64)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let words: Vec<String> = ranked.into_iter().map(|(w, _)| w).collect();
        // Inverse CDF of p(r) ∝ 1 / r, sampled at the middle of 2^TABLE_BITS equal steps.
        let total: f64 = (1..=words.len()).map(|r| 1.0 / r as f64).sum();
        let size = 1usize << Self::TABLE_BITS;
        let mut table = Vec::with_capacity(size);
        let (mut rank, mut cdf) = (0usize, 1.0 / total);
        for j in 0..size {
            let q = (j as f64 + 0.5) / size as f64;
            while cdf < q && rank + 1 < words.len() {
                rank += 1;
                cdf += 1.0 / (rank + 1) as f64 / total;
            }
            table.push(rank as u32);
        }
        Zipf { words, table }
    }

    /// Synthetic document `i` (50–1000 words) into `out`; the same `i` gives the same text.
    ///
    /// Every word is drawn by Zipf's law; half of them over the vocabulary's own ranks (the
    /// language), half over the ranks rotated by a per-document offset (its topic), so that
    /// documents differ in their word distributions as real ones do: with one shared
    /// distribution, all documents would look alike to the fingerprints and share their codes.
    fn document(&self, i: u64, out: &mut String) {
        let mut rng = Rng::new(i.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x5EED);
        let len = 50 + rng.next_u64() % 951;
        let vocabulary = self.words.len();
        let topic = rng.next_u64() as usize % vocabulary;
        out.clear();
        for _ in 0..len {
            let x = rng.next_u64();
            let mut r = self.table[(x >> (64 - Self::TABLE_BITS)) as usize] as usize;
            if x & 1 == 1 {
                r = (r + topic) % vocabulary;
            }
            out.push_str(&self.words[r]);
            out.push(' ');
        }
    }
}

fn build_synthetic(zipf: &Zipf, n: u64) -> BuildStats {
    let mut builder = new_builder();
    let mut text = String::new();
    for i in 0..n {
        zipf.document(i, &mut text);
        builder.add(&format!("synthetic/{i:07}"), None, &text);
    }
    let mut file = Vec::new();
    builder.finish(&mut file).expect("build into a Vec")
}

/// `POCKETDEX_BENCH_SCALE=N` or `N1,N2,…`; nothing when unset.
fn scale_sizes() -> Vec<u64> {
    let Ok(raw) = std::env::var("POCKETDEX_BENCH_SCALE") else {
        return Vec::new();
    };
    raw.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim()
                .parse()
                .unwrap_or_else(|_| panic!("POCKETDEX_BENCH_SCALE: {s:?} is not a number"))
        })
        .collect()
}

fn bench_build_scale(c: &mut Criterion) {
    let sizes = scale_sizes();
    if sizes.is_empty() {
        return;
    }
    let zipf = Zipf::from_samples();
    eprintln!(
        "pocketdex bench: build_scale: Zipf vocabulary of {} words",
        zipf.words.len()
    );
    let mut group = c.benchmark_group("build_scale");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(1));
    for n in sizes {
        // Text generation alone, which the build time below includes.
        let start = Instant::now();
        let (mut text, mut bytes) = (String::new(), 0u64);
        for i in 0..n {
            zipf.document(i, &mut text);
            bytes += text.len() as u64;
        }
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "pocketdex bench: build_scale/{n}: {bytes} bytes of text ({:.0} bytes/doc); \
             generating it alone takes {secs:.3} s ({:.0} docs/s)",
            bytes as f64 / n.max(1) as f64,
            n as f64 / secs
        );
        let mut stats = None;
        group.throughput(Throughput::Elements(n));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| stats = Some(black_box(build_synthetic(&zipf, n))))
        });
        if let Some(stats) = stats {
            print_size(&format!("build_scale/{n}"), &stats);
        }
    }
    group.finish();
}

fn main() {
    let corpus = load_corpus();
    let (file, stats) = build_sequential(&corpus.docs);
    print_size(&format!("index of {}", corpus.label), &stats);
    let index = Index::open(file).expect("open the index just built");

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    bench_fingerprint(&mut c, &corpus, &index);
    bench_lookup(&mut c, &corpus, &index);
    bench_query(&mut c, &corpus, &index);
    bench_build(&mut c, &corpus);
    bench_build_scale(&mut c);
    c.final_summary();
}
