//! The classical methods at scale: `pocketdex dups --method M` over a generated collection
//! without near-duplicates (`pocketdex synth --generate N`) plus edited copies of documents
//! among its first 20,000 at several edit rates, per method: wall and CPU time, time per
//! document, peak anonymous and resident memory, pairs and candidates, documents set aside, and the share of
//! the planted copies grouped with their source, per edit rate. A Markdown table goes to
//! stdout, everything to `OUT/methods-report.json`.
//!
//! ```sh
//! scripts/methods-bench.sh                                  # the README's run: 200,000 and 2,000,000
//! cargo bench --bench methods_scale -- --test               # reduced: 2,000 documents (CI)
//! cargo bench --bench methods_scale -- --docs 200000 --vocab data/wordfreq/large_en.msgpack.gz --methods spotsigs,exact
//! ```
//!
//! Options: `--docs N,N,…` (sizes; each the first N documents of the largest), `--vocab FILE`
//! (the vocabulary of `synth --generate`; without it, the built-in pseudo-words), `--copies N`
//! (about this many planted copies, default 2,000, spread evenly over the rates 1%, 5%, 10%,
//! 20%), `--methods a,b` (default: all seven), `--out DIR` (default `data/scale`, shared with
//! the scale bench: generated files are reused), `--test` (2,000 documents, 200 copies, under
//! `target/methods-scale-test`). Each `dups` runs with its defaults on both cores; timings are
//! of a shared machine, so compare the numbers of one run.

mod common;

use common::run::{head, run};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_pocketdex");
/// Edit rates of the planted copies.
const RATES: [f64; 4] = [0.01, 0.05, 0.1, 0.2];
/// Copies are made of documents among the first this many.
const POOL: u64 = 20_000;

struct Options {
    docs: Vec<u64>,
    vocab: Option<PathBuf>,
    copies: u64,
    methods: Vec<String>,
    out: PathBuf,
}

fn options() -> Options {
    let mut o = Options {
        docs: vec![200_000],
        vocab: None,
        copies: 2_000,
        methods: pocketdex_methods::ALL
            .iter()
            .map(|m| m.name().to_string())
            .collect(),
        out: PathBuf::from("data/scale"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--docs" => o.docs = common::run::sizes(&value()),
            "--vocab" => o.vocab = Some(PathBuf::from(value())),
            "--copies" => o.copies = value().parse().expect("--copies: a number"),
            "--methods" => o.methods = value().split(',').map(str::to_string).collect(),
            "--out" => o.out = PathBuf::from(value()),
            "--test" => {
                o.docs = vec![2_000];
                o.copies = 200;
                o.out = PathBuf::from("target/methods-scale-test");
            }
            // cargo bench passes --bench.
            _ => {}
        }
    }
    o.docs.sort_unstable();
    o
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn pocketdex(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
    c
}

/// The planted copies: id → (source id, edit rate).
fn read_copies(path: &Path) -> HashMap<String, (String, f64)> {
    std::fs::read_to_string(path)
        .expect("copies")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("JSON");
            (
                v["id"].as_str().expect("id").to_string(),
                (
                    v["source"].as_str().expect("source").to_string(),
                    v["edits"]["rate"].as_f64().expect("rate"),
                ),
            )
        })
        .collect()
}

