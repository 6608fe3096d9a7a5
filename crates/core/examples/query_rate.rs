//! The library's query throughput on every core, the baseline of the Python package's
//! `query_batch` benchmark (`scripts/python-bench.sh`): every text of a JSON Lines file queried
//! against an index file or set as `Index.query_batch` does (markup removed, `IndexSet::query`,
//! `records`), in parallel with rayon, `ROUNDS` times; prints `{"queries", "seconds", "rate"}`.
//! INDEX may also be several index files joined by commas, queried as one (`query --index`):
//! `scripts/set-bench.sh` compares 16 shards with one file this way, past start-up.
//!
//! `cargo run --release --example query_rate -- INDEX[,INDEX...] QUERIES.jsonl [ROUNDS]`
use pocketdex::corpus::{self, Source};
use pocketdex::{IndexSet, QueryOptions};
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (index, queries) = match &args[..] {
        [i, q] | [i, q, _] => (i, q),
        _ => return Err("usage: query_rate INDEX QUERIES.jsonl [ROUNDS]".into()),
    };
    let rounds: usize = args.get(2).map_or(Ok(1), |r| r.parse())?;
    let set = if pocketdex::is_set(Path::new(index)) {
        IndexSet::open(Path::new(index))?
    } else {
        let files: Vec<std::path::PathBuf> = index.split(',').map(Into::into).collect();
        IndexSet::open_files(&files)?
    };
    // The "text" fields; markup removal (none in generated texts) is timed below, as
    // query_batch times it.
    let texts = corpus::texts(&[Source::Jsonl(queries.into())])?;
    let opts = QueryOptions::default();
    let start = Instant::now();
    for _ in 0..rounds {
        texts.par_iter().try_for_each(|t| {
            let plain = pocketdex::text::plain_text(t, None);
            let r = set.query(&plain, &opts)?;
            std::hint::black_box(set.records(&r)?);
            Ok::<_, pocketdex::Error>(())
        })?;
    }
    let secs = start.elapsed().as_secs_f64();
    let n = texts.len() * rounds;
    println!(
        "{{\"queries\": {n}, \"seconds\": {secs:.4}, \"rate\": {:.1}}}",
        n as f64 / secs
    );
    Ok(())
}
