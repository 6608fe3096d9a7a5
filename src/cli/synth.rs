//! `pocketdex synth`: development data with graded similarity (edited copies of real documents),
//! and generated collections without near-duplicates for scale tests (`--generate`).

use anyhow::Context;
use pocketdex::corpus::{self, Item};
use pocketdex::Lang;
use pocketdex_eval::synth::generate::{Generator, Shape, Vocabulary};
use pocketdex_eval::synth::{self, Rng};
use rayon::prelude::*;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Bounds of --vocab-size and --topics: each topic and pseudo-word costs memory and time
/// before the first document is made (a million topics: 13 s and 1.2 GB).
const MAX_VOCAB: u64 = 10_000_000;
const MAX_TOPICS: i64 = 100_000;

/// Write development data: documents and edited copies of them, or a generated collection
///
/// Writes a JSON Lines corpus of documents plus edited copies at controlled rates, or generates
/// a collection without near-duplicates (--generate).
///
/// Edited copies: every input document is written as it is (unless --copies-only); a random
/// share of them (--share) also get --copies edited copies, each at an edit rate drawn
/// uniformly from [0, --max-rate] (or one copy per rate of --rates): words substituted,
/// deleted and inserted (rate/3 each, new words from the corpus), one sentence moved (half the
/// time), a line of boilerplate appended (30% of the time). Copies are named ID~eK (ID~eK.J
/// when an input or an earlier copy has that name: synth of its own output) and record
/// their source and edits. The output feeds `pocketdex build`/`eval`; the same seed gives the
/// same file.
///
/// Generated collections (--generate N): N documents {"id": "gNNNNNNNN", "text"}, each a
/// mixture of the vocabulary's background frequencies (function words included) and one to
/// three of --topics topics (a few hundred characteristic words each, which every document
/// stresses in an order of its own, so that documents on one topic are not near copies of
/// each other), 20–4,000 words long
/// (lognormal, median 120 and σ 0.9 of the log length; --words and --sigma change them, e.g.
/// --words 145 --sigma 0.35 for documents of about 1 KB). The vocabulary is --vocab (a wordfreq .msgpack.gz list, see
/// scripts/fetch-wordfreq.sh, or a word list: one word per line, optionally TAB count), or
/// without it pseudo-words that follow the built-in reference's prefix distribution.
/// Document i depends only on the seed and i: the first N of a larger run are the same
/// documents.
///
/// Examples:
///   pocketdex synth data/dev/wiki-en.jsonl --limit 4000 -o data/dev/wiki-synth.jsonl
///   pocketdex synth --generate 200000 --vocab data/wordfreq/large_en.msgpack.gz -o gen.jsonl
///   pocketdex synth gen.jsonl --limit 20000 --share 0.05 --rates 0.05,0.2 --copies-only -o queries.jsonl