/// One `dups` run over the collection and the copies.
fn measure(
    method: &str,
    collection: &Path,
    copies_path: &Path,
    copies: &HashMap<String, (String, f64)>,
    docs: u64,
) -> Value {
    let r = run(&mut pocketdex(&[
        "dups",
        s(collection),
        s(copies_path),
        "--method",
        method,
        "--json",
        "--quiet",
    ]));
    let mut group_of: HashMap<String, u64> = HashMap::new();
    let mut summary = Value::Null;
    for line in String::from_utf8_lossy(&r.stdout).lines() {
        let v: Value = serde_json::from_str(line).expect("dups --json line");
        match v["type"].as_str() {
            Some("group") => {
                let g = v["group"].as_u64().expect("group number");
                for m in v["members"].as_array().expect("members") {
                    group_of.insert(m.as_str().expect("id").to_string(), g);
                }
            }
            Some("summary") => summary = v,
            _ => {}
        }
    }
    let recall: Vec<Value> = RATES
        .iter()
        .map(|&rate| {
            let at: Vec<(&String, &String)> = copies
                .iter()
                .filter(|(_, (_, r))| (r - rate).abs() < 1e-9)
                .map(|(id, (src, _))| (id, src))
                .collect();
            let found = at
                .iter()
                .filter(|(id, src)| {
                    group_of
                        .get(*id)
                        .is_some_and(|g| group_of.get(*src) == Some(g))
                })
                .count();
            json!({"rate": rate, "copies": at.len(), "found": found,
                   "recall": found as f64 / at.len().max(1) as f64})
        })
        .collect();
    let n = docs + copies.len() as u64;
    json!({
        "method": method,
        "docs": n,
        "seconds": r.secs,
        "cpu_seconds": r.cpu_secs,
        "us_per_doc": r.secs * 1e6 / n as f64,
        "peak_rss_mb": r.max_rss_mb,
        "peak_anon_mb": r.max_anon_mb,
        "pairs": summary["pairs"],
        "candidates": summary["candidates"],
        "set_aside": summary["set_aside"],
        "groups": summary["groups"],
        "planted": recall,
    })
}

fn row(v: &Value) -> String {
    let recall: Vec<String> = v["planted"]
        .as_array()
        .expect("planted")
        .iter()
        .map(|r| format!("{:.3}", r["recall"].as_f64().unwrap_or(f64::NAN)))
        .collect();
    format!(
        "| {} | {} | {:.1} s ({:.1} CPU) | {:.1} µs | {:.0} / {:.0} MB | {} | {} | {} |",
        v["method"].as_str().unwrap_or("?"),
        v["docs"],
        v["seconds"].as_f64().unwrap_or(f64::NAN),
        v["cpu_seconds"].as_f64().unwrap_or(f64::NAN),
        v["us_per_doc"].as_f64().unwrap_or(f64::NAN),
        v["peak_anon_mb"].as_f64().unwrap_or(f64::NAN),
        v["peak_rss_mb"].as_f64().unwrap_or(f64::NAN),
        v["pairs"],
        v["set_aside"],
        recall.join(" / "),
    )
}

fn main() {
    common::run::serve_rusage();
    let o = options();
    std::fs::create_dir_all(&o.out).expect("output directory");
    let max = *o.docs.last().expect("sizes");
    // The scale bench's collection, reused when it is there.
    let (tag, gen) = common::run::generated(BIN, &o.out, o.vocab.as_deref(), max);
    let pool = POOL.min(o.docs[0]);
    let rates = RATES.map(|r| r.to_string()).join("_");
    let copies_path = o
        .out
        .join(format!("planted-{tag}-{pool}-{}-{rates}.jsonl", o.copies));
    if !copies_path.exists() {
        let pool_file = o.out.join(format!("gen-{tag}-{pool}.jsonl"));
        head(&gen, &pool_file, pool);
        let args = common::synth_copies(&pool_file, None, pool, o.copies, &RATES, 15, &copies_path);
        run(&mut pocketdex(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        ));
    }
    let copies = read_copies(&copies_path);
    let mut report = Vec::new();
    println!(
        "| method | documents | time (CPU) | per document | peak memory: anonymous / resident | pairs | set aside | planted copies found at edit rate {} |",
        RATES.map(|r| format!("{}%", r * 100.0)).join(" / ")
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &n in &o.docs {
        let file = o.out.join(format!("gen-{tag}-{n}.jsonl"));
        head(&gen, &file, n);
        for m in &o.methods {
            let v = measure(m, &file, &copies_path, &copies, n);
            println!("{}", row(&v));
            report.push(v);
        }
    }
    let path = o.out.join("methods-report.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&json!({"copies": s(&copies_path), "runs": report}))
            .expect("JSON"),
    )
    .expect("write the report");
    eprintln!("report: {}", path.display());
}
