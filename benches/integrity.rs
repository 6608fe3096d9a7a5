//! What checking on touch costs, and that a damaged index never answers wrongly (format v7's
//! block tree, `index-format.md` §7.1).
//!
//! 1. **Random flips**: the sample index (`samples/wiki-en`, 300 articles) with one random byte
//!    changed, N times (default 10,000, seeded); each damaged copy is opened and queried with all
//!    300 articles and a near copy of each. Every answer must be the original's or an error: a
//!    wrong answer stops the run.
//! 2. **Query cost** on an index of a generated collection: hot (every block already checked)
//!    and cold (a fresh `Index` per query, so every block it reads is checked first; the page
//!    cache is warm in both), with and without the checks, alternating in one run.
//!
//! ```sh
//! cargo bench --bench integrity                          # 10,000 flips; 20,000 generated documents
//! cargo bench --bench integrity -- --test                # reduced (CI): 500 flips, 3,000 documents
//! cargo bench --bench integrity -- --collection data/scale/gen-large_en-v2-2000000.jsonl \
//!     --queries data/scale/queries-large_en-20000-2000-0.01_0.05_0.1_0.2_0.4.jsonl
//! ```
//! Timings are of a shared 2-core machine: compare the numbers of one run.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{samples, Rng};
use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_pocketdex");

type Answer = Vec<(u32, u32, u16, String)>;

fn answers(index: &Index<&[u8]>, texts: &[String]) -> pocketdex::Result<Vec<Answer>> {
    let opts = QueryOptions {
        threshold: 0.3,
        ..QueryOptions::default()
    };
    texts
        .iter()
        .map(|t| {
            let r = index.query(t, &opts)?;
            r.hits
                .iter()
                .map(|h| {
                    let name = index.name(h.doc)?.unwrap_or_default().into_owned();
                    Ok((h.doc, h.score.to_bits(), h.codes, name))
                })
                .collect()
        })
        .collect()
}

fn flips(n: u64) {
    let docs = samples();
    let mut b = IndexBuilder::for_lang(Lang::En, Params::default()).unwrap();
    for (name, text) in &docs {
        b.add(name, None, text);
    }
    let mut bytes = Vec::new();
    b.finish(&mut bytes).unwrap();
    let mut texts: Vec<String> = docs.iter().map(|d| d.1.clone()).collect();
    texts.extend(
        docs.iter()
            .map(|d| d.1.split_inclusive(". ").skip(1).collect::<String>()),
    );
    let want = answers(&Index::open(&bytes[..]).unwrap(), &texts).unwrap();
    let mut rng = Rng::new(12);
    let (mut at_open, mut at_query, mut same) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    for i in 0..n {
        let mut bad = bytes.clone();
        let at = rng.below(bad.len());
        bad[at] ^= (rng.below(255) + 1) as u8;
        let Ok(index) = Index::open(&bad[..]) else {
            at_open += 1;
            continue;
        };
        match answers(&index, &texts) {
            Err(_) => at_query += 1,
            Ok(got) if got == want => same += 1,
            Ok(_) => panic!("flip {i} (byte {at}) gave a wrong answer"),
        }
    }
    println!(
        "| random single-byte flips of the sample index ({} bytes, {} queries each) | {n} |",
        bytes.len(),
        texts.len()
    );
    println!("| refused by `open` | {at_open} |");
    println!("| a query's error (the damaged block named) | {at_query} |");
    println!("| every answer as the original's (the flip is in nothing a query reads) | {same} |");
    println!("| wrong answers | 0 |");
    println!("| time | {:.1} s |", start.elapsed().as_secs_f64());
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Per-query times in µs with and without the checks, each query timed both ways in turn (so
/// that the machine's noise falls on both alike): hot (one `Index` each, its blocks checked
/// before) or cold (a new `Index` per query; its opening is not timed).
fn pass(bytes: &[u8], queries: &[String], cold: bool) -> (Vec<f64>, Vec<f64>) {
    let open = |checked: bool| {
        let i = Index::open(bytes).unwrap();
        if checked {
            i
        } else {
            i.without_block_checks()
        }
    };
    let opts = QueryOptions::default();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    let (mut a, mut b) = (open(true), open(false));
    for (i, q) in queries.iter().enumerate() {
        if cold {
            (a, b) = (open(true), open(false));
        }
        // The second run of a query finds its text in the caches: each way goes first in turn.
        let mut runs = [(&a, &mut with), (&b, &mut without)];
        if i % 2 == 1 {
            runs.reverse();
        }
        for (index, times) in runs {
            let t = Instant::now();
            std::hint::black_box(index.query(q, &opts).unwrap());
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    (with, without)
}

fn cost(collection: &Path, queries: &Path, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    let index = out.join(format!(
        "{}.pdx",
        collection.file_stem().unwrap().to_string_lossy()
    ));
    let t = Instant::now();
    let o = Command::new(BIN)
        .arg("build")
        .arg(collection)
        .arg("-o")
        .arg(&index)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    eprintln!(
        "integrity: built {} in {:.1} s",
        index.display(),
        t.elapsed().as_secs_f64()
    );
    let file = std::fs::File::open(&index).unwrap();
    // SAFETY: the benchmark's own file, not changed while mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    let texts: Vec<String> = std::fs::read_to_string(queries)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .take(2000)
        .collect();
    // Warm the page cache and the allocator.
    pass(&map, &texts, false);
    let mut rows = Vec::new();
    for cold in [false, true] {
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let (w, o) = pass(&map, &texts, cold);
            with.extend(w);
            without.extend(o);
        }
        let (w50, w99) = (quantile(&mut with, 0.5), quantile(&mut with, 0.99));
        let (o50, o99) = (quantile(&mut without, 0.5), quantile(&mut without, 0.99));
        let (wm, om) = (
            with.iter().sum::<f64>() / with.len() as f64,
            without.iter().sum::<f64>() / without.len() as f64,
        );
        rows.push(format!(
            "| {} | {o50:.1} / {o99:.1} / {om:.1} | {w50:.1} / {w99:.1} / {wm:.1} | {:.3} | {:.3} |",
            if cold { "cold (a new Index per query)" } else { "hot" },
            w50 / o50,
            wm / om
        ));
    }
    let docs = Index::open(&map[..]).unwrap().doc_count();
    println!();
    println!(
        "Query cost, {} queries × 3 per cell, index of {docs} documents ({} bytes):",
        texts.len(),
        map.len()
    );
    println!();
    println!("| query | without checks: p50 / p99 / mean µs | with checks: p50 / p99 / mean µs | p50 ratio | mean ratio |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut n, mut docs, mut collection, mut queries) = (10_000u64, 20_000u64, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--test" => (n, docs) = (500, 3_000),
            "--flips" => n = args.next().unwrap().parse().unwrap(),
            "--collection" => collection = args.next().map(PathBuf::from),
            "--queries" => queries = args.next().map(PathBuf::from),
            "--bench" => {}
            other => panic!("unknown option {other}"),
        }
    }
    println!("| damaged copies | count |");
    println!("|---|---|");
    flips(n);
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/integrity-bench");
    std::fs::create_dir_all(&out).unwrap();
    let collection = collection.unwrap_or_else(|| {
        let p = out.join(format!("gen-{docs}.jsonl"));
        if !p.exists() {
            let o = Command::new(BIN)
                .args(["synth", "--generate", &docs.to_string(), "-o"])
                .arg(&p)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        p
    });
    let queries = queries.unwrap_or_else(|| collection.clone());
    cost(&collection, &queries, &out);
}
