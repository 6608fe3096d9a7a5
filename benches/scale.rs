//! The scale benchmark: generated collections of 20,000, 200,000 and 2,000,000 documents
//! without near-duplicates (`pocketdex synth --generate`), nested (each the first N documents of
//! the largest), and edited copies of documents among their first 20,000 (all of the smallest,
//! when it is smaller) as queries; and, with
//! `--real`, the same on real text (Wikipedia leads and edited copies of them).
//!
//! Per size it reports: build time, peak memory and MB/s, with `wc -w` on the same file in the
//! same run; index bytes per document; posting-list lengths; candidates per query (mean, p50,
//! p99, max); query time in the library (one thread, p50/p99) and per document through the
//! CLI (all cores); recall of the originals per edit rate; and the resident memory of a process
//! that makes one query. A Markdown table goes to stdout, everything to `OUT/report.json`.
//!
//! ```sh
//! scripts/scale-bench.sh                       # the full run of the README (fetches wordfreq)
//! cargo bench --bench scale -- --test          # reduced: 2,000 and 20,000 documents (CI)
//! cargo bench --bench scale -- --docs 20000,200000 --vocab data/wordfreq/large_en.msgpack.gz
//! ```
//!
//! Options: `--docs N,N,…` (sizes), `--vocab FILE` (the vocabulary of `synth --generate`;
//! without it, the built-in pseudo-words), `--queries N` (about this many queries, default
//! 2,000), `--real` (add the Wikipedia run; needs `scripts/fetch-dev-data.sh`), `--out DIR`
//! (default `data/scale`: generated files are kept and reused), `--build-rounds R` (1: each
//! size's `wc -w` and build R times in turn; the table gives their medians, and the ratio of
//! the medians, the JSON every round), `--test` (sizes 2,000 and 20,000, 400 queries, output
//! under `target/scale-test`).
//! Timings are of a shared 2-core machine: compare numbers of one run, not across runs.

mod common;

use common::run::{head, run};
use pocketdex::{Index, QueryOptions};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_pocketdex");
/// Edit rates of the queries (0.4 leaves copies at cosine ~0.6–0.7, for `query --similar`).
const RATES: [f64; 5] = [0.01, 0.05, 0.1, 0.2, 0.4];
/// Queries are edited copies of documents among the first this many.
const QUERY_POOL: u64 = 20_000;

struct Options {
    docs: Vec<u64>,
    vocab: Option<PathBuf>,
    queries: u64,
    real: bool,
    out: PathBuf,
    build_rounds: usize,
}

fn options() -> Options {
    let mut o = Options {
        docs: vec![20_000, 200_000, 2_000_000],
        vocab: None,
        queries: 2_000,
        real: false,
        out: PathBuf::from("data/scale"),
        build_rounds: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--docs" => o.docs = common::run::sizes(&value()),
            "--vocab" => o.vocab = Some(PathBuf::from(value())),
            "--queries" => o.queries = value().parse().expect("--queries: a number"),
            "--real" => o.real = true,
            "--out" => o.out = PathBuf::from(value()),
            "--build-rounds" => {
                o.build_rounds = value().parse().expect("--build-rounds: a number");
                assert!(o.build_rounds > 0, "--build-rounds: at least 1");
            }
            "--test" => {
                o.docs = vec![2_000, 20_000];
                o.queries = 400;
                o.out = PathBuf::from("target/scale-test");
            }
            // cargo bench passes --bench; criterion-style filters are not used here.
            _ => {}
        }
    }
    o.docs.sort_unstable();
    o.docs.dedup();
    assert!(!o.docs.is_empty(), "--docs: at least one size");
    o
}

/// Drops a file's clean pages from the page cache (posix_fadvise DONTNEED), as if it had just
/// been copied from other media.
fn evict_from_page_cache(path: &Path) {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).expect("open index");
    file.sync_all().expect("sync index");
    // SAFETY: a valid open descriptor; offset 0, length 0 means the whole file.
    let r = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(r, 0, "posix_fadvise");
}