#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Directories, files, .jsonl and .parquet files, or - (stdin: JSON Lines if it starts with
    /// `{`, else one document).
    #[arg(
        required_unless_present = "generate",
        conflicts_with = "generate",
        value_name = "INPUT"
    )]
    inputs: Vec<PathBuf>,
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
    /// One copy per listed edit rate (comma-separated) instead of --copies random rates.
    #[arg(long, value_name = "R1,R2,...", value_delimiter = ',')]
    rates: Vec<f64>,
    /// Write only the edited copies, not the input documents.
    #[arg(long)]
    copies_only: bool,
    /// Generate N documents without near-duplicates instead of copying INPUT.
    #[arg(long, value_name = "N", help_heading = "Generated collections",
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    generate: Option<u64>,
    /// The vocabulary of --generate: a wordfreq .msgpack.gz file or a word list.
    #[arg(long, value_name = "FILE", help_heading = "Generated collections")]
    vocab: Option<PathBuf>,
    /// Words kept of --vocab (most frequent first), or pseudo-words made without it (2 to
    /// 10,000,000).
    #[arg(
        long,
        default_value_t = 150_000,
        value_parser = clap::value_parser!(u64).range(2..=MAX_VOCAB),
        help_heading = "Generated collections"
    )]
    vocab_size: u64,
    /// Median length of a generated document in words (of the lognormal; 20 to 4,000 words
    /// whatever the draw).
    #[arg(long, value_name = "MEDIAN", default_value_t = Shape::default().median_words,
          help_heading = "Generated collections")]
    words: f64,
    /// σ of the log length of a generated document (0: every document of --words words).
    #[arg(long, default_value_t = Shape::default().sigma, help_heading = "Generated collections")]
    sigma: f64,
    /// Number of topics of --generate (1 to 100,000).
    #[arg(long, default_value_t = Shape::default().topics,
          value_parser = clap::value_parser!(u32).range(1..=MAX_TOPICS),
          help_heading = "Generated collections")]
    topics: u32,
    /// Language of the pseudo-words and stopwords when there is no --vocab.
    #[arg(
        long,
        value_parser = crate::cli::util::lang(),
        default_value = "en",
        help_heading = "Generated collections"
    )]
    lang: Lang,
    #[command(flatten)]
    input: crate::cli::util::InputArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(0.0..=1.0).contains(&args.share)
        || !(0.0..=1.0).contains(&args.max_rate)
        || args.rates.iter().any(|r| !(0.0..=1.0).contains(r))
    {
        anyhow::bail!("--share, --max-rate and --rates must be between 0 and 1");
    }
    // Before any document is read or generated.
    pocketdex::atomic::check_output(&args.output)?;
    if args
        .output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
    {
        anyhow::bail!(
            "synth writes JSON Lines; name the output .jsonl, not {}",
            args.output.display()
        );
    }
    // Read back under another name, its records would be one document (`.json` is read as
    // records when its first two lines are objects; a `.tmp` is renamed after, as the benches
    // do).
    let ext = args.output.extension().map(|e| e.to_ascii_lowercase());
    if !ext.is_some_and(|e| e == "jsonl" || e == "ndjson" || e == "json" || e == "tmp") {
        eprintln!(
            "pocketdex: note: {} holds JSON Lines; other commands read it as records when it is named .jsonl (or .ndjson), and as one document otherwise",
            crate::cli::util::printable(&args.output.display().to_string())
        );
    }
    if let Some(n) = args.generate {
        return generate(&args, n);
    }
    let sources = corpus::sources(&args.inputs)?;
    crate::cli::util::note_inputs(&args.inputs);
    pocketdex::atomic::check_outside_inputs(&args.output, &args.inputs)?;
    let mut docs = Vec::new();
    // Skipped inputs are reported and counted as `build` reports them.
    let mut summary = crate::cli::ingest::Summary::default();
    let reader = args.input.reader();
    let by_place = crate::cli::ingest::by_place(&reader, &sources);
    reader.for_each_batch(
        &sources,
        512,
        |i| i,
        |_| {},
        |batch| {
            for item in batch {
                match item {
                    Item::Doc(d) => {
                        summary.count_invalid(&d);
                        summary.docs += 1;
                        summary.named_by_place += by_place(&d.id) as u64;
                        if args.limit == 0 || docs.len() < args.limit {
                            docs.push((d.id, d.text, d.title));
                        }
                    }
                    Item::Skipped(s) => summary.skipped.push(s),
                }
            }
            Ok(())
        },
    )?;
    // A misspelt key would rewrite every id as its record's place.
    summary.check_id_key(&args.input)?;
    if docs.is_empty() {
        summary.report(false);
        anyhow::bail!(
            "no documents to edit: {}; nothing was written to {}",
            summary.nothing_read(),
            args.output.display()
        );
    }
    // The vocabulary new words come from: the words of the first 2,000 documents.
    let vocab: Vec<&str> = docs
        .iter()
        .take(2000)
        .flat_map(|d| d.1.split_whitespace())
        .take(200_000)
        .collect();
    let mut rng = Rng::new(args.seed);
    // Written atomically: an interrupted run leaves the file that was there, not a part.
    let copies = pocketdex::atomic::write_file(&args.output, |out| {
        write_copies(&args, &docs, &vocab, &mut rng, out)
    })?;
    summary.report(false);
    eprintln!(
        "wrote {} and {} to {}{}",
        crate::cli::util::plural(
            if args.copies_only {
                0
            } else {
                docs.len() as u64
            },
            "document"
        ),
        match copies {
            1 => "1 edited copy".to_string(),
            n => format!("{} edited copies", crate::cli::util::thousands(n as u64)),
        },
        args.output.display(),
        match summary.skipped.len() {
            0 => String::new(),
            n => format!("; {n} inputs skipped ({})", summary.why_skipped()),
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The input documents (unless --copies-only) and their edited copies, in input order; returns
/// how many copies.
fn write_copies(
    args: &Args,
    docs: &[(String, String, Option<String>)],
    vocab: &[&str],
    rng: &mut Rng,
    out: &mut (dyn Write + Send),
) -> pocketdex::Result<usize> {
    let mut copies = 0usize;
    // Every id written so far and every input's: a copy's name must be new (the input may
    // hold copies of an earlier run, named as these are).
    let mut taken: std::collections::HashSet<String> =
        docs.iter().map(|(id, _, _)| id.clone()).collect();
    for (id, text, title) in docs {
        // A copy keeps its source's title, as a revision of a document does.
        let with_title = |mut v: serde_json::Value| {
            if let Some(t) = title {
                v["title"] = json!(t);
            }
            v
        };
        if !args.copies_only {
            writeln!(out, "{}", with_title(json!({"id": id, "text": text})))?;
        }
        if rng.unit() < args.share {
            let n = if args.rates.is_empty() {
                args.copies
            } else {
                args.rates.len()
            };
            for k in 0..n {
                let rate = match args.rates.get(k) {
                    Some(&r) => r,
                    None => rng.unit() * args.max_rate,
                };
                let (copy, edits) = synth::edit(text, rate, vocab, rng);
                let mut name = format!("{id}~e{k}");
                let mut j = 1;
                while taken.contains(&name) {
                    name = format!("{id}~e{k}.{j}");
                    j += 1;
                }
                taken.insert(name.clone());
                let line = json!({"id": name, "text": copy, "source": id, "edits": edits});
                writeln!(out, "{}", with_title(line))?;
                copies += 1;
            }
        }
    }
    Ok(copies)
}

/// `--generate N`: documents made in parallel, written in order.
fn generate(args: &Args, n: u64) -> anyhow::Result<ExitCode> {
    let vocab = match &args.vocab {
        Some(p) if p.to_string_lossy().ends_with(".msgpack.gz") => {
            Vocabulary::from_wordfreq(p, args.vocab_size as usize)?
        }
        Some(p) => Vocabulary::from_word_list(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
            args.vocab_size as usize,
        )?,
        None => Vocabulary::builtin(args.lang, args.vocab_size as usize, args.seed),
    };
    if !(args.words > 0.0 && args.words.is_finite() && args.sigma >= 0.0 && args.sigma.is_finite())
    {
        anyhow::bail!("--words must be a positive number and --sigma at least 0");
    }
    let shape = Shape {
        topics: args.topics,
        median_words: args.words,
        sigma: args.sigma,
        seed: args.seed,
        ..Shape::default()
    };
    let generator = Generator::new(vocab, shape)?;
    let bytes =
        pocketdex::atomic::write_file(&args.output, |out| write_generated(&generator, n, out))?;
    eprintln!(
        "wrote {n} generated documents ({:.1} MB) to {}",
        bytes as f64 / 1e6,
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Documents 0..n of `generator`, made in parallel and written in order; returns the bytes.
fn write_generated(
    generator: &Generator,
    n: u64,
    out: &mut (dyn Write + Send),
) -> pocketdex::Result<u64> {
    const CHUNK: u64 = 1024;
    let (mut at, mut bytes) = (0u64, 0u64);
    while at < n {
        let end = (at + 64 * CHUNK).min(n);
        let chunks: Vec<String> = (at..end)
            .step_by(CHUNK as usize)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|from| {
                let (mut text, mut lines) = (String::new(), String::new());
                for i in from..(from + CHUNK).min(end) {
                    generator.document(i, &mut text);
                    // {"id","text"} written directly: no JSON value (and copy of the text) per
                    // document.
                    lines.push_str(&format!("{{\"id\":\"g{i:08}\",\"text\":"));
                    lines.push_str(&serde_json::to_string(&text).expect("a string serialises"));
                    lines.push_str("}\n");
                }
                lines
            })
            .collect();
        for c in chunks {
            bytes += c.len() as u64;
            out.write_all(c.as_bytes())?;
        }
        at = end;
    }
    Ok(bytes)
}
