//! Builds an index of a directory in parallel, then queries it with one file:
//! `cargo run --release --example index_dir -- samples/wiki-en samples/query/edited.txt`
use pocketdex::corpus::{self, Item};
use pocketdex::{Index, IndexBuilder, Lang, Params, QueryOptions};
use rayon::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let [dir, query] = <[String; 2]>::try_from(std::env::args().skip(1).collect::<Vec<_>>())
        .map_err(|_| "usage: index_dir DIR QUERY-FILE")?;
    let mut builder = IndexBuilder::for_lang(Lang::En, Params::default())?;
    // Fingerprinting is the work: it runs on every core; adding is cheap and in order. (The
    // builder learns its idf table from the first 20,000 documents and weighs later ones
    // itself, on one thread: a larger collection switches to `builder.weighing_fingerprinter()`
    // once it is `Some`, as `pocketdex build` does.)
    let fingerprinter = builder.fingerprinter().clone();
    let (files, _) = corpus::walk(dir.as_ref())?;
    let docs: Vec<_> = files
        .par_iter()
        .filter_map(|(path, id)| match corpus::read_file(path, id.clone()) {
            Item::Doc(d) => Some((d.id, fingerprinter.fingerprint(&d.text))),
            Item::Skipped(_) => None, // empty, binary or unreadable
        })
        .collect();
    for (id, fp) in docs {
        builder.add_fingerprint(&id, None, fp)?;
    }
    let mut bytes = Vec::new(); // or builder.write_to_path(path), then memmap2 for Index::open
    builder.finish(&mut bytes)?;
    let index = Index::open(bytes)?;
    let result = index.query(&std::fs::read_to_string(&query)?, &QueryOptions::default())?;
    for hit in result.hits {
        println!(
            "{:.3}  {}",
            hit.score,
            index.name(hit.doc)?.unwrap_or_default()
        );
    }
    Ok(())
}
