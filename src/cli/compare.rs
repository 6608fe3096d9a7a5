//! `pocketdex compare`: two documents, every measure of every method side by side.

use super::dups::ParamArgs;
use anyhow::Context;
use pocketdex::corpus::{self, Item};
use pocketdex::text;
use pocketdex_methods::compare::{compare, Comparison, Input};
use pocketdex_methods::exact::Exact;
use pocketdex_methods::fuzzy::Fuzzy;
use pocketdex_methods::minhash::Minhash;
use pocketdex_methods::simhash::Simhash;
use pocketdex_methods::spex::Spex;
use pocketdex_methods::spotsigs::Spotsigs;
use pocketdex_methods::trials::Trials;
use pocketdex_methods::{Method, Options};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Compare two documents by every measure of every method
///
/// Shows, for A and B: exact equality at each of the six canonicalization levels (1 on the raw
/// files, markup included); the Jaccard of word shingles and its MinHash estimate; the
/// multi-trial signature (agreeing trials, and the chance that a pair this similar is
/// detected); the S3 score of spex chunks; the SpotSigs Jaccard; the simhash Hamming distance
/// with its estimated and exact cosine; the cosine of term frequencies; and the fuzzy-code
/// collisions (what `pocketdex query` would find in each direction in an index of at most 2,000
/// documents: the codes are made with uniform weights at the resolution of the smallest
/// collections, which has no weighted samples), with the similar-path collisions of
/// `query --similar` apart (same weights and resolution: one row per band, so they say whether
/// the two share their most distinctive terms, not what a large index would do). The last
/// column says whether each method's score reaches its default threshold, as `pocketdex dups`
/// would use it; but fuzzy's is the cosine of term frequencies, where `dups --method fuzzy`
/// weighs terms by their idf in the collection (two documents alone are no collection), so the
/// two may disagree near the threshold.
///
/// A and B are files (HTML is recognised and its markup removed, as `pocketdex build` does),
/// or JSON Lines or Parquet files of one record each (its text in --text-key); either may
/// be - to read it from stdin (JSON Lines when it starts with `{`). A document over
/// --max-doc-bytes is refused: the
/// shingles, chunks and signatures of both documents are held at once, about 25 times the
/// size of the text.
///
/// With --json, one JSON object: {"a", "b", "comparison": {...}, "verdicts": [{"method",
/// "score", "threshold", "near_duplicate", "measure"}]}: "measure" names what "score" is.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The first document (a file, or - for stdin).
    #[arg(value_name = "A")]
    a: PathBuf,
    /// The second document (a file, or - for stdin).
    #[arg(value_name = "B")]
    b: PathBuf,
    #[command(flatten)]
    params: ParamArgs,
    /// Refuse a document larger than this (suffixes K, M, G: KiB, MiB, GiB).
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = super::util::parse_size)]
    max_doc_bytes: u64,
    /// The field (JSON Lines) or column (Parquet) of a record that holds its text, as for
    /// `build` and `dups`.
    #[arg(long, value_name = "KEY", default_value = "text")]
    text_key: String,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

/// The one document of a record source (a JSON Lines or Parquet file, or JSON Lines read from
/// standard input): its text, raw and plain alike, as `build` would index it. A source of
/// several records is refused: which one was meant cannot be guessed.
fn one_record(arg: &str, items: Vec<Item>) -> anyhow::Result<(String, String)> {
    let name = if arg == "-" { "standard input" } else { arg };
    let mut docs = Vec::new();
    for item in items {
        match item {
            Item::Doc(d) => docs.push(d),
            // A record that could not be read: the one meant, perhaps.
            Item::Skipped(s) if s.kind.is_error() => {
                anyhow::bail!("{name}: {}: {}", s.id, s.reason)
            }
            Item::Skipped(_) => {}
        }
    }
    match docs.len() {
        1 => {
            let d = docs.pop().expect("one");
            Ok((d.text.clone(), d.text))
        }
        0 => anyhow::bail!(
            "{name} holds no document with text: compare takes one document as A and one as B"
        ),
        _ => anyhow::bail!(
            "{name} holds more than one record: compare takes one document as A and one as B; compare every pair with `pocketdex dups {arg}`, or give one record (e.g. `jq -c 'select(.id == \"ID\")'`)"
        ),
    }
}

