//! `pocketdex synth`: development data with graded similarity (edited copies of real documents).

use anyhow::Context;
use pocketdex::corpus::{self, Item};
use pocketdex::synth::{self, Rng};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Write a JSON Lines corpus of documents plus edited copies at controlled rates.
///
/// Every input document is written as it is; a random share of them (--share) also get
/// --copies edited copies, each at an edit rate drawn uniformly from [0, --max-rate]: words
/// substituted, deleted and inserted (rate/3 each, new words from the corpus), one sentence
/// moved (half the time), a line of boilerplate appended (30% of the time). Copies are named
/// ID~eK and record their source and edits. The output feeds `pocketdex build`/`eval`; the
/// same seed gives the same file.
///
/// Example:
///   pocketdex synth data/dev/wiki-en.jsonl --limit 4000 -o data/dev/wiki-synth.jsonl
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directories, files, .jsonl files, or - (JSON Lines on stdin).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
    /// The JSON Lines file to write.
    #[arg(short, long, value_name = "FILE.jsonl")]
    output: PathBuf,
    /// Share of documents that get edited copies.
    #[arg(long, default_value_t = 0.3)]
    share: f64,
    /// Edited copies per chosen document.
    #[arg(long, default_value_t = 2)]
    copies: usize,
    /// Highest per-word edit rate.
    #[arg(long, default_value_t = 0.3)]
    max_rate: f64,
    /// Use only the first N documents (0: all).
    #[arg(long, default_value_t = 0)]
    limit: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(0.0..=1.0).contains(&args.share) || !(0.0..=1.0).contains(&args.max_rate) {
        anyhow::bail!("--share and --max-rate must be between 0 and 1");
    }
    let sources = corpus::sources(&args.inputs)?;
    let mut docs = Vec::new();
    corpus::for_each_batch(
        &sources,
        512,
        |i| i,
        |_| {},
        |batch| {
            for item in batch {
                if let Item::Doc(d) = item {
                    if args.limit == 0 || docs.len() < args.limit {
                        docs.push((d.id, d.text));
                    }
                }
            }
            Ok(())
        },
    )?;
    // The vocabulary new words come from: the words of the first 2,000 documents.
    let vocab: Vec<&str> = docs
        .iter()
        .take(2000)
        .flat_map(|d| d.1.split_whitespace())
        .take(200_000)
        .collect();
    let mut rng = Rng::new(args.seed);
    let file = std::fs::File::create(&args.output)
        .with_context(|| format!("creating {}", args.output.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut copies = 0usize;
    for (id, text) in &docs {
        writeln!(out, "{}", json!({"id": id, "text": text}))?;
        if rng.unit() < args.share {
            for k in 0..args.copies {
                let rate = rng.unit() * args.max_rate;
                let (copy, edits) = synth::edit(text, rate, &vocab, &mut rng);
                writeln!(
                    out,
                    "{}",
                    json!({"id": format!("{id}~e{k}"), "text": copy, "source": id, "edits": edits})
                )?;
                copies += 1;
            }
        }
    }
    out.flush()?;
    eprintln!(
        "wrote {} documents and {copies} edited copies to {}",
        docs.len(),
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
