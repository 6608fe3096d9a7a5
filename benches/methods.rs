//! Benchmarks of the classical near-duplicate methods, and an empirical check of the multi-trial
//! signature's detection probability.
//!
//! - `methods/<name>`: one whole run of a method over the corpus, as `pocketdex dups` does it
//!   after reading: every document prepared (in parallel) and all pairs found, in documents/s.
//!   Before the measurements, one timed run per method is printed to stderr with its pairs.
//! - `compare/two-documents`: one `compare` of the corpus's first two documents (what `pocketdex
//!   compare` and the server's `/v1/compare` compute: every method's measure and the fuzzy
//!   path's codes), per call.
//! - Before that, the trials check: for each overlap (Jaccard) p of the note's table, 1,000
//!   pairs of random n-gram sets with exactly that overlap get signatures (14 hashes × 6 trials);
//!   the share detected (≥ 2 trials agree) is printed beside the note's formula, and the run
//!   fails if any differs from it by more than four standard errors.
//!
//! - With `POCKETDEX_BENCH_WORST=FILE.jsonl`: the worst case the README reports, written to FILE
//!   (for `pocketdex dups FILE.jsonl`) and timed once per method: 7,700 documents of at least
//!   7,500 bytes, each a random concatenation of corpus documents (so that every chunk repeats
//!   many times across the collection), plus 2,300 copies with 5% of their words replaced by
//!   corpus words; deterministic.
//!
//! The corpus is `samples/wiki-en` (300 Wikipedia lead sections), or what
//! `POCKETDEX_BENCH_CORPUS` names (a directory, a file or a `.jsonl` file, read as
//! `pocketdex dups` reads INPUT).
//!
//! ```sh
//! cargo bench --bench methods                                   # everything
//! cargo bench --bench methods -- --test                         # each benchmark once
//! POCKETDEX_BENCH_CORPUS=data/dev/wiki-en.jsonl cargo bench --bench methods -- spex
//! POCKETDEX_BENCH_CORPUS=data/dev/wiki-en.jsonl POCKETDEX_BENCH_WORST=target/worst.jsonl \
//!     cargo bench --bench methods -- --test
//! ```

use criterion::{Criterion, SamplingMode, Throughput};
use pocketdex::corpus::{self, Item, Source};
use pocketdex_eval::synth::Rng;
use pocketdex_methods::compare::{compare, Input};
use pocketdex_methods::groups::group_pairs;
use pocketdex_methods::trials::{probability, signature, TrialParams};
use pocketdex_methods::{find_pairs, Options, ALL};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A path as given, or else relative to the crate root.
fn resolve(path: &str) -> PathBuf {
    let p = PathBuf::from(path);
    if p.is_absolute() || p.exists() {
        p
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
    }
}

/// The plain texts of the corpus and its label.
fn load_corpus() -> (String, Vec<String>) {
    let label = match std::env::var("POCKETDEX_BENCH_CORPUS") {
        Ok(p) if !p.is_empty() => p,
        _ => "samples/wiki-en".to_string(),
    };
    let path = resolve(&label);
    let source =
        Source::from_arg(&path).unwrap_or_else(|e| panic!("cannot read the corpus {label}: {e}"));
    let mut texts = Vec::new();
    corpus::for_each_batch(
        &[source],
        512,
        |item| item,
        |_| {},
        |batch| {
            texts.extend(batch.into_iter().filter_map(|i| match i {
                Item::Doc(d) => Some(d.text),
                Item::Skipped(_) => None,
            }));
            Ok(())
        },
    )
    .unwrap_or_else(|e| panic!("cannot read the corpus {label}: {e}"));
    assert!(!texts.is_empty(), "the corpus {label} is empty");
    (label, texts)
}

/// Detection rate of the multi-trial signature on pairs of known overlap, against the formula.
fn check_trials() {
    let params = TrialParams::default();
    let mut rng = Rng::new(2024);
    let (union, pairs) = (200usize, 1000usize);
    eprintln!(
        "pocketdex bench: trials ({} hashes × {} trials, ≥ {} agree), {pairs} pairs per overlap:",
        params.hashes, params.trials, params.agree
    );
    eprintln!("  overlap   formula   observed   ±4σ");
    let mut worst: f64 = 0.0;
    for pct in [100, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 85, 80] {
        // A = S ∪ X, B = S ∪ Y with |S| = s, |X| = |Y| = x: Jaccard s / (s + 2x).
        let s = (union * pct / 100).max(1);
        let x = (union - s) / 2;
        let jaccard = s as f64 / (s + 2 * x) as f64;
        let mut detected = 0;
        for _ in 0..pairs {
            let shared: Vec<u64> = (0..s).map(|_| rng.next_u64()).collect();
            let mut a: Vec<u64> = shared.clone();
            let mut b: Vec<u64> = shared;
            a.extend((0..x).map(|_| rng.next_u64()));
            b.extend((0..x).map(|_| rng.next_u64()));
            a.sort_unstable();
            b.sort_unstable();
            let (sa, sb) = (signature(&a, &params), signature(&b, &params));
            let agree = sa.iter().zip(&sb).filter(|(p, q)| p == q).count();
            detected += (agree >= params.agree) as usize;
        }
        let observed = detected as f64 / pairs as f64;
        let p = probability(jaccard, &params);
        let band = 4.0 * (p * (1.0 - p) / pairs as f64).sqrt() + 1.0 / pairs as f64;
        eprintln!(
            "  {:>6.1}%   {:>6.1}%   {:>7.1}%   {:.1}%",
            100.0 * jaccard,
            100.0 * p,
            100.0 * observed,
            100.0 * band
        );
        assert!(
            (observed - p).abs() <= band,
            "trials at overlap {jaccard}: observed {observed}, formula {p}"
        );
        worst = worst.max((observed - p).abs() / band);
    }
    eprintln!(
        "  every row within its band (worst at {:.0}% of it)",
        100.0 * worst
    );
}