/// About `queries` edited copies of documents of `source` (which has `docs` documents), spread
/// evenly over [`RATES`], written to `to` (`pocketdex synth --copies-only`).
fn edited_copies(source: &Path, docs: u64, queries: u64, seed: u64, to: &Path) {
    let args = common::synth_copies(source, None, docs, queries, &RATES, seed, to);
    run(&mut pocketdex(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
}

fn rates_tag() -> String {
    RATES.map(|r| r.to_string()).join("_")
}

fn pocketdex(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
    c
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// One query: its text, the id of the document it is a copy of, and its edit rate.
struct Query {
    text: String,
    source: String,
    rate: f64,
}

fn read_queries(path: &Path) -> Vec<Query> {
    std::fs::read_to_string(path)
        .expect("queries")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("JSON");
            Query {
                text: v["text"].as_str().expect("text").to_string(),
                source: v["source"].as_str().expect("source").to_string(),
                rate: v["edits"]["rate"].as_f64().expect("rate"),
            }
        })
        .collect()
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The median of `v` (the upper one of an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Everything measured for one collection size; its `wc -w` and build `rounds` times in turn.
fn measure(
    label: &str,
    collection: &Path,
    queries_path: &Path,
    out: &Path,
    rounds: usize,
) -> Value {
    let bytes = std::fs::metadata(collection).expect("collection").len();
    // Read once untimed first: a `wc -w` that reads the file from disk (it may have left the
    // page cache while the other sizes ran) would flatter the build, which reads it cached.
    run(Command::new("wc").args(["-w", s(collection)]));
    let index = out.join(format!("{label}.pdx"));
    // The machine's speed moves by 5–10% from minute to minute: one round's ratio is known to
    // about ±0.05, the medians of a few rounds in turn better.
    let runs: Vec<_> = (0..rounds)
        .map(|_| {
            let wc = run(Command::new("wc").args(["-w", s(collection)]));
            let build = run(&mut pocketdex(&[
                "build",
                s(collection),
                "-o",
                s(&index),
                "-q",
            ]));
            (wc, build)
        })
        .collect();
    let wc_secs = median(runs.iter().map(|r| r.0.secs).collect());
    let build_secs = median(runs.iter().map(|r| r.1.secs).collect());
    let build_cpu_secs = median(runs.iter().map(|r| r.1.cpu_secs).collect());
    let build_peak_mb = runs.iter().map(|r| r.1.max_rss_mb).fold(0.0, f64::max);
    let build_rounds: Vec<Value> = runs
        .iter()
        .map(|(wc, b)| {
            json!({
                "wc_secs": wc.secs,
                "build_secs": b.secs,
                "build_cpu_secs": b.cpu_secs,
                "build_peak_mb": b.max_rss_mb,
            })
        })
        .collect();
    let info: Value =
        serde_json::from_slice(&run(&mut pocketdex(&["info", s(&index), "--json"])).stdout)
            .expect("info JSON");
    let docs = info["documents"].as_u64().unwrap_or(0);

    // The library, one thread: first passes warm the page cache, the next are measured.
    let file = std::fs::File::open(&index).expect("index");
    // SAFETY: the benchmark's own index file, not modified while mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("map");
    let idx = Index::open(map).expect("open");
    let queries = read_queries(queries_path);
    // A first pass in each mode maps the pages its candidates' sketches sit on (a --similar
    // query reads more of them), so that the measured passes do not count first-touch faults.
    for opts in [QueryOptions::default(), QueryOptions::similar()] {
        for q in &queries {
            std::hint::black_box(idx.query(&q.text, &opts).unwrap());
        }
    }
    let near = pass(&idx, &queries, &QueryOptions::default());
    let similar = pass(&idx, &queries, &QueryOptions::similar());
    let n = queries.len().max(1) as f64;

    // The CLI on all cores, and a process that makes one query.
    let cli = run(&mut pocketdex(&[
        "query",
        s(&index),
        s(queries_path),
        "--json",
    ]));
    let one = out.join(format!("{label}-one-query.txt"));
    std::fs::write(&one, &queries[0].text).expect("write");
    // Once with the file as the build left it in the page cache, once after dropping it from
    // there: a freshly written file is cached in large folios, and a fault maps a whole folio,
    // so the first number counts cached pages the query never read.
    let single = run(&mut pocketdex(&["query", s(&index), s(&one)]));
    drop(idx); // a mapped page cannot be dropped from the cache
    evict_from_page_cache(&index);
    let cold = run(&mut pocketdex(&["query", s(&index), s(&one)]));

    json!({
        "label": label,
        "documents": docs,
        "input_mb": bytes as f64 / 1e6,
        "wc_secs": wc_secs,
        "build_secs": build_secs,
        "build_cpu_secs": build_cpu_secs,
        "build_peak_mb": build_peak_mb,
        "build_mb_per_sec": bytes as f64 / 1e6 / build_secs,
        "build_speed_vs_wc": wc_secs / build_secs,
        "build_rounds": build_rounds,
        "index_mb": info["bytes"].as_f64().unwrap_or(0.0) / 1e6,
        "bytes_per_doc_beyond_names": info["bytes_per_document_beyond_names"],
        "resolution": info["resolution"],
        "lists": info["lists"],
        "queries": queries.len(),
        "lookups_mean": near["lookups_mean"],
        "candidates": near["candidates"],
        "library_query_us": near["library_query_us"],
        "cli_query_us_per_doc": cli.secs * 1e6 / n,
        "one_query_rss_mb": single.max_rss_mb,
        "one_query_cold_rss_mb": cold.max_rss_mb,
        "recall_by_rate": near["recall_by_rate"],
        "similar": similar,
    })
}

/// Queries the library with `opts`, one thread: time, candidates and lookups per query, and the
/// share of queries per edit rate whose hits include the document they were edited from.
fn pass<D: AsRef<[u8]>>(idx: &Index<D>, queries: &[Query], opts: &QueryOptions) -> Value {
    let (mut times, mut candidates, mut lookups) = (Vec::new(), Vec::new(), 0usize);
    let mut found: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for q in queries {
        let t = Instant::now();
        let r = idx.query(&q.text, opts).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e6);
        candidates.push(r.candidates as f64);
        lookups += r.lookups;
        let hit = r
            .hits
            .iter()
            .any(|h| idx.name(h.doc).unwrap().as_deref() == Some(q.source.as_str()));
        let e = found.entry(format!("{}", q.rate)).or_default();
        e.0 += hit as u64;
        e.1 += 1;
    }
    times.sort_by(f64::total_cmp);
    candidates.sort_by(f64::total_cmp);
    let n = queries.len().max(1) as f64;
    json!({
        "lookups_mean": lookups as f64 / n,
        "candidates": {
            "mean": candidates.iter().sum::<f64>() / n,
            "p50": quantile(&candidates, 0.5),
            "p99": quantile(&candidates, 0.99),
            "max": candidates.last().copied().unwrap_or(0.0),
        },
        "library_query_us": {"p50": quantile(&times, 0.5), "p99": quantile(&times, 0.99),
                             "mean": times.iter().sum::<f64>() / n},
        "recall_by_rate": found.iter().map(|(r, (h, t))| (r.clone(), json!(*h as f64 / *t as f64))).collect::<serde_json::Map<_, _>>(),
    })
}

/// A number with `d` decimals, or "-".
fn num(x: &Value, d: usize) -> String {
    x.as_f64().map_or("-".into(), |x| format!("{x:.d$}"))
}

/// The cells of one library pass ([`pass`]): candidates "mean / p50 / p99 / max", query time
/// "p50 / p99 µs", and recall by edit rate.
fn pass_cells(m: &Value) -> [String; 3] {
    let c = &m["candidates"];
    let t = &m["library_query_us"];
    let recall: Vec<String> = m["recall_by_rate"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(r, x)| format!("{r}: {}", num(x, 4)))
                .collect()
        })
        .unwrap_or_default();
    [
        format!(
            "{} / {} / {} / {}",
            num(&c["mean"], 1),
            num(&c["p50"], 0),
            num(&c["p99"], 0),
            num(&c["max"], 0)
        ),
        format!("{} / {} µs", num(&t["p50"], 1), num(&t["p99"], 1)),
        recall.join(", "),
    ]
}