/// The raw text and the plain text of one input, refused over `limit` bytes; a record's text
/// is its `text_key` field.
fn read(given: &Path, limit: u64, text_key: &str) -> anyhow::Result<(String, String)> {
    // For messages; a name that is not UTF-8 is still opened as given.
    let arg = &*given.to_string_lossy();
    // Records: read as every command reads them.
    if let Ok(source @ (corpus::Source::Jsonl(_) | corpus::Source::Parquet(_))) =
        corpus::Source::from_arg(given)
    {
        let reader = corpus::Reader {
            max_doc_bytes: limit,
            keys: corpus::Keys {
                text: text_key.to_owned(),
                ..corpus::Keys::default()
            },
            ..corpus::Reader::default()
        };
        // Reading stops at a second document: which one was meant cannot be guessed.
        let mut items = Vec::new();
        let read = reader.for_each_batch(
            std::slice::from_ref(&source),
            64,
            |i| i,
            |_| {},
            |b| {
                items.extend(b);
                match items.iter().filter(|i| matches!(i, Item::Doc(_))).count() {
                    0 | 1 => Ok(()),
                    _ => Err(pocketdex::Error::Invalid(String::new())),
                }
            },
        );
        if items.iter().filter(|i| matches!(i, Item::Doc(_))).count() > 1 {
            anyhow::bail!(
                "{arg} holds more than one record: compare takes one document as A and one as B; compare every pair with `pocketdex dups {arg}`, or give one record (e.g. `jq -c 'select(.id == \"ID\")'`)"
            );
        }
        read.with_context(|| format!("cannot read {arg}"))?;
        return one_record(arg, items);
    }
    // Read once: a pipe (`<(…)`, /dev/stdin) or a FIFO has its bytes only once. At most one
    // byte past the limit is read, so a huge input is refused without being held.
    let mut bytes = Vec::new();
    let html = if arg == "-" {
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin().lock(), limit.saturating_add(1)),
            &mut bytes,
        )
        .context("cannot read standard input")?;
        None
    } else {
        let path = given;
        let file = std::fs::File::open(path).with_context(|| format!("cannot read {arg}"))?;
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, limit.saturating_add(1)),
            &mut bytes,
        )
        .with_context(|| format!("cannot read {arg}"))?;
        corpus::html_by_name(path)
    };
    if bytes.len() as u64 > limit {
        let name = if arg == "-" { "standard input" } else { arg };
        anyhow::bail!(
            "{name} is larger than --max-doc-bytes ({limit} bytes); raise it to compare larger documents (about 25 bytes of memory per byte of text)"
        );
    }
    if arg == "-" && bytes.trim_ascii_start().starts_with(b"{") {
        // JSON Lines on standard input, as every command reads it.
        let text = text::decode(&bytes).text;
        let items = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| corpus::from_json_line(l, format!("stdin:{}", i + 1)))
            .collect();
        return one_record(arg, items);
    }
    match corpus::from_bytes(arg.to_string(), None, &bytes, html) {
        Item::Doc(d) => {
            let raw = text::decode_utf16(&bytes).unwrap_or_else(|| text::decode(&bytes));
            Ok((raw.text, d.text))
        }
        Item::Skipped(s) => anyhow::bail!("{arg}: {}", s.reason),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.a.as_os_str() == "-" && args.b.as_os_str() == "-" {
        anyhow::bail!("only one of A and B can be - (stdin)");
    }
    let (raw_a, plain_a) = read(&args.a, args.max_doc_bytes, &args.text_key)?;
    let (raw_b, plain_b) = read(&args.b, args.max_doc_bytes, &args.text_key)?;
    let options = args.params.options();
    let defaults = pocketdex_methods::Options::default();
    if options.min_idf != defaults.min_idf || options.max_idf != defaults.max_idf {
        // They filter by the idf of a collection, and two documents are none.
        eprintln!("pocketdex: note: --min-idf and --max-idf are not used between two documents (dups applies them over a collection): ignored");
    }
    let c = compare(
        Input {
            raw: &raw_a,
            plain: &plain_a,
        },
        Input {
            raw: &raw_b,
            plain: &plain_b,
        },
        &options,
    )?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        let verdicts = c.verdict_records();
        writeln!(
            out,
            "{}",
            json!({"a": args.a, "b": args.b, "comparison": c, "verdicts": verdicts})
        )?;
    } else {
        print_text(&mut out, &args, &options, &c)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// One line: label, value, detail, and the verdict column.
fn row(
    out: &mut dyn Write,
    label: &str,
    value: &str,
    detail: &str,
    verdict: &str,
) -> std::io::Result<()> {
    let line = format!("  {label:<23} {value:<8} {detail:<37} {verdict}");
    writeln!(out, "{}", line.trim_end())
}

fn print_text(
    out: &mut dyn Write,
    args: &Args,
    o: &Options,
    c: &Comparison,
) -> std::io::Result<()> {
    let n = &c.counts;
    for (i, (name, path)) in [("A", &args.a), ("B", &args.b)].iter().enumerate() {
        writeln!(
            out,
            "{name}  {}: {} words, {} content words",
            super::util::printable(&path.to_string_lossy()),
            n.words[i],
            n.content_words[i]
        )?;
    }
    let verdicts = c.verdicts();
    let verdict = |m: &dyn Method| {
        let pass = verdicts.iter().any(|v| v.0.is(m) && v.2);
        let t = if m.is(&Exact) {
            format!("at level {}", o.level.number())
        } else if m.is(&Simhash) {
            // Both conditions, so that a high cosine beside "no" is not a puzzle.
            format!("≤ {} bits and ≥ {}", o.max_hamming, m.default_threshold())
        } else {
            format!("≥ {}", m.default_threshold())
        };
        let yes = if m.is(&Exact) {
            "retrieval-equivalent"
        } else {
            "near-duplicate"
        };
        format!("{t}: {}", if pass { yes } else { "no" })
    };
    // The methods over content words set aside a document without any, as `dups` does: their
    // numbers for it (an empty simhash is 0, as close to another empty one as can be) say
    // nothing.
    let set_aside = |out: &mut dyn Write| -> std::io::Result<()> {
        for (i, name) in ["A", "B"].iter().enumerate() {
            if n.content_words[i] == 0 {
                writeln!(
                    out,
                    "  {name} would be set aside: no content words (`dups` compares it with none)"
                )?;
            }
        }
        Ok(())
    };
    let set = |s: &pocketdex_methods::compare::SetScore| {
        format!("{} shared of {}/{}", s.shared, s.sizes[0], s.sizes[1])
    };
    writeln!(out)?;
    writeln!(out, "exact (identical canonical text)")?;
    for l in &c.exact {
        let v = if l.level == o.level {
            verdict(&Exact)
        } else {
            String::new()
        };
        row(
            out,
            &format!("{} {}", l.number, l.level.describe()),
            match (l.empty, l.equal) {
                (true, _) => "empty",
                (false, true) => "same",
                (false, false) => "differ",
            },
            "",
            &v,
        )?;
    }
    let m = &c.minhash;
    writeln!(
        out,
        "minhash ({}-word shingles of content words)",
        o.shingle
    )?;
    row(
        out,
        "Jaccard",
        &format!("{:.4}", m.jaccard.score),
        &set(&m.jaccard),
        &verdict(&Minhash),
    )?;
    row(
        out,
        "MinHash estimate",
        &format!("{:.4}", m.estimate),
        &format!("{} of {} sketch values agree", m.agree, m.permutations),
        "",
    )?;
    set_aside(out)?;
    let t = &c.trials;
    writeln!(
        out,
        "trials ({}-word n-grams, {} hashes × {} trials)",
        o.ngram, o.hashes, o.trials
    )?;
    row(
        out,
        "Jaccard",
        &format!("{:.4}", t.jaccard.score),
        &set(&t.jaccard),
        &verdict(&Trials),
    )?;
    row(
        out,
        "agreeing trials",
        &format!("{} of {}", t.agree, t.trials),
        &format!(
            "duplicate: {} (needs {})",
            if t.duplicate { "yes" } else { "no" },
            o.agree
        ),
        "",
    )?;
    row(
        out,
        "detection probability",
        &format!("{:.3}", t.probability),
        "for a pair with this Jaccard",
        "",
    )?;
    set_aside(out)?;
    writeln!(out, "spex ({}-word chunks)", o.chunk)?;
    row(
        out,
        "S3",
        &format!("{:.4}", c.spex.score),
        &set(&c.spex),
        &verdict(&Spex),
    )?;
    let g = &c.spotsigs;
    // Two documents are no collection: the idf filter of `dups` does not apply here.
    writeln!(
        out,
        "spotsigs (antecedent + {} words; no idf filter between two documents)",
        o.chain
    )?;
    row(
        out,
        o.spot_jaccard.label(),
        &format!("{:.4}", g.jaccard.score),
        &set(&g.jaccard),
        &verdict(&Spotsigs),
    )?;
    for (i, name) in ["A", "B"].iter().enumerate() {
        if g.set_aside[i] {
            writeln!(
                out,
                "  {name} would be set aside: {} spot signatures, at least {} needed",
                g.found[i],
                o.min_signatures.max(1)
            )?;
        }
    }
    let h = &c.simhash;
    writeln!(out, "simhash (64 bits, term frequencies)")?;
    row(
        out,
        "Hamming distance",
        &h.hamming.to_string(),
        &format!(
            "within {}: {}",
            o.max_hamming,
            if h.within { "yes" } else { "no" }
        ),
        "",
    )?;
    row(
        out,
        "estimated cosine",
        &format!("{:.4}", h.estimate),
        "",
        "",
    )?;
    row(
        out,
        "exact cosine",
        &format!("{:.4}", h.cosine),
        "",
        &verdict(&Simhash),
    )?;
    set_aside(out)?;
    writeln!(out, "cosine (term frequencies of content words)")?;
    row(
        out,
        "exact",
        &format!("{:.4}", c.cosine),
        "dups --method fuzzy weighs by tf-idf",
        &verdict(&Fuzzy),
    )?;
    set_aside(out)?;
    let f = &c.fuzzy;
    writeln!(out, "fuzzy fingerprints")?;
    row(
        out,
        "equal code groups",
        &f.colliding_groups.to_string(),
        &format!("of {}/{} codes", f.codes[0], f.codes[1]),
        "",
    )?;
    row(
        out,
        "query collisions",
        &format!("{}/{}", f.query_hits[0], f.query_hits[1]),
        "groups A's codes hit in B / B's in A",
        "",
    )?;
    row(
        out,
        "similar collisions",
        &format!("{}/{}", f.similar_hits[0], f.similar_hits[1]),
        "similar bands A's query --similar hits in B / B's in A",
        "",
    )?;
    Ok(())
}