/// The worst-case collection (see the module docs), deterministic for a given corpus.
fn worst_case(texts: &[String]) -> Vec<String> {
    let mut rng = Rng::new(7);
    let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
    let mut docs: Vec<String> = Vec::with_capacity(10_000);
    for _ in 0..7_700 {
        let mut d = String::new();
        while d.len() < 7_500 {
            if !d.is_empty() {
                d.push_str("\n\n");
            }
            d.push_str(&texts[pick(texts.len())]);
        }
        docs.push(d);
    }
    let vocabulary: Vec<&str> = texts
        .iter()
        .take(2_000)
        .flat_map(|t| t.split_whitespace())
        .collect();
    for i in 0..2_300 {
        let mut words: Vec<&str> = docs[(i * 3) % 7_700].split_whitespace().collect();
        for _ in 0..words.len() / 20 {
            let at = pick(words.len());
            words[at] = vocabulary[pick(vocabulary.len())];
        }
        let copy = words.join(" ");
        docs.push(copy);
    }
    docs
}

/// Writes the worst case as JSON Lines and times each method on it once.
fn run_worst_case(path: &str, texts: &[String]) {
    let docs = worst_case(texts);
    let bytes: usize = docs.iter().map(String::len).sum();
    let mut out = String::with_capacity(bytes + docs.len() * 32);
    for (i, d) in docs.iter().enumerate() {
        out.push_str(&serde_json::json!({"id": format!("w{i:05}"), "text": d}).to_string());
        out.push('\n');
    }
    std::fs::write(resolve(path), out).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    eprintln!(
        "pocketdex bench: worst case: {} documents, {bytes} bytes, written to {path}",
        docs.len()
    );
    let options = Options::default();
    let mut total = 0.0;
    for &m in ALL {
        let start = Instant::now();
        let out = find_pairs(m, &docs, &options).expect("default options are valid");
        let secs = start.elapsed().as_secs_f64();
        total += secs;
        eprintln!(
            "pocketdex bench: worst case {:<9} {:>6.2} s ({:>6.0} docs/s): {} pairs, {} candidates",
            m.name(),
            secs,
            docs.len() as f64 / secs,
            out.pairs.len(),
            out.stats.candidates
        );
    }
    eprintln!("pocketdex bench: worst case, all methods: {total:.1} s");
}

fn main() {
    check_trials();
    let (label, texts) = load_corpus();
    if let Ok(path) = std::env::var("POCKETDEX_BENCH_WORST") {
        if !path.is_empty() {
            run_worst_case(&path, &texts);
        }
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    eprintln!(
        "pocketdex bench: corpus {label}: {} documents, {bytes} bytes",
        texts.len()
    );
    let options = Options::default();
    for &m in ALL {
        let start = Instant::now();
        let out = find_pairs(m, &texts, &options).expect("default options are valid");
        let secs = start.elapsed().as_secs_f64();
        let groups = group_pairs(texts.len(), &out.pairs);
        eprintln!(
            "pocketdex bench: {:<9} {:>8.0} docs/s ({:.2} s): {} pairs, {} groups, {} set aside",
            m.name(),
            texts.len() as f64 / secs,
            secs,
            out.pairs.len(),
            groups.len(),
            out.set_aside.len()
        );
    }

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = c.benchmark_group("methods");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.throughput(Throughput::Elements(texts.len() as u64));
    for &m in ALL {
        group.bench_function(m.name(), |b| {
            b.iter(|| black_box(find_pairs(m, black_box(&texts), &options).expect("valid")))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("compare");
    group.throughput(Throughput::Elements(1));
    let (a, b) = (&texts[0], &texts[1 % texts.len()]);
    group.bench_function("two-documents", |bench| {
        bench.iter(|| {
            let (a, b) = (Input { raw: a, plain: a }, Input { raw: b, plain: b });
            black_box(compare(a, b, &options).expect("valid"))
        })
    });
    group.finish();
    c.final_summary();
}