/// The high-similarity row of a measurement: `query --similar` in the library.
fn similar_row(v: &Value) -> String {
    let m = &v["similar"];
    let [candidates, time, recall] = pass_cells(m);
    format!(
        "| {} | {} | {candidates} | {time} | {} | {recall} |",
        v["label"].as_str().unwrap_or(""),
        v["documents"],
        num(&m["lookups_mean"], 0),
    )
}

fn row(v: &Value) -> String {
    let [candidates, time, recall] = pass_cells(v);
    format!(
        "| {} | {} | {} s ({} MB/s, {}× `wc -w`), {} MB peak | {} | {candidates} | {time} | {} µs | {recall} | {} / {} MB |",
        v["label"].as_str().unwrap_or(""),
        v["documents"],
        num(&v["build_secs"], 1),
        num(&v["build_mb_per_sec"], 0),
        num(&v["build_speed_vs_wc"], 2),
        num(&v["build_peak_mb"], 0),
        num(&v["bytes_per_doc_beyond_names"], 1),
        num(&v["cli_query_us_per_doc"], 1),
        num(&v["one_query_cold_rss_mb"], 1),
        num(&v["one_query_rss_mb"], 1),
    )
}

fn main() {
    common::run::serve_rusage();
    let o = options();
    std::fs::create_dir_all(&o.out).expect("output directory");
    let max = *o.docs.last().expect("sizes");
    let (tag, gen) = common::run::generated(BIN, &o.out, o.vocab.as_deref(), max);
    // Queries: edited copies of documents among the first 20,000 (or fewer), ~`queries` in all.
    let pool = QUERY_POOL.min(o.docs[0]);
    let pool_file = o.out.join(format!("gen-{tag}-{pool}.jsonl"));
    head(&gen, &pool_file, pool);
    let queries = o.out.join(format!(
        "queries-{tag}-{pool}-{}-{}.jsonl",
        o.queries,
        rates_tag()
    ));
    if !queries.exists() {
        edited_copies(&pool_file, pool, o.queries, 7, &queries);
    }
    let mut results = Vec::new();
    for &n in &o.docs {
        let file = o.out.join(format!("gen-{tag}-{n}.jsonl"));
        head(&gen, &file, n);
        let v = measure(
            &format!("generated-{n}"),
            &file,
            &queries,
            &o.out,
            o.build_rounds,
        );
        eprintln!("scale: {}", row(&v));
        results.push(v);
    }
    if o.real {
        let wiki = Path::new("data/dev/wiki-en.jsonl");
        assert!(
            wiki.exists(),
            "--real needs data/dev/wiki-en.jsonl: run scripts/fetch-dev-data.sh"
        );
        // The largest collection made from it: every lead and 19 edited copies of each.
        let real = o.out.join("wiki-copies.jsonl");
        if !real.exists() {
            run(&mut pocketdex(&[
                "synth",
                s(wiki),
                "--share",
                "1",
                "--copies",
                "19",
                "--seed",
                "3",
                "-o",
                s(&real),
            ]));
        }
        let rq = o
            .out
            .join(format!("wiki-queries-{}-{}.jsonl", o.queries, rates_tag()));
        if !rq.exists() {
            let leads = std::fs::read(wiki).expect("read wiki-en.jsonl");
            let leads = leads
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .count();
            edited_copies(wiki, leads as u64, o.queries, 11, &rq);
        }
        let v = measure("wikipedia+copies", &real, &rq, &o.out, o.build_rounds);
        eprintln!("scale: {}", row(&v));
        results.push(v);
    }
    println!(
        "| collection | documents | build | bytes/doc beyond names | candidates per query: mean / p50 / p99 / max | library query p50 / p99 | CLI per query | recall of the original by edit rate | one-query RSS: cold / just built |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for v in &results {
        println!("{}", row(v));
    }
    println!();
    println!(
        "| `--similar` | documents | candidates per query: mean / p50 / p99 / max | library query p50 / p99 | lookups per query | recall of the original by edit rate |"
    );
    println!("|---|---|---|---|---|---|");
    for v in &results {
        println!("{}", similar_row(v));
    }
    let report = json!({"vocab": tag, "results": results});
    std::fs::write(
        o.out.join("report.json"),
        serde_json::to_string_pretty(&report).expect("JSON"),
    )
    .expect("write report");
}
